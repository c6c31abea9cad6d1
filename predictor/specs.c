/* GPU specs: one YAML file per GPU (gpu_specs/README.md documents the
 * layout), loaded with libyaml's document API into struct tc_gpu. Every
 * error names the file, the line and column of the offending node and the
 * field, so a user who drops a new spec into --specs-dir can fix it without
 * reading this code. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <yaml.h>

#include "bounds.h"
#include "input.h"
#include "specs-internal.h"
#include "tc-internal.h"
#include "yaml-walk.h"

struct tc_specs {
    /* Individually allocated so the pointers tc_specs_at/find hand out stay
     * valid when tc_specs_add_dir grows the array. Sorted by id. */
    struct tc_gpu **gpus;
    char **files; /* files[i] is where gpus[i] came from */
    size_t count, cap;
};

/* ------------------------------------------------------------------------ */
/* Field tables                                                              */
/* ------------------------------------------------------------------------ */

enum field_kind {
    KIND_STRING,
    KIND_INT,
    KIND_I64,
    KIND_DOUBLE,
    KIND_VENDOR,
    KIND_ARCH,
    KIND_LINK,  /* enum tc_link by name */
    KIND_BOOL,  /* true or false, into an unsigned char */
    KIND_UCHAR, /* a small integer (0-255) */
};

enum field_rule {
    RULE_NONE = 0,
    RULE_POSITIVE, /* > 0 */
    RULE_NONNEG,   /* >= 0 */
};

struct field {
    const char *name;
    enum field_kind kind;
    size_t offset;
    size_t size; /* capacity of KIND_STRING fields */
    bool required;
    enum field_rule rule;
    double lo, hi; /* the plausible range (bounds.h), when hi > 0 */
};

/* clang-format off */
#define FIELD(name, kind, req, rule)                                                         \
    {#name, kind, offsetof(struct tc_gpu, name), sizeof(((struct tc_gpu *)0)->name), req, rule, \
     0, 0}
#define FIELD_IN(name, kind, req, lo, hi)                                                    \
    {#name, kind, offsetof(struct tc_gpu, name), sizeof(((struct tc_gpu *)0)->name), req,     \
     RULE_POSITIVE, lo, hi}
#define LINK_FIELD(name, kind, req, lo, hi)                                                  \
    {#name, kind, offsetof(struct tc_gpu, interconnect.name),                                 \
     sizeof(((struct tc_gpu *)0)->interconnect.name), req, RULE_POSITIVE, lo, hi}
/* clang-format on */

/* Scalars at the top level of a spec file. peak_tflops, flops_per_clk_per_unit,
 * limits, sources and flags are handled separately. */
static const struct field top_fields[] = {
    FIELD(id, KIND_STRING, true, RULE_NONE),
    FIELD(name, KIND_STRING, true, RULE_NONE),
    FIELD(vendor, KIND_VENDOR, true, RULE_NONE),
    FIELD(arch, KIND_ARCH, true, RULE_NONE),
    FIELD(compute_capability, KIND_STRING, true, RULE_NONE),
    FIELD_IN(units, KIND_INT, true, 1, TC_BOUND_UNITS_MAX),
    FIELD_IN(clock_tensor_mhz, KIND_DOUBLE, true, TC_BOUND_CLOCK_MHZ_MIN, TC_BOUND_CLOCK_MHZ_MAX),
    FIELD_IN(clock_vector_mhz, KIND_DOUBLE, true, TC_BOUND_CLOCK_MHZ_MIN, TC_BOUND_CLOCK_MHZ_MAX),
    FIELD_IN(clock_base_mhz, KIND_DOUBLE, false, TC_BOUND_CLOCK_MHZ_MIN, TC_BOUND_CLOCK_MHZ_MAX),
    FIELD_IN(clock_vector_sustained_mhz, KIND_DOUBLE, false, TC_BOUND_CLOCK_MHZ_MIN,
             TC_BOUND_CLOCK_MHZ_MAX),
    FIELD_IN(mem_bw_gbps, KIND_DOUBLE, true, TC_BOUND_MEM_BW_GBPS_MIN, TC_BOUND_MEM_BW_GBPS_MAX),
    FIELD_IN(mem_gb, KIND_DOUBLE, true, TC_BOUND_MEM_GB_MIN, TC_BOUND_MEM_GB_MAX),
    FIELD_IN(l2_bytes, KIND_I64, true, TC_BOUND_L2_BYTES_MIN, TC_BOUND_L2_BYTES_MAX),
    FIELD_IN(tdp_w, KIND_DOUBLE, true, TC_BOUND_TDP_W_MIN, TC_BOUND_TDP_W_MAX),
};

