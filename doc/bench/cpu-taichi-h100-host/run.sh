#!/usr/bin/env bash
# Taichi 1.7.4's stable_fluid.py and fluid's CPU backend side by side on the H100 machine's host:
# the script of cpu-taichi-2026-11-23c with both programs on the same two pinned cores (2 and 3)
# and two threads each (Taichi through TI_CPU_MAX_NUM_THREADS=2, fluid through --threads 2),
# two rounds by default (ROUNDS; two took about 9 minutes there, so three do not fit one
# 10-minute device call). Run from the repository root there, with the taichi 1.7.4 and dill
# wheels (cp312) in .whl/ and the release binary to time as FLUID (default target/release/fluid).
# (out-0c4eab1.txt came from an earlier, standalone copy of this script, which also printed
# lscpu's CPU(s), L2 and L3 lines and not `fluid info`.)
set -u
cd "$(dirname "$0")/../../.."
if ! python3 -c 'import taichi' 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
python3 -c 'import numpy, taichi; print("numpy", numpy.__version__, "taichi", taichi.__version__)' 2>&1 | grep -v '^\[Taichi\]'
ROUNDS=${ROUNDS:-2} PIN="taskset -c 2,3" THREADS=2 TI_CPU_MAX_NUM_THREADS=2 \
  exec bash doc/bench/cpu-taichi-2026-11-23c/run.sh
