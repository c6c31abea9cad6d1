/* tilecast eval: predicts every row of a measured CSV and reports the error
 * per GPU and dtype (and per sweep / model / op where the file has such a
 * column): MAPE, median and 90th-percentile APE, and the Spearman rank
 * correlation of TFLOP/s. Rows with no time (tuning efficiency tables) are
 * compared by the rank correlation of efficiency and predicted fraction of
 * peak. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "csv.h"
#include "gemm-cli.h"
#include "tc-internal.h"

/* The timing methods of the measured data whose host cost is known: the
 * figures (one per method's class, never fitted per row) and why are in
 * predictor/calibrate.c (tc_timing_default_host_us, tc_timing_floor_us).
 * A method not listed here adds nothing and is reported. */
static const char *const timing_methods[] = {
    "profiler-median",
    "event-fastest5-mean",
    "wall-avg-incl-launch",
    "wall-slowest",
};

const char cmd_eval_help[] =
    "Usage: tilecast eval --input measured.csv [--min-time-us T] [--output per-row.csv]\n"
    "                     [--gpu ID] [--dtype DT] [--group-by COL]... [--analytical]\n"
    "                     [--db FILE]... [--json|--csv]\n"
    "\n"
    "Predicts every row of a measured GEMM CSV (the format of the project's\n"
    "measured data: gpu, dtype, op, batch, m, n, k, layout, time_us, tflops,\n"
    "timing, ...) and prints, per GPU and dtype, and per value of each grouping\n"
    "column the file has (sweep, model, op by default):\n"
    "  rows       rows compared\n"
    "  skipped    rows whose measured time is below --min-time-us\n"
    "  mape_pct   mean absolute percentage error of the time\n"
    "  median_ape_pct, p90_ape_pct   median and 90th percentile of that error\n"
    "  bias_pct   median signed error (positive: the prediction is slower)\n"
    "  spearman_tflops   Spearman rank correlation of measured and predicted\n"
    "             TFLOP/s (the efficiency ranking shape advice depends on)\n"
    "  eff_rows, spearman_eff   rows with an efficiency but no time (tuning\n"
    "             tables): rank correlation of efficiency and predicted\n"
    "             fraction of peak\n"
    "\n"
    "Timing methods: kernel predictions are compared with measurements taken\n"
    "by the row's `timing` method. Methods that bracket a host call include\n"
    "launch and synchronisation; a fixed host time per method is added to the\n"
    "analytical prediction (profiler-median 0 us; event-fastest5-mean +3 us,\n"
    "at least 28 us; wall-avg-incl-launch +20 us; wall-slowest +25 us) and the\n"
    "output says so; calibrated predictions and measurements already answer in\n"
    "the row's timing method. Nothing is fitted to the rows.\n"
    "\n"
    "Options:\n"
    "  --input FILE       the measured CSV ('-' = stdin); required\n"
    "  --min-time-us T    skip (and count) rows measured below T us (default 20:\n"
    "                     launch overhead dominates there; 0 keeps every row)\n"
    "  --output FILE      write the per-row comparison as CSV: the input columns,\n"
    "                     then pred_kernel_us, host_us, pred_time_us,\n"
    "                     pred_tflops, pred_frac_peak, ape_pct, pred_source, status\n"
    "  --gpu ID, --dtype DT   defaults for rows without gpu / dtype columns\n"
    "  --group-by COL     group by COL as well (repeatable; replaces the default\n"
    "                     sweep, model, op)\n"
    "  --analytical       ignore every database: the analytical model only\n"
    "  --db FILE          calibrate with the measurements in FILE (repeatable)\n"
    "  --json, --csv      machine-readable summary (default: a table)\n"
    "\n"
    "A row that cannot be predicted (unknown GPU, bad number) is reported with\n"
    "FILE:LINE:COLUMN and counted as failed; the exit status is then 2.\n";

#define MAX_GROUP_COLS 8

struct sample {
    double ape, signed_err, meas_tflops, pred_tflops;
};

struct eff_sample {
    double eff, pred_frac;
};

struct group {
    char gpu[TC_ID_MAX];
    char dtype[16];
    char label[128];
    struct sample *s;
    size_t n, cap;
    struct eff_sample *e;
    size_t ne, ecap;
    long skipped;
};

struct groups {
    struct group *g;
    size_t n, cap;
};

