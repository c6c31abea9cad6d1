/* tilecast predict attention: one attention call (fused kernels from their
 * tile models, unfused through the GEMM predictor), printed as one record:
 * "key value" lines, a markdown table of them, a JSON object or a CSV
 * row. */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli-gpus.h"
#include "model-cli.h"

/* A one-record output: "key value" lines, a JSON object or a CSV row. */
struct record {
    json_t *obj;
    struct cli_table *kv;
};

static void rec_num(struct record *r, const char *key, double v, int decimals)
{
    json_object_set_new(r->obj, key, json_real(v));
    cli_table_addf(r->kv, 0, "%s", key);
    cli_table_addf(r->kv, 1, "%.*f", decimals, v);
    cli_table_end_row(r->kv);
}

static void rec_int(struct record *r, const char *key, long long v)
{
    json_object_set_new(r->obj, key, json_integer(v));
    cli_table_addf(r->kv, 0, "%s", key);
    cli_table_addf(r->kv, 1, "%lld", v);
    cli_table_end_row(r->kv);
}

/* A flag: a JSON boolean (CSV true/false), "yes"/"no" in the text. */
static void rec_bool(struct record *r, const char *key, bool v)
{
    json_object_set_new(r->obj, key, json_boolean(v));
    cli_table_addf(r->kv, 0, "%s", key);
    cli_table_addf(r->kv, 1, "%s", v ? "yes" : "no");
    cli_table_end_row(r->kv);
}

static void rec_str(struct record *r, const char *key, const char *v)
{
    json_object_set_new(r->obj, key, json_string(v));
    cli_table_addf(r->kv, 0, "%s", key);
    cli_table_addf(r->kv, 1, "%s", v);
    cli_table_end_row(r->kv);
}

static bool rec_init(struct record *r)
{
    static const char *const headers[] = {"field", "value"};

    r->obj = json_object();
    r->kv = cli_table_new(2, headers, NULL);
    return r->obj && r->kv;
}

static void rec_free(struct record *r)
{
    json_decref(r->obj);
    cli_table_free(r->kv);
}

static void rec_print_csv(struct record *r, FILE *out)
{
    const char *key;
    json_t *v;
    size_t n = json_object_size(r->obj), i = 0;

    json_object_foreach(r->obj, key, v) cli_csv_field(out, key, ++i == n);
    i = 0;
    json_object_foreach(r->obj, key, v)
    {
        char buf[64];
        const char *s = buf;

        if (json_is_string(v))
            s = json_string_value(v);
        else if (json_is_integer(v))
            snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
        else if (json_is_boolean(v))
            s = json_is_true(v) ? "true" : "false";
        else
            snprintf(buf, sizeof(buf), "%.6g", json_number_value(v));
        cli_csv_field(out, s, ++i == n);
    }
}

/* ------------------------------------------------------------------------ */
/* predict attention                                                         */
/* ------------------------------------------------------------------------ */

const char cmd_predict_attention_help[] = MCLI_PREDICT_ATTENTION_HELP;

