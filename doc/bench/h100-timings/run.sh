#!/usr/bin/env bash
# The fourteenth session's device call: main's head on the H100, built here (binaries in .bin).
# The GPU suites now check per-kernel timings (every dispatch counted under fluid.<kernel>, the
# reductions as fluid.reduce), which lavapipe's timestamps had only shown in software; then the
# application-device tests under the validation layer, the --timings table of one run on each
# API, and two rounds of `fluid bench` (header line kept), Vulkan then wgpu.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
{ nvidia-smi -q | grep -i -m2 "driver version\|product name"; .bin/fluid info; } > "$out/info.txt" 2>&1
{ echo "# vulkan suite"; .bin/vulkan_suite 2>&1 | grep -E "^test result|FAILED|panicked"
  echo "# wgpu suite"; .bin/wgpu_suite 2>&1 | grep -E "^test result|FAILED|panicked"
  echo "# app_device, FLUID_REQUIRE_VALIDATION=1"; FLUID_REQUIRE_VALIDATION=1 .bin/app_device --test-threads 1 2>&1 | grep -E "^test |^test result|FAILED|panicked|VUID"; } > "$out/suites.txt" 2>&1
for b in vulkan wgpu; do
  echo "# fluid run smoke --backend $b --timings (256 x 256, 200 steps, a frame every 50)"
  .bin/fluid run smoke --backend $b --steps 200 --set grid.nx=256 --set grid.ny=256 --png --frame-every 50 --timings --out /tmp/fluid-run-$b 2>/dev/null
done > "$out/timings.txt" 2>&1
for k in 1 2; do
  for b in vulkan wgpu; do
    echo "# round $k: $b"
    .bin/fluid bench --backends $b --scene smoke --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep -E "^$b|^backend"
  done
done > "$out/bench.txt" 2>&1
cat "$out/info.txt" "$out/suites.txt" "$out/timings.txt" "$out/bench.txt"
