/* Export (CSV in the shared measured-data format, JSON) and the summary
 * behind `tilecast db info`. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db-internal.h"

/* Same columns as the shared measured CSVs first, so export -> import
 * round-trips; then what a tilecast row adds. */
static const char *const csv_columns[] = {
    "gpu",    "dtype",      "op",     "batch",  "m",      "n",       "k",
    "layout", "time_us",    "tflops", "timing", "source", "dtype_c", "compute",
    "min_us", "spread_pct", "reps",   "algo",   "kind",   "licence", "flag",
};

static const char export_sql[] =
    "SELECT r.gpu_id, g.dtype, g.op, g.batch, g.m, g.n, g.k, g.layout, g.time_us,"
    " r.timing, r.source, g.dtype_c, g.compute, g.min_us, g.spread_pct, g.reps, g.algo,"
    " r.kind, r.licence, r.id, r.host"
    " FROM run r JOIN gemm g ON g.run_id = r.id"
    " WHERE g.status = 'ok' AND (?1 IS NULL OR r.gpu_id = ?1)"
    " ORDER BY r.gpu_id, r.id, g.id";

static void csv_field(FILE *out, const char *s, bool last)
{
    if (s && strpbrk(s, ",\"\r\n")) {
        fputc('"', out);
        for (const char *p = s; *p; p++) {
            if (*p == '"')
                fputc('"', out);
            fputc(*p, out);
        }
        fputc('"', out);
    } else if (s) {
        fputs(s, out);
    }
    fputc(last ? '\n' : ',', out);
}

/* The shortest decimal text that reads back as the same double. */
static void format_real(char *buf, size_t len, double v)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static const char *col_text(sqlite3_stmt *st, int c)
{
    return (const char *)sqlite3_column_text(st, c);
}

static int export_csv(struct tc_db *db, sqlite3_stmt *st, FILE *out, int64_t *rows)
{
    char num[64], source[256];
    int rc;

    for (size_t i = 0; i < TC_ARRAY_SIZE(csv_columns); i++)
        csv_field(out, csv_columns[i], i + 1 == TC_ARRAY_SIZE(csv_columns));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        double time_us = sqlite3_column_double(st, 8);
        double flops = 2.0 * sqlite3_column_double(st, 3) * sqlite3_column_double(st, 4) *
                       sqlite3_column_double(st, 5) * sqlite3_column_double(st, 6);

        if (!(time_us > 0.0) || !isfinite(time_us))
            return tc_error(TC_ERR_SCHEMA, "%s: run %lld holds an ok row without a time", db->path,
                            (long long)sqlite3_column_int64(st, 19));
        csv_field(out, col_text(st, 0), false);
        csv_field(out, col_text(st, 1), false);
        csv_field(out, col_text(st, 2), false);
        for (int c = 3; c <= 6; c++)
            csv_field(out, col_text(st, c), false);
        csv_field(out, col_text(st, 7), false);
        format_real(num, sizeof(num), time_us);
        csv_field(out, num, false);
        snprintf(num, sizeof(num), "%.6g", flops / (time_us * 1e6));
        csv_field(out, num, false);
        csv_field(out, col_text(st, 9), false);
        if (col_text(st, 10)) {
            csv_field(out, col_text(st, 10), false);
        } else {
            /* collected runs have no external source: name the run */
            snprintf(source, sizeof(source), "tilecast:run %lld%s%s",
                     (long long)sqlite3_column_int64(st, 19), col_text(st, 20) ? " on " : "",
                     col_text(st, 20) ? col_text(st, 20) : "");
            csv_field(out, source, false);
        }
        csv_field(out, col_text(st, 11), false);
        csv_field(out, col_text(st, 12), false);
        for (int c = 13; c <= 14; c++) {
            if (sqlite3_column_type(st, c) == SQLITE_NULL) {
                csv_field(out, "", false);
            } else {
                format_real(num, sizeof(num), sqlite3_column_double(st, c));
                csv_field(out, num, false);
            }
        }
        csv_field(out, col_text(st, 15), false);
        csv_field(out, col_text(st, 16), false);
        csv_field(out, col_text(st, 17), false);
        csv_field(out, col_text(st, 18), false);
        csv_field(out, "", true);
        ++*rows;
    }
    if (rc != SQLITE_DONE)
        return db_fail(db, rc, "exporting GEMM rows");
    return TC_OK;
}

