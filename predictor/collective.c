/* Collectives in one node and across nodes, and the point-to-point sends
 * of a pipeline, timed as NCCL times them for itself.
 *
 * NCCL chooses an algorithm and a protocol for each call from a cost model
 * of its own (src/graph/tuning.cc: ncclTopoTuneModel fills a latency and a
 * bandwidth per algorithm and protocol, ncclTopoGetAlgoTime prices a call
 * as latency + bytes / bandwidth, and the fastest runs). That model is
 * taken here whole (NCCL 2.19), for one node as below and across nodes as
 * tc_collective_nodes_us says:
 * - algorithms: the ring, and for an all-reduce the tree (intra-node a
 *   chain); protocols LL, LL128 and Simple;
 * - latency: a base per algorithm and protocol (baseLat) plus a hardware
 *   latency (hwLat, NVLink or PCIe) per ring step, 2 (n - 1) of them for an
 *   all-reduce and n - 1 for an all-gather, or per tree hop, 2 (n - 1);
 * - bandwidth: the ring's bus bandwidth B is the GPU's links at NCCL's own
 *   per-link rate (src/graph/topo.h: 20 GB/s for an sm70 or sm80 NVLink of
 *   25, 20.6 for sm90's, 40.1 for sm100's 50, 12 for a PCIe Gen3 x16 slot of
 *   15.75: 0.8 of the link, TC_COLL_LINK_EFF). LL carries a quarter of it
 *   for an all-reduce (a third for an all-gather) at most llMaxBw, LL128
 *   0.92 of it, Simple all of it; the tree 0.92 of it (LL a 3.8th of that,
 *   LL128 7/9). The ring's algorithm bandwidth is B n / steps, the tree's
 *   half of its bus bandwidth, scaled for sizes up to 256 MB by NCCL's
 *   correction ("trees are not perfectly sticking to the model for medium
 *   sizes"), which within one node leaves the ring the faster.
 * LL128 is enabled over NVLink on sm70, sm80 and sm90 only. Left out: NVLS
 * (Hopper's in-switch reductions, which need its NVSwitch and a newer NCCL)
 * and the per-channel caps (the channel count comes from NCCL's topology
 * search; at full link rate they do not bind). RCCL, NCCL's port, is taken
 * with NCCL's NVLink latencies over xGMI. */
#include "config.h"

#include <math.h>

#include "model-internal.h"

enum { ALGO_TREE, ALGO_RING, ALGO_COUNT };
enum { PROTO_LL, PROTO_LL128, PROTO_SIMPLE, PROTO_COUNT };

/* tuning.cc, baseLat[Tree, Ring][LL, LL128, Simple], us */
static const double base_lat[ALGO_COUNT][PROTO_COUNT] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}};
/* tuning.cc, hwLat[NVLink, PCI][Tree, Ring][LL, LL128, Simple], us */
static const double hw_lat[2][ALGO_COUNT][PROTO_COUNT] = {
    {{0.6, 1.25, 28}, {0.6, 1.9, 3.4}},
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}},
};

/* tuning.cc, treeCorrectionFactor[LL, LL128, Simple][log2(bytes / 64)],
 * 64 B to 256 MB */
static const double tree_correction[PROTO_COUNT][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

/* tuning.cc, llMaxBws (GB/s): for one node by architecture (Volta,
 * Ampere, Hopper and later); across nodes by the host CPU, Intel's row
 * taken (two nodes, more), as netOverhead below */
static double ll_max_bw(const struct tc_gpu *gpu, int64_t nodes)
{
    if (nodes > 1)
        return nodes <= 2 ? 39.0 : 20.4;
    switch (gpu->arch) {
    case TC_ARCH_PASCAL: /* tuning.cc's Volta column covers compute capability < 8.0 */
    case TC_ARCH_VOLTA:
    case TC_ARCH_TURING:
        return 39.0;
    default:
        return 87.7;
    }
}

/* tuning.cc, hwLat[Network][Tree, Ring][LL, LL128, Simple], us, and
 * getNetOverhead: 1 us per network post from an Intel host (2 from AMD),
 * three of them for Simple */
static const double net_lat[ALGO_COUNT][PROTO_COUNT] = {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}};
#define NET_OVERHEAD_US 1.0

