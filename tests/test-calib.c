/* Calibration: the robust fit on synthetic rows with known parameters (the
 * stored parameter text: test-calib-params.c), and on the measured data
 * ($TILECAST_MEASURED_DATA): held-out accuracy, exact lookups, source labels,
 * interval coverage, stored calibrations and their versions, databases of
 * another GPU, empty databases and cross-GPU transfer. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibrate.h"
#include "csv.h"
#include "tc-internal.h"
#include "tilecast/tilecast.h"

/* ------------------------------------------------------------------------ */
/* Measured rows from the vendored CSV files                                  */
/* ------------------------------------------------------------------------ */

struct mrow {
    char gpu[TC_ID_MAX];
    char timing[48];
    enum tc_dtype dtype;
    enum tc_layout layout;
    int64_t m, n, k, batch;
    double time_us;
};

struct mset {
    struct mrow *rows;
    size_t n;
};

static struct tc_specs *specs;

static const char *shared_path(const char *file, char *buf, size_t len)
{
    const char *dir = getenv("TILECAST_MEASURED_DATA");

    if (!dir || !*dir)
        return NULL;
    snprintf(buf, len, "%s/%s", dir, file);
    return access(buf, R_OK) == 0 ? buf : NULL;
}

/* Rows of `file` for gpu (NULL: all) with a time; NULL set if the shared
 * data is absent (the tests that need it then fail loudly). */
static struct mset load_rows(const char *file, const char *gpu)
{
    char path[4096];
    struct mset set = {NULL, 0};
    size_t cap = 0;
    FILE *f;
    struct tc_csv *csv;
    char **fields;
    int nf, col[10];
    static const char *const names[10] = {"gpu", "dtype",  "batch",   "m",      "n",
                                          "k",   "layout", "time_us", "timing", "op"};

    ck_assert_msg(shared_path(file, path, sizeof(path)),
                  "TILECAST_MEASURED_DATA/%s is missing: the measured data is required", file);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    csv = tc_csv_new(f, path);
    ck_assert_ptr_nonnull(csv);
    ck_assert_int_eq(tc_csv_next(csv, &nf, &fields), 1);
    for (int i = 0; i < 10; i++) {
        col[i] = tc_csv_find(nf, fields, names[i]);
        ck_assert_msg(col[i] >= 0, "%s: no column %s", path, names[i]);
    }
    while (tc_csv_next(csv, &nf, &fields) == 1) {
        struct mrow r;
        long long v[4] = {0};

        memset(&r, 0, sizeof(r));
        if (gpu && strcmp(fields[col[0]], gpu) != 0)
            continue;
        if (!fields[col[7]][0])
            continue;
        snprintf(r.gpu, sizeof(r.gpu), "%s", fields[col[0]]);
        snprintf(r.timing, sizeof(r.timing), "%s", fields[col[8]]);
        ck_assert_int_eq(tc_dtype_parse(fields[col[1]], &r.dtype), TC_OK);
        ck_assert_int_eq(tc_layout_parse(fields[col[6]], &r.layout), TC_OK);
        for (int j = 0; j < 4; j++) /* an empty batch is 1 */
            ck_assert(!fields[col[2 + j]][0] || tc_parse_i64(fields[col[2 + j]], &v[j]) == TC_OK);
        r.batch = v[0] > 0 ? v[0] : 1;
        r.m = v[1];
        r.n = v[2];
        r.k = v[3];
        ck_assert_int_eq(tc_parse_double(fields[col[7]], &r.time_us), TC_OK);
        if (set.n == cap) {
            cap = cap ? 2 * cap : 4096;
            set.rows = realloc(set.rows, cap * sizeof(*set.rows));
            ck_assert_ptr_nonnull(set.rows);
        }
        set.rows[set.n++] = r;
    }
    tc_csv_free(csv);
    fclose(f);
    return set;
}

/* Shape hash: never the same shape in both halves of a split. */
static uint64_t row_hash(const struct mrow *r)
{
    uint64_t h = 1469598103934665603ull;
    const int64_t v[5] = {r->m, r->n, r->k, r->batch, r->layout};

    for (int i = 0; i < 5; i++) {
        h ^= (uint64_t)v[i];
        h *= 1099511628211ull;
        h ^= h >> 27;
    }
    return h;
}

static bool in_train(const struct mrow *r)
{
    return row_hash(r) % 2 == 0;
}

/* Writes the rows selected by keep (NULL: all) into a new database at path,
 * one imported run per (gpu, timing method). Returns the rows written. */
static size_t make_db(const char *path, const struct mset *set, bool (*keep)(const struct mrow *),
                      bool keep_value)
{
    struct tc_db *db;
    size_t written = 0;
    struct {
        char gpu[TC_ID_MAX], timing[48];
        int64_t id;
    } runs[16];
    size_t n_runs = 0;

    unlink(path);
    ck_assert_msg(tc_db_open(path, TC_DB_CREATE, &db) == TC_OK, "%s", tc_last_error());
    ck_assert_int_eq(tc_db_begin(db), TC_OK);
    for (size_t i = 0; i < set->n; i++) {
        const struct mrow *r = &set->rows[i];
        struct tc_gemm_row row;
        size_t j;

        if (keep && keep(r) != keep_value)
            continue;
        for (j = 0; j < n_runs; j++)
            if (strcmp(runs[j].gpu, r->gpu) == 0 && strcmp(runs[j].timing, r->timing) == 0)
                break;
        if (j == n_runs) {
            struct tc_run_info info;
            const struct tc_gpu *g = tc_specs_find(specs, r->gpu);

            ck_assert_msg(g != NULL, "no spec for %s", r->gpu);
            ck_assert_int_eq(tc_db_put_gpu(db, g), TC_OK);
            memset(&info, 0, sizeof(info));
            info.gpu_id = r->gpu;
            info.kind = "imported";
            info.backend = "csv";
            info.timing = r->timing;
            info.source = "test fixture from the vendored measured data";
            info.config_hash = r->timing;
            ck_assert_int_eq(tc_db_add_run(db, &info, &runs[j].id), TC_OK);
            snprintf(runs[j].gpu, sizeof(runs[j].gpu), "%s", r->gpu);
            snprintf(runs[j].timing, sizeof(runs[j].timing), "%s", r->timing);
            n_runs++;
        }
        memset(&row, 0, sizeof(row));
        row.run_id = runs[j].id;
        row.dtype = row.dtype_c = r->dtype;
        row.compute = TC_DTYPE_FP32;
        row.layout = r->layout;
        row.m = r->m;
        row.n = r->n;
        row.k = r->k;
        row.batch = r->batch;
        row.time_us = r->time_us;
        row.min_us = r->time_us;
        row.reps = 1;
        row.status = TC_STATUS_OK;
        if (tc_db_insert_gemm(db, &row) == TC_OK)
            written++;
    }
    ck_assert_int_eq(tc_db_commit(db), TC_OK);
    tc_db_close(db);
    return written;
}

