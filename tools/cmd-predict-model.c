/* tilecast predict layer|model: one transformer layer from flags (or
 * measured layers from a CSV, compared by the library's tc_layer_compare),
 * and whole models from a YAML config; and the option parsing and output
 * that model-cli.h shares with predict attention, advise and plot. Every
 * number printed is a prediction. */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bounds.h"
#include "csv.h"
#include "cli-gpus.h"
#include "model-cli.h"
#include "tc-internal.h"

/* ------------------------------------------------------------------------ */
/* Shared helpers                                                            */
/* ------------------------------------------------------------------------ */

bool mcli_opt(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value,
              bool *bad)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);

    if (strncmp(arg, name, len) != 0)
        return false;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return true;
    }
    if (arg[len] != '\0')
        return false;
    if (*i + 1 >= argc) {
        cli_error(cmd, "%s needs a value", name);
        *value = NULL;
        *bad = true;
        return true;
    }
    *value = argv[++*i];
    return true;
}

/* A shape flag's value through the library's model-config setter, so a flag
 * takes what the same key of a config file takes. Its message names the key
 * ("micro_batch: ..."); the user typed the flag, so the flag is shown
 * instead. Returns 1, or -1 (usage: no value) or -2 (input: a value the key
 * refuses) after printing the error. */
static int set_key(const char *cmd, const char *flag, const char *key, const char *value,
                   struct tc_model_config *c)
{
    const char *msg;
    size_t n = strlen(key);

    if (tc_model_config_set(c, key, value) == TC_OK)
        return 1;
    msg = tc_last_error();
    if (strncmp(msg, key, n) == 0 && msg[n] == ':')
        msg += n + 1;
    else
        msg = tc_last_error();
    cli_error(cmd, "%s:%s%s", flag, msg[0] == ' ' ? "" : " ", msg);
    return cli_value_status(value) == CLI_EXIT_USAGE ? -1 : -2;
}

/* The overrides of a config file's values: --tp, --micro-batch, --seq, --dp,
 * --pp, --microbatches.
 * Returns true if argv[*i] was one; a missing or impossible value sets
 * *code to the exit status (1 or 2). */
static bool override_flag(const char *cmd, int argc, char **argv, int *i,
                          struct tc_model_config *over, int *code)
{
    static const char *const flags[][2] = {{"--tp", "tp"},   {"--micro-batch", "micro_batch"},
                                           {"--seq", "seq"}, {"--dp", "dp"},
                                           {"--pp", "pp"},   {"--microbatches", "microbatches"}};

    for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
        const char *v = NULL;
        bool bad = false;
        int r;

        if (!mcli_opt(cmd, argc, argv, i, flags[f][0], &v, &bad))
            continue;
        if (bad)
            *code = CLI_EXIT_USAGE;
        else if ((r = set_key(cmd, flags[f][0], flags[f][1], v, over)) < 0)
            *code = r == -1 ? CLI_EXIT_USAGE : CLI_EXIT_INPUT;
        return true;
    }
    return false;
}

int mcli_model_opt(const char *cmd, int argc, char **argv, int *i, struct mcli_model_opts *o)
{
    const char *arg = argv[*i], *v = NULL;
    bool bad = false;
    int code = 0;

    if (strcmp(arg, "--analytical") == 0)
        o->analytical = true;
    else if (strcmp(arg, "--train") == 0)
        o->train = 1;
    else if (strcmp(arg, "--inference") == 0)
        o->train = 0;
    else if (strcmp(arg, "--graphs") == 0)
        o->graphs = 1;
    else if (strcmp(arg, "--serving") == 0)
        o->serving = true;
    else if (strcmp(arg, "--recompute") == 0)
        o->recompute = true;
    else if (mcli_opt(cmd, argc, argv, i, "--zero", &v, &bad)) {
        long long z;

        if (bad)
            return -CLI_EXIT_USAGE;
        if (!cli_parse_int(cmd, "--zero", v, 0, 3, &z))
            return -cli_value_status(v);
        o->zero_set = true;
        o->zero_stage = (int)z;
    } else if (mcli_opt(cmd, argc, argv, i, "--dtype", &v, &bad)) {
        enum tc_dtype dt;

        if (bad)
            return -CLI_EXIT_USAGE;
        if (tc_dtype_parse(v, &dt) < 0) {
            cli_error(cmd, "--dtype: %s", tc_last_error());
            return -CLI_EXIT_INPUT;
        }
        o->dtype = (int)dt;
    } else if (strcmp(arg, "--eager") == 0)
        o->graphs = 0;
    else if (mcli_opt(cmd, argc, argv, i, "--gpu", &v, &bad))
        o->gpu_id = v;
    else if (mcli_opt(cmd, argc, argv, i, "--db", &v, &bad))
        o->db = v;
    else if (mcli_opt(cmd, argc, argv, i, "--config", &v, &bad))
        o->config = v;
    else if (mcli_opt(cmd, argc, argv, i, "--gpus-per-node", &v, &bad)) {
        long long n;

        if (bad)
            return -CLI_EXIT_USAGE;
        if (!cli_parse_int(cmd, "--gpus-per-node", v, 1, 1 << 20, &n))
            return -cli_value_status(v);
        o->cluster.gpus_per_node = n;
    } else if (mcli_opt(cmd, argc, argv, i, "--nic-gbps", &v, &bad)) {
        if (bad)
            return -CLI_EXIT_USAGE;
        if (!cli_parse_double(cmd, "--nic-gbps", v, 1e-3, 1e6, &o->cluster.nic_gbps))
            return -cli_value_status(v);
    } else if (override_flag(cmd, argc, argv, i, &o->over, &code))
        return code ? -code : 1;
    else
        return 0;
    return bad ? -CLI_EXIT_USAGE : 1;
}

