/* The public header must compile on its own (first include, no helpers) and
 * the shared library must export what it declares. header-collect.c does
 * the same for the collector's header. */
#include "tilecast/tilecast.h"

#include <stdio.h>
#include <string.h>

size_t header_collect_sizes(void);

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
    /* the header's version macros are the library's */
    char built[32];

    snprintf(built, sizeof(built), "%d.%d.%d", TC_VERSION_MAJOR, TC_VERSION_MINOR,
             TC_VERSION_PATCH);
    if (strcmp(built, tc_version()) != 0) {
        fprintf(stderr, "header says %s, library %s\n", built, tc_version());
        return 1;
    }
    if (tc_version_api() != TC_API_VERSION ||
        TC_API_MAJOR(tc_version_api()) != TC_API_VERSION_MAJOR ||
        TC_API_MINOR(tc_version_api()) != TC_API_VERSION_MINOR ||
        TC_API_PATCH(tc_version_api()) != TC_API_VERSION_PATCH) {
        fprintf(stderr, "header API %#x, library %#x\n", (unsigned)TC_API_VERSION,
                tc_version_api());
        return 1;
    }
    if (tc_abi_sizeof("tc_gemm_query") != sizeof(struct tc_gemm_query) ||
        tc_abi_sizeof("no_such_struct") != 0)
        return 1;
    if (header_collect_sizes() == 0)
        return 1;
    printf("tilecast %s\n", tc_version());
    return 0;
}
