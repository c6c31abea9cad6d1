#!/usr/bin/env python3
"""How well a measured GEMM CSV predicts itself within each sweep.

Usage: tools/sweep-ceiling.py MEASURED_CSV [--min-time-us T] [--sweep COL[+COL...]]

Predicts every row of a sweep (rows measured together, one dimension
varying: Vidur's token sweeps, the cookbook's m_sweep and bsweep) from its
two measured neighbours in the same sweep: the time is interpolated linearly
in log(time) over log(FLOPs) between the nearest rows with fewer and with
more FLOPs. Rows at either end of a sweep have no such pair and are left
out. It prints, per GPU and dtype, the rows compared, the MAPE of that
interpolation and the Spearman rank correlation of measured and interpolated
TFLOP/s within each sweep (sweeps with at least 5 rows: how many, the lowest
and the median), the same statistics `tilecast eval` prints for a model.

The sweep columns should name series in which one dimension varies (for
the cookbook's bsweep, whose batch and size both vary, pass --sweep sweep+k).
A smooth predictor cannot do much better than the data's own neighbours:
these figures bound what to expect of any model on the rows' jaggedness
(library heuristics, clocks, run-to-run noise). Rows measured below
--min-time-us (default 20) are skipped, as eval skips them. The sweep
columns default to `sweep` where the file has it, else model+tp+vidur_op.

Given the per-row output of `tilecast eval --output` (the measured columns
plus pred_time_us), it also prints, per GPU and dtype, the model's MAPE and
the MAPE left after removing each sweep's own median log error from the
model's predictions: an oracle no held-out calibration has, which shows how
much of the model's error is a per-sweep bias and how much lies within the
sweeps. Rows without a prediction (eval's failed rows) are left out of that
table.
Exit status: 0 ok, 1 usage, 2 bad input.
"""
import csv
import math
import sys


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for t in range(i, j + 1):
            r[order[t]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def median(v):
    """The median of a sorted list (NaN if empty)."""
    n = len(v)
    return (v[(n - 1) // 2] + v[n // 2]) / 2 if n else float("nan")


def usage(code):
    print(__doc__.strip(), file=sys.stderr if code else sys.stdout)
    sys.exit(code)


def main(argv):
    path, min_time, sweep_spec = None, 20.0, None
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            usage(0)
        elif a in ("--min-time-us", "--sweep"):
            if i + 1 >= len(argv):
                print(f"sweep-ceiling: {a} needs a value", file=sys.stderr)
                sys.exit(1)
            if a == "--sweep":
                sweep_spec = argv[i + 1]
            else:
                try:
                    min_time = float(argv[i + 1])
                except ValueError:
                    print(f"sweep-ceiling: --min-time-us: '{argv[i + 1]}' is not a number",
                          file=sys.stderr)
                    sys.exit(1)
            i += 2
            continue
        elif a.startswith("-"):
            print(f"sweep-ceiling: unknown option '{a}' (see --help)", file=sys.stderr)
            sys.exit(1)
        elif path:
            print("sweep-ceiling: one CSV at a time", file=sys.stderr)
            sys.exit(1)
        else:
            path = a
        i += 1
    if not path:
        usage(1)
    try:
        f = open(path, newline="")
    except OSError as e:
        print(f"sweep-ceiling: {path}: {e.strerror}", file=sys.stderr)
        sys.exit(2)
    with f:
        rd = csv.DictReader(f)
        header = rd.fieldnames or []
        for c in ("gpu", "dtype", "batch", "m", "n", "k", "time_us"):
            if c not in header:
                print(f"sweep-ceiling: {path}:1: no '{c}' column", file=sys.stderr)
                sys.exit(2)
        if sweep_spec:
            cols = sweep_spec.split("+")
        elif "sweep" in header:
            cols = ["sweep"]
        else:
            cols = ["model", "tp", "vidur_op"]
        missing = [c for c in cols if c not in header]
        if missing:
            print(f"sweep-ceiling: {path}:1: no sweep column '{missing[0]}'", file=sys.stderr)
            sys.exit(2)
        sweeps = {}
        has_pred = "pred_time_us" in header
        model = {}  # (gpu, dtype) -> sweep key -> [(time, predicted)]
        for line, r in enumerate(rd, start=2):
            if not r.get("time_us"):
                continue  # efficiency rows carry no time
            try:
                flops = 2.0 * float(r["batch"]) * float(r["m"]) * float(r["n"]) * float(r["k"])
                t = float(r["time_us"])
            except (TypeError, ValueError):
                print(f"sweep-ceiling: {path}:{line}: a dimension or time_us is not a number",
                      file=sys.stderr)
                sys.exit(2)
            if flops <= 0 or t <= 0:
                print(f"sweep-ceiling: {path}:{line}: dimensions and time must be positive",
                      file=sys.stderr)
                sys.exit(2)
            key = (r["gpu"], r["dtype"]) + tuple(r[c] for c in cols)
            shape = (flops, r["batch"], r["m"], r["n"], r["k"], r.get("layout", ""))
            sweeps.setdefault(key, {}).setdefault(shape, []).append(t)
            if has_pred and t >= min_time and r.get("pred_time_us"):
                try:
                    p = float(r["pred_time_us"])
                except ValueError:
                    print(f"sweep-ceiling: {path}:{line}: pred_time_us is not a number",
                          file=sys.stderr)
                    sys.exit(2)
                if p > 0:
                    model.setdefault(key[:2], {}).setdefault(key[2:], []).append(
                        (t, p, r["m"], r["n"], r["k"], r["batch"]))

    stats = {}
    for key, by_shape in sweeps.items():
        # a shape measured twice is one point, at the geometric mean
        pts = sorted((shape[0], math.exp(sum(math.log(t) for t in ts) / len(ts)))
                     for shape, ts in by_shape.items())
        meas, pred, apes = [], [], []
        for j in range(1, len(pts) - 1):
            fl, t = pts[j]
            if t < min_time:
                continue
            (fa, ta), (fb, tb) = pts[j - 1], pts[j + 1]
            if not fa < fl < fb:
                continue  # another shape of the same FLOPs: no interpolation
            w = (math.log(fl) - math.log(fa)) / (math.log(fb) - math.log(fa))
            ti = math.exp((1 - w) * math.log(ta) + w * math.log(tb))
            apes.append(abs(ti - t) / t * 100)
            meas.append(fl / t)
            pred.append(fl / ti)
        s = stats.setdefault(key[:2], {"apes": [], "rho": []})
        s["apes"] += apes
        if len(meas) >= 5:
            rho = spearman(meas, pred)
            if not math.isnan(rho):
                s["rho"].append(rho)

    print(f"Each row interpolated from its two neighbours in its sweep ({'+'.join(cols)}); "
          f"rows below {min_time:g} us skipped.")
    print(f"{'gpu':<16} {'dtype':<6} {'rows':>6} {'mape_pct':>9} {'sweeps':>7} "
          f"{'sweep_rho_min':>14} {'sweep_rho_median':>17}")
    for (gpu, dtype), s in sorted(stats.items()):
        if not s["apes"]:
            continue
        rho = sorted(s["rho"])
        n = len(rho)
        med = median(rho)
        print(f"{gpu:<16} {dtype:<6} {len(s['apes']):>6} "
              f"{sum(s['apes']) / len(s['apes']):>9.2f} {n:>7} "
              f"{rho[0] if n else float('nan'):>14.3f} {med:>17.3f}")
    if has_pred:
        print()
        print("The model's predictions (pred_time_us); the same with each sweep's own median "
              "log error removed (an oracle);")
        print("and that oracle plus the median step profile of the sweeps sharing the row's n or k "
              "(at the same m and batch).")
        print(f"{'gpu':<16} {'dtype':<6} {'rows':>6} {'mape_pct':>9} {'sweeps':>7} "
              f"{'oracle_mape_pct':>16} {'oracle_profile_mape_pct':>24}")
        for (gpu, dtype), by_sweep in sorted(model.items()):
            apes, oracle, profiled = [], [], []
            bias, at = {}, {}  # sweep -> median log error; (m, batch) -> [(sweep, n, k, e)]
            for sk, rows in by_sweep.items():
                bias[sk] = median(sorted(math.log(t / p) for t, p, *_ in rows))
                for t, p, m, nn, kk, b in rows:
                    at.setdefault((m, b), []).append((sk, nn, kk, math.log(t / p) - bias[sk]))
            for sk, rows in by_sweep.items():
                for t, p, m, nn, kk, b in rows:
                    apes.append(abs(p - t) / t * 100)
                    po = p * math.exp(bias[sk])
                    oracle.append(abs(po - t) / t * 100)
                    rel = sorted(e for s2, n2, k2, e in at[(m, b)]
                                 if s2 != sk and (n2 == nn or k2 == kk))
                    if rel:
                        po *= math.exp(median(rel))
                    profiled.append(abs(po - t) / t * 100)
            print(f"{gpu:<16} {dtype:<6} {len(apes):>6} {sum(apes) / len(apes):>9.2f} "
                  f"{len(by_sweep):>7} {sum(oracle) / len(oracle):>16.2f} "
                  f"{sum(profiled) / len(profiled):>24.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
