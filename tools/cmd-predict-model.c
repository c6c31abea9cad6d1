/* STUB: tilecast predict attention|layer|model, to be implemented. */
#include "config.h"

#include "cli.h"

int cmd_predict_attention(int argc, char **argv)
{
    cli_error("predict attention", "not implemented yet");
    return CLI_EXIT_RUNTIME;
}

int cmd_predict_layer(int argc, char **argv)
{
    cli_error("predict layer", "not implemented yet");
    return CLI_EXIT_RUNTIME;
}

int cmd_predict_model(int argc, char **argv)
{
    cli_error("predict model", "not implemented yet");
    return CLI_EXIT_RUNTIME;
}
