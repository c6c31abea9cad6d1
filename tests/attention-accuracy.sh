#!/bin/bash
# Fused-attention accuracy on the vendored cuDNN-frontend timings
# ($TILECAST_MEASURED_DATA/attention_fused.csv): `tilecast eval --attention`
# per (GPU, impl, dtype, pass). The model takes no constant from these rows
# (predictor/attention-kernels.c takes them from the kernels' papers), so the
# thresholds are what it measured when they were set, with a little room:
# a change that makes a group worse fails here. The groups the per-kernel
# model improved (all but H200 fp8 backward, whose earlier score came from
# the old model's wrong handling of causal masks) must stay below the
# earlier model's MAPE, which the comment after each threshold gives.
set -u

: "${TILECAST_BIN:?run through meson test}"
csv="${TILECAST_MEASURED_DATA:-}/attention_fused.csv"
if [ ! -r "$csv" ]; then
    echo "FAIL: the measured data is required: $csv is not readable" >&2
    exit 1
fi
. "$(dirname "$0")/lib.sh"

run 0 "$TC" eval --attention --input "$csv" --output "$TMP/rows.csv" --json
cp "$TMP/out" "$TMP/eval.json"

if ! python3 - "$TMP/eval.json" "$TMP/rows.csv" <<'PY' >"$TMP/check" 2>&1; then
import csv, json, sys

groups = {(g["gpu"], g["impl"], g["dtype"], g["pass"]): g for g in json.load(open(sys.argv[1]))}
# (gpu, impl, dtype, pass): (max MAPE %, min compared rows); the earlier
# FA2-everywhere model's MAPE in the comment
limits = {
    ("a100-pcie-80gb", "flash2", "bf16", "fwd"): (6.5, 36),      # 207
    ("a100-pcie-80gb", "flash2", "bf16", "bwd"): (9.0, 62),     # 185
    ("a100-pcie-80gb", "cudnn_oss", "bf16", "fwd"): (8.5, 66),  # 140
    ("a100-pcie-80gb", "cudnn_oss", "bf16", "bwd"): (14.5, 122), # 94 (half deterministic)
    ("a100-pcie-80gb", "cudnn", "bf16", "fwd"): (21.0, 66),      # 96
    ("a100-pcie-80gb", "cudnn", "bf16", "bwd"): (24.5, 26),      # 134
    ("a100-pcie-80gb", "flash4", "bf16", "fwd"): (8.5, 61),     # 17
    ("h200-sxm-141gb", "cudnn", "bf16", "fwd"): (9.0, 66),       # 255
    ("h200-sxm-141gb", "cudnn", "bf16", "bwd"): (21.0, 61),      # 98
    ("h200-sxm-141gb", "flash4", "bf16", "fwd"): (9.5, 66),      # 242
    ("h200-sxm-141gb", "flash4", "bf16", "bwd"): (15.0, 122),    # 187 (half deterministic)
    ("h200-sxm-141gb", "cudnn", "fp8", "fwd"): (9.5, 56),        # 103 (23 before the 16-bit rate off 128 and 256)
    ("h200-sxm-141gb", "cudnn", "fp8", "bwd"): (10.0, 32),       # 21 (16 rows; 31 before its causal
                                                                 # rows took the unmasked time, half deterministic;
                                                                 # 19.6 before the transposes of dO and Q)
}
bad = []
for key, (mape, rows) in sorted(limits.items()):
    g = groups.get(key)
    if g is None:
        bad.append("%s: no group" % "/".join(key))
        continue
    print("%s: %d rows (%d refused), MAPE %.2f %%, bias %+.2f %%, Spearman %s"
          % ("/".join(key), g["rows"], g["refused"], g["mape_pct"], g["bias_pct"],
             g["spearman_tflops"]))
    if g["rows"] < rows or g["mape_pct"] > mape:
        bad.append("%s: %d rows, MAPE %.2f %% (limit %.1f %%, %d rows)"
                   % ("/".join(key), g["rows"], g["mape_pct"], mape, rows))
every = groups[("all", "all", "all", "all")]
print("all: %d rows, MAPE %.2f %%, Spearman %.3f" % (every["rows"], every["mape_pct"],
                                                     every["spearman_tflops"]))
if every["mape_pct"] > 14.5 or every["spearman_tflops"] < 0.90:
    bad.append("all rows: MAPE %.2f %%, Spearman %.3f" % (every["mape_pct"],
                                                         every["spearman_tflops"]))
# every row is either compared or refused with a reason, and only the
# documented refusals occur: head dims above 256, the deterministic
# backward of cuDNN's closed engines, and FlashAttention-4's sm80
# forward above a V head dim of 128 (its accumulator spills)
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 921, "expected 921 rows, got %d" % len(rows)
# the deterministic rows scored in two groups above leave the others'
# figures where they were (12.7 %; FA4 11.6 % since its dQ reduction bound)
for key, mape in ((("a100-pcie-80gb", "cudnn_oss"), 14.0), (("h200-sxm-141gb", "flash4"), 12.5)):
    ape = [float(r["ape_pct"]) for r in rows if (r["gpu"], r["impl"]) == key and
           r["pass"] == "bwd" and r["deterministic"] == "0" and r["status"] == "ok"]
    if len(ape) != 61 or sum(ape) / len(ape) > mape:
        bad.append("%s bwd, not deterministic: %d rows, MAPE %.2f %% (limit %.1f %%)"
                   % ("/".join(key), len(ape), sum(ape) / max(len(ape), 1), mape))
for r in rows:
    if r["status"] == "refused":
        ok = ("256" in r["message"] and int(r["head_dim"]) > 256) or \
             ("deterministic" in r["message"] and r["deterministic"] == "1" and r["impl"] == "cudnn") or \
             ("spills" in r["message"] and r["impl"] == "flash4" and r["gpu"].startswith("a100")
              and int(r["head_dim_vo"] or r["head_dim"]) > 128)
        if not ok:
            bad.append("refused %s %s %s: %s" % (r["gpu"], r["impl"], r["pass"], r["message"]))
assert not bad, "; ".join(bad[:10])
PY
    fail "attention accuracy: $(tr '\n' ';' <"$TMP/check")"
else
    sed "s/^/attention accuracy: /" "$TMP/check"
fi
finish attention-accuracy
