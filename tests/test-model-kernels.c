/* The model suite's third file: mechanisms of individual fused-attention
 * kernels taken from their sources (FlashAttention-4's sm80 forward and
 * sm90 backward, the cuDNN frontend's open-source sm80 kernels, and the
 * deterministic backwards of both; Hugging Face's eager attention;
 * PyTorch's LayerNorm), each
 * checked against the behaviour the source describes. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <string.h>

#include "test-model.h"
#include "tilecast/tilecast.h"

/* FlashAttention-4's sm80 forward runs its key loop down to block 0 under
 * a sliding window (no left-edge skip): a window costs what the causal
 * mask alone costs, where FlashAttention-2 skips the tiles left of it. Its
 * 128 x 64 tiles hold a d_v-wide fp32 accumulator in four warps: a V head
 * dim above 128 spills and is refused. */
START_TEST(test_fa4_sm80_forward)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH4,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 64,
                                   .seq_q = 16384,
                                   .head_dim = 64,
                                   .causal = true};
    struct tc_attention_prediction causal, win, fa2_win;
    const struct tc_gpu *a100 = gpu("a100-pcie-80gb");

    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &causal), TC_OK);
    ck_assert_int_eq(causal.block_m, 128);
    ck_assert_int_eq(causal.block_n, 64);
    q.window = 128;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &win), TC_OK);
    ck_assert_msg(win.time_us > 0.9 * causal.time_us && win.time_us <= causal.time_us * 1.001,
                  "FA4 sm80 window %.1f us, causal %.1f", win.time_us, causal.time_us);
    q.impl = TC_ATTN_FLASH2;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &fa2_win), TC_OK);
    ck_assert(fa2_win.time_us < causal.time_us / 16);
    /* the same GPU's Hopper sibling keeps the window skip (FA4's sm90 path) */
    q.impl = TC_ATTN_FLASH4;
    ck_assert_int_eq(tc_predict_attention(pred, gpu("h100-sxm5-80gb"), &q, &win), TC_OK);
    ck_assert_int_eq(tc_predict_attention(pred, gpu("h100-sxm5-80gb"),
                                          &(struct tc_attention_query){.impl = TC_ATTN_FLASH4,
                                                                       .dtype = TC_DTYPE_BF16,
                                                                       .batch = 2,
                                                                       .heads = 64,
                                                                       .seq_q = 16384,
                                                                       .head_dim = 64,
                                                                       .causal = true},
                                          &causal),
                     TC_OK);
    ck_assert(win.time_us < causal.time_us / 8);
    /* V head dim 256 spills; 192/128 (DeepSeek's) does not */
    q.window = 0;
    q.head_dim = 256;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &win), TC_ERR_UNSUPPORTED);
    ck_assert(strstr(tc_last_error(), "spills") != NULL);
    q.head_dim = 192;
    q.head_dim_vo = 128;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &win), TC_OK);
}
END_TEST

/* The cuDNN frontend's open-source sm80 backward: 64-key CTAs over 64-row
 * query tiles (128 keys at head dim 64), each step waiting for its fp32
 * dQ atomics (scattered, twice the sectors, above d_qk 128) and, from
 * d_qk 256, its Q/dO reload; GQA adds a per-query-head dK/dV reduction. */
START_TEST(test_frost_sm80_backward)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN_OSS,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 32,
                                   .seq_q = 8192,
                                   .head_dim = 128,
                                   .backward = true};
    struct tc_attention_prediction oss, cudnn, gqa, oss192, det, det192;
    const struct tc_gpu *a100 = gpu("a100-pcie-80gb");

    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &oss), TC_OK);
    ck_assert_int_eq(oss.block_m, 64);
    ck_assert_int_eq(oss.block_n, 64);
    q.impl = TC_ATTN_CUDNN;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &cudnn), TC_OK);
    /* the issue-bound loop at its own published rate, plus the waited-for
     * dQ traffic (measured 1.27-1.45x cuDNN's time at head dim 128) */
    ck_assert_msg(oss.time_us > 1.25 * cudnn.time_us, "oss %.1f us, cudnn %.1f", oss.time_us,
                  cudnn.time_us);
    /* scattered atomics above d_qk 128: a deterministic step waits for
     * 1.5x the dQ bytes at twice the sectors (measured: the relay adds
     * 3.7x as much a step at 192/128 as at 128) */
    q.impl = TC_ATTN_CUDNN_OSS;
    q.deterministic = true;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &det), TC_OK);
    q.head_dim = 192;
    q.head_dim_vo = 128;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &det192), TC_OK);
    q.deterministic = false;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &oss192), TC_OK);
    ck_assert_msg(det192.time_us - oss192.time_us > 2.2 * (det.time_us - oss.time_us),
                  "relay at 192: +%.1f us, at 128: +%.1f", det192.time_us - oss192.time_us,
                  det.time_us - oss.time_us);
    /* GQA: the same CTAs per query head, plus the reduction */
    q.head_dim = 128;
    q.head_dim_vo = 0;
    q.kv_heads = 4;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &gqa), TC_OK);
    ck_assert(gqa.time_us > oss.time_us);
    /* the bounds checks are compiled into every step: a sequence one short
     * of the tiles pays them on every tile (measured: 0.80-0.87x the
     * TFLOP/s of whole tiles at head dim 128) */
    q.kv_heads = 0;
    q.seq_q = 8191;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &gqa), TC_OK);
    ck_assert_msg(gqa.time_us > 1.03 * oss.time_us, "seq 8191 %.1f us, 8192 %.1f", gqa.time_us,
                  oss.time_us);
    q.seq_q = 8192;
    /* head dim 64: dense MHA runs its own kernel, 128 keys a CTA; under a
     * window, the shared pipeline's 64 keys over 128 query rows */
    q.head_dim = 64;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &oss), TC_OK);
    ck_assert_int_eq(oss.block_n, 128);
    q.causal = true;
    q.window = 128;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &gqa), TC_OK);
    ck_assert_int_eq(gqa.block_m, 128);
    ck_assert_int_eq(gqa.block_n, 64);
    q.causal = false;
    q.window = 0;
    /* a V head dim above the Q/K one is not served */
    q.head_dim_vo = 128;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &oss), TC_ERR_UNSUPPORTED);
    ck_assert(strstr(tc_last_error(), "cudnn_oss") != NULL);
}
END_TEST

