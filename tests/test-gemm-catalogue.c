/* The kernel catalogue of the gemm suite: every family loads, the shared
 * memory formula, errors naming file:line:column, families covered twice,
 * and the orientation of the tiles named by a column-major library. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "gemm-internal.h"
#include "tc-internal.h"
#include "test-gemm.h"
#include "test-util.h"
#include "tilecast/tilecast.h"

START_TEST(catalogue_loads_every_family)
{
    struct tc_catalogue *cat = NULL;
    const struct tc_kernel *const *ks;
    int err = tc_catalogue_load_dir(src_path("gpu_specs/kernels"), &cat);

    ck_assert_msg(err == TC_OK, "%s", tc_last_error());
    ck_assert_uint_ge(tc_catalogue_count(cat), 40);
    /* every GPU family (the host CPU, last, has none) */
    for (int a = 0; a < TC_ARCH_CPU; a++) {
        ck_assert_msg(tc_catalogue_kernels(cat, (enum tc_arch)a, TC_DTYPE_FP16, &ks) > 0,
                      "no fp16 kernel for %s", tc_arch_name((enum tc_arch)a));
        ck_assert_msg(tc_catalogue_kernels(cat, (enum tc_arch)a, TC_DTYPE_FP32, &ks) > 0,
                      "no fp32 kernel for %s", tc_arch_name((enum tc_arch)a));
    }
    ck_assert_uint_gt(tc_catalogue_kernels(cat, TC_ARCH_HOPPER, TC_DTYPE_FP8, &ks), 0);
    ck_assert_uint_gt(tc_catalogue_kernels(cat, TC_ARCH_AMPERE, TC_DTYPE_TF32, &ks), 0);
    ck_assert_uint_eq(tc_catalogue_kernels(cat, TC_ARCH_VOLTA, TC_DTYPE_BF16, &ks), 0);
    /* Every entry is self-consistent and fits at least one shipped family's
     * limits: names, sources, geometry. */
    for (size_t i = 0; i < tc_catalogue_count(cat); i++) {
        const struct tc_kernel *k = tc_catalogue_at(cat, i);

        ck_assert_msg(k->name[0] && k->source[0], "kernel %zu lacks a name or source", i);
        ck_assert_int_eq(k->tile_m % k->warp_m, 0);
        ck_assert_int_eq(k->tile_n % k->warp_n, 0);
        ck_assert_int_gt(k->dtype_mask, 0);
        ck_assert_int_gt(k->arch_mask, 0);
    }
    tc_catalogue_free(cat);
    tc_catalogue_free(NULL);
}
END_TEST

START_TEST(catalogue_smem_formula)
{
    struct tc_catalogue *cat = NULL;
    const struct tc_kernel *const *ks;
    size_t n;
    bool found = false;

    ck_assert_int_eq(tc_catalogue_load_dir(src_path("gpu_specs/kernels"), &cat), TC_OK);
    n = tc_catalogue_kernels(cat, TC_ARCH_AMPERE, TC_DTYPE_FP16, &ks);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(ks[i]->name, "ampere_h16816gemm_256x128_64x3") == 0) {
            /* 3 stages x (256 + 128) x 64 x 2 bytes */
            ck_assert_int_eq(tc_kernel_smem_bytes(ks[i], TC_DTYPE_FP16), 147456);
            found = true;
        }
    }
    ck_assert(found);
    /* A measured value in the file wins over the formula. */
    n = tc_catalogue_kernels(cat, TC_ARCH_AMPERE, TC_DTYPE_TF32, &ks);
    ck_assert_uint_gt(n, 0);
    for (size_t i = 0; i < n; i++)
        if (strcmp(ks[i]->name, "cutlass_80_tensorop_s1688gemm_64x64_16x6") == 0)
            ck_assert_int_eq(tc_kernel_smem_bytes(ks[i], TC_DTYPE_TF32), 49152);
    tc_catalogue_free(cat);
}
END_TEST

