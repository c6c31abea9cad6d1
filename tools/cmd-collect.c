/* tilecast collect: measure a sweep into a database; and
 * tilecast bench collector: the harness overhead and insert throughput. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tilecast/collect.h"
#include "tc-internal.h"

const char cmd_collect_help[] =
    "Usage: tilecast collect --backend cuda|hip|cpu --sweep FILE|NAME --db OUT.db\n"
    "                        [OPTION]...\n"
    "\n"
    "Measures every shape of a sweep (GEMMs, batched GEMMs, unfused attention) with\n"
    "the vendor library and stores each measurement with the run's provenance in a\n"
    "SQLite database. Shipped sweeps, named alone (--sweep quick) or by path:\n"
    "quick, paper, exhaustive (collector/sweeps/ in the source tree, share/tilecast/\n"
    "collector/sweeps/ installed); the format is described in collector/sweeps/README.md.\n"
    "\n"
    "Each repetition is timed alone (device events on GPUs, CLOCK_MONOTONIC on the\n"
    "cpu backend) after an untimed flush of the last-level cache; repetitions\n"
    "continue until the 95% confidence interval of the median is within --rel-ci of\n"
    "it or the per-shape budget is spent. Library failures (out of memory,\n"
    "unsupported type or layout) are stored as rows with a status and the sweep\n"
    "continues. A device fault (a sticky CUDA error such as an illegal address),\n"
    "after which the device is unusable, stores the shape as an error row and\n"
    "stops with status 3; re-running continues after that shape.\n"
    "\n"
    "Re-running the same command skips shapes the same run configuration (backend,\n"
    "GPU, device name, sweep content, harness settings) already stored: a killed\n"
    "collection resumes where it stopped. Rows are committed in small batches.\n"
    "SIGINT or SIGTERM stops after the current shape, commits, and exits with\n"
    "status 3; a second one gives up the shape in progress at its next batch of\n"
    "repetitions (a re-run measures it) and commits the rest; a third ends the\n"
    "process at once, losing the rows since the last commit.\n"
    "\n"
    "Options:\n"
    "  --backend NAME        cuda (cuBLASLt), hip (hipBLASLt) or cpu (CBLAS);\n"
    "                        required\n"
    "  --sweep FILE|NAME     the sweep spec (YAML), or a shipped sweep's name; required\n"
    "  --db FILE             the database to write (created if missing); required\n"
    "                        unless --dry-run\n"
    "  --gpu ID              GPU spec id (see 'tilecast specs list'): stored as the\n"
    "                        spec snapshot, used for --dry-run estimates and for\n"
    "                        sharding by predicted time; it must be of the\n"
    "                        device's vendor and architecture (the cpu backend\n"
    "                        takes none); default: derived from the device name\n"
    "                        and its compute capability or gfx target\n"
    "  --device N            device index (default 0)\n"
    "  --shard I/N           measure shard I of N (0 <= I < N); shards are balanced\n"
    "                        by predicted time (FLOPs without --gpu) and\n"
    "                        deterministic. In a SLURM array job the default is\n"
    "                        the task's place in the array: (SLURM_ARRAY_TASK_ID -\n"
    "                        SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP of\n"
    "                        SLURM_ARRAY_TASK_COUNT\n"
    "  --resume              continue an earlier run of the same configuration (re-\n"
    "                        running does the same; --resume also says so when\n"
    "                        nothing is found)\n"
    "  --dry-run             print the number of shapes and, with --gpu, the\n"
    "                        predicted collection time; measures nothing\n"
    "  --rel-ci X            target relative CI half-width of the median (default\n"
    "                        0.01)\n"
    "  --max-time-per-shape-ms MS\n"
    "                        budget of warm-up and repetitions per shape, from the\n"
    "                        end of its set-up (default 2000)\n"
    "  --min-reps N          repetitions at least (default 5)\n"
    "  --max-reps N          repetitions at most (default 1000)\n"
    "  --warmup N            untimed warm-up repetitions at least (default 2)\n"
    "  --warmup-ms MS        and warm up for at least MS milliseconds, then until\n"
    "                        two warm-up batches agree within 2% (at most 5 x MS),\n"
    "                        so that an idle GPU's clocks are up (default 100; 0:\n"
    "                        --warmup repetitions only); the run's timing says which\n"
    "  --commit-rows N       commit after N rows (default 32) or 5 seconds\n"
    "  --progress-interval S seconds between progress lines when stderr is not a\n"
    "                        terminal (default 30); on a terminal a bar shows shapes\n"
    "                        done, rate and ETA\n"
    "  --quiet               no progress output\n"
    "  --compile-kernels ARCH\n"
    "                        build the backend's own kernels (the attention\n"
    "                        softmax, compiled at run time by NVRTC/hipRTC) for ARCH,\n"
    "                        e.g. sm_90 or gfx90a, without a device; prints the\n"
    "                        result and exits\n"
    "  --help                this text\n"
    "\n"
    "Merging shard files: tilecast db merge OUT.db shard-*.db\n"
    "\n"
    "Example:\n"
    "  tilecast collect --backend cuda --gpu h100-sxm5-80gb \\\n"
    "      --sweep paper --db h100-paper.db\n";

static volatile int stop_requested;

/* The first signal stops after the shape in progress, the second gives
 * that shape up (the harness checks between batches of repetitions), and
 * only a third ends the process the default way. */
