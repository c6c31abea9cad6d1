/* The tilecast command: global options, then a git-style subcommand. */
#include "config.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eval-cli.h"
#include "model-cli.h"
#include "tc-internal.h"

#define TC_ARRAY_SIZE_CLI(a) (sizeof(a) / sizeof((a)[0]))

struct command {
    const char *name;
    const char *summary;
    int (*fn)(int argc, char **argv);
    const char *help;
};

#define CLI_ENTRY(name, summary) {#name, summary, cmd_##name, cmd_##name##_help},
static const struct command commands[] = {CLI_COMMANDS(CLI_ENTRY)};
#undef CLI_ENTRY

static const char usage_head[] =
    "Usage: tilecast [--specs-dir DIR] COMMAND [ARGS...]\n"
    "       tilecast --version | --help | help COMMAND | completion bash\n"
    "\n"
    "tilecast predicts how fast GEMMs, attention, transformer layers and whole\n"
    "models run on a GPU, from measurements where it has them and an analytical\n"
    "model where it does not. Model output is always labelled as a prediction.\n"
    "\n"
    "Global options:\n"
    "  --specs-dir DIR   also load GPU specs (*.yaml) from DIR (colon-separated\n"
    "                    list allowed); $TILECAST_SPECS_PATH does the same\n"
    "  --version         print the version and exit\n"
    "  -h, --help        print this help and exit\n"
    "\n"
    "Commands:\n";

static const char exit_codes[] = "Exit status:\n"
                                 "  0  success\n"
                                 "  1  usage error (unknown flag, missing argument)\n"
                                 "  2  input error (bad file, shape, value, GPU id or database)\n"
                                 "  3  runtime error (I/O, device, out of memory)\n";

static void print_usage(FILE *out)
{
    fputs(usage_head, out);
    for (size_t i = 0; i < TC_ARRAY_SIZE_CLI(commands); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\nRun 'tilecast COMMAND --help' for a command's options.\n\n", out);
    fputs(exit_codes, out);
}

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < TC_ARRAY_SIZE_CLI(commands); i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* Targets that print a --help of their own (tilecast predict attention
 * --help, tilecast db import --help): the man page and the completion carry
 * their texts too. */
static const struct {
    const char *command;
    const char *help;
} sub_helps[] = {
    {"predict", cmd_predict_gemm_help},
    {"predict", cmd_predict_attention_help},
    {"predict", cmd_predict_layer_help},
    {"predict", cmd_predict_model_help},
    {"eval", cmd_eval_attention_help},
    {"eval", cmd_eval_elementwise_help},
    {"db", cmd_db_info_help},
    {"db", cmd_db_check_help},
    {"db", cmd_db_import_help},
    {"db", cmd_db_export_help},
    {"db", cmd_db_merge_help},
    {"db", cmd_db_calibrate_help},
    {"db", cmd_db_migrate_help},
    {"db", cmd_db_compact_help},
    {"db", cmd_db_bench_help},
};

/* A help text as help2man reads one: each usage block ("Usage: ..." up to
 * a blank line) with its alternatives as GNU "or:" lines in the first block
 * (help2man's SYNOPSIS) and as "Usage:" paragraphs in later ones, and the
 * arguments wrapped onto continuation lines joined to their line (help2man
 * fills them to the page). Everything else is the text as --help prints
 * it. */
static void print_man_text(FILE *out, const char *text, bool *first_block)
{
    bool in_usage = false;

    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *t = p;

        while (t < p + n && *t == ' ')
            t++;
        if (strncmp(p, "Usage: ", 7) == 0) {
            if (in_usage)
                fputc('\n', out);
            in_usage = true;
            fprintf(out, "%.*s", (int)n, p);
        } else if (in_usage && n > 0 && t > p) {
            size_t rest = n - (size_t)(t - p);

            if (strncmp(t, "tilecast ", 9) == 0)
                fprintf(out, *first_block ? "\n  or: %.*s" : "\nUsage: %.*s", (int)rest, t);
            else
                fprintf(out, " %.*s", (int)rest, t);
        } else {
            if (in_usage) {
                fputc('\n', out);
                *first_block = false;
            }
            in_usage = false;
            fprintf(out, "%.*s\n", (int)n, p);
        }
        p += n + (end ? 1 : 0);
    }
    if (in_usage) {
        fputc('\n', out);
        *first_block = false;
    }
}

