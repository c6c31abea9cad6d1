/* tc_db_calibrate: fitting the calibration of every (GPU, dtype) a database
 * holds rows of and storing the fits in it, so that `tilecast db calibrate`
 * and the bindings do the same with one call; and the report of those fits,
 * the figures the command prints. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "tc-internal.h"

struct tc_calib_report {
    struct tc_calib_summary *fits;
    size_t n, cap;
};

static void summarise(const struct tc_calib_params *cp, const char *gpu_id, enum tc_dtype dtype,
                      bool stored, struct tc_calib_summary *s)
{
    memset(s, 0, sizeof(*s));
    tc_strlcpy(s->gpu_id, gpu_id, sizeof(s->gpu_id));
    s->dtype = dtype;
    s->rows = cp->n_rows;
    s->c_compute = cp->c_compute;
    s->c_memory = cp->c_memory;
    s->c_overhead = cp->c_overhead;
    s->align_16b = cp->align_factor[TC_ALIGN_16B];
    s->align_4b = cp->align_factor[TC_ALIGN_4B];
    s->align_elem = cp->align_factor[TC_ALIGN_ELEM];
    s->host_event_us = cp->host_us[TC_TIMING_EVENT];
    s->host_wall_us = cp->host_us[TC_TIMING_WALL];
    s->fit_p50_pct = cp->fit_p50_ape;
    s->fit_p90_pct = cp->fit_p90_ape;
    s->heldout_mape_pct = cp->loo_mape;
    /* the interval of the longest predicted-time bin: the one a user's
     * large GEMMs fall in */
    s->interval_lo_pct = 100 * (exp(cp->q_lo[TC_CALIB_TIME_BINS - 1]) - 1);
    s->interval_hi_pct = 100 * (exp(cp->q_hi[TC_CALIB_TIME_BINS - 1]) - 1);
    s->stored = stored;
}

static int report_add(struct tc_calib_report *r, const struct tc_calib_summary *s)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 8;
        struct tc_calib_summary *grown = realloc(r->fits, cap * sizeof(*grown));

        if (!grown)
            return tc_error(TC_ERR_NOMEM, "out of memory for a calibration report");
        r->fits = grown;
        r->cap = cap;
    }
    r->fits[r->n++] = *s;
    return TC_OK;
}

/* Whether an earlier count of info already named this (gpu, dtype): counts
 * are split by kind (collected, imported), and each pair is fitted once. */
static bool seen_before(const struct tc_db_info *info, size_t i)
{
    const struct tc_db_info_count *c = &info->counts[i];

    for (size_t j = 0; j < i; j++) {
        const struct tc_db_info_count *o = &info->counts[j];

        if (strcmp(o->table, "gemm") == 0 && strcmp(o->status, "ok") == 0 &&
            strcmp(o->gpu_id, c->gpu_id) == 0 && strcmp(o->dtype, c->dtype) == 0)
            return true;
    }
    return false;
}

TC_API int tc_db_calibrate(struct tc_db *db, const struct tc_specs *specs, const char *gpu_id,
                           int dtype, bool store, struct tc_calib_report **out)
{
    struct tc_db_info *info = NULL;
    struct tc_calib_report *r = NULL;
    const char *cpu_host = NULL;
    int err;

    if (out)
        *out = NULL;
    if (!db || !specs || !out)
        return tc_error(TC_ERR_INVALID, "tc_db_calibrate: missing argument");
    if (dtype >= TC_DTYPE_COUNT)
        return tc_error(TC_ERR_INVALID, "tc_db_calibrate: dtype %d out of range", dtype);
    if ((err = tc_db_info_get(db, &info)) < 0)
        return err;
    if (!(r = calloc(1, sizeof(*r)))) {
        err = tc_error(TC_ERR_NOMEM, "out of memory for a calibration report");
        goto fail;
    }
    for (size_t i = 0; i < info->n_counts; i++) {
        const struct tc_db_info_count *c = &info->counts[i];
        struct tc_calibration_row row;
        struct tc_calib_summary s;
        struct tc_calib *calib = NULL;
        enum tc_dtype dt;

        if (strcmp(c->table, "gemm") != 0 || strcmp(c->status, "ok") != 0 ||
            tc_dtype_parse(c->dtype, &dt) < 0)
            continue;
        if ((gpu_id && strcmp(c->gpu_id, gpu_id) != 0) || (dtype >= 0 && (int)dt != dtype))
            continue;
        if (seen_before(info, i))
            continue;
        /* a file of GPUs and a cpu-backend test run: the GPUs are fitted;
         * the host CPU only fails the command when asked for or alone */
        if (!gpu_id && tc_calib_cpu_host(db, c->gpu_id)) {
            cpu_host = c->gpu_id;
            continue;
        }
        if ((err = tc_calib_from_db(specs, db, c->gpu_id, dt, false, &calib, NULL, 0)) < 0)
            goto fail;
        if (!calib)
            continue; /* no shape the model can take */
        if (store) {
            err = tc_calib_to_row(calib, c->gpu_id, dt, &row);
            if (err == TC_OK)
                err = tc_db_put_calibration(db, &row);
        }
        if (err == TC_OK) {
            summarise(tc_calib_params(calib), c->gpu_id, dt, store, &s);
            err = report_add(r, &s);
        }
        tc_calib_free(calib);
        if (err < 0)
            goto fail;
    }
    /* nothing else to fit: the refusal's message says why */
    if (!r->n && cpu_host) {
        struct tc_calib *none = NULL;

        err = tc_calib_from_db(specs, db, cpu_host, TC_DTYPE_FP32, false, &none, NULL, 0);
        tc_calib_free(none);
        if (err < 0)
            goto fail;
    }
    /* the failed dtype parses above leave their message behind */
    tc_clear_error();
    tc_db_info_free(info);
    *out = r;
    return TC_OK;
fail:
    tc_db_info_free(info);
    tc_calib_report_free(r);
    return err;
}

TC_API size_t tc_calib_report_count(const struct tc_calib_report *r)
{
    return r ? r->n : 0;
}

TC_API const struct tc_calib_summary *tc_calib_report_at(const struct tc_calib_report *r, size_t i)
{
    return r && i < r->n ? &r->fits[i] : NULL;
}

TC_API void tc_calib_report_free(struct tc_calib_report *r)
{
    if (!r)
        return;
    free(r->fits);
    free(r);
}
