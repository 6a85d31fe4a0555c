#!/usr/bin/env bash
# Every particle preset (small) for STEPS steps (default 100 000) on a backend, each particle
# checked after every step against its container and the obstacles: the conformance suite's
# containment test at soak length (CI runs 300 steps on the CPU, 100 on lavapipe).
#
# usage: scripts/particle-soak.sh [cpu|wgpu|vulkan] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/device-env.sh
backend="${1:-vulkan}"
FLUID_PARTICLE_STEPS="${2:-100000}" cargo test --release -q -p swirly-conformance --test "$backend" \
  particles_stay_in_their_containers_long -- --ignored --nocapture
