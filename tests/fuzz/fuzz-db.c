/* Opening an untrusted database file: the input is the file. Whatever it
 * holds, opening, checking and reading it must fail cleanly or return
 * validated rows. */
#include "config.h"

#include <math.h>

#include "fuzz-common.h"

#include "tc-internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init_dir();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("untrusted.db", data, size);
    struct tc_db *db;
    struct tc_db_iter *it;
    struct tc_gemm_row row;
    char gpu[TC_ID_MAX];
    int rc, n = 0;

    rc = tc_db_open(path, TC_DB_READONLY, &db);
    if (rc < 0) {
        /* a refusal says why, and leaves nothing to close */
        if (!*tc_last_error() || db)
            abort();
        return 0;
    }
    (void)tc_db_schema_version(db);
    (void)tc_db_integrity_check(db);
    (void)tc_db_iter_gemm(db, NULL, -1, -1, &it);
    while (it && n++ < 10000 && (rc = tc_db_iter_next(it, &row, gpu)) == 1) {
        /* rows handed out are validated */
        if (row.m <= 0 || row.n <= 0 || row.k <= 0 || row.batch <= 0 || !(row.time_us > 0) ||
            !isfinite(row.time_us) || memchr(gpu, '\0', sizeof(gpu)) == NULL ||
            memchr(row.algo, '\0', sizeof(row.algo)) == NULL)
            abort();
        (void)tc_db_lookup_gemm(db, gpu, row.dtype, row.layout, row.m, row.n, row.k, row.batch,
                                &row);
    }
    tc_db_iter_free(it);
    tc_db_close(db);
    return 0;
}
