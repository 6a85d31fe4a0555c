#!/usr/bin/env bash
# The tenth session's fourth device call: the wgpu backend's bound on steps in flight.
# `wgpu_suite_unbounded` is the wgpu conformance binary built with MAX_IN_FLIGHT = 1000 (the
# bound gone), `wgpu_suite` the committed one (3). Then `fluid bench`, both APIs, two rounds.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
{ for k in 1 2 3; do
    echo "# unbounded, run $k"; .bin/wgpu_suite_unbounded --exact steps_in_flight_are_bounded 2>&1 | grep -E "^test |not done"
  done
  echo "# bounded, the whole wgpu suite"; .bin/wgpu_suite 2>&1 | grep -E "^test result|FAILED|panicked|steps_in_flight"; } > "$out/suites.txt" 2>&1
{ for k in 1 2; do
    for b in vulkan wgpu; do
      echo "# round $k: $b"
      .bin/fluid bench --backends $b --scene smoke --sizes 256,512,1024 --steps 400 --parity-steps 2 2>/dev/null | grep "^$b"
      .bin/fluid bench --backends $b --scene stable-fluid --sizes 256,512 --steps 400 --parity-steps 2 2>/dev/null | grep "^$b"
    done
  done
  echo "# game_loop wgpu 300 (paced)"; .bin/game_loop wgpu 300 2>&1; } > "$out/bench.txt" 2>&1
cat "$out/suites.txt" "$out/bench.txt"
