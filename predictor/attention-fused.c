/* Fused attention: FlashAttention-2, -3, -4 and cuDNN's SDPA engines as
 * tile models of the GPU spec.
 *
 * A fused kernel walks its work in tiles: a CTA owns Br query rows (the
 * forward) or Bc keys (the backward) of one (batch, head) and loops over
 * the other side's tiles, skipping those a mask hides entirely and
 * computing those it hides partly in full, with a masking pass. The model
 * builds that list of CTAs with the exact number of full and masked tiles
 * each computes, costs a tile from the tensor-core rate and the non-matmul
 * (softmax) rate of an SM, and schedules the CTAs on the SMs in the order
 * the kernel's scheduler issues them. What differs between kernels is the
 * tile, the scheduling order, whether the forward splits the keys, and two
 * efficiencies taken from each kernel's published benchmarks (below). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model-internal.h"

/* ------------------------------------------------------------------------ */
/* Costs of one score element                                                */
/* ------------------------------------------------------------------------ */

/* exp2 throughput of an SM: 16 results per clock on compute capability
 * 5.x-9.0 (CUDA C++ Programming Guide, arithmetic instruction throughput
 * table); Blackwell kept the SFU count (FlashAttention-4 blog: "the SFU
 * count ... remains unchanged"). CDNA's transcendentals run at a quarter
 * of its 64 lanes per CU, the same 16. */
#define MUFU_PER_CLK 16.0
/* FP32 instructions per score element besides the exp: the running max,
 * the scaled subtraction (one FFMA), the row sum and the conversion of P
 * to 16 bits (the online softmax of FlashAttention-2, section 3.1). */
#define SOFTMAX_ALU_OPS 4.0
/* A tile the mask cuts through computes every element and then masks it:
 * the column index, two compares and a select per element (FA2's
 * apply_mask_causal / apply_mask_local). */
#define MASK_ALU_OPS 4.0
/* Fraction of the DRAM peak a streaming kernel sustains (as the previous
 * tile model and the GEMM predictor's memory term assume). */
#define FUSED_DRAM_EFF 0.85
/* L2 bandwidth of an SM, bytes per clock: the A100 whitepaper's 5120
 * B/clk of L2 read bandwidth over its 108 SMs; Hopper is taken at the same
 * per-SM rate (as the GEMM model takes both). */
#define SM_L2_BYTES_PER_CLK (5120.0 / 108.0)
/* An L2 hit's round trip in clocks: 193 on V100 (Jia et al. 2018,
 * "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking"),
 * 236 on Turing (sjfeng1999/gpu-arch-microbenchmark), 222-339 on L40 by SM
 * (arXiv 2606.22588). Handing a dQ semaphore over costs two: the releasing
 * CTA's fence waits for its adds, the next one's acquiring poll. */
#define L2_HIT_CLK 250.0
/* Below this many CTAs the schedule is simulated exactly; above, the
 * tail is estimated (many waves: a few percent at most). */
#define SIM_MAX_UNITS (1 << 18)

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

/* FlashAttention-2 on Ampere (Dao 2023, "FlashAttention-2", A100 SXM4):
 * the forward reaches up to 73% of the peak and the backward up to 63% at
 * head dim 128; optimized GEMMs reach 80-90% (its introduction), so
 * eta = 0.85 for the forward's mma.sync loop and x = 0.36 makes 73%. The
 * backward keeps FA3's fitted x = 1.15 (below) and eta = 0.76 makes 63%. */
static const struct fused_eff FA2_AMPERE_FWD = {0.85, 0.36};
static const struct fused_eff FA2_AMPERE_BWD = {0.76, 1.15};
/* FlashAttention-2 on Hopper (no wgmma, no TMA), from the FA2 bars of the
 * FlashAttention-3 paper (Shah et al. 2024, figures 5-6, H100 SXM5):
 * forward 324 / 370 / 326 TFLOP/s at head dim 64 / 128 / 256 (model 324 /
 * 368 / 350 with FA2_WIDE_HEAD), backward 291 / 322 at 64 / 128 (292 /
 * 321). */
static const struct fused_eff FA2_HOPPER_FWD = {0.45, 0.52};
static const struct fused_eff FA2_HOPPER_BWD = {0.38, 1.10};
/* FlashAttention-3 on Hopper (same figures): forward 497 / 648 / 756
 * (model 495 / 652 / 747), backward 474 / 561 (473 / 560). Its fp8
 * forward transposes V inside the kernel (section 3.3), which the model
 * leaves out: 1314 TFLOP/s at head dim 256 and 16k against the paper's
 * 1171. */
static const struct fused_eff FA3_HOPPER_FWD = {0.91, 0.50};
static const struct fused_eff FA3_HOPPER_BWD = {0.74, 1.15};
/* cuDNN on Hopper (the cuDNN bars of the same figures): forward 413 / 595
 * / 581 at head dim 64 / 128 / 256 (least squares: 426 / 532 / 616; the
 * d = 64 point, where exp and MMA take about as long, is what fixes x).
 * The same figure's fp8 cuDNN bars at head dim 256, 1001 and 1139 TFLOP/s
 * at 2k and 16k, which no constant was solved for, come out at 1007 and
 * 1073. Backward 433 / 516 (434 / 518). */
static const struct fused_eff CUDNN_HOPPER_FWD = {0.76, 0.66};
static const struct fused_eff CUDNN_HOPPER_BWD = {0.69, 1.30};
/* FlashAttention-4 on Blackwell (FlashAttention-4 blog and paper, B200
 * BF16): up to 1605 TFLOP/s, 71% of the peak, with half of the exps
 * emulated on the FMA units (FA4_EXP_MULT); eta = 0.85 as for GEMMs, and
 * x = 0.23 makes 1605 at head dim 128. No backward figure is published
 * with it: FA3's backward/forward ratio at head dim 128 (561 / 648) is
 * assumed, which x = 0.73 gives. */
static const struct fused_eff FA4_BLACKWELL_FWD = {0.85, 0.23};
static const struct fused_eff FA4_BLACKWELL_BWD = {0.85, 0.73};
#define FA4_EXP_MULT 2.0
/* FlashAttention-2's kernels above head dim 128 (eight warps, a 256-wide
 * O accumulator in registers) run below what the softmax's amortisation
 * gives: the FA3 paper's FA2 bars are 326 TFLOP/s at head dim 256 against
 * 370 at 128, where this model without the factor gives the same for
 * both. eta is scaled by 0.875, the ratio of the two. */
#define FA2_WIDE_HEAD 0.875
/* FlashAttention-4 is "up to 1.3x faster than cuDNN 9.13" on B200 (its
 * paper's abstract): cuDNN on Blackwell as FA4's tiles at 1/1.3 the rate. */
#define CUDNN_BLACKWELL_SLOW 1.3
/* GPUs no FlashAttention release targets (Volta, Turing) and AMD's CDNA
 * ports (CK and Triton): the previous tile model's efficiency relative to
 * Ampere (0.60 and 0.55 against 0.80) applied to eta. */
static const struct fused_eff FA2_OLD_NVIDIA_FWD = {0.64, 0.36};
static const struct fused_eff FA2_OLD_NVIDIA_BWD = {0.57, 1.15};
static const struct fused_eff FA2_CDNA_FWD = {0.58, 0.36};
static const struct fused_eff FA2_CDNA_BWD = {0.52, 1.15};

enum { ORDER_GRID, ORDER_LPT, ORDER_SPT };
/* INLINE: the compute warps spin, add, release; WARP: a store warp does */
enum { RELAY_NONE, RELAY_INLINE, RELAY_WARP };