int cmd_predict_attention(int argc, char **argv)
{
    const char *cmd = "predict attention";
    struct tc_attention_query q = {.impl = TC_ATTN_FLASH, .dtype = TC_DTYPE_FP16};
    struct tc_attention_prediction pred;
    enum cli_format fmt = CLI_FORMAT_TABLE;
    const char *gpu_id = NULL, *db = NULL, *v;
    bool analytical = false, bad = false, kv_dtype_given = false;
    enum tc_dtype kv_dtype = TC_DTYPE_FP16;
    struct tc_specs *specs = NULL;
    struct tc_predictor *p = NULL;
    const struct tc_gpu *gpu;
    struct record rec = {0};
    int code, err;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        long long x;

        if (mcli_help_flag(arg)) {
            fputs(cmd_predict_attention_help, stdout);
            return CLI_EXIT_OK;
        } else if (cli_parse_format(arg, &fmt)) {
        } else if (strcmp(arg, "--causal") == 0) {
            q.causal = true;
        } else if (strcmp(arg, "--bwd") == 0) {
            q.backward = true;
        } else if (strcmp(arg, "--deterministic") == 0) {
            q.deterministic = true;
        } else if (strcmp(arg, "--analytical") == 0) {
            analytical = true;
        } else if (mcli_opt(cmd, argc, argv, &i, "--gpu", &v, &bad)) {
            gpu_id = v;
        } else if (mcli_opt(cmd, argc, argv, &i, "--db", &v, &bad)) {
            db = v;
        } else if (mcli_opt(cmd, argc, argv, &i, "--impl", &v, &bad)) {
            if (bad)
                break;
            if (tc_attn_impl_parse(v, &q.impl) < 0) {
                cli_error(cmd,
                          "--impl: '%s' (expected flash, flash2, flash3, flash4, cudnn, "
                          "cudnn_oss or unfused)",
                          v);
                return CLI_EXIT_INPUT;
            }
        } else if (mcli_opt(cmd, argc, argv, &i, "--dtype", &v, &bad)) {
            if (bad)
                break;
            if (tc_dtype_parse(v, &q.dtype) < 0) {
                cli_error(cmd, "--dtype: %s", tc_last_error());
                return CLI_EXIT_INPUT;
            }
        } else if (mcli_opt(cmd, argc, argv, &i, "--kv-dtype", &v, &bad)) {
            if (bad)
                break;
            if (tc_dtype_parse(v, &kv_dtype) < 0) {
                cli_error(cmd, "--kv-dtype: %s", tc_last_error());
                return CLI_EXIT_INPUT;
            }
            kv_dtype_given = true;
        } else if (mcli_opt(cmd, argc, argv, &i, "--page-size", &v, &bad)) {
            if (bad || !cli_parse_int(cmd, "--page-size", v, 0, 1LL << 24, &x))
                return cli_value_status(v);
            q.page_size = x;
        } else {
            static const struct {
                const char *flag;
                int64_t *dst;
            } ints[] = {{"--batch", NULL},       {"--heads", NULL},  {"--kv-heads", NULL},
                        {"--seq", NULL},         {"--seq-kv", NULL}, {"--head-dim", NULL},
                        {"--head-dim-vo", NULL}, {"--window", NULL}, {"--kv-splits", NULL}};
            int64_t *dsts[] = {&q.batch,    &q.heads,       &q.kv_heads, &q.seq_q,    &q.seq_kv,
                               &q.head_dim, &q.head_dim_vo, &q.window,   &q.kv_splits};
            bool matched = false;

            for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]) && !matched; k++) {
                if (!mcli_opt(cmd, argc, argv, &i, ints[k].flag, &v, &bad))
                    continue;
                matched = true;
                if (bad || !cli_parse_int(cmd, ints[k].flag, v, 1, 1LL << 24, &x))
                    return cli_value_status(v);
                *dsts[k] = x;
            }
            if (!matched) {
                char hint[96];

                cli_error(cmd, "unknown argument '%s'%s (see --help)", arg,
                          cli_suggest_option(arg, cmd_predict_attention_help, hint, sizeof(hint)));
                return CLI_EXIT_USAGE;
            }
        }
        if (bad)
            return CLI_EXIT_USAGE;
    }
    if (bad)
        return CLI_EXIT_USAGE;
    if (!q.batch || !q.heads || !q.seq_q || !q.head_dim) {
        cli_error(cmd, "--batch, --heads, --seq and --head-dim are required");
        return CLI_EXIT_USAGE;
    }
    /* the struct's 0 (fp64) means the queries' dtype: an fp64 cache is that
     * of an fp64 attention, the only one it can be read under */
    if (kv_dtype_given && kv_dtype == TC_DTYPE_FP64 && q.dtype != TC_DTYPE_FP64) {
        cli_error(cmd, "--kv-dtype: an fp64 KV cache is wider than the %s attention reading it",
                  tc_dtype_name(q.dtype));
        return CLI_EXIT_INPUT;
    }
    q.kv_dtype = kv_dtype_given ? kv_dtype : TC_DTYPE_FP64;
    if (cli_gpu_list_given(gpu_id))
        return mcli_compare_attention(cmd, gpu_id, analytical, db, &q, fmt);
    code = mcli_setup(cmd, gpu_id, analytical, db, &specs, &p, &gpu);
    if (code)
        return code;
    err = tc_predict_attention(p, gpu, &q, &pred);
    if (err < 0) {
        code = cli_fail(cmd, err);
        goto cleanup;
    }
    /* the library answers an exactly measured shape in the --db file (or
     * the prebuilt one) by its measurement, and calibrates the others */
    if (!rec_init(&rec)) {
        code = cli_fail(cmd, TC_ERR_NOMEM);
        goto cleanup;
    }
    /* "prediction" and "gpu" first, as in every predict --json */
    if (fmt == CLI_FORMAT_JSON)
        json_object_set_new(rec.obj, "prediction", json_boolean(pred.source != TC_SOURCE_MEASURED));
    rec_str(&rec, "gpu", gpu->id);
    rec_str(&rec, "impl", tc_attn_impl_name(q.impl));
    rec_str(&rec, "dtype", tc_dtype_name(q.dtype));
    rec_str(&rec, "direction", q.backward ? "backward" : "forward");
    rec_bool(&rec, "causal", q.causal);
    rec_int(&rec, "batch", q.batch);
    rec_int(&rec, "heads", q.heads);
    rec_int(&rec, "kv_heads", q.kv_heads ? q.kv_heads : q.heads);
    rec_int(&rec, "seq_q", q.seq_q);
    rec_int(&rec, "seq_kv", q.seq_kv ? q.seq_kv : q.seq_q);
    rec_int(&rec, "head_dim", q.head_dim);
    rec_int(&rec, "head_dim_vo", q.head_dim_vo ? q.head_dim_vo : q.head_dim);
    rec_int(&rec, "window", q.window);
    rec_int(&rec, "page_size", q.page_size);
    rec_str(&rec, "kv_dtype", tc_dtype_name(kv_dtype_given ? kv_dtype : q.dtype));
    if (q.backward)
        rec_bool(&rec, "deterministic", q.deterministic);
    rec_num(&rec, "time_us", pred.time_us, 2);
    rec_num(&rec, "lo_us", pred.lo_us, 2);
    rec_num(&rec, "hi_us", pred.hi_us, 2);
    rec_num(&rec, "tflops", pred.tflops, 1);
    if (q.impl == TC_ATTN_UNFUSED) {
        rec_num(&rec, "scores_us", pred.scores_us, 2);
        rec_num(&rec, "softmax_us", pred.softmax_us, 2);
        rec_num(&rec, "values_us", pred.values_us, 2);
        rec_num(&rec, "kv_expand_us", pred.expand_us, 2);
    } else {
        rec_str(&rec, "kernel", tc_attn_impl_name(pred.kernel));
        rec_int(&rec, "kv_splits", pred.kv_splits);
        rec_int(&rec, "block_m", pred.block_m);
        rec_int(&rec, "block_n", pred.block_n);
        rec_int(&rec, "blocks", pred.blocks);
        rec_int(&rec, "blocks_per_sm", pred.blocks_per_sm);
        rec_num(&rec, "waves", pred.waves, 2);
        rec_num(&rec, "occupancy_pct", 100 * pred.occupancy, 0);
    }
    rec_str(&rec, "bound", tc_bound_name(pred.bound));
    rec_str(&rec, "source", tc_source_name(pred.source));
    if (q.page_size && pred.source != TC_SOURCE_MEASURED)
        rec_str(&rec, "kv_cache_model",
                "paged: the block table's bytes only; hi_us allows vLLM's 26% paged-kernel "
                "overhead");
    if (fmt == CLI_FORMAT_JSON) {
        mcli_print_json(rec.obj);
    } else if (fmt == CLI_FORMAT_CSV) {
        rec_print_csv(&rec, stdout);
    } else if (fmt == CLI_FORMAT_MD) {
        cli_table_print(rec.kv, stdout, CLI_FORMAT_MD);
    } else {
        printf("Attention on %s (%s), %s:\n", gpu->name, tc_dtype_name(q.dtype),
               pred.source == TC_SOURCE_MEASURED ? "measured" : "predicted");
        cli_table_print(rec.kv, stdout, CLI_FORMAT_TABLE);
    }
cleanup:
    rec_free(&rec);
    tc_predictor_free(p);
    tc_specs_free(specs);
    return code;
}
