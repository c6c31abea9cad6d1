/* The collector core: sweep specs, shape enumeration, sharding, the timing
 * harness and the backend interface. Internal to the tilecast command and
 * its tests; not installed. Functions return 0 or a negative enum tc_error
 * with the message in tc_last_error(), like the library. */
#ifndef TC_COLLECTOR_H
#define TC_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilecast/tilecast.h"

/* ------------------------------------------------------------------------ */
/* Shapes and sweeps                                                         */
/* ------------------------------------------------------------------------ */

enum tc_shape_kind {
    TC_SHAPE_GEMM = 0,  /* one GEMM, batch 1 */
    TC_SHAPE_BMM,       /* strided batched GEMM */
    TC_SHAPE_ATTENTION, /* attention (unfused today; flash fits the same key) */
};

/* One thing to measure. GEMMs are row-major C[m x n] = A[m x k] . B[k x n]
 * (the public API's convention); attention uses the attention fields and
 * `batch`. */
struct tc_shape {
    enum tc_shape_kind kind;
    enum tc_dtype dtype;
    enum tc_layout layout;
    int64_t m, n, k, batch;
    int64_t heads, kv_heads, seq_q, seq_kv, head_dim;
    bool causal;
    enum tc_attn_impl impl;
};

/* FLOPs of a shape: 2·m·n·k·batch for GEMMs; for attention the scores and
 * values GEMMs, 4·batch·heads·seq_q·seq_kv·head_dim (the unfused path
 * computes the full score matrix, so causal does not change it). */
double tc_shape_flops(const struct tc_shape *s);
/* Total order on shape keys (kind, dtype, layout, dims); memcmp-free so that
 * padding never matters. */
int tc_shape_cmp(const struct tc_shape *a, const struct tc_shape *b);
/* "gemm fp16 NT 4096x4096x4096", "bmm ... x64", "attention fp16 b4 h32/8 ..." */
void tc_shape_format(const struct tc_shape *s, char *buf, size_t len);

/* A parsed and expanded sweep. Opaque. */
struct tc_sweep;

/* Parses a YAML sweep file and expands every set into a de-duplicated list
 * of shapes (first occurrence order). `path` may also name a shipped sweep
 * alone ("quick": <data dir>/collector/sweeps/quick.yaml) when no file of
 * that name exists. NULL on failure, with tc_last_error()
 * naming file:line:column. Caller owns the result (tc_sweep_free). */
struct tc_sweep *tc_sweep_load(const char *path);
/* The same from a string; `name` stands for the file in messages. */
struct tc_sweep *tc_sweep_parse(const char *yaml, size_t len, const char *name);
void tc_sweep_free(struct tc_sweep *sweep);

/* Borrowed, valid until tc_sweep_free. */
const char *tc_sweep_name(const struct tc_sweep *sweep);
/* "fnv1a64:<16 hex>" of the file's bytes. */
const char *tc_sweep_hash(const struct tc_sweep *sweep);
size_t tc_sweep_count(const struct tc_sweep *sweep);
const struct tc_shape *tc_sweep_shapes(const struct tc_sweep *sweep);

/* The largest number of shapes one sweep may expand to; a guard against a
 * typo turning a range into billions of shapes. Sets are counted before they
 * are expanded. 10 million shapes (about 1 GB expanded) is 20 times the
 * shipped exhaustive sweep and weeks of measurement at a few ms a shape. */
#define TC_SWEEP_MAX_SHAPES 10000000

/* 64-bit FNV-1a, used for content and configuration hashes. */
uint64_t tc_fnv1a64(const void *data, size_t len, uint64_t seed);
#define TC_FNV1A64_SEED 0xcbf29ce484222325ULL

/* ------------------------------------------------------------------------ */
/* Sharding                                                                  */
/* ------------------------------------------------------------------------ */

/* Parses "I/N" (0 <= I < N). */
int tc_shard_parse(const char *text, int *index, int *count);

