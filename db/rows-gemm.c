/* Rows of table gemm: inserting (checked first), reading back from an
 * untrusted file (every value checked), lookup, iteration and counting. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "db-internal.h"

static int check_gemm_row(struct tc_db *db, const struct tc_gemm_row *r)
{
    if ((unsigned)r->dtype >= TC_DTYPE_COUNT || (unsigned)r->dtype_c >= TC_DTYPE_COUNT ||
        (unsigned)r->compute >= TC_DTYPE_COUNT)
        return tc_error(TC_ERR_INVALID, "%s: GEMM row with an invalid dtype", db->path);
    if ((unsigned)r->layout >= TC_LAYOUT_COUNT)
        return tc_error(TC_ERR_INVALID, "%s: GEMM row with an invalid layout %d", db->path,
                        (int)r->layout);
    if ((unsigned)r->status > TC_STATUS_ERROR)
        return tc_error(TC_ERR_INVALID, "%s: GEMM row with an invalid status %d", db->path,
                        (int)r->status);
    if (r->m <= 0 || r->n <= 0 || r->k <= 0 || r->batch <= 0)
        return tc_error(TC_ERR_RANGE,
                        "%s: GEMM %lldx%lldx%lld batch %lld: dimensions must "
                        "be positive",
                        db->path, (long long)r->m, (long long)r->n, (long long)r->k,
                        (long long)r->batch);
    if (r->status == TC_STATUS_OK && (!isfinite(r->time_us) || r->time_us <= 0))
        return tc_error(TC_ERR_RANGE,
                        "%s: GEMM %lldx%lldx%lld: an ok row needs a positive "
                        "time (got %g us)",
                        db->path, (long long)r->m, (long long)r->n, (long long)r->k, r->time_us);
    if (r->status == TC_STATUS_OK &&
        (tc_bound_check_gemm(r->m, r->n, r->k, r->batch, r->time_us) < 0 ||
         (r->min_us != 0 && tc_bound_check_time("min_us", r->min_us) < 0)))
        return tc_error_prefix(TC_ERR_RANGE, "%s: GEMM %lldx%lldx%lld", db->path, (long long)r->m,
                               (long long)r->n, (long long)r->k);
    if (!memchr(r->algo, '\0', sizeof(r->algo)) || !memchr(r->message, '\0', sizeof(r->message)))
        return tc_error(TC_ERR_INVALID, "%s: GEMM row with an unterminated string", db->path);
    return TC_OK;
}

int db_insert_gemm_op(struct tc_db *db, const struct tc_gemm_row *r, const char *op, bool *inserted)
{
    sqlite3_stmt *st;
    int err = check_gemm_row(db, r), rc;

    if (err < 0)
        return err;
    err = db_stmt(db, DB_ST_INSERT_GEMM, &st);
    if (err < 0)
        return err;
    sqlite3_bind_int64(st, 1, r->run_id);
    db_bind_text(st, 2, op);
    sqlite3_bind_text(st, 3, tc_dtype_name(r->dtype), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, tc_dtype_name(r->dtype_c), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, tc_dtype_name(r->compute), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, tc_layout_name(r->layout), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, r->m);
    sqlite3_bind_int64(st, 8, r->n);
    sqlite3_bind_int64(st, 9, r->k);
    sqlite3_bind_int64(st, 10, r->batch);
    db_bind_pos_double(st, 11, r->time_us);
    db_bind_pos_double(st, 12, r->min_us);
    db_bind_pos_double(st, 13, r->spread_pct);
    db_bind_pos_int(st, 14, r->reps);
    db_bind_pos_int(st, 15, r->tile_m);
    db_bind_pos_int(st, 16, r->tile_n);
    db_bind_pos_int(st, 17, r->tile_k);
    db_bind_pos_int(st, 18, r->stages);
    db_bind_pos_int(st, 19, r->split_k);
    db_bind_pos_int(st, 20, r->cluster_m);
    db_bind_pos_int(st, 21, r->cluster_n);
    db_bind_pos_int(st, 22, r->swizzle);
    db_bind_text(st, 23, r->algo);
    sqlite3_bind_text(st, 24, tc_status_name(r->status), -1, SQLITE_STATIC);
    db_bind_text(st, 25, r->message);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        if ((rc & 0xff) == SQLITE_CONSTRAINT)
            return tc_error(TC_ERR_INVALID, "%s: GEMM %lldx%lldx%lld of run %lld: %s", db->path,
                            (long long)r->m, (long long)r->n, (long long)r->k, (long long)r->run_id,
                            sqlite3_errmsg(db->sql));
        return db_fail(db, rc, "inserting a GEMM row");
    }
    if (inserted)
        *inserted = sqlite3_changes(db->sql) > 0;
    return TC_OK;
}

TC_API int tc_db_insert_gemm(struct tc_db *db, const struct tc_gemm_row *row)
{
    if (!db || !row)
        return tc_error(TC_ERR_INVALID, "tc_db_insert_gemm: missing argument");
    return db_insert_gemm_op(db, row, NULL, NULL);
}

int db_read_gemm_row(struct tc_db *db, sqlite3_stmt *st, int c, struct tc_gemm_row *r)
{
    int64_t id = sqlite3_column_int64(st, c), v;
    char text[16];
    int err;

    memset(r, 0, sizeof(*r));
#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((err = (x)) < 0)                                                                       \
            goto fail;                                                                             \
    } while (0)
    TRY(db_column_int_range(db, st, c + 1, 1, INT64_MAX, false, &r->run_id, "run_id", id));
    TRY(db_column_text(db, st, c + 2, text, sizeof(text), "dtype"));
    TRY(db_parse_dtype(db, text, &r->dtype));
    TRY(db_column_text(db, st, c + 3, text, sizeof(text), "dtype_c"));
    TRY(db_parse_dtype(db, text, &r->dtype_c));
    TRY(db_column_text(db, st, c + 4, text, sizeof(text), "compute"));
    TRY(db_parse_dtype(db, text, &r->compute));
    TRY(db_column_text(db, st, c + 5, text, sizeof(text), "layout"));
    TRY(db_parse_layout(db, text, &r->layout));
    /* 2^40 per dimension keeps m·n·k·batch and FLOP counts finite doubles */
    TRY(db_column_int_range(db, st, c + 6, 1, 1LL << 40, false, &r->m, "m", id));
    TRY(db_column_int_range(db, st, c + 7, 1, 1LL << 40, false, &r->n, "n", id));
    TRY(db_column_int_range(db, st, c + 8, 1, 1LL << 40, false, &r->k, "k", id));
    TRY(db_column_int_range(db, st, c + 9, 1, 1LL << 40, false, &r->batch, "batch", id));
    TRY(db_column_time(db, st, c + 10, &r->time_us, "time_us", id));
    TRY(db_column_time(db, st, c + 11, &r->min_us, "min_us", id));
    TRY(db_column_real(db, st, c + 12, false, &r->spread_pct, "spread_pct", id));
