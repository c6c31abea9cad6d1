/* The capped readers of input.h: whole files and lines, each refused with
 * the limit it hit before it can take more memory than the cap. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "input.h"
#include "tc-internal.h"

static double mib(uint64_t bytes)
{
    return (double)bytes / (double)TC_INPUT_MIB;
}

int tc_input_check_size(const char *file, FILE *f, uint64_t max, const char *what)
{
    struct stat st;

    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size <= max)
        return TC_OK;
    return tc_error(TC_ERR_RANGE,
                    "%s: the file is %" PRIu64 " bytes (%.1f MiB), over the %.0f MiB limit of %s",
                    file, (uint64_t)st.st_size, mib((uint64_t)st.st_size), mib(max), what);
}

int tc_input_read(const char *file, FILE *f, uint64_t max, const char *what, char **text,
                  size_t *len)
{
    char *buf = NULL;
    size_t used = 0, cap = 0;
    int err;

    *text = NULL;
    *len = 0;
    if ((err = tc_input_check_size(file, f, max, what)) < 0)
        return err;
    for (;;) {
        size_t got;

        /* room for one byte past the cap, which tells the input is over it,
         * and the NUL */
        if (cap - used <= 1) {
            size_t want = cap ? cap * 2 : 65536;
            char *nb;

            if (want > max + 2)
                want = (size_t)max + 2;
            if (want <= cap) {
                free(buf);
                return tc_error(TC_ERR_RANGE, "%s: more than %.0f MiB read, over the limit of %s",
                                file, mib(max), what);
            }
            if (!(nb = realloc(buf, want))) {
                free(buf);
                return tc_error(TC_ERR_NOMEM, "out of memory");
            }
            buf = nb;
            cap = want;
        }
        got = fread(buf + used, 1, cap - used - 1, f);
        used += got;
        if (used > max) {
            free(buf);
            return tc_error(TC_ERR_RANGE, "%s: more than %.0f MiB read, over the limit of %s", file,
                            mib(max), what);
        }
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        return tc_error(TC_ERR_IO, "%s: read error: %s", file, strerror(errno));
    }
    buf[used] = '\0';
    *text = buf;
    *len = used;
    return TC_OK;
}

int tc_input_line(FILE *f, uint64_t max, const char *what, char **buf, size_t *cap, size_t *len)
{
    size_t n = 0;
    int c = EOF;

    *len = 0;
    for (;;) {
        c = getc_unlocked(f);
        if (c == EOF || c == '\n')
            break;
        if (n + 1 >= *cap) {
            size_t want = *cap ? *cap * 2 : 256;
            char *nb;

            if (n >= max)
                return tc_error(TC_ERR_RANGE, "a line of more than %.0f MiB, over the limit of %s",
                                mib(max), what);
            if (want > max + 1)
                want = (size_t)max + 1;
            if (!(nb = realloc(*buf, want)))
                return tc_error(TC_ERR_NOMEM, "out of memory");
            *buf = nb;
            *cap = want;
        }
        (*buf)[n++] = (char)c;
    }
    if (c == EOF && ferror(f))
        return tc_error(TC_ERR_IO, "read error: %s", strerror(errno));
    if (c == EOF && n == 0)
        return 0;
    if (!*buf) {
        if (!(*buf = malloc(1)))
            return tc_error(TC_ERR_NOMEM, "out of memory");
        *cap = 1;
    }
    (*buf)[n] = '\0';
    *len = n;
    return 1;
}
