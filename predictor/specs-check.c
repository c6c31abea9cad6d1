/* The consistency of a parsed GPU spec (tc_gpu_check): peaks against
 * units x rate x clock, bounds, occupancy limits and the interconnect. The
 * parser (specs.c) reads a file; this file says whether what it read, or
 * what the API was handed, describes a GPU. */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "bounds.h"
#include "specs-internal.h"
#include "tc-internal.h"

/* Relative tolerance of tc_gpu_check's peak cross-check: vendors round
 * their peaks (V100 PCIe quotes 112 for 113.05, L40S 362.05 for 366.4). */
#define PEAK_TOLERANCE 0.02

bool tc_spec_id_valid(const char *id)
{
    if (!*id)
        return false;
    for (const char *p = id; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
              *p == '.'))
            return false;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Consistency                                                               */
/* ------------------------------------------------------------------------ */

/* Tensor / matrix pipes run at the tensor clock; fp64 and fp32 peaks (which
 * on Hopper include the fp64 tensor path) assume the vector clock, as in
 * NVIDIA's and AMD's tables. */
static bool dtype_uses_tensor_clock(enum tc_dtype d)
{
    return d != TC_DTYPE_FP64 && d != TC_DTYPE_FP32;
}

static bool is_pow2(long long v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

/* The interconnect, when the spec gives one: a known link of a plausible
 * bandwidth, and one the vendor makes (NVLink on NVIDIA, Infinity Fabric on
 * AMD); a PCIe card's bandwidth cannot exceed its slot's (PCIe gen g x16:
 * 2^(g-1) x 2 GB/s per direction, 3.94 GB/s per lane at gen 4 after
 * 128b/130b coding; PCI-SIG's figures: 16, 32, 64, 128 GB/s for gen 3-6). */
static int check_interconnect(const struct tc_gpu *gpu, const char *id)
{
    const struct tc_interconnect *ic = &gpu->interconnect;

    if (ic->link == TC_LINK_UNKNOWN) {
        if (ic->bw_gbps != 0 || ic->links || ic->generation || ic->switched || ic->pcie_gen)
            return tc_error(TC_ERR_INVALID,
                            "GPU '%s': interconnect fields are set but its link is unknown", id);
        return TC_OK;
    }
    if ((unsigned)ic->link >= TC_LINK_COUNT)
        return tc_error(TC_ERR_INVALID, "GPU '%s': unknown interconnect link %d", id,
                        (int)ic->link);
    if (!tc_bound_in(ic->bw_gbps, TC_BOUND_PEER_BW_GBPS_MIN, TC_BOUND_PEER_BW_GBPS_MAX))
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': interconnect.bw_gbps %g is outside the plausible [%g, %g]", id,
                        ic->bw_gbps, TC_BOUND_PEER_BW_GBPS_MIN, TC_BOUND_PEER_BW_GBPS_MAX);
    if (ic->links < 1 || ic->generation < 1 || ic->pcie_gen < 1)
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': interconnect links (%d), generation (%d) and pcie_gen (%d) "
                        "must be positive",
                        id, ic->links, ic->generation, ic->pcie_gen);
    if ((ic->link == TC_LINK_NVLINK && gpu->vendor != TC_VENDOR_NVIDIA) ||
        (ic->link == TC_LINK_XGMI && gpu->vendor != TC_VENDOR_AMD))
        return tc_error(TC_ERR_INVALID, "GPU '%s': interconnect %s is not a %s link", id,
                        tc_link_name(ic->link), gpu->vendor == TC_VENDOR_AMD ? "amd" : "nvidia");
    if (ic->link == TC_LINK_PCIE) {
        double slot_gbps = 16.0 * ldexp(1.0, ic->generation - 3);

        if (ic->generation != ic->pcie_gen)
            return tc_error(TC_ERR_INVALID,
                            "GPU '%s': interconnect is PCIe gen %d but pcie_gen is %d", id,
                            ic->generation, ic->pcie_gen);
        if (ic->links != 1 || ic->bw_gbps > slot_gbps * 1.02)
            return tc_error(TC_ERR_INVALID,
                            "GPU '%s': interconnect over PCIe gen %d is one x16 slot of at most "
                            "%g GB/s per direction, got %d links of %g GB/s",
                            id, ic->generation, slot_gbps, ic->links, ic->bw_gbps);
    }
    return TC_OK;
}

