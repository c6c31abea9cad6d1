/* The analytical GEMM model (the catalogue's own checks are in
 * test-gemm-catalogue.c): occupancy / tile / wave arithmetic on hand-computed cases,
 * monotonicity and sanity properties, the alignment cliffs of the paper, bad
 * inputs, thread safety, and an accuracy regression on a fixed subset of the
 * measured data (via $TILECAST_MEASURED_DATA). Fixtures: tests/data/gemm/. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "gemm-internal.h"
#include "tc-internal.h"
#include "test-gemm.h"
#include "test-util.h"
#include "tilecast/tilecast.h"

static struct tc_specs *specs;

static void specs_setup(void)
{
    ck_assert_msg(tc_specs_load(src_path("gpu_specs"), &specs) == TC_OK,
                  "loading gpu_specs failed: %s", tc_last_error());
}

static void specs_teardown(void)
{
    tc_specs_free(specs);
    specs = NULL;
}

static const struct tc_gpu *gpu(const char *id)
{
    const struct tc_gpu *g = tc_specs_find(specs, id);

    ck_assert_msg(g != NULL, "GPU %s missing from gpu_specs", id);
    return g;
}

static struct tc_gemm_prediction predict(const char *id, enum tc_dtype dtype, enum tc_layout layout,
                                         int64_t m, int64_t n, int64_t k, int64_t batch)
{
    struct tc_gemm_query q = {
        .m = m, .n = n, .k = k, .batch = batch, .dtype = dtype, .layout = layout};
    struct tc_gemm_prediction pr;
    int err = tc_predict_gemm_analytical(gpu(id), &q, &pr);

    ck_assert_msg(err == TC_OK, "%s %lldx%lldx%lld: %s", id, (long long)m, (long long)n,
                  (long long)k, tc_last_error());
    return pr;
}

/* An A100-like SM filled in by hand, so that the occupancy arithmetic is
 * checked against numbers computed here and not against the spec files. */
static struct tc_gpu hand_a100(void)
{
    struct tc_gpu g;

    memset(&g, 0, sizeof(g));
    snprintf(g.id, sizeof(g.id), "hand-a100");
    g.vendor = TC_VENDOR_NVIDIA;
    g.arch = TC_ARCH_AMPERE;
    g.units = 108;
    g.clock_tensor_mhz = g.clock_vector_mhz = 1410;
    g.peak_tflops[TC_DTYPE_FP16] = g.peak_tflops[TC_DTYPE_BF16] = 312;
    g.peak_tflops[TC_DTYPE_FP32] = 19.5;
    g.mem_bw_gbps = 2039;
    g.l2_bytes = 40 << 20;
    g.warp_size = 32;
    g.max_threads_per_sm = 2048;
    g.max_warps_per_sm = 64;
    g.max_blocks_per_sm = 32;
    g.max_threads_per_block = 1024;
    g.regs_per_sm = 65536;
    g.max_regs_per_block = 65536;
    g.max_regs_per_thread = 255;
    g.reg_alloc_unit = 256;
    g.smem_per_sm_bytes = 167936;
    g.smem_per_block_max_bytes = 166912;
    g.reserved_smem_per_block_bytes = 1024;
    g.smem_alloc_unit_bytes = 128;
    return g;
}

static struct tc_kernel kernel(int tm, int tn, int tk, int stages, int threads, int regs)
{
    struct tc_kernel k;

    memset(&k, 0, sizeof(k));
    snprintf(k.name, sizeof(k.name), "k%dx%dx%d", tm, tn, tk);
    k.tile_m = tm;
    k.tile_n = tn;
    k.tile_k = tk;
    k.warp_m = tm >= 64 ? 64 : tm;
    k.warp_n = tn >= 64 ? 64 : tn;
    k.stages = stages;
    k.threads = threads;
    k.regs_per_thread = regs;
    k.cluster_m = k.cluster_n = 1;
    k.mma_rate = 1.0;
    return k;
}

/* ------------------------------------------------------------------------ */
/* Occupancy, tiles, waves                                                  */
/* ------------------------------------------------------------------------ */

START_TEST(occupancy_hand_computed)
{
    struct tc_gpu g = hand_a100();
    const char *why = NULL;
    struct tc_kernel k;

    /* 128x128x32, 5 stages, 4 warps at 232 registers: 232 x 32 = 7424
     * registers per warp (already a multiple of 256), 29,696 per block ->
     * 2 by registers; smem 5 x 256 x 32 x 2 = 81,920 + 1,024 reserved ->
     * 167,936 / 82,944 = 2 by shared memory. */
    k = kernel(128, 128, 32, 5, 128, 232);
    ck_assert_int_eq(tc_kernel_blocks_per_sm(&g, &k, TC_DTYPE_FP16, &why), 2);
    /* 256x128x64, 3 stages, 8 warps: 147,456 + 1,024 bytes -> 1. */
    k = kernel(256, 128, 64, 3, 256, 232);
    ck_assert_int_eq(tc_kernel_blocks_per_sm(&g, &k, TC_DTYPE_FP16, &why), 1);
    /* 64x64x32, 2 stages, 4 warps at 100 registers: 100 x 32 = 3,200 ->
     * 3,328 (13 x 256) per warp, 13,312 per block -> 4 by registers;
     * smem 16,384 + 1,024 -> 9; threads 2048 / 128 = 16. */
    k = kernel(64, 64, 32, 2, 128, 100);
    ck_assert_int_eq(tc_kernel_blocks_per_sm(&g, &k, TC_DTYPE_FP16, &why), 4);
    ck_assert_str_eq(why, "registers");
    /* Small blocks run into the 32-block limit: 32 threads, 32 registers,
     * 2 x 96 x 8 x 2 = 3,072 bytes + 1,024 -> 41 by smem, 64 by threads. */
    k = kernel(32, 64, 8, 2, 32, 32);
    ck_assert_int_eq(tc_kernel_blocks_per_sm(&g, &k, TC_DTYPE_FP16, &why), 32);
    ck_assert_str_eq(why, "blocks");
    /* 1024 threads at 255 registers: 8,160 -> 8,192 per warp x 32 warps is
     * above the 65,536 registers of a block: it cannot run. */
    k = kernel(128, 128, 32, 2, 1024, 255);
    ck_assert_int_eq(tc_kernel_blocks_per_sm(&g, &k, TC_DTYPE_FP16, NULL), 0);
    /* More shared memory than the opt-in maximum of a block. */
    k = kernel(256, 256, 64, 4, 256, 128);
    ck_assert_int_eq(tc_kernel_blocks_per_sm(&g, &k, TC_DTYPE_FP16, NULL), 0);
}
END_TEST

