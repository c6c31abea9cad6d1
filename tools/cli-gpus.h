/* --gpu with more than one GPU: "a100,h100" or "all", for the commands that
 * compare GPUs in one table (predict model, layer, attention; advise). */
#ifndef TC_CLI_GPUS_H
#define TC_CLI_GPUS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "tilecast/tilecast.h"

/* Whether a --gpu value names more than one GPU ("all" or a comma). */
bool cli_gpu_list_given(const char *value);
/* The GPUs of value: every spec for "all" (in id order), else each
 * comma-separated name through cli_find_gpu (ids in any case, unique
 * prefixes), a GPU named twice kept once. Pointers borrowed from specs;
 * *out is the caller's to free(). On an unknown or empty name prints the
 * error for cmd and returns CLI_EXIT_INPUT (CLI_EXIT_USAGE for an empty
 * list), else CLI_EXIT_OK. */
int cli_gpu_list(const char *cmd, const struct tc_specs *specs, const char *value,
                 const struct tc_gpu ***out, size_t *n);

/* One GPU's row of a comparison: its figures in the command's columns, or
 * why it has none (a dtype it lacks, a model that does not fit). */
#define CLI_CMP_MAX 8
struct cli_cmp_row {
    const struct tc_gpu *gpu;
    bool ok;
    double v[CLI_CMP_MAX];
    char source[16]; /* the least certain source of the prediction */
    char note[640];
};

/* Prints rows as one table (aligned text, Markdown, CSV with a header or a
 * JSON array of objects): gpu, the ncols figures (cols[i] printed with
 * decimals[i] digits), source, note; the predicted rows sorted by column sort_col
 * (fastest first: ascending for times, descending when descending), the
 * GPUs without a prediction last. A header line says that the figures are
 * predictions, for text and Markdown. Returns CLI_EXIT_OK when any GPU was
 * predicted, else CLI_EXIT_INPUT (every row says why). */
int cli_compare_print(const char *cmd, const char *title, const char *const *cols,
                      const int *decimals, int ncols, int sort_col, bool descending,
                      struct cli_cmp_row *rows, size_t n, enum cli_format fmt);

/* The GPUs of value (cli_gpu_list) and a zeroed row for each; on failure
 * the error is printed, *list and *rows are NULL and the exit code is
 * returned. Both are the caller's to free(). */
int cli_compare_rows(const char *cmd, const struct tc_specs *specs, const char *value,
                     const struct tc_gpu ***list, struct cli_cmp_row **rows, size_t *n);
/* The predictor every GPU of a comparison shares: analytical or not, with
 * db (may be NULL; checked readable first) added, each GPU's prebuilt
 * database opened when it is asked for. NULL with *code set (the error
 * printed) on failure. */
struct tc_predictor *cli_compare_predictor(const char *cmd, struct tc_specs *specs, bool analytical,
                                           const char *db, int *code);

#endif
