#!/usr/bin/env bash
# Runs every check CI runs (formatting, clippy, docs, all tests, the NumPy read-back of the
# .npy dumps, the generated SPIR-V), after installing what they need on a Debian machine: NumPy
# for python3, Khronos' spirv-val (spirv-tools) and validation layer, Xvfb for the viewer's
# window, and Mesa's software Vulkan driver (lavapipe) where no Vulkan driver is installed, so
# the GPU conformance suites (wgpu and vulkan) run. A missing GPU adapter or Vulkan device is a
# test failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# Debian packages, installed quietly: one line per package set, the whole log only on failure.
updated=
install() {
  echo "test.sh: installing $*"
  local log
  log=$(mktemp)
  if [ -z "$updated" ]; then
    echo "test.sh: apt-get runs as root$([ "$(id -u)" = 0 ] || echo ' (through sudo)') to install what the tests need"
    as_root apt-get update -qq >"$log" 2>&1 || { cat "$log"; exit 1; }
    updated=1
  fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >"$log" 2>&1 || { cat "$log"; exit 1; }
  rm -f "$log"
}

if ! command -v python3 >/dev/null 2>&1; then
  install python3 python3-numpy
fi
if ! python3 -c 'import numpy' >/dev/null 2>&1; then
  # A pyenv or venv python takes pip; Debian's own python3 is "externally managed": use apt.
  echo "test.sh: installing numpy"
  python3 -m pip install --quiet numpy >/dev/null 2>&1 || install python3-numpy
fi
python3 -c 'import numpy; print("test.sh: numpy", numpy.__version__)'

# Debian 12's own lavapipe (Mesa 22.3) leaks host memory on every submission, ~9 MB a smoke
# step at 64² (the Vulkan suite outgrew 24 GiB), and ran these kernels ~9x slower than Mesa 25:
# on Debian 12 lavapipe comes from bookworm-backports unless a Mesa 24 or later is installed.
old_lavapipe() {
  local v
  v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null) || return 0
  dpkg --compare-versions "$v" lt 24
}
if grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release && old_lavapipe; then
  echo "test.sh: adding Debian's bookworm-backports to /etc/apt/sources.list.d for Mesa 24+"
  echo 'deb http://deb.debian.org/debian bookworm-backports main' \
    | as_root tee /etc/apt/sources.list.d/fluid-bookworm-backports.list >/dev/null
  updated=
  install -t bookworm-backports mesa-vulkan-drivers libvulkan1
elif ! ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1 \
   || ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1'; then
  install mesa-vulkan-drivers libvulkan1
fi
# The Khronos validation layer: the Vulkan backend's tests run under it (debug builds turn it on
# when installed) and FLUID_REQUIRE_VALIDATION=1 makes its absence a failure.
if ! ls /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json >/dev/null 2>&1; then
  install vulkan-validationlayers
fi
export FLUID_REQUIRE_VALIDATION=1
if ! command -v spirv-val >/dev/null 2>&1; then
  install spirv-tools
fi
# `fluid view`'s test opens its window under a virtual X server.
if ! command -v xvfb-run >/dev/null 2>&1; then
  install xvfb xauth
fi
# The dependency policy (deny.toml) is checked by cargo-deny, built from crates.io (about 2.5
# minutes on two cores; the version is xtask's DENY_VERSION).
if ! cargo deny --version >/dev/null 2>&1; then
  echo "test.sh: installing cargo-deny 0.20.2 into ~/.cargo/bin (cargo install --locked)"
  cargo install --locked --quiet cargo-deny@0.20.2
fi
# Vulkan loaders complain without it; harmless, but keep the logs clean.
. scripts/device-env.sh

exec cargo xtask ci
