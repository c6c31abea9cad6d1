/* The parts of the GPU backends that need no device: reading and decoding
 * cuBLASLt's algorithm attributes, the set of operand buffers with its
 * out-of-memory retry, and which devices a CUDA runtime still supports.
 * They are in the collector library so that the unit tests reach them
 * without a GPU runtime, and compiled into the GPU modules as well
 * (collector/meson.build, module_helpers). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "collector.h"
#include "tc-internal.h"

/* CUBLASLT_MATMUL_TILE_*, _STAGES_* and CLUSTER_SHAPE_* by value, from
 * cublasLt.h (CUDA 13.0); the enums only ever grew at the end. */
#include "cublaslt-enums.h"

/* ------------------------------------------------------------------------ */
/* cuBLASLt algorithm attributes                                            */
/* ------------------------------------------------------------------------ */

int tc_algo_attr_read(tc_algo_attr_get_fn get, const void *algo, int attr, uint64_t *value)
{
    unsigned char buf[8] = {0};
    size_t need = 0, written = 0;

    *value = 0;
    /* The library refuses a buffer of any other size than the attribute's
     * own (the cluster and inner shape ids are 16-bit, the rest 32-bit), so
     * ask for the size first: a size of 0 only reports it. A library older
     * than the attribute refuses the query itself. */
    if (get(algo, attr, NULL, 0, &need) != 0 || need == 0)
        return tc_error(TC_ERR_NOT_FOUND, "algorithm attribute %d unknown to this library", attr);
    if (need != 1 && need != 2 && need != 4 && need != 8)
        return tc_error(TC_ERR_RANGE, "algorithm attribute %d has %zu bytes", attr, need);
    if (get(algo, attr, buf, need, &written) != 0 || written != need)
        return tc_error(TC_ERR_DEVICE,
                        "algorithm attribute %d: the library refused a %zu-byte read", attr, need);
    /* every attribute is an unsigned id or a non-negative count in host
     * byte order: widen by size */
    switch (need) {
    case 1:
        *value = buf[0];
        break;
    case 2: {
        uint16_t v;

        memcpy(&v, buf, sizeof(v));
        *value = v;
        break;
    }
    case 4: {
        uint32_t v;

        memcpy(&v, buf, sizeof(v));
        *value = v;
        break;
    }
    default:
        memcpy(value, buf, sizeof(*value));
        break;
    }
    return TC_OK;
}

bool tc_cublaslt_tile(uint64_t id, int *tile_m, int *tile_n)
{
    *tile_m = *tile_n = 0;
    if (id >= TC_ARRAY_SIZE(tile_dims) || !tile_dims[id][0])
        return false;
    /* the library's tile M x N is over its column-major C^T = B^T A^T,
     * whose rows are the row-major problem's columns */
    *tile_m = tile_dims[id][1];
    *tile_n = tile_dims[id][0];
    return true;
}

bool tc_cublaslt_cluster(uint64_t id, int *cluster_m, int *cluster_n)
{
    *cluster_m = *cluster_n = 0;
    if (id >= TC_ARRAY_SIZE(cluster_dims) || !cluster_dims[id][0])
        return false;
    /* as the tile: the library's M is the row-major n */
    *cluster_m = cluster_dims[id][1];
    *cluster_n = cluster_dims[id][0];
    return true;
}

void tc_cublaslt_decode(const struct tc_lt_algo_ids *ids, struct tc_gemm_row *row)
{
    tc_cublaslt_tile(ids->tile, &row->tile_m, &row->tile_n);
    /* the stage depth runs along k, the same in both views */
    if (ids->stages < TC_ARRAY_SIZE(stage_dims)) {
        row->tile_k = stage_dims[ids->stages][0];
        row->stages = stage_dims[ids->stages][1];
    }
    tc_cublaslt_cluster(ids->cluster, &row->cluster_m, &row->cluster_n);
    row->split_k = ids->split_k > 1 ? (int)ids->split_k : 1;
    row->swizzle = (int)ids->swizzle;
}

/* ------------------------------------------------------------------------ */
/* Which devices a CUDA runtime supports                                     */
/* ------------------------------------------------------------------------ */

bool tc_cuda_arch_family(int major, int minor, enum tc_arch *arch)
{
    /* The CUDA C++ Programming Guide's table of compute capabilities: 6.0
     * to 6.2 Pascal (P100, P4/P40, Jetson TX2), 7.0 and 7.2 Volta (V100, Xavier), 7.5
     * Turing, 8.0/8.6/8.7 Ampere (A100, GA10x, Orin), 8.9 Ada, 9.0 Hopper, 10.x to 12.x Blackwell
     * (B200/GB200, Thor, GB20x). Older parts have no family here. */
    static const struct {
        int major, minor_lo, minor_hi;
        enum tc_arch arch;
    } table[] = {
        {6, 0, 2, TC_ARCH_PASCAL},     {7, 0, 2, TC_ARCH_VOLTA},      {7, 5, 5, TC_ARCH_TURING},
        {8, 0, 7, TC_ARCH_AMPERE},     {8, 9, 9, TC_ARCH_ADA},        {9, 0, 0, TC_ARCH_HOPPER},
        {10, 0, 9, TC_ARCH_BLACKWELL}, {11, 0, 9, TC_ARCH_BLACKWELL}, {12, 0, 9, TC_ARCH_BLACKWELL},
    };

    for (size_t i = 0; i < TC_ARRAY_SIZE(table); i++)
        if (major == table[i].major && minor >= table[i].minor_lo && minor <= table[i].minor_hi) {
            *arch = table[i].arch;
            return true;
        }
    return false;
}

