#!/usr/bin/env bash
# Where mg_coarse's time goes: wgpu with FLUID_WGPU_SHADER_DIR variants (wrong results, timing only).
# v0 as shipped; v1 no coarsest-level smoothing; v2 no smoothing at all; v3 no smoothing of the
# first (32x32) level; v4 load and store only; v5 returns at once.
set -uo pipefail
. scripts/device-env.sh
for k in 1 2; do
  for v in v0 v1 v2 v3 v4 v5; do
    echo "# run $k $v"
    FLUID_WGPU_SHADER_DIR=.bin/var/$v .bin/fluid bench --backends wgpu --scene smoke --sizes 256 --steps 200 --parity-steps 0 2>&1 | grep -E '^wgpu|rror'
  done
done | tee "$OUT/coarse-variants.txt"
