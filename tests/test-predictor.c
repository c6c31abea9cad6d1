/* The predictor's choice of source (predictor-sources.c, predictor-transfer.c)
 * on small databases built in a temporary folder through the public API:
 * an exactly measured shape, a fit of the GPU's own rows, a transfer from
 * another GPU, another timing method or another dtype, and the analytical
 * model; the label, the note and the interval each gives, and which source
 * a transfer borrows from when there are several.
 *
 * The rows are synthetic: the analytical time of each shape on that GPU
 * times a factor, so that a fit must find the factor and every other
 * source is told apart by its numbers, not only by its label. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-fixture.h"
#include "tilecast/tilecast.h"

static struct tc_specs *specs;

static void setup_specs(void)
{
    setup();
    ck_assert_msg(tc_specs_load(src_path("gpu_specs"), &specs) == TC_OK, "%s", tc_last_error());
}

static void teardown_specs(void)
{
    tc_specs_free(specs);
    specs = NULL;
    teardown();
}

static const struct tc_gpu *gpu_named(const char *id)
{
    const struct tc_gpu *g = tc_specs_find(specs, id);

    ck_assert_msg(g != NULL, "no spec of %s", id);
    return g;
}

/* Layer shapes (n, k) at several token counts m: 36 shapes, compute- and
 * memory-bound, small and large. */
static const int64_t layer_nk[][2] = {
    {4096, 4096}, {11008, 4096}, {4096, 11008}, {1024, 1024}, {8192, 2048}, {2048, 8192},
};
static const int64_t token_m[] = {64, 256, 1024, 2048, 4096, 8192};
#define N_SHAPES (sizeof(layer_nk) / sizeof(layer_nk[0]) * sizeof(token_m) / sizeof(token_m[0]))

static struct tc_gemm_query shape(size_t i, enum tc_dtype dtype)
{
    size_t nm = sizeof(token_m) / sizeof(token_m[0]);
    struct tc_gemm_query q = {
        token_m[i % nm], layer_nk[i / nm][0], layer_nk[i / nm][1], 1, dtype, TC_LAYOUT_NT, 0, 0, 0};

    return q;
}

static double analytical_us(const struct tc_gpu *g, const struct tc_gemm_query *q)
{
    struct tc_gemm_prediction pred;

    ck_assert_int_eq(tc_predict_gemm_analytical(g, q, &pred), TC_OK);
    return pred.time_us;
}

/* Adds one run of gpu_id to the database at path (created if new): the
 * first n_shapes shapes in dtype, each measured at `factor` times its
 * analytical time with a 3 % spread, timed by `timing`. */
static void add_rows(const char *path, const char *gpu_id, enum tc_dtype dtype, const char *timing,
                     double factor, size_t n_shapes)
{
    const struct tc_gpu *g = gpu_named(gpu_id);
    struct tc_run_info info = {.gpu_id = gpu_id,
                               .kind = "collected",
                               .backend = "cpu",
                               .config_hash = "cfg",
                               .timing = timing};
    struct tc_db *db;
    int64_t run_id;

    ck_assert_msg(tc_db_open(path, TC_DB_CREATE, &db) == TC_OK, "%s", tc_last_error());
    ck_assert_int_eq(tc_db_put_gpu(db, g), TC_OK);
    ck_assert_msg(tc_db_add_run(db, &info, &run_id) == TC_OK, "%s", tc_last_error());
    ck_assert_int_eq(tc_db_begin(db), TC_OK);
    for (size_t i = 0; i < n_shapes && i < N_SHAPES; i++) {
        struct tc_gemm_query q = shape(i, dtype);
        struct tc_gemm_row r = {0};

        r.run_id = run_id;
        r.dtype = r.dtype_c = dtype;
        r.compute = TC_DTYPE_FP32;
        r.layout = q.layout;
        r.m = q.m;
        r.n = q.n;
        r.k = q.k;
        r.batch = 1;
        r.time_us = factor * analytical_us(g, &q);
        r.spread_pct = 3;
        r.reps = 20;
        r.status = TC_STATUS_OK;
        ck_assert_msg(tc_db_insert_gemm(db, &r) == TC_OK, "%s", tc_last_error());
    }
    ck_assert_int_eq(tc_db_commit(db), TC_OK);
    tc_db_close(db);
}

