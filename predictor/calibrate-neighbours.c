/* The measured rows around a query: k-d trees over log-shape space and the
 * leave-one-out choice of the neighbour correction (local and broad tier),
 * the exact-shape lookup, and the bracket of measured times along m. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate-internal.h"
#include "hash.h"
#include "stats.h"
#include "tc-internal.h"

/* ------------------------------------------------------------------------ */
/* k-d tree over log-shape space, one per (layout, alignment class)           */
/* ------------------------------------------------------------------------ */

#define KD_LEAF 8

/* split_dim holds a node's split dimension in its low bits and, above
 * them, the dimensions along which every row under the node has the mid
 * row's coordinate. Such a coordinate is the rows' exact offset from the
 * query, which bounds the cell's distance better than the split planes do;
 * and a held-out query skips a subtree whole when it holds only rows it may
 * not see. Without these a query walked, one by one, every row of its own
 * and of a neighbouring layer (n, k) within a factor of two in m: the
 * leave-one-out fits cost the square of the rows per layer. */
#define KD_DIM_MASK 0x3u
#define KD_FLAT(d) (0x4u << (d))
#define KD_SAME_NK (KD_FLAT(1) | KD_FLAT(2))
#define KD_SAME_POINT (KD_FLAT(0) | KD_FLAT(1) | KD_FLAT(2) | KD_FLAT(3))
_Static_assert(KD_DIMS - 1 <= KD_DIM_MASK && KD_DIMS == 4,
               "a node's dimension and flags fit a byte");

/* The broad tier's neighbour count: few, because it is looked up on nearly
 * every prediction away from measured shapes and must stay cheap. */
#define NB_BROAD_K 8

struct line_row {
    int64_t n, k, batch, m;
    int layout, timing;
    double time_us;
};

/* n and k usually pick the kernel (and the model's layer); m is the token
 * count a layer is run at. The scale of n and k against m and batch is
 * chosen by cross-validation. */
void calib_shape_point(const struct tc_calib_params *cp, int64_t m, int64_t n, int64_t k,
                       int64_t batch, double *p)
{
    double nk = cp->nb_scale_nk > 0 ? cp->nb_scale_nk : 1;

    p[0] = log((double)m);
    p[1] = nk * log((double)n);
    p[2] = nk * log((double)k);
    p[3] = log((double)(batch > 0 ? batch : 1));
}

int calib_group_of(enum tc_layout layout, enum tc_align align)
{
    unsigned l = (unsigned)layout < TC_LAYOUT_COUNT ? (unsigned)layout : 0;
    unsigned a = (unsigned)align < TC_CALIB_ALIGN_CLASSES ? (unsigned)align : 0;

    return (int)(l * TC_CALIB_ALIGN_CLASSES + a);
}

static void swap_rows(struct tc_calib *c, size_t i, size_t j)
{
    struct tc_calib_sample ts;
    double tp[KD_DIMS], tr;

    if (i == j)
        return;
    ts = c->samples[i];
    c->samples[i] = c->samples[j];
    c->samples[j] = ts;
    memcpy(tp, c->pts[i], sizeof(tp));
    memcpy(c->pts[i], c->pts[j], sizeof(tp));
    memcpy(c->pts[j], tp, sizeof(tp));
    tr = c->resid[i];
    c->resid[i] = c->resid[j];
    c->resid[j] = tr;
}

/* Quickselect: puts the element of rank `nth` (by dimension d) at nth, no
 * larger one before it and no smaller one after. Hoare's partition: an
 * element equal to the pivot stops both scans and is swapped, so the long
 * runs of equal coordinates (every row of one n and k) split in the middle
 * instead of costing quadratic time. */
static void select_nth(struct tc_calib *c, size_t lo, size_t hi, size_t nth, int d)
{
    ptrdiff_t l = (ptrdiff_t)lo, h = (ptrdiff_t)hi - 1, want = (ptrdiff_t)nth;

    while (l < h) {
        double pivot = c->pts[l + (h - l) / 2][d];
        ptrdiff_t i = l, j = h;

        while (i <= j) {
            while (c->pts[i][d] < pivot)
                i++;
            while (c->pts[j][d] > pivot)
                j--;
            if (i <= j)
                swap_rows(c, (size_t)i++, (size_t)j--);
        }
        /* [l, j] <= pivot, (j, i) == pivot, [i, h] >= pivot */
        if (want <= j)
            h = j;
        else if (want >= i)
            l = i;
        else
            return;
    }
}

