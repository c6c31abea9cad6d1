/* The model suite's tests of parallelism and of the costs around the
 * kernels: the collectives read the spec's interconnect, the host's
 * dispatch of each op and module call. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model-internal.h"
#include "test-model.h"
#include "tilecast/tilecast.h"

/* Collectives are timed by NCCL's own cost model (src/graph/tuning.cc),
 * the fastest of its algorithms and protocols, each hand-computed here:
 * up to a MB an all-reduce over 8 A100s takes the ring's LL protocol
 * (6.6 us and 0.6 us for each of its 14 steps, a quarter of the 240 GB/s
 * bus bandwidth); 8 MB LL128 (14 us and 1.9 us a step, 0.92 of it); a
 * large one Simple (8.4 and 3.4 us, all of it); the tree, within a node a
 * chain, never wins (its LL128 at 1 MB: 14 us + 2 x 7 x 1.25 us, at half
 * of 0.92 x 7/9 x 240 GB/s x 0.6, NCCL's correction at that size); PCIe
 * has no LL128 and PCIe's latencies (1.0 us an LL step); an all-gather
 * takes n - 1 steps; one rank costs nothing. */
START_TEST(test_collective_nccl_model)
{
    const struct tc_gpu *a100 = gpu("a100-sxm4-80gb");
    const struct tc_gpu *pcie = gpu("a100-pcie-80gb");

    ck_assert_double_eq_tol(tc_collective_us(a100, TC_COLL_ALLREDUCE, 8, 16384),
                            6.6 + 14 * 0.6 + 16384 / (60e3 * 8 / 14), 1e-9);
    ck_assert_double_eq_tol(tc_collective_us(a100, TC_COLL_ALLREDUCE, 8, 1 << 20),
                            6.6 + 14 * 0.6 + (1 << 20) / (60e3 * 8 / 14), 1e-9);
    ck_assert(tc_collective_us(a100, TC_COLL_ALLREDUCE, 8, 1 << 20) <
              14.0 + 2 * 7 * 1.25 + (1 << 20) / (240e3 * 0.92 * 7 / 9 * 0.5 * 0.6));
    ck_assert_double_eq_tol(tc_collective_us(a100, TC_COLL_ALLREDUCE, 8, 8 << 20),
                            14.0 + 14 * 1.9 + (8 << 20) / (240e3 * 0.92 * 8 / 14), 1e-9);
    ck_assert_double_eq_tol(tc_collective_us(a100, TC_COLL_ALLREDUCE, 8, 134217728.0),
                            8.4 + 14 * 3.4 + 134217728.0 / (240e3 * 8 / 14), 1e-9);
    ck_assert_double_eq_tol(tc_collective_us(a100, TC_COLL_ALLGATHER, 4, 1e9),
                            8.4 + 3 * 3.4 + 1e9 / (240e3 * 4 / 3), 1e-9);
    /* PCIe Gen4 x16 (32 GB/s a direction): LL, 6.6 us and 1.0 us a step */
    ck_assert_double_eq_tol(tc_collective_us(pcie, TC_COLL_ALLREDUCE, 2, 4096),
                            6.6 + 2 * 1.0 + 4096 / (32e3 * 0.8 / 4 * 2 / 2), 1e-9);
    ck_assert_double_eq(tc_collective_us(a100, TC_COLL_ALLREDUCE, 1, 1e9), 0);
}
END_TEST

/* The tensor-parallel all-reduce moves its bytes at the spec's
 * interconnect.bw_gbps: halving it doubles the bandwidth term; a spec
 * without an interconnect predicts one GPU but refuses tp > 1. */
