#!/usr/bin/env bash
# The CPU backend before (fluid-head: 9404c53) and after (fluid-per) the AVX2 path of the
# semi-Lagrangian kernels took periodic axes too: 2 pinned cores, builds alternating.
cd "$(dirname "$0")"
lscpu | grep -E "Model name"
for r in 1 2 3 4; do
  for cfg in "taylor-green 256 20 30" "taylor-green 512 20 12" "stable-fluid 256 40 100" "stable-fluid 512 40 40" "smoke 256 60 60" "smoke 512 60 40"; do
    set -- $cfg
    for b in head per; do
      echo -n "$r $1 ${2}^2 $b "
      taskset -c 2,3 ./fluid-$b run $1 --threads 2 --set grid.nx=$2 --set grid.ny=$2 \
        $( [ $1 = stable-fluid ] && echo --set params.pressure.iterations=$3 ) --steps $4 --out /tmp/o --timings 2>&1 |
        awk '/ms\/step,/{for(i=1;i<=NF;i++) if($i=="ms/step,") printf "step %s ", $(i-1)} /fluid\.advect/{printf "%s %s ", $1, $4}'
      echo
    done
  done
done
