#!/usr/bin/env bash
# The double-float pressure on a GPU: the conformance suites (if their binaries are given), the
# solver benchmark for multigrid (double-float and single) and MGPCG at 1024^2 and 4096^2, and
# the smoke preset step in both precisions.
#
# usage: scripts/h100-double-float.sh FLUID_BINARY OUT_DIR [VULKAN_TESTS WGPU_TESTS]
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
"$bin" bench solvers --backends vulkan,wgpu --solvers multigrid,mgpcg --sizes 1024,4096 --budget-ms 8 \
  > "$out/solvers.txt" 2>/dev/null
"$bin" bench solvers --backends vulkan,wgpu --solvers multigrid --precision single --sizes 1024,4096 \
  --budget-ms 8 > "$out/solvers-single.txt" 2>/dev/null
# Projection to 1e-4 at 1024^2 again, three times in each precision (the 0.5 ms goal).
for k in 1 2 3; do
  "$bin" bench solvers --backends vulkan,wgpu --solvers multigrid --sizes 1024 --budget-ms 1 \
    > "$out/solvers-1024-repeat-$k.txt" 2>/dev/null
  "$bin" bench solvers --backends vulkan,wgpu --solvers multigrid --precision single --sizes 1024 \
    --budget-ms 1 > "$out/solvers-1024-single-repeat-$k.txt" 2>/dev/null
done
"$bin" bench --backends vulkan,wgpu --scene smoke --sizes 256,512,1024,4096 --steps 60 \
  > "$out/smoke-preset.txt" 2>/dev/null
"$bin" bench --backends vulkan,wgpu --scene smoke --sizes 256,512,1024,4096 --steps 60 \
  --set params.pressure.precision=single > "$out/smoke-preset-single.txt" 2>/dev/null
