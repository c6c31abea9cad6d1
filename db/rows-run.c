/* Rows of table run: one collection or import, with its provenance. */
#include "config.h"

#include <string.h>

#include "db-internal.h"

static const char *const run_field_names[TC_DB_RUN_FIELDS] = {
    "host",    "device_name", "device_uuid", "driver_version",   "runtime_version", "blas_version",
    "backend", "sweep_name",  "sweep_hash",  "config_hash",      "shard",           "timing",
    "source",  "licence",     "clocks_json", "tilecast_version", "started_at",      "ended_at",
};

TC_API const char *tc_db_run_field_name(int i)
{
    if (i < 0 || i >= TC_DB_RUN_FIELDS)
        return "?";
    return run_field_names[i];
}

static bool valid_text(const char *s, size_t max)
{
    return !s || strnlen(s, max + 1) <= max;
}

TC_API int tc_db_add_run(struct tc_db *db, const struct tc_run_info *info, int64_t *run_id)
{
    const char *fields[] = {
        info ? info->host : NULL,
        info ? info->device_name : NULL,
        info ? info->device_uuid : NULL,
        info ? info->driver_version : NULL,
        info ? info->runtime_version : NULL,
        info ? info->blas_version : NULL,
        info ? info->backend : NULL,
        info ? info->sweep_name : NULL,
        info ? info->sweep_hash : NULL,
        info ? info->config_hash : NULL,
        info ? info->shard : NULL,
        info ? info->timing : NULL,
        info ? info->source : NULL,
        info ? info->licence : NULL,
        info ? info->clocks_json : NULL,
        info ? info->tilecast_version : NULL,
        info ? info->started_at : NULL,
        info ? info->ended_at : NULL,
    };
    sqlite3_stmt *st;
    bool found;
    int err, rc;

    if (!db || !info || !run_id)
        return tc_error(TC_ERR_INVALID, "tc_db_add_run: missing argument");
    if (!info->gpu_id || !*info->gpu_id)
        return tc_error(TC_ERR_INVALID, "%s: a run needs a GPU id", db->path);
    if (!info->kind ||
        (strcmp(info->kind, "collected") != 0 && strcmp(info->kind, "imported") != 0))
        return tc_error(TC_ERR_INVALID, "%s: run kind '%s' (expected collected or imported)",
                        db->path, info->kind ? info->kind : "(none)");
    for (size_t i = 0; i < TC_ARRAY_SIZE(fields); i++)
        if (!valid_text(fields[i], 1 << 16))
            return tc_error(TC_ERR_RANGE, "%s: run provenance field %s longer than 64 KiB",
                            db->path, tc_db_run_field_name((int)i));
    err = db_has_gpu(db, info->gpu_id, &found);
    if (err < 0)
        return err;
    if (!found)
        return tc_error(TC_ERR_NOT_FOUND,
                        "%s: GPU '%s' has no spec snapshot in the database "
                        "(store it with tc_db_put_gpu first)",
                        db->path, info->gpu_id);
    err = db_stmt(db, DB_ST_ADD_RUN, &st);
    if (err < 0)
        return err;
    sqlite3_bind_text(st, 1, info->gpu_id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, info->kind, -1, SQLITE_TRANSIENT);
    for (size_t i = 0; i < TC_ARRAY_SIZE(fields); i++)
        db_bind_text(st, (int)i + 3, fields[i]);
    if (!info->tilecast_version)
        sqlite3_bind_text(st, 18, tc_version(), -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return db_fail(db, rc, "recording a run");
    *run_id = sqlite3_last_insert_rowid(db->sql);
    return TC_OK;
}

TC_API int tc_db_find_run(struct tc_db *db, const char *gpu_id, const char *config_hash,
                          int64_t *run_id)
{
    sqlite3_stmt *st;
    int err, rc;

    if (!db || !gpu_id || !config_hash || !run_id)
        return tc_error(TC_ERR_INVALID, "tc_db_find_run: missing argument");
    err = db_stmt(db, DB_ST_FIND_RUN, &st);
    if (err < 0)
        return err;
    sqlite3_bind_text(st, 1, gpu_id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, config_hash, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *run_id = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        return TC_OK;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return db_fail(db, rc, "finding a run");
    return tc_error(TC_ERR_NOT_FOUND, "%s: no run of %s with configuration %s", db->path, gpu_id,
                    config_hash);
}

TC_API int tc_db_end_run(struct tc_db *db, int64_t run_id, const char *ended_at)
{
    sqlite3_stmt *st;
    char now[32];
    int err, rc;

    if (!db)
        return tc_error(TC_ERR_INVALID, "tc_db_end_run: no database");
    if (!ended_at) {
        db_now_iso(now, sizeof(now));
        ended_at = now;
    }
    err = db_stmt(db, DB_ST_END_RUN, &st);
    if (err < 0)
        return err;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, ended_at, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return db_fail(db, rc, "ending a run");
    if (sqlite3_changes(db->sql) == 0)
        return tc_error(TC_ERR_NOT_FOUND, "%s: no run %lld", db->path, (long long)run_id);
    return TC_OK;
}
