/* Several databases in one search (one answer across them, each with its own schema, weights
 * and continuing pose) and searches that find nothing in every mode. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_support.h"

/* The fixture's database twice, searched with queries qs and defs (NULL: the defaults): the answer
 * must come from database want_db and be want's pose at want's cost. */
static pm_search_result expect_pair(const float *const qs[2], const pm_search_def *defs, int want_db,
                                    const pm_search_result *want) {
    const pm_database *dbs[2] = {F.db, F.db};
    pm_search_result r;
    int which = -2;
    PM_ASSERT_OK(pm_search_databases(&r, &which, dbs, qs, defs, 2, F.scratch, F.scratch_size, NULL));
    assert_int_equal(which, want_db);
    assert_int_equal(r.pose, want->pose);
    assert_true(r.cost == want->cost);
    return r;
}

static void test_several_databases(void **state) {
    (void)state;
    float q[DIMS];
    pm_search_result best = first_query_best(q, 6);
    pm_search_def def = pm_default_search_def();
    const pm_database *dbs[2] = {F.db, F.db};
    const float *qs[2] = {q, q};
    pm_search_result r;
    int which = -2;
    PM_ASSERT_OK(pm_search_databases(&r, &which, dbs, qs, NULL, 2, F.scratch, F.scratch_size, NULL));
    assert_int_equal(r.pose, best.pose);
    assert_int_equal(which, 0); /* ties stay with the first database */
    /* The second database's query is the best pose's own features: a strictly lower cost (the
     * noisy query is not on a row), found in database 1 whichever order they come in. */
    float exact_q[DIMS];
    PM_ASSERT_OK(pm_database_pose_features(exact_q, F.db, best.pose, NULL));
    pm_search_result better = run(exact_q, def);
    assert_true(better.cost < best.cost);
    const float *qs2[2] = {q, exact_q};
    r = expect_pair(qs2, NULL, 1, &better);
    assert_true(r.cost < best.cost);
    const float *qs3[2] = {exact_q, q};
    expect_pair(qs3, NULL, 0, &better);
    /* A database's own max_cost below the best so far still holds: the better pose of database 1
     * costs more than its def allows, so database 0's answer stands. */
    pm_search_def defs[2] = {def, def};
    defs[1].max_cost = better.cost - 1.0f;
    expect_pair(qs2, defs, 0, &best);
    /* At most PM_SEARCH_MAX_DATABASES databases. */
    const pm_database *many[PM_SEARCH_MAX_DATABASES + 1];
    const float *many_q[PM_SEARCH_MAX_DATABASES + 1];
    for (int i = 0; i <= PM_SEARCH_MAX_DATABASES; i++) many[i] = F.db, many_q[i] = q;
    PM_ASSERT_OK(pm_search_databases(&r, &which, many, many_q, NULL, PM_SEARCH_MAX_DATABASES, F.scratch, F.scratch_size, NULL));
    assert_int_equal(which, 0);
    pm_error err;
    assert_int_equal(pm_search_databases(&r, &which, many, many_q, NULL, PM_SEARCH_MAX_DATABASES + 1, F.scratch,
                                         F.scratch_size, &err),
                     PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_search_databases: 65 databases is outside 1..64");
    assert_int_equal(which, -1);
}

/* Databases of different schemas: each def carries its own dynamic weights, breakdown buffer,
 * query size and continuing pose; the result is the cheapest over them, as searched alone. */
static void test_databases_of_different_schemas(void **state) {
    (void)state;
    enum { SMALL = 5 };
    pm_clip clips[2];
    pm_asset_def assets[2];
    for (int i = 0; i < 2; i++) {
        pm_test_random_clip(&clips[i], 300, SMALL, 91 + (uint64_t)i);
        assets[i] = pm_default_asset_def(&clips[i]);
    }
    pm_database_def dd = pm_default_database_def();
    dd.pca_components = 2;
    pm_database *small = build_database(dd, assets, 2, SMALL);
    size_t ss = PM_MAX(F.scratch_size, pm_search_scratch_size(small, NULL));
    void *scratch = alloc_scratch(ss);
    pm_database_info big_info, small_info;
    pm_database_get_info(&big_info, F.db);
    pm_database_get_info(&small_info, small);
    pm_test_rng rng = {8};
    for (int i = 0; i < 40; i++) {
        float qa[DIMS], qb[SMALL], wa[DIMS], wb[SMALL];
        make_query(qa, &rng, i);
        int sp = (int)(pm_test_rng_u32(&rng) % (uint32_t)pm_database_pose_count(small));
        PM_ASSERT_OK(pm_database_pose_features(qb, small, sp, NULL));
        for (int d = 0; d < SMALL; d++) qb[d] += 0.5f * pm_database_scales(small)[d] * pm_test_rng_normal(&rng);
        for (int d = 0; d < DIMS; d++) wa[d] = 0.5f + pm_test_rng_float(&rng);
        for (int d = 0; d < SMALL; d++) wb[d] = 0.5f + pm_test_rng_float(&rng);
        float ba[PM_MAX_CHANNELS], bb[PM_MAX_CHANNELS];
        for (int c = 0; c < PM_MAX_CHANNELS; c++) ba[c] = bb[c] = -1.0f; /* must be overwritten */
        pm_search_def defs[2] = {pm_default_search_def(), pm_default_search_def()};
        defs[0].query_size = DIMS, defs[0].dynamic_weights = wa, defs[0].out_breakdown = ba;
        defs[1].query_size = SMALL, defs[1].dynamic_weights = wb, defs[1].out_breakdown = bb;
        defs[1].continuing_pose = sp, defs[1].continuing_cost_addend = (i % 2) ? -0.5f : 0.0f;
        if (i % 3 == 0) defs[0].mode = defs[1].mode = PM_SEARCH_BRUTEFORCE;
        pm_search_result alone[2], r;
        PM_ASSERT_OK(pm_search(&alone[0], F.db, qa, &defs[0], scratch, ss, NULL));
        PM_ASSERT_OK(pm_search(&alone[1], small, qb, &defs[1], scratch, ss, NULL));
        const pm_database *dbs[2] = {F.db, small};
        const float *qs[2] = {qa, qb};
        int which = -2;
        PM_ASSERT_OK(pm_search_databases(&r, &which, dbs, qs, defs, 2, scratch, ss, NULL));
        int want = alone[1].cost < alone[0].cost ? 1 : 0;
        assert_int_equal(which, want);
        assert_int_equal(r.pose, alone[want].pose);
        assert_true(r.cost == alone[want].cost);
        assert_int_equal(r.continuing, alone[want].continuing);
        /* The winner's breakdown sums to its dissimilarity; a loser found nothing cheaper: zeros. */
        const float *bw = want ? bb : ba;
        int channels = want ? small_info.channels : big_info.channels;
        double sum = 0.0;
        for (int c = 0; c < channels; c++) sum += bw[c];
        assert_true(fabs(sum - r.dissimilarity) <= 1e-4 * (1.0 + r.dissimilarity));
        if (want == 1)
            for (int c = 0; c < big_info.channels; c++) assert_true(ba[c] >= 0.0f);
        else
            for (int c = 0; c < small_info.channels; c++) assert_true(bb[c] == 0.0f);
    }
    /* A query sized for the other database is caught, naming the database. */
    pm_search_def defs[2] = {pm_default_search_def(), pm_default_search_def()};
    defs[0].query_size = DIMS, defs[1].query_size = DIMS;
    float qa[DIMS] = {0}, qb[SMALL] = {0};
    memcpy(qa, pm_database_offsets(F.db), sizeof qa);
    memcpy(qb, pm_database_offsets(small), sizeof qb);
    const pm_database *dbs[2] = {F.db, small};
    const float *qs[2] = {qa, qb};
    pm_search_result r;
    int which = 7;
    pm_error err;
    assert_int_equal(pm_search_databases(&r, &which, dbs, qs, defs, 2, scratch, ss, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "database 1"));
    assert_non_null(strstr(err.message, "cardinality"));
    /* Database 1's def is refused before database 0 is searched: the failed call returns none of
     * an answer, nor writes database 0's breakdown (it did, the checks coming in turn). */
    assert_int_equal(r.found, 0);
    assert_int_equal(r.pose, -1);
    assert_int_equal(which, -1);
    float ba[PM_MAX_CHANNELS];
    for (int c = 0; c < big_info.channels; c++) ba[c] = -7.0f;
    defs[0].out_breakdown = ba;
    defs[1].query_size = SMALL;
    defs[1].max_cost = NAN;
    assert_int_equal(pm_search_databases(&r, &which, dbs, qs, defs, 2, scratch, ss, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "database 1: search: max_cost is not a number"));
    for (int c = 0; c < big_info.channels; c++) assert_true(ba[c] == -7.0f);
    defs[0].out_breakdown = NULL;
    defs[1].max_cost = pm_default_search_def().max_cost;
    defs[1].query_size = DIMS;
    /* The argument checks too leave "not found" behind, not the last call's result. */
    PM_ASSERT_OK(pm_search_databases(&r, &which, dbs, qs, NULL, 2, scratch, ss, NULL));
    assert_int_equal(r.found, 1);
    assert_int_equal(pm_search_databases(&r, &which, dbs, qs, defs, 0, scratch, ss, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_search_databases: 0 databases is outside 1..64");
    assert_true(r.found == 0 && r.pose == -1 && r.asset == -1 && which == -1);
    which = 7;
    r.found = 1, r.pose = 0; /* a stale answer, so that both checks below can fail */
    assert_int_equal(pm_search_databases(&r, &which, NULL, qs, defs, 2, scratch, ss, &err), PM_ERR_INVALID_ARGUMENT);
    assert_true(r.found == 0 && r.pose == -1 && which == -1);
    which = 7;
    assert_int_equal(pm_search_databases(NULL, &which, dbs, qs, defs, 2, scratch, ss, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(which, -1);
    free(scratch);
    pm_database_destroy(small);
    for (int i = 0; i < 2; i++) pm_clip_destroy(&clips[i]);
}

static float reject_all(void *user, int pose, float cost_so_far, float best_cost) {
    (void)user, (void)pose, (void)cost_so_far, (void)best_cost;
    return INFINITY;
}

/* Nothing found is nothing found in every mode: a penalty that rejects every candidate, or
 * costs that would overflow, never make an infinite-cost "result". */
static void test_nothing_found(void **state) {
    (void)state;
    float q[DIMS];
    first_query(q, 12);
    for (int m = 0; m <= PM_SEARCH_VPTREE; m++) {
        pm_search_def def = pm_default_search_def();
        def.mode = (pm_search_mode)m;
        def.penalty = reject_all;
        float bd[PM_MAX_CHANNELS];
        for (int c = 0; c < PM_MAX_CHANNELS; c++) bd[c] = -1.0f;
        def.out_breakdown = bd;
        pm_search_result r = run(q, def);
        assert_int_equal(r.found, 0);
        assert_int_equal(r.pose, -1);
        assert_true(bd[0] == 0.0f);
        def.continuing_pose = 3; /* the continuing pose is rejected too */
        r = run(q, def);
        assert_int_equal(r.found, 0);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_several_databases),
        cmocka_unit_test(test_databases_of_different_schemas),
        cmocka_unit_test(test_nothing_found),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
