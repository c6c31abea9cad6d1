/*
 * tilecast: how fast GEMMs, attention, transformer layers and models run on a GPU.
 *
 * The one public header of libtilecast. Conventions:
 *  - every symbol carries the tc_ / TC_ prefix;
 *  - functions returning int return 0 (TC_OK) or a negative enum tc_error;
 *    a constructor that can fail for more than one reason returns int and
 *    its object through a last `**out` argument (NULL on failure), as in
 *    tc_db_open and tc_specs_load; functions returning a pointer (lookups, constructors that
 *    fail only for want of memory) return NULL on failure;
 *  - on any failure, tc_last_error() returns a message for the calling thread,
 *    naming the file, line, column or value that was wrong;
 *  - tc_x_free(NULL) is a no-op; each function says who owns what it returns;
 *  - the layout of a public struct does not depend on an enum's count: an
 *    array indexed by an enum has a fixed capacity with headroom
 *    (TC_DTYPE_MAX), so adding a value moves no field;
 *  - a public struct that callers allocate and that may grow ends in
 *    `double reserved[4]`, zeroed by the caller (= {0}, memset) and ignored
 *    by the library: a new field takes its place from the tail, so the
 *    struct's size and every offset stay.
 */
#ifndef TILECAST_TILECAST_H
#define TILECAST_TILECAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tilecast/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TC_BUILDING_LIBRARY) && defined(__GNUC__)
#define TC_API __attribute__((visibility("default")))
#else
#define TC_API
#endif

/* ------------------------------------------------------------------------ */
/* Errors, versions, enums                                                   */
/* ------------------------------------------------------------------------ */

enum tc_error {
    TC_OK = 0,
    TC_ERR_INVALID = -1,     /* bad argument or value */
    TC_ERR_NOMEM = -2,       /* out of memory */
    TC_ERR_IO = -3,          /* file could not be read or written */
    TC_ERR_PARSE = -4,       /* malformed input (YAML, CSV, log) */
    TC_ERR_NOT_FOUND = -5,   /* unknown GPU id, shape not stored, ... */
    TC_ERR_UNSUPPORTED = -6, /* e.g. dtype not supported by the GPU */
    TC_ERR_DB = -7,          /* SQLite error */
    TC_ERR_SCHEMA = -8,      /* not a tilecast database, newer schema, corrupt */
    TC_ERR_DEVICE = -9,      /* GPU runtime or library error */
    TC_ERR_RANGE = -10,      /* value out of range (overflow, zero, negative) */
};

/* A static string naming err. Never NULL. */
TC_API const char *tc_strerror(int err);

/* The message of the last failure on this thread; "" if none. Owned by the
 * library, valid until the next tilecast call on this thread. */
TC_API const char *tc_last_error(void);

/* The library version, e.g. "0.1.0". Static string. */
TC_API const char *tc_version(void);
/* The API version of the library at run time, TC_API_VERSION's encoding
 * (tilecast/version.h): a program compares TC_API_MAJOR of it with the
 * TC_API_VERSION_MAJOR it was built with. */
TC_API unsigned tc_version_api(void);
/* The size in bytes of the public `struct NAME` (name without "struct ") as
 * the library was built, or 0 for an unknown name (TC_ERR_NOT_FOUND). For
 * bindings that mirror the structs without a C compiler (the Python
 * package's ctypes) and compare their sizes at load time; C callers have
 * sizeof. */
TC_API size_t tc_abi_sizeof(const char *name);

enum tc_dtype {
    TC_DTYPE_FP64 = 0,
    TC_DTYPE_FP32,
    TC_DTYPE_TF32,
    TC_DTYPE_FP16,
    TC_DTYPE_BF16,
    TC_DTYPE_FP8,
    TC_DTYPE_INT8,
    TC_DTYPE_COUNT
};
/* The capacity of the arrays indexed by enum tc_dtype in public structs
 * (struct tc_gpu): fixed, so that a new dtype moves no later field. Entries
 * from TC_DTYPE_COUNT on are 0. */
#define TC_DTYPE_MAX 16
#if defined(__cplusplus)
static_assert(TC_DTYPE_COUNT <= TC_DTYPE_MAX, "TC_DTYPE_MAX too small");
#else
_Static_assert(TC_DTYPE_COUNT <= TC_DTYPE_MAX, "TC_DTYPE_MAX too small");
#endif

/* "fp16" etc. Static string; "?" for out-of-range values. */
TC_API const char *tc_dtype_name(enum tc_dtype dtype);
/* Parses a dtype name (case-insensitive; accepts "half", "bfloat16", "float"...). */
TC_API int tc_dtype_parse(const char *name, enum tc_dtype *out);
/* Bytes per element of the inputs (tf32 is stored as fp32). */
TC_API int tc_dtype_bytes(enum tc_dtype dtype);

/* Layouts in the row-major (C/PyTorch) view: first letter A, second B.
 * N = stored as the logical row-major matrix (A as m x k, B as k x n),
 * T = stored transposed. nn.Linear is NT. */
enum tc_layout { TC_LAYOUT_NN = 0, TC_LAYOUT_NT, TC_LAYOUT_TN, TC_LAYOUT_TT, TC_LAYOUT_COUNT };

TC_API const char *tc_layout_name(enum tc_layout layout);
TC_API int tc_layout_parse(const char *name, enum tc_layout *out);

/* The framework call that ran a GEMM, as the measured data's `op` column
 * names it. Kernel time does not depend on it; a host-timed convention does
 * (tc_predictor_set_timing): nn.Linear's path costs more host time than a
 * plain GEMM call (tc_timing_cost.linear_us). 0 (MM) when not known. */
enum tc_gemm_op {
    TC_GEMM_OP_MM = 0, /* a plain GEMM call: torch.mm, torch.matmul, a BLAS call */
    TC_GEMM_OP_BMM,    /* torch.bmm: the same host path as MM */
    TC_GEMM_OP_LINEAR, /* nn.Linear / F.linear with a bias (addmm) */
    TC_GEMM_OP_COUNT
};

/* "mm", "bmm", "linear"; "?" for a value out of range. */
TC_API const char *tc_gemm_op_name(enum tc_gemm_op op);
TC_API int tc_gemm_op_parse(const char *name, enum tc_gemm_op *out);

/* Where a prediction came from. */
enum tc_source {
    TC_SOURCE_MEASURED = 0, /* an exactly measured shape */
    TC_SOURCE_CALIBRATED,   /* model fitted to measurements of this GPU */
    TC_SOURCE_TRANSFERRED,  /* model fitted to another GPU, moved through specs */
    TC_SOURCE_ANALYTICAL,   /* the model from the spec alone */
};

TC_API const char *tc_source_name(enum tc_source source);

/* ------------------------------------------------------------------------ */
/* GPU specs (gpu_specs/ *.yaml)                                             */
/* ------------------------------------------------------------------------ */

/* TC_VENDOR_CPU and TC_ARCH_CPU mark a host CPU measured by the cpu
 * backend (a test of the collector and the database without a GPU): stored
 * in a database's gpu table, never a spec, never predicted or calibrated. */
enum tc_vendor { TC_VENDOR_NVIDIA = 0, TC_VENDOR_AMD, TC_VENDOR_CPU };

/* Architecture families the kernel catalogue knows, and the host CPU. */
enum tc_arch {
    TC_ARCH_VOLTA = 0,
    TC_ARCH_TURING,
    TC_ARCH_AMPERE,
    TC_ARCH_ADA,
    TC_ARCH_HOPPER,
    TC_ARCH_BLACKWELL,
    TC_ARCH_CDNA2,
    TC_ARCH_CDNA3,
    TC_ARCH_CPU,
    /* Added after cpu, so that the values above keep their numbers: */
    TC_ARCH_PASCAL, /* sm_60/sm_61 (P100, P4): FFMA and HFMA2, no tensor cores */
    TC_ARCH_CDNA1,  /* gfx908 (MI100): MFMA, bf16 at half the fp16 rate */
    TC_ARCH_COUNT
};

TC_API const char *tc_arch_name(enum tc_arch arch);

#define TC_ID_MAX 64
#define TC_NAME_MAX 128