int mcli_load_config(const char *cmd, const struct mcli_model_opts *o, struct tc_model_config *c)
{
    int err;

    if (!o->config) {
        cli_error(cmd, "--config FILE|NAME is required (shipped: gpt-neox-20b, llama-2-70b, "
                       "llama-2-7b, llama-3-8b, paper-gpt)");
        return CLI_EXIT_USAGE;
    }
    if (!cli_config_readable(cmd, o->config))
        return CLI_EXIT_INPUT;
    err = tc_model_config_load(o->config, c);
    if (err < 0) {
        cli_fail(cmd, err);
        return CLI_EXIT_INPUT; /* an unreadable config is bad input too */
    }
    if (o->over.tp)
        c->tp = o->over.tp;
    if (o->over.micro_batch)
        c->micro_batch = o->over.micro_batch;
    if (o->over.seq)
        c->seq = o->over.seq;
    if (o->over.dp)
        c->dp = o->over.dp;
    if (o->over.pp)
        c->pp = o->over.pp;
    if (o->over.microbatches)
        c->microbatches = o->over.microbatches;
    if (o->zero_set)
        c->zero_stage = o->zero_stage;
    if (o->recompute)
        c->recompute = true;
    if (o->train >= 0)
        c->training = o->train;
    if (o->graphs >= 0)
        c->graphs = o->graphs;
    if (o->serving)
        c->serving = true;
    if (o->dtype >= 0)
        c->dtype = (enum tc_dtype)o->dtype;
    return 0;
}

int mcli_shape_flag(const char *cmd, int argc, char **argv, int *i, struct tc_model_config *c)
{
    /* the flag and the config key it sets; a switch sets its key to a
     * fixed value */
    static const struct {
        const char *flag, *key, *value;
    } flags[] = {
        {"--hidden", "hidden", NULL},
        {"--heads", "heads", NULL},
        {"--kv-heads", "kv_heads", NULL},
        {"--head-dim", "head_dim", NULL},
        {"--seq", "seq", NULL},
        {"--micro-batch", "micro_batch", NULL},
        {"--tp", "tp", NULL},
        {"--ffn", "ffn", NULL},
        {"--layers", "layers", NULL},
        {"--vocab", "vocab", NULL},
        {"--attention", "attention", NULL},
        {"--dtype", "dtype", NULL},
        {"--swiglu", "activation", "swiglu"},
        {"--gelu", "activation", "gelu"},
        {"--rmsnorm", "norm", "rmsnorm"},
        {"--train", "mode", "training"},
        {"--inference", "mode", "inference"},
        {"--no-causal", "causal", "false"},
    };
    const char *v;
    bool bad = false;

    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
        if (flags[k].value) {
            if (strcmp(argv[*i], flags[k].flag) != 0)
                continue;
            return set_key(cmd, flags[k].flag, flags[k].key, flags[k].value, c);
        }
        if (!mcli_opt(cmd, argc, argv, i, flags[k].flag, &v, &bad))
            continue;
        if (bad)
            return -1;
        return set_key(cmd, flags[k].flag, flags[k].key, v, c);
    }
    return 0;
}

int mcli_setup(const char *cmd, const char *gpu_id, bool analytical, const char *db,
               struct tc_specs **specs, struct tc_predictor **p, const struct tc_gpu **gpu)
{
    *p = NULL;
    *specs = cli_load_specs(cmd);
    if (!*specs)
        return CLI_EXIT_INPUT;
    *gpu = cli_find_gpu(cmd, *specs, gpu_id);
    if (!*gpu)
        goto input_error;
    if (db && !cli_input_readable(cmd, db)) {
        tc_specs_free(*specs);
        *specs = NULL;
        return CLI_EXIT_INPUT;
    }
    *p = tc_predictor_new(*specs);
    if (!*p) {
        int code = cli_fail(cmd, TC_ERR_NOMEM);
        tc_specs_free(*specs);
        *specs = NULL;
        return code;
    }
    tc_predictor_set_analytical(*p, analytical);
    if (db) {
        int err = tc_predictor_add_db(*p, db);
        if (err < 0) {
            int code = cli_fail(cmd, err);
            tc_predictor_free(*p);
            tc_specs_free(*specs);
            *p = NULL;
            *specs = NULL;
            return code;
        }
    }
    return CLI_EXIT_OK;
input_error:
    tc_specs_free(*specs);
    *specs = NULL;
    return gpu_id && *gpu_id ? CLI_EXIT_INPUT : CLI_EXIT_USAGE;
}

void mcli_pipeline_words(const struct tc_model_config *c, char *buf, size_t len)
{
    if (c->pp > 1 || c->microbatches > 1)
        snprintf(buf, len, " pp=%d x%d", c->pp > 1 ? c->pp : 1,
                 c->microbatches > 1 ? c->microbatches : 1);
    else if (len)
        buf[0] = '\0';
}