static const struct field limit_fields[] = {
    FIELD(warp_size, KIND_INT, true, RULE_POSITIVE),
    FIELD(max_threads_per_sm, KIND_INT, true, RULE_POSITIVE),
    FIELD(max_warps_per_sm, KIND_INT, true, RULE_POSITIVE),
    FIELD(max_blocks_per_sm, KIND_INT, true, RULE_POSITIVE),
    FIELD(max_threads_per_block, KIND_INT, true, RULE_POSITIVE),
    FIELD(regs_per_sm, KIND_INT, true, RULE_POSITIVE),
    FIELD(max_regs_per_block, KIND_INT, true, RULE_POSITIVE),
    FIELD(max_regs_per_thread, KIND_INT, true, RULE_POSITIVE),
    FIELD(reg_alloc_unit, KIND_INT, true, RULE_POSITIVE),
    FIELD(smem_per_sm_bytes, KIND_I64, true, RULE_POSITIVE),
    FIELD(smem_per_block_max_bytes, KIND_I64, true, RULE_POSITIVE),
    FIELD(reserved_smem_per_block_bytes, KIND_I64, true, RULE_NONNEG),
    FIELD(smem_alloc_unit_bytes, KIND_INT, true, RULE_POSITIVE),
};

/* interconnect: how the GPU reaches its peers in one node (the
 * collectives of a tensor-parallel model read bw_gbps). */
static const struct field interconnect_fields[] = {
    LINK_FIELD(link, KIND_LINK, true, 0, 0),
    LINK_FIELD(generation, KIND_INT, true, 1, 9),
    LINK_FIELD(links, KIND_INT, true, 1, 64),
    LINK_FIELD(bw_gbps, KIND_DOUBLE, true, TC_BOUND_PEER_BW_GBPS_MIN, TC_BOUND_PEER_BW_GBPS_MAX),
    LINK_FIELD(switched, KIND_BOOL, true, 0, 0),
    LINK_FIELD(pcie_gen, KIND_UCHAR, true, 1, 9),
};

#undef FIELD
#undef FIELD_IN
#undef LINK_FIELD

/* Keys handled outside the field tables. */
enum section {
    SEC_PEAK,
    SEC_FLOPS,
    SEC_LIMITS,
    SEC_SOURCES,
    SEC_FLAGS,
    SEC_INTERCONNECT,
    SEC_COUNT
};
static const char *const section_names[SEC_COUNT] = {
    "peak_tflops", "flops_per_clk_per_unit", "limits", "sources", "flags", "interconnect",
};
/* interconnect is optional: a spec without it predicts one GPU only */
static const bool section_required[SEC_COUNT] = {true, true, true, true, false, false};

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

struct parse_ctx {
    struct tc_yaml *y;
    struct tc_gpu *gpu;
};

static const char *node_type_name(const yaml_node_t *node)
{
    switch (node->type) {
    case YAML_SCALAR_NODE:
        return node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? "a plain scalar"
                                                                  : "a quoted string";
    case YAML_SEQUENCE_NODE:
        return "a list";
    case YAML_MAPPING_NODE:
        return "a mapping";
    default:
        return "nothing";
    }
}

/* ------------------------------------------------------------------------ */
/* Scalars                                                                   */
/* ------------------------------------------------------------------------ */

/* Numbers must be plain scalars: a quoted "108" is a string in YAML, and
 * accepting it would hide a typo such as "1O8". */
static int parse_number(const struct parse_ctx *c, const yaml_node_t *node, const char *path,
                        bool integer, double *out_d, long long *out_i)
{
    if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
        tc_yaml_is_null(node))
        return tc_yaml_field_error(c->y, node, path, TC_ERR_PARSE, "expected %s, got %s%s%s%s",
                                   integer ? "an integer" : "a number", node_type_name(node),
                                   node->type == YAML_SCALAR_NODE ? " '" : "",
                                   node->type == YAML_SCALAR_NODE ? tc_yaml_scalar(node) : "",
                                   node->type == YAML_SCALAR_NODE ? "'" : "");
    if (integer) {
        int err = tc_parse_i64(tc_yaml_scalar(node), out_i);

        if (err == TC_ERR_RANGE)
            return tc_yaml_field_error(c->y, node, path, TC_ERR_RANGE, "'%s' is out of range",
                                       tc_yaml_scalar(node));
        if (err < 0)
            return tc_yaml_field_error(c->y, node, path, TC_ERR_PARSE,
                                       "expected an integer, got '%s'", tc_yaml_scalar(node));
    } else {
        int err = tc_parse_double(tc_yaml_scalar(node), out_d);

        if (err == TC_ERR_RANGE)
            return tc_yaml_field_error(c->y, node, path, TC_ERR_RANGE, "'%s' is out of range",
                                       tc_yaml_scalar(node));
        if (err < 0)
            return tc_yaml_field_error(c->y, node, path, TC_ERR_PARSE,
                                       "expected a number, got '%s'", tc_yaml_scalar(node));
    }
    return TC_OK;
}

static int check_rule(const struct parse_ctx *c, const yaml_node_t *node, const char *path,
                      enum field_rule rule, double v)
{
    if (rule == RULE_POSITIVE && !(v > 0))
        return tc_yaml_field_error(c->y, node, path, TC_ERR_RANGE, "must be positive, got %s",
                                   tc_yaml_scalar(node));
    if (rule == RULE_NONNEG && v < 0)
        return tc_yaml_field_error(c->y, node, path, TC_ERR_RANGE, "must not be negative, got %s",
                                   tc_yaml_scalar(node));
    return TC_OK;
}

/* A value no GPU has (bounds.h): a typo or a wrong unit that would make
 * every prediction for the GPU infinite or zero. */
