/* The database layer: create/open/insert/lookup/iterate/integrity, resume
 * idempotence, refused files (left byte-identical), migration from v0,
 * compaction for shipping. Imports, export and merge are test-db-import.c.
 * Fixtures live in tests/data/db/ (see its README). */
#include "config.h"

#include <check.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db-fixture.h"
#include "db.h"
#include "tilecast/tilecast.h"

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
    ck_assert_int_eq(tc_db_lookup_gemm(db, "a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT, 100, 100,
                                       100, 1, &out),
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
    ck_assert_int_eq(
        sql_int(tmp_path("a.db"), "SELECT round(tflops * 1000) FROM gemm_tflops WHERE m = 4096"),
        (int64_t)round(2.0 * 4096 * 4096 * 4096 / (560.5 * 1e6) * 1000));
    ck_assert_int_eq(sql_int(tmp_path("a.db"), "SELECT count(*) FROM gemm_best"), 2);
    ck_assert_int_eq(sql_int(tmp_path("a.db"), "SELECT value FROM meta WHERE key = "
                                               "'schema_version'"),
                     TC_DB_SCHEMA_VERSION);
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
    struct tc_attention_row a = {.run_id = run_id,
                                 .impl = TC_ATTN_FLASH,
                                 .dtype = TC_DTYPE_BF16,
                                 .batch = 2,
                                 .heads = 16,
                                 .seq_q = 2048,
                                 .head_dim = 128,
                                 .causal = true,
                                 .time_us = 300.0,
                                 .status = TC_STATUS_OK};
    bool found;

    ck_assert_int_eq(
        tc_db_has_gemm(db, run_id, TC_DTYPE_FP16, TC_LAYOUT_NT, 1024, 2048, 512, 1, &found), TC_OK);
    ck_assert(!found);
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    r.time_us = 99.0; /* a repeated shape keeps the first measurement */
    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    ck_assert_int_eq(
        tc_db_has_gemm(db, run_id, TC_DTYPE_FP16, TC_LAYOUT_NT, 1024, 2048, 512, 1, &found), TC_OK);
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
        ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &a, &got), TC_ERR_NOT_FOUND);
        a.causal = true;
        /* a named library's rows are stored apart from 'flash' ones */
        for (int impl = TC_ATTN_FLASH2; impl < TC_ATTN_IMPL_COUNT; impl++) {
            a.impl = (enum tc_attn_impl)impl;
            ck_assert_int_eq(tc_db_has_attention(db, run_id, &a, &found), TC_OK);
            ck_assert(!found);
            a.time_us = 310.0 + impl;
            ck_assert_msg(tc_db_insert_attention(db, &a) == TC_OK, "%s", tc_last_error());
            ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &a, &got), TC_OK);
            ck_assert_double_eq(got.time_us, 310.0 + impl);
        }
        a.impl = TC_ATTN_CUDNN_OSS;
        /* the V/O head dim, the window and the deterministic backward are
         * part of the shape: each another row, none found for the plain key */
        {
            struct tc_attention_row v = a;

            v.head_dim_vo = 64;
            ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &v, &got),
                             TC_ERR_NOT_FOUND);
            v.time_us = 250.0;
            ck_assert_int_eq(tc_db_insert_attention(db, &v), TC_OK);
            ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &v, &got), TC_OK);
            ck_assert_double_eq(got.time_us, 250.0);
            ck_assert_int_eq(got.head_dim_vo, 64);
            v.head_dim_vo = 128; /* the same as 0: head_dim */
            ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &v, &got), TC_OK);
            ck_assert_double_eq(got.time_us, 310.0 + TC_ATTN_CUDNN_OSS);
            v.window = 128;
            ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &v, &got),
                             TC_ERR_NOT_FOUND);
            ck_assert_int_eq(tc_db_insert_attention(db, &v), TC_OK);
            v.window = 0;
            v.backward = true;
            v.deterministic = true;
            ck_assert_int_eq(tc_db_insert_attention(db, &v), TC_OK);
            ck_assert_int_eq(tc_db_has_attention(db, run_id, &v, &found), TC_OK);
            ck_assert(found);
            v.deterministic = false;
            ck_assert_int_eq(tc_db_has_attention(db, run_id, &v, &found), TC_OK);
            ck_assert(!found);
            /* refused: a window without the causal mask, a deterministic forward */
            v.window = 64;
            v.causal = false;
            ck_assert_int_eq(tc_db_insert_attention(db, &v), TC_ERR_INVALID);
            ck_assert(strstr(tc_last_error(), "window 64") != NULL);
            v.window = 0;
            v.causal = true;
            v.backward = false;
            v.deterministic = true;
            ck_assert_int_eq(tc_db_insert_attention(db, &v), TC_ERR_INVALID);
            ck_assert(strstr(tc_last_error(), "deterministic") != NULL);
        }
        a.impl = TC_ATTN_FLASH;
        a.time_us = 300.0;
    }

    /* --resume finds the run of the same configuration */
    ck_assert_int_eq(tc_db_find_run(db, "a100-sxm4-80gb", "cfg1", &again), TC_OK);
    ck_assert_int_eq(again, run_id);
    ck_assert_int_eq(tc_db_find_run(db, "a100-sxm4-80gb", "other", &again), TC_ERR_NOT_FOUND);
    tc_db_close(db);
    /* one flash row, one of each named library, three variants */
    ck_assert_int_eq(sql_int(tmp_path("r.db"), "SELECT count(*) FROM attention"), 9);
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
    ck_assert_int_eq(tc_db_open(tmp_path("u.db"), TC_DB_READONLY, &db), TC_OK);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_ERR_SCHEMA);
    ck_assert_error_has("unknown dtype, layout or status");
    ck_assert_int_eq(tc_db_iter_gemm(db, NULL, -1, -1, &it), TC_OK);
    ck_assert_int_eq(tc_db_iter_next(it, &r, NULL), TC_ERR_SCHEMA);
    ck_assert_error_has("fp99");
    tc_db_iter_free(it);
    tc_db_close(db);

    /* a time the CHECK constraints let through, but no timer gives */
    sql_exec(tmp_path("u.db"), "UPDATE gemm SET dtype = 'fp16', time_us = 1e-300 WHERE m = 64;");
    db = open_db(tmp_path("u.db"), TC_DB_READONLY);
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
    db = open_db(tmp_path("u.db"), TC_DB_READONLY);
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
    ck_assert_int_eq(
        tc_db_get_calibration(db, "h100-sxm5-80gb", TC_DTYPE_BF16, -1, 3, "a100-sxm4-80gb", &out),
        TC_OK);
    ck_assert_str_eq(out.params_json, "{\"mma_eff\": 0.83}");
    ck_assert_int_eq(out.n_rows, 812);
    ck_assert_double_eq_tol(out.p90_ape_pct, 9.5, 1e-12);
    ck_assert_str_eq(out.tilecast_version, tc_version());
    ck_assert_int_eq(strlen(out.created_at), 20);
    ck_assert_int_eq(tc_db_get_calibration(db, "h100-sxm5-80gb", TC_DTYPE_BF16, -1, 3, NULL, &out),
                     TC_ERR_NOT_FOUND);
    ck_assert_int_eq(
        tc_db_get_calibration(db, "h100-sxm5-80gb", TC_DTYPE_BF16, -1, 4, "a100-sxm4-80gb", &out),
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
        struct tc_db *db;

        ck_assert_int_lt(tc_db_open(path, modes[i], &db), 0);
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
    sql_exec(tmp_path("new.db"), "PRAGMA journal_mode = DELETE; PRAGMA user_version = 99;"
                                 "UPDATE meta SET value = '99' WHERE key = 'schema_version';");
    assert_refused(tmp_path("new.db"), "schema version 99 is newer");
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
    {
        char needle[64];

        snprintf(needle, sizeof(needle), "view 'gemm_best' differs from schema v%d",
                 TC_DB_SCHEMA_VERSION);
        assert_refused(tmp_path("view.db"), needle);
    }
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
    ck_assert_int_eq(tc_db_open(tmp_path("h.db"), TC_DB_READONLY, &db), TC_OK);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_ERR_SCHEMA);
    ck_assert_error_has("dimension that is not an integer in [1, 2^40]");
    ck_assert_int_eq(tc_db_lookup_gemm(db, "a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT,
                                       9223372036854775807LL, 64, 64, 1, &r),
                     TC_ERR_SCHEMA);
    ck_assert_error_has("h.db: gemm row 1: m = 9223372036854775807 is out of range");
    tc_db_close(db);
    sql_exec(tmp_path("h.db"), "UPDATE gemm SET m = 64; UPDATE gpu SET units = -4;");
    db = open_db(tmp_path("h.db"), TC_DB_READONLY);
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
    for (int64_t i = 1; i <= 2000; i++) {
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
    memset(data + (size_t)8 * 4096, 0x5a, 64);
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
    ck_assert_int_eq(sqlite3_db_config(sql, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL), SQLITE_OK);
    ck_assert_msg(sqlite3_exec(sql,
                               "PRAGMA wal_autocheckpoint = 0; INSERT INTO gemm (run_id,"
                               " dtype, dtype_c, compute, layout, m, n, k, batch, time_us)"
                               " VALUES (1, 'fp16', 'fp16', 'fp32', 'NT', 128, 64, 64, 1,"
                               " 9.0)",
                               NULL, NULL, &err) == SQLITE_OK,
                  "%s", err ? err : "");
    sqlite3_close(sql);
    ck_assert(exists(tmp_path("w.db-wal")));
    ck_assert_msg(tc_db_open(tmp_path("w.db"), TC_DB_READONLY, &db) == TC_OK, "%s",
                  tc_last_error());
    ck_assert_int_eq(tc_db_count_gemm(db, NULL, -1, -1, &count), TC_OK);
    ck_assert_int_eq(count, 2);
    tc_db_close(db);
    ck_assert_msg(tc_db_open(tmp_path("w.db"), TC_DB_READWRITE, &db) == TC_OK, "%s",
                  tc_last_error());
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    tc_db_close(db);
}
END_TEST

