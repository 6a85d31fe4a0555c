#!/usr/bin/env bash
# The seventeenth session's second device call: the wgpu suite, which crashed with SIGSEGV at
# its start in the first call (run.sh), again with its whole log kept; where it crashes again,
# one test at a time to find the test; the application-device tests with the validation layer
# (its deb now in .gl too).
set -uo pipefail
out=$OUT
. scripts/device-env.sh
SECONDS=0
timeout 200 .bin/wgpu_suite > "$out/wgpu-run.txt" 2>&1
rc=$?
{ echo "# wgpu suite: exit $rc after ${SECONDS} s"; grep -E "^test result|FAILED|panicked" "$out/wgpu-run.txt"; } > "$out/summary.txt"
if [ $rc -ne 0 ]; then
  SECONDS=0
  timeout 250 .bin/wgpu_suite --test-threads 1 > "$out/wgpu-serial.txt" 2>&1
  rc=$?
  { echo "# wgpu suite, one test at a time: exit $rc after ${SECONDS} s"; grep -E "^test result|FAILED|panicked" "$out/wgpu-serial.txt"; tail -3 "$out/wgpu-serial.txt"; } >> "$out/summary.txt"
fi
{ echo "# app_device, FLUID_REQUIRE_VALIDATION=1"; FLUID_REQUIRE_VALIDATION=1 timeout 90 .bin/app_device --test-threads 1 2>&1 | grep -E "^test |^test result|FAILED|panicked|VUID"; } >> "$out/summary.txt" 2>&1
cat "$out/summary.txt"; head -30 "$out/wgpu-run.txt"