/* Writes JSON text s with each byte that is not UTF-8 replaced by U+FFFD:
 * SQLite's json_object copies a field's bytes as they are, and an
 * imported source may hold any (JSON must be UTF-8). Such bytes can only
 * be inside strings, where U+FFFD is a character like any other. */
static void put_utf8(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "null");

    while (*p) {
        size_t n = tc_utf8_len(p);

        if (n == 0) {
            fputs("\xef\xbf\xbd", out);
            p++;
        } else {
            fwrite(p, 1, n, out);
            p += n;
        }
    }
}

/* JSON values are produced by SQLite's json_object, which does the
 * escaping; this code only writes the constant keys and separators. */
static int json_section(struct tc_db *db, FILE *out, const char *key, const char *sql,
                        const char *gpu_id, int64_t *rows, bool last)
{
    sqlite3_stmt *st = NULL;
    bool first = true;
    int rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);

    if (rc != SQLITE_OK)
        return db_fail(db, rc, "exporting JSON");
    db_bind_text(st, 1, gpu_id);
    fprintf(out, "  \"%s\": [", key);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        fprintf(out, "%s\n    ", first ? "" : ",");
        put_utf8(out, col_text(st, 0));
        first = false;
        if (rows)
            ++*rows;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(db, rc, "exporting JSON");
    fprintf(out, "%s]%s\n", first ? "" : "\n  ", last ? "" : ",");
    return TC_OK;
}

/* The attention rows as JSON objects, given the columns schema v2 added or
 * what a v1 file (read as it is) means by them. */
#define ATTN_JSON(hd_vo, window, det, page, kv)                                                    \
    "SELECT json_object('run', a.run_id, 'gpu', r.gpu_id, 'impl', a.impl, 'dtype',"                \
    " a.dtype, 'batch', a.batch, 'heads', a.heads, 'kv_heads', a.kv_heads, 'seq_q',"               \
    " a.seq_q, 'seq_kv', a.seq_kv, 'head_dim', a.head_dim, 'head_dim_vo', " hd_vo ","              \
    " 'window', " window ", 'page_size', " page ", 'kv_dtype', " kv ", 'causal',"                  \
    " json(CASE a.causal WHEN 1 THEN 'true' ELSE 'false' END), 'backward',"                        \
    " json(CASE a.backward WHEN 1 THEN 'true' ELSE 'false' END), 'deterministic',"                 \
    " json(CASE " det " WHEN 1 THEN 'true' ELSE 'false' END), 'time_us',"                          \
    " a.time_us, 'min_us', a.min_us, 'spread_pct', a.spread_pct, 'reps', a.reps,"                  \
    " 'scores_us', a.scores_us, 'softmax_us', a.softmax_us, 'values_us', a.values_us)"             \
    " FROM run r JOIN attention a ON a.run_id = r.id WHERE a.status = 'ok'"                        \
    " AND (?1 IS NULL OR r.gpu_id = ?1) ORDER BY r.gpu_id, r.id, a.id"

