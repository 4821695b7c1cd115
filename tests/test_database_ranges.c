/* Database builder: asset ranges and exclusions, their addends and times, the rate a clip is
 * taken at, and the pose playing at a time (counts, keys, de-duplication and features:
 * test_database.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "database_support.h"

/* Without ranges a pose carries its asset's addend as given, the sign of a -0 included, as it did
 * before ranges existed: those databases keep their bytes under their unchanged keys. */
static void test_addend_without_ranges_unchanged(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    f.assets[1].cost_addend = -0.0f;
    pm_database *db = build(&f, 1);
    pm_asset_info a;
    PM_ASSERT_OK(pm_database_asset(&a, db, 1, NULL));
    for (int fr = 0; fr < a.pose_count; fr++) {
        pm_pose_info p;
        PM_ASSERT_OK(pm_database_pose(&p, db, a.first_pose + fr, NULL));
        if (!(p.cost_addend == 0.0f && signbit(p.cost_addend)))
            fail_msg("frame %d: addend %g (sign %d), the asset's -0 expected", fr, (double)p.cost_addend,
                     signbit(p.cost_addend) != 0);
    }
    pm_database_destroy(db);
    fixture_free(&f);
}

/* A range given at a frame's time holds that frame (and one ending there does not), whether the
 * time is the frame's own (k * frame_time, which drifts from k / fps when the frame time read from
 * text is a hair off the rate: 0.0333334, "0.041667" for 24 fps, 59.97 fps kept unresampled in a
 * 60 fps database) or the row's (row / fps, what pm_search_result.time gives). */
static void test_ranges_at_frame_times(void **state) {
    (void)state;
    static const struct {
        float frame_time;
        int k0, k1;    /* the range: from clip frame k0 to k1 */
        int per_frame; /* rows per clip frame at 60 fps */
        int nominal;   /* 1: times k / rate rather than k * frame_time */
        float rate;
    } cases[] = {
        {1.0f / 59.97f, 600, 700, 1, 0, 0.0f}, {1.0f / 59.97f, 600, 700, 1, 1, 60.0f},
        {0.0333334f, 364, 400, 2, 0, 0.0f},    {0.0333333f, 364, 400, 2, 1, 30.0f},
        {0.041667f, 364, 400, 0, 0, 0.0f},     {0.0333333f, 364, 400, 2, 0, 0.0f},
    };
    for (unsigned c = 0; c < sizeof cases / sizeof *cases; c++) {
        fixture f;
        fixture_init(&f, 1200);
        for (int i = 0; i < 4; i++) f.clips[i].frame_time = cases[c].frame_time;
        f.def.fps = 60.0f;
        const float ft = cases[c].frame_time;
        pm_asset_range g = {cases[c].nominal ? (float)cases[c].k0 / cases[c].rate : (float)cases[c].k0 * ft,
                            cases[c].nominal ? (float)cases[c].k1 / cases[c].rate : (float)cases[c].k1 * ft, 1.0f, 0};
        f.assets[0].ranges = &g;
        f.assets[0].range_count = 1;
        pm_database *db = build(&f, 1);
        /* 24 fps: 2.5 rows a frame, and frames 364 and 400 (even) fall on rows. */
        int r0 = cases[c].per_frame ? cases[c].k0 * cases[c].per_frame : cases[c].k0 * 5 / 2;
        int r1 = cases[c].per_frame ? cases[c].k1 * cases[c].per_frame : cases[c].k1 * 5 / 2;
        int row = -1;
        PM_ASSERT_OK(pm_database_clip_frame_row(&row, db, &f.clips[0], cases[c].k0, NULL));
        assert_int_equal(row, r0);
        for (int r = r0 - 3; r < r1 + 3; r++) {
            pm_pose_info p;
            PM_ASSERT_OK(pm_database_pose(&p, db, r, NULL));
            if (p.cost_addend != (r >= r0 && r < r1 ? 1.0f : 0.0f))
                fail_msg("case %u (frame time %.9g, [%.9g, %.9g) s): row %d has addend %g, rows %d-%d should", c,
                         (double)ft, (double)g.start, (double)g.end, r, (double)p.cost_addend, r0, r1 - 1);
        }
        pm_database_destroy(db);
        fixture_free(&f);
    }
}

