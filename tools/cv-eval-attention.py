#!/usr/bin/env python3
"""Held-out table of the attention predictor on the development file.

Usage: tools/cv-eval-attention.py [--by gpu|model|all] [--data DIR] [--json]

attention_fused.csv (DIR, default $TILECAST_MEASURED_DATA, else
build/db/sources) is split into folds: --by gpu holds out one GPU at a time
(the database gets the other GPU's rows), --by model one model folder of
the source at a time (the database gets every other model's rows, of both
GPUs: other shapes of the same GPU, impl, dtype and pass). Each fold's rows
are imported into a fresh database (`tilecast db import --format csv`) and
the held-out rows are predicted with that database alone (`tilecast eval
--attention --db`: measured, calibrated or the model, whichever the
predictor answers; the prebuilt databases, which hold the very rows, are
hidden) and by the analytical model.

Per (held out, GPU, impl, dtype, pass) it prints the rows compared (the
model's refusals left out of both), the MAPE of the analytical model and of
the predictor with the fold's database, the latter's median signed error
(negative = too fast) and which source its answers came from. The
tilecast binary is $TILECAST_BIN, else build/tools/tilecast, else
`tilecast` on PATH. Exit status: 0 ok, 1 usage, 2 missing data, 3 a
tilecast step failed.
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tc_tools import measured_dir  # noqa: E402
from tc_tools import die as _die  # noqa: E402
from tc_tools import tilecast_bin as _tilecast_bin  # noqa: E402


def die(msg, code):
    _die("cv-eval-attention", msg, code)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die("%s: exit %d: %s" % (" ".join(cmd[:4]), r.returncode, r.stderr.strip()[-400:]), 3)
    return r.stdout


def write_rows(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def per_row(tc, rows_csv, db):
    """The per-row output of eval --attention: {line index: row dict}."""
    out = rows_csv + (".db.csv" if db else ".an.csv")
    cmd = [tc, "eval", "--attention", "--input", rows_csv, "--output", out, "--csv"]
    if db:
        cmd += ["--db", db]
    run(cmd)
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


def fold(tc, tmp, name, header, train, test):
    db = os.path.join(tmp, name + ".db")
    train_csv = os.path.join(tmp, name + "-train.csv")
    test_csv = os.path.join(tmp, name + "-test.csv")
    write_rows(train_csv, header, train)
    write_rows(test_csv, header, test)
    run([tc, "db", "import", "--format", "csv", train_csv, "--into", db])
    return zip(per_row(tc, test_csv, None), per_row(tc, test_csv, db))


def main(argv):
    by, data, as_json = "all", None, False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if a == "--by" and i + 1 < len(argv) and argv[i + 1] in ("gpu", "model", "all"):
            by = argv[i + 1]
            i += 2
        elif a == "--data" and i + 1 < len(argv):
            data = argv[i + 1]
            i += 2
        elif a == "--json":
            as_json = True
            i += 1
        else:
            print(__doc__.strip(), file=sys.stderr)
            return 1
    path = os.path.join(measured_dir(data), "attention_fused.csv")
    if not os.path.isfile(path):
        die("%s is missing (build first: it is decompressed from db/sources/)" % path, 2)
    tc = _tilecast_bin("cv-eval-attention")
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = list(reader)
    col = {n: k for k, n in enumerate(header)}
    folds = []
    if by in ("gpu", "all"):
        for g in sorted({r[col["gpu"]] for r in rows}):
            folds.append(("gpu " + g, [r for r in rows if r[col["gpu"]] != g],
                          [r for r in rows if r[col["gpu"]] == g]))
    if by in ("model", "all"):
        for m in sorted({r[col["model"]] for r in rows}):
            folds.append(("model " + m, [r for r in rows if r[col["model"]] != m],
                          [r for r in rows if r[col["model"]] == m]))
    groups = defaultdict(lambda: {"an": [], "db": [], "signed": [], "src": defaultdict(int)})
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, train, test) in enumerate(folds):
            kind = name.split()[0]
            for an, db in fold(tc, tmp, "fold%d" % k, header, train, test):
                if an["status"] != "ok" or db["status"] != "ok":
                    continue
                key = ("one " + kind, an["gpu"], an["impl"], an["dtype"], an["pass"])
                g = groups[key]
                g["an"].append(float(an["ape_pct"]))
                g["db"].append(float(db["ape_pct"]))
                g["signed"].append(float(db["signed_pct"]))
                g["src"][db["source"]] += 1
    table = []
    for key in sorted(groups):
        g = groups[key]
        table.append({
            "held_out": key[0], "gpu": key[1], "impl": key[2], "dtype": key[3], "pass": key[4],
            "rows": len(g["an"]),
            "mape_analytical_pct": round(statistics.fmean(g["an"]), 2),
            "mape_default_pct": round(statistics.fmean(g["db"]), 2),
            "bias_default_pct": round(statistics.median(g["signed"]), 2),
            "came_from": ", ".join("%s %d" % kv for kv in sorted(g["src"].items())),
        })
    if as_json:
        json.dump(table, sys.stdout, indent=1)
        print()
        return 0
    print("| held out | GPU | impl | dtype | pass | rows | MAPE analytical % | MAPE default % "
          "| bias default % | default came from |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---|")
    for t in table:
        print("| %s | %s | %s | %s | %s | %d | %.2f | %.2f | %+.2f | %s |" % (
            t["held_out"], t["gpu"], t["impl"], t["dtype"], t["pass"], t["rows"],
            t["mape_analytical_pct"], t["mape_default_pct"], t["bias_default_pct"],
            t["came_from"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