static int check_bounds(const struct parse_ctx *c, const yaml_node_t *node, const char *path,
                        double lo, double hi, double v)
{
    if (hi > 0 && !tc_bound_in(v, lo, hi))
        return tc_yaml_field_error(c->y, node, path, TC_ERR_RANGE,
                                   "%s is outside the plausible [%g, %g]", tc_yaml_scalar(node), lo,
                                   hi);
    return TC_OK;
}

static int parse_string(const struct parse_ctx *c, const yaml_node_t *node, const char *path,
                        char *dst, size_t size)
{
    if (node->type != YAML_SCALAR_NODE || tc_yaml_is_null(node))
        return tc_yaml_field_error(c->y, node, path, TC_ERR_PARSE, "expected a string, got %s",
                                   tc_yaml_is_null(node) ? "null" : node_type_name(node));
    if (strlen(tc_yaml_scalar(node)) >= size)
        return tc_yaml_field_error(c->y, node, path, TC_ERR_RANGE, "longer than %zu characters",
                                   size - 1);
    tc_strlcpy(dst, tc_yaml_scalar(node), size);
    return TC_OK;
}

/* A field of the wrong value or kind: what was expected, and what is there
 * (the scalar quoted, else the node's kind). */
static int wrong_value(const struct parse_ctx *c, const yaml_node_t *node, const char *path,
                       const char *expected)
{
    bool scalar = node->type == YAML_SCALAR_NODE;

    return tc_yaml_field_error(c->y, node, path, TC_ERR_PARSE, "expected %s, got %s%s%s", expected,
                               scalar ? "'" : node_type_name(node),
                               scalar ? tc_yaml_scalar(node) : "", scalar ? "'" : "");
}

static int parse_field(const struct parse_ctx *c, const struct field *f, const char *path,
                       const yaml_node_t *node)
{
    char *base = (char *)c->gpu + f->offset;
    double d = 0;
    long long i = 0;
    int err;

    switch (f->kind) {
    case KIND_STRING:
        return parse_string(c, node, path, base, f->size);
    case KIND_VENDOR:
        if (node->type == YAML_SCALAR_NODE && strcmp(tc_yaml_scalar(node), "nvidia") == 0)
            *(enum tc_vendor *)(void *)base = TC_VENDOR_NVIDIA;
        else if (node->type == YAML_SCALAR_NODE && strcmp(tc_yaml_scalar(node), "amd") == 0)
            *(enum tc_vendor *)(void *)base = TC_VENDOR_AMD;
        else
            return wrong_value(c, node, path, "'nvidia' or 'amd'");
        return TC_OK;
    case KIND_ARCH:
        /* not cpu: a spec describes a GPU */
        if (node->type == YAML_SCALAR_NODE &&
            tc_arch_parse_gpu(tc_yaml_scalar(node), (enum tc_arch *)(void *)base))
            return TC_OK;
        return wrong_value(c, node, path, "one of " TC_ARCH_GPU_NAMES);
    case KIND_LINK:
        for (int l = TC_LINK_PCIE; node->type == YAML_SCALAR_NODE && l < TC_LINK_COUNT; l++) {
            if (strcmp(tc_yaml_scalar(node), tc_link_name((enum tc_link)l)) == 0) {
                *(enum tc_link *)(void *)base = (enum tc_link)l;
                return TC_OK;
            }
        }
        return wrong_value(c, node, path, "one of pcie, nvlink, xgmi");
    case KIND_BOOL:
        if (node->type == YAML_SCALAR_NODE && node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
            (strcmp(tc_yaml_scalar(node), "true") == 0 ||
             strcmp(tc_yaml_scalar(node), "false") == 0)) {
            *(unsigned char *)base = strcmp(tc_yaml_scalar(node), "true") == 0;
            return TC_OK;
        }
        return wrong_value(c, node, path, "true or false");
    case KIND_UCHAR:
    case KIND_INT:
    case KIND_I64:
        err = parse_number(c, node, path, true, NULL, &i);
        if (err < 0)
            return err;
        if ((f->kind == KIND_INT && (i > 0x7fffffffLL || i < -0x7fffffffLL)) ||
            (f->kind == KIND_UCHAR && (i > 255 || i < 0)))
            return tc_yaml_field_error(c->y, node, path, TC_ERR_RANGE, "'%s' is out of range",
                                       tc_yaml_scalar(node));
        err = check_rule(c, node, path, f->rule, (double)i);
        if (err == TC_OK)
            err = check_bounds(c, node, path, f->lo, f->hi, (double)i);
        if (err < 0)
            return err;
        if (f->kind == KIND_UCHAR)
            *(unsigned char *)base = (unsigned char)i;
        else if (f->kind == KIND_INT)
            *(int *)(void *)base = (int)i;
        else
            *(int64_t *)(void *)base = i;
        return TC_OK;
    case KIND_DOUBLE:
        err = parse_number(c, node, path, false, &d, NULL);
        if (err < 0)
            return err;
        err = check_rule(c, node, path, f->rule, d);
        if (err == TC_OK)
            err = check_bounds(c, node, path, f->lo, f->hi, d);
        if (err < 0)
            return err;
        *(double *)(void *)base = d;
        return TC_OK;
    }
    return tc_yaml_field_error(c->y, node, path, TC_ERR_INVALID, "internal: unknown field kind");
}

