#!/usr/bin/env bash
# The CPU row loops over zipped slices instead of indices: fluid-per (96ead9e) against fluid-all
# (96ead9e with diffuse_velocity, apply_forces, curl, sor, cg_apply, cg_init, mg_load,
# mg_restrict and mg_smooth written so; only diffuse_velocity was kept, commit 39f0683).
# Per-kernel ms per step at 256^2 with 1 pinned thread, then whole steps with 2 pinned threads.
cd "$(dirname "$0")"
lscpu | grep -E "Model name"
run() { # binary threads cpus scene...
  local b=$1 t=$2 c=$3; shift 3
  taskset -c $c ./fluid-$b run "$@" --threads $t --steps 20 --out /tmp/o --timings 2>&1 |
    awk '/ms\/step,/{for(i=1;i<=NF;i++) if($i=="ms/step,") printf "step %s ", $(i-1)} /fluid\./{printf "%s %s ", substr($1,7), $4}'
  echo
}
for r in 1 2 3 4; do
  for s in "taylor-green" "smoke" "smoke --set params.pressure.solver=sor" "smoke --set params.pressure.solver=mgpcg" "smoke --set params.pressure.solver=multigrid --set params.pressure.precision=single"; do
    for b in per all; do echo -n "$r 1T 256 [$s] $b: "; run $b 1 2 $s --set grid.nx=256 --set grid.ny=256; done
  done
  for s in "taylor-green" "smoke" "smoke --set params.pressure.solver=mgpcg"; do
    for n in 256 512; do
      for b in per all; do echo -n "$r 2T $n [$s] $b: "; run $b 2 2,3 $s --set grid.nx=$n --set grid.ny=$n; done
    done
  done
done
