/* cuDNN's fused attention for the cuda backend: the choice of graph, the
 * graph's descriptors in the order cuDNN's backend API wants them
 * (everything a descriptor refers to is finalized first), the engine
 * choice and its record. See cudnn-sdpa.h. */
#include "config.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudnn-sdpa.h"
#include "tc-internal.h"

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */
/* ------------------------------------------------------------------------ */

#define LOAD(field, name)                                                                          \
    do {                                                                                           \
        void *p_ = dlsym(api->lib, (name));                                                        \
        if (!p_)                                                                                   \
            missing = (name);                                                                      \
        memcpy(&api->field, &p_, sizeof(p_));                                                      \
    } while (0)

int tc_cudnn_load(struct tc_cudnn_api *api, char *msg, size_t len)
{
    const char *missing = NULL;

    memset(api, 0, sizeof(*api));
    /* the module's RUNPATH (the CUDA library folder) applies to this
     * dlopen; libcudnn finds its sub-libraries beside itself ($ORIGIN) */
    if (!(api->lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL))) {
        snprintf(msg, len, "cannot load libcudnn.so.9: %s", dlerror());
        return tc_error(TC_ERR_NOT_FOUND, "%s", msg);
    }
    LOAD(get_version, "cudnnGetVersion");
    LOAD(error_string, "cudnnGetErrorString");
    LOAD(last_error, "cudnnGetLastErrorString");
    LOAD(create, "cudnnCreate");
    LOAD(destroy, "cudnnDestroy");
    LOAD(set_stream, "cudnnSetStream");
    LOAD(create_desc, "cudnnBackendCreateDescriptor");
    LOAD(destroy_desc, "cudnnBackendDestroyDescriptor");
    LOAD(finalize, "cudnnBackendFinalize");
    LOAD(set_attr, "cudnnBackendSetAttribute");
    LOAD(get_attr, "cudnnBackendGetAttribute");
    LOAD(execute, "cudnnBackendExecute");
    if (missing) {
        snprintf(msg, len, "libcudnn.so.9 lacks %s (a cuDNN older than 9.0?)", missing);
        tc_cudnn_unload(api);
        return tc_error(TC_ERR_NOT_FOUND, "%s", msg);
    }
    return TC_OK;
}

void tc_cudnn_unload(struct tc_cudnn_api *api)
{
    if (api->lib)
        dlclose(api->lib);
    memset(api, 0, sizeof(*api));
}

