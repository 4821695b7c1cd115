/* The search contract at its edges, cases a mutation audit found no test holding: pcakdtree
 * keeps exactly the K nearest PCA points, what penalty hooks return, an excluded pose sharing its
 * row with a searchable one, rows a float step apart, and heavy weights whose PCA coordinates
 * round beyond the fixed slack; uneven dynamic weights, where the exact walk scores whole leaves;
 * brute force's eight-row kernel and its mask against the one-row kernel; the kernel builds at
 * every row width. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "pca.h"
#include "search_support.h"

/* Ranks of the KD-tree points by distance from a query's projection, for the hook below. */
typedef struct knn_ranks {
    int *vector_rank; /* per vector: its point's rank among the K nearest (0 = nearest), or -1 */
    int k;
    int others;       /* what the hook does with a vector outside them: 1 reject, 0 admit free */
} knn_ranks;

/* Among the K nearest points, the farthest wins: nearer ranks pay 1e5 per step. A walk that
 * misses the boundary point - the one a bound too high prunes first - answers otherwise. */
static float rank_penalty(void *user, int pose, float cost, float best) {
    (void)cost, (void)best;
    const knn_ranks *kr = (const knn_ranks *)user;
    int rank = kr->vector_rank[PM_META_VECTOR(F.db->meta[pose])];
    if (rank < 0) return kr->others ? INFINITY : 0.0f;
    return 1e5f * (float)(kr->k - 1 - rank);
}

/* Admits the K nearest points' vectors only (user: a knn_ranks). */
static float in_knn(void *user, int pose, float cost, float best) {
    (void)cost, (void)best;
    const knn_ranks *kr = (const knn_ranks *)user;
    return kr->vector_rank[PM_META_VECTOR(F.db->meta[pose])] >= 0 ? 0.0f : INFINITY;
}

static const float *sort_keys;
static int by_key(const void *a, const void *b) {
    float x = sort_keys[*(const uint32_t *)a], y = sort_keys[*(const uint32_t *)b];
    return x < y ? -1 : x > y;
}

/* pcakdtree with fewer neighbours than points answers as UE does: brute force's optimum over the
 * vectors of the K PCA points nearest the query's projection - not merely no better than the
 * optimum. The K nearest are found here by a scan of every KD-tree point; a penalty by rank
 * makes the K-th nearest the answer, so that a walk keeping any other set answers otherwise. */
static void test_kdtree_neighbours(void **state) {
    (void)state;
    const pm_database *db = F.db;
    const pmdb_header *h = db->header;
    const int k = (int)h->pca_components, D = db->card, S = db->stride;
    const uint32_t np = h->kd_point_count;
    enum { K = 40 };
    assert_true(np > 4 * K);
    float *d2 = malloc(np * sizeof *d2);
    uint32_t *order = malloc(np * sizeof *order);
    int *vector_rank = malloc(h->vector_count * sizeof *vector_rank);
    float q[DIMS], qn[64] = {0}, zq[PM_MAX_PCA_COMPONENTS];
    double pc[64], y[64];
    assert_true(S <= 64);
    pm_test_rng rng = {41};
    int checked = 0;
    for (int i = 0; i < 200; i++) {
        make_query(q, &rng, i);
        for (int d = 0; d < D; d++) qn[d] = (q[d] - db->offset[d]) / db->scale[d];
        pm_pca_project(pc, k, qn, db->wsqrt, db->pca_mean, db->pca_basis, D, y);
        for (int c = 0; c < k; c++) zq[c] = (float)pc[c];
        for (uint32_t pt = 0; pt < np; pt++) {
            const float *p = db->kd_points + (size_t)pt * k; /* summed as the walk sums */
            float s2 = 0.0f;
            for (int c = 0; c < k; c++) {
                float d = zq[c] - p[c];
                s2 += d * d;
            }
            d2[pt] = s2;
            order[pt] = pt;
        }
        sort_keys = d2;
        qsort(order, np, sizeof *order, by_key);
        if (!(d2[order[K - 1]] < d2[order[K]])) continue; /* a tie at the K-th: either point may be kept */
        for (uint32_t v = 0; v < h->vector_count; v++) vector_rank[v] = -1;
        for (int r = 0; r < K; r++)
            for (uint32_t j = db->kd_point_start[order[r]]; j < db->kd_point_start[order[r] + 1]; j++)
                vector_rank[db->kd_point_vecs[j]] = r;
        knn_ranks restricted = {vector_rank, K, 1}, open = {vector_rank, K, 0};
        pm_search_def bf = pm_default_search_def(), kd = bf;
        bf.mode = PM_SEARCH_BRUTEFORCE;
        bf.penalty = kd.penalty = rank_penalty;
        bf.penalty_user = &restricted;
        kd.penalty_user = &open;
        kd.mode = PM_SEARCH_PCAKDTREE;
        kd.kdtree_neighbors = K;
        pm_search_result rb = run(q, bf), rk = run(q, kd);
        assert_true(rb.found);
        assert_same(rk, rb, "pcakdtree(K nearest)", i);
        /* Without the penalty: the optimum over the same set. */
        bf.penalty = in_knn;
        kd.penalty = NULL;
        assert_same(run(q, kd), run(q, bf), "pcakdtree(K nearest, no penalty)", i);
        checked++;
    }
    assert_true(checked > 150);
    free(d2);
    free(order);
    free(vector_rank);
}

