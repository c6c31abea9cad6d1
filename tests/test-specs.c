/* GPU specs: the shipped files, the loader's errors on bad files, the
 * search path, and tc_gpu_check. Fixtures live in tests/data/specs/. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-util.h"
#include "tilecast/tilecast.h"

static const char *const shipped_ids[] = {
    "a100-pcie-40gb",
    "a100-pcie-80gb",
    "a100-sxm4-40gb",
    "a100-sxm4-80gb",
    "b200",
    "gb200",
    "gb300",
    "h100-pcie-80gb",
    "h100-sxm5-80gb",
    "h200-sxm-141gb",
    "l4",
    "l40s",
    "mi100",
    "mi210",
    "mi250",
    "mi250x",
    "mi300x",
    "p100-pcie-16gb",
    "p4",
    "t4",
    "v100-pcie-32gb",
    "v100-sxm2-32gb",
};
#define N_SHIPPED (sizeof(shipped_ids) / sizeof(shipped_ids[0]))

static struct tc_specs *load_shipped(void)
{
    struct tc_specs *specs;

    ck_assert_msg(tc_specs_load(src_path("gpu_specs"), &specs) == TC_OK,
                  "loading gpu_specs failed: %s", tc_last_error());
    return specs;
}

/* ------------------------------------------------------------------------ */

START_TEST(shipped_all_load_and_check)
{
    struct tc_specs *specs = load_shipped();

    /* gpu_specs/kernels/ is a subdirectory and must not count. */
    ck_assert_uint_eq(tc_specs_count(specs), N_SHIPPED);
    for (size_t i = 0; i < N_SHIPPED; i++) {
        const struct tc_gpu *g = tc_specs_at(specs, i);

        ck_assert_ptr_nonnull(g);
        /* Sorted by id, and exactly the ids the project ships. */
        ck_assert_str_eq(g->id, shipped_ids[i]);
        ck_assert_msg(tc_gpu_check(g) == TC_OK, "%s: %s", g->id, tc_last_error());
        ck_assert_msg(g->sources[0] != '\0', "%s cites no source", g->id);
        ck_assert_ptr_eq(tc_specs_find(specs, g->id), g);
    }
    tc_specs_free(specs);
}
END_TEST

START_TEST(shipped_each_file_parses)
{
    for (size_t i = 0; i < N_SHIPPED; i++) {
        char rel[256];
        struct tc_gpu g;

        snprintf(rel, sizeof(rel), "gpu_specs/%s.yaml", shipped_ids[i]);
        ck_assert_msg(tc_specs_parse_file(src_path(rel), &g) == TC_OK, "%s", tc_last_error());
        ck_assert_str_eq(g.id, shipped_ids[i]);
        ck_assert_msg(tc_gpu_check(&g) == TC_OK, "%s", tc_last_error());
        /* Every peak has its per-clock rate, and every GPU has fp32. */
        ck_assert(g.peak_tflops[TC_DTYPE_FP32] > 0);
        for (int d = 0; d < TC_DTYPE_COUNT; d++)
            ck_assert((g.peak_tflops[d] > 0) == (g.flops_per_clk_per_unit[d] > 0));
    }
}
END_TEST

