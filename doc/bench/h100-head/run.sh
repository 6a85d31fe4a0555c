#!/usr/bin/env bash
# The tenth session's first device call: main's head (129b45e) on the H100, built here.
# The GPU suites and the application-device tests (under the validation layer), then
# `fluid bench`, Vulkan against wgpu, three alternating rounds, then the CPU backend on two
# pinned cores of the host against the figures issue #2 gives for Taichi.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
{ nvidia-smi -q | grep -i -m2 "driver version\|product name"; lscpu | grep -E "^Model name|^CPU\(s\)"; .bin/fluid info; } > "$out/info.txt" 2>&1
{ echo "# vulkan suite"; .bin/vulkan_suite 2>&1 | grep -E "^test result|FAILED|panicked"
  echo "# wgpu suite"; .bin/wgpu_suite 2>&1 | grep -E "^test result|FAILED|panicked"
  echo "# app_device, FLUID_REQUIRE_VALIDATION=1"; FLUID_REQUIRE_VALIDATION=1 .bin/app_device --test-threads 1 2>&1 | grep -E "^test |^test result|FAILED|panicked|VUID"; } > "$out/suites.txt" 2>&1
for k in 1 2 3; do
  for b in vulkan wgpu; do
    echo "# round $k: $b"
    .bin/fluid bench --backends $b --scene smoke --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep "^$b"
    .bin/fluid bench --backends $b --scene stable-fluid --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep "^$b"
  done
done > "$out/bench.txt" 2>&1
{ echo "# large grids, vulkan then wgpu"
  .bin/fluid bench --backends vulkan,wgpu --scene smoke --sizes 1024,4096 --steps 100 --parity-steps 2 2>&1
  echo "# column header"
  .bin/fluid bench --backends vulkan --scene smoke --sizes 64 --steps 20 --parity-steps 1 2>&1 | head -3; } >> "$out/bench.txt" 2>&1
{ for k in 1 2; do
    echo "# round $k: cpu, taskset -c 2,3"
    taskset -c 2,3 .bin/fluid bench --backends cpu --scene stable-fluid --sizes 256,512 --steps 100 --parity-steps 0 --threads 2 2>/dev/null | grep '^cpu'
    taskset -c 2,3 .bin/fluid bench --backends cpu --scene stable-fluid --sizes 512 --steps 20 --parity-steps 0 --threads 2 --set params.pressure.iterations=500 2>/dev/null | grep '^cpu'
    taskset -c 2,3 .bin/fluid bench --backends cpu --scene stable-fluid --sizes 1024 --steps 30 --parity-steps 0 --threads 2 --set params.pressure.iterations=100 2>/dev/null | grep '^cpu'
  done; } > "$out/cpu.txt" 2>&1
cat "$out/info.txt" "$out/suites.txt" "$out/bench.txt" "$out/cpu.txt"