/* A read-only open of a file in WAL mode with no log beside it, that a
 * writer opens meanwhile: the reader sees each commit (a reader that read
 * the bytes without locks kept the state of its opening, and pages that a
 * checkpoint rewrote under it read as corrupt), and once both are closed
 * no -wal or -shm is left. */
START_TEST(reads_what_a_later_writer_commits)
{
    int64_t run_id, count;
    struct tc_db *db = new_db("live.db", &run_id), *w;
    struct tc_gemm_row r = gemm_row(run_id, 64, 64, 64, 5.0);

    ck_assert_int_eq(tc_db_insert_gemm(db, &r), TC_OK);
    tc_db_close(db);
    ck_assert(!exists(tmp_path("live.db-wal")));
    db = open_db(tmp_path("live.db"), TC_DB_READONLY);
    ck_assert_int_eq(tc_db_count_gemm(db, NULL, -1, -1, &count), TC_OK);
    ck_assert_int_eq(count, 1);
    w = open_db(tmp_path("live.db"), TC_DB_READWRITE);
    for (int i = 0; i < 200; i++) {
        r = gemm_row(run_id, 128 + i, 64, 64, 5.0);
        ck_assert_int_eq(tc_db_insert_gemm(w, &r), TC_OK);
    }
    ck_assert_int_eq(tc_db_count_gemm(db, NULL, -1, -1, &count), TC_OK);
    ck_assert_int_eq(count, 201);
    tc_db_close(w);
    ck_assert_int_eq(tc_db_count_gemm(db, NULL, -1, -1, &count), TC_OK);
    ck_assert_int_eq(count, 201);
    tc_db_close(db);
    ck_assert(!exists(tmp_path("live.db-wal")));
    ck_assert(!exists(tmp_path("live.db-shm")));
    db = open_db(tmp_path("live.db"), TC_DB_READONLY);
    tc_db_close(db);
    ck_assert(!exists(tmp_path("live.db-wal")));
    ck_assert(!exists(tmp_path("live.db-shm")));
}
END_TEST