TC_API int tc_gpu_check(const struct tc_gpu *gpu)
{
    const char *id;

    if (!gpu)
        return tc_error(TC_ERR_INVALID, "tc_gpu_check: no GPU given");
    id = gpu->id[0] ? gpu->id : "(no id)";
    if (!tc_spec_id_valid(gpu->id))
        return tc_error(TC_ERR_INVALID, "GPU '%s': invalid id", id);
    if (!gpu->name[0] || !gpu->compute_capability[0])
        return tc_error(TC_ERR_INVALID, "GPU '%s': name and compute_capability must be set", id);
    if ((unsigned)gpu->arch >= TC_ARCH_COUNT)
        return tc_error(TC_ERR_INVALID, "GPU '%s': unknown arch %d", id, (int)gpu->arch);
    /* the host CPU of a cpu-backend collection: no GPU model applies */
    if (gpu->arch == TC_ARCH_CPU || gpu->vendor == TC_VENDOR_CPU)
        return tc_error(TC_ERR_INVALID,
                        "'%s' is a host CPU (measured by the cpu backend), not a GPU", id);
    {
        bool amd_arch =
            gpu->arch == TC_ARCH_CDNA1 || gpu->arch == TC_ARCH_CDNA2 || gpu->arch == TC_ARCH_CDNA3;

        if (amd_arch != (gpu->vendor == TC_VENDOR_AMD))
            return tc_error(TC_ERR_INVALID, "GPU '%s': arch %s does not belong to vendor %s", id,
                            tc_arch_name(gpu->arch),
                            gpu->vendor == TC_VENDOR_AMD ? "amd" : "nvidia");
    }
    if (gpu->units <= 0 || !(gpu->clock_tensor_mhz > 0) || !(gpu->clock_vector_mhz > 0) ||
        gpu->clock_base_mhz < 0)
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': units (%d), clock_tensor_mhz (%g) and clock_vector_mhz (%g) "
                        "must be positive, clock_base_mhz (%g) not negative",
                        id, gpu->units, gpu->clock_tensor_mhz, gpu->clock_vector_mhz,
                        gpu->clock_base_mhz);
    if (gpu->clock_base_mhz > 0 &&
        gpu->clock_base_mhz > fmax(gpu->clock_tensor_mhz, gpu->clock_vector_mhz))
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': clock_base_mhz %g is above the boost clocks (%g tensor, %g "
                        "vector)",
                        id, gpu->clock_base_mhz, gpu->clock_tensor_mhz, gpu->clock_vector_mhz);
    if (gpu->clock_vector_sustained_mhz < 0 ||
        gpu->clock_vector_sustained_mhz > gpu->clock_vector_mhz)
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': clock_vector_sustained_mhz %g is negative or above "
                        "clock_vector_mhz %g",
                        id, gpu->clock_vector_sustained_mhz, gpu->clock_vector_mhz);
    if (!(gpu->mem_bw_gbps > 0) || !(gpu->mem_gb > 0) || gpu->l2_bytes <= 0 || !(gpu->tdp_w > 0))
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': mem_bw_gbps, mem_gb, l2_bytes and tdp_w must be positive", id);
    /* the same bounds as a spec file's (a GPU built through the API or read
     * from a database snapshot did not pass the file's checks) */
    {
        const struct {
            const char *name;
            double v, lo, hi;
        } b[] = {
            {"units", gpu->units, 1, TC_BOUND_UNITS_MAX},
            {"clock_tensor_mhz", gpu->clock_tensor_mhz, TC_BOUND_CLOCK_MHZ_MIN,
             TC_BOUND_CLOCK_MHZ_MAX},
            {"clock_vector_mhz", gpu->clock_vector_mhz, TC_BOUND_CLOCK_MHZ_MIN,
             TC_BOUND_CLOCK_MHZ_MAX},
            {"clock_base_mhz", gpu->clock_base_mhz > 0 ? gpu->clock_base_mhz : 1000,
             TC_BOUND_CLOCK_MHZ_MIN, TC_BOUND_CLOCK_MHZ_MAX},
            {"clock_vector_sustained_mhz",
             gpu->clock_vector_sustained_mhz > 0 ? gpu->clock_vector_sustained_mhz : 1000,
             TC_BOUND_CLOCK_MHZ_MIN, TC_BOUND_CLOCK_MHZ_MAX},
            {"mem_bw_gbps", gpu->mem_bw_gbps, TC_BOUND_MEM_BW_GBPS_MIN, TC_BOUND_MEM_BW_GBPS_MAX},
            {"mem_gb", gpu->mem_gb, TC_BOUND_MEM_GB_MIN, TC_BOUND_MEM_GB_MAX},
            {"l2_bytes", (double)gpu->l2_bytes, TC_BOUND_L2_BYTES_MIN, TC_BOUND_L2_BYTES_MAX},
            {"tdp_w", gpu->tdp_w, TC_BOUND_TDP_W_MIN, TC_BOUND_TDP_W_MAX},
        };

        for (size_t i = 0; i < TC_ARRAY_SIZE(b); i++)
            if (!tc_bound_in(b[i].v, b[i].lo, b[i].hi))
                return tc_error(TC_ERR_INVALID,
                                "GPU '%s': %s %g is outside the plausible "
                                "[%g, %g]",
                                id, b[i].name, b[i].v, b[i].lo, b[i].hi);
        for (int d = 0; d < TC_DTYPE_COUNT; d++)
            if (gpu->peak_tflops[d] != 0 &&
                !tc_bound_in(gpu->peak_tflops[d], TC_BOUND_PEAK_TFLOPS_MIN,
                             TC_BOUND_PEAK_TFLOPS_MAX))
                return tc_error(TC_ERR_INVALID,
                                "GPU '%s': peak_tflops.%s %g is outside the "
                                "plausible [%g, %g]",
                                id, tc_dtype_name((enum tc_dtype)d), gpu->peak_tflops[d],
                                TC_BOUND_PEAK_TFLOPS_MIN, TC_BOUND_PEAK_TFLOPS_MAX);
    }
    if (!(gpu->peak_tflops[TC_DTYPE_FP32] > 0))
        return tc_error(TC_ERR_INVALID, "GPU '%s': peak_tflops.fp32 must be positive", id);

    for (int d = 0; d < TC_DTYPE_COUNT; d++) {
        double peak = gpu->peak_tflops[d];
        double flops = gpu->flops_per_clk_per_unit[d];
        double clock_mhz = dtype_uses_tensor_clock((enum tc_dtype)d) ? gpu->clock_tensor_mhz
                                                                     : gpu->clock_vector_mhz;
        double computed, dev;

        if (peak < 0 || flops < 0 || !isfinite(peak) || !isfinite(flops) ||
            (peak > 0) != (flops > 0))
            return tc_error(TC_ERR_INVALID,
                            "GPU '%s': %s: peak_tflops (%g) and flops_per_clk_per_unit (%g) "
                            "must both be positive or both absent",
                            id, tc_dtype_name((enum tc_dtype)d), peak, flops);
        if (peak == 0)
            continue;
        computed = gpu->units * flops * clock_mhz * 1e-6;
        dev = peak / computed - 1;
        if (fabs(dev) > PEAK_TOLERANCE)
            return tc_error(TC_ERR_INVALID,
                            "GPU '%s': peak_tflops.%s = %g but units x flops_per_clk_per_unit x "
                            "clock_%s_mhz = %d x %g x %g MHz = %.2f TFLOP/s (%+.1f%%, limit "
                            "%.0f%%)",
                            id, tc_dtype_name((enum tc_dtype)d), peak,
                            dtype_uses_tensor_clock((enum tc_dtype)d) ? "tensor" : "vector",
                            gpu->units, flops, clock_mhz, computed, dev * 100,
                            PEAK_TOLERANCE * 100);
    }

    /* Occupancy limits: each must be positive and fit the others, or the
     * occupancy model divides by zero or admits impossible blocks. */
    if (gpu->warp_size != 32 && gpu->warp_size != 64)
        return tc_error(TC_ERR_INVALID, "GPU '%s': limits.warp_size must be 32 or 64, got %d", id,
                        gpu->warp_size);
    if (gpu->max_warps_per_sm <= 0 ||
        (long long)gpu->max_warps_per_sm * gpu->warp_size != gpu->max_threads_per_sm)
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': limits: max_warps_per_sm (%d) x warp_size (%d) must equal "
                        "max_threads_per_sm (%d)",
                        id, gpu->max_warps_per_sm, gpu->warp_size, gpu->max_threads_per_sm);
    if (gpu->max_threads_per_block <= 0 || gpu->max_threads_per_block > gpu->max_threads_per_sm ||
        gpu->max_threads_per_block % gpu->warp_size != 0)
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': limits.max_threads_per_block (%d) must be a multiple of the "
                        "warp size and at most max_threads_per_sm (%d)",
                        id, gpu->max_threads_per_block, gpu->max_threads_per_sm);
    if (gpu->max_blocks_per_sm <= 0 || gpu->max_blocks_per_sm > gpu->max_warps_per_sm)
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': limits.max_blocks_per_sm (%d) must be in [1, max_warps_per_sm "
                        "= %d]",
                        id, gpu->max_blocks_per_sm, gpu->max_warps_per_sm);
    if (gpu->regs_per_sm <= 0 || gpu->max_regs_per_block <= 0 ||
        gpu->max_regs_per_block > gpu->regs_per_sm)
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': limits.max_regs_per_block (%d) must be in [1, regs_per_sm = "
                        "%d]",
                        id, gpu->max_regs_per_block, gpu->regs_per_sm);
    if (gpu->max_regs_per_thread <= 0 ||
        (long long)gpu->max_regs_per_thread * gpu->warp_size > gpu->regs_per_sm)
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': limits.max_regs_per_thread (%d) x warp_size must fit "
                        "regs_per_sm (%d)",
                        id, gpu->max_regs_per_thread, gpu->regs_per_sm);
    if (gpu->reg_alloc_unit <= 0 || !is_pow2(gpu->reg_alloc_unit))
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': limits.reg_alloc_unit must be a power of two, got %d", id,
                        gpu->reg_alloc_unit);
    if (gpu->smem_per_sm_bytes <= 0 || gpu->smem_per_block_max_bytes <= 0 ||
        gpu->reserved_smem_per_block_bytes < 0 ||
        gpu->smem_per_block_max_bytes + gpu->reserved_smem_per_block_bytes > gpu->smem_per_sm_bytes)
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': limits: smem_per_block_max_bytes (%lld) + "
                        "reserved_smem_per_block_bytes (%lld) must fit smem_per_sm_bytes (%lld)",
                        id, (long long)gpu->smem_per_block_max_bytes,
                        (long long)gpu->reserved_smem_per_block_bytes,
                        (long long)gpu->smem_per_sm_bytes);
    if (!is_pow2(gpu->smem_alloc_unit_bytes) || gpu->smem_alloc_unit_bytes > gpu->smem_per_sm_bytes)
        return tc_error(TC_ERR_INVALID,
                        "GPU '%s': limits.smem_alloc_unit_bytes must be a power of two no larger "
                        "than smem_per_sm_bytes, got %d",
                        id, gpu->smem_alloc_unit_bytes);
    return check_interconnect(gpu, id);
}