START_TEST(shipped_spot_values)
{
    struct tc_specs *specs = load_shipped();
    const struct tc_gpu *a100 = tc_specs_find(specs, "a100-sxm4-80gb");
    const struct tc_gpu *h100 = tc_specs_find(specs, "h100-sxm5-80gb");
    const struct tc_gpu *h100p = tc_specs_find(specs, "h100-pcie-80gb");
    const struct tc_gpu *mi250x = tc_specs_find(specs, "mi250x");
    const struct tc_gpu *mi300x = tc_specs_find(specs, "mi300x");
    const struct tc_gpu *v100 = tc_specs_find(specs, "v100-sxm2-32gb");
    const struct tc_gpu *l40s = tc_specs_find(specs, "l40s");
    const struct tc_gpu *a100p40 = tc_specs_find(specs, "a100-pcie-40gb");

    /* the 250 W card's full-load FFMA clock; the SXM card holds its boost */
    ck_assert_ptr_nonnull(a100p40);
    ck_assert_double_eq(a100p40->clock_vector_sustained_mhz, 1310);
    ck_assert_double_eq(tc_specs_find(specs, "a100-sxm4-80gb")->clock_vector_sustained_mhz, 0);
    /* the 70 W T4 under a GEMM loop: about half its boost clock */
    ck_assert_double_eq(tc_specs_find(specs, "t4")->clock_vector_sustained_mhz, 830);

    ck_assert_ptr_nonnull(a100);
    ck_assert_double_eq(a100->peak_tflops[TC_DTYPE_FP16], 312);
    ck_assert_double_eq(a100->peak_tflops[TC_DTYPE_BF16], 312);
    ck_assert_double_eq(a100->peak_tflops[TC_DTYPE_TF32], 156);
    ck_assert_double_eq(a100->peak_tflops[TC_DTYPE_FP32], 19.5);
    ck_assert_double_eq(a100->peak_tflops[TC_DTYPE_FP8], 0); /* no fp8 on Ampere */
    ck_assert_int_eq(a100->units, 108);
    ck_assert_double_eq(a100->mem_bw_gbps, 2039);
    ck_assert_int_eq(a100->l2_bytes, 40L * 1024 * 1024);
    ck_assert_int_eq(a100->vendor, TC_VENDOR_NVIDIA);
    ck_assert_int_eq(a100->arch, TC_ARCH_AMPERE);
    ck_assert_str_eq(a100->compute_capability, "sm_80");
    ck_assert_int_eq(a100->smem_per_sm_bytes, 164L * 1024);
    ck_assert_int_eq(a100->reserved_smem_per_block_bytes, 1024);

    ck_assert_ptr_nonnull(h100);
    ck_assert_double_eq(h100->clock_tensor_mhz, 1830);
    ck_assert_double_eq(h100->clock_vector_mhz, 1980);
    ck_assert_double_eq(h100->peak_tflops[TC_DTYPE_FP16], 989.4);
    ck_assert_double_eq(h100->peak_tflops[TC_DTYPE_FP8], 1978.9);
    ck_assert_double_eq(h100->flops_per_clk_per_unit[TC_DTYPE_FP16], 4096);
    ck_assert_int_eq(h100->units, 132);
    ck_assert_int_eq(h100->arch, TC_ARCH_HOPPER);
    ck_assert_int_eq(h100->smem_per_block_max_bytes, 227L * 1024);
    ck_assert_ptr_nonnull(h100p);
    ck_assert_double_eq(h100p->clock_tensor_mhz, 1620);
    ck_assert_double_eq(h100p->clock_vector_mhz, 1755);
    ck_assert_int_eq(h100p->units, 114);

    ck_assert_ptr_nonnull(mi250x);
    ck_assert_int_eq(mi250x->units, 110); /* one GCD */
    ck_assert_int_eq(mi250x->vendor, TC_VENDOR_AMD);
    ck_assert_int_eq(mi250x->arch, TC_ARCH_CDNA2);
    ck_assert_int_eq(mi250x->warp_size, 64);
    ck_assert_double_eq(mi250x->peak_tflops[TC_DTYPE_FP16], 191.5);
    ck_assert_double_eq(mi250x->mem_gb, 64);
    ck_assert_double_eq(mi250x->mem_bw_gbps, 1638.4);
    ck_assert_int_eq(mi250x->l2_bytes, 8L * 1024 * 1024);
    ck_assert_double_eq(mi250x->peak_tflops[TC_DTYPE_TF32], 0);

    /* the families added after cpu: Pascal without tensor cores (the P4
     * without fp16 at all), CDNA1 with bf16 at half the fp16 rate */
    {
        const struct tc_gpu *p100 = tc_specs_find(specs, "p100-pcie-16gb");
        const struct tc_gpu *p4 = tc_specs_find(specs, "p4");
        const struct tc_gpu *mi100 = tc_specs_find(specs, "mi100");

        ck_assert_ptr_nonnull(p100);
        ck_assert_int_eq(p100->arch, TC_ARCH_PASCAL);
        ck_assert_double_eq(p100->peak_tflops[TC_DTYPE_FP16], 18.7);
        ck_assert_ptr_nonnull(p4);
        ck_assert_int_eq(p4->arch, TC_ARCH_PASCAL);
        ck_assert_double_eq(p4->peak_tflops[TC_DTYPE_FP16], 0);
        ck_assert_ptr_nonnull(mi100);
        ck_assert_int_eq(mi100->arch, TC_ARCH_CDNA1);
        ck_assert_int_eq(mi100->vendor, TC_VENDOR_AMD);
        ck_assert_double_eq(mi100->peak_tflops[TC_DTYPE_BF16],
                            mi100->peak_tflops[TC_DTYPE_FP16] / 2);
        ck_assert_str_eq(tc_arch_name(TC_ARCH_PASCAL), "pascal");
        ck_assert_str_eq(tc_arch_name(TC_ARCH_CDNA1), "cdna1");
    }

    ck_assert_ptr_nonnull(mi300x);
    ck_assert_int_eq(mi300x->units, 304);
    ck_assert_double_eq(mi300x->peak_tflops[TC_DTYPE_FP8], 2614.9);
    ck_assert_int_eq(mi300x->arch, TC_ARCH_CDNA3);

    ck_assert_ptr_nonnull(v100);
    ck_assert_double_eq(v100->peak_tflops[TC_DTYPE_FP16], 125);
    ck_assert_double_eq(v100->peak_tflops[TC_DTYPE_BF16], 0);
    ck_assert_double_eq(v100->peak_tflops[TC_DTYPE_TF32], 0);
    ck_assert_int_eq(v100->smem_alloc_unit_bytes, 256);
    ck_assert_int_eq(v100->reserved_smem_per_block_bytes, 0);

    ck_assert_ptr_nonnull(l40s);
    ck_assert_int_eq(l40s->max_threads_per_sm, 1536);
    ck_assert_int_eq(l40s->max_blocks_per_sm, 24);
    ck_assert_ptr_nonnull(a100p40);
    ck_assert_double_eq(a100p40->mem_bw_gbps, 1555);
    ck_assert_double_eq(a100p40->tdp_w, 250);

    /* Uncertain numbers are flagged where the reference lists conflicts. */
    ck_assert_ptr_nonnull(strstr(h100->flags, "3350"));
    ck_assert_ptr_nonnull(strstr(tc_specs_find(specs, "b200")->flags, "148 SMs"));
    tc_specs_free(specs);
}
END_TEST

