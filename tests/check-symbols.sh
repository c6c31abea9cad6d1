#!/usr/bin/env bash
# Every symbol libtilecast exports carries the tc_ prefix and the library's
# one version node (predictor/libtilecast.map), and the API is there.
set -eu
lib=$1
node=TILECAST_1
# names as nm prints them with versions: tc_version@@TILECAST_1
vsyms=$(nm -D --defined-only --with-symbol-versions "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}')
[ -n "$vsyms" ] || { echo "no exported symbols in $lib"; exit 1; }
syms=$(printf '%s\n' "$vsyms" | sed 's/@.*//')
bad=$(printf '%s\n' "$syms" | grep -v -E '^(tc_|_init$|_fini$)' || true)
if [ -n "$bad" ]; then
    echo "symbols without the tc_ prefix exported from $lib:"
    printf '  %s\n' $bad
    exit 1
fi
unversioned=$(printf '%s\n' "$vsyms" | grep -E '^tc_' | grep -v -E "@@?$node\$" || true)
if [ -n "$unversioned" ]; then
    echo "symbols outside the version node $node in $lib:"
    printf '  %s\n' $unversioned
    exit 1
fi
for s in tc_version tc_version_api tc_abi_sizeof tc_strerror tc_specs_load tc_db_open \
    tc_predict_gemm tc_model_config_set; do
    printf '%s\n' "$syms" | grep -qx "$s" || { echo "missing export: $s"; exit 1; }
done
echo "$(printf '%s\n' "$syms" | wc -l) exported symbols, all prefixed tc_, all in $node"
