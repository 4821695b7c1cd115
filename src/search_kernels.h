/* Private: the scans that read most of the database - brute force and the exact mode's
 * best-first walk of the bound tree - compiled three times: baseline SIMD in src/search_kernels.c,
 * AVX2 in src/search_kernels_avx2.c and AVX-512 in src/search_kernels_avx512.c. The including
 * file defines block_keys() first:
 *
 *   unsigned block_keys(float keys[PM_BT_BLOCK], const float *block, const float *qz, int rows,
 *                       float r2, const float *addend, float lim);
 *
 * which bounds the 8 points of a leaf block - squared distance in the exact-mode lanes, rows
 * summed alternately into two accumulators per lane (even rows, odd rows), the two added, times
 * r2, plus each vector's smallest addend - into keys and returns the bit mask of keys <= lim
 * (0, keys unwritten, when the first PM_BT_EARLY_ROWS rows already put every point past lim).
 * Every build adds the same lanes in the same order, so the bounds, the candidates and the
 * work counters are the same bits on every machine. */
#ifndef PM_SEARCH_KERNELS_H
#define PM_SEARCH_KERNELS_H

#include "search_internal.h"

/* The 8-row cost kernel: cost.h's, unless the including build brings its own with the same lane
 * operations (the AVX-512 build: two rows a register). */
#ifndef PM_COST_ROWS8
#define PM_COST_ROWS8 pm_cost_rows8
#endif

/* Lanes i..i+3 of the distance from q to a box (lo[n] then hi[n]): 0 inside. */
PM_ALWAYS_INLINE static inline pm_v4f box_gap4(const float *box, const float *q, int n, int i) {
    const pm_v4f zero = {0, 0, 0, 0};
    pm_v4f x = pm_v4_load(q + i);
    pm_v4f below = pm_v4_load(box + i) - x, above = x - pm_v4_load(box + n + i);
    below = (pm_v4f)((pm_v4i)below & (below > zero));
    above = (pm_v4f)((pm_v4i)above & (above > zero));
    return below + above;
}

/* Lanes i..i+7: one register in the AVX2 build, two 4-lane halves in the baseline one; each
 * lane's arithmetic is the same in both. (Out through a pointer: an 8-lane value returned would
 * change the ABI between the builds.) */
PM_ALWAYS_INLINE static inline void box_gap8(pm_v8f *out, const float *box, const float *q, int n, int i) {
    const pm_v8f zero = {0, 0, 0, 0, 0, 0, 0, 0};
    pm_v8f x = pm_v8_load(q + i);
    pm_v8f below = pm_v8_load(box + i) - x, above = x - pm_v8_load(box + n + i);
    below = (pm_v8f)((pm_v8i)below & (below > zero));
    above = (pm_v8f)((pm_v8i)above & (above > zero));
    *out = below + above;
}

/* Sums of squares per lane of 4: lanes 0-3 of an 8-lane accumulator (the even blocks of 4), then
 * a last block of 4 when n is not a multiple of 8, then lanes 4-7 (the odd blocks): the same
 * order in every build. */
PM_ALWAYS_INLINE static inline float lanes_sum(const pm_v8f *acc8, pm_v4f tail) {
    pm_v4f lo = {(*acc8)[0], (*acc8)[1], (*acc8)[2], (*acc8)[3]}, hi = {(*acc8)[4], (*acc8)[5], (*acc8)[6], (*acc8)[7]};
    pm_v4f acc = (lo + tail) + hi;
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/* Squared distance from q to a box, each lane's gap times w when w is given: a PCA box against
 * the query's exact-mode lanes (coordinates, residual norm, zeros; w NULL), or a node's box of
 * stored values against the normalised query weighted by the query's weights - a bound in the
 * cost's own metric, whatever the dynamic weights, where the PCA box only bounds it through the
 * smallest weight ratio. */
PM_ALWAYS_INLINE static inline float box_gap2(const float *box, const float *q, const float *w, int n) {
    pm_v8f acc = {0, 0, 0, 0, 0, 0, 0, 0};
    pm_v4f tail = {0, 0, 0, 0};
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        pm_v8f d;
        box_gap8(&d, box, q, n, i);
        if (w) d *= pm_v8_load(w + i);
        acc += d * d;
    }
    if (i < n) {
        pm_v4f d = box_gap4(box, q, n, i);
        if (w) d *= pm_v4_load(w + i);
        tail = d * d;
    }
    return lanes_sum(&acc, tail);
}

