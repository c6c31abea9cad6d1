/* Shared helpers of the tilecast command. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tc-internal.h"

struct cli_globals cli_globals;

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "tilecast%s%s: error: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_exit_code(int err)
{
    switch (err) {
    case TC_OK: return CLI_EXIT_OK;
    case TC_ERR_INVALID:
    case TC_ERR_PARSE:
    case TC_ERR_NOT_FOUND:
    case TC_ERR_UNSUPPORTED:
    case TC_ERR_SCHEMA:
    case TC_ERR_RANGE: return CLI_EXIT_INPUT;
    default: return CLI_EXIT_RUNTIME;
    }
}

int cli_fail(const char *cmd, int err)
{
    const char *msg = tc_last_error();

    cli_error(cmd, "%s", msg && *msg ? msg : tc_strerror(err));
    return cli_exit_code(err);
}

bool cli_input_readable(const char *cmd, const char *path)
{
    struct stat sb;
    int e = 0;

    /* a directory opens, and fails only at the first read */
    if (stat(path, &sb) != 0)
        e = errno;
    else if (S_ISDIR(sb.st_mode))
        e = EISDIR;
    else if (access(path, R_OK) != 0)
        e = errno;
    if (!e)
        return true;
    cli_error(cmd, "%s: cannot read: %s", path, strerror(e));
    return false;
}

bool cli_config_readable(const char *cmd, const char *config)
{
    /* a shipped config's name alone: the library resolves it, and lists
     * the shipped names when there is none of that name */
    if (!strchr(config, '/') && access(config, F_OK) != 0)
        return true;
    return cli_input_readable(cmd, config);
}

struct tc_specs *cli_load_specs(const char *cmd)
{
    struct tc_specs *specs = tc_specs_load(NULL);

    if (!specs) {
        cli_fail(cmd, TC_ERR_PARSE);
        return NULL;
    }
    if (cli_globals.specs_dir) {
        int err = tc_specs_add_dir(specs, cli_globals.specs_dir);

        if (err < 0) {
            cli_fail(cmd, err);
            tc_specs_free(specs);
            return NULL;
        }
    }
    return specs;
}

const struct tc_gpu *cli_find_gpu(const char *cmd, const struct tc_specs *specs, const char *id)
{
    const struct tc_gpu *gpu;

    if (!id || !*id) {
        cli_error(cmd, "no GPU given (use --gpu ID; 'tilecast specs list' shows the ids)");
        return NULL;
    }
    /* the id in any case, or a prefix of one id; the library says what
     * the user may have meant otherwise */
    gpu = tc_specs_lookup(specs, id);
    if (!gpu)
        cli_fail(cmd, TC_ERR_NOT_FOUND);
    return gpu;
}

const char *cli_suggest_option(const char *arg, const char *help, char *buf, size_t len)
{
    char given[TC_EDIT_MAX + 1], best[TC_EDIT_MAX + 1] = "", prefix_of[TC_EDIT_MAX + 1] = "";
    int best_d = INT_MAX;
    bool prefix_ambiguous = false;
    size_t glen;

    buf[0] = '\0';
    if (!arg || arg[0] != '-' || !help)
        return buf;
    glen = strcspn(arg, "=");
    if (glen > TC_EDIT_MAX)
        return buf;
    memcpy(given, arg, glen);
    given[glen] = '\0';
    /* the help text is the list of what the command takes: every "--word"
     * in it, from the usage lines and the options table alike */
    for (const char *h = strstr(help, "--"); h; h = strstr(h, "--")) {
        char opt[TC_EDIT_MAX + 1];
        size_t n = 2;
        int d;

        while (h[n] && (isalnum((unsigned char)h[n]) || h[n] == '-') && n < TC_EDIT_MAX)
            n++;
        if (n == 2 || (h > help && (isalnum((unsigned char)h[-1]) || h[-1] == '-'))) {
            h += n;
            continue;
        }
        memcpy(opt, h, n);
        opt[n] = '\0';
        h += n;
        if (strcmp(opt, given) == 0)
            return buf; /* known, but not here: the caller's message says why */
        if (glen > 2 && strncmp(opt, given, glen) == 0) {
            if (!prefix_of[0])
                tc_strlcpy(prefix_of, opt, sizeof(prefix_of));
            else if (strcmp(opt, prefix_of) != 0)
                prefix_ambiguous = true;
        }
        d = tc_edit_distance(given + (given[1] == '-' ? 2 : 1), opt + 2);
        if (d < best_d) {
            best_d = d;
            tc_strlcpy(best, opt, sizeof(best));
        }
    }
    if (best[0] && tc_close_enough(given + (given[1] == '-' ? 2 : 1), best_d))
        snprintf(buf, len, "; did you mean '%s'?", best);
    else if (prefix_of[0] && !prefix_ambiguous)
        snprintf(buf, len, "; did you mean '%s'?", prefix_of);
    return buf;
}

