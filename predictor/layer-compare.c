/* tc_layer_compare: measured transformer layers against the predictor. Reads
 * per-operation rows (Vidur's profiling tables: one row per GEMM of a layer,
 * named by vidur_op), predicts each of a layer's four GEMMs, and reports the
 * error of the predicted layer sum per (GPU, model) and over all: what
 * `tilecast predict layer --measured` prints, for the bindings too. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "csv.h"
#include "stats.h"
#include "tc-internal.h"

#define VIDUR_OPS 4
static const char *const vidur_ops[VIDUR_OPS] = {"attn_pre_proj", "attn_post_proj", "mlp_up_proj",
                                                 "mlp_down_proj"};

/* The GEMMs of one layer: one (gpu, model, tp, tokens). */
struct layer {
    char gpu[TC_ID_MAX];
    char model[TC_NAME_MAX];
    long long tp, tokens;
    double meas_sum[VIDUR_OPS], pred_sum[VIDUR_OPS];
    int count[VIDUR_OPS];
    enum tc_source source;
};

struct layer_list {
    struct layer *g;
    size_t n, cap;
};

struct tc_layer_report {
    struct tc_layer_group *groups;
    size_t n;
};

static struct layer *find_layer(struct layer_list *l, const char *gpu, const char *model,
                                long long tp, long long tokens)
{
    struct layer *g;

    /* Rows of one layer are adjacent in the files we read: try the last
     * layers first, then search. */
    for (size_t k = l->n; k-- > 0;) {
        g = &l->g[k];
        if (g->tp == tp && g->tokens == tokens && strcmp(g->gpu, gpu) == 0 &&
            strcmp(g->model, model) == 0)
            return g;
        if (l->n - k > 64)
            break;
    }
    for (size_t k = 0; k < l->n; k++) {
        g = &l->g[k];
        if (g->tp == tp && g->tokens == tokens && strcmp(g->gpu, gpu) == 0 &&
            strcmp(g->model, model) == 0)
            return g;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        struct layer *ng = realloc(l->g, cap * sizeof(*ng));

        if (!ng)
            return NULL;
        l->g = ng;
        l->cap = cap;
    }
    g = &l->g[l->n++];
    memset(g, 0, sizeof(*g));
    snprintf(g->gpu, sizeof(g->gpu), "%s", gpu);
    snprintf(g->model, sizeof(g->model), "%s", model);
    g->tp = tp;
    g->tokens = tokens;
    g->source = TC_SOURCE_MEASURED;
    return g;
}

/* One group's figures from the relative errors of its layers (sorted here:
 * the sum runs in that order, as it always has). */
static void group_stats(struct tc_layer_group *out, const char *gpu, const char *model, double *ape,
                        size_t n, enum tc_source source)
{
    double sum = 0;

    qsort(ape, n, sizeof(*ape), tc_cmp_double);
    for (size_t i = 0; i < n; i++)
        sum += ape[i];
    memset(out, 0, sizeof(*out));
    tc_strlcpy(out->gpu_id, gpu, sizeof(out->gpu_id));
    tc_strlcpy(out->model, model, sizeof(out->model));
    out->layers = n;
    out->mape_pct = n ? 100 * sum / (double)n : NAN;
    out->median_ape_pct = 100 * tc_quantile_sorted(ape, n, 0.5);
    out->p90_ape_pct = 100 * tc_quantile_sorted(ape, n, 0.9);
    out->source = source;
}

/* The relative error of a layer's predicted sum, false when one of its four
 * GEMMs is missing or it was measured below min_time_us. Shapes measured
 * twice count once, at their mean. */
static bool layer_error(const struct layer *g, double min_time_us, double *ape)
{
    double meas = 0, pred = 0;

    for (int o = 0; o < VIDUR_OPS; o++) {
        if (!g->count[o])
            return false;
        meas += g->meas_sum[o] / g->count[o];
        pred += g->pred_sum[o] / g->count[o];
    }
    if (meas < min_time_us)
        return false;
    *ape = fabs(pred - meas) / meas;
    return true;
}

