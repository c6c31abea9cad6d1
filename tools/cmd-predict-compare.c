/* predict model / predict layer with --gpu a,b,c or --gpu all: the same
 * configuration predicted on each GPU, one row per GPU (cli-gpus.h), sorted
 * by the step (or layer) time. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-gpus.h"
#include "cli.h"
#include "model-cli.h"

int mcli_compare_model(const char *cmd, const char *gpus, bool analytical, const char *db,
                       const struct tc_model_config *cfg, bool whole,
                       const struct tc_cluster *cluster, long long decode, bool ignore_memory,
                       enum cli_format fmt)
{
    static const char *const whole_cols[] = {"step_time_ms", "tokens_per_s", "mfu_pct",
                                             "memory_gb"};
    static const int whole_fmts[] = {2, 0, 1, 1};
    static const char *const layer_cols[] = {"layer_time_us", "tflops"};
    static const int layer_fmts[] = {1, 1};
    struct tc_specs *specs = cli_load_specs(cmd);
    struct tc_predictor *p = NULL;
    const struct tc_gpu **list = NULL;
    struct cli_cmp_row *rows = NULL;
    char title[256];
    size_t n = 0;
    int code;

    if (!specs)
        return CLI_EXIT_INPUT;
    code = cli_compare_rows(cmd, specs, gpus, &list, &rows, &n);
    if (code == CLI_EXIT_OK)
        p = cli_compare_predictor(cmd, specs, analytical, db, &code);
    for (size_t i = 0; code == CLI_EXIT_OK && rows && i < n; i++) {
        struct cli_cmp_row *row = &rows[i];
        struct tc_model_config c = *cfg;
        struct tc_model_prediction *mp = NULL;
        struct tc_model_memory mem = {0};
        int err;

        row->gpu = list[i];
        if (decode)
            c.training = false;
        err = tc_model_config_resolve(&c);
        if (err == TC_OK && whole)
            err = tc_model_memory(row->gpu, &c, decode, &mem);
        if (err == TC_OK && whole && !mem.fits && !ignore_memory) {
            snprintf(row->note, sizeof(row->note),
                     "does not fit: %.1f GB of %.1f GB usable (--ignore-memory predicts anyway)",
                     mem.total_bytes / 1e9, mem.capacity_bytes / 1e9);
            continue;
        }
        if (err == TC_OK)
            err = tc_predict_model_on(p, row->gpu, &c, cluster, decode, &mp);
        if (err < 0 || !mp) {
            snprintf(row->note, sizeof(row->note), "%s", tc_last_error());
            continue;
        }
        row->ok = true;
        if (whole) {
            row->v[0] = mp->step_time_us / 1e3;
            row->v[1] = mp->tokens_per_s;
            row->v[2] = 100 * mp->mfu;
            row->v[3] = mem.total_bytes / 1e9;
            if (!mem.fits)
                snprintf(row->note, sizeof(row->note), "does not fit (--ignore-memory)");
        } else {
            row->v[0] = mp->layer_time_us;
            row->v[1] = mp->layer_time_us > 0
                            ? mp->step_flops / (double)c.tp / c.layers / mp->layer_time_us / 1e6
                            : 0;
        }
        snprintf(row->source, sizeof(row->source), "%s", tc_source_name(mp->source));
        tc_model_prediction_free(mp);
    }
    if (code == CLI_EXIT_OK) {
        char pipeline[64];

        mcli_pipeline_words(cfg, pipeline, sizeof(pipeline));
        if (decode)
            snprintf(title, sizeof(title),
                     "Decode step of %s (%s, b=%lld t=%lld%s, %lld tokens cached) by GPU",
                     cfg->name[0] ? cfg->name : "the model", tc_dtype_name(cfg->dtype),
                     (long long)cfg->micro_batch, (long long)cfg->tp, pipeline, decode);
        else
            snprintf(title, sizeof(title), "%s of %s (%s, s=%lld b=%lld t=%lld%s) by GPU",
                     !whole          ? "One layer"
                     : cfg->training ? "Training step (forward + backward)"
                                     : "Inference (forward)",
                     cfg->name[0] ? cfg->name : "the model", tc_dtype_name(cfg->dtype),
                     (long long)cfg->seq, (long long)cfg->micro_batch, (long long)cfg->tp,
                     pipeline);
        code =
            whole
                ? cli_compare_print(cmd, title, whole_cols, whole_fmts, 4, 0, false, rows, n, fmt)
                : cli_compare_print(cmd, title, layer_cols, layer_fmts, 2, 0, false, rows, n, fmt);
    }
    free(rows);
    free(list);
    tc_predictor_free(p);
    tc_specs_free(specs);
    return code;
}

int mcli_compare_attention(const char *cmd, const char *gpus, bool analytical, const char *db,
                           const struct tc_attention_query *q, enum cli_format fmt)
{
    static const char *const cols[] = {"time_us", "tflops"};
    static const int fmts[] = {2, 1};
    struct tc_specs *specs = cli_load_specs(cmd);
    struct tc_predictor *p = NULL;
    const struct tc_gpu **list = NULL;
    struct cli_cmp_row *rows = NULL;
    char title[256];
    size_t n = 0;
    int code;

    if (!specs)
        return CLI_EXIT_INPUT;
    code = cli_compare_rows(cmd, specs, gpus, &list, &rows, &n);
    if (code == CLI_EXIT_OK)
        p = cli_compare_predictor(cmd, specs, analytical, db, &code);
    for (size_t i = 0; code == CLI_EXIT_OK && rows && i < n; i++) {
        struct tc_attention_prediction pred;
        int err;

        rows[i].gpu = list[i];
        err = tc_predict_attention(p, list[i], q, &pred);
        if (err < 0) {
            snprintf(rows[i].note, sizeof(rows[i].note), "%s", tc_last_error());
            continue;
        }
        rows[i].ok = true;
        rows[i].v[0] = pred.time_us;
        rows[i].v[1] = pred.time_us > 0 ? pred.flops / pred.time_us / 1e6 : 0;
        snprintf(rows[i].source, sizeof(rows[i].source), "%s", tc_source_name(pred.source));
    }
    if (code == CLI_EXIT_OK) {
        snprintf(title, sizeof(title),
                 "Attention %s (%s, %s, b=%lld h=%lld s=%lld d=%lld%s) by GPU",
                 q->backward ? "backward" : "forward", tc_attn_impl_name(q->impl),
                 tc_dtype_name(q->dtype), (long long)q->batch, (long long)q->heads,
                 (long long)q->seq_q, (long long)q->head_dim, q->causal ? ", causal" : "");
        code = cli_compare_print(cmd, title, cols, fmts, 2, 0, false, rows, n, fmt);
    }
    free(rows);
    free(list);
    tc_predictor_free(p);
    tc_specs_free(specs);
    return code;
}
