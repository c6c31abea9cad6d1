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
# and cannot start under ulimit -v: there the timeout alone bounds a run.
if (ulimit -v 1048576 && "$TC" --version) >/dev/null 2>&1; then
    vlimit=1048576
else
    vlimit=unlimited
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
# 2^40 tokens 2^20 wide: 1.5 x 2^63 bytes through a norm in training, once
# converted to an int64_t (UBSan)
printf 'hidden: 1048576\nheads: 1\nseq: 1048576\nmicro_batch: 1048576\ndtype: bf16\n' >bytes.yaml
bounded 2 "$TC" predict model --gpu $A --config bytes.yaml --ignore-memory
has err "layernorm1 moves 1.38e+19 bytes, more than 2^62"

finish input-limits
