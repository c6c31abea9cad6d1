/* Attention: unfused (scores bmm + softmax + values bmm) through the GEMM
 * predictor, and a FlashAttention-2 style tile model from the GPU spec.
 * Also the GEMM memo and the memory-bound kernel model shared with model.c. */
#include "bounds.h"
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "model-internal.h"
#include "stats.h"

/* ------------------------------------------------------------------------ */
/* GEMM memo                                                                 */
/* ------------------------------------------------------------------------ */

struct memo_entry {
    bool used;
    const struct tc_gpu *gpu;
    struct tc_gemm_query q;
    struct tc_gemm_prediction pred;
};

struct tc_gemm_memo {
    size_t cap, count; /* cap is a power of two */
    struct memo_entry *slots;
};

struct tc_gemm_memo *tc_gemm_memo_new(void)
{
    struct tc_gemm_memo *memo = calloc(1, sizeof(*memo));

    if (!memo)
        goto nomem;
    memo->cap = 1024;
    memo->slots = calloc(memo->cap, sizeof(*memo->slots));
    if (!memo->slots)
        goto nomem;
    return memo;
nomem:
    tc_gemm_memo_free(memo);
    tc_error(TC_ERR_NOMEM, "out of memory");
    return NULL;
}

void tc_gemm_memo_free(struct tc_gemm_memo *memo)
{
    if (!memo)
        return;
    free(memo->slots);
    free(memo);
}

size_t tc_gemm_memo_size(const struct tc_gemm_memo *memo)
{
    return memo ? memo->count : 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t query_hash(const struct tc_gpu *gpu, const struct tc_gemm_query *q)
{
    uint64_t h = (uint64_t)(uintptr_t)gpu;

    h = mix(h, (uint64_t)q->m);
    h = mix(h, (uint64_t)q->n);
    h = mix(h, (uint64_t)q->k);
    h = mix(h, (uint64_t)q->batch);
    h = mix(h, (uint64_t)q->dtype * 8u + (uint64_t)q->layout);
    h = mix(h, (uint64_t)q->lda ^ ((uint64_t)q->ldb << 21) ^ ((uint64_t)q->ldc << 42));
    return h;
}

static bool query_equal(const struct tc_gemm_query *a, const struct tc_gemm_query *b)
{
    return a->m == b->m && a->n == b->n && a->k == b->k && a->batch == b->batch &&
           a->dtype == b->dtype && a->layout == b->layout && a->lda == b->lda && a->ldb == b->ldb &&
           a->ldc == b->ldc;
}

static struct memo_entry *memo_slot(struct tc_gemm_memo *memo, const struct tc_gpu *gpu,
                                    const struct tc_gemm_query *q)
{
    size_t mask = memo->cap - 1;
    size_t i = (size_t)query_hash(gpu, q) & mask;

    while (memo->slots[i].used && !(memo->slots[i].gpu == gpu && query_equal(&memo->slots[i].q, q)))
        i = (i + 1) & mask;
    return &memo->slots[i];
}

static int memo_grow(struct tc_gemm_memo *memo)
{
    struct memo_entry *old = memo->slots;
    size_t old_cap = memo->cap;

    memo->slots = calloc(old_cap * 2, sizeof(*memo->slots));
    if (!memo->slots) {
        memo->slots = old;
        return tc_error(TC_ERR_NOMEM, "out of memory");
    }
    memo->cap = old_cap * 2;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].used)
            *memo_slot(memo, old[i].gpu, &old[i].q) = old[i];
    free(old);
    return TC_OK;
}

