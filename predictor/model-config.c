/* The keys of a model config: their names, aliases, value types and ranges,
 * and the one setter (tc_model_config_set) that the YAML loader, the
 * command's shape flags and the Python binding's dicts all go through, so
 * that a key means the same, accepts the same values and fails with the
 * same error whichever way it arrives. README ("Model configs") lists them. */
#include "config.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "tc-internal.h"

enum key_type {
    KEY_INT,        /* an int64_t field within [min, max] */
    KEY_INT32,      /* an int32_t field within [min, max] */
    KEY_PROB,       /* a double field, a probability in [0, 1) */
    KEY_BOOL,       /* a bool field: true/yes/on/1 or false/no/off/0 */
    KEY_NAME,       /* the name, truncated to TC_NAME_MAX - 1 bytes */
    KEY_ACTIVATION, /* gelu, gelu_new or swiglu, into swiglu and gelu_new */
    KEY_NORM,       /* layernorm or rmsnorm, into rmsnorm */
    KEY_MODE,       /* training/train or inference/prefill, into training */
    KEY_DTYPE,
    KEY_ATTENTION,
};

#define FIELD(f) #f, offsetof(struct tc_model_config, f)

/* The minimum of kv_heads, head_dim, ffn and vocab is 0 because 0 is what
 * the header documents for them: derive the value (heads, hidden / heads,
 * the activation's rule) or leave the embedding out. Every route takes 0
 * for them, a flag as a file does (the flags used to start at 1, the file
 * at 0). The maxima are far above any published model and keep products
 * of sizes inside 64 bits. */
static const struct model_key {
    const char *key;
    enum key_type type;
    const char *field; /* the struct field the key sets */
    size_t offset;
    long long min, max;
} model_keys[] = {
    {"name", KEY_NAME, FIELD(name), 0, 0},
    {"hidden", KEY_INT, FIELD(hidden), 1, 1 << 20},
    {"heads", KEY_INT, FIELD(heads), 1, 1 << 16},
    {"kv_heads", KEY_INT, FIELD(kv_heads), 0, 1 << 16},
    {"head_dim", KEY_INT, FIELD(head_dim), 0, 1 << 16},
    {"ffn", KEY_INT, FIELD(ffn), 0, 1 << 22},
    {"activation", KEY_ACTIVATION, FIELD(swiglu), 0, 0},
    {"norm", KEY_NORM, FIELD(rmsnorm), 0, 0},
    {"layers", KEY_INT, FIELD(layers), 1, 1 << 16},
    {"vocab", KEY_INT, FIELD(vocab), 0, 1 << 24},
    {"seq", KEY_INT, FIELD(seq), 1, 1 << 24},
    {"micro_batch", KEY_INT, FIELD(micro_batch), 1, 1 << 20},
    {"tp", KEY_INT, FIELD(tp), 1, 1024},
    {"dtype", KEY_DTYPE, FIELD(dtype), 0, 0},
    {"attention", KEY_ATTENTION, FIELD(attention), 0, 0},
    {"mode", KEY_MODE, FIELD(training), 0, 0},
    {"causal", KEY_BOOL, FIELD(causal), 0, 0},
    {"tied_embeddings", KEY_BOOL, FIELD(tied_embeddings), 0, 0},
    {"graphs", KEY_BOOL, FIELD(graphs), 0, 0},
    {"serving", KEY_BOOL, FIELD(serving), 0, 0},
    {"dp", KEY_INT, FIELD(dp), 1, 1 << 20},
    {"zero_stage", KEY_INT, FIELD(zero_stage), 0, 3},
    {"recompute", KEY_BOOL, FIELD(recompute), 0, 0},
    {"rope", KEY_BOOL, FIELD(rope), 0, 0},
    {"attention_eager", KEY_BOOL, FIELD(attention_eager), 0, 0},
    {"pp", KEY_INT32, FIELD(pp), 1, 1 << 16},
    {"microbatches", KEY_INT32, FIELD(microbatches), 1, 1 << 20},
    {"dropout", KEY_PROB, FIELD(dropout), 0, 0},
    {"attention_dropout", KEY_PROB, FIELD(attention_dropout), 0, 0},
    {"num_labels", KEY_INT, FIELD(num_labels), 0, 1 << 20},
    /* The struct's own names for what activation, norm and mode say in
     * words: the Python binding returns a config as a dict of the struct's
     * fields (predict_model()["config"], advise's candidates), and such a
     * dict must read back in; a file or a flag may use them too. */
    {"swiglu", KEY_BOOL, FIELD(swiglu), 0, 0},
    {"gelu_new", KEY_BOOL, FIELD(gelu_new), 0, 0},
    {"rmsnorm", KEY_BOOL, FIELD(rmsnorm), 0, 0},
    {"training", KEY_BOOL, FIELD(training), 0, 0},
};