/* ------------------------------------------------------------------------ */
/* Mappings                                                                  */
/* ------------------------------------------------------------------------ */

static int expect_mapping(const struct parse_ctx *c, const yaml_node_t *node, const char *path)
{
    if (node->type != YAML_MAPPING_NODE)
        return tc_yaml_field_error(c->y, node, path, TC_ERR_PARSE, "expected a mapping, got %s",
                                   node_type_name(node));
    return TC_OK;
}

static int key_name(const struct parse_ctx *c, const yaml_node_t *key, const char *prefix,
                    const char **name)
{
    /* the code returned as a constant: callers read name on success only,
     * and the analyzer cannot see that the error call returns it */
    if (key->type != YAML_SCALAR_NODE) {
        tc_yaml_field_error(c->y, key, prefix, TC_ERR_PARSE, "keys must be plain names, got %s",
                            node_type_name(key));
        return TC_ERR_PARSE;
    }
    *name = tc_yaml_scalar(key);
    return TC_OK;
}

/* Parses a mapping whose keys all come from `fields`; reports unknown,
 * duplicate and missing keys. */
static int parse_table(const struct parse_ctx *c, const yaml_node_t *map, const char *prefix,
                       const struct field *fields, size_t n_fields)
{
    bool seen[32] = {false};
    char path[160];
    int err = expect_mapping(c, map, prefix);

    if (err < 0)
        return err;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = tc_yaml_node(c->y, p->key);
        yaml_node_t *value = tc_yaml_node(c->y, p->value);
        const char *name = NULL;
        size_t i;

        err = key_name(c, key, prefix, &name);
        if (err < 0)
            return err;
        for (i = 0; i < n_fields; i++)
            if (strcmp(name, fields[i].name) == 0)
                break;
        snprintf(path, sizeof(path), "%s%s%s", prefix ? prefix : "", prefix ? "." : "", name);
        if (i == n_fields)
            return tc_yaml_field_error(c->y, key, path, TC_ERR_PARSE,
                                       "unknown field (gpu_specs/README.md lists the fields)");
        if (seen[i])
            return tc_yaml_field_error(c->y, key, path, TC_ERR_PARSE, "duplicate field");
        seen[i] = true;
        err = parse_field(c, &fields[i], path, value);
        if (err < 0)
            return err;
    }
    for (size_t i = 0; i < n_fields; i++) {
        if (fields[i].required && !seen[i]) {
            snprintf(path, sizeof(path), "%s%s%s", prefix ? prefix : "", prefix ? "." : "",
                     fields[i].name);
            return tc_yaml_field_error(c->y, map, path, TC_ERR_PARSE, "missing required field");
        }
    }
    return TC_OK;
}

/* peak_tflops / flops_per_clk_per_unit: keys are dtype names; null marks a
 * dtype the GPU does not support (same as leaving it out). */
static int parse_dtype_map(const struct parse_ctx *c, const yaml_node_t *map, const char *prefix,
                           double *values, const yaml_node_t **nodes)
{
    char path[160];
    int err = expect_mapping(c, map, prefix);

    if (err < 0)
        return err;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = tc_yaml_node(c->y, p->key);
        yaml_node_t *value = tc_yaml_node(c->y, p->value);
        const char *name = NULL;
        int d;

        err = key_name(c, key, prefix, &name);
        if (err < 0)
            return err;
        snprintf(path, sizeof(path), "%s.%s", prefix, name);
        for (d = 0; d < TC_DTYPE_COUNT; d++)
            if (strcmp(name, tc_dtype_name((enum tc_dtype)d)) == 0)
                break;
        if (d == TC_DTYPE_COUNT)
            return tc_yaml_field_error(
                c->y, key, path, TC_ERR_PARSE,
                "unknown dtype (expected fp64, fp32, tf32, fp16, bf16, fp8 or "
                "int8)");
        if (nodes[d])
            return tc_yaml_field_error(c->y, key, path, TC_ERR_PARSE, "duplicate field");
        nodes[d] = key;
        if (tc_yaml_is_null(value)) {
            values[d] = 0;
            continue;
        }
        err = parse_number(c, value, path, false, &values[d], NULL);
        if (err < 0)
            return err;
        err = check_rule(c, value, path, RULE_POSITIVE, values[d]);
        if (err == TC_OK && strcmp(prefix, "peak_tflops") == 0)
            err = check_bounds(c, value, path, TC_BOUND_PEAK_TFLOPS_MIN, TC_BOUND_PEAK_TFLOPS_MAX,
                               values[d]);
        if (err < 0)
            return err;
    }
    return TC_OK;
}

/* Appends `item` to a separated list held in a fixed buffer. */
static int append_item(const struct parse_ctx *c, const yaml_node_t *node, const char *path,
                       char *dst, size_t size, const char *sep, const char *item)
{
    size_t used = strlen(dst);
    size_t need = (used ? strlen(sep) : 0) + strlen(item);

    if (used + need >= size)
        return tc_yaml_field_error(c->y, node, path, TC_ERR_RANGE,
                                   "too long: all entries together must fit in %zu characters",
                                   size - 1);
    if (used)
        strcat(dst, sep);
    strcat(dst, item);
    return TC_OK;
}

