/* The model suite's tests of parallelism and its costs: the collectives
 * read the spec's interconnect. */
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

TCase *model_parallel_tcase(void)
{
    TCase *tc = tcase_create("parallel");

    tcase_add_checked_fixture(tc, model_setup, model_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_collective_reads_interconnect);
    return tc;
}
