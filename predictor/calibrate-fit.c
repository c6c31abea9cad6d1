/* The parametric model of the calibration (calibrate.h) and its robust fit:
 * Gauss-Newton / Levenberg-Marquardt with Huber weights on log time, weak
 * priors, and the table of kernel configurations with a factor of their
 * own. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate-internal.h"
#include "hash.h"
#include "stats.h"
#include "tc-internal.h"

/* ------------------------------------------------------------------------ */
/* The parametric model                                                      */
/* ------------------------------------------------------------------------ */

void tc_calib_parts(const struct tc_gemm_prediction *pred, double *compute_us, double *memory_us,
                    double *overhead_us)
{
    double overhead = pred->overhead_us > 0 ? pred->overhead_us : 0;
    double compute = pred->compute_us > 0 ? pred->compute_us : 0;
    double memory = pred->memory_us > 0 ? pred->memory_us : 0;
    double body = pred->time_us - overhead;
    double mx = compute > memory ? compute : memory;

    /* A model that fills no parts is rescaled as one compute-like term. */
    if (mx <= 0 || body <= 0) {
        if (body <= 0) {
            *overhead_us = pred->time_us;
            *compute_us = 0;
        } else {
            *overhead_us = overhead;
            *compute_us = body;
        }
        *memory_us = 0;
        return;
    }
    /* Wave quantization, pipeline overlap and the like sit between the parts
     * and the analytical total; scaling both parts by one factor keeps the
     * bound and makes the formula reproduce the analytical time at scale 1. */
    *compute_us = compute * body / mx;
    *memory_us = memory * body / mx;
    *overhead_us = overhead;
}

uint32_t tc_calib_kernel_hash(const char *name)
{
    uint32_t h;

    if (!name || !*name)
        return 0;
    h = tc_fnv1a32(name, strlen(name), TC_FNV1A32_SEED);
    return h ? h : 1;
}

int calib_kernel_slot(const struct tc_calib_params *cp, uint32_t hash)
{
    if (hash)
        for (int j = 0; j < cp->n_kernels; j++)
            if (cp->kernel_hash[j] == hash)
                return j;
    return -1;
}

double calib_kernel_factor(const struct tc_calib_params *cp, const struct tc_calib_sample *s)
{
    return s->kernel_slot >= 0 && s->kernel_slot < cp->n_kernels ? cp->kernel_scale[s->kernel_slot]
                                                                 : 1.0;
}

static double body_us(const struct tc_calib_params *cp, const struct tc_calib_sample *s)
{
    double c = cp->c_compute * calib_kernel_factor(cp, s) * s->compute_us;
    double mem = cp->c_memory * s->memory_us;
    unsigned al = (unsigned)s->align < TC_CALIB_ALIGN_CLASSES ? (unsigned)s->align : 0;

    return (c > mem ? c : mem) * cp->align_factor[al];
}

/* A method's typical host cost was measured above the analytical model's
 * kernel time, fixed cost included (calibrate-timing.c): with it, the
 * model's own fixed cost stands unscaled, or the launch and fill that the
 * typical figure already holds would count twice. */
double calib_overhead_scale(const struct tc_calib_params *cp, unsigned timing)
{
    return cp->host_typical && timing != TC_TIMING_KERNEL ? 1.0 : cp->c_overhead;
}

double tc_calib_model_us(const struct tc_calib_params *cp, const struct tc_calib_sample *s,
                         enum tc_timing_class timing)
{
    unsigned t = (unsigned)timing < TC_TIMING_COUNT ? (unsigned)timing : 0;

    /* A typical host cost (28 us for every host-timed method) is at least
     * the method's floor (tc_timing_floor_us), so no clamp is needed here.
     * host_us is a plain GEMM call's; the op's own extra is a property of
     * its code path (calibrate-timing.c), never fitted. */
    return calib_overhead_scale(cp, t) * s->overhead_us + body_us(cp, s) + cp->host_us[t] +
           tc_timing_op_extra_us((enum tc_timing_class)t, s->op);
}

/* ------------------------------------------------------------------------ */
/* Robust fit: Gauss-Newton / Levenberg-Marquardt with Huber weights on log  */
/* time, and weak priors that keep unidentifiable scales at 1                */
/* ------------------------------------------------------------------------ */

