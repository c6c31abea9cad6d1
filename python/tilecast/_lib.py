"""Finding and loading libtilecast, and ctypes mirrors of its public structs.

The structs below mirror predictor/include/tilecast/tilecast.h field by
field. At load time their sizes are compared with the library's own
(tc_abi_sizeof), so a header change the binding missed is a clear error
rather than corrupted memory; tests/test_abi.py also compares field names
and order with the header when the source tree is at hand.
"""

import ctypes
import ctypes.util
import glob
import os
import sys
import sysconfig
import threading

from ctypes import (POINTER, Structure, c_bool, c_char, c_char_p, c_double, c_int, c_int32,
                    c_int64, c_size_t, c_ubyte, c_void_p)

TC_ID_MAX = 64
TC_NAME_MAX = 128
TC_OP_NAME_MAX = 32
TC_DTYPE_COUNT = 7
TC_DTYPE_MAX = 16  # the capacity of struct tc_gpu's dtype arrays
TC_ATTN_IMPL_COUNT = 7  # enum tc_attn_impl: unfused, flash, flash2, flash3, flash4, cudnn, cudnn_oss
TC_MEMOP_KIND_COUNT = 5  # enum tc_memop_kind: unary, binary, softmax, layernorm, rmsnorm

# enum tc_db_mode
TC_DB_READONLY = 0


class Interconnect(Structure):
    _fields_ = [
        ("bw_gbps", c_double),
        ("link", c_int),
        ("generation", c_int),
        ("links", c_int),
        ("switched", c_ubyte),
        ("pcie_gen", c_ubyte),
        ("reserved_bytes", c_ubyte * 2),
    ]


class Gpu(Structure):
    _fields_ = [
        ("id", c_char * TC_ID_MAX),
        ("name", c_char * TC_NAME_MAX),
        ("vendor", c_int),
        ("arch", c_int),
        ("compute_capability", c_char * 16),
        ("units", c_int),
        ("clock_tensor_mhz", c_double),
        ("clock_vector_mhz", c_double),
        ("clock_base_mhz", c_double),
        ("peak_tflops", c_double * TC_DTYPE_MAX),
        ("flops_per_clk_per_unit", c_double * TC_DTYPE_MAX),
        ("mem_bw_gbps", c_double),
        ("mem_gb", c_double),
        ("l2_bytes", c_int64),
        ("tdp_w", c_double),
        ("warp_size", c_int),
        ("max_threads_per_sm", c_int),
        ("max_warps_per_sm", c_int),
        ("max_blocks_per_sm", c_int),
        ("max_threads_per_block", c_int),
        ("regs_per_sm", c_int),
        ("max_regs_per_block", c_int),
        ("max_regs_per_thread", c_int),
        ("reg_alloc_unit", c_int),
        ("smem_per_sm_bytes", c_int64),
        ("smem_per_block_max_bytes", c_int64),
        ("reserved_smem_per_block_bytes", c_int64),
        ("smem_alloc_unit_bytes", c_int),
        ("sources", c_char * 1024),
        ("flags", c_char * 2048),
        ("interconnect", Interconnect),
        ("clock_vector_sustained_mhz", c_double),
    ]


class RunInfo(Structure):
    _fields_ = [(name, c_char_p) for name in (
        "gpu_id", "kind", "host", "device_name", "device_uuid", "driver_version",
        "runtime_version", "blas_version", "backend", "sweep_name", "sweep_hash",
        "config_hash", "shard", "timing", "source", "licence", "clocks_json",
        "tilecast_version", "started_at", "ended_at")] + [("reserved", c_double * 4)]


class GemmRow(Structure):
    _fields_ = [
        ("run_id", c_int64),
        ("dtype", c_int),
        ("dtype_c", c_int),
        ("compute", c_int),
        ("layout", c_int),
        ("m", c_int64), ("n", c_int64), ("k", c_int64), ("batch", c_int64),
        ("time_us", c_double),
        ("min_us", c_double),
        ("spread_pct", c_double),
        ("reps", c_int),
        ("tile_m", c_int), ("tile_n", c_int), ("tile_k", c_int), ("stages", c_int),
        ("split_k", c_int), ("cluster_m", c_int), ("cluster_n", c_int), ("swizzle", c_int),
        ("algo", c_char * 256),
        ("status", c_int),
        ("message", c_char * 256),
        ("reserved", c_double * 4),
    ]


