/* Errors, names of enums, version, and where the shipped data lives. */
/* defines the error functions: tc-internal.h's analyzer macros stay off */
#define TC_DEFINING_ERRORS
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <unistd.h>

#include "tc-internal.h"

static _Thread_local char last_error[2048];

int tc_error(int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    return err;
}

int tc_error_prefix(int err, const char *fmt, ...)
{
    char prefix[1024];
    char old[sizeof(last_error)];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, last_error, sizeof(old));
    tc_strlcpy(last_error, prefix, sizeof(last_error));
    size_t used = strlen(last_error);
    tc_strlcpy(last_error + used, ": ", sizeof(last_error) - used);
    used = strlen(last_error);
    tc_strlcpy(last_error + used, old, sizeof(last_error) - used);
    return err;
}

void tc_clear_error(void)
{
    last_error[0] = '\0';
}

TC_API const char *tc_last_error(void)
{
    return last_error;
}

TC_API const char *tc_strerror(int err)
{
    switch (err) {
    case TC_OK:
        return "success";
    case TC_ERR_INVALID:
        return "invalid argument";
    case TC_ERR_NOMEM:
        return "out of memory";
    case TC_ERR_IO:
        return "input/output error";
    case TC_ERR_PARSE:
        return "malformed input";
    case TC_ERR_NOT_FOUND:
        return "not found";
    case TC_ERR_UNSUPPORTED:
        return "not supported";
    case TC_ERR_DB:
        return "database error";
    case TC_ERR_SCHEMA:
        return "not a usable tilecast database";
    case TC_ERR_DEVICE:
        return "device error";
    case TC_ERR_RANGE:
        return "value out of range";
    default:
        return "unknown error";
    }
}

TC_API const char *tc_version(void)
{
    return TC_VERSION;
}

TC_API unsigned tc_version_api(void)
{
    return TC_API_VERSION;
}

static const char *const dtype_names[TC_DTYPE_COUNT] = {
    "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8",
};

TC_API const char *tc_dtype_name(enum tc_dtype dtype)
{
    if ((unsigned)dtype >= TC_DTYPE_COUNT)
        return "?";
    return dtype_names[dtype];
}

TC_API int tc_dtype_parse(const char *name, enum tc_dtype *out)
{
    static const struct {
        const char *alias;
        enum tc_dtype dtype;
    } aliases[] = {
        {"double", TC_DTYPE_FP64},   {"float64", TC_DTYPE_FP64}, {"float", TC_DTYPE_FP32},
        {"float32", TC_DTYPE_FP32},  {"half", TC_DTYPE_FP16},    {"float16", TC_DTYPE_FP16},
        {"bfloat16", TC_DTYPE_BF16}, {"fp8e4m3", TC_DTYPE_FP8},  {"e4m3", TC_DTYPE_FP8},
        {"float8", TC_DTYPE_FP8},
    };

    if (!name || !out)
        return tc_error(TC_ERR_INVALID, "no dtype given");
    for (int i = 0; i < TC_DTYPE_COUNT; i++) {
        if (strcasecmp(name, dtype_names[i]) == 0) {
            *out = (enum tc_dtype)i;
            return TC_OK;
        }
    }
    for (size_t i = 0; i < TC_ARRAY_SIZE(aliases); i++) {
        if (strcasecmp(name, aliases[i].alias) == 0) {
            *out = aliases[i].dtype;
            return TC_OK;
        }
    }
    return tc_error(TC_ERR_INVALID,
                    "unknown dtype '%s' (expected fp64, fp32, tf32, fp16, bf16, fp8 or int8)",
                    name);
}

TC_API int tc_dtype_bytes(enum tc_dtype dtype)
{
    switch (dtype) {
    case TC_DTYPE_FP64:
        return 8;
    case TC_DTYPE_FP32:
    case TC_DTYPE_TF32:
        return 4;
    case TC_DTYPE_FP16:
    case TC_DTYPE_BF16:
        return 2;
    case TC_DTYPE_FP8:
    case TC_DTYPE_INT8:
        return 1;
    default:
        return 0;
    }
}

static const char *const layout_names[TC_LAYOUT_COUNT] = {"NN", "NT", "TN", "TT"};