static struct tc_predictor *predictor_on(const char *path)
{
    struct tc_predictor *p = tc_predictor_new(specs);

    ck_assert_ptr_nonnull(p);
    ck_assert_msg(tc_predictor_add_db(p, path) == TC_OK, "%s", tc_last_error());
    return p;
}

#define ck_assert_note_has(p, needle)                                                              \
    ck_assert_msg(strstr(tc_predictor_note(p), (needle)) != NULL, "note '%s' lacks '%s'",          \
                  tc_predictor_note(p), (needle))

/* lo and hi as the factors exp(lo_log) and exp(hi_log) of the time. */
static void assert_band(const struct tc_gemm_prediction *pr, double lo_log, double hi_log)
{
    ck_assert_double_eq_tol(pr->lo_us / pr->time_us, exp(lo_log), 1e-9);
    ck_assert_double_eq_tol(pr->hi_us / pr->time_us, exp(hi_log), 1e-9);
    ck_assert_double_eq_tol(pr->interval_level, 0.8, 1e-12);
}

/* A shape between the measured ones (m = 1536 was never measured). */
static struct tc_gemm_query unmeasured(enum tc_dtype dtype)
{
    struct tc_gemm_query q = {1536, 4096, 4096, 1, dtype, TC_LAYOUT_NT, 0, 0, 0};

    return q;
}

START_TEST(exact_measurement)
{
    const struct tc_gpu *a100 = gpu_named("a100-sxm4-80gb");
    struct tc_gemm_query q = shape(2, TC_DTYPE_FP16);
    struct tc_gemm_prediction pr;
    struct tc_predictor *p;

    add_rows(tmp_path("a.db"), "a100-sxm4-80gb", TC_DTYPE_FP16, "profiler-median", 1.3, N_SHAPES);
    p = predictor_on(tmp_path("a.db"));
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_MEASURED);
    ck_assert_str_eq(tc_source_name(pr.source), "measured");
    ck_assert_double_eq_tol(pr.time_us, 1.3 * analytical_us(a100, &q), 1e-9 * pr.time_us);
    /* the interval is the measurement's spread */
    ck_assert_double_eq_tol(pr.lo_us, pr.time_us * 0.97, 1e-9 * pr.time_us);
    ck_assert_double_eq_tol(pr.hi_us, pr.time_us * 1.03, 1e-9 * pr.time_us);
    ck_assert_int_eq(pr.neighbours, 0);
    ck_assert_str_eq(pr.calib_gpu, "");
    ck_assert_str_eq(tc_predictor_note(p), "");

    /* the same m, n and k in another layout or batch was not measured */
    q.layout = TC_LAYOUT_NN;
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_CALIBRATED);
    q.layout = TC_LAYOUT_NT;
    q.batch = 2;
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_CALIBRATED);

    /* asked for another timing method, the measurement comes back as it
     * is, and the note says how it was timed */
    q.batch = 1;
    ck_assert_int_eq(tc_predictor_set_timing(p, "wall-avg-incl-launch"), TC_OK);
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_MEASURED);
    ck_assert_double_eq_tol(pr.time_us, 1.3 * analytical_us(a100, &q), 1e-9 * pr.time_us);
    ck_assert_note_has(p, "measured with kernel timing only");
    tc_predictor_free(p);
}
END_TEST

