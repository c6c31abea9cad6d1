/* The stored calibration parameters (tc_calib_params_format and
 * tc_calib_params_parse, predictor/calibrate-params.c): the text stays what
 * the prebuilt databases hold, every key of the one key table is written and
 * read back into the same field, and texts that are not what the writer
 * writes are refused. Part of the calib suite (test-calib.c). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "tilecast/tilecast.h"

TCase *calib_params_tcase(void);

/* Every field the text stores, each with a value of its own, so that a key
 * read into another key's field shows in the text written back. */
static void distinct_params(struct tc_calib_params *a)
{
    memset(a, 0, sizeof(*a));
    a->format = TC_CALIB_FORMAT;
    snprintf(a->model_version, sizeof(a->model_version), "9.8.7");
    a->c_compute = 0.93;
    a->c_compute_avg = 0.95;
    a->c_memory = 1.07;
    a->c_overhead = 2.5;
    a->align_factor[0] = 1;
    a->align_factor[1] = 1.1;
    a->align_factor[2] = 1.4;
    a->align_factor[3] = 2.0;
    a->host_us[TC_TIMING_EVENT] = 23.9;
    a->host_us[TC_TIMING_WALL] = 21.5;
    a->host_us[TC_TIMING_WALL_MAX] = 1.0 / 3;
    a->nb_length = 0.05;
    a->nb_prior = 0.1;
    a->nb_k = 12;
    a->nb_scale_nk = 4;
    a->nb_beta = 1;
    a->nb2_length = 0.35;
    a->nb2_prior = 3;
    a->n_rows = 8288;
    a->fit_mad = 0.0625;
    a->fit_mape = 6.25;
    a->loo_mape = 4.125;
    a->interval_level = 0.8;
    a->q_lo[0] = -0.11;
    a->q_hi[0] = 0.12;
    a->q_lo[1] = -0.21;
    a->q_hi[1] = 0.22;
    a->q_lo[2] = -0.03;
    a->q_hi[2] = 0.04;
    a->bin_rows[0] = 100;
    a->bin_rows[1] = 200;
    a->bin_rows[2] = 300;
    a->model_fp = 4000000000u;
    a->n_kernels = 2;
    a->kernel_hash[0] = 123456789u;
    a->kernel_hash[1] = 4294967295u;
    a->kernel_scale[0] = 0.97;
    a->kernel_scale[1] = 1.08;
    snprintf(a->runs, sizeof(a->runs), "1:0,2:2");
}

/* What distinct_params formats to, byte for byte: the text of format 2 as
 * the prebuilt databases store it (tests/cli-db.sh compares those). */
static const char golden[] =
    "{\"format\": 2, \"model\": \"9.8.7\", \"c_compute\": 0.93000000000000005, "
    "\"c_compute_avg\": 0.94999999999999996, \"c_memory\": 1.0700000000000001, "
    "\"c_overhead\": 2.5, \"align1\": 1.1000000000000001, \"align2\": 1.3999999999999999, "
    "\"align3\": 2, \"host_event_us\": 23.899999999999999, \"host_wall_us\": 21.5, "
    "\"host_wall_max_us\": 0.33333333333333331, \"nb_length\": 0.050000000000000003, "
    "\"nb_prior\": 0.10000000000000001, \"nb_k\": 12, \"nb_scale_nk\": 4, \"nb_beta\": 1, "
    "\"nb2_length\": 0.34999999999999998, \"nb2_prior\": 3, \"rows\": 8288, "
    "\"fit_mad\": 0.0625, \"fit_mape\": 6.25, \"loo_mape\": 4.125, "
    "\"level\": 0.80000000000000004, \"q_lo0\": -0.11, \"q_hi0\": 0.12, "
    "\"q_lo1\": -0.20999999999999999, \"q_hi1\": 0.22, \"q_lo2\": -0.029999999999999999, "
    "\"q_hi2\": 0.040000000000000001, \"bin0\": 100, \"bin1\": 200, \"bin2\": 300, "
    "\"model_fp\": 4000000000, "
    "\"kernels\": \"123456789:0.96999999999999997,4294967295:1.0800000000000001\", "
    "\"runs\": \"1:0,2:2\"}";

/* The span of `"key": value` in text and the separator after it (or before
 * it, for the last key). */
