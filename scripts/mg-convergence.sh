#!/usr/bin/env bash
# Residual after k cold-started multigrid V-cycles (k = 1..4) in the first step of the smoke
# scene resized to n x n, and the mean reduction per V-cycle: the "about 10x per V-cycle,
# independent of the grid size" check of the solvers issue.
#
# usage: scripts/mg-convergence.sh [FLUID_BINARY] [BACKEND] [SIZES]
set -euo pipefail
bin=${1:-target/release/fluid}
backend=${2:-cpu}
sizes=${3:-64 128 256 512 1024}
. "$(dirname "$0")/device-env.sh"
printf "%-10s %11s %11s %11s %11s %14s\n" grid "1 cycle" "2 cycles" "3 cycles" "4 cycles" "per cycle"
for n in $sizes; do
  res=()
  for k in 1 2 3 4; do
    res+=("$("$bin" run smoke --backend "$backend" --steps 1 --set "grid.nx=$n" --set "grid.ny=$n" \
      --set params.pressure.solver=multigrid --set "params.pressure.iterations=$k" \
      --set params.pressure.warm_start=false --json --out /tmp/fluid-mg |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["residual"])')")
  done
  python3 - "$n" "${res[@]}" <<'PY'
import sys
n, r = sys.argv[1], [float(x) for x in sys.argv[2:]]
factor = (r[3] / r[0]) ** (1 / 3)
print(f"{n+'x'+n:<10} " + " ".join(f"{x:11.3e}" for x in r) + f" {1 / factor:12.1f}x")
PY
done
