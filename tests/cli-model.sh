#!/bin/bash
# Integration test 'cli-model': predict attention|layer|model, advise and
# plot through the built tilecast command, their JSON shape and exit codes.
set -u
bin=${TILECAST_BIN:?}
root=${TILECAST_SOURCE_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# expect CODE CMD...: runs CMD, checks its exit status.
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

# json_check FILE PYTHON-EXPR: evaluates EXPR with d = the parsed JSON.
json_check() {
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" ||
        fail "JSON check failed: $2"
}

gpu=a100-sxm4-80gb

# --- predict attention ---------------------------------------------------
expect 0 "$bin" predict attention --gpu $gpu --impl flash --batch 8 --heads 16 --seq 2048 \
    --head-dim 128 --json
cp "$tmp/out" "$tmp/attn.json"
json_check "$tmp/attn.json" 'd["prediction"] is True and d["impl"] == "flash" and 150 < d["tflops"] < 250 and d["source"] == "analytical"'
expect 0 "$bin" predict attention --gpu $gpu --impl flash --batch 8 --heads 16 --seq 2048 \
    --head-dim 128 --bwd --json
fwd_us=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["time_us"])' "$tmp/attn.json")
json_check "$tmp/out" "2.5 * $fwd_us < d['time_us'] < 3.5 * $fwd_us and d['direction'] == 'backward'"
# booleans are JSON booleans (deterministic was "yes"/"no")
expect 0 "$bin" predict attention --gpu $gpu --impl flash --batch 8 --heads 16 --seq 2048 \
    --head-dim 128 --bwd --deterministic --json
json_check "$tmp/out" 'd["deterministic"] is True and d["causal"] is False'
# --md: the record as a markdown table, as predict gemm and model give it
# (it was accepted and printed the plain table)
expect 0 "$bin" predict attention --gpu $gpu --impl flash --batch 8 --heads 16 --seq 2048 \
    --head-dim 128 --md
[ "$(head -2 "$tmp/out" | tr -d ' ' | tr '\n' ' ')" = "|field|value| |---|---| " ] ||
    fail "attention --md is not a markdown table: $(head -3 "$tmp/out")"
grep -q '^| time_us *| [0-9]' "$tmp/out" || fail "attention --md lacks the time: $(cat "$tmp/out")"
expect 0 "$bin" predict attention --gpu $gpu --impl unfused --batch 2 --heads 32 --kv-heads 8 \
    --seq 1024 --head-dim 128 --causal --csv
grep -q '^gpu,impl,dtype' "$tmp/out" || fail "attention --csv header"
expect 2 "$bin" predict attention --gpu $gpu --impl fused --batch 1 --heads 1 --seq 1 --head-dim 64
expect 1 "$bin" predict attention --gpu $gpu --batch 1 --heads 8
expect 2 "$bin" predict attention --gpu $gpu --batch 1 --heads 8 --kv-heads 3 --seq 128 --head-dim 64
grep -q "kv heads 3" "$tmp/err" || fail "kv-heads error names the value"
expect 2 "$bin" predict attention --gpu no-such-gpu --batch 1 --heads 8 --seq 128 --head-dim 64
# every implementation by name, and the options of the fused model
for impl in flash flash2 flash4 cudnn unfused; do
    expect 0 "$bin" predict attention --gpu $gpu --impl $impl --batch 2 --heads 16 --seq 1024 \
        --head-dim 128 --dtype bf16 --json
    json_check "$tmp/out" "d['impl'] == '$impl' and d['time_us'] > 0"
done
expect 0 "$bin" predict attention --gpu $gpu --impl cudnn --batch 2 --heads 16 --seq 1024 \
    --head-dim 192 --head-dim-vo 128 --causal --window 128 --dtype bf16 --kv-splits 1 --json
json_check "$tmp/out" "d['head_dim_vo'] == 128 and d['window'] == 128 and d['kernel'] == 'cudnn' and d['kv_splits'] == 1"
expect 2 "$bin" predict attention --gpu $gpu --batch 1 --heads 8 --seq 128 --head-dim 64 --window 32
grep -q "causal" "$tmp/err" || fail "--window without --causal names the mask"
expect 2 "$bin" predict attention --gpu $gpu --batch 1 --heads 8 --seq 128 --head-dim 64 \
    --deterministic
grep -q "backward" "$tmp/err" || fail "--deterministic without --bwd names the backward"
# a paged KV cache and the cache's dtype: a prediction never faster than the
# contiguous cache, labelled as modelling the block table's bytes only; the
# refusals name why; a database's paged rows answer their exact calls
expect 0 "$bin" predict attention --help
grep -q -- "--page-size P" "$tmp/out" && grep -q -- "--kv-dtype T" "$tmp/out" ||
    fail "predict attention --help names --page-size and --kv-dtype"
decode=(--gpu h200-sxm-141gb --batch 8 --heads 64 --kv-heads 8 --seq 1 --seq-kv 8192
    --head-dim 128 --dtype bf16 --analytical --json)
expect 0 "$bin" predict attention "${decode[@]}" --impl cudnn
cp "$tmp/out" "$tmp/flat.json"
expect 0 "$bin" predict attention "${decode[@]}" --impl cudnn --page-size 16
json_check "$tmp/out" "d['prediction'] is True and d['page_size'] == 16 and d['kv_dtype'] == 'bf16' and d['time_us'] >= json.load(open('$tmp/flat.json'))['time_us'] and 'block table' in d['kv_cache_model'] and d['hi_us'] > 1.5 * d['time_us']"
json_check "$tmp/flat.json" "d['page_size'] == 0 and 'kv_cache_model' not in d"
expect 2 "$bin" predict attention "${decode[@]}" --impl flash2 --page-size 16
grep -q "multiple of 256" "$tmp/err" || fail "flash2 --page-size 16 names FA2's page sizes"
expect 2 "$bin" predict attention "${decode[@]}" --impl cudnn --kv-dtype fp8
grep -q -- "--dtype fp8" "$tmp/err" || fail "--kv-dtype fp8 under bf16 names the fp8 attention"
expect 2 "$bin" predict attention "${decode[@]}" --impl cudnn --kv-dtype fp64
grep -q "wider" "$tmp/err" || fail "--kv-dtype fp64 under bf16 is refused as wider"
expect 2 "$bin" predict attention "${decode[@]}" --impl cudnn --page-size -16
"$bin" db import --format csv "$root/tests/data/db/attention-paged.csv" --into "$tmp/paged.db" \
    >/dev/null 2>&1 || fail "importing attention-paged.csv"