static void kd_build(struct tc_calib *c, size_t lo, size_t hi)
{
    size_t mid;
    int best = 0;
    double best_spread = -1;
    bool flat[KD_DIMS];
    unsigned char node;

    if (hi - lo <= KD_LEAF)
        return;
    for (int d = 0; d < KD_DIMS; d++) {
        double mn = c->pts[lo][d], mx = mn;

        for (size_t i = lo + 1; i < hi; i++) {
            if (c->pts[i][d] < mn)
                mn = c->pts[i][d];
            if (c->pts[i][d] > mx)
                mx = c->pts[i][d];
        }
        flat[d] = mx == mn;
        if (mx - mn > best_spread) {
            best_spread = mx - mn;
            best = d;
        }
    }
    mid = lo + (hi - lo) / 2;
    select_nth(c, lo, hi, mid, best);
    node = (unsigned char)best;
    for (int d = 0; d < KD_DIMS; d++)
        if (flat[d])
            node |= KD_FLAT(d);
    c->split_dim[mid] = node;
    kd_build(c, lo, mid);
    kd_build(c, mid + 1, hi);
}

static void heap_offer(struct nb_heap *h, double d2, size_t at)
{
    int i;

    if (d2 > h->max_d2 || (h->count == h->k && d2 >= h->d2[h->count - 1]))
        return;
    i = h->count < h->k ? h->count++ : h->count - 1;
    while (i > 0 && h->d2[i - 1] > d2) {
        h->d2[i] = h->d2[i - 1];
        h->at[i] = h->at[i - 1];
        i--;
    }
    h->d2[i] = d2;
    h->at[i] = at;
}

/* The squared distance beyond which no point can enter the heap. */
static double heap_bound(const struct nb_heap *h)
{
    return h->count == h->k ? h->d2[h->count - 1] : h->max_d2;
}

static double dist2(const double *a, const double *b)
{
    double s = 0;

    for (int d = 0; d < KD_DIMS; d++)
        s += (a[d] - b[d]) * (a[d] - b[d]);
    return s;
}

static bool kd_skipped(const double *q, const double *p, double d2, int skip)
{
    if (skip == KD_SKIP_EXACT)
        return d2 < 1e-18;
    if (skip == KD_SKIP_NK)
        return fabs(q[1] - p[1]) < 1e-12 && fabs(q[2] - p[2]) < 1e-12;
    return false;
}

/* Whether every row under a node is one the query skips: the rows share
 * the mid row's coordinates that kd_skipped tests, so its verdict on the
 * mid row is the verdict on each of them. */
static bool kd_subtree_skipped(const double *q, const double *mid_pt, double d2, unsigned node,
                               int skip)
{
    if (skip == KD_SKIP_EXACT)
        return (node & KD_SAME_POINT) == KD_SAME_POINT && kd_skipped(q, mid_pt, d2, skip);
    if (skip == KD_SKIP_NK)
        return (node & KD_SAME_NK) == KD_SAME_NK && kd_skipped(q, mid_pt, d2, skip);
    return false;
}

/* off[d] is how far the query lies outside the node's cell along d (0
 * inside): the squared sum (in dist2's order) is no more than the distance
 * to any row in the cell, so a cell beyond the heap's bound is left whole.
 * A row is left only when the heap would refuse it anyway, and in the order
 * the rows were offered before: the neighbours found are the same. */
static void kd_search(const struct tc_calib *c, size_t lo, size_t hi, const double *q, int skip,
                      struct nb_heap *h, const double *off_in)
{
    double off[KD_DIMS];