/* An op whose size is the bytes it moves (in m), not a GEMM's shape. */
static bool op_moves_bytes(const struct tc_op_prediction *op)
{
    static const char *const kinds[] = {"elementwise", "allreduce", "allgather", "p2p"};

    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(op->kind, kinds[i]) == 0)
            return true;
    return false;
}

json_t *mcli_ops_json(const struct tc_model_prediction *mp)
{
    json_t *arr = json_array();

    for (size_t i = 0; i < mp->n_ops; i++) {
        const struct tc_op_prediction *op = &mp->ops[i];
        bool elem = op_moves_bytes(op);
        json_t *o = json_object();

        json_object_set_new(o, "name", json_string(op->name));
        json_object_set_new(o, "kind", json_string(op->kind));
        json_object_set_new(o, "per_layer", json_boolean(op->in_layer));
        if (elem) {
            json_object_set_new(o, "bytes", json_integer(op->m));
        } else {
            json_object_set_new(o, "m", json_integer(op->m));
            json_object_set_new(o, "n", json_integer(op->n));
            json_object_set_new(o, "k", json_integer(op->k));
            json_object_set_new(o, "batch", json_integer(op->batch));
        }
        if (strcmp(op->kind, "gemm") == 0 || strcmp(op->kind, "bmm") == 0)
            json_object_set_new(o, "layout", json_string(tc_layout_name(op->layout)));
        json_object_set_new(o, "time_us", json_real(op->time_us));
        json_object_set_new(o, "tflops", json_real(op->tflops));
        json_object_set_new(o, "share_pct", json_real(100 * op->share));
        json_object_set_new(o, "source", json_string(tc_source_name(op->source)));
        json_array_append_new(arr, o);
    }
    return arr;
}

struct cli_table *mcli_ops_table(const struct tc_model_prediction *mp)
{
    static const char *const headers[] = {"op",     "kind",      "m",         "n",
                                          "k",      "batch",     "layout",    "time_us",
                                          "tflops", "share_pct", "per_layer", "source"};
    static const bool numeric[] = {false, false, true, true, true,  true,
                                   false, true,  true, true, false, false};
    struct cli_table *t = mp ? cli_table_new(12, headers, numeric) : NULL;

    if (!t)
        return NULL;
    for (size_t i = 0; i < mp->n_ops; i++) {
        const struct tc_op_prediction *op = &mp->ops[i];
        bool matmul = strcmp(op->kind, "gemm") == 0 || strcmp(op->kind, "bmm") == 0;
        bool elem = op_moves_bytes(op);

        cli_table_addf(t, 0, "%s", op->name);
        cli_table_addf(t, 1, "%s", op->kind);
        if (elem) {
            /* m holds the bytes moved */
            cli_table_addf(t, 2, "%s", "");
            cli_table_addf(t, 3, "%s", "");
            cli_table_addf(t, 4, "%s", "");
            cli_table_addf(t, 5, "%s", "");
        } else {
            cli_table_addf(t, 2, "%lld", (long long)op->m);
            cli_table_addf(t, 3, "%lld", (long long)op->n);
            cli_table_addf(t, 4, "%lld", (long long)op->k);
            cli_table_addf(t, 5, "%lld", (long long)op->batch);
        }
        cli_table_addf(t, 6, "%s", matmul ? tc_layout_name(op->layout) : "");
        cli_table_addf(t, 7, "%.2f", op->time_us);
        if (elem)
            cli_table_addf(t, 8, "%s", "");
        else
            cli_table_addf(t, 8, "%.1f", op->tflops);
        cli_table_addf(t, 9, "%.1f", 100 * op->share);
        cli_table_addf(t, 10, "%s", op->in_layer ? "yes" : "no");
        cli_table_addf(t, 11, "%s", tc_source_name(op->source));
        cli_table_end_row(t);
    }
    return t;
}