int tc_gemm_predict_any(struct tc_predictor *p, const struct tc_gpu *gpu, struct tc_gemm_memo *memo,
                        const struct tc_gemm_query *q, struct tc_gemm_prediction *out)
{
    struct memo_entry *slot;
    int err;

    if (!memo)
        return p ? tc_predict_gemm(p, gpu, q, out) : tc_predict_gemm_analytical(gpu, q, out);
    slot = memo_slot(memo, gpu, q);
    if (slot->used) {
        *out = slot->pred;
        return TC_OK;
    }
    err = p ? tc_predict_gemm(p, gpu, q, out) : tc_predict_gemm_analytical(gpu, q, out);
    if (err < 0)
        return err;
    /* Keep the load under one half so probing stays short. */
    if ((memo->count + 1) * 2 > memo->cap) {
        if (memo_grow(memo) < 0)
            return TC_OK; /* the prediction is valid; only caching failed */
        slot = memo_slot(memo, gpu, q);
    }
    slot->used = true;
    slot->gpu = gpu;
    slot->q = *q;
    slot->pred = *out;
    memo->count++;
    return TC_OK;
}

double tc_elementwise_time_us(const struct tc_gpu *gpu, double bytes)
{
    double bw_bytes_per_us = gpu->mem_bw_gbps * 1e3 * TC_ELEMENTWISE_BW_EFF;

    if (bw_bytes_per_us <= 0)
        return TC_KERNEL_FLOOR_US;
    return TC_KERNEL_FLOOR_US + bytes / bw_bytes_per_us;
}

/* ------------------------------------------------------------------------ */
/* Attention                                                                 */
/* ------------------------------------------------------------------------ */

static int check_query(const struct tc_gpu *gpu, const struct tc_attention_query *q)
{
    if (!gpu || !q)
        return tc_error(TC_ERR_INVALID, "tc_predict_attention: no GPU or query");
    if (q->batch <= 0 || q->heads <= 0 || q->seq_q <= 0 || q->head_dim <= 0)
        return tc_error(TC_ERR_RANGE,
                        "attention: batch (%lld), heads (%lld), seq (%lld) and head dim (%lld) "
                        "must be positive",
                        (long long)q->batch, (long long)q->heads, (long long)q->seq_q,
                        (long long)q->head_dim);
    if (q->kv_heads < 0 || q->seq_kv < 0)
        return tc_error(TC_ERR_RANGE,
                        "attention: kv heads (%lld) and kv seq (%lld) must not be "
                        "negative",
                        (long long)q->kv_heads, (long long)q->seq_kv);
    if (q->kv_heads > q->heads || (q->kv_heads && q->heads % q->kv_heads))
        return tc_error(TC_ERR_INVALID,
                        "attention: kv heads %lld must divide heads %lld (grouped-query)",
                        (long long)q->kv_heads, (long long)q->heads);
    if ((unsigned)q->dtype >= TC_DTYPE_COUNT || tc_dtype_bytes(q->dtype) == 0)
        return tc_error(TC_ERR_INVALID, "attention: bad dtype %d", (int)q->dtype);
    if (gpu->peak_tflops[q->dtype] <= 0)
        return tc_error(TC_ERR_UNSUPPORTED, "attention: %s does not support %s", gpu->id,
                        tc_dtype_name(q->dtype));
    if ((unsigned)q->impl >= TC_ATTN_IMPL_COUNT)
        return tc_error(TC_ERR_INVALID, "attention: unknown implementation %d", (int)q->impl);
    if (q->head_dim_vo < 0 || q->window < 0 || q->kv_splits < 0)
        return tc_error(TC_ERR_RANGE,
                        "attention: head dim vo (%lld), window (%lld) and kv splits (%lld) must "
                        "not be negative",
                        (long long)q->head_dim_vo, (long long)q->window, (long long)q->kv_splits);
    if (q->window && !q->causal)
        return tc_error(TC_ERR_INVALID,
                        "attention: a sliding window (%lld keys) needs the causal mask",
                        (long long)q->window);
    if (q->deterministic && !q->backward)
        return tc_error(TC_ERR_INVALID,
                        "attention: deterministic is a property of the backward pass");
    if (q->page_size < 0 || (unsigned)q->kv_dtype >= TC_DTYPE_COUNT)
        return tc_error(TC_ERR_RANGE,
                        "attention: page size %lld (keys, 0 or more) or KV-cache "
                        "dtype %d out of range",
                        (long long)q->page_size, (int)q->kv_dtype);
    {
        enum tc_dtype kv = tc_attention_kv_dtype(q);

        /* a KV cache is read by the inference forward: FlashAttention-2's
         * flash_attn_with_kvcache "does not support backward pass"
         * (flash_attn_interface.py) */
        if (q->backward && (q->page_size || kv != q->dtype))
            return tc_error(TC_ERR_INVALID,
                            "attention: a backward pass over a KV cache (page size %lld, cache "
                            "%s): a KV cache is read by the forward only",
                            (long long)q->page_size, tc_dtype_name(kv));
        if (tc_dtype_bytes(kv) > tc_dtype_bytes(q->dtype))
            return tc_error(TC_ERR_INVALID,
                            "attention: a %s KV cache is wider than the %s attention reading it",
                            tc_dtype_name(kv), tc_dtype_name(q->dtype));
        /* FlashAttention-2's mha_fwd_kvcache and FlashAttention-3's kernels
         * check "query and key must have the same dtype" (flash_api.cpp);
         * cuDNN's and FA3's fp8 attention take Q, K and V in fp8 (the cuDNN
         * frontend's sdpa_fp8 graph, benchmark/attention_inference) */
        if (kv != q->dtype)
            return tc_error(TC_ERR_UNSUPPORTED,
                            "attention: no modelled kernel reads a %s KV cache under %s queries "
                            "(FlashAttention-2 and -3 need the query's and key's dtypes equal, "
                            "cuDNN's fp8 attention takes Q, K and V in fp8): predict the fp8 "
                            "attention with --dtype %s",
                            tc_dtype_name(kv), tc_dtype_name(q->dtype), tc_dtype_name(kv));
        if (q->page_size && q->impl == TC_ATTN_UNFUSED)
            return tc_error(TC_ERR_UNSUPPORTED,
                            "attention: the unfused path's bmms read contiguous K and V, not a "
                            "paged cache (page size %lld)",
                            (long long)q->page_size);
    }
    /* b·a·s·s elements must not overflow the 64-bit shapes we hand on. */
    if ((double)q->batch * (double)q->heads * (double)q->seq_q *
            (double)(q->seq_kv ? q->seq_kv : q->seq_q) * (double)q->head_dim >
        9e18)
        return tc_error(TC_ERR_RANGE, "attention: shape too large");
    return TC_OK;
}

