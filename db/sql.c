/* The SQL helpers every file of db/ shares: errors naming the file, binding
 * and reading columns of an untrusted file (every value checked), the enum
 * names stored as text, and the per-connection statement cache. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bounds.h"
#include "db-internal.h"
#include "hash.h"

int db_fail(struct tc_db *db, int rc, const char *what)
{
    const char *msg = db && db->sql ? sqlite3_errmsg(db->sql) : sqlite3_errstr(rc);
    int prim = rc & 0xff;

    if (prim == SQLITE_CORRUPT || prim == SQLITE_NOTADB)
        return tc_error(TC_ERR_SCHEMA, "%s: %s: database is corrupt (%s)", db ? db->path : "?",
                        what, msg);
    return tc_error(TC_ERR_DB, "%s: %s: %s", db ? db->path : "?", what, msg);
}

int db_exec(struct tc_db *db, const char *sql)
{
    char *err = NULL;
    int rc = sqlite3_exec(db->sql, sql, NULL, NULL, &err);

    if (rc != SQLITE_OK) {
        int ret = tc_error((rc & 0xff) == SQLITE_CORRUPT ? TC_ERR_SCHEMA : TC_ERR_DB, "%s: %s",
                           db->path, err ? err : sqlite3_errstr(rc));
        sqlite3_free(err);
        return ret;
    }
    return TC_OK;
}

int db_bind_text(sqlite3_stmt *st, int idx, const char *s)
{
    if (!s || !*s)
        return sqlite3_bind_null(st, idx);
    return sqlite3_bind_text(st, idx, s, -1, SQLITE_TRANSIENT);
}

int db_bind_pos_int(sqlite3_stmt *st, int idx, int64_t v)
{
    /* zeros mean "unknown": NULL costs no bytes in the record */
    if (v == 0)
        return sqlite3_bind_null(st, idx);
    return sqlite3_bind_int64(st, idx, v);
}

int db_bind_pos_double(sqlite3_stmt *st, int idx, double v)
{
    if (v == 0.0 || !isfinite(v))
        return sqlite3_bind_null(st, idx);
    return sqlite3_bind_double(st, idx, v);
}

int db_column_text(struct tc_db *db, sqlite3_stmt *st, int col, char *buf, size_t len,
                   const char *what)
{
    int type = sqlite3_column_type(st, col);
    const unsigned char *text;
    int n;

    if (type == SQLITE_NULL) {
        buf[0] = '\0';
        return TC_OK;
    }
    if (type != SQLITE_TEXT)
        return tc_error(TC_ERR_SCHEMA, "%s: %s is not text", db->path, what);
    text = sqlite3_column_text(st, col);
    n = sqlite3_column_bytes(st, col);
    if (!text)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    if ((size_t)n >= len)
        return tc_error(TC_ERR_SCHEMA, "%s: %s is %d bytes long (at most %zu allowed)", db->path,
                        what, n, len - 1);
    if (memchr(text, '\0', (size_t)n))
        return tc_error(TC_ERR_SCHEMA, "%s: %s contains a NUL byte", db->path, what);
    memcpy(buf, text, (size_t)n);
    buf[n] = '\0';
    return TC_OK;
}

/* An integer column that must lie in [lo, hi]; NULL reads as 0 when allowed. */
int db_column_int_range(struct tc_db *db, sqlite3_stmt *st, int col, int64_t lo, int64_t hi,
                        bool null_ok, int64_t *out, const char *what, int64_t row_id)
{
    int type = sqlite3_column_type(st, col);
    int64_t v;

    if (type == SQLITE_NULL && null_ok) {
        *out = 0;
        return TC_OK;
    }
    if (type != SQLITE_INTEGER)
        return tc_error(TC_ERR_SCHEMA, "%s: row %lld: %s is not an integer", db->path,
                        (long long)row_id, what);
    v = sqlite3_column_int64(st, col);
    if (v < lo || v > hi)
        return tc_error(TC_ERR_SCHEMA, "%s: row %lld: %s = %lld is out of range [%lld, %lld]",
                        db->path, (long long)row_id, what, (long long)v, (long long)lo,
                        (long long)hi);
    *out = v;
    return TC_OK;
}