void mcli_print_json(json_t *obj)
{
    json_dumpf(obj, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(8) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
}

bool mcli_help_flag(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

/* ------------------------------------------------------------------------ */
/* predict layer --measured: layer sums of measured GEMMs                    */
/* ------------------------------------------------------------------------ */

static int layer_measured(const char *file, double min_time_us, bool analytical, const char *db,
                          bool no_prebuilt, enum cli_format fmt)
{
    const char *cmd = "predict layer";
    static const char *const headers[] = {
        "gpu", "model", "layers", "mape_pct", "median_ape_pct", "p90_ape_pct", "source"};
    static const bool numeric[] = {false, false, true, true, true, true, false};
    struct tc_specs *specs = NULL;
    struct tc_predictor *p = NULL;
    struct tc_layer_report *report = NULL;
    struct cli_table *t = NULL;
    int code = CLI_EXIT_OK, rc;

    if (!cli_input_readable(cmd, file) || (db && !cli_input_readable(cmd, db)))
        return CLI_EXIT_INPUT;
    specs = cli_load_specs(cmd);
    if (!specs) {
        code = CLI_EXIT_RUNTIME;
        goto cleanup;
    }
    p = tc_predictor_new(specs);
    if (!p) {
        code = cli_fail(cmd, TC_ERR_NOMEM);
        goto cleanup;
    }
    tc_predictor_set_analytical(p, analytical);
    /* The shipped databases hold the development data itself: leave them
     * out to measure a calibration from --db on shapes it has not seen. */
    tc_predictor_use_prebuilt(p, !no_prebuilt);
    if (db && (rc = tc_predictor_add_db(p, db)) < 0) {
        code = cli_fail(cmd, rc);
        goto cleanup;
    }
    if ((rc = tc_layer_compare(p, specs, file, min_time_us, &report)) < 0) {
        code = cli_fail(cmd, rc);
        goto cleanup;
    }
    if (!(t = cli_table_new(7, headers, numeric))) {
        code = cli_fail(cmd, TC_ERR_NOMEM);
        goto cleanup;
    }
    for (size_t i = 0; i < tc_layer_report_count(report); i++) {
        const struct tc_layer_group *g = tc_layer_report_at(report, i);

        cli_table_addf(t, 0, "%s", g->gpu_id);
        cli_table_addf(t, 1, "%s", g->model);
        cli_table_addf(t, 2, "%zu", g->layers);
        cli_table_addf(t, 3, "%.2f", g->mape_pct);
        cli_table_addf(t, 4, "%.2f", g->median_ape_pct);
        cli_table_addf(t, 5, "%.2f", g->p90_ape_pct);
        cli_table_addf(t, 6, "%s", tc_source_name(g->source));
        cli_table_end_row(t);
    }
    if (fmt == CLI_FORMAT_TABLE)
        printf("Predicted vs measured sum of a layer's four GEMMs (QKV, output projection, "
               "MLP up, MLP down), layers >= %g us:\n",
               min_time_us);
    if (fmt == CLI_FORMAT_JSON) {
        /* an object, as every predict --json prints: the groups in it */
        json_t *o = json_object();

        json_object_set_new(o, "prediction", json_true());
        json_object_set_new(o, "measured", json_string(file));
        json_object_set_new(o, "min_time_us", json_real(min_time_us));
        json_object_set_new(o, "groups", cli_table_json(t));
        mcli_print_json(o);
        json_decref(o);
    } else {
        cli_table_print(t, stdout, fmt);
    }
cleanup:
    cli_table_free(t);
    tc_layer_report_free(report);
    tc_predictor_free(p);
    tc_specs_free(specs);
    return code;
}

/* ------------------------------------------------------------------------ */
/* predict layer / predict model                                             */
/* ------------------------------------------------------------------------ */

/* The config's attention word: Hugging Face's eager modules are the unfused
 * path with their scale and mask kernels (config word eager). */
static const char *attention_word(const struct tc_model_config *c)
{
    return c->attention_eager ? "eager" : tc_attn_impl_name(c->attention);
}

/* The config word of the activation (activation: gelu, gelu_new or swiglu). */
static const char *activation_word(const struct tc_model_config *c)
{
    return c->swiglu ? "swiglu" : c->gelu_new ? "gelu_new" : "gelu";
}

static void config_json(json_t *o, const struct tc_model_config *c)
{
    if (c->name[0])
        json_object_set_new(o, "name", json_string(c->name));
    json_object_set_new(o, "hidden", json_integer(c->hidden));
    json_object_set_new(o, "heads", json_integer(c->heads));
    json_object_set_new(o, "kv_heads", json_integer(c->kv_heads ? c->kv_heads : c->heads));
    json_object_set_new(o, "head_dim", json_integer(c->head_dim));
    json_object_set_new(o, "ffn", json_integer(c->ffn));
    json_object_set_new(o, "activation", json_string(activation_word(c)));
    json_object_set_new(o, "seq", json_integer(c->seq));
    json_object_set_new(o, "micro_batch", json_integer(c->micro_batch));
    json_object_set_new(o, "tp", json_integer(c->tp));
    json_object_set_new(o, "attention", json_string(attention_word(c)));
    json_object_set_new(o, "dtype", json_string(tc_dtype_name(c->dtype)));
    json_object_set_new(o, "mode", json_string(c->training ? "training" : "inference"));
    json_object_set_new(o, "pp", json_integer(c->pp ? c->pp : 1));
    json_object_set_new(o, "microbatches", json_integer(c->microbatches ? c->microbatches : 1));
    if (c->num_labels > 0)
        json_object_set_new(o, "num_labels", json_integer(c->num_labels));
    if (c->training) {
        json_object_set_new(o, "dp", json_integer(c->dp ? c->dp : 1));
        json_object_set_new(o, "zero_stage", json_integer(c->zero_stage));
        json_object_set_new(o, "recompute", json_boolean(c->recompute));
        json_object_set_new(o, "dropout", json_real(c->dropout));
        json_object_set_new(o, "attention_dropout", json_real(c->attention_dropout));
    }
}

/* Counts the ops by source (indexed by enum tc_source). */
static void count_sources(const struct tc_model_prediction *mp,
                          size_t counts[TC_SOURCE_ANALYTICAL + 1])
{
    for (int s = 0; s <= TC_SOURCE_ANALYTICAL; s++)
        counts[s] = 0;
    for (size_t i = 0; i < mp->n_ops; i++)
        if ((int)mp->ops[i].source >= 0 && mp->ops[i].source <= TC_SOURCE_ANALYTICAL)
            counts[mp->ops[i].source]++;
}

/* The footer summarising where the op times came from, e.g. "predictions:
 * 15 transferred, 10 analytical; measured: 0 (every figure is a
 * prediction)". The least certain source alone would hide that most ops
 * were calibrated or measured. */
static void print_sources(FILE *out, const struct tc_model_prediction *mp)
{
    size_t counts[TC_SOURCE_ANALYTICAL + 1];
    size_t predicted = 0;
    bool first = true;

    count_sources(mp, counts);
    predicted = mp->n_ops - counts[TC_SOURCE_MEASURED];
    if (!predicted) {
        fprintf(out, "sources         measured: all %zu ops (totals are sums of measurements)\n",
                mp->n_ops);
        return;
    }
    fprintf(out, "sources         predictions:");
    for (int s = TC_SOURCE_CALIBRATED; s <= TC_SOURCE_ANALYTICAL; s++) {
        if (!counts[s])
            continue;
        fprintf(out, "%s %zu %s", first ? "" : ",", counts[s], tc_source_name((enum tc_source)s));
        first = false;
    }
    fprintf(out, "; measured: %zu (every figure is a prediction)\n", counts[TC_SOURCE_MEASURED]);
}

/* GB for humans, 10^9 bytes as the specs count. */
static double gb(double bytes)
{
    return bytes / 1e9;
}

static json_t *memory_json(const struct tc_model_memory *m)
{
    json_t *o = json_object();

    json_object_set_new(o, "weights_gb", json_real(gb(m->weights_bytes)));
    json_object_set_new(o, "grads_gb", json_real(gb(m->grads_bytes)));
    json_object_set_new(o, "optimizer_gb", json_real(gb(m->optimizer_bytes)));
    json_object_set_new(o, "activations_gb", json_real(gb(m->activations_bytes)));
    json_object_set_new(o, "kv_cache_gb", json_real(gb(m->kv_cache_bytes)));
    json_object_set_new(o, "total_gb", json_real(gb(m->total_bytes)));
    json_object_set_new(o, "capacity_gb", json_real(gb(m->capacity_bytes)));
    json_object_set_new(o, "fits", json_boolean(m->fits));
    return o;
}

static void memory_line(FILE *f, const char *prefix, const struct tc_model_memory *m)
{
    fprintf(f,
            "%s%.1f GB per GPU of %.1f (weights %.1f, grads %.1f, optimizer %.1f, "
            "activations %.1f, KV cache %.1f)",
            prefix, gb(m->total_bytes), gb(m->capacity_bytes), gb(m->weights_bytes),
            gb(m->grads_bytes), gb(m->optimizer_bytes), gb(m->activations_bytes),
            gb(m->kv_cache_bytes));
}

static int print_summary_text(FILE *out, const struct tc_model_config *c,
                              const struct tc_model_prediction *mp, bool whole, long long decode,
                              const struct tc_model_memory *mem, const struct tc_cluster *cluster);

/* The summary under the ops as a two-column markdown table: the text
 * summary's lines ("name  value (note)"), so the two cannot drift. */
static int print_summary_md(const struct tc_model_config *c, const struct tc_model_prediction *mp,
                            bool whole, long long decode, const struct tc_model_memory *mem,
                            const struct tc_cluster *cluster)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem_out = open_memstream(&buf, &len);
    int code;

    if (!mem_out)
        return cli_fail("predict", TC_ERR_NOMEM);
    code = print_summary_text(mem_out, c, mp, whole, decode, mem, cluster);
    if (fclose(mem_out) != 0 || !buf) {
        free(buf);
        return cli_fail("predict", TC_ERR_NOMEM);
    }
    printf("\n| quantity | value |\n|---|---|\n");
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        char *sp = strchr(line, ' ');
        char *v = sp;

        if (!sp)
            continue;
        *sp = '\0';
        while (*++v == ' ')
            ;
        printf("| %s | %s |\n", line, v);
    }
    free(buf);
    return code;
}

