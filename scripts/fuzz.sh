#!/usr/bin/env bash
# A longer fuzzing campaign than CI's: structure-aware cases of scene files (edited tables and
# text), --set overrides and damaged checkpoint files (a quarter as many), each accepted or
# refused without a panic, the small ones stepped, read and rendered on the CPU backend; and a
# fiftieth as many image and scene paths (a mask and a background named from a zoo of good,
# damaged and forged PNGs, FIFOs, devices, folders, a 1 GB sparse file and symbolic links, in
# the scene file or by --set, or the scene path itself one of them), each accepted or refused
# without a panic or a hang, and refused wherever no scene may read the file
# (fluid/tests/fuzz.rs).
#
# Then as many command lines as a hundredth of CASES, each its own `fluid` process (edited scene
# files, --set overrides and, a case in four, the image zoo; fluid-cli/tests/fuzz.rs): every
# exit 0, 1 or 2 within 60 s, no panic, no signal.
#
# usage: scripts/fuzz.sh [CASES]   (default 10 000 000; CI runs 100 000 and 2000 processes)
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-10000000}
FLUID_FUZZ_CASES=$cases cargo test --release -p swirly --test fuzz -- --nocapture
FLUID_CLI_FUZZ_CASES=$((cases / 100)) cargo test --release -p swirly-cli --test fuzz -- --nocapture
