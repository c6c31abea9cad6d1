/* The predictor object: specs, databases, cached calibrations, and the
 * choice of source for each prediction:
 *
 *   measured     the shape was measured on this GPU and dtype: the
 *                measurement, its spread as the interval (one of the
 *                query's timing class first, else one of any class, with
 *                a note that says how it was timed);
 *   calibrated   this GPU and dtype have measured rows: the fitted model
 *                plus the neighbour correction;
 *   transferred  only another GPU (or a compatible dtype of this GPU) has
 *                rows: the target's spec with the source's fitted fixed
 *                cost and alignment penalties, and its efficiencies within
 *                one architecture family (tc_calib_transfer_params);
 *   analytical   nothing applicable: the model from the spec alone.
 *
 * Which databases: those added with tc_predictor_add_db; when none was
 * added, the shipped prebuilt database of each GPU (opened read-only, on
 * the first query for that GPU). A user's own databases replace the
 * prebuilt ones, so that a held-out evaluation never sees shipped rows.
 *
 * Everything a query needs is resolved once per (GPU, dtype) and cached:
 * the hot path runs the analytical model, a hash lookup and a k-d tree
 * query, with no SQL and no allocation. Not thread-safe: one predictor per
 * thread.
 *
 * This file holds the object and the prediction path; the databases and the
 * choice of source are in predictor-sources.c, the choice of a transfer's
 * source in predictor-transfer.c. */
#include "bounds.h"
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "gemm-internal.h"
#include "predictor-internal.h"

/* ------------------------------------------------------------------------ */
/* Public API                                                                */
/* ------------------------------------------------------------------------ */

