/* tilecast db: inspect, check, import, export and merge databases. */
#include "config.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "tc-internal.h"

/* The overview of `tilecast db --help`; each subcommand's own --help text
 * follows it here (db calibrate's is in cmd-calibrate.c). tilecast.c puts
 * them all in the man page and the bash completion. */
/* The schema version as text, from the number the library writes, so the
 * help never names an old one. */
#define SCHEMA_TEXT_(v) #v
#define SCHEMA_TEXT(v) SCHEMA_TEXT_(v)
#define SCHEMA "v" SCHEMA_TEXT(TC_DB_SCHEMA_VERSION)
const char cmd_db_help[] =
    "Usage: tilecast db info DB [--json|--csv]\n"
    "       tilecast db check DB\n"
    "       tilecast db import --format csv|cookbook|mamf FILE... [--gpu ID] --into DB\n"
    "                          [--dtype DTYPE] [--timing TAG] [--source TEXT]\n"
    "                          [--licence TEXT] [--skip-untimed]\n"
    "       tilecast db export DB [--format csv|json] [--gpu ID] [--output FILE]\n"
    "       tilecast db merge OUT IN...\n"
    "       tilecast db calibrate DB [--gpu ID] [--dtype DTYPE] [--dry-run] [--json|--csv]\n"
    "       tilecast db migrate DB\n"
    "       tilecast db compact DB\n"
    "       tilecast db bench [--rows N] [--batch N]\n"
    "\n"
    /* (a line of its own, or clang-format joins it to the one before) */
    "A tilecast database is an SQLite file (schema " SCHEMA "): GPU spec snapshots, runs\n"
    "with their provenance, and GEMM and attention measurements. Files with a\n"
    "newer schema, other SQLite files and damaged files are refused and left\n"
    "untouched.\n"
    "\n"
    "Subcommands:\n"
    "  info       schema version, GPUs, runs with provenance and row counts\n"
    "  check      integrity checks; exit 0 if clean, 2 otherwise\n"
    "  import     read measurements made by other tools (CSV, cookbook and mamf logs)\n"
    "  export     write the ok GEMM rows as CSV or JSON\n"
    "  merge      merge databases (e.g. shards) into one\n"
    "  calibrate  fit the analytical model to the rows and store the calibration\n"
    "  migrate    upgrade an older schema to the current one\n"
    "  compact    prepare a file for shipping\n"
    "  bench      insert throughput of batched GEMM rows\n"
    "\n"
    "Run 'tilecast db SUBCOMMAND --help' for its options and an example.\n"
    "\n"
    "Options:\n"
    "  -h, --help     print this help\n"
    "\n"
    "Exit status: 0 success, 1 usage error, 2 bad input (file, refused or unclean\n"
    "database, malformed line: the message names file:line:column), 3 runtime error.\n";

const char cmd_db_info_help[] =
    "Usage: tilecast db info DB [--json|--csv]\n"
    "\n"
    "Prints DB's schema version, the tilecast version that wrote it and when it\n"
    "was created, its GPUs, its runs with their provenance (backend, timing\n"
    "method, source, licence, ...), the row counts by GPU, kind\n"
    "(collected/imported), dtype and status, and the number of calibrations\n"
    "stored. DB is opened read-only.\n"
    "\n"
    "Options:\n"
    "  --json         print the same as one JSON object (default: text)\n"
    "  --csv          print the row counts as CSV (gpu,table,kind,dtype,status,rows)\n"
    "  -h, --help     print this help\n"
    "\n"
    "Example:\n"
    "  tilecast db info db/prebuilt/h100-sxm5-80gb.db --json\n"
    "\n"
    "Exit status: 0 ok; 1 usage; 2 DB missing, refused or damaged; 3 runtime.\n";

const char cmd_db_check_help[] =
    "Usage: tilecast db check DB\n"
    "\n"
    "Runs SQLite's integrity_check and foreign_key_check and tilecast's own\n"
    "checks on DB (opened read-only) and prints 'DB: ok' if all pass.\n"
    "\n"
    "Options:\n"
    "  -h, --help     print this help\n"
    "\n"
    "Example:\n"
    "  tilecast db check shard-3.db\n"
    "\n"
    "Exit status: 0 clean; 1 usage; 2 DB missing, refused, damaged or unclean;\n"
    "3 runtime.\n";