static void on_signal(int sig)
{
    if (stop_requested < 2)
        stop_requested++;
    if (stop_requested >= 2)
        signal(sig, SIG_DFL);
}

/* Whether this build made the module of GPU backend `name`. The modules
 * are loaded only when asked for (tc_backend_load), so that commands that
 * measure nothing never load a GPU runtime. */
static bool gpu_backend_built(const char *name)
{
#if defined(TC_HAVE_CUDA_BACKEND)
    if (!strcmp(name, "cuda"))
        return true;
#endif
#if defined(TC_HAVE_HIP_BACKEND)
    if (!strcmp(name, "hip"))
        return true;
#endif
    (void)name;
    return false;
}

struct progress {
    bool tty, quiet;
    double interval_s, start_s, last_s;
    size_t last_done;
};

static void fmt_duration(double s, char *buf, size_t len)
{
    long t = isfinite(s) && s >= 0 ? (long)(s + 0.5) : -1;

    if (t < 0)
        snprintf(buf, len, "?");
    else if (s < 60)
        snprintf(buf, len, "%.3g s", s);
    else if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

static void on_progress(void *ud, const struct tc_collect_summary *sum, const struct tc_shape *s,
                        const struct tc_measurement *m)
{
    struct progress *p = ud;
    double now = tc_now_s(), elapsed = now - p->start_s;
    size_t done = sum->skipped + sum->measured;
    double rate = elapsed > 0 ? sum->measured / elapsed : 0;
    double eta = rate > 0 ? (double)(sum->in_shard - done) / rate : NAN;
    char eta_s[32], shape[160];

    if (p->quiet)
        return;
    fmt_duration(eta, eta_s, sizeof(eta_s));
    if (p->tty) {
        const int width = 30;
        int fill = sum->in_shard ? (int)(width * done / sum->in_shard) : width;

        if (now - p->last_s < 0.2 && done != sum->in_shard)
            return;
        p->last_s = now;
        fprintf(stderr, "\r[%.*s%*s] %zu/%zu shapes  %.2f/s  ETA %s  ", fill,
                "##############################", width - fill, "", done, sum->in_shard, rate,
                eta_s);
        if (done == sum->in_shard)
            fputc('\n', stderr);
        fflush(stderr);
        return;
    }
    if (now - p->last_s < p->interval_s && done != sum->in_shard)
        return;
    p->last_s = now;
    tc_shape_format(s, shape, sizeof(shape));
    fprintf(stderr,
            "tilecast collect: %zu/%zu shapes (%zu skipped, %zu unsupported, %zu failed), "
            "%.2f/s, ETA %s; last: %s%s%s\n",
            done, sum->in_shard, sum->skipped, sum->unsupported, sum->failed, rate, eta_s, shape,
            m && m->outcome.status != TC_STATUS_OK ? " -> " : "",
            m && m->outcome.status != TC_STATUS_OK ? tc_status_name(m->outcome.status) : "");
    fflush(stderr);
}

/* Predicted time of each shape on gpu (microseconds), or NULL (message in
 * *why) when the predictor cannot give one for every shape: a partial set
 * would make shards disagree on costs. Caller frees. */
static double *predict_costs(const struct tc_gpu *gpu, const struct tc_specs *specs,
                             const struct tc_sweep *sw, char *why, size_t why_len)
{
    struct tc_predictor *p = tc_predictor_new(specs);
    size_t n = tc_sweep_count(sw);
    double *cost = p ? malloc((n ? n : 1) * sizeof(*cost)) : NULL;

    if (!cost) {
        snprintf(why, why_len, "%s", p ? "out of memory" : tc_last_error());
        tc_predictor_free(p);
        return NULL;
    }
    /* the analytical model: identical on every node, with or without
     * databases at hand */
    tc_predictor_set_analytical(p, true);
    for (size_t i = 0; i < n; i++) {
        const struct tc_shape *s = &tc_sweep_shapes(sw)[i];
        int err;

        if (s->kind == TC_SHAPE_ATTENTION) {
            struct tc_attention_query q = {.impl = s->impl,
                                           .dtype = s->dtype,
                                           .batch = s->batch,
                                           .heads = s->heads,
                                           .kv_heads = s->kv_heads,
                                           .seq_q = s->seq_q,
                                           .seq_kv = s->seq_kv,
                                           .head_dim = s->head_dim,
                                           .causal = s->causal};
            struct tc_attention_prediction out;

            err = tc_predict_attention(p, gpu, &q, &out);
            cost[i] = out.time_us;
        } else {
            struct tc_gemm_query q = {.m = s->m,
                                      .n = s->n,
                                      .k = s->k,
                                      .batch = s->batch,
                                      .dtype = s->dtype,
                                      .layout = s->layout};
            struct tc_gemm_prediction out;

            err = tc_predict_gemm(p, gpu, &q, &out);
            cost[i] = out.time_us;
        }
        if (err < 0 || !isfinite(cost[i]) || cost[i] <= 0) {
            char shape[160];

            tc_shape_format(s, shape, sizeof(shape));
            snprintf(why, why_len, "%s: %s", shape,
                     err < 0 ? tc_last_error() : "no positive prediction");
            free(cost);
            tc_predictor_free(p);
            return NULL;
        }
    }
    tc_predictor_free(p);
    return cost;
}

static int dry_run(const struct tc_sweep *sw, const struct tc_collect_opts *o, const double *costs,
                   const char *why)
{
    size_t idx_n = 0, kinds[3] = {0}, *idx = malloc((tc_sweep_count(sw) + 1) * sizeof(*idx));
    double flops = 0, predicted_us = 0;
    int err;

    if (!idx)
        return cli_fail("collect", tc_error(TC_ERR_NOMEM, "out of memory"));
    if ((err = tc_collect_select(sw, costs, o->shard_index, o->shard_count, idx, &idx_n)) < 0) {
        free(idx);
        return cli_fail("collect", err);
    }
    for (size_t i = 0; i < idx_n; i++) {
        const struct tc_shape *s = &tc_sweep_shapes(sw)[idx[i]];

        kinds[s->kind]++;
        flops += tc_shape_flops(s);
        if (costs)
            predicted_us += costs[idx[i]];
    }
    printf("sweep: %s (%s)\n", tc_sweep_name(sw), tc_sweep_hash(sw));
    printf("shapes: %zu in the sweep, %zu in shard %d/%d (%zu gemm, %zu bmm, %zu attention)\n",
           tc_sweep_count(sw), idx_n, o->shard_index, o->shard_count, kinds[TC_SHAPE_GEMM],
           kinds[TC_SHAPE_BMM], kinds[TC_SHAPE_ATTENTION]);
    printf("work: %.3g TFLOP per repetition of every shape\n", flops / 1e12);
    if (costs) {
        /* each shape runs warm-up plus at least min_reps repetitions (the
         * harness stops there when timings are stable); each repetition
         * also passes over the flush buffer (2x L2, at least 32 MiB) at the
         * memory bandwidth and pays ~10 us of launch and event overhead;
         * each shape ~2 ms of allocation and algorithm selection, and the
         * warm-up takes at least --warmup-ms */
        double reps = o->harness.warmup_reps + o->harness.min_reps;
        double flush_bytes = fmax(2.0 * (double)o->gpu->l2_bytes, 32.0 * 1048576.0);
        double flush_us = o->gpu->mem_bw_gbps > 0 ? flush_bytes / (o->gpu->mem_bw_gbps * 1e3) : 0;
        double total_us = predicted_us * reps + (double)idx_n * (reps * (flush_us + 10.0) + 2000.0);

        for (size_t i = 0; i < idx_n; i++) {
            /* the warm-up's repetitions beyond warmup_reps, when they fill
             * its minimum time */
            double one_us = costs[idx[i]] + flush_us + 10.0;
            double warm_us = o->harness.warmup_ms * 1e3 - o->harness.warmup_reps * one_us;

            if (warm_us > 0)
                total_us += warm_us;
        }
        char t1[32], t2[32];

        fmt_duration(predicted_us * 1e-6, t1, sizeof(t1));
        fmt_duration(total_us * 1e-6, t2, sizeof(t2));
        printf("predicted (model, not measured) on %s: %s of kernel time for one repetition "
               "of every shape; about %s in all at %.0f repetitions per shape with flushes and "
               "set-up and %.6g ms of warm-up (noisy shapes repeat more, up to "
               "--max-time-per-shape-ms)\n",
               o->gpu->id, t1, t2, reps, o->harness.warmup_ms);
    } else if (why && *why) {
        printf("no time estimate: %s\n", why);
    } else {
        printf("no time estimate: give --gpu ID for a prediction\n");
    }
    free(idx);
    return CLI_EXIT_OK;
}

int cmd_collect(int argc, char **argv)
{
    const char *backend = NULL, *sweep_path = NULL, *db_path = NULL, *gpu_id = NULL;
    const char *shard = NULL, *compile_arch = NULL, *v;
    struct tc_collect_opts o;
    struct tc_collect_summary sum;
    struct tc_sweep *sw = NULL;
    struct tc_specs *specs = NULL;
    struct progress prog = {0};
    double *costs = NULL;
    char why[512] = "";
    bool dry = false, resume = false;
    long long ll;
    double d;
    int rc = CLI_EXIT_OK, err;

    tc_collect_defaults(&o);
    prog.interval_s = 30;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(cmd_collect_help, stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(argv[i], "--dry-run")) {
            dry = true;
        } else if (!strcmp(argv[i], "--resume")) {
            resume = true;
        } else if (!strcmp(argv[i], "--quiet")) {
            prog.quiet = true;
        } else if (cli_flag_value(argc, argv, &i, "--backend", &v)) {
            if (!(backend = v))
                goto missing;
        } else if (cli_flag_value(argc, argv, &i, "--sweep", &v)) {
            if (!(sweep_path = v))
                goto missing;
        } else if (cli_flag_value(argc, argv, &i, "--db", &v)) {
            if (!(db_path = v))
                goto missing;
        } else if (cli_flag_value(argc, argv, &i, "--gpu", &v)) {
            if (!(gpu_id = v))
                goto missing;
        } else if (cli_flag_value(argc, argv, &i, "--compile-kernels", &v)) {
            if (!(compile_arch = v))
                goto missing;
        } else if (cli_flag_value(argc, argv, &i, "--shard", &v)) {
            if (!(shard = v))
                goto missing;
        } else if (cli_flag_value(argc, argv, &i, "--device", &v)) {
            if (!v)
                goto missing;
            if (!cli_parse_int("collect", "--device", v, 0, 1024, &ll))
                return cli_value_status(v);
            o.device = (int)ll;
        } else if (cli_flag_value(argc, argv, &i, "--rel-ci", &v)) {
            if (!v)
                goto missing;
            if (!cli_parse_double("collect", "--rel-ci", v, 1e-6, 1.0, &d))
                return cli_value_status(v);
            o.harness.rel_ci = d;
        } else if (cli_flag_value(argc, argv, &i, "--max-time-per-shape-ms", &v)) {
            if (!v)
                goto missing;
            if (!cli_parse_double("collect", "--max-time-per-shape-ms", v, 0, 3.6e6, &d))
                return cli_value_status(v);
            o.harness.max_time_ms = d;
        } else if (cli_flag_value(argc, argv, &i, "--min-reps", &v)) {
            if (!v)
                goto missing;
            if (!cli_parse_int("collect", "--min-reps", v, 1, 1000000, &ll))
                return cli_value_status(v);
            o.harness.min_reps = (int)ll;
        } else if (cli_flag_value(argc, argv, &i, "--max-reps", &v)) {
            if (!v)
                goto missing;
            if (!cli_parse_int("collect", "--max-reps", v, 1, 1000000, &ll))
                return cli_value_status(v);
            o.harness.max_reps = (int)ll;
        } else if (cli_flag_value(argc, argv, &i, "--warmup", &v)) {
            if (!v)
                goto missing;
            if (!cli_parse_int("collect", "--warmup", v, 0, 1000000, &ll))
                return cli_value_status(v);
            o.harness.warmup_reps = (int)ll;
        } else if (cli_flag_value(argc, argv, &i, "--warmup-ms", &v)) {
            if (!v)
                goto missing;
            if (!cli_parse_double("collect", "--warmup-ms", v, 0, 3.6e6, &d))
                return cli_value_status(v);
            o.harness.warmup_ms = d;
        } else if (cli_flag_value(argc, argv, &i, "--commit-rows", &v)) {
            if (!v)
                goto missing;
            if (!cli_parse_int("collect", "--commit-rows", v, 1, 1000000, &ll))
                return cli_value_status(v);
            o.commit_rows = (int)ll;
        } else if (cli_flag_value(argc, argv, &i, "--progress-interval", &v)) {
            if (!v)
                goto missing;
            if (!cli_parse_double("collect", "--progress-interval", v, 0, 86400, &d))
                return cli_value_status(v);
            prog.interval_s = d;
        } else {
            char hint[96];

            cli_error("collect", "unknown argument '%s'%s (see 'tilecast collect --help')", argv[i],
                      cli_suggest_option(argv[i], cmd_collect_help, hint, sizeof(hint)));
            return CLI_EXIT_USAGE;
        }
    }
    if (compile_arch) {
        char msg[256];

        if (!backend || !gpu_backend_built(backend)) {
            cli_error("collect", "--compile-kernels needs --backend cuda or hip (built in)");
            return CLI_EXIT_USAGE;
        }
        if ((err = tc_backend_load(backend, &o.backend)) < 0)
            return cli_fail("collect", err);
        if (!tc_backend_can_compile(o.backend)) {
            cli_error("collect", "the %s backend cannot build kernels", backend);
            return CLI_EXIT_USAGE;
        }
        if (tc_backend_compile_check(o.backend, compile_arch, msg, sizeof(msg)) < 0)
            return cli_fail("collect", TC_ERR_DEVICE);
        printf("%s\n", msg);
        return CLI_EXIT_OK;
    }
    if (!backend || !sweep_path || (!db_path && !dry)) {
        cli_error("collect", "%s is required (see 'tilecast collect --help')",
                  !backend      ? "--backend"
                  : !sweep_path ? "--sweep"
                                : "--db");
        return CLI_EXIT_USAGE;
    }
    if (o.harness.min_reps > o.harness.max_reps) {
        cli_error("collect", "--min-reps %d exceeds --max-reps %d", o.harness.min_reps,
                  o.harness.max_reps);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(backend, "cuda") != 0 && strcmp(backend, "hip") != 0 &&
        strcmp(backend, "cpu") != 0) {
        cli_error("collect", "unknown backend '%s' (cuda, hip or cpu)", backend);
        return CLI_EXIT_USAGE;
    }
    /* a dry run measures nothing: it loads no GPU module */
    if (!(o.backend = tc_backend_find(backend)) && !dry) {
        if (!gpu_backend_built(backend)) {
            cli_error("collect", "this tilecast was built without the %s backend", backend);
            return CLI_EXIT_RUNTIME;
        }
        if ((err = tc_backend_load(backend, &o.backend)) < 0)
            return cli_fail("collect", err);
    }
    if (shard) {
        if (tc_shard_parse(shard, &o.shard_index, &o.shard_count) < 0)
            return cli_error("collect", "--shard: %s", tc_last_error()), CLI_EXIT_INPUT;
    } else if (getenv("SLURM_ARRAY_TASK_ID") && getenv("SLURM_ARRAY_TASK_COUNT")) {
        long long id, count, min = 0, step = 1;
        char text[64];

        if (tc_parse_i64(getenv("SLURM_ARRAY_TASK_ID"), &id) < 0 ||
            tc_parse_i64(getenv("SLURM_ARRAY_TASK_COUNT"), &count) < 0 ||
            (getenv("SLURM_ARRAY_TASK_MIN") &&
             tc_parse_i64(getenv("SLURM_ARRAY_TASK_MIN"), &min) < 0) ||
            (getenv("SLURM_ARRAY_TASK_STEP") &&
             tc_parse_i64(getenv("SLURM_ARRAY_TASK_STEP"), &step) < 0) ||
            step < 1) {
            cli_error("collect", "SLURM_ARRAY_TASK_ID/COUNT/MIN/STEP are not integers");
            return CLI_EXIT_INPUT;
        }
        /* arrays may start at any index (--array=1-4) and step
         * (--array=0-15:4); a task off the range's grid (a list such as
         * --array=1,5,9) gets an index the shard check refuses */
        snprintf(text, sizeof(text), "%lld/%lld", (id - min) % step ? count : (id - min) / step,
                 count);
        if (tc_shard_parse(text, &o.shard_index, &o.shard_count) < 0) {
            cli_error("collect", "shard from SLURM_ARRAY_TASK_*: %s", tc_last_error());
            return CLI_EXIT_INPUT;
        }
    }

    if (db_path && !cli_output_distinct("collect", db_path, &sweep_path, 1))
        return CLI_EXIT_INPUT;
    if (!(sw = tc_sweep_load(sweep_path))) {
        rc = cli_fail("collect", TC_ERR_PARSE);
        goto out;
    }
    if (gpu_id) {
        if (!(specs = cli_load_specs("collect"))) {
            rc = CLI_EXIT_INPUT;
            goto out;
        }
        if (!(o.gpu = cli_find_gpu("collect", specs, gpu_id))) {
            rc = CLI_EXIT_INPUT;
            goto out;
        }
        o.gpu_id = o.gpu->id;
        costs = predict_costs(o.gpu, specs, sw, why, sizeof(why));
        if (!costs && !dry && o.shard_count > 1 && !prog.quiet)
            fprintf(stderr, "tilecast collect: sharding by FLOPs (no prediction: %s)\n", why);
    }
    o.costs = costs;
    if (dry) {
        rc = dry_run(sw, &o, costs, why);
        goto out;
    }

    o.db_path = db_path;
    prog.tty = cli_isatty(stderr);
    prog.start_s = tc_now_s();
    o.progress = on_progress;
    o.progress_ud = &prog;
    o.stop = &stop_requested;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    err = tc_collect_run(&o, sw, &sum);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (err < 0) {
        rc = cli_fail("collect", err);
        /* what a failed run (a full disk, a lost device) kept: the rows of
         * every batch committed before the error, which a re-run skips */
        if (sum.run_id > 0 && sum.measured > 0)
            fprintf(stderr,
                    "tilecast collect: run %" PRId64 ": %zu of %zu shapes measured "
                    "(%zu ok, %zu unsupported, %zu failed) before the error; the rows "
                    "committed before it are kept in %s: re-run the same command to "
                    "resume\n",
                    sum.run_id, sum.measured, sum.in_shard, sum.ok, sum.unsupported, sum.failed,
                    db_path);
        goto out;
    }
    if (resume && !sum.resumed && !prog.quiet)
        fprintf(stderr,
                "tilecast collect: --resume: no earlier run of this configuration in "
                "%s; started a new one\n",
                db_path);
    printf("run %" PRId64 "%s: %zu shapes in shard %d/%d of %zu; %zu already stored, %zu "
           "measured (%zu ok, %zu unsupported, %zu failed) in %.1f s -> %s\n",
           sum.run_id, sum.resumed ? " (resumed)" : "", sum.in_shard, o.shard_index, o.shard_count,
           sum.total, sum.skipped, sum.measured, sum.ok, sum.unsupported, sum.failed, sum.wall_s,
           db_path);
    if (sum.interrupted) {
        cli_error("collect", "interrupted; re-run the same command to resume");
        rc = CLI_EXIT_RUNTIME;
    }
out:
    free(costs);
    tc_sweep_free(sw);
    tc_specs_free(specs);
    return rc;
missing:
    /* only the last argument can lack its value */
    cli_error("collect", "%s needs a value", argv[argc - 1]);
    return CLI_EXIT_USAGE;
}

