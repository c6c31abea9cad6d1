/* STUB: calibration from measured rows, to be implemented. */
#include "config.h"

#include "tc-internal.h"

typedef int tc_stub_calibrate_t;
