/* Check suite 'ranking': a GPU whose spec is below another's on every
 * resource (the power-limited A100 PCIe against the A100 SXM4 of the same
 * memory, an H100 against an H200 or a B200) is never predicted faster:
 * whole models (training, prefill, decode, with tensor parallelism),
 * attention and GEMMs for every such pair of the shipped specs, across
 * architecture families too (the B200 against the A100s and H100s: each
 * family's kernel menu must offer the tile shapes the other's has for
 * small and skinny GEMMs). Times within 0.1 % are a tie: the wave fractions
 * of two unit counts round a few ns apart. Both with the analytical model
 * and with the shipped databases (measured, calibrated, transferred). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilecast/tilecast.h"

static struct tc_specs *specs;

#define TIE 1e-3

/* a <= b on every resource a prediction can read, for dtype d, and the two
 * differ in one */
static bool below(const struct tc_gpu *a, const struct tc_gpu *b, enum tc_dtype d)
{
    const double av[] = {a->peak_tflops[d],
                         a->mem_bw_gbps,
                         (double)a->l2_bytes,
                         a->units,
                         a->clock_tensor_mhz,
                         a->clock_vector_mhz,
                         a->mem_gb,
                         a->tdp_w,
                         (double)a->smem_per_sm_bytes,
                         a->regs_per_sm,
                         a->max_warps_per_sm,
                         a->interconnect.bw_gbps,
                         a->peak_tflops[TC_DTYPE_FP32]};
    const double bv[] = {b->peak_tflops[d],
                         b->mem_bw_gbps,
                         (double)b->l2_bytes,
                         b->units,
                         b->clock_tensor_mhz,
                         b->clock_vector_mhz,
                         b->mem_gb,
                         b->tdp_w,
                         (double)b->smem_per_sm_bytes,
                         b->regs_per_sm,
                         b->max_warps_per_sm,
                         b->interconnect.bw_gbps,
                         b->peak_tflops[TC_DTYPE_FP32]};
    bool differ = false;

    if (a == b || a->peak_tflops[d] <= 0 || b->peak_tflops[d] <= 0 || a->vendor != b->vendor)
        return false;
    for (size_t i = 0; i < sizeof(av) / sizeof(av[0]); i++) {
        if (av[i] > bv[i])
            return false;
        differ = differ || av[i] < bv[i];
    }
    return differ;
}

static const enum tc_dtype dtypes[] = {TC_DTYPE_FP16, TC_DTYPE_BF16, TC_DTYPE_TF32, TC_DTYPE_FP32};

/* Whether one of the two predictions is transferred from the other GPU's
 * rows and the other is calibrated on them (its own fit of this dtype,
 * timed as asked: a GPU whose rows are all wall-clock answers a
 * kernel-time query as transferred, and a measurement of another timing
 * method holds host time). */
static bool one_from_other(const struct tc_gpu *a, const struct tc_gemm_prediction *pa,
                           const struct tc_gpu *b, const struct tc_gemm_prediction *pb)
{
    return (pa->source == TC_SOURCE_TRANSFERRED && strcmp(pa->calib_gpu, b->id) == 0 &&
            pb->source == TC_SOURCE_CALIBRATED) ||
           (pb->source == TC_SOURCE_TRANSFERRED && strcmp(pb->calib_gpu, a->id) == 0 &&
            pa->source == TC_SOURCE_CALIBRATED);
}

/* The kernel-time answer of g, or 1 when it is a measurement of another
 * timing method (the cookbook's wall clock, returned as it is with a note
 * that says so): host time, not a kernel time that a spec orders, and
 * not a prediction. */
static int kernel_answer(struct tc_predictor *p, const struct tc_gpu *g,
                         const struct tc_gemm_query *q, struct tc_gemm_prediction *out)
{
    if (tc_predict_gemm(p, g, q, out) < 0)
        return -1;
    return out->source == TC_SOURCE_MEASURED && strstr(tc_predictor_note(p), "timing only");
}

/* transfer_only: compare only the shapes where one side is transferred
 * from the other's rows */
static size_t check_gemms(struct tc_predictor *p, const struct tc_gpu *a, const struct tc_gpu *b,
                          enum tc_dtype d, bool transfer_only)
{
    static const int64_t shapes[][3] = {
        {512, 512, 512},     {2048, 2048, 2048}, {8192, 8192, 8192},
        {16384, 4096, 1024}, {64, 4096, 4096},   {8192, 50304, 4096},
        {4096, 11008, 4096}, {1, 8192, 8192},    {2048, 1280, 8192}};
    size_t bad = 0;

    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        for (int l = 0; l < TC_LAYOUT_COUNT; l++) {
            struct tc_gemm_query q = {.m = shapes[s][0],
                                      .n = shapes[s][1],
                                      .k = shapes[s][2],
                                      .batch = 1,
                                      .dtype = d,
                                      .layout = (enum tc_layout)l};
            struct tc_gemm_prediction pa, pb;

            if (kernel_answer(p, a, &q, &pa) != 0 || kernel_answer(p, b, &q, &pb) != 0 ||
                (transfer_only && !one_from_other(a, &pa, b, &pb)))
                continue;
            if (pa.time_us < pb.time_us * (1 - TIE)) {
                fprintf(stderr, "gemm %s %lldx%lldx%lld %s: %s %.2f us < %s %.2f us\n",
                        tc_dtype_name(d), (long long)q.m, (long long)q.n, (long long)q.k,
                        tc_layout_name(q.layout), a->id, pa.time_us, b->id, pb.time_us);
                bad++;
            }
        }
    }
    return bad;
}

