#!/usr/bin/env python3
"""Predictions per second from Python through predict_gemm_batch (one C call
for a list of shapes), including building the input arrays from a Python
list of tuples and turning the results back into Python lists.

    python3 python/bench.py [--rows N] [--repeat R] [--gpu ID] [--db FILE]

Prints figures; asserts nothing (speed is not a test)."""

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tilecast  # noqa: E402


def shapes(n, seed=1):
    rng = random.Random(seed)
    dims = [rng.randrange(1, 16385) for _ in range(3 * n)]
    return list(zip(dims[0::3], dims[1::3], dims[2::3]))


def measure(label, fn, rows, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = fn()
        best = min(best, time.perf_counter() - t0)
        assert len(res["time_us"]) == rows
    print("%-48s %10d rows  %8.3f s  %12.0f predictions/s" % (label, rows, best, rows / best))
    return rows / best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gpu", default="h100-sxm5-80gb")
    ap.add_argument("--db", action="append", default=[])
    args = ap.parse_args()

    rows = shapes(args.rows)
    print("tilecast %s (%s), Python %s" % (tilecast.version(), tilecast.library_path(),
                                           sys.version.split()[0]))
    ana = tilecast.Predictor(analytical=True)
    measure("batch, analytical (list of tuples in, lists out)",
            lambda: ana.predict_gemm_batch(args.gpu, rows, dtype="bf16"), args.rows, args.repeat)
    default = tilecast.Predictor(args.db)
    measure("batch, default predictor (prebuilt/--db calibration)",
            lambda: default.predict_gemm_batch(args.gpu, rows, dtype="bf16"), args.rows,
            args.repeat)
    few = rows[:min(args.rows, 20000)]
    t0 = time.perf_counter()
    for m, n, k in few:
        ana.predict_gemm(args.gpu, m, n, k, dtype="bf16")
    dt = time.perf_counter() - t0
    print("%-48s %10d rows  %8.3f s  %12.0f predictions/s" % ("one call per shape, analytical",
                                                              len(few), dt, len(few) / dt))


if __name__ == "__main__":
    main()