START_TEST(test_collective_reads_interconnect)
{
    struct tc_model_config c = layer_cfg(8192, 64, 2048, 4);
    struct tc_gpu slow = *gpu("a100-sxm4-80gb");
    struct tc_model_prediction *fast_mp, *slow_mp = NULL;
    double fast_us, slow_us, bytes;

    c.tp = 8;
    fast_mp = predict("a100-sxm4-80gb", &c);
    slow.interconnect.bw_gbps /= 2;
    ck_assert_int_eq(tc_predict_model(pred, &slow, &c, &slow_mp), TC_OK);
    fast_us = find_op(fast_mp, "tp_allreduce1")->time_us;
    slow_us = find_op(slow_mp, "tp_allreduce1")->time_us;
    bytes = (double)find_op(fast_mp, "tp_allreduce1")->m;
    /* a ring moves 2(t-1)/t of the b.s.h fp16 bytes over each link */
    ck_assert_double_eq(bytes, 4.0 * 2048 * 8192 * 2);
    ck_assert_double_eq_tol(slow_us - fast_us, 2.0 * 7 / 8 * bytes / (300e3 * 0.8), 1e-6);
    tc_model_prediction_free(fast_mp);
    tc_model_prediction_free(slow_mp);

    memset(&slow.interconnect, 0, sizeof(slow.interconnect));
    slow_mp = NULL;
    ck_assert_int_eq(tc_predict_model(pred, &slow, &c, &slow_mp), TC_ERR_UNSUPPORTED);
    ck_assert_ptr_null(slow_mp);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "interconnect"));
    c.tp = 1;
    ck_assert_int_eq(tc_predict_model(pred, &slow, &c, &slow_mp), TC_OK);
    tc_model_prediction_free(slow_mp);
    /* data parallelism all-reduces the gradients over the same links */
    c.training = true;
    c.dp = 4;
    slow_mp = NULL;
    ck_assert_int_eq(tc_predict_model(pred, &slow, &c, &slow_mp), TC_ERR_UNSUPPORTED);
    ck_assert_ptr_null(slow_mp);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "data parallelism (dp 4)"));
}
END_TEST

/* Eager execution: the host dispatches every op (28 us each, an
 * event-timed op call) and each forward linear layer is a module call, 23
 * us more (nn.Linear's path over a plain op on the data's event-timed
 * hosts): a Llama layer calls qkv, proj, mlp_up and mlp_down, the head the
 * logits. The backward GEMMs are autograd's, no module call. */
START_TEST(test_host_time_counts_module_calls)
{
    struct tc_model_config c = layer_cfg(8192, 64, 1, 1);
    struct tc_model_prediction *mp;
    size_t layer_ops = 0, head_ops = 0;

    c.kv_heads = 8, c.ffn = 28672, c.swiglu = true, c.rmsnorm = true;
    c.layers = 80, c.vocab = 32000, c.tp = 8;
    mp = NULL;
    ck_assert_int_eq(tc_predict_decode(pred, gpu("a100-sxm4-80gb"), &c, 576, &mp), TC_OK);
    for (size_t i = 0; i < mp->n_ops; i++)
        *(mp->ops[i].in_layer ? &layer_ops : &head_ops) += 1;
    ck_assert_double_eq_tol(
        mp->host_time_us, (80.0 * (double)layer_ops + (double)head_ops) * 28 + (80.0 * 4 + 1) * 23,
        1e-6);
    /* host-bound: the floor the measured decode shows at TP 4 and 8 */
    ck_assert_double_eq(mp->step_time_us, mp->host_time_us);
    tc_model_prediction_free(mp);

    /* training: the same module calls, none for the backward GEMMs */
    c.training = true;
    c.seq = 8;
    c.layers = 2;
    c.tp = 1;
    mp = predict("a100-sxm4-80gb", &c);
    layer_ops = head_ops = 0;
    for (size_t i = 0; i < mp->n_ops; i++)
        *(mp->ops[i].in_layer ? &layer_ops : &head_ops) += 1;
    ck_assert_double_eq_tol(mp->host_time_us,
                            (2.0 * (double)layer_ops + (double)head_ops) * 28 + (2.0 * 4 + 1) * 23,
                            1e-6);
    tc_model_prediction_free(mp);
}
END_TEST