static float constant_penalty(void *user, int pose, float cost, float best) {
    (void)pose, (void)cost, (void)best;
    return *(const float *)user;
}

/* What a hook returns, as search.h says: a penalty is added and reported, a negative one counts
 * as 0, NaN rejects - in every mode. */
static void test_penalty_values(void **state) {
    (void)state;
    float q[DIMS];
    pm_search_result best = first_query_best(q, 31);
    pm_search_def def = pm_default_search_def();
    float penalty = 0.0f;
    def.penalty = constant_penalty;
    def.penalty_user = &penalty;
    def.kdtree_neighbors = 100000;
    for (int m = 0; m < 4; m++) {
        def.mode = (pm_search_mode)m;
        penalty = 0.25f; /* the same for every pose: the same winner, costing that much more */
        pm_search_result r = run(q, def);
        assert_int_equal(r.pose, best.pose);
        assert_true(r.penalty == 0.25f);
        assert_true(r.cost == best.cost + 0.25f);
        assert_true(r.dissimilarity == best.dissimilarity && r.cost_addend == best.cost_addend);
        penalty = -3.0f; /* counts as 0 */
        r = run(q, def);
        assert_true(r.found);
        assert_int_equal(r.pose, best.pose);
        assert_true(r.penalty == 0.0f);
        assert_true(r.cost == best.cost);
        penalty = NAN; /* rejects every pose */
        r = run(q, def);
        assert_false(r.found);
        assert_int_equal(r.pose, -1);
    }
}

/* A pose excluded from search whose value row is shared (de-duplicated) with a searchable pose:
 * the row is searched, the excluded pose is never the answer, even when a tie would give it to
 * the excluded pose by its lower index. Asset 0 is clip 0 with a span excluded, asset 1 the same
 * clip whole: every row of asset 0 is also asset 1's. */
