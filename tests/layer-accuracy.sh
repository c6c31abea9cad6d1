#!/bin/bash
# Layer-level accuracy on the vendored Vidur profiles ($TILECAST_MEASURED_DATA):
# the predicted sum of each layer's four GEMMs (QKV, output projection, MLP
# up and down) against the measured sum, per GPU and model.
#   - analytical model alone: MAPE <= 10 % on every GPU and model;
#   - calibrated with no shape of the evaluated layers in the calibration
#     (tools/holdout-eval.sh --split tokens: the rows split by token count,
#     so every GEMM of a layer is on one side), both ways: MAPE <= 5 % on
#     every GPU and model, and below the analytical model's;
#   - a whole model held out (calibrated on the other model's rows only):
#     better than the analytical model over all layers.
# A change that makes the model or its calibration worse fails here.
set -u

: "${TILECAST_BIN:?run through meson test}"
: "${TILECAST_SOURCE_ROOT:?run through meson test}"
vidur="${TILECAST_MEASURED_DATA:-}/vidur_gemm.csv"
if [ ! -r "$vidur" ]; then
    echo "FAIL: the measured data is required: $vidur is not readable" >&2
    exit 1
fi
. "$(dirname "$0")/lib.sh"
work=$TMP

# layers OUT.json ARGS...: `predict layer --measured` as JSON
layers() {
    local out=$1
    shift
    if ! "$TC" predict layer "$@" --json >"$out" 2>"$work/err"; then
        fail "predict layer $*: $(head -c 400 "$work/err")"
        echo '[]' >"$out"
    fi
}

# check FILE.json PYTHON-CONDITION DESCRIPTION: the condition holds for
# every per-(gpu, model) entry e (the "all" row excluded)
check() {
    if ! python3 - "$1" "$2" <<'PY' >"$work/check" 2>&1; then
import json, sys
rows = [e for e in json.load(open(sys.argv[1]))["groups"] if e["gpu"] != "all"]
assert len(rows) == 4, "expected 2 GPUs x 2 models, got %d entries" % len(rows)
bad = [e for e in rows if not eval(sys.argv[2], {}, {"e": e})]
for e in rows:
    print("%s %s: %d layers, MAPE %.2f %%" % (e["gpu"], e["model"], e["layers"], e["mape_pct"]))
assert not bad, "fails for %s" % ", ".join("%s/%s (%.2f %%)" % (e["gpu"], e["model"], e["mape_pct"]) for e in bad)
PY
        fail "$3: $(tr '\n' ';' <"$work/check")"
    else
        sed "s/^/$3: /" "$work/check"
    fi
}

layers "$work/analytical.json" --measured "$vidur" --analytical
check "$work/analytical.json" 'e["layers"] > 900 and e["mape_pct"] <= 10.0' "analytical"

if ! TILECAST_BIN="$TC" "$TILECAST_SOURCE_ROOT/tools/holdout-eval.sh" "$vidur" \
    --split tokens --keep "$work/split" >"$work/holdout.txt" 2>&1; then
    fail "holdout-eval --split tokens: $(tail -c 400 "$work/holdout.txt")"
fi
grep -q "whole layers of the held-out rows, calibrated" "$work/holdout.txt" ||
    fail "holdout-eval prints no layer comparison for Vidur's rows"
for half in a b; do
    other=$([ $half = a ] && echo b || echo a)
    # no token count on both sides
    if [ -n "$(comm -12 <(cut -d, -f5 "$work/split/tokens-$half.csv" | tail -n +2 | sort -u) \
                       <(cut -d, -f5 "$work/split/tokens-$other.csv" | tail -n +2 | sort -u))" ]; then
        fail "token split: a token count is in both halves"
    fi
    layers "$work/cal-$other.json" --measured "$work/split/tokens-$other.csv" \
        --db "$work/split/tokens-$half.db" --no-prebuilt
    layers "$work/ana-$other.json" --measured "$work/split/tokens-$other.csv" --analytical
    check "$work/cal-$other.json" 'e["source"] == "calibrated" and e["layers"] > 400 and e["mape_pct"] <= 5.0' \
        "calibrated, tokens $half -> $other"
    python3 - "$work/cal-$other.json" "$work/ana-$other.json" <<'PY' ||
import json, sys
cal = {(e["gpu"], e["model"]): e["mape_pct"] for e in json.load(open(sys.argv[1]))["groups"]}
ana = {(e["gpu"], e["model"]): e["mape_pct"] for e in json.load(open(sys.argv[2]))["groups"]}
assert cal.keys() == ana.keys() and all(cal[k] < ana[k] for k in cal), (cal, ana)
PY
        fail "calibrated not better than analytical on the token split $half -> $other"
done

# Whole model held out: calibrate on one model's rows, evaluate the other's.
head -n 1 "$vidur" >"$work/llama.csv"
head -n 1 "$vidur" >"$work/codellama.csv"
tail -n +2 "$vidur" | awk -v l="$work/llama.csv" -v c="$work/codellama.csv" \
    '/meta-llama\/Llama-2-7b-hf/ { print >> l; next } { print >> c }'
for held in llama codellama; do
    train=$([ $held = llama ] && echo codellama || echo llama)
    "$TC" db import --format csv --skip-untimed "$work/$train.csv" \
        --into "$work/$train.db" >/dev/null 2>"$work/err" || fail "import $train: $(cat "$work/err")"
    layers "$work/held-$held.json" --measured "$work/$held.csv" --db "$work/$train.db" --no-prebuilt
    layers "$work/held-$held-ana.json" --measured "$work/$held.csv" --analytical
    python3 - "$work/held-$held.json" "$work/held-$held-ana.json" <<'PY' ||
import json, sys
cal = [e for e in json.load(open(sys.argv[1]))["groups"] if e["gpu"] == "all"][0]["mape_pct"]
ana = [e for e in json.load(open(sys.argv[2]))["groups"] if e["gpu"] == "all"][0]["mape_pct"]
print("whole model held out: calibrated %.2f %%, analytical %.2f %%" % (cal, ana))
assert cal < ana
PY
        fail "$held held out: calibrated not better than analytical over all layers"
done

finish layer-accuracy