const char cmd_db_import_help[] =
    "Usage: tilecast db import --format csv|cookbook|mamf|cudnn-frontend FILE...\n"
    "                          [--gpu ID] --into DB\n"
    "                          [--dtype DTYPE] [--timing TAG] [--source TEXT]\n"
    "                          [--licence TEXT] [--skip-untimed]\n"
    "\n"
    "Reads measurements made by other tools into DB (created if missing), all\n"
    "files in one transaction: on any error the database is left exactly as it\n"
    "was. Rows are marked imported and keep their source, timing method and\n"
    "licence.\n"
    "\n"
    "Options:\n"
    "  --format F     (required) csv: the shared measured-data CSV (gpu,dtype,op,\n"
    "                   batch,m,n,k,layout,time_us,tflops,timing,source,...; time_us\n"
    "                   in microseconds, checked against tflops when both are given);\n"
    "                   a header with impl and pass (and no m) holds attention rows\n"
    "                   (attention_fused.csv): gpu, dtype, impl, pass, batch, heads,\n"
    "                   kv_heads, seq_q, seq_kv, head_dim, causal, time_us, tflops,\n"
    "                   timing, source, and optionally head_dim_vo, mask, window,\n"
    "                   deterministic, page_size (keys per page of a paged KV cache;\n"
    "                   empty or 0: contiguous) and kv_cache_dtype (the cache's\n"
    "                   dtype, the attention's or narrower; empty: the attention's)\n"
    "                 cudnn-frontend: the result CSVs of the cuDNN frontend's\n"
    "                   benchmark/attention_training (backend, data_type, attn_mask,\n"
    "                   batch_size, q_seqlen, ..., time_ms, gpu_name): backends\n"
    "                   cudnn, cudnn_oss, flash_attention (flash2), flash_attention_3\n"
    "                   and _4 (flash3, flash4), pyt_cudnn, pyt_flash_attention;\n"
    "                   the GPU from gpu_name (or --gpu); timing cupti-median (its\n"
    "                   profiler kernel times); cases it reports failed or\n"
    "                   unsupported are skipped and counted; a top-left causal mask\n"
    "                   on q_seqlen != kv_seqlen and mxfp8 are refused. Its\n"
    "                   benchmark/attention_inference results (q_tokens, kv_len,\n"
    "                   kv_cache_dtype, ...): cudnn, cudnn_oss and flash_attention_4\n"
    "                   rows, contiguous caches (page_size is the config's, used\n"
    "                   by the paged backends only); an fp8_e4m3 cache on cuDNN as\n"
    "                   the fp8 attention it runs; a generation of several tokens\n"
    "                   causal (bottom right); a square prefill's mask from its\n"
    "                   tflops; flashinfer, b12x, flash_mla, mla_absorbed and\n"
    "                   chunked-prefill rows are skipped and counted\n"
    "                 cookbook: EleutherAI cookbook sizing logs, lines\n"
    "                   'Throughput (in TFLOP/s) for MxNxK: X' and 'BxMxNxK: X';\n"
    "                   their n is the reduction dimension (stored as k)\n"
    "                 mamf: mamf-finder.py logs (per-shape lines or the summary)\n"
    "  --into DB      (required) the database to write\n"
    "  --gpu ID       the GPU the logs were measured on (required for cookbook and\n"
    "                 mamf; for cudnn-frontend, instead of each row's gpu_name); for\n"
    "                 csv, import only the rows of this GPU\n"
    "  --dtype DTYPE  input dtype of cookbook and mamf logs (default: fp16 for\n"
    "                 cookbook, the log's '** Dtype:' line for mamf); csv rows\n"
    "                 name their own\n"
    "  --timing TAG   timing method, overriding the file's (defaults: the csv's\n"
    "                 timing column; cookbook wall-avg-incl-launch for mm,\n"
    "                 wall-slowest for bmm; mamf event-median-l2flush (kernel\n"
    "                 time) or event-min (launch gap included) by log generation)\n"
    "  --source TEXT  where the data came from (default: the file's own source\n"
    "                 column, or the file name)\n"
    "  --licence TEXT licence of the data (default: the csv's licence column, else\n"
    "                 known for the public sources)\n"
    "  --skip-untimed csv: skip rows without time_us and tflops (such as tuning\n"
    "                 efficiency tables) instead of failing; they are counted\n"
    "  -h, --help     print this help\n"
    "\n"
    "Examples:\n"
    "  tilecast db import --format csv vidur_gemm.csv --into measured.db\n"
    "  tilecast db import --format cookbook --gpu a100-sxm4-40gb mm.log bmm.log \\\n"
    "      --into a100.db\n"
    "\n"
    "Exit status: 0 ok; 1 usage; 2 a FILE missing or malformed (the message names\n"
    "file:line:column), unknown GPU or refused DB; 3 runtime.\n";

const char cmd_db_export_help[] =
    "Usage: tilecast db export DB [--format csv|json] [--gpu ID] [--output FILE]\n"
    "\n"
    "Writes the ok GEMM rows of DB (opened read-only).\n"
    "\n"
    "Options:\n"
    "  --format F         csv (default): the shared measured-data format, so that\n"
    "                     export and import round-trip; json: GPUs, runs, GEMM and\n"
    "                     attention rows\n"
    "  --gpu ID           only this GPU (default: all)\n"
    "  -o, --output FILE  write to FILE (default, or '-': standard output); FILE\n"
    "                     is replaced only when the export succeeds\n"
    "  -h, --help         print this help\n"
    "\n"
    "Example:\n"
    "  tilecast db export a100.db --gpu a100-sxm4-40gb --output a100.csv\n"
    "\n"
    "Exit status: 0 ok; 1 usage; 2 DB missing, refused or damaged, unknown GPU,\n"
    "or FILE is DB; 3 runtime (FILE cannot be written).\n";