/* A node's value box under dynamic weights, two ways in one pass: *full in the dynamic weights,
 * *extra in what they add beyond r2 times the base ones (s->we). */
PM_ALWAYS_INLINE static inline void value_box_gaps(float *full, float *extra, const search_state *s, uint32_t node) {
    const int n = s->db->stride;
    const float *box = s->db->bt_value_boxes + (size_t)node * 2 * n;
    pm_v8f af = {0, 0, 0, 0, 0, 0, 0, 0}, ae = af;
    const pm_v4f none = {0, 0, 0, 0};
    for (int i = 0; i < n; i += 8) { /* the value stride is a multiple of 8 (checked on load) */
        pm_v8f d;
        box_gap8(&d, box, s->qn, n, i);
        pm_v8f f = d * pm_v8_load(s->w + i), e = d * pm_v8_load(s->we + i);
        af += f * f;
        ae += e * e;
    }
    *full = lanes_sum(&af, none);
    *extra = lanes_sum(&ae, none);
}

/* A child's key: its PCA-box bound, raised when that does not prune it already (the value box
 * is twice the bytes). Without dynamic weights only leaves take their value-box bound: that
 * spares a leaf scan in dense regions (fewer exact costs, a lower p99), while higher up the PCA
 * box alone is as good. Under them every node takes the larger of its value-box bound and its
 * r2-scaled PCA bound plus the weights' extra share over its value box (search_state.we). */
static inline float child_key(const search_state *s, uint32_t child, const float *qz, int P, int bs, float r2) {
    const pm_database *db = s->db;
    const float *box = db->bt_boxes + (size_t)child * bs;
    float bound = box_gap2(box, qz, NULL, P) * r2, addend = box[2 * P];
    if (bound + addend <= limit(s)) {
        if (s->we) {
            float full, extra;
            value_box_gaps(&full, &extra, s, child);
            s->node_extra[child] = extra;
            bound = PM_MAX(full, bound + extra);
        } else if (db->bt_nodes[child].left == 0) {
            float v = box_gap2(db->bt_value_boxes + (size_t)child * 2 * db->stride, s->qn, s->w, db->stride);
            if (v > bound) bound = v;
        }
    }
    return bound + addend;
}

/* Rows v..v+7 with the 8-row kernel; the first `rows` of them (1..8) are candidates. stride is
 * db->stride from the caller's local: read from db after every consider_vector's stores, it made
 * brute force 10-20% slower in alternated runs. The rows that may beat the best come as one bit
 * mask (eight scalar tests, each reloading a best that a call might have changed, took a sixth of
 * brute force's time); consider_vector tests again against the best as it is then. */
PM_ALWAYS_INLINE static inline void score_rows8(search_state *s, uint32_t v, uint32_t rows, int stride) {
    const pm_database *db = s->db;
    float c[8];
    PM_COST_ROWS8(c, s->qn, pm_db_row(db, v), s->w, stride);
    unsigned pass = pm_rows8_mask(c, db->vec_min_addend + v, s->best);
    if (rows < 8) pass &= (1u << rows) - 1u;
    for (; pass; pass &= pass - 1) {
        int k = __builtin_ctz(pass);
        consider_vector(s, v + (uint32_t)k, c[k]);
    }
}

/* Brute force: every searchable row, eight at a time with the 8-row kernel. */
static void bruteforce_scan(search_state *s) {
    const pm_database *db = s->db;
    const uint32_t n = db->header->searchable_vectors;
    const int stride = db->stride;
    uint32_t v = 0;
    /* Every lane of every row, so every line of the matrix, and no software prefetch: the
     * hardware prefetcher follows that stream best. Requesting rows ahead, or leaving a block
     * after half its lanes (which reads every other line of rows of 32 floats), made the scan
     * 1.3-1.6x slower on an AMD EPYC guest (docs/ROADMAP.md). */
    for (; v + 8 <= n; v += 8) score_rows8(s, v, 8, stride);
    for (; v < n; v++) consider_vector(s, v, pm_cost_row(s->qn, pm_db_row(db, v), s->w, stride));
    s->candidates += (int)n;
}

