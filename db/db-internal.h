/* Internal API of the database layer, shared by the files of db/, the only
 * code that speaks SQL; the rest of libtilecast uses the public tc_db_*
 * functions. Not installed.
 *
 * open.c opens and checks files, schema.c holds the schema and its
 * migrations, sql.c the helpers below and the statement cache, rows-*.c
 * one table each, calibration-store.c the calibrations; import.c, export.c
 * and merge.c move rows between databases and files. */
#ifndef TC_DB_INTERNAL_H
#define TC_DB_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "db.h"

/* PRAGMA application_id of every tilecast database: "TCDB". */
#define TC_DB_APPLICATION_ID 0x54434442

/* Statements prepared once per connection and reused (bound parameters). */
enum db_stmt {
    DB_ST_PUT_GPU,
    DB_ST_HAS_GPU,
    DB_ST_ADD_RUN,
    DB_ST_FIND_RUN,
    DB_ST_END_RUN,
    DB_ST_INSERT_GEMM,
    DB_ST_HAS_GEMM,
    DB_ST_LOOKUP_GEMM,
    DB_ST_INSERT_ATTN,
    DB_ST_HAS_ATTN,
    DB_ST_COUNT
};

struct tc_db {
    sqlite3 *sql;
    char *path;
    enum tc_db_mode mode;
    int schema_version;
    bool in_tx;
    sqlite3_stmt *stmts[DB_ST_COUNT];
};

/* Returns the cached statement, reset with bindings cleared. */
int db_stmt(struct tc_db *db, enum db_stmt which, sqlite3_stmt **out);
/* Sets an error naming the file, the action and SQLite's message; returns
 * TC_ERR_DB (or TC_ERR_SCHEMA for corruption). */
int db_fail(struct tc_db *db, int rc, const char *what);
/* Runs SQL without results. */
int db_exec(struct tc_db *db, const char *sql);

/* Binds s as text, or NULL when s is NULL or empty. */
int db_bind_text(sqlite3_stmt *st, int idx, const char *s);
/* Bind v, or NULL when v is 0 ("unknown"; a non-finite double too). */
int db_bind_pos_int(sqlite3_stmt *st, int idx, int64_t v);
int db_bind_pos_double(sqlite3_stmt *st, int idx, double v);
/* Copies a text column into buf (len bytes); "" for NULL. Returns
 * TC_ERR_SCHEMA if the value is not text or does not fit. */
int db_column_text(struct tc_db *db, sqlite3_stmt *st, int col, char *buf, size_t len,
                   const char *what);
/* Column readers for an untrusted file; each returns TC_ERR_SCHEMA naming
 * what and row_id when the value is of the wrong type or out of range.
 * An integer in [lo, hi] (NULL reads as 0 when null_ok); a finite number
 * >= 0 (> 0 when positive; NULL reads as 0); a time, NULL or plausible
 * (bounds.h), or it would come back as an infinite throughput. */
int db_column_int_range(struct tc_db *db, sqlite3_stmt *st, int col, int64_t lo, int64_t hi,
                        bool null_ok, int64_t *out, const char *what, int64_t row_id);
int db_column_real(struct tc_db *db, sqlite3_stmt *st, int col, bool positive, double *out,
                   const char *what, int64_t row_id);
int db_column_time(struct tc_db *db, sqlite3_stmt *st, int col, double *out, const char *what,
                   int64_t row_id);
/* Rewrites the current message as "<file>: <what> <id>: <reason>" and
 * returns err. */
int db_row_error(struct tc_db *db, int err, const char *what, const char *id);

/* The INSERT of a GPU snapshot, built into buf from the column table of
 * rows-gpu.c (db_stmt prepares it once). */
const char *db_put_gpu_statement(char *buf, size_t len);

/* Tables every v1 file has (schema.c); a file missing one is refused. */
extern const char *const db_v1_tables[];
extern const size_t db_v1_table_count;
/* Checks that every schema object of the file is one that the migrations
 * up to version created, with the same text. */
int db_check_schema_objects(sqlite3 *sql, const char *path, int version);
/* PRAGMA user_version of the open file. */
int db_read_user_version(struct tc_db *db, int *version);
/* Migrates the open file from schema version from to the current one. */
int db_migrate(struct tc_db *db, int from);

/* Inserts a GEMM row with the call the source made ("mm", "bmm",
 * "linear", or NULL when unknown). *inserted is false when the run already
 * held the shape (the first row is kept). */
int db_insert_gemm_op(struct tc_db *db, const struct tc_gemm_row *row, const char *op,
                      bool *inserted);

/* Inserts an attention row (checked first); *inserted is false when the run
 * already held its shape (the first row is kept). */
int db_insert_attention(struct tc_db *db, const struct tc_attention_row *row, bool *inserted);

/* Whether a GPU row exists. */
int db_has_gpu(struct tc_db *db, const char *gpu_id, bool *found);

/* Current UTC time as ISO 8601, or $SOURCE_DATE_EPOCH when set (so that
 * prebuilt databases are reproducible). buf holds at least 32 bytes. */
void db_now_iso(char *buf, size_t len);

/* Validates a GEMM row read back from a file (an untrusted file must not
 * crash or mislead tilecast). */
int db_read_gemm_row(struct tc_db *db, sqlite3_stmt *st, int first_col, struct tc_gemm_row *row);

/* The SELECT list db_read_gemm_row expects, for table alias g. */
#define DB_GEMM_COLUMNS                                                                            \
    "g.id, g.run_id, g.dtype, g.dtype_c, g.compute, g.layout, g.m, g.n, g.k, g.batch, "            \
    "g.time_us, g.min_us, g.spread_pct, g.reps, g.tile_m, g.tile_n, g.tile_k, g.stages, "          \
    "g.split_k, g.cluster_m, g.cluster_n, g.swizzle, g.algo, g.status, g.message"
#define DB_GEMM_NCOLUMNS 25

/* Parses a dtype / layout / status stored as text; TC_ERR_SCHEMA with the
 * value in the message when unknown. */
int db_parse_dtype(struct tc_db *db, const char *text, enum tc_dtype *out);
int db_parse_layout(struct tc_db *db, const char *text, enum tc_layout *out);
int db_parse_status(struct tc_db *db, const char *text, enum tc_status *out);

/* Compute type assumed for imported rows that do not state one: what
 * cuBLAS/rocBLAS use by default for that input type. */
enum tc_dtype db_default_compute(enum tc_dtype dtype);

/* "file:" URI of path (reserved characters escaped) with the query
 * string appended, e.g. "mode=ro". Caller frees. NULL on NOMEM. */
char *db_file_uri(const char *path, const char *query);

/* 64-bit FNV-1a of s, written as 16 hex digits into buf[17]. */
void db_hash_hex(const char *s, char *buf);

#endif
