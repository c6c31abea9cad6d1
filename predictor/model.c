/* Transformer models: the YAML config, the parameter count, and the
 * decomposition of a layer into GEMMs, attention and memory-bound ops
 * (the paper's table, with tensor-parallel splits and the backward GEMMs),
 * each predicted through the GEMM/attention predictors. */
#include "bounds.h"
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "calibrate.h"
#include "gemm-internal.h"
#include "input.h"
#include "model-internal.h"
#include "yaml-walk.h"

/* ------------------------------------------------------------------------ */
/* Config                                                                    */
/* ------------------------------------------------------------------------ */

TC_API void tc_model_config_defaults(struct tc_model_config *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->layers = 1;
    cfg->micro_batch = 1;
    cfg->tp = 1;
    cfg->dtype = TC_DTYPE_FP16;
    cfg->attention = TC_ATTN_FLASH;
    cfg->training = true;
    cfg->causal = true;
    cfg->dp = 1;
    cfg->pp = 1;
    cfg->microbatches = 1;
}

TC_API int tc_model_config_resolve(struct tc_model_config *c)
{
    if (!c)
        return tc_error(TC_ERR_INVALID, "model config: none given");
    if (c->hidden <= 0 || c->heads <= 0)
        return tc_error(TC_ERR_RANGE,
                        "model config: hidden (%lld) and heads (%lld) must be "
                        "positive",
                        (long long)c->hidden, (long long)c->heads);
    if (c->seq <= 0 || c->micro_batch <= 0 || c->tp <= 0 || c->layers <= 0)
        return tc_error(TC_ERR_RANGE,
                        "model config: seq (%lld), micro_batch (%lld), tp (%lld) and layers "
                        "(%lld) must be positive",
                        (long long)c->seq, (long long)c->micro_batch, (long long)c->tp,
                        (long long)c->layers);
    if (c->head_dim < 0 || c->kv_heads < 0 || c->ffn < 0 || c->vocab < 0 || c->num_labels < 0)
        return tc_error(TC_ERR_RANGE, "model config: head_dim, kv_heads, ffn, vocab and num_labels "
                                      "must not be negative");
    if (c->num_labels > 0 && c->vocab == 0)
        return tc_error(TC_ERR_INVALID,
                        "model config: num_labels: %lld asks for a classifier on the model's "
                        "output, but vocab is 0 (one layer, no embedding and no head)",
                        (long long)c->num_labels);
    if (c->head_dim == 0) {
        if (c->hidden % c->heads)
            return tc_error(TC_ERR_INVALID,
                            "model config: hidden %lld is not divisible by heads %lld (give "
                            "head_dim explicitly)",
                            (long long)c->hidden, (long long)c->heads);
        c->head_dim = c->hidden / c->heads;
    }
    if (c->swiglu && c->gelu_new)
        return tc_error(TC_ERR_INVALID, "model config: swiglu and gelu_new name two activations "
                                        "(activation: swiglu, gelu or gelu_new)");
    if (c->kv_heads == 0)
        c->kv_heads = c->heads;
    if (c->kv_heads > c->heads || c->heads % c->kv_heads)
        return tc_error(TC_ERR_INVALID, "model config: kv_heads %lld must divide heads %lld",
                        (long long)c->kv_heads, (long long)c->heads);
    if (c->ffn == 0) {
        if (c->swiglu) /* Llama: 2/3 of 4h, rounded up to a multiple of 256 */
            c->ffn = ((8 * c->hidden / 3) + 255) / 256 * 256;
        else
            c->ffn = 4 * c->hidden;
    }
    if (c->heads % c->tp)
        return tc_error(TC_ERR_INVALID, "model config: tp %lld does not divide heads %lld",
                        (long long)c->tp, (long long)c->heads);
    if (c->ffn % c->tp || c->hidden % c->tp)
        return tc_error(TC_ERR_INVALID,
                        "model config: tp %lld does not divide hidden %lld and ffn %lld",
                        (long long)c->tp, (long long)c->hidden, (long long)c->ffn);
    if ((unsigned)c->dtype >= TC_DTYPE_COUNT)
        return tc_error(TC_ERR_INVALID, "model config: bad dtype");
    if (c->attention_eager && c->attention != TC_ATTN_UNFUSED)
        return tc_error(TC_ERR_INVALID,
                        "model config: attention_eager is the unfused attention of Hugging "
                        "Face's eager modules, but attention is %s (use attention: eager)",
                        tc_attn_impl_name(c->attention));
    if (c->dp == 0) /* a struct zeroed by its caller: no data parallelism */
        c->dp = 1;
    if (c->dp < 0 || c->zero_stage < 0 || c->zero_stage > 3)
        return tc_error(TC_ERR_RANGE,
                        "model config: dp (%lld) must be positive and zero_stage (%lld) in [0, 3]",
                        (long long)c->dp, (long long)c->zero_stage);
    /* the tail a caller zeroed: no pipeline, one micro-batch */
    if (c->pp == 0)
        c->pp = 1;
    if (c->microbatches == 0)
        c->microbatches = 1;
    if (c->pp < 0 || c->microbatches < 0)
        return tc_error(TC_ERR_RANGE,
                        "model config: pp (%d) and microbatches (%d) must be positive", c->pp,
                        c->microbatches);
    /* Megatron-LM's stages hold equal shares of the layers */
    if (c->layers % c->pp)
        return tc_error(TC_ERR_INVALID,
                        "model config: pp %d does not divide layers %lld (each pipeline stage "
                        "holds layers / pp layers)",
                        c->pp, (long long)c->layers);
    return TC_OK;
}

/* A sequence classifier's weights in place of the logits' (num_labels > 0):
 * BERT's pooler (hidden x hidden and a bias) and the classifier (hidden x
 * num_labels and a bias), as BertForSequenceClassification holds them. */
static double classifier_params(const struct tc_model_config *c)
{
    double h = (double)c->hidden, n = (double)c->num_labels;

    return c->num_labels > 0 ? h * h + h + h * n + n : 0;
}

TC_API double tc_model_params(const struct tc_model_config *c)
{
    double h, attn, mlp, norms, layer, embed;

    if (!c)
        return 0;
    h = (double)c->hidden;
    double d = (double)(c->head_dim ? c->head_dim : (c->heads ? c->hidden / c->heads : 0));
    double kv = (double)(c->kv_heads ? c->kv_heads : c->heads);
    double ffn = (double)(c->ffn ? c->ffn : 4 * c->hidden);
    attn = h * ((double)c->heads + 2 * kv) * d + (double)c->heads * d * h;
    mlp = (c->swiglu ? 3.0 : 2.0) * h * ffn;
    /* LayerNorm has a weight and a bias, RMSNorm a weight; GeLU MLPs in the
     * GPT-NeoX/Megatron style carry biases on every linear layer. */
    norms = (c->rmsnorm ? 2.0 : 4.0) * h;
    if (!c->swiglu)
        attn += ((double)c->heads + 2 * kv) * d + h, mlp += ffn + h;
    layer = attn + mlp + norms;
    embed = (double)c->vocab * h * (c->tied_embeddings || c->num_labels ? 1.0 : 2.0);
    return (double)c->layers * layer + embed + classifier_params(c) + (c->rmsnorm ? 1.0 : 2.0) * h;
}