/* Useful FLOPs as FlashAttention's and cuDNN's benchmarks count them (the
 * source of the measured rows, db/sources/measured-README.md): 2·b·h·N
 * times d_qk + d_vo forward (two GEMMs) and 3·d_qk + 2·d_vo backward (five),
 * N the (query, key) pairs the mask keeps. The unfused GEMMs compute the
 * whole score matrix whatever the mask, and their backward four GEMMs. */
static double attention_flops(const struct tc_attention_query *q, int64_t seq_kv)
{
    double dqk = (double)q->head_dim, dvo = (double)(q->head_dim_vo ? q->head_dim_vo : q->head_dim);
    double base = 2.0 * (double)q->batch * (double)q->heads;

    if (q->impl == TC_ATTN_UNFUSED)
        return base * (double)q->seq_q * (double)seq_kv *
               (q->backward ? 2 * dqk + 2 * dvo : dqk + dvo);
    return base * tc_attention_pairs(q, seq_kv) * (q->backward ? 3 * dqk + 2 * dvo : dqk + dvo);
}

static void worst_source(enum tc_source *acc, enum tc_source s)
{
    if (s > *acc)
        *acc = s;
}

static int add_gemm(struct tc_predictor *p, const struct tc_gpu *gpu, struct tc_gemm_memo *memo,
                    const struct tc_attention_query *aq, int64_t m, int64_t n, int64_t k,
                    enum tc_layout layout, double *time_us, enum tc_source *source)
{
    struct tc_gemm_query q = {
        .m = m,
        .n = n,
        .k = k,
        .batch = aq->batch * aq->heads,
        .dtype = aq->dtype,
        .layout = layout,
    };
    struct tc_gemm_prediction pred;
    int err = tc_gemm_predict_any(p, gpu, memo, &q, &pred);