const char cmd_db_merge_help[] =
    "Usage: tilecast db merge OUT IN...\n"
    "\n"
    "Merges databases (e.g. the shards of a collection) into OUT, which is created\n"
    "if missing and must not be one of the inputs. Runs with the same provenance\n"
    "are joined and their identical shapes stored once; runs whose provenance\n"
    "differs are kept apart. The inputs are merged and checked in a temporary\n"
    "file first; an existing OUT is then merged into in one transaction under its\n"
    "own write lock, so that OUT may be in use meanwhile (a collector writing it,\n"
    "another merge: they take turns) and a failed merge leaves it as it was.\n"
    "\n"
    "Options:\n"
    "  -h, --help     print this help\n"
    "\n"
    "Example:\n"
    "  tilecast db merge h100.db shard-*.db\n"
    "\n"
    "Exit status: 0 ok; 1 usage; 2 an IN missing, refused or damaged, or OUT is\n"
    "also an input; 3 runtime.\n";

const char cmd_db_migrate_help[] =
    "Usage: tilecast db migrate DB\n"
    "\n"
    "Upgrades DB from an older schema to the current one (v1), in place.\n"
    "\n"
    "Options:\n"
    "  -h, --help     print this help\n"
    "\n"
    "Example:\n"
    "  tilecast db migrate old.db\n"
    "\n"
    "Exit status: 0 ok; 1 usage; 2 DB missing, refused or damaged; 3 runtime.\n";

const char cmd_db_compact_help[] =
    "Usage: tilecast db compact DB\n"
    "\n"
    "Prepares DB for shipping, in place: rollback journal (so that it can be read\n"
    "from a read-only directory), ANALYZE, VACUUM.\n"
    "\n"
    "Options:\n"
    "  -h, --help     print this help\n"
    "\n"
    "Example:\n"
    "  tilecast db compact db/prebuilt/h100-sxm5-80gb.db\n"
    "\n"
    "Exit status: 0 ok; 1 usage; 2 DB missing, refused or damaged; 3 runtime.\n";

const char cmd_db_bench_help[] =
    "Usage: tilecast db bench [--rows N] [--batch N]\n"
    "\n"
    "Times the insert path the collector uses: synthetic GEMM rows inserted in\n"
    "batches into a temporary file (in $TMPDIR, else /tmp; deleted afterwards).\n"
    "Prints rows/s, wall-clock and CPU (the target is at least 100,000).\n"
    "\n"
    "Options:\n"
    "  --rows N       rows to insert (default 200000)\n"
    "  --batch N      rows per transaction (default 10000)\n"
    "  -h, --help     print this help\n"
    "\n"
    "Example:\n"
    "  tilecast db bench --rows 1000000 --batch 50000\n"
    "\n"
    "Exit status: 0 ok; 1 usage; 2 bad N; 3 runtime.\n";

static const char *const db_cmd = "db";
/* The subcommand being run, so that a usage error points at its own help. */
static const char *db_sub;

static bool is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/* Fetches the value of a flag, reporting a usage error if it is missing. */
static bool flag_value(int argc, char **argv, int *i, const char **out)
{
    if (*i + 1 >= argc) {
        cli_error(db_cmd, "%s needs a value", argv[*i]);
        return false;
    }
    *out = argv[++*i];
    return true;
}

static int usage(const char *fmt, ...) CLI_PRINTF(1, 2);

static int usage(const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cli_error(db_cmd, "%s", msg);
    if (db_sub)
        fprintf(stderr, "Run 'tilecast db %s --help' for usage.\n", db_sub);
    else
        fprintf(stderr, "Run 'tilecast db --help' for usage.\n");
    return CLI_EXIT_USAGE;
}

/* An unknown option of `db SUB`, with the closest one its help lists. */
static int unknown_arg(const char *sub, const char *word, const char *arg, const char *help)
{
    char hint[96];

    return usage("db %s: unknown %s '%s'%s", sub, word, arg,
                 cli_suggest_option(arg, help, hint, sizeof(hint)));
}

/* ------------------------------------------------------------------------ */

