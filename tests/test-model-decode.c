/* The model suite's decode file: the fused-attention model on short query
 * blocks against a long KV cache (decode and speculative verify), where
 * what a kernel's grid packs and splits decides the time; each mechanism
 * is checked against the behaviour its source describes. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <string.h>

#include "test-model.h"
#include "tilecast/tilecast.h"

/* The cuDNN frontend's open sm80 forward has no split-KV and no GQA
 * packing (config_sm80.py; its plans read PACK_GQA=0; SPLIT_KV=1): eight
 * queries of 64 heads against a 128k cache run 64 CTAs over every key,
 * one wave on 108 SMs, so batch 1 takes as long as a batch whose CTAs fill
 * the SMs once; a split is refused, not silently dropped. */
START_TEST(test_frost_sm80_no_split)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN_OSS,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 1,
                                   .heads = 64,
                                   .kv_heads = 8,
                                   .seq_q = 8,
                                   .seq_kv = 131072,
                                   .head_dim = 128,
                                   .causal = true};
    struct tc_attention_prediction b1, b8;
    const struct tc_gpu *a100 = gpu("a100-pcie-80gb");

    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &b1), TC_OK);
    ck_assert_int_eq(b1.kv_splits, 1);
    ck_assert_int_eq(b1.blocks, 64);
    q.batch = 8; /* 512 CTAs: five waves */
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &b8), TC_OK);
    ck_assert_int_eq(b8.blocks, 512);
    ck_assert_msg(b8.time_us > 4.5 * b1.time_us && b8.time_us < 5.5 * b1.time_us,
                  "batch 8 %.1f us, batch 1 %.1f", b8.time_us, b1.time_us);
    /* a single query is not swapped into rows either (FA2's kernel does) */
    q.batch = 1;
    q.seq_q = 1;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &b1), TC_OK);
    ck_assert_int_eq(b1.blocks, 64);
    q.kv_splits = 4;
    ck_assert_int_eq(tc_predict_attention(pred, a100, &q, &b1), TC_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "no split-KV"));
}
END_TEST

/* cuDNN's decode on Hopper and Blackwell packs a KV head's query heads into
 * one tile's rows and splits the cache: a batch of single queries against
 * a long cache is bound by reading it, where the unpacked tile model took
 * its MMAs over 128 padded rows a head for 5-10x longer. More than one
 * query is not packed. */
START_TEST(test_cudnn_decode_packs_gqa)
{
    static const char *const gpus[] = {"h200-sxm-141gb", "b200"};

    for (size_t g = 0; g < sizeof(gpus) / sizeof(gpus[0]); g++) {
        struct tc_attention_query q = {.impl = TC_ATTN_CUDNN,
                                       .dtype = TC_DTYPE_BF16,
                                       .batch = 32,
                                       .heads = 64,
                                       .kv_heads = 8,
                                       .seq_q = 1,
                                       .seq_kv = 32768,
                                       .head_dim = 128};
        struct tc_attention_prediction p;
        const struct tc_gpu *dev = gpu(gpus[g]);
        /* K and V of every KV head once, at the DRAM peak */
        double cache_us = 32.0 * 8 * 32768 * 2 * 128 * 2 / (dev->mem_bw_gbps * 1e3);

        ck_assert_int_eq(tc_predict_attention(pred, dev, &q, &p), TC_OK);
        ck_assert_int_eq(p.bound, TC_BOUND_MEMORY);
        ck_assert_int_eq(p.blocks, 32LL * 8 * p.kv_splits);
        ck_assert_msg(p.time_us < 1.3 * cache_us, "%s: %.1f us, the cache read %.1f", gpus[g],
                      p.time_us, cache_us);
        /* eight queries: a tile per query head */
        q.seq_q = 8;
        q.causal = true;
        ck_assert_int_eq(tc_predict_attention(pred, dev, &q, &p), TC_OK);
        ck_assert_int_eq(p.blocks, 32LL * 64 * p.kv_splits);
    }
}
END_TEST

/* cuDNN splits the cache by itself only for a single query: 8 queries of
 * 16/2 heads against 128k keys run 16 CTAs at batch 1 and 128 at batch 8,
 * one wave on H200's 132 SMs either way (the published timings: 1.50 and
 * 1.52 ms). An explicit split is still the caller's. */
