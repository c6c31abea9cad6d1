#!/bin/bash
# tools/gpu-first-run.sh --dry-run, as on a machine without a GPU: the cuda
# module of this build loads, its kernels compile for sm_90, its algorithm
# records decode, and the plan with the predicted collection time is
# printed and logged into $OUT. Skips (77) when this build has no cuda
# backend. (--no-build: the test runs inside the build it would update.)
set -u
: "${TILECAST_BIN:?}" "${TILECAST_SOURCE_ROOT:?}"
build=$(cd "$(dirname "$TILECAST_BIN")/.." && pwd)
script="$TILECAST_SOURCE_ROOT/tools/gpu-first-run.sh"
[ -f "$build/collector/tilecast-cuda.so" ] || { echo "built without the cuda backend: skip"; exit 77; }
probe=$("$TILECAST_BIN" collect --backend cuda --compile-kernels sm_90 2>&1)
case $probe in
*"cannot open shared object file"*) echo "CUDA runtime libraries missing: skip ($probe)"; exit 77 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$(OUT="$tmp/out" "$script" --dry-run --no-build --build-dir "$build" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || fail "dry run: exit $rc"
for want in "kernels: " "-byte binary for sm_90" "tile_id 17 read as 128x64" \
            "meson test -C $build --suite gpu" "--sweep quick" "--sweep paper --shard 0/8" \
            "shapes: 64 in the sweep" "in shard 0/8" \
            "predicted (model, not measured) on h100-sxm5-80gb" "dry run ok"; do
    case $out in *"$want"*) ;; *) fail "the dry run does not say '$want'" ;; esac
done
# the log holds the same, in the output folder
[ -s "$tmp/out/first-run.log" ] || fail "no log in \$OUT"
grep -q "predicted (model, not measured) on h100-sxm5-80gb" "$tmp/out/first-run.log" ||
    fail "the log lacks the estimate"
[ ! -e "$tmp/out/first-run.db" ] || fail "the dry run created a database"
# another GPU and subset
out=$(OUT="$tmp/out2" "$script" --dry-run --no-build --build-dir "$build" --gpu a100-sxm4-80gb \
      --paper-shards 20 2>&1) || fail "--gpu a100-sxm4-80gb --paper-shards 20: $out"
case $out in *"in shard 0/20"*"on a100-sxm4-80gb"*) ;; *) fail "--paper-shards 20: $out" ;; esac
# an unknown spec fails the estimate step, and the dry run says so
out=$(OUT="$tmp/out3" "$script" --dry-run --no-build --build-dir "$build" --gpu no-such-gpu 2>&1)
[ $? -eq 1 ] || fail "--gpu no-such-gpu: not exit 1"
case $out in *"dry run FAILED: quick sweep estimate"*) ;; *) fail "--gpu no-such-gpu: $out" ;; esac
# usage errors
"$script" --paper-shards 0 > /dev/null 2>&1; [ $? -eq 2 ] || fail "--paper-shards 0: not exit 2"
"$script" --bogus > /dev/null 2>&1; [ $? -eq 2 ] || fail "--bogus: not exit 2"
"$script" --help | grep -q -- "--dry-run" || fail "--help"
# without a GPU the real run refuses at once
if ! nvidia-smi > /dev/null 2>&1; then
    out=$(OUT="$tmp/out4" "$script" --no-build --build-dir "$build" 2>&1)
    [ $? -eq 1 ] || fail "the run without a GPU: not exit 1"
    case $out in *"no NVIDIA GPU answers nvidia-smi"*) ;; *) fail "the run without a GPU: $out" ;; esac
fi
echo "ok"
