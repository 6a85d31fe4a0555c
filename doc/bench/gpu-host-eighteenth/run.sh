#!/usr/bin/env bash
# Issue #2's four workloads on the lent GPU machine's CPU (two pinned cores, as in the earlier rows
# for this host), the binary before the eighteenth session's change (.bin/fluid-before, 89fc92b)
# and after it (.bin/fluid-after, ac878c6), alternating, three rounds. Output in $OUT/out.txt.
out=${OUT:-.}/out.txt
{
  lscpu | grep -E "Model name|^Model:|^CPU\(s\)|L2"
  for r in 1 2 3; do
    for b in before after; do
      echo "## round $r: $b"
      for c in 256:40 512:40 512:500 1024:100; do
        s=${c%%:*}; n=${c##*:}
        taskset -c 2,3 .bin/fluid-$b bench --backends cpu --threads 2 --scene stable-fluid \
          --set params.pressure.iterations=$n --sizes $s --steps 40 --parity-steps 0 2>/dev/null | grep '^cpu'
      done
    done
  done
} > "$out" 2>&1
cat "$out"