/* The memory check against figures computed by hand (gpu_specs and the
 * sources in tc_model_memory's comment): Llama-2-7B has 6,738,415,616
 * parameters (32 layers of 4096 x 96 x 128 + 32 x 128 x 4096 attention,
 * 3 x 4096 x 11008 MLP, two norms; 32000 x 4096 embedding and logits; the
 * final norm). */
START_TEST(test_memory_hand_computed)
{
    const double p7 = 6738415616.0, s = 4096, h = 4096;
    struct tc_model_config c;
    struct tc_model_memory m;
    const struct tc_gpu *a100 = gpu("a100-sxm4-80gb");

    ck_assert_int_eq(tc_model_config_load("llama-2-7b", &c), TC_OK);
    ck_assert_double_eq(tc_model_params(&c), p7);
    /* bf16 Adam on one GPU: 2 + 2 + 12 bytes a parameter, and per layer
     * s.b.h.(10 + 24) bytes of activations (flash attention keeps no
     * scores): 126.07 GB against 80 GB less 5 % */
    ck_assert_int_eq(tc_model_memory(a100, &c, 0, &m), TC_OK);
    ck_assert_double_eq(m.weights_bytes, 2 * p7);
    ck_assert_double_eq(m.grads_bytes, 2 * p7);
    ck_assert_double_eq(m.optimizer_bytes, 12 * p7);
    ck_assert_double_eq(m.activations_bytes, 32 * s * h * 34);
    ck_assert_double_eq(m.capacity_bytes, 76e9);
    ck_assert(!m.fits);
    /* ZeRO 1 over 8 replicas: the Adam state / 8, 55.31 GB, fits */
    c.dp = 8;
    c.zero_stage = 1;
    ck_assert_int_eq(tc_model_memory(a100, &c, 0, &m), TC_OK);
    ck_assert_double_eq(m.optimizer_bytes, 12 * p7 / 8);
    ck_assert_double_eq(m.grads_bytes, 2 * p7);
    ck_assert_double_eq_tol(m.total_bytes, 55314896896.0, 1);
    ck_assert(m.fits);
    /* ZeRO 2: the gradients too; ZeRO 3: the weights too */
    c.zero_stage = 2;
    ck_assert_int_eq(tc_model_memory(a100, &c, 0, &m), TC_OK);
    ck_assert_double_eq(m.grads_bytes, 2 * p7 / 8);
    ck_assert_double_eq(m.weights_bytes, 2 * p7);
    c.zero_stage = 3;
    ck_assert_int_eq(tc_model_memory(a100, &c, 0, &m), TC_OK);
    ck_assert_double_eq(m.weights_bytes, 2 * p7 / 8);
    ck_assert_double_eq_tol(m.total_bytes, 16 * p7 / 8 + 32 * s * h * 34, 1);
    /* full recomputation: each layer's input (2.s.b.h) and one layer's
     * activations: 1.64 GB instead of 18.25 */
    c.zero_stage = 0;
    c.dp = 1;
    c.recompute = true;
    ck_assert_int_eq(tc_model_memory(a100, &c, 0, &m), TC_OK);
    ck_assert_double_eq(m.activations_bytes, 32 * 2 * s * h + s * h * 34);
    ck_assert(!m.fits); /* the 107.8 GB of weights, gradients and Adam state */
    /* fp32: 4 + 4 bytes and Adam's 8 (the weight is its own master), the
     * activations twice the 16-bit ones */
    c.recompute = false;
    c.dtype = TC_DTYPE_FP32;
    ck_assert_int_eq(tc_model_memory(a100, &c, 0, &m), TC_OK);
    ck_assert_double_eq(m.optimizer_bytes, 8 * p7);
    ck_assert_double_eq(m.activations_bytes, 2 * 32 * s * h * 34);
    /* micro-batch 2 on an 8-way tensor split: 24/t of the 34 */
    c.dtype = TC_DTYPE_BF16;
    c.tp = 8;
    c.micro_batch = 2;
    ck_assert_int_eq(tc_model_memory(a100, &c, 0, &m), TC_OK);
    ck_assert_double_eq(m.weights_bytes, 2 * p7 / 8);
    ck_assert_double_eq(m.activations_bytes, 32 * s * 2 * h * (10 + 24.0 / 8));

    /* Llama-2-70B decode at TP 8, batch 8, 4096 tokens cached: its 8 KV
     * heads one a GPU, 2 x 80 x 128 x 4097 x 8 x 2 bytes of cache, and
     * 68,976,648,192 x 2 / 8 bytes of weights */
    ck_assert_int_eq(tc_model_config_load("llama-2-70b", &c), TC_OK);
    c.tp = 8;
    c.micro_batch = 8;
    c.dtype = TC_DTYPE_FP16;
    ck_assert_int_eq(tc_model_memory(a100, &c, 4096, &m), TC_OK);
    ck_assert_double_eq(m.kv_cache_bytes, 2.0 * 80 * 128 * 4097 * 8 * 2);
    ck_assert_double_eq(m.weights_bytes, 68976648192.0 * 2 / 8);
    ck_assert_double_eq(m.grads_bytes + m.optimizer_bytes, 0);
    ck_assert(m.fits);
    /* on one GPU the 138 GB of fp16 weights do not fit 80 GB */
    c.tp = 1;
    ck_assert_int_eq(tc_model_memory(a100, &c, 4096, &m), TC_OK);
    ck_assert(!m.fits);
}
END_TEST