/* Partitions n items with costs into `count` shards: longest first, each to
 * the least loaded shard (ties: lower shard index; equal costs: lower item
 * index), so every process computes the same partition. Writes the shard of
 * item i to shard_of[i]. Non-finite or negative costs count as 0. */
int tc_shard_assign(const double *cost, size_t n, int count, int *shard_of);

/* ------------------------------------------------------------------------ */
/* Harness statistics                                                        */
/* ------------------------------------------------------------------------ */

struct tc_stats {
    double median_us;
    double min_us;
    double max_us;
    double ci_lo_us, ci_hi_us; /* distribution-free ~95% CI of the median */
    double rel_ci;             /* (ci_hi - ci_lo) / 2 / median */
    double sum_us;             /* of all samples */
    int n;
};

/* Sorts `times` in place and computes the statistics. n >= 1. */
int tc_stats_compute(double *times_us, int n, struct tc_stats *out);

/* ------------------------------------------------------------------------ */
/* Backends and the harness                                                  */
/* ------------------------------------------------------------------------ */

/* Per-repetition timings a backend returns; parts are for unfused attention
 * (scores, softmax, values), NULL when the backend has none. */
struct tc_rep_times {
    double *total_us;
    double *part_us[3];
    double untimed_us; /* added to by backends: cache flushes they waited for */
    /* In: launches of the shape per timed sample, queued back to back
     * between one event pair; the times are per launch (the pair's time /
     * group). A backend that does not group sets it to 1. */
    int group;
};

/* What a backend tells about itself and its device (provenance). Strings
 * are owned by the backend. */
struct tc_backend_info {
    const char *name;            /* "cpu", "cuda", "hip" */
    char device_name[TC_NAME_MAX];
    char device_uuid[64];
    char driver_version[64];
    char runtime_version[64];
    char blas_version[128];
    char timing[64];             /* e.g. "event-median-l2flush" */
    int64_t flush_bytes;         /* size of the cache-flush buffer */
    double timer_resolution_us;  /* of the timer, when launches can be grouped
                                  * (tc_rep_times.group); 0: never group */
};

/* The outcome of preparing or running a shape: an error of the library is a
 * data point (status + message), not a failure of the collector. */
struct tc_outcome {
    enum tc_status status;
    char message[256];
};

struct tc_backend;

struct tc_backend_ops {
    const char *name;
    /* Opens device `device`; fills *info. */
    int (*open)(int device, struct tc_backend **out, struct tc_backend_info *info);
    /* Allocates (reusing buffers where they fit), fills inputs with random
     * data and selects the algorithm. A non-ok outcome skips timing. */
    int (*prepare)(struct tc_backend *b, const struct tc_shape *s, struct tc_outcome *outcome);
    /* Runs `reps` timed repetitions of the prepared shape, each preceded by
     * an untimed cache flush, and fills t->total_us[0..reps) (and parts). */
    int (*run)(struct tc_backend *b, int reps, struct tc_rep_times *t,
               struct tc_outcome *outcome);
    /* The algorithm chosen for the prepared shape (gemm rows). */
    void (*algo)(struct tc_backend *b, struct tc_gemm_row *row);
    /* Clocks and temperature as a JSON object ("{}" if unknown). */
    void (*clocks)(struct tc_backend *b, char *json, size_t len);
    void (*close)(struct tc_backend *b);
    /* Optional: builds the backend's own kernels for `arch` without a
     * device (a build check); a summary or the error goes to msg. */
    int (*compile_check)(const char *arch, char *msg, size_t len);
};

/* The backends built into the collector: "cpu" when built, else NULL (the
 * GPU backends are modules: tc_backend_load). */
const struct tc_backend_ops *tc_backend_find(const char *name);
/* Loads the GPU backend `name` ("cuda", "hip") from its module
 * tilecast-NAME.so, found in $TILECAST_MODULE_DIR, else the build tree's
 * collector/ folder for an uninstalled tilecast, else the installed module
 * directory; loads it once per process. A missing module or vendor runtime
 * is TC_ERR_DEVICE with the loader's message. Failing operations of the
 * returned table carry the module's message in tc_last_error(). */
