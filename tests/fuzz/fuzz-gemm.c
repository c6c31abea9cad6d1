/* The GEMM model on arbitrary shapes: any int64 dimensions, dtype, layout and
 * leading dimensions must give a finite prediction or an error, never
 * undefined behaviour (the sanitizers watch the products of dimensions). */
#include "config.h"

#include <math.h>

#include "fuzz-common.h"

#include "tc-internal.h"

static struct tc_specs *specs;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    if (tc_specs_load(NULL, &specs) < 0) {
        fprintf(stderr, "fuzz-gemm: %s\n", tc_last_error());
        abort();
    }
    return 0;
}

static int64_t take_i64(const uint8_t **data, size_t *size)
{
    uint64_t v = 0;
    size_t n = *size < 8 ? *size : 8;

    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)(*data)[i] << (8 * i);
    *data += n;
    *size -= n;
    /* Mostly realistic sizes, sometimes any 64-bit value (negative, huge). */
    if ((v & 3) != 0)
        return (int64_t)((v >> 2) % 100000);
    return (int64_t)v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tc_gemm_query q = {0};
    struct tc_gemm_prediction p;
    const struct tc_gpu *gpu;
    uint8_t sel;

    if (size < 2)
        return 0;
    sel = data[0];
    gpu = tc_specs_at(specs, data[1] % tc_specs_count(specs));
    data += 2;
    size -= 2;
    q.dtype = (enum tc_dtype)(sel % TC_DTYPE_COUNT);
    q.layout = (enum tc_layout)((sel >> 3) % TC_LAYOUT_COUNT);
    q.m = take_i64(&data, &size);
    q.n = take_i64(&data, &size);
    q.k = take_i64(&data, &size);
    q.batch = take_i64(&data, &size);
    if (sel & 0x20) {
        q.lda = take_i64(&data, &size);
        q.ldb = take_i64(&data, &size);
        q.ldc = take_i64(&data, &size);
    }
    if (tc_predict_gemm_analytical(gpu, &q, &p) == TC_OK) {
        if (!isfinite(p.time_us) || p.time_us <= 0 || !isfinite(p.tflops))
            abort(); /* an accepted shape gets a usable answer */
    } else if (!*tc_last_error()) {
        abort();
    }
    return 0;
}
