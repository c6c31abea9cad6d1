/* The database layer: create/open/insert/lookup/iterate/integrity, resume
 * idempotence, refused files (left byte-identical), migration from v0,
 * imports of each format with their errors, export round trip, merge.
 * Fixtures live in tests/data/db/ (see its README). */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tilecast/tilecast.h"

static char tmpdir[1024];
static char path_buf[8][4096];
static int next_buf;

static const char *src_path(const char *rel)
{
    const char *root = getenv("TILECAST_SOURCE_ROOT");
    char *buf = path_buf[next_buf++ % 8];

    ck_assert_msg(root && *root, "TILECAST_SOURCE_ROOT is not set (run through meson test)");
    snprintf(buf, sizeof(path_buf[0]), "%s/%s", root, rel);
    return buf;
}

static const char *tmp_path(const char *name)
{
    char *buf = path_buf[next_buf++ % 8];

    snprintf(buf, sizeof(path_buf[0]), "%s/%s", tmpdir, name);
    return buf;
}

static void setup(void)
{
    const char *base = getenv("TMPDIR");

    snprintf(tmpdir, sizeof(tmpdir), "%s/tc-test-db-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[4200];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

#define ck_assert_error_has(needle)                                                            \
    ck_assert_msg(strstr(tc_last_error(), (needle)) != NULL, "error message '%s' lacks '%s'", \
                  tc_last_error(), (needle))

/* Whole file contents, for byte-identical comparisons. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    ck_assert_msg(f != NULL, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");

    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

static bool exists(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0;
}

static void sql_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    char *err = NULL;

    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql,
                  err ? err : "");
    sqlite3_close(db);
}

static int64_t sql_int(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int64_t v;

    ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static struct tc_gpu test_gpu(const char *id)
{
    struct tc_gpu g = {0};

    snprintf(g.id, sizeof(g.id), "%s", id);
    snprintf(g.name, sizeof(g.name), "test GPU %s", id);
    g.arch = TC_ARCH_AMPERE;
    g.units = 108;
    g.clock_tensor_mhz = 1410;
    g.peak_tflops[TC_DTYPE_FP16] = 312;
    g.mem_bw_gbps = 2039;
    g.l2_bytes = 40LL << 20;
    return g;
}

/* A new database holding one GPU and one collected run. */
static struct tc_db *new_db(const char *name, int64_t *run_id)
{
    struct tc_db *db = tc_db_open(tmp_path(name), TC_DB_CREATE);
    struct tc_gpu g = test_gpu("a100-sxm4-80gb");
    struct tc_run_info info = {.gpu_id = "a100-sxm4-80gb", .kind = "collected",
                               .host = "node1", .backend = "cpu", .config_hash = "cfg1",
                               .timing = "event-median-l2flush", .shard = "0/1"};

    ck_assert_msg(db != NULL, "%s", tc_last_error());
    ck_assert_int_eq(tc_db_put_gpu(db, &g), TC_OK);
    if (run_id)
        ck_assert_msg(tc_db_add_run(db, &info, run_id) == TC_OK, "%s", tc_last_error());
    return db;
}

static struct tc_gemm_row gemm_row(int64_t run_id, int64_t m, int64_t n, int64_t k, double t)
{
    struct tc_gemm_row r = {0};

    r.run_id = run_id;
    r.dtype = r.dtype_c = TC_DTYPE_FP16;
    r.compute = TC_DTYPE_FP32;
    r.layout = TC_LAYOUT_NT;
    r.m = m;
    r.n = n;
    r.k = k;
    r.batch = 1;
    r.time_us = t;
    r.min_us = t * 0.99;
    r.reps = 20;
    r.tile_m = 128;
    r.tile_n = 256;
    r.status = TC_STATUS_OK;
    snprintf(r.algo, sizeof(r.algo), "sm80_xmma_gemm_f16f16_128x256");
    return r;
}

/* ------------------------------------------------------------------------ */

START_TEST(create_insert_lookup_iterate)
{
    int64_t run_id, count;
    struct tc_db *db = new_db("a.db", &run_id);
    struct tc_gemm_row r = gemm_row(run_id, 4096, 4096, 4096, 560.5), out;
    struct tc_db_iter *it;
    char gpu[TC_ID_MAX];
    int n = 0, rc;

    ck_assert_int_eq(tc_db_schema_version(db), TC_DB_SCHEMA_VERSION);
    ck_assert_int_eq(tc_db_begin(db), TC_OK);
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    r = gemm_row(run_id, 8192, 4096, 4096, 1100.0);
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    r = gemm_row(run_id, 100, 100, 100, 0);
    r.status = TC_STATUS_OOM;
    snprintf(r.message, sizeof(r.message), "out of memory");
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    /* nesting is refused */
    ck_assert_int_eq(tc_db_begin(db), TC_ERR_INVALID);
    ck_assert_int_eq(tc_db_commit(db), TC_OK);

    ck_assert_int_eq(tc_db_lookup_gemm(db, "a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT, 4096,
                                       4096, 4096, 1, &out),
                     TC_OK);
    ck_assert_double_eq_tol(out.time_us, 560.5, 1e-9);
    ck_assert_double_eq_tol(out.min_us, 560.5 * 0.99, 1e-9);
    ck_assert_int_eq(out.reps, 20);
    ck_assert_int_eq(out.tile_m, 128);
    ck_assert_int_eq(out.tile_k, 0); /* unknown stays 0 */
    ck_assert_str_eq(out.algo, "sm80_xmma_gemm_f16f16_128x256");
    ck_assert_int_eq(out.compute, TC_DTYPE_FP32);
    /* other layout, other GPU, failed rows: not found */
    ck_assert_int_eq(tc_db_lookup_gemm(db, "a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 4096,
                                       4096, 4096, 1, &out),
                     TC_ERR_NOT_FOUND);
    ck_assert_int_eq(tc_db_lookup_gemm(db, "h100-sxm5-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT, 4096,
                                       4096, 4096, 1, &out),
                     TC_ERR_NOT_FOUND);
    ck_assert_int_eq(tc_db_lookup_gemm(db, "a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT, 100,
                                       100, 100, 1, &out),
                     TC_ERR_NOT_FOUND);

    ck_assert_int_eq(tc_db_iter_gemm(db, "a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT, &it),
                     TC_OK);
    ck_assert_ptr_nonnull(it);
    while ((rc = tc_db_iter_next(it, &out, gpu)) == 1) {
        ck_assert_str_eq(gpu, "a100-sxm4-80gb");
        ck_assert_int_eq(out.status, TC_STATUS_OK);
        n++;
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(n, 2);
    tc_db_iter_free(it);
    ck_assert_int_eq(tc_db_iter_gemm(db, NULL, TC_DTYPE_BF16, -1, &it), TC_OK);
    ck_assert_int_eq(tc_db_iter_next(it, &out, NULL), 0);
    tc_db_iter_free(it);
    tc_db_iter_free(NULL);
    /* the cause, not only NULL */
    ck_assert_int_eq(tc_db_iter_gemm(NULL, NULL, -1, -1, &it), TC_ERR_INVALID);
    ck_assert_ptr_null(it);

    ck_assert_int_eq(tc_db_count_gemm(db, NULL, -1, -1, &count), TC_OK);
    ck_assert_int_eq(count, 2);
    ck_assert_int_eq(tc_db_count_gemm(db, "a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT, &count),
                     TC_OK);
    ck_assert_int_eq(count, 2);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    ck_assert_int_eq(tc_db_end_run(db, run_id, "2026-01-01T00:00:00Z"), TC_OK);
    ck_assert_int_eq(tc_db_end_run(db, run_id + 100, NULL), TC_ERR_NOT_FOUND);
    tc_db_close(db);
    tc_db_close(NULL);

    /* the file is readable with plain SQL: views and pragmas */
    ck_assert_int_eq(sql_int(tmp_path("a.db"), "PRAGMA application_id"), 0x54434442);
    ck_assert_int_eq(sql_int(tmp_path("a.db"), "PRAGMA user_version"), TC_DB_SCHEMA_VERSION);
    ck_assert_int_eq(sql_int(tmp_path("a.db"),
                             "SELECT round(tflops * 1000) FROM gemm_tflops WHERE m = 4096"),
                     (int64_t)round(2.0 * 4096 * 4096 * 4096 / (560.5 * 1e6) * 1000));
    ck_assert_int_eq(sql_int(tmp_path("a.db"), "SELECT count(*) FROM gemm_best"), 2);
    ck_assert_int_eq(sql_int(tmp_path("a.db"), "SELECT value FROM meta WHERE key = "
                                               "'schema_version'"),
                     1);
}
END_TEST

START_TEST(gpu_snapshot_round_trip)
{
    struct tc_db *db = new_db("g.db", NULL);
    struct tc_gpu in = test_gpu("mi250x"), out;

    in.vendor = TC_VENDOR_AMD;
    in.arch = TC_ARCH_CDNA2;
    in.max_regs_per_thread = 512;
    in.smem_per_sm_bytes = 65536;
    snprintf(in.flags, sizeof(in.flags), "clock uncertain; l2 \"quoted\"");
    ck_assert_int_eq(tc_db_put_gpu(db, &in), TC_OK);
    ck_assert_int_eq(tc_db_put_gpu(db, &in), TC_OK); /* idempotent */
    ck_assert_int_eq(tc_db_get_gpu(db, "mi250x", &out), TC_OK);
    ck_assert_str_eq(out.id, "mi250x");
    ck_assert_str_eq(out.name, in.name);
    ck_assert_int_eq(out.vendor, TC_VENDOR_AMD);
    ck_assert_int_eq(out.arch, TC_ARCH_CDNA2);
    ck_assert_int_eq(out.units, 108);
    ck_assert_int_eq(out.max_regs_per_thread, 512);
    ck_assert_int_eq(out.smem_per_sm_bytes, 65536);
    ck_assert_int_eq(out.l2_bytes, 40LL << 20);
    ck_assert_double_eq(out.peak_tflops[TC_DTYPE_FP16], 312.0);
    ck_assert_double_eq(out.mem_bw_gbps, 2039.0);
    ck_assert_str_eq(out.flags, in.flags);
    ck_assert_int_eq(tc_db_get_gpu(db, "nope", &out), TC_ERR_NOT_FOUND);
    tc_db_close(db);
    /* the spec is also stored as JSON, readable without gpu_specs/ */
    ck_assert_int_eq(sql_int(tmp_path("g.db"), "SELECT json_extract(spec_json, '$.units') "
                                               "FROM gpu WHERE id = 'mi250x'"),
                     108);
}
END_TEST

START_TEST(resume_is_idempotent)
{
    int64_t run_id, again, count;
    struct tc_db *db = new_db("r.db", &run_id);
    struct tc_gemm_row r = gemm_row(run_id, 1024, 2048, 512, 40.0);
    struct tc_attention_row a = {.run_id = run_id, .impl = TC_ATTN_FLASH,
                                 .dtype = TC_DTYPE_BF16, .batch = 2, .heads = 16,
                                 .seq_q = 2048, .head_dim = 128, .causal = true,
                                 .time_us = 300.0, .status = TC_STATUS_OK};
    bool found;

    ck_assert_int_eq(tc_db_has_gemm(db, run_id, TC_DTYPE_FP16, TC_LAYOUT_NT, 1024, 2048, 512, 1,
                                    &found),
                     TC_OK);
    ck_assert(!found);
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    r.time_us = 99.0; /* a repeated shape keeps the first measurement */
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    ck_assert_int_eq(tc_db_has_gemm(db, run_id, TC_DTYPE_FP16, TC_LAYOUT_NT, 1024, 2048, 512, 1,
                                    &found),
                     TC_OK);
    ck_assert(found);
    ck_assert_int_eq(tc_db_count_gemm(db, NULL, -1, -1, &count), TC_OK);
    ck_assert_int_eq(count, 1);
    ck_assert_int_eq(tc_db_lookup_gemm(db, "a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT, 1024,
                                       2048, 512, 1, &r),
                     TC_OK);
    ck_assert_double_eq(r.time_us, 40.0);

    ck_assert_int_eq(tc_db_insert_attention(db, &a), TC_OK);
    ck_assert_int_eq(tc_db_insert_attention(db, &a), TC_OK);
    ck_assert_int_eq(tc_db_has_attention(db, run_id, &a, &found), TC_OK);
    ck_assert(found);
    {
        struct tc_attention_row got;

        ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &a, &got), TC_OK);
        ck_assert_double_eq(got.time_us, 300.0);
        ck_assert_int_eq(got.kv_heads, 16); /* 0 in the key means heads */
        ck_assert_int_eq(got.seq_kv, 2048);
        a.causal = false;
        ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &a, &got),
                         TC_ERR_NOT_FOUND);
        a.causal = true;
        /* a named library's rows: this schema stores flash and unfused only,
         * and reading them finds nothing rather than failing */
        a.impl = TC_ATTN_FLASH3;
        ck_assert_int_eq(tc_db_insert_attention(db, &a), TC_ERR_UNSUPPORTED);
        ck_assert(strstr(tc_last_error(), "flash3") != NULL);
        ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &a, &got),
                         TC_ERR_NOT_FOUND);
        ck_assert_int_eq(tc_db_has_attention(db, run_id, &a, &found), TC_OK);
        ck_assert(!found);
        a.impl = TC_ATTN_FLASH;
    }

    /* --resume finds the run of the same configuration */
    ck_assert_int_eq(tc_db_find_run(db, "a100-sxm4-80gb", "cfg1", &again), TC_OK);
    ck_assert_int_eq(again, run_id);
    ck_assert_int_eq(tc_db_find_run(db, "a100-sxm4-80gb", "other", &again), TC_ERR_NOT_FOUND);
    tc_db_close(db);
    ck_assert_int_eq(sql_int(tmp_path("r.db"), "SELECT count(*) FROM attention"), 1);
}
END_TEST

