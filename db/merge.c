/* STUB: merging shard databases, to be implemented. */
#include "config.h"

#include "tc-internal.h"

typedef int tc_stub_merge_t;
