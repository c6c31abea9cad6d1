#!/bin/bash
# Builds db/prebuilt/<gpu-id>.db from the measured-data CSVs with
# `tilecast db import`, reproducibly: the same inputs and tilecast give
# byte-identical files (timestamps come from SOURCE_DATE_EPOCH).
#
#   tools/build-prebuilt.sh MEASURED_DIR [BUILD_DIR [OUT_DIR]]
#
# MEASURED_DIR holds vidur_gemm.csv, neusight_gemm.csv and cookbook_gemm.csv
# (see db/prebuilt/README.md for what is imported and why the rest is not);
# BUILD_DIR is a configured build with tools/tilecast (default: build);
# OUT_DIR receives the files (default: db/prebuilt of this tree).
set -euo pipefail

usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
    usage >&2
    exit 1
fi
measured=$1
build=${2:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${3:-$here/db/prebuilt}
tc=$build/tools/tilecast
[ -x "$tc" ] || { echo "build-prebuilt: $tc not found: build tilecast first" >&2; exit 1; }
[ -d "$out" ] || { echo "build-prebuilt: $out is not a directory" >&2; exit 1; }
for f in vidur_gemm.csv neusight_gemm.csv cookbook_gemm.csv; do
    [ -r "$measured/$f" ] || { echo "build-prebuilt: $measured/$f is missing" >&2; exit 1; }
done

# 2026-01-01T00:00:00Z unless the caller pins another time
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1767225600}
# the shipped specs only, so a local spec directory cannot change the snapshot
unset TILECAST_SPECS_PATH
export TILECAST_DATA_DIR=$here

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gpu-id  file (rows of that GPU are taken from it)
while read -r gpu file; do
    "$tc" db import --format csv --gpu "$gpu" "$measured/$file" --into "$tmp/$gpu.db" >"$tmp/log"
    sed "s|$tmp/||" "$tmp/log"
    # fit once here, so a predictor opening the file read-only never refits
    "$tc" db calibrate "$tmp/$gpu.db" >/dev/null
    "$tc" db compact "$tmp/$gpu.db" >/dev/null
    "$tc" db check "$tmp/$gpu.db" >/dev/null
    mv "$tmp/$gpu.db" "$out/$gpu.db"
done <<'EOF'
a100-sxm4-80gb vidur_gemm.csv
h100-sxm5-80gb vidur_gemm.csv
a100-pcie-40gb neusight_gemm.csv
a100-sxm4-40gb cookbook_gemm.csv
v100-sxm2-32gb cookbook_gemm.csv
mi250x cookbook_gemm.csv
EOF

for f in "$out"/*.db; do
    printf '%-22s %9d bytes\n' "$(basename "$f")" "$(stat -c %s "$f")"
done
