#!/usr/bin/env bash
# The sixteenth session's second device call: main's head with the random-scene parity check
# (12 seeded scenes mixing solvers, boundaries and forces, 10 steps against the CPU) and the
# stricter override and option checks. Both GPU suites under a time limit with every test's
# time; the random scenes again with every measured difference printed; the application-
# device tests under the validation layer; one round of `fluid bench` on the smoke preset.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
export RUSTC_BOOTSTRAP=1   # lets a stable-built test binary take -Z unstable-options --report-time
for s in vulkan wgpu; do
  .bin/${s}_suite --list 2>/dev/null | grep ": test" | sed 's/: test//' | sort > "$out/$s-all.txt"
  SECONDS=0
  timeout 200 .bin/${s}_suite -Z unstable-options --report-time > "$out/$s-run.txt" 2>&1
  rc=$?
  grep -E "^test .* \.\.\. " "$out/$s-run.txt" | sed 's/^test //; s/ \.\.\. .*//' | sort > "$out/$s-done.txt"
  { echo "# $s suite: exit $rc after ${SECONDS} s"
    grep -E "^test result|FAILED|panicked" "$out/$s-run.txt"
    echo "not finished: $(comm -23 "$out/$s-all.txt" "$out/$s-done.txt" | tr '\n' ' ')"
    grep -E "random_scenes" "$out/$s-run.txt"
  } >> "$out/suites.txt"
  FLUID_CONFORMANCE_REPORT=1 timeout 60 .bin/${s}_suite random_scenes --nocapture 2>&1 | grep '^conformance' > "$out/$s-random-report.txt"
  { echo "# $s random scenes: $(wc -l < "$out/$s-random-report.txt") comparisons; largest rel-L2, max-abs:"
    awk '{print $NF, $(NF-2)}' "$out/$s-random-report.txt" | sort -g -r | head -1
    awk '{print $(NF-2)}' "$out/$s-random-report.txt" | sort -g -r | head -1; } >> "$out/suites.txt"
done
{ echo "# app_device, FLUID_REQUIRE_VALIDATION=1"; FLUID_REQUIRE_VALIDATION=1 timeout 120 .bin/app_device --test-threads 1 2>&1 | grep -E "^test |^test result|FAILED|panicked|VUID"; } >> "$out/suites.txt" 2>&1
for b in vulkan wgpu; do
  timeout 100 .bin/fluid bench --backends $b --scene smoke --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep -E "^$b|^backend"
done > "$out/bench.txt" 2>&1
cat "$out/suites.txt" "$out/bench.txt"