decode=("${decode[@]/--analytical/--db}")
decode=("${decode[@]/--json/$tmp/paged.db}")
expect 0 "$bin" predict attention "${decode[@]}" --json --impl flash2 --page-size 256
json_check "$tmp/out" "d['source'] == 'measured' and d['time_us'] == 80 and 'kv_cache_model' not in d"
expect 0 "$bin" predict attention "${decode[@]}" --json --impl flash2 --page-size 256 --kv-dtype fp8
json_check "$tmp/out" "d['source'] == 'measured' and d['time_us'] == 50 and d['kv_dtype'] == 'fp8'"
expect 0 "$bin" predict attention "${decode[@]}" --json --impl flash2 --page-size 512
json_check "$tmp/out" "d['source'] == 'calibrated' and d['page_size'] == 512"

# --- eval --attention ------------------------------------------------------
printf 'gpu,dtype,impl,pass,batch,heads,kv_heads,seq_q,seq_kv,head_dim,causal,time_us,head_dim_vo,mask,window,deterministic\n' >"$tmp/att.csv"
printf 'a100-pcie-80gb,bf16,flash2,fwd,2,16,16,4096,4096,128,0,1500,128,no_mask,,0\n' >>"$tmp/att.csv"
printf 'a100-pcie-80gb,bf16,cudnn_oss,bwd,2,16,16,4096,4096,128,1,2500,128,top_left,,0\n' >>"$tmp/att.csv"
printf 'a100-pcie-80gb,bf16,flash2,fwd,2,16,16,4096,4096,128,1,500,128,top_left,128,0\n' >>"$tmp/att.csv"
expect 0 "$bin" eval --attention --input "$tmp/att.csv" --output "$tmp/att-rows.csv" --json
json_check "$tmp/out" 'len(d) == 3 and d[-1]["gpu"] == "all" and d[-1]["rows"] == 3 and d[0]["impl"] == "cudnn_oss" and d[0]["pass"] == "bwd"'
[ "$(wc -l <"$tmp/att-rows.csv")" -eq 4 ] || fail "eval --attention --output: one line per row"
head -1 "$tmp/att-rows.csv" | grep -q ',pred_us,pred_tflops,ape_pct,signed_pct,kernel,kv_splits,status,message$' ||
    fail "eval --attention --output header"
# with --db: the A100 PCIe 80GB rows calibrate these shapes, a stored one is measured
cp "$tmp/att.csv" "$tmp/att-db.csv"
printf 'a100-pcie-80gb,bf16,cudnn,fwd,2,64,8,4096,4096,128,1,3155,128,top_left,,0\n' >>"$tmp/att-db.csv"
expect 0 "$bin" eval --attention --input "$tmp/att-db.csv" --db "$root/db/prebuilt/a100-pcie-80gb.db" \
    --output "$tmp/att-db-rows.csv" --json
json_check "$tmp/out" 'd[-1]["rows"] == 4 and d[-1]["measured"] == 1 and d[-1]["calibrated"] == 3'
head -1 "$tmp/att-db-rows.csv" | grep -q ',kv_splits,source,status,message$' ||
    fail "eval --attention --db --output header"
grep -q '^a100-pcie-80gb,bf16,cudnn,fwd,.*,measured,ok,$' "$tmp/att-db-rows.csv" ||
    fail "eval --attention --db: the stored row is measured"
expect 2 "$bin" eval --attention --input "$tmp/att.csv" --db "$tmp/no-such.db"
# the KV-cache columns: each row predicted with its page size and cache
# dtype (the fp8 cache under bf16 queries refused), a bad value named
expect 0 "$bin" eval --attention --input "$root/tests/data/db/attention-paged.csv" \
    --output "$tmp/paged-rows.csv" --json
json_check "$tmp/out" 'd[-1]["rows"] == 2 and d[-1]["refused"] == 1'
grep -q '^h200-sxm-141gb,bf16,flash2,fwd,.*,fp8,256,.*,refused,.*--dtype fp8' "$tmp/paged-rows.csv" ||
    fail "eval --attention: the fp8-cache row is refused naming the fp8 attention"
# a generation row (the cuDNN frontend's inference decode: the library
# splits the keys itself) is predicted with the split heuristic, a training
# row of the same shape without
printf 'gpu,dtype,impl,pass,batch,heads,kv_heads,seq_q,seq_kv,head_dim,causal,time_us,phase\n' >"$tmp/gen.csv"
printf 'h200-sxm-141gb,bf16,cudnn,fwd,1,64,8,1,8192,128,0,14.56,generation\n' >>"$tmp/gen.csv"
printf 'h200-sxm-141gb,bf16,cudnn,fwd,1,64,8,1,8192,128,0,14.56,train\n' >>"$tmp/gen.csv"
expect 0 "$bin" eval --attention --input "$tmp/gen.csv" --output "$tmp/gen-rows.csv"
[ "$(awk -F, 'NR == 2 { print ($(NF - 2) > 1) } NR == 3 { print $(NF - 2) }' "$tmp/gen-rows.csv" | tr -d '\n')" = 11 ] ||
    fail "eval --attention: a generation row splits the keys, a train row not: $(cat "$tmp/gen-rows.csv")"
sed 's/,bf16,256,/,fp4,256,/' "$root/tests/data/db/attention-paged.csv" >"$tmp/paged-bad.csv"
expect 2 "$bin" eval --attention --input "$tmp/paged-bad.csv" --output "$tmp/paged-bad-rows.csv"
grep -q "paged-bad.csv:3: cannot read kv_cache_dtype 'fp4'" "$tmp/err" ||
    fail "eval --attention names the file, line and value of a bad kv_cache_dtype"