/* The cuDNN frontend's open-source sm80 forward: 128 x 64 tiles at every
 * head dim, the V head dim not padded to the Q/K one (DeepSeek's 192/128),
 * which cuDNN's FA2-class model pads. */
START_TEST(test_frost_sm80_forward)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN_OSS,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 64,
                                   .seq_q = 8192,
                                   .head_dim = 64};
    struct tc_attention_prediction oss, cudnn;
    const struct tc_gpu *a100 = gpu("a100-pcie-80gb");

    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &oss), TC_OK);
    ck_assert_int_eq(oss.block_m, 128);
    ck_assert_int_eq(oss.block_n, 64);
    q.head_dim = 192;
    q.head_dim_vo = 128;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &oss), TC_OK);
    q.impl = TC_ATTN_CUDNN;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &cudnn), TC_OK);
    ck_assert_msg(oss.time_us < 0.9 * cudnn.time_us, "oss %.1f us, cudnn %.1f", oss.time_us,
                  cudnn.time_us);
    /* a V head dim above the Q/K one is no flavour of it */
    q.impl = TC_ATTN_CUDNN_OSS;
    q.head_dim = 128;
    q.head_dim_vo = 192;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &oss), TC_ERR_UNSUPPORTED);
}
END_TEST

/* FlashAttention-4's sm90 backward at head dim 256: 64 x 48 tiles, each
 * step bounded by the reduction of its 64 x 256 fp32 dQ tile; FA3's kernel
 * (64 x 80, no such bound) and FA4 at head dim 128, whose steps compute
 * longer than they reduce, are not. */
START_TEST(test_fa4_sm90_backward_d256)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH4,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 1,
                                   .heads = 32,
                                   .kv_heads = 2,
                                   .seq_q = 16384,
                                   .head_dim = 256,
                                   .causal = true,
                                   .backward = true};
    struct tc_attention_prediction fa4, fa3;
    const struct tc_gpu *h200 = gpu("h200-sxm-141gb");

    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa4), TC_OK);
    ck_assert_int_eq(fa4.block_m, 64);
    ck_assert_int_eq(fa4.block_n, 48);
    q.impl = TC_ATTN_FLASH3;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa3), TC_OK);
    ck_assert_int_eq(fa3.block_n, 80);
    ck_assert_msg(fa4.time_us > 1.2 * fa3.time_us, "FA4 %.1f us, FA3 %.1f", fa4.time_us,
                  fa3.time_us);
    /* a V head dim of 64 takes 30 % of the MMAs away, not the dQ bytes */
    {
        struct tc_attention_prediction narrow;

        q.impl = TC_ATTN_FLASH4;
        q.head_dim_vo = 64;
        ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &narrow), TC_OK);
        ck_assert_msg(narrow.time_us > 0.95 * fa4.time_us, "d_v 64 %.1f us, 256 %.1f",
                      narrow.time_us, fa4.time_us);
        q.impl = TC_ATTN_FLASH3;
        q.head_dim_vo = 0;
    }
    q.head_dim = 128;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa3), TC_OK);
    q.impl = TC_ATTN_FLASH4;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa4), TC_OK);
    ck_assert_double_eq_tol(fa4.time_us, fa3.time_us, fa3.time_us * 1e-9);
}
END_TEST

/* FA4's sm90 forward is not persistent (is_persistent=False in
 * flash_fwd_sm90.py): each CTA loads its own Q, which FA3's persistent
 * producer loads during the previous tile. A sliding window's CTAs run a
 * few key tiles each, so the load shows; the causal mask's long loops hide
 * it. At head dim 64 both take 192 x 128 tiles under a mask. */
START_TEST(test_fa4_sm90_not_persistent)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH4,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 64,
                                   .seq_q = 16384,
                                   .head_dim = 64,
                                   .causal = true,
                                   .window = 128};
    struct tc_attention_prediction fa4, fa3;
    const struct tc_gpu *h200 = gpu("h200-sxm-141gb");

    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa4), TC_OK);
    q.impl = TC_ATTN_FLASH3;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa3), TC_OK);
    ck_assert_int_eq(fa4.block_m, fa3.block_m);
    ck_assert_int_eq(fa4.block_n, fa3.block_n);
    ck_assert_msg(fa4.time_us > 1.05 * fa3.time_us, "window: FA4 %.1f us, FA3 %.1f", fa4.time_us,
                  fa3.time_us);
    q.window = 0;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa3), TC_OK);
    q.impl = TC_ATTN_FLASH4;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa4), TC_OK);
    ck_assert_msg(fa4.time_us > fa3.time_us && fa4.time_us < 1.01 * fa3.time_us,
                  "causal: FA4 %.1f us, FA3 %.1f", fa4.time_us, fa3.time_us);
}
END_TEST

/* FA4 packs a KV head's query heads into its forward tiles whenever there
 * are several (interface.py); FA3's heuristic packs only when that wastes
 * fewer rows of the last tile (1000 queries: 8 of 128-row tiles hold 97.7 %
 * rows unpacked, 63 hold 99.2 % packed, not below 0.9x). */
START_TEST(test_fa4_sm90_pack_gqa)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH4,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 64,
                                   .kv_heads = 8,
                                   .seq_q = 1000,
                                   .head_dim = 128,
                                   .causal = true};
    struct tc_attention_prediction fa4, fa3;
    const struct tc_gpu *h200 = gpu("h200-sxm-141gb");

    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa4), TC_OK);
    q.impl = TC_ATTN_FLASH3;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa3), TC_OK);
    ck_assert_int_eq(fa4.block_m, 128);
    ck_assert_int_eq(fa3.block_m, 128);
    ck_assert_int_eq(fa4.blocks, (int64_t)2 * 8 * 63);
    ck_assert_int_eq(fa3.blocks, (int64_t)2 * 64 * 8);
    /* no grouping, nothing to pack */
    q.impl = TC_ATTN_FLASH4;
    q.kv_heads = 0;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa4), TC_OK);
    ck_assert_int_eq(fa4.blocks, (int64_t)2 * 64 * 8);
}
END_TEST

