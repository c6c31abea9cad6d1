/* The parameter set of a calibration: its defaults, the bounds a stored or
 * fitted set must keep, and the text the database stores it as
 * (tc_calibration_row.params_json). The text is written and read through
 * one table of keys, so that writer and parser cannot drift apart. */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "calibrate-internal.h"
#include "tc-internal.h"

void calib_params_default(struct tc_calib_params *cp)
{
    memset(cp, 0, sizeof(*cp));
    cp->format = TC_CALIB_FORMAT;
    tc_strlcpy(cp->model_version, tc_version(), sizeof(cp->model_version));
    cp->c_compute = cp->c_memory = cp->c_overhead = 1;
    for (int i = 0; i < TC_CALIB_ALIGN_CLASSES; i++)
        cp->align_factor[i] = 1;
    for (int j = 0; j < TC_CALIB_MAX_KERNELS; j++)
        cp->kernel_scale[j] = 1;
    cp->nb_length = 0.2;
    cp->nb_prior = 0.3;
    cp->nb_k = 16;
    cp->nb_scale_nk = 1;
    cp->nb2_length = 0;
    cp->nb2_prior = 1;
    cp->interval_level = 0.8;
    for (int b = 0; b < TC_CALIB_TIME_BINS; b++) {
        cp->q_lo[b] = -0.2;
        cp->q_hi[b] = 0.2;
    }
}

/* The fitted values a prediction multiplies by, within their physical
 * bounds (bounds.h): a stored calibration with c_compute 1e308 would make
 * every prediction infinite, and a fit that left them has not described
 * the device. Sets a message naming the value. */
int calib_params_in_bounds(const struct tc_calib_params *cp)
{
    const struct {
        const char *name;
        double v;
    } scales[] = {
        {"c_compute", cp->c_compute},    {"c_compute_avg", cp->c_compute_avg},
        {"c_memory", cp->c_memory},      {"c_overhead", cp->c_overhead},
        {"align1", cp->align_factor[1]}, {"align2", cp->align_factor[2]},
        {"align3", cp->align_factor[3]},
    };

    for (size_t i = 0; i < TC_ARRAY_SIZE(scales); i++)
        if (!tc_bound_in(scales[i].v, TC_BOUND_SCALE_MIN, TC_BOUND_SCALE_MAX))
            return tc_error(TC_ERR_RANGE,
                            "calibration parameter '%s' %g is outside the "
                            "plausible [%g, %g]",
                            scales[i].name, scales[i].v, TC_BOUND_SCALE_MIN, TC_BOUND_SCALE_MAX);
    for (int j = 0; j < cp->n_kernels; j++)
        if (!tc_bound_in(cp->kernel_scale[j], TC_BOUND_SCALE_MIN, TC_BOUND_SCALE_MAX))
            return tc_error(TC_ERR_RANGE,
                            "calibration kernel factor %g is outside the "
                            "plausible [%g, %g]",
                            cp->kernel_scale[j], TC_BOUND_SCALE_MIN, TC_BOUND_SCALE_MAX);
    for (int t = 0; t < TC_TIMING_COUNT; t++)
        if (!tc_bound_in(cp->host_us[t], 0, TC_BOUND_HOST_US_MAX))
            return tc_error(TC_ERR_RANGE,
                            "calibration host cost %g us is outside the "
                            "plausible [0, %g]",
                            cp->host_us[t], TC_BOUND_HOST_US_MAX);
    for (int b = 0; b < TC_CALIB_TIME_BINS; b++)
        if (!tc_bound_in(cp->q_lo[b], -TC_BOUND_LOG_RATIO_MAX, TC_BOUND_LOG_RATIO_MAX) ||
            !tc_bound_in(cp->q_hi[b], -TC_BOUND_LOG_RATIO_MAX, TC_BOUND_LOG_RATIO_MAX))
            return tc_error(TC_ERR_RANGE,
                            "calibration interval q_lo%d/q_hi%d (%g, %g) is "
                            "outside the plausible [-%d, %d]",
                            b, b, cp->q_lo[b], cp->q_hi[b], TC_BOUND_LOG_RATIO_MAX,
                            TC_BOUND_LOG_RATIO_MAX);
    return TC_OK;
}