/* The kernel a query runs: its tiles and how it schedules them. */
struct fused_kernel {
    enum tc_attn_impl impl; /* the kernel modelled (FLASH: the generic FA2-class model) */
    int br, bc;             /* forward: query rows x keys; backward: query rows x keys */
    int threads;            /* per CTA */
    struct fused_eff eff;
    double exp_mult;      /* exp throughput relative to the SFUs' */
    double slow;          /* time multiplier (cuDNN on Blackwell) */
    int order;            /* CTA issue order: ORDER_GRID, ORDER_LPT (longest first) or
                             ORDER_SPT (shortest first) */
    int relay;            /* deterministic backward: dQ added in key-block order through a
                             semaphore per query tile, RELAY_INLINE or RELAY_WARP (below) */
    bool prefetch;        /* a producer warp loads the next CTA's inputs during this one's loop */
    int stage_rows;       /* a CTA's query tile is stages of this many rows, an empty one
                             skipped (FA4 on Blackwell); 0: one tile */
    bool pack_gqa;        /* FA3's PackGQA: a KV head's query heads share tiles */
    bool fa2_split;       /* FA2's split-KV kernel and heuristic (else FA3's) */
    bool pack_decode;     /* forward: a single query's heads of one KV head share a tile's rows
                             (cuDNN's decode path on sm90/sm100, below) */
    bool split_one_query; /* forward: the library splits the keys by itself only for a single
                             query (cuDNN, below); --kv-splits N still forces N */
    bool plain_grid;      /* forward: one CTA per (query tile, head, batch), never split
                             and no query heads packed, whatever the shape */
    bool window_skip;     /* a sliding window's left edge ends the key loop (else the loop runs
                             to key 0, as under the causal mask alone) */
    double iter_l2_bytes; /* backward: L2 traffic of one (query tile, key tile) step that
                             the step waits for (0: hidden behind the MMAs) */
    bool dkv_per_qhead;   /* backward GQA: dK, dV per query head, then reduced */
    int64_t dqk, dvo;     /* head dims as the kernel instantiates them (padding computed) */
};

static int64_t round_up(int64_t v, int64_t m)
{
    return (v + m - 1) / m * m;
}

/* FlashAttention-2's forward tiles (csrc/flash_attn/src/
 * flash_fwd_launch_template.h, run_mha_fwd_hdim*, no dropout): 128 query
 * rows; 128 keys up to head dim 64, else 64. sm86/sm89 (less shared
 * memory) take 128 x 32 without and 64 x 64 with a causal mask from head
 * dim 96 and 64 x 64 at 256. Four warps, eight from head dim 160 on sm80. */
static void fa2_fwd_tile(int64_t d, bool masked, bool sm8x, int *br, int *bc, int *warps)
{
    *br = 128;
    *bc = d <= 64 ? 128 : 64;
    *warps = d > 128 && !sm8x ? 8 : 4;
    if (sm8x && d > 64) {
        *br = masked || d > 192 ? 64 : 128;
        *bc = masked || d > 192 ? 64 : 32;
    }
}

/* FlashAttention-2's backward tiles (flash_bwd_launch_template.h, sm80
 * with 144 KB+ of shared memory): 128 x 128 up to head dim 64, 64 x 128
 * up to 128, 64 x 64 above; sm86/sm89 64 x 64 from head dim 96. Eight
 * warps. Br counts query rows, Bc keys (the CTA's outer block). */
static void fa2_bwd_tile(int64_t d, bool sm8x, int *br, int *bc, int *warps)
{
    *warps = 8;
    *br = d <= 64 ? 128 : 64;
    *bc = d <= 128 && !(sm8x && d > 64) ? 128 : 64;
}

/* FlashAttention-3's tiles (hopper/tile_size.h, tile_size_fwd_sm90 and
 * tile_size_bwd_sm90): forward 192 x 128/192 at head dim 64 (causal or
 * local: 128 keys), 128 x 128/176 at 128, 128 x 96/112 at 192 and 128 x 80
 * at 256, with one MMA warpgroup per 64 rows and a producer warpgroup;
 * backward 128 x 128 at 64, 64/80 x 128 at 128, 64 x 96 at 192 and
 * 64 x 80 at 256. */
static void fa3_tile(int64_t d, bool masked, bool bwd, int *br, int *bc, int *threads)
{
    if (!bwd) {
        if (d <= 64) {
            *br = 192;
            *bc = masked ? 128 : 192;
        } else if (d <= 128) {
            *br = 128;
            *bc = masked ? 128 : 176;
        } else if (d <= 192) {
            *br = 128;
            *bc = masked ? 96 : 112;
        } else {
            *br = 128;
            *bc = 80;
        }
        *threads = (*br / 64 + 1) * 128;
        return;
    }
    *threads = 3 * 128;
    if (d <= 64) {
        *br = 128;
        *bc = 128;
    } else if (d <= 128) {
        *br = masked ? 64 : 80;
        *bc = 128;
    } else if (d <= 192) {
        *br = 64;
        *bc = 96;
    } else {
        *br = 64;
        *bc = 80;
    }
}

/* The head dims a kernel instantiates: FA2 every multiple of 32 up to 256
 * and one head dim for Q, K and V (V padded to it); FA3 and FA4 64, 96,
 * 128, 192 and 256 for Q/K and V separately. */
static void kernel_head_dims(struct fused_kernel *k, int64_t dqk, int64_t dvo, bool fa2)
{
    if (fa2) {
        int64_t d = round_up(dqk > dvo ? dqk : dvo, 32);

        k->dqk = k->dvo = d;
        return;
    }
    static const int64_t dims[] = {64, 96, 128, 192, 256};
    k->dqk = k->dvo = 256;
    for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
        if (dqk <= dims[i] && k->dqk == 256)
            k->dqk = dims[i];
    }
    for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
        if (dvo <= dims[i]) {
            k->dvo = dims[i];
            break;
        }
    }
}

static bool is_sm8x(const struct tc_gpu *gpu)
{
    return gpu->arch == TC_ARCH_ADA ||
           (gpu->arch == TC_ARCH_AMPERE && strcmp(gpu->compute_capability, "sm_80") != 0);
}

static bool nvidia_ampere_or_later(const struct tc_gpu *gpu)
{
    return gpu->arch == TC_ARCH_AMPERE || gpu->arch == TC_ARCH_ADA || gpu->arch == TC_ARCH_HOPPER ||
           gpu->arch == TC_ARCH_BLACKWELL;
}

static bool half_dtype(enum tc_dtype t)
{
    return t == TC_DTYPE_FP16 || t == TC_DTYPE_BF16;
}

/* The FA2-class kernel (FlashAttention-2, FA4's sm80 path, cuDNN on
 * Ampere, and the generic model elsewhere). */