    memcpy(off, off_in, sizeof(off));
    while (hi > lo) {
        size_t mid;
        unsigned node;
        int d;
        double diff, d2, far = 0;

        if (hi - lo <= KD_LEAF) {
            for (size_t i = lo; i < hi; i++) {
                d2 = dist2(q, c->pts[i]);
                if (!kd_skipped(q, c->pts[i], d2, skip))
                    heap_offer(h, d2, i);
            }
            return;
        }
        mid = lo + (hi - lo) / 2;
        node = c->split_dim[mid];
        d = (int)(node & KD_DIM_MASK);
        d2 = dist2(q, c->pts[mid]);
        if (kd_subtree_skipped(q, c->pts[mid], d2, node, skip))
            return;
        if (node & ~KD_DIM_MASK) { /* an exact offset along some dimension */
            double here = 0;

            for (int j = 0; j < KD_DIMS; j++) {
                if (node & KD_FLAT(j))
                    off[j] = q[j] - c->pts[mid][j];
                here += off[j] * off[j];
            }
            if (here > heap_bound(h))
                return;
        }
        if (!kd_skipped(q, c->pts[mid], d2, skip))
            heap_offer(h, d2, mid);
        diff = q[d] - c->pts[mid][d];
        /* summed in dist2's order: never more than a row's distance */
        for (int j = 0; j < KD_DIMS; j++)
            far += j == d ? diff * diff : off[j] * off[j];
        if (diff < 0) {
            kd_search(c, lo, mid, q, skip, h, off);
            if (far > heap_bound(h))
                return;
            lo = mid + 1;
        } else {
            kd_search(c, mid + 1, hi, q, skip, h, off);
            if (far > heap_bound(h))
                return;
            hi = mid;
        }
        off[d] = diff;
    }
}

void calib_kd_query(const struct tc_calib *c, size_t lo, size_t hi, const double *q, int skip,
                    struct nb_heap *h)
{
    static const double inside[KD_DIMS] = {0};

    kd_search(c, lo, hi, q, skip, h, inside);
}

/* The kernel's weight sum and weighted residual sum over the neighbours. */
void calib_nb_sums(const struct nb_heap *h, const double *resid, double length, double beta,
                   double *sw_out, double *swr_out, double *mean_dist)
{
    double sw = 0, swr = 0, sd = 0, width = length;

    if (h->count && beta > 0) {
        double adaptive = beta * sqrt(h->d2[0]);

        if (adaptive > width)
            width = adaptive < NB_MAX_WIDEN * length ? adaptive : NB_MAX_WIDEN * length;
    }
    for (int i = 0; i < h->count; i++) {
        double d2 = h->d2[i];
        double wgt = exp(-0.5 * d2 / (width * width));

        sw += wgt;
        swr += wgt * resid[h->at[i]];
        sd += sqrt(d2);
    }
    if (mean_dist)
        *mean_dist = h->count ? sd / h->count : 0;
    *sw_out = sw;
    *swr_out = swr;
}

static double nb_correction(const struct nb_heap *h, const double *resid, double length,
                            double beta, double prior, double *mean_dist)
{
    double sw, swr;

    calib_nb_sums(h, resid, length, beta, &sw, &swr, mean_dist);
    return sw > 0 ? swr / (prior + sw) : 0;
}

/* ------------------------------------------------------------------------ */
/* Exact lookup                                                              */
/* ------------------------------------------------------------------------ */

static uint64_t shape_hash(enum tc_layout layout, int64_t m, int64_t n, int64_t k, int64_t batch,
                           enum tc_timing_class timing)
{
    const uint64_t v[6] = {(uint64_t)layout, (uint64_t)m,     (uint64_t)n,
                           (uint64_t)k,      (uint64_t)batch, (uint64_t)timing};
    uint64_t h = tc_fnv1a64(v, sizeof(v), TC_FNV1A64_SEED);

    /* the table takes the low bits: fold the better-mixed high ones in */
    return h ^ (h >> 29);
}

static bool same_shape(const struct tc_calib_sample *s, enum tc_layout layout, int64_t m, int64_t n,
                       int64_t k, int64_t batch, enum tc_timing_class timing)
{
    return s->layout == layout && s->m == m && s->n == n && s->k == k && s->batch == batch &&
           s->timing == timing;
}

static size_t *hash_slot(const struct tc_calib *c, enum tc_layout layout, int64_t m, int64_t n,
                         int64_t k, int64_t batch, enum tc_timing_class timing)
{
    size_t mask = c->hash_size - 1;
    size_t i = (size_t)shape_hash(layout, m, n, k, batch, timing) & mask;

    for (;;) {
        size_t at = c->hash[i];

        if (at == SIZE_MAX || same_shape(&c->samples[at], layout, m, n, k, batch, timing))
            return &c->hash[i];
        i = (i + 1) & mask;
    }
}

