/* Imports of measurements made by other tools: the shared measured-data CSV,
 * EleutherAI cookbook sizing logs and mamf-finder logs (attention results,
 * import-attention.c). Every import runs in
 * one transaction, so a malformed line anywhere leaves the database exactly
 * as it was. Imported runs are kind 'imported' and keep their source, timing
 * method and licence; they are never presented as collected by tilecast. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bounds.h"
#include "csv.h"
#include "input.h"
#include "db-internal.h"
#include "import-internal.h"

/* Largest dimension accepted: keeps 2·m·n·k·batch a finite double. */
#define DIM_MAX TC_BOUND_DIM_MAX

/* Licences of the public sources tilecast knows, by repository prefix of the
 * `source` column (owner/repo@commit:path). */
static const struct {
    const char *prefix;
    const char *licence;
} known_sources[] = {
    {"microsoft/vidur@", "MIT"},
    {"sitar-lab/NeuSight@", "MIT"},
    {"ROCm/rocBLAS@", "MIT"},
    {"EleutherAI/cookbook@", "Apache-2.0"},
    {"stas00/ml-engineering@", "CC-BY-SA-4.0"},
    {"NVIDIA/cudnn-frontend@", "Apache-2.0"},
};

const char *db_import_licence(const char *source)
{
    for (size_t i = 0; source && i < TC_ARRAY_SIZE(known_sources); i++)
        if (strncmp(source, known_sources[i].prefix, strlen(known_sources[i].prefix)) == 0)
            return known_sources[i].licence;
    return NULL;
}

const char *db_import_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

/* Stores the GPU's spec snapshot if the database lacks it. */
static int ensure_gpu(struct importer *imp, const char *gpu_id, const char *file, long line)
{
    const struct tc_gpu *gpu;
    bool found;
    int err = db_has_gpu(imp->db, gpu_id, &found);

    if (err < 0 || found)
        return err;
    gpu = imp->lookup ? imp->lookup(imp->lookup_ctx, gpu_id) : NULL;
    if (!gpu) {
        if (line > 0)
            return tc_error(TC_ERR_NOT_FOUND,
                            "%s:%ld: unknown GPU '%s': no spec in the "
                            "database or in gpu_specs/ (add a YAML file with --specs-dir)",
                            file, line, gpu_id);
        return tc_error(TC_ERR_NOT_FOUND,
                        "%s: unknown GPU '%s': no spec in the database or "
                        "in gpu_specs/ (add a YAML file with --specs-dir)",
                        file, gpu_id);
    }
    return tc_db_put_gpu(imp->db, gpu);
}

/* One run per (format, GPU, timing method, source). Its config_hash makes
 * a second import of the same data find the same run, whose unique shape
 * key then drops the repeated rows: imports are idempotent. */
int db_import_run(struct importer *imp, const char *gpu_id, const char *timing, const char *source,
                  const char *licence, const char *runtime, const char *file, long line,
                  int64_t *run_id)
{
    struct tc_run_info info = {0};
    char *key = NULL, hash[17], now[32];
    size_t key_len;
    int err;

    key_len = strlen(imp->format) + strlen(gpu_id) + strlen(timing) + strlen(source) + 8;
    key = malloc(key_len);
    if (!key)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    snprintf(key, key_len, "%s|%s|%s|%s", imp->format, gpu_id, timing, source);
    for (size_t i = 0; i < imp->n_runs; i++) {
        if (strcmp(imp->runs[i].key, key) == 0) {
            *run_id = imp->runs[i].id;
            free(key);
            return TC_OK;
        }
    }
    err = ensure_gpu(imp, gpu_id, file, line);
    if (err < 0)
        goto fail;
    db_hash_hex(key, hash);
    err = tc_db_find_run(imp->db, gpu_id, hash, run_id);
    if (err == TC_ERR_NOT_FOUND) {
        db_now_iso(now, sizeof(now));
        info.gpu_id = gpu_id;
        info.kind = "imported";
        info.backend = imp->format;
        info.config_hash = hash;
        info.timing = timing;
        info.source = source;
        info.licence = licence;
        info.runtime_version = runtime;
        info.tilecast_version = tc_version();
        info.started_at = now;
        info.ended_at = now;
        tc_clear_error();
        err = tc_db_add_run(imp->db, &info, run_id);
        if (err == TC_OK)
            imp->stats->runs++;
    }
    if (err < 0)
        goto fail;
    if (imp->n_runs == imp->cap_runs) {
        size_t cap = imp->cap_runs ? imp->cap_runs * 2 : 8;
        struct import_run_slot *runs = realloc(imp->runs, cap * sizeof(*runs));

        if (!runs) {
            err = tc_error(TC_ERR_NOMEM, "out of memory");
            goto fail;
        }
        imp->runs = runs;
        imp->cap_runs = cap;
    }
    imp->runs[imp->n_runs].key = key;
    imp->runs[imp->n_runs].id = *run_id;
    imp->n_runs++;
    return TC_OK;
fail:
    free(key);
    return err;
}