TC_API const char *tc_layout_name(enum tc_layout layout)
{
    if ((unsigned)layout >= TC_LAYOUT_COUNT)
        return "?";
    return layout_names[layout];
}

TC_API int tc_layout_parse(const char *name, enum tc_layout *out)
{
    if (!name || !out)
        return tc_error(TC_ERR_INVALID, "no layout given");
    for (int i = 0; i < TC_LAYOUT_COUNT; i++) {
        if (strcasecmp(name, layout_names[i]) == 0) {
            *out = (enum tc_layout)i;
            return TC_OK;
        }
    }
    return tc_error(TC_ERR_INVALID, "unknown layout '%s' (expected NN, NT, TN or TT)", name);
}

/* The names of the measured data's `op` column (and of the database's). */
static const char *const gemm_op_names[TC_GEMM_OP_COUNT] = {"mm", "bmm", "linear"};

TC_API const char *tc_gemm_op_name(enum tc_gemm_op op)
{
    if ((unsigned)op >= TC_GEMM_OP_COUNT)
        return "?";
    return gemm_op_names[op];
}

TC_API int tc_gemm_op_parse(const char *name, enum tc_gemm_op *out)
{
    if (!name || !out)
        return tc_error(TC_ERR_INVALID, "no op given");
    for (int i = 0; i < TC_GEMM_OP_COUNT; i++) {
        if (strcmp(name, gemm_op_names[i]) == 0) {
            *out = (enum tc_gemm_op)i;
            return TC_OK;
        }
    }
    return tc_error(TC_ERR_INVALID, "unknown op '%s' (expected mm, bmm or linear)", name);
}

TC_API const char *tc_source_name(enum tc_source source)
{
    switch (source) {
    case TC_SOURCE_MEASURED:
        return "measured";
    case TC_SOURCE_CALIBRATED:
        return "calibrated";
    case TC_SOURCE_TRANSFERRED:
        return "transferred";
    case TC_SOURCE_ANALYTICAL:
        return "analytical";
    default:
        return "?";
    }
}

TC_API const char *tc_arch_name(enum tc_arch arch)
{
    static const char *const names[TC_ARCH_COUNT] = {
        "volta", "turing", "ampere", "ada",    "hopper", "blackwell",
        "cdna2", "cdna3",  "cpu",    "pascal", "cdna1",
    };
    if ((unsigned)arch >= TC_ARCH_COUNT)
        return "?";
    return names[arch];
}

bool tc_arch_parse_gpu(const char *s, enum tc_arch *out)
{
    for (int a = 0; s && a < TC_ARCH_COUNT; a++)
        if (a != TC_ARCH_CPU && strcmp(s, tc_arch_name((enum tc_arch)a)) == 0) {
            *out = (enum tc_arch)a;
            return true;
        }
    return false;
}

TC_API const char *tc_link_name(enum tc_link link)
{
    static const char *const names[TC_LINK_COUNT] = {"unknown", "pcie", "nvlink", "xgmi"};

    if ((unsigned)link >= TC_LINK_COUNT)
        return "?";
    return names[link];
}

TC_API const char *tc_status_name(enum tc_status status)
{
    switch (status) {
    case TC_STATUS_OK:
        return "ok";
    case TC_STATUS_OOM:
        return "oom";
    case TC_STATUS_UNSUPPORTED:
        return "unsupported";
    case TC_STATUS_ERROR:
        return "error";
    default:
        return "?";
    }
}

static const char *const attn_impl_names[TC_ATTN_IMPL_COUNT] = {
    "unfused", "flash", "flash2", "flash3", "flash4", "cudnn", "cudnn_oss",
};

TC_API const char *tc_attn_impl_name(enum tc_attn_impl impl)
{
    if ((unsigned)impl >= TC_ATTN_IMPL_COUNT)
        return "?";
    return attn_impl_names[impl];
}

