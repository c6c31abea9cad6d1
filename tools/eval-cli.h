/* Shared by `tilecast eval` (GEMM rows, cmd-eval.c) and `tilecast eval
 * --attention` (fused-attention rows, cmd-eval-attention.c). */
#ifndef TC_EVAL_CLI_H
#define TC_EVAL_CLI_H

#include <stdbool.h>
#include <stddef.h>

/* The q-quantile (0..1) of v[0..n) with linear interpolation; sorts v. NAN
 * when n is 0. */
double eval_quantile(double *v, size_t n, double q);
/* Spearman's rho of x and y (average ranks for ties); NAN below 3 points or
 * when either side is constant. */
double eval_spearman(const double *x, const double *y, size_t n);

/* One compared row: absolute and signed error of the time (%), measured
 * and predicted TFLOP/s. */
struct eval_point {
    double ape, signed_err, meas_tflops, pred_tflops;
};
/* What eval prints per group (NAN when a group has no rows). */
struct eval_stats {
    double mape, median_ape, p90_ape, bias, spearman;
};
/* The statistics of n points, the i-th at (const char *)p + i * stride (so
 * a larger struct that begins with an eval_point serves). Returns false
 * when out of memory. */
bool eval_point_stats(const void *p, size_t stride, size_t n, struct eval_stats *out);

int cmd_eval_attention(int argc, char **argv);
extern const char cmd_eval_attention_help[];

#endif
