#!/bin/bash
# Alternating rounds of `fluid bench` (CPU backend) for two binaries, the one before and the
# one after a change, on the cases the residual, relax, apply_forces and multigrid edge cells decide.
# usage: [CASES="smoke-512 ..."] [PIN="taskset -c 2,3"] [THREADS=2] run.sh BASE NEW [ROUNDS]
# (prints: case binary ms_per_step; PIN prefixes each run, THREADS is fluid's --threads, 0 = all)
set -euo pipefail
BASE=$1; NEW=$2; ROUNDS=${3:-5}; PIN=${PIN:-}; THREADS=${THREADS:-0}
case_args() {
  case $1 in
    smoke-tolerance) echo "--scene smoke --sizes 256 --set params.pressure.tolerance=1e-5 --steps 40" ;;
    smoke-relaxation) echo "--scene smoke --sizes 256 --set params.pressure.solver=relaxation --set params.pressure.iterations=100 --steps 20" ;;
    stable-fluid-tolerance) echo "--scene stable-fluid --sizes 256 --set params.pressure.tolerance=1e-3 --steps 40" ;;
    smoke-512) echo "--scene smoke --sizes 512 --steps 40" ;;
    smoke-128) echo "--scene smoke --sizes 128 --steps 100" ;;
    smoke-256) echo "--scene smoke --sizes 256 --steps 60" ;;
    *) echo "unknown case $1" >&2; exit 2 ;;
  esac
}
for c in ${CASES:-smoke-tolerance smoke-relaxation stable-fluid-tolerance smoke-512}; do
  for _ in $(seq "$ROUNDS"); do
    for b in base new; do
      bin=$BASE; [ $b = new ] && bin=$NEW
      # shellcheck disable=SC2046
      ms=$($PIN "$bin" bench --backends cpu --threads "$THREADS" --parity-steps 0 --json $(case_args $c) 2>/dev/null |
        python3 -c "import json,sys; print('%.3f' % json.load(sys.stdin)[0]['ms_per_step'])")
      echo "$c $b $ms"
    done
  done
done
