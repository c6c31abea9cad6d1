/* The parser of a stored calibration (the params_json column of a database's
 * calibration table): a shipped database hands it to the predictor, so it is
 * untrusted input. An accepted text must format back and parse again. */
#include "config.h"

#include "fuzz-common.h"

#include "calibrate.h"
#include "tc-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    struct tc_calib_params cp, again;
    static char buf[1 << 16];

    if (tc_calib_params_parse(text, &cp) == TC_OK) {
        if (memchr(cp.model_version, '\0', sizeof(cp.model_version)) == NULL ||
            memchr(cp.runs, '\0', sizeof(cp.runs)) == NULL || cp.n_kernels < 0 ||
            cp.n_kernels > TC_CALIB_MAX_KERNELS)
            abort();
        if (tc_calib_params_format(&cp, buf, sizeof(buf)) == TC_OK &&
            tc_calib_params_parse(buf, &again) != TC_OK) {
            fprintf(stderr, "fuzz-calibration: formatted parameters do not parse back: %s\n%s\n",
                    tc_last_error(), buf);
            abort();
        }
    } else if (!*tc_last_error()) {
        abort();
    }
    free(text);
    return 0;
}
