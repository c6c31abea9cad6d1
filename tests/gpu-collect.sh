#!/bin/bash
# A real collection on an NVIDIA GPU with the cuda backend (cuBLASLt): the
# quick sweep end to end, the tile and cluster records in the row-major
# view, short kernels timed in groups, the out-of-memory retry, and cuDNN's
# fused attention (forward and backward, GQA, causal) with its engine
# record, when the build and the machine have cuDNN. Skips
# (77) without an NVIDIA device, without libcuda, or when tilecast was
# built without the cuda backend.
set -u
: "${TILECAST_BIN:?}" "${TILECAST_SOURCE_ROOT:?}"
# Without a device: the backend's kernels (CUDA C compiled at run time by
# NVRTC) must build for the architectures the collector meets. A build
# without the cuda backend, or a machine without the CUDA runtime libraries
# the module links (libcublasLt, libcudart, libnvrtc), skips.
probe=$("$TILECAST_BIN" collect --backend cuda --compile-kernels sm_80 2>&1)
rc=$?
case $probe in
*"(built in)"*) echo "built without the cuda backend: skip"; exit 77 ;;
*"cannot open shared object file"*) echo "CUDA runtime libraries missing: skip ($probe)"; exit 77 ;;
esac
[ "$rc" -eq 0 ] || { echo "FAIL: kernels for sm_80: $probe"; exit 1; }
"$TILECAST_BIN" collect --backend cuda --compile-kernels sm_90 ||
    { echo "FAIL: kernels for sm_90"; exit 1; }
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
# Tiles and clusters in the row-major view: the library's tile M x N (the
# id in algo, column-major) is stored as tile_m = N, tile_n = M.
ids="CAST(substr(algo, instr(algo, 'tile_id ') + 8) AS INTEGER)"
cids="CAST(substr(algo, instr(algo, 'cluster_id ') + 11) AS INTEGER)"
q "SELECT DISTINCT $ids AS tile_id, tile_m, tile_n, $cids AS cluster_id, cluster_m, cluster_n
   FROM gemm WHERE status = 'ok' ORDER BY 1 LIMIT 20"
