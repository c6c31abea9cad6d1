/* The GPU spec YAML parser (tc_specs_parse_file) and the consistency check. */
#include "config.h"

#include "fuzz-common.h"

#include "tc-internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init_dir();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("gpu.yaml", data, size);
    struct tc_gpu gpu;
    int err = tc_specs_parse_file(path, &gpu);

    if (err < 0) {
        if (!*tc_last_error())
            abort(); /* every failure carries a message */
        return 0;
    }
    if (memchr(gpu.id, '\0', sizeof(gpu.id)) == NULL ||
        memchr(gpu.name, '\0', sizeof(gpu.name)) == NULL ||
        memchr(gpu.flags, '\0', sizeof(gpu.flags)) == NULL)
        abort(); /* strings are always terminated */
    (void)tc_gpu_check(&gpu);
    return 0;
}
