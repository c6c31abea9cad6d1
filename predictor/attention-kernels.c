/* Fused attention kernels: FlashAttention-2, -3, -4 and cuDNN's SDPA
 * engines, each as the tiles, scheduling order and efficiencies it runs
 * with on an architecture, from its source and published benchmarks, and
 * the cost of one score element of a tile (attention-kernel.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "attention-kernel.h"

/* ------------------------------------------------------------------------ */
/* Costs of one score element                                                */
/* ------------------------------------------------------------------------ */

/* exp2 throughput of an SM: 16 results per clock on compute capability
 * 5.x-9.0 (CUDA C++ Programming Guide, arithmetic instruction throughput
 * table); Blackwell kept the SFU count (FlashAttention-4 blog: "the SFU
 * count ... remains unchanged"). CDNA's transcendentals run at a quarter
 * of its 64 lanes per CU, the same 16. Blackwell Ultra (sm_103: B300,
 * GB300) doubles it: 10.7 against 5 TeraExponentials/s (Verda's GB300
 * NVL72 page, "Attention acceleration (SFU EX2)"), 32 a clock on each of
 * 160 SMs near 2.1 GHz, which FlashAttention-4 takes as "fast native
 * exp2" (below). */
#define MUFU_PER_CLK 16.0
#define MUFU_PER_CLK_SM103 32.0

static bool fast_native_exp2(const struct tc_gpu *gpu)
{
    return strcmp(gpu->compute_capability, "sm_103") == 0;
}

/* FP32-lane operations of one exp2 that FlashAttention-4 emulates
 * (flash_attn/cute/utils.py, ex2_emulation_2): 2^x = 2^floor(x) 2^frac(x),
 * the floor by an add of 2^23 + 2^22 in round-down mode and a subtract
 * (2), a clamp at -127 (1), the cubic of 2^frac in Horner form (3 FMAs),
 * and the shift and integer add that put floor(x) into the exponent (2).
 * Blackwell's FP32 and INT32 work share the SM's 128 lanes. */
#define EXP_EMU_OPS 8.0
/* FP32 instructions per score element besides the exp: the running max,
 * the scaled subtraction (one FFMA), the row sum and the conversion of P
 * to 16 bits (the online softmax of FlashAttention-2, section 3.1). */
#define SOFTMAX_ALU_OPS 4.0
/* A tile the mask cuts through computes every element and then masks it:
 * the column index, two compares and a select per element (FA2's
 * apply_mask_causal / apply_mask_local). */
#define MASK_ALU_OPS 4.0
/* Shared memory delivers 32 banks of 32 bits a clock on an SM (CUDA C++
 * Programming Guide, "Shared Memory" of compute capability 5.x and later:
 * 32 banks, each with a bandwidth of 32 bits per clock cycle). A tile's
 * operand reads and copies (fused_kernel.smem_bytes) at that rate bound
 * its MMAs from below. */
#define SMEM_BYTES_PER_CLK 128.0
/* A tensor load under a board's power limit. The Ampere efficiencies
 * below come from the A100 SXM4 (400 W); the same GA100 at the same
 * 1410 MHz boost on the 300 W PCIe board sustains 252.9 TFLOP/s of bf16
 * matmul against the SXM4's 271.2 (the maximum achievable matmul tables,
 * stas00/ml-engineering compute/accelerator/README.md), 0.9325 of its
 * rate. A GA100 board at another limit below the SXM4's scales that by
 * the cube-root law of the GEMM model (dynamic power ~ f V^2 with V
 * following f: the clock goes as the power's cube root). */
#define GA100_SXM_TDP_W 400.0
#define GA100_PCIE_TDP_W 300.0
#define GA100_PCIE_TENSOR_SHARE (252.9 / 271.2)

/* FlashAttention-2 on Ampere (Dao 2023, "FlashAttention-2", A100 SXM4):
 * the forward reaches up to 73% of the peak and the backward up to 63% at
 * head dim 128; optimized GEMMs reach 80-90% (its introduction), so
 * eta = 0.85 for the forward's mma.sync loop and x = 0.36 makes 73%. The
 * backward keeps FA3's fitted x = 1.15 (below) and eta = 0.76 makes 63%. */
static const struct fused_eff FA2_AMPERE_FWD = {0.85, 0.36};
static const struct fused_eff FA2_AMPERE_BWD = {0.76, 1.15};
/* The cuDNN frontend's open-source sm80 backward (the shared pipeline of
 * python/cudnn/sdpa/bwd/kernels/sm80/bprop_f16.py) states its own rate:
 * staging dQ through shared memory took it "+18 % @ B2H16S4096 (75->89
 * TFLOPS, ~1.0x cuDNN)" at head dim 128 without a mask, and a later
 * conflict-free layout of that staging "-9 % kernel time" (the docstring
 * of the later version), 89 / 0.91 = 97.8 TFLOP/s. It "runs 8 warps/SM at
 * the 255-register cap, so it is issue-bound: every non-MMA instruction
 * in the Q-loop shows up in the runtime", which FA2's eta does not
 * describe. eta is solved for 97.8 at that shape on the A100 80GB PCIe
 * (the board of the frontend's own A100 benchmark results; the docstring
 * names none), with FA2's x: 98.0. */
static const struct fused_eff FROST_AMPERE_BWD = {0.42, 1.15};
/* FlashAttention-2 on Hopper (no wgmma, no TMA), from the FA2 bars of the
 * FlashAttention-3 paper (Shah et al. 2024, figures 5-6, H100 SXM5):
 * forward 324 / 370 / 326 TFLOP/s at head dim 64 / 128 / 256 (model 324 /
 * 368 / 350 with FA2_WIDE_HEAD), backward 291 / 322 at 64 / 128 (292 /
 * 321). */