/* FlashAttention-4's sm90 forward tiles are its own (interface.py,
 * _tile_size_fwd_sm90), not FA3's: 128 keys at head dim 128 without a
 * mask, where FA3 takes 176; 128 at 192/128 with and without the causal
 * mask (FA3: 112, 96), 96 under a window. */
START_TEST(test_fa4_sm90_forward_tiles)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH4,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 64,
                                   .seq_q = 8192,
                                   .head_dim = 128};
    struct tc_attention_prediction fa4, fa3;
    const struct tc_gpu *h200 = gpu("h200-sxm-141gb");

    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa4), TC_OK);
    q.impl = TC_ATTN_FLASH3;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa3), TC_OK);
    ck_assert_int_eq(fa4.block_m, 128);
    ck_assert_int_eq(fa4.block_n, 128);
    ck_assert_int_eq(fa3.block_n, 176);
    q.impl = TC_ATTN_FLASH4;
    q.head_dim = 192;
    q.head_dim_vo = 128;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa4), TC_OK);
    ck_assert_int_eq(fa4.block_n, 128);
    q.causal = true;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa4), TC_OK);
    ck_assert_int_eq(fa4.block_n, 128);
    q.window = 512;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa4), TC_OK);
    ck_assert_int_eq(fa4.block_n, 96);
    /* head dim 64: 192 x 128 in every case */
    q.window = 0;
    q.head_dim = q.head_dim_vo = 64;
    q.causal = false;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &fa4), TC_OK);
    ck_assert_int_eq(fa4.block_m, 192);
    ck_assert_int_eq(fa4.block_n, 128);
}
END_TEST

/* cuDNN's fp8 backward on Hopper takes head dim 128 alone, Q/K and V (the
 * frontend's sdpa_fp8_bwd.h refuses any other below sm100); the forward
 * and Blackwell's backward take the others. */
START_TEST(test_cudnn_fp8_backward_hopper_dims)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN,
                                   .dtype = TC_DTYPE_FP8,
                                   .batch = 2,
                                   .heads = 64,
                                   .kv_heads = 8,
                                   .seq_q = 4096,
                                   .head_dim = 128,
                                   .causal = true,
                                   .backward = true};
    struct tc_attention_prediction p;
    const struct tc_gpu *h200 = gpu("h200-sxm-141gb");
    static const int64_t refused[][2] = {{64, 64}, {192, 128}, {256, 256}, {128, 64}, {96, 96}};

    ck_assert_msg(tc_predict_attention(pred, h200, &q, &p) == TC_OK, "%s", tc_last_error());
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        q.head_dim = refused[i][0];
        q.head_dim_vo = refused[i][1];
        ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &p), TC_ERR_UNSUPPORTED);
        ck_assert(strstr(tc_last_error(), "head dim 128 only") != NULL);
        /* the default kernel takes cuDNN's fp8 backward on Hopper too */
        q.impl = TC_ATTN_FLASH;
        ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &p), TC_ERR_UNSUPPORTED);
        q.impl = TC_ATTN_CUDNN;
    }
    q.head_dim = 192;
    q.head_dim_vo = 128;
    q.backward = false;
    ck_assert_msg(tc_predict_attention(pred, h200, &q, &p) == TC_OK, "%s", tc_last_error());
    q.backward = true;
    ck_assert_msg(tc_predict_attention(pred, gpu("b200"), &q, &p) == TC_OK, "%s", tc_last_error());
}
END_TEST

/* cuDNN's fp8 backward on sm90 skips no masked tile and has one dQ order
 * (its measured causal and deterministic rows take the plain time): a
 * causal, a windowed or a deterministic launch is timed as the plain one,
 * where the bf16 backward halves under the mask and refuses the
 * deterministic order; on Blackwell the fp8 backward skips as bf16 does. */
START_TEST(test_cudnn_fp8_backward_hopper_unskipped)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN,
                                   .dtype = TC_DTYPE_FP8,
                                   .batch = 2,
                                   .heads = 64,
                                   .kv_heads = 8,
                                   .seq_q = 8192,
                                   .head_dim = 128,
                                   .backward = true};
    struct tc_attention_prediction plain, p;
    const struct tc_gpu *h200 = gpu("h200-sxm-141gb");

    ck_assert_msg(tc_predict_attention(pred, h200, &q, &plain) == TC_OK, "%s", tc_last_error());
    q.causal = true;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &p), TC_OK);
    ck_assert_double_eq_tol(p.time_us, plain.time_us, 1e-9 * plain.time_us);
    q.window = 128;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &p), TC_OK);
    ck_assert_double_eq_tol(p.time_us, plain.time_us, 1e-9 * plain.time_us);
    q.window = 0;
    q.deterministic = true;
    ck_assert_msg(tc_predict_attention(pred, h200, &q, &p) == TC_OK, "%s", tc_last_error());
    ck_assert_double_eq_tol(p.time_us, plain.time_us, 1e-9 * plain.time_us);
    /* bf16: the mask skips, and the deterministic order is not modelled */
    q.dtype = TC_DTYPE_BF16;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &p), TC_ERR_UNSUPPORTED);
    q.deterministic = false;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &p), TC_OK);
    q.causal = false;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &plain), TC_OK);
    ck_assert(p.time_us < 0.7 * plain.time_us);
    /* Blackwell's fp8 backward is another kernel: the mask skips there */
    q.dtype = TC_DTYPE_FP8;
    ck_assert_int_eq(tc_predict_attention(pred, gpu("b200"), &q, &plain), TC_OK);
    q.causal = true;
    ck_assert_int_eq(tc_predict_attention(pred, gpu("b200"), &q, &p), TC_OK);
    ck_assert(p.time_us < 0.7 * plain.time_us);
}
END_TEST

