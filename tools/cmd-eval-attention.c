/* tilecast eval --attention: predicts every row of a fused-attention CSV
 * (the columns of db/sources' attention_fused.csv) with the analytical
 * attention model, or with the attention rows of --db databases (measured
 * and calibrated answers, as predict attention --db gives them), and
 * reports the error per GPU, implementation, dtype and pass: MAPE, median
 * and 90th-percentile APE, the median signed error and the Spearman rank
 * correlation of TFLOP/s. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "csv.h"
#include "eval-cli.h"
#include "tc-internal.h"

const char cmd_eval_attention_help[] =
    "Usage: tilecast eval --attention --input measured.csv [--output per-row.csv]\n"
    "                     [--db FILE]... [--group-by COL[+COL...]] [--json|--csv]\n"
    "\n"
    "Predicts every row of a measured fused-attention CSV (the columns of the\n"
    "project's attention_fused.csv: gpu, dtype, impl, pass, batch, heads,\n"
    "kv_heads, seq_q, seq_kv, head_dim, causal, time_us; where present also\n"
    "head_dim_vo, mask, window, deterministic, page_size and kv_cache_dtype)\n"
    "with the analytical model\n"
    "(`predict attention --analytical`) and prints, per GPU, impl, dtype and\n"
    "pass (and per value of the --group-by columns):\n"
    "  rows       rows compared\n"
    "  refused    rows the model refuses (a head dim or variant the named kernel\n"
    "             does not run or tilecast does not model; see --output)\n"
    "  mape_pct   mean absolute percentage error of the time\n"
    "  median_ape_pct, p90_ape_pct   median and 90th percentile of that error\n"
    "  bias_pct   median signed error, predicted / measured - 1 (positive: the\n"
    "             prediction is slower)\n"
    "  spearman_tflops   Spearman rank correlation of measured and predicted\n"
    "             TFLOP/s\n"
    "The last row, gpu 'all', pools every compared row.\n"
    "\n"
    "How rows become queries: impl is tilecast's name (flash2, flash3, flash4,\n"
    "cudnn, cudnn_oss, flash, unfused); cudnn_oss (the cuDNN frontend's open-source\n"
    "engines) has its own sm80 kernels and sm100 forward and is modelled as cudnn\n"
    "elsewhere. pass is\n"
    "fwd or bwd. mask no_mask or top_left (with\n"
    "seq_q = seq_kv; tilecast aligns a causal mask at the bottom right, which is\n"
    "the same square); window is the causal sliding window in keys. The times\n"
    "are kernel times (cupti-median): no host time is added. The source called\n"
    "each library's training entry point, where only FlashAttention-2 splits the\n"
    "keys of a forward by its heuristic: the other kernels are predicted with\n"
    "--kv-splits 1. page_size (keys per page; empty or 0: contiguous) and\n"
    "kv_cache_dtype (empty: dtype) are the KV cache read: a paged row, and one of\n"
    "phase generation (the cuDNN frontend's attention_inference decode), is\n"
    "predicted with the kernel's split heuristic (the inference entry points').\n"
    "\n"
    "The model is analytical and takes no constant from these rows, so holding\n"
    "out a GPU (or any group) gives the same numbers as the full table. With\n"
    "--db the predictions are those of the default predictor with these\n"
    "databases alone (the prebuilt ones hidden): a shape stored exactly is its\n"
    "measurement, others the model scaled by the stored rows of the same GPU,\n"
    "impl, dtype and pass (calibrated), else the model; the table then counts\n"
    "the rows answered measured and calibrated. Leave the rows scored out of\n"
    "the databases (tools/cv-eval-attention.py does, one GPU or model at a\n"
    "time).\n"
    "\n"
    "Options:\n"
    "  --input FILE       the measured CSV ('-' = stdin); required\n"
    "  --output FILE      the per-row comparison as CSV: the input columns, then\n"
    "                     pred_us, pred_tflops, ape_pct, signed_pct, kernel,\n"
    "                     kv_splits, (with --db) source, status (ok, refused) and\n"
    "                     message\n"
    "  --db FILE          predict with this database's attention rows (repeatable)\n"
    "  --group-by COL[+COL...]   also group by these columns (e.g. mask, window,\n"
    "                     deterministic, model)\n"
    "  --json, --csv      machine-readable summary (default: a table)\n"
    "\n"
    "A row that cannot be read (unknown GPU or impl, bad number) is reported\n"
    "with FILE:LINE and counted as failed; the exit status is then 2.\n";

#define MAX_GROUP_COLS 4 /* --group-by options, each up to 4 columns joined with + */