class AttentionRow(Structure):
    _fields_ = [
        ("run_id", c_int64),
        ("impl", c_int),
        ("dtype", c_int),
        ("batch", c_int64), ("heads", c_int64), ("kv_heads", c_int64),
        ("seq_q", c_int64), ("seq_kv", c_int64), ("head_dim", c_int64),
        ("causal", c_bool),
        ("backward", c_bool),
        ("deterministic", c_bool),
        ("head_dim_vo", c_int64),
        ("window", c_int64),
        ("time_us", c_double), ("min_us", c_double), ("spread_pct", c_double),
        ("reps", c_int),
        ("scores_us", c_double), ("softmax_us", c_double), ("values_us", c_double),
        ("status", c_int),
        ("message", c_char * 256),
        ("page_size", c_int64),
        ("kv_dtype", c_int),
        ("reserved", c_double * 2),
    ]


class GemmQuery(Structure):
    _fields_ = [
        ("m", c_int64), ("n", c_int64), ("k", c_int64),
        ("batch", c_int64),
        ("dtype", c_int),
        ("layout", c_int),
        ("lda", c_int64), ("ldb", c_int64), ("ldc", c_int64),
        ("op", c_int),
        ("reserved", c_double * 3),
    ]


class GemmPrediction(Structure):
    _fields_ = [
        ("time_us", c_double),
        ("tflops", c_double),
        ("frac_peak", c_double),
        ("source", c_int),
        ("lo_us", c_double), ("hi_us", c_double),
        ("interval_level", c_double),
        ("kernel", c_char * 96),
        ("tile_m", c_int), ("tile_n", c_int), ("tile_k", c_int), ("stages", c_int),
        ("warps", c_int), ("split_k", c_int), ("cluster_m", c_int), ("cluster_n", c_int),
        ("stream_k", c_bool),
        ("tiles", c_int64),
        ("waves", c_double),
        ("wave_eff", c_double),
        ("tile_eff", c_double),
        ("blocks_per_sm", c_int),
        ("occupancy", c_double),
        ("bound", c_int),
        ("align", c_int),
        ("compute_us", c_double), ("memory_us", c_double), ("overhead_us", c_double),
        ("neighbours", c_int),
        ("neighbour_dist", c_double),
        ("calib_gpu", c_char * TC_ID_MAX),
        ("reserved", c_double * 4),
    ]


class AttentionQuery(Structure):
    _fields_ = [
        ("impl", c_int),
        ("dtype", c_int),
        ("batch", c_int64), ("heads", c_int64), ("kv_heads", c_int64),
        ("seq_q", c_int64), ("seq_kv", c_int64), ("head_dim", c_int64),
        ("causal", c_bool),
        ("backward", c_bool),
        ("deterministic", c_bool),
        ("head_dim_vo", c_int64),
        ("window", c_int64),
        ("kv_splits", c_int64),
        ("page_size", c_int64),
        ("kv_dtype", c_int),
        ("reserved", c_double * 2),
    ]


class AttentionPrediction(Structure):
    _fields_ = [
        ("time_us", c_double),
        ("tflops", c_double),
        ("source", c_int),
        ("lo_us", c_double), ("hi_us", c_double),
        ("scores_us", c_double), ("softmax_us", c_double), ("values_us", c_double),
        ("expand_us", c_double),
        ("flops", c_double),
        ("block_m", c_int), ("block_n", c_int), ("blocks_per_sm", c_int),
        ("blocks", c_int64),
        ("waves", c_double),
        ("occupancy", c_double),
        ("bound", c_int),
        ("kernel", c_int),
        ("kv_splits", c_int64),
        ("reserved", c_double * 4),
    ]


class MemopQuery(Structure):
    _fields_ = [
        ("kind", c_int),
        ("dtype", c_int),
        ("rows", c_int64), ("cols", c_int64),
        ("reserved", c_double * 4),
    ]


class MemopPrediction(Structure):
    _fields_ = [
        ("time_us", c_double),
        ("bytes", c_double),
        ("passes", c_double),
        ("gbps", c_double),
        ("reserved", c_double * 4),
    ]


