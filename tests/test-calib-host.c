/* The timing side of the GEMM calibration that needs no measured rows:
 * nn.Linear's longer host path under host-timed methods (calibrate-timing.c)
 * and the query's op in the ABI of struct tc_gemm_query. Part of the calib
 * suite (test-calib.c). */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "tc-internal.h"
#include "tilecast/tilecast.h"

TCase *calib_host_tcase(void);

/* nn.Linear's longer host path (calibrate-timing.c): a fixed extra under
 * host-timed methods, none under kernel time; the fit recovers the plain
 * call's host cost whatever the mix of ops in the rows. */
START_TEST(linear_host_path)
{
    enum { N = 400 };
    struct tc_calib_sample *s = calloc(N, sizeof(*s));
    double host[3];
    struct tc_calib *c = NULL;
    struct tc_timing_cost cost;

    ck_assert_ptr_nonnull(s);
    ck_assert_double_eq(tc_timing_op_extra_us(TC_TIMING_EVENT, TC_GEMM_OP_LINEAR), 23);
    ck_assert_double_eq(tc_timing_op_extra_us(TC_TIMING_WALL, TC_GEMM_OP_LINEAR), 23);
    ck_assert_double_eq(tc_timing_op_extra_us(TC_TIMING_KERNEL, TC_GEMM_OP_LINEAR), 0);
    ck_assert_double_eq(tc_timing_op_extra_us(TC_TIMING_EVENT, TC_GEMM_OP_BMM), 0);
    ck_assert_double_eq(tc_timing_op_extra_us(TC_TIMING_EVENT, TC_GEMM_OP_MM), 0);
    /* the public figure: a row timed by CUDA events around nn.Linear gets
     * it, a profiler-timed one nothing */
    ck_assert_int_eq(tc_timing_host_cost("event-fastest5-mean", &cost), TC_OK);
    ck_assert_double_eq(cost.typical_us, tc_timing_default_host_us(TC_TIMING_EVENT));
    ck_assert_double_eq(cost.linear_us, 23);
    ck_assert_int_eq(tc_timing_host_cost("profiler-median", &cost), TC_OK);
    ck_assert_double_eq(cost.typical_us, 0);
    ck_assert_double_eq(cost.linear_us, 0);
    ck_assert_int_eq(tc_timing_host_cost("event", &cost), TC_OK);
    ck_assert_double_eq(cost.typical_us, tc_timing_default_host_us(TC_TIMING_EVENT));
    /* the same shapes, event-timed on a host whose plain call costs 25 us,
     * three times: nn.Linear only (23 us more each, NT as nn.Linear is),
     * torch.bmm only (NN), and one linear row in four */
    for (int set = 0; set < 3; set++) {
        uint64_t state = 777;

        for (int i = 0; i < N; i++) {
            bool linear = set == 0 || (set == 2 && i % 4 == 0);
            double noise;

            state = state * 6364136223846793005ull + 1442695040888963407ull;
            memset(&s[i], 0, sizeof(s[i]));
            s[i].m = 16 + (int64_t)((state >> 33) % 4000);
            s[i].n = 64 << (i % 5);
            s[i].k = 64 << (i % 4);
            s[i].batch = 1;
            s[i].layout = linear ? TC_LAYOUT_NT : TC_LAYOUT_NN;
            s[i].op = linear ? TC_GEMM_OP_LINEAR : TC_GEMM_OP_BMM;
            s[i].align = TC_ALIGN_128B;
            s[i].timing = TC_TIMING_EVENT;
            s[i].kernel_slot = -1;
            /* 14 TFLOP/s fp32 and 1.5 TB/s */
            s[i].compute_us = 2.0 * (double)s[i].m * (double)s[i].n * (double)s[i].k / 1.4e7;
            s[i].memory_us =
                4.0 * (double)(s[i].m * s[i].k + s[i].n * s[i].k + s[i].m * s[i].n) / 1.5e6;
            s[i].overhead_us = 3;
            noise = 1 + 0.01 * ((double)((state >> 11) % 2001) / 1000.0 - 1);
            s[i].time_us =
                (fmax(0.9 * s[i].compute_us, 1.1 * s[i].memory_us) + 3 + 25 + (linear ? 23 : 0)) *
                noise;
        }
        tc_calib_free(c);
        c = tc_calib_build(s, N, NULL);
        ck_assert_msg(c != NULL, "%s", tc_last_error());
        host[set] = tc_calib_params(c)->host_us[TC_TIMING_EVENT];
        ck_assert_msg(fabs(host[set] - 25) < 2, "set %d: host %.2f us", set, host[set]);
    }
    ck_assert_double_lt(fabs(host[0] - host[1]), 1);
    ck_assert_double_lt(fabs(host[2] - host[1]), 1);
    /* a prediction of the mix's fit: the same shape 23 us slower as
     * nn.Linear under event timing, the same as torch.bmm in kernel time */
    {
        struct tc_gemm_query q = {512, 1024, 256, 1, TC_DTYPE_FP32, TC_LAYOUT_NT, 0, 0, 0};
        struct tc_gemm_prediction base, lin, mm;
        struct tc_calib_apply how = {NULL, false, 0, true, TC_TIMING_EVENT};

        memset(&base, 0, sizeof(base));
        base.time_us = 100;
        base.compute_us = 80;
        base.memory_us = 50;
        base.overhead_us = 3;
        base.align = TC_ALIGN_128B;
        lin = mm = base;
        q.op = TC_GEMM_OP_LINEAR;
        tc_calib_predict(c, &how, &q, 19.5, &lin);
        q.op = TC_GEMM_OP_MM;
        tc_calib_predict(c, &how, &q, 19.5, &mm);
        ck_assert_double_eq_tol(lin.time_us - mm.time_us, 23, 1e-9);
        how.timing = TC_TIMING_KERNEL;
        lin = mm = base;
        q.op = TC_GEMM_OP_LINEAR;
        tc_calib_predict(c, &how, &q, 19.5, &lin);
        q.op = TC_GEMM_OP_MM;
        tc_calib_predict(c, &how, &q, 19.5, &mm);
        ck_assert_double_eq(lin.time_us, mm.time_us);
    }
    tc_calib_free(c);
    free(s);
}
END_TEST