/* ------------------------------------------------------------------------ */
/* The stored text                                                           */
/* ------------------------------------------------------------------------ */

/* How a key's value is written and read back. */
enum param_kind {
    PARAM_FORMAT,  /* the format number (an int): read as a number that must be whole */
    PARAM_TEXT,    /* a char array, written between quotes as it is */
    PARAM_DOUBLE,  /* %.17g, so that every bit comes back */
    PARAM_K,       /* the neighbour count (an int): read as a number, kept when whole
                    * and in [1, TC_CALIB_MAX_K], else 0 (refused by the range check) */
    PARAM_I64,     /* an int64_t count */
    PARAM_U32,     /* a uint32_t: read as a number, kept when in [0, 2^32 - 1], else 0 */
    PARAM_KERNELS, /* the kernel table as "hash:scale,...", between quotes */
};

/* Which texts must hold a key. */
enum param_need {
    NEED_ALWAYS,  /* every text: without it the caller cannot tell what the text is */
    NEED_CURRENT, /* a text of the current format (another format is recomputed) */
    NEED_NEVER,   /* the default stands without it */
};

struct param_key {
    const char *key;
    enum param_kind kind;
    enum param_need need;
    size_t offset; /* of the field in struct tc_calib_params */
    size_t size;   /* of a PARAM_TEXT field */
};

#define FIELD(name) offsetof(struct tc_calib_params, name)
#define ELEM(name, i) (FIELD(name) + (i) * sizeof(((struct tc_calib_params *)0)->name[0]))
#define NUM(key, kind, offset)                                                                     \
    {                                                                                              \
        key, kind, NEED_CURRENT, offset, 0                                                         \
    }
#define TEXT(key, need, name)                                                                      \
    {                                                                                              \
        key, PARAM_TEXT, need, FIELD(name), sizeof(((struct tc_calib_params *)0)->name)            \
    }

/* Every key of the text, in the order written. The prebuilt databases
 * store this text and tests/cli-db.sh compares them byte for byte: a key
 * is added at the end of a new format (TC_CALIB_FORMAT), never moved. */
static const struct param_key param_keys[] = {
    {"format", PARAM_FORMAT, NEED_ALWAYS, FIELD(format), 0},
    TEXT("model", NEED_ALWAYS, model_version),
    NUM("c_compute", PARAM_DOUBLE, FIELD(c_compute)),
    NUM("c_compute_avg", PARAM_DOUBLE, FIELD(c_compute_avg)),
    NUM("c_memory", PARAM_DOUBLE, FIELD(c_memory)),
    NUM("c_overhead", PARAM_DOUBLE, FIELD(c_overhead)),
    NUM("align1", PARAM_DOUBLE, ELEM(align_factor, 1)),
    NUM("align2", PARAM_DOUBLE, ELEM(align_factor, 2)),
    NUM("align3", PARAM_DOUBLE, ELEM(align_factor, 3)),
    NUM("host_event_us", PARAM_DOUBLE, ELEM(host_us, TC_TIMING_EVENT)),
    NUM("host_wall_us", PARAM_DOUBLE, ELEM(host_us, TC_TIMING_WALL)),
    NUM("host_wall_max_us", PARAM_DOUBLE, ELEM(host_us, TC_TIMING_WALL_MAX)),
    NUM("nb_length", PARAM_DOUBLE, FIELD(nb_length)),
    NUM("nb_prior", PARAM_DOUBLE, FIELD(nb_prior)),
    NUM("nb_k", PARAM_K, FIELD(nb_k)),
    NUM("nb_scale_nk", PARAM_DOUBLE, FIELD(nb_scale_nk)),
    NUM("nb_beta", PARAM_DOUBLE, FIELD(nb_beta)),
    NUM("nb2_length", PARAM_DOUBLE, FIELD(nb2_length)),
    NUM("nb2_prior", PARAM_DOUBLE, FIELD(nb2_prior)),
    NUM("rows", PARAM_I64, FIELD(n_rows)),
    NUM("fit_mad", PARAM_DOUBLE, FIELD(fit_mad)),
    NUM("fit_mape", PARAM_DOUBLE, FIELD(fit_mape)),
    NUM("loo_mape", PARAM_DOUBLE, FIELD(loo_mape)),
    NUM("level", PARAM_DOUBLE, FIELD(interval_level)),
    NUM("q_lo0", PARAM_DOUBLE, ELEM(q_lo, 0)),
    NUM("q_hi0", PARAM_DOUBLE, ELEM(q_hi, 0)),
    NUM("q_lo1", PARAM_DOUBLE, ELEM(q_lo, 1)),
    NUM("q_hi1", PARAM_DOUBLE, ELEM(q_hi, 1)),
    NUM("q_lo2", PARAM_DOUBLE, ELEM(q_lo, 2)),
    NUM("q_hi2", PARAM_DOUBLE, ELEM(q_hi, 2)),
    NUM("bin0", PARAM_I64, ELEM(bin_rows, 0)),
    NUM("bin1", PARAM_I64, ELEM(bin_rows, 1)),
    NUM("bin2", PARAM_I64, ELEM(bin_rows, 2)),
    NUM("model_fp", PARAM_U32, FIELD(model_fp)),
    /* n_kernels, kernel_hash and kernel_scale together */
    {"kernels", PARAM_KERNELS, NEED_NEVER, FIELD(n_kernels), 0},
    TEXT("runs", NEED_NEVER, runs),
};