/* cuDNN's fp8 backward on sm90 transposes dO and Q at each query step
 * (wgmma takes 8-bit operands K-major only): it runs at less than twice
 * the bf16 backward's rate, by 0.8 of the forward's price per FLOP. */
START_TEST(test_cudnn_fp8_backward_hopper_transposes)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN,
                                   .batch = 1,
                                   .heads = 40,
                                   .kv_heads = 40,
                                   .seq_q = 32760,
                                   .head_dim = 128,
                                   .backward = true};
    struct tc_attention_prediction f8, b16;
    static const char *const ids[] = {"h100-sxm5-80gb", "h200-sxm-141gb"};

    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        q.dtype = TC_DTYPE_FP8;
        ck_assert_msg(tc_predict_attention(pred, gpu(ids[i]), &q, &f8) == TC_OK, "%s",
                      tc_last_error());
        q.dtype = TC_DTYPE_BF16;
        ck_assert_int_eq(tc_predict_attention(pred, gpu(ids[i]), &q, &b16), TC_OK);
        /* 1.47 with the transposes; 1.67 at the bf16 backward's eta */
        ck_assert_msg(b16.time_us > 1.35 * f8.time_us && b16.time_us < 1.55 * f8.time_us,
                      "%s: bf16 %.1f us, fp8 %.1f us", ids[i], b16.time_us, f8.time_us);
    }
}
END_TEST

/* cuDNN's fp8 forward on sm90 is fast at head dims 128 and 256 alone; at
 * 192/128 and 64 it takes the bf16 engine's rate. */
START_TEST(test_cudnn_fp8_forward_hopper_head_dims)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN,
                                   .batch = 2,
                                   .heads = 64,
                                   .kv_heads = 64,
                                   .seq_q = 8192,
                                   .causal = true};
    struct tc_attention_prediction f8, b16;
    const struct tc_gpu *h200 = gpu("h200-sxm-141gb");
    static const int64_t dims[][3] = {{128, 128, 1}, {256, 256, 1}, {192, 128, 0}, {64, 64, 0}};

    for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
        q.head_dim = dims[i][0];
        q.head_dim_vo = dims[i][1];
        q.dtype = TC_DTYPE_FP8;
        ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &f8), TC_OK);
        q.dtype = TC_DTYPE_BF16;
        ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &b16), TC_OK);
        if (dims[i][2])
            ck_assert_msg(f8.time_us < 0.8 * b16.time_us, "d %lld: fp8 %.1f us, bf16 %.1f",
                          (long long)q.head_dim, f8.time_us, b16.time_us);
        else
            ck_assert_msg(f8.time_us > 0.9 * b16.time_us && f8.time_us <= b16.time_us,
                          "d %lld: fp8 %.1f us, bf16 %.1f", (long long)q.head_dim, f8.time_us,
                          b16.time_us);
    }
}
END_TEST

/* The open engines' deterministic sm80 backward (bprop_f16_sm80.py): each
 * key-tile CTA spins on a semaphore per query tile until its turn, adds
 * its dQ and hands over before its next step, on the 3-D grid. Without a
 * mask that costs a hand-over a step; under the causal mask a head's
 * resident CTAs keep the pace of its first key tile (the longest), so the
 * causal launch takes the non-causal time; under a window each waits for
 * the one before it, a chain along the head. */
START_TEST(test_frost_sm80_deterministic)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN_OSS,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 32,
                                   .seq_q = 4096,
                                   .head_dim = 128,
                                   .backward = true};
    struct tc_attention_prediction plain, det, causal, causal_det, win, win_det;
    const struct tc_gpu *a100 = gpu("a100-pcie-80gb");

    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &plain), TC_OK);
    q.deterministic = true;
    ck_assert_msg(tc_predict_attention(pred, a100, &q, &det) == TC_OK, "%s", tc_last_error());
    ck_assert_msg(det.time_us > 1.05 * plain.time_us && det.time_us < 1.5 * plain.time_us,
                  "deterministic %.1f us, plain %.1f", det.time_us, plain.time_us);
    ck_assert_int_eq(det.blocks, plain.blocks); /* one CTA per key tile still */
    q.causal = true;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &causal_det), TC_OK);
    q.deterministic = false;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &causal), TC_OK);
    ck_assert_msg(causal_det.time_us > 0.95 * det.time_us &&
                      causal_det.time_us > 1.8 * causal.time_us,
                  "causal: deterministic %.1f us, plain %.1f", causal_det.time_us, causal.time_us);
    q.window = 128;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &win), TC_OK);
    q.deterministic = true;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &win_det), TC_OK);
    ck_assert_msg(win_det.time_us > 4 * win.time_us, "window: deterministic %.1f us, plain %.1f",
                  win_det.time_us, win.time_us);
}
END_TEST

/* FlashAttention-4's deterministic sm90 backward: a store warp orders the
 * dQ reductions (off the MMA warps' path), and its scheduler issues the
 * shortest key blocks first under the causal mask, where the plain one
 * issues the longest first. cuDNN's closed engines publish no mechanism
 * and stay refused. */
START_TEST(test_fa4_sm90_deterministic)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH4,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 32,
                                   .seq_q = 8192,
                                   .head_dim = 128,
                                   .backward = true};
    struct tc_attention_prediction plain, det;
    const struct tc_gpu *h200 = gpu("h200-sxm-141gb");

    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &plain), TC_OK);
    q.deterministic = true;
    ck_assert_msg(tc_predict_attention(pred, h200, &q, &det) == TC_OK, "%s", tc_last_error());
    ck_assert(det.time_us >= plain.time_us && det.time_us < 1.05 * plain.time_us);
    q.causal = true;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &det), TC_OK);
    q.deterministic = false;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &plain), TC_OK);
    ck_assert_msg(det.time_us > 1.01 * plain.time_us, "causal: deterministic %.1f us, plain %.1f",
                  det.time_us, plain.time_us);
    q.impl = TC_ATTN_CUDNN;
    q.deterministic = true;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &det), TC_ERR_UNSUPPORTED);
    ck_assert(strstr(tc_last_error(), "no public source") != NULL);
}
END_TEST

