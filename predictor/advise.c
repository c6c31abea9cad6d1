/* The shape advisor: enumerates nearby transformer shapes within a
 * parameter-count tolerance, predicts each through the layer/model
 * decomposition (GEMM predictions shared through a memo), ranks them (the
 * fewest changed knobs first, then by speedup: tokens/s per GPU at the same
 * work per token) and explains each gain by the GEMM mechanism behind it
 * and the paper's guideline it satisfies. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model-internal.h"

struct int_set {
    int64_t v[256];
    size_t n;
};

static void set_add(struct int_set *s, int64_t x)
{
    if (x <= 0)
        return;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == x)
            return;
    if (s->n < TC_ARRAY_SIZE(s->v))
        s->v[s->n++] = x;
}

static int64_t round_up(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

static int64_t round_near(int64_t x, int64_t m)
{
    return (x + m / 2) / m * m;
}

/* Largest power of two dividing x (x > 0). */
static int64_t pow2_of(int64_t x)
{
    return x & -x;
}

struct search {
    struct tc_predictor *p;
    const struct tc_gpu *gpu;
    struct tc_gemm_memo *memo;
    const struct tc_cluster *cluster; /* NULL: the GPU's default nodes */
    struct tc_model_config base;
    struct tc_model_prediction *base_pred;
    double base_params, base_tps_gpu, tol;
    struct tc_advice_candidate *cands;
    size_t n, cap;
    size_t n_evaluated;
};

/* The knobs a candidate turns, one bit each; kv_heads and head_dim follow
 * from the head count and the hidden size, so they are no knobs of their
 * own. */
static unsigned changed_knobs(const struct tc_model_config *c, const struct tc_model_config *b)
{
    return (unsigned)(c->hidden != b->hidden) | (unsigned)(c->heads != b->heads) << 1 |
           (unsigned)(c->ffn != b->ffn) << 2 | (unsigned)(c->vocab != b->vocab) << 3 |
           (unsigned)(c->micro_batch != b->micro_batch) << 4 | (unsigned)(c->tp != b->tp) << 5;
}

static int count_bits(unsigned x)
{
    int n = 0;

    for (; x; x &= x - 1)
        n++;
    return n;
}

static bool same_shape(const struct tc_model_config *a, const struct tc_model_config *b)
{
    return a->hidden == b->hidden && a->heads == b->heads && a->kv_heads == b->kv_heads &&
           a->head_dim == b->head_dim && a->ffn == b->ffn && a->vocab == b->vocab &&
           a->micro_batch == b->micro_batch && a->tp == b->tp;
}

static const char *align_text(enum tc_align a)
{
    switch (a) {
    case TC_ALIGN_128B:
        return "128-byte";
    case TC_ALIGN_16B:
        return "16-byte";
    case TC_ALIGN_4B:
        return "4-byte";
    default:
        return "element";
    }
}

/* The op whose time fell the most (per token and GPU, so that a larger
 * micro-batch or another tensor-parallel degree compares fairly) and the
 * mechanism its GEMM prediction shows for it. An op the candidate no
 * longer has (the all-reduce at t = 1) saves all of its time. */
