/* STUB: to be implemented. */
#include "config.h"

#include "tc-internal.h"

TC_API struct tc_db * tc_db_open(const char *path, enum tc_db_mode mode)
{
    tc_error(TC_ERR_UNSUPPORTED, "tc_db_open: not implemented yet");
    return NULL;
}

TC_API void tc_db_close(struct tc_db *db)
{
}

TC_API int tc_db_schema_version(struct tc_db *db)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_schema_version: not implemented yet");
}

TC_API int tc_db_integrity_check(struct tc_db *db)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_integrity_check: not implemented yet");
}

TC_API int tc_db_begin(struct tc_db *db)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_begin: not implemented yet");
}

TC_API int tc_db_commit(struct tc_db *db)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_commit: not implemented yet");
}

TC_API int tc_db_rollback(struct tc_db *db)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_rollback: not implemented yet");
}

TC_API int tc_db_put_gpu(struct tc_db *db, const struct tc_gpu *gpu)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_put_gpu: not implemented yet");
}

TC_API int tc_db_add_run(struct tc_db *db, const struct tc_run_info *info, int64_t *run_id)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_add_run: not implemented yet");
}

TC_API int tc_db_find_run(struct tc_db *db, const char *gpu_id, const char *config_hash,
                          int64_t *run_id)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_find_run: not implemented yet");
}

TC_API int tc_db_end_run(struct tc_db *db, int64_t run_id, const char *ended_at)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_end_run: not implemented yet");
}

TC_API int tc_db_insert_gemm(struct tc_db *db, const struct tc_gemm_row *row)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_insert_gemm: not implemented yet");
}

TC_API int tc_db_lookup_gemm(struct tc_db *db, const char *gpu_id, enum tc_dtype dtype,
                             enum tc_layout layout, int64_t m, int64_t n, int64_t k,
                             int64_t batch, struct tc_gemm_row *out)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_lookup_gemm: not implemented yet");
}

TC_API int tc_db_has_gemm(struct tc_db *db, int64_t run_id, enum tc_dtype dtype,
                          enum tc_layout layout, int64_t m, int64_t n, int64_t k,
                          int64_t batch, bool *found)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_has_gemm: not implemented yet");
}

TC_API int tc_db_insert_attention(struct tc_db *db, const struct tc_attention_row *row)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_insert_attention: not implemented yet");
}

TC_API struct tc_db_iter * tc_db_iter_gemm(struct tc_db *db, const char *gpu_id, int dtype,
                                          int layout)
{
    tc_error(TC_ERR_UNSUPPORTED, "tc_db_iter_gemm: not implemented yet");
    return NULL;
}

TC_API int tc_db_iter_next(struct tc_db_iter *it, struct tc_gemm_row *row, char *gpu_id)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_db_iter_next: not implemented yet");
}

TC_API void tc_db_iter_free(struct tc_db_iter *it)
{
}