/* FlashAttention-2's split-KV forward on sm80 runs 64-row tiles in four
 * warps: each warp holds 16 query rows and reads the whole K and V tile
 * for them, twice the shared-memory reads an MMA of the 128-row kernel's
 * 32-row warps, which the SM's 128 bytes a clock do not keep up with at
 * head dim 128. A forced split of a compute-bound shape costs that, beyond
 * the combine kernel; the Hopper sibling's FA2 is not modelled so. */
START_TEST(test_fa2_sm80_split_smem)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH2,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 64,
                                   .seq_q = 8192,
                                   .head_dim = 128};
    struct tc_attention_prediction one, two;
    const struct tc_gpu *a100 = gpu("a100-pcie-80gb");

    q.kv_splits = 1;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &one), TC_OK);
    q.kv_splits = 2;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &two), TC_OK);
    ck_assert_int_eq(one.block_m, 128);
    ck_assert_int_eq(two.block_m, 64);
    ck_assert_msg(two.time_us > 1.12 * one.time_us, "split %.1f us, unsplit %.1f", two.time_us,
                  one.time_us);
    /* FA2 on Hopper keeps the tile model without the bound */
    ck_assert_int_eq(tc_predict_attention(pred, gpu("h100-sxm5-80gb"), &q, &two), TC_OK);
    q.kv_splits = 1;
    ck_assert_int_eq(tc_predict_attention(pred, gpu("h100-sxm5-80gb"), &q, &one), TC_OK);
    ck_assert_msg(two.time_us < 1.12 * one.time_us, "h100: split %.1f us, unsplit %.1f",
                  two.time_us, one.time_us);
}
END_TEST

/* FlashAttention-2 picks its tiles, and its backward its buffering, by the
 * device's shared memory (flash_fwd_ and flash_bwd_launch_template.h): at
 * head dim 256 the A100's 163 KB hold one copy of the Q and dO tiles, so
 * every query step waits for their reload, where the H100's 227 KB double-
 * buffer them; the 99 KB of sm86/sm89 take narrower tiles. */
START_TEST(test_fa2_tiles_by_smem)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH2,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 32,
                                   .seq_q = 8192,
                                   .head_dim = 192,
                                   .backward = true};
    struct tc_attention_prediction p192, p256;
    const char *ids[] = {"a100-pcie-80gb", "h100-sxm5-80gb"};

    for (int i = 0; i < 2; i++) {
        q.head_dim = 192;
        ck_assert_int_eq(tc_predict_attention(pred, gpu(ids[i]), &q, &p192), TC_OK);
        q.head_dim = 256;
        ck_assert_int_eq(tc_predict_attention(pred, gpu(ids[i]), &q, &p256), TC_OK);
        ck_assert_int_eq(p256.block_m, 64);
        ck_assert_int_eq(p256.block_n, 64);
        /* the FLOPs grow 4/3 from 192 to 256; the A100's waits add more */
        double r = p256.time_us / p192.time_us;
        if (i == 0)
            ck_assert_msg(r > 1.4, "a100: 256 / 192 = %.3f", r);
        else
            ck_assert_msg(r < 1.4, "h100: 256 / 192 = %.3f", r);
    }
    /* sm89 (L4, 99 KB): 64 x 32 at 256, 64 x 128 at 64 and 96 */
    ck_assert_int_eq(tc_predict_attention(pred, gpu("l4"), &q, &p256), TC_OK);
    ck_assert_int_eq(p256.block_n, 32);
    q.head_dim = 64;
    ck_assert_int_eq(tc_predict_attention(pred, gpu("l4"), &q, &p256), TC_OK);
    ck_assert_int_eq(p256.block_m, 64);
    ck_assert_int_eq(p256.block_n, 128);
    q.head_dim = 96;
    ck_assert_int_eq(tc_predict_attention(pred, gpu("l4"), &q, &p256), TC_OK);
    ck_assert_int_eq(p256.block_n, 128);
    /* a head dim above 192 runs the 256 kernel */
    q.head_dim = 224;
    ck_assert_int_eq(tc_predict_attention(pred, gpu("a100-pcie-80gb"), &q, &p192), TC_OK);
    q.head_dim = 256;
    ck_assert_int_eq(tc_predict_attention(pred, gpu("a100-pcie-80gb"), &q, &p256), TC_OK);
    ck_assert_msg(fabs(p192.time_us - p256.time_us) < 1e-9 * p256.time_us, "224: %.1f, 256: %.1f",
                  p192.time_us, p256.time_us);
    /* the forward at 256: 128 x 64 where a block takes 128 KB and an SM
     * has under 192 KB (the A100), else 64 x 64 (the H100, two CTAs an
     * SM); at 192, 128 x 64 on sm89 too */
    q.backward = false;
    ck_assert_int_eq(tc_predict_attention(pred, gpu("a100-pcie-80gb"), &q, &p256), TC_OK);
    ck_assert_int_eq(p256.block_m, 128);
    ck_assert_int_eq(p256.block_n, 64);
    ck_assert_int_eq(tc_predict_attention(pred, gpu("h100-sxm5-80gb"), &q, &p256), TC_OK);
    ck_assert_int_eq(p256.block_m, 64);
    ck_assert_int_eq(p256.block_n, 64);
    q.head_dim = 192;
    ck_assert_int_eq(tc_predict_attention(pred, gpu("l4"), &q, &p192), TC_OK);
    ck_assert_int_eq(p192.block_m, 128);
    ck_assert_int_eq(p192.block_n, 64);
}
END_TEST

/* cuDNN's own sm80 forward runs the tiles its generated kernels name:
 * 128 x 64 at head dim 64 and 64 x 64 above, four warps, so at head dim
 * 128 it is held by its shared-memory reads where FA2's 128-row kernel is
 * not; on Hopper cuDNN keeps the wgmma model. */