static int store(struct importer *imp, const struct tc_gemm_row *row, const char *op,
                 const char *file, long line)
{
    bool inserted = false;
    int err;

    /* every format's time, given or derived from a throughput, within the
     * physical bounds: an absurd one is a wrong unit or a broken log */
    err = tc_bound_check_gemm(row->m, row->n, row->k, row->batch, row->time_us);
    if (err == TC_OK && row->min_us != 0 && !tc_bound_time_ok(row->min_us))
        err = tc_bound_check_time("min_us", row->min_us);
    if (err < 0)
        return line > 0 ? tc_error_prefix(err, "%s:%ld", file, line)
                        : tc_error_prefix(err, "%s", file);
    err = db_insert_gemm_op(imp->db, row, op, &inserted);
    if (err < 0)
        return tc_error_prefix(err, "%s:%ld", file, line);
    if (inserted)
        imp->stats->rows++;
    else
        imp->stats->duplicates++;
    return TC_OK;
}

static int parse_dim(const char *s, const char *file, long line, int col, const char *name,
                     int64_t *out)
{
    long long v;

    if (tc_parse_i64(s, &v) < 0 || v < 1 || v > DIM_MAX)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: %s '%s' is not an integer in [1, 2^40]", file,
                        line, col, name, s);
    *out = v;
    return TC_OK;
}

static int parse_dtype_arg(const char *s, enum tc_dtype *out)
{
    char buf[64];

    /* logs write torch dtypes: torch.bfloat16, float8_e4m3fn, ... */
    if (strncmp(s, "torch.", 6) == 0)
        s += 6;
    if (strncasecmp(s, "float8", 6) == 0) {
        *out = TC_DTYPE_FP8;
        return TC_OK;
    }
    tc_strlcpy(buf, s, sizeof(buf));
    return tc_dtype_parse(buf, out);
}

/* ------------------------------------------------------------------------ */
/* csv                                                                       */
/* ------------------------------------------------------------------------ */

enum csv_col {
    C_GPU,
    C_DTYPE,
    C_OP,
    C_BATCH,
    C_M,
    C_N,
    C_K,
    C_LAYOUT,
    C_TIME,
    C_TFLOPS,
    C_TIMING,
    C_SOURCE,
    C_DTYPE_C,
    C_COMPUTE,
    C_MIN,
    C_SPREAD,
    C_REPS,
    C_ALGO,
    C_KERNEL,
    C_LICENCE,
    C_FLAG,
    C_EFFICIENCY,
    C_COUNT
};

static const char *const csv_names[C_COUNT] = {
    "gpu",     "dtype",   "op",      "batch",          "m",      "n",
    "k",       "layout",  "time_us", "tflops",         "timing", "source",
    "dtype_c", "compute", "min_us",  "spread_pct",     "reps",   "algo",
    "kernel",  "licence", "flag",    "efficiency_pct",
};

/* Columns that carry a time in another unit: named in the error, never
 * guessed at. */
static const char *const time_unit_columns[] = {"time_ms",    "time_s",     "time_ns",   "time",
                                                "latency_ms", "latency_us", "elapsed_ms"};

static const char *field(char **fields, const int *cols, enum csv_col c)
{
    const char *s = cols[c] >= 0 ? fields[cols[c]] : NULL;

    return s && *s ? s : NULL;
}

static int csv_header(const char *file, int nfields, char **fields, int *cols,
                      const struct tc_import_options *opt)
{
    static const enum csv_col required[] = {C_DTYPE, C_M, C_N, C_K};

    for (int c = 0; c < C_COUNT; c++)
        cols[c] = tc_csv_find(nfields, fields, csv_names[c]);
    for (size_t i = 0; i < TC_ARRAY_SIZE(required); i++)
        if (cols[required[i]] < 0)
            return tc_error(TC_ERR_PARSE,
                            "%s:1: missing column '%s' (the header must name "
                            "gpu,dtype,op,batch,m,n,k,layout,time_us,tflops,timing,source)",
                            file, csv_names[required[i]]);
    if (cols[C_TIME] < 0 && cols[C_TFLOPS] < 0) {
        for (size_t i = 0; i < TC_ARRAY_SIZE(time_unit_columns); i++) {
            int c = tc_csv_find(nfields, fields, time_unit_columns[i]);

            if (c >= 0)
                return tc_error(TC_ERR_PARSE,
                                "%s:1:%d: column '%s' has no accepted unit: "
                                "times must be in a column 'time_us' (microseconds)",
                                file, c + 1, time_unit_columns[i]);
        }
        return tc_error(TC_ERR_PARSE,
                        "%s:1: missing column 'time_us' (or 'tflops'): "
                        "rows need a time in microseconds",
                        file);
    }
    if (cols[C_GPU] < 0 && !opt->gpu_id)
        return tc_error(TC_ERR_PARSE,
                        "%s:1: missing column 'gpu' (or give the GPU with "
                        "--gpu)",
                        file);
    if (cols[C_LAYOUT] < 0 && cols[C_OP] < 0)
        return tc_error(TC_ERR_PARSE,
                        "%s:1: missing column 'layout' (or 'op' to derive it "
                        "from)",
                        file);
    if (cols[C_TIMING] < 0 && !opt->timing)
        return tc_error(TC_ERR_PARSE,
                        "%s:1: missing column 'timing' (or give the timing "
                        "method with --timing)",
                        file);
    return TC_OK;
}

static int parse_real_field(const char *s, const char *file, long line, int col, const char *name,
                            double *out)
{
    if (tc_parse_double(s, out) < 0 || !(*out > 0.0))
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: %s '%s' is not a positive number", file, line,
                        col, name, s);
    return TC_OK;
}

