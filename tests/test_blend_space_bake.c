/* Blend spaces (BL1, PS12): phase sync, the blend-space job and its scratch, extreme phases,
 * baking (order independence included) and grids (weights: test_blend_space.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blend_support.h"

#define JOINTS 4

typedef pm_test_blend_fixture fixture;

/* ---- sync, bake, grid ---- */

static void test_phase_sync(void **state) {
    (void)state;
    fixture fx;
    memset(&fx, 0, sizeof fx);
    pm_test_blend_skeleton(&fx.sk, JOINTS);
    fx.count = 2;
    /* A 30-frame and an 18-frame cycle: a slow and a fast gait with the same step pattern. */
    pm_test_blend_swing_clip(&fx.clips[0], &fx.sk, 30, 0.6f, 0.0f);
    pm_test_blend_swing_clip(&fx.clips[1], &fx.sk, 18, 0.9f, 1.0f);
    float pts[2][2] = {{0, 0}, {1, 0}};
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 1, pts, NULL, 2, NULL));
    pm_test_blend_poses poses;
    pm_test_blend_poses_alloc(&poses, JOINTS);
    float half = 0.5f;
    pm_blend_space_weights w;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, &half, NULL));
    assert_true(fabsf(pm_blend_space_duration(s, &w) - 0.5f * (1.0f + 0.6f)) < 1e-6f);
    for (int k = 0; k < 40; k++) {
        float phase = (float)k / 40.0f;
        pm_blend_space_job job = pm_test_blend_job(s, &half, phase, &poses);
        PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
        /* The swing follows the shared phase: both legs' patterns agree, so the blend swings with
         * the average amplitude instead of cancelling out. */
        pm_quat q = pm_pose_rotation(poses.out, 1);
        float angle = 2.0f * atan2f(q.x, q.w);
        float expected = 0.75f * sinf(6.2831853f * phase);
        assert_true(fabsf(angle - expected) < 0.03f);
    }
    pm_test_blend_poses_free(&poses);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

