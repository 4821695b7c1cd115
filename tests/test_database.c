/* Database builder and .pmdb files: counts, de-duplication, determinism, keys, round trips,
 * argument and field errors, and corrupted input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "database_internal.h"
#include "support.h"

#define DIMS 6

typedef struct fixture {
    pm_clip clips[4];
    pm_asset_def assets[4];
    pm_database_def def;
} fixture;

static void fixture_init(fixture *f, int frames) {
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 4; i++) {
        pm_test_random_clip(&f->clips[i], frames + 7 * i, DIMS, (uint64_t)i + 1);
        f->assets[i] = pm_default_asset_def(&f->clips[i]);
    }
    f->def = pm_default_database_def();
    pm_test_curve_schema(&f->def.schema, DIMS);
    f->def.pca_components = 3;
    f->def.exact_components = 3;
    f->def.exact_leaf_size = 16;
}

static void fixture_free(fixture *f) {
    for (int i = 0; i < 4; i++) pm_clip_destroy(&f->clips[i]);
}

static pm_database *build(const fixture *f, int threads) {
    pm_database_def d = f->def;
    d.threads = threads;
    pm_database *db = NULL;
    pm_error err;
    if (pm_database_build(&db, &d, f->assets, 4, &err) != PM_OK) fail_msg("build: %s", err.message);
    return db;
}

static void test_counts_and_round_trip(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 120);
    f.assets[1].cost_addend = -0.25f;
    f.assets[2].exclude_end = 0.5f;
    pm_database *db = build(&f, 1);
    pm_database_info in;
    pm_database_get_info(&in, db);
    int frames = 120 + 127 + 134 + 141;
    assert_int_equal(in.poses, frames);
    assert_int_equal(in.assets, 4);
    assert_int_equal(in.cardinality, DIMS);
    assert_int_equal(in.unique_vectors, frames);
    /* No future samples: only the excluded ends are blocked, 0.3 s (9 poses) by default and
     * 0.5 s (15 poses) for asset 2. */
    assert_int_equal(in.block_transition_poses, 9 * 3 + 15);
    assert_int_equal(in.excluded_poses, 9 * 3 + 15);
    assert_int_equal(in.searchable_poses, frames - 42);
    assert_true(in.unique_pca_vectors <= in.searchable_poses);
    assert_true(in.pca_explained_variance > 0.0f && in.pca_explained_variance <= 1.0f);
    assert_float_equal(pm_database_explained_variance(db, DIMS), 1.0f, 1e-5);
    pm_asset_info a;
    PM_ASSERT_OK(pm_database_asset(&a, db, 1, NULL));
    assert_int_equal(a.first_pose, 120);
    assert_int_equal(a.pose_count, 127);
    assert_float_equal(a.cost_addend, -0.25f, 1e-6);
    pm_pose_info p;
    PM_ASSERT_OK(pm_database_pose(&p, db, 130, NULL));
    assert_int_equal(p.asset, 1);
    assert_int_equal(p.frame, 10);
    assert_float_equal(p.cost_addend, -0.25f, 1e-6);
    assert_int_equal(p.block_transition, 0);
    PM_ASSERT_OK(pm_database_pose(&p, db, 119, NULL));
    assert_int_equal(p.block_transition, 1);
    /* Raw features survive normalisation. */
    float row[DIMS];
    PM_ASSERT_OK(pm_database_pose_features(row, db, 130, NULL));
    const pm_curve *c0 = pm_clip_find_curve(&f.clips[1], "c0");
    assert_float_equal(row[0], c0->values[10], 1e-4 * (1.0f + fabsf(c0->values[10])));
    /* Save, load: the same bytes. */
    const char *path = pm_test_tmp_path("round.pmdb");
    PM_ASSERT_OK(pm_database_save(db, path, NULL));
    pm_database *back = NULL;
    PM_ASSERT_OK(pm_database_load(&back, path, NULL, NULL));
    pm_test_assert_same_database(db, back);
    pm_database_destroy(back);
    pm_database_destroy(db);
    fixture_free(&f);
}

/* The accessors name what is wrong: NULL arguments, an index outside the database's; outputs
 * untouched (the channel name emptied). */
