/* tilecast specs: list, show and check GPU spec files. */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define TC_ARRAY_SIZE_SPECS(a) (sizeof(a) / sizeof((a)[0]))

#define SPECS_LIST_HELP                                                                            \
    "Usage: tilecast specs list [--json | --csv]\n"                                                \
    "  One row per known GPU: id, name, arch, units (SMs or CUs), tensor and\n"                    \
    "  vector clocks (MHz), dense peak fp16/bf16/fp8 (TFLOP/s), memory bandwidth\n"                \
    "  (GB/s) and size (GB). '-' (null in JSON, empty in CSV) marks a dtype the\n"                 \
    "  GPU does not support.\n"

#define SPECS_SHOW_HELP                                                                            \
    "Usage: tilecast specs show ID [--json | --csv]\n"                                             \
    "  Every field of one GPU: identity, clocks, dense peaks and FLOP/clock per\n"                 \
    "  unit for each dtype, memory, L2, power, per-SM/CU occupancy limits, the\n"                  \
    "  file it came from, its sources and the flags that mark uncertain numbers.\n"                \
    "  An unknown ID exits with status 2 and lists the known ids.\n"

#define SPECS_CHECK_HELP                                                                           \
    "Usage: tilecast specs check FILE... [--json | --csv]\n"                                       \
    "  Parses each spec file and checks it for internal consistency (every peak\n"                 \
    "  within 2% of units x FLOP/clock x clock, the tensor clock for tf32, fp16,\n"                \
    "  bf16, fp8 and int8 and the vector clock for fp32 and fp64; occupancy\n"                     \
    "  limits positive and coherent; id equal to the file name; no id twice among\n"               \
    "  the files). Prints OK or the error, with file, line and column, per file.\n"                \
    "  Exits with status 2 if any file failed.\n"

const char cmd_specs_help[] =
    "Usage: tilecast specs list [--json | --csv]\n"
    "       tilecast specs show ID [--json | --csv]\n"
    "       tilecast specs check FILE... [--json | --csv]\n"
    "\n"
    "GPU specs are YAML files, one per GPU, named ID.yaml (gpu_specs/README.md\n"
    "documents the fields). They are read from the directories of\n"
    "$TILECAST_SPECS_PATH (colon-separated), then the shipped gpu_specs/, then\n"
    "the directories given with 'tilecast --specs-dir DIR specs ...'. An id\n"
    "defined twice is an error.\n"
    "\n" SPECS_LIST_HELP "\n" SPECS_SHOW_HELP "\n" SPECS_CHECK_HELP "\n"
    "Options:\n"
    "  --json        print JSON (list: an array of objects; show: one object;\n"
    "                check: an array of {file, id, status, error})\n"
    "  --csv         print CSV with a header line (list: the table; show: field,value\n"
    "                with plain values; check: file,id,status,error)\n"
    "  -h, --help    print this help\n"
    "\n"
    "Exit status: 0 success, 1 usage error, 2 bad spec file or unknown GPU id,\n"
    "3 runtime error.\n";

/* Shared argument scan: --help, the format flags a subcommand accepts, and
 * positional arguments. Returns -1 to continue, else an exit code. */
struct specs_args {
    enum cli_format fmt;
    int npos;
    char **pos;
};

static int parse_args(int argc, char **argv, const char *cmd, const char *help, bool allow_csv,
                      struct specs_args *a)
{
    bool opts_done = false;

