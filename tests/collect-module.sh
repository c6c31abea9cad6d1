#!/bin/bash
# The GPU backends are loadable modules: the tilecast command links no GPU
# runtime, --help and --dry-run never load a module, and a missing or broken
# module is a clear runtime error (exit 3) naming the module, not a crash.
set -u
: "${TILECAST_BIN:?}" "${TILECAST_SOURCE_ROOT:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
sweep="$TILECAST_SOURCE_ROOT/collector/sweeps/quick.yaml"

if command -v readelf > /dev/null; then
    needed=$(readelf -d "$TILECAST_BIN" | grep NEEDED)
    [ -n "$needed" ] || fail "readelf shows no DT_NEEDED entries"
    if printf '%s\n' "$needed" | grep -E 'libcudart|libcublas|libnvrtc|libamdhip|libhipblaslt|libhiprtc'; then
        fail "the tilecast command links a GPU runtime"
    fi
fi

# An empty module directory: nothing that does not measure needs a module.
mkdir "$tmp/empty"
export TILECAST_MODULE_DIR="$tmp/empty"
"$TILECAST_BIN" collect --help | grep -q -- '--backend cuda|hip|cpu' || fail "collect --help"
out=$("$TILECAST_BIN" collect --backend cuda --sweep "$sweep" --dry-run) || fail "dry run: $out"
printf '%s\n' "$out" | grep -q '^shapes: 64 in the sweep' || fail "dry run output: $out"

for backend in cuda hip; do
    out=$("$TILECAST_BIN" collect --backend $backend --sweep "$sweep" --db "$tmp/x.db" 2>&1)
    rc=$?
    [ "$rc" -eq 3 ] || fail "$backend without its module: exit $rc: $out"
    [ ! -e "$tmp/x.db" ] || fail "$backend without its module created the database"
    case $out in
    *"built without the $backend backend"*) ;;
    *"the $backend backend is not available: $tmp/empty/tilecast-$backend.so: "*"-D$backend=enabled"*) ;;
    *) fail "$backend without its module: $out" ;;
    esac
done

# A broken module file: the loader's own message, exit 3.
mkdir "$tmp/broken"
printf 'not an ELF file\n' > "$tmp/broken/tilecast-cuda.so"
out=$(TILECAST_MODULE_DIR="$tmp/broken" "$TILECAST_BIN" collect --backend cuda \
      --sweep "$sweep" --db "$tmp/x.db" 2>&1)
rc=$?
[ "$rc" -eq 3 ] || fail "broken module: exit $rc: $out"
case $out in
*"built without the cuda backend"*) echo "built without the cuda backend: module checks skipped"; exit 0 ;;
*"the cuda backend is not available: $tmp/broken/tilecast-cuda.so: "*) ;;
*) fail "broken module: $out" ;;
esac

# The module of the build tree exports its ops table and tc_last_error only.
unset TILECAST_MODULE_DIR
module="$(dirname "$TILECAST_BIN")/../collector/tilecast-cuda.so"
[ -f "$module" ] || fail "no $module in the build tree"
if command -v nm > /dev/null; then
    syms=$(nm -D --defined-only "$module" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort | tr '\n' ' ')
    [ "$syms" = "tc_backend_cuda tc_last_error " ] || fail "module exports: $syms"
fi
# Loaded from the build tree, a failure inside the module reaches the user
# with the module's own message.
out=$("$TILECAST_BIN" collect --backend cuda --compile-kernels sm_1 2>&1)
rc=$?
[ "$rc" -eq 3 ] || fail "--compile-kernels sm_1: exit $rc: $out"
case $out in
*"kernels for sm_1: "*) ;;
*) fail "--compile-kernels sm_1: the module's message is lost: $out" ;;
esac
# The algorithm records go through the real cuBLASLt without a device: a
# known tile and cluster id read back at their own sizes, in the row-major
# view the database uses.
out=$("$TILECAST_BIN" collect --backend cuda --compile-kernels sm_90 2>&1) ||
    fail "--compile-kernels sm_90: $out"
case $out in
*"tile_id 17 read as 128x64, cluster_id 3 as 1x2 (row-major)"*) ;;
*"tile_id 17 read as 128x64 (row-major); no cluster attribute"*) ;;
*) fail "--compile-kernels sm_90: no algorithm record check: $out" ;;
esac
# The module finds the CUDA libraries through its own RUNPATH (the folder
# found at configure time), with the loader's cache ignored: no loader
# config file or LD_LIBRARY_PATH is needed, NVRTC's builtins included.
if command -v readelf > /dev/null; then
    rpath=$(readelf -d "$module" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
    [ -n "$rpath" ] && [ -e "${rpath%%:*}/libcublasLt.so" ] ||
        fail "the cuda module has no RUNPATH to the CUDA libraries: '$rpath'"
fi
ldso=$(readelf -l "$TILECAST_BIN" 2>/dev/null | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
if [ -x "$ldso" ]; then
    out=$(TILECAST_MODULE_DIR=$(dirname "$module") "$ldso" --inhibit-cache "$TILECAST_BIN" \
          collect --backend cuda --compile-kernels sm_80 2>&1) ||
        fail "the cuda module without the loader cache: $out"
fi
echo "ok"
