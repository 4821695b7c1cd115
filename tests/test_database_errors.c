/* Database builder and accessors: argument, def and asset-field errors, and databases with no
 * searchable pose. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "database_support.h"

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
    /* Structure statistics: every mode reads at least the values; anything else is no mode. */
    double ms = -1.0;
    size_t bytes = 0, brute = 0;
    PM_ASSERT_OK(pm_database_structure_stats(&ms, &brute, db, PM_SEARCH_BRUTEFORCE, &err));
    assert_true(ms == 0.0 && brute > 0);
    for (int m = 0; m < 4; m++) {
        PM_ASSERT_OK(pm_database_structure_stats(&ms, &bytes, db, m, &err));
        assert_true(ms >= 0.0 && bytes >= brute);
    }
    ms = -1.0;
    bytes = 7;
    assert_int_equal(pm_database_structure_stats(&ms, &bytes, db, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_structure_stats: mode 4 is not a pm_search_mode (0..3)");
    assert_int_equal(pm_database_structure_stats(&ms, &bytes, db, -1, &err), PM_ERR_INVALID_ARGUMENT);
    assert_true(ms == -1.0 && bytes == 7);
    assert_int_equal(pm_database_structure_stats(&ms, NULL, db, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_structure_stats: NULL argument");
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
    assert_non_null(strstr(err.message, "map entry 0 (1) is not a left/right swap: entry 1 is 1, not 0"));
    assert_null(db);
    not_swap[0] = 7; /* not a joint of these 3 */
    assert_int_equal(pm_database_build(&db, &f.def, &bad, 1, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "map entry 0 (7) is not a joint (0..2)"));
    /* A clip with a NaN rotation names the asset and frame. */
    f.clips[1].rotations[3 * 5].x = NAN;
    assert_int_equal(pm_database_build(&db, &f.def, f.assets, 4, &err), PM_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "asset 1"));
    f.clips[1].rotations[3 * 5].x = 0.0f;
    /* A schema bone the skeleton lacks. */
    static pm_schema s; /* static: a schema is about 62 KB */
    s = f.schema;
    d = f.def;
    d.schema = &s;
    pm_channel_def p = pm_default_channel_def(PM_FEATURE_POSITION);
    strcpy(p.bone, "@left_foot");
    pm_schema_add(&s, &p, NULL);
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "random"));
    assert_null(db);
    /* Only role 0 exists for single-character clips: refused before any work, key included. */
    s = f.schema;
    s.channels[2].role = 1;
    assert_int_equal(pm_database_build(&db, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "channel 2"));
    assert_non_null(strstr(err.message, "role 1"));
    char key[33] = "untouched";
    assert_int_equal(pm_database_compute_key(key, &d, f.assets, 4, NULL), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(key, "untouched");
    /* Every weight zero: every pose would cost the same. */
    s = f.schema;
    for (int c = 0; c < s.channel_count; c++) s.channels[c].weight = 0.0f;
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
    pm_error err0;
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
    a.cost_addend = -1e-8f;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT,
                       "asset 0 (walk): cost_addend -1e-08 rounds to 0 as a half float (the smallest is 5.96046e-08)");
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
    a.params[1] = 0.5f;
    a.mirror_negate_params = 4; /* a bit for a third parameter of two */
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT,
                       "asset 0 (random1): mirror_negate_params 4 is outside 0..3 (a bit per parameter; it has 2)");
    a.mirror_negate_params = -1;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "mirror_negate_params -1 is outside 0..3");
    a = f.assets[0];
    a.exclude_end = NAN;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "exclude_end");
    a = f.assets[0];
    a.exclude_start = 1e30f; /* seconds x fps would not fit an int */
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "exclude_start 1e+30 is outside");
    a = f.assets[0];
    a.name = "a\nb";
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "asset 0: its name has a control character (byte 0x0a at offset 1)");
    /* Names a database could only store cut are refused: 250 bytes fit, not with ".mirror". */
    char long_name[251];
    memset(long_name, 'n', 250);
    long_name[250] = '\0';
    a = f.assets[0];
    a.name = long_name;
    a.mirror = 0;
    char key[33];
    PM_ASSERT_OK(pm_database_compute_key(key, &f.def, &a, 1, NULL));
    a.mirror = 1;
    expect_asset_error(&f, &a, PM_ERR_LIMIT, "asset 0: its name with its mirrored copy's \".mirror\" is 257 bytes, over the 255");

    /* Ranges: each field, and addends that add up past the half float where ranges overlap. */
    pm_asset_range g[3] = {{1.0f, 2.0f, 0.5f, 0}, {0.0f, 1.0f, 0.0f, 1}, {0.5f, 1.5f, 0.0f, 0}};
    a = f.assets[0];
    a.name = "walk";
    a.range_count = 2;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "asset 0 (walk): ranges is NULL with range_count 2");
    a.ranges = g;
    a.range_count = -1;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "asset 0 (walk): range_count -1 is outside 0..4096");
    a.range_count = 3;
    g[1].start = 1.0f;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT,
                       "asset 0 (walk): ranges[1] [1, 1) is not a span of [0, 1e+06) seconds with start < end");
    g[1].start = -0.5f;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "ranges[1] [-0.5, 1) is not a span");
    g[1].start = NAN;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "ranges[1] [nan, 1) is not a span");
    g[1].start = 0.0f;
    g[1].end = 2e6f;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "ranges[1] [0, 2e+06) is not a span");
    g[1].end = 1.0f;
    g[1].exclude = 2;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "asset 0 (walk): ranges[1].exclude is 2 (must be 0 or 1)");
    g[1].exclude = 1;
    g[2].cost_addend = INFINITY;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "asset 0 (walk): ranges[2].cost_addend inf is outside -65504..65504");
    g[2].cost_addend = 1e-9f;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "ranges[2].cost_addend 1e-09 rounds to 0 as a half float");
    /* 40000 + 40000 only where [1, 2) and [0.5, 1.5) overlap; the asset's own -10000 brings it back. */
    g[0].cost_addend = 40000.0f;
    g[2].cost_addend = 40000.0f;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT,
                       "asset 0 (walk): its cost_addend and the ranges holding 1 s add up to 80000, outside -65504..65504");
    a.cost_addend = -20000.0f;
    pm_database *ok = NULL;
    if (pm_database_build(&ok, &f.def, &a, 1, &err0) != PM_OK) fail_msg("%s", err0.message);
    pm_database_destroy(ok);
    /* The sum can peak where a range ends, not only where one starts. */
    pm_asset_range h[3] = {{0.0f, 1.0f, 60000.0f, 0}, {0.0f, 0.3f, -60000.0f, 0}, {0.2f, 1.0f, 60000.0f, 0}};
    a = f.assets[0];
    a.ranges = h;
    a.range_count = 3;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "the ranges holding 0.3 s add up to 120000");

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
    static pm_schema s; /* static: a schema is about 62 KB */
    s = f.schema;
    d.schema = &s;
    assert_true(pm_schema_add(&s, &t, NULL) >= 0);
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