/* Across nodes (NCCL 2.19's multi-node terms of the same model): a ring
 * crosses the network 2 nodes times in an all-reduce (nodes - 1 in an
 * all-gather), each crossing at the network's latency and every other
 * step at least at the network post overhead; the tree climbs log2(nodes)
 * network hops up and down. Each ring channel leaves a node through one
 * network adapter, one per GPU on the reference systems, so the bus
 * bandwidth is the adapters of the group's GPUs in one node (ppn of them),
 * at most the node's own links; one GPU per node sends and receives
 * through one adapter, which NCCL's LL128 discounts to 0.7. A large ring
 * all-reduce pays 1.4 times the latency (1.9 before sm80), NCCL's "plateau
 * effect of ring". */
double tc_collective_nodes_us(const struct tc_gpu *gpu, enum tc_collective coll, int64_t ranks,
                              int64_t nodes, double nic_gbps, double bytes)
{
    const struct tc_interconnect *ic = &gpu->interconnect;
    bool pcie = ic->link == TC_LINK_PCIE;
    bool ll128 =
        ic->link == TC_LINK_NVLINK &&
        (gpu->arch == TC_ARCH_VOLTA || gpu->arch == TC_ARCH_AMPERE || gpu->arch == TC_ARCH_HOPPER);
    double n = (double)ranks, bus = ic->bw_gbps * TC_COLL_LINK_EFF, best = INFINITY;
    double steps = coll == TC_COLL_ALLREDUCE ? 2.0 * (n - 1) : n - 1;
    double inter_steps = 0, ppn = n, tree_hops = 0;
    int log_size = 0;

    if (ranks <= 1 || bytes <= 0)
        return 0;
    if (nodes > 1) {
        ppn = n / (double)nodes;
        /* NCCL's 2 nodes for an all-reduce exceeds its 2 (n - 1) steps at
         * one GPU a node: every step crosses then */
        inter_steps =
            fmin(steps, coll == TC_COLL_ALLREDUCE ? 2.0 * (double)nodes : (double)nodes - 1);
        bus = ppn > 1 ? fmin(bus, nic_gbps * ppn) : nic_gbps;
        for (int64_t v = nodes; v >= 2; v /= 2)
            tree_hops++;
    }
    /* log2i(nBytes >> 6) */
    for (double v = floor(bytes / 64); v >= 2 && log_size < 63; v /= 2)
        log_size++;
    for (int a = 0; a < ALGO_COUNT; a++) {
        if (a == ALGO_TREE && coll != TC_COLL_ALLREDUCE)
            continue;
        for (int p = 0; p < PROTO_COUNT; p++) {
            double bw, lat, t, intra_lat = hw_lat[pcie][a][p];

            if (p == PROTO_LL128 && !ll128)
                continue;
            if (nodes > 1)
                intra_lat = fmax(intra_lat, NET_OVERHEAD_US * (p == PROTO_SIMPLE ? 3 : 1));
            if (a == ALGO_RING) {
                bw = p == PROTO_LL
                         ? fmin(ll_max_bw(gpu, nodes),
                                bus / (coll == TC_COLL_ALLREDUCE || nodes > 1 ? 4.0 : 3.0))
                     : p == PROTO_LL128 ? bus * (nodes > 1 && ppn < 2 ? 0.7 : 0.92)
                                        : bus;
                bw *= n / steps;
                lat = base_lat[a][p] + (steps - inter_steps) * intra_lat +
                      inter_steps * net_lat[a][p];
                if (nodes > 1 && p == PROTO_SIMPLE && coll == TC_COLL_ALLREDUCE)
                    lat *= gpu->arch == TC_ARCH_VOLTA || gpu->arch == TC_ARCH_PASCAL ? 1.9 : 1.4;
            } else {
                bw = bus * 0.92;
                bw = p == PROTO_LL      ? fmin(bw / 3.8, ll_max_bw(gpu, nodes))
                     : p == PROTO_LL128 ? bw * (nodes > 1 ? 120.0 / 128.0 : 7.0 / 9.0)
                                        : bw;
                bw *= 0.5 * (log_size < 23 ? tree_correction[p][log_size] : 1.0);
                lat = base_lat[a][p] + 2.0 * ((ppn - 1) * intra_lat + tree_hops * net_lat[a][p]);
            }
            t = lat + bytes / (1e3 * bw);
            if (t < best)
                best = t;
        }
    }
    return best;
}

