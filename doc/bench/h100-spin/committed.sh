#!/usr/bin/env bash
# The committed change (.bin/fluid-wait): both GPU backends poll for up to 2 ms (the default on a
# hardware GPU) before they block. The conformance suites, then three alternating rounds of the
# default against FLUID_GPU_SPIN_US=0 (blocking at once, as before the change).
set -uo pipefail
out=$OUT
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
. scripts/device-env.sh
nvidia-smi -q | grep -i -m2 "driver version\|product name" > "$out/info.txt" 2>&1
{ echo "# vulkan suite"; .bin/vulkan-tests 2>&1 | grep -E "^test result|FAILED|panicked";
  echo "# wgpu suite"; .bin/wgpu-tests 2>&1 | grep -E "^test result|FAILED|panicked"; } > "$out/suites.txt" 2>&1
for k in 1 2 3; do
  for spin in default 0; do
    for scene in smoke stable-fluid; do
      echo "# round $k: spin $spin, $scene"
      if [ $spin = default ]; then unset FLUID_GPU_SPIN_US; else export FLUID_GPU_SPIN_US=$spin; fi
      .bin/fluid-wait bench --backends vulkan,wgpu --scene $scene --sizes 256,512,1024 --steps 200 --parity-steps 2 2>/dev/null | grep -E '^(vulkan|wgpu)'
    done
  done
done > "$out/bench.txt" 2>&1
unset FLUID_GPU_SPIN_US
# One step waited for, with its readback: `fluid run --json` reads the residual every step.
for spin in default 0; do
  if [ $spin = default ]; then unset FLUID_GPU_SPIN_US; else export FLUID_GPU_SPIN_US=$spin; fi
  for b in vulkan wgpu; do
    echo "# spin $spin: fluid run smoke --backend $b --steps 300 --json (256^2)"
    .bin/fluid-wait run smoke --backend $b --steps 300 --json --out /tmp/o 2>/dev/null | grep -o '"ms_per_step":[^,]*'
  done
done >> "$out/bench.txt" 2>&1
cat "$out/info.txt" "$out/suites.txt" "$out/bench.txt"
