/* The collector core: sweep parsing (every set kind, every value kind,
 * errors with line and column), enumeration counts, shard partitions, the
 * harness statistics and loop on synthetic timings, and the cpu backend's
 * results against naive reference computations. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "test-collector.h"
#include "tc-internal.h"

static char fixture_dir[1024];

static void setup_paths(void)
{
    const char *root = getenv("TILECAST_SOURCE_ROOT");

    snprintf(fixture_dir, sizeof(fixture_dir), "%s", root ? root : TC_SOURCE_ROOT);
}

static struct tc_sweep *load_rel(const char *rel)
{
    char path[1400];

    snprintf(path, sizeof(path), "%s/%s", fixture_dir, rel);
    return tc_sweep_load(path);
}

static size_t count_kind(const struct tc_sweep *sw, enum tc_shape_kind kind)
{
    size_t n = 0;

    for (size_t i = 0; i < tc_sweep_count(sw); i++)
        n += tc_sweep_shapes(sw)[i].kind == kind;
    return n;
}

static bool has_gemm(const struct tc_sweep *sw, enum tc_dtype dt, enum tc_layout l, int64_t m,
                     int64_t n, int64_t k, int64_t batch)
{
    for (size_t i = 0; i < tc_sweep_count(sw); i++) {
        const struct tc_shape *s = &tc_sweep_shapes(sw)[i];

        if (s->kind != TC_SHAPE_ATTENTION && s->dtype == dt && s->layout == l && s->m == m &&
            s->n == n && s->k == k && s->batch == batch)
            return true;
    }
    return false;
}

START_TEST(test_sweep_all_kinds)
{
    struct tc_sweep *sw = load_rel("tests/data/sweeps/all-kinds.yaml");
    const struct tc_shape *s;

    ck_assert_msg(sw != NULL, "%s", tc_last_error());
    ck_assert_str_eq(tc_sweep_name(sw), "all-kinds");
    ck_assert(strncmp(tc_sweep_hash(sw), "fnv1a64:", 8) == 0);
    ck_assert_uint_eq(strlen(tc_sweep_hash(sw)), 8 + 16);
    /* 2 + 8 + 8 + 10 + 3 + 4 + 14 + 8, the repeated shape dropped */
    ck_assert_uint_eq(tc_sweep_count(sw), 57);
    ck_assert_uint_eq(count_kind(sw, TC_SHAPE_ATTENTION), 8);
    /* bmm set (4) + scores and values of 2 layers (4) */
    ck_assert_uint_eq(count_kind(sw, TC_SHAPE_BMM), 8);

    s = tc_sweep_shapes(sw);
    /* first occurrence order is kept */
    ck_assert_int_eq(s[0].m, 64);
    ck_assert_int_eq(s[0].n, 32);
    ck_assert_int_eq(s[0].k, 16);
    ck_assert_int_eq(s[0].batch, 1);
    ck_assert_int_eq(s[0].dtype, TC_DTYPE_FP32);
    ck_assert_int_eq(s[0].layout, TC_LAYOUT_NN);
    /* range with step, both dtypes */
    ck_assert(has_gemm(sw, TC_DTYPE_FP64, TC_LAYOUT_NN, 130, 64, 64, 1));
    ck_assert(!has_gemm(sw, TC_DTYPE_FP64, TC_LAYOUT_NN, 135, 64, 64, 1));
    /* pow2 square in the set's own layouts */
    ck_assert(has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NT, 512, 512, 512, 1));
    ck_assert(!has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NT, 1024, 1024, 1024, 1));
    /* multiples of 64 around 1000: 896 .. 1152 */
    ck_assert(has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 896, 32, 8, 1));
    ck_assert(has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 1152, 32, 16, 1));
    ck_assert(!has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 832, 32, 8, 1));
    /* zip pairs element-wise only */
    ck_assert(has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 2, 5, 8, 1));
    ck_assert(!has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 2, 4, 8, 1));
    /* bmm product */
    ck_assert(has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 16, 32, 8, 4));
    /* transformer h=768, a=8, s=128, b=2, v=1000 (paper table) */
    ck_assert(has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 256, 2304, 768, 1)); /* qkv */
    ck_assert(has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 128, 128, 96, 16));  /* scores */
    ck_assert(has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 128, 96, 128, 16));  /* values */
    ck_assert(has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 256, 768, 768, 1));  /* proj */
    ck_assert(has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 256, 3072, 768, 1)); /* mlp up */
    ck_assert(has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 256, 768, 3072, 1)); /* mlp down */
    ck_assert(has_gemm(sw, TC_DTYPE_FP32, TC_LAYOUT_NN, 256, 1000, 768, 1)); /* logits */
    /* attention defaults: seq_kv = seq_q */
    for (size_t i = 0; i < tc_sweep_count(sw); i++)
        if (s[i].kind == TC_SHAPE_ATTENTION) {
            ck_assert_int_eq(s[i].seq_kv, 64);
            ck_assert_int_eq(s[i].heads, 8);
            ck_assert(s[i].kv_heads == 8 || s[i].kv_heads == 2);
        }
    tc_sweep_free(sw);
    tc_sweep_free(NULL);
}
END_TEST

static const struct {
    const char *file;
    const char *message; /* expected substring, with file:line:column */
} bad_sweeps[] = {
    {"bad-key.yaml", "bad-key.yaml:5:5: gemm set: unknown key 'mm'"},
    {"bad-dtype.yaml", "bad-dtype.yaml:3:20: dtypes: unknown dtype 'fp17'"},
    {"bad-range.yaml", "bad-range.yaml:3:16: m: range ends (64) before it starts (512)"},
    {"bad-yaml.yaml", "bad-yaml.yaml:2:5:"},
    {"bad-kv-heads.yaml", "bad-kv-heads.yaml:3:5: kv_heads 5 does not divide heads 12"},
    {"bad-value.yaml", "bad-value.yaml:5:13: m: 0 is out of range"},
    {"bad-zip.yaml", "bad-zip.yaml:6:10: zip: m, n, k must have the same number of values"},
    {"bad-no-dtypes.yaml", "bad-no-dtypes.yaml:2:5: set has no 'dtypes'"},
    /* counted before expanding: 49 million shapes would take gigabytes */
    {"too-big.yaml", "too-big.yaml:4:5: the set expands to 49000000 shapes (7000 m x 7000 n x "
                     "1 k x 1 batch x 1 dtypes x 1 layouts); a sweep may have at most 1000000"},
    /* 9e6^4 x 2 does not fit in 64 bits: the count saturates, it does not wrap */
    {"too-big-overflow.yaml", "too-big-overflow.yaml:4:5: the set expands to more than "
                              "18446744073709551615 shapes (9000000 batch x 9000000 heads"},
    /* derived dimensions past 2^40 are refused, never formed (b.s wrapped) */
    {"too-big-derived.yaml", "too-big-derived.yaml:4:5: the qkv GEMM's m = b.s is more than 2^63"},
    {"too-big-attention.yaml", "too-big-attention.yaml:4:5: batch.heads = 2251799812636672"},
};