/* sources: a mapping of source key -> URL or citation. The struct keeps the
 * keys; the citations stay in the file for people to follow. */
static int parse_sources(const struct parse_ctx *c, const yaml_node_t *map)
{
    char path[160];
    int err = expect_mapping(c, map, "sources");

    if (err < 0)
        return err;
    if (map->data.mapping.pairs.start == map->data.mapping.pairs.top)
        return tc_yaml_field_error(c->y, map, "sources", TC_ERR_PARSE,
                                   "must cite at least one source");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = tc_yaml_node(c->y, p->key);
        yaml_node_t *value = tc_yaml_node(c->y, p->value);
        const char *name = NULL;

        err = key_name(c, key, "sources", &name);
        if (err < 0)
            return err;
        snprintf(path, sizeof(path), "sources.%s", name);
        if (value->type != YAML_SCALAR_NODE || tc_yaml_is_null(value) || !*tc_yaml_scalar(value))
            return tc_yaml_field_error(c->y, value, path, TC_ERR_PARSE,
                                       "expected the URL or citation of the source, got %s",
                                       tc_yaml_is_null(value) ? "nothing" : node_type_name(value));
        err = append_item(c, key, "sources", c->gpu->sources, sizeof(c->gpu->sources), ",", name);
        if (err < 0)
            return err;
    }
    return TC_OK;
}

static int parse_flags(const struct parse_ctx *c, const yaml_node_t *seq)
{
    if (tc_yaml_is_null(seq))
        return TC_OK;
    if (seq->type != YAML_SEQUENCE_NODE)
        return tc_yaml_field_error(c->y, seq, "flags", TC_ERR_PARSE,
                                   "expected a list of strings, got %s", node_type_name(seq));
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        yaml_node_t *item = tc_yaml_node(c->y, *it);
        int err;

        if (item->type != YAML_SCALAR_NODE || tc_yaml_is_null(item))
            return tc_yaml_field_error(c->y, item, "flags", TC_ERR_PARSE,
                                       "expected a string, got %s",
                                       tc_yaml_is_null(item) ? "null" : node_type_name(item));
        err = append_item(c, item, "flags", c->gpu->flags, sizeof(c->gpu->flags), "; ",
                          tc_yaml_scalar(item));
        if (err < 0)
            return err;
    }
    return TC_OK;
}

/* The id a file must declare: its name without directory and ".yaml". */
static void id_from_file(const char *file, char *out, size_t size)
{
    const char *base = strrchr(file, '/');
    size_t n;

    base = base ? base + 1 : file;
    n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".yaml") == 0)
        n -= 5;
    else if (n > 4 && strcmp(base + n - 4, ".yml") == 0)
        n -= 4;
    if (n >= size)
        n = size - 1;
    memcpy(out, base, n);
    out[n] = '\0';
}

