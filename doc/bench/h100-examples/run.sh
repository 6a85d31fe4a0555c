#!/usr/bin/env bash
# The tenth session's second device call (binaries of bc38dd7, built here): the conformance
# suites with the splat-wrap test, then the `fluid` crate's examples on the H100 as a newcomer
# runs them: game_loop on every backend (what a frame costs the calling thread) and wgpu_draw
# (the application's render pass drawing from the simulation's buffer, checked per pixel).
set -uo pipefail
out=$OUT
. scripts/device-env.sh
{ echo "# vulkan suite"; .bin/vulkan_suite 2>&1 | grep -E "^test result|FAILED|panicked|splats_wrap"
  echo "# wgpu suite"; .bin/wgpu_suite 2>&1 | grep -E "^test result|FAILED|panicked|splats_wrap"; } > "$out/suites.txt" 2>&1
{ for round in 1 2; do
    for b in vulkan wgpu cpu; do
      echo "# round $round: game_loop $b 600"
      .bin/game_loop $b 600 2>&1; echo "exit $?"
    done
    echo "# round $round: wgpu_draw 600"
    .bin/wgpu_draw 600 2>&1; echo "exit $?"
  done
  echo "# game_loop vulkan 300 under the validation layer"
  FLUID_VULKAN_VALIDATION=1 .bin/game_loop vulkan 300 2>&1; echo "exit $?"; } > "$out/examples.txt" 2>&1
cp out/examples/*.png "$out/" 2>/dev/null
cat "$out/suites.txt" "$out/examples.txt"
