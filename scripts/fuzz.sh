#!/usr/bin/env bash
# A longer fuzzing campaign than CI's: structure-aware cases of scene files (edited tables and
# text), --set overrides and damaged checkpoint files (a quarter as many), each accepted or
# refused without a panic, the small ones stepped, read and rendered on the CPU backend
# (fluid/tests/fuzz.rs).
#
# usage: scripts/fuzz.sh [CASES]   (default 10 000 000; CI runs 100 000)
set -euo pipefail
cd "$(dirname "$0")/.."
FLUID_FUZZ_CASES=${1:-10000000} cargo test --release -p fluid --test fuzz -- --nocapture
