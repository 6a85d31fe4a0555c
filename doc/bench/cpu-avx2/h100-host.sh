#!/usr/bin/env bash
set -uo pipefail
out=$OUT
. scripts/device-env.sh
{ lscpu | grep -E "Model name|^CPU\(s\)|Flags" | sed 's/Flags:.*\(avx2\).*\(avx512f\).*/Flags: has avx2 and avx512f/'; .bin/fluid info | sed -n 1,3p;
  .bin/cpu-tests 2>&1 | grep -E "^test result|FAILED|panicked";
  .bin/determinism-tests 2>&1 | grep -E "^test result|FAILED|panicked";
  for c in 256:40 512:40 512:500 1024:100; do s=${c%%:*}; n=${c##*:};
    .bin/fluid bench --backends cpu --scene stable-fluid --set params.pressure.iterations=$n --sizes $s --steps 40 --parity-steps 0 2>/dev/null | grep '^cpu'; done; } > "$out/cpu.txt" 2>&1
cat "$out/cpu.txt"
