/* Fused attention: FlashAttention-2, -3, -4 and cuDNN's SDPA engines as
 * tile models of the GPU spec.
 *
 * A fused kernel walks its work in tiles: a CTA owns Br query rows (the
 * forward) or Bc keys (the backward) of one (batch, head) and loops over
 * the other side's tiles, skipping those a mask hides entirely and
 * computing those it hides partly in full, with a masking pass. The model
 * builds that list of CTAs with the exact number of full and masked tiles
 * each computes, costs a tile from the tensor-core rate and the non-matmul
 * (softmax) rate of an SM, and schedules the CTAs on the SMs in the order
 * the kernel's scheduler issues them. What differs between kernels is the
 * tile, the scheduling order, whether the forward splits the keys, and two
 * efficiencies taken from each kernel's published benchmarks (below). */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "attention-kernel.h"

/* ------------------------------------------------------------------------ */
/* Timing constants                                                          */
/* ------------------------------------------------------------------------ */

/* Fraction of the DRAM peak a streaming kernel sustains (as the previous
 * tile model and the GEMM predictor's memory term assume). */
#define FUSED_DRAM_EFF 0.85
/* L2 bandwidth of an SM, bytes per clock: the A100 whitepaper's 5120
 * B/clk of L2 read bandwidth over its 108 SMs; Hopper is taken at the same
 * per-SM rate (as the GEMM model takes both). */
#define SM_L2_BYTES_PER_CLK (5120.0 / 108.0)
/* An L2 hit's round trip in clocks: 193 on V100 (Jia et al. 2018,
 * "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking"),
 * 236 on Turing (sjfeng1999/gpu-arch-microbenchmark), 222-339 on L40 by SM
 * (arXiv 2606.22588). Handing a dQ semaphore over costs two: the releasing
 * CTA's fence waits for its adds, the next one's acquiring poll. */
#define L2_HIT_CLK 250.0
/* An L1 hit's round trip in clocks: 39 on B200 (Chips and Cheese, "Nvidia's
 * B200: Keeping the CUDA Juggernaut Rolling", 19.6 ns). */
#define L1_HIT_CLK 39.0
/* The threads of a block of the cuDNN frontend's sm100 split combine
 * (kernels/sm100/split_combine.py: THREADS). */
#define FROST_COMBINE_THREADS 128
/* Below this many CTAs the schedule is simulated exactly; above, the
 * tail is estimated (many waves: a few percent at most). */
#define SIM_MAX_UNITS (1 << 18)

/* ------------------------------------------------------------------------ */
/* Tiles under a mask                                                        */
/* ------------------------------------------------------------------------ */

/* The mask as the kernel sees it: queries are the last seq_q of seq_kv
 * positions (bottom-right aligned, as in prefill against a cache); a
 * causal query at position p sees keys [0, p], with a window W keys
 * [p - W + 1, p]. */
struct mask {
    bool causal;
    int64_t window, seq_q, seq_kv, offset;
};

/* Tiles [t0, t1] of size `size` covering [lo, hi] (t0 > t1: none). */
static void tile_span(int64_t lo, int64_t hi, int64_t size, int64_t *t0, int64_t *t1)
{
    if (hi < lo) {
        *t0 = 1;
        *t1 = 0;
        return;
    }
    *t0 = lo / size;
    *t1 = hi / size;
}

/* Tiles of size `size`, limited to [c0, c1], that lie wholly inside
 * [flo, fhi] (and inside [0, limit)). */
static int64_t full_tiles(int64_t c0, int64_t c1, int64_t flo, int64_t fhi, int64_t limit,
                          int64_t size)
{
    int64_t f0, f1;

    if (fhi >= limit)
        fhi = limit - 1;
    if (flo < 0)
        flo = 0;
    if (fhi < flo || c1 < c0)
        return 0;
    f0 = (flo + size - 1) / size;
    f1 = (fhi + 1) / size - 1;
    if (f0 < c0)
        f0 = c0;
    if (f1 > c1)
        f1 = c1;
    return f1 >= f0 ? f1 - f0 + 1 : 0;
}

/* The key tiles a forward CTA of query rows [r0, r1] computes, limited to
 * the key-tile range [s0, s1] of its split: *n in all, *n_full of them
 * with no masked element. Rows are packed rows (gp query heads per
 * position when PackGQA packs them). */
static void fwd_tiles(const struct mask *m, int64_t r0, int64_t r1, int64_t gp, int64_t bc,
                      int64_t s0, int64_t s1, int64_t *n, int64_t *n_full)
{
    int64_t p0 = m->offset + r0 / gp, p1 = m->offset + r1 / gp;
    int64_t lo = 0, hi = m->seq_kv - 1, flo = 0, fhi = m->seq_kv - 1, t0, t1;

    if (m->causal) {
        hi = p1 < hi ? p1 : hi;
        fhi = p0;
        if (m->window) {
            lo = p0 - m->window + 1 > 0 ? p0 - m->window + 1 : 0;
            flo = p1 - m->window + 1;
        }
    }
    tile_span(lo, hi, bc, &t0, &t1);
    if (t0 < s0)
        t0 = s0;
    if (t1 > s1)
        t1 = s1;
    *n = t1 >= t0 ? t1 - t0 + 1 : 0;
    *n_full = *n ? full_tiles(t0, t1, flo, fhi, m->seq_kv, bc) : 0;
}

