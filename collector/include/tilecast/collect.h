/* The collector as the tilecast command uses it: sweeps and their shapes,
 * shards, the backends by name, and a collection run into a database with
 * its options, progress and summary. The collector's internals (the
 * backend ops table, the harness, statistics, device helpers) stay in
 * collector/collector.h.
 *
 * Not installed: the collector is a static library of the command and its
 * tests, and this interface may still change with it; it is a public header
 * in the sense that the command needs nothing else of the collector.
 * Functions return 0 or a negative enum tc_error with the message in
 * tc_last_error(), like the library. */
#ifndef TILECAST_COLLECT_H
#define TILECAST_COLLECT_H

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
    TC_SHAPE_ATTENTION, /* attention: unfused, or fused (impl cudnn) */
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
    bool backward; /* attention: the backward pass (dQ, dK, dV), fused impls only */
};

/* FLOPs of a shape: 2·m·n·k·batch for GEMMs; for attention the scores and
 * values GEMMs, 4·batch·heads·seq_q·seq_kv·head_dim (the unfused path
 * computes the full score matrix, so causal does not change it), 2.5 times
 * that for a backward. A cost for sharding, not a rate's numerator. */
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
 * naming file:line:column; a file over 16 MiB is refused for its size
 * before it is parsed. Caller owns the result (tc_sweep_free). */
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
 * are expanded. A million shapes (about 120 MB expanded, under a second to
 * expand and de-duplicate) is twice the shipped exhaustive sweep and weeks
 * of measurement at a few ms a shape; more is a typo or a job for several
 * sweep files. (It was 10 million, which took 17 s to parse under the
 * sanitizers, past fuzz-sweep's time limit of 10.) */
#define TC_SWEEP_MAX_SHAPES 1000000

/* ------------------------------------------------------------------------ */
/* Shards                                                                    */
/* ------------------------------------------------------------------------ */

/* Parses "I/N" (0 <= I < N). */
int tc_shard_parse(const char *text, int *index, int *count);

/* ------------------------------------------------------------------------ */
/* Backends and one shape's measurement                                      */
/* ------------------------------------------------------------------------ */

/* A backend: the ops table a module or the built-in cpu backend provides.
 * Opaque here. */
struct tc_backend_ops;

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
/* Whether ops can build its own kernels without a device (a build check
 * of the GPU backends), and the check itself for `arch` (e.g. "sm_80"): a
 * summary or the error goes to msg. TC_ERR_UNSUPPORTED for a backend that
 * cannot. */
bool tc_backend_can_compile(const struct tc_backend_ops *ops);
int tc_backend_compile_check(const struct tc_backend_ops *ops, const char *arch, char *msg,
                             size_t len);

/* The statistics of one shape's timed repetitions. */
struct tc_stats {
    double median_us;
    double min_us;
    double max_us;
    double ci_lo_us, ci_hi_us; /* distribution-free ~95% CI of the median */
    double rel_ci;             /* (ci_hi - ci_lo) / 2 / median */
    double sum_us;             /* of all samples */
    int n;
};

/* The harness's stopping rules. */
struct tc_harness_opts {
    double rel_ci;              /* stop when the median's relative CI is below (0.01) */
    double max_time_ms;         /* per-shape budget of warm-up and timed repetitions,
                                 * from the end of prepare (2000) */
    int min_reps;               /* at least (5) */
    int max_reps;               /* at most (1000) */
    int warmup_reps;            /* untimed repetitions at least (2) */
    double warmup_ms;           /* and untimed for at least this long, until the
                                 * reading settles (100; 0: warmup_reps alone) */
    double timer_resolution_us; /* the backend's (tc_backend_info), set by
                                 * tc_collect_run; 0: never group launches */
    const volatile int *stop;   /* when *stop >= 2 (a second SIGINT), the shape
                                 * in progress is abandoned at its next batch of
                                 * repetitions (set by tc_collect_run; may be NULL) */
};

void tc_harness_defaults(struct tc_harness_opts *o);

/* The outcome of preparing or running a shape: an error of the library is a
 * data point (status + message), not a failure of the collector. */
struct tc_outcome {
    enum tc_status status;
    char message[256];
};

/* What measuring one shape gave. */
struct tc_measurement {
    struct tc_outcome outcome;
    struct tc_stats total;
    struct tc_stats parts[3];
    bool has_parts;
    bool converged;   /* rel CI reached before the budget */
    bool abandoned;   /* given up when asked to (tc_harness_opts.stop) */
    int warmup_reps;  /* untimed repetitions run */
    double warmup_ms; /* and the time they took */
    int group;        /* launches per timed sample (1: one each) */
    double wall_ms;   /* wall time the harness spent, incl. flushes */
    double flush_ms;  /* of which cache flushes the host waited for */
};

/* Seconds on CLOCK_MONOTONIC. */
double tc_now_s(void);

/* ------------------------------------------------------------------------ */
/* A collection run                                                          */
/* ------------------------------------------------------------------------ */

struct tc_collect_summary {
    size_t total;    /* shapes in the sweep */
    size_t in_shard; /* shapes of this shard */
    size_t skipped;  /* already stored by this run configuration */
    size_t measured; /* measured now (any status) */
    /* by status: ok; unsupported (a dtype or layout the backend does not
     * run, a property of the backend, not a failure of the shape); failed
     * (out of memory, library errors) */
    size_t ok, unsupported, failed;
    double wall_s;    /* the whole loop */
    double harness_s; /* inside tc_harness_measure */
    double kernel_s;  /* sum over ok shapes of every timed repetition */
    double flush_s;   /* host time spent flushing caches (cpu backend) */
    double insert_s;  /* database inserts and commits */
    int64_t run_id;
    bool resumed;     /* an existing run was continued */
    bool interrupted; /* stopped by *stop */
};

/* Called after each shape of the shard (measured or skipped). */
typedef void (*tc_collect_progress_fn)(void *ud, const struct tc_collect_summary *sum,
                                       const struct tc_shape *s, const struct tc_measurement *m);

struct tc_collect_opts {
    const struct tc_backend_ops *backend;
    int device;
    const char *db_path;
    const char *gpu_id;       /* NULL: derived from the device name */
    const struct tc_gpu *gpu; /* spec snapshot to store, may be NULL */
    int shard_index, shard_count;
    const double *costs; /* per sweep shape for sharding; NULL: FLOPs */
    struct tc_harness_opts harness;
    int commit_rows; /* commit after this many rows (32) */
    double commit_s; /* or this many seconds (5) */
    tc_collect_progress_fn progress;
    void *progress_ud;
    volatile int *stop; /* set (e.g. by SIGINT) to stop after a shape */
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