/* Ranges (pm_asset_range): each pose's addend is its asset's plus those of the ranges holding
 * its time, excluded spans are blocked, the mirrored copy has the same, and the key follows them
 * while an empty list changes nothing. */
static void test_asset_ranges(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 120); /* 30 fps clips in a 30 fps database, no lead-in */
    pm_database *plain = build(&f, 1);
    char plain_key[33], key[33];
    PM_ASSERT_OK(pm_database_compute_key(plain_key, &f.def, f.assets, 4, NULL));
    /* Frames 30-44: 0.25 - 0.5; 45-59: also excluded and + 0.125; 60-74: excluded, 0.25 + 0.125. */
    const pm_asset_range ranges[] = {{1.0f, 2.0f, -0.5f, 0}, {1.5f, 2.5f, 0.125f, 1}};
    f.assets[1].cost_addend = 0.25f;
    f.assets[1].mirror = 1;
    f.assets[1].range_count = 2;
    f.assets[1].ranges = ranges;
    pm_database *db = build(&f, 1), *db2 = build(&f, 2);
    pm_test_assert_same_database(db, db2);
    pm_database_info in;
    pm_database_get_info(&in, db);
    assert_int_equal(in.assets, 5);
    assert_int_equal(in.excluded_poses, 9 * 5 + 2 * 30);
    for (int copy = 1; copy <= 2; copy++) {
        pm_asset_info a;
        PM_ASSERT_OK(pm_database_asset(&a, db, copy, NULL));
        assert_int_equal(a.mirrored, copy == 2);
        assert_true(a.cost_addend == 0.25f); /* the asset's own; poses carry the sums */
        for (int fr = 0; fr < a.pose_count; fr++) {
            pm_pose_info p;
            PM_ASSERT_OK(pm_database_pose(&p, db, a.first_pose + fr, NULL));
            float want = fr < 30 ? 0.25f : fr < 45 ? -0.25f : fr < 60 ? -0.125f : fr < 75 ? 0.375f : 0.25f;
            if (p.cost_addend != want) fail_msg("asset %d frame %d: addend %g, expected %g", copy, fr, p.cost_addend, want);
            assert_int_equal(p.block_transition, (fr >= 45 && fr < 75) || fr >= a.pose_count - 9);
        }
    }
    PM_ASSERT_OK(pm_database_compute_key(key, &f.def, f.assets, 4, NULL));
    assert_string_not_equal(key, plain_key);
    pm_asset_range moved[2] = {ranges[0], ranges[1]};
    moved[1].exclude = 0;
    f.assets[1].ranges = moved;
    char k2[33];
    PM_ASSERT_OK(pm_database_compute_key(k2, &f.def, f.assets, 4, NULL));
    assert_string_not_equal(k2, key);
    pm_database_destroy(db);
    pm_database_destroy(db2);
    /* The asset's addend and its ranges' are rounded once, together: 0.1 - 0.1 is 0, where 0.1
     * rounded first would leave -2.4e-5 (a slight preference with the sign flipped). */
    const pm_asset_range cancel[] = {{0.0f, 1.0f, -0.1f, 0}};
    pm_asset_def tenth = f.assets[2];
    tenth.cost_addend = 0.1f;
    tenth.ranges = cancel;
    tenth.range_count = 1;
    pm_database *t = NULL;
    pm_error err;
    if (pm_database_build(&t, &f.def, &tenth, 1, &err) != PM_OK) fail_msg("%s", err.message);
    pm_pose_info tp;
    PM_ASSERT_OK(pm_database_pose(&tp, t, 0, NULL));
    assert_true(tp.cost_addend == 0.0f);
    PM_ASSERT_OK(pm_database_pose(&tp, t, 30, NULL));
    assert_true(tp.cost_addend == 0.0999755859375f);
    pm_database_destroy(t);
    /* No ranges (a list given with a count of 0 included) is the database of before. */
    f.assets[1].cost_addend = 0.0f;
    f.assets[1].mirror = -1;
    f.assets[1].range_count = 0;
    db = build(&f, 1);
    pm_test_assert_same_database(db, plain);
    PM_ASSERT_OK(pm_database_compute_key(key, &f.def, f.assets, 4, NULL));
    assert_string_equal(key, plain_key);
    pm_database_destroy(db);
    /* Range times are the clip's: at 60 fps from 30 fps clips, [1, 2) s holds rows 60-119, and
     * a range between two rows' times holds none. */
    f.def.fps = 60.0f;
    const pm_asset_range narrow[] = {{1.0f, 2.0f, 1.0f, 0}, {3.001f, 3.01f, 2.0f, 0}};
    f.assets[0].ranges = narrow, f.assets[0].range_count = 2;
    db = build(&f, 1);
    for (int row = 0; row < 240; row++) {
        pm_pose_info p;
        PM_ASSERT_OK(pm_database_pose(&p, db, row, NULL));
        assert_true(p.cost_addend == (row >= 60 && row < 120 ? 1.0f : 0.0f));
    }
    pm_database_destroy(db);
    pm_database_destroy(plain);
    fixture_free(&f);
}