static bool key_span(const char *text, const char *key, size_t *at, size_t *len)
{
    char pat[80];
    const char *p, *v, *end;

    snprintf(pat, sizeof(pat), "\"%s\": ", key);
    p = strstr(text, pat);
    if (!p)
        return false;
    v = p + strlen(pat);
    end = *v == '"' ? strchr(v + 1, '"') + 1 : v + strcspn(v, ",}");
    *at = (size_t)(p - text);
    *len = (size_t)(end - p);
    return true;
}

static void replace_span(const char *text, size_t at, size_t len, const char *with, char *out,
                         size_t out_len)
{
    snprintf(out, out_len, "%.*s%s%s", (int)at, text, with, text + at + len);
}

START_TEST(params_text_unchanged)
{
    struct tc_calib_params a, b;
    char text[TC_CALIB_PARAMS_MAX], again[TC_CALIB_PARAMS_MAX];

    distinct_params(&a);
    ck_assert_int_eq(tc_calib_params_format(&a, text, sizeof(text)), TC_OK);
    ck_assert_str_eq(text, golden);
    ck_assert_int_eq(tc_calib_params_parse(golden, &b), TC_OK);
    ck_assert_int_eq(tc_calib_params_format(&b, again, sizeof(again)), TC_OK);
    ck_assert_str_eq(again, golden);
}
END_TEST

START_TEST(params_every_key_round_trips)
{
    struct tc_calib_params a, b;
    char text[TC_CALIB_PARAMS_MAX], edited[TC_CALIB_PARAMS_MAX], again[TC_CALIB_PARAMS_MAX];
    size_t keys = 0, written = 0;
    const char *key;
    bool required;

    distinct_params(&a);
    ck_assert_int_eq(tc_calib_params_format(&a, text, sizeof(text)), TC_OK);
    for (const char *p = text; (p = strstr(p, "\": ")); p++)
        written++;
    for (; (key = tc_calib_params_key(keys, &required)); keys++) {
        /* candidates for another value, one of which each kind takes */
        static const char *const numbers[] = {"7", "0.5"};
        size_t at, len, sep;
        char with[96];
        bool took = false;

        ck_assert_msg(key_span(text, key, &at, &len), "key '%s' is not written", key);
        /* left out: a required key is named, an optional one falls back to
         * its default, which the text written back shows */
        sep = text[at + len] == ',' ? 2 : 0;
        if (!sep && text[at - 2] == ',') {
            at -= 2;
            len += 2;
        }
        replace_span(text, at, len + sep, "", edited, sizeof(edited));
        if (required) {
            ck_assert_int_eq(tc_calib_params_parse(edited, &b), TC_ERR_PARSE);
            snprintf(with, sizeof(with), "missing \"%s\"", key);
            ck_assert_msg(strstr(tc_last_error(), with), "%s: %s", key, tc_last_error());
        } else {
            ck_assert_int_eq(tc_calib_params_parse(edited, &b), TC_OK);
            ck_assert_int_eq(tc_calib_params_format(&b, again, sizeof(again)), TC_OK);
            ck_assert_str_ne(again, text);
        }
        /* another value: read into the field the writer writes it from */
        ck_assert(key_span(text, key, &at, &len));
        if (text[at + strlen(key) + 4] == '"') {
            snprintf(with, sizeof(with), "\"%s\": \"%s\"", key,
                     strcmp(key, "kernels") == 0 ? "12345:0.5" : "7:1");
            replace_span(text, at, len, with, edited, sizeof(edited));
            ck_assert_int_eq(tc_calib_params_parse(edited, &b), TC_OK);
            took = true;
        }
        for (size_t i = 0; !took && i < sizeof(numbers) / sizeof(numbers[0]); i++) {
            snprintf(with, sizeof(with), "\"%s\": %s", key, numbers[i]);
            replace_span(text, at, len, with, edited, sizeof(edited));
            took = tc_calib_params_parse(edited, &b) == TC_OK;
        }
        ck_assert_msg(took, "no other value of '%s' parses", key);
        ck_assert_int_eq(tc_calib_params_format(&b, again, sizeof(again)), TC_OK);
        ck_assert_str_eq(again, edited);
    }
    /* and nothing is written that the table does not hold */
    ck_assert_uint_eq(keys, written);
    ck_assert_uint_ge(keys, 30);
}
END_TEST

