/* STUB: to be implemented. */
#include "config.h"

#include "tc-internal.h"

TC_API int tc_predict_attention(struct tc_predictor *p, const struct tc_gpu *gpu,
                                const struct tc_attention_query *q,
                                struct tc_attention_prediction *out)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_predict_attention: not implemented yet");
}
