#!/usr/bin/env bash
# The tenth session's fifth device call: the bound on wgpu's steps in flight as committed
# (seen-done steps pruned through on_submitted_work_done flags; the first version, run.sh, kept
# the last three indices and always waited on the oldest) against the same build with the bound
# off (MAX_IN_FLIGHT = 1000: `*_unbounded`). Alternating rounds: `fluid bench` on wgpu, and
# game_loop paced at 60 frames per second.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
{ echo "# the wgpu suite"; .bin/wgpu_suite 2>&1 | grep -E "^test result|FAILED|panicked|steps_in_flight"; } > "$out/suites-ab.txt" 2>&1
{ for k in 1 2 3; do
    for v in fluid fluid_unbounded; do
      echo "# round $k: $v"
      .bin/$v bench --backends wgpu --scene smoke --sizes 256,512,1024 --steps 400 --parity-steps 0 2>/dev/null | grep "^wgpu"
      .bin/$v bench --backends wgpu --scene stable-fluid --sizes 256 --steps 400 --parity-steps 0 2>/dev/null | grep "^wgpu"
    done
  done
  for k in 1 2 3; do
    for v in game_loop game_loop_unbounded; do
      echo "# round $k: $v wgpu 300"; .bin/$v wgpu 300 2>&1 | head -2
    done
  done; } > "$out/ab.txt" 2>&1
cat "$out/suites-ab.txt" "$out/ab.txt"