START_TEST(test_cudnn_sm80_forward_tiles)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 64,
                                   .seq_q = 8192,
                                   .head_dim = 64};
    struct tc_attention_prediction cudnn, fa2;
    const struct tc_gpu *a100 = gpu("a100-pcie-80gb");

    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &cudnn), TC_OK);
    ck_assert_int_eq(cudnn.block_m, 128);
    ck_assert_int_eq(cudnn.block_n, 64);
    q.head_dim = 128;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &cudnn), TC_OK);
    ck_assert_int_eq(cudnn.block_m, 64);
    ck_assert_int_eq(cudnn.block_n, 64);
    q.impl = TC_ATTN_FLASH2;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &fa2), TC_OK);
    ck_assert_msg(cudnn.time_us > 1.12 * fa2.time_us, "cudnn %.1f us, fa2 %.1f", cudnn.time_us,
                  fa2.time_us);
    q.head_dim = 256;
    q.impl = TC_ATTN_CUDNN;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &cudnn), TC_OK);
    ck_assert_int_eq(cudnn.block_m, 64);
    q.head_dim = 128;
    ck_assert_int_eq(tc_predict_attention(pred, gpu("h100-sxm5-80gb"), &q, &cudnn), TC_OK);
    ck_assert_int_eq(cudnn.block_m, 128);
}
END_TEST

/* Hugging Face's eager attention (attention: eager): the scale and the mask
 * are two kernels over the scores before the softmax, each reading and
 * writing them; the host dispatches both. GPT-2 Large's shape in fp32, b 4,
 * s 1024, 20 heads: 4 x 20 x 1024 x 1024 scores of 4 bytes. */
START_TEST(test_eager_attention_scores_kernels)
{
    struct tc_model_config c = layer_cfg(1280, 20, 1024, 4);
    struct tc_model_prediction *eager, *unfused;
    const struct tc_op_prediction *scale, *mask;
    double scores_bytes = 4.0 * 20 * 1024 * 1024 * 4;

    c.dtype = TC_DTYPE_FP32;
    c.layers = 36;
    ck_assert_int_eq(tc_model_config_set(&c, "attention", "eager"), TC_OK);
    ck_assert_int_eq(c.attention, TC_ATTN_UNFUSED);
    ck_assert(c.attention_eager);
    eager = predict("a100-pcie-40gb", &c);
    scale = find_op(eager, "scores_scale");
    mask = find_op(eager, "scores_mask");
    ck_assert(scale->in_layer && mask->in_layer);
    ck_assert_double_eq((double)scale->m, 2 * scores_bytes);
    ck_assert_double_eq((double)mask->m, 2 * scores_bytes);
    ck_assert_double_eq((double)find_op(eager, "softmax")->m, 2 * scores_bytes);

    c.attention_eager = false; /* Megatron's fused scale-mask-softmax */
    unfused = predict("a100-pcie-40gb", &c);
    for (size_t i = 0; i < unfused->n_ops; i++) {
        ck_assert_str_ne(unfused->ops[i].name, "scores_scale");
        ck_assert_str_ne(unfused->ops[i].name, "scores_mask");
    }
    ck_assert_double_eq_tol(eager->layer_time_us - unfused->layer_time_us,
                            scale->time_us + mask->time_us, 1e-9);
    ck_assert_double_eq_tol(eager->host_time_us - unfused->host_time_us, 36 * 2 * 28.0, 1e-6);
    tc_model_prediction_free(eager);
    tc_model_prediction_free(unfused);

    /* the eager modules' kernels with a fused attention are refused */
    c.attention = TC_ATTN_FLASH;
    c.attention_eager = true;
    unfused = NULL;
    ck_assert_int_eq(tc_predict_model(pred, gpu("a100-pcie-40gb"), &c, &unfused), TC_ERR_INVALID);
    ck_assert_ptr_null(unfused);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "attention_eager"));
}
END_TEST

/* Dropout of training mode: a kernel forward (reads the input, writes the
 * output and a bool mask) and one backward (reads the gradient and the
 * mask, writes the gradient), (2e + 1) bytes an element each way. GPT-2
 * Large's shape in fp32 (e = 4), b 4, s 1024, 20 heads: the attention
 * dropout over 4 x 20 x 1024 x 1024 probabilities, the two hidden ones over
 * 4 x 1024 x 1280 activations (Hugging Face's modules, attention: eager). */
static bool has_op(const struct tc_model_prediction *mp, const char *name)
{
    for (size_t i = 0; i < mp->n_ops; i++)
        if (strcmp(mp->ops[i].name, name) == 0)
            return true;
    return false;
}

