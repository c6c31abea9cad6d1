/* STUB: tilecast eval, to be implemented. */
#include "config.h"

#include "cli.h"

const char cmd_eval_help[] = "Usage: tilecast eval ...\n";

int cmd_eval(int argc, char **argv)
{
    cli_error("eval", "not implemented yet");
    return CLI_EXIT_RUNTIME;
}
