/* The fixture of the search tests (test_search*.c): six random-curve clips with addends and
 * ranges, their database and scratch, and the helpers that query it and compare modes.
 * Header-only: each test binary is one file. */
#ifndef PM_TESTS_SEARCH_SUPPORT_H
#define PM_TESTS_SEARCH_SUPPORT_H

#include <stdlib.h>
#include <string.h>

#include "search_internal.h"
#include "support.h"

#define DIMS 9
#define CLIPS 6

typedef struct fixture {
    pm_clip clips[CLIPS];
    pm_asset_def assets[CLIPS];
    pm_database *db;
    void *scratch;
    size_t scratch_size;
    int poses;
} fixture;

static fixture F;

/* A database of `count` assets over a curve schema of `dims` dimensions, built as `def` says
 * otherwise. */
static inline pm_database *build_database(pm_database_def def, const pm_asset_def *assets, int count, int dims) {
    static pm_schema schema; /* static: a schema is about 62 KB */
    pm_test_curve_schema(&schema, dims);
    def.schema = &schema;
    pm_database *db = NULL;
    pm_error err;
    if (pm_database_build(&db, &def, assets, count, &err) != PM_OK) fail_msg("%s", err.message);
    return db;
}

/* The default database def with `pca` PCA components and exact-mode leaves of `leaf` rows. */
static inline pm_database_def database_def(int pca, int leaf) {
    pm_database_def def = pm_default_database_def();
    def.pca_components = pca;
    def.exact_leaf_size = leaf;
    return def;
}

/* Search scratch of `size` bytes, 64-byte aligned (aligned_alloc wants whole multiples). */
static inline void *alloc_scratch(size_t size) { return aligned_alloc(64, (size + 63) / 64 * 64); }

/* Scratch enough for every mode of db, pcakdtree with its neighbours unbounded; its size into
 * *size. */
static inline void *scratch_for_every_mode(const pm_database *db, size_t *size) {
    pm_search_def all = pm_default_search_def();
    all.kdtree_neighbors = 100000;
    *size = pm_search_scratch_size(db, &all);
    return alloc_scratch(*size);
}

static inline int setup(void **state) {
    (void)state;
    memset(&F, 0, sizeof F);
    for (int i = 0; i < CLIPS; i++) {
        pm_test_random_clip(&F.clips[i], 400 + 37 * i, DIMS, (uint64_t)i * 13 + 5);
        F.assets[i] = pm_default_asset_def(&F.clips[i]);
    }
    F.assets[2].cost_addend = 0.75f;
    F.assets[4].cost_addend = -0.5f;
    /* Ranges make addends vary within assets, so that every mode is checked against brute force
     * with per-pose addends and excluded spans (their bookkeeping: test_database.c). */
    static const pm_asset_range ranges1[] = {{3.0f, 6.0f, -0.3125f, 0}, {5.0f, 5.5f, 0.0f, 1}};
    static const pm_asset_range ranges4[] = {{5.0f, 8.0f, 0.5f, 0}, {7.0f, 9.0f, 0.25f, 0}};
    F.assets[1].ranges = ranges1, F.assets[1].range_count = 2;
    F.assets[4].ranges = ranges4, F.assets[4].range_count = 2;
    F.db = build_database(database_def(3, 32), F.assets, CLIPS, DIMS);
    F.scratch = scratch_for_every_mode(F.db, &F.scratch_size);
    F.poses = pm_database_pose_count(F.db);
    return 0;
}

static inline int teardown(void **state) {
    (void)state;
    pm_database_destroy(F.db);
    free(F.scratch);
    for (int i = 0; i < CLIPS; i++) pm_clip_destroy(&F.clips[i]);
    return 0;
}

static inline pm_search_result run(const float *q, pm_search_def def) {
    pm_search_result r;
    pm_error err;
    if (pm_search(&r, F.db, q, &def, F.scratch, F.scratch_size, &err) != PM_OK) fail_msg("search: %s", err.message);
    return r;
}

/* Queries: half near database rows (noise sigma 0.3 of the scale), half anywhere. */
static inline void make_query(float *q, pm_test_rng *rng, int i) {
    const float *scale = pm_database_scales(F.db);
    if (i % 2 == 0) {
        int p = (int)(pm_test_rng_u32(rng) % (uint32_t)F.poses);
        PM_ASSERT_OK(pm_database_pose_features(q, F.db, p, NULL));
        for (int d = 0; d < DIMS; d++) q[d] += 0.3f * scale[d] * pm_test_rng_normal(rng);
    } else {
        const float *offset = pm_database_offsets(F.db);
        for (int d = 0; d < DIMS; d++) q[d] = offset[d] + 4.0f * scale[d] * pm_test_rng_normal(rng);
    }
}

/* Query 0 of the stream seeded `seed`, into q. */
static inline void first_query(float *q, uint64_t seed) {
    pm_test_rng rng = {seed};
    make_query(q, &rng, 0);
}

/* The same, and its best match by the default search. */
static inline pm_search_result first_query_best(float *q, uint64_t seed) {
    first_query(q, seed);
    return run(q, pm_default_search_def());
}

/* The same search of db by the baseline and the AVX2 kernel, into a and b; the AVX-512 kernel's
 * answer must be b's to the bit (work counters too). On a CPU (or build) without AVX2 all take
 * the baseline, and without AVX-512 the last two are the same kernel, so comparing them cannot
 * fail there: the tests that do also compare with brute force, which still checks the results. */
static inline void search_db_both_kernels(pm_search_result *a, pm_search_result *b, const pm_database *db, const float *q,
                                          const pm_search_def *def, void *scratch, size_t scratch_size) {
    pm_error err;
    pm_search_result c;
    if (pm_search_kernel(a, db, q, def, scratch, scratch_size, PM_SEARCH_KERNEL_BASELINE, &err) != PM_OK ||
        pm_search_kernel(b, db, q, def, scratch, scratch_size, PM_SEARCH_KERNEL_AVX2, &err) != PM_OK ||
        pm_search_kernel(&c, db, q, def, scratch, scratch_size, PM_SEARCH_KERNEL_AVX512, &err) != PM_OK)
        fail_msg("search: %s", err.message);
    if (memcmp(b, &c, sizeof c) != 0)
        fail_msg("AVX-512 kernel: pose %d cost %.9g, %d costs; AVX2 pose %d cost %.9g, %d costs", c.pose, (double)c.cost,
                 c.candidates, b->pose, (double)b->cost, b->candidates);
}

/* The same on the fixture's database. */
static inline void search_both_kernels(pm_search_result *a, pm_search_result *b, const float *q, const pm_search_def *def) {
    search_db_both_kernels(a, b, F.db, q, def, F.scratch, F.scratch_size);
}

static inline void assert_same(pm_search_result a, pm_search_result b, const char *what, int i) {
    if (a.found != b.found || a.pose != b.pose || a.cost != b.cost || a.continuing != b.continuing)
        fail_msg("%s query %d: pose %d cost %.9g vs brute force pose %d cost %.9g", what, i, a.pose, (double)a.cost, b.pose,
                 (double)b.cost);
}

#endif
