/* Sweep specs: YAML in, a de-duplicated list of shapes out. The format is
 * documented in collector/sweeps/README.md. libyaml's document API keeps
 * the position of every node, so every error names file:line:column. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "bounds.h"
#include "collector.h"
#include "hash.h"
#include "input.h"
#include "tc-internal.h"
#include "yaml-walk.h"

/* Largest dimension a sweep may name or derive: 2^40 elements is far
 * beyond any GPU's memory, so anything larger is a typo. */
#define DIM_MAX TC_BOUND_DIM_MAX
/* Largest number of values one dimension may expand to. */
#define VALUES_MAX 10000000

struct tc_sweep {
    char *name;
    char hash[40];
    struct tc_shape *shapes;
    size_t n, cap;
};

struct i64vec {
    int64_t *v;
    size_t n, cap;
};

struct ctx {
    struct tc_yaml *y;
    struct tc_sweep *sweep;
    /* sweep-level defaults */
    struct i64vec dtypes, layouts;
};

static int vec_push(struct i64vec *v, int64_t x)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        int64_t *nv = realloc(v->v, cap * sizeof(*nv));

        if (!nv)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = x;
    return TC_OK;
}

static void vec_free(struct i64vec *v)
{
    free(v->v);
    v->v = NULL;
    v->n = v->cap = 0;
}

static int push_shape(struct ctx *c, const yaml_node_t *where, const struct tc_shape *s)
{
    struct tc_sweep *sw = c->sweep;

    if (sw->n >= TC_SWEEP_MAX_SHAPES)
        return tc_yaml_error(c->y, where, TC_ERR_PARSE, "the sweep expands to more than %d shapes",
                             TC_SWEEP_MAX_SHAPES);
    if (sw->n == sw->cap) {
        size_t cap = sw->cap ? sw->cap * 2 : 256;
        struct tc_shape *ns = realloc(sw->shapes, cap * sizeof(*ns));

        if (!ns)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        sw->shapes = ns;
        sw->cap = cap;
    }
    sw->shapes[sw->n++] = *s;
    return TC_OK;
}

/* Room for cap shapes at once: a set's shapes are counted before they are
 * expanded, and growing by doubling would copy millions of them again. */
static int reserve_shapes(struct tc_sweep *sw, size_t cap)
{
    struct tc_shape *ns;

    if (cap <= sw->cap)
        return TC_OK;
    ns = realloc(sw->shapes, cap * sizeof(*ns));
    if (!ns)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    sw->shapes = ns;
    sw->cap = cap;
    return TC_OK;
}

/* Refuses a set before expanding it when the product of its dimension sizes
 * (`factors`, named by `names` for the message) would take the sweep past
 * TC_SWEEP_MAX_SHAPES: expanding first would allocate gigabytes just to fail.
 * Multiplication saturates at UINT64_MAX so that no product can wrap. */
static int check_set_size(struct ctx *c, const yaml_node_t *set, const char *const *names,
                          const size_t *factors, size_t n_factors)
{
    uint64_t count = 1;
    bool saturated = false;
    char detail[256] = "";
    size_t len = 0;

    for (size_t i = 0; i < n_factors; i++) {
        uint64_t f = factors[i];

        if (f && count > UINT64_MAX / f) {
            count = UINT64_MAX;
            saturated = true;
        } else {
            count *= f;
        }
        if (len < sizeof(detail))
            len += (size_t)snprintf(detail + len, sizeof(detail) - len, "%s%zu %s", i ? " x " : "",
                                    factors[i], names[i]);
    }
    if (!saturated && count <= TC_SWEEP_MAX_SHAPES - c->sweep->n)
        return reserve_shapes(c->sweep, c->sweep->n + (size_t)count);
    if (saturated)
        return tc_yaml_error(c->y, set, TC_ERR_PARSE,
                             "the set expands to more than %" PRIu64 " shapes (%s); a sweep may "
                             "have at most %d",
                             UINT64_MAX, detail, TC_SWEEP_MAX_SHAPES);
    return tc_yaml_error(c->y, set, TC_ERR_PARSE,
                         "the set expands to %" PRIu64 " shapes (%s)%s; a sweep may have at most "
                         "%d",
                         count, detail, c->sweep->n ? " after the shapes of earlier sets" : "",
                         TC_SWEEP_MAX_SHAPES);
}

static const char *node_kind(const yaml_node_t *node)
{
    switch (node->type) {
    case YAML_SCALAR_NODE:
        return "a scalar";
    case YAML_SEQUENCE_NODE:
        return "a list";
    case YAML_MAPPING_NODE:
        return "a mapping";
    default:
        return "empty";
    }
}

static int parse_int(struct ctx *c, const yaml_node_t *node, const char *what, int64_t min,
                     int64_t max, int64_t *out)
{
    const char *s = tc_yaml_scalar(node);
    long long v;

    if (!s)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: expected an integer, found %s", what,
                             node_kind(node));
    if (tc_parse_i64(s, &v) < 0)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: '%s' is not an integer", what, s);
    if (v < min || v > max)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE,
                             "%s: %lld is out of range [%" PRId64 ", %" PRId64 "]", what, v, min,
                             max);
    *out = v;
    return TC_OK;
}

static int parse_bool(struct ctx *c, const yaml_node_t *node, const char *what, bool *out)
{
    const char *s = tc_yaml_scalar(node);

    if (s && (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcmp(s, "1")))
        *out = true;
    else if (s && (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcmp(s, "0")))
        *out = false;
    else
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: expected true or false", what);
    return TC_OK;
}

/* A list of key nodes and value nodes of a mapping, checked against the
 * keys the caller allows so that typos are errors rather than ignored. */
static int check_keys(struct ctx *c, const yaml_node_t *map, const char *const *allowed,
                      const char *where)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *key = tc_yaml_node(c->y, p->key);
        const char *k = tc_yaml_scalar(key);
        bool ok = false;

        if (!k)
            return tc_yaml_error(c->y, key, TC_ERR_PARSE, "%s: keys must be plain names", where);
        for (const char *const *a = allowed; *a; a++)
            ok = ok || !strcmp(*a, k);
        if (!ok) {
            char list[512] = "";

            for (const char *const *a = allowed; *a; a++) {
                size_t used = strlen(list);

                snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "", *a);
            }
            return tc_yaml_error(c->y, key, TC_ERR_PARSE, "%s: unknown key '%s' (known: %s)", where,
                                 k, list);
        }
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
            if (!strcmp(tc_yaml_scalar(tc_yaml_node(c->y, q->key)), k))
                return tc_yaml_error(c->y, key, TC_ERR_PARSE, "%s: key '%s' given twice", where, k);
    }
    return TC_OK;
}

