#!/usr/bin/env bash
# Before (fluid-head, 8850c75) and after (fluid-ftz: Jacobi/SOR results flushed from subnormal to zero),
# stable-fluid at Taichi's four sizes, 2 pinned cores, interleaved rounds.
cd "$(dirname "$0")"
lscpu | grep -E "Model name|^CPU\(s\)"
echo "round cfg build ms/step then kernel ms/step"
for r in 1 2 3 4; do
  for cfg in "256 40 60" "512 40 40" "512 500 10" "1024 100 20"; do
    set -- $cfg
    for b in head ftz; do
      echo -n "$r ${1}/${2} $b "
      taskset -c 2,3 ./fluid-$b run stable-fluid --threads 2 --set grid.nx=$1 --set grid.ny=$1 --set params.pressure.iterations=$2 --steps $3 --out /tmp/o --timings 2>&1 | awk '/ms\/step,/{for(i=1;i<=NF;i++) if($i=="ms/step,") printf "%s ", $(i-1)} /jacobi|advect/{printf "%s %s ", $1, $4}'
      echo
    done
  done
done
echo "== the criterion-like bench: fluid bench, stable-fluid, cpu, 2 threads"
for r in 1 2; do for b in head ftz; do echo "$r $b"; taskset -c 2,3 ./fluid-$b bench --backends cpu --threads 2 --scene stable-fluid --sizes 256,512,1024 --steps 30 --parity-steps 0 2>/dev/null | grep '^cpu'; done; done
