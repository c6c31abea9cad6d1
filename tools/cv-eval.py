#!/usr/bin/env python3
"""Leave-one-out generalisation table of the GEMM predictor.

Usage: tools/cv-eval.py [--by source|gpu|family|all] [--data DIR]
                        [--min-time-us T] [--json] [--keep DIR]

For every development source (Vidur, NeuSight A100, NeuSight V100, the
cookbook), every GPU and every architecture family in turn, the rows of
that fold are held out; the rest are imported into one database, which is
calibrated (`tilecast db calibrate`); then the held-out rows are predicted
by the default predictor with that database alone (`tilecast eval --db`:
whatever it answers, calibrated, transferred or analytical, as a user
would get it for a GPU, dtype, source or sweep it was never tuned on) and
by the analytical model (`--analytical`). The shipped prebuilt databases
are hidden from both (they hold the very rows held out).

Per fold and (GPU, dtype) it prints the rows compared (measured time at
least --min-time-us, default 20), the MAPE of the analytical model and of
the default predictor, the default predictor's median signed error (bias,
negative = too fast), the share of rows inside each one's 80 % interval
(coverage), and which source the default predictions came from. The last
lines name the worst fold of each.

DIR holds the measured CSVs (default: $TILECAST_MEASURED_DATA, else
build/db/sources, which the build decompresses from db/sources/). The
tilecast binary is $TILECAST_BIN, else build/tools/tilecast, else
`tilecast` on PATH. --keep DIR keeps each fold's database and per-row
output. Exit status: 0 ok, 1 usage, 2 missing data, 3 a tilecast step
failed.
"""
import csv
import json
import os
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
    _die("cv-eval", msg, code)


def tilecast_bin():
    return _tilecast_bin("cv-eval")


# The development sources with times (the rocBLAS tuning table has
# efficiencies only, and is scored by `tilecast eval` directly).
SOURCES = [
    ("vidur", "vidur_gemm.csv"),
    ("neusight-a100", "neusight_gemm.csv"),
    ("neusight-v100", "neusight_gemm_v100.csv"),
    ("cookbook", "cookbook_gemm.csv"),
]
COMMON = ["gpu", "dtype", "op", "batch", "m", "n", "k", "layout", "time_us", "tflops", "timing",
          "source"]




def run(tc, args, env, what):
    p = subprocess.run([tc] + args, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        die("%s failed (exit %d): %s" % (what, p.returncode, p.stderr.strip()[:800]), 3)
    return p.stdout


def families(tc):
    out = subprocess.run([tc, "specs", "list", "--csv"], capture_output=True, text=True,
                         check=True).stdout
    return {r["id"]: r["arch"] for r in csv.DictReader(out.splitlines())}


def load_rows(data):
    rows = []
    for name, fname in SOURCES:
        path = os.path.join(data, fname)
        if not os.access(path, os.R_OK):
            die("%s is missing (build first: the build decompresses db/sources/)" % path, 2)
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r.get("time_us"):
                    r["_src"] = name
                    rows.append(r)
    return rows


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COMMON)
        for r in rows:
            w.writerow([r[c] for c in COMMON])


