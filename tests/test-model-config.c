/* Check suite 'model-config': the keys of a model config through
 * tc_model_config_set, and the YAML loader agreeing with it key by key
 * (python/tests/test_config_routes.py holds the dict and flag routes to the
 * same cases). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tilecast/tilecast.h"

static void temp_yaml(const char *text, char *path, size_t len)
{
    const char *dir = getenv("TMPDIR");
    FILE *f;
    int fd;

    snprintf(path, len, "%s/tc-model-config-XXXXXX", dir && *dir ? dir : P_tmpdir);
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

#define BASE "hidden: 4096\nheads: 32\nseq: 2048\n"

/* field by field: memcmp would also compare the padding and the bytes of
 * name after its end, which no setter promises to leave alone */
static bool same_config(const struct tc_model_config *a, const struct tc_model_config *b)
{
    return strcmp(a->name, b->name) == 0 && a->hidden == b->hidden && a->heads == b->heads &&
           a->kv_heads == b->kv_heads && a->head_dim == b->head_dim && a->ffn == b->ffn &&
           a->layers == b->layers && a->vocab == b->vocab && a->seq == b->seq &&
           a->micro_batch == b->micro_batch && a->tp == b->tp && a->swiglu == b->swiglu &&
           a->rmsnorm == b->rmsnorm && a->dtype == b->dtype && a->attention == b->attention &&
           a->training == b->training && a->causal == b->causal &&
           a->tied_embeddings == b->tied_embeddings && a->graphs == b->graphs;
}

static const struct {
    const char *key, *value;
    int err;             /* 0: accepted */
    const char *message; /* the setter's message (or a part of it) */
} cases[] = {
    {"hidden", "2048", 0, NULL},
    {"hidden_size", "2048", 0, NULL},
    {"kv_heads", "0", 0, NULL},
    {"head_dim", "0", 0, NULL},
    {"ffn", "0", 0, NULL},
    {"swiglu", "yes", 0, NULL},
    {"activation", "SwiGLU", 0, NULL},
    {"rmsnorm", "true", 0, NULL},
    {"training", "false", 0, NULL},
    {"mode", "prefill", 0, NULL},
    {"dtype", "bfloat16", 0, NULL},
    {"hidden", "0", TC_ERR_RANGE, "hidden: 0 is out of range [1, 1048576]"},
    {"kv_heads", "-1", TC_ERR_RANGE, "kv_heads: -1 is out of range [0, 65536]"},
    {"heads", "x32", TC_ERR_PARSE, "heads: 'x32' is not an integer"},
    {"seq", "", TC_ERR_PARSE, "seq: no value"},
    {"causal", "maybe", TC_ERR_PARSE, "causal: 'maybe' is not a boolean"},
    {"activation", "relu", TC_ERR_INVALID,
     "activation: 'relu' (expected gelu, gelu_new or swiglu)"},
    {"norm", "batchnorm", TC_ERR_INVALID, "norm: 'batchnorm' (expected layernorm or rmsnorm)"},
    {"mode", "eval", TC_ERR_INVALID, "mode: 'eval' (expected training or inference)"},
    {"dtype", "fp7", TC_ERR_INVALID, "dtype: unknown dtype 'fp7'"},
    {"attention", "magic", TC_ERR_INVALID, "attention: unknown attention implementation"},
    {"batch", "4", TC_ERR_INVALID, "unknown key 'batch' (the key is micro_batch)"},
    {"mlp", "swiglu", TC_ERR_INVALID, "unknown key 'mlp' (the key is activation)"},
    {"hiden", "1", TC_ERR_INVALID, "unknown key 'hiden' (expected name, hidden, heads"},
};

/* The setter and the loader give the same config or the same error, the
 * loader's message being the setter's after file:line:column. */
START_TEST(test_set_matches_yaml)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tc_model_config set, loaded, before;
        static const char *const base[][2] = {{"hidden", "4096"}, {"heads", "32"}, {"seq", "2048"}};
        char text[256], path[4096], msg[1024], where[16];
        int err, lerr, line;

        tc_model_config_defaults(&set);
        ck_assert_int_eq(tc_model_config_set(&set, "hidden", "4096"), TC_OK);
        ck_assert_int_eq(tc_model_config_set(&set, "heads", "32"), TC_OK);
        ck_assert_int_eq(tc_model_config_set(&set, "seq", "2048"), TC_OK);
        before = set;
        /* the base less a key that sets the case's field (a file that gave
         * both would be refused), then the case on the last line */
        text[0] = '\0';
        line = 1;
        for (size_t k = 0; k < sizeof(base) / sizeof(base[0]); k++) {
            const char *f = tc_model_config_field(cases[i].key);

            if (f && strcmp(f, base[k][0]) == 0)
                continue;
            snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s: %s\n", base[k][0],
                     base[k][1]);
            line++;
        }
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s: '%s'\n", cases[i].key,
                 cases[i].value);
        snprintf(where, sizeof(where), ":%d:", line);
        err = tc_model_config_set(&set, cases[i].key, cases[i].value);
        snprintf(msg, sizeof(msg), "%s", tc_last_error());
        ck_assert_msg(err == cases[i].err, "case %zu (%s: %s): %d (%s), want %d", i, cases[i].key,
                      cases[i].value, err, msg, cases[i].err);
        if (err < 0) {
            ck_assert_msg(strstr(msg, cases[i].message) == msg, "case %zu: '%s' lacks '%s'", i, msg,
                          cases[i].message);
            ck_assert_msg(same_config(&set, &before),
                          "case %zu: a refused value changed the config", i);
        }
        temp_yaml(text, path, sizeof(path));
        tc_model_config_defaults(&loaded);
        lerr = tc_model_config_load(path, &loaded);
        unlink(path);
        ck_assert_msg(lerr == err, "case %zu: load %d (%s), set %d", i, lerr, tc_last_error(), err);
        if (err < 0) {
            /* FILE:LINE:COL: then the setter's message */
            const char *at = strstr(tc_last_error(), where);

            ck_assert_msg(strncmp(tc_last_error(), path, strlen(path)) == 0 && at,
                          "case %zu: '%s' does not name %s%s", i, tc_last_error(), path, where);
            at = strstr(at + strlen(where), ": ");
            ck_assert_msg(at && strcmp(at + 2, msg) == 0, "case %zu: '%s' is not '%s' placed", i,
                          tc_last_error(), msg);
            continue;
        }
        ck_assert_int_eq(tc_model_config_resolve(&set), TC_OK);
        ck_assert_msg(same_config(&set, &loaded), "case %zu: configs differ", i);
    }
}
END_TEST