START_TEST(bad_rows_rejected)
{
    int64_t run_id;
    struct tc_db *db = new_db("b.db", &run_id);
    struct tc_gemm_row r = gemm_row(run_id, 0, 10, 10, 5.0);
    struct tc_run_info info = {.gpu_id = "unknown-gpu", .kind = "collected"};

    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_ERR_RANGE);
    r = gemm_row(run_id, 10, 10, 10, NAN);
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_ERR_RANGE);
    /* times no timer gives, or a throughput no device has (bounds.h) */
    r = gemm_row(run_id, 10, 10, 10, 1e-300);
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_ERR_RANGE);
    ck_assert_error_has("outside the plausible");
    r = gemm_row(run_id, 10, 10, 10, 1e300);
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_ERR_RANGE);
    r = gemm_row(run_id, 65536, 65536, 65536, 0.01);
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_ERR_RANGE);
    ck_assert_error_has("TFLOP/s");
    r = gemm_row(run_id, 10, 10, 10, 1.0);
    r.layout = (enum tc_layout)7;
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_ERR_INVALID);
    r = gemm_row(run_id + 5, 10, 10, 10, 1.0); /* no such run: foreign key */
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_ERR_INVALID);
    ck_assert_int_eq(tc_db_add_run(db, &info, &run_id), TC_ERR_NOT_FOUND);
    ck_assert_error_has("unknown-gpu");
    info.gpu_id = "a100-sxm4-80gb";
    info.kind = "measured-somehow";
    ck_assert_int_eq(tc_db_add_run(db, &info, &run_id), TC_ERR_INVALID);
    tc_db_close(db);
}
END_TEST

