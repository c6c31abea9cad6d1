/* Calibration: the robust fit on synthetic rows with known parameters, the
 * stored-parameter format, and on the measured development data
 * ($TILECAST_SHARED_DATA): held-out accuracy, exact lookups, source labels,
 * interval coverage, stored calibrations and their versions, databases of
 * another GPU, empty databases and cross-GPU transfer. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibrate.h"
#include "csv.h"
#include "tilecast/tilecast.h"

/* ------------------------------------------------------------------------ */
/* Measured rows from the shared CSV files                                   */
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
    const char *dir = getenv("TILECAST_SHARED_DATA");

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
    static const char *const names[10] = {"gpu", "dtype", "batch", "m",      "n",
                                           "k",   "layout", "time_us", "timing", "op"};

    ck_assert_msg(shared_path(file, path, sizeof(path)),
                  "TILECAST_SHARED_DATA/%s is missing: the measured data is required", file);
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
        long long v[4];

        memset(&r, 0, sizeof(r));
        if (gpu && strcmp(fields[col[0]], gpu) != 0)
            continue;
        if (!fields[col[7]][0])
            continue;
        snprintf(r.gpu, sizeof(r.gpu), "%s", fields[col[0]]);
        snprintf(r.timing, sizeof(r.timing), "%s", fields[col[8]]);
        ck_assert_int_eq(tc_dtype_parse(fields[col[1]], &r.dtype), TC_OK);
        ck_assert_int_eq(tc_layout_parse(fields[col[6]], &r.layout), TC_OK);
        v[0] = atoll(fields[col[2]]);
        v[1] = atoll(fields[col[3]]);
        v[2] = atoll(fields[col[4]]);
        v[3] = atoll(fields[col[5]]);
        r.batch = v[0] > 0 ? v[0] : 1;
        r.m = v[1];
        r.n = v[2];
        r.k = v[3];
        r.time_us = atof(fields[col[7]]);
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
    db = tc_db_open(path, TC_DB_CREATE);
    ck_assert_msg(db != NULL, "%s", tc_last_error());
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
            info.source = "test fixture from the shared measured data";
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
    double mape_big;     /* rows >= 20 µs */
    double spearman;     /* of TFLOP/s, rows >= 20 µs */
    double coverage;     /* truth inside [lo, hi] */
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
        ck_assert_msg(tc_predict_gemm(p, gpu, &q, &pr) == TC_OK, "%s", tc_last_error());
        ck_assert(pr.lo_us <= pr.time_us && pr.time_us <= pr.hi_us);
        s.n++;
        s.by_source[pr.source]++;
        if (dump)
            fprintf(dump, "%s,%d,%lld,%lld,%lld,%lld,%s,%g,%g,%g,%g,%d,%g\n", gpu_id, (int)pr.source,
                    (long long)r->m,
                    (long long)r->n, (long long)r->k, (long long)r->batch,
                    tc_layout_name(r->layout), r->time_us, pr.time_us, pr.lo_us, pr.hi_us,
                    pr.neighbours, pr.neighbour_dist);
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
    specs = tc_specs_load(NULL);
    ck_assert_msg(specs != NULL, "%s", tc_last_error());
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

START_TEST(holdout_vidur_a100)
{
    struct score a = holdout("vidur_gemm.csv", "a100-sxm4-80gb", true);
    struct score c = holdout("vidur_gemm.csv", "a100-sxm4-80gb", false);

    ck_assert_uint_eq(c.by_source[TC_SOURCE_CALIBRATED], c.n);
    ck_assert_double_le(c.mape_big, 5.0);
    ck_assert_double_ge(c.spearman, 0.95);
    ck_assert_double_lt(c.mape_big, a.mape_big);
    ck_assert_double_ge(c.coverage, 0.70);
    ck_assert_double_le(c.coverage, 0.90);
}
END_TEST

START_TEST(holdout_vidur_h100)
{
    struct score a = holdout("vidur_gemm.csv", "h100-sxm5-80gb", true);
    struct score c = holdout("vidur_gemm.csv", "h100-sxm5-80gb", false);

    ck_assert_uint_eq(c.by_source[TC_SOURCE_CALIBRATED], c.n);
    ck_assert_double_le(c.mape_big, 5.0);
    ck_assert_double_ge(c.spearman, 0.95);
    ck_assert_double_lt(c.mape_big, a.mape_big);
    ck_assert_double_ge(c.coverage, 0.70);
    ck_assert_double_le(c.coverage, 0.90);
}
END_TEST

static Suite *calib_suite(void)
{
    Suite *s = suite_create("calib");
    TCase *tc = tcase_create("measured");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, holdout_vidur_a100);
    tcase_add_test(tc, holdout_vidur_h100);
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
