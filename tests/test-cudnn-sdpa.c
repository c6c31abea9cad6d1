/* Unit tests of the cuda backend's cuDNN fused attention (collector/
 * cudnn-sdpa.c) without a GPU or cuDNN: the choice of graph and its
 * messages, and the graph built through a mock of cuDNN's backend API
 * (descriptors, their attributes and finalize order, the engine choice and
 * its record, the variant pack) and its failure paths. Built when the
 * build found cuDNN's header (meson option cudnn). */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cudnn-sdpa.h"
#include "tilecast/tilecast.h"

/* ------------------------------------------------------------------------ */
/* The mock                                                                  */
/* ------------------------------------------------------------------------ */

#define MOCK_DESC 512
#define MOCK_ATTR 24

struct mattr {
    int name, type;
    int64_t count;
    int64_t v[16]; /* INT64 and enum values, or descriptor indices + 1 */
};

struct mdesc {
    int type;
    bool finalized, destroyed, out_of_order;
    int nattr;
    struct mattr attr[MOCK_ATTR];
    int rank; /* engine configurations: the heuristic's rank (1-based) */
};

static struct {
    struct mdesc d[MOCK_DESC];
    int n, destroyed, executed;
    int refuse_type;           /* finalize of this descriptor type fails */
    cudnnStatus_t refuse_with; /* ... with this status */
    int configs;               /* engine configurations the heuristic offers */
    bool refuse_first_plan;    /* the first configuration's plan does not finalize */
} mock;

static int index_of(cudnnBackendDescriptor_t d)
{
    intptr_t i = (intptr_t)d - 1;

    ck_assert(i >= 0 && i < mock.n);
    return (int)i;
}

static cudnnBackendDescriptor_t handle_of(int i)
{
    return (cudnnBackendDescriptor_t)(intptr_t)(i + 1);
}

static size_t m_version(void)
{
    return 91900;
}

static const char *m_error_string(cudnnStatus_t st)
{
    return st == CUDNN_STATUS_SUCCESS ? "CUDNN_STATUS_SUCCESS" : "CUDNN_STATUS_MOCKED";
}

static void m_last_error(char *msg, size_t len)
{
    snprintf(msg, len, "outputGraph.buildDAG()");
}