START_TEST(untrusted_values_checked)
{
    int64_t run_id;
    struct tc_db *db = new_db("u.db", &run_id);
    struct tc_gemm_row r = gemm_row(run_id, 64, 64, 64, 5.0);
    struct tc_db_iter *it;

    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    tc_db_close(db);
    /* a hand-edited file that bypasses the CHECK constraints */
    sql_exec(tmp_path("u.db"), "PRAGMA ignore_check_constraints = ON;"
                               "UPDATE gemm SET dtype = 'fp99' WHERE m = 64;");
    db = tc_db_open(tmp_path("u.db"), TC_DB_READONLY);
    ck_assert_ptr_nonnull(db);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_ERR_SCHEMA);
    ck_assert_error_has("unknown dtype, layout or status");
    ck_assert_int_eq(tc_db_iter_gemm(db, NULL, -1, -1, &it), TC_OK);
    ck_assert_int_eq(tc_db_iter_next(it, &r, NULL), TC_ERR_SCHEMA);
    ck_assert_error_has("fp99");
    tc_db_iter_free(it);
    tc_db_close(db);

    /* a time the CHECK constraints let through, but no timer gives */
    sql_exec(tmp_path("u.db"), "UPDATE gemm SET dtype = 'fp16', time_us = 1e-300 WHERE m = 64;");
    db = tc_db_open(tmp_path("u.db"), TC_DB_READONLY);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_ERR_SCHEMA);
    ck_assert_error_has("plausible time");
    ck_assert_int_eq(tc_db_iter_gemm(db, NULL, -1, -1, &it), TC_OK);
    ck_assert_int_eq(tc_db_iter_next(it, &r, NULL), TC_ERR_SCHEMA);
    ck_assert_error_has("outside the plausible");
    tc_db_iter_free(it);
    tc_db_close(db);

    sql_exec(tmp_path("u.db"), "PRAGMA ignore_check_constraints = ON;"
                               "UPDATE gemm SET dtype = 'fp16', time_us = 5.0, m = -3 "
                               "WHERE m = 64;");
    db = tc_db_open(tmp_path("u.db"), TC_DB_READONLY);
    ck_assert_int_eq(tc_db_iter_gemm(db, NULL, -1, -1, &it), TC_OK);
    ck_assert_int_eq(tc_db_iter_next(it, &r, NULL), TC_ERR_SCHEMA);
    ck_assert_error_has("m = -3 is out of range");
    tc_db_iter_free(it);
    tc_db_close(db);
}
END_TEST