static void test_excluded_pose_sharing_a_row(void **state) {
    (void)state;
    pm_asset_def assets[2] = {F.assets[0], pm_default_asset_def(&F.clips[0])};
    static const pm_asset_range excluded[] = {{1.0f, 4.0f, 0.0f, 1}};
    assets[0].cost_addend = assets[1].cost_addend = 0.0f;
    assets[0].ranges = excluded, assets[0].range_count = 1;
    pm_database *db = build_database(database_def(3, 32), assets, 2, DIMS);
    size_t ss;
    void *scratch = scratch_for_every_mode(db, &ss);
    const int poses = pm_database_pose_count(db);
    int tried = 0;
    float q[DIMS];
    for (int p = 0; p < poses; p++) {
        pm_pose_info pi;
        PM_ASSERT_OK(pm_database_pose(&pi, db, p, NULL));
        if (pi.asset != 0 || !pi.block_transition || pi.time < 1.5f || pi.time > 3.5f || p % 5) continue;
        PM_ASSERT_OK(pm_database_pose_features(q, db, p, NULL));
        for (int m = 0; m < 4; m++) {
            pm_search_def def = pm_default_search_def();
            def.mode = (pm_search_mode)m;
            def.kdtree_neighbors = 100000; /* every point: the row is always reached */
            pm_search_result r;
            PM_ASSERT_OK(pm_search(&r, db, q, &def, scratch, ss, NULL));
            assert_true(r.found);
            assert_int_equal(r.asset, 1); /* the same row, in the asset that may play it */
            assert_true(r.dissimilarity < 1e-6f);
        }
        tried++;
    }
    assert_true(tried > 5);
    free(scratch);
    pm_database_destroy(db);
}

/* Rows a float step apart (asset 1 is asset 0 with its last curve moved up by one step): the
 * optimum and the runner-up differ by far less than the rounding of PCA coordinates, so only the
 * pruning margins keep the walks from dropping the optimum for its neighbour. Every mode must
 * answer as brute force does, to the bit. */
static void test_rows_a_step_apart(void **state) {
    (void)state;
    pm_clip dup;
    PM_ASSERT_OK(pm_clip_copy(&dup, &F.clips[0], NULL, NULL));
    for (int k = 0; k < dup.frame_count; k++)
        dup.curves[DIMS - 1].values[k] = nextafterf(dup.curves[DIMS - 1].values[k], INFINITY);
    pm_asset_def assets[2] = {pm_default_asset_def(&F.clips[0]), pm_default_asset_def(&dup)};
    pm_database *db = build_database(database_def(3, 32), assets, 2, DIMS);
    size_t ss;
    void *scratch = scratch_for_every_mode(db, &ss);
    const int poses = pm_database_pose_count(db);
    float q[DIMS], tiny[DIMS];
    const float *w = pm_database_weights_sqrt(db);
    for (int d = 0; d < DIMS; d++) tiny[d] = w[d] * w[d] * 1e-6f;
    for (int p = 0; p < poses; p += 3) {
        PM_ASSERT_OK(pm_database_pose_features(q, db, p, NULL));
        for (int variant = 0; variant < 2; variant++) {
            pm_search_def bf = pm_default_search_def();
            bf.mode = PM_SEARCH_BRUTEFORCE;
            if (variant) bf.dynamic_weights = tiny;
            pm_search_result rb, r;
            PM_ASSERT_OK(pm_search(&rb, db, q, &bf, scratch, ss, NULL));
            for (int m = 0; m < 4; m++) {
                if (m == PM_SEARCH_BRUTEFORCE || m == PM_SEARCH_PCAKDTREE) continue;
                pm_search_def def = bf;
                def.mode = (pm_search_mode)m;
                PM_ASSERT_OK(pm_search(&r, db, q, &def, scratch, ss, NULL));
                assert_same(r, rb, pm_search_mode_name(def.mode), p);
            }
        }
    }
    free(scratch);
    pm_database_destroy(db);
    pm_clip_destroy(&dup);
}

/* Heavy stored weights (a million on every dimension) make PCA coordinates in the thousands,
 * whose float rounding exceeds the fixed slack; queries a short way from a row along the first
 * principal axis have bounds as tight as their costs, next to rows a float step apart. */
