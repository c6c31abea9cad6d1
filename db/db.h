/* What the database layer offers the rest of libtilecast beyond the public
 * tc_db_* API: reads and writes the predictor and the command need whole
 * (attention rows, an export to an open stream) and the import, which
 * learns GPU specs through a lookup its caller supplies, so that db/ stands
 * on the base layer alone. Not installed. */
#ifndef TC_DB_H
#define TC_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tc-internal.h"

/* Every ok attention row of one GPU, implementation, dtype and direction
 * in db (all runs), each value checked (db/rows-attention.c). *rows (caller
 * frees) is NULL when there are none. */
int tc_db_attention_rows(struct tc_db *db, const char *gpu_id, enum tc_attn_impl impl,
                         enum tc_dtype dtype, bool backward, struct tc_attention_row **rows,
                         size_t *n);

/* The op (the framework call: mm, bmm, linear) of the row the last
 * tc_db_iter_next returned: TC_GEMM_OP_MM where the row names none. A value
 * no schema allows is TC_ERR_SCHEMA, naming the file and row. */
struct tc_db_iter;
int tc_db_iter_op(struct tc_db_iter *it, enum tc_gemm_op *op);

/* tc_db_export's work, writing to out (borrowed; name is used in
 * messages): the command writes through its own temporary file. */
int tc_db_export_file(struct tc_db *db, const char *format, const char *gpu_id, FILE *out,
                      const char *name, int64_t *rows);

/* The spec of GPU gpu_id (borrowed, outliving the import), or NULL when
 * the caller knows none; ctx is the caller's. */
typedef const struct tc_gpu *(*tc_gpu_lookup_fn)(const void *ctx, const char *gpu_id);

/* tc_db_import's work: opt->specs is not read; a GPU the database lacks is
 * looked up with lookup(ctx, id) (lookup may be NULL: no spec is known), and
 * the import fails naming the file and line when it returns NULL. The public
 * tc_db_import (predictor/specs.c) passes its spec set's lookup. */
int tc_db_import_lookup(struct tc_db *db, const char *format, size_t n_files,
                        const char *const *files, const struct tc_import_options *opt,
                        tc_gpu_lookup_fn lookup, const void *ctx, struct tc_import_stats *stats);

#endif