static void test_accessor_errors(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 40);
    pm_database *db = build(&f, 1);
    pm_error err;
    /* Info: zeros for no database, nothing written (and no crash) for no output. */
    pm_database_info info;
    memset(&info, 0x5A, sizeof info);
    pm_database_get_info(&info, NULL);
    assert_int_equal(info.poses, 0);
    pm_database_get_info(NULL, db);
    pm_asset_info a, a_sentinel;
    memset(&a_sentinel, 0x5A, sizeof a_sentinel);
    a = a_sentinel;
    const int bad_assets[] = {-1, 4, 12};
    for (size_t i = 0; i < sizeof bad_assets / sizeof bad_assets[0]; i++) {
        assert_int_equal(pm_database_asset(&a, db, bad_assets[i], &err), PM_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "is outside 0..3"));
        assert_memory_equal(&a, &a_sentinel, sizeof a);
    }
    assert_int_equal(pm_database_asset(&a, db, 12, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_asset: asset 12 is outside 0..3");
    /* Assets by name. */
    for (int i = 0; i < 4; i++) {
        PM_ASSERT_OK(pm_database_asset(&a, db, i, NULL));
        assert_int_equal(pm_database_find_asset(db, a.name), i);
    }
    assert_int_equal(pm_database_find_asset(db, "nothere"), -1);
    assert_int_equal(pm_database_find_asset(db, NULL), -1);
    assert_int_equal(pm_database_find_asset(NULL, "random1"), -1);
    assert_int_equal(pm_database_asset(NULL, db, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_asset: out is NULL");
    assert_int_equal(pm_database_asset(&a, NULL, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_asset: database is NULL");
    assert_int_equal(pm_database_asset(&a, db, -1, NULL), PM_ERR_INVALID_ARGUMENT);
    PM_ASSERT_OK(pm_database_asset(&a, db, 3, &err));

    int poses = pm_database_pose_count(db);
    pm_pose_info p, p_sentinel;
    memset(&p_sentinel, 0x5A, sizeof p_sentinel);
    p = p_sentinel;
    assert_int_equal(pm_database_pose(&p, db, poses, &err), PM_ERR_INVALID_ARGUMENT);
    char expect[128];
    snprintf(expect, sizeof expect, "pm_database_pose: pose %d is outside 0..%d", poses, poses - 1);
    assert_string_equal(err.message, expect);
    assert_memory_equal(&p, &p_sentinel, sizeof p);
    assert_int_equal(pm_database_pose(&p, db, -1, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "pose -1 is outside"));
    assert_int_equal(pm_database_pose(NULL, db, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_pose: out is NULL");
    assert_int_equal(pm_database_pose(&p, NULL, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_pose: database is NULL");
    PM_ASSERT_OK(pm_database_pose(&p, db, poses - 1, &err));
    assert_int_equal(p.asset, 3);

    char name[64];
    PM_ASSERT_OK(pm_database_channel_name(name, sizeof name, db, 5, &err));
    assert_string_equal(name, "Curve c5");
    assert_int_equal(pm_database_channel_name(name, sizeof name, db, 9, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_channel_name: channel 9 is outside 0..5");
    assert_string_equal(name, "");
    assert_int_equal(pm_database_channel_name(name, sizeof name, db, -1, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "channel -1 is outside 0..5"));
    assert_int_equal(pm_database_channel_name(NULL, sizeof name, db, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_channel_name: out is NULL");
    name[0] = 'x';
    assert_int_equal(pm_database_channel_name(name, 0, db, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_channel_name: size is 0");
    assert_int_equal(name[0], 'x'); /* size 0: not a byte written */
    assert_int_equal(pm_database_channel_name(name, sizeof name, NULL, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_channel_name: database is NULL");
    assert_string_equal(name, "");
    /* A short buffer is cut, not an error. */
    char small[4];
    PM_ASSERT_OK(pm_database_channel_name(small, sizeof small, db, 0, NULL));
    assert_string_equal(small, "Cur");
    pm_database_destroy(db);
    fixture_free(&f);
}

static void test_determinism_and_key(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 200);
    f.def.mirror = 1;
    f.assets[3].cost_addend = 0.5f;
    pm_database *a = build(&f, 1), *b = build(&f, 2), *c = build(&f, 5), *d = build(&f, 1);
    pm_test_assert_same_database(a, b);
    pm_test_assert_same_database(a, c);
    pm_test_assert_same_database(a, d);
    pm_database_info ia;
    pm_database_get_info(&ia, a);
    assert_int_equal(ia.assets, 8); /* mirrored copies */
    char key[33];
    PM_ASSERT_OK(pm_database_compute_key(key, &f.def, f.assets, 4, NULL));
    assert_string_equal(key, ia.key);
    /* Settings and data change the key; threads do not. */
    pm_database_def d2 = f.def;
    d2.threads = 3;
    char k2[33];
    PM_ASSERT_OK(pm_database_compute_key(k2, &d2, f.assets, 4, NULL));
    assert_string_equal(k2, key);
    d2.fps = 60.0f;
    PM_ASSERT_OK(pm_database_compute_key(k2, &d2, f.assets, 4, NULL));
    assert_string_not_equal(k2, key);
    d2 = f.def;
    d2.schema.channels[2].weight += 0.1f;
    PM_ASSERT_OK(pm_database_compute_key(k2, &d2, f.assets, 4, NULL));
    assert_string_not_equal(k2, key);
    /* A given mirror map is part of the inputs; the one found from names is not hashed twice. */
    int32_t ident[256];
    assert_true(f.clips[0].skeleton.joint_count <= 256);
    for (int j = 0; j < f.clips[0].skeleton.joint_count; j++) ident[j] = j;
    pm_asset_def with_map[4];
    memcpy(with_map, f.assets, sizeof with_map);
    with_map[0].mirror_map = ident;
    PM_ASSERT_OK(pm_database_compute_key(k2, &f.def, with_map, 4, NULL));
    assert_string_not_equal(k2, key);
    f.clips[2].curves[0].values[5] += 1e-3f;
    PM_ASSERT_OK(pm_database_compute_key(k2, &f.def, f.assets, 4, NULL));
    assert_string_not_equal(k2, key);
    pm_database_destroy(a);
    pm_database_destroy(b);
    pm_database_destroy(c);
    pm_database_destroy(d);
    fixture_free(&f);
}

static void test_dedup(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    /* Asset 0 repeats its first 10 frames' curve values in frames 30..39. */
    for (int d = 0; d < DIMS; d++)
        for (int k = 0; k < 10; k++) f.clips[0].curves[d].values[30 + k] = f.clips[0].curves[d].values[k];
    pm_database *db = build(&f, 1);
    pm_database_info in;
    pm_database_get_info(&in, db);
    assert_int_equal(in.unique_vectors, in.poses - 10);
    pm_pose_info p0, p1;
    for (int k = 0; k < 10; k++) {
        PM_ASSERT_OK(pm_database_pose(&p0, db, k, NULL));
        PM_ASSERT_OK(pm_database_pose(&p1, db, 30 + k, NULL));
        assert_int_equal(p0.vector, p1.vector);
    }
    pm_database_destroy(db);
    fixture_free(&f);
}

/* PCA space: rows that differ only in a dimension of weight 0 are one point there (UE's second
 * de-duplication map), while the full space keeps them apart. */
static void test_dedup_pca_space(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    f.def.schema.channels[DIMS - 1].weight = 0.0f;
    for (int k = 0; k < 10; k++) {
        for (int d = 0; d < DIMS - 1; d++) f.clips[0].curves[d].values[30 + k] = f.clips[0].curves[d].values[k];
        f.clips[0].curves[DIMS - 1].values[30 + k] = f.clips[0].curves[DIMS - 1].values[k] + 1.0f;
    }
    pm_database *db = build(&f, 1);
    pm_database_info in;
    pm_database_get_info(&in, db);
    assert_int_equal(in.unique_vectors, in.poses);
    int searchable_pairs = 0;
    for (int k = 0; k < 10; k++) {
        pm_pose_info p0, p1;
        PM_ASSERT_OK(pm_database_pose(&p0, db, k, NULL));
        PM_ASSERT_OK(pm_database_pose(&p1, db, 30 + k, NULL));
        assert_int_not_equal(p0.vector, p1.vector);
        searchable_pairs += !p0.block_transition && !p1.block_transition;
    }
    assert_true(searchable_pairs > 0);
    assert_int_equal(in.unique_pca_vectors, in.searchable_poses - searchable_pairs);
    pm_database_destroy(db);
    fixture_free(&f);
}

static void test_build_errors(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 40);
    pm_database *db = NULL;
    pm_error err;
    assert_int_equal(pm_database_build(&db, &f.def, f.assets, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_null(db);
    pm_database_def d = f.def;
    d.pca_components = DIMS + 1;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "PCA"));
    d = f.def;
    d.fps = 0.0f;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    d = f.def;
    d.exact_leaf_size = 4;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    pm_asset_def bad = f.assets[0];
    bad.cost_addend = NAN;
    assert_int_equal(pm_database_build(&db, &f.def, &bad, 1, &err), PM_ERR_INVALID_ARGUMENT);
    bad = f.assets[0];
    bad.clip = NULL;
    assert_int_equal(pm_database_build(&db, &f.def, &bad, 1, &err), PM_ERR_INVALID_ARGUMENT);
    /* A given mirror map that is no left/right swap names the asset. */
    int32_t not_swap[256];
    assert_true(f.clips[0].skeleton.joint_count >= 2 && f.clips[0].skeleton.joint_count <= 256);
    for (int j = 0; j < f.clips[0].skeleton.joint_count; j++) not_swap[j] = j;
    not_swap[0] = 1; /* 0 -> 1 but 1 -> 1 */
    bad = f.assets[0];
    bad.mirror = 1;
    bad.mirror_map = not_swap;
    assert_int_equal(pm_database_build(&db, &f.def, &bad, 1, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "mirror"));
    assert_non_null(strstr(err.message, "asset"));
    assert_null(db);
    /* A clip with a NaN rotation names the asset and frame. */
    f.clips[1].rotations[3 * 5].x = NAN;
    assert_int_equal(pm_database_build(&db, &f.def, f.assets, 4, &err), PM_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "asset 1"));
    f.clips[1].rotations[3 * 5].x = 0.0f;
    /* A schema bone the skeleton lacks. */
    d = f.def;
    pm_channel_def p = pm_default_channel_def(PM_FEATURE_POSITION);
    strcpy(p.bone, "@left_foot");
    pm_schema_add(&d.schema, &p, NULL);
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "random"));
    assert_null(db);
    /* Only role 0 exists for single-character clips: refused before any work, key included. */
    d = f.def;
    d.schema.channels[2].role = 1;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "channel 2"));
    assert_non_null(strstr(err.message, "role 1"));
    char key[33] = "untouched";
    assert_int_equal(pm_database_compute_key(key, &d, f.assets, 4, NULL), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(key, "untouched");
    /* Every weight zero: every pose would cost the same. */
    d = f.def;
    for (int c = 0; c < d.schema.channel_count; c++) d.schema.channels[c].weight = 0.0f;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "weight is 0"));
    assert_null(db);
    /* A trajectory sample given only an offset and flags weighs 1, as in a JSON schema. */
    pm_channel_def t = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
    t.sample_count = PM_MAX_TRAJECTORY_SAMPLES;
    for (int k = 0; k < PM_MAX_TRAJECTORY_SAMPLES; k++) assert_true(t.samples[k].weight == 1.0f);
    fixture_free(&f);
}


/* Each out-of-range asset field gets its own message naming the field, the value and the range. */
static void expect_asset_error(const fixture *f, const pm_asset_def *a, pm_result code, const char *words) {
    pm_database *db = NULL;
    pm_error err;
    memset(&err, 0, sizeof err);
    pm_result r = pm_database_build(&db, &f->def, a, 1, &err);
    if (r != code) fail_msg("expected %s for '%s', got %s (%s)", pm_result_string(code), words, pm_result_string(r), err.message);
    if (!strstr(err.message, words)) fail_msg("'%s' does not say '%s'", err.message, words);
    assert_null(db);
    /* The key refuses what the build refuses. */
    char key[33] = "untouched";
    assert_int_equal(pm_database_compute_key(key, &f->def, a, 1, NULL), code);
    assert_string_equal(key, "untouched");
}

static void test_asset_field_errors(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 40);
    pm_asset_def a = f.assets[0];
    a.name = "walk";
    a.cost_addend = 70000.0f;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "asset 0 (walk): cost_addend 70000 is outside -65504..65504");
    a.cost_addend = -65505.0f;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "cost_addend -65505 is outside");
    a.cost_addend = NAN;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "asset 0 (walk): cost_addend nan");
    a = f.assets[0];
    a.looping = 5;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "asset 0 (random1): looping is 5 (must be");
    a = f.assets[0];
    a.mirror = -2;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "mirror is -2");
    a = f.assets[0];
    a.param_count = 9;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "param_count 9 is outside 0..3");
    a.param_count = 2;
    a.params[1] = INFINITY;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "params[1]");
    a = f.assets[0];
    a.exclude_end = NAN;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "exclude_end");
    a = f.assets[0];
    a.exclude_start = 1e30f; /* seconds x fps would not fit an int */
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "exclude_start 1e+30 is outside");
    a = f.assets[0];
    a.name = "a\nb";
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "asset 0: its name has a control character (byte 0x0a at offset 1)");

    /* The extremes of the half float are accepted, and addends come back as stored. */
    pm_asset_def two[2] = {f.assets[0], f.assets[1]};
    two[0].cost_addend = 65504.0f;
    two[1].cost_addend = 0.1f;
    pm_database *db = NULL;
    pm_error err;
    if (pm_database_build(&db, &f.def, two, 2, &err) != PM_OK) fail_msg("%s", err.message);
    pm_asset_info info;
    PM_ASSERT_OK(pm_database_asset(&info, db, 0, NULL));
    assert_true(info.cost_addend == 65504.0f);
    PM_ASSERT_OK(pm_database_asset(&info, db, 1, NULL));
    assert_true(info.cost_addend == 0.0999755859375f);
    pm_pose_info p;
    PM_ASSERT_OK(pm_database_pose(&p, db, info.first_pose, NULL));
    assert_true(p.cost_addend == 0.0999755859375f);
    pm_database_destroy(db);
    fixture_free(&f);
}

