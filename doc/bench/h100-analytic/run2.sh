#!/usr/bin/env bash
# The eleventh session's second device call (binaries of e48a1df built here, carried in .bin
# with the loader debs in .gl): the GPU conformance suites with every analytic check of the
# session, then the peak memory of one step of 10^5 Jacobi sweeps (the MAX_ITERATIONS cap)
# on each GPU API at 64².
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
. scripts/device-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(.bin/vulkan_suite --test-threads 1 2>&1 | tail -75) > $OUT/vulkan2.txt
(.bin/wgpu_suite --test-threads 1 2>&1 | grep -v XDG | tail -75) > $OUT/wgpu2.txt
grep -E "test result|FAILED|panicked" $OUT/*2.txt
peak() {  # peak resident memory (VmHWM, kB) of a command, and its wall time
  local t0=$(date +%s.%N); "$@" >/dev/null 2>&1 & local pid=$! hwm=0
  while kill -0 $pid 2>/dev/null; do
    h=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null); [ -n "$h" ] && hwm=$h; sleep 0.05
  done
  wait $pid; echo "rc=$? peak_kB=$hwm wall_s=$(awk -v a="$(date +%s.%N)" -v b="$t0" "BEGIN{print a - b}")"
}
for b in vulkan wgpu; do for it in 1000 100000; do
  echo "$b iterations=$it: $(peak .bin/fluid run stable-fluid --backend $b --steps 1 --set grid.nx=64 --set grid.ny=64 --set params.pressure.iterations=$it --out /tmp/o)"
done; done | tee $OUT/memory.txt