TC_API struct tc_predictor *tc_predictor_new(const struct tc_specs *specs)
{
    struct tc_predictor *p;

    if (!specs) {
        tc_error(TC_ERR_INVALID, "tc_predictor_new: no specs");
        return NULL;
    }
    p = calloc(1, sizeof(*p));
    if (!p) {
        tc_error(TC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    p->specs = specs;
    p->use_prebuilt = true;
    p->allow_transfer = true;
    p->note = "";
    return p;
}

static void drop_entries(struct tc_predictor *p)
{
    for (size_t i = 0; i < p->n_entries; i++) {
        tc_calib_free(p->entries[i]->calib);
        free(p->entries[i]);
    }
    free(p->entries);
    p->entries = NULL;
    p->n_entries = 0;
    p->last = NULL;
    p->note = "";
    for (size_t i = 0; i < p->n_attn; i++) {
        free(p->attn[i]->set.rows);
        free(p->attn[i]->set.fits);
        free(p->attn[i]);
    }
    free(p->attn);
    p->attn = NULL;
    p->n_attn = 0;
}

TC_API void tc_predictor_free(struct tc_predictor *p)
{
    if (!p)
        return;
    drop_entries(p);
    for (size_t i = 0; i < p->n_dbs; i++)
        pred_db_free(p->dbs[i]);
    for (size_t i = 0; i < p->n_prebuilt; i++)
        pred_db_free(p->prebuilt[i]);
    free(p->dbs);
    free(p->prebuilt);
    free(p);
}

TC_API int tc_predictor_add_db(struct tc_predictor *p, const char *path)
{
    struct pred_db *d;
    int err;

    if (!p || !path || !*path)
        return tc_error(TC_ERR_INVALID, "tc_predictor_add_db: no predictor or path");
    d = pred_db_open(path, false, &err);
    if (!d)
        return err;
    err = pred_push_db(&p->dbs, &p->n_dbs, d);
    if (err < 0) {
        pred_db_free(d);
        return err;
    }
    /* Cached states were resolved without this database. */
    drop_entries(p);
    return TC_OK;
}

struct tc_attn_rows *tc_predictor_attention_rows(struct tc_predictor *p, const char *gpu_id,
                                                 enum tc_attn_impl impl, enum tc_dtype dtype,
                                                 bool backward, int *err)
{
    struct pred_db *dbs[64];
    struct attn_set *a, **grown;
    size_t n_dbs;

    *err = TC_OK;
    if (!p || !gpu_id || p->analytical_only)
        return NULL;
    for (size_t i = 0; i < p->n_attn; i++) {
        a = p->attn[i];
        if (a->impl == impl && a->dtype == dtype && a->backward == backward &&
            strcmp(a->gpu_id, gpu_id) == 0)
            return &a->set;
    }
    a = calloc(1, sizeof(*a));
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): the elements are pointers */
    grown = realloc(p->attn, (p->n_attn + 1) * sizeof(*p->attn));
    if (grown)
        p->attn = grown;
    if (!a || !grown) {
        free(a);
        *err = tc_error(TC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    tc_strlcpy(a->gpu_id, gpu_id, sizeof(a->gpu_id));
    a->impl = impl;
    a->dtype = dtype;
    a->backward = backward;
    n_dbs = pred_dbs_for(p, gpu_id, dbs, TC_ARRAY_SIZE(dbs));
    for (size_t i = 0; i < n_dbs; i++) {
        struct tc_attention_row *rows, *all;
        size_t n;

        *err = tc_db_attention_rows(dbs[i]->db, gpu_id, impl, dtype, backward, &rows, &n);
        if (*err < 0)
            goto fail;
        if (!n)
            continue;
        all = realloc(a->set.rows, (a->set.n + n) * sizeof(*all));
        if (!all) {
            free(rows);
            *err = tc_error(TC_ERR_NOMEM, "out of memory");
            goto fail;
        }
        memcpy(all + a->set.n, rows, n * sizeof(*rows));
        a->set.rows = all;
        a->set.n += n;
        free(rows);
    }
    p->attn[p->n_attn++] = a;
    return &a->set;
fail:
    free(a->set.rows);
    free(a);
    return NULL;
}

TC_API void tc_predictor_use_prebuilt(struct tc_predictor *p, bool on)
{
    if (p && p->use_prebuilt != on) {
        p->use_prebuilt = on;
        drop_entries(p);
    }
}

TC_API void tc_predictor_set_analytical(struct tc_predictor *p, bool on)
{
    if (p)
        p->analytical_only = on;
}

TC_API void tc_predictor_allow_transfer(struct tc_predictor *p, bool on)
{
    if (p && p->allow_transfer != on) {
        p->allow_transfer = on;
        for (size_t i = 0; i < p->n_entries; i++) {
            p->entries[i]->resolved = false;
            p->entries[i]->note[0] = '\0';
        }
        p->last = NULL;
    }
}

TC_API int tc_predictor_set_timing(struct tc_predictor *p, const char *timing)
{
    enum tc_timing_class t;

    if (!p)
        return tc_error(TC_ERR_INVALID, "tc_predictor_set_timing: no predictor");
    t = tc_timing_parse(timing);
    if (t != p->timing) {
        /* the source of a transfer depends on the method asked for (a
         * calibrated entry's note is its own rows', kept) */
        p->timing = t;
        for (size_t i = 0; i < p->n_entries; i++) {
            p->entries[i]->resolved = false;
            if (!p->entries[i]->calib)
                p->entries[i]->note[0] = '\0';
            p->entries[i]->other_timing_ready = false;
        }
        p->last = NULL;
    }
    return TC_OK;
}

TC_API const char *tc_predictor_note(const struct tc_predictor *p)
{
    return p && p->note ? p->note : "";
}

/* The measurement of an exactly measured shape. Its interval is the
 * measured spread where the row has one; otherwise ±2%, the run-to-run
 * difference of shapes measured twice in the development data (median
 * 0.5%, 90th percentile 1.7%). */
static void measured(const struct tc_calib_sample *s, const struct tc_gemm_query *q,
                     double peak_tflops, struct tc_gemm_prediction *out)
{
    double flops =
        2.0 * (double)q->m * (double)q->n * (double)q->k * (double)(q->batch > 0 ? q->batch : 1);
    double spread = s->spread_pct > 0 ? s->spread_pct / 100 : 0.02;

    out->source = TC_SOURCE_MEASURED;
    out->time_us = s->time_us;
    out->tflops = flops / s->time_us * 1e-6;
    out->frac_peak = peak_tflops > 0 ? out->tflops / peak_tflops : 0;
    out->lo_us = s->time_us * (1 - spread);
    out->hi_us = s->time_us * (1 + spread);
    out->interval_level = 0.8;
    out->neighbours = 0;
    out->neighbour_dist = 0;
}

/* What a measurement of each timing class holds beyond the kernel. */
static const char *timing_holds(enum tc_timing_class c)
{
    switch (c) {
    case TC_TIMING_KERNEL:
        return "kernel time";
    case TC_TIMING_EVENT:
        return "kernel time plus the op's launch gap";
    case TC_TIMING_WALL:
        return "host time: launch and synchronize";
    case TC_TIMING_WALL_MAX:
        return "host time, the slowest of many calls";
    default:
        return "?";
    }
}

/* The measurement of a shape: of the query's timing class where there is
 * one, else of any class (kernel time first). A user who measured a shape
 * and asks for it wants that number back, not a model fitted through it
 * that answers "calibrated, 1 neighbour at distance 0"; the note says how
 * it was timed when that is not what the predictor was asked for. */
static const struct tc_calib_sample *find_measured(struct tc_predictor *p, const struct entry *e,
                                                   const struct tc_gemm_query *q)
{
    const struct tc_calib_sample *s =
        tc_calib_find(e->calib, q->layout, q->m, q->n, q->k, q->batch, p->timing);

    /* only the classes some row has: each lookup costs a hash probe, and a
     * calibrated prediction makes them all when the shape is not measured */
    for (int c = 0; !s && !p->bound_pass && c < TC_TIMING_COUNT; c++)
        if ((enum tc_timing_class)c != p->timing &&
            tc_calib_has_timing(e->calib, (enum tc_timing_class)c))
            s = tc_calib_find(e->calib, q->layout, q->m, q->n, q->k, q->batch,
                              (enum tc_timing_class)c);
    if (s && s->timing != p->timing) {
        /* a note cut short still says what matters first */
        if (snprintf(p->note_buf, sizeof(p->note_buf),
                     "%s%sthis shape was measured with %s timing only (%s), not %s time: the "
                     "measurement is returned as it is",
                     e->note, *e->note ? "; " : "", tc_timing_class_name(s->timing),
                     timing_holds(s->timing), tc_timing_class_name(p->timing)) >= 0)
            p->note = p->note_buf;
    }
    return s;
}

static int predict_gemm(struct tc_predictor *p, const struct tc_gpu *gpu,
                        const struct tc_gemm_query *q, struct tc_gemm_prediction *out);

/* The FFMA clock a GPU holds under load: the sustained one where its spec
 * gives one (0: not known, the vector peak's clock), as gemm.c reads it. */
static double sustained_fp32_clock(const struct tc_gpu *g)
{
    return g->clock_vector_sustained_mhz > 0 && g->clock_vector_sustained_mhz < g->clock_vector_mhz
               ? g->clock_vector_sustained_mhz
               : g->clock_vector_mhz;
}

/* Whether GPU a is at or below GPU b on every resource the GEMM model reads
 * for dtype d (peaks, clocks, bandwidth, cache, units, power limit, per-SM
 * limits), and below on one: the power-limited A100 PCIe against the A100
 * SXM4 of the same memory. */
static bool gpu_below(const struct tc_gpu *a, const struct tc_gpu *b, enum tc_dtype d)
{
    const double av[] = {a->peak_tflops[d],
                         a->peak_tflops[TC_DTYPE_FP32],
                         a->mem_bw_gbps,
                         (double)a->l2_bytes,
                         a->units,
                         a->clock_tensor_mhz,
                         a->clock_vector_mhz,
                         sustained_fp32_clock(a),
                         a->tdp_w,
                         (double)a->smem_per_sm_bytes,
                         a->regs_per_sm,
                         a->max_warps_per_sm};
    const double bv[] = {b->peak_tflops[d],
                         b->peak_tflops[TC_DTYPE_FP32],
                         b->mem_bw_gbps,
                         (double)b->l2_bytes,
                         b->units,
                         b->clock_tensor_mhz,
                         b->clock_vector_mhz,
                         sustained_fp32_clock(b),
                         b->tdp_w,
                         (double)b->smem_per_sm_bytes,
                         b->regs_per_sm,
                         b->max_warps_per_sm};
    bool differ = false;

    if (a->vendor != b->vendor || a->arch != b->arch)
        return false;
    for (size_t i = 0; i < sizeof(av) / sizeof(av[0]); i++) {
        if (av[i] > bv[i])
            return false;
        differ = differ || av[i] < bv[i];
    }
    return differ;
}

/* A transfer within a family between two GPUs one of which is at or below
 * the other on every resource: the lesser GPU cannot run a kernel faster
 * than the better one, so the source's own answer (its measurement of the
 * shape, else its calibrated prediction) bounds the transfer, from below
 * when the target is the lesser GPU, from above when it is the better. The
 * transfer drops the source's per-kernel factors (they stay with its data
 * set), so without the bound the A100 PCIe, transferred from the
 * SXM4-80GB's rows, came out up to 4 % faster than the SXM4-80GB itself
 * (78.0 against 81.4 us at fp16 2048^3), and Llama-2-7B training with it.
 * Kernel time only: under a host-timed method the two answers carry
 * different host costs (the source machine's fitted ones, the methods'
 * typical ones), which no spec orders. Rows of another dtype are no
 * evidence about this one, so then the bound is the source GPU's own answer
 * for this dtype, transferred from those rows as this one is. */
static void bound_by_source(struct tc_predictor *p, const struct tc_gpu *gpu,
                            const struct entry *from, const struct tc_gemm_query *q,
                            struct tc_gemm_prediction *out)
{
    const struct tc_gpu *src = tc_specs_find(p->specs, from->gpu_id);
    const struct tc_calib_sample *s = NULL;
    const char *kind = "calibrated";
    struct tc_gemm_prediction ps;
    struct tc_calib_apply how;
    double bound, r;
    bool floor;

    if (!src || src == gpu || p->timing != TC_TIMING_KERNEL ||
        !tc_calib_has_timing(from->calib, TC_TIMING_KERNEL))
        return;
    if (gpu_below(gpu, src, q->dtype))
        floor = true;
    else if (gpu_below(src, gpu, q->dtype))
        floor = false;
    else
        return;
    if (from->dtype != q->dtype) {
        /* The rows are of another dtype: the source GPU's own answer for
         * this one (its transfer from the same rows, on its own spec) is the
         * bound. Without it the H200's bf16 64x4096x4096 came out slower
         * than the H100's, both from the H100's fp16 fit (17.5 against
         * 16.7 us): its faster analytical pick holds more of the fixed
         * costs the fit scales up. */
        struct entry *last = p->last;
        const char *note = p->note;
        char saved[NOTE_MAX];
        bool pass = p->bound_pass;
        int err;

        tc_strlcpy(saved, note, sizeof(saved));
        p->bound_pass = true;
        err = predict_gemm(p, src, q, &ps);
        p->bound_pass = pass;
        p->last = last;
        if (note == p->note_buf)
            tc_strlcpy(p->note_buf, saved, sizeof(p->note_buf));
        p->note = note;
        if (err < 0) {
            tc_clear_error();
            return;
        }
        bound = ps.time_us;
        kind = ps.source == TC_SOURCE_MEASURED ? "measured" : tc_source_name(ps.source);
    } else if ((s = tc_calib_find(from->calib, q->layout, q->m, q->n, q->k, q->batch,
                                  TC_TIMING_KERNEL))) {
        bound = s->time_us;
        kind = "measured";
    } else {
        if (tc_predict_gemm_analytical(src, q, &ps) < 0) {
            tc_clear_error();
            return;
        }
        how.params = NULL;
        how.neighbours = true;
        how.neighbour_weight = 1;
        how.same_gpu = true;
        how.timing = TC_TIMING_KERNEL;
        how.arch = src->arch;
        tc_calib_predict(from->calib, &how, q, 0, &ps);
        bound = ps.time_us;
    }
    if (!(bound > 0) || !isfinite(bound) || (floor ? out->time_us >= bound : out->time_us <= bound))
        return;
    r = bound / out->time_us;
    out->time_us = bound;
    out->tflops /= r;
    out->frac_peak /= r;
    out->lo_us *= r;
    out->hi_us *= r;
    if (snprintf(
            p->note_buf, sizeof(p->note_buf), "%s%s%s the %s answer of %s (%.4g us), %s", p->note,
            *p->note ? "; " : "", floor ? "no faster than" : "no slower than", kind, src->id, bound,
            floor ? "above this GPU on every resource" : "below this GPU on every resource") >= 0)
        p->note = p->note_buf;
}

/* A measurement of a GPU below this one on every resource (of its family),
 * however it was timed, holds that GPU's kernel, which this one runs no
 * slower: so it bounds this GPU's kernel time from above. The cookbook's
 * wall-clock 8192^3 on the A100-SXM4-40GB (4107 us, launch included)
 * against the SXM4-80GB's calibrated 4412 us, fitted on Vidur's layer
 * shapes, none of them that large. A measurement of this GPU itself is
 * never changed; the note says when the bound holds. */
static void bound_by_below(struct tc_predictor *p, const struct tc_gpu *gpu, struct entry *e,
                           const struct tc_gemm_query *q, struct tc_gemm_prediction *out)
{
    const struct tc_calib_sample *best = NULL;
    const struct entry *by = NULL;
    char saved[NOTE_MAX];
    double r;

    if (!e->below_ready) {
        e->below_ready = true;
        e->n_below = 0;
        for (size_t i = 0; i < tc_specs_count(p->specs); i++) {
            const struct tc_gpu *g = tc_specs_at(p->specs, i);
            const struct entry *b;

            if (e->n_below == TC_ARRAY_SIZE(e->below) || g == gpu || !gpu_below(g, gpu, q->dtype))
                continue;
            b = pred_own_entry(p, g->id, q->dtype);
            if (b && !b->build_err && b->calib)
                e->below[e->n_below++] = b;
        }
        tc_clear_error();
    }
    for (size_t i = 0; i < e->n_below; i++)
        for (int c = 0; c < TC_TIMING_COUNT; c++) {
            const struct tc_calib_sample *s;

            if (!tc_calib_has_timing(e->below[i]->calib, (enum tc_timing_class)c))
                continue;
            s = tc_calib_find(e->below[i]->calib, q->layout, q->m, q->n, q->k, q->batch,
                              (enum tc_timing_class)c);
            if (s && s->time_us > 0 && s->time_us < (best ? best->time_us : out->time_us)) {
                best = s;
                by = e->below[i];
            }
        }
    if (!best)
        return;
    r = best->time_us / out->time_us;
    out->time_us = best->time_us;
    out->tflops /= r;
    out->frac_peak /= r;
    out->lo_us *= r;
    out->hi_us *= r;
    tc_strlcpy(saved, p->note, sizeof(saved));
    if (snprintf(p->note_buf, sizeof(p->note_buf),
                 "%s%sno slower than the %s-timed measurement of %s (%.4g us, %s), below this GPU "
                 "on every resource",
                 saved, *saved ? "; " : "", tc_timing_class_name(best->timing), by->gpu_id,
                 best->time_us, timing_holds(best->timing)) >= 0)
        p->note = p->note_buf;
}

TC_API int tc_predict_gemm(struct tc_predictor *p, const struct tc_gpu *gpu,
                           const struct tc_gemm_query *q, struct tc_gemm_prediction *out)
{
    int err = predict_gemm(p, gpu, q, out);
    char what[160];

    if (err == TC_OK && !p->analytical_only && p->last && p->timing == TC_TIMING_KERNEL &&
        out->source != TC_SOURCE_MEASURED)
        bound_by_below(p, gpu, p->last, q, out);

    /* never an infinite or NaN answer, whatever the inputs let through */
    if (err == TC_OK && (!isfinite(out->time_us) || !(out->time_us > 0) || !isfinite(out->tflops) ||
                         !isfinite(out->lo_us) || !isfinite(out->hi_us) || out->lo_us < 0)) {
        snprintf(what, sizeof(what), "GEMM %lldx%lldx%lld on %s", (long long)q->m, (long long)q->n,
                 (long long)q->k, gpu->id);
        err = tc_bound_check_prediction(what, out->time_us, out->lo_us, out->hi_us);
        if (err == TC_OK)
            err = tc_error(TC_ERR_RANGE, "%s: the predicted throughput is not finite", what);
    }
    return err;
}

static int predict_gemm(struct tc_predictor *p, const struct tc_gpu *gpu,
                        const struct tc_gemm_query *q, struct tc_gemm_prediction *out)
{
    struct entry *e;
    struct tc_calib_apply how;
    double peak;
    int err;

    if (!p || !gpu || !q || !out)
        return tc_error(TC_ERR_INVALID, "tc_predict_gemm: missing predictor, GPU, query or output");
    p->note = "";
    err = tc_predict_gemm_analytical(gpu, q, out);
    if (err < 0)
        return err;
    out->source = TC_SOURCE_ANALYTICAL;
    out->calib_gpu[0] = '\0';
    out->neighbours = 0;
    out->neighbour_dist = 0;
    tc_calib_analytical_interval(out);
    if (p->analytical_only)
        return TC_OK;
    e = p->last;
    if (!e || e->dtype != q->dtype || strcmp(e->gpu_id, gpu->id) != 0) {
        err = pred_resolve(p, gpu, q->dtype, &e);
        if (err < 0)
            return err;
        p->last = e;
    }
    p->note = e->note;
    peak = (unsigned)q->dtype < TC_DTYPE_COUNT ? gpu->peak_tflops[q->dtype] : 0;
    how.timing = p->timing;
    how.arch = gpu->arch;
    if (e->source == TC_SOURCE_CALIBRATED) {
        const struct tc_calib_sample *s = find_measured(p, e, q);

        if (s) {
            measured(s, q, peak, out);
            return TC_OK;
        }
        if (!tc_calib_has_timing(e->calib, p->timing)) {
            /* No row of this GPU and dtype was timed this way (the
             * cookbook's wall-clock rows asked for kernel time): the fit's
             * efficiencies, kernel factors and neighbours hold the host
             * costs and the sweeps of another method, no evidence about
             * this one. Public A100-SXM4-40GB kernel-time rows of large
             * plain GEMMs, predicted from the 37 cookbook rows' fit: 10.6 %
             * MAPE against the analytical 4.4 %. What the method does not
             * change moves, as for another dtype; labelled transferred.
             * Where another GPU's or dtype's rows were timed this way, they
             * are the evidence, as for a GPU without rows of its own: the
             * A100-SXM4-40GB's kernel time from the SXM4-80GB's Vidur
             * kernel times, not from its own cookbook wall clock, which
             * left its fixed costs the model's (5.33 us at fp16 512^3
             * against the SXM4-80GB's 6.56 and the H100's 5.59, and so
             * faster than both, though below both on every resource). */
            const bool tensor = tc_gemm_on_matrix_units(gpu, q->dtype);
            const struct entry *f;

            if (!e->other_timing_ready) {
                f = p->allow_transfer ? pred_transfer_source(p, gpu, q->dtype, true) : NULL;
                e->other_from = f;
                if (f) {
                    tc_calib_transfer_params(tc_calib_params(f->calib), f->arch, gpu->arch,
                                             strcmp(f->gpu_id, gpu->id) == 0, f->dtype == q->dtype,
                                             tensor, &e->other_timing);
                    /* as for a transfer (pred_resolve) */
                    e->other_nb_weight = f->dtype != q->dtype   ? 0.0
                                         : f->arch == gpu->arch ? 0.5
                                                                : 0.0;
                    snprintf(e->other_timing_note, sizeof(e->other_timing_note),
                             "%s %s: no measured row was timed as %s; transferred from %s %s "
                             "measurements timed so (%s family)",
                             gpu->id, tc_dtype_name(q->dtype), tc_timing_class_name(p->timing),
                             f->gpu_id, tc_dtype_name(f->dtype), tc_arch_name(f->arch));
                } else {
                    tc_calib_transfer_params(tc_calib_params(e->calib), e->arch, e->arch, true,
                                             false, tensor, &e->other_timing);
                    e->other_nb_weight = 0;
                    snprintf(e->other_timing_note, sizeof(e->other_timing_note),
                             "%s %s: no measured row was timed as %s; fixed costs and alignment "
                             "as fitted on the other methods' rows, efficiencies the model's own",
                             gpu->id, tc_dtype_name(q->dtype), tc_timing_class_name(p->timing));
                }
                e->other_timing_ready = true;
            }
            f = e->other_from ? e->other_from : e;
            how.params = &e->other_timing;
            how.neighbours = e->other_nb_weight > 0;
            how.neighbour_weight = e->other_nb_weight;
            how.same_gpu = strcmp(f->gpu_id, gpu->id) == 0;
            tc_calib_predict(f->calib, &how, q, peak, out);
            tc_calib_transfer_interval(out, f->arch == gpu->arch, &e->other_timing, p->timing,
                                       q->op);
            out->source = TC_SOURCE_TRANSFERRED;
            p->note = e->other_timing_note;
            if (e->other_from)
                bound_by_source(p, gpu, f, q, out);
            tc_strlcpy(out->calib_gpu, f->gpu_id, sizeof(out->calib_gpu));
            return TC_OK;
        }
        how.params = NULL;
        how.neighbours = true;
        how.neighbour_weight = 1;
        how.same_gpu = true;
        tc_calib_predict(e->calib, &how, q, peak, out);
        out->source = TC_SOURCE_CALIBRATED;
    } else if (e->source == TC_SOURCE_TRANSFERRED) {
        how.params = &e->xfer;
        how.neighbours = e->nb_weight > 0;
        how.neighbour_weight = e->nb_weight;
        how.same_gpu = strcmp(e->from->gpu_id, gpu->id) == 0;
        tc_calib_predict(e->from->calib, &how, q, peak, out);
        tc_calib_transfer_interval(out, e->same_family, &e->xfer, p->timing, q->op);
        out->source = TC_SOURCE_TRANSFERRED;
        bound_by_source(p, gpu, e->from, q, out);
        tc_strlcpy(out->calib_gpu, e->from->gpu_id, sizeof(out->calib_gpu));
    }
    return TC_OK;
}

TC_API int tc_predict_gemm_batch(struct tc_predictor *p, const struct tc_gpu *gpu, size_t n,
                                 const struct tc_gemm_query *q, struct tc_gemm_prediction *out,
                                 int *errs)
{
    int failed = 0;

    if (!p || (!q && n) || (!out && n))
        return tc_error(TC_ERR_INVALID, "tc_predict_gemm_batch: bad arguments");
    for (size_t i = 0; i < n; i++) {
        int err = tc_predict_gemm(p, gpu, &q[i], &out[i]);

        if (errs)
            errs[i] = err;
        if (err < 0)
            failed++;
    }
    return failed;
}
