/* The GPU backend: cuBLASLt on NVIDIA (built with TC_GPU_CUDA) and, through
 * the name mapping of hip-map.h, hipBLASLt on AMD (TC_GPU_HIP).
 *
 * GEMMs and strided batched GEMMs go through the library's heuristic (the
 * algorithm a framework would get), and the chosen algorithm's tile,
 * stages, split-K, swizzle and cluster are recorded. Unfused attention is
 * scores GEMM + a softmax kernel + values GEMM, each part timed with its own
 * events. Fused attention (impl cudnn) is cuDNN's SDPA graph, forward or
 * backward (cudnn-sdpa.c), one execution between the events, with the
 * engine cuDNN chose recorded. The softmax and the backend's other kernels
 * are CUDA C compiled
 * at run time by NVRTC (hipRTC) for the device at hand; the driver-API
 * entry points come from dlopen("libcuda.so.1"), so the build machine needs
 * no driver.
 *
 * Timing: per repetition an untimed read of a buffer of twice the L2 size
 * (the flush, tc_flush), then an event pair around the work (for kernels
 * too short for the events, a group of launches: gpu_run); one host
 * synchronisation per batch of repetitions. Row-major problems map to
 * cuBLASLt's column-major ones as C^T = B^T A^T. Only APIs present in CUDA
 * 11.8 are named; newer algorithm attributes are queried by number and
 * simply absent on older libraries. */
#include "config.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(TC_GPU_HIP)
#include "hip-map.h"
#define BACKEND_NAME "hip"
#define BACKEND_SYMBOL tc_backend_hip
#else
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nvrtc.h>
#define BACKEND_NAME "cuda"
#define BACKEND_SYMBOL tc_backend_cuda
#endif

#include "collector.h"
#include "tc-internal.h"

/* cuDNN's fused attention (impl cudnn): the cuda module of a build that
 * found cuDNN (meson option cudnn); the hip backend has none. */
#if defined(TC_HAVE_CUDNN) && !defined(TC_GPU_HIP)
#define WITH_CUDNN 1
#include "cudnn-sdpa.h"
#define FUSED_VERSION(b) tc_fused_version((b)->dnn)
#else
#define WITH_CUDNN 0
#define FUSED_VERSION(b) ""
#if defined(TC_GPU_HIP)
#define NO_FUSED "the hip backend has no fused attention (cuDNN is NVIDIA's; impl unfused is)"
#else
#define NO_FUSED                                                                                   \
    "this build has no cuDNN fused attention (meson option cudnn: the CUDA toolkit's "             \
    "cudnn_graph.h and libcudnn were not found)"
#endif
#endif

#define MAX_REPS 256 /* the harness's batch limit */
/* Grouped launches queued at most before the host waits for the device:
 * well within the driver's launch queue. */
#define GROUP_QUEUE_LAUNCHES 256
#define WORKSPACE_BYTES ((size_t)32 << 20)
#define STAGING_BYTES ((size_t)16 << 20)

/* ------------------------------------------------------------------------ */
/* Kernel loading                                                            */
/* ------------------------------------------------------------------------ */

#if defined(TC_GPU_HIP)
typedef hipModule_t kmodule;
typedef hipFunction_t kfunction;

struct driver {
    int loaded;
};

static int driver_load(struct driver *d, char *msg, size_t len)
{
    d->loaded = 1;
    return 0;
}

static int module_load(struct driver *d, const void *image, kmodule *m)
{
    return hipModuleLoadData(m, image) == hipSuccess ? 0 : -1;
}

static int module_function(struct driver *d, kmodule m, const char *name, kfunction *f)
{
    return hipModuleGetFunction(f, m, name) == hipSuccess ? 0 : -1;
}

static int launch(struct driver *d, kfunction f, unsigned grid, unsigned block, cudaStream_t stream,
                  void **args)
{
    return hipModuleLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, stream, args, NULL) == hipSuccess
               ? 0
               : -1;
}

static void module_unload(struct driver *d, kmodule m)
{
    hipModuleUnload(m);
}

static void driver_unload(struct driver *d)
{
}
#else
/* Driver API through dlopen: CUresult is an int enum (0 = success); the
 * module and function handles are opaque pointers. */
typedef void *kmodule;
typedef void *kfunction;
typedef int (*cu_module_load_fn)(kmodule *, const void *);
typedef int (*cu_module_get_fn)(kfunction *, kmodule, const char *);
typedef int (*cu_launch_fn)(kfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, void *, void **, void **);
typedef int (*cu_module_unload_fn)(kmodule);

struct driver {
    void *lib;
    cu_module_load_fn load;
    cu_module_get_fn get;
    cu_launch_fn launch;
    cu_module_unload_fn unload;
};

#define LOAD_SYM(fn, lib, name)                                                                    \
    do {                                                                                           \
        void *p_ = dlsym((lib), (name));                                                           \
        memcpy(&(fn), &p_, sizeof(p_));                                                            \
    } while (0)

static int driver_load(struct driver *d, char *msg, size_t len)
{
    d->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d->lib) {
        snprintf(msg, len, "cannot load libcuda.so.1: %s", dlerror());
        return -1;
    }
    LOAD_SYM(d->load, d->lib, "cuModuleLoadData");
    LOAD_SYM(d->get, d->lib, "cuModuleGetFunction");
    LOAD_SYM(d->launch, d->lib, "cuLaunchKernel");
    LOAD_SYM(d->unload, d->lib, "cuModuleUnload");
    if (!d->load || !d->get || !d->launch || !d->unload) {
        snprintf(msg, len, "libcuda.so.1 lacks the module API");
        return -1;
    }
    return 0;
}

static int module_load(struct driver *d, const void *image, kmodule *m)
{
    return d->load(m, image) == 0 ? 0 : -1;
}

static int module_function(struct driver *d, kmodule m, const char *name, kfunction *f)
{
    return d->get(f, m, name) == 0 ? 0 : -1;
}

static int launch(struct driver *d, kfunction f, unsigned grid, unsigned block, cudaStream_t stream,
                  void **args)
{
    return d->launch(f, grid, 1, 1, block, 1, 1, 0, (void *)stream, args, NULL) == 0 ? 0 : -1;
}

