/* tilecast bench: how fast the predictor is (and, through the collector's
 * own entry point, the collector harness). Figures are printed, never
 * asserted: speed depends on the machine. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "gemm-cli.h"

const char cmd_bench_help[] =
    "Usage: tilecast bench predict|calibrated|collector|all [--rows N] [--gpu ID]\n"
    "                      [--dtype DT]\n"
    "       tilecast bench   (with no benchmark named: all)\n"
    "\n"
    "Runs benchmarks and prints their figures (nothing is asserted):\n"
    "  predict    GEMM predictions per second on one core: in memory (one call\n"
    "             per shape, and tc_predict_gemm_batch), and streamed through\n"
    "             'predict gemm --input' CSV parsing and writing; peak resident\n"
    "             memory (getrusage) before and after streaming N rows, which\n"
    "             must not grow with N\n"
    "  calibrated calibrated predictions per second and the time to open a\n"
    "             prebuilt database and become ready ('tilecast bench\n"
    "             calibrated --help' for its options)\n"
    "  collector  the collector harness benchmark ('tilecast bench collector\n"
    "             --help' for its options)\n"
    "  all        every benchmark (the default with no argument)\n"
    "\n"
    "Options (predict):\n"
    "  --rows N     shapes per measurement (default 1000000)\n"
    "  --gpu ID     GPU to predict for (default a100-sxm4-80gb)\n"
    "  --dtype DT   dtype (default fp16)\n";

/* CPU time of this process: on a shared or loaded machine, wall time
 * measures the neighbours; the figures are per core of CPU actually used. */
static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long peak_rss_kib(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return ru.ru_maxrss; /* KiB on Linux */
}

/* A deterministic spread of shapes: transformer-like sizes with a mix of
 * alignments, so every kernel class and split factor is exercised. */
static void shape_at(uint64_t i, struct tc_gemm_query *q, enum tc_dtype dtype)
{
    uint64_t x = i * 6364136223846793005ull + 1442695040888963407ull;

    memset(q, 0, sizeof(*q));
    q->m = 1 + (int64_t)((x >> 11) % 8192);
    q->n = 64 * (1 + (int64_t)((x >> 27) % 256)) + (int64_t)((x >> 5) % 3);
    q->k = 64 * (1 + (int64_t)((x >> 41) % 128));
    q->batch = 1;
    q->dtype = dtype;
    q->layout = TC_LAYOUT_NT;
}

