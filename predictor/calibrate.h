/* Calibration of the analytical GEMM model from measured rows. Internal.
 *
 * A calibration state belongs to one (GPU, dtype) pair and is built once
 * from the measured ok rows of that pair: the model's few physical scales
 * are fitted by robust regression on log time, the remaining log residuals
 * are kept in a k-d tree over log-shape space for the neighbour correction,
 * and exact shapes sit in a hash table. Predicting from a state touches no
 * SQL and allocates nothing.
 *
 * The calibrated model, in the analytical prediction's parts (µs):
 *
 *   t = c_o·overhead + max(c_c·compute, c_m·memory)·a[align] + h[timing]
 *       + x[timing, op]
 *
 * c_c: compute-efficiency scale (effective tensor clock × MMA efficiency,
 *      relative to what the analytical model assumes), times a factor per
 *      kernel configuration for the configurations the data uses most;
 * c_m: bandwidth-efficiency scale;
 * c_o: launch / pipeline-fill / epilogue cost scale;
 * a:   per alignment class penalty, relative to the 128-byte class (fitted
 *      only for classes the data holds enough rows of, else 1);
 * h:   host-side cost a timing method adds on top of kernel time (0 for
 *      kernel-time methods; launch gap for CUDA events around an op; launch
 *      plus synchronize for wall-clock methods), that of a plain GEMM call;
 * x:   a host-timed row run by nn.Linear adds its path's fixed extra on
 *      top (tc_timing_op_extra_us, not fitted), so a fit over a mix of ops
 *      is not biased by the mix. Predictions are kernel time unless the
 *      caller asks for a timing method's convention.
 *
 * compute and memory are rescaled so that with every scale 1 the formula
 * reproduces the analytical time exactly, whatever way the analytical model
 * combines its parts.
 */
#ifndef TC_CALIBRATE_H
#define TC_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>

#include "tilecast/tilecast.h"

/* Bumped whenever the fit, the neighbour correction or the analytical model
 * they rescale change meaning: stored calibrations of another version are
 * recomputed, never used. */
#define TC_CALIB_FORMAT 2 /* 2: the broad neighbour tier (nb2_length, nb2_prior) */
/* The model version stored with a calibration in the database
 * (tc_calibration_row.model_version): the calibration format and the
 * analytical model together. Bump when either changes. 2: the host costs
 * are a plain GEMM call's, nn.Linear's extra added per row. */
#define TC_CALIB_MODEL_VERSION 2

/* The most rows of one GPU and dtype a predictor fits in memory when the
 * databases hold no calibration of them. The fit chooses its neighbour
 * correction by leaving every row out in turn, some 35 us a row on one core
 * (1.5 s at this limit, 11 s for the 265,000 rows of a large sweep), and a
 * predictor opens its databases read-only, so it would refit on every call.
 * Above this it refuses and names the command that fits once and stores
 * the fit (`tilecast db calibrate`). The vendored measurements hold at most
 * 24,154 rows of one GPU and dtype. */
#define TC_CALIB_FIT_MAX_ROWS 50000

/* How a measured time relates to the kernel time the model predicts. */
enum tc_timing_class {
    TC_TIMING_KERNEL = 0, /* device events/profiler around the kernels only */
    TC_TIMING_EVENT,      /* CUDA events around one framework op: + launch gap */
    TC_TIMING_WALL,       /* host wall clock with a synchronize per call */
    TC_TIMING_WALL_MAX,   /* the slowest call of many (biased high) */
    TC_TIMING_COUNT
};

/* Maps a timing method tag ("profiler-median", "event-fastest5-mean",
 * "wall-avg-incl-launch", "wall-slowest", a collector's "event-median-...")
 * to its class. NULL/empty/unknown: kernel time (tilecast's own collector). */
enum tc_timing_class tc_timing_classify(const char *timing);
const char *tc_timing_class_name(enum tc_timing_class c);
/* What a caller's convention names: a class by its name ("kernel",
 * "event", "wall", "wall-max", as tc_timing_class_name writes them), else
 * a method tag as tc_timing_classify takes it. */
enum tc_timing_class tc_timing_parse(const char *timing);
/* The host cost a timing class typically adds (documented in calibrate-timing.c),
 * for comparing an uncalibrated kernel-time prediction with such rows, and
 * the time below which such a measurement cannot fall (0: none). */
