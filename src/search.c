/* Pose search: query preparation, candidate evaluation and the four modes. */
#include <limits.h>

#include "pca.h"
#include "search_internal.h"

const char *pm_search_mode_name(pm_search_mode m) {
    switch (m) {
    case PM_SEARCH_EXACT: return "exact";
    case PM_SEARCH_BRUTEFORCE: return "bruteforce";
    case PM_SEARCH_PCAKDTREE: return "pcakdtree";
    case PM_SEARCH_VPTREE: return "vptree";
    }
    return "?";
}

int pm_search_mode_from_name(const char *name) {
    if (!name) return -1;
    for (int m = 0; m <= PM_SEARCH_VPTREE; m++)
        if (strcmp(name, pm_search_mode_name((pm_search_mode)m)) == 0) return m;
    return -1;
}

pm_search_def pm_default_search_def(void) {
    pm_search_def d;
    memset(&d, 0, sizeof d);
    d.mode = PM_SEARCH_EXACT;
    d.continuing_pose = -1;
    d.max_cost = INFINITY;
    d.kdtree_neighbors = 200;
    return d;
}

/* ---- throttle ---- */

pm_search_throttle pm_search_throttle_make(float interval) {
    pm_search_throttle t;
    memset(&t, 0, sizeof t);
    t.interval = interval;
    return t;
}

int pm_search_throttle_update(pm_search_throttle *t, float dt, int force) {
    if (!t) return 1;
    if (isfinite(dt) && dt > 0.0f) t->elapsed += dt;
    /* A NaN interval must not stop every search: only a positive one holds them back. */
    const double interval = t->interval > 0.0f ? (double)t->interval : 0.0;
    if (t->searched && !force && !(t->elapsed + 1e-6 >= interval)) return 0;
    t->searched = 1;
    t->elapsed = 0.0;
    return 1;
}

/* ---- scratch ---- */

typedef struct scratch_layout {
    size_t qn, w, we, y, pc, zq, extra, heap, knn, total;
    size_t heap_items, knn_items;
} scratch_layout;

static size_t up16(size_t x) { return (x + 15) & ~(size_t)15; }

static scratch_layout layout_scratch(const pm_database *db, const pm_search_def *def) {
    scratch_layout l;
    const pmdb_header *h = db->header;
    size_t at = 0;
    l.qn = at;
    at = up16(at + (size_t)db->stride * sizeof(float));
    l.w = at;
    at = up16(at + (size_t)db->stride * sizeof(float));
    l.we = at;
    at = up16(at + (size_t)db->stride * sizeof(float));
    l.y = at;
    at = up16(at + (size_t)db->card * sizeof(double));
    l.pc = at;
    at = up16(at + (size_t)db->card * sizeof(double));
    l.zq = at;
    at = up16(at + ((size_t)db->card + 8) * sizeof(float));
    l.extra = at;
    at = up16(at + (size_t)h->bt_node_count * sizeof(float));
    uint32_t nodes = h->bt_node_count;
    if (h->kd_node_count > nodes) nodes = h->kd_node_count;
    if (h->vp_node_count > nodes) nodes = h->vp_node_count;
    l.heap_items = (size_t)nodes + 1;
    l.heap = at;
    at = up16(at + l.heap_items * sizeof(heap_item));
    int k = def && def->kdtree_neighbors > 0 ? def->kdtree_neighbors : 200;
    /* More neighbours than the tree has points find the same set: a million asked of a small
     * database (or per thread) need not cost megabytes of scratch. */
    if ((uint32_t)k > h->kd_point_count) k = h->kd_point_count > 0 ? (int)h->kd_point_count : 1;
    l.knn_items = (size_t)k;
    l.knn = at;
    at = up16(at + l.knn_items * sizeof(heap_item));
    l.total = at;
    return l;
}

size_t pm_search_scratch_size(const pm_database *db, const pm_search_def *def) {
    if (!db) return 0;
    return layout_scratch(db, def).total;
}

/* ---- modes ---- */