int db_column_real(struct tc_db *db, sqlite3_stmt *st, int col, bool positive, double *out,
                   const char *what, int64_t row_id)
{
    int type = sqlite3_column_type(st, col);
    double v;

    if (type == SQLITE_NULL) {
        *out = 0.0;
        return TC_OK;
    }
    if (type != SQLITE_INTEGER && type != SQLITE_FLOAT)
        return tc_error(TC_ERR_SCHEMA, "%s: row %lld: %s is not a number", db->path,
                        (long long)row_id, what);
    v = sqlite3_column_double(st, col);
    if (!isfinite(v) || v < 0.0 || (positive && v <= 0.0))
        return tc_error(TC_ERR_SCHEMA, "%s: row %lld: %s = %g is out of range", db->path,
                        (long long)row_id, what, v);
    *out = v;
    return TC_OK;
}

/* A time column (time_us, min_us): NULL reads as 0, anything else must be
 * a plausible time (bounds.h), or it would come back as an infinite
 * throughput. */
int db_column_time(struct tc_db *db, sqlite3_stmt *st, int col, double *out, const char *what,
                   int64_t row_id)
{
    int err = db_column_real(db, st, col, false, out, what, row_id);

    if (err == TC_OK && *out != 0 && !tc_bound_time_ok(*out))
        return tc_error(TC_ERR_SCHEMA,
                        "%s: row %lld: %s = %g is outside the plausible "
                        "[%g, %g] us",
                        db->path, (long long)row_id, what, *out, TC_BOUND_TIME_US_MIN,
                        TC_BOUND_TIME_US_MAX);
    return err;
}

/* Rewrites the current message as "<file>: <what> <id>: <reason>", dropping
 * the file and row that the column helpers put in front of the reason, so
 * that a bad value reads once, naming the row. */
int db_row_error(struct tc_db *db, int err, const char *what, const char *id)
{
    char reason[2048];
    const char *r = tc_last_error();
    size_t plen = strlen(db->path);

    if (strncmp(r, db->path, plen) == 0 && r[plen] == ':' && r[plen + 1] == ' ')
        r += plen + 2;
    if (strncmp(r, "row ", 4) == 0) {
        const char *colon = strstr(r, ": ");

        if (colon)
            r = colon + 2;
    }
    tc_strlcpy(reason, r, sizeof(reason));
    return tc_error(err, "%s: %s %s: %s", db->path, what, id, reason);
}

int db_parse_dtype(struct tc_db *db, const char *text, enum tc_dtype *out)
{
    for (int i = 0; i < TC_DTYPE_COUNT; i++) {
        if (strcmp(text, tc_dtype_name((enum tc_dtype)i)) == 0) {
            *out = (enum tc_dtype)i;
            return TC_OK;
        }
    }
    return tc_error(TC_ERR_SCHEMA, "%s: unknown dtype '%s'", db->path, text);
}

int db_parse_layout(struct tc_db *db, const char *text, enum tc_layout *out)
{
    for (int i = 0; i < TC_LAYOUT_COUNT; i++) {
        if (strcmp(text, tc_layout_name((enum tc_layout)i)) == 0) {
            *out = (enum tc_layout)i;
            return TC_OK;
        }
    }
    return tc_error(TC_ERR_SCHEMA, "%s: unknown layout '%s'", db->path, text);
}

int db_parse_status(struct tc_db *db, const char *text, enum tc_status *out)
{
    for (int i = TC_STATUS_OK; i <= TC_STATUS_ERROR; i++) {
        if (strcmp(text, tc_status_name((enum tc_status)i)) == 0) {
            *out = (enum tc_status)i;
            return TC_OK;
        }
    }
    return tc_error(TC_ERR_SCHEMA, "%s: unknown status '%s'", db->path, text);
}

enum tc_dtype db_default_compute(enum tc_dtype dtype)
{
    switch (dtype) {
    case TC_DTYPE_FP64:
        return TC_DTYPE_FP64;
    case TC_DTYPE_TF32:
        return TC_DTYPE_TF32;
    case TC_DTYPE_INT8:
        return TC_DTYPE_INT8;
    default:
        return TC_DTYPE_FP32; /* fp16/bf16/fp8 accumulate in fp32 */
    }
}

void db_hash_hex(const char *s, char *buf)
{
    snprintf(buf, 17, "%016llx", (unsigned long long)tc_fnv1a64(s, strlen(s), TC_FNV1A64_SEED));
}

