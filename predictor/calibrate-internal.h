/* What the files of the GEMM calibration share (calibrate.h is its
 * interface to the rest of the library): the state, and the functions each
 * file lends the others. Not installed.
 *
 * calibrate.c builds a state and predicts from it; calibrate-fit.c holds
 * the parametric model and its robust fit, calibrate-neighbours.c the k-d
 * trees, their leave-one-out choice of the correction, the exact-shape hash
 * and the bracket along m; calibrate-params.c the parameter defaults, their
 * bounds and the stored text; calibrate-timing.c the timing methods. */
#ifndef TC_CALIBRATE_INTERNAL_H
#define TC_CALIBRATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calibrate.h"

#define KD_DIMS 4
#define KD_GROUPS (TC_LAYOUT_COUNT * TC_CALIB_ALIGN_CLASSES)

struct kd_group {
    size_t lo, hi; /* range in the state's permuted arrays */
};

struct nb_heap {
    int k, count;
    double max_d2; /* farther points weigh nothing: never looked at */
    double d2[TC_CALIB_MAX_K];
    size_t at[TC_CALIB_MAX_K];
};

struct line_row;

struct tc_calib {
    struct tc_calib_params params;
    struct tc_calib_sample *samples; /* n, in tree order */
    size_t n;
    double (*pts)[KD_DIMS];   /* n, log m, log n, log k, log batch */
    unsigned char *split_dim; /* n, split dimension at a node's mid */
    double *resid;            /* n, log residual of the parametric fit */
    struct kd_group groups[KD_GROUPS];
    /* exact lookup: open addressing over representative sample indices */
    size_t *hash; /* hash_size slots, SIZE_MAX = empty */
    size_t hash_size;
    unsigned timing_mask; /* bit t: some row has timing class t */
    /* rows sorted by line (layout, timing, n, k, batch), then m: the
     * measured times that bracket a query along m */
    struct line_row *lines;
    /* the same rows in a tree at equal scales for the broad tier (its own
     * order), or NULL when the tier is off */
    struct tc_calib *broad;
};

/* Gaussian-kernel weighted mean of the neighbours' log residuals, shrunk
 * towards 0 by a prior weight: far or few neighbours correct little. The
 * kernel widens where the data is sparse (beta times the nearest distance,
 * up to NB_MAX_WIDEN lengths): small token counts are spaced far apart in
 * log space, large ones densely. */
#define NB_MAX_WIDEN 4.0
/* Beyond this many (widened) kernel lengths a weight (e^-8) is nothing. */
#define NB_RADIUS_LENGTHS 4.0

/* What a held-out query must not see: nothing, the same shape (distance
 * 0), or every row of the same n and k (the same layer). */
enum kd_skip { KD_SKIP_NONE, KD_SKIP_EXACT, KD_SKIP_NK };

/* calibrate-fit.c: the parametric model's pieces and the fit. */
/* The index of a kernel hash in the params' kernel table, -1 if none. */
int calib_kernel_slot(const struct tc_calib_params *cp, uint32_t hash);
/* The fitted factor of the sample's kernel (1 without one). */
double calib_kernel_factor(const struct tc_calib_params *cp, const struct tc_calib_sample *s);
/* The scale of the model's fixed cost under a timing class. */
double calib_overhead_scale(const struct tc_calib_params *cp, unsigned timing);
/* Fits the scales of cp (its kernel table set) to n samples; resid and
 * scratch hold n values each. */
void calib_fit_params(const struct tc_calib_sample *s, size_t n, double *resid, double *scratch,
                      struct tc_calib_params *cp);
/* Fills the kernel table of cp from the samples. TC_OK or NOMEM. */
int calib_kernel_table(const struct tc_calib_sample *s, size_t n, struct tc_calib_params *cp);

/* calibrate-neighbours.c: trees, exact lookup and the bracket. */
/* The point of a shape in log-shape space at cp's scale of n and k. */
void calib_shape_point(const struct tc_calib_params *cp, int64_t m, int64_t n, int64_t k,
                       int64_t batch, double *p);
/* The tree (group) of a layout and alignment class. */
int calib_group_of(enum tc_layout layout, enum tc_align align);
/* Offers the points of [lo, hi) near q to the heap h, skipping `skip`. */
void calib_kd_query(const struct tc_calib *c, size_t lo, size_t hi, const double *q, int skip,
                    struct nb_heap *h);
/* The kernel's weight sum and weighted residual sum over the neighbours. */
void calib_nb_sums(const struct nb_heap *h, const double *resid, double length, double beta,
                   double *sw_out, double *swr_out, double *mean_dist);
/* The broad tier's correction at a query point. */
double calib_broad_correction(const struct tc_calib *c, const struct tc_calib_params *cp,
                              const struct tc_calib_sample *s);
/* t held between the measured times of the nearest smaller and larger m on
 * the query's line. */
double calib_bracket(const struct tc_calib *c, const struct tc_calib_sample *q,
                     enum tc_timing_class timing, double t);
/* The interval quantiles' bin of a predicted time. */
int calib_time_bin(double time_us);
/* Build steps of a state, in this order (each TC_OK or an error): the rows
 * by line, the trees and (choose) the held-out choice of the correction,
 * the broad tier, the exact-shape hash. */
int calib_build_lines(struct tc_calib *c);
int calib_fit_neighbours(struct tc_calib *c, bool choose);
int calib_build_broad(struct tc_calib *c, bool choose);
int calib_build_hash(struct tc_calib *c);

/* calibrate-params.c */
/* The parameters before any fit: every scale 1, the default neighbour
 * settings and interval. */
void calib_params_default(struct tc_calib_params *cp);
/* TC_OK if the fitted values lie within their physical bounds (bounds.h),
 * else TC_ERR_RANGE with a message naming the value. */
int calib_params_in_bounds(const struct tc_calib_params *cp);

#endif