/* How a GPU reaches its peers in one node (a spec's interconnect:). */
enum tc_link {
    TC_LINK_UNKNOWN = 0, /* the spec gives none */
    TC_LINK_PCIE,        /* through the host's PCIe (or a PCIe switch) */
    TC_LINK_NVLINK,
    TC_LINK_XGMI, /* AMD Infinity Fabric */
    TC_LINK_COUNT
};

/* "unknown", "pcie", "nvlink", "xgmi"; "?" out of range. Static string. */
TC_API const char *tc_link_name(enum tc_link link);

/* A GPU's links to its tensor-parallel peers in one node: what the
 * collectives' alpha-beta model reads (bw_gbps) and what it says about
 * them. Taken from struct tc_gpu's reserved tail (its size is unchanged). */
struct tc_interconnect {
    double bw_gbps;         /* per direction, all its links together, 1e9 bytes/s; 0 unknown */
    enum tc_link link;      /* TC_LINK_UNKNOWN when the spec has no interconnect */
    int generation;         /* of that link: NVLink 2-5, PCIe 3-6, Infinity Fabric 3-4 */
    int links;              /* links from one GPU to its peers (1: a PCIe x16 slot) */
    unsigned char switched; /* 1: a switch (NVSwitch) gives every pair the full bw_gbps */
    unsigned char pcie_gen; /* the host link's PCIe generation, 0 unknown */
    unsigned char reserved_bytes[2];
};

/* One GPU as one process sees it (one GCD for MI250/MI250X). Plain data:
 * values are in the units their names say; 0 means "not supported" for
 * peaks and "unknown" elsewhere. */
struct tc_gpu {
    char id[TC_ID_MAX];     /* file name without .yaml, e.g. "a100-sxm4-80gb" */
    char name[TC_NAME_MAX]; /* marketing name */
    enum tc_vendor vendor;
    enum tc_arch arch;
    char compute_capability[16]; /* "sm_80", "gfx90a" */

    int units;               /* SMs or CUs */
    double clock_tensor_mhz; /* clock the tensor/matrix peaks assume */
    double clock_vector_mhz; /* clock the fp32/fp64 vector peaks assume */
    double clock_base_mhz;   /* base clock, 0 if unknown */
    /* indexed by enum tc_dtype, 0 from TC_DTYPE_COUNT on */
    double peak_tflops[TC_DTYPE_MAX];            /* dense, no sparsity */
    double flops_per_clk_per_unit[TC_DTYPE_MAX]; /* dense, per SM/CU */

    double mem_bw_gbps; /* vendor peak, 1e9 bytes/s */
    double mem_gb;      /* marketing GB */
    int64_t l2_bytes;
    double tdp_w;

    /* per-SM / per-CU limits (occupancy) */
    int warp_size;
    int max_threads_per_sm;
    int max_warps_per_sm;
    int max_blocks_per_sm;
    int max_threads_per_block;
    int regs_per_sm;
    int max_regs_per_block;
    int max_regs_per_thread;
    int reg_alloc_unit; /* registers per warp allocation unit (NVIDIA), VGPR granule (AMD) */
    int64_t smem_per_sm_bytes;
    int64_t smem_per_block_max_bytes; /* opt-in maximum */
    int64_t reserved_smem_per_block_bytes;
    int smem_alloc_unit_bytes;

    char sources[1024]; /* source keys, comma-separated */
    char flags[2048];   /* uncertain numbers, "; "-separated */
    struct tc_interconnect interconnect;
    /* The clock the FFMA pipes hold with every SM busy, under the board's
     * power limit; 0 if unknown (then clock_vector_mhz). It took the last
     * double of the reserved tail: the struct's size and offsets stay, and
     * the next field needs a new API major version. */
    double clock_vector_sustained_mhz;
};

/* A set of GPU specs. Opaque. */
struct tc_specs;

/* Loads every *.yaml in the directories of `path` (colon-separated; NULL for
 * the default: $TILECAST_SPECS_PATH, then the shipped gpu_specs/). A later
 * directory may not redefine an id of an earlier one (duplicate id error).
 * Returns why it failed (TC_ERR_IO, TC_ERR_PARSE, TC_ERR_INVALID, ...;
 * tc_last_error names file, line, column, field); *out is NULL on failure.
 * The caller owns *out; free with tc_specs_free. */
TC_API int tc_specs_load(const char *path, struct tc_specs **out);
/* Adds the GPUs of the directories of `dir` (colon-separated) to specs. An id
 * already present is a duplicate-id error (TC_ERR_INVALID) naming both files;
 * GPUs of the files read before an error stay in specs. */
TC_API int tc_specs_add_dir(struct tc_specs *specs, const char *dir);
/* Parses one file into *out without adding it anywhere and without
 * tc_gpu_check (the loaders run both). A file over 1 MiB is refused for its
 * size (TC_ERR_RANGE). *out is unchanged on failure. */
TC_API int tc_specs_parse_file(const char *file, struct tc_gpu *out);
/* Checks a parsed spec for internal consistency (peak ~ units x flops/clk x
 * clock within 2%, limits positive and coherent). Returns TC_OK or
 * TC_ERR_INVALID with the reason in tc_last_error(). */
TC_API int tc_gpu_check(const struct tc_gpu *gpu);
TC_API void tc_specs_free(struct tc_specs *specs);
TC_API size_t tc_specs_count(const struct tc_specs *specs);
/* Borrowed pointers, valid until tc_specs_free. */
TC_API const struct tc_gpu *tc_specs_at(const struct tc_specs *specs, size_t index);
TC_API const struct tc_gpu *tc_specs_find(const struct tc_specs *specs, const char *id);
/* The GPU a user means by name: its id, the id in any case
 * ("H100-SXM5-80GB"), or a prefix of exactly one id ("a100-pcie-4"). NULL
 * (TC_ERR_NOT_FOUND) otherwise, with tc_last_error() naming the candidates
 * of an ambiguous prefix ("h100": h100-pcie-80gb or h100-sxm5-80gb), or the
 * closest id of a typo and every known id. tc_specs_find takes exact ids
 * only, for code that must not guess. */
TC_API const struct tc_gpu *tc_specs_lookup(const struct tc_specs *specs, const char *name);
/* The file the GPU `id` was loaded from, or NULL if unknown. Borrowed,
 * valid until tc_specs_free. */
TC_API const char *tc_specs_file(const struct tc_specs *specs, const char *id);
/* The data directory the library uses for gpu_specs/ and db/prebuilt/
 * (installed prefix, or the source tree for an uninstalled build).
 * Static string. */
TC_API const char *tc_data_dir(void);

/* ------------------------------------------------------------------------ */
/* Database (db/)                                                            */
/* ------------------------------------------------------------------------ */

#define TC_DB_SCHEMA_VERSION 4

struct tc_db;

enum tc_db_mode {
    TC_DB_READONLY = 0, /* queries only; refuses anything but a valid tilecast db */
    TC_DB_READWRITE,    /* opens an existing tilecast db, migrating older schemas */
    TC_DB_CREATE,       /* as READWRITE, creating the file if missing */
};

/* Opens a database. A file with a newer schema, a non-tilecast SQLite file,
 * a truncated or corrupt file is refused (TC_ERR_SCHEMA) and never modified.
 * Returns why it failed: TC_ERR_SCHEMA (refused file), TC_ERR_NOT_FOUND (no
 * such file), TC_ERR_IO, TC_ERR_DB, ...; *out is NULL on failure. Read-only
 * opens of files over 1 MiB skip quick_check (SQLite reports damaged pages
 * as TC_ERR_SCHEMA when they are read). Caller owns *out; free with
 * tc_db_close. */
TC_API int tc_db_open(const char *path, enum tc_db_mode mode, struct tc_db **out);
TC_API void tc_db_close(struct tc_db *db);
TC_API int tc_db_schema_version(struct tc_db *db);
/* Runs PRAGMA integrity_check and tilecast's own checks. TC_OK if clean. */
TC_API int tc_db_integrity_check(struct tc_db *db);
/* Transactions batch writes; nesting is not supported. */
TC_API int tc_db_begin(struct tc_db *db);
TC_API int tc_db_commit(struct tc_db *db);
TC_API int tc_db_rollback(struct tc_db *db);

