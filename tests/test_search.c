/* Every search mode against brute force on random data, and the search contract: continuing
 * pose, addends, dynamic weights, bounds, penalties, errors, threads, work budgets (several
 * databases in one search: test_search_databases.c). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "search_support.h"

/* The exact mode's baseline and AVX2 walks add the same lanes in the same order: the same result
 * and the same work on every query. On a CPU (or build) without AVX2 both runs take the baseline
 * walk, so this check cannot fail there; the callers' comparisons of the exact mode with brute
 * force still run and still check the results. */
static void assert_kernels_agree(const float *q, pm_search_def def, int i) {
    pm_search_result a, b;
    search_both_kernels(&a, &b, q, &def);
    if (memcmp(&a, &b, sizeof a) != 0)
        fail_msg("query %d: baseline walk pose %d cost %.9g, %d costs, %d nodes; AVX2 walk pose %d cost %.9g, %d costs, %d nodes",
                 i, a.pose, (double)a.cost, a.candidates, a.nodes, b.pose, (double)b.cost, b.candidates, b.nodes);
}

static void test_modes_match_bruteforce(void **state) {
    (void)state;
    pm_test_rng rng = {1};
    pm_search_def bf = pm_default_search_def(), ex = bf, vp = bf, kd = bf;
    bf.mode = PM_SEARCH_BRUTEFORCE;
    vp.mode = PM_SEARCH_VPTREE;
    kd.mode = PM_SEARCH_PCAKDTREE;
    kd.kdtree_neighbors = 100000; /* every point: then the re-scoring sees everything */
    /* More neighbours than points find the same set: the scratch stops growing at the points. */
    pm_search_def most = kd;
    most.kdtree_neighbors = 1000000;
    assert_true(pm_search_scratch_size(F.db, &most) == pm_search_scratch_size(F.db, &kd));
    assert_true(pm_search_scratch_size(F.db, &kd) < (size_t)F.poses * 8 + 100000);
    float q[DIMS];
    for (int i = 0; i < 400; i++) {
        make_query(q, &rng, i);
        pm_search_result rb = run(q, bf);
        assert_true(rb.found);
        assert_int_equal(rb.nodes, 0);
        assert_same(run(q, ex), rb, "exact", i);
        assert_kernels_agree(q, ex, i);
        pm_search_result rv = run(q, vp), rk = run(q, kd);
        assert_same(rv, rb, "vptree", i);
        assert_same(rk, rb, "pcakdtree(all)", i);
        assert_true(rv.nodes > 0 && rk.nodes > 0); /* every tree mode reports its walk */
        pm_pose_info pi;
        PM_ASSERT_OK(pm_database_pose(&pi, F.db, rb.pose, NULL));
        assert_int_equal(pi.block_transition, 0);
        assert_float_equal(rb.cost, rb.dissimilarity + rb.cost_addend, 1e-5);
    }
    /* With UE's K = 200 pcakdtree is approximate but never better than the optimum. */
    kd.kdtree_neighbors = 200;
    for (int i = 0; i < 100; i++) {
        make_query(q, &rng, i);
        pm_search_result rk = run(q, kd), rb = run(q, bf);
        assert_true(rk.cost >= rb.cost);
        assert_true(rk.candidates <= 400);
    }
}

