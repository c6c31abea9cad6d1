/* The tilecast database: schema, migrations, safe opening, and the
 * read/write API. See DESIGN.md "The database" and db/prebuilt/README.md.
 *
 * A file is validated before SQLite ever opens it for writing: the header
 * is read by hand, then a read-only, immutable connection (which creates no
 * -wal/-shm files and takes no locks) runs quick_check and looks at the
 * schema. Only a file that passes is opened for real, so a refused file is
 * never modified. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
/* Schema and migrations                                                     */
/* ------------------------------------------------------------------------ */

#define DTYPE_LIST "('fp64','fp32','tf32','fp16','bf16','fp8','int8')"
/* CHECK constraints spell lists out as OR chains: SQLite evaluates a
 * constant IN list through a temporary b-tree built per row, which made
 * batched inserts five times slower. */
#define DTYPE_OK(c)                                                                           \
    "(" c " = 'fp64' OR " c " = 'fp32' OR " c " = 'tf32' OR " c " = 'fp16' OR " c          \
    " = 'bf16' OR " c " = 'fp8' OR " c " = 'int8')"
#define LAYOUT_OK(c) "(" c " = 'NN' OR " c " = 'NT' OR " c " = 'TN' OR " c " = 'TT')"
#define STATUS_OK(c)                                                                          \
    "(" c " = 'ok' OR " c " = 'oom' OR " c " = 'unsupported' OR " c " = 'error')"

/* v0 -> v1. A v0 file carries the tilecast application_id and no tables
 * (creation stamps the file before the first migration). Never edit a
 * shipped step: add a new one. */
static const char *const schema_v1[] = {
    "CREATE TABLE meta (\n"
    "  key TEXT PRIMARY KEY NOT NULL,\n"
    "  value TEXT NOT NULL\n"
    ") WITHOUT ROWID;\n",
    "CREATE TABLE gpu (\n"
    "  id TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 63),\n"
    "  name TEXT NOT NULL, vendor TEXT NOT NULL CHECK (vendor = 'nvidia' OR vendor = 'amd'),\n"
    "  arch TEXT NOT NULL, compute_capability TEXT NOT NULL,\n"
    "  units INTEGER NOT NULL,\n"
    "  clock_tensor_mhz REAL NOT NULL, clock_vector_mhz REAL NOT NULL,\n"
    "  clock_base_mhz REAL NOT NULL,\n"
    "  peak_fp64_tflops REAL NOT NULL, peak_fp32_tflops REAL NOT NULL,\n"
    "  peak_tf32_tflops REAL NOT NULL, peak_fp16_tflops REAL NOT NULL,\n"
    "  peak_bf16_tflops REAL NOT NULL, peak_fp8_tflops REAL NOT NULL,\n"
    "  peak_int8_tflops REAL NOT NULL,\n"
    "  flops_per_clk_fp64 REAL NOT NULL, flops_per_clk_fp32 REAL NOT NULL,\n"
    "  flops_per_clk_tf32 REAL NOT NULL, flops_per_clk_fp16 REAL NOT NULL,\n"
    "  flops_per_clk_bf16 REAL NOT NULL, flops_per_clk_fp8 REAL NOT NULL,\n"
    "  flops_per_clk_int8 REAL NOT NULL,\n"
    "  mem_bw_gbps REAL NOT NULL, mem_gb REAL NOT NULL, l2_bytes INTEGER NOT NULL,\n"
    "  tdp_w REAL NOT NULL, warp_size INTEGER NOT NULL,\n"
    "  max_threads_per_sm INTEGER NOT NULL, max_warps_per_sm INTEGER NOT NULL,\n"
    "  max_blocks_per_sm INTEGER NOT NULL, max_threads_per_block INTEGER NOT NULL,\n"
    "  regs_per_sm INTEGER NOT NULL, max_regs_per_block INTEGER NOT NULL,\n"
    "  max_regs_per_thread INTEGER NOT NULL, reg_alloc_unit INTEGER NOT NULL,\n"
    "  smem_per_sm_bytes INTEGER NOT NULL, smem_per_block_max_bytes INTEGER NOT NULL,\n"
    "  reserved_smem_per_block_bytes INTEGER NOT NULL,\n"
    "  smem_alloc_unit_bytes INTEGER NOT NULL,\n"
    "  sources TEXT NOT NULL, flags TEXT NOT NULL,\n"
    "  spec_json TEXT NOT NULL\n"
    ") WITHOUT ROWID;\n",
    "CREATE TABLE run (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  gpu_id TEXT NOT NULL REFERENCES gpu(id),\n"
    "  kind TEXT NOT NULL CHECK (kind = 'collected' OR kind = 'imported'),\n"
    "  host TEXT, device_name TEXT, device_uuid TEXT, driver_version TEXT,\n"
    "  runtime_version TEXT, blas_version TEXT, backend TEXT, sweep_name TEXT,\n"
    "  sweep_hash TEXT, config_hash TEXT, shard TEXT, timing TEXT, source TEXT,\n"
    "  licence TEXT, clocks_json TEXT, tilecast_version TEXT, started_at TEXT,\n"
    "  ended_at TEXT\n"
    ");\n",
    "CREATE INDEX run_gpu ON run (gpu_id, config_hash);\n",
    "CREATE TABLE gemm (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id),\n"
    "  op TEXT CHECK (op IS NULL OR op = 'mm' OR op = 'bmm' OR op = 'linear'),\n"
    "  dtype TEXT NOT NULL CHECK " DTYPE_OK("dtype") ",\n"
    "  dtype_c TEXT NOT NULL CHECK " DTYPE_OK("dtype_c") ",\n"
    "  compute TEXT NOT NULL CHECK " DTYPE_OK("compute") ",\n"
    "  layout TEXT NOT NULL CHECK " LAYOUT_OK("layout") ",\n"
    "  m INTEGER NOT NULL CHECK (m > 0), n INTEGER NOT NULL CHECK (n > 0),\n"
    "  k INTEGER NOT NULL CHECK (k > 0), batch INTEGER NOT NULL CHECK (batch > 0),\n"
    "  time_us REAL CHECK (time_us IS NULL OR time_us > 0),\n"
    "  min_us REAL, spread_pct REAL, reps INTEGER,\n"
    "  tile_m INTEGER, tile_n INTEGER, tile_k INTEGER, stages INTEGER, split_k INTEGER,\n"
    "  cluster_m INTEGER, cluster_n INTEGER, swizzle INTEGER, algo TEXT,\n"
    "  status TEXT NOT NULL DEFAULT 'ok'\n"
    "    CHECK " STATUS_OK("status") ",\n"
    "  message TEXT,\n"
    "  CHECK (status <> 'ok' OR time_us IS NOT NULL),\n"
    "  UNIQUE (run_id, m, n, k, batch, dtype, dtype_c, compute, layout)\n"
    ");\n",
    "CREATE TABLE attention (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id),\n"
    "  impl TEXT NOT NULL CHECK (impl = 'unfused' OR impl = 'flash'),\n"
    "  dtype TEXT NOT NULL CHECK " DTYPE_OK("dtype") ",\n"
    "  batch INTEGER NOT NULL CHECK (batch > 0), heads INTEGER NOT NULL CHECK (heads > 0),\n"
    "  kv_heads INTEGER NOT NULL CHECK (kv_heads > 0),\n"
    "  seq_q INTEGER NOT NULL CHECK (seq_q > 0), seq_kv INTEGER NOT NULL CHECK (seq_kv > 0),\n"
    "  head_dim INTEGER NOT NULL CHECK (head_dim > 0),\n"
    "  causal INTEGER NOT NULL CHECK (causal = 0 OR causal = 1),\n"
    "  backward INTEGER NOT NULL CHECK (backward = 0 OR backward = 1),\n"
    "  time_us REAL CHECK (time_us IS NULL OR time_us > 0),\n"
    "  min_us REAL, spread_pct REAL, reps INTEGER,\n"
    "  scores_us REAL, softmax_us REAL, values_us REAL,\n"
    "  status TEXT NOT NULL DEFAULT 'ok'\n"
    "    CHECK " STATUS_OK("status") ",\n"
    "  message TEXT,\n"
    "  CHECK (status <> 'ok' OR time_us IS NOT NULL),\n"
    "  UNIQUE (run_id, batch, heads, kv_heads, seq_q, seq_kv, head_dim, dtype, impl,\n"
    "          causal, backward)\n"
    ");\n",
    "CREATE TABLE calibration (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  gpu_id TEXT NOT NULL, dtype TEXT NOT NULL CHECK " DTYPE_OK("dtype") ",\n"
    "  layout TEXT CHECK (layout IS NULL OR " LAYOUT_OK("layout") "),\n"
    "  model_version INTEGER NOT NULL, params_json TEXT NOT NULL,\n"
    "  n_rows INTEGER NOT NULL CHECK (n_rows >= 0),\n"
    "  median_ape_pct REAL, p90_ape_pct REAL, log_resid_sd REAL,\n"
    "  source_gpu TEXT, tilecast_version TEXT NOT NULL, created_at TEXT NOT NULL\n"
    ");\n",
    "CREATE INDEX calibration_key ON calibration (gpu_id, dtype, model_version);\n",
    "CREATE VIEW gemm_tflops AS\n"
    "  SELECT g.id, g.run_id, r.gpu_id, r.kind, r.timing, g.op, g.dtype, g.dtype_c,\n"
    "         g.compute, g.layout, g.m, g.n, g.k, g.batch, g.time_us,\n"
    "         2.0 * g.m * g.n * g.k * g.batch / (g.time_us * 1e6) AS tflops\n"
    "  FROM gemm g JOIN run r ON r.id = g.run_id WHERE g.status = 'ok';\n",
    /* SQLite takes the bare columns of a MIN() aggregate from the row holding
     * the minimum, so gemm_id and run_id name the best measurement. */
    "CREATE VIEW gemm_best AS\n"
    "  SELECT r.gpu_id, g.dtype, g.layout, g.m, g.n, g.k, g.batch,\n"
    "         MIN(g.time_us) AS time_us, g.id AS gemm_id, g.run_id, r.timing,\n"
    "         2.0 * g.m * g.n * g.k * g.batch / (MIN(g.time_us) * 1e6) AS tflops,\n"
    "         COUNT(*) AS measurements\n"
    "  FROM gemm g JOIN run r ON r.id = g.run_id WHERE g.status = 'ok'\n"
    "  GROUP BY r.gpu_id, g.dtype, g.layout, g.m, g.n, g.k, g.batch;\n",
    "CREATE VIEW attention_best AS\n"
    "  SELECT r.gpu_id, a.impl, a.dtype, a.batch, a.heads, a.kv_heads, a.seq_q, a.seq_kv,\n"
    "         a.head_dim, a.causal, a.backward, MIN(a.time_us) AS time_us,\n"
    "         a.id AS attention_id, a.run_id, r.timing\n"
    "  FROM attention a JOIN run r ON r.id = a.run_id WHERE a.status = 'ok'\n"
    "  GROUP BY r.gpu_id, a.impl, a.dtype, a.batch, a.heads, a.kv_heads, a.seq_q,\n"
    "           a.seq_kv, a.head_dim, a.causal, a.backward;\n",
    NULL,
};

