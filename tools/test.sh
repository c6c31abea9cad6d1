#!/usr/bin/env bash
# Runs the whole test suite (unit, integration, SLURM; GPU tests skip without
# a GPU) in ./build, configuring and building it first if needed.
# Extra arguments go to 'meson test' (e.g. --suite unit).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || meson setup build
ninja -C build
meson test -C build --print-errorlogs --num-processes 2 "$@"
