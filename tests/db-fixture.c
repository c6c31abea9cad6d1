/* Helpers the db suites share (test-db.c, test-db-import.c,
 * test-predictor.c): a temporary folder per test, files read and written
 * whole, SQL run behind the library's back, and small databases built
 * through the public API. */
#include "config.h"

#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db-fixture.h"

char tmpdir[1024];
static char path_buf[8][4096];
static int next_buf;

const char *src_path(const char *rel)
{
    const char *root = getenv("TILECAST_SOURCE_ROOT");
    char *buf = path_buf[next_buf++ % 8];

    ck_assert_msg(root && *root, "TILECAST_SOURCE_ROOT is not set (run through meson test)");
    snprintf(buf, sizeof(path_buf[0]), "%s/%s", root, rel);
    return buf;
}

const char *tmp_path(const char *name)
{
    char *buf = path_buf[next_buf++ % 8];

    snprintf(buf, sizeof(path_buf[0]), "%s/%s", tmpdir, name);
    return buf;
}

void setup(void)
{
    const char *base = getenv("TMPDIR");

    snprintf(tmpdir, sizeof(tmpdir), "%s/tc-test-db-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

void teardown(void)
{
    char cmd[4200];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Whole file contents, for byte-identical comparisons. */
char *slurp(const char *path, size_t *len)
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

void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");

    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

bool exists(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0;
}

void sql_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    char *err = NULL;

    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql,
                  err ? err : "");
    sqlite3_close(db);
}

int64_t sql_int(const char *path, const char *sql)
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

struct tc_gpu test_gpu(const char *id)
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

struct tc_db *open_db(const char *path, enum tc_db_mode mode)
{
    struct tc_db *db;

    ck_assert_msg(tc_db_open(path, mode, &db) == TC_OK, "%s: %s", path, tc_last_error());
    return db;
}

/* A new database holding one GPU and one collected run. */
struct tc_db *new_db(const char *name, int64_t *run_id)
{
    struct tc_db *db = open_db(tmp_path(name), TC_DB_CREATE);
    struct tc_gpu g = test_gpu("a100-sxm4-80gb");
    struct tc_run_info info = {.gpu_id = "a100-sxm4-80gb",
                               .kind = "collected",
                               .host = "node1",
                               .backend = "cpu",
                               .config_hash = "cfg1",
                               .timing = "event-median-l2flush",
                               .shard = "0/1"};

    ck_assert_msg(db != NULL, "%s", tc_last_error());
    ck_assert_int_eq(tc_db_put_gpu(db, &g), TC_OK);
    if (run_id)
        ck_assert_msg(tc_db_add_run(db, &info, run_id) == TC_OK, "%s", tc_last_error());
    return db;
}

struct tc_gemm_row gemm_row(int64_t run_id, int64_t m, int64_t n, int64_t k, double t)
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
