/* Plausibility bounds: the physical range of every number tilecast reads
 * from a file (imported measurements, a database's rows and GPU snapshots,
 * a stored calibration, GPU specs) and of every prediction it prints. A
 * value outside is a wrong unit, a typo, a broken timer or a crafted file,
 * never a measurement, and let through it comes back as an infinite time
 * or throughput or a NaN share. The bounds are wide (an order of magnitude
 * or more beyond any device of 2025), so a real number is never refused.
 *
 * This is the one place they are set: db/import.c (imports), db/rows-*.c and
 * db/open.c (rows written and read, GPU snapshots, `db check`, whose SQL
 * spells them with TC_BOUND_SQL), predictor/calibrate-params.c (fitted and
 * stored parameters) and predictor/specs.c (GPU specs) all use these.
 * Internal. */
#ifndef TC_BOUNDS_H
#define TC_BOUNDS_H

#include <stdbool.h>
#include <stdint.h>

/* The text of a bound for SQL: TC_BOUND_SQL(TC_BOUND_TIME_US_MIN) is "1e-3". */
#define TC_BOUND_STR_(x) #x
#define TC_BOUND_SQL(x) TC_BOUND_STR_(x)

/* One kernel's time, microseconds, measured or predicted. 1 ns is below the
 * resolution of every timer the collector or the imported tools use (CUDA
 * and HIP events 0.5 us, clock_gettime some 20 ns) and below any kernel
 * launch; 1e12 us is 11.6 days, longer than any single kernel runs. */
#define TC_BOUND_TIME_US_MIN 1e-3
#define TC_BOUND_TIME_US_MAX 1e12

/* Throughput of one GEMM on one device, TFLOP/s (2.m.n.k.batch / time):
 * 100 PFLOP/s is 20 times the dense fp8 peak of the fastest GPU of 2025
 * (B200, 4.5 PFLOP/s). A row faster than that has a time in the wrong unit. */
#define TC_BOUND_TFLOPS_MAX 1e5

/* GPU specs and snapshots. Peaks per dtype: from 1 GFLOP/s (fp64 on parts
 * without fp64 units is some 0.1-1 TFLOP/s) up to the throughput bound. */
#define TC_BOUND_PEAK_TFLOPS_MIN 1e-3
#define TC_BOUND_PEAK_TFLOPS_MAX TC_BOUND_TFLOPS_MAX
/* SMs or CUs: GPUs have tens to a few hundred. */
#define TC_BOUND_UNITS_MAX 100000
/* Clocks, MHz: GPUs run at 0.1-3 GHz; 10 MHz to 10 GHz. */
#define TC_BOUND_CLOCK_MHZ_MIN 10
#define TC_BOUND_CLOCK_MHZ_MAX 1e4
/* Memory bandwidth, GB/s: 1 GB/s is slower than PCIe 1.0 x16, 1 PB/s over a
 * hundred times HBM3e's 8 TB/s. */
#define TC_BOUND_MEM_BW_GBPS_MIN 1
#define TC_BOUND_MEM_BW_GBPS_MAX 1e6
/* a GPU's links to its peers, per direction: a PCIe 1 x1 lane's 0.25 GB/s
 * is below any GPU's; 10^5 GB/s is over fifty times NVLink 5's */
#define TC_BOUND_PEER_BW_GBPS_MIN 0.25
#define TC_BOUND_PEER_BW_GBPS_MAX 1e5
/* Device memory, GB: 0.1 GB to 100 TB (GPUs carry 16-288 GB). */
#define TC_BOUND_MEM_GB_MIN 0.1
#define TC_BOUND_MEM_GB_MAX 1e5
/* Last-level cache, bytes: 1 KiB to 10 GB (MI300X's Infinity Cache, the
 * largest, is 256 MB). */
#define TC_BOUND_L2_BYTES_MIN 1024
#define TC_BOUND_L2_BYTES_MAX 1e10
/* Board power, W: 1 W to 100 kW (boards draw 70-1200 W). */
#define TC_BOUND_TDP_W_MIN 1
#define TC_BOUND_TDP_W_MAX 1e5

/* Fitted multipliers of the analytical model's times (c_compute,
 * c_memory, c_overhead, the alignment and kernel factors). On a GPU the
 * fit moves the model by percents to a few times; 10^4 either way still
 * covers a host CPU timed under a GPU's id (some 10^3 slower). Beyond it
 * the fit describes no device the spec could be of. */
#define TC_BOUND_SCALE_MIN 1e-4
#define TC_BOUND_SCALE_MAX 1e4
/* A fitted host cost per call (host_*_us): from none to one second, far
 * beyond the 3-30 us of a launch and a synchronisation. */
#define TC_BOUND_HOST_US_MAX 1e6
/* Interval ends as log(time / prediction) (q_lo*, q_hi*): e^10, 22000
 * times, is wider than any interval the residuals of a fit give. */
#define TC_BOUND_LOG_RATIO_MAX 10

/* A GEMM dimension (m, n, k, batch), read from a sweep, an import or a
 * database, or derived from a sweep's or a model's sizes (b.s, 3h/t, the
 * tokens of a step): 2^40 elements is far beyond any device's memory, and
 * keeps 2.m.n.k.batch a finite double. */
#define TC_BOUND_DIM_MAX (INT64_C(1) << 40)

/* Whether time_us is a plausible kernel time. */
bool tc_bound_time_ok(double time_us);
/* Whether 2.m.n.k.batch FLOP in time_us is at most TC_BOUND_TFLOPS_MAX. */
bool tc_bound_gemm_rate_ok(int64_t m, int64_t n, int64_t k, int64_t batch, double time_us);
/* Checks a GEMM time, setting "time_us X is outside ..." (or "... gives Y
 * TFLOP/s, over ...") as the message; TC_OK or TC_ERR_RANGE. Callers
 * prefix the file, line or row. */
int tc_bound_check_gemm(int64_t m, int64_t n, int64_t k, int64_t batch, double time_us);
/* The same for a time alone (attention rows). */
int tc_bound_check_time(const char *what, double time_us);
/* Whether a prediction is one to print: a finite positive time with a
 * finite interval around it. If not, sets "WHAT: the prediction (X us) is
 * not a finite positive time ..." and returns TC_ERR_RANGE: such a number
 * comes from a value out of range somewhere, and is never an answer. */
int tc_bound_check_prediction(const char *what, double time_us, double lo_us, double hi_us);
/* Whether v lies in [lo, hi] (false for NaN). */
bool tc_bound_in(double v, double lo, double hi);

#endif
