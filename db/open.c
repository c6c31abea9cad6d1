/* Opening a tilecast database safely (tc_db_open, tc_db_close), the
 * integrity checks of an open one (tilecast db check), transactions and
 * compaction. See DESIGN.md "The database" and db/prebuilt/README.md.
 *
 * A file is validated before SQLite ever opens it for writing: the header
 * is read by hand, then a connection that cannot write (read_mode) runs
 * quick_check and looks at the schema. Only a file that passes is opened
 * for real, so a refused file is never modified. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bounds.h"
#include "db-internal.h"

/* quick_check reads every page. Before a file is opened for writing it
 * runs up to 256 MiB. A read-only opening cannot damage the file and SQLite
 * reports corrupt pages as they are read (TC_ERR_SCHEMA), so there it runs
 * only on small files: opening a prebuilt database stays within a few ms.
 * tc_db_integrity_check (tilecast db check) always checks everything. */
#define QUICK_CHECK_MAX_BYTES (256LL << 20)
#define QUICK_CHECK_MAX_BYTES_READONLY (1LL << 20)

/* ------------------------------------------------------------------------ */
/* Opening                                                                   */
/* ------------------------------------------------------------------------ */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The application_id and user_version of a file: *version receives the
 * schema version of a tilecast database. */
static int check_stamps(const char *path, uint32_t app_id, int32_t user_version, int *version)
{
    if (app_id != TC_DB_APPLICATION_ID)
        return tc_error(TC_ERR_SCHEMA,
                        "%s: an SQLite database but not a tilecast one "
                        "(application_id 0x%08x, expected 0x%08x)",
                        path, app_id, TC_DB_APPLICATION_ID);
    if (user_version > TC_DB_SCHEMA_VERSION)
        return tc_error(TC_ERR_SCHEMA,
                        "%s: schema version %d is newer than this tilecast (%s) "
                        "understands (%d): use a newer tilecast",
                        path, user_version, tc_version(), TC_DB_SCHEMA_VERSION);
    if (user_version < 0)
        return tc_error(TC_ERR_SCHEMA, "%s: corrupt: negative schema version %d", path,
                        user_version);
    *version = user_version;
    return TC_OK;
}

/* Checks the 100-byte SQLite header by hand, so that a file which is not a
 * tilecast database is refused before SQLite touches it. *version receives
 * PRAGMA user_version, or -1 when the stamps are in a log beside the file
 * (validate reads them). */
