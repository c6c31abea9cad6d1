/* The statistics of predictions against measurements that `tilecast eval`
 * (GEMM and attention rows) reports, and the host cost a measurement's
 * timing method adds, public so that the bindings compute the same
 * figures as the command. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "stats.h"
#include "tc-internal.h"

TC_API int tc_timing_host_cost(const char *timing, struct tc_timing_cost *out)
{
    enum tc_timing_class c;

    if (!out)
        return tc_error(TC_ERR_INVALID, "tc_timing_host_cost: missing argument");
    memset(out, 0, sizeof(*out));
    c = tc_timing_parse(timing);
    out->typical_us = tc_timing_default_host_us(c);
    out->floor_us = tc_timing_floor_us(c);
    tc_timing_host_range_us(c, &out->lo_us, &out->hi_us);
    out->linear_us = tc_timing_op_extra_us(c, TC_GEMM_OP_LINEAR);
    return TC_OK;
}

struct ranked {
    double v;
    size_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;

    return x->v < y->v ? -1 : x->v > y->v;
}

/* Average ranks (ties share the mean rank) of v into rank. */
static bool ranks(const double *v, size_t n, double *rank)
{
    struct ranked *r = malloc(n * sizeof(*r));

    if (!r)
        return false;
    for (size_t i = 0; i < n; i++) {
        r[i].v = v[i];
        r[i].i = i;
    }
    qsort(r, n, sizeof(*r), cmp_ranked);
    for (size_t i = 0; i < n;) {
        size_t j = i;

        while (j + 1 < n && r[j + 1].v == r[i].v)
            j++;
        for (size_t t = i; t <= j; t++)
            rank[r[t].i] = 0.5 * (double)(i + j) + 1.0;
        i = j + 1;
    }
    free(r);
    return true;
}

/* Spearman's rho: the Pearson correlation of the ranks. */
TC_API double tc_spearman(const double *x, const double *y, size_t n)
{
    double *rx = NULL, *ry = NULL, mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0, rho = NAN;

    if (n < 3 || !x || !y)
        return NAN;
    rx = malloc(n * sizeof(*rx));
    ry = malloc(n * sizeof(*ry));
    if (!rx || !ry || !ranks(x, n, rx) || !ranks(y, n, ry))
        goto done;
    for (size_t i = 0; i < n; i++) {
        mx += rx[i];
        my += ry[i];
    }
    mx /= (double)n;
    my /= (double)n;
    for (size_t i = 0; i < n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    if (sxx > 0 && syy > 0)
        rho = sxy / sqrt(sxx * syy);
done:
    free(rx);
    free(ry);
    return rho;
}

TC_API int tc_eval_stats(const struct tc_eval_point *points, size_t n, size_t stride,
                         struct tc_eval_stats *out)
{
    double *x, *y, sum = 0;

    if (!out || (n && !points))
        return tc_error(TC_ERR_INVALID, "tc_eval_stats: missing argument");
    if (!stride)
        stride = sizeof(*points);
    if (stride < sizeof(*points))
        return tc_error(TC_ERR_INVALID, "tc_eval_stats: stride %zu is smaller than a point",
                        stride);
    memset(out, 0, sizeof(*out));
    out->mape_pct = out->median_ape_pct = out->p90_ape_pct = out->bias_pct = out->spearman_tflops =
        NAN;
    if (!n)
        return TC_OK;
    if (!(x = malloc(n * 2 * sizeof(double))))
        return tc_error(TC_ERR_NOMEM, "out of memory for the statistics of %zu points", n);
    y = x + n;
#define POINT(i) ((const struct tc_eval_point *)((const char *)points + (i)*stride))
    for (size_t j = 0; j < n; j++) {
        sum += POINT(j)->ape_pct;
        x[j] = POINT(j)->signed_pct;
    }
    out->mape_pct = sum / (double)n;
    qsort(x, n, sizeof(*x), tc_cmp_double);
    out->bias_pct = tc_quantile_sorted(x, n, 0.5);
    for (size_t j = 0; j < n; j++)
        x[j] = POINT(j)->ape_pct;
    qsort(x, n, sizeof(*x), tc_cmp_double);
    out->median_ape_pct = tc_quantile_sorted(x, n, 0.5);
    out->p90_ape_pct = tc_quantile_sorted(x, n, 0.9);
    for (size_t j = 0; j < n; j++) {
        x[j] = POINT(j)->meas_tflops;
        y[j] = POINT(j)->pred_tflops;
    }
#undef POINT
    out->spearman_tflops = tc_spearman(x, y, n);
    free(x);
    return TC_OK;
}