/* A training step holds Adam's sweep over this GPU's parameters (28 bytes
 * each, 1/dp under ZeRO), the data-parallel all-reduce that the backward
 * does not hide (at least the last 25 MB bucket), and with recomputation a
 * second forward of every layer. */
START_TEST(test_train_step_pieces)
{
    struct tc_model_config c;
    struct tc_model_prediction *base, *dp, *rec;
    const struct tc_op_prediction *opt, *ar;
    const double p7 = 6738415616.0;

    ck_assert_int_eq(tc_model_config_load("llama-2-7b", &c), TC_OK);
    c.seq = 2048;
    base = predict("a100-sxm4-80gb", &c);
    opt = find_op(base, "optimizer");
    ck_assert_double_eq_tol((double)opt->m, 28 * p7, 1);
    ck_assert_double_eq_tol(opt->time_us, tc_elementwise_time_us(gpu("a100-sxm4-80gb"), 28 * p7),
                            1e-6);
    ck_assert(!opt->in_layer);
    for (size_t i = 0; i < base->n_ops; i++)
        ck_assert_str_ne(base->ops[i].name, "dp_allreduce");

    c.dp = 8;
    c.zero_stage = 1;
    dp = predict("a100-sxm4-80gb", &c);
    ck_assert_double_eq_tol((double)find_op(dp, "optimizer")->m, 28 * p7 / 8, 1);
    ar = find_op(dp, "dp_allreduce");
    ck_assert_double_eq_tol((double)ar->m, 2 * p7, 1);
    /* the backward (hundreds of ms) hides all but the last bucket: NCCL's
     * ring Simple over 8 GPUs, 8.4 us and 3.4 us for each of its 14 steps,
     * and 2 x 7/8 of 25 MB at 80 % of NVLink 3's 300 GB/s */
    ck_assert_double_eq_tol(ar->time_us, 8.4 + 14 * 3.4 + 1.75 * 25e6 / 240e3, 1e-6);
    ck_assert_double_eq_tol(dp->step_time_us - base->step_time_us,
                            ar->time_us + find_op(dp, "optimizer")->time_us - opt->time_us, 1e-3);

    c.dp = 1;
    c.zero_stage = 0;
    c.recompute = true;
    rec = predict("a100-sxm4-80gb", &c);
    /* one more forward per layer: about a third of forward + backward */
    ck_assert_double_gt(find_op(rec, "recompute")->time_us, 0.25 * base->layer_time_us);
    ck_assert_double_lt(find_op(rec, "recompute")->time_us, 0.45 * base->layer_time_us);
    ck_assert_double_eq_tol(rec->layer_time_us,
                            base->layer_time_us + find_op(rec, "recompute")->time_us, 1e-6);
    /* useful FLOPs do not count the recomputed forward */
    ck_assert_double_eq_tol(rec->step_flops, base->step_flops, 1);
    tc_model_prediction_free(base);
    tc_model_prediction_free(dp);
    tc_model_prediction_free(rec);
}
END_TEST

