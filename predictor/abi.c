/* Sizes of the public structs, for bindings that load libtilecast without a
 * C compiler (the Python package uses ctypes). A binding mirrors the structs
 * by hand; comparing its sizes with these at load time turns a header change
 * the binding missed into a clear error instead of corrupted memory. */
#include "config.h"

#include <string.h>

#include "tc-internal.h"

#define ABI_TYPE(t) {#t, sizeof(struct t)},

static const struct {
    const char *name;
    size_t size;
} abi_types[] = {
    ABI_TYPE(tc_gpu) ABI_TYPE(tc_interconnect) ABI_TYPE(tc_run_info) ABI_TYPE(tc_gemm_row)
        ABI_TYPE(tc_attention_row) ABI_TYPE(tc_gemm_query) ABI_TYPE(tc_gemm_prediction)
            ABI_TYPE(tc_attention_query) ABI_TYPE(tc_attention_prediction) ABI_TYPE(tc_model_config)
                ABI_TYPE(tc_op_prediction) ABI_TYPE(tc_model_prediction)
                    ABI_TYPE(tc_advice_candidate) ABI_TYPE(tc_advice) ABI_TYPE(tc_calib_summary)
                        ABI_TYPE(tc_timing_cost) ABI_TYPE(tc_eval_point) ABI_TYPE(tc_eval_stats)
                            ABI_TYPE(tc_layer_group) ABI_TYPE(tc_cluster) ABI_TYPE(tc_memop_query)
                                ABI_TYPE(tc_memop_prediction)};

TC_API size_t tc_abi_sizeof(const char *name)
{
    if (!name) {
        tc_error(TC_ERR_INVALID, "tc_abi_sizeof: NULL name");
        return 0;
    }
    for (size_t i = 0; i < TC_ARRAY_SIZE(abi_types); i++)
        if (strcmp(abi_types[i].name, name) == 0)
            return abi_types[i].size;
    tc_error(TC_ERR_NOT_FOUND, "tc_abi_sizeof: unknown struct '%s'", name);
    return 0;
}
