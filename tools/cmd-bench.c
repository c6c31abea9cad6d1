/* STUB: tilecast bench, to be implemented. */
#include "config.h"

#include "cli.h"

const char cmd_bench_help[] = "Usage: tilecast bench ...\n";

int cmd_bench(int argc, char **argv)
{
    cli_error("bench", "not implemented yet");
    return CLI_EXIT_RUNTIME;
}