static void fa2_kernel(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                       enum tc_attn_impl impl, struct fused_kernel *k)
{
    bool masked = q->causal;
    int warps;

    k->impl = impl;
    kernel_head_dims(k, q->head_dim, q->head_dim_vo ? q->head_dim_vo : q->head_dim, true);
    if (q->backward)
        fa2_bwd_tile(k->dqk, is_sm8x(gpu), &k->br, &k->bc, &warps);
    else
        fa2_fwd_tile(k->dqk, masked, is_sm8x(gpu), &k->br, &k->bc, &warps);
    k->threads = warps * 32;
    switch (gpu->arch) {
    case TC_ARCH_AMPERE:
    case TC_ARCH_ADA:
        k->eff = q->backward ? FA2_AMPERE_BWD : FA2_AMPERE_FWD;
        break;
    case TC_ARCH_HOPPER:
    case TC_ARCH_BLACKWELL: /* mma.sync: no public Blackwell figure, Hopper's assumed */
        k->eff = q->backward ? FA2_HOPPER_BWD : FA2_HOPPER_FWD;
        break;
    case TC_ARCH_VOLTA:
    case TC_ARCH_TURING:
        k->eff = q->backward ? FA2_OLD_NVIDIA_BWD : FA2_OLD_NVIDIA_FWD;
        break;
    default:
        k->eff = q->backward ? FA2_CDNA_BWD : FA2_CDNA_FWD;
        break;
    }
    k->exp_mult = 1;
    k->slow = 1;
    /* FA2 launches its forward CTAs with blockIdx.x = the query block, in
     * order, and its backward with the key block, in order */
    k->order = ORDER_GRID;
    k->prefetch = false;
    k->stage_rows = 0;
    k->pack_gqa = false;
    k->fa2_split = true;
    k->split_one_query = impl == TC_ATTN_CUDNN;
    k->window_skip = true;
}

/* cuDNN's decode (one query a sequence) on sm90 and sm100 packs the query
 * heads of a KV head into the rows of one tile, as FA2 swaps them and
 * FA3's PackGQA packs them, and splits the cache over the SMs: its open
 * engines' sm100 decode plans read PACK_GQA=1 with SPLIT_KV=8 at batch 1
 * (the cuDNN frontend's attention_inference results; config_sm100.py,
 * pack_gqa_group_size), and the closed engines' published decode timings
 * reach 85-94 % of the HBM peak on H200 and B200 with 8 query heads a KV
 * head, which one 128-row tile a query head (an eighth of a row useful)
 * could not: its MMAs would take 5-10x the cache read. With 8 or 16
 * queries the same timings grow with the CTAs of unpacked, unsplit tiles
 * (batch 1 and 8 at 16 heads take the same time on 132 SMs), so only
 * seq_q = 1 packs, and only seq_q = 1 splits by itself (split_one_query:
 * on H200 batch 8 of 64 heads takes 4.0x batch 1, the four waves of its
 * 512 unsplit CTAs; on A100 4.2x, against 4.7 waves; the eval's training
 * rows are taken unsplit for the same reason, cmd-eval-attention.c). */

/* The wgmma class on Hopper: FlashAttention-3, FA4's sm90 path and cuDNN
 * (whose tiles are not published: FA3's are used). FA3's causal and local
 * forward use its SingleTileLPTScheduler, longest CTAs first; FA4 and
 * cuDNN's persistent schedulers are taken to do the same. */
static void hopper_kernel(const struct tc_attention_query *q, enum tc_attn_impl impl,
                          struct fused_kernel *k)
{
    k->impl = impl;
    kernel_head_dims(k, q->head_dim, q->head_dim_vo ? q->head_dim_vo : q->head_dim, false);
    fa3_tile(k->dqk, q->causal, q->backward, &k->br, &k->bc, &k->threads);
    if (impl == TC_ATTN_CUDNN)
        k->eff = q->backward ? CUDNN_HOPPER_BWD : CUDNN_HOPPER_FWD;
    else
        k->eff = q->backward ? FA3_HOPPER_BWD : FA3_HOPPER_FWD;
    k->exp_mult = 1;
    k->slow = 1;
    k->order = ORDER_LPT;
    k->prefetch = true;
    k->stage_rows = 0;
    k->pack_gqa = impl != TC_ATTN_CUDNN;
    k->pack_decode = impl == TC_ATTN_CUDNN;
    k->split_one_query = impl == TC_ATTN_CUDNN;
    k->fa2_split = false;
    k->window_skip = true;
    if (impl == TC_ATTN_FLASH4 && q->backward && k->dqk > 192) {
        /* FA4's sm90 backward at head dim 256 (flash_attn/cute/
         * interface.py, _tile_size_bwd_sm90): 64 x 64 tiles and one stage
         * each of Q, dO and P/dS, so the producer cannot load a step's Q
         * and dO while the previous step's are in use: each step waits
         * for them */
        k->br = 64;
        k->bc = 64;
        k->iter_l2_bytes = 64.0 * (double)(k->dqk + k->dvo) * tc_dtype_bytes(q->dtype);
    }
    if (impl == TC_ATTN_FLASH4 && q->backward && q->deterministic) {
        /* FA4's deterministic sm90 backward (flash_attn/cute/interface.py:
         * a dQ semaphore per (batch, head, query tile)): a store warp waits
         * for its key block's turn (reversed under the causal mask, as in
         * FA3's store_dq), bulk-reduces the tile and counts on; its
         * SingleTileLPTBwdScheduler's spt order issues the last key blocks
         * first, under the mask the shortest first, the relay's order. */
        k->relay = RELAY_WARP;
        if (q->causal)
            k->order = ORDER_SPT;
    }
}

/* FlashAttention-4 on Blackwell (flash_attn/cute, flash_fwd_sm100.py): a
 * CTA ping-pongs two 128-row query tiles (256 rows) over 128-key tiles;
 * the backward uses 128 x 128 tiles in 2-CTA MMA mode. cuDNN's Blackwell
 * engines take the same tiles at CUDNN_BLACKWELL_SLOW. */
static void blackwell_kernel(const struct tc_attention_query *q, enum tc_attn_impl impl,
                             struct fused_kernel *k)
{
    k->impl = impl;
    kernel_head_dims(k, q->head_dim, q->head_dim_vo ? q->head_dim_vo : q->head_dim, false);
    k->br = q->backward ? 128 : 256;
    k->bc = 128;
    k->stage_rows = q->backward ? 0 : 128;
    k->threads = q->backward ? 384 : 512;
    k->eff = q->backward ? FA4_BLACKWELL_BWD : FA4_BLACKWELL_FWD;
    k->exp_mult = q->backward ? 1 : FA4_EXP_MULT;
    k->slow = impl == TC_ATTN_CUDNN ? CUDNN_BLACKWELL_SLOW : 1;
    k->order = ORDER_LPT;
    k->prefetch = true;
    k->pack_gqa = impl != TC_ATTN_CUDNN;
    k->pack_decode = impl == TC_ATTN_CUDNN;
    k->split_one_query = impl == TC_ATTN_CUDNN;
    k->fa2_split = false;
    k->window_skip = true;
}

static int refuse(const struct tc_gpu *gpu, enum tc_attn_impl impl, const char *why)
{
    return tc_error(TC_ERR_UNSUPPORTED, "attention: %s on %s: %s", tc_attn_impl_name(impl), gpu->id,
                    why);
}

/* FlashAttention-4's sm80 forward (flash_attn/cute/flash_fwd.py,
 * FlashAttentionForwardSm80; interface.py): FA2's algorithm with its own
 * launch, 128 x 64 tiles at every head dim ("SM80, should tune"), four
 * warps and one K/V stage. Its key loop runs the masked tiles at the
 * diagonal, then "the remaining iterations have no masking" down to key
 * block 0 ("TODO: local"): a sliding window skips no tile left of it.
 * The four warps hold the 128 x d_v fp32 O accumulator, d_v registers a
 * thread besides the 128 x 64 score tile's 64: above d_v 128 that passes
 * the 255-register cap, and the spilled kernel is not modelled. */
