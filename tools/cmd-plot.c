/* STUB: tilecast plot, to be implemented. */
#include "config.h"

#include "cli.h"

const char cmd_plot_help[] = "Usage: tilecast plot ...\n";

int cmd_plot(int argc, char **argv)
{
    cli_error("plot", "not implemented yet");
    return CLI_EXIT_RUNTIME;
}