START_TEST(occupancy_amd_vgpr_granules)
{
    struct tc_gpu g = hand_a100();
    struct tc_kernel k;
    const char *why = NULL;

    g.vendor = TC_VENDOR_AMD;
    g.arch = TC_ARCH_CDNA2;
    g.warp_size = 64;
    g.max_warps_per_sm = 32;
    g.max_blocks_per_sm = 16;
    g.regs_per_sm = 131072;
    g.max_regs_per_block = 131072;
    g.max_regs_per_thread = 512;
    g.reg_alloc_unit = 8;
    g.smem_per_sm_bytes = 65536;
    g.smem_per_block_max_bytes = 65536;
    g.reserved_smem_per_block_bytes = 0;
    g.smem_alloc_unit_bytes = 512;
    /* 256 threads = 4 waves, 100 VGPRs -> 104 allocated: 512 / 104 = 4
     * waves per SIMD, 16 per CU -> 4 blocks; LDS 2 x 128 x 32 x 2 = 16 KiB
     * -> 4; waves 32 / 4 = 8. */
    k = kernel(64, 64, 32, 2, 256, 100);
    ck_assert_int_eq(tc_kernel_blocks_per_sm(&g, &k, TC_DTYPE_FP16, &why), 4);
    /* 256 VGPRs: 2 waves per SIMD -> 2 blocks; LDS 2 x 384 x 32 x 2 =
     * 48 KiB -> 1 block. */
    k = kernel(128, 256, 32, 2, 256, 256);
    ck_assert_int_eq(tc_kernel_blocks_per_sm(&g, &k, TC_DTYPE_FP16, &why), 1);
    ck_assert_str_eq(why, "smem");
}
END_TEST

