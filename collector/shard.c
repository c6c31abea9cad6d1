/* Sharding: every process of an array job computes the same partition of
 * the sweep from the same costs, so no coordination is needed. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "tc-internal.h"

int tc_shard_parse(const char *text, int *index, int *count)
{
    const char *slash;
    char left[32];
    long long i, n;

    if (!text || !(slash = strchr(text, '/')) || (size_t)(slash - text) >= sizeof(left))
        return tc_error(TC_ERR_INVALID, "shard '%s': expected I/N, e.g. 0/4", text ? text : "");
    memcpy(left, text, (size_t)(slash - text));
    left[slash - text] = '\0';
    if (tc_parse_i64(left, &i) < 0 || tc_parse_i64(slash + 1, &n) < 0)
        return tc_error(TC_ERR_INVALID, "shard '%s': expected I/N with integers", text);
    if (n < 1 || n > 1000000 || i < 0 || i >= n)
        return tc_error(TC_ERR_RANGE, "shard '%s': need 0 <= I < N (and N <= 1000000)", text);
    *index = (int)i;
    *count = (int)n;
    return TC_OK;
}

struct item {
    double cost;
    size_t index;
};

static int cmp_item(const void *pa, const void *pb)
{
    const struct item *a = pa, *b = pb;

    if (a->cost != b->cost)
        return a->cost > b->cost ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* A min-heap of shards keyed by (load, shard index). */
struct bin {
    double load;
    int shard;
};

static bool bin_less(const struct bin *a, const struct bin *b)
{
    return a->load < b->load || (a->load == b->load && a->shard < b->shard);
}

static void sift_down(struct bin *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        struct bin t;

        if (l < n && bin_less(&h[l], &h[m]))
            m = l;
        if (r < n && bin_less(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

int tc_shard_assign(const double *cost, size_t n, int count, int *shard_of)
{
    struct item *items;
    struct bin *heap;

    if (count < 1 || (n && (!cost || !shard_of)))
        return tc_error(TC_ERR_INVALID, "tc_shard_assign: bad arguments");
    items = malloc((n ? n : 1) * sizeof(*items));
    heap = malloc((size_t)count * sizeof(*heap));
    if (!items || !heap) {
        free(items);
        free(heap);
        return tc_error(TC_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        items[i].cost = isfinite(cost[i]) && cost[i] > 0 ? cost[i] : 0;
        items[i].index = i;
    }
    /* Longest processing time first: the largest shapes spread out first,
     * the small ones fill the gaps, which bounds the imbalance by the cost
     * of one shape. */
    qsort(items, n, sizeof(*items), cmp_item);
    for (int s = 0; s < count; s++) {
        heap[s].load = 0;
        heap[s].shard = s;
    }
    for (size_t i = 0; i < n; i++) {
        shard_of[items[i].index] = heap[0].shard;
        /* zero-cost items still count a little so they spread evenly too */
        heap[0].load += items[i].cost > 0 ? items[i].cost : 1e-300;
        sift_down(heap, (size_t)count, 0);
    }
    free(items);
    free(heap);
    return TC_OK;
}

int tc_collect_select(const struct tc_sweep *sweep, const double *costs, int shard_index,
                      int shard_count, size_t *idx, size_t *n)
{
    size_t total = tc_sweep_count(sweep);
    const struct tc_shape *shapes = tc_sweep_shapes(sweep);
    double *own = NULL;
    int *shard_of = NULL;
    int err;

    if (shard_count < 1 || shard_index < 0 || shard_index >= shard_count)
        return tc_error(TC_ERR_RANGE, "shard %d/%d: need 0 <= I < N", shard_index, shard_count);
    *n = 0;
    if (shard_count == 1) {
        for (size_t i = 0; i < total; i++)
            idx[(*n)++] = i;
        return TC_OK;
    }
    if (!costs) {
        if (!(own = malloc(total * sizeof(*own))))
            return tc_error(TC_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < total; i++)
            own[i] = tc_shape_flops(&shapes[i]);
        costs = own;
    }
    if (!(shard_of = malloc(total * sizeof(*shard_of)))) {
        err = tc_error(TC_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((err = tc_shard_assign(costs, total, shard_count, shard_of)) < 0)
        goto out;
    for (size_t i = 0; i < total; i++)
        if (shard_of[i] == shard_index)
            idx[(*n)++] = i;
out:
    free(own);
    free(shard_of);
    return err;
}
