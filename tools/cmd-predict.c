/* tilecast predict gemm (one shape, or a CSV streamed row by row), and the
 * dispatch to predict attention|layer|model (cmd-predict-model.c). Every
 * number printed is labelled as a prediction. */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-gpus.h"
#include "csv.h"
#include "format.h"
#include "gemm-cli.h"
#include "model-cli.h"
#include "tc-internal.h"

/* predict gemm's own part of the text: the options it takes */
#define PREDICT_GEMM_HELP                                                                          \
    "Usage: tilecast predict gemm --gpu ID [--dtype DT] [--layout NN|NT|TN|TT]\n"                  \
    "                             [--batch B] [--lda N] [--ldb N] [--ldc N]\n"                     \
    "                             [--timing METHOD] [--op mm|bmm|linear]\n"                        \
    "                             [--explain] [--json|--csv|--md] [--analytical] [--db FILE]... "  \
    "M N K\n"                                                                                      \
    "       tilecast predict gemm [--gpu ID] [--dtype DT] [--layout L] [--batch B]\n"              \
    "                             --input shapes.csv [--output predictions.csv]\n"                 \
    "                             [--timing METHOD] [--op OP] [--explain] [--keep-going]\n"        \
    "                             [--analytical] [--db FILE]...\n"                                 \
    "       tilecast predict attention|layer|model ...   (see 'tilecast predict attention "        \
    "--help')\n"                                                                                   \
    "\n"                                                                                           \
    "Predicts the time of C[M x N] = A[M x K] . B[K x N] (row-major view; a\n"                     \
    "batch of B such GEMMs with --batch) on a GPU, and says where the number\n"                    \
    "comes from: 'prediction (analytical)' is the model from the GPU spec and\n"                   \
    "the kernel catalogue alone; calibrated predictions use measured databases.\n"                 \
    "\n"                                                                                           \
    "Options:\n"                                                                                   \
    "  --gpu ID        GPU id ('tilecast specs list'); required unless every\n"                    \
    "                  input row has a gpu column\n"                                               \
    "  --dtype DT      fp32, tf32, fp16, bf16 or fp8 (default fp16)\n"                             \
    "  --layout L      NN, NT, TN or TT in the row-major view: first letter A,\n"                  \
    "                  second B, T = stored transposed (nn.Linear is NT; default NN);\n"           \
    "                  fp8 GEMMs on sm89/sm90 (Ada, Hopper) take NT only (cuBLASLt TN)\n"          \
    "  --batch B       number of GEMMs in one batched call (default 1)\n"                          \
    "  --lda N, --ldb N, --ldc N\n"                                                                \
    "                  leading dimensions in elements (default: packed); they set\n"               \
    "                  the alignment class (128-byte, 16-byte, 4-byte, unaligned)\n"               \
    "  --timing METHOD predict in a timing method's convention instead of kernel\n"                \
    "                  time: kernel (default), event (CUDA events around one\n"                    \
    "                  PyTorch op), wall, wall-max, or a measured data's tag such\n"               \
    "                  as event-fastest5-mean: the method's host cost is added\n"                  \
    "                  (fitted by a calibration, else the method's typical one);\n"                \
    "                  a tag of no known method's form (a misspelling) is refused\n"               \
    "  --op OP         the PyTorch call: mm (default), bmm or linear (nn.Linear\n"                 \
    "                  with a bias; under a host-timed --timing it adds its\n"                     \
    "                  longer host path, 23 us; kernel time does not change);\n"                   \
    "                  an op column overrides it per row in batch mode\n"                          \
    "  --explain       also print the chosen kernel, tile, stages, warps, split-K,\n"              \
    "                  cluster, tiles, waves, wave and tile efficiency, blocks per\n"              \
    "                  SM, occupancy, bound, alignment class and the compute,\n"                   \
    "                  memory and overhead parts of the time\n"                                    \
    "  --json, --csv   machine-readable output (default: a table); --md a markdown\n"              \
    "                  table\n"                                                                    \
    "  --analytical    ignore every database: the analytical model only\n"                         \
    "  --db FILE       calibrate with the measurements in FILE (repeatable); a\n"                  \
    "                  file without a stored calibration is fitted in memory, up\n"                \
    "                  to 50000 rows of one GPU and dtype ('tilecast db calibrate\n"               \
    "                  FILE' stores a fit)\n"                                                      \
    "  --              ends the options: M N K follow\n"                                           \
    "  --input FILE    batch mode: predict every row of a CSV ('-' = stdin).\n"                    \
    "                  Columns m, n, k are required; gpu, dtype, batch, layout,\n"                 \
    "                  lda, ldb, ldc, op are optional and override the flags per\n"                \
    "                  row.\n"                                                                     \
    "                  Every input column is written through unchanged, followed\n"                \
    "                  by pred_time_us, pred_tflops, pred_source, pred_lo_us and\n"                \
    "                  pred_hi_us (the 80% interval of that source; and the\n"                     \
    "                  --explain columns; one whose name the input already has,\n"                 \
    "                  such as NeuSight's kernel, is written as pred_NAME). The\n"                 \
    "                  measured CSVs of the project's\n"                                           \
    "                  data folder work as they are. Memory does not grow with\n"                  \
    "                  the number of rows.\n"                                                      \
    "  --output FILE   where batch mode writes (default: stdout); FILE is replaced\n"              \
    "                  only when the run completes, and may not be an input\n"                     \
    "  --keep-going    batch mode: report a bad row (FILE:LINE:COLUMN) on stderr,\n"               \
    "                  write it with empty predictions and a pred_error column,\n"                 \
    "                  and continue; without it the first bad row stops the run\n"                 \
    "                  and --output FILE is not written.\n"                                        \
    "                  Either way the exit status is 2 if any row failed.\n"                       \
    "\n"                                                                                           \
    "Output columns: time_us (predicted kernel time, or the --timing method's\n"                   \
    "time; microseconds), tflops (2.M.N.K.B / time), frac_peak (of the dtype's\n"                  \
    "dense peak), source.\n"                                                                       \
    "\n"                                                                                           \
    "JSON: every predict target (gemm, attention, layer, model) prints one object\n"               \
    "with --json, its first keys \"prediction\" (false only for a measured shape) and\n"           \
    "\"gpu\", then the query, the times (microseconds), \"source\" (measured,\n"                   \
    "calibrated, transferred or analytical) and, for layers and models, ops[]\n"                   \
    "(layer --measured: \"prediction\", then groups[]); flags such as stream_k,\n"                 \
    "causal and per_layer are JSON booleans.\n"                                                    \
    "\n"                                                                                           \
    "Examples:\n"                                                                                  \
    "  tilecast predict gemm --gpu h100-sxm5-80gb --dtype bf16 8192 10944 4096\n"                  \
    "  tilecast predict gemm --gpu a100-sxm4-80gb --explain 8192 51201 4096\n"                     \
    "  tilecast predict gemm --input vidur_gemm.csv --output pred.csv\n"