static int export_json(struct tc_db *db, const char *gpu_id, FILE *out, int64_t *rows)
{
    int err;

    fprintf(out, "{\n  \"schema_version\": %d,\n  \"tilecast_version\": \"%s\",\n",
            db->schema_version, tc_version());
    err = json_section(db, out, "gpus",
                       /* json(): a snapshot's text that is not JSON fails the
                        * export rather than breaking the document */
                       "SELECT json(spec_json) FROM gpu WHERE ?1 IS NULL OR id = ?1 ORDER BY id",
                       gpu_id, NULL, false);
    if (err == TC_OK)
        err = json_section(
            db, out, "runs",
            "SELECT json_object('id', id, 'gpu', gpu_id, 'kind', kind, 'host', host,"
            " 'device_name', device_name, 'device_uuid', device_uuid, 'driver_version',"
            " driver_version, 'runtime_version', runtime_version, 'blas_version',"
            " blas_version, 'backend', backend, 'sweep_name', sweep_name, 'sweep_hash',"
            " sweep_hash, 'config_hash', config_hash, 'shard', shard, 'timing', timing,"
            " 'source', source, 'licence', licence, 'clocks_json', clocks_json,"
            " 'tilecast_version', tilecast_version, 'started_at', started_at, 'ended_at',"
            " ended_at) FROM run WHERE ?1 IS NULL OR gpu_id = ?1 ORDER BY id",
            gpu_id, NULL, false);
    if (err == TC_OK)
        err = json_section(
            db, out, "gemm",
            "SELECT json_object('run', g.run_id, 'gpu', r.gpu_id, 'op', g.op, 'dtype',"
            " g.dtype, 'dtype_c', g.dtype_c, 'compute', g.compute, 'layout', g.layout, 'm',"
            " g.m, 'n', g.n, 'k', g.k, 'batch', g.batch, 'time_us', g.time_us, 'tflops',"
            " 2.0 * g.m * g.n * g.k * g.batch / (g.time_us * 1e6), 'min_us', g.min_us,"
            " 'spread_pct', g.spread_pct, 'reps', g.reps, 'tile_m', g.tile_m, 'tile_n',"
            " g.tile_n, 'tile_k', g.tile_k, 'stages', g.stages, 'split_k', g.split_k,"
            " 'cluster_m', g.cluster_m, 'cluster_n', g.cluster_n, 'swizzle', g.swizzle,"
            " 'algo', g.algo) FROM run r JOIN gemm g ON g.run_id = r.id"
            " WHERE g.status = 'ok' AND g.time_us > 0 AND (?1 IS NULL OR r.gpu_id = ?1)"
            " ORDER BY r.gpu_id, r.id, g.id",
            gpu_id, rows, false);
    if (err == TC_OK)
        err = json_section(
            db, out, "attention",
            db->schema_version < 2 ? ATTN_JSON("a.head_dim", "0", "0", "0", "a.dtype")
            : db->schema_version < 4
                ? ATTN_JSON("a.head_dim_vo", "a.sliding_window", "a.deterministic", "0", "a.dtype")
                : ATTN_JSON("a.head_dim_vo", "a.sliding_window", "a.deterministic", "a.page_size",
                            "a.kv_dtype"),
            gpu_id, rows, true);
    if (err == TC_OK)
        fputs("}\n", out);
    return err;
}

int tc_db_export_file(struct tc_db *db, const char *format, const char *gpu_id, FILE *out,
                      const char *name, int64_t *rows)
{
    sqlite3_stmt *st = NULL;
    int64_t count = 0;
    int err = TC_OK, rc;

    if (rows)
        *rows = 0;
    if (!db || !format || !out)
        return tc_error(TC_ERR_INVALID, "tc_db_export: missing argument");
    if (strcmp(format, "csv") != 0 && strcmp(format, "json") != 0)
        return tc_error(TC_ERR_INVALID, "unknown export format '%s' (expected csv or json)",
                        format);
    if (gpu_id) {
        bool found;

        err = db_has_gpu(db, gpu_id, &found);
        if (err < 0)
            return err;
        if (!found)
            return tc_error(TC_ERR_NOT_FOUND, "%s: no GPU '%s' in the database", db->path, gpu_id);
    }
    if (strcmp(format, "csv") == 0) {
        rc = sqlite3_prepare_v2(db->sql, export_sql, -1, &st, NULL);
        if (rc != SQLITE_OK) {
            err = db_fail(db, rc, "exporting");
            goto out;
        }
        db_bind_text(st, 1, gpu_id);
        err = export_csv(db, st, out, &count);
    } else {
        err = export_json(db, gpu_id, out, &count);
    }
    if (err == TC_OK && (fflush(out) != 0 || ferror(out)))
        err = tc_error(TC_ERR_IO, "%s: write error: %s", name ? name : "<output>", strerror(errno));
out:
    sqlite3_finalize(st);
    if (rows)
        *rows = count;
    return err;
}

