/* The argument helpers of the tilecast command (strict integer and number
 * parsing, output formats) and the name parsers flags go through. Input:
 * NUL-separated strings, the first two bytes choosing ranges. */
#include "config.h"

#include "fuzz-common.h"

#include "cli.h"
#include "tc-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const long long int_bounds[][2] = {
        {1, 1LL << 40},
        {0, 1024},
        {-5, 5},
        {(-9223372036854775807LL - 1), 9223372036854775807LL},
    };
    static const double dbl_bounds[][2] = {{0, 1}, {0, 1e300}, {-1e9, 1e9}};
    char *buf, *p, *end;
    unsigned sel = size >= 2 ? (unsigned)data[0] | (unsigned)data[1] << 8 : 0;

    buf = fuzz_strndup(size >= 2 ? data + 2 : data, size >= 2 ? size - 2 : size);
    end = buf + (size >= 2 ? size - 2 : size);
    for (p = buf; p <= end; p += strlen(p) + 1) {
        const long long *ib = int_bounds[sel % TC_ARRAY_SIZE(int_bounds)];
        const double *db = dbl_bounds[(sel >> 2) % TC_ARRAY_SIZE(dbl_bounds)];
        long long iv = 0;
        double dv = 0;
        enum cli_format fmt = CLI_FORMAT_TABLE;
        enum tc_dtype dtype;
        enum tc_layout layout;

        if (cli_parse_int("fuzz", "--n", p, ib[0], ib[1], &iv) && (iv < ib[0] || iv > ib[1]))
            abort(); /* accepted a value outside its range */
        if (cli_parse_double("fuzz", "--x", p, db[0], db[1], &dv) &&
            (!(dv >= db[0]) || !(dv <= db[1])))
            abort();
        (void)cli_parse_format(p, &fmt);
        if (tc_dtype_parse(p, &dtype) == TC_OK && (dtype < 0 || dtype >= TC_DTYPE_COUNT))
            abort();
        if (tc_layout_parse(p, &layout) == TC_OK && (layout < 0 || layout >= TC_LAYOUT_COUNT))
            abort();
        (void)tc_parse_i64(p, &iv);
        (void)tc_parse_double(p, &dv);
        sel = sel * 31 + 7;
    }
    free(buf);
    return 0;
}