#define INTCOL(col, field, name)                                                                   \
    TRY(db_column_int_range(db, st, c + (col), 0, 1 << 30, true, &v, name, id));                   \
    r->field = (int)v
    INTCOL(13, reps, "reps");
    INTCOL(14, tile_m, "tile_m");
    INTCOL(15, tile_n, "tile_n");
    INTCOL(16, tile_k, "tile_k");
    INTCOL(17, stages, "stages");
    INTCOL(18, split_k, "split_k");
    INTCOL(19, cluster_m, "cluster_m");
    INTCOL(20, cluster_n, "cluster_n");
    INTCOL(21, swizzle, "swizzle");
#undef INTCOL
    TRY(db_column_text(db, st, c + 22, r->algo, sizeof(r->algo), "algo"));
    TRY(db_column_text(db, st, c + 23, text, sizeof(text), "status"));
    TRY(db_parse_status(db, text, &r->status));
    TRY(db_column_text(db, st, c + 24, r->message, sizeof(r->message), "message"));
#undef TRY
    if (r->status == TC_STATUS_OK && !(r->time_us > 0.0))
        return tc_error(TC_ERR_SCHEMA, "%s: gemm row %lld: status ok without a time", db->path,
                        (long long)id);
    if (r->status == TC_STATUS_OK &&
        !tc_bound_gemm_rate_ok(r->m, r->n, r->k, r->batch, r->time_us)) {
        tc_bound_check_gemm(r->m, r->n, r->k, r->batch, r->time_us);
        return tc_error_prefix(TC_ERR_SCHEMA, "%s: gemm row %lld", db->path, (long long)id);
    }
    return TC_OK;