START_TEST(calibrated_fit)
{
    const struct tc_gpu *a100 = gpu_named("a100-sxm4-80gb");
    struct tc_gemm_query q = unmeasured(TC_DTYPE_FP16);
    struct tc_gemm_prediction pr;
    struct tc_predictor *p;
    double model = analytical_us(a100, &q);

    add_rows(tmp_path("a.db"), "a100-sxm4-80gb", TC_DTYPE_FP16, "profiler-median", 1.3, N_SHAPES);
    p = predictor_on(tmp_path("a.db"));
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_CALIBRATED);
    ck_assert_str_eq(tc_source_name(pr.source), "calibrated");
    /* the fit found the factor every row was measured at */
    ck_assert_double_eq_tol(pr.time_us / model, 1.3, 0.04);
    ck_assert_int_gt(pr.neighbours, 0);
    ck_assert(pr.lo_us < pr.time_us && pr.time_us < pr.hi_us);
    ck_assert_double_eq_tol(pr.interval_level, 0.8, 1e-12);
    ck_assert_str_eq(pr.calib_gpu, "");
    ck_assert_str_eq(tc_predictor_note(p), "");

    /* analytical-only ignores the database: the model's time and band */
    tc_predictor_set_analytical(p, true);
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_ANALYTICAL);
    ck_assert_double_eq_tol(pr.time_us, model, 1e-9 * model);
    assert_band(&pr, -0.20, 0.20);
    tc_predictor_free(p);
}
END_TEST