    a->fmt = CLI_FORMAT_TABLE;
    a->npos = 0;
    a->pos = calloc((size_t)argc + 1, sizeof(char *));
    if (!a->pos) {
        cli_error(cmd, "out of memory");
        return CLI_EXIT_RUNTIME;
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        enum cli_format fmt;

        if (!opts_done && strcmp(arg, "--") == 0) {
            opts_done = true;
        } else if (!opts_done && (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)) {
            fputs(help, stdout);
            return CLI_EXIT_OK;
        } else if (!opts_done && arg[0] == '-' && arg[1] && cli_parse_format(arg, &fmt)) {
            if (fmt == CLI_FORMAT_CSV && !allow_csv) {
                cli_error(cmd, "--csv is not supported here (use --json)");
                return CLI_EXIT_USAGE;
            }
            a->fmt = fmt;
        } else if (!opts_done && arg[0] == '-' && arg[1]) {
            char hint[96];

            cli_error(cmd, "unknown option '%s'%s (see 'tilecast %s --help')", arg,
                      cli_suggest_option(arg, cmd_specs_help, hint, sizeof(hint)), cmd);
            return CLI_EXIT_USAGE;
        } else {
            a->pos[a->npos++] = argv[i];
        }
    }
    return -1;
}

/* Formats a peak for a table cell: '-' in tables, empty (JSON null) otherwise. */
static void add_peak(struct cli_table *t, int col, double v, enum cli_format fmt)
{
    if (v > 0)
        cli_table_addf(t, col, "%g", v);
    else
        cli_table_addf(t, col, "%s", fmt == CLI_FORMAT_TABLE ? "-" : "");
}

static int specs_list(int argc, char **argv)
{
    static const char *const headers[] = {
        "id",          "name",        "arch",       "units",       "tensor_mhz", "vector_mhz",
        "fp16_tflops", "bf16_tflops", "fp8_tflops", "mem_bw_gbps", "mem_gb",
    };
    static const bool numeric[] = {false, false, false, true, true, true,
                                   true,  true,  true,  true, true};
    struct specs_args a;
    struct tc_specs *specs = NULL;
    struct cli_table *t = NULL;
    int rc = parse_args(argc, argv, "specs list", SPECS_LIST_HELP, true, &a);

    if (rc >= 0)
        goto cleanup;
    if (a.npos) {
        cli_error("specs list", "unexpected argument '%s'", a.pos[0]);
        rc = CLI_EXIT_USAGE;
        goto cleanup;
    }
    specs = cli_load_specs("specs list");
    if (!specs) {
        rc = CLI_EXIT_INPUT;
        goto cleanup;
    }
    t = cli_table_new((int)TC_ARRAY_SIZE_SPECS(headers), headers, numeric);
    if (!t) {
        cli_error("specs list", "out of memory");
        rc = CLI_EXIT_RUNTIME;
        goto cleanup;
    }
    for (size_t i = 0; i < tc_specs_count(specs); i++) {
        const struct tc_gpu *g = tc_specs_at(specs, i);

        cli_table_addf(t, 0, "%s", g->id);
        cli_table_addf(t, 1, "%s", g->name);
        cli_table_addf(t, 2, "%s", tc_arch_name(g->arch));
        cli_table_addf(t, 3, "%d", g->units);
        cli_table_addf(t, 4, "%g", g->clock_tensor_mhz);
        cli_table_addf(t, 5, "%g", g->clock_vector_mhz);
        add_peak(t, 6, g->peak_tflops[TC_DTYPE_FP16], a.fmt);
        add_peak(t, 7, g->peak_tflops[TC_DTYPE_BF16], a.fmt);
        add_peak(t, 8, g->peak_tflops[TC_DTYPE_FP8], a.fmt);
        cli_table_addf(t, 9, "%g", g->mem_bw_gbps);
        cli_table_addf(t, 10, "%g", g->mem_gb);
        cli_table_end_row(t);
    }
    cli_table_print(t, stdout, a.fmt);
    rc = CLI_EXIT_OK;
cleanup:
    cli_table_free(t);
    tc_specs_free(specs);
    free(a.pos);
    return rc;
}

struct limit_row {
    const char *name;
    long long value;
};