/* help2man's include file for tilecast-COMMAND(1) (tilecast help
 * --man-include COMMAND): its NAME from the command's summary, and SEE ALSO.
 * tilecast(1) has its own, tools/tilecast.h2m. */
static int print_man_include(FILE *out, const char *name)
{
    const struct command *c = name ? find_command(name) : NULL;

    if (!c) {
        cli_error(NULL, "help --man-include: unknown command '%s'", name ? name : "");
        return CLI_EXIT_USAGE;
    }
    fprintf(out, "[NAME]\ntilecast-%s \\- %s\n\n[SEE ALSO]\n.BR tilecast (1)\n", c->name,
            c->summary);
    return CLI_EXIT_OK;
}

/* What help2man reads for one page (tilecast help --man-text [COMMAND]):
 * the overview for tilecast(1), or a command's --help with its targets'
 * (predict attention, db import) for tilecast-COMMAND(1). */
static int print_man_page_text(FILE *out, const char *name)
{
    const struct command *c = name ? find_command(name) : NULL;
    bool first = true;

    if (!name) {
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);

        if (!mem)
            return CLI_EXIT_RUNTIME;
        print_usage(mem);
        if (fclose(mem) != 0) {
            free(buf);
            return CLI_EXIT_RUNTIME;
        }
        print_man_text(out, buf, &first);
        free(buf);
        return CLI_EXIT_OK;
    }
    if (!c) {
        cli_error(NULL, "unknown command '%s' (see 'tilecast --help')", name);
        return CLI_EXIT_USAGE;
    }
    print_man_text(out, c->help, &first);
    for (size_t j = 0; j < TC_ARRAY_SIZE_CLI(sub_helps); j++) {
        /* predict's own text already holds its targets' */
        if (strcmp(sub_helps[j].command, c->name) == 0 && !strstr(c->help, sub_helps[j].help)) {
            fputc('\n', out);
            print_man_text(out, sub_helps[j].help, &first);
        }
    }
    return CLI_EXIT_OK;
}

