/* STUB: importers (csv, cookbook, mamf), to be implemented. */
#include "config.h"

#include "tc-internal.h"

typedef int tc_stub_import_t;