/* Each def field out of its range is named, with its value and range, by the build and by the
 * key alike (which leaves the key alone). */
static void expect_def_error(const fixture *f, const pm_database_def *d, pm_result code, const char *words) {
    pm_database *db = (pm_database *)&db;
    pm_error err;
    memset(&err, 0, sizeof err);
    pm_result r = pm_database_build(&db, d, f->assets, 4, &err);
    if (r != code) fail_msg("expected %s for '%s', got %s (%s)", pm_result_string(code), words, pm_result_string(r), err.message);
    if (!strstr(err.message, words)) fail_msg("'%s' does not say '%s'", err.message, words);
    assert_null(db);
    char key[33] = "untouched";
    memset(&err, 0, sizeof err);
    assert_int_equal(pm_database_compute_key(key, d, f->assets, 4, &err), code);
    if (!strstr(err.message, words)) fail_msg("key: '%s' does not say '%s'", err.message, words);
    assert_string_equal(key, "untouched");
}

static void test_def_field_ranges(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 40);
    pm_database_def d = f.def;
    d.exact_components = -1;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: -1 exact components is outside 0..6 (0 = automatic)");
    d.exact_components = DIMS + 1;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: 7 exact components is outside 0..6");
    /* Past PM_MAX_PCA_COMPONENTS even when the cardinality has room (refused before any clip is
     * read: these clips lack the wide schema's curves). */
    static pm_schema wide; /* static: a schema is about 62 KB */
    pm_test_curve_schema(&wide, PM_MAX_PCA_COMPONENTS + 6);
    d.schema = &wide;
    d.exact_components = PM_MAX_PCA_COMPONENTS + 1;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: 65 exact components is outside 0..64");
    d = f.def;
    d.kdtree_leaf_size = 0;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: KD-tree leaf size 0 is outside 1..1024");
    d.kdtree_leaf_size = 1025;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "KD-tree leaf size 1025 is outside 1..1024");
    d = f.def;
    d.exact_leaf_size = 4097;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: exact leaf size 4097 is outside 8..4096");
    d = f.def;
    d.exclude_start = -0.5f; /* unlike an asset's, the database's own default has no "default" */
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: exclude_start -0.5 is outside [0, 1e+06) seconds");
    d.exclude_start = NAN;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: exclude_start nan is outside");
    d.exclude_start = 1e6f;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "exclude_start 1e+06 is outside");
    d = f.def;
    d.exclude_end = INFINITY;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: exclude_end inf is outside [0, 1e+06) seconds");
    d.exclude_end = -1.0f;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: exclude_end -1 is outside");
    d = f.def;
    d.mirror_axis = -2;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: mirror axis -2 is not -1, 0, 1 or 2");
    d.mirror_axis = 3;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: mirror axis 3 is not");
    d = f.def;
    d.trim_rest_first_frame = 2;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: trim_rest_first_frame is 2 (must be 0 or 1)");
    d.trim_rest_first_frame = -1;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "trim_rest_first_frame is -1");
    /* Edges of the ranges are accepted (exact components 0 and the cardinality, KD-tree leaves
     * of 1 and 1024, no exclusion, the last mirror axis, no trimming). */
    d = f.def;
    d.exact_components = 0;
    d.kdtree_leaf_size = 1024;
    d.exclude_start = 0.0f;
    d.mirror_axis = 2;
    d.trim_rest_first_frame = 0;
    char key[33];
    pm_error err;
    if (pm_database_compute_key(key, &d, f.assets, 4, &err) != PM_OK) fail_msg("%s", err.message);
    d.kdtree_leaf_size = 1;
    d.exact_components = DIMS;
    pm_database *db = NULL;
    if (pm_database_build(&db, &d, f.assets, 4, &err) != PM_OK) fail_msg("%s", err.message);
    pm_database_destroy(db);
    /* The key names a NULL asset array as the build does. */
    assert_int_equal(pm_database_compute_key(key, &f.def, NULL, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_compute_key: assets is NULL (asset_count 4)");
    fixture_free(&f);
}

/* The size limits: PM_MAX_ASSETS assets counting mirrored copies (refused before any clip is
 * prepared), and PM_MAX_POSE_VALUES feature values (refused once the clips are prepared, before
 * any feature is extracted). */
static void test_size_limits(void **state) {
    (void)state;
    pm_clip tiny; /* (each asset's clip is validated: the smallest keeps half a million cheap) */
    pm_test_random_clip(&tiny, 1, 1, 3);
    pm_schema schema;
    pm_test_curve_schema(&schema, 1);
    pm_database_def d = pm_default_database_def();
    d.schema = &schema;
    d.pca_components = 1;
    d.mirror = 1;
    const int n = (int)(PM_MAX_ASSETS / 2) + 1; /* each with its mirrored copy: one too many */
    pm_asset_def *many = malloc((size_t)n * sizeof *many);
    assert_non_null(many);
    for (int i = 0; i < n; i++) many[i] = pm_default_asset_def(&tiny);
    pm_database *db = NULL;
    pm_error err;
    assert_int_equal(pm_database_build(&db, &d, many, n, &err), PM_ERR_LIMIT);
    assert_string_equal(err.message, "database: 1048578 assets (mirrored copies included) exceed 1048576");
    assert_null(db);
    /* Exactly the limit passes the checks (the key makes them without building). */
    many[n - 1].mirror = many[n - 2].mirror = 0;
    char key[33];
    PM_ASSERT_OK(pm_database_compute_key(key, &d, many, n, &err));
    free(many);
    /* A count over the limit on its own is refused before any asset is read (the array may be
     * shorter: every asset used to be validated first). */
    pm_asset_def one = pm_default_asset_def(&tiny);
    assert_int_equal(pm_database_build(&db, &d, &one, INT_MAX, &err), PM_ERR_LIMIT);
    assert_string_equal(err.message, "database: asset_count 2147483647 exceeds 1048576");
    assert_null(db);
    assert_int_equal(pm_database_compute_key(key, &d, &one, (int)PM_MAX_ASSETS + 1, &err), PM_ERR_LIMIT);
    assert_string_equal(err.message, "database: asset_count 1048577 exceeds 1048576");
    pm_clip_destroy(&tiny);

    /* 961 values a pose (one curve, 960 of padding): 139665 poses exceed 2^27 values. */
    pm_clip long_clip;
    pm_test_random_clip(&long_clip, 139665, 1, 4);
    static pm_schema wide; /* static: a schema is about 62 KB */
    pm_test_curve_schema(&wide, 1);
    pm_channel_def pad = pm_default_channel_def(PM_FEATURE_PADDING);
    pad.size = 64;
    for (int i = 0; i < 15; i++) assert_true(pm_schema_add(&wide, &pad, NULL) >= 0);
    assert_int_equal(pm_schema_cardinality(&wide), 961);
    d = pm_default_database_def();
    d.schema = &wide;
    d.trim_rest_first_frame = 0;
    pm_asset_def a = pm_default_asset_def(&long_clip);
    assert_int_equal(pm_database_build(&db, &d, &a, 1, &err), PM_ERR_LIMIT);
    assert_string_equal(err.message, "database: 139665 poses x 961 values exceed the 134217728-value limit");
    assert_null(db);
    pm_clip_destroy(&long_clip);

    /* A clip the database's rate would resample past PM_MAX_FRAMES is refused when the build
     * counts its poses, before any clip is prepared; its mirrored copy, which takes its source's
     * lead-in test, does not hide which asset it was. */
    pm_clip slow, fine;
    pm_test_random_clip(&slow, 3, 1, 5);
    pm_test_random_clip(&fine, 40, 1, 6);
    slow.frame_time = 1e5f;
    d = pm_default_database_def();
    d.schema = &schema;
    d.pca_components = 1;
    d.fps = 1000.0f;
    d.mirror = 1;
    pm_asset_def assets[2] = {pm_default_asset_def(&fine), pm_default_asset_def(&slow)};
    assets[1].name = "slow";
    assert_int_equal(pm_database_build(&db, &d, assets, 2, &err), PM_ERR_LIMIT);
    assert_string_equal(err.message, "asset 'slow': resample: clip 'random5' (3 frames of 100000 s) at 1000 fps would have "
                                     "2e+08 frames (limit 10000000)");
    assert_null(db);
    pm_clip_destroy(&slow);
    pm_clip_destroy(&fine);
}

/* A value a rounding step past a bound is printed with the digits that tell it from the bound:
 * "fps 1000 is outside 1..1000" named no problem (a rate computed as 1 / frame_time lands there). */
static void test_messages_past_a_bound(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 40);
    pm_database_def d = f.def;
    d.fps = nextafterf(1000.0f, INFINITY);
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: fps 1000.00006 is outside 1..1000");
    d = f.def;
    d.exclude_end = nextafterf(1e6f, INFINITY);
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: exclude_end 1000000.06 is outside [0, 1e+06) seconds");
    /* The bound itself is outside too (the header says < 1e6). */
    d.exclude_end = 1e6f;
    expect_def_error(&f, &d, PM_ERR_INVALID_ARGUMENT, "database: exclude_end 1e+06 is outside [0, 1e+06) seconds");
    pm_asset_def a = f.assets[0];
    a.name = "walk";
    a.cost_addend = nextafterf(PM_MAX_COST_ADDEND, INFINITY);
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "asset 0 (walk): cost_addend 65504.004 is outside -65504..65504");
    a.cost_addend = 0.01f; /* stored as 0.00999451, which pushes the range's 65504 past the half float */
    pm_asset_range g = {0.0f, 1.0f, PM_MAX_COST_ADDEND, 0};
    a.ranges = &g;
    a.range_count = 1;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "ranges holding 0 s add up to 65504.01, outside -65504..65504");
    a.cost_addend = 0.0f;
    g.end = nextafterf(1e6f, INFINITY);
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "ranges[0] [0, 1000000.06) is not a span of [0, 1e+06) seconds");
    /* Ordinary values keep their short form. */
    g.end = 2e6f;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT, "ranges[0] [0, 2e+06) is not a span");
    a.range_count = 0;
    a.exclude_end = 1e6f;
    expect_asset_error(&f, &a, PM_ERR_INVALID_ARGUMENT,
                       "exclude_end 1e+06 is outside [0, 1e+06) seconds (< 0 = the database default)");
    fixture_free(&f);
}