/* Rotary embeddings: a Llama layer launches one more kernel, which reads
 * and writes this GPU's q and k heads (and the host dispatches it). */
START_TEST(test_rope_op)
{
    struct tc_model_config c;
    struct tc_model_prediction *with, *without;
    const struct tc_op_prediction *op;

    ck_assert_int_eq(tc_model_config_load("llama-2-7b", &c), TC_OK);
    ck_assert(c.rope); /* the shipped Llama configs say so */
    c.training = false;
    c.seq = 1024;
    c.tp = 2;
    with = predict("a100-sxm4-80gb", &c);
    op = find_op(with, "rope");
    ck_assert(op->in_layer);
    /* 1024 tokens x (32 + 32) / 2 heads x 128 x 2 bytes, read and written */
    ck_assert_double_eq((double)op->m, 2.0 * 1024 * 32 * 128 * 2);
    c.rope = false;
    without = predict("a100-sxm4-80gb", &c);
    for (size_t i = 0; i < without->n_ops; i++)
        ck_assert_str_ne(without->ops[i].name, "rope");
    ck_assert_double_eq_tol(with->host_time_us - without->host_time_us, 32 * 28.0, 1e-6);
    ck_assert_double_eq_tol(with->layer_time_us - without->layer_time_us, op->time_us, 1e-9);
    tc_model_prediction_free(with);
    tc_model_prediction_free(without);
}
END_TEST

/* Splitwise's Llama-2-70B decode on a DGX-A100 at batch 1 (e2e_serving,
 * prompt 512, 128 tokens: the first repeat's time per token) falls from
 * TP 2 to TP 4 and not from TP 4 to TP 8: 54.9 / 45.0 / 44.9 ms (59.6-59.7
 * at TP 2 in the longer runs). The step follows: GPU-bound at TP 2 (its
 * weights, 69 GB a GPU, read once), host-bound from TP 4 on, where the
 * GPU's share halves again and the host's dispatch does not. */
START_TEST(test_decode_tp_trend)
{
    struct tc_model_config c;
    double t[4] = {0};

    ck_assert_int_eq(tc_model_config_load("llama-2-70b", &c), TC_OK);
    c.serving = true;
    c.micro_batch = 1;
    for (int i = 1; i <= 3; i++) {
        struct tc_model_prediction *mp = NULL;

        c.tp = 1 << i;
        ck_assert_int_eq(tc_predict_decode(pred, gpu("a100-sxm4-80gb"), &c, 576, &mp), TC_OK);
        t[i] = mp->step_time_us;
        if (i == 1)
            ck_assert_msg(mp->gpu_time_us > mp->host_time_us, "TP 2: gpu %.0f, host %.0f us",
                          mp->gpu_time_us, mp->host_time_us);
        else
            ck_assert_msg(mp->host_time_us > mp->gpu_time_us, "TP %d: gpu %.0f, host %.0f us",
                          1 << i, mp->gpu_time_us, mp->host_time_us);
        tc_model_prediction_free(mp);
    }
    /* measured: 54.9-59.7 / 45.0 = 1.22-1.33; 44.9 / 45.0 = 1.00 */
    ck_assert_msg(t[1] / t[2] > 1.1 && t[1] / t[2] < 1.4, "TP 2 / TP 4 = %.2f", t[1] / t[2]);
    ck_assert_msg(fabs(t[3] / t[2] - 1) < 0.05, "TP 8 / TP 4 = %.2f", t[3] / t[2]);
}
END_TEST