static size_t explain_mechanism(const struct search *s, const struct tc_model_config *c,
                                const struct tc_model_prediction *mp, char *buf, size_t len)
{
    const struct tc_model_prediction *bp = s->base_pred;
    const struct tc_op_prediction *best = NULL, *best_base = NULL;
    double best_saving = 0;
    double base_scale = (double)s->base.tp / (double)s->base.micro_batch;
    double cand_scale = (double)c->tp / (double)c->micro_batch;

    for (size_t j = 0; j < bp->n_ops; j++) {
        const struct tc_op_prediction *bo = &bp->ops[j], *op = NULL;
        double saving;

        for (size_t i = 0; i < mp->n_ops && !op; i++)
            if (strcmp(mp->ops[i].name, bo->name) == 0)
                op = &mp->ops[i];
        saving = bo->time_us * (bo->in_layer ? (double)s->base.layers : 1.0) * base_scale;
        if (op)
            saving -= op->time_us * (op->in_layer ? (double)c->layers : 1.0) * cand_scale;
        if (saving > best_saving) {
            best_saving = saving;
            best = op;
            best_base = bo;
        }
    }
    if (best_base && !best)
        return (size_t)snprintf(buf, len, "mechanism: no %s any more (%s)",
                                strcmp(best_base->kind, "allreduce") == 0
                                    ? "tensor-parallel all-reduce"
                                    : best_base->kind,
                                best_base->name);
    if (!best)
        return (size_t)snprintf(buf, len, "mechanism: less work per token");
    if (strcmp(best->kind, "gemm") == 0 || strcmp(best->kind, "bmm") == 0) {
        if (best->align < best_base->align)
            return (size_t)snprintf(buf, len, "mechanism: %s GEMM tensor-core alignment %s -> %s",
                                    best->name, align_text(best_base->align),
                                    align_text(best->align));
        if (best->tile_eff > best_base->tile_eff + 0.01)
            return (size_t)snprintf(buf, len,
                                    "mechanism: %s GEMM tile quantization, useful tile area "
                                    "%.0f%% -> %.0f%%",
                                    best->name, 100 * best_base->tile_eff, 100 * best->tile_eff);
        if (best->wave_eff > best_base->wave_eff + 0.01)
            return (size_t)snprintf(buf, len,
                                    "mechanism: %s GEMM wave quantization, last wave %.0f%% -> "
                                    "%.0f%% full (%.2f -> %.2f waves)",
                                    best->name, 100 * best_base->wave_eff, 100 * best->wave_eff,
                                    best_base->waves, best->waves);
        if (best->occupancy > best_base->occupancy + 0.01)
            return (size_t)snprintf(buf, len, "mechanism: %s GEMM occupancy %.0f%% -> %.0f%%",
                                    best->name, 100 * best_base->occupancy, 100 * best->occupancy);
        return (size_t)snprintf(buf, len, "mechanism: %s GEMM %.0f -> %.0f TFLOP/s", best->name,
                                best_base->tflops, best->tflops);
    }
    if (strcmp(best->kind, "attention") == 0)
        return (size_t)snprintf(buf, len,
                                "mechanism: attention %.0f -> %.0f TFLOP/s (head dim "
                                "%lld -> %lld)",
                                best_base->tflops, best->tflops, (long long)s->base.head_dim,
                                (long long)c->head_dim);
    return (size_t)snprintf(buf, len, "mechanism: %s moves fewer bytes per token", best->name);
}

/* The paper's guidelines (paper-notes.md) this candidate satisfies and the
 * baseline did not. */
static size_t explain_guidelines(const struct tc_model_config *b, const struct tc_model_config *c,
                                 char *buf, size_t len)
{
    size_t used = 0;

#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (used < len)                                                                            \
            used += (size_t)snprintf(buf + used, len - used, __VA_ARGS__);                         \
    } while (0)

    if (c->vocab != b->vocab && c->vocab % 64 == 0 && b->vocab % 64 != 0)
        ADD("; guideline 1: vocabulary %lld divisible by 64", (long long)c->vocab);
    if (c->micro_batch > b->micro_batch)
        ADD("; guideline 2: larger micro-batch %lld (if memory allows)", (long long)c->micro_batch);
    if (pow2_of(c->head_dim) > pow2_of(b->head_dim) && pow2_of(b->head_dim) < 64)
        ADD("; guideline 3: h/a = %lld divisible by %lld", (long long)c->head_dim,
            (long long)(pow2_of(c->head_dim) > 64 ? 64 : pow2_of(c->head_dim)));
    if (pow2_of(c->hidden / c->tp) > pow2_of(b->hidden / b->tp) && pow2_of(b->hidden / b->tp) < 64)
        ADD("; guideline 3: h/t = %lld divisible by %lld", (long long)(c->hidden / c->tp),
            (long long)pow2_of(c->hidden / c->tp));
    if (c->tp < b->tp)
        ADD("; guideline 5: smaller tensor-parallel degree %lld", (long long)c->tp);
    if (c->swiglu && c->ffn != b->ffn)
        ADD("; guideline 6: SwiGLU size %lld searched near 8/3*h = %lld", (long long)c->ffn,
            (long long)(8 * c->hidden / 3));
#undef ADD
    return used;
}