struct migration {
    int from;
    const char *const *sql; /* statements, NULL-terminated */
};

static const struct migration migrations[] = {
    {0, schema_v1},
};

/* Tables every v1 file has; a file missing one is refused. */
static const char *const v1_tables[] = {"meta", "gpu", "run", "gemm", "attention",
                                        "calibration"};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

int db_fail(struct tc_db *db, int rc, const char *what)
{
    const char *msg = db && db->sql ? sqlite3_errmsg(db->sql) : sqlite3_errstr(rc);
    int prim = rc & 0xff;

    if (prim == SQLITE_CORRUPT || prim == SQLITE_NOTADB)
        return tc_error(TC_ERR_SCHEMA, "%s: %s: database is corrupt (%s)",
                        db ? db->path : "?", what, msg);
    return tc_error(TC_ERR_DB, "%s: %s: %s", db ? db->path : "?", what, msg);
}

int db_exec(struct tc_db *db, const char *sql)
{
    char *err = NULL;
    int rc = sqlite3_exec(db->sql, sql, NULL, NULL, &err);

    if (rc != SQLITE_OK) {
        int ret = tc_error((rc & 0xff) == SQLITE_CORRUPT ? TC_ERR_SCHEMA : TC_ERR_DB,
                           "%s: %s", db->path, err ? err : sqlite3_errstr(rc));
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

static int bind_pos_int(sqlite3_stmt *st, int idx, int64_t v)
{
    /* zeros mean "unknown": NULL costs no bytes in the record */
    if (v == 0)
        return sqlite3_bind_null(st, idx);
    return sqlite3_bind_int64(st, idx, v);
}

static int bind_pos_double(sqlite3_stmt *st, int idx, double v)
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
        return tc_error(TC_ERR_SCHEMA, "%s: %s is %d bytes long (at most %zu allowed)",
                        db->path, what, n, len - 1);
    if (memchr(text, '\0', (size_t)n))
        return tc_error(TC_ERR_SCHEMA, "%s: %s contains a NUL byte", db->path, what);
    memcpy(buf, text, (size_t)n);
    buf[n] = '\0';
    return TC_OK;
}

/* An integer column that must lie in [lo, hi]; NULL reads as 0 when allowed. */
static int column_int_range(struct tc_db *db, sqlite3_stmt *st, int col, int64_t lo,
                            int64_t hi, bool null_ok, int64_t *out, const char *what,
                            int64_t row_id)
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

static int column_real(struct tc_db *db, sqlite3_stmt *st, int col, bool positive,
                       double *out, const char *what, int64_t row_id)
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
static int column_time(struct tc_db *db, sqlite3_stmt *st, int col, double *out,
                       const char *what, int64_t row_id)
{
    int err = column_real(db, st, col, false, out, what, row_id);

    if (err == TC_OK && *out != 0 && !tc_bound_time_ok(*out))
        return tc_error(TC_ERR_SCHEMA, "%s: row %lld: %s = %g is outside the plausible "
                        "[%g, %g] us", db->path, (long long)row_id, what, *out,
                        TC_BOUND_TIME_US_MIN, TC_BOUND_TIME_US_MAX);
    return err;
}

/* Rewrites the current message as "<file>: <what> <id>: <reason>", dropping
 * the file and row that the column helpers put in front of the reason, so
 * that a bad value reads once, naming the row. */
static int row_error(struct tc_db *db, int err, const char *what, const char *id)
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
    case TC_DTYPE_FP64: return TC_DTYPE_FP64;
    case TC_DTYPE_TF32: return TC_DTYPE_TF32;
    case TC_DTYPE_INT8: return TC_DTYPE_INT8;
    default: return TC_DTYPE_FP32; /* fp16/bf16/fp8 accumulate in fp32 */
    }
}

void db_hash_hex(const char *s, char *buf)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    snprintf(buf, 17, "%016llx", (unsigned long long)h);
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

static const char *put_gpu_statement(char *buf, size_t len);

int db_stmt(struct tc_db *db, enum db_stmt which, sqlite3_stmt **out)
{
    static const char *const sql[DB_ST_COUNT] = {
        [DB_ST_PUT_GPU] = NULL, /* built from the column table below */
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
            " scores_us, softmax_us, values_us, status, message) VALUES (?1, ?2, ?3, ?4,"
            " ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)"
            " ON CONFLICT DO NOTHING",
        [DB_ST_HAS_ATTN] =
            "SELECT 1 FROM attention WHERE run_id = ?1 AND batch = ?2 AND heads = ?3"
            " AND kv_heads = ?4 AND seq_q = ?5 AND seq_kv = ?6 AND head_dim = ?7"
            " AND dtype = ?8 AND impl = ?9 AND causal = ?10 AND backward = ?11 LIMIT 1",
    };
    char put_gpu_sql[4096];
    const char *text = sql[which];
    int rc;

    if (!db->stmts[which]) {
        if (which == DB_ST_PUT_GPU)
            text = put_gpu_statement(put_gpu_sql, sizeof(put_gpu_sql));
        rc = sqlite3_prepare_v3(db->sql, text, -1, SQLITE_PREPARE_PERSISTENT,
                                &db->stmts[which], NULL);
        if (rc != SQLITE_OK)
            return db_fail(db, rc, "preparing a statement");
    } else {
        sqlite3_reset(db->stmts[which]);
        sqlite3_clear_bindings(db->stmts[which]);
    }
    *out = db->stmts[which];
    return TC_OK;
}

/* ------------------------------------------------------------------------ */
/* GPU spec snapshots                                                        */
/* ------------------------------------------------------------------------ */

enum col_type { COL_INT, COL_I64, COL_DBL, COL_STR, COL_VENDOR, COL_ARCH };

struct gpu_col {
    const char *name;
    enum col_type type;
    size_t offset;
    size_t size;
};

#define GCOL(name, type, field) {name, type, offsetof(struct tc_gpu, field), sizeof(((struct tc_gpu *)0)->field)}
#define GPEAK(name, arr, i)                                                                 \
    {name, COL_DBL, offsetof(struct tc_gpu, arr) + (i) * sizeof(double), sizeof(double)}