static const struct fused_eff FA2_HOPPER_FWD = {0.45, 0.52};
static const struct fused_eff FA2_HOPPER_BWD = {0.38, 1.10};
/* FlashAttention-3 on Hopper (same figures): forward 497 / 648 / 756
 * (model 495 / 652 / 747), backward 474 / 561 (473 / 560). Its fp8
 * forward is solved from its own fp8 bars, 1008 and 1171 at head dim 128
 * and 256 (16k; model 1009 / 1162). The 16-bit pair gave 973 / 1314 there.
 * The fp8 kernel transposes V in shared memory (section 3.3) and permutes
 * P's registers into the fp8 operand layout. That is MMA-side work, and
 * its eta comes out lower: 0.71 against 0.91. The 2k bars (733 / 931) come
 * out 27 / 17 % fast: the model's short-sequence ramp is FA3's 16-bit one. */
static const struct fused_eff FA3_HOPPER_FWD = {0.91, 0.50};
static const struct fused_eff FA3_HOPPER_BWD = {0.74, 1.15};
static const struct fused_eff FA3_HOPPER_FWD_FP8 = {0.71, 0.33};
/* cuDNN on Hopper (the cuDNN bars of the same figures). 16-bit forward:
 * 413 / 595 / 581 TFLOP/s at head dim 64 / 128 / 256. No (eta, x) of this
 * model meets both 64 and 128 (at eta = 1 it still gives 429 / 593), and
 * none gives 256 below 128. So eta is FA3's (the same wgmma from shared
 * memory), and x is solved at head dim 128, the head dim of most models:
 * 595. Head dims 64 and 256 then come out at 445 (+8 %) and 708 (+22 %).
 * That 256 bar is a mid-2024 cuDNN; 9.27 runs head dim 256 within 7 % of
 * the model (the development file's H200 rows). A least-squares pair over
 * all three bars, {0.76, 0.66}, is 11 % slow at head dim 128. On the cuDNN
 * frontend's H200 attention_inference sweeps (not shipped), that pair ran
 * +8 to +31 % slow (median per group) on the prefill and 8-16-query rows.
 *
 * fp8 forward: its own bars, 1005 at head dim 128 and 1139 / 1001 at 256
 * (16k / 2k), solve to {0.68, 0.30} (999 / 1134 / 1062). At the other head
 * dims cuDNN's fp8 forward runs at the bf16 engine's rate
 * (cudnn_hopper_fp8_fwd_16bit).
 *
 * Backward 433 / 516 at 64 / 128 (model 434 / 518). */
static const struct fused_eff CUDNN_HOPPER_FWD = {0.91, 0.70};
static const struct fused_eff CUDNN_HOPPER_FWD_FP8 = {0.68, 0.30};
static const struct fused_eff CUDNN_HOPPER_BWD = {0.69, 1.30};
/* FlashAttention-4 on Blackwell (FlashAttention-4 blog and paper, B200
 * BF16): up to 1605 TFLOP/s, 71% of the peak. Its forward computes a
 * share of its exps with a polynomial on the FP32 lanes (18.75 % at head
 * dim 128 without a mask, fa4_sm100_exp_emulated), and at head dim 128 the
 * SFUs' exps take as long as the MMAs (the paper's roofline: 16 exps and
 * 8192 MMA FLOPs an SM a clock). eta = 0.85 as for GEMMs, and x = 0.05
 * makes 1600 at head dim 128: the softmax warps ping-pong two tiles under
 * one MMA warp, so almost nothing of the shorter side shows. (With half
 * the exps taken off the SFUs for free, the earlier model, x was 0.23.)
 * No backward figure is published with it: FA3's backward/forward ratio
 * at head dim 128 (561 / 648) is assumed, which x = 0.73 gives (the
 * backward emulates no exp). */
static const struct fused_eff FA4_BLACKWELL_FWD = {0.85, 0.05};
static const struct fused_eff FA4_BLACKWELL_BWD = {0.85, 0.73};
/* FlashAttention-4's sm90 backward reduces each step's fp32 dQ tile (query
 * rows x d_qk) into the dQ accumulator in global memory, and that traffic
 * bounds it: "with the atomics compiled out the 1-CTA kernel runs at 747
 * TFLOP/s, so what remains is the fp32 reduce traffic into dQaccum ... a
 * single SM sustains only ~30 GB/s of red.add" (flash-attention PR #2889,
 * head dim 256, H200), which measures the kernel at 373 TFLOP/s (dense
 * bf16, seq 16k, 64 x 48 tiles). This rate is solved with this model at
 * that shape (1 x 16 heads) for 373; it binds at head dim 256 and in the
 * deterministic relay, not at 64-192, whose steps compute longer per dQ
 * byte. */
#define FA4_SM90_DQ_RED_GBPS 24.2
#define H200_TENSOR_MHZ 1830.0
/* FlashAttention-2's kernels above head dim 128 (eight warps, a 256-wide
 * O accumulator in registers) run below what the softmax's amortisation
 * gives: the FA3 paper's FA2 bars are 326 TFLOP/s at head dim 256 against
 * 370 at 128, where this model without the factor gives the same for
 * both. eta is scaled by 0.875, the ratio of the two. */
#define FA2_WIDE_HEAD 0.875
/* cuDNN on Blackwell runs at FlashAttention-4's rate. FA4's paper measured
 * itself "up to 1.3x faster than cuDNN 9.13" on B200; cuDNN 9.27 (backend
 * 92700, the version of the development file) caught up: the cuDNN
 * frontend's attention_training results on GB200 time both on the same
 * shapes (results/llama3.1/gb200, 2026-09-28, Llama-3.1 64/8 heads, d 128,
 * batch 2, seq 8k-32k), cuDNN / FA4 TFLOP/s forward 0.99 / 0.97 / 1.03 /
 * 1.02 (causal 32k, 16k, 8k and no mask 32k) and backward 0.99 / 1.01. So
 * cuDNN takes FA4's tiles and efficiencies with no factor of its own. */
