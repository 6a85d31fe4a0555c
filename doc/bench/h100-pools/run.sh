#!/usr/bin/env bash
# The fourteenth session's second device call: main's head after the Vulkan recording's
# descriptor pools became a function of the plan (pool_sizes), which lavapipe does not hold
# recordings to, so real hardware checks it. The GPU suites (with the Debug-name checks), the
# application-device tests under the validation layer, and one round of `fluid bench`.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
{ echo "# vulkan suite"; .bin/vulkan_suite 2>&1 | grep -E "^test result|FAILED|panicked"
  echo "# wgpu suite"; .bin/wgpu_suite 2>&1 | grep -E "^test result|FAILED|panicked"
  echo "# app_device, FLUID_REQUIRE_VALIDATION=1"; FLUID_REQUIRE_VALIDATION=1 .bin/app_device --test-threads 1 2>&1 | grep -E "^test |^test result|FAILED|panicked|VUID"; } > "$out/suites.txt" 2>&1
for b in vulkan wgpu; do
  .bin/fluid bench --backends $b --scene smoke --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep -E "^$b|^backend"
done > "$out/bench.txt" 2>&1
cat "$out/suites.txt" "$out/bench.txt"
