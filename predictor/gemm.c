/* STUB: to be implemented. */
#include "config.h"

#include "tc-internal.h"

TC_API int tc_predict_gemm_analytical(const struct tc_gpu *gpu, const struct tc_gemm_query *q,
                                      struct tc_gemm_prediction *out)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_predict_gemm_analytical: not implemented yet");
}