static void test_dynamic_weights(void **state) {
    (void)state;
    pm_test_rng rng = {2};
    const float *w = pm_database_weights_sqrt(F.db);
    float dyn[DIMS], q[DIMS];
    pm_search_def bf = pm_default_search_def(), ex = bf, vp = bf;
    bf.mode = PM_SEARCH_BRUTEFORCE;
    vp.mode = PM_SEARCH_VPTREE;
    for (int i = 0; i < 200; i++) {
        for (int d = 0; d < DIMS; d++) dyn[d] = w[d] * w[d] * powf(4.0f, 2.0f * pm_test_rng_float(&rng) - 1.0f);
        if (i % 5 == 0) dyn[i % DIMS] = 0.0f; /* a zeroed weight: the bound collapses, still exact */
        /* A few dimensions a hundred times heavier: the share beyond the smallest ratio, bounded
         * over value boxes, carries most of the bound. */
        if (i % 7 == 3)
            for (int d = i % 3; d < DIMS; d += 3) dyn[d] *= 100.0f;
        bf.dynamic_weights = ex.dynamic_weights = vp.dynamic_weights = dyn;
        make_query(q, &rng, i);
        pm_search_result rb = run(q, bf);
        assert_same(run(q, ex), rb, "exact+dynamic", i);
        assert_kernels_agree(q, ex, i);
        assert_same(run(q, vp), rb, "vptree+dynamic", i);
    }
    /* Every weight heavier than its stored one (the smallest ratio above 1), a few a hundred
     * times: the share beyond r2 times the stored weights must use that ratio. */
    for (int i = 0; i < 100; i++) {
        for (int d = 0; d < DIMS; d++) dyn[d] = w[d] * w[d] * (2.0f + 3.0f * pm_test_rng_float(&rng));
        for (int d = i % 3; d < DIMS; d += 3) dyn[d] *= 100.0f;
        bf.dynamic_weights = ex.dynamic_weights = vp.dynamic_weights = dyn;
        make_query(q, &rng, i);
        pm_search_result rb = run(q, bf);
        assert_same(run(q, ex), rb, "exact+heavier", i);
        assert_same(run(q, vp), rb, "vptree+heavier", i);
    }
    /* Even weights (each dimension's factor in [0.8, 1.25], and all of them scaled by one factor):
     * the smallest ratio stays above half the mean one, so the walk bounds leaf points before it
     * scores them, where the uneven weights above score a visited leaf's rows outright. */
    for (int i = 0; i < 100; i++) {
        float all = i % 2 ? 0.1f + 5.0f * pm_test_rng_float(&rng) : 1.0f;
        for (int d = 0; d < DIMS; d++) dyn[d] = all * w[d] * w[d] * powf(1.25f, 2.0f * pm_test_rng_float(&rng) - 1.0f);
        bf.dynamic_weights = ex.dynamic_weights = dyn;
        make_query(q, &rng, i);
        pm_search_result rb = run(q, bf);
        assert_same(run(q, ex), rb, "exact+even", i);
        assert_kernels_agree(q, ex, i);
    }
    /* Dynamic weights equal to the stored ones change nothing. */
    for (int d = 0; d < DIMS; d++) dyn[d] = w[d] * w[d];
    make_query(q, &rng, 0);
    pm_search_def plain = pm_default_search_def();
    ex.dynamic_weights = dyn;
    assert_same(run(q, ex), run(q, plain), "exact with the stored weights", 0);
}

/* Pruning margins follow the size of the terms a cost sums, not of the total: an addend of -1000
 * makes the best costs large negative numbers with tiny dissimilarities, and weights shrunk a
 * million-fold make every cost tiny; addends that half precision rounds must bound with the
 * rounded value. Exact must still equal brute force to the bit. */
static void test_margins_scale(void **state) {
    (void)state;
    /* Set 0: large addends (asset 1 wins everything); set 1: addends half precision rounds,
     * close enough that every asset competes. */
    static const float addends[2][CLIPS] = {{0.0f, -1000.0f, 0.0f, 500.3f, 0.0f, 0.1f},
                                            {0.1f, 0.3f, 0.7f, 0.05f, 0.9f, 0.2f}};
    for (int set = 0; set < 2; set++) {
        pm_asset_def assets[CLIPS];
        memcpy(assets, F.assets, sizeof assets);
        for (int i = 0; i < CLIPS; i++) assets[i].cost_addend = addends[set][i];
        pm_database *db = build_database(database_def(3, 32), assets, CLIPS, DIMS);
        size_t ss = pm_search_scratch_size(db, NULL);
        void *scratch = alloc_scratch(ss);
        const float *w = pm_database_weights_sqrt(db), *scale = pm_database_scales(db);
        float tiny[DIMS], q[DIMS];
        for (int d = 0; d < DIMS; d++) tiny[d] = w[d] * w[d] * 1e-6f;
        pm_test_rng rng = {21};
        int poses = pm_database_pose_count(db);
        for (int i = 0; i < 600; i++) {
            int p = (int)(pm_test_rng_u32(&rng) % (uint32_t)poses);
            PM_ASSERT_OK(pm_database_pose_features(q, db, p, NULL));
            for (int d = 0; d < DIMS; d++) q[d] += (i % 3 ? 0.01f : 0.3f) * scale[d] * pm_test_rng_normal(&rng);
            pm_search_def bf = pm_default_search_def(), ex = bf;
            bf.mode = PM_SEARCH_BRUTEFORCE;
            if (i % 2) bf.dynamic_weights = ex.dynamic_weights = tiny;
            if (set == 0 && i % 5 == 0)
                bf.continuing_pose = ex.continuing_pose = p, bf.continuing_cost_addend = ex.continuing_cost_addend = -2000.0f;
            pm_search_result rb, re;
            PM_ASSERT_OK(pm_search(&rb, db, q, &bf, scratch, ss, NULL));
            PM_ASSERT_OK(pm_search(&re, db, q, &ex, scratch, ss, NULL));
            assert_same(re, rb, set ? "exact (rounded addends, tiny weights)" : "exact (large addends, tiny weights)", i);
        }
        free(scratch);
        pm_database_destroy(db);
    }
}

