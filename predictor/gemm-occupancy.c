/* Occupancy of a catalogue kernel on a GPU and the alignment class of a
 * GEMM's leading dimensions: what the GEMM model (gemm.c) asks of a kernel
 * and of a query before it times anything. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>

#include "gemm-internal.h"
#include "tc-internal.h"

static int64_t round_up(int64_t v, int64_t unit)
{
    return unit > 0 ? (v + unit - 1) / unit * unit : v;
}

int64_t tc_kernel_smem_bytes(const struct tc_kernel *k, enum tc_dtype dtype)
{
    if (k->smem_bytes > 0)
        return k->smem_bytes;
    return (int64_t)k->stages * (k->tile_m + k->tile_n) * k->tile_k * tc_dtype_bytes(dtype);
}

int tc_kernel_blocks_per_sm(const struct tc_gpu *gpu, const struct tc_kernel *k,
                            enum tc_dtype dtype, const char **limiter)
{
    int warp = gpu->warp_size > 0 ? gpu->warp_size : 32;
    int warps = (k->threads + warp - 1) / warp;
    int by_threads, by_regs, by_smem, by_blocks, best;
    const char *why;
    int64_t smem = tc_kernel_smem_bytes(k, dtype);

    if (k->threads > gpu->max_threads_per_block || k->regs_per_thread > gpu->max_regs_per_thread ||
        smem > gpu->smem_per_block_max_bytes)
        goto none;
    by_threads = gpu->max_threads_per_sm / k->threads;
    if (gpu->max_warps_per_sm > 0 && gpu->max_warps_per_sm / warps < by_threads)
        by_threads = gpu->max_warps_per_sm / warps;
    if (gpu->vendor == TC_VENDOR_AMD) {
        /* VGPRs are allocated per lane in granules; each SIMD holds
         * regs / (lanes x SIMDs) per lane, and a block's waves spread over
         * the SIMDs. */
        const int simds = 4;
        int64_t per_lane = gpu->regs_per_sm / ((int64_t)warp * simds);
        int64_t alloc =
            round_up(k->regs_per_thread, gpu->reg_alloc_unit > 0 ? gpu->reg_alloc_unit : 8);
        int64_t waves_per_simd = per_lane / alloc;
        int64_t waves = waves_per_simd * simds;

        by_regs = (int)(waves / warps);
    } else {
        int64_t per_warp = round_up((int64_t)k->regs_per_thread * warp,
                                    gpu->reg_alloc_unit > 0 ? gpu->reg_alloc_unit : 256);
        int64_t per_block = per_warp * warps;

        if (per_block > gpu->max_regs_per_block)
            goto none;
        by_regs = (int)(gpu->regs_per_sm / per_block);
    }
    smem = round_up(smem, gpu->smem_alloc_unit_bytes) + gpu->reserved_smem_per_block_bytes;
    by_smem = smem > 0 ? (int)(gpu->smem_per_sm_bytes / smem) : by_threads;
    by_blocks = gpu->max_blocks_per_sm;

    best = by_threads;
    why = "threads";
    if (by_regs < best) {
        best = by_regs;
        why = "registers";
    }
    if (by_smem < best) {
        best = by_smem;
        why = "smem";
    }
    if (by_blocks < best) {
        best = by_blocks;
        why = "blocks";
    }
    if (limiter)
        *limiter = why;
    return best > 0 ? best : 0;

none:
    if (limiter)
        *limiter = "limits";
    return 0;
}

/* Unsigned so that a huge leading dimension wraps instead of overflowing:
 * 2^64 is a multiple of 128, so the residues below stay exact. */
static enum tc_align align_of_bytes(uint64_t bytes)
{
    if (bytes % 128 == 0)
        return TC_ALIGN_128B;
    if (bytes % 16 == 0)
        return TC_ALIGN_16B;
    if (bytes % 4 == 0)
        return TC_ALIGN_4B;
    return TC_ALIGN_ELEM;
}

void tc_gemm_packed_lds(const struct tc_gemm_query *q, int64_t *lda, int64_t *ldb, int64_t *ldc)
{
    /* Row-major view: N keeps the logical shape (A m x k, B k x n), T stores
     * the transpose; the leading dimension is the row length. */
    bool a_t = q->layout == TC_LAYOUT_TN || q->layout == TC_LAYOUT_TT;
    bool b_t = q->layout == TC_LAYOUT_NT || q->layout == TC_LAYOUT_TT;

    *lda = a_t ? q->m : q->k;
    *ldb = b_t ? q->k : q->n;
    *ldc = q->n;
}

enum tc_align tc_gemm_align_class(const struct tc_gemm_query *q)
{
    int64_t lda, ldb, ldc, e = tc_dtype_bytes(q->dtype);
    enum tc_align worst;

    tc_gemm_packed_lds(q, &lda, &ldb, &ldc);
    if (q->lda > 0)
        lda = q->lda;
    if (q->ldb > 0)
        ldb = q->ldb;
    if (q->ldc > 0)
        ldc = q->ldc;
    if (e <= 0)
        e = 1;
    worst = align_of_bytes((uint64_t)lda * (uint64_t)e);
    if (align_of_bytes((uint64_t)ldb * (uint64_t)e) > worst)
        worst = align_of_bytes((uint64_t)ldb * (uint64_t)e);
    if (align_of_bytes((uint64_t)ldc * (uint64_t)e) > worst)
        worst = align_of_bytes((uint64_t)ldc * (uint64_t)e);
    return worst;
}
