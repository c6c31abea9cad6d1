/* Helpers the db suites share (db-fixture.c). */
#ifndef TC_TEST_DB_FIXTURE_H
#define TC_TEST_DB_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilecast/tilecast.h"

/* The test's temporary folder, made by setup and removed by teardown (a
 * checked fixture). */
extern char tmpdir[1024];
void setup(void);
void teardown(void);

/* A file of the source tree ($TILECAST_SOURCE_ROOT) and one in tmpdir;
 * each call returns one of 8 rotating buffers. */
const char *src_path(const char *rel);
const char *tmp_path(const char *name);

#define ck_assert_error_has(needle)                                                                \
    ck_assert_msg(strstr(tc_last_error(), (needle)) != NULL, "error message '%s' lacks '%s'",      \
                  tc_last_error(), (needle))

/* Whole file contents (caller frees), for byte-identical comparisons. */
char *slurp(const char *path, size_t *len);
void write_file(const char *path, const void *data, size_t len);
bool exists(const char *path);
/* SQL run on the file directly, not through tilecast. */
void sql_exec(const char *path, const char *sql);
int64_t sql_int(const char *path, const char *sql);

/* A made-up A100-like spec under the given id. */
struct tc_gpu test_gpu(const char *id);
/* A new database in tmpdir holding one GPU and (run_id not NULL) one
 * collected run. */
struct tc_db *new_db(const char *name, int64_t *run_id);
/* tc_db_open that fails the test with the library's message unless it
 * opens. */
struct tc_db *open_db(const char *path, enum tc_db_mode mode);
/* An ok fp16 NT GEMM row of run_id taking t us. */
struct tc_gemm_row gemm_row(int64_t run_id, int64_t m, int64_t n, int64_t k, double t);

#endif
