# Sourced by scripts/test.sh and the benchmark scripts: what a headless machine (CI, a
# container, the lent GPU machine) needs before the GPU backends start. The Vulkan loader
# complains without an existing XDG_RUNTIME_DIR, and a machine without a login session has none.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "${XDG_RUNTIME_DIR}" ]; then
  export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/fluid-xdg-$(id -u)"
  mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
fi
