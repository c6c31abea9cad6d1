/* The host CPU backend: real measurements through CBLAS (sgemm for fp32,
 * dgemm for fp64; other dtypes are recorded as unsupported), with the same
 * harness as the GPU backends. Wall clock on CLOCK_MONOTONIC per
 * repetition, and a write of a buffer larger than the last-level cache
 * before each repetition so that every repetition starts cold, as on GPUs. */
#include "config.h"

#include <cblas.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "collector.h"
#include "tc-internal.h"

#define NBUF 5

struct tc_backend {
    void *buf[NBUF];
    size_t cap[NBUF];       /* bytes allocated */
    int filled_dtype[NBUF]; /* dtype of the random data, -1 if none */
    size_t used[NBUF];      /* bytes of each buffer the prepared shape touches */
    unsigned char *flush;
    size_t flush_bytes;
    unsigned flush_round;
    struct tc_shape shape; /* prepared */
    uint64_t seed;
};

/* Largest cache of cpu0 from sysfs (the last level); 32 MiB if unknown. */
static size_t llc_bytes(void)
{
    size_t best = 0;

    for (int i = 0; i < 16; i++) {
        char path[96], text[64];
        FILE *f;
        unsigned long long v;
        char unit = 0;

        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (!(f = fopen(path, "r")))
            break;
        if (fgets(text, sizeof(text), f) && sscanf(text, "%llu%c", &v, &unit) >= 1) {
            if (unit == 'K')
                v <<= 10;
            else if (unit == 'M')
                v <<= 20;
            if (v > best)
                best = (size_t)v;
        }
        fclose(f);
    }
    return best ? best : (size_t)32 << 20;
}

static void read_model_name(char *buf, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];

    tc_strlcpy(buf, "host CPU", len);
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');

        if (colon && !strncmp(line, "model name", 10)) {
            colon++;
            while (*colon == ' ')
                colon++;
            colon[strcspn(colon, "\n")] = '\0';
            tc_strlcpy(buf, colon, len);
            break;
        }
    }
    fclose(f);
}

static int cpu_open(int device, struct tc_backend **out, struct tc_backend_info *info)
{
    struct tc_backend *b;
    struct utsname un;

    if (device != 0)
        return tc_error(TC_ERR_NOT_FOUND, "cpu backend: only device 0 exists (got %d)", device);
    b = calloc(1, sizeof(*b));
    if (!b)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < NBUF; i++)
        b->filled_dtype[i] = -1;
    /* 1.5x the LLC: writing this much evicts every operand line */
    b->flush_bytes = llc_bytes() * 3 / 2;
    b->flush = malloc(b->flush_bytes);
    if (!b->flush) {
        free(b);
        return tc_error(TC_ERR_NOMEM, "cpu backend: cannot allocate the cache-flush buffer");
    }
    b->seed = 0x74696c65ULL;
    memset(info, 0, sizeof(*info));
    info->name = "cpu";
    info->arch_known = true;
    info->vendor = TC_VENDOR_CPU;
    info->arch = TC_ARCH_CPU;
    read_model_name(info->device_name, sizeof(info->device_name));
    if (uname(&un) == 0)
        snprintf(info->driver_version, sizeof(info->driver_version), "linux %.50s", un.release);
    snprintf(info->runtime_version, sizeof(info->runtime_version), "%ld online cpus",
             sysconf(_SC_NPROCESSORS_ONLN));
#ifdef HAVE_OPENBLAS_CONFIG
    tc_strlcpy(info->blas_version, openblas_get_config(), sizeof(info->blas_version));
#else
    tc_strlcpy(info->blas_version, "cblas", sizeof(info->blas_version));
#endif
#if defined(__x86_64__) || defined(__SSE2__)
    tc_strlcpy(info->timing, "wallclock-median-clflush", sizeof(info->timing));
#else
    tc_strlcpy(info->timing, "wallclock-median-llcflush", sizeof(info->timing));
#endif
    info->flush_bytes = (int64_t)b->flush_bytes;
    *out = b;
    return TC_OK;
}

static void cpu_close(struct tc_backend *b)
{
    if (!b)
        return;
    for (int i = 0; i < NBUF; i++)
        free(b->buf[i]);
    free(b->flush);
    free(b);
}

/* Grows buffer i to `bytes` and fills it with random data of dtype when it
 * was grown or last filled with another type. */