static void describe(const struct search *s, const struct tc_model_config *c,
                     const struct tc_model_prediction *mp, char *buf, size_t len)
{
    const struct tc_model_config *b = &s->base;
    size_t used = 0;

#define CHANGE(field, label)                                                                       \
    do {                                                                                           \
        if (c->field != b->field && used < len)                                                    \
            used += (size_t)snprintf(buf + used, len - used, "%s%s %lld->%lld", used ? ", " : "",  \
                                     label, (long long)b->field, (long long)c->field);             \
    } while (0)
    CHANGE(hidden, "h");
    CHANGE(heads, "a");
    CHANGE(kv_heads, "kv");
    CHANGE(ffn, "ffn");
    CHANGE(vocab, "v");
    CHANGE(micro_batch, "b");
    CHANGE(tp, "t");
#undef CHANGE
    if (used < len)
        used += (size_t)snprintf(buf + used, len - used, ": ");
    if (used < len)
        used += explain_mechanism(s, c, mp, buf + used, len - used);
    if (used < len)
        explain_guidelines(b, c, buf + used, len - used);
}

static int evaluate(struct search *s, const struct tc_model_config *c)
{
    struct tc_model_prediction *mp = NULL;
    struct tc_advice_candidate *cand;
    double params, tps_gpu, speedup;
    int err;

    params = tc_model_params(c);
    if (fabs(params / s->base_params - 1) > s->tol || same_shape(c, &s->base))
        return TC_OK;
    s->n_evaluated++;
    err = tc_model_predict_memo(s->p, s->gpu, s->memo, c, s->cluster, &mp);
    if (err < 0) {
        /* A shape this GPU or the model cannot run is no candidate. */
        if (err == TC_ERR_NOMEM)
            return err;
        return TC_OK;
    }
    tps_gpu = mp->tokens_per_s / (double)(c->tp * c->pp); /* resolved: pp >= 1 */
    /* Compare at the same parameter count: a token of a model with 3% fewer
     * parameters is 3% less work, not a speedup. */
    speedup = tps_gpu / s->base_tps_gpu * (params / s->base_params);
    if (speedup <= 1.001) {
        tc_model_prediction_free(mp);
        return TC_OK;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct tc_advice_candidate *cands = realloc(s->cands, cap * sizeof(*cands));
        if (!cands) {
            tc_model_prediction_free(mp);
            return tc_error(TC_ERR_NOMEM, "out of memory");
        }
        s->cands = cands;
        s->cap = cap;
    }
    cand = &s->cands[s->n++];
    memset(cand, 0, sizeof(*cand));
    cand->cfg = *c;
    cand->step_time_us = mp->step_time_us;
    cand->tokens_per_s_per_gpu = tps_gpu;
    cand->speedup = speedup;
    cand->params = params;
    cand->params_delta = params / s->base_params - 1;
    cand->changes = count_bits(changed_knobs(c, &s->base));
    describe(s, c, mp, cand->reason, sizeof(cand->reason));
    tc_model_prediction_free(mp);
    return TC_OK;
}

/* The baseline the comparator and the filter measure changes against
 * (qsort has no context argument in C11). Set by tc_advise before sorting. */
static _Thread_local const struct tc_model_config *sort_base;

static int n_guidelines(const char *reason)
{
    int n = 0;

    for (const char *p = reason; (p = strstr(p, "guideline ")); p++)
        n++;
    return n;
}

/* The fewest changed knobs first: the one-knob fix (pad the vocabulary) is
 * what a user can apply today, and a shape that also changes the head
 * count and the micro-batch must not hide it by being faster. Within a
 * number of knobs, strictly by speedup, the figure the output names. */
static int cmp_cand(const void *a, const void *b)
{
    const struct tc_advice_candidate *x = a, *y = b;
    int cx, cy;

    if (x->changes != y->changes)
        return x->changes < y->changes ? -1 : 1;
    if (x->speedup != y->speedup)
        return x->speedup < y->speedup ? 1 : -1;
    /* Then the one that follows more of the paper's guidelines: where the
     * model cannot tell two shapes apart, the measured rule of thumb can. */
    cx = n_guidelines(x->reason);
    cy = n_guidelines(y->reason);
    if (cx != cy)
        return cx > cy ? -1 : 1;
    if (fabs(x->params_delta) != fabs(y->params_delta))
        return fabs(x->params_delta) < fabs(y->params_delta) ? -1 : 1;
    return 0;
}