/* Exact costs of a leaf's rows v0..end-1 (stored in tree order), eight at a time where the
 * matrix holds eight rows from there (a leaf's last block reads rows past its end and counts
 * them): the same bits per row as one at a time. */
static void score_leaf(search_state *s, uint32_t v0, uint32_t end) {
    const uint32_t vectors = s->db->header->vector_count;
    const int stride = s->db->stride;
    uint32_t v = v0;
    for (; v < end && v + 8 <= vectors; v += 8) {
        score_rows8(s, v, PM_MIN(end - v, 8u), stride);
        s->candidates += 8;
    }
    for (; v < end; v++) consider_vector(s, v, vector_cost(s, v));
}

static void exact_walk(search_state *s, const float *qz, heap_item *heap) {
    const pm_database *db = s->db;
    const pmdb_header *h = db->header;
    if (h->bt_node_count == 0) return;
    const int ke = (int)h->exact_components, rows = ke + 1;
    const int P = pm_bt_box_lanes(ke), bs = pm_bt_box_stride(ke);
    const float r2 = s->r2;
    const float *addend = db->vec_min_addend;
    const uint32_t vectors = h->vector_count;
    size_t n = 0;
    heap_push(heap, &n, child_key(s, 0, qz, P, bs, r2), 0);
    while (n) {
        heap_item it = heap_pop(heap, &n);
        if (it.key > limit(s)) break;
        /* Out of budget with a node left that could still win - once something was found (here
         * or in an earlier database): a best-first walk may spend a small budget on inner nodes
         * before its first leaf. */
        if (s->nodes >= s->max_nodes && (s->best_pose >= 0 || s->found_before)) {
            s->cut = 1;
            break;
        }
        s->nodes++;
        const pmdb_bt_node *node = &db->bt_nodes[it.node];
        if (node->left) {
            float kl = child_key(s, node->left, qz, P, bs, r2), kr = child_key(s, node->right, qz, P, bs, r2);
            if (kl <= limit(s)) heap_push(heap, &n, kl, node->left);
            if (kr <= limit(s)) heap_push(heap, &n, kr, node->right);
            continue;
        }
        const uint32_t end = node->first + node->count;
        if (s->score_leaves) { /* uneven dynamic weights: bounds would pass most points anyway */
            score_leaf(s, node->first, end);
            continue;
        }
        /* A leaf: bound 8 points at a time, then exact costs for the survivors. */
        const float *block = db->bt_points + (size_t)node->first * rows;
        /* What a leaf's points may add to their r2-scaled PCA bounds under dynamic weights (set
         * by child_key when the leaf was pushed: every pushed node passed that bound). */
        const float extra = s->we ? s->node_extra[it.node] : 0.0f;
        for (uint32_t b0 = node->first; b0 < end; b0 += PM_BT_BLOCK, block += PM_BT_BLOCK * rows) {
            float keys[PM_BT_BLOCK];
            unsigned pass = block_keys(keys, block, qz, rows, r2, addend + b0, limit(s) - extra);
            if (end - b0 < PM_BT_BLOCK) pass &= (1u << (end - b0)) - 1u;
            if (!pass) continue;
            /* Dense clusters (idle takes) let much of a block through: then the 8-row kernel,
             * which gives the same bits per row, is the cheaper way to the exact costs. */
            float costs[PM_BT_BLOCK];
            int batched = __builtin_popcount(pass) >= 3 && b0 + PM_BT_BLOCK <= vectors;
            if (batched) {
                PM_COST_ROWS8(costs, s->qn, pm_db_row(db, b0), s->w, db->stride);
                s->candidates += PM_BT_BLOCK;
            }
            for (; pass; pass &= pass - 1) {
                int k = __builtin_ctz(pass);
                if (keys[k] > limit(s) - extra) continue; /* the best may have improved */
                uint32_t i = b0 + (uint32_t)k;
                consider_vector(s, i, batched ? costs[k] : vector_cost(s, i));
            }
        }
    }
}

#endif
