/* STUB: tilecast collect, to be implemented. */
#include "config.h"

#include "cli.h"

const char cmd_collect_help[] = "Usage: tilecast collect ...\n";

int cmd_collect(int argc, char **argv)
{
    cli_error("collect", "not implemented yet");
    return CLI_EXIT_RUNTIME;
}

int cmd_bench_collector(int argc, char **argv)
{
    cli_error("bench collector", "not implemented yet");
    return CLI_EXIT_RUNTIME;
}