class ModelConfig(Structure):
    _fields_ = [
        ("name", c_char * TC_NAME_MAX),
        ("hidden", c_int64), ("heads", c_int64), ("kv_heads", c_int64),
        ("head_dim", c_int64), ("ffn", c_int64), ("layers", c_int64), ("vocab", c_int64),
        ("seq", c_int64), ("micro_batch", c_int64), ("tp", c_int64),
        ("swiglu", c_bool),
        ("rmsnorm", c_bool),
        ("dtype", c_int),
        ("attention", c_int),
        ("training", c_bool),
        ("causal", c_bool),
        ("tied_embeddings", c_bool),
        ("graphs", c_bool),
        ("serving", c_bool),
        ("dp", c_int64),
        ("zero_stage", c_int64),
        ("recompute", c_bool),
        ("rope", c_bool),
        ("attention_eager", c_bool),
        ("pp", c_int32),
        ("microbatches", c_int32),
        ("dropout", c_double),
        ("attention_dropout", c_double),
        ("gelu_new", c_bool),
        ("num_labels", c_int64),
    ]


class OpPrediction(Structure):
    _fields_ = [
        ("name", c_char * TC_OP_NAME_MAX),
        ("kind", c_char * 16),
        ("m", c_int64), ("n", c_int64), ("k", c_int64), ("batch", c_int64),
        ("layout", c_int),
        ("time_us", c_double), ("tflops", c_double), ("flops", c_double),
        ("source", c_int),
        ("in_layer", c_bool),
        ("share", c_double),
        ("align", c_int),
        ("bound", c_int),
        ("tile_eff", c_double), ("wave_eff", c_double), ("waves", c_double),
        ("occupancy", c_double),
    ]


class ModelPrediction(Structure):
    _fields_ = [
        ("n_ops", c_size_t),
        ("ops", POINTER(OpPrediction)),
        ("layer_time_us", c_double),
        ("head_time_us", c_double),
        ("step_time_us", c_double),
        ("tokens_per_s", c_double),
        ("model_tflops", c_double),
        ("mfu", c_double),
        ("step_flops", c_double),
        ("params", c_double),
        ("source", c_int),
        ("gpu_time_us", c_double),
        ("host_time_us", c_double),
        ("engine_time_us", c_double),
        ("stage_time_us", c_double),
        ("bubble_us", c_double),
        ("p2p_us", c_double),
        ("nodes", c_int64),
    ]


class Cluster(Structure):
    _fields_ = [
        ("gpus_per_node", c_int64),
        ("nic_gbps", c_double),
        ("reserved", c_double * 4),
    ]


class AdviceCandidate(Structure):
    _fields_ = [
        ("cfg", ModelConfig),
        ("step_time_us", c_double),
        ("tokens_per_s_per_gpu", c_double),
        ("speedup", c_double),
        ("params", c_double),
        ("params_delta", c_double),
        ("changes", c_int),
        ("reason", c_char * 512),
    ]


class ModelMemory(Structure):
    _fields_ = [
        ("weights_bytes", c_double), ("grads_bytes", c_double),
        ("optimizer_bytes", c_double), ("activations_bytes", c_double),
        ("kv_cache_bytes", c_double), ("total_bytes", c_double),
        ("capacity_bytes", c_double), ("fits", c_bool),
        ("reserved", c_double * 4),
    ]


class Advice(Structure):
    _fields_ = [
        ("baseline", ModelConfig),
        ("baseline_step_us", c_double),
        ("baseline_tokens_per_s_per_gpu", c_double),
        ("baseline_params", c_double),
        ("n_candidates", c_size_t),
        ("candidates", POINTER(AdviceCandidate)),
        ("n_evaluated", c_size_t),
    ]


# The C struct name of each mirror, for the size check and the header test.
class CalibSummary(Structure):
    _fields_ = [
        ("gpu_id", c_char * TC_ID_MAX),
        ("dtype", c_int),
        ("rows", c_int64),
    ] + [(name, c_double) for name in (
        "c_compute", "c_memory", "c_overhead", "align_16b", "align_4b", "align_elem",
        "host_event_us", "host_wall_us", "fit_p50_pct", "fit_p90_pct", "heldout_mape_pct",
        "interval_lo_pct", "interval_hi_pct")] + [
        ("stored", c_bool),
        ("reserved", c_double * 4),
    ]


class TimingCost(Structure):
    _fields_ = [(name, c_double) for name in ("typical_us", "floor_us", "lo_us", "hi_us",
                                              "linear_us")] + [
        ("reserved", c_double * 3),
    ]


