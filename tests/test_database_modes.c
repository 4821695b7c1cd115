/* Databases built for some search modes only (pm_database_def.search_modes): what they hold,
 * what they answer and how their files are checked. */
#include <math.h>

#include "database_image.h"

static pm_database *build_modes(const fixture *f, unsigned modes, int threads) {
    pm_database_def d = f->def;
    d.search_modes = modes;
    d.threads = threads;
    return build_def(f, &d);
}

static uint32_t image_version(const pm_database *db) {
    pmdb_header h;
    memcpy(&h, pm_database_bytes(db, NULL), sizeof h);
    return h.version;
}

/* Query rows near the database's own rows (raw values: offset + scale * normalised). */
static void make_queries(float *q, int count, const pm_database *db) {
    pm_database_info in;
    pm_database_get_info(&in, db);
    pm_test_rng rng = {7};
    for (int i = 0; i < count; i++) {
        const float *row = pm_db_row(db, (uint32_t)(i * 13) % (uint32_t)in.unique_vectors);
        for (int d = 0; d < in.cardinality; d++) {
            float noise = 0.3f * pm_test_rng_normal(&rng);
            q[i * in.cardinality + d] = db->offset[d] + db->scale[d] * (row[d] + noise);
        }
    }
}

/* Every subset of the modes: the structures left out cost nothing, the rest is the full
 * database's, bit for bit, and so are the answers of every mode it keeps. */
static void test_every_subset(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 150);
    pm_database *full = build_modes(&f, PM_SEARCH_MODES_ALL, 1);
    pm_database_info fi;
    pm_database_get_info(&fi, full);
    assert_int_equal(fi.search_modes, PM_SEARCH_MODES_ALL);
    assert_int_equal(image_version(full), PMDB_VERSION);
    enum { Q = 40 };
    float *queries = malloc((size_t)Q * (size_t)fi.cardinality * sizeof(float));
    make_queries(queries, Q, full);
    float weights[DIMS];
    for (int d = 0; d < DIMS; d++) weights[d] = 0.25f + 0.5f * (float)d; /* uneven dynamic weights */
    size_t full_size = 0;
    pm_database_bytes(full, &full_size);
    pm_search_def all = pm_default_search_def();
    all.kdtree_neighbors = 50;
    size_t ss = pm_search_scratch_size(full, &all);
    void *scratch = aligned_alloc(64, (ss + 63) / 64 * 64);
    for (unsigned mask = 1; mask <= PM_SEARCH_MODES_ALL; mask++) { /* (0 is refused: test_def_and_key) */
        pm_database *db = build_modes(&f, mask, 1);
        const unsigned kept = mask | PM_SEARCH_MODE_BIT(PM_SEARCH_BRUTEFORCE);
        pm_database_info in;
        pm_database_get_info(&in, db);
        assert_int_equal(in.search_modes, kept);
        assert_int_equal(pm_database_settings(db)->search_modes, kept);
        size_t n = 0;
        const void *bytes = pm_database_bytes(db, &n);
        if ((kept & PMDB_TREE_MODES) == PMDB_TREE_MODES) {
            /* Every structure: the full database, brute force's bit given or not. */
            assert_int_equal(n, full_size);
            assert_memory_equal(bytes, pm_database_bytes(full, NULL), n);
        } else {
            assert_true(n < full_size);
            assert_int_equal(image_version(db), PMDB_VERSION_PARTIAL);
            assert_string_not_equal(in.key, fi.key);
        }
        /* The same rows, poses and PCA as the full database. */
        assert_int_equal(in.unique_vectors, fi.unique_vectors);
        assert_int_equal(in.searchable_poses, fi.searchable_poses);
        assert_int_equal(in.exact_components, fi.exact_components);
        assert_int_equal(in.unique_pca_vectors, kept & PM_SEARCH_MODE_BIT(PM_SEARCH_PCAKDTREE) ? fi.unique_pca_vectors : -1);
        assert_memory_equal(db->values, full->values, (size_t)fi.unique_vectors * (size_t)db->stride * sizeof(float));
        assert_memory_equal(db->meta, full->meta, (size_t)fi.poses * sizeof(uint64_t));
        assert_memory_equal(db->pca_basis, full->pca_basis, (size_t)DIMS * DIMS * sizeof(float));
        pm_error err;
        if (pm_database_verify(db, &err) != PM_OK) fail_msg("modes 0x%x: %s", mask, err.message);
        /* Saved and loaded, the same database. */
        pm_database *back = NULL;
        if (pm_database_load_memory(&back, bytes, n, 0, NULL, &err) != PM_OK) fail_msg("modes 0x%x: %s", mask, err.message);
        pm_database_info bi;
        pm_database_get_info(&bi, back);
        assert_int_equal(bi.search_modes, kept);
        assert_string_equal(bi.key, in.key);
        for (int m = 0; m <= PM_SEARCH_VPTREE; m++) {
            double ms;
            size_t sb;
            const int has = (kept & PM_SEARCH_MODE_BIT(m)) != 0;
            assert_int_equal(pm_database_structure_stats(&ms, &sb, back, m, &err), has ? PM_OK : PM_ERR_INVALID_ARGUMENT);
            for (int variant = 0; variant < 3; variant++) {
                pm_search_def def = all;
                def.mode = (pm_search_mode)m;
                if (variant == 1) def.dynamic_weights = weights;
                if (variant == 2) def.continuing_pose = 5;
                assert_true(pm_search_scratch_size(back, &def) <= ss);
                for (int q = 0; q < Q; q++) {
                    const float *row = queries + (size_t)q * DIMS;
                    pm_search_result want, got;
                    if (pm_search(&want, full, row, &def, scratch, ss, &err) != PM_OK) fail_msg("%s", err.message);
                    pm_result r = pm_search(&got, back, row, &def, scratch, ss, &err);
                    if (!has) {
                        assert_int_equal(r, PM_ERR_INVALID_ARGUMENT);
                        assert_non_null(strstr(err.message, pm_search_mode_name(def.mode)));
                        assert_non_null(strstr(err.message, "search_modes"));
                        assert_false(got.found);
                        break;
                    }
                    if (r != PM_OK) fail_msg("modes 0x%x, %s: %s", mask, pm_search_mode_name(def.mode), err.message);
                    assert_int_equal(got.pose, want.pose);
                    assert_memory_equal(&got.cost, &want.cost, sizeof got.cost);
                    assert_int_equal(got.candidates, want.candidates);
                    assert_int_equal(got.nodes, want.nodes);
                }
            }
        }
        pm_database_destroy(back);
        pm_database_destroy(db);
    }
    free(scratch);
    free(queries);
    pm_database_destroy(full);
    fixture_free(&f);
}