static int parse_root(const struct parse_ctx *c, const yaml_node_t *root)
{
    const yaml_node_t *sections[SEC_COUNT] = {NULL};
    const yaml_node_t *peak_nodes[TC_DTYPE_COUNT] = {NULL};
    const yaml_node_t *flops_nodes[TC_DTYPE_COUNT] = {NULL};
    const yaml_node_t *id_node = NULL;
    bool seen[TC_ARRAY_SIZE(top_fields)] = {false};
    char want_id[TC_ID_MAX + 8];
    int err;

    if (root->type != YAML_MAPPING_NODE)
        return tc_yaml_field_error(c->y, root, NULL, TC_ERR_PARSE,
                                   "a spec file must be a mapping of fields, got %s",
                                   node_type_name(root));
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = tc_yaml_node(c->y, p->key);
        yaml_node_t *value = tc_yaml_node(c->y, p->value);
        const char *name = NULL;
        size_t i;
        int s;

        err = key_name(c, key, NULL, &name);
        if (err < 0)
            return err;
        for (s = 0; s < SEC_COUNT; s++)
            if (strcmp(name, section_names[s]) == 0)
                break;
        if (s < SEC_COUNT) {
            if (sections[s])
                return tc_yaml_field_error(c->y, key, name, TC_ERR_PARSE, "duplicate field");
            sections[s] = value;
            continue;
        }
        for (i = 0; i < TC_ARRAY_SIZE(top_fields); i++)
            if (strcmp(name, top_fields[i].name) == 0)
                break;
        if (i == TC_ARRAY_SIZE(top_fields))
            return tc_yaml_field_error(c->y, key, name, TC_ERR_PARSE,
                                       "unknown field (gpu_specs/README.md lists the fields)");
        if (seen[i])
            return tc_yaml_field_error(c->y, key, name, TC_ERR_PARSE, "duplicate field");
        seen[i] = true;
        err = parse_field(c, &top_fields[i], name, value);
        if (err < 0)
            return err;
        if (strcmp(name, "id") == 0)
            id_node = value;
    }
    for (size_t i = 0; i < TC_ARRAY_SIZE(top_fields); i++)
        if (top_fields[i].required && !seen[i])
            return tc_yaml_field_error(c->y, root, top_fields[i].name, TC_ERR_PARSE,
                                       "missing required field");
    for (int s = 0; s < SEC_COUNT; s++)
        if (section_required[s] && !sections[s])
            return tc_yaml_field_error(c->y, root, section_names[s], TC_ERR_PARSE,
                                       "missing required field");

    if (!tc_spec_id_valid(c->gpu->id))
        return tc_yaml_field_error(
            c->y, id_node, "id", TC_ERR_PARSE,
            "'%s' may only hold lower-case letters, digits, '-', '_' and '.'", c->gpu->id);
    id_from_file(c->y->file, want_id, sizeof(want_id));
    if (strcmp(want_id, c->gpu->id) != 0)
        return tc_yaml_field_error(c->y, id_node, "id", TC_ERR_PARSE,
                                   "'%s' does not match the file name (expected '%s')", c->gpu->id,
                                   want_id);

    err = parse_dtype_map(c, sections[SEC_PEAK], "peak_tflops", c->gpu->peak_tflops, peak_nodes);
    if (err < 0)
        return err;
    err = parse_dtype_map(c, sections[SEC_FLOPS], "flops_per_clk_per_unit",
                          c->gpu->flops_per_clk_per_unit, flops_nodes);
    if (err < 0)
        return err;
    /* A peak without its per-clock rate (or the reverse) cannot be
     * cross-checked or scaled to another clock, so both are required. */
    for (int d = 0; d < TC_DTYPE_COUNT; d++) {
        bool has_peak = c->gpu->peak_tflops[d] > 0;
        bool has_flops = c->gpu->flops_per_clk_per_unit[d] > 0;
        char path[64];

        if (has_peak == has_flops)
            continue;
        snprintf(path, sizeof(path), "%s.%s", has_peak ? "peak_tflops" : "flops_per_clk_per_unit",
                 tc_dtype_name((enum tc_dtype)d));
        return tc_yaml_field_error(
            c->y, has_peak ? peak_nodes[d] : flops_nodes[d], path, TC_ERR_PARSE,
            "is given but %s.%s is %s", has_peak ? "flops_per_clk_per_unit" : "peak_tflops",
            tc_dtype_name((enum tc_dtype)d),
            (has_peak ? flops_nodes[d] : peak_nodes[d]) ? "null" : "missing");
    }
    if (!(c->gpu->peak_tflops[TC_DTYPE_FP32] > 0))
        return tc_yaml_field_error(c->y, sections[SEC_PEAK], "peak_tflops.fp32", TC_ERR_PARSE,
                                   "missing required field (every GPU has an fp32 peak)");

    err = parse_table(c, sections[SEC_LIMITS], "limits", limit_fields, TC_ARRAY_SIZE(limit_fields));
    if (err < 0)
        return err;
    err = parse_sources(c, sections[SEC_SOURCES]);
    if (err < 0)
        return err;
    if (sections[SEC_INTERCONNECT])
        err = parse_table(c, sections[SEC_INTERCONNECT], "interconnect", interconnect_fields,
                          TC_ARRAY_SIZE(interconnect_fields));
    if (err == TC_OK && sections[SEC_FLAGS])
        err = parse_flags(c, sections[SEC_FLAGS]);
    return err;
}