/* One entry per column of table gpu (spec_json comes last, built by SQLite). */
static const struct gpu_col gpu_cols[] = {
    GCOL("id", COL_STR, id),
    GCOL("name", COL_STR, name),
    GCOL("vendor", COL_VENDOR, vendor),
    GCOL("arch", COL_ARCH, arch),
    GCOL("compute_capability", COL_STR, compute_capability),
    GCOL("units", COL_INT, units),
    GCOL("clock_tensor_mhz", COL_DBL, clock_tensor_mhz),
    GCOL("clock_vector_mhz", COL_DBL, clock_vector_mhz),
    GCOL("clock_base_mhz", COL_DBL, clock_base_mhz),
    GPEAK("peak_fp64_tflops", peak_tflops, TC_DTYPE_FP64),
    GPEAK("peak_fp32_tflops", peak_tflops, TC_DTYPE_FP32),
    GPEAK("peak_tf32_tflops", peak_tflops, TC_DTYPE_TF32),
    GPEAK("peak_fp16_tflops", peak_tflops, TC_DTYPE_FP16),
    GPEAK("peak_bf16_tflops", peak_tflops, TC_DTYPE_BF16),
    GPEAK("peak_fp8_tflops", peak_tflops, TC_DTYPE_FP8),
    GPEAK("peak_int8_tflops", peak_tflops, TC_DTYPE_INT8),
    GPEAK("flops_per_clk_fp64", flops_per_clk_per_unit, TC_DTYPE_FP64),
    GPEAK("flops_per_clk_fp32", flops_per_clk_per_unit, TC_DTYPE_FP32),
    GPEAK("flops_per_clk_tf32", flops_per_clk_per_unit, TC_DTYPE_TF32),
    GPEAK("flops_per_clk_fp16", flops_per_clk_per_unit, TC_DTYPE_FP16),
    GPEAK("flops_per_clk_bf16", flops_per_clk_per_unit, TC_DTYPE_BF16),
    GPEAK("flops_per_clk_fp8", flops_per_clk_per_unit, TC_DTYPE_FP8),
    GPEAK("flops_per_clk_int8", flops_per_clk_per_unit, TC_DTYPE_INT8),
    GCOL("mem_bw_gbps", COL_DBL, mem_bw_gbps),
    GCOL("mem_gb", COL_DBL, mem_gb),
    GCOL("l2_bytes", COL_I64, l2_bytes),
    GCOL("tdp_w", COL_DBL, tdp_w),
    GCOL("warp_size", COL_INT, warp_size),
    GCOL("max_threads_per_sm", COL_INT, max_threads_per_sm),
    GCOL("max_warps_per_sm", COL_INT, max_warps_per_sm),
    GCOL("max_blocks_per_sm", COL_INT, max_blocks_per_sm),
    GCOL("max_threads_per_block", COL_INT, max_threads_per_block),
    GCOL("regs_per_sm", COL_INT, regs_per_sm),
    GCOL("max_regs_per_block", COL_INT, max_regs_per_block),
    GCOL("max_regs_per_thread", COL_INT, max_regs_per_thread),
    GCOL("reg_alloc_unit", COL_INT, reg_alloc_unit),
    GCOL("smem_per_sm_bytes", COL_I64, smem_per_sm_bytes),
    GCOL("smem_per_block_max_bytes", COL_I64, smem_per_block_max_bytes),
    GCOL("reserved_smem_per_block_bytes", COL_I64, reserved_smem_per_block_bytes),
    GCOL("smem_alloc_unit_bytes", COL_INT, smem_alloc_unit_bytes),
    GCOL("sources", COL_STR, sources),
    GCOL("flags", COL_STR, flags),
};

static void append(char *buf, size_t len, size_t *used, const char *s)
{
    size_t n = strlen(s);

    if (*used + n < len) {
        memcpy(buf + *used, s, n + 1);
        *used += n;
    }
}

/* The SQL text is made of the constant column names above; every value is
 * a bound parameter. spec_json is built by SQLite's json_object from the
 * bound values, so the file is readable without gpu_specs/. */
static const char *put_gpu_statement(char *buf, size_t len)
{
    size_t used = 0;
    char num[16];

    buf[0] = '\0';
    append(buf, len, &used, "INSERT INTO gpu (");
    for (size_t i = 0; i < TC_ARRAY_SIZE(gpu_cols); i++) {
        append(buf, len, &used, gpu_cols[i].name);
        append(buf, len, &used, ", ");
    }
    append(buf, len, &used, "spec_json) VALUES (");
    for (size_t i = 0; i < TC_ARRAY_SIZE(gpu_cols); i++) {
        snprintf(num, sizeof(num), "?%zu, ", i + 1);
        append(buf, len, &used, num);
    }
    append(buf, len, &used, "json_object(");
    for (size_t i = 0; i < TC_ARRAY_SIZE(gpu_cols); i++) {
        snprintf(num, sizeof(num), "?%zu", i + 1);
        append(buf, len, &used, i ? ", '" : "'");
        append(buf, len, &used, gpu_cols[i].name);
        append(buf, len, &used, "', ");
        append(buf, len, &used, num);
    }
    append(buf, len, &used, ")) ON CONFLICT (id) DO NOTHING");
    return buf;
}

static const char *vendor_name(enum tc_vendor v)
{
    return v == TC_VENDOR_AMD ? "amd" : "nvidia";
}

TC_API int tc_db_put_gpu(struct tc_db *db, const struct tc_gpu *gpu)
{
    sqlite3_stmt *st;
    int err, rc;

    if (!db || !gpu)
        return tc_error(TC_ERR_INVALID, "tc_db_put_gpu: no database or GPU given");
    if (!gpu->id[0] || memchr(gpu->id, '\0', sizeof(gpu->id)) == NULL)
        return tc_error(TC_ERR_INVALID, "tc_db_put_gpu: GPU without a valid id");
    if ((unsigned)gpu->arch >= TC_ARCH_COUNT)
        return tc_error(TC_ERR_INVALID, "tc_db_put_gpu: %s: invalid architecture %d", gpu->id,
                        (int)gpu->arch);
    err = db_stmt(db, DB_ST_PUT_GPU, &st);
    if (err < 0)
        return err;
    for (size_t i = 0; i < TC_ARRAY_SIZE(gpu_cols); i++) {
        const char *p = (const char *)gpu + gpu_cols[i].offset;
        int idx = (int)i + 1;

        switch (gpu_cols[i].type) {
        case COL_INT: rc = sqlite3_bind_int(st, idx, *(const int *)p); break;
        case COL_I64: rc = sqlite3_bind_int64(st, idx, *(const int64_t *)p); break;
        case COL_DBL: rc = sqlite3_bind_double(st, idx, *(const double *)p); break;
        case COL_STR: {
            size_t n = strnlen(p, gpu_cols[i].size);
            rc = sqlite3_bind_text(st, idx, p, (int)n, SQLITE_TRANSIENT);
            break;
        }
        case COL_VENDOR:
            rc = sqlite3_bind_text(st, idx, vendor_name(*(const enum tc_vendor *)p), -1,
                                   SQLITE_STATIC);
            break;
        case COL_ARCH:
            rc = sqlite3_bind_text(st, idx, tc_arch_name(*(const enum tc_arch *)p), -1,
                                   SQLITE_STATIC);
            break;
        default: rc = SQLITE_MISUSE; break;
        }
        if (rc != SQLITE_OK)
            return db_fail(db, rc, "binding a GPU spec");
    }
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return db_fail(db, rc, "storing GPU spec");
    return TC_OK;
}

