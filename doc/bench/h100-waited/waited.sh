#!/usr/bin/env bash
# The waited-step latency (fluid bench's `waited ms`) on both GPU APIs, three rounds.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
for k in 1 2 3; do
  echo "# round $k: smoke"
  .bin/fluid bench --backends vulkan,wgpu --scene smoke --sizes 256,512,1024 --steps 200 2>/dev/null
  echo "# round $k: stable-fluid (40 Jacobi sweeps)"
  .bin/fluid bench --backends vulkan,wgpu --scene stable-fluid --sizes 256,512 --steps 200 2>/dev/null
done > "$out/waited.txt"
cat "$out/waited.txt"