wrong=$(q "SELECT count(*) FROM gemm WHERE status = 'ok' AND NOT CASE $ids
             WHEN 15 THEN tile_m = 64 AND tile_n = 64 WHEN 17 THEN tile_m = 128 AND tile_n = 64
             WHEN 18 THEN tile_m = 64 AND tile_n = 128 WHEN 19 THEN tile_m = 256 AND tile_n = 64
             WHEN 20 THEN tile_m = 128 AND tile_n = 128 WHEN 21 THEN tile_m = 64 AND tile_n = 256
             WHEN 23 THEN tile_m = 256 AND tile_n = 128 WHEN 24 THEN tile_m = 128 AND tile_n = 256
             ELSE 1 END")
[ "$wrong" -eq 0 ] || fail "$wrong rows with a tile not in the row-major view"
wrong=$(q "SELECT count(*) FROM gemm WHERE status = 'ok' AND NOT CASE $cids
             WHEN 3 THEN cluster_m = 1 AND cluster_n = 2 WHEN 5 THEN cluster_m = 2 AND cluster_n = 1
             WHEN 6 THEN cluster_m = 2 AND cluster_n = 2 ELSE 1 END")
[ "$wrong" -eq 0 ] || fail "$wrong rows with a cluster not in the row-major view"
# Hopper and newer run thread-block clusters: the 16-bit attribute is read
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -1)
if [ "${cc%%.*}" -ge 9 ] 2> /dev/null; then
    clusters=$(q "SELECT count(*) FROM gemm WHERE cluster_m > 0 AND cluster_n > 0")
    [ "$clusters" -gt 0 ] || fail "no cluster recorded on compute capability $cc"
    echo "clusters recorded on $clusters rows (compute capability $cc)"
fi
# the smallest GEMMs run in a few microseconds: timed in groups of launches
grouped=$(q "SELECT count(*) FROM gemm WHERE status = 'ok' AND message LIKE 'timed in groups of %'")
[ "$grouped" -gt 0 ] || fail "no short GEMM was timed in groups"
timing=$(q "SELECT timing FROM run")
[ "$timing" = "cudaevent-median-l2flush-read-warmup100ms-group<5us" ] ||
    fail "run timing '$timing'"
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

# Out of memory: with the buffers capped at 100 MiB, the third shape's
# 64 MiB output does not fit beside the 48 MiB A and B kept from the first
# two, but its own 66 MiB do: the retry stores it ok. The last needs 131 MiB
# on its own: oom.
cat > "$tmp/oom.yaml" <<'EOF'
name: oom-retry
dtypes: [fp32]
layouts: [NN]
sets:
  - shapes: [[4096, 64, 3072], [64, 4096, 3072], [4096, 4096, 64], [8192, 4096, 64]]
EOF
TILECAST_CUDA_BUFFER_LIMIT_MIB=100 "$TILECAST_BIN" collect --backend cuda --sweep "$tmp/oom.yaml" \
    --db "$tmp/oom.db" --quiet --warmup-ms 10 --max-time-per-shape-ms 200 || fail "oom sweep"
oq() { sqlite3 "$tmp/oom.db" "$1"; }
oq "SELECT m, n, k, status, message FROM gemm ORDER BY id"
[ "$(oq "SELECT group_concat(status, ' ') FROM (SELECT status FROM gemm ORDER BY id)")" = \
  "ok ok ok oom" ] || fail "the out-of-memory retry: statuses as above"
oq "SELECT message FROM gemm WHERE status = 'oom'" | grep -q "also after freeing every buffer" ||
    fail "the oom row does not say it was retried"

# cuDNN's fused attention (impl cudnn)
fused_impl=cudnn
if ! grep -q "cuDNN [0-9.]*: SDPA forward graph" <<< "$probe"; then
    echo "no cuDNN fused attention in this build or on this machine ($probe): fused case skipped"
else
    cat > "$tmp/fused.yaml" <<'EOF'
name: fused
dtypes: [bf16, fp16]
sets:
  - kind: attention
    impl: cudnn
    batch: 2
    heads: 16
    kv_heads: [16, 4]
    seq_q: 2048
    head_dim: 128
    causal: [false, true]
    backward: [false, true]
  - kind: attention
    batch: 2
    heads: 16
    kv_heads: [16, 4]
    seq_q: 2048
    head_dim: 128
EOF
    "$TILECAST_BIN" collect --backend cuda --sweep "$tmp/fused.yaml" --db "$tmp/fused.db" \
        --quiet --max-time-per-shape-ms 500 || fail "fused sweep"
    fq() { sqlite3 "$tmp/fused.db" "$1"; }
    fq "SELECT impl, dtype, kv_heads, causal, backward, status, round(time_us, 1),
               round(4.0 * batch * heads * seq_q * seq_kv * head_dim
                     * (CASE backward WHEN 1 THEN 2.5 ELSE 1 END) / time_us / 1e6, 1), message
        FROM attention ORDER BY id"
    fq "SELECT blas_version FROM run" | grep -q "cuDNN [0-9]" || fail "no cuDNN version in the run"
    [ "$(fq "SELECT count(*) FROM attention WHERE status = 'error'")" -eq 0 ] ||
        fail "fused attention failed (not merely unsupported)"
    # the single forward node: cuDNN 9.13.1 on, sm_80 on (H100, A100, ...)
    fwd=$(fq "SELECT count(*) FROM attention WHERE impl = '$fused_impl' AND status = 'ok'
              AND NOT causal AND NOT backward AND message LIKE 'cudnn % sdpa_fwd node: engine %'
              AND reps >= 5 AND time_us > 0")
    [ "$fwd" -eq 4 ] || fail "$fwd of 4 non-causal fused forward rows ok with the engine recorded"
    # plausible: below 2.5 PFLOP/s, and faster than the unfused path at 2048 tokens
    fast=$(fq "SELECT count(*) FROM attention f JOIN attention u
               ON u.impl = 'unfused' AND u.dtype = f.dtype AND u.kv_heads = f.kv_heads
               AND u.causal = f.causal
               WHERE f.impl = '$fused_impl' AND f.status = 'ok' AND NOT f.causal
               AND NOT f.backward AND u.status = 'ok' AND f.time_us < u.time_us
               AND 4.0 * f.batch * f.heads * f.seq_q * f.seq_kv * f.head_dim / f.time_us / 1e6
                   < 2500")
    [ "$fast" -eq 4 ] || fail "fused forward not faster than unfused (or implausibly fast): $fast of 4"
    # what the installed cuDNN cannot build is stored unsupported, saying why
    unexplained=$(fq "SELECT count(*) FROM attention WHERE status = 'unsupported'
                      AND message NOT LIKE '%cuDNN%'")
    [ "$unexplained" -eq 0 ] || fail "$unexplained unsupported fused rows without a reason"
    bwd=$(fq "SELECT count(*) FROM attention WHERE backward AND status = 'ok'
              AND message LIKE 'cudnn % sdpa_bwd node: engine %'")
    causal=$(fq "SELECT count(*) FROM attention WHERE causal AND NOT backward AND status = 'ok'
                 AND message LIKE 'cudnn % sdpa_fwd composite: engine %'")
    echo "fused attention: $fwd forward, $causal causal composite, $bwd backward rows measured"
fi
echo "ok: $rows rows on $(q "SELECT device_name FROM run")"