static void test_def_errors(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 40);
    pm_error err;
    /* *out is NULL on every failure, including a NULL def. */
    pm_database *db = (pm_database *)&f;
    assert_int_equal(pm_database_build(&db, NULL, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_null(db);
    assert_non_null(strstr(err.message, "def is NULL"));
    db = (pm_database *)&f;
    assert_int_equal(pm_database_build(&db, &f.def, NULL, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_null(db);
    assert_non_null(strstr(err.message, "assets is NULL"));
    /* Threads: 0 is not "all cores", it is outside the documented range. */
    pm_database_def d = f.def;
    d.threads = 0;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "threads 0 is outside 1..64"));
    d.threads = 65;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    d = f.def;
    d.mirror = 2;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "mirror is 2"));
    /* Root settings are named before any work, not found invalid in the finished file. */
    d = f.def;
    d.root.facing_mode = (pm_facing_mode)5;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "facing_mode 5"));
    assert_null(db);
    d = f.def;
    d.root.facing_mode = PM_FACING_HIPS_AXIS;
    d.root.hips_axis = pm_vec3_zero();
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "hips_axis"));
    d = f.def;
    d.root.left_upleg = d.root.right_upleg = 2;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "left_upleg"));
    d = f.def;
    d.root.facing_smoothing = NAN;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "facing_smoothing"));
    /* The key validates the def as the build does, and leaves the key alone on failure. */
    char key[33] = "untouched";
    d = f.def;
    d.fps = -1.0f;
    assert_int_equal(pm_database_compute_key(key, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "fps"));
    assert_string_equal(key, "untouched");
    assert_int_equal(pm_database_compute_key(key, &f.def, f.assets, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_database_compute_key(key, NULL, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "def is NULL"));
    PM_ASSERT_OK(pm_database_compute_key(key, &f.def, f.assets, 4, NULL));
    assert_int_equal((int)strlen(key), 32);
    fixture_free(&f);
}

