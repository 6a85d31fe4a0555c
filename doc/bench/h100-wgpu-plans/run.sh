#!/usr/bin/env bash
# wgpu's host cost per step before and after the plan cache, five alternating rounds.
set -uo pipefail
. scripts/device-env.sh
for k in 1 2 3 4 5; do
  for b in before after; do
    bin=.bin/fluid; [ $b = before ] && bin=.bin/fluid-before
    echo "# round $k: $b"
    $bin bench --backends wgpu --scene smoke --sizes 256,512 --steps 200 --parity-steps 0 2>/dev/null | grep '^wgpu'
    $bin bench --backends wgpu --scene stable-fluid --sizes 256 --steps 200 --parity-steps 0 2>/dev/null | grep '^wgpu'
  done
done | tee "$OUT/plan-cache.txt"
