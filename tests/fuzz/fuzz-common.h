/* Helpers shared by the libFuzzer harnesses: each harness feeds one input to
 * one parser and must return normally (no exit, no abort) whatever the input. */
#ifndef TC_FUZZ_COMMON_H
#define TC_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A per-process scratch directory: the parsers under test read files, and
 * several fuzzing jobs may run at once. */
static char fuzz_dir[256] __attribute__((unused));

static inline void fuzz_init_dir(void)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/tilecast-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(fuzz_dir)) {
        perror("mkdtemp");
        abort(); /* set-up failure, not a finding */
    }
}

/* Writes data to <scratch>/<name> and returns the path (static buffer). */
static inline const char *fuzz_write(const char *name, const uint8_t *data, size_t size)
{
    static char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", fuzz_dir, name);
    f = fopen(path, "wb");
    if (!f) {
        perror(path);
        abort();
    }
    if (size && fwrite(data, 1, size, f) != size) {
        perror(path);
        abort();
    }
    fclose(f);
    return path;
}

/* Copies data into a NUL-terminated heap string (parsers take C strings). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