# the held-out folds: a GPU held out gets no calibration from the other GPU
# (the model's figures); a model held out is calibrated by the others' rows
if [ -r "${TILECAST_MEASURED_DATA:-}/attention_fused.csv" ]; then
    python3 "$root/tools/cv-eval-attention.py" --by all --json >"$tmp/cv-att.json" 2>"$tmp/err" ||
        fail "cv-eval-attention.py: $(cat "$tmp/err")"
    json_check "$tmp/cv-att.json" 'all(t["mape_default_pct"] == t["mape_analytical_pct"] and t["came_from"].startswith("analytical") for t in d if t["held_out"] == "one gpu") and all(t["came_from"].startswith("calibrated") for t in d if t["held_out"] == "one model") and len(d) == 26'
fi
expect 0 "$bin" eval --attention --help
grep -q "cudnn_oss" "$tmp/out" || fail "eval --attention --help explains the impl mapping"
expect 1 "$bin" eval --attention
expect 2 "$bin" eval --attention --input "$tmp/no-such.csv"
printf 'a100-pcie-80gb,bf16,magic,fwd,2,16,16,4096,4096,128,0,1500,128,no_mask,,0\n' >>"$tmp/att.csv"
expect 2 "$bin" eval --attention --input "$tmp/att.csv"
grep -q "att.csv:5: cannot read impl" "$tmp/err" || fail "eval --attention names the bad row"

# An exactly measured attention shape in --db is answered by its measurement
# (labelled measured, not a prediction); other shapes stay predictions. The
# row is imported, as a public measurement would be (a cpu-backend
# collection cannot stand for a GPU: collect refuses --gpu with it).
printf 'gpu,dtype,impl,pass,batch,heads,kv_heads,seq_q,seq_kv,head_dim,causal,time_us,timing,source\n%s,fp32,unfused,fwd,1,2,2,64,64,32,0,37.25,event-median,test\n' \
    $gpu >"$tmp/attn.csv"
if "$bin" db import --format csv "$tmp/attn.csv" --into "$tmp/attn.db" >/dev/null 2>"$tmp/err"; then
    "$bin" db export "$tmp/attn.db" --format json >"$tmp/attn-rows.json" || fail "db export attention"
    measured_us=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["attention"]; assert len(r) == 1; print(repr(r[0]["time_us"]))' "$tmp/attn-rows.json")
    attn="--gpu $gpu --impl unfused --dtype fp32 --batch 1 --heads 2 --head-dim 32"
    # shellcheck disable=SC2086
    expect 0 "$bin" predict attention $attn --seq 64 --db "$tmp/attn.db" --json
    json_check "$tmp/out" "d['source'] == 'measured' and d['prediction'] is False and abs(d['time_us'] - $measured_us) <= 1e-6 * $measured_us and d['lo_us'] < d['time_us'] < d['hi_us']"
    # shellcheck disable=SC2086
    expect 0 "$bin" predict attention $attn --seq 64 --db "$tmp/attn.db"
    grep -q "), measured:" "$tmp/out" && grep -q "^source  *measured" "$tmp/out" ||
        fail "measured attention table: $(head -1 "$tmp/out")"
    # shellcheck disable=SC2086
    expect 0 "$bin" predict attention $attn --seq 128 --db "$tmp/attn.db" --json
    json_check "$tmp/out" "d['source'] != 'measured' and d['prediction'] is True"
    # shellcheck disable=SC2086
    expect 0 "$bin" predict attention $attn --seq 64 --kv-heads 1 --db "$tmp/attn.db" --json
    json_check "$tmp/out" "d['source'] != 'measured'"
    # shellcheck disable=SC2086
    expect 0 "$bin" predict attention $attn --seq 64 --db "$tmp/attn.db" --analytical --json
    json_check "$tmp/out" "d['source'] == 'analytical' and d['prediction'] is True"
else
    fail "db import of one attention row: $(head -c 300 "$tmp/err")"
fi

# --- predict layer -------------------------------------------------------
expect 0 "$bin" predict layer --gpu $gpu --hidden 4096 --heads 32 --seq 2048 --micro-batch 4 --analytical --json
cp "$tmp/out" "$tmp/layer.json"
json_check "$tmp/layer.json" 'isinstance(d, dict) and d["layer_time_us"] > 0 and abs(sum(o["time_us"] for o in d["ops"]) - d["layer_time_us"]) < 1e-6 * d["layer_time_us"]'
json_check "$tmp/layer.json" '[o["name"] for o in d["ops"] if o["kind"] in ("gemm", "bmm")] == ["qkv", "proj", "mlp_up", "mlp_down"]'
json_check "$tmp/layer.json" 'all(k in o for o in d["ops"] for k in ("name", "time_us", "source")) and [ (o["m"], o["n"], o["k"], o["batch"]) for o in d["ops"] if o["name"] == "qkv"] == [(8192, 12288, 4096, 1)]'
expect 0 "$bin" predict layer --gpu $gpu --hidden 4096 --heads 32 --seq 2048 --micro-batch 4 \
    --tp 2 --attention unfused --swiglu --ffn 11008 --train --analytical --json
json_check "$tmp/out" '{"scores", "softmax", "values", "mlp_up.wgrad", "mlp_down.dgrad"} <= {o["name"] for o in d["ops"]} and [o["n"] for o in d["ops"] if o["name"] == "mlp_up"] == [11008]'
expect 0 "$bin" predict layer --gpu $gpu --hidden 4096 --heads 32 --seq 2048 --micro-batch 4
grep -q "time_us" "$tmp/out" && grep -q "layer_time_us" "$tmp/out" || fail "layer table"
expect 2 "$bin" predict layer --gpu $gpu --hidden 4096 --heads 32 --seq x
expect 1 "$bin" predict layer --gpu $gpu --hidden 4096 --heads 32 --seq 2048 --bogus
expect 2 "$bin" predict layer --gpu $gpu --hidden 4096 --heads 32 --seq 2048 --tp 3
grep -q "tp 3" "$tmp/err" || fail "tp error names the value"