    if (err < 0)
        return tc_error_prefix(err, "attention bmm %lldx%lldx%lld batch %lld", (long long)m,
                               (long long)n, (long long)k, (long long)q.batch);
    *time_us += pred.time_us;
    worst_source(source, pred.source);
    return TC_OK;
}

/* Megatron's unfused path: Q·K^T (NT), a fused scale-mask-softmax that
 * reads and writes the whole s×s score matrix (the mask does not skip the
 * upper triangle), and P·V (NN). Grouped-query K/V are first repeated to
 * every head (repeat_kv), a copy of its own. */
static int predict_unfused(struct tc_predictor *p, const struct tc_gpu *gpu,
                           struct tc_gemm_memo *memo, const struct tc_attention_query *q,
                           int64_t seq_kv, struct tc_attention_prediction *out)
{
    double e = tc_dtype_bytes(q->dtype);
    double scores_bytes =
        (double)q->batch * (double)q->heads * (double)q->seq_q * (double)seq_kv * e;
    enum tc_source source = TC_SOURCE_MEASURED;
    int64_t s = q->seq_q, d = q->head_dim, dv = q->head_dim_vo ? q->head_dim_vo : d;
    int err;

    if (!q->backward) {
        err = add_gemm(p, gpu, memo, q, s, seq_kv, d, TC_LAYOUT_NT, &out->scores_us, &source);
        if (err == TC_OK)
            err = add_gemm(p, gpu, memo, q, s, dv, seq_kv, TC_LAYOUT_NN, &out->values_us, &source);
        out->softmax_us = tc_elementwise_time_us(gpu, 2 * scores_bytes);
    } else {
        /* scores: dQ = dS·K (NN), dK = dS^T·Q (TN); values: dP = dO·V^T (NT),
         * dV = P^T·dO (TN); softmax backward reads P and dP, writes dS. */
        err = add_gemm(p, gpu, memo, q, s, d, seq_kv, TC_LAYOUT_NN, &out->scores_us, &source);
        if (err == TC_OK)
            err = add_gemm(p, gpu, memo, q, seq_kv, d, s, TC_LAYOUT_TN, &out->scores_us, &source);
        if (err == TC_OK)
            err = add_gemm(p, gpu, memo, q, s, seq_kv, dv, TC_LAYOUT_NT, &out->values_us, &source);
        if (err == TC_OK)
            err = add_gemm(p, gpu, memo, q, seq_kv, dv, s, TC_LAYOUT_TN, &out->values_us, &source);
        out->softmax_us = tc_elementwise_time_us(gpu, 3 * scores_bytes);
    }
    if (err < 0)
        return err;
    if (q->kv_heads && q->kv_heads < q->heads) {
        /* K and V: read kv_heads copies, write heads copies (and the
         * reverse reduction of their gradients in the backward pass). */
        double kv_bytes = (double)q->batch * (double)seq_kv * (double)(d + dv) * e *
                          (double)(q->heads + q->kv_heads);
        out->expand_us = tc_elementwise_time_us(gpu, kv_bytes);
    }
    out->time_us = out->scores_us + out->softmax_us + out->values_us + out->expand_us;
    out->source = source;
    out->bound =
        out->softmax_us > out->scores_us + out->values_us ? TC_BOUND_MEMORY : TC_BOUND_COMPUTE;
    return TC_OK;
}

/* The measurement of one row as a prediction of its shape: the measured
 * time, the row's spread as the interval (else ±2%, as for measured GEMMs)
 * and the unfused parts it measured. FLOPs as the model counts them; the
 * tile-model fields already in *out are kept. */