START_TEST(tiles_and_waves_arithmetic)
{
    struct tc_gemm_prediction pr =
        predict("a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 4000, 8192, 8192, 1);
    int64_t tiles_m = (4000 + pr.tile_m - 1) / pr.tile_m;
    int64_t tiles_n = (8192 + pr.tile_n - 1) / pr.tile_n;
    double slots = 108.0 * pr.blocks_per_sm;

    ck_assert_int_eq(pr.split_k, 1);
    ck_assert_int_eq(pr.tiles, tiles_m * tiles_n);
    ck_assert_double_eq_tol(pr.waves, (double)pr.tiles / slots, 1e-9);
    ck_assert_double_eq_tol(pr.wave_eff, pr.waves / ceil(pr.waves), 1e-9);
    ck_assert_double_eq_tol(
        pr.tile_eff, 4000.0 * 8192.0 / ((double)tiles_m * pr.tile_m * tiles_n * pr.tile_n), 1e-9);
    ck_assert_double_eq_tol(pr.tflops, 2.0 * 4000 * 8192 * 8192 / pr.time_us / 1e6, 1e-6);
    ck_assert_double_eq_tol(pr.frac_peak, pr.tflops / 312.0, 1e-9);
    ck_assert_int_eq(pr.source, TC_SOURCE_ANALYTICAL);
    ck_assert_int_eq(pr.align, TC_ALIGN_128B);
    ck_assert_int_eq(pr.bound, TC_BOUND_COMPUTE);
    ck_assert_double_eq_tol(pr.occupancy, pr.blocks_per_sm * pr.warps / 64.0, 1e-9);
    ck_assert(pr.compute_us > 0 && pr.memory_us > 0 && pr.overhead_us > 0);
    ck_assert(pr.time_us >= pr.compute_us && pr.time_us >= pr.memory_us);

    /* Batched: tiles multiply by the batch. */
    pr = predict("a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 1024, 1024, 1024, 16);
    ck_assert_int_eq(pr.tiles, (long)((1024 + pr.tile_m - 1) / pr.tile_m) *
                                   ((1024 + pr.tile_n - 1) / pr.tile_n) * 16 * pr.split_k);
}
END_TEST

START_TEST(alignment_classes)
{
    struct tc_gemm_query q = {.m = 100, .n = 4096, .k = 4096, .dtype = TC_DTYPE_FP16};

    ck_assert_int_eq(tc_gemm_align_class(&q), TC_ALIGN_128B);
    q.k = 4104; /* x 2 bytes = 8,208: a multiple of 16, not of 128 */
    ck_assert_int_eq(tc_gemm_align_class(&q), TC_ALIGN_16B);
    q.k = 4098; /* = 2 mod 4 */
    ck_assert_int_eq(tc_gemm_align_class(&q), TC_ALIGN_4B);
    q.k = 4097;
    ck_assert_int_eq(tc_gemm_align_class(&q), TC_ALIGN_ELEM);
    /* m is a leading dimension only when A is transposed. */
    q.k = 4096;
    q.m = 101;
    ck_assert_int_eq(tc_gemm_align_class(&q), TC_ALIGN_128B);
    q.layout = TC_LAYOUT_TN;
    ck_assert_int_eq(tc_gemm_align_class(&q), TC_ALIGN_ELEM);
    /* An explicit leading dimension decides. */
    q.layout = TC_LAYOUT_NN;
    q.m = 100;
    q.lda = 4160;
    ck_assert_int_eq(tc_gemm_align_class(&q), TC_ALIGN_128B);
    q.lda = 4100;
    ck_assert_int_eq(tc_gemm_align_class(&q), TC_ALIGN_4B);
    /* fp32: an odd dimension is still 4-byte aligned. */
    q.lda = 0;
    q.k = 4097;
    q.dtype = TC_DTYPE_FP32;
    ck_assert_int_eq(tc_gemm_align_class(&q), TC_ALIGN_4B);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Properties                                                               */
/* ------------------------------------------------------------------------ */

START_TEST(time_grows_with_k)
{
    static const char *const ids[] = {"a100-sxm4-80gb", "h100-sxm5-80gb", "v100-sxm2-32gb",
                                      "mi250x",         "mi300x",         "l40s",
                                      "b200",           "h200-sxm-141gb"};

    for (size_t g = 0; g < sizeof(ids) / sizeof(ids[0]); g++) {
        for (int64_t mn = 256; mn <= 8192; mn *= 4) {
            double prev = 0;

            for (int64_t k = 256; k <= 32768; k *= 2) {
                struct tc_gemm_prediction pr =
                    predict(ids[g], TC_DTYPE_FP16, TC_LAYOUT_NT, mn, mn, k, 1);

                ck_assert_msg(pr.time_us > prev, "%s %lld^2 x %lld: %g us not above %g us", ids[g],
                              (long long)mn, (long long)k, pr.time_us, prev);
                prev = pr.time_us;
            }
        }
    }
}
END_TEST

START_TEST(never_above_peak)
{
    static const char *const ids[] = {
        "a100-sxm4-80gb", "h100-sxm5-80gb", "v100-sxm2-32gb", "mi250x", "mi300x", "l40s", "b200"};
    static const enum tc_dtype dts[] = {TC_DTYPE_FP16, TC_DTYPE_FP32};

    for (size_t g = 0; g < sizeof(ids) / sizeof(ids[0]); g++)
        for (size_t d = 0; d < 2; d++)
            for (int64_t m = 1; m <= 65536; m *= 4)
                for (int64_t k = 16; k <= 65536; k *= 8) {
                    struct tc_gemm_prediction pr =
                        predict(ids[g], dts[d], TC_LAYOUT_NN, m, 8192, k, 1);

                    ck_assert_msg(pr.frac_peak > 0 && pr.frac_peak <= 1.0,
                                  "%s %s %lldx8192x%lld: %.3f of peak", ids[g],
                                  tc_dtype_name(dts[d]), (long long)m, (long long)k, pr.frac_peak);
                    ck_assert(pr.tile_eff > 0 && pr.tile_eff <= 1.0);
                    ck_assert(pr.wave_eff > 0 && pr.wave_eff <= 1.0);
                    ck_assert(isfinite(pr.time_us) && pr.time_us > 1.0);
                }
}
END_TEST

START_TEST(tile_choice_follows_shape)
{
    struct tc_gemm_prediction big =
        predict("a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 8192, 8192, 1);
    struct tc_gemm_prediction small =
        predict("a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 64, 128, 16384, 1);
    struct tc_gemm_prediction h_big =
        predict("h100-sxm5-80gb", TC_DTYPE_BF16, TC_LAYOUT_NT, 8192, 8192, 8192, 1);

    ck_assert_int_ge((long)big.tile_m * big.tile_n, 128L * 256);
    ck_assert_int_eq(big.split_k, 1);
    /* 64x128 with a long K: one tile cannot fill 108 SMs, so the model
     * shrinks the tile and splits K. */
    ck_assert_int_le((long)small.tile_m * small.tile_n, 64L * 128);
    ck_assert_int_gt(small.split_k, 1);
    ck_assert_int_ge((long)h_big.tile_m * h_big.tile_n, 128L * 256);
    ck_assert_int_eq((long)h_big.cluster_m * h_big.cluster_n, 2);
    /* Decode-like GEMMs are memory-bound; big square ones compute-bound. */
    ck_assert_int_eq(big.bound, TC_BOUND_COMPUTE);
    ck_assert_int_eq(
        predict("h100-sxm5-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT, 16, 8192, 8192, 1).bound,
        TC_BOUND_MEMORY);
    ck_assert_int_eq(predict("a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT, 8, 64, 64, 1).bound,
                     TC_BOUND_LATENCY);
}
END_TEST

/* cuBLAS names an sgemm tile in its own column-major view, where a
 * row-major C[m x n] is computed as C^T = B^T A^T: the name's first number
 * runs along the model's n, the second along m. NeuSight's kernel column
 * ([NS], the catalogue's source) shows it: ampere_sgemm_128x64 ran on
 * m = 2486, n = 11386 (medians) and volta_sgemm_32x128 on m = 2415, n = 441.
 * V100's strided-batched calls ran 64x64, 32x128 and 128x32 only (17,621
 * calls with batch > 1). Each shape below is a NeuSight row and the tile it
 * ran. */
START_TEST(sgemm_tiles_as_cublas_runs_them)
{
    struct tc_gemm_prediction wide =
        predict("a100-pcie-40gb", TC_DTYPE_FP32, TC_LAYOUT_NT, 188, 13343, 1840, 1);
    struct tc_gemm_prediction tall =
        predict("v100-pcie-32gb", TC_DTYPE_FP32, TC_LAYOUT_NN, 1003, 8, 624, 31);
    struct tc_gemm_prediction square =
        predict("v100-pcie-32gb", TC_DTYPE_FP32, TC_LAYOUT_NN, 160, 264, 928, 32);
    static const int64_t batched[][4] = {
        {33, 108, 410, 683}, {16, 104, 1010, 988}, {27, 209, 297, 605}, {22, 479, 286, 475}};

    ck_assert_str_eq(wide.kernel, "ampere_sgemm_128x64");
    ck_assert_int_eq(wide.tile_m, 64);
    ck_assert_int_eq(wide.tile_n, 128);
    ck_assert_str_eq(tall.kernel, "volta_sgemm_32x128");
    ck_assert_int_eq(tall.tile_m, 128);
    ck_assert_int_eq(tall.tile_n, 32);
    ck_assert_str_eq(square.kernel, "volta_sgemm_64x64");
    for (size_t i = 0; i < TC_ARRAY_SIZE(batched); i++) {
        struct tc_gemm_prediction pr =
            predict("v100-pcie-32gb", TC_DTYPE_FP32, TC_LAYOUT_NN, batched[i][1], batched[i][2],
                    batched[i][3], batched[i][0]);

        ck_assert_msg(strcmp(pr.kernel, "volta_sgemm_64x64") == 0 ||
                          strcmp(pr.kernel, "volta_sgemm_32x128") == 0 ||
                          strcmp(pr.kernel, "volta_sgemm_128x32") == 0,
                      "V100 batched fp32 ran %s, which cuBLAS never runs batched", pr.kernel);
    }
}
END_TEST

/* Hopper's FFMA path against a published run (torch.matmul, float32 with
 * TF32 off, H100 SXM, PyTorch 2.7: zzc0721/torch-performance-test-data
 * issue 79): 49.58, 51.88, 51.81 and 49.61 TFLOP/s at 2048..10240 cubed.
 * Kernel time of large square GEMMs, so the host time of the run is a
 * small part; each within 6%. */
START_TEST(hopper_fp32_published_rate)
{
    static const struct {
        int64_t size;
        double tflops;
    } runs[] = {{2048, 49.58}, {4096, 51.88}, {8192, 51.81}, {10240, 49.61}};

    for (size_t i = 0; i < TC_ARRAY_SIZE(runs); i++) {
        struct tc_gemm_prediction pr = predict("h100-sxm5-80gb", TC_DTYPE_FP32, TC_LAYOUT_NN,
                                               runs[i].size, runs[i].size, runs[i].size, 1);

        ck_assert_msg(fabs(pr.tflops / runs[i].tflops - 1.0) <= 0.06,
                      "H100 fp32 %lld^3: %.2f TFLOP/s predicted, %.2f measured",
                      (long long)runs[i].size, pr.tflops, runs[i].tflops);
    }
}
END_TEST

/* The A100 PCIe 40GB's FFMA clock under its 250 W limit (its spec's
 * clock_vector_sustained_mhz, 1310 of 1410 MHz): a full-load sgemm runs at
 * the published 17.56 TFLOP/s (8192 cubed, torch.matmul float32), the same
 * GEMM on the same board without the limit 1410 / 1310 faster, and a
 * batched GEMM of six tiles (six busy SMs, far below the limit) at the
 * boost clock and Ampere's sgemm issue efficiency (0.97: 18.88 of 19.49
 * TFLOP/s on the 300 W A100 80GB PCIe). */
START_TEST(a100_pcie_ffma_power_limit)
{
    struct tc_gpu limited = *gpu("a100-pcie-40gb"), boost = limited;
    struct tc_gemm_query full = {
        .m = 8192, .n = 8192, .k = 8192, .dtype = TC_DTYPE_FP32, .layout = TC_LAYOUT_NN};
    struct tc_gemm_query few = {
        .m = 128, .n = 128, .k = 4096, .batch = 6, .dtype = TC_DTYPE_FP32, .layout = TC_LAYOUT_NN};
    struct tc_gemm_prediction a, b, c, d;
    double sm_flops_per_us;

    boost.clock_vector_sustained_mhz = 0;
    ck_assert_int_eq(tc_predict_gemm_analytical(&limited, &full, &a), TC_OK);
    ck_assert_int_eq(tc_predict_gemm_analytical(&boost, &full, &b), TC_OK);
    ck_assert_msg(fabs(a.tflops / 17.56 - 1.0) <= 0.03, "8192^3: %.2f TFLOP/s", a.tflops);
    ck_assert_double_eq_tol(b.compute_us / a.compute_us, 1310.0 / 1410.0, 0.005);
    ck_assert_int_eq(tc_predict_gemm_analytical(&limited, &few, &c), TC_OK);
    ck_assert_int_eq(tc_predict_gemm_analytical(&boost, &few, &d), TC_OK);
    ck_assert_double_eq(c.compute_us, d.compute_us);
    ck_assert_int_eq(c.tile_m, 128);
    /* one 128 x 128 block per busy SM: its FLOP over the SM time */
    sm_flops_per_us = 2.0 * 128 * 128 * 4096 / c.compute_us;
    ck_assert_msg(sm_flops_per_us >= 0.95 * 128 * 1410,
                  "a lone block runs at %.0f FLOP/us, below 0.95 of the boost peak",
                  sm_flops_per_us);
}
END_TEST

/* The FFMAs of a tile's padding multiply zeros and draw next to no dynamic
 * power: batched GEMMs of small matrices keep every SM busy under the
 * A100 PCIe's 250 W limit at the boost clock, full tiles do not. */
START_TEST(a100_pcie_ffma_padding_power)
{
    struct tc_gpu limited = *gpu("a100-pcie-40gb"), boost = limited;
    /* 216 blocks of 128 x 128 (two per SM, every SM busy): a quarter, 0.91
     * and all of each tile on data */
    static const int64_t sides[] = {64, 122, 128};
    double ratio[TC_ARRAY_SIZE(sides)];

    boost.clock_vector_sustained_mhz = 0;
    for (size_t i = 0; i < TC_ARRAY_SIZE(sides); i++) {
        struct tc_gemm_query q = {.m = sides[i],
                                  .n = sides[i],
                                  .k = 4096,
                                  .batch = 216,
                                  .dtype = TC_DTYPE_FP32,
                                  .layout = TC_LAYOUT_NN};
        struct tc_gemm_prediction a, b;

        ck_assert_int_eq(tc_predict_gemm_analytical(&limited, &q, &a), TC_OK);
        ck_assert_int_eq(tc_predict_gemm_analytical(&boost, &q, &b), TC_OK);
        ck_assert_str_eq(a.kernel, b.kernel);
        ck_assert_int_eq(a.tile_m, 128);
        ck_assert_int_eq(a.tile_n, 128);
        ratio[i] = b.compute_us / a.compute_us;
    }
    /* a quarter on data: (1310 / 1410)^3 / 0.25 > 1, the boost */
    ck_assert_double_eq_tol(ratio[0], 1.0, 1e-9);
    /* 0.908 on data: 1310 / 1410 / cbrt(0.908), below the boost */
    ck_assert_double_eq_tol(ratio[1], 1310.0 / 1410.0 / cbrt(122.0 * 122.0 / (128.0 * 128.0)),
                            0.005);
    ck_assert_double_eq_tol(ratio[2], 1310.0 / 1410.0, 0.005);
}
END_TEST

START_TEST(newer_gpus_are_faster)
{
    double v100 =
        predict("v100-sxm2-32gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 8192, 8192, 1).time_us;
    double a100 =
        predict("a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 8192, 8192, 1).time_us;
    double h100 =
        predict("h100-sxm5-80gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 8192, 8192, 1).time_us;
    double h200 = predict("h200-sxm-141gb", TC_DTYPE_FP16, TC_LAYOUT_NT, 16, 8192, 8192, 1).time_us;
    double h100_mem =
        predict("h100-sxm5-80gb", TC_DTYPE_FP16, TC_LAYOUT_NT, 16, 8192, 8192, 1).time_us;

    ck_assert(a100 < v100 && h100 < a100);
    /* Same compute, 4.8 vs 3.35 TB/s: a memory-bound GEMM gains on H200. */
    ck_assert(h200 < 0.8 * h100_mem);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The paper's cliffs                                                       */
/* ------------------------------------------------------------------------ */

START_TEST(a100_alignment_cliffs)
{
    /* Vocabulary sweep as the cookbook ran it: 8192 x h x v, v the
     * reduction dimension. Paper: odd ~74, x2 ~138, x8 ~226, x64 ~256. */
    double v64 =
        predict("a100-sxm4-40gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 4096, 51200, 1).tflops;
    double v1 = predict("a100-sxm4-40gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 4096, 51201, 1).tflops;
    double v2 = predict("a100-sxm4-40gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 4096, 51202, 1).tflops;
    double v8 = predict("a100-sxm4-40gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 4096, 51208, 1).tflops;
    double k128, k2mod4, k8;
    struct tc_gemm_prediction odd;

    ck_assert_msg(v1 < 0.4 * v64, "odd %g vs x64 %g", v1, v64);
    ck_assert_msg(v2 > 1.5 * v1 && v2 < 0.7 * v64, "x2 %g", v2);
    ck_assert_msg(v8 > 0.8 * v64 && v8 < v64, "x8 %g", v8);
    ck_assert_msg(v64 > 230 && v64 < 280, "x64 %g TFLOP/s", v64);
    odd = predict("a100-sxm4-40gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 4096, 51201, 1);
    ck_assert_int_eq(odd.align, TC_ALIGN_ELEM);

    /* 27648 x 4096 x k: = 2 mod 4 ~127, x8 ~181-186, x128 ~202. */
    k128 = predict("a100-sxm4-40gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 27648, 4096, 256, 1).tflops;
    k2mod4 = predict("a100-sxm4-40gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 27648, 4096, 258, 1).tflops;
    k8 = predict("a100-sxm4-40gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 27648, 4096, 264, 1).tflops;
    ck_assert_msg(k2mod4 < 0.75 * k128, "2 mod 4: %g vs %g", k2mod4, k128);
    ck_assert_msg(k8 > k2mod4 && k8 <= k128 * 1.01, "x8: %g", k8);
}
END_TEST

START_TEST(attention_scores_bmm)
{
    /* Attention scores, batch b.a = 128 of s x s x (h/a) with s = 2048 on
     * A100: the paper measured ~90-95 TFLOP/s for odd h/a, ~150 at x2/x4 and
     * 200-215 at x8 and up. Writing C (k FLOP per byte) dominates, and the
     * posted stores overlap the next tile's main loop. */
    double odd = predict("a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 2048, 2048, 63, 128).tflops;
    double two = predict("a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 2048, 2048, 66, 128).tflops;
    double x8 = predict("a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 2048, 2048, 72, 128).tflops;
    double x128 =
        predict("a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 2048, 2048, 128, 128).tflops;

    ck_assert_msg(odd < 0.8 * two && two < 0.9 * x8 && x8 < x128, "scores bmm: %g %g %g %g", odd,
                  two, x8, x128);
    ck_assert_msg(x128 > 0.55 * 312.0, "scores bmm h/a = 128: %g TFLOP/s", x128);
}
END_TEST

START_TEST(mi250x_is_flat)
{
    double v64 = predict("mi250x", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 4096, 51200, 1).tflops;
    double v1 = predict("mi250x", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 4096, 51201, 1).tflops;
    double v2 = predict("mi250x", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 4096, 51202, 1).tflops;

    ck_assert_msg(v1 > 0.95 * v64 && v2 > 0.95 * v64, "MI250X: %g %g %g", v64, v2, v1);
    /* The paper's 27648 x 4096 x k sweep at small k: Tensile's tail loop
     * pays the K remainder at MFMA depth, so k = 66 or 68 costs about what
     * k = 64 does (a full extra DepthU step would cost a third more). */
    {
        double k64 = predict("mi250x", TC_DTYPE_FP16, TC_LAYOUT_NN, 27648, 4096, 64, 1).tflops;
        double k66 = predict("mi250x", TC_DTYPE_FP16, TC_LAYOUT_NN, 27648, 4096, 66, 1).tflops;
        double k68 = predict("mi250x", TC_DTYPE_FP16, TC_LAYOUT_NN, 27648, 4096, 68, 1).tflops;

        ck_assert_msg(k66 > 0.93 * k64 && k68 > 0.93 * k64, "MI250X small k: %g %g %g", k64, k66,
                      k68);
    }
}
END_TEST

/* CDNA waves hold their slots until their stores of C have drained (LLVM
 * sends the message that frees a wave's VGPRs before its stores complete on
 * GFX11 and later only), so a wave's C traffic is not hidden behind the next
 * wave's K loop: an MI250X GEMM with a large C and a short K takes at least
 * its MFMA time at peak plus C at the DRAM peak, where NVIDIA's posted
 * stores overlap the two. AMD's gfx90a tuning table puts 4096 x 4096 x 1024
 * at 0.84 of the efficiency of 4096 x 4096 x 4096 (73.6 and 87.8 %); the
 * model without the drain had 0.97. */
START_TEST(cdna_stores_drain_between_waves)
{
    const struct tc_gpu *mi = gpu("mi250x"), *a100 = gpu("a100-sxm4-80gb");
    double c_bytes = 8192.0 * 8192.0 * 2.0;
    double flops = 2.0 * 8192.0 * 8192.0 * 64.0;
    double floor_us =
        flops / (mi->peak_tflops[TC_DTYPE_FP16] * 1e6) + c_bytes / (mi->mem_bw_gbps * 1e3);
    double t = predict("mi250x", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 8192, 64, 1).time_us;
    double short_k, long_k, a_t, a_floor;

    ck_assert_msg(t >= floor_us, "MI250X 8192 x 8192 x 64: %g us, below MFMA + C drain %g us", t,
                  floor_us);
    short_k = predict("mi250x", TC_DTYPE_FP16, TC_LAYOUT_NN, 4096, 4096, 1024, 1).frac_peak;
    long_k = predict("mi250x", TC_DTYPE_FP16, TC_LAYOUT_NN, 4096, 4096, 4096, 1).frac_peak;
    ck_assert_msg(short_k / long_k <= 0.94 && short_k / long_k >= 0.80,
                  "MI250X K = 1024 / K = 4096 efficiency %g (rocBLAS tuning 0.84)",
                  short_k / long_k);
    /* NVIDIA: the stores overlap the next wave's main loop. */
    a_t = predict("a100-sxm4-80gb", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 8192, 256, 1).time_us;
    a_floor = 4.0 * flops / (a100->peak_tflops[TC_DTYPE_FP16] * 1e6) +
              c_bytes / (a100->mem_bw_gbps * 1e3);
    ck_assert_msg(a_t < a_floor, "A100 8192 x 8192 x 256: %g us, not below the serial %g us", a_t,
                  a_floor);
    /* CDNA3's stores land in its 256 MiB Infinity Cache, which the model
     * does not hold: no drain at HBM rate there (with it, 0.57). */
    short_k = predict("mi300x", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 8192, 256, 1).tflops;
    long_k = predict("mi300x", TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 8192, 8192, 1).tflops;
    ck_assert_msg(short_k / long_k >= 0.75, "MI300X K = 256 / K = 8192: %g", short_k / long_k);
}
END_TEST

START_TEST(hopper_unaligned_leaves_tma)
{
    struct tc_gemm_prediction al =
        predict("h100-sxm5-80gb", TC_DTYPE_BF16, TC_LAYOUT_NT, 8192, 10944, 4096, 1);
    struct tc_gemm_prediction un =
        predict("h100-sxm5-80gb", TC_DTYPE_BF16, TC_LAYOUT_NT, 8192, 10922, 4096, 1);

    /* d_ff 10922 vs 10944 (paper: 272.7 vs 398.4 TFLOP/s for the layer):
     * n = 10922 is C's leading dimension, = 2 mod 4 elements. */
    ck_assert_int_eq(un.align, TC_ALIGN_4B);
    ck_assert_msg(strstr(un.kernel, "sm80") != NULL, "kernel %s", un.kernel);
    ck_assert_msg(un.tflops < 0.75 * al.tflops, "%g vs %g", un.tflops, al.tflops);
    /* The down projection: k = 10922 is the row length of A and B. */
    un = predict("h100-sxm5-80gb", TC_DTYPE_BF16, TC_LAYOUT_NT, 8192, 4096, 10922, 1);
    ck_assert_int_eq(un.align, TC_ALIGN_4B);
    ck_assert_msg(strstr(un.kernel, "sm80") != NULL, "kernel %s", un.kernel);
    al = predict("h100-sxm5-80gb", TC_DTYPE_BF16, TC_LAYOUT_NT, 8192, 4096, 10944, 1);
    ck_assert_msg(un.tflops < 0.75 * al.tflops, "%g vs %g", un.tflops, al.tflops);
}
END_TEST

/* A dimension of the pruning test's spread: tiny (latency-bound, matrix-
 * vector), multiples of 64 and of 8 (the 128- and 16-byte classes in
 * 16-bit types) and anything up to 64 Ki. */
static int64_t spread_dim(uint64_t *x)
{
    uint64_t r;

    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    r = *x >> 33;
    switch (r % 4) {
    case 0:
        return 1 + (int64_t)(r / 4 % 64);
    case 1:
        return 64 * (1 + (int64_t)(r / 4 % 256));
    case 2:
        return 8 * (1 + (int64_t)(r / 4 % 2048));
    default:
        return 1 + (int64_t)(r / 4 % 65536);
    }
}

/* Every field the analytical model sets, compared exactly. */
static bool same_prediction(const struct tc_gemm_prediction *a, const struct tc_gemm_prediction *b)
{
    return a->time_us == b->time_us && a->tflops == b->tflops && a->frac_peak == b->frac_peak &&
           a->source == b->source && a->lo_us == b->lo_us && a->hi_us == b->hi_us &&
           a->interval_level == b->interval_level && strcmp(a->kernel, b->kernel) == 0 &&
           a->tile_m == b->tile_m && a->tile_n == b->tile_n && a->tile_k == b->tile_k &&
           a->stages == b->stages && a->warps == b->warps && a->split_k == b->split_k &&
           a->cluster_m == b->cluster_m && a->cluster_n == b->cluster_n &&
           a->stream_k == b->stream_k && a->tiles == b->tiles && a->waves == b->waves &&
           a->wave_eff == b->wave_eff && a->tile_eff == b->tile_eff &&
           a->blocks_per_sm == b->blocks_per_sm && a->occupancy == b->occupancy &&
           a->bound == b->bound && a->align == b->align && a->compute_us == b->compute_us &&
           a->memory_us == b->memory_us && a->overhead_us == b->overhead_us;
}

/* The search skips a split whose SM time plus launch is no less than the
 * pick's time (gemm.c, try_cand()): right only if that is a lower bound of
 * the split's time. Against the search that evaluates everything, over
 * every GPU and dtype of the specs, every layout, batched and not, and a
 * spread of shapes: no split takes less than its bound, and the pruned
 * search answers the same numbers and kernel. A model change that breaks the bound
 * (a part that can be negative, a term moved out of compute_us) fails
 * here, even where it would not change a pick. */
START_TEST(pruning_bound_holds)
{
    const struct tc_catalogue *cat;
    uint64_t x = 20;
    long checked = 0;

    ck_assert_int_eq(tc_catalogue_default(&cat), TC_OK);
    for (size_t g = 0; g < tc_specs_count(specs); g++) {
        const struct tc_gpu *gp = tc_specs_at(specs, g);

        for (int d = 0; d < TC_DTYPE_COUNT; d++) {
            if (gp->arch == TC_ARCH_CPU || !(gp->peak_tflops[d] > 0))
                continue;
            for (int i = 0; i < 400; i++) {
                struct tc_gemm_query q = {.dtype = (enum tc_dtype)d,
                                          .layout = (enum tc_layout)(i % TC_LAYOUT_COUNT)};
                struct tc_gemm_prediction pruned, all;
                long violations = -1;
                int e1, e2;

                q.m = spread_dim(&x);
                q.n = spread_dim(&x);
                q.k = spread_dim(&x);
                q.batch = i % 5 == 0 ? 1 + (int64_t)(x >> 40) % 32 : 1;
                e1 = tc_predict_gemm_with(cat, gp, &q, &pruned);
                e2 = tc_predict_gemm_exhaustive(cat, gp, &q, &all, &violations);
                ck_assert_int_eq(e1, e2);
                if (e1 < 0)
                    continue;
                ck_assert_msg(violations == 0,
                              "%s %s %lldx%lldx%lld batch %lld %s: %ld splits took less than "
                              "their SM time plus launch",
                              gp->id, tc_dtype_name(q.dtype), (long long)q.m, (long long)q.n,
                              (long long)q.k, (long long)q.batch, tc_layout_name(q.layout),
                              violations);
                ck_assert_msg(same_prediction(&pruned, &all),
                              "%s %s %lldx%lldx%lld batch %lld %s: pruned %s %.17g us, "
                              "exhaustive %s %.17g us",
                              gp->id, tc_dtype_name(q.dtype), (long long)q.m, (long long)q.n,
                              (long long)q.k, (long long)q.batch, tc_layout_name(q.layout),
                              pruned.kernel, pruned.time_us, all.kernel, all.time_us);
                checked++;
            }
        }
    }
    /* every GPU family and dtype the specs hold, not a handful */
    ck_assert_msg(checked > 20000, "only %ld shapes predicted", checked);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bad input                                                                */
/* ------------------------------------------------------------------------ */

static int try_predict(const char *id, enum tc_dtype dtype, int64_t m, int64_t n, int64_t k,
                       int64_t batch)
{
    struct tc_gemm_query q = {.m = m, .n = n, .k = k, .batch = batch, .dtype = dtype};
    struct tc_gemm_prediction pr;

    return tc_predict_gemm_analytical(gpu(id), &q, &pr);
}

START_TEST(bad_inputs)
{
    struct tc_gemm_query q = {.m = 64, .n = 64, .k = 64, .dtype = TC_DTYPE_FP16};
    struct tc_gemm_prediction pr;

    ck_assert_int_eq(try_predict("a100-sxm4-80gb", TC_DTYPE_FP16, 0, 64, 64, 1), TC_ERR_RANGE);
    ck_assert_error_has("m = 0");
    ck_assert_int_eq(try_predict("a100-sxm4-80gb", TC_DTYPE_FP16, 64, 64, -5, 1), TC_ERR_RANGE);
    ck_assert_error_has("k = -5");
    ck_assert_int_eq(try_predict("a100-sxm4-80gb", TC_DTYPE_FP16, 64, 64, 64, -2), TC_ERR_RANGE);
    ck_assert_error_has("batch = -2");
    ck_assert_int_eq(
        try_predict("a100-sxm4-80gb", TC_DTYPE_FP16, 1 << 21, 1 << 21, 1 << 21, 1 << 21),
        TC_ERR_RANGE);
    ck_assert_error_has("overflows");
    ck_assert_int_eq(try_predict("a100-sxm4-80gb", TC_DTYPE_FP16, INT64_MAX, 2, 1, 1),
                     TC_ERR_RANGE);
    ck_assert_int_eq(try_predict("v100-sxm2-32gb", TC_DTYPE_BF16, 64, 64, 64, 1),
                     TC_ERR_UNSUPPORTED);
    ck_assert_error_has("bf16");
    ck_assert_error_has("v100-sxm2-32gb");
    ck_assert_int_eq(try_predict("a100-sxm4-80gb", TC_DTYPE_FP8, 64, 64, 64, 1),
                     TC_ERR_UNSUPPORTED);
    ck_assert_error_has("fp8");
    ck_assert_int_eq(try_predict("a100-sxm4-80gb", TC_DTYPE_FP64, 64, 64, 64, 1),
                     TC_ERR_UNSUPPORTED);
    /* fp8 where the hardware has it; on sm89 and sm90 in the row-major NT
     * layout alone (cuBLASLt's TN), on sm100 in any */
    q.dtype = TC_DTYPE_FP8;
    q.m = q.n = q.k = 4096;
    for (int l = 0; l < TC_LAYOUT_COUNT; l++) {
        q.layout = (enum tc_layout)l;
        ck_assert_int_eq(tc_predict_gemm_analytical(gpu("b200"), &q, &pr), TC_OK);
        if (q.layout == TC_LAYOUT_NT) {
            ck_assert_int_eq(tc_predict_gemm_analytical(gpu("h100-sxm5-80gb"), &q, &pr), TC_OK);
            ck_assert_int_eq(tc_predict_gemm_analytical(gpu("l40s"), &q, &pr), TC_OK);
            continue;
        }
        ck_assert_int_eq(tc_predict_gemm_analytical(gpu("h100-sxm5-80gb"), &q, &pr),
                         TC_ERR_UNSUPPORTED);
        ck_assert_error_has("TN format");
        ck_assert_error_has("--layout NT");
        ck_assert_int_eq(tc_predict_gemm_analytical(gpu("l40s"), &q, &pr), TC_ERR_UNSUPPORTED);
    }
    q.dtype = TC_DTYPE_FP16;
    q.layout = TC_LAYOUT_NN;
    q.m = q.n = q.k = 64;

    q.lda = 32; /* NN: A is m x k, row length k = 64 */
    ck_assert_int_eq(tc_predict_gemm_analytical(gpu("a100-sxm4-80gb"), &q, &pr), TC_ERR_RANGE);
    ck_assert_error_has("lda = 32");
    q.lda = 0;
    q.dtype = (enum tc_dtype)99;
    ck_assert_int_eq(tc_predict_gemm_analytical(gpu("a100-sxm4-80gb"), &q, &pr), TC_ERR_INVALID);
    q.dtype = TC_DTYPE_FP16;
    q.layout = (enum tc_layout)7;
    ck_assert_int_eq(tc_predict_gemm_analytical(gpu("a100-sxm4-80gb"), &q, &pr), TC_ERR_INVALID);
    ck_assert_int_eq(tc_predict_gemm_analytical(NULL, &q, &pr), TC_ERR_INVALID);
    ck_assert_int_eq(tc_predict_gemm_analytical(gpu("a100-sxm4-80gb"), NULL, &pr), TC_ERR_INVALID);
    /* batch 0 is taken as 1 */
    ck_assert_int_eq(try_predict("a100-sxm4-80gb", TC_DTYPE_FP16, 64, 64, 64, 0), TC_OK);
}
END_TEST

/* Values no file may carry (common/bounds.h): numbers are decimal, a GPU
 * outside the physical ranges fails its check, and a prediction that is
 * not a finite positive time is an error, never an answer. */
START_TEST(absurd_values_refused)
{
    static const char *const not_decimal[] = {"0x258",    "0X1p9", "inf", "-inf", "nan",
                                              "infinity", "1e",    "e5",  ".",    "1.5x",
                                              "1e999",    "+",     "0x"};
    struct tc_gpu g = *gpu("a100-sxm4-80gb");
    struct tc_gemm_query q = {.m = 4096, .n = 4096, .k = 4096, .dtype = TC_DTYPE_FP16};
    struct tc_gemm_prediction pr;
    struct tc_predictor *p;
    double v;

    ck_assert_int_eq(tc_parse_double("600", &v), TC_OK);
    ck_assert_double_eq(v, 600);
    ck_assert_int_eq(tc_parse_double(" -1.5e3 ", &v), TC_OK);
    ck_assert_double_eq(v, -1500);
    ck_assert_int_eq(tc_parse_double(".5", &v), TC_OK);
    ck_assert_int_eq(tc_parse_double("5.", &v), TC_OK);
    for (size_t i = 0; i < sizeof(not_decimal) / sizeof(not_decimal[0]); i++)
        ck_assert_msg(tc_parse_double(not_decimal[i], &v) < 0, "'%s' was accepted as %g",
                      not_decimal[i], v);

    ck_assert_int_eq(tc_gpu_check(&g), TC_OK);
    g.mem_bw_gbps = 5e-324; /* the memory time overflows to infinity */
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("mem_bw_gbps");
    /* built through the API, unchecked: the prediction refuses to answer */
    p = tc_predictor_new(specs);
    ck_assert_ptr_nonnull(p);
    tc_predictor_set_analytical(p, true);
    ck_assert_int_eq(tc_predict_gemm(p, &g, &q, &pr), TC_ERR_RANGE);
    ck_assert_error_has("not a finite positive time");
    g = *gpu("a100-sxm4-80gb");
    g.peak_tflops[TC_DTYPE_FP16] = 1e305;
    g.flops_per_clk_per_unit[TC_DTYPE_FP16] = 1e305;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("peak_tflops.fp16");
    tc_predictor_free(p);
}
END_TEST

/* A spec changed in place (same address) must not be served from the
 * candidate cache. */
START_TEST(cache_sees_changed_spec)
{
    struct tc_gpu g = *gpu("a100-sxm4-80gb");
    struct tc_gemm_query q = {.m = 8192, .n = 8192, .k = 8192, .dtype = TC_DTYPE_FP16};
    struct tc_gemm_prediction a, b;

    ck_assert_int_eq(tc_predict_gemm_analytical(&g, &q, &a), TC_OK);
    g.peak_tflops[TC_DTYPE_FP16] *= 2;
    ck_assert_int_eq(tc_predict_gemm_analytical(&g, &q, &b), TC_OK);
    ck_assert_msg(b.time_us < 0.8 * a.time_us, "%g vs %g", b.time_us, a.time_us);
}
END_TEST

struct thread_job {
    const struct tc_gpu *gpu;
    double sum;
    int errors;
};

static void *thread_main(void *arg)
{
    struct thread_job *job = arg;

    for (int64_t i = 1; i <= 2000; i++) {
        struct tc_gemm_query q = {
            .m = i * 3, .n = 4096 + (i % 7), .k = 1024 + 64 * (i % 50), .dtype = TC_DTYPE_FP16};
        struct tc_gemm_prediction pr;

        if (tc_predict_gemm_analytical(job->gpu, &q, &pr) != TC_OK)
            job->errors++;
        else
            job->sum += pr.time_us;
    }
    return NULL;
}

START_TEST(thread_safe)
{
    struct thread_job single = {gpu("h100-sxm5-80gb"), 0, 0}, jobs[4];
    pthread_t th[4];

    thread_main(&single);
    for (int t = 0; t < 4; t++) {
        jobs[t] = (struct thread_job){gpu("h100-sxm5-80gb"), 0, 0};
        ck_assert_int_eq(pthread_create(&th[t], NULL, thread_main, &jobs[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        ck_assert_int_eq(jobs[t].errors, 0);
        ck_assert_double_eq_tol(jobs[t].sum, single.sum, 1e-6 * single.sum);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Accuracy regression on a fixed subset of the measured data               */
/* ------------------------------------------------------------------------ */

struct acc {
    double ape_sum;
    int n;
    double *meas, *pred; /* TFLOP/s */
    int cap;
};

static void acc_add(struct acc *a, double meas_us, double pred_us, double flops)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 256;
        a->meas = realloc(a->meas, (size_t)a->cap * sizeof(double));
        a->pred = realloc(a->pred, (size_t)a->cap * sizeof(double));
        ck_assert(a->meas && a->pred);
    }
    a->ape_sum += fabs(pred_us - meas_us) / meas_us * 100.0;
    a->meas[a->n] = flops / meas_us;
    a->pred[a->n] = flops / pred_us;
    a->n++;
}

static const double *cmp_vals; /* qsort has no context argument */

static int cmp_idx(const void *x, const void *y)
{
    double a = cmp_vals[*(const int *)x], b = cmp_vals[*(const int *)y];

    return a < b ? -1 : a > b;
}

static void rank_of(const double *v, int n, double *r)
{
    int *idx = malloc((size_t)n * sizeof(int));

    ck_assert(idx);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    cmp_vals = v;
    qsort(idx, (size_t)n, sizeof(int), cmp_idx);
    for (int i = 0; i < n;) {
        int j = i;

        while (j + 1 < n && v[idx[j + 1]] == v[idx[i]])
            j++;
        for (int t = i; t <= j; t++)
            r[idx[t]] = 0.5 * (i + j) + 1;
        i = j + 1;
    }
    free(idx);
}

static double spearman_of(const struct acc *a)
{
    double *rx = malloc((size_t)a->n * sizeof(double)), *ry = malloc((size_t)a->n * sizeof(double));
    double mx = (a->n + 1) / 2.0, sxy = 0, sxx = 0, syy = 0;

    ck_assert(rx && ry);
    rank_of(a->meas, a->n, rx);
    rank_of(a->pred, a->n, ry);
    for (int i = 0; i < a->n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - mx);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - mx) * (ry[i] - mx);
    }
    free(rx);
    free(ry);
    return sxy / sqrt(sxx * syy);
}

/* Every `stride`-th row of a measured file whose time is at least 20 us,
 * for rows of gpu_id; host time per timing method as `tilecast eval`. */
static struct acc accuracy_of(const char *file, const char *gpu_id, const char *sweep, int stride,
                              double host_us, double floor_us, enum tc_dtype dtype)
{
    const char *dir = getenv("TILECAST_MEASURED_DATA");
    char path[4096];
    FILE *f;
    struct tc_csv *csv;
    char **fields;
    int nf, r, cg, cm, cn, ck, cb, cl, ct, cs;
    long row = 0;
    struct acc a = {0};

    ck_assert_msg(dir && *dir, "TILECAST_MEASURED_DATA is not set (run through meson test)");
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    csv = tc_csv_new(f, path);
    ck_assert_int_eq(tc_csv_next(csv, &nf, &fields), 1);
    cg = tc_csv_find(nf, fields, "gpu");
    cm = tc_csv_find(nf, fields, "m");
    cn = tc_csv_find(nf, fields, "n");
    ck = tc_csv_find(nf, fields, "k");
    cb = tc_csv_find(nf, fields, "batch");
    cl = tc_csv_find(nf, fields, "layout");
    ct = tc_csv_find(nf, fields, "time_us");
    cs = tc_csv_find(nf, fields, "sweep");
    ck_assert(cg >= 0 && cm >= 0 && cn >= 0 && ck >= 0 && cb >= 0 && cl >= 0 && ct >= 0);
    while ((r = tc_csv_next(csv, &nf, &fields)) > 0) {
        struct tc_gemm_query q = {.dtype = dtype};
        struct tc_gemm_prediction pr;
        long long v;
        double t, pred_us;

        if (strcmp(fields[cg], gpu_id) != 0 || (sweep && cs >= 0 && strcmp(fields[cs], sweep) != 0))
            continue;
        if (row++ % stride)
            continue;
        ck_assert_int_eq(tc_parse_double(fields[ct], &t), TC_OK);
        if (t < 20.0)
            continue;
        ck_assert_int_eq(tc_parse_i64(fields[cm], &v), TC_OK);
        q.m = v;
        ck_assert_int_eq(tc_parse_i64(fields[cn], &v), TC_OK);
        q.n = v;
        ck_assert_int_eq(tc_parse_i64(fields[ck], &v), TC_OK);
        q.k = v;
        ck_assert_int_eq(tc_parse_i64(fields[cb], &v), TC_OK);
        q.batch = v;
        ck_assert_int_eq(tc_layout_parse(fields[cl], &q.layout), TC_OK);
        ck_assert_int_eq(tc_predict_gemm_analytical(gpu(gpu_id), &q, &pr), TC_OK);
        pred_us = pr.time_us + host_us;
        if (pred_us < floor_us)
            pred_us = floor_us;
        acc_add(&a, t, pred_us, 2.0 * (double)q.m * q.n * q.k * q.batch);
    }
    ck_assert_int_eq(r, 0);
    tc_csv_free(csv);
    fclose(f);
    return a;
}

static void check_accuracy(const char *file, const char *gpu_id, const char *sweep, int stride,
                           double host_us, double floor_us, enum tc_dtype dtype, int min_rows,
                           double max_mape, double min_rho)
{
    struct acc a = accuracy_of(file, gpu_id, sweep, stride, host_us, floor_us, dtype);
    double mape, rho;

    ck_assert_int_ge(a.n, min_rows);
    mape = a.ape_sum / a.n;
    rho = spearman_of(&a);
    fprintf(stderr, "accuracy %s %s%s%s: %d rows, MAPE %.2f%%, Spearman %.3f\n", file, gpu_id,
            sweep ? " " : "", sweep ? sweep : "", a.n, mape, rho);
    ck_assert_msg(mape <= max_mape, "%s %s: MAPE %.2f%% above %.2f%%", file, gpu_id, mape,
                  max_mape);
    ck_assert_msg(rho >= min_rho, "%s %s: Spearman %.3f below %.3f", file, gpu_id, rho, min_rho);
    free(a.meas);
    free(a.pred);
}

START_TEST(accuracy_vidur)
{
    /* Every 5th row (kernel time, profiler): thresholds a little looser
     * than measured when they were set. */
    check_accuracy("vidur_gemm.csv", "a100-sxm4-80gb", NULL, 5, 0.0, 0.0, TC_DTYPE_FP16, 1500, 8.5,
                   0.72);
    check_accuracy("vidur_gemm.csv", "h100-sxm5-80gb", NULL, 5, 0.0, 0.0, TC_DTYPE_FP16, 1400, 10.5,
                   0.82);
}
END_TEST

START_TEST(accuracy_cookbook_bsweep)
{
    /* wall-slowest: 28 us of host time per call (as tilecast eval). */
    check_accuracy("cookbook_gemm.csv", "mi250x", "bsweep", 1, 28.0, 0.0, TC_DTYPE_FP16, 28, 6.0,
                   0.90);
    check_accuracy("cookbook_gemm.csv", "a100-sxm4-40gb", "bsweep", 1, 28.0, 0.0, TC_DTYPE_FP16, 28,
                   9.5, 0.25);
    /* V100 strided-batched runs at its own rate (4.3% measured; its TFLOP/s
     * are flat at b >= 2, so the ranking is mostly noise). */
    check_accuracy("cookbook_gemm.csv", "v100-sxm2-32gb", "bsweep", 1, 28.0, 0.0, TC_DTYPE_FP16, 24,
                   6.0, 0.45);
}
END_TEST

/* Every cookbook row of a GPU, both sweeps (m_sweep: wall-avg-incl-launch,
 * bsweep: wall-slowest, 28 us of host time each, as tilecast eval): the
 * issue's target of 10% on every GPU and dtype. Measured 9.71 (A100-40GB),
 * 8.35 (MI250X), 9.02 (V100); Spearman 0.63 / 0.94 / 0.85. */
START_TEST(accuracy_cookbook_all)
{
    check_accuracy("cookbook_gemm.csv", "a100-sxm4-40gb", NULL, 1, 28.0, 0.0, TC_DTYPE_FP16, 37,
                   10.0, 0.60);
    check_accuracy("cookbook_gemm.csv", "mi250x", NULL, 1, 28.0, 0.0, TC_DTYPE_FP16, 37, 10.0,
                   0.90);
    check_accuracy("cookbook_gemm.csv", "v100-sxm2-32gb", NULL, 1, 28.0, 0.0, TC_DTYPE_FP16, 33,
                   10.0, 0.80);
}
END_TEST

START_TEST(accuracy_neusight_fp32)
{
    /* fp32 SIMT, CUDA events around a PyTorch op: +28 us of host dispatch,
     * at least 28 us (as tilecast eval). Every 10th row; the same sweep on
     * the V100 (another host, another family). */
    check_accuracy("neusight_gemm.csv", "a100-pcie-40gb", NULL, 10, 28.0, 28.0, TC_DTYPE_FP32, 2000,
                   15.5, 0.94);
    check_accuracy("neusight_gemm_v100.csv", "v100-pcie-32gb", NULL, 10, 28.0, 28.0, TC_DTYPE_FP32,
                   2000, 13.5, 0.94);
}
END_TEST

Suite *gemm_suite(void);

Suite *gemm_suite(void)
{
    Suite *s = suite_create("gemm");
    TCase *tc;

    suite_add_tcase(s, gemm_catalogue_tcase());

    tc = tcase_create("arithmetic");
    tcase_add_checked_fixture(tc, specs_setup, specs_teardown);
    tcase_add_test(tc, occupancy_hand_computed);
    tcase_add_test(tc, occupancy_amd_vgpr_granules);
    tcase_add_test(tc, tiles_and_waves_arithmetic);
    tcase_add_test(tc, alignment_classes);
    suite_add_tcase(s, tc);

    tc = tcase_create("properties");
    tcase_add_checked_fixture(tc, specs_setup, specs_teardown);
    tcase_add_test(tc, time_grows_with_k);
    tcase_add_test(tc, never_above_peak);
    tcase_add_test(tc, tile_choice_follows_shape);
    tcase_add_test(tc, sgemm_tiles_as_cublas_runs_them);
    tcase_add_test(tc, hopper_fp32_published_rate);
    tcase_add_test(tc, a100_pcie_ffma_power_limit);
    tcase_add_test(tc, a100_pcie_ffma_padding_power);
    tcase_add_test(tc, newer_gpus_are_faster);
    tcase_add_test(tc, a100_alignment_cliffs);
    tcase_add_test(tc, mi250x_is_flat);
    tcase_add_test(tc, cdna_stores_drain_between_waves);
    tcase_add_test(tc, attention_scores_bmm);
    tcase_add_test(tc, hopper_unaligned_leaves_tma);
    tcase_add_test(tc, pruning_bound_holds);
    tcase_add_test(tc, bad_inputs);
    tcase_add_test(tc, absurd_values_refused);
    tcase_add_test(tc, cache_sees_changed_spec);
    tcase_add_test(tc, thread_safe);
    suite_add_tcase(s, tc);

    tc = tcase_create("accuracy");
    tcase_add_checked_fixture(tc, specs_setup, specs_teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, accuracy_vidur);
    tcase_add_test(tc, accuracy_cookbook_bsweep);
    tcase_add_test(tc, accuracy_cookbook_all);
    tcase_add_test(tc, accuracy_neusight_fp32);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gemm_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
