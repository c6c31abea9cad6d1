/* GEMM prediction over CSV rows, shared by `tilecast predict gemm`,
 * `tilecast eval` and `tilecast bench` (implemented in cmd-predict.c). */
#ifndef TC_GEMM_CLI_H
#define TC_GEMM_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"

/* Where the GEMM columns of a CSV header are (-1 when absent). */
struct gemm_columns {
    int m, n, k, gpu, dtype, batch, layout, lda, ldb, ldc;
    int op; /* the framework call (mm, bmm, linear): the query's op */
};

/* Values used when a row has no such column (flags of the command). */
struct gemm_defaults {
    const char *gpu_id; /* NULL: the row must name it */
    enum tc_dtype dtype;
    bool have_dtype;
    enum tc_layout layout;
    long long batch;
    enum tc_gemm_op op;
};

/* Parses --gpu and --dtype at argv[*i], and with `shape` also --layout and
 * --batch, into d. Returns 1 if consumed, 0 if argv[*i] is none of them,
 * or minus the exit status after printing the error (a missing value is a
 * usage error, a bad one an input error). */
int gemm_defaults_parse(const char *cmd, int argc, char **argv, int *i, bool shape,
                        struct gemm_defaults *d);

/* Finds the columns; m, n and k are required. On error prints
 * "FILE:LINE: ..." for cmd and returns false. */
bool gemm_columns_find(const char *cmd, const char *file, long line, int nfields, char **fields,
                       struct gemm_columns *cols);

/* Builds the query and picks the GPU of one row. On error writes
 * "FILE:LINE:COL: message" into err (len bytes) and returns a negative
 * enum tc_error. *cache remembers the last GPU looked up. */
int gemm_row_query(const struct tc_specs *specs, const struct gemm_columns *cols,
                   const struct gemm_defaults *def, const char *file, long line, char **fields,
                   const struct tc_gpu **gpu, struct tc_gemm_query *q, char *err, size_t len);

/* Maps a prediction error to the column that caused it (1-based, 0 when
 * the whole row is at fault). */
int gemm_error_column(const struct gemm_columns *cols, int err);

/* "prediction (analytical)", "measurement", ... Static string. */
const char *gemm_source_label(enum tc_source source);

/* Options shared by the commands that make a predictor. */
struct predictor_opts {
    bool analytical;
    const char *dbs[16];
    int n_dbs;
};

/* Parses --analytical and --db FILE / --db=FILE at argv[*i]. Returns 1 if
 * consumed, 0 if not one of them, -1 on a usage error (printed). */
int predictor_opts_parse(const char *cmd, int argc, char **argv, int *i, struct predictor_opts *o);
/* Makes the predictor; prints the error and returns NULL on failure, with
 * *exit_code set. */
struct tc_predictor *predictor_opts_make(const char *cmd, const struct tc_specs *specs,
                                         const struct predictor_opts *o, int *exit_code);

#endif