static size_t check_attention(struct tc_predictor *p, const struct tc_gpu *a,
                              const struct tc_gpu *b, enum tc_dtype d)
{
    static const int64_t shapes[][4] = {{1, 32, 2048, 128}, {4, 16, 4096, 64}, {16, 64, 512, 128}};
    size_t bad = 0;

    if (d != TC_DTYPE_FP16 && d != TC_DTYPE_BF16)
        return 0;
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        for (int bwd = 0; bwd < 2; bwd++) {
            struct tc_attention_query q = {.impl = TC_ATTN_FLASH,
                                           .dtype = d,
                                           .batch = shapes[s][0],
                                           .heads = shapes[s][1],
                                           .seq_q = shapes[s][2],
                                           .head_dim = shapes[s][3],
                                           .causal = true,
                                           .backward = bwd};
            struct tc_attention_prediction pa, pb;

            if (tc_predict_attention(p, a, &q, &pa) < 0 || tc_predict_attention(p, b, &q, &pb) < 0)
                continue;
            if (pa.time_us < pb.time_us * (1 - TIE)) {
                fprintf(
                    stderr, "attention %s b=%lld h=%lld s=%lld d=%lld%s: %s %.2f < %s %.2f us\n",
                    tc_dtype_name(d), (long long)q.batch, (long long)q.heads, (long long)q.seq_q,
                    (long long)q.head_dim, bwd ? " bwd" : "", a->id, pa.time_us, b->id, pb.time_us);
                bad++;
            }
        }
    }
    return bad;
}

static size_t check_models(struct tc_predictor *p, const struct tc_gpu *a, const struct tc_gpu *b,
                           enum tc_dtype d)
{
    struct tc_model_config base;
    size_t bad = 0;

    if (d != TC_DTYPE_FP16 && d != TC_DTYPE_BF16)
        return 0;
    ck_assert_int_eq(tc_model_config_load("llama-2-7b", &base), TC_OK);
    base.dtype = d;
    for (int k = 0; k < 4; k++) {
        struct tc_model_config c = base;
        struct tc_model_prediction *ma = NULL, *mb = NULL;
        int64_t ctx = 0;

        c.training = k == 0;
        c.seq = k == 0 ? 2048 : 512;
        c.micro_batch = k == 3 ? 16 : 1;
        c.tp = k == 2 ? 2 : 1;
        if (k >= 2)
            ctx = 1024;
        if ((ctx ? tc_predict_decode(p, a, &c, ctx, &ma) : tc_predict_model(p, a, &c, &ma)) == 0 &&
            (ctx ? tc_predict_decode(p, b, &c, ctx, &mb) : tc_predict_model(p, b, &c, &mb)) == 0 &&
            ma->step_time_us < mb->step_time_us * (1 - TIE)) {
            fprintf(stderr, "model llama-2-7b %s case %d: %s %.1f < %s %.1f us\n", tc_dtype_name(d),
                    k, a->id, ma->step_time_us, b->id, mb->step_time_us);
            bad++;
        }
        tc_model_prediction_free(ma);
        tc_model_prediction_free(mb);
    }
    return bad;
}

/* _i == 0: the analytical model; 1: the default predictor with the shipped
 * databases, where the calibrations of the two GPUs come from different data
 * sets and timing methods (the A100-SXM4-40GB's cookbook wall clock, the
 * SXM4-80GB's Vidur kernel times, the A100-PCIe-40GB's NeuSight events):
 * the predictor's rules keep the order (a kernel-time answer from rows
 * timed so, a transfer within a family bounded by its source GPU's own
 * answer) */
