#!/usr/bin/env bash
# The seventeenth session's device call: main's head (the cut-off sixteenth session's later
# commits and the simplified last-level test of the multigrid, whose mg_coarse SPIR-V changed).
# Both GPU suites under a time limit with every test's time, the application-device tests under
# the validation layer, then two alternating rounds of the three readings of #4's
# "dispatch-bound" goal at 256² and 512²: the smoke preset (queued ms/step, host ms, waited ms),
# the stable-fluid workload (40 Jacobi sweeps) and the Jacobi sweep alone.
# Needs .gl (the loader debs) and .bin (fluid, vulkan_suite, wgpu_suite, app_device).
set -uo pipefail
out=$OUT
. scripts/device-env.sh
export RUSTC_BOOTSTRAP=1   # lets a stable-built test binary take -Z unstable-options --report-time
nvidia-smi --query-gpu=name,driver_version,clocks.sm,pstate --format=csv,noheader > "$out/gpu.txt" 2>&1
for s in vulkan wgpu; do
  .bin/${s}_suite --list 2>/dev/null | grep ": test" | sed 's/: test//' | sort > "$out/$s-all.txt"
  SECONDS=0
  timeout 170 .bin/${s}_suite -Z unstable-options --report-time > "$out/$s-run.txt" 2>&1
  rc=$?
  grep -E "^test .* \.\.\. " "$out/$s-run.txt" | sed 's/^test //; s/ \.\.\. .*//' | sort > "$out/$s-done.txt"
  { echo "# $s suite: exit $rc after ${SECONDS} s"
    grep -E "^test result|FAILED|panicked" "$out/$s-run.txt"
    echo "not finished: $(comm -23 "$out/$s-all.txt" "$out/$s-done.txt" | tr '\n' ' ')"
    grep -E "mg_coarse|multigrid" "$out/$s-run.txt"
  } >> "$out/suites.txt"
done
{ echo "# app_device, FLUID_REQUIRE_VALIDATION=1"; FLUID_REQUIRE_VALIDATION=1 timeout 90 .bin/app_device --test-threads 1 2>&1 | grep -E "^test |^test result|FAILED|panicked|VUID"; } >> "$out/suites.txt" 2>&1
for round in 1 2; do
  for b in vulkan wgpu; do
    echo "## round $round, $b"
    timeout 40 .bin/fluid bench --backends $b --scene smoke --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep -E "^$b|^backend"
    timeout 40 .bin/fluid bench --backends $b --scene stable-fluid --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep -E "^$b"
    timeout 40 .bin/fluid bench --backends $b --jacobi --sizes 256,512 --steps 400 --parity-steps 0 2>/dev/null | grep -E "^$b"
  done
done > "$out/bench.txt" 2>&1
nvidia-smi --query-gpu=clocks.sm,pstate,clocks_throttle_reasons.active --format=csv,noheader >> "$out/gpu.txt" 2>&1
cat "$out/gpu.txt" "$out/suites.txt" "$out/bench.txt"