static int parse_values(struct ctx *c, const yaml_node_t *node, const char *what,
                        struct i64vec *out);

static int expand_range(struct ctx *c, const yaml_node_t *node, const char *what,
                        struct i64vec *out)
{
    yaml_node_item_t *it = node->data.sequence.items.start;
    size_t n = (size_t)(node->data.sequence.items.top - it);
    int64_t from, to, step = 1;
    int err;

    if (node->type != YAML_SEQUENCE_NODE || n < 2 || n > 3)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE,
                             "%s: range takes [from, to] or [from, to, step]", what);
    if ((err = parse_int(c, tc_yaml_node(c->y, it[0]), what, 1, DIM_MAX, &from)) < 0 ||
        (err = parse_int(c, tc_yaml_node(c->y, it[1]), what, 1, DIM_MAX, &to)) < 0)
        return err;
    if (n == 3 && (err = parse_int(c, tc_yaml_node(c->y, it[2]), what, 1, DIM_MAX, &step)) < 0)
        return err;
    if (to < from)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE,
                             "%s: range ends (%" PRId64 ") before it starts (%" PRId64 ")", what,
                             to, from);
    /* counted before expanding; out->n covers earlier items of a list */
    if ((to - from) / step >= VALUES_MAX - (int64_t)out->n)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE,
                             "%s: %" PRId64 " values, more than %d in one dimension", what,
                             (to - from) / step + 1 + (int64_t)out->n, VALUES_MAX);
    for (int64_t v = from; v <= to; v += step)
        if ((err = vec_push(out, v)) < 0)
            return err;
    return TC_OK;
}

static int expand_pow2(struct ctx *c, const yaml_node_t *node, const char *what, struct i64vec *out)
{
    yaml_node_item_t *it = node->data.sequence.items.start;
    int64_t from, to;
    int err;

    if (node->type != YAML_SEQUENCE_NODE || node->data.sequence.items.top - it != 2)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: pow2 takes [from, to]", what);
    if ((err = parse_int(c, tc_yaml_node(c->y, it[0]), what, 1, DIM_MAX, &from)) < 0 ||
        (err = parse_int(c, tc_yaml_node(c->y, it[1]), what, 1, DIM_MAX, &to)) < 0)
        return err;
    if (to < from)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: pow2 range ends before it starts",
                             what);
    for (int64_t v = 1; v <= to; v *= 2)
        if (v >= from && (err = vec_push(out, v)) < 0)
            return err;
    return TC_OK;
}

/* Multiples of `of` around a value: the multiple nearest `around` and
 * `count` more on each side (positive ones only). Used to probe alignment
 * near a model's natural size (e.g. d_ff near 8/3·h). */
static int expand_multiples(struct ctx *c, const yaml_node_t *node, const char *what,
                            struct i64vec *out)
{
    static const char *const keys[] = {"of", "around", "count", NULL};
    const yaml_node_t *of_n, *around_n, *count_n;
    int64_t of, around, count = 4, centre;
    int err;

    if (node->type != YAML_MAPPING_NODE)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE,
                             "%s: multiples takes {of: N, around: V, count: C}", what);
    if ((err = check_keys(c, node, keys, what)) < 0)
        return err;
    of_n = tc_yaml_get(c->y, node, "of");
    around_n = tc_yaml_get(c->y, node, "around");
    count_n = tc_yaml_get(c->y, node, "count");
    if (!of_n || !around_n)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: multiples needs 'of' and 'around'",
                             what);
    if ((err = parse_int(c, of_n, "of", 1, DIM_MAX, &of)) < 0 ||
        (err = parse_int(c, around_n, "around", 1, DIM_MAX, &around)) < 0)
        return err;
    if (count_n && (err = parse_int(c, count_n, "count", 0, 100000, &count)) < 0)
        return err;
    if ((int64_t)out->n + 2 * count + 1 > VALUES_MAX)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: more than %d values in one dimension",
                             what, VALUES_MAX);
    centre = (around + of / 2) / of * of;
    for (int64_t i = -count; i <= count; i++) {
        int64_t v = centre + i * of;

        if (v >= 1 && v <= DIM_MAX && (err = vec_push(out, v)) < 0)
            return err;
    }
    return TC_OK;
}

/* A dimension: an integer, a list (of integers or nested specs), or a
 * mapping with exactly one of range / pow2 / multiples / values. */
static int parse_values(struct ctx *c, const yaml_node_t *node, const char *what,
                        struct i64vec *out)
{
    static const char *const keys[] = {"range", "pow2", "multiples", "values", NULL};
    const yaml_node_pair_t *p;
    const char *k;
    int64_t v;
    int err;

    switch (node->type) {
    case YAML_SCALAR_NODE:
        if ((err = parse_int(c, node, what, 1, DIM_MAX, &v)) < 0)
            return err;
        return vec_push(out, v);
    case YAML_SEQUENCE_NODE:
        if (node->data.sequence.items.top == node->data.sequence.items.start)
            return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: empty list", what);
        for (yaml_node_item_t *it = node->data.sequence.items.start;
             it < node->data.sequence.items.top; it++)
            if ((err = parse_values(c, tc_yaml_node(c->y, *it), what, out)) < 0)
                return err;
        return TC_OK;
    case YAML_MAPPING_NODE:
        if ((err = check_keys(c, node, keys, what)) < 0)
            return err;
        if (node->data.mapping.pairs.top - node->data.mapping.pairs.start != 1)
            return tc_yaml_error(c->y, node, TC_ERR_PARSE,
                                 "%s: give exactly one of range, pow2, multiples, values", what);
        p = node->data.mapping.pairs.start;
        k = tc_yaml_scalar(tc_yaml_node(c->y, p->key));
        node = tc_yaml_node(c->y, p->value);
        if (!strcmp(k, "range"))
            return expand_range(c, node, what, out);
        if (!strcmp(k, "pow2"))
            return expand_pow2(c, node, what, out);
        if (!strcmp(k, "multiples"))
            return expand_multiples(c, node, what, out);
        if (node->type != YAML_SEQUENCE_NODE)
            return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: values takes a list", what);
        return parse_values(c, node, what, out);
    default:
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: expected a value", what);
    }
}