/* The query tiles a backward CTA of keys [k0, k1] computes. */
static void bwd_tiles(const struct mask *m, int64_t k0, int64_t k1, int64_t br, int64_t *n,
                      int64_t *n_full)
{
    int64_t lo = 0, hi = m->seq_q - 1, flo = 0, fhi = m->seq_q - 1, t0, t1;

    if (m->causal) {
        /* rows whose position sees some key of the block, and all of them */
        lo = k0 - m->offset > 0 ? k0 - m->offset : 0;
        flo = k1 - m->offset;
        if (m->window) {
            hi = k1 + m->window - 1 - m->offset < hi ? k1 + m->window - 1 - m->offset : hi;
            fhi = k0 + m->window - 1 - m->offset;
        }
    }
    if (k1 >= m->seq_kv)
        fhi = -1; /* a partial key block is bounds-masked on every row */
    tile_span(lo, hi, br, &t0, &t1);
    *n = t1 >= t0 ? t1 - t0 + 1 : 0;
    *n_full = *n ? full_tiles(t0, t1, flo, fhi, m->seq_q, br) : 0;
}

/* ------------------------------------------------------------------------ */
/* Scheduling CTAs on SMs                                                    */
/* ------------------------------------------------------------------------ */

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x > y ? -1 : x < y;
}

static int cmp_asc(const void *a, const void *b)
{
    return cmp_desc(b, a);
}

/* The time the last SM finishes when `reps` copies of the pattern
 * unit_us[0..n) (one (batch, head)'s CTAs) are issued to `sms` SMs, each
 * CTA to the SM that frees first (a hardware block scheduler, or a
 * persistent kernel's atomic tile counter), in launch order, longest or
 * shortest first. An SM's co-resident CTAs share its pipes, so an SM is
 * one server. */
static double makespan(double *unit_us, size_t n, int64_t reps, int sms, int order)
{
    bool lpt = order == ORDER_LPT, sorted = order != ORDER_GRID;
    double total = 0, longest = 0, *heap, t = 0;
    size_t count = n * (size_t)reps, h = 0;
    bool equal = true;

    for (size_t i = 0; i < n; i++) {
        total += unit_us[i] * (double)reps;
        longest = fmax(longest, unit_us[i]);
        equal &= unit_us[i] == unit_us[0];
    }
    if (!n || longest <= 0)
        return 0;
    if (equal) /* waves at SM granularity: the last partial wave costs a whole one */
        return ceil((double)count / sms) * longest;
    if (sorted)
        qsort(unit_us, n, sizeof(*unit_us), lpt ? cmp_desc : cmp_asc);
    if (count > SIM_MAX_UNITS || !(heap = calloc((size_t)sms, sizeof(*heap))))
        /* many waves: the work spread evenly plus a tail of half the
         * longest CTA (none when the longest go first, all when last) */
        return fmax(longest, total / sms + (lpt ? 0.0 : order == ORDER_SPT ? 1.0 : 0.5) * longest);
    /* a binary min-heap of SM finish times; all SMs start idle */
    h = (size_t)sms;
    for (size_t c = 0; c < count; c++) {
        /* launch order: the pattern per (batch, head); sorted:
         * each of the sorted pattern's CTAs across all heads together */
        double u = sorted ? unit_us[c / (size_t)reps] : unit_us[c % n];
        size_t i = 0;

        heap[0] += u;
        for (;;) { /* sift down */
            size_t l = 2 * i + 1, r = l + 1, s = i;
            double tmp;

            if (l < h && heap[l] < heap[s])
                s = l;
            if (r < h && heap[r] < heap[s])
                s = r;
            if (s == i)
                break;
            tmp = heap[i];
            heap[i] = heap[s];
            heap[s] = tmp;
            i = s;
        }
    }
    for (size_t i = 0; i < h; i++)
        t = fmax(t, heap[i]);
    free(heap);
    return t;
}

/* ------------------------------------------------------------------------ */
/* Split-KV (FlashDecoding)                                                  */
/* ------------------------------------------------------------------------ */

/* How many splits of the keys the kernel's heuristic picks (the
 * FlashDecoding heuristic of FlashAttention-2's flash_api.cpp,
 * num_splits_heuristic; FA3's differs, below): none when the CTAs fill
 * 80% of the slots; else, of the split counts that change the keys per split,
 * the smallest whose wave efficiency (waves / ceil(waves)) is within 85%
 * of the best, up to 128 splits, the slot count and the key tiles. */