START_TEST(calibration_put_get)
{
    struct tc_db *db = new_db("c.db", NULL);
    struct tc_calibration_row c = {0}, out;

    snprintf(c.gpu_id, sizeof(c.gpu_id), "h100-sxm5-80gb");
    c.dtype = TC_DTYPE_BF16;
    c.layout = -1;
    c.model_version = 3;
    snprintf(c.params_json, sizeof(c.params_json), "{\"mma_eff\": 0.81}");
    c.n_rows = 812;
    c.median_ape_pct = 3.1;
    c.p90_ape_pct = 9.5;
    c.log_resid_sd = 0.07;
    snprintf(c.source_gpu, sizeof(c.source_gpu), "a100-sxm4-80gb");
    ck_assert_int_eq(tc_db_put_calibration(db, &c), TC_OK);
    snprintf(c.params_json, sizeof(c.params_json), "{\"mma_eff\": 0.83}");
    ck_assert_int_eq(tc_db_put_calibration(db, &c), TC_OK); /* replaces */
    ck_assert_int_eq(tc_db_get_calibration(db, "h100-sxm5-80gb", TC_DTYPE_BF16, -1, 3,
                                           "a100-sxm4-80gb", &out),
                     TC_OK);
    ck_assert_str_eq(out.params_json, "{\"mma_eff\": 0.83}");
    ck_assert_int_eq(out.n_rows, 812);
    ck_assert_double_eq_tol(out.p90_ape_pct, 9.5, 1e-12);
    ck_assert_str_eq(out.tilecast_version, tc_version());
    ck_assert_int_eq(strlen(out.created_at), 20);
    ck_assert_int_eq(tc_db_get_calibration(db, "h100-sxm5-80gb", TC_DTYPE_BF16, -1, 3, NULL,
                                           &out),
                     TC_ERR_NOT_FOUND);
    ck_assert_int_eq(tc_db_get_calibration(db, "h100-sxm5-80gb", TC_DTYPE_BF16, -1, 4,
                                           "a100-sxm4-80gb", &out),
                     TC_ERR_NOT_FOUND);
    snprintf(c.params_json, sizeof(c.params_json), "not json");
    ck_assert_int_eq(tc_db_put_calibration(db, &c), TC_ERR_INVALID);
    tc_db_close(db);
    ck_assert_int_eq(sql_int(tmp_path("c.db"), "SELECT count(*) FROM calibration"), 1);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Refused files                                                             */
/* ------------------------------------------------------------------------ */

/* Opens path in every mode; each must fail with TC_ERR_SCHEMA and a message
 * containing needle, and the file (with no -wal/-shm) must stay identical. */
static void assert_refused_modes(const char *path, const char *needle, size_t n_modes)
{
    static const enum tc_db_mode modes[] = {TC_DB_READONLY, TC_DB_READWRITE, TC_DB_CREATE};
    char side[4200];
    size_t len_before, len_after;
    char *before = slurp(path, &len_before), *after;

    for (size_t i = 0; i < n_modes; i++) {
        struct tc_db *db = tc_db_open(path, modes[i]);

        ck_assert_msg(db == NULL, "%s opened in mode %d", path, (int)modes[i]);
        ck_assert_error_has(needle);
        ck_assert_error_has(path);
    }
    ck_assert_int_eq(tc_db_merge(tmp_path("merged.db"), 1, &path, NULL), TC_ERR_SCHEMA);
    ck_assert(!exists(tmp_path("merged.db")));
    after = slurp(path, &len_after);
    ck_assert_uint_eq(len_before, len_after);
    ck_assert_msg(memcmp(before, after, len_before) == 0, "%s was modified", path);
    snprintf(side, sizeof(side), "%s-wal", path);
    ck_assert_msg(!exists(side), "%s created", side);
    snprintf(side, sizeof(side), "%s-shm", path);
    ck_assert_msg(!exists(side), "%s created", side);
    snprintf(side, sizeof(side), "%s-journal", path);
    ck_assert_msg(!exists(side), "%s created", side);
    free(before);
    free(after);
}

static void assert_refused(const char *path, const char *needle)
{
    assert_refused_modes(path, needle, 3);
}

START_TEST(refuses_newer_schema)
{
    struct tc_db *db = new_db("new.db", NULL);

    tc_db_close(db);
    sql_exec(tmp_path("new.db"), "PRAGMA journal_mode = DELETE; PRAGMA user_version = 2;"
                                 "UPDATE meta SET value = '2' WHERE key = 'schema_version';");
    assert_refused(tmp_path("new.db"), "schema version 2 is newer");
}
END_TEST

START_TEST(refuses_other_sqlite)
{
    sql_exec(tmp_path("other.db"), "CREATE TABLE invoices (id INTEGER, total REAL);"
                                   "INSERT INTO invoices VALUES (1, 9.5);");
    assert_refused(tmp_path("other.db"), "not a tilecast one");
}
END_TEST

START_TEST(refuses_tilecast_id_with_wrong_tables)
{
    sql_exec(tmp_path("odd.db"), "PRAGMA application_id = 1413694530; PRAGMA user_version = 1;"
                                 "CREATE TABLE meta (key TEXT, value TEXT);");
    assert_refused(tmp_path("odd.db"), "without table 'gpu'");
}
END_TEST

START_TEST(refuses_foreign_schema_objects)
{
    struct tc_db *db = new_db("t.db", NULL);

    tc_db_close(db);
    sql_exec(tmp_path("t.db"), "PRAGMA journal_mode = DELETE;");
    {
        size_t len;
        char *data = slurp(tmp_path("t.db"), &len);

        write_file(tmp_path("trigger.db"), data, len);
        write_file(tmp_path("view.db"), data, len);
        write_file(tmp_path("index.db"), data, len);
        free(data);
    }
    /* a trigger would run on tilecast's own inserts */
    sql_exec(tmp_path("trigger.db"), "CREATE TRIGGER t AFTER INSERT ON gemm BEGIN "
                                     "DELETE FROM run; END;");
    assert_refused(tmp_path("trigger.db"), "unexpected trigger 't'");
    sql_exec(tmp_path("view.db"), "DROP VIEW gemm_best; CREATE VIEW gemm_best AS "
                                  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                                  "FROM c) SELECT x FROM c;");
    assert_refused(tmp_path("view.db"), "view 'gemm_best' differs from schema v1");
    sql_exec(tmp_path("index.db"), "CREATE INDEX extra ON gemm (time_us);");
    assert_refused(tmp_path("index.db"), "unexpected index 'extra'");
}
END_TEST

START_TEST(check_flags_absurd_values)
{
    int64_t run_id;
    struct tc_db *db = new_db("h.db", &run_id);
    struct tc_gemm_row r = gemm_row(run_id, 64, 64, 64, 5.0);

    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    tc_db_close(db);
    sql_exec(tmp_path("h.db"), "UPDATE gemm SET m = 9223372036854775807;");
    db = tc_db_open(tmp_path("h.db"), TC_DB_READONLY);
    ck_assert_ptr_nonnull(db);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_ERR_SCHEMA);
    ck_assert_error_has("dimension that is not an integer in [1, 2^40]");
    ck_assert_int_eq(tc_db_lookup_gemm(db, "a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT,
                                       9223372036854775807LL, 64, 64, 1, &r),
                     TC_ERR_SCHEMA);
    ck_assert_error_has("h.db: gemm row 1: m = 9223372036854775807 is out of range");
    tc_db_close(db);
    sql_exec(tmp_path("h.db"), "UPDATE gemm SET m = 64; UPDATE gpu SET units = -4;");
    db = tc_db_open(tmp_path("h.db"), TC_DB_READONLY);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_ERR_SCHEMA);
    ck_assert_error_has("GPU snapshots with values out of range");
    tc_db_close(db);
}
END_TEST

START_TEST(refuses_truncated)
{
    int64_t run_id;
    struct tc_db *db = new_db("full.db", &run_id);
    size_t len;
    char *data;

    ck_assert_int_eq(tc_db_begin(db), TC_OK);
    for (int i = 1; i <= 2000; i++) {
        struct tc_gemm_row r = gemm_row(run_id, i, 2 * i, 3 * i, 1.0 + i);

        ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    }
    ck_assert_int_eq(tc_db_commit(db), TC_OK);
    tc_db_close(db);
    data = slurp(tmp_path("full.db"), &len);
    ck_assert_uint_gt(len, 16384);
    /* a whole number of pages, fewer than the header promises */
    write_file(tmp_path("cut.db"), data, len / 2 - (len / 2) % 4096);
    assert_refused(tmp_path("cut.db"), "truncated");
    /* cut mid-page */
    write_file(tmp_path("cut2.db"), data, len / 2 + 100);
    assert_refused(tmp_path("cut2.db"), "truncated");
    /* cut inside the header */
    write_file(tmp_path("cut3.db"), data, 60);
    assert_refused(tmp_path("cut3.db"), "truncated");
    free(data);
}
END_TEST

START_TEST(refuses_corrupt_pages)
{
    int64_t run_id;
    struct tc_db *db = new_db("good.db", &run_id);
    size_t len;
    char *data;

    ck_assert_int_eq(tc_db_begin(db), TC_OK);
    for (int i = 1; i <= 2000; i++) {
        struct tc_gemm_row r = gemm_row(run_id, i, i, i, 1.0 + i);

        ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    }
    ck_assert_int_eq(tc_db_commit(db), TC_OK);
    tc_db_close(db);
    data = slurp(tmp_path("good.db"), &len);
    /* scribble over the header of a b-tree page in the middle */
    memset(data + 8 * 4096, 0x5a, 64);
    write_file(tmp_path("bad.db"), data, len);
    assert_refused(tmp_path("bad.db"), "corrupt");
    free(data);
}
END_TEST

