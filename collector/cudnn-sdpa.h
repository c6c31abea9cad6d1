/* Fused scaled-dot-product attention through cuDNN's backend graph API, for
 * the cuda backend (backend-cuda.c, built with TC_HAVE_CUDNN): which graph
 * the installed cuDNN can measure a shape with, the graph itself (tensors,
 * operation, operation graph, heuristic, execution plan, variant pack),
 * one execution, and the record of the engine cuDNN chose.
 *
 * cuDNN is reached through a table of entry points (struct tc_cudnn_api),
 * filled by dlopen("libcudnn.so.9") in the module, so that the cuda backend
 * still measures GEMMs on a machine without cuDNN, and by a mock in the unit
 * test (tests/test-cudnn-sdpa.c), which checks the descriptors built and the
 * failure paths without a GPU or the library. Only the header of cuDNN is
 * needed to build this file. */
#ifndef TC_CUDNN_SDPA_H
#define TC_CUDNN_SDPA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cudnn_graph.h>

#include "collector.h"

/* The entry points used, with cuDNN's own signatures. */
struct tc_cudnn_api {
    void *lib; /* the dlopen handle (NULL for a mock) */
    size_t (*get_version)(void);
    const char *(*error_string)(cudnnStatus_t status);
    void (*last_error)(char *message, size_t max_size);
    cudnnStatus_t (*create)(cudnnHandle_t *handle);
    cudnnStatus_t (*destroy)(cudnnHandle_t handle);
    cudnnStatus_t (*set_stream)(cudnnHandle_t handle, cudaStream_t stream);
    cudnnStatus_t (*create_desc)(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *desc);
    cudnnStatus_t (*destroy_desc)(cudnnBackendDescriptor_t desc);
    cudnnStatus_t (*finalize)(cudnnBackendDescriptor_t desc);
    cudnnStatus_t (*set_attr)(cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t name,
                              cudnnBackendAttributeType_t type, int64_t count, const void *values);
    cudnnStatus_t (*get_attr)(cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t name,
                              cudnnBackendAttributeType_t type, int64_t requested, int64_t *count,
                              void *values);
    cudnnStatus_t (*execute)(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                             cudnnBackendDescriptor_t pack);
};

/* Loads libcudnn.so.9 and its entry points; on failure msg says why and
 * api is left empty. */
int tc_cudnn_load(struct tc_cudnn_api *api, char *msg, size_t len);
void tc_cudnn_unload(struct tc_cudnn_api *api);
/* "9.19.0" of a cudnnGetVersion value (major·10000 + minor·100 + patch). */
void tc_cudnn_version_name(size_t version, char *buf, size_t len);

/* cuDNN versions that bring what the collector builds. */
#define TC_CUDNN_SDPA_FWD_NODE 91301 /* the single SDPA forward node */
#define TC_CUDNN_SDPA_BWD_NODE 91700 /* the single SDPA backward node */
#define TC_CUDNN_SDPA_SUBGRAPH 92100 /* masks (causal) on the single node */

/* How a shape is measured. */
enum tc_sdpa_graph {
    TC_SDPA_NONE = 0,      /* not with this cuDNN or GPU: why says what is needed */
    TC_SDPA_FWD_NODE,      /* the single SDPA forward node */
    TC_SDPA_BWD_NODE,      /* the single SDPA backward node (after one forward) */
    TC_SDPA_FWD_COMPOSITE, /* the composite forward pattern: causal before 9.21 */
};
/* The graph that measures attention shape s with cuDNN `version` on a GPU
 * of compute capability cc_major.cc_minor; TC_SDPA_NONE with the reason
 * (naming the cuDNN version needed where a newer one would do) in why. */
enum tc_sdpa_graph tc_sdpa_choose(size_t version, int cc_major, int cc_minor,
                                  const struct tc_shape *s, char *why, size_t len);

/* Tensor unique ids of the graphs (the variant pack's keys). */
enum {
    TC_SDPA_Q = 1,
    TC_SDPA_K,
    TC_SDPA_V,
    TC_SDPA_O,
    TC_SDPA_STATS,
    TC_SDPA_SCALE,
    TC_SDPA_DO,
    TC_SDPA_DQ,
    TC_SDPA_DK,
    TC_SDPA_DV,
    TC_SDPA_NEG_INF, /* by value: what the causal mask writes */
    TC_SDPA_SHIFT,   /* by value: seq_kv - seq_q, the causal mask's alignment */
};
/* Device tensors a graph binds, indexed by uid - 1: forward Q, K, V, O,
 * stats; backward also dO, dQ, dK, dV (the scale, and the composite's
 * -inf and shift, are passed by value). */
#define TC_SDPA_TENSORS 10
#define TC_SDPA_DESC_MAX 160
#define TC_SDPA_KNOBS_MAX 48
#define TC_SDPA_CONFIGS_MAX 16

