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

int cmd_eval_attention(int argc, char **argv);
extern const char cmd_eval_attention_help[];
int cmd_eval_elementwise(int argc, char **argv);
extern const char cmd_eval_elementwise_help[];

#endif
