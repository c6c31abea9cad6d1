/* The timing harness shared by every backend: warm-up, batches of
 * repetitions (each preceded by an untimed cache flush inside the backend),
 * stopping on the median's confidence interval or the per-shape budget. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector.h"
#include "stats.h"
#include "tc-internal.h"

/* Repetitions per backend call at most: GPU backends record one event pair
 * per repetition and synchronise once per call. */
#define BATCH_MAX 256
/* Warm-up batches after the first hold about this much work: long enough
 * for a stable median, short enough to follow a clock ramp. */
#define WARMUP_BATCH_MS 10.0

double tc_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tc_utc_now(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;

    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int tc_stats_compute(double *t, int n, struct tc_stats *out)
{
    /* 95% normal quantile for the binomial ranks of the median's CI */
    const double z = 1.959964;
    double half;
    long lo, hi;

    if (!t || n < 1 || !out)
        return tc_error(TC_ERR_INVALID, "tc_stats_compute: no samples");
    qsort(t, (size_t)n, sizeof(*t), tc_cmp_double);
    memset(out, 0, sizeof(*out));
    out->n = n;
    out->min_us = t[0];
    out->max_us = t[n - 1];
    for (int i = 0; i < n; i++)
        out->sum_us += t[i];
    out->median_us = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    /* Distribution-free interval: the ranks n/2 -+ z·sqrt(n)/2 of the sorted
     * sample (1-based) cover the true median with ~95% probability; timing
     * distributions are skewed, so no normality is assumed. */
    half = z * sqrt((double)n) / 2.0;
    lo = (long)floor((double)n / 2.0 - half);
    hi = (long)ceil((double)n / 2.0 + half);
    if (lo < 1)
        lo = 1;
    if (hi > n)
        hi = n;
    out->ci_lo_us = t[lo - 1];
    out->ci_hi_us = t[hi - 1];
    out->rel_ci =
        out->median_us > 0 ? (out->ci_hi_us - out->ci_lo_us) / 2.0 / out->median_us : INFINITY;
    return TC_OK;
}

void tc_harness_defaults(struct tc_harness_opts *o)
{
    /* every field, including the ones set later (stop, the resolution):
     * a caller's struct on the stack holds garbage */
    memset(o, 0, sizeof(*o));
    o->rel_ci = 0.01;
    o->max_time_ms = 2000;
    o->min_reps = 5;
    o->max_reps = 1000;
    o->warmup_reps = 2;
    o->warmup_ms = 100;
    o->timer_resolution_us = 0;
}

int tc_harness_group(double launch_us, double resolution_us)
{
    double g;

    if (!(resolution_us > 0) || !isfinite(launch_us) ||
        launch_us >= TC_GROUP_BELOW_RES * resolution_us)
        return 1;
    if (launch_us <= 0) /* below the timer's resolution */
        return TC_GROUP_MAX;
    g = ceil(TC_GROUP_TARGET_RES * resolution_us / launch_us);
    return g < TC_GROUP_MAX ? (int)g : TC_GROUP_MAX;
}

bool tc_warmup_done(const struct tc_harness_opts *o, int reps, double elapsed_ms, double prev_us,
                    double last_us)
{
    if (reps < o->warmup_reps)
        return false;
    if (!(o->warmup_ms > 0))
        return true;
    if (elapsed_ms < o->warmup_ms)
        return false;
    /* clocks ramp in steps: a reading that still moves is not warm yet */
    if (isfinite(prev_us) && isfinite(last_us) &&
        fabs(last_us - prev_us) <= TC_WARMUP_SETTLED * fmax(prev_us, last_us))
        return true;
    return elapsed_ms >= TC_WARMUP_MAX_FACTOR * o->warmup_ms;
}

/* ------------------------------------------------------------------------ */

const struct tc_backend_ops *tc_backend_find(const char *name)
{
#if HAVE_CPU_BACKEND
    if (name && !strcmp(name, tc_backend_cpu.name))
        return &tc_backend_cpu;
#endif
    return NULL;
}

/* ------------------------------------------------------------------------ */

struct samples {
    double *total, *part[3];
    int n, cap;
};

static void samples_free(struct samples *s)
{
    free(s->total);
    for (int p = 0; p < 3; p++)
        free(s->part[p]);
}

static int samples_reserve(struct samples *s, int cap)
{
    double *t = realloc(s->total, (size_t)cap * sizeof(double));

    if (!t)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    s->total = t;
    for (int p = 0; p < 3; p++) {
        if (!(t = realloc(s->part[p], (size_t)cap * sizeof(double))))
            return tc_error(TC_ERR_NOMEM, "out of memory");
        s->part[p] = t;
    }
    s->cap = cap;
    return TC_OK;
}

/* Runs reps repetitions of `*group` launches each in calls of at most
 * BATCH_MAX; appends to s. *group becomes what the backend did. Returns 1,
 * with fewer repetitions done, when asked to give up (stop, a second
 * SIGINT), checked before each call. */
static int run_reps(const struct tc_backend_ops *ops, struct tc_backend *b, int reps, int *group,
                    struct samples *s, bool *has_parts, struct tc_outcome *outcome,
                    double *flush_us, const volatile int *stop)
{
    while (reps > 0) {
        int r = reps < BATCH_MAX ? reps : BATCH_MAX;
        struct tc_rep_times t;
        int err;

        if (stop && *stop >= 2)
            return 1;

        if (s->n + r > s->cap && (err = samples_reserve(s, (s->n + r) * 2)) < 0)
            return err;
        t.total_us = s->total + s->n;
        for (int p = 0; p < 3; p++) {
            t.part_us[p] = s->part[p] + s->n;
            t.part_us[p][0] = NAN;
        }
        t.untimed_us = 0;
        t.group = *group;
        if ((err = ops->run(b, r, &t, outcome)) < 0)
            return err;
        *group = t.group > 1 ? t.group : 1;
        *flush_us += t.untimed_us;
        if (outcome->status != TC_STATUS_OK)
            return TC_OK;
        *has_parts = !isnan(t.part_us[0][0]);
        s->n += r;
        reps -= r;
    }
    return TC_OK;
}

static int stats_of(const double *v, int n, struct tc_stats *out)
{
    double *copy = malloc((size_t)n * sizeof(*copy));
    int err;

    if (!copy)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    memcpy(copy, v, (size_t)n * sizeof(*copy));
    err = tc_stats_compute(copy, n, out);
    free(copy);
    return err;
}

/* The median of v[0..n) (reordered). */
static double median_of(double *v, int n)
{
    struct tc_stats st;

    return n > 0 && tc_stats_compute(v, n, &st) == TC_OK ? st.median_us : NAN;
}

/* Untimed repetitions until tc_warmup_done; *per_rep_s: the host time of
 * one repetition in the last batch, *launch_us its median time (NAN when
 * there was no warm-up). */
static int warm_up(const struct tc_backend_ops *ops, struct tc_backend *b,
                   const struct tc_harness_opts *o, struct tc_measurement *m, double *per_rep_s,
                   double *launch_us, double *flush_us)
{
    struct samples warm = {0};
    double w0 = tc_now_s(), prev = NAN, last = NAN;
    int batch = o->warmup_reps > 0 ? o->warmup_reps : 1, err = TC_OK;

    *per_rep_s = 0;
    *launch_us = NAN;
    if (o->warmup_reps <= 0 && !(o->warmup_ms > 0))
        return TC_OK;
    for (;;) {
        double t0 = tc_now_s(), elapsed_ms;
        int one = 1;

        warm.n = 0;
        if ((err = run_reps(ops, b, batch, &one, &warm, &m->has_parts, &m->outcome, flush_us,
                            o->stop)) < 0 ||
            m->outcome.status != TC_STATUS_OK)
            break;
        if (err == 1) { /* given up: the measure loop sees it too */
            err = TC_OK;
            break;
        }
        m->warmup_reps += batch;
        *per_rep_s = (tc_now_s() - t0) / batch;
        prev = last;
        last = median_of(warm.total, warm.n);
        elapsed_ms = (tc_now_s() - w0) * 1e3;
        if (tc_warmup_done(o, m->warmup_reps, elapsed_ms, prev, last))
            break;
        batch = *per_rep_s > 0 ? (int)(WARMUP_BATCH_MS * 1e-3 / *per_rep_s) : BATCH_MAX;
        if (batch < 1)
            batch = 1;
        if (batch > BATCH_MAX)
            batch = BATCH_MAX;
    }
    m->warmup_ms = (tc_now_s() - w0) * 1e3;
    *launch_us = last;
    samples_free(&warm);
    return err;
}

int tc_harness_measure(const struct tc_backend_ops *ops, struct tc_backend *b,
                       const struct tc_harness_opts *o, const struct tc_shape *s,
                       struct tc_measurement *m)
{
    struct samples smp = {0};
    double t_begin = tc_now_s(), start, budget_s = o->max_time_ms / 1000.0, per_rep_s;
    double flush_us = 0, launch_us;
    int err, batch;

    memset(m, 0, sizeof(*m));
    m->outcome.status = TC_STATUS_OK;
    if ((err = ops->prepare(b, s, &m->outcome)) < 0 || m->outcome.status != TC_STATUS_OK)
        goto out;
    /* the budget is for repetitions: filling large operands from the host
     * (seconds for GBs) must not use it up */
    start = tc_now_s();
    /* Warm-up: first calls pay for lazy initialisation, kernel loading and
     * clock ramp-up; they also tell how long one repetition takes. */
    if ((err = warm_up(ops, b, o, m, &per_rep_s, &launch_us, &flush_us)) < 0 ||
        m->outcome.status != TC_STATUS_OK)
        goto out;
    /* too short for the timer alone: samples of back-to-back groups */
    m->group = tc_harness_group(launch_us, o->timer_resolution_us);
    per_rep_s *= m->group;
    batch = o->min_reps > 0 ? o->min_reps : 1;
    for (;;) {
        double left_s = budget_s - (tc_now_s() - start);

        if (per_rep_s > 0 && smp.n >= o->min_reps && batch * per_rep_s > left_s)
            batch = (int)(left_s / per_rep_s);
        if (batch > o->max_reps - smp.n)
            batch = o->max_reps - smp.n;
        if (batch < 1)
            batch = 1;
        if ((err = run_reps(ops, b, batch, &m->group, &smp, &m->has_parts, &m->outcome, &flush_us,
                            o->stop)) < 0 ||
            m->outcome.status != TC_STATUS_OK)
            goto out;
        /* asked to stop now: the shape is not finished, so not stored */
        if (err == 1 || (o->stop && *o->stop >= 2)) {
            m->abandoned = true;
            err = TC_OK;
            goto out;
        }
        if ((err = stats_of(smp.total, smp.n, &m->total)) < 0)
            goto out;
        if (smp.n >= o->min_reps && m->total.rel_ci <= o->rel_ci) {
            m->converged = true;
            break;
        }
        if (smp.n >= o->max_reps || tc_now_s() - start >= budget_s)
            break;
        per_rep_s = (tc_now_s() - start) / smp.n;
        /* grow geometrically: the CI shrinks with sqrt(n) */
        batch = smp.n;
    }
    if (m->has_parts)
        for (int p = 0; p < 3; p++)
            if ((err = stats_of(smp.part[p], smp.n, &m->parts[p])) < 0)
                goto out;
    err = TC_OK;
out:
    m->wall_ms = (tc_now_s() - t_begin) * 1000.0;
    m->flush_ms = flush_us / 1000.0;
    samples_free(&smp);
    return err;
}