static int import_csv_record(struct importer *imp, const char *file, long line, char **fields,
                             const int *cols)
{
    const struct tc_import_options *opt = imp->opt;
    struct tc_gemm_row row = {0};
    const char *s, *gpu_id, *op, *timing, *source, *licence;
    double tflops = 0.0, flops;
    int64_t run_id;
    int err;

#define COL(c) (cols[c] + 1)
    gpu_id = field(fields, cols, C_GPU);
    if (opt->gpu_id) {
        if (gpu_id && strcmp(gpu_id, opt->gpu_id) != 0) {
            imp->stats->skipped_gpu++;
            return TC_OK;
        }
        gpu_id = opt->gpu_id;
    }
    if (!gpu_id)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: empty gpu", file, line, COL(C_GPU));
    if (strlen(gpu_id) >= TC_ID_MAX)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: gpu id longer than %d characters", file, line,
                        COL(C_GPU), TC_ID_MAX - 1);
    s = field(fields, cols, C_DTYPE);
    if (!s || parse_dtype_arg(s, &row.dtype) < 0)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: unknown dtype '%s'", file, line, COL(C_DTYPE),
                        s ? s : "");
    op = field(fields, cols, C_OP);
    if (op && strcmp(op, "mm") != 0 && strcmp(op, "bmm") != 0 && strcmp(op, "linear") != 0)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: unknown op '%s' (expected mm, bmm or "
                        "linear)",
                        file, line, COL(C_OP), op);
    row.batch = 1;
    if ((s = field(fields, cols, C_BATCH)) &&
        (err = parse_dim(s, file, line, COL(C_BATCH), "batch", &row.batch)) < 0)
        return err;
    if ((err = parse_dim(field(fields, cols, C_M) ? field(fields, cols, C_M) : "", file, line,
                         COL(C_M), "m", &row.m)) < 0 ||
        (err = parse_dim(field(fields, cols, C_N) ? field(fields, cols, C_N) : "", file, line,
                         COL(C_N), "n", &row.n)) < 0 ||
        (err = parse_dim(field(fields, cols, C_K) ? field(fields, cols, C_K) : "", file, line,
                         COL(C_K), "k", &row.k)) < 0)
        return err;
    if ((s = field(fields, cols, C_LAYOUT))) {
        if (tc_layout_parse(s, &row.layout) < 0)
            return tc_error(TC_ERR_PARSE,
                            "%s:%ld:%d: unknown layout '%s' (expected NN, NT, "
                            "TN or TT)",
                            file, line, COL(C_LAYOUT), s);
    } else if (op) {
        /* the shared format's convention: torch mm/bmm are NN, nn.Linear NT */
        row.layout = strcmp(op, "linear") == 0 ? TC_LAYOUT_NT : TC_LAYOUT_NN;
    } else {
        return tc_error(TC_ERR_PARSE, "%s:%ld: neither layout nor op given", file, line);
    }

    flops = 2.0 * (double)row.m * (double)row.n * (double)row.k * (double)row.batch;
    if ((s = field(fields, cols, C_TFLOPS)) &&
        (err = parse_real_field(s, file, line, COL(C_TFLOPS), "tflops", &tflops)) < 0)
        return err;
    if (tflops > TC_BOUND_TFLOPS_MAX)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: tflops %g is over the plausible %g TFLOP/s", file,
                        line, COL(C_TFLOPS), tflops, TC_BOUND_TFLOPS_MAX);
    if ((s = field(fields, cols, C_TIME))) {
        if ((err = parse_real_field(s, file, line, COL(C_TIME), "time_us", &row.time_us)) < 0)
            return err;
        /* a time in the wrong unit shows up as a throughput off by 1000x */
        if (tflops > 0.0) {
            double derived = flops / (row.time_us * 1e6);

            if (fabs(derived - tflops) > 0.01 * tflops + 0.0006)
                return tc_error(TC_ERR_PARSE,
                                "%s:%ld:%d: tflops %g disagrees with "
                                "2*batch*m*n*k/time_us = %g: is time_us in microseconds?",
                                file, line, COL(C_TFLOPS), tflops, derived);
        }
    } else if (tflops > 0.0) {
        /* sources that stored only TFLOP/s: the time is derived from it */
        row.time_us = flops / (tflops * 1e6);
    } else if (opt->skip_untimed) {
        imp->stats->skipped_untimed++;
        return TC_OK;
    } else if (field(fields, cols, C_EFFICIENCY)) {
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: no time_us: this row gives efficiency_pct "
                        "(a tuning efficiency, not a time); tilecast stores measured times "
                        "only (use --skip-untimed to skip such rows)",
                        file, line, COL(C_TIME));
    } else {
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: empty time_us and tflops (use "
                        "--skip-untimed to skip rows without a time)",
                        file, line, cols[C_TIME] >= 0 ? COL(C_TIME) : COL(C_TFLOPS));
    }
    if (tc_bound_check_gemm(row.m, row.n, row.k, row.batch, row.time_us) < 0)
        return tc_error_prefix(TC_ERR_PARSE, "%s:%ld:%d", file, line,
                               cols[C_TIME] >= 0 && field(fields, cols, C_TIME) ? COL(C_TIME)
                                                                                : COL(C_TFLOPS));

    row.dtype_c = row.dtype;
    row.compute = db_default_compute(row.dtype);
    if ((s = field(fields, cols, C_DTYPE_C)) && parse_dtype_arg(s, &row.dtype_c) < 0)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: unknown dtype_c '%s'", file, line, COL(C_DTYPE_C),
                        s);
    if ((s = field(fields, cols, C_COMPUTE)) && parse_dtype_arg(s, &row.compute) < 0)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: unknown compute type '%s'", file, line,
                        COL(C_COMPUTE), s);
    if ((s = field(fields, cols, C_MIN)) &&
        (err = parse_real_field(s, file, line, COL(C_MIN), "min_us", &row.min_us)) < 0)
        return err;
    if ((s = field(fields, cols, C_SPREAD)) &&
        (tc_parse_double(s, &row.spread_pct) < 0 || row.spread_pct < 0))
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: spread_pct '%s' is not a number >= 0", file, line,
                        COL(C_SPREAD), s);
    if ((s = field(fields, cols, C_REPS))) {
        long long reps;

        if (tc_parse_i64(s, &reps) < 0 || reps < 0 || reps > (1 << 30))
            return tc_error(TC_ERR_PARSE, "%s:%ld:%d: reps '%s' is not a count", file, line,
                            COL(C_REPS), s);
        row.reps = (int)reps;
    }
    if ((s = field(fields, cols, C_ALGO)) || (s = field(fields, cols, C_KERNEL))) {
        if (strlen(s) >= sizeof(row.algo))
            return tc_error(TC_ERR_PARSE, "%s:%ld: kernel name longer than %zu characters", file,
                            line, sizeof(row.algo) - 1);
        tc_strlcpy(row.algo, s, sizeof(row.algo));
    }
    if ((s = field(fields, cols, C_FLAG)))
        snprintf(row.message, sizeof(row.message), "flag: %s", s);
    row.status = TC_STATUS_OK;

    timing = opt->timing ? opt->timing : field(fields, cols, C_TIMING);
    if (!timing)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: empty timing method (give one with "
                        "--timing)",
                        file, line, COL(C_TIMING));
    source = opt->source ? opt->source : field(fields, cols, C_SOURCE);
    if (!source)
        source = db_import_base_name(file);
    licence = opt->licence ? opt->licence : field(fields, cols, C_LICENCE);
    if (!licence)
        licence = db_import_licence(source);