/* Stores a spec snapshot of the GPU measured (idempotent by id). */
TC_API int tc_db_put_gpu(struct tc_db *db, const struct tc_gpu *gpu);

/* Provenance of one run. Strings may be NULL. */
struct tc_run_info {
    const char *gpu_id;
    const char *kind; /* "collected" or "imported" */
    const char *host;
    const char *device_name;
    const char *device_uuid;
    const char *driver_version;
    const char *runtime_version;
    const char *blas_version;
    const char *backend; /* "cuda", "hip", "cpu", or the import format */
    const char *sweep_name;
    const char *sweep_hash;
    const char *config_hash; /* run configuration key for resume/merge */
    const char *shard;       /* "I/N" */
    const char *timing;      /* timing method, e.g. "event-median-l2flush" */
    const char *source;      /* imported: origin of the data */
    const char *licence;
    const char *clocks_json; /* clocks/temperature before and after */
    const char *tilecast_version;
    const char *started_at; /* ISO 8601 UTC */
    const char *ended_at;
    double reserved[4]; /* zeroed (see the top of this header) */
};

/* Records a run; *run_id receives its id. */
TC_API int tc_db_add_run(struct tc_db *db, const struct tc_run_info *info, int64_t *run_id);
/* Finds an existing run with the same config_hash and gpu (for --resume). */
TC_API int tc_db_find_run(struct tc_db *db, const char *gpu_id, const char *config_hash,
                          int64_t *run_id);
TC_API int tc_db_end_run(struct tc_db *db, int64_t run_id, const char *ended_at);

enum tc_status { TC_STATUS_OK = 0, TC_STATUS_OOM, TC_STATUS_UNSUPPORTED, TC_STATUS_ERROR };
TC_API const char *tc_status_name(enum tc_status status);

/* One GEMM measurement (all `batch` GEMMs of one call). */
struct tc_gemm_row {
    int64_t run_id;
    enum tc_dtype dtype;   /* input type A/B */
    enum tc_dtype dtype_c; /* output type */
    enum tc_dtype compute; /* compute type */
    enum tc_layout layout;
    int64_t m, n, k, batch;
    double time_us; /* median */
    double min_us;
    double spread_pct; /* relative CI half-width or IQR/median, in % */
    int reps;
    /* the algorithm the library chose; zeros/empty when unknown */
    int tile_m, tile_n, tile_k, stages, split_k, cluster_m, cluster_n, swizzle;
    char algo[256]; /* kernel or solution name */
    enum tc_status status;
    char message[256];
    double reserved[4]; /* zeroed (see the top of this header) */
};

TC_API int tc_db_insert_gemm(struct tc_db *db, const struct tc_gemm_row *row);
/* Exact lookup of the best ok measurement of a shape on a GPU (any run).
 * TC_ERR_NOT_FOUND if none. */
TC_API int tc_db_lookup_gemm(struct tc_db *db, const char *gpu_id, enum tc_dtype dtype,
                             enum tc_layout layout, int64_t m, int64_t n, int64_t k, int64_t batch,
                             struct tc_gemm_row *out);
/* Whether run_id already stored this shape (resume). */
TC_API int tc_db_has_gemm(struct tc_db *db, int64_t run_id, enum tc_dtype dtype,
                          enum tc_layout layout, int64_t m, int64_t n, int64_t k, int64_t batch,
                          bool *found);

/* Attention implementations. FLASH is the best fused kernel the
 * architecture's libraries offer (Ampere and Ada: FlashAttention-2; Hopper:
 * FlashAttention-3; Blackwell: FlashAttention-4; other GPUs: a
 * FlashAttention-2 class model); the others name one library's kernels.
 * The values of UNFUSED and FLASH are fixed (databases and bindings). */
enum tc_attn_impl {
    TC_ATTN_UNFUSED = 0, /* scores bmm + softmax + values bmm */
    TC_ATTN_FLASH,       /* the architecture's best fused kernel */
    TC_ATTN_FLASH2,      /* FlashAttention-2 (mma.sync, sm80 and later) */
    TC_ATTN_FLASH3,      /* FlashAttention-3 (wgmma, warp-specialised, sm90) */
    TC_ATTN_FLASH4,      /* FlashAttention-4 (CuTe DSL: sm80 forward, sm90, sm100) */
    TC_ATTN_CUDNN,       /* cuDNN's fused SDPA engines (sm80 and later) */
    TC_ATTN_CUDNN_OSS,   /* the cuDNN frontend's open-source SDPA engines: no
                            tiles of their own are published, so the model is
                            cuDNN's; rows of their own calibrate it apart */
    TC_ATTN_IMPL_COUNT
};
/* "flash", "flash2", ...; "?" for out-of-range values. */
TC_API const char *tc_attn_impl_name(enum tc_attn_impl impl);
/* Parses an implementation name (case-insensitive). */
TC_API int tc_attn_impl_parse(const char *name, enum tc_attn_impl *out);

struct tc_attention_row {
    int64_t run_id;
    enum tc_attn_impl impl;
    enum tc_dtype dtype;
    int64_t batch, heads, kv_heads, seq_q, seq_kv, head_dim;
    bool causal; /* aligned at the bottom right when seq_kv > seq_q */
    bool backward;
    bool deterministic;  /* backward: the deterministic variant */
    int64_t head_dim_vo; /* V and O head dim; 0 means head_dim */
    int64_t window;      /* causal sliding window in keys; 0 means none */
    double time_us, min_us, spread_pct;
    int reps;
    /* unfused parts, 0 when not measured */
    double scores_us, softmax_us, values_us;
    enum tc_status status;
    char message[256];
    /* the KV cache read (from the reserved tail; 0 reads as before): */
    int64_t page_size;      /* keys per page of a paged cache; 0 means contiguous */
    enum tc_dtype kv_dtype; /* the cache's dtype; TC_DTYPE_FP64 (0) means dtype's */
    double reserved[2];     /* zeroed (see the top of this header) */
};

TC_API int tc_db_insert_attention(struct tc_db *db, const struct tc_attention_row *row);

/* Iterates ok GEMM rows filtered by gpu (NULL = any), dtype (<0 = any) and
 * layout (<0 = any). Caller owns the iterator. */
struct tc_db_iter;
TC_API int tc_db_iter_gemm(struct tc_db *db, const char *gpu_id, int dtype, int layout,
                           struct tc_db_iter **out);
/* Returns 1 and fills *row (and gpu id into gpu_id[TC_ID_MAX] if non-NULL)
 * while rows remain, 0 at the end, negative on error. */
TC_API int tc_db_iter_next(struct tc_db_iter *it, struct tc_gemm_row *row, char *gpu_id);
TC_API void tc_db_iter_free(struct tc_db_iter *it);

/* The file this database was opened from. Borrowed, valid until tc_db_close. */
TC_API const char *tc_db_path(const struct tc_db *db);

/* Reads back the spec snapshot of a GPU stored in the database (so a file
 * is usable without gpu_specs/). TC_ERR_NOT_FOUND if absent. */
TC_API int tc_db_get_gpu(struct tc_db *db, const char *gpu_id, struct tc_gpu *out);

/* Counts ok GEMM rows filtered as tc_db_iter_gemm does. */
TC_API int tc_db_count_gemm(struct tc_db *db, const char *gpu_id, int dtype, int layout,
                            int64_t *count);

/* Whether run_id already stored this attention shape (resume). */
TC_API int tc_db_has_attention(struct tc_db *db, int64_t run_id, const struct tc_attention_row *key,
                               bool *found);
/* Exact lookup of the fastest ok attention measurement of key's shape
 * (impl, dtype, batch, heads, kv_heads, seq_q, seq_kv, head_dim,
 * head_dim_vo, window, causal, deterministic, backward, page_size,
 * kv_dtype) on a GPU, over all runs. TC_ERR_NOT_FOUND if none. */
TC_API int tc_db_lookup_attention(struct tc_db *db, const char *gpu_id,
                                  const struct tc_attention_row *key, struct tc_attention_row *out);