void tc_cudnn_version_name(size_t v, char *buf, size_t len)
{
    snprintf(buf, len, "%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
}

/* ------------------------------------------------------------------------ */
/* What can be measured                                                      */
/* ------------------------------------------------------------------------ */

/* Every refusal below writes why and returns TC_SDPA_NONE. */
#define NONE(...)                                                                                  \
    do {                                                                                           \
        snprintf(why, len, __VA_ARGS__);                                                           \
        return TC_SDPA_NONE;                                                                       \
    } while (0)

enum tc_sdpa_graph tc_sdpa_choose(size_t version, int cc_major, int cc_minor,
                                  const struct tc_shape *s, char *why, size_t len)
{
    char have[32];

    tc_cudnn_version_name(version, have, sizeof(have));
    *why = '\0';
    if (s->dtype == TC_DTYPE_FP8)
        /* the fp8 graph takes descale and scale tensors and amax outputs,
         * which cuDNN 9.19's single node does not have */
        NONE("fp8 fused attention needs the fp8 SDPA graph (descale tensors), which this "
             "collector does not build; it measures fp16 and bf16");
    if (s->dtype != TC_DTYPE_FP16 && s->dtype != TC_DTYPE_BF16)
        NONE("cuDNN fused attention is measured in fp16 and bf16, not %s", tc_dtype_name(s->dtype));
    if (cc_major < 8)
        NONE("cuDNN's fused attention engines need compute capability 8.0 or newer, not "
             "%d.%d",
             cc_major, cc_minor);
    if (!s->backward) {
        if (version < TC_CUDNN_SDPA_FWD_NODE)
            NONE("the SDPA forward node needs cuDNN 9.13.1 or newer (found %s)", have);
        /* the node takes a mask subgraph from 9.21 (SDPA_FWD_SUBGRAPH),
         * which this header does not name: causal is the composite */
        return s->causal ? TC_SDPA_FWD_COMPOSITE : TC_SDPA_FWD_NODE;
    }
    if (version < TC_CUDNN_SDPA_BWD_NODE)
        NONE("the SDPA backward node needs cuDNN 9.17 or newer (found %s)", have);
    if (s->causal)
        NONE("causal masking on the SDPA backward node needs cuDNN 9.21 or newer "
             "(SDPA_BWD_SUBGRAPH; found %s)",
             have);
    return TC_SDPA_BWD_NODE;
}

/* ------------------------------------------------------------------------ */
/* Tensors                                                                   */
/* ------------------------------------------------------------------------ */

/* Batch, heads, rows and columns of tensor uid of s: Q, O and their
 * gradients over the query heads, K and V over the KV heads (GQA: cuDNN
 * shares them itself), statistics one float per query row. */
static void tensor_dims(const struct tc_shape *s, int uid, int64_t dims[4])
{
    bool kv = uid == TC_SDPA_K || uid == TC_SDPA_V || uid == TC_SDPA_DK || uid == TC_SDPA_DV;

    dims[0] = s->batch;
    dims[1] = kv ? s->kv_heads : s->heads;
    dims[2] = kv ? s->seq_kv : s->seq_q;
    dims[3] = uid == TC_SDPA_STATS ? 1 : s->head_dim;
    if (uid == TC_SDPA_SCALE)
        dims[0] = dims[1] = dims[2] = dims[3] = 1;
}

static bool graph_binds(enum tc_sdpa_graph g, int uid)
{
    if (uid == TC_SDPA_SCALE)
        return false; /* by value */
    return uid <= TC_SDPA_STATS || (g == TC_SDPA_BWD_NODE && uid <= TC_SDPA_DV);
}

bool tc_sdpa_tensor_bytes(enum tc_sdpa_graph g, const struct tc_shape *s,
                          size_t bytes[TC_SDPA_TENSORS])
{
    for (int uid = 1; uid <= TC_SDPA_TENSORS; uid++) {
        int64_t d[4];
        double n;
        int eb = uid == TC_SDPA_STATS ? 4 : tc_dtype_bytes(s->dtype);

        bytes[uid - 1] = 0;
        if (!graph_binds(g, uid))
            continue;
        tensor_dims(s, uid, d);
        n = (double)d[0] * (double)d[1] * (double)d[2] * (double)d[3] * eb;
        if (!(n < 0x1p62) || d[0] < 1 || d[1] < 1 || d[2] < 1 || d[3] < 1)
            return false;
        bytes[uid - 1] = (size_t)d[0] * (size_t)d[1] * (size_t)d[2] * (size_t)d[3] * (size_t)eb;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Building                                                                  */
/* ------------------------------------------------------------------------ */

/* The first failure of a build: later steps do nothing, so the builder
 * reads as the sequence cuDNN wants. */
struct build {
    const struct tc_cudnn_api *api;
    struct tc_sdpa_plan *p;
    cudnnStatus_t st;
    char what[96];
};

static void failed(struct build *b, cudnnStatus_t st, const char *what)
{
    if (b->st != CUDNN_STATUS_SUCCESS || st == CUDNN_STATUS_SUCCESS)
        return;
    b->st = st;
    tc_strlcpy(b->what, what, sizeof(b->what));
}

static cudnnBackendDescriptor_t make(struct build *b, cudnnBackendDescriptorType_t type)
{
    cudnnBackendDescriptor_t d = NULL;

    if (b->st != CUDNN_STATUS_SUCCESS)
        return NULL;
    if (b->p->ndesc == TC_SDPA_DESC_MAX) {
        failed(b, CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, "too many descriptors");
        return NULL;
    }
    failed(b, b->api->create_desc(type, &d), "creating a descriptor");
    if (b->st != CUDNN_STATUS_SUCCESS)
        return NULL;
    b->p->desc[b->p->ndesc++] = d;
    return d;
}

static void set(struct build *b, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                cudnnBackendAttributeType_t type, int64_t count, const void *values,
                const char *what)
{
    if (b->st == CUDNN_STATUS_SUCCESS)
        failed(b, b->api->set_attr(d, name, type, count, values), what);
}

static void finish(struct build *b, cudnnBackendDescriptor_t d, const char *what)
{
    if (b->st == CUDNN_STATUS_SUCCESS)
        failed(b, b->api->finalize(d), what);
}

/* Tensor kinds of tensor_desc. */
enum { T_DEVICE, T_VIRTUAL, T_BY_VALUE };

/* A tensor of dims, packed (BHSD) unless strides are given. */
static cudnnBackendDescriptor_t tensor_desc(struct build *b, int64_t uid, cudnnDataType_t dt,
                                            const int64_t dims[4], const int64_t *given, int kind)
{
    cudnnBackendDescriptor_t t = make(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t strides[4], id = uid, align = 16;
    bool yes = true;

    strides[3] = 1;
    for (int i = 2; i >= 0; i--)
        strides[i] = strides[i + 1] * dims[i + 1];
    if (given)
        memcpy(strides, given, sizeof(strides));
    set(b, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt, "tensor type");
    set(b, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims, "tensor dimensions");
    set(b, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides, "tensor strides");
    set(b, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id, "tensor id");
    set(b, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align, "tensor alignment");
    if (kind == T_BY_VALUE)
        set(b, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &yes, "tensor by value");
    if (kind == T_VIRTUAL)
        set(b, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &yes, "tensor virtual");
    finish(b, t, "finalizing a tensor");
    return t;
}

static cudnnDataType_t io_type(const struct tc_shape *s)
{
    return s->dtype == TC_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
}

/* Tensor uid of s as the graphs bind it. */
static cudnnBackendDescriptor_t tensor(struct build *b, const struct tc_shape *s, int uid)
{
    int64_t dims[4];
    bool fp32 = uid == TC_SDPA_STATS || uid == TC_SDPA_SCALE;

    tensor_dims(s, uid, dims);
    return tensor_desc(b, uid, fp32 ? CUDNN_DATA_FLOAT : io_type(s), dims, NULL,
                       uid == TC_SDPA_SCALE ? T_BY_VALUE : T_DEVICE);
}

/* The operation: the forward node (with the statistics a backward needs,
 * which FlashAttention-class training forwards always write), or the
 * backward node. */
static cudnnBackendDescriptor_t operation(struct build *b, enum tc_sdpa_graph g,
                                          const struct tc_shape *s)
{
    static const struct {
        int uid;
        cudnnBackendAttributeName_t fwd, bwd;
    } slots[] = {
        {TC_SDPA_Q, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC},
        {TC_SDPA_K, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC},
        {TC_SDPA_V, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC},
        {TC_SDPA_O, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC},
        {TC_SDPA_STATS, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC,
         CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC},
        {TC_SDPA_SCALE, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC,
         CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC},
        {TC_SDPA_DO, 0, CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC},
        {TC_SDPA_DQ, 0, CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC},
        {TC_SDPA_DK, 0, CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC},
        {TC_SDPA_DV, 0, CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC},
    };
    bool bwd = g == TC_SDPA_BWD_NODE;
    cudnnBackendDescriptor_t t[TC_SDPA_TENSORS], op;

    for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
        t[i] = bwd || slots[i].fwd ? tensor(b, s, slots[i].uid) : NULL;
    op = make(b, bwd ? CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR
                     : CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
    for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
        if (t[i])
            set(b, op, bwd ? slots[i].bwd : slots[i].fwd, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t[i],
                "attaching a tensor to the SDPA node");
    finish(b, op, bwd ? "finalizing the SDPA backward node" : "finalizing the SDPA forward node");
    return op;
}

/* ------------------------------------------------------------------------ */
/* The composite forward (causal masking before cuDNN 9.21)                  */
/* ------------------------------------------------------------------------ */

/* The "fused flash attention" pattern of the graph API: scores matmul,
 * scale, causal mask (row and column indices, row >= column, -inf
 * elsewhere), softmax as max, subtract, exp, sum and divide, with the
 * statistics max + log(sum), and the values matmul. Intermediates are
 * virtual fp32 tensors; cuDNN's runtime-fusion engines run the graph as one
 * kernel. Ops go into ops[] in graph order. */
#define COMPOSITE_OPS 16

static cudnnBackendDescriptor_t pointwise(struct build *b, cudnnPointwiseMode_t mode,
                                          cudnnDataType_t prec, int64_t axis,
                                          cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y,
                                          cudnnBackendDescriptor_t in_b,
                                          cudnnBackendDescriptor_t in_t)
{
    cudnnBackendDescriptor_t pw = make(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR), op;

    set(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, "pointwise mode");
    set(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec, "pointwise type");
    if (axis >= 0)
        set(b, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, "pointwise axis");
    finish(b, pw, "finalizing a pointwise descriptor");
    op = make(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw,
        "pointwise descriptor");
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x,
        "pointwise input");
    if (in_b)
        set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &in_b,
            "pointwise second input");
    if (in_t)
        set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &in_t,
            "pointwise condition");
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y,
        "pointwise output");
    finish(b, op, "finalizing a pointwise operation");
    return op;
}

static cudnnBackendDescriptor_t reduction(struct build *b, cudnnReduceTensorOp_t how,
                                          cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y)
{
    cudnnBackendDescriptor_t rd = make(b, CUDNN_BACKEND_REDUCTION_DESCRIPTOR), op;
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;

    set(b, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &how,
        "reduction operator");
    set(b, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32, "reduction type");
    finish(b, rd, "finalizing a reduction descriptor");
    op = make(b, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x,
        "reduction input");
    set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y,
        "reduction output");
    set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd,
        "reduction descriptor");
    finish(b, op, "finalizing a reduction");
    return op;
}