static void module_unload(struct driver *d, kmodule m)
{
    d->unload(m);
}

static void driver_unload(struct driver *d)
{
    if (d->lib)
        dlclose(d->lib);
}
#endif

/* ------------------------------------------------------------------------ */

/* One cuBLASLt problem, ready to run. */
struct plan {
    bool ready;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
    size_t workspace;
    enum tc_dtype dtype;
    /* device pointers, in cuBLASLt's order: first operand, second, output */
    const void *x, *y;
    void *d;
};

struct tc_backend {
    int device;
    cudaStream_t stream;
    cublasLtHandle_t lt;
    void *workspace;
    void *flush;
    size_t flush_bytes;
    unsigned flush_round;
    struct tc_devbufs bufs; /* operands, kept across shapes */
    struct tc_dev_allocator alloc;
    size_t buf_bytes, buf_limit; /* held in bufs; the test limit (0: none) */
    void *staging;
    cudaEvent_t ev[MAX_REPS][4];
    bool events;
    struct driver drv;
    kmodule module;
    kfunction softmax, spin, flush_kernel;
    int sms;
    bool have_kernels;
    char kernels_error[192];
    double enqueue_us; /* host time to queue one launch, at most (grouping) */
    struct tc_shape shape;
    struct plan gemm, scores, values;
    bool fused; /* the prepared shape runs cuDNN's fused attention */
#if WITH_CUDNN
    struct tc_fused *dnn;
#endif
    char run_error[192];
    int arch_major, arch_minor;
    char arch_name[64];
};

static void set_outcome(struct tc_outcome *oc, enum tc_status status, const char *fmt, ...)
    TC_PRINTF(3, 4);

static void set_outcome(struct tc_outcome *oc, enum tc_status status, const char *fmt, ...)
{
    va_list ap;

    oc->status = status;
    va_start(ap, fmt);
    vsnprintf(oc->message, sizeof(oc->message), fmt, ap);
    va_end(ap);
}

static int cuda_fail(cudaError_t e, const char *what)
{
    return tc_error(TC_ERR_DEVICE, BACKEND_NAME " backend: %s: %s", what, cudaGetErrorString(e));
}

#if !defined(TC_GPU_HIP)
/* libnvrtc dlopens its builtins library (libnvrtc-builtins.so.MAJOR.MINOR)
 * by name when it first compiles, through the loader's search path only:
 * on a runfile install without a loader config that fails although this
 * module's RUNPATH (collector/meson.build) found libnvrtc itself. Loading
 * it from here first, where that RUNPATH applies, makes libnvrtc's dlopen
 * find the copy already loaded. A failure is left for NVRTC to report. */
static void preload_nvrtc_builtins(void)
{
    static bool done;
    int major = 0, minor = 0;
    char name[64];

    if (done)
        return;
    done = true;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        return;
    snprintf(name, sizeof(name), "libnvrtc-builtins.so.%d.%d", major, minor);
    (void)dlopen(name, RTLD_NOW | RTLD_GLOBAL);
}
#endif

/* Compiles the kernels for `arch` ("sm_90", "gfx90a"). Needs the runtime
 * compiler only, no device. On success *image (caller frees) holds the
 * binary; otherwise err says why. */
static int compile_kernels(const char *arch, char **image, size_t *size, char *err, size_t len)
{
    nvrtcProgram prog;
    char opt[96];
    const char *opts[2];
    int nopts = 2, rc = -1;
    char *log = NULL;

    *image = NULL;
    *size = 0;
#if defined(TC_GPU_HIP)
    snprintf(opt, sizeof(opt), "--offload-arch=%s", arch);
    nopts = 1; /* hipRTC has no -default-device */
#else
    snprintf(opt, sizeof(opt), "--gpu-architecture=%s", arch);
#endif
    opts[0] = opt;
    opts[1] = "-default-device";
#if !defined(TC_GPU_HIP)
    preload_nvrtc_builtins();
#endif
    if (nvrtcCreateProgram(&prog, tc_gpu_kernels_src, "tc_kernels.cu", 0, NULL, NULL) !=
        NVRTC_SUCCESS) {
        snprintf(err, len, "runtime compiler unavailable");
        return -1;
    }
    if (nvrtcCompileProgram(prog, nopts, opts) != NVRTC_SUCCESS) {
        size_t log_size = 0;

        nvrtcGetProgramLogSize(prog, &log_size);
        snprintf(err, len, "kernels did not compile for %s", arch);
        if (log_size > 1 && (log = malloc(log_size))) {
            nvrtcGetProgramLog(prog, log);
            snprintf(err, len, "kernels for %s: %.170s", arch, log);
        }
        goto out;
    }
    /* a binary for this exact architecture: no driver JIT, and no mismatch
     * between the compiler's and the driver's PTX versions */
    if (nvrtcGetCUBINSize(prog, size) != NVRTC_SUCCESS || !*size || !(*image = malloc(*size)) ||
        nvrtcGetCUBIN(prog, *image) != NVRTC_SUCCESS) {
        snprintf(err, len, "no binary for %s", arch);
        free(*image);
        *image = NULL;
        goto out;
    }
    rc = 0;
out:
    free(log);
    nvrtcDestroyProgram(&prog);
    return rc;
}

/* Compiles the kernels for the device at hand. Failures disable attention
 * (its rows are stored with the reason) and the grouping of short launches,
 * and the flush falls back to a memset (the run's timing says which). */
static void build_kernels(struct tc_backend *b)
{
    char *image = NULL;
    size_t size;

    b->have_kernels = false;
    if (driver_load(&b->drv, b->kernels_error, sizeof(b->kernels_error)) < 0)
        return;
    if (compile_kernels(b->arch_name, &image, &size, b->kernels_error, sizeof(b->kernels_error)) <
        0)
        return;
    if (module_load(&b->drv, image, &b->module) < 0) {
        snprintf(b->kernels_error, sizeof(b->kernels_error), "cannot load the kernels' module");
    } else if (module_function(&b->drv, b->module, "tc_softmax", &b->softmax) < 0 ||
               module_function(&b->drv, b->module, "tc_spin", &b->spin) < 0 ||
               module_function(&b->drv, b->module, "tc_flush", &b->flush_kernel) < 0) {
        module_unload(&b->drv, b->module);
        snprintf(b->kernels_error, sizeof(b->kernels_error), "the kernels' module lacks a kernel");
    } else {
        b->have_kernels = true;
    }
    free(image);
}

