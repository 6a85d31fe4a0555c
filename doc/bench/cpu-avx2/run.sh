#!/usr/bin/env bash
for round in 1 2; do
  for b in /tmp/fluid-new /tmp/fluid-simd2; do
    echo "## round $round: $b"
    for c in 256:40 512:40 512:500 1024:100; do
      s=${c%%:*}; n=${c##*:}
      $b bench --backends cpu --scene stable-fluid --set params.pressure.iterations=$n --sizes $s --steps 40 --parity-steps 0 2>/dev/null | grep '^cpu'
    done
    $b bench --backends cpu --scene smoke --sizes 256,512 --steps 100 --parity-steps 0 2>/dev/null | grep '^cpu'
  done
done