/* The long options a help text mentions, as " --opt" words, each once. */
static void print_options(FILE *out, const char *p)
{
    char seen[4096] = " ";

    while ((p = strstr(p, "--"))) {
        size_t n = 2;
        char key[72];

        while (p[n] &&
               (p[n] == '-' || (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9')))
            n++;
        if (n > 2 && n < 64 && strncmp(p, "--help", n) != 0) {
            snprintf(key, sizeof(key), " %.*s ", (int)n, p);
            if (!strstr(seen, key) && strlen(seen) + strlen(key) < sizeof(seen)) {
                strcat(seen, key + 1);
                fprintf(out, " %.*s", (int)n, p);
            }
        }
        p += n;
    }
}

/* The second words a help text shows after "tilecast NAME " (its
 * subcommands: "tilecast db info", "tilecast predict attention|layer|model"). */
static void print_subcommands(FILE *out, const char *name, const char *help)
{
    char prefix[64];
    size_t plen;
    const char *p = help;

    plen = (size_t)snprintf(prefix, sizeof(prefix), "tilecast %s ", name);
    if (plen >= sizeof(prefix))
        return;
    while ((p = strstr(p, prefix))) {
        p += plen;
        while ((*p >= 'a' && *p <= 'z') || *p == '|') {
            size_t n = 0;

            while (p[n] >= 'a' && p[n] <= 'z')
                n++;
            if (n)
                fprintf(out, " %.*s", (int)n, p);
            p += n;
            if (*p == '|')
                p++;
        }
    }
}

/* A word of a value list: lower case, digits, '-' and '_' (fp16, cookbook,
 * cuda), or a layout (NN, NT, TN, TT). FILE, NAME and other upper-case
 * words are placeholders, not values. */
static bool value_word(const char *w, size_t n)
{
    if (n == 2 && (w[0] == 'N' || w[0] == 'T') && (w[1] == 'N' || w[1] == 'T'))
        return true;
    if (n == 0 || !((w[0] >= 'a' && w[0] <= 'z') || (w[0] >= '0' && w[0] <= '9')))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((w[i] >= 'a' && w[i] <= 'z') || (w[i] >= '0' && w[i] <= '9') || w[i] == '-' ||
              w[i] == '_'))
            return false;
    return true;
}

/* The value lists a help text spells as "--opt a|b|c" (--layout NN|NT|TN|TT,
 * --format csv|json, --backend cuda|hip|cpu), as bash case arms on $prev,
 * each option once. */
static void print_values(FILE *out, const char *p)
{
    char seen[1024] = " ";

    while ((p = strstr(p, "--"))) {
        size_t n = 2, v, words = 0;
        bool ok = true;
        const char *w;

        while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9') || p[n] == '-')
            n++;
        if (n <= 2 || p[n] != ' ') {
            p += n;
            continue;
        }
        w = p + n + 1;
        for (v = 0; w[v] && w[v] != ' ' && w[v] != '\n' && w[v] != ']' && w[v] != ')'; v++)
            ;
        for (size_t a = 0, b; a <= v && ok; a = b + 1, words++) {
            for (b = a; b < v && w[b] != '|'; b++)
                ;
            ok = value_word(w + a, b - a);
        }
        if (ok && words >= 2) {
            char key[72];

            snprintf(key, sizeof(key), " %.*s ", (int)n, p);
            if (!strstr(seen, key) && strlen(seen) + strlen(key) < sizeof(seen)) {
                strcat(seen, key + 1);
                fprintf(out, "        %.*s) vals=\"", (int)n, p);
                for (size_t k = 0; k < v; k++)
                    fputc(w[k] == '|' ? ' ' : w[k], out);
                fputs("\" ;;\n", out);
            }
        }
        p += n;
    }
}

/* The subcommand a --help text is for ("tilecast predict attention" ->
 * "attention"), into buf; "" when its usage line names none. */
static void help_subcommand(const char *help, const char *name, char *buf, size_t len)
{
    char prefix[64];
    const char *p;
    size_t n = 0;

    buf[0] = '\0';
    snprintf(prefix, sizeof(prefix), "tilecast %s ", name);
    p = strstr(help, prefix);
    if (!p)
        return;
    p += strlen(prefix);
    while (p[n] >= 'a' && p[n] <= 'z' && n + 1 < len)
        n++;
    if (p[n] == ' ' || p[n] == '\n' || p[n] == '|') {
        memcpy(buf, p, n);
        buf[n] = '\0';
    }
}

/* The names of the files in a shipped data folder with the extension ext,
 * as words ("quick paper-gemm ..."): the values --sweep and --config take
 * by name. */
static void print_shipped(FILE *out, const char *folder, const char *ext)
{
    char dir[4096];
    DIR *d;
    struct dirent *e;
    size_t el = strlen(ext);

    if (tc_data_path(folder, dir, sizeof(dir)) < 0 || !(d = opendir(dir)))
        return;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > el && strcmp(e->d_name + n - el, ext) == 0 && e->d_name[0] != '.')
            fprintf(out, " %.*s", (int)(n - el), e->d_name);
    }
    closedir(d);
}

/* One case arm of the completion: the options and value lists of one help
 * text, under the pattern "CMD SUB" (or "CMD *" for the command's own). */
static void print_completion_arm(FILE *out, const char *pattern, const char *help, const char *name,
                                 const char *subs_help)
{
    fprintf(out, "    %s)\n        opts=\"--help", pattern);
    print_options(out, help);
    fputs("\"\n", out);
    if (subs_help) {
        fputs("        subs=\"", out);
        print_subcommands(out, name, subs_help);
        fputs("\"\n", out);
    }
    fputs("        case $prev in\n", out);
    print_values(out, help);
    fputs("        esac ;;\n", out);
}

/* Bash completion, through bash-completion's helpers (_init_completion,
 * _filedir): the commands, their subcommands (db info, predict gemm), the
 * long options of the subcommand typed only, and values: GPU ids (asked of
 * the command being completed, so that --specs-dir and TILECAST_SPECS_PATH
 * count), dtypes and attention kernels from the library, the shipped sweeps
 * and model configs by name, and every "--opt a|b|c" list of the help
 * texts. Files otherwise. */
