#!/usr/bin/env bash
# Two builds of `fluid` side by side on the GPU backends of one machine, run alternately: the
# smoke preset's step at 256²–4096² (two rounds), the pressure solvers to a residual (the
# defaults, and multigrid / MGPCG at 1024² and 4096²), and the device memory of the smoke scene
# at 4096² with Jacobi and with its own multigrid: nvidia-smi's peak per process for both
# builds, and the backend's own accounting from a build whose `fluid run --json` reports it.
#
# usage: scripts/gpu-compare.sh BEFORE_BINARY AFTER_BINARY OUT_DIR [steps,solvers,memory]
set -uo pipefail
before=$1
after=$2
out=$3
parts=${4:-steps,solvers,memory}
mkdir -p "$out"
. "$(dirname "$0")/device-env.sh"
"$after" info > "$out/info.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$out/info.txt" 2>&1
part() { [[ ",$parts," == *",$1,"* ]]; }
part steps && for round in 1 2; do
  for bin in "$before" "$after"; do
    name=$(basename "$bin")
    "$bin" bench --scene smoke --sizes 256,1024,2048,4096 --backends vulkan,wgpu --parity-steps 0 --json \
      > "$out/smoke-$name-$round.json" 2> /dev/null
  done
done
part solvers && for bin in "$before" "$after"; do
  name=$(basename "$bin")
  "$bin" bench solvers --backends vulkan,wgpu --json > "$out/solvers-$name.json" 2> /dev/null
  "$bin" bench solvers --backends vulkan,wgpu --solvers multigrid,mgpcg --sizes 1024,4096 --budget-ms 8 --json \
    > "$out/solvers-mg-$name.json" 2> /dev/null
done
# Device memory at 4096²: the smoke preset with Jacobi, and as shipped (multigrid).
jacobi=(--set params.pressure.solver=jacobi)
part memory && for scene in jacobi multigrid; do
  extra=()
  [ "$scene" = jacobi ] && extra=("${jacobi[@]}")
  for bin in "$before" "$after"; do
    name=$(basename "$bin")
    for backend in vulkan wgpu; do
      "$bin" run smoke --backend "$backend" --steps 200 --set grid.nx=4096 --set grid.ny=4096 "${extra[@]}" \
        --json --out "$out/run-$name" > "$out/memory-$scene-$name-$backend.json" 2>&1 &
      pid=$!
      peak=0
      while kill -0 "$pid" 2> /dev/null; do
        used=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2> /dev/null |
          awk -F', ' -v p="$pid" '$1 == p { print $2 }')
        if [ -n "$used" ] && [ "$used" -gt "$peak" ]; then peak=$used; fi
        sleep 0.1
      done
      echo "$scene $name $backend nvidia-smi peak MiB: $peak" >> "$out/memory.txt"
    done
  done
done
part memory && cat "$out/memory.txt"
