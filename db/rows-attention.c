/* Rows of table attention: inserting (checked first), lookup of one shape
 * and reading every row of a GPU, each value read back checked. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "db-internal.h"

/* The resolved V/O head dim of a row or key: 0 means head_dim. */
static int64_t head_dim_vo(const struct tc_attention_row *r)
{
    return r->head_dim_vo ? r->head_dim_vo : r->head_dim;
}

/* The resolved KV-cache dtype of a row or key: FP64 (0) means dtype. */
static enum tc_dtype kv_dtype(const struct tc_attention_row *r)
{
    return r->kv_dtype == TC_DTYPE_FP64 ? r->dtype : r->kv_dtype;
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
    sqlite3_bind_int(st, first + 9, r->backward ? 1 : 0);
    sqlite3_bind_int64(st, first + 10, head_dim_vo(r));
    sqlite3_bind_int64(st, first + 11, r->window);
    sqlite3_bind_int(st, first + 12, r->deterministic ? 1 : 0);
    sqlite3_bind_int64(st, first + 13, r->page_size);
    return sqlite3_bind_text(st, first + 14, tc_dtype_name(kv_dtype(r)), -1, SQLITE_STATIC);
}

/* Whether a key can have rows in a v1 file, whose attention table holds
 * 'flash' and 'unfused' rows of equal head dims, without a window or a
 * deterministic backward (a file opened read-only is not migrated). */
static bool v1_key(const struct tc_attention_row *r)
{
    return (r->impl == TC_ATTN_UNFUSED || r->impl == TC_ATTN_FLASH) &&
           head_dim_vo(r) == r->head_dim && !r->window && !r->deterministic;
}

/* Whether a key can have rows in a v1-v3 file, whose rows read a
 * contiguous KV cache of their own dtype. */
static bool v3_key(const struct tc_attention_row *r)
{
    return r->page_size == 0 && kv_dtype(r) == r->dtype;
}

static int check_attention_row(struct tc_db *db, const struct tc_attention_row *r)
{
    if ((unsigned)r->dtype >= TC_DTYPE_COUNT || (unsigned)r->impl >= TC_ATTN_IMPL_COUNT ||
        (unsigned)r->kv_dtype >= TC_DTYPE_COUNT)
        return tc_error(TC_ERR_INVALID,
                        "%s: attention row with an invalid dtype, KV-cache dtype or impl",
                        db->path);
    if (r->page_size < 0 || r->page_size > INT32_MAX)
        return tc_error(TC_ERR_RANGE, "%s: attention page size %lld: keys per page, 0 or more",
                        db->path, (long long)r->page_size);
    if (r->batch <= 0 || r->heads <= 0 || r->kv_heads < 0 || r->seq_q <= 0 || r->seq_kv < 0 ||
        r->head_dim <= 0 || r->head_dim_vo < 0)
        return tc_error(TC_ERR_RANGE,
                        "%s: attention b=%lld h=%lld s=%lld d=%lld: dimensions "
                        "must be positive",
                        db->path, (long long)r->batch, (long long)r->heads, (long long)r->seq_q,
                        (long long)r->head_dim);
    if (r->window < 0 || (r->window && !r->causal))
        return tc_error(TC_ERR_INVALID,
                        "%s: attention window %lld: a sliding window is a causal mask's, of "
                        "a positive number of keys",
                        db->path, (long long)r->window);
    if (r->deterministic && !r->backward)
        return tc_error(TC_ERR_INVALID,
                        "%s: attention: deterministic is a property of the backward pass",
                        db->path);
    if ((unsigned)r->status > TC_STATUS_ERROR)
        return tc_error(TC_ERR_INVALID, "%s: attention row with an invalid status", db->path);
    if (r->status == TC_STATUS_OK && (!isfinite(r->time_us) || r->time_us <= 0))
        return tc_error(TC_ERR_RANGE, "%s: attention: an ok row needs a positive time", db->path);
    if (r->status == TC_STATUS_OK && tc_bound_check_time("time_us", r->time_us) < 0)
        return tc_error_prefix(TC_ERR_RANGE, "%s: attention", db->path);
    if (!memchr(r->message, '\0', sizeof(r->message)))
        return tc_error(TC_ERR_INVALID, "%s: attention row with an unterminated message", db->path);
    return TC_OK;
}