/* A clip within 0.1% of the database's rate is taken frame for frame and at exactly the
 * database's rate: a frame time read from text as 0.0333334 must give the poses 1/30 gives (a
 * channel read 0.2 s ahead would otherwise fall a hair between frames), or the same motion would
 * build different values. A clip 0.67% off is resampled. */
static void test_rate_tolerance(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 120);
    f.schema.channels[1].offset = 0.2f;
    for (int i = 0; i < 4; i++) f.clips[i].frame_time = 1.0f / 30.0f;
    pm_database *exact = build(&f, 1);
    for (int i = 0; i < 4; i++) f.clips[i].frame_time = 0.0333334f;
    pm_database *text = build(&f, 1);
    pm_database_info a, b;
    pm_database_get_info(&a, exact);
    pm_database_get_info(&b, text);
    assert_int_equal(a.poses, b.poses);
    for (int p = 0; p < a.poses; p++) {
        float fa[DIMS], fb[DIMS];
        PM_ASSERT_OK(pm_database_pose_features(fa, exact, p, NULL));
        PM_ASSERT_OK(pm_database_pose_features(fb, text, p, NULL));
        if (memcmp(fa, fb, sizeof fa) != 0) fail_msg("pose %d: features differ with a frame time of 0.0333334", p);
    }
    pm_database_destroy(exact);
    pm_database_destroy(text);
    for (int i = 0; i < 4; i++) f.clips[i].frame_time = 1.0f / 30.2f;
    pm_database *off = build(&f, 1);
    for (int i = 0; i < 4; i++) {
        pm_asset_info as;
        PM_ASSERT_OK(pm_database_asset(&as, off, i, NULL));
        /* 119 frames of 1/30.2 s last 3.94 s: 119 poses at 30 fps, not the clip's 120 frames. */
        if (as.pose_count >= f.clips[i].frame_count)
            fail_msg("asset %d: %d poses from %d frames at 30.2 fps (not resampled)", i, as.pose_count, f.clips[i].frame_count);
    }
    pm_database_destroy(off);
    fixture_free(&f);
}

/* Range times are the source clip's, its trimmed rest frame included: pose r is source frame
 * r + 1, so [1, 2) s (frames 30-59 of a 30 fps clip) holds poses 29-58, not 30-59; and a range
 * from 0 s starts at the asset's first pose, not on the pose before it (the previous asset's). */