START_TEST(test_cudnn_verify_unsplit)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 1,
                                   .heads = 16,
                                   .kv_heads = 2,
                                   .seq_q = 8,
                                   .seq_kv = 131072,
                                   .head_dim = 128,
                                   .causal = true};
    struct tc_attention_prediction b1, b8, split;
    const struct tc_gpu *h200 = gpu("h200-sxm-141gb");

    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &b1), TC_OK);
    ck_assert_int_eq(b1.kv_splits, 1);
    ck_assert_int_eq(b1.blocks, 16);
    q.batch = 8;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &b8), TC_OK);
    ck_assert_int_eq(b8.kv_splits, 1);
    ck_assert_double_eq_tol(b8.time_us, b1.time_us, 0.05 * b1.time_us);
    q.batch = 1;
    q.kv_splits = 4;
    ck_assert_int_eq(tc_predict_attention(pred, h200, &q, &split), TC_OK);
    ck_assert_int_eq(split.kv_splits, 4);
    ck_assert_msg(split.time_us < 0.5 * b1.time_us, "split %.1f us, unsplit %.1f", split.time_us,
                  b1.time_us);
}
END_TEST

/* q over a contiguous cache into *flat and over pages of `page` keys into
 * *paged, on the GPU named; q keeps the page size. */
static void predict_flat_paged(const char *gpu_id, struct tc_attention_query *q, int64_t page,
                               struct tc_attention_prediction *flat,
                               struct tc_attention_prediction *paged)
{
    q->page_size = 0;
    ck_assert_msg(tc_predict_attention(NULL, gpu(gpu_id), q, flat) == TC_OK, "%s", tc_last_error());
    q->page_size = page;
    ck_assert_msg(tc_predict_attention(NULL, gpu(gpu_id), q, paged) == TC_OK, "%s",
                  tc_last_error());
}

/* A paged KV cache (vLLM's PagedAttention; FlashAttention-2's block_table):
 * the same rows read through a block table. Where the same kernel runs, the
 * model adds the table's bytes only, so a paged call is never faster than
 * the contiguous one and hardly slower; its interval's upper end allows
 * vLLM's 26%. FA2 reads a paged cache with its split kernel only, so an
 * unsplit paged decode runs that kernel's 64-row tiles where the
 * contiguous one runs 128. FA2 takes pages of a multiple of 256 keys, the
 * unfused bmms none, a backward no cache at all. */
START_TEST(test_paged_decode)
{
    static const struct {
        const char *gpu;
        enum tc_attn_impl impl;
        int64_t page;
    } cases[] = {{"a100-pcie-80gb", TC_ATTN_FLASH2, 256},
                 {"h100-sxm5-80gb", TC_ATTN_FLASH3, 16},
                 {"h200-sxm-141gb", TC_ATTN_CUDNN, 16},
                 {"h200-sxm-141gb", TC_ATTN_CUDNN, 1}};
    struct tc_attention_query q = {.dtype = TC_DTYPE_BF16,
                                   .batch = 8,
                                   .heads = 64,
                                   .kv_heads = 8,
                                   .seq_q = 1,
                                   .seq_kv = 8192,
                                   .head_dim = 128};
    struct tc_attention_prediction flat, paged;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        q.impl = cases[i].impl;
        predict_flat_paged(cases[i].gpu, &q, cases[i].page, &flat, &paged);
        ck_assert_msg(paged.time_us >= flat.time_us && paged.time_us < 1.01 * flat.time_us,
                      "%s %s page %lld: %.3f us, contiguous %.3f", cases[i].gpu,
                      tc_attn_impl_name(q.impl), (long long)q.page_size, paged.time_us,
                      flat.time_us);
        ck_assert_double_eq_tol(paged.hi_us, paged.time_us * 1.25 * 1.26, 1e-6 * paged.hi_us);
        ck_assert_double_eq_tol(paged.lo_us, paged.time_us * 0.75, 1e-6 * paged.lo_us);
        ck_assert_int_eq(paged.source, TC_SOURCE_ANALYTICAL);
    }
    /* FA2 unsplit (32 sequences x 8 KV heads fill the GPU): the contiguous
     * call runs the 128-row kernel over the swapped query heads, the paged
     * one the split kernel's 64 x 128 tiles, which compute half the padded
     * rows and wait on the cache's bytes instead */
    q.impl = TC_ATTN_FLASH2;
    q.batch = 32;
    q.heads = 32;
    q.seq_kv = 4096;
    predict_flat_paged("a100-sxm4-80gb", &q, 256, &flat, &paged);
    ck_assert_int_eq(flat.kv_splits, 1);
    ck_assert_int_eq(paged.kv_splits, 1);
    ck_assert_int_eq(flat.block_m, 128);
    ck_assert_int_eq(paged.block_m, 64);
    ck_assert_int_eq(paged.block_n, 128);
    ck_assert_int_eq(flat.bound, TC_BOUND_COMPUTE);
    ck_assert_int_eq(paged.bound, TC_BOUND_MEMORY);
    ck_assert_msg(paged.time_us < 0.9 * flat.time_us, "paged %.1f us, contiguous %.1f",
                  paged.time_us, flat.time_us);
    q.heads = 64;

    /* the block table grows with the pages: one key a page is the most */
    q.impl = TC_ATTN_CUDNN;
    q.batch = 128;
    q.seq_kv = 131072;
    predict_flat_paged("h200-sxm-141gb", &q, 1, &flat, &paged);
    ck_assert_msg(paged.time_us > flat.time_us, "page 1 %.1f us, contiguous %.1f", paged.time_us,
                  flat.time_us);
    q.batch = 8;
    q.seq_kv = 8192;

    q.impl = TC_ATTN_FLASH2;
    q.page_size = 16;
    ck_assert_int_eq(tc_predict_attention(NULL, gpu("a100-pcie-80gb"), &q, &paged),
                     TC_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "multiple of 256 keys"));
    q.impl = TC_ATTN_UNFUSED;
    ck_assert_int_eq(tc_predict_attention(NULL, gpu("a100-pcie-80gb"), &q, &paged),
                     TC_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "not a paged cache"));
    q.impl = TC_ATTN_FLASH2;
    q.page_size = 256;
    q.backward = true;
    q.seq_q = 8192;
    ck_assert_int_eq(tc_predict_attention(NULL, gpu("a100-pcie-80gb"), &q, &paged), TC_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "read by the forward only"));
    q.backward = false;
    q.seq_q = 1;
    q.page_size = -16;
    ck_assert_int_eq(tc_predict_attention(NULL, gpu("a100-pcie-80gb"), &q, &paged), TC_ERR_RANGE);
}
END_TEST