START_TEST(test_sweep_errors)
{
    char rel[256];
    struct tc_sweep *sw;

    snprintf(rel, sizeof(rel), "tests/data/sweeps/%s", bad_sweeps[_i].file);
    sw = load_rel(rel);
    ck_assert_msg(sw == NULL, "%s parsed", bad_sweeps[_i].file);
    ck_assert_msg(strstr(tc_last_error(), bad_sweeps[_i].message) != NULL,
                  "%s: got \"%s\", want \"%s\"", bad_sweeps[_i].file, tc_last_error(),
                  bad_sweeps[_i].message);
}
END_TEST

/* Fused attention sets: impl cudnn, the backward as a flag of the set (a
 * shape of its own, in the key and the name), refused for unfused sets. */
START_TEST(test_sweep_fused)
{
    static const char fused[] = "dtypes: bf16\nsets:\n  - kind: attention\n    impl: cudnn\n"
                                "    batch: 1\n    heads: 8\n    kv_heads: 2\n    seq_q: 64\n"
                                "    head_dim: 64\n    causal: [false, true]\n"
                                "    backward: [false, true]\n";
    static const char unfused[] = "dtypes: fp16\nsets:\n  - kind: attention\n    batch: 1\n"
                                  "    heads: 1\n    seq_q: 1\n    head_dim: 1\n"
                                  "    backward: true\n";
    struct tc_sweep *sw = tc_sweep_parse(fused, strlen(fused), "f.yaml");
    const struct tc_shape *s;
    struct tc_shape fwd;
    int backward = 0;
    char name[128];

    ck_assert_msg(sw != NULL, "%s", tc_last_error());
    ck_assert_uint_eq(tc_sweep_count(sw), 4);
    s = tc_sweep_shapes(sw);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(s[i].impl, TC_ATTN_CUDNN);
        ck_assert_int_eq(s[i].kv_heads, 2);
        backward += s[i].backward;
        if (s[i].backward && s[i].causal) {
            tc_shape_format(&s[i], name, sizeof(name));
            ck_assert_str_eq(name, "attention cudnn bf16 b1 h8/2 s64x64 d64 causal backward");
            fwd = s[i];
            fwd.backward = false;
            ck_assert(tc_shape_cmp(&fwd, &s[i]) != 0);
            ck_assert_double_eq_tol(tc_shape_flops(&s[i]), 2.5 * tc_shape_flops(&fwd), 1);
        }
    }
    ck_assert_int_eq(backward, 2);
    tc_sweep_free(sw);
    ck_assert(tc_sweep_parse(unfused, strlen(unfused), "u.yaml") == NULL);
    ck_assert_msg(strstr(tc_last_error(), "u.yaml:8:15: backward: measured with impl: cudnn only"),
                  "%s", tc_last_error());
}
END_TEST

START_TEST(test_sweep_missing_file)
{
    ck_assert(tc_sweep_load("/nonexistent/sweep.yaml") == NULL);
    ck_assert(strstr(tc_last_error(), "/nonexistent/sweep.yaml") != NULL);
}
END_TEST

START_TEST(test_sweep_strings)
{
    static const char empty[] = "sets: []\n";
    static const char flash[] = "dtypes: fp16\nsets:\n  - kind: attention\n    impl: flash\n"
                                "    batch: 1\n    heads: 1\n    seq_q: 1\n    head_dim: 1\n";
    static const char nodiv[] = "dtypes: fp16\nsets:\n  - kind: transformer\n    h: 100\n"
                                "    a: 3\n    s: 8\n    v: 8\n";
    static const char ok[] = "name: tiny\ndtypes: [bf16]\nlayouts: TT\nsets:\n"
                             "  - kind: bmm\n    batch: 3\n    square: [8, 8, 16]\n";
    struct tc_sweep *sw;

    ck_assert(tc_sweep_parse(empty, strlen(empty), "e.yaml") == NULL);
    ck_assert(strstr(tc_last_error(), "e.yaml:1:7: sets: expected a non-empty list") != NULL);
    ck_assert(tc_sweep_parse(flash, strlen(flash), "f.yaml") == NULL);
    ck_assert(strstr(tc_last_error(), "f.yaml:4:11: impl: the collector measures 'unfused' and "
                                      "'cudnn'") != NULL);
    ck_assert(tc_sweep_parse(nodiv, strlen(nodiv), "t.yaml") == NULL);
    ck_assert(strstr(tc_last_error(), "t.yaml:3:5: no combination") != NULL);
    sw = tc_sweep_parse(ok, strlen(ok), "dir/tiny.yaml");
    ck_assert_msg(sw != NULL, "%s", tc_last_error());
    ck_assert_uint_eq(tc_sweep_count(sw), 2); /* 8 repeated */
    ck_assert_int_eq(tc_sweep_shapes(sw)[1].m, 16);
    ck_assert_int_eq(tc_sweep_shapes(sw)[1].batch, 3);
    ck_assert_int_eq(tc_sweep_shapes(sw)[1].kind, TC_SHAPE_BMM);
    ck_assert_int_eq(tc_sweep_shapes(sw)[1].layout, TC_LAYOUT_TT);
    tc_sweep_free(sw);
}
END_TEST

START_TEST(test_shipped_sweeps)
{
    struct tc_sweep *quick = load_rel("collector/sweeps/quick.yaml");
    struct tc_sweep *paper = load_rel("collector/sweeps/paper.yaml");
    struct tc_sweep *exh = load_rel("collector/sweeps/exhaustive.yaml");

    ck_assert_msg(quick && paper && exh, "%s", tc_last_error());
    ck_assert_str_eq(tc_sweep_name(quick), "quick");
    /* (4 pow2 + 4 alignment + 1 bmm + 7 layer ops - 256^3 and the bmm repeated)
     * x 2 dtypes x 2 layouts, + 8 attention */
    ck_assert_uint_eq(tc_sweep_count(quick), 64);
    /* the paper's k sweep and vocabulary sweep */
    ck_assert(has_gemm(paper, TC_DTYPE_FP16, TC_LAYOUT_NN, 27648, 4096, 64, 1));
    ck_assert(has_gemm(paper, TC_DTYPE_FP16, TC_LAYOUT_NN, 27648, 4096, 510, 1));
    ck_assert(has_gemm(paper, TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 4096, 51200, 1));
    ck_assert(has_gemm(paper, TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 4096, 51201, 1));
    /* the a = 128 layer at h = 20480: scores batch b·a = 512, head 160 */
    ck_assert(has_gemm(paper, TC_DTYPE_FP16, TC_LAYOUT_NN, 2048, 2048, 160, 512));
    /* SwiGLU: d_ff 10944 for h 4096 */
    ck_assert(has_gemm(paper, TC_DTYPE_FP16, TC_LAYOUT_NN, 8192, 10944, 4096, 1));
    /* grid + two alignment sets of 129 x 4 layouts x 2 dtypes, less the 4096^3 shape
     * they share (8) and that the NT grid holds too (2) */
    ck_assert_uint_eq(tc_sweep_count(exh), 64u * 64 * 64 * 2 + 2 * 2 * 4 * 129 - 8 - 2);
    tc_sweep_free(quick);
    tc_sweep_free(paper);
    tc_sweep_free(exh);
}
END_TEST