static int64_t split_heuristic(int64_t ctas, double slots, int64_t key_tiles)
{
    int64_t max_splits = 128, best_s = 1;
    double best = 0;

    if ((double)ctas >= 0.8 * slots)
        return 1;
    if (max_splits > (int64_t)slots)
        max_splits = (int64_t)slots;
    if (max_splits > key_tiles)
        max_splits = key_tiles;
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t s = 1; s <= max_splits; s++) {
            double waves, eff;

            if (s > 1 && (key_tiles + s - 1) / s == (key_tiles + s - 2) / (s - 1))
                continue; /* the same keys per split as s - 1 */
            waves = (double)(ctas * s) / slots;
            eff = waves / ceil(waves);
            if (pass == 0 && eff > best)
                best = eff;
            if (pass == 1 && eff >= 0.85 * best) {
                best_s = s;
                break;
            }
        }
    }
    return best_s;
}

/* FlashAttention-3's own split count (hopper/heuristics.h,
 * num_splits_heuristic, called by flash_api.cpp's get_num_splits), which
 * differs from FA2's in three ways: CTAs that fill 80% of the SMs split
 * only when one KV head's K and V exceed the 50 MiB it takes for the L2
 * and the query tiles pass over them at least twice (2x the SMs, not
 * causal or local), into ceil(bytes / 50 MiB) splits; four key tiles or
 * fewer never split ("we never split for hdim = 128 and seqlen_k = 512");
 * and every count up to the cap is a candidate, none skipped for giving
 * the same keys per split. ctas counts the packed query tiles (get_num_splits:
 * "Always enable PackGQA for Split") and slots the SMs. */
#define FA3_SPLIT_L2_BYTES (50.0 * 1024 * 1024)

static int64_t fa3_split_heuristic(int64_t ctas, int64_t slots, int64_t key_tiles, int64_t m_blocks,
                                   double kv_head_bytes, bool causal_or_local)
{
    int64_t max_splits = 128, best_s = 1;
    double best = 0;

    if ((double)ctas >= 0.8 * (double)slots) {
        if (kv_head_bytes > FA3_SPLIT_L2_BYTES && m_blocks >= 2 * slots && !causal_or_local) {
            int64_t s = (int64_t)ceil(kv_head_bytes / FA3_SPLIT_L2_BYTES);

            return s < max_splits ? s : max_splits;
        }
        return 1;
    }
    if (key_tiles <= 4)
        return 1;
    if (max_splits > slots)
        max_splits = slots;
    if (max_splits > key_tiles)
        max_splits = key_tiles;
    for (int64_t s = 1; s <= max_splits; s++) {
        double waves = (double)(ctas * s) / (double)slots;

        best = fmax(best, waves / ceil(waves));
    }
    for (int64_t s = 1; s <= max_splits; s++) {
        double waves = (double)(ctas * s) / (double)slots;

        if (waves / ceil(waves) >= 0.85 * best) {
            best_s = s;
            break;
        }
    }
    return best_s;
}

/* FlashAttention-4's split count on sm90 and sm100 (flash_attn/cute/
 * interface.py, num_splits_heuristic): four key tiles or fewer never
 * split; else as many splits as put one CTA on every SM, floor(SMs /
 * query tiles) ("we should revisit this heuristic after persistence is
 * supported"), at most 128 and the key tiles; query tiles that fill half
 * the SMs or more do not split. ctas counts _flash_attn_fwd's
 * total_mblocks: the KV heads' packed query rows over 128 rows, 256 on
 * sm100 where they exceed 128 (its two Q stages). */
static int64_t fa4_split_heuristic(int64_t ctas, int64_t slots, int64_t key_tiles)
{
    int64_t s = ctas > 0 ? slots / ctas : 1;

    if (key_tiles <= 4 || s < 1)
        return 1;
    if (s > 128)
        s = 128;
    return s < key_tiles ? s : key_tiles;
}

/* The cuDNN frontend's open sm100 engines' split-KV choice (python/cudnn/
 * sdpa/fwd/heuristics.py, choose_split_kv and split_kv_candidates): splits
 * s of 1 and powers of two up to the SM count rounded up to a power of two,
 * each split keeping at least FROST_SPLIT_MIN_TILES key tiles, scored as two
 * kernels' latencies,
 *   waves(s) x (ceil(key_tiles / s) + FROST_SPLIT_CTA_COST)
 *     + combine_waves x s x FROST_SPLIT_COMBINE_COST,
 * in units of one key tile of the main loop: waves(s) = ceil(ctas x s /
 * SMs), the combine's one block per output row (seq_q x query heads x
 * batch, at least one wave). The cheapest wins, the smaller split on a tie.
 * The three constants are that file's (a CTA's prologue and epilogue, 21
 * tiles; a split's partials, 0.1 tile a combine wave). */
