#!/usr/bin/env bash
# The tenth session's third device call (binaries of f28e3a2 and the throwaway memory probe memory_probe.rs, built as an example):
# game_loop paced at 60 frames per second on every backend, and resident memory while the
# smoke step (multigrid) runs 2000 waited steps on each GPU API.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
{ for b in vulkan wgpu cpu; do
    echo "# game_loop $b 600 (paced at 60 per second)"
    .bin/game_loop $b 600 2>&1; echo "exit $?"
  done; } > "$out/paced.txt" 2>&1
{ for b in vulkan wgpu; do
    for size in 64 256; do
      .bin/zz_flood $b 2000 $size multigrid 2>&1 | grep RSS
    done
    .bin/zz_flood $b 2000 256 jacobi 2>&1 | grep RSS
  done; } > "$out/memory.txt" 2>&1
cat "$out/paced.txt" "$out/memory.txt"