START_TEST(test_shard_parse)
{
    int i, n;

    ck_assert_int_eq(tc_shard_parse("3/4", &i, &n), TC_OK);
    ck_assert_int_eq(i, 3);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(tc_shard_parse("4/4", &i, &n), TC_ERR_RANGE);
    ck_assert_int_eq(tc_shard_parse("-1/4", &i, &n), TC_ERR_RANGE);
    ck_assert_int_eq(tc_shard_parse("1/0", &i, &n), TC_ERR_RANGE);
    ck_assert_int_eq(tc_shard_parse("a/4", &i, &n), TC_ERR_INVALID);
    ck_assert_int_eq(tc_shard_parse("2", &i, &n), TC_ERR_INVALID);
    ck_assert_int_eq(tc_shard_parse(NULL, &i, &n), TC_ERR_INVALID);
}
END_TEST

START_TEST(test_shard_partition)
{
    struct tc_sweep *sw = load_rel("collector/sweeps/paper.yaml");
    size_t total, *idx, n;
    double *cost, max_cost = 0, sum = 0;
    int *owner, *again;
    const int counts[] = {1, 2, 3, 4, 7, 64};

    ck_assert_msg(sw != NULL, "%s", tc_last_error());
    total = tc_sweep_count(sw);
    cost = malloc(total * sizeof(*cost));
    owner = malloc(total * sizeof(*owner));
    again = malloc(total * sizeof(*again));
    idx = malloc(total * sizeof(*idx));
    for (size_t i = 0; i < total; i++) {
        cost[i] = tc_shape_flops(&tc_sweep_shapes(sw)[i]);
        sum += cost[i];
        if (cost[i] > max_cost)
            max_cost = cost[i];
    }
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int N = counts[c];
        double *load = calloc((size_t)N, sizeof(*load));
        size_t *members = calloc((size_t)N, sizeof(*members));
        size_t seen = 0;

        ck_assert_int_eq(tc_shard_assign(cost, total, N, owner), TC_OK);
        ck_assert_int_eq(tc_shard_assign(cost, total, N, again), TC_OK);
        ck_assert(memcmp(owner, again, total * sizeof(*owner)) == 0); /* deterministic */
        for (size_t i = 0; i < total; i++) {
            ck_assert(owner[i] >= 0 && owner[i] < N);
            load[owner[i]] += cost[i];
        }
        /* LPT: no shard exceeds the mean by more than the largest item */
        for (int s = 0; s < N; s++)
            ck_assert_msg(load[s] <= sum / N + max_cost + 1e-6 * sum,
                          "N=%d shard %d load %g mean %g max %g", N, s, load[s], sum / N, max_cost);
        /* tc_collect_select: disjoint and complete, in sweep order */
        for (int s = 0; s < N; s++) {
            ck_assert_int_eq(tc_collect_select(sw, cost, s, N, idx, &n), TC_OK);
            for (size_t j = 0; j < n; j++) {
                ck_assert_int_eq(owner[idx[j]], s);
                if (j)
                    ck_assert(idx[j] > idx[j - 1]);
            }
            members[s] = n;
            seen += n;
        }
        ck_assert_uint_eq(seen, total);
        free(load);
        free(members);
    }
    /* without costs the FLOP count is used and gives the same partition */
    ck_assert_int_eq(tc_collect_select(sw, NULL, 1, 4, idx, &n), TC_OK);
    ck_assert_int_eq(tc_shard_assign(cost, total, 4, owner), TC_OK);
    for (size_t j = 0; j < n; j++)
        ck_assert_int_eq(owner[idx[j]], 1);
    ck_assert_int_eq(tc_collect_select(sw, cost, 4, 4, idx, &n), TC_ERR_RANGE);
    ck_assert_int_eq(tc_shard_assign(cost, total, 0, owner), TC_ERR_INVALID);
    free(cost);
    free(owner);
    free(again);
    free(idx);
    tc_sweep_free(sw);
}
END_TEST

START_TEST(test_shard_small)
{
    /* equal costs spread evenly: 10 items over 4 shards -> 3, 3, 2, 2 */
    double cost[10];
    int owner[10], per[4] = {0};

    for (int i = 0; i < 10; i++)
        cost[i] = 1.0;
    ck_assert_int_eq(tc_shard_assign(cost, 10, 4, owner), TC_OK);
    for (int i = 0; i < 10; i++)
        per[owner[i]]++;
    ck_assert_int_eq(per[0], 3);
    ck_assert_int_eq(per[1], 3);
    ck_assert_int_eq(per[2], 2);
    ck_assert_int_eq(per[3], 2);
    /* one big item alone, the rest around it: {10} vs {4,3,2,1} */
    {
        double c2[5] = {1, 10, 2, 3, 4};
        int o2[5];

        ck_assert_int_eq(tc_shard_assign(c2, 5, 2, o2), TC_OK);
        ck_assert_int_eq(o2[1], 0);
        for (int i = 0; i < 5; i++)
            if (i != 1)
                ck_assert_int_eq(o2[i], 1);
    }
}
END_TEST

START_TEST(test_stats)
{
    double five[] = {5, 1, 4, 2, 3};
    double hundred[100], even[] = {4, 1, 3, 2};
    struct tc_stats st;

    ck_assert_int_eq(tc_stats_compute(five, 5, &st), TC_OK);
    ck_assert_double_eq(st.median_us, 3);
    ck_assert_double_eq(st.min_us, 1);
    ck_assert_double_eq(st.max_us, 5);
    ck_assert_double_eq(st.sum_us, 15);
    /* too few samples for a narrower interval than the range */
    ck_assert_double_eq(st.ci_lo_us, 1);
    ck_assert_double_eq(st.ci_hi_us, 5);
    ck_assert_double_eq_tol(st.rel_ci, 4.0 / 2 / 3, 1e-12);
    ck_assert_int_eq(tc_stats_compute(even, 4, &st), TC_OK);
    ck_assert_double_eq(st.median_us, 2.5);
    /* 1..100 shuffled: median 50.5, ranks 40 and 60 */
    for (int i = 0; i < 100; i++)
        hundred[i] = (double)((i * 37) % 100 + 1);
    ck_assert_int_eq(tc_stats_compute(hundred, 100, &st), TC_OK);
    ck_assert_double_eq(st.median_us, 50.5);
    ck_assert_double_eq(st.ci_lo_us, 40);
    ck_assert_double_eq(st.ci_hi_us, 60);
    ck_assert_double_eq_tol(st.rel_ci, 10.0 / 50.5, 1e-12);
    ck_assert_int_eq(tc_stats_compute(hundred, 0, &st), TC_ERR_INVALID);
}
END_TEST

/* A synthetic backend: times from a pattern, counting calls. */
struct tc_backend {
    int pattern; /* 0 constant, 1 alternating 90/110, 2 unsupported, 3 parts,
                  * 4 a 2 us kernel that groups, 5 one that cannot */
    int prepared, reps_run, runs, last_group;
};

static struct tc_backend fake;

int fake_open(int device, struct tc_backend **out, struct tc_backend_info *info)
{
    memset(info, 0, sizeof(*info));
    /* a GPU of a known family: collect refuses to store a device of none */
    info->arch_known = true;
    info->vendor = TC_VENDOR_NVIDIA;
    info->arch = TC_ARCH_VOLTA;
    *out = &fake;
    return TC_OK;
}

static int fake_prepare(struct tc_backend *b, const struct tc_shape *s, struct tc_outcome *oc)
{
    b->prepared++;
    oc->status = b->pattern == 2 ? TC_STATUS_UNSUPPORTED : TC_STATUS_OK;
    snprintf(oc->message, sizeof(oc->message), "%s", b->pattern == 2 ? "no fp8 here" : "");
    return TC_OK;
}