static void test_ranges_after_a_lead_in(void **state) {
    (void)state;
    pm_skeleton sk, sk0;
    pm_clip c0 = pm_test_random_biped_clip(&sk0, 60, 4);
    pm_clip c = pm_test_random_biped_clip(&sk, 120, 3);
    for (int j = 1; j < 9; j++) c.rotations[j] = pm_quat_identity(); /* a T-pose first frame */
    pm_schema schema;
    pm_schema_init(&schema);
    pm_channel_def ch = pm_default_channel_def(PM_FEATURE_POSITION);
    strcpy(ch.bone, "@left_foot");
    assert_true(pm_schema_add(&schema, &ch, NULL) >= 0);
    ch = pm_default_channel_def(PM_FEATURE_VELOCITY);
    strcpy(ch.bone, "@right_foot");
    assert_true(pm_schema_add(&schema, &ch, NULL) >= 0);
    pm_database_def def = pm_default_database_def();
    def.schema = &schema;
    pm_asset_def assets[2] = {pm_default_asset_def(&c0), pm_default_asset_def(&c)};
    const pm_asset_range g[2] = {{0.0f, 0.5f, 2.0f, 0}, {1.0f, 2.0f, 1.0f, 0}};
    assets[1].ranges = g;
    assets[1].range_count = 2;
    pm_database *db = NULL;
    pm_error err;
    if (pm_database_build(&db, &def, assets, 2, &err) != PM_OK) fail_msg("build: %s", err.message);
    float lead = -1.0f;
    PM_ASSERT_OK(pm_database_clip_lead_in(&lead, db, &c, NULL));
    assert_true(lead == c.frame_time);
    pm_asset_info a;
    PM_ASSERT_OK(pm_database_asset(&a, db, 1, NULL));
    assert_int_equal(a.pose_count, c.frame_count - 1);
    assert_true(a.first_pose > 0);
    pm_pose_info p;
    PM_ASSERT_OK(pm_database_pose(&p, db, a.first_pose - 1, NULL));
    if (p.cost_addend != 0.0f) fail_msg("the pose before the asset: addend %g", (double)p.cost_addend);
    for (int r = 0; r < a.pose_count; r++) {
        PM_ASSERT_OK(pm_database_pose(&p, db, a.first_pose + r, NULL));
        float want = r < 14 ? 2.0f : r >= 29 && r < 59 ? 1.0f : 0.0f; /* 0.5 s is source frame 15 */
        if (p.cost_addend != want) fail_msg("pose %d: addend %g, expected %g", r, (double)p.cost_addend, (double)want);
    }
    pm_database_destroy(db);
    pm_clip_destroy(&c);
    pm_clip_destroy(&c0);
    pm_skeleton_destroy(&sk);
    pm_skeleton_destroy(&sk0);
}

/* exclude_start and exclude_end count whole poses, rounded down: 0.25 s at 30 fps is 7.5 poses,
 * of which 7 are excluded at each end (the eighth pose starts 0.233 s in, inside the kept part). */
static void test_exclusion_rounds_down(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    f.def.exclude_start = 0.25f;
    f.def.exclude_end = 0.25f;
    pm_database *db = build(&f, 1);
    pm_database_info in;
    pm_database_get_info(&in, db);
    assert_int_equal(in.excluded_poses, 4 * 14);
    for (int i = 0; i < 4; i++) {
        pm_asset_info a;
        PM_ASSERT_OK(pm_database_asset(&a, db, i, NULL));
        for (int r = 0; r < a.pose_count; r++) {
            pm_pose_info p;
            PM_ASSERT_OK(pm_database_pose(&p, db, a.first_pose + r, NULL));
            if (p.block_transition != (r < 7 || r >= a.pose_count - 7))
                fail_msg("asset %d pose %d of %d: block_transition %d", i, r, a.pose_count, p.block_transition);
        }
    }
    pm_database_destroy(db);
    fixture_free(&f);
}

/* Poses that share a vector (the same clip under two assets) keep their own addends; the
 * vector's bound and the header's smallest addend must be the smallest of them, or the search
 * would prune the cheaper pose. pm_database_verify recomputes both from the poses. Poses both
 * excluded and block transitions count once, as block transitions. */