/* Assets are prepared in parallel, but the error reported is the first asset's in input order
 * (what a serial build would stop at), whichever thread finished last. */
static void test_first_failing_asset_reported(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 40);
    const int joints = f.clips[0].skeleton.joint_count;
    int32_t not_swap[256], not_joint[256];
    assert_true(joints >= 2 && joints <= 256);
    for (int j = 0; j < joints; j++) not_swap[j] = not_joint[j] = j;
    not_swap[0] = 1;
    not_joint[0] = 7;
    pm_asset_def bad[3] = {f.assets[0], f.assets[1], f.assets[2]};
    bad[1].mirror = bad[2].mirror = 1;
    bad[1].mirror_map = not_swap;
    bad[2].mirror_map = not_joint;
    for (int threads = 1; threads <= 2; threads++) {
        pm_database_def d = f.def;
        d.threads = threads;
        pm_database *db = NULL;
        pm_error err;
        assert_int_equal(pm_database_build(&db, &d, bad, 3, &err), PM_ERR_INVALID_ARGUMENT);
        if (!strstr(err.message, "map entry 0 (1) is not a left/right swap")) fail_msg("threads %d: '%s'", threads, err.message);
        assert_null(db);
    }
    fixture_free(&f);
}

/* The inclusive ends of the def's and assets' ranges are accepted: 1 fps is a rate (a slow
 * capture's), and a name of exactly PM_MAX_ASSET_NAME bytes, ".mirror" included for a
 * mirrored copy, fits the field a database stores. Checked through pm_database_compute_key,
 * which validates as the build does. */
