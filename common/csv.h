/* A streaming CSV reader (RFC 4180 quoting) that tracks line numbers, so
 * every error can name the file, line and column. Internal. */
#ifndef TC_CSV_H
#define TC_CSV_H

#include <stdint.h>
#include <stdio.h>

struct tc_csv;

/* Reads from f (borrowed); name is used in messages. NULL on NOMEM. */
struct tc_csv *tc_csv_new(FILE *f, const char *name);
void tc_csv_free(struct tc_csv *csv);

/* Reads the next record. Returns 1 with *nfields/fields set (valid until the
 * next call), 0 at end of file, TC_ERR_PARSE (unterminated quote, NUL
 * byte) or TC_ERR_RANGE (a record over TC_INPUT_RECORD_MAX) with the
 * message naming file and line. Blank lines are skipped. */
int tc_csv_next(struct tc_csv *csv, int *nfields, char ***fields);

/* The bytes read from the input so far: a reader with a total cap on its
 * input (imports) tests it after each record. */
uint64_t tc_csv_bytes(const struct tc_csv *csv);

/* The line on which the last record started (1-based). */
long tc_csv_line(const struct tc_csv *csv);
const char *tc_csv_name(const struct tc_csv *csv);

/* Index of column `name` in a header record, or -1. */
int tc_csv_find(int nfields, char **fields, const char *name);

#endif