static void test_heavy_weights_tight_bounds(void **state) {
    (void)state;
    static pm_schema schema;
    pm_test_curve_schema(&schema, DIMS);
    for (int c = 0; c < schema.channel_count; c++) schema.channels[c].weight = 1e6f;
    pm_clip dup;
    PM_ASSERT_OK(pm_clip_copy(&dup, &F.clips[0], NULL, NULL));
    for (int k = 0; k < dup.frame_count; k++)
        for (int d = 0; d < DIMS; d++) dup.curves[d].values[k] = nextafterf(dup.curves[d].values[k], INFINITY);
    pm_asset_def assets[3] = {pm_default_asset_def(&F.clips[0]), pm_default_asset_def(&dup), pm_default_asset_def(&F.clips[1])};
    pm_database_def dd = database_def(3, 32);
    dd.schema = &schema;
    pm_database *db = NULL;
    pm_error err;
    if (pm_database_build(&db, &dd, assets, 3, &err) != PM_OK) fail_msg("%s", err.message);
    size_t ss = pm_search_scratch_size(db, NULL);
    void *scratch = alloc_scratch(ss);
    const int poses = pm_database_pose_count(db), D = db->card;
    pm_test_rng rng = {77};
    float q[DIMS];
    for (int i = 0; i < 3000; i++) {
        int p = (int)(pm_test_rng_u32(&rng) % (uint32_t)poses);
        PM_ASSERT_OK(pm_database_pose_features(q, db, p, NULL));
        int axis = (int)(pm_test_rng_u32(&rng) % db->header->exact_components);
        float t = 3.0f * pm_test_rng_normal(&rng);
        for (int d = 0; d < D; d++) q[d] += t * db->pca_basis[(size_t)axis * D + d] / db->wsqrt[d] * db->scale[d];
        pm_search_def bf = pm_default_search_def(), ex = bf;
        bf.mode = PM_SEARCH_BRUTEFORCE;
        pm_search_result rb, re;
        PM_ASSERT_OK(pm_search(&rb, db, q, &bf, scratch, ss, NULL));
        PM_ASSERT_OK(pm_search(&re, db, q, &ex, scratch, ss, NULL));
        assert_same(re, rb, "exact (heavy weights)", i);
    }
    free(scratch);
    pm_database_destroy(db);
    pm_clip_destroy(&dup);
}

/* The fixture's clips as assets without its addends and ranges, looping as `looping` says (-1:
 * as the clips are). */
static void plain_assets(pm_asset_def out[CLIPS], int looping) {
    for (int i = 0; i < CLIPS; i++) {
        out[i] = pm_default_asset_def(&F.clips[i]);
        out[i].looping = looping;
    }
}

/* Uneven dynamic weights (the smallest ratio under half the mean one) make the exact walk score
 * a visited leaf's rows outright, eight at a time, and the rows one at a time where fewer than
 * eight are left in the matrix. Looping assets leave no block-transition rows behind the
 * searchable ones, so with a row count that is not a multiple of eight the last leaf ends in
 * such a tail. Every answer is brute force's, in both walks. */