/* A required or optional dimension of a set. */
static int set_dim(struct ctx *c, const yaml_node_t *set, const char *key, bool required,
                   int64_t dflt, struct i64vec *out)
{
    const yaml_node_t *node = tc_yaml_get(c->y, set, key);

    if (!node) {
        if (required)
            return tc_yaml_error(c->y, set, TC_ERR_PARSE, "set needs '%s'", key);
        return vec_push(out, dflt);
    }
    return parse_values(c, node, key, out);
}

static int parse_name_list(struct ctx *c, const yaml_node_t *node, const char *what, bool layouts,
                           struct i64vec *out)
{
    const yaml_node_item_t *start, *end;
    yaml_node_item_t one;
    int err;

    if (node->type == YAML_SCALAR_NODE) {
        /* a single name stands for a one-element list */
        one = 0;
        start = &one;
        end = start + 1;
    } else if (node->type == YAML_SEQUENCE_NODE &&
               node->data.sequence.items.top != node->data.sequence.items.start) {
        start = node->data.sequence.items.start;
        end = node->data.sequence.items.top;
    } else {
        return tc_yaml_error(c->y, node, TC_ERR_PARSE,
                             "%s: expected a name or a non-empty list of names", what);
    }
    for (const yaml_node_item_t *it = start; it < end; it++) {
        const yaml_node_t *item = it == &one ? node : tc_yaml_node(c->y, *it);
        const char *s = tc_yaml_scalar(item);
        int v;

        if (!s)
            return tc_yaml_error(c->y, item, TC_ERR_PARSE, "%s: expected a name", what);
        if (layouts) {
            enum tc_layout l;

            if (tc_layout_parse(s, &l) < 0)
                return tc_yaml_error(c->y, item, TC_ERR_PARSE,
                                     "%s: unknown layout '%s' (NN, NT, TN, TT)", what, s);
            v = l;
        } else {
            enum tc_dtype d;

            if (tc_dtype_parse(s, &d) < 0)
                return tc_yaml_error(c->y, item, TC_ERR_PARSE,
                                     "%s: unknown dtype '%s' (fp64, fp32, tf32, fp16, bf16, fp8, "
                                     "int8)",
                                     what, s);
            v = d;
        }
        for (size_t i = 0; i < out->n; i++)
            if (out->v[i] == v)
                return tc_yaml_error(c->y, item, TC_ERR_PARSE, "%s: '%s' given twice", what, s);
        if ((err = vec_push(out, v)) < 0)
            return err;
    }
    return TC_OK;
}

/* dtypes/layouts of a set: its own, else the sweep's, else the default. */
static int set_names(struct ctx *c, const yaml_node_t *set, const char *key, bool layouts, int dflt,
                     struct i64vec *out)
{
    const yaml_node_t *node = tc_yaml_get(c->y, set, key);
    const struct i64vec *sweep_level = layouts ? &c->layouts : &c->dtypes;

    if (node)
        return parse_name_list(c, node, key, layouts, out);
    if (sweep_level->n) {
        for (size_t i = 0; i < sweep_level->n; i++) {
            int err = vec_push(out, sweep_level->v[i]);

            if (err < 0)
                return err;
        }
        return TC_OK;
    }
    if (dflt < 0)
        return tc_yaml_error(c->y, set, TC_ERR_PARSE, "set has no '%s' and the sweep gives none",
                             key);
    return vec_push(out, dflt);
}

struct gemm_dims {
    struct i64vec m, n, k, batch;
};

static void gemm_dims_free(struct gemm_dims *d)
{
    vec_free(&d->m);
    vec_free(&d->n);
    vec_free(&d->k);
    vec_free(&d->batch);
}

static int emit_gemms(struct ctx *c, const yaml_node_t *set, bool bmm, const struct i64vec *dtypes,
                      const struct i64vec *layouts, int64_t m, int64_t n, int64_t k, int64_t batch)
{
    for (size_t d = 0; d < dtypes->n; d++) {
        for (size_t l = 0; l < layouts->n; l++) {
            struct tc_shape s = {0};
            int err;

            /* the database keys GEMMs by batch, so a batch-1 bmm is a GEMM */
            s.kind = bmm && batch > 1 ? TC_SHAPE_BMM : TC_SHAPE_GEMM;
            s.dtype = (enum tc_dtype)dtypes->v[d];
            s.layout = (enum tc_layout)layouts->v[l];
            s.m = m;
            s.n = n;
            s.k = k;
            s.batch = batch;
            if ((err = push_shape(c, set, &s)) < 0)
                return err;
        }
    }
    return TC_OK;
}

/* gemm / bmm sets: explicit `shapes`, `square` (m = n = k), or the product
 * (default) or element-wise pairing (`zip: true`) of m, n, k (and batch). */
