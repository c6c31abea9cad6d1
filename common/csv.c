/* A streaming CSV reader; memory stays bounded by the longest record,
 * which input.h caps. */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "input.h"
#include "tc-internal.h"

struct tc_csv {
    FILE *f;
    const char *name;
    long line; /* lines consumed so far */
    long record_line;
    char *buf; /* field bytes, NUL-separated */
    size_t buf_len, buf_cap;
    size_t *offsets;
    char **fields;
    int nfields, fields_cap;
    bool started;   /* the byte order mark has been looked for */
    int pending[3]; /* bytes read ahead, returned first (last in first) */
    int n_pending;
    uint64_t bytes; /* read from f so far */
};

static int csv_getc(struct tc_csv *csv)
{
    /* unlocked: a reader is used by one thread, and the locking getc
     * takes per byte was the largest cost of reading a batch file */
    int c;

    if (csv->n_pending)
        return csv->pending[--csv->n_pending];
    c = getc_unlocked(csv->f);
    csv->bytes += c != EOF;
    return c;
}

static void csv_ungetc(struct tc_csv *csv, int c)
{
    if (c != EOF && csv->n_pending < 3)
        csv->pending[csv->n_pending++] = c;
}

/* A UTF-8 byte order mark opens some files (spreadsheet exports): skipped
 * at the start of the file, as the YAML reader does; anywhere else it is a
 * byte of a field. */
static void skip_bom(struct tc_csv *csv)
{
    static const int bom[3] = {0xef, 0xbb, 0xbf};
    int got[3], n = 0;

    csv->started = true;
    while (n < 3 && (got[n] = getc_unlocked(csv->f)) == bom[n])
        n++;
    /* bytes read from f are counted once: csv_getc does not count those
     * it returns from the read-ahead */
    csv->bytes += (uint64_t)n + (n < 3 && got[n] != EOF);
    if (n == 3)
        return;
    /* not a mark: what was read is returned first, in order */
    if (got[n] != EOF)
        csv_ungetc(csv, got[n]);
    while (n > 0)
        csv_ungetc(csv, got[--n]);
}

struct tc_csv *tc_csv_new(FILE *f, const char *name)
{
    struct tc_csv *csv = calloc(1, sizeof(*csv));

