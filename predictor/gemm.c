/* The analytical GEMM model: time of C[m x n] = A[m x k] . B[k x n] (x batch)
 * on a GPU from its spec and the kernel catalogue alone.
 *
 * For every catalogue kernel of the GPU's family that runs the dtype, and
 * every split-K factor the kernel allows, the model computes
 *   - occupancy: resident blocks per SM from threads, registers (allocated
 *     per warp in units of reg_alloc_unit on NVIDIA, per lane in granules on
 *     AMD), shared memory (+ the reserved bytes per block) and the block limit;
 *   - tiles = ceil(m/BM) ceil(n/BN) batch split, and waves of units x blocks;
 *   - the time of one block on an SM shared by j blocks: the larger of the
 *     tensor (MMA) time and the shared-memory traffic time of its K loop,
 *     divided by the issue fraction j x warps / schedulers when too few warps
 *     are resident to keep every scheduler busy; FFMA work on a board whose
 *     power limit holds a lower clock under full load runs at that clock,
 *     and at up to the boost when a partial wave keeps few SMs busy or
 *     the tiles' padding (zeros) leaves little of the work on data;
 *   - the K loop: ceil(K / BK) steps on NVIDIA (the residue is one more
 *     predicated step), K rounded to the MFMA depth on AMD (Tensile's tail
 *     loop);
 *   - the data the wave moves: L2 -> SM bytes ((BM + BN) x K per tile, at a
 *     per-SM rate, so a partial wave cannot borrow idle SMs' share) and
 *     DRAM bytes (each operand once if it fits in half the L2, else re-read
 *     per wave), each at its bandwidth;
 *   - wave time = the largest of compute (with the pipeline fill, SM time
 *     that DRAM hides when the wave is memory-bound), DRAM and L2 time, plus
 *     a share of the smaller of compute and DRAM load time (imperfect
 *     overlap; the posted stores of C do not stall the loop, except on
 *     CDNA2, where a wave's blocks keep their slots until their stores of C
 *     have drained, at the DRAM rate, before the next wave); whole waves
 *     (the partial last wave runs with ceil(R/units) blocks on its busiest
 *     SM), fractional for stream-K kernels; plus the launch cost;
 *   - stream-K fix-up: the blocks that share a tile pass fp32 partials
 *     through L2; with fewer tiles than slots, each tile's owner reads the
 *     partials of its ceil(slots / tiles) - 1 peers one after the other at
 *     its own SM's L2 rate;
 *   - split-K: partial fp32 tiles written, read and reduced, plus the launch
 *     of the reduction kernel (never for batched calls on NVIDIA, whose
 *     batched kernels spend the grid's z dimension on the batch);
 *   - the alignment class of the leading dimensions: kernels whose fast path
 *     needs more alignment run their narrow-load variant at the family's
 *     alignment-class efficiency; TMA kernels cannot run at all;
 * and keeps the fastest, as the library's heuristic would pick it.
 *
 * Every constant is physical and lives in the block below (arch_models[]
 * and the few #defines after it), with its source. Nothing is fitted to
 * individual measurements. Per (GPU, dtype), the per-kernel rates are
 * computed once and cached per thread; the hot path then does integer
 * arithmetic, a few divisions and no allocation. It works out a
 * candidate's SM time first: with the launch it is a lower bound of the
 * candidate's time, and where that cannot beat the fastest so far the data
 * movement is not worked out, which leaves the pick as it would be. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gemm-internal.h"
#include "tc-internal.h"

/* ------------------------------------------------------------------------ */
/* The model's constants, one row per architecture family                   */
/* ------------------------------------------------------------------------ */

struct arch_model {
    /* Fraction of the dense tensor (or FFMA) peak that a saturated main loop
     * sustains: the clock held under full tensor load relative to the clock
     * the peak assumes, times the issue efficiency of the MMA pipe. Set from
     * the best published large-GEMM throughput of the family, a little above
     * it since those shapes still lose a few percent to quantization:
     * V100 88.5 of 125 (the paper), A100 271.2 of 312 (MAMF) and 251.5 (the
     * paper), H100 794.5 of 989, B200 1745 of 2250, MI300X 668.4 of 1307
     * (MAMF), MI250X 103.8 of 191.5 per GCD (the paper). Not fitted to this
     * project's development rows. */
    double mma_eff;
    /* Fraction of the FFMA peak (fp32 with TF32 off, at the vector clock)
     * that a saturated SIMT main loop sustains, set by the same rule. Hopper:
     * torch.matmul in float32 on an H100 SXM (PyTorch 2.7, cuBLAS 12.8)
     * reached 49.58, 51.88, 51.81 and 49.61 TFLOP/s at 2048, 4096, 8192 and
     * 10240 cubed, at most 0.776 of 66.9 (zzc0721/torch-performance-test-data
     * issue 79; the same run's bf16 797.5 at 8192 matches MAMF's 794.5), so
     * 0.79; its sm80_xmma FFMA kernels are Ampere's, and the 1980 MHz boost
     * the peak assumes is not held under a full FFMA load at 700 W. Ampere:
     * cuBLAS sgemm on an A100 80GB PCIe (300 W) reached 18.88 of 19.49
     * TFLOP/s at 5120 x 4096 x 4096 (Yinghan-Li/YHs_Sample issue 4; up to
     * 19.0 at 2304 cubed in triton-lang/triton issue 2491), so 0.97; a board
     * whose power limit lowers the clock under that load says so in its spec
     * (clock_vector_sustained_mhz, below). Volta keeps 0.85, unsourced. */
    double simt_eff;
    /* Fraction of the vendor DRAM bandwidth that streaming tile loads reach:
     * STREAM-like copies reach ~80% on A100's HBM2e (1.6 of 2.04 TB/s),
     * ~85-90% on V100 HBM2 and H100 HBM3, ~85% on MI250X/MI300X. */
    double dram_eff;
    /* L2 -> SM bandwidth, bytes per clock per SM/CU: the A100 whitepaper
     * gives 5120 B/clk of L2 read bandwidth (47.4 per SM) against V100's
     * 2048 (25.6 per SM); Hopper is taken at A100's per-SM rate; CDNA2 has
     * 16 L2 channels x 128 B/clk per GCD (18.6 per CU), CDNA3 2048 B/clk per
     * XCD of 38 CUs (53.9 per CU). */
    double l2_bytes_per_clk;
    /* Shared memory / LDS bandwidth, bytes per clock per SM/CU: 32 banks x
     * 4 bytes on NVIDIA; 128 bytes per clock per CU on CDNA. wgmma (Hopper)
     * and tcgen05 (Blackwell) read their operands from shared memory on the
     * tensor cores' own path: fp8 GEMMs at 71-78% of the fp8 peak (the MAMF
     * table: H100 1402.6, H200 1453.4, B200 3432.5 TFLOP/s) would be
     * impossible at 128 B/clk, so those families get 256. */
    double smem_bytes_per_clk;
    /* Warp schedulers (SM sub-partitions) or SIMDs per SM/CU: the warps a
     * block needs to issue every cycle. */
    int schedulers;
    /* Fixed cost of one kernel as a profiler times it: grid launch, block
     * dispatch and the drain at the end (a few microseconds, the smallest
     * GEMM kernel times in traces). CDNA2 costs more: the smallest GEMMs
     * of the rocBLAS gfx90a tuning table (the catalogue's [RB] file,
     * efficiency converted to time at 1.7 GHz; 217 shapes under 20 MFLOP)
     * take 9.6 us at the 10th percentile and 12.4 us at the median, so its
     * launch and fill together are set to that floor, 9.5 us. A few
     * matrix-vector shapes (1 x 256 x 1024..4000) run in 3-4 us there, so
     * this is the cost of a small GEMM kernel, not of a bare dispatch; on
     * the table's 895 shapes with M.N < 1M and K <= 2048 it takes the
     * model from 40% optimistic to 10%. CDNA3 keeps the NVIDIA-like value:
     * no timed small MI300X GEMM is at hand. */
    double launch_us;
    /* Pipeline fill: the first global loads of a block must arrive before
     * its first MMA (DRAM latency ~0.5-0.8 us), plus the epilogue's store. */
    double fill_us;
    /* Efficiency of the narrow-load variants by alignment class (128B, 16B,
     * 4B, element), relative to the 128-byte fast path. A100: the paper's
     * sweeps (multiple of 8: 181-186 vs 202 TFLOP/s; = 2 mod 4: ~127; the
     * vocabulary sweep odd ~74 vs 256). Volta and Turing: since cuBLAS 11
     * the library runs its tensor-core kernels whatever the alignment, with
     * narrower global loads when a leading dimension is not a multiple of
     * 8 halves (cuBLAS documentation, "Tensor Core Usage"); the public V100
     * measurements of a dimension swept 64..510 put the cost at 5-15 %, so
     * 4-byte loads keep 0.90 and 2-byte loads 0.85 of the fast path. The
     * earlier assumption (HGEMM on the FP16 SIMT pipe, 1/4 of the tensor
     * rate) predicted those shapes 3-4x too slow. Volta's loads cost less
     * than Ampere's because its tensor rate per SM is half as high (1024
     * against 2048 FP16 FLOP per clock) for the same load path. Hopper: TMA kernels cannot run; the
     * mma.sync fallback pays its own mma_rate and the element-class loads. CDNA: flat (the paper's
     * MI250X sweep). */
    double align_eff[4];
};