static void print_completion(FILE *out)
{
    fputs("# bash completion for tilecast; generated by 'tilecast completion bash'\n"
          "_tilecast() {\n"
          "    local cur prev words cword\n"
          "    if declare -F _init_completion >/dev/null; then\n"
          "        _init_completion || return\n"
          "    else # sourced without bash-completion: its helpers' plain forms\n"
          "        words=(\"${COMP_WORDS[@]}\") cword=$COMP_CWORD\n"
          "        cur=${words[cword]} prev=${words[cword - 1]}\n"
          "        _filedir() { [[ $1 == -d ]] && COMPREPLY+=($(compgen -d -- \"$cur\")) ||\n"
          "            COMPREPLY+=($(compgen -f -- \"$cur\")); }\n"
          "    fi\n"
          "    local tc=${words[0]} cmd=\"\" sub=\"\" at=0 i opts=\"\" subs=\"\" vals=\"\"\n"
          "    local -a gopts=()\n"
          "    for ((i = 1; i < cword; i++)); do\n"
          "        case ${words[i]} in\n"
          "        --specs-dir) gopts+=(--specs-dir \"${words[i + 1]}\"); ((i++)) ;;\n"
          "        -*) ;;\n"
          "        *) if [[ -z $cmd ]]; then cmd=${words[i]}; at=$i; else sub=${words[i]}; break; "
          "fi ;;\n"
          "        esac\n"
          "    done\n"
          "    case $prev in\n"
          "    --gpu)\n"
          "        COMPREPLY=($(compgen -W \"$(\"$tc\" \"${gopts[@]}\" specs list --csv "
          "2>/dev/null |\n"
          "            tail -n +2 | cut -d, -f1)\" -- \"$cur\"))\n"
          "        return ;;\n"
          "    --dtype)\n"
          "        COMPREPLY=($(compgen -W \"",
          out);
    for (int d = 0; d < TC_DTYPE_COUNT; d++)
        fprintf(out, "%s%s", d ? " " : "", tc_dtype_name((enum tc_dtype)d));
    fputs("\" -- \"$cur\"))\n        return ;;\n    --impl)\n        COMPREPLY=($(compgen -W \"",
          out);
    for (int a = 0; a < TC_ATTN_IMPL_COUNT; a++)
        fprintf(out, "%s%s", a ? " " : "", tc_attn_impl_name((enum tc_attn_impl)a));
    fputs("\" -- \"$cur\"))\n        return ;;\n    --config)\n        COMPREPLY=($(compgen -W \"",
          out);
    print_shipped(out, "predictor/models", ".yaml");
    fputs("\" -- \"$cur\"))\n        _filedir '@(yaml|yml)'\n        return ;;\n"
          "    --specs-dir)\n        _filedir -d\n        return ;;\n"
          "    esac\n"
          "    if [[ $cmd == collect && $prev == --sweep ]]; then\n"
          "        COMPREPLY=($(compgen -W \"",
          out);
    print_shipped(out, "collector/sweeps", ".yaml");
    fputs("\" -- \"$cur\"))\n        _filedir '@(yaml|yml)'\n        return\n    fi\n"
          "    case \"$cmd $sub\" in\n",
          out);
    for (size_t i = 0; i < TC_ARRAY_SIZE_CLI(commands); i++) {
        char pattern[128], sub[32];

        for (size_t j = 0; j < TC_ARRAY_SIZE_CLI(sub_helps); j++) {
            if (strcmp(sub_helps[j].command, commands[i].name) != 0)
                continue;
            help_subcommand(sub_helps[j].help, commands[i].name, sub, sizeof(sub));
            if (!sub[0])
                continue;
            snprintf(pattern, sizeof(pattern), "\"%s %s\"", commands[i].name, sub);
            print_completion_arm(out, pattern, sub_helps[j].help, commands[i].name, NULL);
        }
        snprintf(pattern, sizeof(pattern), "\"%s \"*", commands[i].name);
        print_completion_arm(out, pattern, commands[i].help, commands[i].name, commands[i].help);
    }
    fputs("    *) opts=\"--help --version --specs-dir\" subs=\"help completion", out);
    for (size_t i = 0; i < TC_ARRAY_SIZE_CLI(commands); i++)
        fprintf(out, " %s", commands[i].name);
    fputs("\" ;;\n    esac\n"
          "    if [[ -n $vals ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$vals\" -- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\" | sort -u))\n"
          "        return\n"
          "    fi\n"
          "    if [[ -n $subs && ( -z $cmd || ( -z $sub && $cword -eq $((at + 1)) ) ) ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\" | sort -u))\n"
          "        return\n"
          "    fi\n"
          "    _filedir\n"
          "}\ncomplete -F _tilecast tilecast\n",
          out);
}

