#!/usr/bin/env bash
# The committed binary: conformance on both Vulkan queue families, then Vulkan (compute-only
# family, the default; graphics family) against wgpu, three alternating rounds.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
nvidia-smi -q | grep -i -m2 "driver version\|product name" > "$out/info.txt" 2>&1
.bin/fluid info >> "$out/info.txt" 2>&1
{ echo "# vulkan suite, default queue"; .bin/vulkan-tests 2>&1 | grep -E "^test result|FAILED|panicked";
  echo "# vulkan suite, FLUID_VULKAN_QUEUE=graphics"; FLUID_VULKAN_QUEUE=graphics .bin/vulkan-tests 2>&1 | grep -E "^test result|FAILED|panicked"; } > "$out/suites.txt" 2>&1
for k in 1 2 3; do
  for q in compute graphics; do
    echo "# round $k: vulkan, FLUID_VULKAN_QUEUE=$q"
    FLUID_VULKAN_QUEUE=$q .bin/fluid bench --backends vulkan --scene smoke --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep '^vulkan'
    FLUID_VULKAN_QUEUE=$q .bin/fluid bench --backends vulkan --scene stable-fluid --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep '^vulkan'
  done
  echo "# round $k: wgpu"
  .bin/fluid bench --backends wgpu --scene smoke --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep '^wgpu'
  .bin/fluid bench --backends wgpu --scene stable-fluid --sizes 256,512 --steps 400 --parity-steps 5 2>/dev/null | grep '^wgpu'
done > "$out/bench.txt" 2>&1
.bin/fluid bench --backends vulkan,wgpu --scene smoke --sizes 256 --steps 50 --parity-steps 5 2>&1 | head -3 >> "$out/bench.txt"
cat "$out/info.txt" "$out/suites.txt" "$out/bench.txt"