#define FROST_SPLIT_MIN_TILES 2
#define FROST_SPLIT_CTA_COST 21.0
#define FROST_SPLIT_COMBINE_COST 0.1
static int64_t frost_split_heuristic(int64_t ctas, int64_t sms, int64_t key_tiles,
                                     int64_t combine_rows)
{
    int64_t hi = 1, best = 1, combine_waves;
    double best_cost = 0;

    if (ctas <= 0 || sms <= 0 || key_tiles <= 1)
        return 1;
    while (hi < sms)
        hi <<= 1;
    /* a split of s keeps floor(key_tiles / s) tiles at least */
    while (hi > 1 && key_tiles / hi < FROST_SPLIT_MIN_TILES)
        hi >>= 1;
    combine_waves = combine_rows > sms ? (combine_rows + sms - 1) / sms : 1;
    for (int64_t split = 1; split <= hi; split <<= 1) {
        /* whole waves and whole key tiles a split: integer quotients */
        int64_t waves = (ctas * split + sms - 1) / sms, tiles = (key_tiles + split - 1) / split;
        double cost = (double)waves * ((double)tiles + FROST_SPLIT_CTA_COST) +
                      (double)combine_waves * (double)split * FROST_SPLIT_COMBINE_COST;

        if (split == 1 || cost < best_cost) {
            best = split;
            best_cost = cost;
        }
    }
    return best;
}

/* ------------------------------------------------------------------------ */
/* The model                                                                 */
/* ------------------------------------------------------------------------ */

/* The cuDNN frontend's sm100 split combine (kernels/sm100/split_combine.py)
 * runs one 128-thread block per output row, and each thread walks the split
 * axis one split at a time (loops of unroll=1): the partial LSE from L2 for
 * the maximum, again from L1 for the denominator, then from L1 for the
 * branch that guards the partial O's load from L2. Each step waits for its
 * load, so a block takes two L2 and two L1 round trips a split; its blocks
 * share the SMs in waves. */
static double frost_combine_us(const struct tc_gpu *gpu, double rows, int64_t splits)
{
    int units = gpu->units > 0 ? gpu->units : 1;
    int per_sm = gpu->max_threads_per_sm > 0 ? gpu->max_threads_per_sm / FROST_COMBINE_THREADS : 16;
    double waves;

    if (gpu->max_blocks_per_sm > 0 && gpu->max_blocks_per_sm < per_sm)
        per_sm = gpu->max_blocks_per_sm;
    if (per_sm < 1)
        per_sm = 1;
    waves = ceil(rows / ((double)units * per_sm));
    return waves * (double)splits * 2.0 * (L2_HIT_CLK + L1_HIT_CLK) /
           tc_fused_vector_clock_mhz(gpu);
}

/* Blocks per SM by shared memory, registers and threads, for the report:
 * Q and two K/V stages (forward), or the K/V block and two query stages
 * of Q, dO (backward), at the input width; 255 registers a thread (FA2). */
static int blocks_per_sm(const struct tc_gpu *gpu, const struct fused_kernel *k, double e, bool bwd)
{
    double smem = bwd ? ((double)k->bc + 2.0 * k->br) * (double)(k->dqk + k->dvo) * e
                      : ((double)k->br * k->dqk + 2.0 * k->bc * (double)(k->dqk + k->dvo)) * e;
    int bps = gpu->max_blocks_per_sm > 0 ? gpu->max_blocks_per_sm : 16;

    smem += (double)gpu->reserved_smem_per_block_bytes;
    if (gpu->smem_per_sm_bytes > 0)
        bps = (int)fmin(bps, floor((double)gpu->smem_per_sm_bytes / smem));
    /* whole blocks: the integer quotients */
    if (gpu->regs_per_sm > 0) {
        int by_regs = gpu->regs_per_sm / (k->threads * 255);
        bps = bps < by_regs ? bps : by_regs;
    }
    if (gpu->max_threads_per_sm > 0) {
        int by_threads = gpu->max_threads_per_sm / k->threads;
        bps = bps < by_threads ? bps : by_threads;
    }
    return bps < 1 ? 1 : bps;
}

/* The main kernel's time (the CTAs on the SMs, or DRAM, whichever is
 * longer) for mask m; fills the CTA count. */
