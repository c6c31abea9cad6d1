#!/bin/bash
# Integration test 'cli-compare': --gpu A,B and --gpu all on predict gemm,
# attention, layer, model and advise: one row per GPU, fastest first, the
# GPUs that cannot run the query saying why, bad lists refused.
set -u
bin=${TILECAST_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# expect CODE CMD...: runs CMD (stdout to $tmp/out), checks its exit status.
expect() {
    local want=$1
    shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        fail "exit $got (want $want): $*"
        sed 's/^/  | /' "$tmp/err" >&2
    fi
}

"$bin" specs list --csv | tail -n +2 >"$tmp/specs.csv"
n_specs=$(wc -l <"$tmp/specs.csv")
# the GPUs with an fp16 and a bf16 peak (specs list --csv columns 7 and 8;
# the others' rows say the dtype is not supported)
n_fp16=$(awk -F, '$7 != ""' "$tmp/specs.csv" | wc -l)
n_bf16=$(awk -F, '$8 != ""' "$tmp/specs.csv" | wc -l)
[ "$n_fp16" -lt "$n_specs" ] && [ "$n_bf16" -lt "$n_fp16" ] ||
    fail "the shipped specs have GPUs without fp16 (P4) and without bf16 (V100, T4, P100)"

# rows FILE KEY N_PREDICTED: a JSON array with one object per GPU of the
# list, each labelled, the predicted ones first and sorted by KEY ascending,
# the others with a note and null figures
rows() {
    python3 - "$@" <<'PY'
import json, math, sys
path, key, n_all, n_ok = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
d = json.load(open(path))
assert isinstance(d, list) and len(d) == n_all, len(d)
assert len({r["gpu"] for r in d}) == n_all, "a GPU twice"
ok = [r for r in d if r["prediction"]]
assert len(ok) == n_ok, [r["gpu"] for r in ok]
assert d[:len(ok)] == ok, "predicted rows first"
times = [r[key] for r in ok]
assert all(math.isfinite(t) and t > 0 for t in times), times
assert times == sorted(times), times
for r in d[len(ok):]:
    assert r[key] is None and r["note"], r
PY
}

expect 0 "$bin" predict gemm --gpu all --dtype fp16 --json 4096 4096 4096
rows "$tmp/out" time_us "$n_specs" "$n_fp16" || fail "predict gemm --gpu all"
# V100, T4 and P100 have no bf16: their rows say so, the others are predicted
expect 0 "$bin" predict gemm --gpu all --dtype bf16 --json 4096 4096 4096
rows "$tmp/out" time_us "$n_specs" "$n_bf16" || fail "predict gemm bf16 --gpu all"
grep -q "bf16 is not supported" "$tmp/out" || fail "the V100 rows name the dtype"
expect 0 "$bin" predict attention --gpu a100-sxm4-80gb,h100-sxm5,a100-sxm4-80gb --batch 2 \
    --heads 16 --seq 2048 --head-dim 128 --causal --json
rows "$tmp/out" time_us 2 2 || fail "predict attention --gpu A,B (a GPU named twice kept once)"
expect 0 "$bin" predict layer --gpu all --hidden 4096 --heads 32 --seq 2048 --micro-batch 1 --json
rows "$tmp/out" layer_time_us "$n_specs" "$n_fp16" || fail "predict layer --gpu all"
expect 0 "$bin" predict model --gpu all --config llama-2-7b --inference --seq 1024 --json
rows "$tmp/out" step_time_ms "$n_specs" "$n_bf16" || fail "predict model --gpu all"
# the ranking the issue names: the power-limited A100 PCIe is never ahead
# of the A100 SXM4 of the same memory
python3 - "$tmp/out" <<'PY' || fail "A100 PCIe 80GB ranked ahead of A100 SXM4 80GB"
import json, sys
order = [r["gpu"] for r in json.load(open(sys.argv[1])) if r["prediction"]]
assert order.index("a100-sxm4-80gb") < order.index("a100-pcie-80gb"), order
PY
expect 0 "$bin" predict model --gpu all --config llama-2-7b --decode 512 --tp 2 --dtype fp16 --csv
[ "$(tail -n +2 "$tmp/out" | wc -l)" -eq "$n_specs" ] || fail "predict model --csv: one row per GPU"
head -1 "$tmp/out" | grep -q '^gpu,step_time_ms,tokens_per_s,mfu_pct,memory_gb,source,note$' ||
    fail "predict model --csv header: $(head -1 "$tmp/out")"
# a model no GPU holds: every row says so, and the command fails as bad input
expect 2 "$bin" predict model --gpu all --config llama-2-70b --train --json
rows "$tmp/out" step_time_ms "$n_specs" 0 || fail "predict model: every row does not fit"
grep -q "does not fit" "$tmp/out" || fail "the rows say the model does not fit"
expect 0 "$bin" predict model --gpu all --config llama-2-70b --train --ignore-memory --json
rows "$tmp/out" step_time_ms "$n_specs" "$n_fp16" || fail "predict model --ignore-memory"
expect 0 "$bin" advise --gpu a100-sxm4-80gb,a100-pcie-40gb --config llama-2-7b --json
rows "$tmp/out" step_time_ms 2 2 || fail "advise --gpu A,B"
expect 0 "$bin" predict model --gpu a100-sxm4-80gb,h100-sxm5-80gb --config llama-2-7b --inference
grep -q "predicted, 2 of 2 GPUs" "$tmp/out" || fail "the table says it holds predictions"

# bad lists: an unknown, ambiguous or empty name is bad input (exit 2)
expect 2 "$bin" predict model --gpu a100-sxm4-80gb,nosuch --config llama-2-7b
grep -q "nosuch" "$tmp/err" || fail "the unknown name is named"
expect 2 "$bin" predict gemm --gpu a100-sxm4-80gb,h100 --dtype fp16 1024 1024 1024
grep -q "ambiguous" "$tmp/err" || fail "an ambiguous prefix is refused"
expect 2 "$bin" predict layer --gpu a100-sxm4-80gb,,h100-sxm5-80gb --hidden 1024 --heads 16 \
    --seq 512 --micro-batch 1
expect 2 "$bin" advise --gpu a100-sxm4-80gb, --config llama-2-7b

if [ $fails -ne 0 ]; then
    echo "$fails check(s) failed" >&2
    exit 1
fi
echo "cli-compare: all checks passed"
