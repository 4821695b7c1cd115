/* Private: what the search modes share - the running best, candidate evaluation, the node
 * heap - and the scans over the database (src/search_kernels.c, src/search_kernels_avx2.c). */
#ifndef PM_SEARCH_INTERNAL_H
#define PM_SEARCH_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "cost.h"
#include "database_internal.h"
#include "posematch/search.h"

typedef struct heap_item {
    float key;
    uint32_t node;
} heap_item;

typedef struct search_state {
    const pm_database *db;
    const pm_search_def *def;
    const float *qn; /* normalised query, stride floats */
    const float *w;  /* effective weight square roots, stride floats */
    float r2;        /* smallest (dynamic / base) weight ratio: scales base-space bounds */
    /* Under dynamic weights, the square roots of what they add beyond r2 times the base ones
     * (dynamic - r2 * base, per dimension); NULL without them. The cost splits into r2 times
     * the base cost plus these terms, so a PCA bound of the first plus a value-box bound of the
     * second bounds it: tighter than either alone when the weights are uneven. */
    const float *we;
    /* Under dynamic weights, the extra share (above) over each pushed node's value box, written
     * when its key is computed so that a leaf popped later need not bound its box again. */
    float *node_extra;
    /* Exact mode: score a visited leaf's rows outright instead of bounding its points first. Set
     * when the dynamic weights are so uneven that r2 is under half their mean ratio to the stored
     * ones (PM_SCORE_LEAVES_BELOW): a point's PCA bound then falls short of its cost by so much
     * that a large share of a visited leaf's points pass it, and reading their PCA lanes costs
     * nearly what scoring their rows does. Uniformly scaled weights (r2 equal to the mean) keep the bounds. */
    int score_leaves;
    float slack;     /* float rounding allowance for bounds */
    float coord_err; /* exact mode: allowance for the rounding of large PCA coordinates, per
                        square root of cost (0 elsewhere) */
    float lim;       /* limit(s): recomputed whenever best changes */
    float magnitude; /* |smallest addend| + |continuing addend|: costs are sums of such terms */
    float best;      /* total cost to beat */
    int64_t best_rank;
    int best_pose;
    float best_dissim, best_addend, best_penalty;
    int best_continuing;
    int64_t continuing_pose; /* scored once, with its addend, never again as a plain candidate */
    int candidates;
    int nodes;
    int max_nodes; /* exact mode's work budget (INT_MAX for none) */
    int cut;       /* the budget stopped a walk that could still have improved */
    int found_before; /* pm_search_databases: an earlier database found an answer (max_cost beats
                         it), which counts as found for the budget */
} search_state;

/* What a bound must exceed to prune: the best cost plus an allowance for the float rounding
 * of stored coordinates and of the two ways of summing costs (a bound may exceed the true
 * cost by a hair; costs are never pruned by more than this). The rounding scales with the
 * terms summed, not with their total - a negative addend can make the best cost small or
 * negative while its dissimilarity is large - hence |best| plus the addends' magnitude. A
 * coordinate rounded by d moves a squared distance B by up to 2 sqrt(B) d: the coord_err term,
 * with B bounded by |best| plus the addends' magnitude. Kept in s->lim, recomputed when the
 * best changes (the walks read it per node and per block). */
static inline void update_limit(search_state *s) {
    float b = fabsf(s->best) + s->magnitude;
    s->lim = s->best + b * 1e-5f + s->slack + (s->coord_err > 0.0f ? s->coord_err * sqrtf(b) : 0.0f); /* (0 * inf) */
}
static inline float limit(const search_state *s) { return s->lim; }

static inline void consider_pose(search_state *s, uint32_t pose, float dissim, float extra_addend, int continuing) {
    float addend = pm_half_to_float(PM_META_ADDEND(s->db->meta[pose])) + extra_addend;
    float total = dissim + addend;
    int64_t rank = continuing ? -1 : (int64_t)pose;
    /* An infinite cost (rejected, or overflowed under extreme weights) is never a result, even
     * when nothing else is found: every mode then agrees on "none". */
    if (!(total < INFINITY) || total > s->best || (total == s->best && rank >= s->best_rank)) return;
    float penalty = 0.0f;
    if (s->def->penalty) {
        /* The hook is told the cost its candidate must stay below: one float step above the best
         * when a tie would go to this candidate (it ranks lower). Told the best itself, a hook
         * stopping early (search.h) would stop at the tie, and its partial penalty would win it. */
        float below = rank < s->best_rank ? nextafterf(s->best, INFINITY) : s->best;
        penalty = s->def->penalty(s->def->penalty_user, (int)pose, total, below);
        if (!(penalty >= 0.0f)) penalty = penalty < 0.0f ? 0.0f : INFINITY; /* NaN rejects */
        total += penalty;
        if (!(total < INFINITY) || total > s->best || (total == s->best && rank >= s->best_rank)) return;
    }
    s->best = total;
    update_limit(s);
    s->best_rank = rank;
    s->best_pose = (int)pose;
    s->best_dissim = dissim;
    s->best_addend = addend;
    s->best_penalty = penalty;
    s->best_continuing = continuing;
}

