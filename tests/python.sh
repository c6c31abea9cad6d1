#!/usr/bin/env bash
# Runs the Python binding's unittests (python/tests) against the libtilecast
# of the build tree that holds $TILECAST_BIN, with Debian's python3.
set -euo pipefail
: "${TILECAST_BIN:?TILECAST_BIN must name the built tilecast}"
src=${TILECAST_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
build=$(cd "$(dirname "$TILECAST_BIN")/.." && pwd)
lib=$build/predictor/libtilecast.so
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
[ -e "$lib" ] || { echo "no $lib"; exit 1; }

export TILECAST_LIBRARY=$lib
export PYTHONPATH=$src/python
export PYTHONDONTWRITEBYTECODE=1

# A sanitizer build's library cannot load into a plain python unless the
# sanitizer runtime comes first: preload clang's shared ASan runtime (it
# carries UBSan too) and leave leak checking to the C suites, since the
# interpreter itself keeps memory until exit.
undefined=$(nm -D --undefined-only "$lib" 2>/dev/null || true)
if [[ $undefined == *__asan_* ]]; then
    rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null || true)
    if [ -z "$rt" ] || [ ! -e "$rt" ]; then
        echo "SKIP: ASan build but no shared ASan runtime to preload"
        exit 77
    fi
    export LD_PRELOAD=$rt
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
fi

"$py" -m unittest discover -s "$src/python/tests" -v
# The benchmark runs too, so it cannot rot; its figure is printed, not judged.
"$py" "$src/python/bench.py" --rows 20000 --repeat 1
