/* STUB: kernel catalogue loading, to be implemented. */
#include "config.h"

#include "tc-internal.h"

typedef int tc_stub_catalogue_t;