/* The bits of the def: checked, keyed (only when something is left out: the other databases keep
 * their keys), and independent of the thread count. */
static void test_def_and_key(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 120);
    pm_database_def d = f.def;
    char key_all[33], key_bf[33], key_exact[33], key_exact_bf[33];
    pm_error err;
    assert_int_equal(pm_default_database_def().search_modes, PM_SEARCH_MODES_ALL);
    assert_int_equal(pm_database_compute_key(key_all, &d, f.assets, 4, &err), PM_OK);
    d.search_modes = PM_SEARCH_MODES_ALL & ~PM_SEARCH_MODE_BIT(PM_SEARCH_BRUTEFORCE);
    assert_int_equal(pm_database_compute_key(key_bf, &d, f.assets, 4, &err), PM_OK);
    assert_string_equal(key_all, key_bf);
    d.search_modes = PM_SEARCH_MODE_BIT(PM_SEARCH_EXACT);
    assert_int_equal(pm_database_compute_key(key_exact, &d, f.assets, 4, &err), PM_OK);
    d.search_modes |= PM_SEARCH_MODE_BIT(PM_SEARCH_BRUTEFORCE);
    assert_int_equal(pm_database_compute_key(key_exact_bf, &d, f.assets, 4, &err), PM_OK);
    assert_string_equal(key_exact, key_exact_bf);
    assert_string_not_equal(key_all, key_exact);
    pm_database *one = build_modes(&f, PM_SEARCH_MODE_BIT(PM_SEARCH_EXACT), 1);
    pm_database *two = build_modes(&f, PM_SEARCH_MODE_BIT(PM_SEARCH_EXACT), 2);
    size_t n1, n2;
    const void *b1 = pm_database_bytes(one, &n1), *b2 = pm_database_bytes(two, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    pm_database_info in;
    pm_database_get_info(&in, one);
    assert_string_equal(in.key, key_exact);
    pm_database_destroy(one);
    pm_database_destroy(two);
    /* Bits past the four modes, or none (a def not from pm_default_database_def): refused, by the
     * build and the key alike, naming the field. */
    const unsigned bad[] = {0x10, 0x80000003u, 0};
    for (int i = 0; i < 3; i++) {
        d.search_modes = bad[i];
        pm_database *db = (pm_database *)&db;
        assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
        assert_null(db);
        assert_non_null(strstr(err.message, "search_modes"));
        assert_int_equal(pm_database_compute_key(key_all, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "search_modes"));
    }
    fixture_free(&f);
}