static void test_continuing_pose(void **state) {
    (void)state;
    float q[DIMS];
    pm_search_result best = first_query_best(q, 3);
    pm_search_def def = pm_default_search_def();
    /* A pose that is not the best wins when its addend makes up the difference. */
    int other = (best.pose + 50) % F.poses;
    def.continuing_pose = other;
    def.continuing_cost_addend = -1e5f;
    pm_search_result r = run(q, def);
    assert_int_equal(r.pose, other);
    assert_true(r.continuing);
    /* And loses otherwise; the result is the same in every mode. */
    def.continuing_cost_addend = 0.0f;
    for (int m = 0; m < 4; m++) {
        def.mode = (pm_search_mode)m;
        def.kdtree_neighbors = 100000;
        r = run(q, def);
        assert_int_equal(r.pose, best.pose);
        assert_false(r.continuing);
    }
    /* A block-transition pose can continue. */
    int blocked = -1;
    for (int p = 0; p < F.poses && blocked < 0; p++) {
        pm_pose_info pi;
        PM_ASSERT_OK(pm_database_pose(&pi, F.db, p, NULL));
        if (pi.block_transition) blocked = p;
    }
    assert_true(blocked >= 0);
    def.mode = PM_SEARCH_EXACT;
    def.continuing_pose = blocked;
    def.continuing_cost_addend = -1e5f;
    r = run(q, def);
    assert_int_equal(r.pose, blocked);
    /* Ties go to the continuing pose: the best pose continuing with a zero addend. */
    def.continuing_pose = best.pose;
    def.continuing_cost_addend = 0.0f;
    r = run(q, def);
    assert_int_equal(r.pose, best.pose);
    assert_true(r.continuing);
    /* A positive addend moves on: the continuing pose is scored once, with its addend, so its
     * plain copy cannot win in its place (in every mode). */
    def.continuing_cost_addend = 1e5f;
    for (int m = 0; m < 4; m++) {
        def.mode = (pm_search_mode)m;
        r = run(q, def);
        assert_int_not_equal(r.pose, best.pose);
        assert_false(r.continuing);
    }
}

static void test_bounds_and_breakdown(void **state) {
    (void)state;
    float q[DIMS];
    first_query(q, 4);
    pm_search_def def = pm_default_search_def();
    float breakdown[DIMS];
    def.out_breakdown = breakdown;
    pm_search_result best = run(q, def);
    float sum = 0.0f;
    for (int c = 0; c < DIMS; c++) sum += breakdown[c];
    assert_float_equal(sum, best.dissimilarity, 1e-4f * (1.0f + best.dissimilarity));
    def.out_breakdown = NULL;
    for (int m = 0; m < 4; m++) {
        def.mode = (pm_search_mode)m;
        def.max_cost = best.cost * 0.999f;
        assert_false(run(q, def).found);
        def.max_cost = best.cost * 1.001f;
        assert_int_equal(run(q, def).pose, best.pose);
    }
}

typedef struct ban {
    int pose;
    int calls;
    int hopeless; /* calls for a candidate that could not win any more */
} ban;

static float ban_penalty(void *user, int pose, float cost, float best) {
    ban *b = (ban *)user;
    b->calls++;
    b->hopeless += !(cost <= best);
    return pose == b->pose ? INFINITY : 0.0f;
}