static int parse_gemm_set(struct ctx *c, const yaml_node_t *set, bool bmm,
                          const struct i64vec *dtypes, const struct i64vec *layouts)
{
    const yaml_node_t *shapes = tc_yaml_get(c->y, set, "shapes");
    const yaml_node_t *square = tc_yaml_get(c->y, set, "square");
    const yaml_node_t *zip_n = tc_yaml_get(c->y, set, "zip");
    struct gemm_dims d = {0};
    bool zip = false;
    int err = TC_OK;

    if (zip_n && (err = parse_bool(c, zip_n, "zip", &zip)) < 0)
        return err;
    if (shapes) {
        if (square || tc_yaml_get(c->y, set, "m") || tc_yaml_get(c->y, set, "n") ||
            tc_yaml_get(c->y, set, "k") || tc_yaml_get(c->y, set, "batch"))
            return tc_yaml_error(c->y, shapes, TC_ERR_PARSE,
                                 "'shapes' excludes m, n, k, batch and square");
        if (shapes->type != YAML_SEQUENCE_NODE)
            return tc_yaml_error(c->y, shapes, TC_ERR_PARSE,
                                 "shapes: expected a list of [m, n, k%s]", bmm ? ", batch" : "");
        {
            static const char *const names[] = {"shapes", "dtypes", "layouts"};
            const size_t f[] = {
                (size_t)(shapes->data.sequence.items.top - shapes->data.sequence.items.start),
                dtypes->n, layouts->n};

            if ((err = check_set_size(c, set, names, f, TC_ARRAY_SIZE(f))) < 0)
                return err;
        }
        for (yaml_node_item_t *it = shapes->data.sequence.items.start;
             it < shapes->data.sequence.items.top; it++) {
            const yaml_node_t *t = tc_yaml_node(c->y, *it);
            int64_t v[4] = {0, 0, 0, 1};
            size_t want = bmm ? 4 : 3;

            if (t->type != YAML_SEQUENCE_NODE ||
                (size_t)(t->data.sequence.items.top - t->data.sequence.items.start) != want)
                return tc_yaml_error(c->y, t, TC_ERR_PARSE, "shapes: expected [m, n, k%s]",
                                     bmm ? ", batch" : "");
            for (size_t i = 0; i < want; i++)
                if ((err = parse_int(c, tc_yaml_node(c->y, t->data.sequence.items.start[i]),
                                     "shapes", 1, DIM_MAX, &v[i])) < 0)
                    return err;
            if ((err = emit_gemms(c, t, bmm, dtypes, layouts, v[0], v[1], v[2], v[3])) < 0)
                return err;
        }
        return TC_OK;
    }
    if (square) {
        if (tc_yaml_get(c->y, set, "m") || tc_yaml_get(c->y, set, "n") ||
            tc_yaml_get(c->y, set, "k"))
            return tc_yaml_error(c->y, square, TC_ERR_PARSE, "'square' excludes m, n and k");
        if ((err = parse_values(c, square, "square", &d.m)) < 0)
            goto out;
        if ((err = set_dim(c, set, "batch", bmm, 1, &d.batch)) < 0)
            goto out;
        {
            static const char *const names[] = {"square", "batch", "dtypes", "layouts"};
            const size_t f[] = {d.m.n, d.batch.n, dtypes->n, layouts->n};

            if ((err = check_set_size(c, set, names, f, TC_ARRAY_SIZE(f))) < 0)
                goto out;
        }
        for (size_t i = 0; i < d.m.n; i++)
            for (size_t b = 0; b < d.batch.n; b++)
                if ((err = emit_gemms(c, set, bmm, dtypes, layouts, d.m.v[i], d.m.v[i], d.m.v[i],
                                      d.batch.v[b])) < 0)
                    goto out;
        goto out;
    }
    if ((err = set_dim(c, set, "m", true, 0, &d.m)) < 0 ||
        (err = set_dim(c, set, "n", true, 0, &d.n)) < 0 ||
        (err = set_dim(c, set, "k", true, 0, &d.k)) < 0 ||
        (err = set_dim(c, set, "batch", bmm, 1, &d.batch)) < 0)
        goto out;
    if (zip) {
        size_t len = d.m.n;

        if (d.n.n != len || d.k.n != len || (bmm && d.batch.n != len))
            return gemm_dims_free(&d),
                   tc_yaml_error(c->y, zip_n, TC_ERR_PARSE,
                                 "zip: m, n, k%s must have the same number of values",
                                 bmm ? " and batch" : "");
        {
            static const char *const names[] = {"zipped", "dtypes", "layouts"};
            const size_t f[] = {len, dtypes->n, layouts->n};

            if ((err = check_set_size(c, set, names, f, TC_ARRAY_SIZE(f))) < 0)
                goto out;
        }
        for (size_t i = 0; i < len; i++)
            if ((err = emit_gemms(c, set, bmm, dtypes, layouts, d.m.v[i], d.n.v[i], d.k.v[i],
                                  bmm ? d.batch.v[i] : 1)) < 0)
                goto out;
        goto out;
    }
    {
        static const char *const names[] = {"m", "n", "k", "batch", "dtypes", "layouts"};
        const size_t f[] = {d.m.n, d.n.n, d.k.n, d.batch.n, dtypes->n, layouts->n};

        if ((err = check_set_size(c, set, names, f, TC_ARRAY_SIZE(f))) < 0)
            goto out;
    }
    for (size_t b = 0; b < d.batch.n; b++)
        for (size_t i = 0; i < d.m.n; i++)
            for (size_t j = 0; j < d.n.n; j++)
                for (size_t l = 0; l < d.k.n; l++)
                    if ((err = emit_gemms(c, set, bmm, dtypes, layouts, d.m.v[i], d.n.v[j],
                                          d.k.v[l], d.batch.v[b])) < 0)
                        goto out;
out:
    gemm_dims_free(&d);
    return err;
}

enum tf_op { OP_QKV, OP_SCORES, OP_VALUES, OP_PROJ, OP_MLP_UP, OP_MLP_DOWN, OP_LOGITS, OP_N };
static const char *const tf_op_names[OP_N] = {"qkv",    "scores",   "values", "proj",
                                              "mlp_up", "mlp_down", "logits"};

/* How each op's (m, n, k, batch) is derived, for messages. */
static const char *const tf_op_dims[OP_N][4] = {
    {"b.s", "3h/t", "h", "1"}, {"s", "s", "h/a", "b.a/t"}, {"s", "h/a", "s", "b.a/t"},
    {"b.s", "h", "h/t", "1"},  {"b.s", "ffn/t", "h", "1"}, {"b.s", "h", "ffn/t", "1"},
    {"b.s", "v", "h", "1"},
};

/* x.y for positive x and y, or INT64_MAX where it would not fit: a derived
 * dimension that large is refused, never formed. */
static int64_t sat_mul(int64_t x, int64_t y)
{
    int64_t p;

    return __builtin_mul_overflow(x, y, &p) ? INT64_MAX : p;
}

static int64_t gcd64(int64_t x, int64_t y)
{
    while (y) {
        int64_t r = x % y;

        x = y;
        y = r;
    }
    return x;
}

/* A derived dimension over DIM_MAX: the GEMM could be neither measured nor
 * stored (the database keeps dimensions up to 2^40), and the set's values
 * are what the user has to change, so the message names them. */
static int tf_dim_error(struct ctx *c, const yaml_node_t *set, int op, int d, int64_t value,
                        int64_t H, int64_t A, int64_t S, int64_t B, int64_t T, int64_t F)
{
    static const char dim_names[4][6] = {"m", "n", "k", "batch"};
    char v[32];

    if (value == INT64_MAX)
        snprintf(v, sizeof(v), "more than 2^63");
    else
        snprintf(v, sizeof(v), "%" PRId64, value);
    return tc_yaml_error(c->y, set, TC_ERR_RANGE,
                         "the %s GEMM's %s = %s is %s, over the 2^40 limit of a dimension (h = "
                         "%" PRId64 ", a = %" PRId64 ", s = %" PRId64 ", b = %" PRId64
                         ", t = %" PRId64 ", ffn = %" PRId64 ")",
                         tf_op_names[op], dim_names[d], tf_op_dims[op][d], v, H, A, S, B, T, F);
}