enum {
    P_LOG_CC = 0,
    P_LOG_CM,
    P_LOG_CO,
    P_LOG_A1, /* align classes 1..3; class 0 (128-byte) is the reference */
    P_LOG_A2,
    P_LOG_A3,
    P_H_EVENT, /* host µs per timing class 1..3 */
    P_H_WALL,
    P_H_WALL_MAX,
    P_KERNEL0, /* log kernel factors, TC_CALIB_MAX_KERNELS of them */
    P_COUNT = P_KERNEL0 + TC_CALIB_MAX_KERNELS
};

/* Prior means and widths. Scales are ratios to the analytical model, so a
 * log-normal prior centred on 1 that allows a factor ~2 either way. Host
 * costs (µs): CUDA events around a PyTorch op add its launch gap and extra
 * kernels (the development set's event-timed rows never go below ~30 µs);
 * a wall clock with a synchronize per call adds ~18-36 µs depending on the
 * host (see calibrate-timing.c); the slowest of many calls as much. They
 * matter only for small data sets: a few dozen rows must not move a host
 * cost far from what the method costs. */
static const double prior_mean[P_COUNT] = {0, 0, 0, 0, 0, 0, 15, 30, 30};
/* Kernel factors: tile configurations differ by some percent in MMA
 * efficiency, so their prior is narrow and they only move with many rows. */
#define KERNEL_PRIOR_WIDTH 0.15
static const double prior_width[P_COUNT] = {
    0.7,
    0.7,
    0.7,
    0.7,
    0.7,
    0.7,
    15,
    10,
    15,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
    KERNEL_PRIOR_WIDTH,
};

static void theta_to_params(const double *theta, struct tc_calib_params *cp)
{
    cp->c_compute = exp(theta[P_LOG_CC]);
    cp->c_memory = exp(theta[P_LOG_CM]);
    cp->c_overhead = exp(theta[P_LOG_CO]);
    cp->align_factor[0] = 1;
    for (int j = 1; j < TC_CALIB_ALIGN_CLASSES; j++)
        cp->align_factor[j] = exp(theta[P_LOG_A1 + j - 1]);
    cp->host_us[TC_TIMING_KERNEL] = 0;
    for (int t = 1; t < TC_TIMING_COUNT; t++)
        cp->host_us[t] = theta[P_H_EVENT + t - 1];
    for (int j = 0; j < TC_CALIB_MAX_KERNELS; j++)
        cp->kernel_scale[j] = exp(theta[P_KERNEL0 + j]);
}

/* Solves the small symmetric positive system a·x = b in place (Cholesky).
 * Returns false if a is not positive definite. */
static bool solve_spd(double *a, double *b, int n)
{
    for (int j = 0; j < n; j++) {
        double d = a[j * n + j];

        for (int k = 0; k < j; k++)
            d -= a[j * n + k] * a[j * n + k];
        if (d <= 1e-300)
            return false;
        d = sqrt(d);
        a[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double s = a[i * n + j];

            for (int k = 0; k < j; k++)
                s -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = s / d;
        }
    }
    for (int i = 0; i < n; i++) {
        double s = b[i];

        for (int k = 0; k < i; k++)
            s -= a[i * n + k] * b[k];
        b[i] = s / a[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];

        for (int k = i + 1; k < n; k++)
            s -= a[k * n + i] * b[k];
        b[i] = s / a[i * n + i];
    }
    return true;
}

struct fit_work {
    const struct tc_calib_params *table; /* the kernel table */
    const struct tc_calib_sample *s;
    size_t n;
    bool active[P_COUNT];
    double *resid;   /* n */
    double *scratch; /* n */
};

/* Robust scale (1.4826·MAD) of the current residuals, floored so that a
 * perfect fit does not make every weight vanish. */
static double robust_scale(struct fit_work *w)
{
    double mad;

    for (size_t i = 0; i < w->n; i++)
        w->scratch[i] = fabs(w->resid[i]);
    qsort(w->scratch, w->n, sizeof(double), tc_cmp_double);
    mad = tc_quantile_sorted(w->scratch, w->n, 0.5) * 1.4826;
    return mad < 0.01 ? 0.01 : mad;
}

/* Robust objective: Huber loss of the residuals at scale `scale`, plus the
 * priors, at theta. Fills w->resid. */
