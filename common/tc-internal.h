/* The base layer's interface (common/): errors, data paths, temporary
 * files, strings and number parsing that every part of libtilecast shares.
 * It stands on nothing of ours but the public header, whose enums and
 * error codes it names. Not installed. */
#ifndef TC_INTERNAL_H
#define TC_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tilecast/tilecast.h"

#if defined(__GNUC__)
#define TC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TC_PRINTF(a, b)
#endif

#define TC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Sets this thread's last error message and returns err (a negative
 * enum tc_error), so callers can write `return tc_error(...)`. */
int tc_error(int err, const char *fmt, ...) TC_PRINTF(2, 3);
/* Prefixes the current message with "prefix: ". Returns err. */
int tc_error_prefix(int err, const char *fmt, ...) TC_PRINTF(2, 3);
void tc_clear_error(void);
#if defined(__clang_analyzer__) && !defined(TC_DEFINING_ERRORS)
/* clang-tidy's analyzer does not see across files that these return err,
 * and walks every error return as if it had succeeded (dozens of false
 * reports of uninitialised out-parameters): this tells it. Only the
 * analyzer sees these macros; the build calls the functions. */
#define tc_error(err, ...) (tc_error((err), __VA_ARGS__), (err))
#define tc_error_prefix(err, ...) (tc_error_prefix((err), __VA_ARGS__), (err))
#endif

/* The GPU families a spec or the kernel catalogue may name (not cpu), as
 * tc_arch_name spells them; TC_ARCH_GPU_NAMES lists them for messages. */
#define TC_ARCH_GPU_NAMES                                                                          \
    "pascal, volta, turing, ampere, ada, hopper, blackwell, cdna1, cdna2 or cdna3"
/* The GPU family named s: true and *out set, false for cpu or an unknown
 * name. */
bool tc_arch_parse_gpu(const char *s, enum tc_arch *out);

/* Writes <data dir>/<rel> into buf. Returns TC_ERR_RANGE if it does not fit. */
int tc_data_path(const char *rel, char *buf, size_t len);

/* Resolves a file the user may name by a shipped name alone (`llama-2-7b`
 * for <data dir>/predictor/models/llama-2-7b.yaml): a name that exists as
 * given, or that contains a '/', is a path and is used as it is; otherwise
 * <data dir>/<subdir>/<name>[.yaml] when that is readable. On success *out
 * points to name or to buf. A name that is neither sets an error that lists
 * the shipped names of `what` (e.g. "model config") and returns
 * TC_ERR_IO. */
int tc_data_file_named(const char *subdir, const char *what, const char *name, char *buf,
                       size_t len, const char **out);

/* Temporary files beside a file being made: "<path>.<tag>-<pid>@<host>"
 * (tag "creating" for collect's new database, "merge" for db merge, "tmp"
 * for an output), renamed or linked into place when complete. The host is
 * in the name so that a run on another node of a shared file system can
 * tell the file is not its to judge. Returns TC_ERR_RANGE if it does not
 * fit in len. */
int tc_temp_path(const char *path, const char *tag, char *buf, size_t len);
/* Removes what a killed run left beside path: the files named as above
 * (and the older "<path>.<tag>-<pid>" form), with their -wal, -shm and
 * -journal, whose process is not alive, on this host. Those of a live
 * process or another host stay. Errors are ignored: a file that cannot be
 * removed is only clutter. */
void tc_remove_stale_temps(const char *path, const char *tag);

/* The length of the valid UTF-8 sequence at s (1 to 4 bytes; 1 for the
 * terminating NUL), or 0 if the byte at s starts none: a stray
 * continuation byte, an overlong form, a surrogate, a code point beyond
 * U+10FFFF or a sequence cut short. */
size_t tc_utf8_len(const unsigned char *s);

/* Removes the database file path with its -wal, -shm and -journal. */
void tc_remove_db_files(const char *path);

/* strdup that sets TC_ERR_NOMEM on failure. */
char *tc_strdup(const char *s);

/* Edit distance of a and b, case-insensitive: insertions, deletions,
 * substitutions and adjacent transpositions ("dtpye" is 1 from "dtype")
 * count one each. INT_MAX for words longer than TC_EDIT_MAX. */
#define TC_EDIT_MAX 64
int tc_edit_distance(const char *a, const char *b);
/* Whether a word the user typed is close enough to a known one, at that
 * distance, to be offered as "did you mean". */
bool tc_close_enough(const char *given, int distance);

/* Bounded copy that always terminates dst. */
void tc_strlcpy(char *dst, const char *src, size_t len);

/* Parses a decimal integer / real with full validation (no trailing junk,
 * no overflow). Return TC_OK or TC_ERR_PARSE / TC_ERR_RANGE. */
int tc_parse_i64(const char *s, long long *out);
/* Only decimal forms ([+-]digits[.digits][e[+-]digits]): no hex, inf or
 * nan, which strtod would take. */
int tc_parse_double(const char *s, double *out);
/* The length of the decimal number at the start of s (0 if none), in the
 * form tc_parse_double accepts: for numbers inside text (log lines). */
size_t tc_decimal_len(const char *s);

#endif