/* Other names for a key, accepted by every route: the names of a Hugging
 * Face config.json (what a model card publishes and a user copies), each of
 * which means exactly the field it maps to. */
static const struct {
    const char *alias, *key;
} model_aliases[] = {
    {"hidden_size", "hidden"},
    {"num_attention_heads", "heads"},
    {"num_key_value_heads", "kv_heads"},
    {"intermediate_size", "ffn"},
    {"num_hidden_layers", "layers"},
    {"vocab_size", "vocab"},
    /* BERT's, GPT-2's and GPT-NeoX's names of the two dropouts (OPT's are
     * the keys themselves: dropout, attention_dropout) */
    {"hidden_dropout_prob", "dropout"},
    {"attention_probs_dropout_prob", "attention_dropout"},
    {"resid_pdrop", "dropout"},
    {"attn_pdrop", "attention_dropout"},
    {"hidden_dropout", "dropout"},
};

/* Names the Python binding once took and the other routes never did,
 * refused by every route with the key to use instead: they follow no
 * published format, and some are ambiguous ("batch": the micro-batch or the
 * global batch? "mlp": a block, not an activation; "seq_length" is the
 * trained context in some config.json files, not the sequence of a step). */
static const struct {
    const char *name, *key;
} model_refused[] = {
    {"num_heads", "heads"},   {"num_layers", "layers"},  {"seq_len", "seq"},
    {"sequence", "seq"},      {"seq_length", "seq"},     {"micro_batch_size", "micro_batch"},
    {"batch", "micro_batch"}, {"tensor_parallel", "tp"}, {"impl", "attention"},
    {"train", "mode"},        {"mlp", "activation"},
};

static int unknown_key(const char *key)
{
    char known[512] = "";

    for (size_t i = 0; i < TC_ARRAY_SIZE(model_refused); i++)
        if (strcmp(key, model_refused[i].name) == 0)
            return tc_error(TC_ERR_INVALID, "unknown key '%s' (the key is %s)", key,
                            model_refused[i].key);
    for (size_t i = 0; i < TC_ARRAY_SIZE(model_keys); i++) {
        size_t used = strlen(known);

        tc_strlcpy(known + used, i ? ", " : "", sizeof(known) - used);
        used = strlen(known);
        tc_strlcpy(known + used, model_keys[i].key, sizeof(known) - used);
    }
    return tc_error(TC_ERR_INVALID, "unknown key '%s' (expected %s)", key, known);
}

static const struct model_key *find_key(const char *key)
{
    for (size_t i = 0; i < TC_ARRAY_SIZE(model_aliases); i++)
        if (strcmp(key, model_aliases[i].alias) == 0) {
            key = model_aliases[i].key;
            break;
        }
    for (size_t i = 0; i < TC_ARRAY_SIZE(model_keys); i++)
        if (strcmp(key, model_keys[i].key) == 0)
            return &model_keys[i];
    return NULL;
}