/* The KV cache's dtype: the modelled kernels read K and V in the queries'
 * dtype (FA2/FA3 check it, cuDNN's fp8 graph takes Q, K, V in fp8), so a
 * narrower cache under 16-bit queries is refused naming the fp8 attention
 * instead, a wider one is no cache at all, and naming the queries' own
 * dtype changes nothing. An fp8 cache read by an fp8 attention halves the
 * bytes of a memory-bound decode. */
START_TEST(test_kv_cache_dtype)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 32,
                                   .heads = 64,
                                   .kv_heads = 8,
                                   .seq_q = 1,
                                   .seq_kv = 32768,
                                   .head_dim = 128};
    struct tc_attention_prediction a, b;
    const struct tc_gpu *h100 = gpu("h100-sxm5-80gb");

    ck_assert_int_eq(tc_predict_attention(NULL, h100, &q, &a), TC_OK);
    ck_assert_int_eq(a.bound, TC_BOUND_MEMORY);
    q.kv_dtype = TC_DTYPE_BF16;
    ck_assert_int_eq(tc_predict_attention(NULL, h100, &q, &b), TC_OK);
    ck_assert_double_eq(a.time_us, b.time_us);
    q.kv_dtype = TC_DTYPE_FP8;
    ck_assert_int_eq(tc_predict_attention(NULL, h100, &q, &b), TC_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "--dtype fp8"));
    q.kv_dtype = TC_DTYPE_FP16; /* as wide, another format: no kernel's either */
    ck_assert_int_eq(tc_predict_attention(NULL, h100, &q, &b), TC_ERR_UNSUPPORTED);
    q.kv_dtype = TC_DTYPE_FP32;
    ck_assert_int_eq(tc_predict_attention(NULL, h100, &q, &b), TC_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "wider"));
    /* the fp8 attention over its fp8 cache: K and V at one byte */
    q.dtype = TC_DTYPE_FP8;
    q.kv_dtype = TC_DTYPE_FP8;
    ck_assert_msg(tc_predict_attention(NULL, h100, &q, &b) == TC_OK, "%s", tc_last_error());
    ck_assert_int_eq(b.bound, TC_BOUND_MEMORY);
    ck_assert_msg(b.time_us > 0.45 * a.time_us && b.time_us < 0.55 * a.time_us,
                  "fp8 cache %.1f us, bf16 %.1f", b.time_us, a.time_us);
}
END_TEST