/* One graph, ready to run once bound. */
struct tc_sdpa_plan {
    bool ready, bound;
    enum tc_sdpa_graph graph;
    /* every descriptor made for the plan, destroyed together */
    cudnnBackendDescriptor_t desc[TC_SDPA_DESC_MAX];
    int ndesc;
    cudnnBackendDescriptor_t opgraph, plan, pack;
    int64_t workspace_bytes;
    float scale;   /* 1/sqrt(head_dim), bound by value */
    float neg_inf; /* the composite's masked score */
    int32_t shift; /* the composite's row shift; 0: none bound */
    int64_t uids[TC_SDPA_SHIFT];
    void *ptrs[TC_SDPA_SHIFT];
    int nptrs;
    /* the engine cuDNN's heuristic ranked `rank` (1 = first) of `configs`,
     * the first whose execution plan finalized */
    int64_t engine;
    int rank, configs;
    int nknobs;
    int64_t knob_type[TC_SDPA_KNOBS_MAX], knob_value[TC_SDPA_KNOBS_MAX];
};

/* Byte sizes of the tensors graph g binds for s, indexed like
 * tc_sdpa_plan.ptrs (0: not bound); false when a size overflows. */
bool tc_sdpa_tensor_bytes(enum tc_sdpa_graph g, const struct tc_shape *s,
                          size_t bytes[TC_SDPA_TENSORS]);

/* Builds graph g for s: descriptors, operation graph, heuristic (mode A)
 * and the execution plan of the first engine configuration that
 * finalizes. handle may be NULL (a build check without a device): the
 * graph is then finalized and the heuristic queried, and the plan left
 * out. A graph or engine cuDNN refuses is an unsupported outcome with
 * cuDNN's message; a status outside cuDNN's "not supported" and "bad
 * parameter" families is an error outcome. Never fails otherwise. */
void tc_sdpa_build(const struct tc_cudnn_api *api, cudnnHandle_t handle, enum tc_sdpa_graph g,
                   const struct tc_shape *s, struct tc_sdpa_plan *p, struct tc_outcome *oc);
/* Engines the finalized operation graph of p knows, -1 if unknown (a build
 * check's summary). */
int64_t tc_sdpa_engine_count(const struct tc_cudnn_api *api, const struct tc_sdpa_plan *p);
/* Makes the variant pack: ptrs[uid - 1] for every tensor the graph binds
 * and the workspace (workspace_bytes, may be NULL when 0). */
void tc_sdpa_bind(const struct tc_cudnn_api *api, struct tc_sdpa_plan *p,
                  void *const ptrs[TC_SDPA_TENSORS], void *workspace, struct tc_outcome *oc);
/* Queues one execution on the handle's stream. */
cudnnStatus_t tc_sdpa_run(const struct tc_cudnn_api *api, cudnnHandle_t handle,
                          const struct tc_sdpa_plan *p);
/* "cudnn 9.19.0 sdpa_fwd node: engine 8 (heuristic 1 of 3) knobs 24=3 42=1"
 * ("sdpa_fwd composite" for the composite graph) */
void tc_sdpa_describe(const struct tc_sdpa_plan *p, size_t version, char *buf, size_t len);
void tc_sdpa_free(const struct tc_cudnn_api *api, struct tc_sdpa_plan *p);

/* ------------------------------------------------------------------------ */
/* The cuda backend's fused attention                                        */
/* ------------------------------------------------------------------------ */

/* cuDNN as the backend holds it: loaded (or why not), a handle on the
 * backend's stream, and the plans of the prepared shape. Opaque. */
struct tc_fused;

/* Device buffers of the prepared shape, as the backend's operand buffers:
 * buffer i of bytes[i] (0: not needed) holding random data of types[i];
 * its address in ptrs[i]. Failures are outcomes (oc); < 0 only for
 * failures of the collector itself. */
typedef int (*tc_fused_buffers_fn)(void *ud, int n, const size_t *bytes, const enum tc_dtype *types,
                                   void **ptrs, struct tc_outcome *oc);
/* The buffers tc_fused_prepare asks for: one per tensor (uid - 1) and the
 * workspace last. */
#define TC_FUSED_BUFFERS (TC_SDPA_TENSORS + 1)

/* Loads cuDNN (libcudnn.so.9) and makes a handle on `stream`. A machine
 * without cuDNN is no failure: its fused rows say why. TC_ERR_NOMEM only. */
int tc_fused_open(cudaStream_t stream, struct tc_fused **out);
/* "cuDNN 9.19.0", or "" when cuDNN did not load. */
const char *tc_fused_version(const struct tc_fused *f);
/* Plans fused attention shape s on a GPU of compute capability
 * cc_major.cc_minor: an unsupported outcome says why not (the cuDNN
 * version needed, or cuDNN's own message). A backward runs the forward
 * once first (queued, not waited for) for its output and statistics. */
int tc_fused_prepare(struct tc_fused *f, const struct tc_shape *s, int cc_major, int cc_minor,
                     tc_fused_buffers_fn buffers, void *ud, struct tc_outcome *oc);
/* Queues one execution of the prepared shape; msg says why it failed. */
int tc_fused_run(struct tc_fused *f, char *msg, size_t len);
/* The engine record of the prepared shape (tc_sdpa_describe). */
void tc_fused_describe(const struct tc_fused *f, char *buf, size_t len);
void tc_fused_close(struct tc_fused *f);
/* The build check without a device: loads cuDNN and finalizes the graph
 * and heuristic of a GQA bf16 forward, and the causal composite graph; appends "; <summary>" to
 * msg. A machine without cuDNN or with one older than the SDPA node passes (the summary says so); a
 * graph the installed cuDNN refuses fails, with msg replaced by the reason. */
int tc_fused_check(char *msg, size_t len);

#endif