def score(per_row, min_time):
    """{(gpu, dtype): stats} from `tilecast eval --output` rows."""
    groups = {}
    for r in per_row:
        if r["status"] != "ok" or float(r["time_us"]) < min_time:
            continue
        meas, pred = float(r["time_us"]), float(r["pred_time_us"])
        g = groups.setdefault((r["gpu"], r["dtype"]), {"ape": [], "signed": [], "cov": 0,
                                                       "src": {}})
        g["ape"].append(abs(pred - meas) / meas * 100)
        g["signed"].append((pred - meas) / meas * 100)
        g["cov"] += float(r["pred_lo_us"]) <= meas <= float(r["pred_hi_us"])
        src = r["pred_source"].replace("prediction (", "").rstrip(")")
        g["src"][src] = g["src"].get(src, 0) + 1
    out = {}
    for key, g in groups.items():
        n = len(g["ape"])
        out[key] = {"rows": n, "mape": sum(g["ape"]) / n, "bias": statistics.median(g["signed"]),
                    "coverage": 100.0 * g["cov"] / n,
                    "sources": ", ".join("%s %d" % kv for kv in sorted(g["src"].items()))}
    return out


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main(argv):
    by, data, min_time, as_json, keep = "all", None, 20.0, False, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if a in ("--by", "--data", "--min-time-us", "--keep"):
            if i + 1 >= len(argv):
                die("%s needs a value" % a, 1)
            v = argv[i + 1]
            i += 2
            if a == "--by":
                if v not in ("source", "gpu", "family", "all"):
                    die("--by: '%s' is not source, gpu, family or all" % v, 1)
                by = v
            elif a == "--data":
                data = v
            elif a == "--keep":
                keep = v
            else:
                try:
                    min_time = float(v)
                except ValueError:
                    die("--min-time-us: '%s' is not a number" % v, 1)
            continue
        if a == "--json":
            as_json = True
            i += 1
            continue
        die("unknown argument '%s' (see --help)" % a, 1)
    data = measured_dir(data)
    tc = tilecast_bin()
    fam = families(tc)
    rows = load_rows(data)
    for r in rows:
        if r["gpu"] not in fam:
            die("%s: GPU '%s' has no spec" % (r["_src"], r["gpu"]), 2)
        r["_family"] = fam[r["gpu"]]

    kinds = ["source", "gpu", "family"] if by == "all" else [by]
    work = tempfile.mkdtemp(prefix="tilecast-cv.")
    try:
        # a data directory with the shipped specs and no prebuilt databases
        datadir = os.path.join(work, "data")
        os.makedirs(os.path.join(datadir, "db", "prebuilt"))
        specs_dir = os.environ.get("TILECAST_DATA_DIR") or ROOT
        os.symlink(os.path.join(specs_dir, "gpu_specs"), os.path.join(datadir, "gpu_specs"))
        env = dict(os.environ, TILECAST_DATA_DIR=datadir)
        env.pop("TILECAST_SPECS_PATH", None)
        results = []
        for kind in kinds:
            key = {"source": "_src", "gpu": "gpu", "family": "_family"}[kind]
            for value in sorted({r[key] for r in rows}):
                test = [r for r in rows if r[key] == value]
                train = [r for r in rows if r[key] != value]
                fold = os.path.join(work, "%s-%s" % (kind, value))
                os.makedirs(fold)
                write_csv(os.path.join(fold, "train.csv"), train)
                write_csv(os.path.join(fold, "test.csv"), test)
                db = os.path.join(fold, "train.db")
                run(tc, ["db", "import", "--format", "csv", os.path.join(fold, "train.csv"),
                         "--into", db], env, "import (%s %s)" % (kind, value))
                run(tc, ["db", "calibrate", db], env, "calibrate (%s %s)" % (kind, value))
                scores = {}
                for mode, extra in (("default", ["--db", db]), ("analytical", ["--analytical"])):
                    out = os.path.join(fold, mode + ".csv")
                    run(tc, ["eval", "--input", os.path.join(fold, "test.csv"), "--min-time-us",
                             "0", "--group-by", "none", "--output", out, "--csv"] + extra, env,
                        "eval (%s %s, %s)" % (kind, value, mode))
                    scores[mode] = score(read_rows(out), min_time)
                for (gpu, dtype), d in sorted(scores["default"].items()):
                    a = scores["analytical"][(gpu, dtype)]
                    results.append({
                        "by": kind, "held_out": value, "gpu": gpu, "dtype": dtype,
                        "rows": d["rows"], "mape_analytical": round(a["mape"], 2),
                        "mape_default": round(d["mape"], 2), "bias_default": round(d["bias"], 2),
                        "coverage_default": round(d["coverage"], 1),
                        "coverage_analytical": round(a["coverage"], 1),
                        "default_sources": d["sources"]})
        if keep:
            shutil.copytree(work, keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if as_json:
        print(json.dumps(results, indent=1))
        return 0
    print("| by | held out | GPU | dtype | rows | MAPE analytical % | MAPE default % | bias default % "
          "| 80 % interval coverage, default / analytical | default came from |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---|")
    for r in results:
        print("| %s | %s | %s | %s | %d | %.2f | %.2f | %+.2f | %.1f / %.1f | %s |" % (
            r["by"], r["held_out"], r["gpu"], r["dtype"], r["rows"], r["mape_analytical"],
            r["mape_default"], r["bias_default"], r["coverage_default"], r["coverage_analytical"],
            r["default_sources"]))
    for kind in kinds:
        sel = [r for r in results if r["by"] == kind]
        wa = max(sel, key=lambda r: r["mape_analytical"])
        wd = max(sel, key=lambda r: r["mape_default"])
        print("worst fold by %s: analytical %.2f %% (%s, %s %s), default %.2f %% (%s, %s %s)" % (
            kind, wa["mape_analytical"], wa["held_out"], wa["gpu"], wa["dtype"],
            wd["mape_default"], wd["held_out"], wd["gpu"], wd["dtype"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