const char cmd_predict_gemm_help[] = PREDICT_GEMM_HELP;
const char cmd_predict_help[] = PREDICT_GEMM_HELP
    /* the other targets' texts too, so the man page and completion carry them */
    "\n" MCLI_PREDICT_ATTENTION_HELP "\n" MCLI_PREDICT_LAYER_HELP "\n" MCLI_PREDICT_MODEL_HELP;

/* ------------------------------------------------------------------------ */
/* Shared with eval and bench (gemm-cli.h)                                  */
/* ------------------------------------------------------------------------ */

const char *gemm_source_label(enum tc_source source)
{
    switch (source) {
    case TC_SOURCE_MEASURED:
        return "measurement";
    case TC_SOURCE_CALIBRATED:
        return "prediction (calibrated)";
    case TC_SOURCE_TRANSFERRED:
        return "prediction (transferred)";
    case TC_SOURCE_ANALYTICAL:
        return "prediction (analytical)";
    default:
        return "prediction";
    }
}

bool gemm_columns_find(const char *cmd, const char *file, long line, int nfields, char **fields,
                       struct gemm_columns *cols)
{
    cols->m = tc_csv_find(nfields, fields, "m");
    cols->n = tc_csv_find(nfields, fields, "n");
    cols->k = tc_csv_find(nfields, fields, "k");
    cols->gpu = tc_csv_find(nfields, fields, "gpu");
    cols->dtype = tc_csv_find(nfields, fields, "dtype");
    cols->batch = tc_csv_find(nfields, fields, "batch");
    cols->layout = tc_csv_find(nfields, fields, "layout");
    cols->lda = tc_csv_find(nfields, fields, "lda");
    cols->ldb = tc_csv_find(nfields, fields, "ldb");
    cols->ldc = tc_csv_find(nfields, fields, "ldc");
    cols->op = tc_csv_find(nfields, fields, "op");
    if (cols->m < 0 || cols->n < 0 || cols->k < 0) {
        cli_error(cmd,
                  "%s:%ld: the header needs columns m, n and k (BLAS convention: C[m x n] "
                  "= A[m x k] . B[k x n])",
                  file, line);
        return false;
    }
    return true;
}

static int row_error(char *err, size_t len, const char *file, long line, int col, int code,
                     const char *fmt, ...) CLI_PRINTF(7, 8);

static int row_error(char *err, size_t len, const char *file, long line, int col, int code,
                     const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (col > 0)
        snprintf(err, len, "%s:%ld:%d: %s", file, line, col, msg);
    else
        snprintf(err, len, "%s:%ld: %s", file, line, msg);
    return code;
}

static int row_int(const char *file, long line, char **fields, int col, const char *name,
                   long long min, int64_t *out, char *err, size_t len)
{
    long long v;
    int e = tc_parse_i64(fields[col], &v);

    if (e < 0)
        return row_error(err, len, file, line, col + 1, e, "%s: %s", name, tc_last_error());
    if (v < min)
        return row_error(err, len, file, line, col + 1, TC_ERR_RANGE,
                         "%s = %lld is out of range (must be >= %lld)", name, v, min);
    *out = v;
    return TC_OK;
}

/* A layout column's two letters as tc_layout_parse() reads them (ignoring
 * case), without its strcasecmp calls per row; false for anything else,
 * which goes to tc_layout_parse() and its message. */
static bool layout_letters(const char *f, enum tc_layout *out)
{
    if (!f[0] || !f[1] || f[2])
        return false;
    for (int i = 0; i < TC_LAYOUT_COUNT; i++) {
        const char *name = tc_layout_name((enum tc_layout)i);

        /* (| 0x20 folds a letter's case and maps no other byte onto one) */
        if ((f[0] | 0x20) == (name[0] | 0x20) && (f[1] | 0x20) == (name[1] | 0x20)) {
            *out = (enum tc_layout)i;
            return true;
        }
    }
    return false;
}

int gemm_row_query(const struct tc_specs *specs, const struct gemm_columns *cols,
                   const struct gemm_defaults *def, const char *file, long line, char **fields,
                   const struct tc_gpu **gpu, struct tc_gemm_query *q, char *err, size_t len)
{
    const char *gpu_id = def->gpu_id;
    int e;

    memset(q, 0, sizeof(*q));
    q->dtype = def->have_dtype ? def->dtype : TC_DTYPE_FP16;
    q->layout = def->layout;
    q->batch = def->batch;
    q->op = def->op;
    if ((e = row_int(file, line, fields, cols->m, "m", 1, &q->m, err, len)) < 0 ||
        (e = row_int(file, line, fields, cols->n, "n", 1, &q->n, err, len)) < 0 ||
        (e = row_int(file, line, fields, cols->k, "k", 1, &q->k, err, len)) < 0)
        return e;
    if (cols->batch >= 0 && *fields[cols->batch] &&
        (e = row_int(file, line, fields, cols->batch, "batch", 1, &q->batch, err, len)) < 0)
        return e;
    if (cols->lda >= 0 && *fields[cols->lda] &&
        (e = row_int(file, line, fields, cols->lda, "lda", 1, &q->lda, err, len)) < 0)
        return e;
    if (cols->ldb >= 0 && *fields[cols->ldb] &&
        (e = row_int(file, line, fields, cols->ldb, "ldb", 1, &q->ldb, err, len)) < 0)
        return e;
    if (cols->ldc >= 0 && *fields[cols->ldc] &&
        (e = row_int(file, line, fields, cols->ldc, "ldc", 1, &q->ldc, err, len)) < 0)
        return e;
    if (cols->dtype >= 0 && *fields[cols->dtype] &&
        tc_dtype_parse(fields[cols->dtype], &q->dtype) < 0)
        return row_error(err, len, file, line, cols->dtype + 1, TC_ERR_INVALID, "%s",
                         tc_last_error());
    if (cols->layout >= 0 && *fields[cols->layout] &&
        !layout_letters(fields[cols->layout], &q->layout) &&
        tc_layout_parse(fields[cols->layout], &q->layout) < 0)
        return row_error(err, len, file, line, cols->layout + 1, TC_ERR_INVALID, "%s",
                         tc_last_error());
    if (cols->op >= 0 && *fields[cols->op] && tc_gemm_op_parse(fields[cols->op], &q->op) < 0)
        return row_error(err, len, file, line, cols->op + 1, TC_ERR_INVALID, "%s", tc_last_error());
    if (cols->gpu >= 0 && *fields[cols->gpu])
        gpu_id = fields[cols->gpu];
    if (!gpu_id)
        return row_error(err, len, file, line, cols->gpu >= 0 ? cols->gpu + 1 : 0, TC_ERR_INVALID,
                         "no GPU: give --gpu ID or a gpu column");
    if (!*gpu || strcmp((*gpu)->id, gpu_id) != 0) {
        /* the GPU the row means, as --gpu takes it (cli_find_gpu) */
        *gpu = tc_specs_lookup(specs, gpu_id);
        if (!*gpu)
            return row_error(err, len, file, line, cols->gpu >= 0 ? cols->gpu + 1 : 0,
                             TC_ERR_NOT_FOUND, "%s", tc_last_error());
    }
    return TC_OK;
}

