/* Imports of fused-attention measurements: the result CSVs of the cuDNN
 * frontend's attention benchmarks (--format cudnn-frontend: its own columns,
 * GPU names and units) and the attention rows of the shared measured-data
 * layout (attention_fused.csv, read by --format csv). Both run inside the
 * import's one transaction (import.c); every row is checked, and a bad one
 * fails the import naming file, line, column and value. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bounds.h"
#include "import-internal.h"

/* Largest dimension accepted, as for GEMM rows: the FLOP counts stay finite. */
#define ATTN_DIM_MAX (1LL << 40)

/* The timing method of every cuDNN frontend result: the PyTorch profiler's
 * (CUPTI) kernel times of the call, summed, median of iterations 6-10
 * after an L2 flush (benchmark_single_sdpa.py); kernel time, no launch gaps.
 * The tag is the measured-data README's for the same files. */
#define CUDNN_FRONTEND_TIMING "cupti-median"

/* One row read, with what its run needs. */
struct attn_input {
    struct tc_attention_row row;
    const char *gpu_id;
    const char *timing, *source, *licence, *runtime;
    double tflops; /* the file's own throughput, 0 when it gives none */
};

/* The (query, key) pairs a mask keeps, tilecast's convention (the causal
 * diagonal at the bottom right, a window of W keys including the query's
 * own): the count the source's TFLOP/s rest on, used here only to check a
 * row's time against its throughput. */
static double attention_pairs(const struct tc_attention_row *r)
{
    double sq = (double)r->seq_q, skv = (double)r->seq_kv, off = skv - sq, w, c1;

    if (!r->causal)
        return sq * skv;
    if (off < 0)
        off = 0;
    if (!r->window)
        return sq * off + sq * (sq + 1) / 2;
    w = (double)r->window;
    c1 = fmin(fmax(w - off, 0), sq);
    return c1 * off + c1 * (c1 + 1) / 2 + (sq - c1) * w;
}

/* FLOPs as FlashAttention's and cuDNN's benchmarks count them: two GEMMs
 * forward, five backward, over the pairs kept. */
static double attention_flops(const struct tc_attention_row *r)
{
    double dqk = (double)r->head_dim, dvo = (double)r->head_dim_vo;

    return 2.0 * (double)r->batch * (double)r->heads * attention_pairs(r) *
           (r->backward ? 3 * dqk + 2 * dvo : dqk + dvo);
}

static int parse_count(const char *s, const char *file, long line, int col, const char *name,
                       int64_t lo, int64_t *out)
{
    long long v;

    if (tc_parse_i64(s, &v) < 0 || v < lo || v > ATTN_DIM_MAX)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: %s '%s' is not an integer in [%lld, 2^40]", file,
                        line, col, name, s, (long long)lo);
    *out = v;
    return TC_OK;
}

/* A KV cache's dtype: tilecast's names and the cuDNN frontend's
 * (--kv_cache_dtype bfloat16 or fp8_e4m3, benchmark_single_attention.py).
 * The cache is the attention's dtype or narrower (an fp8 cache under a
 * 16-bit attention); a wider one is no kernel's. */
static int parse_kv_dtype(const char *s, const char *file, long line, int col,
                          struct tc_attention_row *r)
{
    static const struct {
        const char *name;
        enum tc_dtype dtype;
    } names[] = {
        {"bfloat16", TC_DTYPE_BF16}, {"float16", TC_DTYPE_FP16}, {"fp8_e4m3", TC_DTYPE_FP8}};
    bool found = tc_dtype_parse(s, &r->kv_dtype) == TC_OK;

    for (size_t i = 0; i < TC_ARRAY_SIZE(names) && !found; i++)
        if (strcmp(s, names[i].name) == 0) {
            r->kv_dtype = names[i].dtype;
            found = true;
        }
    if (!found)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: unknown kv_cache_dtype '%s' (expected a dtype: bf16, fp16, "
                        "fp8, ...)",
                        file, line, col, s);
    if (tc_dtype_bytes(r->kv_dtype) > tc_dtype_bytes(r->dtype))
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: kv_cache_dtype '%s' is wider than the attention's dtype %s",
                        file, line, col, s, tc_dtype_name(r->dtype));
    return TC_OK;
}

