#!/usr/bin/env bash
# The host cost of a step on both GPU APIs (fluid bench's `host ms` column) beside ms/step: the
# smoke preset, the stable-fluid workload and the Jacobi sweep, twice each, then the CPU
# backend's smoke rows. One output file, printed too.
#
# usage: scripts/h100-host.sh FLUID_BINARY OUT_DIR
# (build with: cargo build --release -p fluid --features wgpu,vulkan)
set -uo pipefail
bin=$1
out=$2
mkdir -p "$out"
. "$(dirname "$0")/device-env.sh"
for k in 1 2; do
  echo "# run $k: smoke"
  "$bin" bench --backends vulkan,wgpu --scene smoke --sizes 256,512,1024,4096 --steps 200 --parity-steps 0 2>/dev/null
  echo "# run $k: stable-fluid 40 sweeps"
  "$bin" bench --backends vulkan,wgpu --scene stable-fluid --sizes 256,512 --steps 200 --parity-steps 0 2>/dev/null
  echo "# run $k: jacobi sweep"
  "$bin" bench --jacobi --backends vulkan,wgpu --sizes 256,512 --steps 50 --parity-steps 0 2>/dev/null
done > "$out/host.txt"
echo "# cpu, $(nproc) threads" >> "$out/host.txt"
"$bin" bench --backends cpu --scene smoke --sizes 256,512 --steps 50 --parity-steps 0 2>/dev/null >> "$out/host.txt"
cat "$out/host.txt"