static void fill_measured(const struct tc_attention_query *q, int64_t seq_kv,
                          const struct tc_attention_row *row, struct tc_attention_prediction *out)
{
    double spread, flops = attention_flops(q, seq_kv);

    spread = row->spread_pct > 0 && isfinite(row->spread_pct) ? row->spread_pct / 100 : 0.02;
    out->time_us = row->time_us;
    out->flops = flops;
    out->tflops = flops / row->time_us / 1e6;
    out->lo_us = row->time_us * (1 - spread);
    out->hi_us = row->time_us * (1 + spread);
    out->scores_us = row->scores_us;
    out->softmax_us = row->softmax_us;
    out->values_us = row->values_us;
    out->expand_us = 0;
    out->source = TC_SOURCE_MEASURED;
}

static int predict_model(struct tc_predictor *p, const struct tc_gpu *gpu,
                         struct tc_gemm_memo *memo, const struct tc_attention_query *q,
                         struct tc_attention_prediction *out);

/* Rows needed before the measured scale outweighs the model's own: the
 * scale is shrunk towards 1 with weight n / (n + ATTN_SHRINK_ROWS). */
#define ATTN_SHRINK_ROWS 5.0

/* Fits the calibration of one (GPU, impl, dtype, direction) at one pair of
 * head dims from its measured rows of that pair, once:
 *   r_i    = ln(measured_i / model_i) over the rows the model can predict;
 *   w      = n / (n + 5)  (few rows: mostly the model's own answer);
 *   scale  = exp(w · median(r))  (the median: one bad row cannot drag it);
 *   interval, in log time around the scaled prediction: the 10th and 90th
 *            percentiles of r − median(r) (widened to include 0), blended
 *            with the model's ±25% by the same weight w.
 * Only rows of the same head dims: a library runs another kernel at another
 * head dim (cuDNN's sm80 engines name knob_6_128x64x64 at 64 and
 * knob_3_64x64x128 / _64x64x256 at 128 and 256, attention-kernels.c; FA2
 * instantiates one kernel per multiple of 32), so what rows of one head dim
 * say of the library's efficiency is not evidence about another's: on the
 * development file, leaving one model out, one scale over every head dim
 * carried A100 cuDNN's d192/128 miss onto its d128 rows. */
static void attention_fit(struct tc_predictor *p, const struct tc_gpu *gpu,
                          struct tc_gemm_memo *memo, const struct tc_attn_rows *set,
                          struct tc_attn_fit *fit)
{
    double *r = NULL, med, w;
    size_t n = 0;

    fit->n_fit = 0;
    fit->scale = 1;
    fit->lo_log = log(0.75);
    fit->hi_log = log(1.25);
    if (!set->n || !(r = malloc(set->n * sizeof(*r))))
        return; /* no rows, or no memory: the model alone */
    for (size_t i = 0; i < set->n; i++) {
        const struct tc_attention_row *row = &set->rows[i];
        struct tc_attention_query rq = {
            .impl = row->impl,
            .dtype = row->dtype,
            .batch = row->batch,
            .heads = row->heads,
            .kv_heads = row->kv_heads,
            .seq_q = row->seq_q,
            .seq_kv = row->seq_kv,
            .head_dim = row->head_dim,
            .causal = row->causal,
            .backward = row->backward,
            .deterministic = row->deterministic,
            .head_dim_vo = row->head_dim_vo,
            .window = row->window,
            .page_size = row->page_size,
            .kv_dtype = row->kv_dtype,
        };
        struct tc_attention_prediction pred;

        if (fit->head_dim &&
            (row->head_dim != fit->head_dim ||
             (row->head_dim_vo ? row->head_dim_vo : row->head_dim) != fit->head_dim_vo))
            continue;
        /* a row the model cannot predict (say head dim > 256 for flash)
         * says nothing about its scale */
        if (predict_model(p, gpu, memo, &rq, &pred) < 0 || !(pred.time_us > 0))
            continue;
        r[n++] = log(row->time_us / pred.time_us);
    }
    tc_clear_error();
    if (n) {
        qsort(r, n, sizeof(*r), tc_cmp_double);
        med = tc_quantile_sorted(r, n, 0.5);
        w = (double)n / ((double)n + ATTN_SHRINK_ROWS);
        fit->n_fit = n;
        fit->scale = exp(w * med);
        fit->lo_log = w * fmin(0, tc_quantile_sorted(r, n, 0.1) - med) + (1 - w) * log(0.75);
        fit->hi_log = w * fmax(0, tc_quantile_sorted(r, n, 0.9) - med) + (1 - w) * log(1.25);
    }
    free(r);
}