double tc_timing_default_host_us(enum tc_timing_class c);
double tc_timing_floor_us(enum tc_timing_class c);
/* The range of that host cost over the hosts the data was measured on: an
 * analytical prediction for a host-timed method widens its interval by it. */
void tc_timing_host_range_us(enum tc_timing_class c, double *lo, double *hi);
/* What op's host path adds on top of a plain GEMM call's host cost under
 * timing class c (0 for kernel time and for mm/bmm); documented in
 * calibrate-timing.c. Fitted host costs are the plain call's: this is
 * added per row, in the fit and in predictions alike. */
double tc_timing_op_extra_us(enum tc_timing_class c, enum tc_gemm_op op);

#define TC_CALIB_ALIGN_CLASSES 4
#define TC_CALIB_TIME_BINS 3 /* interval quantiles by predicted time */
#define TC_CALIB_MAX_K 16

/* One measured row with the analytical parts of its shape on its GPU. */
struct tc_calib_sample {
    int64_t m, n, k, batch;
    enum tc_layout layout;
    enum tc_align align;
    enum tc_timing_class timing;
    enum tc_gemm_op op;                        /* the framework call (host-timed rows) */
    double time_us;                            /* measured */
    double spread_pct;                         /* 0 if unknown */
    double compute_us, memory_us, overhead_us; /* analytical parts, rescaled */
    uint32_t kernel_hash; /* tc_calib_kernel_hash of the model's kernel; 0 unknown */
    int kernel_slot;      /* its index in the params' kernel table, -1 if none (set by
                           * tc_calib_build and tc_calib_predict) */
};

/* Kernel configurations with a fitted efficiency of their own. */
#define TC_CALIB_MAX_KERNELS 16

/* A stable 32-bit hash of a kernel name (never 0 for a non-empty name). */
uint32_t tc_calib_kernel_hash(const char *name);

/* Fitted parameters and their residual statistics: what the database's
 * calibration table stores. Plain data. */
struct tc_calib_params {
    int format;             /* TC_CALIB_FORMAT when fitted */
    char model_version[32]; /* the tilecast version that fitted it (information) */
    double c_compute, c_memory, c_overhead;
    double align_factor[TC_CALIB_ALIGN_CLASSES];
    double host_us[TC_TIMING_COUNT];
    /* MMA efficiency of the most used kernel configurations relative to
     * c_compute (tile shape and pipeline depth differ in efficiency) */
    int n_kernels;
    uint32_t kernel_hash[TC_CALIB_MAX_KERNELS];
    double kernel_scale[TC_CALIB_MAX_KERNELS];
    double c_compute_avg; /* c_compute times the kernel factor, geometric mean
                           * over the compute-bound rows: the compute scale
                           * the data set averages to (information) */
    /* neighbour correction: Gaussian kernel length in log-shape units and
     * the prior weight that shrinks the correction towards 0 */
    double nb_length, nb_prior;
    int nb_k;
    double nb_scale_nk; /* weight of log n and log k against log m, log batch */
    double nb_beta;     /* kernel widening with the nearest distance (sparse data) */
    /* broad tier: a Gaussian kernel over (log m, log n, log k, log batch) at
     * equal scales, chosen by leaving out every row of the held-out row's
     * (n, k), i.e. its layer: what the residuals of other layers at similar
     * sizes say about a layer never measured. The local correction shrinks
     * towards it instead of towards 0. nb2_length 0: off. */
    double nb2_length, nb2_prior;
    /* statistics of the fit (log residuals of the parametric fit) */
    int64_t n_rows;
    double fit_mad;                  /* median |log residual| of the parametric fit */
    double fit_mape;                 /* mean |relative error| of the parametric fit, % */
    double fit_p50_ape, fit_p90_ape; /* its median and 90th percentile, % */
    double fit_log_sd;               /* standard deviation of its log residuals */
    double loo_mape;                 /* held-out (leave-one-shape-out) with neighbours, % */
    /* held-out log-residual quantiles for the interval, per predicted-time
     * bin (< 20 µs, < 200 µs, else); level in interval_level */
    double interval_level;
    double q_lo[TC_CALIB_TIME_BINS], q_hi[TC_CALIB_TIME_BINS];
    int64_t bin_rows[TC_CALIB_TIME_BINS];
    /* the runs of the rows fitted and their timing classes, "id:class,..."
     * ("" if too many to list): with it a reader needs no scan of the runs */
    char runs[1024];
    /* fingerprint of the analytical model the scales rescale (see
     * tc_calib_model_fingerprint); 0 if unknown */
    uint32_t model_fp;
    /* host_us holds the timing methods' typical costs (a transfer), not
     * fitted ones; never stored */
    bool host_typical;
};