#undef FIELD
#undef ELEM
#undef NUM
#undef TEXT

const char *tc_calib_params_key(size_t i, bool *required)
{
    if (i >= TC_ARRAY_SIZE(param_keys))
        return NULL;
    if (required)
        *required = param_keys[i].need != NEED_NEVER;
    return param_keys[i].key;
}

static bool append(char *buf, size_t len, size_t *used, const char *s)
{
    size_t n = strlen(s);

    if (*used + n >= len)
        return false;
    memcpy(buf + *used, s, n + 1);
    *used += n;
    return true;
}

/* A flat JSON object: the database stores it as text, readable with any
 * JSON tool; the library itself needs no JSON dependency for it. */
int tc_calib_params_format(const struct tc_calib_params *cp, char *buf, size_t len)
{
    char kernels[TC_CALIB_MAX_KERNELS * 48] = "";
    char value[sizeof(cp->runs) + sizeof(kernels) + 8];
    size_t used = 0, out = 0;
    int w;

    for (int j = 0; j < cp->n_kernels && j < TC_CALIB_MAX_KERNELS; j++) {
        w = snprintf(kernels + used, sizeof(kernels) - used, "%s%u:%.17g", j ? "," : "",
                     (unsigned)cp->kernel_hash[j], cp->kernel_scale[j]);
        if (w < 0 || (size_t)w >= sizeof(kernels) - used)
            return tc_error(TC_ERR_RANGE, "calibration kernel table does not fit");
        used += (size_t)w;
    }
    for (size_t i = 0; i < TC_ARRAY_SIZE(param_keys); i++) {
        const struct param_key *k = &param_keys[i];
        const char *field = (const char *)cp + k->offset;

        switch (k->kind) {
        case PARAM_FORMAT:
        case PARAM_K:
            snprintf(value, sizeof(value), "%d", *(const int *)field);
            break;
        case PARAM_TEXT:
            snprintf(value, sizeof(value), "\"%.*s\"", (int)strnlen(field, k->size), field);
            break;
        case PARAM_DOUBLE:
            snprintf(value, sizeof(value), "%.17g", *(const double *)field);
            break;
        case PARAM_I64:
            snprintf(value, sizeof(value), "%lld", (long long)*(const int64_t *)field);
            break;
        case PARAM_U32:
            snprintf(value, sizeof(value), "%lu", (unsigned long)*(const uint32_t *)field);
            break;
        case PARAM_KERNELS:
            snprintf(value, sizeof(value), "\"%s\"", kernels);
            break;
        }
        if (!append(buf, len, &out, i ? ", \"" : "{\"") || !append(buf, len, &out, k->key) ||
            !append(buf, len, &out, "\": ") || !append(buf, len, &out, value))
            return tc_error(TC_ERR_RANGE, "calibration text does not fit in %zu bytes", len);
    }
    if (!append(buf, len, &out, "}"))
        return tc_error(TC_ERR_RANGE, "calibration text does not fit in %zu bytes", len);
    return TC_OK;
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* Reads a JSON string without escapes (keys and versions never need them).
 * Control characters are refused too: the formatter writes strings back as
 * they are, and the stored text must stay JSON that any tool can read. */
static const char *read_string(const char *p, char *out, size_t len)
{
    size_t n = 0;

    if (*p != '"')
        return NULL;
    for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
            return NULL;
        if (n + 1 < len)
            out[n++] = *p;
    }
    if (*p != '"')
        return NULL;
    out[n] = '\0';
    return p + 1;
}