static void test_bake(void **state) {
    (void)state;
    fixture fx;
    pm_blend_space *s = pm_test_blend_triangle_space(&fx, JOINTS);
    /* On a sample: its clip, frame for frame. */
    pm_clip baked;
    PM_ASSERT_OK(pm_blend_space_bake(&baked, s, pm_test_triangle[1], 30.0f, NULL));
    assert_int_equal(baked.frame_count, fx.clips[1].frame_count);
    assert_true(baked.looping);
    assert_string_equal(baked.name, "test@1,0");
    PM_ASSERT_OK(pm_clip_validate(&baked, NULL));
    for (int i = 0; i < baked.frame_count * JOINTS; i++) {
        assert_true(fabsf(fabsf(pm_quat_dot(baked.rotations[i], fx.clips[1].rotations[i])) - 1.0f) < 1e-5f);
        assert_true(pm_vec3_length(pm_vec3_sub(baked.translations[i], fx.clips[1].translations[i])) < 1e-5f);
    }
    pm_clip_destroy(&baked);
    /* Inside: the weight-averaged duration; root motion included (the root's z spans 0..2 per cycle). */
    float mid[2] = {0.25f, 0.25f};
    pm_blend_space_weights w;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, mid, NULL));
    PM_ASSERT_OK(pm_blend_space_bake(&baked, s, mid, 60.0f, NULL));
    assert_true(fabsf(pm_clip_duration(&baked) - pm_blend_space_duration(s, &w)) < 1e-5f);
    assert_true(fabsf(1.0f / baked.frame_time - 60.0f) < 1.0f);
    assert_true(baked.translations[(baked.frame_count - 1) * JOINTS].z > 1.8f);
    pm_clip_destroy(&baked);
    pm_error e;
    assert_int_equal(pm_blend_space_bake(&baked, s, mid, -5.0f, &e), PM_ERR_INVALID_ARGUMENT);
    float nan2[2] = {NAN, 0};
    assert_int_equal(pm_blend_space_bake(&baked, s, nan2, 30.0f, &e), PM_ERR_NUMERIC);
    /* The slowest rate allowed gives one frame; slower ones (whose frame time would not be finite)
     * are errors. */
    PM_ASSERT_OK(pm_blend_space_bake(&baked, s, mid, 0.001f, NULL));
    assert_int_equal(baked.frame_count, 1);
    assert_false(baked.looping); /* (a loop of one frame would be a still) */
    PM_ASSERT_OK(pm_clip_validate(&baked, NULL));
    pm_clip_destroy(&baked);
    assert_int_equal(pm_blend_space_bake(&baked, s, mid, 1e-30f, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "0.001..10000"));
    assert_int_equal(pm_blend_space_bake(&baked, s, mid, 10001.0f, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "0.001..10000"));

    /* The duration helpers take weights as pm_blend_space_weights_at gives them; anything else
     * (NaN, negative, a sample twice, not summing to 1) is "malformed": 0. */
    assert_true(pm_blend_space_duration(s, &w) > 0.0f && pm_blend_space_period(s, &w) == 1);
    assert_true(w.count >= 2);
    assert_int_equal(pm_blend_space_bake_cycles(s, &w, NULL), 1);
    pm_blend_space_weights bad[5];
    for (int i = 0; i < 5; i++) bad[i] = w;
    bad[0].weights[0] = NAN;
    bad[1].weights[0] = -bad[1].weights[0];
    bad[2].samples[1] = bad[2].samples[0];
    for (int i = 0; i < bad[3].count; i++) bad[3].weights[i] *= 2.0f;
    bad[4].count = 1 << 20; /* a count past the arrays: nothing past them is read */
    for (int i = 0; i < 5; i++) {
        assert_true(pm_blend_space_duration(s, &bad[i]) == 0.0f);
        assert_true(pm_blend_space_cycle_duration(s, &bad[i], 1) == 0.0f);
        assert_int_equal(pm_blend_space_period(s, &bad[i]), 0);
        assert_int_equal(pm_blend_space_loops(s, &bad[i]), 0);
        int looping = -1;
        assert_int_equal(pm_blend_space_bake_cycles(s, &bad[i], &looping), 0);
        assert_int_equal(looping, 0);
    }
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