START_TEST(missing_file_needs_create)
{
    struct tc_db *db = NULL;

    ck_assert_int_eq(tc_db_open(tmp_path("absent.db"), TC_DB_READONLY, &db), TC_ERR_NOT_FOUND);
    ck_assert_ptr_null(db);
    ck_assert_error_has("absent.db");
    ck_assert_int_eq(tc_db_open(tmp_path("absent.db"), TC_DB_READWRITE, &db), TC_ERR_NOT_FOUND);
    ck_assert_ptr_null(db);
    ck_assert(!exists(tmp_path("absent.db")));
    ck_assert_int_lt(tc_db_open(tmpdir, TC_DB_READONLY, &db), 0);
    ck_assert_ptr_null(db);
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
    assert_refused_modes(tmp_path("v0.db"), "schema version 0 is older", 1);
    ck_assert_msg(tc_db_open(tmp_path("v0.db"), TC_DB_READWRITE, &db) == TC_OK, "%s",
                  tc_last_error());
    ck_assert_int_eq(tc_db_schema_version(db), TC_DB_SCHEMA_VERSION);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    tc_db_close(db);
    ck_assert_int_eq(sql_int(tmp_path("v0.db"), "PRAGMA user_version"), TC_DB_SCHEMA_VERSION);
    ck_assert_int_eq(sql_int(tmp_path("v0.db"), "SELECT count(*) FROM sqlite_schema WHERE "
                                                "type = 'table' AND name IN ('meta', 'gpu', "
                                                "'run', 'gemm', 'attention', 'calibration')"),
                     6);
    ck_assert_int_eq(tc_db_open(tmp_path("v0.db"), TC_DB_READONLY, &db), TC_OK);
    tc_db_close(db);
}
END_TEST