TC_API int tc_attn_impl_parse(const char *name, enum tc_attn_impl *out)
{
    if (!name || !out)
        return tc_error(TC_ERR_INVALID, "no attention implementation given");
    for (int i = 0; i < TC_ATTN_IMPL_COUNT; i++) {
        if (strcasecmp(name, attn_impl_names[i]) == 0) {
            *out = (enum tc_attn_impl)i;
            return TC_OK;
        }
    }
    return tc_error(TC_ERR_INVALID,
                    "unknown attention implementation '%s' (expected flash, flash2, flash3, "
                    "flash4, cudnn, cudnn_oss or unfused)",
                    name);
}

TC_API const char *tc_bound_name(enum tc_bound bound)
{
    switch (bound) {
    case TC_BOUND_COMPUTE:
        return "compute";
    case TC_BOUND_MEMORY:
        return "memory";
    case TC_BOUND_LATENCY:
        return "latency";
    default:
        return "?";
    }
}

TC_API const char *tc_align_name(enum tc_align align)
{
    switch (align) {
    case TC_ALIGN_128B:
        return "128B";
    case TC_ALIGN_16B:
        return "16B";
    case TC_ALIGN_4B:
        return "4B";
    case TC_ALIGN_ELEM:
        return "unaligned";
    default:
        return "?";
    }
}

/* An uninstalled build (the library or binary lives under the build root)
 * reads its data from the source tree; an installed one from the prefix. */
static const char data_dir_anchor;

TC_API const char *tc_data_dir(void)
{
    static _Thread_local char dir[PATH_MAX];
    const char *env = getenv("TILECAST_DATA_DIR");
    Dl_info info;
    char self[PATH_MAX];

    if (env && *env)
        return env;
    /* dladdr names the shared library, or for a program linking the library
     * statically its argv[0], which is no path when found through PATH */
    if (dladdr(&data_dir_anchor, &info) && info.dli_fname &&
        ((strchr(info.dli_fname, '/') && realpath(info.dli_fname, self)) ||
         realpath("/proc/self/exe", self))) {
        char build[PATH_MAX];
        const char *root = TC_BUILD_ROOT;

        if (realpath(TC_BUILD_ROOT, build))
            root = build;
        if (strncmp(self, root, strlen(root)) == 0 && self[strlen(root)] == '/') {
            tc_strlcpy(dir, TC_SOURCE_ROOT, sizeof(dir));
            return dir;
        }
    }
    tc_strlcpy(dir, TC_INSTALL_DATA_DIR, sizeof(dir));
    return dir;
}

int tc_data_path(const char *rel, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s/%s", tc_data_dir(), rel);

    if (n < 0 || (size_t)n >= len)
        return tc_error(TC_ERR_RANGE, "data path too long: %s/%s", tc_data_dir(), rel);
    return TC_OK;
}

/* "a, b, c" of the .yaml files in dir, without the suffix, sorted. */
static void list_yaml_names(const char *dir, char *buf, size_t len)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort);
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *nm = names[i]->d_name;
        size_t l = strlen(nm);

        if (l > 5 && strcmp(nm + l - 5, ".yaml") == 0 && nm[0] != '.') {
            int w = snprintf(buf + used, len - used, "%s%.*s", used ? ", " : "", (int)(l - 5), nm);

            if (w > 0 && (size_t)w < len - used)
                used += (size_t)w;
        }
        free(names[i]);
    }
    free(names);
}

int tc_data_file_named(const char *subdir, const char *what, const char *name, char *buf,
                       size_t len, const char **out)
{
    char dir[PATH_MAX], known[1024];
    size_t nl;
    int n;

    *out = name;
    if (!name || !*name)
        return tc_error(TC_ERR_INVALID, "no %s named", what);
    if (strchr(name, '/') || access(name, F_OK) == 0)
        return TC_OK;
    if (tc_data_path(subdir, dir, sizeof(dir)) < 0)
        return TC_ERR_RANGE;
    nl = strlen(name);
    n = snprintf(buf, len, "%s/%s%s", dir, name,
                 nl > 5 && strcmp(name + nl - 5, ".yaml") == 0 ? "" : ".yaml");
    if (n > 0 && (size_t)n < len && access(buf, R_OK) == 0) {
        *out = buf;
        return TC_OK;
    }
    list_yaml_names(dir, known, sizeof(known));
    return tc_error(TC_ERR_IO, "%s: no such file, nor a shipped %s of that name (shipped: %s)",
                    name, what, known[0] ? known : "none found");
}

