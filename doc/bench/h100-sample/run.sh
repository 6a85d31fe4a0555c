#!/usr/bin/env bash
# Simulation::sample of 3 points (only the values they interpolate, Backend::download_at)
# against the whole field read back and sampled (what sample did before), on every backend:
# .bin/sample-latency is a throwaway program (not committed) that times both, median of 200
# calls each, and checks their bits are equal. The conformance suites first.
set -uo pipefail
out=$OUT
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
. scripts/device-env.sh
{ echo "# vulkan suite"; .bin/vulkan-tests 2>&1 | grep -E "^test result|FAILED|panicked";
  echo "# wgpu suite"; .bin/wgpu-tests 2>&1 | grep -E "^test result|FAILED|panicked"; } > "$out/suites.txt" 2>&1
for k in 1 2; do echo "# round $k"; .bin/sample-latency vulkan wgpu cpu 2>&1; done > "$out/sample.txt"
cat "$out/suites.txt" "$out/sample.txt"
