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

TCase *model_decode_tcase(void)
{
    TCase *tc = tcase_create("decode");

    tcase_add_checked_fixture(tc, model_setup, model_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_frost_sm80_no_split);
    tcase_add_test(tc, test_cudnn_decode_packs_gqa);
    tcase_add_test(tc, test_cudnn_verify_unsplit);
    return tc;
}
