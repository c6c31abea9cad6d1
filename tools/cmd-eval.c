/* tilecast eval: predicts every row of a measured CSV and reports the error
 * per GPU and dtype (and per sweep / model / op where the file has such a
 * column): MAPE, median and 90th-percentile APE, and the Spearman rank
 * correlation of TFLOP/s, over the group and within each sweep of it. Rows
 * with no time (tuning efficiency tables) are compared by the rank
 * correlation of efficiency and predicted fraction of peak. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "eval-cli.h"
#include "gemm-cli.h"
#include "stats.h"
#include "tc-internal.h"

/* The timing methods of the measured data whose host cost is known: the
 * figures (one per method's class, never fitted per row, and nn.Linear's
 * extra per op) and why are in predictor/calibrate-timing.c
 * (tc_timing_host_cost). A method not listed here adds nothing and is
 * reported. */
static const char *const timing_methods[] = {
    "profiler-median",
    "event-fastest5-mean",
    "wall-avg-incl-launch",
    "wall-slowest",
};

const char cmd_eval_help[] =
    "Usage: tilecast eval --input measured.csv [--min-time-us T] [--output per-row.csv]\n"
    "                     [--gpu ID] [--dtype DT] [--group-by COL]... [--analytical]\n"
    "                     [--db FILE]... [--json|--csv|--md]\n"
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
    "  sweeps, sweep_rho_min, sweep_rho_median   the same correlation within\n"
    "             each sweep of the group (a series measured together, see\n"
    "             --sweep) that has at least 5 compared rows: how many, the\n"
    "             lowest and the median\n"
    "  eff_rows, spearman_eff   rows with an efficiency but no time (tuning\n"
    "             tables): rank correlation of efficiency and predicted\n"
    "             fraction of peak\n"
    "\n"
    "Timing methods: kernel predictions are compared with measurements taken\n"
    "by the row's `timing` method. Methods that bracket a host call include\n"
    "launch and synchronisation; a fixed host time per method is added to the\n"
    "analytical prediction (profiler-median 0 us; event-fastest5-mean +28 us,\n"
    "at least 28 us; wall-avg-incl-launch +28 us; wall-slowest +28 us) and the\n"
    "output says so. Those are a plain GEMM call's (op mm or bmm); a row whose\n"
    "op column says linear (nn.Linear with a bias: a longer host path) adds\n"
    "23 us more under those host-timed methods, nothing under profiler-median.\n"
    "Calibrated predictions and measurements already answer in the row's\n"
    "timing method and op. Nothing is fitted to the rows.\n"
    "\n"
    "Options:\n"
    "  --input FILE       the measured CSV ('-' = stdin); required\n"
    "  --min-time-us T    skip (and count) rows measured below T us (default 20:\n"
    "                     launch overhead dominates there; 0 keeps every row)\n"
    "  --output FILE      write the per-row comparison as CSV: the input columns,\n"
    "                     then pred_kernel_us, host_us (the host cost added:\n"
    "                     the row's timing method and op), pred_time_us,\n"
    "                     pred_tflops, pred_frac_peak, ape_pct, pred_source, status,\n"
    "                     pred_lo_us, pred_hi_us (the prediction's 80% interval);\n"
    "                     FILE is replaced only when every row was predicted\n"
    "  --gpu ID, --dtype DT   defaults for rows without gpu / dtype columns\n"
    "  --group-by COL[+COL...]   group by COL as well, or by the combination of\n"
    "                     the columns joined with + (repeatable; replaces the\n"
    "                     default sweep, model, op; 'none': the GPU and dtype only)\n"
    "  --sweep COL[+COL...]   the columns that name one sweep (default: sweep\n"
    "                     where the file has it, else model+tp+vidur_op, Vidur's\n"
    "                     token sweeps; 'none' turns the sweep columns off)\n"
    "  --analytical       ignore every database: the analytical model only\n"
    "  --db FILE          calibrate with the measurements in FILE (repeatable); a\n"
    "                     file without a stored calibration is fitted in memory,\n"
    "                     up to 50000 rows of one GPU and dtype ('tilecast db\n"
    "                     calibrate FILE' stores a fit)\n"
    "  --json, --csv      machine-readable summary (default: a table); --md a\n"
    "                     markdown table\n"
    "\n"
    "A row that cannot be predicted (unknown GPU, bad number) is reported with\n"
    "FILE:LINE:COLUMN and counted as failed; the exit status is then 2.\n"
    "\n"
    "Fused attention: tilecast eval --attention --input FILE compares the\n"
    "attention model with measured fused-attention rows instead (see\n"
    "'tilecast eval --attention --help'). tilecast eval --elementwise --input\n"
    "FILE does the same for memory-bound kernels (norms, activations, softmax,\n"
    "residual adds; 'tilecast eval --elementwise --help').\n";