static void test_penalty_hook(void **state) {
    (void)state;
    pm_test_rng rng = {5};
    float q[DIMS];
    for (int i = 0; i < 50; i++) {
        make_query(q, &rng, i);
        pm_search_def def = pm_default_search_def();
        pm_search_result best = run(q, def);
        ban b = {best.pose, 0, 0};
        def.penalty = ban_penalty;
        def.penalty_user = &b;
        def.mode = PM_SEARCH_BRUTEFORCE;
        pm_search_result rb = run(q, def);
        assert_int_not_equal(rb.pose, best.pose);
        b.calls = 0;
        def.mode = PM_SEARCH_EXACT;
        pm_search_result re = run(q, def);
        assert_same(re, rb, "exact+penalty", i);
        /* Early rejection: the hook only sees candidates that could still win, a handful. */
        assert_int_equal(b.hopeless, 0);
        assert_true(b.calls < F.poses / 100);
    }
}

/* A hook that stops as search.h allows, once cost_so_far + penalty reaches best_cost: every even
 * pose is banned (an infinite penalty, cut short there). A penalty cut short must never win, not
 * even a tie it would take by its lower index: under weights of zero every cost is its addend,
 * so ties are everywhere, and the tree modes reach lower poses after higher ones. Each mode must
 * answer as brute force does with the whole penalty. */
static float ban_even(void *user, int pose, float cost, float best) {
    int early = *(const int *)user;
    if (pose % 2) return 0.0f;
    if (!early || !(best < INFINITY)) return INFINITY;
    float penalty = best - cost; /* the least that reaches best_cost, as a hook adding up would stop */
    while (cost + penalty < best) penalty = nextafterf(penalty, INFINITY);
    return penalty;
}

static void test_penalty_stopping_early(void **state) {
    (void)state;
    pm_test_rng rng = {29};
    float q[DIMS], zero[DIMS] = {0};
    const int whole = 0, early = 1;
    for (int i = 0; i < 40; i++) {
        make_query(q, &rng, i);
        pm_search_def def = pm_default_search_def();
        def.dynamic_weights = i % 2 ? zero : NULL;
        def.continuing_pose = i % 4 == 1 ? (int)(pm_test_rng_u32(&rng) % (uint32_t)F.poses) : -1;
        def.penalty = ban_even;
        def.penalty_user = (void *)&whole;
        def.mode = PM_SEARCH_BRUTEFORCE;
        pm_search_result rb = run(q, def);
        assert_true(rb.found);
        def.penalty_user = (void *)&early;
        for (int m = 0; m < 4; m++) {
            def.mode = (pm_search_mode)m;
            pm_search_result r = run(q, def);
            assert_true(r.found);
            assert_true(r.pose % 2 == 1 || r.continuing);
            assert_true(r.penalty == 0.0f);
            if (m != PM_SEARCH_PCAKDTREE) assert_same(r, rb, pm_search_mode_name(def.mode), i);
        }
    }
}