/* Prints a layer or model prediction. whole: model summary too; mem and
 * cluster (whole models only, else NULL): the memory per GPU and the nodes
 * the GPUs fill, defaults applied. */
static int print_prediction(const struct tc_gpu *gpu, const struct tc_model_config *c,
                            const struct tc_model_prediction *mp, bool whole, long long decode,
                            enum cli_format fmt, const struct tc_model_memory *mem,
                            const struct tc_cluster *cluster)
{
    struct cli_table *t;
    char pipeline[64];
    char act[16];

    if (!mp)
        return cli_fail("predict", TC_ERR_INVALID);
    if (fmt == CLI_FORMAT_JSON) {
        json_t *o = json_object();

        json_object_set_new(o, "prediction", json_true());
        json_object_set_new(o, "gpu", json_string(gpu->id));
        config_json(o, c);
        json_object_set_new(o, "layer_time_us", json_real(mp->layer_time_us));
        if (decode)
            json_object_set_new(o, "decode_context", json_integer(decode));
        if (whole) {
            json_object_set_new(o, "layers", json_integer(c->layers));
            json_object_set_new(o, "vocab", json_integer(c->vocab));
            json_object_set_new(o, "head_time_us", json_real(mp->head_time_us));
            json_object_set_new(o, "step_time_us", json_real(mp->step_time_us));
            json_object_set_new(o, "gpu_time_us", json_real(mp->gpu_time_us));
            json_object_set_new(o, "host_time_us", json_real(mp->host_time_us));
            json_object_set_new(o, "graphs", json_boolean(c->graphs));
            json_object_set_new(o, "engine_time_us", json_real(mp->engine_time_us));
            json_object_set_new(o, "serving", json_boolean(c->serving));
            json_object_set_new(o, "stage_time_us", json_real(mp->stage_time_us));
            json_object_set_new(o, "bubble_us", json_real(mp->bubble_us));
            json_object_set_new(o, "p2p_us", json_real(mp->p2p_us));
            json_object_set_new(o, "nodes", json_integer(mp->nodes));
            if (cluster) {
                json_object_set_new(o, "gpus_per_node", json_integer(cluster->gpus_per_node));
                json_object_set_new(o, "nic_gbps", json_real(cluster->nic_gbps));
            }
            if (mem)
                json_object_set_new(o, "memory", memory_json(mem));
            json_object_set_new(o, "tokens_per_s", json_real(mp->tokens_per_s));
            json_object_set_new(o, "model_tflops", json_real(mp->model_tflops));
            json_object_set_new(o, "mfu", json_real(mp->mfu));
            json_object_set_new(o, "params", json_real(mp->params));
        }
        json_object_set_new(o, "source", json_string(tc_source_name(mp->source)));
        {
            /* how many ops each source gave: "source" is only the least certain */
            size_t counts[TC_SOURCE_ANALYTICAL + 1];
            json_t *so = json_object();

            count_sources(mp, counts);
            for (int s = 0; s <= TC_SOURCE_ANALYTICAL; s++)
                json_object_set_new(so, tc_source_name((enum tc_source)s),
                                    json_integer((json_int_t)counts[s]));
            json_object_set_new(o, "sources", so);
        }
        json_object_set_new(o, "ops", mcli_ops_json(mp));
        mcli_print_json(o);
        json_decref(o);
        return CLI_EXIT_OK;
    }
    t = mcli_ops_table(mp);
    if (!t)
        return cli_fail("predict", TC_ERR_NOMEM);
    if (fmt == CLI_FORMAT_CSV) {
        /* a whole model's figures on every row: one table that pandas
         * reads, nothing of the text summary lost */
        static const char *const extra[] = {"layer_time_us", "step_time_us", "gpu_time_us",
                                            "host_time_us",  "tokens_per_s", "mfu_pct"};
        char v[6][32];
        const char *vals[6];

        snprintf(v[0], sizeof(v[0]), "%.2f", mp->layer_time_us);
        snprintf(v[1], sizeof(v[1]), "%.2f", mp->step_time_us);
        snprintf(v[2], sizeof(v[2]), "%.2f", mp->gpu_time_us);
        snprintf(v[3], sizeof(v[3]), "%.2f", mp->host_time_us);
        snprintf(v[4], sizeof(v[4]), "%.1f", mp->tokens_per_s);
        snprintf(v[5], sizeof(v[5]), "%.2f", 100 * mp->mfu);
        for (int i = 0; i < 6; i++)
            vals[i] = v[i];
        cli_table_print_csv_with(t, stdout, whole ? 6 : 1, extra, vals);
        cli_table_free(t);
        return CLI_EXIT_OK;
    }
    if (fmt == CLI_FORMAT_MD)
        printf("### ");
    mcli_pipeline_words(c, pipeline, sizeof(pipeline));
    /* the header names the activation unless it is the plain GeLU */
    act[0] = '\0';
    if (c->swiglu || c->gelu_new)
        snprintf(act, sizeof(act), " (%s)", activation_word(c));
    if (decode)
        printf("Predicted decode step (one new token per sequence, %lld tokens cached) on %s "
               "(%s, %s): h=%lld a=%lld kv=%lld d=%lld ffn=%lld%s b=%lld t=%lld%s, %s attention\n",
               decode, gpu->name, gpu->id, tc_dtype_name(c->dtype), (long long)c->hidden,
               (long long)c->heads, (long long)c->kv_heads, (long long)c->head_dim,
               (long long)c->ffn, act, (long long)c->micro_batch, (long long)c->tp, pipeline,
               attention_word(c));
    else
        printf("Predicted %s on %s (%s, %s): h=%lld a=%lld kv=%lld d=%lld ffn=%lld%s s=%lld b=%lld "
               "t=%lld%s, %s attention\n",
               c->training ? "training (forward + backward)" : "inference (forward)", gpu->name,
               gpu->id, tc_dtype_name(c->dtype), (long long)c->hidden, (long long)c->heads,
               (long long)c->kv_heads, (long long)c->head_dim, (long long)c->ffn, act,
               (long long)c->seq, (long long)c->micro_batch, (long long)c->tp, pipeline,
               attention_word(c));
    if (fmt == CLI_FORMAT_MD)
        putchar('\n');
    cli_table_print(t, stdout, fmt);
    cli_table_free(t);
    if (fmt == CLI_FORMAT_MD)
        return print_summary_md(c, mp, whole, decode, mem, cluster);
    putchar('\n');
    print_summary_text(stdout, c, mp, whole, decode, mem, cluster);
    return CLI_EXIT_OK;
}