START_TEST(transferred_other_gpu)
{
    const struct tc_gpu *h100 = gpu_named("h100-sxm5-80gb");
    const struct tc_gpu *a100_40 = gpu_named("a100-sxm4-40gb");
    struct tc_gemm_query q = unmeasured(TC_DTYPE_FP16);
    struct tc_gemm_prediction pr;
    struct tc_predictor *p;

    add_rows(tmp_path("a.db"), "a100-sxm4-80gb", TC_DTYPE_FP16, "profiler-median", 1.3, N_SHAPES);
    p = predictor_on(tmp_path("a.db"));

    /* another family: the cross-family band, and the source named */
    ck_assert_int_eq(tc_predict_gemm(p, h100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_str_eq(tc_source_name(pr.source), "transferred");
    ck_assert_str_eq(pr.calib_gpu, "a100-sxm4-80gb");
    ck_assert_note_has(p, "transferred from a100-sxm4-80gb fp16 measurements (ampere family");
    ck_assert_note_has(p, "to h100-sxm5-80gb fp16");
    assert_band(&pr, -0.12, 0.18);

    /* the same family: the efficiencies move too, with the narrower band */
    ck_assert_int_eq(tc_predict_gemm(p, a100_40, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_str_eq(pr.calib_gpu, "a100-sxm4-80gb");
    ck_assert_note_has(p, "efficiencies as fitted");
    assert_band(&pr, -0.10, 0.16);
    ck_assert_double_gt(pr.time_us / analytical_us(a100_40, &q), 1.15);

    /* without transfer: analytical, and the note says what the database has */
    tc_predictor_allow_transfer(p, false);
    ck_assert_int_eq(tc_predict_gemm(p, h100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_ANALYTICAL);
    ck_assert_str_eq(pr.calib_gpu, "");
    ck_assert_note_has(p, "measurements of a100-sxm4-80gb, not h100-sxm5-80gb");
    ck_assert_note_has(p, "transfer not allowed");
    ck_assert_double_eq_tol(pr.time_us, analytical_us(h100, &q), 1e-9 * pr.time_us);
    assert_band(&pr, -0.20, 0.20);
    tc_predictor_free(p);
}
END_TEST

START_TEST(transferred_other_dtype)
{
    const struct tc_gpu *a100 = gpu_named("a100-sxm4-80gb");
    struct tc_gemm_query q = unmeasured(TC_DTYPE_BF16);
    struct tc_gemm_prediction pr;
    struct tc_predictor *p;

    add_rows(tmp_path("a.db"), "a100-sxm4-80gb", TC_DTYPE_FP16, "profiler-median", 1.3, N_SHAPES);
    p = predictor_on(tmp_path("a.db"));

    /* bf16 learns from fp16 on the same GPU, its efficiencies left alone */
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_str_eq(pr.calib_gpu, "a100-sxm4-80gb");
    ck_assert_note_has(p, "transferred from a100-sxm4-80gb fp16 measurements");
    ck_assert_note_has(p, "a fit of another dtype says nothing about them");
    assert_band(&pr, -0.10, 0.16);
    ck_assert_int_eq(pr.neighbours, 0);

    /* fp32 runs on other pipes: nothing transfers, analytical */
    q.dtype = TC_DTYPE_FP32;
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_ANALYTICAL);
    ck_assert_str_eq(tc_source_name(pr.source), "analytical");
    ck_assert_note_has(p, "no measured fp32 rows for a100-sxm4-80gb: analytical");
    ck_assert_double_eq_tol(pr.time_us, analytical_us(a100, &q), 1e-9 * pr.time_us);
    assert_band(&pr, -0.20, 0.20);
    tc_predictor_free(p);
}
END_TEST

START_TEST(transferred_other_timing)
{
    const struct tc_gpu *a100 = gpu_named("a100-sxm4-80gb");
    struct tc_gemm_query q = unmeasured(TC_DTYPE_FP16);
    struct tc_gemm_query measured_q = shape(2, TC_DTYPE_FP16);
    struct tc_gemm_prediction pr;
    struct tc_predictor *p;

    /* wall-clock rows only, and kernel time asked for */
    add_rows(tmp_path("w.db"), "a100-sxm4-80gb", TC_DTYPE_FP16, "wall-avg-incl-launch", 1.3,
             N_SHAPES);
    p = predictor_on(tmp_path("w.db"));
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_str_eq(pr.calib_gpu, "a100-sxm4-80gb");
    ck_assert_note_has(p, "no measured row was timed as kernel");
    ck_assert_int_eq(pr.neighbours, 0);
    assert_band(&pr, -0.10, 0.16);

    /* a measured shape is still the measurement, said to be wall time */
    ck_assert_int_eq(tc_predict_gemm(p, a100, &measured_q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_MEASURED);
    ck_assert_note_has(p, "measured with wall timing only");

    /* asked for the rows' own method: calibrated */
    ck_assert_int_eq(tc_predictor_set_timing(p, "wall-avg-incl-launch"), TC_OK);
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_CALIBRATED);
    ck_assert_str_eq(tc_predictor_note(p), "");
    tc_predictor_free(p);
}
END_TEST

START_TEST(transfer_source_ranking)
{
    const struct tc_gpu *h100 = gpu_named("h100-sxm5-80gb");
    struct tc_gemm_query q = unmeasured(TC_DTYPE_FP16);
    struct tc_gemm_prediction pr;
    struct tc_predictor *p;

    /* the nearest generation beats more rows: Ampere (12 shapes) over
     * Volta (36) for a Hopper */
    add_rows(tmp_path("g.db"), "v100-sxm2-32gb", TC_DTYPE_FP16, "profiler-median", 1.2, N_SHAPES);
    add_rows(tmp_path("g.db"), "a100-sxm4-80gb", TC_DTYPE_FP16, "profiler-median", 1.3, 12);
    p = predictor_on(tmp_path("g.db"));
    ck_assert_int_eq(tc_predict_gemm(p, h100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_str_eq(pr.calib_gpu, "a100-sxm4-80gb");

    /* another vendor borrows from nobody */
    ck_assert_int_eq(tc_predict_gemm(p, gpu_named("mi250x"), &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_ANALYTICAL);
    ck_assert_note_has(p, "none transferable for this dtype");
    tc_predictor_free(p);

    /* the same GPU in a compatible dtype beats another GPU of its family in
     * this dtype, with more rows */
    add_rows(tmp_path("h.db"), "h200-sxm-141gb", TC_DTYPE_FP16, "profiler-median", 1.3, N_SHAPES);
    add_rows(tmp_path("h.db"), "h100-sxm5-80gb", TC_DTYPE_BF16, "profiler-median", 1.1, 12);
    p = predictor_on(tmp_path("h.db"));
    ck_assert_int_eq(tc_predict_gemm(p, h100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_str_eq(pr.calib_gpu, "h100-sxm5-80gb");
    ck_assert_note_has(p, "transferred from h100-sxm5-80gb bf16 measurements");
    /* and the H100's own bf16 rows answer bf16 as calibrated */
    q.dtype = TC_DTYPE_BF16;
    ck_assert_int_eq(tc_predict_gemm(p, h100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_CALIBRATED);
    tc_predictor_free(p);
}
END_TEST

/* A GPU whose rows were all timed by another method than the one asked
 * for borrows from rows timed as asked where a database has some: the
 * A100-SXM4-40GB's cookbook-like wall-clock rows say nothing about its
 * kernel time, the SXM4-80GB's kernel times of the same chip do. */
START_TEST(transfer_timed_as_asked)
{
    const struct tc_gpu *a100_40 = gpu_named("a100-sxm4-40gb");
    struct tc_gemm_query q = unmeasured(TC_DTYPE_FP16);
    struct tc_gemm_prediction pr;
    struct tc_predictor *p;

    add_rows(tmp_path("t.db"), "a100-sxm4-40gb", TC_DTYPE_FP16, "wall-avg-incl-launch", 1.6,
             N_SHAPES);
    add_rows(tmp_path("t.db"), "a100-sxm4-80gb", TC_DTYPE_FP16, "profiler-median", 1.3, 12);
    p = predictor_on(tmp_path("t.db"));
    ck_assert_int_eq(tc_predict_gemm(p, a100_40, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_str_eq(pr.calib_gpu, "a100-sxm4-80gb");
    ck_assert_note_has(p, "no measured row was timed as kernel; transferred from a100-sxm4-80gb "
                          "fp16 measurements timed so");
    /* the kernel-timed fit's efficiencies (1.3), within the family */
    ck_assert_double_gt(pr.time_us / analytical_us(a100_40, &q), 1.15);
    /* bf16, measured nowhere: from the kernel-timed fp16 rows, not from
     * the GPU's own wall-clock ones */
    q.dtype = TC_DTYPE_BF16;
    ck_assert_int_eq(tc_predict_gemm(p, a100_40, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_str_eq(pr.calib_gpu, "a100-sxm4-80gb");
    /* asked for the wall clock, the GPU's own rows answer: the choice
     * follows the method asked for, also after an answer was cached */
    ck_assert_int_eq(tc_predictor_set_timing(p, "wall-avg-incl-launch"), TC_OK);
    ck_assert_int_eq(tc_predict_gemm(p, a100_40, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_str_eq(pr.calib_gpu, "a100-sxm4-40gb");
    q.dtype = TC_DTYPE_FP16;
    ck_assert_int_eq(tc_predict_gemm(p, a100_40, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_CALIBRATED);
    tc_predictor_free(p);

    /* with no row timed as asked anywhere, the source's efficiencies stay
     * with it (NeuSight-like event-timed fp32 rows, kernel time asked) */
    q.dtype = TC_DTYPE_FP32;
    add_rows(tmp_path("e.db"), "a100-pcie-40gb", TC_DTYPE_FP32, "event-fastest5-mean", 1.3,
             N_SHAPES);
    p = predictor_on(tmp_path("e.db"));
    ck_assert_int_eq(tc_predict_gemm(p, gpu_named("a100-pcie-80gb"), &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_note_has(p, "a fit without kernel-timed rows has nothing that holds for kernel time");
    ck_assert_double_lt(pr.time_us / analytical_us(gpu_named("a100-pcie-80gb"), &q), 1.05);
    /* asked for events, they move within the family */
    ck_assert_int_eq(tc_predictor_set_timing(p, "event-fastest5-mean"), TC_OK);
    ck_assert_int_eq(tc_predict_gemm(p, gpu_named("a100-pcie-80gb"), &q, &pr), TC_OK);
    ck_assert_note_has(p, "efficiencies as fitted");
    tc_predictor_free(p);
}
END_TEST

/* Two GPUs of a family, one below the other on every resource, both
 * transferred from one GPU's rows of another dtype: the better one is no
 * slower than the source GPU's own answer for the dtype asked, whatever
 * tile each one's analytical pick has, and the note says when it binds. */
START_TEST(transfer_other_dtype_bounded)
{
    const struct tc_gpu *h100 = gpu_named("h100-sxm5-80gb");
    const struct tc_gpu *h200 = gpu_named("h200-sxm-141gb");
    const int64_t ms[] = {1, 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048};
    struct tc_gemm_prediction ph, pb;
    struct tc_predictor *p;
    size_t bound = 0;

    add_rows(tmp_path("b.db"), "h100-sxm5-80gb", TC_DTYPE_FP16, "profiler-median", 2.0, N_SHAPES);
    p = predictor_on(tmp_path("b.db"));
    for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
        struct tc_gemm_query q = {ms[i], 4096, 4096, 1, TC_DTYPE_BF16, TC_LAYOUT_NT, 0, 0, 0};

        ck_assert_int_eq(tc_predict_gemm(p, h100, &q, &ph), TC_OK);
        ck_assert_int_eq(ph.source, TC_SOURCE_TRANSFERRED);
        ck_assert_int_eq(tc_predict_gemm(p, h200, &q, &pb), TC_OK);
        ck_assert_int_eq(pb.source, TC_SOURCE_TRANSFERRED);
        ck_assert_str_eq(pb.calib_gpu, "h100-sxm5-80gb");
        ck_assert_msg(pb.time_us <= ph.time_us * (1 + 1e-12), "m=%lld: h200 %.3f > h100 %.3f us",
                      (long long)q.m, pb.time_us, ph.time_us);
        bound += strstr(tc_predictor_note(p), "no slower than the transferred answer of "
                                              "h100-sxm5-80gb") != NULL;
    }
    fprintf(stderr, "bf16 from h100 fp16: the bound held %zu of %zu h200 answers\n", bound,
            sizeof(ms) / sizeof(ms[0]));
    tc_predictor_free(p);
}
END_TEST

/* A lesser GPU's measurement, however timed, holds its kernel, which a
 * GPU above it on every resource runs no slower: it bounds that GPU's
 * kernel time from above, and the note says so. */
START_TEST(bounded_by_a_lesser_measurement)
{
    const struct tc_gpu *a100_40 = gpu_named("a100-sxm4-40gb");
    const struct tc_gpu *a100_80 = gpu_named("a100-sxm4-80gb");
    struct tc_gemm_query q = shape(20, TC_DTYPE_FP16);
    struct tc_gemm_prediction pr;
    struct tc_predictor *p;
    double wall = 0.8 * analytical_us(a100_40, &q);

    add_rows(tmp_path("l.db"), "a100-sxm4-40gb", TC_DTYPE_FP16, "wall-avg-incl-launch", 0.8,
             N_SHAPES);
    add_rows(tmp_path("l.db"), "a100-sxm4-80gb", TC_DTYPE_FP16, "profiler-median", 1.3, 12);
    p = predictor_on(tmp_path("l.db"));
    ck_assert_int_eq(tc_predict_gemm(p, a100_80, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_CALIBRATED);
    ck_assert_double_eq_tol(pr.time_us, wall, 1e-9 * wall);
    ck_assert_double_le(pr.lo_us, pr.time_us);
    ck_assert_note_has(p, "no slower than the wall-timed measurement of a100-sxm4-40gb");
    /* asked for the wall clock, another machine's host time bounds nothing */
    ck_assert_int_eq(tc_predictor_set_timing(p, "wall-avg-incl-launch"), TC_OK);
    ck_assert_int_eq(tc_predict_gemm(p, a100_80, &q, &pr), TC_OK);
    ck_assert_double_gt(pr.time_us, 1.1 * wall);
    tc_predictor_free(p);
}
END_TEST

static Suite *predictor_suite(void)
{
    Suite *s = suite_create("predictor");
    TCase *tc = tcase_create("source");

    tcase_add_checked_fixture(tc, setup_specs, teardown_specs);
    tcase_add_test(tc, exact_measurement);
    tcase_add_test(tc, calibrated_fit);
    tcase_add_test(tc, transferred_other_gpu);
    tcase_add_test(tc, transferred_other_dtype);
    tcase_add_test(tc, transferred_other_timing);
    tcase_add_test(tc, transfer_source_ranking);
    tcase_add_test(tc, transfer_timed_as_asked);
    tcase_add_test(tc, transfer_other_dtype_bounded);
    tcase_add_test(tc, bounded_by_a_lesser_measurement);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(predictor_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