#if !defined(TC_GPU_HIP)
static uint64_t algo_attr(const cublasLtMatmulAlgo_t *algo, int attr);

/* The algorithm records through the real library, which needs no device
 * for this: a known tile (CUBLASLT_MATMUL_TILE_64x128) and cluster
 * (CUBLASLT_CLUSTER_SHAPE_2x1x1) set on a blank algorithm must read back,
 * at their own sizes, as the row-major 128x64 and 1x2. */
static int check_algo_records(char *msg, size_t len)
{
    cublasLtMatmulAlgo_t algo;
    uint32_t tile = 17;
    uint16_t cluster = 3;
    struct tc_lt_algo_ids ids = {0};
    struct tc_gemm_row row = {0};
    bool has_cluster;

    memset(&algo, 0, sizeof(algo));
    if (cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                             sizeof(tile)) != CUBLAS_STATUS_SUCCESS) {
        snprintf(msg, len, "cuBLASLt refuses to set a tile id");
        return -1;
    }
    /* attribute 8 is newer than some supported libraries */
    has_cluster =
        cublasLtMatmulAlgoConfigSetAttribute(&algo, (cublasLtMatmulAlgoConfigAttributes_t)8,
                                             &cluster, sizeof(cluster)) == CUBLAS_STATUS_SUCCESS;
    ids.tile = algo_attr(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
    ids.cluster = algo_attr(&algo, 8);
    tc_cublaslt_decode(&ids, &row);
    if (row.tile_m != 128 || row.tile_n != 64 ||
        (has_cluster && (row.cluster_m != 1 || row.cluster_n != 2))) {
        snprintf(msg, len,
                 "cuBLASLt algorithm records read back wrong: tile_id %" PRIu64 " as %dx%d, "
                 "cluster_id %" PRIu64 " as %dx%d",
                 ids.tile, row.tile_m, row.tile_n, ids.cluster, row.cluster_m, row.cluster_n);
        return -1;
    }
    if (has_cluster)
        snprintf(msg, len, "tile_id 17 read as 128x64, cluster_id 3 as 1x2 (row-major)");
    else
        snprintf(msg, len, "tile_id 17 read as 128x64 (row-major); no cluster attribute");
    return 0;
}
#endif

static int gpu_compile_check(const char *arch, char *msg, size_t len)
{
    char *image = NULL, algo[128] = "";
    size_t size = 0;

    if (compile_kernels(arch, &image, &size, msg, len) < 0)
        return tc_error(TC_ERR_DEVICE, "%s", msg);
    free(image);
#if !defined(TC_GPU_HIP)
    if (check_algo_records(algo, sizeof(algo)) < 0)
        return tc_error(TC_ERR_DEVICE, "%s", algo);
#endif
    snprintf(msg, len, "kernels: %zu-byte binary for %s%s%s", size, arch, *algo ? "; " : "", algo);
#if WITH_CUDNN
    /* the descriptors of the fused graph, against the installed cuDNN */
    if (tc_fused_check(msg, len) < 0)
        return tc_error(TC_ERR_DEVICE, "%s", msg);
#endif
    return TC_OK;
}

static void plan_free(struct plan *p)
{
    if (!p->ready)
        return;
    cublasLtMatrixLayoutDestroy(p->a);
    cublasLtMatrixLayoutDestroy(p->b);
    cublasLtMatrixLayoutDestroy(p->c);
    cublasLtMatmulDescDestroy(p->desc);
    p->ready = false;
}

/* Device memory for the operand buffers (tc_devbufs). */
static enum tc_status buf_alloc(void *ud, size_t bytes, void **ptr, char *msg, size_t len)
{
    struct tc_backend *b = ud;
    cudaError_t e;

    /* the test limit stands for a device that holds only so much */
    if (b->buf_limit && b->buf_bytes + bytes > b->buf_limit) {
        snprintf(msg, len, "cudaMalloc(%.1f MiB): out of memory (TILECAST_CUDA_BUFFER_LIMIT_MIB)",
                 (double)bytes / 1048576.0);
        return TC_STATUS_OOM;
    }
    if ((e = cudaMalloc(ptr, bytes)) != cudaSuccess) {
        *ptr = NULL;
        cudaGetLastError(); /* not sticky: clear it */
        snprintf(msg, len, "cudaMalloc(%.1f MiB): %s", (double)bytes / 1048576.0,
                 cudaGetErrorString(e));
        return e == cudaErrorMemoryAllocation ? TC_STATUS_OOM : TC_STATUS_ERROR;
    }
    b->buf_bytes += bytes;
    return TC_STATUS_OK;
}

static void buf_release(void *ud, void *ptr, size_t bytes)
{
    struct tc_backend *b = ud;

    cudaFree(ptr);
    b->buf_bytes -= bytes < b->buf_bytes ? bytes : b->buf_bytes;
}

/* For tests of the out-of-memory path on any GPU: the operand buffers may
 * hold at most $TILECAST_CUDA_BUFFER_LIMIT_MIB MiB in all. */
static size_t buf_limit_from_env(void)
{
    const char *v = getenv("TILECAST_CUDA_BUFFER_LIMIT_MIB");
    char *end;
    unsigned long long mib;

    if (!v || !*v)
        return 0;
    mib = strtoull(v, &end, 10);
    return *end || mib == 0 || mib > (SIZE_MAX >> 20) ? 0 : (size_t)mib << 20;
}

static void gpu_close(struct tc_backend *b)
{
    if (!b)
        return;
    plan_free(&b->gemm);
    plan_free(&b->scores);
    plan_free(&b->values);
#if WITH_CUDNN
    tc_fused_close(b->dnn);
#endif
    if (b->events)
        for (int r = 0; r < MAX_REPS; r++)
            for (int e = 0; e < 4; e++)
                cudaEventDestroy(b->ev[r][e]);
    tc_devbufs_release(&b->bufs, &b->alloc);
    if (b->flush)
        cudaFree(b->flush);
    if (b->workspace)
        cudaFree(b->workspace);
    if (b->have_kernels)
        module_unload(&b->drv, b->module);
    driver_unload(&b->drv);
    if (b->lt)
        cublasLtDestroy(b->lt);
    if (b->stream)
        cudaStreamDestroy(b->stream);
    free(b->staging);
    free(b);
}