/* Keeps, in rank order, the best head count of each shape otherwise the
 * same (the same changed knobs and the same hidden, ffn, vocabulary,
 * micro-batch and tp): the many head counts that divide a hidden size
 * would otherwise fill the list. Vocabulary paddings stay apart: padding
 * to 64 is the paper's guideline and must be offered beside padding to 8
 * (the calibrated A100 model finds the two within 0.1% of a step), and
 * padding alone is never dropped for padding and halving the heads. */
static size_t keep_distinct(struct tc_advice_candidate *c, size_t n)
{
    size_t kept = 0;

    for (size_t i = 0; i < n; i++) {
        unsigned knobs = changed_knobs(&c[i].cfg, sort_base);
        bool dup = false;

        for (size_t j = 0; j < kept && !dup; j++)
            dup = changed_knobs(&c[j].cfg, sort_base) == knobs &&
                  c[j].cfg.hidden == c[i].cfg.hidden && c[j].cfg.ffn == c[i].cfg.ffn &&
                  c[j].cfg.vocab == c[i].cfg.vocab &&
                  c[j].cfg.micro_batch == c[i].cfg.micro_batch && c[j].cfg.tp == c[i].cfg.tp;
        if (!dup)
            c[kept++] = c[i];
    }
    return kept;
}

/* Candidate FFN sizes for hidden h: the baseline's ratio kept, and for
 * SwiGLU a search around 8/3·h at several alignments (guideline 6). */
static void ffn_candidates(const struct tc_model_config *b, int64_t h, struct int_set *out)
{
    int64_t scaled = (int64_t)llround((double)b->ffn * (double)h / (double)b->hidden);

    if (h == b->hidden)
        set_add(out, b->ffn);
    set_add(out, scaled);
    set_add(out, round_near(scaled, 64));
    set_add(out, round_near(scaled, 128));
    set_add(out, round_near(scaled, 256));
    if (b->swiglu) {
        int64_t third = 8 * h / 3;
        static const int64_t mults[] = {8, 64, 128, 256};
        for (size_t i = 0; i < TC_ARRAY_SIZE(mults); i++) {
            set_add(out, round_near(third, mults[i]));
            set_add(out, round_up(third, mults[i]));
        }
        for (int64_t d = -2; d <= 2; d++)
            set_add(out, round_near(scaled, 64) + 64 * d);
    }
}

static int search_all(struct search *s)
{
    const struct tc_model_config *b = &s->base;
    struct int_set hiddens = {0}, vocabs = {0}, batches = {0}, tps = {0};
    /* Parameters grow about with h², so h moves at most ~tol/2 relative;
     * search a bit wider and let the parameter filter decide. */
    double span = fmin(0.5, s->tol + 0.02);
    int64_t lo = (int64_t)((double)b->hidden * (1 - span)),
            hi = (int64_t)((double)b->hidden * (1 + span));
    int err;

    /* Multiples of 8 (the 16-byte alignment of fp16) and not only of 64, so
     * that the ranking shows what alignment is worth. */
    set_add(&hiddens, b->hidden);
    for (int64_t h = round_up(lo, 8); h <= hi; h += 8)
        set_add(&hiddens, h);
    set_add(&vocabs, b->vocab);
    if (b->vocab) {
        set_add(&vocabs, round_up(b->vocab, 8));
        set_add(&vocabs, round_up(b->vocab, 64));
        /* 64 fp16/bf16 elements are already 128 bytes; 1-byte types need 128. */
        if (tc_dtype_bytes(b->dtype) == 1)
            set_add(&vocabs, round_up(b->vocab, 128));
    }
    set_add(&batches, b->micro_batch);
    set_add(&batches, 2 * b->micro_batch);
    set_add(&tps, b->tp);
    if (b->tp > 1)
        set_add(&tps, b->tp / 2);

    for (size_t hi_i = 0; hi_i < hiddens.n; hi_i++) {
        int64_t h = hiddens.v[hi_i];
        struct int_set heads = {0}, ffns = {0};
        int64_t group = b->heads / b->kv_heads;

        /* Head counts dividing h with head dims 32..256, between half and
         * twice the baseline's count, and the baseline's own count when it
         * divides h. */
        for (int64_t a = b->heads / 2; a <= 2 * b->heads && heads.n < TC_ARRAY_SIZE(heads.v); a++) {
            if (a <= 0 || h % a)
                continue;
            if (h / a < 32 || h / a > 256)
                continue;
            set_add(&heads, a);
        }
        ffn_candidates(b, h, &ffns);
        for (size_t ai = 0; ai < heads.n; ai++) {
            int64_t a = heads.v[ai];
            if (b->kv_heads != b->heads && a % group)
                continue; /* keep the grouped-query group size */
            for (size_t fi = 0; fi < ffns.n; fi++)
                for (size_t vi = 0; vi < vocabs.n; vi++)
                    for (size_t bi = 0; bi < batches.n; bi++)
                        for (size_t ti = 0; ti < tps.n; ti++) {
                            struct tc_model_config c = *b;
                            c.hidden = h;
                            c.heads = a;
                            c.kv_heads = b->kv_heads == b->heads ? a : a / group;
                            c.head_dim = h / a;
                            c.ffn = ffns.v[fi];
                            c.vocab = vocabs.v[vi];
                            c.micro_batch = batches.v[bi];
                            c.tp = tps.v[ti];
                            if (c.heads % c.tp || c.hidden % c.tp || c.ffn % c.tp ||
                                c.kv_heads % c.tp)
                                continue;
                            err = evaluate(s, &c);
                            if (err < 0)
                                return err;
                        }
        }
    }
    return TC_OK;
}