static bool parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};

    for (size_t i = 0; i < TC_ARRAY_SIZE(yes); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* One of two words into a bool. */
static int set_word(const char *key, const char *v, const char *no, const char *yes, bool *out)
{
    if (strcasecmp(v, yes) == 0)
        *out = true;
    else if (strcasecmp(v, no) == 0)
        *out = false;
    else
        return tc_error(TC_ERR_INVALID, "%s: '%s' (expected %s or %s)", key, v, no, yes);
    return TC_OK;
}

TC_API const char *tc_model_config_field(const char *key)
{
    const struct model_key *k;

    if (!key) {
        tc_error(TC_ERR_INVALID, "tc_model_config_field: no key");
        return NULL;
    }
    k = find_key(key);
    if (!k) {
        unknown_key(key);
        return NULL;
    }
    return k->field;
}

TC_API int tc_model_config_set(struct tc_model_config *cfg, const char *key, const char *value)
{
    const struct model_key *k;
    char *field;
    bool b;

    if (!cfg || !key || !value)
        return tc_error(TC_ERR_INVALID, "tc_model_config_set: no config, key or value");
    k = find_key(key);
    if (!k)
        return unknown_key(key);
    field = (char *)cfg + k->offset;
    switch (k->type) {
    case KEY_INT:
    case KEY_INT32: {
        long long x;

        if (!*value)
            return tc_error(TC_ERR_PARSE, "%s: no value (expected an integer)", key);
        if (tc_parse_i64(value, &x) < 0)
            return tc_error(TC_ERR_PARSE, "%s: '%s' is not an integer", key, value);
        if (x < k->min || x > k->max)
            return tc_error(TC_ERR_RANGE, "%s: %lld is out of range [%lld, %lld]", key, x, k->min,
                            k->max);
        if (k->type == KEY_INT32)
            *(int32_t *)(void *)field = (int32_t)x;
        else
            *(int64_t *)(void *)field = x;
        return TC_OK;
    }
    case KEY_PROB: {
        double x;

        if (!*value)
            return tc_error(TC_ERR_PARSE, "%s: no value (expected a probability)", key);
        if (tc_parse_double(value, &x) < 0)
            return tc_error(TC_ERR_PARSE, "%s: '%s' is not a number", key, value);
        /* p = 1 drops everything: PyTorch returns zeros, no model trains */
        if (!(x >= 0 && x < 1))
            return tc_error(TC_ERR_RANGE, "%s: %s is not a probability in [0, 1)", key, value);
        *(double *)(void *)field = x;
        return TC_OK;
    }
    case KEY_BOOL:
        if (!parse_bool(value, &b))
            return tc_error(TC_ERR_PARSE, "%s: '%s' is not a boolean (true or false)", key, value);
        *(bool *)(void *)field = b;
        return TC_OK;
    case KEY_NAME:
        tc_strlcpy(cfg->name, value, sizeof(cfg->name));
        return TC_OK;
    case KEY_ACTIVATION: {
        /* gelu_new: Hugging Face's name for GPT-2's tanh GeLU (ACT2FN) */
        bool swiglu = strcasecmp(value, "swiglu") == 0;
        bool gelu_new = strcasecmp(value, "gelu_new") == 0;

        if (!swiglu && !gelu_new && strcasecmp(value, "gelu") != 0)
            return tc_error(TC_ERR_INVALID, "%s: '%s' (expected gelu, gelu_new or swiglu)", key,
                            value);
        cfg->swiglu = swiglu;
        cfg->gelu_new = gelu_new;
        return TC_OK;
    }
    case KEY_NORM:
        return set_word(key, value, "layernorm", "rmsnorm", &cfg->rmsnorm);
    case KEY_MODE:
        if (strcasecmp(value, "training") == 0 || strcasecmp(value, "train") == 0)
            cfg->training = true;
        else if (strcasecmp(value, "inference") == 0 || strcasecmp(value, "prefill") == 0)
            cfg->training = false;
        else
            return tc_error(TC_ERR_INVALID, "%s: '%s' (expected training or inference)", key,
                            value);
        return TC_OK;
    case KEY_DTYPE: {
        enum tc_dtype dt;

        if (tc_dtype_parse(value, &dt) < 0)
            return tc_error_prefix(TC_ERR_INVALID, "%s", key);
        cfg->dtype = dt;
        return TC_OK;
    }
    case KEY_ATTENTION: {
        enum tc_attn_impl impl;

        /* attn_implementation="eager", Hugging Face's name for its unfused
         * modules (their scale and mask run apart from the softmax) */
        if (strcasecmp(value, "eager") == 0) {
            cfg->attention = TC_ATTN_UNFUSED;
            cfg->attention_eager = true;
            return TC_OK;
        }
        if (tc_attn_impl_parse(value, &impl) < 0)
            return tc_error_prefix(TC_ERR_INVALID, "%s", key);
        cfg->attention = impl;
        return TC_OK;
    }
    }
    return tc_error(TC_ERR_INVALID, "%s: no setter for this key", key);
}