static void test_shared_vectors_and_overlapping_exclusions(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    f.assets[1].clip = &f.clips[0];
    f.assets[2].clip = &f.clips[0];
    f.assets[1].name = "again";
    f.assets[2].name = "and again";
    f.assets[0].cost_addend = -0.5f;
    f.assets[1].cost_addend = 0.25f;
    f.assets[2].cost_addend = 0.5f;
    f.assets[3].cost_addend = 0.75f;
    pm_database *db = build(&f, 1);
    pm_error err;
    if (pm_database_verify(db, &err) != PM_OK) fail_msg("verify: %s", err.message);
    pm_database_destroy(db);
    /* A channel 0.2 s ahead blocks the last poses of each asset; exclude_end covers them and more. */
    f.schema.channels[1].offset = 0.2f;
    f.def.exclude_end = 0.0f;
    db = build(&f, 1);
    pm_database_info in;
    pm_database_get_info(&in, db);
    const int blocked = in.block_transition_poses;
    assert_int_equal(in.excluded_poses, 0);
    assert_true(blocked > 0 && blocked < 4 * 9);
    pm_database_destroy(db);
    f.def.exclude_end = 0.3f; /* 9 poses */
    db = build(&f, 1);
    pm_database_get_info(&in, db);
    assert_int_equal(in.block_transition_poses, 4 * 9);
    assert_int_equal(in.excluded_poses, 4 * 9 - blocked);
    pm_database_destroy(db);
    fixture_free(&f);
}

/* The pose playing at a time: nearest frame, wrapped in a looping asset, clamped otherwise. */
static void test_asset_pose_at(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    f.assets[1].looping = 1;
    pm_database *db = build(&f, 1);
    pm_asset_info a0, a1;
    PM_ASSERT_OK(pm_database_asset(&a0, db, 0, NULL));
    PM_ASSERT_OK(pm_database_asset(&a1, db, 1, NULL));
    assert_int_equal(a1.looping, 1);
    int pose = 0;
    const float fps = 30.0f;
    static const struct {
        float frames; /* time * fps */
        int one_shot, loop; /* expected frames */
    } cases[] = {{0.0f, 0, 0}, {10.0f, 10, 10}, {10.4f, 10, 10}, {10.6f, 11, 11}, {-0.4f, 0, 0}, {-1.0f, 0, 66},
                 {59.0f, 59, 59}, {67.0f, 59, 0}, {67.0f * 3 + 5, 59, 5}, {1e7f, 59, 10000000 % 67}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        PM_ASSERT_OK(pm_database_asset_pose_at(&pose, db, 0, cases[k].frames / fps, NULL));
        assert_int_equal(pose, a0.first_pose + cases[k].one_shot);
        PM_ASSERT_OK(pm_database_asset_pose_at(&pose, db, 1, cases[k].frames / fps, NULL));
        assert_int_equal(pose, a1.first_pose + cases[k].loop);
    }
    /* Each pose's own time gives it back. */
    for (int p = 0; p < a1.pose_count; p++) {
        pm_pose_info info;
        PM_ASSERT_OK(pm_database_pose(&info, db, a1.first_pose + p, NULL));
        PM_ASSERT_OK(pm_database_asset_pose_at(&pose, db, 1, info.time, NULL));
        assert_int_equal(pose, a1.first_pose + p);
    }
    pm_error err;
    assert_int_equal(pm_database_asset_pose_at(&pose, db, 0, NAN, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pose, -1);
    assert_non_null(strstr(err.message, "time nan is not finite"));
    assert_int_equal(pm_database_asset_pose_at(&pose, db, 4, 0.0f, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "asset 4 is outside 0..3"));
    assert_int_equal(pm_database_asset_pose_at(&pose, NULL, 0, 0.0f, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_database_asset_pose_at(NULL, db, 0, 0.0f, &err), PM_ERR_INVALID_ARGUMENT);
    pm_database_destroy(db);
    fixture_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_asset_ranges),
        cmocka_unit_test(test_rate_tolerance),
        cmocka_unit_test(test_ranges_after_a_lead_in),
        cmocka_unit_test(test_exclusion_rounds_down),
        cmocka_unit_test(test_shared_vectors_and_overlapping_exclusions),
        cmocka_unit_test(test_asset_pose_at),
        cmocka_unit_test(test_ranges_at_frame_times),
        cmocka_unit_test(test_addend_without_ranges_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
