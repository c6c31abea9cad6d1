/* `tilecast db merge OUT IN...`: joins shard files (or any tilecast
 * databases) into one.
 *
 * The inputs are first merged into a temporary file beside OUT, and that
 * is verified with tc_db_integrity_check. A new OUT is then linked into
 * place (never over a file another process made meanwhile). An existing
 * OUT is never replaced: another process may have it open (a collector
 * writing it, another merge), and a file renamed over it would leave that
 * process writing to a file no name reaches, its write-ahead log applied
 * to the wrong file. The temporary file is merged into OUT instead, in one
 * transaction under OUT's own write lock (SQLite's, which the collector
 * takes too), verified again before the commit: a failed merge leaves OUT
 * as it was, and two merges or a merge and a collector take turns. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db-internal.h"

/* Two runs are the same run when their provenance matches; the end time
 * and clocks (updated as a run goes on) do not count. An imported run's
 * start time and tilecast version are those of the import, not of the
 * measurement, so they do not count either. */
static const char same_run_sql[] =
    "SELECT m.id FROM main.run m, src.run s WHERE s.id = ?1"
    " AND m.gpu_id IS s.gpu_id AND m.kind IS s.kind AND m.host IS s.host"
    " AND m.device_name IS s.device_name AND m.device_uuid IS s.device_uuid"
    " AND m.driver_version IS s.driver_version AND m.runtime_version IS s.runtime_version"
    " AND m.blas_version IS s.blas_version AND m.backend IS s.backend"
    " AND m.sweep_name IS s.sweep_name AND m.sweep_hash IS s.sweep_hash"
    " AND m.config_hash IS s.config_hash AND m.shard IS s.shard AND m.timing IS s.timing"
    " AND m.source IS s.source AND m.licence IS s.licence"
    " AND (s.kind = 'imported' OR (m.started_at IS s.started_at"
    "      AND m.tilecast_version IS s.tilecast_version))"
    " ORDER BY m.id LIMIT 1";

#define RUN_COLUMNS                                                                                \
    "gpu_id, kind, host, device_name, device_uuid, driver_version, runtime_version,"               \
    " blas_version, backend, sweep_name, sweep_hash, config_hash, shard, timing, source,"          \
    " licence, clocks_json, tilecast_version, started_at, ended_at"

#define GEMM_COPY_COLUMNS                                                                          \
    "op, dtype, dtype_c, compute, layout, m, n, k, batch, time_us, min_us, spread_pct, reps,"      \
    " tile_m, tile_n, tile_k, stages, split_k, cluster_m, cluster_n, swizzle, algo, status,"       \
    " message"

#define ATTN_COPY_COLUMNS                                                                          \
    "impl, dtype, batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal, backward,"              \
    " time_us, min_us, spread_pct, reps, scores_us, softmax_us, values_us, status, message"
/* the columns schemas v2 and v4 added, and what a v1 (v1-v3) input's rows
 * mean by them */
#define ATTN_V2_COLUMNS "head_dim_vo, sliding_window, deterministic"
#define ATTN_V1_VALUES "head_dim, 0, 0"
#define ATTN_V4_COLUMNS "page_size, kv_dtype"
#define ATTN_V3_VALUES "0, dtype"

static int step_done(struct tc_db *db, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);

    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return db_fail(db, rc, what);
    return TC_OK;
}

static int64_t count_of(struct tc_db *db, const char *sql, int *err)
{
    sqlite3_stmt *st = NULL;
    int64_t n = 0;
    int rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    else
        *err = db_fail(db, rc, "counting rows");
    sqlite3_finalize(st);
    return n;
}