static void test_errors(void **state) {
    (void)state;
    float q[DIMS] = {0};
    pm_search_def def = pm_default_search_def();
    pm_search_result r;
    pm_error err;
    /* Short of pm_search_scratch_size: a mismatch, as the blend jobs call their short buffers. */
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, 16, &err), PM_ERR_MISMATCH);
    assert_non_null(strstr(err.message, "scratch"));
    assert_int_equal(pm_search(&r, F.db, q, &def, (char *)F.scratch + 4, F.scratch_size - 4, &err), PM_ERR_INVALID_ARGUMENT);
    /* A failed search after a successful one reads "not found", not the earlier answer, and
     * leaves the breakdown alone. */
    float breakdown[DIMS];
    def.out_breakdown = breakdown;
    PM_ASSERT_OK(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, NULL));
    assert_int_equal(r.found, 1);
    for (int c = 0; c < DIMS; c++) breakdown[c] = -7.0f;
    q[3] = NAN;
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "3"));
    assert_true(r.found == 0 && r.pose == -1 && r.asset == -1 && r.candidates == 0);
    for (int c = 0; c < DIMS; c++) assert_true(breakdown[c] == -7.0f);
    def.out_breakdown = NULL;
    q[3] = 0.0f;
    def.continuing_pose = F.poses;
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    def.continuing_pose = -1;
    float dyn[DIMS] = {1, 1, 1, -1, 1, 1, 1, 1, 1};
    def.dynamic_weights = dyn;
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    def.dynamic_weights = NULL;
    def.mode = (pm_search_mode)9;
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_search(&r, NULL, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "database is NULL"));
    def.mode = PM_SEARCH_EXACT;
    /* No def: the defaults (search.h), as pm_search_databases takes NULL defs. */
    const pm_search_def defaults = pm_default_search_def();
    pm_search_result with_default = run(q, defaults);
    PM_ASSERT_OK(pm_search(&r, F.db, q, NULL, F.scratch, F.scratch_size, &err));
    assert_true(r.pose == with_default.pose && r.cost == with_default.cost);
    assert_true(pm_search_scratch_size(F.db, NULL) == pm_search_scratch_size(F.db, &defaults));
    assert_int_equal(pm_search(&r, F.db, q, &def, NULL, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "scratch is NULL"));
    /* A query size for another schema, a NaN budget, weights or values whose costs would overflow. */
    def.query_size = DIMS + 1;
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "cardinality"));
    def.query_size = DIMS;
    PM_ASSERT_OK(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err));
    def.max_cost = NAN;
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "max_cost"));
    def.max_cost = INFINITY;
    float huge[DIMS];
    for (int d = 0; d < DIMS; d++) huge[d] = 1.0f;
    huge[2] = 1e30f;
    assert_int_equal(pm_search(&r, F.db, huge, &def, F.scratch, F.scratch_size, &err), PM_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "query value 2"));
    for (int d = 0; d < DIMS; d++) dyn[d] = 1.0f;
    dyn[4] = 1e30f;
    def.dynamic_weights = dyn;
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "dynamic weight 4"));
    def.dynamic_weights = NULL;
    /* max_cost is inclusive: a budget equal to the best cost still finds it. */
    pm_search_result best = run(q, def);
    def.max_cost = best.cost;
    assert_int_equal(run(q, def).pose, best.pose);
    assert_int_equal(pm_search_mode_from_name("exact"), PM_SEARCH_EXACT);
    assert_int_equal(pm_search_mode_from_name("fast"), -1);
    for (int m = 0; m < 4; m++) assert_int_equal(pm_search_mode_from_name(pm_search_mode_name((pm_search_mode)m)), m);
    assert_string_equal(pm_search_mode_name((pm_search_mode)9), "?");
    /* The continuing pose's addend and the KD-tree's neighbour count, by name and range. */
    def = pm_default_search_def();
    def.continuing_pose = 0;
    def.continuing_cost_addend = INFINITY;
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "search: continuing cost addend is not finite");
    def.continuing_cost_addend = NAN;
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    def = pm_default_search_def();
    def.mode = PM_SEARCH_PCAKDTREE;
    def.kdtree_neighbors = 0;
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "search: 0 KD-tree neighbours (1..1000000)");
    def.kdtree_neighbors = 1000001;
    assert_int_equal(pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "1000001 KD-tree neighbours"));
}

/* Brute force's baseline and AVX2 scans (the one a CPU without AVX2 runs, and the one used where
 * a dynamic weight near zero makes the VP-tree's bounds useless) agree bit for bit, with and
 * without a penalty hook, and with brute force's answer of the auto kernel. */
static void test_bruteforce_kernels_agree(void **state) {
    (void)state;
    pm_test_rng rng = {8};
    float q[DIMS];
    for (int i = 0; i < 100; i++) {
        make_query(q, &rng, i);
        pm_search_def def = pm_default_search_def();
        def.mode = PM_SEARCH_BRUTEFORCE;
        pm_search_result best = run(q, def);
        ban b = {best.pose, 0, 0};
        if (i % 2) {
            def.penalty = ban_penalty;
            def.penalty_user = &b;
        }
        pm_search_result a, v;
        search_both_kernels(&a, &v, q, &def);
        if (memcmp(&a, &v, sizeof a) != 0)
            fail_msg("query %d: baseline scan pose %d cost %.9g, AVX2 scan pose %d cost %.9g", i, a.pose, (double)a.cost, v.pose,
                     (double)v.cost);
        if (i % 2) assert_int_not_equal(a.pose, best.pose);
        else assert_same(a, best, "baseline brute force", i);
    }
}

/* The exact mode with any number of exact components: an odd count of block rows (an even
 * count of components plus the residual row) leaves one row past the pairs the walk sums two
 * at a time. Each answers with brute force's optimum, in both walks. */
