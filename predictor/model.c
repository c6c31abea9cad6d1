/* STUB: to be implemented. */
#include "config.h"

#include "tc-internal.h"

TC_API int tc_model_config_load(const char *file, struct tc_model_config *out)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_model_config_load: not implemented yet");
}

TC_API void tc_model_config_defaults(struct tc_model_config *cfg)
{
}

TC_API int tc_predict_model(struct tc_predictor *p, const struct tc_gpu *gpu,
                            const struct tc_model_config *cfg, struct tc_model_prediction **out)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_predict_model: not implemented yet");
}

TC_API void tc_model_prediction_free(struct tc_model_prediction *mp)
{
}