/* Checks the row as a whole and stores it in the run of its provenance. */
static int store_attention(struct importer *imp, struct attn_input *in, const char *file, long line)
{
    struct tc_attention_row *r = &in->row;
    bool inserted;
    int64_t run_id;
    int err;

    if (r->kv_heads > r->heads || r->heads % r->kv_heads)
        return tc_error(TC_ERR_PARSE, "%s:%ld: %lld kv heads do not divide %lld heads", file, line,
                        (long long)r->kv_heads, (long long)r->heads);
    if (r->causal && r->seq_kv < r->seq_q)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld: a causal mask with seq_kv %lld shorter than seq_q %lld", file,
                        line, (long long)r->seq_kv, (long long)r->seq_q);
    if (r->window && !r->causal)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld: a sliding window of %lld keys without the causal mask", file, line,
                        (long long)r->window);
    if (r->deterministic && !r->backward)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld: a deterministic forward (deterministic is the "
                        "backward's)",
                        file, line);
    /* a KV cache is the inference forward's: training reads K and V whole */
    if (r->backward && (r->page_size || (r->kv_dtype != TC_DTYPE_FP64 && r->kv_dtype != r->dtype)))
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld: a backward pass over a KV cache (page size %lld, cache dtype "
                        "%s): a KV cache is read by the forward only",
                        file, line, (long long)r->page_size,
                        tc_dtype_name(r->kv_dtype == TC_DTYPE_FP64 ? r->dtype : r->kv_dtype));
    if (r->status == TC_STATUS_OK) {
        err = tc_bound_check_time("time_us", r->time_us);
        if (err < 0)
            return tc_error_prefix(err, "%s:%ld", file, line);
        /* the file's throughput must be the time's: a time in another unit
         * or another FLOP count is a broken row (the sources print TFLOP/s
         * rounded to an integer: 1 TFLOP/s and 5% of slack) */
        if (in->tflops > 0) {
            double tflops = attention_flops(r) / r->time_us / 1e6;

            if (fabs(tflops - in->tflops) > 1.0 + 0.05 * in->tflops)
                return tc_error(TC_ERR_PARSE,
                                "%s:%ld: time %g us gives %.1f TFLOP/s, but the row says %g "
                                "(a time in another unit?)",
                                file, line, r->time_us, tflops, in->tflops);
        }
    }
    err = db_import_run(imp, in->gpu_id, in->timing, in->source, in->licence, in->runtime, file,
                        line, &run_id);
    if (err < 0)
        return err;
    r->run_id = run_id;
    err = db_insert_attention(imp->db, r, &inserted);
    if (err < 0)
        return tc_error_prefix(err, "%s:%ld", file, line);
    if (inserted)
        imp->stats->rows++;
    else
        imp->stats->duplicates++;
    return TC_OK;
}

/* Finds each named column; a required one missing fails naming it. */
static int find_columns(const char *file, int nfields, char **header, const char *const *names,
                        const bool *required, int n, int *cols, const char *layout)
{
    for (int c = 0; c < n; c++) {
        cols[c] = tc_csv_find(nfields, header, names[c]);
        if (cols[c] < 0 && required[c])
            return tc_error(TC_ERR_PARSE, "%s:1: missing column '%s' (%s)", file, names[c], layout);
    }
    return TC_OK;
}

static const char *opt_field(char **fields, const int *cols, int c)
{
    return cols[c] >= 0 && *fields[cols[c]] ? fields[cols[c]] : NULL;
}

/* ------------------------------------------------------------------------ */
/* The shared measured-data layout (attention_fused.csv)                     */
/* ------------------------------------------------------------------------ */

enum fused_col {
    F_GPU,
    F_DTYPE,
    F_IMPL,
    F_PASS,
    F_BATCH,
    F_HEADS,
    F_KV_HEADS,
    F_SEQ_Q,
    F_SEQ_KV,
    F_HEAD_DIM,
    F_CAUSAL,
    F_TIME,
    F_TFLOPS,
    F_TIMING,
    F_SOURCE,
    F_HEAD_DIM_VO,
    F_MASK,
    F_WINDOW,
    F_DETERMINISTIC,
    F_PAGE_SIZE,
    F_KV_CACHE_DTYPE,
    F_SOFTWARE,
    F_LICENCE,
    F_FLAG,
    F_COUNT
};

static const char *const fused_names[F_COUNT] = {
    "gpu",           "dtype",     "impl",           "pass",        "batch",   "heads",
    "kv_heads",      "seq_q",     "seq_kv",         "head_dim",    "causal",  "time_us",
    "tflops",        "timing",    "source",         "head_dim_vo", "mask",    "window",
    "deterministic", "page_size", "kv_cache_dtype", "software",    "licence", "flag",
};

static const bool fused_required[F_COUNT] = {
    [F_DTYPE] = true,    [F_IMPL] = true,     [F_PASS] = true,  [F_BATCH] = true,
    [F_HEADS] = true,    [F_KV_HEADS] = true, [F_SEQ_Q] = true, [F_SEQ_KV] = true,
    [F_HEAD_DIM] = true, [F_CAUSAL] = true,   [F_TIME] = true,
};

/* A 0/1 column; empty is 0 where optional. */
static int parse_flag(const char *s, const char *file, long line, int col, const char *name,
                      bool *out)
{
    if (!s || !*s || strcmp(s, "0") == 0) {
        *out = false;
        return TC_OK;
    }
    if (strcmp(s, "1") == 0) {
        *out = true;
        return TC_OK;
    }
    return tc_error(TC_ERR_PARSE, "%s:%ld:%d: %s '%s' is neither 0 nor 1", file, line, col, name,
                    s);
}