static int field_int(struct tc_csv *csv, char **f, int col, const char *name, long long *out)
{
    char *end;

    errno = 0;
    *out = strtoll(f[col], &end, 10);
    if (!*f[col] || *end || errno)
        return tc_error(TC_ERR_PARSE, "%s:%ld: column '%s': '%s' is not an integer",
                        tc_csv_name(csv), tc_csv_line(csv), name, f[col]);
    return TC_OK;
}

/* Reads the rows of csv into layers, predicting each GEMM. */
static int read_layers(struct tc_predictor *p, const struct tc_specs *specs, struct tc_csv *csv,
                       const char *file, struct layer_list *layers)
{
    static const char *const names[] = {"gpu",    "dtype",   "m",     "n",  "k",
                                        "layout", "time_us", "model", "tp", "vidur_op"};
    enum { C_GPU, C_DTYPE, C_M, C_N, C_K, C_LAYOUT, C_TIME, C_MODEL, C_TP, C_OP, C_COUNT };
    const struct tc_gpu *gpu = NULL;
    int col[C_COUNT], nf, rc;
    char **fields;

    rc = tc_csv_next(csv, &nf, &fields);
    if (rc <= 0)
        return rc < 0 ? rc : tc_error(TC_ERR_PARSE, "%s: empty file", file);
    for (int c = 0; c < C_COUNT; c++)
        if ((col[c] = tc_csv_find(nf, fields, names[c])) < 0)
            return tc_error(TC_ERR_PARSE,
                            "%s: no column '%s' in the header (per-operation layer rows with "
                            "gpu,dtype,m,n,k,layout,time_us,model,tp,vidur_op are expected)",
                            file, names[c]);
    while ((rc = tc_csv_next(csv, &nf, &fields)) > 0) {
        struct tc_gemm_query q = {.batch = 1};
        struct tc_gemm_prediction pred;
        struct layer *g;
        long long m, n, k, tp;
        double time_us;
        int op = -1, err;

        if (nf < C_COUNT || nf <= col[C_OP] || nf <= col[C_TIME] || nf <= col[C_MODEL])
            return tc_error(TC_ERR_PARSE, "%s:%ld: %d fields, fewer than the header's", file,
                            tc_csv_line(csv), nf);
        for (int o = 0; o < VIDUR_OPS; o++)
            if (strcmp(fields[col[C_OP]], vidur_ops[o]) == 0)
                op = o;
        if (op < 0)
            continue; /* not one of a layer's four GEMMs */
        if ((err = field_int(csv, fields, col[C_M], "m", &m)) < 0 ||
            (err = field_int(csv, fields, col[C_N], "n", &n)) < 0 ||
            (err = field_int(csv, fields, col[C_K], "k", &k)) < 0 ||
            (err = field_int(csv, fields, col[C_TP], "tp", &tp)) < 0)
            return err;
        /* decimal and plausible (bounds.h), as an import has it */
        if (tc_parse_double(fields[col[C_TIME]], &time_us) < 0 || !tc_bound_time_ok(time_us))
            return tc_error(TC_ERR_PARSE,
                            "%s:%ld: column 'time_us': '%s' is not a plausible time in us "
                            "(a decimal number in [%g, %g])",
                            file, tc_csv_line(csv), fields[col[C_TIME]], TC_BOUND_TIME_US_MIN,
                            TC_BOUND_TIME_US_MAX);
        if (!gpu || strcmp(gpu->id, fields[col[C_GPU]]) != 0) {
            gpu = tc_specs_lookup(specs, fields[col[C_GPU]]);
            if (!gpu)
                return tc_error_prefix(TC_ERR_NOT_FOUND, "%s:%ld", file, tc_csv_line(csv));
        }
        if ((err = tc_dtype_parse(fields[col[C_DTYPE]], &q.dtype)) < 0 ||
            (err = tc_layout_parse(fields[col[C_LAYOUT]], &q.layout)) < 0)
            return tc_error_prefix(err, "%s:%ld", file, tc_csv_line(csv));
        q.m = m, q.n = n, q.k = k;
        if ((err = tc_predict_gemm(p, gpu, &q, &pred)) < 0)
            return tc_error_prefix(err, "%s:%ld", file, tc_csv_line(csv));
        if (!(g = find_layer(layers, gpu->id, fields[col[C_MODEL]], tp, m)))
            return tc_error(TC_ERR_NOMEM, "out of memory for the layers of %s", file);
        g->meas_sum[op] += time_us;
        g->pred_sum[op] += pred.time_us;
        g->count[op]++;
        if (pred.source > g->source)
            g->source = pred.source;
    }
    return rc < 0 ? rc : TC_OK;
}

