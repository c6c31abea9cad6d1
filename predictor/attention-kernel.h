/* Fused attention kernels: which kernel a query runs (its tiles, scheduling
 * and efficiencies, from each kernel's source and published benchmarks) and
 * what one score element of a tile costs on an SM. attention-kernels.c
 * chooses; attention-fused.c times the chosen kernel's tiles. */
#ifndef TC_ATTENTION_KERNEL_H
#define TC_ATTENTION_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "model-internal.h"

/* Efficiencies of one kernel on one architecture and pass:
 *   eta  fraction of the tensor-core peak its MMAs sustain;
 *   x    the non-matmul time (the exp and SOFTMAX_ALU_OPS per element) not
 *        hidden behind the MMAs, as a fraction of it: a tile costs
 *        max(mma, softmax) + x * min(mma, softmax). Above 1 in the
 *        backward, where dS = P * (dP - D) and the dQ accumulation add
 *        work the count above leaves out.
 * Each pair is solved with this model at the published benchmark's own
 * shapes (batch x seq = 16k tokens, hidden 2048, no mask; the figures at
 * seq 16k), not from tilecast's development rows. */
struct fused_eff {
    double eta, x;
};

enum { ORDER_GRID, ORDER_LPT, ORDER_SPT };
/* INLINE: the compute warps spin, add, release; WARP: a store warp does */
enum { RELAY_NONE, RELAY_INLINE, RELAY_WARP };

/* The kernel a query runs: its tiles and how it schedules them. */
struct fused_kernel {
    enum tc_attn_impl impl; /* the kernel modelled (FLASH: the generic FA2-class model) */
    int br, bc;             /* forward: query rows x keys; backward: query rows x keys */
    int threads;            /* per CTA */
    struct fused_eff eff;
    double exp_emulated;  /* share of the exps a polynomial computes on the FP32 lanes instead
                             of the SFUs (FlashAttention-4's forward on sm100, below) */
    double slow;          /* time multiplier (the open sm80 prefill at d 128) */
    bool mma_16bit;       /* fp8 inputs whose MMAs run at the 16-bit rate (cuDNN's fp8 forward
                             on sm90 off head dims 128 and 256, attention-kernels.c) */
    int order;            /* CTA issue order: ORDER_GRID, ORDER_LPT (longest first) or
                             ORDER_SPT (shortest first) */
    int relay;            /* deterministic backward: dQ added in key-block order through a
                             semaphore per query tile, RELAY_INLINE or RELAY_WARP (below) */
    bool prefetch;        /* a producer warp loads the next CTA's inputs during this one's loop */
    int stage_rows;       /* a CTA's query tile is stages of this many rows, an empty one
                             skipped (FA4 on Blackwell); 0: one tile */
    bool pack_gqa;        /* FA3's PackGQA: a KV head's query heads share tiles */
    bool pack_gqa_always; /* forward: they share tiles whenever there are several (FA4's
                             sm90 default), not by FA3's heuristic */
    bool fa2_split;       /* FA2's split-KV kernel and heuristic (else FA3's) */
    bool pack_decode;     /* forward: a single query's heads of one KV head share a tile's rows
                             (cuDNN's decode path on sm90/sm100, below) */
    bool split_one_query; /* forward: the library splits the keys by itself only for a single
                             query (cuDNN, below); --kv-splits N still forces N */
    bool plain_grid;      /* forward: one CTA per (query tile, head, batch), never split
                             and no query heads packed, whatever the shape */
    bool frost_split;     /* forward: the cuDNN frontend's open sm100 engines' split-KV cost
                             model and combine pass (attention-fused.c) */
    bool window_skip;     /* a sliding window's left edge ends the key loop (else the loop runs
                             to key 0, as under the causal mask alone) */
    double iter_l2_bytes; /* backward: L2 traffic of one (query tile, key tile) step that
                             the step waits for (0: hidden behind the MMAs) */
    double dq_red_gbps;   /* backward: GB/s an SM reduces a step's dQ tile into the fp32
                             accumulator at, which bounds the step from below (0: hidden) */
    bool dkv_per_qhead;   /* backward GQA: dK, dV per query head, then reduced */
    bool unskipped_bwd;   /* backward: every (query tile, key tile) step is computed under a
                             causal or window mask too, none skipped, and the deterministic
                             order costs nothing (cuDNN's fp8 backward on sm90,
                             attention-kernels.c) */
    bool mask_every_tile; /* backward: the mask and the sequence bounds are compiled into the
                             step, so under a mask or with a partial tile every tile pays for
                             them (the cuDNN frontend's open sm80 backward, attention-kernels.c) */
    double smem_bytes;    /* shared-memory bytes a score element's MMAs move (operand reads
                             and tile copies; sm80 mma.sync kernels, attention-kernels.c);
                             0: not modelled */
    int64_t dqk, dvo;     /* head dims as the kernel instantiates them (padding computed) */
};

/* Per-element time of a tile on one SM, in us (attention-kernels.c). */
struct elem_cost {
    double full_us, masked_us;
};

static inline int64_t round_up(int64_t v, int64_t m)
{
    return (v + m - 1) / m * m;
}

/* Shared-memory bytes per score element of an sm80 mma.sync forward whose
 * `warps` warps are stacked along its br query rows (FlashAttention-2's
 * TiledMma, Layout<Shape<Int<kNWarps>, _1, _1>>; the cuDNN frontend's sm80
 * prefill, "each warp owns 16"; the 4x1x1 of cuDNN's engine names). Each
 * warp reads the whole K tile for its rows of S = Q K^T and the whole V
 * tile for its rows of O += P V (mma.sync's B operand through ldmatrix):
 * (d_qk + d_v) e / m bytes for a warp of m rows. Q is read again at every
 * key tile unless the kernel holds it in registers (P is built in
 * registers), and cp.async writes each K/V tile once a CTA. */
static inline double sm80_fwd_smem_bytes(int64_t br, int64_t bc, int64_t dqk, int64_t dvo,
                                         int warps, bool q_in_regs, double e)
{
    double m = (double)br / warps;

    return e * ((double)(dqk + dvo) / m + (q_in_regs ? 0.0 : (double)dqk / (double)bc) +
                (double)(dqk + dvo) / (double)br);
}

/* The kernel q runs on gpu into *k, or TC_ERR_UNSUPPORTED and why. */
int tc_fused_kernel_resolve(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                            struct fused_kernel *k);
/* What one score element of a full and of a masked tile costs on an SM. */
struct elem_cost tc_fused_elem_cost(const struct tc_gpu *gpu, enum tc_dtype dtype,
                                    const struct fused_kernel *k, bool bwd);
/* The clock of the SM's SFUs and FP32 lanes, in MHz. */
double tc_fused_vector_clock_mhz(const struct tc_gpu *gpu);

#endif
