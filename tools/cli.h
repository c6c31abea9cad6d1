/* Shared helpers of the tilecast command: exit codes, errors, output
 * formats and the subcommand table. Every subcommand lives in cmd-*.c and
 * exports `int cmd_NAME(int argc, char **argv)` (argv[0] is the subcommand)
 * and `const char cmd_NAME_help[]` (its --help text, also the man page). */
#ifndef TC_CLI_H
#define TC_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "tilecast/tilecast.h"

/* Exit codes, documented in README and the man page. */
enum cli_exit {
    CLI_EXIT_OK = 0,
    CLI_EXIT_USAGE = 1,   /* wrong flags or arguments */
    CLI_EXIT_INPUT = 2,   /* bad input data: file, shape, database, value */
    CLI_EXIT_RUNTIME = 3, /* runtime, device or I/O failure */
};

/* --md: a GitHub-flavoured markdown table, as nvbench prints its results */
enum cli_format { CLI_FORMAT_TABLE = 0, CLI_FORMAT_JSON, CLI_FORMAT_CSV, CLI_FORMAT_MD };

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* Global options given before the subcommand (e.g. --specs-dir). */
struct cli_globals {
    const char *specs_dir; /* NULL: $TILECAST_SPECS_PATH, then the shipped specs */
};
extern struct cli_globals cli_globals;

/* Prints "tilecast CMD: error: ..." to stderr. */
void cli_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
/* Prints "tilecast CMD: error: <tc_last_error() or tc_strerror(err)>" and
 * returns the exit code for err (usage errors stay usage errors). */
int cli_fail(const char *cmd, int err);
/* Maps a negative enum tc_error to an exit code. */
int cli_exit_code(int err);

/* Whether the input file PATH named on the command line can be read; if
 * not, prints "PATH: cannot read: REASON" for cmd and returns false, and the
 * caller exits CLI_EXIT_INPUT. Commands check their inputs with it before
 * the work starts: the library reports an unreadable file as I/O (exit 3),
 * but a missing or unreadable input is the user's (exit 2), in every
 * command alike. "-" is a file name like any other (where "-" means
 * standard input, the command checks only other names). */
bool cli_input_readable(const char *cmd, const char *path);
/* The same for --config, which may also name a shipped model config. */
bool cli_config_readable(const char *cmd, const char *config);

/* A file a command writes (--output and the like). It is written through a
 * temporary file beside it, renamed over it only when the command succeeds,
 * so that a failed or interrupted run leaves what was there as it was and
 * no partial file; a symbolic link is followed (the file it names is
 * replaced, the link stays) and a replaced file keeps its mode. Standard
 * output ("-" or no name), devices, pipes and the file standard output
 * already goes to are written in place. */
struct cli_output {
    FILE *f;          /* where to write */
    const char *name; /* the name given, for messages ("<stdout>" for standard output) */
    char *tmp;        /* the temporary file; NULL when writing in place */
    char *target;     /* the file tmp replaces: name, or what its link names */
    bool replaces;    /* whether target existed */
};

/* Whether output, a file the command is about to write (a database too),
 * is another file than each of the n inputs ("-" is standard input; NULL
 * entries are skipped), compared by device and inode, so that a symbolic
 * or hard link to an input counts as that input; a database input's
 * write-ahead log and journal count as the input. If not, prints
 * "OUTPUT: is the input INPUT ..." for cmd and returns false, and the
 * caller exits CLI_EXIT_INPUT. A missing output is distinct from all. */
bool cli_output_distinct(const char *cmd, const char *output, const char *const *inputs, size_t n);
/* Checks output with cli_output_distinct, then opens it as described
 * above. Returns CLI_EXIT_OK, or the exit code after printing why not
 * (CLI_EXIT_INPUT for an output that is an input, CLI_EXIT_RUNTIME when it
 * cannot be created). NULL and "-" are standard output. */
int cli_output_open(const char *cmd, struct cli_output *o, const char *output,
                    const char *const *inputs, size_t n);
/* Finishes o. When ok, flushes it and puts the file in place, returning
 * CLI_EXIT_OK or, after printing the write error, CLI_EXIT_RUNTIME (the
 * old file is then kept). When not ok, removes the temporary file, says on
 * stderr that the output was not written (or left as it was) and returns
 * CLI_EXIT_OK. A caller that hands o->tmp to another program first
 * closes o->f and sets it to NULL. */
int cli_output_close(const char *cmd, struct cli_output *o, bool ok);

/* Loads specs from cli_globals.specs_dir / $TILECAST_SPECS_PATH / shipped.
 * On failure prints the error for cmd and returns NULL. */
struct tc_specs *cli_load_specs(const char *cmd);
/* Finds the GPU the user means (tc_specs_lookup: the id in any case, or a
 * unique prefix); prints an error with the candidates or the closest id
 * and every known id when there is none. Use gpu->id, never the name given,
 * for what is stored or compared. */
const struct tc_gpu *cli_find_gpu(const char *cmd, const struct tc_specs *specs, const char *id);
/* For an unknown option arg ("--dtpye" or "--dtpye=bf16"): "; did you mean
 * '--dtype'?" naming the option of help (the command's --help text, which
 * lists every option it takes) closest to it, or the one it is a prefix
 * of; "" when none is close. Written into buf, which is returned, so that
 * every command appends it to its own "unknown option" message. */