static void test_uneven_weights_score_leaves(void **state) {
    (void)state;
    pm_asset_def assets[CLIPS];
    plain_assets(assets, 1);
    pm_database *db = build_database(database_def(3, 16), assets, CLIPS, DIMS);
    int rows, stride;
    pm_database_values(db, &rows, &stride);
    pm_database_info info;
    pm_database_get_info(&info, db);
    assert_int_equal(rows, info.unique_vectors); /* no rows behind the searchable ones */
    assert_int_not_equal(rows % 8, 0);
    /* A pose whose row is the matrix's last (rows are stored in leaf order): queries near it
     * reach the last leaf. */
    int last = -1;
    for (int p = 0; p < info.poses && last < 0; p++) {
        pm_pose_info pi;
        PM_ASSERT_OK(pm_database_pose(&pi, db, p, NULL));
        if (pi.vector == rows - 1) last = p;
    }
    assert_true(last >= 0);
    size_t ss;
    void *scratch = scratch_for_every_mode(db, &ss);
    const float *w = pm_database_weights_sqrt(db), *scale = pm_database_scales(db);
    pm_test_rng rng = {77};
    float q[DIMS], dyn[DIMS];
    for (int i = 0; i < 300; i++) {
        for (int d = 0; d < DIMS; d++) dyn[d] = w[d] * w[d] * powf(8.0f, 2.0f * pm_test_rng_float(&rng) - 1.0f);
        int p = i % 3 ? (int)(pm_test_rng_u32(&rng) % (uint32_t)info.poses) : last;
        PM_ASSERT_OK(pm_database_pose_features(q, db, p, NULL));
        for (int d = 0; d < DIMS; d++) q[d] += 0.3f * scale[d] * pm_test_rng_normal(&rng);
        pm_search_def bf = pm_default_search_def(), ex = bf;
        bf.mode = PM_SEARCH_BRUTEFORCE;
        bf.dynamic_weights = ex.dynamic_weights = dyn;
        pm_search_result rb, re[2];
        PM_ASSERT_OK(pm_search(&rb, db, q, &bf, scratch, ss, NULL));
        search_db_both_kernels(&re[0], &re[1], db, q, &ex, scratch, ss);
        assert_same(re[0], rb, "exact (baseline) with uneven weights", i);
        assert_same(re[1], rb, "exact (AVX2) with uneven weights", i);
        assert_memory_equal(&re[0], &re[1], sizeof re[0]);
    }
    free(scratch);
    pm_database_destroy(db);
}

/* Which way the walk takes, seen in its work: a query on a stored row with that row's pose as the
 * continuing pose starts from a best cost of 0, so bounded leaf points pass only where they lie on
 * the query (a block at most: eight exact costs or fewer), while a leaf scored outright costs all
 * of its rows (more than eight with leaves of up to 64). Uneven weights score, even ones bound. */
static void test_leaf_scoring_follows_the_weights(void **state) {
    (void)state;
    pm_asset_def assets[CLIPS]; /* no addends: nothing beats a cost of 0 */
    plain_assets(assets, -1);
    pm_database *db = build_database(database_def(3, 64), assets, CLIPS, DIMS);
    const int poses = pm_database_pose_count(db);
    size_t ss;
    void *scratch = scratch_for_every_mode(db, &ss);
    const float *w = pm_database_weights_sqrt(db);
    pm_test_rng rng = {78};
    float q[DIMS], uneven[DIMS], even[DIMS];
    for (int d = 0; d < DIMS; d++) {
        uneven[d] = w[d] * w[d] * (d % 2 ? 4.0f : 0.25f); /* r2 a quarter, the mean ratio about 2 */
        even[d] = w[d] * w[d] * (d % 2 ? 1.2f : 0.9f);
    }
    for (int i = 0; i < 50; i++) {
        int p = (int)(pm_test_rng_u32(&rng) % (uint32_t)poses);
        PM_ASSERT_OK(pm_database_pose_features(q, db, p, NULL));
        pm_search_def def = pm_default_search_def();
        def.continuing_pose = p;
        pm_search_result r;
        def.dynamic_weights = uneven;
        PM_ASSERT_OK(pm_search(&r, db, q, &def, scratch, ss, NULL));
        if (!r.continuing || r.candidates <= 8) fail_msg("pose %d, uneven weights: continuing %d, %d exact costs", p, r.continuing, r.candidates);
        def.dynamic_weights = even;
        PM_ASSERT_OK(pm_search(&r, db, q, &def, scratch, ss, NULL));
        if (!r.continuing || r.candidates > 8) fail_msg("pose %d, even weights: continuing %d, %d exact costs", p, r.continuing, r.candidates);
    }
    free(scratch);
    pm_database_destroy(db);
}

/* Brute force's eight-row kernel gives the one-row kernel's costs, bit for bit, and its mask is
 * cost + addend <= limit row by row: at every stride, with limits below, between, exactly at (a
 * tie passes) and above the rows' totals. */
