/* tilecast db calibrate: fit the calibration of each GPU and dtype of a
 * database and store it there; tilecast bench calibrated: how fast the
 * calibrated predictor opens a database and predicts. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

const char cmd_db_calibrate_help[] =
    "Usage: tilecast db calibrate DB [--gpu ID] [--dtype DTYPE] [--dry-run]\n"
    "                             [--json | --csv]\n"
    "\n"
    "Fits the analytical GEMM model to the measured ok rows of each GPU and\n"
    "dtype in DB and stores the fitted parameters in DB's calibration table, so\n"
    "that predictors reading DB (even read-only, on a laptop) use them without\n"
    "refitting. One calibration per GPU, dtype and model version is kept: a\n"
    "new fit replaces the current version's; rows of other versions stay and\n"
    "are never used (a predictor recomputes, and says so). A predictor fits in\n"
    "memory only up to 50000 rows of one GPU and dtype: a larger database must\n"
    "be calibrated before predictions read it.\n"
    "\n"
    "The fit (robust: Huber-weighted least squares on log time) rescales the\n"
    "model's parts:\n"
    "  t = c_o*overhead + max(c_c*f[kernel]*compute, c_m*memory) * a[align]\n"
    "      + h[timing] + x[timing, op]\n"
    "  c_compute   compute efficiency (effective tensor clock x MMA efficiency)\n"
    "  f[kernel]   efficiency of each kernel configuration (tile shape, stages)\n"
    "              used by at least 20 rows, relative to c_compute\n"
    "  c_memory    bandwidth efficiency\n"
    "  c_overhead  launch, pipeline fill and epilogue cost\n"
    "  a[align]    penalty of the 16-byte, 4-byte and unaligned classes against\n"
    "              the 128-byte class (fitted where the data holds both)\n"
    "  h[timing]   host cost a timing method adds (CUDA events around a framework\n"
    "              op, wall clock with a synchronize) to a plain GEMM call (mm,\n"
    "              bmm); predictions are kernel time\n"
    "  x[timing, op]  not fitted: what nn.Linear's longer host path adds under a\n"
    "              host-timed method (23 us; 0 for mm, bmm and kernel time), from\n"
    "              each row's op, so a mix of ops does not bias h\n"
    "Then the residuals of the nearest measured shapes (log m, n, k, batch; same\n"
    "layout and alignment class) correct each prediction; the kernel width, the\n"
    "shrinkage and the weight of n and k are chosen by leave-one-shape-out\n"
    "cross-validation, whose errors also give the 80% prediction interval.\n"
    "\n"
    "Options:\n"
    "  --gpu ID        only this GPU\n"
    "  --dtype DTYPE   only this input dtype\n"
    "  --dry-run       fit and print, but do not store\n"
    "  --json, --csv   print the table as JSON or CSV\n"
    "  -h, --help      print this help\n"
    "\n"
    "Example:\n"
    "  tilecast db calibrate h100.db --gpu h100-sxm5-80gb --dry-run\n"
    "\n"
    "Columns: rows fitted; the scales; host_event_us and host_wall_us; fit_p50_pct\n"
    "and fit_p90_pct, the median and 90th percentile absolute error of the fit;\n"
    "heldout_mape_pct, the leave-one-shape-out error with the neighbour\n"
    "correction (rows >= 20 us); interval_pct, the 80% interval for >= 200 us.\n"
    "\n"
    "Exit status: 0 ok; 1 usage; 2 DB unreadable or no rows to fit; 3 runtime.\n";

const char cmd_bench_calibrated_help[] =
    "Usage: tilecast bench calibrated [--gpu ID] [--db FILE] [--dtype DTYPE]\n"
    "                                 [--predictions N] [--opens N]\n"
    "\n"
    "Measures, on one core, the time to open a database and become ready to\n"
    "predict (the first prediction includes reading the rows, evaluating the\n"
    "model on them and fitting, or loading a stored calibration), and the rate\n"
    "of calibrated predictions in batch mode (targets: <= 50 ms and\n"
    ">= 200,000 predictions/s). Prints wall-clock and CPU figures (they differ\n"
    "on a busy machine); asserts nothing.\n"
    "\n"
    "Options:\n"
    "  --gpu ID          GPU to predict for (default a100-sxm4-80gb)\n"
    "  --db FILE         database to calibrate from (default: the GPU's prebuilt\n"
    "                    database)\n"
    "  --dtype DTYPE     dtype of the queries (default fp16)\n"
    "  --predictions N   predictions in the batch (default 1000000)\n"
    "  --opens N         open-and-ready repetitions, median reported (default 5)\n"
    "  -h, --help        print this help\n";

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this process: on a busy machine the wall clock also counts
 * other processes' turns; both are printed. */