static void search_kdtree(search_state *s, const float *zq, heap_item *stack, heap_item *knn, size_t kmax) {
    const pm_database *db = s->db;
    const pmdb_header *h = db->header;
    if (h->kd_node_count == 0) return;
    const int k = (int)h->pca_components;
    /* knn is a max-heap on distance (worst on top), stored as negated keys in a min-heap. */
    size_t nk = 0, sp = 0;
    stack[sp].key = 0.0f;
    stack[sp++].node = 0;
    while (sp) {
        heap_item it = stack[--sp];
        float worst = nk == kmax ? -knn[0].key : INFINITY;
        if (it.key > worst) continue;
        s->nodes++;
        const pmdb_kd_node *node = &db->kd_nodes[it.node];
        if (node->dim < 0) {
            for (uint32_t i = node->a; i < node->a + node->b; i++) {
                const float *p = db->kd_points + (size_t)i * k;
                float d2 = 0.0f;
                for (int c = 0; c < k; c++) {
                    float d = zq[c] - p[c];
                    d2 += d * d;
                }
                if (nk < kmax) heap_push(knn, &nk, -d2, i);
                else if (d2 < -knn[0].key) {
                    heap_pop(knn, &nk);
                    heap_push(knn, &nk, -d2, i);
                }
            }
            continue;
        }
        float diff = zq[node->dim] - node->split;
        uint32_t near = diff < 0.0f ? node->a : node->b, far = diff < 0.0f ? node->b : node->a;
        float far_key = it.key > diff * diff ? it.key : diff * diff;
        stack[sp].key = far_key; /* the far side is visited after the near one */
        stack[sp++].node = far;
        stack[sp].key = it.key;
        stack[sp++].node = near;
    }
    /* Re-score every vector behind the K nearest PCA points exactly (UE semantics), each
     * neighbour's rows requested LEAD neighbours ahead of their costs. */
    enum { LEAD = 6 };
    for (size_t j = 0; j < nk + LEAD; j++) {
        if (j < nk)
            for (uint32_t i = db->kd_point_start[knn[j].node]; i < db->kd_point_start[knn[j].node + 1]; i++)
                prefetch_row(db, db->kd_point_vecs[i]);
        if (j < LEAD) continue;
        uint32_t pt = knn[j - LEAD].node;
        for (uint32_t i = db->kd_point_start[pt]; i < db->kd_point_start[pt + 1]; i++) {
            uint32_t v = db->kd_point_vecs[i];
            consider_vector(s, v, vector_cost(s, v));
        }
    }
}

static void search_vptree(search_state *s, heap_item *stack) {
    const pm_database *db = s->db;
    const pmdb_header *h = db->header;
    if (h->vp_node_count == 0) return;
    const float *w_base = s->db->wsqrt;
    const int dynamic = s->w != w_base;
    const float min_add = h->min_cost_addend;
    size_t sp = 0;
    stack[sp].key = 0.0f;
    stack[sp++].node = 0;
    while (sp) {
        heap_item it = stack[--sp];
        float reach = limit(s) - min_add;
        float tau = reach > 0.0f ? sqrtf(reach / s->r2) : 0.0f;
        if (it.key > tau) continue;
        s->nodes++;
        const pmdb_vp_node *node = &db->vp_nodes[it.node];
        if (node->inside == 0) {
            for (uint32_t i = node->vp; i < node->vp + node->outside; i++) prefetch_row(db, db->vp_items[i]);
            for (uint32_t i = node->vp; i < node->vp + node->outside; i++) {
                uint32_t v = db->vp_items[i];
                consider_vector(s, v, vector_cost(s, v));
            }
            continue;
        }
        s->candidates++;
        float base = pm_cost_row(s->qn, pm_db_row(db, node->vp), w_base, db->stride);
        consider_vector(s, node->vp, dynamic ? vector_cost(s, node->vp) : base);
        float d = sqrtf(base);
        reach = limit(s) - min_add;
        tau = reach > 0.0f ? sqrtf(reach / s->r2) : 0.0f;
        /* The triangle inequality holds for true distances; d and mu carry float rounding of
         * their own size (sums of squares, then roots), so the bounds give that much away: far
         * vantage points must not prune a near answer. */
        float err = (d + node->mu) * 1e-5f;
        float in_lb = d - node->mu - err, out_lb = node->mu - d - err;
        if (!(in_lb > 0.0f)) in_lb = 0.0f;
        if (!(out_lb > 0.0f)) out_lb = 0.0f;
        /* Push the farther side first so the nearer one is searched first. */
        if (d <= node->mu) {
            if (out_lb <= tau) stack[sp].key = out_lb, stack[sp++].node = node->outside;
            if (in_lb <= tau) stack[sp].key = in_lb, stack[sp++].node = node->inside;
        } else {
            if (in_lb <= tau) stack[sp].key = in_lb, stack[sp++].node = node->inside;
            if (out_lb <= tau) stack[sp].key = out_lb, stack[sp++].node = node->outside;
        }
    }
}

