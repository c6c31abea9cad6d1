/* The schema of a tilecast database: the statements of each version, the
 * migrations between versions, and the check that a file's schema objects
 * are exactly the ones those migrations create. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "db-internal.h"

/* CHECK constraints spell lists out as OR chains: SQLite evaluates a
 * constant IN list through a temporary b-tree built per row, which made
 * batched inserts five times slower. */
/* not formatted: the SQL as written, a clause a line */
/* clang-format off */
#define DTYPE_OK(c)                                                                           \
    "(" c " = 'fp64' OR " c " = 'fp32' OR " c " = 'tf32' OR " c " = 'fp16' OR " c          \
    " = 'bf16' OR " c " = 'fp8' OR " c " = 'int8')"
#define LAYOUT_OK(c) "(" c " = 'NN' OR " c " = 'NT' OR " c " = 'TN' OR " c " = 'TT')"
#define STATUS_OK(c)                                                                          \
    "(" c " = 'ok' OR " c " = 'oom' OR " c " = 'unsupported' OR " c " = 'error')"

/* The gpu table of each version: v3 adds the host CPU to its vendors. */
#define GPU_TABLE(vendors)                                                                    \
    "CREATE TABLE gpu (\n"                                                                    \
    "  id TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 63),\n"                   \
    "  name TEXT NOT NULL, vendor TEXT NOT NULL CHECK (" vendors "),\n"                       \
    "  arch TEXT NOT NULL, compute_capability TEXT NOT NULL,\n"                               \
    "  units INTEGER NOT NULL,\n"                                                             \
    "  clock_tensor_mhz REAL NOT NULL, clock_vector_mhz REAL NOT NULL,\n"                     \
    "  clock_base_mhz REAL NOT NULL,\n"                                                       \
    "  peak_fp64_tflops REAL NOT NULL, peak_fp32_tflops REAL NOT NULL,\n"                     \
    "  peak_tf32_tflops REAL NOT NULL, peak_fp16_tflops REAL NOT NULL,\n"                     \
    "  peak_bf16_tflops REAL NOT NULL, peak_fp8_tflops REAL NOT NULL,\n"                      \
    "  peak_int8_tflops REAL NOT NULL,\n"                                                     \
    "  flops_per_clk_fp64 REAL NOT NULL, flops_per_clk_fp32 REAL NOT NULL,\n"                 \
    "  flops_per_clk_tf32 REAL NOT NULL, flops_per_clk_fp16 REAL NOT NULL,\n"                 \
    "  flops_per_clk_bf16 REAL NOT NULL, flops_per_clk_fp8 REAL NOT NULL,\n"                  \
    "  flops_per_clk_int8 REAL NOT NULL,\n"                                                   \
    "  mem_bw_gbps REAL NOT NULL, mem_gb REAL NOT NULL, l2_bytes INTEGER NOT NULL,\n"         \
    "  tdp_w REAL NOT NULL, warp_size INTEGER NOT NULL,\n"                                    \
    "  max_threads_per_sm INTEGER NOT NULL, max_warps_per_sm INTEGER NOT NULL,\n"             \
    "  max_blocks_per_sm INTEGER NOT NULL, max_threads_per_block INTEGER NOT NULL,\n"         \
    "  regs_per_sm INTEGER NOT NULL, max_regs_per_block INTEGER NOT NULL,\n"                  \
    "  max_regs_per_thread INTEGER NOT NULL, reg_alloc_unit INTEGER NOT NULL,\n"              \
    "  smem_per_sm_bytes INTEGER NOT NULL, smem_per_block_max_bytes INTEGER NOT NULL,\n"      \
    "  reserved_smem_per_block_bytes INTEGER NOT NULL,\n"                                     \
    "  smem_alloc_unit_bytes INTEGER NOT NULL,\n"                                             \
    "  sources TEXT NOT NULL, flags TEXT NOT NULL,\n"                                         \
    "  spec_json TEXT NOT NULL\n"                                                             \
    ") WITHOUT ROWID;\n"