static int ensure(struct tc_backend *b, int i, size_t bytes, enum tc_dtype dtype,
                  struct tc_outcome *oc)
{
    if (bytes > b->cap[i]) {
        free(b->buf[i]);
        b->cap[i] = 0;
        b->filled_dtype[i] = -1;
        b->buf[i] = malloc(bytes);
        if (!b->buf[i]) {
            oc->status = TC_STATUS_OOM;
            snprintf(oc->message, sizeof(oc->message), "cannot allocate %.1f MiB of host memory",
                     (double)bytes / 1048576.0);
            return TC_OK;
        }
        b->cap[i] = bytes;
    }
    if (b->filled_dtype[i] != (int)dtype) {
        tc_random_fill(b->buf[i], b->cap[i] / (size_t)tc_dtype_bytes(dtype), dtype,
                       b->seed + (uint64_t)i);
        b->filled_dtype[i] = (int)dtype;
    }
    return TC_OK;
}

/* elements a*b*c*d, or 0 on overflow of a size_t byte count */
static size_t elems(int64_t a, int64_t b, int64_t c, int64_t d, int bytes)
{
    double e = (double)a * (double)b * (double)c * (double)d * bytes;

    return e < 0x1p62 ? (size_t)a * (size_t)b * (size_t)c * (size_t)d * (size_t)bytes : 0;
}

static int cpu_prepare(struct tc_backend *b, const struct tc_shape *s, struct tc_outcome *oc)
{
    int eb;
    size_t sizes[NBUF] = {0};

    oc->status = TC_STATUS_OK;
    oc->message[0] = '\0';
    b->shape = *s;
    if (s->kind == TC_SHAPE_ATTENTION && (s->impl != TC_ATTN_UNFUSED || s->backward)) {
        oc->status = TC_STATUS_UNSUPPORTED;
        snprintf(oc->message, sizeof(oc->message),
                 "cpu backend measures unfused attention, forward only (not %s%s)",
                 tc_attn_impl_name(s->impl), s->backward ? " backward" : "");
        return TC_OK;
    }
    if (s->dtype != TC_DTYPE_FP32 && (s->dtype != TC_DTYPE_FP64 || s->kind == TC_SHAPE_ATTENTION)) {
        oc->status = TC_STATUS_UNSUPPORTED;
        snprintf(oc->message, sizeof(oc->message),
                 "cpu backend measures fp32 (sgemm) and fp64 (dgemm) GEMMs and fp32 attention, "
                 "not %s",
                 tc_dtype_name(s->dtype));
        return TC_OK;
    }
    eb = tc_dtype_bytes(s->dtype);
    if (s->kind == TC_SHAPE_ATTENTION) {
        sizes[0] = elems(s->batch, s->heads, s->seq_q, s->head_dim, eb);     /* Q */
        sizes[1] = elems(s->batch, s->kv_heads, s->seq_kv, s->head_dim, eb); /* K */
        sizes[2] = sizes[1];                                                 /* V */
        sizes[3] = elems(s->batch, s->heads, s->seq_q, s->seq_kv, eb);       /* P */
        sizes[4] = sizes[0];                                                 /* O */
    } else {
        sizes[0] = elems(s->m, s->k, s->batch, 1, eb);
        sizes[1] = elems(s->k, s->n, s->batch, 1, eb);
        sizes[2] = elems(s->m, s->n, s->batch, 1, eb);
    }
    {
        /* malloc succeeds lazily on overcommitting systems and the OOM
         * killer would end the whole collection: refuse what cannot fit */
        double need = 0, phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
        int64_t dims[] = {s->m, s->n, s->k, s->seq_q, s->seq_kv, s->head_dim};

        for (int i = 0; i < NBUF; i++)
            need += (double)sizes[i];
        if (phys > 0 && need > 0.75 * phys) {
            oc->status = TC_STATUS_OOM;
            snprintf(oc->message, sizeof(oc->message),
                     "needs %.1f GiB, more than 3/4 of the host's %.1f GiB", need / 1073741824.0,
                     phys / 1073741824.0);
            return TC_OK;
        }
        for (size_t i = 0; i < TC_ARRAY_SIZE(dims); i++)
            if (dims[i] > INT_MAX) {
                oc->status = TC_STATUS_UNSUPPORTED;
                snprintf(oc->message, sizeof(oc->message),
                         "a dimension of %" PRId64 " exceeds CBLAS's int", dims[i]);
                return TC_OK;
            }
    }
    for (int i = 0; i < NBUF; i++)
        b->used[i] = sizes[i];
    for (int i = 0; i < NBUF; i++) {
        if (i < 3 && !sizes[i]) {
            oc->status = TC_STATUS_OOM;
            tc_strlcpy(oc->message, "operand size overflows", sizeof(oc->message));
            return TC_OK;
        }
        if (sizes[i] && ensure(b, i, sizes[i], s->dtype, oc) == TC_OK && oc->status != TC_STATUS_OK)
            return TC_OK;
    }
    return TC_OK;
}