char *tc_strdup(const char *s)
{
    char *d = strdup(s ? s : "");

    if (!d)
        tc_error(TC_ERR_NOMEM, "out of memory");
    return d;
}

int tc_edit_distance(const char *a, const char *b)
{
    /* three rows of the dynamic programme: two back for transpositions */
    int rows[3][TC_EDIT_MAX + 1];
    size_t la = strlen(a), lb = strlen(b);

    if (la > TC_EDIT_MAX || lb > TC_EDIT_MAX)
        return INT_MAX;
    for (size_t j = 0; j <= lb; j++)
        rows[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *prev2 = rows[(i + 1) % 3];

        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int d = prev[j] + 1;

            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            if (prev[j - 1] + cost < d)
                d = prev[j - 1] + cost;
            if (i > 1 && j > 1 &&
                tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) &&
                prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1;
            cur[j] = d;
        }
    }
    return rows[la % 3][lb];
}

bool tc_close_enough(const char *given, int distance)
{
    int len = (int)strlen(given);
    int most = len < 8 ? 1 : len / 4;

    /* one slip in a short word, about one in four letters of a longer one
     * (at most three): "dtpye" is "dtype" and "h100-sxm-80gb" is
     * "h100-sxm5-80gb"; a word of one letter is nobody's typo */
    if (most > 3)
        most = 3;
    return distance <= most && distance < len;
}