static int fused_main_us(const struct tc_gpu *gpu, const struct tc_attention_query *q,
                         const struct fused_kernel *k, const struct mask *m, int64_t gp,
                         int64_t heads_eff, int64_t splits, double *main_us, int64_t *ctas)
{
    struct elem_cost c = tc_fused_elem_cost(gpu, q->dtype, k, q->backward);
    int units = gpu->units > 0 ? gpu->units : 1;
    double e = tc_dtype_bytes(q->dtype);
    double sm_bytes_per_us = gpu->mem_bw_gbps * 1e3 * FUSED_DRAM_EFF / units;
    double *pattern;
    size_t n = 0;
    int64_t reps = q->batch * heads_eff;

    if (!q->backward) {
        int64_t rows = m->seq_q * gp, row_tiles = (rows + k->br - 1) / k->br;
        int64_t key_tiles = (m->seq_kv + k->bc - 1) / k->bc;
        int64_t per_split = (key_tiles + splits - 1) / splits;
        /* Q in and O out (fp32 partial O when split) at the SM's share of
         * DRAM: the prologue and epilogue the K/V pipeline cannot hide; a
         * warp-specialised kernel's producer loads the next Q meanwhile */
        double pe_us = ((k->prefetch ? 0.0 : (double)k->br * k->dqk * e) +
                        (double)k->br * k->dvo * (splits > 1 ? 4.0 : e)) /
                       sm_bytes_per_us;

        pattern = malloc((size_t)(row_tiles * splits) * sizeof(*pattern));
        if (!pattern)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; i < row_tiles; i++) {
            int64_t r0 = i * k->br,
                    r1 = (i + 1) * k->br - 1 < rows - 1 ? (i + 1) * k->br - 1 : rows - 1;

            /* the rows the CTA's MMAs compute: the whole tile, or its
             * stages that hold a row */
            double br = k->stage_rows ? (double)round_up(r1 - r0 + 1, k->stage_rows) : k->br;

            for (int64_t s = 0; s < splits; s++) {
                int64_t nt, nf;

                fwd_tiles(m, r0, r1, gp, k->bc, s * per_split, (s + 1) * per_split - 1, &nt, &nf);
                pattern[n++] =
                    nt ? ((double)nf * c.full_us + (double)(nt - nf) * c.masked_us) * br * k->bc +
                             pe_us
                       : 0;
            }
        }
    } else {
        int64_t key_tiles = (m->seq_kv + k->bc - 1) / k->bc;
        double clk = gpu->clock_tensor_mhz > 0 ? gpu->clock_tensor_mhz : 1000;
        double step_l2_us = k->iter_l2_bytes / (SM_L2_BYTES_PER_CLK * clk);
        /* K and V in (prefetched by a producer warp), dK and dV out */
        double pe_us = (k->prefetch ? 1.0 : 2.0) * (double)k->bc * (double)(k->dqk + k->dvo) * e /
                       sm_bytes_per_us;
        double *per_block = malloc((size_t)key_tiles * sizeof(*per_block));
        /* the dQ relay (RELAY_*): a step hands the semaphore over, after
         * its own reduction has landed where the kernel has a reduction
         * rate (inline); a store warp's serial part, the tile's reduction
         * (at the kernel's dQ reduction rate where it has one, else the
         * SM's L2 rate) and the hand-over, bounds the step from below */
        double hand_us = 2.0 * L2_HIT_CLK / clk;
        double red_us = (double)k->br * (double)k->dqk * 4.0 /
                        (k->dq_red_gbps > 0 ? k->dq_red_gbps * 1e3 : SM_L2_BYTES_PER_CLK * clk);
        int64_t resident = (int64_t)units * blocks_per_sm(gpu, k, e, true), prev = 0;

        if (!per_block)
            return tc_error(TC_ERR_NOMEM, "out of memory");
        for (int64_t j = 0; j < key_tiles; j++) {
            int64_t nt, nf, last = m->seq_q - 1; /* the last query row the block sees */

            bwd_tiles(m, j * k->bc, (j + 1) * k->bc - 1, k->br, &nt, &nf);
            if (k->mask_every_tile &&
                (m->causal || m->window || m->seq_q % k->br || m->seq_kv % k->bc))
                nf = 0;
            per_block[j] =
                ((double)nf * c.full_us + (double)(nt - nf) * c.masked_us) * k->br * k->bc +
                (double)nt * step_l2_us;
            if (m->causal && m->window)
                last = (int64_t)fmin((double)last,
                                     (double)((j + 1) * k->bc + m->window - 2 - m->offset));
            last /= k->br;
            if (k->dq_red_gbps > 0)
                per_block[j] = fmax(per_block[j], (double)nt * red_us);
            if (k->relay == RELAY_INLINE)
                per_block[j] += (double)nt * (hand_us + (k->dq_red_gbps > 0 ? red_us : 0.0));
            else if (k->relay == RELAY_WARP)
                per_block[j] = fmax(per_block[j], (double)nt * (red_us + hand_us));
            /* an inline relay runs in ascending key-tile order: a CTA
             * ends a hand-over after the one before it (resident with it)
             * at the earliest, plus its steps past that one's last query
             * tile; FA4's order under the mask runs from the shorter CTAs */
            if (k->relay == RELAY_INLINE && j % resident && nt)
                per_block[j] = fmax(per_block[j], per_block[j - 1] + hand_us +
                                                      (double)(last > prev ? last - prev : 0) *
                                                          per_block[j] / (double)nt);
            prev = last;
        }
        /* the deterministic FA2 backward: ceil(SMs / (b * h)) CTAs per
         * head, each looping over every splits-th key block and
         * accumulating dQ into its own buffer (flash_api.cpp mha_bwd and
         * flash_bwd_launch_template.h: gridDimx); else one CTA per key
         * block adding dQ atomically */
        n = (size_t)(q->deterministic && !k->relay ? splits : key_tiles);
        pattern = calloc(n, sizeof(*pattern));
        if (!pattern) {
            free(per_block);
            return tc_error(TC_ERR_NOMEM, "out of memory");
        }
        for (int64_t j = 0; j < key_tiles; j++)
            pattern[q->deterministic && !k->relay ? j % splits : j] += per_block[j] + pe_us;
        free(per_block);
    }
    *ctas = (int64_t)n * reps;
    *main_us = makespan(pattern, n, reps, units, k->order);
    free(pattern);
    return TC_OK;
}