static json_t *info_json(const struct tc_db_info *info)
{
    json_t *root = json_object(), *gpus = json_array(), *runs = json_array(),
           *counts = json_array();

    json_object_set_new(root, "schema_version", json_integer(info->schema_version));
    json_object_set_new(root, "writer_version", cli_json_string(info->writer_version));
    json_object_set_new(root, "created_at", cli_json_string(info->created_at));
    for (size_t i = 0; i < info->n_gpus; i++) {
        json_t *g = json_object();

        json_object_set_new(g, "id", cli_json_string(info->gpus[i].id));
        json_object_set_new(g, "name", cli_json_string(info->gpus[i].name));
        json_object_set_new(g, "arch", cli_json_string(info->gpus[i].arch));
        json_array_append_new(gpus, g);
    }
    for (size_t i = 0; i < info->n_runs; i++) {
        const struct tc_db_info_run *r = &info->runs[i];
        json_t *o = json_object();

        json_object_set_new(o, "id", json_integer(r->id));
        json_object_set_new(o, "gpu", cli_json_string(r->gpu_id));
        json_object_set_new(o, "kind", cli_json_string(r->kind));
        for (int f = 0; f < TC_DB_RUN_FIELDS; f++)
            json_object_set_new(o, tc_db_run_field_name(f),
                                r->fields[f][0] ? cli_json_string(r->fields[f]) : json_null());
        json_object_set_new(o, "gemm_rows", json_integer(r->gemm_rows));
        json_object_set_new(o, "attention_rows", json_integer(r->attention_rows));
        json_array_append_new(runs, o);
    }
    for (size_t i = 0; i < info->n_counts; i++) {
        const struct tc_db_info_count *c = &info->counts[i];
        json_t *o = json_object();

        json_object_set_new(o, "gpu", cli_json_string(c->gpu_id));
        json_object_set_new(o, "table", cli_json_string(c->table));
        json_object_set_new(o, "kind", cli_json_string(c->kind));
        json_object_set_new(o, "dtype", cli_json_string(c->dtype));
        json_object_set_new(o, "status", cli_json_string(c->status));
        json_object_set_new(o, "rows", json_integer(c->rows));
        json_array_append_new(counts, o);
    }
    json_object_set_new(root, "gpus", gpus);
    json_object_set_new(root, "runs", runs);
    json_object_set_new(root, "counts", counts);
    json_object_set_new(root, "calibrations", json_integer((json_int_t)info->n_calibrations));
    return root;
}

static struct cli_table *counts_table(const struct tc_db_info *info);

static void run_field(const char *name, const char *value)
{
    printf("      %-10s ", name);
    cli_fput_text(stdout, value);
    fputc('\n', stdout);
}

static void info_text(const char *path, const struct tc_db_info *info)
{
    static const int shown[] = {6, 11, 12, 13, 16}; /* backend, timing, source, licence, started */
    struct cli_table *t;

    /* every string here comes from the file: escaped (cli_fput_text), so
     * that an imported source cannot drive the terminal */
    cli_fput_text(stdout, path);
    printf(": tilecast database, schema v%d (written by tilecast ", info->schema_version);
    cli_fput_text(stdout, info->writer_version[0] ? info->writer_version : "?");
    fputs(", created ", stdout);
    cli_fput_text(stdout, info->created_at[0] ? info->created_at : "?");
    fputs(")\n", stdout);
    printf("\nGPUs (%zu):\n", info->n_gpus);
    for (size_t i = 0; i < info->n_gpus; i++) {
        char *id = cli_text_dup(info->gpus[i].id);

        printf("  %-18s ", id ? id : "?");
        free(id);
        cli_fput_text(stdout, info->gpus[i].name);
        fputs(" (", stdout);
        cli_fput_text(stdout, info->gpus[i].arch);
        fputs(")\n", stdout);
    }
    printf("\nRuns (%zu):\n", info->n_runs);
    for (size_t i = 0; i < info->n_runs; i++) {
        const struct tc_db_info_run *r = &info->runs[i];

        printf("  run %lld: ", (long long)r->id);
        cli_fput_text(stdout, r->gpu_id);
        fputs(", ", stdout);
        cli_fput_text(stdout, r->kind);
        printf(", %lld GEMM and %lld attention rows\n", (long long)r->gemm_rows,
               (long long)r->attention_rows);
        for (size_t s = 0; s < sizeof(shown) / sizeof(shown[0]); s++)
            if (r->fields[shown[s]][0])
                run_field(tc_db_run_field_name(shown[s]), r->fields[shown[s]]);
        for (int f = 0; f < TC_DB_RUN_FIELDS; f++) {
            bool already = false;

            for (size_t s = 0; s < sizeof(shown) / sizeof(shown[0]); s++)
                already |= shown[s] == f;
            if (!already && r->fields[f][0])
                run_field(tc_db_run_field_name(f), r->fields[f]);
        }
    }
    printf("\nRows by GPU, kind, dtype and status:\n");
    t = counts_table(info);
    if (!t)
        return;
    cli_table_print(t, stdout, CLI_FORMAT_TABLE);
    cli_table_free(t);
    printf("\nCalibrations stored: %zu\n", info->n_calibrations);
}

/* The row counts (by GPU, table, kind, dtype and status): the table of
 * `db info`, and all of its --csv. NULL when out of memory. */
static struct cli_table *counts_table(const struct tc_db_info *info)
{
    static const char *const count_headers[] = {"gpu", "table", "kind", "dtype", "status", "rows"};
    static const bool count_numeric[] = {false, false, false, false, false, true};
    struct cli_table *t = cli_table_new(6, count_headers, count_numeric);

