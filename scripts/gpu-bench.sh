#!/usr/bin/env bash
# The GPU benchmarks of doc/PERFORMANCE.md: the smoke step, the Jacobi sweep alone (plain and
# two-per-dispatch), and the Taichi stable_fluid.py workload, on the wgpu backend.
#
# usage: scripts/gpu-bench.sh [FLUID_BINARY] [OUT_DIR]
# (build the binary with: cargo build --release -p fluid --features wgpu)
set -euo pipefail
bin=${1:-target/release/fluid}
out=${2:-out/gpu-bench}
mkdir -p "$out"
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  export XDG_RUNTIME_DIR=/tmp/fluid-xdg-$(id -u)
  mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
fi
multi=params.pressure.solver=jacobi-multisweep
"$bin" info | tee "$out/info.txt"
"$bin" bench --backends wgpu --scene smoke --sizes 256,512,1024,2048,4096 --steps 60 | tee "$out/smoke.txt"
"$bin" bench --backends wgpu --scene smoke --set "$multi" --sizes 256,512,1024,2048,4096 --steps 60 | tee "$out/smoke-multisweep.txt"
"$bin" bench --backends wgpu --jacobi --sizes 256,512,1024,2048,4096 | tee "$out/jacobi.txt"
"$bin" bench --backends wgpu --jacobi --set "$multi" --sizes 256,512,1024,2048,4096 | tee "$out/jacobi-multisweep.txt"
for solver in jacobi jacobi-multisweep; do
  for case in 256:40 512:40 512:500 1024:100 2048:100 4096:100; do
    n=${case%%:*}
    sweeps=${case##*:}
    "$bin" bench --backends wgpu --scene stable-fluid --set "params.pressure.solver=$solver" \
      --set "params.pressure.iterations=$sweeps" --sizes "$n" --steps 60
  done
done 2>/dev/null | tee "$out/stable-fluid.txt"