#define MAX_DBS 8

/* The column indices a row needs; -1 where an optional one is absent. */
struct acols {
    int gpu, dtype, impl, pass, batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal, time;
    int head_dim_vo, mask, window, deterministic, page_size, kv_cache_dtype, phase;
};

/* A non-negative integer field; an empty optional field reads as 0. */
static bool field_int(char **fields, int col, bool optional, long long *out)
{
    if (col < 0 || (optional && !*fields[col])) {
        *out = 0;
        return col >= 0 || optional;
    }
    return tc_parse_i64(fields[col], out) == TC_OK && *out >= 0;
}

/* Fills q from one row; false (with *why) when a field cannot be read. */
static bool row_query(char **fields, const struct acols *c, struct tc_attention_query *q,
                      double *time_us, const char **why)
{
    long long v[7], hd_vo, window, det, causal, page;
    int64_t *dst[] = {&q->batch, &q->heads, &q->kv_heads, &q->seq_q, &q->seq_kv, &q->head_dim};
    int cols[] = {c->batch, c->heads, c->kv_heads, c->seq_q, c->seq_kv, c->head_dim};

    memset(q, 0, sizeof(*q));
    if (tc_dtype_parse(fields[c->dtype], &q->dtype) < 0) {
        *why = "dtype";
        return false;
    }
    if (tc_attn_impl_parse(fields[c->impl], &q->impl) < 0) {
        *why = "impl";
        return false;
    }
    if (strcmp(fields[c->pass], "fwd") == 0)
        q->backward = false;
    else if (strcmp(fields[c->pass], "bwd") == 0)
        q->backward = true;
    else {
        *why = "pass (fwd or bwd)";
        return false;
    }
    for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
        if (!field_int(fields, cols[i], false, &v[i]) || v[i] <= 0) {
            *why = "a dimension";
            return false;
        }
        *dst[i] = v[i];
    }
    if (!field_int(fields, c->causal, false, &causal) || causal > 1 ||
        !field_int(fields, c->head_dim_vo, true, &hd_vo) ||
        !field_int(fields, c->window, true, &window) ||
        !field_int(fields, c->deterministic, true, &det) || det > 1) {
        *why = "causal, head_dim_vo, window or deterministic";
        return false;
    }
    if (!field_int(fields, c->page_size, true, &page) || page > INT32_MAX) {
        *why = "page_size";
        return false;
    }
    q->page_size = page;
    if (c->kv_cache_dtype >= 0 && *fields[c->kv_cache_dtype]) {
        /* tilecast's names, or the cuDNN frontend's (--kv_cache_dtype) */
        const char *kv = fields[c->kv_cache_dtype];

        if (strcmp(kv, "bfloat16") == 0)
            q->kv_dtype = TC_DTYPE_BF16;
        else if (strcmp(kv, "float16") == 0)
            q->kv_dtype = TC_DTYPE_FP16;
        else if (strcmp(kv, "fp8_e4m3") == 0)
            q->kv_dtype = TC_DTYPE_FP8;
        else if (tc_dtype_parse(kv, &q->kv_dtype) < 0) {
            static char what[80]; /* the command runs on one thread */

            snprintf(what, sizeof(what), "kv_cache_dtype '%.40s'", kv);
            *why = what;
            return false;
        }
    }
    if (tc_parse_double(fields[c->time], time_us) != TC_OK || !(*time_us > 0)) {
        *why = "time_us";
        return false;
    }
    q->causal = causal == 1;
    q->head_dim_vo = hd_vo;
    q->window = window;
    q->deterministic = q->backward && det == 1;
    /* FlashAttention-2's mha_fwd applies its split-KV heuristic to every
     * forward without dropout; FA3's and FA4's flash_attn_func default to
     * num_splits = 1, and cuDNN's training graph has no split. */
    q->kv_splits = q->impl == TC_ATTN_FLASH2 || q->impl == TC_ATTN_FLASH ? 0 : 1;
    /* a paged cache is read through the inference entry points
     * (flash_attn_with_kvcache), whose num_splits 0 runs the heuristic, as
     * are the cuDNN frontend's generation rows (benchmark/attention_inference:
     * cuDNN's inference graph splits as the library chooses, FA4's decode
     * runs num_splits 0, "auto") */
    if (q->page_size || (c->phase >= 0 && strcmp(fields[c->phase], "generation") == 0))
        q->kv_splits = 0;
    return true;
}

