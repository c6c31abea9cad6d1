"""tilecast: how fast GEMMs, attention, transformer layers and models run on a GPU.

A pure-Python binding over libtilecast (ctypes; no compiler needed). The
library is found through $TILECAST_LIBRARY, the install prefix, or a build
tree next to this checkout (build*/predictor/libtilecast.so).

Every result says where it came from: 'measured' (an exactly measured shape,
kind 'measurement'), or a model prediction labelled 'calibrated',
'transferred' or 'analytical' (kind 'prediction'), with an uncertainty
interval. Library errors raise TilecastError subclasses carrying the
library's message.

    >>> import tilecast
    >>> r = tilecast.predict_gemm("h100-sxm5-80gb", 8192, 10944, 4096, dtype="bf16")
    >>> r["time_us"], r["source"], r["interval_us"]
"""

from ._core import (MEASURED, Predictor, Specs, advise, api_version, data_dir, dtype_names, gpu,
                    last_error, model_config, model_memory, model_params, parse_spec_file, predict_attention,
                    predict_gemm, predict_gemm_batch, predict_memop, predict_model, predictor,
                    specs, version)
from ._db import Database, open_db
from ._eval import calibrate_db, compare_layers, eval_stats, spearman, timing_host_cost
from ._lib import LibraryNotFound, library_path
from .errors import (DatabaseError, DeviceError, InvalidError, NotFoundError,
                     OutOfMemoryError, ParseError, RangeError, SchemaError, TilecastError,
                     TilecastIOError, UnsupportedError)

__version__ = "0.1.0"

__all__ = [
    "MEASURED", "Predictor", "Specs", "Database", "advise", "api_version", "calibrate_db",
    "compare_layers", "data_dir", "dtype_names", "eval_stats", "gpu", "spearman",
    "timing_host_cost",
    "last_error", "library_path", "model_config", "model_memory", "model_params", "open_db",
    "parse_spec_file", "predict_attention", "predict_gemm", "predict_gemm_batch",
    "predict_memop", "predict_model", "predictor", "specs", "version", "LibraryNotFound", "TilecastError",
    "DatabaseError", "DeviceError", "InvalidError", "NotFoundError", "OutOfMemoryError",
    "ParseError", "RangeError", "SchemaError", "TilecastIOError", "UnsupportedError",
]
