/* Shared by `tilecast eval` (GEMM rows, cmd-eval.c), `tilecast eval
 * --attention` (fused-attention rows, cmd-eval-attention.c) and `tilecast
 * eval --elementwise` (memory-bound kernels, cmd-eval-elementwise.c): the
 * options they take and the reading of the measured CSV's header (eval-common.c).
 * The statistics are the library's (tc_eval_stats, tc_spearman). */
#ifndef TC_EVAL_CLI_H
#define TC_EVAL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "tilecast/tilecast.h"

struct tc_csv;

#define EVAL_MAX_GROUPS 8

/* The options both commands take. */
struct eval_opts {
    const char *input, *output;
    const char *group[EVAL_MAX_GROUPS]; /* --group-by values, in order */
    int n_group;
    enum cli_format fmt;
};

/* Parses argv[*i] if it is --json/--csv, --input, --output or --group-by
 * (at most max_group of them; the error names them as `group_noun`).
 * Returns 1 if it was one, 0 if not, -1 after printing a usage error. */
int eval_opt(const char *cmd, int argc, char **argv, int *i, int max_group, const char *group_noun,
             struct eval_opts *o);

/* Opens the input ('-': stdin), then reads its CSV header into *csv and
 * the header's fields (valid until the next read). Each returns CLI_EXIT_OK
 * or an exit status after printing the error; the caller frees what was
 * set. */
int eval_open_input(const char *cmd, const char *input, FILE **in);
int eval_read_header(const char *cmd, FILE *in, const char *in_name, struct tc_csv **csv,
                     int *nfields, char ***fields);

/* A copy of the header's names, which outlive the row read with them (the
 * labels need them). NULL after printing the error. */
char **eval_copy_header(const char *cmd, int nfields, char **fields);
void eval_free_header(char **header, int n);

/* The groups of `eval --attention` and `eval --elementwise`: a key (the
 * group's values joined by tabs), the group's points, and the counts those
 * commands keep beside them. */
#define EVAL_KEY_MAX 256
#define EVAL_GROUP_COLS 16 /* --group-by columns in all (A+B+... joins them) */

struct eval_group {
    char key[EVAL_KEY_MAX];
    struct tc_eval_point *s;
    size_t n, cap;
    long refused;              /* rows the model refused */
    long measured, calibrated; /* rows answered so (with --db) */
};

struct eval_groups {
    struct eval_group *g;
    size_t n, cap;
};

/* The group of that key, made empty when new; NULL out of memory. */
struct eval_group *eval_group_get(struct eval_groups *gs, const char *key);
/* Appends a point; false out of memory. */
bool eval_group_add(struct eval_group *g, const struct tc_eval_point *s);
/* Sorts the groups by key. */
void eval_groups_sort(struct eval_groups *gs);
void eval_groups_free(struct eval_groups *gs);

/* After the header is read and checked: the --group-by columns (as
 * eval_group_columns), a copy of the header's names (*header, n of them;
 * eval_free_header frees it), and, when out is open, the per-row CSV's
 * header: the input's columns, then out_columns (a line of its own names
 * with its newline). CLI_EXIT_OK or the exit status after the error. */
int eval_prepare(const char *cmd, const char *in_name, const struct eval_opts *o, int nfields,
                 char **fields, int *group_cols, int *n_group, char ***header, int *header_n,
                 FILE *out, const char *out_columns);

/* The end of a run: frees the groups (all's points too), the header's
 * copy and the CSV reader, closes in and out (out named output), and
 * returns rc, or CLI_EXIT_RUNTIME when out could not be written. */
int eval_cleanup(const char *cmd, int rc, struct eval_groups *gs, struct eval_group *all,
                 char **header, int header_n, struct tc_csv *csv, FILE *in, FILE *out,
                 const char *output);

/* CLI_EXIT_OK when the header has each of the n required columns, else
 * CLI_EXIT_INPUT after naming the first it lacks. */
int eval_require_columns(const char *cmd, const char *in_name, int nfields, char **fields,
                         const char *const *required, size_t n);
/* Writes fields as the first columns of a per-row CSV line (each followed
 * by a comma). */
void eval_write_fields(FILE *out, char **fields, int nfields);

/* The GPU of one data row (its fields checked against the header's count
 * first); NULL after naming the file, line and what is wrong. */
const struct tc_gpu *eval_row_gpu(const char *cmd, const char *in_name, struct tc_csv *csv,
                                  const struct tc_specs *specs, int nfields, int header_n,
                                  char **fields, int gpu_col);

/* The columns the --group-by options name (A+B joins columns), into
 * cols[*n] (at most EVAL_GROUP_COLS). CLI_EXIT_OK, or CLI_EXIT_USAGE after
 * naming the column the input lacks. */
int eval_group_columns(const char *cmd, const char *in_name, const struct eval_opts *o, int nfields,
                       char **fields, int *cols, int *n);
/* Appends a tab and each of those columns' values to key. */
void eval_key_append(char *key, size_t size, char **fields, const int *cols, int n);

/* A summary table's row: the key's first n_key fields ('-' for an empty
 * one, 'all' past the key's end), then (with eval_table_stats) MAPE, median
 * and 90th-percentile APE, bias and Spearman of the group's points, blank
 * where they have no meaning. Each advances *col. */
void eval_table_key(struct cli_table *t, int *col, const char *key, int n_key);
int eval_table_stats(struct cli_table *t, int *col, const struct eval_group *g);

int cmd_eval_attention(int argc, char **argv);
extern const char cmd_eval_attention_help[];
int cmd_eval_elementwise(int argc, char **argv);
extern const char cmd_eval_elementwise_help[];

#endif