int tc_attention_fused(const struct tc_gpu *gpu, const struct tc_attention_query *q, int64_t seq_kv,
                       struct tc_attention_prediction *out)
{
    struct fused_kernel k;
    struct tc_attention_query unmasked;
    int units = gpu->units > 0 ? gpu->units : 1;
    double e = tc_dtype_bytes(q->dtype), bw = gpu->mem_bw_gbps * 1e3 * FUSED_DRAM_EFF;
    double e_kv = tc_dtype_bytes(tc_attention_kv_dtype(q));
    int64_t kv_heads = q->kv_heads ? q->kv_heads : q->heads, group = q->heads / kv_heads;
    int64_t gp = 1, heads_eff = q->heads, splits = 1, ctas = 0, dqk, dvo, bm, bn;
    bool paged_fa2;
    struct mask m = {.causal = q->causal,
                     .window = q->window,
                     .seq_q = q->seq_q,
                     .seq_kv = seq_kv,
                     .offset = seq_kv - q->seq_q};
    double main_us, bytes, extra_us = 0;
    int bps, err;

    err = tc_fused_kernel_resolve(gpu, q, &k);
    if (err < 0)
        return err;
    /* FA3's mha_fwd (hopper/flash_api.cpp): for a single query without a
     * window "causal=true is the same as causal=false", and it drops the
     * mask, and with it the causal 128-key tiles (176 at head dim 128),
     * except over a paged cache at head dims 65-128 ("special case of hdim
     * 128 where we want causal to have kBlockN=128, better for pagedKV and
     * TMA") */
    if (k.impl == TC_ATTN_FLASH3 && !q->backward && q->causal && q->seq_q == 1 && !q->window &&
        (q->head_dim <= 64 || q->head_dim > 128 || !q->page_size)) {
        unmasked = *q;
        unmasked.causal = false;
        q = &unmasked;
        m.causal = false;
        err = tc_fused_kernel_resolve(gpu, q, &k);
        if (err < 0)
            return err;
    }
    /* a kernel that skips no masked tile and has one dQ order times a
     * masked or deterministic launch as the plain one */
    if (k.unskipped_bwd && (q->causal || q->window || q->deterministic)) {
        unmasked = *q;
        unmasked.causal = false;
        unmasked.window = 0;
        unmasked.deterministic = false;
        q = &unmasked;
        m.causal = false;
        m.window = 0;
        err = tc_fused_kernel_resolve(gpu, q, &k); /* and its unmasked tiles */
        if (err < 0)
            return err;
    }
    if (q->deterministic && !k.relay &&
        !(k.fa2_split && (k.impl == TC_ATTN_FLASH2 || k.impl == TC_ATTN_FLASH)))
        return tc_error(TC_ERR_UNSUPPORTED,
                        "attention: the deterministic backward of %s on %s is not modelled (no "
                        "public source describes how it orders its dQ additions); "
                        "FlashAttention-2's, FlashAttention-4's on sm90, cuDNN's fp8 on sm90 "
                        "and the cuDNN frontend's open sm80 engine's are",
                        tc_attn_impl_name(k.impl), gpu->id);
    if (k.plain_grid && q->kv_splits > 1 && !q->backward)
        return tc_error(TC_ERR_UNSUPPORTED,
                        "attention: %s on %s has no split-KV forward (--kv-splits %lld asked)",
                        tc_attn_impl_name(q->impl), gpu->id, (long long)q->kv_splits);
    /* FlashAttention-2's paged cache: flash_attn_with_kvcache's block_table
     * takes pages of a multiple of 256 keys (flash_attn_interface.py, 2.5
     * on); its split kernel's key tiles (64-256 keys) then never straddle a
     * page. The NVIDIA kernels read it with that split kernel only (below). */
    paged_fa2 =
        q->page_size && k.fa2_split && (k.impl == TC_ATTN_FLASH2 || k.impl == TC_ATTN_FLASH);
    if (paged_fa2 && q->page_size % 256)
        return tc_error(TC_ERR_UNSUPPORTED,
                        "attention: FlashAttention-2's paged KV cache takes pages of a multiple "
                        "of 256 keys (flash_attn_with_kvcache's block_table), not %lld",
                        (long long)q->page_size);
    dqk = k.dqk;
    dvo = k.dvo;
    paged_fa2 = paged_fa2 && gpu->vendor != TC_VENDOR_AMD;
    if (!k.window_skip)
        m.window = 0; /* the tiles left of the window are computed as under the causal mask */

