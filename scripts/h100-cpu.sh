#!/usr/bin/env bash
# The CPU backend on the GPU machine's cores after the CPU row paths (multigrid, forces, curl,
# diffusion, periodic sampling): the smoke preset as shipped and resized, taylor-green, and the
# stable-fluid (Taichi) workload; then the smoke preset on every backend at 256² and 512² for
# one table. Four output files; each is printed too.
#
# usage: scripts/h100-cpu.sh FLUID_BINARY OUT_DIR
# (build with: cargo build --release -p fluid --features wgpu,vulkan)
set -uo pipefail
bin=$1
out=$2
mkdir -p "$out"
. "$(dirname "$0")/device-env.sh"
{
  echo "# $(nproc) threads"
  for scene in smoke taylor-green ink; do
    "$bin" run "$scene" --steps 300 --timings 2>&1 | grep -v '^$'
  done
} > "$out/presets-cpu.txt"
"$bin" bench --backends cpu --scene smoke --sizes 256,512,1024 --steps 40 --parity-steps 0 \
  > "$out/smoke-cpu.txt" 2>/dev/null
for case in 256:40 512:40 512:500 1024:100; do
  n=${case%%:*}
  sweeps=${case##*:}
  echo "# stable-fluid $n^2, $sweeps sweeps, CPU ($(nproc) threads)"
  "$bin" bench --backends cpu --scene stable-fluid --set "params.pressure.iterations=$sweeps" \
    --sizes "$n" --steps 20 --parity-steps 0 2>/dev/null
done > "$out/stable-fluid-cpu.txt"
"$bin" bench --backends cpu,wgpu,vulkan --scene smoke --sizes 256,512 --steps 60 \
  > "$out/smoke-all.txt" 2>/dev/null
for f in "$out"/*.txt; do
  echo "=== $f"
  cat "$f"
done
