/* Shared by `tilecast eval` (GEMM rows, cmd-eval.c) and `tilecast eval
 * --attention` (fused-attention rows, cmd-eval-attention.c). */
#ifndef TC_EVAL_CLI_H
#define TC_EVAL_CLI_H

#include <stddef.h>

/* The q-quantile (0..1) of v[0..n) with linear interpolation; sorts v. NAN
 * when n is 0. */
double eval_quantile(double *v, size_t n, double q);
/* Spearman's rho of x and y (average ranks for ties); NAN below 3 points or
 * when either side is constant. */
double eval_spearman(const double *x, const double *y, size_t n);

int cmd_eval_attention(int argc, char **argv);
extern const char cmd_eval_attention_help[];

#endif