static void test_grid(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 4);
    float pts[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, pts, NULL, 4, NULL)); /* axes [-1, 2] */
    pm_blend_grid_def g = pm_default_blend_grid_def();
    g.counts[0] = 4; /* -1, 0, 1, 2 */
    g.counts[1] = 7; /* -1, -0.5, ..., 2 */
    int n = 0;
    PM_ASSERT_OK(pm_blend_space_grid(NULL, 0, &n, s, &g, NULL));
    assert_int_equal(n, 2 * 3); /* x in {0, 1}, y in {0, 0.5, 1}: inside the square */
    float out[64];
    PM_ASSERT_OK(pm_blend_space_grid(out, 32, &n, s, &g, NULL));
    assert_true(out[0] == 0.0f && out[1] == 0.0f && out[2] == 1.0f && out[3] == 0.0f && out[5] == 0.5f);
    g.include_outside = 1;
    PM_ASSERT_OK(pm_blend_space_grid(NULL, 0, &n, s, &g, NULL));
    assert_int_equal(n, 28);
    pm_error e;
    assert_int_equal(pm_blend_space_grid(out, 10, &n, s, &g, &e), PM_ERR_LIMIT);
    g.counts[0] = 0;
    assert_int_equal(pm_blend_space_grid(out, 10, &n, s, &g, &e), PM_ERR_INVALID_ARGUMENT);
    g.counts[0] = 4;
    g.include_outside = 7;
    assert_int_equal(pm_blend_space_grid(out, 10, &n, s, &g, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "include_outside"));
    /* A negative capacity, or room without a buffer; more points than 1e7 (counted before any
     * is placed, so that a request of 100000 x 101 is refused rather than walked). */
    g.include_outside = 0;
    n = -1;
    assert_int_equal(pm_blend_space_grid(out, -1, &n, s, &g, &e), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.message, "blend space grid: capacity -1 is negative");
    assert_int_equal(n, 0);
    assert_int_equal(pm_blend_space_grid(NULL, 5, &n, s, &g, &e), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.message, "blend space grid: out_params is NULL with capacity 5 (NULL only with capacity 0, to count)");
    g.counts[0] = 100000;
    g.counts[1] = 101;
    assert_int_equal(pm_blend_space_grid(NULL, 0, &n, s, &g, &e), PM_ERR_LIMIT);
    assert_string_equal(e.message, "blend space grid: 10100000 points is too many");
    g.counts[1] = 100; /* exactly the limit: counted */
    PM_ASSERT_OK(pm_blend_space_grid(NULL, 0, &n, s, &g, &e));
    assert_true(n > 0);
    g.counts[0] = 100001; /* one axis past its limit, however few points in all */
    g.counts[1] = 1;
    assert_int_equal(pm_blend_space_grid(NULL, 0, &n, s, &g, &e), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.message, "blend space grid: 100001 points on axis x is outside 1..100000");
    /* One point per axis: the middle of the ranges. */
    g.counts[0] = 1;
    g.include_outside = 1;
    float lo[2], hi[2];
    for (int d = 0; d < 2; d++) PM_ASSERT_OK(pm_blend_space_axis_range(&lo[d], &hi[d], s, d, NULL));
    PM_ASSERT_OK(pm_blend_space_grid(out, 10, &n, s, &g, NULL));
    assert_int_equal(n, 1);
    for (int d = 0; d < 2; d++) assert_true(fabsf(out[d] - 0.5f * (lo[d] + hi[d])) < 1e-6f);
    pm_blend_space_destroy(s);
    /* A failed create leaves *out NULL, whatever it held. */
    s = (pm_blend_space *)(void *)&g;
    assert_int_equal(pm_blend_space_create(&s, NULL, &e), PM_ERR_INVALID_ARGUMENT);
    assert_null(s);
    pm_test_blend_fixture_free(&fx);
}

/* A looping and a one-shot sample: the bake runs to phase 1, where the looping sample is at its
 * cycle's end (its end key), so the root carries on instead of snapping back on the last frame. */
static void test_bake_mixed_looping(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 3);
    fx.clips[2].looping = 0;
    float pts[3][2] = {{0, 0}, {1, 0}, {0, 1}};
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, pts, NULL, 3, NULL));
    float mid[2] = {0.3f, 0.3f};
    pm_clip baked;
    PM_ASSERT_OK(pm_blend_space_bake(&baked, s, mid, 30.0f, NULL));
    assert_false(baked.looping);
    int n = baked.frame_count;
    assert_true(n > 10);
    /* Root z advances by about the same step every frame, the last one included. */
    float first = baked.translations[JOINTS].z - baked.translations[0].z;
    assert_true(first > 0.0f);
    for (int f = 1; f < n; f++) {
        float step = baked.translations[(size_t)f * JOINTS].z - baked.translations[(size_t)(f - 1) * JOINTS].z;
        if (!(step > 0.5f * first && step < 1.5f * first))
            fail_msg("root step %g at frame %d of %d (first step %g)", (double)step, f, n, (double)first);
    }
    pm_clip_destroy(&baked);
    /* The job at phase 1 on a looping sample: its end key, the cycle's full displacement (the
     * root's z runs 0 .. 2 per cycle), not frame 0. */
    pm_test_blend_poses poses;
    pm_test_blend_poses_alloc(&poses, JOINTS);
    pm_blend_space_job job = pm_test_blend_job(s, pts[1], 1.0f, &poses);
    job.scratch_count = pm_blend_space_scratch_count(s);
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    assert_true(fabsf(pm_pose_translation(poses.out, 0).z - 2.0f) < 1e-5f);
    job.phase = 1.25f; /* beyond the end it wraps */
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    assert_true(fabsf(pm_pose_translation(poses.out, 0).z - 0.5f) < 0.05f);
    pm_test_blend_poses_free(&poses);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