/* The fit of set at head dims dqk/dvo (0/0: over every row), fitted on
 * first use; NULL without memory. */
static const struct tc_attn_fit *fit_at(struct tc_predictor *p, const struct tc_gpu *gpu,
                                        struct tc_gemm_memo *memo, struct tc_attn_rows *set,
                                        int64_t dqk, int64_t dvo)
{
    struct tc_attn_fit *grown;

    for (size_t i = 0; i < set->n_fits; i++) {
        if (set->fits[i].head_dim == dqk && set->fits[i].head_dim_vo == dvo)
            return &set->fits[i];
    }
    grown = realloc(set->fits, (set->n_fits + 1) * sizeof(*set->fits));
    if (!grown)
        return NULL;
    set->fits = grown;
    grown = &set->fits[set->n_fits++];
    grown->head_dim = dqk;
    grown->head_dim_vo = dvo;
    attention_fit(p, gpu, memo, set, grown);
    return grown;
}

/* The fit at q's head dims, or, where the set holds no row of them, the
 * fit over all its rows (head dims 0): a scale of the same library on the
 * same GPU, dtype and pass is better evidence than none, and the answer's
 * interval says it is weaker (attention_calibrate). */
static const struct tc_attn_fit *attention_fit_for(struct tc_predictor *p, const struct tc_gpu *gpu,
                                                   struct tc_gemm_memo *memo,
                                                   struct tc_attn_rows *set,
                                                   const struct tc_attention_query *q)
{
    const struct tc_attn_fit *fit =
        fit_at(p, gpu, memo, set, q->head_dim, q->head_dim_vo ? q->head_dim_vo : q->head_dim);

    if (fit && !fit->n_fit)
        fit = fit_at(p, gpu, memo, set, 0, 0);
    return fit;
}

/* Calibration from the attention rows of the predictor's databases: an
 * exactly measured shape (same GPU, impl, dtype, batch, heads, kv heads,
 * sequence lengths, head dim, mask and direction; the fastest row when
 * several) is answered by its measurement; otherwise the model's time is
 * scaled as attention_fit describes and labelled calibrated. TC_OK with
 * *out untouched when there are no rows. */
/* The fastest row of set that measured q's call exactly: V/O head dim,
 * window, the deterministic backward and the KV cache included (rows read
 * from a v1 file have equal head dims, no window and the default backward;
 * from v1-v3 files a contiguous cache of their dtype). */
static const struct tc_attention_row *exact_row(const struct tc_attn_rows *set,
                                                const struct tc_attention_query *q, int64_t seq_kv)
{
    int64_t kv_heads = q->kv_heads ? q->kv_heads : q->heads;
    int64_t dvo = q->head_dim_vo ? q->head_dim_vo : q->head_dim;
    const struct tc_attention_row *best = NULL;

    for (size_t i = 0; i < set->n; i++) {
        const struct tc_attention_row *row = &set->rows[i];
        int64_t row_dvo = row->head_dim_vo ? row->head_dim_vo : row->head_dim;
        enum tc_dtype row_kv = row->kv_dtype == TC_DTYPE_FP64 ? row->dtype : row->kv_dtype;

        if (row->batch == q->batch && row->heads == q->heads && row->kv_heads == kv_heads &&
            row->seq_q == q->seq_q && row->seq_kv == seq_kv && row->head_dim == q->head_dim &&
            row_dvo == dvo && row->window == q->window && row->deterministic == q->deterministic &&
            row->causal == q->causal && row->page_size == q->page_size &&
            row_kv == tc_attention_kv_dtype(q) && (!best || row->time_us < best->time_us))
            best = row;
    }
    return best;
}