START_TEST(params_roundtrip_and_errors)
{
    struct tc_calib_params a, b;
    char text[TC_CALIB_PARAMS_MAX];

    memset(&a, 0, sizeof(a));
    a.format = TC_CALIB_FORMAT;
    snprintf(a.model_version, sizeof(a.model_version), "%s", tc_version());
    a.c_compute = 0.93;
    a.c_memory = 1.07;
    a.c_overhead = 2.5;
    a.align_factor[0] = 1;
    a.align_factor[1] = 1.1;
    a.align_factor[2] = 1.4;
    a.align_factor[3] = 2.0;
    a.host_us[TC_TIMING_WALL] = 21.5;
    a.nb_length = 0.05;
    a.nb_prior = 0.1;
    a.nb_k = 16;
    a.nb_scale_nk = 4;
    a.nb_beta = 1;
    a.nb2_length = 0.35;
    a.nb2_prior = 3;
    a.interval_level = 0.8;
    a.q_lo[2] = -0.03;
    a.q_hi[2] = 0.04;
    a.n_rows = 8288;
    snprintf(a.runs, sizeof(a.runs), "1:0,2:2");
    a.c_compute_avg = 0.95;
    a.n_kernels = 2;
    a.kernel_hash[0] = tc_calib_kernel_hash("ampere_h16816gemm_128x128_32x5");
    a.kernel_hash[1] = tc_calib_kernel_hash("ampere_h16816gemm_64x128_32x6");
    a.kernel_scale[0] = 0.97;
    a.kernel_scale[1] = 1.08;
    ck_assert_uint_ne(a.kernel_hash[0], a.kernel_hash[1]);
    ck_assert_uint_eq(tc_calib_kernel_hash(""), 0);
    ck_assert_int_eq(tc_calib_params_format(&a, text, sizeof(text)), TC_OK);
    ck_assert_int_eq(text[0], '{');
    ck_assert_int_eq(tc_calib_params_parse(text, &b), TC_OK);
    ck_assert_double_eq(b.c_compute, 0.93);
    ck_assert_double_eq(b.align_factor[3], 2.0);
    ck_assert_double_eq(b.host_us[TC_TIMING_WALL], 21.5);
    ck_assert_double_eq(b.q_hi[2], 0.04);
    ck_assert_int_eq(b.nb_k, 16);
    ck_assert_int_eq(b.n_rows, 8288);
    ck_assert_str_eq(b.runs, "1:0,2:2");
    ck_assert_double_eq(b.c_compute_avg, 0.95);
    ck_assert_double_eq(b.nb2_length, 0.35);
    ck_assert_double_eq(b.nb2_prior, 3);
    ck_assert_int_eq(b.n_kernels, 2);
    ck_assert_uint_eq(b.kernel_hash[1], a.kernel_hash[1]);
    ck_assert_double_eq(b.kernel_scale[1], 1.08);
    ck_assert_str_eq(b.model_version, tc_version());

    ck_assert_int_eq(tc_calib_params_parse("not json", &b), TC_ERR_PARSE);
    ck_assert_int_eq(tc_calib_params_parse("{\"format\": 2}", &b), TC_ERR_PARSE);
    ck_assert_msg(strstr(tc_last_error(), "model"), "%s", tc_last_error());
    ck_assert_int_eq(tc_calib_params_parse("{\"format\": 2, \"model\": \"0.1.0\"}", &b),
                     TC_ERR_PARSE);
    ck_assert_msg(strstr(tc_last_error(), "missing"), "%s", tc_last_error());
    /* a later format parses (so the caller can say it recomputes) */
    ck_assert_int_eq(tc_calib_params_parse("{\"format\": 99, \"model\": \"9.9\"}", &b), TC_OK);
    ck_assert_int_eq(b.format, 99);
    /* untrusted numbers outside int's range are refused before conversion,
     * and strings must be quoted (the formatter writes them back as they
     * are: an unquoted value could carry a quote into the stored JSON) */
    ck_assert_int_eq(tc_calib_params_parse("{\"format\": 1e300, \"model\": \"x\"}", &b),
                     TC_ERR_RANGE);
    ck_assert_msg(strstr(tc_last_error(), "format"), "%s", tc_last_error());
    ck_assert_int_eq(tc_calib_params_parse("{\"format\": 2.5, \"model\": \"x\"}", &b),
                     TC_ERR_RANGE);
    {
        char bad[sizeof(text)], *at, *comma;

        ck_assert_int_eq(tc_calib_params_format(&a, bad, sizeof(bad)), TC_OK);
        at = strstr(bad, "\"nb_k\": ");
        ck_assert_ptr_nonnull(at);
        at += strlen("\"nb_k\": ");
        comma = strchr(at, ',');
        ck_assert_ptr_nonnull(comma);
        memmove(at + 4, comma, strlen(comma) + 1);
        memcpy(at, "9e99", 4);
        ck_assert_int_eq(tc_calib_params_parse(bad, &b), TC_ERR_RANGE);
    }
    ck_assert_int_eq(tc_calib_params_parse("{\"format\": 99, \"model\": 0.1}", &b), TC_ERR_PARSE);
    ck_assert_msg(strstr(tc_last_error(), "\"model\" must be a string"), "%s", tc_last_error());
    ck_assert_int_eq(
        tc_calib_params_parse("{\"format\": 99, \"model\": \"x\", \"runs\": _1:0\"}", &b),
        TC_ERR_PARSE);
    ck_assert_int_eq(tc_calib_params_parse("{\"format\": \"99\", \"model\": \"x\"}", &b),
                     TC_ERR_PARSE);
    ck_assert_int_eq(tc_calib_params_parse("{\"format\": 99, \"model\": \"a\tb\"}", &b),
                     TC_ERR_PARSE);
    /* out-of-range values are refused */
    a.c_memory = -1;
    ck_assert_int_eq(tc_calib_params_format(&a, text, sizeof(text)), TC_OK);
    ck_assert_int_eq(tc_calib_params_parse(text, &b), TC_ERR_RANGE);
    ck_assert_int_eq(tc_calib_params_format(&a, text, 16), TC_ERR_RANGE);
    /* and so are values no fit of a device gives (common/bounds.h): they
     * would make every prediction infinite */
    a.c_memory = 1;
    ck_assert_int_eq(tc_calib_params_format(&a, text, sizeof(text)), TC_OK);
    ck_assert_int_eq(tc_calib_params_parse(text, &b), TC_OK);
    for (int i = 0; i < 6; i++) {
        static const char *const names[] = {"c_compute", "c_compute", "c_overhead",
                                            "align1",    "host cost", "q_lo0/q_hi0"};
        struct tc_calib_params c = a;

        switch (i) {
        case 0:
            c.c_compute = 1e308;
            break;
        case 1:
            c.c_compute = 1e-308;
            break;
        case 2:
            c.c_overhead = 1e300;
            break;
        case 3:
            c.align_factor[1] = 1e9;
            break;
        case 4:
            c.host_us[TC_TIMING_EVENT] = 1e300;
            break;
        default:
            c.q_hi[0] = 1e300;
            break;
        }
        ck_assert_int_eq(tc_calib_params_format(&c, text, sizeof(text)), TC_OK);
        ck_assert_int_eq(tc_calib_params_parse(text, &b), TC_ERR_RANGE);
        ck_assert_msg(strstr(tc_last_error(), names[i]), "%s", tc_last_error());
    }
    /* numbers are decimal: strtod would read hex */
    ck_assert_int_eq(tc_calib_params_format(&a, text, sizeof(text)), TC_OK);
    {
        char *at = strstr(text, "\"nb_prior\": ");

        ck_assert_ptr_nonnull(at);
        at += strlen("\"nb_prior\": ");
        memcpy(at, "0x1p-5", 6); /* over the start of the number */
        memmove(at + 6, strchr(at, ','), strlen(strchr(at, ',')) + 1);
        ck_assert_int_eq(tc_calib_params_parse(text, &b), TC_ERR_PARSE);
    }
}
END_TEST

TCase *calib_params_tcase(void)
{
    TCase *tc = tcase_create("params");

    tcase_add_test(tc, params_text_unchanged);
    tcase_add_test(tc, params_every_key_round_trips);
    tcase_add_test(tc, params_roundtrip_and_errors);
    return tc;
}