static int fused_record(struct importer *imp, const char *file, long line, char **fields,
                        const int *cols)
{
    const struct tc_import_options *opt = imp->opt;
    struct attn_input in = {0};
    struct tc_attention_row *r = &in.row;
    const char *s, *mask;
    int err;

#define COL(c) (cols[c] + 1)
    in.gpu_id = opt_field(fields, cols, F_GPU);
    if (opt->gpu_id && *opt->gpu_id) {
        /* only the rows of this GPU, as for GEMM rows */
        if (in.gpu_id && strcmp(in.gpu_id, opt->gpu_id) != 0) {
            imp->stats->skipped_gpu++;
            return TC_OK;
        }
        in.gpu_id = opt->gpu_id;
    }
    if (!in.gpu_id)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: empty gpu (or give the GPU with --gpu)", file,
                        line, COL(F_GPU));
    if (strlen(in.gpu_id) >= TC_ID_MAX)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: GPU id '%.64s...' is too long", file, line,
                        COL(F_GPU), in.gpu_id);
    s = fields[cols[F_DTYPE]];
    if (tc_dtype_parse(s, &r->dtype) < 0)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: unknown dtype '%s'", file, line, COL(F_DTYPE), s);
    s = fields[cols[F_IMPL]];
    if (tc_attn_impl_parse(s, &r->impl) < 0)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: unknown impl '%s' (expected flash, flash2, flash3, flash4, "
                        "cudnn, cudnn_oss or unfused)",
                        file, line, COL(F_IMPL), s);
    s = fields[cols[F_PASS]];
    if (strcmp(s, "fwd") != 0 && strcmp(s, "bwd") != 0)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: pass '%s' is neither fwd nor bwd", file, line,
                        COL(F_PASS), s);
    r->backward = strcmp(s, "bwd") == 0;
    if ((err = parse_count(fields[cols[F_BATCH]], file, line, COL(F_BATCH), "batch", 1,
                           &r->batch)) < 0 ||
        (err = parse_count(fields[cols[F_HEADS]], file, line, COL(F_HEADS), "heads", 1,
                           &r->heads)) < 0 ||
        (err = parse_count(fields[cols[F_KV_HEADS]], file, line, COL(F_KV_HEADS), "kv_heads", 1,
                           &r->kv_heads)) < 0 ||
        (err = parse_count(fields[cols[F_SEQ_Q]], file, line, COL(F_SEQ_Q), "seq_q", 1,
                           &r->seq_q)) < 0 ||
        (err = parse_count(fields[cols[F_SEQ_KV]], file, line, COL(F_SEQ_KV), "seq_kv", 1,
                           &r->seq_kv)) < 0 ||
        (err = parse_count(fields[cols[F_HEAD_DIM]], file, line, COL(F_HEAD_DIM), "head_dim", 1,
                           &r->head_dim)) < 0)
        return err;
    r->head_dim_vo = r->head_dim;
    if ((s = opt_field(fields, cols, F_HEAD_DIM_VO)) &&
        (err = parse_count(s, file, line, COL(F_HEAD_DIM_VO), "head_dim_vo", 1, &r->head_dim_vo)) <
            0)
        return err;
    if ((s = opt_field(fields, cols, F_WINDOW)) &&
        (err = parse_count(s, file, line, COL(F_WINDOW), "window", 1, &r->window)) < 0)
        return err;
    if ((err = parse_flag(fields[cols[F_CAUSAL]], file, line, COL(F_CAUSAL), "causal",
                          &r->causal)) < 0 ||
        (err = parse_flag(opt_field(fields, cols, F_DETERMINISTIC), file, line,
                          COL(F_DETERMINISTIC), "deterministic", &r->deterministic)) < 0)
        return err;
    /* tilecast's causal mask sits at the bottom right: a top-left one is
     * the same mask only on a square */
    mask = opt_field(fields, cols, F_MASK);
    if (mask && strcmp(mask, "no_mask") != 0 && strcmp(mask, "top_left") != 0 &&
        strcmp(mask, "bottom_right") != 0)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: mask '%s' (expected no_mask, top_left or bottom_right)", file,
                        line, COL(F_MASK), mask);
    if (mask && (strcmp(mask, "no_mask") == 0) == r->causal)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: mask '%s' disagrees with causal %d", file, line,
                        COL(F_MASK), mask, r->causal ? 1 : 0);
    if (mask && strcmp(mask, "top_left") == 0 && r->seq_q != r->seq_kv)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: a top-left causal mask on seq_q %lld != seq_kv %lld is not "
                        "stored (tilecast's causal mask is aligned at the bottom right)",
                        file, line, COL(F_MASK), (long long)r->seq_q, (long long)r->seq_kv);
    /* the KV cache read: keys per page (empty or 0: contiguous) and its
     * dtype (empty: the attention's) */
    if ((s = opt_field(fields, cols, F_PAGE_SIZE)) &&
        (err = parse_count(s, file, line, COL(F_PAGE_SIZE), "page_size", 0, &r->page_size)) < 0)
        return err;
    r->kv_dtype = r->dtype;
    if ((s = opt_field(fields, cols, F_KV_CACHE_DTYPE)) &&
        (err = parse_kv_dtype(s, file, line, COL(F_KV_CACHE_DTYPE), r)) < 0)
        return err;
    s = fields[cols[F_TIME]];
    if (tc_parse_double(s, &r->time_us) < 0 || !(r->time_us > 0))
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: time_us '%s' is not a positive number", file,
                        line, COL(F_TIME), s);
    if ((s = opt_field(fields, cols, F_TFLOPS)) &&
        (tc_parse_double(s, &in.tflops) < 0 || !(in.tflops > 0)))
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: tflops '%s' is not a positive number", file, line,
                        COL(F_TFLOPS), s);
    if ((s = opt_field(fields, cols, F_FLAG)))
        snprintf(r->message, sizeof(r->message), "flag: %s", s);
    r->status = TC_STATUS_OK;
    in.timing = opt->timing ? opt->timing : opt_field(fields, cols, F_TIMING);
    if (!in.timing)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: empty timing method (give one with --timing)",
                        file, line, COL(F_TIMING));
    in.source = opt->source ? opt->source : opt_field(fields, cols, F_SOURCE);
    if (!in.source)
        in.source = db_import_base_name(file);
    in.licence = opt->licence ? opt->licence : opt_field(fields, cols, F_LICENCE);
    if (!in.licence)
        in.licence = db_import_licence(in.source);
    in.runtime = opt_field(fields, cols, F_SOFTWARE);