#undef COL
    err = db_import_run(imp, gpu_id, timing, source, licence, NULL, file, line, &run_id);
    if (err < 0)
        return err;
    row.run_id = run_id;
    return store(imp, &row, op, file, line);
}

int db_import_csv_open(const char *file, FILE **f, struct tc_csv **csv, int *nfields,
                       char ***header)
{
    int rc, err;

    *csv = NULL;
    *f = fopen(file, "r");
    if (!*f)
        return tc_error(TC_ERR_IO, "%s: %s", file, strerror(errno));
    if ((err = tc_input_check_size(file, *f, TC_INPUT_IMPORT_MAX, "an import source")) < 0)
        goto fail;
    *csv = tc_csv_new(*f, file);
    if (!*csv) {
        err = TC_ERR_NOMEM;
        goto fail;
    }
    rc = tc_csv_next(*csv, nfields, header);
    if (rc > 0)
        return TC_OK;
    err = rc < 0 ? rc : tc_error(TC_ERR_PARSE, "%s: empty file (no CSV header)", file);
fail:
    tc_csv_free(*csv);
    *csv = NULL;
    fclose(*f);
    *f = NULL;
    return err;
}

int db_import_csv_records(struct importer *imp, const char *file, struct tc_csv *csv, int width,
                          const int *cols,
                          int (*record)(struct importer *, const char *, long, char **,
                                        const int *))
{
    char **fields;
    int nfields, rc, err;

    while ((rc = tc_csv_next(csv, &nfields, &fields)) > 0) {
        long line = tc_csv_line(csv);

        if (tc_csv_bytes(csv) > TC_INPUT_IMPORT_MAX)
            return tc_error(TC_ERR_RANGE,
                            "%s:%ld: more than %" PRIu64 " MiB read, over the limit of an import "
                            "source",
                            file, line, TC_INPUT_IMPORT_MAX / TC_INPUT_MIB);
        if (nfields != width)
            return tc_error(TC_ERR_PARSE, "%s:%ld: %d fields, but the header has %d", file, line,
                            nfields, width);
        err = record(imp, file, line, fields, cols);
        if (err < 0)
            return err;
    }
    return rc < 0 ? rc : TC_OK;
}