/* Prepares a file for shipping: checkpoints, switches to a rollback journal
 * (so read-only opening never needs -wal/-shm files), ANALYZE, VACUUM.
 * Not inside a transaction. */
TC_API int tc_db_compact(struct tc_db *db);

/* A calibration fitted from the measured rows of one GPU and dtype (and
 * layout, or all layouts), stored so a laptop never refits what a cluster
 * already fitted. Plain data. */
#define TC_CALIB_PARAMS_MAX 4096
struct tc_calibration_row {
    char gpu_id[TC_ID_MAX];
    enum tc_dtype dtype;
    int layout;                            /* enum tc_layout, or -1 for all layouts */
    int model_version;                     /* the predictor's model version the fit belongs to */
    char params_json[TC_CALIB_PARAMS_MAX]; /* the fitted parameters, a JSON object */
    int64_t n_rows;                        /* measured rows the fit used */
    double median_ape_pct;                 /* median absolute % error of the fit, in % */
    double p90_ape_pct;                    /* 90th percentile absolute % error, in % */
    double log_resid_sd;                   /* standard deviation of ln(measured / model) */
    char source_gpu[TC_ID_MAX]; /* transfers: the GPU whose rows were fitted; "" if gpu_id */
    char tilecast_version[32];  /* written by tc_db_put_calibration when empty */
    char created_at[32];        /* ISO 8601 UTC; written when empty */
    double reserved[4];         /* zeroed (see the top of this header) */
};

/* Stores a calibration, replacing one with the same gpu, dtype, layout,
 * model_version and source_gpu. */
TC_API int tc_db_put_calibration(struct tc_db *db, const struct tc_calibration_row *row);
/* Fetches the newest calibration for that key (source_gpu NULL or "" = fitted
 * on gpu_id itself). TC_ERR_NOT_FOUND if none. */
TC_API int tc_db_get_calibration(struct tc_db *db, const char *gpu_id, enum tc_dtype dtype,
                                 int layout, int model_version, const char *source_gpu,
                                 struct tc_calibration_row *out);

/* Imports measurements from other tools (db/import.c). All files are read in
 * one transaction: on any error the database is left exactly as it was, and
 * tc_last_error() names file:line[:column]. Rows are marked kind 'imported'
 * with their source, timing method and licence as provenance. Formats:
 *  "csv"      the shared measured-data CSV (gpu,dtype,op,batch,m,n,k,layout,
 *             time_us,tflops,timing,source,...);
 *  "cookbook" EleutherAI cookbook sizing logs ("Throughput (in TFLOP/s) for
 *             MxNxK: X", "BxMxNxK: X"; their n is the reduction dimension);
 *  "mamf"     logs of the maximum-achievable-matmul finder. */
struct tc_import_options {
    const char *gpu_id;           /* cookbook/mamf: required; csv: only rows of this GPU */
    const struct tc_specs *specs; /* spec snapshots for GPUs not yet in the db; may be NULL */
    const char *dtype;            /* logs: input dtype when the log does not say */
    const char *timing;           /* overrides the timing method (required where unknown) */
    const char *source;           /* overrides the source (default: the file's own, or its name) */
    const char *licence;          /* overrides the licence (default: known sources' licence) */
    bool skip_untimed;            /* csv: skip rows without time_us/tflops (efficiency tables) */
    double reserved[4];           /* zeroed (see the top of this header) */
};

struct tc_import_stats {
    int64_t rows;            /* rows stored */
    int64_t duplicates;      /* rows whose shape the same run already held (first kept) */
    int64_t runs;            /* runs created */
    int64_t skipped_gpu;     /* csv rows of other GPUs (with gpu_id set) */
    int64_t skipped_untimed; /* csv rows without a time (skip_untimed) */
    int64_t skipped_failed;  /* cudnn-frontend: cases the source itself reports as
                                failed or unsupported (no time to store) */
    /* cudnn-frontend attention_inference results (from the reserved tail):
     * rows tilecast has no kernel or key for (FlashInfer, b12x and FlashMLA
     * rows, MLA's shared K=V record, a chunked prefill whose mask the file
     * does not record) */
    int64_t skipped_unmodelled;
    double reserved[3]; /* zeroed (see the top of this header) */
};

TC_API int tc_db_import(struct tc_db *db, const char *format, size_t n_files,
                        const char *const *files, const struct tc_import_options *opt,
                        struct tc_import_stats *stats);

/* Writes ok GEMM rows (optionally of one GPU) to path ("-" or NULL: stdout)
 * as "csv" (the shared measured-data format, so export -> import round-trips)
 * or "json" (an object with the GPUs, runs and rows). *rows gets the count. */
TC_API int tc_db_export(struct tc_db *db, const char *format, const char *gpu_id, const char *path,
                        int64_t *rows);

/* Merges databases into out (created if missing; must not be one of the
 * inputs). Runs with identical provenance are joined and identical shapes
 * in them stored once; runs whose provenance differs stay separate. The
 * result is verified with tc_db_integrity_check. */
struct tc_merge_stats {
    int64_t runs_added, runs_joined;
    int64_t gemm_added, gemm_duplicates;
    int64_t attention_added, attention_duplicates;
    int64_t calibrations_added;
    double reserved[4]; /* zeroed (see the top of this header) */
};
TC_API int tc_db_merge(const char *out, size_t n_inputs, const char *const *inputs,
                       struct tc_merge_stats *stats);

/* A summary of a database for `tilecast db info`. Strings are owned by the
 * info and freed by tc_db_info_free. */
struct tc_db_info_gpu {
    char id[TC_ID_MAX];
    char name[TC_NAME_MAX];
    char arch[16];
};
struct tc_db_info_run {
    int64_t id;
    char gpu_id[TC_ID_MAX];
    char kind[16];
    /* provenance, "" when unknown: host, device_name, device_uuid,
     * driver_version, runtime_version, blas_version, backend, sweep_name,
     * sweep_hash, config_hash, shard, timing, source, licence, clocks_json,
     * tilecast_version, started_at, ended_at (TC_DB_RUN_FIELDS, in order) */
    char *fields[18];
    int64_t gemm_rows, attention_rows;
};
#define TC_DB_RUN_FIELDS 18
/* Name of provenance field i of struct tc_db_info_run (e.g. "host"). */
TC_API const char *tc_db_run_field_name(int i);
struct tc_db_info_count {
    char gpu_id[TC_ID_MAX];
    char table[16]; /* "gemm" or "attention" */
    char kind[16];  /* "collected" or "imported" */
    char dtype[8];
    char status[16];
    int64_t rows;
};
struct tc_db_info {
    int schema_version;
    char writer_version[32];
    char created_at[32];
    size_t n_gpus, n_runs, n_counts, n_calibrations;
    struct tc_db_info_gpu *gpus;
    struct tc_db_info_run *runs;
    struct tc_db_info_count *counts;
};
TC_API int tc_db_info_get(struct tc_db *db, struct tc_db_info **out);
TC_API void tc_db_info_free(struct tc_db_info *info);

/* ------------------------------------------------------------------------ */
/* GEMM prediction (predictor/)                                              */
/* ------------------------------------------------------------------------ */

struct tc_gemm_query {
    int64_t m, n, k; /* row-major C[m x n] = A[m x k] . B[k x n] */
    int64_t batch;   /* 0 is taken as 1 */
    enum tc_dtype dtype;
    enum tc_layout layout;
    int64_t lda, ldb, ldc; /* 0 = packed */
    /* the framework call (0: a plain GEMM): adds its host path's cost under
     * a host-timed convention (tc_predictor_set_timing), nothing to kernel
     * time. Taken from the reserved tail: size and offsets as before. */
    enum tc_gemm_op op;
    double reserved[3]; /* zeroed (see the top of this header) */
};

enum tc_bound { TC_BOUND_COMPUTE = 0, TC_BOUND_MEMORY, TC_BOUND_LATENCY };
TC_API const char *tc_bound_name(enum tc_bound bound);

/* Alignment class of the leading dimensions. */
enum tc_align {
    TC_ALIGN_128B = 0, /* every leading dimension a multiple of 128 bytes */
    TC_ALIGN_16B,      /* multiples of 16 bytes */
    TC_ALIGN_4B,       /* multiples of 4 bytes (e.g. fp16 dims = 2 mod 4) */
    TC_ALIGN_ELEM,     /* element-aligned only (odd fp16 dims) */
};
TC_API const char *tc_align_name(enum tc_align align);