/* The scratch the job needs: max_weights poses, each rounded up to whole groups. With 5 joints
 * pm_pose_alloc(5 * 3) holds 4 groups where 6 are needed. */
static void test_scratch_count(void **state) {
    (void)state;
    fixture fx;
    memset(&fx, 0, sizeof fx);
    pm_test_blend_skeleton(&fx.sk, 5);
    fx.count = 3;
    for (int i = 0; i < 3; i++) pm_test_blend_swing_clip(&fx.clips[i], &fx.sk, 20, 0.5f, (float)i);
    float pts[3][2] = {{0, 0}, {1, 0}, {0, 1}};
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, pts, NULL, 3, NULL));
    assert_int_equal(pm_blend_space_scratch_count(s), 3 * pm_soa_count(5));
    assert_int_equal(pm_blend_space_scratch_count(NULL), 0);
    assert_true(pm_soa_count(5 * pm_blend_space_max_weights(s)) < pm_blend_space_scratch_count(s));
    int need = pm_blend_space_scratch_count(s);
    pm_soa_transform *scratch = aligned_alloc(16, sizeof(pm_soa_transform) * (size_t)need), *out = pm_pose_alloc(5, NULL);
    assert_non_null(scratch);
    float p[2] = {0.25f, 0.25f};
    pm_blend_space_job job = pm_default_blend_space_job();
    job.space = s;
    job.params = p;
    job.scratch = scratch;
    job.scratch_count = need - 1;
    job.output = out;
    job.output_count = pm_soa_count(5);
    pm_error e;
    assert_int_equal(pm_blend_space_job_validate(&job, &e), PM_ERR_MISMATCH);
    assert_non_null(strstr(e.message, "scratch holds 5 groups, 6 are needed"));
    job.scratch_count = need;
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    /* The output inside the scratch: refused whatever the parameters (a blend of three samples
     * and a query on one alike). */
    job.output = scratch + 1;
    assert_int_equal(pm_blend_space_job_validate(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "output overlaps the scratch"));
    p[0] = 0.0f;
    p[1] = 0.0f;
    assert_int_equal(pm_blend_space_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    job.output = out;
    free(scratch);
    pm_pose_free(out, NULL);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

/* A baked clip says where its samples came from: their up axis and units. */
static void test_bake_keeps_source_axes_and_units(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 3);
    for (int i = 0; i < 3; i++) {
        fx.clips[i].source_up = PM_UP_Z;
        fx.clips[i].unit_scale = 0.01f;
    }
    float pts[3][2] = {{0, 0}, {1, 0}, {0, 1}}, mid[2] = {0.3f, 0.3f};
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, pts, NULL, 3, NULL));
    pm_clip baked;
    PM_ASSERT_OK(pm_blend_space_bake(&baked, s, mid, 30.0f, NULL));
    assert_int_equal(baked.source_up, PM_UP_Z);
    assert_true(baked.unit_scale == 0.01f);
    pm_clip_destroy(&baked);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

/* Any finite phase gives a finite pose, on one-shot samples (clamped beyond their end) and without
 * sync (where looping samples wrap) as on synced loops: a phase times a duration may overflow a
 * float, the sampling must not see that. */
