#!/usr/bin/env bash
# Interleaved single-thread timings of four builds of the CPU advection, stable-fluid 512²/40,
# as stripped release binaries beside this script: fluid-head (c32afec), fluid-i32 (the lanes' x
# positions through i32, committed), fluid-chk (i32 plus a one-compare window bounds check) and
# fluid-bb (chk plus the window offsets through std::hint::black_box); the last two not kept.
# Output columns: round, build, ms/step, advect_velocity ms/step, advect_cells ms/step.
cd "$(dirname "$0")"
lscpu | grep -E "Model name|^CPU\(s\)"
for r in 1 2 3 4 5 6; do
  for b in head i32 chk bb; do
    echo -n "$r $b "
    ./fluid-$b run stable-fluid --steps 40 --out /tmp/pf --threads 1 --timings 2>&1 | grep -E "advect|ms/step" | awk '/ms\/step/{for(i=1;i<=NF;i++) if($i=="ms/step,") print $(i-1)} /advect/{print $4}' | tr '\n' ' '
    echo
  done
done
for r in 1 2 3; do
  for b in head i32 chk bb; do
    echo -n "bench4 $r $b "
    ./fluid-$b bench --backends cpu --threads 4 --scene stable-fluid --sizes 512 --steps 40 --parity-steps 0 2>/dev/null | grep '^cpu' | awk '{print $7}'
  done
done
