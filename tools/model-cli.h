/* Option parsing and output shared by `predict attention|layer|model`,
 * `advise` and `plot` (defined in cmd-predict-model.c; predict attention
 * in cmd-predict-attention.c). */
#ifndef TC_MODEL_CLI_H
#define TC_MODEL_CLI_H

#include <jansson.h>
#include <stdbool.h>

#include "cli.h"

/* The usage texts of `predict attention|layer|model`. They are macros so
 * that the predict command's help (and so the man page and the bash
 * completion made from it) can include them by string concatenation. */
#define MCLI_PREDICT_ATTENTION_HELP                                                                \
    "Usage: tilecast predict attention --gpu ID --batch B --heads A --seq S --head-dim D\n"        \
    "                                  [--impl IMPL] [--kv-heads G] [--seq-kv S]\n"                \
    "                                  [--head-dim-vo D] [--causal] [--window W] [--bwd]\n"        \
    "                                  [--deterministic] [--kv-splits N] [--dtype fp16]\n"         \
    "                                  [--page-size P] [--kv-dtype T]\n"                           \
    "                                  [--analytical] [--db FILE] [--json|--csv|--md]\n"           \
    "  --impl IMPL           flash (default: the architecture's best fused kernel:\n"              \
    "                        FlashAttention-2 on Ampere/Ada, -3 on Hopper, -4 on\n"                \
    "                        Blackwell), flash2, flash3, flash4, cudnn (each that\n"               \
    "                        library's kernels, where it runs), cudnn_oss (the cuDNN\n"            \
    "                        frontend's open-source engines: their sm80 kernels and\n"             \
    "                        sm100 forward from their source, elsewhere modelled\n"                \
    "                        as cudnn; calibrated by their own rows), or unfused\n"                \
    "                        (scores bmm + softmax + values bmm through the GEMM\n"                \
    "                        predictor)\n"                                                         \
    "  --batch, --heads, --seq, --head-dim   the shape (seq is the query length,\n"                \
    "                        head dim that of Q and K)\n"                                          \
    "  --head-dim-vo D       V and O head dim (default: --head-dim), e.g. 128 for\n"               \
    "                        DeepSeek's 192/128\n"                                                 \
    "  --kv-heads G          grouped-query attention: G key/value heads (divides A)\n"             \
    "  --seq-kv S            key/value length (default: --seq); the queries are the\n"             \
    "                        last --seq positions (prefill against a cache)\n"                     \
    "  --causal              causal mask: the fused kernels skip the tiles above\n"                \
    "                        the diagonal and compute the diagonal ones in full\n"                 \
    "  --window W            with --causal: each query sees its last W keys (its own\n"            \
    "                        included), a sliding window\n"                                        \
    "  --bwd                 the backward pass (five matmuls; with its pre- and\n"                 \
    "                        post-processing kernels)\n"                                           \
    "  --deterministic       the deterministic backward (flash2: dQ accumulated per\n"             \
    "                        split, no atomics; flash4 on sm90 and cudnn_oss on\n"                 \
    "                        sm80: dQ added in key-block order through a semaphore\n"              \
    "                        per query tile; cuDNN's fp8 on sm90: its only order,\n"               \
    "                        timed as the other; cuDNN's closed 16-bit engines are\n"              \
    "                        refused)\n"                                                           \
    "  --kv-splits N         forward split-KV (FlashDecoding): 1 never splits (the\n"              \
    "                        training entry points of FA3/FA4/cuDNN), N forces N;\n"               \
    "                        default: the kernel's heuristic splits the keys when\n"               \
    "                        the query tiles cannot fill the GPU\n"                                \
    "  --dtype T             fp16 (default), bf16, fp8, ...\n"                                     \
    "  --page-size P         a paged KV cache of P keys a page (a block table, as\n"               \
    "                        vLLM's PagedAttention; default 0: contiguous), forward\n"             \
    "                        only; flash2 takes multiples of 256 (and reads pages\n"               \
    "                        with its split kernel's 64-row tiles, split or not),\n"               \
    "                        unfused none. A prediction: the kernel's block table\n"               \
    "                        bytes are modelled, its page lookups not, and hi_us\n"                \
    "                        allows the 26% vLLM measured for its paged kernel\n"                  \
    "  --kv-dtype T          the KV cache's dtype (default: --dtype). The modelled\n"              \
    "                        kernels read K and V in the queries' dtype: an fp8\n"                 \
    "                        cache is an fp8 attention (--dtype fp8); a narrower\n"                \
    "                        cache is answered only where the --db measured it\n"                  \
    "  --analytical, --db FILE   as for predict gemm. The attention rows of the --db\n"            \
    "                        file (else of the GPU's prebuilt database) calibrate\n"               \
    "                        the model: a shape measured exactly (same impl, dtype,\n"             \
    "                        shape, V/O head dim, mask, window, direction,\n"                      \
    "                        deterministic, page size and KV-cache dtype) is its\n"                \
    "                        measurement (source\n"                                                \
    "                        measured); otherwise, with ok rows of the same GPU,\n"                \
    "                        impl, dtype and direction, the model's time x\n"                      \
    "                        exp(w * median ln(measured / model)), w = n / (n + 5)\n"              \
    "                        for n rows (source calibrated; interval from the\n"                   \
    "                        10th/90th percentiles of those log ratios, blended\n"                 \
    "                        with the model's +-25% by w). Rows of one impl never\n"               \
    "                        calibrate another, nor one GPU another\n"                             \
    "  --json, --csv         one record as a JSON object (as every predict --json:\n"              \
    "                        'tilecast predict --help') or a CSV row; --md the\n"                  \
    "                        record as a markdown table (field | value)\n"
