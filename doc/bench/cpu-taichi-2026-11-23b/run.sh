#!/usr/bin/env bash
cd /work/main
for round in 1 2; do
  echo "## round $round: taichi"; bash scripts/taichi-peer.sh 2>&1 | grep -v "^\[Taichi\]"
  for b in /tmp/fluid-base /tmp/fluid-new; do
    echo "## round $round: $b"
    for c in 256:40 512:40 512:500 1024:100; do
      s=${c%%:*}; n=${c##*:}
      $b bench --backends cpu --scene stable-fluid --set params.pressure.iterations=$n --sizes $s --steps 40 --parity-steps 0 2>/dev/null | grep '^cpu'
    done
  done
done