/* The occupancy limits in the order of the struct, for show's two outputs. */
static size_t gpu_limits(const struct tc_gpu *g, struct limit_row *rows)
{
    size_t n = 0;

#define LIMIT(field) rows[n++] = (struct limit_row){#field, (long long)g->field}
    LIMIT(warp_size);
    LIMIT(max_threads_per_sm);
    LIMIT(max_warps_per_sm);
    LIMIT(max_blocks_per_sm);
    LIMIT(max_threads_per_block);
    LIMIT(regs_per_sm);
    LIMIT(max_regs_per_block);
    LIMIT(max_regs_per_thread);
    LIMIT(reg_alloc_unit);
    LIMIT(smem_per_sm_bytes);
    LIMIT(smem_per_block_max_bytes);
    LIMIT(reserved_smem_per_block_bytes);
    LIMIT(smem_alloc_unit_bytes);
#undef LIMIT
    return n;
}

#define MAX_LIMITS 16

/* Splits a separated list ("a,b" or "x; y") into a JSON array. */
static json_t *split_json(const char *list, const char *sep)
{
    json_t *arr = json_array();
    const char *p = list;
    size_t seplen = strlen(sep);

    while (arr && *p) {
        const char *end = strstr(p, sep);
        size_t n = end ? (size_t)(end - p) : strlen(p);

        json_array_append_new(arr, json_stringn(p, n));
        p += n;
        if (end)
            p += seplen;
    }
    return arr;
}

static int show_json(const struct tc_gpu *g, const char *file)
{
    json_t *o = json_object(), *peaks = json_object(), *flops = json_object();
    json_t *limits = json_object();
    struct limit_row rows[MAX_LIMITS];
    size_t nrows = gpu_limits(g, rows);

    if (!o || !peaks || !flops || !limits) {
        json_decref(o);
        json_decref(peaks);
        json_decref(flops);
        json_decref(limits);
        cli_error("specs show", "out of memory");
        return CLI_EXIT_RUNTIME;
    }
    json_object_set_new(o, "id", json_string(g->id));
    json_object_set_new(o, "name", json_string(g->name));
    json_object_set_new(o, "vendor", json_string(g->vendor == TC_VENDOR_AMD ? "amd" : "nvidia"));
    json_object_set_new(o, "arch", json_string(tc_arch_name(g->arch)));
    json_object_set_new(o, "compute_capability", json_string(g->compute_capability));
    json_object_set_new(o, "units", json_integer(g->units));
    json_object_set_new(o, "clock_tensor_mhz", json_real(g->clock_tensor_mhz));
    json_object_set_new(o, "clock_vector_mhz", json_real(g->clock_vector_mhz));
    json_object_set_new(o, "clock_base_mhz",
                        g->clock_base_mhz > 0 ? json_real(g->clock_base_mhz) : json_null());
    json_object_set_new(o, "clock_vector_sustained_mhz",
                        g->clock_vector_sustained_mhz > 0 ? json_real(g->clock_vector_sustained_mhz)
                                                          : json_null());
    for (int d = 0; d < TC_DTYPE_COUNT; d++) {
        const char *name = tc_dtype_name((enum tc_dtype)d);

        json_object_set_new(peaks, name,
                            g->peak_tflops[d] > 0 ? json_real(g->peak_tflops[d]) : json_null());
        json_object_set_new(flops, name,
                            g->flops_per_clk_per_unit[d] > 0
                                ? json_real(g->flops_per_clk_per_unit[d])
                                : json_null());
    }
    json_object_set_new(o, "peak_tflops", peaks);
    json_object_set_new(o, "flops_per_clk_per_unit", flops);
    json_object_set_new(o, "mem_bw_gbps", json_real(g->mem_bw_gbps));
    json_object_set_new(o, "mem_gb", json_real(g->mem_gb));
    json_object_set_new(o, "l2_bytes", json_integer(g->l2_bytes));
    json_object_set_new(o, "tdp_w", json_real(g->tdp_w));
    for (size_t i = 0; i < nrows; i++)
        json_object_set_new(limits, rows[i].name, json_integer(rows[i].value));
    json_object_set_new(o, "limits", limits);
    if (g->interconnect.link != TC_LINK_UNKNOWN) {
        json_t *ic = json_object();

        if (!ic) {
            json_decref(o);
            cli_error("specs show", "out of memory");
            return CLI_EXIT_RUNTIME;
        }
        json_object_set_new(ic, "link", json_string(tc_link_name(g->interconnect.link)));
        json_object_set_new(ic, "generation", json_integer(g->interconnect.generation));
        json_object_set_new(ic, "links", json_integer(g->interconnect.links));
        json_object_set_new(ic, "bw_gbps", json_real(g->interconnect.bw_gbps));
        json_object_set_new(ic, "switched", json_boolean(g->interconnect.switched));
        json_object_set_new(ic, "pcie_gen", json_integer(g->interconnect.pcie_gen));
        json_object_set_new(o, "interconnect", ic);
    } else {
        json_object_set_new(o, "interconnect", json_null());
    }
    json_object_set_new(o, "sources", split_json(g->sources, ","));
    json_object_set_new(o, "flags", split_json(g->flags, "; "));
    json_object_set_new(o, "file", file ? json_string(file) : json_null());
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(o);
    return CLI_EXIT_OK;
}