static int fa4_sm80_kernel(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                           struct fused_kernel *k)
{
    fa2_kernel(gpu, q, TC_ATTN_FLASH4, k);
    kernel_head_dims(k, q->head_dim, q->head_dim_vo ? q->head_dim_vo : q->head_dim, false);
    if (k->dvo > 128)
        return refuse(gpu, TC_ATTN_FLASH4,
                      "its sm80 forward keeps a 128-row fp32 O accumulator in four warps' "
                      "registers, which spills above a V head dim of 128 (not modelled)");
    k->br = 128;
    k->bc = 64;
    k->threads = 128;
    k->window_skip = false;
    return TC_OK;
}

/* The cuDNN frontend's open-source ("FROST") sm80 backward (python/cudnn/
 * sdpa/bwd/kernels/sm80/bprop_f16.py and its compile(), config_sm80.py,
 * prepared_host.py): a CTA
 * of eight warps owns 64 keys (128 with 64-row query tiles in its head
 * dim 64 kernel, bprop_d64_f16.py) and loops over 64-row query tiles; the
 * per-step work is FA2's five GEMMs on mma.sync, so FA2's efficiencies
 * are taken (its wide-head factor included). What the source adds: each step adds dQ into an fp32
 * buffer with atomics through L2, staged through shared memory for coalescing up to d_qk 128 and
 * scattered above (eight 32-byte sectors a request instead of four: "halves the dQ atomic L2
 * traffic", +18 % at d 128); from d_qk 256 Q and dO are single-buffered ("load-wait-compute"), so
 * their reload is waited for too; the kernel "runs 8 warps/SM at the
 * 255-register cap, so it is issue-bound", with no second CTA to cover
 * the waits. That traffic is charged at the SM's L2 rate, serial with the
 * step. GQA writes dK and dV per query head and reduces them in a
 * separate kernel. The causal default schedules the longest key blocks
 * first (SCHED_LPT_L2). */
static int frost_sm80_bwd_kernel(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                                 struct fused_kernel *k)
{
    double e = tc_dtype_bytes(q->dtype);

    fa2_kernel(gpu, q, TC_ATTN_CUDNN, k);
    kernel_head_dims(k, q->head_dim, q->head_dim_vo ? q->head_dim_vo : q->head_dim, false);
    if (k->dvo > k->dqk)
        return refuse(gpu, TC_ATTN_CUDNN_OSS,
                      "its sm80 backward splits the work between two warp groups by head dim "
                      "and needs the Q/K head dim at least the V head dim");
    k->br = 64;
    k->bc = k->dqk <= 64 ? 128 : 64;
    k->threads = 256;
    k->order = q->causal ? ORDER_LPT : ORDER_GRID;
    if (q->deterministic) {
        /* TemplateParams.deterministic (kernels/bprop_f16_sm80.py): a CTA
         * spins on a semaphore per (head, query tile) until the count is
         * its key tile, adds its dQ and releases before its next step; the
         * 3-D grid is forced (SCHED_DEFAULT: LPT would break the order) */
        k->relay = RELAY_INLINE;
        k->order = ORDER_GRID;
    }
    k->iter_l2_bytes = (double)k->br * (double)k->dqk * 4.0 * (k->dqk <= 128 ? 1.0 : 2.0) +
                       (k->dqk >= 256 ? (double)k->br * (double)(k->dqk + k->dvo) * e : 0.0);
    k->dkv_per_qhead = true;
    return TC_OK;
}

/* The cuDNN frontend's open-source sm80 forward (python/cudnn/sdpa/fwd/
 * config_sm80.py, kernels/prefill_f16_sm80.py, prefill_d256_f16_sm80.py):
 * 128 x 64 tiles in every flavour, eight warps (four at head dim 64), the
 * Q/K and V head dims instantiated apart (its dsv3 flavour runs 192/128
 * without padding V to 192, which FA2 does). Its llama flavour "matches
 * ~97 % FA-2.8.3 at SQ=8K": FA2's efficiencies are taken. Causal keeps the
 * plain grid (the longest-first order is "a driver-side override, not
 * pinned here"). */
static int frost_sm80_fwd_kernel(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                                 struct fused_kernel *k)
{
    fa2_kernel(gpu, q, TC_ATTN_CUDNN, k);
    kernel_head_dims(k, q->head_dim, q->head_dim_vo ? q->head_dim_vo : q->head_dim, false);
    if (k->dvo > k->dqk)
        return refuse(gpu, TC_ATTN_CUDNN_OSS,
                      "its sm80 forward's flavours have the Q/K head dim at least the V head dim");
    k->br = 128;
    k->bc = 64;
    k->threads = (k->dqk <= 64 ? 4 : 8) * 32;
    /* its TemplateParams hold no split-KV and no GQA-packing axis (the
     * grid is "its plain 3-D grid"), and the cuDNN frontend's published
     * attention_inference plans name it sdpa_fwd_prefill_sm80[PACK_GQA=0;
     * SPLIT_KV=1] for 8- and 16-query decode shapes: a short query block
     * against a long cache runs b x h CTAs over the whole cache */
    k->plain_grid = true;
    return TC_OK;
}

/* Which kernel a query runs, or why it cannot run. FLASH is the best the
 * architecture's libraries offer: FA2 on Ampere and Ada, FA3 on Hopper
 * (cuDNN for an fp8 backward, which FA3 lacks), FA4 on Blackwell, and the
 * generic FA2-class model elsewhere, for any dtype the GPU has. */
