#!/bin/bash
. scripts/device-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cd .bin
./vulkan-tests > $OUT/vulkan-suite.txt 2>&1; echo "vulkan suite rc=$?"; grep "test result" $OUT/vulkan-suite.txt
./wgpu-tests > $OUT/wgpu-suite.txt 2>&1; echo "wgpu suite rc=$?"; grep "test result" $OUT/wgpu-suite.txt
for b in vulkan wgpu; do
  fails=0
  for i in $(seq 1 25); do ./$b-tests two_simulations > /tmp/c.txt 2>&1 || { fails=$((fails+1)); cp /tmp/c.txt $OUT/$b-conc-fail-$i.txt; }; done
  echo "$b concurrent test: 25 runs, $fails failed"
done
