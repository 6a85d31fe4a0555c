#!/usr/bin/env bash
# Two builds of `fluid` on the CPU backend, run alternately (the machines are noisy): the smoke,
# ink and taylor-green presets (300 steps) and smoke at 512² (60 steps), three runs each, at
# each thread count given; one line per run with the step time and `mg_smooth2`'s.
#
# usage: scripts/cpu-compare.sh BEFORE_BINARY AFTER_BINARY OUT_DIR [THREADS...]  (default: 16 8)
set -uo pipefail
before=$1
after=$2
out=$3
shift 3
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(16 8)
mkdir -p "$out"
for t in "${threads[@]}"; do
  for args in "smoke --steps 300" "ink --steps 300" "taylor-green --steps 300" \
    "smoke --steps 60 --set grid.nx=512 --set grid.ny=512"; do
    for _ in 1 2 3; do
      for bin in "$before" "$after"; do
        # shellcheck disable=SC2086 # $args is several words on purpose
        line=$("$bin" run $args --threads "$t" --timings 2>&1 | grep -E "ms/step|mg_smooth2" | tr -s ' ' | tr '\n' ' ')
        echo "$t | $args | $(basename "$bin") | $line"
      done
    done
  done
done > "$out/cmp.txt"
cat "$out/cmp.txt"
