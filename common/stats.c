/* One comparator and one quantile (stats.h). */
#include "config.h"

#include <math.h>

#include "stats.h"

int tc_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

double tc_quantile_sorted(const double *v, size_t n, double q)
{
    double pos;
    size_t lo;

    if (!n)
        return NAN;
    pos = q * (double)(n - 1);
    lo = (size_t)pos;
    if (lo + 1 >= n)
        return v[n - 1];
    return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}