/* A database a plain search can never answer from is refused, with the reason. */
static void test_no_searchable_pose(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 10);
    pm_database *db = NULL;
    pm_error err;
    /* Exclusions longer than the clips (10..31 frames = 0.3..1 s). */
    pm_database_def d = f.def;
    d.exclude_end = 2.0f;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_null(db);
    assert_non_null(strstr(err.message, "no searchable pose: all 82 poses"));
    assert_non_null(strstr(err.message, "82 excluded"));
    d = f.def;
    d.exclude_start = 0.5f;
    d.exclude_end = 0.6f;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    /* Clips shorter than a trajectory that looks 1.5 s ahead: every pose a block transition. */
    d = f.def;
    d.exclude_end = 0.0f;
    pm_channel_def t = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
    t.sample_count = 1;
    t.samples[0].offset = 1.5f;
    t.samples[0].flags = PM_TRAJ_POSITION_XY;
    t.samples[0].weight = 1.0f;
    assert_true(pm_schema_add(&d.schema, &t, NULL) >= 0);
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_null(db);
    assert_non_null(strstr(err.message, "82 block transitions"));
    assert_non_null(strstr(err.message, "trajectory window of 1.5 s"));
    /* One pose left searchable is enough. */
    f.assets[3].looping = 1;
    if (pm_database_build(&db, &d, f.assets, 4, &err) != PM_OK) fail_msg("%s", err.message);
    pm_database_info in;
    pm_database_get_info(&in, db);
    assert_int_equal(in.searchable_poses, 31);
    pm_database_destroy(db);
    fixture_free(&f);
}