/* A v1 file (tests/data/db/schema-v1.sql, written by tilecast 0.1.0): read
 * as it is when opened read-only (the file untouched), migrated to v3 on a
 * writable open with every row kept, its attention rows reading as equal
 * head dims, no window and the default backward. */
START_TEST(migrates_from_v1)
{
    const struct tc_attention_row key = {.impl = TC_ATTN_FLASH,
                                         .dtype = TC_DTYPE_BF16,
                                         .batch = 2,
                                         .heads = 16,
                                         .seq_q = 2048,
                                         .head_dim = 128,
                                         .causal = true};
    struct tc_attention_row got, *rows = NULL, named = key;
    const char *path = tmp_path("v1.db");
    struct tc_db *db;
    size_t n, len_before, len_after;
    char *sql = slurp(src_path("tests/data/db/schema-v1.sql"), &n), *before, *after;
    int64_t rows_gemm;

    sql[n] = '\0'; /* slurp leaves room for it */
    sql_exec(path, sql);
    free(sql);
    ck_assert_int_eq(sql_int(path, "PRAGMA user_version"), 1);
    before = slurp(path, &len_before);
    ck_assert_msg(tc_db_open(path, TC_DB_READONLY, &db) == TC_OK, "%s", tc_last_error());
    ck_assert_int_eq(tc_db_schema_version(db), 1);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    ck_assert_int_eq(tc_db_count_gemm(db, NULL, -1, -1, &rows_gemm), TC_OK);
    ck_assert_int_eq(rows_gemm, 4);
    ck_assert_msg(tc_db_lookup_attention(db, "a100-sxm4-80gb", &key, &got) == TC_OK, "%s",
                  tc_last_error());
    ck_assert_double_eq(got.time_us, 300.0);
    ck_assert_int_eq(got.head_dim_vo, 128);
    /* what a v1 file cannot hold is not there */
    named.impl = TC_ATTN_CUDNN;
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &named, &got), TC_ERR_NOT_FOUND);
    named = key;
    named.head_dim_vo = 64;
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &named, &got), TC_ERR_NOT_FOUND);
    ck_assert_int_eq(
        tc_db_attention_rows(db, "a100-sxm4-80gb", TC_ATTN_FLASH, TC_DTYPE_BF16, true, &rows, &n),
        TC_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_double_eq(rows[0].time_us, 800.0);
    ck_assert_int_eq(rows[0].head_dim_vo, 128);
    ck_assert(!rows[0].deterministic && rows[0].window == 0);
    free(rows);
    tc_db_close(db);
    after = slurp(path, &len_after);
    ck_assert_uint_eq(len_before, len_after);
    ck_assert(memcmp(before, after, len_before) == 0);
    free(before);
    free(after);

    /* a merge of the v1 file reads it as it is, into a v3 file */
    ck_assert_msg(tc_db_merge(tmp_path("v1-merged.db"), 1, &path, NULL) == TC_OK, "%s",
                  tc_last_error());
    ck_assert_int_eq(sql_int(tmp_path("v1-merged.db"), "SELECT count(*) FROM attention WHERE "
                                                       "head_dim_vo = head_dim"),
                     3);

    ck_assert_msg(tc_db_open(path, TC_DB_READWRITE, &db) == TC_OK, "%s", tc_last_error());
    ck_assert_int_eq(tc_db_schema_version(db), TC_DB_SCHEMA_VERSION);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &key, &got), TC_OK);
    ck_assert_double_eq(got.time_us, 300.0);
    /* now it stores what v1 could not */
    named = key;
    named.run_id = got.run_id;
    named.impl = TC_ATTN_CUDNN_OSS;
    named.head_dim_vo = 64;
    named.time_us = 200.0;
    named.status = TC_STATUS_OK;
    ck_assert_msg(tc_db_insert_attention(db, &named) == TC_OK, "%s", tc_last_error());
    tc_db_close(db);
    ck_assert_int_eq(sql_int(path, "PRAGMA user_version"), TC_DB_SCHEMA_VERSION);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM attention"), 4);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM gemm"), 4);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM attention_best"), 4);
    /* the migrated file passes the schema check of a fresh open */
    ck_assert_msg(tc_db_open(path, TC_DB_READONLY, &db) == TC_OK, "%s", tc_last_error());
    tc_db_close(db);
}
END_TEST