    if (!t)
        return NULL;
    for (size_t i = 0; i < info->n_counts; i++) {
        const struct tc_db_info_count *c = &info->counts[i];

        cli_table_addf(t, 0, "%s", c->gpu_id);
        cli_table_addf(t, 1, "%s", c->table);
        cli_table_addf(t, 2, "%s", c->kind);
        cli_table_addf(t, 3, "%s", c->dtype);
        cli_table_addf(t, 4, "%s", c->status);
        cli_table_addf(t, 5, "%lld", (long long)c->rows);
        cli_table_end_row(t);
    }
    return t;
}

static int db_info(int argc, char **argv)
{
    const char *path = NULL;
    enum cli_format fmt = CLI_FORMAT_TABLE;
    struct tc_db *db;
    struct tc_db_info *info = NULL;
    int err, code = CLI_EXIT_OK;

    for (int i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            fputs(cmd_db_info_help, stdout);
            return CLI_EXIT_OK;
        } else if (cli_parse_format(argv[i], &fmt)) {
            continue;
        } else if (argv[i][0] == '-') {
            return unknown_arg("info", "option", argv[i], cmd_db_info_help);
        } else if (!path) {
            path = argv[i];
        } else {
            return usage("db info: unexpected argument '%s'", argv[i]);
        }
    }
    if (!path)
        return usage("db info: which database?");
    if (!cli_input_readable(db_cmd, path))
        return CLI_EXIT_INPUT;
    err = tc_db_open(path, TC_DB_READONLY, &db);
    if (err < 0)
        return cli_fail(db_cmd, err);
    err = tc_db_info_get(db, &info);
    if (err < 0) {
        tc_db_close(db);
        return cli_fail(db_cmd, err);
    }
    if (fmt == CLI_FORMAT_JSON) {
        json_t *root = info_json(info);

        json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(root);
    } else if (fmt == CLI_FORMAT_CSV) {
        struct cli_table *t = counts_table(info);

        if (t)
            cli_table_print(t, stdout, CLI_FORMAT_CSV);
        else
            code = cli_fail(db_cmd, TC_ERR_NOMEM);
        cli_table_free(t);
    } else {
        info_text(path, info);
    }
    tc_db_info_free(info);
    tc_db_close(db);
    return code;
}

static int db_check(int argc, char **argv)
{
    const char *path = NULL;
    struct tc_db *db;
    int err;

    for (int i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            fputs(cmd_db_check_help, stdout);
            return CLI_EXIT_OK;
        } else if (argv[i][0] == '-') {
            return unknown_arg("check", "option", argv[i], cmd_db_check_help);
        } else if (!path) {
            path = argv[i];
        } else {
            return usage("db check: unexpected argument '%s' (one database)", argv[i]);
        }
    }
    if (!path)
        return usage("db check: which database?");
    if (!cli_input_readable(db_cmd, path))
        return CLI_EXIT_INPUT;
    err = tc_db_open(path, TC_DB_READONLY, &db);
    if (err < 0) {
        cli_error(db_cmd, "%s", tc_last_error());
        return CLI_EXIT_INPUT;
    }
    err = tc_db_integrity_check(db);
    tc_db_close(db);
    if (err < 0) {
        cli_error(db_cmd, "%s", tc_last_error());
        return CLI_EXIT_INPUT;
    }
    printf("%s: ok (schema v%d)\n", path, TC_DB_SCHEMA_VERSION);
    return CLI_EXIT_OK;
}

