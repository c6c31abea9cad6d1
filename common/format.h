/* Number formatting for the hot output paths (common/format.c). Internal. */
#ifndef TC_FORMAT_H
#define TC_FORMAT_H

#include <stddef.h>

/* Writes x with decimals (0 to 9) digits after the point into buf, the
 * bytes printf("%.*f", decimals, x) writes, and returns their count (buf
 * is NUL-terminated). buf must hold 48 bytes; numbers printf would write
 * longer (from 2^53 up) are written by snprintf into len bytes. */
size_t tc_format_fixed(char *buf, size_t len, double x, int decimals);

#endif