/* where the flush's read-back goes, so the compiler keeps the stores */
static volatile unsigned char flush_sink;

#if defined(__x86_64__) || defined(__SSE2__)
/* Evicts exactly the prepared shape's operands from every cache level
 * (clflush acts on the whole coherence domain), so each repetition starts
 * cold as with a buffer sweep, at a cost proportional to the shape's
 * footprint instead of 1.5x the last-level cache: a sweep of that buffer
 * costs more than the kernel for shapes under ~10 ms, which made the
 * harness overhead (wall / kernel time) 1.4 on 512-1024 shapes. */
static void flush_cache(struct tc_backend *b)
{
    for (int i = 0; i < NBUF; i++) {
        const char *p = b->buf[i];

        for (size_t off = 0; p && off < b->used[i]; off += 64)
            _mm_clflush(p + off);
    }
    _mm_mfence();
    flush_sink = 0;
}
#else
static void flush_cache(struct tc_backend *b)
{
    unsigned char acc = 0;

    memset(b->flush, (int)(++b->flush_round & 0xff), b->flush_bytes);
    /* read back one byte per page so the stores cannot be elided */
    for (size_t i = 0; i < b->flush_bytes; i += 4096)
        acc ^= b->flush[i];
    flush_sink = acc;
}
#endif

static void run_gemm(struct tc_backend *b)
{
    const struct tc_shape *s = &b->shape;
    bool ta = s->layout == TC_LAYOUT_TN || s->layout == TC_LAYOUT_TT;
    bool tb = s->layout == TC_LAYOUT_NT || s->layout == TC_LAYOUT_TT;
    /* row-major: A stored m x k (N) or k x m (T); B stored k x n (N) or n x k (T) */
    int lda = (int)(ta ? s->m : s->k), ldb = (int)(tb ? s->k : s->n), ldc = (int)s->n;
    size_t sa = (size_t)(s->m * s->k), sb = (size_t)(s->k * s->n), sc = (size_t)(s->m * s->n);

    for (int64_t i = 0; i < s->batch; i++) {
        if (s->dtype == TC_DTYPE_FP64)
            cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                        tb ? CblasTrans : CblasNoTrans, (int)s->m, (int)s->n, (int)s->k, 1.0,
                        (const double *)b->buf[0] + (size_t)i * sa, lda,
                        (const double *)b->buf[1] + (size_t)i * sb, ldb, 0.0,
                        (double *)b->buf[2] + (size_t)i * sc, ldc);
        else
            cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                        tb ? CblasTrans : CblasNoTrans, (int)s->m, (int)s->n, (int)s->k, 1.0f,
                        (const float *)b->buf[0] + (size_t)i * sa, lda,
                        (const float *)b->buf[1] + (size_t)i * sb, ldb, 0.0f,
                        (float *)b->buf[2] + (size_t)i * sc, ldc);
    }
}

/* Row-wise softmax of the scores with the 1/sqrt(d) scale and, when causal,
 * the mask aligned to the end of the key sequence (decoding convention). */
static void softmax_rows(float *p, int64_t rows, int64_t sq, int64_t skv, int64_t d, bool causal)
{
    float scale = 1.0f / sqrtf((float)d);

    for (int64_t r = 0; r < rows; r++) {
        float *row = p + (size_t)r * (size_t)skv;
        int64_t q = r % sq, valid = causal ? q + 1 + (skv - sq) : skv;
        float mx = -INFINITY, sum = 0;

        if (valid > skv)
            valid = skv;
        if (valid < 0)
            valid = 0;
        for (int64_t j = 0; j < valid; j++)
            mx = fmaxf(mx, row[j] * scale);
        for (int64_t j = 0; j < valid; j++) {
            row[j] = expf(row[j] * scale - mx);
            sum += row[j];
        }
        for (int64_t j = 0; j < valid; j++)
            row[j] /= sum;
        for (int64_t j = valid; j < skv; j++)
            row[j] = 0;
    }
}

