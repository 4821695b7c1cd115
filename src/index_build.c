#include "index_build.h"

#include <math.h>

#include "cost.h"
#include "select.h"

/* A pending subtree of the pre-order builders (explicit stacks, so input size never drives
 * recursion): its range of points and the parent's child field that receives its node id. */
typedef struct span {
    uint32_t first, count;
    uint32_t *link; /* NULL for the root */
} span;

/* The nodes of a full binary tree whose leaves hold at least `least` of n points each (a root
 * that never split may hold fewer): one fewer than twice the leaves. */
static uint32_t nodes_for_leaves_of(uint32_t n, uint32_t least) {
    if (n == 0) return 0;
    uint32_t leaves = n / (least ? least : 1u);
    return 2u * (leaves ? leaves : 1u) - 1u;
}

/* A node splits only past leaf_size points, and each child gets at least a quarter of the
 * parent's points rounded down to whole blocks (the split below is kept within the middle half;
 * a split at the midpoint gives the right child half), and at least one point: no leaf holds
 * fewer than m = that quarter of leaf_size + 1 points. At most n / m leaves, and a full binary
 * tree has one node fewer than twice its leaves. With the default leaves of 128 points that is
 * n / 16 nodes where 2n + 1 (leaves of one point) reserved 32 times the boxes' bytes, which the
 * build zeroed and the system mapped for nothing. */
uint32_t pm_bound_tree_max_nodes(uint32_t n, int leaf_size) {
    return nodes_for_leaves_of(n, ((uint32_t)leaf_size + 1u) / 4u / PM_BT_BLOCK * PM_BT_BLOCK);
}

uint32_t pm_bound_tree_build(pmdb_bt_node *nodes, float *boxes, uint32_t capacity, uint32_t *perm, const float *coords,
                             const float *rho, const float *addend, uint32_t n, int dims, int leaf_size) {
    if (n == 0) return 0;
    for (uint32_t i = 0; i < n; i++) perm[i] = i;
    /* The stack holds at most one pending right sibling per level: 64 levels cover 2^64 points. */
    span stack[128];
    uint32_t top = 0, count = 0;
    stack[top++] = (span){0, n, NULL};
    const int P = pm_bt_box_lanes(dims), bstride = pm_bt_box_stride(dims);
    while (top) {
        span s = stack[--top];
        if (count == capacity) return UINT32_MAX;
        uint32_t id = count++;
        nodes[id] = (pmdb_bt_node){s.first, s.count, 0, 0};
        if (s.link) *s.link = id;
        float *lo = boxes + (size_t)id * bstride, *hi = lo + P;
        const int split = s.count > (uint32_t)leaf_size;
        /* The box in locals, min and max as selects (no NaN reaches here): loops over the
         * coordinates the compiler can vectorise, where comparisons and stores through the
         * output (which might alias the coordinates) made this the build's slowest loop. */
        float box_lo[PM_MAX_PCA_COMPONENTS], box_hi[PM_MAX_PCA_COMPONENTS];
        float rho_lo = INFINITY, rho_hi = -INFINITY, min_add = INFINITY;
        double sum[PM_MAX_PCA_COMPONENTS];
        for (int d = 0; d < dims; d++) {
            box_lo[d] = INFINITY;
            box_hi[d] = -INFINITY;
            sum[d] = 0.0;
        }
        for (uint32_t i = s.first; i < s.first + s.count; i++) {
            const uint32_t pi = perm[i];
            const float *c = coords + (size_t)pi * dims;
            for (int d = 0; d < dims; d++) {
                float v = c[d];
                box_lo[d] = v < box_lo[d] ? v : box_lo[d];
                box_hi[d] = v > box_hi[d] ? v : box_hi[d];
            }
            if (split)
                for (int d = 0; d < dims; d++) sum[d] += c[d];
            rho_lo = rho[pi] < rho_lo ? rho[pi] : rho_lo;
            rho_hi = rho[pi] > rho_hi ? rho[pi] : rho_hi;
            if (addend[pi] < min_add) min_add = addend[pi];
        }
        for (int d = 0; d < P; d++) {
            lo[d] = d < dims ? box_lo[d] : d == dims ? rho_lo : 0.0f;
            hi[d] = d < dims ? box_hi[d] : d == dims ? rho_hi : 0.0f;
        }
        hi[P] = min_add;
        hi[P + 1] = hi[P + 2] = hi[P + 3] = 0.0f;
        if (!split) continue;
        /* Split across the coordinate the points spread most along (mean absolute deviation),
         * not the one of largest extent: a few outlying poses (a stumble in a walk) stretch an
         * extent without widening the bulk, and splitting there leaves fat boxes that many
         * queries' bounds reach. With these splits (and the position below) fewer leaves reach a
         * query's bound, so the exact walk visits fewer nodes and bounds fewer blocks (the tree
         * nodes of `make bench`); variance, which outliers still sway, gets most but not all of
         * that. Sums are doubles in point order,
         * so the choice does not depend on the thread count. */
        double dev[PM_MAX_PCA_COMPONENTS];
        for (int d = 0; d < dims; d++) {
            dev[d] = 0.0;
            sum[d] /= s.count;
        }
        for (uint32_t i = s.first; i < s.first + s.count; i++) {
            const float *c = coords + (size_t)perm[i] * dims;
            for (int d = 0; d < dims; d++) dev[d] += fabs(c[d] - sum[d]);
        }
        int best = -1;
        double spread = 0.0;
        for (int d = 0; d < dims; d++)
            if (hi[d] > lo[d] && dev[d] > spread) {
                spread = dev[d];
                best = d;
            }
        /* Splits fall on multiples of PM_BT_BLOCK so that every leaf starts a block of points. */
        uint32_t mid = s.count / 2 / PM_BT_BLOCK * PM_BT_BLOCK;
        if (mid == 0) continue;
        if (best >= 0) {
            /* At the mean rather than the median: where a skewed coordinate thins out, so that
             * a dense cluster (an idle take) is not cut in two and its sparse tail gets its own
             * boxes (fewer points bounded per query, most of all for far queries and under
             * dynamic weights). Kept within the middle half, so the larger child holds at most
             * about 3/4 of the points: at most 59 levels for the largest database the format
             * allows (2^27 vectors, leaves of 8), below the 64 the loader accepts. */
            uint32_t below = 0;
            for (uint32_t i = s.first; i < s.first + s.count; i++) below += coords[(size_t)perm[i] * dims + best] < sum[best];
            uint32_t quarter = s.count / 4 / PM_BT_BLOCK * PM_BT_BLOCK;
            uint32_t lo_m = PM_MAX(quarter, (uint32_t)PM_BT_BLOCK), hi_m = (s.count - quarter) / PM_BT_BLOCK * PM_BT_BLOCK;
            if (hi_m >= s.count) hi_m -= PM_BT_BLOCK;
            uint32_t at = (below + PM_BT_BLOCK / 2) / PM_BT_BLOCK * PM_BT_BLOCK;
            mid = PM_MIN(PM_MAX(at, lo_m), hi_m); /* lo_m <= hi_m once a node splits (>= 16 points) */
            pm_select_by_key(perm + s.first, s.count, mid, coords + best, (uint32_t)dims);
        } else if (hi[dims] > lo[dims]) pm_select_by_key(perm + s.first, s.count, mid, rho, 1);
        /* else: identical points, any split is as good; keep index order. */
        stack[top++] = (span){s.first + mid, s.count - mid, &nodes[id].right};
        stack[top++] = (span){s.first, mid, &nodes[id].left};
    }
    return count;
}