/* ------------------------------------------------------------------------ */

struct bad_case {
    const char *file;  /* under tests/data/specs/bad/ */
    int err;           /* from tc_specs_parse_file */
    const char *where; /* "file:line:col" */
    const char *field;
    const char *text;
};

static const struct bad_case bad_cases[] = {
    {"unknown-field.yaml", TC_ERR_PARSE, "unknown-field.yaml:10:1", "boost_mhz", "unknown field"},
    {"wrong-type.yaml", TC_ERR_PARSE, "wrong-type.yaml:7:8", "units", "expected an integer"},
    {"negative.yaml", TC_ERR_RANGE, "negative.yaml:25:14", "mem_bw_gbps", "must be positive"},
    {"negative-limit.yaml", TC_ERR_RANGE, "negative-limit.yaml:37:24", "limits.max_regs_per_thread",
     "must be positive"},
    {"missing.yaml", TC_ERR_PARSE, "missing.yaml:2:1", "l2_bytes", "missing required field"},
    {"missing-limit.yaml", TC_ERR_PARSE, "missing-limit.yaml:30:3", "limits.warp_size",
     "missing required field"},
    {"duplicate-field.yaml", TC_ERR_PARSE, "duplicate-field.yaml:29:1", "tdp_w", "duplicate field"},
    {"syntax-error.yaml", TC_ERR_PARSE, "syntax-error.yaml:27:9", "", "YAML syntax error"},
    {"id-mismatch.yaml", TC_ERR_PARSE, "id-mismatch.yaml:2:5", "id",
     "does not match the file name"},
    {"bad-dtype.yaml", TC_ERR_PARSE, "bad-dtype.yaml:16:3", "peak_tflops.fp4", "unknown dtype"},
    {"peak-without-rate.yaml", TC_ERR_PARSE, "peak-without-rate.yaml:16:3", "peak_tflops.fp8",
     "flops_per_clk_per_unit.fp8 is missing"},
    {"bad-link.yaml", TC_ERR_PARSE, "bad-link.yaml:44:9", "interconnect.link",
     "expected one of pcie, nvlink, xgmi"},
};