static struct group *group_get(struct groups *gs, const char *gpu, const char *dtype,
                               const char *label)
{
    for (size_t i = 0; i < gs->n; i++)
        if (strcmp(gs->g[i].gpu, gpu) == 0 && strcmp(gs->g[i].dtype, dtype) == 0 &&
            strcmp(gs->g[i].label, label) == 0)
            return &gs->g[i];
    if (gs->n == gs->cap) {
        size_t cap = gs->cap ? gs->cap * 2 : 16;
        struct group *g = realloc(gs->g, cap * sizeof(*g));

        if (!g)
            return NULL;
        gs->g = g;
        gs->cap = cap;
    }
    memset(&gs->g[gs->n], 0, sizeof(gs->g[0]));
    tc_strlcpy(gs->g[gs->n].gpu, gpu, sizeof(gs->g[0].gpu));
    tc_strlcpy(gs->g[gs->n].dtype, dtype, sizeof(gs->g[0].dtype));
    tc_strlcpy(gs->g[gs->n].label, label, sizeof(gs->g[0].label));
    return &gs->g[gs->n++];
}

static bool group_add(struct group *g, const struct sample *s)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 64;
        struct sample *ns = realloc(g->s, cap * sizeof(*ns));

        if (!ns)
            return false;
        g->s = ns;
        g->cap = cap;
    }
    g->s[g->n++] = *s;
    return true;
}

static bool group_add_eff(struct group *g, const struct eff_sample *e)
{
    if (g->ne == g->ecap) {
        size_t cap = g->ecap ? g->ecap * 2 : 64;
        struct eff_sample *ne = realloc(g->e, cap * sizeof(*ne));

        if (!ne)
            return false;
        g->e = ne;
        g->ecap = cap;
    }
    g->e[g->ne++] = *e;
    return true;
}