static int import_csv(struct importer *imp, const char *file)
{
    struct tc_csv *csv;
    FILE *f;
    int cols[C_COUNT];
    int nfields, err;
    char **fields;

    if ((err = db_import_csv_open(file, &f, &csv, &nfields, &fields)) < 0)
        return err;
    /* the same format's attention rows (attention_fused.csv): an impl and a
     * pass instead of m, n and k */
    if (tc_csv_find(nfields, fields, "impl") >= 0 && tc_csv_find(nfields, fields, "pass") >= 0 &&
        tc_csv_find(nfields, fields, "m") < 0) {
        err = db_import_attention_csv(imp, file, csv, nfields, fields);
        goto out;
    }
    err = csv_header(file, nfields, fields, cols, imp->opt);
    if (err == TC_OK)
        err = db_import_csv_records(imp, file, csv, nfields, cols, import_csv_record);
out:
    tc_csv_free(csv);
    fclose(f);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Line-based logs                                                           */
/* ------------------------------------------------------------------------ */

/* Parses "AxBxC" or "AxBxCxD" at s; returns the count of dimensions (0 if
 * none) and sets *end past them. */
static int parse_dims(const char *s, int64_t *dims, int max, const char **end)
{
    int n = 0;

    while (n < max) {
        char *e;
        long long v;

        if (*s < '0' || *s > '9')
            break;
        errno = 0;
        v = strtoll(s, &e, 10);
        if (errno || v < 1 || v > DIM_MAX)
            return 0;
        dims[n++] = v;
        s = e;
        if (*s != 'x')
            break;
        s++;
    }
    *end = s;
    return n;
}

/* One line of a log, within input.h's caps on a line and on the whole
 * source (*total counts the bytes read): the messages name the file and
 * the line. */
static int read_line(FILE *f, const char *file, char **buf, size_t *cap, long *line,
                     uint64_t *total)
{
    size_t n;
    int rc = tc_input_line(f, TC_INPUT_LINE_MAX, "an import log line", buf, cap, &n);

    if (rc == TC_ERR_RANGE)
        return tc_error_prefix(rc, "%s:%ld", file, *line + 1);
    if (rc <= 0)
        return rc < 0 ? tc_error_prefix(rc, "%s", file) : 0;
    *total += n + 1;
    if (*total > TC_INPUT_IMPORT_MAX)
        return tc_error(TC_ERR_RANGE,
                        "%s:%ld: more than %" PRIu64 " MiB read, over the limit of an import "
                        "source",
                        file, *line + 1, TC_INPUT_IMPORT_MAX / TC_INPUT_MIB);
    if (memchr(*buf, '\0', n))
        return tc_error(TC_ERR_PARSE, "%s:%ld: NUL byte (a binary file?)", file, *line + 1);
    ++*line;
    return 1;
}

/* cookbook: "Throughput (in TFLOP/s) for MxNxK: X" (mm_flops.py) and
 * "Throughput (in TFLOP/s) for BxMxNxK: X" (bmm_flops.py). The scripts call
 * torch.mm(A[m,n], B[n,k]), so their n is the reduction dimension. */
static int import_cookbook(struct importer *imp, const char *file)
{
    static const char marker[] = "Throughput (in TFLOP/s) for ";
    const struct tc_import_options *opt = imp->opt;
    FILE *f = fopen(file, "r");
    char *buf = NULL;
    size_t cap = 0;
    uint64_t total = 0;
    long line = 0;
    int64_t found = 0;
    enum tc_dtype dtype = TC_DTYPE_FP16;
    int rc, err = TC_OK;

    if (!f)
        return tc_error(TC_ERR_IO, "%s: %s", file, strerror(errno));
    if ((err = tc_input_check_size(file, f, TC_INPUT_IMPORT_MAX, "an import source")) < 0)
        goto out;
    if (opt->dtype && parse_dtype_arg(opt->dtype, &dtype) < 0) {
        err = TC_ERR_INVALID;
        goto out;
    }
    while ((rc = read_line(f, file, &buf, &cap, &line, &total)) > 0) {
        struct tc_gemm_row row = {0};
        const char *p = strstr(buf, marker), *end;
        const char *timing, *op, *source;
        int64_t dims[4], run_id;
        double tflops;
        char *num_end;
        int n;

        if (!p)
            continue;
        p += strlen(marker);
        n = parse_dims(p, dims, 4, &end);
        if (n < 3 || end[0] != ':') {
            err = tc_error(TC_ERR_PARSE,
                           "%s:%ld:%d: expected MxNxK: or BxMxNxK: followed by "
                           "the TFLOP/s (other forms of newer cookbook scripts are not "
                           "supported)",
                           file, line, (int)(p - buf) + 1);
            goto out;
        }
        errno = 0;
        p = end + 1;
        while (*p == ' ' || *p == '\t')
            p++;
        tflops = strtod(p, &num_end);
        /* decimal only: strtod would take hex, inf and nan too */
        if (num_end != p + tc_decimal_len(p))
            num_end = (char *)p;
        while (*num_end == ' ' || *num_end == '\t' || *num_end == '\r')
            num_end++;
        if (num_end == p || *num_end || errno || !isfinite(tflops) || tflops <= 0) {
            err = tc_error(TC_ERR_PARSE,
                           "%s:%ld:%d: throughput '%s' is not a positive number "
                           "of TFLOP/s",
                           file, line, (int)(end + 1 - buf) + 1, end + 1);
            goto out;
        }
        if (tflops > TC_BOUND_TFLOPS_MAX) {
            err = tc_error(TC_ERR_PARSE,
                           "%s:%ld:%d: throughput %g TFLOP/s is over the "
                           "plausible %g",
                           file, line, (int)(p - buf) + 1, tflops, TC_BOUND_TFLOPS_MAX);
            goto out;
        }
        row.batch = n == 4 ? dims[0] : 1;
        row.m = dims[n - 3];
        row.k = dims[n - 2]; /* the cookbook's n */
        row.n = dims[n - 1]; /* the cookbook's k */
        row.layout = TC_LAYOUT_NN;
        row.dtype = dtype;
        row.dtype_c = dtype;
        row.compute = db_default_compute(dtype);
        row.time_us = 2.0 * (double)row.m * (double)row.n * (double)row.k * (double)row.batch /
                      (tflops * 1e6);
        row.status = TC_STATUS_OK;
        /* the timing of the scripts these logs come from (cookbook@27dff48):
         * mm_flops.py averages wall time over 100 synchronised calls,
         * bmm_flops.py keeps the slowest of 200 */
        timing = opt->timing ? opt->timing : n == 4 ? "wall-slowest" : "wall-avg-incl-launch";
        op = n == 4 ? "bmm" : "mm";
        source = opt->source ? opt->source : db_import_base_name(file);
        err = db_import_run(imp, opt->gpu_id, timing, source,
                            opt->licence ? opt->licence : db_import_licence(source), NULL, file,
                            line, &run_id);
        if (err < 0)
            goto out;
        row.run_id = run_id;
        err = store(imp, &row, op, file, line);
        if (err < 0)
            goto out;
        found++;
    }
    if (rc < 0) {
        err = rc;
        goto out;
    }
    if (!found)
        err = tc_error(TC_ERR_PARSE,
                       "%s: no 'Throughput (in TFLOP/s) for ...' lines: not a "
                       "cookbook sizing log",
                       file);
out:
    free(buf);
    fclose(f);
    return err;
}

/* mamf-finder.py logs. Per-shape progress lines are separated by '\r'.
 * Two generations are recognised:
 *  - "N | X TFLOPS @ MxNxK | best: ..." (early versions: torch.mm(A[m,n],
 *    B[n,k]), so N is the reduction; the fastest of the iterations, no cache
 *    flush, a synchronize after every call, so each pair of events also
 *    holds the op's dispatch): timing "event-min", the event class;
 *  - "N | X(mean) Y(median) Z(max) @ MxNxK | best: ..." (later versions:
 *    A[m,k] and B stored n x k and transposed, so K is the reduction and the
 *    layout NT; L2 flushed before each call, one synchronize after all of
 *    them, so the events bracket the kernel alone): time from the median,
 *    min_us from the max: timing "event-median-l2flush", kernel time
 *    (tc_timing_classify), as is the summary's "event-mean-l2flush".
 * A log holding only the final summary ("median: X TFLOPS @ MxNxK", or
 * "The best outcome was XTFLOPS @ MxNxK") gives that one shape. */
struct mamf_row {
    int64_t m, n, k;
    double tflops, max_tflops;
    bool v2;
    const char *timing;
};

struct mamf_log {
    struct mamf_row *rows;
    size_t n, cap;
    struct mamf_row sum_mean, sum_median, sum_max, sum_v1;
    char dtype[64];
    char runtime[128];
};

static int mamf_push(struct mamf_log *log, const struct mamf_row *r)
{
    if (log->n == log->cap) {
        size_t cap = log->cap ? log->cap * 2 : 64;
        struct mamf_row *rows = realloc(log->rows, cap * sizeof(*rows));

        if (!rows)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        log->rows = rows;
        log->cap = cap;
    }
    log->rows[log->n++] = *r;
    return TC_OK;
}

static bool good_tflops(double v)
{
    return isfinite(v) && v > 0.0 && v <= TC_BOUND_TFLOPS_MAX;
}

/* Whether seg holds a hex number ("0x1p8" where a TFLOP/s should be):
 * sscanf's %lf reads it as the same value strtod would, which a log of
 * decimal figures never means. "1280x720" is dimensions, not hex. */
static bool has_hex_number(const char *seg)
{
    for (const char *p = seg; (p = strpbrk(p, "xX")); p++)
        if (p > seg && p[-1] == '0' &&
            (p - 1 == seg || !((p[-2] >= '0' && p[-2] <= '9') || p[-2] == '.')))
            return true;
    return false;
}

/* A shape's three dimensions, whichever line gives them: the summary lines
 * too, whose shape becomes a row when the log has no per-shape lines. */
static int mamf_dims(const long long d[3], const char *file, long line)
{
    for (int i = 0; i < 3; i++)
        if (d[i] < 1 || d[i] > DIM_MAX)
            return tc_error(TC_ERR_PARSE, "%s:%ld: dimension %lld out of range", file, line, d[i]);
    return TC_OK;
}

static int mamf_segment(struct mamf_log *log, const char *seg, const char *file, long line)
{
    struct mamf_row r = {0};
    long long idx, d[3];
    double mean, median, max;
    char c;
    int used = 0;

    /* skip blanks and terminal escapes ("\033[K" clears the progress line) */
    for (;;) {
        if (*seg == ' ' || *seg == '\t') {
            seg++;
        } else if (seg[0] == '\033' && seg[1] == '[') {
            seg += 2;
            while (*seg && !((*seg >= 'A' && *seg <= 'Z') || (*seg >= 'a' && *seg <= 'z')))
                seg++;
            if (*seg)
                seg++;
        } else {
            break;
        }
    }
    if (strncmp(seg, "** Dtype:", 9) == 0) {
        sscanf(seg + 9, " %63s", log->dtype);
        return TC_OK;
    }
    if (strncmp(seg, "torch=", 6) == 0 || strncmp(seg, "cuda=", 5) == 0 ||
        strncmp(seg, "hip=", 4) == 0) {
        size_t len = strlen(log->runtime);

        snprintf(log->runtime + len, sizeof(log->runtime) - len, "%s%s", len ? ", " : "", seg);
        return TC_OK;
    }
    if (has_hex_number(seg))
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld: a hexadecimal number in '%.60s': the log's "
                        "figures are decimal",
                        file, line, seg);
    if (sscanf(seg, "%lld | %lf(mean) %lf(median) %lf(max) @ %lldx%lldx%lld%n", &idx, &mean,
               &median, &max, &d[0], &d[1], &d[2], &used) == 7) {
        if (!good_tflops(median) || !good_tflops(max))
            return tc_error(TC_ERR_PARSE, "%s:%ld: shape %lld: TFLOP/s out of range", file, line,
                            idx);
        r = (struct mamf_row){d[0], d[1], d[2], median, max, true, "event-median-l2flush"};
    } else if (sscanf(seg, "%lld | %lf TFLOPS @ %lldx%lldx%lld%n", &idx, &max, &d[0], &d[1], &d[2],
                      &used) == 5) {
        if (!good_tflops(max))
            return tc_error(TC_ERR_PARSE, "%s:%ld: shape %lld: TFLOP/s out of range", file, line,
                            idx);
        /* early versions: M x N(reduction) x K */
        r = (struct mamf_row){d[0], d[2], d[1], max, max, false, "event-min"};
    } else if (sscanf(seg, "%lld %c", &idx, &c) == 2 && c == '|') {
        return tc_error(TC_ERR_PARSE, "%s:%ld: unrecognised mamf-finder result line '%.60s'", file,
                        line, seg);
    } else {
        struct mamf_row *sum = NULL;

        if (sscanf(seg, "median: %lf TFLOPS @ %lldx%lldx%lld", &median, &d[0], &d[1], &d[2]) == 4)
            sum = &log->sum_median;
        else if (sscanf(seg, "mean: %lf TFLOPS @ %lldx%lldx%lld", &median, &d[0], &d[1], &d[2]) ==
                 4)
            sum = &log->sum_mean;
        else if (sscanf(seg, "max: %lf TFLOPS @ %lldx%lldx%lld", &median, &d[0], &d[1], &d[2]) == 4)
            sum = &log->sum_max;
        if (sum) {
            if (!good_tflops(median))
                return tc_error(TC_ERR_PARSE, "%s:%ld: TFLOP/s out of range", file, line);
            if (mamf_dims(d, file, line) < 0)
                return TC_ERR_PARSE;
            *sum = (struct mamf_row){d[0],
                                     d[1],
                                     d[2],
                                     median,
                                     median,
                                     true,
                                     sum == &log->sum_mean ? "event-mean-l2flush"
                                                           : "event-median-l2flush"};
            return TC_OK;
        }
        if (sscanf(seg, "The best outcome was %lfTFLOPS @ %lldx%lldx%lld", &max, &d[0], &d[1],
                   &d[2]) == 4) {
            if (!good_tflops(max))
                return tc_error(TC_ERR_PARSE, "%s:%ld: TFLOP/s out of range", file, line);
            if (mamf_dims(d, file, line) < 0)
                return TC_ERR_PARSE;
            log->sum_v1 = (struct mamf_row){d[0], d[2], d[1], max, max, false, "event-min"};
        }
        return TC_OK;
    }
    if (mamf_dims(d, file, line) < 0)
        return TC_ERR_PARSE;
    return mamf_push(log, &r);
}

