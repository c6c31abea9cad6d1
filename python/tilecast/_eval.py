"""Calibrating a database, and comparing predictions with measurements: the
figures `tilecast db calibrate`, `tilecast eval` and `tilecast predict layer
--measured` print, computed by the same library calls."""

import math
import os
from ctypes import byref, c_double, c_void_p, sizeof

from . import _lib
from ._core import (_check, _dtype, _dtype_name, _raise, _specs, _struct_dict, _text,
                    predictor as _predictor, source_name)
from ._lib import EvalPoint, EvalStats, TimingCost
from .errors import InvalidError

TC_DB_READONLY = 0
TC_DB_READWRITE = 1


def _summary_dict(s):
    d = _struct_dict(s)
    d["dtype"] = _dtype_name(d["dtype"])
    return d


def calibrate_db(path, *, gpu=None, dtype=None, store=True, specs_dir=None):
    """Fits the calibration of each GPU and dtype whose ok GEMM rows the
    database at path holds (or only gpu, an exact id, and dtype) and, with
    store, stores each fit in the database, as `tilecast db calibrate` does
    (store=False is its --dry-run and opens the file read-only). Returns one
    dict per fit: gpu_id, dtype, rows, the fitted scales (c_compute,
    c_memory, c_overhead, align_16b, align_4b, align_elem, host_event_us,
    host_wall_us), the fit's errors (fit_p50_pct, fit_p90_pct,
    heldout_mape_pct, interval_lo_pct, interval_hi_pct) and stored. An empty
    list when no pair has rows the model takes."""
    specs = _specs(specs_dir)
    h = c_void_p()
    _check(_lib.function("tc_db_open")(os.fsencode(path),
                                          TC_DB_READWRITE if store else TC_DB_READONLY,
                                          byref(h)))
    report = c_void_p()
    try:
        _check(_lib.function("tc_db_calibrate")(
            h, specs._h, gpu.encode() if gpu else None, -1 if dtype is None else _dtype(dtype),
            bool(store), byref(report)))
        at = _lib.function("tc_calib_report_at")
        n = _lib.function("tc_calib_report_count")(report)
        return [_summary_dict(at(report, i).contents) for i in range(n)]
    finally:
        _lib.function("tc_calib_report_free")(report)
        _lib.function("tc_db_close")(h)


def timing_host_cost(timing):
    """The host cost a timing method (a measured data's tag, e.g.
    'event-fastest5-mean') adds to kernel time: a dict of typical_us,
    floor_us, lo_us and hi_us, a plain GEMM call's (mm, bmm), and linear_us,
    what nn.Linear's longer host path adds on top of each (all 0 for
    kernel-time and unknown tags)."""
    c = TimingCost()
    _check(_lib.function("tc_timing_host_cost")(timing.encode() if timing else None, byref(c)))
    return {name: getattr(c, name) for name in ("typical_us", "floor_us", "lo_us", "hi_us",
                                                "linear_us")}


TC_ERR_INVALID = -1


def _invalid(msg):
    return InvalidError(msg, TC_ERR_INVALID)


def _doubles(values, what):
    try:
        return (c_double * len(values))(*map(float, values))
    except (TypeError, ValueError) as e:
        raise _invalid("%s: %s" % (what, e)) from None


def eval_stats(measured_us, predicted_us, flops=None):
    """The statistics `tilecast eval` prints for predictions of measured times
    (equal-length sequences, in us): mape_pct, median_ape_pct, p90_ape_pct,
    bias_pct (the median signed error, positive when the prediction is
    slower) and spearman_tflops, the rank correlation of measured and
    predicted TFLOP/s (flops: the work of each row; without it every row
    counts as the same work, so the correlation is that of speeds). NaN
    where a figure has no meaning (no rows; below 3 for the correlation)."""
    meas = list(measured_us)
    pred = list(predicted_us)
    work = [1e6] * len(meas) if flops is None else list(flops)
    if len(pred) != len(meas) or len(work) != len(meas):
        raise _invalid("eval_stats: measured_us, predicted_us and flops differ in length")
    points = (EvalPoint * max(1, len(meas)))()
    for i, (m, p, f) in enumerate(zip(meas, pred, work)):
        m, p, f = float(m), float(p), float(f)
        if not (m > 0 and p > 0):
            raise _invalid("eval_stats: row %d: times must be positive" % i)
        signed = (p - m) / m * 100.0
        points[i] = EvalPoint(abs(signed), signed, f / (m * 1e6), f / (p * 1e6))
    out = EvalStats()
    _check(_lib.function("tc_eval_stats")(points, len(meas), sizeof(EvalPoint), byref(out)))
    return {name: getattr(out, name) for name, _ in EvalStats._fields_ if name != "reserved"}


def spearman(x, y):
    """Spearman's rank correlation of two equal-length sequences (ties share
    their mean rank); NaN below 3 values or when either side is constant."""
    x, y = list(x), list(y)
    if len(x) != len(y):
        raise _invalid("spearman: x and y differ in length")
    if len(x) < 3:
        return math.nan
    return _lib.function("tc_spearman")(_doubles(x, "x"), _doubles(y, "y"), len(x))


def compare_layers(path, *, min_time_us=20.0, predictor=None, db=None, analytical=False,
                   prebuilt=True):
    """Predicts the four GEMMs of each measured layer in the CSV at path
    (Vidur's per-operation rows: gpu, dtype, m, n, k, layout, time_us,
    model, tp, vidur_op) and compares the predicted layer sums with the
    measured ones, as `tilecast predict layer --measured` does. Returns one
    dict per (gpu_id, model) with layers, mape_pct, median_ape_pct,
    p90_ape_pct and source, the last the pooled one (gpu_id and model
    'all'). predictor: a Predictor to use; else one is made from db,
    analytical and prebuilt."""
    p = predictor or _predictor(db, analytical=analytical, prebuilt=prebuilt)
    report = c_void_p()
    with p._lock:
        rc = _lib.function("tc_layer_compare")(p._h, p._specs._h, os.fsencode(path),
                                               float(min_time_us), byref(report))
    try:
        if rc < 0:
            _raise(rc)
        at = _lib.function("tc_layer_report_at")
        out = []
        for i in range(_lib.function("tc_layer_report_count")(report)):
            d = _struct_dict(at(report, i).contents)
            d["source"] = source_name(d["source"])
            out.append(d)
        return out
    finally:
        _lib.function("tc_layer_report_free")(report)


__all__ = ["calibrate_db", "compare_layers", "eval_stats", "spearman", "timing_host_cost"]
