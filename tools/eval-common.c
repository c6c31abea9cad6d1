/* What `tilecast eval`, `eval --attention` and `eval --elementwise` share:
 * their common options and the opening of the measured CSV, so the commands
 * take and refuse them with the same words. */
#include "config.h"

#include <errno.h>
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