# --- predict layer --measured ---------------------------------------------
cat >"$tmp/vidur.csv" <<'CSV'
gpu,dtype,op,batch,m,n,k,layout,time_us,tflops,timing,source,model,tp,vidur_op,bias,flag
a100-sxm4-80gb,fp16,linear,1,4096,12288,4096,NT,1700,,profiler-median,x,m7b,1,attn_pre_proj,False,
a100-sxm4-80gb,fp16,linear,1,4096,4096,4096,NT,600,,profiler-median,x,m7b,1,attn_post_proj,False,
a100-sxm4-80gb,fp16,linear,1,4096,22016,4096,NT,3000,,profiler-median,x,m7b,1,mlp_up_proj,False,
a100-sxm4-80gb,fp16,linear,1,4096,4096,11008,NT,1550,,profiler-median,x,m7b,1,mlp_down_proj,False,
CSV
expect 0 "$bin" predict layer --measured "$tmp/vidur.csv" --analytical --json
json_check "$tmp/out" 'd["prediction"] is True and d["groups"][-1]["source"] == "analytical"'
cp "$tmp/out" "$tmp/analytical.json"
expect 0 "$bin" predict layer --measured "$tmp/vidur.csv" --no-prebuilt --json
json_check "$tmp/out" "d == $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])))' "$tmp/analytical.json")"
json_check "$tmp/out" 'd["groups"][-1]["gpu"] == "all" and d["groups"][-1]["layers"] == 1 and 0 <= d["groups"][-1]["mape_pct"] < 100'
sed 's/,600,/,6x0,/' "$tmp/vidur.csv" >"$tmp/bad.csv"
expect 2 "$bin" predict layer --measured "$tmp/bad.csv" --analytical
grep -q "bad.csv:3" "$tmp/err" || fail "measured: error names file:line ($(cat "$tmp/err"))"
cut -d, -f1-14 "$tmp/vidur.csv" >"$tmp/nocol.csv"
expect 2 "$bin" predict layer --measured "$tmp/nocol.csv"
grep -q "vidur_op" "$tmp/err" || fail "measured: missing column named"

# --- predict model --------------------------------------------------------
for cfg in llama-2-7b llama-3-8b gpt-neox-20b paper-gpt; do
    # the shipped configs train at t = 1, which no 80 GB GPU holds with Adam:
    # the time is asked for all the same
    expect 0 "$bin" predict model --gpu $gpu --config "$root/predictor/models/$cfg.yaml" --analytical --json \
        --ignore-memory
    json_check "$tmp/out" 'd["step_time_us"] > d["layer_time_us"] > 0 and 0.05 < d["mfu"] < 0.95 and d["tokens_per_s"] > 0 and d["prediction"] is True'
done
expect 0 "$bin" predict model --gpu h100-sxm5-80gb --config "$root/predictor/models/llama-3-8b.yaml" \
    --tp 2 --micro-batch 2 --seq 4096 --inference --json
json_check "$tmp/out" 'd["tp"] == 2 and d["micro_batch"] == 2 and d["seq"] == 4096 and d["mode"] == "inference" and not any(o["name"].endswith("wgrad") for o in d["ops"])'
expect 0 "$bin" predict model --gpu $gpu --config "$root/predictor/models/llama-2-7b.yaml" --decode 2048 --analytical --json
json_check "$tmp/out" 'd["decode_context"] == 2048 and d["mode"] == "inference" and [o["m"] for o in d["ops"] if o["name"] == "qkv"] == [1] and abs(d["tokens_per_s"] * d["step_time_us"] / 1e6 - 1) < 1e-6'
# --csv keeps the whole-model figures (on every row, the same as --json's),
# --md gives the ops and the summary as markdown tables
m7=(predict model --gpu $gpu --config "$root/predictor/models/llama-2-7b.yaml" --analytical --inference)
expect 0 "$bin" "${m7[@]}" --json
cp "$tmp/out" "$tmp/m7.json"
expect 0 "$bin" "${m7[@]}" --csv
python3 - "$tmp/m7.json" "$tmp/out" <<'PY' || fail "predict model --csv: the step figures"
import csv, json, sys
d = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == len(d["ops"]), (len(rows), len(d["ops"]))
for r in rows:
    assert abs(float(r["step_time_us"]) - d["step_time_us"]) < 0.01, r["step_time_us"]
    assert abs(float(r["tokens_per_s"]) - d["tokens_per_s"]) < 0.1, r["tokens_per_s"]
    assert abs(float(r["mfu_pct"]) - 100 * d["mfu"]) < 0.01, r["mfu_pct"]
    assert abs(float(r["host_time_us"]) - d["host_time_us"]) < 0.01
PY
expect 0 "$bin" "${m7[@]}" --md
grep -q '^| op | kind | m | n | k | batch | layout | time_us |' "$tmp/out" &&
    grep -q '^|---|---|---:|' "$tmp/out" && grep -q '^| tokens_per_s | [0-9]' "$tmp/out" &&
    grep -q '^| step_time_ms | [0-9]' "$tmp/out" && grep -q '^### Predicted' "$tmp/out" ||
    fail "predict model --md: $(head -c 400 "$tmp/out")"
# the ops' header and rows, the summary's header and its twelve lines
n_ops=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["ops"]))' "$tmp/m7.json")
[ "$(grep -c '^| ' "$tmp/out")" -eq $((n_ops + 14)) ] ||
    fail "predict model --md: $(grep -c '^| ' "$tmp/out") table lines"
expect 1 "$bin" predict model --gpu $gpu --config "$root/predictor/models/llama-2-7b.yaml" --decode 2048 --train
expect 2 "$bin" predict model --gpu $gpu --config "$root/predictor/models/llama-2-7b.yaml" --decode 0
# The footer counts the ops by source (the shipped tables make some of them
# measured, calibrated or transferred): it is not the least certain source
# alone, and says every figure is a prediction.
for what in "layer --hidden 4096 --heads 32 --seq 2048" \
            "model --config $root/predictor/models/llama-2-7b.yaml --tp 2"; do
    # shellcheck disable=SC2086
    expect 0 "$bin" predict $what --gpu $gpu --json
    json_check "$tmp/out" 'd["sources"] == {s: sum(o["source"] == s for o in d["ops"]) for s in ("measured", "calibrated", "transferred", "analytical")} and d["sources"]["analytical"] < len(d["ops"])'
    want=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["sources"]; print("sources         predictions: " + ", ".join("%d %s" % (c[s], s) for s in ("calibrated", "transferred", "analytical") if c[s]) + "; measured: %d (every figure is a prediction)" % c["measured"])' "$tmp/out")
    # shellcheck disable=SC2086
    expect 0 "$bin" predict $what --gpu $gpu
    grep -qxF "$want" "$tmp/out" || fail "predict $what: footer is '$(tail -1 "$tmp/out")', want '$want'"