static void test_exact_components_of_any_parity(void **state) {
    (void)state;
    for (int ke = 1; ke <= 6; ke++) {
        pm_database_def def = database_def(3, 16);
        def.exact_components = ke;
        pm_database *db = build_database(def, F.assets, CLIPS, DIMS);
        pm_search_def ex = pm_default_search_def(), bf = ex;
        bf.mode = PM_SEARCH_BRUTEFORCE;
        size_t ss = pm_search_scratch_size(db, &ex);
        if (pm_search_scratch_size(db, &bf) > ss) ss = pm_search_scratch_size(db, &bf);
        void *scratch = alloc_scratch(ss);
        pm_test_rng rng = {40 + (uint64_t)ke};
        float q[DIMS];
        for (int i = 0; i < 100; i++) {
            make_query(q, &rng, i);
            pm_search_result rb, re[2];
            PM_ASSERT_OK(pm_search(&rb, db, q, &bf, scratch, ss, NULL));
            search_db_both_kernels(&re[0], &re[1], db, q, &ex, scratch, ss);
            for (int k = 0; k < 2; k++) {
                if (re[k].pose != rb.pose || re[k].cost != rb.cost)
                    fail_msg("%d exact components, query %d, %s walk: pose %d cost %.9g, brute force pose %d cost %.9g", ke, i,
                             k ? "AVX2" : "baseline", re[k].pose, (double)re[k].cost, rb.pose, (double)rb.cost);
            }
            assert_memory_equal(&re[0], &re[1], sizeof re[0]);
        }
        free(scratch);
        pm_database_destroy(db);
    }
}

typedef struct worker {
    pm_search_mode mode;
    int mismatches;
} worker;

static void *search_thread(void *arg) {
    worker *w = (worker *)arg;
    pm_search_def def = pm_default_search_def(), bf = def;
    def.mode = w->mode;
    bf.mode = PM_SEARCH_BRUTEFORCE;
    size_t ss = pm_search_scratch_size(F.db, &def);
    size_t ss_bf = pm_search_scratch_size(F.db, &bf);
    if (ss_bf > ss) ss = ss_bf;
    void *scratch = alloc_scratch(ss);
    if (!scratch) {
        w->mismatches = 1000; /* no searches ran: fail rather than pass */
        return NULL;
    }
    pm_test_rng rng = {77 + (uint64_t)w->mode};
    float q[DIMS];
    for (int i = 0; i < 200; i++) {
        make_query(q, &rng, i);
        pm_search_result a, b;
        /* A failed search counts as a mismatch (and its result is not read). */
        if (pm_search(&a, F.db, q, &def, scratch, ss, NULL) != PM_OK ||
            pm_search(&b, F.db, q, &bf, scratch, ss, NULL) != PM_OK) {
            w->mismatches++;
            continue;
        }
        w->mismatches += !a.found || !b.found || a.pose != b.pose || a.cost != b.cost;
    }
    free(scratch);
    return NULL;
}

/* A work budget (max_nodes) bounds the exact walk: a cut walk returns the best it found with
 * proven 0, never below the optimum; a walk within its budget is the unbudgeted one bit for bit;
 * nothing found yet keeps the walk going; the continuing pose counts as found; several databases
 * are proven only when every search was. */
