/* tc_db_export_stream: the public form of db/'s export to an open stream,
 * so that the command's export (through its own temporary file) needs
 * nothing of db/'s internal header. */
#include "config.h"

#include "db.h"

TC_API int tc_db_export_stream(struct tc_db *db, const char *format, const char *gpu_id, FILE *out,
                               const char *name, int64_t *rows)
{
    if (!name)
        return tc_error(TC_ERR_INVALID, "tc_db_export_stream: missing argument");
    return tc_db_export_file(db, format, gpu_id, out, name, rows);
}