static double cpu_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void add_row(struct cli_table *t, const struct tc_calib_summary *s)
{
    cli_table_addf(t, 0, "%s", s->gpu_id);
    cli_table_addf(t, 1, "%s", tc_dtype_name(s->dtype));
    cli_table_addf(t, 2, "%lld", (long long)s->rows);
    cli_table_addf(t, 3, "%.4f", s->c_compute);
    cli_table_addf(t, 4, "%.4f", s->c_memory);
    cli_table_addf(t, 5, "%.4f", s->c_overhead);
    cli_table_addf(t, 6, "%.3f", s->align_16b);
    cli_table_addf(t, 7, "%.3f", s->align_4b);
    cli_table_addf(t, 8, "%.3f", s->align_elem);
    cli_table_addf(t, 9, "%.2f", s->host_event_us);
    cli_table_addf(t, 10, "%.2f", s->host_wall_us);
    cli_table_addf(t, 11, "%.2f", s->fit_p50_pct);
    cli_table_addf(t, 12, "%.2f", s->fit_p90_pct);
    cli_table_addf(t, 13, "%.2f", s->heldout_mape_pct);
    cli_table_addf(t, 14, "%.1f..+%.1f", s->interval_lo_pct, s->interval_hi_pct);
    cli_table_addf(t, 15, "%s", s->stored ? "yes" : "no");
    cli_table_end_row(t);
}

int cmd_db_calibrate(int argc, char **argv)
{
    static const char *const headers[] = {
        "gpu",          "dtype",       "rows",        "c_compute",        "c_memory",
        "c_overhead",   "align_16b",   "align_4b",    "align_elem",       "host_event_us",
        "host_wall_us", "fit_p50_pct", "fit_p90_pct", "heldout_mape_pct", "interval_pct",
        "stored",
    };
    static const bool numeric[] = {false, false, true, true, true, true, true,  true,
                                   true,  true,  true, true, true, true, false, false};
    const char *cmd = "db calibrate", *path = NULL, *gpu_filter = NULL;
    enum cli_format fmt = CLI_FORMAT_TABLE;
    enum tc_dtype dtype_filter = TC_DTYPE_COUNT;
    bool dry_run = false;
    struct tc_specs *specs = NULL;
    struct tc_db *db = NULL;
    struct tc_calib_report *report = NULL;
    struct cli_table *t = NULL;
    size_t fitted;
    int ret = CLI_EXIT_OK, err;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(cmd_db_calibrate_help, stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(a, "--gpu") == 0 || strcmp(a, "--dtype") == 0) {
            if (i + 1 >= argc) {
                cli_error(cmd, "%s needs a value", a);
                return CLI_EXIT_USAGE;
            }
            if (strcmp(a, "--gpu") == 0) {
                gpu_filter = argv[++i];
            } else if (tc_dtype_parse(argv[++i], &dtype_filter) < 0) {
                cli_error(cmd, "--dtype: %s", tc_last_error());
                return CLI_EXIT_INPUT;
            }
        } else if (strcmp(a, "--dry-run") == 0) {
            dry_run = true;
        } else if (cli_parse_format(a, &fmt)) {
            continue;
        } else if (a[0] == '-' && a[1]) {
            char hint[96];

            cli_error(cmd, "unknown option '%s'%s (see tilecast db calibrate --help)", a,
                      cli_suggest_option(a, cmd_db_calibrate_help, hint, sizeof(hint)));
            return CLI_EXIT_USAGE;
        } else if (!path) {
            path = a;
        } else {
            cli_error(cmd, "one database at a time ('%s' and '%s')", path, a);
            return CLI_EXIT_USAGE;
        }
    }
    if (!path) {
        cli_error(cmd, "no database given (usage: tilecast db calibrate DB [--gpu ID] "
                       "[--dtype DTYPE])");
        return CLI_EXIT_USAGE;
    }
    specs = cli_load_specs(cmd);
    if (!specs)
        return CLI_EXIT_INPUT;
    /* --gpu as every command takes it; a database may also hold GPUs that
     * no spec describes, and those are matched as given */
    if (gpu_filter) {
        const struct tc_gpu *g = tc_specs_lookup(specs, gpu_filter);

        if (g)
            gpu_filter = g->id;
    }
    if (tc_db_open(path, dry_run ? TC_DB_READONLY : TC_DB_READWRITE, &db) < 0) {
        cli_error(cmd, "%s", tc_last_error());
        ret = CLI_EXIT_INPUT;
        goto cleanup;
    }
    t = cli_table_new((int)(sizeof(headers) / sizeof(headers[0])), headers, numeric);
    if (!t) {
        ret = CLI_EXIT_RUNTIME;
        goto cleanup;
    }
    err =
        tc_db_calibrate(db, specs, gpu_filter,
                        dtype_filter == TC_DTYPE_COUNT ? -1 : (int)dtype_filter, !dry_run, &report);
    if (err < 0) {
        ret = cli_fail(cmd, err);
        goto cleanup;
    }
    fitted = tc_calib_report_count(report);
    for (size_t i = 0; i < fitted; i++)
        add_row(t, tc_calib_report_at(report, i));
    if (!fitted) {
        cli_error(cmd, "%s: no measured ok GEMM rows%s%s%s%s to calibrate", path,
                  gpu_filter ? " of " : "", gpu_filter ? gpu_filter : "",
                  dtype_filter != TC_DTYPE_COUNT ? " in " : "",
                  dtype_filter != TC_DTYPE_COUNT ? tc_dtype_name(dtype_filter) : "");
        ret = CLI_EXIT_INPUT;
        goto cleanup;
    }
    cli_table_print(t, stdout, fmt);