/* "hash:scale,..." of the kernel table. */
static int parse_kernels(const char *text, struct tc_calib_params *cp)
{
    const char *p = text;

    cp->n_kernels = 0;
    while (*p) {
        char *end;
        unsigned long h = strtoul(p, &end, 10);
        double scale;

        if (end == p || *end != ':' || h == 0 || h > UINT32_MAX ||
            cp->n_kernels == TC_CALIB_MAX_KERNELS)
            return tc_error(TC_ERR_PARSE, "calibration parameters: bad kernel table near '%.20s'",
                            p);
        p = end + 1;
        scale = strtod(p, &end);
        /* decimal only, as tc_parse_double: strtod takes hex, inf and nan */
        if (end != p + tc_decimal_len(p))
            end = (char *)p;
        if (end == p || !(scale > 0) || !isfinite(scale) || (*end && *end != ','))
            return tc_error(TC_ERR_PARSE, "calibration parameters: bad kernel factor near '%.20s'",
                            p);
        cp->kernel_hash[cp->n_kernels] = (uint32_t)h;
        cp->kernel_scale[cp->n_kernels++] = scale;
        p = *end ? end + 1 : end;
    }
    return TC_OK;
}

int tc_calib_params_parse(const char *text, struct tc_calib_params *cp)
{
    /* the whole numbers, kept as read until every key is in: their checks
     * come after the text's syntax */
    double whole[TC_ARRAY_SIZE(param_keys)] = {0};
    bool seen[TC_ARRAY_SIZE(param_keys)] = {false};
    const char *p;

    if (!text || !cp)
        return tc_error(TC_ERR_INVALID, "no calibration text");
    calib_params_default(cp);
    p = skip_ws(text);
    if (*p != '{')
        return tc_error(TC_ERR_PARSE,
                        "calibration parameters: expected a JSON object at offset %td", p - text);
    p = skip_ws(p + 1);
    while (*p != '}') {
        char key[64], value[sizeof(cp->runs)];
        const struct param_key *k;
        size_t f, vn = 0;
        char *field;
        bool quoted;

        p = read_string(p, key, sizeof(key));
        if (!p)
            return tc_error(TC_ERR_PARSE, "calibration parameters: bad key near offset %td",
                            p ? p - text : (ptrdiff_t)0);
        p = skip_ws(p);
        if (*p != ':')
            return tc_error(TC_ERR_PARSE, "calibration parameters: expected ':' after '%s'", key);
        p = skip_ws(p + 1);
        quoted = *p == '"';
        if (quoted) {
            p = read_string(p, value, sizeof(value));
            if (!p)
                return tc_error(TC_ERR_PARSE, "calibration parameters: bad string for '%s'", key);
        } else {
            while (*p && *p != ',' && *p != '}' && *p != ' ' && vn + 1 < sizeof(value))
                value[vn++] = *p++;
            value[vn] = '\0';
        }
        p = skip_ws(p);
        if (*p == ',')
            p = skip_ws(p + 1);
        else if (*p != '}')
            return tc_error(TC_ERR_PARSE, "calibration parameters: expected ',' or '}' after '%s'",
                            key);
        for (f = 0; f < TC_ARRAY_SIZE(param_keys); f++)
            if (strcmp(key, param_keys[f].key) == 0)
                break;
        if (f == TC_ARRAY_SIZE(param_keys))
            continue; /* a later format's key: the format check decides */
        k = &param_keys[f];
        field = (char *)cp + k->offset;
        /* Strings are written back quoted and numbers bare, so each must
         * arrive that way: an unquoted "model" could carry a quote into the
         * formatted text, a quoted number is not what the formatter wrote. */
        if (k->kind == PARAM_TEXT || k->kind == PARAM_KERNELS) {
            if (!quoted)
                return tc_error(TC_ERR_PARSE, "calibration parameters: \"%s\" must be a string",
                                key);
            if (k->kind == PARAM_TEXT) {
                tc_strlcpy(field, value, k->size);
            } else {
                int err = parse_kernels(value, cp);

                if (err < 0)
                    return err;
            }
            seen[f] = true;
            continue;
        }
        if (quoted)
            return tc_error(TC_ERR_PARSE, "calibration parameters: \"%s\" must be a number", key);
        if (k->kind == PARAM_I64) {
            long long v;
            int err = tc_parse_i64(value, &v);

            if (err < 0)
                return tc_error_prefix(err, "calibration parameter '%s'", key);
            *(int64_t *)field = v;
        } else {
            int err = tc_parse_double(value, k->kind == PARAM_DOUBLE ? (double *)field : &whole[f]);

            if (err < 0)
                return tc_error_prefix(err, "calibration parameter '%s'", key);
        }
        seen[f] = true;
    }
    /* The whole numbers are doubles from untrusted text: check the range
     * before the conversion (a double outside int's range converts
     * undefined). A format that is no integer at all is refused; a
     * different integer is a later or older format, which the caller
     * recomputes. */
    for (size_t f = 0; f < TC_ARRAY_SIZE(param_keys); f++) {
        const struct param_key *k = &param_keys[f];
        char *field = (char *)cp + k->offset;
        double v = whole[f];

        if (k->kind == PARAM_FORMAT) {
            if (seen[f] && !(v >= 0 && v <= INT_MAX && v == floor(v)))
                return tc_error(TC_ERR_RANGE,
                                "calibration parameters: format %g is not a format number", v);
            *(int *)field = seen[f] ? (int)v : 0;
        } else if (k->kind == PARAM_K) {
            *(int *)field = v >= 1 && v <= TC_CALIB_MAX_K && v == floor(v) ? (int)v : 0;
        } else if (k->kind == PARAM_U32) {
            *(uint32_t *)field = v >= 0 && v <= 4294967295.0 ? (uint32_t)v : 0;
        }
    }
    for (size_t f = 0; f < TC_ARRAY_SIZE(param_keys); f++)
        if (param_keys[f].need == NEED_ALWAYS && !seen[f])
            return tc_error(TC_ERR_PARSE, "calibration parameters: missing \"%s\"",
                            param_keys[f].key);
    if (cp->format != TC_CALIB_FORMAT)
        return TC_OK; /* the caller sees the format and recomputes */
    for (size_t f = 0; f < TC_ARRAY_SIZE(param_keys); f++)
        if (param_keys[f].need == NEED_CURRENT && !seen[f])
            return tc_error(TC_ERR_PARSE, "calibration parameters: missing \"%s\"",
                            param_keys[f].key);
    if (!(cp->c_compute > 0) || !(cp->c_memory > 0) || !(cp->c_overhead > 0) ||
        !(cp->nb_length > 0) || cp->nb_prior < 0 || !(cp->nb_scale_nk > 0) || cp->nb_beta < 0 ||
        !(cp->nb2_length >= 0) || !(cp->nb2_prior > 0) || cp->nb_k < 1 ||
        cp->nb_k > TC_CALIB_MAX_K || !(cp->interval_level > 0 && cp->interval_level < 1))
        return tc_error(
            TC_ERR_RANGE,
            "calibration parameters: a scale, neighbour setting or level is out of range");
    for (int j = 1; j < TC_CALIB_ALIGN_CLASSES; j++)
        if (!(cp->align_factor[j] > 0))
            return tc_error(TC_ERR_RANGE, "calibration parameters: align%d is not positive", j);
    return calib_params_in_bounds(cp);
}