static int import_mamf(struct importer *imp, const char *file)
{
    const struct tc_import_options *opt = imp->opt;
    struct mamf_log log = {0};
    FILE *f = fopen(file, "r");
    char *buf = NULL;
    size_t cap = 0;
    uint64_t total = 0;
    long line = 0;
    enum tc_dtype dtype;
    int rc, err = TC_OK;

    if (!f)
        return tc_error(TC_ERR_IO, "%s: %s", file, strerror(errno));
    if ((err = tc_input_check_size(file, f, TC_INPUT_IMPORT_MAX, "an import source")) < 0)
        goto out;
    while ((rc = read_line(f, file, &buf, &cap, &line, &total)) > 0) {
        char *save = NULL;

        for (char *seg = strtok_r(buf, "\r", &save); seg; seg = strtok_r(NULL, "\r", &save)) {
            err = mamf_segment(&log, seg, file, line);
            if (err < 0)
                goto out;
        }
    }
    if (rc < 0) {
        err = rc;
        goto out;
    }
    if (log.n == 0) {
        /* the median is the robust summary; a log cut to its mean line
         * (as the published tables quote it) still gives the shape */
        if (!log.sum_median.m && log.sum_mean.m)
            log.sum_median = log.sum_mean;
        if (log.sum_median.m) {
            if (log.sum_max.m == log.sum_median.m && log.sum_max.n == log.sum_median.n &&
                log.sum_max.k == log.sum_median.k)
                log.sum_median.max_tflops = log.sum_max.tflops;
            err = mamf_push(&log, &log.sum_median);
        } else if (log.sum_v1.m) {
            err = mamf_push(&log, &log.sum_v1);
        } else {
            err = tc_error(TC_ERR_PARSE,
                           "%s: no mamf-finder results found (expected lines "
                           "'N | X TFLOPS @ MxNxK' or a final summary)",
                           file);
        }
        if (err < 0)
            goto out;
    }
    if (opt->dtype) {
        if (parse_dtype_arg(opt->dtype, &dtype) < 0) {
            err = TC_ERR_INVALID;
            goto out;
        }
    } else if (!log.dtype[0]) {
        err = tc_error(TC_ERR_PARSE, "%s: no '** Dtype:' line: give the dtype with --dtype", file);
        goto out;
    } else if (parse_dtype_arg(log.dtype, &dtype) < 0) {
        err = tc_error(TC_ERR_PARSE, "%s: unknown dtype '%s' in the '** Dtype:' line", file,
                       log.dtype);
        goto out;
    }
    for (size_t i = 0; i < log.n; i++) {
        const struct mamf_row *r = &log.rows[i];
        struct tc_gemm_row row = {0};
        double flops = 2.0 * (double)r->m * (double)r->n * (double)r->k;
        const char *timing = opt->timing ? opt->timing : r->timing;
        int64_t run_id;

        row.m = r->m;
        row.n = r->n;
        row.k = r->k;
        row.batch = 1;
        row.layout = r->v2 ? TC_LAYOUT_NT : TC_LAYOUT_NN;
        row.dtype = dtype;
        row.dtype_c = dtype;
        row.compute = db_default_compute(dtype);
        row.time_us = flops / (r->tflops * 1e6);
        row.min_us = flops / (r->max_tflops * 1e6);
        row.status = TC_STATUS_OK;
        const char *source = opt->source ? opt->source : db_import_base_name(file);

        err = db_import_run(imp, opt->gpu_id, timing, source,
                            opt->licence ? opt->licence : db_import_licence(source),
                            log.runtime[0] ? log.runtime : NULL, file, 0, &run_id);
        if (err < 0)
            goto out;
        row.run_id = run_id;
        err = store(imp, &row, "mm", file, 0);
        if (err < 0)
            goto out;
    }
out:
    free(log.rows);
    free(buf);
    fclose(f);
    return err;
}

