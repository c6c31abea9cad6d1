#!/bin/bash
# A real collection on an NVIDIA GPU with the cuda backend (cuBLASLt): the
# quick sweep end to end. Skips (77) without an NVIDIA device, without
# libcuda, or when tilecast was built without the cuda backend.
set -u
: "${TILECAST_BIN:?}" "${TILECAST_SOURCE_ROOT:?}"
# Without a device: the attention softmax (CUDA C compiled at run time by
# NVRTC) must build for the architectures the collector meets. A build
# without the cuda backend, or a machine without the CUDA runtime libraries
# the module links (libcublasLt, libcudart, libnvrtc), skips.
probe=$("$TILECAST_BIN" collect --backend cuda --compile-kernels sm_80 2>&1)
rc=$?
case $probe in
*"(built in)"*) echo "built without the cuda backend: skip"; exit 77 ;;
*"cannot open shared object file"*) echo "CUDA runtime libraries missing: skip ($probe)"; exit 77 ;;
esac
[ "$rc" -eq 0 ] || { echo "FAIL: softmax kernel for sm_80: $probe"; exit 1; }
"$TILECAST_BIN" collect --backend cuda --compile-kernels sm_90 ||
    { echo "FAIL: softmax kernel for sm_90"; exit 1; }
ls /dev/nvidia[0-9]* > /dev/null 2>&1 || { echo "no NVIDIA device: skip"; exit 77; }
{ ldconfig -p 2> /dev/null | grep -q 'libcuda\.so\.1'; } || [ -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ] ||
    { echo "no libcuda.so.1: skip"; exit 77; }
command -v sqlite3 > /dev/null || { echo "sqlite3 not installed: skip"; exit 77; }
sweep="$TILECAST_SOURCE_ROOT/collector/sweeps/quick.yaml"
if "$TILECAST_BIN" collect --backend cuda --sweep "$sweep" --db /dev/null/x 2>&1 |
        grep -q "built without the cuda backend"; then
    echo "built without the cuda backend: skip"; exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
db="$tmp/quick.db"

total=$("$TILECAST_BIN" collect --backend cuda --sweep "$sweep" --dry-run |
        sed -n 's/^shapes: \([0-9]*\) in the sweep.*/\1/p')
"$TILECAST_BIN" collect --backend cuda --sweep "$sweep" --db "$db" --progress-interval 10 ||
    fail "collect failed"
"$TILECAST_BIN" db check "$db" || fail "db check"
q() { sqlite3 "$db" "$1"; }
rows=$(q "SELECT (SELECT count(*) FROM gemm) + (SELECT count(*) FROM attention)")
[ "$rows" -eq "$total" ] || fail "$rows rows for $total shapes"
q "SELECT status, message FROM gemm WHERE status != 'ok'
   UNION ALL SELECT status, message FROM attention WHERE status != 'ok'" | head
[ "$(q "SELECT count(*) FROM gemm WHERE status != 'ok'")" -eq 0 ] || fail "GEMMs failed"
[ "$(q "SELECT count(*) FROM attention WHERE status != 'ok'")" -eq 0 ] || fail "attention failed"
# plausible numbers: positive, no faster than 5 PFLOP/s, min <= median, algorithm recorded
bad=$(q "SELECT count(*) FROM gemm WHERE time_us <= 0 OR min_us > time_us
         OR 2.0 * m * n * k * batch / time_us / 1e6 > 5000 OR algo = '' OR reps < 5")
[ "$bad" -eq 0 ] || fail "$bad implausible GEMM rows"
tiles=$(q "SELECT count(*) FROM gemm WHERE tile_m > 0 AND tile_n > 0")
[ "$tiles" -gt 0 ] || fail "no tile recorded from the cuBLASLt heuristic"
parts=$(q "SELECT count(*) FROM attention WHERE scores_us > 0 AND softmax_us > 0 AND values_us > 0
           AND scores_us + softmax_us + values_us <= time_us * 1.05")
[ "$parts" -eq "$(q "SELECT count(*) FROM attention")" ] || fail "attention parts missing or inconsistent"
uuid=$(q "SELECT device_uuid FROM run")
case $uuid in GPU-*) ;; *) fail "device UUID '$uuid'" ;; esac
q "SELECT m, n, k, layout, dtype, round(time_us, 1), round(2.0*m*n*k*batch/time_us/1e6, 1) AS tflops,
          tile_m, tile_n, stages, split_k, algo FROM gemm ORDER BY tflops DESC LIMIT 5"
q "SELECT device_name, driver_version, runtime_version, blas_version, clocks_json FROM run"
# re-running measures nothing
"$TILECAST_BIN" collect --backend cuda --sweep "$sweep" --db "$db" --quiet > "$tmp/out" ||
    fail "re-run"
grep -q "$total already stored, 0 measured" "$tmp/out" || fail "re-run measured again"
echo "ok: $rows rows on $(q "SELECT device_name FROM run")"
