/* The predictor object: specs, databases, and the choice of source for
 * each prediction (measured > calibrated > transferred > analytical). */
#include "config.h"

#include <stdlib.h>

#include "tc-internal.h"

struct tc_predictor {
    const struct tc_specs *specs;
    bool analytical_only;
    bool use_prebuilt;
    bool allow_transfer;
};

TC_API struct tc_predictor *tc_predictor_new(const struct tc_specs *specs)
{
    struct tc_predictor *p;

    if (!specs) {
        tc_error(TC_ERR_INVALID, "tc_predictor_new: no specs");
        return NULL;
    }
    p = calloc(1, sizeof(*p));
    if (!p) {
        tc_error(TC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    p->specs = specs;
    p->use_prebuilt = true;
    p->allow_transfer = true;
    return p;
}

TC_API void tc_predictor_free(struct tc_predictor *p)
{
    free(p);
}

TC_API int tc_predictor_add_db(struct tc_predictor *p, const char *path)
{
    return tc_error(TC_ERR_UNSUPPORTED, "calibration from databases is not implemented yet");
}

TC_API void tc_predictor_use_prebuilt(struct tc_predictor *p, bool on)
{
    if (p)
        p->use_prebuilt = on;
}

TC_API void tc_predictor_set_analytical(struct tc_predictor *p, bool on)
{
    if (p)
        p->analytical_only = on;
}

TC_API void tc_predictor_allow_transfer(struct tc_predictor *p, bool on)
{
    if (p)
        p->allow_transfer = on;
}

TC_API int tc_predict_gemm(struct tc_predictor *p, const struct tc_gpu *gpu,
                           const struct tc_gemm_query *q, struct tc_gemm_prediction *out)
{
    if (!p)
        return tc_error(TC_ERR_INVALID, "tc_predict_gemm: no predictor");
    return tc_predict_gemm_analytical(gpu, q, out);
}

TC_API int tc_predict_gemm_batch(struct tc_predictor *p, const struct tc_gpu *gpu, size_t n,
                                 const struct tc_gemm_query *q, struct tc_gemm_prediction *out,
                                 int *errs)
{
    int failed = 0;

    if (!p || (!q && n) || (!out && n))
        return tc_error(TC_ERR_INVALID, "tc_predict_gemm_batch: bad arguments");
    for (size_t i = 0; i < n; i++) {
        int err = tc_predict_gemm(p, gpu, &q[i], &out[i]);

        if (errs)
            errs[i] = err;
        if (err < 0)
            failed++;
    }
    return failed;
}