START_TEST(refuses_random_and_empty)
{
    unsigned char noise[8192];
    uint32_t x = 12345;

    for (size_t i = 0; i < sizeof(noise); i++) {
        x = x * 1103515245u + 12345u;
        noise[i] = (unsigned char)(x >> 16);
    }
    write_file(tmp_path("noise.db"), noise, sizeof(noise));
    assert_refused(tmp_path("noise.db"), "not an SQLite database");
    write_file(tmp_path("empty.db"), "", 0);
    assert_refused(tmp_path("empty.db"), "empty file");
    write_file(tmp_path("text.db"), "gpu,dtype\n", 10);
    assert_refused(tmp_path("text.db"), "not an SQLite database");
}
END_TEST

/* A writer killed before its checkpoint leaves committed rows in the -wal
 * file: such a database opens, with those rows. */
START_TEST(opens_with_a_left_over_wal)
{
    int64_t run_id, count;
    struct tc_db *db = new_db("w.db", &run_id);
    struct tc_gemm_row r = gemm_row(run_id, 64, 64, 64, 5.0);
    sqlite3 *sql;
    char *err = NULL;

    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    tc_db_close(db);
    ck_assert_int_eq(sqlite3_open(tmp_path("w.db"), &sql), SQLITE_OK);
    ck_assert_int_eq(sqlite3_db_config(sql, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL),
                     SQLITE_OK);
    ck_assert_msg(sqlite3_exec(sql, "PRAGMA wal_autocheckpoint = 0; INSERT INTO gemm (run_id,"
                                    " dtype, dtype_c, compute, layout, m, n, k, batch, time_us)"
                                    " VALUES (1, 'fp16', 'fp16', 'fp32', 'NT', 128, 64, 64, 1,"
                                    " 9.0)",
                               NULL, NULL, &err) == SQLITE_OK,
                  "%s", err ? err : "");
    sqlite3_close(sql);
    ck_assert(exists(tmp_path("w.db-wal")));
    db = tc_db_open(tmp_path("w.db"), TC_DB_READONLY);
    ck_assert_msg(db != NULL, "%s", tc_last_error());
    ck_assert_int_eq(tc_db_count_gemm(db, NULL, -1, -1, &count), TC_OK);
    ck_assert_int_eq(count, 2);
    tc_db_close(db);
    db = tc_db_open(tmp_path("w.db"), TC_DB_READWRITE);
    ck_assert_msg(db != NULL, "%s", tc_last_error());
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    tc_db_close(db);
}
END_TEST

START_TEST(missing_file_needs_create)
{
    ck_assert_ptr_null(tc_db_open(tmp_path("absent.db"), TC_DB_READONLY));
    ck_assert_error_has("absent.db");
    ck_assert_ptr_null(tc_db_open(tmp_path("absent.db"), TC_DB_READWRITE));
    ck_assert(!exists(tmp_path("absent.db")));
    ck_assert_ptr_null(tc_db_open(tmpdir, TC_DB_READONLY));
    ck_assert_error_has("not a regular file");
}
END_TEST