/* Across nodes, NCCL's multi-node terms, hand-computed: 16 A100s over two
 * DGX nodes reduce 1 GB on the ring's Simple protocol at the eight
 * network adapters of a node (8 x 25 GB/s, below NVLink's 240), 16/30 of
 * it, each of the 4 network crossings at 14 us and the other 26 steps at
 * NVLink's 3.4, the base 8.4 us, all 1.4 times (NCCL's ring plateau); one
 * GPU a node (tp 8 fills it) has its own adapter only, every step crosses
 * the network and LL128 is discounted to 0.7 (the ring's Simple still
 * wins). One node is the one-node model exactly. */
START_TEST(test_collective_across_nodes)
{
    const struct tc_gpu *a100 = gpu("a100-sxm4-80gb");

    ck_assert_double_eq_tol(tc_collective_nodes_us(a100, TC_COLL_ALLREDUCE, 16, 2, 25, 1e9),
                            (8.4 + 26 * 3.4 + 4 * 14.0) * 1.4 + 1e9 / (200e3 * 16 / 30), 1e-6);
    ck_assert_double_eq_tol(tc_collective_nodes_us(a100, TC_COLL_ALLREDUCE, 8, 8, 25, 1e9),
                            (8.4 + 14 * 14.0) * 1.4 + 1e9 / (25e3 * 8 / 14), 1e-6);
    for (int i = 0; i < 8; i++) {
        double bytes = 1024.0 * (double)(1L << (3 * i)); /* 1 KiB to 2 GiB */

        ck_assert_double_eq(tc_collective_nodes_us(a100, TC_COLL_ALLREDUCE, 8, 1, 25, bytes),
                            tc_collective_us(a100, TC_COLL_ALLREDUCE, 8, bytes));
    }
    /* a pipeline's send: one ring step of Simple and the link it crosses */
    ck_assert_double_eq_tol(tc_p2p_us(a100, false, 25, 8e6), 8.4 + 3.4 + 8e6 / 240e3, 1e-9);
    ck_assert_double_eq_tol(tc_p2p_us(a100, true, 25, 8e6), 8.4 + 14.0 + 8e6 / 25e3, 1e-9);
}
END_TEST

/* The 1F1B schedule, from the ops of the same prediction: a pipeline of 4
 * stages and 8 micro-batches takes 7 times its slowest stage (8 of the 32
 * layers and the head ops of its end, and its sends) plus one micro-batch
 * through all four stages and three boundaries; without a pipeline, 8
 * micro-batches take 8 times one. Tokens/s counts every micro-batch, MFU
 * every GPU of the pipeline. */
START_TEST(test_pipeline_schedule)
{
    struct tc_model_config c;
    struct tc_model_prediction *one, *accum, *pipe;
    const struct tc_op_prediction *send;
    double first, last, stage;

    ck_assert_int_eq(tc_model_config_load("llama-2-7b", &c), TC_OK);
    c.training = false;
    c.seq = 1024;
    one = predict("a100-sxm4-80gb", &c);
    c.microbatches = 8;
    accum = predict("a100-sxm4-80gb", &c);
    ck_assert_double_eq_tol(accum->gpu_time_us, 8 * one->gpu_time_us, 1e-6 * one->gpu_time_us);
    ck_assert_double_eq_tol(accum->tokens_per_s, one->tokens_per_s, 1e-6 * one->tokens_per_s);
    ck_assert_double_eq(accum->bubble_us, 0);
    c.pp = 4;
    pipe = predict("a100-sxm4-80gb", &c);
    ck_assert_double_eq_tol(pipe->layer_time_us, one->layer_time_us, 1e-9);
    send = find_op(pipe, "pp_send");
    /* 1024 tokens x 4096 x 2 bytes to a GPU of the same node (4 GPUs) */
    ck_assert_double_eq((double)send->m, 1024.0 * 4096 * 2);
    ck_assert_double_eq_tol(send->time_us, tc_p2p_us(gpu("a100-sxm4-80gb"), false, 25, send->m),
                            1e-9);
    ck_assert_double_eq(pipe->p2p_us, send->time_us);
    first = find_op(pipe, "embedding")->time_us;
    last = one->gpu_time_us - 32 * one->layer_time_us - first;
    stage = 8 * one->layer_time_us + fmax(first, last) + send->time_us;
    ck_assert_double_eq_tol(pipe->stage_time_us, stage, 1e-6);
    ck_assert_double_eq_tol(pipe->gpu_time_us, 7 * stage + one->gpu_time_us + 3 * send->time_us,
                            1e-6);
    ck_assert_double_eq_tol(pipe->bubble_us, pipe->gpu_time_us - 8 * stage, 1e-6);
    ck_assert_int_eq(pipe->nodes, 1);
    ck_assert_double_eq_tol(pipe->tokens_per_s, 8 * 1024 / (pipe->step_time_us * 1e-6), 1e-6);
    ck_assert_double_eq_tol(pipe->mfu * 4, accum->mfu * accum->step_time_us / pipe->step_time_us,
                            1e-9);
    tc_model_prediction_free(one);
    tc_model_prediction_free(accum);
    tc_model_prediction_free(pipe);
}
END_TEST