static int gpu_open(int device, struct tc_backend **out, struct tc_backend_info *info)
{
    struct cudaDeviceProp prop;
    struct tc_backend *b;
    cudaError_t e;
    int count = 0, drv = 0, rt = 0, l2 = 0;
    char clocks[512];

    if ((e = cudaGetDeviceCount(&count)) != cudaSuccess)
        return cuda_fail(e, "no usable device");
    if (device < 0 || device >= count)
        return tc_error(TC_ERR_NOT_FOUND, BACKEND_NAME " backend: device %d of %d does not exist",
                        device, count);
    if (!(b = calloc(1, sizeof(*b))))
        return tc_error(TC_ERR_NOMEM, "out of memory");
    b->device = device;
    tc_devbufs_init(&b->bufs);
    b->alloc = (struct tc_dev_allocator){.alloc = buf_alloc, .release = buf_release, .ud = b};
    b->buf_limit = buf_limit_from_env();
    if ((e = cudaGetDeviceProperties(&prop, device)) != cudaSuccess) {
        gpu_close(b);
        return cuda_fail(e, "device set-up");
    }
#if !defined(TC_GPU_HIP)
    /* before anything creates a context: a runtime without the device's
     * architecture fails later and less clearly (NVRTC, cuBLASLt) */
    cudaRuntimeGetVersion(&rt);
    {
        char why[256];

        if (!tc_cuda_runtime_supports(rt, prop.major, prop.minor, why, sizeof(why))) {
            gpu_close(b);
            return tc_error(TC_ERR_DEVICE,
                            BACKEND_NAME " backend: device %d (%s): %s (see README.md)", device,
                            prop.name, why);
        }
    }
#endif
    if ((e = cudaSetDevice(device)) != cudaSuccess ||
        (e = cudaStreamCreate(&b->stream)) != cudaSuccess) {
        gpu_close(b);
        return cuda_fail(e, "device set-up");
    }
    if (cublasLtCreate(&b->lt) != CUBLAS_STATUS_SUCCESS) {
        gpu_close(b);
        return tc_error(TC_ERR_DEVICE, BACKEND_NAME " backend: cannot create the BLAS handle");
    }
#if WITH_CUDNN
    if (tc_fused_open(b->stream, &b->dnn) < 0) {
        gpu_close(b);
        return tc_error(TC_ERR_NOMEM, "out of memory");
    }
#endif
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
    /* twice the L2 (at least 32 MiB) so no operand line survives the flush */
    b->flush_bytes = (size_t)(l2 > 0 ? l2 : 0) * 2;
    if (b->flush_bytes < ((size_t)32 << 20))
        b->flush_bytes = (size_t)32 << 20;
    if ((e = cudaMalloc(&b->workspace, WORKSPACE_BYTES)) != cudaSuccess ||
        (e = cudaMalloc(&b->flush, b->flush_bytes)) != cudaSuccess ||
        (e = cudaMemset(b->flush, 0, b->flush_bytes)) != cudaSuccess) {
        gpu_close(b);
        return cuda_fail(e, "cannot allocate the workspace and flush buffers");
    }
    for (int r = 0; r < MAX_REPS; r++)
        for (int ev = 0; ev < 4; ev++)
            if ((e = cudaEventCreate(&b->ev[r][ev])) != cudaSuccess) {
                /* destroy only what was created */
                for (int q = 0; q <= r; q++)
                    for (int w = 0; w < (q < r ? 4 : ev); w++)
                        cudaEventDestroy(b->ev[q][w]);
                gpu_close(b);
                return cuda_fail(e, "cannot create events");
            }
    b->events = true;
    if (!(b->staging = malloc(STAGING_BYTES))) {
        gpu_close(b);
        return tc_error(TC_ERR_NOMEM, "out of memory");
    }
    b->arch_major = prop.major;
    b->arch_minor = prop.minor;
    b->sms = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
#if defined(TC_GPU_HIP)
    tc_strlcpy(b->arch_name, prop.gcnArchName, sizeof(b->arch_name));
    /* "gfx90a:sramecc+:xnack-" -> "gfx90a" for --offload-arch */
    b->arch_name[strcspn(b->arch_name, ":")] = '\0';
#else
    snprintf(b->arch_name, sizeof(b->arch_name), "sm_%d%d", prop.major, prop.minor);
#endif
    build_kernels(b);
    /* a first guess, raised by what queueing takes (gpu_run) */
    b->enqueue_us = 20;

    memset(info, 0, sizeof(*info));
    info->name = BACKEND_NAME;
    tc_strlcpy(info->device_name, prop.name, sizeof(info->device_name));
#if defined(TC_GPU_HIP)
    info->vendor = TC_VENDOR_AMD;
    info->arch_known = tc_hip_arch_family(b->arch_name, &info->arch);
#else
    info->vendor = TC_VENDOR_NVIDIA;
    info->arch_known = tc_cuda_arch_family(prop.major, prop.minor, &info->arch);
#endif
#if defined(TC_GPU_HIP)
    tc_strlcpy(info->device_uuid, prop.gcnArchName, sizeof(info->device_uuid));
#else
    {
        const unsigned char *u = (const unsigned char *)prop.uuid.bytes;

        snprintf(info->device_uuid, sizeof(info->device_uuid),
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                 u[14], u[15]);
    }
#endif
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
#if defined(TC_GPU_HIP)
    snprintf(info->driver_version, sizeof(info->driver_version), "hip driver %d", drv);
    snprintf(info->runtime_version, sizeof(info->runtime_version), "hip runtime %d", rt);
    snprintf(info->blas_version, sizeof(info->blas_version), "hipBLASLt %d",
             tc_hipblaslt_version(b->lt));
    tc_strlcpy(info->timing,
               b->have_kernels ? "hipevent-median-l2flush-read" : "hipevent-median-l2flush-memset",
               sizeof(info->timing));
    info->timer_resolution_us = 1.0; /* hipEventElapsedTime: about 1 us */
#else
    {
        size_t lt = cublasLtGetVersion();
        char nvml_driver[48] = "";

        tc_nvml_query(info->device_uuid, device, clocks, sizeof(clocks), nvml_driver,
                      sizeof(nvml_driver));
        snprintf(info->driver_version, sizeof(info->driver_version), "%s (CUDA %d.%d)",
                 nvml_driver[0] ? nvml_driver : "?", drv / 1000, drv % 1000 / 10);
        snprintf(info->runtime_version, sizeof(info->runtime_version), "cudart %d.%d", rt / 1000,
                 rt % 1000 / 10);
        snprintf(info->blas_version, sizeof(info->blas_version), "cublasLt %zu.%zu.%zu%s%s",
                 lt / 10000, lt / 100 % 100, lt % 100, *FUSED_VERSION(b) ? ", " : "",
                 FUSED_VERSION(b));
    }
    tc_strlcpy(info->timing,
               b->have_kernels ? "cudaevent-median-l2flush-read"
                               : "cudaevent-median-l2flush-memset",
               sizeof(info->timing));
    /* cudaEventElapsedTime: "around 0.5 microseconds" */
    info->timer_resolution_us = 0.5;
#endif
    (void)clocks;
    info->flush_bytes = (int64_t)b->flush_bytes;
    *out = b;
    return TC_OK;
}

