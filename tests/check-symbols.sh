#!/usr/bin/env bash
# Every symbol libtilecast exports carries the tc_ prefix, and the API is there.
set -eu
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}')
[ -n "$syms" ] || { echo "no exported symbols in $lib"; exit 1; }
bad=$(printf '%s\n' "$syms" | grep -v -E '^(tc_|_init$|_fini$)' || true)
if [ -n "$bad" ]; then
    echo "symbols without the tc_ prefix exported from $lib:"
    printf '  %s\n' $bad
    exit 1
fi
for s in tc_version tc_strerror tc_specs_load tc_db_open tc_predict_gemm; do
    printf '%s\n' "$syms" | grep -qx "$s" || { echo "missing export: $s"; exit 1; }
done
echo "$(printf '%s\n' "$syms" | wc -l) exported symbols, all prefixed tc_"