class EvalPoint(Structure):
    _fields_ = [(name, c_double) for name in ("ape_pct", "signed_pct", "meas_tflops",
                                              "pred_tflops")]


class EvalStats(Structure):
    _fields_ = [(name, c_double) for name in ("mape_pct", "median_ape_pct", "p90_ape_pct",
                                              "bias_pct", "spearman_tflops")] + [
        ("reserved", c_double * 4),
    ]


class LayerGroup(Structure):
    _fields_ = [
        ("gpu_id", c_char * TC_ID_MAX),
        ("model", c_char * TC_NAME_MAX),
        ("layers", c_size_t),
        ("mape_pct", c_double),
        ("median_ape_pct", c_double),
        ("p90_ape_pct", c_double),
        ("source", c_int),
    ]


STRUCTS = {
    "tc_gpu": Gpu,
    "tc_interconnect": Interconnect,
    "tc_run_info": RunInfo,
    "tc_gemm_row": GemmRow,
    "tc_attention_row": AttentionRow,
    "tc_gemm_query": GemmQuery,
    "tc_gemm_prediction": GemmPrediction,
    "tc_attention_query": AttentionQuery,
    "tc_attention_prediction": AttentionPrediction,
    "tc_memop_query": MemopQuery,
    "tc_memop_prediction": MemopPrediction,
    "tc_model_config": ModelConfig,
    "tc_op_prediction": OpPrediction,
    "tc_model_prediction": ModelPrediction,
    "tc_cluster": Cluster,
    "tc_advice_candidate": AdviceCandidate,
    "tc_advice": Advice,
    "tc_calib_summary": CalibSummary,
    "tc_timing_cost": TimingCost,
    "tc_eval_point": EvalPoint,
    "tc_eval_stats": EvalStats,
    "tc_layer_group": LayerGroup,
}

_P = c_void_p  # opaque handles: tc_specs, tc_predictor, tc_db, tc_db_iter