/* v1 -> v3 in one open: a v1 file with a cpu-backend host (stored, as v1
 * did, as nvidia volta with no units) gets v2's attention table and v3's
 * gpu table, the host made a CPU and the GPU left as it was. */
/* A migrated file opened for writing: current schema, sound, the cpu host
 * made a CPU and the GPU left as it was; closes db. */
static void check_migrated_hosts(struct tc_db *db)
{
    struct tc_gpu g;

    ck_assert_int_eq(tc_db_schema_version(db), TC_DB_SCHEMA_VERSION);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    ck_assert_int_eq(tc_db_get_gpu(db, "host-cpu", &g), TC_OK);
    ck_assert_int_eq(g.vendor, TC_VENDOR_CPU);
    ck_assert_int_eq(g.arch, TC_ARCH_CPU);
    ck_assert_int_eq(tc_db_get_gpu(db, "a100-sxm4-80gb", &g), TC_OK);
    ck_assert_int_eq(g.vendor, TC_VENDOR_NVIDIA);
    ck_assert_int_eq(g.arch, TC_ARCH_AMPERE);
    tc_db_close(db);
}

START_TEST(migrates_cpu_host_from_v1)
{
    const char *path = tmp_path("v1cpu.db");
    struct tc_db *db;
    size_t n;
    char *sql = slurp(src_path("tests/data/db/schema-v1.sql"), &n);

    sql[n] = '\0'; /* slurp leaves room for it */
    sql_exec(path, sql);
    free(sql);
    sql_exec(path, "CREATE TEMP TABLE g AS SELECT * FROM gpu;"
                   "UPDATE g SET id = 'host-cpu', name = 'Some CPU', arch = 'volta', units = 0,"
                   "  spec_json = json_set(spec_json, '$.id', 'host-cpu', '$.arch', 'volta');"
                   "INSERT INTO gpu SELECT * FROM g;"
                   "CREATE TEMP TABLE r AS SELECT * FROM run WHERE id = 1;"
                   "UPDATE r SET id = 99, gpu_id = 'host-cpu', kind = 'collected', backend = 'cpu';"
                   "INSERT INTO run SELECT * FROM r;");
    ck_assert_int_eq(sql_int(path, "PRAGMA user_version"), 1);
    db = open_db(path, TC_DB_READWRITE);
    check_migrated_hosts(db);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM attention WHERE head_dim_vo = head_dim"),
                     3);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM gemm"), 4);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'run' AND "
                                   "sql LIKE '%REFERENCES gpu(id)%'"),
                     1);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'gpu%' OR "
                                   "name LIKE 'attention%'"),
                     3);
    db = open_db(path, TC_DB_READONLY);
    tc_db_close(db);
}
END_TEST

