#!/usr/bin/env bash
# mg_smooth2's passes called directly instead of through a closure that LLVM outlined without
# the AVX2 features: fluid-base (39f0683) against fluid-mg2. ms per step, builds alternating.
cd "$(dirname "$0")"
lscpu | grep -E "Model name"
run() { # binary threads cpus steps scene...
  local b=$1 t=$2 c=$3 s=$4; shift 4
  taskset -c $c ./fluid-$b run "$@" --threads $t --steps $s --out /tmp/o --timings 2>&1 |
    awk '/ms\/step,/{for(i=1;i<=NF;i++) if($i=="ms/step,") printf "step %s ", $(i-1)} /fluid\.mg_/{printf "%s %s ", substr($1,7), $4}'
  echo
}
for r in 1 2 3 4; do
  for b in base mg2; do echo -n "$r 1T 256 smoke $b: "; run $b 1 2 30 smoke --set grid.nx=256 --set grid.ny=256; done
  for cfg in "256 60" "512 30" "1024 10"; do
    set -- $cfg
    for b in base mg2; do echo -n "$r 2T $1 smoke $b: "; run $b 2 2,3 $2 smoke --set grid.nx=$1 --set grid.ny=$1; done
  done
  for b in base mg2; do echo -n "$r 2T 256 taylor-green $b: "; run $b 2 2,3 30 taylor-green --set grid.nx=256 --set grid.ny=256; done
done
