/* STUB: tilecast advise, to be implemented. */
#include "config.h"

#include "cli.h"

const char cmd_advise_help[] = "Usage: tilecast advise ...\n";

int cmd_advise(int argc, char **argv)
{
    cli_error("advise", "not implemented yet");
    return CLI_EXIT_RUNTIME;
}
