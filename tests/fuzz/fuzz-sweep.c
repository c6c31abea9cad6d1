/* The collector's sweep YAML parser and shape expansion (tc_sweep_parse). */
#include "config.h"

#include "fuzz-common.h"

#include "collector.h"
#include "tc-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tc_sweep *sw = tc_sweep_parse((const char *)data, size, "fuzz.yaml");
    const struct tc_shape *shapes;
    size_t n;
    char text[256];

    if (!sw) {
        if (!*tc_last_error())
            abort(); /* every failure carries a message */
        return 0;
    }
    n = tc_sweep_count(sw);
    shapes = tc_sweep_shapes(sw);
    if (n > TC_SWEEP_MAX_SHAPES || (n && !shapes))
        abort();
    for (size_t i = 0; i < n && i < 64; i++) {
        tc_shape_format(&shapes[i], text, sizeof(text));
        (void)tc_shape_flops(&shapes[i]);
        if (i && tc_shape_cmp(&shapes[i], &shapes[i - 1]) == 0)
            abort(); /* expansion de-duplicates */
    }
    (void)tc_sweep_name(sw);
    (void)tc_sweep_hash(sw);
    tc_sweep_free(sw);
    return 0;
}