static int bench_predict(int argc, char **argv)
{
    const char *cmd = "bench predict";
    const char *gpu_id = "a100-sxm4-80gb";
    enum tc_dtype dtype = TC_DTYPE_FP16;
    long long rows = 1000000;
    struct tc_specs *specs = NULL;
    struct tc_predictor *p = NULL;
    const struct tc_gpu *gpu;
    struct tc_gemm_query *qs = NULL;
    struct tc_gemm_prediction *out = NULL;
    const size_t chunk = 4096;
    double t0, t1, sink = 0;
    int rc = CLI_EXIT_OK;
    char tmpl[] = "/tmp/tilecast-bench-XXXXXX";
    char in_path[64] = "", out_path[64] = "";
    int fd = -1;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
            if (!cli_parse_int(cmd, "--rows", argv[++i], 1000, 1000000000LL, &rows))
                return CLI_EXIT_INPUT;
        } else if (strcmp(argv[i], "--gpu") == 0 && i + 1 < argc) {
            gpu_id = argv[++i];
        } else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) {
            if (tc_dtype_parse(argv[++i], &dtype) < 0) {
                cli_error(cmd, "--dtype: %s", tc_last_error());
                return CLI_EXIT_INPUT;
            }
        } else {
            char hint[96];

            cli_error(cmd, "unknown argument '%s'%s (see 'tilecast bench --help')", argv[i],
                      cli_suggest_option(argv[i], cmd_bench_help, hint, sizeof(hint)));
            return CLI_EXIT_USAGE;
        }
    }
    if (!(specs = cli_load_specs(cmd)))
        return CLI_EXIT_INPUT;
    if (!(gpu = cli_find_gpu(cmd, specs, gpu_id))) {
        rc = CLI_EXIT_INPUT;
        goto cleanup;
    }
    if (!(p = tc_predictor_new(specs))) {
        rc = cli_fail(cmd, TC_ERR_NOMEM);
        goto cleanup;
    }
    tc_predictor_set_analytical(p, true);
    qs = malloc(chunk * sizeof(*qs));
    out = malloc(chunk * sizeof(*out));
    if (!qs || !out) {
        rc = cli_fail(cmd, TC_ERR_NOMEM);
        goto cleanup;
    }
    printf("GEMM predictor benchmark: %lld shapes, %s %s, one thread, rates per second of "
           "CPU time (predictions, not measurements of the GPU)\n",
           rows, gpu->id, tc_dtype_name(dtype));

    /* 1. One call per shape, the analytical entry point. */
    {
        struct tc_gemm_prediction pr;
        int err;

        shape_at(0, &qs[0], dtype);
        if ((err = tc_predict_gemm_analytical(gpu, &qs[0], &pr)) < 0) {
            rc = cli_fail(cmd, err);
            goto cleanup;
        }
        t0 = now_s();
        for (long long i = 0; i < rows; i++) {
            shape_at((uint64_t)i, &qs[0], dtype);
            if (tc_predict_gemm_analytical(gpu, &qs[0], &pr) == TC_OK)
                sink += pr.time_us;
        }
        t1 = now_s();
        printf("  %-34s %12.0f predictions/s  (%.0f ns each)\n", "tc_predict_gemm_analytical",
               (double)rows / (t1 - t0), 1e9 * (t1 - t0) / (double)rows);
    }
    /* 2. Batches through the predictor. */
    t0 = now_s();
    for (long long done = 0; done < rows;) {
        size_t n = (size_t)(rows - done < (long long)chunk ? rows - done : (long long)chunk);

        for (size_t j = 0; j < n; j++)
            shape_at((uint64_t)(done + (long long)j), &qs[j], dtype);
        if (tc_predict_gemm_batch(p, gpu, n, qs, out, NULL) != 0) {
            rc = cli_fail(cmd, TC_ERR_INVALID);
            goto cleanup;
        }
        sink += out[0].time_us;
        done += (long long)n;
    }
    t1 = now_s();
    printf("  %-34s %12.0f predictions/s\n", "tc_predict_gemm_batch, analytical",
           (double)rows / (t1 - t0));

    /* 3. Streaming a CSV through `predict gemm --input`, as a user would. */
    {
        FILE *f;
        long rss_before, rss_after;
        char *args[] = {"predict",
                        "gemm",
                        "--analytical",
                        "--gpu",
                        (char *)gpu->id,
                        "--dtype",
                        (char *)tc_dtype_name(dtype),
                        "--input",
                        in_path,
                        "--output",
                        out_path,
                        NULL};

        fd = mkstemp(tmpl);
        if (fd < 0) {
            cli_error(cmd, "cannot create a temporary file: %s", strerror(errno));
            rc = CLI_EXIT_RUNTIME;
            goto cleanup;
        }
        snprintf(in_path, sizeof(in_path), "%s", tmpl);
        snprintf(out_path, sizeof(out_path), "%s.out", tmpl);
        if (!(f = fdopen(fd, "w"))) {
            cli_error(cmd, "%s: %s", in_path, strerror(errno));
            rc = CLI_EXIT_RUNTIME;
            goto cleanup;
        }
        fd = -1;
        fputs("m,n,k,layout\n", f);
        for (long long i = 0; i < rows; i++) {
            struct tc_gemm_query q;

            shape_at((uint64_t)i, &q, dtype);
            fprintf(f, "%lld,%lld,%lld,NT\n", (long long)q.m, (long long)q.n, (long long)q.k);
        }
        if (fclose(f) != 0) {
            cli_error(cmd, "%s: write failed", in_path);
            rc = CLI_EXIT_RUNTIME;
            goto cleanup;
        }
        rss_before = peak_rss_kib();
        t0 = now_s();
        rc = cmd_predict(11, args);
        t1 = now_s();
        rss_after = peak_rss_kib();
        if (rc != CLI_EXIT_OK)
            goto cleanup;
        printf("  %-34s %12.0f rows/s (CSV in and out)\n", "predict gemm --analytical --input",
               (double)rows / (t1 - t0));
        printf("  %-34s %ld KiB before, %ld KiB after %lld rows (growth %ld KiB)\n", "peak RSS",
               rss_before, rss_after, rows, rss_after - rss_before);
    }
    if (sink < 0)
        printf("(unreachable)\n");

cleanup:
    if (fd >= 0)
        close(fd);
    if (fd >= 0 || in_path[0])
        unlink(tmpl);
    if (out_path[0])
        unlink(out_path);
    free(qs);
    free(out);
    tc_predictor_free(p);
    tc_specs_free(specs);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    const char *which = argc > 1 && argv[1][0] != '-' ? argv[1] : "all";
    int shift = argc > 1 && argv[1][0] != '-' ? 1 : 0;
    int rc;

    if (strcmp(which, "predict") == 0)
        return bench_predict(argc - shift, argv + shift);
    if (strcmp(which, "calibrated") == 0)
        return cmd_bench_calibrated(argc - shift, argv + shift);
    if (strcmp(which, "collector") == 0)
        return cmd_bench_collector(argc - shift, argv + shift);
    if (strcmp(which, "all") != 0) {
        cli_error("bench",
                  "unknown benchmark '%s' (expected predict, calibrated, collector or all)", which);
        return CLI_EXIT_USAGE;
    }
    rc = bench_predict(argc - shift, argv + shift);
    if (rc != CLI_EXIT_OK)
        return rc;
    {
        char *args[] = {"calibrated", NULL};

        rc = cmd_bench_calibrated(1, args);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    {
        char *args[] = {"collector", NULL};

        return cmd_bench_collector(1, args);
    }
}