/* ------------------------------------------------------------------------ */

int tc_db_import_lookup(struct tc_db *db, const char *format, size_t n_files,
                        const char *const *files, const struct tc_import_options *opt,
                        tc_gpu_lookup_fn lookup, const void *ctx, struct tc_import_stats *stats)
{
    static const struct tc_import_options defaults = {0};
    struct tc_import_stats local = {0};
    struct importer imp = {0};
    int (*fn)(struct importer *, const char *);
    int err = TC_OK;

    if (stats)
        *stats = local;
    if (!db || !format || (!files && n_files))
        return tc_error(TC_ERR_INVALID, "tc_db_import: missing argument");
    if (!opt)
        opt = &defaults;
    if (strcmp(format, "csv") == 0)
        fn = import_csv;
    else if (strcmp(format, "cookbook") == 0)
        fn = import_cookbook;
    else if (strcmp(format, "mamf") == 0)
        fn = import_mamf;
    else if (strcmp(format, "cudnn-frontend") == 0)
        fn = db_import_cudnn_frontend;
    else
        return tc_error(TC_ERR_INVALID,
                        "unknown import format '%s' (expected csv, cookbook, "
                        "mamf or cudnn-frontend)",
                        format);
    /* a cuDNN frontend result names its GPU in each row */
    if (fn != import_csv && fn != db_import_cudnn_frontend && (!opt->gpu_id || !*opt->gpu_id))
        return tc_error(TC_ERR_INVALID, "%s logs do not name the GPU: give its id (--gpu)", format);
    if (opt->gpu_id && strlen(opt->gpu_id) >= TC_ID_MAX)
        return tc_error(TC_ERR_INVALID, "GPU id '%s' is too long", opt->gpu_id);
    if (db->mode == TC_DB_READONLY)
        return tc_error(TC_ERR_INVALID, "%s: opened read-only", db->path);
    if (db->in_tx)
        return tc_error(TC_ERR_INVALID, "%s: an import runs its own transaction", db->path);
    if (opt->dtype) {
        enum tc_dtype dtype;

        if (parse_dtype_arg(opt->dtype, &dtype) < 0)
            return TC_ERR_INVALID;
    }
    imp.db = db;
    imp.format = format;
    imp.opt = opt;
    imp.lookup = lookup;
    imp.lookup_ctx = ctx;
    imp.stats = &local;
    err = tc_db_begin(db);
    if (err < 0)
        return err;
    for (size_t i = 0; i < n_files && err == TC_OK; i++)
        err = fn(&imp, files[i]);
    if (err == TC_OK)
        err = tc_db_commit(db);
    if (err < 0 && db->in_tx) {
        char saved[2048];

        /* keep the import's message, not the rollback's */
        tc_strlcpy(saved, tc_last_error(), sizeof(saved));
        tc_db_rollback(db);
        tc_error(err, "%s", saved);
    }
    for (size_t i = 0; i < imp.n_runs; i++)
        free(imp.runs[i].key);
    free(imp.runs);
    if (stats)
        *stats = err == TC_OK ? local : (struct tc_import_stats){0};
    return err;
}
