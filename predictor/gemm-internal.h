/* The kernel catalogue (gpu_specs/kernels/ *.yaml) and GEMM model internals.
 * Not installed. */
#ifndef TC_GEMM_INTERNAL_H
#define TC_GEMM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilecast/tilecast.h"

#define TC_KERNEL_NAME_MAX 96

/* One kernel configuration the vendor library runs. */
struct tc_kernel {
    char name[TC_KERNEL_NAME_MAX];
    unsigned dtype_mask; /* bit (1u << enum tc_dtype) per input type */
    unsigned arch_mask;  /* bit (1u << enum tc_arch) per family */
    int tile_m, tile_n, tile_k;
    int warp_m, warp_n; /* warp / warpgroup / wave tile */
    int stages;
    int threads;
    int regs_per_thread;
    int64_t smem_bytes; /* 0: stages x (BM + BN) x BK x element size */
    int instr_m, instr_n, instr_k;
    bool split_k, stream_k, tma;
    bool batched; /* used for strided-batched calls */
    int cluster_m, cluster_n;
    int align_bytes; /* 0: no requirement */
    double mma_rate; /* fraction of the tensor peak it can issue */
    char source[192];
};

struct tc_catalogue;

/* Loads every *.yaml of dir (sorted by name). Errors name file:line:column.
 * Caller owns *out (tc_catalogue_free). */
int tc_catalogue_load_dir(const char *dir, struct tc_catalogue **out);
/* Adds one file to cat; on error cat is unchanged in its per-arch lists. */
int tc_catalogue_load_file(struct tc_catalogue *cat, const char *file);
struct tc_catalogue *tc_catalogue_new(void);
void tc_catalogue_free(struct tc_catalogue *cat);

/* The shipped catalogue, loaded once per process (thread-safe) from
 * <tc_data_dir()>/gpu_specs/kernels. Borrowed; lives until exit. On failure
 * every call returns the same error and message. */
int tc_catalogue_default(const struct tc_catalogue **out);

size_t tc_catalogue_count(const struct tc_catalogue *cat);
const struct tc_kernel *tc_catalogue_at(const struct tc_catalogue *cat, size_t i);
/* Kernels of arch that run dtype; *out is borrowed. Returns the count. */
size_t tc_catalogue_kernels(const struct tc_catalogue *cat, enum tc_arch arch, enum tc_dtype dtype,
                            const struct tc_kernel *const **out);

/* Shared memory one block of k uses for dtype, in bytes. */
int64_t tc_kernel_smem_bytes(const struct tc_kernel *k, enum tc_dtype dtype);

/* Occupancy of one kernel on gpu: resident blocks per SM/CU from threads,
 * registers (allocation granularity), shared memory (+ reserved bytes per
 * block) and the block limit. 0 if it does not fit at all. limiter receives
 * "threads", "registers", "smem" or "blocks" when not NULL. */
int tc_kernel_blocks_per_sm(const struct tc_gpu *gpu, const struct tc_kernel *k,
                            enum tc_dtype dtype, const char **limiter);

/* Whether a GEMM of dtype runs on gpu's matrix units (tensor cores, MFMA)
 * at the tensor clock, rather than on the FFMA/HFMA2 pipes at the vector
 * clock: every dtype but fp32 on NVIDIA from Volta on (fp32 stays SIMT:
 * TF32 is its own dtype), every dtype on AMD (Tensile's fp32 kernels are
 * MFMA), none on Pascal (no tensor cores: P100's fp16 is HFMA2). */
bool tc_gemm_on_matrix_units(const struct tc_gpu *gpu, enum tc_dtype dtype);

/* Whether gpu's fp8 GEMMs take the row-major NT layout only. cuBLASLt's
 * fp8 kernels require "A must be transposed and B non-transposed (the TN
 * format)" (cublasLtMatmul, FP8 requirements) on compute capability 8.9
 * and 9.0; row-major (tilecast's view) that is NT, A stored m x k and B
 * stored n x k, the layout of nn.Linear and of torch._scaled_mm's
 * column-major second operand. The sm100 family lifts it and sm120 does
 * not (TransformerEngine's nvte_is_non_tn_fp8_gemm_supported: 10.0 to
 * 11.x, and 13.0 on; on the others it keeps a transposed fp8 copy of an
 * operand for the backward's GEMMs). */
bool tc_gemm_fp8_tn_only(const struct tc_gpu *gpu);

/* Alignment class of the leading dimensions of q (lda, ldb, ldc, or the
 * packed ones implied by the layout). */
enum tc_align tc_gemm_align_class(const struct tc_gemm_query *q);
/* The leading dimensions of q's operands when they are packed, in elements,
 * in the row-major view (N: A is m x k and B k x n; T: stored transposed). */
void tc_gemm_packed_lds(const struct tc_gemm_query *q, int64_t *lda, int64_t *ldb, int64_t *ldc);

/* The analytical model with an explicit catalogue (tests). */
int tc_predict_gemm_with(const struct tc_catalogue *cat, const struct tc_gpu *gpu,
                         const struct tc_gemm_query *q, struct tc_gemm_prediction *out);

/* The same search without its pruning, for the test of the bound: every
 * split of every candidate is evaluated, where tc_predict_gemm_with() skips
 * those whose SM time plus launch cannot beat the pick, and
 * *bound_violations (if not NULL) receives how many of them took less
 * time than that bound. A bound that holds gives 0 and an output identical
 * to tc_predict_gemm_with()'s, byte for byte. */
int tc_predict_gemm_exhaustive(const struct tc_catalogue *cat, const struct tc_gpu *gpu,
                               const struct tc_gemm_query *q, struct tc_gemm_prediction *out,
                               long *bound_violations);

#endif