/* The summary under the ops, "name  value (note)" a line. */
static int print_summary_text(FILE *out, const struct tc_model_config *c,
                              const struct tc_model_prediction *mp, bool whole, long long decode,
                              const struct tc_model_memory *mem, const struct tc_cluster *cluster)
{
    fprintf(out, "layer_time_us   %.1f\n", mp->layer_time_us);
    if (whole) {
        fprintf(out, "layers          %lld\n", (long long)c->layers);
        fprintf(out, "head_time_us    %.1f (embedding, %s%s)\n", mp->head_time_us,
                c->num_labels > 0 ? "pooler and classifier" : "logits",
                !c->training ? ""
                : c->dp > 1  ? ", loss, optimizer step, the gradient all-reduce the backward "
                               "does not hide"
                             : ", loss, optimizer step");
        fprintf(out, "step_time_ms    %.2f%s\n", mp->step_time_us / 1e3,
                decode ? " (per generated token)" : "");
        fprintf(out, "gpu_time_ms     %.2f (%s)\n", mp->gpu_time_us / 1e3,
                c->pp > 1 || c->microbatches > 1 ? "the ops of every micro-batch, as scheduled"
                                                 : "the ops' sum");
        fprintf(out, "host_time_ms    %.2f (%s)%s\n", mp->host_time_us / 1e3,
                c->graphs ? "one CUDA graph launch per step"
                          : "eager: every op dispatched by the host, 28 us each, 23 us more "
                            "per linear layer (a module call)",
                mp->host_time_us > mp->gpu_time_us ? ": the step is host-bound" : "");
        if (c->serving)
            fprintf(out,
                    "engine_time_ms  %.2f (the serving engine's per-step work, serial "
                    "with the forward)\n",
                    mp->engine_time_us / 1e3);
        if (c->pp > 1 || c->microbatches > 1)
            fprintf(out,
                    "pipeline        pp %d x %d micro-batch%s: %.2f ms a micro-batch on the "
                    "slowest stage%s, %.2f ms of fill and drain (bubble)%s\n",
                    c->pp, c->microbatches, c->microbatches > 1 ? "es" : "",
                    mp->stage_time_us / 1e3, c->pp > 1 ? " with its sends" : "",
                    mp->bubble_us / 1e3, c->pp > 1 ? "" : ": none without a pipeline");
        if (c->pp > 1)
            fprintf(out, "p2p_us          %.1f (a micro-batch across one stage boundary%s)\n",
                    mp->p2p_us, c->training ? ", forward and backward" : "");
        if (cluster && mp->nodes > 1)
            fprintf(out, "nodes           %lld (%lld GPUs each), %.3g GB/s network per GPU\n",
                    (long long)mp->nodes, (long long)cluster->gpus_per_node, cluster->nic_gbps);
        fprintf(out, "tokens_per_s    %.0f (one replica on %lld GPU%s)\n", mp->tokens_per_s,
                (long long)c->tp * c->pp, c->tp * c->pp > 1 ? "s" : "");
        fprintf(out, "model_tflops    %.1f per GPU\n", mp->model_tflops);
        fprintf(out, "mfu_pct         %.1f\n", 100 * mp->mfu);
        fprintf(out, "params          %.3g\n", mp->params);
        if (mem) {
            memory_line(out, "memory          ", mem);
            fprintf(out, "%s\n", mem->fits ? "" : ": does not fit (--ignore-memory)");
        }
    }
    print_sources(out, mp);
    return CLI_EXIT_OK;
}

