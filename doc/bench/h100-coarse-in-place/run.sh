#!/usr/bin/env bash
set -uo pipefail
out=$OUT
. scripts/device-env.sh
FLUID_VULKAN_VALIDATION=0 timeout 200 .bin/conf-vulkan > "$out/conformance-vulkan.txt" 2>&1
timeout 200 .bin/conf-wgpu > "$out/conformance-wgpu.txt" 2>&1
for k in 1 2 3; do
  for b in before after; do
    bin=.bin/fluid; [ $b = before ] && bin=.bin/fluid-before
    echo "# run $k: $b"
    $bin bench --backends vulkan,wgpu --scene smoke --sizes 256,512,1024 --steps 200 --parity-steps 10 2>/dev/null | grep -v '^copy\|^host ms\|^vs cpu'
  done
done > "$out/smoke.txt"
for b in before after; do
  bin=.bin/fluid; [ $b = before ] && bin=.bin/fluid-before
  echo "# $b: timings"
  $bin run smoke --backend vulkan --steps 100 --set grid.nx=256 --set grid.ny=256 --timings 2>/dev/null | grep -E 'mg_|smoke:'
done > "$out/timings.txt"
grep -E "test result|FAILED|panicked" "$out"/conformance-*.txt
cat "$out/smoke.txt" "$out/timings.txt"