/* Data and compute types per input type; false if the library has none. */
static bool lt_types(enum tc_dtype dt, cudaDataType_t *ab, cudaDataType_t *cd,
                     cublasComputeType_t *compute, cudaDataType_t *scale)
{
    *scale = CUDA_R_32F;
    *compute = CUBLAS_COMPUTE_32F;
    switch (dt) {
    case TC_DTYPE_FP64:
        *ab = *cd = *scale = CUDA_R_64F;
        *compute = CUBLAS_COMPUTE_64F;
        return true;
    case TC_DTYPE_FP32:
        *ab = *cd = CUDA_R_32F;
        return true;
    case TC_DTYPE_TF32:
        *ab = *cd = CUDA_R_32F;
        *compute = CUBLAS_COMPUTE_32F_FAST_TF32;
        return true;
    case TC_DTYPE_FP16:
        *ab = *cd = CUDA_R_16F;
        return true;
    case TC_DTYPE_BF16:
        *ab = *cd = CUDA_R_16BF;
        return true;
    case TC_DTYPE_FP8:
        *ab = CUDA_R_8F_E4M3;
        *cd = CUDA_R_16BF;
        return true;
    case TC_DTYPE_INT8:
        *ab = CUDA_R_8I;
        *cd = *scale = CUDA_R_32I;
        *compute = CUBLAS_COMPUTE_32I;
        return true;
    default:
        return false;
    }
}

static int out_bytes(enum tc_dtype dt)
{
    switch (dt) {
    case TC_DTYPE_FP8:
        return 2; /* bf16 output */
    case TC_DTYPE_INT8:
        return 4; /* int32 output */
    default:
        return tc_dtype_bytes(dt);
    }
}

/* Builds a plan for row-major C[m x n] = A[m x k] . B[k x n] (batch with
 * packed strides) as cuBLASLt's column-major C^T = B^T . A^T. */
static void plan_make(struct tc_backend *bk, struct plan *p, enum tc_dtype dt,
                      enum tc_layout layout, int64_t m, int64_t n, int64_t k, int64_t batch,
                      const void *A, const void *B, void *C, struct tc_outcome *oc)
{
    bool ta = layout == TC_LAYOUT_TN || layout == TC_LAYOUT_TT;
    bool tb = layout == TC_LAYOUT_NT || layout == TC_LAYOUT_TT;
    cublasOperation_t op_x = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t op_y = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    cudaDataType_t ab, cd, scale;
    cublasComputeType_t compute;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t res;
    uint64_t ws = WORKSPACE_BYTES;
    int32_t nb = (int32_t)batch;
    int64_t sx = n * k, sy = m * k, sd = m * n;
    int returned = 0;
    cublasStatus_t st;

    plan_free(p);
    memset(&p->algo, 0, sizeof(p->algo));
    if (!lt_types(dt, &ab, &cd, &compute, &scale)) {
        set_outcome(oc, TC_STATUS_UNSUPPORTED, "no library type for %s", tc_dtype_name(dt));
        return;
    }
    if ((st = cublasLtMatmulDescCreate(&p->desc, compute, scale)) != CUBLAS_STATUS_SUCCESS) {
        set_outcome(oc, TC_STATUS_ERROR, "MatmulDescCreate: status %d", (int)st);
        return;
    }
    cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_x, sizeof(op_x));
    cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_y, sizeof(op_y));
    /* first operand B: stored row-major k x n (N) = column-major n x k */
    cublasLtMatrixLayoutCreate(&p->a, ab, (uint64_t)(tb ? k : n), (uint64_t)(tb ? n : k),
                               tb ? k : n);
    /* second operand A: row-major m x k (N) = column-major k x m */
    cublasLtMatrixLayoutCreate(&p->b, ab, (uint64_t)(ta ? m : k), (uint64_t)(ta ? k : m),
                               ta ? m : k);
    cublasLtMatrixLayoutCreate(&p->c, cd, (uint64_t)n, (uint64_t)m, n);
    if (batch > 1) {
        cublasLtMatrixLayoutSetAttribute(p->a, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &nb, sizeof(nb));
        cublasLtMatrixLayoutSetAttribute(p->b, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &nb, sizeof(nb));
        cublasLtMatrixLayoutSetAttribute(p->c, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &nb, sizeof(nb));
        cublasLtMatrixLayoutSetAttribute(p->a, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sx,
                                         sizeof(sx));
        cublasLtMatrixLayoutSetAttribute(p->b, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sy,
                                         sizeof(sy));
        cublasLtMatrixLayoutSetAttribute(p->c, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sd,
                                         sizeof(sd));
    }
    p->ready = true;
    if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS) {
        set_outcome(oc, TC_STATUS_ERROR, "MatmulPreferenceCreate failed");
        return;
    }
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                         sizeof(ws));
    st = cublasLtMatmulAlgoGetHeuristic(bk->lt, p->desc, p->a, p->b, p->c, p->c, pref, 1, &res,
                                        &returned);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || returned < 1) {
        set_outcome(oc, TC_STATUS_UNSUPPORTED, "no %s algorithm for %s %s (heuristic status %d)",
                    BACKEND_NAME, tc_dtype_name(dt), tc_layout_name(layout), (int)st);
        return;
    }
    p->algo = res.algo;
    p->workspace = res.workspaceSize;
    p->dtype = dt;
    p->x = B;
    p->y = A;
    p->d = C;
}