int tc_backend_load(const char *name, const struct tc_backend_ops **out);
/* Where tc_backend_load looks for the module of `name`. */
int tc_backend_module_path(const char *name, char *buf, size_t len);

extern const struct tc_backend_ops tc_backend_cpu;
/* The cpu backend's buffers of the prepared shape, for tests that check the
 * results: GEMM 0 = A, 1 = B, 2 = C; attention 0 = Q, 1 = K, 2 = V,
 * 3 = probabilities, 4 = output (row-major, batch-major, heads next). */
void *tc_backend_cpu_buffer(struct tc_backend *b, int i);

struct tc_harness_opts {
    double rel_ci;           /* stop when the median's relative CI is below (0.01) */
    double max_time_ms;      /* per-shape budget of warm-up and timed repetitions,
                              * from the end of prepare (2000) */
    int min_reps;            /* at least (5) */
    int max_reps;            /* at most (1000) */
    int warmup_reps;         /* untimed repetitions at least (2) */
    double warmup_ms;        /* and untimed for at least this long, until the
                              * reading settles (100; 0: warmup_reps alone) */
    double timer_resolution_us; /* the backend's (tc_backend_info), set by
                              * tc_collect_run; 0: never group launches */
    const volatile int *stop; /* when *stop >= 2 (a second SIGINT), the shape
                              * in progress is abandoned at its next batch of
                              * repetitions (set by tc_collect_run; may be NULL) */
};

void tc_harness_defaults(struct tc_harness_opts *o);

/* The warm-up policy. A GPU idle before the shape (or between shapes while
 * the host fills buffers) runs at low clocks for tens of milliseconds, so
 * a count of repetitions warms up short kernels for microseconds only.
 * Warm-up therefore lasts at least o->warmup_ms and o->warmup_reps, then
 * until the medians of the last two warm-up batches (prev_us, last_us; NAN
 * until there are two) agree within TC_WARMUP_SETTLED, and at most
 * TC_WARMUP_MAX_FACTOR times warmup_ms. True when it may stop after `reps`
 * repetitions and elapsed_ms. With warmup_ms 0 only the count applies. */
/* Launches per timed sample (tc_rep_times.group) for a kernel of launch_us
 * (the warm-up's median) under a timer of resolution_us: 1 from
 * TC_GROUP_BELOW_RES resolutions up (5 us for CUDA events, which resolve
 * about 0.5 us), else enough for TC_GROUP_TARGET_RES resolutions per sample
 * (50 us), at most TC_GROUP_MAX. A 2 us kernel's single samples sit 25 %
 * apart, which the median's 1 % interval never resolves. 1 without a
 * resolution or a reading. */
#define TC_GROUP_BELOW_RES 10
#define TC_GROUP_TARGET_RES 100
#define TC_GROUP_MAX 64
int tc_harness_group(double launch_us, double resolution_us);

#define TC_WARMUP_SETTLED 0.02
#define TC_WARMUP_MAX_FACTOR 5
bool tc_warmup_done(const struct tc_harness_opts *o, int reps, double elapsed_ms, double prev_us,
                    double last_us);

struct tc_measurement {
    struct tc_outcome outcome;
    struct tc_stats total;
    struct tc_stats parts[3];
    bool has_parts;
    bool converged;          /* rel CI reached before the budget */
    bool abandoned;          /* given up when asked to (tc_harness_opts.stop) */
    int warmup_reps;         /* untimed repetitions run */
    double warmup_ms;        /* and the time they took */
    int group;               /* launches per timed sample (1: one each) */
    double wall_ms;          /* wall time the harness spent, incl. flushes */
    double flush_ms;         /* of which cache flushes the host waited for */
};

/* Measures one shape: prepare, warm up (tc_warmup_done), then batches of
 * repetitions until the CI target or the budget. Library failures land in m->outcome; only
 * failures of the collector itself (e.g. out of host memory) return < 0. */