#undef COL
    return store_attention(imp, &in, file, line);
}

int db_import_attention_csv(struct importer *imp, const char *file, struct tc_csv *csv, int nfields,
                            char **header)
{
    int cols[F_COUNT], err;

    err = find_columns(file, nfields, header, fused_names, fused_required, F_COUNT, cols,
                       "attention rows name gpu,dtype,impl,pass,batch,heads,kv_heads,seq_q,"
                       "seq_kv,head_dim,causal,time_us,timing,source");
    if (err < 0)
        return err;
    if (cols[F_GPU] < 0 && !imp->opt->gpu_id)
        return tc_error(TC_ERR_PARSE, "%s:1: missing column 'gpu' (or give the GPU with --gpu)",
                        file);
    if (cols[F_TIMING] < 0 && !imp->opt->timing)
        return tc_error(TC_ERR_PARSE,
                        "%s:1: missing column 'timing' (or give the timing method with --timing)",
                        file);
    return db_import_csv_records(imp, file, csv, nfields, cols, fused_record);
}

/* ------------------------------------------------------------------------ */
/* The cuDNN frontend's benchmark results                                   */
/* ------------------------------------------------------------------------ */

/* The columns of benchmark/attention_training's result CSVs (written by its
 * runner from benchmark_single_sdpa.py's results): one row per backend,
 * mask, shape, pass and deterministic flag. */
enum cf_col {
    K_BACKEND,
    K_DATA_TYPE,
    K_MASK,
    K_BATCH,
    K_SEQ_Q,
    K_SEQ_KV,
    K_HEADS,
    K_KV_HEADS,
    K_HEAD_DIM_QK,
    K_HEAD_DIM,
    K_HEAD_DIM_VO,
    K_PASS,
    K_DETERMINISTIC,
    K_TIME_MS,
    K_TFLOPS,
    K_ITERATIONS,
    K_WINDOW,
    K_SUCCESS,
    K_SKIPPED,
    K_ERROR,
    K_GPU_NAME,
    K_BACKEND_VERSION,
    K_COUNT
};

static const char *const cf_names[K_COUNT] = {
    "backend",
    "data_type",
    "attn_mask",
    "batch_size",
    "q_seqlen",
    "kv_seqlen",
    "num_q_heads",
    "num_kv_heads",
    "head_dim_qk",
    "head_dim",
    "head_dim_vo",
    "profile_pass",
    "deterministic_bwd",
    "time_ms",
    "tflops",
    "num_iterations",
    "sliding_window_size",
    "success",
    "skipped",
    "error_message",
    "gpu_name",
    "cudnn_backend_version",
};

static const bool cf_required[K_COUNT] = {
    [K_BACKEND] = true, [K_DATA_TYPE] = true, [K_MASK] = true,  [K_BATCH] = true,
    [K_SEQ_Q] = true,   [K_SEQ_KV] = true,    [K_HEADS] = true, [K_KV_HEADS] = true,
    [K_PASS] = true,    [K_TIME_MS] = true,
};

/* The benchmark's --sdpa_backend names: each library's own kernels, and
 * PyTorch's SDPA backends where they are one of those libraries (its flash
 * backend is FlashAttention-2, its cudnn backend cuDNN's engines). PyTorch's
 * math and memory-efficient backends have no tilecast model: refused. */
static const struct {
    const char *name;
    enum tc_attn_impl impl;
} cf_backends[] = {
    {"cudnn", TC_ATTN_CUDNN},
    {"cudnn_oss", TC_ATTN_CUDNN_OSS},
    {"flash_attention", TC_ATTN_FLASH2},
    {"flash_attention_3", TC_ATTN_FLASH3},
    {"flash_attention_4", TC_ATTN_FLASH4},
    {"pyt_cudnn", TC_ATTN_CUDNN},
    {"pyt_flash_attention", TC_ATTN_FLASH2},
};

/* The benchmark's --data_type names. mxfp8 (block-scaled) has no tilecast
 * dtype: refused. */
static const struct {
    const char *name;
    enum tc_dtype dtype;
} cf_dtypes[] = {
    {"bfloat16", TC_DTYPE_BF16},
    {"float16", TC_DTYPE_FP16},
    {"float", TC_DTYPE_FP32},
    {"fp8", TC_DTYPE_FP8},
};

/* torch.cuda.get_device_name() as the results record it, to tilecast spec
 * ids. Names seen in the cuDNN frontend's results and the other vendored
 * sources (NeuSight's files are named by the same call), and the SXM parts'
 * names as CUDA reports them. The spec itself comes through the import's GPU
 * lookup; a name not listed needs --gpu. */