START_TEST(bad_fixture_fails_with_position)
{
    const struct bad_case *bc = &bad_cases[_i];
    char rel[256];
    struct tc_gpu g;

    snprintf(rel, sizeof(rel), "tests/data/specs/bad/%s", bc->file);
    memset(&g, 0x5a, sizeof(g));
    ck_assert_int_eq(tc_specs_parse_file(src_path(rel), &g), bc->err);
    ck_assert_error_has(bc->where);
    ck_assert_error_has(bc->field);
    ck_assert_error_has(bc->text);
    /* The output is untouched on failure. */
    ck_assert_int_eq((unsigned char)g.id[0], 0x5a);
}
END_TEST

START_TEST(inconsistent_peak_fails_check_and_load)
{
    struct tc_gpu g;
    struct tc_specs *specs;

    /* Parses (the file is well-formed) but its fp16 peak is 10% too high. */
    ck_assert_int_eq(tc_specs_parse_file(src_path("tests/data/specs/bad/inconsistent.yaml"), &g),
                     TC_OK);
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("peak_tflops.fp16");
    ck_assert_error_has("137.5");
    ck_assert_error_has("124.97");
    /* The loader refuses a directory holding a bad file, naming the first
     * one in name order. */
    ck_assert_int_lt(tc_specs_load(src_path("tests/data/specs/bad"), &specs), 0);
    ck_assert_ptr_null(specs);
    ck_assert_error_has("bad-dtype.yaml:16:3");
}
END_TEST

START_TEST(missing_file_and_dir)
{
    struct tc_specs *specs;
    struct tc_gpu g;

    ck_assert_int_eq(tc_specs_parse_file(src_path("tests/data/specs/nope.yaml"), &g),
                     TC_ERR_NOT_FOUND);
    ck_assert_error_has("nope.yaml");
    ck_assert_int_eq(tc_specs_load(src_path("tests/data/specs/no-such-dir"), &specs),
                     TC_ERR_NOT_FOUND);
    ck_assert_ptr_null(specs);
    ck_assert_error_has("no-such-dir");
    ck_assert_int_eq(tc_specs_parse_file(NULL, &g), TC_ERR_INVALID);
    ck_assert_int_eq(tc_specs_parse_file(src_path("tests/data/specs/user"), &g), TC_ERR_IO);
    ck_assert_error_has("user: not a regular file");
}
END_TEST

/* ------------------------------------------------------------------------ */

