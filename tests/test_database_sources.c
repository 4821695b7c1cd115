/* What a database records of the clips its assets were made from: joint counts, the mirror map and
 * axis of mirrored copies, fingerprints that tell the right clip from another
 * (pm_database_asset_check_clip), and the asset rebuilt as a clip from its source
 * (pm_database_asset_clip). Real clips: test_search_mocap.c (test_playing_mirrored_results). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "database_support.h"

/* Two clips hold the same frames bit for bit. */
static void assert_same_frames(const pm_clip *a, const pm_clip *b) {
    assert_int_equal(a->frame_count, b->frame_count);
    assert_int_equal(a->skeleton.joint_count, b->skeleton.joint_count);
    assert_true(a->frame_time == b->frame_time);
    assert_int_equal(a->looping, b->looping);
    size_t n = (size_t)a->frame_count * (size_t)a->skeleton.joint_count;
    assert_memory_equal(a->rotations, b->rotations, n * sizeof(pm_quat));
    assert_memory_equal(a->translations, b->translations, n * sizeof(pm_vec3));
}

/* Assets 0, 1, 1.mirror, 2, 3, 3.mirror; asset 3 loops by its def. */
static pm_database *build_mirrored(fixture *f, float fps, const int32_t *map3, int axis) {
    f->assets[1].mirror = 1;
    f->assets[3].mirror = 1;
    f->assets[3].looping = 1;
    f->assets[3].mirror_map = map3;
    f->def.fps = fps;
    f->def.mirror_axis = axis;
    return build(f, 2);
}

static void test_info_records_the_mirror(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    static const int32_t identity[3] = {0, 1, 2};
    pm_database *db = build_mirrored(&f, 30.0f, identity, -1);
    assert_int_equal(pm_database_asset_count(db), 6);
    static const int sources[6] = {-1, -1, 1, -1, -1, 4};
    for (int i = 0; i < 6; i++) {
        pm_asset_info a;
        PM_ASSERT_OK(pm_database_asset(&a, db, i, NULL));
        assert_int_equal(a.joint_count, 3);
        assert_int_equal(a.source_asset, sources[i]);
        if (!a.mirrored) {
            assert_null(a.mirror_map);
            assert_int_equal(a.mirror_axis, -1);
            continue;
        }
        assert_non_null(a.mirror_map);
        /* Asset 1's map found from the names (LeftUpLeg <-> RightUpLeg), asset 3's the def's; the
         * axis from the rest pose (the legs sit apart along X). */
        const int32_t found[3] = {0, 2, 1};
        assert_memory_equal(a.mirror_map, i == 2 ? found : identity, sizeof found);
        assert_int_equal(a.mirror_axis, 0);
    }
    /* A loaded file tells the same; a given axis is recorded as given. */
    const char *path = pm_test_tmp_path("sources.pmdb");
    PM_ASSERT_OK(pm_database_save(db, path, NULL));
    pm_database *back = NULL;
    PM_ASSERT_OK(pm_database_load(&back, path, NULL, NULL));
    pm_test_assert_same_database(db, back);
    pm_asset_info a;
    PM_ASSERT_OK(pm_database_asset(&a, back, 5, NULL));
    assert_memory_equal(a.mirror_map, identity, sizeof identity);
    pm_database_destroy(back);
    pm_database_destroy(db);
    db = build_mirrored(&f, 30.0f, NULL, 2);
    PM_ASSERT_OK(pm_database_asset(&a, db, 5, NULL));
    assert_int_equal(a.mirror_axis, 2);
    pm_database_destroy(db);
    fixture_free(&f);
}

/* The asset as a clip is the build's preparation of its source: the same frames, trimmed,
 * mirrored with the recorded map and axis, looping as the def said, at the database's rate. */
static void test_asset_clip_is_the_prepared_source(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    for (int pass = 0; pass < 2; pass++) {
        const float fps = pass ? 60.0f : 30.0f; /* the clips are at 30: as they are, then resampled */
        pm_database *db = build_mirrored(&f, fps, NULL, -1);
        static const int def_of[6] = {0, 1, 1, 2, 3, 3};
        for (int i = 0; i < 6; i++) {
            pm_asset_info a;
            PM_ASSERT_OK(pm_database_asset(&a, db, i, NULL));
            const pm_clip *src = &f.clips[def_of[i]];
            PM_ASSERT_OK(pm_database_asset_check_clip(db, i, src, NULL));
            pm_clip c, want, tmp;
            PM_ASSERT_OK(pm_database_asset_clip(&c, db, i, src, NULL));
            assert_int_equal(c.frame_count, a.pose_count);
            assert_true(c.frame_time == 1.0f / fps);
            assert_int_equal(c.looping, a.looping);
            assert_int_equal(a.looping, i >= 4);
            /* What the build does, step by step (no lead-in in these clips). */
            if (a.mirrored) PM_ASSERT_OK(pm_clip_mirror(&tmp, src, a.mirror_map, a.mirror_axis, NULL));
            else PM_ASSERT_OK(pm_clip_copy(&tmp, src, NULL, NULL));
            tmp.looping = a.looping;
            if (pass) {
                PM_ASSERT_OK(pm_clip_resample(&want, &tmp, fps, NULL));
                pm_clip_destroy(&tmp);
            } else want = tmp;
            assert_same_frames(&c, &want);
            /* Its rows are the asset's. */
            float *rows = NULL;
            int n = 0;
            PM_ASSERT_OK(pm_database_clip_queries(&rows, &n, db, &c, NULL));
            assert_int_equal(n, a.pose_count);
            float stored[DIMS];
            for (int r = 0; r < n; r++) {
                PM_ASSERT_OK(pm_database_pose_features(stored, db, a.first_pose + r, NULL));
                for (int d = 0; d < DIMS; d++)
                    assert_float_equal(rows[(size_t)r * DIMS + d], stored[d], 1e-4 * (1.0 + fabs(stored[d])));
            }
            pm_free_buffer(rows, NULL);
            pm_clip_destroy(&want);
            pm_clip_destroy(&c);
        }
        pm_database_destroy(db);
    }
    fixture_free(&f);
}

