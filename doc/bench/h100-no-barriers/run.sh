#!/usr/bin/env bash
# Device run of this session: conformance suites (new NaN/inf reduction test) on the H100, the
# blow-up check on both GPU APIs, the smoke preset on both APIs, and the experiment build whose
# Vulkan recording has no barriers at all (wrong results; an upper bound of what barrier and
# recording work could buy).
set -uo pipefail
out=$OUT
. scripts/device-env.sh
.bin/fluid info > "$out/info.txt" 2>&1
FLUID_VULKAN_VALIDATION=0 timeout 240 .bin/conf-vulkan > "$out/conformance-vulkan.txt" 2>&1
timeout 240 .bin/conf-wgpu > "$out/conformance-wgpu.txt" 2>&1
for b in vulkan wgpu; do
  echo "# $b dt=1e30"; .bin/fluid run smoke --backend $b --steps 3 --set params.dt=1e30; echo "exit $?"
  echo "# $b preset"; .bin/fluid run smoke --backend $b --steps 100 --json | head -c 400; echo; echo "exit $?"
done > "$out/blowup.txt" 2>&1
for k in 1 2; do
  echo "# run $k: HEAD"
  .bin/fluid bench --backends vulkan,wgpu --scene smoke --sizes 256,512 --steps 200 2>/dev/null
  echo "# run $k: Vulkan without barriers"
  FLUID_EXPERIMENT_NO_BARRIERS=1 .bin/fluid-nobarrier bench --backends vulkan --scene smoke --sizes 256,512 --steps 200 2>/dev/null
done > "$out/smoke.txt"
for f in "$out"/*.txt; do
  echo "=== $f"
  grep -E "test result|FAILED|panicked" "$f" || cat "$f"
done
