#!/usr/bin/env bash
# The soak test: every preset for STEPS steps (default 100 000) on the CPU at SIDE × SIDE
# (default 32), every step checked, speed and energy watched for growth without bound
# (fluid/examples/soak.rs). Prints a Markdown table; exits 1 when a preset fails.
#
# usage: scripts/soak.sh [STEPS] [SIDE] [PRESET,PRESET,...]   (SOAK_TRACE=1: every sample)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release -q -p swirly --example soak -- "${1:-100000}" "${2:-32}" ${3:+"$3"}
