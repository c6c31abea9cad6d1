/* --gpu a,b,c and --gpu all: the list of GPUs a comparing command runs
 * over (cli-gpus.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli-gpus.h"
#include "cli.h"

bool cli_gpu_list_given(const char *value)
{
    return value && (strcmp(value, "all") == 0 || strchr(value, ',') != NULL);
}

int cli_gpu_list(const char *cmd, const struct tc_specs *specs, const char *value,
                 const struct tc_gpu ***out, size_t *n)
{
    const struct tc_gpu **gpus;
    size_t count = tc_specs_count(specs), k = 0;
    const char *p = value;

    *out = NULL;
    *n = 0;
    if (!value || !*value) {
        cli_error(cmd, "no GPU given (use --gpu ID, --gpu A,B or --gpu all)");
        return CLI_EXIT_USAGE;
    }
    /* a name list holds at most one entry per comma-separated name */
    for (const char *c = value; *c; c++)
        if (*c == ',')
            count++;
    gpus = calloc(count + 1, sizeof(const struct tc_gpu *));
    if (!gpus)
        return cli_fail(cmd, TC_ERR_NOMEM);
    if (strcmp(value, "all") == 0) {
        for (size_t i = 0; i < tc_specs_count(specs); i++)
            gpus[k++] = tc_specs_at(specs, i);
    } else {
        while (*p) {
            size_t len = strcspn(p, ",");
            char name[TC_ID_MAX];
            const struct tc_gpu *g;
            bool seen = false;

            if (len == 0 || len >= sizeof(name)) {
                cli_error(cmd, "--gpu '%s': %s", value,
                          len ? "a name is too long" : "an empty name between commas");
                free(gpus);
                return CLI_EXIT_INPUT;
            }
            memcpy(name, p, len);
            name[len] = '\0';
            g = cli_find_gpu(cmd, specs, name);
            if (!g) {
                free(gpus);
                return CLI_EXIT_INPUT;
            }
            for (size_t i = 0; i < k; i++)
                seen = seen || gpus[i] == g;
            if (!seen)
                gpus[k++] = g;
            p += len;
            if (*p == ',' && !*++p) {
                cli_error(cmd, "--gpu '%s': an empty name after the last comma", value);
                free(gpus);
                return CLI_EXIT_INPUT;
            }
        }
    }
    *out = gpus;
    *n = k;
    return CLI_EXIT_OK;
}

static int sort_col_g;
static bool descending_g;

static int cmp_rows(const void *a, const void *b)
{
    const struct cli_cmp_row *x = a, *y = b;

    if (x->ok != y->ok)
        return x->ok ? -1 : 1;
    if (x->ok && x->v[sort_col_g] != y->v[sort_col_g]) {
        bool less = x->v[sort_col_g] < y->v[sort_col_g];

        return less != descending_g ? -1 : 1;
    }
    return strcmp(x->gpu->id, y->gpu->id);
}

int cli_compare_print(const char *cmd, const char *title, const char *const *cols,
                      const int *decimals, int ncols, int sort_col, bool descending,
                      struct cli_cmp_row *rows, size_t n, enum cli_format fmt)
{
    const char *headers[CLI_CMP_MAX + 3];
    bool numeric[CLI_CMP_MAX + 3];
    struct cli_table *t;
    size_t predicted = 0;

