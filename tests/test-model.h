/* What the files of the model suite share (test-model.c,
 * test-model-paper.c, test-model-kernels.c, test-model-decode.c): the
 * fixture's specs and predictor, and helpers. */
#ifndef TC_TEST_MODEL_H
#define TC_TEST_MODEL_H

#include <check.h>

#include "tilecast/tilecast.h"

extern struct tc_specs *specs;
extern struct tc_predictor *pred;

void model_setup(void);
void model_teardown(void);
/* the shipped spec of GPU id (the test fails if it is unknown) */
const struct tc_gpu *gpu(const char *id);
/* the op named name of a prediction (the test fails if there is none) */
const struct tc_op_prediction *find_op(const struct tc_model_prediction *mp, const char *name);
/* a one-layer config: hidden h, heads a, sequence s, micro-batch b */
struct tc_model_config layer_cfg(int64_t h, int64_t a, int64_t s, int64_t b);
/* the model predicted on GPU gpu_id (the test fails on an error) */
struct tc_model_prediction *predict(const char *gpu_id, const struct tc_model_config *c);
TCase *model_paper_tcase(void);
TCase *model_kernels_tcase(void);
TCase *model_decode_tcase(void);
TCase *model_parallel_tcase(void);

#endif
