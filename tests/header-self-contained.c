/* The public header must compile on its own (first include, no helpers) and
 * the shared library must export what it declares. */
#include "tilecast/tilecast.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
    struct tc_gemm_query q = {.m = 1, .n = 1, .k = 1, .batch = 1, .dtype = TC_DTYPE_FP16};
    enum tc_dtype dt;

    if (tc_dtype_bytes(q.dtype) != 2)
        return 1;
    if (tc_dtype_parse("bf16", &dt) != TC_OK || dt != TC_DTYPE_BF16)
        return 1;
    if (tc_dtype_parse("fp7", &dt) != TC_ERR_INVALID || !strstr(tc_last_error(), "fp7"))
        return 1;
    if (strcmp(tc_layout_name(TC_LAYOUT_TN), "TN") != 0)
        return 1;
    printf("tilecast %s\n", tc_version());
    return 0;
}
