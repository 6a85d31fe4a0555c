#!/usr/bin/env bash
# The sixteenth session's device call: looking for the long wgpu suite run of the fifteenth
# session (one call's wgpu suite ran past 470 s where others took 98-134 s). The Vulkan suite
# once, then the wgpu suite twice, as that call ran them, each under a time limit, with every
# test's own time (libtest's --report-time) and the tests still running at the limit named;
# the GPU's clocks and throttle reasons before and after.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
export RUSTC_BOOTSTRAP=1   # lets a stable-built test binary take -Z unstable-options --report-time
nvidia-smi -q -d PERFORMANCE,CLOCK > "$out/gpu-before.txt" 2>&1
for run in vulkan:1 wgpu:1 wgpu:2; do
  s=${run%%:*}; n=${run#*:}
  .bin/${s}_suite --list 2>/dev/null | grep ": test" | sed 's/: test//' | sort > "$out/$s-all.txt"
  SECONDS=0
  timeout 170 .bin/${s}_suite -Z unstable-options --report-time > "$out/$s-$n.txt" 2>&1
  rc=$?
  grep -E "^test .* \.\.\. " "$out/$s-$n.txt" | sed 's/^test //; s/ \.\.\. .*//' | sort > "$out/$s-done.txt"
  { echo "# $s suite, run $n: exit $rc after ${SECONDS} s"
    grep -E "^test result|FAILED|panicked" "$out/$s-$n.txt"
    echo "not finished: $(comm -23 "$out/$s-all.txt" "$out/$s-done.txt" | tr '\n' ' ')"
    echo "longest:"
    grep -oE "^test .* <[0-9.]+s>" "$out/$s-$n.txt" | sed -E 's/^test (.*) \.\.\. .* <([0-9.]+)s>/\2 \1/' | sort -rn | head -6
  } >> "$out/suites.txt"
done
nvidia-smi -q -d PERFORMANCE,CLOCK > "$out/gpu-after.txt" 2>&1
cat "$out/suites.txt"
