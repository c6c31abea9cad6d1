/* The kernel catalogue: gpu_specs/kernels/ *.yaml, loaded once per process.
 * The files are data (see gpu_specs/kernels/README.md); this file only
 * validates them and indexes them by architecture and dtype. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "gemm-internal.h"
#include "input.h"
#include "tc-internal.h"
#include "yaml-walk.h"

struct tc_catalogue {
    struct tc_kernel *kernels;
    size_t n, cap;
    unsigned arch_seen; /* families some file already claimed */
    /* per (arch, dtype) lists of pointers into kernels, rebuilt after loads */
    const struct tc_kernel **index[TC_ARCH_COUNT][TC_DTYPE_COUNT];
    size_t index_n[TC_ARCH_COUNT][TC_DTYPE_COUNT];
};

struct tc_catalogue *tc_catalogue_new(void)
{
    struct tc_catalogue *cat = calloc(1, sizeof(*cat));

    if (!cat)
        tc_error(TC_ERR_NOMEM, "out of memory");
    return cat;
}

static void index_clear(struct tc_catalogue *cat)
{
    for (int a = 0; a < TC_ARCH_COUNT; a++)
        for (int d = 0; d < TC_DTYPE_COUNT; d++) {
            free(cat->index[a][d]);
            cat->index[a][d] = NULL;
            cat->index_n[a][d] = 0;
        }
}

void tc_catalogue_free(struct tc_catalogue *cat)
{
    if (!cat)
        return;
    index_clear(cat);
    free(cat->kernels);
    free(cat);
}

static int index_build(struct tc_catalogue *cat)
{
    index_clear(cat);
    for (int a = 0; a < TC_ARCH_COUNT; a++) {
        for (int d = 0; d < TC_DTYPE_COUNT; d++) {
            size_t n = 0;

            for (size_t i = 0; i < cat->n; i++)
                if ((cat->kernels[i].arch_mask >> a & 1u) && (cat->kernels[i].dtype_mask >> d & 1u))
                    n++;
            if (!n)
                continue;
            /* NOLINTNEXTLINE(bugprone-sizeof-expression): the elements are pointers */
            cat->index[a][d] = malloc(n * sizeof(*cat->index[a][d]));
            if (!cat->index[a][d])
                return tc_error(TC_ERR_NOMEM, "out of memory");
            n = 0;
            for (size_t i = 0; i < cat->n; i++)
                if ((cat->kernels[i].arch_mask >> a & 1u) && (cat->kernels[i].dtype_mask >> d & 1u))
                    cat->index[a][d][n++] = &cat->kernels[i];
            cat->index_n[a][d] = n;
        }
    }
    return TC_OK;
}

/* ---- YAML helpers: every error names file:line:column (1-based) ---- */

struct ctx {
    struct tc_yaml *y;
};

static int get_int(const struct ctx *c, const yaml_node_t *node, const char *field, long long min,
                   long long max, int *out)
{
    const char *s = tc_yaml_scalar(node);
    long long v;

    if (!s || tc_parse_i64(s, &v) < 0)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: expected an integer, got '%s'", field,
                             s ? s : "(not a scalar)");
    if (v < min || v > max)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: %lld is out of range [%lld, %lld]",
                             field, v, min, max);
    *out = (int)v;
    return TC_OK;
}

static int get_bool(const struct ctx *c, const yaml_node_t *node, const char *field, bool *out)
{
    const char *s = tc_yaml_scalar(node);

    if (s && (strcmp(s, "true") == 0 || strcmp(s, "yes") == 0)) {
        *out = true;
        return TC_OK;
    }
    if (s && (strcmp(s, "false") == 0 || strcmp(s, "no") == 0)) {
        *out = false;
        return TC_OK;
    }
    return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: expected true or false, got '%s'", field,
                         s ? s : "(not a scalar)");
}