/* ------------------------------------------------------------------------ */

/* Shapes of >= 1 ms on a laptop-class CPU, so the target applies. */
static const char bench_sweep[] = "name: bench-collector\n"
                                  "dtypes: [fp32]\n"
                                  "layouts: [NN]\n"
                                  "sets:\n"
                                  "  - square: {range: [512, 1024, 128]}\n";

static int bench_inserts(const char *path, int64_t rows, double *rate)
{
    struct tc_db *db;
    struct tc_run_info ri = {.gpu_id = "bench-cpu",
                             .kind = "collected",
                             .backend = "cpu",
                             .config_hash = "bench",
                             .sweep_name = "bench"};
    struct tc_gpu gpu = {
        .id = "bench-cpu", .name = "bench", .vendor = TC_VENDOR_CPU, .arch = TC_ARCH_CPU};
    struct tc_gemm_row row = {0};
    int64_t run_id;
    double t0;
    int err;

    if (tc_db_open(path, TC_DB_CREATE, &db) < 0)
        return TC_ERR_DB;
    if ((err = tc_db_put_gpu(db, &gpu)) < 0 || (err = tc_db_add_run(db, &ri, &run_id)) < 0)
        goto out;
    row.run_id = run_id;
    row.dtype = row.dtype_c = TC_DTYPE_FP16;
    row.compute = TC_DTYPE_FP32;
    row.layout = TC_LAYOUT_NT;
    row.n = 4096;
    row.k = 4096;
    row.batch = 1;
    row.reps = 10;
    row.status = TC_STATUS_OK;
    snprintf(row.algo, sizeof(row.algo), "bench");
    t0 = tc_now_s();
    /* batches of 10k rows per transaction, as a collector at full speed */
    for (int64_t i = 0; i < rows; i++) {
        if (i % 10000 == 0 && (err = tc_db_begin(db)) < 0)
            goto out;
        row.m = i + 1;
        row.time_us = 100.0 + (double)i;
        row.min_us = row.time_us;
        if ((err = tc_db_insert_gemm(db, &row)) < 0)
            goto out;
        if ((i % 10000 == 9999 || i == rows - 1) && (err = tc_db_commit(db)) < 0)
            goto out;
    }
    *rate = (double)rows / (tc_now_s() - t0);
out:
    tc_db_close(db);
    return err;
}