int tc_harness_measure(const struct tc_backend_ops *ops, struct tc_backend *b,
                       const struct tc_harness_opts *o, const struct tc_shape *s,
                       struct tc_measurement *m);

/* ------------------------------------------------------------------------ */
/* GPU backend helpers that need no device (gpu-common.c)                    */
/* ------------------------------------------------------------------------ */

/* The shape of cublasLtMatmulAlgoConfigGetAttribute: 0 on success; a size
 * of 0 (buf NULL) only stores the attribute's size in *written. */
typedef int (*tc_algo_attr_get_fn)(const void *algo, int attr, void *buf, size_t size,
                                   size_t *written);
/* Reads attribute `attr` of `algo` at the size the library reports for it
 * (asked first) and widens it to 64 bits. TC_ERR_NOT_FOUND when the library
 * does not know the attribute (older than it); *value is then 0. */
int tc_algo_attr_read(tc_algo_attr_get_fn get, const void *algo, int attr, uint64_t *value);

/* A cuBLASLt algorithm's configuration as the library's enum values, in
 * its column-major view of the problem. */
struct tc_lt_algo_ids {
    uint64_t tile;    /* CUBLASLT_ALGO_CONFIG_TILE_ID */
    uint64_t stages;  /* CUBLASLT_ALGO_CONFIG_STAGES_ID */
    uint64_t cluster; /* CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID */
    uint64_t split_k, swizzle;
};
/* The tile (cluster) of cuBLASLt enum value `id` in the row-major view of
 * the database and the predictor: the library runs C = A.B as
 * C^T = B^T.A^T, so its tile M x N covers the row-major N x M, and
 * CUBLASLT_MATMUL_TILE_64x128 is tile_m 128, tile_n 64. False and zeros for
 * an unknown or undefined id. */
bool tc_cublaslt_tile(uint64_t id, int *tile_m, int *tile_n);
bool tc_cublaslt_cluster(uint64_t id, int *cluster_m, int *cluster_n);
/* Fills row's tile_m/n/k, stages, cluster_m/n, split_k and swizzle from
 * ids, in the row-major view; unknown ids leave zeros. */
void tc_cublaslt_decode(const struct tc_lt_algo_ids *ids, struct tc_gemm_row *row);

/* Whether a CUDA runtime of version `runtime` (cudaRuntimeGetVersion:
 * 1000 major + 10 minor) supports devices of compute capability
 * cc_major.cc_minor; if not, why names the CUDA versions that do. CUDA 13
 * dropped everything below 7.5 (Volta included), CUDA 12 below 5.0. */
bool tc_cuda_runtime_supports(int runtime, int cc_major, int cc_minor, char *why, size_t len);

/* The operand buffers a GPU backend keeps across shapes, through an
 * allocator of device memory. */
#define TC_DEVBUF_MAX 8
struct tc_devbufs {
    void *ptr[TC_DEVBUF_MAX];
    size_t cap[TC_DEVBUF_MAX];
    int filled[TC_DEVBUF_MAX]; /* enum tc_dtype of the contents; -1 when none */
};
struct tc_dev_allocator {
    /* TC_STATUS_OK, TC_STATUS_OOM (no device memory left) or
     * TC_STATUS_ERROR, with the reason in msg */
    enum tc_status (*alloc)(void *ud, size_t bytes, void **ptr, char *msg, size_t len);
    void (*release)(void *ud, void *ptr, size_t bytes);
    void *ud;
};
void tc_devbufs_init(struct tc_devbufs *set);
/* Makes buffers 0..n-1 hold at least bytes[i] each (0: not needed). Only
 * grows: a buffer keeps the largest size any shape needed. When an
 * allocation runs out of memory, frees every buffer and allocates exactly
 * these sizes once more, since what the kept buffers hold together may be
 * all that is missing; only a failure then is stored as the shape's oom.
 * Grown buffers have filled = -1. Failures are outcomes (oc), the return
 * value is TC_OK unless the arguments are wrong. */