START_TEST(specs_path_env_adds_gpu)
{
    struct tc_specs *specs;
    const struct tc_gpu *a10;

    /* The test environment points TILECAST_DATA_DIR at the source tree, so
     * the defaults are the shipped specs. */
    ck_assert_int_eq(setenv("TILECAST_DATA_DIR", src_path(""), 1), 0);
    ck_assert_int_eq(setenv("TILECAST_SPECS_PATH", src_path("tests/data/specs/user"), 1), 0);
    ck_assert_msg(tc_specs_load(NULL, &specs) == TC_OK, "%s", tc_last_error());
    ck_assert_uint_eq(tc_specs_count(specs), N_SHIPPED + 1);
    a10 = tc_specs_find(specs, "a10");
    ck_assert_ptr_nonnull(a10);
    ck_assert_int_eq(a10->units, 72);
    ck_assert_double_eq(a10->peak_tflops[TC_DTYPE_FP16], 125);
    ck_assert_ptr_nonnull(strstr(tc_specs_file(specs, "a10"), "tests/data/specs/user/a10.yaml"));
    /* Still sorted: a10 sorts before a100-*. */
    ck_assert_str_eq(tc_specs_at(specs, 0)->id, "a10");
    tc_specs_free(specs);

    /* A user copy of an id that the defaults also define is a duplicate. */
    ck_assert_int_eq(setenv("TILECAST_SPECS_PATH", src_path("tests/data/specs/user"), 1), 0);
    ck_assert_int_eq(tc_specs_load(NULL, &specs), TC_OK);
    ck_assert_int_eq(tc_specs_add_dir(specs, src_path("tests/data/specs/dup")), TC_ERR_INVALID);
    ck_assert_error_has("duplicate id 'a10'");
    tc_specs_free(specs);

    /* Without the variable only the shipped specs load. */
    ck_assert_int_eq(unsetenv("TILECAST_SPECS_PATH"), 0);
    ck_assert_int_eq(tc_specs_load(NULL, &specs), TC_OK);
    ck_assert_uint_eq(tc_specs_count(specs), N_SHIPPED);
    ck_assert_ptr_null(tc_specs_find(specs, "a10"));
    ck_assert_error_has("unknown GPU 'a10'");
    tc_specs_free(specs);

    /* A directory in the variable that does not exist is an error. */
    ck_assert_int_eq(setenv("TILECAST_SPECS_PATH", src_path("tests/data/specs/absent"), 1), 0);
    ck_assert_int_lt(tc_specs_load(NULL, &specs), 0);
    ck_assert_ptr_null(specs);
    ck_assert_error_has("TILECAST_SPECS_PATH");
    ck_assert_error_has("absent");
    ck_assert_int_eq(unsetenv("TILECAST_SPECS_PATH"), 0);
}
END_TEST

START_TEST(add_dir_adds_gpu_and_keeps_pointers)
{
    struct tc_specs *specs = load_shipped();
    const struct tc_gpu *h100 = tc_specs_find(specs, "h100-sxm5-80gb");

    ck_assert_ptr_nonnull(h100);
    ck_assert_int_eq(tc_specs_add_dir(specs, src_path("tests/data/specs/user")), TC_OK);
    ck_assert_uint_eq(tc_specs_count(specs), N_SHIPPED + 1);
    ck_assert_ptr_nonnull(tc_specs_find(specs, "a10"));
    /* Borrowed pointers survive the set growing. */
    ck_assert_ptr_eq(tc_specs_find(specs, "h100-sxm5-80gb"), h100);
    ck_assert_double_eq(h100->clock_tensor_mhz, 1830);
    /* Adding it again is a duplicate naming both files. */
    ck_assert_int_eq(tc_specs_add_dir(specs, src_path("tests/data/specs/user")), TC_ERR_INVALID);
    ck_assert_error_has("duplicate id 'a10'");
    ck_assert_error_has("user/a10.yaml");
    ck_assert_int_eq(tc_specs_add_dir(specs, NULL), TC_ERR_INVALID);
    tc_specs_free(specs);
}
END_TEST