static int resolve_kernel(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                          struct fused_kernel *k)
{
    enum tc_attn_impl impl = q->impl;
    int64_t dvo = q->head_dim_vo ? q->head_dim_vo : q->head_dim;
    bool fp8 = q->dtype == TC_DTYPE_FP8;

    memset(k, 0, sizeof(*k));

    if (q->head_dim > 256 || dvo > 256)
        return tc_error(TC_ERR_UNSUPPORTED,
                        "flash attention: head dim %lld/%lld > 256 (the fused kernels "
                        "FlashAttention-2/3/4 and cuDNN's flash engines support up to 256)",
                        (long long)q->head_dim, (long long)dvo);
    if (impl == TC_ATTN_FLASH) {
        switch (gpu->arch) {
        case TC_ARCH_HOPPER:
            impl = fp8 && q->backward ? TC_ATTN_CUDNN : TC_ATTN_FLASH3;
            break;
        case TC_ARCH_BLACKWELL:
            impl = TC_ATTN_FLASH4;
            break;
        case TC_ARCH_AMPERE:
        case TC_ARCH_ADA:
            if (half_dtype(q->dtype)) {
                impl = TC_ATTN_FLASH2;
                break;
            }
            /* the generic model at the dtype's peak */
            fa2_kernel(gpu, q, TC_ATTN_FLASH, k);
            return TC_OK;
        default:
            fa2_kernel(gpu, q, TC_ATTN_FLASH, k);
            return TC_OK;
        }
    }
    /* the cuDNN frontend's open-source engines: their sm80 kernels are
     * modelled from their source; elsewhere they are modelled as cuDNN's
     * engines; their measured rows calibrate them apart from cuDNN's
     * (attention.c) */
    if (impl == TC_ATTN_CUDNN_OSS && half_dtype(q->dtype) &&
        (gpu->arch == TC_ARCH_AMPERE || gpu->arch == TC_ARCH_ADA))
        return q->backward ? frost_sm80_bwd_kernel(gpu, q, k) : frost_sm80_fwd_kernel(gpu, q, k);
    if (impl == TC_ATTN_CUDNN_OSS)
        impl = TC_ATTN_CUDNN;
    switch (impl) {
    case TC_ATTN_FLASH2:
        if (!nvidia_ampere_or_later(gpu) && gpu->vendor == TC_VENDOR_NVIDIA)
            return refuse(gpu, impl, "FlashAttention-2 needs sm80 or later");
        if (!half_dtype(q->dtype))
            return refuse(gpu, impl, "FlashAttention-2 runs fp16 and bf16");
        fa2_kernel(gpu, q, impl, k);
        return TC_OK;
    case TC_ATTN_FLASH3:
        if (gpu->arch != TC_ARCH_HOPPER)
            return refuse(gpu, impl, "FlashAttention-3 runs on Hopper (sm90) only");
        if (!half_dtype(q->dtype) && !(fp8 && !q->backward))
            return refuse(gpu, impl, "FlashAttention-3 runs fp16 and bf16, and an fp8 forward");
        hopper_kernel(q, impl, k);
        return TC_OK;
    case TC_ATTN_FLASH4:
        if (!half_dtype(q->dtype))
            return refuse(gpu, impl, "FlashAttention-4 runs fp16 and bf16");
        if (gpu->arch == TC_ARCH_AMPERE || gpu->arch == TC_ARCH_ADA) {
            if (q->backward)
                return refuse(gpu, impl, "FlashAttention-4 has an sm80 forward only");
            return fa4_sm80_kernel(gpu, q, k);
        }
        if (gpu->arch == TC_ARCH_HOPPER) {
            hopper_kernel(q, impl, k); /* its sm90 path is FA3's design */
            return TC_OK;
        }
        if (gpu->arch == TC_ARCH_BLACKWELL) {
            blackwell_kernel(q, impl, k);
            return TC_OK;
        }
        return refuse(gpu, impl, "FlashAttention-4 runs on sm80, sm90 and sm100");
    case TC_ATTN_CUDNN:
        if (!nvidia_ampere_or_later(gpu))
            return refuse(gpu, impl, "cuDNN's fused attention needs an NVIDIA sm80 or later");
        if (!half_dtype(q->dtype) &&
            !(fp8 && (gpu->arch == TC_ARCH_HOPPER || gpu->arch == TC_ARCH_BLACKWELL)))
            return refuse(gpu, impl,
                          "cuDNN's fused attention runs fp16 and bf16, and fp8 "
                          "from Hopper on");
        if (gpu->arch == TC_ARCH_HOPPER)
            hopper_kernel(q, impl, k);
        else if (gpu->arch == TC_ARCH_BLACKWELL)
            blackwell_kernel(q, impl, k);
        else
            fa2_kernel(gpu, q, impl, k); /* sm80/sm89 engines: FA2-class tiles assumed */
        return TC_OK;
    default:
        return tc_error(TC_ERR_INVALID, "attention: %d is not a fused kernel", (int)impl);
    }
}

/* Per-element time of a tile on one SM, in us: the MMAs of the pass (two
 * GEMMs forward, five backward) at eta of the SM's tensor peak, the exp
 * and the softmax's FP32 work (plus the mask's in a masked tile) on the
 * SM's SFUs and FP32 lanes, overlapped as eff.x says. */
struct elem_cost {
    double full_us, masked_us;
};

static struct elem_cost elem_cost(const struct tc_gpu *gpu, enum tc_dtype dtype,
                                  const struct fused_kernel *k, bool bwd)
{
    int units = gpu->units > 0 ? gpu->units : 1;
    double flops = bwd ? 2.0 * (3.0 * (double)k->dqk + 2.0 * (double)k->dvo)
                       : 2.0 * ((double)k->dqk + (double)k->dvo);
    double sm_flops_per_us = gpu->peak_tflops[dtype] * 1e6 / units;
    double vclk = gpu->clock_vector_mhz > 0   ? gpu->clock_vector_mhz
                  : gpu->clock_tensor_mhz > 0 ? gpu->clock_tensor_mhz
                                              : 1000;
    /* FP32 lanes of an SM: FFMA counts two FLOPs */
    double lanes = gpu->flops_per_clk_per_unit[TC_DTYPE_FP32] > 0
                       ? gpu->flops_per_clk_per_unit[TC_DTYPE_FP32] / 2
                       : 64;
    double eta = k->eff.eta * (k->fa2_split && k->dqk > 128 ? FA2_WIDE_HEAD : 1.0);
    double a = flops / (sm_flops_per_us * eta);
    double b = 1.0 / (MUFU_PER_CLK * k->exp_mult * vclk) + SOFTMAX_ALU_OPS / (lanes * vclk);
    double bm = b + MASK_ALU_OPS / (lanes * vclk);
    struct elem_cost c = {
        .full_us = (fmax(a, b) + k->eff.x * fmin(a, b)) * k->slow,
        .masked_us = (fmax(a, bm) + k->eff.x * fmin(a, bm)) * k->slow,
    };

    return c;
}

/* ------------------------------------------------------------------------ */
/* Tiles under a mask                                                        */
/* ------------------------------------------------------------------------ */

/* The mask as the kernel sees it: queries are the last seq_q of seq_kv
 * positions (bottom-right aligned, as in prefill against a cache); a
 * causal query at position p sees keys [0, p], with a window W keys
 * [p - W + 1, p]. */
struct mask {
    bool causal;
    int64_t window, seq_q, seq_kv, offset;
};

/* Tiles [t0, t1] of size `size` covering [lo, hi] (t0 > t1: none). */
static void tile_span(int64_t lo, int64_t hi, int64_t size, int64_t *t0, int64_t *t1)
{
    if (hi < lo) {
        *t0 = 1;
        *t1 = 0;
        return;
    }
    *t0 = lo / size;
    *t1 = hi / size;
}

/* Tiles of size `size`, limited to [c0, c1], that lie wholly inside
 * [flo, fhi] (and inside [0, limit)). */
static int64_t full_tiles(int64_t c0, int64_t c1, int64_t flo, int64_t fhi, int64_t limit,
                          int64_t size)
{
    int64_t f0, f1;

    if (fhi >= limit)
        fhi = limit - 1;
    if (flo < 0)
        flo = 0;
    if (fhi < flo || c1 < c0)
        return 0;
    f0 = (flo + size - 1) / size;
    f1 = (fhi + 1) / size - 1;
    if (f0 < c0)
        f0 = c0;
    if (f1 > c1)
        f1 = c1;
    return f1 >= f0 ? f1 - f0 + 1 : 0;
}

/* The key tiles a forward CTA of query rows [r0, r1] computes, limited to
 * the key-tile range [s0, s1] of its split: *n in all, *n_full of them
 * with no masked element. Rows are packed rows (gp query heads per
 * position when PackGQA packs them). */
static void fwd_tiles(const struct mask *m, int64_t r0, int64_t r1, int64_t gp, int64_t bc,
                      int64_t s0, int64_t s1, int64_t *n, int64_t *n_full)
{
    int64_t p0 = m->offset + r0 / gp, p1 = m->offset + r1 / gp;
    int64_t lo = 0, hi = m->seq_kv - 1, flo = 0, fhi = m->seq_kv - 1, t0, t1;

    if (m->causal) {
        hi = p1 < hi ? p1 : hi;
        fhi = p0;
        if (m->window) {
            lo = p0 - m->window + 1 > 0 ? p0 - m->window + 1 : 0;
            flo = p1 - m->window + 1;
        }
    }
    tile_span(lo, hi, bc, &t0, &t1);
    if (t0 < s0)
        t0 = s0;
    if (t1 > s1)
        t1 = s1;
    *n = t1 >= t0 ? t1 - t0 + 1 : 0;
    *n_full = *n ? full_tiles(t0, t1, flo, fhi, m->seq_kv, bc) : 0;
}