const struct tc_calib_sample *tc_calib_find(const struct tc_calib *c, enum tc_layout layout,
                                            int64_t m, int64_t n, int64_t k, int64_t batch,
                                            enum tc_timing_class timing)
{
    size_t at;

    if (!c || !c->hash_size)
        return NULL;
    at = *hash_slot(c, layout, m, n, k, batch > 0 ? batch : 1, timing);
    return at == SIZE_MAX ? NULL : &c->samples[at];
}

struct shape_row {
    int64_t m, n, k, batch;
    int layout, timing;
    double time_us;
    size_t at;
};

static int cmp_shape_row(const void *a, const void *b)
{
    const struct shape_row *x = a, *y = b;
    const int64_t kx[6] = {x->layout, x->timing, x->m, x->n, x->k, x->batch};
    const int64_t ky[6] = {y->layout, y->timing, y->m, y->n, y->k, y->batch};

    for (int i = 0; i < 6; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return (x->time_us > y->time_us) - (x->time_us < y->time_us);
}

/* Several rows of one shape keep the one of median time: one slow run must
 * not become "the measurement". */
int calib_build_hash(struct tc_calib *c)
{
    size_t size = 16;
    struct shape_row *rows = malloc(c->n * sizeof(*rows));

    while (size < 2 * c->n)
        size <<= 1;
    c->hash = malloc(size * sizeof(*c->hash));
    if (!c->hash || !rows) {
        free(rows);
        return tc_error(TC_ERR_NOMEM, "out of memory");
    }
    c->hash_size = size;
    for (size_t i = 0; i < size; i++)
        c->hash[i] = SIZE_MAX;
    c->timing_mask = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct tc_calib_sample *s = &c->samples[i];

        rows[i] = (struct shape_row){s->m,           s->n,           s->k,       s->batch,
                                     (int)s->layout, (int)s->timing, s->time_us, i};
        if ((unsigned)s->timing < TC_TIMING_COUNT)
            c->timing_mask |= 1u << s->timing;
    }
    qsort(rows, c->n, sizeof(*rows), cmp_shape_row);
    for (size_t lo = 0, hi; lo < c->n; lo = hi) {
        const struct tc_calib_sample *s;

        for (hi = lo + 1; hi < c->n; hi++) {
            struct shape_row a = rows[lo], b = rows[hi];

            a.time_us = b.time_us = 0;
            if (cmp_shape_row(&a, &b) != 0)
                break;
        }
        s = &c->samples[rows[lo].at];
        *hash_slot(c, s->layout, s->m, s->n, s->k, s->batch, s->timing) =
            rows[lo + (hi - lo - 1) / 2].at;
    }
    free(rows);
    return TC_OK;
}

/* ------------------------------------------------------------------------ */
/* Monotone bracket along m                                                  */
/* ------------------------------------------------------------------------ */