struct tc_gemm_prediction {
    double time_us;
    double tflops;
    double frac_peak; /* of the dtype's dense peak */
    enum tc_source source;
    double lo_us, hi_us;   /* uncertainty interval (see README) */
    double interval_level; /* nominal coverage, e.g. 0.8 */
    /* the chosen configuration */
    char kernel[96];
    int tile_m, tile_n, tile_k, stages, warps, split_k, cluster_m, cluster_n;
    bool stream_k;
    int64_t tiles; /* incl. batch and split */
    double waves;
    double wave_eff; /* useful fraction of the last wave quantization */
    double tile_eff; /* useful fraction of tile area */
    int blocks_per_sm;
    double occupancy; /* resident warps / max warps */
    enum tc_bound bound;
    enum tc_align align;
    /* the model's parts, which calibration rescales: the MMA (compute) time,
     * the data-movement time and the fixed overheads (launch, pipeline fill,
     * epilogue), in µs */
    double compute_us, memory_us, overhead_us;
    /* calibrated: neighbours used and their mean log-shape distance */
    int neighbours;
    double neighbour_dist;
    char calib_gpu[TC_ID_MAX]; /* transferred: the GPU the data came from */
    double reserved[4];        /* zeroed (see the top of this header) */
};

/* A predictor: specs, optional databases, cached calibrations. Opaque. */
struct tc_predictor;

/* specs is borrowed and must outlive the predictor. Caller owns the result.
 * NULL only when memory runs out (TC_ERR_NOMEM) or specs is NULL (a caller's
 * bug, TC_ERR_INVALID): it reads nothing, so it keeps the pointer form; the
 * databases it reads come with tc_predictor_add_db, which returns a code. */
TC_API struct tc_predictor *tc_predictor_new(const struct tc_specs *specs);
TC_API void tc_predictor_free(struct tc_predictor *p);
/* Adds a database whose measurements calibrate predictions. It is opened
 * read-only: a calibration stored in it (tc_db_calibrate) is used when it
 * was fitted on exactly the rows read; otherwise the first prediction of a
 * GPU and dtype fits them in memory, up to 50,000 rows of that pair in all
 * the databases added. Beyond, predictions of that pair fail with
 * TC_ERR_UNSUPPORTED and a message naming `tilecast db calibrate`. */
TC_API int tc_predictor_add_db(struct tc_predictor *p, const char *path);
/* Uses the shipped prebuilt databases (default on). */
TC_API void tc_predictor_use_prebuilt(struct tc_predictor *p, bool on);
/* Ignores every database: pure analytical model. */
TC_API void tc_predictor_set_analytical(struct tc_predictor *p, bool on);
/* Allows transferring calibrations from other GPUs (default on). */
TC_API void tc_predictor_allow_transfer(struct tc_predictor *p, bool on);
/* The timing convention predictions follow: NULL or "kernel" (default) for
 * kernel time; a measured data's method tag ("event-fastest5-mean",
 * "wall-avg-incl-launch", "wall-slowest", ...) adds the host cost the
 * calibration fitted for that method, so predictions can be compared with
 * rows timed that way. An exactly measured shape answers with its
 * measurement: one of the same class of method where there is one, else
 * one of another class, as measured, with a note (tc_predictor_note) that
 * says how it was timed. Tags that name no host-side method are kernel
 * time. A query's op (tc_gemm_query.op) adds what its host path costs
 * beyond a plain GEMM call's under such a method (nn.Linear:
 * tc_timing_cost.linear_us); kernel time never depends on it. */
TC_API int tc_predictor_set_timing(struct tc_predictor *p, const char *timing);
/* What the last prediction of p should tell its user beyond its source:
 * an empty database, a database of another GPU, a stored calibration of
 * another model version that was recomputed, a transfer. "" when nothing.
 * Owned by p, valid until the next call on p. */
TC_API const char *tc_predictor_note(const struct tc_predictor *p);

/* Predicts one GEMM on gpu. */
TC_API int tc_predict_gemm(struct tc_predictor *p, const struct tc_gpu *gpu,
                           const struct tc_gemm_query *q, struct tc_gemm_prediction *out);
/* The pure analytical model, no predictor needed. Thread-safe. */
TC_API int tc_predict_gemm_analytical(const struct tc_gpu *gpu, const struct tc_gemm_query *q,
                                      struct tc_gemm_prediction *out);
/* Predicts n GEMMs; per-row errors go to errs[i] (may be NULL). Returns the
 * number of failed rows, or a negative error. */
TC_API int tc_predict_gemm_batch(struct tc_predictor *p, const struct tc_gpu *gpu, size_t n,
                                 const struct tc_gemm_query *q, struct tc_gemm_prediction *out,
                                 int *errs);

/* ------------------------------------------------------------------------ */
/* Attention, layers, models, advice (predictor/)                            */
/* ------------------------------------------------------------------------ */

struct tc_attention_query {
    enum tc_attn_impl impl;
    enum tc_dtype dtype;
    int64_t batch, heads, kv_heads, seq_q, seq_kv, head_dim;
    bool causal;
    bool backward;
    bool deterministic;  /* backward: the deterministic dQ accumulation */
    int64_t head_dim_vo; /* V and O head dim; 0 means head_dim */
    int64_t window;      /* causal sliding window: each query sees at most this
                            many keys, its own included; 0 means no window */
    int64_t kv_splits;   /* forward split-KV: 0 = the kernel's heuristic, 1 =
                            never split (training entry points), n = n splits */
    /* the KV cache read (from the reserved tail; 0 reads as before): */
    int64_t page_size;      /* keys per page of a paged cache (a block table's
                               pages, vLLM's PagedAttention); 0 means contiguous */
    enum tc_dtype kv_dtype; /* the cache's dtype (fp8: an fp8 KV cache under a
                               16-bit attention); TC_DTYPE_FP64 (0) means dtype's */
    double reserved[2];     /* zeroed (see the top of this header) */
};

struct tc_attention_prediction {
    double time_us;
    double tflops;
    enum tc_source source;
    double lo_us, hi_us;
    /* unfused parts (0 for flash) */
    double scores_us, softmax_us, values_us;
    double expand_us; /* unfused grouped-query: repeating K/V to all heads */
    /* useful FLOPs, counted as FlashAttention's and cuDNN's benchmarks do:
     * 2·b·h·N·(d_qk + d_vo) forward, 2·b·h·N·(3·d_qk + 2·d_vo) backward, N
     * the (query, key) pairs the mask keeps */
    double flops;
    /* fused tile model */
    int block_m, block_n, blocks_per_sm;
    int64_t blocks;
    double waves;
    double occupancy; /* resident warps / max warps */
    enum tc_bound bound;
    enum tc_attn_impl kernel; /* the kernel modelled (FLASH resolved per architecture) */
    int64_t kv_splits;        /* KV splits of the forward (1: none) */
    double reserved[4];       /* zeroed (see the top of this header) */
};

/* Predicts one attention call: unfused through the GEMM predictor (scores
 * bmm, softmax from bytes and bandwidth, values bmm), the fused kernels
 * from a tile model of the named kernel on the GPU (its tiles, scheduling,
 * split-KV and efficiencies from its published benchmarks; the causal
 * diagonal tiles computed in full; labelled analytical;
 * predictor/attention-kernels.c, attention-fused.c). TC_ERR_UNSUPPORTED
 * where the named kernel does not run the query (architecture, dtype, head
 * dim above 256) or tilecast does not model it (the deterministic backward
 * of all but FlashAttention-2, FlashAttention-4 on sm90 and the cuDNN
 * frontend's open sm80 engines). With a
 * predictor whose databases hold attention rows of this GPU, impl, dtype
 * and direction: an exactly measured shape returns its measurement
 * (measured), any other the model scaled by the rows' median
 * measured/model ratio shrunk towards 1 (calibrated); see attention.c.
 * seq_kv 0 means seq_q, kv_heads 0 means heads. p may be NULL (analytical). */
