/* Internal interface between attention.c, model.c and advise.c. Not installed. */
#ifndef TC_MODEL_INTERNAL_H
#define TC_MODEL_INTERNAL_H

#include <stddef.h>

#include "tc-internal.h"

/* Fraction of the vendor's peak DRAM bandwidth that streaming elementwise
 * kernels (norms, activations, softmax, residual adds) sustain. 0.8 is
 * what a well-written PyTorch/Apex kernel reaches on A100/H100 HBM. */
#define TC_ELEMENTWISE_BW_EFF 0.80
/* Fixed cost of one small kernel in a profiler trace (ramp up/down, tail):
 * the floor an elementwise or attention kernel never goes below. */
#define TC_KERNEL_FLOOR_US 2.0

/* A cache of GEMM predictions keyed by the whole query, so that the
 * advisor's thousands of candidates, which share most of their shapes,
 * ask the GEMM predictor once per distinct shape. Not thread-safe. */
struct tc_gemm_memo;

struct tc_gemm_memo *tc_gemm_memo_new(void);
void tc_gemm_memo_free(struct tc_gemm_memo *memo);
/* Number of distinct shapes predicted through the memo. */
size_t tc_gemm_memo_size(const struct tc_gemm_memo *memo);

/* One GEMM through the predictor (p may be NULL: the analytical model),
 * through memo when given (may be NULL). */
int tc_gemm_predict_any(struct tc_predictor *p, const struct tc_gpu *gpu, struct tc_gemm_memo *memo,
                        const struct tc_gemm_query *q, struct tc_gemm_prediction *out);

/* NCCL's figure for what a link carries of its rate (src/graph/topo.h:
 * 20 GB/s for an NVLink of 25, 12 for a PCIe Gen3 x16 slot of 15.75). */
#define TC_COLL_LINK_EFF 0.8

enum tc_collective { TC_COLL_ALLREDUCE, TC_COLL_ALLGATHER };

/* One collective of `bytes` (each GPU's buffer; an all-gather's output)
 * over `ranks` GPUs of one node joined by gpu's interconnect, timed by
 * NCCL's own cost model, the fastest of its algorithms and protocols
 * (collective.c). 0 for one rank. */
double tc_collective_us(const struct tc_gpu *gpu, enum tc_collective coll, int64_t ranks,
                        double bytes);
/* The same over ranks spread evenly over `nodes` nodes (1: the above), each
 * GPU reaching the other nodes through a network adapter of nic_gbps. */
double tc_collective_nodes_us(const struct tc_gpu *gpu, enum tc_collective coll, int64_t ranks,
                              int64_t nodes, double nic_gbps, double bytes);
/* One point-to-point send of `bytes` to a GPU of the same node or, when
 * across_nodes, of another one. */
double tc_p2p_us(const struct tc_gpu *gpu, bool across_nodes, double nic_gbps, double bytes);

/* Time of a memory-bound kernel moving `bytes` through DRAM. */
double tc_elementwise_time_us(const struct tc_gpu *gpu, double bytes);
/* Passes over its tensor a memory-bound kernel of that kind makes (each a
 * read or a write of all of it; memop.c gives the kernels they come from). */
double tc_memop_passes(enum tc_memop_kind kind);

/* The fused-attention tile model (attention-fused.c): fills the time,
 * bound and tile fields of *out for q (checked; seq_kv resolved), or
 * TC_ERR_UNSUPPORTED when the named kernel does not run the query. */
int tc_attention_fused(const struct tc_gpu *gpu, const struct tc_attention_query *q, int64_t seq_kv,
                       struct tc_attention_prediction *out);
/* (query, key) pairs q's mask keeps (seq_kv resolved). */
double tc_attention_pairs(const struct tc_attention_query *q, int64_t seq_kv);

/* The dtype of q's KV cache: TC_DTYPE_FP64 (0) means the attention's. */
static inline enum tc_dtype tc_attention_kv_dtype(const struct tc_attention_query *q)
{
    return q->kv_dtype == TC_DTYPE_FP64 ? q->dtype : q->kv_dtype;
}
/* The most a paged cache is known to slow a kernel: vLLM's paged kernel
 * measured 20-26% slower than FasterTransformer's contiguous one (Kwon et
 * al., SOSP 2023, Sec. 7.1, Fig. 18a). The upper end of a paged
 * prediction's interval allows it (attention.c). */
#define TC_PAGED_OVERHEAD_MAX 0.26
/* Bytes of one block-table entry: an int32 page index (FlashAttention-2's
 * block_table, vLLM's block tables, the cuDNN frontend's page tables). */
#define TC_PAGE_INDEX_BYTES 4.0

/* Test hooks of the fused model: the key tiles a forward CTA over query
 * rows [r0, r1] computes under q's mask (*n) and how many of them no mask
 * cuts (*n_full), for key tiles of bc; the query tiles a backward CTA over
 * keys [k0, k1] computes, for query tiles of br; the split-KV count the
 * FlashDecoding heuristic picks. */
void tc_attention_fwd_tiles(const struct tc_attention_query *q, int64_t seq_kv, int64_t r0,
                            int64_t r1, int64_t bc, int64_t *n, int64_t *n_full);
void tc_attention_bwd_tiles(const struct tc_attention_query *q, int64_t seq_kv, int64_t k0,
                            int64_t k1, int64_t br, int64_t *n, int64_t *n_full);
int64_t tc_attention_split_heuristic(int64_t ctas, double slots, int64_t key_tiles);

/* tc_predict_attention with a memo for its GEMMs (unfused). */
int tc_attention_predict_memo(struct tc_predictor *p, const struct tc_gpu *gpu,
                              struct tc_gemm_memo *memo, const struct tc_attention_query *q,
                              struct tc_attention_prediction *out);

/* tc_predict_model_on (decode context 0) with a memo (advisor); cluster
 * NULL: the GPU's default nodes. */
int tc_model_predict_memo(struct tc_predictor *p, const struct tc_gpu *gpu,
                          struct tc_gemm_memo *memo, const struct tc_model_config *cfg,
                          const struct tc_cluster *cluster, struct tc_model_prediction **out);

/* TC_OK if cluster (may be NULL) is in range, else an error naming the
 * field. */
int tc_cluster_check(const struct tc_cluster *cluster);

#endif