int tc_devbufs_ensure(struct tc_devbufs *set, const struct tc_dev_allocator *a,
                      const size_t *bytes, int n, struct tc_outcome *oc);
void tc_devbufs_release(struct tc_devbufs *set, const struct tc_dev_allocator *a);

/* Fills n elements of `dtype` with uniform random values in ±[0.5, 1)
 * (never zero: zeros make some hardware faster). Deterministic in seed. */
void tc_random_fill(void *buf, size_t n, enum tc_dtype dtype, uint64_t seed);

/* Seconds on CLOCK_MONOTONIC. */
double tc_now_s(void);
/* ISO 8601 UTC of now into buf[32]. */
void tc_utc_now(char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* NVML / ROCm SMI (dlopen; absent libraries give "{}")                      */
/* ------------------------------------------------------------------------ */

/* JSON object of clocks, temperature and power of the device with `uuid`
 * ("GPU-...", else NVML index `index`), from NVML when libnvidia-ml.so.1
 * loads, else "{}". Fills driver (may be NULL) when known. */
void tc_nvml_query(const char *uuid, int index, char *json, size_t len, char *driver,
                   size_t driver_len);
void tc_rocm_smi_query(int index, char *json, size_t len);

/* ------------------------------------------------------------------------ */
/* A collection run                                                          */
/* ------------------------------------------------------------------------ */

struct tc_collect_summary {
    size_t total;       /* shapes in the sweep */
    size_t in_shard;    /* shapes of this shard */
    size_t skipped;     /* already stored by this run configuration */
    size_t measured;    /* measured now (any status) */
    /* by status: ok; unsupported (a dtype or layout the backend does not
     * run, a property of the backend, not a failure of the shape); failed
     * (out of memory, library errors) */
    size_t ok, unsupported, failed;
    double wall_s;      /* the whole loop */
    double harness_s;   /* inside tc_harness_measure */
    double kernel_s;    /* sum over ok shapes of every timed repetition */
    double flush_s;     /* host time spent flushing caches (cpu backend) */
    double insert_s;    /* database inserts and commits */
    int64_t run_id;
    bool resumed;       /* an existing run was continued */
    bool interrupted;   /* stopped by *stop */
};

/* Called after each shape of the shard (measured or skipped). */
typedef void (*tc_collect_progress_fn)(void *ud, const struct tc_collect_summary *sum,
                                       const struct tc_shape *s,
                                       const struct tc_measurement *m);

struct tc_collect_opts {
    const struct tc_backend_ops *backend;
    int device;
    const char *db_path;
    const char *gpu_id;          /* NULL: derived from the device name */
    const struct tc_gpu *gpu;    /* spec snapshot to store, may be NULL */
    int shard_index, shard_count;
    const double *costs;         /* per sweep shape for sharding; NULL: FLOPs */
    struct tc_harness_opts harness;
    int commit_rows;             /* commit after this many rows (32) */
    double commit_s;             /* or this many seconds (5) */
    tc_collect_progress_fn progress;
    void *progress_ud;
    volatile int *stop;          /* set (e.g. by SIGINT) to stop after a shape */
    bool quiet;
};

void tc_collect_defaults(struct tc_collect_opts *o);

/* Measures the shard's shapes into the database. Shapes already stored by
 * the same run configuration (backend, GPU, device, sweep hash, harness
 * settings) are skipped, so re-running a killed command resumes it. Rows are
 * committed in small batches: a kill loses at most the open batch. */
int tc_collect_run(const struct tc_collect_opts *o, const struct tc_sweep *sweep,
                   struct tc_collect_summary *sum);

/* The shard's shapes in sweep order: writes indices into idx (capacity
 * tc_sweep_count) and their number into *n. */
int tc_collect_select(const struct tc_sweep *sweep, const double *costs, int shard_index,
                      int shard_count, size_t *idx, size_t *n);

#endif