/* Memory per GPU, with its sources:
 *  - weights: the parameter count (tc_model_params) in the config's dtype,
 *    split over the tp GPUs (Megatron splits every layer's matrices and,
 *    with a vocabulary-parallel embedding, the embedding and logits too;
 *    the norms are replicated and negligible); with a pipeline, the
 *    busiest stage's parameters (stage_params), and its gradients and
 *    optimizer state likewise;
 *  - a pipeline's first stage keeps the activations of min(pp,
 *    microbatches) micro-batches of its layers / pp layers under 1F1B;
 *    each stage caches the keys and values of its own layers;
 *  - training with Adam in mixed precision: a gradient per weight in the
 *    same dtype and 12 bytes of optimizer state per parameter (fp32 master
 *    weight, momentum and variance): 16 bytes per parameter in all for
 *    16-bit training (Rajbhandari et al., "ZeRO", SC 2020, section 3.1);
 *    fp32 training keeps no master copy (8 bytes of state);
 *  - activations kept for the backward pass, per layer: s.b.h.(10 + 24/t +
 *    5.a.s/(h.t)) bytes at 16 bits without sequence parallelism (Korthikanti
 *    et al., "Reducing Activation Recomputation in Large Transformer
 *    Models", 2022, eq. 2); flash attention stores no s x s scores, which
 *    drops the last term; fp32 doubles it;
 *  - ZeRO over the dp data-parallel replicas (Rajbhandari et al., section
 *    5): stage 1 keeps 1/dp of the optimizer state on each GPU, stage 2 of
 *    the gradients too, stage 3 of the weights too (the one layer stage 3
 *    gathers at a time is left out);
 *  - full activation recomputation (Korthikanti et al., section 4.1: each
 *    layer stores its input only, 2.s.b.h bytes at 16 bits) keeps that for
 *    every layer plus one layer's activations while it is recomputed;
 *  - inference: the KV cache, 2 (K and V) x layers x kv_heads/t x head_dim x
 *    tokens x batch in the dtype, and one layer's working set (its widest
 *    activation, b.s.max(3h, 2.ffn) elements, twice for input and output);
 *  - capacity: the spec's memory in GB (10^9 bytes, below the GiB the cards
 *    carry), less 5 % for the CUDA context, the library's workspaces and
 *    fragmentation. */
/* The parameters of the busiest pipeline stage (all of them when pp is 1):
 * its layers / pp layers and one vocab x hidden matrix, the embedding on
 * the first stage, the logits on the last (a tied embedding is kept on
 * both, as Megatron-LM keeps it), and the final norm. */
static double stage_params(const struct tc_model_config *c)
{
    double total = tc_model_params(c), h = (double)c->hidden, v = (double)c->vocab;
    double head = v * h * (c->tied_embeddings || c->num_labels ? 1.0 : 2.0) + classifier_params(c);
    double norm = (c->rmsnorm ? 1.0 : 2.0) * h;

    if (c->pp <= 1)
        return total;
    return (total - head - norm) / (double)c->pp + v * h + norm;
}

TC_API int tc_model_memory(const struct tc_gpu *gpu, const struct tc_model_config *cfg,
                           int64_t decode_context, struct tc_model_memory *out)
{
    struct tc_model_config c;
    double e, t, s, b, h, tokens, per_layer, stage_layers, in_flight;
    int err;

    if (!gpu || !cfg || !out)
        return tc_error(TC_ERR_INVALID, "tc_model_memory: no GPU, config or output");
    if (decode_context < 0)
        return tc_error(TC_ERR_RANGE, "decode context %lld is negative", (long long)decode_context);
    c = *cfg;
    if ((err = tc_model_config_resolve(&c)) < 0)
        return err;
    memset(out, 0, sizeof(*out));
    e = tc_dtype_bytes(c.dtype);
    t = (double)c.tp;
    s = (double)c.seq;
    b = (double)c.micro_batch;
    h = (double)c.hidden;
    /* a pipeline stage's layers and, under 1F1B, the micro-batches its first
     * stage keeps in flight, at most pp (Narayanan et al., SC 2021, section
     * 2.2.1): as many layers' activations as without a pipeline */
    stage_layers = (double)c.layers / (double)c.pp; /* pp divides layers */
    in_flight = (double)(c.microbatches < c.pp ? c.microbatches : c.pp);
    out->weights_bytes = stage_params(&c) * e / t;
    if (c.training && !decode_context) {
        double params = stage_params(&c) / t, dp = (double)c.dp;

        if (c.zero_stage >= 3)
            out->weights_bytes /= dp;
        out->grads_bytes = params * e / (c.zero_stage >= 2 ? dp : 1);
        out->optimizer_bytes =
            params * (c.dtype == TC_DTYPE_FP32 ? 8.0 : 12.0) / (c.zero_stage >= 1 ? dp : 1);
        per_layer = s * b * h * (10.0 + 24.0 / t);
        if (c.attention == TC_ATTN_UNFUSED)
            per_layer += s * b * h * 5.0 * (double)c.heads * s / (h * t);
        if (c.recompute)
            out->activations_bytes =
                (stage_layers * in_flight * 2.0 * s * b * h + per_layer) * (e > 2 ? e / 2 : 1);
        else
            out->activations_bytes = stage_layers * in_flight * per_layer * (e > 2 ? e / 2 : 1);
    } else {
        double wide = 3.0 * h > 2.0 * (double)c.ffn ? 3.0 * h : 2.0 * (double)c.ffn;

        tokens = decode_context ? (double)decode_context + 1 : s;
        out->kv_cache_bytes =
            2.0 * stage_layers * (double)c.kv_heads / t * (double)c.head_dim * tokens * b * e;
        out->activations_bytes = 2.0 * b * (decode_context ? 1 : s) * wide / t * e;
    }
    out->total_bytes = out->weights_bytes + out->grads_bytes + out->optimizer_bytes +
                       out->activations_bytes + out->kv_cache_bytes;
    out->capacity_bytes = gpu->mem_gb * 1e9 * 0.95;
    out->fits = out->total_bytes <= out->capacity_bytes;
    return TC_OK;
}

struct yaml_ctx {
    const char *file;
    yaml_parser_t parser;
    bool parser_ready;
    FILE *f;
};

/* One key: value of the config mapping, through the setter every route
 * shares; its message gains the place in the file. */
static int set_field(struct yaml_ctx *y, const char *key, const yaml_event_t *vev,
                     struct tc_model_config *c)
{
    int err = tc_model_config_set(c, key, (const char *)vev->data.scalar.value);

    if (err < 0)
        tc_error_prefix(err, "%s:%zu:%zu", y->file, vev->start_mark.line + 1,
                        vev->start_mark.column + 1);
    return err;
}

static int next_event(struct yaml_ctx *y, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&y->parser, ev))
        return tc_yaml_syntax_error(y->file, &y->parser, 0);
    return TC_OK;
}

