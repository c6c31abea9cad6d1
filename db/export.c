/* STUB: export as csv/json, to be implemented. */
#include "config.h"

#include "tc-internal.h"

typedef int tc_stub_export_t;