START_TEST(test_training_dropout)
{
    struct tc_model_config c = layer_cfg(1280, 20, 1024, 4);
    struct tc_model_prediction *with, *without;
    double probs = 4.0 * 20 * 1024 * 1024, acts = 4.0 * 1024 * 1280;
    const struct tc_op_prediction *attn, *d1, *d2;

    c.dtype = TC_DTYPE_FP32;
    c.layers = 36;
    c.training = true;
    ck_assert_int_eq(tc_model_config_set(&c, "attention", "eager"), TC_OK);
    without = predict("v100-pcie-32gb", &c);
    ck_assert_int_eq(tc_model_config_set(&c, "attn_pdrop", "0.1"), TC_OK);
    ck_assert_int_eq(tc_model_config_set(&c, "resid_pdrop", "0.1"), TC_OK);
    ck_assert_double_eq(c.attention_dropout, 0.1);
    ck_assert_double_eq(c.dropout, 0.1);
    with = predict("v100-pcie-32gb", &c);
    attn = find_op(with, "attn_dropout");
    d1 = find_op(with, "dropout1");
    d2 = find_op(with, "dropout2");
    ck_assert(attn->in_layer && d1->in_layer && d2->in_layer);
    ck_assert_double_eq((double)attn->m, 2 * probs * 9);
    ck_assert_double_eq((double)d1->m, 2 * acts * 9);
    ck_assert_double_eq((double)d2->m, 2 * acts * 9);
    ck_assert_double_eq_tol(with->layer_time_us - without->layer_time_us,
                            attn->time_us + d1->time_us + d2->time_us, 1e-6);
    ck_assert_msg(attn->time_us > 10 * d1->time_us, "probabilities %.1f us, hidden %.1f us",
                  attn->time_us, d1->time_us);
    tc_model_prediction_free(with);

    /* a forward outside training mode drops nothing */
    c.training = false;
    with = predict("v100-pcie-32gb", &c);
    ck_assert(!has_op(with, "attn_dropout") && !has_op(with, "dropout1"));
    tc_model_prediction_free(with);

    /* Megatron-style layers fuse the hidden ones into the residual add;
     * its attention dropout is a kernel of its own after the softmax */
    c.training = true;
    c.attention_eager = false;
    with = predict("v100-pcie-32gb", &c);
    ck_assert(has_op(with, "attn_dropout"));
    ck_assert(!has_op(with, "dropout1") && !has_op(with, "dropout2"));
    tc_model_prediction_free(with);

    /* p = 0 runs no kernel (OPT's attention_dropout) */
    ck_assert_int_eq(tc_model_config_set(&c, "attention_dropout", "0"), TC_OK);
    with = predict("v100-pcie-32gb", &c);
    ck_assert(!has_op(with, "attn_dropout"));
    tc_model_prediction_free(with);
    tc_model_prediction_free(without);

    /* a probability, nothing else */
    ck_assert_int_eq(tc_model_config_set(&c, "dropout", "1"), TC_ERR_RANGE);
    ck_assert_int_eq(tc_model_config_set(&c, "hidden_dropout_prob", "-0.1"), TC_ERR_RANGE);
    ck_assert_int_eq(tc_model_config_set(&c, "dropout", "nan"), TC_ERR_PARSE);
    ck_assert_int_eq(tc_model_config_set(&c, "dropout", "0.1x"), TC_ERR_PARSE);
    ck_assert_double_eq(c.dropout, 0.1);
}
END_TEST

/* Hugging Face's gelu_new (GPT-2): eight eager kernels, 18 passes over the
 * ffn activations where the fused GeLU makes 2, and seven more dispatches
 * on the host a layer. GPT-2 Large in fp32, b 4, s 1024: 4 x 1024 x 5120
 * activations of 4 bytes. */
START_TEST(test_gelu_new_kernels)
{
    struct tc_model_config c = layer_cfg(1280, 20, 1024, 4);
    struct tc_model_prediction *fused, *eager;
    const struct tc_op_prediction *op;
    double ffn_bytes = 4.0 * 1024 * 5120 * 4;

    c.dtype = TC_DTYPE_FP32;
    c.layers = 36;
    fused = predict("a100-pcie-40gb", &c);
    ck_assert_int_eq(tc_model_config_set(&c, "activation", "gelu_new"), TC_OK);
    ck_assert(c.gelu_new && !c.swiglu);
    eager = predict("a100-pcie-40gb", &c);
    op = find_op(eager, "gelu_new");
    ck_assert_double_eq((double)op->m, 18 * ffn_bytes);
    ck_assert_double_eq((double)find_op(fused, "gelu")->m, 2 * ffn_bytes);
    /* one kernel's time at 80 % of the bandwidth, and seven launch floors */
    ck_assert_double_eq_tol(
        op->time_us,
        2.0 + 18 * ffn_bytes / (gpu("a100-pcie-40gb")->mem_bw_gbps * 1e3 * 0.8) + 7 * 2.0, 1e-6);
    ck_assert_double_eq_tol(eager->host_time_us - fused->host_time_us, 36 * 7 * 28.0, 1e-6);
    tc_model_prediction_free(fused);
    tc_model_prediction_free(eager);

    /* one activation at a time */
    ck_assert_int_eq(tc_model_config_set(&c, "activation", "swiglu"), TC_OK);
    ck_assert(!c.gelu_new);
    ck_assert_int_eq(tc_model_config_set(&c, "gelu_new", "true"), TC_OK);
    ck_assert_int_eq(tc_model_config_resolve(&c), TC_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "gelu_new"));
}
END_TEST

/* A GA100 board below the SXM4's 400 W sustains a tensor load at a lower
 * clock: the 300 W PCIe at 252.9 / 271.2 of the SXM4's rate (the published
 * maximum achievable matmul), a 250 W one by the cube-root law below
 * that. The same chip, boost and SMs otherwise: a compute-bound forward
 * takes 1 / 0.9325 and 1 / (0.9325 cbrt(250 / 300)) of the SXM4's time;
 * fp32, on the FFMA pipes, is left alone. */
START_TEST(test_ga100_power_limit)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH2,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 32,
                                   .seq_q = 8192,
                                   .head_dim = 128};
    struct tc_attention_prediction sxm, pcie;
    double r;

    ck_assert_int_eq(tc_predict_attention(pred, gpu("a100-sxm4-80gb"), &q, &sxm), TC_OK);
    ck_assert_int_eq(tc_predict_attention(pred, gpu("a100-pcie-80gb"), &q, &pcie), TC_OK);
    r = pcie.time_us / sxm.time_us;
    ck_assert_msg(fabs(r - 271.2 / 252.9) < 0.005, "300 W: %.4f of the SXM4's time", r);
    ck_assert_int_eq(tc_predict_attention(pred, gpu("a100-sxm4-40gb"), &q, &sxm), TC_OK);
    ck_assert_int_eq(tc_predict_attention(pred, gpu("a100-pcie-40gb"), &q, &pcie), TC_OK);
    r = pcie.time_us / sxm.time_us;
    ck_assert_msg(fabs(r - 271.2 / 252.9 / cbrt(250.0 / 300.0)) < 0.005,
                  "250 W: %.4f of the SXM4's time", r);
    q.impl = TC_ATTN_FLASH;
    q.dtype = TC_DTYPE_FP32;
    ck_assert_int_eq(tc_predict_attention(pred, gpu("a100-sxm4-80gb"), &q, &sxm), TC_OK);
    ck_assert_int_eq(tc_predict_attention(pred, gpu("a100-pcie-80gb"), &q, &pcie), TC_OK);
    r = pcie.time_us / sxm.time_us;
    ck_assert_msg(fabs(r - 1.0) < 0.005, "fp32: %.4f of the SXM4's time", r);
}
END_TEST

