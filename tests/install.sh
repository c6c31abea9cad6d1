#!/bin/bash
# What `meson install` gives a user, in a throwaway prefix: this source tree
# configured, built and installed there (no tests, no GPU backends), then
# used from another directory as the README's tour does:
#   - the installed command finds its data (specs, prebuilt databases,
#     models and sweeps by name, the example shapes) in PREFIX/share;
#   - `import tilecast` works with the installed package alone (no pip);
#   - a C program built through pkg-config links and runs with no
#     LD_LIBRARY_PATH (an rpath in the .pc file outside /usr and /usr/local;
#     root installs there run ldconfig).
set -u
: "${TILECAST_SOURCE_ROOT:?}"
command -v meson >/dev/null && command -v ninja >/dev/null || { echo "no meson/ninja: skip"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tilecast-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
prefix=$tmp/prefix
unset TILECAST_DATA_DIR TILECAST_SPECS_PATH TILECAST_MODULE_DIR TILECAST_LIBRARY PYTHONPATH

meson setup "$tmp/build" "$TILECAST_SOURCE_ROOT" --prefix "$prefix" -Dtests=false \
    -Dcuda=disabled -Dhip=disabled >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; exit 1; }
ninja -C "$tmp/build" >"$tmp/ninja.log" 2>&1 || { tail -30 "$tmp/ninja.log"; exit 1; }
meson install -C "$tmp/build" >"$tmp/install.log" 2>&1 || { tail -30 "$tmp/install.log"; exit 1; }

# The clone is the whole project: nothing tracked reads a folder beside it.
if command -v git >/dev/null && git -C "$TILECAST_SOURCE_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    hits=$(git -C "$TILECAST_SOURCE_ROOT" grep -n -e '\.\./shared' -e 'TILECAST_SHARED' -- . \
           ':!tests/install.sh' 2>/dev/null)
    [ -z "$hits" ] || fail "tracked files name a folder outside the clone: $hits"
fi

tc=$prefix/bin/tilecast
share=$prefix/share/tilecast
for f in gpu_specs/h100-sxm5-80gb.yaml db/prebuilt/h100-sxm5-80gb.db predictor/models/llama-2-7b.yaml \
         collector/sweeps/quick.yaml predictor/examples/shapes.csv slurm/collect.sbatch; do
    [ -f "$share/$f" ] || fail "not installed: share/tilecast/$f"
done
[ -f "$prefix/share/bash-completion/completions/tilecast" ] || fail "bash completion not installed"
if command -v help2man >/dev/null 2>&1; then
    for page in tilecast tilecast-predict tilecast-db; do
        [ -f "$prefix/share/man/man1/$page.1" ] || fail "man page $page.1 not installed"
    done
fi
libdir=$(dirname "$(find "$prefix" -name 'libtilecast.so.1' | head -1)")
[ -f "$libdir/libtilecast.so.1" ] || fail "libtilecast.so.1 not installed"

mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere" || exit 1
out=$("$tc" predict gemm --gpu h100-sxm5-80gb --dtype fp16 8192 10944 4096 2>&1) || fail "predict gemm: $out"
case $out in *"prediction (calibrated)"*) ;; *) fail "installed predict gemm does not use the prebuilt db: $out" ;; esac
out=$("$tc" predict model --gpu a100-sxm4-80gb --config llama-2-7b --tp 2 2>&1) || fail "--config by name: $out"
out=$("$tc" advise --gpu a100-sxm4-80gb --config paper-gpt --top 3 2>&1) || fail "advise --config by name: $out"
out=$("$tc" collect --backend cpu --sweep quick --dry-run 2>&1) || fail "--sweep by name: $out"
case $out in *"shapes: 64 in the sweep"*) ;; *) fail "--sweep quick: $out" ;; esac
out=$("$tc" predict model --gpu a100-sxm4-80gb --config no-such-model 2>&1)
[ $? -eq 2 ] || fail "an unknown config name is not exit 2"
case $out in *"shipped: "*"llama-2-7b"*) ;; *) fail "unknown config name: $out" ;; esac
out=$("$tc" predict gemm --gpu h100-sxm5-80gb --input "$share/predictor/examples/shapes.csv" 2>&1) ||
    fail "the example shapes: $out"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 7 ] || fail "the example shapes give $(printf '%s\n' "$out" | wc -l) lines"

# Python: the installed package and nothing else
pydir=$(dirname "$(find "$prefix" -path '*/tilecast/_installed.py' | head -1)")
[ -f "$pydir/__init__.py" ] || fail "the Python package is not installed"
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
out=$(PYTHONPATH=$(dirname "$pydir") PYTHONDONTWRITEBYTECODE=1 "$py" -c '
import tilecast, sys
assert tilecast.__file__.startswith(sys.argv[1]), tilecast.__file__
r = tilecast.predict_gemm("h100-sxm5-80gb", 8192, 10944, 4096)
print(r["source"], r["time_us"])
m = tilecast.predict_model("llama-2-7b", "a100-sxm4-80gb")
print("model", m["tokens_per_s"] > 0)' "$pydir" 2>&1) || fail "python: $out"
case $out in *"model True"*) ;; *) fail "python: $out" ;; esac

# C through pkg-config
cat >"$tmp/hello.c" <<'C'
#include <stdio.h>
#include <tilecast/tilecast.h>
int main(void)
{
    printf("tilecast %s\n", tc_version());
    return 0;
}
C
if command -v pkg-config >/dev/null && command -v cc >/dev/null; then
    export PKG_CONFIG_PATH=$libdir/pkgconfig
    # shellcheck disable=SC2046
    cc -o "$tmp/hello" "$tmp/hello.c" $(pkg-config --cflags --libs tilecast) || fail "pkg-config build"
    # no LD_LIBRARY_PATH, no ldconfig: the .pc file's rpath finds the library
    out=$("$tmp/hello" 2>&1) || fail "the pkg-config program does not run by itself: $out"
    case $out in "tilecast "[0-9]*) ;; *) fail "the pkg-config program printed: $out" ;; esac
fi

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed" >&2; exit 1; }
echo "install: all checks passed"