void pm_bound_tree_value_boxes(float *out, const pmdb_bt_node *nodes, uint32_t count, const float *values, int stride) {
    for (uint32_t i = count; i-- > 0;) {
        const pmdb_bt_node *n = &nodes[i];
        float *lo = out + (size_t)i * 2 * stride, *hi = lo + stride;
        if (n->left) {
            const float *a = out + (size_t)n->left * 2 * stride, *b = out + (size_t)n->right * 2 * stride;
            for (int d = 0; d < stride; d++) {
                lo[d] = a[d] < b[d] ? a[d] : b[d];
                hi[d] = a[stride + d] > b[stride + d] ? a[stride + d] : b[stride + d];
            }
            continue;
        }
        const float *x = values + (size_t)n->first * stride;
        for (int d = 0; d < stride; d++) lo[d] = hi[d] = x[d];
        for (uint32_t r = 1; r < n->count; r++) {
            x += stride;
            for (int d = 0; d < stride; d++) {
                if (x[d] < lo[d]) lo[d] = x[d];
                if (x[d] > hi[d]) hi[d] = x[d];
            }
        }
    }
}

/* A node splits only past leaf_size points, at the median: each child holds at least half of
 * leaf_size + 1 points (rounded down), and so does every leaf but a root that never split. */
uint32_t pm_kd_tree_max_nodes(uint32_t n, int leaf_size) {
    return nodes_for_leaves_of(n, ((uint32_t)leaf_size + 1u) / 2u);
}

