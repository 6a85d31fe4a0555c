#!/usr/bin/env bash
# After the change to cell-unit backtraces: the conformance suites on the GPU (if their binaries
# are given), the smoke preset on both GPU APIs (twice, to see the spread), the stable-fluid
# (Taichi) workload on both GPU APIs, and the CPU backend's stable-fluid steps on the GPU
# machine's cores for reference. Six output files; each is printed too.
#
# usage: scripts/h100-advection.sh FLUID_BINARY OUT_DIR [VULKAN_TESTS WGPU_TESTS]
# (build with: cargo build --release -p fluid --features wgpu,vulkan; the test binaries with
#  cargo test --release -p fluid-bench --test vulkan --test wgpu --no-run)
set -uo pipefail
bin=$1
out=$2
mkdir -p "$out"
. "$(dirname "$0")/device-env.sh"
"$bin" info > "$out/info.txt" 2>&1
if [ $# -ge 4 ]; then
  FLUID_VULKAN_VALIDATION=0 timeout 240 "$3" > "$out/conformance-vulkan.txt" 2>&1
  timeout 240 "$4" > "$out/conformance-wgpu.txt" 2>&1
fi
for k in 1 2; do
  echo "# run $k"
  "$bin" bench --backends vulkan,wgpu --scene smoke --sizes 256,512,1024,4096 --steps 60 2>/dev/null
done > "$out/smoke-preset.txt"
for case in 256:40 512:40 1024:100; do
  n=${case%%:*}
  sweeps=${case##*:}
  echo "# stable-fluid $n^2, $sweeps sweeps"
  "$bin" bench --backends vulkan,wgpu --scene stable-fluid --set "params.pressure.iterations=$sweeps" \
    --sizes "$n" --steps 60 2>/dev/null
done > "$out/stable-fluid-gpu.txt"
for case in 256:40 512:40 1024:100; do
  n=${case%%:*}
  sweeps=${case##*:}
  echo "# stable-fluid $n^2, $sweeps sweeps, CPU ($(nproc) threads)"
  "$bin" bench --backends cpu --scene stable-fluid --set "params.pressure.iterations=$sweeps" \
    --sizes "$n" --steps 20 --parity-steps 0 2>/dev/null
done > "$out/stable-fluid-cpu.txt"
for f in "$out"/*.txt; do
  echo "=== $f"
  grep -E "test result|FAILED|panicked" "$f" || cat "$f"
done