START_TEST(duplicate_id_across_dirs)
{
    struct tc_specs *specs;
    char list[8192];

    snprintf(list, sizeof(list), "%s:%s", src_path("tests/data/specs/user"),
             src_path("tests/data/specs/dup"));
    ck_assert_int_eq(tc_specs_load(list, &specs), TC_ERR_INVALID);
    ck_assert_ptr_null(specs);
    ck_assert_error_has("dup/a10.yaml");
    ck_assert_error_has("duplicate id 'a10'");
    ck_assert_error_has("already defined in");
    ck_assert_error_has("user/a10.yaml");
}
END_TEST

/* ------------------------------------------------------------------------ */

static struct tc_gpu h100_copy(void)
{
    struct tc_gpu g;

    ck_assert_int_eq(tc_specs_parse_file(src_path("gpu_specs/h100-sxm5-80gb.yaml"), &g), TC_OK);
    return g;
}

START_TEST(check_peak_tolerance)
{
    struct tc_gpu g = h100_copy();

    /* 1.5% off is a vendor rounding; 2.5% is an error. */
    g.peak_tflops[TC_DTYPE_FP16] = 989.43 * 1.015;
    ck_assert_int_eq(tc_gpu_check(&g), TC_OK);
    g.peak_tflops[TC_DTYPE_FP16] = 989.43 * 1.025;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("peak_tflops.fp16");
    ck_assert_error_has("clock_tensor_mhz");

    /* Tensor dtypes use the tensor clock: with 1980 MHz the fp16 peak would
     * be 8% high, so swapping the clocks must fail. */
    g = h100_copy();
    g.clock_tensor_mhz = 1980;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("peak_tflops.tf32");
    g = h100_copy();
    g.clock_vector_mhz = 1830;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("peak_tflops.fp64");
    ck_assert_error_has("clock_vector_mhz");

    /* A peak without its rate. */
    g = h100_copy();
    g.flops_per_clk_per_unit[TC_DTYPE_FP8] = 0;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("fp8");
}
END_TEST

/* Every shipped GPU says how it reaches its peers, with the vendor's
 * figures (per direction, all links): NVLink 3 x 12 on A100 SXM through
 * NVSwitch, a PCIe 4 x16 slot on the A100 PCIe, Infinity Fabric on AMD. */
START_TEST(interconnect_shipped_values)
{
    struct tc_specs *specs = load_shipped();
    const struct tc_gpu *sxm = tc_specs_find(specs, "a100-sxm4-80gb");
    const struct tc_gpu *pcie = tc_specs_find(specs, "a100-pcie-40gb");
    const struct tc_gpu *v100 = tc_specs_find(specs, "v100-sxm2-32gb");
    const struct tc_gpu *mi300x = tc_specs_find(specs, "mi300x");

    for (size_t i = 0; i < tc_specs_count(specs); i++) {
        const struct tc_gpu *g = tc_specs_at(specs, i);

        ck_assert_msg(g->interconnect.link != TC_LINK_UNKNOWN, "%s has no interconnect", g->id);
        ck_assert_msg(g->interconnect.bw_gbps > 0, "%s", g->id);
    }
    ck_assert_int_eq(sxm->interconnect.link, TC_LINK_NVLINK);
    ck_assert_int_eq(sxm->interconnect.generation, 3);
    ck_assert_int_eq(sxm->interconnect.links, 12);
    ck_assert_double_eq(sxm->interconnect.bw_gbps, 300);
    ck_assert_int_eq(sxm->interconnect.switched, 1);
    ck_assert_int_eq(sxm->interconnect.pcie_gen, 4);
    ck_assert_int_eq(pcie->interconnect.link, TC_LINK_PCIE);
    ck_assert_double_eq(pcie->interconnect.bw_gbps, 32);
    ck_assert_int_eq(v100->interconnect.switched, 0); /* DGX-1's hybrid cube-mesh */
    ck_assert_int_eq(mi300x->interconnect.link, TC_LINK_XGMI);
    ck_assert_str_eq(tc_link_name(TC_LINK_XGMI), "xgmi");
    ck_assert_str_eq(tc_link_name(TC_LINK_COUNT), "?");
    tc_specs_free(specs);
}
END_TEST