/* The field/value table of one GPU; fmt CLI_FORMAT_CSV leaves out the
 * explanations (units, the peak's derivation) so that each value parses. */
static void show_table(const struct tc_gpu *g, const char *file, enum cli_format fmt)
{
    bool plain = fmt == CLI_FORMAT_CSV;

    static const char *const headers[] = {"field", "value"};
    struct cli_table *t = cli_table_new(2, headers, NULL);
    struct limit_row rows[MAX_LIMITS];
    size_t nrows = gpu_limits(g, rows);

    if (!t) {
        cli_error("specs show", "out of memory");
        return;
    }
#define ROW(label, ...)                                                                            \
    do {                                                                                           \
        cli_table_addf(t, 0, "%s", label);                                                         \
        cli_table_addf(t, 1, __VA_ARGS__);                                                         \
        cli_table_end_row(t);                                                                      \
    } while (0)
    ROW("id", "%s", g->id);
    ROW("name", "%s", g->name);
    ROW("vendor", "%s", g->vendor == TC_VENDOR_AMD ? "amd" : "nvidia");
    ROW("arch", "%s", tc_arch_name(g->arch));
    ROW("compute_capability", "%s", g->compute_capability);
    if (plain)
        ROW("units", "%d", g->units);
    else
        ROW("units", "%d %s", g->units, g->vendor == TC_VENDOR_AMD ? "CUs" : "SMs");
    ROW("clock_tensor_mhz", "%g", g->clock_tensor_mhz);
    ROW("clock_vector_mhz", "%g", g->clock_vector_mhz);
    if (g->clock_base_mhz > 0)
        ROW("clock_base_mhz", "%g", g->clock_base_mhz);
    else
        ROW("clock_base_mhz", "%s", plain ? "" : "unknown");
    /* the clock a power-limited board holds under a full FFMA load */
    if (g->clock_vector_sustained_mhz > 0)
        ROW("clock_vector_sustained_mhz", "%g", g->clock_vector_sustained_mhz);
    else
        ROW("clock_vector_sustained_mhz", "%s", plain ? "" : "not given (clock_vector_mhz)");
    for (int d = 0; d < TC_DTYPE_COUNT; d++) {
        char label[64];
        double clock_mhz =
            d == TC_DTYPE_FP64 || d == TC_DTYPE_FP32 ? g->clock_vector_mhz : g->clock_tensor_mhz;

        snprintf(label, sizeof(label), "peak_tflops.%s", tc_dtype_name((enum tc_dtype)d));
        if (g->peak_tflops[d] > 0 && plain)
            ROW(label, "%g", g->peak_tflops[d]);
        else if (g->peak_tflops[d] > 0)
            ROW(label, "%g  (%d x %g FLOP/clk x %g MHz = %.2f)", g->peak_tflops[d], g->units,
                g->flops_per_clk_per_unit[d], clock_mhz,
                g->units * g->flops_per_clk_per_unit[d] * clock_mhz * 1e-6);
        else
            ROW(label, "%s", plain ? "" : "not supported");
    }
    ROW("mem_bw_gbps", "%g", g->mem_bw_gbps);
    ROW("mem_gb", "%g", g->mem_gb);
    if (plain)
        ROW("l2_bytes", "%lld", (long long)g->l2_bytes);
    else
        ROW("l2_bytes", "%lld  (%.1f MiB)", (long long)g->l2_bytes,
            (double)g->l2_bytes / 1048576.0);
    ROW("tdp_w", "%g", g->tdp_w);
    for (size_t i = 0; i < nrows; i++) {
        char label[80];

        snprintf(label, sizeof(label), "limits.%s", rows[i].name);
        ROW(label, "%lld", rows[i].value);
    }
    if (g->interconnect.link != TC_LINK_UNKNOWN) {
        const struct tc_interconnect *ic = &g->interconnect;

        ROW("interconnect.link", "%s", tc_link_name(ic->link));
        ROW("interconnect.generation", "%d", ic->generation);
        ROW("interconnect.links", "%d", ic->links);
        if (plain)
            ROW("interconnect.bw_gbps", "%g", ic->bw_gbps);
        else
            ROW("interconnect.bw_gbps", "%g  (per direction)", ic->bw_gbps);
        ROW("interconnect.switched", "%s", ic->switched ? "true" : "false");
        ROW("interconnect.pcie_gen", "%d", ic->pcie_gen);
    } else {
        ROW("interconnect", "%s", plain ? "" : "unknown (one GPU only)");
    }
    ROW("file", "%s", file ? file : "");
    ROW("sources", "%s", g->sources);
    if (!g->flags[0]) {
        ROW("flags", "%s", plain ? "" : "none");
    } else {
        const char *p = g->flags;
        int n = 0;

        while (*p) {
            const char *end = strstr(p, "; ");
            int len = end ? (int)(end - p) : (int)strlen(p);
            char label[32];

            snprintf(label, sizeof(label), "flags[%d]", n++);
            ROW(label, "%.*s", len, p);
            p += len;
            if (end)
                p += 2;
        }
    }
#undef ROW
    cli_table_print(t, stdout, fmt);
    cli_table_free(t);
}