const char cmd_predict_layer_help[] = MCLI_PREDICT_LAYER_HELP;

int cmd_predict_layer(int argc, char **argv)
{
    const char *cmd = "predict layer";
    struct tc_model_config c;
    enum cli_format fmt = CLI_FORMAT_TABLE;
    const char *gpu_id = NULL, *db = NULL, *measured = NULL, *v;
    double min_time_us = 20;
    bool analytical = false, bad = false, no_prebuilt = false;
    struct tc_specs *specs = NULL;
    struct tc_predictor *p = NULL;
    struct tc_model_prediction *mp = NULL;
    const struct tc_gpu *gpu;
    int code, err;

    tc_model_config_defaults(&c);
    c.training = false; /* a layer is forward only unless --train */
    c.vocab = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int r;

        if (mcli_help_flag(arg)) {
            fputs(cmd_predict_layer_help, stdout);
            return CLI_EXIT_OK;
        } else if (cli_parse_format(arg, &fmt)) {
        } else if (strcmp(arg, "--analytical") == 0) {
            analytical = true;
        } else if (strcmp(arg, "--no-prebuilt") == 0) {
            no_prebuilt = true;
        } else if (mcli_opt(cmd, argc, argv, &i, "--gpu", &v, &bad)) {
            gpu_id = v;
        } else if (mcli_opt(cmd, argc, argv, &i, "--db", &v, &bad)) {
            db = v;
        } else if (mcli_opt(cmd, argc, argv, &i, "--measured", &v, &bad)) {
            measured = v;
        } else if (mcli_opt(cmd, argc, argv, &i, "--min-time-us", &v, &bad)) {
            if (!bad && !cli_parse_double(cmd, "--min-time-us", v, 0, 1e12, &min_time_us))
                return cli_value_status(v);
        } else if ((r = mcli_shape_flag(cmd, argc, argv, &i, &c)) != 0) {
            if (r < 0)
                return r == -2 ? CLI_EXIT_INPUT : CLI_EXIT_USAGE;
        } else {
            char hint[96];

            cli_error(cmd, "unknown argument '%s'%s (see --help)", arg,
                      cli_suggest_option(arg, cmd_predict_layer_help, hint, sizeof(hint)));
            return CLI_EXIT_USAGE;
        }
        if (bad)
            return CLI_EXIT_USAGE;
    }
    if (measured)
        return layer_measured(measured, min_time_us, analytical, db, no_prebuilt, fmt);
    if (!c.hidden || !c.heads || !c.seq) {
        cli_error(cmd, "--hidden, --heads and --seq are required (or --measured FILE)");
        return CLI_EXIT_USAGE;
    }
    c.layers = 1;
    if (cli_gpu_list_given(gpu_id))
        return mcli_compare_model(cmd, gpu_id, analytical, db, &c, false, NULL, 0, false, fmt);
    code = mcli_setup(cmd, gpu_id, analytical, db, &specs, &p, &gpu);
    if (code)
        return code;
    err = tc_model_config_resolve(&c);
    if (err == TC_OK)
        err = tc_predict_model(p, gpu, &c, &mp);
    if (err < 0)
        code = cli_fail(cmd, err);
    else
        code = print_prediction(gpu, &c, mp, false, 0, fmt, NULL, NULL);
    tc_model_prediction_free(mp);
    tc_predictor_free(p);
    tc_specs_free(specs);
    return code;
}

