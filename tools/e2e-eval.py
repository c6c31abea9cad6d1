#!/usr/bin/env python3
"""Whole-model accuracy of `tilecast predict model` on measured end-to-end times.

Usage: tools/e2e-eval.py [--data DIR] [--analytical] [--json] [-- EXTRA...]

Reads two measured files (DIR: $TILECAST_MEASURED_DATA, else
build/db/sources):
  e2e_serving.csv  a serving engine's prefill time of a batch and time per
                   generated token (Llama-2-70B, TP 2/4/8, A100-SXM4-80GB);
                   rows flagged by the source's converter are left out, and
                   the 5 repeats of a configuration are one median;
  e2e_models.csv   whole-model forward (inference) and forward + backward
                   (training) times of fp32 eager models on one GPU; GPUs
                   without a spec file are left out.
Each configuration is predicted with `tilecast predict model --json` from
the model dimensions in the row (serving rows with --serving; prefill:
--inference --seq PROMPT
--micro-batch BATCH; decode: --decode CONTEXT, CONTEXT the mean KV length
of the run; training: --train, forward + backward against fw + bw).
EXTRA arguments go to every predict call (e.g. --graphs).

Prints, per group (phase, GPU, TP), the configurations, MAPE, median
signed error (negative: too fast), and for decode the measured and
predicted time per token at batch 1 by TP, the trend the model must follow.
The tilecast binary is $TILECAST_BIN, else build/tools/tilecast, else
`tilecast` on PATH. Exit status: 0 ok, 1 usage, 2 missing data, 3 a
tilecast call failed.
"""
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tc_tools import ROOT, measured_dir  # noqa: E402
from tc_tools import die as _die  # noqa: E402
from tc_tools import tilecast_bin as _tilecast_bin  # noqa: E402


def die(msg, code):
    _die("e2e-eval", msg, code)


def tilecast_bin():
    return _tilecast_bin("e2e-eval")





# the activation as tilecast names it: Hugging Face's gelu_new (GPT-2) is its
# own (eight eager kernels); OPT's relu is taken as one kernel, as a GeLU is
ACT = {"swiglu": "swiglu", "gelu": "gelu", "gelu_new": "gelu_new", "relu": "gelu"}

# The dropout probabilities (hidden, attention) of the Hugging Face classes
# the rows name (hf_class): the defaults of transformers' BertConfig
# (hidden_dropout_prob, attention_probs_dropout_prob), GPT2Config
# (resid_pdrop, attn_pdrop) and OPTConfig (dropout, attention_dropout), which
# the published bert-large, gpt2-large and opt-1.3b configs keep. Only a
# train()-mode forward drops (NeuSight's training rows); the model applies
# them to training steps alone.
DROPOUT = (("Bert", 0.1, 0.1), ("GPT2", 0.1, 0.1), ("OPT", 0.1, 0.0))


def dropout_keys(r):
    for prefix, hidden, attn in DROPOUT:
        if (r.get("hf_class") or "").startswith(prefix):
            return ["dropout: %g" % hidden, "attention_dropout: %g" % attn]
    return []


def head_keys(r):
    # the source's head (measured-README: BERT inference is a 2-label
    # classifier, "pooled_cls_2_labels", with no vocabulary projection; the
    # others compute logits over all tokens)
    m = re.match(r"pooled_cls_(\d+)_labels$", r.get("logits") or "")
    return ["num_labels: %s" % m.group(1)] if m else []


def config_yaml(r, dtype):
    kv = r.get("kv_heads") or r["heads"]
    return "\n".join([
        "name: %s" % r["model"], "hidden: %s" % r["hidden"], "heads: %s" % r["heads"],
        "kv_heads: %s" % kv, "layers: %s" % r["layers"], "ffn: %s" % r["ffn"],
        "activation: %s" % ACT.get(r["activation"], "gelu"),
        "norm: %s" % ("rmsnorm" if r["norm"] == "rmsnorm" else "layernorm"),
        "vocab: %s" % r["vocab"], "dtype: %s" % dtype, "seq: %s" % (r.get("seq") or 4096),
        # Hugging Face's attn_implementation="eager" (NeuSight's trace.py):
        # its scale and mask run as kernels of their own
        "attention: %s" % ("eager" if r.get("attention") == "eager" else "flash"),
        # Llama rotates q and k with RoPE (Touvron et al. 2023, section 2.2);
        # BERT, GPT-2, GPT-3 and OPT learn absolute positions
        "rope: %s" % ("true" if "llama" in (r.get("hf_config") or r["model"]).lower() else "false"),
        ] + dropout_keys(r) + head_keys(r) + [""])