static int specs_show(int argc, char **argv)
{
    struct specs_args a;
    struct tc_specs *specs = NULL;
    const struct tc_gpu *gpu;
    int rc = parse_args(argc, argv, "specs show", SPECS_SHOW_HELP, true, &a);

    if (rc >= 0)
        goto cleanup;
    if (a.npos != 1) {
        if (a.npos)
            cli_error("specs show", "give exactly one GPU id, not %d", a.npos);
        else
            cli_error("specs show", "no GPU id given (see 'tilecast specs list')");
        rc = CLI_EXIT_USAGE;
        goto cleanup;
    }
    specs = cli_load_specs("specs show");
    if (!specs) {
        rc = CLI_EXIT_INPUT;
        goto cleanup;
    }
    gpu = cli_find_gpu("specs show", specs, a.pos[0]);
    if (!gpu) {
        rc = CLI_EXIT_INPUT;
        goto cleanup;
    }
    if (a.fmt == CLI_FORMAT_JSON) {
        rc = show_json(gpu, tc_specs_file(specs, gpu->id));
    } else {
        show_table(gpu, tc_specs_file(specs, gpu->id), a.fmt);
        rc = CLI_EXIT_OK;
    }
cleanup:
    tc_specs_free(specs);
    free(a.pos);
    return rc;
}