int db_has_gpu(struct tc_db *db, const char *gpu_id, bool *found)
{
    sqlite3_stmt *st;
    int err = db_stmt(db, DB_ST_HAS_GPU, &st);
    int rc;

    if (err < 0)
        return err;
    sqlite3_bind_text(st, 1, gpu_id, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_fail(db, rc, "looking up a GPU");
    *found = rc == SQLITE_ROW;
    return TC_OK;
}

TC_API int tc_db_get_gpu(struct tc_db *db, const char *gpu_id, struct tc_gpu *out)
{
    char sql[2048];
    size_t used = 0;
    sqlite3_stmt *st = NULL;
    int err = TC_OK, rc;

    if (!db || !gpu_id || !out)
        return tc_error(TC_ERR_INVALID, "tc_db_get_gpu: missing argument");
    append(sql, sizeof(sql), &used, "SELECT ");
    for (size_t i = 0; i < TC_ARRAY_SIZE(gpu_cols); i++) {
        append(sql, sizeof(sql), &used, i ? ", " : "");
        append(sql, sizeof(sql), &used, gpu_cols[i].name);
    }
    append(sql, sizeof(sql), &used, " FROM gpu WHERE id = ?1");
    rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail(db, rc, "reading a GPU spec");
    sqlite3_bind_text(st, 1, gpu_id, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        err = tc_error(TC_ERR_NOT_FOUND, "%s: no GPU '%s' in the database", db->path, gpu_id);
        goto out;
    }
    if (rc != SQLITE_ROW) {
        err = db_fail(db, rc, "reading a GPU spec");
        goto out;
    }
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < TC_ARRAY_SIZE(gpu_cols) && err == TC_OK; i++) {
        char *p = (char *)out + gpu_cols[i].offset;
        int c = (int)i;
        int64_t v;
        char text[32];

        switch (gpu_cols[i].type) {
        case COL_INT:
            err = column_int_range(db, st, c, 0, 1LL << 30, false, &v, gpu_cols[i].name, 0);
            if (err == TC_OK)
                *(int *)p = (int)v;
            break;
        case COL_I64:
            err = column_int_range(db, st, c, 0, INT64_MAX, false, &v, gpu_cols[i].name, 0);
            if (err == TC_OK)
                *(int64_t *)p = v;
            break;
        case COL_DBL:
            err = column_real(db, st, c, false, (double *)p, gpu_cols[i].name, 0);
            break;
        case COL_STR:
            err = db_column_text(db, st, c, p, gpu_cols[i].size, gpu_cols[i].name);
            break;
        case COL_VENDOR:
            err = db_column_text(db, st, c, text, sizeof(text), "vendor");
            if (err == TC_OK)
                *(enum tc_vendor *)p = strcmp(text, "amd") == 0 ? TC_VENDOR_AMD
                                                                : TC_VENDOR_NVIDIA;
            break;
        case COL_ARCH: {
            int a;

            err = db_column_text(db, st, c, text, sizeof(text), "arch");
            if (err < 0)
                break;
            for (a = 0; a < TC_ARCH_COUNT; a++)
                if (strcmp(text, tc_arch_name((enum tc_arch)a)) == 0)
                    break;
            if (a == TC_ARCH_COUNT)
                err = tc_error(TC_ERR_SCHEMA, "%s: GPU %s: unknown architecture '%s'", db->path,
                               gpu_id, text);
            else
                *(enum tc_arch *)p = (enum tc_arch)a;
            break;
        }
        }
    }
    if (err < 0)
        row_error(db, err, "GPU", gpu_id);
out:
    sqlite3_finalize(st);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                   */
/* ------------------------------------------------------------------------ */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Checks the 100-byte SQLite header by hand, so that a file which is not a
 * tilecast database is refused before SQLite touches it. *version receives
 * PRAGMA user_version. */
static int check_header(const char *path, const struct stat *sb, bool wal, int *version)
{
    unsigned char h[100];
    FILE *f;
    size_t got;
    uint32_t page_size, pages, app_id;
    int32_t user_version;

    if (sb->st_size == 0)
        return tc_error(TC_ERR_SCHEMA, "%s: empty file (0 bytes): not a tilecast database",
                        path);
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
        return tc_error(TC_ERR_SCHEMA, "%s: truncated: %zu bytes, shorter than the 100-byte "
                        "SQLite header", path, got);
    page_size = (uint32_t)h[16] << 8 | h[17];
    if (page_size == 1)
        page_size = 65536;
    if (page_size < 512 || (page_size & (page_size - 1)) != 0)
        return tc_error(TC_ERR_SCHEMA, "%s: corrupt SQLite header (page size %u)", path,
                        page_size);
    /* with a write-ahead log beside it (a writer was killed), the main file
     * may be mid-checkpoint: its size is checked once SQLite has read the log */
    if (!wal && (uint64_t)sb->st_size % page_size != 0)
        return tc_error(TC_ERR_SCHEMA, "%s: truncated or damaged: %lld bytes is not a whole "
                        "number of %u-byte pages", path, (long long)sb->st_size, page_size);
    pages = be32(h + 28);
    /* the in-header size is valid only when its version matches the change
     * counter (written by SQLite >= 3.7.0) */
    if (!wal && pages && be32(h + 92) == be32(h + 24) &&
        (uint64_t)pages * page_size > (uint64_t)sb->st_size)
        return tc_error(TC_ERR_SCHEMA, "%s: truncated: the header says %u pages (%llu bytes) "
                        "but the file has %lld bytes", path, pages,
                        (unsigned long long)pages * page_size, (long long)sb->st_size);
    app_id = be32(h + 68);
    user_version = (int32_t)be32(h + 60);
    if (app_id != TC_DB_APPLICATION_ID)
        return tc_error(TC_ERR_SCHEMA, "%s: an SQLite database but not a tilecast one "
                        "(application_id 0x%08x, expected 0x%08x)", path, app_id,
                        TC_DB_APPLICATION_ID);
    if (user_version > TC_DB_SCHEMA_VERSION)
        return tc_error(TC_ERR_SCHEMA, "%s: schema version %d is newer than this tilecast (%s) "
                        "understands (%d): use a newer tilecast", path, user_version,
                        tc_version(), TC_DB_SCHEMA_VERSION);
    if (user_version < 0)
        return tc_error(TC_ERR_SCHEMA, "%s: corrupt: negative schema version %d", path,
                        user_version);
    *version = user_version;
    return TC_OK;
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

/* The name in "CREATE TABLE name (", "CREATE INDEX name ON", "CREATE VIEW
 * name AS": the third word of a schema statement. */
static void statement_name(const char *stmt, char *buf, size_t len)
{
    const char *p = stmt;
    size_t n = 0;

    for (int word = 0; word < 2; word++) {
        while (*p && *p != ' ')
            p++;
        while (*p == ' ')
            p++;
    }
    while (p[n] && p[n] != ' ' && p[n] != '(' && p[n] != '\n' && n + 1 < len)
        n++;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

/* Every table, index, view and trigger of the file must be one that the
 * migrations up to `version` created, with the same text: a file with an
 * extra trigger (which would run on our inserts), a replaced view or a
 * table of other columns is not a tilecast database. SQLite's own objects
 * (sqlite_stat1 of ANALYZE, automatic indexes) are allowed. */
static int check_schema_objects(sqlite3 *sql, const char *path, int version)
{
    sqlite3_stmt *st = NULL;
    int err = TC_OK, rc;

    rc = sqlite3_prepare_v2(sql, "SELECT type, name, sql FROM sqlite_schema WHERE name NOT "
                            "LIKE 'sqlite\\_%' ESCAPE '\\'", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return tc_error(TC_ERR_SCHEMA, "%s: corrupt database: %s", path, sqlite3_errmsg(sql));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *text = (const char *)sqlite3_column_text(st, 2);
        bool known_name = false, same = false;

        if (!type || !name) {
            err = tc_error(TC_ERR_SCHEMA, "%s: corrupt schema table", path);
            break;
        }
        for (size_t m = 0; m < TC_ARRAY_SIZE(migrations) && !same; m++) {
            if (migrations[m].from >= version)
                continue;
            for (const char *const *stmt = migrations[m].sql; *stmt && !same; stmt++) {
                char stmt_name[128];
                size_t n = strlen(*stmt);

                statement_name(*stmt, stmt_name, sizeof(stmt_name));
                if (strcmp(stmt_name, name) != 0)
                    continue;
                known_name = true;
                /* SQLite keeps the statement's text without the ";\n" */
                while (n && ((*stmt)[n - 1] == '\n' || (*stmt)[n - 1] == ';'))
                    n--;
                same = text && strlen(text) == n && memcmp(text, *stmt, n) == 0;
            }
        }
        if (!same) {
            err = tc_error(TC_ERR_SCHEMA, known_name
                           ? "%s: not a valid tilecast database (%s '%s' differs from schema v%d)"
                           : "%s: not a valid tilecast database (unexpected %s '%s' in schema v%d)",
                           path, type, name, version);
            break;
        }
    }
    if (err == TC_OK && rc != SQLITE_DONE)
        err = tc_error(TC_ERR_SCHEMA, "%s: corrupt database: %s", path, sqlite3_errmsg(sql));
    sqlite3_finalize(st);
    return err;
}

/* Opens path read-only and immutable (no locks, no -wal/-shm created),
 * runs quick_check and checks the schema. */
static int validate(const char *path, const struct stat *sb, int version, bool readonly,
                    bool wal)
{
    sqlite3 *sql = NULL;
    sqlite3_stmt *st = NULL;
    /* immutable: no locks and no -wal/-shm files. A file with a log beside
     * it is read through the log (the state its writer committed). */
    char *uri = db_file_uri(path, wal ? "mode=ro" : "mode=ro&immutable=1");
    int err = TC_OK, rc;

    if (!uri)
        return TC_ERR_NOMEM;
    rc = sqlite3_open_v2(uri, &sql, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc != SQLITE_OK) {
        err = tc_error(TC_ERR_SCHEMA, "%s: cannot open as SQLite: %s", path,
                       sql ? sqlite3_errmsg(sql) : sqlite3_errstr(rc));
        goto out;
    }
    /* another process writing the file (a collector, a merge) holds its
     * locks for moments: wait as the connection itself would, rather than
     * call the file corrupt */
    sqlite3_busy_timeout(sql, 10000);
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
        for (size_t i = 0; i < TC_ARRAY_SIZE(v1_tables); i++) {
            rc = sqlite3_prepare_v2(sql, "SELECT 1 FROM sqlite_schema WHERE type = 'table' "
                                    "AND name = ?1", -1, &st, NULL);
            if (rc != SQLITE_OK) {
                err = tc_error(TC_ERR_SCHEMA, "%s: corrupt database: %s", path,
                               sqlite3_errmsg(sql));
                goto out;
            }
            sqlite3_bind_text(st, 1, v1_tables[i], -1, SQLITE_STATIC);
            rc = sqlite3_step(st);
            sqlite3_finalize(st);
            st = NULL;
            if (rc != SQLITE_ROW) {
                err = tc_error(TC_ERR_SCHEMA, "%s: not a valid tilecast database (schema v%d "
                               "without table '%s')", path, version, v1_tables[i]);
                goto out;
            }
        }
        err = check_schema_objects(sql, path, version);
        if (err < 0)
            goto out;
        rc = sqlite3_prepare_v2(sql, "SELECT value FROM meta WHERE key = 'schema_version'", -1,
                                &st, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc != SQLITE_ROW || sqlite3_column_type(st, 0) != SQLITE_TEXT ||
            atoi((const char *)sqlite3_column_text(st, 0)) != version) {
            err = tc_error(TC_ERR_SCHEMA, "%s: not a valid tilecast database (meta."
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
            err = tc_error(TC_ERR_SCHEMA, "%s: not a valid tilecast database (schema v0 with "
                           "table '%s')", path, (const char *)sqlite3_column_text(st, 0));
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

static int read_user_version(struct tc_db *db, int *version)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->sql, "PRAGMA user_version", -1, &st, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        return db_fail(db, rc, "reading the schema version");
    }
    *version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return TC_OK;
}

/* Runs each step from the file's version up, one transaction per step. */
static int migrate(struct tc_db *db, int from)
{
    char sql[512];
    char now[32];

    db_now_iso(now, sizeof(now));
    for (int v = from; v < TC_DB_SCHEMA_VERSION; v++) {
        const struct migration *step = NULL;
        int err;

        for (size_t i = 0; i < TC_ARRAY_SIZE(migrations); i++)
            if (migrations[i].from == v)
                step = &migrations[i];
        if (!step)
            return tc_error(TC_ERR_SCHEMA, "%s: no migration from schema v%d", db->path, v);
        err = db_exec(db, "BEGIN IMMEDIATE");
        if (err < 0)
            return err;
        for (const char *const *stmt = step->sql; *stmt && err == TC_OK; stmt++)
            err = db_exec(db, *stmt);
        if (err == TC_OK) {
            snprintf(sql, sizeof(sql),
                     "PRAGMA application_id = %d; PRAGMA user_version = %d;"
                     "INSERT INTO meta (key, value) VALUES ('schema_version', '%d')"
                     " ON CONFLICT (key) DO UPDATE SET value = excluded.value;"
                     "INSERT INTO meta (key, value) VALUES ('last_writer_version', '%s')"
                     " ON CONFLICT (key) DO UPDATE SET value = excluded.value;",
                     TC_DB_APPLICATION_ID, v + 1, v + 1, tc_version());
            err = db_exec(db, sql);
        }
        if (err == TC_OK && v == 0) {
            sqlite3_stmt *st = NULL;
            int rc = sqlite3_prepare_v2(db->sql,
                                        "INSERT INTO meta (key, value) VALUES "
                                        "('writer_version', ?1), ('created_at', ?2)",
                                        -1, &st, NULL);
            if (rc == SQLITE_OK) {
                sqlite3_bind_text(st, 1, tc_version(), -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 2, now, -1, SQLITE_STATIC);
                rc = sqlite3_step(st);
            }
            sqlite3_finalize(st);
            if (rc != SQLITE_DONE)
                err = db_fail(db, rc, "writing meta");
        }
        if (err == TC_OK)
            err = db_exec(db, "COMMIT");
        if (err < 0) {
            sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
            return tc_error_prefix(err, "migrating schema v%d to v%d", v, v + 1);
        }
    }
    db->schema_version = TC_DB_SCHEMA_VERSION;
    return TC_OK;
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

TC_API int tc_db_open_ex(const char *path, enum tc_db_mode mode, struct tc_db **out)
{
    struct tc_db *db = NULL;
    struct stat sb;
    char *uri;
    bool created = false;
    int version = 0, err, rc, flags;
    bool wal = false;

    if (!out)
        return tc_error(TC_ERR_INVALID, "tc_db_open_ex: no result pointer");
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
        char *wal_path = malloc(strlen(path) + 5);
        struct stat wal_sb;

        if (!wal_path)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        sprintf(wal_path, "%s-wal", path);
        wal = stat(wal_path, &wal_sb) == 0 && wal_sb.st_size > 0;
        free(wal_path);
        err = check_header(path, &sb, wal, &version);
        if (err == TC_OK)
            err = validate(path, &sb, version, mode == TC_DB_READONLY, wal);
        if (err < 0)
            return err;
        if (mode == TC_DB_READONLY && version < TC_DB_SCHEMA_VERSION)
            return tc_error(TC_ERR_SCHEMA, "%s: schema version %d is older than %d: open it "
                            "for writing once to migrate (tilecast db migrate %s)", path,
                            version, TC_DB_SCHEMA_VERSION, path);
    }

    db = calloc(1, sizeof(*db));
    if (!db)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    err = TC_ERR_NOMEM;
    db->mode = mode;
    db->path = tc_strdup(path);
    if (!db->path)
        goto fail;
    /* always a URI built from the path, so that no file name is ever read
     * as URI syntax and ATTACH of read-only URIs works (merge) */
    flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
    flags |= mode == TC_DB_READONLY ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    if (created)
        flags |= SQLITE_OPEN_CREATE;
    /* read-only without a log beside it: immutable, so that a file in WAL
     * mode gets no -wal/-shm files created (and left) in its directory */
    uri = db_file_uri(path, mode == TC_DB_READONLY ? (wal ? "mode=ro" : "mode=ro&immutable=1")
                            : created ? "mode=rwc" : "mode=rw");
    if (!uri)
        goto fail;
    rc = sqlite3_open_v2(uri, &db->sql, flags, NULL);
    free(uri);
    if (rc != SQLITE_OK) {
        err = db_fail(db, rc, "opening");
        goto fail;
    }
    if ((err = configure(db)) < 0 || (err = read_user_version(db, &version)) < 0)
        goto fail;
    if (version > TC_DB_SCHEMA_VERSION) {
        err = tc_error(TC_ERR_SCHEMA, "%s: schema version %d is newer than this tilecast "
                       "understands (%d)", path, version, TC_DB_SCHEMA_VERSION);
        goto fail;
    }
    db->schema_version = version;
    if (version < TC_DB_SCHEMA_VERSION && (err = migrate(db, version)) < 0)
        goto fail;
    *out = db;
    return TC_OK;

fail:
    tc_db_close(db);
    if (created)
        unlink(path);
    return err;
}

TC_API struct tc_db *tc_db_open(const char *path, enum tc_db_mode mode)
{
    struct tc_db *db;

    tc_db_open_ex(path, mode, &db);
    return db;
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

/* Each query counts rows that break a rule the CHECK constraints state
 * (a file edited by hand, or with ignore_check_constraints, may break them),
 * or a plausibility bound (bounds.h) the CHECK constraints of schema v1 do
 * not. */
#define ZERO_OR_IN(col, lo, hi)                                                              \
    "(" col " = 0 OR " col " BETWEEN " TC_BOUND_SQL(lo) " AND " TC_BOUND_SQL(hi) ")"
#define PEAK_OK(dt)                                                                          \
    ZERO_OR_IN("peak_" dt "_tflops", TC_BOUND_PEAK_TFLOPS_MIN, TC_BOUND_PEAK_TFLOPS_MAX)
static const struct {
    const char *what;
    const char *sql;
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
     " OR arch NOT IN ('volta','turing','ampere','ada','hopper','blackwell','cdna2','cdna3')"
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
     "SELECT count(*), min(id) FROM attention WHERE impl NOT IN ('unfused','flash') OR dtype "
     "NOT IN " DTYPE_LIST " OR batch <= 0 OR heads <= 0 OR kv_heads <= 0 OR seq_q <= 0 OR "
     "seq_kv <= 0 OR head_dim <= 0 OR causal NOT IN (0,1) OR backward NOT IN (0,1) OR "
     "typeof(batch) <> 'integer' OR typeof(heads) <> 'integer' OR typeof(kv_heads) <> "
     "'integer' OR typeof(seq_q) <> 'integer' OR typeof(seq_kv) <> 'integer' OR "
     "typeof(head_dim) <> 'integer' OR "
     "max(batch, heads, kv_heads, seq_q, seq_kv, head_dim) > 1099511627776 OR "
     "(status = 'ok' AND (typeof(time_us) NOT IN ('real','integer') OR "
     "NOT (time_us >= " TC_BOUND_SQL(TC_BOUND_TIME_US_MIN) " AND time_us <= "
     TC_BOUND_SQL(TC_BOUND_TIME_US_MAX) ")))"},
    {"runs with an unknown kind", "SELECT count(*), min(id) FROM run WHERE kind NOT IN "
                                  "('collected','imported')"},
    {"runs without rows or GPU", "SELECT count(*), min(id) FROM run WHERE gpu_id NOT IN "
                                 "(SELECT id FROM gpu)"},
};

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
        err = tc_error(TC_ERR_SCHEMA, "%s: foreign_key_check: row %lld of table %s refers to "
                       "a missing row of %s", db->path, (long long)sqlite3_column_int64(st, 1),
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
    err = read_user_version(db, &version);
    if (err < 0)
        goto out;
    if (version != db->schema_version) {
        err = tc_error(TC_ERR_SCHEMA, "%s: schema version changed to %d while open", db->path,
                       version);
        goto out;
    }
    for (size_t i = 0; i < TC_ARRAY_SIZE(tilecast_checks); i++) {
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
        return tc_error(TC_ERR_INVALID, "%s: a transaction is already open (no nesting)",
                        db->path);
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

/* ------------------------------------------------------------------------ */
/* Runs                                                                      */
/* ------------------------------------------------------------------------ */

static const char *const run_field_names[TC_DB_RUN_FIELDS] = {
    "host",       "device_name", "device_uuid", "driver_version", "runtime_version",
    "blas_version", "backend",   "sweep_name",  "sweep_hash",     "config_hash",
    "shard",      "timing",      "source",      "licence",        "clocks_json",
    "tilecast_version", "started_at", "ended_at",
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
        info ? info->host : NULL,          info ? info->device_name : NULL,
        info ? info->device_uuid : NULL,   info ? info->driver_version : NULL,
        info ? info->runtime_version : NULL, info ? info->blas_version : NULL,
        info ? info->backend : NULL,       info ? info->sweep_name : NULL,
        info ? info->sweep_hash : NULL,    info ? info->config_hash : NULL,
        info ? info->shard : NULL,         info ? info->timing : NULL,
        info ? info->source : NULL,        info ? info->licence : NULL,
        info ? info->clocks_json : NULL,   info ? info->tilecast_version : NULL,
        info ? info->started_at : NULL,    info ? info->ended_at : NULL,
    };
    sqlite3_stmt *st;
    bool found;
    int err, rc;

    if (!db || !info || !run_id)
        return tc_error(TC_ERR_INVALID, "tc_db_add_run: missing argument");
    if (!info->gpu_id || !*info->gpu_id)
        return tc_error(TC_ERR_INVALID, "%s: a run needs a GPU id", db->path);
    if (!info->kind || (strcmp(info->kind, "collected") != 0 &&
                        strcmp(info->kind, "imported") != 0))
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
        return tc_error(TC_ERR_NOT_FOUND, "%s: GPU '%s' has no spec snapshot in the database "
                        "(store it with tc_db_put_gpu first)", db->path, info->gpu_id);
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
    return tc_error(TC_ERR_NOT_FOUND, "%s: no run of %s with configuration %s", db->path,
                    gpu_id, config_hash);
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

/* ------------------------------------------------------------------------ */
/* GEMM and attention rows                                                   */
/* ------------------------------------------------------------------------ */

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
        return tc_error(TC_ERR_RANGE, "%s: GEMM %lldx%lldx%lld batch %lld: dimensions must "
                        "be positive", db->path, (long long)r->m, (long long)r->n,
                        (long long)r->k, (long long)r->batch);
    if (r->status == TC_STATUS_OK && (!isfinite(r->time_us) || r->time_us <= 0))
        return tc_error(TC_ERR_RANGE, "%s: GEMM %lldx%lldx%lld: an ok row needs a positive "
                        "time (got %g us)", db->path, (long long)r->m, (long long)r->n,
                        (long long)r->k, r->time_us);
    if (r->status == TC_STATUS_OK &&
        (tc_bound_check_gemm(r->m, r->n, r->k, r->batch, r->time_us) < 0 ||
         (r->min_us != 0 && tc_bound_check_time("min_us", r->min_us) < 0)))
        return tc_error_prefix(TC_ERR_RANGE, "%s: GEMM %lldx%lldx%lld", db->path,
                               (long long)r->m, (long long)r->n, (long long)r->k);
    if (!memchr(r->algo, '\0', sizeof(r->algo)) || !memchr(r->message, '\0', sizeof(r->message)))
        return tc_error(TC_ERR_INVALID, "%s: GEMM row with an unterminated string", db->path);
    return TC_OK;
}

int db_insert_gemm_op(struct tc_db *db, const struct tc_gemm_row *r, const char *op,
                      bool *inserted)
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
    bind_pos_double(st, 11, r->time_us);
    bind_pos_double(st, 12, r->min_us);
    bind_pos_double(st, 13, r->spread_pct);
    bind_pos_int(st, 14, r->reps);
    bind_pos_int(st, 15, r->tile_m);
    bind_pos_int(st, 16, r->tile_n);
    bind_pos_int(st, 17, r->tile_k);
    bind_pos_int(st, 18, r->stages);
    bind_pos_int(st, 19, r->split_k);
    bind_pos_int(st, 20, r->cluster_m);
    bind_pos_int(st, 21, r->cluster_n);
    bind_pos_int(st, 22, r->swizzle);
    db_bind_text(st, 23, r->algo);
    sqlite3_bind_text(st, 24, tc_status_name(r->status), -1, SQLITE_STATIC);
    db_bind_text(st, 25, r->message);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        if ((rc & 0xff) == SQLITE_CONSTRAINT)
            return tc_error(TC_ERR_INVALID, "%s: GEMM %lldx%lldx%lld of run %lld: %s",
                            db->path, (long long)r->m, (long long)r->n, (long long)r->k,
                            (long long)r->run_id, sqlite3_errmsg(db->sql));
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
#define TRY(x)                                                                               \
    do {                                                                                     \
        if ((err = (x)) < 0)                                                                 \
            goto fail;                                                                       \
    } while (0)
    TRY(column_int_range(db, st, c + 1, 1, INT64_MAX, false, &r->run_id, "run_id", id));
    TRY(db_column_text(db, st, c + 2, text, sizeof(text), "dtype"));
    TRY(db_parse_dtype(db, text, &r->dtype));
    TRY(db_column_text(db, st, c + 3, text, sizeof(text), "dtype_c"));
    TRY(db_parse_dtype(db, text, &r->dtype_c));
    TRY(db_column_text(db, st, c + 4, text, sizeof(text), "compute"));
    TRY(db_parse_dtype(db, text, &r->compute));
    TRY(db_column_text(db, st, c + 5, text, sizeof(text), "layout"));
    TRY(db_parse_layout(db, text, &r->layout));
    /* 2^40 per dimension keeps m·n·k·batch and FLOP counts finite doubles */
    TRY(column_int_range(db, st, c + 6, 1, 1LL << 40, false, &r->m, "m", id));
    TRY(column_int_range(db, st, c + 7, 1, 1LL << 40, false, &r->n, "n", id));
    TRY(column_int_range(db, st, c + 8, 1, 1LL << 40, false, &r->k, "k", id));
    TRY(column_int_range(db, st, c + 9, 1, 1LL << 40, false, &r->batch, "batch", id));
    TRY(column_time(db, st, c + 10, &r->time_us, "time_us", id));
    TRY(column_time(db, st, c + 11, &r->min_us, "min_us", id));
    TRY(column_real(db, st, c + 12, false, &r->spread_pct, "spread_pct", id));
#define INTCOL(col, field, name)                                                             \
    TRY(column_int_range(db, st, c + (col), 0, 1 << 30, true, &v, name, id));                \
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
    if (r->status == TC_STATUS_OK && !tc_bound_gemm_rate_ok(r->m, r->n, r->k, r->batch,
                                                            r->time_us)) {
        tc_bound_check_gemm(r->m, r->n, r->k, r->batch, r->time_us);
        return tc_error_prefix(TC_ERR_SCHEMA, "%s: gemm row %lld", db->path, (long long)id);
    }
    return TC_OK;
fail:
    {
        char idtext[32];

        snprintf(idtext, sizeof(idtext), "%lld", (long long)id);
        return row_error(db, err, "gemm row", idtext);
    }
}

TC_API int tc_db_lookup_gemm(struct tc_db *db, const char *gpu_id, enum tc_dtype dtype,
                             enum tc_layout layout, int64_t m, int64_t n, int64_t k,
                             int64_t batch, struct tc_gemm_row *out)
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
    sqlite3_bind_int64(st, 2, m);
    sqlite3_bind_int64(st, 3, n);
    sqlite3_bind_int64(st, 4, k);
    sqlite3_bind_int64(st, 5, batch <= 0 ? 1 : batch);
    sqlite3_bind_text(st, 6, tc_dtype_name(dtype), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, tc_layout_name(layout), -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        err = db_read_gemm_row(db, st, 0, out);
        sqlite3_reset(st);
        return err;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return db_fail(db, rc, "looking up a GEMM");
    return tc_error(TC_ERR_NOT_FOUND, "%s: no measurement of %s %s %lldx%lldx%lld batch %lld "
                    "on %s", db->path, tc_dtype_name(dtype), tc_layout_name(layout),
                    (long long)m, (long long)n, (long long)k, (long long)batch, gpu_id);
}

TC_API int tc_db_has_gemm(struct tc_db *db, int64_t run_id, enum tc_dtype dtype,
                          enum tc_layout layout, int64_t m, int64_t n, int64_t k,
                          int64_t batch, bool *found)
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
    sqlite3_bind_int64(st, 2, m);
    sqlite3_bind_int64(st, 3, n);
    sqlite3_bind_int64(st, 4, k);
    sqlite3_bind_int64(st, 5, batch <= 0 ? 1 : batch);
    sqlite3_bind_text(st, 6, tc_dtype_name(dtype), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, tc_layout_name(layout), -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_fail(db, rc, "checking a GEMM");
    *found = rc == SQLITE_ROW;
    return TC_OK;
}

static int bind_attention_key(sqlite3_stmt *st, const struct tc_attention_row *r, int first)
{
    sqlite3_bind_int64(st, first, r->batch);
    sqlite3_bind_int64(st, first + 1, r->heads);
    sqlite3_bind_int64(st, first + 2, r->kv_heads ? r->kv_heads : r->heads);
    sqlite3_bind_int64(st, first + 3, r->seq_q);
    sqlite3_bind_int64(st, first + 4, r->seq_kv ? r->seq_kv : r->seq_q);
    sqlite3_bind_int64(st, first + 5, r->head_dim);
    sqlite3_bind_text(st, first + 6, tc_dtype_name(r->dtype), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, first + 7, tc_attn_impl_name(r->impl), -1, SQLITE_STATIC);
    sqlite3_bind_int(st, first + 8, r->causal ? 1 : 0);
    return sqlite3_bind_int(st, first + 9, r->backward ? 1 : 0);
}

static int check_attention_row(struct tc_db *db, const struct tc_attention_row *r)
{
    if ((unsigned)r->dtype >= TC_DTYPE_COUNT || (unsigned)r->impl >= TC_ATTN_IMPL_COUNT)
        return tc_error(TC_ERR_INVALID, "%s: attention row with an invalid dtype or impl",
                        db->path);
    /* The v1 schema's impl column admits these two names only (a CHECK
     * constraint); a named library's rows wait for a schema that stores
     * them, rather than being filed under 'flash', which means the
     * architecture's best kernel. */
    if (r->impl != TC_ATTN_UNFUSED && r->impl != TC_ATTN_FLASH)
        return tc_error(TC_ERR_UNSUPPORTED,
                        "%s: attention rows of impl '%s' cannot be stored: this schema's "
                        "attention table holds 'flash' and 'unfused' rows",
                        db->path, tc_attn_impl_name(r->impl));
    if (r->batch <= 0 || r->heads <= 0 || r->kv_heads < 0 || r->seq_q <= 0 || r->seq_kv < 0 ||
        r->head_dim <= 0)
        return tc_error(TC_ERR_RANGE, "%s: attention b=%lld h=%lld s=%lld d=%lld: dimensions "
                        "must be positive", db->path, (long long)r->batch,
                        (long long)r->heads, (long long)r->seq_q, (long long)r->head_dim);
    if ((unsigned)r->status > TC_STATUS_ERROR)
        return tc_error(TC_ERR_INVALID, "%s: attention row with an invalid status", db->path);
    if (r->status == TC_STATUS_OK && (!isfinite(r->time_us) || r->time_us <= 0))
        return tc_error(TC_ERR_RANGE, "%s: attention: an ok row needs a positive time",
                        db->path);
    if (r->status == TC_STATUS_OK && tc_bound_check_time("time_us", r->time_us) < 0)
        return tc_error_prefix(TC_ERR_RANGE, "%s: attention", db->path);
    if (!memchr(r->message, '\0', sizeof(r->message)))
        return tc_error(TC_ERR_INVALID, "%s: attention row with an unterminated message",
                        db->path);
    return TC_OK;
}

TC_API int tc_db_insert_attention(struct tc_db *db, const struct tc_attention_row *r)
{
    sqlite3_stmt *st;
    int err, rc;

    if (!db || !r)
        return tc_error(TC_ERR_INVALID, "tc_db_insert_attention: missing argument");
    err = check_attention_row(db, r);
    if (err < 0)
        return err;
    err = db_stmt(db, DB_ST_INSERT_ATTN, &st);
    if (err < 0)
        return err;
    sqlite3_bind_int64(st, 1, r->run_id);
    sqlite3_bind_text(st, 2, tc_attn_impl_name(r->impl), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, tc_dtype_name(r->dtype), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, r->batch);
    sqlite3_bind_int64(st, 5, r->heads);
    sqlite3_bind_int64(st, 6, r->kv_heads ? r->kv_heads : r->heads);
    sqlite3_bind_int64(st, 7, r->seq_q);
    sqlite3_bind_int64(st, 8, r->seq_kv ? r->seq_kv : r->seq_q);
    sqlite3_bind_int64(st, 9, r->head_dim);
    sqlite3_bind_int(st, 10, r->causal ? 1 : 0);
    sqlite3_bind_int(st, 11, r->backward ? 1 : 0);
    bind_pos_double(st, 12, r->time_us);
    bind_pos_double(st, 13, r->min_us);
    bind_pos_double(st, 14, r->spread_pct);
    bind_pos_int(st, 15, r->reps);
    bind_pos_double(st, 16, r->scores_us);
    bind_pos_double(st, 17, r->softmax_us);
    bind_pos_double(st, 18, r->values_us);
    sqlite3_bind_text(st, 19, tc_status_name(r->status), -1, SQLITE_STATIC);
    db_bind_text(st, 20, r->message);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        if ((rc & 0xff) == SQLITE_CONSTRAINT)
            return tc_error(TC_ERR_INVALID, "%s: attention row of run %lld: %s", db->path,
                            (long long)r->run_id, sqlite3_errmsg(db->sql));
        return db_fail(db, rc, "inserting an attention row");
    }
    return TC_OK;
}

TC_API int tc_db_has_attention(struct tc_db *db, int64_t run_id, const struct tc_attention_row *key,
                               bool *found)
{
    sqlite3_stmt *st;
    int err, rc;

    if (!db || !key || !found)
        return tc_error(TC_ERR_INVALID, "tc_db_has_attention: missing argument");
    err = db_stmt(db, DB_ST_HAS_ATTN, &st);
    if (err < 0)
        return err;
    sqlite3_bind_int64(st, 1, run_id);
    bind_attention_key(st, key, 2);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_fail(db, rc, "checking an attention shape");
    *found = rc == SQLITE_ROW;
    return TC_OK;
}

/* ------------------------------------------------------------------------ */
/* Iteration and counting                                                    */
/* ------------------------------------------------------------------------ */

TC_API int tc_db_lookup_attention(struct tc_db *db, const char *gpu_id,
                                  const struct tc_attention_row *key,
                                  struct tc_attention_row *out)
{
    static const char sql[] =
        "SELECT a.id, a.run_id, a.time_us, a.min_us, a.spread_pct, a.reps, a.scores_us,"
        " a.softmax_us, a.values_us FROM run r JOIN attention a ON a.run_id = r.id"
        " WHERE r.gpu_id = ?12 AND a.batch = ?2 AND a.heads = ?3 AND a.kv_heads = ?4"
        " AND a.seq_q = ?5 AND a.seq_kv = ?6 AND a.head_dim = ?7 AND a.dtype = ?8"
        " AND a.impl = ?9 AND a.causal = ?10 AND a.backward = ?11 AND a.status = 'ok'"
        " ORDER BY a.time_us LIMIT 1";
    sqlite3_stmt *st = NULL;
    char idtext[32];
    int64_t id, reps;
    int err = TC_OK, rc;

    if (!db || !gpu_id || !key || !out)
        return tc_error(TC_ERR_INVALID, "tc_db_lookup_attention: missing argument");
    if ((unsigned)key->dtype >= TC_DTYPE_COUNT)
        return tc_error(TC_ERR_INVALID, "tc_db_lookup_attention: invalid dtype");
    rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail(db, rc, "looking up attention");
    bind_attention_key(st, key, 2);
    sqlite3_bind_text(st, 12, gpu_id, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        err = tc_error(TC_ERR_NOT_FOUND, "%s: no attention measurement of that shape on %s",
                       db->path, gpu_id);
        goto out;
    }
    if (rc != SQLITE_ROW) {
        err = db_fail(db, rc, "looking up attention");
        goto out;
    }
    *out = *key;
    out->kv_heads = key->kv_heads ? key->kv_heads : key->heads;
    out->seq_kv = key->seq_kv ? key->seq_kv : key->seq_q;
    out->status = TC_STATUS_OK;
    out->message[0] = '\0';
    id = sqlite3_column_int64(st, 0);
#define TRY(x)                                                                               \
    do {                                                                                     \
        if ((err = (x)) < 0)                                                                 \
            goto bad;                                                                        \
    } while (0)
    TRY(column_int_range(db, st, 1, 1, INT64_MAX, false, &out->run_id, "run_id", id));
    TRY(column_real(db, st, 2, true, &out->time_us, "time_us", id));
    TRY(column_time(db, st, 2, &out->time_us, "time_us", id));
    TRY(column_time(db, st, 3, &out->min_us, "min_us", id));
    TRY(column_real(db, st, 4, false, &out->spread_pct, "spread_pct", id));
    TRY(column_int_range(db, st, 5, 0, 1 << 30, true, &reps, "reps", id));
    out->reps = (int)reps;
    TRY(column_real(db, st, 6, false, &out->scores_us, "scores_us", id));
    TRY(column_real(db, st, 7, false, &out->softmax_us, "softmax_us", id));
    TRY(column_real(db, st, 8, false, &out->values_us, "values_us", id));
#undef TRY
    goto out;
bad:
    snprintf(idtext, sizeof(idtext), "%lld", (long long)id);
    row_error(db, err, "attention row", idtext);
out:
    sqlite3_finalize(st);
    return err;
}

int tc_db_attention_rows(struct tc_db *db, const char *gpu_id, enum tc_attn_impl impl,
                         enum tc_dtype dtype, bool backward, struct tc_attention_row **rows,
                         size_t *n)
{
    static const char sql[] =
        "SELECT a.id, a.run_id, a.batch, a.heads, a.kv_heads, a.seq_q, a.seq_kv, a.head_dim,"
        " a.causal, a.time_us, a.min_us, a.spread_pct, a.reps, a.scores_us, a.softmax_us,"
        " a.values_us FROM run r JOIN attention a ON a.run_id = r.id"
        " WHERE r.gpu_id = ?1 AND a.dtype = ?2 AND a.impl = ?3 AND a.backward = ?4"
        " AND a.status = 'ok' ORDER BY a.id";
    struct tc_attention_row *list = NULL, *grown;
    sqlite3_stmt *st = NULL;
    size_t count = 0, cap = 0;
    char idtext[32];
    int64_t id = 0, v;
    int err = TC_OK, rc;

    if (!db || !gpu_id || !rows || !n)
        return tc_error(TC_ERR_INVALID, "tc_db_attention_rows: missing argument");
    *rows = NULL;
    *n = 0;
    /* every implementation may be asked for; those the schema cannot store
     * simply have no rows */
    if ((unsigned)dtype >= TC_DTYPE_COUNT || (unsigned)impl >= TC_ATTN_IMPL_COUNT)
        return tc_error(TC_ERR_INVALID, "tc_db_attention_rows: invalid dtype or impl");
    rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail(db, rc, "reading attention rows");
    sqlite3_bind_text(st, 1, gpu_id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, tc_dtype_name(dtype), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, tc_attn_impl_name(impl), -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, backward ? 1 : 0);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct tc_attention_row *r;

        if (count == cap) {
            cap = cap ? 2 * cap : 16;
            grown = realloc(list, cap * sizeof(*list));
            if (!grown) {
                err = tc_error(TC_ERR_NOMEM, "out of memory");
                goto out;
            }
            list = grown;
        }
        r = &list[count];
        memset(r, 0, sizeof(*r));
        r->impl = impl;
        r->dtype = dtype;
        r->backward = backward;
        r->status = TC_STATUS_OK;
        id = sqlite3_column_int64(st, 0);
        /* an untrusted file: every value is checked before it is used */
#define TRY(x)                                                                               \
    do {                                                                                     \
        if ((err = (x)) < 0)                                                                 \
            goto bad;                                                                        \
    } while (0)
        TRY(column_int_range(db, st, 1, 1, INT64_MAX, false, &r->run_id, "run_id", id));
        TRY(column_int_range(db, st, 2, 1, INT32_MAX, false, &r->batch, "batch", id));
        TRY(column_int_range(db, st, 3, 1, INT32_MAX, false, &r->heads, "heads", id));
        TRY(column_int_range(db, st, 4, 1, INT32_MAX, false, &r->kv_heads, "kv_heads", id));
        TRY(column_int_range(db, st, 5, 1, INT32_MAX, false, &r->seq_q, "seq_q", id));
        TRY(column_int_range(db, st, 6, 1, INT32_MAX, false, &r->seq_kv, "seq_kv", id));
        TRY(column_int_range(db, st, 7, 1, INT32_MAX, false, &r->head_dim, "head_dim", id));
        TRY(column_int_range(db, st, 8, 0, 1, false, &v, "causal", id));
        r->causal = v != 0;
        TRY(column_real(db, st, 9, true, &r->time_us, "time_us", id));
        TRY(column_time(db, st, 9, &r->time_us, "time_us", id));
        TRY(column_time(db, st, 10, &r->min_us, "min_us", id));
        TRY(column_real(db, st, 11, false, &r->spread_pct, "spread_pct", id));
        TRY(column_int_range(db, st, 12, 0, 1 << 30, true, &v, "reps", id));
        r->reps = (int)v;
        TRY(column_real(db, st, 13, false, &r->scores_us, "scores_us", id));
        TRY(column_real(db, st, 14, false, &r->softmax_us, "softmax_us", id));
        TRY(column_real(db, st, 15, false, &r->values_us, "values_us", id));
#undef TRY
        count++;
    }
    if (rc != SQLITE_DONE) {
        err = db_fail(db, rc, "reading attention rows");
        goto out;
    }
    *rows = list;
    *n = count;
    list = NULL;
    goto out;
bad:
    snprintf(idtext, sizeof(idtext), "%lld", (long long)id);
    row_error(db, err, "attention row", idtext);
out:
    sqlite3_finalize(st);
    free(list);
    return err;
}

struct tc_db_iter {
    struct tc_db *db;
    sqlite3_stmt *st;
};

static int prepare_filtered(struct tc_db *db, const char *select, const char *gpu_id,
                            int dtype, int layout, sqlite3_stmt **out)
{
    char sql[1024];
    int rc;

    if (dtype >= TC_DTYPE_COUNT || layout >= TC_LAYOUT_COUNT)
        return tc_error(TC_ERR_INVALID, "%s: invalid dtype %d or layout %d filter", db->path,
                        dtype, layout);
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

TC_API struct tc_db_iter *tc_db_iter_gemm(struct tc_db *db, const char *gpu_id, int dtype,
                                          int layout)
{
    struct tc_db_iter *it;

    if (!db) {
        tc_error(TC_ERR_INVALID, "tc_db_iter_gemm: no database");
        return NULL;
    }
    it = calloc(1, sizeof(*it));
    if (!it) {
        tc_error(TC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    it->db = db;
    if (prepare_filtered(db, "SELECT " DB_GEMM_COLUMNS ", r.gpu_id", gpu_id, dtype, layout,
                         &it->st) < 0) {
        tc_db_iter_free(it);
        return NULL;
    }
    return it;
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

/* ------------------------------------------------------------------------ */
/* Calibrations                                                              */
/* ------------------------------------------------------------------------ */

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
        return tc_error(TC_ERR_INVALID, "%s: calibration with a missing or unterminated "
                        "string", db->path);
    if ((unsigned)c->dtype >= TC_DTYPE_COUNT || c->layout >= TC_LAYOUT_COUNT || c->layout < -1)
        return tc_error(TC_ERR_INVALID, "%s: calibration with an invalid dtype or layout",
                        db->path);
    if (c->params_json[0] != '{')
        return tc_error(TC_ERR_INVALID, "%s: calibration params must be a JSON object",
                        db->path);
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
            sqlite3_bind_text(st, 3, tc_layout_name((enum tc_layout)c->layout), -1,
                              SQLITE_STATIC);
        sqlite3_bind_int(st, 4, c->model_version);
        db_bind_text(st, pass ? 10 : 5, c->source_gpu);
        if (pass) {
            sqlite3_bind_text(st, 5, c->params_json, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(st, 6, c->n_rows);
            sqlite3_bind_double(st, 7, c->median_ape_pct);
            sqlite3_bind_double(st, 8, c->p90_ape_pct);
            sqlite3_bind_double(st, 9, c->log_resid_sd);
            sqlite3_bind_text(st, 11, c->tilecast_version[0] ? c->tilecast_version
                                                             : tc_version(), -1,
                              SQLITE_TRANSIENT);
            sqlite3_bind_text(st, 12, c->created_at[0] ? c->created_at : now, -1,
                              SQLITE_TRANSIENT);
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
#define TRY(x)                                                                               \
    do {                                                                                     \
        if ((err = (x)) < 0)                                                                 \
            goto bad;                                                                        \
    } while (0)
    TRY(db_column_text(db, st, 0, out->gpu_id, sizeof(out->gpu_id), "gpu_id"));
    TRY(db_column_text(db, st, 1, text, sizeof(text), "dtype"));
    TRY(db_column_text(db, st, 4, out->params_json, sizeof(out->params_json), "params_json"));
    TRY(column_int_range(db, st, 5, 0, INT64_MAX, false, &out->n_rows, "n_rows", id));
    TRY(column_real(db, st, 6, false, &out->median_ape_pct, "median_ape_pct", id));
    TRY(column_real(db, st, 7, false, &out->p90_ape_pct, "p90_ape_pct", id));
    TRY(column_real(db, st, 8, false, &out->log_resid_sd, "log_resid_sd", id));
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
bad:
    {
        char idtext[32];

        snprintf(idtext, sizeof(idtext), "%lld", (long long)id);
        row_error(db, err, "calibration", idtext);
    }
out:
    sqlite3_finalize(st);
    return err;
}
