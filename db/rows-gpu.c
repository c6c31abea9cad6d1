/* Rows of table gpu: the GPU spec snapshot each run refers to, stored and
 * read through one column table so that the two cannot disagree. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "db-internal.h"

enum col_type { COL_INT, COL_I64, COL_DBL, COL_STR, COL_VENDOR, COL_ARCH };

struct gpu_col {
    const char *name;
    enum col_type type;
    size_t offset;
    size_t size;
};

#define GCOL(name, type, field)                                                                    \
    {                                                                                              \
        name, type, offsetof(struct tc_gpu, field), sizeof(((struct tc_gpu *)0)->field)            \
    }
#define GPEAK(name, arr, i)                                                                        \
    {                                                                                              \
        name, COL_DBL, offsetof(struct tc_gpu, arr) + (i) * sizeof(double), sizeof(double)         \
    }

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
const char *db_put_gpu_statement(char *buf, size_t len)
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
    return v == TC_VENDOR_AMD ? "amd" : v == TC_VENDOR_CPU ? "cpu" : "nvidia";
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
    if ((unsigned)gpu->vendor > TC_VENDOR_CPU)
        return tc_error(TC_ERR_INVALID, "tc_db_put_gpu: %s: invalid vendor %d", gpu->id,
                        (int)gpu->vendor);
    err = db_stmt(db, DB_ST_PUT_GPU, &st);
    if (err < 0)
        return err;
    for (size_t i = 0; i < TC_ARRAY_SIZE(gpu_cols); i++) {
        const char *p = (const char *)gpu + gpu_cols[i].offset;
        int idx = (int)i + 1;

        switch (gpu_cols[i].type) {
        case COL_INT:
            rc = sqlite3_bind_int(st, idx, *(const int *)p);
            break;
        case COL_I64:
            rc = sqlite3_bind_int64(st, idx, *(const int64_t *)p);
            break;
        case COL_DBL:
            rc = sqlite3_bind_double(st, idx, *(const double *)p);
            break;
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
        default:
            rc = SQLITE_MISUSE;
            break;
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
            err = db_column_int_range(db, st, c, 0, 1LL << 30, false, &v, gpu_cols[i].name, 0);
            if (err == TC_OK)
                *(int *)p = (int)v;
            break;
        case COL_I64:
            err = db_column_int_range(db, st, c, 0, INT64_MAX, false, &v, gpu_cols[i].name, 0);
            if (err == TC_OK)
                *(int64_t *)p = v;
            break;
        case COL_DBL:
            err = db_column_real(db, st, c, false, (double *)p, gpu_cols[i].name, 0);
            break;
        case COL_STR:
            err = db_column_text(db, st, c, p, gpu_cols[i].size, gpu_cols[i].name);
            break;
        case COL_VENDOR:
            err = db_column_text(db, st, c, text, sizeof(text), "vendor");
            if (err == TC_OK)
                *(enum tc_vendor *)p = strcmp(text, "amd") == 0   ? TC_VENDOR_AMD
                                       : strcmp(text, "cpu") == 0 ? TC_VENDOR_CPU
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
        db_row_error(db, err, "GPU", gpu_id);
out:
    sqlite3_finalize(st);
    return err;
}