/* Transformer sets derive the GEMMs of a Megatron-style layer from h, a, s,
 * b, v, t (reference table in the paper notes); combinations where a does
 * not divide h, t does not divide h or b·a are skipped, as no such model
 * can be built. */
static int parse_transformer_set(struct ctx *c, const yaml_node_t *set, const struct i64vec *dtypes,
                                 const struct i64vec *layouts)
{
    struct i64vec h = {0}, a = {0}, s = {0}, b = {0}, v = {0}, t = {0}, ffn = {0};
    const yaml_node_t *ops_n = tc_yaml_get(c->y, set, "ops");
    const yaml_node_t *ffn_n = tc_yaml_get(c->y, set, "ffn");
    bool ops[OP_N];
    size_t emitted = 0, n_ops = 0;
    int err;

    for (int i = 0; i < OP_N; i++)
        ops[i] = !ops_n;
    if (ops_n) {
        if (ops_n->type != YAML_SEQUENCE_NODE)
            return tc_yaml_error(c->y, ops_n, TC_ERR_PARSE, "ops: expected a list of names");
        for (yaml_node_item_t *it = ops_n->data.sequence.items.start;
             it < ops_n->data.sequence.items.top; it++) {
            const yaml_node_t *item = tc_yaml_node(c->y, *it);
            const char *name = tc_yaml_scalar(item);
            int found = -1;

            for (int i = 0; name && i < OP_N; i++)
                if (!strcmp(name, tf_op_names[i]))
                    found = i;
            if (found < 0)
                return tc_yaml_error(c->y, item, TC_ERR_PARSE,
                                     "ops: unknown op '%s' (qkv, scores, values, proj, mlp_up, "
                                     "mlp_down, logits)",
                                     name ? name : "?");
            ops[found] = true;
        }
    }
    if ((err = set_dim(c, set, "h", true, 0, &h)) < 0 ||
        (err = set_dim(c, set, "a", true, 0, &a)) < 0 ||
        (err = set_dim(c, set, "s", true, 0, &s)) < 0 ||
        (err = set_dim(c, set, "b", false, 1, &b)) < 0 ||
        (err = set_dim(c, set, "v", !ops_n || ops[OP_LOGITS], 1, &v)) < 0 ||
        (err = set_dim(c, set, "t", false, 1, &t)) < 0)
        goto out;
    if (ffn_n && (err = parse_values(c, ffn_n, "ffn", &ffn)) < 0)
        goto out;
    for (int i = 0; i < OP_N; i++)
        n_ops += ops[i];
    {
        /* an upper bound: combinations that do not divide are skipped later */
        static const char *const names[] = {"h", "a",   "s",   "b",      "t",
                                            "v", "ffn", "ops", "dtypes", "layouts"};
        const size_t f[] = {h.n,   a.n,       s.n,       b.n, t.n, v.n, ffn.n ? ffn.n : 1,
                            n_ops, dtypes->n, layouts->n};

        if ((err = check_set_size(c, set, names, f, TC_ARRAY_SIZE(f))) < 0)
            goto out;
    }
    for (size_t ih = 0; ih < h.n; ih++)
        for (size_t ia = 0; ia < a.n; ia++)
            for (size_t is = 0; is < s.n; is++)
                for (size_t ib = 0; ib < b.n; ib++)
                    for (size_t it = 0; it < t.n; it++)
                        for (size_t iv = 0; iv < v.n; iv++)
                            for (size_t iff = 0; iff < (ffn.n ? ffn.n : 1); iff++) {
                                int64_t H = h.v[ih], A = a.v[ia], S = s.v[is], B = b.v[ib];
                                int64_t T = t.v[it], V = v.v[iv];
                                /* every value is at most 2^40, so 3h and 4h
                                 * fit; b.s and b.a may not, and saturate */
                                int64_t F = ffn.n ? ffn.v[iff] : 4 * H;
                                int64_t bs = sat_mul(B, S), dh = H / A;
                                /* t divides b.a when t / gcd(t, a) divides b:
                                 * tested, and b.a/t formed, without b.a */
                                int64_t ta = T / gcd64(T, A);
                                int64_t bat = B % ta ? 0 : sat_mul(B / ta, A / (T / ta));
                                /* (m, n, k, batch) per op, from the table */
                                int64_t dims[OP_N][4] = {
                                    {bs, 3 * H / T, H, 1}, {S, S, dh, bat},   {S, dh, S, bat},
                                    {bs, H, H / T, 1},     {bs, F / T, H, 1}, {bs, H, F / T, 1},
                                    {bs, V, H, 1},
                                };

                                if (H % A || H % T || F % T || B % ta)
                                    continue;
                                for (int op = 0; op < OP_N; op++) {
                                    bool bmm = op == OP_SCORES || op == OP_VALUES;

                                    if (!ops[op])
                                        continue;
                                    for (int d = 0; d < 4; d++)
                                        if (dims[op][d] > DIM_MAX) {
                                            err = tf_dim_error(c, set, op, d, dims[op][d], H, A, S,
                                                               B, T, F);
                                            goto out;
                                        }
                                    if ((err = emit_gemms(c, set, bmm, dtypes, layouts, dims[op][0],
                                                          dims[op][1], dims[op][2], dims[op][3])) <
                                        0)
                                        goto out;
                                    emitted++;
                                }
                            }
    if (!emitted)
        err = tc_yaml_error(c->y, set, TC_ERR_PARSE,
                            "no combination of h, a, t (and ffn) divides evenly: the set is empty");
out:
    vec_free(&h);
    vec_free(&a);
    vec_free(&s);
    vec_free(&b);
    vec_free(&v);
    vec_free(&t);
    vec_free(&ffn);
    return err;
}

/* An attention shape the database can hold: it reads each dimension back
 * as at most 2^31 - 1, and the scores and values GEMMs' batch, batch.heads,
 * must stay within a GEMM's 2^40 (with both factors below 2^31 the product
 * cannot wrap). */