bool tc_hip_arch_family(const char *gfx, enum tc_arch *arch)
{
    /* AMD's LLVM AMDGPU processor table: gfx908 is CDNA1 (MI100), gfx90a
     * CDNA2 (MI210, MI250, MI250X), gfx940-gfx942 CDNA3 (MI300A/X,
     * MI325X). */
    static const struct {
        const char *target;
        enum tc_arch arch;
    } table[] = {
        {"gfx908", TC_ARCH_CDNA1}, {"gfx90a", TC_ARCH_CDNA2}, {"gfx940", TC_ARCH_CDNA3},
        {"gfx941", TC_ARCH_CDNA3}, {"gfx942", TC_ARCH_CDNA3},
    };
    size_t len = strcspn(gfx, ":");

    for (size_t i = 0; i < TC_ARRAY_SIZE(table); i++)
        if (strlen(table[i].target) == len && strncmp(gfx, table[i].target, len) == 0) {
            *arch = table[i].arch;
            return true;
        }
    return false;
}

bool tc_cuda_runtime_supports(int runtime, int cc_major, int cc_minor, char *why, size_t len)
{
    /* The oldest compute capability of each CUDA major version: 12.0
     * dropped Kepler, 13.0 dropped Maxwell, Pascal and Volta (NVRTC 13
     * refuses sm_70 and cuBLASLt 13 has no kernels for it). */
    static const struct {
        int runtime_major, min_major, min_minor;
        const char *build;
    } floor[] = {
        {13, 7, 5, "CUDA 11.8-12.x"},
        {12, 5, 0, "CUDA 11.8"},
    };
    int major = runtime / 1000, minor = runtime % 1000 / 10;

    for (size_t i = 0; i < TC_ARRAY_SIZE(floor); i++) {
        if (major < floor[i].runtime_major)
            continue;
        if (cc_major > floor[i].min_major ||
            (cc_major == floor[i].min_major && cc_minor >= floor[i].min_minor))
            return true;
        snprintf(why, len,
                 "compute capability %d.%d is not supported by CUDA %d.%d (the runtime this "
                 "backend was built with needs %d.%d or newer): build tilecast with %s for "
                 "this GPU",
                 cc_major, cc_minor, major, minor, floor[i].min_major, floor[i].min_minor,
                 floor[i].build);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Operand buffers                                                           */
/* ------------------------------------------------------------------------ */

void tc_devbufs_init(struct tc_devbufs *set)
{
    memset(set, 0, sizeof(*set));
    for (int i = 0; i < TC_DEVBUF_MAX; i++)
        set->filled[i] = -1;
}

void tc_devbufs_release(struct tc_devbufs *set, const struct tc_dev_allocator *a)
{
    for (int i = 0; i < TC_DEVBUF_MAX; i++) {
        if (set->ptr[i])
            a->release(a->ud, set->ptr[i], set->cap[i]);
        set->ptr[i] = NULL;
        set->cap[i] = 0;
        set->filled[i] = -1;
    }
}

/* Allocates buffer i anew at `bytes` (its old contents are gone). */
static enum tc_status grow(struct tc_devbufs *set, const struct tc_dev_allocator *a, int i,
                           size_t bytes, char *msg, size_t len)
{
    enum tc_status st;

    if (set->ptr[i])
        a->release(a->ud, set->ptr[i], set->cap[i]);
    set->ptr[i] = NULL;
    set->cap[i] = 0;
    set->filled[i] = -1;
    st = a->alloc(a->ud, bytes, &set->ptr[i], msg, len);
    if (st != TC_STATUS_OK)
        set->ptr[i] = NULL;
    else
        set->cap[i] = bytes;
    return st;
}

int tc_devbufs_ensure(struct tc_devbufs *set, const struct tc_dev_allocator *a, const size_t *bytes,
                      int n, struct tc_outcome *oc)
{
    char msg[sizeof(oc->message) - 64] = "";
    enum tc_status st = TC_STATUS_OK;

    if (n < 0 || n > TC_DEVBUF_MAX)
        return tc_error(TC_ERR_INVALID, "tc_devbufs_ensure: %d buffers", n);
    /* Buffers only grow, so that a sweep of similar shapes allocates and
     * fills once; each keeps the largest size any shape needed of it. */
    for (int i = 0; i < n && st == TC_STATUS_OK; i++)
        if (bytes[i] > set->cap[i])
            st = grow(set, a, i, bytes[i], msg, sizeof(msg));
    if (st == TC_STATUS_OK)
        return TC_OK;
    if (st != TC_STATUS_OOM) {
        oc->status = st;
        snprintf(oc->message, sizeof(oc->message), "%s", msg);
        return TC_OK;
    }
    /* Out of memory may be only what the kept buffers hold together: the
     * largest A of one shape and the largest C of another need not fit at
     * once although every shape's own set does. Free everything and
     * allocate exactly this shape's sizes once more; only a failure then
     * is the shape's own. */
    tc_devbufs_release(set, a);
    st = TC_STATUS_OK;
    for (int i = 0; i < n && st == TC_STATUS_OK; i++)
        if (bytes[i] > 0)
            st = grow(set, a, i, bytes[i], msg, sizeof(msg));
    if (st == TC_STATUS_OK)
        return TC_OK;
    tc_devbufs_release(set, a);
    oc->status = st;
    snprintf(oc->message, sizeof(oc->message), "%s%s", msg,
             st == TC_STATUS_OOM ? " (also after freeing every buffer)" : "");
    return TC_OK;
}
