#!/usr/bin/env bash
# `fluid bench` ms/step and waited ms, BASE against NEW, alternating, on pinned cores (2 threads)
# and on every core. usage: bench.sh BASE NEW [ROUNDS] [CPUS for 2 threads, default 2,3]
base=$1; new=$2; rounds=${3:-6}; cpus=${4:-2,3}
lscpu | grep -E "Model name"
one() { # label taskset-cpus threads scene size steps [extra...]
  local label=$1 c=$2 t=$3 scene=$4 n=$5 steps=$6; shift 6
  for b in base new; do
    local bin=${!b}
    taskset -c "$c" timeout 60 "$bin" bench --backends cpu --threads "$t" --scene "$scene" --sizes "$n" \
      --steps "$steps" --parity-steps 0 "$@" 2>&1 | grep '^cpu' |
      awk -v l="$label" -v b="$b" '{print l "/ms " b " " $7; print l "/waited " b " " $9}'
  done
}
all=0-$(($(nproc) - 1))
for r in $(seq 1 "$rounds"); do
  one sf256-2T "$cpus" 2 stable-fluid 256 200
  one sf512-2T "$cpus" 2 stable-fluid 512 60
  one smoke256-2T "$cpus" 2 smoke 256 150
  one smoke512-2T "$cpus" 2 smoke 512 50
  one sf256-all "$all" 0 stable-fluid 256 200
  one smoke256-all "$all" 0 smoke 256 150
  one smoke1024-all "$all" 0 smoke 1024 30
done
