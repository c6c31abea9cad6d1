/* The memory-bound kernels of a transformer layer (norms, activations,
 * softmax, residual adds): how many passes over its tensor each kernel
 * makes, and its time at the streaming bandwidth of tc_elementwise_time_us.
 * model.c takes its norms', softmax's, activations' and residual adds'
 * bytes from here, so `tilecast eval --elementwise` scores the very figures
 * `predict layer` and `predict model` add up. */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "model-internal.h"

static const char *const kind_names[TC_MEMOP_KIND_COUNT] = {
    "unary", "binary", "softmax", "layernorm", "rmsnorm",
};

TC_API const char *tc_memop_kind_name(enum tc_memop_kind kind)
{
    return (unsigned)kind < TC_MEMOP_KIND_COUNT ? kind_names[kind] : "?";
}

TC_API int tc_memop_kind_parse(const char *name, enum tc_memop_kind *out)
{
    if (!name || !out)
        return tc_error(TC_ERR_INVALID, "no memory-bound kernel kind given");
    for (int i = 0; i < TC_MEMOP_KIND_COUNT; i++)
        if (strcasecmp(name, kind_names[i]) == 0) {
            *out = (enum tc_memop_kind)i;
            return TC_OK;
        }
    return tc_error(TC_ERR_INVALID,
                    "unknown memory-bound kernel '%s' (expected unary, binary, softmax, "
                    "layernorm or rmsnorm)",
                    name);
}

/* Passes over the tensor, each a read or a write of all of it:
 *  - unary: reads x, writes y (ATen's vectorized_elementwise_kernel);
 *  - binary: reads x and y, writes z;
 *  - softmax: reads the row, writes it. PyTorch's forward keeps rows of up
 *    to 1024 elements in a warp's registers (SoftMax.cu,
 *    dispatch_softmax_forward), and Megatron's fused scale-mask-softmax
 *    does the same; longer rows run cunn_SoftMaxForward, which reads the
 *    row again for the sum and for the write, mostly from L2 (the specs
 *    carry no L2 bandwidth, so those re-reads are not counted: `tilecast
 *    eval --elementwise` shows what that leaves out);
 *  - layernorm: PyTorch's forward (layer_norm_kernel.cu) runs
 *    RowwiseMomentsCUDAKernel and then LayerNormForwardCUDAKernel over the
 *    same rows, or, for rows of a multiple of 4 elements, one
 *    vectorized_layer_norm_kernel whose statistics pass and normalising
 *    pass each load the row: three passes;
 *  - rmsnorm: one statistic, kept in registers with the row (vLLM's and
 *    Apex's fused RMSNorm): a read and a write. */
double tc_memop_passes(enum tc_memop_kind kind)
{
    switch (kind) {
    case TC_MEMOP_BINARY:
    case TC_MEMOP_LAYERNORM:
        return 3;
    case TC_MEMOP_UNARY:
    case TC_MEMOP_SOFTMAX:
    case TC_MEMOP_RMSNORM:
    default:
        return 2;
    }
}

TC_API int tc_predict_memop(const struct tc_gpu *gpu, const struct tc_memop_query *q,
                            struct tc_memop_prediction *out)
{
    double e, bytes;

    if (!gpu || !q || !out)
        return tc_error(TC_ERR_INVALID, "tc_predict_memop: missing argument");
    memset(out, 0, sizeof(*out));
    if ((unsigned)q->kind >= TC_MEMOP_KIND_COUNT)
        return tc_error(TC_ERR_RANGE, "memory-bound kernel: unknown kind %d", (int)q->kind);
    e = tc_dtype_bytes(q->dtype);
    if (!(e > 0))
        return tc_error(TC_ERR_RANGE, "memory-bound kernel: unknown dtype %d", (int)q->dtype);
    if (q->rows <= 0 || q->cols <= 0)
        return tc_error(TC_ERR_RANGE,
                        "memory-bound kernel: rows (%lld) and cols (%lld) must be positive",
                        (long long)q->rows, (long long)q->cols);
    out->passes = tc_memop_passes(q->kind);
    bytes = out->passes * (double)q->rows * (double)q->cols * e;
    if (!(bytes <= 0x1p62))
        return tc_error(TC_ERR_RANGE,
                        "memory-bound kernel: %lld x %lld elements move %.3g bytes, more than "
                        "2^62",
                        (long long)q->rows, (long long)q->cols, bytes);
    out->bytes = bytes;
    out->time_us = tc_elementwise_time_us(gpu, bytes);
    out->gbps = bytes / out->time_us / 1e3;
    return TC_OK;
}