/* A flow or block sequence of exactly n integers, each within [min, max]. */
static int get_int_list(const struct ctx *c, yaml_node_t *node, const char *field, int n,
                        long long min, long long max, int *out)
{
    int count = 0;

    if (node->type != YAML_SEQUENCE_NODE)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: expected a list of %d integers", field,
                             n);
    count = (int)(node->data.sequence.items.top - node->data.sequence.items.start);
    if (count != n)
        return tc_yaml_error(c->y, node, TC_ERR_PARSE, "%s: expected %d integers, got %d", field, n,
                             count);
    for (int i = 0; i < n; i++) {
        yaml_node_t *item = tc_yaml_node(c->y, node->data.sequence.items.start[i]);
        int err = get_int(c, item, field, min, max, &out[i]);

        if (err < 0)
            return err;
    }
    return TC_OK;
}

static bool power_of_two_or_zero(int v)
{
    return v >= 0 && (v & (v - 1)) == 0;
}

static int parse_kernel(const struct ctx *c, yaml_node_t *map, unsigned arch_mask,
                        struct tc_kernel *k)
{
    enum {
        F_NAME = 1,
        F_DTYPES = 2,
        F_TILE = 4,
        F_WARP = 8,
        F_STAGES = 16,
        F_THREADS = 32,
        F_REGS = 64,
        F_INSTR = 128,
        F_SOURCE = 256
    };
    const unsigned required = 511;
    static const char *const required_names[] = {
        "name",    "dtypes",          "tile",  "warp_tile", "stages",
        "threads", "regs_per_thread", "instr", "source"};
    unsigned seen = 0;
    int err;

    memset(k, 0, sizeof(*k));
    k->arch_mask = arch_mask;
    k->cluster_m = k->cluster_n = 1;
    k->align_bytes = 16;
    k->mma_rate = 1.0;
    k->batched = true;
    if (map->type != YAML_MAPPING_NODE)
        return tc_yaml_error(c->y, map, TC_ERR_PARSE, "a kernel must be a mapping of fields");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = tc_yaml_node(c->y, p->key);
        yaml_node_t *val = tc_yaml_node(c->y, p->value);
        const char *name = tc_yaml_scalar(key);
        int tmp[3] = {0}; /* set by get_int_list, on success only */

