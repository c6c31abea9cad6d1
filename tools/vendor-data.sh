#!/bin/bash
# Copies the public measurements the project uses from a folder of
# measured-data CSVs (the development set's layout: one CSV per source and
# its README) into db/sources/, xz-compressed, and records the checksum of
# every uncompressed file in db/sources/SHA256SUMS.
#
#   tools/vendor-data.sh MEASURED_DIR
#
# Run it when new public data arrives, then rebuild (the build decompresses
# db/sources/ into BUILD/db/sources/), run tools/build-prebuilt.sh and the
# test suite, and commit db/sources/ with the measurements' provenance in
# db/sources/README.md. Nothing at build, test or run time reads
# MEASURED_DIR: the project works from db/sources/ alone.
set -euo pipefail

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
if [ $# -ne 1 ]; then
    usage >&2
    exit 1
fi
measured=$1
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/db/sources
command -v xz >/dev/null || { echo "vendor-data: xz is not installed (apt-get install xz-utils)" >&2; exit 1; }

# What the tests, the prebuilt databases and README's accuracy tables read.
# mamf_ceilings.csv is left out: nothing uses it, and its CC BY-SA terms
# would differ from every other file here.
files=(
    vidur_gemm.csv neusight_gemm.csv neusight_gemm_v100.csv cookbook_gemm.csv
    rocblas_tensile_efficiency.csv neusight_elementwise.csv attention_fused.csv
    e2e_serving.csv e2e_models.csv
)
for f in "${files[@]}"; do
    [ -r "$measured/$f" ] || { echo "vendor-data: $measured/$f is missing" >&2; exit 1; }
done
[ -r "$measured/README.md" ] || { echo "vendor-data: $measured/README.md is missing" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "${files[@]}"; do
    # one thread and fixed settings: the same CSV gives the same .xz
    xz -9e -T1 -c "$measured/$f" >"$tmp/$f.xz"
    (cd "$measured" && sha256sum "$f") >>"$tmp/SHA256SUMS"
    printf '%-32s %10d bytes -> %9d bytes\n' "$f" "$(stat -c %s "$measured/$f")" "$(stat -c %s "$tmp/$f.xz")"
done
cp "$measured/README.md" "$tmp/measured-README.md"
mv "$tmp"/*.xz "$tmp/SHA256SUMS" "$tmp/measured-README.md" "$out/"
echo "vendor-data: ${#files[@]} files in $out (checksums in SHA256SUMS)"