static double objective(struct fit_work *w, const double *theta, double scale)
{
    struct tc_calib_params cp;
    double huber = 1.345 * scale;
    double cost = 0;

    cp = *w->table;
    theta_to_params(theta, &cp);
    for (size_t i = 0; i < w->n; i++) {
        double f = tc_calib_model_us(&cp, &w->s[i], w->s[i].timing);
        double r = log(w->s[i].time_us) - log(f > 1e-9 ? f : 1e-9);
        double a = fabs(r);

        w->resid[i] = r;
        cost += a <= huber ? 0.5 * r * r : huber * (a - 0.5 * huber);
    }
    cost /= scale * scale;
    for (int j = 0; j < P_COUNT; j++) {
        double z = (theta[j] - prior_mean[j]) / prior_width[j];

        if (w->active[j])
            cost += 0.5 * z * z;
    }
    return cost;
}

void calib_fit_params(const struct tc_calib_sample *s, size_t n, double *resid, double *scratch,
                      struct tc_calib_params *cp)
{
    struct fit_work w = {cp, s, n, {false}, resid, scratch};
    double theta[P_COUNT], scale, cost, lambda = 1e-3;
    size_t align_rows[TC_CALIB_ALIGN_CLASSES] = {0}, timing_rows[TC_TIMING_COUNT] = {0};
    size_t compute_rows = 0, memory_rows = 0, overhead_rows = 0;

    for (int j = 0; j < P_COUNT; j++)
        theta[j] = prior_mean[j];
    for (size_t i = 0; i < n; i++) {
        align_rows[(unsigned)s[i].align < TC_CALIB_ALIGN_CLASSES ? s[i].align : 0]++;
        timing_rows[s[i].timing]++;
        if (s[i].compute_us >= s[i].memory_us && s[i].compute_us > 0)
            compute_rows++;
        if (s[i].memory_us > s[i].compute_us)
            memory_rows++;
        if (s[i].overhead_us > 0)
            overhead_rows++;
    }
    /* Only what the data can inform is fitted; the rest stays at the
     * analytical model's value (scale 1) or the prior host cost. An
     * alignment penalty needs both its class and the reference class. */
    w.active[P_LOG_CC] = compute_rows >= 3;
    w.active[P_LOG_CM] = memory_rows >= 3;
    /* With host-timed rows only, the launch cost cannot be told apart from
     * the host cost a timing method adds: the host term takes both. */
    w.active[P_LOG_CO] = overhead_rows >= 3 && timing_rows[TC_TIMING_KERNEL] >= 3;
    for (int j = 1; j < TC_CALIB_ALIGN_CLASSES; j++)
        w.active[P_LOG_A1 + j - 1] = align_rows[j] >= 5 && align_rows[0] >= 5;
    for (int t = 1; t < TC_TIMING_COUNT; t++)
        w.active[P_H_EVENT + t - 1] = timing_rows[t] >= 3;
    if (!w.active[P_LOG_CC] && !w.active[P_LOG_CM])
        w.active[P_LOG_CC] = true;
    for (int j = 0; j < cp->n_kernels; j++)
        w.active[P_KERNEL0 + j] = w.active[P_LOG_CC];

