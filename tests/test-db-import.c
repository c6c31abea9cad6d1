/* Moving rows between databases and files: imports of each format with
 * their errors, the export round trip, and merge. Fixtures live in
 * tests/data/db/ (see its README). */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db-fixture.h"
#include "db.h"
#include "tilecast/tilecast.h"

/* ------------------------------------------------------------------------ */
/* Imports                                                                   */
/* ------------------------------------------------------------------------ */

static struct tc_specs *specs;

static void load_specs(void)
{
    setup();
    ck_assert_msg(tc_specs_load(src_path("gpu_specs"), &specs) == TC_OK, "%s", tc_last_error());
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
    struct tc_db *db = open_db(tmp_path("i.db"), TC_DB_CREATE);
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
    struct tc_db *db = open_db(tmp_path("i.db"), TC_DB_CREATE);
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
    ck_assert_int_eq(
        tc_db_lookup_gemm(db, "a100-pcie-40gb", TC_DTYPE_FP32, TC_LAYOUT_NT, 58, 141, 13, 1, &r),
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
    struct tc_db *db = open_db(tmp_path("f.db"), TC_DB_CREATE);
    struct tc_import_stats st;
    int64_t runs_before, runs_after;
    char *before, *after;
    int err;

    ck_assert_ptr_nonnull(db);
    ck_assert_int_eq(import1(db, "csv", "tests/data/db/vidur-small.csv", NULL, &st), TC_OK);
    before = export_text(db);
    tc_db_close(db);
    runs_before = sql_int(tmp_path("f.db"), "SELECT count(*) FROM run");

    db = open_db(tmp_path("f.db"), TC_DB_READWRITE);
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
    struct tc_db *db = open_db(tmp_path("s.db"), TC_DB_CREATE);
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
    struct tc_db *db = open_db(tmp_path("k.db"), TC_DB_CREATE);
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
    ck_assert_int_eq(
        tc_db_lookup_gemm(db, "a100-sxm4-40gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 32, 32, 4096, 1, &r),
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
    struct tc_db *db = open_db(tmp_path("m.db"), TC_DB_CREATE);
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
    struct tc_db *db = open_db(tmp_path("a.db"), TC_DB_CREATE), *db2;
    struct tc_import_stats st;
    int64_t rows;
    char *first, *second;
    const char *exported = tmp_path("a.csv");
    size_t len;

    ck_assert_int_eq(import1(db, "csv", "tests/data/db/vidur-small.csv", NULL, &st), TC_OK);
    ck_assert_int_eq(import1(db, "csv", "tests/data/db/neusight-small.csv", NULL, &st), TC_OK);
    ck_assert_int_eq(tc_db_export(db, "csv", NULL, exported, &rows), TC_OK);
    ck_assert_int_eq(rows, 12);
    ck_assert_int_eq(tc_db_export(db, "json", "a100-pcie-40gb", tmp_path("a.json"), &rows), TC_OK);
    ck_assert_int_eq(rows, 5);
    {
        json_error_t jerr;
        json_t *root = json_load_file(tmp_path("a.json"), 0, &jerr), *gemm;

        ck_assert_msg(root != NULL, "export JSON: %s (line %d)", jerr.text, jerr.line);
        ck_assert_int_eq(json_integer_value(json_object_get(root, "schema_version")),
                         TC_DB_SCHEMA_VERSION);
        ck_assert_str_eq(json_string_value(json_object_get(
                             json_array_get(json_object_get(root, "gpus"), 0), "id")),
                         "a100-pcie-40gb");
        ck_assert_uint_eq(json_array_size(json_object_get(root, "runs")), 2);
        gemm = json_object_get(root, "gemm");
        ck_assert_uint_eq(json_array_size(gemm), 5);
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(gemm, 0), "algo")),
                         "ampere_sgemm_32x128_tn");
        ck_assert_double_eq_tol(
            json_real_value(json_object_get(json_array_get(gemm, 0), "time_us")), 54.5067, 1e-9);
        json_decref(root);
    }
    ck_assert_int_eq(tc_db_export(db, "xml", NULL, tmp_path("a.xml"), &rows), TC_ERR_INVALID);
    ck_assert_int_eq(tc_db_export(db, "csv", "nope", tmp_path("b.csv"), &rows), TC_ERR_NOT_FOUND);
    /* the database's own file is refused, not truncated and removed */
    ck_assert_int_eq(tc_db_export(db, "csv", NULL, tc_db_path(db), &rows), TC_ERR_INVALID);
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    tc_db_close(db);

    db2 = open_db(tmp_path("b.db"), TC_DB_CREATE);
    ck_assert_int_eq(
        tc_db_import(db2, "csv", 1, &exported, &(struct tc_import_options){.specs = specs}, &st),
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
    struct tc_db *a = open_db(tmp_path("a.db"), TC_DB_CREATE), *b, *out;
    struct tc_import_stats st;
    struct tc_merge_stats ms;
    const char *inputs[3];
    int64_t run_a, run_b, count;

    ck_assert_int_eq(import1(a, "csv", "tests/data/db/vidur-small.csv", NULL, &st), TC_OK);
    tc_db_close(a);
    /* b: the same import plus a collected run of its own */
    b = new_db("b.db", &run_b);
    ck_assert_int_eq(import1(b, "csv", "tests/data/db/vidur-small.csv", NULL, &st), TC_OK);
    for (int64_t i = 1; i <= 10; i++) {
        struct tc_gemm_row r = gemm_row(run_b, 256 * i, 256, 256, 10.0 + i);

        ck_assert_int_eq(tc_db_insert_gemm(b, &r), TC_OK);
    }
    {
        struct tc_attention_row at = {.run_id = run_b,
                                      .impl = TC_ATTN_UNFUSED,
                                      .dtype = TC_DTYPE_FP16,
                                      .batch = 1,
                                      .heads = 8,
                                      .seq_q = 512,
                                      .head_dim = 64,
                                      .time_us = 80.0,
                                      .scores_us = 20.0,
                                      .softmax_us = 30.0,
                                      .values_us = 25.0,
                                      .status = TC_STATUS_OK};

        ck_assert_int_eq(tc_db_insert_attention(b, &at), TC_OK);
    }
    tc_db_close(b);
    /* c: a collected run with different provenance but the same shapes */
    a = new_db("c.db", NULL);
    {
        struct tc_run_info info = {.gpu_id = "a100-sxm4-80gb",
                                   .kind = "collected",
                                   .host = "node2",
                                   .backend = "cpu",
                                   .config_hash = "cfg1",
                                   .shard = "0/1"};

        ck_assert_int_eq(tc_db_add_run(a, &info, &run_a), TC_OK);
        for (int64_t i = 1; i <= 10; i++) {
            struct tc_gemm_row r = gemm_row(run_a, 256 * i, 256, 256, 20.0 + i);

            ck_assert_int_eq(tc_db_insert_gemm(a, &r), TC_OK);
        }
    }
    tc_db_close(a);

    inputs[0] = tmp_path("a.db");
    inputs[1] = tmp_path("b.db");
    inputs[2] = tmp_path("c.db");
    ck_assert_msg(tc_db_merge(tmp_path("out.db"), 3, inputs, &ms) == TC_OK, "%s", tc_last_error());
    ck_assert_int_eq(ms.runs_added, 4);  /* 2 imported + node1 + node2 */
    ck_assert_int_eq(ms.runs_joined, 2); /* b's imported runs = a's */
    ck_assert_int_eq(ms.gemm_added, 7 + 10 + 10);
    ck_assert_int_eq(ms.gemm_duplicates, 7);
    ck_assert_int_eq(ms.attention_added, 1);
    out = open_db(tmp_path("out.db"), TC_DB_READONLY);
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

/* The cuDNN frontend's attention_training result layout (rows of
 * attention_fused.csv written back in it, one unsupported case): each
 * backend stored under its own impl (flash_attention as flash2), the source's milliseconds as us,
 * its GPU name mapped to a spec id, the run keeping cupti-median and the cuDNN backend version; a
 * second import stores nothing twice. */
START_TEST(import_cudnn_frontend)
{
    struct tc_db *db = open_db(tmp_path("cf.db"), TC_DB_CREATE);
    struct tc_attention_row key = {.impl = TC_ATTN_CUDNN,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 2,
                                   .heads = 64,
                                   .kv_heads = 8,
                                   .seq_q = 4096,
                                   .seq_kv = 4096,
                                   .head_dim = 128,
                                   .causal = true,
                                   .backward = true};
    struct tc_attention_row got, *rows;
    struct tc_import_options opt = {.source = "NVIDIA/cudnn-frontend@816ea45:llama3.1.csv"};
    struct tc_import_stats st;
    size_t n;

    ck_assert_ptr_nonnull(db);
    ck_assert_msg(
        import1(db, "cudnn-frontend", "tests/data/db/cudnn-frontend-a100.csv", &opt, &st) == TC_OK,
        "%s", tc_last_error());
    ck_assert_int_eq(st.rows, 14);
    ck_assert_int_eq(st.skipped_failed, 1);
    ck_assert_int_eq(st.runs, 1);
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-pcie-80gb", &key, &got), TC_OK);
    ck_assert_double_eq_tol(got.time_us, 10772.0, 1e-6);
    ck_assert_int_eq(got.reps, 5); /* the median of iterations 6-10 */
    key.deterministic = true;
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-pcie-80gb", &key, &got), TC_OK);
    ck_assert_double_eq_tol(got.time_us, 10352.0, 1e-6);
    key.impl = TC_ATTN_CUDNN_OSS; /* its deterministic case was unsupported */
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-pcie-80gb", &key, &got), TC_ERR_NOT_FOUND);
    key.deterministic = false;
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-pcie-80gb", &key, &got), TC_OK);
    ck_assert_double_eq_tol(got.time_us, 12739.0, 1e-6);
    /* DeepSeek's 192/128 head dims, a 128-key window, a short query on a long
     * KV without a mask */
    key = (struct tc_attention_row){.impl = TC_ATTN_CUDNN,
                                    .dtype = TC_DTYPE_BF16,
                                    .batch = 2,
                                    .heads = 128,
                                    .seq_q = 32768,
                                    .head_dim = 192,
                                    .causal = true};
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-pcie-80gb", &key, &got), TC_ERR_NOT_FOUND);
    key.head_dim_vo = 128;
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-pcie-80gb", &key, &got), TC_OK);
    ck_assert_double_eq_tol(got.time_us, 749317.0, 1e-6);
    ck_assert_int_eq(
        tc_db_attention_rows(db, "a100-pcie-80gb", TC_ATTN_CUDNN, TC_DTYPE_BF16, false, &rows, &n),
        TC_OK);
    ck_assert_uint_eq(n, 5);
    for (size_t i = 0; i < n; i++) {
        if (rows[i].head_dim == 512) {
            ck_assert_int_eq(rows[i].window, 128);
            ck_assert(rows[i].causal);
        }
        if (rows[i].seq_kv == 62208) {
            ck_assert_int_eq(rows[i].seq_q, 985);
            ck_assert(!rows[i].causal);
        }
    }
    free(rows);
    tc_db_close(db);
    ck_assert_int_eq(sql_int(tmp_path("cf.db"), "SELECT count(*) FROM run WHERE timing = "
                                                "'cupti-median' AND licence = 'Apache-2.0' AND "
                                                "runtime_version = 'cudnn_backend 92700.000' "
                                                "AND kind = 'imported'"),
                     1);
    ck_assert_int_eq(sql_int(tmp_path("cf.db"), "SELECT count(DISTINCT impl) FROM attention"), 4);
    /* the benchmark's flash_attention is FlashAttention-2 */
    ck_assert_int_eq(sql_int(tmp_path("cf.db"), "SELECT count(*) FROM attention WHERE impl = "
                                                "'flash2' AND time_us = 2690"),
                     1);
    db = open_db(tmp_path("cf.db"), TC_DB_READWRITE);
    ck_assert_int_eq(
        import1(db, "cudnn-frontend", "tests/data/db/cudnn-frontend-a100.csv", &opt, &st), TC_OK);
    ck_assert_int_eq(st.rows, 0);
    ck_assert_int_eq(st.duplicates, 14);
    tc_db_close(db);
}
END_TEST

/* Bad rows of either attention layout fail the whole import, naming the
 * file, line and value; an unknown GPU name is taken as --gpu's GPU. */
START_TEST(import_attention_errors)
{
    struct tc_import_options opt = {.gpu_id = "b200"};
    struct tc_import_stats st;
    struct tc_db *db;

    assert_import_fails("cudnn-frontend", "tests/data/db/cudnn-frontend-bad-gpu.csv", NULL,
                        "cudnn-frontend-bad-gpu.csv:3:23: unknown GPU name 'NVIDIA GB300'");
    assert_import_fails("cudnn-frontend", "tests/data/db/cudnn-frontend-bad-time.csv", NULL,
                        "cudnn-frontend-bad-time.csv:3: time 1.0772e+07 us gives 0.1 TFLOP/s");
    assert_import_fails("cudnn-frontend", "tests/data/db/cudnn-frontend-bad-mask.csv", NULL,
                        "cudnn-frontend-bad-mask.csv:2:5: a top-left causal mask");
    assert_import_fails("cudnn-frontend", "tests/data/db/cudnn-frontend-bad-backend.csv", NULL,
                        "cudnn-frontend-bad-backend.csv:3:3: backend 'pyt_math'");
    assert_import_fails("cudnn-frontend", "tests/data/db/cudnn-frontend-inference-bad-time.csv",
                        NULL,
                        "cudnn-frontend-inference-bad-time.csv:2: time 15552 us gives 0.004 "
                        "TFLOP/s, but the row says 4.315");
    assert_import_fails("csv", "tests/data/db/attention-bad-impl.csv", NULL,
                        "attention-bad-impl.csv:3:3: unknown impl 'flash5'");
    /* nothing of the good rows before the bad one was kept */
    db = open_db(tmp_path("g.db"), TC_DB_CREATE);
    ck_assert_int_eq(import1(db, "csv", "tests/data/db/attention-bad-impl.csv", NULL, &st),
                     TC_ERR_PARSE);
    tc_db_close(db);
    ck_assert_int_eq(sql_int(tmp_path("g.db"), "SELECT count(*) FROM attention"), 0);
    ck_assert_int_eq(sql_int(tmp_path("g.db"), "SELECT count(*) FROM run"), 0);
    db = open_db(tmp_path("gb.db"), TC_DB_CREATE);
    ck_assert_msg(import1(db, "cudnn-frontend", "tests/data/db/cudnn-frontend-bad-gpu.csv", &opt,
                          &st) == TC_OK,
                  "%s", tc_last_error());
    ck_assert_int_eq(st.rows, 3);
    tc_db_close(db);
    ck_assert_int_eq(sql_int(tmp_path("gb.db"), "SELECT count(*) FROM run WHERE gpu_id = 'b200'"),
                     1);
}
END_TEST

/* attention_fused.csv's layout through --format csv: the rows of --gpu's
 * GPU, each source file its own run with the source's licence. */
START_TEST(import_csv_attention)
{
    struct tc_db *db = open_db(tmp_path("a.db"), TC_DB_CREATE);
    struct tc_import_options opt = {.gpu_id = "a100-pcie-80gb"};
    struct tc_import_stats st;

    ck_assert_msg(import1(db, "csv", "tests/data/db/attention-small.csv", &opt, &st) == TC_OK, "%s",
                  tc_last_error());
    ck_assert_int_eq(st.rows, 2);
    ck_assert_int_eq(st.skipped_gpu, 2);
    tc_db_close(db);
    ck_assert_int_eq(sql_int(tmp_path("a.db"), "SELECT count(*) FROM attention a JOIN run r ON "
                                               "r.id = a.run_id WHERE r.licence = 'Apache-2.0' "
                                               "AND r.source LIKE 'NVIDIA/cudnn-frontend@%' AND "
                                               "a.impl IN ('cudnn', 'cudnn_oss')"),
                     2);
}
END_TEST

/* Rows over a KV cache (attention-paged.csv: a contiguous decode, the same
 * shape through a paged cache of 256-key pages, of bf16 and of fp8): the
 * page size and the cache's dtype are part of the shape, each its own row;
 * a key names the cache it read. */
START_TEST(import_csv_paged)
{
    struct tc_db *db = open_db(tmp_path("p.db"), TC_DB_CREATE);
    struct tc_attention_row key = {.impl = TC_ATTN_CUDNN,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 8,
                                   .heads = 64,
                                   .kv_heads = 8,
                                   .seq_q = 1,
                                   .seq_kv = 8192,
                                   .head_dim = 128};
    struct tc_attention_row got, *rows;
    struct tc_import_stats st;
    size_t n;

    ck_assert_msg(import1(db, "csv", "tests/data/db/attention-paged.csv", NULL, &st) == TC_OK, "%s",
                  tc_last_error());
    ck_assert_int_eq(st.rows, 3);
    ck_assert_int_eq(tc_db_lookup_attention(db, "h200-sxm-141gb", &key, &got), TC_OK);
    ck_assert_double_eq(got.time_us, 72.0);
    ck_assert_int_eq(got.page_size, 0);
    ck_assert_int_eq(got.kv_dtype, TC_DTYPE_BF16);
    key.impl = TC_ATTN_FLASH2;
    ck_assert_int_eq(tc_db_lookup_attention(db, "h200-sxm-141gb", &key, &got), TC_ERR_NOT_FOUND);
    key.page_size = 256;
    ck_assert_int_eq(tc_db_lookup_attention(db, "h200-sxm-141gb", &key, &got), TC_OK);
    ck_assert_double_eq(got.time_us, 80.0);
    key.kv_dtype = TC_DTYPE_FP8;
    ck_assert_int_eq(tc_db_lookup_attention(db, "h200-sxm-141gb", &key, &got), TC_OK);
    ck_assert_double_eq(got.time_us, 50.0);
    ck_assert_int_eq(got.kv_dtype, TC_DTYPE_FP8);
    key.page_size = 16;
    ck_assert_int_eq(tc_db_lookup_attention(db, "h200-sxm-141gb", &key, &got), TC_ERR_NOT_FOUND);
    ck_assert_int_eq(
        tc_db_attention_rows(db, "h200-sxm-141gb", TC_ATTN_FLASH2, TC_DTYPE_BF16, false, &rows, &n),
        TC_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(rows[0].page_size, 256);
    ck_assert_int_eq(rows[0].kv_dtype, TC_DTYPE_BF16);
    ck_assert_int_eq(rows[1].page_size, 256);
    ck_assert_int_eq(rows[1].kv_dtype, TC_DTYPE_FP8);
    free(rows);
    /* a second import stores nothing twice */
    ck_assert_int_eq(import1(db, "csv", "tests/data/db/attention-paged.csv", NULL, &st), TC_OK);
    ck_assert_int_eq(st.rows, 0);
    ck_assert_int_eq(st.duplicates, 3);
    tc_db_close(db);
    ck_assert_int_eq(sql_int(tmp_path("p.db"), "SELECT count(*) FROM attention_best WHERE "
                                               "page_size = 256"),
                     2);
    ck_assert_int_eq(sql_int(tmp_path("p.db"), "SELECT count(*) FROM attention WHERE "
                                               "page_size = 0 AND kv_dtype = dtype"),
                     1);
}
END_TEST

/* The cuDNN frontend's attention_inference layout (cudnn-frontend-inference.csv:
 * three A100 decode rows of its results, then typed-in format cases): the
 * cudnn, cudnn_oss and FA4 rows stored contiguous whatever the config's
 * page_size column says (those setups allocate contiguous K and V), a
 * generation of several tokens causal, an fp8 cache on cuDNN as the fp8
 * graph it runs, a square prefill's mask told by its FLOPs; FlashInfer,
 * an absorbed MLA record and a chunked prefill (its mask unrecorded)
 * skipped and counted, as a failed case is. */
START_TEST(import_cudnn_frontend_inference)
{
    struct tc_db *db = open_db(tmp_path("inf.db"), TC_DB_CREATE);
    struct tc_attention_row key = {.impl = TC_ATTN_CUDNN,
                                   .dtype = TC_DTYPE_BF16,
                                   .batch = 1,
                                   .heads = 64,
                                   .kv_heads = 8,
                                   .seq_q = 1,
                                   .seq_kv = 2048,
                                   .head_dim = 128};
    struct tc_attention_row got;
    struct tc_import_stats st;

    ck_assert_msg(import1(db, "cudnn-frontend", "tests/data/db/cudnn-frontend-inference.csv", NULL,
                          &st) == TC_OK,
                  "%s", tc_last_error());
    ck_assert_int_eq(st.rows, 5);
    ck_assert_int_eq(st.skipped_failed, 1);
    ck_assert_int_eq(st.skipped_unmodelled, 3);
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-pcie-80gb", &key, &got), TC_OK);
    ck_assert_double_eq_tol(got.time_us, 15.552, 1e-9);
    ck_assert_int_eq(got.page_size, 0);
    ck_assert_int_eq(got.reps, 20);
    key.batch = 8;
    key.seq_q = 8;
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-pcie-80gb", &key, &got), TC_ERR_NOT_FOUND);
    key.causal = true; /* eight tokens at the cache's end: bottom-right causal */
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-pcie-80gb", &key, &got), TC_OK);
    ck_assert_double_eq_tol(got.time_us, 192.608, 1e-9);
    key = (struct tc_attention_row){.impl = TC_ATTN_CUDNN,
                                    .dtype = TC_DTYPE_FP8,
                                    .batch = 1,
                                    .heads = 64,
                                    .kv_heads = 8,
                                    .seq_q = 1,
                                    .seq_kv = 2048,
                                    .head_dim = 128};
    ck_assert_int_eq(tc_db_lookup_attention(db, "h200-sxm-141gb", &key, &got), TC_OK);
    ck_assert_int_eq(got.kv_dtype, TC_DTYPE_FP8);
    key.dtype = TC_DTYPE_BF16;
    key.seq_q = 4096;
    key.seq_kv = 4096;
    key.causal = true; /* the FLOPs of a causal square prefill */
    ck_assert_int_eq(tc_db_lookup_attention(db, "a100-pcie-80gb", &key, &got), TC_OK);
    ck_assert_double_eq_tol(got.time_us, 1500.0, 1e-9);
    tc_db_close(db);
    ck_assert_int_eq(sql_int(tmp_path("inf.db"), "SELECT count(*) FROM attention WHERE "
                                                 "page_size <> 0 OR impl = 'unfused'"),
                     0);
}
END_TEST

/* A page size or cache dtype that is not one fails the import naming file,
 * line, column and value; a backward pass reads no KV cache. */
START_TEST(import_csv_paged_errors)
{
    assert_import_fails("csv", "tests/data/db/attention-bad-page.csv", NULL,
                        "attention-bad-page.csv:2:23: page_size '-16' is not an integer");
    assert_import_fails("csv", "tests/data/db/attention-bad-kv-dtype.csv", NULL,
                        "attention-bad-kv-dtype.csv:2:22: unknown kv_cache_dtype 'fp4'");
    assert_import_fails("csv", "tests/data/db/attention-bad-paged-bwd.csv", NULL,
                        "attention-bad-paged-bwd.csv:2: a backward pass over a KV cache");
}
END_TEST

static Suite *db_import_suite(void)
{
    Suite *s = suite_create("db-import");
    TCase *imports = tcase_create("import");

    tcase_add_checked_fixture(imports, load_specs, free_specs);
    tcase_add_test(imports, import_csv_vidur);
    tcase_add_test(imports, import_csv_filters_and_kernels);
    tcase_add_test(imports, import_csv_errors);
    tcase_add_test(imports, import_csv_skip_untimed);
    tcase_add_test(imports, import_cookbook);
    tcase_add_test(imports, import_mamf);
    tcase_add_test(imports, import_cudnn_frontend);
    tcase_add_test(imports, import_attention_errors);
    tcase_add_test(imports, import_csv_attention);
    tcase_add_test(imports, import_csv_paged);
    tcase_add_test(imports, import_csv_paged_errors);
    tcase_add_test(imports, import_cudnn_frontend_inference);
    tcase_add_test(imports, export_import_round_trip);
    tcase_add_test(imports, merge_dedups);
    suite_add_tcase(s, imports);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(db_import_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
