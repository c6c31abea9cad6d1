#!/bin/bash
# Builds db/prebuilt/<gpu-id>.db from the vendored measurements in
# db/sources/ with `tilecast db import`, reproducibly: the same inputs and
# tilecast give byte-identical files (timestamps come from SOURCE_DATE_EPOCH).
#
#   tools/build-prebuilt.sh [--measured DIR] [BUILD_DIR [OUT_DIR]]
#
# The clone alone is enough: db/sources/*.csv.xz are decompressed into a
# temporary folder. --measured DIR reads uncompressed CSVs from DIR instead
# (vidur_gemm, neusight_gemm, neusight_gemm_v100, cookbook_gemm and
# attention_fused .csv; db/prebuilt/README.md says what is imported and why).
# BUILD_DIR is a configured build with tools/tilecast (default: build);
# OUT_DIR receives the files (default: db/prebuilt of this tree).
set -euo pipefail

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
measured=
case "${1:-}" in
-h | --help) usage; exit 0 ;;
--measured)
    [ $# -ge 2 ] || { usage >&2; exit 1; }
    measured=$2
    shift 2
    ;;
-*) echo "build-prebuilt: unknown option $1" >&2; usage >&2; exit 1 ;;
esac
if [ $# -gt 2 ]; then
    usage >&2
    exit 1
fi
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$here/db/prebuilt}
tc=$(cd "$build" 2>/dev/null && pwd)/tools/tilecast || tc=$build/tools/tilecast
[ -x "$tc" ] || { echo "build-prebuilt: $tc not found: build tilecast first" >&2; exit 1; }
[ -d "$out" ] || { echo "build-prebuilt: $out is not a directory" >&2; exit 1; }

# gpu-id  file: one database per GPU, of that GPU's rows of the file
prebuilt="a100-sxm4-80gb vidur_gemm.csv
h100-sxm5-80gb vidur_gemm.csv
a100-pcie-40gb neusight_gemm.csv
v100-pcie-32gb neusight_gemm_v100.csv
a100-sxm4-40gb cookbook_gemm.csv
v100-sxm2-32gb cookbook_gemm.csv
mi250x cookbook_gemm.csv
a100-pcie-80gb attention_fused.csv
h200-sxm-141gb attention_fused.csv"
files=$(echo "$prebuilt" | awk '!seen[$2]++ { print $2 }')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$measured" ]; then
    command -v xz >/dev/null || { echo "build-prebuilt: xz is not installed (apt-get install xz-utils)" >&2; exit 1; }
    measured=$tmp/sources
    mkdir "$measured"
    for f in $files; do
        src=$here/db/sources/$f.xz
        [ -r "$src" ] || { echo "build-prebuilt: $src is missing" >&2; exit 1; }
        xz -dc "$src" >"$measured/$f"
    done
    # the vendored files are checked against the checksums taken when they were copied
    (cd "$measured" && awk -v want="$files" 'BEGIN { split(want, w); for (i in w) need[w[i]] = 1 }
        $2 in need' "$here/db/sources/SHA256SUMS" | sha256sum --quiet -c -) ||
        { echo "build-prebuilt: db/sources/ does not match db/sources/SHA256SUMS" >&2; exit 1; }
fi
for f in $files; do
    [ -r "$measured/$f" ] || { echo "build-prebuilt: $measured/$f is missing" >&2; exit 1; }
done

# 2026-01-01T00:00:00Z unless the caller pins another time
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1767225600}
# the shipped specs only, so a local spec directory cannot change the snapshot
unset TILECAST_SPECS_PATH
export TILECAST_DATA_DIR=$here

while read -r gpu file; do
    (cd "$measured" && "$tc" db import --format csv --gpu "$gpu" "$file" --into "$tmp/$gpu.db") >"$tmp/log"
    sed "s|$tmp/||" "$tmp/log"
    # fit once here, so a predictor opening the file read-only never refits
    # (GEMM rows only: the attention rows' scale is a median the predictor
    # takes when it reads them)
    [ "$file" = attention_fused.csv ] || "$tc" db calibrate "$tmp/$gpu.db" >/dev/null
    "$tc" db compact "$tmp/$gpu.db" >/dev/null
    "$tc" db check "$tmp/$gpu.db" >/dev/null
    mv "$tmp/$gpu.db" "$out/$gpu.db"
done <<<"$prebuilt"

for f in "$out"/*.db; do
    printf '%-22s %9d bytes\n' "$(basename "$f")" "$(stat -c %s "$f")"
done
