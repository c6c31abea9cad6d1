/* The base layer's fixed-point formatter (common/format.c) against printf,
 * which it must match byte for byte: random doubles over every magnitude
 * the batch paths print, the exact ties (which round to even), values that
 * round up into the next integer, signs and zeros, and the range handed to
 * printf itself. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "format.h"

static void same_as_printf(double x, int decimals)
{
    char want[512], got[512];
    size_t n;

    snprintf(want, sizeof(want), "%.*f", decimals, x);
    n = tc_format_fixed(got, sizeof(got), x, decimals);
    ck_assert_msg(strcmp(got, want) == 0 && n == strlen(want),
                  "%a with %d decimals: got '%s' (%zu), printf '%s'", x, decimals, got, n, want);
}

/* xorshift64*: the same numbers on every run */
static uint64_t next_u64(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

START_TEST(random_doubles)
{
    uint64_t s = 0x9e3779b97f4a7c15ULL;

    for (int i = 0; i < 400000; i++) {
        /* a random mantissa at a random binary exponent in [2^-70, 2^60] */
        double m = (double)(next_u64(&s) >> 11) / 9007199254740992.0;
        int e = (int)(next_u64(&s) % 131) - 70;
        double x = ldexp(0.5 + m / 2, e);

        same_as_printf(i & 1 ? -x : x, (int)(next_u64(&s) % 10));
        same_as_printf(x, 4);
    }
}
END_TEST

START_TEST(ties_round_to_even)
{
    /* exactly representable halves of the last digit */
    static const double ties[] = {0.5,     1.5,     2.5,      0.25,        0.75,
                                  0.125,   0.375,   1.0625,   2.03125,     1e6 + 0.5,
                                  0.00005, 0.00015, 1.00005,  12345.03125, 4503599627370495.5,
                                  0.0625,  0.1875,  0.046875, 0.984375};
    for (size_t i = 0; i < sizeof(ties) / sizeof(ties[0]); i++)
        for (int d = 0; d <= 9; d++) {
            same_as_printf(ties[i], d);
            same_as_printf(-ties[i], d);
        }
}
END_TEST

START_TEST(edges)
{
    static const double xs[] = {
        0.0,         -0.0,      1.0,        0.99995, 0.999949999, 9.99995,
        99999.99995, 1e-300,    -1e-300,    5e-324,  0x1p-60,     0x1p-61,
        0x1p-80,     0x1p52,    0x1p53 - 1, 0x1p53,  1e17,        1.7976931348623157e308,
        123.456,     2156.1389, 70.60025,   NAN,     INFINITY,    -INFINITY};
    for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
        for (int d = 0; d <= 9; d++)
            same_as_printf(xs[i], d);
}
END_TEST

static Suite *format_suite(void)
{
    Suite *s = suite_create("format");
    TCase *tc = tcase_create("fixed");

    tcase_add_test(tc, random_doubles);
    tcase_add_test(tc, ties_round_to_even);
    tcase_add_test(tc, edges);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(format_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