const char *cli_suggest_option(const char *arg, const char *help, char *buf, size_t len);

/* Parses --json / --csv style selection; returns true if arg was one. */
bool cli_parse_format(const char *arg, enum cli_format *fmt);

/* Strict integer argument parsing for flags: prints an error naming the flag
 * and returns false if value is not an integer within [min, max]. */
bool cli_parse_int(const char *cmd, const char *flag, const char *value, long long min,
                   long long max, long long *out);
bool cli_parse_double(const char *cmd, const char *flag, const char *value, double min, double max,
                      double *out);
/* The exit status after cli_parse_* (or a name parser) refused a flag's
 * value: a missing value is a usage error, a given but impossible one (not a
 * number, out of range, unknown name) an input error. */
int cli_value_status(const char *value);
/* Whether argv[*i] is the value flag `flag`, given as "--flag VALUE" or
 * "--flag=VALUE". If so, *value is the value (NULL when the flag ends argv:
 * a usage error for the caller) and *i moves past a separate value. */
bool cli_flag_value(int argc, char **argv, int *i, const char *flag, const char **value);

/* A table printed as aligned text, CSV or a JSON array of objects.
 * Cells are strings; columns declared numeric are emitted as JSON numbers. */
struct cli_table;
struct cli_table *cli_table_new(int ncols, const char *const *headers, const bool *numeric);
void cli_table_add(struct cli_table *t, ...); /* exactly ncols const char * */
void cli_table_addf(struct cli_table *t, int col, const char *fmt, ...) CLI_PRINTF(3, 4);
void cli_table_end_row(struct cli_table *t);
void cli_table_print(struct cli_table *t, FILE *out, enum cli_format fmt);
/* As CSV, with n_extra more columns whose values are the same on every row
 * (a whole-model step time beside its ops). */
void cli_table_print_csv_with(struct cli_table *t, FILE *out, int n_extra,
                              const char *const *extra_headers, const char *const *extra_values);
/* The rows as the JSON array cli_table_print writes (caller owns it), for
 * output that nests a table in an object. */
json_t *cli_table_json(const struct cli_table *t);
void cli_table_free(struct cli_table *t);

/* Text from files (a database's source field, a value quoted in an error)
 * may hold terminal escape sequences and bytes that are not UTF-8.
 * cli_fput_text writes s for a reader: control characters (C0, DEL, C1)
 * and invalid UTF-8 bytes as \xNN, tab and newline as \t and \n, the
 * rest as it is. cli_text_dup returns the same as a new string (NULL when
 * out of memory). cli_json_string makes a JSON string of s with each
 * invalid UTF-8 byte replaced by U+FFFD (jansson refuses such text: the
 * field would be lost); JSON escapes the control characters itself. */
void cli_fput_text(FILE *f, const char *s);
char *cli_text_dup(const char *s);
json_t *cli_json_string(const char *s);

/* Writes one CSV field with quoting as needed. */
void cli_csv_field(FILE *out, const char *s, bool last);

/* Whether stdout/stderr is a terminal (progress bars). */
bool cli_isatty(FILE *f);

#define CLI_COMMANDS(X)                                                                            \
    X(specs, "list, show and check GPU specs")                                                     \
    X(db, "inspect, check, import, export and merge databases")                                    \
    X(predict, "predict GEMM, attention, layer or model time")                                     \
    X(eval, "compare predictions with measured CSV data")                                          \
    X(collect, "measure shapes on a GPU or the host CPU into a database")                          \
    X(advise, "search nearby transformer shapes that run faster")                                  \
    X(plot, "draw throughput, layer breakdown and advisor charts")                                 \
    X(bench, "benchmark the predictor and the collector harness")

/* `tilecast predict attention|layer|model` (cmd-predict-model.c) and the
 * collector benchmark (`tilecast bench collector`, cmd-collect.c). */
int cmd_predict_attention(int argc, char **argv);
int cmd_predict_layer(int argc, char **argv);
int cmd_predict_model(int argc, char **argv);
int cmd_bench_collector(int argc, char **argv);
/* `tilecast db calibrate` and `tilecast bench calibrated` (cmd-calibrate.c). */
int cmd_db_calibrate(int argc, char **argv);
int cmd_bench_calibrated(int argc, char **argv);
extern const char cmd_db_calibrate_help[];
extern const char cmd_bench_calibrated_help[];
/* The --help texts of the other db subcommands (cmd-db.c). */
extern const char cmd_db_info_help[];
extern const char cmd_db_check_help[];
extern const char cmd_db_import_help[];
extern const char cmd_db_export_help[];
extern const char cmd_db_merge_help[];
extern const char cmd_db_migrate_help[];
extern const char cmd_db_compact_help[];
extern const char cmd_db_bench_help[];

#define CLI_DECLARE(name, summary)                                                                 \
    int cmd_##name(int argc, char **argv);                                                         \
    extern const char cmd_##name##_help[];
CLI_COMMANDS(CLI_DECLARE)
#undef CLI_DECLARE

#endif