/* One group per (gpu, model) in the order first seen, then all together. */
static int summarise(const struct layer_list *layers, double min_time_us, const char *file,
                     struct tc_layer_report *r)
{
    enum tc_source all_source = TC_SOURCE_MEASURED;
    double *ape = malloc((layers->n + 1) * sizeof(*ape));
    size_t n = 0;

    r->groups = calloc(layers->n + 1, sizeof(*r->groups));
    if (!ape || !r->groups) {
        free(ape);
        return tc_error(TC_ERR_NOMEM, "out of memory for the layers of %s", file);
    }
    for (size_t i = 0; i < layers->n; i++) {
        const struct layer *gi = &layers->g[i];
        enum tc_source source = TC_SOURCE_MEASURED;
        bool first = true;

        for (size_t j = 0; j < i && first; j++)
            if (strcmp(layers->g[j].gpu, gi->gpu) == 0 &&
                strcmp(layers->g[j].model, gi->model) == 0)
                first = false;
        if (!first)
            continue;
        n = 0;
        for (size_t j = i; j < layers->n; j++) {
            const struct layer *g = &layers->g[j];

            if (strcmp(g->gpu, gi->gpu) != 0 || strcmp(g->model, gi->model) != 0 ||
                !layer_error(g, min_time_us, &ape[n]))
                continue;
            n++;
            if (g->source > source)
                source = g->source;
        }
        if (n) {
            group_stats(&r->groups[r->n++], gi->gpu, gi->model, ape, n, source);
            if (source > all_source)
                all_source = source;
        }
    }
    n = 0;
    for (size_t j = 0; j < layers->n; j++)
        if (layer_error(&layers->g[j], min_time_us, &ape[n]))
            n++;
    if (n == 0) {
        free(ape);
        return tc_error(TC_ERR_NOT_FOUND, "%s: no complete layer (four GEMMs) at or above %g us",
                        file, min_time_us);
    }
    group_stats(&r->groups[r->n++], "all", "all", ape, n, all_source);
    free(ape);
    return TC_OK;
}

TC_API int tc_layer_compare(struct tc_predictor *p, const struct tc_specs *specs,
                            const char *csv_path, double min_time_us, struct tc_layer_report **out)
{
    struct layer_list layers = {0};
    struct tc_layer_report *r = NULL;
    struct tc_csv *csv = NULL;
    FILE *f;
    int err;

    if (out)
        *out = NULL;
    if (!p || !specs || !csv_path || !out)
        return tc_error(TC_ERR_INVALID, "tc_layer_compare: missing argument");
    if (!(f = fopen(csv_path, "r")))
        return tc_error(TC_ERR_IO, "%s: %s", csv_path, strerror(errno));
    if (!(csv = tc_csv_new(f, csv_path)) || !(r = calloc(1, sizeof(*r)))) {
        err = tc_error(TC_ERR_NOMEM, "out of memory reading %s", csv_path);
        goto done;
    }
    if ((err = read_layers(p, specs, csv, csv_path, &layers)) == TC_OK)
        err = summarise(&layers, min_time_us, csv_path, r);
done:
    free(layers.g);
    tc_csv_free(csv);
    fclose(f);
    if (err < 0)
        tc_layer_report_free(r);
    else
        *out = r;
    return err;
}

TC_API size_t tc_layer_report_count(const struct tc_layer_report *r)
{
    return r ? r->n : 0;
}

TC_API const struct tc_layer_group *tc_layer_report_at(const struct tc_layer_report *r, size_t i)
{
    return r && i < r->n ? &r->groups[i] : NULL;
}

TC_API void tc_layer_report_free(struct tc_layer_report *r)
{
    if (!r)
        return;
    free(r->groups);
    free(r);
}