/* A v3 file (tests/data/db/schema-v3.sql, written by tilecast at schema
 * v3) at path. */
static void make_v3_file(const char *path)
{
    size_t n;
    char *sql = slurp(src_path("tests/data/db/schema-v3.sql"), &n);

    sql[n] = '\0'; /* slurp leaves room for it */
    sql_exec(path, sql);
    free(sql);
    ck_assert_int_eq(sql_int(path, "PRAGMA user_version"), 3);
}

/* A v2 file as v2 tilecast wrote a cpu-backend collection: the host CPU
 * stored as nvidia volta (v2's gpu table has no 'cpu' vendor). Made from a
 * v3 file: the gpu table's text is v3's less the vendor v3 added, the
 * other tables are the same in v2 and v3. */
static void make_v2_cpu_file(const char *name)
{
    make_v3_file(tmp_path(name));
    sql_exec(tmp_path(name),
             "CREATE TEMP TABLE g AS SELECT * FROM gpu;"
             "UPDATE g SET id = 'host-cpu', name = 'Some CPU', arch = 'volta', units = 0,"
             "  spec_json = json_set(spec_json, '$.id', 'host-cpu', '$.arch', 'volta');"
             "INSERT INTO gpu SELECT * FROM g;"
             "CREATE TEMP TABLE r AS SELECT * FROM run WHERE id = 1;"
             "UPDATE r SET id = 99, gpu_id = 'host-cpu', kind = 'collected', backend = 'cpu';"
             "INSERT INTO run SELECT * FROM r;"
             "PRAGMA writable_schema = ON;"
             "UPDATE sqlite_schema SET sql = replace(sql, ' OR vendor = ''cpu''', '') "
             "WHERE name = 'gpu';"
             "PRAGMA writable_schema = OFF; PRAGMA user_version = 2;"
             "UPDATE meta SET value = '2' WHERE key = 'schema_version';");
}