static int fake_run(struct tc_backend *b, int reps, struct tc_rep_times *t, struct tc_outcome *oc)
{
    b->runs++;
    b->last_group = t->group;
    if (b->pattern == 5)
        t->group = 1;
    for (int r = 0; r < reps; r++, b->reps_run++) {
        t->total_us[r] = b->pattern == 1 ? (b->reps_run % 2 ? 110 : 90) : 100;
        if (b->pattern == 4 || b->pattern == 5)
            t->total_us[r] = 2;
        if (b->pattern == 3) {
            t->part_us[0][r] = 40;
            t->part_us[1][r] = 20;
            t->part_us[2][r] = 40;
        }
    }
    oc->status = TC_STATUS_OK;
    return TC_OK;
}

void fake_close(struct tc_backend *b)
{
}

static const struct tc_backend_ops fake_ops = {
    .name = "fake",
    .open = fake_open,
    .prepare = fake_prepare,
    .run = fake_run,
    .close = fake_close,
};

START_TEST(test_harness_synthetic)
{
    struct tc_harness_opts o;
    struct tc_shape s = {.kind = TC_SHAPE_GEMM, .m = 1, .n = 1, .k = 1, .batch = 1};
    struct tc_measurement m;
    struct tc_backend *b;
    struct tc_backend_info info;

    tc_harness_defaults(&o);
    ck_assert_double_eq(o.rel_ci, 0.01);
    ck_assert_double_eq(o.warmup_ms, 100);
    o.max_time_ms = 60000; /* the synthetic runs are instant: reps bound the loop */
    o.max_reps = 40;
    o.warmup_ms = 0; /* warm-up by count (below: by time) */
    fake_ops.open(0, &b, &info);

    /* constant times converge at the minimum count, warm-up excluded */
    memset(&fake, 0, sizeof(fake));
    ck_assert_int_eq(tc_harness_measure(&fake_ops, b, &o, &s, &m), TC_OK);
    ck_assert_int_eq(m.outcome.status, TC_STATUS_OK);
    ck_assert(m.converged);
    ck_assert_int_eq(m.total.n, o.min_reps);
    ck_assert_int_eq(fake.reps_run, o.min_reps + o.warmup_reps);
    ck_assert_int_eq(m.warmup_reps, o.warmup_reps);
    ck_assert_double_eq(m.total.median_us, 100);
    ck_assert(!m.has_parts);

    /* warm-up by time: instant repetitions keep warming up for 20 ms,
     * none of them timed */
    memset(&fake, 0, sizeof(fake));
    o.warmup_ms = 20;
    ck_assert_int_eq(tc_harness_measure(&fake_ops, b, &o, &s, &m), TC_OK);
    ck_assert(m.converged);
    ck_assert_double_ge(m.warmup_ms, 20);
    ck_assert_int_gt(m.warmup_reps, o.warmup_reps);
    ck_assert_int_eq(fake.reps_run, m.warmup_reps + o.min_reps);
    ck_assert_int_eq(m.total.n, o.min_reps);
    o.warmup_ms = 0;

    /* +-10% noise never reaches 1%: stops at max_reps */
    memset(&fake, 0, sizeof(fake));
    fake.pattern = 1;
    ck_assert_int_eq(tc_harness_measure(&fake_ops, b, &o, &s, &m), TC_OK);
    ck_assert(!m.converged);
    ck_assert_int_eq(m.total.n, 40);
    ck_assert_double_eq(m.total.median_us, 100);
    ck_assert_double_eq(m.total.min_us, 90);
    ck_assert_double_eq_tol(m.total.rel_ci, 0.1, 1e-12);
    /* ... but a 20% target is met at once */
    memset(&fake, 0, sizeof(fake));
    fake.pattern = 1;
    o.rel_ci = 0.2;
    ck_assert_int_eq(tc_harness_measure(&fake_ops, b, &o, &s, &m), TC_OK);
    ck_assert(m.converged);
    ck_assert_int_eq(m.total.n, o.min_reps);
    o.rel_ci = 0.01;

    /* a library refusal is data: no timing, status and message kept */
    memset(&fake, 0, sizeof(fake));
    fake.pattern = 2;
    ck_assert_int_eq(tc_harness_measure(&fake_ops, b, &o, &s, &m), TC_OK);
    ck_assert_int_eq(m.outcome.status, TC_STATUS_UNSUPPORTED);
    ck_assert_str_eq(m.outcome.message, "no fp8 here");
    ck_assert_int_eq(fake.runs, 0);

    /* parts (unfused attention) get their own statistics */
    memset(&fake, 0, sizeof(fake));
    fake.pattern = 3;
    ck_assert_int_eq(tc_harness_measure(&fake_ops, b, &o, &s, &m), TC_OK);
    ck_assert(m.has_parts);
    ck_assert_double_eq(m.parts[0].median_us, 40);
    ck_assert_double_eq(m.parts[1].median_us, 20);
    ck_assert_double_eq(m.parts[2].median_us, 40);

    /* a 2 us kernel under a 0.5 us timer: samples of 25 launches (50 us) */
    memset(&fake, 0, sizeof(fake));
    fake.pattern = 4;
    o.timer_resolution_us = 0.5;
    ck_assert_int_eq(tc_harness_measure(&fake_ops, b, &o, &s, &m), TC_OK);
    ck_assert_int_eq(m.group, 25);
    ck_assert_int_eq(fake.last_group, 25);
    ck_assert_double_eq(m.total.median_us, 2);
    /* a backend that cannot group says so */
    memset(&fake, 0, sizeof(fake));
    fake.pattern = 5;
    ck_assert_int_eq(tc_harness_measure(&fake_ops, b, &o, &s, &m), TC_OK);
    ck_assert_int_eq(m.group, 1);
    ck_assert_int_eq(fake.last_group, 25);
    /* a 100 us kernel is timed alone */
    memset(&fake, 0, sizeof(fake));
    ck_assert_int_eq(tc_harness_measure(&fake_ops, b, &o, &s, &m), TC_OK);
    ck_assert_int_eq(m.group, 1);
    ck_assert_int_eq(fake.last_group, 1);
    o.timer_resolution_us = 0;

    /* a time budget stops a noisy shape before max_reps */
    memset(&fake, 0, sizeof(fake));
    fake.pattern = 1;
    o.max_time_ms = 0;
    o.max_reps = 1000;
    ck_assert_int_eq(tc_harness_measure(&fake_ops, b, &o, &s, &m), TC_OK);
    ck_assert(!m.converged);
    ck_assert_int_eq(m.total.n, o.min_reps);
}
END_TEST

/* cublasLtMatmulAlgoConfigGetAttribute as CUDA 13's library behaves:
 * attributes 0-6 are 4 bytes, 7 and 8 (inner and cluster shape) 2 bytes,
 * and a buffer of any other size is refused; 9 does not exist. */
static int fake_attr_get(const void *algo, int attr, void *buf, size_t size, size_t *written)
{
    const uint32_t *values = algo;
    size_t need = attr <= 6 ? 4 : 2;

    *written = 0;
    if (attr < 0 || attr > 8)
        return -1;
    if (size == 0) {
        *written = need;
        return 0;
    }
    if (size != need || !buf)
        return -1;
    if (need == 4) {
        memcpy(buf, &values[attr], 4);
    } else {
        uint16_t v = (uint16_t)values[attr];

        memcpy(buf, &v, 2);
    }
    *written = need;
    return 0;
}

