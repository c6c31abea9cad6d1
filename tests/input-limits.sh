#!/bin/bash
# Bounds on what tilecast reads: dimensions a sweep derives (b.s, 3h/t, the
# batch of attention's GEMMs) past the 2^40 of a dimension are refused with
# the set's place and the values, never formed (a signed overflow under
# UBSan before); and every reader of a file holds to its size cap
# (common/input.h), so that an endless input (/dev/zero, a pipe with no
# newline) or an oversized file ends in an error naming the file and the
# limit, with exit 2, instead of gigabytes of memory or "malformed YAML".
# Each command runs under a timeout and, where the build allows it, a 1 GiB
# address-space limit, so that a regression fails here at once.
set -u
: "${TILECAST_BIN:?TILECAST_BIN is not set}" "${TILECAST_SOURCE_ROOT:?TILECAST_SOURCE_ROOT is not set}"
. "$(dirname "$0")/lib.sh"
A=a100-sxm4-80gb
MODELS=$TILECAST_SOURCE_ROOT/predictor/models
cd "$TMP" || exit 1

# An ASan build reserves terabytes of address space for its shadow memory
# and cannot start under ulimit -v: there ASan's own limit on the resident
# size bounds a run.
if (ulimit -v 1048576 && "$TC" --version) >/dev/null 2>&1; then
    vlimit=1048576
else
    vlimit=unlimited
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=2048
fi

# bounded EXPECTED_RC CMD...: run, under the time and memory bounds
bounded() {
    local want=$1
    shift
    run "$want" bash -c 'ulimit -v "$0" && exec timeout 60 "$@"' "$vlimit" "$@"
}

# --- dimensions a sweep derives -----------------------------------------------
P40=1099511627776 # 2^40, the largest dimension
sweep() {         # sweep FILE SET-LINES...: a sweep of one set
    local f=$1
    shift
    { echo 'dtypes: [fp32]'; echo 'sets:'; printf '    %s\n' "$@" | sed '1s/^    /  - /'; } >"$f"
}
# b.s = 2^80: the qkv GEMM's m
sweep bs.yaml 'kind: transformer' "h: $P40" 'a: 1' "s: $P40" "b: $P40" 'v: 1'
bounded 2 "$TC" collect --backend cpu --sweep bs.yaml --dry-run
has err "bs.yaml:3:5:"
has err "m = b.s is more than 2^63, over the 2^40 limit"
has err "b = $P40"
# 3h = 3.2^40: within int64, over the limit
sweep qkv.yaml 'kind: transformer' "h: $P40" 'a: 1' 's: 1' 'ops: [qkv]'
bounded 2 "$TC" collect --backend cpu --sweep qkv.yaml --dry-run
has err "qkv.yaml:3:5:"
has err "n = 3h/t is 3298534883328"
# the default ffn of 4h, in the MLP GEMMs
sweep ffn.yaml 'kind: transformer' "h: $((P40 / 2))" 'a: 1' 's: 1' 'ops: [mlp_up]'
bounded 2 "$TC" collect --backend cpu --sweep ffn.yaml --dry-run
has err "mlp_up GEMM's n = ffn/t is 2199023255552"
# b.a, the scores' batch, with h/a and t dividing: t divides b.a without the
# product being formed
sweep ba.yaml 'kind: transformer' "h: $P40" "a: $P40" 's: 1' "b: $P40" 't: 2' 'ops: [scores]'
bounded 2 "$TC" collect --backend cpu --sweep ba.yaml --dry-run
has err "scores GEMM's batch = b.a/t is more than 2^63"
# the same test within the limit: t = 4 divides b.a = 4 but neither b nor a
sweep ok.yaml 'kind: transformer' 'h: 4096' 'a: 2' 's: 2048' 'b: 2' 't: 4' 'ops: [scores, qkv]'
bounded 0 "$TC" collect --backend cpu --sweep ok.yaml --dry-run
has out "shapes: 2 in the sweep"
# attention: each dimension as the database reads it back, and batch.heads
sweep at.yaml 'kind: attention' 'batch: 2147483648' 'heads: 1' 'seq_q: 1' 'head_dim: 64'
bounded 2 "$TC" collect --backend cpu --sweep at.yaml --dry-run
has err "at.yaml:3:5: batch = 2147483648 is over the 2^31 - 1 limit"
sweep bh.yaml 'kind: attention' 'batch: 2147483647' 'heads: 1048576' 'seq_q: 1' 'head_dim: 64'
bounded 2 "$TC" collect --backend cpu --sweep bh.yaml --dry-run
has err "batch.heads = 2251799812636672"

# a model's sizes: each key has its range, their products are checked too
printf 'hidden: 1048576\nheads: 1\nseq: 16777216\nmicro_batch: 1048576\ndtype: bf16\n' >tokens.yaml
bounded 2 "$TC" predict model --gpu $A --config tokens.yaml --ignore-memory
has err "micro_batch.seq = 17592186044416 tokens (micro_batch 1048576, seq 16777216) is over the 2^40 limit"
# 2^40 tokens 2^20 wide: 2.25 x 2^63 bytes through a norm in training (three passes), once
# converted to an int64_t (UBSan)
printf 'hidden: 1048576\nheads: 1\nseq: 1048576\nmicro_batch: 1048576\ndtype: bf16\n' >bytes.yaml
bounded 2 "$TC" predict model --gpu $A --config bytes.yaml --ignore-memory
has err "layernorm1 moves 2.08e+19 bytes, more than 2^62"

