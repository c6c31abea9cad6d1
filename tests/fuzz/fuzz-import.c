/* The importers (csv, cookbook, mamf) writing into a real database. The
 * first input byte picks the format; the rest is the file. Each input starts
 * from a fresh copy of an empty tilecast database. */
#include "config.h"

#include "fuzz-common.h"

#include "tc-internal.h"

static struct tc_specs *specs;
static char template_path[512], db_path[512];
static uint8_t *template_bytes;
static size_t template_size;

static void copy_template(void)
{
    FILE *f = fopen(db_path, "wb");

    if (!f || fwrite(template_bytes, 1, template_size, f) != template_size)
        abort();
    fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct tc_db *db;
    FILE *f;
    long n;

    fuzz_init_dir();
    if (tc_specs_load(NULL, &specs) < 0) {
        fprintf(stderr, "fuzz-import: %s\n", tc_last_error());
        abort();
    }
    snprintf(template_path, sizeof(template_path), "%s/template.db", fuzz_dir);
    snprintf(db_path, sizeof(db_path), "%s/import.db", fuzz_dir);
    if (tc_db_open(template_path, TC_DB_CREATE, &db) < 0) {
        fprintf(stderr, "fuzz-import: %s\n", tc_last_error());
        abort();
    }
    tc_db_close(db);
    /* WAL mode leaves the schema in the -wal file until a checkpoint; the
     * close checkpoints, so the main file alone is the template. */
    f = fopen(template_path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0)
        abort();
    rewind(f);
    template_size = (size_t)n;
    template_bytes = malloc(template_size);
    if (!template_bytes || fread(template_bytes, 1, template_size, f) != template_size)
        abort();
    fclose(f);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const formats[] = {"csv", "cookbook", "mamf"};
    struct tc_import_options opt = {0};
    struct tc_import_stats stats;
    const char *file;
    struct tc_db *db;
    int err;

    if (size < 1)
        return 0;
    file = fuzz_write("input.txt", data + 1, size - 1);
    copy_template();
    if (tc_db_open(db_path, TC_DB_READWRITE, &db) < 0) {
        fprintf(stderr, "fuzz-import: reopening the template: %s\n", tc_last_error());
        abort();
    }
    opt.gpu_id = "a100-sxm4-80gb";
    opt.specs = specs;
    opt.skip_untimed = data[0] & 0x10;
    if (data[0] & 0x20)
        opt.timing = "profiler-median";
    if (data[0] & 0x40)
        opt.dtype = "bf16";
    err = tc_db_import(db, formats[(data[0] & 0x0f) % 3], 1, &file, &opt, &stats);
    if (err < 0 && !*tc_last_error())
        abort(); /* every failure carries a message */
    if (err == TC_OK && tc_db_integrity_check(db) != TC_OK) {
        fprintf(stderr, "fuzz-import: an import left a database that fails its check: %s\n",
                tc_last_error());
        abort();
    }
    tc_db_close(db);
    return 0;
}