static void test_cost_rows8_mask(void **state) {
    (void)state;
    pm_test_rng rng = {31};
    enum { MAX_STRIDE = 64 };
    float x[8 * MAX_STRIDE], q[MAX_STRIDE], w[MAX_STRIDE], add[8], rows8[8];
    for (int stride = 8; stride <= MAX_STRIDE; stride += 8)
        for (int i = 0; i < 400; i++) {
            for (int d = 0; d < stride; d++) {
                q[d] = pm_test_rng_normal(&rng);
                w[d] = pm_test_rng_float(&rng) * 2.0f;
            }
            for (int r = 0; r < 8; r++) {
                float off = (pm_test_rng_u32(&rng) & 1) ? 0.1f : 10.0f;
                for (int d = 0; d < stride; d++) x[r * stride + d] = q[d] + off * pm_test_rng_normal(&rng);
                add[r] = (pm_test_rng_u32(&rng) & 3) ? 0.0f : pm_test_rng_float(&rng);
            }
            pm_cost_rows8(rows8, q, x, w, stride);
            for (int r = 0; r < 8; r++) {
                float one = pm_cost_row(q, x + r * stride, w, stride);
                if (memcmp(&one, &rows8[r], sizeof one))
                    fail_msg("stride %d case %d row %d: cost %.9g, one-row kernel %.9g", stride, i, r, (double)rows8[r],
                             (double)one);
            }
            int pick = (int)(pm_test_rng_u32(&rng) % 8);
            float lim;
            switch (i % 5) {
            case 0: lim = rows8[pick] + add[pick]; break;
            case 1: lim = nextafterf(rows8[pick] + add[pick], -INFINITY); break;
            case 2: lim = INFINITY; break;
            case 3: lim = 0.0f; break;
            default: lim = (rows8[pick] + add[pick]) * pm_test_rng_float(&rng) * 2.0f; break;
            }
            unsigned want = 0;
            for (int r = 0; r < 8; r++) want |= (unsigned)(rows8[r] + add[r] <= lim) << r;
            unsigned got = pm_rows8_mask(rows8, add, lim);
            if (got != want) fail_msg("stride %d case %d: mask %#x, want %#x", stride, i, got, want);
        }
}

/* Every kernel build scans rows of every width to the same bits: the AVX-512 scan keeps the query
 * and weights in registers for rows of 8 to 32 floats (one scan each) and takes the general loop
 * past them, and its last rows (past the last whole block of eight) come one at a time. Brute
 * force and exact, with and without uneven dynamic weights and a continuing pose, against the
 * auto kernel's brute force. */