done
expect 0 "$bin" predict model --gpu $gpu --config "$root/predictor/models/llama-2-7b.yaml" --analytical \
    --ignore-memory
grep -qxF "sources         predictions: 27 analytical; measured: 0 (every figure is a prediction)" "$tmp/out" ||
    fail "predict model --analytical footer: $(tail -1 "$tmp/out")"
printf 'hidden: 4096\nheads: 32\nseq: 2048\nlayerz: 3\n' >"$tmp/bad.yaml"
expect 2 "$bin" predict model --gpu $gpu --config "$tmp/bad.yaml"
grep -q "bad.yaml:4:1" "$tmp/err" || fail "model config error names file:line:col"
expect 1 "$bin" predict model --gpu $gpu
expect 2 "$bin" predict model --gpu $gpu --config "$tmp/missing.yaml"

# --- advise ---------------------------------------------------------------
printf 'hidden: 4096\nheads: 32\nseq: 2048\nmicro_batch: 4\nlayers: 24\nvocab: 51201\n' >"$tmp/v.yaml"
expect 0 "$bin" advise --gpu $gpu --config "$tmp/v.yaml" --params-tolerance 5% --top 5 --json --verbose --analytical
json_check "$tmp/out" 'd["n_evaluated"] >= 500 and 0 < len(d["candidates"]) <= 5 and d["candidates"][0]["vocab"] % 64 == 0 and "guideline 1" in d["candidates"][0]["reason"]'
grep -q "n_evaluated" "$tmp/err" || fail "advise --verbose prints n_evaluated"
# GPT-2's vocabulary of 50257 with the shipped A100 measurements: the
# one-knob fix (pad the vocabulary) first, padding to 64 offered, and the
# order the header names: changes, then speedup within each
printf 'hidden: 1024\nheads: 16\nlayers: 24\nseq: 1024\nmicro_batch: 8\nvocab: 50257\ntied_embeddings: true\n' >"$tmp/gpt2.yaml"
expect 0 "$bin" advise --gpu a100-sxm4-80gb --config "$tmp/gpt2.yaml" --json
json_check "$tmp/out" 'd["candidates"][0]["changes"] == 1 and d["candidates"][0]["reason"].startswith("v 50257->") and any(c["vocab"] == 50304 and c["changes"] == 1 for c in d["candidates"]) and [(c["changes"], -c["speedup"]) for c in d["candidates"]] == sorted((c["changes"], -c["speedup"]) for c in d["candidates"])'
expect 0 "$bin" advise --gpu a100-sxm4-80gb --config "$tmp/gpt2.yaml"
grep -q "change the fewest knobs first" "$tmp/out" || fail "advise does not say how it ranks"
grep -q "each group ranked by speedup" "$tmp/out" || fail "advise does not name the figure it ranks by"
expect 2 "$bin" advise --gpu $gpu --config "$tmp/v.yaml" --params-tolerance 80%
expect 1 "$bin" advise --gpu $gpu

# --- plot ---------------------------------------------------------------
cat >"$tmp/meas.csv" <<'CSV'
gpu,dtype,op,batch,m,n,k,layout,time_us,tflops
a100-sxm4-80gb,fp16,mm,1,4096,1024,4096,NT,,200.5
a100-sxm4-80gb,fp16,mm,1,4096,2048,4096,NT,,210.25
a100-sxm4-80gb,fp16,mm,1,4096,2048,8192,NT,,999
h100-sxm5-80gb,fp16,mm,1,4096,2048,4096,NT,,650
CSV
expect 0 "$bin" plot throughput --gpu $gpu --sweep n --m 4096 --n 4096 --k 4096 --step 512     --measured "$tmp/meas.csv" --analytical --output "$tmp/tp.svg"
[ -s "$tmp/tp.svg" ] && [ -s "$tmp/tp.dat" ] && [ -s "$tmp/tp.gp" ] || fail "plot throughput files"
grep -q "<svg" "$tmp/tp.svg" || fail "plot throughput: not an SVG"
# 8 predicted points (512..4096), then exactly the two matching measured points
[ "$(awk '/^# predicted/{b=1;next} /^# measured/{b=2;next} NF==4 && b==1' "$tmp/tp.dat" | wc -l)" -eq 8 ] ||
    fail "plot throughput: predicted points"
awk '/^# measured/{b=1;next} NF==2 && b' "$tmp/tp.dat" | tr '\n' ' ' | grep -qx '1024 200.5000 2048 210.2500 ' ||
    fail "plot throughput: measured points ($(awk '/^# measured/{b=1;next} NF==2 && b' "$tmp/tp.dat" | tr '\n' ' '))"