static int check_attention_dims(struct ctx *c, const yaml_node_t *set, const struct tc_shape *s)
{
    const struct {
        const char *name;
        int64_t v;
    } dims[] = {{"batch", s->batch}, {"heads", s->heads},   {"kv_heads", s->kv_heads},
                {"seq_q", s->seq_q}, {"seq_kv", s->seq_kv}, {"head_dim", s->head_dim}};

    for (size_t i = 0; i < TC_ARRAY_SIZE(dims); i++)
        if (dims[i].v > INT32_MAX)
            return tc_yaml_error(c->y, set, TC_ERR_RANGE,
                                 "%s = %" PRId64 " is over the 2^31 - 1 limit of an attention "
                                 "dimension",
                                 dims[i].name, dims[i].v);
    if (s->batch * s->heads > DIM_MAX)
        return tc_yaml_error(c->y, set, TC_ERR_RANGE,
                             "batch.heads = %" PRId64 " (batch %" PRId64 ", heads %" PRId64
                             "), the batch of the scores and values GEMMs, is over the 2^40 "
                             "limit of a dimension",
                             s->batch * s->heads, s->batch, s->heads);
    return TC_OK;
}

/* A flag of an attention set: true/false, or a list of both ([false,
 * true]); v[0..*n) gets the values (absent: false alone). */
static int parse_flags(struct ctx *c, const yaml_node_t *set, const char *key, bool v[2], size_t *n)
{
    const yaml_node_t *node = tc_yaml_get(c->y, set, key);
    int err;

    v[0] = v[1] = false;
    *n = 1;
    if (!node)
        return TC_OK;
    if (node->type != YAML_SEQUENCE_NODE)
        return parse_bool(c, node, key, &v[0]);
    *n = 0;
    for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top;
         it++) {
        if (*n == 2)
            return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: at most [false, true]", key);
        if ((err = parse_bool(c, tc_yaml_node(c->y, *it), key, &v[(*n)++])) < 0)
            return err;
    }
    if (!*n)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: empty list", key);
    return TC_OK;
}

/* Attention sets: product of batch, heads, head_dim, seq_q, causal and
 * backward; kv_heads defaults to heads (MHA) and seq_kv to seq_q
 * (self-attention). impl: unfused (scores GEMM, softmax, values GEMM) or
 * cudnn (cuDNN's fused SDPA, the only one with a backward). */
static int parse_attention_set(struct ctx *c, const yaml_node_t *set, const struct i64vec *dtypes)
{
    struct i64vec batch = {0}, heads = {0}, kvh = {0}, sq = {0}, skv = {0}, hd = {0};
    bool causal_v[2], backward_v[2];
    size_t n_causal, n_backward;
    const yaml_node_t *impl_n = tc_yaml_get(c->y, set, "impl");
    enum tc_attn_impl impl = TC_ATTN_UNFUSED;
    bool kv_given = tc_yaml_get(c->y, set, "kv_heads") != NULL;
    bool skv_given = tc_yaml_get(c->y, set, "seq_kv") != NULL;
    int err;

    if (impl_n) {
        const char *name = tc_yaml_scalar(impl_n);

        if (name && !strcmp(name, "cudnn"))
            impl = TC_ATTN_CUDNN;
        else if (!name || strcmp(name, "unfused") != 0)
            return tc_yaml_error(c->y, impl_n, TC_ERR_PARSE,
                                 "impl: the collector measures 'unfused' and 'cudnn' (cuDNN's "
                                 "fused attention), not '%s'",
                                 name ? name : node_kind(impl_n));
    }
    if ((err = parse_flags(c, set, "causal", causal_v, &n_causal)) < 0 ||
        (err = parse_flags(c, set, "backward", backward_v, &n_backward)) < 0)
        return err;
    if (impl == TC_ATTN_UNFUSED && (backward_v[0] || backward_v[1]))
        return tc_yaml_error(c->y, tc_yaml_get(c->y, set, "backward"), TC_ERR_PARSE,
                             "backward: measured with impl: cudnn only");
    if ((err = set_dim(c, set, "batch", true, 0, &batch)) < 0 ||
        (err = set_dim(c, set, "heads", true, 0, &heads)) < 0 ||
        (err = set_dim(c, set, "kv_heads", false, 0, &kvh)) < 0 ||
        (err = set_dim(c, set, "seq_q", true, 0, &sq)) < 0 ||
        (err = set_dim(c, set, "seq_kv", false, 0, &skv)) < 0 ||
        (err = set_dim(c, set, "head_dim", true, 0, &hd)) < 0)
        goto out;
    {
        static const char *const names[] = {"batch",    "heads",  "kv_heads", "seq_q", "seq_kv",
                                            "head_dim", "causal", "backward", "dtypes"};
        const size_t f[] = {batch.n, heads.n,  kvh.n,      sq.n,     skv.n,
                            hd.n,    n_causal, n_backward, dtypes->n};

        if ((err = check_set_size(c, set, names, f, TC_ARRAY_SIZE(f))) < 0)
            goto out;
    }
    for (size_t ib = 0; ib < batch.n; ib++)
        for (size_t ih = 0; ih < heads.n; ih++)
            for (size_t ik = 0; ik < kvh.n; ik++)
                for (size_t iq = 0; iq < sq.n; iq++)
                    for (size_t ikv = 0; ikv < skv.n; ikv++)
                        for (size_t id = 0; id < hd.n; id++)
                            for (size_t ic = 0; ic < n_causal; ic++)
                                for (size_t d = 0; d < dtypes->n; d++) {
                                    struct tc_shape s = {0};

                                    s.kind = TC_SHAPE_ATTENTION;
                                    s.impl = impl;
                                    s.dtype = (enum tc_dtype)dtypes->v[d];
                                    s.layout = TC_LAYOUT_NT;
                                    s.batch = batch.v[ib];
                                    s.heads = heads.v[ih];
                                    s.kv_heads = kv_given ? kvh.v[ik] : s.heads;
                                    s.seq_q = sq.v[iq];
                                    s.seq_kv = skv_given ? skv.v[ikv] : s.seq_q;
                                    s.head_dim = hd.v[id];
                                    s.causal = causal_v[ic];
                                    if (s.heads % s.kv_heads) {
                                        err = tc_yaml_error(c->y, set, TC_ERR_PARSE,
                                                            "kv_heads %" PRId64
                                                            " does not divide heads %" PRId64,
                                                            s.kv_heads, s.heads);
                                        goto out;
                                    }
                                    if ((err = check_attention_dims(c, set, &s)) < 0)
                                        goto out;
                                    for (size_t iw = 0; iw < n_backward; iw++) {
                                        s.backward = backward_v[iw];
                                        if ((err = push_shape(c, set, &s)) < 0)
                                            goto out;
                                    }
                                }
out:
    vec_free(&batch);
    vec_free(&heads);
    vec_free(&kvh);
    vec_free(&sq);
    vec_free(&skv);
    vec_free(&hd);
    return err;
}

