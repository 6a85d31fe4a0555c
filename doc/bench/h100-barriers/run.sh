#!/usr/bin/env bash
# The thirteenth session's device call: main's head on the H100, built here (binaries in .bin).
# Lavapipe runs one dispatch after another, so only real hardware shows a barrier the Vulkan
# recording leaves out; the recording's plan and barrier placement were refactored into
# functions this session. The GPU suites (with this session's new checks: confinement within a
# step, the speed clamp alone, MGPCG's recurrence) and the application-device tests under the
# validation layer, then one round of `fluid bench`, Vulkan then wgpu, against the tenth
# session's figures (doc/bench/h100-head).
set -uo pipefail
out=$OUT
. scripts/device-env.sh
{ nvidia-smi -q | grep -i -m2 "driver version\|product name"; .bin/fluid info; } > "$out/info.txt" 2>&1
{ echo "# vulkan suite"; .bin/vulkan_suite 2>&1 | grep -E "^test result|FAILED|panicked"
  echo "# wgpu suite"; .bin/wgpu_suite 2>&1 | grep -E "^test result|FAILED|panicked"
  echo "# app_device, FLUID_REQUIRE_VALIDATION=1"; FLUID_REQUIRE_VALIDATION=1 .bin/app_device --test-threads 1 2>&1 | grep -E "^test |^test result|FAILED|panicked|VUID"; } > "$out/suites.txt" 2>&1
for k in 1 2; do
  for b in vulkan wgpu; do
    echo "# round $k: $b"
    .bin/fluid bench --backends $b --scene smoke --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep "^$b"
  done
done > "$out/bench.txt" 2>&1
.bin/fluid bench --backends vulkan --scene smoke --sizes 64 --steps 20 --parity-steps 1 2>&1 | head -3 >> "$out/bench.txt"
cat "$out/info.txt" "$out/suites.txt" "$out/bench.txt"