static int db_import(int argc, char **argv)
{
    struct tc_import_options opt = {0};
    struct tc_import_stats stats;
    const char *format = NULL, *into = NULL;
    const char **files = calloc((size_t)argc, sizeof(*files));
    struct tc_specs *specs = NULL;
    struct tc_db *db = NULL;
    size_t n_files = 0;
    bool existed;
    int ret = CLI_EXIT_OK, err;

    if (!files)
        return cli_fail(db_cmd, TC_ERR_NOMEM);
    for (int i = 1; i < argc; i++) {
        const char **slot = NULL;

        if (is_help(argv[i])) {
            fputs(cmd_db_import_help, stdout);
            goto out;
        } else if (strcmp(argv[i], "--format") == 0) {
            slot = &format;
        } else if (strcmp(argv[i], "--into") == 0) {
            slot = &into;
        } else if (strcmp(argv[i], "--gpu") == 0) {
            slot = &opt.gpu_id;
        } else if (strcmp(argv[i], "--dtype") == 0) {
            slot = &opt.dtype;
        } else if (strcmp(argv[i], "--timing") == 0) {
            slot = &opt.timing;
        } else if (strcmp(argv[i], "--source") == 0) {
            slot = &opt.source;
        } else if (strcmp(argv[i], "--licence") == 0 || strcmp(argv[i], "--license") == 0) {
            slot = &opt.licence;
        } else if (strcmp(argv[i], "--skip-untimed") == 0) {
            opt.skip_untimed = true;
            continue;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            ret = unknown_arg("import", "option", argv[i], cmd_db_import_help);
            goto out;
        } else {
            files[n_files++] = argv[i];
            continue;
        }
        if (!flag_value(argc, argv, &i, slot)) {
            ret = CLI_EXIT_USAGE;
            goto out;
        }
    }
    if (!format || !into || !n_files) {
        ret = usage("db import: needs --format, --into and at least one file");
        goto out;
    }
    if (strcmp(format, "csv") != 0 && strcmp(format, "cookbook") != 0 &&
        strcmp(format, "mamf") != 0 && strcmp(format, "cudnn-frontend") != 0) {
        ret = usage("db import: unknown format '%s' (expected csv, cookbook, mamf or "
                    "cudnn-frontend)",
                    format);
        goto out;
    }
    if (strcmp(format, "csv") != 0 && strcmp(format, "cudnn-frontend") != 0 && !opt.gpu_id) {
        ret = usage("db import: %s logs do not name the GPU: give --gpu ID", format);
        goto out;
    }
    /* a data label, free-form, but one a calibration reads: say what a tag
     * of no known method's form will count as */
    if (opt.timing && !tc_timing_known(opt.timing))
        fprintf(stderr,
                "tilecast db import: note: timing '%s' has no known method's form "
                "(event-*, wall-*, profiler-*, cupti-*, ...): its rows count as kernel time\n",
                opt.timing);
    for (size_t i = 0; i < n_files; i++) {
        if (!cli_input_readable(db_cmd, files[i])) {
            ret = CLI_EXIT_INPUT;
            goto out;
        }
    }
    if (!cli_output_distinct(db_cmd, into, files, n_files)) {
        ret = CLI_EXIT_INPUT;
        goto out;
    }
    specs = cli_load_specs(db_cmd);
    if (!specs) {
        ret = CLI_EXIT_INPUT;
        goto out;
    }
    if (opt.gpu_id) {
        const struct tc_gpu *g = cli_find_gpu(db_cmd, specs, opt.gpu_id);

        if (!g) {
            ret = CLI_EXIT_INPUT;
            goto out;
        }
        opt.gpu_id = g->id; /* "H100-SXM5-80GB" is stored as its id */
    }
    opt.specs = specs;
    existed = access(into, F_OK) == 0;
    err = tc_db_open(into, TC_DB_CREATE, &db);
    if (err < 0) {
        ret = cli_fail(db_cmd, err);
        goto out;
    }
    err = tc_db_import(db, format, n_files, files, &opt, &stats);
    if (err < 0) {
        cli_error(db_cmd, "%s", tc_last_error());
        ret = cli_exit_code(err);
        tc_db_close(db);
        db = NULL;
        if (existed) {
            fprintf(stderr, "tilecast db: nothing was imported; %s is unchanged\n", into);
        } else {
            /* the file was made for this import: leave nothing behind */
            char side[4096];

            unlink(into);
            snprintf(side, sizeof(side), "%s-wal", into);
            unlink(side);
            snprintf(side, sizeof(side), "%s-shm", into);
            unlink(side);
            fprintf(stderr, "tilecast db: nothing was imported; %s was not created\n", into);
        }
        goto out;
    }
    printf("imported %lld rows into %s (%lld new runs", (long long)stats.rows, into,
           (long long)stats.runs);
    if (stats.duplicates)
        printf("; %lld rows repeated a shape already stored in the same run, first kept",
               (long long)stats.duplicates);
    if (stats.skipped_gpu)
        printf("; %lld rows of other GPUs skipped", (long long)stats.skipped_gpu);
    if (stats.skipped_untimed)
        printf("; %lld rows without a time skipped", (long long)stats.skipped_untimed);
    if (stats.skipped_failed)
        printf("; %lld cases the source reports failed or unsupported skipped",
               (long long)stats.skipped_failed);
    if (stats.skipped_unmodelled)
        printf("; %lld rows of kernels or layouts tilecast does not model skipped",
               (long long)stats.skipped_unmodelled);
    printf(")\n");
out:
    tc_db_close(db);
    tc_specs_free(specs);
    free(files);
    return ret;
}

