/* Where a predictor's answers come from: the databases it reads (the added
 * files, else each GPU's prebuilt one), the calibrations fitted on or
 * loaded from their rows, and the choice of source for each (GPU, dtype):
 * its own rows, a transfer, or the analytical model (see predictor.c). */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "gemm-internal.h"
#include "predictor-internal.h"

/* ------------------------------------------------------------------------ */
/* Databases                                                                 */
/* ------------------------------------------------------------------------ */

void pred_db_free(struct pred_db *d)
{
    if (!d)
        return;
    tc_db_close(d->db);
    free(d->path);
    free(d->run_ids);
    free(d->run_timing);
    free(d->pairs);
    free(d);
}

int pred_db_scan(struct pred_db *d)
{
    struct tc_db_info *info = NULL;
    int timing_field = -1, err;

    if (d->scanned)
        return TC_OK;
    free(d->run_ids);
    free(d->run_timing);
    free(d->pairs);
    d->run_ids = NULL;
    d->run_timing = NULL;
    d->pairs = NULL;
    d->n_runs = d->n_pairs = 0;
    err = tc_db_info_get(d->db, &info);
    if (err < 0)
        return err;
    for (int i = 0; i < TC_DB_RUN_FIELDS; i++)
        if (strcmp(tc_db_run_field_name(i), "timing") == 0)
            timing_field = i;
    d->run_ids = calloc(info->n_runs + 1, sizeof(*d->run_ids));
    d->run_timing = calloc(info->n_runs + 1, sizeof(*d->run_timing));
    d->pairs = calloc(info->n_counts + 1, sizeof(*d->pairs));
    if (!d->run_ids || !d->run_timing || !d->pairs) {
        err = tc_error(TC_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    for (size_t i = 0; i < info->n_runs; i++) {
        const char *t = timing_field >= 0 ? info->runs[i].fields[timing_field] : NULL;

        d->run_ids[i] = info->runs[i].id;
        d->run_timing[i] = tc_timing_classify(t);
    }
    d->n_runs = info->n_runs;
    for (size_t i = 0; i < info->n_counts; i++) {
        const struct tc_db_info_count *c = &info->counts[i];
        enum tc_dtype dt;
        size_t j;

        if (strcmp(c->table, "gemm") != 0 || strcmp(c->status, "ok") != 0 || c->rows <= 0 ||
            tc_dtype_parse(c->dtype, &dt) < 0)
            continue;
        for (j = 0; j < d->n_pairs; j++)
            if (d->pairs[j].dtype == dt && strcmp(d->pairs[j].gpu_id, c->gpu_id) == 0)
                break;
        if (j == d->n_pairs) {
            tc_strlcpy(d->pairs[j].gpu_id, c->gpu_id, TC_ID_MAX);
            d->pairs[j].dtype = dt;
            d->pairs[j].rows = 0;
            d->n_pairs++;
        }
        d->pairs[j].rows += c->rows;
    }
    d->scanned = true;
    tc_clear_error();
cleanup:
    tc_db_info_free(info);
    return err < 0 ? err : TC_OK;
}

/* *err receives why a NULL return failed (the database layer's code). */
struct pred_db *pred_db_open(const char *path, bool prebuilt, int *err)
{
    struct pred_db *d = calloc(1, sizeof(*d));

    *err = TC_ERR_NOMEM;
    if (!d) {
        tc_error(TC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    d->prebuilt = prebuilt;
    d->path = tc_strdup(path);
    if (!d->path)
        goto fail;
    *err = tc_db_open(path, TC_DB_READONLY, &d->db);
    if (*err < 0)
        goto fail;
    /* The runs and row counts are read when first needed: a stored
     * calibration answers without them (see stored_fast). */
    *err = TC_OK;
    return d;
fail:
    pred_db_free(d);
    return NULL;
}

static int64_t pred_db_rows(struct pred_db *d, const char *gpu_id, int dtype)
{
    int64_t rows = 0;

    if (!d->scanned && pred_db_scan(d) < 0)
        return 0;
    for (size_t i = 0; i < d->n_pairs; i++)
        if ((!gpu_id || strcmp(d->pairs[i].gpu_id, gpu_id) == 0) &&
            (dtype < 0 || (int)d->pairs[i].dtype == dtype))
            rows += d->pairs[i].rows;
    return rows;
}

static bool run_timing(const struct pred_db *d, int64_t run_id, enum tc_timing_class *out)
{
    for (size_t i = 0; i < d->n_runs; i++) {
        if (d->run_ids[i] == run_id) {
            *out = d->run_timing[i];
            return true;
        }
    }
    *out = TC_TIMING_KERNEL;
    return false;
}

int pred_push_db(struct pred_db ***list, size_t *n, struct pred_db *d)
{
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): the elements are pointers */
    struct pred_db **grown = realloc(*list, (*n + 1) * sizeof(**list));

    if (!grown)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    grown[(*n)++] = d;
    *list = grown;
    return TC_OK;
}

/* The prebuilt database of gpu_id, opened on first use; NULL if none. */
static struct pred_db *prebuilt_for(struct tc_predictor *p, const char *gpu_id)
{
    char rel[TC_ID_MAX + 32], path[4096];
    struct pred_db *d;
    int err;

    for (size_t i = 0; i < p->n_prebuilt; i++) {
        const char *base = strrchr(p->prebuilt[i]->path, '/');

        base = base ? base + 1 : p->prebuilt[i]->path;
        if (strncmp(base, gpu_id, strlen(gpu_id)) == 0 && strcmp(base + strlen(gpu_id), ".db") == 0)
            return p->prebuilt[i]->failed ? NULL : p->prebuilt[i];
    }
    snprintf(rel, sizeof(rel), "db/prebuilt/%s.db", gpu_id);
    if (tc_data_path(rel, path, sizeof(path)) < 0 || access(path, R_OK) != 0)
        return NULL;
    d = pred_db_open(path, true, &err);
    if (!d) {
        /* A broken shipped file must not stop predictions: remember the
         * failure and fall back to the other sources. */
        d = calloc(1, sizeof(*d));
        if (!d)
            return NULL;
        d->path = tc_strdup(path);
        d->failed = true;
    }
    if (!d->path || pred_push_db(&p->prebuilt, &p->n_prebuilt, d) < 0) {
        pred_db_free(d);
        return NULL;
    }
    return d->failed ? NULL : d;
}

/* Opens every prebuilt file (for transfers onto a GPU without one). */
void pred_prebuilt_scan_all(struct tc_predictor *p)
{
    char dir[4096];
    DIR *dh;
    struct dirent *de;

    if (p->prebuilt_scanned)
        return;
    p->prebuilt_scanned = true;
    if (tc_data_path("db/prebuilt", dir, sizeof(dir)) < 0)
        return;
    dh = opendir(dir);
    if (!dh)
        return;
    while ((de = readdir(dh))) {
        size_t len = strlen(de->d_name);
        char id[TC_ID_MAX];

        if (len < 4 || len - 3 >= TC_ID_MAX || strcmp(de->d_name + len - 3, ".db") != 0)
            continue;
        memcpy(id, de->d_name, len - 3);
        id[len - 3] = '\0';
        prebuilt_for(p, id);
    }
    closedir(dh);
}

/* ------------------------------------------------------------------------ */
/* Calibration states                                                        */
/* ------------------------------------------------------------------------ */

static struct entry *find_entry(struct tc_predictor *p, const char *gpu_id, enum tc_dtype dtype,
                                bool create)
{
    struct entry *e, **grown;

    for (size_t i = 0; i < p->n_entries; i++)
        if (p->entries[i]->dtype == dtype && strcmp(p->entries[i]->gpu_id, gpu_id) == 0)
            return p->entries[i];
    if (!create)
        return NULL;
    e = calloc(1, sizeof(*e));
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): the elements are pointers */
    grown = e ? realloc(p->entries, (p->n_entries + 1) * sizeof(*grown)) : NULL;
    if (!grown) {
        free(e);
        tc_error(TC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    tc_strlcpy(e->gpu_id, gpu_id, sizeof(e->gpu_id));
    e->dtype = dtype;
    grown[p->n_entries++] = e;
    p->entries = grown;
    return e;
}

/* Gathers the ok rows of (gpu, dtype) in d as samples, with the analytical
 * parts of each shape on that GPU. */
static int gather(const struct pred_db *d, const struct tc_gpu *gpu, enum tc_dtype dtype,
                  struct tc_calib_sample **samples, size_t *n, size_t *cap)
{
    struct tc_db_iter *it;
    struct tc_gemm_row row;
    int r, ret = TC_OK;

    /* the database layer's code, and its message names the file */
    if ((r = tc_db_iter_gemm(d->db, gpu->id, (int)dtype, -1, &it)) < 0)
        return r;
    while ((r = tc_db_iter_next(it, &row, NULL)) == 1) {
        struct tc_gemm_query q = {row.m, row.n, row.k, row.batch, dtype, row.layout, 0, 0, 0};
        struct tc_gemm_prediction pred;
        struct tc_calib_sample *s;

        if (!(row.time_us > 0) || row.m <= 0 || row.n <= 0 || row.k <= 0)
            continue;
        if (tc_predict_gemm_analytical(gpu, &q, &pred) < 0)
            continue; /* a shape the model cannot take informs nothing */
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 1024;
            struct tc_calib_sample *grown = realloc(*samples, c * sizeof(*grown));

            if (!grown) {
                ret = tc_error(TC_ERR_NOMEM, "out of memory");
                break;
            }
            *samples = grown;
            *cap = c;
        }
        s = &(*samples)[(*n)++];
        memset(s, 0, sizeof(*s));
        s->m = row.m;
        s->n = row.n;
        s->k = row.k;
        s->batch = row.batch > 0 ? row.batch : 1;
        s->layout = row.layout;
        s->align = tc_calib_align_class(gpu->arch, pred.align);
        if (!run_timing(d, row.run_id, &s->timing) && !d->scanned) {
            /* a run the stored map does not know: the caller rescans */
            ret = TC_ERR_NOT_FOUND;
            break;
        }
        /* a host-timed row's op says how long its host path is */
        if ((r = tc_db_iter_op(it, &s->op)) < 0)
            break;
        s->time_us = row.time_us;
        s->spread_pct = row.spread_pct;
        s->kernel_hash = tc_calib_kernel_hash(pred.kernel);
        tc_calib_parts(&pred, &s->compute_us, &s->memory_us, &s->overhead_us);
    }
    if (r < 0 && ret == TC_OK)
        ret = r; /* the database layer's message names the file and row */
    tc_db_iter_free(it);
    return ret;
}

/* A stored calibration of the current model version fitted on exactly the
 * rows gathered; otherwise a note says why it is not used, and with refit
 * that it is recomputed (without, the caller says why it is not). */
static bool stored_params(struct pred_db *const *dbs, size_t n_dbs, struct entry *e,
                          const struct tc_gpu *gpu, size_t rows, bool refit,
                          struct tc_calib_params *out)
{
    struct tc_calibration_row cr;
    uint32_t fp = tc_calib_model_fingerprint(gpu, e->dtype);
    const char *again = refit ? "; recomputed" : "";
    const char *store =
        refit ? "; recomputed in memory ('tilecast db calibrate' stores a new one)" : "";

    for (size_t i = 0; i < n_dbs; i++) {
        if (!dbs[i] || dbs[i]->failed)
            continue;
        if (tc_db_get_calibration(dbs[i]->db, e->gpu_id, e->dtype, -1, TC_CALIB_MODEL_VERSION, NULL,
                                  &cr) == TC_OK) {
            if (tc_calib_params_parse(cr.params_json, out) < 0 || out->format != TC_CALIB_FORMAT) {
                snprintf(e->note, sizeof(e->note),
                         "%s: stored calibration of %s %s is unreadable (%s)%s", dbs[i]->path,
                         e->gpu_id, tc_dtype_name(e->dtype), tc_last_error(), again);
                return false;
            }
            if (out->model_fp != fp) {
                snprintf(e->note, sizeof(e->note),
                         "%s: stored calibration of %s %s was fitted to another analytical "
                         "model (fingerprint %lu, this one %lu)%s",
                         dbs[i]->path, e->gpu_id, tc_dtype_name(e->dtype),
                         (unsigned long)out->model_fp, (unsigned long)fp, store);
                return false;
            }
            if ((size_t)out->n_rows != rows) {
                snprintf(e->note, sizeof(e->note),
                         "%s: stored calibration of %s %s used %lld rows, the database%s now "
                         "hold%s %zu%s",
                         dbs[i]->path, e->gpu_id, tc_dtype_name(e->dtype), (long long)out->n_rows,
                         n_dbs > 1 ? "s" : "", n_dbs > 1 ? "" : "s", rows, again);
                return false;
            }
            return true;
        }
        /* A calibration of another model version is never used. */
        for (int v = 0; v < TC_CALIB_MODEL_VERSION + 16; v++) {
            if (v == TC_CALIB_MODEL_VERSION)
                continue;
            if (tc_db_get_calibration(dbs[i]->db, e->gpu_id, e->dtype, -1, v, NULL, &cr) == TC_OK) {
                snprintf(e->note, sizeof(e->note),
                         "%s: stored calibration of %s %s is for model version %d (tilecast "
                         "%s), this is version %d (tilecast %s)%s",
                         dbs[i]->path, e->gpu_id, tc_dtype_name(e->dtype), v, cr.tilecast_version,
                         TC_CALIB_MODEL_VERSION, tc_version(), store);
                return false;
            }
        }
    }
    tc_clear_error();
    return false;
}

/* Parses a stored run map "id:class,..." into d's run table. */
static bool load_run_map(struct pred_db *d, const char *runs)
{
    size_t n = 1;
    const char *p;

    for (p = runs; *p; p++)
        n += *p == ',';
    free(d->run_ids);
    free(d->run_timing);
    d->run_ids = calloc(n, sizeof(*d->run_ids));
    d->run_timing = calloc(n, sizeof(*d->run_timing));
    d->n_runs = 0;
    if (!d->run_ids || !d->run_timing)
        return false;
    for (p = runs; *p;) {
        char *end;
        long long id = strtoll(p, &end, 10);
        long cls;

        if (end == p || *end != ':')
            return false;
        p = end + 1;
        cls = strtol(p, &end, 10);
        if (end == p || cls < 0 || cls >= TC_TIMING_COUNT || (*end && *end != ','))
            return false;
        d->run_ids[d->n_runs] = id;
        d->run_timing[d->n_runs++] = (enum tc_timing_class)cls;
        p = *end ? end + 1 : end;
    }
    return d->n_runs > 0;
}

/* The fast way to a ready state: a stored calibration of the current model
 * version whose run map covers every row, and exactly as many rows as it was
 * fitted on. Then neither the runs nor the row counts need a scan. */
static bool stored_fast(struct pred_db *d, struct entry *e, const struct tc_gpu *gpu,
                        struct tc_calib_sample **samples, size_t *n, size_t *cap,
                        struct tc_calib_params *stored)
{
    struct tc_calibration_row cr;

    if (d->scanned || d->failed)
        return false;
    if (tc_db_get_calibration(d->db, e->gpu_id, e->dtype, -1, TC_CALIB_MODEL_VERSION, NULL, &cr) !=
            TC_OK ||
        tc_calib_params_parse(cr.params_json, stored) < 0 || stored->format != TC_CALIB_FORMAT ||
        stored->model_fp != tc_calib_model_fingerprint(gpu, e->dtype) ||
        !load_run_map(d, stored->runs)) {
        tc_clear_error();
        return false;
    }
    if (gather(d, gpu, e->dtype, samples, n, cap) < 0 || (int64_t)*n != stored->n_rows) {
        *n = 0;
        tc_clear_error();
        return false;
    }
    return true;
}

/* The databases whose rows describe gpu_id. */
size_t pred_dbs_for(struct tc_predictor *p, const char *gpu_id, struct pred_db **out, size_t max)
{
    size_t n = 0;

    if (p->n_dbs) {
        for (size_t i = 0; i < p->n_dbs && n < max; i++)
            out[n++] = p->dbs[i];
    } else if (p->use_prebuilt) {
        struct pred_db *d = prebuilt_for(p, gpu_id);

        if (d)
            out[n++] = d;
    }
    return n;
}

const struct tc_gpu *pred_gpu_of(struct tc_predictor *p, const char *gpu_id,
                                 struct pred_db *const *dbs, size_t n_dbs, struct tc_gpu *buf)
{
    const struct tc_gpu *g = tc_specs_find(p->specs, gpu_id);

    if (g)
        return g;
    /* A database carries the spec snapshot of what it measured. */
    for (size_t i = 0; i < n_dbs; i++)
        if (tc_db_get_gpu(dbs[i]->db, gpu_id, buf) == TC_OK) {
            /* a snapshot passes the checks a spec file does, bounds
             * included, or it would make the calibration's analytical
             * times infinite */
            if (tc_gpu_check(buf) == TC_OK)
                return buf;
            tc_clear_error();
        }
    return NULL;
}

/* Too many rows to fit on every call (TC_CALIB_FIT_MAX_ROWS): what to run
 * instead. dbs are the files that hold the rows; e->note says why a stored
 * calibration is not used, if there is one. A calibration is used only when
 * fitted on every row the predictor reads, so rows spread over several
 * files need one file. */
static int refuse_fit(struct pred_db *const *dbs, size_t n_dbs, const struct entry *e, size_t n)
{
    char what[NOTE_MAX];

    if (e->note[0])
        tc_strlcpy(what, e->note, sizeof(what));
    else
        snprintf(what, sizeof(what), "%s%s: %zu measured rows of %s %s and no stored calibration",
                 n_dbs > 1 ? "the databases " : "", n_dbs > 1 ? "given" : dbs[0]->path, n,
                 e->gpu_id, tc_dtype_name(e->dtype));
    if (n_dbs > 1)
        return tc_error(TC_ERR_UNSUPPORTED,
                        "%s: a prediction fits at most %d rows of one GPU and dtype in memory, "
                        "and a calibration is used only when fitted on all of them: merge the "
                        "files ('tilecast db merge ALL.db FILE...') and run 'tilecast db "
                        "calibrate ALL.db' once",
                        what, TC_CALIB_FIT_MAX_ROWS);
    return tc_error(TC_ERR_UNSUPPORTED,
                    "%s: a prediction fits at most %d rows of one GPU and dtype in memory; run "
                    "'tilecast db calibrate %s' once to fit them and store the fit in the file "
                    "(in a copy of a file you cannot write)",
                    what, TC_CALIB_FIT_MAX_ROWS, dbs[0]->path);
}

/* Builds e's own calibration from the rows of its GPU and dtype. */
static int build_own(struct tc_predictor *p, struct entry *e)
{
    /* zeroed: the compiler cannot see that pred_dbs_for fills the first n_dbs */
    struct pred_db *dbs[64] = {0}, *with_rows[TC_ARRAY_SIZE(dbs)];
    size_t n_dbs, n_with = 0, n = 0, cap = 0;
    struct tc_calib_sample *samples = NULL;
    struct tc_calib_params stored;
    struct tc_gpu snapshot;
    const struct tc_gpu *gpu;
    bool have_stored;
    int ret = TC_OK;

    e->own_built = true;
    n_dbs = pred_dbs_for(p, e->gpu_id, dbs, TC_ARRAY_SIZE(dbs));
    gpu = pred_gpu_of(p, e->gpu_id, dbs, n_dbs, &snapshot);
    if (!gpu)
        return TC_OK;
    e->arch = gpu->arch;
    if (n_dbs == 1 && stored_fast(dbs[0], e, gpu, &samples, &n, &cap, &stored)) {
        e->calib = tc_calib_build(samples, n, &stored);
        ret = e->calib ? TC_OK : TC_ERR_NOMEM;
        goto cleanup;
    }
    for (size_t i = 0; i < n_dbs; i++) {
        if (!pred_db_rows(dbs[i], e->gpu_id, (int)e->dtype))
            continue;
        ret = gather(dbs[i], gpu, e->dtype, &samples, &n, &cap);
        if (ret < 0)
            goto cleanup;
        with_rows[n_with++] = dbs[i];
    }
    if (!n)
        goto cleanup;
    have_stored = stored_params(dbs, n_dbs, e, gpu, n, n <= TC_CALIB_FIT_MAX_ROWS, &stored);
    if (!have_stored && n > TC_CALIB_FIT_MAX_ROWS) {
        ret = refuse_fit(with_rows, n_with, e, n);
        goto cleanup;
    }
    e->calib = tc_calib_build(samples, n, have_stored ? &stored : NULL);
    if (!e->calib) {
        ret = TC_ERR_NOMEM; /* the rows were validated: only memory fails */
        goto cleanup;
    }
cleanup:
    free(samples);
    return ret;
}

/* The entry of (gpu, dtype) with its own calibration built. A database
 * that failed to read fails every query of that pair, not just the first
 * (check e->build_err). NULL only when out of memory. */
struct entry *pred_own_entry(struct tc_predictor *p, const char *gpu_id, enum tc_dtype dtype)
{
    struct entry *e = find_entry(p, gpu_id, dtype, true);
    int err;

    if (e && !e->own_built && (err = build_own(p, e)) < 0) {
        e->build_err = err;
        tc_strlcpy(e->build_msg, tc_last_error(), sizeof(e->build_msg));
    }
    return e;
}

static const char *db_list_gpus(struct tc_predictor *p, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < p->n_dbs; i++) {
        if (!p->dbs[i]->scanned && pred_db_scan(p->dbs[i]) < 0)
            continue;
        for (size_t j = 0; j < p->dbs[i]->n_pairs; j++) {
            const char *id = p->dbs[i]->pairs[j].gpu_id;

            if (strstr(buf, id))
                continue;
            int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", id);

            if (w < 0 || (size_t)w >= len - used)
                return buf;
            used += (size_t)w;
        }
    }
    return buf;
}

int pred_resolve(struct tc_predictor *p, const struct tc_gpu *gpu, enum tc_dtype dtype,
                 struct entry **out)
{
    struct entry *e = pred_own_entry(p, gpu->id, dtype);
    struct entry *src;

    if (!e)
        return TC_ERR_NOMEM;
    if (e->build_err)
        return tc_error(e->build_err, "%s", e->build_msg);
    *out = e;
    if (e->resolved)
        return TC_OK;
    e->resolved = true;
    e->arch = gpu->arch;
    if (e->calib) {
        e->source = TC_SOURCE_CALIBRATED;
        return TC_OK;
    }
    e->source = TC_SOURCE_ANALYTICAL;
    /* A source whose rows were timed as asked first: the fixed costs and
     * efficiencies a fit finds hold what its timing method measured (the
     * cookbook's wall clock holds launch and synchronize), no evidence
     * about another method's (see the calibrated path in predictor.c). */
    src = p->allow_transfer ? pred_transfer_source(p, gpu, dtype, true) : NULL;
    if (!src && p->allow_transfer)
        src = pred_transfer_source(p, gpu, dtype, false);
    if (src) {
        /* a source with no row timed as asked is, for its efficiencies,
         * kernel factors and residuals, another data set's, as its own GPU
         * treats it (the calibrated path in predictor.c): the NeuSight
         * A100-PCIe-40GB's event-timed fp32 efficiencies made the
         * A100-PCIe-80GB's kernel time of a 1x8192x8192 GEMV 270 us, below
         * the 282 us of the H100 PCIe, which is above it on every resource
         * and keeps the model's own */
        bool timed = tc_calib_has_timing(src->calib, p->timing);

        e->source = TC_SOURCE_TRANSFERRED;
        e->from = src;
        e->same_family = src->arch == gpu->arch;
        tc_calib_transfer_params(tc_calib_params(src->calib), src->arch, gpu->arch,
                                 strcmp(src->gpu_id, gpu->id) == 0, src->dtype == dtype && timed,
                                 tc_gemm_on_matrix_units(gpu, dtype), &e->xfer);
        /* Residuals that survive the fit come from the library's kernel
         * choices for that dtype; within a family (same kernels) they carry
         * over in part. Another dtype runs other kernels: none. */
        e->nb_weight = src->dtype != dtype || !timed ? 0.0 : e->same_family ? 0.5 : 0.0;
        snprintf(e->note, sizeof(e->note),
                 "transferred from %s %s measurements (%s family%s%s) to %s %s", src->gpu_id,
                 tc_dtype_name(src->dtype), tc_arch_name(src->arch),
                 src->dtype != dtype
                     ? ", host and fixed costs and alignment as fitted; efficiencies the "
                       "model's own, since a fit of another dtype says nothing about them"
                 : pred_transfers_nothing(&e->xfer)
                     ? (e->same_family ? "; a fit without kernel-timed rows has nothing that "
                                         "holds for kernel time, so the time is the analytical "
                                         "model's"
                                       : "; a fit without kernel-timed rows has nothing that "
                                         "crosses families, so the time is the analytical "
                                         "model's")
                 : !timed ? ", fixed costs and alignment as fitted, efficiencies the model's "
                            "own, since none of its rows was timed as "
                 : e->same_family ? ", efficiencies as fitted"
                                  : ", fixed costs and alignment as fitted, "
                                    "efficiencies the model's own",
                 src->dtype == dtype && !timed && !pred_transfers_nothing(&e->xfer)
                     ? tc_timing_class_name(p->timing)
                     : "",
                 gpu->id, tc_dtype_name(dtype));
        return TC_OK;
    }
    if (e->note[0])
        return TC_OK;
    if (p->n_dbs) {
        char gpus[256];
        int64_t total = 0;

        for (size_t i = 0; i < p->n_dbs; i++)
            total += pred_db_rows(p->dbs[i], NULL, -1);
        db_list_gpus(p, gpus, sizeof(gpus));
        if (!total)
            snprintf(e->note, sizeof(e->note), "the database%s hold%s no measured rows: analytical",
                     p->n_dbs > 1 ? "s" : "", p->n_dbs > 1 ? "" : "s");
        else if (!strstr(gpus, gpu->id))
            snprintf(e->note, sizeof(e->note),
                     "the database%s hold%s measurements of %s, not %s%s: analytical",
                     p->n_dbs > 1 ? "s" : "", p->n_dbs > 1 ? "" : "s", gpus, gpu->id,
                     p->allow_transfer ? " (none transferable for this dtype)"
                                       : " (transfer not allowed)");
        else
            snprintf(e->note, sizeof(e->note), "no measured %s rows for %s%s: analytical",
                     tc_dtype_name(dtype), gpu->id,
                     p->allow_transfer ? "" : " (transfer not allowed)");
    }
    return TC_OK;
}

/* Whether the database's snapshot of gpu_id is a host CPU (the cpu
 * backend's), which no GPU model describes. */
bool tc_calib_cpu_host(struct tc_db *db, const char *gpu_id)
{
    struct tc_gpu g;
    bool cpu = tc_db_get_gpu(db, gpu_id, &g) == TC_OK && g.vendor == TC_VENDOR_CPU;

    tc_clear_error();
    return cpu;
}

int tc_calib_from_db(const struct tc_specs *specs, struct tc_db *db, const char *gpu_id,
                     enum tc_dtype dtype, bool reuse, struct tc_calib **out, char *note,
                     size_t note_len)
{
    struct pred_db d = {0};
    struct pred_db *list[1] = {&d};
    struct tc_predictor p = {0};
    struct entry e = {0};
    struct tc_calib_sample *samples = NULL;
    struct tc_calib_params stored;
    struct tc_gpu snapshot;
    const struct tc_gpu *gpu;
    size_t n = 0, cap = 0;
    bool have_stored = false;
    int err;

    if (!specs || !db || !gpu_id || !out)
        return tc_error(TC_ERR_INVALID, "tc_calib_from_db: missing argument");
    *out = NULL;
    if (note && note_len)
        note[0] = '\0';
    d.db = db;
    d.path = (char *)(uintptr_t)tc_db_path(db); /* borrowed, never freed here */
    err = pred_db_scan(&d);
    if (err < 0)
        goto cleanup;
    p.specs = specs;
    gpu = pred_gpu_of(&p, gpu_id, list, 1, &snapshot);
    if (!gpu && tc_calib_cpu_host(db, gpu_id)) {
        err = tc_error(TC_ERR_UNSUPPORTED,
                       "%s: '%s' is the host CPU of a cpu-backend collection: the GEMM model "
                       "describes GPUs (tensor units, SMs, memory bandwidth), so a CPU "
                       "collection cannot be calibrated against GPU specs; the cpu backend "
                       "tests the collector and the database tools without a GPU",
                       d.path, gpu_id);
        goto cleanup;
    }
    if (!gpu) {
        err = tc_error(TC_ERR_NOT_FOUND, "%s: GPU '%s' is neither in the specs nor in the database",
                       d.path, gpu_id);
        goto cleanup;
    }
    err = gather(&d, gpu, dtype, &samples, &n, &cap);
    if (err < 0 || !n)
        goto cleanup;
    tc_strlcpy(e.gpu_id, gpu_id, sizeof(e.gpu_id));
    e.dtype = dtype;
    if (reuse)
        have_stored = stored_params(list, 1, &e, gpu, n, true, &stored);
    if (note && note_len)
        tc_strlcpy(note, e.note, note_len);
    *out = tc_calib_build(samples, n, have_stored ? &stored : NULL);
    if (!*out) {
        err = TC_ERR_NOMEM;
        goto cleanup;
    }
    {
        char runs[sizeof(stored.runs)];
        size_t used = 0;

        runs[0] = '\0';
        for (size_t i = 0; i < d.n_runs; i++) {
            int w = snprintf(runs + used, sizeof(runs) - used, "%s%lld:%d", used ? "," : "",
                             (long long)d.run_ids[i], (int)d.run_timing[i]);

            if (w < 0 || (size_t)w >= sizeof(runs) - used) {
                runs[0] = '\0'; /* too many runs to list: readers scan */
                break;
            }
            used += (size_t)w;
        }
        tc_calib_set_runs(*out, runs);
        tc_calib_set_fingerprint(*out, tc_calib_model_fingerprint(gpu, dtype));
    }
cleanup:
    free(samples);
    free(d.run_ids);
    free(d.run_timing);
    free(d.pairs);
    return err;
}