static const struct {
    const char *name;
    const char *id;
} cf_gpus[] = {
    {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"}, {"NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"},
    {"NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"}, {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"},
    {"NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"}, {"NVIDIA H100 PCIe", "h100-pcie-80gb"},
    {"NVIDIA H200", "h200-sxm-141gb"},           {"NVIDIA B200", "b200"},
    {"Tesla V100-PCIE-32GB", "v100-pcie-32gb"},  {"Tesla V100-SXM2-32GB", "v100-sxm2-32gb"},
};

/* The spec id of a row's GPU: --gpu, else its gpu_name column (cols[c], -1
 * when the file has none) looked up in cf_gpus. */
static int cf_gpu_id(const struct tc_import_options *opt, char **fields, const int *cols, int c,
                     const char *file, long line, const char **out)
{
    const char *s = cols[c] >= 0 ? fields[cols[c]] : "";

    *out = NULL;
    if (opt->gpu_id && *opt->gpu_id) {
        *out = opt->gpu_id;
        return TC_OK;
    }
    for (size_t i = 0; i < TC_ARRAY_SIZE(cf_gpus) && !*out; i++)
        if (strcmp(s, cf_gpus[i].name) == 0)
            *out = cf_gpus[i].id;
    if (!*out)
        return tc_error(TC_ERR_NOT_FOUND,
                        "%s:%ld:%d: unknown GPU name '%s': give its spec id with --gpu", file, line,
                        cols[c] + 1, s);
    return TC_OK;
}

static int parse_bool(const char *s, const char *file, long line, int col, const char *name,
                      bool *out)
{
    if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0 || strcmp(s, "1") == 0) {
        *out = true;
        return TC_OK;
    }
    if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0 || strcmp(s, "0") == 0 || !*s) {
        *out = false;
        return TC_OK;
    }
    return tc_error(TC_ERR_PARSE, "%s:%ld:%d: %s '%s' is neither True nor False", file, line, col,
                    name, s);
}

static int cf_record(struct importer *imp, const char *file, long line, char **fields,
                     const int *cols)
{
    const struct tc_import_options *opt = imp->opt;
    struct attn_input in = {0};
    struct tc_attention_row *r = &in.row;
    const char *s;
    char runtime[64];
    bool ok = true, skipped = false, found;
    size_t i;
    int err;

#define COL(c) (cols[c] + 1)
    /* a case the benchmark reports failed or unsupported has no time */
    if (cols[K_SUCCESS] >= 0 &&
        (err = parse_bool(fields[cols[K_SUCCESS]], file, line, COL(K_SUCCESS), "success", &ok)) < 0)
        return err;
    if (cols[K_SKIPPED] >= 0 && (err = parse_bool(fields[cols[K_SKIPPED]], file, line,
                                                  COL(K_SKIPPED), "skipped", &skipped)) < 0)
        return err;
    if (!ok || skipped) {
        imp->stats->skipped_failed++;
        return TC_OK;
    }
    s = fields[cols[K_BACKEND]];
    for (i = 0, found = false; i < TC_ARRAY_SIZE(cf_backends) && !found; i++)
        if (strcmp(s, cf_backends[i].name) == 0) {
            r->impl = cf_backends[i].impl;
            found = true;
        }
    if (!found)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: backend '%s' has no tilecast implementation (expected "
                        "cudnn, cudnn_oss, flash_attention, flash_attention_3, "
                        "flash_attention_4, pyt_cudnn or pyt_flash_attention)",
                        file, line, COL(K_BACKEND), s);
    s = fields[cols[K_DATA_TYPE]];
    for (i = 0, found = false; i < TC_ARRAY_SIZE(cf_dtypes) && !found; i++)
        if (strcmp(s, cf_dtypes[i].name) == 0) {
            r->dtype = cf_dtypes[i].dtype;
            found = true;
        }
    if (!found)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: data_type '%s' has no tilecast dtype (expected bfloat16, "
                        "float16, float or fp8)",
                        file, line, COL(K_DATA_TYPE), s);
    s = fields[cols[K_PASS]];
    if (strcmp(s, "fwd") != 0 && strcmp(s, "bwd") != 0)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: profile_pass '%s' is neither fwd nor bwd", file,
                        line, COL(K_PASS), s);
    r->backward = strcmp(s, "bwd") == 0;
    {
        /* head_dim_qk in current files, head_dim alone in a symmetric one */
        int dim_col =
            cols[K_HEAD_DIM_QK] >= 0 && *fields[cols[K_HEAD_DIM_QK]] ? K_HEAD_DIM_QK : K_HEAD_DIM;

        if ((err = parse_count(fields[cols[K_BATCH]], file, line, COL(K_BATCH), "batch_size", 1,
                               &r->batch)) < 0 ||
            (err = parse_count(fields[cols[K_SEQ_Q]], file, line, COL(K_SEQ_Q), "q_seqlen", 1,
                               &r->seq_q)) < 0 ||
            (err = parse_count(fields[cols[K_SEQ_KV]], file, line, COL(K_SEQ_KV), "kv_seqlen", 1,
                               &r->seq_kv)) < 0 ||
            (err = parse_count(fields[cols[K_HEADS]], file, line, COL(K_HEADS), "num_q_heads", 1,
                               &r->heads)) < 0 ||
            (err = parse_count(fields[cols[K_KV_HEADS]], file, line, COL(K_KV_HEADS),
                               "num_kv_heads", 1, &r->kv_heads)) < 0 ||
            (err = parse_count(fields[cols[dim_col]], file, line, COL(dim_col), cf_names[dim_col],
                               1, &r->head_dim)) < 0)
            return err;
    }
    r->head_dim_vo = r->head_dim;
    if ((s = opt_field(fields, cols, K_HEAD_DIM_VO)) &&
        (err = parse_count(s, file, line, COL(K_HEAD_DIM_VO), "head_dim_vo", 1, &r->head_dim_vo)) <
            0)
        return err;
    if ((s = opt_field(fields, cols, K_WINDOW)) &&
        (err = parse_count(s, file, line, COL(K_WINDOW), "sliding_window_size", 1, &r->window)) < 0)
        return err;
    if ((s = opt_field(fields, cols, K_DETERMINISTIC)) &&
        (err = parse_bool(s, file, line, COL(K_DETERMINISTIC), "deterministic_bwd",
                          &r->deterministic)) < 0)
        return err;
    /* the forward has no deterministic variant: the flag is the run's */
    if (!r->backward)
        r->deterministic = false;
    s = fields[cols[K_MASK]];
    if (strcmp(s, "no_mask") == 0)
        r->causal = false;
    else if (strcmp(s, "bottom_right") == 0 ||
             (strcmp(s, "top_left") == 0 && r->seq_q == r->seq_kv))
        r->causal = true;
    else if (strcmp(s, "top_left") == 0)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: a top-left causal mask on q_seqlen %lld != kv_seqlen %lld is "
                        "not stored (tilecast's causal mask is aligned at the bottom right)",
                        file, line, COL(K_MASK), (long long)r->seq_q, (long long)r->seq_kv);
    else
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: attn_mask '%s' (expected no_mask, top_left or bottom_right)",
                        file, line, COL(K_MASK), s);
    s = fields[cols[K_TIME_MS]];
    if (tc_parse_double(s, &r->time_us) < 0 || !(r->time_us > 0) || !isfinite(r->time_us))
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: time_ms '%s' is not a positive number", file,
                        line, COL(K_TIME_MS), s);
    r->time_us *= 1000.0; /* the source's milliseconds, to 3 decimals */
    if ((s = opt_field(fields, cols, K_TFLOPS)) &&
        (tc_parse_double(s, &in.tflops) < 0 || !(in.tflops >= 0) || !isfinite(in.tflops)))
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: tflops '%s' is not a number", file, line,
                        COL(K_TFLOPS), s);
    if ((s = opt_field(fields, cols, K_ITERATIONS))) {
        int64_t reps = 0;

        if ((err = parse_count(s, file, line, COL(K_ITERATIONS), "num_iterations", 1, &reps)) < 0)
            return err;
        /* the median is over the iterations after the first five */
        r->reps = reps > 5 && reps < (1 << 30) ? (int)(reps - 5) : 0;
    }
    r->status = TC_STATUS_OK;

    if ((err = cf_gpu_id(opt, fields, cols, K_GPU_NAME, file, line, &in.gpu_id)) < 0)
        return err;
    in.timing = opt->timing ? opt->timing : CUDNN_FRONTEND_TIMING;
    in.source = opt->source ? opt->source : db_import_base_name(file);
    in.licence = opt->licence ? opt->licence : db_import_licence(in.source);
    if ((s = opt_field(fields, cols, K_BACKEND_VERSION))) {
        /* the measured-data README's form: "cudnn_backend 92700.000" */
        snprintf(runtime, sizeof(runtime), "cudnn_backend %.40s", s);
        in.runtime = runtime;
    }