static void test_work_budget(void **state) {
    (void)state;
    pm_test_rng rng = {31};
    pm_search_def ex = pm_default_search_def(), bf = ex, vp = ex, kd = ex;
    bf.mode = PM_SEARCH_BRUTEFORCE;
    vp.mode = PM_SEARCH_VPTREE;
    kd.mode = PM_SEARCH_PCAKDTREE;
    float q[DIMS];
    static const int budgets[] = {1, 2, 4, 8, 16, 64};
    int cut = 0, kept = 0;
    for (int i = 0; i < 300; i++) {
        make_query(q, &rng, i);
        pm_search_result r0 = run(q, ex);
        assert_true(r0.found && r0.proven);
        assert_true(run(q, bf).proven && run(q, vp).proven);
        assert_false(run(q, kd).proven); /* approximate: its answer is never proven */
        for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
            pm_search_def def = ex;
            def.max_nodes = budgets[b];
            pm_search_result r = run(q, def), again = run(q, def);
            assert_memory_equal(&r, &again, sizeof r); /* work, not time: the same answer */
            assert_kernels_agree(q, def, i);
            assert_true(r.found);
            assert_true(r.cost >= r0.cost);
            if (r.proven) {
                assert_same(r, r0, "exact within its budget", i);
                kept++;
            } else {
                assert_true(r.nodes >= budgets[b]); /* cut only once the budget is spent */
                assert_true(r.nodes < r0.nodes);
                cut++;
            }
        }
        /* A budget the walk does not exceed changes nothing, the work counters included. */
        pm_search_def enough = ex;
        enough.max_nodes = r0.nodes;
        pm_search_result r = run(q, enough);
        assert_memory_equal(&r, &r0, sizeof r);
    }
    assert_true(cut > 0 && kept > 0);

    /* The continuing pose is found before the walk starts: one node, then the cut. */
    float cq[DIMS];
    first_query(cq, 9);
    pm_search_def cont = ex;
    cont.continuing_pose = 5;
    cont.continuing_cost_addend = 1000.0f;
    cont.max_nodes = 1;
    pm_search_result rc = run(cq, cont);
    assert_true(rc.found && rc.continuing && !rc.proven);
    assert_int_equal(rc.pose, 5);
    assert_int_equal(rc.nodes, 1);

    /* Several databases: proven only when every search was - a cut first search may have
     * missed a pose cheaper than anything the second one had to beat. */
    pm_search_def defs[2] = {ex, ex};
    defs[0].max_nodes = 2;
    assert_false(run(cq, defs[0]).proven);
    const pm_database *dbs[2] = {F.db, F.db};
    const float *qs[2] = {cq, cq};
    pm_search_result rm;
    PM_ASSERT_OK(pm_search_databases(&rm, NULL, dbs, qs, defs, 2, F.scratch, F.scratch_size, NULL));
    assert_false(rm.proven);
    defs[0].max_nodes = 0;
    PM_ASSERT_OK(pm_search_databases(&rm, NULL, dbs, qs, defs, 2, F.scratch, F.scratch_size, NULL));
    assert_true(rm.proven);
    /* An earlier database's answer counts as found for a later search's budget: the second
     * search, which can find nothing cheaper than the first's optimum (the same query), is cut
     * after its one node instead of walking on unbounded to prove that. */
    pm_search_result alone = run(cq, ex);
    assert_true(alone.nodes > 2);
    defs[0].max_nodes = 0;
    defs[1].max_nodes = 1;
    int which = -2;
    PM_ASSERT_OK(pm_search_databases(&rm, &which, dbs, qs, defs, 2, F.scratch, F.scratch_size, NULL));
    assert_int_equal(which, 0);
    assert_int_equal(rm.pose, alone.pose);
    assert_int_equal(rm.nodes, alone.nodes + 1);
    assert_false(rm.proven);
    /* Within its budget the second search is complete, and so is the proof. */
    defs[1].max_nodes = alone.nodes + 1;
    PM_ASSERT_OK(pm_search_databases(&rm, &which, dbs, qs, defs, 2, F.scratch, F.scratch_size, NULL));
    assert_int_equal(which, 0);
    assert_true(rm.proven);

    pm_search_def bad = ex;
    bad.max_nodes = -1;
    pm_search_result r;
    pm_error err;
    assert_int_equal(pm_search(&r, F.db, cq, &bad, F.scratch, F.scratch_size, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "max_nodes -1 is negative"));
}

static void test_threads_share_a_database(void **state) {
    (void)state;
    pthread_t t[3];
    worker w[3] = {{PM_SEARCH_EXACT, 0}, {PM_SEARCH_VPTREE, 0}, {PM_SEARCH_EXACT, 0}};
    for (int i = 0; i < 3; i++) assert_int_equal(pthread_create(&t[i], NULL, search_thread, &w[i]), 0);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 3; i++) assert_int_equal(w[i].mismatches, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes_match_bruteforce),
        cmocka_unit_test(test_dynamic_weights),
        cmocka_unit_test(test_margins_scale),
        cmocka_unit_test(test_continuing_pose),
        cmocka_unit_test(test_bounds_and_breakdown),
        cmocka_unit_test(test_penalty_hook),
        cmocka_unit_test(test_penalty_stopping_early),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_bruteforce_kernels_agree),
        cmocka_unit_test(test_exact_components_of_any_parity),
        cmocka_unit_test(test_threads_share_a_database),
        cmocka_unit_test(test_work_budget),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