#define MAX_GROUP_COLS EVAL_MAX_GROUPS
/* Columns joined with + in one --group-by or --sweep key. */
#define MAX_KEY_COLS 4
/* A sweep's rank correlation needs a few rows to mean anything. */
#define SWEEP_MIN_ROWS 5

struct sample {
    struct tc_eval_point e; /* first: tc_eval_stats reads it in place */
    long sweep;             /* the row's sweep id, -1 without a --sweep key */
};

/* A grouping key: one column or several joined with +, resolved against the
 * header. */
struct key {
    const char *spec;
    int n, col[MAX_KEY_COLS];
};

/* Resolves "a+b+c" against the header; false when a column is missing or
 * there are too many. */
static bool key_resolve(struct key *k, const char *spec, int nfields, char **fields)
{
    const char *p = spec;

    k->spec = spec;
    k->n = 0;
    while (*p) {
        const char *e = strchr(p, '+');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int c = -1;

        for (int f = 0; f < nfields && c < 0; f++)
            if (strlen(fields[f]) == len && strncmp(fields[f], p, len) == 0)
                c = f;
        if (c < 0 || k->n == MAX_KEY_COLS)
            return false;
        k->col[k->n++] = c;
        p = e ? e + 1 : p + len;
    }
    return k->n > 0;
}