#undef COL
    return store_attention(imp, &in, file, line);
}

/* ------------------------------------------------------------------------ */
/* The cuDNN frontend's attention_inference results                         */
/* ------------------------------------------------------------------------ */

/* The columns of benchmark/attention_inference's result CSVs (runner.py's
 * BenchmarkResult, one row per model, phase, backend, shape and cache
 * dtype). page_size is the config's, written on every row; only the
 * paged backends (flashinfer, b12x, flash_mla) use it: the cudnn,
 * cudnn_oss and flash_attention_4 setups of benchmark_single_attention.py
 * allocate contiguous K and V. */
enum inf_col {
    I_PHASE,
    I_BACKEND,
    I_DATA_TYPE,
    I_KV_CACHE_DTYPE,
    I_BATCH,
    I_Q_TOKENS,
    I_KV_LEN,
    I_HEADS,
    I_KV_HEADS,
    I_HEAD_DIM_QK,
    I_HEAD_DIM_VO,
    I_KIND,
    I_WINDOW,
    I_TIME_MS,
    I_TFLOPS,
    I_ITERATIONS,
    I_SUCCESS,
    I_GPU_NAME,
    I_BACKEND_DETAIL,
    I_COUNT
};

static const char *const inf_names[I_COUNT] = {
    "phase",
    "backend",
    "data_type",
    "kv_cache_dtype",
    "batch_size",
    "q_tokens",
    "kv_len",
    "num_q_heads",
    "num_kv_heads",
    "head_dim_qk",
    "head_dim_vo",
    "kind",
    "sliding_window_size",
    "time_ms",
    "tflops",
    "num_iterations",
    "success",
    "gpu_name",
    "backend_detail",
};

static const bool inf_required[I_COUNT] = {
    [I_PHASE] = true,       [I_BACKEND] = true,     [I_DATA_TYPE] = true, [I_BATCH] = true,
    [I_Q_TOKENS] = true,    [I_KV_LEN] = true,      [I_HEADS] = true,     [I_KV_HEADS] = true,
    [I_HEAD_DIM_QK] = true, [I_HEAD_DIM_VO] = true, [I_TIME_MS] = true,   [I_TFLOPS] = true,
};