/* Columns: mma_eff, simt_eff, dram_eff, l2_bytes_per_clk, smem_bytes_per_clk,
 * schedulers, launch_us, fill_us, align_eff[128B, 16B, 4B, element].
 * Turing and Ada, with no timed data of their own, take their neighbours'
 * values, a little lower for their power-limited boards (T4, L40S).
 * Pascal takes Volta's: both run cuBLAS's SIMT sgemm of one design
 * (maxwell_sgemm_32x128 / 64x64 / 128x32 in NeuSight's P100 and P4 traces,
 * volta_sgemm_* of those tiles and larger ones on V100 and T4).
 * CDNA1 (gfx908) takes CDNA2's: the same Tensile kernels on the same MFMA
 * instructions (32x32x8 fp16, 32x32x2 and 16x16x4 fp32) and 64 KiB of
 * LDS, but half the L2 rate per channel (the CDNA2 whitepaper doubles it
 * to 128 B/clk): 16 x 64 B/clk over 120 CUs. */
static const struct arch_model arch_models[TC_ARCH_COUNT] = {
    [TC_ARCH_VOLTA] = {0.74, 0.85, 0.85, 25.6, 128, 4, 3.0, 0.9, {1.0, 1.0, 0.90, 0.85}},
    [TC_ARCH_TURING] = {0.70, 0.80, 0.85, 25.6, 128, 4, 3.0, 0.9, {1.0, 1.0, 0.90, 0.85}},
    [TC_ARCH_AMPERE] = {0.84, 0.97, 0.80, 47.4, 128, 4, 2.5, 0.8, {1.0, 0.90, 0.55, 0.29}},
    [TC_ARCH_ADA] = {0.80, 0.85, 0.80, 47.4, 128, 4, 2.5, 0.8, {1.0, 0.90, 0.55, 0.29}},
    [TC_ARCH_HOPPER] = {0.78, 0.79, 0.88, 48, 256, 4, 2.5, 0.8, {1.0, 0.95, 0.60, 0.30}},
    [TC_ARCH_BLACKWELL] = {0.76, 0.85, 0.88, 48, 256, 4, 2.5, 0.8, {1.0, 0.95, 0.60, 0.30}},
    [TC_ARCH_CDNA2] = {0.60, 0.70, 0.85, 18.6, 128, 4, 8.5, 1.0, {1.0, 1.0, 1.0, 1.0}},
    [TC_ARCH_CDNA3] = {0.55, 0.65, 0.85, 53.9, 128, 4, 4.0, 1.0, {1.0, 1.0, 1.0, 1.0}},
    [TC_ARCH_PASCAL] = {0.74, 0.85, 0.85, 25.6, 128, 4, 3.0, 0.9, {1.0, 1.0, 0.90, 0.85}},
    [TC_ARCH_CDNA1] = {0.60, 0.70, 0.85, 8.5, 128, 4, 8.5, 1.0, {1.0, 1.0, 1.0, 1.0}},
};

/* Split-K factors tried (the library's own menu is similar: 2..16 for
 * cuBLAS, GSU up to the CU count on Tensile); the large ones serve
 * matrix-vector shapes with very long K. */
static const int split_factors[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256};

/* Compute and data movement overlap through a pipeline of a few stages;
 * near balance the queues stall the MMAs, so a wave takes
 * max(c, m) + OVERLAP_LOSS x min(c, m) rather than max(c, m). */
#define OVERLAP_LOSS 0.25
/* Warp-specialised kernels (a TMA producer warpgroup feeding MMA consumer
 * warpgroups through mbarriers, Hopper and later) decouple the two far
 * better. */
#define OVERLAP_LOSS_WARP_SPECIALISED 0.1

/* Time of work needing c us of compute, d us of DRAM and l us of L2
 * traffic, of which the fraction load_frac of d is loads. L2 latency is
 * short enough for the stages to hide; DRAM queues near saturation are not.
 * Only loads stall the main loop: the epilogue's stores of C are posted and
 * drain while the SM moves on to its next tile, so they add to the DRAM time
 * but not to the overlap loss (which matters where C dominates the traffic:
 * small-K GEMMs such as attention scores). */
static double overlap(double c, double d, double l, double loss, double load_frac)
{
    double t = c > d ? c : d;
    double dl = d * load_frac;

    if (l > t)
        t = l;
    return t + loss * (c < dl ? c : dl);
}

/* The analytical model's 80% interval, as factors of the prediction (see
 * where they are used). */
#define INTERVAL_LO 0.92
#define INTERVAL_HI 1.25

/* Bytes of one partial-sum element (fp32 accumulators). */
#define PARTIAL_BYTES 4

/* ------------------------------------------------------------------------ */
/* Integer arithmetic of the hot path; the alignment a kernel requires     */
/* ------------------------------------------------------------------------ */