# name: (restype, argtypes). Functions missing from an older library are
# skipped here and reported when called.
_PROTOTYPES = {
    "tc_strerror": (c_char_p, [c_int]),
    "tc_last_error": (c_char_p, []),
    "tc_version": (c_char_p, []),
    "tc_version_api": (ctypes.c_uint, []),
    "tc_abi_sizeof": (c_size_t, [c_char_p]),
    "tc_dtype_name": (c_char_p, [c_int]),
    "tc_dtype_parse": (c_int, [c_char_p, POINTER(c_int)]),
    "tc_layout_name": (c_char_p, [c_int]),
    "tc_gemm_op_parse": (c_int, [c_char_p, POINTER(c_int)]),
    "tc_gemm_op_name": (c_char_p, [c_int]),
    "tc_layout_parse": (c_int, [c_char_p, POINTER(c_int)]),
    "tc_source_name": (c_char_p, [c_int]),
    "tc_arch_name": (c_char_p, [c_int]),
    "tc_link_name": (c_char_p, [c_int]),
    "tc_bound_name": (c_char_p, [c_int]),
    "tc_align_name": (c_char_p, [c_int]),
    "tc_status_name": (c_char_p, [c_int]),
    "tc_attn_impl_name": (c_char_p, [c_int]),
    "tc_attn_impl_parse": (c_int, [c_char_p, POINTER(c_int)]),
    "tc_memop_kind_name": (c_char_p, [c_int]),
    "tc_memop_kind_parse": (c_int, [c_char_p, POINTER(c_int)]),
    "tc_data_dir": (c_char_p, []),
    "tc_specs_load": (c_int, [c_char_p, POINTER(_P)]),
    "tc_specs_add_dir": (c_int, [_P, c_char_p]),
    "tc_specs_parse_file": (c_int, [c_char_p, POINTER(Gpu)]),
    "tc_gpu_check": (c_int, [POINTER(Gpu)]),
    "tc_specs_free": (None, [_P]),
    "tc_specs_count": (c_size_t, [_P]),
    "tc_specs_at": (POINTER(Gpu), [_P, c_size_t]),
    "tc_specs_find": (POINTER(Gpu), [_P, c_char_p]),
    "tc_specs_lookup": (POINTER(Gpu), [_P, c_char_p]),
    "tc_db_open": (c_int, [c_char_p, c_int, POINTER(_P)]),
    "tc_db_close": (None, [_P]),
    "tc_db_schema_version": (c_int, [_P]),
    "tc_db_integrity_check": (c_int, [_P]),
    "tc_db_lookup_gemm": (c_int, [_P, c_char_p, c_int, c_int, c_int64, c_int64, c_int64,
                                  c_int64, POINTER(GemmRow)]),
    "tc_db_iter_gemm": (c_int, [_P, c_char_p, c_int, c_int, POINTER(_P)]),
    "tc_db_iter_next": (c_int, [_P, POINTER(GemmRow), c_char_p]),
    "tc_db_iter_free": (None, [_P]),
    "tc_predictor_new": (_P, [_P]),
    "tc_predictor_free": (None, [_P]),
    "tc_predictor_add_db": (c_int, [_P, c_char_p]),
    "tc_predictor_use_prebuilt": (None, [_P, c_bool]),
    "tc_predictor_set_analytical": (None, [_P, c_bool]),
    "tc_predictor_allow_transfer": (None, [_P, c_bool]),
    "tc_predictor_set_timing": (c_int, [_P, c_char_p]),
    "tc_predict_gemm": (c_int, [_P, POINTER(Gpu), POINTER(GemmQuery), POINTER(GemmPrediction)]),
    "tc_predict_gemm_analytical": (c_int, [POINTER(Gpu), POINTER(GemmQuery),
                                           POINTER(GemmPrediction)]),
    # pointers to the first element: callers pass ctypes arrays or from_buffer views
    "tc_predict_gemm_batch": (c_int, [_P, POINTER(Gpu), c_size_t, c_void_p, c_void_p, c_void_p]),
    "tc_predict_attention": (c_int, [_P, POINTER(Gpu), POINTER(AttentionQuery),
                                     POINTER(AttentionPrediction)]),
    "tc_predict_memop": (c_int, [POINTER(Gpu), POINTER(MemopQuery), POINTER(MemopPrediction)]),
    "tc_model_config_load": (c_int, [c_char_p, POINTER(ModelConfig)]),
    "tc_model_config_defaults": (None, [POINTER(ModelConfig)]),
    "tc_model_config_set": (c_int, [POINTER(ModelConfig), c_char_p, c_char_p]),
    "tc_model_config_field": (c_char_p, [c_char_p]),
    "tc_model_config_resolve": (c_int, [POINTER(ModelConfig)]),
    "tc_model_params": (c_double, [POINTER(ModelConfig)]),
    "tc_model_memory": (c_int, [POINTER(Gpu), POINTER(ModelConfig), c_int64,
                                POINTER(ModelMemory)]),
    "tc_predict_model": (c_int, [_P, POINTER(Gpu), POINTER(ModelConfig),
                                 POINTER(POINTER(ModelPrediction))]),
    "tc_model_prediction_free": (None, [POINTER(ModelPrediction)]),
    "tc_predict_model_on": (c_int, [_P, POINTER(Gpu), POINTER(ModelConfig), POINTER(Cluster),
                                    c_int64, POINTER(POINTER(ModelPrediction))]),
    "tc_advise": (c_int, [_P, POINTER(Gpu), POINTER(ModelConfig), c_double, c_size_t,
                          POINTER(POINTER(Advice))]),
    "tc_advise_on": (c_int, [_P, POINTER(Gpu), POINTER(ModelConfig), POINTER(Cluster), c_double,
                             c_size_t, POINTER(POINTER(Advice))]),
    "tc_advice_free": (None, [POINTER(Advice)]),
    "tc_db_calibrate": (c_int, [_P, _P, c_char_p, c_int, c_bool, POINTER(_P)]),
    "tc_calib_report_count": (c_size_t, [_P]),
    "tc_calib_report_at": (POINTER(CalibSummary), [_P, c_size_t]),
    "tc_calib_report_free": (None, [_P]),
    "tc_timing_host_cost": (c_int, [c_char_p, POINTER(TimingCost)]),
    "tc_timing_known": (c_bool, [c_char_p]),
    "tc_eval_stats": (c_int, [c_void_p, c_size_t, c_size_t, POINTER(EvalStats)]),
    "tc_spearman": (c_double, [c_void_p, c_void_p, c_size_t]),
    "tc_layer_compare": (c_int, [_P, _P, c_char_p, c_double, POINTER(_P)]),
    "tc_layer_report_count": (c_size_t, [_P]),
    "tc_layer_report_at": (POINTER(LayerGroup), [_P, c_size_t]),
    "tc_layer_report_free": (None, [_P]),
}