/* ---- entry points ---- */

/* Fills the query side of s (zeroed by the caller). */
static pm_result prepare(search_state *s, const pm_database *db, const float *query, const pm_search_def *def,
                         const scratch_layout *l, uint8_t *mem, pm_error *error) {
    const int D = db->card, S = db->stride;
    float *qn = (float *)(mem + l->qn);
    float *w = (float *)(mem + l->w);
    for (int d = 0; d < D; d++) {
        if (!isfinite(query[d]))
            return pm_fail(error, PM_ERR_NUMERIC, "search: query value %d is not finite", d);
        qn[d] = (query[d] - db->offset[d]) / db->scale[d];
        /* Far beyond any motion (wrong units or layout): its costs would overflow to infinity. */
        if (!(fabsf(qn[d]) <= PM_SEARCH_MAX_DEVIATION))
            return pm_fail(error, PM_ERR_NUMERIC,
                           "search: query value %d (%g) lies %.3g scales from the database's mean (at most %g): check the "
                           "query's units and layout",
                           d, (double)query[d], fabs(((double)query[d] - db->offset[d]) / db->scale[d]),
                           (double)PM_SEARCH_MAX_DEVIATION); /* (in double: the float may have overflowed) */
    }
    for (int d = D; d < S; d++) qn[d] = 0.0f;
    s->db = db;
    s->def = def;
    s->qn = qn;
    s->w = db->wsqrt;
    s->r2 = 1.0f;
    if (def->dynamic_weights) {
        float r2 = INFINITY;
        double sum_dynamic = 0.0, sum_base = 0.0;
        for (int d = 0; d < D; d++) {
            float dw = def->dynamic_weights[d];
            if (!(dw >= 0.0f && dw <= PM_SEARCH_MAX_DYNAMIC_WEIGHT))
                return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "search: dynamic weight %d (%s) is outside 0..%g", d,
                               pm_float_text(dw).text, (double)PM_SEARCH_MAX_DYNAMIC_WEIGHT);
            w[d] = sqrtf(dw);
            float base = db->wsqrt[d] * db->wsqrt[d];
            if (base > 0.0f) r2 = PM_MIN(r2, dw / base);
            sum_dynamic += dw;
            sum_base += base;
        }
        /* The mean ratio weighs each dimension by its stored weight, as a difference spread
         * evenly over the normalised dimensions would. */
        s->score_leaves = !(r2 >= PM_SCORE_LEAVES_BELOW * (sum_dynamic / sum_base));
        for (int d = D; d < S; d++) w[d] = 0.0f;
        s->w = w;
        /* A bound in the base metric times r2 bounds the dynamic cost (cost' >= r2 cost). */
        s->r2 = isfinite(r2) ? r2 * (1.0f - 1e-6f) : 0.0f;
        float *we = (float *)(mem + l->we);
        for (int d = 0; d < D; d++) {
            float rest = def->dynamic_weights[d] - s->r2 * (db->wsqrt[d] * db->wsqrt[d]);
            we[d] = rest > 0.0f ? sqrtf(rest) : 0.0f;
        }
        for (int d = D; d < S; d++) we[d] = 0.0f;
        s->we = we;
        s->node_extra = (float *)(mem + l->extra);
    }
    s->magnitude = fabsf(db->header->min_cost_addend) + fabsf(def->continuing_cost_addend);
    s->best = def->max_cost;
    update_limit(s); /* (again once a tree mode has set its allowances) */
    s->best_rank = INT64_MAX;
    s->best_pose = -1;
    s->continuing_pose = def->continuing_pose;
    return PM_OK;
}

/* "Not found": what a result reads before a search fills it and after any error. */
static void result_not_found(pm_search_result *out) {
    memset(out, 0, sizeof *out);
    out->pose = -1;
    out->asset = -1;
}