static int cmp_line(const struct line_row *x, const struct line_row *y)
{
    const int64_t kx[6] = {x->layout, x->timing, x->n, x->k, x->batch, x->m};
    const int64_t ky[6] = {y->layout, y->timing, y->n, y->k, y->batch, y->m};

    for (int i = 0; i < 6; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

static int cmp_line_qsort(const void *a, const void *b)
{
    return cmp_line(a, b);
}

int calib_build_lines(struct tc_calib *c)
{
    c->lines = malloc(c->n * sizeof(*c->lines));
    if (!c->lines)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < c->n; i++) {
        const struct tc_calib_sample *s = &c->samples[i];

        c->lines[i] = (struct line_row){s->n,           s->k,           s->batch,  s->m,
                                        (int)s->layout, (int)s->timing, s->time_us};
    }
    qsort(c->lines, c->n, sizeof(*c->lines), cmp_line_qsort);
    return TC_OK;
}

/* A GEMM with more rows of the same n, k and batch does at least the work
 * of one with fewer: its time lies between the measured times of the
 * nearest smaller and larger m on that line (less 1% for noise). Measured
 * times are step functions of m (waves); where the model puts a step in the
 * wrong place, this bracket keeps the prediction on the measured plateau.
 * Rows of the query's own m are left out (held-out evaluation). */
double calib_bracket(const struct tc_calib *c, const struct tc_calib_sample *q,
                     enum tc_timing_class timing, double t)
{
    struct line_row key = {q->n, q->k, q->batch, q->m, (int)q->layout, (int)timing, 0};
    size_t lo = 0, hi = c->n, below, above;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (cmp_line(&c->lines[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    above = lo;
    while (above < c->n && c->lines[above].m == q->m && cmp_line(&c->lines[above], &key) == 0)
        above++;
    key.m = 0;
    if (above < c->n) {
        struct line_row k2 = c->lines[above];

        k2.m = 0;
        if (cmp_line(&k2, &key) == 0 && t > 1.01 * c->lines[above].time_us)
            t = 1.01 * c->lines[above].time_us;
    }
    if (lo > 0) {
        struct line_row k2 = c->lines[lo - 1];

        below = lo - 1;
        k2.m = 0;
        if (cmp_line(&k2, &key) == 0 && t < 0.99 * c->lines[below].time_us)
            t = 0.99 * c->lines[below].time_us;
    }
    return t;
}

/* ------------------------------------------------------------------------ */
/* Building a state                                                          */
/* ------------------------------------------------------------------------ */

int calib_time_bin(double time_us)
{
    return time_us < 20 ? 0 : time_us < 200 ? 1 : 2;
}

/* Held-out neighbour residuals of every row, the choice of the kernel
 * length and prior weight that predicts them best, and the quantiles of
 * the resulting held-out errors for the interval. */
static void build_trees(struct tc_calib *c)
{
    for (size_t i = 0; i < c->n; i++)
        calib_shape_point(&c->params, c->samples[i].m, c->samples[i].n, c->samples[i].k,
                          c->samples[i].batch, c->pts[i]);
    for (int g = 0; g < KD_GROUPS; g++)
        kd_build(c, c->groups[g].lo, c->groups[g].hi);
}

static void loo_heaps(struct tc_calib *c, struct nb_heap *heaps, double radius)
{
    const struct tc_calib_params *cp = &c->params;

    for (size_t i = 0; i < c->n; i++) {
        const struct kd_group *g =
            &c->groups[calib_group_of(c->samples[i].layout, c->samples[i].align)];

        heaps[i].k = cp->nb_k > 0 && cp->nb_k <= TC_CALIB_MAX_K ? cp->nb_k : 8;
        heaps[i].count = 0;
        heaps[i].max_d2 = radius * radius;
        calib_kd_query(c, g->lo, g->hi, c->pts[i], KD_SKIP_EXACT, &heaps[i]);
    }
}

int calib_fit_neighbours(struct tc_calib *c, bool choose)
{
    static const double scales[] = {1, 2, 4, 8};
    static const double lengths[] = {0.01, 0.02, 0.035, 0.05, 0.1, 0.2, 0.35, 0.6, 1.0};
    static const double betas[] = {0, 1, 2};
    static const double priors[] = {0.02, 0.1, 0.3, 1.0};
    struct tc_calib_params *cp = &c->params;
    struct nb_heap *heaps = malloc(c->n * sizeof(*heaps));
    double *err = malloc(c->n * sizeof(*err));
    double *pred = malloc(c->n * sizeof(*pred));
    double best = INFINITY, sum_ape = 0;
    size_t n_ape = 0;
    int ret = TC_OK;

    if (!heaps || !err || !pred) {
        ret = tc_error(TC_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    if (choose) {
        double best_scale = 1;

        /* The grid is cheap: the neighbours are found once per scale and
         * each (length, beta, prior) only reweights them. */
        for (size_t sc = 0; sc < TC_ARRAY_SIZE(scales); sc++) {
            cp->nb_scale_nk = scales[sc];
            build_trees(c);
            loo_heaps(c, heaps,
                      NB_RADIUS_LENGTHS * NB_MAX_WIDEN * lengths[TC_ARRAY_SIZE(lengths) - 1]);
            for (size_t a = 0; a < TC_ARRAY_SIZE(lengths); a++) {
                for (size_t bt = 0; bt < TC_ARRAY_SIZE(betas); bt++) {
                    double total[TC_ARRAY_SIZE(priors)] = {0};

                    /* the weights do not depend on the prior: once per row */
                    for (size_t i = 0; i < c->n; i++) {
                        double sw, swr;

                        calib_nb_sums(&heaps[i], c->resid, lengths[a], betas[bt], &sw, &swr, NULL);
                        for (size_t b = 0; b < TC_ARRAY_SIZE(priors); b++)
                            total[b] += fabs(c->resid[i] - (sw > 0 ? swr / (priors[b] + sw) : 0));
                    }
                    for (size_t b = 0; b < TC_ARRAY_SIZE(priors); b++) {
                        if (total[b] < best) {
                            best = total[b];
                            best_scale = scales[sc];
                            cp->nb_length = lengths[a];
                            cp->nb_beta = betas[bt];
                            cp->nb_prior = priors[b];
                        }
                    }
                }
            }
        }
        cp->nb_scale_nk = best_scale;
    }
    build_trees(c);
    /* A stored calibration carries its held-out statistics already. */
    if (!choose)
        goto cleanup;
    loo_heaps(c, heaps, NB_RADIUS_LENGTHS * NB_MAX_WIDEN * cp->nb_length);
    for (size_t i = 0; i < c->n; i++) {
        double corr =
            nb_correction(&heaps[i], c->resid, cp->nb_length, cp->nb_beta, cp->nb_prior, NULL);
        double fit = tc_calib_model_us(cp, &c->samples[i], c->samples[i].timing);

        pred[i] = calib_bracket(c, &c->samples[i], c->samples[i].timing, fit * exp(corr));
        err[i] = log(c->samples[i].time_us / pred[i]); /* log(true / held-out prediction) */
        if (c->samples[i].time_us >= 20) {
            sum_ape += fabs(exp(-err[i]) - 1);
            n_ape++;
        }
    }
    if (!n_ape) {
        for (size_t i = 0; i < c->n; i++)
            sum_ape += fabs(exp(-err[i]) - 1);
        n_ape = c->n;
    }
    cp->loo_mape = 100 * sum_ape / (double)n_ape;
    /* Quantiles per bin of predicted time; a bin with too few rows borrows
     * the pooled quantiles, and with too few rows overall the default
     * interval (±20%) stays. */
    {
        double lo_q = (1 - cp->interval_level) / 2, hi_q = 1 - lo_q;
        double pooled_lo, pooled_hi;
        size_t nb;

        double *vals = malloc(c->n * sizeof(*vals));

        if (!vals) {
            ret = tc_error(TC_ERR_NOMEM, "out of memory");
            goto cleanup;
        }
        for (size_t i = 0; i < c->n; i++)
            vals[i] = err[i];
        qsort(vals, c->n, sizeof(double), tc_cmp_double);
        pooled_lo = tc_quantile_sorted(vals, c->n, lo_q);
        pooled_hi = tc_quantile_sorted(vals, c->n, hi_q);
        for (int b = 0; b < TC_CALIB_TIME_BINS; b++) {
            nb = 0;
            for (size_t i = 0; i < c->n; i++)
                if (calib_time_bin(pred[i]) == b)
                    vals[nb++] = err[i];
            cp->bin_rows[b] = (int64_t)nb;
            if (nb >= 30) {
                qsort(vals, nb, sizeof(double), tc_cmp_double);
                cp->q_lo[b] = tc_quantile_sorted(vals, nb, lo_q);
                cp->q_hi[b] = tc_quantile_sorted(vals, nb, hi_q);
            } else if (c->n >= 10) {
                cp->q_lo[b] = pooled_lo;
                cp->q_hi[b] = pooled_hi;
            }
            /* an interval never claims more than the measurement noise floor */
            if (cp->q_lo[b] > -0.01)
                cp->q_lo[b] = -0.01;
            if (cp->q_hi[b] < 0.01)
                cp->q_hi[b] = 0.01;
        }
        free(vals);
    }
cleanup:
    free(heaps);
    free(err);
    free(pred);
    return ret;
}

/* Beyond 3 kernel lengths a weight (e^-4.5) adds little to a tier that
 * averages over other layers anyway. */
#define NB_BROAD_RADIUS_LENGTHS 3.0

/* The broad tier: the rows again, in trees at equal scales of log m, n, k
 * and batch. With choose, its kernel length and prior weight are chosen by
 * leaving out, for each row, every row of its (n, k): the error of a layer
 * the database never measured. The tier stays off unless it beats no
 * correction at all on that test. */
int calib_build_broad(struct tc_calib *c, bool choose)
{
    static const double lengths[] = {0.1, 0.2, 0.35, 0.6, 1.0};
    static const double priors[] = {0.1, 0.3, 1.0, 3.0, 10.0};
    struct tc_calib_params *cp = &c->params;
    struct tc_calib *b;
    double total[TC_ARRAY_SIZE(lengths)][TC_ARRAY_SIZE(priors)] = {{0}};
    double none = 0, best;
    size_t n = c->n;

    if (!choose && !(cp->nb2_length > 0))
        return TC_OK;
    b = calloc(1, sizeof(*b));
    if (!b)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    c->broad = b;
    b->n = n;
    b->params = *cp;
    b->params.nb_scale_nk = 1;
    b->samples = malloc(n * sizeof(*b->samples));
    b->pts = malloc(n * sizeof(*b->pts));
    b->split_dim = calloc(n, 1);
    b->resid = malloc(n * sizeof(*b->resid));
    if (!b->samples || !b->pts || !b->split_dim || !b->resid)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    /* the main tree permutes rows only within their groups: the group
     * ranges hold for the copy */
    memcpy(b->samples, c->samples, n * sizeof(*b->samples));
    memcpy(b->resid, c->resid, n * sizeof(*b->resid));
    memcpy(b->groups, c->groups, sizeof(b->groups));
    build_trees(b);
    if (!choose)
        return TC_OK;
    for (size_t i = 0; i < n; i++) {
        const struct kd_group *g =
            &b->groups[calib_group_of(b->samples[i].layout, b->samples[i].align)];
        double radius = NB_BROAD_RADIUS_LENGTHS * lengths[TC_ARRAY_SIZE(lengths) - 1];
        struct nb_heap h = {NB_BROAD_K, 0, radius * radius, {0}, {0}};

        calib_kd_query(b, g->lo, g->hi, b->pts[i], KD_SKIP_NK, &h);
        none += fabs(b->resid[i]);
        for (size_t a = 0; a < TC_ARRAY_SIZE(lengths); a++) {
            double sw, swr;

            calib_nb_sums(&h, b->resid, lengths[a], 0, &sw, &swr, NULL);
            for (size_t p = 0; p < TC_ARRAY_SIZE(priors); p++)
                total[a][p] += fabs(b->resid[i] - (sw > 0 ? swr / (priors[p] + sw) : 0));
        }
    }
    best = none;
    cp->nb2_length = 0;
    cp->nb2_prior = 1;
    for (size_t a = 0; a < TC_ARRAY_SIZE(lengths); a++) {
        for (size_t p = 0; p < TC_ARRAY_SIZE(priors); p++) {
            if (total[a][p] < best) {
                best = total[a][p];
                cp->nb2_length = lengths[a];
                cp->nb2_prior = priors[p];
            }
        }
    }
    b->params.nb2_length = cp->nb2_length;
    b->params.nb2_prior = cp->nb2_prior;
    if (!(cp->nb2_length > 0)) {
        tc_calib_free(b);
        c->broad = NULL;
    }
    return TC_OK;
}

/* The broad tier's correction at a query point (its tree's scale). */
double calib_broad_correction(const struct tc_calib *c, const struct tc_calib_params *cp,
                              const struct tc_calib_sample *s)
{
    const struct tc_calib *b = c->broad;
    const struct kd_group *g;
    double pt[KD_DIMS], radius, sw, swr;
    struct nb_heap h = {NB_BROAD_K, 0, 0, {0}, {0}};

    if (!b || !(cp->nb2_length > 0))
        return 0;
    g = &b->groups[calib_group_of(s->layout, s->align)];
    radius = NB_BROAD_RADIUS_LENGTHS * cp->nb2_length;
    h.max_d2 = radius * radius;
    calib_shape_point(&b->params, s->m, s->n, s->k, s->batch, pt);
    calib_kd_query(b, g->lo, g->hi, pt, KD_SKIP_NONE, &h);
    calib_nb_sums(&h, b->resid, cp->nb2_length, 0, &sw, &swr, NULL);
    return sw > 0 ? swr / (cp->nb2_prior + sw) : 0;
}