        if (!name)
            return tc_yaml_error(c->y, key, TC_ERR_PARSE, "field names must be scalars");
        if (strcmp(name, "name") == 0) {
            const char *s = tc_yaml_scalar(val);

            if (!s || !*s || strlen(s) >= sizeof(k->name))
                return tc_yaml_error(c->y, val, TC_ERR_PARSE,
                                     "name: expected a string of 1 to %zu characters",
                                     sizeof(k->name) - 1);
            tc_strlcpy(k->name, s, sizeof(k->name));
            seen |= F_NAME;
        } else if (strcmp(name, "dtypes") == 0) {
            if (val->type != YAML_SEQUENCE_NODE ||
                val->data.sequence.items.top == val->data.sequence.items.start)
                return tc_yaml_error(c->y, val, TC_ERR_PARSE,
                                     "dtypes: expected a non-empty list such as [fp16, bf16]");
            for (yaml_node_item_t *it = val->data.sequence.items.start;
                 it < val->data.sequence.items.top; it++) {
                yaml_node_t *d = tc_yaml_node(c->y, *it);
                const char *s = tc_yaml_scalar(d);
                enum tc_dtype dt;

                if (!s || tc_dtype_parse(s, &dt) < 0 || dt == TC_DTYPE_FP64 || dt == TC_DTYPE_INT8)
                    return tc_yaml_error(c->y, d, TC_ERR_PARSE,
                                         "dtypes: unknown or unsupported dtype '%s' "
                                         "(expected fp32, tf32, fp16, bf16 or fp8)",
                                         s ? s : "?");
                k->dtype_mask |= 1u << dt;
            }
            seen |= F_DTYPES;
        } else if (strcmp(name, "tile") == 0) {
            if ((err = get_int_list(c, val, "tile", 3, 1, 1024, tmp)) < 0)
                return err;
            k->tile_m = tmp[0];
            k->tile_n = tmp[1];
            k->tile_k = tmp[2];
            seen |= F_TILE;
        } else if (strcmp(name, "warp_tile") == 0) {
            if ((err = get_int_list(c, val, "warp_tile", 2, 1, 1024, tmp)) < 0)
                return err;
            k->warp_m = tmp[0];
            k->warp_n = tmp[1];
            seen |= F_WARP;
        } else if (strcmp(name, "instr") == 0) {
            if ((err = get_int_list(c, val, "instr", 3, 1, 512, tmp)) < 0)
                return err;
            k->instr_m = tmp[0];
            k->instr_n = tmp[1];
            k->instr_k = tmp[2];
            seen |= F_INSTR;
        } else if (strcmp(name, "cluster") == 0) {
            if ((err = get_int_list(c, val, "cluster", 2, 1, 16, tmp)) < 0)
                return err;
            k->cluster_m = tmp[0];
            k->cluster_n = tmp[1];
        } else if (strcmp(name, "stages") == 0) {
            if ((err = get_int(c, val, "stages", 1, 32, &k->stages)) < 0)
                return err;
            seen |= F_STAGES;
        } else if (strcmp(name, "threads") == 0) {
            if ((err = get_int(c, val, "threads", 32, 1024, &k->threads)) < 0)
                return err;
            seen |= F_THREADS;
        } else if (strcmp(name, "regs_per_thread") == 0) {
            if ((err = get_int(c, val, "regs_per_thread", 1, 512, &k->regs_per_thread)) < 0)
                return err;
            seen |= F_REGS;
        } else if (strcmp(name, "smem_bytes") == 0) {
            int v = 0;

            if ((err = get_int(c, val, "smem_bytes", 1, 1 << 20, &v)) < 0)
                return err;
            k->smem_bytes = v;
        } else if (strcmp(name, "align_bytes") == 0) {
            if ((err = get_int(c, val, "align_bytes", 0, 128, &k->align_bytes)) < 0)
                return err;
            if (!power_of_two_or_zero(k->align_bytes))
                return tc_yaml_error(c->y, val, TC_ERR_PARSE,
                                     "align_bytes: %d is not 0 or a power of two", k->align_bytes);
        } else if (strcmp(name, "mma_rate") == 0) {
            const char *s = tc_yaml_scalar(val);

            if (!s || tc_parse_double(s, &k->mma_rate) < 0 || !(k->mma_rate > 0.0) ||
                k->mma_rate > 1.0)
                return tc_yaml_error(c->y, val, TC_ERR_PARSE,
                                     "mma_rate: expected a number in (0, 1], got '%s'",
                                     s ? s : "?");
        } else if (strcmp(name, "split_k") == 0) {
            if ((err = get_bool(c, val, "split_k", &k->split_k)) < 0)
                return err;
        } else if (strcmp(name, "stream_k") == 0) {
            if ((err = get_bool(c, val, "stream_k", &k->stream_k)) < 0)
                return err;
        } else if (strcmp(name, "batched") == 0) {
            if ((err = get_bool(c, val, "batched", &k->batched)) < 0)
                return err;
        } else if (strcmp(name, "tma") == 0) {
            if ((err = get_bool(c, val, "tma", &k->tma)) < 0)
                return err;
        } else if (strcmp(name, "source") == 0) {
            const char *s = tc_yaml_scalar(val);

            if (!s || !*s)
                return tc_yaml_error(c->y, val, TC_ERR_PARSE,
                                     "source: expected a non-empty string");
            tc_strlcpy(k->source, s, sizeof(k->source));
            seen |= F_SOURCE;
        } else {
            return tc_yaml_error(c->y, key, TC_ERR_PARSE, "unknown field '%s'", name);
        }
    }
    if ((seen & required) != required) {
        for (unsigned i = 0; i < TC_ARRAY_SIZE(required_names); i++)
            if (!(seen >> i & 1u))
                return tc_yaml_error(c->y, map, TC_ERR_PARSE, "kernel '%s': missing field '%s'",
                                     k->name[0] ? k->name : "?", required_names[i]);
    }
    /* Geometry that the occupancy and traffic model divide by. */
    if (k->tile_m % k->warp_m || k->tile_n % k->warp_n)
        return tc_yaml_error(c->y, map, TC_ERR_PARSE,
                             "kernel '%s': warp_tile %dx%d does not divide tile %dx%d", k->name,
                             k->warp_m, k->warp_n, k->tile_m, k->tile_n);
    if (k->threads % 32)
        return tc_yaml_error(c->y, map, TC_ERR_PARSE,
                             "kernel '%s': threads %d is not a multiple of 32", k->name,
                             k->threads);
    return TC_OK;
}

