/* The statistics every part shares: one comparator and one quantile, so
 * that a median or an interval means the same in the collector, the fits
 * and the accuracy reports. Internal. */
#ifndef TC_STATS_H
#define TC_STATS_H

#include <stddef.h>

/* qsort comparator of doubles, ascending. A NaN compares equal to
 * everything, so callers drop NaNs before sorting. */
int tc_cmp_double(const void *a, const void *b);

/* The q-quantile (q in [0, 1]) of the ascending v[0..n), interpolated
 * linearly between the two nearest ranks (position q.(n - 1), R's type 7):
 * q = 0.5 is the median. NAN when n is 0: a caller that needs another
 * answer for no values (a fit's 0) tests n itself. */
double tc_quantile_sorted(const double *v, size_t n, double q);

#endif