/* A searchable vector whose exact cost is known: try its searchable poses. */
static inline void consider_vector(search_state *s, uint32_t v, float dissim) {
    const pm_database *db = s->db;
    if (dissim + db->vec_min_addend[v] > s->best) return;
    for (uint32_t i = db->vec_pose_start[v]; i < db->vec_pose_start[v + 1]; i++) {
        uint32_t p = db->vec_poses[i];
        if (!PM_META_BLOCKED(db->meta[p]) && (int64_t)p != s->continuing_pose) consider_pose(s, p, dissim, 0.0f, 0);
    }
}

/* Asks for vector v's row before its cost is needed: the VP-tree's leaves and the KD-tree's
 * neighbours name rows scattered over the matrix, and requested together their cache misses
 * overlap instead of following one another. */
static inline void prefetch_row(const pm_database *db, uint32_t v) {
    const char *row = (const char *)pm_db_row(db, v);
    for (size_t o = 0; o < (size_t)db->stride * sizeof(float); o += 64) __builtin_prefetch(row + o);
}

static inline float vector_cost(search_state *s, uint32_t v) {
    s->candidates++;
    return pm_cost_row(s->qn, pm_db_row(s->db, v), s->w, s->db->stride);
}

/* A 4-ary min-heap: half the levels of a binary one, a pop's four children side by side in 32
 * bytes. The walks pop a node per step, and the sift-down's dependent loads are part of what the
 * tail of slow queries waits on (a few percent of their time against the binary heap). */
static inline void heap_push(heap_item *h, size_t *n, float key, uint32_t node) {
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 4;
        if (h[p].key <= key) break;
        h[i] = h[p];
        i = p;
    }
    h[i].key = key;
    h[i].node = node;
}

static inline heap_item heap_pop(heap_item *h, size_t *n) {
    heap_item top = h[0];
    heap_item last = h[--(*n)];
    size_t i = 0, m = *n;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= m) break;
        size_t b = c;
        float bk = h[c].key;
        for (size_t k = c + 1; k < c + 4 && k < m; k++)
            if (h[k].key < bk) {
                bk = h[k].key;
                b = k;
            }
        if (bk >= last.key) break;
        h[i] = h[b];
        i = b;
    }
    if (m) h[i] = last;
    return top;
}

/* Rows of a leaf block bounded before the kernels check whether any of its 8 points can still
 * pass (an even count, about half): most blocks of a visited leaf fail, and half their rows
 * already tell (a partial sum of squares is a lower bound of the whole, so no point that would
 * pass is dropped and the pass masks are the same). */
#define PM_BT_EARLY_ROWS(rows) (((rows) / 2) & ~1)

/* search_state.score_leaves: r2 below this share of the dynamic weights' mean ratio to the stored
 * ones. Measured on the bench's databases (docs/ROADMAP.md): per-dimension factors in [1/4, 4]
 * (the share about 0.2) and [1/3, 3] (0.3) search faster scoring rows outright, [1/2, 2] (0.47) with
 * the same median and a lower p99, per-channel ones in [1/2, 2] (0.51-0.58) with a higher median. */
#define PM_SCORE_LEAVES_BELOW 0.5f

/* The exact mode's best-first walk of the bound tree from the query's exact-mode lanes qz (heap
 * holds bt_node_count + 1 items), and the brute-force scan. Three builds of each: baseline SIMD,
 * AVX2 and AVX-512, which compute the same bits (see src/search_kernels.h). */
void pm_search_exact_baseline(search_state *s, const float *qz, heap_item *heap);
void pm_search_bruteforce_baseline(search_state *s);
#if defined(PM_HAVE_AVX2_KERNELS)
void pm_search_exact_avx2(search_state *s, const float *qz, heap_item *heap);
void pm_search_bruteforce_avx2(search_state *s);
#endif
#if defined(PM_HAVE_AVX512_KERNELS)
void pm_search_exact_avx512(search_state *s, const float *qz, heap_item *heap);
void pm_search_bruteforce_avx512(search_state *s);
#endif

/* pm_search with a chosen kernel build, so tests can compare them: what pm_search does is
 * PM_SEARCH_KERNEL_AUTO (AVX-512 when the CPU has it, else AVX2 when it has that). A kernel the
 * build or CPU lacks falls back to the next one down (AVX-512 to AVX2 to the baseline). */
enum { PM_SEARCH_KERNEL_AUTO = 0, PM_SEARCH_KERNEL_BASELINE = 1, PM_SEARCH_KERNEL_AVX2 = 2, PM_SEARCH_KERNEL_AVX512 = 3 };
pm_result pm_search_kernel(pm_search_result *out, const pm_database *db, const float *query, const pm_search_def *def,
                           void *scratch, size_t scratch_size, int kernel, pm_error *error);

#endif