static void expect_file_error(const char *rel, const char *where, const char *what)
{
    struct tc_catalogue *cat = tc_catalogue_new();
    int err = tc_catalogue_load_file(cat, src_path(rel));

    ck_assert_msg(err == TC_ERR_PARSE, "%s: expected a parse error, got %d", rel, err);
    ck_assert_error_has(where);
    ck_assert_error_has(what);
    ck_assert_uint_eq(tc_catalogue_count(cat), 0);
    tc_catalogue_free(cat);
}

START_TEST(catalogue_errors_name_file_line_column)
{
    expect_file_error("tests/data/gemm/bad-field.yaml",
                      "bad-field.yaml:7:5:", "unknown field 'colour'");
    expect_file_error("tests/data/gemm/bad-tile.yaml",
                      "bad-tile.yaml:6:11:", "expected 3 integers, got 2");
    expect_file_error("tests/data/gemm/missing-field.yaml",
                      "missing-field.yaml:4:5:", "missing field 'regs_per_thread'");
    expect_file_error("tests/data/gemm/bad-dtype.yaml", "bad-dtype.yaml:5:20:", "'fp12'");
    expect_file_error("tests/data/gemm/bad-syntax.yaml", "bad-syntax.yaml:3:", "");
}
END_TEST

START_TEST(catalogue_duplicate_family_across_files)
{
    struct tc_catalogue *cat = NULL;
    int err = tc_catalogue_load_dir(src_path("tests/data/gemm/dup"), &cat);

    ck_assert_int_eq(err, TC_ERR_PARSE);
    ck_assert_ptr_null(cat);
    ck_assert_error_has("b.yaml:2:25:");
    ck_assert_error_has("'ampere' is already covered");

    err = tc_catalogue_load_dir(src_path("tests/data/gemm/no-such-dir"), &cat);
    ck_assert_int_eq(err, TC_ERR_IO);
    ck_assert_error_has("no-such-dir");
}
END_TEST

/* Tensile is column-major: a row-major C = A B runs as C^T = B^T A^T, and a
 * solution MT{MT0}x{MT1}xD tiles C's contiguous index I (Tensile's M, the
 * model's n) by MT0, so its row-major tile is [MT1, MT0, D] (gfx90a
 * kernels' assembly: .set MT0 / MT1, SizeI = SizesFree+0, constStrideC0I
 * 1), on CDNA2 and CDNA3 alike. The one exception, CDNA2's MT64x16x64, is
 * explained in cdna2.yaml. */
START_TEST(catalogue_tensile_tiles_row_major)
{
    struct tc_catalogue *cat = NULL;
    int checked = 0, asymmetric = 0;

    ck_assert_int_eq(tc_catalogue_load_dir(src_path("gpu_specs/kernels"), &cat), TC_OK);
    for (size_t i = 0; i < tc_catalogue_count(cat); i++) {
        const struct tc_kernel *k = tc_catalogue_at(cat, i);
        const char *mt = strstr(k->name, "_MT");
        int mt0, mt1, depth;

        if (!(k->arch_mask & (1u << TC_ARCH_CDNA2 | 1u << TC_ARCH_CDNA3)) || !mt ||
            sscanf(mt, "_MT%dx%dx%d", &mt0, &mt1, &depth) != 3)
            continue;
        if (strstr(k->name, "_MT64x16x64_"))
            continue;
        ck_assert_msg(k->tile_m == mt1 && k->tile_n == mt0 && k->tile_k == depth,
                      "%s: tile [%d, %d, %d], expected [%d, %d, %d]", k->name, k->tile_m, k->tile_n,
                      k->tile_k, mt1, mt0, depth);
        checked++;
        asymmetric += mt0 != mt1;
    }
    ck_assert_int_ge(checked, 17);
    ck_assert_int_ge(asymmetric, 7);
    tc_catalogue_free(cat);
}
END_TEST

TCase *gemm_catalogue_tcase(void)
{
    TCase *tc = tcase_create("catalogue");

    tcase_add_test(tc, catalogue_loads_every_family);
    tcase_add_test(tc, catalogue_smem_formula);
    tcase_add_test(tc, catalogue_errors_name_file_line_column);
    tcase_add_test(tc, catalogue_duplicate_family_across_files);
    tcase_add_test(tc, catalogue_tensile_tiles_row_major);
    return tc;
}