/* Clips at 30 fps as files store it ("Frame Time: 0.0333333") built at 60 fps keep their last
 * frame: 2 (n - 1) + 1 poses each. */
static void test_resampled_pose_counts(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 120);
    for (int i = 0; i < 4; i++) f.clips[i].frame_time = 0.0333333f;
    f.def.fps = 60.0f;
    f.def.trim_rest_first_frame = 0;
    pm_database *db = build(&f, 2);
    pm_database_info in;
    pm_database_get_info(&in, db);
    int expect = 0;
    for (int i = 0; i < 4; i++) {
        pm_asset_info a;
        PM_ASSERT_OK(pm_database_asset(&a, db, i, NULL));
        assert_int_equal(a.pose_count, 2 * (f.clips[i].frame_count - 1) + 1);
        expect += a.pose_count;
    }
    assert_int_equal(in.poses, expect);
    pm_database_destroy(db);
    fixture_free(&f);
}

/* A clip frame maps to the query row at the database's rate (30 fps clips, a 60 fps database:
 * frame f is row 2f), and that row holds the features the asset stored for the pose (read back
 * from the normalised values: equal within rounding). */
static void test_clip_frame_rows(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 40);
    for (int i = 0; i < 4; i++) f.clips[i].frame_time = 1.0f / 30.0f;
    f.def.fps = 60.0f;
    pm_database *db = build(&f, 1);
    float *rows = NULL, lead = -1.0f, feat[DIMS];
    int n = 0, row = -1;
    pm_error err;
    PM_ASSERT_OK(pm_database_clip_queries(&rows, &n, db, &f.clips[2], NULL));
    PM_ASSERT_OK(pm_database_clip_lead_in(&lead, db, &f.clips[2], NULL));
    assert_true(lead == 0.0f); /* not a rest pose: nothing dropped */
    pm_asset_info a;
    PM_ASSERT_OK(pm_database_asset(&a, db, 2, NULL));
    assert_int_equal(n, a.pose_count);
    for (int fr = 0; fr < f.clips[2].frame_count; fr++) {
        PM_ASSERT_OK(pm_database_clip_frame_row(&row, db, &f.clips[2], fr, NULL));
        assert_int_equal(row, 2 * fr);
        PM_ASSERT_OK(pm_database_pose_features(feat, db, a.first_pose + row, NULL));
        for (int d = 0; d < DIMS; d++) /* stored normalised: read back within rounding */
            assert_true(fabsf(feat[d] - rows[(size_t)row * DIMS + d]) <= 1e-5f * (1.0f + fabsf(feat[d])));
    }
    assert_int_equal(pm_database_clip_frame_row(&row, db, &f.clips[2], f.clips[2].frame_count, &err),
                     PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(row, -1);
    assert_non_null(strstr(err.message, "is outside 0..53"));
    assert_int_equal(pm_database_clip_frame_row(&row, db, &f.clips[2], -1, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_database_clip_frame_row(NULL, db, &f.clips[2], 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_database_clip_lead_in(&lead, NULL, &f.clips[2], &err), PM_ERR_INVALID_ARGUMENT);
    pm_free_buffer(rows, NULL);
    pm_database_destroy(db);
    /* 25 fps clips (no whole ratio), one-shot and looping: the row nearest the frame's time. */
    for (int i = 0; i < 4; i++) f.clips[i].frame_time = 1.0f / 25.0f;
    for (int looping = 0; looping < 2; looping++) {
        f.clips[3].looping = looping;
        db = build(&f, 1);
        PM_ASSERT_OK(pm_database_clip_queries(&rows, &n, db, &f.clips[3], NULL));
        pm_free_buffer(rows, NULL);
        for (int fr = 0; fr < f.clips[3].frame_count; fr++) {
            PM_ASSERT_OK(pm_database_clip_frame_row(&row, db, &f.clips[3], fr, NULL));
            double t = fr / 25.0, nearest = floor(t * 60.0 + 0.5);
            assert_int_equal(row, (int)(nearest < n - 1 ? nearest : n - 1));
        }
        pm_database_destroy(db);
    }
    f.clips[3].looping = 0;
    /* 120 fps clips in a 60 fps database: frame f is row f / 2, rounded half up. */
    for (int i = 0; i < 4; i++) f.clips[i].frame_time = 1.0f / 120.0f;
    db = build(&f, 1);
    for (int fr = 0; fr < f.clips[1].frame_count; fr++) {
        PM_ASSERT_OK(pm_database_clip_frame_row(&row, db, &f.clips[1], fr, NULL));
        assert_int_equal(row, (fr + 1) / 2 < (f.clips[1].frame_count + 1) / 2 ? (fr + 1) / 2 : (f.clips[1].frame_count - 1) / 2);
    }
    pm_database_destroy(db);
    fixture_free(&f);
}

/* Searchable vectors' rows come first; block-transition poses may use rows beyond what
 * pm_database_values reports, and pm_database_pose_features reads any pose. */
static void test_pose_vectors_and_features(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    pm_database *db = build(&f, 1);
    int rows = 0, stride = 0;
    assert_non_null(pm_database_values(db, &rows, &stride));
    pm_database_info in;
    pm_database_get_info(&in, db);
    int beyond = 0;
    float row[DIMS];
    for (int p = 0; p < in.poses; p++) {
        pm_pose_info pi;
        PM_ASSERT_OK(pm_database_pose(&pi, db, p, NULL));
        if (!pi.block_transition) assert_true(pi.vector < rows);
        else if (pi.vector >= rows) beyond++;
        PM_ASSERT_OK(pm_database_pose_features(row, db, p, NULL));
    }
    assert_true(beyond > 0); /* the excluded ends have vectors of their own */
    assert_int_equal(rows + beyond, in.unique_vectors);
    pm_error err;
    assert_int_equal(pm_database_pose_features(NULL, db, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "out is NULL"));
    assert_int_equal(pm_database_pose_features(row, NULL, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "database is NULL"));
    assert_int_equal(pm_database_pose_features(row, db, in.poses, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "outside 0.."));
    pm_database_destroy(db);
    fixture_free(&f);
}

/* The bytes of a section of a database image. */
static uint8_t *section_data(uint8_t *image, uint32_t id) {
    pmdb_header h;
    memcpy(&h, image, sizeof h);
    for (uint32_t k = 0; k < h.section_count; k++) {
        pmdb_section sec;
        memcpy(&sec, image + h.header_size + k * sizeof sec, sizeof sec);
        if (sec.id == id) return image + sec.offset;
    }
    fail_msg("section %u not found", id);
    return NULL;
}

static void test_corrupt_files(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 50);
    pm_database *db = build(&f, 1);
    size_t n;
    const uint8_t *bytes = pm_database_bytes(db, &n);
    uint8_t *copy = malloc(n);
    pm_error err;
    pm_database *x = NULL;
    /* Truncation at every 97th length and a few special ones: always an error. */
    for (size_t len = 0; len < n; len += (len < 512 ? 1 : 97)) {
        assert_int_not_equal(pm_database_load_memory(&x, bytes, len, 0, NULL, &err), PM_OK);
        assert_null(x);
    }
    /* A flipped byte anywhere fails the checksum. */
    pm_test_rng rng = {99};
    for (int i = 0; i < 300; i++) {
        memcpy(copy, bytes, n);
        size_t at = pm_test_rng_u32(&rng) % n;
        copy[at] ^= (uint8_t)(1u + pm_test_rng_u32(&rng) % 255u);
        assert_int_equal(pm_database_load_memory(&x, copy, n, 0, NULL, &err), PM_ERR_CORRUPT);
        assert_null(x);
    }
    /* Without the checksum the structural checks must hold on their own: random damage either
     * loads (a searchable database) or is refused, never crashes. */
    pm_search_def sd = pm_default_search_def();
    for (int i = 0; i < 3000; i++) {
        memcpy(copy, bytes, n);
        int flips = 1 + (int)(pm_test_rng_u32(&rng) % 4);
        for (int k = 0; k < flips; k++) {
            size_t at = i % 3 == 0 ? pm_test_rng_u32(&rng) % 1024 : pm_test_rng_u32(&rng) % n;
            copy[at % n] ^= (uint8_t)(1u << (pm_test_rng_u32(&rng) % 8));
        }
        if (pm_database_load_memory(&x, copy, n, PM_LOAD_SKIP_CHECKSUM, NULL, &err) == PM_OK) {
            /* What loads may still state wrong numbers; what also verifies answers every exact
             * mode with brute force's optimum of its own values. */
            int verified = pm_database_verify(x, &err) == PM_OK;
            if (!verified) assert_int_equal(err.code, PM_ERR_CORRUPT);
            float q[DIMS] = {0};
            pm_search_result r[4];
            for (int m = 0; m < 4; m++) {
                sd.mode = (pm_search_mode)m;
                size_t ss = pm_search_scratch_size(x, &sd);
                void *scratch = aligned_alloc(64, (ss + 63) / 64 * 64);
                pm_search(&r[m], x, q, &sd, scratch, ss, &err);
                free(scratch);
            }
            if (verified) {
                assert_int_equal(r[PM_SEARCH_EXACT].pose, r[PM_SEARCH_BRUTEFORCE].pose);
                assert_int_equal(r[PM_SEARCH_VPTREE].pose, r[PM_SEARCH_BRUTEFORCE].pose);
                assert_true(r[PM_SEARCH_EXACT].cost == r[PM_SEARCH_BRUTEFORCE].cost);
            }
            pm_database_destroy(x);
        } else {
            assert_null(x);
            assert_true(strlen(err.message) > 0);
        }
    }
    /* An inverted value box is refused: it would bound too high and prune the answer away. */
    memcpy(copy, bytes, n);
    pmdb_header hh;
    memcpy(&hh, copy, sizeof hh);
    uint8_t *vboxes = section_data(copy, PMDB_BT_VALUE_BOXES);
    float hi;
    memcpy(&hi, vboxes + (size_t)hh.stride * sizeof(float), sizeof hi);
    hi += 1.0f; /* node 0, dimension 0: lo above hi */
    memcpy(vboxes, &hi, sizeof hi);
    assert_int_equal(pm_database_load_memory(&x, copy, n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "inverted"));
    /* A node shared by two parents (here both children of the root) is refused: a walk would
     * push it twice and overrun its node-sized heap. */
    memcpy(copy, bytes, n);
    pmdb_bt_node root;
    uint8_t *nodes = section_data(copy, PMDB_BT_NODES);
    memcpy(&root, nodes, sizeof root);
    assert_true(root.left != 0);
    root.right = root.left;
    memcpy(nodes, &root, sizeof root);
    assert_int_equal(pm_database_load_memory(&x, copy, n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "two parents"));
    /* A future version is reported as such. */
    memcpy(copy, bytes, n);
    copy[8] = 99;
    assert_int_equal(pm_database_load_memory(&x, copy, n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_VERSION);
    assert_non_null(strstr(err.message, "version"));
    /* Files: missing, and garbage. */
    assert_int_equal(pm_database_load(&x, pm_test_tmp_path("missing.pmdb"), NULL, &err), PM_ERR_IO);
    assert_non_null(strstr(err.message, "missing.pmdb"));
    pm_test_write_file(pm_test_tmp_path("garbage.pmdb"), "hello, world, not a database", 28);
    assert_int_equal(pm_database_load(&x, pm_test_tmp_path("garbage.pmdb"), NULL, &err), PM_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "garbage.pmdb"));
    free(copy);
    pm_database_destroy(db);
    fixture_free(&f);
}

/* A header may not ask for more exact components than the builder can split on (its per-node
 * sums are sized for PM_MAX_PCA_COMPONENTS), even when the cardinality has room for them. */
static void test_exact_components_limit(void **state) {
    (void)state;
    enum { WIDE = PM_MAX_PCA_COMPONENTS + 2 };
    pm_clip clips[2];
    pm_asset_def assets[2];
    for (int i = 0; i < 2; i++) {
        pm_test_random_clip(&clips[i], 40, WIDE, (uint64_t)i + 9);
        assets[i] = pm_default_asset_def(&clips[i]);
    }
    pm_database_def def = pm_default_database_def();
    pm_test_curve_schema(&def.schema, WIDE);
    def.exact_components = PM_MAX_PCA_COMPONENTS;
    def.threads = 1;
    pm_database *db = NULL;
    pm_error err;
    PM_ASSERT_OK(pm_database_build(&db, &def, assets, 2, &err));
    size_t n;
    const uint8_t *bytes = pm_database_bytes(db, &n);
    uint8_t *copy = malloc(n);
    memcpy(copy, bytes, n);
    pmdb_header h;
    memcpy(&h, copy, sizeof h);
    assert_int_equal(h.exact_components, PM_MAX_PCA_COMPONENTS);
    h.exact_components = PM_MAX_PCA_COMPONENTS + 1;
    h.bt_block_rows = h.exact_components + 1;
    memcpy(copy, &h, sizeof h);
    pm_database *x = NULL;
    assert_int_equal(pm_database_load_memory(&x, copy, n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_CORRUPT);
    assert_null(x);
    assert_non_null(strstr(err.message, "65 exact components"));
    free(copy);
    pm_database_destroy(db);
    for (int i = 0; i < 2; i++) pm_clip_destroy(&clips[i]);
}

/* Loads (as a file resealed with a valid checksum would) and must fail verification naming
 * `words`. */
static void expect_unverified(const uint8_t *image, size_t n, const char *words) {
    pm_database *x = NULL;
    pm_error err;
    if (pm_database_load_memory(&x, image, n, PM_LOAD_SKIP_CHECKSUM, NULL, &err) != PM_OK)
        fail_msg("the crafted file should load: %s", err.message);
    if (pm_database_verify(x, &err) != PM_ERR_CORRUPT) fail_msg("verification passed a file crafted to fail with '%s'", words);
    if (!strstr(err.message, words)) fail_msg("expected '%s' in: %s", words, err.message);
    pm_database_destroy(x);
}

static void test_verify(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 120);
    pm_database *db = build(&f, 1);
    pm_error err;
    assert_int_equal(pm_database_verify(db, &err), PM_OK);
    assert_int_equal(pm_database_verify(NULL, &err), PM_ERR_INVALID_ARGUMENT);
    size_t n;
    const uint8_t *bytes = pm_database_bytes(db, &n);
    uint8_t *copy = malloc(n);
    pmdb_header h;
    memcpy(&h, bytes, sizeof h);
    const int rows = (int)h.bt_block_rows, D = (int)h.cardinality;

    /* Two points of one leaf trade a coordinate: both stay inside the leaf's box, so loading
     * cannot tell, but each is no longer the projection of its values. */
    memcpy(copy, bytes, n);
    const pmdb_bt_node *nodes = (const pmdb_bt_node *)section_data(copy, PMDB_BT_NODES);
    float *points = (float *)section_data(copy, PMDB_BT_POINTS);
    int swapped = 0;
    for (uint32_t i = 0; i < h.bt_node_count && !swapped; i++) {
        if (nodes[i].left || nodes[i].count < 2) continue;
        size_t a = pm_bt_at(rows, nodes[i].first, 0), b = pm_bt_at(rows, nodes[i].first + 1, 0);
        if (points[a] == points[b]) continue;
        float t = points[a];
        points[a] = points[b];
        points[b] = t;
        swapped = 1;
    }
    assert_true(swapped);
    expect_unverified(copy, n, "not the projection");

    /* A VP-tree radius shrunk to zero: its inside shell would be pruned from every query. */
    memcpy(copy, bytes, n);
    pmdb_vp_node *vp = (pmdb_vp_node *)section_data(copy, PMDB_VP_NODES);
    assert_true(vp[0].inside != 0 && vp[0].mu > 0.0f);
    vp[0].mu = 0.0f;
    expect_unverified(copy, n, "radius");

    /* A KD-tree split moved past its low side. */
    memcpy(copy, bytes, n);
    pmdb_kd_node *kd = (pmdb_kd_node *)section_data(copy, PMDB_KD_NODES);
    assert_true(kd[0].dim >= 0);
    kd[0].split -= 1000.0f;
    expect_unverified(copy, n, "split");

    /* A basis that stretches: projected distances could exceed the costs they bound. */
    memcpy(copy, bytes, n);
    float *basis = (float *)section_data(copy, PMDB_PCA_BASIS);
    for (int d = 0; d < D; d++) basis[d] *= 1.001f;
    expect_unverified(copy, n, "orthonormal");

    /* A PCA mean far from the data: every coordinate large, and its float rounding larger than
     * the search's margins. */
    memcpy(copy, bytes, n);
    float *mean = (float *)section_data(copy, PMDB_PCA_MEAN);
    mean[0] += 1000.0f;
    expect_unverified(copy, n, "PCA mean");

    /* A VP-tree leaf item listed twice hides the vector it replaced. */
    memcpy(copy, bytes, n);
    uint32_t *items = (uint32_t *)section_data(copy, PMDB_VP_ITEMS);
    vp = (pmdb_vp_node *)section_data(copy, PMDB_VP_NODES);
    uint32_t leaf = 0;
    while (leaf < h.vp_node_count && (vp[leaf].inside || vp[leaf].outside < 2)) leaf++;
    assert_true(leaf < h.vp_node_count);
    items[vp[leaf].vp + 1] = items[vp[leaf].vp];
    expect_unverified(copy, n, "twice");

    free(copy);
    pm_database_destroy(db);

    /* Loading itself refuses what no build writes and the kernels would sum: padding lanes of
     * the PCA boxes that are not zero (5 exact-mode rows in 8 lanes here) and rows whose padding
     * dimensions are not zero. */
    f.def.exact_components = 4;
    db = build(&f, 1);
    bytes = pm_database_bytes(db, &n);
    copy = malloc(n);
    memcpy(&h, bytes, sizeof h);
    memcpy(copy, bytes, n);
    float *boxes = (float *)section_data(copy, PMDB_BT_BOXES);
    const int P = pm_bt_box_lanes(4);
    assert_int_equal(P, 8);
    boxes[6] = boxes[P + 6] = 100.0f;
    pm_database *x = NULL;
    assert_int_equal(pm_database_load_memory(&x, copy, n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "padding lane"));
    memcpy(copy, bytes, n);
    float *values = (float *)section_data(copy, PMDB_VALUES);
    assert_true(h.stride > h.cardinality);
    values[h.cardinality] = 1.0f;
    assert_int_equal(pm_database_load_memory(&x, copy, n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "padding dimension"));
    free(copy);
    pm_database_destroy(db);
    fixture_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_round_trip),
        cmocka_unit_test(test_accessor_errors),
        cmocka_unit_test(test_determinism_and_key),
        cmocka_unit_test(test_dedup),
        cmocka_unit_test(test_dedup_pca_space),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_asset_field_errors),
        cmocka_unit_test(test_def_errors),
        cmocka_unit_test(test_no_searchable_pose),
        cmocka_unit_test(test_resampled_pose_counts),
        cmocka_unit_test(test_clip_frame_rows),
        cmocka_unit_test(test_pose_vectors_and_features),
        cmocka_unit_test(test_corrupt_files),
        cmocka_unit_test(test_exact_components_limit),
        cmocka_unit_test(test_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
