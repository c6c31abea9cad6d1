/* The source of a transfer: which other (GPU, dtype) with measured rows a
 * GPU without rows of its own borrows its calibration from. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "predictor-internal.h"

/* Half-precision tensor types share kernels and pipes; so do the 8-bit
 * ones. fp32 (SIMT) and tf32 stand alone. */
static int dtype_class(enum tc_dtype d)
{
    switch (d) {
    case TC_DTYPE_FP16:
    case TC_DTYPE_BF16:
        return 1;
    case TC_DTYPE_FP8:
    case TC_DTYPE_INT8:
        return 2;
    default:
        return 10 + (int)d;
    }
}

/* A (database, GPU, dtype) whose rows could be transferred. */
struct candidate {
    struct pred_db *db;
    char gpu_id[TC_ID_MAX];
    enum tc_dtype dtype;
    int64_t rows;
    int score;
};

static int push_candidate(struct candidate **list, size_t *n, size_t *cap, struct pred_db *d,
                          const char *gpu_id, enum tc_dtype dtype, int64_t rows)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        struct candidate *grown = realloc(*list, c * sizeof(*grown));

        if (!grown)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        *list = grown;
        *cap = c;
    }
    (*list)[*n].db = d;
    tc_strlcpy((*list)[*n].gpu_id, gpu_id, TC_ID_MAX);
    (*list)[*n].dtype = dtype;
    (*list)[*n].rows = rows;
    (*list)[(*n)++].score = 0;
    return TC_OK;
}

/* The (GPU, dtype) pairs of a shipped file from its stored calibrations
 * alone: the file is named after its GPU, and a calibration row says how many
 * rows it was fitted on. Reading those few rows instead of counting every
 * measured row keeps the first query of a GPU without a database of its own
 * cheap. tools/build-prebuilt.sh calibrates every (GPU, dtype) of a shipped
 * file, so its calibrations list its pairs; false if the file stores none of
 * this model version (then it is scanned). */
static bool stored_pairs(struct pred_db *d, enum tc_dtype dtype, struct candidate **list, size_t *n,
                         size_t *cap)
{
    const char *base = strrchr(d->path, '/');
    char id[TC_ID_MAX];
    size_t len;
    bool any = false;

    base = base ? base + 1 : d->path;
    len = strlen(base);
    if (len < 4 || len - 3 >= sizeof(id))
        return false;
    memcpy(id, base, len - 3);
    id[len - 3] = '\0';
    for (int dt = 0; dt < TC_DTYPE_COUNT; dt++) {
        struct tc_calibration_row cr;

        if (tc_db_get_calibration(d->db, id, (enum tc_dtype)dt, -1, TC_CALIB_MODEL_VERSION, NULL,
                                  &cr) != TC_OK ||
            cr.n_rows <= 0)
            continue;
        any = true;
        if (dtype_class((enum tc_dtype)dt) == dtype_class(dtype) &&
            push_candidate(list, n, cap, d, id, (enum tc_dtype)dt, cr.n_rows) < 0)
            return false;
    }
    tc_clear_error();
    return any;
}

static int candidate_cmp(const void *a, const void *b)
{
    const struct candidate *x = a, *y = b;

    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->rows > y->rows ? -1 : x->rows < y->rows;
}

/* Chooses the source of a transfer onto (gpu, dtype): the same GPU with a
 * compatible dtype first, then another GPU of the same vendor, nearest
 * architecture generation first, the same dtype before a compatible one;
 * ties go to the most rows. Candidates are ranked before any is built, and
 * only the best one that builds is calibrated. With `timed`, only a source
 * some of whose rows were timed as the predictor is asked (p->timing)
 * qualifies, and the candidates are built in their order until one has
 * such rows. */
struct entry *pred_transfer_source(struct tc_predictor *p, const struct tc_gpu *gpu,
                                   enum tc_dtype dtype, bool timed)
{
    struct pred_db **pool;
    size_t n_pool, n = 0, cap = 0;
    struct candidate *cands = NULL;
    struct entry *best = NULL;

    if (p->n_dbs) {
        pool = p->dbs;
        n_pool = p->n_dbs;
    } else if (p->use_prebuilt) {
        pred_prebuilt_scan_all(p);
        pool = p->prebuilt;
        n_pool = p->n_prebuilt;
    } else {
        return NULL;
    }
    for (size_t i = 0; i < n_pool; i++) {
        struct pred_db *d = pool[i];

        if (d->failed)
            continue;
        if (d->prebuilt && !d->scanned && stored_pairs(d, dtype, &cands, &n, &cap))
            continue;
        if (!d->scanned && pred_db_scan(d) < 0)
            continue;
        for (size_t j = 0; j < d->n_pairs; j++)
            if (push_candidate(&cands, &n, &cap, d, d->pairs[j].gpu_id, d->pairs[j].dtype,
                               d->pairs[j].rows) < 0)
                goto cleanup;
    }
    for (size_t i = 0; i < n; i++) {
        struct candidate *c = &cands[i];
        const struct tc_gpu *sg;
        struct tc_gpu snapshot;
        bool same_gpu = strcmp(c->gpu_id, gpu->id) == 0;
        int gap;

        c->score = -1;
        if (dtype_class(c->dtype) != dtype_class(dtype) || (same_gpu && c->dtype == dtype))
            continue;
        sg = pred_gpu_of(p, c->gpu_id, &c->db, 1, &snapshot);
        if (!sg || sg->vendor != gpu->vendor)
            continue;
        /* the same GPU first, then the nearest generation (Blackwell learns
         * more from Hopper than from Volta), then the same dtype */
        gap = abs((int)sg->arch - (int)gpu->arch);
        c->score = (same_gpu ? 100 : 0) + 10 * (3 - (gap < 3 ? gap : 3)) + (c->dtype == dtype);
    }
    if (n > 1) /* cands is NULL when no database had a candidate */
        qsort(cands, n, sizeof(*cands), candidate_cmp);
    for (size_t i = 0; i < n && cands[i].score >= 0; i++) {
        struct entry *e = pred_own_entry(p, cands[i].gpu_id, cands[i].dtype);

        if (e && !e->build_err && e->calib &&
            (!timed || tc_calib_has_timing(e->calib, p->timing))) {
            best = e;
            break;
        }
    }
cleanup:
    free(cands);
    return best;
}

/* Whether transferred parameters leave the analytical model as it is:
 * every scale at 1 and no kernel factor (across families, a source of
 * wall-clock rows only, whose fit has no fixed-cost scale or alignment
 * penalty). Judged on the parameters themselves, not on the rule that
 * made them. */
bool pred_transfers_nothing(const struct tc_calib_params *x)
{
    for (int j = 1; j < TC_CALIB_ALIGN_CLASSES; j++)
        if (x->align_factor[j] != 1)
            return false;
    return x->c_compute == 1 && x->c_memory == 1 && x->c_overhead == 1 && x->n_kernels == 0;
}