START_TEST(test_algo_attributes)
{
    /* tile 64x128, stages 64x3, split-K 4, swizzle 1, cluster 2x1x1 */
    const uint32_t algo[9] = {42, 17, 4, 0, 1, 0, 15, 0x1234, 3};
    struct tc_lt_algo_ids ids = {0};
    struct tc_gemm_row row = {0};
    uint64_t v;
    int m, n;

    /* every attribute at its own size: the 16-bit cluster id reads whole */
    ck_assert_int_eq(tc_algo_attr_read(fake_attr_get, algo, 1, &v), TC_OK);
    ck_assert_uint_eq(v, 17);
    ck_assert_int_eq(tc_algo_attr_read(fake_attr_get, algo, 8, &v), TC_OK);
    ck_assert_uint_eq(v, 3);
    ck_assert_int_eq(tc_algo_attr_read(fake_attr_get, algo, 7, &v), TC_OK);
    ck_assert_uint_eq(v, 0x1234);
    /* an attribute the library does not have */
    v = 99;
    ck_assert_int_eq(tc_algo_attr_read(fake_attr_get, algo, 9, &v), TC_ERR_NOT_FOUND);
    ck_assert_uint_eq(v, 0);

    /* CUBLASLT_MATMUL_TILE_64x128 (17) is the column-major problem's tile:
     * 128 rows of the row-major C by 64 columns */
    ck_assert(tc_cublaslt_tile(17, &m, &n));
    ck_assert_int_eq(m, 128);
    ck_assert_int_eq(n, 64);
    ck_assert(tc_cublaslt_tile(24, &m, &n)); /* 256x128 */
    ck_assert_int_eq(m, 128);
    ck_assert_int_eq(n, 256);
    ck_assert(!tc_cublaslt_tile(0, &m, &n)); /* undefined */
    ck_assert_int_eq(m + n, 0);
    ck_assert(!tc_cublaslt_tile(100000, &m, &n));
    /* CUBLASLT_CLUSTER_SHAPE_2x1x1 (3): two blocks along the row-major n */
    ck_assert(tc_cublaslt_cluster(3, &m, &n));
    ck_assert_int_eq(m, 1);
    ck_assert_int_eq(n, 2);
    ck_assert(!tc_cublaslt_cluster(0, &m, &n)); /* auto */

    ids.tile = algo[1];
    ids.stages = algo[6];
    ids.split_k = algo[2];
    ids.swizzle = algo[4];
    ids.cluster = algo[8];
    tc_cublaslt_decode(&ids, &row);
    ck_assert_int_eq(row.tile_m, 128);
    ck_assert_int_eq(row.tile_n, 64);
    ck_assert_int_eq(row.tile_k, 64);
    ck_assert_int_eq(row.stages, 3);
    ck_assert_int_eq(row.split_k, 4);
    ck_assert_int_eq(row.swizzle, 1);
    ck_assert_int_eq(row.cluster_m, 1);
    ck_assert_int_eq(row.cluster_n, 2);
}
END_TEST

/* A device of `capacity` bytes: counts what is held and how often each
 * call happened; a request of `refuse` bytes fails as a driver error. */
struct fake_device {
    size_t capacity, held, refuse;
    int allocs, releases;
    char mem[8][1];
};

static enum tc_status fake_dev_alloc(void *ud, size_t bytes, void **ptr, char *msg, size_t len)
{
    struct fake_device *d = ud;

    d->allocs++;
    if (bytes == d->refuse) {
        snprintf(msg, len, "driver error");
        return TC_STATUS_ERROR;
    }
    if (d->held + bytes > d->capacity) {
        snprintf(msg, len, "out of memory for %zu", bytes);
        return TC_STATUS_OOM;
    }
    d->held += bytes;
    *ptr = d->mem[d->allocs % 8];
    return TC_STATUS_OK;
}

static void fake_dev_release(void *ud, void *ptr, size_t bytes)
{
    struct fake_device *d = ud;

    ck_assert_ptr_nonnull(ptr);
    ck_assert_uint_ge(d->held, bytes);
    d->held -= bytes;
    d->releases++;
}

START_TEST(test_devbufs_oom_retry)
{
    struct fake_device dev = {.capacity = 100};
    struct tc_dev_allocator a = {.alloc = fake_dev_alloc, .release = fake_dev_release, .ud = &dev};
    struct tc_devbufs set;
    struct tc_outcome oc = {TC_STATUS_OK, ""};
    const size_t big_a[] = {48, 1, 1}, big_b[] = {1, 48, 1}, big_c[] = {1, 1, 64};
    const size_t small[] = {2, 2, 2}, too_big[] = {1, 1, 128}, refused[] = {1, 1, 7};

    tc_devbufs_init(&set);
    /* buffers grow and keep their largest size across shapes */
    ck_assert_int_eq(tc_devbufs_ensure(&set, &a, big_a, 3, &oc), TC_OK);
    ck_assert_int_eq(oc.status, TC_STATUS_OK);
    set.filled[0] = set.filled[1] = set.filled[2] = TC_DTYPE_FP16;
    ck_assert_int_eq(tc_devbufs_ensure(&set, &a, big_b, 3, &oc), TC_OK);
    ck_assert_int_eq(oc.status, TC_STATUS_OK);
    ck_assert_uint_eq(set.cap[0], 48);
    ck_assert_uint_eq(set.cap[1], 48);
    ck_assert_uint_eq(dev.held, 97);
    ck_assert_int_eq(set.filled[0], TC_DTYPE_FP16); /* kept: not refilled */
    ck_assert_int_eq(set.filled[1], -1);            /* grown: to be filled */

    /* 64 more do not fit next to the kept 96, but the shape's own 66 do:
     * everything is freed and allocated again, not stored as oom */
    ck_assert_int_eq(tc_devbufs_ensure(&set, &a, big_c, 3, &oc), TC_OK);
    ck_assert_msg(oc.status == TC_STATUS_OK, "%s", oc.message);
    ck_assert_uint_eq(set.cap[0], 1);
    ck_assert_uint_eq(set.cap[1], 1);
    ck_assert_uint_eq(set.cap[2], 64);
    ck_assert_uint_eq(dev.held, 66);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(set.filled[i], -1);

    /* only what is too small grows */
    dev.allocs = 0;
    ck_assert_int_eq(tc_devbufs_ensure(&set, &a, small, 3, &oc), TC_OK);
    ck_assert_int_eq(oc.status, TC_STATUS_OK);
    ck_assert_int_eq(dev.allocs, 2); /* buffers 0 and 1 grow, 2 keeps its 64 */
    ck_assert_uint_eq(set.cap[2], 64);

    /* too big on its own: oom after the retry, with nothing left held */
    ck_assert_int_eq(tc_devbufs_ensure(&set, &a, too_big, 3, &oc), TC_OK);
    ck_assert_int_eq(oc.status, TC_STATUS_OOM);
    ck_assert_msg(strstr(oc.message, "out of memory for 128") &&
                      strstr(oc.message, "also after freeing every buffer"),
                  "%s", oc.message);
    ck_assert_uint_eq(dev.held, 0);
    for (int i = 0; i < TC_DEVBUF_MAX; i++)
        ck_assert_ptr_null(set.ptr[i]);

    /* another failure than out of memory is the shape's error at once */
    oc.status = TC_STATUS_OK;
    dev.allocs = 0;
    dev.refuse = 7;
    ck_assert_int_eq(tc_devbufs_ensure(&set, &a, refused, 3, &oc), TC_OK);
    ck_assert_int_eq(oc.status, TC_STATUS_ERROR);
    ck_assert_str_eq(oc.message, "driver error");
    ck_assert_int_eq(dev.allocs, 3);

    tc_devbufs_release(&set, &a);
    ck_assert_uint_eq(dev.held, 0);
    ck_assert_int_eq(tc_devbufs_ensure(&set, &a, small, TC_DEVBUF_MAX + 1, &oc), TC_ERR_INVALID);
}
END_TEST