static void fill_result(pm_search_result *out, const search_state *s) {
    result_not_found(out);
    out->candidates = s->candidates;
    out->nodes = s->nodes;
    out->proven = s->def->mode != PM_SEARCH_PCAKDTREE && !s->cut;
    if (s->best_pose < 0) return;
    pm_pose_info pose;
    pm_database_pose(&pose, s->db, s->best_pose, NULL);
    out->found = 1;
    out->pose = s->best_pose;
    out->asset = pose.asset;
    out->frame = pose.frame;
    out->time = pose.time;
    out->cost = s->best;
    out->dissimilarity = s->best_dissim;
    out->cost_addend = s->best_addend;
    out->penalty = s->best_penalty;
    out->continuing = s->best_continuing;
}

static void breakdown(float *out, const search_state *s) {
    const pm_database *db = s->db;
    for (int c = 0; c < db->channel_count; c++) out[c] = 0.0f;
    if (s->best_pose < 0) return;
    const float *x = pm_db_row(db, PM_META_VECTOR(db->meta[s->best_pose]));
    for (int d = 0; d < db->card; d++) {
        float e = (s->qn[d] - x[d]) * s->w[d];
        out[db->layout.dim_channel[d]] += e * e;
    }
}

pm_result pm_search(pm_search_result *out, const pm_database *db, const float *query, const pm_search_def *def,
                    void *scratch, size_t scratch_size, pm_error *error) {
    return pm_search_kernel(out, db, query, def, scratch, scratch_size, PM_SEARCH_KERNEL_AUTO, error);
}

/* Every check of a search's arguments, the query's values and weights included (prepare: the
 * normalised query and the weights into the scratch, *s and *l set up for the search; s keeps
 * a pointer to def, the caller's). */
static pm_result check_search(search_state *s, scratch_layout *l, const pm_search_def *def_ptr, const pm_database *db,
                              const float *query, void *scratch, size_t scratch_size, pm_error *error) {
    if (!db) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_search: database is NULL");
    if (!query) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_search: query is NULL");
    const pm_search_def def = *def_ptr;
    if (def.query_size != 0 && def.query_size != db->card)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "search: the query has %d values but the database's schema has %d (cardinality)", def.query_size,
                       db->card);
    if (isnan(def.max_cost)) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "search: max_cost is not a number");
    if ((int)def.mode < 0 || def.mode > PM_SEARCH_VPTREE)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "search: unknown mode %d", (int)def.mode);
    if (!pm_db_has_mode(db, def.mode))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "search: the database was built without the %s mode's %s (search_modes)",
                       pm_search_mode_name(def.mode), pm_search_mode_structure(def.mode));
    if (def.continuing_pose < -1 || def.continuing_pose >= (int)db->header->pose_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "search: continuing pose %d is outside -1..%u", def.continuing_pose,
                       db->header->pose_count - 1);
    if (!isfinite(def.continuing_cost_addend))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "search: continuing cost addend is not finite");
    if (def.kdtree_neighbors < 1 || def.kdtree_neighbors > 1000000)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "search: %d KD-tree neighbours (1..1000000)", def.kdtree_neighbors);
    if (def.max_nodes < 0) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "search: max_nodes %d is negative (0 = no budget)", def.max_nodes);
    *l = layout_scratch(db, &def);
    if (!scratch) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "search: scratch is NULL (pm_search_scratch_size: %zu bytes)", l->total);
    if ((uintptr_t)scratch & 15u) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "search: scratch is not 16-byte aligned");
    if (scratch_size < l->total) /* a buffer short of what the size function asks: as the blend jobs say it */
        return pm_fail(error, PM_ERR_MISMATCH, "search: scratch of %zu bytes is too small (pm_search_scratch_size: %zu)",
                       scratch_size, l->total);
    memset(s, 0, sizeof *s);
    return prepare(s, db, query, def_ptr, l, (uint8_t *)scratch, error);
}

/* pm_search_kernel; found_before: an earlier database of pm_search_databases found an answer
 * (def->max_cost was lowered to beat it), which counts as found for the work budget. */
