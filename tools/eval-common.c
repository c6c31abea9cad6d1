/* What `tilecast eval`, `eval --attention` and `eval --elementwise` share:
 * their common options and the opening of the measured CSV, so the commands
 * take and refuse them with the same words. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "eval-cli.h"
#include "tc-internal.h"

int eval_opt(const char *cmd, int argc, char **argv, int *i, int max_group, const char *group_noun,
             struct eval_opts *o)
{
    const char *a = argv[*i], *v = NULL;

    if (cli_parse_format(a, &o->fmt))
        return 1;
    if (cli_flag_value(argc, argv, i, "--input", &v)) {
        if (!v || !*v)
            goto missing;
        o->input = v;
    } else if (cli_flag_value(argc, argv, i, "--output", &v)) {
        if (!v || !*v)
            goto missing;
        o->output = v;
    } else if (cli_flag_value(argc, argv, i, "--group-by", &v)) {
        if (!v || !*v)
            goto missing;
        if (o->n_group >= max_group || o->n_group >= EVAL_MAX_GROUPS) {
            cli_error(cmd, "at most %d --group-by %s", max_group, group_noun);
            return -1;
        }
        o->group[o->n_group++] = v;
    } else {
        return 0;
    }
    return 1;
missing:
    cli_error(cmd, "%s needs a value", a);
    return -1;
}

int eval_open_input(const char *cmd, const char *input, FILE **in)
{
    *in = strcmp(input, "-") == 0 ? stdin : fopen(input, "r");
    if (!*in) {
        cli_error(cmd, "%s: cannot open: %s", input, strerror(errno));
        return CLI_EXIT_INPUT;
    }
    return CLI_EXIT_OK;
}

int eval_read_header(const char *cmd, FILE *in, const char *in_name, struct tc_csv **csv,
                     int *nfields, char ***fields)
{
    int r;

    if (!(*csv = tc_csv_new(in, in_name)))
        return cli_fail(cmd, TC_ERR_NOMEM);
    r = tc_csv_next(*csv, nfields, fields);
    if (r <= 0) {
        if (r == 0)
            cli_error(cmd, "%s: empty input", in_name);
        else
            cli_fail(cmd, r);
        return CLI_EXIT_INPUT;
    }
    return CLI_EXIT_OK;
}

char **eval_copy_header(const char *cmd, int nfields, char **fields)
{
    char **header = calloc((size_t)nfields, sizeof(*header));

    if (!header) {
        cli_fail(cmd, TC_ERR_NOMEM);
        return NULL;
    }
    for (int c = 0; c < nfields; c++)
        if (!(header[c] = tc_strdup(fields[c]))) {
            eval_free_header(header, c);
            cli_fail(cmd, TC_ERR_NOMEM);
            return NULL;
        }
    return header;
}

void eval_free_header(char **header, int n)
{
    if (header)
        for (int c = 0; c < n; c++)
            free(header[c]);
    free(header);
}

struct eval_group *eval_group_get(struct eval_groups *gs, const char *key)
{
    for (size_t i = 0; i < gs->n; i++)
        if (strcmp(gs->g[i].key, key) == 0)
            return &gs->g[i];
    if (gs->n == gs->cap) {
        size_t cap = gs->cap ? 2 * gs->cap : 16;
        struct eval_group *grown = realloc(gs->g, cap * sizeof(*grown));

        if (!grown)
            return NULL;
        gs->g = grown;
        gs->cap = cap;
    }
    memset(&gs->g[gs->n], 0, sizeof(gs->g[gs->n]));
    tc_strlcpy(gs->g[gs->n].key, key, sizeof(gs->g[gs->n].key));
    return &gs->g[gs->n++];
}

bool eval_group_add(struct eval_group *g, const struct tc_eval_point *s)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 32;
        struct tc_eval_point *grown = realloc(g->s, cap * sizeof(*grown));

        if (!grown)
            return false;
        g->s = grown;
        g->cap = cap;
    }
    g->s[g->n++] = *s;
    return true;
}

static int cmp_group(const void *a, const void *b)
{
    return strcmp(((const struct eval_group *)a)->key, ((const struct eval_group *)b)->key);
}

void eval_groups_sort(struct eval_groups *gs)
{
    if (gs->n)
        qsort(gs->g, gs->n, sizeof(*gs->g), cmp_group);
}

void eval_groups_free(struct eval_groups *gs)
{
    for (size_t i = 0; i < gs->n; i++)
        free(gs->g[i].s);
    free(gs->g);
    gs->g = NULL;
    gs->n = gs->cap = 0;
}

int eval_group_columns(const char *cmd, const char *in_name, const struct eval_opts *o, int nfields,
                       char **fields, int *cols, int *n)
{
    *n = 0;
    for (int k = 0; k < o->n_group; k++) {
        char buf[EVAL_KEY_MAX], *save = NULL, *tok;

        tc_strlcpy(buf, o->group[k], sizeof(buf));
        for (tok = strtok_r(buf, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
            int col = tc_csv_find(nfields, fields, tok);

            if (col < 0) {
                cli_error(cmd, "%s: --group-by: no column '%s'", in_name, tok);
                return CLI_EXIT_USAGE;
            }
            if (*n < EVAL_GROUP_COLS)
                cols[(*n)++] = col;
        }
    }
    return CLI_EXIT_OK;
}

void eval_key_append(char *key, size_t size, char **fields, const int *cols, int n)
{
    for (int k = 0; k < n; k++) {
        size_t len = strlen(key);

        snprintf(key + len, size - len, "\t%s", fields[cols[k]]);
    }
}

void eval_table_key(struct cli_table *t, int *col, const char *key, int n_key)
{
    char part[EVAL_KEY_MAX], *tok, *next;
    int done = 0;

    /* the key's fields, empty ones included (printed as "-") */
    tc_strlcpy(part, key, sizeof(part));
    for (tok = part; tok && done < n_key; tok = next, done++) {
        next = strchr(tok, '\t');
        if (next)
            *next++ = '\0';
        cli_table_addf(t, (*col)++, "%s", *tok ? tok : "-");
    }
    for (; done < n_key; done++)
        cli_table_addf(t, (*col)++, "%s", "all");
}

