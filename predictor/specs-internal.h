/* Shared between the spec parser (specs.c) and its checks (specs-check.c).
 * Not installed. */
#ifndef TC_SPECS_INTERNAL_H
#define TC_SPECS_INTERNAL_H

#include <stdbool.h>

/* An id a spec may declare: lower-case letters, digits, '-', '_', '.'. */
bool tc_spec_id_valid(const char *id);

#endif