static pm_result search_one(pm_search_result *out, const pm_database *db, const float *query, const pm_search_def *def_in,
                            void *scratch, size_t scratch_size, int kernel, int found_before, pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_search: out is NULL");
    /* A caller that misses an error code reads "not found", never the previous frame's answer. */
    result_not_found(out);
    const pm_search_def def = def_in ? *def_in : pm_default_search_def();
    search_state s;
    scratch_layout l;
    pm_result r = check_search(&s, &l, &def, db, query, scratch, scratch_size, error);
    if (r != PM_OK) return r;
    uint8_t *mem = (uint8_t *)scratch;
    s.max_nodes = def.max_nodes > 0 ? def.max_nodes : INT_MAX;
    s.found_before = found_before;

    if (def.continuing_pose >= 0) {
        uint32_t p = (uint32_t)def.continuing_pose;
        float c = vector_cost(&s, PM_META_VECTOR(db->meta[p]));
        consider_pose(&s, p, c, def.continuing_cost_addend, 1);
    }
    /* With a dynamic weight near zero the VP-tree's bounds (scaled by the smallest weight ratio)
     * prune nothing and its walk only adds overhead to a full scan: scan directly. The exact
     * mode keeps walking: its value boxes bound the cost in the query's own metric. The answer
     * is the same either way. */
    const int bounds_useless = s.r2 < 0.02f && def.mode == PM_SEARCH_VPTREE;
    const int avx2 = kernel != PM_SEARCH_KERNEL_BASELINE && pm_cpu_has_avx2();
    const int avx512 = avx2 && kernel != PM_SEARCH_KERNEL_AVX2 && pm_cpu_has_avx512();
    (void)avx2, (void)avx512; /* unused where no such build exists */
    if (def.mode == PM_SEARCH_BRUTEFORCE || bounds_useless) {
#if defined(PM_HAVE_AVX512_KERNELS)
        if (avx512) pm_search_bruteforce_avx512(&s);
        else
#endif
#if defined(PM_HAVE_AVX2_KERNELS)
        if (avx2) pm_search_bruteforce_avx2(&s);
        else
#endif
            pm_search_bruteforce_baseline(&s);
    } else {
        /* Query in PCA space, only as far as the mode reads it: the exact mode needs every
         * component (the ones past ke make its residual norm), the KD-tree its k, the VP-tree
         * none. zq holds the exact-mode lanes (coordinates, residual norm, zero padding) or the
         * KD-tree's coordinates. */
        const int D = db->card;
        double *pc = (double *)(mem + l.pc);
        float *zq = (float *)(mem + l.zq);
        int ke = (int)db->header->exact_components;
        int kk = def.mode == PM_SEARCH_PCAKDTREE ? (int)db->header->pca_components : ke;
        int project = def.mode == PM_SEARCH_EXACT ? D : def.mode == PM_SEARCH_PCAKDTREE ? kk : 0;
        double residual = 0.0;
        if (project) pm_pca_project(pc, project, s.qn, db->wsqrt, db->pca_mean, db->pca_basis, D, (double *)(mem + l.y));
        for (int c = 0; c < project; c++) {
            if (c < kk) zq[c] = (float)pc[c];
            else residual += pc[c] * pc[c];
        }
        if (def.mode == PM_SEARCH_EXACT) {
            zq[ke] = (float)sqrt(residual);
            for (int c = ke + 1; c < pm_bt_box_lanes(ke); c++) zq[c] = 0.0f;
        }
        heap_item *heap = (heap_item *)(mem + l.heap);
        /* Float rounding of the stored coordinates and of the two ways of summing costs: a
         * bound may exceed the true cost by a hair, so pruning allows a margin. It is measured
         * in the base metric, as the PCA bounds are, and scales with them by r2: weights that
         * all shrink a million-fold prune as well as the stored ones. (Value-box bounds are
         * exact ranges of the stored values: their rounding is relative, which limit() covers.) */
        s.slack = 1e-3f * s.r2;
        if (def.mode == PM_SEARCH_EXACT) {
            /* Coordinates are floats rounded from doubles, each off by at most 2^-24 of its size:
             * far from the data's centre (an outlier, a query far away) that exceeds the fixed
             * slack. M bounds every coordinate - the root box holds the points - and the query's. */
            const int lanes = pm_bt_box_lanes(ke);
            const float *root = db->bt_boxes;
            float M = 0.0f;
            for (int c = 0; c <= ke; c++) {
                M = PM_MAX(M, fabsf(zq[c]));
                if (db->header->bt_node_count) M = PM_MAX(M, PM_MAX(fabsf(root[c]), fabsf(root[lanes + c])));
            }
            /* Each lane is off by at most 1.2e-7 M (both ends rounded), a factor 2 to spare. */
            float lane_err = 2.4e-7f * M, rows = (float)(ke + 1);
            s.coord_err = 2.0f * sqrtf(rows * s.r2) * lane_err;
            s.slack += rows * lane_err * lane_err * s.r2;
        }
        update_limit(&s);
        if (def.mode == PM_SEARCH_EXACT) {
#if defined(PM_HAVE_AVX512_KERNELS)
            if (avx512) pm_search_exact_avx512(&s, zq, heap);
            else
#endif
#if defined(PM_HAVE_AVX2_KERNELS)
            if (avx2) pm_search_exact_avx2(&s, zq, heap);
            else
#endif
                pm_search_exact_baseline(&s, zq, heap);
        }
        else if (def.mode == PM_SEARCH_PCAKDTREE) search_kdtree(&s, zq, heap, (heap_item *)(mem + l.knn), l.knn_items);
        else search_vptree(&s, heap);
    }
    fill_result(out, &s);
    if (def.out_breakdown) breakdown(def.out_breakdown, &s);
    return PM_OK;
}