/* The query tiles a backward CTA of keys [k0, k1] computes. */
static void bwd_tiles(const struct mask *m, int64_t k0, int64_t k1, int64_t br, int64_t *n,
                      int64_t *n_full)
{
    int64_t lo = 0, hi = m->seq_q - 1, flo = 0, fhi = m->seq_q - 1, t0, t1;

    if (m->causal) {
        /* rows whose position sees some key of the block, and all of them */
        lo = k0 - m->offset > 0 ? k0 - m->offset : 0;
        flo = k1 - m->offset;
        if (m->window) {
            hi = k1 + m->window - 1 - m->offset < hi ? k1 + m->window - 1 - m->offset : hi;
            fhi = k0 + m->window - 1 - m->offset;
        }
    }
    if (k1 >= m->seq_kv)
        fhi = -1; /* a partial key block is bounds-masked on every row */
    tile_span(lo, hi, br, &t0, &t1);
    *n = t1 >= t0 ? t1 - t0 + 1 : 0;
    *n_full = *n ? full_tiles(t0, t1, flo, fhi, m->seq_q, br) : 0;
}

/* ------------------------------------------------------------------------ */
/* Scheduling CTAs on SMs                                                    */
/* ------------------------------------------------------------------------ */

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x > y ? -1 : x < y;
}

static int cmp_asc(const void *a, const void *b)
{
    return cmp_desc(b, a);
}

/* The time the last SM finishes when `reps` copies of the pattern
 * unit_us[0..n) (one (batch, head)'s CTAs) are issued to `sms` SMs, each
 * CTA to the SM that frees first (a hardware block scheduler, or a
 * persistent kernel's atomic tile counter), in launch order, longest or
 * shortest first. An SM's co-resident CTAs share its pipes, so an SM is
 * one server. */
static double makespan(double *unit_us, size_t n, int64_t reps, int sms, int order)
{
    bool lpt = order == ORDER_LPT, sorted = order != ORDER_GRID;
    double total = 0, longest = 0, *heap, t = 0;
    size_t count = n * (size_t)reps, h = 0;
    bool equal = true;

    for (size_t i = 0; i < n; i++) {
        total += unit_us[i] * (double)reps;
        longest = fmax(longest, unit_us[i]);
        equal &= unit_us[i] == unit_us[0];
    }
    if (!n || longest <= 0)
        return 0;
    if (equal) /* waves at SM granularity: the last partial wave costs a whole one */
        return ceil((double)count / sms) * longest;
    if (sorted)
        qsort(unit_us, n, sizeof(*unit_us), lpt ? cmp_desc : cmp_asc);
    if (count > SIM_MAX_UNITS || !(heap = calloc((size_t)sms, sizeof(*heap))))
        /* many waves: the work spread evenly plus a tail of half the
         * longest CTA (none when the longest go first, all when last) */
        return fmax(longest, total / sms + (lpt ? 0.0 : order == ORDER_SPT ? 1.0 : 0.5) * longest);
    /* a binary min-heap of SM finish times; all SMs start idle */
    h = (size_t)sms;
    for (size_t c = 0; c < count; c++) {
        /* launch order: the pattern per (batch, head); sorted:
         * each of the sorted pattern's CTAs across all heads together */
        double u = sorted ? unit_us[c / (size_t)reps] : unit_us[c % n];
        size_t i = 0;

        heap[0] += u;
        for (;;) { /* sift down */
            size_t l = 2 * i + 1, r = l + 1, s = i;
            double tmp;

            if (l < h && heap[l] < heap[s])
                s = l;
            if (r < h && heap[r] < heap[s])
                s = r;
            if (s == i)
                break;
            tmp = heap[i];
            heap[i] = heap[s];
            heap[s] = tmp;
            i = s;
        }
    }
    for (size_t i = 0; i < h; i++)
        t = fmax(t, heap[i]);
    free(heap);
    return t;
}

/* ------------------------------------------------------------------------ */
/* Split-KV (FlashDecoding)                                                  */
/* ------------------------------------------------------------------------ */

/* How many splits of the keys the kernel's heuristic picks (the
 * FlashDecoding heuristic of FlashAttention-2's flash_api.cpp,
 * num_splits_heuristic, which FA3 reuses): none when the CTAs fill 80% of
 * the slots; else, of the split counts that change the keys per split,
 * the smallest whose wave efficiency (waves / ceil(waves)) is within 85%
 * of the best, up to 128 splits, the slot count and the key tiles. */
static int64_t split_heuristic(int64_t ctas, double slots, int64_t key_tiles)
{
    int64_t max_splits = 128, best_s = 1;
    double best = 0;

    if ((double)ctas >= 0.8 * slots)
        return 1;
    if (max_splits > (int64_t)slots)
        max_splits = (int64_t)slots;
    if (max_splits > key_tiles)
        max_splits = key_tiles;
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t s = 1; s <= max_splits; s++) {
            double waves, eff;

            if (s > 1 && (key_tiles + s - 1) / s == (key_tiles + s - 2) / (s - 1))
                continue; /* the same keys per split as s - 1 */
            waves = (double)(ctas * s) / slots;
            eff = waves / ceil(waves);
            if (pass == 0 && eff > best)
                best = eff;
            if (pass == 1 && eff >= 0.85 * best) {
                best_s = s;
                break;
            }
        }
    }
    return best_s;
}

/* ------------------------------------------------------------------------ */
/* The model                                                                 */
/* ------------------------------------------------------------------------ */

/* Blocks per SM by shared memory, registers and threads, for the report:
 * Q and two K/V stages (forward), or the K/V block and two query stages
 * of Q, dO (backward), at the input width; 255 registers a thread (FA2). */
static int blocks_per_sm(const struct tc_gpu *gpu, const struct fused_kernel *k, double e, bool bwd)
{
    double smem = bwd ? ((double)k->bc + 2.0 * k->br) * (double)(k->dqk + k->dvo) * e
                      : ((double)k->br * k->dqk + 2.0 * k->bc * (double)(k->dqk + k->dvo)) * e;
    int bps = gpu->max_blocks_per_sm > 0 ? gpu->max_blocks_per_sm : 16;

    smem += (double)gpu->reserved_smem_per_block_bytes;
    if (gpu->smem_per_sm_bytes > 0)
        bps = (int)fmin(bps, floor((double)gpu->smem_per_sm_bytes / smem));
    /* whole blocks: the integer quotients */
    if (gpu->regs_per_sm > 0) {
        int by_regs = gpu->regs_per_sm / (k->threads * 255);
        bps = bps < by_regs ? bps : by_regs;
    }
    if (gpu->max_threads_per_sm > 0) {
        int by_threads = gpu->max_threads_per_sm / k->threads;
        bps = bps < by_threads ? bps : by_threads;
    }
    return bps < 1 ? 1 : bps;
}

/* The main kernel's time (the CTAs on the SMs, or DRAM, whichever is
 * longer) for mask m; fills the CTA count. */
