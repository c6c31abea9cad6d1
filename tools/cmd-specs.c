/* STUB: tilecast specs, to be implemented. */
#include "config.h"

#include "cli.h"

const char cmd_specs_help[] = "Usage: tilecast specs ...\n";

int cmd_specs(int argc, char **argv)
{
    cli_error("specs", "not implemented yet");
    return CLI_EXIT_RUNTIME;
}