static cudnnStatus_t m_create_desc(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *d)
{
    ck_assert_int_lt(mock.n, MOCK_DESC);
    memset(&mock.d[mock.n], 0, sizeof(mock.d[0]));
    mock.d[mock.n].type = (int)type;
    *d = handle_of(mock.n++);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t m_destroy_desc(cudnnBackendDescriptor_t d)
{
    struct mdesc *m = &mock.d[index_of(d)];

    ck_assert_msg(!m->destroyed, "descriptor destroyed twice");
    m->destroyed = true;
    mock.destroyed++;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t m_set_attr(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                cudnnBackendAttributeType_t type, int64_t count, const void *values)
{
    struct mdesc *m = &mock.d[index_of(d)];
    struct mattr *a;

    ck_assert_msg(!m->finalized, "attribute %d set after finalize", (int)name);
    ck_assert_int_lt(m->nattr, MOCK_ATTR);
    a = &m->attr[m->nattr++];
    a->name = (int)name;
    a->type = (int)type;
    a->count = count;
    for (int64_t i = 0; i < count && i < 16; i++) {
        if (type == CUDNN_TYPE_INT64) {
            a->v[i] = ((const int64_t *)values)[i];
        } else if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
            int r = index_of(((const cudnnBackendDescriptor_t *)values)[i]);

            a->v[i] = r + 1;
            /* what a descriptor refers to is finalized first */
            if (!mock.d[r].finalized)
                m->out_of_order = true;
        } else if (type == CUDNN_TYPE_BOOLEAN) {
            a->v[i] = ((const bool *)values)[i];
        } else if (type == CUDNN_TYPE_DATA_TYPE) {
            a->v[i] = ((const cudnnDataType_t *)values)[i];
        } else if (type == CUDNN_TYPE_POINTWISE_MODE) {
            a->v[i] = ((const cudnnPointwiseMode_t *)values)[i];
        } else if (type == CUDNN_TYPE_REDUCTION_OPERATOR_TYPE) {
            a->v[i] = ((const cudnnReduceTensorOp_t *)values)[i];
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

static const struct mattr *attr_of(int desc, int name)
{
    for (int i = 0; i < mock.d[desc].nattr; i++)
        if (mock.d[desc].attr[i].name == name)
            return &mock.d[desc].attr[i];
    return NULL;
}

/* The configuration a plan descriptor names. */
static int plan_rank(int plan)
{
    const struct mattr *a = attr_of(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);

    return a ? mock.d[a->v[0] - 1].rank : 0;
}

static cudnnStatus_t m_finalize(cudnnBackendDescriptor_t d)
{
    struct mdesc *m = &mock.d[index_of(d)];

    if (m->type == mock.refuse_type)
        return mock.refuse_with;
    if (m->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && mock.refuse_first_plan &&
        plan_rank(index_of(d)) == 1)
        return CUDNN_STATUS_NOT_SUPPORTED_SHAPE;
    m->finalized = true;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t m_get_attr(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                cudnnBackendAttributeType_t type, int64_t requested, int64_t *count,
                                void *values)
{
    int i = index_of(d);
    cudnnBackendDescriptor_t *descs = values;
    int64_t *ints = values;

    (void)type;
    switch ((int)name) {
    case CUDNN_ATTR_ENGINEHEUR_RESULTS:
        *count = mock.configs < requested ? mock.configs : requested;
        /* cuDNN fills the caller's descriptors, finalized */
        for (int64_t k = 0; k < *count; k++) {
            mock.d[index_of(descs[k])].rank = (int)k + 1;
            mock.d[index_of(descs[k])].finalized = true;
        }
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_ENGINECFG_ENGINE:
        *count = 1;
        mock.d[index_of(descs[0])].rank = mock.d[i].rank;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX:
        *count = 1;
        ints[0] = 100 + mock.d[i].rank;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_ENGINECFG_KNOB_CHOICES:
        *count = 2;
        mock.d[index_of(descs[0])].rank = 1000 + 24 * 10 + 3; /* type 24, value 3 */
        mock.d[index_of(descs[1])].rank = 1000 + 42 * 10 + mock.d[i].rank;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE:
        *count = 1;
        *(cudnnBackendKnobType_t *)values = (cudnnBackendKnobType_t)((mock.d[i].rank - 1000) / 10);
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE:
        *count = 1;
        ints[0] = (mock.d[i].rank - 1000) % 10;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
        *count = 1;
        ints[0] = 4096;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT:
        ck_assert_int_eq(mock.d[i].type, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
        *count = 1;
        ints[0] = 12;
        return CUDNN_STATUS_SUCCESS;
    default:
        return CUDNN_STATUS_BAD_PARAM;
    }
}

static cudnnStatus_t m_execute(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
                               cudnnBackendDescriptor_t pack)
{
    (void)h;
    ck_assert(mock.d[index_of(plan)].finalized);
    ck_assert(mock.d[index_of(pack)].finalized);
    mock.executed++;
    return CUDNN_STATUS_SUCCESS;
}

static const struct tc_cudnn_api api = {
    .get_version = m_version,
    .error_string = m_error_string,
    .last_error = m_last_error,
    .create_desc = m_create_desc,
    .destroy_desc = m_destroy_desc,
    .finalize = m_finalize,
    .set_attr = m_set_attr,
    .get_attr = m_get_attr,
    .execute = m_execute,
};

static void mock_reset(void)
{
    memset(&mock, 0, sizeof(mock));
    mock.refuse_type = -1;
    mock.configs = 3;
}

/* The one descriptor of `type`, which must exist once. */
static int only(int type)
{
    int found = -1;

    for (int i = 0; i < mock.n; i++)
        if (mock.d[i].type == type) {
            ck_assert_msg(found < 0, "descriptor type %d made twice", type);
            found = i;
        }
    ck_assert_msg(found >= 0, "no descriptor of type %d", type);
    return found;
}

/* The tensor attached to the operation as `name`. */
static int tensor_at(int op, int name)
{
    const struct mattr *a = attr_of(op, name);

    ck_assert_msg(a != NULL, "operation attribute %d not set", name);
    ck_assert_int_eq(a->type, CUDNN_TYPE_BACKEND_DESCRIPTOR);
    ck_assert_int_eq(mock.d[a->v[0] - 1].type, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    return (int)a->v[0] - 1;
}

static void assert_dims(int t, int64_t b, int64_t h, int64_t s, int64_t d)
{
    const struct mattr *dims = attr_of(t, CUDNN_ATTR_TENSOR_DIMENSIONS);
    const struct mattr *str = attr_of(t, CUDNN_ATTR_TENSOR_STRIDES);

    ck_assert(dims && str && dims->count == 4 && str->count == 4);
    ck_assert_msg(dims->v[0] == b && dims->v[1] == h && dims->v[2] == s && dims->v[3] == d,
                  "dims %lld %lld %lld %lld", (long long)dims->v[0], (long long)dims->v[1],
                  (long long)dims->v[2], (long long)dims->v[3]);
    /* packed BHSD */
    ck_assert(str->v[3] == 1 && str->v[2] == d && str->v[1] == s * d && str->v[0] == h * s * d);
}

static const struct tc_shape gqa = {.kind = TC_SHAPE_ATTENTION,
                                    .dtype = TC_DTYPE_BF16,
                                    .impl = TC_ATTN_CUDNN,
                                    .batch = 2,
                                    .heads = 8,
                                    .kv_heads = 2,
                                    .seq_q = 128,
                                    .seq_kv = 512,
                                    .head_dim = 64};

/* ------------------------------------------------------------------------ */

START_TEST(test_choose)
{
    struct tc_shape s = gqa;
    char why[256];

    ck_assert_int_eq(tc_sdpa_choose(91900, 9, 0, &s, why, sizeof(why)), TC_SDPA_FWD_NODE);
    ck_assert_str_eq(why, "");
    ck_assert_int_eq(tc_sdpa_choose(91300, 9, 0, &s, why, sizeof(why)), TC_SDPA_NONE);
    ck_assert_msg(strstr(why, "needs cuDNN 9.13.1 or newer (found 9.13.0)"), "%s", why);
    ck_assert_int_eq(tc_sdpa_choose(91900, 7, 5, &s, why, sizeof(why)), TC_SDPA_NONE);
    ck_assert_msg(strstr(why, "compute capability 8.0 or newer, not 7.5"), "%s", why);
    /* causal: the composite pattern (the node's mask subgraph is 9.21's) */
    s.causal = true;
    ck_assert_int_eq(tc_sdpa_choose(91900, 9, 0, &s, why, sizeof(why)), TC_SDPA_FWD_COMPOSITE);
    s.backward = true;
    ck_assert_int_eq(tc_sdpa_choose(91900, 9, 0, &s, why, sizeof(why)), TC_SDPA_NONE);
    ck_assert_msg(strstr(why, "backward node needs cuDNN 9.21"), "%s", why);
    s.causal = false;
    ck_assert_int_eq(tc_sdpa_choose(91900, 9, 0, &s, why, sizeof(why)), TC_SDPA_BWD_NODE);
    ck_assert_int_eq(tc_sdpa_choose(91600, 9, 0, &s, why, sizeof(why)), TC_SDPA_NONE);
    ck_assert_msg(strstr(why, "backward node needs cuDNN 9.17 or newer (found 9.16.0)"), "%s", why);
    s.backward = false;
    s.dtype = TC_DTYPE_FP8;
    ck_assert_int_eq(tc_sdpa_choose(91900, 9, 0, &s, why, sizeof(why)), TC_SDPA_NONE);
    ck_assert_msg(strstr(why, "fp8"), "%s", why);
    s.dtype = TC_DTYPE_FP32;
    ck_assert_int_eq(tc_sdpa_choose(91900, 9, 0, &s, why, sizeof(why)), TC_SDPA_NONE);
    ck_assert_msg(strstr(why, "fp16 and bf16, not fp32"), "%s", why);
}
END_TEST

START_TEST(test_forward_graph)
{
    struct tc_sdpa_plan p = {0};
    struct tc_outcome oc = {.status = TC_STATUS_OK};
    size_t bytes[TC_SDPA_TENSORS];
    void *ptrs[TC_SDPA_TENSORS] = {0};
    char text[256];
    int op, graph, q, k, stats, scale, pack;
    const struct mattr *a;

    mock_reset();
    mock.refuse_first_plan = true; /* the heuristic's first engine refuses the shape */
    tc_sdpa_build(&api, (cudnnHandle_t)&mock, TC_SDPA_FWD_NODE, &gqa, &p, &oc);
    ck_assert_msg(oc.status == TC_STATUS_OK, "%s", oc.message);
    ck_assert(p.ready);
    op = only(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
    graph = only(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    for (int i = 0; i < mock.n; i++)
        ck_assert_msg(!mock.d[i].out_of_order, "descriptor %d refers to an unfinalized one", i);
    /* Q over the query heads, K over the KV heads: cuDNN shares them (GQA) */
    q = tensor_at(op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC);
    k = tensor_at(op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC);
    assert_dims(q, 2, 8, 128, 64);
    assert_dims(k, 2, 2, 512, 64);
    assert_dims(tensor_at(op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC), 2, 2, 512, 64);
    assert_dims(tensor_at(op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC), 2, 8, 128, 64);
    ck_assert_int_eq(attr_of(q, CUDNN_ATTR_TENSOR_DATA_TYPE)->v[0], CUDNN_DATA_BFLOAT16);
    ck_assert_int_eq(attr_of(q, CUDNN_ATTR_TENSOR_UNIQUE_ID)->v[0], TC_SDPA_Q);
    ck_assert_int_eq(attr_of(k, CUDNN_ATTR_TENSOR_UNIQUE_ID)->v[0], TC_SDPA_K);
    /* the statistics a training forward writes: one float per query row */
    stats = tensor_at(op, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC);
    assert_dims(stats, 2, 8, 128, 1);
    ck_assert_int_eq(attr_of(stats, CUDNN_ATTR_TENSOR_DATA_TYPE)->v[0], CUDNN_DATA_FLOAT);
    /* the scale, by value */
    scale = tensor_at(op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC);
    ck_assert(attr_of(scale, CUDNN_ATTR_TENSOR_IS_BY_VALUE)->v[0]);
    ck_assert(attr_of(q, CUDNN_ATTR_TENSOR_IS_BY_VALUE) == NULL);
    ck_assert_double_eq_tol(p.scale, 0.125, 1e-7);
    /* the graph holds the operation and the handle */
    a = attr_of(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS);
    ck_assert(a && a->count == 1 && a->v[0] == op + 1);
    ck_assert(attr_of(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE) != NULL);
    ck_assert_int_eq(tc_sdpa_engine_count(&api, &p), 12);
    /* the second engine's plan, recorded with its knobs */
    ck_assert_int_eq(p.rank, 2);
    ck_assert_int_eq(p.configs, 3);
    ck_assert_int_eq(p.engine, 102);
    ck_assert_int_eq(p.workspace_bytes, 4096);
    tc_sdpa_describe(&p, 91900, text, sizeof(text));
    ck_assert_str_eq(text, "cudnn 9.19.0 sdpa_fwd node: engine 102 (heuristic 2 of 3) knobs "
                           "24=3 42=2");
    /* nothing runs before the variant pack */
    ck_assert_int_eq(tc_sdpa_run(&api, (cudnnHandle_t)&mock, &p),
                     CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
    ck_assert_int_eq(mock.executed, 0);
    ck_assert(tc_sdpa_tensor_bytes(TC_SDPA_FWD_NODE, &gqa, bytes));
    ck_assert_uint_eq(bytes[TC_SDPA_Q - 1], (size_t)2 * 8 * 128 * 64 * 2);
    ck_assert_uint_eq(bytes[TC_SDPA_K - 1], (size_t)2 * 2 * 512 * 64 * 2);
    ck_assert_uint_eq(bytes[TC_SDPA_STATS - 1], (size_t)2 * 8 * 128 * 4);
    ck_assert_uint_eq(bytes[TC_SDPA_SCALE - 1], 0);
    ck_assert_uint_eq(bytes[TC_SDPA_DQ - 1], 0);
    for (int i = 0; i < TC_SDPA_TENSORS; i++)
        ptrs[i] = bytes[i] ? (void *)(intptr_t)(0x1000 * (i + 1)) : NULL;
    tc_sdpa_bind(&api, &p, ptrs, (void *)0x9000, &oc);
    ck_assert_msg(oc.status == TC_STATUS_OK, "%s", oc.message);
    pack = only(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    a = attr_of(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
    ck_assert(a && a->count == 6); /* Q, K, V, O, stats, scale */
    ck_assert_int_eq(p.nptrs, 6);
    for (int i = 0; i < p.nptrs; i++)
        ck_assert(p.uids[i] == TC_SDPA_SCALE ? p.ptrs[i] == &p.scale
                                             : p.ptrs[i] == ptrs[p.uids[i] - 1]);
    ck_assert_int_eq(tc_sdpa_run(&api, (cudnnHandle_t)&mock, &p), CUDNN_STATUS_SUCCESS);
    ck_assert_int_eq(mock.executed, 1);
    tc_sdpa_free(&api, &p);
    ck_assert_int_eq(mock.destroyed, mock.n);
    ck_assert(!p.ready && !p.ndesc);
}
END_TEST

/* A build check has no device: the graph and heuristic, no plan. */
START_TEST(test_forward_without_device)
{
    struct tc_sdpa_plan p = {0};
    struct tc_outcome oc = {.status = TC_STATUS_OK};

    mock_reset();
    tc_sdpa_build(&api, NULL, TC_SDPA_FWD_NODE, &gqa, &p, &oc);
    ck_assert_msg(oc.status == TC_STATUS_OK, "%s", oc.message);
    ck_assert(p.ready && !p.plan);
    ck_assert(attr_of(only(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR),
                      CUDNN_ATTR_OPERATIONGRAPH_HANDLE) == NULL);
    for (int i = 0; i < mock.n; i++)
        ck_assert(mock.d[i].type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    tc_sdpa_bind(&api, &p, (void *[TC_SDPA_TENSORS]){0}, NULL, &oc);
    ck_assert_int_eq(oc.status, TC_STATUS_ERROR);
    tc_sdpa_free(&api, &p);
    ck_assert_int_eq(mock.destroyed, mock.n);
}
END_TEST

/* cuDNN 9.19 builds no graph of the backward node here: an unsupported
 * row with cuDNN's message and the version that would, nothing left. */
START_TEST(test_backward_refused)
{
    struct tc_sdpa_plan p = {0};
    struct tc_outcome oc = {.status = TC_STATUS_OK};
    struct tc_shape s = gqa;
    int op;

    s.backward = true;
    mock_reset();
    mock.refuse_type = CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR;
    mock.refuse_with = CUDNN_STATUS_BAD_PARAM;
    tc_sdpa_build(&api, (cudnnHandle_t)&mock, TC_SDPA_BWD_NODE, &s, &p, &oc);
    ck_assert_int_eq(oc.status, TC_STATUS_UNSUPPORTED);
    ck_assert_msg(strstr(oc.message, "finalizing the operation graph"), "%s", oc.message);
    ck_assert_msg(strstr(oc.message, "outputGraph.buildDAG()"), "%s", oc.message);
    ck_assert_msg(strstr(oc.message, "needs cuDNN 9.21 or newer"), "%s", oc.message);
    ck_assert(!p.ready);
    ck_assert_int_eq(mock.destroyed, mock.n);
    /* the backward node had every tensor: gradients over their heads */
    op = only(CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR);
    assert_dims(tensor_at(op, CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC), 2, 2, 512, 64);
    assert_dims(tensor_at(op, CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC), 2, 8, 128, 64);
    assert_dims(tensor_at(op, CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC), 2, 8, 128, 64);
    assert_dims(tensor_at(op, CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC), 2, 8, 128, 1);
    ck_assert_int_eq(mock.d[op].nattr, 10);
    ck_assert_int_eq(tc_sdpa_run(&api, (cudnnHandle_t)&mock, &p),
                     CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
    ck_assert_int_eq(mock.executed, 0);
}
END_TEST

START_TEST(test_no_engine)
{
    struct tc_sdpa_plan p = {0};
    struct tc_outcome oc = {.status = TC_STATUS_OK};

    mock_reset();
    mock.configs = 0;
    tc_sdpa_build(&api, (cudnnHandle_t)&mock, TC_SDPA_FWD_NODE, &gqa, &p, &oc);
    ck_assert_int_eq(oc.status, TC_STATUS_UNSUPPORTED);
    ck_assert_msg(strstr(oc.message, "the heuristic offered no engine"), "%s", oc.message);
    ck_assert_int_eq(mock.destroyed, mock.n);
    /* every engine refuses */
    mock_reset();
    mock.configs = 1;
    mock.refuse_first_plan = true;
    tc_sdpa_build(&api, (cudnnHandle_t)&mock, TC_SDPA_FWD_NODE, &gqa, &p, &oc);
    ck_assert_int_eq(oc.status, TC_STATUS_UNSUPPORTED);
    ck_assert_msg(strstr(oc.message, "no engine configuration finalized"), "%s", oc.message);
    /* a failure outside "not supported" and "bad parameter" is an error */
    mock_reset();
    mock.refuse_type = CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR;
    mock.refuse_with = CUDNN_STATUS_INTERNAL_ERROR;
    tc_sdpa_build(&api, (cudnnHandle_t)&mock, TC_SDPA_FWD_NODE, &gqa, &p, &oc);
    ck_assert_int_eq(oc.status, TC_STATUS_ERROR);
    ck_assert_msg(strstr(oc.message, "finalizing the SDPA forward node"), "%s", oc.message);
    ck_assert_int_eq(mock.destroyed, mock.n);
}
END_TEST

/* The descriptor an operation's attribute names. */
static int operand(int op, int name)
{
    const struct mattr *a = attr_of(op, name);

    ck_assert_msg(a != NULL, "attribute %d of descriptor %d not set", name, op);
    return (int)a->v[0] - 1;
}

static bool is_virtual(int t)
{
    const struct mattr *a = attr_of(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL);

    return a && a->v[0];
}

/* Causal before cuDNN 9.21: the composite pattern, in graph order, with
 * the mask aligned to the last key as the unfused path aligns it. */
START_TEST(test_causal_composite)
{
    static const int want[] = {
        -1,
        CUDNN_POINTWISE_MUL,
        CUDNN_POINTWISE_GEN_INDEX,
        CUDNN_POINTWISE_GEN_INDEX,
        CUDNN_POINTWISE_ADD,
        CUDNN_POINTWISE_CMP_GE,
        CUDNN_POINTWISE_BINARY_SELECT,
        -CUDNN_REDUCE_TENSOR_MAX - 2,
        CUDNN_POINTWISE_SUB,
        CUDNN_POINTWISE_EXP,
        -CUDNN_REDUCE_TENSOR_ADD - 2,
        CUDNN_POINTWISE_LOG,
        CUDNN_POINTWISE_ADD,
        CUDNN_POINTWISE_DIV,
        -1,
    };
    struct tc_sdpa_plan p = {0};
    struct tc_outcome oc = {.status = TC_STATUS_OK};
    struct tc_shape s = gqa;
    const struct mattr *ops, *a;
    void *ptrs[TC_SDPA_TENSORS] = {(void *)0x1000, (void *)0x2000, (void *)0x3000, (void *)0x4000,
                                   (void *)0x5000};
    char text[256];
    int first, select, kt, stats_add, axis = 2;
    bool saw_neg_inf = false, saw_shift = false;

    s.causal = true;
    mock_reset();
    tc_sdpa_build(&api, (cudnnHandle_t)&mock, TC_SDPA_FWD_COMPOSITE, &s, &p, &oc);
    ck_assert_msg(oc.status == TC_STATUS_OK, "%s", oc.message);
    for (int i = 0; i < mock.n; i++)
        ck_assert_msg(!mock.d[i].out_of_order, "descriptor %d refers to an unfinalized one", i);
    ops = attr_of(only(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR), CUDNN_ATTR_OPERATIONGRAPH_OPS);
    ck_assert_int_eq(ops->count, (int64_t)(sizeof(want) / sizeof(want[0])));
    for (int i = 0; i < ops->count; i++) {
        int op = (int)ops->v[i] - 1, type = mock.d[op].type;

        if (want[i] == -1) {
            ck_assert_int_eq(type, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
        } else if (want[i] < -1) {
            int rd = operand(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC);

            ck_assert_int_eq(type, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
            ck_assert_int_eq(attr_of(rd, CUDNN_ATTR_REDUCTION_OPERATOR)->v[0], -want[i] - 2);
        } else {
            int pw = operand(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR);

            ck_assert_int_eq(type, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
            ck_assert_int_eq(attr_of(pw, CUDNN_ATTR_POINTWISE_MODE)->v[0], want[i]);
            if (want[i] == CUDNN_POINTWISE_GEN_INDEX)
                ck_assert_int_eq(attr_of(pw, CUDNN_ATTR_POINTWISE_AXIS)->v[0], axis++);
        }
    }
    /* Q . K^T: K's own buffer (uid), read transposed, at its KV heads */
    first = (int)ops->v[0] - 1;
    kt = operand(first, CUDNN_ATTR_OPERATION_MATMUL_BDESC);
    ck_assert_int_eq(attr_of(kt, CUDNN_ATTR_TENSOR_UNIQUE_ID)->v[0], TC_SDPA_K);
    a = attr_of(kt, CUDNN_ATTR_TENSOR_DIMENSIONS);
    ck_assert(a->v[0] == 2 && a->v[1] == 2 && a->v[2] == 64 && a->v[3] == 512);
    a = attr_of(kt, CUDNN_ATTR_TENSOR_STRIDES);
    ck_assert(a->v[0] == (int64_t)2 * 512 * 64 && a->v[1] == (int64_t)512 * 64 && a->v[2] == 1 &&
              a->v[3] == 64);
    ck_assert(is_virtual(operand(first, CUDNN_ATTR_OPERATION_MATMUL_CDESC)));
    /* -inf where the boolean mask is false */
    select = (int)ops->v[6] - 1;
    ck_assert_int_eq(
        attr_of(operand(select, CUDNN_ATTR_OPERATION_POINTWISE_TDESC), CUDNN_ATTR_TENSOR_DATA_TYPE)
            ->v[0],
        CUDNN_DATA_BOOLEAN);
    ck_assert(attr_of(operand(select, CUDNN_ATTR_OPERATION_POINTWISE_BDESC),
                      CUDNN_ATTR_TENSOR_IS_BY_VALUE)
                  ->v[0]);
    /* the statistics, max + log(sum), are the graph's one other output */
    stats_add = (int)ops->v[12] - 1;
    ck_assert_int_eq(attr_of(operand(stats_add, CUDNN_ATTR_OPERATION_POINTWISE_YDESC),
                             CUDNN_ATTR_TENSOR_UNIQUE_ID)
                         ->v[0],
                     TC_SDPA_STATS);
    ck_assert(!is_virtual(operand(stats_add, CUDNN_ATTR_OPERATION_POINTWISE_YDESC)));
    ck_assert_int_eq(p.shift, 512 - 128);
    tc_sdpa_bind(&api, &p, ptrs, NULL, &oc);
    ck_assert_msg(oc.status == TC_STATUS_OK, "%s", oc.message);
    ck_assert_int_eq(p.nptrs, 8);
    for (int i = 0; i < p.nptrs; i++) {
        if (p.uids[i] == TC_SDPA_NEG_INF) {
            saw_neg_inf = true;
            ck_assert(p.ptrs[i] == &p.neg_inf && isinf(p.neg_inf) && p.neg_inf < 0);
        }
        if (p.uids[i] == TC_SDPA_SHIFT)
            saw_shift = p.ptrs[i] == &p.shift;
    }
    ck_assert(saw_neg_inf && saw_shift);
    tc_sdpa_describe(&p, 91900, text, sizeof(text));
    ck_assert_msg(strstr(text, "cudnn 9.19.0 sdpa_fwd composite: engine 101"), "%s", text);
    tc_sdpa_free(&api, &p);
    ck_assert_int_eq(mock.destroyed, mock.n);
    /* self-attention: no shift to add or bind */
    s.seq_kv = s.seq_q;
    mock_reset();
    tc_sdpa_build(&api, (cudnnHandle_t)&mock, TC_SDPA_FWD_COMPOSITE, &s, &p, &oc);
    ck_assert_msg(oc.status == TC_STATUS_OK, "%s", oc.message);
    ops = attr_of(only(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR), CUDNN_ATTR_OPERATIONGRAPH_OPS);
    ck_assert_int_eq(ops->count, (int64_t)(sizeof(want) / sizeof(want[0])) - 1);
    tc_sdpa_bind(&api, &p, ptrs, NULL, &oc);
    ck_assert_int_eq(p.nptrs, 7);
    tc_sdpa_free(&api, &p);
}
END_TEST

static Suite *cudnn_suite(void)
{
    Suite *s = suite_create("cudnn-sdpa");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_choose);
    tcase_add_test(tc, test_forward_graph);
    tcase_add_test(tc, test_forward_without_device);
    tcase_add_test(tc, test_backward_refused);
    tcase_add_test(tc, test_causal_composite);
    tcase_add_test(tc, test_no_engine);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cudnn_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
