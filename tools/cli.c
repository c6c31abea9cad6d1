/* Shared helpers of the tilecast command. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
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
    char *msg = NULL;
    int n;

    fprintf(stderr, "tilecast%s%s: error: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    /* messages quote file contents: escaped, so that a file cannot drive
     * the terminal */
    if (n >= 0)
        cli_fput_text(stderr, msg);
    else
        fputs("(out of memory)", stderr);
    free(msg);
    fputc('\n', stderr);
}

/* Appends the text form of s to f (a FILE or a memory stream). */
static void put_text(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (p && *p) {
        size_t n = tc_utf8_len(p);

        if (*p == '\n') {
            fputs("\\n", f);
        } else if (*p == '\t') {
            fputs("\\t", f);
        } else if (n == 0 || *p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\x%02x", *p);
            n = 1;
        } else if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
            /* C1 controls: U+009B is a CSI to some terminals */
            fprintf(f, "\\x%02x\\x%02x", p[0], p[1]);
        } else {
            fwrite(p, 1, n, f);
        }
        p += n;
    }
}

void cli_fput_text(FILE *f, const char *s)
{
    put_text(f, s);
}

char *cli_text_dup(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);

    if (!m)
        return NULL;
    put_text(m, s);
    if (fclose(m) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

json_t *cli_json_string(const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    char *buf;
    size_t o = 0;
    json_t *j;

    j = json_string((const char *)p);
    if (j)
        return j;
    /* at most three bytes (U+FFFD) for each byte */
    buf = malloc(3 * strlen((const char *)p) + 1);
    if (!buf)
        return NULL;
    while (*p) {
        size_t n = tc_utf8_len(p);

        if (n == 0) {
            memcpy(buf + o, "\xef\xbf\xbd", 3);
            o += 3;
            p++;
        } else {
            memcpy(buf + o, p, n);
            o += n;
            p += n;
        }
    }
    buf[o] = '\0';
    j = json_string(buf);
    free(buf);
    return j;
}

int cli_exit_code(int err)
{
    switch (err) {
    case TC_OK:
        return CLI_EXIT_OK;
    case TC_ERR_INVALID:
    case TC_ERR_PARSE:
    case TC_ERR_NOT_FOUND:
    case TC_ERR_UNSUPPORTED:
    case TC_ERR_SCHEMA:
    case TC_ERR_RANGE:
        return CLI_EXIT_INPUT;
    default:
        return CLI_EXIT_RUNTIME;
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
    int e = 0, st;

    /* a directory opens, and fails only at the first read */
    st = stat(path, &sb);
    if (st == 0 && S_ISDIR(sb.st_mode))
        e = EISDIR;
    else if (st != 0 || access(path, R_OK) != 0)
        e = errno; /* of the call that failed */
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

static bool same_inode(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

bool cli_output_distinct(const char *cmd, const char *output, const char *const *inputs, size_t n)
{
    /* a database's committed rows may still be in its log: writing over
     * the log loses them as surely as writing over the file */
    static const char *const parts[] = {"", "-wal", "-journal"};
    struct stat out_sb, in_sb;
    char buf[PATH_MAX];

    if (!output || strcmp(output, "-") == 0 || stat(output, &out_sb) != 0)
        return true;
    for (size_t i = 0; i < n; i++) {
        if (!inputs[i])
            continue;
        for (size_t p = 0; p < sizeof(parts) / sizeof(parts[0]); p++) {
            bool stdin_in = strcmp(inputs[i], "-") == 0;

            if (stdin_in && p > 0)
                break;
            if (stdin_in ? fstat(STDIN_FILENO, &in_sb) != 0
                         : (snprintf(buf, sizeof(buf), "%s%s", inputs[i], parts[p]) >=
                                (int)sizeof(buf) ||
                            stat(buf, &in_sb) != 0))
                continue;
            if (!same_inode(&out_sb, &in_sb))
                continue;
            cli_error(cmd,
                      "%s: is the %s%s %s%s: writing it would destroy the input; write "
                      "the output to another file",
                      output,
                      p == 0   ? ""
                      : p == 1 ? "write-ahead log of the "
                               : "journal of the ",
                      stdin_in ? "input on" : "input", stdin_in ? "standard input" : inputs[i],
                      !stdin_in && p == 0 && strcmp(output, inputs[i]) != 0
                          ? " (the same file by another name)"
                          : "");
            return false;
        }
    }
    return true;
}

/* The temporary file of the output being written, removed if a signal ends
 * the command before the output is in place. */
static char *volatile pending_tmp;
static struct sigaction saved_actions[3];
static const int cleanup_signals[3] = {SIGINT, SIGTERM, SIGHUP};

static void remove_pending(int sig)
{
    char *tmp = pending_tmp;

    if (tmp)
        unlink(tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void watch_tmp(char *tmp)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = remove_pending;
    sigemptyset(&sa.sa_mask);
    pending_tmp = tmp;
    for (int i = 0; i < 3; i++)
        sigaction(cleanup_signals[i], &sa, &saved_actions[i]);
}

static void unwatch_tmp(void)
{
    for (int i = 0; i < 3; i++)
        sigaction(cleanup_signals[i], &saved_actions[i], NULL);
    pending_tmp = NULL;
}

/* Whether sb is the file standard output or standard error goes to: it is
 * written in place (output to /dev/stdout redirected to a file), since
 * renaming over it would leave the shell's descriptor on the old file. */
static bool is_own_stream(const struct stat *sb)
{
    struct stat s;

    return (fstat(STDOUT_FILENO, &s) == 0 && same_inode(&s, sb)) ||
           (fstat(STDERR_FILENO, &s) == 0 && same_inode(&s, sb));
}

int cli_output_open(const char *cmd, struct cli_output *o, const char *output,
                    const char *const *inputs, size_t n)
{
    struct stat sb;
    bool exists;
    char *real = NULL;
    const char *slash;
    size_t len;
    int fd = -1, e;

    memset(o, 0, sizeof(*o));
    if (!output || strcmp(output, "-") == 0) {
        o->f = stdout;
        o->name = "<stdout>";
        return CLI_EXIT_OK;
    }
    o->name = output;
    if (!cli_output_distinct(cmd, output, inputs, n))
        return CLI_EXIT_INPUT;
    exists = stat(output, &sb) == 0;
    if (exists && (!S_ISREG(sb.st_mode) || is_own_stream(&sb))) {
        if (!(o->f = fopen(output, "w"))) {
            cli_error(cmd, "%s: cannot write: %s", output, strerror(errno));
            return CLI_EXIT_RUNTIME;
        }
        return CLI_EXIT_OK;
    }
    /* the file a symbolic link names is replaced, not the link */
    if (exists)
        real = realpath(output, NULL);
    o->replaces = exists;
    o->target = real ? real : strdup(output);
    len = o->target ? strlen(o->target) + 320 : 0;
    if (!o->target || !(o->tmp = malloc(len))) {
        cli_error(cmd, "out of memory");
        cli_output_close(cmd, o, false);
        return CLI_EXIT_RUNTIME;
    }
    if (tc_temp_path(o->target, "tmp", o->tmp, len) < 0) {
        cli_error(cmd, "%s", tc_last_error());
        free(o->tmp);
        o->tmp = NULL;
        cli_output_close(cmd, o, false);
        return CLI_EXIT_RUNTIME;
    }
    /* what a run killed while writing it left (SIGKILL cannot be caught),
     * and one of this PID's, left by an earlier process that had it */
    tc_remove_stale_temps(o->target, "tmp");
    unlink(o->tmp);
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    e = errno;
    if (fd >= 0)
        watch_tmp(o->tmp);
    if (fd < 0 && exists && (e == EACCES || e == EPERM) && access(output, W_OK) == 0) {
        /* a writable file in a folder that is not: it can only be written
         * in place, as before */
        free(o->tmp);
        free(o->target);
        o->tmp = o->target = NULL;
        if (!(o->f = fopen(output, "w"))) {
            cli_error(cmd, "%s: cannot write: %s", output, strerror(errno));
            return CLI_EXIT_RUNTIME;
        }
        return CLI_EXIT_OK;
    }
    if (fd < 0) {
        slash = strrchr(o->target, '/');
        free(o->tmp);
        o->tmp = NULL;
        cli_error(cmd, "%s: cannot create: %s%s%.*s%s", output, strerror(e), slash ? " (in " : "",
                  slash ? (int)(slash - o->target) : 0, slash ? o->target : "", slash ? ")" : "");
        cli_output_close(cmd, o, false);
        return CLI_EXIT_RUNTIME;
    }
    if (exists)
        (void)fchmod(fd, sb.st_mode & 07777);
    if (!(o->f = fdopen(fd, "w"))) {
        cli_error(cmd, "%s: %s", o->tmp, strerror(errno));
        close(fd);
        cli_output_close(cmd, o, false);
        return CLI_EXIT_RUNTIME;
    }
    return CLI_EXIT_OK;
}

int cli_output_close(const char *cmd, struct cli_output *o, bool ok)
{
    int rc = CLI_EXIT_OK;

    if (o->f == stdout) {
        if (ok && (fflush(stdout) != 0 || ferror(stdout))) {
            cli_error(cmd, "<stdout>: write error: %s", strerror(errno));
            rc = CLI_EXIT_RUNTIME;
        }
        o->f = NULL;
        return rc;
    }
    if (o->f) {
        bool bad = ferror(o->f) != 0;

        errno = 0;
        /* on disk before the rename, so that a crash cannot leave an empty
         * file where the old one was */
        if (ok && o->tmp && (fflush(o->f) != 0 || fsync(fileno(o->f)) != 0))
            bad = true;
        if (fclose(o->f) != 0 || bad) {
            if (ok)
                cli_error(cmd, "%s: write error: %s", o->name,
                          errno ? strerror(errno) : "output error");
            ok = false;
            rc = CLI_EXIT_RUNTIME;
        }
        o->f = NULL;
    }
    if (o->tmp) {
        if (ok && rename(o->tmp, o->target) != 0) {
            cli_error(cmd, "%s: cannot put the output in place: %s", o->name, strerror(errno));
            ok = false;
            rc = CLI_EXIT_RUNTIME;
        }
        if (!ok) {
            unlink(o->tmp);
            fprintf(stderr, "tilecast %s: note: %s: %s\n", cmd, o->name,
                    o->replaces ? "left as it was" : "not written");
        }
        unwatch_tmp();
    }
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    return rc;
}

struct tc_specs *cli_load_specs(const char *cmd)
{
    struct tc_specs *specs;

    if (tc_specs_load(NULL, &specs) < 0) {
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
    else if (strcmp(arg, "--md") == 0)
        *fmt = CLI_FORMAT_MD;
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

bool cli_parse_double(const char *cmd, const char *flag, const char *value, double min, double max,
                      double *out)
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

/* The unlocked stdio calls: the command writes from one thread, and the
 * per-call locking was a good part of the batch path's time. */
void cli_csv_field(FILE *out, const char *s, bool last)
{
    size_t n = 0;

    s = s ? s : "";
    /* one pass: the plain field's length, or the first byte that needs quoting */
    while (s[n] && s[n] != ',' && s[n] != '"' && s[n] != '\n' && s[n] != '\r')
        n++;
    if (!s[n]) {
        fwrite_unlocked(s, 1, n, out);
    } else {
        putc_unlocked('"', out);
        for (; *s; s++) {
            if (*s == '"')
                putc_unlocked('"', out);
            putc_unlocked(*s, out);
        }
        putc_unlocked('"', out);
    }
    putc_unlocked(last ? '\n' : ',', out);
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
                json_object_set_new(obj, t->headers[c], cli_json_string(s));
        }
        json_array_append_new(arr, obj);
    }
    return arr;
}

/* A markdown cell: escaped for a terminal like the text table, and '|'
 * escaped so that it does not end the cell. */
static void md_cell(FILE *out, const char *s)
{
    char *x = cli_text_dup(s ? s : "");

    fputc(' ', out);
    for (const char *p = x ? x : "?"; *p; p++) {
        if (*p == '|')
            fputc('\\', out);
        fputc(*p, out);
    }
    fputs(" |", out);
    free(x);
}

void cli_table_print_csv_with(struct cli_table *t, FILE *out, int n_extra,
                              const char *const *extra_headers, const char *const *extra_values)
{
    for (int c = 0; c < t->ncols; c++)
        cli_csv_field(out, t->headers[c], c == t->ncols - 1 && n_extra == 0);
    for (int e = 0; e < n_extra; e++)
        cli_csv_field(out, extra_headers[e], e == n_extra - 1);
    for (size_t r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++)
            cli_csv_field(out, cell(t, r, c), c == t->ncols - 1 && n_extra == 0);
        for (int e = 0; e < n_extra; e++)
            cli_csv_field(out, extra_values[e], e == n_extra - 1);
    }
}

void cli_table_print(struct cli_table *t, FILE *out, enum cli_format fmt)
{
    if (fmt == CLI_FORMAT_MD) {
        fputc('|', out);
        for (int c = 0; c < t->ncols; c++)
            md_cell(out, t->headers[c]);
        fputs("\n|", out);
        for (int c = 0; c < t->ncols; c++)
            fputs(t->numeric[c] ? "---:|" : "---|", out);
        fputc('\n', out);
        for (size_t r = 0; r < t->nrows; r++) {
            fputc('|', out);
            for (int c = 0; c < t->ncols; c++)
                md_cell(out, cell(t, r, c));
            fputc('\n', out);
        }
    } else if (fmt == CLI_FORMAT_CSV) {
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
        /* text for a terminal: cells from files (a run's source, a kernel
         * name) are escaped, and aligned as escaped */
        size_t ncells = t->nrows * (size_t)t->ncols;
        size_t *width = calloc((size_t)t->ncols, sizeof(size_t));
        char **text = calloc(ncells ? ncells : 1, sizeof(char *));

        if (!width || !text) {
            free(width);
            free(text);
            return;
        }
        for (size_t r = 0; r < t->nrows; r++)
            for (int c = 0; c < t->ncols; c++)
                text[r * (size_t)t->ncols + (size_t)c] = cli_text_dup(cell(t, r, c));
        for (int c = 0; c < t->ncols; c++) {
            width[c] = strlen(t->headers[c]);
            for (size_t r = 0; r < t->nrows; r++) {
                const char *x = text[r * (size_t)t->ncols + (size_t)c];

                if (x && strlen(x) > width[c])
                    width[c] = strlen(x);
            }
        }
        for (int c = 0; c < t->ncols; c++)
            fprintf(out, "%-*s%s", (int)width[c], t->headers[c], c == t->ncols - 1 ? "\n" : "  ");
        for (size_t r = 0; r < t->nrows; r++)
            for (int c = 0; c < t->ncols; c++) {
                const char *x = text[r * (size_t)t->ncols + (size_t)c];

                fprintf(out, t->numeric[c] ? "%*s%s" : "%-*s%s", (int)width[c], x ? x : "?",
                        c == t->ncols - 1 ? "\n" : "  ");
            }
        for (size_t i = 0; i < ncells; i++)
            free(text[i]);
        free(text);
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