static int parse_document(struct tc_catalogue *cat, const struct ctx *c)
{
    yaml_node_t *root = tc_yaml_root(c->y);
    yaml_node_t *archs = NULL, *kernels = NULL;
    unsigned arch_mask = 0;
    size_t first = cat->n;
    int err;

    if (!root)
        return tc_error(TC_ERR_PARSE, "%s: empty file", c->y->file);
    if (root->type != YAML_MAPPING_NODE)
        return tc_yaml_error(c->y, root, TC_ERR_PARSE,
                             "expected a mapping with 'architectures' and 'kernels'");
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = tc_yaml_node(c->y, p->key);
        const char *name = tc_yaml_scalar(key);

        if (name && strcmp(name, "architectures") == 0)
            archs = tc_yaml_node(c->y, p->value);
        else if (name && strcmp(name, "kernels") == 0)
            kernels = tc_yaml_node(c->y, p->value);
        else
            return tc_yaml_error(c->y, key, TC_ERR_PARSE,
                                 "unknown top-level field '%s' (expected architectures, kernels)",
                                 name ? name : "?");
    }
    if (!archs)
        return tc_yaml_error(c->y, root, TC_ERR_PARSE, "missing 'architectures' list");
    if (!kernels)
        return tc_yaml_error(c->y, root, TC_ERR_PARSE, "missing 'kernels' list");
    if (archs->type != YAML_SEQUENCE_NODE ||
        archs->data.sequence.items.start == archs->data.sequence.items.top)
        return tc_yaml_error(c->y, archs, TC_ERR_PARSE,
                             "architectures: expected a non-empty list such as [ampere, ada]");
    for (yaml_node_item_t *it = archs->data.sequence.items.start;
         it < archs->data.sequence.items.top; it++) {
        yaml_node_t *a = tc_yaml_node(c->y, *it);
        const char *s = tc_yaml_scalar(a);
        enum tc_arch arch;

        if (!tc_arch_parse_gpu(s, &arch))
            return tc_yaml_error(
                c->y, a, TC_ERR_PARSE,
                "architectures: unknown family '%s' (expected " TC_ARCH_GPU_NAMES ")", s ? s : "?");
        if ((cat->arch_seen | arch_mask) >> arch & 1u)
            return tc_yaml_error(c->y, a, TC_ERR_PARSE,
                                 "architectures: '%s' is already covered by another file", s);
        arch_mask |= 1u << arch;
    }
    if (kernels->type != YAML_SEQUENCE_NODE ||
        kernels->data.sequence.items.start == kernels->data.sequence.items.top)
        return tc_yaml_error(c->y, kernels, TC_ERR_PARSE, "kernels: expected a non-empty list");
    for (yaml_node_item_t *it = kernels->data.sequence.items.start;
         it < kernels->data.sequence.items.top; it++) {
        yaml_node_t *kn = tc_yaml_node(c->y, *it);
        struct tc_kernel k;

        if ((err = parse_kernel(c, kn, arch_mask, &k)) < 0)
            goto fail;
        for (size_t i = first; i < cat->n; i++) {
            if (strcmp(cat->kernels[i].name, k.name) == 0) {
                err = tc_yaml_error(c->y, kn, TC_ERR_PARSE, "duplicate kernel name '%s'", k.name);
                goto fail;
            }
        }
        if (cat->n == cat->cap) {
            size_t cap = cat->cap ? cat->cap * 2 : 64;
            struct tc_kernel *grown = realloc(cat->kernels, cap * sizeof(*grown));

            if (!grown) {
                err = tc_error(TC_ERR_NOMEM, "out of memory");
                goto fail;
            }
            cat->kernels = grown;
            cat->cap = cap;
        }
        cat->kernels[cat->n++] = k;
    }
    cat->arch_seen |= arch_mask;
    return TC_OK;

fail:
    cat->n = first; /* a failed file adds nothing */
    return err;
}

