/* Plausibility checks against the bounds of bounds.h. */
#include "config.h"

#include <math.h>

#include "bounds.h"
#include "tc-internal.h"

bool tc_bound_in(double v, double lo, double hi)
{
    return v >= lo && v <= hi;
}

bool tc_bound_time_ok(double time_us)
{
    return tc_bound_in(time_us, TC_BOUND_TIME_US_MIN, TC_BOUND_TIME_US_MAX);
}

/* TFLOP/s of the GEMM, in doubles: dimensions up to 2^40 keep it finite */
static double gemm_tflops(int64_t m, int64_t n, int64_t k, int64_t batch, double time_us)
{
    return 2.0 * (double)m * (double)n * (double)k * (double)(batch > 0 ? batch : 1) /
           (time_us * 1e6);
}

bool tc_bound_gemm_rate_ok(int64_t m, int64_t n, int64_t k, int64_t batch, double time_us)
{
    return time_us > 0 && gemm_tflops(m, n, k, batch, time_us) <= TC_BOUND_TFLOPS_MAX;
}

int tc_bound_check_time(const char *what, double time_us)
{
    if (!tc_bound_time_ok(time_us))
        return tc_error(TC_ERR_RANGE, "%s %g is outside the plausible [%g, %g] us", what, time_us,
                        TC_BOUND_TIME_US_MIN, TC_BOUND_TIME_US_MAX);
    return TC_OK;
}

int tc_bound_check_gemm(int64_t m, int64_t n, int64_t k, int64_t batch, double time_us)
{
    int err = tc_bound_check_time("time_us", time_us);

    if (err < 0)
        return err;
    if (!tc_bound_gemm_rate_ok(m, n, k, batch, time_us))
        return tc_error(TC_ERR_RANGE,
                        "time_us %g gives %g TFLOP/s for %lldx%lldx%lld "
                        "(batch %lld), over the plausible %g: is the time in microseconds?",
                        time_us, gemm_tflops(m, n, k, batch, time_us), (long long)m, (long long)n,
                        (long long)k, (long long)(batch > 0 ? batch : 1), TC_BOUND_TFLOPS_MAX);
    return TC_OK;
}

int tc_bound_check_prediction(const char *what, double time_us, double lo_us, double hi_us)
{
    if (isfinite(time_us) && time_us > 0 && isfinite(lo_us) && isfinite(hi_us) && lo_us >= 0 &&
        hi_us >= 0)
        return TC_OK;
    return tc_error(TC_ERR_RANGE,
                    "%s: the prediction (%g us, interval %g .. %g) is not a "
                    "finite positive time: a spec, measurement or calibration it comes from "
                    "is out of range",
                    what, time_us, lo_us, hi_us);
}
