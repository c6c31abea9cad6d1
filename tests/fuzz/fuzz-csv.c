/* The streaming CSV reader every importer and `predict gemm --input` use. */
#include "config.h"

#include "fuzz-common.h"

#include "csv.h"
#include "tc-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f;
    struct tc_csv *csv;
    int nfields, rc, records = 0;
    char **fields;

    if (size == 0)
        return 0; /* fmemopen refuses empty buffers */
    f = fmemopen((void *)data, size, "rb");
    if (!f)
        return 0;
    csv = tc_csv_new(f, "fuzz.csv");
    if (!csv) {
        fclose(f);
        return 0;
    }
    while ((rc = tc_csv_next(csv, &nfields, &fields)) == 1) {
        size_t total = 0;

        /* Touch every field so ASan sees any out-of-bounds record. */
        for (int i = 0; i < nfields; i++)
            total += strlen(fields[i]);
        if (records++ == 0)
            (void)tc_csv_find(nfields, fields, "time_us");
        (void)total;
        if (tc_csv_line(csv) <= 0)
            abort(); /* line numbers are 1-based */
    }
    if (rc < 0 && !*tc_last_error())
        abort(); /* every failure carries a message */
    tc_csv_free(csv);
    fclose(f);
    return 0;
}
