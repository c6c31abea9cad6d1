/* STUB: tilecast db, to be implemented. */
#include "config.h"

#include "cli.h"

const char cmd_db_help[] = "Usage: tilecast db ...\n";

int cmd_db(int argc, char **argv)
{
    cli_error("db", "not implemented yet");
    return CLI_EXIT_RUNTIME;
}