/* The open engines' sm80 llama prefill "matches ~97 % FA-2.8.3 at
 * SQ=8K" (config_sm80.py): on FA2's 128 x 64 tiles at head dim 128 it
 * takes FA2's time over 0.97. */
START_TEST(test_frost_sm80_llama_of_fa2)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH2,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 32,
                                   .seq_q = 8192,
                                   .head_dim = 128};
    struct tc_attention_prediction fa2, oss;
    const struct tc_gpu *a100 = gpu("a100-pcie-80gb");

    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &fa2), TC_OK);
    q.impl = TC_ATTN_CUDNN_OSS;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &oss), TC_OK);
    ck_assert_int_eq(oss.block_m, fa2.block_m);
    ck_assert_int_eq(oss.block_n, fa2.block_n);
    ck_assert_msg(fabs(oss.time_us / fa2.time_us - 1.0 / 0.97) < 0.005, "open %.1f us, FA2 %.1f",
                  oss.time_us, fa2.time_us);
}
END_TEST

/* PyTorch's LayerNorm forward reads its input twice (a statistics pass,
 * then the normalising pass) and writes it once: as many bytes as a
 * residual add (two reads, one write), every norm of the step alike; an
 * RMSNorm is taken as one read and one write. */
START_TEST(test_layernorm_reads_twice)
{
    struct tc_model_config c = layer_cfg(1280, 20, 1024, 4);
    struct tc_model_prediction *mp;
    const struct tc_op_prediction *res;
    double act_bytes = 4.0 * 1024 * 1280 * 2;

    c.vocab = 50257;
    mp = predict("a100-pcie-40gb", &c);
    res = find_op(mp, "residual1");
    ck_assert_double_eq((double)res->m, 3 * act_bytes);
    ck_assert_double_eq((double)find_op(mp, "layernorm1")->m, (double)res->m);
    ck_assert_double_eq((double)find_op(mp, "layernorm2")->m, (double)res->m);
    ck_assert_double_eq((double)find_op(mp, "layernorm_final")->m, (double)res->m);
    ck_assert_double_eq_tol(find_op(mp, "layernorm1")->time_us, res->time_us, 1e-9);
    tc_model_prediction_free(mp);

    c.rmsnorm = true;
    mp = predict("a100-pcie-40gb", &c);
    ck_assert_double_eq((double)find_op(mp, "rmsnorm1")->m, 2 * act_bytes);
    tc_model_prediction_free(mp);
}
END_TEST

/* The unfused attention's context leaves the values bmm as [b.heads, s,
 * d] and is copied into the projection's layout (Megatron's and GPT-NeoX's
 * permute(2, 0, 1, 3).contiguous(), Hugging Face's merge of the heads): one
 * kernel reading and writing this GPU's b.s.heads.d elements; a fused
 * attention writes its output in place and has none. */
START_TEST(test_unfused_context_copy)
{
    struct tc_model_config c = layer_cfg(4096, 32, 2048, 2);
    struct tc_model_prediction *mp;
    const struct tc_op_prediction *op;

    c.attention = TC_ATTN_UNFUSED;
    c.tp = 2;
    mp = predict("a100-sxm4-80gb", &c);
    op = find_op(mp, "context_copy");
    ck_assert(op->in_layer);
    ck_assert_double_eq((double)op->m, 2.0 * 2 * 2048 * (32.0 / 2) * 128 * 2);
    tc_model_prediction_free(mp);

    c.attention = TC_ATTN_FLASH2;
    mp = predict("a100-sxm4-80gb", &c);
    for (size_t i = 0; i < mp->n_ops; i++)
        ck_assert_str_ne(mp->ops[i].name, "context_copy");
    tc_model_prediction_free(mp);
}
END_TEST

TCase *model_kernels_tcase(void)
{
    TCase *tc = tcase_create("kernels");

    tcase_add_checked_fixture(tc, model_setup, model_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_fa4_sm80_forward);
    tcase_add_test(tc, test_frost_sm80_backward);
    tcase_add_test(tc, test_frost_sm80_forward);
    tcase_add_test(tc, test_fa4_sm90_backward_d256);
    tcase_add_test(tc, test_fa4_sm90_forward_tiles);
    tcase_add_test(tc, test_fa4_sm90_not_persistent);
    tcase_add_test(tc, test_fa4_sm90_pack_gqa);
    tcase_add_test(tc, test_cudnn_fp8_backward_hopper_dims);
    tcase_add_test(tc, test_cudnn_fp8_backward_hopper_unskipped);
    tcase_add_test(tc, test_cudnn_fp8_backward_hopper_transposes);
    tcase_add_test(tc, test_cudnn_fp8_forward_hopper_head_dims);
    tcase_add_test(tc, test_frost_sm80_deterministic);
    tcase_add_test(tc, test_fa4_sm90_deterministic);
    tcase_add_test(tc, test_fa2_sm80_split_smem);
    tcase_add_test(tc, test_fa2_tiles_by_smem);
    tcase_add_test(tc, test_cudnn_sm80_forward_tiles);
    tcase_add_test(tc, test_eager_attention_scores_kernels);
    tcase_add_test(tc, test_training_dropout);
    tcase_add_test(tc, test_gelu_new_kernels);
    tcase_add_test(tc, test_ga100_power_limit);
    tcase_add_test(tc, test_frost_sm80_llama_of_fa2);
    tcase_add_test(tc, test_layernorm_reads_twice);
    tcase_add_test(tc, test_unfused_context_copy);
    return tc;
}