fail : {
    char idtext[32];

    snprintf(idtext, sizeof(idtext), "%lld", (long long)id);
    return db_row_error(db, err, "gemm row", idtext);
}
}

/* The shape key of the lookup and the existence check, parameters 2 to 7
 * (the first is the GPU or the run); a batch of 0 is one GEMM. */
static void bind_shape(sqlite3_stmt *st, int64_t m, int64_t n, int64_t k, int64_t batch,
                       enum tc_dtype dtype, enum tc_layout layout)
{
    sqlite3_bind_int64(st, 2, m);
    sqlite3_bind_int64(st, 3, n);
    sqlite3_bind_int64(st, 4, k);
    sqlite3_bind_int64(st, 5, batch <= 0 ? 1 : batch);
    sqlite3_bind_text(st, 6, tc_dtype_name(dtype), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, tc_layout_name(layout), -1, SQLITE_STATIC);
}

TC_API int tc_db_lookup_gemm(struct tc_db *db, const char *gpu_id, enum tc_dtype dtype,
                             enum tc_layout layout, int64_t m, int64_t n, int64_t k, int64_t batch,
                             struct tc_gemm_row *out)
{
    sqlite3_stmt *st;
    int err, rc;

    if (!db || !gpu_id || !out)
        return tc_error(TC_ERR_INVALID, "tc_db_lookup_gemm: missing argument");
    if ((unsigned)dtype >= TC_DTYPE_COUNT || (unsigned)layout >= TC_LAYOUT_COUNT)
        return tc_error(TC_ERR_INVALID, "tc_db_lookup_gemm: invalid dtype or layout");
    err = db_stmt(db, DB_ST_LOOKUP_GEMM, &st);
    if (err < 0)
        return err;
    sqlite3_bind_text(st, 1, gpu_id, -1, SQLITE_TRANSIENT);
    bind_shape(st, m, n, k, batch, dtype, layout);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        err = db_read_gemm_row(db, st, 0, out);
        sqlite3_reset(st);
        return err;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return db_fail(db, rc, "looking up a GEMM");
    return tc_error(TC_ERR_NOT_FOUND,
                    "%s: no measurement of %s %s %lldx%lldx%lld batch %lld "
                    "on %s",
                    db->path, tc_dtype_name(dtype), tc_layout_name(layout), (long long)m,
                    (long long)n, (long long)k, (long long)batch, gpu_id);
}

TC_API int tc_db_has_gemm(struct tc_db *db, int64_t run_id, enum tc_dtype dtype,
                          enum tc_layout layout, int64_t m, int64_t n, int64_t k, int64_t batch,
                          bool *found)
{
    sqlite3_stmt *st;
    int err, rc;

    if (!db || !found)
        return tc_error(TC_ERR_INVALID, "tc_db_has_gemm: missing argument");
    if ((unsigned)dtype >= TC_DTYPE_COUNT || (unsigned)layout >= TC_LAYOUT_COUNT)
        return tc_error(TC_ERR_INVALID, "tc_db_has_gemm: invalid dtype or layout");
    err = db_stmt(db, DB_ST_HAS_GEMM, &st);
    if (err < 0)
        return err;
    sqlite3_bind_int64(st, 1, run_id);
    bind_shape(st, m, n, k, batch, dtype, layout);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_fail(db, rc, "checking a GEMM");
    *found = rc == SQLITE_ROW;
    return TC_OK;
}

struct tc_db_iter {
    struct tc_db *db;
    sqlite3_stmt *st;
};