grep -q "throughput (TFLOP/s)" "$tmp/tp.gp" && grep -q "fp16" "$tmp/tp.gp" || fail "plot labels"
expect 0 "$bin" plot layer --gpu $gpu --hidden 4096 --heads 32 --seq 2048 --micro-batch 4     --analytical --output "$tmp/layer.png"
[ "$(head -c 4 "$tmp/layer.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "plot layer: not a PNG"
grep -c "^qkv " "$tmp/layer.dat" | grep -qx 1 || fail "plot layer data"
expect 0 "$bin" plot advise --gpu $gpu --config "$tmp/v.yaml" --top 4 --analytical --output "$tmp/adv.svg"
grep -q "^\"baseline" "$tmp/adv.dat" || fail "plot advise data"
# Without gnuplot: a clear message, and the data and script still written.
mkdir "$tmp/nobin"
ln -s "$(command -v python3)" "$tmp/nobin/python3"
PATH="$tmp/nobin" expect 3 "$bin" plot layer --gpu $gpu --hidden 2048 --heads 16 --seq 1024     --output "$tmp/nognuplot.svg"
grep -q "gnuplot was not found" "$tmp/err" || fail "plot without gnuplot: message"
[ -s "$tmp/nognuplot.dat" ] && [ -s "$tmp/nognuplot.gp" ] && [ ! -e "$tmp/nognuplot.svg" ] ||
    fail "plot without gnuplot: data and script"
expect 1 "$bin" plot layer --gpu $gpu --hidden 2048 --heads 16 --seq 1024 --output "$tmp/x.jpg"
expect 1 "$bin" plot sideways

# Shipped configs and sweeps by name alone, from any directory; a name
# that is neither a file nor shipped lists the shipped ones (exit 2).
mkdir "$tmp/elsewhere"
(cd "$tmp/elsewhere" && "$bin" predict model --gpu $gpu --config llama-2-7b --tp 2 --json >"$tmp/byname.json") ||
    fail "--config llama-2-7b by name"
(cd "$TILECAST_SOURCE_ROOT" && "$bin" predict model --gpu $gpu --config predictor/models/llama-2-7b.yaml --tp 2 --json \
    >"$tmp/bypath.json") || fail "--config by path"
cmp -s "$tmp/byname.json" "$tmp/bypath.json" || fail "a config by name and by path differ"
(cd "$tmp/elsewhere" && "$bin" collect --backend cpu --sweep quick --dry-run >"$tmp/out") || fail "--sweep quick"
grep -q '^shapes: 64 in the sweep' "$tmp/out" || fail "--sweep quick: $(head -3 "$tmp/out")"
expect 2 "$bin" predict model --gpu $gpu --config llama-2-8b
grep -q "shipped: gpt-neox-20b, llama-2-70b, llama-2-7b, llama-3-8b, paper-gpt" "$tmp/err" ||
    fail "an unknown config name does not list the shipped ones: $(cat "$tmp/err")"
expect 2 "$bin" collect --backend cpu --sweep quik --dry-run
grep -q "shipped: exhaustive, paper, quick" "$tmp/err" || fail "an unknown sweep name: $(cat "$tmp/err")"

# Memory: a configuration that does not fit is refused (exit 2) with the
# breakdown, unless --ignore-memory. Hand-computed: Llama-3-8B (8.03e9
# parameters) trained in bf16 with Adam needs 16 bytes a parameter, 128.5 GB,
# before activations; at t = 8 a GPU holds 1/8 of that, 16.1 GB.
expect 2 "$bin" predict model --gpu $gpu --config llama-3-8b --tp 1 --train
grep -q "does not fit: .* of 76.0 (weights 16.1, grads 16.1, optimizer 96.4" "$tmp/err" ||
    fail "memory refusal: $(cat "$tmp/err")"
expect 0 "$bin" predict model --gpu $gpu --config llama-3-8b --tp 1 --train --ignore-memory --json
# the option the refusal recommends is in the help (and so the man page and
# the completion)
"$bin" predict model --help | grep -q -- "--ignore-memory" ||
    fail "predict model --help does not name --ignore-memory, which its refusal recommends"
json_check "$tmp/out" 'd["memory"]["fits"] is False and abs(d["memory"]["weights_gb"] + d["memory"]["grads_gb"] + d["memory"]["optimizer_gb"] - 8.03e9 * 16 / 1e9) < 0.5'
expect 0 "$bin" predict model --gpu $gpu --config llama-3-8b --tp 8 --train --json
json_check "$tmp/out" 'd["memory"]["fits"] is True and abs(d["memory"]["weights_gb"] - 8.03e9 * 2 / 8 / 1e9) < 0.05'
# Llama-2-70B in fp16 is 138 GB of weights: one 80 GB GPU cannot serve it,
# two can; the KV cache of 4096 tokens at batch 8 is 2 x 80 x 8 x 128 x 4097 x
# 8 x 2 bytes / t = 10.7 GB at t = 2
expect 2 "$bin" predict model --gpu a100-sxm4-80gb --config llama-2-70b --tp 1 --decode 4096
expect 0 "$bin" predict model --gpu a100-sxm4-80gb --config llama-2-70b --tp 2 --decode 4096 --micro-batch 8 --json
json_check "$tmp/out" 'd["memory"]["fits"] is True and abs(d["memory"]["kv_cache_gb"] - 2 * 80 * 8 * 128 * 4097 * 8 * 2 / 2 / 1e9) < 0.01'

# --dtype overrides the config: a V100 has no bf16, and says what to do
expect 2 "$bin" predict model --gpu v100-sxm2-32gb --config llama-2-7b --tp 8
grep -q "does not support bf16 (predict it in another dtype: --dtype)" "$tmp/err" ||
    fail "bf16 on V100: $(cat "$tmp/err")"
expect 0 "$bin" predict model --gpu v100-sxm2-32gb --config llama-2-7b --tp 8 --dtype fp16 --json
json_check "$tmp/out" 'd["dtype"] == "fp16" and d["step_time_us"] > 0'
expect 2 "$bin" predict model --gpu v100-sxm2-32gb --config llama-2-7b --dtype fp17

# Decode of Llama-2-70B on A100 follows the measured TP trend (Splitwise's
# serving profiles, e2e_serving.csv: 54.9 / 45.0 / 44.9 ms per token at TP
# 2 / 4 / 8, batch 1): the step falls from TP 2 to TP 4 and hardly from 4
# to 8, where the host dispatching each op is the bound; CUDA graphs lift it.
step() { # TP [FLAGS...]: the decode step time in us
    local tp=$1
    shift
    "$bin" predict model --gpu a100-sxm4-80gb --config llama-2-70b --tp "$tp" --decode 576 --json "$@" |
        python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["step_time_us"], d["host_time_us"], d["gpu_time_us"])'
}
read -r s2 h2 g2 < <(step 2) || fail "decode TP 2"
read -r s4 h4 g4 < <(step 4) || fail "decode TP 4"
read -r s8 h8 g8 < <(step 8) || fail "decode TP 8"
read -r sg hg gg < <(step 8 --graphs) || fail "decode TP 8 --graphs"
python3 - "$s2" "$s4" "$s8" "$sg" "$h8" "$g8" "$gg" <<'EOF' || fail "decode TP trend: $s2 $s4 $s8 (graphs $sg)"
import sys
s2, s4, s8, sg, h8, g8, gg = map(float, sys.argv[1:])
assert s4 / s2 < 0.9, "TP 2 -> 4 must fall (measured 0.82)"
# the TP 4 floor holds each linear layer's module call (23 us more host
# time than a plain op): without it the ratio was 0.61
assert s4 / s2 > 0.7, "TP 2 -> 4 falls less than by half (measured 0.82)"
assert s8 / s4 > 0.9, "TP 4 -> 8 must stay nearly flat (measured 1.00)"
assert s8 == max(h8, g8) and h8 > g8, "TP 8 decode is host-bound"
assert sg < s8 and abs(sg - gg) < 1e-6, "--graphs removes the per-op dispatch"
EOF
# --serving: a serving engine's per-step work (Vidur's DGX-A100 medians:
# 3.4 ms + 0.23 ms per sequence with TP worker processes, 1.3 + 0.11 ms on
# one GPU) runs serially with the forward, and a serving prefill's logits
# GEMM has one row per sequence (the last prompt token), not b·s.
serve() { # ARGS...: step, gpu, host and engine times (us), logits rows
    "$bin" predict model --gpu a100-sxm4-80gb --json "$@" |
        python3 -c 'import json, sys; d = json.load(sys.stdin); l = [o["m"] for o in d["ops"] if o["name"] == "logits"]; print(d["step_time_us"], d["gpu_time_us"], d["host_time_us"], d["engine_time_us"], l[0])'
}
read -r ps pg ph pe pl < <(serve --config llama-2-70b --tp 4 --micro-batch 2 --decode 576) ||
    fail "decode TP 4"
