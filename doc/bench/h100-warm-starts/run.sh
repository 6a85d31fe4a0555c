#!/usr/bin/env bash
# The fifteenth session's device calls: main's head with the new checks from the mutation
# samples (MGPCG's restart and warm start, the relaxation under a warm start, buoyancy from
# each term alone) and the wgpu shader overrides that take shared snippets. The GPU suites,
# each under a time limit with every test's line kept (a first call's wgpu suite ran past the
# call's limit; see PERFORMANCE.md), the tests that had not finished named; the application-
# device tests under the validation layer; one round of `fluid bench`.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
for s in vulkan wgpu; do
  .bin/${s}_suite --list 2>/dev/null | grep ": test" | sed 's/: test//' | sort > "$out/$s-all.txt"
  SECONDS=0
  timeout 300 .bin/${s}_suite --nocapture > "$out/$s-run.txt" 2>&1
  rc=$?
  grep -E "^test .* \.\.\. " "$out/$s-run.txt" | sed 's/^test //; s/ \.\.\. .*//' | sort > "$out/$s-done.txt"
  { echo "# $s suite: exit $rc after ${SECONDS} s"
    grep -E "^test result|FAILED|panicked" "$out/$s-run.txt"
    echo "not finished: $(comm -23 "$out/$s-all.txt" "$out/$s-done.txt" | tr '\n' ' ')"
    grep -E "^mgpcg|x9" "$out/$s-run.txt"; } >> "$out/suites.txt"
done
{ echo "# app_device, FLUID_REQUIRE_VALIDATION=1"; FLUID_REQUIRE_VALIDATION=1 timeout 120 .bin/app_device --test-threads 1 2>&1 | grep -E "^test |^test result|FAILED|panicked|VUID"; } >> "$out/suites.txt" 2>&1
for b in vulkan wgpu; do
  timeout 100 .bin/fluid bench --backends $b --scene smoke --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep -E "^$b|^backend"
done > "$out/bench.txt" 2>&1
cat "$out/suites.txt" "$out/bench.txt"