#define MCLI_PREDICT_LAYER_HELP                                                                    \
    "Usage: tilecast predict layer --gpu ID --hidden H --heads A --seq S --micro-batch B\n"        \
    "                              [--tp T] [--attention IMPL] [--ffn F] [--swiglu]\n"             \
    "                              [--kv-heads G] [--head-dim D] [--rmsnorm] [--no-causal]\n"      \
    "                              [--dtype fp16] [--train] [--analytical] [--db FILE]\n"          \
    "                              [--json|--csv|--md]\n"                                          \
    "       tilecast predict layer --measured FILE [--min-time-us 20] [--analytical]\n"            \
    "                              [--db FILE] [--no-prebuilt] [--json|--csv]\n"                   \
    "  One transformer layer, forward only unless --train (then also the data-grad\n"              \
    "  (NN) and weight-grad (TN) GEMMs and the attention backward). --ffn defaults to\n"           \
    "  4h (GeLU) or the Llama rule for --swiglu; --tp splits heads, QKV, projection and\n"         \
    "  MLP by t. --json prints one object: layer_time_us and ops[] with name, kind, m,\n"          \
    "  n, k, batch, layout, time_us, tflops, share_pct and source; with --measured\n"              \
    "  the object holds measured, min_time_us and groups[], one per gpu/model and the\n"           \
    "  overall one. --attention IMPL: flash (default), flash2, flash3, flash4, cudnn\n"            \
    "  or unfused (predict attention). --gpu A,B,... or --gpu all: one row per GPU\n"              \
    "  (layer_time_us, tflops), fastest first.\n"                                                  \
    "  --measured FILE  compares the predicted sum of each layer's four GEMMs (QKV,\n"             \
    "                   output projection, MLP up, MLP down; CSV columns gpu, dtype, m,\n"         \
    "                   n, k, layout, time_us, model, tp, vidur_op) with the measured\n"           \
    "                   sum, grouped per (gpu, model, tp, tokens); prints count, MAPE,\n"          \
    "                   median and p90 error per gpu/model and over all\n"                         \
    "  --min-time-us X  ignore layers measured below X us (default 20)\n"                          \
    "  --no-prebuilt    leave out the shipped databases (they hold the shared\n"                   \
    "                   measurements, so shapes in them come back 'measured'); with\n"             \
    "                   --db FILE this measures a calibration on held-out layers\n"