    if (!csv) {
        tc_error(TC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    csv->f = f;
    csv->name = name ? name : "<input>";
    return csv;
}

void tc_csv_free(struct tc_csv *csv)
{
    if (!csv)
        return;
    free(csv->buf);
    free(csv->offsets);
    free(csv->fields);
    free(csv);
}

static int put_byte(struct tc_csv *csv, char c)
{
    if (csv->buf_len == csv->buf_cap) {
        size_t cap = csv->buf_cap ? csv->buf_cap * 2 : 256;
        char *buf;

        /* one record is all the reader holds: capped, an endless line
         * (a binary file, /dev/zero past its NULs) ends here */
        if (csv->buf_cap >= TC_INPUT_RECORD_MAX)
            return tc_error(TC_ERR_RANGE,
                            "%s:%ld: a record of more than %" PRIu64 " MiB, over the limit of a "
                            "CSV record (not a CSV file?)",
                            csv->name, csv->record_line, TC_INPUT_RECORD_MAX / TC_INPUT_MIB);
        if (cap > TC_INPUT_RECORD_MAX)
            cap = TC_INPUT_RECORD_MAX;
        buf = realloc(csv->buf, cap);

        if (!buf)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        csv->buf = buf;
        csv->buf_cap = cap;
    }
    csv->buf[csv->buf_len++] = c;
    return TC_OK;
}

static int end_field(struct tc_csv *csv)
{
    int err = put_byte(csv, '\0');

    if (err < 0)
        return err;
    /* room for this field and the next one's offset */
    if (csv->nfields + 1 >= csv->fields_cap) {
        int cap = csv->fields_cap ? csv->fields_cap * 2 : 16;
        size_t *offsets = realloc(csv->offsets, (size_t)cap * sizeof(*offsets));

        if (!offsets)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        if (!csv->fields_cap)
            offsets[0] = 0; /* the first record started before any capacity */
        csv->offsets = offsets;
        char **fields = realloc(csv->fields, (size_t)cap * sizeof(*fields));

        if (!fields)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        csv->fields = fields;
        csv->fields_cap = cap;
    }
    csv->nfields++;
    if (csv->nfields < csv->fields_cap)
        csv->offsets[csv->nfields] = csv->buf_len;
    return TC_OK;
}

int tc_csv_next(struct tc_csv *csv, int *nfields, char ***fields)
{
    int c, err;

    if (!csv->started)
        skip_bom(csv);
    for (;;) {
        bool quoted = false, in_quotes = false, any = false;

        csv->buf_len = 0;
        csv->nfields = 0;
        if (csv->fields_cap)
            csv->offsets[0] = 0;
        csv->record_line = csv->line + 1;
        for (;;) {
            c = csv_getc(csv);
            if (c == EOF) {
                if (ferror(csv->f))
                    return tc_error(TC_ERR_IO, "%s: read error", csv->name);
                if (in_quotes)
                    return tc_error(TC_ERR_PARSE, "%s:%ld: unterminated quoted field", csv->name,
                                    csv->record_line);
                if (!any)
                    return 0;
                break;
            }
            any = true;
            if (c == '\0')
                return tc_error(TC_ERR_PARSE, "%s:%ld: NUL byte in CSV", csv->name, csv->line + 1);
            if (in_quotes) {
                if (c == '"') {
                    int next = csv_getc(csv);

                    if (next == '"') {
                        err = put_byte(csv, '"');
                    } else {
                        in_quotes = false;
                        csv_ungetc(csv, next);
                        err = TC_OK;
                    }
                } else {
                    if (c == '\n')
                        csv->line++;
                    err = put_byte(csv, (char)c);
                }
                if (err < 0)
                    return err;
                continue;
            }
            if (c == '"' && !quoted) {
                quoted = in_quotes = true;
                continue;
            }
            if (c == ',') {
                if ((err = end_field(csv)) < 0)
                    return err;
                quoted = false;
                continue;
            }
            if (c == '\r')
                continue;
            if (c == '\n')
                break;
            if ((err = put_byte(csv, (char)c)) < 0)
                return err;
            /* the rest of a plain run (digits, names) in a tight loop: most
             * bytes of a batch file, and the per-byte state machine above
             * was most of the reader's time */
            if (!csv->n_pending) {
                size_t start = csv->buf_len;

                while ((c = getc_unlocked(csv->f)) != EOF && c != ',' && c != '"' && c != '\n' &&
                       c != '\r' && c != '\0' && csv->buf_len < csv->buf_cap)
                    csv->buf[csv->buf_len++] = (char)c;
                csv->bytes += csv->buf_len - start + (c != EOF);
                /* the delimiter that ends the run, as the loop above takes
                 * it (the other bytes go back to it) */
                if (c == ',') {
                    if ((err = end_field(csv)) < 0)
                        return err;
                    quoted = false;
                    continue;
                }
                if (c == '\n')
                    break;
                if (c != EOF)
                    csv_ungetc(csv, c);
            }
        }
        csv->line++;
        if ((err = end_field(csv)) < 0)
            return err;
        /* Skip blank lines. */
        if (csv->nfields == 1 && csv->buf_len == 1 && !quoted) {
            if (c == EOF)
                return 0;
            continue;
        }
        break;
    }
    for (int i = 0; i < csv->nfields; i++)
        csv->fields[i] = csv->buf + csv->offsets[i];
    *nfields = csv->nfields;
    *fields = csv->fields;
    return 1;
}

uint64_t tc_csv_bytes(const struct tc_csv *csv)
{
    return csv->bytes;
}

long tc_csv_line(const struct tc_csv *csv)
{
    return csv->record_line;
}

const char *tc_csv_name(const struct tc_csv *csv)
{
    return csv->name;
}

int tc_csv_find(int nfields, char **fields, const char *name)
{
    for (int i = 0; i < nfields; i++)
        if (strcmp(fields[i], name) == 0)
            return i;
    return -1;
}
