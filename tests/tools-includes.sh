#!/usr/bin/env bash
# tools/ stands on the public headers and the base layer alone: every
# `#include "..."` of the command's sources names config.h, a header of
# tools/ itself, a public header (tilecast/*.h: predictor/include,
# collector/include) or a header of the base layer (common/). An internal
# header of db/, predictor/ or collector/ is an arrow back down the layers
# and fails here, naming the file and line.
set -euo pipefail
src=${TILECAST_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src"

allowed() {
    case $1 in
    config.h | tilecast/*.h) return 0 ;;
    */*) return 1 ;;
    esac
    [ -f "tools/$1" ] || [ -f "common/$1" ]
}

bad=0
while IFS=: read -r file line text; do
    name=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<<"$text")
    [ -n "$name" ] || continue
    if ! allowed "$name"; then
        echo "FAIL: $file:$line: includes \"$name\", neither a public header nor the base layer's" >&2
        bad=1
    fi
done < <(grep -nH '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' tools/*.c tools/*.h)
[ "$bad" = 0 ] && echo "tools/ includes only the public headers and the base layer"
exit "$bad"