static cublasStatus_t plan_run(struct tc_backend *b, struct plan *p)
{
    /* alpha = 1, beta = 0 in the scale type */
    double one_d = 1.0, zero_d = 0.0;
    float one_f = 1.0f, zero_f = 0.0f;
    int32_t one_i = 1, zero_i = 0;
    const void *alpha = &one_f, *beta = &zero_f;

    if (p->dtype == TC_DTYPE_FP64) {
        alpha = &one_d;
        beta = &zero_d;
    } else if (p->dtype == TC_DTYPE_INT8) {
        alpha = &one_i;
        beta = &zero_i;
    }
    return cublasLtMatmul(b->lt, p->desc, alpha, p->x, p->a, p->y, p->b, beta, p->d, p->c, p->d,
                          p->c, &p->algo, b->workspace, p->workspace, b->stream);
}

/* Makes buffers 0..n-1 hold bytes[i] and fills buffer i with random data of
 * types[i] (from a host staging buffer, over the whole buffer) when it was
 * grown or holds another type. Library failures land in oc. */
static int ensure(struct tc_backend *b, int n, const size_t *bytes, const enum tc_dtype *types,
                  struct tc_outcome *oc)
{
    struct tc_devbufs *set = &b->bufs;
    cudaError_t e;
    int err;

    if ((err = tc_devbufs_ensure(set, &b->alloc, bytes, n, oc)) < 0 || oc->status != TC_STATUS_OK)
        return err;
    for (int i = 0; i < n; i++) {
        enum tc_dtype dt = types[i];

        if (set->filled[i] == (int)dt)
            continue;
        tc_random_fill(b->staging, STAGING_BYTES / (size_t)tc_dtype_bytes(dt), dt,
                       0x74696c65ULL + (uint64_t)i);
        for (size_t off = 0; off < set->cap[i]; off += STAGING_BYTES) {
            size_t len = set->cap[i] - off < STAGING_BYTES ? set->cap[i] - off : STAGING_BYTES;

            if ((e = cudaMemcpy((char *)set->ptr[i] + off, b->staging, len,
                                cudaMemcpyHostToDevice)) != cudaSuccess)
                return cuda_fail(e, "filling inputs");
        }
        set->filled[i] = (int)dt;
    }
    return TC_OK;
}

static size_t bytes_of(int64_t a, int64_t b, int64_t c, int64_t d, int eb)
{
    double e = (double)a * (double)b * (double)c * (double)d * eb;

    return e < 0x1p62 ? (size_t)a * (size_t)b * (size_t)c * (size_t)d * (size_t)eb : 0;
}

#if WITH_CUDNN
/* The buffers of the fused graph: the operand buffers (ensure). */
static int fused_buffers(void *ud, int n, const size_t *bytes, const enum tc_dtype *types,
                         void **ptrs, struct tc_outcome *oc)
{
    struct tc_backend *b = ud;
    int err = ensure(b, n, bytes, types, oc);

    for (int i = 0; i < n; i++)
        ptrs[i] = bytes[i] ? b->bufs.ptr[i] : NULL;
    return err;
}
#endif

static int prepare_fused(struct tc_backend *b, const struct tc_shape *s, struct tc_outcome *oc)
{
    if (s->impl != TC_ATTN_CUDNN) {
        set_outcome(oc, TC_STATUS_UNSUPPORTED,
                    "the %s backend measures attention impl unfused and cudnn, not %s",
                    BACKEND_NAME, tc_attn_impl_name(s->impl));
        return TC_OK;
    }
#if WITH_CUDNN
    {
        int err = tc_fused_prepare(b->dnn, s, b->arch_major, b->arch_minor, fused_buffers, b, oc);

        b->fused = err == TC_OK && oc->status == TC_STATUS_OK;
        return err;
    }
#else
    set_outcome(oc, TC_STATUS_UNSUPPORTED, "%s", NO_FUSED);
    return TC_OK;
#endif
}