class LibraryNotFound(ImportError):
    """libtilecast could not be found or loaded."""


def _package_checkout():
    """The checkout this package sits in, when imported from python/ in it."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.dirname(os.path.dirname(here))


def _build_tree_candidates():
    root = _package_checkout()
    found = []
    for path in glob.glob(os.path.join(root, "build*", "predictor", "libtilecast.so*")):
        found.append(path)
    # ./build (the README's build) first, then the most recently built;
    # sanitizer builds cannot be loaded into a plain python and fail below.
    found.sort(key=lambda p: (os.path.basename(os.path.dirname(os.path.dirname(p))) != "build",
                              -os.path.getmtime(p)))
    return found


def _prefix_candidates():
    names = []
    found = ctypes.util.find_library("tilecast")
    if found:
        names.append(found)
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    for prefix in dict.fromkeys((sys.prefix, "/usr/local", "/usr")):
        for libdir in ("lib", os.path.join("lib", multiarch) if multiarch else None, "lib64"):
            if libdir:
                path = os.path.join(prefix, libdir, "libtilecast.so.%d" % API_VERSION_MAJOR)
                if os.path.exists(path):
                    names.append(path)
    return names


def _installed_candidates():
    """The library that `meson install` put beside this package, if it did."""
    try:
        from . import _installed
    except ImportError:
        return []
    return [_installed.LIBRARY] if os.path.exists(_installed.LIBRARY) else []


def candidates():
    """Where the library is looked for, in order (for messages and tests)."""
    env = os.environ.get("TILECAST_LIBRARY")
    if env:
        if os.path.isdir(env):
            return sorted(glob.glob(os.path.join(env, "libtilecast.so*")))[:1] or [env]
        return [env]
    return _installed_candidates() + _prefix_candidates() + _build_tree_candidates()


def _load():
    tried = []
    env = os.environ.get("TILECAST_LIBRARY")
    for path in candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            if env:
                break  # an explicit choice that fails is an error, not a hint
            continue
        return lib, path
    how = ("$TILECAST_LIBRARY=%s" % env) if env else \
        "the install prefix and the build tree (set $TILECAST_LIBRARY to the .so)"
    raise LibraryNotFound("libtilecast not found through %s; tried: %s"
                          % (how, "; ".join(tried) or "nothing found"))


def _declare(lib):
    missing = []
    for name, (restype, argtypes) in _PROTOTYPES.items():
        fn = getattr(lib, name, None)
        if fn is None:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    return missing


# The API major this binding's mirrors and prototypes follow
# (TC_API_VERSION_MAJOR of tilecast/version.h).
API_VERSION_MAJOR = 1


def _check_abi(lib, path):
    bad = []
    if hasattr(lib, "tc_version_api"):
        major = (lib.tc_version_api() >> 16) & 0xff
        if major != API_VERSION_MAJOR:
            bad.append("the library's API version is %d, the binding's %d"
                       % (major, API_VERSION_MAJOR))
    if not hasattr(lib, "tc_abi_sizeof"):
        return  # older library without the check: trust the mirrors
    for cname, mirror in STRUCTS.items():
        size = lib.tc_abi_sizeof(cname.encode())
        if size and size != ctypes.sizeof(mirror):
            bad.append("struct %s is %d bytes in the library, %d in the binding"
                       % (cname, size, ctypes.sizeof(mirror)))
    if bad:
        raise LibraryNotFound("%s does not match this tilecast package: %s"
                              % (path, "; ".join(bad)))


_lock = threading.Lock()
_state = {}


def library():
    """The loaded CDLL (loaded once, on first use)."""
    lib = _state.get("lib")
    if lib is not None:
        return lib
    with _lock:
        if "lib" not in _state:
            lib, path = _load()
            missing = _declare(lib)
            _check_abi(lib, path)
            _state["path"] = path
            _state["missing"] = missing
            _state["lib"] = lib
    return _state["lib"]


def library_path():
    library()
    return _state["path"]


def function(name):
    """A declared library function; LibraryNotFound if this build lacks it."""
    lib = library()
    if name in _state["missing"]:
        raise LibraryNotFound("%s has no %s (built from an older tilecast?)"
                              % (_state["path"], name))
    return getattr(lib, name)