#define MCLI_PREDICT_MODEL_HELP                                                                    \
    "Usage: tilecast predict model --gpu ID --config FILE [--tp T] [--micro-batch B]\n"            \
    "                              [--seq S] [--train|--inference] [--decode CONTEXT]\n"           \
    "                              [--attention IMPL] [--graphs|--eager] [--dtype DT]\n"           \
    "                              [--serving] [--ignore-memory] [--analytical]\n"                 \
    "                              [--dp N] [--zero 0-3] [--recompute]\n"                          \
    "                              [--pp N] [--microbatches M] [--gpus-per-node N]\n"              \
    "                              [--nic-gbps X]\n"                                               \
    "                              [--db FILE] [--json|--csv|--md]\n"                              \
    "  A whole model from a YAML config (keys: name, hidden, heads, kv_heads, head_dim,\n"         \
    "  ffn, activation gelu|swiglu, norm layernorm|rmsnorm, layers, vocab, seq,\n"                 \
    "  micro_batch, tp, dtype, attention IMPL (flash, flash2, flash3, flash4, cudnn or\n"          \
    "  unfused, as in predict attention; or eager: unfused with Hugging Face's scale and\n"        \
    "  mask kernels), mode training|inference, causal,\n"                                          \
    "  tied_embeddings, graphs, serving, dp, zero_stage, recompute, rope, pp,\n"                   \
    "  microbatches, dropout and attention_dropout: training mode's dropout\n"                     \
    "  probabilities, 0 by default), or a\n"                                                       \
    "  shipped config by name: gpt-neox-20b,\n"                                                    \
    "  llama-2-7b, llama-2-70b, llama-3-8b, paper-gpt. Prints the per-operation table\n"           \
    "  (shape, time_us, tflops, share_pct, source), layer time, step time\n"                       \
    "  (layers x layer + embedding/logits/loss; the logits vocabulary-parallel over t),\n"         \
    "  tokens/s, model TFLOP/s per GPU and MFU. --tp, --micro-batch, --seq, --train,\n"            \
    "  --inference, --attention and --dtype override the file (a V100 takes a bf16\n"              \
    "  config with --dtype fp16). --decode CONTEXT predicts one decode step\n"                     \
    "  instead: each of the micro-batch sequences adds a token to a KV\n"                          \
    "  cache of CONTEXT tokens; the step time is the per-token latency. The step\n"                \
    "  time is the larger of the GPU's (gpu_time) and the host's (host_time): eager\n"             \
    "  execution (the default, --eager) dispatches every op from the host, 28 us\n"                \
    "  each (a PyTorch op call on a typical host), so short ops wait for it;\n"                    \
    "  --graphs runs the step as one CUDA graph launch. --serving: the step runs\n"                \
    "  under a serving engine (vLLM-style): its per-step work (scheduling, inputs,\n"              \
    "  sampling, outputs, worker RPC; engine_time) is added to the forward, and a\n"               \
    "  prefill computes the logits of each sequence's last token only. --csv: one\n"               \
    "  row per op, the layer, step, GPU and host times, tokens/s and MFU on every\n"               \
    "  row (layer: the layer time); --md: the ops and the summary as markdown tables.\n"           \
    "  Training across GPUs: --dp N data-parallel replicas (their gradients\n"                     \
    "  all-reduced in 25 MB buckets behind the backward), --zero 0-3 (ZeRO: 1\n"                   \
    "  partitions the Adam state over the replicas, 2 the gradients too, 3 the\n"                  \
    "  weights too), --recompute (full activation recomputation: each layer\n"                     \
    "  keeps its input, its forward runs again in the backward). A training step\n"                \
    "  holds the optimizer step (Adam, 28 bytes per parameter moved).\n"                           \
    "  Pipelines: --pp N stages of layers/N layers each (Megatron-LM's 1F1B),\n"                   \
    "  --microbatches M per step (gradient accumulation without a pipeline): the\n"                \
    "  step is (M - 1) x the slowest stage plus one micro-batch through all of\n"                  \
    "  them (the bubble), each boundary's sends included. The tp x pp x dp GPUs\n"                 \
    "  fill nodes in Megatron's rank order: --gpus-per-node N (default 8) and\n"                   \
    "  --nic-gbps X, each GPU's network adapter in GB/s (default: the GPU's\n"                     \
    "  reference system, e.g. 25 for DGX A100, 50 for DGX H100; PCIe cards have\n"                 \
    "  none and need it once the GPUs span nodes); a group that spans nodes\n"                     \
    "  communicates at that rate.\n"                                                               \
    "  --gpu A,B,... or --gpu all: the configuration on each GPU, one table with one\n"            \
    "  row per GPU (step_time_ms, tokens_per_s, mfu_pct, memory_gb, source, note),\n"              \
    "  fastest first; a GPU that cannot run it (a dtype it lacks, too little memory,\n"            \
    "  no interconnect for --tp) says why in its note; --json: one object per GPU.\n"              \
    "  A model whose weights, gradients, optimizer state, activations and KV cache\n"              \
    "  do not fit the GPU's memory is refused (exit 2, with the breakdown) unless\n"               \
    "  --ignore-memory, which predicts it anyway.\n"