START_TEST(test_fields)
{
    ck_assert_str_eq(tc_model_config_field("hidden"), "hidden");
    ck_assert_str_eq(tc_model_config_field("hidden_size"), "hidden");
    ck_assert_str_eq(tc_model_config_field("num_key_value_heads"), "kv_heads");
    ck_assert_str_eq(tc_model_config_field("activation"), "swiglu");
    ck_assert_str_eq(tc_model_config_field("swiglu"), "swiglu");
    ck_assert_str_eq(tc_model_config_field("mode"), "training");
    ck_assert_ptr_null(tc_model_config_field("num_heads"));
    ck_assert_msg(strstr(tc_last_error(), "the key is heads") != NULL, "%s", tc_last_error());
    ck_assert_ptr_null(tc_model_config_field(NULL));
    ck_assert_int_eq(tc_model_config_set(NULL, "hidden", "1"), TC_ERR_INVALID);
}
END_TEST

/* Two keys of one file that set one field: the second is refused at its
 * line, naming the first, as a key given twice is. */
START_TEST(test_two_keys_one_field)
{
    static const struct {
        const char *text, *where;
    } bad[] = {
        {BASE "hidden_size: 2048\n", ":4:1: key 'hidden_size' sets hidden, as 'hidden' on line 1"},
        {BASE "activation: gelu\nswiglu: true\n", ":5:1: key 'swiglu' sets swiglu"},
        {BASE "mode: training\ntraining: false\n", ":5:1: key 'training' sets training"},
        {BASE "seq: 1024\n", ":4:1: duplicate key 'seq' (first given on line 3)"},
    };
    struct tc_model_config c;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[4096];
        int err;

        temp_yaml(bad[i].text, path, sizeof(path));
        err = tc_model_config_load(path, &c);
        unlink(path);
        ck_assert_int_eq(err, TC_ERR_PARSE);
        ck_assert_msg(strstr(tc_last_error(), bad[i].where) != NULL, "case %zu: '%s' lacks '%s'", i,
                      tc_last_error(), bad[i].where);
    }
}
END_TEST

/* The shipped configs read the same through the setter as through the
 * loader (their keys are the canonical ones). */
START_TEST(test_shipped_keys)
{
    static const char *const names[] = {"gpt-neox-20b", "llama-2-70b", "llama-2-7b", "llama-3-8b",
                                        "paper-gpt"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[4096], line[512];
        struct tc_model_config loaded, set;
        FILE *f;

        snprintf(path, sizeof(path), "%s/predictor/models/%s.yaml", getenv("TILECAST_SOURCE_ROOT"),
                 names[i]);
        ck_assert_msg(tc_model_config_load(path, &loaded) == TC_OK, "%s", tc_last_error());
        f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        tc_model_config_defaults(&set);
        while (fgets(line, sizeof(line), f)) {
            char *colon = strchr(line, ':'), *v;

            if (line[0] == '#' || !colon)
                continue;
            *colon = '\0';
            v = colon + 1 + strspn(colon + 1, " ");
            v[strcspn(v, "\r\n #")] = '\0';
            ck_assert_msg(tc_model_config_set(&set, line, v) == TC_OK, "%s: %s", names[i],
                          tc_last_error());
        }
        fclose(f);
        ck_assert_int_eq(tc_model_config_resolve(&set), TC_OK);
        ck_assert_msg(same_config(&set, &loaded), "%s: configs differ", names[i]);
    }
}
END_TEST

static Suite *model_config_suite(void)
{
    Suite *s = suite_create("model-config");
    TCase *tc = tcase_create("model-config");

    tcase_add_test(tc, test_set_matches_yaml);
    tcase_add_test(tc, test_fields);
    tcase_add_test(tc, test_two_keys_one_field);
    tcase_add_test(tc, test_shipped_keys);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(model_config_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