static int attention_calibrate(struct tc_predictor *p, const struct tc_gpu *gpu,
                               struct tc_gemm_memo *memo, const struct tc_attention_query *q,
                               int64_t seq_kv, struct tc_attention_prediction *out)
{
    const struct tc_attention_row *best;
    const struct tc_attn_fit *fit;
    struct tc_attn_rows *set;
    double k;
    int err;

    set = tc_predictor_attention_rows(p, gpu->id, q->impl, q->dtype, q->backward, &err);
    if (!set)
        return err;
    if ((best = exact_row(set, q, seq_kv))) {
        fill_measured(q, seq_kv, best, out);
        return TC_OK;
    }
    if (!(fit = attention_fit_for(p, gpu, memo, set, q)))
        return tc_error(TC_ERR_NOMEM, "out of memory");
    if (!fit->n_fit)
        return TC_OK;
    k = fit->scale;
    out->time_us *= k;
    out->scores_us *= k;
    out->softmax_us *= k;
    out->values_us *= k;
    out->expand_us *= k;
    out->tflops = out->time_us > 0 ? out->flops / out->time_us / 1e6 : 0;
    /* a scale from rows of other head dims (no row of q's): its interval
     * keeps at least the model's own +-25 % */
    out->lo_us = out->time_us * exp(fit->head_dim ? fit->lo_log : fmin(fit->lo_log, log(0.75)));
    out->hi_us = out->time_us * exp(fit->head_dim ? fit->hi_log : fmax(fit->hi_log, log(1.25)));
    out->source = TC_SOURCE_CALIBRATED;
    return TC_OK;
}

/* The model alone: the tile model (flash) or the GEMM predictor's bmms and
 * the softmax's bytes (unfused), with the model's interval. */
static int predict_model(struct tc_predictor *p, const struct tc_gpu *gpu,
                         struct tc_gemm_memo *memo, const struct tc_attention_query *q,
                         struct tc_attention_prediction *out)
{
    int64_t seq_kv;
    int err;

    if (!out)
        return tc_error(TC_ERR_INVALID, "tc_predict_attention: no output");
    err = check_query(gpu, q);
    if (err < 0)
        return err;
    memset(out, 0, sizeof(*out));
    seq_kv = q->seq_kv ? q->seq_kv : q->seq_q;
    if (q->causal && seq_kv < q->seq_q)
        return tc_error(TC_ERR_INVALID,
                        "attention: causal with seq_kv %lld shorter than seq_q %lld",
                        (long long)seq_kv, (long long)q->seq_q);

    out->flops = attention_flops(q, seq_kv);
    if (q->impl == TC_ATTN_UNFUSED)
        err = predict_unfused(p, gpu, memo, q, seq_kv, out);
    else
        err = tc_attention_fused(gpu, q, seq_kv, out);
    if (err < 0)
        return err;
    if (q->impl == TC_ATTN_UNFUSED)
        out->kernel = TC_ATTN_UNFUSED;
    out->tflops = out->time_us > 0 ? out->flops / out->time_us / 1e6 : 0;
    /* The tile model's spread against FA2 benchmarks is about ±25%. */
    out->lo_us = out->time_us * 0.75;
    out->hi_us = out->time_us * 1.25;
    return TC_OK;
}

/* A call the model refuses (a head dim above 256, a deterministic backward
 * it does not model) that a database measured exactly is answered by its
 * measurement, as a measured GEMM is; otherwise the model's refusal, err,
 * stands. */
static int measured_unmodelled(struct tc_predictor *p, const struct tc_gpu *gpu,
                               const struct tc_attention_query *q, int err,
                               struct tc_attention_prediction *out)
{
    int64_t seq_kv = q->seq_kv ? q->seq_kv : q->seq_q;
    const struct tc_attention_row *best;
    struct tc_attn_rows *set;
    char saved[1024];
    int rows_err;

