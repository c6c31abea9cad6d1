/* STUB: to be implemented. */
#include "config.h"

#include "tc-internal.h"

TC_API int tc_advise(struct tc_predictor *p, const struct tc_gpu *gpu,
                     const struct tc_model_config *cfg, double params_tolerance,
                     size_t max_candidates, struct tc_advice **out)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_advise: not implemented yet");
}

TC_API void tc_advice_free(struct tc_advice *a)
{
}