/* "col=value" for each column of the key, joined with commas. */
static void key_label(const struct key *k, char **header, char **fields, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; i < k->n && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%.40s=%.80s", i ? "," : "", header[k->col[i]],
                         fields[k->col[i]]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* Sweep ids: the distinct sweep labels seen so far, in a small open hash. */
struct sweep_ids {
    char **label;
    size_t n, cap; /* cap: a power of two, kept at most half full */
    long *id;
};

/* Spreads labels over the table's slots; the ids themselves are given in
 * the order labels are first seen, so no output depends on it. */
static uint32_t label_hash(const char *s)
{
    uint32_t h = 5381;

    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

static long sweep_id(struct sweep_ids *t, const char *label)
{
    uint32_t h = label_hash(label);
    size_t i;

    if (2 * (t->n + 1) > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        char **nl = calloc(cap, sizeof(*nl));
        long *ni = calloc(cap, sizeof(*ni));

        if (!nl || !ni) {
            free(nl);
            free(ni);
            return -1;
        }
        for (size_t j = 0; j < t->cap; j++)
            if (t->label[j]) {
                size_t s = label_hash(t->label[j]) & (cap - 1);

                while (nl[s])
                    s = (s + 1) & (cap - 1);
                nl[s] = t->label[j];
                ni[s] = t->id[j];
            }
        free(t->label);
        free(t->id);
        t->label = nl;
        t->id = ni;
        t->cap = cap;
    }
    for (i = h & (t->cap - 1); t->label[i]; i = (i + 1) & (t->cap - 1))
        if (strcmp(t->label[i], label) == 0)
            return t->id[i];
    if (!(t->label[i] = tc_strdup(label)))
        return -1;
    t->id[i] = (long)t->n++;
    return t->id[i];
}

static void sweep_ids_free(struct sweep_ids *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->label[i]);
    free(t->label);
    free(t->id);
}

struct eff_sample {
    double eff, pred_frac;
};

struct group {
    char gpu[TC_ID_MAX];
    char dtype[16];
    char label[256];
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

static int cmp_sample_sweep(const void *a, const void *b)
{
    const struct sample *x = a, *y = b;

    return x->sweep < y->sweep ? -1 : x->sweep > y->sweep;
}

/* Spearman's rho within each sweep of g with at least SWEEP_MIN_ROWS rows:
 * how many such sweeps, the lowest rho and the median. Sorts g's samples by
 * sweep (the group's other statistics do not depend on their order).
 * Returns false when out of memory. */
static bool sweep_spearman(struct group *g, size_t *n_sweeps, double *rho_min, double *rho_median)
{
    double *rho = NULL, *x = NULL;
    size_t nr = 0;

    *n_sweeps = 0;
    *rho_min = *rho_median = NAN;
    if (g->n < SWEEP_MIN_ROWS)
        return true;
    qsort(g->s, g->n, sizeof(*g->s), cmp_sample_sweep);
    rho = malloc(g->n * sizeof(*rho));
    x = malloc(g->n * 2 * sizeof(*x));
    if (!rho || !x) {
        free(rho);
        free(x);
        return false;
    }
    for (size_t i = 0; i < g->n;) {
        size_t j = i;

        while (j < g->n && g->s[j].sweep == g->s[i].sweep)
            j++;
        if (g->s[i].sweep >= 0 && j - i >= SWEEP_MIN_ROWS) {
            double r;

            for (size_t t = i; t < j; t++) {
                x[t - i] = g->s[t].e.meas_tflops;
                x[g->n + t - i] = g->s[t].e.pred_tflops;
            }
            r = tc_spearman(x, x + g->n, j - i);
            if (!isnan(r))
                rho[nr++] = r;
        }
        i = j;
    }
    if (nr) {
        /* the median of the sorted values, interpolated between the two
         * middle ones for an even count */
        qsort(rho, nr, sizeof(*rho), tc_cmp_double);
        *n_sweeps = nr;
        *rho_min = rho[0];
        *rho_median =
            nr % 2 ? rho[nr / 2] : rho[nr / 2 - 1] + 0.5 * (rho[nr / 2] - rho[nr / 2 - 1]);
    }
    free(rho);
    free(x);
    return true;
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
    for (size_t i = 0; i < TC_ARRAY_SIZE(timing_methods); i++)
        if (strcmp(method, timing_methods[i]) == 0)
            return (int)i;
    return -1;
}

/* What the command line asks for. */
struct options {
    struct eval_opts e; /* --input, --output, --group-by, the format */
    const char *sweep_spec;
    double min_time_us;
    struct predictor_opts po;
    struct gemm_defaults def;
    bool default_groups; /* no --group-by: sweep, model, op where the file has them */
};

/* One run over the input: what it reads and what it gathers. */
struct run {
    const struct options *o;
    const char *in_name;
    struct tc_specs *specs;
    struct tc_predictor *p;
    FILE *in, *out;
    struct cli_output out_file;
    struct tc_csv *csv;
    char **header;
    int header_n;
    struct gemm_columns cols;
    int col_time, col_timing, col_eff;
    struct key group_keys[MAX_GROUP_COLS], sweep_key;
    int n_group_keys;
    struct sweep_ids sweeps;
    struct groups gs;
    long rows, failed;
    bool method_used[TC_ARRAY_SIZE(timing_methods)];
    double linear_us; /* > 0: a host-timed row ran nn.Linear, which added this */
    bool unknown_method;
    long source_count[4];
};

static const char *const cmd = "eval";

/* Returns -1 to go on, else the exit status (after printing any error). */
static int parse_options(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int pr;

        /* the options eval shares with eval --attention, then the predictor's */
        if ((pr = eval_opt(cmd, argc, argv, &i, MAX_GROUP_COLS, "columns", &o->e)) != 0 ||
            (pr = predictor_opts_parse(cmd, argc, argv, &i, &o->po)) != 0) {
            if (pr < 0)
                return CLI_EXIT_USAGE;
        } else if (cli_flag_value(argc, argv, &i, "--min-time-us", &v)) {
            if (!cli_parse_double(cmd, "--min-time-us", v, 0, 1e12, &o->min_time_us))
                return cli_value_status(v);
        } else if ((pr = gemm_defaults_parse(cmd, argc, argv, &i, false, &o->def)) != 0) {
            if (pr < 0)
                return -pr;
        } else if (cli_flag_value(argc, argv, &i, "--sweep", &v)) {
            if (!v || !*v) {
                cli_error(cmd, "%s needs a value", a);
                return CLI_EXIT_USAGE;
            }
            o->sweep_spec = v;
        } else {
            char hint[96];

            cli_error(cmd, "unknown argument '%s'%s (see 'tilecast eval --help')", a,
                      cli_suggest_option(a, cmd_eval_help, hint, sizeof(hint)));
            return CLI_EXIT_USAGE;
        }
    }
    if (!o->e.input) {
        cli_error(cmd, "--input FILE is required (a measured GEMM CSV)");
        return CLI_EXIT_USAGE;
    }
    if (!o->e.n_group) {
        o->default_groups = true;
        o->e.group[0] = "sweep";
        o->e.group[1] = "model";
        o->e.group[2] = "op";
        o->e.n_group = 3;
    }
    return -1;
}

/* Opens the input and the output, reads the header and resolves the
 * grouping and sweep columns against it. */
static int open_run(struct run *r)
{
    const struct options *o = r->o;
    char **fields;
    int nfields, rc;

    if (!(r->specs = cli_load_specs(cmd)))
        return CLI_EXIT_INPUT;
    if (!(r->p = predictor_opts_make(cmd, r->specs, &o->po, &rc)))
        return rc;
    if ((rc = eval_open_input(cmd, o->e.input, &r->in)) != CLI_EXIT_OK)
        return rc;
    if (o->e.output) {
        const char *inputs[1 + sizeof(o->po.dbs) / sizeof(o->po.dbs[0])];

        inputs[0] = o->e.input;
        for (int i = 0; i < o->po.n_dbs; i++)
            inputs[1 + i] = o->po.dbs[i];
        rc = cli_output_open(cmd, &r->out_file, o->e.output, inputs, 1 + (size_t)o->po.n_dbs);
        if (rc != CLI_EXIT_OK)
            return rc;
        r->out = r->out_file.f;
    }
    if ((rc = eval_read_header(cmd, r->in, r->in_name, &r->csv, &nfields, &fields)) != CLI_EXIT_OK)
        return rc;
    if (!gemm_columns_find(cmd, r->in_name, tc_csv_line(r->csv), nfields, fields, &r->cols))
        return CLI_EXIT_INPUT;
    r->col_time = tc_csv_find(nfields, fields, "time_us");
    r->col_timing = tc_csv_find(nfields, fields, "timing");
    r->col_eff = tc_csv_find(nfields, fields, "efficiency_pct");
    if (r->col_time < 0 && r->col_eff < 0) {
        cli_error(cmd,
                  "%s:%ld: the header has neither time_us nor efficiency_pct: nothing to "
                  "compare with",
                  r->in_name, tc_csv_line(r->csv));
        return CLI_EXIT_INPUT;
    }
    if (!(r->header = eval_copy_header(cmd, nfields, fields)))
        return cli_exit_code(TC_ERR_NOMEM);
    r->header_n = nfields;
    /* A default grouping column the file lacks is left out; one the user
     * named must exist ('none' is no grouping). */
    for (int g = 0; g < o->e.n_group; g++) {
        if (strcmp(o->e.group[g], "none") == 0)
            continue;
        if (key_resolve(&r->group_keys[r->n_group_keys], o->e.group[g], nfields, fields))
            r->n_group_keys++;
        else if (!o->default_groups) {
            cli_error(cmd, "%s:%ld: --group-by %s: no such column (or more than %d joined)",
                      r->in_name, tc_csv_line(r->csv), o->e.group[g], MAX_KEY_COLS);
            return CLI_EXIT_USAGE;
        }
    }
    if (o->sweep_spec && strcmp(o->sweep_spec, "none") != 0) {
        if (!key_resolve(&r->sweep_key, o->sweep_spec, nfields, fields)) {
            cli_error(cmd, "%s:%ld: --sweep %s: no such column (or more than %d joined)",
                      r->in_name, tc_csv_line(r->csv), o->sweep_spec, MAX_KEY_COLS);
            return CLI_EXIT_USAGE;
        }
    } else if (!o->sweep_spec && !key_resolve(&r->sweep_key, "sweep", nfields, fields)) {
        key_resolve(&r->sweep_key, "model+tp+vidur_op", nfields, fields);
    }
    if (r->out) {
        for (int c = 0; c < nfields; c++)
            cli_csv_field(r->out, fields[c], false);
        fputs("pred_kernel_us,host_us,pred_time_us,pred_tflops,pred_frac_peak,ape_pct,"
              "pred_source,status,pred_lo_us,pred_hi_us\n",
              r->out);
    }
    return CLI_EXIT_OK;
}

/* Compares one row. A row that cannot be predicted is reported and
 * counted; only running out of memory stops the run (the exit status is
 * returned, else CLI_EXIT_OK). */
static int eval_row(struct run *r, int nfields, char **fields)
{
    struct tc_gemm_query q;
    struct tc_gemm_prediction pr = {0};
    struct tc_timing_cost cost = {0};
    const struct tc_gpu *gpu = NULL;
    long line = tc_csv_line(r->csv);
    char err[768];
    double meas_us = NAN, eff = NAN, pred_us, ape = NAN, flops;
    const char *status = "ok", *in_name = r->in_name;
    int e, ti = -1, nt = 0;
    struct group *targets[1 + MAX_GROUP_COLS];

    r->rows++;
    if (nfields != r->header_n) {
        cli_error(cmd, "%s:%ld: expected %d fields as in the header, got %d", in_name, line,
                  r->header_n, nfields);
        r->failed++;
        return CLI_EXIT_OK;
    }
    e = gemm_row_query(r->specs, &r->cols, &r->o->def, in_name, line, fields, &gpu, &q, err,
                       sizeof(err));
    /* calibrated predictions follow the row's timing method themselves */
    if (r->col_timing >= 0)
        tc_predictor_set_timing(r->p, fields[r->col_timing]);
    if (e == TC_OK && (e = tc_predict_gemm(r->p, gpu, &q, &pr)) < 0) {
        int col = gemm_error_column(&r->cols, e);

        if (col > 0)
            snprintf(err, sizeof(err), "%s:%ld:%d: %s", in_name, line, col, tc_last_error());
        else
            snprintf(err, sizeof(err), "%s:%ld: %s", in_name, line, tc_last_error());
    }
    if (e < 0) {
        fprintf(stderr, "tilecast eval: error: %s\n", err);
        r->failed++;
        return CLI_EXIT_OK;
    }
    if (r->col_time >= 0 && *fields[r->col_time] &&
        tc_parse_double(fields[r->col_time], &meas_us) < 0) {
        fprintf(stderr, "tilecast eval: error: %s:%ld:%d: time_us: %s\n", in_name, line,
                r->col_time + 1, tc_last_error());
        r->failed++;
        return CLI_EXIT_OK;
    }
    if (r->col_eff >= 0 && *fields[r->col_eff] && tc_parse_double(fields[r->col_eff], &eff) < 0) {
        fprintf(stderr, "tilecast eval: error: %s:%ld:%d: efficiency_pct: %s\n", in_name, line,
                r->col_eff + 1, tc_last_error());
        r->failed++;
        return CLI_EXIT_OK;
    }
    if (r->col_timing >= 0 && *fields[r->col_timing]) {
        ti = timing_index(fields[r->col_timing]);
        if (ti >= 0) {
            tc_timing_host_cost(timing_methods[ti], &cost);
            r->method_used[ti] = true;
            /* nn.Linear's longer host path is a fixed part of the cost */
            if (q.op == TC_GEMM_OP_LINEAR && cost.linear_us > 0) {
                cost.typical_us += cost.linear_us;
                cost.floor_us += cost.floor_us > 0 ? cost.linear_us : 0;
                cost.lo_us += cost.linear_us;
                cost.hi_us += cost.linear_us;
                r->linear_us = cost.linear_us;
            }
        } else if (!isnan(meas_us)) {
            r->unknown_method = true;
        }
    }
    if ((unsigned)pr.source < 4)
        r->source_count[pr.source]++;
    /* a measurement, or a calibration that fitted this method's host
     * cost, already answers in the row's timing */
    if (pr.source != TC_SOURCE_ANALYTICAL)
        cost = (struct tc_timing_cost){0};
    pred_us = pr.time_us + cost.typical_us;
    if (pred_us < cost.floor_us)
        pred_us = cost.floor_us;
    flops = 2.0 * (double)q.m * (double)q.n * (double)q.k * (double)(q.batch ? q.batch : 1);

    targets[nt++] = group_get(&r->gs, gpu->id, tc_dtype_name(q.dtype), "all");
    for (int g = 0; g < r->n_group_keys; g++) {
        char label[256];

        key_label(&r->group_keys[g], r->header, fields, label, sizeof(label));
        targets[nt++] = group_get(&r->gs, gpu->id, tc_dtype_name(q.dtype), label);
    }
    for (int t = 0; t < nt; t++)
        if (!targets[t])
            return cli_fail(cmd, TC_ERR_NOMEM);

    if (!isnan(meas_us) && meas_us > 0) {
        if (meas_us < r->o->min_time_us) {
            status = "skipped";
            for (int t = 0; t < nt; t++)
                targets[t]->skipped++;
        } else {
            struct sample s;

            s.sweep = -1;
            if (r->sweep_key.n) {
                char label[256];

                key_label(&r->sweep_key, r->header, fields, label, sizeof(label));
                if ((s.sweep = sweep_id(&r->sweeps, label)) < 0)
                    return cli_fail(cmd, TC_ERR_NOMEM);
            }
            s.e.signed_pct = (pred_us - meas_us) / meas_us * 100.0;
            s.e.ape_pct = fabs(s.e.signed_pct);
            s.e.meas_tflops = flops / (meas_us * 1e6);
            s.e.pred_tflops = flops / (pred_us * 1e6);
            ape = s.e.ape_pct;
            for (int t = 0; t < nt; t++)
                if (!group_add(targets[t], &s))
                    return cli_fail(cmd, TC_ERR_NOMEM);
        }
    } else if (!isnan(eff)) {
        struct eff_sample es = {eff, pr.frac_peak};

        status = "efficiency";
        for (int t = 0; t < nt; t++)
            if (!group_add_eff(targets[t], &es))
                return cli_fail(cmd, TC_ERR_NOMEM);
    } else {
        status = "no-measurement";
    }
    if (r->out) {
        for (int c = 0; c < nfields; c++)
            cli_csv_field(r->out, fields[c], false);
        fprintf(r->out, "%.4f,%.2f,%.4f,%.4f,%.5f,", pr.time_us, cost.typical_us, pred_us,
                flops / (pred_us * 1e6), pr.frac_peak);
        if (!isnan(ape))
            fprintf(r->out, "%.3f", ape);
        /* the interval in the row's timing method: widened by the range
         * of host costs on the data's hosts (the user's machine is not
         * known), and never below the method's floor */
        fprintf(r->out, ",%s,%s,%.4f,%.4f\n", gemm_source_label(pr.source), status,
                fmax(pr.lo_us + cost.lo_us, cost.floor_us),
                fmax(pr.hi_us + cost.hi_us, cost.floor_us));
    }
    return CLI_EXIT_OK;
}

/* One row of the summary table: group g's figures. */
static int add_group_row(struct run *r, struct cli_table *t, struct group *g)
{
    double rho_eff = NAN, sw_min = NAN, sw_med = NAN;
    struct tc_eval_stats st;
    size_t n_sw = 0;
    char b[8][32];
    int err;

    /* a group of efficiency rows only has no samples (g->s NULL) */
    if ((err = tc_eval_stats(g->s ? &g->s->e : NULL, g->n, sizeof(*g->s), &st)) < 0)
        return cli_fail(cmd, err);
    if (r->sweep_key.n && !sweep_spearman(g, &n_sw, &sw_min, &sw_med))
        return cli_fail(cmd, TC_ERR_NOMEM);
    if (g->ne) {
        double *x = malloc(g->ne * sizeof(double) * 2);

        if (!x)
            return cli_fail(cmd, TC_ERR_NOMEM);
        for (size_t j = 0; j < g->ne; j++) {
            x[j] = g->e[j].eff;
            x[g->ne + j] = g->e[j].pred_frac;
        }
        rho_eff = tc_spearman(x, x + g->ne, g->ne);
        free(x);
    }
    cli_table_addf(t, 0, "%s", g->gpu);
    cli_table_addf(t, 1, "%s", g->dtype);
    cli_table_addf(t, 2, "%s", g->label);
    cli_table_addf(t, 3, "%zu", g->n);
    cli_table_addf(t, 4, "%ld", g->skipped);
    cli_table_addf(t, 5, "%s", fmt_num(b[0], sizeof(b[0]), st.mape_pct, 2, false));
    cli_table_addf(t, 6, "%s", fmt_num(b[1], sizeof(b[1]), st.median_ape_pct, 2, false));
    cli_table_addf(t, 7, "%s", fmt_num(b[2], sizeof(b[2]), st.p90_ape_pct, 2, false));
    cli_table_addf(t, 8, "%s", fmt_num(b[3], sizeof(b[3]), st.bias_pct, 2, true));
    cli_table_addf(t, 9, "%s", fmt_num(b[4], sizeof(b[4]), st.spearman_tflops, 3, false));
    if (r->sweep_key.n)
        cli_table_addf(t, 10, "%zu", n_sw);
    cli_table_addf(t, 11, "%s", fmt_num(b[6], sizeof(b[6]), sw_min, 3, false));
    cli_table_addf(t, 12, "%s", fmt_num(b[7], sizeof(b[7]), sw_med, 3, false));
    cli_table_addf(t, 13, "%zu", g->ne);
    cli_table_addf(t, 14, "%s", fmt_num(b[5], sizeof(b[5]), rho_eff, 3, false));
    cli_table_end_row(t);
    return CLI_EXIT_OK;
}

/* The notes go with the table; machine-readable output keeps stdout clean
 * and says the same on stderr. */
static void print_notes(const struct run *r)
{
    FILE *notes = r->o->e.fmt == CLI_FORMAT_TABLE ? stdout : stderr;

    fprintf(notes, "Predictions against %s; rows measured below %g us skipped.\n", r->in_name,
            r->o->min_time_us);
    if (r->sweep_key.n)
        fprintf(notes,
                "Sweeps: rows with the same %s (%zu sweeps); sweep_rho_* over "
                "those with at least %d compared rows.\n",
                r->sweep_key.spec, r->sweeps.n, SWEEP_MIN_ROWS);
    fprintf(notes, "Prediction sources:");
    for (int i = 0; i < 4; i++)
        if (r->source_count[i])
            fprintf(notes, " %s %ld", gemm_source_label((enum tc_source)i), r->source_count[i]);
    fputc('\n', notes);
    for (size_t i = 0; i < TC_ARRAY_SIZE(timing_methods); i++) {
        struct tc_timing_cost cost;

        if (!r->method_used[i])
            continue;
        tc_timing_host_cost(timing_methods[i], &cost);
        fprintf(notes,
                "Timing '%s': %g us of host time added to each analytical kernel "
                "prediction%s.\n",
                timing_methods[i], cost.typical_us, cost.floor_us > 0 ? " (with a floor)" : "");
    }
    if (r->linear_us > 0)
        fprintf(notes,
                "Rows with op=linear (nn.Linear) timed on the host: %g us more (its longer "
                "host path than a plain GEMM call's).\n",
                r->linear_us);

    if (r->unknown_method)
        fprintf(notes, "Some rows use a timing method with no known host overhead: "
                       "compared as kernel time.\n");
    if (r->o->e.fmt == CLI_FORMAT_TABLE)
        putchar('\n');
}

static int print_report(struct run *r)
{
    static const char *const headers[] = {"gpu",
                                          "dtype",
                                          "group",
                                          "rows",
                                          "skipped",
                                          "mape_pct",
                                          "median_ape_pct",
                                          "p90_ape_pct",
                                          "bias_pct",
                                          "spearman_tflops",
                                          "sweeps",
                                          "sweep_rho_min",
                                          "sweep_rho_median",
                                          "eff_rows",
                                          "spearman_eff"};
    static const bool numeric[] = {false, false, false, true, true, true, true, true,
                                   true,  true,  true,  true, true, true, true};
    struct cli_table *t = cli_table_new(15, headers, numeric);
    int rc = CLI_EXIT_OK;

    if (!t)
        return cli_fail(cmd, TC_ERR_NOMEM);
    for (size_t i = 0; i < r->gs.n && rc == CLI_EXIT_OK; i++)
        rc = add_group_row(r, t, &r->gs.g[i]);
    if (rc == CLI_EXIT_OK) {
        print_notes(r);
        cli_table_print(t, stdout, r->o->e.fmt);
    }
    cli_table_free(t);
    return rc;
}

/* Frees what open_run and the rows gathered; closes the output, which a
 * run that failed leaves as it was. Returns the final exit status. */
static int close_run(struct run *r, int rc)
{
    groups_free(&r->gs);
    sweep_ids_free(&r->sweeps);
    eval_free_header(r->header, r->header_n);
    tc_csv_free(r->csv);
    if (r->in && r->in != stdin)
        fclose(r->in);
    /* a run with rows that failed leaves the file it would have replaced
     * as it was: the rows written would not be all of the input's */
    if (r->out) {
        int wrc = cli_output_close(cmd, &r->out_file, rc == CLI_EXIT_OK);

        if (rc == CLI_EXIT_OK)
            rc = wrc;
    }
    tc_predictor_free(r->p);
    tc_specs_free(r->specs);
    return rc;
}

int cmd_eval(int argc, char **argv)
{
    struct options o = {
        .min_time_us = 20.0,
        .e = {.fmt = CLI_FORMAT_TABLE},
        .def = {.dtype = TC_DTYPE_FP16, .layout = TC_LAYOUT_NN, .batch = 1},
    };
    struct run r = {.o = &o};
    char **fields;
    int nfields, rc, next;

    /* fused-attention and memory-bound kernel rows have commands of their own */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--attention") == 0)
            return cmd_eval_attention(argc, argv);
        if (strcmp(argv[i], "--elementwise") == 0)
            return cmd_eval_elementwise(argc, argv);
    }
    if ((rc = parse_options(argc, argv, &o)) >= 0)
        return rc;
    r.in_name = strcmp(o.e.input, "-") == 0 ? "<stdin>" : o.e.input;
    if ((rc = open_run(&r)) != CLI_EXIT_OK)
        return close_run(&r, rc);
    while ((next = tc_csv_next(r.csv, &nfields, &fields)) > 0)
        if ((rc = eval_row(&r, nfields, fields)) != CLI_EXIT_OK)
            return close_run(&r, rc);
    if (next < 0)
        return close_run(&r, cli_fail(cmd, next));
    if ((rc = print_report(&r)) != CLI_EXIT_OK)
        return close_run(&r, rc);
    if (r.failed) {
        cli_error(cmd, "%ld of %ld rows could not be predicted", r.failed, r.rows);
        rc = CLI_EXIT_INPUT;
    }
    return close_run(&r, rc);
}