static void expect_mismatch(const pm_database *db, int asset, const pm_clip *clip, const char *words) {
    pm_error err;
    pm_result r = pm_database_asset_check_clip(db, asset, clip, &err);
    if (r != PM_ERR_MISMATCH) fail_msg("expected a mismatch for '%s', got %s", words, pm_result_string(r));
    if (!strstr(err.message, words)) fail_msg("expected '%s' in: %s", words, err.message);
    /* The clip maker refuses it the same way, and leaves a clip that is safe to destroy. */
    pm_clip out;
    memset(&out, 0xAB, sizeof out);
    assert_int_equal(pm_database_asset_clip(&out, db, asset, clip, &err), PM_ERR_MISMATCH);
    assert_non_null(strstr(err.message, words));
    assert_null(out.rotations);
    assert_int_equal(out.frame_count, 0);
    pm_clip_destroy(&out);
}

/* Another clip than the one an asset was made from: another skeleton, other frames, other
 * values, a renamed joint, a moved rest pose, a curve edited. Its name and looping flag do not
 * matter. */
static void test_check_clip_tells_another_clip(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    pm_database *db = build_mirrored(&f, 30.0f, NULL, -1);
    expect_mismatch(db, 0, &f.clips[1], "asset 'random1' was made from 60 frames of 0.0333333");
    expect_mismatch(db, 2, &f.clips[0], "asset 'random2.mirror' was made from 67 frames");
    pm_clip c;
    PM_ASSERT_OK(pm_clip_copy(&c, &f.clips[1], NULL, NULL));
    PM_ASSERT_OK(pm_clip_set_name(&c, "renamed", NULL));
    c.looping = 1;
    PM_ASSERT_OK(pm_database_asset_check_clip(db, 2, &c, NULL));
    c.translations[3 * 10].y += 1e-6f;
    expect_mismatch(db, 2, &c, "asset 'random2.mirror' was made from other frames or curves than clip 'renamed' has");
    c.translations[3 * 10] = f.clips[1].translations[3 * 10];
    c.curves[2].values[5] += 1.0f;
    expect_mismatch(db, 1, &c, "other frames or curves");
    c.curves[2].values[5] = f.clips[1].curves[2].values[5];
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 2, "RightLeg", NULL));
    expect_mismatch(db, 1, &c, "asset 'random2' was made from another skeleton of 3 joints (clip 'renamed' differs");
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 2, "RightUpLeg", NULL));
    c.skeleton.rest_translations[1].x = 0.2f;
    expect_mismatch(db, 1, &c, "another skeleton");
    pm_clip_destroy(&c);
    /* A clip of another joint count. */
    pm_skeleton s;
    pm_clip biped = pm_test_random_biped_clip(&s, 60, 5);
    biped.frame_time = f.clips[0].frame_time;
    char want[128];
    snprintf(want, sizeof want, "asset 'random1' was made from a clip of 3 joints, clip '%s' has %d",
             biped.name ? biped.name : "(unnamed)", biped.skeleton.joint_count);
    expect_mismatch(db, 0, &biped, want);
    pm_clip_destroy(&biped);
    pm_skeleton_destroy(&s);
    pm_database_destroy(db);
    fixture_free(&f);
}

static void test_argument_errors(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    pm_database *db = build_mirrored(&f, 30.0f, NULL, -1);
    pm_error err;
    pm_clip out;
    assert_int_equal(pm_database_asset_check_clip(NULL, 0, &f.clips[0], &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_asset_check_clip: NULL argument");
    assert_int_equal(pm_database_asset_check_clip(db, 0, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_database_asset_check_clip(db, 6, &f.clips[0], &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_asset_check_clip: asset 6 is outside 0..5");
    assert_int_equal(pm_database_asset_check_clip(db, -1, &f.clips[0], &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_database_asset_clip(NULL, db, 0, &f.clips[0], &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_asset_clip: out is NULL");
    assert_int_equal(pm_database_asset_clip(&out, db, 9, &f.clips[0], &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_asset_clip: asset 9 is outside 0..5");
    assert_null(out.rotations);
    /* Out may not be the source: the source is what it is made from. */
    pm_clip c;
    PM_ASSERT_OK(pm_clip_copy(&c, &f.clips[0], NULL, NULL));
    assert_int_equal(pm_database_asset_clip(&c, db, 0, &c, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_asset_clip: out is the source clip");
    PM_ASSERT_OK(pm_database_asset_check_clip(db, 0, &c, NULL)); /* untouched */
    /* A clip that is no valid clip gives its own error. */
    c.frame_time = -1.0f;
    assert_int_equal(pm_database_asset_check_clip(db, 0, &c, &err), PM_ERR_INVALID_ARGUMENT);
    c.frame_time = f.clips[0].frame_time;
    pm_clip_destroy(&c);
    pm_database_destroy(db);
    fixture_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_records_the_mirror),
        cmocka_unit_test(test_asset_clip_is_the_prepared_source),
        cmocka_unit_test(test_check_clip_tells_another_clip),
        cmocka_unit_test(test_argument_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