static int merge_runs(struct tc_db *db, struct tc_merge_stats *stats)
{
    sqlite3_stmt *list = NULL, *same = NULL, *copy = NULL, *map = NULL, *end = NULL;
    int err = TC_OK, rc;

    rc = sqlite3_prepare_v2(db->sql, "SELECT id FROM src.run ORDER BY id", -1, &list, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db->sql, same_run_sql, -1, &same, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db->sql,
                                "INSERT INTO main.run (" RUN_COLUMNS ") SELECT " RUN_COLUMNS
                                " FROM src.run WHERE id = ?1",
                                -1, &copy, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db->sql,
                                "INSERT INTO temp.merge_map (src_id, dst_id) "
                                "VALUES (?1, ?2)",
                                -1, &map, NULL);
    /* a joined run ends when the later of its copies ended */
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db->sql,
                                "UPDATE main.run SET ended_at = (SELECT s.ended_at FROM "
                                "src.run s WHERE s.id = ?2) WHERE id = ?1 AND (ended_at IS "
                                "NULL OR ended_at < (SELECT s.ended_at FROM src.run s WHERE "
                                "s.id = ?2))",
                                -1, &end, NULL);
    if (rc != SQLITE_OK) {
        err = db_fail(db, rc, "merging runs");
        goto out;
    }
    while ((rc = sqlite3_step(list)) == SQLITE_ROW) {
        int64_t src_id = sqlite3_column_int64(list, 0), dst_id;

        sqlite3_reset(same);
        sqlite3_bind_int64(same, 1, src_id);
        rc = sqlite3_step(same);
        if (rc == SQLITE_ROW) {
            dst_id = sqlite3_column_int64(same, 0);
            sqlite3_reset(end);
            sqlite3_bind_int64(end, 1, dst_id);
            sqlite3_bind_int64(end, 2, src_id);
            if ((err = step_done(db, end, "merging runs")) < 0)
                goto out;
            stats->runs_joined++;
        } else if (rc == SQLITE_DONE) {
            sqlite3_reset(copy);
            sqlite3_bind_int64(copy, 1, src_id);
            if ((err = step_done(db, copy, "copying a run")) < 0)
                goto out;
            dst_id = sqlite3_last_insert_rowid(db->sql);
            stats->runs_added++;
        } else {
            err = db_fail(db, rc, "matching runs");
            goto out;
        }
        sqlite3_reset(map);
        sqlite3_bind_int64(map, 1, src_id);
        sqlite3_bind_int64(map, 2, dst_id);
        if ((err = step_done(db, map, "mapping runs")) < 0)
            goto out;
    }
    if (rc != SQLITE_DONE)
        err = db_fail(db, rc, "listing runs");
out:
    sqlite3_finalize(list);
    sqlite3_finalize(same);
    sqlite3_finalize(copy);
    sqlite3_finalize(map);
    sqlite3_finalize(end);
    return err;
}

/* Merges input into db in one transaction; with verify, db passes
 * tc_db_integrity_check before the commit, or nothing is committed. */