/* Several databases for one query: each def's mode must be one its database answers, and the
 * error names the database. */
static void test_several_databases(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 120);
    pm_database *dbs[2] = {build_modes(&f, PM_SEARCH_MODE_BIT(PM_SEARCH_EXACT), 1),
                           build_modes(&f, PM_SEARCH_MODE_BIT(PM_SEARCH_PCAKDTREE), 1)};
    float q[DIMS];
    make_queries(q, 1, dbs[0]);
    const float *queries[2] = {q, q};
    pm_search_def defs[2] = {pm_default_search_def(), pm_default_search_def()};
    defs[1].mode = PM_SEARCH_PCAKDTREE;
    size_t ss = PM_MAX(pm_search_scratch_size(dbs[0], &defs[0]), pm_search_scratch_size(dbs[1], &defs[1]));
    void *scratch = aligned_alloc(64, (ss + 63) / 64 * 64);
    pm_search_result r;
    int which = -2;
    pm_error err;
    if (pm_search_databases(&r, &which, (const pm_database *const *)dbs, queries, defs, 2, scratch, ss, &err) != PM_OK)
        fail_msg("%s", err.message);
    assert_true(r.found);
    defs[1].mode = PM_SEARCH_EXACT; /* the second database has no bound tree */
    assert_int_equal(pm_search_databases(&r, &which, (const pm_database *const *)dbs, queries, defs, 2, scratch, ss, &err),
                     PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(which, -1);
    assert_false(r.found);
    assert_non_null(strstr(err.message, "database 1"));
    assert_non_null(strstr(err.message, "without the exact mode"));
    free(scratch);
    pm_database_destroy(dbs[0]);
    pm_database_destroy(dbs[1]);
    fixture_free(&f);
}

/* Files whose version, settings and trees disagree about what was left out are refused. */
static void test_crafted_files(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 120);
    db_image full, part;
    image_of(&full, build_modes(&f, PM_SEARCH_MODES_ALL, 1));
    image_of(&part, build_modes(&f, PM_SEARCH_MODE_BIT(PM_SEARCH_EXACT), 1));
    pmdb_header *h = (pmdb_header *)(void *)image_fresh_copy(&part);
    h->version = PMDB_VERSION; /* a version-3 file leaves nothing out */
    expect_refused(&part, "omitted modes");
    h = (pmdb_header *)(void *)image_fresh_copy(&full);
    h->version = PMDB_VERSION_PARTIAL; /* ...and a version-4 file leaves something out */
    expect_refused(&full, "omitted modes");
    pmdb_settings *st = (pmdb_settings *)(void *)section_data(image_fresh_copy(&full), PMDB_SETTINGS);
    st->omitted_modes = PM_SEARCH_MODE_BIT(PM_SEARCH_VPTREE); /* said left out, yet there */
    h = (pmdb_header *)(void *)full.copy;
    h->version = PMDB_VERSION_PARTIAL;
    expect_refused(&full, "leave out has nodes");
    st = (pmdb_settings *)(void *)section_data(image_fresh_copy(&part), PMDB_SETTINGS);
    st->omitted_modes |= PM_SEARCH_MODE_BIT(PM_SEARCH_BRUTEFORCE); /* brute force has nothing to leave out */
    expect_refused(&part, "omitted modes");
    st = (pmdb_settings *)(void *)section_data(image_fresh_copy(&part), PMDB_SETTINGS);
    st->omitted_modes &= ~PM_SEARCH_MODE_BIT(PM_SEARCH_VPTREE); /* said there, yet missing */
    expect_refused(&part, "trees do not match");
    st = (pmdb_settings *)(void *)section_data(image_fresh_copy(&part), PMDB_SETTINGS);
    st->reserved[5] = 1;
    expect_refused(&part, "reserved field 5");
    /* A version neither 3 nor 4 is another format. */
    h = (pmdb_header *)(void *)image_fresh_copy(&part);
    h->version = PMDB_VERSION_PARTIAL + 1;
    pm_database *x = NULL;
    pm_error err;
    assert_int_equal(pm_database_load_memory(&x, part.copy, part.n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_VERSION);
    image_free(&full);
    image_free(&part);
    fixture_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_subset),
        cmocka_unit_test(test_def_and_key),
        cmocka_unit_test(test_several_databases),
        cmocka_unit_test(test_crafted_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