static void test_inclusive_bounds_accepted(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 40);
    char key[33];
    pm_error err;
    pm_database_def d = f.def;
    d.fps = 1.0f;
    PM_ASSERT_OK(pm_database_compute_key(key, &d, f.assets, 4, &err));
    d.fps = 1000.0f;
    PM_ASSERT_OK(pm_database_compute_key(key, &d, f.assets, 4, &err));
    d.fps = 0.999f;
    assert_int_equal(pm_database_compute_key(key, &d, f.assets, 4, &err), PM_ERR_INVALID_ARGUMENT);
    char name[PM_MAX_ASSET_NAME + 2];
    memset(name, 'a', sizeof name - 1);
    name[PM_MAX_ASSET_NAME] = '\0';
    pm_asset_def a[4] = {f.assets[0], f.assets[1], f.assets[2], f.assets[3]};
    a[0].name = name;
    PM_ASSERT_OK(pm_database_compute_key(key, &f.def, a, 4, &err));
    a[0].mirror = 1; /* "aaa...a.mirror" is 7 bytes over */
    assert_int_equal(pm_database_compute_key(key, &f.def, a, 4, &err), PM_ERR_LIMIT);
    name[PM_MAX_ASSET_NAME - 7] = '\0';
    PM_ASSERT_OK(pm_database_compute_key(key, &f.def, a, 4, &err));
    /* ... while the exclusive ends are not: an asset's exclusion of 1e6 s is outside [0, 1e6). */
    a[1].exclude_start = 1e6f; /* PM_MAX_EXCLUDE_SECONDS */
    assert_int_equal(pm_database_compute_key(key, &f.def, a, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "exclude_start"));
    a[1].exclude_start = -1.0f;
    a[1].exclude_end = 1e6f; /* PM_MAX_EXCLUDE_SECONDS */
    assert_int_equal(pm_database_compute_key(key, &f.def, a, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "exclude_end"));
    fixture_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accessor_errors),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_first_failing_asset_reported),
        cmocka_unit_test(test_inclusive_bounds_accepted),
        cmocka_unit_test(test_asset_field_errors),
        cmocka_unit_test(test_def_errors),
        cmocka_unit_test(test_no_searchable_pose),
        cmocka_unit_test(test_def_field_ranges),
        cmocka_unit_test(test_size_limits),
        cmocka_unit_test(test_messages_past_a_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