/* FlashAttention-3 counts its own splits (hopper/heuristics.h,
 * num_splits_heuristic): four key tiles or fewer never split; every count
 * is a candidate, so the first within 85% of the best wave efficiency is
 * taken even where a split is left with no keys; and CTAs that fill the
 * SMs split only a KV head over 50 MiB read by 2x the SMs' query tiles. */
START_TEST(test_fa3_split_heuristic)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH3,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 1,
                                   .heads = 8,
                                   .seq_q = 1,
                                   .seq_kv = 704,
                                   .head_dim = 128};
    struct tc_attention_prediction p;
    const struct tc_gpu *h100 = gpu("h100-sxm5-80gb");

    /* 704 keys are four 176-key tiles: 8 CTAs, unsplit (FA2's rule: 4) */
    ck_assert_int_eq(tc_predict_attention(NULL, h100, &q, &p), TC_OK);
    ck_assert_int_eq(p.kv_splits, 1);
    ck_assert_int_eq(p.blocks, 8);
    /* 20 query heads on 4 KV heads, packed: 4 CTAs over 12 key tiles on
     * 132 SMs; the best is 12 splits (48 CTAs, 0.364 of a wave), and 11
     * (0.333) is the first above 0.85 of it (10: 0.303), though 11 splits
     * of 12 tiles give 2 a split as 12 give 1 */
    q.heads = 20;
    q.kv_heads = 4;
    q.seq_kv = 2048;
    ck_assert_int_eq(tc_predict_attention(NULL, h100, &q, &p), TC_OK);
    ck_assert_int_eq(p.kv_splits, 11);
    ck_assert_int_eq(p.blocks, 44);
    /* 8 heads of 33792 queries (264 tiles of 128 a head, 2112 CTAs) over
     * 131072 keys: one KV head's K and V are 64 MiB, over the 50 MiB, read
     * by 2 x 132 query tiles: ceil(64 / 50) = 2 splits; causal, none */
    q.heads = 8;
    q.kv_heads = 0;
    q.seq_q = 33792;
    q.seq_kv = 131072;
    ck_assert_int_eq(tc_predict_attention(NULL, h100, &q, &p), TC_OK);
    ck_assert_int_eq(p.kv_splits, 2);
    q.causal = true;
    ck_assert_int_eq(tc_predict_attention(NULL, h100, &q, &p), TC_OK);
    ck_assert_int_eq(p.kv_splits, 1);
}
END_TEST

/* FlashAttention-4 on sm90 and sm100 splits into floor(SMs / query
 * tiles), at most the key tiles, and never over four key tiles or fewer
 * (flash_attn/cute/interface.py, num_splits_heuristic). */
START_TEST(test_fa4_split_heuristic)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH4,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 1,
                                   .heads = 32,
                                   .kv_heads = 8,
                                   .seq_q = 1,
                                   .seq_kv = 8192,
                                   .head_dim = 128};
    struct tc_attention_prediction p;
    const struct tc_gpu *b200 = gpu("b200");

    /* 8 packed query tiles on 148 SMs over 64 key tiles: 148 / 8 = 18
     * splits (FA2's rule: 16) */
    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &p), TC_OK);
    ck_assert_int_eq(p.kv_splits, 18);
    ck_assert_int_eq(p.blocks, 144);
    /* batch 12 of 64 heads: 96 query tiles, 148 / 96 = 1 (FA2's rule: 3) */
    q.batch = 12;
    q.heads = 64;
    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &p), TC_OK);
    ck_assert_int_eq(p.kv_splits, 1);
    /* 512 keys, four tiles: unsplit at batch 1 (FA2's rule: 4) */
    q.batch = 1;
    q.seq_kv = 512;
    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &p), TC_OK);
    ck_assert_int_eq(p.kv_splits, 1);
}
END_TEST

/* The cuDNN frontend's open sm100 forward packs a KV head's query heads
 * and splits by its cost model (heuristics.py, choose_split_kv), worked by
 * hand for 64 query heads on 8 KV heads, one query, 2048 keys (16 tiles of
 * 128) on 148 SMs: 8 packed CTAs; splits 1, 2, 4, 8 cost (a wave each)
 * 16 + 21 = 37, 8 + 21 + 0.2 = 29.2, 4 + 21 + 0.4 = 25.4 and 2 + 21 + 0.8 =
 * 23.8 key tiles, and 16 would leave one tile a split (at least two): 8.
 * At batch 32, 256 CTAs take two waves unsplit (74) and four split in two
 * (4 x 29 + 0.2 x 14 combine waves): 1. The published B200 plans read
 * SPLIT_KV=8 and 1 for these shapes (attention_inference decode_sweep). */
