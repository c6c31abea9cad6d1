/* Rows of table calibration: a fit's parameters (params_json, whose text
 * format the predictor owns) stored per GPU, dtype, layout and model
 * version, replacing the previous fit of the same key. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "db-internal.h"

TC_API int tc_db_put_calibration(struct tc_db *db, const struct tc_calibration_row *c)
{
    static const char del_sql[] =
        "DELETE FROM calibration WHERE gpu_id = ?1 AND dtype = ?2 AND layout IS ?3 AND "
        "model_version = ?4 AND source_gpu IS ?5";
    static const char ins_sql[] =
        "INSERT INTO calibration (gpu_id, dtype, layout, model_version, params_json, n_rows,"
        " median_ape_pct, p90_ape_pct, log_resid_sd, source_gpu, tilecast_version, created_at)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
    sqlite3_stmt *del = NULL, *ins = NULL;
    char now[32];
    bool own_tx = false;
    int err = TC_OK, rc;

    if (!db || !c)
        return tc_error(TC_ERR_INVALID, "tc_db_put_calibration: missing argument");
    if (!c->gpu_id[0] || !memchr(c->gpu_id, '\0', sizeof(c->gpu_id)) ||
        !memchr(c->source_gpu, '\0', sizeof(c->source_gpu)) ||
        !memchr(c->params_json, '\0', sizeof(c->params_json)) ||
        !memchr(c->tilecast_version, '\0', sizeof(c->tilecast_version)) ||
        !memchr(c->created_at, '\0', sizeof(c->created_at)))
        return tc_error(TC_ERR_INVALID,
                        "%s: calibration with a missing or unterminated "
                        "string",
                        db->path);
    if ((unsigned)c->dtype >= TC_DTYPE_COUNT || c->layout >= TC_LAYOUT_COUNT || c->layout < -1)
        return tc_error(TC_ERR_INVALID, "%s: calibration with an invalid dtype or layout",
                        db->path);
    if (c->params_json[0] != '{')
        return tc_error(TC_ERR_INVALID, "%s: calibration params must be a JSON object", db->path);
    db_now_iso(now, sizeof(now));
    if (!db->in_tx) {
        err = tc_db_begin(db);
        if (err < 0)
            return err;
        own_tx = true;
    }
    rc = sqlite3_prepare_v2(db->sql, del_sql, -1, &del, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db->sql, ins_sql, -1, &ins, NULL);
    if (rc != SQLITE_OK) {
        err = db_fail(db, rc, "storing a calibration");
        goto out;
    }
    for (int pass = 0; pass < 2; pass++) {
        sqlite3_stmt *st = pass ? ins : del;

        sqlite3_bind_text(st, 1, c->gpu_id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 2, tc_dtype_name(c->dtype), -1, SQLITE_STATIC);
        if (c->layout >= 0)
            sqlite3_bind_text(st, 3, tc_layout_name((enum tc_layout)c->layout), -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 4, c->model_version);
        db_bind_text(st, pass ? 10 : 5, c->source_gpu);
        if (pass) {
            sqlite3_bind_text(st, 5, c->params_json, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(st, 6, c->n_rows);
            sqlite3_bind_double(st, 7, c->median_ape_pct);
            sqlite3_bind_double(st, 8, c->p90_ape_pct);
            sqlite3_bind_double(st, 9, c->log_resid_sd);
            sqlite3_bind_text(st, 11, c->tilecast_version[0] ? c->tilecast_version : tc_version(),
                              -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(st, 12, c->created_at[0] ? c->created_at : now, -1, SQLITE_TRANSIENT);
        }
        rc = sqlite3_step(st);
        if (rc != SQLITE_DONE) {
            err = db_fail(db, rc, "storing a calibration");
            goto out;
        }
    }
out:
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    if (own_tx) {
        if (err == TC_OK)
            err = tc_db_commit(db);
        else
            tc_db_rollback(db);
    }
    return err;
}

TC_API int tc_db_get_calibration(struct tc_db *db, const char *gpu_id, enum tc_dtype dtype,
                                 int layout, int model_version, const char *source_gpu,
                                 struct tc_calibration_row *out)
{
    static const char sql[] =
        "SELECT gpu_id, dtype, layout, model_version, params_json, n_rows, median_ape_pct,"
        " p90_ape_pct, log_resid_sd, source_gpu, tilecast_version, created_at, id"
        " FROM calibration WHERE gpu_id = ?1 AND dtype = ?2 AND layout IS ?3"
        " AND model_version = ?4 AND source_gpu IS ?5 ORDER BY id DESC LIMIT 1";
    sqlite3_stmt *st = NULL;
    char text[16];
    int64_t id = 0;
    int err = TC_OK, rc;

    if (!db || !gpu_id || !out)
        return tc_error(TC_ERR_INVALID, "tc_db_get_calibration: missing argument");
    if ((unsigned)dtype >= TC_DTYPE_COUNT || layout >= TC_LAYOUT_COUNT || layout < -1)
        return tc_error(TC_ERR_INVALID, "tc_db_get_calibration: invalid dtype or layout");
    rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail(db, rc, "reading a calibration");
    sqlite3_bind_text(st, 1, gpu_id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, tc_dtype_name(dtype), -1, SQLITE_STATIC);
    if (layout >= 0)
        sqlite3_bind_text(st, 3, tc_layout_name((enum tc_layout)layout), -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, model_version);
    db_bind_text(st, 5, source_gpu);
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        err = tc_error(TC_ERR_NOT_FOUND, "%s: no calibration of %s %s (model v%d)", db->path,
                       gpu_id, tc_dtype_name(dtype), model_version);
        goto out;
    }
    if (rc != SQLITE_ROW) {
        err = db_fail(db, rc, "reading a calibration");
        goto out;
    }
    memset(out, 0, sizeof(*out));
    id = sqlite3_column_int64(st, 12);
    out->dtype = dtype;
    out->layout = layout;
    out->model_version = model_version;
#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((err = (x)) < 0)                                                                       \
            goto bad;                                                                              \
    } while (0)
    TRY(db_column_text(db, st, 0, out->gpu_id, sizeof(out->gpu_id), "gpu_id"));
    TRY(db_column_text(db, st, 1, text, sizeof(text), "dtype"));
    TRY(db_column_text(db, st, 4, out->params_json, sizeof(out->params_json), "params_json"));
    TRY(db_column_int_range(db, st, 5, 0, INT64_MAX, false, &out->n_rows, "n_rows", id));
    TRY(db_column_real(db, st, 6, false, &out->median_ape_pct, "median_ape_pct", id));
    TRY(db_column_real(db, st, 7, false, &out->p90_ape_pct, "p90_ape_pct", id));
    TRY(db_column_real(db, st, 8, false, &out->log_resid_sd, "log_resid_sd", id));
    TRY(db_column_text(db, st, 9, out->source_gpu, sizeof(out->source_gpu), "source_gpu"));
    TRY(db_column_text(db, st, 10, out->tilecast_version, sizeof(out->tilecast_version),
                       "tilecast_version"));
    TRY(db_column_text(db, st, 11, out->created_at, sizeof(out->created_at), "created_at"));
#undef TRY
    if (out->params_json[0] != '{') {
        err = tc_error(TC_ERR_SCHEMA, "%s: calibration %lld: params_json is not a JSON object",
                       db->path, (long long)id);
        goto out;
    }
    goto out;
bad : {
    char idtext[32];

    snprintf(idtext, sizeof(idtext), "%lld", (long long)id);
    db_row_error(db, err, "calibration", idtext);
}
out:
    sqlite3_finalize(st);
    return err;
}