static void test_kernels_agree_at_every_width(void **state) {
    (void)state;
    static const int widths[] = {3, 9, 20, 27, 33, 41, 47, 50, 70};
    for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++) {
        const int dims = widths[k];
        pm_clip clips[3];
        pm_asset_def assets[3];
        for (int c = 0; c < 3; c++) {
            pm_test_random_clip(&clips[c], 150 + 29 * c + (int)k, dims, 100 + 7 * (uint64_t)k + (uint64_t)c);
            assets[c] = pm_default_asset_def(&clips[c]);
        }
        assets[1].cost_addend = 0.25f;
        pm_database *db = build_database(database_def(3, 16), assets, 3, dims);
        int rows, stride;
        pm_database_values(db, &rows, &stride);
        assert_int_equal(stride, (dims + 7) / 8 * 8);
        pm_database_info info;
        pm_database_get_info(&info, db);
        size_t ss;
        void *scratch = scratch_for_every_mode(db, &ss);
        const float *w = pm_database_weights_sqrt(db), *scale = pm_database_scales(db);
        float *q = (float *)malloc((size_t)dims * sizeof(float)), *dyn = (float *)malloc((size_t)dims * sizeof(float));
        assert_non_null(q);
        assert_non_null(dyn);
        pm_test_rng rng = {500 + (uint64_t)k};
        for (int i = 0; i < 60; i++) {
            PM_ASSERT_OK(pm_database_pose_features(q, db, (int)(pm_test_rng_u32(&rng) % (uint32_t)info.poses), NULL));
            for (int d = 0; d < dims; d++) {
                q[d] += (i % 3 ? 0.3f : 3.0f) * scale[d] * pm_test_rng_normal(&rng);
                dyn[d] = w[d] * w[d] * powf(4.0f, 2.0f * pm_test_rng_float(&rng) - 1.0f);
            }
            pm_search_def bf = pm_default_search_def(), ex = bf;
            bf.mode = PM_SEARCH_BRUTEFORCE;
            if (i % 2) bf.dynamic_weights = ex.dynamic_weights = dyn;
            if (i % 4 == 1) bf.continuing_pose = ex.continuing_pose = (int)(pm_test_rng_u32(&rng) % (uint32_t)info.poses);
            pm_search_result rb, r[2];
            PM_ASSERT_OK(pm_search(&rb, db, q, &bf, scratch, ss, NULL));
            search_db_both_kernels(&r[0], &r[1], db, q, &bf, scratch, ss);
            assert_memory_equal(&r[0], &r[1], sizeof r[0]);
            assert_memory_equal(&r[0], &rb, sizeof rb);
            search_db_both_kernels(&r[0], &r[1], db, q, &ex, scratch, ss);
            assert_memory_equal(&r[0], &r[1], sizeof r[0]);
            if (r[0].pose != rb.pose || r[0].cost != rb.cost)
                fail_msg("%d dimensions, query %d: exact pose %d (%.9g), brute force %d (%.9g)", dims, i, r[0].pose,
                         (double)r[0].cost, rb.pose, (double)rb.cost);
        }
        free(q);
        free(dyn);
        free(scratch);
        pm_database_destroy(db);
        for (int c = 0; c < 3; c++) pm_clip_destroy(&clips[c]);
    }
}

/* A continuing pose below -1 (none) is refused, not read as none; pm_search_databases counts the
 * work of every database it searched, not only that of the one whose answer it returns. */
static void test_continuing_range_and_combined_counts(void **state) {
    (void)state;
    float q[DIMS];
    first_query(q, 31);
    pm_search_def def = pm_default_search_def();
    def.continuing_pose = -2;
    pm_search_result r;
    pm_error err;
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "continuing pose -2 is outside -1.."));
    /* Database 0 scans every row but may return nothing (max_cost -inf); database 1 answers. */
    pm_search_def defs[2] = {pm_default_search_def(), pm_default_search_def()};
    defs[0].mode = PM_SEARCH_BRUTEFORCE;
    defs[0].max_cost = -INFINITY;
    pm_search_result r0 = run(q, defs[0]), r1 = run(q, defs[1]);
    assert_false(r0.found);
    assert_true(r0.candidates > 0 && r1.found);
    const pm_database *dbs[2] = {F.db, F.db};
    const float *qs[2] = {q, q};
    int which = -2;
    PM_ASSERT_OK(pm_search_databases(&r, &which, dbs, qs, defs, 2, F.scratch, F.scratch_size, NULL));
    assert_int_equal(which, 1);
    assert_int_equal(r.pose, r1.pose);
    assert_int_equal(r.candidates, r0.candidates + r1.candidates);
    assert_int_equal(r.nodes, r0.nodes + r1.nodes);
    assert_true(r.proven);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kdtree_neighbours),
        cmocka_unit_test(test_penalty_values),
        cmocka_unit_test(test_excluded_pose_sharing_a_row),
        cmocka_unit_test(test_rows_a_step_apart),
        cmocka_unit_test(test_heavy_weights_tight_bounds),
        cmocka_unit_test(test_uneven_weights_score_leaves),
        cmocka_unit_test(test_leaf_scoring_follows_the_weights),
        cmocka_unit_test(test_cost_rows8_mask),
        cmocka_unit_test(test_kernels_agree_at_every_width),
        cmocka_unit_test(test_continuing_range_and_combined_counts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
