/* What the collector suite's files share (test-collector.c,
 * test-collector-fault.c). */
#ifndef TC_TEST_COLLECTOR_H
#define TC_TEST_COLLECTOR_H

#include <check.h>

#include "collector.h"

/* test-collector.c's fake backend: its open (the fake device) and close,
 * which the fault backend reuses */
int fake_open(int device, struct tc_backend **out, struct tc_backend_info *info);
void fake_close(struct tc_backend *b);

/* a device that faults in mid-run: the collector stores the error and stops */
TCase *collector_fault_tcase(void);

#endif