static void test_extreme_phases(void **state) {
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        fixture fx;
        pm_test_blend_fixture_swing(&fx, JOINTS, 3);
        for (int i = 0; i < 3; i++) fx.clips[i].looping = variant != 0;
        float pts[3][2] = {{0, 0}, {1, 0}, {0, 1}};
        pm_blend_sample_def samples[3];
        pm_test_blend_samples(samples, &fx, pts, 3);
        pm_blend_space_def def = pm_test_blend_def(samples, 3, 2);
        if (variant == 2) def.sync = PM_BLEND_SYNC_NONE;
        pm_blend_space *s;
        PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
        pm_test_blend_poses poses;
        pm_test_blend_poses_alloc(&poses, JOINTS);
        float mid[2] = {0.25f, 0.25f};
        const float phases[] = {3e38f, -3e38f, 1e20f, 12345.678f, -0.5f};
        for (int k = 0; k < 5; k++) {
            pm_blend_space_job job = pm_test_blend_job(s, mid, phases[k], &poses);
            pm_error e;
            if (pm_blend_space_job_run(&job, &e) != PM_OK) fail_msg("variant %d, phase %g: %s", variant, (double)phases[k], e.message);
            pm_quat q[JOINTS];
            pm_vec3 t[JOINTS];
            PM_ASSERT_OK(pm_pose_to_aos(q, t, JOINTS, poses.out, NULL));
            for (int j = 0; j < JOINTS; j++)
                assert_true(isfinite(q[j].x + q[j].y + q[j].z + q[j].w + t[j].x + t[j].y + t[j].z));
        }
        pm_test_blend_poses_free(&poses);
        pm_blend_space_destroy(s);
        pm_test_blend_fixture_free(&fx);
    }
}

/* Listing the samples in another order changes nothing baked: skeleton (rest offsets), default
 * rate and frames, even when the samples' rates and offsets differ. */
static void test_bake_order_independent(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 3);
    fx.clips[1].frame_time = 1.0f / 60.0f;
    fx.clips[2].skeleton.rest_translations[1].y = 0.45f;
    float pts[3][2] = {{0, 0}, {1, 0}, {0, 1}};
    static const int orders[2][3] = {{0, 1, 2}, {2, 1, 0}};
    pm_clip baked[2];
    float mid[2] = {0.3f, 0.3f};
    for (int o = 0; o < 2; o++) {
        pm_blend_space *s;
        PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, pts, orders[o], 3, NULL));
        PM_ASSERT_OK(pm_blend_space_bake(&baked[o], s, mid, 0.0f, NULL));
        /* The default rate: the highest among the blended samples (60 fps). */
        assert_true(fabsf(1.0f / baked[o].frame_time - 60.0f) < 1.0f);
        /* On a sample: that sample's own rate. */
        pm_clip one;
        PM_ASSERT_OK(pm_blend_space_bake(&one, s, pts[0], 0.0f, NULL));
        assert_true(one.frame_time == fx.clips[0].frame_time && one.frame_count == fx.clips[0].frame_count);
        pm_clip_destroy(&one);
        pm_blend_space_destroy(s);
    }
    assert_int_equal(baked[0].frame_count, baked[1].frame_count);
    assert_true(baked[0].frame_time == baked[1].frame_time);
    size_t values = (size_t)baked[0].frame_count * JOINTS;
    assert_memory_equal(baked[0].rotations, baked[1].rotations, values * sizeof(pm_quat));
    assert_memory_equal(baked[0].translations, baked[1].translations, values * sizeof(pm_vec3));
    assert_memory_equal(baked[0].skeleton.rest_translations, baked[1].skeleton.rest_translations, JOINTS * sizeof(pm_vec3));
    /* The sample with the smallest coordinates (0, 0) gives the skeleton. */
    assert_true(baked[0].skeleton.rest_translations[1].y == fx.clips[0].skeleton.rest_translations[1].y);
    for (int o = 0; o < 2; o++) pm_clip_destroy(&baked[o]);
    pm_test_blend_fixture_free(&fx);
}

/* The job names what is wrong with it: a parameter that is not finite (by axis), an
 * unknown rotation blend, an output short of the space's joints, buffers not 16-byte aligned. */