static int parse_set(struct ctx *c, const yaml_node_t *set)
{
    static const char *const gemm_keys[] = {"kind", "name",   "dtypes", "layouts", "m", "n",
                                            "k",    "square", "shapes", "zip",     NULL};
    static const char *const bmm_keys[] = {"kind", "name",  "dtypes", "layouts", "m",   "n",
                                           "k",    "batch", "square", "shapes",  "zip", NULL};
    static const char *const tf_keys[] = {"kind", "name", "dtypes", "layouts", "h",   "a", "s",
                                          "b",    "v",    "t",      "ffn",     "ops", NULL};
    static const char *const attn_keys[] = {"kind",     "name",     "dtypes", "batch",    "heads",
                                            "kv_heads", "seq_q",    "seq_kv", "head_dim", "causal",
                                            "impl",     "backward", NULL};
    struct i64vec dtypes = {0}, layouts = {0};
    const yaml_node_t *kind_n;
    const char *kind = "gemm";
    int err;

    if (set->type != YAML_MAPPING_NODE)
        return tc_yaml_error(c->y, set, TC_ERR_PARSE, "each set is a mapping, found %s",
                             node_kind(set));
    kind_n = tc_yaml_get(c->y, set, "kind");
    if (kind_n && !(kind = tc_yaml_scalar(kind_n)))
        return tc_yaml_error(c->y, kind_n, TC_ERR_PARSE,
                             "kind: expected gemm, bmm, transformer or attention");
    if (!strcmp(kind, "gemm"))
        err = check_keys(c, set, gemm_keys, "gemm set");
    else if (!strcmp(kind, "bmm"))
        err = check_keys(c, set, bmm_keys, "bmm set");
    else if (!strcmp(kind, "transformer"))
        err = check_keys(c, set, tf_keys, "transformer set");
    else if (!strcmp(kind, "attention"))
        err = check_keys(c, set, attn_keys, "attention set");
    else
        return tc_yaml_error(c->y, kind_n, TC_ERR_PARSE,
                             "kind: unknown '%s' (gemm, bmm, transformer, attention)", kind);
    if (err < 0)
        return err;
    if ((err = set_names(c, set, "dtypes", false, -1, &dtypes)) < 0)
        goto out;
    if (strcmp(kind, "attention") != 0 &&
        (err = set_names(c, set, "layouts", true,
                         !strcmp(kind, "transformer") ? TC_LAYOUT_NT : TC_LAYOUT_NN, &layouts)) < 0)
        goto out;
    if (!strcmp(kind, "gemm") || !strcmp(kind, "bmm"))
        err = parse_gemm_set(c, set, !strcmp(kind, "bmm"), &dtypes, &layouts);
    else if (!strcmp(kind, "transformer"))
        err = parse_transformer_set(c, set, &dtypes, &layouts);
    else
        err = parse_attention_set(c, set, &dtypes);
out:
    vec_free(&dtypes);
    vec_free(&layouts);
    return err;
}

static int cmp_i64(int64_t x, int64_t y)
{
    return x < y ? -1 : x > y;
}

/* Field by field, stopping at the first that differs: dedup sorts millions
 * of shapes with it (copying both keys into arrays first cost more than the
 * comparisons). */
int tc_shape_cmp(const struct tc_shape *a, const struct tc_shape *b)
{
    int r;

    if ((r = cmp_i64(a->kind, b->kind)) || (r = cmp_i64(a->dtype, b->dtype)) ||
        (r = cmp_i64(a->layout, b->layout)) || (r = cmp_i64(a->m, b->m)) ||
        (r = cmp_i64(a->n, b->n)) || (r = cmp_i64(a->k, b->k)) ||
        (r = cmp_i64(a->batch, b->batch)) || (r = cmp_i64(a->heads, b->heads)) ||
        (r = cmp_i64(a->kv_heads, b->kv_heads)) || (r = cmp_i64(a->seq_q, b->seq_q)) ||
        (r = cmp_i64(a->seq_kv, b->seq_kv)) || (r = cmp_i64(a->head_dim, b->head_dim)) ||
        (r = cmp_i64(a->causal, b->causal)) || (r = cmp_i64(a->impl, b->impl)))
        return r;
    return cmp_i64(a->backward, b->backward);
}

static const struct tc_shape *sort_base;

static int cmp_index(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    int r = tc_shape_cmp(&sort_base[a], &sort_base[b]);

    return r ? r : (a < b ? -1 : a > b);
}

/* Drops repeated shapes (sets may overlap), keeping the first occurrence
 * so the measuring order is the order of the file. */