def predict(tc, cfg_path, gpu, args, extra, without_optimizer=False):
    """The predicted step in ms; without_optimizer: forward + backward only,
    as a run that times loss.backward() and no optimizer step measures (the
    step's optimizer op taken out of the GPU's time; its one host dispatch,
    tens of us, is left in the host's)."""
    cmd = [tc, "predict", "model", "--gpu", gpu, "--config", cfg_path, "--json"] + args + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die("%s failed (exit %d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[:400]), 3)
    d = json.loads(p.stdout)
    if isinstance(d, list):
        d = d[0]
    if without_optimizer:
        opt = [o for o in d["ops"] if o["name"] == "optimizer"]
        if opt:
            gpu_us = d["gpu_time_us"] - opt[0]["time_us"]
            return (max(gpu_us, d["host_time_us"]) + d["engine_time_us"]) / 1000.0
    return d["step_time_us"] / 1000.0


def main(argv):
    data, as_json, extra = None, False, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if a == "--data":
            if i + 1 >= len(argv):
                die("--data needs a value", 1)
            data = argv[i + 1]
            i += 2
        elif a == "--json":
            as_json = True
            i += 1
        elif a == "--analytical":
            extra.append("--analytical")
            i += 1
        elif a == "--":
            extra += argv[i + 1:]
            break
        else:
            die("unknown argument '%s' (see --help)" % a, 1)
    data = measured_dir(data)
    tc = tilecast_bin()
    specs = subprocess.run([tc, "specs", "list", "--csv"], capture_output=True, text=True,
                           check=True).stdout
    known = {r["id"] for r in csv.DictReader(specs.splitlines())}
    work = tempfile.mkdtemp(prefix="tilecast-e2e.")
    results = []
    try:
        serving = os.path.join(data, "e2e_serving.csv")
        models = os.path.join(data, "e2e_models.csv")
        for f in (serving, models):
            if not os.access(f, os.R_OK):
                die("%s is missing (build first: the build decompresses db/sources/)" % f, 2)
        groups = {}
        for r in csv.DictReader(open(serving, newline="")):
            if r["flag"]:
                continue
            key = (r["phase"], r["gpu"], int(r["tp"]), int(r["batch"]), int(r["prompt_tokens"]),
                   round(float(r["decode_context_mean"] or 0)))
            groups.setdefault(key, {"row": r, "ms": []})["ms"].append(float(r["time_ms"]))
        cfgs = {}
        for (phase, gpu, tp, batch, prompt, ctx), g in sorted(groups.items()):
            r = g["row"]
            if r["model"] not in cfgs:
                path = os.path.join(work, r["model"] + ".yaml")
                with open(path, "w") as f:
                    f.write(config_yaml(r, r["dtype"]))
                cfgs[r["model"]] = path
            # a serving engine's step: its per-step work, last-token logits
            args = ["--tp", str(tp), "--micro-batch", str(batch), "--serving"]
            if phase == "prefill":
                args += ["--inference", "--seq", str(prompt)]
            else:
                args += ["--decode", str(ctx)]
            pred = predict(tc, cfgs[r["model"]], gpu, args, extra)
            results.append({"set": "serving", "phase": phase, "gpu": gpu, "tp": tp, "batch": batch,
                            "prompt": prompt, "context": ctx,
                            "measured_ms": statistics.median(g["ms"]), "predicted_ms": pred})
        for r in csv.DictReader(open(models, newline="")):
            # "no_tilecast_spec" marks GPUs that had no spec file when the
            # data was converted: their rows count once a spec exists
            if r["gpu"] not in known or r["flag"] not in ("", "no_tilecast_spec"):
                continue
            key = r["model"] + "-" + r["gpu"]
            path = os.path.join(work, key + ".yaml")
            with open(path, "w") as f:
                f.write(config_yaml(r, r["dtype"]))
            train = r["mode"] == "train"
            args = ["--micro-batch", r["batch"], "--seq", r["seq"],
                    "--train" if train else "--inference"]
            # the source times forward and loss.backward() with no optimizer
            # (measured-README): the run held no Adam state, which the
            # memory check counts, so a run that fitted is not refused
            if train:
                args.append("--ignore-memory")
            meas = float(r["e2e_ms"]) if train else float(r["fw_ms"])
            pred = predict(tc, path, r["gpu"], args, extra, without_optimizer=train)
            results.append({"set": "models", "phase": "training" if train else "inference",
                            "gpu": r["gpu"], "tp": 1, "batch": int(r["batch"]),
                            "prompt": int(r["seq"]), "context": 0, "model": r["model"],
                            "measured_ms": meas, "predicted_ms": pred})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for r in results:
        r["signed_pct"] = (r["predicted_ms"] - r["measured_ms"]) / r["measured_ms"] * 100
    if as_json:
        print(json.dumps(results, indent=1))
        return 0
    summary = {}
    for r in results:
        summary.setdefault((r["set"], r["phase"], r["gpu"], r["tp"]), []).append(r["signed_pct"])
    print("| set | phase | GPU | TP | configs | MAPE % | signed median % |")
    print("|---|---|---|---:|---:|---:|---:|")
    for key in sorted(summary):
        s = summary[key]
        print("| %s | %s | %s | %d | %d | %.1f | %+.1f |" % (
            key + (len(s), sum(abs(x) for x in s) / len(s), statistics.median(s))))
    trend = sorted((r["tp"], r["measured_ms"], r["predicted_ms"]) for r in results
                   if r["phase"] == "decode" and r["batch"] == 1 and r["prompt"] == 512
                   and r["context"] < 600)
    if trend:
        print("decode, batch 1, prompt 512, first tokens: " + "; ".join(
            "TP %d measured %.1f ms, predicted %.1f ms" % t for t in trend))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