START_TEST(test_cuda_runtime_supports)
{
    char why[256] = "";

    /* CUDA 13 has no Volta: a V100 needs a CUDA 11.8-12.x build */
    ck_assert(!tc_cuda_runtime_supports(13000, 7, 0, why, sizeof(why)));
    ck_assert_msg(strstr(why, "7.0") && strstr(why, "CUDA 13.0") && strstr(why, "11.8-12.x"), "%s",
                  why);
    ck_assert(!tc_cuda_runtime_supports(13010, 7, 2, why, sizeof(why)));
    ck_assert(!tc_cuda_runtime_supports(13000, 6, 1, why, sizeof(why)));
    /* Turing and newer run with CUDA 13 */
    ck_assert(tc_cuda_runtime_supports(13000, 7, 5, why, sizeof(why)));
    ck_assert(tc_cuda_runtime_supports(13000, 8, 0, why, sizeof(why)));
    ck_assert(tc_cuda_runtime_supports(13000, 9, 0, why, sizeof(why)));
    ck_assert(tc_cuda_runtime_supports(13000, 10, 0, why, sizeof(why)));
    /* CUDA 12 still has Volta, not Kepler; 11.8 has both */
    ck_assert(tc_cuda_runtime_supports(12080, 7, 0, why, sizeof(why)));
    ck_assert(tc_cuda_runtime_supports(12000, 5, 0, why, sizeof(why)));
    ck_assert(!tc_cuda_runtime_supports(12040, 3, 7, why, sizeof(why)));
    ck_assert_msg(strstr(why, "CUDA 11.8"), "%s", why);
    ck_assert(tc_cuda_runtime_supports(11080, 3, 7, why, sizeof(why)));
    ck_assert(tc_cuda_runtime_supports(11080, 7, 0, why, sizeof(why)));
}
END_TEST

START_TEST(test_arch_family)
{
    enum tc_arch a = TC_ARCH_COUNT;

    ck_assert(tc_cuda_arch_family(7, 0, &a) && a == TC_ARCH_VOLTA);
    ck_assert(tc_cuda_arch_family(7, 5, &a) && a == TC_ARCH_TURING);
    ck_assert(tc_cuda_arch_family(8, 6, &a) && a == TC_ARCH_AMPERE);
    ck_assert(tc_cuda_arch_family(8, 9, &a) && a == TC_ARCH_ADA);
    ck_assert(tc_cuda_arch_family(9, 0, &a) && a == TC_ARCH_HOPPER);
    ck_assert(tc_cuda_arch_family(10, 0, &a) && a == TC_ARCH_BLACKWELL);
    ck_assert(tc_cuda_arch_family(12, 0, &a) && a == TC_ARCH_BLACKWELL);
    ck_assert(tc_cuda_arch_family(6, 0, &a) && a == TC_ARCH_PASCAL);
    ck_assert(tc_cuda_arch_family(6, 1, &a) && a == TC_ARCH_PASCAL);
    /* older parts have no family (Maxwell was once stored as Volta, the
     * enum's zero) */
    ck_assert(!tc_cuda_arch_family(5, 2, &a));
    ck_assert(!tc_cuda_arch_family(7, 7, &a));
    ck_assert(tc_hip_arch_family("gfx90a:sramecc+:xnack-", &a) && a == TC_ARCH_CDNA2);
    ck_assert(tc_hip_arch_family("gfx942", &a) && a == TC_ARCH_CDNA3);
    ck_assert(tc_hip_arch_family("gfx908:xnack-", &a) && a == TC_ARCH_CDNA1);
    ck_assert(!tc_hip_arch_family("gfx906", &a));
    ck_assert(!tc_hip_arch_family("gfx90", &a));
}
END_TEST

START_TEST(test_group_policy)
{
    /* CUDA events: 0.5 us; grouped below 5 us, to >= 50 us per sample */
    ck_assert_int_eq(tc_harness_group(5.0, 0.5), 1);
    ck_assert_int_eq(tc_harness_group(100.0, 0.5), 1);
    ck_assert_int_eq(tc_harness_group(4.9, 0.5), 11);
    ck_assert_int_eq(tc_harness_group(2.0, 0.5), 25);
    ck_assert_int_eq(tc_harness_group(1.0, 0.5), 50);
    ck_assert_int_eq(tc_harness_group(0.3, 0.5), TC_GROUP_MAX);
    ck_assert_int_eq(tc_harness_group(0.0, 0.5), TC_GROUP_MAX); /* below resolution */
    /* no timer resolution (cpu) or no reading: never */
    ck_assert_int_eq(tc_harness_group(1.0, 0), 1);
    ck_assert_int_eq(tc_harness_group(NAN, 0.5), 1);
}
END_TEST

START_TEST(test_warmup_policy)
{
    struct tc_harness_opts o;

    tc_harness_defaults(&o); /* 2 repetitions, 100 ms */
    /* never before the count and the time */
    ck_assert(!tc_warmup_done(&o, 1, 500, 10, 10));
    ck_assert(!tc_warmup_done(&o, 1000, 99, 10, 10));
    /* then as soon as two batches agree within 2% */
    ck_assert(tc_warmup_done(&o, 2, 100, 10, 10));
    ck_assert(tc_warmup_done(&o, 50, 150, 10.0, 9.85));
    /* a reading still falling (clocks ramping) goes on ... */
    ck_assert(!tc_warmup_done(&o, 50, 150, 12.0, 10.0));
    ck_assert(!tc_warmup_done(&o, 50, 150, NAN, 10.0));
    /* ... up to 5x the minimum time */
    ck_assert(!tc_warmup_done(&o, 50, 499, 12.0, 10.0));
    ck_assert(tc_warmup_done(&o, 50, 500, 12.0, 10.0));
    /* by count alone */
    o.warmup_ms = 0;
    ck_assert(!tc_warmup_done(&o, 1, 1000, 10, 10));
    ck_assert(tc_warmup_done(&o, 2, 0, NAN, NAN));
    /* by time alone */
    o.warmup_reps = 0;
    o.warmup_ms = 50;
    ck_assert(!tc_warmup_done(&o, 100, 10, 10, 10));
    ck_assert(tc_warmup_done(&o, 1, 60, 10, 10.1));
}
END_TEST

/* value by value: the fills hold no NaN, and memcmp on floats would also
 * tell +0 from -0 */