START_TEST(migrates_from_v0)
{
    struct tc_db *db;

    /* a v0 file: stamped with tilecast's application_id, no tables yet */
    sql_exec(tmp_path("v0.db"), "PRAGMA application_id = 1413694530;");
    ck_assert_int_eq(sql_int(tmp_path("v0.db"), "PRAGMA user_version"), 0);
    /* read-only cannot migrate: refused, untouched */
    assert_refused_modes(tmp_path("v0.db"), "older than 1", 1);
    db = tc_db_open(tmp_path("v0.db"), TC_DB_READWRITE);
    ck_assert_msg(db != NULL, "%s", tc_last_error());
    ck_assert_int_eq(tc_db_schema_version(db), 1);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    tc_db_close(db);
    ck_assert_int_eq(sql_int(tmp_path("v0.db"), "PRAGMA user_version"), 1);
    ck_assert_int_eq(sql_int(tmp_path("v0.db"), "SELECT count(*) FROM sqlite_schema WHERE "
                                                "type = 'table' AND name IN ('meta', 'gpu', "
                                                "'run', 'gemm', 'attention', 'calibration')"),
                     6);
    db = tc_db_open(tmp_path("v0.db"), TC_DB_READONLY);
    ck_assert_ptr_nonnull(db);
    tc_db_close(db);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Imports                                                                   */
/* ------------------------------------------------------------------------ */

static struct tc_specs *specs;

static void load_specs(void)
{
    setup();
    specs = tc_specs_load(src_path("gpu_specs"));
    ck_assert_msg(specs != NULL, "%s", tc_last_error());
}

static void free_specs(void)
{
    tc_specs_free(specs);
    specs = NULL;
    teardown();
}

static int import1(struct tc_db *db, const char *format, const char *fixture,
                   struct tc_import_options *opt, struct tc_import_stats *st)
{
    const char *file = src_path(fixture);
    struct tc_import_options local = {0};

    if (!opt)
        opt = &local;
    opt->specs = specs;
    return tc_db_import(db, format, 1, &file, opt, st);
}

START_TEST(import_csv_vidur)
{
    struct tc_db *db = tc_db_open(tmp_path("i.db"), TC_DB_CREATE);
    struct tc_import_stats st;
    struct tc_gemm_row r;
    struct tc_db_info *info;

    ck_assert_int_eq(import1(db, "csv", "tests/data/db/vidur-small.csv", NULL, &st), TC_OK);
    ck_assert_int_eq(st.rows, 7);
    ck_assert_int_eq(st.duplicates, 1); /* Vidur repeats a shape: the first is kept */
    ck_assert_int_eq(st.runs, 2);
    ck_assert_int_eq(tc_db_lookup_gemm(db, "a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT, 4096,
                                       10240, 8192, 1, &r),
                     TC_OK);
    ck_assert_double_eq(r.time_us, 2842.0);
    ck_assert_int_eq(r.compute, TC_DTYPE_FP32);
    ck_assert_int_eq(tc_db_lookup_gemm(db, "h100-sxm5-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT, 4096,
                                       44032, 8192, 1, &r),
                     TC_OK);
    ck_assert_double_eq(r.time_us, 4219.0);

    /* provenance: imported, source, timing and licence kept */
    ck_assert_int_eq(tc_db_info_get(db, &info), TC_OK);
    ck_assert_uint_eq(info->n_runs, 2);
    ck_assert_str_eq(info->runs[0].kind, "imported");
    ck_assert_str_eq(info->runs[0].fields[11], "profiler-median");
    ck_assert_str_eq(info->runs[0].fields[13], "MIT");
    ck_assert_ptr_nonnull(strstr(info->runs[0].fields[12], "microsoft/vidur@7d47513"));
    ck_assert_str_eq(info->runs[0].fields[6], "csv");
    ck_assert_uint_eq(info->n_gpus, 2);
    tc_db_info_free(info);

    /* importing the same data again adds nothing */
    ck_assert_int_eq(import1(db, "csv", "tests/data/db/vidur-small.csv", NULL, &st), TC_OK);
    ck_assert_int_eq(st.rows, 0);
    ck_assert_int_eq(st.duplicates, 8);
    ck_assert_int_eq(st.runs, 0);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    tc_db_close(db);
}
END_TEST

START_TEST(import_csv_filters_and_kernels)
{
    struct tc_db *db = tc_db_open(tmp_path("i.db"), TC_DB_CREATE);
    struct tc_import_options opt = {.gpu_id = "h100-sxm5-80gb"};
    struct tc_import_stats st;
    struct tc_gemm_row r;

    ck_assert_int_eq(import1(db, "csv", "tests/data/db/vidur-small.csv", &opt, &st), TC_OK);
    ck_assert_int_eq(st.rows, 3);
    ck_assert_int_eq(st.skipped_gpu, 5);
    ck_assert_int_eq(import1(db, "csv", "tests/data/db/neusight-small.csv", NULL, &st), TC_OK);
    ck_assert_int_eq(st.rows, 5);
    ck_assert_int_eq(st.runs, 2); /* the linear and the bmm files are two sources */
    /* NeuSight's kernel name is kept as the algorithm; fp32 computes in fp32 */
    ck_assert_int_eq(tc_db_lookup_gemm(db, "a100-pcie-40gb", TC_DTYPE_FP32, TC_LAYOUT_NT, 58,
                                       141, 13, 1, &r),
                     TC_OK);
    ck_assert_str_eq(r.algo, "ampere_sgemm_32x128_tn");
    ck_assert_double_eq_tol(r.time_us, 54.5067, 1e-9);
    ck_assert_int_eq(r.compute, TC_DTYPE_FP32);
    tc_db_close(db);
}
END_TEST

/* Snapshot of what a database holds, to prove a failed import changed
 * nothing. */
static char *export_text(struct tc_db *db)
{
    size_t len;
    int64_t rows;
    char *text;

    ck_assert_int_eq(tc_db_export(db, "csv", NULL, tmp_path("snap.csv"), &rows), TC_OK);
    text = slurp(tmp_path("snap.csv"), &len);
    text[len] = '\0';
    return text;
}

static void assert_import_fails(const char *format, const char *fixture,
                                struct tc_import_options *opt, const char *needle)
{
    struct tc_db *db = tc_db_open(tmp_path("f.db"), TC_DB_CREATE);
    struct tc_import_stats st;
    int64_t runs_before, runs_after;
    char *before, *after;
    int err;

    ck_assert_ptr_nonnull(db);
    ck_assert_int_eq(import1(db, "csv", "tests/data/db/vidur-small.csv", NULL, &st), TC_OK);
    before = export_text(db);
    tc_db_close(db);
    runs_before = sql_int(tmp_path("f.db"), "SELECT count(*) FROM run");

    db = tc_db_open(tmp_path("f.db"), TC_DB_READWRITE);
    err = import1(db, format, fixture, opt, &st);
    ck_assert_msg(err < 0, "import of %s succeeded", fixture);
    ck_assert_error_has(needle);
    ck_assert_int_eq(st.rows, 0);
    after = export_text(db);
    ck_assert_str_eq(before, after);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    tc_db_close(db);
    runs_after = sql_int(tmp_path("f.db"), "SELECT count(*) FROM run");
    ck_assert_int_eq(runs_before, runs_after);
    free(before);
    free(after);
    unlink(tmp_path("f.db"));
}

START_TEST(import_csv_errors)
{
    assert_import_fails("csv", "tests/data/db/bad-dtype.csv", NULL,
                        "bad-dtype.csv:4:2: unknown dtype 'fp17'");
    assert_import_fails("csv", "tests/data/db/bad-units.csv", NULL,
                        "bad-units.csv:1:9: column 'time_ms' has no accepted unit");
    assert_import_fails("csv", "tests/data/db/bad-tflops.csv", NULL,
                        "bad-tflops.csv:3:10: tflops 232.258 disagrees");
    assert_import_fails("csv", "tests/data/db/bad-missing-column.csv", NULL,
                        "bad-missing-column.csv:1: missing column 'k'");
    assert_import_fails("csv", "tests/data/db/bad-fields.csv", NULL,
                        "bad-fields.csv:3: 5 fields, but the header has 17");
    assert_import_fails("csv", "tests/data/db/rocblas-small.csv", NULL,
                        "rocblas-small.csv:2:9: no time_us: this row gives efficiency_pct");
    assert_import_fails("cookbook", "tests/data/db/cookbook-bad.log",
                        &(struct tc_import_options){.gpu_id = "a100-sxm4-40gb"},
                        "cookbook-bad.log:5:");
    assert_import_fails("mamf", "tests/data/db/mamf-bad.log",
                        &(struct tc_import_options){.gpu_id = "h100-sxm5-80gb"},
                        "mamf-bad.log:3: unrecognised mamf-finder result line");
    assert_import_fails("cookbook", "tests/data/db/cookbook-a100-mm.log",
                        &(struct tc_import_options){.gpu_id = "no-such-gpu"},
                        "unknown GPU 'no-such-gpu'");
    assert_import_fails("cookbook", "tests/data/db/cookbook-a100-mm.log", NULL,
                        "do not name the GPU");
    assert_import_fails("mamf", "tests/data/db/vidur-small.csv",
                        &(struct tc_import_options){.gpu_id = "h100-sxm5-80gb"},
                        "no mamf-finder results found");
}
END_TEST

START_TEST(import_csv_skip_untimed)
{
    struct tc_db *db = tc_db_open(tmp_path("s.db"), TC_DB_CREATE);
    struct tc_import_options opt = {.skip_untimed = true};
    struct tc_import_stats st;

    ck_assert_int_eq(import1(db, "csv", "tests/data/db/rocblas-small.csv", &opt, &st), TC_OK);
    ck_assert_int_eq(st.rows, 0);
    ck_assert_int_eq(st.skipped_untimed, 3);
    tc_db_close(db);
}
END_TEST

START_TEST(import_cookbook)
{
    struct tc_db *db = tc_db_open(tmp_path("k.db"), TC_DB_CREATE);
    struct tc_import_options opt = {.gpu_id = "a100-sxm4-40gb",
                                    .source = "EleutherAI/cookbook@27dff48:sizing/results/"
                                              "gemm_data/mm/m_sweep/a100.out"};
    struct tc_import_stats st;
    struct tc_gemm_row r;
    struct tc_db_info *info;

    ck_assert_int_eq(import1(db, "cookbook", "tests/data/db/cookbook-a100-mm.log", &opt, &st),
                     TC_OK);
    ck_assert_int_eq(st.rows, 9);
    opt.source = NULL;
    ck_assert_int_eq(import1(db, "cookbook", "tests/data/db/cookbook-a100-bmm.log", &opt, &st),
                     TC_OK);
    ck_assert_int_eq(st.rows, 4);
    /* "32x4096x32: 0.213": the cookbook's n (4096) is the reduction, so k;
     * the time is derived from the TFLOP/s as in the vendored CSV (39.3831) */
    ck_assert_int_eq(tc_db_lookup_gemm(db, "a100-sxm4-40gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 32,
                                       32, 4096, 1, &r),
                     TC_OK);
    ck_assert_double_eq_tol(r.time_us, 39.3831, 1e-4);
    ck_assert_int_eq(tc_db_lookup_gemm(db, "a100-sxm4-40gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 1024,
                                       1024, 1024, 2, &r),
                     TC_OK);
    ck_assert_double_eq_tol(r.time_us, 2.0 * 2 * 1024 * 1024 * 1024 / (80.551e6), 1e-9);
    ck_assert_int_eq(tc_db_info_get(db, &info), TC_OK);
    ck_assert_uint_eq(info->n_runs, 2);
    ck_assert_str_eq(info->runs[0].fields[11], "wall-avg-incl-launch");
    ck_assert_str_eq(info->runs[0].fields[13], "Apache-2.0"); /* known source */
    ck_assert_str_eq(info->runs[1].fields[11], "wall-slowest");
    ck_assert_str_eq(info->runs[1].fields[12], "cookbook-a100-bmm.log");
    ck_assert_str_eq(info->runs[1].fields[13], ""); /* unknown licence stays unknown */
    tc_db_info_free(info);
    tc_db_close(db);
}
END_TEST

START_TEST(import_mamf)
{
    struct tc_db *db = tc_db_open(tmp_path("m.db"), TC_DB_CREATE);
    struct tc_import_options opt = {.gpu_id = "a100-sxm4-80gb"};
    struct tc_import_stats st;
    struct tc_gemm_row r;
    struct tc_db_info *info;

    /* early log: "6912x2048x16384" with N (2048) the reduction */
    ck_assert_int_eq(import1(db, "mamf", "tests/data/db/mamf-v1.log", &opt, &st), TC_OK);
    ck_assert_int_eq(st.rows, 1);
    ck_assert_int_eq(tc_db_lookup_gemm(db, "a100-sxm4-80gb", TC_DTYPE_BF16, TC_LAYOUT_NN, 6912,
                                       16384, 2048, 1, &r),
                     TC_OK);
    ck_assert_double_eq_tol(r.time_us, 2.0 * 6912 * 16384 * 2048 / 267.9e6, 1e-6);
    /* later summary: MxNxK with K the reduction, B transposed */
    opt.gpu_id = "h100-sxm5-80gb";
    ck_assert_int_eq(import1(db, "mamf", "tests/data/db/mamf-v2-summary.log", &opt, &st), TC_OK);
    ck_assert_int_eq(st.rows, 1);
    ck_assert_int_eq(tc_db_lookup_gemm(db, "h100-sxm5-80gb", TC_DTYPE_BF16, TC_LAYOUT_NT, 2048,
                                       2048, 13312, 1, &r),
                     TC_OK);
    ck_assert_double_eq_tol(r.time_us, 2.0 * 2048 * 2048 * 13312 / 794.5e6, 1e-6);
    ck_assert_int_eq(tc_db_info_get(db, &info), TC_OK);
    ck_assert_str_eq(info->runs[0].fields[11], "event-min");
    ck_assert_str_eq(info->runs[0].fields[4], "torch=2.3.0, cuda=12.1");
    ck_assert_str_eq(info->runs[1].fields[11], "event-mean-l2flush");
    tc_db_info_free(info);
    tc_db_close(db);
}
END_TEST

START_TEST(export_import_round_trip)
{
    struct tc_db *db = tc_db_open(tmp_path("a.db"), TC_DB_CREATE), *db2;
    struct tc_import_stats st;
    int64_t rows;
    char *first, *second;
    const char *exported = tmp_path("a.csv");
    size_t len;

    ck_assert_int_eq(import1(db, "csv", "tests/data/db/vidur-small.csv", NULL, &st), TC_OK);
    ck_assert_int_eq(import1(db, "csv", "tests/data/db/neusight-small.csv", NULL, &st), TC_OK);
    ck_assert_int_eq(tc_db_export(db, "csv", NULL, exported, &rows), TC_OK);
    ck_assert_int_eq(rows, 12);
    ck_assert_int_eq(tc_db_export(db, "json", "a100-pcie-40gb", tmp_path("a.json"), &rows),
                     TC_OK);
    ck_assert_int_eq(rows, 5);
    {
        json_error_t jerr;
        json_t *root = json_load_file(tmp_path("a.json"), 0, &jerr), *gemm;

        ck_assert_msg(root != NULL, "export JSON: %s (line %d)", jerr.text, jerr.line);
        ck_assert_int_eq(json_integer_value(json_object_get(root, "schema_version")), 1);
        ck_assert_str_eq(json_string_value(json_object_get(
                             json_array_get(json_object_get(root, "gpus"), 0), "id")),
                         "a100-pcie-40gb");
        ck_assert_uint_eq(json_array_size(json_object_get(root, "runs")), 2);
        gemm = json_object_get(root, "gemm");
        ck_assert_uint_eq(json_array_size(gemm), 5);
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(gemm, 0), "algo")),
                         "ampere_sgemm_32x128_tn");
        ck_assert_double_eq_tol(json_real_value(json_object_get(json_array_get(gemm, 0),
                                                                "time_us")),
                                54.5067, 1e-9);
        json_decref(root);
    }
    ck_assert_int_eq(tc_db_export(db, "xml", NULL, tmp_path("a.xml"), &rows), TC_ERR_INVALID);
    ck_assert_int_eq(tc_db_export(db, "csv", "nope", tmp_path("b.csv"), &rows),
                     TC_ERR_NOT_FOUND);
    /* the database's own file is refused, not truncated and removed */
    ck_assert_int_eq(tc_db_export(db, "csv", NULL, tc_db_path(db), &rows), TC_ERR_INVALID);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    tc_db_close(db);

    db2 = tc_db_open(tmp_path("b.db"), TC_DB_CREATE);
    ck_assert_int_eq(tc_db_import(db2, "csv", 1, &exported,
                                  &(struct tc_import_options){.specs = specs}, &st),
                     TC_OK);
    ck_assert_int_eq(st.rows, 12);
    ck_assert_int_eq(tc_db_export(db2, "csv", NULL, tmp_path("b.csv"), &rows), TC_OK);
    tc_db_close(db2);
    first = slurp(exported, &len);
    first[len] = '\0';
    second = slurp(tmp_path("b.csv"), &len);
    second[len] = '\0';
    ck_assert_str_eq(first, second);
    free(first);
    free(second);
    ck_assert_int_eq(sql_int(tmp_path("b.db"), "SELECT count(*) FROM run WHERE kind = "
                                                "'imported' AND licence = 'MIT'"),
                     4);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Merge                                                                     */