int cmd_eval_attention(int argc, char **argv)
{
    const char *cmd = "eval --attention";
    struct eval_opts o = {.fmt = CLI_FORMAT_TABLE};
    const char *input, *output;
    int group_col[EVAL_GROUP_COLS], n_group_col = 0;
    struct tc_specs *specs = NULL;
    struct tc_predictor *p = NULL;
    const char *dbs[MAX_DBS];
    int n_dbs = 0;
    FILE *in = NULL, *out = NULL;
    struct tc_csv *csv = NULL;
    struct eval_groups gs = {0};
    struct eval_group all = {.key = "all"};
    struct acols c;
    char **fields, **header = NULL;
    const char *in_name;
    int nfields, header_n = 0, r, rc = CLI_EXIT_OK;
    long rows = 0, failed = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int pr;

        if (strcmp(a, "--attention") == 0)
            continue;
        if ((pr = eval_opt(cmd, argc, argv, &i, MAX_GROUP_COLS, "options", &o)) != 0) {
            if (pr < 0)
                return CLI_EXIT_USAGE;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(cmd_eval_attention_help, stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(a, "--db") == 0) {
            if (i + 1 >= argc || !*argv[i + 1]) {
                cli_error(cmd, "--db needs a database file");
                return CLI_EXIT_USAGE;
            }
            if (n_dbs == MAX_DBS) {
                cli_error(cmd, "at most %d --db files", MAX_DBS);
                return CLI_EXIT_USAGE;
            }
            dbs[n_dbs++] = argv[++i];
        } else {
            cli_error(cmd, "unknown argument '%s' (see 'tilecast eval --attention --help')", a);
            return CLI_EXIT_USAGE;
        }
    }
    input = o.input;
    output = o.output;
    if (!input) {
        cli_error(cmd, "--input FILE is required (a measured fused-attention CSV)");
        return CLI_EXIT_USAGE;
    }
    if (strcmp(input, "-") != 0 && !cli_input_readable(cmd, input))
        return CLI_EXIT_INPUT;
    in_name = strcmp(input, "-") == 0 ? "<stdin>" : input;
    if (!(specs = cli_load_specs(cmd)))
        return CLI_EXIT_INPUT;
    if (n_dbs) {
        /* the user's databases replace the prebuilt ones: a held-out
         * evaluation never sees the shipped rows */
        if (!(p = tc_predictor_new(specs))) {
            rc = cli_fail(cmd, TC_ERR_NOMEM);
            goto cleanup;
        }
        for (int k = 0; k < n_dbs; k++) {
            int err = tc_predictor_add_db(p, dbs[k]);

            if (err < 0) {
                rc = cli_fail(cmd, err);
                goto cleanup;
            }
        }
    }
    if ((rc = eval_open_input(cmd, input, &in)) != CLI_EXIT_OK)
        goto cleanup;
    if (output && !(out = fopen(output, "w"))) {
        cli_error(cmd, "%s: cannot create: %s", output, strerror(errno));
        rc = CLI_EXIT_RUNTIME;
        goto cleanup;
    }
    if ((rc = eval_read_header(cmd, in, in_name, &csv, &nfields, &fields)) != CLI_EXIT_OK)
        goto cleanup;
    c = (struct acols){
        .gpu = tc_csv_find(nfields, fields, "gpu"),
        .dtype = tc_csv_find(nfields, fields, "dtype"),
        .impl = tc_csv_find(nfields, fields, "impl"),
        .pass = tc_csv_find(nfields, fields, "pass"),
        .batch = tc_csv_find(nfields, fields, "batch"),
        .heads = tc_csv_find(nfields, fields, "heads"),
        .kv_heads = tc_csv_find(nfields, fields, "kv_heads"),
        .seq_q = tc_csv_find(nfields, fields, "seq_q"),
        .seq_kv = tc_csv_find(nfields, fields, "seq_kv"),
        .head_dim = tc_csv_find(nfields, fields, "head_dim"),
        .causal = tc_csv_find(nfields, fields, "causal"),
        .time = tc_csv_find(nfields, fields, "time_us"),
        .head_dim_vo = tc_csv_find(nfields, fields, "head_dim_vo"),
        .mask = tc_csv_find(nfields, fields, "mask"),
        .window = tc_csv_find(nfields, fields, "window"),
        .deterministic = tc_csv_find(nfields, fields, "deterministic"),
        .page_size = tc_csv_find(nfields, fields, "page_size"),
        .kv_cache_dtype = tc_csv_find(nfields, fields, "kv_cache_dtype"),
        .phase = tc_csv_find(nfields, fields, "phase"),
    };
    {
        static const char *const required[] = {"gpu",    "dtype",    "impl",     "pass",
                                               "batch",  "heads",    "kv_heads", "seq_q",
                                               "seq_kv", "head_dim", "causal",   "time_us"};

        rc = eval_require_columns(cmd, in_name, nfields, fields, required,
                                  sizeof(required) / sizeof(required[0]));
        if (rc != CLI_EXIT_OK)
            goto cleanup;
    }
    rc = eval_prepare(
        cmd, in_name, &o, nfields, fields, group_col, &n_group_col, &header, &header_n, out,
        p ? "pred_us,pred_tflops,ape_pct,signed_pct,kernel,kv_splits,source,status,"
            "message\n"
          : "pred_us,pred_tflops,ape_pct,signed_pct,kernel,kv_splits,status,message\n");
    if (rc != CLI_EXIT_OK)
        goto cleanup;

    while ((r = tc_csv_next(csv, &nfields, &fields)) > 0) {
        struct tc_attention_query q;
        struct tc_attention_prediction pred;
        const struct tc_gpu *gpu;
        const char *why = NULL;
        char key[EVAL_KEY_MAX], msg[512] = "";
        struct eval_group *g;
        double meas_us;
        bool ok;
        int err;

        rows++;
        gpu = eval_row_gpu(cmd, in_name, csv, specs, nfields, header_n, fields, c.gpu);
        if (gpu && !row_query(fields, &c, &q, &meas_us, &why))
            cli_error(cmd, "%s:%ld: cannot read %s", in_name, tc_csv_line(csv), why);
        if (!gpu || why) {
            failed++;
            continue;
        }
        snprintf(key, sizeof(key), "%s\t%s\t%s\t%s", fields[c.gpu], fields[c.impl], fields[c.dtype],
                 fields[c.pass]);
        eval_key_append(key, sizeof(key), fields, group_col, n_group_col);
        if (!(g = eval_group_get(&gs, key))) {
            rc = cli_fail(cmd, TC_ERR_NOMEM);
            goto cleanup;
        }
        if (q.causal && c.mask >= 0 && strcmp(fields[c.mask], "top_left") == 0 &&
            q.seq_q != q.seq_kv) {
            err = TC_ERR_UNSUPPORTED;
            snprintf(msg, sizeof(msg), "a top-left causal mask with seq_q != seq_kv");
        } else if (c.mask >= 0 && strcmp(fields[c.mask], "no_mask") != 0 &&
                   strcmp(fields[c.mask], "top_left") != 0 && *fields[c.mask]) {
            err = TC_ERR_UNSUPPORTED;
            snprintf(msg, sizeof(msg), "mask '%s'", fields[c.mask]);
        } else {
            err = tc_predict_attention(p, gpu, &q, &pred);
            if (err < 0)
                tc_strlcpy(msg, tc_last_error(), sizeof(msg));
        }
        ok = err == TC_OK && pred.time_us > 0;
        if (ok) {
            struct tc_eval_point s = {
                .ape_pct = 100 * fabs(pred.time_us / meas_us - 1),
                .signed_pct = 100 * (pred.time_us / meas_us - 1),
                .meas_tflops = pred.flops / meas_us / 1e6,
                .pred_tflops = pred.tflops,
            };

            if (!eval_group_add(g, &s) || !eval_group_add(&all, &s)) {
                rc = cli_fail(cmd, TC_ERR_NOMEM);
                goto cleanup;
            }
            if (pred.source == TC_SOURCE_MEASURED) {
                g->measured++;
                all.measured++;
            } else if (pred.source == TC_SOURCE_CALIBRATED) {
                g->calibrated++;
                all.calibrated++;
            }
        } else {
            g->refused++;
            all.refused++;
        }
        if (out) {
            eval_write_fields(out, fields, nfields);
            if (ok) {
                fprintf(out, "%.3f,%.2f,%.2f,%.2f,%s,%lld,", pred.time_us, pred.tflops,
                        100 * fabs(pred.time_us / meas_us - 1), 100 * (pred.time_us / meas_us - 1),
                        tc_attn_impl_name(pred.kernel), (long long)pred.kv_splits);
                if (p)
                    fprintf(out, "%s,", tc_source_name(pred.source));
                fputs("ok,\n", out);
            } else {
                fputs(p ? ",,,,,,,refused," : ",,,,,,refused,", out);
                cli_csv_field(out, msg, true);
            }
        }
    }
    tc_clear_error();
    if (r < 0) {
        rc = cli_fail(cmd, r);
        goto cleanup;
    }
    eval_groups_sort(&gs);
    {
        static const char *const base[] = {"gpu", "impl", "dtype", "pass"};
        static const char *const stats[] = {
            "rows",     "refused",         "mape_pct", "median_ape_pct", "p90_ape_pct",
            "bias_pct", "spearman_tflops", "measured", "calibrated"};
        int n_stats = p ? 9 : 7;
        const char *headers[4 + EVAL_GROUP_COLS + 9];
        bool numeric[4 + EVAL_GROUP_COLS + 9] = {false};
        int ncols = 0;
        struct cli_table *t;

        for (int k = 0; k < 4; k++)
            headers[ncols++] = base[k];
        for (int k = 0; k < n_group_col; k++)
            headers[ncols++] = header[group_col[k]];
        for (int k = 0; k < n_stats; k++) {
            numeric[ncols] = true;
            headers[ncols++] = stats[k];
        }
        t = cli_table_new(ncols, headers, numeric);
        if (!t) {
            rc = cli_fail(cmd, TC_ERR_NOMEM);
            goto cleanup;
        }
        for (size_t i = 0; i <= gs.n; i++) {
            struct eval_group *g = i < gs.n ? &gs.g[i] : &all;
            int col = 0, err;

            eval_table_key(t, &col, g->key, 4 + n_group_col);
            cli_table_addf(t, col++, "%zu", g->n);
            cli_table_addf(t, col++, "%ld", g->refused);
            if ((err = eval_table_stats(t, &col, g)) < 0) {
                cli_table_free(t);
                rc = cli_fail(cmd, err);
                goto cleanup;
            }
            if (p) {
                cli_table_addf(t, col++, "%ld", g->measured);
                cli_table_addf(t, col++, "%ld", g->calibrated);
            }
            cli_table_end_row(t);
        }
        if (o.fmt == CLI_FORMAT_TABLE && !p)
            printf("Analytical predictions against %s (nothing fitted to the rows).\n\n", in_name);
        else if (o.fmt == CLI_FORMAT_TABLE)
            printf("Predictions with the attention rows of %d database(s) against %s (measured "
                   "where stored, calibrated where the GPU, impl, dtype and pass have rows).\n\n",
                   n_dbs, in_name);
        cli_table_print(t, stdout, o.fmt);
        cli_table_free(t);
    }
    if (failed) {
        cli_error(cmd, "%ld of %ld rows could not be read", failed, rows);
        rc = CLI_EXIT_INPUT;
    }

cleanup:
    rc = eval_cleanup(cmd, rc, &gs, &all, header, header_n, csv, in, out, output);
    tc_predictor_free(p);
    tc_specs_free(specs);
    return rc;
}