extern const char cmd_predict_gemm_help[];
extern const char cmd_predict_attention_help[];
extern const char cmd_predict_layer_help[];
extern const char cmd_predict_model_help[];

/* Matches argv[*i] against "--name VALUE" or "--name=VALUE". Returns false
 * if it is another flag. On a match *value is the value (NULL, with an
 * error printed, when it is missing) and *i points at the last consumed
 * argument. */
bool mcli_opt(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value,
              bool *bad);

/* Flags describing one transformer shape, each setting its model-config key
 * through tc_model_config_set (--hidden, --heads, --kv-heads,
 * --head-dim, --seq, --micro-batch, --tp, --ffn, --swiglu, --rmsnorm,
 * --attention, --dtype, --train, --inference, --no-causal, --layers,
 * --vocab). Returns 1 if argv[*i] was one, 0 if not, -1 after printing a
 * usage error (a value is missing), -2 after printing an input error (the
 * value is impossible: exit status 2). */
int mcli_shape_flag(const char *cmd, int argc, char **argv, int *i, struct tc_model_config *c);

/* The options predict model and advise share. */
struct mcli_model_opts {
    const char *gpu_id, *db, *config;
    bool analytical;
    int train;                   /* --train 1, --inference 0, else -1: the file's mode */
    int graphs;                  /* --graphs 1, --eager 0, else -1: the file's */
    bool serving;                /* --serving: the file's otherwise */
    int dtype;                   /* --dtype DT, else -1: the file's */
    struct tc_model_config over; /* --tp, --micro-batch, --seq, --dp (0: the file's) */
    bool recompute;              /* --recompute: the file's otherwise */
    bool zero_set;               /* --zero STAGE given: zero_stage */
    int zero_stage;
    struct tc_cluster cluster; /* --gpus-per-node, --nic-gbps (0: the GPU's defaults) */
};

/* Parses --gpu, --db, --config, --analytical, --train, --inference,
 * --graphs, --eager, --serving, --dtype, --tp, --micro-batch, --seq, --dp,
 * --pp, --microbatches, --zero, --recompute, --gpus-per-node and --nic-gbps
 * at argv[*i]
 * into o (set o->train, o->graphs and o->dtype to -1 first).
 * Returns 1 if argv[*i] was one, 0 if not, or minus the exit status after
 * printing the error (1 for a missing value, 2 for an impossible one). */
int mcli_model_opt(const char *cmd, int argc, char **argv, int *i, struct mcli_model_opts *o);

/* Loads o->config into *c, then applies o's overrides and its
 * --train/--inference. Returns 0 or an exit status after printing the
 * error. */
int mcli_load_config(const char *cmd, const struct mcli_model_opts *o, struct tc_model_config *c);

/* " pp=P xM" for a config with a pipeline or micro-batches (P stages, M
 * micro-batches a step), "" otherwise: the words a title adds after t=. */
void mcli_pipeline_words(const struct tc_model_config *c, char *buf, size_t len);

/* predict model (whole) or layer on each GPU of gpus ("a,b,c" or "all",
 * cli-gpus.h): one table, one row per GPU, fastest first; a GPU that
 * cannot run the configuration (a dtype it lacks, memory it does not have
 * unless ignore_memory) is a row saying why. cluster (may be NULL): the
 * nodes, its zeroed fields each GPU's defaults. Returns an exit status. */
int mcli_compare_model(const char *cmd, const char *gpus, bool analytical, const char *db,
                       const struct tc_model_config *cfg, bool whole,
                       const struct tc_cluster *cluster, long long decode, bool ignore_memory,
                       enum cli_format fmt);

/* predict attention of q on each GPU of gpus: one row per GPU (time_us,
 * tflops), fastest first. Returns an exit status. */
int mcli_compare_attention(const char *cmd, const char *gpus, bool analytical, const char *db,
                           const struct tc_attention_query *q, enum cli_format fmt);

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

/* Prints obj to stdout as every predict --json does (indented, 8 digits,
 * keys in order). */
void mcli_print_json(json_t *obj);
/* Whether arg asks for help (-h, --help). */
bool mcli_help_flag(const char *arg);

#endif
