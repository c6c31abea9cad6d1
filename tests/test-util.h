/* Helpers shared by the Check suites that read fixtures from the source tree
 * (test-gemm, test-specs). Header-only: every suite is its own executable. */
#ifndef TC_TEST_UTIL_H
#define TC_TEST_UTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilecast/tilecast.h"

/* <source root>/<rel>; a small ring of buffers so that up to four paths can
 * be live at once (a call's arguments often hold two or three). */
static inline const char *src_path(const char *rel)
{
    static char path_buf[4][4096];
    static int next;
    const char *root = getenv("TILECAST_SOURCE_ROOT");
    char *buf = path_buf[next++ % 4];

    ck_assert_msg(root && *root, "TILECAST_SOURCE_ROOT is not set (run through meson test)");
    snprintf(buf, sizeof(path_buf[0]), "%s/%s", root, rel);
    return buf;
}

#define ck_assert_error_has(needle)                                                                \
    ck_assert_msg(strstr(tc_last_error(), (needle)) != NULL, "error message '%s' lacks '%s'",      \
                  tc_last_error(), (needle))

#endif
