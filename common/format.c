/* Fixed-point number formatting, exactly as printf's "%.Nf" writes it and
 * several times faster: the batch paths (predict gemm --input, eval) write
 * five or more numbers a row, and glibc's printf of a double (arbitrary
 * precision division, format parsing, locale) cost more than the model.
 *
 * Exact means byte-identical to printf for every double: the fraction of a
 * double x in [2^-60, 2^53) is F / 2^E with integers F < 2^E and E <= 112,
 * so F * 10^N / 2^E is done in 128-bit integers with its remainder, and
 * rounded to nearest with ties to even, as glibc rounds the exact binary
 * value in the default rounding mode. From 2^53 up, for NaN and infinities
 * and without a 128-bit integer type, it is printf itself. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "format.h"

static const uint64_t pow10_u64[] = {1,      10,      100,      1000,      10000,
                                     100000, 1000000, 10000000, 100000000, 1000000000};

/* "00" to "99": two digits per division by 100 */
static const char digit_pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
                                  "31323334353637383940414243444546474849505152535455565758596061"
                                  "6263646566676869707172737475767778798081828384858687888990919293"
                                  "949596979899";

static size_t printf_fixed(char *buf, size_t len, double x, int decimals)
{
    int n = snprintf(buf, len, "%.*f", decimals, x);

    return n < 0 ? 0 : (size_t)n;
}

size_t tc_format_fixed(char *buf, size_t len, double x, int decimals)
{
#ifdef __SIZEOF_INT128__
    /* __extension__: a GCC and Clang type that -Wpedantic would flag */
    __extension__ typedef unsigned __int128 u128;
    char digits[24];
    uint64_t bits, m, ip, frac_digits;
    u128 f, num, q = 0;
    int sh, nd;
    size_t o = 0;

    if (decimals < 0 || decimals > 9 || !(fabs(x) < 9007199254740992.0) || len < 48)
        return printf_fixed(buf, len, x, decimals);
    /* |x| = m / 2^sh exactly, from the bits: a 53-bit integer m (the
     * implicit one added unless subnormal) and the binary exponent */
    memcpy(&bits, &x, sizeof(bits));
    m = bits & ((1ULL << 52) - 1);
    sh = (int)((bits >> 52) & 0x7ff);
    if (sh)
        m |= 1ULL << 52;
    else
        sh = 1; /* subnormal: the exponent of the smallest normal */
    sh = 1075 - sh;
    if (sh <= 0) { /* an integer of 53 bits or more: no fraction */
        ip = m << -sh;
        f = 0;
        sh = 1;
    } else {
        ip = sh < 64 ? m >> sh : 0;
        f = sh < 64 ? m & ((1ULL << sh) - 1) : m;
    }
    /* the fraction f / 2^sh times 10^decimals, rounded to nearest, ties to
     * the even last digit (the integer's with no decimals); under 2^-73
     * (sh > 126) it is below half a unit of the ninth decimal */
    if (f && sh < 64 && (uint64_t)f <= UINT64_MAX / pow10_u64[decimals]) {
        /* the same in 64 bits, where the product fits (values from about
         * 4 up with 4 decimals): the common case, and the 128-bit shifts
         * were most of the cost */
        uint64_t num64 = (uint64_t)f * pow10_u64[decimals], q64 = num64 >> sh;
        uint64_t r = num64 - (q64 << sh), half = (uint64_t)1 << (sh - 1);

        if (r > half || (r == half && ((decimals ? q64 : ip) & 1)))
            q64++;
        if (q64 >= pow10_u64[decimals]) {
            q64 -= pow10_u64[decimals];
            ip++;
        }
        q = q64;
    } else if (f && sh <= 126) {
        u128 r, half = (u128)1 << (sh - 1);

        num = f * pow10_u64[decimals];
        q = num >> sh;
        r = num - (q << sh);
        if (r > half || (r == half && ((decimals ? (uint64_t)q : ip) & 1)))
            q++;
        if (q >= pow10_u64[decimals]) { /* the fraction rounded up to one */
            q -= pow10_u64[decimals];
            ip++;
        }
    }
    frac_digits = (uint64_t)q;
    if (bits >> 63) /* as printf: -0.0 and -0.00001 print "-0.0000" */
        buf[o++] = '-';
    /* the integer's digits from the last, two at a time */
    nd = (int)sizeof(digits);
    while (ip >= 100) {
        nd -= 2;
        memcpy(digits + nd, digit_pairs + 2 * (ip % 100), 2);
        ip /= 100;
    }
    if (ip >= 10) {
        nd -= 2;
        memcpy(digits + nd, digit_pairs + 2 * ip, 2);
    } else {
        digits[--nd] = (char)('0' + ip);
    }
    memcpy(buf + o, digits + nd, sizeof(digits) - (size_t)nd);
    o += sizeof(digits) - (size_t)nd;
    if (decimals) {
        int d = decimals;

        buf[o++] = '.';
        for (; d >= 2; d -= 2) {
            memcpy(buf + o + (size_t)d - 2, digit_pairs + 2 * (frac_digits % 100), 2);
            frac_digits /= 100;
        }
        if (d)
            buf[o] = (char)('0' + frac_digits);
        o += (size_t)decimals;
    }
    buf[o] = '\0';
    return o;
#else
    return printf_fixed(buf, len, x, decimals);
#endif
}