TC_API int tc_predict_attention(struct tc_predictor *p, const struct tc_gpu *gpu,
                                const struct tc_attention_query *q,
                                struct tc_attention_prediction *out);

/* The measurement of q's exact shape on gpu_id in db (the fastest ok row,
 * tc_db_lookup_attention; seq_kv 0 and kv_heads 0 as above). On success
 * *out holds the measured time, its spread as the interval and the unfused
 * parts the row measured, labelled TC_SOURCE_MEASURED; the tile-model
 * fields of a prediction already in *out are kept. TC_ERR_NOT_FOUND (and
 * *out untouched) when the shape was not measured. */
TC_API int tc_attention_measured(struct tc_db *db, const char *gpu_id,
                                 const struct tc_attention_query *q,
                                 struct tc_attention_prediction *out);

/* The memory-bound kernels of a layer, one over a rows x cols tensor, as
 * `predict layer` and `predict model` time them (predictor/memop.c): DRAM
 * passes over the tensor at a streaming bandwidth, no host time. The values
 * are fixed (bindings). */
enum tc_memop_kind {
    TC_MEMOP_UNARY = 0, /* y = f(x): an activation, a scaling (GeLU, ReLU, x * s) */
    TC_MEMOP_BINARY,    /* z = x op y over two tensors: a residual add, SwiGLU's product */
    TC_MEMOP_SOFTMAX,   /* softmax over each row of cols */
    TC_MEMOP_LAYERNORM, /* LayerNorm over each row of cols */
    TC_MEMOP_RMSNORM,   /* RMSNorm over each row of cols */
    TC_MEMOP_KIND_COUNT
};
/* "unary", "binary", "softmax", "layernorm", "rmsnorm"; "?" out of range. */
TC_API const char *tc_memop_kind_name(enum tc_memop_kind kind);
/* Parses those names (case-insensitive); TC_ERR_INVALID otherwise. */
TC_API int tc_memop_kind_parse(const char *name, enum tc_memop_kind *out);

struct tc_memop_query {
    enum tc_memop_kind kind;
    enum tc_dtype dtype;
    int64_t rows, cols; /* the tensor (a norm's or a softmax's rows of cols) */
    double reserved[4]; /* zeroed */
};

struct tc_memop_prediction {
    double time_us;     /* kernel time, analytical (a prediction) */
    double bytes;       /* DRAM bytes the model moves: passes x rows x cols x element */
    double passes;      /* passes over the tensor the kernel makes */
    double gbps;        /* bytes / time_us, in GB/s */
    double reserved[4]; /* zeroed */
};

/* The analytical time of one memory-bound kernel on gpu (no database: the
 * layer model's figure). TC_ERR_RANGE for a non-positive size, a tensor
 * over 2^62 bytes or an unknown kind or dtype. */
TC_API int tc_predict_memop(const struct tc_gpu *gpu, const struct tc_memop_query *q,
                            struct tc_memop_prediction *out);

/* A decoder-only transformer (Megatron/GPT-NeoX/Llama style). Shapes follow
 * the paper's decomposition (see predictor/model.c). head_dim 0 means
 * hidden / heads; kv_heads 0 means heads; ffn 0 means 4·hidden (GeLU) or
 * the Llama rule for SwiGLU (8/3·hidden rounded up to a multiple of 256).
 * vocab 0 means "no embedding/logits" (one layer only). */
struct tc_model_config {
    char name[TC_NAME_MAX];
    int64_t hidden, heads, kv_heads, head_dim, ffn, layers, vocab, seq, micro_batch, tp;
    bool swiglu;
    bool rmsnorm;
    enum tc_dtype dtype;
    enum tc_attn_impl attention;
    bool training;        /* forward + backward; false: inference prefill */
    bool causal;          /* causal attention mask (default true) */
    bool tied_embeddings; /* logits reuse the embedding matrix (parameter count only) */
    bool graphs;          /* the step runs as a CUDA graph: no host dispatch per op
                           * (default false: eager, each op dispatched by the host) */
    bool serving;         /* the step runs under a serving engine (vLLM-style): its
                           * per-step host work is added and a prefill computes
                           * the logits of each sequence's last token only */
    /* Training across GPUs (from the reserved tail; 0 reads as the default): */
    int64_t dp;           /* data-parallel replicas (1: none): the gradients are
                           * all-reduced over them once per step */
    int64_t zero_stage;   /* ZeRO (Rajbhandari et al. 2020) over the dp replicas:
                           * 1 partitions the optimizer state, 2 the gradients too,
                           * 3 the weights too; 0 none */
    bool recompute;       /* full activation recomputation: each layer keeps its
                           * input only and runs its forward again in the backward */
    bool rope;            /* rotary position embeddings (Llama, GPT-NeoX): a kernel
                           * a layer rotates q and k (false: learned or none) */
    bool attention_eager; /* unfused attention as Hugging Face's eager modules run
                           * it: the scale and the mask are kernels of their own
                           * over the scores before the softmax (config word
                           * attention: eager; false: Megatron's fused
                           * scale-mask-softmax, one kernel) */
    /* Pipeline parallelism (the last double of the reserved tail, as two
     * 32-bit fields; 0 reads as 1): */
    int32_t pp;           /* pipeline stages, each holding layers / pp layers
                           * (Megatron-LM's 1F1B schedule; pp must divide layers) */
    int32_t microbatches; /* micro-batches of micro_batch sequences per step:
                           * what a pipeline fills itself with, and gradient
                           * accumulation without one */
    /* Dropout of training mode, a probability in [0, 1) (0: none; a forward
     * without gradients, inference, drops nothing): */
    double dropout;           /* of the hidden states after the attention's output
                               * projection and after the MLP (Hugging Face's
                               * hidden_dropout_prob, resid_pdrop, dropout) */
    double attention_dropout; /* of the attention probabilities
                               * (attention_probs_dropout_prob, attn_pdrop,
                               * attention_dropout) */
    bool gelu_new;            /* the GeLU is Hugging Face's NewGELUActivation (GPT-2's
                               * activation_function gelu_new): its tanh formula
                               * as eight eager element-wise kernels, not one
                               * (config word activation: gelu_new) */
    int64_t num_labels;       /* the output head: 0, the language model's logits
                               * over the vocabulary; n > 0, a sequence
                               * classifier of n labels instead (Hugging Face's
                               * BertForSequenceClassification: the pooler, a
                               * dense hidden x hidden layer and tanh on each
                               * sequence's first token, then a hidden x n
                               * classifier), no vocabulary projection; the
                               * embedding (vocab) stays */
};

/* Loads a model config from YAML (keys in README / predictor/models/).
 * `file` is a path, or the name of a shipped config alone ("llama-2-7b":
 * <data dir>/predictor/models/llama-2-7b.yaml) when no file of that name
 * exists. Fields absent from the file keep tc_model_config_defaults()
 * values. Errors name file:line:column; a file over 1 MiB is refused for
 * its size (TC_ERR_RANGE). */
TC_API int tc_model_config_load(const char *file, struct tc_model_config *out);
/* Sets one key of a model config from its text, as a YAML config, a shape
 * flag of the command and a Python dict all do: the keys, their aliases and
 * ranges are in README ("Model configs"). Integers in decimal, booleans as
 * true/yes/on/1 or false/no/off/0, names case-insensitive. On failure cfg is
 * unchanged and the error is TC_ERR_INVALID (an unknown key or name),
 * TC_ERR_PARSE (not an integer or boolean) or TC_ERR_RANGE, with a message
 * that names the key and the value. */
TC_API int tc_model_config_set(struct tc_model_config *cfg, const char *key, const char *value);
/* The field of struct tc_model_config that key sets ("hidden" for hidden
 * and hidden_size; "swiglu" for activation and swiglu): two keys of one
 * config that set one field contradict each other or repeat. A static
 * string; NULL for an unknown key (TC_ERR_INVALID, the message lists the
 * keys or names the one to use). */
TC_API const char *tc_model_config_field(const char *key);
/* Paper-style defaults: fp16, flash attention, training, causal, b = 1,
 * t = 1; shape fields 0 (to be filled). */