/* ------------------------------------------------------------------------ */

START_TEST(merge_dedups)
{
    struct tc_db *a = tc_db_open(tmp_path("a.db"), TC_DB_CREATE), *b, *out;
    struct tc_import_stats st;
    struct tc_merge_stats ms;
    const char *inputs[3];
    int64_t run_a, run_b, count;

    ck_assert_int_eq(import1(a, "csv", "tests/data/db/vidur-small.csv", NULL, &st), TC_OK);
    tc_db_close(a);
    /* b: the same import plus a collected run of its own */
    b = new_db("b.db", &run_b);
    ck_assert_int_eq(import1(b, "csv", "tests/data/db/vidur-small.csv", NULL, &st), TC_OK);
    for (int i = 1; i <= 10; i++) {
        struct tc_gemm_row r = gemm_row(run_b, 256 * i, 256, 256, 10.0 + i);

        ck_assert_int_eq(tc_db_insert_gemm(b, &r), TC_OK);
    }
    {
        struct tc_attention_row at = {.run_id = run_b, .impl = TC_ATTN_UNFUSED,
                                      .dtype = TC_DTYPE_FP16, .batch = 1, .heads = 8,
                                      .seq_q = 512, .head_dim = 64, .time_us = 80.0,
                                      .scores_us = 20.0, .softmax_us = 30.0,
                                      .values_us = 25.0, .status = TC_STATUS_OK};

        ck_assert_int_eq(tc_db_insert_attention(b, &at), TC_OK);
    }
    tc_db_close(b);
    /* c: a collected run with different provenance but the same shapes */
    a = new_db("c.db", NULL);
    {
        struct tc_run_info info = {.gpu_id = "a100-sxm4-80gb", .kind = "collected",
                                   .host = "node2", .backend = "cpu", .config_hash = "cfg1",
                                   .shard = "0/1"};

        ck_assert_int_eq(tc_db_add_run(a, &info, &run_a), TC_OK);
        for (int i = 1; i <= 10; i++) {
            struct tc_gemm_row r = gemm_row(run_a, 256 * i, 256, 256, 20.0 + i);

            ck_assert_int_eq(tc_db_insert_gemm(a, &r), TC_OK);
        }
    }
    tc_db_close(a);

    inputs[0] = tmp_path("a.db");
    inputs[1] = tmp_path("b.db");
    inputs[2] = tmp_path("c.db");
    ck_assert_msg(tc_db_merge(tmp_path("out.db"), 3, inputs, &ms) == TC_OK, "%s",
                  tc_last_error());
    ck_assert_int_eq(ms.runs_added, 4);  /* 2 imported + node1 + node2 */
    ck_assert_int_eq(ms.runs_joined, 2); /* b's imported runs = a's */
    ck_assert_int_eq(ms.gemm_added, 7 + 10 + 10);
    ck_assert_int_eq(ms.gemm_duplicates, 7);
    ck_assert_int_eq(ms.attention_added, 1);
    out = tc_db_open(tmp_path("out.db"), TC_DB_READONLY);
    ck_assert_int_eq(tc_db_count_gemm(out, NULL, -1, -1, &count), TC_OK);
    ck_assert_int_eq(count, 27);
    ck_assert_int_eq(tc_db_integrity_check(out), TC_OK);
    tc_db_close(out);

    /* merging again into the existing output adds nothing */
    ck_assert_int_eq(tc_db_merge(tmp_path("out.db"), 3, inputs, &ms), TC_OK);
    ck_assert_int_eq(ms.runs_added, 0);
    ck_assert_int_eq(ms.gemm_added, 0);
    ck_assert_int_eq(ms.gemm_duplicates, 27 + 7);
    ck_assert_int_eq(ms.attention_added, 0);
    ck_assert_int_eq(ms.attention_duplicates, 1);
    ck_assert_int_eq(sql_int(tmp_path("out.db"), "SELECT round(softmax_us) FROM attention"), 30);
    ck_assert_int_eq(sql_int(tmp_path("out.db"), "SELECT count(*) FROM gemm"), 27);

    /* the output may not be an input */
    inputs[0] = tmp_path("out.db");
    ck_assert_int_eq(tc_db_merge(tmp_path("out.db"), 1, inputs, &ms), TC_ERR_INVALID);
    ck_assert_error_has("the output is also input 1");
}
END_TEST

