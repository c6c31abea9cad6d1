"""Specs, predictors and the calls that turn C results into plain Python."""

import math
import os
import threading
from array import array
from ctypes import byref, c_int, POINTER, sizeof
from itertools import chain

from . import _lib
from ._lib import (AttentionPrediction, AttentionQuery, Cluster, GemmPrediction, GemmQuery,
                   MemopPrediction, MemopQuery, ModelConfig, ModelPrediction, Advice,
                   TC_ATTN_IMPL_COUNT, TC_DTYPE_COUNT, TC_MEMOP_KIND_COUNT)
from .errors import InvalidError, NotFoundError, ParseError, error_class

TC_ERR_INVALID = -1
TC_ERR_PARSE = -4
TC_ERR_NOT_FOUND = -5

# Rows per tc_predict_gemm_batch call in predict_gemm_batch (about 2.9 MB of
# results: they are read back while still in cache).
_BATCH_ROWS = 8192

# Labels of predicted values: everything but an exactly measured shape is a
# prediction of the model, and says so.
MEASURED = "measured"


def _text(b):
    return b.decode("utf-8", "replace") if b else ""


def last_error():
    """tc_last_error() of this thread."""
    return _text(_lib.function("tc_last_error")())


def _raise(code, context=None):
    msg = last_error() or _text(_lib.function("tc_strerror")(code))
    if context:
        msg = "%s: %s" % (context, msg)
    raise error_class(code)(msg, code)


def _check(code, context=None):
    if code < 0:
        _raise(code, context)
    return code


def version():
    """The library's version string."""
    return _text(_lib.function("tc_version")())