/* GPUs no FlashAttention release targets (Volta, Turing) and AMD's CDNA
 * ports (CK and Triton): the previous tile model's efficiency relative to
 * Ampere (0.60 and 0.55 against 0.80) applied to eta. */
static const struct fused_eff FA2_OLD_NVIDIA_FWD = {0.64, 0.36};
static const struct fused_eff FA2_OLD_NVIDIA_BWD = {0.57, 1.15};
static const struct fused_eff FA2_CDNA_FWD = {0.58, 0.36};
static const struct fused_eff FA2_CDNA_BWD = {0.52, 1.15};

/* FlashAttention-2's forward tiles (csrc/flash_attn/src/
 * flash_fwd_launch_template.h, run_mha_fwd_hdim*, no dropout), four warps
 * unless said: 128 x 128 up to head dim 64; at 96, 128 x 64 (sm86/sm89
 * under a causal mask: 64 x 64); at 128, 128 x 64 (sm86/sm89: 128 x 32,
 * causal 64 x 64); 128 x 64 with eight warps at 192; at 256, 128 x 64 with
 * eight warps where a block can take 128 KB of shared memory and an SM has
 * less than 192 KB (the A100's 163 and 164), else 64 x 64 ("for H100 we
 * want to run with 64 x 64 (96KB smem) since then we can get 2 CTAs per
 * SM"; sm86/sm89 lack the 128 KB). GPUs FA2 does not target take the sm80
 * tiles (big_smem, not sm8x). */
static void fa2_fwd_tile(int64_t d, bool masked, bool sm8x, bool big_smem, int *br, int *bc,
                         int *warps)
{
    *br = 128;
    *bc = d <= 64 ? 128 : 64;
    *warps = d > 128 ? 8 : 4;
    if (sm8x && masked && d > 64 && d <= 128) {
        *br = 64;
        *bc = 64;
    } else if (sm8x && d > 96 && d <= 128) {
        *bc = 32;
    } else if (d > 192 && !big_smem) {
        *br = 64;
        *bc = 64;
        *warps = 4;
    }
}

/* FlashAttention-2's backward tiles (flash_bwd_launch_template.h,
 * run_mha_bwd_hdim*, no dropout), which the launcher picks by the device's
 * opt-in shared memory per block (144 KB and more on sm80 and sm90, 99 KB
 * on sm86/sm89): 128 x 128 at head dim 32; at 64, 128 x 128 (64 x 128
 * below 144 KB); 64 x 128 at 96; at 128, 64 x 128 (64 x 64 below); 64 x 64
 * at 160 and 192; at 256, 64 x 64 (64 x 32 below). Eight warps. Br counts
 * query rows, Bc keys (the CTA's outer block). GPUs FA2 does not target
 * take the sm80 tiles. */