static int fused_main_us(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                         const struct fused_kernel *k, const struct mask *m, int64_t gp,
                         int64_t heads_eff, int64_t splits, double *main_us, int64_t *ctas)
{
    struct elem_cost c = elem_cost(gpu, q->dtype, k, q->backward);
    int units = gpu->units > 0 ? gpu->units : 1;
    double e = tc_dtype_bytes(q->dtype);
    double sm_bytes_per_us = gpu->mem_bw_gbps * 1e3 * FUSED_DRAM_EFF / units;
    double *pattern;
    size_t n = 0;
    int64_t reps = q->batch * heads_eff;

    if (!q->backward) {
        int64_t rows = m->seq_q * gp, row_tiles = (rows + k->br - 1) / k->br;
        int64_t key_tiles = (m->seq_kv + k->bc - 1) / k->bc;
        int64_t per_split = (key_tiles + splits - 1) / splits;
        /* Q in and O out (fp32 partial O when split) at the SM's share of
         * DRAM: the prologue and epilogue the K/V pipeline cannot hide; a
         * warp-specialised kernel's producer loads the next Q meanwhile */
        double pe_us = ((k->prefetch ? 0.0 : (double)k->br * k->dqk * e) +
                        (double)k->br * k->dvo * (splits > 1 ? 4.0 : e)) /
                       sm_bytes_per_us;

        pattern = malloc((size_t)(row_tiles * splits) * sizeof(*pattern));
        if (!pattern)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; i < row_tiles; i++) {
            int64_t r0 = i * k->br,
                    r1 = (i + 1) * k->br - 1 < rows - 1 ? (i + 1) * k->br - 1 : rows - 1;

            /* the rows the CTA's MMAs compute: the whole tile, or its
             * stages that hold a row */
            double br = k->stage_rows ? (double)round_up(r1 - r0 + 1, k->stage_rows) : k->br;

            for (int64_t s = 0; s < splits; s++) {
                int64_t nt, nf;

                fwd_tiles(m, r0, r1, gp, k->bc, s * per_split, (s + 1) * per_split - 1, &nt, &nf);
                pattern[n++] =
                    nt ? ((double)nf * c.full_us + (double)(nt - nf) * c.masked_us) * br * k->bc +
                             pe_us
                       : 0;
            }
        }
    } else {
        int64_t key_tiles = (m->seq_kv + k->bc - 1) / k->bc;
        double clk = gpu->clock_tensor_mhz > 0 ? gpu->clock_tensor_mhz : 1000;
        double step_l2_us = k->iter_l2_bytes / (SM_L2_BYTES_PER_CLK * clk);
        /* K and V in (prefetched by a producer warp), dK and dV out */
        double pe_us = (k->prefetch ? 1.0 : 2.0) * (double)k->bc * (double)(k->dqk + k->dvo) * e /
                       sm_bytes_per_us;
        double *per_block = malloc((size_t)key_tiles * sizeof(*per_block));
        /* the dQ relay (RELAY_*): a step hands the semaphore over; a store
         * warp's serial part, the tile's reduction at the SM's L2 rate and
         * the hand-over, bounds the step from below */
        double hand_us = 2.0 * L2_HIT_CLK / clk;
        double red_us = (double)k->br * (double)k->dqk * 4.0 / (SM_L2_BYTES_PER_CLK * clk);
        int64_t resident = (int64_t)units * blocks_per_sm(gpu, k, e, true), prev = 0;

        if (!per_block)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        for (int64_t j = 0; j < key_tiles; j++) {
            int64_t nt, nf, last = m->seq_q - 1; /* the last query row the block sees */

            bwd_tiles(m, j * k->bc, (j + 1) * k->bc - 1, k->br, &nt, &nf);
            per_block[j] =
                ((double)nf * c.full_us + (double)(nt - nf) * c.masked_us) * k->br * k->bc +
                (double)nt * step_l2_us;
            if (m->causal && m->window)
                last = (int64_t)fmin((double)last,
                                     (double)((j + 1) * k->bc + m->window - 2 - m->offset));
            last /= k->br;
            if (k->relay == RELAY_INLINE)
                per_block[j] += (double)nt * hand_us;
            else if (k->relay == RELAY_WARP)
                per_block[j] = fmax(per_block[j], (double)nt * (red_us + hand_us));
            /* an inline relay runs in ascending key-tile order: a CTA
             * ends a hand-over after the one before it (resident with it)
             * at the earliest, plus its steps past that one's last query
             * tile; FA4's order under the mask runs from the shorter CTAs */
            if (k->relay == RELAY_INLINE && j % resident && nt)
                per_block[j] = fmax(per_block[j], per_block[j - 1] + hand_us +
                                                      (double)(last > prev ? last - prev : 0) *
                                                          per_block[j] / (double)nt);
            prev = last;
        }
        /* the deterministic FA2 backward: ceil(SMs / (b * h)) CTAs per
         * head, each looping over every splits-th key block and
         * accumulating dQ into its own buffer (flash_api.cpp mha_bwd and
         * flash_bwd_launch_template.h: gridDimx); else one CTA per key
         * block adding dQ atomically */
        n = (size_t)(q->deterministic && !k->relay ? splits : key_tiles);
        pattern = calloc(n, sizeof(*pattern));
        if (!pattern) {
            free(per_block);
            return tc_error(TC_ERR_NOMEM, "out of memory");
        }
        for (int64_t j = 0; j < key_tiles; j++)
            pattern[q->deterministic && !k->relay ? j % splits : j] += per_block[j] + pe_us;
        free(per_block);
    }
    *ctas = (int64_t)n * reps;
    *main_us = makespan(pattern, n, reps, units, k->order);
    free(pattern);
    return TC_OK;
}

int tc_attention_fused(const struct tc_gpu *gpu, const struct tc_attention_query *q, int64_t seq_kv,
                       struct tc_attention_prediction *out)
{
    struct fused_kernel k;
    int units = gpu->units > 0 ? gpu->units : 1;
    double e = tc_dtype_bytes(q->dtype), bw = gpu->mem_bw_gbps * 1e3 * FUSED_DRAM_EFF;
    int64_t kv_heads = q->kv_heads ? q->kv_heads : q->heads, group = q->heads / kv_heads;
    int64_t gp = 1, heads_eff = q->heads, splits = 1, ctas = 0, dqk, dvo;
    struct mask m = {.causal = q->causal,
                     .window = q->window,
                     .seq_q = q->seq_q,
                     .seq_kv = seq_kv,
                     .offset = seq_kv - q->seq_q};
    double main_us, bytes, extra_us = 0;
    int bps, err;

    err = resolve_kernel(gpu, q, &k);
    if (err < 0)
        return err;
    if (q->deterministic && !k.relay &&
        !(k.fa2_split && (k.impl == TC_ATTN_FLASH2 || k.impl == TC_ATTN_FLASH)))
        return tc_error(TC_ERR_UNSUPPORTED,
                        "attention: the deterministic backward of %s on %s is not modelled (no "
                        "public source describes how it orders its dQ additions); "
                        "FlashAttention-2's, FlashAttention-4's on sm90 and the cuDNN frontend's "
                        "open sm80 engine's are",
                        tc_attn_impl_name(k.impl), gpu->id);
    if (k.plain_grid && q->kv_splits > 1 && !q->backward)
        return tc_error(TC_ERR_UNSUPPORTED,
                        "attention: %s on %s has no split-KV forward (--kv-splits %lld asked)",
                        tc_attn_impl_name(q->impl), gpu->id, (long long)q->kv_splits);
    dqk = k.dqk;
    dvo = k.dvo;
    if (!k.window_skip)
        m.window = 0; /* the tiles left of the window are computed as under the causal mask */

