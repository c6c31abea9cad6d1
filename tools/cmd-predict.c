/* STUB: tilecast predict, to be implemented. */
#include "config.h"

#include "cli.h"

const char cmd_predict_help[] = "Usage: tilecast predict ...\n";

int cmd_predict(int argc, char **argv)
{
    cli_error("predict", "not implemented yet");
    return CLI_EXIT_RUNTIME;
}