START_TEST(test_frost_sm100_split_heuristic)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN_OSS,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 1,
                                   .heads = 64,
                                   .kv_heads = 8,
                                   .seq_q = 1,
                                   .seq_kv = 2048,
                                   .head_dim = 128};
    struct tc_attention_prediction p, cudnn;
    const struct tc_gpu *b200 = gpu("b200");

    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &p), TC_OK);
    ck_assert_int_eq(p.kv_splits, 8);
    ck_assert_int_eq(p.blocks, 64);
    q.batch = 32;
    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &p), TC_OK);
    ck_assert_int_eq(p.kv_splits, 1);
    /* eight queries a sequence pack too (64 rows a tile): the closed engines
     * leave them unsplit and unpacked, 64 x 32 CTAs against 256 */
    q.seq_q = 8;
    q.causal = true;
    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &p), TC_OK);
    ck_assert_int_eq(p.blocks, 256);
    q.impl = TC_ATTN_CUDNN;
    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &cudnn), TC_OK);
    ck_assert_int_eq(cudnn.blocks, 2048); /* 64 heads x 32 */
    ck_assert(cudnn.time_us > 2 * p.time_us);
    /* a long prefill: cuDNN 9.27 runs at FlashAttention-4's rate on
     * Blackwell (attention-kernels.c), the open engine with the same tiles */
    q.batch = 2;
    q.seq_q = q.seq_kv = 16384;
    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &cudnn), TC_OK);
    q.impl = TC_ATTN_FLASH4;
    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &p), TC_OK);
    ck_assert_msg(fabs(cudnn.time_us / p.time_us - 1) < 1e-9, "cudnn %g us, flash4 %g us",
                  cudnn.time_us, p.time_us);
}
END_TEST

/* A Blackwell forward whose rows fill one 128-row stage: cuDNN's prefill
 * kernel computes both stages of its 256-row tile (attention-kernels.c,
 * blackwell_kernel). 32 x 64 heads on 8 KV heads, unpacked: 2048 CTAs
 * over 8192 keys, compute-bound, take the same time at 128 queries as at
 * 256. Its single-query decode is a one-tile kernel (128 rows); the open
 * engine runs its 256-row prefill tile there too. */
START_TEST(test_sm100_query_stages)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 32,
                                   .heads = 64,
                                   .kv_heads = 8,
                                   .seq_q = 256,
                                   .seq_kv = 8192,
                                   .head_dim = 128};
    struct tc_attention_prediction one, two;
    const struct tc_gpu *b200 = gpu("b200");

    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &two), TC_OK);
    q.seq_q = 128;
    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &one), TC_OK);
    ck_assert_int_eq(one.blocks, 2048);
    ck_assert_int_eq(two.blocks, 2048);
    ck_assert_int_eq(one.bound, TC_BOUND_COMPUTE);
    ck_assert_double_eq_tol(one.time_us, two.time_us, 1e-9);
    q.seq_q = 1;
    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &one), TC_OK);
    ck_assert_int_eq(one.block_m, 128);
    q.impl = TC_ATTN_CUDNN_OSS;
    ck_assert_int_eq(tc_predict_attention(NULL, b200, &q, &one), TC_OK);
    ck_assert_int_eq(one.block_m, 256);
}
END_TEST

/* The open sm100 engine's split combine walks the splits one at a time, two
 * L2 and two L1 round trips a split (attention-fused.c, frost_combine_us):
 * one query of 16 heads over 32768 keys in 64 splits takes at least 64 x 2
 * x (250 + 39) clocks at B200's 2111 MHz, 17.5 us, for its combine alone. */
START_TEST(test_frost_sm100_combine)
{
    struct tc_attention_query q = {.impl = TC_ATTN_CUDNN_OSS,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 1,
                                   .heads = 16,
                                   .kv_heads = 2,
                                   .seq_q = 1,
                                   .seq_kv = 32768,
                                   .head_dim = 128,
                                   .kv_splits = 64};
    struct tc_attention_prediction p;

    ck_assert_int_eq(tc_predict_attention(NULL, gpu("b200"), &q, &p), TC_OK);
    ck_assert_int_eq(p.kv_splits, 64);
    ck_assert_msg(p.time_us > 64 * 2 * (250 + 39) / 2111.0, "%g us", p.time_us);
}
END_TEST