int db_insert_attention(struct tc_db *db, const struct tc_attention_row *r, bool *inserted)
{
    sqlite3_stmt *st;
    int err, rc;

    *inserted = false;
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
    db_bind_pos_double(st, 12, r->time_us);
    db_bind_pos_double(st, 13, r->min_us);
    db_bind_pos_double(st, 14, r->spread_pct);
    db_bind_pos_int(st, 15, r->reps);
    db_bind_pos_double(st, 16, r->scores_us);
    db_bind_pos_double(st, 17, r->softmax_us);
    db_bind_pos_double(st, 18, r->values_us);
    sqlite3_bind_text(st, 19, tc_status_name(r->status), -1, SQLITE_STATIC);
    db_bind_text(st, 20, r->message);
    sqlite3_bind_int64(st, 21, head_dim_vo(r));
    sqlite3_bind_int64(st, 22, r->window);
    sqlite3_bind_int(st, 23, r->deterministic ? 1 : 0);
    sqlite3_bind_int64(st, 24, r->page_size);
    sqlite3_bind_text(st, 25, tc_dtype_name(kv_dtype(r)), -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        if ((rc & 0xff) == SQLITE_CONSTRAINT)
            return tc_error(TC_ERR_INVALID, "%s: attention row of run %lld: %s", db->path,
                            (long long)r->run_id, sqlite3_errmsg(db->sql));
        return db_fail(db, rc, "inserting an attention row");
    }
    *inserted = sqlite3_changes(db->sql) > 0;
    return TC_OK;
}

TC_API int tc_db_insert_attention(struct tc_db *db, const struct tc_attention_row *r)
{
    bool inserted;

    if (!db || !r)
        return tc_error(TC_ERR_INVALID, "tc_db_insert_attention: missing argument");
    return db_insert_attention(db, r, &inserted);
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

/* A checked read in the two row readers below: on an error, to the
 * function's label bad with err set. */
#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((err = (x)) < 0)                                                                       \
            goto bad;                                                                              \
    } while (0)

/* The measured columns of an attention row, time_us, min_us, spread_pct,
 * reps, scores_us, softmax_us and values_us from column c on, each checked
 * (an untrusted file), into r. */
static int read_times(struct tc_db *db, sqlite3_stmt *st, int c, struct tc_attention_row *r,
                      int64_t id)
{
    int64_t reps;
    int err;

    if ((err = db_column_real(db, st, c, true, &r->time_us, "time_us", id)) < 0 ||
        (err = db_column_time(db, st, c, &r->time_us, "time_us", id)) < 0 ||
        (err = db_column_time(db, st, c + 1, &r->min_us, "min_us", id)) < 0 ||
        (err = db_column_real(db, st, c + 2, false, &r->spread_pct, "spread_pct", id)) < 0 ||
        (err = db_column_int_range(db, st, c + 3, 0, 1 << 30, true, &reps, "reps", id)) < 0 ||
        (err = db_column_real(db, st, c + 4, false, &r->scores_us, "scores_us", id)) < 0 ||
        (err = db_column_real(db, st, c + 5, false, &r->softmax_us, "softmax_us", id)) < 0 ||
        (err = db_column_real(db, st, c + 6, false, &r->values_us, "values_us", id)) < 0)
        return err;
    r->reps = (int)reps;
    return TC_OK;
}

/* A v1 file (opened read-only, not migrated) has no head_dim_vo,
 * sliding_window or deterministic column: its rows read as equal head
 * dims, no window and the default backward. A v1-v3 file has no page_size
 * or kv_dtype: its rows read a contiguous cache of their dtype. */
#define V1_EXTRA "a.head_dim, 0, 0, 0, a.dtype"
#define V2_EXTRA "a.head_dim_vo, a.sliding_window, a.deterministic, 0, a.dtype"
#define V4_EXTRA "a.head_dim_vo, a.sliding_window, a.deterministic, a.page_size, a.kv_dtype"