static void run_attention(struct tc_backend *b, double *parts_us)
{
    const struct tc_shape *s = &b->shape;
    int64_t bh = s->batch * s->heads, group = s->heads / s->kv_heads;
    size_t qs = (size_t)(s->seq_q * s->head_dim), ks = (size_t)(s->seq_kv * s->head_dim);
    size_t ps = (size_t)(s->seq_q * s->seq_kv);
    const float *q = b->buf[0], *k = b->buf[1], *v = b->buf[2];
    float *p = b->buf[3], *o = b->buf[4];
    double t0 = tc_now_s(), t1, t2;

    for (int64_t i = 0; i < bh; i++) {
        /* query head i reads kv head i / group of its batch entry (GQA) */
        int64_t kv = (i / s->heads) * s->kv_heads + (i % s->heads) / group;

        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)s->seq_q, (int)s->seq_kv,
                    (int)s->head_dim, 1.0f, q + (size_t)i * qs, (int)s->head_dim,
                    k + (size_t)kv * ks, (int)s->head_dim, 0.0f, p + (size_t)i * ps,
                    (int)s->seq_kv);
    }
    t1 = tc_now_s();
    softmax_rows(p, bh * s->seq_q, s->seq_q, s->seq_kv, s->head_dim, s->causal);
    t2 = tc_now_s();
    for (int64_t i = 0; i < bh; i++) {
        int64_t kv = (i / s->heads) * s->kv_heads + (i % s->heads) / group;

        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->seq_q, (int)s->head_dim,
                    (int)s->seq_kv, 1.0f, p + (size_t)i * ps, (int)s->seq_kv, v + (size_t)kv * ks,
                    (int)s->head_dim, 0.0f, o + (size_t)i * qs, (int)s->head_dim);
    }
    parts_us[0] = (t1 - t0) * 1e6;
    parts_us[1] = (t2 - t1) * 1e6;
    parts_us[2] = (tc_now_s() - t2) * 1e6;
}

static int cpu_run(struct tc_backend *b, int reps, struct tc_rep_times *t, struct tc_outcome *oc)
{
    oc->status = TC_STATUS_OK;
    t->group = 1; /* CLOCK_MONOTONIC resolves any call: never grouped */
    for (int r = 0; r < reps; r++) {
        double t0 = tc_now_s();

        flush_cache(b);
        t->untimed_us += (tc_now_s() - t0) * 1e6;
        t0 = tc_now_s();
        if (b->shape.kind == TC_SHAPE_ATTENTION) {
            double parts[3];

            run_attention(b, parts);
            for (int p = 0; p < 3; p++)
                t->part_us[p][r] = parts[p];
        } else {
            run_gemm(b);
        }
        t->total_us[r] = (tc_now_s() - t0) * 1e6;
    }
    return TC_OK;
}

static void cpu_algo(struct tc_backend *b, struct tc_gemm_row *row)
{
    tc_strlcpy(row->algo, b->shape.dtype == TC_DTYPE_FP64 ? "cblas_dgemm" : "cblas_sgemm",
               sizeof(row->algo));
}

static void cpu_clocks(struct tc_backend *b, char *json, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    double mhz_sum = 0;
    int cpus = 0;
    long temp_mc = -1;

    if (f) {
        while (fgets(line, sizeof(line), f)) {
            double mhz;

            if (!strncmp(line, "cpu MHz", 7) && sscanf(strchr(line, ':') + 1, "%lf", &mhz) == 1) {
                mhz_sum += mhz;
                cpus++;
            }
        }
        fclose(f);
    }
    if ((f = fopen("/sys/class/thermal/thermal_zone0/temp", "r"))) {
        if (fscanf(f, "%ld", &temp_mc) != 1)
            temp_mc = -1;
        fclose(f);
    }
    if (cpus && temp_mc >= 0)
        snprintf(json, len, "{\"cpu_mhz_mean\":%.0f,\"temp_c\":%.1f}", mhz_sum / cpus,
                 (double)temp_mc / 1000.0);
    else if (cpus)
        snprintf(json, len, "{\"cpu_mhz_mean\":%.0f}", mhz_sum / cpus);
    else
        snprintf(json, len, "{}");
}

void *tc_backend_cpu_buffer(struct tc_backend *b, int i)
{
    return b && i >= 0 && i < NBUF ? b->buf[i] : NULL;
}

const struct tc_backend_ops tc_backend_cpu = {
    .name = "cpu",
    .open = cpu_open,
    .prepare = cpu_prepare,
    .run = cpu_run,
    .algo = cpu_algo,
    .clocks = cpu_clocks,
    .close = cpu_close,
};