void db_now_iso(char *buf, size_t len)
{
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    time_t now = time(NULL);
    struct tm tm;
    long long v;

    if (sde && *sde && tc_parse_i64(sde, &v) == TC_OK && v >= 0)
        now = (time_t)v;
    tc_clear_error();
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int db_stmt(struct tc_db *db, enum db_stmt which, sqlite3_stmt **out)
{
    static const char *const sql[DB_ST_COUNT] = {
        [DB_ST_PUT_GPU] = NULL, /* built from the column table (rows-gpu.c) */
        [DB_ST_HAS_GPU] = "SELECT 1 FROM gpu WHERE id = ?1",
        [DB_ST_ADD_RUN] =
            "INSERT INTO run (gpu_id, kind, host, device_name, device_uuid, driver_version,"
            " runtime_version, blas_version, backend, sweep_name, sweep_hash, config_hash,"
            " shard, timing, source, licence, clocks_json, tilecast_version, started_at,"
            " ended_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
            " ?15, ?16, ?17, ?18, ?19, ?20)",
        [DB_ST_FIND_RUN] = "SELECT id FROM run WHERE gpu_id = ?1 AND config_hash = ?2"
                           " ORDER BY id DESC LIMIT 1",
        [DB_ST_END_RUN] = "UPDATE run SET ended_at = ?2 WHERE id = ?1",
        [DB_ST_INSERT_GEMM] =
            "INSERT INTO gemm (run_id, op, dtype, dtype_c, compute, layout, m, n, k, batch,"
            " time_us, min_us, spread_pct, reps, tile_m, tile_n, tile_k, stages, split_k,"
            " cluster_m, cluster_n, swizzle, algo, status, message) VALUES (?1, ?2, ?3, ?4,"
            " ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,"
            " ?21, ?22, ?23, ?24, ?25) ON CONFLICT DO NOTHING",
        [DB_ST_HAS_GEMM] = "SELECT 1 FROM gemm WHERE run_id = ?1 AND m = ?2 AND n = ?3"
                           " AND k = ?4 AND batch = ?5 AND dtype = ?6 AND layout = ?7"
                           " LIMIT 1",
        [DB_ST_LOOKUP_GEMM] =
            "SELECT " DB_GEMM_COLUMNS " FROM run r JOIN gemm g ON g.run_id = r.id"
            " WHERE r.gpu_id = ?1 AND g.m = ?2 AND g.n = ?3 AND g.k = ?4 AND g.batch = ?5"
            " AND g.dtype = ?6 AND g.layout = ?7 AND g.status = 'ok'"
            " ORDER BY g.time_us LIMIT 1",
        [DB_ST_INSERT_ATTN] =
            "INSERT INTO attention (run_id, impl, dtype, batch, heads, kv_heads, seq_q,"
            " seq_kv, head_dim, causal, backward, time_us, min_us, spread_pct, reps,"
            " scores_us, softmax_us, values_us, status, message, head_dim_vo,"
            " sliding_window, deterministic, page_size, kv_dtype) VALUES (?1, ?2, ?3, ?4,"
            " ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,"
            " ?21, ?22, ?23, ?24, ?25)"
            " ON CONFLICT DO NOTHING",
        [DB_ST_HAS_ATTN] = "SELECT 1 FROM attention WHERE run_id = ?1 AND batch = ?2 AND heads = ?3"
                           " AND kv_heads = ?4 AND seq_q = ?5 AND seq_kv = ?6 AND head_dim = ?7"
                           " AND dtype = ?8 AND impl = ?9 AND causal = ?10 AND backward = ?11"
                           " AND head_dim_vo = ?12 AND sliding_window = ?13 AND deterministic = ?14"
                           " AND page_size = ?15 AND kv_dtype = ?16 LIMIT 1",
    };
    char put_gpu_sql[4096];
    const char *text = sql[which];
    int rc;

    if (!db->stmts[which]) {
        if (which == DB_ST_PUT_GPU)
            text = db_put_gpu_statement(put_gpu_sql, sizeof(put_gpu_sql));
        rc = sqlite3_prepare_v3(db->sql, text, -1, SQLITE_PREPARE_PERSISTENT, &db->stmts[which],
                                NULL);
        if (rc != SQLITE_OK)
            return db_fail(db, rc, "preparing a statement");
    } else {
        sqlite3_reset(db->stmts[which]);
        sqlite3_clear_bindings(db->stmts[which]);
    }
    *out = db->stmts[which];
    return TC_OK;
}