START_TEST(migrates_from_v2)
{
    struct tc_db *db;
    struct tc_gpu g;
    size_t len, len2;
    char *before, *after;

    make_v2_cpu_file("v2.db");
    /* read-only: read as it is, never modified */
    before = slurp(tmp_path("v2.db"), &len);
    db = open_db(tmp_path("v2.db"), TC_DB_READONLY);
    ck_assert_int_eq(tc_db_schema_version(db), 2);
    ck_assert_int_eq(tc_db_get_gpu(db, "host-cpu", &g), TC_OK);
    ck_assert_int_eq(g.vendor, TC_VENDOR_NVIDIA);
    tc_db_close(db);
    after = slurp(tmp_path("v2.db"), &len2);
    ck_assert(len == len2 && memcmp(before, after, len) == 0);
    free(before);
    free(after);
    ck_assert(!exists(tmp_path("v2.db-wal")));
    /* for writing: migrated, the host made a CPU, the GPU left as it was */
    db = open_db(tmp_path("v2.db"), TC_DB_READWRITE);
    check_migrated_hosts(db);
    ck_assert_int_eq(sql_int(tmp_path("v2.db"), "PRAGMA user_version"), TC_DB_SCHEMA_VERSION);
    ck_assert_int_eq(sql_int(tmp_path("v2.db"), "SELECT count(*) FROM gpu WHERE vendor = 'cpu' "
                                                "AND json_extract(spec_json, '$.vendor') = 'cpu'"),
                     1);
    /* run still refers to gpu, not to the table renamed away meanwhile */
    ck_assert_int_eq(sql_int(tmp_path("v2.db"), "SELECT count(*) FROM sqlite_schema WHERE "
                                                "name = 'run' AND sql LIKE '%REFERENCES gpu(id)%'"),
                     1);
    ck_assert_int_eq(sql_int(tmp_path("v2.db"), "SELECT count(*) FROM sqlite_schema WHERE "
                                                "name LIKE 'gpu%'"),
                     1);
    db = open_db(tmp_path("v2.db"), TC_DB_READONLY);
    tc_db_close(db);
}
END_TEST

/* A v3 file (tests/data/db/schema-v3.sql): read as it is when opened
 * read-only, its rows reading a contiguous KV cache of their dtype;
 * migrated to v4 on a writable open with every row kept, after which it
 * stores paged and fp8-cache rows. */
START_TEST(migrates_from_v3)
{
    struct tc_attention_row key = {.impl = TC_ATTN_CUDNN,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 1,
                                   .heads = 32,
                                   .kv_heads = 8,
                                   .seq_q = 1,
                                   .seq_kv = 8192,
                                   .head_dim = 128};
    struct tc_attention_row got, paged, *rows = NULL;
    const char *path = tmp_path("v3.db");
    struct tc_db *db;
    size_t n, len_before, len_after;
    char *before, *after;

    make_v3_file(path);
    before = slurp(path, &len_before);
    db = open_db(path, TC_DB_READONLY);
    ck_assert_int_eq(tc_db_schema_version(db), 3);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    ck_assert_msg(tc_db_lookup_attention(db, "a100-sxm4-80gb", &key, &got) == TC_OK, "%s",
                  tc_last_error());
    ck_assert_double_eq(got.time_us, 40.0);
    ck_assert_int_eq(got.page_size, 0);
    ck_assert_int_eq(got.kv_dtype, TC_DTYPE_BF16);
    /* what a v3 file cannot hold is not there */
    paged = key;
    paged.page_size = 16;
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &paged, &got), TC_ERR_NOT_FOUND);
    paged = key;
    paged.kv_dtype = TC_DTYPE_FP8;
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &paged, &got), TC_ERR_NOT_FOUND);
    ck_assert_int_eq(
        tc_db_attention_rows(db, "a100-sxm4-80gb", TC_ATTN_FLASH2, TC_DTYPE_BF16, true, &rows, &n),
        TC_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(rows[0].window, 128);
    ck_assert(rows[0].deterministic);
    ck_assert_int_eq(rows[0].page_size, 0);
    ck_assert_int_eq(rows[0].kv_dtype, TC_DTYPE_BF16);
    free(rows);
    tc_db_close(db);
    after = slurp(path, &len_after);
    ck_assert(len_before == len_after && memcmp(before, after, len_before) == 0);
    free(before);
    free(after);

    /* a merge reads the v3 file as it is */
    ck_assert_msg(tc_db_merge(tmp_path("v3-merged.db"), 1, &path, NULL) == TC_OK, "%s",
                  tc_last_error());
    ck_assert_int_eq(sql_int(tmp_path("v3-merged.db"), "SELECT count(*) FROM attention WHERE "
                                                       "page_size = 0 AND kv_dtype = dtype"),
                     5);

    db = open_db(path, TC_DB_READWRITE);
    ck_assert_int_eq(tc_db_schema_version(db), TC_DB_SCHEMA_VERSION);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &key, &got), TC_OK);
    ck_assert_double_eq(got.time_us, 40.0);
    /* now it stores what v3 could not */
    paged = key;
    paged.run_id = got.run_id;
    paged.page_size = 16;
    paged.kv_dtype = TC_DTYPE_FP8;
    paged.time_us = 30.0;
    paged.status = TC_STATUS_OK;
    ck_assert_msg(tc_db_insert_attention(db, &paged) == TC_OK, "%s", tc_last_error());
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-sxm4-80gb", &paged, &got), TC_OK);
    ck_assert_double_eq(got.time_us, 30.0);
    /* a page size below 0 is no row's */
    paged.page_size = -1;
    ck_assert_int_eq(tc_db_insert_attention(db, &paged), TC_ERR_RANGE);
    ck_assert_error_has("page size -1");
    tc_db_close(db);
    ck_assert_int_eq(sql_int(path, "PRAGMA user_version"), TC_DB_SCHEMA_VERSION);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM attention"), 6);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM attention WHERE page_size = 0 AND "
                                   "kv_dtype = dtype"),
                     5);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM attention WHERE head_dim_vo = head_dim "
                                   "AND sliding_window = 128 AND deterministic = 1"),
                     1);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM gemm"), 4);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM attention_best"), 6);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM sqlite_schema WHERE name LIKE "
                                   "'attention%'"),
                     2);
    /* the migrated file passes the schema check of a fresh open */
    db = open_db(path, TC_DB_READONLY);
    tc_db_close(db);
}
END_TEST