/* Serialises params as one line of "key=value" pairs (what the database
 * stores); parses it back. Parse errors name the key. */
int tc_calib_params_format(const struct tc_calib_params *cp, char *buf, size_t len);
int tc_calib_params_parse(const char *text, struct tc_calib_params *cp);
/* The i-th key of that text, in the order written (NULL past the last),
 * and whether a text of the current format must hold it (for tests). */
const char *tc_calib_params_key(size_t i, bool *required);

/* A calibration state for one (GPU, dtype). Opaque. */
struct tc_calib;

/* Builds a state from n samples (copied). If stored is non-NULL and of the
 * current format, its parameters are used as they are (no refit; the caller
 * has checked that it was stored for TC_CALIB_MODEL_VERSION); otherwise
 * they are fitted. NULL on failure (n == 0, a bad row, NOMEM). */
struct tc_calib *tc_calib_build(const struct tc_calib_sample *samples, size_t n,
                                const struct tc_calib_params *stored);
void tc_calib_free(struct tc_calib *c);
const struct tc_calib_params *tc_calib_params(const struct tc_calib *c);
size_t tc_calib_rows(const struct tc_calib *c);

/* Exact lookup: index of a measured sample of this shape whose timing class
 * is `timing`, or -1. Several rows of one shape: the median one. */
const struct tc_calib_sample *tc_calib_find(const struct tc_calib *c, enum tc_layout layout,
                                            int64_t m, int64_t n, int64_t k, int64_t batch,
                                            enum tc_timing_class timing);

/* How a state is applied to a query. */
struct tc_calib_apply {
    const struct tc_calib_params *params; /* NULL: the state's own */
    bool neighbours;                      /* apply the neighbour correction */
    double neighbour_weight;              /* scales the correction (transfer: < 1) */
    bool same_gpu;                        /* the state's rows were measured on the queried GPU:
                                           * its measured times bracket the prediction */
    enum tc_timing_class timing;
    enum tc_arch arch; /* the queried GPU's family (tc_calib_align_class) */
};

/* The alignment class a calibration keys on, for a shape of class `align`
 * on a GPU of family `arch`: the class of its fitted factor and of the
 * neighbours it is corrected by. That is the shape's class, except on the
 * TMA families (Hopper, Blackwell), where the 16-byte class runs the same
 * kernels at the same rate as the 128-byte one (the tensor map takes any
 * stride that is a multiple of 16 bytes; gemm.c): there it is the 128-byte
 * class, so a 16-byte shape is corrected by the measured shapes around it
 * and not by the one 16-byte sweep of the data, wherever that lies. */
enum tc_align tc_calib_align_class(enum tc_arch arch, enum tc_align align);

/* Rewrites an analytical prediction *pred (its parts and align must be set)
 * of query q as calibrated: time, tflops, frac_peak (given peak_tflops),
 * interval, neighbours and distance. The source label is the caller's. */
void tc_calib_predict(const struct tc_calib *c, const struct tc_calib_apply *how,
                      const struct tc_gemm_query *q, double peak_tflops,
                      struct tc_gemm_prediction *pred);

/* Parameters moved from a GPU of architecture `from` to one of `to`: the
 * compute, bandwidth and overhead scales and the alignment penalties move
 * as fitted (they measure the analytical model's idealisations, which every
 * GPU shares); the per-kernel factors stay with the source's data set (its
 * operations and layouts) unless it is the same GPU; across families the
 * compute scale is the average over the compute-bound rows. Host costs of
 * timing methods belong to the measuring machine: they transfer only within
 * the same GPU (another dtype), else the methods' typical costs stand.
 * `same_dtype`: the source's rows are of the target's dtype; if not, the
 * efficiencies and per-kernel factors stay with them (another dtype's fit
 * is no evidence about this one). `tensor`: the target runs on the tensor
 * (matrix) pipe; the SIMT FFMA
 * kernels have no alignment path, so their fitted alignment factors stay
 * with their data. */