TC_API void tc_advice_free(struct tc_advice *a)
{
    if (!a)
        return;
    free(a->candidates);
    free(a);
}

TC_API int tc_advise_on(struct tc_predictor *p, const struct tc_gpu *gpu,
                        const struct tc_model_config *cfg, const struct tc_cluster *cluster,
                        double params_tolerance, size_t max_candidates, struct tc_advice **out)
{
    struct search s = {.p = p, .gpu = gpu, .cluster = cluster, .tol = params_tolerance};
    struct tc_advice *a = NULL;
    int err;

    if (!gpu || !cfg || !out)
        return tc_error(TC_ERR_INVALID, "tc_advise: no GPU, config or output");
    *out = NULL;
    err = tc_cluster_check(cluster);
    if (err < 0)
        return err;
    if (!(params_tolerance >= 0 && params_tolerance <= 0.5))
        return tc_error(TC_ERR_RANGE, "advise: parameter tolerance %g is outside [0, 0.5]",
                        params_tolerance);
    s.base = *cfg;
    err = tc_model_config_resolve(&s.base);
    if (err < 0)
        return err;
    s.memo = tc_gemm_memo_new();
    if (!s.memo)
        return TC_ERR_NOMEM;
    err = tc_model_predict_memo(p, gpu, s.memo, &s.base, cluster, &s.base_pred);
    if (err < 0)
        goto cleanup;
    s.base_params = tc_model_params(&s.base);
    s.base_tps_gpu = s.base_pred->tokens_per_s / (double)(s.base.tp * s.base.pp);
    err = search_all(&s);
    if (err < 0)
        goto cleanup;
    sort_base = &s.base;
    if (s.n)
        qsort(s.cands, s.n, sizeof(*s.cands), cmp_cand);
    s.n = keep_distinct(s.cands, s.n);

    a = calloc(1, sizeof(*a));
    if (!a) {
        err = tc_error(TC_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    a->baseline = s.base;
    a->baseline_step_us = s.base_pred->step_time_us;
    a->baseline_tokens_per_s_per_gpu = s.base_tps_gpu;
    a->baseline_params = s.base_params;
    a->n_evaluated = s.n_evaluated;
    a->n_candidates = s.n < max_candidates ? s.n : max_candidates;
    if (a->n_candidates) {
        a->candidates = s.cands;
        s.cands = NULL;
        /* Shrinking never fails in practice; keep the block if it does. */
        struct tc_advice_candidate *shrunk =
            realloc(a->candidates, a->n_candidates * sizeof(*a->candidates));
        if (shrunk)
            a->candidates = shrunk;
    }
    *out = a;
cleanup:
    free(s.cands);
    tc_model_prediction_free(s.base_pred);
    tc_gemm_memo_free(s.memo);
    return err;
}

TC_API int tc_advise(struct tc_predictor *p, const struct tc_gpu *gpu,
                     const struct tc_model_config *cfg, double params_tolerance,
                     size_t max_candidates, struct tc_advice **out)
{
    return tc_advise_on(p, gpu, cfg, NULL, params_tolerance, max_candidates, out);
}
