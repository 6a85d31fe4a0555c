#!/usr/bin/env bash
# Taichi 1.7.4's stable_fluid.py and fluid's CPU backend side by side: the script of
# cpu-taichi-2026-11-23c with two rounds instead of three. FLUID: the release binary to time
# (default target/release/fluid).
ROUNDS=2 exec bash "$(dirname "$0")/../cpu-taichi-2026-11-23c/run.sh"
