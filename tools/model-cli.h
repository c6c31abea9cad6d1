/* Option parsing and output shared by `predict attention|layer|model`,
 * `advise` and `plot` (defined in cmd-predict-model.c). */
#ifndef TC_MODEL_CLI_H
#define TC_MODEL_CLI_H

#include <jansson.h>
#include <stdbool.h>

#include "cli.h"

/* The usage texts of `predict attention|layer|model`, for the predict
 * command's --help and the man page. */
extern const char cmd_predict_attention_help[];
extern const char cmd_predict_layer_help[];
extern const char cmd_predict_model_help[];

/* Matches argv[*i] against "--name VALUE" or "--name=VALUE". Returns false
 * if it is another flag. On a match *value is the value (NULL, with an
 * error printed, when it is missing) and *i points at the last consumed
 * argument. */
bool mcli_opt(const char *cmd, int argc, char **argv, int *i, const char *name,
              const char **value, bool *bad);

/* Flags describing one transformer shape (--hidden, --heads, --kv-heads,
 * --head-dim, --seq, --micro-batch, --tp, --ffn, --swiglu, --rmsnorm,
 * --attention, --dtype, --train, --inference, --no-causal, --layers,
 * --vocab). Returns 1 if argv[*i] was one, 0 if not, -1 after printing a
 * usage error. */
int mcli_shape_flag(const char *cmd, int argc, char **argv, int *i, struct tc_model_config *c);

/* Loads specs, finds the GPU and builds a predictor (analytical only when
 * asked; db may be NULL). Returns an exit code; on success the caller frees
 * *p and *specs. */
int mcli_setup(const char *cmd, const char *gpu_id, bool analytical, const char *db,
               struct tc_specs **specs, struct tc_predictor **p, const struct tc_gpu **gpu);

/* The per-op list as a JSON array (name, kind, m, n, k, batch, layout,
 * time_us, tflops, share_pct, per_layer, source). New reference. */
json_t *mcli_ops_json(const struct tc_model_prediction *mp);

/* The per-op table (units in column names). Caller frees. */
struct cli_table *mcli_ops_table(const struct tc_model_prediction *mp);

#endif