pm_result pm_search_kernel(pm_search_result *out, const pm_database *db, const float *query, const pm_search_def *def_in,
                           void *scratch, size_t scratch_size, int kernel, pm_error *error) {
    return search_one(out, db, query, def_in, scratch, scratch_size, kernel, 0, error);
}

pm_result pm_search_databases(pm_search_result *out, int *out_db, const pm_database *const *dbs,
                              const float *const *queries, const pm_search_def *defs, int count, void *scratch,
                              size_t scratch_size, pm_error *error) {
    /* "Not found" before any check: every error leaves the outputs so, as the header says. */
    if (out_db) *out_db = -1;
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_search_databases: out is NULL");
    result_not_found(out);
    if (!dbs || !queries) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_search_databases: databases or queries are NULL");
    if (count < 1 || count > PM_SEARCH_MAX_DATABASES)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_search_databases: %d databases is outside 1..%d", count,
                       PM_SEARCH_MAX_DATABASES);
    /* Every search checked before any runs: a def that fails after an earlier database has
     * written its breakdown would leave that half an answer. */
    for (int i = 0; i < count; i++) {
        const pm_search_def def = defs ? defs[i] : pm_default_search_def();
        search_state s;
        scratch_layout l;
        pm_result e = check_search(&s, &l, &def, dbs[i], queries[i], scratch, scratch_size, error);
        if (e != PM_OK) {
            pm_error_prefix(error, "database %d", i);
            return e;
        }
    }
    int candidates = 0, nodes = 0, proven = 1;
    float best = INFINITY;
    for (int i = 0; i < count; i++) {
        pm_search_def def = defs ? defs[i] : pm_default_search_def();
        /* Each search starts from the best cost so far: ties stay with the earlier database. */
        float below = nextafterf(best, -INFINITY);
        if (best < INFINITY && def.max_cost >= below) def.max_cost = below; /* (a NaN stays, for pm_search to reject) */
        pm_search_result r;
        /* An earlier database's answer counts as found for this one's budget: a search that
         * cannot beat it would otherwise walk on, unbounded, to prove that. */
        pm_result e = search_one(&r, dbs[i], queries[i], &def, scratch, scratch_size, PM_SEARCH_KERNEL_AUTO, best < INFINITY,
                                 error);
        if (e != PM_OK) {
            /* No half answer: an earlier database's result is not the result of the call. */
            result_not_found(out);
            if (out_db) *out_db = -1;
            pm_error_prefix(error, "database %d", i);
            return e;
        }
        candidates += r.candidates;
        nodes += r.nodes;
        proven &= r.proven; /* one unproven search may have missed a cheaper pose */
        if (r.found) {
            *out = r;
            best = r.cost;
            if (out_db) *out_db = i;
        }
    }
    out->candidates = candidates;
    out->nodes = nodes;
    out->proven = proven;
    return PM_OK;
}
