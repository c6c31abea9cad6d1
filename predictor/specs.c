/* STUB: to be implemented. */
#include "config.h"

#include "tc-internal.h"

TC_API struct tc_specs * tc_specs_load(const char *path)
{
    tc_error(TC_ERR_UNSUPPORTED, "tc_specs_load: not implemented yet");
    return NULL;
}

TC_API int tc_specs_add_dir(struct tc_specs *specs, const char *dir)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_specs_add_dir: not implemented yet");
}

TC_API int tc_specs_parse_file(const char *file, struct tc_gpu *out)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_specs_parse_file: not implemented yet");
}

TC_API int tc_gpu_check(const struct tc_gpu *gpu)
{
    return tc_error(TC_ERR_UNSUPPORTED, "tc_gpu_check: not implemented yet");
}

TC_API void tc_specs_free(struct tc_specs *specs)
{
}

TC_API size_t tc_specs_count(const struct tc_specs *specs)
{
    return 0;
}

TC_API const struct tc_gpu * tc_specs_at(const struct tc_specs *specs, size_t index)
{
    tc_error(TC_ERR_UNSUPPORTED, "tc_specs_at: not implemented yet");
    return NULL;
}

TC_API const struct tc_gpu * tc_specs_find(const struct tc_specs *specs, const char *id)
{
    tc_error(TC_ERR_UNSUPPORTED, "tc_specs_find: not implemented yet");
    return NULL;
}