/* The nodes: two GPUs a node puts the 4 stages on two nodes and the send
 * on the network (25 GB/s, DGX A100's adapters); a PCIe card names no
 * system and is refused until the adapter is given; pp must divide the
 * layers; a cluster's values are range-checked. */
START_TEST(test_pipeline_nodes)
{
    struct tc_model_config c;
    struct tc_cluster two = {.gpus_per_node = 2}, dflt = {0};
    struct tc_model_prediction *mp = NULL;

    ck_assert_int_eq(tc_model_config_load("llama-2-7b", &c), TC_OK);
    c.training = false;
    c.seq = 1024;
    c.pp = 4;
    ck_assert_int_eq(tc_predict_model_on(pred, gpu("a100-sxm4-80gb"), &c, &two, 0, &mp), TC_OK);
    ck_assert_int_eq(mp->nodes, 2);
    ck_assert_double_eq_tol(find_op(mp, "pp_send")->time_us,
                            tc_p2p_us(gpu("a100-sxm4-80gb"), true, 25, 1024.0 * 4096 * 2), 1e-9);
    tc_model_prediction_free(mp);
    mp = NULL;
    tc_cluster_default(gpu("a100-pcie-80gb"), &dflt);
    ck_assert_int_eq(dflt.gpus_per_node, 8);
    ck_assert_double_eq(dflt.nic_gbps, 0);
    ck_assert_int_eq(tc_predict_model_on(pred, gpu("a100-pcie-80gb"), &c, &two, 0, &mp),
                     TC_ERR_UNSUPPORTED);
    ck_assert_ptr_null(mp);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "--nic-gbps"));
    two.nic_gbps = 12.5;
    ck_assert_int_eq(tc_predict_model_on(pred, gpu("a100-pcie-80gb"), &c, &two, 0, &mp), TC_OK);
    tc_model_prediction_free(mp);
    mp = NULL;
    two.nic_gbps = -1;
    ck_assert_int_eq(tc_predict_model_on(pred, gpu("a100-sxm4-80gb"), &c, &two, 0, &mp),
                     TC_ERR_RANGE);
    c.pp = 3;
    ck_assert_int_eq(tc_predict_model(pred, gpu("a100-sxm4-80gb"), &c, &mp), TC_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(tc_last_error(), "does not divide layers"));
    ck_assert_int_eq(tc_model_config_set(&c, "pp", "0"), TC_ERR_RANGE);
    ck_assert_int_eq(tc_model_config_set(&c, "microbatches", "4"), TC_OK);
    ck_assert_int_eq(c.microbatches, 4);
}
END_TEST

/* Memory of a pipeline stage, by hand: Llama-2-7B's layers (its 6.74e9
 * parameters less the two 32000 x 4096 matrices and the final norm) over 4
 * stages, one of the vocabulary matrices and the norm; under 1F1B the
 * first stage keeps min(pp, microbatches) micro-batches of its 8 layers,
 * as many layer activations as without a pipeline when 4 are in flight
 * and half of them with 2. */