read -r ss sg sh se sl < <(serve --config llama-2-70b --tp 4 --micro-batch 2 --decode 576 --serving) ||
    fail "decode TP 4 --serving"
read -r os og oh oe ol < <(serve --config llama-2-7b --micro-batch 4 --decode 576 --serving) ||
    fail "decode TP 1 --serving"
read -r fs fg fh fe fl < <(serve --config llama-2-7b --micro-batch 4 --inference --seq 512 --serving) ||
    fail "prefill --serving"
read -r qs qg qh qe ql < <(serve --config llama-2-7b --micro-batch 4 --inference --seq 512) ||
    fail "prefill"
# The logits are vocabulary-parallel (Megatron, vLLM's ParallelLMHead): at TP
# 4 each GPU computes 32000/4 columns and inference all-gathers b×v logits.
python3 - "$bin" <<'EOF' || fail "vocabulary-parallel logits or their all-gather wrong"
import json, subprocess, sys
d = json.loads(subprocess.run([sys.argv[1], "predict", "model", "--gpu", "a100-sxm4-80gb",
                               "--config", "llama-2-70b", "--tp", "4", "--micro-batch", "2",
                               "--decode", "576", "--json"], capture_output=True, text=True,
                              check=True).stdout)
ops = {o["name"]: o for o in d["ops"]}
assert ops["logits"]["n"] == 32000 // 4 and ops["logits"]["m"] == 2, ops["logits"]
g = ops["logits_gather"]
assert g["kind"] == "allgather" and g["bytes"] == 2 * 32000 * 2 and not g["per_layer"], g
# NCCL's ring LL: 6.6 us and 0.6 us for each of 3 steps, a third of the
# 240 GB/s bus bandwidth for an all-gather, times 4/3 for its algorithm
assert abs(g["time_us"] - (6.6 + 3 * 0.6 + 2 * 32000 * 2 / (240e3 / 3 * 4 / 3))) < 1e-6, g
EOF
python3 - "$ps" "$pe" "$ss" "$sg" "$sh" "$se" "$os" "$og" "$oh" "$oe" "$fe" "$fl" "$ql" <<'EOF' ||
import sys
ps, pe, ss, sg, sh, se, os_, og, oh, oe, fe, fl, ql = map(float, sys.argv[1:])
assert pe == 0 and abs(se - (3400 + 2 * 230)) < 1e-3, (pe, se)
assert abs(ss - (se + max(sg, sh))) < 1e-3 and abs(ss - ps - se) < 1e-3, (ss, ps, se)
assert abs(oe - (1300 + 4 * 110)) < 1e-3 and abs(os_ - (oe + max(og, oh))) < 1e-3, (os_, oe)
assert abs(fe - (1300 + 4 * 110)) < 1e-3 and fl == 4 and ql == 4 * 512, (fe, fl, ql)
EOF
    fail "--serving: engine time or last-token logits wrong"
# Training across GPUs: --dp, --zero and --recompute set the config's keys
# (the memory breakdown and the step's ops follow), bad stages are refused
"$bin" predict model --gpu a100-sxm4-80gb --config llama-2-7b --dp 8 --zero 1 --recompute \
    --json >"$tmp/dp.json" 2>"$tmp/err" || fail "--dp 8 --zero 1 --recompute: $(cat "$tmp/err")"
python3 - "$tmp/dp.json" <<'EOF' || fail "--dp/--zero/--recompute: config, memory or ops wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert (d["dp"], d["zero_stage"], d["recompute"]) == (8, 1, True), d
names = [o["name"] for o in d["ops"]]
assert {"optimizer", "dp_allreduce", "recompute"} <= set(names), names
assert abs(d["memory"]["optimizer_gb"] - 12 * 6738415616 / 8 / 1e9) < 1e-6, d["memory"]
EOF
expect 2 "$bin" predict model --gpu a100-sxm4-80gb --config llama-2-7b --zero 4
expect 2 "$bin" predict model --gpu a100-sxm4-80gb --config llama-2-7b --dp 0
# the 7B model with Adam on one 80 GB GPU does not fit: refused, not a time
expect 2 "$bin" predict model --gpu a100-sxm4-80gb --config llama-2-7b --train
grep -q "does not fit" "$tmp/err" || fail "llama-2-7b training on one GPU: no memory error"

# Pipelines and nodes: --pp and --microbatches set the config's keys, the
# schedule's figures come out, the nodes follow --gpus-per-node; a PCIe card
# that spans nodes needs --nic-gbps; impossible values are refused
"$bin" predict model --gpu a100-sxm4-80gb --config llama-2-70b --train --tp 8 --pp 4 \
    --microbatches 8 --dp 2 --micro-batch 1 --seq 4096 --recompute --json >"$tmp/pp.json" \
    2>"$tmp/err" || fail "--pp 4 --microbatches 8: $(cat "$tmp/err")"