# --- whole-file readers: sweeps, model configs, specs, the kernel catalogue ----
bounded 2 "$TC" collect --backend cpu --sweep /dev/zero --dry-run
has err "/dev/zero: more than 16 MiB read, over the limit of a sweep spec"
# a valid sweep over the cap (an explicit list of 1.2 million shapes) is
# refused for its size, not as malformed YAML
{
    echo 'dtypes: [fp32]'
    echo 'sets:'
    echo '  - shapes:'
    awk 'BEGIN { for (i = 1; i <= 1200000; i++) printf "      - [%d, 64, 64]\n", i }'
} >big.yaml
bounded 2 "$TC" collect --backend cpu --sweep big.yaml --dry-run
has err "big.yaml: the file is $(stat -c %s big.yaml) bytes"
has err "over the 16 MiB limit of a sweep spec"
grep -q malformed "$TMP/err" && fail "a valid sweep over the cap was called malformed"
head -n 1000 big.yaml >small.yaml
bounded 0 "$TC" collect --backend cpu --sweep small.yaml --dry-run
has out "shapes: 997 in the sweep"

bounded 2 "$TC" predict model --gpu $A --config /dev/zero
has err "/dev/zero: more than 1 MiB read, over the limit of a model config"
cp "$MODELS/llama-2-7b.yaml" model.yaml
truncate -s 2M model.yaml
bounded 2 "$TC" predict model --gpu $A --config model.yaml
has err "model.yaml: the file is 2097152 bytes (2.0 MiB), over the 1 MiB limit of a model config"

cp "$TILECAST_SOURCE_ROOT/gpu_specs/$A.yaml" spec.yaml
truncate -s 2M spec.yaml
bounded 2 "$TC" specs check spec.yaml
has err "spec.yaml: the file is 2097152 bytes (2.0 MiB), over the 1 MiB limit of a GPU spec"

# the kernel catalogue, in a data folder of its own
mkdir -p data/gpu_specs
cp -r "$TILECAST_SOURCE_ROOT/gpu_specs/kernels" "$TILECAST_SOURCE_ROOT"/gpu_specs/*.yaml data/gpu_specs/
truncate -s 2M data/gpu_specs/kernels/ampere.yaml
TILECAST_DATA_DIR=$TMP/data bounded 2 "$TC" predict gemm --gpu $A --analytical 4096 4096 4096
has err "ampere.yaml: the file is 2097152 bytes (2.0 MiB), over the 1 MiB limit of a kernel catalogue file"

# --- streaming readers: imports (a line, a record, the whole source) ---------
for fmt in cookbook mamf; do
    bounded 2 "$TC" db import --format $fmt --gpu $A /dev/zero --into z.db
    has err "/dev/zero:1: a line of more than 16 MiB, over the limit of an import log line"
    [ -e z.db ] && fail "db import --format $fmt /dev/zero created z.db"
done
# a CSV with no newline, through a pipe
bounded 2 bash -c "tr '\\0' a </dev/zero | \"\$0\" db import --format csv /dev/stdin --into z.db" "$TC"
has err "/dev/stdin:1: a record of more than 1 MiB, over the limit of a CSV record"
[ -e z.db ] && fail "db import of an endless CSV created z.db"
# an import source over its total cap, known by its size before reading
H='gpu,dtype,op,batch,m,n,k,layout,time_us,tflops,timing,source'
printf '%s\n%s,fp16,mm,1,4096,4096,4096,NN,600,,event-median,test\n' "$H" $A >huge.csv
truncate -s 4097M huge.csv
bounded 2 "$TC" db import --format csv huge.csv --into z.db
has err "huge.csv: the file is 4296015872 bytes (4097.0 MiB), over the 4096 MiB limit of an import source"
[ -e z.db ] && fail "db import of a source over the cap created z.db"
printf 'backend,data_type,attn_mask\n' >huge-cf.csv
truncate -s 4097M huge-cf.csv
bounded 2 "$TC" db import --format cudnn-frontend --gpu $A huge-cf.csv --into z.db
has err "huge-cf.csv: the file is 4296015872 bytes (4097.0 MiB), over the 4096 MiB limit of an import source"
[ -e z.db ] && fail "db import --format cudnn-frontend of a source over the cap created z.db"

# --- CSV batch inputs: no total cap, a record cap -------------------------------
bounded 2 bash -c "tr '\\0' 1 </dev/zero | \"\$0\" predict gemm --gpu $A --analytical --input -" "$TC"
has err "<stdin>:1: a record of more than 1 MiB, over the limit of a CSV record"
bounded 2 bash -c "tr '\\0' 1 </dev/zero | \"\$0\" eval --gpu $A --analytical --input -" "$TC"
has err "<stdin>:1: a record of more than 1 MiB"
# a batch larger than the cap of any whole-file reader still streams
awk 'BEGIN { print "m,n,k"; for (i = 0; i < 1200000; i++) print "4096,4096,4096" }' >rows.csv
bounded 0 bash -c "\"\$0\" predict gemm --gpu $A --analytical --input rows.csv | wc -l" "$TC"
has out "1200001"

finish input-limits
