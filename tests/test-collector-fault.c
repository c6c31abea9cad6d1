/* The collector suite's second file: a backend whose device faults in
 * mid-run (CUDA's sticky errors), which the collector must store as an
 * error row and stop at, so that a re-run skips the shape. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "tc-internal.h"
#include "test-collector.h"

/* A backend whose device faults (a sticky error) while running the GEMM
 * with m = fault_m; fault_m = 0 never faults. */
static int64_t fault_m, fault_prepared_m;
static int fault_runs_of_m;

static int fault_prepare(struct tc_backend *b, const struct tc_shape *s, struct tc_outcome *oc)
{
    fault_prepared_m = s->m;
    oc->status = TC_STATUS_OK;
    oc->message[0] = '\0';
    return TC_OK;
}

static int fault_run(struct tc_backend *b, int reps, struct tc_rep_times *t, struct tc_outcome *oc)
{
    if (fault_prepared_m == 32)
        fault_runs_of_m++;
    if (fault_m && fault_prepared_m == fault_m)
        return tc_error(TC_ERR_DEVICE, "fake backend: running the shape: an illegal memory "
                                       "access was encountered");
    for (int r = 0; r < reps; r++)
        t->total_us[r] = fault_prepared_m == 16 ? 2 : 100;
    oc->status = TC_STATUS_OK;
    return TC_OK;
}

static int fault_open(int device, struct tc_backend **out, struct tc_backend_info *info)
{
    fake_open(device, out, info);
    snprintf(info->timing, sizeof(info->timing), "fakeevent-median");
    info->timer_resolution_us = 0.5;
    return TC_OK;
}

static void fault_clocks(struct tc_backend *b, char *json, size_t len)
{
    snprintf(json, len, "{}");
}

static const struct tc_backend_ops fault_ops = {
    .name = "fake",
    .open = fault_open,
    .prepare = fault_prepare,
    .run = fault_run,
    .clocks = fault_clocks,
    .close = fake_close,
};

START_TEST(test_collect_device_fault)
{
    static const char yaml[] = "name: fault\ndtypes: [fp16]\nlayouts: NN\nsets:\n"
                               "  - square: [16, 32, 48]\n";
    struct tc_sweep *sw = tc_sweep_parse(yaml, sizeof(yaml) - 1, "fault.yaml");
    struct tc_collect_opts o;
    struct tc_collect_summary sum;
    char dir[] = "/tmp/tilecast-test-XXXXXX", path[64], cmd[128];
    struct tc_db *db;
    struct tc_gemm_row row;
    bool found = false;

    ck_assert_msg(sw != NULL, "%s", tc_last_error());
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/fault.db", dir);
    tc_collect_defaults(&o);
    o.backend = &fault_ops;
    o.db_path = path;
    o.gpu_id = "unit-fake";
    o.harness.warmup_reps = 1;

    /* the fault ends the run with the device's error, the shapes before it
     * and the faulting one stored */
    fault_m = 32;
    fault_runs_of_m = 0;
    ck_assert_int_eq(tc_collect_run(&o, sw, &sum), TC_ERR_DEVICE);
    ck_assert_msg(strstr(tc_last_error(), "illegal memory access") &&
                      strstr(tc_last_error(), "stored as an error row"),
                  "%s", tc_last_error());
    ck_assert_uint_eq(sum.measured, 2);
    ck_assert_uint_eq(sum.ok, 1);
    ck_assert_uint_eq(sum.failed, 1);
    ck_assert_int_eq(fault_runs_of_m, 1);

    /* the re-run (a fresh context, where the shape would fault again)
     * skips it and measures the rest */
    ck_assert_msg(tc_collect_run(&o, sw, &sum) == TC_OK, "%s", tc_last_error());
    ck_assert(sum.resumed);
    ck_assert_uint_eq(sum.skipped, 2);
    ck_assert_uint_eq(sum.measured, 1);
    ck_assert_int_eq(fault_runs_of_m, 1);

    ck_assert_msg(tc_db_open(path, TC_DB_READONLY, &db) == TC_OK, "%s", tc_last_error());
    ck_assert_int_eq(
        tc_db_has_gemm(db, sum.run_id, TC_DTYPE_FP16, TC_LAYOUT_NN, 32, 32, 32, 1, &found), TC_OK);
    ck_assert(found);
    /* stored, but not as a measurement */
    ck_assert_int_eq(
        tc_db_lookup_gemm(db, "unit-fake", TC_DTYPE_FP16, TC_LAYOUT_NN, 32, 32, 32, 1, &row),
        TC_ERR_NOT_FOUND);
    ck_assert_int_eq(
        tc_db_lookup_gemm(db, "unit-fake", TC_DTYPE_FP16, TC_LAYOUT_NN, 48, 48, 48, 1, &row),
        TC_OK);
    ck_assert_str_eq(row.message, "");
    /* the 2 us kernel was timed in groups, and its row says so */
    ck_assert_int_eq(
        tc_db_lookup_gemm(db, "unit-fake", TC_DTYPE_FP16, TC_LAYOUT_NN, 16, 16, 16, 1, &row),
        TC_OK);
    ck_assert_double_eq(row.time_us, 2);
    ck_assert_str_eq(row.message, "timed in groups of 25 back-to-back launches (time per launch)");
    tc_db_close(db);
    fault_m = 0;
    tc_sweep_free(sw);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

TCase *collector_fault_tcase(void)
{
    TCase *tc = tcase_create("device-fault");

    tcase_add_test(tc, test_collect_device_fault);
    tcase_set_timeout(tc, 120);
    return tc;
}