double tc_collective_us(const struct tc_gpu *gpu, enum tc_collective coll, int64_t ranks,
                        double bytes)
{
    return tc_collective_nodes_us(gpu, coll, ranks, 1, 0, bytes);
}

/* One send from a GPU to the next pipeline stage: NCCL's point-to-point
 * runs the Simple protocol, taken at the cost of one ring step of it (the
 * ring's base latency and one hop of NVLink, PCIe or the network) and the
 * bandwidth of the one link it crosses: the network adapter across nodes;
 * in a node the pair's share of the GPU's links (all of them through a
 * switch or the PCIe slot, one NVLink of a point-to-point mesh). */
double tc_p2p_us(const struct tc_gpu *gpu, bool across_nodes, double nic_gbps, double bytes)
{
    const struct tc_interconnect *ic = &gpu->interconnect;
    double bw = ic->bw_gbps * TC_COLL_LINK_EFF, lat;

    if (bytes <= 0)
        return 0;
    if (across_nodes) {
        bw = nic_gbps;
        lat = net_lat[ALGO_RING][PROTO_SIMPLE];
    } else {
        if (!ic->switched && ic->link != TC_LINK_PCIE && ic->links > 1)
            bw /= ic->links;
        lat = hw_lat[ic->link == TC_LINK_PCIE][ALGO_RING][PROTO_SIMPLE];
    }
    return base_lat[ALGO_RING][PROTO_SIMPLE] + lat + bytes / (1e3 * bw);
}

/* The network adapter each GPU of a spec's reference system has, per
 * direction, by the interconnect that system joins its GPUs with:
 * - NVLink 2 (V100 SXM2): DGX-1 with V100, four 100 Gb/s EDR InfiniBand
 *   adapters for eight GPUs (DGX-2: eight for sixteen): 6.25 GB/s a GPU;
 * - NVLink 3 (A100 SXM4): DGX A100, eight ConnectX-6 200 Gb/s HDR for the
 *   compute network, one per GPU: 25 GB/s;
 * - NVLink 4 (H100, H200 SXM): DGX H100/H200, eight ConnectX-7 400 Gb/s
 *   NDR: 50 GB/s;
 * - NVLink 5 (B200): DGX B200, eight ConnectX-7 400 Gb/s: 50 GB/s;
 * - Infinity Fabric 3 (MI250X): HPE Cray EX235a (Frontier), four 200 Gb/s
 *   Slingshot adapters for eight GCDs: 12.5 GB/s a GCD;
 * - Infinity Fabric 4 (MI300X): the eight-GPU platforms (AMD's reference
 *   design, Azure ND MI300X v5), one 400 Gb/s adapter per GPU: 50 GB/s.
 * A PCIe card names no system: 0. */
TC_API void tc_cluster_default(const struct tc_gpu *gpu, struct tc_cluster *out)
{
    static const struct {
        enum tc_link link;
        int generation;
        double nic_gbps;
    } systems[] = {
        {TC_LINK_NVLINK, 2, 6.25}, {TC_LINK_NVLINK, 3, 25.0}, {TC_LINK_NVLINK, 4, 50.0},
        {TC_LINK_NVLINK, 5, 50.0}, {TC_LINK_XGMI, 3, 12.5},   {TC_LINK_XGMI, 4, 50.0},
    };

    if (!out)
        return;
    if (out->gpus_per_node <= 0)
        out->gpus_per_node = 8;
    if (out->nic_gbps > 0 || !gpu)
        return;
    for (size_t i = 0; i < TC_ARRAY_SIZE(systems); i++)
        if (systems[i].link == gpu->interconnect.link &&
            systems[i].generation == gpu->interconnect.generation)
            out->nic_gbps = systems[i].nic_gbps;
}