bool cli_parse_format(const char *arg, enum cli_format *fmt)
{
    if (strcmp(arg, "--json") == 0)
        *fmt = CLI_FORMAT_JSON;
    else if (strcmp(arg, "--csv") == 0)
        *fmt = CLI_FORMAT_CSV;
    else if (strcmp(arg, "--table") == 0)
        *fmt = CLI_FORMAT_TABLE;
    else
        return false;
    return true;
}

bool cli_parse_int(const char *cmd, const char *flag, const char *value, long long min,
                   long long max, long long *out)
{
    char *end;
    long long v;

    if (!value || !*value) {
        cli_error(cmd, "%s needs an integer value", flag);
        return false;
    }
    errno = 0;
    v = strtoll(value, &end, 10);
    if (*end || end == value) {
        cli_error(cmd, "%s: '%s' is not an integer", flag, value);
        return false;
    }
    if (errno == ERANGE || v < min || v > max) {
        cli_error(cmd, "%s: %s is out of range [%lld, %lld]", flag, value, min, max);
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_double(const char *cmd, const char *flag, const char *value, double min,
                      double max, double *out)
{
    char *end;
    double v;

    if (!value || !*value) {
        cli_error(cmd, "%s needs a numeric value", flag);
        return false;
    }
    errno = 0;
    v = strtod(value, &end);
    if (*end || end == value || !isfinite(v)) {
        cli_error(cmd, "%s: '%s' is not a number", flag, value);
        return false;
    }
    if (errno == ERANGE || v < min || v > max) {
        cli_error(cmd, "%s: %s is out of range [%g, %g]", flag, value, min, max);
        return false;
    }
    *out = v;
    return true;
}

int cli_value_status(const char *value)
{
    return value && *value ? CLI_EXIT_INPUT : CLI_EXIT_USAGE;
}

bool cli_flag_value(int argc, char **argv, int *i, const char *flag, const char **value)
{
    size_t len = strlen(flag);

    if (strncmp(argv[*i], flag, len) != 0)
        return false;
    if (argv[*i][len] == '=') {
        *value = argv[*i] + len + 1;
        return true;
    }
    if (argv[*i][len] != '\0')
        return false;
    *value = *i + 1 < argc ? argv[++*i] : NULL;
    return true;
}

bool cli_isatty(FILE *f)
{
    return isatty(fileno(f)) == 1;
}

struct cli_table {
    int ncols;
    char **headers;
    bool *numeric;
    size_t nrows, cap;
    char **cells; /* nrows * ncols */
    int cur_col;
};

struct cli_table *cli_table_new(int ncols, const char *const *headers, const bool *numeric)
{
    struct cli_table *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    t->ncols = ncols;
    t->headers = calloc((size_t)ncols, sizeof(char *));
    t->numeric = calloc((size_t)ncols, sizeof(bool));
    if (!t->headers || !t->numeric) {
        cli_table_free(t);
        return NULL;
    }
    for (int i = 0; i < ncols; i++) {
        t->headers[i] = strdup(headers[i]);
        t->numeric[i] = numeric ? numeric[i] : false;
    }
    return t;
}

static void table_reserve_row(struct cli_table *t)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        char **cells = realloc(t->cells, cap * (size_t)t->ncols * sizeof(char *));

        if (!cells) {
            fprintf(stderr, "tilecast: out of memory\n");
            exit(CLI_EXIT_RUNTIME);
        }
        t->cells = cells;
        t->cap = cap;
    }
    if (t->cur_col == 0)
        memset(&t->cells[t->nrows * (size_t)t->ncols], 0, (size_t)t->ncols * sizeof(char *));
}

