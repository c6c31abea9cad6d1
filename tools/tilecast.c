/* The tilecast command: global options, then a git-style subcommand. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eval-cli.h"
#include "model-cli.h"

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
    "       tilecast --version | --help | help COMMAND | help --man | completion bash\n"
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

static const char exit_codes[] =
    "Exit status:\n"
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

/* roff-escape: backslashes and leading dots/quotes. */
static void man_text(FILE *out, const char *text)
{
    bool bol = true;

    for (const char *p = text; *p; p++) {
        if (bol && (*p == '.' || *p == '\''))
            fputs("\\&", out);
        if (*p == '\\')
            fputs("\\e", out);
        else if (*p == '-')
            fputs("\\-", out);
        else
            fputc(*p, out);
        bol = *p == '\n';
    }
}

/* Targets that print a --help of their own (tilecast predict attention
 * --help, tilecast db import --help): the man page and the completion carry
 * their texts too. */
static const struct {
    const char *command;
    const char *help;
} sub_helps[] = {
    {"predict", cmd_predict_attention_help},
    {"predict", cmd_predict_layer_help},
    {"predict", cmd_predict_model_help},
    {"eval", cmd_eval_attention_help},
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

/* The man page is made from the same texts as --help, so they cannot drift. */
static void print_man(FILE *out)
{
    fprintf(out, ".TH TILECAST 1 \"\" \"tilecast %s\" \"User Commands\"\n", tc_version());
    fputs(".SH NAME\ntilecast \\- predict and measure GEMM, attention and transformer speed on "
          "GPUs\n.SH SYNOPSIS\n.nf\n",
          out);
    man_text(out, usage_head);
    for (size_t i = 0; i < TC_ARRAY_SIZE_CLI(commands); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs(".fi\n", out);
    for (size_t i = 0; i < TC_ARRAY_SIZE_CLI(commands); i++) {
        fprintf(out, ".SH \"TILECAST %s\"\n.nf\n", commands[i].name);
        man_text(out, commands[i].help);
        for (size_t j = 0; j < TC_ARRAY_SIZE_CLI(sub_helps); j++) {
            if (strcmp(sub_helps[j].command, commands[i].name) == 0) {
                fputc('\n', out);
                man_text(out, sub_helps[j].help);
            }
        }
        fputs(".fi\n", out);
    }
    fputs(".SH \"EXIT STATUS\"\n.nf\n", out);
    man_text(out, exit_codes);
    fputs(".fi\n.SH ENVIRONMENT\n.TP\n.B TILECAST_SPECS_PATH\nExtra directories of GPU "
          "spec files, colon-separated.\n.TP\n.B TILECAST_DATA_DIR\nOverrides where the "
          "shipped gpu_specs/ and db/prebuilt/ are read from.\n",
          out);
}

/* The long options a help text mentions, as " --opt" words. */
static void print_options(FILE *out, const char *p)
{
    while ((p = strstr(p, "--"))) {
        size_t n = 2;

        while (p[n] && (p[n] == '-' || (p[n] >= 'a' && p[n] <= 'z') ||
                        (p[n] >= '0' && p[n] <= '9')))
            n++;
        if (n > 2 && strncmp(p, "--help", n) != 0)
            fprintf(out, " %.*s", (int)n, p);
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

/* Bash completion: subcommands, their own subcommands (db info, predict
 * gemm, ...), then the long options found in each help text. */
static void print_completion(FILE *out)
{
    fputs("# bash completion for tilecast; generated by 'tilecast completion bash'\n"
          "_tilecast() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} cmd=\"\" at=0 i\n"
          "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
          "        case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; at=$i; break ;; esac\n"
          "    done\n"
          "    local opts subs=\"\"\n"
          "    case $cmd in\n",
          out);
    for (size_t i = 0; i < TC_ARRAY_SIZE_CLI(commands); i++) {
        fprintf(out, "    %s) opts=\"--help", commands[i].name);
        print_options(out, commands[i].help);
        for (size_t j = 0; j < TC_ARRAY_SIZE_CLI(sub_helps); j++)
            if (strcmp(sub_helps[j].command, commands[i].name) == 0)
                print_options(out, sub_helps[j].help);
        fputs("\" subs=\"", out);
        print_subcommands(out, commands[i].name, commands[i].help);
        fputs("\" ;;\n", out);
    }
    fputs("    *) opts=\"--help --version --specs-dir", out);
    for (size_t i = 0; i < TC_ARRAY_SIZE_CLI(commands); i++)
        fprintf(out, " %s", commands[i].name);
    fputs("\" ;;\n    esac\n"
          "    if [[ -n $subs && $COMP_CWORD -eq $((at + 1)) && $cur != -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\" | sort -u))\n"
          "        return\n"
          "    fi\n"
          "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\" | sort -u))\n"
          "    [[ $cur != -* && -n $cmd ]] && COMPREPLY+=($(compgen -f -- \"$cur\"))\n"
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
        if (strcmp(argv[i + 1], "--man") == 0) {
            print_man(stdout);
            return CLI_EXIT_OK;
        }
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
                bool attention = false;

                /* eval --attention has a help of its own */
                for (int k = i + 1; k < argc && strcmp(argv[k], "--") != 0; k++)
                    attention |=
                        strcmp(c->name, "eval") == 0 && strcmp(argv[k], "--attention") == 0;
                fputs(attention ? cmd_eval_attention_help : c->help, stdout);
                return CLI_EXIT_OK;
            }
        }
    }
    return c->fn(argc - i, argv + i);
}