static int gpu_prepare(struct tc_backend *b, const struct tc_shape *s, struct tc_outcome *oc)
{
    int eb = tc_dtype_bytes(s->dtype), err;

    set_outcome(oc, TC_STATUS_OK, "%s", "");
    b->shape = *s;
    b->fused = false;
    if (s->kind == TC_SHAPE_ATTENTION && s->impl != TC_ATTN_UNFUSED)
        return prepare_fused(b, s, oc);
    if (s->kind == TC_SHAPE_ATTENTION && s->backward) {
        set_outcome(oc, TC_STATUS_UNSUPPORTED, "unfused attention is measured forward only");
        return TC_OK;
    }
    if (s->kind == TC_SHAPE_ATTENTION) {
        /* GQA runs with K and V expanded to every query head, as repeat_kv
         * does before unfused attention: a strided batch cannot share them */
        int64_t bh = s->batch * s->heads;
        size_t q = bytes_of(bh, s->seq_q, s->head_dim, 1, eb);
        size_t kv = bytes_of(bh, s->seq_kv, s->head_dim, 1, eb);
        size_t p = bytes_of(bh, s->seq_q, s->seq_kv, 1, eb);

        if (s->dtype != TC_DTYPE_FP32 && s->dtype != TC_DTYPE_FP16 && s->dtype != TC_DTYPE_BF16) {
            set_outcome(oc, TC_STATUS_UNSUPPORTED,
                        "unfused attention is measured in fp32, fp16 and bf16, not %s",
                        tc_dtype_name(s->dtype));
            return TC_OK;
        }
        if (!b->have_kernels) {
            set_outcome(oc, TC_STATUS_ERROR, "%s", b->kernels_error);
            return TC_OK;
        }
        if (!q || !kv || !p || s->seq_q > INT32_MAX || s->seq_kv > INT32_MAX ||
            bh * s->seq_q > UINT32_MAX / 2) {
            set_outcome(oc, TC_STATUS_OOM, "shape too large");
            return TC_OK;
        }
        {
            /* Q, K, V, scores, output */
            const size_t bytes[] = {q, kv, kv, p, q};
            const enum tc_dtype types[] = {s->dtype, s->dtype, s->dtype, s->dtype, s->dtype};

            if ((err = ensure(b, 5, bytes, types, oc)) < 0 || oc->status != TC_STATUS_OK)
                return err;
        }
        /* scores P = Q . K^T (K stored seq_kv x d: layout NT), then O = P . V */
        plan_make(b, &b->scores, s->dtype, TC_LAYOUT_NT, s->seq_q, s->seq_kv, s->head_dim, bh,
                  b->bufs.ptr[0], b->bufs.ptr[1], b->bufs.ptr[3], oc);
        if (oc->status != TC_STATUS_OK)
            return TC_OK;
        plan_make(b, &b->values, s->dtype, TC_LAYOUT_NN, s->seq_q, s->head_dim, s->seq_kv, bh,
                  b->bufs.ptr[3], b->bufs.ptr[2], b->bufs.ptr[4], oc);
        return TC_OK;
    }
    {
        /* A, B, C; the output is never read: any contents do */
        const size_t bytes[] = {bytes_of(s->m, s->k, s->batch, 1, eb),
                                bytes_of(s->k, s->n, s->batch, 1, eb),
                                bytes_of(s->m, s->n, s->batch, 1, out_bytes(s->dtype))};
        const enum tc_dtype types[] = {s->dtype, s->dtype, TC_DTYPE_INT8};

        if (!bytes[0] || !bytes[1] || !bytes[2]) {
            set_outcome(oc, TC_STATUS_OOM, "shape too large");
            return TC_OK;
        }
        if ((err = ensure(b, 3, bytes, types, oc)) < 0 || oc->status != TC_STATUS_OK)
            return err;
        plan_make(b, &b->gemm, s->dtype, s->layout, s->m, s->n, s->k, s->batch, b->bufs.ptr[0],
                  b->bufs.ptr[1], b->bufs.ptr[2], oc);
    }
    return TC_OK;
}

static double host_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Queues `group` back-to-back launches of the prepared shape between the
 * events of repetition r; attention queues each part's launches between
 * its own events. */
static cublasStatus_t queue_work(struct tc_backend *b, int r, int group, int *lerr)
{
    const struct tc_shape *s = &b->shape;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;

    if (b->fused) {
#if WITH_CUDNN
        for (int g = 0; g < group && !*lerr; g++)
            *lerr = tc_fused_run(b->dnn, b->run_error, sizeof(b->run_error));
#endif
    } else if (s->kind != TC_SHAPE_ATTENTION) {
        for (int g = 0; g < group && st == CUBLAS_STATUS_SUCCESS; g++)
            st = plan_run(b, &b->gemm);
    } else {
        void *p = b->bufs.ptr[3];
        int cols = (int)s->seq_kv, sq = (int)s->seq_q, off = (int)(s->seq_kv - s->seq_q);
        float scale = 1.0f / sqrtf((float)s->head_dim);
        int causal = s->causal, ty = s->dtype == TC_DTYPE_FP32   ? 0
                                     : s->dtype == TC_DTYPE_FP16 ? 1
                                                                 : 2;
        void *args[] = {&p, &cols, &sq, &off, &scale, &causal, &ty};

        for (int g = 0; g < group && st == CUBLAS_STATUS_SUCCESS; g++)
            st = plan_run(b, &b->scores);
        cudaEventRecord(b->ev[r][1], b->stream);
        /* the softmax of softmaxed scores costs the same */
        for (int g = 0; g < group && !*lerr; g++)
            *lerr = launch(&b->drv, b->softmax, (unsigned)(s->batch * s->heads * s->seq_q), 256,
                           b->stream, args);
        cudaEventRecord(b->ev[r][2], b->stream);
        for (int g = 0; g < group && st == CUBLAS_STATUS_SUCCESS; g++)
            st = plan_run(b, &b->values);
    }
    return st;
}

/* Queues the L2 flush: the read kernel, else a memset (which leaves the
 * L2 dirty with the flush buffer's lines). */
static int flush_l2(struct tc_backend *b)
{
    if (b->have_kernels) {
        void *p = b->flush;
        long long n = (long long)(b->flush_bytes / 8);
        void *args[] = {&p, &n, &p};

        return launch(&b->drv, b->flush_kernel, (unsigned)b->sms * 4, 256, b->stream, args);
    }
    return cudaMemsetAsync(b->flush, (int)(++b->flush_round & 0xff), b->flush_bytes, b->stream) ==
                   cudaSuccess
               ? 0
               : -1;
}