static int check_header(const char *path, const struct stat *sb, bool wal, int *version,
                        bool *wal_mode)
{
    unsigned char h[100];
    FILE *f;
    size_t got;
    uint32_t page_size, pages;

    /* with a log beside it, the header that counts may be in the log: a
     * file being created or migrated in WAL mode has page 1 unstamped (or
     * not yet written) until a checkpoint; the validation reads the stamps
     * through SQLite */
    *wal_mode = wal;
    *version = -1;
    if (sb->st_size == 0 && wal)
        return TC_OK;
    if (sb->st_size == 0)
        return tc_error(TC_ERR_SCHEMA, "%s: empty file (0 bytes): not a tilecast database", path);
    f = fopen(path, "rb");
    if (!f)
        return tc_error(TC_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    got = fread(h, 1, sizeof(h), f);
    fclose(f);
    if (got < 16 || memcmp(h, "SQLite format 3", 16) != 0)
        return tc_error(TC_ERR_SCHEMA,
                        "%s: not an SQLite database (no SQLite header): not a tilecast database",
                        path);
    if (got < sizeof(h))
        return tc_error(TC_ERR_SCHEMA,
                        "%s: truncated: %zu bytes, shorter than the 100-byte "
                        "SQLite header",
                        path, got);
    page_size = (uint32_t)h[16] << 8 | h[17];
    if (page_size == 1)
        page_size = 65536;
    if (page_size < 512 || (page_size & (page_size - 1)) != 0)
        return tc_error(TC_ERR_SCHEMA, "%s: corrupt SQLite header (page size %u)", path, page_size);
    /* with a write-ahead log beside it (a writer was killed), the main file
     * may be mid-checkpoint: its size is checked once SQLite has read the log */
    if (!wal && (uint64_t)sb->st_size % page_size != 0)
        return tc_error(TC_ERR_SCHEMA,
                        "%s: truncated or damaged: %lld bytes is not a whole "
                        "number of %u-byte pages",
                        path, (long long)sb->st_size, page_size);
    pages = be32(h + 28);
    /* the in-header size is valid only when its version matches the change
     * counter (written by SQLite >= 3.7.0) */
    if (!wal && pages && be32(h + 92) == be32(h + 24) &&
        (uint64_t)pages * page_size > (uint64_t)sb->st_size)
        return tc_error(TC_ERR_SCHEMA,
                        "%s: truncated: the header says %u pages (%llu bytes) "
                        "but the file has %lld bytes",
                        path, pages, (unsigned long long)pages * page_size, (long long)sb->st_size);
    /* bytes 18/19, the write and read versions: 2 in WAL mode */
    *wal_mode = h[18] == 2 || h[19] == 2;
    if (wal && *wal_mode)
        return TC_OK;
    return check_stamps(path, be32(h + 68), (int32_t)be32(h + 60), version);
}

/* "file:" URI of path with the characters URIs reserve escaped. */
char *db_file_uri(const char *path, const char *query)
{
    size_t n = strlen(path), qn = strlen(query);
    char *uri = malloc(3 * n + qn + 16);
    char *o = uri;

    if (!uri) {
        tc_error(TC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    o += sprintf(o, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (*p == '%' || *p == '?' || *p == '#' || *p < 0x20 || *p >= 0x7f)
            o += sprintf(o, "%%%02X", *p);
        else
            *o++ = (char)*p;
    }
    sprintf(o, "?%s", query);
    return uri;
}

/* How a file is opened where nothing may be written to it: by the
 * validation, and for every read-only open. Another process may write the
 * file meanwhile (a collector, an import, a merge, a calibration), so the
 * connection takes SQLite's locks and reads the state last committed,
 * waiting (busy timeout) while a writer holds the file. An immutable one
 * (no locks, no -wal/-shm) reads the bytes as they are, pages that a writer
 * or a checkpoint is rewriting included, and SQLite then calls a sound file
 * malformed. So immutable is used only where no lock can be taken:
 * - a file on a read-only file system (installed data, a read-only mount):
 *   nothing can write it, and locks may not work there;
 * - a file in WAL mode without a -wal or -shm beside it that this user may
 *   not write (another user's, or in a directory this user may not write):
 *   SQLite needs both files for a WAL file's locks, and a -wal and -shm
 *   made here would be this user's, which the owner's own writer then
 *   cannot open. A writer that starts while such a file is read and
 *   checkpoints into it may still make the read fail.
 * A file in rollback mode (prebuilt and compacted ones) is read with its
 * locks: a read-only connection creates nothing beside it. A file in WAL
 * mode with a log beside it is read through the log (what its writer
 * committed; a writer killed before its checkpoint left it). One without a
 * log that this user may write, in a directory this user may write, is
 * opened read-write with query_only set: SQLite makes the -wal and -shm its
 * locks need, and the last connection to close removes them again (a
 * read-only connection would leave them behind). */
enum read_mode { READ_LOCKED, READ_LOCKED_RW, READ_IMMUTABLE };

static bool exists_beside(const char *path, const char *suffix, off_t *size)
{
    char *side = malloc(strlen(path) + strlen(suffix) + 1);
    struct stat sb;
    bool found;

    if (!side)
        return false;
    sprintf(side, "%s%s", path, suffix);
    found = stat(side, &sb) == 0;
    free(side);
    if (size)
        *size = found ? sb.st_size : 0;
    return found;
}

/* Whether this user may write path and create files beside it. */
static bool may_write_beside(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    bool ok;

    if (access(path, W_OK) != 0)
        return false;
    if (!slash)
        return access(".", W_OK | X_OK) == 0;
    dir = malloc((size_t)(slash - path) + 2);
    if (!dir)
        return false;
    /* "/x.db" is in "/" */
    memcpy(dir, path, slash == path ? 1 : (size_t)(slash - path));
    dir[slash == path ? 1 : slash - path] = '\0';
    ok = access(dir, W_OK | X_OK) == 0;
    free(dir);
    return ok;
}

static enum read_mode read_mode(const char *path, bool wal_mode, bool wal)
{
    struct statvfs vfs;

    if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
        return READ_IMMUTABLE;
    if (!wal_mode || wal)
        return READ_LOCKED;
    /* a read-write connection would play a rollback journal back into the
     * file, before it was validated */
    if (may_write_beside(path) && !exists_beside(path, "-journal", NULL))
        return READ_LOCKED_RW;
    /* a writer's -wal (empty before its first commit) and -shm: SQLite
     * opens them read-only and creates nothing */
    if (exists_beside(path, "-wal", NULL) || exists_beside(path, "-shm", NULL))
        return READ_LOCKED;
    return READ_IMMUTABLE;
}

/* Opens path as read_mode says, the connection unable to write. */
static int open_for_reading(const char *path, enum read_mode how, int extra_flags, sqlite3 **sql)
{
    char *uri = db_file_uri(path, how == READ_IMMUTABLE   ? "mode=ro&immutable=1"
                                  : how == READ_LOCKED_RW ? "mode=rw"
                                                          : "mode=ro");
    int rc;

    *sql = NULL;
    if (!uri)
        return SQLITE_NOMEM;
    rc = sqlite3_open_v2(uri, sql,
                         extra_flags | SQLITE_OPEN_URI |
                             (how == READ_LOCKED_RW ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY),
                         NULL);
    free(uri);
    if (rc != SQLITE_OK)
        return rc;
    /* another process writing the file (a collector, a merge) holds its
     * locks for moments: wait rather than call the file corrupt */
    sqlite3_busy_timeout(*sql, 10000);
    /* quick_check evaluates CHECK constraints on a writable connection
     * only: this one checks what a read-only one does (the values are
     * tilecast_checks' and the readers' to judge) */
    return sqlite3_exec(*sql,
                        how == READ_LOCKED_RW
                            ? "PRAGMA query_only = ON; PRAGMA ignore_check_constraints = ON"
                            : "PRAGMA query_only = ON",
                        NULL, NULL, NULL);
}

/* Opens path for reading (read_mode), runs quick_check and checks the
 * schema. */
static int validate(const char *path, const struct stat *sb, int *versionp, bool readonly,
                    enum read_mode how)
{
    sqlite3 *sql = NULL;
    sqlite3_stmt *st = NULL;
    int err = TC_OK, rc, version = *versionp;

    rc = open_for_reading(path, how, 0, &sql);
    if (rc != SQLITE_OK) {
        err = tc_error(TC_ERR_SCHEMA, "%s: cannot open as SQLite: %s", path,
                       sql ? sqlite3_errmsg(sql) : sqlite3_errstr(rc));
        goto out;
    }
    if (version < 0) {
        /* the stamps as committed, read through the log (check_header) */
        int64_t stamp[2] = {0, 0};
        static const char *const pragmas[2] = {"PRAGMA application_id", "PRAGMA user_version"};

        for (int i = 0; i < 2; i++) {
            rc = sqlite3_prepare_v2(sql, pragmas[i], -1, &st, NULL);
            if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
            if (rc != SQLITE_ROW) {
                err =
                    tc_error(TC_ERR_SCHEMA, "%s: corrupt database: %s", path, sqlite3_errmsg(sql));
                goto out;
            }
            stamp[i] = sqlite3_column_int64(st, 0);
            sqlite3_finalize(st);
            st = NULL;
        }
        err = check_stamps(path, (uint32_t)stamp[0], (int32_t)stamp[1], &version);
        if (err < 0)
            goto out;
        *versionp = version;
    }
    if (sb->st_size <= (readonly ? QUICK_CHECK_MAX_BYTES_READONLY : QUICK_CHECK_MAX_BYTES)) {
        rc = sqlite3_prepare_v2(sql, "PRAGMA quick_check(1)", -1, &st, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
            err = tc_error(TC_ERR_SCHEMA, "%s: corrupt database: %s", path, sqlite3_errmsg(sql));
            goto out;
        }
        if (strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0) {
            err = tc_error(TC_ERR_SCHEMA, "%s: corrupt database: quick_check: %s", path,
                           (const char *)sqlite3_column_text(st, 0));
            goto out;
        }
        sqlite3_finalize(st);
        st = NULL;
    }
    if (version >= 1) {
        for (size_t i = 0; i < db_v1_table_count; i++) {
            rc = sqlite3_prepare_v2(sql,
                                    "SELECT 1 FROM sqlite_schema WHERE type = 'table' "
                                    "AND name = ?1",
                                    -1, &st, NULL);
            if (rc != SQLITE_OK) {
                err =
                    tc_error(TC_ERR_SCHEMA, "%s: corrupt database: %s", path, sqlite3_errmsg(sql));
                goto out;
            }
            sqlite3_bind_text(st, 1, db_v1_tables[i], -1, SQLITE_STATIC);
            rc = sqlite3_step(st);
            sqlite3_finalize(st);
            st = NULL;
            if (rc != SQLITE_ROW) {
                err = tc_error(TC_ERR_SCHEMA,
                               "%s: not a valid tilecast database (schema v%d "
                               "without table '%s')",
                               path, version, db_v1_tables[i]);
                goto out;
            }
        }
        err = db_check_schema_objects(sql, path, version);
        if (err < 0)
            goto out;
        rc = sqlite3_prepare_v2(sql, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st,
                                NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc != SQLITE_ROW || sqlite3_column_type(st, 0) != SQLITE_TEXT ||
            atoi((const char *)sqlite3_column_text(st, 0)) != version) {
            err = tc_error(TC_ERR_SCHEMA,
                           "%s: not a valid tilecast database (meta."
                           "schema_version disagrees with the file's schema version %d)",
                           path, version);
            goto out;
        }
    } else {
        /* a v0 file is a stamped, empty file: any table means something else */
        rc = sqlite3_prepare_v2(sql, "SELECT name FROM sqlite_schema LIMIT 1", -1, &st, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            err = tc_error(TC_ERR_SCHEMA,
                           "%s: not a valid tilecast database (schema v0 with "
                           "table '%s')",
                           path, (const char *)sqlite3_column_text(st, 0));
            goto out;
        }
        if (rc != SQLITE_DONE) {
            err = tc_error(TC_ERR_SCHEMA, "%s: corrupt database: %s", path, sqlite3_errmsg(sql));
            goto out;
        }
    }
out:
    sqlite3_finalize(st);
    sqlite3_close(sql);
    return err;
}

static int configure(struct tc_db *db)
{
    int err;

    sqlite3_busy_timeout(db->sql, 10000);
    sqlite3_extended_result_codes(db->sql, 1);
    err = db_exec(db, "PRAGMA foreign_keys = ON");
    /* the shape index grows in key order, not insertion order: a larger
     * page cache keeps batched inserts from re-reading index pages */
    if (err == TC_OK)
        err = db_exec(db, "PRAGMA cache_size = -65536");
    if (err < 0)
        return err;
    if (db->mode == TC_DB_READONLY)
        return db_exec(db, "PRAGMA query_only = ON");
    /* WAL: readers never block the writer; NORMAL sync is crash-safe in WAL
     * (a power loss may lose the last commits, never corrupt the file) */
    err = db_exec(db, "PRAGMA journal_mode = WAL");
    if (err == TC_OK)
        err = db_exec(db, "PRAGMA synchronous = NORMAL");
    return err;
}

TC_API int tc_db_open(const char *path, enum tc_db_mode mode, struct tc_db **out)
{
    struct tc_db *db = NULL;
    struct stat sb;
    char *uri;
    bool created = false;
    int version = 0, err, rc, flags;
    bool wal = false, wal_mode = false;

    if (!out)
        return tc_error(TC_ERR_INVALID, "tc_db_open: no result pointer");
    *out = NULL;
    if (!path || !*path)
        return tc_error(TC_ERR_INVALID, "tc_db_open: no path given");
    if (mode != TC_DB_READONLY && mode != TC_DB_READWRITE && mode != TC_DB_CREATE)
        return tc_error(TC_ERR_INVALID, "tc_db_open: %s: invalid mode %d", path, (int)mode);
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT || mode != TC_DB_CREATE)
            return tc_error(errno == ENOENT ? TC_ERR_NOT_FOUND : TC_ERR_IO, "%s: %s", path,
                            strerror(errno));
        created = true;
    } else if (!S_ISREG(sb.st_mode)) {
        return tc_error(TC_ERR_INVALID, "%s: not a regular file", path);
    } else {
        off_t wal_size;

        wal = exists_beside(path, "-wal", &wal_size) && wal_size > 0;
        err = check_header(path, &sb, wal, &version, &wal_mode);
        if (err == TC_OK)
            err = validate(path, &sb, &version, mode == TC_DB_READONLY,
                           read_mode(path, wal_mode, wal));
        if (err < 0)
            return err;
        /* a read-only open reads an older schema as it is (the readers
         * know each version's columns); only a file without tables has
         * nothing to read until it is written once */
        if (mode == TC_DB_READONLY && version < 1)
            return tc_error(TC_ERR_SCHEMA,
                            "%s: schema version %d is older than %d: open it "
                            "for writing once to migrate (tilecast db migrate %s)",
                            path, version, TC_DB_SCHEMA_VERSION, path);
    }

    db = calloc(1, sizeof(*db));
    if (!db)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    err = TC_ERR_NOMEM;
    db->mode = mode;
    db->path = tc_strdup(path);
    if (!db->path)
        goto fail;
    if (mode == TC_DB_READONLY) {
        off_t wal_size;

        /* as the validation did, with what is beside the file now */
        wal = exists_beside(path, "-wal", &wal_size) && wal_size > 0;
        rc = open_for_reading(path, read_mode(path, wal_mode, wal), SQLITE_OPEN_NOMUTEX, &db->sql);
    } else {
        /* always a URI built from the path, so that no file name is ever
         * read as URI syntax and ATTACH of read-only URIs works (merge) */
        flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI | SQLITE_OPEN_READWRITE;
        if (created)
            flags |= SQLITE_OPEN_CREATE;
        uri = db_file_uri(path, created ? "mode=rwc" : "mode=rw");
        if (!uri)
            goto fail;
        rc = sqlite3_open_v2(uri, &db->sql, flags, NULL);
        free(uri);
    }
    if (rc != SQLITE_OK) {
        err = db_fail(db, rc, "opening");
        goto fail;
    }
    if ((err = configure(db)) < 0 || (err = db_read_user_version(db, &version)) < 0)
        goto fail;
    if (version > TC_DB_SCHEMA_VERSION) {
        err = tc_error(TC_ERR_SCHEMA,
                       "%s: schema version %d is newer than this tilecast "
                       "understands (%d)",
                       path, version, TC_DB_SCHEMA_VERSION);
        goto fail;
    }
    db->schema_version = version;
    if (mode != TC_DB_READONLY && version < TC_DB_SCHEMA_VERSION &&
        (err = db_migrate(db, version)) < 0)
        goto fail;
    *out = db;
    return TC_OK;

fail:
    tc_db_close(db);
    if (created)
        unlink(path);
    return err;
}

TC_API void tc_db_close(struct tc_db *db)
{
    if (!db)
        return;
    for (int i = 0; i < DB_ST_COUNT; i++)
        sqlite3_finalize(db->stmts[i]);
    if (db->in_tx)
        sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db->sql);
    free(db->path);
    free(db);
}

