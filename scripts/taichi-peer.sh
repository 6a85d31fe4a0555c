#!/usr/bin/env bash
# Time the peer of doc/PERFORMANCE.md: Taichi 1.7.4's own stable_fluid.py example on the CPU,
# step() only (advection of velocity and dye, the impulse, divergence, N Jacobi sweeps,
# gradient subtraction), at the issue's sizes. The example is taken from the installed taichi
# package unchanged except for `res`, `p_jacobi_iters` and its GUI main loop, which this
# replaces with a timed loop: 10 warm-up steps, then five batches of 20 steps each ended by
# ti.sync(); the median batch is reported.
#
# usage: scripts/taichi-peer.sh [RES:ITERS ...]   (default: 256:40 512:40 512:500 1024:100)
# needs: pip install taichi==1.7.4 (3.11 ran it here, 3.12 on the H100 host; it has wheels up to CPython 3.13)
set -euo pipefail
src=$(python3 -c 'import importlib.util, os; print(os.path.join(os.path.dirname(importlib.util.find_spec("taichi").origin), "examples/simulation/stable_fluid.py"))')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(256:40 512:40 512:500 1024:100)
for c in "${cases[@]}"; do
  res=${c%%:*}
  iters=${c##*:}
  py="$work/stable_fluid_${res}_${iters}.py"
  sed -e "s/^res = 512/res = $res/" -e "s/^p_jacobi_iters = 500 /p_jacobi_iters = $iters /" \
    -e 's/^if __name__ == "__main__":/if False:/' "$src" > "$py"
  grep -q "^res = $res$" "$py" && grep -q "^p_jacobi_iters = $iters " "$py" || {
    echo "taichi-peer: the example's res / p_jacobi_iters lines were not found in $src" >&2
    exit 1
  }
  cat >> "$py" <<'PY'
import time
md = np.zeros(8, dtype=np.float32)
md[0], md[1] = 0.0, 1.0  # impulse direction
md[2], md[3] = res * 0.5, res * 0.3  # impulse position (cells)
md[4:7] = [1.0, 0.5, 0.25]  # dye colour
for _ in range(10):
    step(md)
ti.sync()
samples = []
for _ in range(5):
    n = 20
    t0 = time.perf_counter()
    for _ in range(n):
        step(md)
    ti.sync()
    samples.append((time.perf_counter() - t0) * 1e3 / n)
samples.sort()
print(f"taichi {'.'.join(map(str, ti.__version__))} stable_fluid.py cpu {res}^2 / {p_jacobi_iters} sweeps: "
      f"median {samples[2]:.2f} ms/step (batches {', '.join(f'{s:.2f}' for s in samples)})")
PY
  python3 "$py" 2>&1 | grep -E "^taichi [0-9]" || { echo "taichi-peer: $res:$iters failed" >&2; exit 1; }
done