static void groups_free(struct groups *gs)
{
    for (size_t i = 0; i < gs->n; i++) {
        free(gs->g[i].s);
        free(gs->g[i].e);
    }
    free(gs->g);
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of v[0..n) with linear interpolation; sorts v. */
static double quantile(double *v, size_t n, double q)
{
    double pos;
    size_t lo;

    if (!n)
        return NAN;
    qsort(v, n, sizeof(*v), cmp_double);
    pos = q * (double)(n - 1);
    lo = (size_t)pos;
    if (lo + 1 >= n)
        return v[n - 1];
    return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

struct ranked {
    double v;
    size_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;

    return x->v < y->v ? -1 : x->v > y->v;
}

/* Average ranks (ties share the mean rank) of v into rank. */
static bool ranks(const double *v, size_t n, double *rank)
{
    struct ranked *r = malloc(n * sizeof(*r));

    if (!r)
        return false;
    for (size_t i = 0; i < n; i++) {
        r[i].v = v[i];
        r[i].i = i;
    }
    qsort(r, n, sizeof(*r), cmp_ranked);
    for (size_t i = 0; i < n;) {
        size_t j = i;

        while (j + 1 < n && r[j + 1].v == r[i].v)
            j++;
        for (size_t t = i; t <= j; t++)
            rank[r[t].i] = 0.5 * (double)(i + j) + 1.0;
        i = j + 1;
    }
    free(r);
    return true;
}

/* Spearman's rho: Pearson correlation of the ranks. NAN below 3 points or
 * when either side is constant. */
static double spearman(const double *x, const double *y, size_t n)
{
    double *rx = NULL, *ry = NULL, mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0, rho = NAN;

    if (n < 3)
        return NAN;
    rx = malloc(n * sizeof(*rx));
    ry = malloc(n * sizeof(*ry));
    if (!rx || !ry || !ranks(x, n, rx) || !ranks(y, n, ry))
        goto done;
    for (size_t i = 0; i < n; i++) {
        mx += rx[i];
        my += ry[i];
    }
    mx /= (double)n;
    my /= (double)n;
    for (size_t i = 0; i < n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    if (sxx > 0 && syy > 0)
        rho = sxy / sqrt(sxx * syy);
done:
    free(rx);
    free(ry);
    return rho;
}

/* v with `digits` decimals (and a sign when `sign`), or "" for NAN. */
static const char *fmt_num(char *buf, size_t len, double v, int digits, bool sign)
{
    if (isnan(v))
        buf[0] = '\0';
    else
        snprintf(buf, len, sign ? "%+.*f" : "%.*f", digits, v);
    return buf;
}

/* ---- the command ---- */

static int timing_index(const char *method)
{
    for (size_t i = 0; i < sizeof(timing_methods) / sizeof(timing_methods[0]); i++)
        if (strcmp(method, timing_methods[i]) == 0)
            return (int)i;
    return -1;
}

int cmd_eval(int argc, char **argv)
{
    const char *cmd = "eval";
    const char *input = NULL, *output = NULL;
    const char *group_names[MAX_GROUP_COLS], *group_col_names[MAX_GROUP_COLS];
    int n_group_names = 0;
    double min_time_us = 20.0;
    enum cli_format fmt = CLI_FORMAT_TABLE;
    struct predictor_opts po = {0};
    struct gemm_defaults def = {.dtype = TC_DTYPE_FP16, .layout = TC_LAYOUT_NN, .batch = 1};
    struct tc_specs *specs = NULL;
    struct tc_predictor *p = NULL;
    FILE *in = NULL, *out = NULL;
    struct tc_csv *csv = NULL;
    struct groups gs = {0};
    struct gemm_columns cols;
    int col_time, col_timing, col_eff, group_cols[MAX_GROUP_COLS], n_group_cols = 0;
    const struct tc_gpu *gpu = NULL;
    char **fields;
    int nfields, header_n, r, rc = CLI_EXIT_OK;
    long rows = 0, failed = 0;
    bool method_used[sizeof(timing_methods) / sizeof(timing_methods[0])] = {false};
    bool unknown_method = false;
    long source_count[4] = {0, 0, 0, 0};
    const char *in_name;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int pr;

        if (cli_parse_format(a, &fmt))
            continue;
        if ((pr = predictor_opts_parse(cmd, argc, argv, &i, &po)) != 0) {
            if (pr < 0)
                return CLI_EXIT_USAGE;
        } else if (cli_flag_value(argc, argv, &i, "--input", &v)) {
            if (!v || !*v)
                goto missing;
            input = v;
        } else if (cli_flag_value(argc, argv, &i, "--output", &v)) {
            if (!v || !*v)
                goto missing;
            output = v;
        } else if (cli_flag_value(argc, argv, &i, "--min-time-us", &v)) {
            if (!cli_parse_double(cmd, "--min-time-us", v, 0, 1e12, &min_time_us))
                return CLI_EXIT_USAGE;
        } else if (cli_flag_value(argc, argv, &i, "--gpu", &v)) {
            if (!v || !*v)
                goto missing;
            def.gpu_id = v;
        } else if (cli_flag_value(argc, argv, &i, "--dtype", &v)) {
            if (!v)
                goto missing;
            if (tc_dtype_parse(v, &def.dtype) < 0) {
                cli_error(cmd, "--dtype: %s", tc_last_error());
                return CLI_EXIT_USAGE;
            }
            def.have_dtype = true;
        } else if (cli_flag_value(argc, argv, &i, "--group-by", &v)) {
            if (!v || !*v)
                goto missing;
            if (n_group_names >= MAX_GROUP_COLS) {
                cli_error(cmd, "at most %d --group-by columns", MAX_GROUP_COLS);
                return CLI_EXIT_USAGE;
            }
            group_names[n_group_names++] = v;
        } else {
            cli_error(cmd, "unknown argument '%s' (see 'tilecast eval --help')", a);
            return CLI_EXIT_USAGE;
        }
        continue;
missing:
        cli_error(cmd, "%s needs a value", a);
        return CLI_EXIT_USAGE;
    }
    if (!input) {
        cli_error(cmd, "--input FILE is required (a measured GEMM CSV)");
        return CLI_EXIT_USAGE;
    }
    if (!n_group_names) {
        group_names[0] = "sweep";
        group_names[1] = "model";
        group_names[2] = "op";
        n_group_names = 3;
    }
    in_name = strcmp(input, "-") == 0 ? "<stdin>" : input;

    if (!(specs = cli_load_specs(cmd)))
        return CLI_EXIT_INPUT;
    if (!(p = predictor_opts_make(cmd, specs, &po, &rc)))
        goto cleanup;
    in = strcmp(input, "-") == 0 ? stdin : fopen(input, "r");
    if (!in) {
        cli_error(cmd, "%s: cannot open: %s", input, strerror(errno));
        rc = CLI_EXIT_INPUT;
        goto cleanup;
    }
    if (output && !(out = fopen(output, "w"))) {
        cli_error(cmd, "%s: cannot create: %s", output, strerror(errno));
        rc = CLI_EXIT_RUNTIME;
        goto cleanup;
    }
    if (!(csv = tc_csv_new(in, in_name))) {
        rc = cli_fail(cmd, TC_ERR_NOMEM);
        goto cleanup;
    }
    r = tc_csv_next(csv, &nfields, &fields);
    if (r <= 0) {
        if (r == 0)
            cli_error(cmd, "%s: empty input", in_name);
        else
            cli_fail(cmd, r);
        rc = CLI_EXIT_INPUT;
        goto cleanup;
    }
    if (!gemm_columns_find(cmd, in_name, tc_csv_line(csv), nfields, fields, &cols)) {
        rc = CLI_EXIT_INPUT;
        goto cleanup;
    }
    header_n = nfields;
    col_time = tc_csv_find(nfields, fields, "time_us");
    col_timing = tc_csv_find(nfields, fields, "timing");
    col_eff = tc_csv_find(nfields, fields, "efficiency_pct");
    if (col_time < 0 && col_eff < 0) {
        cli_error(cmd, "%s:%ld: the header has neither time_us nor efficiency_pct: nothing to "
                  "compare with", in_name, tc_csv_line(csv));
        rc = CLI_EXIT_INPUT;
        goto cleanup;
    }
    for (int g = 0; g < n_group_names; g++) {
        int c = tc_csv_find(nfields, fields, group_names[g]);

        if (c >= 0) {
            group_col_names[n_group_cols] = group_names[g];
            group_cols[n_group_cols++] = c;
        }
    }
    if (out) {
        for (int c = 0; c < nfields; c++)
            cli_csv_field(out, fields[c], false);
        fputs("pred_kernel_us,host_us,pred_time_us,pred_tflops,pred_frac_peak,ape_pct,"
              "pred_source,status\n", out);
    }

    while ((r = tc_csv_next(csv, &nfields, &fields)) > 0) {
        struct tc_gemm_query q;
        struct tc_gemm_prediction pr;
        long line = tc_csv_line(csv);
        char err[768];
        double meas_us = NAN, eff = NAN, host_us = 0, floor_us = 0, pred_us, ape = NAN;
        double flops;
        const char *status = "ok";
        int e, ti = -1;
        struct group *targets[1 + MAX_GROUP_COLS];
        int nt = 0;

        rows++;
        if (nfields != header_n) {
            cli_error(cmd, "%s:%ld: expected %d fields as in the header, got %d", in_name, line,
                      header_n, nfields);
            failed++;
            continue;
        }
        e = gemm_row_query(specs, &cols, &def, in_name, line, fields, &gpu, &q, err,
                           sizeof(err));
        /* calibrated predictions follow the row's timing method themselves */
        if (col_timing >= 0)
            tc_predictor_set_timing(p, fields[col_timing]);
        if (e == TC_OK && (e = tc_predict_gemm(p, gpu, &q, &pr)) < 0) {
            int col = gemm_error_column(&cols, e);

            if (col > 0)
                snprintf(err, sizeof(err), "%s:%ld:%d: %s", in_name, line, col, tc_last_error());
            else
                snprintf(err, sizeof(err), "%s:%ld: %s", in_name, line, tc_last_error());
        }
        if (e < 0) {
            fprintf(stderr, "tilecast eval: error: %s\n", err);
            failed++;
            continue;
        }
        if (col_time >= 0 && *fields[col_time] && tc_parse_double(fields[col_time], &meas_us) < 0) {
            fprintf(stderr, "tilecast eval: error: %s:%ld:%d: time_us: %s\n", in_name, line,
                    col_time + 1, tc_last_error());
            failed++;
            continue;
        }
        if (col_eff >= 0 && *fields[col_eff] && tc_parse_double(fields[col_eff], &eff) < 0) {
            fprintf(stderr, "tilecast eval: error: %s:%ld:%d: efficiency_pct: %s\n", in_name,
                    line, col_eff + 1, tc_last_error());
            failed++;
            continue;
        }
        if (col_timing >= 0 && *fields[col_timing]) {
            ti = timing_index(fields[col_timing]);
            if (ti >= 0) {
                host_us = tc_timing_default_host_us(tc_timing_classify(timing_methods[ti]));
                floor_us = tc_timing_floor_us(tc_timing_classify(timing_methods[ti]));
                method_used[ti] = true;
            } else if (!isnan(meas_us)) {
                unknown_method = true;
            }
        }
        if ((unsigned)pr.source < 4)
            source_count[pr.source]++;
        /* a measurement, or a calibration that fitted this method's host
         * cost, already answers in the row's timing */
        if (pr.source != TC_SOURCE_ANALYTICAL)
            host_us = floor_us = 0;
        pred_us = pr.time_us + host_us;
        if (pred_us < floor_us)
            pred_us = floor_us;
        flops = 2.0 * (double)q.m * (double)q.n * (double)q.k * (double)(q.batch ? q.batch : 1);

        targets[nt++] = group_get(&gs, gpu->id, tc_dtype_name(q.dtype), "all");
        for (int g = 0; g < n_group_cols; g++) {
            char label[128];

            snprintf(label, sizeof(label), "%.40s=%.80s", group_col_names[g],
                     fields[group_cols[g]]);
            targets[nt++] = group_get(&gs, gpu->id, tc_dtype_name(q.dtype), label);
        }
        for (int t = 0; t < nt; t++)
            if (!targets[t]) {
                rc = cli_fail(cmd, TC_ERR_NOMEM);
                goto cleanup;
            }

        if (!isnan(meas_us) && meas_us > 0) {
            if (meas_us < min_time_us) {
                status = "skipped";
                for (int t = 0; t < nt; t++)
                    targets[t]->skipped++;
            } else {
                struct sample s;

                s.signed_err = (pred_us - meas_us) / meas_us * 100.0;
                s.ape = fabs(s.signed_err);
                s.meas_tflops = flops / (meas_us * 1e6);
                s.pred_tflops = flops / (pred_us * 1e6);
                ape = s.ape;
                for (int t = 0; t < nt; t++)
                    if (!group_add(targets[t], &s)) {
                        rc = cli_fail(cmd, TC_ERR_NOMEM);
                        goto cleanup;
                    }
            }
        } else if (!isnan(eff)) {
            struct eff_sample es = {eff, pr.frac_peak};

            status = "efficiency";
            for (int t = 0; t < nt; t++)
                if (!group_add_eff(targets[t], &es)) {
                    rc = cli_fail(cmd, TC_ERR_NOMEM);
                    goto cleanup;
                }
        } else {
            status = "no-measurement";
        }
        if (out) {
            for (int c = 0; c < nfields; c++)
                cli_csv_field(out, fields[c], false);
            fprintf(out, "%.4f,%.2f,%.4f,%.4f,%.5f,", pr.time_us, host_us, pred_us,
                    flops / (pred_us * 1e6), pr.frac_peak);
            if (!isnan(ape))
                fprintf(out, "%.3f", ape);
            fprintf(out, ",%s,%s\n", gemm_source_label(pr.source), status);
        }
    }
    if (r < 0) {
        rc = cli_fail(cmd, r);
        goto cleanup;
    }

    {
        static const char *const headers[] = {
            "gpu", "dtype", "group", "rows", "skipped", "mape_pct", "median_ape_pct",
            "p90_ape_pct", "bias_pct", "spearman_tflops", "eff_rows", "spearman_eff"};
        static const bool numeric[] = {false, false, false, true, true, true,
                                       true,  true,  true,  true, true, true};
        struct cli_table *t = cli_table_new(12, headers, numeric);

        if (!t) {
            rc = cli_fail(cmd, TC_ERR_NOMEM);
            goto cleanup;
        }
        for (size_t i = 0; i < gs.n; i++) {
            struct group *g = &gs.g[i];
            double *v = malloc((g->n ? g->n : 1) * sizeof(double) * 2);
            double mape = NAN, med = NAN, p90 = NAN, bias = NAN, rho = NAN, rho_eff = NAN;
            char b[6][32];

            if (!v) {
                cli_table_free(t);
                rc = cli_fail(cmd, TC_ERR_NOMEM);
                goto cleanup;
            }
            if (g->n) {
                double sum = 0;
                double *x = v, *y = v + g->n;

                for (size_t j = 0; j < g->n; j++) {
                    sum += g->s[j].ape;
                    x[j] = g->s[j].signed_err;
                }
                mape = sum / (double)g->n;
                bias = quantile(x, g->n, 0.5);
                for (size_t j = 0; j < g->n; j++)
                    x[j] = g->s[j].ape;
                med = quantile(x, g->n, 0.5);
                p90 = quantile(x, g->n, 0.9);
                for (size_t j = 0; j < g->n; j++) {
                    x[j] = g->s[j].meas_tflops;
                    y[j] = g->s[j].pred_tflops;
                }
                rho = spearman(x, y, g->n);
            }
            free(v);
            if (g->ne) {
                double *x = malloc(g->ne * sizeof(double) * 2);

                if (!x) {
                    cli_table_free(t);
                    rc = cli_fail(cmd, TC_ERR_NOMEM);
                    goto cleanup;
                }
                for (size_t j = 0; j < g->ne; j++) {
                    x[j] = g->e[j].eff;
                    x[g->ne + j] = g->e[j].pred_frac;
                }
                rho_eff = spearman(x, x + g->ne, g->ne);
                free(x);
            }
            cli_table_addf(t, 0, "%s", g->gpu);
            cli_table_addf(t, 1, "%s", g->dtype);
            cli_table_addf(t, 2, "%s", g->label);
            cli_table_addf(t, 3, "%zu", g->n);
            cli_table_addf(t, 4, "%ld", g->skipped);
            cli_table_addf(t, 5, "%s", fmt_num(b[0], sizeof(b[0]), mape, 2, false));
            cli_table_addf(t, 6, "%s", fmt_num(b[1], sizeof(b[1]), med, 2, false));
            cli_table_addf(t, 7, "%s", fmt_num(b[2], sizeof(b[2]), p90, 2, false));
            cli_table_addf(t, 8, "%s", fmt_num(b[3], sizeof(b[3]), bias, 2, true));
            cli_table_addf(t, 9, "%s", fmt_num(b[4], sizeof(b[4]), rho, 3, false));
            cli_table_addf(t, 10, "%zu", g->ne);
            cli_table_addf(t, 11, "%s", fmt_num(b[5], sizeof(b[5]), rho_eff, 3, false));
            cli_table_end_row(t);
        }
        {
            /* The notes go with the table; machine-readable output keeps
             * stdout clean and says the same on stderr. */
            FILE *notes = fmt == CLI_FORMAT_TABLE ? stdout : stderr;

            fprintf(notes, "Predictions against %s; rows measured below %g us skipped.\n",
                    in_name, min_time_us);
            fprintf(notes, "Prediction sources:");
            for (int i = 0; i < 4; i++)
                if (source_count[i])
                    fprintf(notes, " %s %ld", gemm_source_label((enum tc_source)i),
                            source_count[i]);
            fputc('\n', notes);
            for (size_t i = 0; i < sizeof(timing_methods) / sizeof(timing_methods[0]); i++)
                if (method_used[i])
                    fprintf(notes,
                            "Timing '%s': %g us of host time added to each analytical kernel "
                            "prediction%s.\n",
                            timing_methods[i],
                            tc_timing_default_host_us(tc_timing_classify(timing_methods[i])),
                            tc_timing_floor_us(tc_timing_classify(timing_methods[i])) > 0
                                ? " (with a floor)"
                                : "");
            if (unknown_method)
                fprintf(notes, "Some rows use a timing method with no known host overhead: "
                        "compared as kernel time.\n");
            if (fmt == CLI_FORMAT_TABLE)
                putchar('\n');
        }
        cli_table_print(t, stdout, fmt);
        cli_table_free(t);
    }
    if (failed) {
        cli_error(cmd, "%ld of %ld rows could not be predicted", failed, rows);
        rc = CLI_EXIT_INPUT;
    }

cleanup:
    groups_free(&gs);
    tc_csv_free(csv);
    if (in && in != stdin)
        fclose(in);
    if (out && fclose(out) != 0 && rc == CLI_EXIT_OK) {
        cli_error(cmd, "%s: write failed: %s", output, strerror(errno));
        rc = CLI_EXIT_RUNTIME;
    }
    tc_predictor_free(p);
    tc_specs_free(specs);
    return rc;
}
