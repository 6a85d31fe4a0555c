#!/usr/bin/env bash
# Taichi 1.7.4's stable_fluid.py (scripts/taichi-peer.sh) and fluid's CPU backend, side by side
# in each round, on an otherwise idle machine. FLUID: the release binary to time
# (default target/release/fluid); ROUNDS: how many rounds (default 3). PIN: a command prefix for
# both programs, e.g. "taskset -c 2,3" (default none); THREADS: fluid's --threads (default 0,
# one per core); Taichi's thread count is its own TI_CPU_MAX_NUM_THREADS.
cd "$(dirname "$0")/../../.."
fluid=${FLUID:-target/release/fluid}
PIN=${PIN:-}
lscpu | grep -E "Model name|^Model:|Core\(s\)|Thread"
"$fluid" info 2>/dev/null | grep -i cpu
for round in $(seq "${ROUNDS:-3}"); do
  echo "## round $round: taichi"; $PIN bash scripts/taichi-peer.sh 2>&1 | grep -v "^\[Taichi\]"
  echo "## round $round: fluid"
  for c in 256:40 512:40 512:500 1024:100; do
    s=${c%%:*}; n=${c##*:}
    $PIN "$fluid" bench --backends cpu --threads "${THREADS:-0}" --scene stable-fluid --set params.pressure.iterations=$n --sizes $s --steps 40 --parity-steps 0 2>/dev/null | grep '^cpu'
  done
done