static int64_t round_up(int64_t v, int64_t unit)
{
    return unit > 0 ? (v + unit - 1) / unit * unit : v;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* The hot path's integer divisions, exact and mostly without a divide
 * instruction. A divisor: d > 0, its shift when it is a power of two (else
 * -1) and its rounded reciprocal. */
struct divisor {
    int64_t d;
    int shift;
    double inv;
};

static void divisor_init(struct divisor *v, int64_t d)
{
    v->d = d;
    v->shift = -1;
    for (int b = 0; b < 62; b++)
        if (d == (int64_t)1 << b)
            v->shift = b;
    v->inv = 1.0 / (double)d;
}

/* floor(a / d) for a >= 0. Below 2^50 the product a x inv is within a
 * quarter of a / d (two roundings of 2^-53 each, a / d < 2^50), so its
 * truncation is off by at most one, which the remainder corrects. */
static inline int64_t div_floor(int64_t a, const struct divisor *v)
{
    int64_t q, rem;

    if (v->shift >= 0)
        return a >> v->shift;
    if (a >= (int64_t)1 << 50)
        return a / v->d;
    q = (int64_t)((double)a * v->inv);
    rem = a - q * v->d;
    if (rem < 0)
        q--;
    else if (rem >= v->d)
        q++;
    return q;
}

/* ceil(a / d) for a >= 1 */
static inline int64_t div_ceil(int64_t a, const struct divisor *v)
{
    return div_floor(a + v->d - 1, v);
}

/* split_factors[] as divisors */
#define SPLIT(d, shift)                                                                            \
    {                                                                                              \
        d, shift, 1.0 / (d)                                                                        \
    }
static const struct divisor split_div[] = {
    SPLIT(1, 0),   SPLIT(2, 1),   SPLIT(3, -1),   SPLIT(4, 2),   SPLIT(6, -1),  SPLIT(8, 3),
    SPLIT(12, -1), SPLIT(16, 4),  SPLIT(24, -1),  SPLIT(32, 5),  SPLIT(48, -1), SPLIT(64, 6),
    SPLIT(96, -1), SPLIT(128, 7), SPLIT(192, -1), SPLIT(256, 8),
};
#undef SPLIT
_Static_assert(TC_ARRAY_SIZE(split_div) == TC_ARRAY_SIZE(split_factors),
               "split_div[] mirrors split_factors[]");

/* The class a kernel's alignment requirement corresponds to. */
static enum tc_align required_class(int align_bytes)
{
    if (align_bytes >= 16)
        return TC_ALIGN_128B;
    if (align_bytes >= 4)
        return TC_ALIGN_4B;
    return TC_ALIGN_ELEM;
}

/* ------------------------------------------------------------------------ */
/* One candidate                                                            */
/* ------------------------------------------------------------------------ */

struct shape {
    int64_t m, n, k, batch;
    int elem_bytes; /* inputs */
    int out_bytes;  /* C */
    enum tc_align align;
    /* the bytes of A, B and C (one of the batch), and C's of all of it */
    double a_bytes, b_bytes, c_bytes, c_bytes_batch;
    /* A and B fit in half the L2: each operand read once, whatever the
     * kernel, so the DRAM traffic and its load fraction are the shape's */
    bool l2_fit;
    double fit_dram_total, fit_load_frac;
};

/* Per (GPU, dtype) rates shared by every candidate. */
struct rates {
    const struct arch_model *am;
    bool tensor;            /* tensor/matrix pipe (else FFMA) */
    double sm_flops_per_us; /* dense peak per SM, FLOP per us */
    double clock_per_us;    /* cycles per us */
    double dram_bytes_per_us;
    double l2_bytes_per_us;                  /* all SMs together */
    double us_per_dram_byte, us_per_l2_byte; /* their inverses (no division in the loop) */
    double l2_bytes;
    int units;
    struct divisor units_div;
    int warp;
    int max_warps;
    /* FFMA under a power limit: the clock with every SM busy over the
     * clock the peak assumes (1 when the spec gives none, and for tensor
     * work) */
    double simt_clock_full;
    bool k_tail_loop; /* K residue at instruction depth (Tensile) */
    bool batch_split; /* batched calls may split K */
    bool store_drain; /* a block holds its slot until its C stores drain */
};

struct result {
    double time_us;
    double compute_us, memory_us, overhead_us;
    int split;
    int blocks_per_sm;
    int64_t tiles;
    int64_t whole_waves; /* 0 for stream-K */
    double waves;
    double wave_eff;
    double tile_eff;
    enum tc_bound bound;
};

/* What a kernel costs per main-loop step on a GPU, for one dtype: computed
 * once per (GPU, dtype) and cached. */
struct cand {
    const struct tc_kernel *k;
    int bps; /* resident blocks per SM, > 0 */
    int warps;
    double mma_us_per_iter; /* at the family's efficiency, fast path */
    double smem_us_per_iter;
    double l2_bytes_per_iter; /* per tile, after cluster multicast */
    double loss;              /* overlap loss */
    int64_t slots;            /* resident blocks on the whole GPU */
    double issue_full;        /* issue fraction of a full SM, <= 1 */
    double penalty[4];        /* narrow-load efficiency by alignment class */
    struct divisor tile_m, tile_n, tile_k, slots_div;
    /* the swizzled patch of a full wave (evaluate()) */
    int64_t wave_rows, wave_cols;
};

static void cand_init(const struct rates *r, const struct tc_gpu *gpu, const struct tc_kernel *kr,
                      enum tc_dtype dtype, struct cand *c)
{
    const struct arch_model *am = r->am;
    int e = tc_dtype_bytes(dtype);
    double eff = (r->tensor ? am->mma_eff : am->simt_eff) * kr->mma_rate;

    c->k = kr;
    c->bps = tc_kernel_blocks_per_sm(gpu, kr, dtype, NULL);
    c->warps = (kr->threads + r->warp - 1) / r->warp;
    c->mma_us_per_iter = 2.0 * kr->tile_m * kr->tile_n * kr->tile_k / (r->sm_flops_per_us * eff);
    /* Shared memory: the tile written once per step, and read by every warp
     * tile (A rows once per warp column, B columns once per warp row). */
    c->smem_us_per_iter =
        (double)kr->tile_k * e *
        ((double)kr->tile_m + kr->tile_n +
         (double)kr->tile_m * kr->tile_n * (1.0 / kr->warp_m + 1.0 / kr->warp_n)) /
        (am->smem_bytes_per_clk * r->clock_per_us);
    if (!r->tensor) {
        /* SIMT FFMA: every lane loads its own fragment (tm + tn values for
         * its tm x tn outputs, at best 2 sqrt(tm tn)) and shared memory
         * serves one 4-byte word per bank and clock whatever the broadcast,
         * so small warp tiles run out of shared-memory bandwidth before
         * FFMA issue (sgemm 128x128: 8x8 per lane, balanced; 32x32 warp
         * tiles: 4x8 per lane, 1.5 words per 4 FFMA). */
        double per_lane = (double)kr->warp_m * kr->warp_n / r->warp;
        double warp_tiles = (double)kr->tile_m * kr->tile_n / ((double)kr->warp_m * kr->warp_n);
        double lane_bytes = (double)kr->tile_k * warp_tiles * r->warp * 2.0 * sqrt(per_lane) * e;

        c->smem_us_per_iter += lane_bytes / (am->smem_bytes_per_clk * r->clock_per_us);
    }
    /* A cluster of cluster_m x cluster_n blocks multicasts (TMA) the panels
     * its blocks share: B to the cluster_m blocks of a column, A to the
     * cluster_n blocks of a row. */
    c->l2_bytes_per_iter =
        ((double)kr->tile_m / kr->cluster_n + (double)kr->tile_n / kr->cluster_m) * kr->tile_k * e;
    c->loss = kr->tma ? OVERLAP_LOSS_WARP_SPECIALISED : OVERLAP_LOSS;
    c->slots = (int64_t)r->units * c->bps;
    divisor_init(&c->tile_m, kr->tile_m);
    divisor_init(&c->tile_n, kr->tile_n);
    divisor_init(&c->tile_k, kr->tile_k);
    if (c->bps > 0) {
        divisor_init(&c->slots_div, c->slots);
        c->wave_rows = (int64_t)(sqrt((double)c->slots * kr->tile_n / kr->tile_m) + 0.5);
        if (c->wave_rows < 1)
            c->wave_rows = 1;
        c->wave_cols = ceil_div(c->slots, c->wave_rows);
    }
    c->issue_full = (double)c->bps * c->warps / am->schedulers;
    if (c->issue_full > 1.0)
        c->issue_full = 1.0;
    /* The narrow-load variants' cost, by the shape's alignment class.
     * TMA kernels (Hopper, Blackwell) have no narrow variant: a stride that
     * is a multiple of 16 bytes, as the tensor map requires
     * (cuTensorMapEncodeTiled: globalStrides multiples of 16), loads whole
     * boxes at the same rate as a 128-byte one, and a shorter stride cannot
     * be encoded (try_cand() skips the kernel). So the 16-byte class costs a
     * TMA kernel nothing. The only 16-byte-class H100 rows in the data
     * (Vidur Llama-2-7B TP8 MLP down, K = 1376, n = 4096, 261 token counts)
     * agree: measured against the same sweep at K = 1024 and 2048 they run
     * at the model's own ratio, not 5 % slower (README, "The H100 K step"). */
    for (int a = 0; a < (int)TC_ARRAY_SIZE(c->penalty); a++) {
        c->penalty[a] = 1.0;
        if (kr->align_bytes > 0 && a > (int)required_class(kr->align_bytes) &&
            a < (int)TC_ARRAY_SIZE(am->align_eff))
            c->penalty[a] = am->align_eff[a] / am->align_eff[required_class(kr->align_bytes)];
        if (kr->tma && a == TC_ALIGN_16B)
            c->penalty[a] = 1.0;
    }
}

/* The SM side of one (candidate, split): the K loop, the waves and the time
 * the SMs spend on them, which evaluate() reports as compute_us. A
 * candidate's time is that plus parts that are never negative (overlap()
 * returns at least its compute argument; the overheads hold the launch at
 * least), and IEEE rounding is monotone, so compute_us + launch_us computed
 * here never exceeds the time evaluate() computes from it: try_cand() uses
 * it as the lower bound that lets it skip a candidate without changing the
 * pick. */
struct sm_part {
    int64_t tiles;
    double iters;
    double block_us;
    double compute_us;
    double full_compute;
    /* whole waves (not stream-K) */
    int64_t full_waves, last_tiles, last_per_sm;
    double last_compute;
    double waves_frac; /* stream-K */
};

static void sm_part(const struct rates *r, const struct cand *c, const struct shape *s,
                    int64_t tiles_mn, size_t split_j, struct sm_part *p)
{
    int split = split_factors[split_j];
    const struct arch_model *am = r->am;
    const struct tc_kernel *kr = c->k;
    int64_t k_split = split > 1 ? div_ceil(s->k, &split_div[split_j]) : s->k;
    double mma_us, smem_us, store_us = 0.0;
    double useful = 1.0, clock = 1.0; /* FFMA under a power limit (below) */

    p->tiles = tiles_mn * split;
    /* Main-loop steps. CUTLASS-style kernels (NVIDIA) run the K residue as
     * one more full step of predicated (zero) loads and full-depth MMAs.
     * The Hopper TMA kernels too: CUTLASS 3's sm90 warp-specialised
     * mainloop (collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp) tiles
     * K by local_tile into ceil(K / BK) k-tiles, TMA zero-fills the part of
     * the last box outside the tensor, and the consumer warpgroups issue
     * every wgmma of every k-tile, zeros or not. So a residue costs one
     * step, 1/94 = 1.1% at K = 5960 with BK = 64, never a share of the
     * GEMM: on an H100, NT, K = 5960 takes 1% longer than 5952 (its rows,
     * 11920 bytes, are of the 16-byte class, which costs a TMA kernel
     * nothing: cand_init()). Tensile (AMD)
     * finishes K in a tail loop at the matrix instruction's depth, so only
     * the remainder rounded to instr_k is paid (which is why the paper's
     * MI250X sweep over k is flat). */
    p->iters = r->k_tail_loop
                   ? (double)round_up(k_split, kr->instr_k > 0 ? kr->instr_k : 1) / kr->tile_k
                   : (double)div_ceil(k_split, &c->tile_k);

    /* One block's K loop on an SM it has to itself. A division by a
     * penalty or an issue fraction of 1 is skipped: it is exact. */
    mma_us = p->iters * c->mma_us_per_iter;
    if (c->penalty[s->align] != 1.0)
        mma_us /= c->penalty[s->align];
    smem_us = p->iters * c->smem_us_per_iter;
    p->block_us = mma_us > smem_us ? mma_us : smem_us;

    if (kr->stream_k) {
        /* Work is spread evenly over the slots: fractional waves. */
        p->waves_frac = (double)p->tiles / (double)c->slots;
        p->full_compute = p->waves_frac * (double)c->bps * p->block_us;
        p->compute_us = p->full_compute;
        p->full_waves = p->last_tiles = p->last_per_sm = 0;
        p->last_compute = 0.0;
        return;
    }
    p->full_waves = div_floor(p->tiles, &c->slots_div);
    p->last_tiles = p->tiles - p->full_waves * c->slots;
    /* A block's warps keep warps/schedulers of the issue slots busy. Each
     * wave's blocks wait for their first loads (and drain their stores)
     * before and after the K loop: SM time, during which DRAM keeps serving
     * the other SMs, so a memory-bound wave hides it. */
    p->full_compute = (double)c->bps * p->block_us;
    if (c->issue_full != 1.0)
        p->full_compute /= c->issue_full;
    if (r->simt_clock_full != 1.0) {
        /* The FFMAs of the tile's padding (rows and columns outside the
         * matrix, the K residue's predicated step) multiply the zeros the
         * predicated loads left in shared memory, which switch next to
         * nothing: the dynamic power that holds the clock down is that of
         * the share of the work on data, and the clock rises by the same
         * cube-root law as for idle SMs (below), up to the boost. Zeros
         * drawing less power than data is measured: an A100 SXM under its
         * 400 W limit ran cuBLAS 8192^3 at 295 TFLOP/s on zero inputs and
         * at 257 on randn ones (H. He, "Strangely, Matrix Multiplications
         * on GPUs Run Faster When Given 'Predictable' Data!", thonking.ai,
         * 2024). NeuSight's A100 PCIe bmm rows agree: those of
         * 108 to 863 tiles of 128 x 128 (every SM busy, two to eight
         * blocks on the busiest), most of them padded, run those tiles at
         * a median 0.97-0.99 of the boost peak per SM, not at 0.93 (the
         * full-load clock). */
        useful = (double)s->m * (double)s->n * (double)s->k * (double)s->batch /
                 ((double)tiles_mn * kr->tile_m * kr->tile_n * (p->iters * kr->tile_k * split));
        if (useful > 1.0)
            useful = 1.0;
        clock = useful < 1.0 ? r->simt_clock_full / cbrt(useful) : r->simt_clock_full;
        if (clock > 1.0)
            clock = 1.0;
        if (clock != 1.0)
            p->full_compute /= clock;
    }
    p->full_compute += am->fill_us;
    if (r->store_drain) {
        /* The blocks of a wave reach their epilogues together and keep
         * their slots until their stores of C (fp32 partials when split)
         * have left, so the wave's stores drain at the DRAM rate before
         * the next wave's blocks can start (rates_init()). Only the part
         * of a tile inside the matrix is stored. */
        double rows = s->m < kr->tile_m ? (double)s->m : kr->tile_m;
        double cols = s->n < kr->tile_n ? (double)s->n : kr->tile_n;

        store_us = rows * cols * (split > 1 ? PARTIAL_BYTES : s->out_bytes) * r->us_per_dram_byte;
        p->full_compute += (double)c->slots * store_us;
    }
    p->last_compute = 0.0;
    p->last_per_sm = 0;
    if (p->last_tiles > 0) {
        double issue_last;

        p->last_per_sm = div_ceil(p->last_tiles, &r->units_div);
        p->last_compute = (double)p->last_per_sm * p->block_us;
        if (r->simt_clock_full != 1.0 && p->last_tiles < r->units) {
            /* Dynamic power is about busy SMs x f x V^2, and V follows f
             * in the DVFS range: with a share b of the SMs busy the board
             * holds the full-load clock times b^(-1/3), up to the boost. */
            double b = (double)p->last_tiles / r->units * useful;
            double f = r->simt_clock_full / cbrt(b);

            if (f < 1.0)
                p->last_compute /= f;
        } else if (r->simt_clock_full != 1.0) {
            p->last_compute /= clock;
        }
        /* (the issue fraction is below 1 exactly when the warps are fewer
         * than the schedulers: small exact integers) */
        if (p->last_per_sm * c->warps < am->schedulers) {
            issue_last = (double)p->last_per_sm * c->warps / am->schedulers;
            p->last_compute /= issue_last;
        }
        p->last_compute += am->fill_us + (double)p->last_tiles * store_us;
    }
    p->compute_us = (double)p->full_waves * p->full_compute + p->last_compute;
}

/* The time of candidate c with split factor `split` on shape s, from its SM
 * side p (sm_part() of the same arguments). */
static void evaluate(const struct rates *r, const struct cand *c, const struct shape *s,
                     int64_t tiles_m, int64_t tiles_n, int split, const struct sm_part *p,
                     struct result *res)
{
    const struct arch_model *am = r->am;
    const struct tc_kernel *kr = c->k;
    int bps = c->bps;
    int64_t tiles_mn = tiles_m * tiles_n;
    int64_t tiles = p->tiles;
    double iters = p->iters;
    int64_t slots = c->slots;
    double l2_tile_bytes, dram_total, dram_tile_bytes, load_frac;
    double full_compute = p->full_compute, full_mem, full_l2, last_mem, last_l2, overhead;
    double loss = c->loss;

    /* Data movement. L2 -> SM: each tile streams its A and B panels. DRAM:
     * every operand once when both fit in half the L2 (the other half holds
     * C and the working set of other waves), else the panels of each wave. */
    l2_tile_bytes = iters * c->l2_bytes_per_iter;
    if (s->m < kr->tile_m || s->n < kr->tile_n) {
        /* Rows and columns outside the matrix are not loaded (predicated
         * loads, TMA bounds), though the MMAs still run on the padding. */
        double rows_a = s->m < kr->tile_m ? (double)s->m : kr->tile_m;
        double cols_b = s->n < kr->tile_n ? (double)s->n : kr->tile_n;

        l2_tile_bytes =
            iters * kr->tile_k * s->elem_bytes * (rows_a / kr->cluster_n + cols_b / kr->cluster_m);
    }
    if (s->l2_fit) {
        dram_total = s->fit_dram_total;
        load_frac = s->fit_load_frac;
    } else {
        /* The library rasterises (swizzles) the grid so that a wave
         * covers a near-square patch of tiles, rows x cols, which
         * minimises the panels it streams: rows ~ sqrt(wave x BN / BM). */
        int64_t per_wave = slots < tiles_mn ? slots : tiles_mn;
        int64_t rows, cols;

        /* (a full wave's patch is the candidate's, computed once) */
        if (per_wave == slots) {
            rows = c->wave_rows;
        } else {
            rows = (int64_t)(sqrt((double)per_wave * kr->tile_n / kr->tile_m) + 0.5);
            if (rows < 1)
                rows = 1;
        }
        if (rows > tiles_m)
            rows = tiles_m;
        cols = per_wave == slots && rows == c->wave_rows ? c->wave_cols : ceil_div(per_wave, rows);
        if (cols > tiles_n) {
            cols = tiles_n;
            rows = ceil_div(per_wave, cols);
        }
        double waves_mn = (double)tiles_mn / (double)per_wave;
        double panel_a = (double)rows * kr->tile_m, panel_b = (double)cols * kr->tile_n;
        double wave_bytes;

        if (panel_a > (double)s->m)
            panel_a = (double)s->m;
        if (panel_b > (double)s->n)
            panel_b = (double)s->n;
        wave_bytes = (panel_a + panel_b) * (double)s->k * s->elem_bytes;
        double streamed = wave_bytes * waves_mn;

        if (streamed < s->a_bytes + s->b_bytes)
            streamed = s->a_bytes + s->b_bytes;
        dram_total = (streamed + s->c_bytes) * (double)s->batch;
        load_frac = 1.0 - s->c_bytes_batch / dram_total;
    }
    dram_tile_bytes = dram_total / (double)tiles;

    if (kr->stream_k) {
        double waves_frac = p->waves_frac;

        full_mem = waves_frac * (double)slots * dram_tile_bytes * r->us_per_dram_byte;
        full_l2 = waves_frac * (double)slots * l2_tile_bytes * r->us_per_l2_byte;
        res->compute_us = full_compute;
        res->memory_us = full_mem > full_l2 ? full_mem : full_l2;
        res->time_us = overlap(full_compute, full_mem, full_l2, loss, load_frac);
        res->whole_waves = 0;
        /* The fix-up: blocks that share a tile exchange fp32 partials
         * through L2 and wait for each other once. With at least as many
         * tiles as slots a tile is shared by two blocks: one writes its
         * partial, the other reads it. With fewer, the K loop of each tile
         * is cut among p = ceil(slots / tiles) blocks, and the block that
         * owns the tile reads the p - 1 partials of its peers one after the
         * other, at its own SM's L2 rate (slots x us_per_l2_byte is the time
         * of one byte through one slot's share of the L2 bandwidth): the
         * partials' transfers, p in all, are on the critical path. */
        {
            int64_t sharers = tiles < slots ? ceil_div(slots, tiles) : 2;

            overhead = am->fill_us * (waves_frac < 1.0 ? 1.0 : waves_frac) + am->fill_us +
                       (double)sharers * (double)slots * kr->tile_m * kr->tile_n * PARTIAL_BYTES *
                           r->us_per_l2_byte;
        }
    } else {
        int64_t full_waves = p->full_waves, last_tiles = p->last_tiles;
        double last_compute = p->last_compute;

        full_mem = (double)slots * dram_tile_bytes * r->us_per_dram_byte;
        full_l2 = (double)slots * l2_tile_bytes * r->us_per_l2_byte;
        last_mem = last_l2 = 0.0;
        if (last_tiles > 0) {
            last_mem = (double)last_tiles * dram_tile_bytes * r->us_per_dram_byte;
            /* L2 -> SM bandwidth is per SM: a partial wave's busiest SM
             * pulls its tiles' panels alone, the idle SMs' share unused. */
            last_l2 = (double)p->last_per_sm * r->units * l2_tile_bytes * r->us_per_l2_byte;
        }
        res->compute_us = p->compute_us;
        res->memory_us = (double)full_waves * (full_mem > full_l2 ? full_mem : full_l2) +
                         (last_mem > last_l2 ? last_mem : last_l2);
        res->time_us =
            (double)full_waves * overlap(full_compute, full_mem, full_l2, loss, load_frac) +
            overlap(last_compute, last_mem, last_l2, loss, load_frac);
        res->whole_waves = full_waves + (last_tiles > 0);
        /* The pipeline fill is in each wave's compute path (added above):
         * an SM waits for its first loads while DRAM serves the others. */
        overhead = 0.0;
    }
    overhead += am->launch_us;
    if (split > 1) {
        /* Partial fp32 tiles go out and come back for the reduction, which
         * is one more kernel. */
        double partial = (double)tiles_mn * s->batch * kr->tile_m * kr->tile_n * PARTIAL_BYTES;

        overhead += 2.0 * (double)split * partial * r->us_per_l2_byte +
                    (double)s->m * s->n * s->batch * s->out_bytes * r->us_per_dram_byte +
                    am->launch_us;
    }
    res->overhead_us = overhead;
    res->time_us += overhead;
    res->split = split;
    res->blocks_per_sm = bps;
    res->tiles = tiles;
}

/* The explanation of the chosen result: only computed for the winner. */
static void describe(const struct rates *r, const struct cand *c, const struct shape *s,
                     struct result *res)
{
    const struct tc_kernel *kr = c->k;
    double tiles_mn = (double)div_ceil(s->m, &c->tile_m) * (double)div_ceil(s->n, &c->tile_n);

    res->waves = (double)res->tiles / ((double)r->units * c->bps);
    res->wave_eff = res->whole_waves ? res->waves / (double)res->whole_waves : 1.0;
    res->tile_eff = (double)s->m * (double)s->n / (tiles_mn * kr->tile_m * kr->tile_n);
    if (res->overhead_us > 0.5 * res->time_us)
        res->bound = TC_BOUND_LATENCY;
    else if (res->memory_us > res->compute_us)
        res->bound = TC_BOUND_MEMORY;
    else
        res->bound = TC_BOUND_COMPUTE;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */
/* ------------------------------------------------------------------------ */

static int check_query(const struct tc_gpu *gpu, const struct tc_gemm_query *q, int64_t *batch)
{
    int64_t mn, mnk, total, lda, ldb, ldc;

    if (q->m <= 0 || q->n <= 0 || q->k <= 0)
        return tc_error(TC_ERR_RANGE,
                        "GEMM dimensions must be positive: m = %lld, n = %lld, k = %lld",
                        (long long)q->m, (long long)q->n, (long long)q->k);
    if (q->batch < 0)
        return tc_error(TC_ERR_RANGE, "batch = %lld is negative", (long long)q->batch);
    *batch = q->batch ? q->batch : 1;
    if (__builtin_mul_overflow(q->m, q->n, &mn) || __builtin_mul_overflow(mn, q->k, &mnk) ||
        __builtin_mul_overflow(mnk, *batch, &total) || total > INT64_MAX / 2)
        return tc_error(TC_ERR_RANGE,
                        "GEMM %lld x %lld x %lld (batch %lld) overflows: m.n.k.batch "
                        "must stay below 2^62",
                        (long long)q->m, (long long)q->n, (long long)q->k, (long long)*batch);
    if ((unsigned)q->dtype >= TC_DTYPE_COUNT)
        return tc_error(TC_ERR_INVALID, "unknown dtype %d", (int)q->dtype);
    if ((unsigned)q->layout >= TC_LAYOUT_COUNT)
        return tc_error(TC_ERR_INVALID, "unknown layout %d", (int)q->layout);
    tc_gemm_packed_lds(q, &lda, &ldb, &ldc);
    if (q->lda < 0 || (q->lda > 0 && q->lda < lda))
        return tc_error(TC_ERR_RANGE, "lda = %lld is smaller than the %s row length %lld",
                        (long long)q->lda, tc_layout_name(q->layout), (long long)lda);
    if (q->ldb < 0 || (q->ldb > 0 && q->ldb < ldb))
        return tc_error(TC_ERR_RANGE, "ldb = %lld is smaller than the %s row length %lld",
                        (long long)q->ldb, tc_layout_name(q->layout), (long long)ldb);
    if (q->ldc < 0 || (q->ldc > 0 && q->ldc < ldc))
        return tc_error(TC_ERR_RANGE, "ldc = %lld is smaller than n = %lld", (long long)q->ldc,
                        (long long)ldc);
    if ((unsigned)gpu->arch >= TC_ARCH_COUNT || gpu->arch == TC_ARCH_CPU)
        return tc_error(TC_ERR_UNSUPPORTED, "GPU '%s': unknown architecture %d", gpu->id,
                        (int)gpu->arch);
    if (!(gpu->peak_tflops[q->dtype] > 0))
        return tc_error(TC_ERR_UNSUPPORTED,
                        "dtype %s is not supported by %s (no dense %s peak in "
                        "its spec)",
                        tc_dtype_name(q->dtype), gpu->id, tc_dtype_name(q->dtype));
    if (q->dtype == TC_DTYPE_FP8 && q->layout != TC_LAYOUT_NT && tc_gemm_fp8_tn_only(gpu))
        return tc_error(TC_ERR_UNSUPPORTED,
                        "%s (%s) runs fp8 GEMMs in cuBLASLt's TN format only, row-major NT (A "
                        "stored m x k, B stored n x k, as nn.Linear): a row-major %s GEMM needs an "
                        "operand transposed first (predict that GEMM with --layout NT)",
                        gpu->id, gpu->compute_capability, tc_layout_name(q->layout));
    if (gpu->units <= 0 || !(gpu->clock_tensor_mhz > 0) || !(gpu->mem_bw_gbps > 0))
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': units, clock and memory bandwidth must be "
                        "positive",
                        gpu->id);
    return TC_OK;
}

/* Candidates of one (GPU, dtype), cached per thread: most callers predict
 * many shapes for the same GPU. The key holds the GPU's numbers byte for byte
 * (everything before its source notes), so a spec changed in place at the
 * same address is never served stale. */
#define CACHE_ENTRIES 4
#define CACHE_MAX_CANDS 64
#define GPU_KEY_BYTES offsetof(struct tc_gpu, sources)

struct cand_table {
    bool valid;
    const struct tc_catalogue *cat;
    enum tc_dtype dtype;
    unsigned char gpu_key[GPU_KEY_BYTES];
    double clock_sustained; /* the one number after the key's bytes */
    struct rates r;
    size_t n;
    struct cand c[CACHE_MAX_CANDS];
};

static _Thread_local struct cand_table cand_cache[CACHE_ENTRIES];
static _Thread_local unsigned cand_cache_next;

bool tc_gemm_fp8_tn_only(const struct tc_gpu *gpu)
{
    const char *cc = gpu->compute_capability;

    return gpu->vendor == TC_VENDOR_NVIDIA &&
           (strcmp(cc, "sm_89") == 0 || strcmp(cc, "sm_90") == 0 || strncmp(cc, "sm_12", 5) == 0);
}

bool tc_gemm_on_matrix_units(const struct tc_gpu *gpu, enum tc_dtype dtype)
{
    if (gpu->vendor == TC_VENDOR_AMD)
        return true;
    return dtype != TC_DTYPE_FP32 && gpu->arch != TC_ARCH_PASCAL;
}

static void rates_init(const struct tc_gpu *gpu, enum tc_dtype dtype, struct rates *r)
{
    r->am = &arch_models[gpu->arch];
    r->tensor = tc_gemm_on_matrix_units(gpu, dtype);
    r->units = gpu->units;
    divisor_init(&r->units_div, gpu->units);
    r->sm_flops_per_us = gpu->peak_tflops[dtype] * 1e6 / gpu->units;
    r->clock_per_us = r->tensor ? gpu->clock_tensor_mhz : gpu->clock_vector_mhz;
    if (!(r->clock_per_us > 0))
        r->clock_per_us = gpu->clock_tensor_mhz;
    r->dram_bytes_per_us = gpu->mem_bw_gbps * 1e3 * r->am->dram_eff;
    r->l2_bytes_per_us = r->am->l2_bytes_per_clk * r->clock_per_us * gpu->units;
    r->us_per_dram_byte = 1.0 / r->dram_bytes_per_us;
    r->us_per_l2_byte = 1.0 / r->l2_bytes_per_us;
    r->l2_bytes = gpu->l2_bytes > 0 ? (double)gpu->l2_bytes : 4.0 * 1024 * 1024;
    r->max_warps = gpu->max_warps_per_sm;
    r->warp = gpu->warp_size > 0 ? gpu->warp_size : 32;
    r->k_tail_loop = gpu->vendor == TC_VENDOR_AMD;
    r->simt_clock_full = 1.0;
    if (!r->tensor && gpu->clock_vector_sustained_mhz > 0 &&
        gpu->clock_vector_sustained_mhz < r->clock_per_us)
        r->simt_clock_full = gpu->clock_vector_sustained_mhz / r->clock_per_us;
    /* cuBLAS's batched kernels index the batch with the grid's z dimension,
     * the one its in-kernel split-K also uses: a batched call is not split.
     * NeuSight's A100 (the catalogue's [NS]): none of 16,661 strided-batched
     * fp32 calls ran a split-K reduction, and they take the time of unsplit
     * tiles (batch 15 of 27 x 30 x 215: 102 us measured, 48 us unsplit,
     * 16 us split 6 ways). Tensile's GSU is left as it was: no evidence. */
    r->batch_split = gpu->vendor == TC_VENDOR_AMD;
    /* A CDNA wavefront's s_endpgm waits for its outstanding vector-memory
     * stores, and its VGPRs (with the workgroup's slot on the CU) are freed
     * only then: LLVM's SIInsertWaitcnts marks "S_ENDPGM instructions which
     * may have to wait for outstanding VMEM stores" and sends the message
     * that releases the VGPRs before the stores complete (MSG_DEALLOC_VGPRS)
     * on GFX11 and later only; gfx90a and gfx942 are GFX9. NVIDIA's stores
     * are posted: a CTA's warps exit with stores in flight. So on CDNA a
     * wave's C stores, issued by all its blocks at the end of the same K
     * loop, stand between it and the next wave. The rocBLAS gfx90a tuning
     * table (the catalogue's [RB]) shows it: over its plain shapes with
     * M.N >= 2^24, the median of its efficiency over the model's fraction of
     * peak rose from 0.80 at K = 64 and 0.99 at K = 256 to 1.63 at K = 8192
     * without the drain, and runs 1.17, 1.24 .. 1.64 with it; the rank
     * correlation over all 3,228 shapes goes from 0.963 to 0.981, over the
     * 754 batched ones from 0.958 to 0.988. No constant is added: the
     * stores move at the DRAM rate the model already has. CDNA3 runs the
     * same ISA rule, but its stores land in the 256 MiB Infinity Cache in
     * front of HBM, whose bandwidth the spec does not carry, and no timed
     * MI300X GEMM is at hand: left as it was (at HBM rate the drain would
     * take 8192 x 8192 x 256 from 562 to 378 TFLOP/s, unchecked). CDNA1
     * runs the same rule and stores to HBM as CDNA2 does. */
    r->store_drain = gpu->arch == TC_ARCH_CDNA2 || gpu->arch == TC_ARCH_CDNA1;
}

/* The candidates of (gpu, dtype): from the cache, or built into `scratch`
 * when the catalogue has too many kernels to cache. */
static const struct cand_table *cand_table_get(const struct tc_catalogue *cat,
                                               const struct tc_gpu *gpu, enum tc_dtype dtype,
                                               const struct tc_kernel *const *kernels, size_t nk)
{
    struct cand_table *t;

    for (unsigned i = 0; i < CACHE_ENTRIES; i++) {
        t = &cand_cache[i];
        if (t->valid && t->cat == cat && t->dtype == dtype &&
            memcmp(t->gpu_key, gpu, GPU_KEY_BYTES) == 0 &&
            t->clock_sustained == gpu->clock_vector_sustained_mhz)
            return t;
    }
    if (nk > CACHE_MAX_CANDS)
        return NULL;
    t = &cand_cache[cand_cache_next++ % CACHE_ENTRIES];
    t->valid = false;
    t->cat = cat;
    t->dtype = dtype;
    memcpy(t->gpu_key, gpu, GPU_KEY_BYTES);
    t->clock_sustained = gpu->clock_vector_sustained_mhz;
    rates_init(gpu, dtype, &t->r);
    t->n = 0;
    for (size_t i = 0; i < nk; i++) {
        cand_init(&t->r, gpu, kernels[i], dtype, &t->c[t->n]);
        if (t->c[t->n].bps > 0)
            t->n++;
    }
    t->valid = true;
    return t;
}

/* The shape's numbers shared by every candidate, the same expressions as
 * evaluate() would compute them. */
static void shape_init(const struct rates *r, const struct tc_gemm_query *q, int64_t batch,
                       struct shape *s)
{
    s->m = q->m;
    s->n = q->n;
    s->k = q->k;
    s->batch = batch;
    s->elem_bytes = tc_dtype_bytes(q->dtype);
    /* fp8 GEMMs write 16-bit outputs; fp32/tf32 write fp32. */
    s->out_bytes = s->elem_bytes < 2 ? 2 : s->elem_bytes;
    s->align = tc_gemm_align_class(q);
    s->a_bytes = (double)s->m * s->k * s->elem_bytes;
    s->b_bytes = (double)s->k * s->n * s->elem_bytes;
    s->c_bytes = (double)s->m * s->n * s->out_bytes;
    s->c_bytes_batch = s->c_bytes * (double)s->batch;
    s->l2_fit = s->a_bytes + s->b_bytes <= 0.5 * r->l2_bytes;
    if (s->l2_fit) {
        s->fit_dram_total = (s->a_bytes + s->b_bytes + s->c_bytes) * (double)s->batch;
        s->fit_load_frac = 1.0 - s->c_bytes_batch / s->fit_dram_total;
    }
}

/* The fastest candidate so far and its result. Candidates are tried in
 * catalogue order and splits in split_factors[] order, and only a strictly
 * faster one replaces the pick, so of equal times the first wins. */
struct pick {
    const struct cand *c; /* NULL until one is found */
    struct cand own;      /* a copy of *c where the candidate does not last */
    struct result res[2]; /* res[cur] is the pick's; the other is scratch */
    int cur;
    /* once there is a pick, a split whose bound is at least this is
     * skipped: the pick's time, or infinity in tc_predict_gemm_exhaustive(),
     * which evaluates every split and counts those whose bound exceeded
     * their time */
    double prune_us;
    bool exhaustive;
    long bound_violations;
};

/* The split factors candidate c may use on shape s, as a count of
 * split_factors[]: splits only fill the machine, and keep K loops long
 * enough (4 steps) to amortise the pipeline. */
static size_t n_splits(const struct rates *r, const struct cand *c, const struct shape *s,
                       int64_t tiles_mn)
{
    const struct tc_kernel *kr = c->k;
    size_t j = 1;

    if (!kr->split_k || (s->batch > 1 && !r->batch_split))
        return 1;
    while (j < TC_ARRAY_SIZE(split_factors) && tiles_mn * split_factors[j] <= c->slots &&
           s->k >= (int64_t)split_factors[j] * kr->tile_k * 4)
        j++;
    return j;
}

/* Tries every split of candidate c on shape s that can beat the pick: the
 * SM side first, and the data movement only where the SM time plus the
 * launch, which never exceeds the whole time (sm_part()), is below the
 * pick's, so the pick is the one that evaluating every split would make. */
static void try_cand(const struct rates *r, const struct cand *c, const struct shape *s,
                     struct pick *best)
{
    const struct tc_kernel *kr = c->k;
    int64_t tiles_m, tiles_n, tiles_mn;
    size_t n;

    /* TMA cannot address strides that are not multiples of 16 bytes. */
    if (kr->tma && s->align > TC_ALIGN_16B)
        return;
    if (s->batch > 1 && !kr->batched)
        return;
    tiles_m = div_ceil(s->m, &c->tile_m);
    tiles_n = div_ceil(s->n, &c->tile_n);
    tiles_mn = tiles_m * tiles_n * s->batch;
    n = n_splits(r, c, s, tiles_mn);
    for (size_t j = 0; j < n; j++) {
        struct result *res = &best->res[!best->cur];
        struct sm_part p;
        double bound;

        sm_part(r, c, s, tiles_mn, j, &p);
        bound = p.compute_us + r->am->launch_us;
        if (best->c && bound >= best->prune_us)
            continue;
        evaluate(r, c, s, tiles_m, tiles_n, split_factors[j], &p, res);
        if (bound > res->time_us)
            best->bound_violations++;
        if (!best->c || res->time_us < best->res[best->cur].time_us) {
            best->c = c;
            best->cur = !best->cur;
            if (!best->exhaustive)
                best->prune_us = res->time_us;
        }
    }
}

static int predict_with(const struct tc_catalogue *cat, const struct tc_gpu *gpu,
                        const struct tc_gemm_query *q, struct tc_gemm_prediction *out,
                        bool exhaustive, long *bound_violations)
{
    const struct tc_kernel *const *kernels;
    const struct tc_kernel *best_k = NULL;
    const struct cand_table *table;
    const struct rates *r;
    struct rates own_rates;
    struct pick best;
    struct shape s;
    size_t nk;
    int64_t batch = 1;
    int err;

    if (!cat || !gpu || !q || !out)
        return tc_error(TC_ERR_INVALID, "tc_predict_gemm_analytical: NULL argument");
    if ((err = check_query(gpu, q, &batch)) < 0)
        return err;
    nk = tc_catalogue_kernels(cat, gpu->arch, q->dtype, &kernels);
    if (!nk)
        return tc_error(TC_ERR_UNSUPPORTED,
                        "no %s GEMM kernel for the %s family of %s in the "
                        "kernel catalogue",
                        tc_dtype_name(q->dtype), tc_arch_name(gpu->arch), gpu->id);

    table = cand_table_get(cat, gpu, q->dtype, kernels, nk);
    if (table) {
        r = &table->r;
    } else {
        rates_init(gpu, q->dtype, &own_rates);
        r = &own_rates;
    }
    shape_init(r, q, batch, &s);
    best.c = NULL;
    best.cur = 0;
    best.exhaustive = exhaustive;
    best.prune_us = INFINITY;
    best.bound_violations = 0;
    if (table) {
        for (size_t i = 0; i < table->n; i++)
            try_cand(r, &table->c[i], &s, &best);
    } else {
        /* Too many kernels to cache: built and tried in batches. */
        struct cand c[CACHE_MAX_CANDS];

        for (size_t i = 0; i < nk;) {
            const struct cand *before = best.c;
            size_t n = 0;

            for (; i < nk && n < CACHE_MAX_CANDS; i++) {
                cand_init(r, gpu, kernels[i], q->dtype, &c[n]);
                if (c[n].bps > 0)
                    n++;
            }
            for (size_t j = 0; j < n; j++)
                try_cand(r, &c[j], &s, &best);
            if (best.c != before) {
                best.own = *best.c;
                best.c = &best.own;
            }
        }
    }
    if (best.c) {
        best_k = best.c->k;
        describe(r, best.c, &s, &best.res[best.cur]);
    }
    if (!best_k)
        return tc_error(TC_ERR_UNSUPPORTED,
                        "no %s kernel of the %s catalogue fits %s (%s "
                        "leading dimensions)",
                        tc_dtype_name(q->dtype), tc_arch_name(gpu->arch), gpu->id,
                        tc_align_name(s.align));

    memset(out, 0, sizeof(*out));
    out->time_us = best.res[best.cur].time_us;
    out->tflops = 2.0 * (double)s.m * (double)s.n * (double)s.k * (double)s.batch /
                  (best.res[best.cur].time_us * 1e6);
    out->frac_peak = out->tflops / gpu->peak_tflops[q->dtype];
    out->source = TC_SOURCE_ANALYTICAL;
    /* An 80% band from how far measurements fall from the analytical model:
     * the 10th and 90th percentiles of measured / predicted time were 0.92
     * and 1.21 on the kernel-timed fp16 development data (1.38 with host
     * timings), so the band is [0.92, 1.25] x the prediction. */
    out->lo_us = INTERVAL_LO * best.res[best.cur].time_us;
    out->hi_us = INTERVAL_HI * best.res[best.cur].time_us;
    out->interval_level = 0.8;
    tc_strlcpy(out->kernel, best_k->name, sizeof(out->kernel));
    out->tile_m = best_k->tile_m;
    out->tile_n = best_k->tile_n;
    out->tile_k = best_k->tile_k;
    out->stages = best_k->stages;
    out->warps = (best_k->threads + r->warp - 1) / r->warp;
    out->split_k = best.res[best.cur].split;
    out->cluster_m = best_k->cluster_m;
    out->cluster_n = best_k->cluster_n;
    out->stream_k = best_k->stream_k;
    out->tiles = best.res[best.cur].tiles;
    out->waves = best.res[best.cur].waves;
    out->wave_eff = best.res[best.cur].wave_eff;
    out->tile_eff = best.res[best.cur].tile_eff;
    out->blocks_per_sm = best.res[best.cur].blocks_per_sm;
    {
        int warp = gpu->warp_size > 0 ? gpu->warp_size : 32;
        int warps = (best_k->threads + warp - 1) / warp;

        out->occupancy =
            gpu->max_warps_per_sm > 0
                ? (double)(best.res[best.cur].blocks_per_sm * warps) / gpu->max_warps_per_sm
                : 0.0;
    }
    out->bound = best.res[best.cur].bound;
    out->align = s.align;
    out->compute_us = best.res[best.cur].compute_us;
    out->memory_us = best.res[best.cur].memory_us;
    out->overhead_us = best.res[best.cur].overhead_us;
    if (bound_violations)
        *bound_violations = best.bound_violations;
    return TC_OK;
}

int tc_predict_gemm_with(const struct tc_catalogue *cat, const struct tc_gpu *gpu,
                         const struct tc_gemm_query *q, struct tc_gemm_prediction *out)
{
    return predict_with(cat, gpu, q, out, false, NULL);
}

int tc_predict_gemm_exhaustive(const struct tc_catalogue *cat, const struct tc_gpu *gpu,
                               const struct tc_gemm_query *q, struct tc_gemm_prediction *out,
                               long *bound_violations)
{
    return predict_with(cat, gpu, q, out, true, bound_violations);
}

TC_API int tc_predict_gemm_analytical(const struct tc_gpu *gpu, const struct tc_gemm_query *q,
                                      struct tc_gemm_prediction *out)
{
    const struct tc_catalogue *cat;
    int err;

    if (!gpu || !q || !out)
        return tc_error(TC_ERR_INVALID, "tc_predict_gemm_analytical: NULL argument");
    if ((err = tc_catalogue_default(&cat)) < 0)
        return err;
    return tc_predict_gemm_with(cat, gpu, q, out);
}
