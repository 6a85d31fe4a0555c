#!/usr/bin/env bash
# The GPU benchmarks of doc/PERFORMANCE.md: the smoke step and the Jacobi sweep alone on both GPU
# backends (wgpu and raw Vulkan), with parity against the CPU backend, the multi-sweep Jacobi
# (up to 8 sweeps per dispatch), and the Taichi stable_fluid.py workload with plain and
# multi-sweep Jacobi.
#
# usage: scripts/gpu-bench.sh [FLUID_BINARY] [OUT_DIR]
# (build the binary with: cargo build --release -p swirly-cli --features wgpu,vulkan)
set -euo pipefail
bin=${1:-target/release/fluid}
out=${2:-out/gpu-bench}
mkdir -p "$out"
. "$(dirname "$0")/device-env.sh"
sizes=256,512,1024,2048,4096
multi=params.pressure.solver=jacobi-multisweep
"$bin" info | tee "$out/info.txt"
# The smoke step with the projection it had when the tables were measured: 60 Jacobi sweeps.
jacobi60=(--set params.pressure.solver=jacobi --set params.pressure.iterations=60)
"$bin" bench --backends wgpu,vulkan --scene smoke "${jacobi60[@]}" --sizes $sizes --steps 60 | tee "$out/smoke.txt"
"$bin" bench --backends wgpu,vulkan --jacobi --sizes $sizes | tee "$out/jacobi.txt"
"$bin" bench --backends wgpu,vulkan --jacobi --set "$multi" --sizes $sizes --parity-steps 19 | tee "$out/jacobi-multisweep.txt"
# The smoke preset as shipped (multigrid, 3 V-cycles).
"$bin" bench --backends wgpu,vulkan --scene smoke --sizes $sizes --steps 60 | tee "$out/smoke-preset.txt"
for case in 256:40 512:40 512:500 1024:100 2048:100 4096:100; do
  n=${case%%:*}
  sweeps=${case##*:}
  for solver in jacobi jacobi-multisweep; do
    echo "# stable-fluid $n^2, $sweeps sweeps, $solver"
    "$bin" bench --backends wgpu,vulkan --scene stable-fluid --set "params.pressure.iterations=$sweeps" \
      --set "params.pressure.solver=$solver" --sizes "$n" --steps 60 --parity-steps 0
  done
done 2>/dev/null | tee "$out/stable-fluid.txt"
