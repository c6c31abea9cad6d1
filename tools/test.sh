#!/usr/bin/env bash
# Runs the whole test suite (unit, integration, SLURM; GPU tests skip without
# a GPU) in ./build, configuring and building it first if needed, and ends
# with "N passed, N failed, N skipped" from meson's log of the run. The exit
# status is meson test's. Extra arguments go to 'meson test' (e.g. --suite unit).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || meson setup build
ninja -C build
# The log this run writes (testlog.json, testlog-SETUP.json with --setup) is
# the one newer than the stamp; earlier runs' logs are not counted.
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
status=0
meson test -C build --print-errorlogs --num-processes 2 "$@" || status=$?
mapfile -t logs < <(find build/meson-logs -maxdepth 1 -name 'testlog*.json' -newer "$stamp")
python3 tools/test-summary.py "${logs[@]}" || true
exit "$status"