int tc_catalogue_load_file(struct tc_catalogue *cat, const char *file)
{
    struct tc_yaml y;
    FILE *f;
    int err;

    if (!cat || !file)
        return tc_error(TC_ERR_INVALID, "tc_catalogue_load_file: bad arguments");
    f = fopen(file, "rb");
    if (!f)
        return tc_error(TC_ERR_IO, "%s: cannot open: %s", file, strerror(errno));
    err = tc_yaml_load_file(&y, file, f, TC_INPUT_CATALOGUE_MAX, "a kernel catalogue file", 0);
    if (err == TC_OK) {
        struct ctx c = {&y};

        err = parse_document(cat, &c);
    }
    if (err == TC_OK)
        err = index_build(cat);
    tc_yaml_free(&y);
    fclose(f);
    return err;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int tc_catalogue_load_dir(const char *dir, struct tc_catalogue **out)
{
    struct tc_catalogue *cat = NULL;
    DIR *d = NULL;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int err = TC_OK;

    if (!dir || !out)
        return tc_error(TC_ERR_INVALID, "tc_catalogue_load_dir: bad arguments");
    *out = NULL;
    d = opendir(dir);
    if (!d)
        return tc_error(TC_ERR_IO, "%s: cannot open the kernel catalogue: %s", dir,
                        strerror(errno));
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);

        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0 || e->d_name[0] == '.')
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **grown = realloc(names, ncap * sizeof(*names));

            if (!grown) {
                err = tc_error(TC_ERR_NOMEM, "out of memory");
                goto cleanup;
            }
            names = grown;
            cap = ncap;
        }
        if (!(names[n] = tc_strdup(e->d_name))) {
            err = TC_ERR_NOMEM;
            goto cleanup;
        }
        n++;
    }
    if (!n) {
        err = tc_error(TC_ERR_NOT_FOUND, "%s: no *.yaml kernel catalogue files", dir);
        goto cleanup;
    }
    qsort(names, n, sizeof(*names), cmp_names);
    if (!(cat = tc_catalogue_new())) {
        err = TC_ERR_NOMEM;
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];

        if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= (int)sizeof(path)) {
            err = tc_error(TC_ERR_RANGE, "%s/%s: path too long", dir, names[i]);
            goto cleanup;
        }
        if ((err = tc_catalogue_load_file(cat, path)) < 0)
            goto cleanup;
    }
    *out = cat;
    cat = NULL;

cleanup:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (d)
        closedir(d);
    tc_catalogue_free(cat);
    return err;
}

/* The process-wide catalogue. Loaded on first use; a failure is remembered
 * (with its message) so that every caller sees the same error. */
static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static struct tc_catalogue *default_cat;
static int default_err;
static char default_msg[1024];

static void default_load(void)
{
    char dir[PATH_MAX];

    default_err = tc_data_path("gpu_specs/kernels", dir, sizeof(dir));
    if (default_err == TC_OK)
        default_err = tc_catalogue_load_dir(dir, &default_cat);
    if (default_err < 0)
        tc_strlcpy(default_msg, tc_last_error(), sizeof(default_msg));
}

int tc_catalogue_default(const struct tc_catalogue **out)
{
    pthread_once(&default_once, default_load);
    if (default_err < 0) {
        *out = NULL;
        return tc_error(default_err, "%s", default_msg);
    }
    *out = default_cat;
    return TC_OK;
}

size_t tc_catalogue_count(const struct tc_catalogue *cat)
{
    return cat ? cat->n : 0;
}

const struct tc_kernel *tc_catalogue_at(const struct tc_catalogue *cat, size_t i)
{
    return cat && i < cat->n ? &cat->kernels[i] : NULL;
}

size_t tc_catalogue_kernels(const struct tc_catalogue *cat, enum tc_arch arch, enum tc_dtype dtype,
                            const struct tc_kernel *const **out)
{
    if (!cat || (unsigned)arch >= TC_ARCH_COUNT || (unsigned)dtype >= TC_DTYPE_COUNT) {
        *out = NULL;
        return 0;
    }
    *out = cat->index[arch][dtype];
    return cat->index_n[arch][dtype];
}
