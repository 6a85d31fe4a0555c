#!/usr/bin/env bash
# Taichi 1.7.4's stable_fluid.py (scripts/taichi-peer.sh) beside two builds of fluid's CPU
# backend, in each round: Taichi, then BEFORE, then AFTER, on the four workloads of issue #2.
# usage: BEFORE=<fluid binary> AFTER=<fluid binary> ROUNDS=3 bash run.sh
cd "$(dirname "$0")/../../.."
lscpu | grep -E "Model name|^Model:|Core\(s\)|Thread"
for round in $(seq "${ROUNDS:-3}"); do
  echo "## round $round: taichi"; bash scripts/taichi-peer.sh 2>&1 | grep -v "^\[Taichi\]"
  for which in BEFORE AFTER; do
    echo "## round $round: fluid $which"
    for c in 256:40 512:40 512:500 1024:100; do
      s=${c%%:*}; n=${c##*:}
      "${!which}" bench --backends cpu --scene stable-fluid --set params.pressure.iterations=$n --sizes $s --steps 40 --parity-steps 0 2>/dev/null | grep '^cpu'
    done
  done
done