static int db_export(int argc, char **argv)
{
    const char *path = NULL, *format = NULL, *gpu = NULL, *output = NULL;
    struct tc_specs *specs = NULL;
    const struct tc_gpu *g;
    struct cli_output out;
    struct tc_db *db;
    int64_t rows = 0;
    int err, rc;

    for (int i = 1; i < argc; i++) {
        const char **slot = NULL;

        if (is_help(argv[i])) {
            fputs(cmd_db_export_help, stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--format") == 0) {
            slot = &format;
        } else if (strcmp(argv[i], "--gpu") == 0) {
            slot = &gpu;
        } else if (strcmp(argv[i], "--output") == 0 || strcmp(argv[i], "-o") == 0) {
            slot = &output;
        } else if (argv[i][0] == '-') {
            return unknown_arg("export", "option", argv[i], cmd_db_export_help);
        } else if (!path) {
            path = argv[i];
            continue;
        } else {
            return usage("db export: unexpected argument '%s'", argv[i]);
        }
        if (!flag_value(argc, argv, &i, slot))
            return CLI_EXIT_USAGE;
    }
    if (!path)
        return usage("db export: which database?");
    if (!format)
        format = "csv";
    if (strcmp(format, "csv") != 0 && strcmp(format, "json") != 0)
        return usage("db export: unknown format '%s' (expected csv or json)", format);
    if (!cli_input_readable(db_cmd, path))
        return CLI_EXIT_INPUT;
    err = tc_db_open(path, TC_DB_READONLY, &db);
    if (err < 0)
        return cli_fail(db_cmd, err);
    /* the GPU as --gpu takes it elsewhere; a database may also hold GPUs
     * that no spec describes, and those are matched as given */
    if (gpu && tc_specs_load(NULL, &specs) == TC_OK && (g = tc_specs_lookup(specs, gpu)))
        gpu = g->id;
    rc = cli_output_open(db_cmd, &out, output, &path, 1);
    if (rc != CLI_EXIT_OK) {
        tc_db_close(db);
        tc_specs_free(specs);
        return rc;
    }
    err = tc_db_export_stream(db, format, gpu, out.f, out.name, &rows);
    tc_specs_free(specs);
    tc_db_close(db);
    if (err < 0) {
        rc = cli_fail(db_cmd, err);
        cli_output_close(db_cmd, &out, false);
        return rc;
    }
    rc = cli_output_close(db_cmd, &out, true);
    if (rc == CLI_EXIT_OK && output && strcmp(output, "-") != 0)
        printf("exported %lld rows to %s\n", (long long)rows, output);
    return rc;
}

static int db_merge(int argc, char **argv)
{
    struct tc_merge_stats stats;
    int err;

    for (int i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            fputs(cmd_db_merge_help, stdout);
            return CLI_EXIT_OK;
        }
        if (argv[i][0] == '-')
            return unknown_arg("merge", "option", argv[i], cmd_db_merge_help);
    }
    if (argc < 3)
        return usage("db merge: expected OUT and at least one input");
    for (int i = 2; i < argc; i++)
        if (!cli_input_readable(db_cmd, argv[i]))
            return CLI_EXIT_INPUT;
    if (!cli_output_distinct(db_cmd, argv[1], (const char *const *)argv + 2, (size_t)argc - 2))
        return CLI_EXIT_INPUT;
    err = tc_db_merge(argv[1], (size_t)argc - 2, (const char *const *)argv + 2, &stats);
    if (err < 0) {
        cli_error(db_cmd, "%s", tc_last_error());
        return err == TC_ERR_INVALID ? CLI_EXIT_USAGE : cli_exit_code(err);
    }
    printf("merged %d files into %s: %lld runs added, %lld joined; %lld GEMM rows added, "
           "%lld duplicates dropped; %lld attention rows added, %lld duplicates dropped; "
           "%lld calibrations added; integrity check ok\n",
           argc - 2, argv[1], (long long)stats.runs_added, (long long)stats.runs_joined,
           (long long)stats.gemm_added, (long long)stats.gemm_duplicates,
           (long long)stats.attention_added, (long long)stats.attention_duplicates,
           (long long)stats.calibrations_added);
    return CLI_EXIT_OK;
}

static int db_migrate_or_compact(int argc, char **argv, bool compact)
{
    struct tc_db *db;
    int err = TC_OK;

    for (int i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            fputs(compact ? cmd_db_compact_help : cmd_db_migrate_help, stdout);
            return CLI_EXIT_OK;
        }
    }
    if (argc != 2 || argv[1][0] == '-')
        return usage("db %s: expected one database", argv[0]);
    if (!cli_input_readable(db_cmd, argv[1]))
        return CLI_EXIT_INPUT;
    err = tc_db_open(argv[1], TC_DB_READWRITE, &db);
    if (err < 0)
        return cli_fail(db_cmd, err);
    if (compact)
        err = tc_db_compact(db);
    tc_db_close(db);
    if (err < 0)
        return cli_fail(db_cmd, err);
    printf("%s: schema v%d%s\n", argv[1], TC_DB_SCHEMA_VERSION, compact ? ", compacted" : "");
    return CLI_EXIT_OK;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Times the insert path the collector uses. The rows are synthetic and the
 * file is deleted afterwards: nothing here is a measurement. */