static cudnnBackendDescriptor_t matmul(struct build *b, cudnnBackendDescriptor_t x,
                                       cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t out)
{
    cudnnBackendDescriptor_t md = make(b, CUDNN_BACKEND_MATMUL_DESCRIPTOR), op;
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;

    set(b, md, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32, "matmul type");
    finish(b, md, "finalizing a matmul descriptor");
    op = make(b, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x,
        "matmul first input");
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y,
        "matmul second input");
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &out,
        "matmul output");
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &md,
        "matmul descriptor");
    finish(b, op, "finalizing a matmul");
    return op;
}

/* Uids of the composite's intermediates. */
enum {
    V_SCORES = 101,
    V_SCALED,
    V_ROW,
    V_ROW_SHIFTED,
    V_COL,
    V_MASK,
    V_MASKED,
    V_MAX,
    V_CENTRED,
    V_EXP,
    V_SUM,
    V_LOG,
    V_PROBS,
};

static int composite(struct build *b, const struct tc_shape *s, cudnnBackendDescriptor_t *ops)
{
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32, yes = CUDNN_DATA_BOOLEAN;
    const int64_t scores[4] = {s->batch, s->heads, s->seq_q, s->seq_kv};
    const int64_t rows[4] = {s->batch, s->heads, s->seq_q, 1};
    const int64_t one[4] = {1, 1, 1, 1};
    /* K^T: K's buffer read as batch x kv heads x head_dim x seq_kv */
    const int64_t kt_dims[4] = {s->batch, s->kv_heads, s->head_dim, s->seq_kv};
    const int64_t kt_strides[4] = {s->kv_heads * s->seq_kv * s->head_dim, s->seq_kv * s->head_dim,
                                   1, s->head_dim};
    cudnnBackendDescriptor_t q = tensor(b, s, TC_SDPA_Q), v = tensor(b, s, TC_SDPA_V);
    cudnnBackendDescriptor_t o = tensor(b, s, TC_SDPA_O), stats = tensor(b, s, TC_SDPA_STATS);
    cudnnBackendDescriptor_t scale = tensor(b, s, TC_SDPA_SCALE);
    cudnnBackendDescriptor_t kt =
        tensor_desc(b, TC_SDPA_K, io_type(s), kt_dims, kt_strides, T_DEVICE);
    cudnnBackendDescriptor_t neg_inf = tensor_desc(b, TC_SDPA_NEG_INF, f32, one, NULL, T_BY_VALUE);
    cudnnBackendDescriptor_t sc = tensor_desc(b, V_SCORES, f32, scores, NULL, T_VIRTUAL);
    cudnnBackendDescriptor_t scaled = tensor_desc(b, V_SCALED, f32, scores, NULL, T_VIRTUAL);
    cudnnBackendDescriptor_t row = tensor_desc(b, V_ROW, i32, scores, NULL, T_VIRTUAL);
    cudnnBackendDescriptor_t col = tensor_desc(b, V_COL, i32, scores, NULL, T_VIRTUAL);
    cudnnBackendDescriptor_t mask = tensor_desc(b, V_MASK, yes, scores, NULL, T_VIRTUAL);
    cudnnBackendDescriptor_t masked = tensor_desc(b, V_MASKED, f32, scores, NULL, T_VIRTUAL);
    cudnnBackendDescriptor_t mx = tensor_desc(b, V_MAX, f32, rows, NULL, T_VIRTUAL);
    cudnnBackendDescriptor_t centred = tensor_desc(b, V_CENTRED, f32, scores, NULL, T_VIRTUAL);
    cudnnBackendDescriptor_t ex = tensor_desc(b, V_EXP, f32, scores, NULL, T_VIRTUAL);
    cudnnBackendDescriptor_t sum = tensor_desc(b, V_SUM, f32, rows, NULL, T_VIRTUAL);
    cudnnBackendDescriptor_t lg = tensor_desc(b, V_LOG, f32, rows, NULL, T_VIRTUAL);
    cudnnBackendDescriptor_t probs = tensor_desc(b, V_PROBS, f32, scores, NULL, T_VIRTUAL);
    int n = 0;

    ops[n++] = matmul(b, q, kt, sc);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_MUL, f32, -1, sc, scaled, scale, NULL);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_GEN_INDEX, i32, 2, scaled, row, NULL, NULL);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_GEN_INDEX, i32, 3, scaled, col, NULL, NULL);
    if (s->seq_kv != s->seq_q) {
        /* aligned to the last key, as the unfused path: row + seq_kv - seq_q */
        cudnnBackendDescriptor_t shift = tensor_desc(b, TC_SDPA_SHIFT, i32, one, NULL, T_BY_VALUE);
        cudnnBackendDescriptor_t shifted =
            tensor_desc(b, V_ROW_SHIFTED, i32, scores, NULL, T_VIRTUAL);

        ops[n++] = pointwise(b, CUDNN_POINTWISE_ADD, i32, -1, row, shifted, shift, NULL);
        row = shifted;
    }
    ops[n++] = pointwise(b, CUDNN_POINTWISE_CMP_GE, yes, -1, row, mask, col, NULL);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_BINARY_SELECT, f32, -1, scaled, masked, neg_inf, mask);
    ops[n++] = reduction(b, CUDNN_REDUCE_TENSOR_MAX, masked, mx);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_SUB, f32, -1, masked, centred, mx, NULL);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_EXP, f32, -1, centred, ex, NULL, NULL);
    ops[n++] = reduction(b, CUDNN_REDUCE_TENSOR_ADD, ex, sum);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_LOG, f32, -1, sum, lg, NULL, NULL);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_ADD, f32, -1, mx, stats, lg, NULL);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_DIV, f32, -1, ex, probs, sum, NULL);
    ops[n++] = matmul(b, probs, v, o);
    return n;
}