/* tc_gpu_check refuses an interconnect no GPU has: a PCIe link faster than
 * its slot, a link of the other vendor, fields without a link. */
START_TEST(interconnect_check)
{
    struct tc_gpu g = h100_copy();

    ck_assert_int_eq(tc_gpu_check(&g), TC_OK);
    g.interconnect.link = TC_LINK_PCIE;
    g.interconnect.generation = g.interconnect.pcie_gen = 5;
    g.interconnect.links = 1;
    g.interconnect.bw_gbps = 64;
    ck_assert_int_eq(tc_gpu_check(&g), TC_OK);
    g.interconnect.bw_gbps = 450; /* NVLink's figure on a PCIe 5 slot */
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("at most 64 GB/s");
    g = h100_copy();
    g.interconnect.link = TC_LINK_XGMI;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("xgmi is not a nvidia link");
    g = h100_copy();
    g.interconnect.bw_gbps = 0;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("interconnect.bw_gbps");
    g = h100_copy();
    g.interconnect.link = TC_LINK_UNKNOWN;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("link is unknown");
    memset(&g.interconnect, 0, sizeof(g.interconnect));
    ck_assert_int_eq(tc_gpu_check(&g), TC_OK); /* no interconnect: one GPU only */
    /* the fields took struct tc_gpu's reserved tail: its size is unchanged */
    ck_assert_uint_eq(sizeof(struct tc_gpu),
                      offsetof(struct tc_gpu, interconnect) + 4 * sizeof(double));
}
END_TEST

START_TEST(check_limits)
{
    struct tc_gpu g;

    g = h100_copy();
    g.warp_size = 48;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("warp_size");

    g = h100_copy();
    g.max_warps_per_sm = 48; /* 48 x 32 != 2048 threads */
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("max_warps_per_sm");

    g = h100_copy();
    g.max_blocks_per_sm = 0;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("max_blocks_per_sm");

    g = h100_copy();
    g.smem_per_block_max_bytes = g.smem_per_sm_bytes; /* + 1 KiB reserved overflows */
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("smem_per_block_max_bytes");

    g = h100_copy();
    g.max_regs_per_block = g.regs_per_sm * 2;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("max_regs_per_block");

    g = h100_copy();
    g.smem_alloc_unit_bytes = 100;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("smem_alloc_unit_bytes");

    g = h100_copy();
    g.max_threads_per_block = 4096;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("max_threads_per_block");

    g = h100_copy();
    g.vendor = TC_VENDOR_AMD;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("vendor");

    g = h100_copy();
    g.units = 0;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("units");

    /* a sustained FFMA clock above the boost it is a share of */
    g = h100_copy();
    g.clock_vector_sustained_mhz = g.clock_vector_mhz + 1;
    ck_assert_int_eq(tc_gpu_check(&g), TC_ERR_INVALID);
    ck_assert_error_has("clock_vector_sustained_mhz");
    g.clock_vector_sustained_mhz = 1500;
    ck_assert_int_eq(tc_gpu_check(&g), TC_OK);

    ck_assert_int_eq(tc_gpu_check(NULL), TC_ERR_INVALID);
}
END_TEST

START_TEST(api_edges)
{
    struct tc_specs *specs = load_shipped();

    tc_specs_free(NULL);
    ck_assert_uint_eq(tc_specs_count(NULL), 0);
    ck_assert_ptr_null(tc_specs_at(specs, N_SHIPPED));
    ck_assert_error_has("out of range");
    ck_assert_ptr_null(tc_specs_find(specs, "nope"));
    ck_assert_error_has("unknown GPU 'nope'");
    ck_assert_ptr_null(tc_specs_find(NULL, "a100-sxm4-80gb"));
    ck_assert_ptr_nonnull(strstr(tc_specs_file(specs, "mi250x"), "gpu_specs/mi250x.yaml"));
    ck_assert_ptr_null(tc_specs_file(specs, "nope"));
    tc_specs_free(specs);
}
END_TEST