static int merge_one(struct tc_db *db, const char *input, struct tc_merge_stats *stats, bool verify)
{
    sqlite3_stmt *st = NULL;
    char *uri = db_file_uri(input, "mode=ro");
    int64_t total, before, src_version;
    int err, rc;

    if (!uri)
        return TC_ERR_NOMEM;
    rc = sqlite3_prepare_v2(db->sql, "ATTACH DATABASE ?1 AS src", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, uri, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    free(uri);
    if (rc != SQLITE_DONE)
        return tc_error_prefix(db_fail(db, rc, "attaching"), "%s", input);

    err = tc_db_begin(db);
    if (err < 0)
        goto detach;
    err = db_exec(db, "DELETE FROM temp.merge_map;"
                      "INSERT INTO main.gpu SELECT * FROM src.gpu WHERE true"
                      " ON CONFLICT (id) DO NOTHING");
    if (err == TC_OK)
        err = merge_runs(db, stats);
    if (err < 0)
        goto rollback;

    total = count_of(db, "SELECT count(*) FROM src.gemm", &err);
    before = count_of(db, "SELECT count(*) FROM main.gemm", &err);
    if (err == TC_OK)
        err = db_exec(db, "INSERT INTO main.gemm (run_id, " GEMM_COPY_COLUMNS ")"
                          " SELECT mm.dst_id, " GEMM_COPY_COLUMNS " FROM src.gemm g"
                          " JOIN temp.merge_map mm ON mm.src_id = g.run_id WHERE true"
                          " ORDER BY g.id ON CONFLICT DO NOTHING");
    if (err == TC_OK) {
        int64_t added = count_of(db, "SELECT count(*) FROM main.gemm", &err) - before;

        stats->gemm_added += added;
        stats->gemm_duplicates += total - added;
    }
    total = count_of(db, "SELECT count(*) FROM src.attention", &err);
    before = count_of(db, "SELECT count(*) FROM main.attention", &err);
    /* an input opened read-only keeps its schema: a v1 file has no v2 columns */
    src_version = count_of(db, "PRAGMA src.user_version", &err);
    if (err == TC_OK)
        err = db_exec(
            db, src_version < 2 ? "INSERT INTO main.attention (run_id, " ATTN_COPY_COLUMNS
                                  ", " ATTN_V2_COLUMNS ", " ATTN_V4_COLUMNS
                                  ") SELECT mm.dst_id, " ATTN_COPY_COLUMNS ", " ATTN_V1_VALUES
                                  ", " ATTN_V3_VALUES " FROM src.attention a"
                                  " JOIN temp.merge_map mm ON mm.src_id = a.run_id WHERE true"
                                  " ORDER BY a.id ON CONFLICT DO NOTHING"
                : src_version < 4
                    ? "INSERT INTO main.attention (run_id, " ATTN_COPY_COLUMNS ", " ATTN_V2_COLUMNS
                      ", " ATTN_V4_COLUMNS ") SELECT mm.dst_id, " ATTN_COPY_COLUMNS
                      ", " ATTN_V2_COLUMNS ", " ATTN_V3_VALUES " FROM src.attention a"
                      " JOIN temp.merge_map mm ON mm.src_id = a.run_id WHERE true"
                      " ORDER BY a.id ON CONFLICT DO NOTHING"
                    : "INSERT INTO main.attention (run_id, " ATTN_COPY_COLUMNS ", " ATTN_V2_COLUMNS
                      ", " ATTN_V4_COLUMNS ") SELECT mm.dst_id, " ATTN_COPY_COLUMNS
                      ", " ATTN_V2_COLUMNS ", " ATTN_V4_COLUMNS " FROM src.attention a"
                      " JOIN temp.merge_map mm ON mm.src_id = a.run_id WHERE true"
                      " ORDER BY a.id ON CONFLICT DO NOTHING");
    if (err == TC_OK) {
        int64_t added = count_of(db, "SELECT count(*) FROM main.attention", &err) - before;

        stats->attention_added += added;
        stats->attention_duplicates += total - added;
    }
    before = count_of(db, "SELECT count(*) FROM main.calibration", &err);
    if (err == TC_OK)
        err = db_exec(db,
                      "INSERT INTO main.calibration (gpu_id, dtype, layout, model_version,"
                      " params_json, n_rows, median_ape_pct, p90_ape_pct, log_resid_sd, source_gpu,"
                      " tilecast_version, created_at) SELECT gpu_id, dtype, layout, model_version,"
                      " params_json, n_rows, median_ape_pct, p90_ape_pct, log_resid_sd, source_gpu,"
                      " tilecast_version, created_at FROM src.calibration c WHERE NOT EXISTS"
                      " (SELECT 1 FROM main.calibration d WHERE d.gpu_id IS c.gpu_id AND d.dtype IS"
                      " c.dtype AND d.layout IS c.layout AND d.model_version IS c.model_version AND"
                      " d.params_json IS c.params_json AND d.source_gpu IS c.source_gpu AND"
                      " d.created_at IS c.created_at) ORDER BY c.id");
    if (err == TC_OK)
        stats->calibrations_added +=
            count_of(db, "SELECT count(*) FROM main.calibration", &err) - before;
    if (err == TC_OK && verify) {
        err = tc_db_integrity_check(db);
        if (err < 0)
            tc_error_prefix(err, "the merged database fails its check");
    }
    if (err < 0)
        goto rollback;
    err = tc_db_commit(db);
    if (err < 0)
        goto rollback;
    goto detach;

rollback:
    tc_error_prefix(err, "merging %s", input);
    if (db->in_tx) {
        char saved[2048];

        tc_strlcpy(saved, tc_last_error(), sizeof(saved));
        tc_db_rollback(db);
        tc_error(err, "%s", saved);
    }
detach:
    sqlite3_exec(db->sql, "DETACH DATABASE src", NULL, NULL, NULL);
    return err;
}

/* How long a merge into an existing OUT waits for its write lock, ms. */
#define MERGE_BUSY_MS 60000

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

TC_API int tc_db_merge(const char *out, size_t n_inputs, const char *const *inputs,
                       struct tc_merge_stats *stats)
{
    struct tc_merge_stats local = {0};
    struct tc_db *db = NULL;
    struct stat out_sb, in_sb;
    bool out_exists;
    char *tmp = NULL;
    size_t len;
    int err = TC_OK;

    if (!out || !*out || !n_inputs || !inputs)
        return tc_error(TC_ERR_INVALID, "tc_db_merge: an output and at least one input are "
                                        "needed");
    /* what a merge killed before it finished left (SIGKILL cannot be
     * caught): nothing else removes it */
    tc_remove_stale_temps(out, "merge");
    out_exists = stat(out, &out_sb) == 0;
    /* An OUT this user may not write is refused before anything is opened:
     * SQLite would open it read-only, fail at the first write, and leave a
     * -wal and -shm of this user's beside another user's file. */
    if (out_exists && access(out, W_OK) != 0)
        return tc_error(TC_ERR_IO,
                        "%s: not writable by this user (mode %04o, owner uid %ld): "
                        "nothing was merged",
                        out, (unsigned)(out_sb.st_mode & 07777), (long)out_sb.st_uid);
    for (size_t i = 0; i < n_inputs; i++) {
        if (!inputs[i] || stat(inputs[i], &in_sb) != 0)
            return tc_error(TC_ERR_IO, "%s: %s", inputs[i] ? inputs[i] : "(null)", strerror(errno));
        if (out_exists && same_file(&out_sb, &in_sb))
            return tc_error(TC_ERR_INVALID,
                            "%s: the output is also input %zu: merge into a "
                            "new file",
                            out, i + 1);
    }
    /* every input must open as a valid tilecast database on its own; the
     * validation leaves refused files untouched */
    for (size_t i = 0; i < n_inputs; i++) {
        struct tc_db *in;

        err = tc_db_open(inputs[i], TC_DB_READONLY, &in);
        if (err < 0)
            return err;
        tc_db_close(in);
    }

    len = strlen(out) + 320;
    tmp = malloc(len);
    if (!tmp)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    if ((err = tc_temp_path(out, "merge", tmp, len)) < 0) {
        free(tmp);
        return err;
    }
    /* one of this PID's, left by an earlier process that had it */
    tc_remove_db_files(tmp);

    /* 1. the inputs alone, into the temporary file, verified */
    err = tc_db_open(tmp, TC_DB_CREATE, &db);
    if (err < 0)
        goto fail;
    err = db_exec(db, "CREATE TEMP TABLE merge_map (src_id INTEGER PRIMARY KEY, dst_id "
                      "INTEGER NOT NULL)");
    for (size_t i = 0; i < n_inputs && err == TC_OK; i++)
        err = merge_one(db, inputs[i], &local, false);
    if (err == TC_OK) {
        err = tc_db_integrity_check(db);
        if (err < 0)
            tc_error_prefix(err, "the merged database fails its check");
    }
    if (err < 0)
        goto fail;
    /* closing the last connection checkpoints the log into the file */
    tc_db_close(db);
    db = NULL;

    /* 2a. a new OUT: the file itself, linked into place; link() never
     * replaces an OUT another process created meanwhile */
    if (!out_exists) {
        if (link(tmp, out) == 0) {
            tc_remove_db_files(tmp);
            free(tmp);
            if (stats)
                *stats = local;
            return TC_OK;
        }
        if (errno != EEXIST) {
            err = tc_error(TC_ERR_IO, "%s: cannot create: %s", out, strerror(errno));
            goto fail;
        }
    }

    /* 2b. an existing OUT: merged into in place, in one transaction */
    {
        struct tc_merge_stats into = {0};

        err = tc_db_open(out, TC_DB_READWRITE, &db);
        if (err < 0)
            goto fail;
        /* wait for the write lock as long as a collector's commit or
         * another merge may reasonably hold it */
        sqlite3_busy_timeout(db->sql, MERGE_BUSY_MS);
        err = db_exec(db, "CREATE TEMP TABLE merge_map (src_id INTEGER PRIMARY KEY, dst_id "
                          "INTEGER NOT NULL)");
        if (err == TC_OK)
            err = merge_one(db, tmp, &into, true);
        if (err < 0) {
            if (strstr(tc_last_error(), "locked") || strstr(tc_last_error(), "busy"))
                tc_error_prefix(err,
                                "%s is in use by another process for longer than %d s "
                                "(nothing was merged; try again)",
                                out, MERGE_BUSY_MS / 1000);
            goto fail;
        }
        /* runs and rows joined or dropped among the inputs count as well;
         * what was added is what OUT gained */
        into.runs_joined += local.runs_joined;
        into.gemm_duplicates += local.gemm_duplicates;
        into.attention_duplicates += local.attention_duplicates;
        local = into;
    }
    tc_db_close(db);
    tc_remove_db_files(tmp);
    free(tmp);
    if (stats)
        *stats = local;
    return TC_OK;

fail:
    tc_db_close(db);
    if (tmp)
        tc_remove_db_files(tmp);
    free(tmp);
    return err;
}
