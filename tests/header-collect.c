/* The collector's header (tilecast/collect.h, the part of the collector the
 * command uses) must compile on its own too: first include, nothing before
 * it. Built into test-header beside header-self-contained.c. */
#include "tilecast/collect.h"

size_t header_collect_sizes(void);

/* Uses its types so that an incomplete declaration fails to compile. */
size_t header_collect_sizes(void)
{
    return sizeof(struct tc_shape) + sizeof(struct tc_collect_opts) +
           sizeof(struct tc_collect_summary);
}