/* v0 -> v1. A v0 file carries the tilecast application_id and no tables
 * (creation stamps the file before the first migration). Never edit a
 * shipped step: add a new one. */
static const char *const schema_v1[] = {
    "CREATE TABLE meta (\n"
    "  key TEXT PRIMARY KEY NOT NULL,\n"
    "  value TEXT NOT NULL\n"
    ") WITHOUT ROWID;\n",
    GPU_TABLE("vendor = 'nvidia' OR vendor = 'amd'"),
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
/* v1 -> v2: attention rows carry the backend (each library named, not only
 * 'flash' and 'unfused') and what a measured call needs to be matched
 * exactly: the V/O head dim, a sliding window and a deterministic
 * backward. SQLite cannot change a CHECK constraint in place, so the table
 * is rebuilt; v1 rows keep their values, with head_dim_vo = head_dim, no
 * window and the default backward. The view reading it is dropped first
 * (a rename would rewrite it to the old table) and made again. */
#define ATTN_IMPL_OK(c)                                                                       \
    "(" c " = 'unfused' OR " c " = 'flash' OR " c " = 'flash2' OR " c " = 'flash3' OR " c   \
    " = 'flash4' OR " c " = 'cudnn' OR " c " = 'cudnn_oss')"
static const char *const schema_v2[] = {
    "DROP VIEW attention_best;\n",
    "ALTER TABLE attention RENAME TO attention_v1;\n",
    "CREATE TABLE attention (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id),\n"
    "  impl TEXT NOT NULL CHECK " ATTN_IMPL_OK("impl") ",\n"
    "  dtype TEXT NOT NULL CHECK " DTYPE_OK("dtype") ",\n"
    "  batch INTEGER NOT NULL CHECK (batch > 0), heads INTEGER NOT NULL CHECK (heads > 0),\n"
    "  kv_heads INTEGER NOT NULL CHECK (kv_heads > 0),\n"
    "  seq_q INTEGER NOT NULL CHECK (seq_q > 0), seq_kv INTEGER NOT NULL CHECK (seq_kv > 0),\n"
    "  head_dim INTEGER NOT NULL CHECK (head_dim > 0),\n"
    "  head_dim_vo INTEGER NOT NULL CHECK (head_dim_vo > 0),\n"
    "  sliding_window INTEGER NOT NULL DEFAULT 0 CHECK (sliding_window >= 0),\n"
    "  causal INTEGER NOT NULL CHECK (causal = 0 OR causal = 1),\n"
    "  backward INTEGER NOT NULL CHECK (backward = 0 OR backward = 1),\n"
    "  deterministic INTEGER NOT NULL DEFAULT 0\n"
    "    CHECK (deterministic = 0 OR (deterministic = 1 AND backward = 1)),\n"
    "  time_us REAL CHECK (time_us IS NULL OR time_us > 0),\n"
    "  min_us REAL, spread_pct REAL, reps INTEGER,\n"
    "  scores_us REAL, softmax_us REAL, values_us REAL,\n"
    "  status TEXT NOT NULL DEFAULT 'ok'\n"
    "    CHECK " STATUS_OK("status") ",\n"
    "  message TEXT,\n"
    "  CHECK (status <> 'ok' OR time_us IS NOT NULL),\n"
    "  CHECK (sliding_window = 0 OR causal = 1),\n"
    "  UNIQUE (run_id, batch, heads, kv_heads, seq_q, seq_kv, head_dim, head_dim_vo,\n"
    "          sliding_window, dtype, impl, causal, backward, deterministic)\n"
    ");\n",
    "INSERT INTO attention (id, run_id, impl, dtype, batch, heads, kv_heads, seq_q, seq_kv,\n"
    "    head_dim, head_dim_vo, causal, backward, time_us, min_us, spread_pct, reps,\n"
    "    scores_us, softmax_us, values_us, status, message)\n"
    "  SELECT id, run_id, impl, dtype, batch, heads, kv_heads, seq_q, seq_kv, head_dim,\n"
    "         head_dim, causal, backward, time_us, min_us, spread_pct, reps, scores_us,\n"
    "         softmax_us, values_us, status, message FROM attention_v1;\n",
    "DROP TABLE attention_v1;\n",
    "CREATE VIEW attention_best AS\n"
    "  SELECT r.gpu_id, a.impl, a.dtype, a.batch, a.heads, a.kv_heads, a.seq_q, a.seq_kv,\n"
    "         a.head_dim, a.head_dim_vo, a.sliding_window, a.causal, a.backward,\n"
    "         a.deterministic, MIN(a.time_us) AS time_us, a.id AS attention_id, a.run_id,\n"
    "         r.timing\n"
    "  FROM attention a JOIN run r ON r.id = a.run_id WHERE a.status = 'ok'\n"
    "  GROUP BY r.gpu_id, a.impl, a.dtype, a.batch, a.heads, a.kv_heads, a.seq_q,\n"
    "           a.seq_kv, a.head_dim, a.head_dim_vo, a.sliding_window, a.causal,\n"
    "           a.backward, a.deterministic;\n",
    NULL,
};

/* v2 -> v3: the host CPU of the cpu backend as a vendor (arch has no
 * CHECK; its values are tc_arch_name's), which v1 and v2 files stored as
 * nvidia. SQLite cannot change a CHECK in place: the table is renamed, made
 * again and copied, with foreign keys off and the legacy rename (db_migrate), so that
 * run's REFERENCES gpu(id) is not rewritten to the old name. The new gpu
 * table's text is then exactly GPU_TABLE's, as the schema check expects.
 * Snapshots that only cpu-backend runs measured and that no spec filled
 * (units 0) are such hosts. */
static const char *const schema_v3[] = {
    "ALTER TABLE gpu RENAME TO gpu_v2;\n",
    GPU_TABLE("vendor = 'nvidia' OR vendor = 'amd' OR vendor = 'cpu'"),
    "INSERT INTO gpu SELECT * FROM gpu_v2;\n",
    "DROP TABLE gpu_v2;\n",
    "UPDATE gpu SET vendor = 'cpu', arch = 'cpu',\n"
    "  spec_json = CASE WHEN json_valid(spec_json)\n"
    "    THEN json_set(spec_json, '$.vendor', 'cpu', '$.arch', 'cpu') ELSE spec_json END\n"
    "  WHERE units = 0 AND id IN (SELECT gpu_id FROM run WHERE backend = 'cpu')\n"
    "  AND id NOT IN (SELECT gpu_id FROM run WHERE backend IS NOT 'cpu');\n",
    NULL,
};
/* v3 -> v4: attention rows carry the KV cache the call read, the keys per
 * page of a paged cache (0: contiguous) and the cache's dtype (a bf16
 * attention over an fp8 cache), both in the key: a paged or fp8-cache call
 * is another measurement than the contiguous one. Rebuilt as in v2; v3 rows
 * keep their values, contiguous with a cache of their dtype. */
static const char *const schema_v4[] = {
    "DROP VIEW attention_best;\n",
    "ALTER TABLE attention RENAME TO attention_v3;\n",
    "CREATE TABLE attention (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id),\n"
    "  impl TEXT NOT NULL CHECK " ATTN_IMPL_OK("impl") ",\n"
    "  dtype TEXT NOT NULL CHECK " DTYPE_OK("dtype") ",\n"
    "  batch INTEGER NOT NULL CHECK (batch > 0), heads INTEGER NOT NULL CHECK (heads > 0),\n"
    "  kv_heads INTEGER NOT NULL CHECK (kv_heads > 0),\n"
    "  seq_q INTEGER NOT NULL CHECK (seq_q > 0), seq_kv INTEGER NOT NULL CHECK (seq_kv > 0),\n"
    "  head_dim INTEGER NOT NULL CHECK (head_dim > 0),\n"
    "  head_dim_vo INTEGER NOT NULL CHECK (head_dim_vo > 0),\n"
    "  sliding_window INTEGER NOT NULL DEFAULT 0 CHECK (sliding_window >= 0),\n"
    "  causal INTEGER NOT NULL CHECK (causal = 0 OR causal = 1),\n"
    "  backward INTEGER NOT NULL CHECK (backward = 0 OR backward = 1),\n"
    "  deterministic INTEGER NOT NULL DEFAULT 0\n"
    "    CHECK (deterministic = 0 OR (deterministic = 1 AND backward = 1)),\n"
    "  page_size INTEGER NOT NULL DEFAULT 0 CHECK (page_size >= 0),\n"
    "  kv_dtype TEXT NOT NULL CHECK " DTYPE_OK("kv_dtype") ",\n"
    "  time_us REAL CHECK (time_us IS NULL OR time_us > 0),\n"
    "  min_us REAL, spread_pct REAL, reps INTEGER,\n"
    "  scores_us REAL, softmax_us REAL, values_us REAL,\n"
    "  status TEXT NOT NULL DEFAULT 'ok'\n"
    "    CHECK " STATUS_OK("status") ",\n"
    "  message TEXT,\n"
    "  CHECK (status <> 'ok' OR time_us IS NOT NULL),\n"
    "  CHECK (sliding_window = 0 OR causal = 1),\n"
    "  UNIQUE (run_id, batch, heads, kv_heads, seq_q, seq_kv, head_dim, head_dim_vo,\n"
    "          sliding_window, dtype, impl, causal, backward, deterministic, page_size,\n"
    "          kv_dtype)\n"
    ");\n",
    "INSERT INTO attention (id, run_id, impl, dtype, batch, heads, kv_heads, seq_q, seq_kv,\n"
    "    head_dim, head_dim_vo, sliding_window, causal, backward, deterministic, page_size,\n"
    "    kv_dtype, time_us, min_us, spread_pct, reps, scores_us, softmax_us, values_us,\n"
    "    status, message)\n"
    "  SELECT id, run_id, impl, dtype, batch, heads, kv_heads, seq_q, seq_kv, head_dim,\n"
    "         head_dim_vo, sliding_window, causal, backward, deterministic, 0, dtype,\n"
    "         time_us, min_us, spread_pct, reps, scores_us, softmax_us, values_us, status,\n"
    "         message FROM attention_v3;\n",
    "DROP TABLE attention_v3;\n",
    "CREATE VIEW attention_best AS\n"
    "  SELECT r.gpu_id, a.impl, a.dtype, a.batch, a.heads, a.kv_heads, a.seq_q, a.seq_kv,\n"
    "         a.head_dim, a.head_dim_vo, a.sliding_window, a.causal, a.backward,\n"
    "         a.deterministic, a.page_size, a.kv_dtype, MIN(a.time_us) AS time_us,\n"
    "         a.id AS attention_id, a.run_id, r.timing\n"
    "  FROM attention a JOIN run r ON r.id = a.run_id WHERE a.status = 'ok'\n"
    "  GROUP BY r.gpu_id, a.impl, a.dtype, a.batch, a.heads, a.kv_heads, a.seq_q,\n"
    "           a.seq_kv, a.head_dim, a.head_dim_vo, a.sliding_window, a.causal,\n"
    "           a.backward, a.deterministic, a.page_size, a.kv_dtype;\n",
    NULL,
};
/* clang-format on */

struct migration {
    int from;
    const char *const *sql; /* statements, NULL-terminated */
};

static const struct migration migrations[] = {
    {0, schema_v1},
    {1, schema_v2},
    {2, schema_v3},
    {3, schema_v4},
};

/* Tables every v1 file has; a file missing one is refused. */
const char *const db_v1_tables[] = {"meta", "gpu", "run", "gemm", "attention", "calibration"};
const size_t db_v1_table_count = TC_ARRAY_SIZE(db_v1_tables);

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
 * migrations up to `version` created, with the text of the last of them
 * that created it (v3's gpu table, not v1's, in a v3 file): a file with an
 * extra trigger (which would run on our inserts), a replaced view or a
 * table of other columns is not a tilecast database. SQLite's own objects
 * (sqlite_stat1 of ANALYZE, automatic indexes) are allowed. */
int db_check_schema_objects(sqlite3 *sql, const char *path, int version)
{
    sqlite3_stmt *st = NULL;
    int err = TC_OK, rc;

    rc = sqlite3_prepare_v2(sql,
                            "SELECT type, name, sql FROM sqlite_schema WHERE name NOT "
                            "LIKE 'sqlite\\_%' ESCAPE '\\'",
                            -1, &st, NULL);
    if (rc != SQLITE_OK)
        return tc_error(TC_ERR_SCHEMA, "%s: corrupt database: %s", path, sqlite3_errmsg(sql));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *text = (const char *)sqlite3_column_text(st, 2);
        const char *last = NULL;
        bool known_name, same = false;

        if (!type || !name) {
            err = tc_error(TC_ERR_SCHEMA, "%s: corrupt schema table", path);
            break;
        }
        /* the object must be as the last step that created it made it: a
         * later step may drop and create it again (v2's attention table,
         * v3's gpu table), and an older version of it is not valid in a
         * newer file */
        for (size_t m = 0; m < TC_ARRAY_SIZE(migrations); m++) {
            if (migrations[m].from >= version)
                continue;
            for (const char *const *stmt = migrations[m].sql; *stmt; stmt++) {
                char stmt_name[128];

                /* the other statements of a step (a rename, a copy) make no object */
                if (strncmp(*stmt, "CREATE ", 7) != 0)
                    continue;
                statement_name(*stmt, stmt_name, sizeof(stmt_name));
                if (strcmp(stmt_name, name) == 0)
                    last = *stmt;
            }
        }
        known_name = last != NULL;
        if (last) {
            size_t n = strlen(last);

            /* SQLite keeps the statement's text without the ";\n" */
            while (n && (last[n - 1] == '\n' || last[n - 1] == ';'))
                n--;
            same = text && strlen(text) == n && memcmp(text, last, n) == 0;
        }
        if (!same) {
            err = tc_error(
                TC_ERR_SCHEMA,
                known_name ? "%s: not a valid tilecast database (%s '%s' differs from schema v%d)"
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

int db_read_user_version(struct tc_db *db, int *version)
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
static int migrate_steps(struct tc_db *db, int from)
{
    char sql[512];
    char now[32];

    db_now_iso(now, sizeof(now));
    for (int v = from; v < TC_DB_SCHEMA_VERSION; v++) {
        const struct migration *step = NULL;
        int err, current = 0;

        for (size_t i = 0; i < TC_ARRAY_SIZE(migrations); i++)
            if (migrations[i].from == v)
                step = &migrations[i];
        if (!step)
            return tc_error(TC_ERR_SCHEMA, "%s: no migration from schema v%d", db->path, v);
        err = db_exec(db, "BEGIN IMMEDIATE");
        if (err < 0)
            return err;
        /* another process (two collectors started together on an old file)
         * may have migrated it between our reading its version and the lock */
        if ((err = db_read_user_version(db, &current)) < 0) {
            sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
            return err;
        }
        if (current > v) {
            if ((err = db_exec(db, "COMMIT")) < 0)
                return err;
            v = current - 1;
            continue;
        }
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
    return TC_OK;
}

/* Foreign keys are off and renames are the legacy ones while the steps run
 * (a step that makes a table again renames the old one away: schema_v2,
 * schema_v3); both pragmas take effect outside a transaction only. */
int db_migrate(struct tc_db *db, int from)
{
    int err = db_exec(db, "PRAGMA foreign_keys = OFF; PRAGMA legacy_alter_table = ON");

    if (err == TC_OK)
        err = migrate_steps(db, from);
    /* restored after a failed step too (the caller closes the connection) */
    sqlite3_exec(db->sql, "PRAGMA legacy_alter_table = OFF; PRAGMA foreign_keys = ON", NULL, NULL,
                 NULL);
    if (err == TC_OK)
        db->schema_version = TC_DB_SCHEMA_VERSION;
    return err;
}