static bool same_floats(const float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

START_TEST(test_random_fill)
{
    float f[1000];
    uint16_t h[1000], bf[1000];
    uint8_t f8[1000];
    double d[100];
    int neg = 0;

    tc_random_fill(f, 1000, TC_DTYPE_FP32, 1);
    for (int i = 0; i < 1000; i++) {
        ck_assert(fabsf(f[i]) >= 0.5f && fabsf(f[i]) < 1.0f);
        neg += f[i] < 0;
    }
    ck_assert(neg > 400 && neg < 600); /* both signs */
    tc_random_fill(d, 100, TC_DTYPE_FP64, 2);
    for (int i = 0; i < 100; i++)
        ck_assert(fabs(d[i]) >= 0.5 && fabs(d[i]) < 1.0);
    tc_random_fill(h, 1000, TC_DTYPE_FP16, 3);
    tc_random_fill(bf, 1000, TC_DTYPE_BF16, 3);
    tc_random_fill(f8, 1000, TC_DTYPE_FP8, 3);
    for (int i = 0; i < 1000; i++) {
        ck_assert_int_eq((h[i] >> 10) & 0x1f, 14);  /* fp16 exponent of [0.5, 1) */
        ck_assert_int_eq((bf[i] >> 7) & 0xff, 126); /* bf16 */
        ck_assert_int_eq((f8[i] >> 3) & 0xf, 6);    /* e4m3, bias 7 */
    }
    /* deterministic in the seed, different across seeds */
    {
        float g[1000];

        tc_random_fill(g, 1000, TC_DTYPE_FP32, 1);
        ck_assert(same_floats(f, g, 1000));
        tc_random_fill(g, 1000, TC_DTYPE_FP32, 9);
        ck_assert(!same_floats(f, g, 1000));
    }
}
END_TEST

#if HAVE_CPU_BACKEND
static struct tc_harness_opts quick_opts(void)
{
    struct tc_harness_opts o;

    tc_harness_defaults(&o);
    o.min_reps = 3;
    o.max_reps = 3;
    o.warmup_reps = 1;
    return o;
}

START_TEST(test_cpu_gemm_layouts)
{
    const struct tc_backend_ops *cpu = tc_backend_find("cpu");
    struct tc_backend *b;
    struct tc_backend_info info;
    struct tc_harness_opts o = quick_opts();

    ck_assert_ptr_eq(cpu, &tc_backend_cpu);
    ck_assert_ptr_null(tc_backend_find("nope"));
    ck_assert_int_eq(cpu->open(1, &b, &info), TC_ERR_NOT_FOUND);
    ck_assert_int_eq(cpu->open(0, &b, &info), TC_OK);
    ck_assert_str_eq(info.name, "cpu");
    ck_assert(info.flush_bytes >= 1 << 20);
    ck_assert(info.blas_version[0] != '\0');
    for (int l = 0; l < TC_LAYOUT_COUNT; l++) {
        struct tc_shape s = {.kind = TC_SHAPE_BMM,
                             .dtype = TC_DTYPE_FP64,
                             .layout = (enum tc_layout)l,
                             .m = 7,
                             .n = 5,
                             .k = 3,
                             .batch = 2};
        struct tc_measurement m;
        const double *A, *B, *C;
        bool ta = l == TC_LAYOUT_TN || l == TC_LAYOUT_TT;
        bool tb = l == TC_LAYOUT_NT || l == TC_LAYOUT_TT;

        ck_assert_int_eq(tc_harness_measure(cpu, b, &o, &s, &m), TC_OK);
        ck_assert_int_eq(m.outcome.status, TC_STATUS_OK);
        ck_assert_int_eq(m.total.n, 3);
        ck_assert(m.total.median_us > 0 && m.total.min_us <= m.total.median_us);
        A = tc_backend_cpu_buffer(b, 0);
        B = tc_backend_cpu_buffer(b, 1);
        C = tc_backend_cpu_buffer(b, 2);
        ck_assert(A[0] != 0 && B[0] != 0);
        /* C = A . B in the row-major convention, every element of batch 1 */
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 5; j++) {
                double want = 0;

                for (int p = 0; p < 3; p++)
                    want +=
                        A[21 + (ta ? p * 7 + i : i * 3 + p)] * B[15 + (tb ? j * 3 + p : p * 5 + j)];
                ck_assert_double_eq_tol(C[35 + i * 5 + j], want, 1e-12);
            }
    }
    {
        struct tc_shape s = {
            .kind = TC_SHAPE_GEMM, .dtype = TC_DTYPE_FP16, .m = 8, .n = 8, .k = 8, .batch = 1};
        struct tc_measurement m;

        ck_assert_int_eq(tc_harness_measure(cpu, b, &o, &s, &m), TC_OK);
        ck_assert_int_eq(m.outcome.status, TC_STATUS_UNSUPPORTED);
        ck_assert(strstr(m.outcome.message, "fp16") != NULL);
    }
    {
        /* 3 x 256 GiB of operands: refused as data before any allocation */
        struct tc_shape s = {.kind = TC_SHAPE_GEMM,
                             .dtype = TC_DTYPE_FP32,
                             .m = 1 << 18,
                             .n = 1 << 18,
                             .k = 1 << 18,
                             .batch = 1};
        struct tc_measurement m;

        ck_assert_int_eq(tc_harness_measure(cpu, b, &o, &s, &m), TC_OK);
        ck_assert_int_eq(m.outcome.status, TC_STATUS_OOM);
        ck_assert(strstr(m.outcome.message, "768.0 GiB") != NULL);
    }
    cpu->close(b);
}
END_TEST

START_TEST(test_cpu_attention)
{
    const struct tc_backend_ops *cpu = tc_backend_find("cpu");
    struct tc_backend *b;
    struct tc_backend_info info;
    struct tc_harness_opts o = quick_opts();
    /* GQA (4 query heads on 2 kv heads), causal, 5 queries over 7 keys */
    struct tc_shape s = {.kind = TC_SHAPE_ATTENTION,
                         .dtype = TC_DTYPE_FP32,
                         .batch = 2,
                         .heads = 4,
                         .kv_heads = 2,
                         .seq_q = 5,
                         .seq_kv = 7,
                         .head_dim = 3,
                         .causal = true};
    struct tc_measurement m;
    const float *Q, *K, *V, *O;
    const ptrdiff_t bq = 1, hq = 3; /* check batch 1, head 3 -> kv head 1 */

    ck_assert_int_eq(cpu->open(0, &b, &info), TC_OK);
    /* fused attention is the GPU backends': stored as unsupported, never
     * measured as the unfused path */
    s.impl = TC_ATTN_CUDNN;
    ck_assert_int_eq(tc_harness_measure(cpu, b, &o, &s, &m), TC_OK);
    ck_assert_int_eq(m.outcome.status, TC_STATUS_UNSUPPORTED);
    ck_assert(strstr(m.outcome.message, "unfused attention, forward only (not cudnn)"));
    s.impl = TC_ATTN_UNFUSED;
    ck_assert_int_eq(tc_harness_measure(cpu, b, &o, &s, &m), TC_OK);
    ck_assert_int_eq(m.outcome.status, TC_STATUS_OK);
    ck_assert(m.has_parts);
    ck_assert(m.parts[0].median_us > 0 && m.parts[2].median_us > 0);
    Q = tc_backend_cpu_buffer(b, 0);
    K = tc_backend_cpu_buffer(b, 1);
    V = tc_backend_cpu_buffer(b, 2);
    O = tc_backend_cpu_buffer(b, 4);
    for (int q = 0; q < 5; q++) {
        const float *qv = Q + ((bq * 4 + hq) * 5 + q) * 3;
        const float *kb = K + (bq * 2 + 1) * 7 * 3, *vb = V + (bq * 2 + 1) * 7 * 3;
        double w[7], mx = -1e30, sum = 0;
        int valid = q + 1 + (7 - 5); /* causal, aligned to the last key */

        for (int j = 0; j < valid; j++) {
            w[j] = 0;
            for (int d = 0; d < 3; d++)
                w[j] += qv[d] * kb[j * 3 + d];
            w[j] /= sqrt(3.0);
            mx = fmax(mx, w[j]);
        }
        for (int j = 0; j < valid; j++)
            sum += (w[j] = exp(w[j] - mx));
        for (int d = 0; d < 3; d++) {
            double want = 0;

            for (int j = 0; j < valid; j++)
                want += w[j] / sum * vb[j * 3 + d];
            ck_assert_double_eq_tol(O[((bq * 4 + hq) * 5 + q) * 3 + d], want, 1e-5);
        }
    }
    cpu->close(b);
}
END_TEST