/* The GPU a user means: any case, a unique prefix; the candidates of an
 * ambiguous one; the closest id of a typo. An exact id always wins, even
 * when it is a prefix of another (mi250, mi250x). */
START_TEST(lookup_by_name)
{
    struct tc_specs *specs = load_shipped();

    ck_assert_str_eq(tc_specs_lookup(specs, "h100-sxm5-80gb")->id, "h100-sxm5-80gb");
    ck_assert_str_eq(tc_specs_lookup(specs, "H100-SXM5-80GB")->id, "h100-sxm5-80gb");
    ck_assert_str_eq(tc_specs_lookup(specs, "a100-pcie-4")->id, "a100-pcie-40gb");
    ck_assert_str_eq(tc_specs_lookup(specs, "MI250")->id, "mi250");
    ck_assert_str_eq(tc_specs_lookup(specs, "mi250x")->id, "mi250x");
    ck_assert_ptr_null(tc_specs_lookup(specs, "h100"));
    ck_assert_int_eq(strcmp(tc_last_error(), "GPU 'h100' is ambiguous: did you mean "
                                             "h100-pcie-80gb or h100-sxm5-80gb?"),
                     0);
    ck_assert_ptr_null(tc_specs_lookup(specs, "a100"));
    ck_assert_error_has("a100-pcie-40gb, a100-pcie-80gb, a100-sxm4-40gb or a100-sxm4-80gb?");
    ck_assert_ptr_null(tc_specs_lookup(specs, "h100-sxm-80gb"));
    ck_assert_error_has("unknown GPU 'h100-sxm-80gb'; did you mean h100-sxm5-80gb? Known ids:");
    ck_assert_ptr_null(tc_specs_lookup(specs, "nope"));
    ck_assert_error_has("unknown GPU 'nope'; known ids: a100-pcie-40gb");
    ck_assert_ptr_null(tc_specs_lookup(specs, ""));
    ck_assert_ptr_null(tc_specs_lookup(NULL, "h100"));
    /* code that must not guess keeps exact ids */
    ck_assert_ptr_null(tc_specs_find(specs, "H100-SXM5-80GB"));
    ck_assert_ptr_null(tc_specs_find(specs, "a100-pcie-4"));
    tc_specs_free(specs);
}
END_TEST

static Suite *specs_suite(void)
{
    Suite *s = suite_create("specs");
    TCase *shipped = tcase_create("shipped");
    TCase *bad = tcase_create("bad-input");
    TCase *path = tcase_create("search-path");
    TCase *check = tcase_create("check");

    tcase_add_test(shipped, shipped_all_load_and_check);
    tcase_add_test(shipped, shipped_each_file_parses);
    tcase_add_test(shipped, shipped_spot_values);
    tcase_add_loop_test(bad, bad_fixture_fails_with_position, 0,
                        (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
    tcase_add_test(bad, inconsistent_peak_fails_check_and_load);
    tcase_add_test(bad, missing_file_and_dir);
    tcase_add_test(path, specs_path_env_adds_gpu);
    tcase_add_test(path, add_dir_adds_gpu_and_keeps_pointers);
    tcase_add_test(path, duplicate_id_across_dirs);
    tcase_add_test(check, check_peak_tolerance);
    tcase_add_test(check, check_limits);
    tcase_add_test(check, interconnect_shipped_values);
    tcase_add_test(check, interconnect_check);
    tcase_add_test(check, api_edges);
    tcase_add_test(check, lookup_by_name);
    suite_add_tcase(s, shipped);
    suite_add_tcase(s, bad);
    suite_add_tcase(s, path);
    suite_add_tcase(s, check);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(specs_suite());
    int failed;

    /* The search-path tests set environment variables; start clean. */
    unsetenv("TILECAST_SPECS_PATH");
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