/* ------------------------------------------------------------------------ */
/* Held-out accuracy                                                         */
/* ------------------------------------------------------------------------ */

struct score {
    size_t n, n_big;
    double mape_big; /* rows >= 20 µs */
    double spearman; /* of TFLOP/s, rows >= 20 µs */
    double coverage; /* truth inside [lo, hi] */
    size_t by_source[4];
};

static const double *rank_vals;

static int cmp_rank(const void *a, const void *b)
{
    double x = rank_vals[*(const size_t *)a], y = rank_vals[*(const size_t *)b];

    return (x > y) - (x < y);
}

static void ranks(const double *v, size_t n, double *r)
{
    size_t *idx = malloc(n * sizeof(*idx));

    ck_assert_ptr_nonnull(idx);
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    rank_vals = v;
    qsort(idx, n, sizeof(*idx), cmp_rank);
    for (size_t i = 0; i < n;) {
        size_t j = i;

        while (j + 1 < n && v[idx[j + 1]] == v[idx[i]])
            j++;
        for (size_t t = i; t <= j; t++)
            r[idx[t]] = (double)(i + j) / 2;
        i = j + 1;
    }
    free(idx);
}

static double spearman(const double *a, const double *b, size_t n)
{
    double *ra = malloc(n * sizeof(double)), *rb = malloc(n * sizeof(double));
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;

    ck_assert(ra && rb);
    ranks(a, n, ra);
    ranks(b, n, rb);
    for (size_t i = 0; i < n; i++) {
        ma += ra[i];
        mb += rb[i];
    }
    ma /= (double)n;
    mb /= (double)n;
    for (size_t i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    free(ra);
    free(rb);
    return sab / sqrt(saa * sbb);
}

/* Predicts the rows of set selected by keep == keep_value on gpu_id. */
static struct score evaluate(struct tc_predictor *p, const char *gpu_id, const struct mset *set,
                             bool (*keep)(const struct mrow *), bool keep_value)
{
    const struct tc_gpu *gpu = tc_specs_find(specs, gpu_id);
    struct score s;
    double *tm = malloc(set->n * sizeof(double)), *tp = malloc(set->n * sizeof(double));
    double ape = 0;
    size_t covered = 0;
    FILE *dump = getenv("CALIB_DUMP") ? fopen(getenv("CALIB_DUMP"), "a") : NULL;

    memset(&s, 0, sizeof(s));
    ck_assert_ptr_nonnull(gpu);
    ck_assert(tm && tp);
    for (size_t i = 0; i < set->n; i++) {
        const struct mrow *r = &set->rows[i];
        struct tc_gemm_query q = {r->m, r->n, r->k, r->batch, r->dtype, r->layout, 0, 0, 0};
        struct tc_gemm_prediction pr;

        if (keep && keep(r) != keep_value)
            continue;
        /* compare like with like: a wall-clock row with a wall-clock prediction */
        ck_assert_int_eq(tc_predictor_set_timing(p, r->timing), TC_OK);
        ck_assert_msg(tc_predict_gemm(p, gpu, &q, &pr) == TC_OK, "%s", tc_last_error());
        ck_assert(pr.lo_us <= pr.time_us && pr.time_us <= pr.hi_us);
        if (pr.source == TC_SOURCE_ANALYTICAL) {
            /* kernel time: add the method's typical host cost, so that the
             * baseline is fair to wall-clock rows */
            enum tc_timing_class tclass = tc_timing_classify(r->timing);
            double host = tc_timing_default_host_us(tclass);

            if (pr.time_us + host < tc_timing_floor_us(tclass))
                host = tc_timing_floor_us(tclass) - pr.time_us;
            pr.time_us += host;
            pr.lo_us += host;
            pr.hi_us += host;
        }
        s.n++;
        s.by_source[pr.source]++;
        if (dump)
            fprintf(dump, "%s,%d,%lld,%lld,%lld,%lld,%s,%g,%g,%g,%g,%d,%g\n", gpu_id,
                    (int)pr.source, (long long)r->m, (long long)r->n, (long long)r->k,
                    (long long)r->batch, tc_layout_name(r->layout), r->time_us, pr.time_us,
                    pr.lo_us, pr.hi_us, pr.neighbours, pr.neighbour_dist);
        if (r->time_us >= pr.lo_us && r->time_us <= pr.hi_us)
            covered++;
        if (r->time_us >= 20) {
            double flops = 2.0 * (double)r->m * (double)r->n * (double)r->k * (double)r->batch;

            ape += fabs(pr.time_us / r->time_us - 1);
            tm[s.n_big] = flops / r->time_us;
            tp[s.n_big] = flops / pr.time_us;
            s.n_big++;
        }
    }
    if (dump)
        fclose(dump);
    s.mape_big = s.n_big ? 100 * ape / (double)s.n_big : 0;
    s.spearman = s.n_big > 2 ? spearman(tm, tp, s.n_big) : 0;
    s.coverage = s.n ? (double)covered / (double)s.n : 0;
    free(tm);
    free(tp);
    return s;
}

static void print_score(const char *what, const struct score *s)
{
    printf("%-44s rows %5zu (>=20us %5zu) MAPE %6.2f%% spearman %.4f coverage %.1f%% "
           "[meas %zu cal %zu xfer %zu ana %zu]\n",
           what, s->n, s->n_big, s->mape_big, s->spearman, 100 * s->coverage, s->by_source[0],
           s->by_source[1], s->by_source[2], s->by_source[3]);
    fflush(stdout);
}

static char tmp_db[4][256];

static const char *tmp_path(int i)
{
    if (!tmp_db[i][0])
        snprintf(tmp_db[i], sizeof(tmp_db[i]), "test-calib-%d-%ld.db", i, (long)getpid());
    return tmp_db[i];
}

static void setup(void)
{
    ck_assert_msg(tc_specs_load(NULL, &specs) == TC_OK, "%s", tc_last_error());
}

static void teardown(void)
{
    tc_specs_free(specs);
    specs = NULL;
    for (int i = 0; i < 4; i++) {
        if (tmp_db[i][0]) {
            char side[1100];

            unlink(tmp_db[i]);
            snprintf(side, sizeof(side), "%s-wal", tmp_db[i]);
            unlink(side);
            snprintf(side, sizeof(side), "%s-shm", tmp_db[i]);
            unlink(side);
        }
    }
}

/* ------------------------------------------------------------------------ */

static struct score holdout(const char *file, const char *gpu, bool analytical)
{
    struct mset set = load_rows(file, gpu);
    struct tc_predictor *p;
    struct score s;
    char what[128];

    ck_assert_uint_gt(set.n, 0);
    make_db(tmp_path(0), &set, in_train, true);
    p = tc_predictor_new(specs);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(tc_predictor_add_db(p, tmp_path(0)), TC_OK);
    tc_predictor_set_analytical(p, analytical);
    s = evaluate(p, gpu, &set, in_train, false);
    snprintf(what, sizeof(what), "%s %s %s", analytical ? "analytical" : "calibrated", file, gpu);
    print_score(what, &s);
    tc_predictor_free(p);
    free(set.rows);
    return s;
}

/* Held-out accuracy of the calibration on vidur_gemm.csv for one GPU: every
 * held-out row is answered by the calibration, the large shapes within 5%
 * and better than the analytical model, the rank order kept, and the
 * intervals covering 70-90% of the rows. */
static void check_vidur_holdout(const char *gpu)
{
    struct score a = holdout("vidur_gemm.csv", gpu, true);
    struct score c = holdout("vidur_gemm.csv", gpu, false);

    ck_assert_uint_eq(c.by_source[TC_SOURCE_CALIBRATED], c.n);
    ck_assert_double_le(c.mape_big, 5.0);
    ck_assert_double_ge(c.spearman, 0.95);
    ck_assert_double_lt(c.mape_big, a.mape_big);
    ck_assert_double_ge(c.coverage, 0.70);
    ck_assert_double_le(c.coverage, 0.90);
}

START_TEST(holdout_vidur_a100)
{
    check_vidur_holdout("a100-sxm4-80gb");
}
END_TEST

START_TEST(holdout_vidur_h100)
{
    check_vidur_holdout("h100-sxm5-80gb");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The fit on synthetic rows with known parameters                           */
/* ------------------------------------------------------------------------ */

START_TEST(fit_recovers_known_scales)
{
    enum { N = 600 };
    struct tc_calib_sample *s = calloc(N, sizeof(*s));
    struct tc_calib_params truth;
    struct tc_calib *c;
    const struct tc_calib_params *cp;
    uint64_t state = 12345;

    ck_assert_ptr_nonnull(s);
    memset(&truth, 0, sizeof(truth));
    truth.c_compute = 0.8;
    truth.c_memory = 1.3;
    truth.c_overhead = 1.5;
    truth.align_factor[0] = 1;
    truth.align_factor[1] = 1.2;
    truth.align_factor[2] = truth.align_factor[3] = 1;
    truth.host_us[TC_TIMING_WALL] = 18;
    for (int i = 0; i < N; i++) {
        double noise;

        state = state * 6364136223846793005ull + 1442695040888963407ull;
        s[i].m = 64 + (int64_t)((state >> 33) % 8000);
        s[i].n = 256 << (i % 6);
        s[i].k = 512 << (i % 4);
        s[i].batch = 1;
        s[i].layout = TC_LAYOUT_NT;
        s[i].align = i % 3 == 0 ? TC_ALIGN_16B : TC_ALIGN_128B;
        s[i].timing = i % 4 == 0 ? TC_TIMING_WALL : TC_TIMING_KERNEL;
        /* compute- and memory-bound rows both present */
        /* 300 TFLOP/s and 1.5 TB/s (or a third of it for odd rows) */
        s[i].compute_us = 2.0 * (double)s[i].m * (double)s[i].n * (double)s[i].k / 3e8;
        s[i].memory_us = (i % 2 ? 3.0 : 1.0) * 2.0 *
                         (double)(s[i].m * s[i].k + s[i].n * s[i].k + s[i].m * s[i].n) / 1.5e6;
        s[i].overhead_us = 4;
        noise = 1 + 0.01 * ((double)((state >> 11) % 2001) / 1000.0 - 1);
        s[i].time_us = tc_calib_model_us(&truth, &s[i], s[i].timing) * noise;
    }
    c = tc_calib_build(s, N, NULL);
    ck_assert_msg(c != NULL, "%s", tc_last_error());
    cp = tc_calib_params(c);
    ck_assert_double_eq_tol(cp->c_compute, 0.8, 0.8 * 0.03);
    ck_assert_double_eq_tol(cp->c_memory, 1.3, 1.3 * 0.03);
    ck_assert_double_eq_tol(cp->c_overhead, 1.5, 1.5 * 0.15);
    ck_assert_double_eq_tol(cp->align_factor[TC_ALIGN_16B], 1.2, 1.2 * 0.03);
    ck_assert_double_eq_tol(cp->host_us[TC_TIMING_WALL], 18, 2);
    ck_assert_uint_eq(tc_calib_rows(c), N);
    ck_assert_double_lt(cp->fit_p50_ape, 1.0);
    /* an exact lookup answers only for the timing class it was measured in */
    ck_assert_ptr_nonnull(tc_calib_find(c, s[0].layout, s[0].m, s[0].n, s[0].k, 1, s[0].timing));
    ck_assert_ptr_null(tc_calib_find(c, s[0].layout, s[0].m, s[0].n, s[0].k, 1, TC_TIMING_EVENT));
    tc_calib_free(c);
    tc_calib_free(NULL);
    /* bad rows are refused with the row named */
    s[7].time_us = -1;
    ck_assert_ptr_null(tc_calib_build(s, N, NULL));
    ck_assert_msg(strstr(tc_last_error(), "row 7"), "%s", tc_last_error());
    ck_assert_ptr_null(tc_calib_build(s, 0, NULL));
    free(s);
}
END_TEST

START_TEST(timing_classes)
{
    ck_assert_int_eq(tc_timing_classify(NULL), TC_TIMING_KERNEL);
    ck_assert_int_eq(tc_timing_classify("profiler-median"), TC_TIMING_KERNEL);
    ck_assert_int_eq(tc_timing_classify("event-median-l2flush"), TC_TIMING_KERNEL);
    ck_assert_int_eq(tc_timing_classify("event-fastest5-mean"), TC_TIMING_EVENT);
    /* mamf-finder: flushed and queued back to back (kernel time) in its
     * later versions, whichever summary; synchronized per call early on */
    ck_assert_int_eq(tc_timing_classify("event-mean-l2flush"), TC_TIMING_KERNEL);
    ck_assert_int_eq(tc_timing_classify("event-min"), TC_TIMING_EVENT);
    ck_assert_int_eq(tc_timing_classify("wall-avg-incl-launch"), TC_TIMING_WALL);
    ck_assert_int_eq(tc_timing_classify("wall-slowest"), TC_TIMING_WALL_MAX);
    ck_assert_str_eq(tc_timing_class_name(TC_TIMING_WALL), "wall");
    /* every tag of the shipped data and the collector has a known form;
     * a misspelt host method, which would fall through to kernel time,
     * does not */
    static const char *const known[] = {"kernel",
                                        "event",
                                        "wall",
                                        "wall-max",
                                        "cupti-median",
                                        "profiler-median",
                                        "tuning-efficiency",
                                        "event-fastest5-mean",
                                        "event-median-l2flush",
                                        "wall-slowest",
                                        "event-min"};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        ck_assert_msg(tc_timing_known(known[i]), "%s", known[i]);
    ck_assert(tc_timing_known(NULL));
    ck_assert(!tc_timing_known("evnet"));
    ck_assert(!tc_timing_known("wal-avg"));
    ck_assert(!tc_timing_known("bogus"));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Sources, notes and stored calibrations on the measured data               */
/* ------------------------------------------------------------------------ */

static struct tc_gemm_query query_of(const struct mrow *r)
{
    struct tc_gemm_query q = {r->m, r->n, r->k, r->batch, r->dtype, r->layout, 0, 0, 0};

    return q;
}

START_TEST(exact_measured_and_labels)
{
    struct mset set = load_rows("vidur_gemm.csv", "a100-sxm4-80gb");
    const struct tc_gpu *a100 = tc_specs_find(specs, "a100-sxm4-80gb");
    const struct tc_gpu *h100 = tc_specs_find(specs, "h100-sxm5-80gb");
    struct tc_predictor *p = tc_predictor_new(specs);
    struct tc_gemm_prediction pr, one[3], many[3];
    struct tc_gemm_query q, qs[3];
    const struct mrow *train = NULL, *test = NULL;
    int errs[3];

    ck_assert_ptr_nonnull(p);
    make_db(tmp_path(0), &set, in_train, true);
    for (size_t i = 0; i < set.n && (!train || !test); i++) {
        if (set.rows[i].time_us < 50)
            continue;
        if (in_train(&set.rows[i]) && !train)
            train = &set.rows[i];
        if (!in_train(&set.rows[i]) && !test)
            test = &set.rows[i];
    }
    ck_assert(train && test);
    ck_assert_int_eq(tc_predictor_add_db(p, tmp_path(0)), TC_OK);

    /* a measured shape returns its measurement */
    q = query_of(train);
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_MEASURED);
    ck_assert_double_eq(pr.time_us, train->time_us);
    ck_assert(pr.lo_us < pr.time_us && pr.hi_us > pr.time_us);
    ck_assert_str_eq(tc_source_name(pr.source), "measured");

    /* a shape not in the database is calibrated, with its neighbours */
    q = query_of(test);
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_CALIBRATED);
    ck_assert_int_gt(pr.neighbours, 0);
    ck_assert_double_gt(pr.neighbour_dist, 0);
    ck_assert_double_eq_tol(pr.interval_level, 0.8, 1e-9);
    ck_assert(pr.lo_us < pr.time_us && pr.time_us < pr.hi_us);
    ck_assert_double_lt(fabs(pr.time_us / test->time_us - 1), 0.25);
    ck_assert_str_eq(tc_predictor_note(p), "");

    /* a dtype of the same class on the same GPU transfers, labelled */
    q.dtype = TC_DTYPE_BF16;
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_str_eq(pr.calib_gpu, "a100-sxm4-80gb");

    /* another GPU: transferred from the A100 rows, and said so */
    q = query_of(test);
    ck_assert_int_eq(tc_predict_gemm(p, h100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_str_eq(pr.calib_gpu, "a100-sxm4-80gb");
    ck_assert_msg(strstr(tc_predictor_note(p), "transferred from a100-sxm4-80gb"), "%s",
                  tc_predictor_note(p));

    /* ... unless transfer is not allowed: analytical, and the note says why */
    tc_predictor_allow_transfer(p, false);
    ck_assert_int_eq(tc_predict_gemm(p, h100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_ANALYTICAL);
    ck_assert_str_eq(pr.calib_gpu, "");
    ck_assert_msg(strstr(tc_predictor_note(p), "a100-sxm4-80gb") &&
                      strstr(tc_predictor_note(p), "not h100-sxm5-80gb") &&
                      strstr(tc_predictor_note(p), "transfer not allowed"),
                  "%s", tc_predictor_note(p));
    ck_assert(pr.lo_us < pr.time_us && pr.time_us < pr.hi_us);

    /* --analytical ignores every database */
    tc_predictor_set_analytical(p, true);
    q = query_of(train);
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_ANALYTICAL);
    ck_assert_double_ne(pr.time_us, train->time_us);
    tc_predictor_set_analytical(p, false);

    /* batch mode gives the single predictions */
    qs[0] = query_of(train);
    qs[1] = query_of(test);
    qs[2] = query_of(test);
    qs[2].m = 0; /* a bad row fails alone */
    ck_assert_int_eq(tc_predict_gemm_batch(p, a100, 3, qs, many, errs), 1);
    ck_assert_int_eq(errs[0], TC_OK);
    ck_assert_int_lt(errs[2], 0);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(tc_predict_gemm(p, a100, &qs[i], &one[i]), TC_OK);
        ck_assert_double_eq(one[i].time_us, many[i].time_us);
        ck_assert_int_eq(one[i].source, many[i].source);
    }
    tc_predictor_free(p);
    tc_predictor_free(NULL);
    free(set.rows);
}
END_TEST

START_TEST(empty_and_bad_databases)
{
    struct mset none = {NULL, 0};
    const struct tc_gpu *a100 = tc_specs_find(specs, "a100-sxm4-80gb");
    struct tc_gemm_query q = {4096, 4096, 4096, 1, TC_DTYPE_FP16, TC_LAYOUT_NT, 0, 0, 0};
    struct tc_gemm_prediction pr;
    struct tc_predictor *p = tc_predictor_new(specs);
    FILE *f;

    make_db(tmp_path(1), &none, NULL, true);
    ck_assert_int_eq(tc_predictor_add_db(p, tmp_path(1)), TC_OK);
    ck_assert_int_eq(tc_predict_gemm(p, a100, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_ANALYTICAL);
    ck_assert_msg(strstr(tc_predictor_note(p), "no measured rows"), "%s", tc_predictor_note(p));
    ck_assert(pr.lo_us < pr.time_us && pr.time_us < pr.hi_us);

    /* missing files and files that are not databases are refused */
    ck_assert_int_lt(tc_predictor_add_db(p, "no-such-file.db"), 0);
    ck_assert_msg(strstr(tc_last_error(), "no-such-file.db"), "%s", tc_last_error());
    f = fopen(tmp_path(2), "w");
    ck_assert_ptr_nonnull(f);
    fputs("gpu,dtype\nnot,a database\n", f);
    fclose(f);
    ck_assert_int_lt(tc_predictor_add_db(p, tmp_path(2)), 0);
    ck_assert_int_lt(tc_predictor_add_db(p, NULL), 0);
    ck_assert_int_lt(tc_predictor_add_db(NULL, tmp_path(1)), 0);
    ck_assert_int_lt(tc_predict_gemm(p, NULL, &q, &pr), 0);
    ck_assert_ptr_null(tc_predictor_new(NULL));
    tc_predictor_free(p);
}
END_TEST

static double predict_one(const char *db, const struct tc_gpu *gpu, const struct mrow *r,
                          char *note, size_t len)
{
    struct tc_predictor *p = tc_predictor_new(specs);
    struct tc_gemm_query q = query_of(r);
    struct tc_gemm_prediction pr;

    ck_assert_int_eq(tc_predictor_add_db(p, db), TC_OK);
    ck_assert_int_eq(tc_predict_gemm(p, gpu, &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_CALIBRATED);
    snprintf(note, len, "%s", tc_predictor_note(p));
    tc_predictor_free(p);
    return pr.time_us;
}

START_TEST(stored_calibration_reuse_and_versions)
{
    struct mset set = load_rows("vidur_gemm.csv", "h100-sxm5-80gb");
    const struct tc_gpu *h100 = tc_specs_find(specs, "h100-sxm5-80gb");
    const struct mrow *test = NULL;
    struct tc_calibration_row row;
    struct tc_calib_params cp;
    struct tc_calib *c = NULL;
    struct tc_db *db;
    char note[512];
    double fresh, reused, old;

    make_db(tmp_path(0), &set, in_train, true);
    for (size_t i = 0; i < set.n && !test; i++)
        if (!in_train(&set.rows[i]) && set.rows[i].time_us > 100)
            test = &set.rows[i];
    ck_assert_ptr_nonnull(test);
    fresh = predict_one(tmp_path(0), h100, test, note, sizeof(note));
    /* predicting never writes to a database */
    ck_assert_int_eq(tc_db_open(tmp_path(0), TC_DB_READONLY, &db), TC_OK);
    ck_assert_int_eq(tc_db_get_calibration(db, "h100-sxm5-80gb", TC_DTYPE_FP16, -1,
                                           TC_CALIB_MODEL_VERSION, NULL, &row),
                     TC_ERR_NOT_FOUND);
    tc_db_close(db);

    /* fit once and store: the same prediction, now without refitting */
    ck_assert_int_eq(tc_db_open(tmp_path(0), TC_DB_READWRITE, &db), TC_OK);
    ck_assert_int_eq(
        tc_calib_from_db(specs, db, "h100-sxm5-80gb", TC_DTYPE_FP16, false, &c, NULL, 0), TC_OK);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(tc_calib_to_row(c, "h100-sxm5-80gb", TC_DTYPE_FP16, &row), TC_OK);
    ck_assert_int_eq(row.model_version, TC_CALIB_MODEL_VERSION);
    ck_assert_int_eq(row.n_rows, (int64_t)tc_calib_rows(c));
    ck_assert_int_eq(tc_db_put_calibration(db, &row), TC_OK);
    tc_calib_free(c);
    reused = predict_one(tmp_path(0), h100, test, note, sizeof(note));
    ck_assert_double_eq_tol(reused, fresh, fresh * 1e-9);

    /* proof that the stored parameters are used as they are, not refitted:
     * doctor the stored interval and see it in the prediction */
    ck_assert_int_eq(tc_calib_params_parse(row.params_json, &cp), TC_OK);
    cp.q_hi[2] = 0.5;
    ck_assert_int_eq(tc_calib_params_format(&cp, row.params_json, sizeof(row.params_json)), TC_OK);
    ck_assert_int_eq(tc_db_put_calibration(db, &row), TC_OK);
    tc_db_close(db);
    {
        struct tc_predictor *p = tc_predictor_new(specs);
        struct tc_gemm_query q = query_of(test);
        struct tc_gemm_prediction pr;

        ck_assert_int_eq(tc_predictor_add_db(p, tmp_path(0)), TC_OK);
        ck_assert_int_eq(tc_predict_gemm(p, h100, &q, &pr), TC_OK);
        ck_assert_double_eq_tol(pr.time_us, fresh, fresh * 1e-9);
        ck_assert_double_eq_tol(pr.hi_us, pr.time_us * exp(0.5), pr.time_us * 1e-9);
        tc_predictor_free(p);
    }

    /* nor one fitted to another analytical model (its fingerprint differs),
     * even under the same version number */
    ck_assert_uint_eq(cp.model_fp, tc_calib_model_fingerprint(h100, TC_DTYPE_FP16));
    ck_assert_uint_ne(cp.model_fp, tc_calib_model_fingerprint(h100, TC_DTYPE_FP32));
    cp.model_fp ^= 0x5a5a;
    ck_assert_int_eq(tc_calib_params_format(&cp, row.params_json, sizeof(row.params_json)), TC_OK);
    ck_assert_int_eq(tc_db_open(tmp_path(0), TC_DB_READWRITE, &db), TC_OK);
    ck_assert_int_eq(tc_db_put_calibration(db, &row), TC_OK);
    tc_db_close(db);
    old = predict_one(tmp_path(0), h100, test, note, sizeof(note));
    ck_assert_double_eq_tol(old, fresh, fresh * 1e-9);
    ck_assert_msg(strstr(note, "another analytical model") && strstr(note, "recomputed"), "%s",
                  note);

    /* a calibration of another model version is never used: recomputed in
     * memory, and the note says so */
    make_db(tmp_path(0), &set, in_train, true);
    row.model_version = TC_CALIB_MODEL_VERSION + 1;
    ck_assert_int_eq(tc_db_open(tmp_path(0), TC_DB_READWRITE, &db), TC_OK);
    ck_assert_int_eq(tc_db_put_calibration(db, &row), TC_OK);
    tc_db_close(db);
    old = predict_one(tmp_path(0), h100, test, note, sizeof(note));
    ck_assert_double_eq_tol(old, fresh, fresh * 1e-9);
    ck_assert_msg(strstr(note, "model version") && strstr(note, "recomputed in memory"), "%s",
                  note);
    free(set.rows);
}
END_TEST

/* Predictions follow the timing method asked for: kernel time by default,
 * plus the fitted host cost of a wall-clock method. A measured shape
 * answers with its measurement in either, saying how it was timed when that
 * is not the method asked for. */
START_TEST(timing_methods_in_predictions)
{
    struct mset set = load_rows("cookbook_gemm.csv", "a100-sxm4-40gb");
    const struct tc_gpu *gpu = tc_specs_find(specs, "a100-sxm4-40gb");
    struct tc_predictor *p = tc_predictor_new(specs);
    const struct mrow *wall = NULL;
    struct tc_gemm_prediction kernel_pr, wall_pr;
    struct tc_gemm_query q, near;

    for (size_t i = 0; i < set.n && !wall; i++)
        if (strcmp(set.rows[i].timing, "wall-avg-incl-launch") == 0 && set.rows[i].m <= 64)
            wall = &set.rows[i];
    ck_assert_ptr_nonnull(wall);
    make_db(tmp_path(0), &set, NULL, true);
    ck_assert_int_eq(tc_predictor_add_db(p, tmp_path(0)), TC_OK);
    q = query_of(wall);
    ck_assert_int_eq(tc_predictor_set_timing(p, "wall-avg-incl-launch"), TC_OK);
    ck_assert_int_eq(tc_predict_gemm(p, gpu, &q, &wall_pr), TC_OK);
    ck_assert_int_eq(wall_pr.source, TC_SOURCE_MEASURED);
    ck_assert_double_eq(wall_pr.time_us, wall->time_us);
    ck_assert_str_eq(tc_predictor_note(p), "");
    ck_assert_int_eq(tc_predictor_set_timing(p, NULL), TC_OK);
    ck_assert_int_eq(tc_predict_gemm(p, gpu, &q, &kernel_pr), TC_OK);
    ck_assert_int_eq(kernel_pr.source, TC_SOURCE_MEASURED);
    ck_assert_double_eq(kernel_pr.time_us, wall->time_us);
    ck_assert_msg(strstr(tc_predictor_note(p), "measured with wall timing only"), "%s",
                  tc_predictor_note(p));
    /* a shape next to it, not measured: no row was kernel-timed, so the
     * fit's efficiencies stay with the wall clock, and the prediction says
     * so. A tiny GEMM's kernel is a few µs; the wall clock adds launch and
     * synchronize, some 15-40 µs */
    near = q;
    near.m += 8;
    ck_assert_int_eq(tc_predict_gemm(p, gpu, &near, &kernel_pr), TC_OK);
    ck_assert_int_eq(kernel_pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_ptr_nonnull(strstr(tc_predictor_note(p), "no measured row was timed as kernel"));
    ck_assert_int_eq(tc_predictor_set_timing(p, "wall-avg-incl-launch"), TC_OK);
    ck_assert_int_eq(tc_predict_gemm(p, gpu, &near, &wall_pr), TC_OK);
    ck_assert_int_eq(wall_pr.source, TC_SOURCE_CALIBRATED);
    ck_assert_double_lt(kernel_pr.time_us, 15);
    ck_assert_double_gt(wall_pr.time_us - kernel_pr.time_us, 10);
    tc_predictor_free(p);
    free(set.rows);
}
END_TEST

/* Without databases the shipped prebuilt ones answer: their GPU's measured
 * shapes, calibration for the rest, transfers for GPUs without one. */
START_TEST(prebuilt_default)
{
    const struct tc_gpu *a100 = tc_specs_find(specs, "a100-sxm4-80gb");
    const struct tc_gpu *h200 = tc_specs_find(specs, "h200-sxm-141gb");
    /* a Llama-2-7B MLP down projection at 4096 tokens, measured by Vidur */
    struct tc_gemm_query measured_q = {4096, 4096, 11008, 1, TC_DTYPE_FP16, TC_LAYOUT_NT, 0, 0, 0};
    struct tc_gemm_query other_q = {4001, 4096, 11008, 1, TC_DTYPE_FP16, TC_LAYOUT_NT, 0, 0, 0};
    struct tc_gemm_prediction pr;
    struct tc_predictor *p = tc_predictor_new(specs);
    char path[4096];

    snprintf(path, sizeof(path), "%s/db/prebuilt/a100-sxm4-80gb.db", tc_data_dir());
    ck_assert_msg(access(path, R_OK) == 0, "%s is not shipped", path);
    ck_assert_ptr_nonnull(h200);
    ck_assert_int_eq(tc_predict_gemm(p, a100, &measured_q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_MEASURED);
    ck_assert_int_eq(tc_predict_gemm(p, a100, &other_q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_CALIBRATED);
    ck_assert_int_gt(pr.neighbours, 0);
    /* the nearest generation with data: Hopper's H100 */
    ck_assert_int_eq(tc_predict_gemm(p, h200, &other_q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_str_eq(pr.calib_gpu, "h100-sxm5-80gb");
    tc_predictor_use_prebuilt(p, false);
    ck_assert_int_eq(tc_predict_gemm(p, a100, &measured_q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_ANALYTICAL);
    tc_predictor_free(p);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Transfer across GPUs: better than the analytical model alone              */
/* ------------------------------------------------------------------------ */

static bool all_rows(const struct mrow *r)
{
    (void)r;
    return true;
}

/* MAPE (rows >= 20 us) of the transfer from one data set's GPU to another's
 * and of the analytical model on the same rows; the transferred intervals'
 * coverage (every row) in *coverage when not NULL. */
static void transfer_pair(const char *file_from, const char *from, const char *file_to,
                          const char *to, double *mape_transfer, double *mape_analytical,
                          double *coverage)
{
    struct mset src = load_rows(file_from, from), dst = load_rows(file_to, to);
    struct tc_predictor *p = tc_predictor_new(specs);
    struct score t, a;
    char what[160];

    make_db(tmp_path(3), &src, NULL, true);
    ck_assert_int_eq(tc_predictor_add_db(p, tmp_path(3)), TC_OK);
    t = evaluate(p, to, &dst, all_rows, true);
    ck_assert_uint_eq(t.by_source[TC_SOURCE_TRANSFERRED], t.n);
    tc_predictor_set_analytical(p, true);
    a = evaluate(p, to, &dst, all_rows, true);
    snprintf(what, sizeof(what), "transferred %s -> %s", from, to);
    print_score(what, &t);
    snprintf(what, sizeof(what), "analytical  %s", to);
    print_score(what, &a);
    *mape_transfer = t.mape_big;
    *mape_analytical = a.mape_big;
    if (coverage)
        *coverage = t.coverage;
    tc_predictor_free(p);
    free(src.rows);
    free(dst.rows);
}

/* Transfers beat the analytical model alone where the source's fit holds
 * something that moves: the fixed-cost scale of kernel-timed rows across
 * families, the efficiencies within one (measured: A100 -> H100 8.66% MAPE
 * against 9.57%, H100 -> A100 7.55% against 7.81%; README has all twelve
 * pairs). Their 80% intervals cover 70-95% of the rows (measured 80.2%,
 * 90.5%). The figures are printed for the report. */
START_TEST(transfer_a100_to_h100)
{
    double t, a, cov;

    transfer_pair("vidur_gemm.csv", "a100-sxm4-80gb", "vidur_gemm.csv", "h100-sxm5-80gb", &t, &a,
                  &cov);
    ck_assert_double_lt(t, a);
    ck_assert_double_ge(cov, 0.70);
    ck_assert_double_le(cov, 0.95);
}
END_TEST

START_TEST(transfer_h100_to_a100)
{
    double t, a, cov;

    transfer_pair("vidur_gemm.csv", "h100-sxm5-80gb", "vidur_gemm.csv", "a100-sxm4-80gb", &t, &a,
                  &cov);
    ck_assert_double_lt(t, a);
    ck_assert_double_ge(cov, 0.70);
    ck_assert_double_le(cov, 0.95);
}
END_TEST

/* Within a family the efficiencies move, but not from rows of another
 * timing method: the A100-40GB's wall-clock fit (no fixed-cost scale nor
 * alignment penalty) leaves the A100-80GB's kernel times analytical. */
START_TEST(transfer_a100_40_to_80)
{
    double t, a, cov;

    transfer_pair("cookbook_gemm.csv", "a100-sxm4-40gb", "vidur_gemm.csv", "a100-sxm4-80gb", &t, &a,
                  &cov);
    ck_assert_double_eq_tol(t, a, 1e-9 * a);
    ck_assert_double_ge(cov, 0.70);
    ck_assert_double_le(cov, 0.95);
}
END_TEST

/* A transfer must not make things worse where little moves. Kernel-timed
 * A100 rows to V100's wall-clock rows: the A100 compute scale stays with
 * its machine, and the typical host cost already holds the fixed cost the
 * overhead scale would add (with either, 10.0-11.3% against 9.02%). The
 * other way within a family, to the A100-40GB's wall-clock rows, the two
 * data sets of one chip agree to within their noise. */
START_TEST(transfer_no_worse)
{
    double t, a;

    transfer_pair("vidur_gemm.csv", "a100-sxm4-80gb", "cookbook_gemm.csv", "v100-sxm2-32gb", &t, &a,
                  NULL);
    ck_assert_double_lt(t, a + 0.1);
    transfer_pair("vidur_gemm.csv", "a100-sxm4-80gb", "cookbook_gemm.csv", "a100-sxm4-40gb", &t, &a,
                  NULL);
    ck_assert_double_lt(t, a + 0.1);
}
END_TEST

/* A fit of wall-clock rows only has no fixed-cost scale (the host cost
 * takes it), and its efficiencies do not cross families: from the
 * A100-40GB to V100 the transfer is the analytical model, labelled. */
START_TEST(transfer_wall_clock_across_families)
{
    double t, a;
    struct tc_predictor *p;
    struct tc_gemm_query q = {1024, 1024, 1024, 1, TC_DTYPE_FP16, TC_LAYOUT_NN, 0, 0, 0};
    struct tc_gemm_prediction pr;

    transfer_pair("cookbook_gemm.csv", "a100-sxm4-40gb", "cookbook_gemm.csv", "v100-sxm2-32gb", &t,
                  &a, NULL);
    ck_assert_double_eq_tol(t, a, 1e-9 * a);
    /* and the note says so (transfer_pair left the source's database) */
    p = tc_predictor_new(specs);
    ck_assert_int_eq(tc_predictor_add_db(p, tmp_path(3)), TC_OK);
    ck_assert_int_eq(tc_predict_gemm(p, tc_specs_find(specs, "v100-sxm2-32gb"), &q, &pr), TC_OK);
    ck_assert_int_eq(pr.source, TC_SOURCE_TRANSFERRED);
    ck_assert_msg(strstr(tc_predictor_note(p), "nothing that crosses families"), "%s",
                  tc_predictor_note(p));
    tc_predictor_free(p);
}
END_TEST

/* What a transfer carries across families (tc_calib_transfer_params): the
 * alignment factors only for tensor-core targets (SIMT kernels have no
 * narrow-load path), the methods' typical host costs and, with them, the
 * typical floor of an event-timed call. */
START_TEST(transfer_rules)
{
    struct tc_calib_params src, out;
    struct tc_calib_sample smp = {.m = 64,
                                  .n = 64,
                                  .k = 64,
                                  .batch = 1,
                                  .timing = TC_TIMING_EVENT,
                                  .compute_us = 4,
                                  .memory_us = 2,
                                  .overhead_us = 3,
                                  .kernel_slot = -1};

    memset(&src, 0, sizeof(src));
    src.c_compute = 0.9;
    src.c_memory = 1.1;
    src.c_overhead = 1.5;
    for (int j = 0; j < TC_CALIB_ALIGN_CLASSES; j++)
        src.align_factor[j] = j ? 0.96 : 1;
    src.host_us[TC_TIMING_EVENT] = 24;
    tc_calib_transfer_params(&src, TC_ARCH_AMPERE, TC_ARCH_VOLTA, false, true, false, &out);
    for (int j = 0; j < TC_CALIB_ALIGN_CLASSES; j++)
        ck_assert_double_eq(out.align_factor[j], 1);
    ck_assert_double_eq(out.c_compute, 1);
    ck_assert_double_eq(out.c_memory, 1);
    ck_assert(out.host_typical);
    tc_calib_transfer_params(&src, TC_ARCH_AMPERE, TC_ARCH_VOLTA, false, true, true, &out);
    ck_assert_double_eq(out.align_factor[1], 0.96);
    /* the same GPU, another dtype: the machine's host cost, the fixed-cost
     * scale and the alignment stay, the efficiencies do not */
    {
        struct tc_calib_params o2;

        tc_calib_transfer_params(&src, TC_ARCH_HOPPER, TC_ARCH_HOPPER, true, false, true, &o2);
        ck_assert_double_eq(o2.c_compute, 1);
        ck_assert_double_eq(o2.c_memory, 1);
        ck_assert_int_eq(o2.n_kernels, 0);
        ck_assert_double_eq(o2.c_overhead, 1.5);
        ck_assert_double_eq(o2.align_factor[1], 0.96);
        ck_assert_double_eq(o2.host_us[TC_TIMING_EVENT], 24);
        ck_assert(!o2.host_typical);
        /* within a family, the same dtype: the efficiencies move */
        tc_calib_transfer_params(&src, TC_ARCH_AMPERE, TC_ARCH_AMPERE, false, true, true, &o2);
        ck_assert_double_eq(o2.c_compute, 0.9);
    }
    /* the typical host cost adds to the unscaled fixed cost and the body,
     * and the result is never below the method's floor */
    ck_assert_double_eq_tol(tc_calib_model_us(&out, &smp, TC_TIMING_EVENT),
                            3 + 4 + tc_timing_default_host_us(TC_TIMING_EVENT), 1e-9);
    ck_assert(tc_calib_model_us(&out, &smp, TC_TIMING_EVENT) >=
              tc_timing_floor_us(TC_TIMING_EVENT));
    ck_assert_double_eq_tol(tc_calib_model_us(&out, &smp, TC_TIMING_KERNEL), 1.5 * 3 + 4, 1e-9);
    /* a fitted (not typical) host cost is the machine's own: no floor */
    ck_assert_double_eq_tol(tc_calib_model_us(&src, &smp, TC_TIMING_EVENT), 1.5 * 3 + 4 * 0.9 + 24,
                            1e-9);
}
END_TEST

/* The predictor passes a query's op to a calibration fitted on event-timed
 * rows: nn.Linear answers slower than a plain call of the same shape under
 * that convention, and the same in kernel time. */
START_TEST(linear_op_in_predictions)
{
    struct mset set = load_rows("neusight_gemm.csv", "a100-pcie-40gb");
    const struct tc_gpu *gpu = tc_specs_find(specs, "a100-pcie-40gb");
    struct tc_predictor *p = tc_predictor_new(specs);
    struct tc_gemm_query q = {3000, 1000, 700, 1, TC_DTYPE_FP32, TC_LAYOUT_NT, 0, 0, 0};
    struct tc_gemm_prediction lin, mm;

    ck_assert_uint_gt(set.n, 1000);
    set.n = 1000; /* nn.Linear rows come first: enough for a fit */
    make_db(tmp_path(0), &set, NULL, true);
    ck_assert_int_eq(tc_predictor_add_db(p, tmp_path(0)), TC_OK);
    ck_assert_int_eq(tc_predictor_set_timing(p, "event-fastest5-mean"), TC_OK);
    q.op = TC_GEMM_OP_LINEAR;
    ck_assert_int_eq(tc_predict_gemm(p, gpu, &q, &lin), TC_OK);
    q.op = TC_GEMM_OP_MM;
    ck_assert_int_eq(tc_predict_gemm(p, gpu, &q, &mm), TC_OK);
    ck_assert_int_eq(lin.source, TC_SOURCE_CALIBRATED);
    ck_assert_msg(lin.time_us - mm.time_us > 15 && lin.time_us - mm.time_us < 35,
                  "linear %.2f us, mm %.2f us", lin.time_us, mm.time_us);
    ck_assert_double_gt(lin.lo_us, mm.lo_us);
    ck_assert_int_eq(tc_predictor_set_timing(p, "profiler-median"), TC_OK);
    q.op = TC_GEMM_OP_LINEAR;
    ck_assert_int_eq(tc_predict_gemm(p, gpu, &q, &lin), TC_OK);
    q.op = TC_GEMM_OP_MM;
    ck_assert_int_eq(tc_predict_gemm(p, gpu, &q, &mm), TC_OK);
    ck_assert_double_eq(lin.time_us, mm.time_us);
    tc_predictor_free(p);
    free(set.rows);
}
END_TEST

/* The stored parameter text (test-calib-params.c). */
TCase *calib_params_tcase(void);
TCase *calib_host_tcase(void);

static Suite *calib_suite(void)
{
    Suite *s = suite_create("calib");
    TCase *fit = tcase_create("fit");
    TCase *tc = tcase_create("measured");

    tcase_add_test(fit, fit_recovers_known_scales);
    tcase_add_test(fit, timing_classes);
    tcase_add_test(fit, transfer_rules);
    suite_add_tcase(s, fit);
    suite_add_tcase(s, calib_params_tcase());
    suite_add_tcase(s, calib_host_tcase());

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, holdout_vidur_a100);
    tcase_add_test(tc, holdout_vidur_h100);
    tcase_add_test(tc, exact_measured_and_labels);
    tcase_add_test(tc, empty_and_bad_databases);
    tcase_add_test(tc, stored_calibration_reuse_and_versions);
    tcase_add_test(tc, prebuilt_default);
    tcase_add_test(tc, timing_methods_in_predictions);
    tcase_add_test(tc, linear_op_in_predictions);
    tcase_add_test(tc, transfer_a100_to_h100);
    tcase_add_test(tc, transfer_h100_to_a100);
    tcase_add_test(tc, transfer_a100_40_to_80);
    tcase_add_test(tc, transfer_no_worse);
    tcase_add_test(tc, transfer_wall_clock_across_families);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(calib_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