TC_API const char *tc_db_path(const struct tc_db *db)
{
    return db ? db->path : "";
}

TC_API int tc_db_schema_version(struct tc_db *db)
{
    if (!db)
        return tc_error(TC_ERR_INVALID, "tc_db_schema_version: no database");
    return db->schema_version;
}

/* ------------------------------------------------------------------------ */
/* Integrity                                                                 */
/* ------------------------------------------------------------------------ */

#define DTYPE_LIST "('fp64','fp32','tf32','fp16','bf16','fp8','int8')"

/* Each query counts rows that break a rule the CHECK constraints state
 * (a file edited by hand, or with ignore_check_constraints, may break them),
 * or a plausibility bound (bounds.h) the CHECK constraints of schema v1 do
 * not. */
/* not formatted: the SQL as written, a clause a line */
/* clang-format off */
#define ZERO_OR_IN(col, lo, hi)                                                              \
    "(" col " = 0 OR " col " BETWEEN " TC_BOUND_SQL(lo) " AND " TC_BOUND_SQL(hi) ")"
#define PEAK_OK(dt)                                                                          \
    ZERO_OR_IN("peak_" dt "_tflops", TC_BOUND_PEAK_TFLOPS_MIN, TC_BOUND_PEAK_TFLOPS_MAX)
