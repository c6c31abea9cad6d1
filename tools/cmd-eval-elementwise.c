/* tilecast eval --elementwise: predicts every row of a CSV of measured
 * memory-bound kernels (the columns of db/sources' neusight_elementwise.csv)
 * with the layer model's memory-bound kernel time (tc_predict_memop) plus
 * the host cost of the row's timing method, and reports the error per GPU,
 * kernel kind, dtype and whether the row's time is the host's or the
 * DRAM's. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bounds.h"
#include "cli.h"
#include "csv.h"
#include "eval-cli.h"
#include "tc-internal.h"

const char cmd_eval_elementwise_help[] =
    "Usage: tilecast eval --elementwise --input measured.csv [--output per-row.csv]\n"
    "                     [--group-by COL[+COL...]] [--json|--csv]\n"
    "\n"
    "Predicts every row of a CSV of measured memory-bound kernels (the columns\n"
    "of the project's neusight_elementwise.csv: gpu, dtype, op, shape as RxC or\n"
    "rows and cols, time_us, and optionally timing) with the time `predict layer`\n"
    "and `predict model` give a norm, an activation, a softmax or a residual add:\n"
    "the kernel's passes over its tensor at the GPU's streaming bandwidth (the\n"
    "C API's tc_predict_memop), plus what the row's timing method adds on the\n"
    "host (as `tilecast eval` adds it to GEMM rows; none for kernel times, the\n"
    "default when there is no timing column). Per GPU, kind and dtype (and per\n"
    "value of the --group-by columns, e.g. op), and\n"
    "apart for the rows whose predicted kernel is shorter than that host cost\n"
    "(bound 'host': they measure the host more than the GPU) and the others\n"
    "(bound 'dram'), it prints:\n"
    "  rows       rows compared\n"
    "  mape_pct   mean absolute percentage error of the time\n"
    "  median_ape_pct, p90_ape_pct   median and 90th percentile of that error\n"
    "  bias_pct   median signed error, predicted / measured - 1 (positive: the\n"
    "             prediction is slower)\n"
    "  spearman_gbps   Spearman rank correlation of measured and predicted GB/s\n"
    "The last row, gpu 'all', pools every compared row.\n"
    "\n"
    "op is a kernel kind (unary, binary, softmax, layernorm, rmsnorm) or a\n"
    "PyTorch op: add, sub, mul, div, pow, maximum (binary: two tensors in, one\n"
    "out); addu, subu, mulu, divu, powu (a tensor and a Python scalar), relu,\n"
    "gelu, tanh, sigmoid, silu, exp (unary); ln, layer_norm (layernorm);\n"
    "rms_norm (rmsnorm). A shape RxC is rows x cols; a norm or a softmax runs\n"
    "over each row. The model takes no constant from these rows.\n"
    "\n"
    "Options:\n"
    "  --input FILE       the measured CSV ('-' = stdin); required\n"
    "  --output FILE      the per-row comparison as CSV: the input columns, then\n"
    "                     kind, passes, bytes, kernel_us, host_us, pred_us, ape_pct,\n"
    "                     signed_pct, status (ok, refused) and message\n"
    "  --group-by COL[+COL...]   also group by these columns\n"
    "  --json, --csv      machine-readable summary (default: a table)\n"
    "\n"
    "A row that cannot be read (unknown GPU or op, bad number) is reported with\n"
    "FILE:LINE and counted as failed; the exit status is then 2.\n";

#define MAX_GROUP_COLS 4 /* --group-by options */
#define MAX_METHODS 8    /* timing methods named in the notes */

struct ecols {
    int gpu, dtype, op, shape, rows, cols, time, timing;
};

static const struct {
    const char *op;
    enum tc_memop_kind kind;
} torch_ops[] = {
    {"add", TC_MEMOP_BINARY},
    {"sub", TC_MEMOP_BINARY},
    {"mul", TC_MEMOP_BINARY},
    {"div", TC_MEMOP_BINARY},
    {"pow", TC_MEMOP_BINARY},
    {"maximum", TC_MEMOP_BINARY},
    {"addu", TC_MEMOP_UNARY},
    {"subu", TC_MEMOP_UNARY},
    {"mulu", TC_MEMOP_UNARY},
    {"divu", TC_MEMOP_UNARY},
    {"powu", TC_MEMOP_UNARY},
    {"relu", TC_MEMOP_UNARY},
    {"gelu", TC_MEMOP_UNARY},
    {"tanh", TC_MEMOP_UNARY},
    {"sigmoid", TC_MEMOP_UNARY},
    {"silu", TC_MEMOP_UNARY},
    {"exp", TC_MEMOP_UNARY},
    {"ln", TC_MEMOP_LAYERNORM},
    {"layer_norm", TC_MEMOP_LAYERNORM},
    {"rms_norm", TC_MEMOP_RMSNORM},
};