TC_API void tc_model_config_defaults(struct tc_model_config *cfg);
/* Fills the derived fields (head_dim, kv_heads, ffn) and checks the shape
 * (divisibility by heads and tp, positive sizes). */
TC_API int tc_model_config_resolve(struct tc_model_config *cfg);
/* Parameter count (weights of all layers, norms, embedding and logits). */
TC_API double tc_model_params(const struct tc_model_config *cfg);

#define TC_OP_NAME_MAX 32

struct tc_op_prediction {
    char name[TC_OP_NAME_MAX]; /* "qkv", "scores", "mlp_up.wgrad", ... */
    char kind[16];          /* "gemm", "bmm", "attention", "elementwise", "allreduce", "allgather",
                             * "p2p" (a pipeline's send), "recompute" */
    int64_t m, n, k, batch; /* GEMM shape, or bytes moved in m (elementwise, allreduce,
                             * allgather, p2p) */
    enum tc_layout layout;
    double time_us, tflops, flops;
    enum tc_source source;
    bool in_layer; /* repeated per layer (false: embedding/logits) */
    double share;  /* of layer time (in_layer) or of step time */
    /* the GEMM prediction's explanation (GEMM/bmm ops; defaults otherwise) */
    enum tc_align align;
    enum tc_bound bound;
    double tile_eff, wave_eff, waves, occupancy;
};

struct tc_model_prediction {
    size_t n_ops;
    struct tc_op_prediction *ops; /* one layer, then the logits/embedding ops */
    double layer_time_us;
    double head_time_us; /* embedding, logits and loss, once per step */
    double step_time_us; /* layers x layer_time_us + head_time_us */
    double tokens_per_s; /* b·s / step time (one model replica over tp GPUs) */
    double model_tflops; /* useful FLOPs per GPU per second / 1e12 */
    double mfu;          /* model_tflops / the dtype's dense peak */
    double step_flops;   /* useful FLOPs of one step, all tp GPUs together */
    double params;
    enum tc_source source; /* the least certain source of any op */
    /* The step time is the larger of the GPU's (the ops' sum, gpu_time_us)
     * and the host's: in eager execution the host dispatches every op of
     * every layer (host_time_us, ops x a PyTorch op's typical dispatch, and
     * each forward linear layer's module call on top);
     * with CUDA graphs one launch per step. */
    double gpu_time_us;
    double host_time_us;
    /* serving: the engine's work of each step outside the forward
     * (scheduling, input preparation, sampling, output processing, the
     * workers' RPC), serial with it: step = engine + max(gpu, host); 0
     * otherwise */
    double engine_time_us;
    /* Pipeline parallelism (the struct is the library's: it grows at the
     * end). The step is (microbatches - 1) x the slowest stage's
     * micro-batch plus one micro-batch through every stage (the fill and
     * drain of 1F1B), each stage boundary's sends included: */
    double stage_time_us; /* one micro-batch through the slowest stage, forward
                           * and backward, its sends included (the whole model
                           * when pp is 1) */
    double bubble_us;     /* what the fill and drain add over microbatches x
                           * stage_time_us (0 without a pipeline) */
    double p2p_us;        /* one micro-batch's sends across one stage boundary,
                           * activations forward and their gradients backward */
    int64_t nodes;        /* nodes the tp x pp x dp GPUs take (struct tc_cluster) */
};

/* Predicts a whole model (cfg is resolved on a copy; p may be NULL for the
 * analytical model). *out is owned by the caller (tc_model_prediction_free). */
TC_API int tc_predict_model(struct tc_predictor *p, const struct tc_gpu *gpu,
                            const struct tc_model_config *cfg, struct tc_model_prediction **out);
TC_API void tc_model_prediction_free(struct tc_model_prediction *mp);

/* The machine beyond one GPU: the nodes a model's tp x pp x dp GPUs fill in
 * order, Megatron-LM's rank order (tensor-parallel ranks innermost, then
 * data-parallel, then pipeline stages), and each GPU's network link to the
 * other nodes. Zeroed fields take the defaults that tc_cluster_default()
 * documents. */
struct tc_cluster {
    int64_t gpus_per_node; /* GPUs joined by the spec's interconnect (0: 8) */
    double nic_gbps;       /* each GPU's network adapter, per direction,
                            * 1e9 bytes/s (0: the default of the GPU's
                            * system, tc_cluster_default) */
    double reserved[4];    /* zeroed (see the top of this header) */
};

/* Fills out's zeroed fields with gpu's defaults: 8 GPUs per node (the
 * HGX/DGX boards, MI300X platforms and four-MI250X nodes alike) and the
 * network adapter the reference system of the spec's interconnect gives
 * each GPU (predictor/collective.c has the table and its sources); a GPU
 * whose spec names no such system (PCIe cards) keeps nic_gbps 0, and a
 * prediction that crosses nodes then fails with TC_ERR_UNSUPPORTED until
 * the caller gives it. */
TC_API void tc_cluster_default(const struct tc_gpu *gpu, struct tc_cluster *out);

/* tc_predict_model (decode_context 0) or tc_predict_decode (its context)
 * on the nodes of cluster (NULL: tc_cluster_default's): the collectives of
 * a group that spans nodes run at the network's rate, NCCL's multi-node
 * cost model; the pipeline's sends cross a node where its stages do. */
TC_API int tc_predict_model_on(struct tc_predictor *p, const struct tc_gpu *gpu,
                               const struct tc_model_config *cfg, const struct tc_cluster *cluster,
                               int64_t decode_context, struct tc_model_prediction **out);

/* Memory one GPU of a model replica needs (bytes), and whether it fits. */
struct tc_model_memory {
    double weights_bytes;     /* the layers and the (vocab-parallel) embedding and
                               * logits, each split over the tp GPUs */
    double grads_bytes;       /* training: one gradient per weight, same dtype */
    double optimizer_bytes;   /* training: Adam's fp32 master weights, m and v */
    double activations_bytes; /* training: what the backward pass keeps;
                               * inference: one layer's working set */
    double kv_cache_bytes;    /* inference: K and V of every layer and token */
    double total_bytes;
    double capacity_bytes; /* what the GPU offers (see tc_model_memory) */
    bool fits;
    double reserved[4]; /* zeroed (see the top of this header) */
};

/* The memory of cfg on gpu (decode_context > 0: a decode step over that
 * many cached tokens, else the config's own mode and seq). Sources and the
 * formulas are in model.c. */
TC_API int tc_model_memory(const struct tc_gpu *gpu, const struct tc_model_config *cfg,
                           int64_t decode_context, struct tc_model_memory *out);

/* Predicts one decode step of inference: micro_batch sequences each add one
 * token to a KV cache already holding `context` tokens (GEMMs with m = b,
 * attention of one query over context + 1 keys, the cache append). The
 * step time is the per-token latency; tokens_per_s = micro_batch / step.
 * cfg->training and cfg->seq are ignored. Caller owns *out. */
TC_API int tc_predict_decode(struct tc_predictor *p, const struct tc_gpu *gpu,
                             const struct tc_model_config *cfg, int64_t context,
                             struct tc_model_prediction **out);

struct tc_advice_candidate {
    struct tc_model_config cfg;
    double step_time_us;
    double tokens_per_s_per_gpu;
    double speedup;      /* tokens/s per GPU over the baseline's, scaled to the
                          * same parameter count (x params / baseline params) */
    double params;       /* parameter count */
    double params_delta; /* relative to baseline */
    int changes;         /* knobs changed: hidden, heads, ffn, vocab,
                          * micro-batch, tensor-parallel degree */
    char reason[512];    /* mechanism and the paper's guideline */
};

struct tc_advice {
    struct tc_model_config baseline;
    double baseline_step_us;
    double baseline_tokens_per_s_per_gpu;
    double baseline_params;
    size_t n_candidates;
    /* the fewest changed knobs first, then the highest speedup */
    struct tc_advice_candidate *candidates;
    size_t n_evaluated;
};

/* Searches nearby shapes within params_tolerance (e.g. 0.05) and keeps the
 * best max_candidates that are predicted faster (p may be NULL for the
 * analytical model): those that change one knob first, each group ranked
 * by speedup. Caller owns *out (tc_advice_free). */