START_TEST(test_never_faster_than_a_better_gpu)
{
    struct tc_predictor *p = tc_predictor_new(specs);
    size_t n = tc_specs_count(specs), pairs = 0, bad = 0;

    ck_assert_ptr_nonnull(p);
    tc_predictor_set_analytical(p, _i == 0);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            const struct tc_gpu *a = tc_specs_at(specs, i), *b = tc_specs_at(specs, j);

            for (size_t k = 0; k < sizeof(dtypes) / sizeof(dtypes[0]); k++) {
                if (!below(a, b, dtypes[k]))
                    continue;
                pairs++;
                bad += check_gemms(p, a, b, dtypes[k], false);
                bad += check_attention(p, a, b, dtypes[k]);
                bad += check_models(p, a, b, dtypes[k]);
            }
        }
    }
    /* (pair, dtype) cases: 139 with the first 15 shipped specs, more since */
    ck_assert_uint_ge(pairs, 100);
    ck_assert_msg(bad == 0, "%zu predictions rank a lesser GPU faster (listed above)", bad);
    tc_predictor_free(p);
}
END_TEST

/* The same with the shipped databases (measured, calibrated, transferred),
 * for the pairs of one family where one side's answer is transferred from
 * the other's rows: a transfer onto a lesser GPU from a better one's (the
 * A100 PCIe-80GB from the SXM4-80GB's) must not come out faster than the
 * better GPU's own answer, GEMMs and the whole models built of them (the
 * pairs fitted on different data sets are in the all-pairs test above). */
START_TEST(test_default_predictor_transfers)
{
    struct tc_predictor *p = tc_predictor_new(specs);
    size_t n = tc_specs_count(specs), pairs = 0, bad = 0;

    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            const struct tc_gpu *a = tc_specs_at(specs, i), *b = tc_specs_at(specs, j);

            for (size_t k = 0; k < sizeof(dtypes) / sizeof(dtypes[0]); k++) {
                struct tc_gemm_query q = {.m = 2048,
                                          .n = 2048,
                                          .k = 2048,
                                          .batch = 1,
                                          .dtype = dtypes[k],
                                          .layout = TC_LAYOUT_NT};
                struct tc_gemm_prediction pa, pb;

                if (a->arch != b->arch || !below(a, b, dtypes[k]))
                    continue;
                bad += check_gemms(p, a, b, dtypes[k], true);
                /* the model's GEMMs are of the kind of this one */
                if (tc_predict_gemm(p, a, &q, &pa) < 0 || tc_predict_gemm(p, b, &q, &pb) < 0 ||
                    !one_from_other(a, &pa, b, &pb))
                    continue;
                pairs++;
                bad += check_models(p, a, b, dtypes[k]);
            }
        }
    }
    /* the A100 PCIe-80GB from the SXM4-80GB, fp16 and bf16 */
    ck_assert_uint_ge(pairs, 2);
    ck_assert_msg(bad == 0, "%zu predictions rank a lesser GPU faster (listed above)", bad);
    tc_predictor_free(p);
}
END_TEST

/* A case a menu gap once broke, with the shapes that exposed it: a skinny GEMM whose
 * leading dimension TMA cannot take (TN with lda = m = 1, a decode step) runs
 * the sm80 mma.sync fallback on Hopper and Blackwell alike, and the B200,
 * above an H100 and an H200 on every resource, is not slower there. */
START_TEST(test_blackwell_unaligned_fallback)
{
    struct tc_predictor *p = tc_predictor_new(specs);
    const struct tc_gpu *b200 = tc_specs_find(specs, "b200");
    const char *hopper[] = {"h100-sxm5-80gb", "h200-sxm-141gb"};
    const int64_t ms[] = {1, 8, 16, 64};

    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(b200);
    tc_predictor_set_analytical(p, true);
    for (size_t h = 0; h < 2; h++) {
        const struct tc_gpu *g = tc_specs_find(specs, hopper[h]);

        ck_assert_ptr_nonnull(g);
        ck_assert(below(g, b200, TC_DTYPE_BF16));
        for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
            struct tc_gemm_query q = {.m = ms[i],
                                      .n = 8192,
                                      .k = 8192,
                                      .batch = 1,
                                      .dtype = TC_DTYPE_BF16,
                                      .layout = TC_LAYOUT_TN};
            struct tc_gemm_prediction ph, pb;

            ck_assert_int_eq(tc_predict_gemm(p, g, &q, &ph), TC_OK);
            ck_assert_int_eq(tc_predict_gemm(p, b200, &q, &pb), TC_OK);
            ck_assert_msg(pb.time_us <= ph.time_us * (1 + TIE),
                          "TN %lldx8192x8192: b200 %.2f us, %s %.2f us", (long long)q.m, pb.time_us,
                          g->id, ph.time_us);
        }
    }
    tc_predictor_free(p);
}
END_TEST

static void setup(void)
{
    ck_assert_msg(tc_specs_load(NULL, &specs) == TC_OK, "specs: %s", tc_last_error());
}

static void teardown(void)
{
    tc_specs_free(specs);
    specs = NULL;
}

int main(void)
{
    Suite *s = suite_create("ranking");
    TCase *tc = tcase_create("ranking");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_never_faster_than_a_better_gpu, 0, 2);
    tcase_add_test(tc, test_blackwell_unaligned_fallback);
    tcase_add_test(tc, test_default_predictor_transfers);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