cleanup:
    cli_table_free(t);
    tc_calib_report_free(report);
    tc_db_close(db);
    tc_specs_free(specs);
    return ret;
}

/* A deterministic spread of shapes like those a layer sweep asks for:
 * token counts from 1 to 8192, widths of common hidden sizes. */
static void bench_queries(struct tc_gemm_query *q, size_t n, enum tc_dtype dtype)
{
    static const int64_t widths[] = {1024,  2048,  4096,  5120,  6144,  8192, 10240,
                                     11008, 13824, 14336, 22016, 28672, 44032};
    uint64_t state = 0x9e3779b97f4a7c15ull;

    for (size_t i = 0; i < n; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        q[i].m = 1 + (int64_t)((state >> 33) % 8192);
        q[i].n = widths[(state >> 20) % (sizeof(widths) / sizeof(widths[0]))];
        q[i].k = widths[(state >> 8) % (sizeof(widths) / sizeof(widths[0]))];
        q[i].batch = 1;
        q[i].dtype = dtype;
        q[i].layout = TC_LAYOUT_NT;
        q[i].lda = q[i].ldb = q[i].ldc = 0;
    }
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int cmd_bench_calibrated(int argc, char **argv)
{
    const char *cmd = "bench calibrated", *gpu_id = "a100-sxm4-80gb", *db_path = NULL;
    enum tc_dtype dtype = TC_DTYPE_FP16;
    long long n_pred = 1000000, n_open = 5;
    struct tc_specs *specs = NULL;
    const struct tc_gpu *gpu;
    struct tc_predictor *p = NULL;
    struct tc_gemm_query *q = NULL;
    struct tc_gemm_prediction *out = NULL;
    double open_ms[64], open_cpu_ms[64], t0, c0, elapsed, elapsed_cpu;
    size_t by_source[4] = {0};
    int ret = CLI_EXIT_OK;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(cmd_bench_calibrated_help, stdout);
            return CLI_EXIT_OK;
        }
        if (!v || a[0] != '-') {
            cli_error(cmd, v ? "unexpected argument '%s'" : "%s needs a value (see --help)", a);
            return CLI_EXIT_USAGE;
        }
        i++;
        if (strcmp(a, "--gpu") == 0) {
            gpu_id = v;
        } else if (strcmp(a, "--db") == 0) {
            db_path = v;
        } else if (strcmp(a, "--dtype") == 0) {
            if (tc_dtype_parse(v, &dtype) < 0) {
                cli_error(cmd, "--dtype: %s", tc_last_error());
                return CLI_EXIT_INPUT;
            }
        } else if (strcmp(a, "--predictions") == 0) {
            if (!cli_parse_int(cmd, a, v, 1, 100000000, &n_pred))
                return cli_value_status(v);
        } else if (strcmp(a, "--opens") == 0) {
            if (!cli_parse_int(cmd, a, v, 1, 64, &n_open))
                return cli_value_status(v);
        } else {
            char hint[96];

            cli_error(cmd, "unknown option '%s'%s (see tilecast bench calibrated --help)", a,
                      cli_suggest_option(a, cmd_bench_calibrated_help, hint, sizeof(hint)));
            return CLI_EXIT_USAGE;
        }
    }
    if (db_path && !cli_input_readable(cmd, db_path))
        return CLI_EXIT_INPUT;
    specs = cli_load_specs(cmd);
    if (!specs)
        return CLI_EXIT_INPUT;
    gpu = cli_find_gpu(cmd, specs, gpu_id);
    if (!gpu) {
        ret = CLI_EXIT_INPUT;
        goto cleanup;
    }
    q = calloc((size_t)n_pred, sizeof(*q));
    out = calloc((size_t)n_pred, sizeof(*out));
    if (!q || !out) {
        cli_error(cmd, "out of memory for %lld predictions", n_pred);
        ret = CLI_EXIT_RUNTIME;
        goto cleanup;
    }
    bench_queries(q, (size_t)n_pred, dtype);

    for (long long r = 0; r < n_open; r++) {
        struct tc_gemm_prediction one = {0};
        int err;

        tc_predictor_free(p);
        t0 = now_s();
        c0 = cpu_s();
        p = tc_predictor_new(specs);
        err = p ? TC_OK : TC_ERR_NOMEM;
        if (err == TC_OK && db_path)
            err = tc_predictor_add_db(p, db_path);
        if (err == TC_OK)
            err = tc_predict_gemm(p, gpu, &q[0], &one);
        if (err < 0) {
            ret = cli_fail(cmd, err);
            goto cleanup;
        }
        open_ms[r] = (now_s() - t0) * 1e3;
        open_cpu_ms[r] = (cpu_s() - c0) * 1e3;
        if (one.source != TC_SOURCE_CALIBRATED && one.source != TC_SOURCE_MEASURED) {
            cli_error(cmd, "no measurements of %s %s in %s: nothing calibrated to measure%s%s",
                      gpu->id, tc_dtype_name(dtype), db_path ? db_path : "the prebuilt databases",
                      tc_predictor_note(p)[0] ? " - " : "", tc_predictor_note(p));
            ret = CLI_EXIT_INPUT;
            goto cleanup;
        }
    }
    qsort(open_ms, (size_t)n_open, sizeof(double), cmp_dbl);
    qsort(open_cpu_ms, (size_t)n_open, sizeof(double), cmp_dbl);

    t0 = now_s();
    c0 = cpu_s();
    if (tc_predict_gemm_batch(p, gpu, (size_t)n_pred, q, out, NULL) != 0) {
        ret = cli_fail(cmd, TC_ERR_INVALID);
        goto cleanup;
    }
    elapsed = now_s() - t0;
    elapsed_cpu = cpu_s() - c0;
    for (long long i = 0; i < n_pred; i++)
        by_source[out[i].source]++;

    printf("GPU %s, %s, %s\n", gpu->id, tc_dtype_name(dtype),
           db_path ? db_path : "prebuilt database");
    printf("open database and become ready to predict: %.2f ms wall, %.2f ms CPU (median of "
           "%lld; wall min %.2f, max %.2f; target <= 50 ms)\n",
           open_ms[n_open / 2], open_cpu_ms[n_open / 2], n_open, open_ms[0], open_ms[n_open - 1]);
    printf("batch predictions: %lld in %.3f s wall, %.3f s CPU = %.0f predictions/s wall, %.0f "
           "per CPU second, one thread (target >= 200,000)\n",
           n_pred, elapsed, elapsed_cpu, (double)n_pred / elapsed, (double)n_pred / elapsed_cpu);
    printf("sources: %zu measured, %zu calibrated, %zu transferred, %zu analytical\n", by_source[0],
           by_source[1], by_source[2], by_source[3]);
cleanup:
    tc_predictor_free(p);
    free(q);
    free(out);
    tc_specs_free(specs);
    return ret;
}