static int inf_record(struct importer *imp, const char *file, long line, char **fields,
                      const int *cols)
{
    const struct tc_import_options *opt = imp->opt;
    struct attn_input in = {0};
    struct tc_attention_row *r = &in.row;
    const char *s, *phase;
    bool ok = true, context, fp8_cache = false, found;
    double tflops, flops;
    size_t i;
    int err;

#define COL(c) (cols[c] + 1)
    if (cols[I_SUCCESS] >= 0 &&
        (err = parse_bool(fields[cols[I_SUCCESS]], file, line, COL(I_SUCCESS), "success", &ok)) < 0)
        return err;
    if (!ok) {
        imp->stats->skipped_failed++;
        return TC_OK;
    }
    /* the backends tilecast models, all reading a contiguous cache; the
     * paged ones (flashinfer, b12x, flash_mla) are no tilecast kernel */
    s = fields[cols[I_BACKEND]];
    if (strcmp(s, "cudnn") == 0)
        r->impl = TC_ATTN_CUDNN;
    else if (strcmp(s, "cudnn_oss") == 0)
        r->impl = TC_ATTN_CUDNN_OSS;
    else if (strcmp(s, "flash_attention_4") == 0)
        r->impl = TC_ATTN_FLASH4;
    else if (strcmp(s, "flashinfer") == 0 || strcmp(s, "b12x") == 0 ||
             strcmp(s, "flash_mla") == 0) {
        imp->stats->skipped_unmodelled++;
        return TC_OK;
    } else
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: backend '%s' (expected cudnn, cudnn_oss, flash_attention_4, "
                        "flashinfer, b12x or flash_mla)",
                        file, line, COL(I_BACKEND), s);
    /* an absorbed MLA decode reads one shared record for K and V */
    if ((s = opt_field(fields, cols, I_KIND)) && strcmp(s, "gqa") != 0) {
        if (strcmp(s, "mla_absorbed") != 0)
            return tc_error(TC_ERR_PARSE, "%s:%ld:%d: kind '%s' (expected gqa or mla_absorbed)",
                            file, line, COL(I_KIND), s);
        imp->stats->skipped_unmodelled++;
        return TC_OK;
    }
    s = fields[cols[I_DATA_TYPE]];
    for (i = 0, found = false; i < TC_ARRAY_SIZE(cf_dtypes) && !found; i++)
        if (strcmp(s, cf_dtypes[i].name) == 0) {
            r->dtype = cf_dtypes[i].dtype;
            found = true;
        }
    if (!found)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: data_type '%s' (expected bfloat16 or float16)",
                        file, line, COL(I_DATA_TYPE), s);
    if ((s = opt_field(fields, cols, I_KV_CACHE_DTYPE)) && strcmp(s, "fp8_e4m3") == 0)
        fp8_cache = true;
    else if (s && strcmp(s, fields[cols[I_DATA_TYPE]]) != 0)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld:%d: kv_cache_dtype '%s' (expected the data_type or fp8_e4m3)", file,
                        line, COL(I_KV_CACHE_DTYPE), s);
    /* an fp8 cache on cuDNN is the fp8 graph: Q, K, V and O in e4m3
     * (setup_cudnn_fp8); FA4's harness has no fp8 cache (its cases fail) */
    if (fp8_cache)
        r->dtype = TC_DTYPE_FP8;
    r->kv_dtype = r->dtype;
    if ((err = parse_count(fields[cols[I_BATCH]], file, line, COL(I_BATCH), "batch_size", 1,
                           &r->batch)) < 0 ||
        (err = parse_count(fields[cols[I_Q_TOKENS]], file, line, COL(I_Q_TOKENS), "q_tokens", 1,
                           &r->seq_q)) < 0 ||
        (err = parse_count(fields[cols[I_KV_LEN]], file, line, COL(I_KV_LEN), "kv_len", 1,
                           &r->seq_kv)) < 0 ||
        (err = parse_count(fields[cols[I_HEADS]], file, line, COL(I_HEADS), "num_q_heads", 1,
                           &r->heads)) < 0 ||
        (err = parse_count(fields[cols[I_KV_HEADS]], file, line, COL(I_KV_HEADS), "num_kv_heads", 1,
                           &r->kv_heads)) < 0 ||
        (err = parse_count(fields[cols[I_HEAD_DIM_QK]], file, line, COL(I_HEAD_DIM_QK),
                           "head_dim_qk", 1, &r->head_dim)) < 0 ||
        (err = parse_count(fields[cols[I_HEAD_DIM_VO]], file, line, COL(I_HEAD_DIM_VO),
                           "head_dim_vo", 1, &r->head_dim_vo)) < 0)
        return err;
    if ((s = opt_field(fields, cols, I_WINDOW)) &&
        (err = parse_count(s, file, line, COL(I_WINDOW), "sliding_window_size", 1, &r->window)) < 0)
        return err;
    s = fields[cols[I_TIME_MS]];
    if (tc_parse_double(s, &r->time_us) < 0 || !(r->time_us > 0) || !isfinite(r->time_us))
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: time_ms '%s' is not a positive number", file,
                        line, COL(I_TIME_MS), s);
    r->time_us *= 1000.0;
    s = fields[cols[I_TFLOPS]];
    if (tc_parse_double(s, &tflops) < 0 || !(tflops > 0) || !isfinite(tflops))
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: tflops '%s' is not a positive number", file, line,
                        COL(I_TFLOPS), s);
    /* the mask (benchmark_single_attention.py): a generation's q_tokens sit
     * at the end of the cache, bottom-right causal above one token (and
     * with a window, which is anchored there); a context phase is causal
     * by the config's context_causal, which the file does not record: its
     * FLOPs, 2·b·h·s_q·s_kv·(d_qk + d_vo) halved for a causal square
     * prefill (attention_flops), tell a square one's; a chunked prefill's
     * are the same either way and it is skipped */
    phase = fields[cols[I_PHASE]];
    if (strcmp(phase, "context") != 0 && strcmp(phase, "generation") != 0)
        return tc_error(TC_ERR_PARSE, "%s:%ld:%d: phase '%s' (expected context or generation)",
                        file, line, COL(I_PHASE), phase);
    context = strcmp(phase, "context") == 0;
    flops = 2.0 * (double)r->batch * (double)r->heads * (double)r->seq_q * (double)r->seq_kv *
            (double)(r->head_dim + r->head_dim_vo);
    if (!context) {
        r->causal = r->seq_q > 1 || r->window > 0;
    } else if (r->seq_q != r->seq_kv) {
        imp->stats->skipped_unmodelled++;
        return TC_OK;
    } else {
        double full = flops / r->time_us / 1e6;

        r->causal = fabs(0.5 * full - tflops) < fabs(full - tflops);
        if (r->causal)
            flops *= 0.5;
    }
    /* the file's throughput is the time's (three decimals): else a time in
     * another unit */
    if (fabs(flops / r->time_us / 1e6 - tflops) > 0.001 + 0.01 * tflops)
        return tc_error(TC_ERR_PARSE,
                        "%s:%ld: time %g us gives %.3f TFLOP/s, but the row says %g (a time in "
                        "another unit?)",
                        file, line, r->time_us, flops / r->time_us / 1e6, tflops);
    if ((s = opt_field(fields, cols, I_ITERATIONS))) {
        int64_t reps = 0;

        if ((err = parse_count(s, file, line, COL(I_ITERATIONS), "num_iterations", 1, &reps)) < 0)
            return err;
        /* the median of the timed iterations, the warm-up ones apart */
        r->reps = reps < (1 << 30) ? (int)reps : 0;
    }
    r->status = TC_STATUS_OK;
    if ((err = cf_gpu_id(opt, fields, cols, I_GPU_NAME, file, line, &in.gpu_id)) < 0)
        return err;
    in.timing = opt->timing ? opt->timing : CUDNN_FRONTEND_TIMING;
    in.source = opt->source ? opt->source : db_import_base_name(file);
    in.licence = opt->licence ? opt->licence : db_import_licence(in.source);
    in.runtime = opt_field(fields, cols, I_BACKEND_DETAIL);