    objective(&w, theta, 1);
    scale = robust_scale(&w);
    cost = objective(&w, theta, scale);
    for (int iter = 0; iter < 60; iter++) {
        double jtj[P_COUNT * P_COUNT] = {0}, jtr[P_COUNT] = {0};
        double a[P_COUNT * P_COUNT], b[P_COUNT], trial[P_COUNT], trial_cost;
        int idx[P_COUNT], na = 0;
        struct tc_calib_params cur;
        double huber = 1.345 * scale;

        cur = *cp;
        theta_to_params(theta, &cur);
        for (int j = 0; j < P_COUNT; j++)
            if (w.active[j])
                idx[na++] = j;
        for (size_t i = 0; i < n; i++) {
            const struct tc_calib_sample *si = &s[i];
            double grad[P_COUNT] = {0};
            double c = cur.c_compute * si->compute_us, mem = cur.c_memory * si->memory_us;
            unsigned al = (unsigned)si->align < TC_CALIB_ALIGN_CLASSES ? si->align : 0;
            double af = cur.align_factor[al];
            double f = tc_calib_model_us(&cur, si, si->timing);
            double r = resid[i], wt = fabs(r) <= huber ? 1 : huber / fabs(r);

            if (f <= 1e-9)
                continue;
            /* d log f / d theta */
            c *= calib_kernel_factor(&cur, si);
            if (c >= mem) {
                grad[P_LOG_CC] = c * af / f;
                if (si->kernel_slot >= 0 && si->kernel_slot < cur.n_kernels)
                    grad[P_KERNEL0 + si->kernel_slot] = c * af / f;
            } else {
                grad[P_LOG_CM] = mem * af / f;
            }
            grad[P_LOG_CO] = cur.c_overhead * si->overhead_us / f;
            if (al > 0)
                grad[P_LOG_A1 + al - 1] = (c > mem ? c : mem) * af / f;
            if (si->timing > 0)
                grad[P_H_EVENT + si->timing - 1] = 1 / f;
            for (int x = 0; x < na; x++) {
                double gx = grad[idx[x]] * wt;

                if (gx == 0)
                    continue;
                jtr[x] += gx * r;
                for (int y = 0; y < na; y++)
                    jtj[x * na + y] += gx * grad[idx[y]];
            }
        }
        /* Priors enter as pseudo-observations in units of the residual
         * scale, so that they weigh the same whatever the data's noise. */
        for (int x = 0; x < na; x++) {
            double pw = scale / prior_width[idx[x]];

            jtj[x * na + x] += pw * pw;
            jtr[x] -= pw * pw * (theta[idx[x]] - prior_mean[idx[x]]);
        }
        for (;;) {
            memcpy(a, jtj, sizeof(a));
            memcpy(b, jtr, sizeof(b));
            for (int x = 0; x < na; x++)
                a[x * na + x] *= 1 + lambda;
            if (!solve_spd(a, b, na)) {
                lambda *= 10;
                if (lambda > 1e8)
                    break;
                continue;
            }
            memcpy(trial, theta, sizeof(trial));
            for (int x = 0; x < na; x++) {
                double step = b[x];

                /* log scales move at most a factor e per step */
                if (idx[x] < P_H_EVENT && fabs(step) > 1)
                    step = step > 0 ? 1 : -1;
                trial[idx[x]] += step;
                if (idx[x] >= P_H_EVENT && trial[idx[x]] < 0)
                    trial[idx[x]] = 0;
            }
            trial_cost = objective(&w, trial, scale);
            if (trial_cost <= cost) {
                double change = 0;

                for (int j = 0; j < P_COUNT; j++)
                    change += fabs(trial[j] - theta[j]);
                memcpy(theta, trial, sizeof(theta));
                lambda = lambda > 1e-6 ? lambda / 3 : lambda;
                if (change < 1e-7)
                    iter = 1000;
                break;
            }
            lambda *= 10;
            if (lambda > 1e8) {
                iter = 1000;
                break;
            }
        }
        /* Re-estimate the scale of the Huber weights (IRLS). */
        objective(&w, theta, scale);
        scale = robust_scale(&w);
        cost = objective(&w, theta, scale);
    }
    theta_to_params(theta, cp);
}

static int cmp_count_desc(const void *a, const void *b)
{
    const size_t *x = a, *y = b; /* {count, hash} pairs */

    return (x[0] < y[0]) - (x[0] > y[0]);
}

/* The kernel table: the configurations of at least 20 compute-bound rows,
 * most used first. Returns TC_OK or NOMEM. */
int calib_kernel_table(const struct tc_calib_sample *s, size_t n, struct tc_calib_params *cp)
{
    size_t(*pairs)[2] = calloc(n, sizeof(*pairs));
    size_t used = 0;

    if (!pairs)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        size_t j;

        if (!s[i].kernel_hash || s[i].compute_us < s[i].memory_us)
            continue;
        for (j = 0; j < used; j++)
            if (pairs[j][1] == s[i].kernel_hash)
                break;
        if (j == used) {
            if (used == n)
                continue;
            pairs[used][0] = 0;
            pairs[used++][1] = s[i].kernel_hash;
        }
        pairs[j][0]++;
    }
    qsort(pairs, used, sizeof(*pairs), cmp_count_desc);
    cp->n_kernels = 0;
    for (size_t j = 0; j < used && cp->n_kernels < TC_CALIB_MAX_KERNELS; j++) {
        if (pairs[j][0] < 20)
            break;
        cp->kernel_hash[cp->n_kernels] = (uint32_t)pairs[j][1];
        cp->kernel_scale[cp->n_kernels++] = 1;
    }
    free(pairs);
    return TC_OK;
}