static void fa2_bwd_tile(int64_t d, bool big_smem, int *br, int *bc, int *warps)
{
    *warps = 8;
    if (d <= 32) {
        *br = 128;
        *bc = 128;
    } else if (d <= 64) {
        *br = big_smem ? 128 : 64;
        *bc = 128;
    } else if (d <= 96) {
        *br = 64;
        *bc = 128;
    } else if (d <= 128) {
        *br = 64;
        *bc = big_smem ? 128 : 64;
    } else if (d <= 192) {
        *br = 64;
        *bc = 64;
    } else {
        *br = 64;
        *bc = big_smem ? 64 : 32;
    }
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

/* FlashAttention-4's sm90 tiles (flash_attn/cute/interface.py,
 * _tile_size_fwd_sm90 and _tile_size_bwd_sm90: FA3's, "adjusted for the
 * Python kernel's different register/smem tradeoffs"): forward 192 x 128
 * at head dim 64, 192 x 144 at 96 (causal or local: 128 keys), 128 x 128
 * at 128, 128 x 128 at 192 with d_v <= 128 (else 112; local 96) and
 * 128 x 80 at 256 (local 64); backward 128 x 128 at 64, 64 x 128 at 96,
 * 64/80 x 128 at 128 (causal or local: 64), 64 x 96 at 192 and, at 256,
 * 64 x 48 with two Q stages (flash-attention PR #2888, merged 2026-09-14:
 * "moved hdim 256 to a 2-stage 64x48 config (302 -> 373 TFLOP/s)"; the
 * single-staged 64 x 64 before it waited for each step's Q and dO). A
 * causal sliding window is its "local" (_resolve_causal_local_window). */
static void fa4_sm90_tile(int64_t d, int64_t dv, bool causal, bool local, bool bwd, int *br,
                          int *bc)
{
    if (bwd) {
        *br = d <= 64 ? 128 : d <= 96 ? 64 : d <= 128 ? (causal || local ? 64 : 80) : 64;
        *bc = d <= 128 ? 128 : d <= 192 ? 96 : 48;
        return;
    }
    *br = d <= 96 ? 192 : 128;
    if (d > 64 && d <= 96)
        *bc = causal || local ? 128 : 144;
    else if (d <= 128)
        *bc = 128;
    else if (d <= 192)
        *bc = local ? 96 : dv <= 128 ? 128 : 112;
    else
        *bc = local ? 64 : 80;
}

/* The head dims a kernel instantiates: FA2 every multiple of 32 up to 192,
 * 256 above (flash_api.cpp: head_size <= 192 ? round_multiple(head_size,
 * 32) : 256), and one head dim for Q, K and V (V padded to it); FA3 and
 * FA4 64, 96, 128, 192 and 256 for Q/K and V separately. */
static void kernel_head_dims(struct fused_kernel *k, int64_t dqk, int64_t dvo, bool fa2)
{
    if (fa2) {
        int64_t d = dqk > dvo ? dqk : dvo;

        d = d <= 192 ? round_up(d, 32) : 256;

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
        fa2_bwd_tile(k->dqk,
                     !nvidia_ampere_or_later(gpu) ||
                         gpu->smem_per_block_max_bytes >= INT64_C(144) * 1024,
                     &k->br, &k->bc, &warps);
    else
        fa2_fwd_tile(k->dqk, masked, is_sm8x(gpu),
                     !nvidia_ampere_or_later(gpu) ||
                         (gpu->smem_per_block_max_bytes >= INT64_C(2) * 256 * (128 + 2 * 64) &&
                          gpu->smem_per_sm_bytes < INT64_C(4) * 256 * (64 + 2 * 64)),
                     &k->br, &k->bc, &warps);
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
    case TC_ARCH_PASCAL:
    case TC_ARCH_VOLTA:
    case TC_ARCH_TURING:
        k->eff = q->backward ? FA2_OLD_NVIDIA_BWD : FA2_OLD_NVIDIA_FWD;
        break;
    default:
        k->eff = q->backward ? FA2_CDNA_BWD : FA2_CDNA_FWD;
        break;
    }
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
    /* FA2's backward double-buffers the Q and dO tiles of its query steps
     * (the next step's loads run under this one's GEMMs) only where the
     * device's opt-in shared memory per block holds both copies
     * (flash_bwd_launch_template.h, the No_double_buffer argument of
     * Flash_bwd_kernel_traits): head dims 160 and 192 from 116 and 136 KB
     * (not sm86/sm89), 256 from 176 KB, so not on the A100's 163 ("A100,
     * we don't do double buffering to save smem"). Single-buffered, each
     * step waits for its Q and dO tiles at the SM's L2 rate, with no
     * second CTA on the SM to cover the wait (one fits, as for the cuDNN
     * frontend's sm80 backward at 256 below). */
    if (impl == TC_ATTN_FLASH2 && q->backward && nvidia_ampere_or_later(gpu)) {
        int64_t need = INT64_C(1024) * (k->dqk > 192 ? 176 : k->dqk > 160 ? 136 : 116);

        if (k->dqk > 128 && gpu->smem_per_block_max_bytes < need)
            k->iter_l2_bytes = (double)k->br * (double)(k->dqk + k->dvo) * tc_dtype_bytes(q->dtype);
    }
    /* FA2's forward reads Q from shared memory at every key tile (its sm80
     * kernel traits set Is_Q_in_regs false) */
    if (!q->backward && (gpu->arch == TC_ARCH_AMPERE || gpu->arch == TC_ARCH_ADA))
        k->smem_bytes = sm80_fwd_smem_bytes(k->br, k->bc, k->dqk, k->dvo, warps, false,
                                            tc_dtype_bytes(q->dtype));
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

/* A kernel's efficiencies for q's pass: the backward's, else the fp8
 * forward's for fp8 inputs, else the 16-bit forward's. */
static struct fused_eff pass_eff(const struct tc_attention_query *q, struct fused_eff fwd,
                                 struct fused_eff fwd_fp8, struct fused_eff bwd)
{
    return q->backward ? bwd : q->dtype == TC_DTYPE_FP8 ? fwd_fp8 : fwd;
}

/* The wgmma class on Hopper: FlashAttention-3, FA4's sm90 path and cuDNN
 * (whose tiles are not published: FA3's are used). FA3's causal and local
 * forward use its SingleTileLPTScheduler, longest CTAs first; so does
 * FA4's (flash_fwd_sm90.py, lpt), and cuDNN's is taken to. */
static void hopper_kernel(const struct tc_attention_query *q, enum tc_attn_impl impl,
                          struct fused_kernel *k)
{
    k->impl = impl;
    kernel_head_dims(k, q->head_dim, q->head_dim_vo ? q->head_dim_vo : q->head_dim, false);
    fa3_tile(k->dqk, q->causal, q->backward, &k->br, &k->bc, &k->threads);
    if (impl == TC_ATTN_FLASH4) {
        fa4_sm90_tile(k->dqk, k->dvo, q->causal && !q->window, q->window > 0, q->backward, &k->br,
                      &k->bc);
        if (!q->backward)
            k->threads = (k->br / 64 + 1) * 128;
    }
    k->eff = impl == TC_ATTN_CUDNN
                 ? pass_eff(q, CUDNN_HOPPER_FWD, CUDNN_HOPPER_FWD_FP8, CUDNN_HOPPER_BWD)
                 : pass_eff(q, FA3_HOPPER_FWD, FA3_HOPPER_FWD_FP8, FA3_HOPPER_BWD);
    k->slow = 1;
    k->order = ORDER_LPT;
    /* FA3's persistent forward lets the producer warp load the next tile's
     * Q during this one's loop; FA4's sm90 forward is not persistent
     * (flash_fwd_sm90.py: SingleTileScheduler / SingleTileLPTScheduler with
     * is_persistent=False, one CTA an SM at 160 or 240 MMA registers a
     * thread), so each CTA waits for its own Q. Its backward is not
     * persistent either (flash_bwd_sm90.py loads K and V with a CTA's first
     * Q tile), but that load stays hidden here: charging it takes the H200
     * FA4 backward's one-model held-out MAPE from 14.5 to 15.8 % (its
     * analytical MAPE from 13.8 to 12.8 %) */
    k->prefetch = impl != TC_ATTN_FLASH4 || q->backward;
    k->stage_rows = 0;
    k->pack_gqa = impl != TC_ATTN_CUDNN;
    /* FA4 packs a KV head's query heads into its tiles whenever there are
     * several (flash_attn/cute/interface.py, _flash_attn_fwd: "if pack_gqa
     * is None: pack_gqa = qhead_per_kvhead > 1"; only sm100 drops it, where
     * 128 rows do not divide into whole heads) */
    k->pack_gqa_always = impl == TC_ATTN_FLASH4;
    k->pack_decode = impl == TC_ATTN_CUDNN;
    k->split_one_query = impl == TC_ATTN_CUDNN;
    k->fa2_split = false;
    k->window_skip = true;
    if (impl == TC_ATTN_FLASH4 && q->backward)
        k->dq_red_gbps = FA4_SM90_DQ_RED_GBPS;
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

/* The share of a forward's exps FlashAttention-4 computes with its
 * polynomial on sm100 (flash_attn/cute/flash_fwd_sm100.py, _TUNING_CONFIG,
 * and softmax.py, apply_exp2_convert). A thread's row of 128 scores is
 * four fragments of 32, taken in pairs k = 0, 2, .., 30. A pair is
 * emulated when k % freq >= freq - res, in fragments start .. 2 (the last
 * stays on the SFUs). The table: head dim 128, freq 10 without a mask and
 * 16 with one, start 1; 192, 16 (start 0) and 32 (start 1); 256, freq 14,
 * res 6, start 0. Head dims up to 128 that the table lacks take the
 * defaults, freq 16, res 4, start 1; others above 128 emulate nothing.
 * sm_103 emulates nothing ("SM103 has fast native exp2, so set freq=0
 * there"). Head dim 128 without a mask so emulates 6 of 16 pairs in 2
 * of 4 fragments, 18.75 %; the FA4 blog's "half" was an early version. */
static double fa4_sm100_exp_emulated(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                                     int64_t dqk)
{
    bool masked = q->causal || q->window;
    int freq = 16, res = 4, start = 1, pairs = 0;

    if (fast_native_exp2(gpu))
        return 0;
    if (dqk == 128) {
        freq = masked ? 16 : 10;
    } else if (dqk == 192) {
        freq = masked ? 32 : 16;
        start = masked ? 1 : 0;
    } else if (dqk == 256) {
        freq = 14;
        res = 6;
        start = 0;
    } else if (dqk > 128) {
        return 0;
    }
    for (int kk = 0; kk < 32; kk += 2)
        if (kk % freq >= freq - res)
            pairs++;
    return pairs / 16.0 * (3 - start) / 4.0;
}

/* FlashAttention-4 on Blackwell (flash_attn/cute, flash_fwd_sm100.py): a
 * CTA ping-pongs two 128-row query tiles (256 rows) over 128-key tiles;
 * the backward uses 128 x 128 tiles in 2-CTA MMA mode. cuDNN's Blackwell
 * engines take the same tiles at the same rate (above).
 *
 * A forward CTA whose rows fill one 128-row stage: FA4 launches one stage
 * (interface.py, _flash_attn_fwd: "q_stage = 2 if seqlen_q_packgqa >
 * tile_m else 1"). cuDNN's prefill kernel always runs both: the frontend's
 * port of it (kernels/sm100/prefill_d128_f16.py, "the C++ SM100 reference
 * layout") gives each sub-tile its own softmax warpgroup over the whole key
 * loop, and its split-KV notes count the waste ("cga1 halves ... the wasted
 * MMA work at small S_q (a tile covers 256 Q rows, not 512)"). Its
 * published 8- and 16-query decodes on B200 take the same time at either
 * length, 1.7 us a 128-key tile of one (batch, head) CTA: the time of 256
 * rows, not 128. A single query is cuDNN's decode kernel, one 128-row tile
 * of packed heads (the time its published B200 decodes follow; the frontend
 * added its like, sm100/decode_d128_f16.py, TILES_Q = 1). */
static void blackwell_kernel(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                             enum tc_attn_impl impl, struct fused_kernel *k)
{
    k->impl = impl;
    kernel_head_dims(k, q->head_dim, q->head_dim_vo ? q->head_dim_vo : q->head_dim, false);
    k->br = q->backward ? 128 : 256;
    k->bc = 128;
    k->stage_rows = q->backward || impl != TC_ATTN_FLASH4 ? 0 : 128;
    if (impl == TC_ATTN_CUDNN && !q->backward && q->seq_q == 1)
        k->br = 128;
    k->threads = q->backward ? 384 : 512;
    k->eff = q->backward ? FA4_BLACKWELL_BWD : FA4_BLACKWELL_FWD;
    k->exp_emulated = q->backward ? 0 : fa4_sm100_exp_emulated(gpu, q, k->dqk);
    k->slow = 1;
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
    k->smem_bytes =
        sm80_fwd_smem_bytes(k->br, k->bc, k->dqk, k->dvo, 4, false, tc_dtype_bytes(q->dtype));
    return TC_OK;
}

/* The cuDNN frontend's open-source ("FROST") sm80 backward (python/cudnn/
 * sdpa/bwd/kernels/sm80/bprop_f16.py and its compile(), config_sm80.py,
 * prepared_host.py): a CTA
 * of eight warps owns 64 keys and loops over 64-row query tiles (128 at
 * head dim 64, GPTOSS_CFG); its dense MHA head dim 64 kernel
 * (bprop_d64_f16.py: "MHA (no GQA), dense (no mask)") owns 128 keys over
 * 64 rows. The per-step work is FA2's five GEMMs on mma.sync, at the
 * shared pipeline's own stated rate (FROST_AMPERE_BWD, with FA2's
 * wide-head factor above d_qk 128); the head dim 64 kernel keeps FA2's
 * efficiencies. The mask and the sequence bounds are
 * compile-time branches of the step (mask_flags, GATE_Q, GATE_KV), so
 * under a mask, or with a sequence that is not a whole number of tiles,
 * every tile pays for them. What the source adds: each step adds dQ into an fp32
 * buffer with atomics through L2, staged through shared memory for coalescing up to d_qk 128 and
 * scattered above (eight 32-byte sectors a request instead of four: "halves the dQ atomic L2
 * traffic", +18 % at d 128); from d_qk 256 Q and dO are single-buffered ("load-wait-compute"), so
 * their reload is waited for too, with no second CTA on the SM to cover
 * the waits (255 registers a thread). That traffic is charged at the SM's L2 rate, serial with the
 * step. GQA writes dK and dV per query head and reduces them in a
 * separate kernel. The causal default schedules the longest key blocks
 * first (SCHED_LPT_L2). */
static int frost_sm80_bwd_kernel(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                                 struct fused_kernel *k)
{
    double e = tc_dtype_bytes(q->dtype), scatter;

    fa2_kernel(gpu, q, TC_ATTN_CUDNN, k);
    kernel_head_dims(k, q->head_dim, q->head_dim_vo ? q->head_dim_vo : q->head_dim, false);
    scatter = k->dqk <= 128 ? 1.0 : 2.0; /* L2 sectors a dQ byte costs, against staged */
    if (k->dvo > k->dqk)
        return refuse(gpu, TC_ATTN_CUDNN_OSS,
                      "its sm80 backward splits the work between two warp groups by head dim "
                      "and needs the Q/K head dim at least the V head dim");
    k->threads = 256;
    k->order = q->causal ? ORDER_LPT : ORDER_GRID;
    if (k->dqk <= 64 && !q->causal && !q->window && !(q->kv_heads && q->kv_heads != q->heads)) {
        /* bprop_d64_f16.py: dense MHA at head dim 64 only */
        k->br = 64;
        k->bc = 128;
    } else {
        /* the shared pipeline (bprop_f16.py, config_sm80.py): 64 keys a
         * CTA; 128 query rows at head dim 64 (GPTOSS_CFG), else 64 */
        k->br = k->dqk <= 64 ? 128 : 64;
        k->bc = 64;
        k->eff = FROST_AMPERE_BWD;
        k->mask_every_tile = true;
    }
    if (q->deterministic) {
        double clk = gpu->clock_tensor_mhz > 0 ? gpu->clock_tensor_mhz : H200_TENSOR_MHZ;

        /* TemplateParams.deterministic (kernels/bprop_f16_sm80.py): a CTA
         * spins on a semaphore per (head, query tile) until the count is
         * its key tile, adds its dQ and releases before its next step; the
         * 3-D grid is forced (SCHED_DEFAULT: LPT would break the order) */
        k->relay = RELAY_INLINE;
        k->order = ORDER_GRID;
        /* and its dQ atomics must have landed before it releases the
         * semaphore: the step waits for them at an SM's reduction rate, the
         * one measured on sm90 (FA4_SM90_DQ_RED_GBPS, an H200 at its 1830
         * MHz) taken as a latency bound, so in proportion to the clock;
         * scattered above d_qk 128, twice the sectors a byte */
        k->dq_red_gbps = FA4_SM90_DQ_RED_GBPS * clk / H200_TENSOR_MHZ / scatter;
    }
    k->iter_l2_bytes = (double)k->br * (double)k->dqk * 4.0 * scatter +
                       (k->dqk >= 256 ? (double)k->br * (double)(k->dqk + k->dvo) * e : 0.0);
    k->dkv_per_qhead = true;
    return TC_OK;
}

/* The cuDNN frontend's open-source sm80 forward (python/cudnn/sdpa/fwd/
 * config_sm80.py, kernels/prefill_f16_sm80.py, prefill_d256_f16_sm80.py):
 * 128 x 64 tiles in every flavour, eight warps (four at head dim 64), the
 * Q/K and V head dims instantiated apart (its dsv3 flavour runs 192/128
 * without padding V to 192, which FA2 does). FA2's efficiencies are
 * taken; its llama flavour (the head dim 128 envelope) "matches Phase-3
 * baseline of ~97 % FA-2.8.3 at SQ=8K", so its times are FA2's over 0.97
 * there. Causal keeps the plain grid (the longest-first order is "a
 * driver-side override, not pinned here"). */
#define FROST_SM80_LLAMA_OF_FA2 0.97
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
    /* "Q regs-resident", "P fragment lives in regs only" (prefill_f16_sm80.py) */
    k->smem_bytes = sm80_fwd_smem_bytes(k->br, k->bc, k->dqk, k->dvo, k->threads / 32, true,
                                        tc_dtype_bytes(q->dtype));
    /* its TemplateParams hold no split-KV and no GQA-packing axis (the
     * grid is "its plain 3-D grid"), and the cuDNN frontend's published
     * attention_inference plans name it sdpa_fwd_prefill_sm80[PACK_GQA=0;
     * SPLIT_KV=1] for 8- and 16-query decode shapes: a short query block
     * against a long cache runs b x h CTAs over the whole cache */
    k->plain_grid = true;
    if (k->dqk > 64 && k->dqk <= 128)
        k->slow = 1.0 / FROST_SM80_LLAMA_OF_FA2;
    return TC_OK;
}

/* The cuDNN frontend's open-source sm100 forward (python/cudnn/sdpa/fwd/
 * kernels/sm100/prefill_*_f16.py, config_sm100.py, heuristics.py): a
 * Blackwell kernel of FA4's kind (tcgen05 MMAs into tensor memory, 128 x 128
 * tiles, one or two CTAs a cluster), so FA4's tiles and efficiencies are
 * taken. Unlike cuDNN's closed engines it packs the query heads of a KV head
 * into its tiles at every query length and splits the keys by its own cost
 * model, whatever the query length: the plans the frontend's published
 * attention_inference results name on B200 are all sdpa_fwd_prefill_sm100
 * [PACK_GQA=1; SPLIT_KV=1..128; TILE_CGA_M=1; TILE_M=128; TILE_N=128]
 * (decode_sweep and prefill_sweep, 2026-09-18): one CTA a 256-row tile,
 * both 128-row sub-tiles computed at every query length, a single query
 * included (blackwell_kernel). */
static void frost_sm100_fwd_kernel(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                                   struct fused_kernel *k)
{
    blackwell_kernel(gpu, q, TC_ATTN_CUDNN_OSS, k); /* packs, splits as FA's kernels do */
    k->pack_gqa_always = true;
    k->frost_split = true;
}

/* cuDNN's own (closed) sm80 forward engines, as their generated kernels
 * name their tiles in public profiler traces (cudnn_generated_fort_native_
 * sdpa_sm80_flash_fprop_wmma_f16_knob_<n>_<rows>x<keys>x<head dim>_<warps
 * along rows>x1x1): knob_6_128x64x64_4x1x1 at head dim 64, and
 * knob_3_64x64x128_4x1x1 and knob_3_64x64x256_4x1x1 at 128 and 256, four
 * warps along the query rows in each. Above head dim 64 a warp so holds
 * 16 query rows, as in FA2's split-KV kernel, and reads the whole K and V
 * tile for them: twice the shared-memory bytes a score element of FA2's
 * 128-row tiles moves. Q is staged in shared memory (40,960 bytes at head
 * dim 128, 2.5 times a 64 x 128 tile, in a published Nsight Compute
 * profile of the 128 kernel). Head dims the traces do not name (192/128)
 * are taken as the 64-row kind above 64. The kernels of short query
 * blocks (knob_2_64x32x128, knob_2_16x128x128_1x4x1) are not modelled. */
static void cudnn_sm80_fwd_kernel(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                                  struct fused_kernel *k)
{
    fa2_kernel(gpu, q, TC_ATTN_CUDNN, k);
    k->br = k->dqk <= 64 ? 128 : 64;
    k->bc = 64;
    k->threads = 4 * 32;
    k->smem_bytes =
        sm80_fwd_smem_bytes(k->br, k->bc, k->dqk, k->dvo, 4, false, tc_dtype_bytes(q->dtype));
}

/* cuDNN's fp8 engines on sm90 are fast at head dims 128 and 256 only: the
 * backward runs no other (sdpa_fp8_bwd.h), the FA3 paper's cuDNN fp8
 * forward bars reach 1005 TFLOP/s at 128 and 1139 at 256 against 595 and
 * 581 in bf16, and cuDNN 9.27's fp8 forward on the H200 takes 0.64-0.79x
 * the bf16 time at 128 (21 pairs) but 0.90-1.05x at 192/128 (30 pairs) and
 * 1.40-1.45x at 64 under a 128-key window (5 pairs; the cuDNN frontend's
 * attention_training rows of the development file). Elsewhere the fp8
 * forward is timed as the bf16 engine: its efficiencies at the 16-bit
 * rate, its bytes in fp8. */
static bool cudnn_hopper_fp8_fwd_16bit(const struct tc_attention_query *q,
                                       const struct fused_kernel *k)
{
    return q->dtype == TC_DTYPE_FP8 && !q->backward && k->dqk != 128 && k->dqk != 256;
}

/* cuDNN's fp8 backward on sm90 runs its five GEMMs on 8-bit operands
 * (sdpa_fp8_bwd.h: P and dS are scaled into fp8, and bmm_S_T_dO, bmm_dP_K
 * and bmm_dP_T_Q reduce over the rows of dO, K and Q, whose head dim is the
 * contiguous one; its MXFP8 path asks for dO_T, K_T and Q_T as inputs of
 * their own). wgmma reads 8-bit operands from shared memory K-major only
 * (PTX ISA, wgmma.mma_async: the transpose qualifiers take .f16 and .bf16
 * alone), so each query step transposes its dO and Q tiles in shared
 * memory, and each CTA its K once. FA3's fp8 forward does the same to V at
 * each key step (FA3 paper, section 3.3), and cuDNN's fp8 forward pays it
 * at eta 0.68 against the 16-bit 0.91 (CUDNN_HOPPER_FWD_FP8,
 * CUDNN_HOPPER_FWD): that whole difference is taken as the price of the
 * transposed bytes. Per MMA FLOP the forward transposes d_vo / (2 Br
 * (d_qk + d_vo)) elements (a Bc x d_vo tile of V a Br x Bc step) and the
 * backward (d_qk + d_vo) / (2 Bc (3 d_qk + 2 d_vo)) (a Br-row tile of Q and
 * one of dO a step, over its five GEMMs). At head dim 128 (the only one it
 * runs) with FA3's 128-row forward and 128-key backward tiles that is 0.8
 * of the forward's share, and the bf16 backward's 0.69 becomes 0.57. */
static double cudnn_hopper_fp8_bwd_eta(const struct fused_kernel *k)
{
    int fwd_br, fwd_bc, fwd_threads;
    double dqk = (double)k->dqk, dvo = (double)k->dvo;

    fa3_tile(k->dqk, false, false, &fwd_br, &fwd_bc, &fwd_threads);
    double fwd_share = dvo / (2.0 * fwd_br * (dqk + dvo));
    double bwd_share = (dqk + dvo) / (2.0 * k->bc * (3.0 * dqk + 2.0 * dvo));
    double fwd_extra = 1.0 / CUDNN_HOPPER_FWD_FP8.eta - 1.0 / CUDNN_HOPPER_FWD.eta;

    return 1.0 / (1.0 / CUDNN_HOPPER_BWD.eta + bwd_share / fwd_share * fwd_extra);
}

/* Which kernel a query runs, or why it cannot run. FLASH is the best the
 * architecture's libraries offer: FA2 on Ampere and Ada, FA3 on Hopper
 * (cuDNN for an fp8 backward, which FA3 lacks), FA4 on Blackwell, and the
 * generic FA2-class model elsewhere, for any dtype the GPU has. */
int tc_fused_kernel_resolve(const struct tc_gpu *gpu, const struct tc_attention_query *q,
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
    /* the cuDNN frontend's open-source engines: their sm80 kernels and
     * their sm100 forward are modelled from their source; elsewhere they are
     * modelled as cuDNN's engines; their measured rows calibrate them apart from cuDNN's
     * (attention.c) */
    if (impl == TC_ATTN_CUDNN_OSS && half_dtype(q->dtype) &&
        (gpu->arch == TC_ARCH_AMPERE || gpu->arch == TC_ARCH_ADA))
        return q->backward ? frost_sm80_bwd_kernel(gpu, q, k) : frost_sm80_fwd_kernel(gpu, q, k);
    if (impl == TC_ATTN_CUDNN_OSS && half_dtype(q->dtype) && gpu->arch == TC_ARCH_BLACKWELL &&
        !q->backward) {
        frost_sm100_fwd_kernel(gpu, q, k);
        return TC_OK;
    }
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
            blackwell_kernel(gpu, q, impl, k);
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
        if (fp8 && q->backward && gpu->arch == TC_ARCH_HOPPER && (q->head_dim != 128 || dvo != 128))
            /* the cuDNN frontend's SDPAFP8BackwardNode::pre_validate_node
             * (include/cudnn_frontend/node/sdpa_fp8_bwd.h): below sm100
             * "hidden_dim shoud be equal to 128" for Q/K and V alike */
            return refuse(gpu, impl,
                          "cuDNN's fp8 backward on Hopper runs head dim 128 only (Q/K and V); "
                          "192/128 and the others need sm100");
        if (gpu->arch == TC_ARCH_HOPPER) {
            hopper_kernel(q, impl, k);
            /* cuDNN 9.27's fp8 backward on sm90 computes every tile of a
             * masked launch, and its deterministic order is its only one:
             * on the H200 its causal rows take 1.00-1.06x the time of the
             * same shapes unmasked (5 pairs, 2k-32k; bf16: 0.51-0.65x) and
             * its deterministic rows 0.99-1.02x the others (16 pairs; bf16
             * up to 9x), in the cuDNN frontend's attention_training results
             * (the development file). No source names the kernel; its
             * window is taken as its causal mask is. */
            k->unskipped_bwd = fp8 && q->backward;
            if (fp8 && q->backward)
                k->eff.eta = cudnn_hopper_fp8_bwd_eta(k);
            if (cudnn_hopper_fp8_fwd_16bit(q, k)) {
                k->eff = CUDNN_HOPPER_FWD;
                k->mma_16bit = true;
            }
        } else if (gpu->arch == TC_ARCH_BLACKWELL)
            blackwell_kernel(gpu, q, impl, k);
        else if (!q->backward)
            cudnn_sm80_fwd_kernel(gpu, q, k);
        else
            fa2_kernel(gpu, q, impl, k); /* sm80/sm89 backward: FA2-class tiles assumed */
        return TC_OK;
    default:
        return tc_error(TC_ERR_INVALID, "attention: %d is not a fused kernel", (int)impl);
    }
}

/* The share of the SXM4's SM clock a GA100 (sm_80) board holds under a
 * tensor-core load, 1 elsewhere. */
static double power_limited_clock(const struct tc_gpu *gpu, enum tc_dtype dtype)
{
    if (gpu->arch != TC_ARCH_AMPERE || strcmp(gpu->compute_capability, "sm_80") != 0 ||
        dtype == TC_DTYPE_FP32 || dtype == TC_DTYPE_FP64 || !(gpu->tdp_w < GA100_SXM_TDP_W))
        return 1.0;
    return fmin(1.0, GA100_PCIE_TENSOR_SHARE * cbrt(gpu->tdp_w / GA100_PCIE_TDP_W));
}

/* The clock of the SM's SFUs and FP32 lanes (the tensor clock, else 1 GHz,
 * for a hand-made spec without one). */
double tc_fused_vector_clock_mhz(const struct tc_gpu *gpu)
{
    return gpu->clock_vector_mhz > 0   ? gpu->clock_vector_mhz
           : gpu->clock_tensor_mhz > 0 ? gpu->clock_tensor_mhz
                                       : 1000;
}

/* Per-element time of a tile on one SM, in us: the MMAs of the pass (two
 * GEMMs forward, five backward) at eta of the SM's tensor peak, the exp
 * and the softmax's FP32 work (plus the mask's in a masked tile) on the
 * SM's SFUs and FP32 lanes, overlapped as eff.x says, at the clock the
 * board's power limit holds. */
struct elem_cost tc_fused_elem_cost(const struct tc_gpu *gpu, enum tc_dtype dtype,
                                    const struct fused_kernel *k, bool bwd)
{
    int units = gpu->units > 0 ? gpu->units : 1;
    double flops = bwd ? 2.0 * (3.0 * (double)k->dqk + 2.0 * (double)k->dvo)
                       : 2.0 * ((double)k->dqk + (double)k->dvo);
    double sm_flops_per_us = gpu->peak_tflops[k->mma_16bit ? TC_DTYPE_BF16 : dtype] * 1e6 / units;
    double vclk = tc_fused_vector_clock_mhz(gpu);
    /* FP32 lanes of an SM: FFMA counts two FLOPs */
    double lanes = gpu->flops_per_clk_per_unit[TC_DTYPE_FP32] > 0
                       ? gpu->flops_per_clk_per_unit[TC_DTYPE_FP32] / 2
                       : 64;
    double eta = k->eff.eta * (k->fa2_split && k->dqk > 128 ? FA2_WIDE_HEAD : 1.0);
    double tclk = gpu->clock_tensor_mhz > 0 ? gpu->clock_tensor_mhz : 1000;
    double a = fmax(flops / (sm_flops_per_us * eta), k->smem_bytes / (SMEM_BYTES_PER_CLK * tclk));
    double mufu = fast_native_exp2(gpu) ? MUFU_PER_CLK_SM103 : MUFU_PER_CLK;
    double b = (1.0 - k->exp_emulated) / (mufu * vclk) +
               (SOFTMAX_ALU_OPS + k->exp_emulated * EXP_EMU_OPS) / (lanes * vclk);
    double bm = b + MASK_ALU_OPS / (lanes * vclk);
    /* the tensor cores, the SFUs and the FP32 lanes share the SM clock the
     * board's power limit holds */
    double slow = k->slow / power_limited_clock(gpu, dtype);
    struct elem_cost c = {
        .full_us = (fmax(a, b) + k->eff.x * fmin(a, b)) * slow,
        .masked_us = (fmax(a, bm) + k->eff.x * fmin(a, bm)) * slow,
    };

    return c;
}
