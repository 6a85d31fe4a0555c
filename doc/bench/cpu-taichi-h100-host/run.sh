#!/usr/bin/env bash
# Taichi 1.7.4's stable_fluid.py (scripts/taichi-peer.sh) and fluid's CPU backend side by side
# on the H100 machine's host, both on the same two pinned cores (2 and 3) with two threads:
# Taichi through TI_CPU_MAX_NUM_THREADS=2, fluid through --threads 2. Run from the repository
# root there, with the taichi 1.7.4 and dill wheels (cp312) in .whl/ and the release binary to
# time as FLUID (default target/release/fluid). ROUNDS: how many rounds (default 2;
# two took about 9 minutes there, so three do not fit one 10-minute device call).
set -u
cd "$(dirname "$0")/../../.."
fluid=${FLUID:-target/release/fluid}
if ! python3 -c 'import taichi' 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
lscpu | grep -E "Model name|^CPU\(s\)|Core\(s\)|Thread|L2|L3"
python3 -c 'import numpy, taichi; print("numpy", numpy.__version__, "taichi", taichi.__version__)' 2>&1 | grep -v '^\[Taichi\]'
for round in $(seq "${ROUNDS:-2}"); do
  echo "## round $round: taichi"
  TI_CPU_MAX_NUM_THREADS=2 taskset -c 2,3 bash scripts/taichi-peer.sh 2>&1 | grep -v "^\[Taichi\]"
  echo "## round $round: fluid"
  for c in 256:40 512:40 512:500 1024:100; do
    s=${c%%:*}; n=${c##*:}
    taskset -c 2,3 "$fluid" bench --backends cpu --threads 2 --scene stable-fluid \
      --set params.pressure.iterations="$n" --sizes "$s" --steps 40 --parity-steps 0 2>/dev/null | grep '^cpu'
  done
done