START_TEST(test_pipeline_memory)
{
    struct tc_model_config c;
    struct tc_model_memory flat, pipe4, pipe2;
    const double p7 = 6738415616.0, head = 32000.0 * 4096,
                 stage = (p7 - 2 * head - 4096) / 4 + head + 4096;
    const struct tc_gpu *a100 = gpu("a100-sxm4-80gb");

    ck_assert_int_eq(tc_model_config_load("llama-2-7b", &c), TC_OK);
    c.seq = 2048;
    ck_assert_int_eq(tc_model_memory(a100, &c, 0, &flat), TC_OK);
    c.pp = 4;
    c.microbatches = 8;
    ck_assert_int_eq(tc_model_memory(a100, &c, 0, &pipe4), TC_OK);
    ck_assert_double_eq_tol(pipe4.weights_bytes, 2 * stage, 1);
    ck_assert_double_eq_tol(pipe4.optimizer_bytes, 12 * stage, 1);
    ck_assert_double_eq_tol(pipe4.activations_bytes, flat.activations_bytes, 1);
    c.microbatches = 2;
    ck_assert_int_eq(tc_model_memory(a100, &c, 0, &pipe2), TC_OK);
    ck_assert_double_eq_tol(pipe2.activations_bytes, flat.activations_bytes / 2, 1);
}
END_TEST

/* Data parallelism over 16 GPUs spans two nodes of 8: the last gradient
 * bucket's all-reduce runs at the network's rate, slower than in one node
 * of 16 (the same NVLink between all). */
START_TEST(test_dp_across_nodes)
{
    struct tc_model_config c;
    struct tc_cluster one_node = {.gpus_per_node = 16};
    struct tc_model_prediction *two = NULL, *one = NULL;
    const struct tc_gpu *a100 = gpu("a100-sxm4-80gb");

    ck_assert_int_eq(tc_model_config_load("llama-2-7b", &c), TC_OK);
    c.seq = 2048;
    c.dp = 16;
    ck_assert_int_eq(tc_predict_model_on(pred, a100, &c, NULL, 0, &two), TC_OK);
    ck_assert_int_eq(tc_predict_model_on(pred, a100, &c, &one_node, 0, &one), TC_OK);
    ck_assert_int_eq(two->nodes, 2);
    ck_assert_int_eq(one->nodes, 1);
    ck_assert_double_eq_tol(find_op(two, "dp_allreduce")->time_us,
                            tc_collective_nodes_us(a100, TC_COLL_ALLREDUCE, 16, 2, 25, 25e6), 1e-6);
    ck_assert_double_eq_tol(find_op(one, "dp_allreduce")->time_us,
                            tc_collective_us(a100, TC_COLL_ALLREDUCE, 16, 25e6), 1e-6);
    ck_assert_double_gt(find_op(two, "dp_allreduce")->time_us,
                        find_op(one, "dp_allreduce")->time_us);
    tc_model_prediction_free(two);
    tc_model_prediction_free(one);
}
END_TEST

TCase *model_parallel_tcase(void)
{
    TCase *tc = tcase_create("parallel");

    tcase_add_checked_fixture(tc, model_setup, model_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_collective_nccl_model);
    tcase_add_test(tc, test_collective_reads_interconnect);
    tcase_add_test(tc, test_host_time_counts_module_calls);
    tcase_add_test(tc, test_memory_hand_computed);
    tcase_add_test(tc, test_train_step_pieces);
    tcase_add_test(tc, test_rope_op);
    tcase_add_test(tc, test_decode_tp_trend);
    tcase_add_test(tc, test_collective_across_nodes);
    tcase_add_test(tc, test_pipeline_schedule);
    tcase_add_test(tc, test_pipeline_nodes);
    tcase_add_test(tc, test_pipeline_memory);
    tcase_add_test(tc, test_dp_across_nodes);
    return tc;
}