    if (!q->backward) {
        /* GQA packing: FA2 swaps a single query's heads into rows
         * (flash_api.cpp, seqlenq_ngroups_swapped: seq_q 1, no window);
         * FA3's PackGQA packs when it wastes fewer rows of the last tile
         * (heuristics.h: unpacked efficiency below 0.9x the packed) */
        if (k.plain_grid) {
            /* no packing, no split: the kernel's grid whatever the shape */
        } else if (group > 1 && q->seq_q == 1 && ((k.fa2_split && !q->window) || k.pack_decode)) {
            gp = group;
        } else if (group > 1 && k.pack_gqa) {
            double unpacked = (double)q->seq_q / (double)round_up(q->seq_q, k.br);
            double packed = (double)(q->seq_q * group) / (double)round_up(q->seq_q * group, k.br);

            if (unpacked < 0.9 * packed)
                gp = group;
        }
        heads_eff = gp > 1 ? kv_heads : q->heads;
        if (q->kv_splits != 1 && !k.plain_grid &&
            !(k.split_one_query && q->seq_q > 1 && q->kv_splits == 0)) {
            /* FA2's split kernel: 64-row tiles over 256 / 128 / 64 keys by
             * head dim, counted against two CTAs per SM (set_params_splitkv);
             * FA3's heuristic counts its own tiles against the SMs */
            int64_t bm = k.fa2_split ? 64 : k.br;
            int64_t bn = k.fa2_split ? (dqk <= 64 ? 256 : dqk <= 128 ? 128 : 64) : k.bc;
            int64_t key_tiles = (seq_kv + bn - 1) / bn;
            int64_t ctas_1 = q->batch * heads_eff * ((q->seq_q * gp + bm - 1) / bm);

            splits = q->kv_splits > 1
                         ? q->kv_splits
                         : split_heuristic(ctas_1, (k.fa2_split ? 2.0 : 1.0) * units, key_tiles);
            if (splits > key_tiles)
                splits = key_tiles;
            if (splits > 1) {
                k.br = (int)bm;
                k.bc = (int)bn;
            }
        }
    } else if (q->deterministic && !k.relay) {
        /* one CTA per head at least, each looping over its key blocks */
        int64_t key_tiles = (seq_kv + k.bc - 1) / k.bc;

        splits = (units + q->batch * q->heads - 1) / (q->batch * q->heads);
        if (splits > key_tiles)
            splits = key_tiles;
    }

    err = fused_main_us(gpu, q, &k, &m, gp, heads_eff, splits, &main_us, &ctas);
    if (err < 0)
        return err;
    if (q->causal) {
        /* a causal launch computes a subset of the same CTAs' tiles: it
         * cannot end later than the launch without the mask (the list
         * schedule's ordering anomalies are the model's, not the GPU's) */
        struct mask full = m;
        double nc_us;
        int64_t nc_ctas;

        full.causal = false;
        full.window = 0;
        err = fused_main_us(gpu, q, &k, &full, gp, heads_eff, splits, &nc_us, &nc_ctas);
        if (err < 0)
            return err;
        main_us = fmin(main_us, nc_us);
    }

    /* DRAM: forward Q and O once, K and V once per KV head (re-reads by
     * query tiles and grouped heads hit L2), the window's span of keys at
     * most; backward also dO, dQ, dK, dV */
    {
        double kv_len =
            m.window ? fmin((double)seq_kv, (double)(q->seq_q + m.window)) : (double)seq_kv;
        double qrows = (double)q->batch * q->heads * q->seq_q;
        double kvrows = (double)q->batch * kv_heads * kv_len;

        bytes = qrows * (dqk + dvo) * e + kvrows * (dqk + dvo) * e;
        if (q->backward)
            bytes *= 2;
        else if (splits > 1)
            bytes += 2.0 * splits * qrows * dvo * 4; /* partial O and its reread */
    }
    out->time_us = fmax(main_us, bytes / bw) + TC_KERNEL_FLOOR_US;
    out->bound = main_us >= bytes / bw ? TC_BOUND_COMPUTE : TC_BOUND_MEMORY;
    {
        double qrows = (double)q->batch * q->heads * q->seq_q;

        if (!q->backward && splits > 1)
            /* the combine kernel: partial O and LSE of every split in, O out */
            extra_us = tc_elementwise_time_us(gpu, qrows * (splits * (dvo + 1) * 4.0 + dvo * e));
        if (q->backward) {
            /* preprocess: D = rowsum(dO * O), dQ accumulator zeroed;
             * postprocess: the fp32 dQ accumulator(s) to dQ */
            double acc = q->deterministic ? (double)splits : 1.0;

            extra_us = tc_elementwise_time_us(gpu, qrows * (2.0 * dvo * e + 4 + dqk * 4.0)) +
                       tc_elementwise_time_us(gpu, qrows * dqk * (4.0 * acc + e));
            if (k.dkv_per_qhead && kv_heads != q->heads)
                /* the per-query-head dK, dV in, the KV heads' out */
                extra_us += tc_elementwise_time_us(gpu, (double)q->batch * (double)seq_kv *
                                                            (double)(q->heads + kv_heads) *
                                                            (double)(dqk + dvo) * e);
        }
    }
    out->time_us += extra_us;
    bps = blocks_per_sm(gpu, &k, e, q->backward);
    out->kernel = k.impl;
    out->kv_splits = q->backward ? 1 : splits;
    out->block_m = k.br;
    out->block_n = k.bc;
    out->blocks_per_sm = bps;
    out->blocks = ctas;
    out->waves = (double)ctas / ((double)units * bps);
    out->occupancy = gpu->max_warps_per_sm > 0
                         ? fmin(1.0, (double)bps * k.threads / 32.0 / gpu->max_warps_per_sm)
                         : 0;
    out->source = TC_SOURCE_ANALYTICAL;
    return TC_OK;
}

/* (query, key) pairs a mask keeps, summed over the queries (positions
 * offset .. offset + seq_q - 1 of seq_kv): all seq_kv keys, the p + 1 of
 * a causal query at p, at most the window's. */
double tc_attention_pairs(const struct tc_attention_query *q, int64_t seq_kv)
{
    double sq = (double)q->seq_q, skv = (double)seq_kv, off = skv - sq;

    if (!q->causal)
        return sq * skv;
    if (off < 0)
        off = 0;
    if (!q->window)
        return sq * off + sq * (sq + 1) / 2;
    {
        double w = (double)q->window;
        /* rows whose p + 1 <= W see p + 1 keys, the others W */
        double c1 = fmin(fmax(w - off, 0), sq);

        return c1 * off + c1 * (c1 + 1) / 2 + (sq - c1) * w;
    }
}

/* Test hooks (model-internal.h). */
void tc_attention_fwd_tiles(const struct tc_attention_query *q, int64_t seq_kv, int64_t r0,
                            int64_t r1, int64_t bc, int64_t *n, int64_t *n_full)
{
    struct mask m = {.causal = q->causal,
                     .window = q->window,
                     .seq_q = q->seq_q,
                     .seq_kv = seq_kv,
                     .offset = seq_kv - q->seq_q};

    fwd_tiles(&m, r0, r1, 1, bc, 0, (seq_kv + bc - 1) / bc - 1, n, n_full);
}

void tc_attention_bwd_tiles(const struct tc_attention_query *q, int64_t seq_kv, int64_t k0,
                            int64_t k1, int64_t br, int64_t *n, int64_t *n_full)
{
    struct mask m = {.causal = q->causal,
                     .window = q->window,
                     .seq_q = q->seq_q,
                     .seq_kv = seq_kv,
                     .offset = seq_kv - q->seq_q};

    bwd_tiles(&m, k0, k1, br, n, n_full);
}

int64_t tc_attention_split_heuristic(int64_t ctas, double slots, int64_t key_tiles)
{
    return split_heuristic(ctas, slots, key_tiles);
}