static int dedup(struct tc_sweep *sw)
{
    size_t *idx;
    bool *drop;
    size_t out = 0;

    if (sw->n < 2)
        return TC_OK;
    idx = malloc(sw->n * sizeof(*idx));
    drop = calloc(sw->n, sizeof(*drop));
    if (!idx || !drop) {
        free(idx);
        free(drop);
        return tc_error(TC_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < sw->n; i++)
        idx[i] = i;
    /* qsort is not reentrant-safe with a global base, but sweeps are parsed
     * by one thread of the command. */
    sort_base = sw->shapes;
    qsort(idx, sw->n, sizeof(*idx), cmp_index);
    sort_base = NULL;
    for (size_t i = 1; i < sw->n; i++)
        if (!tc_shape_cmp(&sw->shapes[idx[i]], &sw->shapes[idx[i - 1]]))
            drop[idx[i]] = true;
    for (size_t i = 0; i < sw->n; i++)
        if (!drop[i])
            sw->shapes[out++] = sw->shapes[i];
    sw->n = out;
    free(idx);
    free(drop);
    return TC_OK;
}

static int parse_root(struct ctx *c, const yaml_node_t *root)
{
    static const char *const keys[] = {"name", "description", "dtypes", "layouts", "sets", NULL};
    const yaml_node_t *sets, *node;
    int err;

    if (!root)
        return tc_error(TC_ERR_PARSE, "%s:1:1: empty sweep file", c->y->file);
    if (root->type != YAML_MAPPING_NODE)
        return tc_yaml_error(c->y, root, TC_ERR_PARSE, "a sweep is a mapping with 'sets', found %s",
                             node_kind(root));
    if ((err = check_keys(c, root, keys, "sweep")) < 0)
        return err;
    if ((node = tc_yaml_get(c->y, root, "name"))) {
        if (!tc_yaml_scalar(node) || !*tc_yaml_scalar(node))
            return tc_yaml_error(c->y, node, TC_ERR_PARSE, "name: expected a string");
        free(c->sweep->name);
        if (!(c->sweep->name = tc_strdup(tc_yaml_scalar(node))))
            return TC_ERR_NOMEM;
    }
    if ((node = tc_yaml_get(c->y, root, "dtypes")) &&
        (err = parse_name_list(c, node, "dtypes", false, &c->dtypes)) < 0)
        return err;
    if ((node = tc_yaml_get(c->y, root, "layouts")) &&
        (err = parse_name_list(c, node, "layouts", true, &c->layouts)) < 0)
        return err;
    sets = tc_yaml_get(c->y, root, "sets");
    if (!sets)
        return tc_yaml_error(c->y, root, TC_ERR_PARSE, "sweep has no 'sets'");
    if (sets->type != YAML_SEQUENCE_NODE ||
        sets->data.sequence.items.top == sets->data.sequence.items.start)
        return tc_yaml_error(c->y, sets, TC_ERR_PARSE, "sets: expected a non-empty list of sets");
    for (yaml_node_item_t *it = sets->data.sequence.items.start; it < sets->data.sequence.items.top;
         it++)
        if ((err = parse_set(c, tc_yaml_node(c->y, *it))) < 0)
            return err;
    return dedup(c->sweep);
}

static char *default_name(const char *path)
{
    const char *base = strrchr(path, '/');
    char *name, *dot;

    name = tc_strdup(base ? base + 1 : path);
    if (name && (dot = strrchr(name, '.')) && dot != name)
        *dot = '\0';
    return name;
}

struct tc_sweep *tc_sweep_parse(const char *yaml, size_t len, const char *name)
{
    struct tc_yaml y;
    struct ctx c = {0};
    struct tc_sweep *sw;
    int err = TC_ERR_NOMEM;

    if (!name)
        name = "<sweep>";
    if (len > TC_INPUT_SWEEP_MAX) {
        tc_error(TC_ERR_RANGE,
                 "%s: the sweep is %zu bytes, over the %" PRIu64 " MiB limit of a sweep spec", name,
                 len, TC_INPUT_SWEEP_MAX / TC_INPUT_MIB);
        return NULL;
    }
    sw = calloc(1, sizeof(*sw));
    if (!sw) {
        tc_error(TC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (!(sw->name = default_name(name))) {
        tc_sweep_free(sw);
        return NULL;
    }
    snprintf(sw->hash, sizeof(sw->hash), "fnv1a64:%016" PRIx64,
             tc_fnv1a64(yaml, len, TC_FNV1A64_SEED));
    err = tc_yaml_load_text(&y, name, yaml, len, 0);
    if (err == TC_OK) {
        c.y = &y;
        c.sweep = sw;
        err = parse_root(&c, tc_yaml_root(&y));
    }
    if (err == TC_OK && sw->n == 0)
        err = tc_error(TC_ERR_PARSE, "%s: the sweep has no shapes", name);
    vec_free(&c.dtypes);
    vec_free(&c.layouts);
    tc_yaml_free(&y);
    if (err < 0) {
        tc_sweep_free(sw);
        return NULL;
    }
    return sw;
}

struct tc_sweep *tc_sweep_load(const char *name)
{
    struct tc_sweep *sw = NULL;
    char resolved[PATH_MAX];
    const char *path = name;
    FILE *f;
    char *buf = NULL;
    size_t len = 0;

    /* a shipped sweep by name alone: quick, paper, exhaustive */
    if (tc_data_file_named("collector/sweeps", "sweep", name, resolved, sizeof(resolved), &path) <
        0)
        return NULL;
    f = fopen(path, "rb");
    if (!f) {
        tc_error(TC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (tc_input_read(path, f, TC_INPUT_SWEEP_MAX, "a sweep spec", &buf, &len) == TC_OK)
        sw = tc_sweep_parse(buf, len, path);
    free(buf);
    fclose(f);
    return sw;
}

void tc_sweep_free(struct tc_sweep *sweep)
{
    if (!sweep)
        return;
    free(sweep->name);
    free(sweep->shapes);
    free(sweep);
}

const char *tc_sweep_name(const struct tc_sweep *sweep)
{
    return sweep->name;
}

const char *tc_sweep_hash(const struct tc_sweep *sweep)
{
    return sweep->hash;
}

size_t tc_sweep_count(const struct tc_sweep *sweep)
{
    return sweep->n;
}

const struct tc_shape *tc_sweep_shapes(const struct tc_sweep *sweep)
{
    return sweep->shapes;
}

double tc_shape_flops(const struct tc_shape *s)
{
    /* a backward runs five GEMMs of the forward's two */
    if (s->kind == TC_SHAPE_ATTENTION)
        return 4.0 * (double)s->batch * (double)s->heads * (double)s->seq_q * (double)s->seq_kv *
               (double)s->head_dim * (s->backward ? 2.5 : 1.0);
    return 2.0 * (double)s->m * (double)s->n * (double)s->k * (double)(s->batch ? s->batch : 1);
}

void tc_shape_format(const struct tc_shape *s, char *buf, size_t len)
{
    if (s->kind == TC_SHAPE_ATTENTION)
        snprintf(buf, len,
                 "attention %s %s b%" PRId64 " h%" PRId64 "/%" PRId64 " s%" PRId64 "x%" PRId64
                 " d%" PRId64 "%s%s",
                 tc_attn_impl_name(s->impl), tc_dtype_name(s->dtype), s->batch, s->heads,
                 s->kv_heads, s->seq_q, s->seq_kv, s->head_dim, s->causal ? " causal" : "",
                 s->backward ? " backward" : "");
    else if (s->kind == TC_SHAPE_BMM)
        snprintf(buf, len, "bmm %s %s %" PRId64 "x%" PRId64 "x%" PRId64 " x%" PRId64,
                 tc_dtype_name(s->dtype), tc_layout_name(s->layout), s->m, s->n, s->k, s->batch);
    else
        snprintf(buf, len, "gemm %s %s %" PRId64 "x%" PRId64 "x%" PRId64, tc_dtype_name(s->dtype),
                 tc_layout_name(s->layout), s->m, s->n, s->k);
}