static int progress_calls;

static void count_progress(void *ud, const struct tc_collect_summary *sum, const struct tc_shape *s,
                           const struct tc_measurement *m)
{
    progress_calls++;
}

START_TEST(test_collect_run_resume)
{
    static const char yaml[] = "name: unit\ndtypes: [fp32, fp16]\nlayouts: NN\nsets:\n"
                               "  - square: [16, 32, 48]\n"
                               "  - kind: attention\n    batch: 1\n    heads: 2\n"
                               "    seq_q: 16\n    head_dim: 8\n";
    struct tc_sweep *sw = tc_sweep_parse(yaml, sizeof(yaml) - 1, "unit.yaml");
    struct tc_collect_opts o;
    struct tc_collect_summary sum;
    char dir[] = "/tmp/tilecast-test-XXXXXX", path[64], cmd[128];
    struct tc_db *db;
    struct tc_gemm_row row;
    bool found;
    int64_t first_run;

    ck_assert_msg(sw != NULL, "%s", tc_last_error());
    ck_assert_uint_eq(tc_sweep_count(sw), 8);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/unit.db", dir);
    tc_collect_defaults(&o);
    o.backend = tc_backend_find("cpu");
    o.db_path = path;
    o.gpu_id = "unit-cpu";
    o.harness.min_reps = 3;
    o.harness.max_reps = 3;
    o.harness.warmup_reps = 1;
    o.progress = count_progress;

    /* shard 1/2 first: only its shapes */
    o.shard_index = 1;
    o.shard_count = 2;
    progress_calls = 0;
    ck_assert_msg(tc_collect_run(&o, sw, &sum) == TC_OK, "%s", tc_last_error());
    ck_assert(!sum.resumed);
    ck_assert_uint_eq(sum.total, 8);
    ck_assert_uint_eq(sum.in_shard, 4);
    ck_assert_uint_eq(sum.measured, 4);
    ck_assert_int_eq(progress_calls, 4);
    first_run = sum.run_id;

    /* the whole sweep: the same run configuration (the shard is not part of
     * it), so shard 1's shapes are skipped */
    o.shard_index = 0;
    o.shard_count = 1;
    ck_assert_msg(tc_collect_run(&o, sw, &sum) == TC_OK, "%s", tc_last_error());
    ck_assert(sum.resumed);
    ck_assert_int_eq(sum.run_id, first_run);
    ck_assert_uint_eq(sum.skipped, 4);
    ck_assert_uint_eq(sum.measured, 4);
    /* fp32: 3 GEMMs + attention ok; fp16: 4 unsupported, across both calls */
    ck_assert_msg(tc_collect_run(&o, sw, &sum) == TC_OK, "%s", tc_last_error());
    ck_assert_uint_eq(sum.skipped, 8);
    ck_assert_uint_eq(sum.measured, 0);

    /* another harness setting is another run configuration */
    o.harness.rel_ci = 0.05;
    ck_assert_msg(tc_collect_run(&o, sw, &sum) == TC_OK, "%s", tc_last_error());
    ck_assert(!sum.resumed);
    ck_assert_int_ne(sum.run_id, first_run);
    ck_assert_uint_eq(sum.measured, 8);
    ck_assert_uint_eq(sum.ok, 4);
    /* the cpu backend runs no fp16: unsupported, not failed */
    ck_assert_uint_eq(sum.unsupported, 4);
    ck_assert_uint_eq(sum.failed, 0);
    ck_assert(sum.kernel_s > 0 && sum.kernel_s <= sum.wall_s);

    ck_assert_msg(tc_db_open(path, TC_DB_READONLY, &db) == TC_OK, "%s", tc_last_error());
    ck_assert_int_eq(tc_db_integrity_check(db), TC_OK);
    ck_assert_int_eq(
        tc_db_has_gemm(db, first_run, TC_DTYPE_FP16, TC_LAYOUT_NN, 48, 48, 48, 1, &found), TC_OK);
    ck_assert(found);
    ck_assert_int_eq(
        tc_db_lookup_gemm(db, "unit-cpu", TC_DTYPE_FP32, TC_LAYOUT_NN, 32, 32, 32, 1, &row), TC_OK);
    ck_assert_int_eq(row.status, TC_STATUS_OK);
    ck_assert(row.time_us > 0 && row.min_us <= row.time_us);
    ck_assert_int_eq(row.reps, 3);
    ck_assert_str_eq(row.algo, "cblas_sgemm");
    tc_db_close(db);
    tc_sweep_free(sw);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST
#endif

static Suite *collector_suite(void)
{
    Suite *s = suite_create("collector");
    TCase *tc = tcase_create("core");

    tcase_add_unchecked_fixture(tc, setup_paths, NULL);
    tcase_add_test(tc, test_sweep_all_kinds);
    tcase_add_loop_test(tc, test_sweep_errors, 0,
                        (int)(sizeof(bad_sweeps) / sizeof(bad_sweeps[0])));
    tcase_add_test(tc, test_sweep_missing_file);
    tcase_add_test(tc, test_sweep_fused);
    tcase_add_test(tc, test_sweep_strings);
    tcase_add_test(tc, test_shipped_sweeps);
    tcase_add_test(tc, test_shard_parse);
    tcase_add_test(tc, test_shard_partition);
    tcase_add_test(tc, test_shard_small);
    tcase_add_test(tc, test_stats);
    tcase_add_test(tc, test_harness_synthetic);
    tcase_add_test(tc, test_warmup_policy);
    tcase_add_test(tc, test_group_policy);
    tcase_add_test(tc, test_random_fill);
    tcase_add_test(tc, test_algo_attributes);
    tcase_add_test(tc, test_devbufs_oom_retry);
    tcase_add_test(tc, test_cuda_runtime_supports);
    tcase_add_test(tc, test_arch_family);
#if HAVE_CPU_BACKEND
    tcase_add_test(tc, test_cpu_gemm_layouts);
    tcase_add_test(tc, test_cpu_attention);
    tcase_add_test(tc, test_collect_run_resume);
#endif
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, collector_fault_tcase());
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(collector_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