TC_API int tc_model_config_load(const char *name, struct tc_model_config *out)
{
    char resolved[PATH_MAX];
    const char *file = name;
    struct yaml_ctx y = {0};
    struct tc_model_config c;
    yaml_event_t ev, vev;
    char key[64];
    /* the keys given so far, the fields they set and their lines: a key
     * given twice, or two keys that set one field (activation and swiglu),
     * are refused, as sweeps and specs refuse a repeated key (which one
     * did the user mean?) */
    struct {
        char key[64];
        const char *field;
        size_t line;
    } seen[32];
    size_t n_seen = 0;
    const char *field;
    bool in_map = false, done = false;
    char *text = NULL;
    size_t text_len;
    int err = TC_OK;

    if (!file || !out)
        return tc_error(TC_ERR_INVALID, "tc_model_config_load: no file or output");
    /* a shipped config by name alone: llama-2-7b */
    err = tc_data_file_named("predictor/models", "model config", name, resolved, sizeof(resolved),
                             &file);
    if (err < 0)
        return err;
    y.file = file;
    tc_model_config_defaults(&c);
    y.f = fopen(file, "rb");
    if (!y.f)
        return tc_error(TC_ERR_IO, "%s: %s", file, strerror(errno));
    if (!yaml_parser_initialize(&y.parser)) {
        err = tc_error(TC_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    y.parser_ready = true;
    /* read whole, within the cap, so that an endless input is refused */
    if ((err = tc_input_read(file, y.f, TC_INPUT_MODEL_MAX, "a model config", &text, &text_len)) <
        0)
        goto cleanup;
    yaml_parser_set_input_string(&y.parser, (const unsigned char *)text, text_len);

    while (!done) {
        err = next_event(&y, &ev);
        if (err < 0)
            goto cleanup;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_MAPPING_START_EVENT:
            if (in_map)
                err = tc_yaml_mark_error(y.file, ev.start_mark, TC_ERR_PARSE,
                                         "nested mappings are not allowed here");
            in_map = true;
            break;
        case YAML_MAPPING_END_EVENT:
            in_map = false;
            break;
        case YAML_SCALAR_EVENT:
            if (!in_map) {
                err = tc_yaml_mark_error(y.file, ev.start_mark, TC_ERR_PARSE,
                                         "expected a mapping of key: value");
                break;
            }
            tc_strlcpy(key, (const char *)ev.data.scalar.value, sizeof(key));
            field = tc_model_config_field(key);
            if (!field) {
                err = tc_yaml_mark_error(y.file, ev.start_mark, TC_ERR_INVALID, "%s",
                                         tc_last_error());
                break;
            }
            for (size_t i = 0; i < n_seen && err == TC_OK; i++) {
                if (seen[i].field != field)
                    continue;
                if (strcmp(seen[i].key, key) == 0)
                    err = tc_yaml_mark_error(y.file, ev.start_mark, TC_ERR_PARSE,
                                             "duplicate key '%s' (first given on "
                                             "line %zu)",
                                             key, seen[i].line);
                else
                    err = tc_yaml_mark_error(y.file, ev.start_mark, TC_ERR_PARSE,
                                             "key '%s' sets %s, as '%s' on line %zu "
                                             "did",
                                             key, field, seen[i].key, seen[i].line);
            }
            if (err < 0)
                break;
            if (n_seen < TC_ARRAY_SIZE(seen)) {
                tc_strlcpy(seen[n_seen].key, key, sizeof(seen[n_seen].key));
                seen[n_seen].field = field;
                seen[n_seen++].line = ev.start_mark.line + 1;
            }
            err = next_event(&y, &vev);
            if (err < 0)
                break;
            if (vev.type != YAML_SCALAR_EVENT)
                err = tc_yaml_mark_error(y.file, vev.start_mark, TC_ERR_PARSE,
                                         "%s: expected a scalar value", key);
            else
                err = set_field(&y, key, &vev, &c);
            yaml_event_delete(&vev);
            break;
        case YAML_SEQUENCE_START_EVENT:
            err = tc_yaml_mark_error(y.file, ev.start_mark, TC_ERR_PARSE,
                                     "lists are not allowed in a model config");
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
        if (err < 0)
            goto cleanup;
    }
    if (c.hidden == 0 || c.heads == 0 || c.seq == 0)
        err = tc_error(TC_ERR_INVALID, "%s: hidden, heads and seq are required", file);
    else if ((err = tc_model_config_resolve(&c)) < 0)
        tc_error_prefix(err, "%s", file);
    if (err == TC_OK)
        *out = c;
cleanup:
    if (y.parser_ready)
        yaml_parser_delete(&y.parser);
    free(text);
    fclose(y.f);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Decomposition                                                             */
/* ------------------------------------------------------------------------ */

struct op_list {
    struct tc_op_prediction *ops;
    size_t n, cap;
};

static struct tc_op_prediction *op_new(struct op_list *l, const char *name, const char *kind,
                                       bool in_layer)
{
    struct tc_op_prediction *op;

    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        struct tc_op_prediction *ops = realloc(l->ops, cap * sizeof(*ops));
        if (!ops) {
            tc_error(TC_ERR_NOMEM, "out of memory");
            return NULL;
        }
        l->ops = ops;
        l->cap = cap;
    }
    op = &l->ops[l->n++];
    memset(op, 0, sizeof(*op));
    tc_strlcpy(op->name, name, sizeof(op->name));
    tc_strlcpy(op->kind, kind, sizeof(op->kind));
    op->in_layer = in_layer;
    op->batch = 1;
    op->source = TC_SOURCE_ANALYTICAL;
    op->align = TC_ALIGN_128B;
    op->bound = TC_BOUND_MEMORY;
    op->tile_eff = op->wave_eff = 1;
    return op;
}

struct decomp {
    struct tc_predictor *p;
    const struct tc_gpu *gpu;
    struct tc_gemm_memo *memo;
    const struct tc_model_config *c;
    int64_t decode_ctx; /* > 0: one decode step over a KV cache this long */
    struct op_list list;
    /* forward linear layers called as modules, in a layer and once per step */
    int layer_linears, head_linears;
    /* a layer's forward: its time and ops (what recomputation runs again) */
    double layer_fwd_us;
    int layer_fwd_ops;
    /* host dispatches per layer beyond the ops of the list (recomputation) */
    int layer_extra_ops;
    /* the nodes the GPUs fill (struct tc_cluster, defaults applied) */
    struct tc_cluster cluster;
    /* the ops from here on run once per step, not per micro-batch (the
     * optimizer, the gradient all-reduce); SIZE_MAX: none */
    size_t step_ops;
    /* the stage boundary's sends of one micro-batch (op "pp_send"), not a
     * part of any stage's sum; SIZE_MAX: none */
    size_t p2p_op;
};

/* The nodes a group of `ranks` GPUs, `stride` ranks apart in Megatron-LM's
 * order, spans when each node holds gpus_per_node consecutive ranks. */
static int64_t group_nodes(const struct tc_cluster *cl, int64_t ranks, int64_t stride)
{
    int64_t per_node;

    if (ranks <= 1)
        return 1;
    if (stride >= cl->gpus_per_node)
        return ranks;
    per_node = cl->gpus_per_node / stride;
    if (per_node >= ranks)
        return 1;
    return (ranks + per_node - 1) / per_node;
}

static int gemm_op(struct decomp *dc, const char *name, bool in_layer, int64_t m, int64_t n,
                   int64_t k, int64_t batch, enum tc_layout layout)
{
    struct tc_gemm_query q = {
        .m = m,
        .n = n,
        .k = k,
        .batch = batch,
        .dtype = dc->c->dtype,
        .layout = layout,
    };
    struct tc_gemm_prediction pred;
    struct tc_op_prediction *op;
    int err = tc_gemm_predict_any(dc->p, dc->gpu, dc->memo, &q, &pred);

    if (err < 0)
        return tc_error_prefix(err, "%s GEMM %lldx%lldx%lld", name, (long long)m, (long long)n,
                               (long long)k);
    op = op_new(&dc->list, name, batch > 1 ? "bmm" : "gemm", in_layer);
    if (!op)
        return TC_ERR_NOMEM;
    op->m = m, op->n = n, op->k = k, op->batch = batch, op->layout = layout;
    op->time_us = pred.time_us;
    op->flops = 2.0 * (double)m * (double)n * (double)k * (double)batch;
    op->source = pred.source;
    op->align = pred.align;
    op->bound = pred.bound;
    op->tile_eff = pred.tile_eff;
    op->wave_eff = pred.wave_eff;
    op->waves = pred.waves;
    op->occupancy = pred.occupancy;
    /* the backward GEMMs are named after their forward: qkv.dgrad */
    if (in_layer && !strchr(name, '.'))
        dc->layer_fwd_us += op->time_us, dc->layer_fwd_ops++;
    return TC_OK;
}

static int memory_op(struct decomp *dc, const char *name, bool in_layer, double bytes, int kernels);

/* A linear layer Y[m×n] = X[m×k]·W^T, and in training its two backward
 * GEMMs: dX = dY·W (m×k×n, NN) and dW = dY^T·X (n×k×m, TN). Where fp8
 * GEMMs take the NT layout alone (tc_gemm_fp8_tn_only: Ada, Hopper), the
 * backward reads fp8 copies of W, dY and X stored transposed, as
 * TransformerEngine keeps them ("columnwise" data, written by its fused
 * cast-transpose kernels), and both of its GEMMs run NT: their bytes, one
 * byte an element, are one op of their own. */
static int linear_ops(struct decomp *dc, const char *name, bool in_layer, int64_t m, int64_t n,
                      int64_t k)
{
    char sub[TC_OP_NAME_MAX];
    int err = gemm_op(dc, name, in_layer, m, n, k, 1, TC_LAYOUT_NT);
    bool nt_only = dc->c->dtype == TC_DTYPE_FP8 && tc_gemm_fp8_tn_only(dc->gpu);

    if (in_layer)
        dc->layer_linears++;
    else
        dc->head_linears++;
    if (err < 0 || !dc->c->training)
        return err;
    if (nt_only) {
        snprintf(sub, sizeof(sub), "%s.fp8_transpose", name);
        err = memory_op(dc, sub, in_layer,
                        (double)n * (double)k + (double)m * (double)n + (double)m * (double)k, 1);
        if (err < 0)
            return err;
    }
    snprintf(sub, sizeof(sub), "%s.dgrad", name);
    err = gemm_op(dc, sub, in_layer, m, k, n, 1, nt_only ? TC_LAYOUT_NT : TC_LAYOUT_NN);
    if (err < 0)
        return err;
    snprintf(sub, sizeof(sub), "%s.wgrad", name);
    return gemm_op(dc, sub, in_layer, n, k, m, 1, nt_only ? TC_LAYOUT_NT : TC_LAYOUT_TN);
}

/* Stores the bytes an op moves in its m (an int64_t). A tensor of 2^62
 * bytes is a config no device holds: the sizes bound the factors, not
 * their product. */
static int set_op_bytes(struct tc_op_prediction *op, double bytes)
{
    if (!(bytes >= 0 && bytes <= 0x1p62))
        return tc_error(TC_ERR_RANGE,
                        "%s moves %.3g bytes, more than 2^62: the sizes (micro_batch, seq, "
                        "hidden, ffn, vocab) describe no model a device holds",
                        op->name, bytes);
    op->m = (int64_t)bytes;
    return TC_OK;
}

/* A memory-bound op of `kernels` kernels moving `bytes` in all. */
static int memory_op(struct decomp *dc, const char *name, bool in_layer, double bytes, int kernels)
{
    struct tc_op_prediction *op = op_new(&dc->list, name, "elementwise", in_layer);
    int err;

    if (!op)
        return TC_ERR_NOMEM;
    err = set_op_bytes(op, bytes);
    if (err < 0)
        return err;
    op->n = op->k = 0;
    op->time_us = tc_elementwise_time_us(dc->gpu, bytes) + (kernels - 1) * TC_KERNEL_FLOOR_US;
    return TC_OK;
}

/* An elementwise op moving `bytes` forward; in training its backward
 * kernel moves about twice as much (reads the saved input and the
 * gradient, writes one gradient). */
static int elementwise_op(struct decomp *dc, const char *name, bool in_layer, double bytes)
{
    if (in_layer)
        dc->layer_fwd_us += tc_elementwise_time_us(dc->gpu, bytes), dc->layer_fwd_ops++;
    if (dc->c->training)
        return memory_op(dc, name, in_layer, 3 * bytes, 2);
    return memory_op(dc, name, in_layer, bytes, 1);
}

/* Hugging Face's NewGELUActivation over ffn activations of `bytes` each:
 * eight element-wise kernels (decompose says which), 18 passes, each with
 * its backward in training as elementwise_op takes it (three times the
 * bytes, a kernel more each). One op in the table; the host dispatches
 * each of the eight. */
static int gelu_new_ops(struct decomp *dc, double bytes)
{
    const int kernels = 8;
    bool train = dc->c->training;

    dc->layer_fwd_us += tc_elementwise_time_us(dc->gpu, 18 * bytes);
    dc->layer_fwd_ops += kernels;
    dc->layer_extra_ops += kernels - 1;
    return memory_op(dc, "gelu_new", true, (train ? 3 : 1) * 18 * bytes, (train ? 2 : 1) * kernels);
}

/* Dropout of training mode over n elements with probability p, as
 * PyTorch runs nn.Dropout in a module's train() mode (ATen's
 * native_dropout, Dropout.cpp and Dropout.cu): one kernel draws the mask,
 * reads the input and writes the output and the mask, a byte an element
 * (bool); the backward (native_dropout_backward) reads the gradient and
 * the mask and writes the gradient. p = 0 runs no kernel (ATen returns
 * the input), and neither does a forward outside training mode. */
static int dropout_op(struct decomp *dc, const char *name, double p, double n)
{
    double e = tc_dtype_bytes(dc->c->dtype);
    double fwd_bytes = n * (2 * e + 1);

    if (!dc->c->training || !(p > 0))
        return TC_OK;
    dc->layer_fwd_us += tc_elementwise_time_us(dc->gpu, fwd_bytes), dc->layer_fwd_ops++;
    return memory_op(dc, name, true, 2 * fwd_bytes, 2);
}

/* The tensor-parallel all-reduce of the b·s×h activations after the
 * attention and the MLP blocks (and of their input gradients in the
 * backward pass), as NCCL runs it (collective.c). */
static int collective_op(struct decomp *dc, const char *name, enum tc_collective coll,
                         bool in_layer, double bytes);

static int allreduce_op(struct decomp *dc, const char *name, double bytes)
{
    if (dc->c->tp <= 1)
        return TC_OK;
    return collective_op(dc, name, TC_COLL_ALLREDUCE, true, bytes);
}

/* A collective of the t tensor-parallel GPUs over `bytes` (an all-gather's
 * output), NCCL's fastest algorithm and protocol for it (collective.c),
 * once forward and once backward in training. */
static int collective_op(struct decomp *dc, const char *name, enum tc_collective coll,
                         bool in_layer, double bytes)
{
    const struct tc_model_config *c = dc->c;
    int passes = c->training ? 2 : 1;
    struct tc_op_prediction *op;
    int err;

    op = op_new(&dc->list, name, coll == TC_COLL_ALLREDUCE ? "allreduce" : "allgather", in_layer);
    if (!op)
        return TC_ERR_NOMEM;
    err = set_op_bytes(op, bytes);
    if (err < 0)
        return err;
    op->time_us =
        passes * tc_collective_nodes_us(dc->gpu, coll, c->tp, group_nodes(&dc->cluster, c->tp, 1),
                                        dc->cluster.nic_gbps, bytes);
    if (in_layer)
        dc->layer_fwd_us += op->time_us / passes, dc->layer_fwd_ops++;
    return TC_OK;
}

/* One fused attention op (forward or backward, as q says) of the layer. */
static int fused_attention_op(struct decomp *dc, const char *name,
                              const struct tc_attention_query *q)
{
    struct tc_attention_prediction pred;
    struct tc_op_prediction *op;
    int err = tc_attention_predict_memo(dc->p, dc->gpu, dc->memo, q, &pred);

    if (err < 0)
        return err;
    op = op_new(&dc->list, name, "attention", true);
    if (!op)
        return TC_ERR_NOMEM;
    op->m = q->seq_q, op->n = q->seq_kv, op->k = q->head_dim, op->batch = q->batch * q->heads;
    op->time_us = pred.time_us;
    op->flops = pred.flops;
    op->source = pred.source;
    op->bound = pred.bound;
    op->waves = pred.waves;
    op->occupancy = pred.occupancy;
    if (!q->backward)
        dc->layer_fwd_us += op->time_us, dc->layer_fwd_ops++;
    return TC_OK;
}

/* Attention of b sequences: sq queries over skv keys (sq = skv in
 * training and prefill; sq = 1 over the cache in a decode step). */
static int attention_ops(struct decomp *dc, int64_t b, int64_t sq, int64_t skv)
{
    const struct tc_model_config *c = dc->c;
    int64_t heads = c->heads / c->tp;
    int64_t kv_heads = c->kv_heads >= c->tp ? c->kv_heads / c->tp : 1;
    struct tc_attention_query q = {
        .impl = c->attention,
        .dtype = c->dtype,
        .batch = b,
        .heads = heads,
        .kv_heads = kv_heads,
        .seq_q = sq,
        .seq_kv = skv,
        .head_dim = c->head_dim,
        .causal = c->causal && sq > 1,
    };
    int err;

    if (c->attention == TC_ATTN_UNFUSED) {
        double e = tc_dtype_bytes(c->dtype);
        double scores_bytes = (double)b * (double)heads * (double)sq * (double)skv * e;
        int64_t bh = b * heads, s = sq;

        if (kv_heads < heads) {
            double kv_bytes =
                (double)b * (double)skv * (double)c->head_dim * e * (double)(heads + kv_heads) * 2;
            err = elementwise_op(dc, "kv_expand", true, kv_bytes);
            if (err < 0)
                return err;
        }
        err = gemm_op(dc, "scores", true, sq, skv, c->head_dim, bh, TC_LAYOUT_NT);
        /* Hugging Face's eager attention (transformers' modeling_gpt2.py
         * GPT2Attention._attn, modeling_bert.py BertSelfAttention,
         * modeling_opt.py OPTAttention) runs two element-wise kernels over
         * the scores before the softmax, each reading and writing all of
         * them: GPT-2 divides by sqrt(head_dim) and applies the causal mask
         * with torch.where; BERT divides and adds the extended mask; OPT
         * (its query scaled before the bmm) adds the causal mask and clamps
         * with torch.max. Megatron fuses both into its softmax kernel. */
        if (err == TC_OK && c->attention_eager)
            err = elementwise_op(dc, "scores_scale", true,
                                 tc_memop_passes(TC_MEMOP_UNARY) * scores_bytes);
        if (err == TC_OK && c->attention_eager)
            err = elementwise_op(dc, "scores_mask", true,
                                 tc_memop_passes(TC_MEMOP_UNARY) * scores_bytes);
        if (err == TC_OK)
            err = elementwise_op(dc, "softmax", true,
                                 tc_memop_passes(TC_MEMOP_SOFTMAX) * scores_bytes);
        /* the probabilities' dropout, a module of its own in Hugging Face's
         * attention (BertSelfAttention.dropout, GPT2Attention.attn_dropout,
         * OPTAttention's functional dropout) and in Megatron's CoreAttention
         * (attention_dropout after the fused softmax); the fused kernels
         * drop inside (FlashAttention's dropout_p) and get nothing here */
        if (err == TC_OK)
            err = dropout_op(dc, "attn_dropout", c->attention_dropout, scores_bytes / e);
        if (err == TC_OK)
            err = gemm_op(dc, "values", true, sq, c->head_dim, skv, bh, TC_LAYOUT_NN);
        /* The bmm leaves the context as [b.heads, s, d]; the projection
         * wants [s, b, h] (Megatron) or [b, s, h]: Megatron-LM's
         * CoreAttention and GPT-NeoX's ParallelSelfAttention run
         * context_layer.permute(2, 0, 1, 3).contiguous(), Hugging Face
         * permute(0, 2, 1, 3).contiguous() (GPT-2's _merge_heads, BERT) or
         * transpose(1, 2).reshape (OPT): one copy kernel over the context. */
        if (err == TC_OK)
            err = elementwise_op(dc, "context_copy", true,
                                 2 * (double)b * (double)sq * (double)heads * (double)c->head_dim *
                                     e);
        if (err == TC_OK && c->training) {
            err = gemm_op(dc, "scores.dgrad_q", true, s, c->head_dim, s, bh, TC_LAYOUT_NN);
            if (err == TC_OK)
                err = gemm_op(dc, "scores.dgrad_k", true, s, c->head_dim, s, bh, TC_LAYOUT_TN);
            if (err == TC_OK)
                err = gemm_op(dc, "values.dgrad_p", true, s, s, c->head_dim, bh, TC_LAYOUT_NT);
            if (err == TC_OK)
                err = gemm_op(dc, "values.dgrad_v", true, s, c->head_dim, s, bh, TC_LAYOUT_TN);
        }
        return err;
    }
    err = fused_attention_op(dc, "attention", &q);
    if (err == TC_OK && c->training) {
        q.backward = true;
        err = fused_attention_op(dc, "attention.bwd", &q);
    }
    return err;
}

/* Full activation recomputation (Megatron-LM's --recompute-granularity
 * full, torch.utils.checkpoint per layer; Korthikanti et al. 2022, section
 * 4.1): the backward of each layer first runs its forward again from the
 * stored input, every kernel and every module call of it. */
static int recompute_op(struct decomp *dc)
{
    struct tc_op_prediction *op = op_new(&dc->list, "recompute", "recompute", true);

    if (!op)
        return TC_ERR_NOMEM;
    op->time_us = dc->layer_fwd_us;
    dc->layer_extra_ops += dc->layer_fwd_ops - 1;
    dc->layer_linears *= 2;
    return TC_OK;
}

/* The once-per-step work of a training step beyond forward and backward.
 * - The optimizer step: Adam over this GPU's parameters (its stage's, 1/t
 *   of them, 1/dp of those under ZeRO 1-3), a memory-bound sweep (Apex's
 *   and PyTorch's fused multi-tensor Adam): it reads the fp32 master
 *   weight, momentum and variance (12 bytes) and the 16-bit gradient (2),
 *   writes the three back (12) and the 16-bit weight (2): 28 bytes per
 *   parameter; fp32 training reads the weight (its own master), gradient,
 *   m and v (16) and writes weight, m and v (12): 28 too.
 * - With dp > 1 the gradients are reduced over the replicas: PyTorch DDP
 *   all-reduces them in 25 MB buckets while the backward runs (Li et al.,
 *   "PyTorch Distributed", VLDB 2020, sections 3.2.3 and 3.2.4; the default
 *   bucket_cap_mb); ZeRO 1 and 2 move the same volume as a reduce-scatter
 *   and an all-gather of the weights, ZeRO 3 1.5 times it (Rajbhandari et
 *   al., section 7; taken as an all-reduce of 1.5 times the bytes), each
 *   bucket timed as NCCL times it (collective.c). What the backward hides
 *   is lost: the exposed time is what exceeds the backward's, and at least
 *   the last bucket, which starts when the backward ends. With
 *   micro-batches the reduction waits for the last one (DDP's no_sync for
 *   the others), so only the last micro-batch's backward on this stage
 *   hides it. The replicas are tp ranks apart: a node of gpus_per_node GPUs
 *   holds gpus_per_node / tp of them, and a larger group reduces across
 *   nodes at the network's rate. */
static int train_step_ops(struct decomp *dc)
{
    const struct tc_model_config *c = dc->c;
    double e = tc_dtype_bytes(c->dtype), dp = (double)c->dp;
    double params = stage_params(c) / (double)c->tp;
    double bucket = 25e6, grads = params * e, volume = c->zero_stage >= 3 ? 1.5 : 1.0;
    double buckets, rest, total_us, last_us, layer_us = 0, backward_us;
    int64_t nodes = group_nodes(&dc->cluster, c->dp, c->tp);
    double nic = dc->cluster.nic_gbps;
    struct tc_op_prediction *op;
    int err;

    dc->step_ops = dc->list.n;
    err = memory_op(dc, "optimizer", false, 28.0 * params / (c->zero_stage >= 1 ? dp : 1), 1);
    if (err < 0 || c->dp <= 1)
        return err;
    op = op_new(&dc->list, "dp_allreduce", "allreduce", false);
    if (!op)
        return TC_ERR_NOMEM;
    for (size_t i = 0; i < dc->list.n; i++)
        if (dc->list.ops[i].in_layer)
            layer_us += dc->list.ops[i].time_us;
    backward_us = (double)c->layers / (double)c->pp * (layer_us - dc->layer_fwd_us);
    buckets = floor(grads / bucket);
    rest = grads - buckets * bucket;
    total_us = buckets * tc_collective_nodes_us(dc->gpu, TC_COLL_ALLREDUCE, c->dp, nodes, nic,
                                                volume * bucket) +
               tc_collective_nodes_us(dc->gpu, TC_COLL_ALLREDUCE, c->dp, nodes, nic, volume * rest);
    last_us = tc_collective_nodes_us(dc->gpu, TC_COLL_ALLREDUCE, c->dp, nodes, nic,
                                     volume * fmin(grads, bucket));
    op->m = (int64_t)grads;
    op->time_us = fmax(total_us - backward_us, last_us);
    return TC_OK;
}

/* A micro-batch's passage from one pipeline stage to the next: its
 * activations forward and, in training, their gradient backward, each a
 * point-to-point send (collective.c). Under tensor parallelism every rank
 * holds the whole activation; Megatron-LM's scatter/gather optimization
 * (Narayanan et al., SC 2021, section 4.1) sends 1/t of it from each rank
 * and all-gathers it over the receiving stage's tp GPUs. The stages are
 * tp x dp ranks apart: a boundary crosses nodes once tp x dp x pp GPUs
 * fill more than one node. */
static int p2p_op(struct decomp *dc, double act_bytes)
{
    const struct tc_model_config *c = dc->c;
    int passes = c->training ? 2 : 1;
    bool across = c->tp * c->dp * (int64_t)c->pp > dc->cluster.gpus_per_node;
    struct tc_op_prediction *op = op_new(&dc->list, "pp_send", "p2p", false);
    double bytes = act_bytes / (double)c->tp, t;
    int err;

    if (!op)
        return TC_ERR_NOMEM;
    err = set_op_bytes(op, bytes);
    if (err < 0)
        return err;
    dc->p2p_op = dc->list.n - 1;
    t = tc_p2p_us(dc->gpu, across, dc->cluster.nic_gbps, bytes);
    if (c->tp > 1)
        t += tc_collective_nodes_us(dc->gpu, TC_COLL_ALLGATHER, c->tp,
                                    group_nodes(&dc->cluster, c->tp, 1), dc->cluster.nic_gbps,
                                    act_bytes);
    op->time_us = passes * t;
    return TC_OK;
}

static int head_ops(struct decomp *dc, int64_t tokens, double act_bytes, double norm_bytes);

static int decompose(struct decomp *dc)
{
    const struct tc_model_config *c = dc->c;
    int64_t t = c->tp, h = c->hidden, d = c->head_dim;
    /* A decode step runs one new token per sequence. */
    int64_t tokens = dc->decode_ctx ? c->micro_batch : c->micro_batch * c->seq;
    double e = tc_dtype_bytes(c->dtype);
    double act_bytes = (double)tokens * (double)h * e, norm_bytes;
    int64_t qkv_n = (c->heads + 2 * c->kv_heads) * d / t;
    int64_t ffn_t = c->ffn / t;
    int err;

    /* each factor is bounded by its key, their product is not */
    if (tokens > TC_BOUND_DIM_MAX)
        return tc_error(TC_ERR_RANGE,
                        "micro_batch.seq = %lld tokens (micro_batch %lld, seq %lld) is over the "
                        "2^40 limit of a GEMM dimension",
                        (long long)tokens, (long long)c->micro_batch, (long long)c->seq);

    /* Norms, residual adds, activations and the softmax make the passes
     * over their tensors that memop.c gives (tc_memop_passes): what
     * `tilecast eval --elementwise` scores. */
    norm_bytes = tc_memop_passes(c->rmsnorm ? TC_MEMOP_RMSNORM : TC_MEMOP_LAYERNORM) * act_bytes;
    err = elementwise_op(dc, c->rmsnorm ? "rmsnorm1" : "layernorm1", true, norm_bytes);
    if (err == TC_OK)
        err = linear_ops(dc, "qkv", true, tokens, qkv_n, h);
    if (err == TC_OK && dc->decode_ctx) {
        /* append this token's K and V to the cache */
        int64_t kv_width = c->kv_heads * d / t; /* this GPU's K (or V) columns */
        double kv_bytes = (double)c->micro_batch * 2.0 * (double)kv_width * e;
        err = memory_op(dc, "kv_cache_append", true, 2 * kv_bytes, 1);
    }
    if (err == TC_OK && c->rope) {
        /* rotary embeddings (Su et al. 2021; Llama, GPT-NeoX): one kernel
         * rotates this GPU's q and k heads in place (vLLM's
         * rotary_embedding op; the fused apply_rotary_pos_emb of Megatron
         * and Hugging Face's rotate_half on the same tensors), reading and
         * writing them; the cos/sin cache it reads is small */
        /* this GPU's heads: q split over t, K replicated below t heads as
         * attention_ops takes them */
        int64_t qk_heads = c->heads / t + (c->kv_heads >= t ? c->kv_heads / t : 1);
        double qk_bytes = (double)tokens * (double)qk_heads * (double)d * e;

        err = elementwise_op(dc, "rope", true, tc_memop_passes(TC_MEMOP_UNARY) * qk_bytes);
    }
    if (err == TC_OK)
        err = attention_ops(dc, c->micro_batch, dc->decode_ctx ? 1 : c->seq,
                            dc->decode_ctx ? dc->decode_ctx + 1 : c->seq);
    if (err == TC_OK)
        err = linear_ops(dc, "proj", true, tokens, h, c->heads * d / t);
    if (err == TC_OK)
        err = allreduce_op(dc, "tp_allreduce1", act_bytes);
    /* The hidden dropouts after the attention block and the MLP, each a
     * kernel of its own in Hugging Face's modules (BertSelfOutput and
     * BertOutput, GPT2Attention.resid_dropout and GPT2MLP.dropout,
     * OPTDecoderLayer's two functional dropouts): the configs with
     * attention: eager. Megatron fuses them into its bias-dropout-add
     * (bias_dropout_add_fused_train), one kernel with the residual add,
     * whose mask, a byte an element each way, is left out. */
    if (err == TC_OK && c->attention_eager)
        err = dropout_op(dc, "dropout1", c->dropout, act_bytes / e);
    if (err == TC_OK)
        err = elementwise_op(dc, "residual1", true, tc_memop_passes(TC_MEMOP_BINARY) * act_bytes);
    if (err == TC_OK)
        err = elementwise_op(dc, c->rmsnorm ? "rmsnorm2" : "layernorm2", true, norm_bytes);
    if (err == TC_OK)
        err = linear_ops(dc, "mlp_up", true, tokens, c->swiglu ? 2 * ffn_t : ffn_t, h);
    if (err == TC_OK) {
        /* GeLU: read and write the ffn activations; SwiGLU reads gate and
         * up (2·ffn) and writes ffn. Hugging Face's NewGELUActivation
         * (activations.py: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715
         * * pow(x, 3))))) runs in eager PyTorch as eight kernels, one an
         * operator: 0.5 * x, pow, the two scalings, the add of x, tanh, the
         * add of 1 and the last product; the adds and the product read two
         * tensors, the others one, and each writes one: 18 passes over the
         * activations where a fused GeLU makes 2. */
        double ffn_bytes = (double)tokens * (double)ffn_t * e;

        if (c->gelu_new)
            err = gelu_new_ops(dc, ffn_bytes);
        else
            err = elementwise_op(dc, c->swiglu ? "swiglu" : "gelu", true,
                                 tc_memop_passes(c->swiglu ? TC_MEMOP_BINARY : TC_MEMOP_UNARY) *
                                     ffn_bytes);
    }
    if (err == TC_OK)
        err = linear_ops(dc, "mlp_down", true, tokens, h, ffn_t);
    if (err == TC_OK)
        err = allreduce_op(dc, "tp_allreduce2", act_bytes);
    if (err == TC_OK && c->attention_eager)
        err = dropout_op(dc, "dropout2", c->dropout, act_bytes / e);
    if (err == TC_OK)
        err = elementwise_op(dc, "residual2", true, tc_memop_passes(TC_MEMOP_BINARY) * act_bytes);
    if (err == TC_OK && c->training && c->recompute)
        err = recompute_op(dc);
    if (err == TC_OK && c->vocab > 0)
        err = head_ops(dc, tokens, act_bytes, norm_bytes);
    if (err == TC_OK && c->pp > 1)
        err = p2p_op(dc, act_bytes);
    if (err == TC_OK && c->training)
        err = train_step_ops(dc);
    return err;
}

/* Once per micro-batch: the embedding gather, the final norm, the logits
 * GEMM and the loss over the logits. The logits are vocabulary-parallel as
 * Megatron-LM computes them (Shoeybi et al. 2019, section 3; its
 * VocabParallelEmbedding and ColumnParallelLinear output layer) and vLLM
 * too (ParallelLMHead): each GPU multiplies by v/t columns of the output
 * matrix (the vocabulary padded to a multiple of t, as Megatron pads
 * it). Training takes the cross-entropy on the split logits
 * (vocab_parallel_cross_entropy: all-reduces of b·s floats, left out);
 * inference gathers the logits for the sampler, a ring all-gather of
 * b·s×v. A serving engine's prefill needs the next token of each
 * sequence only: vLLM's sampler keeps the last prompt position of each
 * sequence (_prune_hidden_states) before the logits GEMM, so that GEMM
 * has b rows, not b·s. The embedding runs on a pipeline's first stage,
 * the rest on its last. */
static int head_ops(struct decomp *dc, int64_t tokens, double act_bytes, double norm_bytes)
{
    const struct tc_model_config *c = dc->c;
    int64_t t = c->tp;
    double e = tc_dtype_bytes(c->dtype);
    int64_t rows, vocab_t;
    int err;

    rows = c->serving && !c->training ? c->micro_batch : tokens;
    vocab_t = (c->vocab + t - 1) / t;
    err = elementwise_op(dc, "embedding", false, 2 * act_bytes);
    if (err == TC_OK)
        err =
            elementwise_op(dc, c->rmsnorm ? "rmsnorm_final" : "layernorm_final", false, norm_bytes);
    if (err == TC_OK && c->num_labels > 0) {
        /* a sequence classifier (transformers' BertForSequenceClassification):
         * BertPooler's dense layer and tanh on each sequence's first token,
         * then the classifier's n labels, each replicated on the tp GPUs;
         * training takes the cross-entropy of b x n logits */
        double b = (double)c->micro_batch, h = (double)c->hidden;

        err = linear_ops(dc, "pooler", false, c->micro_batch, c->hidden, c->hidden);
        if (err == TC_OK)
            err = elementwise_op(dc, "pooler_tanh", false,
                                 tc_memop_passes(TC_MEMOP_UNARY) * b * h * e);
        if (err == TC_OK)
            err = linear_ops(dc, "classifier", false, c->micro_batch, c->num_labels, c->hidden);
        if (err == TC_OK && c->training)
            err = memory_op(dc, "loss", false, b * (double)c->num_labels * e * 2, 1);
        return err;
    }
    if (err == TC_OK)
        err = linear_ops(dc, "logits", false, rows, vocab_t, c->hidden);
    if (err == TC_OK && !c->training && t > 1)
        err = collective_op(dc, "logits_gather", TC_COLL_ALLGATHER, false,
                            (double)rows * (double)c->vocab * e);
    if (err == TC_OK && c->training)
        /* softmax cross-entropy: reads the logits, writes their gradient */
        err = memory_op(dc, "loss", false, (double)tokens * (double)vocab_t * e * 2, 1);
    return err;
}

TC_API void tc_model_prediction_free(struct tc_model_prediction *mp)
{
    if (!mp)
        return;
    free(mp->ops);
    free(mp);
}

/* A serving engine's work of one step outside the model's forward, in us:
 * the scheduler, the preparation of the inputs (positions, slot mapping,
 * block tables, copied to the GPU), the sampler (its kernels and the copy of
 * the tokens back to the host, which waits for the forward), the processing
 * of the outputs (detokenisation, stop checks) and, with tensor
 * parallelism, the driver's RPC to its worker processes (Ray in vLLM
 * before 0.4). vLLM's engine step runs them one after the other around the
 * forward, so they add to it. Vidur (Agrawal et al., MLSys 2024) measured
 * each of them for vLLM's fork Sarathi on a DGX-A100
 * (data/profiling/a100/cpu_overheads.csv, medians per step): for
 * Llama-2-70B at TP 4 their sum grows from 5.6 ms at batch 8 to 17.7 ms at
 * batch 64, a least-squares line of 3.4 ms + 0.23 ms per sequence (TP 2:
 * 5.0 to 8.6 ms at batch 8-32, the same line within 0.6 ms); Llama-2-7B on
 * one GPU, without RPC, sums to 2.1-8.1 ms at batch 8-64: 1.3 ms + 0.11 ms
 * per sequence. A faster host takes less. */
static double serving_engine_us(const struct tc_model_config *c)
{
    double b = (double)c->micro_batch;

    if (c->tp > 1)
        return 3400.0 + 230.0 * b;
    return 1300.0 + 110.0 * b;
}

/* The nodes the config's GPUs fill and whether a group that crosses them
 * has a network to cross with. */
static int check_cluster(const struct tc_gpu *gpu, const struct tc_model_config *c,
                         const struct tc_cluster *cl, int64_t *nodes)
{
    int64_t gpus = c->tp * c->dp * (int64_t)c->pp;
    bool across = group_nodes(cl, c->tp, 1) > 1 ||
                  (c->training && group_nodes(cl, c->dp, c->tp) > 1) ||
                  (c->pp > 1 && gpus > cl->gpus_per_node);

    *nodes = (gpus + cl->gpus_per_node - 1) / cl->gpus_per_node;
    if (across && !(cl->nic_gbps > 0))
        return tc_error(TC_ERR_UNSUPPORTED,
                        "%s: tp %lld x pp %d x dp %lld = %lld GPUs fill %lld nodes of %lld, and "
                        "no network joins them: its spec names no reference system (give the "
                        "network adapter's rate per GPU, --nic-gbps, struct tc_cluster)",
                        gpu->id, (long long)c->tp, c->pp, (long long)c->dp, (long long)gpus,
                        (long long)*nodes, (long long)cl->gpus_per_node);
    if ((c->pp > 1 || c->tp > 1 || (c->training && c->dp > 1)) &&
        !(gpu->interconnect.bw_gbps > 0) && cl->gpus_per_node > 1)
        return tc_error(TC_ERR_UNSUPPORTED,
                        "%s: its spec gives no interconnect, over which tensor (tp %lld), "
                        "pipeline (pp %d) and data parallelism (dp %lld) move their data "
                        "(interconnect.bw_gbps, gpu_specs/README.md)",
                        gpu->id, (long long)c->tp, c->pp, (long long)c->dp);
    return TC_OK;
}

static int predict_common(struct tc_predictor *p, const struct tc_gpu *gpu,
                          struct tc_gemm_memo *memo, const struct tc_model_config *cfg,
                          const struct tc_cluster *cluster, int64_t decode_ctx,
                          struct tc_model_prediction **out)
{
    struct tc_model_config c;
    struct decomp dc = {.p = p,
                        .gpu = gpu,
                        .memo = memo,
                        .c = &c,
                        .decode_ctx = decode_ctx,
                        .step_ops = SIZE_MAX,
                        .p2p_op = SIZE_MAX};
    struct tc_model_prediction *mp = NULL;
    double layer_flops = 0, head_flops = 0, first_us = 0, last_us = 0, step_us = 0, p2p_us = 0;
    double layers, stage_layers, micro, t_max, t_sum;
    size_t layer_ops = 0, first_ops = 0, last_ops = 0, step_ops = 0;
    int64_t nodes;
    int err;

    if (!gpu || !cfg || !out)
        return tc_error(TC_ERR_INVALID, "tc_predict_model: no GPU, config or output");
    *out = NULL;
    c = *cfg;
    err = tc_model_config_resolve(&c);
    if (err < 0)
        return err;
    if (decode_ctx)
        c.training = false;
    if (cluster)
        dc.cluster = *cluster;
    tc_cluster_default(gpu, &dc.cluster);
    /* the collectives' bandwidth is the spec's (gpu_specs interconnect:) */
    err = check_cluster(gpu, &c, &dc.cluster, &nodes);
    if (err < 0)
        return err;
    if (gpu->peak_tflops[c.dtype] <= 0)
        return tc_error(TC_ERR_UNSUPPORTED,
                        "%s does not support %s (predict it in another dtype: --dtype)", gpu->id,
                        tc_dtype_name(c.dtype));
    err = decompose(&dc);
    if (err < 0)
        goto cleanup;
    mp = calloc(1, sizeof(*mp));
    if (!mp) {
        err = tc_error(TC_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    mp->source = TC_SOURCE_MEASURED;
    /* Each op by where it runs: in every layer, on the first stage (the
     * embedding) or the last (the rest of the head), once per step (the
     * optimizer and the gradient all-reduce), or between the stages. */
    for (size_t i = 0; i < dc.list.n; i++) {
        struct tc_op_prediction *op = &dc.list.ops[i];

        op->tflops = op->time_us > 0 ? op->flops / op->time_us / 1e6 : 0;
        if (op->in_layer) {
            mp->layer_time_us += op->time_us;
            layer_flops += op->flops;
            layer_ops++;
        } else if (i == dc.p2p_op) {
            p2p_us = op->time_us;
        } else {
            mp->head_time_us += op->time_us;
            head_flops += op->flops;
            if (i >= dc.step_ops)
                step_us += op->time_us, step_ops++;
            else if (strcmp(op->name, "embedding") == 0)
                first_us += op->time_us, first_ops++;
            else
                last_us += op->time_us, last_ops++;
        }
        if (op->source > mp->source)
            mp->source = op->source;
    }
    /* Megatron-LM's 1F1B schedule (Narayanan et al., SC 2021, section
     * 2.2.1): the first micro-batch passes every stage and boundary (the
     * fill and the drain), and each further one adds the slowest stage's
     * time, its sends blocking it (Megatron's send_forward_recv_backward).
     * Without a pipeline the micro-batches run one after the other
     * (gradient accumulation). The once-per-step ops come last. */
    layers = (double)c.layers;
    stage_layers = (double)c.layers / (double)c.pp; /* pp divides layers */
    micro = (double)c.microbatches;
    t_sum = layers * mp->layer_time_us + first_us + last_us;
    t_max = c.pp > 1 ? stage_layers * mp->layer_time_us + fmax(first_us, last_us) : t_sum;
    mp->stage_time_us = t_max + p2p_us;
    mp->p2p_us = p2p_us;
    mp->nodes = nodes;
    mp->gpu_time_us =
        (micro - 1) * mp->stage_time_us + t_sum + (double)(c.pp - 1) * p2p_us + step_us;
    mp->bubble_us = mp->gpu_time_us - step_us - micro * mp->stage_time_us;
    /* Eager execution: the host dispatches each op of each layer through
     * PyTorch (and the serving engine's Python) while the GPU runs what it
     * was given; when the ops are short (decode, small prefill, high TP)
     * the GPU waits for the host. A PyTorch op's dispatch is the typical
     * host cost of an event-timed op call (28 us: the data's two hosts fit
     * 21.7 and 36.5 us for a plain GEMM call, calibrate-timing.c). With CUDA graphs the step is one
     * launch a micro-batch. Splitwise's Llama-2-70B on A100 (e2e_serving) shows the floor:
     * the time per token barely falls from TP 4 to TP 8 (45.0 and 44.9 ms
     * at batch 1) while the GPU's share falls by half. Each stage's host
     * dispatches its own ops. */
    {
        double per_op = tc_timing_default_host_us(TC_TIMING_EVENT);
        /* A linear layer is a module (nn.Linear in Hugging Face models,
         * vLLM's Column/RowParallelLinear): its call runs the module's
         * __call__ and F.linear before the kernel, the longer host path the
         * data's event-timed hosts show for nn.Linear over a plain op, 23 us
         * (tc_timing_op_extra_us, calibrate-timing.c). Once per forward
         * call; the backward GEMMs are dispatched by autograd, not by a
         * module. */
        double linear_extra = tc_timing_op_extra_us(TC_TIMING_EVENT, TC_GEMM_OP_LINEAR);
        double layer_host = (double)(layer_ops + (size_t)dc.layer_extra_ops) * per_op +
                            (double)dc.layer_linears * linear_extra;
        double first_host = (double)first_ops * per_op;
        double last_host = (double)last_ops * per_op + (double)dc.head_linears * linear_extra;
        double stage_host = c.pp > 1 ? stage_layers * layer_host + fmax(first_host, last_host)
                                     : layers * layer_host + first_host + last_host;

        mp->host_time_us =
            c.graphs ? micro * per_op : micro * stage_host + (double)step_ops * per_op;
    }
    mp->step_time_us = mp->gpu_time_us > mp->host_time_us ? mp->gpu_time_us : mp->host_time_us;
    if (c.serving && !c.training) {
        mp->engine_time_us = serving_engine_us(&c);
        mp->step_time_us += mp->engine_time_us;
    }
    /* never an infinite or NaN answer, whatever the inputs let through */
    for (size_t i = 0; i < dc.list.n && err == TC_OK; i++)
        if (!isfinite(dc.list.ops[i].time_us) || dc.list.ops[i].time_us < 0)
            err = tc_bound_check_prediction(dc.list.ops[i].name, dc.list.ops[i].time_us, 0, 0);
    if (err == TC_OK)
        err = tc_bound_check_prediction("the step", mp->step_time_us, 0, 0);
    if (err < 0)
        goto cleanup;
    for (size_t i = 0; i < dc.list.n; i++) {
        struct tc_op_prediction *op = &dc.list.ops[i];
        double whole = op->in_layer ? mp->layer_time_us : mp->step_time_us;
        op->share = whole > 0 ? op->time_us / whole : 0;
    }
    /* Each of the t GPUs does 1/t of a layer and of the (padded) logits,
     * once per micro-batch; the pp stages share the layers. */
    mp->step_flops = (double)c.tp * micro * (layers * layer_flops + head_flops);
    mp->tokens_per_s =
        micro * (double)(c.micro_batch * (decode_ctx ? 1 : c.seq)) / (mp->step_time_us * 1e-6);
    mp->model_tflops = mp->step_flops / (double)(c.tp * c.pp) / mp->step_time_us / 1e6;
    mp->mfu = mp->model_tflops / gpu->peak_tflops[c.dtype];
    mp->params = tc_model_params(&c);
    mp->ops = dc.list.ops;
    mp->n_ops = dc.list.n;
    dc.list.ops = NULL;
    *out = mp;
    mp = NULL;
cleanup:
    free(dc.list.ops);
    tc_model_prediction_free(mp);
    return err;
}

int tc_model_predict_memo(struct tc_predictor *p, const struct tc_gpu *gpu,
                          struct tc_gemm_memo *memo, const struct tc_model_config *cfg,
                          const struct tc_cluster *cluster, struct tc_model_prediction **out)
{
    return predict_common(p, gpu, memo, cfg, cluster, 0, out);
}

int tc_cluster_check(const struct tc_cluster *cluster)
{
    if (cluster && (cluster->gpus_per_node < 0 || cluster->gpus_per_node > (1 << 20) ||
                    !(cluster->nic_gbps >= 0 && cluster->nic_gbps <= 1e6)))
        return tc_error(TC_ERR_RANGE,
                        "cluster: gpus_per_node %lld must be in [1, 1048576] and nic_gbps %g in "
                        "(0, 1e6] GB/s (0: the defaults)",
                        (long long)cluster->gpus_per_node, cluster->nic_gbps);
    return TC_OK;
}

TC_API int tc_predict_model_on(struct tc_predictor *p, const struct tc_gpu *gpu,
                               const struct tc_model_config *cfg, const struct tc_cluster *cluster,
                               int64_t decode_context, struct tc_model_prediction **out)
{
    int err;

    if (decode_context < 0 || decode_context > (1 << 24))
        return tc_error(TC_ERR_RANGE, "decode: context %lld is outside [1, 16777216] tokens",
                        (long long)decode_context);
    if (decode_context && cfg && cfg->num_labels > 0)
        return tc_error(TC_ERR_INVALID,
                        "decode: num_labels %lld makes the model a sequence classifier, which "
                        "generates no tokens",
                        (long long)cfg->num_labels);
    err = tc_cluster_check(cluster);
    if (err < 0)
        return err;
    return predict_common(p, gpu, NULL, cfg, cluster, decode_context, out);
}

TC_API int tc_predict_decode(struct tc_predictor *p, const struct tc_gpu *gpu,
                             const struct tc_model_config *cfg, int64_t context,
                             struct tc_model_prediction **out)
{
    if (context <= 0)
        return tc_error(TC_ERR_RANGE, "decode: context %lld is outside [1, 16777216] tokens",
                        (long long)context);
    return tc_predict_model_on(p, gpu, cfg, NULL, context, out);
}

TC_API int tc_predict_model(struct tc_predictor *p, const struct tc_gpu *gpu,
                            const struct tc_model_config *cfg, struct tc_model_prediction **out)
{
    return tc_predict_model_on(p, gpu, cfg, NULL, 0, out);
}