int cmd_bench_collector(int argc, char **argv)
{
    struct tc_collect_opts o;
    struct tc_collect_summary sum;
    struct tc_sweep *sw;
    char dir[] = "/tmp/tilecast-bench-XXXXXX", path[64], path2[64];
    long long rows = 100000;
    double rate = 0;
    int err, rc = CLI_EXIT_OK;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("Usage: tilecast bench collector [--rows N]\n"
                   "Runs the cpu backend over square fp32 GEMMs of 512..1024 (>= 1 ms each) and\n"
                   "prints wall time / sum of measured kernel times (target <= 1.15), then\n"
                   "inserts N GEMM rows (default 100000) in batches of 10000 and prints the\n"
                   "rate (target >= 100000 rows/s). Figures only; nothing is asserted.\n");
            return CLI_EXIT_OK;
        }
        if (!strcmp(argv[i], "--rows") && i + 1 < argc) {
            if (!cli_parse_int("bench collector", "--rows", argv[++i], 1, 100000000, &rows))
                return CLI_EXIT_INPUT;
        } else {
            char hint[96];

            cli_error("bench collector", "unknown argument '%s'%s", argv[i],
                      cli_suggest_option(argv[i], cmd_bench_help, hint, sizeof(hint)));
            return CLI_EXIT_USAGE;
        }
    }
    if (!mkdtemp(dir)) {
        cli_error("bench collector", "cannot create a temporary directory: %s", strerror(errno));
        return CLI_EXIT_RUNTIME;
    }
    snprintf(path, sizeof(path), "%s/harness.db", dir);
    snprintf(path2, sizeof(path2), "%s/inserts.db", dir);
    tc_collect_defaults(&o);
    o.backend = tc_backend_find("cpu");
    o.db_path = path;
    if (!o.backend) {
        printf("harness overhead: skipped (built without the cpu backend)\n");
    } else if (!(sw = tc_sweep_parse(bench_sweep, sizeof(bench_sweep) - 1, "bench"))) {
        rc = cli_fail("bench collector", TC_ERR_PARSE);
        goto out;
    } else {
        err = tc_collect_run(&o, sw, &sum);
        tc_sweep_free(sw);
        if (err < 0) {
            rc = cli_fail("bench collector", err);
            goto out;
        }
        printf("harness: %zu shapes (fp32 512..1024 square), %zu ok\n", sum.measured, sum.ok);
        printf("  wall time              %8.3f s\n", sum.wall_s);
        printf("  measured kernel time   %8.3f s (sum of every timed repetition)\n", sum.kernel_s);
        printf("  inside the harness     %8.3f s (incl. set-up, warm-up, cache flushes)\n",
               sum.harness_s);
        printf("  cache flushes          %8.3f s (untimed by design)\n", sum.flush_s);
        printf("  database inserts       %8.3f s\n", sum.insert_s);
        printf("  overhead (wall/kernel) %8.3f (target <= 1.15)\n",
               sum.kernel_s > 0 ? sum.wall_s / sum.kernel_s : NAN);
        printf("  without the flushes    %8.3f\n",
               sum.kernel_s > 0 ? (sum.wall_s - sum.flush_s) / sum.kernel_s : NAN);
    }
    if ((err = bench_inserts(path2, rows, &rate)) < 0) {
        rc = cli_fail("bench collector", err);
        goto out;
    }
    printf("database: %lld GEMM rows in batches of 10000: %.0f rows/s (target >= 100000)\n", rows,
           rate);
out:
    unlink(path);
    unlink(path2);
    {
        char side[80];

        snprintf(side, sizeof(side), "%s-wal", path);
        unlink(side);
        snprintf(side, sizeof(side), "%s-shm", path);
        unlink(side);
        snprintf(side, sizeof(side), "%s-wal", path2);
        unlink(side);
        snprintf(side, sizeof(side), "%s-shm", path2);
        unlink(side);
        snprintf(side, sizeof(side), "%s-journal", path);
        unlink(side);
        snprintf(side, sizeof(side), "%s-journal", path2);
        unlink(side);
    }
    rmdir(dir);
    return rc;
}
