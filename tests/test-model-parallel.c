/* The model suite's tests of parallelism and of the costs around the
 * kernels: the collectives read the spec's interconnect, the host's
 * dispatch of each op and module call. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-model.h"
#include "tilecast/tilecast.h"

/* The tensor-parallel all-reduce moves its bytes at the spec's
 * interconnect.bw_gbps: halving it doubles the bandwidth term; a spec
 * without an interconnect predicts one GPU but refuses tp > 1. */
START_TEST(test_collective_reads_interconnect)
{
    struct tc_model_config c = layer_cfg(8192, 64, 2048, 4);
    struct tc_gpu slow = *gpu("a100-sxm4-80gb");
    struct tc_model_prediction *fast_mp, *slow_mp = NULL;
    double fast_us, slow_us, bytes;

    c.tp = 8;
    fast_mp = predict("a100-sxm4-80gb", &c);
    slow.interconnect.bw_gbps /= 2;
    ck_assert_int_eq(tc_predict_model(pred, &slow, &c, &slow_mp), TC_OK);
    fast_us = find_op(fast_mp, "tp_allreduce1")->time_us;
    slow_us = find_op(slow_mp, "tp_allreduce1")->time_us;
    bytes = (double)find_op(fast_mp, "tp_allreduce1")->m;
    /* a ring moves 2(t-1)/t of the b.s.h fp16 bytes over each link */
    ck_assert_double_eq(bytes, 4.0 * 2048 * 8192 * 2);
    ck_assert_double_eq_tol(slow_us - fast_us, 2.0 * 7 / 8 * bytes / (300e3 * 0.8), 1e-6);
    tc_model_prediction_free(fast_mp);
    tc_model_prediction_free(slow_mp);

    memset(&slow.interconnect, 0, sizeof(slow.interconnect));
    slow_mp = NULL;
    ck_assert_int_eq(tc_predict_model(pred, &slow, &c, &slow_mp), TC_ERR_UNSUPPORTED);
    ck_assert_ptr_null(slow_mp);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "interconnect"));
    c.tp = 1;
    ck_assert_int_eq(tc_predict_model(pred, &slow, &c, &slow_mp), TC_OK);
    tc_model_prediction_free(slow_mp);
}
END_TEST

/* Eager execution: the host dispatches every op (28 us each, an
 * event-timed op call) and each forward linear layer is a module call, 23
 * us more (nn.Linear's path over a plain op on the data's event-timed
 * hosts): a Llama layer calls qkv, proj, mlp_up and mlp_down, the head the
 * logits. The backward GEMMs are autograd's, no module call. */
START_TEST(test_host_time_counts_module_calls)
{
    struct tc_model_config c = layer_cfg(8192, 64, 1, 1);
    struct tc_model_prediction *mp;
    size_t layer_ops = 0, head_ops = 0;

    c.kv_heads = 8, c.ffn = 28672, c.swiglu = true, c.rmsnorm = true;
    c.layers = 80, c.vocab = 32000, c.tp = 8;
    mp = NULL;
    ck_assert_int_eq(tc_predict_decode(pred, gpu("a100-sxm4-80gb"), &c, 576, &mp), TC_OK);
    for (size_t i = 0; i < mp->n_ops; i++)
        *(mp->ops[i].in_layer ? &layer_ops : &head_ops) += 1;
    ck_assert_double_eq_tol(
        mp->host_time_us, (80.0 * (double)layer_ops + (double)head_ops) * 28 + (80.0 * 4 + 1) * 23,
        1e-6);
    /* host-bound: the floor the measured decode shows at TP 4 and 8 */
    ck_assert_double_eq(mp->step_time_us, mp->host_time_us);
    tc_model_prediction_free(mp);

    /* training: the same module calls, none for the backward GEMMs */
    c.training = true;
    c.seq = 8;
    c.layers = 2;
    c.tp = 1;
    mp = predict("a100-sxm4-80gb", &c);
    layer_ops = head_ops = 0;
    for (size_t i = 0; i < mp->n_ops; i++)
        *(mp->ops[i].in_layer ? &layer_ops : &head_ops) += 1;
    ck_assert_double_eq_tol(mp->host_time_us,
                            (2.0 * (double)layer_ops + (double)head_ops) * 28 + (2.0 * 4 + 1) * 23,
                            1e-6);
    tc_model_prediction_free(mp);
}
END_TEST

TCase *model_parallel_tcase(void)
{
    TCase *tc = tcase_create("parallel");

    tcase_add_checked_fixture(tc, model_setup, model_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_collective_reads_interconnect);
    tcase_add_test(tc, test_host_time_counts_module_calls);
    return tc;
}