static void test_job_errors(void **state) {
    (void)state;
    fixture fx;
    pm_blend_space *s = pm_test_blend_triangle_space(&fx, JOINTS);
    pm_test_blend_poses poses;
    pm_test_blend_poses_alloc(&poses, JOINTS);
    int soa = poses.soa;
    pm_soa_transform *scratch = poses.scratch, *out = poses.out;
    float p[2] = {0.25f, 0.25f};
    pm_blend_space_job job = pm_test_blend_job(s, p, 0.0f, &poses);
    job.scratch_count = pm_blend_space_scratch_count(s);
    PM_ASSERT_OK(pm_blend_space_job_validate(&job, NULL));
    pm_error e;
    p[1] = NAN;
    assert_int_equal(pm_blend_space_job_run(&job, &e), PM_ERR_NUMERIC);
    assert_string_equal(e.message, "blend space job: parameter y is not finite");
    p[1] = 0.25f;
    job.phase = NAN;
    assert_int_equal(pm_blend_space_job_run(&job, &e), PM_ERR_NUMERIC);
    assert_string_equal(e.message, "blend space job: phase is not finite");
    job.phase = INFINITY;
    assert_int_equal(pm_blend_space_job_validate(&job, &e), PM_ERR_NUMERIC);
    job.phase = 0.0f;
    job.rotation = (pm_rotation_blend)7;
    assert_int_equal(pm_blend_space_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.message, "blend space job: unknown rotation blend 7");
    job.rotation = PM_ROTATION_SLERP;
    job.output_count = soa - 1;
    assert_int_equal(pm_blend_space_job_run(&job, &e), PM_ERR_MISMATCH);
    assert_string_equal(e.message, "blend space job: output holds 0 groups, the space's 4 joints need 1");
    job.output_count = soa; /* (so that only the missing output is wrong) */
    job.output = NULL;
    assert_int_equal(pm_blend_space_job_run(&job, &e), PM_ERR_MISMATCH);
    assert_string_equal(e.message, "blend space job: output holds 0 groups, the space's 4 joints need 1");
    job.output = (pm_soa_transform *)((char *)out + 4);
    job.output_count = soa;
    assert_int_equal(pm_blend_space_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "blend space job: output or scratch"));
    job.output = out;
    job.scratch = (pm_soa_transform *)((char *)scratch + 8);
    assert_int_equal(pm_blend_space_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    job.scratch = scratch;
    PM_ASSERT_OK(pm_blend_space_job_run(&job, &e));
    pm_test_blend_poses_free(&poses);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

/* A bake longer than a clip may be is refused by name before anything is allocated: a sample
 * of two frames a million seconds apart, at 30 fps. */
static void test_bake_frame_limit(void **state) {
    (void)state;
    pm_skeleton sk;
    pm_test_blend_skeleton(&sk, JOINTS);
    pm_clip slow;
    pm_test_blend_swing_clip(&slow, &sk, 2, 0.5f, 0.0f);
    slow.frame_time = 1e6f;
    slow.looping = 0;
    pm_blend_sample_def sample = pm_default_blend_sample_def();
    sample.clip = &slow;
    pm_blend_space_def def = pm_test_blend_def(&sample, 1, 1);
    def.name = "glacial";
    pm_blend_space *s;
    PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
    float at = 0.0f;
    pm_clip baked;
    pm_error e;
    assert_int_equal(pm_blend_space_bake(&baked, s, &at, 30.0f, &e), PM_ERR_LIMIT);
    assert_string_equal(e.message, "blend space 'glacial': 30000001 frames at 30 fps exceeds the limit of 10000000");
    assert_null(baked.rotations);
    /* At the slowest rate a bake takes it fits: a frame every 1000 s. */
    PM_ASSERT_OK(pm_blend_space_bake(&baked, s, &at, 0.001f, NULL));
    assert_int_equal(baked.frame_count, 1001);
    pm_clip_destroy(&baked);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&slow);
    pm_skeleton_destroy(&sk);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phase_sync),
        cmocka_unit_test(test_bake),
        cmocka_unit_test(test_grid),
        cmocka_unit_test(test_bake_mixed_looping),
        cmocka_unit_test(test_scratch_count),
        cmocka_unit_test(test_bake_keeps_source_axes_and_units),
        cmocka_unit_test(test_extreme_phases),
        cmocka_unit_test(test_bake_order_independent),
        cmocka_unit_test(test_job_errors),
        cmocka_unit_test(test_bake_frame_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