#undef COL
    return store_attention(imp, &in, file, line);
}

static int import_inference(struct importer *imp, const char *file, struct tc_csv *csv, int nfields,
                            char **fields)
{
    int cols[I_COUNT], err;

    err = find_columns(file, nfields, fields, inf_names, inf_required, I_COUNT, cols,
                       "a cuDNN frontend attention_inference result: phase,backend,data_type,"
                       "kv_cache_dtype,batch_size,q_tokens,kv_len,num_q_heads,num_kv_heads,"
                       "head_dim_qk,head_dim_vo,...,time_ms,tflops,...");
    if (err == TC_OK && cols[I_GPU_NAME] < 0 && !imp->opt->gpu_id)
        err = tc_error(TC_ERR_PARSE, "%s:1: missing column 'gpu_name' (or give the GPU with --gpu)",
                       file);
    if (err == TC_OK)
        err = db_import_csv_records(imp, file, csv, nfields, cols, inf_record);
    return err;
}

int db_import_cudnn_frontend(struct importer *imp, const char *file)
{
    struct tc_csv *csv;
    FILE *f;
    int cols[K_COUNT], nfields, err;
    char **fields;

    if ((err = db_import_csv_open(file, &f, &csv, &nfields, &fields)) < 0)
        return err;
    /* attention_inference's results: q_tokens against a kv_len cache */
    if (tc_csv_find(nfields, fields, "kv_len") >= 0) {
        err = import_inference(imp, file, csv, nfields, fields);
        goto out;
    }
    err = find_columns(file, nfields, fields, cf_names, cf_required, K_COUNT, cols,
                       "a cuDNN frontend attention_training result: backend,data_type,"
                       "attn_mask,batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,"
                       "head_dim_qk,head_dim_vo,profile_pass,deterministic_bwd,time_ms,...");
    if (err == TC_OK && cols[K_HEAD_DIM_QK] < 0 && cols[K_HEAD_DIM] < 0)
        err = tc_error(TC_ERR_PARSE, "%s:1: missing column 'head_dim_qk' (or 'head_dim')", file);
    if (err == TC_OK && cols[K_GPU_NAME] < 0 && !imp->opt->gpu_id)
        err = tc_error(TC_ERR_PARSE, "%s:1: missing column 'gpu_name' (or give the GPU with --gpu)",
                       file);
    if (err == TC_OK)
        err = db_import_csv_records(imp, file, csv, nfields, cols, cf_record);
out:
    tc_csv_free(csv);
    fclose(f);
    return err;
}