START_TEST(compact_for_shipping)
{
    int64_t run_id;
    struct tc_db *db = new_db("p.db", &run_id);
    struct tc_gemm_row r = gemm_row(run_id, 64, 64, 64, 5.0);

    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    ck_assert_int_eq(tc_db_compact(db), TC_OK);
    tc_db_close(db);
    {
        size_t len;
        char *data = slurp(tmp_path("p.db"), &len);

        /* header bytes 18/19: 1 = rollback journal (2 would be WAL), so a
         * read-only opening needs no -wal/-shm files beside it */
        ck_assert_int_eq(data[18], 1);
        ck_assert_int_eq(data[19], 1);
        free(data);
    }
    db = tc_db_open(tmp_path("p.db"), TC_DB_READONLY);
    ck_assert_msg(db != NULL, "%s", tc_last_error());
    tc_db_close(db);
    ck_assert(!exists(tmp_path("p.db-wal")));
    ck_assert(!exists(tmp_path("p.db-shm")));
}
END_TEST

static Suite *db_suite(void)
{
    Suite *s = suite_create("db");
    TCase *core = tcase_create("core"), *refuse = tcase_create("refuse"),
          *imports = tcase_create("import");

    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_test(core, create_insert_lookup_iterate);
    tcase_add_test(core, gpu_snapshot_round_trip);
    tcase_add_test(core, resume_is_idempotent);
    tcase_add_test(core, bad_rows_rejected);
    tcase_add_test(core, untrusted_values_checked);
    tcase_add_test(core, calibration_put_get);
    tcase_add_test(core, compact_for_shipping);
    suite_add_tcase(s, core);

    tcase_add_checked_fixture(refuse, setup, teardown);
    tcase_add_test(refuse, refuses_newer_schema);
    tcase_add_test(refuse, refuses_other_sqlite);
    tcase_add_test(refuse, refuses_tilecast_id_with_wrong_tables);
    tcase_add_test(refuse, refuses_foreign_schema_objects);
    tcase_add_test(refuse, check_flags_absurd_values);
    tcase_add_test(refuse, refuses_truncated);
    tcase_add_test(refuse, refuses_corrupt_pages);
    tcase_add_test(refuse, refuses_random_and_empty);
    tcase_add_test(refuse, missing_file_needs_create);
    tcase_add_test(refuse, opens_with_a_left_over_wal);
    tcase_add_test(refuse, migrates_from_v0);
    suite_add_tcase(s, refuse);

    tcase_add_checked_fixture(imports, load_specs, free_specs);
    tcase_add_test(imports, import_csv_vidur);
    tcase_add_test(imports, import_csv_filters_and_kernels);
    tcase_add_test(imports, import_csv_errors);
    tcase_add_test(imports, import_csv_skip_untimed);
    tcase_add_test(imports, import_cookbook);
    tcase_add_test(imports, import_mamf);
    tcase_add_test(imports, export_import_round_trip);
    tcase_add_test(imports, merge_dedups);
    suite_add_tcase(s, imports);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(db_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
