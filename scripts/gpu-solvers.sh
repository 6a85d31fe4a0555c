#!/usr/bin/env bash
# Residual reached and time per step of the pressure solvers on the smoke scene, at several
# grid sizes, on one backend: the `residual` of `fluid run --json` after 100 steps (the relative
# residual of the last solve) and the ms/step of `fluid bench`.
#
# usage: scripts/gpu-solvers.sh [FLUID_BINARY] [BACKEND] [SIZES]
set -euo pipefail
bin=${1:-target/release/fluid}
backend=${2:-vulkan}
sizes=${3:-256 1024 4096}
. "$(dirname "$0")/device-env.sh"
printf "%-6s %-8s %-10s %10s %12s\n" grid solver iterations ms/step residual
for n in $sizes; do
  for case in jacobi:60 sor:30 jacobi:120 sor:60 multigrid:1 multigrid:2 multigrid:4 mgpcg:2 poisson-filter:16 poisson-filter:32; do
    solver=${case%%:*}
    it=${case##*:}
    set_args=(--set "grid.nx=$n" --set "grid.ny=$n" --set "params.pressure.solver=$solver" --set "params.pressure.iterations=$it")
    res=$("$bin" run smoke --backend "$backend" --steps 100 "${set_args[@]}" --json --out /tmp/fluid-solvers | python3 -c 'import json,sys; print(json.load(sys.stdin)["residual"])')
    ms=$("$bin" bench --backends "$backend" --scene smoke --sizes "$n" --steps 40 --parity-steps 0 --json \
      --set "params.pressure.solver=$solver" --set "params.pressure.iterations=$it" 2>/dev/null |
      python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)[0]["ms_per_step"])')
    printf "%-6s %-8s %-10s %10s %12.3e\n" "${n}x${n}" "$solver" "$it" "$ms" "$res"
  done
done
