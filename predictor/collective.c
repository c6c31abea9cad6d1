/* Collectives inside one node, timed as NCCL times them for itself.
 *
 * NCCL chooses an algorithm and a protocol for each call from a cost model
 * of its own (src/graph/tuning.cc: ncclTopoTuneModel fills a latency and a
 * bandwidth per algorithm and protocol, ncclTopoGetAlgoTime prices a call
 * as latency + bytes / bandwidth, and the fastest runs). That model is
 * taken here whole, for one node (NCCL 2.19):
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

/* tuning.cc, llMaxBws for one node by architecture (Volta, Ampere,
 * Hopper and later), GB/s */
static double ll_max_bw(const struct tc_gpu *gpu)
{
    switch (gpu->arch) {
    case TC_ARCH_PASCAL: /* tuning.cc's Volta column covers compute capability < 8.0 */
    case TC_ARCH_VOLTA:
    case TC_ARCH_TURING:
        return 39.0;
    default:
        return 87.7;
    }
}

double tc_collective_us(const struct tc_gpu *gpu, enum tc_collective coll, int64_t ranks,
                        double bytes)
{
    const struct tc_interconnect *ic = &gpu->interconnect;
    bool pcie = ic->link == TC_LINK_PCIE;
    bool ll128 =
        ic->link == TC_LINK_NVLINK &&
        (gpu->arch == TC_ARCH_VOLTA || gpu->arch == TC_ARCH_AMPERE || gpu->arch == TC_ARCH_HOPPER);
    double n = (double)ranks, bus = ic->bw_gbps * TC_COLL_LINK_EFF, best = INFINITY;
    double steps = coll == TC_COLL_ALLREDUCE ? 2.0 * (n - 1) : n - 1;
    int log_size = 0;

    if (ranks <= 1 || bytes <= 0)
        return 0;
    /* log2i(nBytes >> 6) */
    for (double v = floor(bytes / 64); v >= 2 && log_size < 63; v /= 2)
        log_size++;
    for (int a = 0; a < ALGO_COUNT; a++) {
        if (a == ALGO_TREE && coll != TC_COLL_ALLREDUCE)
            continue;
        for (int p = 0; p < PROTO_COUNT; p++) {
            double bw, lat, t;

            if (p == PROTO_LL128 && !ll128)
                continue;
            if (a == ALGO_RING) {
                bw = p == PROTO_LL
                         ? fmin(ll_max_bw(gpu), bus / (coll == TC_COLL_ALLREDUCE ? 4.0 : 3.0))
                     : p == PROTO_LL128 ? bus * 0.92
                                        : bus;
                bw *= n / steps;
                lat = base_lat[a][p] + steps * hw_lat[pcie][a][p];
            } else {
                bw = bus * 0.92;
                bw = p == PROTO_LL      ? fmin(bw / 3.8, ll_max_bw(gpu))
                     : p == PROTO_LL128 ? bw * 7.0 / 9.0
                                        : bw;
                bw *= 0.5 * (log_size < 23 ? tree_correction[p][log_size] : 1.0);
                lat = base_lat[a][p] + 2.0 * (n - 1) * hw_lat[pcie][a][p];
            }
            t = lat + bytes / (1e3 * bw);
            if (t < best)
                best = t;
        }
    }
    return best;
}