/* Whether any fitted row was timed by a method of this class. */
bool tc_calib_has_timing(const struct tc_calib *c, enum tc_timing_class timing);

void tc_calib_transfer_params(const struct tc_calib_params *src, enum tc_arch from, enum tc_arch to,
                              bool same_gpu, bool same_dtype, bool tensor,
                              struct tc_calib_params *out);

/* The parametric model alone (no neighbours), for tests and reports. */
double tc_calib_model_us(const struct tc_calib_params *cp, const struct tc_calib_sample *s,
                         enum tc_timing_class timing);

/* Splits an analytical prediction into the rescaled parts a sample holds. */
void tc_calib_parts(const struct tc_gemm_prediction *pred, double *compute_us, double *memory_us,
                    double *overhead_us);

/* Interval of the pure analytical model, documented in calibrate.c. */
void tc_calib_analytical_interval(struct tc_gemm_prediction *pred);
/* Interval of a transferred prediction of a GEMM run by op. */
void tc_calib_transfer_interval(struct tc_gemm_prediction *pred, bool same_family,
                                const struct tc_calib_params *xfer, enum tc_timing_class timing,
                                enum tc_gemm_op op);

/* Fits the calibration of (gpu_id, dtype) from the ok rows of db (a
 * borrowed handle), for `tilecast db calibrate` and tests. With reuse, a
 * stored calibration of the current model version fitted on the same rows is
 * used as it is. *out is NULL (and TC_OK returned) when the database holds no
 * usable row of that pair. note (may be NULL) receives what happened to a
 * stored calibration. Caller owns *out. */
struct tc_db;
int tc_calib_from_db(const struct tc_specs *specs, struct tc_db *db, const char *gpu_id,
                     enum tc_dtype dtype, bool reuse, struct tc_calib **out, char *note,
                     size_t note_len);
/* Whether db's snapshot of gpu_id is a host CPU (TC_VENDOR_CPU), which
 * tc_calib_from_db refuses (TC_ERR_UNSUPPORTED, saying why). */
bool tc_calib_cpu_host(struct tc_db *db, const char *gpu_id);

/* A fingerprint of the analytical model on gpu for dtype: a hash of its
 * predictions for a fixed set of shapes. A stored calibration whose
 * fingerprint differs was fitted to another model (a changed catalogue or
 * formula) and is recomputed, even if nobody bumped a version number. */
uint32_t tc_calib_model_fingerprint(const struct tc_gpu *gpu, enum tc_dtype dtype);
void tc_calib_set_fingerprint(struct tc_calib *c, uint32_t fp);

/* Records the run map stored with the parameters (see runs above). */
void tc_calib_set_runs(struct tc_calib *c, const char *runs);

/* The row tc_db_put_calibration stores for a fitted state. */
int tc_calib_to_row(const struct tc_calib *c, const char *gpu_id, enum tc_dtype dtype,
                    struct tc_calibration_row *row);

/* One calibration fit of an attention set: over its rows of one Q/K and
 * V/O head dim pair, or over all of them (head dims 0). */
struct tc_attn_fit {
    int64_t head_dim, head_dim_vo; /* the pair (V/O resolved: never 0 but in the all-rows fit) */
    size_t n_fit;                  /* rows the model could predict (the fit's sample) */
    double scale;                  /* measured / model, shrunk towards 1 */
    double lo_log, hi_log;         /* the interval around a scaled prediction, in log time */
};

/* The measured attention rows a predictor holds for one GPU, implementation,
 * dtype and direction (attention.c calibrates its models with them). Read
 * once from the predictor's databases (the added files, else the GPU's
 * prebuilt one) and kept, with their fits, until the set of databases
 * changes. The fits belong to attention.c, which makes them on first use. */
struct tc_attn_rows {
    struct tc_attention_row *rows;
    size_t n;
    struct tc_attn_fit *fits; /* fitted on first use, one per head dim pair asked for */
    size_t n_fits;
};

/* The rows of gpu_id, impl, dtype and direction; NULL when the predictor is
 * analytical-only (*err TC_OK) or a database could not be read (*err < 0,
 * the message naming the file). A set with n == 0 means none measured. */
struct tc_attn_rows *tc_predictor_attention_rows(struct tc_predictor *p, const char *gpu_id,
                                                 enum tc_attn_impl impl, enum tc_dtype dtype,
                                                 bool backward, int *err);

#endif