TC_API int tc_db_export(struct tc_db *db, const char *format, const char *gpu_id, const char *path,
                        int64_t *rows)
{
    struct stat out_sb, db_sb;
    bool to_file = path && *path && strcmp(path, "-") != 0;
    FILE *out = stdout;
    int err;

    if (rows)
        *rows = 0;
    if (!db || !format)
        return tc_error(TC_ERR_INVALID, "tc_db_export: missing argument");
    /* opening the database's own file for writing would truncate it */
    if (to_file && stat(path, &out_sb) == 0 && stat(db->path, &db_sb) == 0 &&
        out_sb.st_dev == db_sb.st_dev && out_sb.st_ino == db_sb.st_ino)
        return tc_error(TC_ERR_INVALID, "%s: is the database being exported (%s)", path, db->path);
    if (to_file) {
        out = fopen(path, "w");
        if (!out)
            return tc_error(TC_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    }
    err = tc_db_export_file(db, format, gpu_id, out, to_file ? path : "<stdout>", rows);
    if (to_file && fclose(out) != 0 && err == TC_OK)
        err = tc_error(TC_ERR_IO, "%s: write error: %s", path, strerror(errno));
    if (err < 0 && to_file)
        remove(path);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Summary                                                                   */
/* ------------------------------------------------------------------------ */

TC_API void tc_db_info_free(struct tc_db_info *info)
{
    if (!info)
        return;
    for (size_t i = 0; i < info->n_runs; i++)
        for (int f = 0; f < TC_DB_RUN_FIELDS; f++)
            free(info->runs[i].fields[f]);
    free(info->gpus);
    free(info->runs);
    free(info->counts);
    free(info);
}

/* Runs sql and returns the number of rows it yields, so arrays can be
 * sized before filling. */
static int count_rows(struct tc_db *db, const char *sql, size_t *n)
{
    char buf[1024];
    sqlite3_stmt *st = NULL;
    int rc;

    snprintf(buf, sizeof(buf), "SELECT count(*) FROM (%s)", sql);
    rc = sqlite3_prepare_v2(db->sql, buf, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        return db_fail(db, rc, "summarising");
    }
    *n = (size_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return TC_OK;
}

static const char gpus_sql[] = "SELECT id, name, arch FROM gpu ORDER BY id";
static const char runs_sql[] =
    "SELECT id, gpu_id, kind, host, device_name, device_uuid, driver_version, runtime_version,"
    " blas_version, backend, sweep_name, sweep_hash, config_hash, shard, timing, source,"
    " licence, clocks_json, tilecast_version, started_at, ended_at,"
    " (SELECT count(*) FROM gemm WHERE run_id = r.id),"
    " (SELECT count(*) FROM attention WHERE run_id = r.id) FROM run r ORDER BY id";
static const char counts_sql[] =
    "SELECT r.gpu_id, 'gemm', r.kind, g.dtype, g.status, count(*) FROM run r"
    " JOIN gemm g ON g.run_id = r.id GROUP BY r.gpu_id, r.kind, g.dtype, g.status"
    " UNION ALL"
    " SELECT r.gpu_id, 'attention', r.kind, a.dtype, a.status, count(*) FROM run r"
    " JOIN attention a ON a.run_id = r.id GROUP BY r.gpu_id, r.kind, a.dtype, a.status"
    " ORDER BY 1, 2, 3, 4, 5";

static int meta_value(struct tc_db *db, const char *key, char *buf, size_t len)
{
    sqlite3_stmt *st = NULL;
    int err = TC_OK;
    int rc = sqlite3_prepare_v2(db->sql, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL);

    buf[0] = '\0';
    if (rc != SQLITE_OK)
        return db_fail(db, rc, "reading meta");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        err = db_column_text(db, st, 0, buf, len, key);
    else if (rc != SQLITE_DONE)
        err = db_fail(db, rc, "reading meta");
    sqlite3_finalize(st);
    return err;
}

TC_API int tc_db_info_get(struct tc_db *db, struct tc_db_info **out)
{
    struct tc_db_info *info;
    sqlite3_stmt *st = NULL;
    size_t n_gpus = 0, n_runs = 0, n_counts = 0, i;
    int err, rc;

    if (!db || !out)
        return tc_error(TC_ERR_INVALID, "tc_db_info_get: missing argument");
    *out = NULL;
    info = calloc(1, sizeof(*info));
    if (!info)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    info->schema_version = db->schema_version;
    err = meta_value(db, "writer_version", info->writer_version, sizeof(info->writer_version));
    if (err == TC_OK)
        err = meta_value(db, "created_at", info->created_at, sizeof(info->created_at));
    if (err == TC_OK)
        err = count_rows(db, gpus_sql, &n_gpus);
    if (err == TC_OK)
        err = count_rows(db, "SELECT id FROM run", &n_runs);
    if (err == TC_OK)
        err = count_rows(db, counts_sql, &n_counts);
    if (err == TC_OK)
        err = count_rows(db, "SELECT id FROM calibration", &info->n_calibrations);
    if (err < 0)
        goto fail;
    info->gpus = calloc(n_gpus + 1, sizeof(*info->gpus));
    info->runs = calloc(n_runs + 1, sizeof(*info->runs));
    info->counts = calloc(n_counts + 1, sizeof(*info->counts));
    if (!info->gpus || !info->runs || !info->counts) {
        err = tc_error(TC_ERR_NOMEM, "out of memory");
        goto fail;
    }

    rc = sqlite3_prepare_v2(db->sql, gpus_sql, -1, &st, NULL);
    for (i = 0; rc == SQLITE_OK && i < n_gpus && (rc = sqlite3_step(st)) == SQLITE_ROW; i++) {
        struct tc_db_info_gpu *g = &info->gpus[i];

        rc = SQLITE_OK;
        if ((err = db_column_text(db, st, 0, g->id, sizeof(g->id), "gpu id")) < 0 ||
            (err = db_column_text(db, st, 1, g->name, sizeof(g->name), "gpu name")) < 0 ||
            (err = db_column_text(db, st, 2, g->arch, sizeof(g->arch), "gpu arch")) < 0)
            goto fail;
        info->n_gpus++;
    }
    if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
        err = db_fail(db, rc, "listing GPUs");
        goto fail;
    }
    sqlite3_finalize(st);

    rc = sqlite3_prepare_v2(db->sql, runs_sql, -1, &st, NULL);
    for (i = 0; rc == SQLITE_OK && i < n_runs && (rc = sqlite3_step(st)) == SQLITE_ROW; i++) {
        struct tc_db_info_run *r = &info->runs[i];

        rc = SQLITE_OK;
        info->n_runs++;
        r->id = sqlite3_column_int64(st, 0);
        if ((err = db_column_text(db, st, 1, r->gpu_id, sizeof(r->gpu_id), "run gpu_id")) < 0 ||
            (err = db_column_text(db, st, 2, r->kind, sizeof(r->kind), "run kind")) < 0)
            goto fail;
        for (int f = 0; f < TC_DB_RUN_FIELDS; f++) {
            const char *s = col_text(st, 3 + f);

            r->fields[f] = tc_strdup(s ? s : "");
            if (!r->fields[f]) {
                err = TC_ERR_NOMEM;
                goto fail;
            }
        }
        r->gemm_rows = sqlite3_column_int64(st, 21);
        r->attention_rows = sqlite3_column_int64(st, 22);
    }
    if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
        err = db_fail(db, rc, "listing runs");
        goto fail;
    }
    sqlite3_finalize(st);

    rc = sqlite3_prepare_v2(db->sql, counts_sql, -1, &st, NULL);
    for (i = 0; rc == SQLITE_OK && i < n_counts && (rc = sqlite3_step(st)) == SQLITE_ROW; i++) {
        struct tc_db_info_count *c = &info->counts[i];

        rc = SQLITE_OK;
        if ((err = db_column_text(db, st, 0, c->gpu_id, sizeof(c->gpu_id), "gpu_id")) < 0 ||
            (err = db_column_text(db, st, 1, c->table, sizeof(c->table), "table")) < 0 ||
            (err = db_column_text(db, st, 2, c->kind, sizeof(c->kind), "kind")) < 0 ||
            (err = db_column_text(db, st, 3, c->dtype, sizeof(c->dtype), "dtype")) < 0 ||
            (err = db_column_text(db, st, 4, c->status, sizeof(c->status), "status")) < 0)
            goto fail;
        c->rows = sqlite3_column_int64(st, 5);
        info->n_counts++;
    }
    if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
        err = db_fail(db, rc, "counting rows");
        goto fail;
    }
    sqlite3_finalize(st);
    *out = info;
    return TC_OK;

fail:
    sqlite3_finalize(st);
    tc_db_info_free(info);
    return err;
}