    tc_strlcpy(saved, tc_last_error(), sizeof(saved));
    set = tc_predictor_attention_rows(p, gpu->id, q->impl, q->dtype, q->backward, &rows_err);
    if (!set)
        return rows_err < 0 ? rows_err : tc_error(err, "%s", saved);
    if (!(best = exact_row(set, q, seq_kv)))
        return tc_error(err, "%s", saved);
    memset(out, 0, sizeof(*out));
    out->kernel = q->impl;
    out->kv_splits = 1;
    fill_measured(q, seq_kv, best, out);
    return TC_OK;
}

int tc_attention_predict_memo(struct tc_predictor *p, const struct tc_gpu *gpu,
                              struct tc_gemm_memo *memo, const struct tc_attention_query *q,
                              struct tc_attention_prediction *out)
{
    int err = predict_model(p, gpu, memo, q, out);

    if (err == TC_OK && p)
        err = attention_calibrate(p, gpu, memo, q, q->seq_kv ? q->seq_kv : q->seq_q, out);
    else if (err == TC_ERR_UNSUPPORTED && p && out)
        err = measured_unmodelled(p, gpu, q, err, out);
    /* a paged cache: the model has its block table's bytes only (no source
     * gives the cost of these kernels' page lookups); the interval's upper
     * end allows the overhead vLLM measured (TC_PAGED_OVERHEAD_MAX) */
    if (err == TC_OK && q->page_size && out->source != TC_SOURCE_MEASURED)
        out->hi_us *= 1.0 + TC_PAGED_OVERHEAD_MAX;
    /* never an infinite or NaN answer, whatever the inputs let through */
    if (err == TC_OK) {
        char what[160];

        snprintf(what, sizeof(what), "attention b=%lld h=%lld s=%lld d=%lld on %s",
                 (long long)q->batch, (long long)q->heads, (long long)q->seq_q,
                 (long long)q->head_dim, gpu->id);
        err = tc_bound_check_prediction(what, out->time_us, out->lo_us, out->hi_us);
    }
    return err;
}

TC_API int tc_predict_attention(struct tc_predictor *p, const struct tc_gpu *gpu,
                                const struct tc_attention_query *q,
                                struct tc_attention_prediction *out)
{
    return tc_attention_predict_memo(p, gpu, NULL, q, out);
}

TC_API int tc_attention_measured(struct tc_db *db, const char *gpu_id,
                                 const struct tc_attention_query *q,
                                 struct tc_attention_prediction *out)
{
    struct tc_attention_row key, row;
    int err;

    if (!db || !gpu_id || !q || !out)
        return tc_error(TC_ERR_INVALID, "tc_attention_measured: missing argument");
    memset(&key, 0, sizeof(key));
    key.impl = q->impl;
    key.dtype = q->dtype;
    key.batch = q->batch;
    key.heads = q->heads;
    /* the collector stores the resolved kv_heads and seq_kv */
    key.kv_heads = q->kv_heads ? q->kv_heads : q->heads;
    key.seq_q = q->seq_q;
    key.seq_kv = q->seq_kv ? q->seq_kv : q->seq_q;
    key.head_dim = q->head_dim;
    key.head_dim_vo = q->head_dim_vo;
    key.window = q->window;
    key.causal = q->causal;
    key.backward = q->backward;
    key.deterministic = q->deterministic;
    key.page_size = q->page_size;
    key.kv_dtype = q->kv_dtype;
    err = tc_db_lookup_attention(db, gpu_id, &key, &row);
    if (err < 0)
        return err;
    if (!(row.time_us > 0) || !isfinite(row.time_us))
        return tc_error(TC_ERR_INVALID, "attention: the measured row of run %lld has time_us %g",
                        (long long)row.run_id, row.time_us);
    fill_measured(q, key.seq_kv, &row, out);
    return TC_OK;
}