void tc_strlcpy(char *dst, const char *src, size_t len)
{
    size_t n;

    if (!len)
        return;
    n = src ? strlen(src) : 0;
    if (n >= len)
        n = len - 1;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

/* This host's name as it goes into temporary file names: up to the first
 * dot (node07, not node07.cluster.example: either is unique on a cluster,
 * and names stay short), with '/' never in it. */
static void host_name(char *buf, size_t len)
{
    char *dot;

    if (gethostname(buf, len - 1) != 0)
        buf[0] = '\0';
    buf[len - 1] = '\0';
    if ((dot = strchr(buf, '.')))
        *dot = '\0';
    for (char *p = buf; *p; p++)
        if (*p == '/')
            *p = '_';
    if (!buf[0])
        tc_strlcpy(buf, "localhost", len);
}

int tc_temp_path(const char *path, const char *tag, char *buf, size_t len)
{
    char host[256];
    int n;

    host_name(host, sizeof(host));
    n = snprintf(buf, len, "%s.%s-%ld@%s", path, tag, (long)getpid(), host);
    if (n < 0 || (size_t)n >= len)
        return tc_error(TC_ERR_RANGE, "%s: path too long", path);
    return TC_OK;
}

/* Whether name (an entry of path's folder) is "<base>.<tag>-<pid>[@<host>]"
 * with an optional -wal, -shm or -journal; sets *pid and *local (no host,
 * or this one). */
static bool stale_name(const char *name, const char *base, const char *tag, const char *host,
                       long *pid, bool *local)
{
    static const char *const parts[] = {"-wal", "-shm", "-journal"};
    size_t bl = strlen(base), tl = strlen(tag), len = strlen(name);
    const char *p = name + bl + 1 + tl + 1, *at;
    char *end;

    if (strncmp(name, base, bl) != 0 || name[bl] != '.' || strncmp(name + bl + 1, tag, tl) != 0 ||
        name[bl + 1 + tl] != '-' || *p < '0' || *p > '9')
        return false;
    for (size_t i = 0; i < TC_ARRAY_SIZE(parts); i++) {
        size_t pl = strlen(parts[i]);

        if (len > pl && strcmp(name + len - pl, parts[i]) == 0) {
            len -= pl;
            break;
        }
    }
    errno = 0;
    *pid = strtol(p, &end, 10);
    if (errno || *pid <= 0 || end > name + len)
        return false;
    if (end == name + len) {
        *local = true; /* the form without a host, of earlier versions */
        return true;
    }
    if (*end != '@')
        return false;
    at = end + 1;
    *local = (size_t)(name + len - at) == strlen(host) && strncmp(at, host, strlen(host)) == 0;
    return true;
}

void tc_remove_stale_temps(const char *path, const char *tag)
{
    char dir[4096], host[256], file[8192];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    struct dirent *de;
    DIR *d;

    if (!*base)
        return;
    if (slash) {
        if ((size_t)(slash - path) + 2 > sizeof(dir))
            return;
        memcpy(dir, path, (size_t)(slash - path) + 1);
        dir[slash - path + 1] = '\0';
    } else {
        tc_strlcpy(dir, "./", sizeof(dir));
    }
    host_name(host, sizeof(host));
    if (!(d = opendir(dir)))
        return;
    while ((de = readdir(d))) {
        long pid;
        bool local;

        if (!stale_name(de->d_name, base, tag, host, &pid, &local) || !local)
            continue;
        /* alive (EPERM: alive, another user's) or our own: not stale */
        if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        if (snprintf(file, sizeof(file), "%s%s", dir, de->d_name) < (int)sizeof(file))
            unlink(file);
    }
    closedir(d);
}

/* The length of the valid UTF-8 sequence at s (1-4), or 0 if the byte at s
 * does not start one (a stray continuation byte, an overlong form, a
 * surrogate, beyond U+10FFFF, or cut short). */
size_t tc_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned long cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void tc_remove_db_files(const char *path)
{
    static const char *const parts[] = {"", "-wal", "-shm", "-journal"};
    char file[8192];

    for (size_t i = 0; i < TC_ARRAY_SIZE(parts); i++)
        if (snprintf(file, sizeof(file), "%s%s", path, parts[i]) < (int)sizeof(file))
            unlink(file);
}

int tc_parse_i64(const char *s, long long *out)
{
    char *end;
    long long v;

    if (!s || !*s)
        return tc_error(TC_ERR_PARSE, "empty number");
    {
        /* the common case, up to 18 plain digits (no sign, space or
         * overflow possible), without strtoll: batch files hold millions */
        const char *p = s;
        long long fast = 0;

        while (*p >= '0' && *p <= '9' && p - s < 18)
            fast = fast * 10 + (*p++ - '0');
        if (!*p && p > s) {
            *out = fast;
            return TC_OK;
        }
    }
    while (isspace((unsigned char)*s))
        s++;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (end == s)
        return tc_error(TC_ERR_PARSE, "'%s' is not an integer", s);
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return tc_error(TC_ERR_PARSE, "'%s' is not an integer", s);
    if (errno == ERANGE)
        return tc_error(TC_ERR_RANGE, "'%s' overflows a 64-bit integer", s);
    *out = v;
    return TC_OK;
}

size_t tc_decimal_len(const char *s)
{
    const char *p = s;
    size_t digits = 0;

    if (*p == '+' || *p == '-')
        p++;
    for (; *p >= '0' && *p <= '9'; p++)
        digits++;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            digits++;
    if (!digits)
        return 0;
    if (*p == 'e' || *p == 'E') {
        const char *e = p + 1;

        if (*e == '+' || *e == '-')
            e++;
        if (*e >= '0' && *e <= '9') {
            while (*e >= '0' && *e <= '9')
                e++;
            p = e;
        }
    }
    return (size_t)(p - s);
}

int tc_parse_double(const char *s, double *out)
{
    char *end;
    double v;

    if (!s || !*s)
        return tc_error(TC_ERR_PARSE, "empty number");
    while (isspace((unsigned char)*s))
        s++;
    /* strtod also reads hex (0x258), inf and nan: no file of measurements,
     * specs or parameters means those, and a hex time read as decimal by
     * another tool (or the reverse) is silently a different number */
    if (!tc_decimal_len(s))
        return tc_error(TC_ERR_PARSE, "'%s' is not a decimal number", s);
    errno = 0;
    v = strtod(s, &end);
    if (end != s + tc_decimal_len(s))
        return tc_error(TC_ERR_PARSE, "'%s' is not a decimal number", s);
    if (end == s)
        return tc_error(TC_ERR_PARSE, "'%s' is not a number", s);
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return tc_error(TC_ERR_PARSE, "'%s' is not a number", s);
    if (errno == ERANGE || !isfinite(v))
        return tc_error(TC_ERR_RANGE, "'%s' is out of range", s);
    *out = v;
    return TC_OK;
}