static const struct {
    const char *what;
    const char *sql;
    int since; /* the schema version whose columns the check reads (0: all) */
} tilecast_checks[] = {
    {"gemm rows with an unknown dtype, layout or status",
     "SELECT count(*), min(id) FROM gemm WHERE dtype NOT IN " DTYPE_LIST
     " OR dtype_c NOT IN " DTYPE_LIST " OR compute NOT IN " DTYPE_LIST
     " OR layout NOT IN ('NN','NT','TN','TT')"
     " OR status NOT IN ('ok','oom','unsupported','error')"},
    {"gemm rows with a dimension that is not an integer in [1, 2^40]",
     "SELECT count(*), min(id) FROM gemm WHERE typeof(m) <> 'integer' OR typeof(n) <> "
     "'integer' OR typeof(k) <> 'integer' OR typeof(batch) <> 'integer' OR m <= 0 OR n <= 0 "
     "OR k <= 0 OR batch <= 0 OR max(m, n, k, batch) > 1099511627776"},
    {"ok gemm rows without a plausible time (in [" TC_BOUND_SQL(TC_BOUND_TIME_US_MIN) ", "
     TC_BOUND_SQL(TC_BOUND_TIME_US_MAX) "] us and at most " TC_BOUND_SQL(TC_BOUND_TFLOPS_MAX)
     " TFLOP/s)",
     "SELECT count(*), min(id) FROM gemm WHERE status = 'ok' AND (typeof(time_us) NOT IN "
     "('real','integer') OR NOT (time_us >= " TC_BOUND_SQL(TC_BOUND_TIME_US_MIN)
     " AND time_us <= " TC_BOUND_SQL(TC_BOUND_TIME_US_MAX) ")"
     " OR 2.0 * m * n * k * batch / time_us > 1e6 * " TC_BOUND_SQL(TC_BOUND_TFLOPS_MAX)
     " OR (coalesce(min_us, 0) <> 0 AND NOT (min_us >= " TC_BOUND_SQL(TC_BOUND_TIME_US_MIN)
     " AND min_us <= " TC_BOUND_SQL(TC_BOUND_TIME_US_MAX) ")))"},
    {"gemm rows with a negative or non-numeric min_us, spread_pct or algorithm field",
     "SELECT count(*), min(id) FROM gemm WHERE typeof(min_us) NOT IN ('null','real','integer')"
     " OR typeof(spread_pct) NOT IN ('null','real','integer') OR min_us < 0 OR spread_pct < 0"
     " OR NOT (coalesce(reps, 0) BETWEEN 0 AND 1073741824)"
     " OR NOT (coalesce(max(tile_m, tile_n, tile_k, stages, split_k, cluster_m, cluster_n,"
     " swizzle), 0) BETWEEN 0 AND 1073741824)"
     " OR min(coalesce(tile_m, 0), coalesce(tile_n, 0), coalesce(tile_k, 0),"
     " coalesce(stages, 0), coalesce(split_k, 0), coalesce(cluster_m, 0),"
     " coalesce(cluster_n, 0), coalesce(swizzle, 0)) < 0"},
    {"gemm rows with an algorithm name or message over 255 bytes",
     "SELECT count(*), min(id) FROM gemm WHERE length(CAST(algo AS BLOB)) > 255 OR "
     "length(CAST(message AS BLOB)) > 255"},
    {"GPU snapshots with values out of range",
     "SELECT count(*), min(rowid) FROM (SELECT 0 AS rowid, * FROM gpu) WHERE"
     " length(CAST(id AS BLOB)) > 63 OR length(CAST(name AS BLOB)) > 127"
     " OR length(CAST(compute_capability AS BLOB)) > 15"
     " OR length(CAST(sources AS BLOB)) > 1023 OR length(CAST(flags AS BLOB)) > 2047"
     " OR arch NOT IN ('pascal','volta','turing','ampere','ada','hopper','blackwell','cdna1',"
     "'cdna2','cdna3','cpu')"
     /* 0 is a value the snapshot does not know (collected without --gpu) */
     " OR NOT (units BETWEEN 0 AND " TC_BOUND_SQL(TC_BOUND_UNITS_MAX) ")"
     " OR NOT " ZERO_OR_IN("clock_tensor_mhz", TC_BOUND_CLOCK_MHZ_MIN, TC_BOUND_CLOCK_MHZ_MAX)
     " OR NOT " ZERO_OR_IN("clock_vector_mhz", TC_BOUND_CLOCK_MHZ_MIN, TC_BOUND_CLOCK_MHZ_MAX)
     " OR NOT " ZERO_OR_IN("clock_base_mhz", TC_BOUND_CLOCK_MHZ_MIN, TC_BOUND_CLOCK_MHZ_MAX)
     " OR NOT " PEAK_OK("fp64") " OR NOT " PEAK_OK("fp32") " OR NOT " PEAK_OK("tf32")
     " OR NOT " PEAK_OK("fp16") " OR NOT " PEAK_OK("bf16") " OR NOT " PEAK_OK("fp8")
     " OR NOT " PEAK_OK("int8")
     " OR NOT (min(flops_per_clk_fp64, flops_per_clk_fp32, flops_per_clk_tf32,"
     "             flops_per_clk_fp16, flops_per_clk_bf16, flops_per_clk_fp8,"
     "             flops_per_clk_int8) >= 0"
     "         AND max(flops_per_clk_fp64, flops_per_clk_fp32, flops_per_clk_tf32,"
     "             flops_per_clk_fp16, flops_per_clk_bf16, flops_per_clk_fp8,"
     "             flops_per_clk_int8) <= 1e7)"
     " OR NOT " ZERO_OR_IN("mem_bw_gbps", TC_BOUND_MEM_BW_GBPS_MIN, TC_BOUND_MEM_BW_GBPS_MAX)
     " OR NOT " ZERO_OR_IN("mem_gb", TC_BOUND_MEM_GB_MIN, TC_BOUND_MEM_GB_MAX)
     " OR NOT " ZERO_OR_IN("l2_bytes", TC_BOUND_L2_BYTES_MIN, TC_BOUND_L2_BYTES_MAX)
     " OR NOT " ZERO_OR_IN("tdp_w", TC_BOUND_TDP_W_MIN, TC_BOUND_TDP_W_MAX)
     " OR NOT (min(warp_size, max_threads_per_sm, max_warps_per_sm, max_blocks_per_sm,"
     "             max_threads_per_block, regs_per_sm, max_regs_per_block,"
     "             max_regs_per_thread, reg_alloc_unit, smem_alloc_unit_bytes) >= 0"
     "         AND max(warp_size, max_threads_per_sm, max_warps_per_sm, max_blocks_per_sm,"
     "             max_threads_per_block, regs_per_sm, max_regs_per_block,"
     "             max_regs_per_thread, reg_alloc_unit, smem_alloc_unit_bytes) <= 1073741824)"
     " OR NOT (min(smem_per_sm_bytes, smem_per_block_max_bytes,"
     "             reserved_smem_per_block_bytes) >= 0"
     "         AND max(smem_per_sm_bytes, smem_per_block_max_bytes,"
     "             reserved_smem_per_block_bytes) <= 1e12)"},
    {"runs with a provenance field over 64 KiB",
     "SELECT count(*), min(id) FROM run WHERE max(length(CAST(coalesce(host, '') AS BLOB)),"
     " length(CAST(coalesce(device_name, '') AS BLOB)), length(CAST(coalesce(device_uuid, '')"
     " AS BLOB)), length(CAST(coalesce(source, '') AS BLOB)), length(CAST(coalesce(timing, '')"
     " AS BLOB)), length(CAST(coalesce(clocks_json, '') AS BLOB)), length(CAST("
     "coalesce(licence, '') AS BLOB))) > 65536"},
    {"attention rows with invalid values",
     "SELECT count(*), min(id) FROM attention WHERE impl NOT IN ('unfused','flash','flash2',"
     "'flash3','flash4','cudnn','cudnn_oss') OR dtype "
     "NOT IN " DTYPE_LIST " OR batch <= 0 OR heads <= 0 OR kv_heads <= 0 OR seq_q <= 0 OR "
     "seq_kv <= 0 OR head_dim <= 0 OR causal NOT IN (0,1) OR backward NOT IN (0,1) OR "
     "typeof(batch) <> 'integer' OR typeof(heads) <> 'integer' OR typeof(kv_heads) <> "
     "'integer' OR typeof(seq_q) <> 'integer' OR typeof(seq_kv) <> 'integer' OR "
     "typeof(head_dim) <> 'integer' OR "
     "max(batch, heads, kv_heads, seq_q, seq_kv, head_dim) > 1099511627776 OR "
     "(status = 'ok' AND (typeof(time_us) NOT IN ('real','integer') OR "
     "NOT (time_us >= " TC_BOUND_SQL(TC_BOUND_TIME_US_MIN) " AND time_us <= "
     TC_BOUND_SQL(TC_BOUND_TIME_US_MAX) ")))"},
    {"attention rows with an invalid V/O head dim, window or deterministic flag",
     "SELECT count(*), min(id) FROM attention WHERE typeof(head_dim_vo) <> 'integer' OR "
     "head_dim_vo <= 0 OR head_dim_vo > 1099511627776 OR typeof(sliding_window) <> 'integer' "
     "OR sliding_window < 0 OR sliding_window > 1099511627776 OR (sliding_window > 0 AND "
     "causal <> 1) OR deterministic NOT IN (0,1) OR (deterministic = 1 AND backward <> 1)", 2},
    {"attention rows with an invalid page size or KV-cache dtype",
     "SELECT count(*), min(id) FROM attention WHERE typeof(page_size) <> 'integer' OR "
     "page_size < 0 OR page_size > 2147483647 OR kv_dtype NOT IN " DTYPE_LIST, 4},
    {"runs with an unknown kind", "SELECT count(*), min(id) FROM run WHERE kind NOT IN "
                                  "('collected','imported')"},
    {"runs without rows or GPU", "SELECT count(*), min(id) FROM run WHERE gpu_id NOT IN "
                                 "(SELECT id FROM gpu)"},
};
/* clang-format on */