TC_API int tc_db_lookup_attention(struct tc_db *db, const char *gpu_id,
                                  const struct tc_attention_row *key, struct tc_attention_row *out)
{
    static const char sql_v4[] =
        "SELECT a.id, a.run_id, a.time_us, a.min_us, a.spread_pct, a.reps, a.scores_us,"
        " a.softmax_us, a.values_us FROM run r JOIN attention a ON a.run_id = r.id"
        " WHERE r.gpu_id = ?1 AND a.batch = ?2 AND a.heads = ?3 AND a.kv_heads = ?4"
        " AND a.seq_q = ?5 AND a.seq_kv = ?6 AND a.head_dim = ?7 AND a.dtype = ?8"
        " AND a.impl = ?9 AND a.causal = ?10 AND a.backward = ?11 AND a.head_dim_vo = ?12"
        " AND a.sliding_window = ?13 AND a.deterministic = ?14 AND a.page_size = ?15"
        " AND a.kv_dtype = ?16 AND a.status = 'ok' ORDER BY a.time_us LIMIT 1";
    /* ?15-?16 bound but unused: v3_key has checked them */
    static const char sql_v2[] =
        "SELECT a.id, a.run_id, a.time_us, a.min_us, a.spread_pct, a.reps, a.scores_us,"
        " a.softmax_us, a.values_us FROM run r JOIN attention a ON a.run_id = r.id"
        " WHERE r.gpu_id = ?1 AND a.batch = ?2 AND a.heads = ?3 AND a.kv_heads = ?4"
        " AND a.seq_q = ?5 AND a.seq_kv = ?6 AND a.head_dim = ?7 AND a.dtype = ?8"
        " AND a.impl = ?9 AND a.causal = ?10 AND a.backward = ?11 AND a.head_dim_vo = ?12"
        " AND a.sliding_window = ?13 AND a.deterministic = ?14 AND a.status = 'ok'"
        " ORDER BY a.time_us LIMIT 1";
    /* ?12-?16 bound but unused: v1_key and v3_key have checked them */
    static const char sql_v1[] =
        "SELECT a.id, a.run_id, a.time_us, a.min_us, a.spread_pct, a.reps, a.scores_us,"
        " a.softmax_us, a.values_us FROM run r JOIN attention a ON a.run_id = r.id"
        " WHERE r.gpu_id = ?1 AND a.batch = ?2 AND a.heads = ?3 AND a.kv_heads = ?4"
        " AND a.seq_q = ?5 AND a.seq_kv = ?6 AND a.head_dim = ?7 AND a.dtype = ?8"
        " AND a.impl = ?9 AND a.causal = ?10 AND a.backward = ?11"
        " AND a.status = 'ok' ORDER BY a.time_us LIMIT 1";
    sqlite3_stmt *st = NULL;
    char idtext[32];
    int64_t id;
    int err = TC_OK, rc;

    if (!db || !gpu_id || !key || !out)
        return tc_error(TC_ERR_INVALID, "tc_db_lookup_attention: missing argument");
    if ((unsigned)key->dtype >= TC_DTYPE_COUNT || (unsigned)key->impl >= TC_ATTN_IMPL_COUNT ||
        (unsigned)key->kv_dtype >= TC_DTYPE_COUNT)
        return tc_error(TC_ERR_INVALID, "tc_db_lookup_attention: invalid dtype or impl");
    if ((db->schema_version < 2 && !v1_key(key)) || (db->schema_version < 4 && !v3_key(key)))
        return tc_error(TC_ERR_NOT_FOUND, "%s: no attention measurement of that shape on %s",
                        db->path, gpu_id);
    rc = sqlite3_prepare_v2(db->sql,
                            db->schema_version < 2   ? sql_v1
                            : db->schema_version < 4 ? sql_v2
                                                     : sql_v4,
                            -1, &st, NULL);
    if (rc != SQLITE_OK)
        return db_fail(db, rc, "looking up attention");
    bind_attention_key(st, key, 2);
    sqlite3_bind_text(st, 1, gpu_id, -1, SQLITE_TRANSIENT);
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
    out->head_dim_vo = head_dim_vo(key);
    out->kv_dtype = kv_dtype(key);
    out->status = TC_STATUS_OK;
    out->message[0] = '\0';
    id = sqlite3_column_int64(st, 0);
    TRY(db_column_int_range(db, st, 1, 1, INT64_MAX, false, &out->run_id, "run_id", id));
    TRY(read_times(db, st, 2, out, id));
    goto out;
bad:
    snprintf(idtext, sizeof(idtext), "%lld", (long long)id);
    db_row_error(db, err, "attention row", idtext);
out:
    sqlite3_finalize(st);
    return err;
}