int eval_table_stats(struct cli_table *t, int *col, const struct eval_group *g)
{
    struct tc_eval_stats st;
    int err = tc_eval_stats(g->s, g->n, sizeof(*g->s), &st);

    if (err < 0)
        return err;
    if (g->n) {
        cli_table_addf(t, (*col)++, "%.2f", st.mape_pct);
        cli_table_addf(t, (*col)++, "%.2f", st.median_ape_pct);
        cli_table_addf(t, (*col)++, "%.2f", st.p90_ape_pct);
        cli_table_addf(t, (*col)++, "%+.2f", st.bias_pct);
    } else {
        for (int k = 0; k < 4; k++)
            cli_table_addf(t, (*col)++, "%s", "");
    }
    if (isfinite(st.spearman_tflops))
        cli_table_addf(t, (*col)++, "%.3f", st.spearman_tflops);
    else
        cli_table_addf(t, (*col)++, "%s", "");
    return TC_OK;
}

const struct tc_gpu *eval_row_gpu(const char *cmd, const char *in_name, struct tc_csv *csv,
                                  const struct tc_specs *specs, int nfields, int header_n,
                                  char **fields, int gpu_col)
{
    const struct tc_gpu *gpu;

    if (nfields != header_n) {
        cli_error(cmd, "%s:%ld: %d fields, the header has %d", in_name, tc_csv_line(csv), nfields,
                  header_n);
        return NULL;
    }
    if (!(gpu = tc_specs_find(specs, fields[gpu_col])))
        cli_error(cmd, "%s:%ld: unknown GPU '%s'", in_name, tc_csv_line(csv), fields[gpu_col]);
    return gpu;
}

int eval_require_columns(const char *cmd, const char *in_name, int nfields, char **fields,
                         const char *const *required, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (tc_csv_find(nfields, fields, required[k]) < 0) {
            cli_error(cmd, "%s: no '%s' column (see --help)", in_name, required[k]);
            return CLI_EXIT_INPUT;
        }
    return CLI_EXIT_OK;
}

void eval_write_fields(FILE *out, char **fields, int nfields)
{
    for (int k = 0; k < nfields; k++)
        cli_csv_field(out, fields[k], false);
}

int eval_prepare(const char *cmd, const char *in_name, const struct eval_opts *o, int nfields,
                 char **fields, int *group_cols, int *n_group, char ***header, int *header_n,
                 FILE *out, const char *out_columns)
{
    int rc = eval_group_columns(cmd, in_name, o, nfields, fields, group_cols, n_group);

    if (rc != CLI_EXIT_OK)
        return rc;
    if (!(*header = eval_copy_header(cmd, nfields, fields)))
        return cli_exit_code(TC_ERR_NOMEM);
    *header_n = nfields;
    if (out) {
        eval_write_fields(out, fields, nfields);
        fputs(out_columns, out);
    }
    return CLI_EXIT_OK;
}

int eval_cleanup(const char *cmd, int rc, struct eval_groups *gs, struct eval_group *all,
                 char **header, int header_n, struct tc_csv *csv, FILE *in, FILE *out,
                 const char *output)
{
    eval_groups_free(gs);
    free(all->s);
    all->s = NULL;
    eval_free_header(header, header_n);
    tc_csv_free(csv);
    if (in && in != stdin)
        fclose(in);
    if (out && fclose(out) != 0 && rc == CLI_EXIT_OK) {
        cli_error(cmd, "%s: write failed: %s", output, strerror(errno));
        rc = CLI_EXIT_RUNTIME;
    }
    return rc;
}