static int db_bench(int argc, char **argv)
{
    long long rows = 200000, batch = 10000;
    struct tc_gpu gpu = {0};
    struct tc_run_info run = {.gpu_id = "bench",
                              .kind = "collected",
                              .backend = "bench",
                              .source = "synthetic rows of tilecast db bench"};
    struct tc_gemm_row row = {0};
    char path[] = "/tmp/tilecast-db-bench-XXXXXX";
    const char *tmpdir = getenv("TMPDIR");
    char pathbuf[4096];
    struct tc_db *db;
    int64_t run_id = 0;
    double t0, t1;
    clock_t cpu0, cpu1;
    int fd, err = TC_OK;

    for (int i = 1; i < argc; i++) {
        const char *v;

        if (is_help(argv[i])) {
            fputs(cmd_db_bench_help, stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--rows") == 0) {
            if (!flag_value(argc, argv, &i, &v))
                return CLI_EXIT_USAGE;
            if (!cli_parse_int(db_cmd, "--rows", v, 1, 100000000, &rows))
                return CLI_EXIT_INPUT;
        } else if (strcmp(argv[i], "--batch") == 0) {
            if (!flag_value(argc, argv, &i, &v))
                return CLI_EXIT_USAGE;
            if (!cli_parse_int(db_cmd, "--batch", v, 1, 100000000, &batch))
                return CLI_EXIT_INPUT;
        } else {
            return unknown_arg("bench", "argument", argv[i], cmd_db_bench_help);
        }
    }
    snprintf(pathbuf, sizeof(pathbuf), "%s/tilecast-db-bench-XXXXXX",
             tmpdir && *tmpdir ? tmpdir : "/tmp");
    fd = mkstemp(pathbuf);
    if (fd < 0) {
        fd = mkstemp(path);
        snprintf(pathbuf, sizeof(pathbuf), "%s", path);
    }
    if (fd < 0) {
        cli_error(db_cmd, "cannot create a temporary file");
        return CLI_EXIT_RUNTIME;
    }
    close(fd);
    unlink(pathbuf); /* tc_db_open creates it; an empty file would be refused */
    err = tc_db_open(pathbuf, TC_DB_CREATE, &db);
    if (err < 0)
        return cli_fail(db_cmd, err);
    snprintf(gpu.id, sizeof(gpu.id), "bench");
    snprintf(gpu.name, sizeof(gpu.name), "insert benchmark placeholder");
    err = tc_db_put_gpu(db, &gpu);
    if (err == TC_OK)
        err = tc_db_add_run(db, &run, &run_id);
    row.run_id = run_id;
    row.dtype = row.dtype_c = TC_DTYPE_BF16;
    row.compute = TC_DTYPE_FP32;
    row.layout = TC_LAYOUT_NT;
    row.batch = 1;
    row.reps = 10;
    t0 = now_s();
    cpu0 = clock();
    for (long long i = 0; i < rows && err == TC_OK; i++) {
        if (i % batch == 0)
            err = tc_db_begin(db);
        row.m = 64 + i % 4096;
        row.n = 64 + (i / 4096) % 4096;
        row.k = 64 + i / (4096LL * 4096LL);
        row.time_us = 1.0 + (double)(i % 1000);
        row.min_us = row.time_us;
        if (err == TC_OK)
            err = tc_db_insert_gemm(db, &row);
        if (err == TC_OK && (i % batch == batch - 1 || i == rows - 1))
            err = tc_db_commit(db);
    }
    t1 = now_s();
    cpu1 = clock();
    if (err < 0) {
        cli_fail(db_cmd, err);
        tc_db_close(db);
        unlink(pathbuf);
        return CLI_EXIT_RUNTIME;
    }
    tc_db_close(db);
    /* CPU time too: on a loaded machine the wall clock measures the others */
    printf("db insert: %lld GEMM rows in batches of %lld: %.3f s wall, %.0f rows/s "
           "(target >= 100000); %.3f s CPU, %.0f rows per CPU second\n",
           rows, batch, t1 - t0, (double)rows / (t1 - t0), (double)(cpu1 - cpu0) / CLOCKS_PER_SEC,
           (double)rows / ((double)(cpu1 - cpu0) / CLOCKS_PER_SEC));
    unlink(pathbuf);
    return CLI_EXIT_OK;
}

int cmd_db(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } subs[] = {
        {"info", db_info},
        {"check", db_check},
        {"import", db_import},
        {"export", db_export},
        {"merge", db_merge},
        {"bench", db_bench},
        {"calibrate", cmd_db_calibrate},
    };

    if (argc < 2) {
        fputs(cmd_db_help, stderr);
        return CLI_EXIT_USAGE;
    }
    if (is_help(argv[1])) {
        fputs(cmd_db_help, stdout);
        return CLI_EXIT_OK;
    }
    db_sub = argv[1];
    if (strcmp(argv[1], "migrate") == 0)
        return db_migrate_or_compact(argc - 1, argv + 1, false);
    if (strcmp(argv[1], "compact") == 0)
        return db_migrate_or_compact(argc - 1, argv + 1, true);
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
        if (strcmp(argv[1], subs[i].name) == 0)
            return subs[i].fn(argc - 1, argv + 1);
    db_sub = NULL;
    return usage("unknown subcommand 'db %s' (see 'tilecast db --help')", argv[1]);
}