int gemm_error_column(const struct gemm_columns *cols, int err)
{
    if (err == TC_ERR_UNSUPPORTED)
        return cols->dtype >= 0 ? cols->dtype + 1 : 0;
    if (err == TC_ERR_RANGE)
        return cols->m + 1;
    return 0;
}

int predictor_opts_parse(const char *cmd, int argc, char **argv, int *i, struct predictor_opts *o)
{
    const char *arg = argv[*i];

    if (strcmp(arg, "--analytical") == 0) {
        o->analytical = true;
        return 1;
    }
    if (strcmp(arg, "--db") == 0 || strncmp(arg, "--db=", 5) == 0) {
        const char *v = arg[4] == '=' ? arg + 5 : NULL;

        if (!v) {
            if (*i + 1 >= argc) {
                cli_error(cmd, "--db needs a database file");
                return -1;
            }
            v = argv[++*i];
        }
        if (o->n_dbs >= (int)(sizeof(o->dbs) / sizeof(o->dbs[0]))) {
            cli_error(cmd, "at most %d --db files", (int)(sizeof(o->dbs) / sizeof(o->dbs[0])));
            return -1;
        }
        o->dbs[o->n_dbs++] = v;
        return 1;
    }
    return 0;
}

struct tc_predictor *predictor_opts_make(const char *cmd, const struct tc_specs *specs,
                                         const struct predictor_opts *o, int *exit_code)
{
    struct tc_predictor *p = tc_predictor_new(specs);

    if (!p) {
        *exit_code = cli_fail(cmd, TC_ERR_NOMEM);
        return NULL;
    }
    tc_predictor_set_analytical(p, o->analytical);
    for (int i = 0; i < o->n_dbs; i++) {
        int err;

        /* A database that is not there is bad input (exit 2), said before
         * any prediction is attempted. */
        if (!cli_input_readable(cmd, o->dbs[i])) {
            *exit_code = CLI_EXIT_INPUT;
            tc_predictor_free(p);
            return NULL;
        }
        err = tc_predictor_add_db(p, o->dbs[i]);

        if (err < 0) {
            const char *msg = *tc_last_error() ? tc_last_error() : tc_strerror(err);

            if (strstr(msg, o->dbs[i]))
                cli_error(cmd, "%s", msg);
            else
                cli_error(cmd, "%s: %s", o->dbs[i], msg);
            *exit_code = cli_exit_code(err);
            tc_predictor_free(p);
            return NULL;
        }
    }
    return p;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

static const char *const explain_cols[] = {
    "kernel",    "tile_m",   "tile_n", "tile_k",     "stages",    "warps",       "split_k",
    "cluster",   "stream_k", "tiles",  "waves",      "wave_eff",  "tile_eff",    "blocks_per_sm",
    "occupancy", "bound",    "align",  "compute_us", "memory_us", "overhead_us",
};
#define N_EXPLAIN ((int)(sizeof(explain_cols) / sizeof(explain_cols[0])))

/* The --explain values of pr as strings, in explain_cols order. */
static void explain_values(const struct tc_gemm_prediction *pr, char vals[N_EXPLAIN][96])
{
    snprintf(vals[0], 96, "%s", pr->kernel);
    snprintf(vals[1], 96, "%d", pr->tile_m);
    snprintf(vals[2], 96, "%d", pr->tile_n);
    snprintf(vals[3], 96, "%d", pr->tile_k);
    snprintf(vals[4], 96, "%d", pr->stages);
    snprintf(vals[5], 96, "%d", pr->warps);
    snprintf(vals[6], 96, "%d", pr->split_k);
    snprintf(vals[7], 96, "%dx%d", pr->cluster_m, pr->cluster_n);
    snprintf(vals[8], 96, "%s", pr->stream_k ? "yes" : "no");
    snprintf(vals[9], 96, "%lld", (long long)pr->tiles);
    snprintf(vals[10], 96, "%.3f", pr->waves);
    snprintf(vals[11], 96, "%.3f", pr->wave_eff);
    snprintf(vals[12], 96, "%.3f", pr->tile_eff);
    snprintf(vals[13], 96, "%d", pr->blocks_per_sm);
    snprintf(vals[14], 96, "%.3f", pr->occupancy);
    snprintf(vals[15], 96, "%s", tc_bound_name(pr->bound));
    snprintf(vals[16], 96, "%s", tc_align_name(pr->align));
    snprintf(vals[17], 96, "%.3f", pr->compute_us);
    snprintf(vals[18], 96, "%.3f", pr->memory_us);
    snprintf(vals[19], 96, "%.3f", pr->overhead_us);
}

/* The K loop of the chosen kernel, for --explain: on NVIDIA a K residue is
 * one more full step whose loads are zero-filled (TMA bounds, predicated
 * cp.async) and whose MMAs run on the zeros, so it costs one step of the
 * loop, not a share of the whole GEMM; on AMD Tensile's tail loop runs it
 * at the MFMA depth. */
static void explain_k_loop(const struct tc_gpu *gpu, const struct tc_gemm_query *q,
                           const struct tc_gemm_prediction *pr, char *buf, size_t len)
{
    int64_t split = pr->split_k > 0 ? pr->split_k : 1;
    int64_t k_split = (q->k + split - 1) / split, bk = pr->tile_k > 0 ? pr->tile_k : 1;
    int64_t steps = (k_split + bk - 1) / bk, last = k_split - (steps - 1) * bk;

    if (gpu->vendor == TC_VENDOR_AMD)
        snprintf(buf, len, "%lld steps of %lld, the residue in a tail loop at the MFMA depth",
                 (long long)(k_split / bk), (long long)bk);
    else if (last == bk)
        snprintf(buf, len, "%lld steps of %lld, no residue", (long long)steps, (long long)bk);
    else
        snprintf(buf, len,
                 "%lld steps of %lld, the last %lld deep and zero-filled (%.1f%% of the "
                 "loop)",
                 (long long)steps, (long long)bk, (long long)last, 100.0 / (double)steps);
}

/* Which leading dimensions set the alignment class, for --explain: the
 * class is the worst of A's, B's and C's row lengths in bytes. */
static void explain_alignment(const struct tc_gemm_query *q, const struct tc_gemm_prediction *pr,
                              char *buf, size_t len)
{
    bool a_t = q->layout == TC_LAYOUT_TN || q->layout == TC_LAYOUT_TT;
    bool b_t = q->layout == TC_LAYOUT_NT || q->layout == TC_LAYOUT_TT;
    const int64_t ld[3] = {q->lda > 0 ? q->lda
                           : a_t      ? q->m
                                      : q->k,
                           q->ldb > 0 ? q->ldb
                           : b_t      ? q->k
                                      : q->n,
                           q->ldc > 0 ? q->ldc : q->n};
    static const char *const names[3] = {"lda", "ldb", "ldc"};
    int64_t e = tc_dtype_bytes(q->dtype) > 0 ? tc_dtype_bytes(q->dtype) : 1;
    size_t used;

    used = (size_t)snprintf(buf, len, "%s", tc_align_name(pr->align));
    if (pr->align == TC_ALIGN_128B)
        return;
    for (int i = 0; i < 3 && used < len; i++) {
        uint64_t bytes = (uint64_t)ld[i] * (uint64_t)e;
        enum tc_align c = bytes % 128 == 0  ? TC_ALIGN_128B
                          : bytes % 16 == 0 ? TC_ALIGN_16B
                          : bytes % 4 == 0  ? TC_ALIGN_4B
                                            : TC_ALIGN_ELEM;

        if (c == pr->align)
            used += (size_t)snprintf(buf + used, len - used,
                                     "; %s %lld (%llu bytes, not a "
                                     "multiple of 128)",
                                     names[i], (long long)ld[i], (unsigned long long)bytes);
    }
}

/* One GEMM as the JSON object every `predict --json` prints: "prediction"
 * (false only for a measured shape) and "gpu" first, the query, the time,
 * "source" (measured, calibrated, transferred, analytical), and with
 * --explain the chosen kernel, its flags as booleans. */
static void print_json_single(const struct tc_gpu *gpu, const struct tc_gemm_query *q,
                              const struct tc_gemm_prediction *pr, bool explain, const char *timing)
{
    json_t *o = json_object();
    char cluster[32];

    json_object_set_new(o, "prediction", json_boolean(pr->source != TC_SOURCE_MEASURED));
    json_object_set_new(o, "gpu", json_string(gpu->id));
    json_object_set_new(o, "dtype", json_string(tc_dtype_name(q->dtype)));
    json_object_set_new(o, "layout", json_string(tc_layout_name(q->layout)));
    json_object_set_new(o, "m", json_integer(q->m));
    json_object_set_new(o, "n", json_integer(q->n));
    json_object_set_new(o, "k", json_integer(q->k));
    json_object_set_new(o, "batch", json_integer(q->batch ? q->batch : 1));
    if (timing) {
        json_object_set_new(o, "timing", json_string(timing));
        json_object_set_new(o, "op", json_string(tc_gemm_op_name(q->op)));
    }
    json_object_set_new(o, "time_us", json_real(pr->time_us));
    json_object_set_new(o, "tflops", json_real(pr->tflops));
    json_object_set_new(o, "frac_peak", json_real(pr->frac_peak));
    json_object_set_new(o, "source", json_string(tc_source_name(pr->source)));
    json_object_set_new(o, "lo_us", json_real(pr->lo_us));
    json_object_set_new(o, "hi_us", json_real(pr->hi_us));
    json_object_set_new(o, "interval_pct", json_real(100.0 * pr->interval_level));
    if (pr->source == TC_SOURCE_TRANSFERRED)
        json_object_set_new(o, "calibrated_on", json_string(pr->calib_gpu));
    if (explain) {
        snprintf(cluster, sizeof(cluster), "%dx%d", pr->cluster_m, pr->cluster_n);
        json_object_set_new(o, "kernel", json_string(pr->kernel));
        json_object_set_new(o, "tile_m", json_integer(pr->tile_m));
        json_object_set_new(o, "tile_n", json_integer(pr->tile_n));
        json_object_set_new(o, "tile_k", json_integer(pr->tile_k));
        json_object_set_new(o, "stages", json_integer(pr->stages));
        json_object_set_new(o, "warps", json_integer(pr->warps));
        json_object_set_new(o, "split_k", json_integer(pr->split_k));
        json_object_set_new(o, "cluster", json_string(cluster));
        json_object_set_new(o, "stream_k", json_boolean(pr->stream_k));
        json_object_set_new(o, "tiles", json_integer(pr->tiles));
        json_object_set_new(o, "waves", json_real(pr->waves));
        json_object_set_new(o, "wave_eff", json_real(pr->wave_eff));
        json_object_set_new(o, "tile_eff", json_real(pr->tile_eff));
        json_object_set_new(o, "blocks_per_sm", json_integer(pr->blocks_per_sm));
        json_object_set_new(o, "occupancy", json_real(pr->occupancy));
        json_object_set_new(o, "bound", json_string(tc_bound_name(pr->bound)));
        json_object_set_new(o, "align", json_string(tc_align_name(pr->align)));
        json_object_set_new(o, "compute_us", json_real(pr->compute_us));
        json_object_set_new(o, "memory_us", json_real(pr->memory_us));
        json_object_set_new(o, "overhead_us", json_real(pr->overhead_us));
    }
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(8) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(o);
}

static int print_single(const struct tc_gpu *gpu, const struct tc_gemm_query *q,
                        const struct tc_gemm_prediction *pr, bool explain, enum cli_format fmt,
                        const char *timing)
{
    static const char *const base_cols[] = {
        "gpu",     "dtype",  "layout",    "m",      "n",     "k",     "batch",
        "time_us", "tflops", "frac_peak", "source", "lo_us", "hi_us", "interval_pct"};
    static const bool base_num[] = {false, false, false, true,  true, true, true,
                                    true,  true,  true,  false, true, true, true};
    const int nbase = (int)(sizeof(base_cols) / sizeof(base_cols[0]));
    const char *headers[sizeof(base_cols) / sizeof(base_cols[0]) + N_EXPLAIN];
    bool numeric[sizeof(base_cols) / sizeof(base_cols[0]) + N_EXPLAIN];
    char vals[N_EXPLAIN][96];
    int ncols = nbase + (explain ? N_EXPLAIN : 0);
    struct cli_table *t;

    if (fmt == CLI_FORMAT_JSON) {
        print_json_single(gpu, q, pr, explain, timing);
        return CLI_EXIT_OK;
    }
    for (int c = 0; c < nbase; c++) {
        headers[c] = base_cols[c];
        numeric[c] = base_num[c];
    }
    for (int c = 0; c < N_EXPLAIN; c++) {
        headers[nbase + c] = explain_cols[c];
        numeric[nbase + c] = !(c == 0 || c == 7 || c == 8 || c == 15 || c == 16);
    }
    t = cli_table_new(ncols, headers, numeric);
    if (!t) {
        cli_error("predict", "out of memory");
        return CLI_EXIT_RUNTIME;
    }
    cli_table_addf(t, 0, "%s", gpu->id);
    cli_table_addf(t, 1, "%s", tc_dtype_name(q->dtype));
    cli_table_addf(t, 2, "%s", tc_layout_name(q->layout));
    cli_table_addf(t, 3, "%lld", (long long)q->m);
    cli_table_addf(t, 4, "%lld", (long long)q->n);
    cli_table_addf(t, 5, "%lld", (long long)q->k);
    cli_table_addf(t, 6, "%lld", (long long)(q->batch ? q->batch : 1));
    cli_table_addf(t, 7, "%.3f", pr->time_us);
    cli_table_addf(t, 8, "%.2f", pr->tflops);
    cli_table_addf(t, 9, "%.4f", pr->frac_peak);
    cli_table_addf(t, 10, "%s", gemm_source_label(pr->source));
    cli_table_addf(t, 11, "%.3f", pr->lo_us);
    cli_table_addf(t, 12, "%.3f", pr->hi_us);
    cli_table_addf(t, 13, "%.0f", 100.0 * pr->interval_level);
    if (explain) {
        explain_values(pr, vals);
        for (int c = 0; c < N_EXPLAIN; c++)
            cli_table_addf(t, nbase + c, "%s", vals[c]);
    }
    cli_table_end_row(t);
    if (fmt == CLI_FORMAT_TABLE) {
        /* One shape reads best as "field  value" lines. */
        printf("GEMM %lld x %lld x %lld (batch %lld), %s %s on %s\n", (long long)q->m,
               (long long)q->n, (long long)q->k, (long long)(q->batch ? q->batch : 1),
               tc_dtype_name(q->dtype), tc_layout_name(q->layout), gpu->id);
        printf("  %-14s %.3f\n", "time_us", pr->time_us);
        if (timing)
            printf("  %-14s %s, op %s\n", "timing", timing, tc_gemm_op_name(q->op));
        printf("  %-14s %.2f\n", "tflops", pr->tflops);
        printf("  %-14s %.1f%%\n", "of peak", 100.0 * pr->frac_peak);
        printf("  %-14s %s\n", "source", gemm_source_label(pr->source));
        if (pr->hi_us > pr->lo_us)
            printf("  %-14s %.3f .. %.3f us (%.0f%% interval)\n", "interval", pr->lo_us, pr->hi_us,
                   100.0 * pr->interval_level);
        /* without a neighbour the answer is the GPU's fit alone: a distance
         * of 0 would read as an exact match */
        if (pr->source == TC_SOURCE_CALIBRATED && pr->neighbours > 0)
            printf("  %-14s %d measured, mean log-shape distance %.3f\n", "neighbours",
                   pr->neighbours, pr->neighbour_dist);
        else if (pr->source == TC_SOURCE_CALIBRATED)
            printf("  %-14s none near enough: the GPU's fitted efficiencies alone\n", "neighbours");
        if (pr->source == TC_SOURCE_TRANSFERRED)
            printf("  %-14s %s\n", "calibrated on", pr->calib_gpu);
        if (explain) {
            printf("  %-14s %s (%dx%dx%d, %d stages, %d warps, cluster %dx%d%s)\n", "kernel",
                   pr->kernel, pr->tile_m, pr->tile_n, pr->tile_k, pr->stages, pr->warps,
                   pr->cluster_m, pr->cluster_n, pr->stream_k ? ", stream-K" : "");
            printf("  %-14s %d\n", "split_k", pr->split_k);
            printf("  %-14s %lld\n", "tiles", (long long)pr->tiles);
            printf("  %-14s %.3f (wave efficiency %.1f%%)\n", "waves", pr->waves,
                   100.0 * pr->wave_eff);
            printf("  %-14s %.1f%% of the tiles' area is useful\n", "tile_eff",
                   100.0 * pr->tile_eff);
            printf("  %-14s %d blocks/SM, %.1f%% of the warp slots\n", "occupancy",
                   pr->blocks_per_sm, 100.0 * pr->occupancy);
            printf("  %-14s %s\n", "bound", tc_bound_name(pr->bound));
            char line[256];

            explain_k_loop(gpu, q, pr, line, sizeof(line));
            printf("  %-14s %s\n", "k_loop", line);
            explain_alignment(q, pr, line, sizeof(line));
            printf("  %-14s %s\n", "alignment", line);
            printf("  %-14s compute %.3f us, memory %.3f us, overhead %.3f us\n", "parts",
                   pr->compute_us, pr->memory_us, pr->overhead_us);
        }
    } else {
        cli_table_print(t, stdout, fmt);
    }
    cli_table_free(t);
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* Batch mode                                                               */
/* ------------------------------------------------------------------------ */

struct stream_opts {
    const char *input;
    const char *output;
    const char *timing; /* --timing, NULL for kernel time */
    bool explain;
    bool keep_going;
};

/* One output row of the batch path, built in memory and written with one
 * call: a stdio call per field and per number cost as much as the parsing.
 * It grows to the longest row. */
struct row_buf {
    char *b;
    size_t len, cap;
};

/* Room for n more bytes; false when memory runs out. */
static bool row_room(struct row_buf *row, size_t n)
{
    size_t cap = row->cap ? row->cap : 256;
    char *b;

    if (row->cap - row->len >= n)
        return true;
    while (cap - row->len < n)
        cap *= 2;
    if (!(b = realloc(row->b, cap)))
        return false;
    row->b = b;
    row->cap = cap;
    return true;
}

static bool row_bytes(struct row_buf *row, const char *s, size_t n)
{
    if (!row_room(row, n))
        return false;
    memcpy(row->b + row->len, s, n);
    row->len += n;
    return true;
}

/* Field s and then sep, quoted as cli_csv_field() quotes it. */
static bool row_field(struct row_buf *row, const char *s, char sep)
{
    size_t n = 0;

    while (s[n] && s[n] != ',' && s[n] != '"' && s[n] != '\n' && s[n] != '\r')
        n++;
    if (!s[n]) {
        if (!row_room(row, n + 1))
            return false;
        memcpy(row->b + row->len, s, n);
        row->len += n;
    } else {
        if (!row_room(row, 2 * (n + strlen(s + n)) + 3))
            return false;
        row->b[row->len++] = '"';
        for (; *s; s++) {
            if (*s == '"')
                row->b[row->len++] = '"';
            row->b[row->len++] = *s;
        }
        row->b[row->len++] = '"';
    }
    row->b[row->len++] = sep;
    return true;
}

/* sep (unless 0), then x as printf's "%.4f" writes it (common/format.c) */
static bool row_fixed4(struct row_buf *row, char sep, double x)
{
    size_t n;

    if (!row_room(row, 65))
        return false;
    if (sep)
        row->b[row->len++] = sep;
    n = tc_format_fixed(row->b + row->len, 64, x, 4);
    if (n >= 64) { /* beyond 10^58: printf's digits, all of them */
        if (!row_room(row, n + 1))
            return false;
        n = tc_format_fixed(row->b + row->len, n + 1, x, 4);
    }
    row->len += n;
    return true;
}

/* An analytical prediction is kernel time whatever the predictor's timing
 * convention (only a calibration knows a host's cost): under a host-timed
 * --timing it takes the method's typical host cost and, for nn.Linear, its
 * longer path's, as `tilecast eval` adds them (tc_timing_host_cost), with
 * the range of hosts in the interval. */
static void add_typical_host(const char *timing, const struct tc_gemm_query *q,
                             struct tc_gemm_prediction *pr)
{
    struct tc_timing_cost cost;
    double extra, flops;

    if (!timing || pr->source != TC_SOURCE_ANALYTICAL || tc_timing_host_cost(timing, &cost) < 0 ||
        !(cost.typical_us > 0))
        return;
    extra = q->op == TC_GEMM_OP_LINEAR ? cost.linear_us : 0;
    flops = pr->tflops * pr->time_us;
    pr->time_us = fmax(pr->time_us + cost.typical_us + extra, cost.floor_us + extra);
    pr->lo_us = fmax(pr->lo_us + cost.lo_us + extra, cost.floor_us + extra);
    pr->hi_us = fmax(pr->hi_us + cost.hi_us + extra, pr->time_us);
    pr->frac_peak *= pr->tflops > 0 ? flops / pr->time_us / pr->tflops : 0;
    pr->tflops = flops / pr->time_us;
}

static int predict_stream(const struct tc_specs *specs, struct tc_predictor *p,
                          const struct gemm_defaults *def, const struct stream_opts *so,
                          const struct predictor_opts *po)
{
    struct cli_output output = {0};
    const char *inputs[1 + sizeof(po->dbs) / sizeof(po->dbs[0])];
    FILE *in = NULL, *out = NULL;
    struct tc_csv *csv = NULL;
    struct row_buf row = {0};
    struct gemm_columns cols;
    const struct tc_gpu *gpu = NULL;
    const char *in_name = strcmp(so->input, "-") == 0 ? "<stdin>" : so->input;
    char **fields;
    int nfields, header_n = 0, rc = CLI_EXIT_OK, r;
    long rows = 0, failed = 0;
    bool complete = false;
    char err[768];

    inputs[0] = so->input;
    for (int i = 0; i < po->n_dbs; i++)
        inputs[1 + i] = po->dbs[i];
    in = strcmp(so->input, "-") == 0 ? stdin : fopen(so->input, "r");
    if (!in) {
        cli_error("predict", "%s: cannot open: %s", so->input, strerror(errno));
        return CLI_EXIT_INPUT;
    }
    rc = cli_output_open("predict", &output, so->output, inputs, 1 + (size_t)po->n_dbs);
    if (rc != CLI_EXIT_OK)
        goto cleanup;
    out = output.f;
    if (!(csv = tc_csv_new(in, in_name))) {
        rc = cli_fail("predict", TC_ERR_NOMEM);
        goto cleanup;
    }
    r = tc_csv_next(csv, &nfields, &fields);
    if (r <= 0) {
        if (r == 0)
            cli_error("predict", "%s: empty input (expected a header with m, n, k)", in_name);
        else
            cli_fail("predict", r);
        rc = CLI_EXIT_INPUT;
        goto cleanup;
    }
    if (!gemm_columns_find("predict", in_name, tc_csv_line(csv), nfields, fields, &cols)) {
        rc = CLI_EXIT_INPUT;
        goto cleanup;
    }
    header_n = nfields;
    for (int c = 0; c < nfields; c++)
        cli_csv_field(out, fields[c], false);
    fputs("pred_time_us,pred_tflops,pred_source,pred_lo_us,pred_hi_us", out);
    /* An explanation column never shadows an input column of that name
     * (NeuSight's files carry the kernel cuBLAS ran as `kernel`). */
    if (so->explain)
        for (int c = 0; c < N_EXPLAIN; c++)
            fprintf(out, tc_csv_find(nfields, fields, explain_cols[c]) >= 0 ? ",pred_%s" : ",%s",
                    explain_cols[c]);
    if (so->keep_going)
        fputs(",pred_error", out);
    fputc('\n', out);

    /* zeroed once, outside the loop: a row's prediction overwrites it */
    struct tc_gemm_prediction pr = {0};

    while ((r = tc_csv_next(csv, &nfields, &fields)) > 0) {
        struct tc_gemm_query q;
        long line = tc_csv_line(csv);
        int e;

        rows++;
        if (nfields != header_n) {
            e = row_error(err, sizeof(err), in_name, line, 0, TC_ERR_PARSE,
                          "expected %d fields as in the header, got %d", header_n, nfields);
        } else if ((e = gemm_row_query(specs, &cols, def, in_name, line, fields, &gpu, &q, err,
                                       sizeof(err))) == TC_OK) {
            e = tc_predict_gemm(p, gpu, &q, &pr);
            if (e < 0)
                row_error(err, sizeof(err), in_name, line, gemm_error_column(&cols, e), e, "%s",
                          tc_last_error());
            else
                add_typical_host(so->timing, &q, &pr);
        }
        if (e < 0) {
            failed++;
            fprintf(stderr, "tilecast predict: error: %s\n", err);
            if (!so->keep_going) {
                rc = cli_exit_code(e);
                goto cleanup;
            }
            for (int c = 0; c < nfields; c++)
                cli_csv_field(out, fields[c], false);
            for (int c = nfields; c < header_n; c++)
                cli_csv_field(out, "", false);
            fputs(",,,,", out);
            if (so->explain)
                for (int c = 0; c < N_EXPLAIN; c++)
                    fputc(',', out);
            fputc(',', out);
            cli_csv_field(out, err, true);
            continue;
        }
        /* the interval of the prediction's source (80 %), so coverage can be
         * measured on any file */
        bool ok = true;
        const char *label = gemm_source_label(pr.source);

        row.len = 0;
        for (int c = 0; c < nfields; c++)
            ok = ok && row_field(&row, fields[c], ',');
        ok = ok && row_fixed4(&row, 0, pr.time_us) && row_fixed4(&row, ',', pr.tflops) &&
             row_bytes(&row, ",", 1) && row_bytes(&row, label, strlen(label)) &&
             row_fixed4(&row, ',', pr.lo_us) && row_fixed4(&row, ',', pr.hi_us);
        if (ok && so->explain) {
            char vals[N_EXPLAIN][96];

            explain_values(&pr, vals);
            for (int c = 0; c < N_EXPLAIN; c++)
                ok = ok && row_bytes(&row, ",", 1) && row_bytes(&row, vals[c], strlen(vals[c]));
        }
        if (ok && so->keep_going)
            ok = row_bytes(&row, ",", 1);
        ok = ok && row_bytes(&row, "\n", 1);
        if (!ok) {
            rc = cli_fail("predict", TC_ERR_NOMEM);
            goto cleanup;
        }
        fwrite_unlocked(row.b, 1, row.len, out);
    }
    if (r < 0) {
        rc = cli_fail("predict", r);
        goto cleanup;
    }
    /* with --keep-going the file is complete: its failed rows say why */
    complete = true;
    if (failed) {
        cli_error("predict", "%ld of %ld rows failed", failed, rows);
        rc = CLI_EXIT_INPUT;
    }

cleanup:
    free(row.b);
    tc_csv_free(csv);
    if (in && in != stdin)
        fclose(in);
    /* a run that failed leaves the file it would have replaced as it was */
    if (out) {
        int wrc = cli_output_close("predict", &output, complete);

        if (rc == CLI_EXIT_OK)
            rc = wrc;
    }
    return rc;
}

/* --gpu A,B or all: the shape on each GPU, one row per GPU, fastest first
 * (cli-gpus.h). */
static int compare_gemm(const char *cmd, const struct tc_specs *specs, struct tc_predictor *p,
                        const char *gpus, const struct tc_gemm_query *q, const char *timing,
                        enum cli_format fmt)
{
    static const char *const cols[] = {"time_us", "tflops"};
    static const int decimals[] = {2, 1};
    const struct tc_gpu **list = NULL;
    struct cli_cmp_row *rows = NULL;
    char title[160];
    size_t n = 0;
    int rc = cli_compare_rows(cmd, specs, gpus, &list, &rows, &n);

    for (size_t i = 0; rc == CLI_EXIT_OK && rows && i < n; i++) {
        struct tc_gemm_prediction pr;

        rows[i].gpu = list[i];
        if (tc_predict_gemm(p, list[i], q, &pr) < 0) {
            snprintf(rows[i].note, sizeof(rows[i].note), "%s", tc_last_error());
            continue;
        }
        add_typical_host(timing, q, &pr);
        rows[i].ok = true;
        rows[i].v[0] = pr.time_us;
        rows[i].v[1] = pr.tflops;
        snprintf(rows[i].source, sizeof(rows[i].source), "%s", tc_source_name(pr.source));
    }
    if (rc == CLI_EXIT_OK) {
        snprintf(title, sizeof(title), "GEMM %lldx%lldx%lld %s %s (batch %lld) by GPU",
                 (long long)q->m, (long long)q->n, (long long)q->k, tc_dtype_name(q->dtype),
                 tc_layout_name(q->layout), (long long)q->batch);
        rc = cli_compare_print(cmd, title, cols, decimals, 2, 0, false, rows, n, fmt);
    }
    free(rows);
    free(list);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* predict gemm                                                             */
/* ------------------------------------------------------------------------ */

int gemm_defaults_parse(const char *cmd, int argc, char **argv, int *i, bool shape,
                        struct gemm_defaults *d)
{
    const char *a = argv[*i], *v = NULL;

    if (cli_flag_value(argc, argv, i, "--gpu", &v)) {
        if (!v || !*v)
            goto missing;
        d->gpu_id = v;
    } else if (cli_flag_value(argc, argv, i, "--dtype", &v)) {
        if (!v)
            goto missing;
        if (tc_dtype_parse(v, &d->dtype) < 0) {
            cli_error(cmd, "--dtype: %s", tc_last_error());
            return -CLI_EXIT_INPUT;
        }
        d->have_dtype = true;
    } else if (shape && cli_flag_value(argc, argv, i, "--layout", &v)) {
        if (!v)
            goto missing;
        if (tc_layout_parse(v, &d->layout) < 0) {
            cli_error(cmd, "--layout: %s", tc_last_error());
            return -CLI_EXIT_INPUT;
        }
    } else if (shape && cli_flag_value(argc, argv, i, "--batch", &v)) {
        if (!cli_parse_int(cmd, "--batch", v, 1, INT64_MAX, &d->batch))
            return -cli_value_status(v);
    } else {
        return 0;
    }
    return 1;
missing:
    cli_error(cmd, "%s needs a value", a);
    return -CLI_EXIT_USAGE;
}

/* One of the positional M N K. Shapes are input: a bad one is an input
 * error (exit 2). */
static int gemm_dim(const char *cmd, const char *a, long long dims[3], int *ndims)
{
    static const char *const names[] = {"M", "N", "K"};

    if (*ndims >= 3) {
        cli_error(cmd, "too many arguments: '%s' (expected M N K)", a);
        return CLI_EXIT_USAGE;
    }
    if (!cli_parse_int(cmd, names[*ndims], a, 1, INT64_MAX, &dims[*ndims]))
        return CLI_EXIT_INPUT;
    (*ndims)++;
    return CLI_EXIT_OK;
}

static int cmd_predict_gemm(int argc, char **argv)
{
    const char *cmd = "predict gemm";
    struct gemm_defaults def = {.dtype = TC_DTYPE_FP16, .layout = TC_LAYOUT_NN, .batch = 1};
    struct stream_opts so = {0};
    struct predictor_opts po = {0};
    struct tc_gemm_query q = {0};
    enum cli_format fmt = CLI_FORMAT_TABLE;
    long long dims[3], ld[3] = {0, 0, 0};
    int ndims = 0, rc;
    bool opts_done = false;
    struct tc_specs *specs = NULL;
    struct tc_predictor *p = NULL;
    const char *timing = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int r;

        if (opts_done) {
            if ((rc = gemm_dim(cmd, a, dims, &ndims)) != CLI_EXIT_OK)
                return rc;
        } else if (strcmp(a, "--") == 0) {
            opts_done = true; /* what follows is M N K, even "-5" */
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(cmd_predict_help, stdout);
            return CLI_EXIT_OK;
        } else if (cli_parse_format(a, &fmt)) {
            continue;
        } else if (strcmp(a, "--explain") == 0) {
            so.explain = true;
        } else if (strcmp(a, "--keep-going") == 0) {
            so.keep_going = true;
        } else if ((r = predictor_opts_parse(cmd, argc, argv, &i, &po)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
        } else if ((r = gemm_defaults_parse(cmd, argc, argv, &i, true, &def)) != 0) {
            if (r < 0)
                return -r;
        } else if (cli_flag_value(argc, argv, &i, "--lda", &v)) {
            if (!cli_parse_int(cmd, "--lda", v, 1, INT64_MAX, &ld[0]))
                return cli_value_status(v);
        } else if (cli_flag_value(argc, argv, &i, "--ldb", &v)) {
            if (!cli_parse_int(cmd, "--ldb", v, 1, INT64_MAX, &ld[1]))
                return cli_value_status(v);
        } else if (cli_flag_value(argc, argv, &i, "--ldc", &v)) {
            if (!cli_parse_int(cmd, "--ldc", v, 1, INT64_MAX, &ld[2]))
                return cli_value_status(v);
        } else if (cli_flag_value(argc, argv, &i, "--timing", &v)) {
            if (!v || !*v)
                goto missing;
            if (!tc_timing_known(v)) {
                cli_error(cmd,
                          "--timing: unknown method '%s' (kernel, event, wall, wall-max, or a "
                          "measured data's tag such as event-fastest5-mean, wall-slowest, "
                          "profiler-median or cupti-median)",
                          v);
                return CLI_EXIT_INPUT;
            }
            timing = so.timing = v;
        } else if (cli_flag_value(argc, argv, &i, "--op", &v)) {
            if (!v || !*v)
                goto missing;
            if (tc_gemm_op_parse(v, &def.op) < 0) {
                cli_error(cmd, "--op: %s", tc_last_error());
                return CLI_EXIT_INPUT;
            }
        } else if (cli_flag_value(argc, argv, &i, "--input", &v)) {
            if (!v || !*v)
                goto missing;
            so.input = v;
        } else if (cli_flag_value(argc, argv, &i, "--output", &v)) {
            if (!v || !*v)
                goto missing;
            so.output = v;
        } else if (a[0] == '-' && a[1] != '\0' && !(a[1] >= '0' && a[1] <= '9')) {
            char hint[96];

            cli_error(cmd, "unknown option '%s'%s (see 'tilecast predict --help')", a,
                      cli_suggest_option(a, cmd_predict_gemm_help, hint, sizeof(hint)));
            return CLI_EXIT_USAGE;
        } else if ((rc = gemm_dim(cmd, a, dims, &ndims)) != CLI_EXIT_OK) {
            return rc;
        }
        continue;
    missing:
        cli_error(cmd, "%s needs a value", a);
        return CLI_EXIT_USAGE;
    }
    if (so.input && ndims) {
        cli_error(cmd, "give either M N K or --input FILE, not both");
        return CLI_EXIT_USAGE;
    }
    if (!so.input && ndims != 3) {
        cli_error(cmd, "expected M N K (or --input FILE); see 'tilecast predict --help'");
        return CLI_EXIT_USAGE;
    }
    if (so.input && fmt != CLI_FORMAT_TABLE) {
        cli_error(cmd, "--json/--csv apply to one shape; batch mode always writes CSV");
        return CLI_EXIT_USAGE;
    }
    if (!so.input && so.output) {
        cli_error(cmd, "--output only applies to --input");
        return CLI_EXIT_USAGE;
    }
    if (!so.input && so.keep_going) {
        cli_error(cmd, "--keep-going only applies to --input");
        return CLI_EXIT_USAGE;
    }
    if (!so.input && !def.gpu_id) {
        cli_error(cmd, "no GPU given (use --gpu ID; 'tilecast specs list' shows the ids)");
        return CLI_EXIT_USAGE;
    }
    if (!(specs = cli_load_specs(cmd)))
        return CLI_EXIT_INPUT;
    if (!(p = predictor_opts_make(cmd, specs, &po, &rc)))
        goto cleanup;
    if (timing && (rc = tc_predictor_set_timing(p, timing)) < 0) {
        rc = cli_fail(cmd, rc);
        goto cleanup;
    }
    if (so.input) {
        rc = predict_stream(specs, p, &def, &so, &po);
    } else if (cli_gpu_list_given(def.gpu_id)) {
        q.m = dims[0], q.n = dims[1], q.k = dims[2], q.batch = def.batch;
        q.dtype = def.dtype, q.layout = def.layout, q.op = def.op;
        q.lda = ld[0], q.ldb = ld[1], q.ldc = ld[2];
        rc = compare_gemm(cmd, specs, p, def.gpu_id, &q, timing, fmt);
    } else {
        const struct tc_gpu *gpu = cli_find_gpu(cmd, specs, def.gpu_id);
        struct tc_gemm_prediction pr;
        int err;

        if (!gpu) {
            rc = CLI_EXIT_INPUT;
            goto cleanup;
        }
        q.m = dims[0];
        q.n = dims[1];
        q.k = dims[2];
        q.batch = def.batch;
        q.dtype = def.dtype;
        q.layout = def.layout;
        q.op = def.op;
        q.lda = ld[0];
        q.ldb = ld[1];
        q.ldc = ld[2];
        err = tc_predict_gemm(p, gpu, &q, &pr);
        if (err < 0) {
            rc = cli_fail(cmd, err);
            goto cleanup;
        }
        add_typical_host(timing, &q, &pr);
        rc = print_single(gpu, &q, &pr, so.explain, fmt, timing);
        /* e.g. a database of another GPU, a stale calibration recomputed */
        fflush(stdout);
        if (tc_predictor_note(p) && *tc_predictor_note(p))
            fprintf(stderr, "tilecast %s: note: %s\n", cmd, tc_predictor_note(p));
    }

cleanup:
    tc_predictor_free(p);
    tc_specs_free(specs);
    return rc;
}

int cmd_predict(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(cmd_predict_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "gemm") == 0)
        return cmd_predict_gemm(argc - 1, argv + 1);
    if (strcmp(argv[1], "attention") == 0)
        return cmd_predict_attention(argc - 1, argv + 1);
    if (strcmp(argv[1], "layer") == 0)
        return cmd_predict_layer(argc - 1, argv + 1);
    if (strcmp(argv[1], "model") == 0)
        return cmd_predict_model(argc - 1, argv + 1);
    cli_error("predict", "unknown target '%s' (expected gemm, attention, layer or model)", argv[1]);
    return CLI_EXIT_USAGE;
}