static int gpu_run(struct tc_backend *b, int reps, struct tc_rep_times *t, struct tc_outcome *oc)
{
    const struct tc_shape *s = &b->shape;
    /* unfused attention: three parts, each between its own events */
    bool attn = s->kind == TC_SHAPE_ATTENTION && !b->fused;
    int launches = attn ? 3 : 1, group = t->group > 1 ? t->group : 1, lerr = 0, chunk;
    cudaError_t e;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;

    if (reps > MAX_REPS)
        reps = MAX_REPS;
    /* grouping needs the spin kernel (below) */
    if (!b->have_kernels)
        group = 1;
    if (group > TC_GROUP_MAX)
        group = TC_GROUP_MAX;
    t->group = group;
    chunk = GROUP_QUEUE_LAUNCHES / (group * launches);
    if (chunk < 1)
        chunk = 1;
    set_outcome(oc, TC_STATUS_OK, "%s", "");
    b->run_error[0] = '\0';
    for (int r = 0; r < reps && st == CUBLAS_STATUS_SUCCESS && !lerr; r++) {
        double h0;

        if (group > 1) {
            /* A short kernel runs faster than the host queues the next
             * one, so a group queued as the device goes would time the
             * host's pace. The device spins (untimed) for longer than the
             * host takes to queue the group, which then runs back to back
             * from the queue. */
            long long ns = (long long)(1.5e3 * b->enqueue_us * group * launches) + 20000;
            void *args[] = {&ns};

            lerr = launch(&b->drv, b->spin, 1, 32, b->stream, args);
        }
        /* the flush is queued before the start event: not timed, but the
         * work waits for it, so it starts with a cold L2 */
        if (!lerr)
            lerr = flush_l2(b);
        cudaEventRecord(b->ev[r][0], b->stream);
        h0 = host_now_us();
        st = queue_work(b, r, group, &lerr);
        cudaEventRecord(b->ev[r][3], b->stream);
        if (group > 1) {
            double per = (host_now_us() - h0) / (group * launches);

            /* only ever raised, to at most 200 us: a spin too long costs
             * untimed time, one too short the measurement */
            if (per > b->enqueue_us)
                b->enqueue_us = per < 200 ? per : 200;
            /* A full launch queue would block the host at the device's
             * pace, which the measurement above would take for the host's
             * cost: let the device catch up every few hundred launches. */
            if ((r + 1) % chunk == 0 && (e = cudaStreamSynchronize(b->stream)) != cudaSuccess)
                return cuda_fail(e, "running the shape");
        }
    }
    e = cudaStreamSynchronize(b->stream);
    if (e != cudaSuccess)
        return cuda_fail(e, "running the shape"); /* sticky: the context is gone */
    if (st != CUBLAS_STATUS_SUCCESS) {
        set_outcome(oc, TC_STATUS_ERROR, "%s matmul failed: status %d", BACKEND_NAME, (int)st);
        return TC_OK;
    }
    if (lerr) {
        set_outcome(oc, TC_STATUS_ERROR, "%s",
                    b->run_error[0] ? b->run_error : "kernel launch failed");
        return TC_OK;
    }
    for (int r = 0; r < reps; r++) {
        float ms = 0;

        cudaEventElapsedTime(&ms, b->ev[r][0], b->ev[r][3]);
        t->total_us[r] = ms * 1e3 / group;
        if (attn)
            for (int part = 0; part < 3; part++) {
                cudaEventElapsedTime(&ms, b->ev[r][part], b->ev[r][part + 1]);
                t->part_us[part][r] = ms * 1e3 / group;
            }
    }
    return TC_OK;
}

#if !defined(TC_GPU_HIP)
/* cublasLtMatmulAlgoConfigGetAttribute for tc_algo_attr_read. Attributes
 * are named by number: INNER_SHAPE_ID (7) and CLUSTER_SHAPE_ID (8) are
 * newer than some supported libraries, which refuse the size query; enum
 * values are ABI-stable. */
static int lt_attr_get(const void *algo, int attr, void *buf, size_t size, size_t *written)
{
    return cublasLtMatmulAlgoConfigGetAttribute((const cublasLtMatmulAlgo_t *)algo,
                                                (cublasLtMatmulAlgoConfigAttributes_t)attr, buf,
                                                size, written) == CUBLAS_STATUS_SUCCESS
               ? 0
               : -1;
}

/* An attribute, 0 when this library does not have it. */
static uint64_t algo_attr(const cublasLtMatmulAlgo_t *algo, int attr)
{
    uint64_t v = 0;

    if (tc_algo_attr_read(lt_attr_get, algo, attr, &v) < 0)
        return 0;
    return v;
}
#endif

static void gpu_algo(struct tc_backend *b, struct tc_gemm_row *row)
{
    const cublasLtMatmulAlgo_t *algo = &b->gemm.algo;
#if defined(TC_GPU_HIP)
    int index = 0;

    /* hipBLASLt keeps the solution index in the first bytes of the opaque
     * algo (what hipblaslt_ext::getIndexFromAlgo reads) */
    memcpy(&index, algo->data, sizeof(index));
    snprintf(row->algo, sizeof(row->algo), "hipblaslt solution %d", index);
#else
    struct tc_lt_algo_ids ids = {
        .tile = algo_attr(algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
        .stages = algo_attr(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
        .cluster = algo_attr(algo, 8),
        .split_k = algo_attr(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
        .swizzle = algo_attr(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
    };
    uint64_t id = algo_attr(algo, CUBLASLT_ALGO_CONFIG_ID);
    uint64_t reduction = algo_attr(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
    uint64_t custom = algo_attr(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
    uint64_t inner = algo_attr(algo, 7);

    /* tile and cluster columns in the row-major view; the raw ids below
     * stay in the library's column-major one */
    tc_cublaslt_decode(&ids, row);
    snprintf(row->algo, sizeof(row->algo),
             "cublasLt algo %" PRIu64 " tile_id %" PRIu64 " stages_id %" PRIu64 " splitk %" PRIu64
             " reduction %" PRIu64 " swizzle %" PRIu64 " custom %" PRIu64 " inner %" PRIu64
             " cluster_id %" PRIu64 " (column-major view)",
             id, ids.tile, ids.stages, ids.split_k, reduction, ids.swizzle, custom, inner,
             ids.cluster);
#endif
}

/* buf holds "" (tc_backend_ops.attn_algo) */
static void gpu_attn_algo(struct tc_backend *b, char *buf, size_t len)
{
#if WITH_CUDNN
    if (b->fused)
        tc_fused_describe(b->dnn, buf, len);
#endif
}

static void gpu_clocks(struct tc_backend *b, char *json, size_t len)
{
#if defined(TC_GPU_HIP)
    tc_rocm_smi_query(b->device, json, len);
#else
    struct cudaDeviceProp prop;
    char uuid[64] = "";

    if (cudaGetDeviceProperties(&prop, b->device) == cudaSuccess) {
        const unsigned char *u = (const unsigned char *)prop.uuid.bytes;

        snprintf(uuid, sizeof(uuid),
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                 u[14], u[15]);
    }
    tc_nvml_query(uuid, b->device, json, len, NULL, 0);
#endif
}

/* The module's one export besides tc_last_error (tilecast-module.map):
 * the module is built with hidden visibility. */
__attribute__((visibility("default"))) const struct tc_backend_ops BACKEND_SYMBOL = {
    .name = BACKEND_NAME,
    .open = gpu_open,
    .prepare = gpu_prepare,
    .run = gpu_run,
    .algo = gpu_algo,
    .attn_algo = gpu_attn_algo,
    .clocks = gpu_clocks,
    .close = gpu_close,
    .compile_check = gpu_compile_check,
};