/* The engine and knobs of configuration cfg. Best effort: a record cuDNN
 * does not give is left out, never a failure of the measurement. */
static void record_engine(struct build *b, cudnnBackendDescriptor_t cfg)
{
    const struct tc_cudnn_api *api = b->api;
    struct tc_sdpa_plan *p = b->p;
    cudnnBackendDescriptor_t engine = make(b, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t knobs[TC_SDPA_KNOBS_MAX];
    int64_t n = 0;
    int made = 0;

    p->engine = -1;
    p->nknobs = 0;
    if (b->st != CUDNN_STATUS_SUCCESS)
        return;
    if (api->get_attr(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                      &engine) == CUDNN_STATUS_SUCCESS &&
        n == 1 &&
        api->get_attr(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                      &p->engine) != CUDNN_STATUS_SUCCESS)
        p->engine = -1;
    /* the descriptors to copy the choices into are the caller's */
    while (made < TC_SDPA_KNOBS_MAX && p->ndesc < TC_SDPA_DESC_MAX &&
           (knobs[made] = make(b, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR)))
        made++;
    b->st = CUDNN_STATUS_SUCCESS; /* running out of room is no failure */
    n = 0;
    if (!made ||
        api->get_attr(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, made,
                      &n, knobs) != CUDNN_STATUS_SUCCESS)
        return;
    for (int64_t i = 0; i < n && i < made; i++) {
        cudnnBackendKnobType_t type;
        int64_t value = 0, got = 0;

        if (api->get_attr(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &got,
                          &type) != CUDNN_STATUS_SUCCESS ||
            api->get_attr(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &got,
                          &value) != CUDNN_STATUS_SUCCESS)
            continue;
        p->knob_type[p->nknobs] = (int64_t)type;
        p->knob_value[p->nknobs++] = value;
    }
}

/* The heuristic's configurations in its order; the plan of the first
 * that finalizes (an engine may refuse a shape its heuristic ranked). */
static void choose_plan(struct build *b, cudnnHandle_t handle, cudnnBackendDescriptor_t graph)
{
    const struct tc_cudnn_api *api = b->api;
    struct tc_sdpa_plan *p = b->p;
    cudnnBackendDescriptor_t heur = make(b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendDescriptor_t cfg[TC_SDPA_CONFIGS_MAX];
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    cudnnStatus_t last = CUDNN_STATUS_NOT_SUPPORTED;
    int64_t n = 0;

    set(b, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph,
        "heuristic graph");
    set(b, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "heuristic mode");
    finish(b, heur, "finalizing the heuristic");
    for (int i = 0; i < TC_SDPA_CONFIGS_MAX; i++)
        cfg[i] = make(b, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    if (b->st != CUDNN_STATUS_SUCCESS)
        return;
    failed(b,
           api->get_attr(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                         TC_SDPA_CONFIGS_MAX, &n, cfg),
           "reading the heuristic's engine configurations");
    if (b->st != CUDNN_STATUS_SUCCESS)
        return;
    p->configs = (int)(n < TC_SDPA_CONFIGS_MAX ? n : TC_SDPA_CONFIGS_MAX);
    if (!handle)
        return; /* a build check: no device to plan for */
    for (int i = 0; i < p->configs; i++) {
        cudnnBackendDescriptor_t plan = make(b, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        cudnnStatus_t st;

        set(b, plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle,
            "plan handle");
        set(b, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
            &cfg[i], "plan engine configuration");
        if (b->st != CUDNN_STATUS_SUCCESS)
            return;
        if ((st = api->finalize(plan)) != CUDNN_STATUS_SUCCESS) {
            last = st;
            continue;
        }
        p->plan = plan;
        p->rank = i + 1;
        failed(b,
               api->get_attr(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                             &n, &p->workspace_bytes),
               "reading the plan's workspace size");
        record_engine(b, cfg[i]);
        return;
    }
    failed(b, last,
           p->configs ? "no engine configuration finalized" : "the heuristic offered no engine");
}

static bool not_supported(cudnnStatus_t st)
{
    int family = CUDNN_STATUS_CATEGORY(st);

    return family == CUDNN_STATUS_NOT_SUPPORTED || family == CUDNN_STATUS_BAD_PARAM;
}

void tc_sdpa_build(const struct tc_cudnn_api *api, cudnnHandle_t handle, enum tc_sdpa_graph g,
                   const struct tc_shape *s, struct tc_sdpa_plan *p, struct tc_outcome *oc)
{
    struct build b = {.api = api, .p = p, .st = CUDNN_STATUS_SUCCESS};
    cudnnBackendDescriptor_t ops[COMPOSITE_OPS], graph;
    int nops = 1;

    tc_sdpa_free(api, p);
    p->graph = g;
    p->engine = -1;
    p->scale = 1.0f / sqrtf((float)s->head_dim);
    p->neg_inf = -INFINITY;
    p->shift = g == TC_SDPA_FWD_COMPOSITE ? (int32_t)(s->seq_kv - s->seq_q) : 0;
    if (g != TC_SDPA_FWD_NODE && g != TC_SDPA_BWD_NODE && g != TC_SDPA_FWD_COMPOSITE) {
        oc->status = TC_STATUS_UNSUPPORTED;
        snprintf(oc->message, sizeof(oc->message), "no cuDNN graph for this shape");
        return;
    }
    if (g == TC_SDPA_FWD_COMPOSITE)
        nops = composite(&b, s, ops);
    else
        ops[0] = operation(&b, g, s);
    graph = make(&b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    if (handle)
        set(&b, graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle,
            "graph handle");
    set(&b, graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, nops, ops,
        "graph operations");
    finish(&b, graph, "finalizing the operation graph");
    p->opgraph = graph;
    if (b.st == CUDNN_STATUS_SUCCESS)
        choose_plan(&b, handle, graph);
    if (b.st != CUDNN_STATUS_SUCCESS) {
        char detail[112] = "";

        if (api->last_error)
            api->last_error(detail, sizeof(detail));
        oc->status = not_supported(b.st) ? TC_STATUS_UNSUPPORTED : TC_STATUS_ERROR;
        /* cuDNN before 9.21 builds no operation graph of the backward
         * node on most GPUs: say what would */
        snprintf(oc->message, sizeof(oc->message), "cuDNN %s: %s (%s)%s", b.what,
                 api->error_string ? api->error_string(b.st) : "?", detail,
                 g == TC_SDPA_BWD_NODE ? "; the SDPA backward node needs cuDNN 9.21 or newer here"
                                       : "");
        tc_sdpa_free(api, p);
        return;
    }
    p->ready = true;
}

int64_t tc_sdpa_engine_count(const struct tc_cudnn_api *api, const struct tc_sdpa_plan *p)
{
    int64_t count = -1, n = 0;

    if (!p->ready || !p->opgraph ||
        api->get_attr(p->opgraph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64,
                      1, &n, &count) != CUDNN_STATUS_SUCCESS)
        return -1;
    return count;
}

void tc_sdpa_bind(const struct tc_cudnn_api *api, struct tc_sdpa_plan *p,
                  void *const ptrs[TC_SDPA_TENSORS], void *workspace, struct tc_outcome *oc)
{
    struct build b = {.api = api, .p = p, .st = CUDNN_STATUS_SUCCESS};
    cudnnBackendDescriptor_t pack;

    if (!p->ready || !p->plan) {
        oc->status = TC_STATUS_ERROR;
        snprintf(oc->message, sizeof(oc->message), "cuDNN: no execution plan to bind");
        return;
    }
    p->nptrs = 0;
    for (int uid = 1; uid <= TC_SDPA_SHIFT; uid++) {
        /* by value: host pointers */
        void *value = NULL;

        if (uid == TC_SDPA_SCALE)
            value = &p->scale;
        else if (uid == TC_SDPA_NEG_INF && p->graph == TC_SDPA_FWD_COMPOSITE)
            value = &p->neg_inf;
        else if (uid == TC_SDPA_SHIFT && p->shift)
            value = &p->shift;

        if (value) {
            p->uids[p->nptrs] = uid;
            p->ptrs[p->nptrs++] = value;
        } else if (graph_binds(p->graph, uid)) {
            p->uids[p->nptrs] = uid;
            p->ptrs[p->nptrs++] = ptrs[uid - 1];
        }
    }
    pack = make(&b, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    set(&b, pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, p->nptrs, p->uids,
        "variant pack ids");
    set(&b, pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, p->nptrs, p->ptrs,
        "variant pack pointers");
    set(&b, pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace,
        "variant pack workspace");
    finish(&b, pack, "finalizing the variant pack");
    if (b.st != CUDNN_STATUS_SUCCESS) {
        oc->status = TC_STATUS_ERROR;
        snprintf(oc->message, sizeof(oc->message), "cuDNN %s: %s", b.what,
                 api->error_string ? api->error_string(b.st) : "?");
        return;
    }
    p->pack = pack;
    p->bound = true;
}

cudnnStatus_t tc_sdpa_run(const struct tc_cudnn_api *api, cudnnHandle_t handle,
                          const struct tc_sdpa_plan *p)
{
    if (!p->bound)
        return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
    return api->execute(handle, p->plan, p->pack);
}

void tc_sdpa_describe(const struct tc_sdpa_plan *p, size_t version, char *buf, size_t len)
{
    char v[32];
    size_t at;
    int w;

    tc_cudnn_version_name(version, v, sizeof(v));
    w = snprintf(buf, len, "cudnn %s %s: engine %" PRId64 " (heuristic %d of %d) knobs", v,
                 p->graph == TC_SDPA_BWD_NODE        ? "sdpa_bwd node"
                 : p->graph == TC_SDPA_FWD_COMPOSITE ? "sdpa_fwd composite"
                                                     : "sdpa_fwd node",
                 p->engine, p->rank, p->configs);
    at = w < 0 ? len : (size_t)w;
    for (int i = 0; i < p->nknobs && at < len; i++) {
        w = snprintf(buf + at, len - at, " %" PRId64 "=%" PRId64, p->knob_type[i],
                     p->knob_value[i]);
        at = w < 0 ? len : at + (size_t)w;
    }
    if (!p->nknobs && at < len)
        snprintf(buf + at, len - at, " none");
}

void tc_sdpa_free(const struct tc_cudnn_api *api, struct tc_sdpa_plan *p)
{
    /* in reverse: a descriptor goes before those it refers to */
    for (int i = p->ndesc - 1; i >= 0; i--)
        if (p->desc[i])
            api->destroy_desc(p->desc[i]);
    memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------------------ */
/* The backend's fused attention                                             */
/* ------------------------------------------------------------------------ */

struct tc_fused {
    struct tc_cudnn_api api;
    cudnnHandle_t handle;
    size_t version;
    char version_name[32];
    char why[192]; /* why cuDNN is not usable; "" when it is */
    struct tc_sdpa_plan fwd, bwd, *timed;
};

int tc_fused_open(cudaStream_t stream, struct tc_fused **out)
{
    struct tc_fused *f = calloc(1, sizeof(*f));
    cudnnStatus_t st;

    *out = NULL;
    if (!f)
        return tc_error(TC_ERR_NOMEM, "out of memory");
    if (tc_cudnn_load(&f->api, f->why, sizeof(f->why)) < 0) {
        *out = f;
        return TC_OK;
    }
    f->version = f->api.get_version();
    snprintf(f->version_name, sizeof(f->version_name), "cuDNN %zu.%zu.%zu", f->version / 10000,
             f->version / 100 % 100, f->version % 100);
    if ((st = f->api.create(&f->handle)) != CUDNN_STATUS_SUCCESS ||
        (st = f->api.set_stream(f->handle, stream)) != CUDNN_STATUS_SUCCESS) {
        char detail[96] = "";

        f->api.last_error(detail, sizeof(detail));
        snprintf(f->why, sizeof(f->why), "%s: no handle: %s (%s)", f->version_name,
                 f->api.error_string(st), detail);
        if (f->handle)
            f->api.destroy(f->handle);
        f->handle = NULL;
    }
    *out = f;
    return TC_OK;
}

const char *tc_fused_version(const struct tc_fused *f)
{
    return f && f->api.lib ? f->version_name : "";
}

int tc_fused_prepare(struct tc_fused *f, const struct tc_shape *s, int cc_major, int cc_minor,
                     tc_fused_buffers_fn buffers, void *ud, struct tc_outcome *oc)
{
    size_t bytes[TC_FUSED_BUFFERS] = {0};
    enum tc_dtype types[TC_FUSED_BUFFERS];
    void *ptrs[TC_FUSED_BUFFERS] = {0};
    enum tc_sdpa_graph g;
    int64_t ws;
    int err;

    f->timed = NULL;
    tc_sdpa_free(&f->api, &f->fwd);
    tc_sdpa_free(&f->api, &f->bwd);
    oc->status = TC_STATUS_OK;
    oc->message[0] = '\0';
    if (!f->api.lib || !f->handle) {
        oc->status = TC_STATUS_UNSUPPORTED;
        snprintf(oc->message, sizeof(oc->message), "fused attention needs cuDNN: %s", f->why);
        return TC_OK;
    }
    if ((g = tc_sdpa_choose(f->version, cc_major, cc_minor, s, oc->message, sizeof(oc->message))) ==
        TC_SDPA_NONE) {
        oc->status = TC_STATUS_UNSUPPORTED;
        return TC_OK;
    }
    if (!tc_sdpa_tensor_bytes(g, s, bytes)) {
        oc->status = TC_STATUS_OOM;
        snprintf(oc->message, sizeof(oc->message), "shape too large");
        return TC_OK;
    }
    /* the plans first: the workspace they need is part of the buffers */
    tc_sdpa_build(&f->api, f->handle, g == TC_SDPA_BWD_NODE ? TC_SDPA_FWD_NODE : g, s, &f->fwd, oc);
    if (oc->status == TC_STATUS_OK && g == TC_SDPA_BWD_NODE)
        tc_sdpa_build(&f->api, f->handle, TC_SDPA_BWD_NODE, s, &f->bwd, oc);
    if (oc->status != TC_STATUS_OK)
        return TC_OK;
    ws = f->fwd.workspace_bytes > f->bwd.workspace_bytes ? f->fwd.workspace_bytes
                                                         : f->bwd.workspace_bytes;
    bytes[TC_SDPA_TENSORS] = ws > 0 ? (size_t)ws : 0;
    for (int i = 0; i < TC_FUSED_BUFFERS; i++)
        types[i] = i == TC_SDPA_STATS - 1 ? TC_DTYPE_FP32
                   : i == TC_SDPA_TENSORS ? TC_DTYPE_INT8
                                          : s->dtype;
    if ((err = buffers(ud, TC_FUSED_BUFFERS, bytes, types, ptrs, oc)) < 0 ||
        oc->status != TC_STATUS_OK)
        return err;
    tc_sdpa_bind(&f->api, &f->fwd, ptrs, ptrs[TC_SDPA_TENSORS], oc);
    if (oc->status != TC_STATUS_OK)
        return TC_OK;
    f->timed = &f->fwd;
    if (g == TC_SDPA_BWD_NODE) {
        cudnnStatus_t st;

        /* the backward reads the forward's output and statistics: random
         * statistics would overflow its exponentials */
        if ((st = tc_sdpa_run(&f->api, f->handle, &f->fwd)) != CUDNN_STATUS_SUCCESS) {
            f->timed = NULL;
            oc->status = TC_STATUS_ERROR;
            snprintf(oc->message, sizeof(oc->message),
                     "cuDNN: the forward before the backward "
                     "failed: %s",
                     f->api.error_string(st));
            return TC_OK;
        }
        tc_sdpa_bind(&f->api, &f->bwd, ptrs, ptrs[TC_SDPA_TENSORS], oc);
        f->timed = oc->status == TC_STATUS_OK ? &f->bwd : NULL;
    }
    return TC_OK;
}

int tc_fused_run(struct tc_fused *f, char *msg, size_t len)
{
    cudnnStatus_t st;

    if (!f->timed) {
        snprintf(msg, len, "no fused attention prepared");
        return -1;
    }
    if ((st = tc_sdpa_run(&f->api, f->handle, f->timed)) != CUDNN_STATUS_SUCCESS) {
        char detail[96] = "";

        f->api.last_error(detail, sizeof(detail));
        snprintf(msg, len, "cuDNN execution failed: %s (%s)", f->api.error_string(st), detail);
        return -1;
    }
    return 0;
}

void tc_fused_describe(const struct tc_fused *f, char *buf, size_t len)
{
    if (f && f->timed)
        tc_sdpa_describe(f->timed, f->version, buf, len);
    else if (len)
        *buf = '\0';
}

void tc_fused_close(struct tc_fused *f)
{
    if (!f)
        return;
    if (f->api.lib) {
        tc_sdpa_free(&f->api, &f->fwd);
        tc_sdpa_free(&f->api, &f->bwd);
        if (f->handle)
            f->api.destroy(f->handle);
        tc_cudnn_unload(&f->api);
    }
    free(f);
}

int tc_fused_check(char *msg, size_t len)
{
    size_t at = strlen(msg) < len ? strlen(msg) : len;
    char *tail = msg + at;
    size_t room = len - at;
    struct tc_cudnn_api api;
    struct tc_sdpa_plan p = {0};
    struct tc_outcome oc = {.status = TC_STATUS_OK};
    /* GQA: the shape the probe built */
    const struct tc_shape s = {.kind = TC_SHAPE_ATTENTION,
                               .dtype = TC_DTYPE_BF16,
                               .batch = 2,
                               .heads = 8,
                               .kv_heads = 2,
                               .seq_q = 512,
                               .seq_kv = 1024,
                               .head_dim = 128,
                               .impl = TC_ATTN_CUDNN};
    char why[160], v[32];
    size_t version;
    int64_t engines = -1;

    if (tc_cudnn_load(&api, why, sizeof(why)) < 0) {
        snprintf(tail, room, "; no cuDNN (%.100s)", why);
        return TC_OK;
    }
    version = api.get_version();
    tc_cudnn_version_name(version, v, sizeof(v));
    if (tc_sdpa_choose(version, 9, 0, &s, why, sizeof(why)) == TC_SDPA_NONE) {
        snprintf(tail, room, "; cuDNN %s: %.120s", v, why);
        tc_cudnn_unload(&api);
        return TC_OK;
    }
    for (int causal = 0; causal < 2; causal++) {
        struct tc_shape c = s;

        c.causal = causal;
        tc_sdpa_build(&api, NULL, causal ? TC_SDPA_FWD_COMPOSITE : TC_SDPA_FWD_NODE, &c, &p, &oc);
        if (oc.status != TC_STATUS_OK) {
            snprintf(msg, len, "cuDNN %s: the %s forward graph does not build: %.150s", v,
                     causal ? "causal composite" : "SDPA node", oc.message);
            tc_cudnn_unload(&api);
            return tc_error(TC_ERR_DEVICE, "%s", msg);
        }
        if (!causal)
            engines = tc_sdpa_engine_count(&api, &p);
        tc_sdpa_free(&api, &p);
    }
    snprintf(tail, room,
             "; cuDNN %s: SDPA forward graph (bf16, 8/2 heads; %" PRId64
             " engines) and its causal composite finalized",
             v, engines);
    tc_cudnn_unload(&api);
    return TC_OK;
}