uint32_t pm_kd_tree_build(pmdb_kd_node *nodes, uint32_t capacity, uint32_t *perm, const float *points, uint32_t n, int k,
                          int leaf_size) {
    if (n == 0) return 0;
    for (uint32_t i = 0; i < n; i++) perm[i] = i;
    span stack[128];
    uint32_t top = 0, count = 0;
    stack[top++] = (span){0, n, NULL};
    while (top) {
        span s = stack[--top];
        if (count == capacity) return UINT32_MAX;
        uint32_t id = count++;
        if (s.link) *s.link = id;
        nodes[id] = (pmdb_kd_node){s.first, s.count, -1, 0.0f};
        if (s.count <= (uint32_t)leaf_size) continue;
        int best = -1;
        float extent = 0.0f;
        for (int d = 0; d < k; d++) {
            float lo = INFINITY, hi = -INFINITY;
            for (uint32_t i = s.first; i < s.first + s.count; i++) {
                float v = points[(size_t)perm[i] * k + d];
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
            if (hi - lo > extent) {
                extent = hi - lo;
                best = d;
            }
        }
        if (best < 0) continue; /* all points equal: a leaf, however large */
        uint32_t mid = s.count / 2;
        pm_select_by_key(perm + s.first, s.count, mid, points + best, (uint32_t)k);
        nodes[id].dim = best;
        nodes[id].split = points[(size_t)perm[s.first + mid] * k + best];
        nodes[id].a = nodes[id].b = 0;
        stack[top++] = (span){s.first + mid, s.count - mid, &nodes[id].b};
        stack[top++] = (span){s.first, mid, &nodes[id].a};
    }
    return count;
}

/* The search's own cost kernel, so that radii and query distances round alike. */
float pm_vp_row_distance(const void *context, uint32_t a, uint32_t b) {
    const pm_vp_rows *c = (const pm_vp_rows *)context;
    return sqrtf(pm_cost_row(c->values + (size_t)a * c->stride, c->values + (size_t)b * c->stride, c->wsqrt, c->stride));
}

/* A node of c > leaf_size points keeps one as its vantage point and gives its outside child
 * ceil((c - 1) / 2) - 1 of the rest, its inside child one more: every leaf but a root that never
 * split holds at least ceil(leaf_size / 2) - 1 points. Below leaves of 3 a leaf may be empty; each
 * inner node still holds a point of its own, so there are at most n of them. */
uint32_t pm_vp_tree_max_nodes(uint32_t n, int leaf_size) {
    uint32_t half = ((uint32_t)leaf_size + 1u) / 2u;
    if (half < 2u) return n ? 2u * n + 1u : 0u;
    return nodes_for_leaves_of(n, half - 1u);
}

uint32_t pm_vp_tree_build(pmdb_vp_node *nodes, uint32_t capacity, uint32_t *items, float *scratch, uint32_t n,
                          int leaf_size, pm_vp_distance_fn distance, const void *context) {
    if (n == 0) return 0;
    for (uint32_t i = 0; i < n; i++) items[i] = i;
    float *dist = scratch; /* indexed by point */
    span stack[128];
    uint32_t top = 0, count = 0;
    stack[top++] = (span){0, n, NULL};
    while (top) {
        span s = stack[--top];
        if (count == capacity) return UINT32_MAX;
        uint32_t id = count++;
        if (s.link) *s.link = id;
        if (s.count <= (uint32_t)leaf_size) {
            nodes[id] = (pmdb_vp_node){s.first, 0.0f, 0, s.count};
            continue;
        }
        /* Vantage point: the point farthest from the span's first point - a point on the
         * periphery splits the rest into well-separated shells. */
        uint32_t far = s.first;
        float far_d = -1.0f;
        for (uint32_t i = s.first + 1; i < s.first + s.count; i++) {
            float d = distance(context, items[s.first], items[i]);
            if (d > far_d) {
                far_d = d;
                far = i;
            }
        }
        uint32_t t = items[s.first];
        items[s.first] = items[far];
        items[far] = t;
        uint32_t vp = items[s.first];
        for (uint32_t i = s.first + 1; i < s.first + s.count; i++) dist[items[i]] = distance(context, vp, items[i]);
        uint32_t rest = s.count - 1, mid = rest / 2;
        pm_select_by_key(items + s.first + 1, rest, mid, dist, 1);
        /* Inside = ranks [0, mid], all with distance <= mu; outside = the rest, all >= mu. */
        float mu = dist[items[s.first + 1 + mid]];
        nodes[id] = (pmdb_vp_node){vp, mu, 0, 0};
        stack[top++] = (span){s.first + 2 + mid, rest - mid - 1, &nodes[id].outside};
        stack[top++] = (span){s.first + 1, mid + 1, &nodes[id].inside};
    }
    return count;
}
