/* The model-config YAML parser, then the decomposition and the model
 * prediction of whatever it accepts (sizes multiply: overflow hides there). */
#include "config.h"

#include "fuzz-common.h"

#include "tc-internal.h"

static struct tc_specs *specs;
static struct tc_predictor *predictor;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init_dir();
    if (tc_specs_load(NULL, &specs) < 0) {
        fprintf(stderr, "fuzz-model-config: %s\n", tc_last_error());
        abort();
    }
    predictor = tc_predictor_new(specs);
    if (!predictor)
        abort();
    tc_predictor_set_analytical(predictor, true);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("model.yaml", data, size);
    struct tc_model_config cfg;
    struct tc_model_prediction *mp = NULL;
    const struct tc_gpu *gpu;

    tc_model_config_defaults(&cfg);
    if (tc_model_config_load(path, &cfg) < 0) {
        if (!*tc_last_error())
            abort();
        return 0;
    }
    if (tc_model_config_resolve(&cfg) < 0)
        return 0;
    (void)tc_model_params(&cfg);
    gpu = tc_specs_at(specs, size % tc_specs_count(specs));
    if (tc_predict_model(predictor, gpu, &cfg, &mp) == TC_OK) {
        for (size_t i = 0; i < mp->n_ops; i++)
            if (memchr(mp->ops[i].name, '\0', sizeof(mp->ops[i].name)) == NULL)
                abort();
    }
    tc_model_prediction_free(mp);
    return 0;
}
