#!/usr/bin/env bash
# The eleventh session's device call: the GPU conformance suites with the new analytic checks
# (uniform translation, shear wave, splat integrals, uniform forces, curl and vorticity
# confinement) on the H100, test binaries of commit add91ff built here
# (`cargo test --release -p fluid-bench --features fluid/wgpu,fluid/vulkan --test vulkan
# --test wgpu --no-run`, stripped, carried in .bin with the loader debs in .gl).
# Result: Vulkan 58/58, wgpu 60/60 (driver 580.159.04).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
. scripts/device-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(FLUID_REQUIRE_VALIDATION=0 .bin/vulkan_suite --test-threads 1 2>&1 | tail -70) > $OUT/vulkan.txt
(.bin/wgpu_suite --test-threads 1 2>&1 | grep -v XDG | tail -70) > $OUT/wgpu.txt
grep -E "test result|FAILED|panicked" $OUT/*.txt