/* Blackwell Ultra (sm_103) runs twice B200's SFU exps a clock and
 * FlashAttention-4 emulates none there; on sm100 it emulates 18.75 % of a
 * head-dim-128 forward's exps with FP32-lane polynomials. The GB300 spec
 * against itself marked sm_100: a long prefill, where the exps bind on
 * sm100, takes 0.80-0.90 of the time (MMA-bound on sm_103); the backward,
 * which emulates nothing on either, is faster too but by less than the
 * forward. */
START_TEST(test_sm103_fast_exp)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH4,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 1,
                                   .heads = 16,
                                   .kv_heads = 16,
                                   .seq_q = 16384,
                                   .seq_kv = 16384,
                                   .head_dim = 128};
    struct tc_attention_prediction ultra, plain, ultra_bwd, plain_bwd;
    struct tc_gpu sm100 = *gpu("gb300");

    snprintf(sm100.compute_capability, sizeof(sm100.compute_capability), "sm_100");
    ck_assert_int_eq(tc_predict_attention(NULL, gpu("gb300"), &q, &ultra), TC_OK);
    ck_assert_int_eq(tc_predict_attention(NULL, &sm100, &q, &plain), TC_OK);
    ck_assert_msg(ultra.time_us / plain.time_us > 0.80 && ultra.time_us / plain.time_us < 0.90,
                  "%g / %g us", ultra.time_us, plain.time_us);
    q.backward = true;
    ck_assert_int_eq(tc_predict_attention(NULL, gpu("gb300"), &q, &ultra_bwd), TC_OK);
    ck_assert_int_eq(tc_predict_attention(NULL, &sm100, &q, &plain_bwd), TC_OK);
    ck_assert_double_lt(ultra_bwd.time_us, plain_bwd.time_us);
    ck_assert_double_gt(ultra_bwd.time_us / plain_bwd.time_us, ultra.time_us / plain.time_us);
}
END_TEST

/* FA3 drops the causal mask of a single query (hopper/flash_api.cpp:
 * "causal=true is the same as causal=false in this case"), and so takes
 * the unmasked 176-key tiles at head dim 128; over a paged cache it keeps
 * the mask and its 128-key tiles. 20 query heads on 4 KV heads over 4096
 * keys: 4 packed CTAs; 24 tiles of 176 give 21 splits (0.64 of a wave,
 * the first within 0.85 of 24's 0.73), 32 tiles of 128 give 28. */
START_TEST(test_fa3_decode_drops_causal)
{
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH3,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 1,
                                   .heads = 20,
                                   .kv_heads = 4,
                                   .seq_q = 1,
                                   .seq_kv = 4096,
                                   .head_dim = 128,
                                   .causal = true};
    struct tc_attention_prediction plain, causal, paged;
    const struct tc_gpu *h100 = gpu("h100-sxm5-80gb");

    ck_assert_int_eq(tc_predict_attention(NULL, h100, &q, &causal), TC_OK);
    ck_assert_int_eq(causal.block_n, 176);
    ck_assert_int_eq(causal.kv_splits, 21);
    q.causal = false;
    ck_assert_int_eq(tc_predict_attention(NULL, h100, &q, &plain), TC_OK);
    ck_assert_double_eq_tol(causal.time_us, plain.time_us, 1e-9);
    q.causal = true;
    q.page_size = 256;
    ck_assert_int_eq(tc_predict_attention(NULL, h100, &q, &paged), TC_OK);
    ck_assert_int_eq(paged.block_n, 128);
    ck_assert_int_eq(paged.kv_splits, 28);
}
END_TEST

TCase *model_decode_tcase(void)
{
    TCase *tc = tcase_create("decode");

    tcase_add_checked_fixture(tc, model_setup, model_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_frost_sm80_no_split);
    tcase_add_test(tc, test_cudnn_decode_packs_gqa);
    tcase_add_test(tc, test_cudnn_verify_unsplit);
    tcase_add_test(tc, test_paged_decode);
    tcase_add_test(tc, test_kv_cache_dtype);
    tcase_add_test(tc, test_fa3_split_heuristic);
    tcase_add_test(tc, test_fa4_split_heuristic);
    tcase_add_test(tc, test_frost_sm100_split_heuristic);
    tcase_add_test(tc, test_sm100_query_stages);
    tcase_add_test(tc, test_frost_sm100_combine);
    tcase_add_test(tc, test_sm103_fast_exp);
    tcase_add_test(tc, test_fa3_decode_drops_causal);
    return tc;
}