    if (ncols < 1 || ncols > CLI_CMP_MAX || sort_col < 0 || sort_col >= ncols)
        return cli_fail(cmd, TC_ERR_INVALID);
    headers[0] = "gpu";
    numeric[0] = false;
    for (int i = 0; i < ncols; i++) {
        headers[i + 1] = cols[i];
        numeric[i + 1] = true;
    }
    headers[ncols + 1] = "source";
    headers[ncols + 2] = "note";
    numeric[ncols + 1] = numeric[ncols + 2] = false;
    t = cli_table_new(ncols + 3, headers, numeric);
    if (!t)
        return cli_fail(cmd, TC_ERR_NOMEM);
    sort_col_g = sort_col;
    descending_g = descending;
    qsort(rows, n, sizeof(*rows), cmp_rows);
    if (fmt == CLI_FORMAT_JSON) {
        /* one object per GPU, labelled a prediction, null where none */
        json_t *arr = json_array();

        for (size_t r = 0; r < n && arr; r++) {
            const struct cli_cmp_row *row = &rows[r];
            json_t *o = json_object();

            json_object_set_new(o, "gpu", json_string(row->gpu->id));
            json_object_set_new(o, "prediction", json_boolean(row->ok));
            for (int i = 0; i < ncols; i++)
                json_object_set_new(o, cols[i],
                                    row->ok && isfinite(row->v[i]) ? json_real(row->v[i])
                                                                   : json_null());
            json_object_set_new(o, "source", row->ok ? json_string(row->source) : json_null());
            json_object_set_new(o, "note", json_string(row->note));
            json_array_append_new(arr, o);
            predicted += row->ok;
        }
        cli_table_free(t);
        if (!arr)
            return cli_fail(cmd, TC_ERR_NOMEM);
        json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(8) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(arr);
        if (!predicted) {
            cli_error(cmd, "no GPU of the list could be predicted (the note says why)");
            return CLI_EXIT_INPUT;
        }
        return CLI_EXIT_OK;
    }
    for (size_t r = 0; r < n; r++) {
        const struct cli_cmp_row *row = &rows[r];

        cli_table_addf(t, 0, "%s", row->gpu->id);
        for (int i = 0; i < ncols; i++) {
            /* a figure that is not finite is never printed */
            if (row->ok && isfinite(row->v[i]))
                cli_table_addf(t, i + 1, "%.*f", decimals[i], row->v[i]);
            else
                cli_table_addf(t, i + 1, "%s", "");
        }
        cli_table_addf(t, ncols + 1, "%s", row->ok ? row->source : "");
        cli_table_addf(t, ncols + 2, "%s", row->note);
        cli_table_end_row(t);
        predicted += row->ok;
    }
    if (fmt == CLI_FORMAT_TABLE || fmt == CLI_FORMAT_MD)
        printf("%s%s (predicted, %zu of %zu GPUs; fastest first)\n%s",
               fmt == CLI_FORMAT_MD ? "### " : "", title, predicted, n,
               fmt == CLI_FORMAT_MD ? "\n" : "");
    cli_table_print(t, stdout, fmt);
    cli_table_free(t);
    if (!predicted) {
        cli_error(cmd, "no GPU of the list could be predicted (the note column says why)");
        return CLI_EXIT_INPUT;
    }
    return CLI_EXIT_OK;
}

int cli_compare_rows(const char *cmd, const struct tc_specs *specs, const char *value,
                     const struct tc_gpu ***list, struct cli_cmp_row **rows, size_t *n)
{
    int code = cli_gpu_list(cmd, specs, value, list, n);

    *rows = NULL;
    if (code != CLI_EXIT_OK)
        return code;
    *rows = calloc(*n ? *n : 1, sizeof(**rows));
    if (!*rows) {
        free(*list);
        *list = NULL;
        return cli_fail(cmd, TC_ERR_NOMEM);
    }
    return CLI_EXIT_OK;
}

struct tc_predictor *cli_compare_predictor(const char *cmd, struct tc_specs *specs, bool analytical,
                                           const char *db, int *code)
{
    struct tc_predictor *p;

    *code = CLI_EXIT_OK;
    if (db && !cli_input_readable(cmd, db)) {
        *code = CLI_EXIT_INPUT;
        return NULL;
    }
    p = tc_predictor_new(specs);
    if (!p) {
        *code = cli_fail(cmd, TC_ERR_NOMEM);
        return NULL;
    }
    tc_predictor_set_analytical(p, analytical);
    if (db) {
        int err = tc_predictor_add_db(p, db);

        if (err < 0) {
            *code = cli_fail(cmd, err);
            tc_predictor_free(p);
            return NULL;
        }
    }
    return p;
}