static int prepare_filtered(struct tc_db *db, const char *select, const char *gpu_id, int dtype,
                            int layout, sqlite3_stmt **out)
{
    char sql[1024];
    int rc;

    if (dtype >= TC_DTYPE_COUNT || layout >= TC_LAYOUT_COUNT)
        return tc_error(TC_ERR_INVALID, "%s: invalid dtype %d or layout %d filter", db->path, dtype,
                        layout);
    /* each filter is "?N IS NULL OR column = ?N", so one statement serves
     * every combination */
    snprintf(sql, sizeof(sql),
             "%s FROM run r JOIN gemm g ON g.run_id = r.id WHERE g.status = 'ok'"
             " AND (?1 IS NULL OR r.gpu_id = ?1) AND (?2 IS NULL OR g.dtype = ?2)"
             " AND (?3 IS NULL OR g.layout = ?3)",
             select);
    rc = sqlite3_prepare_v2(db->sql, sql, -1, out, NULL);
    if (rc != SQLITE_OK)
        return db_fail(db, rc, "querying GEMM rows");
    db_bind_text(*out, 1, gpu_id);
    if (dtype >= 0)
        sqlite3_bind_text(*out, 2, tc_dtype_name((enum tc_dtype)dtype), -1, SQLITE_STATIC);
    if (layout >= 0)
        sqlite3_bind_text(*out, 3, tc_layout_name((enum tc_layout)layout), -1, SQLITE_STATIC);
    return TC_OK;
}

TC_API int tc_db_iter_gemm(struct tc_db *db, const char *gpu_id, int dtype, int layout,
                           struct tc_db_iter **out)
{
    struct tc_db_iter *it;
    int err;

    if (!out)
        return tc_error(TC_ERR_INVALID, "tc_db_iter_gemm: no output");
    *out = NULL;
    if (!db)
        return tc_error(TC_ERR_INVALID, "tc_db_iter_gemm: no database");
    it = calloc(1, sizeof(*it));
    if (!it)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    it->db = db;
    err = prepare_filtered(db, "SELECT " DB_GEMM_COLUMNS ", r.gpu_id, g.op", gpu_id, dtype, layout,
                           &it->st);
    if (err < 0) {
        tc_db_iter_free(it);
        return err;
    }
    *out = it;
    return TC_OK;
}

TC_API int tc_db_iter_next(struct tc_db_iter *it, struct tc_gemm_row *row, char *gpu_id)
{
    int rc, err;

    if (!it || !row)
        return tc_error(TC_ERR_INVALID, "tc_db_iter_next: missing argument");
    rc = sqlite3_step(it->st);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        return db_fail(it->db, rc, "reading GEMM rows");
    err = db_read_gemm_row(it->db, it->st, 0, row);
    if (err < 0)
        return err;
    if (gpu_id) {
        err = db_column_text(it->db, it->st, DB_GEMM_NCOLUMNS, gpu_id, TC_ID_MAX, "gpu_id");
        if (err < 0)
            return err;
    }
    return 1;
}

int tc_db_iter_op(struct tc_db_iter *it, enum tc_gemm_op *op)
{
    char text[16];
    int err;

    *op = TC_GEMM_OP_MM;
    if (sqlite3_column_type(it->st, DB_GEMM_NCOLUMNS + 1) == SQLITE_NULL)
        return TC_OK;
    err = db_column_text(it->db, it->st, DB_GEMM_NCOLUMNS + 1, text, sizeof(text), "op");
    if (err < 0)
        return err;
    if (tc_gemm_op_parse(text, op) < 0)
        return tc_error(TC_ERR_SCHEMA, "%s: gemm row %lld: %s", it->db->path,
                        (long long)sqlite3_column_int64(it->st, 0), tc_last_error());
    return TC_OK;
}

TC_API void tc_db_iter_free(struct tc_db_iter *it)
{
    if (!it)
        return;
    sqlite3_finalize(it->st);
    free(it);
}

TC_API int tc_db_count_gemm(struct tc_db *db, const char *gpu_id, int dtype, int layout,
                            int64_t *count)
{
    sqlite3_stmt *st = NULL;
    int err, rc;

    if (!db || !count)
        return tc_error(TC_ERR_INVALID, "tc_db_count_gemm: missing argument");
    err = prepare_filtered(db, "SELECT count(*)", gpu_id, dtype, layout, &st);
    if (err < 0)
        return err;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *count = sqlite3_column_int64(st, 0);
    else
        err = db_fail(db, rc, "counting GEMM rows");
    sqlite3_finalize(st);
    return err;
}
