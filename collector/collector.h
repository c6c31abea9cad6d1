/* The collector's internals: shard assignment, harness
 * statistics, the backend interface (the ops table the modules implement),
 * the harness and the device helpers, for the collector's own files, its
 * backends and its tests. What the tilecast command calls is in
 * tilecast/collect.h. Functions return 0 or a negative enum tc_error with
 * the message in tc_last_error(), like the library. */
#ifndef TC_COLLECTOR_H
#define TC_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilecast/collect.h"
#include "tilecast/tilecast.h"

/* ------------------------------------------------------------------------ */
/* Sharding                                                                  */
/* ------------------------------------------------------------------------ */

/* Partitions n items with costs into `count` shards: longest first, each to
 * the least loaded shard (ties: lower shard index; equal costs: lower item
 * index), so every process computes the same partition. Writes the shard of
 * item i to shard_of[i]. Non-finite or negative costs count as 0. */
int tc_shard_assign(const double *cost, size_t n, int count, int *shard_of);

/* ------------------------------------------------------------------------ */
/* Harness statistics                                                        */
/* ------------------------------------------------------------------------ */

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
    const char *name; /* "cpu", "cuda", "hip" */
    char device_name[TC_NAME_MAX];
    char device_uuid[64];
    char driver_version[64];
    char runtime_version[64];
    char blas_version[128];
    char timing[64];            /* e.g. "event-median-l2flush" */
    int64_t flush_bytes;        /* size of the cache-flush buffer */
    double timer_resolution_us; /* of the timer, when launches can be grouped
                                 * (tc_rep_times.group); 0: never group */
    /* The device's vendor and architecture family as a spec names them,
     * stored with rows collected without --gpu and checked against the
     * spec given with it; arch_known is false for a device of no family
     * tilecast models (a Pascal GPU, an unlisted gfx). */
    bool arch_known;
    enum tc_vendor vendor;
    enum tc_arch arch;
};

struct tc_backend;

/* The backend interface (opaque in tilecast/collect.h). */
struct tc_backend_ops {
    const char *name;
    /* Opens device `device`; fills *info. */
    int (*open)(int device, struct tc_backend **out, struct tc_backend_info *info);
    /* Allocates (reusing buffers where they fit), fills inputs with random
     * data and selects the algorithm. A non-ok outcome skips timing. */
    int (*prepare)(struct tc_backend *b, const struct tc_shape *s, struct tc_outcome *outcome);
    /* Runs `reps` timed repetitions of the prepared shape, each preceded by
     * an untimed cache flush, and fills t->total_us[0..reps) (and parts). */
    int (*run)(struct tc_backend *b, int reps, struct tc_rep_times *t, struct tc_outcome *outcome);
    /* The algorithm chosen for the prepared shape (gemm rows). */
    void (*algo)(struct tc_backend *b, struct tc_gemm_row *row);
    /* Optional: what ran the prepared attention shape (a fused kernel's
     * engine and knobs) for the row's message, into buf holding "" (left
     * so when there is nothing to say). */
    void (*attn_algo)(struct tc_backend *b, char *buf, size_t len);
    /* Clocks and temperature as a JSON object ("{}" if unknown). */
    void (*clocks)(struct tc_backend *b, char *json, size_t len);
    void (*close)(struct tc_backend *b);
    /* Optional: builds the backend's own kernels for `arch` without a
     * device (a build check); a summary or the error goes to msg. */
    int (*compile_check)(const char *arch, char *msg, size_t len);
};

/* Where tc_backend_load looks for the module of `name`. */
int tc_backend_module_path(const char *name, char *buf, size_t len);

extern const struct tc_backend_ops tc_backend_cpu;
/* The cpu backend's buffers of the prepared shape, for tests that check the
 * results: GEMM 0 = A, 1 = B, 2 = C; attention 0 = Q, 1 = K, 2 = V,
 * 3 = probabilities, 4 = output (row-major, batch-major, heads next). */
void *tc_backend_cpu_buffer(struct tc_backend *b, int i);

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

/* The architecture family of an NVIDIA device of compute capability
 * major.minor, or of an AMD one by its gfx target ("gfx90a", with or
 * without ":sramecc+:xnack-" features); false for one of no family. */
bool tc_cuda_arch_family(int major, int minor, enum tc_arch *arch);
bool tc_hip_arch_family(const char *gfx, enum tc_arch *arch);

/* The operand buffers a GPU backend keeps across shapes, through an
 * allocator of device memory. */
#define TC_DEVBUF_MAX 12
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
int tc_devbufs_ensure(struct tc_devbufs *set, const struct tc_dev_allocator *a, const size_t *bytes,
                      int n, struct tc_outcome *oc);
void tc_devbufs_release(struct tc_devbufs *set, const struct tc_dev_allocator *a);

/* Fills n elements of `dtype` with uniform random values in ±[0.5, 1)
 * (never zero: zeros make some hardware faster). Deterministic in seed. */
void tc_random_fill(void *buf, size_t n, enum tc_dtype dtype, uint64_t seed);

/* ISO 8601 UTC of now into buf[32]. */
void tc_utc_now(char *buf, size_t len);

/* The CUDA C source of the GPU backends' own kernels (gpu-kernels.c): the
 * softmax of unfused attention, the spin and the L2 flush. */
extern const char tc_gpu_kernels_src[];

/* ------------------------------------------------------------------------ */
/* NVML / ROCm SMI (dlopen; absent libraries give "{}")                      */
/* ------------------------------------------------------------------------ */

/* JSON object of clocks, temperature and power of the device with `uuid`
 * ("GPU-...", else NVML index `index`), from NVML when libnvidia-ml.so.1
 * loads, else "{}". Fills driver (may be NULL) when known. */
void tc_nvml_query(const char *uuid, int index, char *json, size_t len, char *driver,
                   size_t driver_len);
void tc_rocm_smi_query(int index, char *json, size_t len);

#endif
