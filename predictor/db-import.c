/* The public tc_db_import: the database layer's import with the caller's
 * spec set as its GPU lookup. It lives here, above db/, because specs are
 * the predictor's: db/ only asks for the spec of a GPU it lacks. */
#include "config.h"

#include "db.h"

static const struct tc_gpu *find_spec(const void *ctx, const char *gpu_id)
{
    return tc_specs_find(ctx, gpu_id);
}

TC_API int tc_db_import(struct tc_db *db, const char *format, size_t n_files,
                        const char *const *files, const struct tc_import_options *opt,
                        struct tc_import_stats *stats)
{
    const struct tc_specs *specs = opt ? opt->specs : NULL;

    return tc_db_import_lookup(db, format, n_files, files, opt, specs ? find_spec : NULL, specs,
                               stats);
}