/* A current file with v2's gpu table is neither: refused, not read as current. */
START_TEST(refuses_v2_table_in_v3)
{
    struct tc_db *db = new_db("mixed.db", NULL);

    tc_db_close(db);
    sql_exec(tmp_path("mixed.db"), "PRAGMA journal_mode = DELETE; PRAGMA writable_schema = ON;"
                                   "UPDATE sqlite_schema SET sql = replace(sql, ' OR vendor = "
                                   "''cpu''', '') WHERE name = 'gpu';"
                                   "PRAGMA writable_schema = OFF;");
    assert_refused(tmp_path("mixed.db"), "table 'gpu' differs from schema v4");
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
    ck_assert_msg(tc_db_open(tmp_path("p.db"), TC_DB_READONLY, &db) == TC_OK, "%s",
                  tc_last_error());
    tc_db_close(db);
    ck_assert(!exists(tmp_path("p.db-wal")));
    ck_assert(!exists(tmp_path("p.db-shm")));
}
END_TEST

static Suite *db_suite(void)
{
    Suite *s = suite_create("db");
    TCase *core = tcase_create("core"), *refuse = tcase_create("refuse");

    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_test(core, create_insert_lookup_iterate);
    tcase_add_test(core, gpu_snapshot_round_trip);
    tcase_add_test(core, resume_is_idempotent);
    tcase_add_test(core, bad_rows_rejected);
    tcase_add_test(core, untrusted_values_checked);
    tcase_add_test(core, calibration_put_get);
    tcase_add_test(core, compact_for_shipping);
    tcase_add_test(core, reads_what_a_later_writer_commits);
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
    tcase_add_test(refuse, migrates_from_v1);
    tcase_add_test(refuse, migrates_cpu_host_from_v1);
    tcase_add_test(refuse, migrates_from_v2);
    tcase_add_test(refuse, migrates_from_v3);
    tcase_add_test(refuse, refuses_v2_table_in_v3);
    suite_add_tcase(s, refuse);
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
