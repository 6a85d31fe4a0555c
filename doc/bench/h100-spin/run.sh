#!/usr/bin/env bash
# Waiting for the GPU by polling before blocking: an experiment binary (.bin/fluid-spin) whose
# Vulkan fence wait polls vkGetFenceStatus for FLUID_VULKAN_SPIN_US microseconds, and whose
# wgpu finish polls device.poll(Poll) for FLUID_WGPU_SPIN_US, before the blocking wait. Three
# alternating rounds of 0 (the blocking wait alone, as on main) against 2000.
set -uo pipefail
out=$OUT
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
. scripts/device-env.sh
nvidia-smi -q | grep -i -m2 "driver version\|product name" > "$out/info.txt" 2>&1
for k in 1 2 3; do
  for spin in 0 2000; do
    for scene in smoke stable-fluid; do
      echo "# round $k: spin $spin us, $scene"
      FLUID_VULKAN_SPIN_US=$spin FLUID_WGPU_SPIN_US=$spin .bin/fluid-spin bench --backends vulkan,wgpu --scene $scene --sizes 256,512 --steps 200 --parity-steps 2 2>/dev/null | grep -E '^(vulkan|wgpu)'
    done
  done
done > "$out/spin.txt" 2>&1
cat "$out/info.txt" "$out/spin.txt"