static int specs_check(int argc, char **argv)
{
    static const char *const headers[] = {"file", "id", "status", "error"};
    struct specs_args a;
    struct tc_gpu *gpus = NULL;
    char **errors = NULL; /* errors[i]: message for file i, NULL if it passed */
    struct cli_table *t = NULL;
    int failed = 0;
    int rc = parse_args(argc, argv, "specs check", SPECS_CHECK_HELP, true, &a);

    if (rc >= 0)
        goto cleanup;
    if (!a.npos) {
        cli_error("specs check", "no spec file given (see 'tilecast specs check --help')");
        rc = CLI_EXIT_USAGE;
        goto cleanup;
    }
    gpus = calloc((size_t)a.npos, sizeof(*gpus));
    errors = calloc((size_t)a.npos, sizeof(*errors));
    t = cli_table_new(4, headers, NULL);
    if (!gpus || !errors || !t) {
        cli_error("specs check", "out of memory");
        rc = CLI_EXIT_RUNTIME;
        goto cleanup;
    }
    for (int i = 0; i < a.npos; i++) {
        const char *file = a.pos[i];
        char msg[3072] = "";
        int err = tc_specs_parse_file(file, &gpus[i]);

        if (err < 0) {
            snprintf(msg, sizeof(msg), "%s", tc_last_error());
        } else if ((err = tc_gpu_check(&gpus[i])) < 0) {
            /* tc_gpu_check names the GPU, not the file. */
            snprintf(msg, sizeof(msg), "%s: %s", file, tc_last_error());
        } else {
            for (int j = 0; j < i; j++) {
                if (!errors[j] && strcmp(gpus[j].id, gpus[i].id) == 0) {
                    snprintf(msg, sizeof(msg), "%s: duplicate id '%s' (already defined in %s)",
                             file, gpus[i].id, a.pos[j]);
                    err = TC_ERR_INVALID;
                    break;
                }
            }
        }
        if (err < 0) {
            errors[i] = strdup(msg);
            if (!errors[i]) {
                cli_error("specs check", "out of memory");
                rc = CLI_EXIT_RUNTIME;
                goto cleanup;
            }
            failed++;
        }
        cli_table_add(t, file, gpus[i].id, err < 0 ? "error" : "OK", err < 0 ? msg : "");
    }
    /* One line per file reads better than a table whose error column is as
     * wide as the longest message; errors go to stderr in every format. */
    if (a.fmt != CLI_FORMAT_TABLE)
        cli_table_print(t, stdout, a.fmt);
    for (int i = 0; i < a.npos; i++) {
        if (errors[i])
            fprintf(stderr, "tilecast specs check: error: %s\n", errors[i]);
        else if (a.fmt == CLI_FORMAT_TABLE)
            printf("%s: OK (%s)\n", a.pos[i], gpus[i].id);
    }
    if (failed && a.fmt == CLI_FORMAT_TABLE)
        fprintf(stderr, "tilecast specs check: %d of %d file%s failed\n", failed, a.npos,
                a.npos == 1 ? "" : "s");
    rc = failed ? CLI_EXIT_INPUT : CLI_EXIT_OK;
cleanup:
    for (int i = 0; errors && i < a.npos; i++)
        free(errors[i]);
    free(errors);
    cli_table_free(t);
    free(gpus);
    free(a.pos);
    return rc;
}

int cmd_specs(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : NULL;

    if (!sub) {
        fputs(cmd_specs_help, stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0 || strcmp(sub, "help") == 0) {
        fputs(cmd_specs_help, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(sub, "list") == 0)
        return specs_list(argc - 1, argv + 1);
    if (strcmp(sub, "show") == 0)
        return specs_show(argc - 1, argv + 1);
    if (strcmp(sub, "check") == 0)
        return specs_check(argc - 1, argv + 1);
    cli_error("specs", "unknown subcommand '%s' (expected list, show or check)", sub);
    return CLI_EXIT_USAGE;
}