TC_API int tc_specs_parse_file(const char *file, struct tc_gpu *out)
{
    struct tc_yaml y = {0};
    struct tc_gpu *gpu = NULL;
    yaml_node_t *root, *second;
    struct stat st;
    FILE *fp;
    int err;

    if (!file || !out)
        return tc_error(TC_ERR_INVALID, "tc_specs_parse_file: no file or output given");
    fp = fopen(file, "rb");
    if (!fp)
        return tc_error(errno == ENOENT ? TC_ERR_NOT_FOUND : TC_ERR_IO, "%s: cannot open: %s", file,
                        strerror(errno));
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        err = tc_error(TC_ERR_IO, "%s: not a regular file", file);
        goto cleanup;
    }
    /* Parse into a scratch copy so *out is untouched on failure. */
    gpu = calloc(1, sizeof(*gpu));
    if (!gpu) {
        err = tc_error(TC_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    err = tc_yaml_load_file(&y, file, fp, TC_INPUT_SPEC_MAX, "a GPU spec", TC_YAML_SYNTAX_DETAIL);
    if (err < 0)
        goto cleanup;
    root = tc_yaml_root(&y);
    if (!root) {
        err = tc_error(TC_ERR_PARSE, "%s:1:1: the file is empty (expected a GPU spec)", file);
        goto cleanup;
    }
    /* A second document would silently be ignored; refuse it. */
    err = tc_yaml_extra(&y, TC_YAML_SYNTAX_DETAIL, &second);
    if (err < 0)
        goto cleanup;
    if (second) {
        err = tc_yaml_error(&y, second, TC_ERR_PARSE, "more than one YAML document in a spec file");
        goto cleanup;
    }

    struct parse_ctx ctx = {&y, gpu};

    err = parse_root(&ctx, root);
    if (err == TC_OK)
        *out = *gpu;
cleanup:
    tc_yaml_free(&y);
    free(gpu);
    fclose(fp);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Sets of specs                                                             */
/* ------------------------------------------------------------------------ */

TC_API void tc_specs_free(struct tc_specs *specs)
{
    if (!specs)
        return;
    for (size_t i = 0; i < specs->count; i++) {
        free(specs->gpus[i]);
        free(specs->files[i]);
    }
    free(specs->gpus);
    free(specs->files);
    free(specs);
}

static ssize_t find_index(const struct tc_specs *specs, const char *id)
{
    size_t lo = 0, hi = specs->count;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(specs->gpus[mid]->id, id);

        if (cmp == 0)
            return (ssize_t)mid;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Inserts gpu (taking ownership of it) at its sorted position. */
static int insert_gpu(struct tc_specs *specs, struct tc_gpu *gpu, const char *file)
{
    size_t pos = 0;
    char *file_copy;

    if (specs->count == specs->cap) {
        size_t cap = specs->cap ? specs->cap * 2 : 16;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): the elements are pointers */
        struct tc_gpu **gpus = realloc(specs->gpus, cap * sizeof(*gpus));

        if (!gpus)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        specs->gpus = gpus;
        char **files = realloc(specs->files, cap * sizeof(*files));

        if (!files)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        specs->files = files;
        specs->cap = cap;
    }
    file_copy = tc_strdup(file);
    if (!file_copy)
        return TC_ERR_NOMEM;
    while (pos < specs->count && strcmp(specs->gpus[pos]->id, gpu->id) < 0)
        pos++;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): the elements are pointers */
    memmove(&specs->gpus[pos + 1], &specs->gpus[pos], (specs->count - pos) * sizeof(*specs->gpus));
    memmove(&specs->files[pos + 1], &specs->files[pos],
            (specs->count - pos) * sizeof(*specs->files));
    specs->gpus[pos] = gpu;
    specs->files[pos] = file_copy;
    specs->count++;
    return TC_OK;
}

static int load_file(struct tc_specs *specs, const char *file)
{
    struct tc_gpu *gpu = calloc(1, sizeof(*gpu));
    ssize_t dup;
    int err;

    if (!gpu)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    err = tc_specs_parse_file(file, gpu);
    if (err < 0)
        goto fail;
    /* A spec whose peaks disagree with its own clocks would mislead every
     * prediction for that GPU, so the loader refuses it too. */
    err = tc_gpu_check(gpu);
    if (err < 0) {
        tc_error_prefix(err, "%s", file);
        goto fail;
    }
    dup = find_index(specs, gpu->id);
    if (dup >= 0) {
        err = tc_error(TC_ERR_INVALID, "%s: duplicate id '%s' (already defined in %s)", file,
                       gpu->id, specs->files[dup]);
        goto fail;
    }
    err = insert_gpu(specs, gpu, file);
    if (err < 0)
        goto fail;
    return TC_OK;
fail:
    free(gpu);
    return err;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_yaml_suffix(const char *name)
{
    size_t n = strlen(name);

    return n > 5 && strcmp(name + n - 5, ".yaml") == 0;
}

/* Loads the top-level *.yaml files of one directory, in name order so that
 * a duplicate-id error is reproducible. Subdirectories (gpu_specs/kernels/)
 * are not specs and are skipped. */
static int load_dir(struct tc_specs *specs, const char *dir)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    char path[4096];
    struct dirent *ent;
    int err = TC_OK;

    if (!d)
        return tc_error(errno == ENOENT ? TC_ERR_NOT_FOUND : TC_ERR_IO,
                        "GPU specs directory '%s': %s", dir, strerror(errno));
    while ((ent = readdir(d))) {
        struct stat st;

        if (ent->d_name[0] == '.' || !has_yaml_suffix(ent->d_name))
            continue;
        if (snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name) >= (int)sizeof(path)) {
            err = tc_error(TC_ERR_RANGE, "path too long: %s/%s", dir, ent->d_name);
            goto cleanup;
        }
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            size_t new_cap = cap ? cap * 2 : 32;
            char **grown = realloc(names, new_cap * sizeof(*names));

            if (!grown) {
                err = tc_error(TC_ERR_NOMEM, "out of memory");
                goto cleanup;
            }
            names = grown;
            cap = new_cap;
        }
        names[n] = tc_strdup(ent->d_name);
        if (!names[n]) {
            err = TC_ERR_NOMEM;
            goto cleanup;
        }
        n++;
    }
    if (n)
        qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        err = load_file(specs, path);
        if (err < 0)
            goto cleanup;
    }
cleanup:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
    return err;
}

/* Loads each non-empty element of a colon-separated list. */
static int load_path_list(struct tc_specs *specs, const char *list)
{
    char *copy = tc_strdup(list);
    char *save = NULL;
    int err = TC_OK;

    if (!copy)
        return TC_ERR_NOMEM;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        err = load_dir(specs, dir);
        if (err < 0)
            break;
    }
    free(copy);
    return err;
}