int tc_db_attention_rows(struct tc_db *db, const char *gpu_id, enum tc_attn_impl impl,
                         enum tc_dtype dtype, bool backward, struct tc_attention_row **rows,
                         size_t *n)
{
#define ROWS_SQL(extra)                                                                            \
    "SELECT a.id, a.run_id, a.batch, a.heads, a.kv_heads, a.seq_q, a.seq_kv, a.head_dim,"          \
    " a.causal, a.time_us, a.min_us, a.spread_pct, a.reps, a.scores_us, a.softmax_us,"             \
    " a.values_us, " extra " FROM run r JOIN attention a ON a.run_id = r.id"                       \
    " WHERE r.gpu_id = ?1 AND a.dtype = ?2 AND a.impl = ?3 AND a.backward = ?4"                    \
    " AND a.status = 'ok' ORDER BY a.id"
    static const char sql_v1[] = ROWS_SQL(V1_EXTRA), sql_v2[] = ROWS_SQL(V2_EXTRA),
                      sql_v4[] = ROWS_SQL(V4_EXTRA);
#undef ROWS_SQL
    struct tc_attention_row *list = NULL, *grown;
    sqlite3_stmt *st = NULL;
    size_t count = 0, cap = 0;
    char idtext[32], text[16];
    int64_t id = 0, v;
    int err = TC_OK, rc;

    if (!db || !gpu_id || !rows || !n)
        return tc_error(TC_ERR_INVALID, "tc_db_attention_rows: missing argument");
    *rows = NULL;
    *n = 0;
    /* every implementation may be asked for; those a v1 file cannot store
     * simply have no rows */
    if ((unsigned)dtype >= TC_DTYPE_COUNT || (unsigned)impl >= TC_ATTN_IMPL_COUNT)
        return tc_error(TC_ERR_INVALID, "tc_db_attention_rows: invalid dtype or impl");
    rc = sqlite3_prepare_v2(db->sql,
                            db->schema_version < 2   ? sql_v1
                            : db->schema_version < 4 ? sql_v2
                                                     : sql_v4,
                            -1, &st, NULL);
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
        TRY(db_column_int_range(db, st, 1, 1, INT64_MAX, false, &r->run_id, "run_id", id));
        TRY(db_column_int_range(db, st, 2, 1, INT32_MAX, false, &r->batch, "batch", id));
        TRY(db_column_int_range(db, st, 3, 1, INT32_MAX, false, &r->heads, "heads", id));
        TRY(db_column_int_range(db, st, 4, 1, INT32_MAX, false, &r->kv_heads, "kv_heads", id));
        TRY(db_column_int_range(db, st, 5, 1, INT32_MAX, false, &r->seq_q, "seq_q", id));
        TRY(db_column_int_range(db, st, 6, 1, INT32_MAX, false, &r->seq_kv, "seq_kv", id));
        TRY(db_column_int_range(db, st, 7, 1, INT32_MAX, false, &r->head_dim, "head_dim", id));
        TRY(db_column_int_range(db, st, 8, 0, 1, false, &v, "causal", id));
        r->causal = v != 0;
        TRY(read_times(db, st, 9, r, id));
        TRY(db_column_int_range(db, st, 16, 1, INT32_MAX, false, &r->head_dim_vo, "head_dim_vo",
                                id));
        TRY(db_column_int_range(db, st, 17, 0, INT32_MAX, false, &r->window, "sliding_window", id));
        TRY(db_column_int_range(db, st, 18, 0, 1, false, &v, "deterministic", id));
        r->deterministic = v != 0;
        TRY(db_column_int_range(db, st, 19, 0, INT32_MAX, false, &r->page_size, "page_size", id));
        TRY(db_column_text(db, st, 20, text, sizeof(text), "kv_dtype"));
        TRY(db_parse_dtype(db, text, &r->kv_dtype));
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
    db_row_error(db, err, "attention row", idtext);
out:
    sqlite3_finalize(st);
    free(list);
    return err;
}