void cli_table_addf(struct cli_table *t, int col, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;

    table_reserve_row(t);
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    free(t->cells[t->nrows * (size_t)t->ncols + (size_t)col]);
    t->cells[t->nrows * (size_t)t->ncols + (size_t)col] = s;
    t->cur_col = col + 1;
}

void cli_table_end_row(struct cli_table *t)
{
    table_reserve_row(t);
    t->nrows++;
    t->cur_col = 0;
}

void cli_table_add(struct cli_table *t, ...)
{
    va_list ap;

    va_start(ap, t);
    for (int i = 0; i < t->ncols; i++) {
        const char *s = va_arg(ap, const char *);

        cli_table_addf(t, i, "%s", s ? s : "");
    }
    va_end(ap);
    cli_table_end_row(t);
}

void cli_csv_field(FILE *out, const char *s, bool last)
{
    s = s ? s : "";
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', out);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', out);
            fputc(*s, out);
        }
        fputc('"', out);
    } else {
        fputs(s, out);
    }
    fputc(last ? '\n' : ',', out);
}

static const char *cell(const struct cli_table *t, size_t r, int c)
{
    const char *s = t->cells[r * (size_t)t->ncols + (size_t)c];

    return s ? s : "";
}

json_t *cli_table_json(const struct cli_table *t)
{
    json_t *arr = json_array();

    for (size_t r = 0; r < t->nrows; r++) {
        json_t *obj = json_object();

        for (int c = 0; c < t->ncols; c++) {
            const char *s = cell(t, r, c);
            char *end;
            double v = strtod(s, &end);

            if (t->numeric[c] && *s && !*end && isfinite(v) && !strpbrk(s, ".eEnN") &&
                fabs(v) < 9.0e15)
                json_object_set_new(obj, t->headers[c], json_integer((json_int_t)v));
            else if (t->numeric[c] && *s && !*end && isfinite(v))
                json_object_set_new(obj, t->headers[c], json_real(v));
            else if (t->numeric[c] && !*s)
                json_object_set_new(obj, t->headers[c], json_null());
            else
                json_object_set_new(obj, t->headers[c], json_string(s));
        }
        json_array_append_new(arr, obj);
    }
    return arr;
}

void cli_table_print(struct cli_table *t, FILE *out, enum cli_format fmt)
{
    if (fmt == CLI_FORMAT_CSV) {
        for (int c = 0; c < t->ncols; c++)
            cli_csv_field(out, t->headers[c], c == t->ncols - 1);
        for (size_t r = 0; r < t->nrows; r++)
            for (int c = 0; c < t->ncols; c++)
                cli_csv_field(out, cell(t, r, c), c == t->ncols - 1);
    } else if (fmt == CLI_FORMAT_JSON) {
        json_t *arr = cli_table_json(t);

        json_dumpf(arr, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        fputc('\n', out);
        json_decref(arr);
    } else {
        size_t *width = calloc((size_t)t->ncols, sizeof(size_t));

        if (!width)
            return;
        for (int c = 0; c < t->ncols; c++) {
            width[c] = strlen(t->headers[c]);
            for (size_t r = 0; r < t->nrows; r++)
                if (strlen(cell(t, r, c)) > width[c])
                    width[c] = strlen(cell(t, r, c));
        }
        for (int c = 0; c < t->ncols; c++)
            fprintf(out, "%-*s%s", (int)width[c], t->headers[c], c == t->ncols - 1 ? "\n" : "  ");
        for (size_t r = 0; r < t->nrows; r++)
            for (int c = 0; c < t->ncols; c++)
                fprintf(out, t->numeric[c] ? "%*s%s" : "%-*s%s", (int)width[c], cell(t, r, c),
                        c == t->ncols - 1 ? "\n" : "  ");
        free(width);
    }
}

void cli_table_free(struct cli_table *t)
{
    if (!t)
        return;
    if (t->cells) {
        size_t n = t->nrows * (size_t)t->ncols + (t->cur_col ? (size_t)t->ncols : 0);

        for (size_t i = 0; i < n; i++)
            free(t->cells[i]);
    }
    for (int i = 0; t->headers && i < t->ncols; i++)
        free(t->headers[i]);
    free(t->cells);
    free(t->headers);
    free(t->numeric);
    free(t);
}