    if (!q->backward) {
        /* GQA packing: FA2 swaps a single query's heads into rows
         * (flash_api.cpp, seqlenq_ngroups_swapped: seq_q 1, no window);
         * FA3's PackGQA packs when it wastes fewer rows of the last tile
         * (heuristics.h: unpacked efficiency below 0.9x the packed), FA4's
         * whenever there are several (pack_gqa_always) */
        if (k.plain_grid) {
            /* no packing, no split: the kernel's grid whatever the shape */
        } else if (group > 1 && q->seq_q == 1 && ((k.fa2_split && !q->window) || k.pack_decode)) {
            gp = group;
        } else if (group > 1 && k.pack_gqa) {
            double unpacked = (double)q->seq_q / (double)round_up(q->seq_q, k.br);
            double packed = (double)(q->seq_q * group) / (double)round_up(q->seq_q * group, k.br);

            if (unpacked < 0.9 * packed || k.pack_gqa_always)
                gp = group;
        }
        heads_eff = gp > 1 ? kv_heads : q->heads;
        /* FA2's split kernel: 64-row tiles over 256 / 128 / 64 keys by head
         * dim, counted against two CTAs per SM (set_params_splitkv); FA3's
         * heuristic counts its own tiles against the SMs */
        bm = k.fa2_split ? 64 : k.br;
        bn = k.fa2_split ? (dqk <= 64 ? 256 : dqk <= 128 ? 128 : 64) : k.bc;
        if (q->kv_splits != 1 && !k.plain_grid &&
            !(k.split_one_query && q->seq_q > 1 && q->kv_splits == 0)) {
            int64_t key_tiles = (seq_kv + bn - 1) / bn;
            int64_t ctas_1 = q->batch * heads_eff * ((q->seq_q * gp + bm - 1) / bm);

            if (q->kv_splits > 1) {
                splits = q->kv_splits;
            } else if (k.impl == TC_ATTN_FLASH3) {
                /* get_num_splits: the keys a local query tile loads at
                 * most (its window plus a tile), and its query heads
                 * packed whatever PackGQA's own heuristic says */
                int64_t loaded = q->window && seq_kv > q->window + bm ? q->window + bm : seq_kv;
                int64_t m_blocks = (q->seq_q * group + bm - 1) / bm;

                splits = fa3_split_heuristic(q->batch * kv_heads * m_blocks, units,
                                             (loaded + bn - 1) / bn, m_blocks,
                                             (double)seq_kv * (double)(dqk + dvo) * e,
                                             (q->causal && q->seq_q > 1) || q->window);
            } else if (k.frost_split) {
                /* its 256-row tiles of packed query rows, 128 keys a tile */
                splits =
                    frost_split_heuristic(ctas_1, units, key_tiles, q->seq_q * q->heads * q->batch);
            } else if (k.impl == TC_ATTN_FLASH4 && !k.fa2_split) {
                /* _flash_attn_fwd: the keys a local query loads at most
                 * (its window plus 128), the query rows of a KV head
                 * packed over one or two 128-row Q stages */
                int64_t rows = q->seq_q * group;
                int64_t m_eff = gpu->arch == TC_ARCH_BLACKWELL && rows > 128 ? 256 : 128;
                int64_t loaded = q->window && seq_kv > q->window + 128 ? q->window + 128 : seq_kv;

                splits = fa4_split_heuristic(q->batch * kv_heads * ((rows + m_eff - 1) / m_eff),
                                             units, (loaded + bn - 1) / bn);
            } else {
                splits = split_heuristic(ctas_1, (k.fa2_split ? 2.0 : 1.0) * units, key_tiles);
            }
            if (splits > key_tiles)
                splits = key_tiles;
        }
        /* FA2 reads a paged cache with its split kernel only, whether it
         * splits or not (flash_api.cpp, mha_fwd_kvcache and mha_varlen_fwd:
         * run_mha_fwd(params, stream, force_split_kernel = ... || paged_KV)) */
        if (splits > 1 || (paged_fa2 && !k.plain_grid)) {
            k.br = (int)bm;
            k.bc = (int)bn;
            /* FA2's split kernel: four warps (run_mha_fwd_splitkv_dispatch) */
            if (k.smem_bytes > 0 && k.fa2_split)
                k.smem_bytes = sm80_fwd_smem_bytes(bm, bn, dqk, dvo, 4, false, e);
        }
    } else if (q->deterministic && !k.relay) {
        /* one CTA per head at least, each looping over its key blocks */
        int64_t key_tiles = (seq_kv + k.bc - 1) / k.bc;

        splits = (units + q->batch * q->heads - 1) / (q->batch * q->heads);
        if (splits > key_tiles)
            splits = key_tiles;
    }

    err = fused_main_us(gpu, q, &k, &m, gp, heads_eff, splits, &main_us, &ctas);
    if (err < 0)
        return err;
    if (q->causal) {
        /* a causal launch computes a subset of the same CTAs' tiles: it
         * cannot end later than the launch without the mask (the list
         * schedule's ordering anomalies are the model's, not the GPU's) */
        struct mask full = m;
        double nc_us;
        int64_t nc_ctas;

        full.causal = false;
        full.window = 0;
        err = fused_main_us(gpu, q, &k, &full, gp, heads_eff, splits, &nc_us, &nc_ctas);
        if (err < 0)
            return err;
        main_us = fmin(main_us, nc_us);
    }