const char cmd_predict_model_help[] = MCLI_PREDICT_MODEL_HELP;

int cmd_predict_model(int argc, char **argv)
{
    const char *cmd = "predict model";
    struct mcli_model_opts o = {.train = -1, .graphs = -1, .dtype = -1};
    struct tc_model_config c;
    enum cli_format fmt = CLI_FORMAT_TABLE;
    const char *v;
    bool bad = false;
    int attention = -1;
    long long decode = 0;
    bool ignore_memory = false;
    struct tc_specs *specs = NULL;
    struct tc_predictor *p = NULL;
    struct tc_model_prediction *mp = NULL;
    struct tc_model_memory mem;
    struct tc_cluster cluster;
    const struct tc_gpu *gpu;
    int code = 0, err;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];

        if (mcli_help_flag(arg)) {
            fputs(cmd_predict_model_help, stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(arg, "--ignore-memory") == 0) {
            ignore_memory = true;
        } else if (cli_parse_format(arg, &fmt)) {
        } else if ((code = mcli_model_opt(cmd, argc, argv, &i, &o)) != 0) {
            if (code < 0)
                return -code;
        } else if (mcli_opt(cmd, argc, argv, &i, "--attention", &v, &bad)) {
            enum tc_attn_impl impl;

            if (bad)
                return CLI_EXIT_USAGE;
            if (tc_attn_impl_parse(v, &impl) < 0) {
                cli_error(cmd,
                          "--attention: '%s' (expected flash, flash2, flash3, flash4, "
                          "cudnn or unfused)",
                          v);
                return CLI_EXIT_INPUT;
            }
            attention = (int)impl;
        } else if (mcli_opt(cmd, argc, argv, &i, "--decode", &v, &bad)) {
            if (bad || !cli_parse_int(cmd, "--decode", v, 1, 1 << 24, &decode))
                return cli_value_status(v);
        } else {
            char hint[96];

            cli_error(cmd, "unknown argument '%s'%s (see --help)", arg,
                      cli_suggest_option(arg, cmd_predict_model_help, hint, sizeof(hint)));
            return CLI_EXIT_USAGE;
        }
        if (bad)
            return CLI_EXIT_USAGE;
    }
    if (decode && o.train == 1) {
        cli_error(cmd, "--decode is inference; it cannot be combined with --train");
        return CLI_EXIT_USAGE;
    }
    code = mcli_load_config(cmd, &o, &c);
    if (code)
        return code;
    cluster = o.cluster;
    if (attention >= 0) {
        c.attention = (enum tc_attn_impl)attention;
        c.attention_eager = false;
    }
    if (cli_gpu_list_given(o.gpu_id))
        return mcli_compare_model(cmd, o.gpu_id, o.analytical, o.db, &c, true, &cluster, decode,
                                  ignore_memory, fmt);
    code = mcli_setup(cmd, o.gpu_id, o.analytical, o.db, &specs, &p, &gpu);
    if (code)
        return code;
    if (decode)
        c.training = false;
    err = tc_model_config_resolve(&c);
    if (err == TC_OK)
        err = tc_model_memory(gpu, &c, decode, &mem);
    if (err == TC_OK && !mem.fits && !ignore_memory) {
        /* a time for a configuration that cannot run is no answer */
        fprintf(stderr, "tilecast %s: error: %s on %s does not fit: ", cmd,
                c.name[0] ? c.name : "the model", gpu->id);
        memory_line(stderr, "", &mem);
        fprintf(stderr, "; more --tp or --pp, a smaller --micro-batch or --seq, or "
                        "--ignore-memory to predict anyway\n");
        code = CLI_EXIT_INPUT;
    } else if (err == TC_OK) {
        tc_cluster_default(gpu, &cluster);
        err = tc_predict_model_on(p, gpu, &c, &cluster, decode, &mp);
    }
    if (code) {
    } else if (err < 0)
        code = cli_fail(cmd, err);
    else
        code = print_prediction(gpu, &c, mp, true, decode, fmt, &mem, &cluster);
    tc_model_prediction_free(mp);
    tc_predictor_free(p);
    tc_specs_free(specs);
    return code;
}