TC_API int tc_advise(struct tc_predictor *p, const struct tc_gpu *gpu,
                     const struct tc_model_config *cfg, double params_tolerance,
                     size_t max_candidates, struct tc_advice **out);
/* tc_advise with every candidate on the nodes of cluster (NULL: the
 * defaults of tc_cluster_default), as tc_predict_model_on places it. */
TC_API int tc_advise_on(struct tc_predictor *p, const struct tc_gpu *gpu,
                        const struct tc_model_config *cfg, const struct tc_cluster *cluster,
                        double params_tolerance, size_t max_candidates, struct tc_advice **out);
TC_API void tc_advice_free(struct tc_advice *a);

/* ------------------------------------------------------------------------ */
/* Calibrating, evaluating (predictor/calib-store.c, eval.c,                 */
/* layer-compare.c): what `tilecast db calibrate`, `eval` and `predict layer  */
/* --measured` compute, for every caller alike                               */
/* ------------------------------------------------------------------------ */

/* tc_db_export written to an open stream out (borrowed, left open; name
 * stands for it in messages): for a caller that writes through a temporary
 * file of its own and renames it into place, as `tilecast db export` does. */
TC_API int tc_db_export_stream(struct tc_db *db, const char *format, const char *gpu_id, FILE *out,
                               const char *name, int64_t *rows);

/* One (GPU, dtype) that tc_db_calibrate fitted: the fitted scales of the
 * calibrated model (README; predictor/calibrate.h) and the fit's errors.
 * Read only through tc_calib_report_at: the library allocates it, so
 * later fields can be added at its end. */
struct tc_calib_summary {
    char gpu_id[TC_ID_MAX];
    enum tc_dtype dtype;
    int64_t rows; /* measured rows fitted */
    double c_compute, c_memory, c_overhead;
    double align_16b, align_4b, align_elem;  /* penalties against the 128-byte class */
    double host_event_us;                    /* host cost of CUDA events around a framework op */
    double host_wall_us;                     /* host cost of wall-clock timing with a synchronize */
    double fit_p50_pct, fit_p90_pct;         /* median and 90th percentile |error| of the fit, % */
    double heldout_mape_pct;                 /* leave-one-shape-out error with the neighbour
                                              * correction (rows >= 20 us), % */
    double interval_lo_pct, interval_hi_pct; /* the 80% interval of predictions
                                              * >= 200 us, relative, % */
    bool stored;                             /* written to the database's calibration table */
    double reserved[4];                      /* zeroed (see the top of this header) */
};

/* The fits of one tc_db_calibrate call. Opaque. */
struct tc_calib_report;

/* Fits the calibration of each GPU and dtype of which db holds ok GEMM rows
 * (gpu_id NULL: every GPU, else that id exactly; dtype < 0: every dtype, else
 * an enum tc_dtype) and, with store, stores each fit in db's calibration
 * table (db opened read-write), replacing the current model version's one;
 * what `tilecast db calibrate` does. specs (borrowed) supplies the GPUs'
 * analytical models. A pair none of whose shapes the model takes is left
 * out: the report may be empty. On failure *out is NULL and the fits stored
 * before it stay stored. Caller owns *out (tc_calib_report_free). */
TC_API int tc_db_calibrate(struct tc_db *db, const struct tc_specs *specs, const char *gpu_id,
                           int dtype, bool store, struct tc_calib_report **out);
TC_API size_t tc_calib_report_count(const struct tc_calib_report *r);
/* Fit i in the database's order of GPUs and dtypes; NULL past the end.
 * Borrowed, valid until tc_calib_report_free. */
TC_API const struct tc_calib_summary *tc_calib_report_at(const struct tc_calib_report *r, size_t i);
TC_API void tc_calib_report_free(struct tc_calib_report *r);

/* The host cost a timing method adds to kernel time (method tags and class
 * names as tc_predictor_set_timing takes them): what it typically adds, the time
 * below which such a measurement cannot fall, and the range of the cost
 * over the hosts the shipped data was measured on: those of a plain GEMM
 * call (torch.mm/bmm). linear_us is what nn.Linear's path (TC_GEMM_OP_LINEAR)
 * adds on top of each of the four. All 0 for kernel-time methods and unknown
 * tags. */
struct tc_timing_cost {
    double typical_us, floor_us, lo_us, hi_us;
    double linear_us;   /* taken from the reserved tail */
    double reserved[3]; /* zeroed */
};
TC_API int tc_timing_host_cost(const char *timing, struct tc_timing_cost *out);
/* Whether a timing tag names a method tilecast recognises: a class name
 * ("kernel", "event", "wall", "wall-max") or a tag of a known method's form
 * ("event-fastest5-mean", "wall-slowest", "profiler-median", "cupti-median",
 * "event-mean-l2flush", ...). Other tags are taken as kernel time by
 * tc_predictor_set_timing; a caller that takes the tag from its user can
 * refuse them instead. NULL and "" are kernel time, and known. */
TC_API bool tc_timing_known(const char *timing);

/* One prediction compared with its measurement. */
struct tc_eval_point {
    double ape_pct;    /* |predicted - measured| / measured, % */
    double signed_pct; /* (predicted - measured) / measured, %: positive is slower */
    double meas_tflops, pred_tflops;
};

/* What `tilecast eval` reports per group of points. NAN where it has no
 * meaning: every figure for no point, spearman_tflops below 3 points or
 * when either side is constant. */
struct tc_eval_stats {
    double mape_pct, median_ape_pct, p90_ape_pct;
    double bias_pct;        /* median signed error */
    double spearman_tflops; /* rank correlation of measured and predicted TFLOP/s */
    double reserved[4];     /* zeroed */
};

/* The statistics of n points, point i at (const char *)points + i * stride
 * (stride 0 means sizeof(struct tc_eval_point); a larger caller struct that
 * begins with one serves too). Quantiles interpolate linearly. */
TC_API int tc_eval_stats(const struct tc_eval_point *points, size_t n, size_t stride,
                         struct tc_eval_stats *out);
/* Spearman's rho of x and y (ties share their mean rank); NAN below 3
 * points, when either side is constant, or out of memory. */
TC_API double tc_spearman(const double *x, const double *y, size_t n);

/* One group of `predict layer --measured`: the predicted sum of a layer's
 * four GEMMs (QKV, output projection, MLP up, MLP down) against the measured
 * sum, over the layers of one (GPU, model). Read only through
 * tc_layer_report_at (fields may be added at its end). */
struct tc_layer_group {
    char gpu_id[TC_ID_MAX];  /* "all" in the pooled group */
    char model[TC_NAME_MAX]; /* "all" in the pooled group */
    size_t layers;           /* complete layers compared */
    double mape_pct, median_ape_pct, p90_ape_pct;
    enum tc_source source; /* the least certain source of its GEMMs' predictions */
};

/* The groups of one tc_layer_compare call. Opaque. */
struct tc_layer_report;

/* Reads the per-operation layer rows of the CSV file csv_path (columns gpu,
 * dtype, m, n, k, layout, time_us, model, tp, vidur_op: Vidur's profiling
 * tables), predicts each of a layer's four GEMMs with p (specs, borrowed,
 * finds the GPUs), and compares the sums per layer (gpu, model, tp, tokens;
 * a shape measured twice counts once, at its mean), leaving out layers
 * measured below min_time_us. The report holds one group per (gpu, model)
 * in the file's order, then the pooled one. TC_ERR_PARSE names
 * file:line of a bad row; TC_ERR_NOT_FOUND when no complete layer is left.
 * Caller owns *out (tc_layer_report_free). */
TC_API int tc_layer_compare(struct tc_predictor *p, const struct tc_specs *specs,
                            const char *csv_path, double min_time_us, struct tc_layer_report **out);
TC_API size_t tc_layer_report_count(const struct tc_layer_report *r);
/* Borrowed, valid until tc_layer_report_free; NULL past the end. */
TC_API const struct tc_layer_group *tc_layer_report_at(const struct tc_layer_report *r, size_t i);
TC_API void tc_layer_report_free(struct tc_layer_report *r);

#ifdef __cplusplus
}
#endif

#endif /* TILECAST_TILECAST_H */