def api_version():
    """The library's API version as (major, minor, patch)."""
    v = _lib.function("tc_version_api")()
    return ((v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff)


def data_dir():
    """Where the library reads the shipped gpu_specs/ and db/prebuilt/."""
    return _text(_lib.function("tc_data_dir")())


_names_cache = {}


def _names(fn, count):
    names = _names_cache.get(fn)
    if names is None:
        f = _lib.function(fn)
        names = [_text(f(i)) for i in range(count)]
        _names_cache[fn] = names
    return names


def dtype_names():
    return list(_names("tc_dtype_name", TC_DTYPE_COUNT))


def _name(fn, count, value):
    names = _names(fn, count)
    return names[value] if 0 <= value < count else "?"


def source_name(v):
    return _name("tc_source_name", 4, v)


def _bound(v):
    return _name("tc_bound_name", 3, v)


def _align(v):
    return _name("tc_align_name", 4, v)


def _layout_name(v):
    return _name("tc_layout_name", 4, v)


def _dtype_name(v):
    return _name("tc_dtype_name", TC_DTYPE_COUNT, v)


def _impl_name(v):
    return _name("tc_attn_impl_name", TC_ATTN_IMPL_COUNT, v)


def _parse_enum(fn, count, what, value):
    if isinstance(value, bool):
        raise InvalidError("%s: %r is not a %s name" % (what, value, what), TC_ERR_INVALID)
    if isinstance(value, int):
        if not 0 <= value < count:
            raise InvalidError("%s: %d is out of range" % (what, value), TC_ERR_INVALID)
        return value
    if not isinstance(value, str):
        raise InvalidError("%s: %r is not a %s name" % (what, value, what), TC_ERR_INVALID)
    out = c_int()
    _check(_lib.function(fn)(value.encode(), byref(out)))
    return out.value


def _dtype(value):
    return _parse_enum("tc_dtype_parse", TC_DTYPE_COUNT, "dtype", value)


def _layout(value):
    return _parse_enum("tc_layout_parse", 4, "layout", value)


def _op(value):
    return _parse_enum("tc_gemm_op_parse", 3, "op", value)


def _impl(value):
    return _parse_enum("tc_attn_impl_parse", TC_ATTN_IMPL_COUNT, "attention implementation",
                       value)


def _memop_kind(value):
    return _parse_enum("tc_memop_kind_parse", TC_MEMOP_KIND_COUNT, "memory-bound kernel kind",
                       value)


def _int(value, what):
    """A Python int from value, refusing floats with a fraction and bools."""
    if isinstance(value, bool):
        raise InvalidError("%s: %r is not an integer" % (what, value), TC_ERR_INVALID)
    try:
        iv = int(value)
    except (TypeError, ValueError):
        raise InvalidError("%s: %r is not an integer" % (what, value), TC_ERR_INVALID) from None
    if iv != value and not isinstance(value, str):
        raise InvalidError("%s: %r is not an integer" % (what, value), TC_ERR_INVALID)
    if not -(1 << 63) <= iv < (1 << 63):
        raise InvalidError("%s: %d does not fit in 64 bits" % (what, iv), TC_ERR_INVALID)
    return iv


def _struct_dict(s, skip=()):
    out = {}
    for name, _type in s._fields_:
        if name in skip or name == "reserved":  # the structs' zeroed tails
            continue
        v = getattr(s, name)
        if isinstance(v, bytes):
            v = _text(v)
        out[name] = v
    return out


# --------------------------------------------------------------------------
# GPU specs
# --------------------------------------------------------------------------

def gpu_dict(g):
    """A struct tc_gpu as a plain dict (peaks keyed by dtype name, 0 = absent)."""
    d = _struct_dict(g, skip=("peak_tflops", "flops_per_clk_per_unit"))
    d["vendor"] = ("nvidia", "amd", "cpu")[g.vendor] if g.vendor in (0, 1, 2) else "?"
    d["arch"] = _name("tc_arch_name", 11, g.arch)
    names = _names("tc_dtype_name", TC_DTYPE_COUNT)
    d["peak_tflops"] = {names[i]: g.peak_tflops[i] for i in range(TC_DTYPE_COUNT)
                        if g.peak_tflops[i] > 0}
    d["flops_per_clk_per_unit"] = {names[i]: g.flops_per_clk_per_unit[i]
                                   for i in range(TC_DTYPE_COUNT)
                                   if g.flops_per_clk_per_unit[i] > 0}
    d["sources"] = [s.strip() for s in d["sources"].split(",") if s.strip()]
    d["flags"] = [s.strip() for s in d["flags"].split(";") if s.strip()]
    ic = g.interconnect
    d["interconnect"] = None if ic.link == 0 else {
        "link": _name("tc_link_name", 4, ic.link), "generation": ic.generation,
        "links": ic.links, "bw_gbps": ic.bw_gbps, "switched": bool(ic.switched),
        "pcie_gen": ic.pcie_gen}
    return d


class Specs:
    """A set of GPU specs: the shipped ones, $TILECAST_SPECS_PATH, and extra
    directories (colon-separated, like --specs-dir)."""

    def __init__(self, specs_dir=None):
        self._h = None
        self._free = _lib.function("tc_specs_free")
        h = _lib._P()
        _check(_lib.function("tc_specs_load")(None, byref(h)), "loading GPU specs")
        h = self._h = h.value
        if specs_dir:
            _check(_lib.function("tc_specs_add_dir")(h, os.fspath(specs_dir).encode()))
        self._by_id = {}

    def __del__(self):
        if getattr(self, "_h", None):
            self._free(self._h)
            self._h = None

    def __len__(self):
        return _lib.function("tc_specs_count")(self._h)

    def ids(self):
        at = _lib.function("tc_specs_at")
        return [_text(at(self._h, i).contents.id) for i in range(len(self))]

    def find(self, gpu_id):
        """The borrowed struct tc_gpu pointer for an id, given in any case or
        as a prefix of exactly one id; NotFoundError, naming the candidates,
        if there is no such GPU."""
        p = self._by_id.get(gpu_id)
        if p is not None:
            return p
        if not isinstance(gpu_id, str):
            raise InvalidError("gpu: %r is not a GPU id" % (gpu_id,), TC_ERR_INVALID)
        p = _lib.function("tc_specs_lookup")(self._h, gpu_id.encode())
        if not p:
            raise NotFoundError(last_error(), TC_ERR_NOT_FOUND)
        self._by_id[gpu_id] = p
        return p

    def gpu(self, gpu_id):
        return gpu_dict(self.find(gpu_id).contents)

    def all(self):
        at = _lib.function("tc_specs_at")
        return [gpu_dict(at(self._h, i).contents) for i in range(len(self))]


_default_specs = {}
_default_lock = threading.Lock()


def _specs(specs_dir=None):
    key = specs_dir or ""
    with _default_lock:
        s = _default_specs.get(key)
        if s is None:
            s = _default_specs[key] = Specs(specs_dir)
    return s


def specs(specs_dir=None):
    """Every GPU spec as a list of dicts."""
    return _specs(specs_dir).all()


def gpu(gpu_id, specs_dir=None):
    """One GPU spec as a dict; NotFoundError for an unknown id."""
    return _specs(specs_dir).gpu(gpu_id)


def parse_spec_file(path):
    """Parses and checks one GPU spec YAML file without adding it anywhere."""
    from ._lib import Gpu
    g = Gpu()
    _check(_lib.function("tc_specs_parse_file")(os.fspath(path).encode(), byref(g)))
    _check(_lib.function("tc_gpu_check")(byref(g)))
    return gpu_dict(g)


# --------------------------------------------------------------------------
# Predictions
# --------------------------------------------------------------------------

_GEMM_EXPLAIN = ("kernel", "tile_m", "tile_n", "tile_k", "stages", "warps", "split_k",
                 "cluster_m", "cluster_n", "stream_k", "tiles", "waves", "wave_eff",
                 "tile_eff", "blocks_per_sm", "occupancy", "compute_us", "memory_us",
                 "overhead_us", "neighbours", "neighbour_dist", "calib_gpu")


def _kind(source):
    return "measurement" if source == MEASURED else "prediction"


def _gemm_dict(gpu_id, q, p):
    source = source_name(p.source)
    explanation = {name: getattr(p, name) for name in _GEMM_EXPLAIN}
    explanation["kernel"] = _text(p.kernel)
    explanation["calib_gpu"] = _text(p.calib_gpu)
    explanation["bound"] = _bound(p.bound)
    explanation["align"] = _align(p.align)
    return {
        "gpu": gpu_id, "m": q.m, "n": q.n, "k": q.k, "batch": q.batch or 1,
        "dtype": _dtype_name(q.dtype), "layout": _layout_name(q.layout),
        "time_us": p.time_us, "tflops": p.tflops, "frac_peak": p.frac_peak,
        "source": source, "kind": _kind(source),
        "interval_us": (p.lo_us, p.hi_us), "interval_level": p.interval_level,
        "explanation": explanation,
    }


def _config_dict(cfg):
    d = _struct_dict(cfg)
    d["dtype"] = _dtype_name(cfg.dtype)
    d["attention"] = _impl_name(cfg.attention)
    return d


def _config_text(key, value):
    """A dict value as the text a YAML file would hold, for the library's
    setter: the keys, aliases and ranges are the library's, the same for a
    dict, a file and the command's flags."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # JSON numbers read back as floats
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as it (a dropout)
    if isinstance(value, str):
        return value
    raise InvalidError("model config '%s': %r is not a number, a name or true/false"
                       % (key, value), TC_ERR_INVALID)


def model_config(config):
    """A struct tc_model_config from a YAML path or a dict of fields, with the
    library's defaults for what is absent and its checks applied."""
    cfg = ModelConfig()
    if isinstance(config, ModelConfig):
        cfg = ModelConfig.from_buffer_copy(config)
    elif isinstance(config, (str, bytes, os.PathLike)):
        _lib.function("tc_model_config_defaults")(byref(cfg))
        _check(_lib.function("tc_model_config_load")(os.fsencode(config), byref(cfg)))
    elif isinstance(config, dict):
        _lib.function("tc_model_config_defaults")(byref(cfg))
        set_key = _lib.function("tc_model_config_set")
        field_of = _lib.function("tc_model_config_field")
        seen = {}
        for key, value in config.items():
            if not isinstance(key, str):
                raise InvalidError("model config: key %r is not a string" % (key,),
                                   TC_ERR_INVALID)
            # two keys that set one field (hidden and hidden_size, activation
            # and swiglu) are refused with the error a file gets for them
            field = field_of(key.encode())
            if not field:
                _raise(TC_ERR_INVALID, "model config")
            if field in seen:
                raise ParseError("model config: key '%s' sets %s, as '%s' did"
                                 % (key, _text(field), seen[field]), TC_ERR_PARSE)
            seen[field] = key
            _check(set_key(byref(cfg), key.encode(), _config_text(key, value).encode()),
                   "model config")
    else:
        raise InvalidError("model config must be a dict or a YAML file path, not %s"
                           % type(config).__name__, TC_ERR_INVALID)
    try:
        resolve = _lib.function("tc_model_config_resolve")
    except _lib.LibraryNotFound:
        resolve = None
    if resolve is not None:
        # its messages begin "model config: " themselves
        _check(resolve(byref(cfg)))
    return cfg


class Predictor:
    """Specs, optional databases and cached calibrations (a struct tc_predictor).

    dbs: database files whose measurements calibrate predictions.
    prebuilt: use the shipped databases (default on).
    analytical: ignore every database (the pure model).
    transfer: allow calibrations from other GPUs, labelled 'transferred'.
    timing: the timing convention of GEMM predictions (tc_predictor_set_timing):
    None or 'kernel' (kernel time), 'event', 'wall', 'wall-max' or a measured
    data's method tag; calibrated and transferred predictions then add that
    method's host cost (and nn.Linear's longer path for op='linear'). A tag
    of no known method's form (a misspelling such as 'evnet') raises
    InvalidError.
    """

    def __init__(self, dbs=(), *, prebuilt=True, analytical=False, transfer=True,
                 specs_dir=None, timing=None):
        self._h = None
        self._free = _lib.function("tc_predictor_free")
        self._specs = _specs(specs_dir)
        self._lock = threading.Lock()
        h = _lib.function("tc_predictor_new")(self._specs._h)
        if not h:
            _raise(TC_ERR_INVALID, "creating a predictor")
        self._h = h
        if isinstance(dbs, (str, os.PathLike)):
            dbs = [dbs]
        _lib.function("tc_predictor_use_prebuilt")(h, bool(prebuilt))
        _lib.function("tc_predictor_set_analytical")(h, bool(analytical))
        _lib.function("tc_predictor_allow_transfer")(h, bool(transfer))
        if timing is not None:
            if not _lib.function("tc_timing_known")(str(timing).encode()):
                raise InvalidError("timing: %r is not a known method (kernel, event, wall, "
                                   "wall-max, or a data tag such as event-fastest5-mean)"
                                   % (timing,), TC_ERR_INVALID)
            _check(_lib.function("tc_predictor_set_timing")(h, str(timing).encode()))
        for db in dbs:
            _check(_lib.function("tc_predictor_add_db")(h, os.fsencode(db)))
        self._batch = _lib.function("tc_predict_gemm_batch")
        self._one = _lib.function("tc_predict_gemm")

    def __del__(self):
        if getattr(self, "_h", None):
            self._free(self._h)
            self._h = None

    # GEMM ------------------------------------------------------------------

    def predict_gemm(self, gpu, m, n, k, *, dtype="fp16", layout="NN", batch=1,
                     lda=0, ldb=0, ldc=0, op="mm"):
        """Predicts one GEMM C[m x n] = A[m x k] . B[k x n] (row-major view;
        layout NT is nn.Linear). op: the PyTorch call ('mm', 'bmm' or 'linear'),
        which matters only under a host-timed timing convention. Returns a dict with time_us, tflops, source
        (measured/calibrated/transferred/analytical), interval_us and the
        explanation (configuration, tiles, waves, occupancy, bound, alignment)."""
        g = self._specs.find(gpu)
        q = GemmQuery(_int(m, "m"), _int(n, "n"), _int(k, "k"), _int(batch, "batch"),
                      _dtype(dtype), _layout(layout), _int(lda, "lda"), _int(ldb, "ldb"),
                      _int(ldc, "ldc"), _op(op))
        p = GemmPrediction()
        with self._lock:
            rc = self._one(self._h, g, byref(q), byref(p))
            if rc < 0:
                _raise(rc, "%s %dx%dx%d" % (gpu, q.m, q.n, q.k))
        return _gemm_dict(gpu, q, p)

    def predict_gemm_batch(self, gpu, shapes, *, dtype="fp16", layout="NN", batch=1,
                           errors="raise", as_frame=False):
        """Predicts many GEMMs through tc_predict_gemm_batch, with no Python
        code per row.

        shapes: rows of (m, n, k) or (m, n, k, batch) (a list of tuples, an
        (N, 3|4) numpy array) or a dict / DataFrame with columns m, n, k and
        optionally batch. Returns a dict of equal-length lists (gpu, dtype,
        layout, m, n, k, batch, time_us, tflops, frac_peak, lo_us, hi_us,
        source), or a pandas DataFrame with as_frame=True. errors='raise'
        raises on the first failing row with the library's message;
        errors='keep' gives NaN times, source None and an 'error' column
        naming each failed row's error.

        The rows go to the library in blocks of _BATCH_ROWS through one
        reused query and result buffer: one C call per block, memory that
        does not grow with the number of rows, and results still in cache
        when they are read back."""
        if errors not in ("raise", "keep"):
            raise InvalidError("errors must be 'raise' or 'keep', not %r" % (errors,),
                               TC_ERR_INVALID)
        g = self._specs.find(gpu)
        n_rows, cols = _shape_columns(shapes)
        template = GemmQuery(0, 0, 0, _int(batch, "batch"), _dtype(dtype), _layout(layout),
                             0, 0, 0)
        block = max(1, min(n_rows, _BATCH_ROWS))
        qstride = sizeof(GemmQuery) // 8
        qoffs = [getattr(GemmQuery, f).offset // 8 for f in ("m", "n", "k", "batch")]
        queries = array("q")
        queries.frombytes(bytes(template) * block)
        qaddr = queries.buffer_info()[0]
        out = (GemmPrediction * block)()
        errs = (c_int * block)()
        raw = memoryview(out).cast("B")
        doubles, ints = raw.cast("d"), raw.cast("i")
        codes_view = memoryview(errs).cast("B").cast("i")
        dstride, istride = sizeof(GemmPrediction) // 8, sizeof(GemmPrediction) // 4
        fields = [(name, getattr(GemmPrediction, name).offset // 8)
                  for name in ("time_us", "tflops", "frac_peak", "lo_us", "hi_us")]
        soff = GemmPrediction.source.offset // 4
        result = {name: [] for name, _ in fields}
        sources = []
        failed = []  # (row, code)
        with self._lock:
            for first in range(0, n_rows, block):
                count = min(block, n_rows - first)
                for off, col in zip(qoffs, cols):
                    if col is not None:
                        queries[off:count * qstride:qstride] = col[first:first + count]
                rc = self._batch(self._h, g, count, qaddr, out, errs)
                if rc < 0:
                    _raise(rc, "predict_gemm_batch")
                for name, off in fields:
                    result[name] += doubles[off:count * dstride:dstride].tolist()
                sources += ints[soff:count * istride:istride].tolist()
                if rc > 0:
                    codes = codes_view[:count].tolist()
                    failed += [(first + i, c) for i, c in enumerate(codes) if c]
                    if errors == "raise":
                        break
        if failed and errors == "raise":
            i, code = failed[0]
            row = GemmQuery.from_buffer_copy(template)
            row.m, row.n, row.k = cols[0][i], cols[1][i], cols[2][i]
            if cols[3] is not None:
                row.batch = cols[3][i]
            # The batch call keeps only the last message: ask again for this row's.
            p = GemmPrediction()
            with self._lock:
                again = self._one(self._h, g, byref(row), byref(p))
                msg = last_error() if again < 0 else ""
            msg = msg or _text(_lib.function("tc_strerror")(code))
            raise error_class(code)("row %d (m=%d, n=%d, k=%d, batch=%d): %s"
                                    % (i, row.m, row.n, row.k, row.batch or 1, msg), code)
        names = _names("tc_source_name", 4) + ["?"] * 4
        result["source"] = list(map(names.__getitem__, sources))
        if errors == "keep" and n_rows:
            strerror = _lib.function("tc_strerror")
            error = [None] * n_rows
            nan = math.nan
            for i, code in failed:
                error[i] = _text(strerror(code))
                result["source"][i] = None
                for name, _ in fields:
                    result[name][i] = nan
            result["error"] = error
        result["gpu"] = [gpu] * n_rows
        result["dtype"] = [_dtype_name(template.dtype)] * n_rows
        result["layout"] = [_layout_name(template.layout)] * n_rows
        result["m"], result["n"], result["k"] = (c.tolist() for c in cols[:3])
        if cols[3] is not None:
            result["batch"] = [b or 1 for b in cols[3]] if 0 in cols[3] else cols[3].tolist()
        else:
            result["batch"] = [template.batch or 1] * n_rows
        if as_frame:
            return _frame(result)
        return result

    # attention, models, advice --------------------------------------------

    def predict_attention(self, gpu, *, batch, heads, seq, head_dim, kv_heads=None,
                          seq_kv=None, impl="flash", dtype="fp16", causal=False,
                          backward=False, head_dim_vo=None, window=0, deterministic=False,
                          kv_splits=0, page_size=0, kv_dtype=None):
        """Predicts one attention (a fused kernel: flash, flash2, flash3, flash4, cudnn;
        or unfused; forward or backward). head_dim_vo: V/O head dim (default head_dim);
        window: causal sliding window in keys (0: none); kv_splits: forward split-KV
        (0: the kernel's heuristic, 1: none); page_size: keys per page of a paged KV
        cache (0: contiguous); kv_dtype: the cache's dtype (default dtype)."""
        g = self._specs.find(gpu)
        q = AttentionQuery(_impl(impl), _dtype(dtype), _int(batch, "batch"),
                           _int(heads, "heads"),
                           _int(heads if kv_heads is None else kv_heads, "kv_heads"),
                           _int(seq, "seq"), _int(seq if seq_kv is None else seq_kv, "seq_kv"),
                           _int(head_dim, "head_dim"), bool(causal), bool(backward),
                           bool(deterministic),
                           _int(head_dim if head_dim_vo is None else head_dim_vo, "head_dim_vo"),
                           _int(window, "window"), _int(kv_splits, "kv_splits"),
                           _int(page_size, "page_size"),
                           _dtype(dtype if kv_dtype is None else kv_dtype))
        p = AttentionPrediction()
        with self._lock:
            rc = _lib.function("tc_predict_attention")(self._h, g, byref(q), byref(p))
            if rc < 0:
                _raise(rc, "attention on %s" % gpu)
        d = _struct_dict(q)
        d.update(gpu=gpu, impl=_impl_name(q.impl), dtype=_dtype_name(q.dtype),
                 kv_dtype=_dtype_name(q.kv_dtype))
        pd = _struct_dict(p)
        pd["kernel"] = _impl_name(p.kernel)
        pd["source"] = source_name(p.source)
        pd["bound"] = _bound(p.bound)
        pd["kind"] = _kind(pd["source"])
        pd["interval_us"] = (pd.pop("lo_us"), pd.pop("hi_us"))
        d.update(pd)
        return d

    def predict_memop(self, gpu, *, kind, rows, cols, dtype="fp16"):
        """Predicts one memory-bound kernel of a layer (kind: unary, binary, softmax,
        layernorm, rmsnorm) over a rows x cols tensor, as predict_model times a
        layer's norms, activations, softmax and residual adds: the analytical
        kernel time, no host time. The result names the kernel kind as
        'kernel'; its 'kind' is 'prediction', as everywhere."""
        g = self._specs.find(gpu)
        q = MemopQuery(_memop_kind(kind), _dtype(dtype), _int(rows, "rows"), _int(cols, "cols"))
        p = MemopPrediction()
        rc = _lib.function("tc_predict_memop")(g, byref(q), byref(p))
        if rc < 0:
            _raise(rc, "memory-bound kernel on %s" % gpu)
        d = _struct_dict(q, skip=("kind",))
        d.update(gpu=gpu, kernel=_name("tc_memop_kind_name", TC_MEMOP_KIND_COUNT, q.kind),
                 dtype=_dtype_name(q.dtype))
        d.update(_struct_dict(p))
        d["source"] = "analytical"
        d["kind"] = "prediction"
        return d

    def predict_model(self, config, gpu, *, tp=None, micro_batch=None, seq=None,
                      training=None, decode_context=0, gpus_per_node=None, nic_gbps=None):
        """Predicts a whole model from a config dict or YAML path. Returns the
        per-operation list (ops), layer and step times, tokens/s, model TFLOP/s,
        MFU and the least certain source of any op. decode_context > 0: one
        decode step instead, each of the micro_batch sequences adding a token
        to a KV cache of that many (the step time is the time per output
        token; tc_predict_decode). gpus_per_node and nic_gbps describe the
        nodes the config's tp x pp x dp GPUs fill (struct tc_cluster; None:
        the GPU's reference system)."""
        cfg = model_config(config)
        for name, value in (("tp", tp), ("micro_batch", micro_batch), ("seq", seq)):
            if value is not None:
                setattr(cfg, name, _int(value, name))
        if training is not None:
            cfg.training = bool(training)
        if tp is not None or micro_batch is not None or seq is not None:
            cfg = model_config(cfg)
        g = self._specs.find(gpu)
        cluster = _cluster(gpus_per_node, nic_gbps)
        mp = POINTER(ModelPrediction)()
        with self._lock:
            rc = _lib.function("tc_predict_model_on")(self._h, g, byref(cfg), byref(cluster),
                                                      _int(decode_context, "decode_context"),
                                                      byref(mp))
            if rc < 0:
                _raise(rc, "model on %s" % gpu)
        try:
            m = mp.contents
            ops = []
            for i in range(m.n_ops):
                op = _struct_dict(m.ops[i])
                op["layout"] = _layout_name(op["layout"])
                op["source"] = source_name(op["source"])
                op["align"] = _align(op["align"])
                op["bound"] = _bound(op["bound"])
                ops.append(op)
            d = _struct_dict(m, skip=("n_ops", "ops"))
            d["source"] = source_name(m.source)
            d["kind"] = _kind(d["source"])
            d["ops"] = ops
        finally:
            _lib.function("tc_model_prediction_free")(mp)
        d["gpu"] = gpu
        d["config"] = _config_dict(cfg)
        return d

    def advise(self, config, gpu, *, params_tolerance=0.05, max_candidates=10,
               gpus_per_node=None, nic_gbps=None):
        """Searches nearby shapes within params_tolerance (relative) that run
        faster; candidates best first, each with the mechanism in 'reason'.
        gpus_per_node and nic_gbps: the nodes every candidate's GPUs fill, as
        for predict_model."""
        cfg = model_config(config)
        g = self._specs.find(gpu)
        cluster = _cluster(gpus_per_node, nic_gbps)
        try:
            tol = float(params_tolerance)
        except (TypeError, ValueError):
            raise InvalidError("params_tolerance: %r is not a number" % (params_tolerance,),
                               TC_ERR_INVALID) from None
        if not math.isfinite(tol) or tol < 0:
            raise InvalidError("params_tolerance: %r is not a fraction >= 0" % (tol,),
                               TC_ERR_INVALID)
        n_max = _int(max_candidates, "max_candidates")
        if n_max < 0:
            raise InvalidError("max_candidates: %d is negative" % n_max, TC_ERR_INVALID)
        ap = POINTER(Advice)()
        with self._lock:
            rc = _lib.function("tc_advise_on")(self._h, g, byref(cfg), byref(cluster), tol, n_max,
                                               byref(ap))
            if rc < 0:
                _raise(rc, "advice on %s" % gpu)
        try:
            a = ap.contents
            cands = []
            for i in range(a.n_candidates):
                c = a.candidates[i]
                cd = _struct_dict(c, skip=("cfg",))
                cd["config"] = _config_dict(c.cfg)
                cands.append(cd)
            d = _struct_dict(a, skip=("baseline", "candidates", "n_candidates"))
            d["baseline"] = _config_dict(a.baseline)
            d["candidates"] = cands
        finally:
            _lib.function("tc_advice_free")(ap)
        d["gpu"] = gpu
        d["kind"] = "prediction"
        return d


def _cluster(gpus_per_node, nic_gbps):
    """A struct tc_cluster; None leaves a field to the GPU's default."""
    cluster = Cluster()
    if gpus_per_node is not None:
        cluster.gpus_per_node = _int(gpus_per_node, "gpus_per_node")
    if nic_gbps is not None:
        cluster.nic_gbps = float(nic_gbps)
    return cluster


def _shape_columns(shapes):
    """(n, [m, n, k, batch-or-None]) as array('q') columns, built by C-level
    iteration (no Python code per row)."""
    if isinstance(shapes, dict) or hasattr(shapes, "columns"):
        cols = []
        for key in ("m", "n", "k", "batch"):
            if key not in shapes:
                if key == "batch":
                    cols.append(None)
                    continue
                raise InvalidError("shapes: no column '%s'" % key, TC_ERR_INVALID)
            cols.append(_int_array(shapes[key], key))
        n = len(cols[0])
        if any(c is not None and len(c) != n for c in cols):
            raise InvalidError("shapes: columns m, n, k, batch differ in length",
                               TC_ERR_INVALID)
        return n, cols
    if hasattr(shapes, "ndim") and hasattr(shapes, "shape"):  # numpy, without importing it
        if shapes.ndim != 2 or shapes.shape[1] not in (3, 4):
            raise InvalidError("shapes: expected an (N, 3) or (N, 4) array, got %s"
                               % (tuple(shapes.shape),), TC_ERR_INVALID)
        width = shapes.shape[1]
        flat = _int_array(shapes.reshape(-1), "shapes")
    else:
        shapes = shapes if isinstance(shapes, (list, tuple)) else list(shapes)
        if not shapes:
            return 0, [array("q"), array("q"), array("q"), None]
        width = len(shapes[0])
        if width not in (3, 4):
            raise InvalidError("shapes: rows must be (m, n, k) or (m, n, k, batch), "
                               "row 0 has %d values" % width, TC_ERR_INVALID)
        try:
            flat = array("q", chain.from_iterable(shapes))
        except (TypeError, OverflowError) as e:
            raise InvalidError("shapes: %s (every value must be an integer in int64)" % e,
                               TC_ERR_INVALID) from None
        if len(flat) != width * len(shapes):
            bad = next(i for i, r in enumerate(shapes) if len(r) != width)
            raise InvalidError("shapes: row %d has %d values, row 0 has %d"
                               % (bad, len(shapes[bad]), width), TC_ERR_INVALID)
    n = len(flat) // width
    cols = [flat[i::width] for i in range(width)]
    if width == 3:
        cols.append(None)
    return n, cols


def _int_array(values, what):
    if hasattr(values, "dtype") and hasattr(values, "astype"):  # numpy / pandas
        try:
            values = values.to_numpy() if hasattr(values, "to_numpy") else values
        except Exception:  # pragma: no cover - unusual array types
            pass
        if values.dtype.kind not in "iu":
            raise InvalidError("shapes: column '%s' is not integer (%s)" % (what, values.dtype),
                               TC_ERR_INVALID)
        a = array("q")
        a.frombytes(values.astype("<i8").tobytes())
        return a
    try:
        return array("q", values)
    except (TypeError, OverflowError) as e:
        raise InvalidError("shapes: column '%s': %s" % (what, e), TC_ERR_INVALID) from None


def _frame(columns):
    try:
        import pandas
    except ImportError:
        raise ImportError("as_frame=True needs pandas, which is not installed; "
                          "the plain dict of lists works without it") from None
    return pandas.DataFrame(columns)


# --------------------------------------------------------------------------
# Module-level calls on shared predictors
# --------------------------------------------------------------------------

_predictors = {}


def predictor(db=None, *, analytical=False, prebuilt=True, transfer=True, specs_dir=None):
    """A shared Predictor for these settings (created on first use)."""
    dbs = () if db is None else ((db,) if isinstance(db, (str, os.PathLike)) else tuple(db))
    key = (tuple(os.fspath(d) for d in dbs), bool(analytical), bool(prebuilt), bool(transfer),
           specs_dir or "")
    with _default_lock:
        p = _predictors.get(key)
    if p is None:
        p = Predictor(dbs, prebuilt=prebuilt, analytical=analytical, transfer=transfer,
                      specs_dir=specs_dir)
        with _default_lock:
            p = _predictors.setdefault(key, p)
    return p


def predict_gemm(gpu, m, n, k, *, dtype="fp16", layout="NN", batch=1, db=None,
                 analytical=False, **kw):
    """See Predictor.predict_gemm. db: database file(s) to calibrate with;
    analytical=True ignores every database."""
    return predictor(db, analytical=analytical).predict_gemm(
        gpu, m, n, k, dtype=dtype, layout=layout, batch=batch, **kw)


def predict_gemm_batch(gpu, shapes, *, dtype="fp16", layout="NN", batch=1, db=None,
                       analytical=False, **kw):
    """See Predictor.predict_gemm_batch: one C call for every shape."""
    return predictor(db, analytical=analytical).predict_gemm_batch(
        gpu, shapes, dtype=dtype, layout=layout, batch=batch, **kw)


def predict_attention(gpu, *, db=None, analytical=False, **kw):
    """See Predictor.predict_attention."""
    return predictor(db, analytical=analytical).predict_attention(gpu, **kw)


def predict_memop(gpu, **kw):
    """See Predictor.predict_memop (analytical: no database is consulted)."""
    return predictor(None, analytical=True).predict_memop(gpu, **kw)


def predict_model(config, gpu, *, db=None, analytical=False, **kw):
    """See Predictor.predict_model."""
    return predictor(db, analytical=analytical).predict_model(config, gpu, **kw)


def advise(config, gpu, *, db=None, analytical=False, **kw):
    """See Predictor.advise."""
    return predictor(db, analytical=analytical).advise(config, gpu, **kw)


def model_memory(config, gpu, *, decode_context=0, specs_dir=None):
    """Memory one GPU of a replica needs for a model config (dict, path or
    shipped name): weights, grads, optimizer, activations and KV cache in
    bytes, the GPU's capacity and whether it fits (see tc_model_memory)."""
    from ._lib import ModelMemory
    cfg = model_config(config)
    out = ModelMemory()
    g = _specs(specs_dir).find(gpu)
    _check(_lib.function("tc_model_memory")(g, byref(cfg), int(decode_context), byref(out)))
    return _struct_dict(out)


def model_params(config):
    """Parameter count of a model config (dict or YAML path)."""
    cfg = model_config(config)
    return _lib.function("tc_model_params")(byref(cfg))