    /* DRAM: forward Q and O once, K and V once per KV head (re-reads by
     * query tiles and grouped heads hit L2), the window's span of keys at
     * most, at the cache's width; backward also dO, dQ, dK, dV. A paged
     * cache adds its block table, an index per page of each sequence (the
     * CTAs of a sequence re-read it from L2); its pages hold the same rows
     * as a contiguous cache, read as they are */
    {
        double kv_len =
            m.window ? fmin((double)seq_kv, (double)(q->seq_q + m.window)) : (double)seq_kv;
        double qrows = (double)q->batch * q->heads * q->seq_q;
        double kvrows = (double)q->batch * kv_heads * kv_len;

        bytes = qrows * (dqk + dvo) * e + kvrows * (dqk + dvo) * e_kv;
        if (q->page_size)
            bytes += (double)q->batch * ceil(kv_len / (double)q->page_size) * TC_PAGE_INDEX_BYTES;
        if (q->backward)
            bytes *= 2;
        else if (splits > 1)
            bytes += 2.0 * splits * qrows * dvo * 4; /* partial O and its reread */
    }
    out->time_us = fmax(main_us, bytes / bw) + TC_KERNEL_FLOOR_US;
    out->bound = main_us >= bytes / bw ? TC_BOUND_COMPUTE : TC_BOUND_MEMORY;
    {
        double qrows = (double)q->batch * q->heads * q->seq_q;

        if (!q->backward && splits > 1) {
            /* the combine kernel: partial O and LSE of every split in, O out */
            extra_us = tc_elementwise_time_us(gpu, qrows * (splits * (dvo + 1) * 4.0 + dvo * e));
            if (k.frost_split)
                extra_us = fmax(extra_us, frost_combine_us(gpu, qrows, splits));
        }
        if (q->backward) {
            /* preprocess: D = rowsum(dO * O), dQ accumulator zeroed;
             * postprocess: the fp32 dQ accumulator(s) to dQ */
            double acc = q->deterministic ? (double)splits : 1.0;

            extra_us = tc_elementwise_time_us(gpu, qrows * (2.0 * dvo * e + 4 + dqk * 4.0)) +
                       tc_elementwise_time_us(gpu, qrows * dqk * (4.0 * acc + e));
            if (k.dkv_per_qhead && kv_heads != q->heads)
                /* the per-query-head dK, dV in, the KV heads' out */
                extra_us += tc_elementwise_time_us(gpu, (double)q->batch * (double)seq_kv *
                                                            (double)(q->heads + kv_heads) *
                                                            (double)(dqk + dvo) * e);
        }
    }
    out->time_us += extra_us;
    bps = blocks_per_sm(gpu, &k, e, q->backward);
    out->kernel = k.impl;
    out->kv_splits = q->backward ? 1 : splits;
    out->block_m = k.br;
    out->block_n = k.bc;
    out->blocks_per_sm = bps;
    out->blocks = ctas;
    out->waves = (double)ctas / ((double)units * bps);
    out->occupancy = gpu->max_warps_per_sm > 0
                         ? fmin(1.0, (double)bps * k.threads / 32.0 / gpu->max_warps_per_sm)
                         : 0;
    out->source = TC_SOURCE_ANALYTICAL;
    return TC_OK;
}

/* (query, key) pairs a mask keeps, summed over the queries (positions
 * offset .. offset + seq_q - 1 of seq_kv): all seq_kv keys, the p + 1 of
 * a causal query at p, at most the window's. */
double tc_attention_pairs(const struct tc_attention_query *q, int64_t seq_kv)
{
    double sq = (double)q->seq_q, skv = (double)seq_kv, off = skv - sq;

    if (!q->causal)
        return sq * skv;
    if (off < 0)
        off = 0;
    if (!q->window)
        return sq * off + sq * (sq + 1) / 2;
    {
        double w = (double)q->window;
        /* rows whose p + 1 <= W see p + 1 keys, the others W */
        double c1 = fmin(fmax(w - off, 0), sq);

        return c1 * off + c1 * (c1 + 1) / 2 + (sq - c1) * w;
    }
}

/* Test hooks (model-internal.h). */
void tc_attention_fwd_tiles(const struct tc_attention_query *q, int64_t seq_kv, int64_t r0,
                            int64_t r1, int64_t bc, int64_t *n, int64_t *n_full)
{
    struct mask m = {.causal = q->causal,
                     .window = q->window,
                     .seq_q = q->seq_q,
                     .seq_kv = seq_kv,
                     .offset = seq_kv - q->seq_q};

    fwd_tiles(&m, r0, r1, 1, bc, 0, (seq_kv + bc - 1) / bc - 1, n, n_full);
}

void tc_attention_bwd_tiles(const struct tc_attention_query *q, int64_t seq_kv, int64_t k0,
                            int64_t k1, int64_t br, int64_t *n, int64_t *n_full)
{
    struct mask m = {.causal = q->causal,
                     .window = q->window,
                     .seq_q = q->seq_q,
                     .seq_kv = seq_kv,
                     .offset = seq_kv - q->seq_q};

    bwd_tiles(&m, k0, k1, br, n, n_full);
}

int64_t tc_attention_split_heuristic(int64_t ctas, double slots, int64_t key_tiles)
{
    return split_heuristic(ctas, slots, key_tiles);
}
