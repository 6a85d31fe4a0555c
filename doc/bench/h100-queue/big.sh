#!/usr/bin/env bash
# Larger grids: Vulkan on each queue family against wgpu, two alternating rounds.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
for k in 1 2; do
  for q in compute graphics; do
    echo "# round $k: vulkan, FLUID_VULKAN_QUEUE=$q"
    FLUID_VULKAN_QUEUE=$q .bin/fluid bench --backends vulkan --scene smoke --sizes 1024,4096 --steps 100 --parity-steps 2 2>/dev/null | grep '^vulkan\|^copy'
  done
  echo "# round $k: wgpu"
  .bin/fluid bench --backends wgpu --scene smoke --sizes 1024,4096 --steps 100 --parity-steps 2 2>/dev/null | grep '^wgpu\|^copy'
done > "$out/big.txt" 2>&1
cat "$out/big.txt"