python3 - "$tmp/pp.json" <<'EOF' || fail "--pp/--microbatches: config, schedule or nodes wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert (d["pp"], d["microbatches"], d["nodes"], d["gpus_per_node"]) == (4, 8, 8, 8), d
assert d["nic_gbps"] == 25 and d["memory"]["fits"], (d["nic_gbps"], d["memory"])
ops = {o["name"]: o for o in d["ops"]}
assert ops["pp_send"]["kind"] == "p2p" and abs(d["p2p_us"] - ops["pp_send"]["time_us"]) < 1e-9
steps = [o["time_us"] for o in d["ops"] if o["name"] in ("optimizer", "dp_allreduce")]
assert ops["pp_send"]["bytes"] == 4096 * 8192 * 2 // 8, ops["pp_send"]
assert abs(d["gpu_time_us"] / (8 * d["stage_time_us"] + d["bubble_us"] + sum(steps)) - 1) < 1e-6
assert d["bubble_us"] > 2.5 * d["stage_time_us"], d
EOF
"$bin" predict model --gpu a100-sxm4-80gb --config llama-2-7b --inference --pp 4 \
    --gpus-per-node 2 >"$tmp/out" 2>"$tmp/err" || fail "--gpus-per-node 2: $(cat "$tmp/err")"
grep -q "^nodes           2 (2 GPUs each), 25 GB/s" "$tmp/out" || fail "--gpus-per-node: no nodes line"
grep -q "^pipeline        pp 4 x 1 micro-batch:" "$tmp/out" || fail "--pp: no pipeline line"
expect 2 "$bin" predict model --gpu a100-pcie-80gb --config llama-2-7b --inference --pp 4 \
    --gpus-per-node 2
grep -q -- "--nic-gbps" "$tmp/err" || fail "a PCIe card across nodes: no hint to --nic-gbps"
expect 0 "$bin" predict model --gpu a100-pcie-80gb --config llama-2-7b --inference --pp 4 \
    --gpus-per-node 2 --nic-gbps 12.5
expect 2 "$bin" predict model --gpu a100-sxm4-80gb --config llama-2-7b --pp 3
grep -q "pp 3 does not divide layers 32" "$tmp/err" || fail "--pp 3: no divisibility error"
expect 2 "$bin" predict model --gpu a100-sxm4-80gb --config llama-2-7b --microbatches 0
expect 2 "$bin" predict model --gpu a100-sxm4-80gb --config llama-2-7b --nic-gbps -1
expect 2 "$bin" predict model --gpu a100-sxm4-80gb --config llama-2-7b --gpus-per-node x
"$bin" predict model --gpu all --config llama-2-7b --inference --pp 2 --json >"$tmp/all.json" \
    2>"$tmp/err" || fail "--gpu all --pp 2: $(cat "$tmp/err")"
# advise places every candidate on the same nodes: the baseline's step is
# predict model's on them, and the PCIe card across nodes is refused alike
"$bin" advise --gpu a100-sxm4-80gb --config llama-2-7b --train --tp 8 --dp 4 --top 1 \
    --gpus-per-node 1 --nic-gbps 2 --json >"$tmp/adv.json" 2>"$tmp/err" ||
    fail "advise --gpus-per-node 1: $(cat "$tmp/err")"
"$bin" predict model --gpu a100-sxm4-80gb --config llama-2-7b --train --tp 8 --dp 4 \
    --gpus-per-node 1 --nic-gbps 2 --ignore-memory --json >"$tmp/pm.json" 2>"$tmp/err" ||
    fail "predict model --gpus-per-node 1: $(cat "$tmp/err")"
python3 - "$tmp/adv.json" "$tmp/pm.json" <<'EOF' || fail "advise: not on the nodes given"
import json, sys
a, m = (json.load(open(f)) for f in sys.argv[1:])
assert m["nodes"] == 32, m["nodes"]
assert abs(a["baseline"]["step_time_us"] / m["step_time_us"] - 1) < 1e-9, (a["baseline"], m["step_time_us"])
EOF
expect 2 "$bin" advise --gpu a100-pcie-80gb --config llama-2-7b --tp 8 --dp 4 --gpus-per-node 1
grep -q -- "--nic-gbps" "$tmp/err" || fail "advise: a PCIe card across nodes: no hint to --nic-gbps"
expect 2 "$bin" advise --gpu a100-sxm4-80gb --config llama-2-7b --nic-gbps 0

# tools/e2e-eval.py scores every group of the end-to-end files
if python3 "$root/tools/e2e-eval.py" --json >"$tmp/e2e.json" 2>"$tmp/err"; then
    python3 - "$tmp/e2e.json" <<'EOF' || fail "e2e-eval: groups or figures wrong"
import json, math, sys
r = json.load(open(sys.argv[1]))
groups = {(x["set"], x["phase"], x["gpu"], x["tp"]) for x in r}
assert ("serving", "decode", "a100-sxm4-80gb", 8) in groups and len(groups) >= 8, groups
assert all(math.isfinite(x["predicted_ms"]) and x["predicted_ms"] > 0 for x in r)
# the whole-model groups that meet #19's 15 % stay within 10 % (README,
# "Whole models (measured)": 5.1-8.8 %); the L4's rest on its sustained
# FFMA clock (29.3 and 22.2 % without it)
ape = {}
for x in r:
    if x["set"] == "models":
        k = (x["phase"], x["gpu"])
        ape.setdefault(k, []).append(abs(x["predicted_ms"] / x["measured_ms"] - 1) * 100)
for k in [("inference", g) for g in ("a100-pcie-40gb", "l4", "mi100", "v100-pcie-32gb")] + \
         [("training", g) for g in ("l4", "mi100", "v100-pcie-32gb")]:
    assert k in ape, (k, sorted(ape))
    mape = sum(ape[k]) / len(ape[k])
    assert mape <= 10.0, (k, round(mape, 2))
EOF
else
    fail "e2e-eval: $(cat "$tmp/err")"
fi

if [ $fails -ne 0 ]; then
    echo "$fails check(s) failed" >&2
    exit 1
fi
echo "cli-model: all checks passed"
