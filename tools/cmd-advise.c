/* tilecast advise: nearby transformer shapes that the model predicts to
 * run faster at about the same parameter count. */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli-gpus.h"
#include "model-cli.h"

const char cmd_advise_help[] =
    "Usage: tilecast advise --gpu ID --config FILE [--params-tolerance 5%] [--top N]\n"
    "                       [--tp T] [--micro-batch B] [--seq S] [--train|--inference]\n"
    "                       [--dtype DT] [--graphs|--eager] [--serving]\n"
    "                       [--gpus-per-node N] [--nic-gbps X]\n"
    "                       [--analytical] [--db FILE] [--verbose] [--json|--csv]\n"
    "\n"
    "Searches shapes near the model of FILE (hidden size in steps of 8, head count\n"
    "and head dimension, vocabulary padding to 8/64/128, FFN and SwiGLU\n"
    "intermediate size, micro-batch x1/x2, tensor-parallel degree t and t/2) whose\n"
    "parameter count is within the tolerance, predicts each (GEMMs through the\n"
    "GEMM predictor, attention through its tile model) and ranks them: those that\n"
    "change one knob (hidden, heads, ffn, vocab, micro-batch, tp) first, then two,\n"
    "and so on (column changes), each group by predicted speedup: tokens/s per GPU\n"
    "over the baseline's, times the candidate's parameter count over the\n"
    "baseline's (a token of a smaller model is less work, not a speedup). Shapes\n"
    "that differ only in head count keep their fastest. Each candidate names\n"
    "the operation that gained most, the mechanism its GEMM prediction shows\n"
    "(tensor-core alignment, tile quantization, wave quantization, occupancy) and\n"
    "the paper's guidelines it satisfies:\n"
    "  1 vocabulary divisible by 64        2 micro-batch as large as possible\n"
    "  3 b*s, h/a, h/t divisible by powers of two (h/a up to 64)\n"
    "  4 (b*a)/t an integer                5 tensor-parallel degree as small as possible\n"
    "  6 SwiGLU: search the intermediate size near 8/3*h\n"
    "Larger micro-batches assume the memory allows them.\n"
    "\n"
    "Options:\n"
    "  --gpu ID                GPU id (tilecast specs list); A,B,... or all: the\n"
    "                          baseline and its best candidate on each GPU, one row\n"
    "                          per GPU, the fastest baseline first\n"
    "  --config FILE|NAME      model config YAML, or a shipped config's name\n"
    "                          (gpt-neox-20b, llama-2-70b, llama-2-7b, llama-3-8b, paper-gpt)\n"
    "  --params-tolerance X    relative parameter-count tolerance: 5% or 0.05 (default 5%)\n"
    "  --top N                 candidates to print (default 10)\n"
    "  --tp T, --micro-batch B, --seq S, --train, --inference, --dp N, --zero 0-3,\n"
    "  --recompute, --pp N, --microbatches M\n"
    "                          override the config (see predict model --help)\n"
    "  --gpus-per-node N, --nic-gbps X\n"
    "                          the nodes every candidate's GPUs fill, as predict\n"
    "                          model places them (default: 8 GPUs a node and the\n"
    "                          GPU's reference system's network adapter)\n"
    "  --analytical            ignore measured databases: the analytical model only\n"
    "  --db FILE               calibrate from this database\n"
    "  --verbose               print the number of candidates evaluated and the time taken\n"
    "  --json, --csv           machine-readable output (predictions, labelled as such)\n";

/* advise --gpu A,B or all: the baseline and its best candidate on each
 * GPU, one row per GPU, the fastest baseline first. */
static int advise_compare(const char *cmd, const struct mcli_model_opts *opt,
                          const struct tc_model_config *c, double tol, enum cli_format fmt)
{
    static const char *const cols[] = {"step_time_ms", "tokens_per_s_per_gpu", "best_speedup"};
    static const int fmts[] = {2, 0, 3};
    struct tc_specs *specs = cli_load_specs(cmd);
    struct tc_predictor *p = NULL;
    const struct tc_gpu **list = NULL;
    struct cli_cmp_row *rows = NULL;
    char title[256];
    size_t n = 0;
    int code;

    if (!specs)
        return CLI_EXIT_INPUT;
    code = cli_compare_rows(cmd, specs, opt->gpu_id, &list, &rows, &n);
    if (code == CLI_EXIT_OK)
        p = cli_compare_predictor(cmd, specs, opt->analytical, opt->db, &code);
    for (size_t i = 0; code == CLI_EXIT_OK && rows && i < n; i++) {
        struct tc_advice *adv = NULL;
        int err = tc_advise_on(p, list[i], c, &opt->cluster, tol, 1, &adv);

        rows[i].gpu = list[i];
        if (err < 0 || !adv) {
            snprintf(rows[i].note, sizeof(rows[i].note), "%s", tc_last_error());
            continue;
        }
        rows[i].ok = true;
        rows[i].v[0] = adv->baseline_step_us / 1e3;
        rows[i].v[1] = adv->baseline_tokens_per_s_per_gpu;
        rows[i].v[2] = adv->n_candidates ? adv->candidates[0].speedup : 1.0;
        if (adv->n_candidates) {
            const struct tc_model_config *b = &adv->candidates[0].cfg;

            snprintf(rows[i].note, sizeof(rows[i].note),
                     "best: h=%lld a=%lld ffn=%lld v=%lld b=%lld t=%lld (%s)", (long long)b->hidden,
                     (long long)b->heads, (long long)b->ffn, (long long)b->vocab,
                     (long long)b->micro_batch, (long long)b->tp, adv->candidates[0].reason);
        } else {
            snprintf(rows[i].note, sizeof(rows[i].note), "no faster shape within %.1f%%",
                     100 * tol);
        }
        tc_advice_free(adv);
    }
    if (code == CLI_EXIT_OK) {
        snprintf(title, sizeof(title), "Advice for %s (%s, s=%lld b=%lld t=%lld) by GPU",
                 c->name[0] ? c->name : "the model", tc_dtype_name(c->dtype), (long long)c->seq,
                 (long long)c->micro_batch, (long long)c->tp);
        code = cli_compare_print(cmd, title, cols, fmts, 3, 0, false, rows, n, fmt);
    }
    free(rows);
    free(list);
    tc_predictor_free(p);
    tc_specs_free(specs);
    return code;
}