TC_API int tc_specs_load(const char *path, struct tc_specs **out)
{
    struct tc_specs *specs;
    int err;

    if (!out)
        return tc_error(TC_ERR_INVALID, "tc_specs_load: no result pointer");
    *out = NULL;
    if (!(specs = calloc(1, sizeof(*specs))))
        return tc_error(TC_ERR_NOMEM, "out of memory");
    if (path) {
        err = load_path_list(specs, path);
    } else {
        const char *env = getenv("TILECAST_SPECS_PATH");
        char shipped[4096];

        err = TC_OK;
        if (env && *env) {
            err = load_path_list(specs, env);
            if (err < 0)
                tc_error_prefix(err, "TILECAST_SPECS_PATH");
        }
        if (err == TC_OK)
            err = tc_data_path("gpu_specs", shipped, sizeof(shipped));
        if (err == TC_OK)
            err = load_dir(specs, shipped);
    }
    if (err < 0) {
        tc_specs_free(specs);
        return err;
    }
    *out = specs;
    return TC_OK;
}

TC_API int tc_specs_add_dir(struct tc_specs *specs, const char *dir)
{
    if (!specs || !dir || !*dir)
        return tc_error(TC_ERR_INVALID, "tc_specs_add_dir: no specs or directory given");
    /* On failure, GPUs of the directories loaded before the bad file stay;
     * callers treat the error as fatal anyway. */
    return load_path_list(specs, dir);
}

TC_API size_t tc_specs_count(const struct tc_specs *specs)
{
    return specs ? specs->count : 0;
}

TC_API const struct tc_gpu *tc_specs_at(const struct tc_specs *specs, size_t index)
{
    if (!specs || index >= specs->count) {
        tc_error(TC_ERR_RANGE, "GPU spec index %zu out of range (%zu loaded)", index,
                 specs ? specs->count : 0);
        return NULL;
    }
    return specs->gpus[index];
}

TC_API const struct tc_gpu *tc_specs_find(const struct tc_specs *specs, const char *id)
{
    ssize_t i;

    if (!specs || !id) {
        tc_error(TC_ERR_INVALID, "tc_specs_find: no specs or id given");
        return NULL;
    }
    i = find_index(specs, id);
    if (i < 0) {
        tc_error(TC_ERR_NOT_FOUND, "unknown GPU '%s'", id);
        return NULL;
    }
    return specs->gpus[i];
}

/* Appends " a b c" (every id) to an error message being built. */
static void append_ids(const struct tc_specs *specs, char *msg, size_t len)
{
    for (size_t i = 0; i < specs->count; i++) {
        size_t used = strlen(msg);

        snprintf(msg + used, len - used, " %s", specs->gpus[i]->id);
    }
}

TC_API const struct tc_gpu *tc_specs_lookup(const struct tc_specs *specs, const char *name)
{
    char msg[1024];
    size_t len, n_prefix = 0, at = 0;
    int best = INT_MAX;

    if (!specs || !name) {
        tc_error(TC_ERR_INVALID, "tc_specs_lookup: no specs or name given");
        return NULL;
    }
    ssize_t i = find_index(specs, name);
    if (i >= 0)
        return specs->gpus[i];
    /* ids are lower case, the marketing names are not: H100-SXM5-80GB is
     * the GPU the user means */
    for (size_t j = 0; j < specs->count; j++)
        if (strcasecmp(specs->gpus[j]->id, name) == 0)
            return specs->gpus[j];
    len = strlen(name);
    for (size_t j = 0; len && j < specs->count; j++)
        if (strncasecmp(specs->gpus[j]->id, name, len) == 0) {
            n_prefix++;
            at = j;
        }
    if (n_prefix == 1)
        return specs->gpus[at];
    if (n_prefix > 1) {
        /* h100 is an SXM or a PCIe card, 30% apart: guessing would be wrong
         * half of the time */
        size_t k = 0;

        snprintf(msg, sizeof(msg), "GPU '%s' is ambiguous: did you mean", name);
        for (size_t j = 0; j < specs->count; j++) {
            if (strncasecmp(specs->gpus[j]->id, name, len) != 0)
                continue;
            size_t used = strlen(msg);

            snprintf(msg + used, sizeof(msg) - used, "%s %s",
                     k == 0              ? ""
                     : k + 1 == n_prefix ? " or"
                                         : ",",
                     specs->gpus[j]->id);
            k++;
        }
        tc_error(TC_ERR_NOT_FOUND, "%s?", msg);
        return NULL;
    }
    for (size_t j = 0; j < specs->count; j++) {
        int d = tc_edit_distance(name, specs->gpus[j]->id);

        if (d < best) {
            best = d;
            at = j;
        }
    }
    if (best != INT_MAX && tc_close_enough(name, best))
        snprintf(msg, sizeof(msg), "unknown GPU '%s'; did you mean %s? Known ids:", name,
                 specs->gpus[at]->id);
    else
        snprintf(msg, sizeof(msg), "unknown GPU '%s'; known ids:", name);
    append_ids(specs, msg, sizeof(msg));
    tc_error(TC_ERR_NOT_FOUND, "%s", msg);
    return NULL;
}

TC_API const char *tc_specs_file(const struct tc_specs *specs, const char *id)
{
    ssize_t i;

    if (!specs || !id) {
        tc_error(TC_ERR_INVALID, "tc_specs_file: no specs or id given");
        return NULL;
    }
    i = find_index(specs, id);
    if (i < 0) {
        tc_error(TC_ERR_NOT_FOUND, "unknown GPU '%s'", id);
        return NULL;
    }
    return specs->files[i];
}