/* The op of a GEMM query took the head of its reserved tail: the size and
 * every other offset are those of the layout before it. */
START_TEST(query_op_keeps_the_abi)
{
    struct before {
        int64_t m, n, k, batch;
        enum tc_dtype dtype;
        enum tc_layout layout;
        int64_t lda, ldb, ldc;
        double reserved[4];
    };
    struct cost_before {
        double typical_us, floor_us, lo_us, hi_us;
        double reserved[4];
    };

    ck_assert_uint_eq(sizeof(struct tc_gemm_query), sizeof(struct before));
    ck_assert_uint_eq(offsetof(struct tc_gemm_query, ldc), offsetof(struct before, ldc));
    ck_assert_uint_eq(offsetof(struct tc_gemm_query, op), offsetof(struct before, reserved));
    ck_assert_uint_eq(sizeof(struct tc_timing_cost), sizeof(struct cost_before));
    ck_assert_uint_eq(offsetof(struct tc_timing_cost, linear_us),
                      offsetof(struct cost_before, reserved));
    ck_assert_str_eq(tc_gemm_op_name(TC_GEMM_OP_LINEAR), "linear");
    ck_assert_str_eq(tc_gemm_op_name((enum tc_gemm_op)7), "?");
    {
        enum tc_gemm_op op;

        ck_assert_int_eq(tc_gemm_op_parse("bmm", &op), TC_OK);
        ck_assert_int_eq(op, TC_GEMM_OP_BMM);
        ck_assert_int_eq(tc_gemm_op_parse("conv", &op), TC_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(tc_last_error(), "conv"));
    }
}
END_TEST

TCase *calib_host_tcase(void)
{
    TCase *tc = tcase_create("host");

    tcase_add_test(tc, linear_host_path);
    tcase_add_test(tc, query_op_keeps_the_abi);
    return tc;
}