int main(int argc, char **argv)
{
    int i = 1;

    while (i < argc && argv[i][0] == '-') {
        if (strcmp(argv[i], "--version") == 0) {
            printf("tilecast %s\n", tc_version());
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            print_usage(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--specs-dir") == 0) {
            if (i + 1 >= argc) {
                cli_error(NULL, "--specs-dir needs a directory");
                return CLI_EXIT_USAGE;
            }
            cli_globals.specs_dir = argv[i + 1];
            i += 2;
        } else if (strncmp(argv[i], "--specs-dir=", 12) == 0) {
            cli_globals.specs_dir = argv[i] + 12;
            i++;
        } else {
            char hint[96];

            cli_error(NULL, "unknown option '%s'%s (see 'tilecast --help')", argv[i],
                      cli_suggest_option(argv[i], usage_head, hint, sizeof(hint)));
            return CLI_EXIT_USAGE;
        }
    }
    if (i >= argc) {
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[i], "help") == 0) {
        const struct command *c;

        if (i + 1 >= argc) {
            print_usage(stdout);
            return CLI_EXIT_OK;
        }
        /* the input of help2man (tools/meson.build), one page at a time */
        if (strcmp(argv[i + 1], "--man-text") == 0)
            return print_man_page_text(stdout, i + 2 < argc ? argv[i + 2] : NULL);
        if (strcmp(argv[i + 1], "--man-include") == 0)
            return print_man_include(stdout, i + 2 < argc ? argv[i + 2] : NULL);
        c = find_command(argv[i + 1]);
        if (!c) {
            cli_error(NULL, "unknown command '%s' (see 'tilecast --help')", argv[i + 1]);
            return CLI_EXIT_USAGE;
        }
        fputs(c->help, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[i], "completion") == 0) {
        if (i + 1 < argc && strcmp(argv[i + 1], "bash") != 0) {
            cli_error(NULL, "only 'completion bash' is supported");
            return CLI_EXIT_USAGE;
        }
        print_completion(stdout);
        return CLI_EXIT_OK;
    }
    const struct command *c = find_command(argv[i]);

    if (!c) {
        cli_error(NULL, "unknown command '%s' (see 'tilecast --help')", argv[i]);
        return CLI_EXIT_USAGE;
    }
    for (int j = i + 1; j < argc; j++) {
        if (strcmp(argv[j], "--") == 0)
            break;
        if (strcmp(argv[j], "-h") == 0 || strcmp(argv[j], "--help") == 0) {
            /* Subcommands with their own sub-subcommands print their own help. */
            if (strcmp(c->name, "predict") != 0 && strcmp(c->name, "db") != 0 &&
                strcmp(c->name, "specs") != 0) {
                const char *help = c->help;

                /* eval --attention and eval --elementwise have helps of their own */
                for (int k = i + 1; k < argc && strcmp(argv[k], "--") != 0; k++)
                    if (strcmp(c->name, "eval") == 0 && strcmp(argv[k], "--attention") == 0)
                        help = cmd_eval_attention_help;
                    else if (strcmp(c->name, "eval") == 0 && strcmp(argv[k], "--elementwise") == 0)
                        help = cmd_eval_elementwise_help;
                fputs(help, stdout);
                return CLI_EXIT_OK;
            }
        }
    }
    return c->fn(argc - i, argv + i);
}
