#!/usr/bin/env bash
# The seventeenth session's third device call, on a fresh machine: the first call's order (the
# Vulkan suite, then the wgpu suite, both with --report-time) to see whether the wgpu suite's
# SIGSEGV at its start comes back; then the wgpu suite twice more; the kernel's log of any
# crash and the driver's shader caches.
set -uo pipefail
out=$OUT
. scripts/device-env.sh
export RUSTC_BOOTSTRAP=1
ulimit -c 0
SECONDS=0
timeout 150 .bin/vulkan_suite -Z unstable-options --report-time > "$out/vulkan-run.txt" 2>&1
echo "# vulkan suite: exit $? after ${SECONDS} s; $(grep '^test result' "$out/vulkan-run.txt")" > "$out/summary.txt"
for k in 1 2 3; do
  SECONDS=0
  timeout 150 .bin/wgpu_suite -Z unstable-options --report-time > "$out/wgpu-run-$k.txt" 2>&1
  echo "# wgpu suite, run $k: exit $? after ${SECONDS} s; $(grep '^test result' "$out/wgpu-run-$k.txt")" >> "$out/summary.txt"
  grep -E "FAILED|panicked|Segmentation" "$out/wgpu-run-$k.txt" >> "$out/summary.txt"
done
{ echo "# dmesg"; dmesg 2>&1 | grep -iE "segfault|trap|fault" | tail -5; echo "# caches"; ls -la ~/.cache 2>&1; du -sh ~/.cache/nvidia 2>&1; } >> "$out/summary.txt"
cat "$out/summary.txt"
