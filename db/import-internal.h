/* What the importers of db/import*.c share: the import in progress, its
 * runs and the provenance helpers. Internal to db/. */
#ifndef TC_DB_IMPORT_INTERNAL_H
#define TC_DB_IMPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "csv.h"
#include "db-internal.h"

struct import_run_slot {
    char *key;
    int64_t id;
};

struct importer {
    struct tc_db *db;
    const char *format;
    const struct tc_import_options *opt;
    tc_gpu_lookup_fn lookup;
    const void *lookup_ctx;
    struct tc_import_stats *stats;
    struct import_run_slot *runs;
    size_t n_runs, cap_runs;
};

/* The licence of a source tilecast knows (by its owner/repo@ prefix), or
 * NULL. */
const char *db_import_licence(const char *source);
/* The last component of a path. */
const char *db_import_base_name(const char *path);
/* The run of one (format, GPU, timing method, source), created with its
 * provenance (and the GPU's spec snapshot, through the lookup) on first
 * use; file and line name the row in errors. */
int db_import_run(struct importer *imp, const char *gpu_id, const char *timing, const char *source,
                  const char *licence, const char *runtime, const char *file, long line,
                  int64_t *run_id);

/* Opens a CSV import source under the import size cap and reads its
 * header into *nfields / *header. On success the caller owns *f and *csv
 * (tc_csv_free, then fclose); on failure nothing is left open. */
int db_import_csv_open(const char *file, FILE **f, struct tc_csv **csv, int *nfields,
                       char ***header);
/* Reads the records after the header, each of exactly width fields, through
 * record(imp, file, line, fields, cols); stops at the first error and at the
 * import size cap (a pipe's size is known only as it is read). */
int db_import_csv_records(struct importer *imp, const char *file, struct tc_csv *csv, int width,
                          const int *cols,
                          int (*record)(struct importer *, const char *, long, char **,
                                        const int *));

/* The attention rows of the shared measured-data layout (attention_fused.csv:
 * impl and pass columns), read on from csv after its header. */
int db_import_attention_csv(struct importer *imp, const char *file, struct tc_csv *csv, int nfields,
                            char **header);
/* A result CSV of the cuDNN frontend's attention benchmarks. */
int db_import_cudnn_frontend(struct importer *imp, const char *file);

#endif