static bool op_kind(const char *op, enum tc_memop_kind *kind)
{
    for (size_t i = 0; i < sizeof(torch_ops) / sizeof(torch_ops[0]); i++)
        if (strcasecmp(op, torch_ops[i].op) == 0) {
            *kind = torch_ops[i].kind;
            return true;
        }
    if (tc_memop_kind_parse(op, kind) == TC_OK)
        return true;
    tc_clear_error();
    return false;
}

/* rows and cols from "RxC" */
static bool parse_shape(const char *s, long long *rows, long long *cols)
{
    char buf[64], *x;

    if (strlen(s) >= sizeof(buf))
        return false;
    tc_strlcpy(buf, s, sizeof(buf));
    x = strchr(buf, 'x');
    if (!x)
        return false;
    *x = '\0';
    return tc_parse_i64(buf, rows) == TC_OK && tc_parse_i64(x + 1, cols) == TC_OK;
}

/* Fills q (and the row's time) from one row; false with *why otherwise. */
static bool row_query(char **fields, const struct ecols *c, struct tc_memop_query *q,
                      double *time_us, const char **why)
{
    long long rows = 0, cols = 0;

    memset(q, 0, sizeof(*q));
    if (tc_dtype_parse(fields[c->dtype], &q->dtype) < 0) {
        tc_clear_error();
        *why = "dtype";
        return false;
    }
    if (!op_kind(fields[c->op], &q->kind)) {
        *why = "op (see --help for the ops known)";
        return false;
    }
    if (c->shape >= 0 && *fields[c->shape]) {
        if (!parse_shape(fields[c->shape], &rows, &cols)) {
            *why = "shape (RxC)";
            return false;
        }
    } else if (c->rows < 0 || c->cols < 0 || tc_parse_i64(fields[c->rows], &rows) != TC_OK ||
               tc_parse_i64(fields[c->cols], &cols) != TC_OK) {
        *why = "rows and cols";
        return false;
    }
    if (rows <= 0 || cols <= 0 || rows > TC_BOUND_DIM_MAX || cols > TC_BOUND_DIM_MAX) {
        *why = "a size (positive, at most 2^40)";
        return false;
    }
    q->rows = rows;
    q->cols = cols;
    if (tc_parse_double(fields[c->time], time_us) != TC_OK || !(*time_us > 0) ||
        !isfinite(*time_us)) {
        *why = "time_us";
        return false;
    }
    return true;
}

/* Remembers a timing method met and what it adds, for the notes: the first
 * MAX_METHODS of them; *more once another is met. Tags are compared as
 * stored (their first 63 characters), so a long tag is listed once. */
static void note_method(char methods[][64], struct tc_timing_cost *costs, int *n, bool *more,
                        const char *tag, const struct tc_timing_cost *cost)
{
    for (int k = 0; k < *n; k++)
        if (strncmp(methods[k], tag, 63) == 0)
            return;
    if (*n == MAX_METHODS) {
        *more = true;
        return;
    }
    tc_strlcpy(methods[*n], tag, 64);
    costs[(*n)++] = *cost;
}