static bool parse_tolerance(const char *v, double *out)
{
    char *end;
    double x = strtod(v, &end);

    if (end == v || !isfinite(x))
        return false;
    if (*end == '%') {
        x /= 100;
        end++;
    }
    if (*end || x < 0 || x > 0.5)
        return false;
    *out = x;
    return true;
}

static json_t *cfg_json(const struct tc_model_config *c)
{
    json_t *o = json_object();

    json_object_set_new(o, "hidden", json_integer(c->hidden));
    json_object_set_new(o, "heads", json_integer(c->heads));
    json_object_set_new(o, "kv_heads", json_integer(c->kv_heads));
    json_object_set_new(o, "head_dim", json_integer(c->head_dim));
    json_object_set_new(o, "ffn", json_integer(c->ffn));
    json_object_set_new(o, "vocab", json_integer(c->vocab));
    json_object_set_new(o, "micro_batch", json_integer(c->micro_batch));
    json_object_set_new(o, "tp", json_integer(c->tp));
    return o;
}

int cmd_advise(int argc, char **argv)
{
    const char *cmd = "advise";
    struct mcli_model_opts opt = {.train = -1, .graphs = -1, .dtype = -1};
    const char *v;
    enum cli_format fmt = CLI_FORMAT_TABLE;
    bool verbose = false, bad = false;
    double tol = 0.05;
    long long top = 10;
    int code = 0, err;
    struct tc_model_config c;
    struct tc_specs *specs = NULL;
    struct tc_predictor *p = NULL;
    struct tc_advice *adv = NULL;
    const struct tc_gpu *gpu;
    struct timespec t0, t1;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(cmd_advise_help, stdout);
            return CLI_EXIT_OK;
        } else if (cli_parse_format(arg, &fmt)) {
        } else if (strcmp(arg, "--verbose") == 0 || strcmp(arg, "-v") == 0) {
            verbose = true;
        } else if ((code = mcli_model_opt(cmd, argc, argv, &i, &opt)) != 0) {
            if (code < 0)
                return -code;
        } else if (mcli_opt(cmd, argc, argv, &i, "--params-tolerance", &v, &bad)) {
            if (!bad && !parse_tolerance(v, &tol)) {
                cli_error(cmd,
                          "--params-tolerance: '%s' is not a fraction in [0, 0.5] or a "
                          "percentage such as 5%%",
                          v);
                return CLI_EXIT_INPUT;
            }
        } else if (mcli_opt(cmd, argc, argv, &i, "--top", &v, &bad)) {
            if (!bad && !cli_parse_int(cmd, "--top", v, 1, 100000, &top))
                return cli_value_status(v);
        } else {
            char hint[96];

            cli_error(cmd, "unknown argument '%s'%s (see --help)", arg,
                      cli_suggest_option(arg, cmd_advise_help, hint, sizeof(hint)));
            return CLI_EXIT_USAGE;
        }
        if (bad)
            return CLI_EXIT_USAGE;
    }
    code = mcli_load_config(cmd, &opt, &c);
    if (code)
        return code;
    if (cli_gpu_list_given(opt.gpu_id))
        return advise_compare(cmd, &opt, &c, tol, fmt);
    code = mcli_setup(cmd, opt.gpu_id, opt.analytical, opt.db, &specs, &p, &gpu);
    if (code)
        return code;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    err = tc_advise_on(p, gpu, &c, &opt.cluster, tol, (size_t)top, &adv);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (err < 0) {
        code = cli_fail(cmd, err);
        goto cleanup;
    }
    double elapsed_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

    if (fmt == CLI_FORMAT_JSON) {
        json_t *o = json_object(), *arr = json_array(), *base = cfg_json(&adv->baseline);

        json_object_set_new(o, "prediction", json_true());
        json_object_set_new(o, "gpu", json_string(gpu->id));
        json_object_set_new(o, "dtype", json_string(tc_dtype_name(c.dtype)));
        json_object_set_new(base, "step_time_us", json_real(adv->baseline_step_us));
        json_object_set_new(base, "tokens_per_s_per_gpu",
                            json_real(adv->baseline_tokens_per_s_per_gpu));
        json_object_set_new(base, "params", json_real(adv->baseline_params));
        json_object_set_new(o, "baseline", base);
        json_object_set_new(o, "params_tolerance", json_real(tol));
        json_object_set_new(o, "n_evaluated", json_integer((json_int_t)adv->n_evaluated));
        json_object_set_new(o, "elapsed_s", json_real(elapsed_s));
        for (size_t i = 0; i < adv->n_candidates; i++) {
            const struct tc_advice_candidate *cand = &adv->candidates[i];
            json_t *co = cfg_json(&cand->cfg);

            json_object_set_new(co, "changes", json_integer(cand->changes));
            json_object_set_new(co, "step_time_us", json_real(cand->step_time_us));
            json_object_set_new(co, "tokens_per_s_per_gpu", json_real(cand->tokens_per_s_per_gpu));
            json_object_set_new(co, "speedup", json_real(cand->speedup));
            json_object_set_new(co, "params", json_real(cand->params));
            json_object_set_new(co, "params_delta_pct", json_real(100 * cand->params_delta));
            json_object_set_new(co, "reason", json_string(cand->reason));
            json_array_append_new(arr, co);
        }
        json_object_set_new(o, "candidates", arr);
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(8) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(o);
    } else {
        static const char *const headers[] = {"rank",
                                              "changes",
                                              "speedup",
                                              "hidden",
                                              "heads",
                                              "kv_heads",
                                              "ffn",
                                              "vocab",
                                              "micro_batch",
                                              "tp",
                                              "params_delta_pct",
                                              "step_time_ms",
                                              "tokens_per_s_per_gpu",
                                              "reason"};
        static const bool numeric[] = {true, true, true, true, true, true, true,
                                       true, true, true, true, true, true, false};
        struct cli_table *t = cli_table_new(14, headers, numeric);

        if (!t) {
            code = cli_fail(cmd, TC_ERR_NOMEM);
            goto cleanup;
        }
        for (size_t i = 0; i < adv->n_candidates; i++) {
            const struct tc_advice_candidate *cand = &adv->candidates[i];

            /* the ranking's two keys first, so that the order reads off */
            cli_table_addf(t, 0, "%zu", i + 1);
            cli_table_addf(t, 1, "%d", cand->changes);
            cli_table_addf(t, 2, "%.3f", cand->speedup);
            cli_table_addf(t, 3, "%lld", (long long)cand->cfg.hidden);
            cli_table_addf(t, 4, "%lld", (long long)cand->cfg.heads);
            cli_table_addf(t, 5, "%lld", (long long)cand->cfg.kv_heads);
            cli_table_addf(t, 6, "%lld", (long long)cand->cfg.ffn);
            cli_table_addf(t, 7, "%lld", (long long)cand->cfg.vocab);
            cli_table_addf(t, 8, "%lld", (long long)cand->cfg.micro_batch);
            cli_table_addf(t, 9, "%lld", (long long)cand->cfg.tp);
            cli_table_addf(t, 10, "%+.2f", 100 * cand->params_delta);
            cli_table_addf(t, 11, "%.2f", cand->step_time_us / 1e3);
            cli_table_addf(t, 12, "%.0f", cand->tokens_per_s_per_gpu);
            cli_table_addf(t, 13, "%s", cand->reason);
            cli_table_end_row(t);
        }
        if (fmt == CLI_FORMAT_TABLE) {
            const struct tc_model_config *b = &adv->baseline;
            printf("Baseline on %s (%s): h=%lld a=%lld kv=%lld ffn=%lld v=%lld b=%lld t=%lld, "
                   "%.3g params, predicted %.2f ms/step, %.0f tokens/s per GPU\n",
                   gpu->id, tc_dtype_name(b->dtype), (long long)b->hidden, (long long)b->heads,
                   (long long)b->kv_heads, (long long)b->ffn, (long long)b->vocab,
                   (long long)b->micro_batch, (long long)b->tp, adv->baseline_params,
                   adv->baseline_step_us / 1e3, adv->baseline_tokens_per_s_per_gpu);
            if (adv->n_candidates == 0)
                printf("No shape within %.1f%% of the parameters is predicted faster.\n",
                       100 * tol);
            else
                printf("Predicted faster shapes within %.1f%% of the parameters: those that "
                       "change the fewest knobs first (changes: of hidden, heads, ffn, vocab, "
                       "micro_batch, tp), each group ranked by speedup (tokens/s per GPU over "
                       "the baseline's, times params over the baseline's: the same work per "
                       "token):\n",
                       100 * tol);
        }
        cli_table_print(t, stdout, fmt);
        cli_table_free(t);
    }
    if (verbose)
        fprintf(stderr, "advise: n_evaluated %zu candidates in %.3f s\n", adv->n_evaluated,
                elapsed_s);
cleanup:
    tc_advice_free(adv);
    tc_predictor_free(p);
    tc_specs_free(specs);
    return code;
}
