#!/usr/bin/env bash
# The CPU backend before (fluid-before: b6c4deb) and after (fluid-after) the semi-Lagrangian
# kernels were written in AVX2 vectors: stable-fluid at Taichi's four sizes and the smoke preset,
# 2 pinned cores, builds alternating in every round. Put the two release binaries beside this
# script, then run it on an otherwise idle machine. `run.sh A B` compares ./fluid-A with ./fluid-B
# instead (h100-host-pairs.txt: `run.sh after pair`, the commit before against two batches at
# a time through the backtrace).
cd "$(dirname "$0")"
A=${1:-before}; B=${2:-after}
lscpu | grep -E "Model name|^CPU\(s\)"
./fluid-after info 2>/dev/null | grep -i cpu
echo "== the same bits: --dump of stable-fluid 256^2 (30 steps) and smoke (60 steps), $A vs $B"
for s in "stable-fluid --set grid.nx=256 --set grid.ny=256 --steps 30" "smoke --steps 60"; do
  for b in $A $B; do ./fluid-$b run $s --out /tmp/dump-$b --dump u,v,pressure,density,temperature,dye >/dev/null 2>&1; done
  for f in u v pressure density temperature dye; do cmp -s /tmp/dump-$A/$f.npy /tmp/dump-$B/$f.npy && echo "same $f ($s)" || echo "DIFFERENT $f ($s)"; done
done
echo "== fluid run --timings (2 threads): round, grid/sweeps, build, ms/step, then kernel ms/step"
for r in 1 2 3; do
  for cfg in "256 40 60" "512 40 40" "512 500 10" "1024 100 20"; do
    set -- $cfg
    for b in $A $B; do
      echo -n "$r ${1}/${2} $b "
      taskset -c 2,3 ./fluid-$b run stable-fluid --threads 2 --set grid.nx=$1 --set grid.ny=$1 \
        --set params.pressure.iterations=$2 --steps $3 --out /tmp/o --timings 2>&1 |
        awk '/ms\/step,/{for(i=1;i<=NF;i++) if($i=="ms/step,") printf "%s ", $(i-1)} /fluid\./{printf "%s %s ", $1, $4}'
      echo
    done
  done
done
echo "== fluid bench (2 threads), stable-fluid at Taichi's sizes"
for r in 1 2 3; do
  for b in $A $B; do
    for c in 256:40 512:40 512:500 1024:100; do
      s=${c%%:*}; n=${c##*:}
      echo -n "$r $b $c: "
      taskset -c 2,3 ./fluid-$b bench --backends cpu --threads 2 --scene stable-fluid \
        --set params.pressure.iterations=$n --sizes $s --steps 40 --parity-steps 0 2>/dev/null | grep '^cpu'
    done
  done
done
echo "== fluid bench (2 threads), smoke preset"
for r in 1 2; do for b in $A $B; do
  echo "$r $b"; taskset -c 2,3 ./fluid-$b bench --backends cpu --threads 2 --scene smoke --sizes 256,512,1024 --steps 40 --parity-steps 0 2>/dev/null | grep '^cpu'
done; done
echo "== fluid bench, all cores, stable-fluid 512^2/40 and 1024^2/100"
for b in $A $B; do for c in 512:40 1024:100; do
  s=${c%%:*}; n=${c##*:}
  echo -n "$b $c: "; ./fluid-$b bench --backends cpu --scene stable-fluid --set params.pressure.iterations=$n --sizes $s --steps 40 --parity-steps 0 2>/dev/null | grep '^cpu'
done; done