int cmd_eval_elementwise(int argc, char **argv)
{
    const char *cmd = "eval --elementwise";
    struct eval_opts o = {.fmt = CLI_FORMAT_TABLE};
    int group_col[EVAL_GROUP_COLS], n_group_col = 0;
    struct tc_specs *specs = NULL;
    FILE *in = NULL, *out = NULL;
    struct tc_csv *csv = NULL;
    struct eval_groups gs = {0};
    struct eval_group all = {.key = "all"};
    struct ecols c;
    char **fields, **header = NULL;
    const char *in_name;
    int nfields, header_n = 0, r, rc = CLI_EXIT_OK;
    long rows = 0, failed = 0, refused = 0;
    /* the timing methods met and what each adds, for the notes */
    char methods[MAX_METHODS][64];
    struct tc_timing_cost method_cost[MAX_METHODS];
    int n_methods = 0;
    bool more_methods = false;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int pr;

        if (strcmp(a, "--elementwise") == 0)
            continue;
        if ((pr = eval_opt(cmd, argc, argv, &i, MAX_GROUP_COLS, "options", &o)) != 0) {
            if (pr < 0)
                return CLI_EXIT_USAGE;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(cmd_eval_elementwise_help, stdout);
            return CLI_EXIT_OK;
        } else {
            cli_error(cmd, "unknown argument '%s' (see 'tilecast eval --elementwise --help')", a);
            return CLI_EXIT_USAGE;
        }
    }
    if (!o.input) {
        cli_error(cmd, "--input FILE is required (a CSV of measured memory-bound kernels)");
        return CLI_EXIT_USAGE;
    }
    if (strcmp(o.input, "-") != 0 && !cli_input_readable(cmd, o.input))
        return CLI_EXIT_INPUT;
    in_name = strcmp(o.input, "-") == 0 ? "<stdin>" : o.input;
    if (!(specs = cli_load_specs(cmd)))
        return CLI_EXIT_INPUT;
    if ((rc = eval_open_input(cmd, o.input, &in)) != CLI_EXIT_OK)
        goto cleanup;
    if (o.output && !(out = fopen(o.output, "w"))) {
        cli_error(cmd, "%s: cannot create: %s", o.output, strerror(errno));
        rc = CLI_EXIT_RUNTIME;
        goto cleanup;
    }
    if ((rc = eval_read_header(cmd, in, in_name, &csv, &nfields, &fields)) != CLI_EXIT_OK)
        goto cleanup;
    c = (struct ecols){
        .gpu = tc_csv_find(nfields, fields, "gpu"),
        .dtype = tc_csv_find(nfields, fields, "dtype"),
        .op = tc_csv_find(nfields, fields, "op"),
        .shape = tc_csv_find(nfields, fields, "shape"),
        .rows = tc_csv_find(nfields, fields, "rows"),
        .cols = tc_csv_find(nfields, fields, "cols"),
        .time = tc_csv_find(nfields, fields, "time_us"),
        .timing = tc_csv_find(nfields, fields, "timing"),
    };
    {
        static const char *const required[] = {"gpu", "dtype", "op", "time_us"};

        rc = eval_require_columns(cmd, in_name, nfields, fields, required,
                                  sizeof(required) / sizeof(required[0]));
        if (rc != CLI_EXIT_OK)
            goto cleanup;
        if (c.shape < 0 && (c.rows < 0 || c.cols < 0)) {
            cli_error(cmd, "%s: no 'shape' column, nor 'rows' and 'cols' (see --help)", in_name);
            rc = CLI_EXIT_INPUT;
            goto cleanup;
        }
    }
    rc = eval_prepare(cmd, in_name, &o, nfields, fields, group_col, &n_group_col, &header,
                      &header_n, out,
                      "kind,passes,bytes,kernel_us,host_us,pred_us,ape_pct,signed_pct,status,"
                      "message\n");
    if (rc != CLI_EXIT_OK)
        goto cleanup;

    while ((r = tc_csv_next(csv, &nfields, &fields)) > 0) {
        struct tc_memop_query q;
        struct tc_memop_prediction pred;
        struct tc_timing_cost cost = {0};
        const struct tc_gpu *gpu;
        const char *why = NULL;
        char key[EVAL_KEY_MAX];
        struct eval_group *g;
        double meas_us, pred_us;
        int err;

        rows++;
        gpu = eval_row_gpu(cmd, in_name, csv, specs, nfields, header_n, fields, c.gpu);
        if (gpu && !row_query(fields, &c, &q, &meas_us, &why))
            cli_error(cmd, "%s:%ld: cannot read %s", in_name, tc_csv_line(csv), why);
        if (!gpu || why) {
            failed++;
            continue;
        }
        err = tc_predict_memop(gpu, &q, &pred);
        if (err == TC_OK && c.timing >= 0)
            err = tc_timing_host_cost(fields[c.timing], &cost);
        if (err < 0) {
            /* a size the model refuses (over 2^62 bytes): said per row */
            refused++;
            if (out) {
                eval_write_fields(out, fields, nfields);
                fprintf(out, "%s,,,,,,,,refused,", tc_memop_kind_name(q.kind));
                cli_csv_field(out, tc_last_error(), true);
            }
            tc_clear_error();
            continue;
        }
        if (c.timing >= 0)
            note_method(methods, method_cost, &n_methods, &more_methods, fields[c.timing], &cost);
        pred_us = fmax(pred.time_us + cost.typical_us, cost.floor_us);
        snprintf(key, sizeof(key), "%s\t%s\t%s\t%s", fields[c.gpu], tc_memop_kind_name(q.kind),
                 fields[c.dtype], pred.time_us < cost.typical_us ? "host" : "dram");
        eval_key_append(key, sizeof(key), fields, group_col, n_group_col);
        {
            struct tc_eval_point s = {
                .ape_pct = 100 * fabs(pred_us / meas_us - 1),
                .signed_pct = 100 * (pred_us / meas_us - 1),
                .meas_tflops = pred.bytes / meas_us / 1e3, /* GB/s */
                .pred_tflops = pred.bytes / pred_us / 1e3,
            };

            if (!(g = eval_group_get(&gs, key)) || !eval_group_add(g, &s) ||
                !eval_group_add(&all, &s)) {
                rc = cli_fail(cmd, TC_ERR_NOMEM);
                goto cleanup;
            }
        }
        if (out) {
            eval_write_fields(out, fields, nfields);
            fprintf(out, "%s,%g,%.0f,%.3f,%.2f,%.3f,%.2f,%.2f,ok,\n", tc_memop_kind_name(q.kind),
                    pred.passes, pred.bytes, pred.time_us, cost.typical_us, pred_us,
                    100 * fabs(pred_us / meas_us - 1), 100 * (pred_us / meas_us - 1));
        }
    }
    tc_clear_error();
    if (r < 0) {
        rc = cli_fail(cmd, r);
        goto cleanup;
    }
    eval_groups_sort(&gs);
    {
        static const char *const base[] = {"gpu", "kind", "dtype", "bound"};
        static const char *const stats[] = {"rows",        "mape_pct", "median_ape_pct",
                                            "p90_ape_pct", "bias_pct", "spearman_gbps"};
        enum { N_BASE = 4, N_STATS = 6 };
        const char *headers[N_BASE + EVAL_GROUP_COLS + N_STATS];
        bool numeric[N_BASE + EVAL_GROUP_COLS + N_STATS] = {false};
        int ncols = 0;
        struct cli_table *t;

        for (int k = 0; k < N_BASE; k++)
            headers[ncols++] = base[k];
        for (int k = 0; k < n_group_col; k++)
            headers[ncols++] = header[group_col[k]];
        for (int k = 0; k < N_STATS; k++) {
            numeric[ncols] = true;
            headers[ncols++] = stats[k];
        }
        if (!(t = cli_table_new(ncols, headers, numeric))) {
            rc = cli_fail(cmd, TC_ERR_NOMEM);
            goto cleanup;
        }
        for (size_t i = 0; i <= gs.n; i++) {
            struct eval_group *g = i < gs.n ? &gs.g[i] : &all;
            int col = 0, err;

            eval_table_key(t, &col, g->key, N_BASE + n_group_col);
            cli_table_addf(t, col++, "%zu", g->n);
            if ((err = eval_table_stats(t, &col, g)) < 0) {
                cli_table_free(t);
                rc = cli_fail(cmd, err);
                goto cleanup;
            }
            cli_table_end_row(t);
        }
        if (o.fmt == CLI_FORMAT_TABLE)
            printf("Analytical predictions (the layer model's memory-bound kernels, plus each "
                   "row's timing method's host cost) against %s; nothing fitted to the rows.\n\n",
                   in_name);
        cli_table_print(t, stdout, o.fmt);
        cli_table_free(t);
    }
    {
        /* what each timing method added: a tag tilecast does not know adds
         * nothing, as a kernel time's would, which the user should see */
        FILE *notes = o.fmt == CLI_FORMAT_TABLE ? stdout : stderr;

        if (o.fmt == CLI_FORMAT_TABLE && (n_methods || c.timing < 0))
            putchar('\n');
        if (c.timing < 0)
            fprintf(notes, "No timing column: every row compared as kernel time.\n");
        for (int k = 0; k < n_methods; k++) {
            if (method_cost[k].typical_us > 0)
                fprintf(notes,
                        "Timing '%s': %g us of host time added to each kernel (floor %g us).\n",
                        *methods[k] ? methods[k] : "", method_cost[k].typical_us,
                        method_cost[k].floor_us);
            else
                fprintf(notes, "Timing '%s': compared as kernel time (no known host cost).\n",
                        methods[k]);
        }
        if (more_methods)
            fprintf(notes, "(more than %d timing methods: the others not listed)\n", MAX_METHODS);
    }
    if (refused)
        cli_error(cmd, "%ld of %ld rows refused by the model (see --output)", refused, rows);
    if (failed) {
        cli_error(cmd, "%ld of %ld rows could not be read", failed, rows);
        rc = CLI_EXIT_INPUT;
    }

cleanup:
    rc = eval_cleanup(cmd, rc, &gs, &all, header, header_n, csv, in, out, o.output);
    tc_specs_free(specs);
    return rc;
}