TC_API int tc_db_integrity_check(struct tc_db *db)
{
    sqlite3_stmt *st = NULL;
    int err = TC_OK, rc, version = 0;

    if (!db)
        return tc_error(TC_ERR_INVALID, "tc_db_integrity_check: no database");
    rc = sqlite3_prepare_v2(db->sql, "PRAGMA integrity_check(10)", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        err = db_fail(db, rc, "integrity_check");
        goto out;
    }
    if (strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0) {
        err = tc_error(TC_ERR_SCHEMA, "%s: integrity_check: %s", db->path,
                       (const char *)sqlite3_column_text(st, 0));
        goto out;
    }
    sqlite3_finalize(st);
    rc = sqlite3_prepare_v2(db->sql, "PRAGMA foreign_key_check", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        err = tc_error(TC_ERR_SCHEMA,
                       "%s: foreign_key_check: row %lld of table %s refers to "
                       "a missing row of %s",
                       db->path, (long long)sqlite3_column_int64(st, 1),
                       (const char *)sqlite3_column_text(st, 0),
                       (const char *)sqlite3_column_text(st, 2));
        goto out;
    }
    if (rc != SQLITE_DONE) {
        err = db_fail(db, rc, "foreign_key_check");
        goto out;
    }
    sqlite3_finalize(st);
    st = NULL;
    err = db_read_user_version(db, &version);
    if (err < 0)
        goto out;
    if (version != db->schema_version) {
        err = tc_error(TC_ERR_SCHEMA, "%s: schema version changed to %d while open", db->path,
                       version);
        goto out;
    }
    for (size_t i = 0; i < TC_ARRAY_SIZE(tilecast_checks); i++) {
        if (tilecast_checks[i].since > version)
            continue;
        rc = sqlite3_prepare_v2(db->sql, tilecast_checks[i].sql, -1, &st, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
            err = db_fail(db, rc, tilecast_checks[i].what);
            goto out;
        }
        if (sqlite3_column_int64(st, 0) > 0) {
            err = tc_error(TC_ERR_SCHEMA, "%s: %lld %s (first id %lld)", db->path,
                           (long long)sqlite3_column_int64(st, 0), tilecast_checks[i].what,
                           (long long)sqlite3_column_int64(st, 1));
            goto out;
        }
        sqlite3_finalize(st);
        st = NULL;
    }
out:
    sqlite3_finalize(st);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Transactions                                                              */
/* ------------------------------------------------------------------------ */

TC_API int tc_db_begin(struct tc_db *db)
{
    int err;

    if (!db)
        return tc_error(TC_ERR_INVALID, "tc_db_begin: no database");
    if (db->in_tx)
        return tc_error(TC_ERR_INVALID, "%s: a transaction is already open (no nesting)", db->path);
    err = db_exec(db, db->mode == TC_DB_READONLY ? "BEGIN" : "BEGIN IMMEDIATE");
    if (err == TC_OK)
        db->in_tx = true;
    return err;
}

TC_API int tc_db_commit(struct tc_db *db)
{
    int err;

    if (!db)
        return tc_error(TC_ERR_INVALID, "tc_db_commit: no database");
    if (!db->in_tx)
        return tc_error(TC_ERR_INVALID, "%s: commit without a transaction", db->path);
    err = db_exec(db, "COMMIT");
    /* after a failed COMMIT the caller rolls back, which is a no-op where
     * SQLite has already rolled back itself (tc_db_rollback) */
    if (err == TC_OK)
        db->in_tx = false;
    return err;
}

TC_API int tc_db_rollback(struct tc_db *db)
{
    int err;

    if (!db)
        return tc_error(TC_ERR_INVALID, "tc_db_rollback: no database");
    if (!db->in_tx)
        return tc_error(TC_ERR_INVALID, "%s: rollback without a transaction", db->path);
    db->in_tx = false;
    /* SQLite rolls back by itself after some errors (a full disk, an I/O
     * error): a ROLLBACK then fails with "no transaction is active", and
     * its message would replace the error that matters */
    if (sqlite3_get_autocommit(db->sql))
        return TC_OK;
    err = db_exec(db, "ROLLBACK");
    return err;
}

TC_API int tc_db_compact(struct tc_db *db)
{
    int err;

    if (!db)
        return tc_error(TC_ERR_INVALID, "tc_db_compact: no database");
    if (db->mode == TC_DB_READONLY)
        return tc_error(TC_ERR_INVALID, "%s: opened read-only", db->path);
    if (db->in_tx)
        return tc_error(TC_ERR_INVALID, "%s: compact inside a transaction", db->path);
    err = db_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    if (err == TC_OK)
        err = db_exec(db, "PRAGMA journal_mode = DELETE");
    if (err == TC_OK)
        err = db_exec(db, "ANALYZE");
    if (err == TC_OK)
        err = db_exec(db, "VACUUM");
    return err;
}
