/* Blend-space time synchronisation on feet: looping cycles that start at different points of the
 * gait are restarted at their left foot's touchdown, so a blend keeps its feet in step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

enum { HIPS, LUP, LFOOT, RUP, RFOOT, JOINTS, FRAMES = 40 };

/* One looping stride of FRAMES frames, started `start` frames into it: each foot lifts (a sine
 * arch up to 15 cm) during half the stride, the right one half a stride after the left; the root
 * walks 1 m per stride. The left foot touches down at stride frame 0. */
static void make_stride(pm_clip *c, int start) {
    pm_skeleton s;
    PM_ASSERT_OK(pm_skeleton_create(&s, JOINTS, NULL, NULL));
    const char *names[JOINTS] = {"Hips", "LeftUpLeg", "LeftFoot", "RightUpLeg", "RightFoot"};
    const int parents[JOINTS] = {-1, HIPS, LUP, HIPS, RUP};
    const pm_vec3 off[JOINTS] = {{0, 1, 0}, {0.1f, 0, 0}, {0, -0.9f, 0}, {-0.1f, 0, 0}, {0, -0.9f, 0}};
    for (int j = 0; j < JOINTS; j++) {
        PM_ASSERT_OK(pm_skeleton_set_name(&s, j, names[j], NULL));
        s.parents[j] = parents[j];
        s.rest_translations[j] = off[j];
    }
    PM_ASSERT_OK(pm_clip_create(c, &s, FRAMES, 1.0f / 30.0f, NULL, NULL));
    pm_skeleton_destroy(&s);
    c->looping = 1;
    for (int f = 0; f < FRAMES; f++) {
        int k = (f + start) % FRAMES;
        float u = (float)k / FRAMES; /* stride phase */
        float left = u < 0.5f ? 0.0f : 0.15f * sinf(2.0f * PM_PI * (u - 0.5f));
        float right = u >= 0.5f ? 0.0f : 0.15f * sinf(2.0f * PM_PI * u);
        for (int j = 0; j < JOINTS; j++) c->translations[(size_t)f * JOINTS + j] = off[j];
        c->translations[(size_t)f * JOINTS + HIPS] = pm_vec3_make(0.0f, 1.0f, (float)(f + start) / FRAMES);
        c->translations[(size_t)f * JOINTS + LFOOT].y += left;
        c->translations[(size_t)f * JOINTS + RFOOT].y += right;
    }
}

/* Largest difference of the left foot's height between a 50/50 blend of the two cycles and the
 * first cycle, over one baked cycle. */
static float blend_error(pm_blend_sync sync) {
    pm_clip a, b;
    make_stride(&a, 0);
    make_stride(&b, 13);
    pm_blend_sample_def samples[2] = {pm_default_blend_sample_def(), pm_default_blend_sample_def()};
    samples[0].clip = &a, samples[0].name = "a";
    samples[1].clip = &b, samples[1].name = "b", samples[1].params[0] = 1.0f;
    pm_blend_space_def def = pm_default_blend_space_def();
    def.samples = samples, def.sample_count = 2, def.sync = sync;
    pm_blend_space *s = NULL;
    PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
    float p0 = 0.0f, half = 0.5f;
    pm_clip ref, mid;
    PM_ASSERT_OK(pm_blend_space_bake(&ref, s, &p0, 30.0f, NULL));
    PM_ASSERT_OK(pm_blend_space_bake(&mid, s, &half, 30.0f, NULL));
    assert_int_equal(ref.frame_count, mid.frame_count);
    pm_transform wr[JOINTS], wm[JOINTS];
    float worst = 0.0f;
    for (int f = 0; f < ref.frame_count; f++) {
        PM_ASSERT_OK(pm_clip_frame_world(wr, &ref, f, NULL));
        PM_ASSERT_OK(pm_clip_frame_world(wm, &mid, f, NULL));
        worst = fmaxf(worst, fabsf(wr[LFOOT].translation.y - wm[LFOOT].translation.y));
    }
    pm_clip_destroy(&ref);
    pm_clip_destroy(&mid);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&a);
    pm_clip_destroy(&b);
    return worst;
}

static void test_feet_sync_restarts_cycles(void **state) {
    (void)state;
    assert_int_equal(pm_default_blend_space_def().sync, PM_BLEND_SYNC_FEET);
    /* Started 13 frames apart, phase sync averages a lifted foot with a planted one. */
    float phase = blend_error(PM_BLEND_SYNC_PHASE), feet = blend_error(PM_BLEND_SYNC_FEET);
    printf("left foot height, 50/50 blend against one cycle: phase sync %.4f m, feet sync %.4f m\n", (double)phase,
           (double)feet);
    assert_true(phase > 0.05f);
    assert_true(feet < 0.005f);
}

/* Without phase sync, looping samples of other lengths do not close the blend's cycle: it is
 * baked as a one-shot; samples of one length still loop. */
static void test_sync_none_loops_only_when_lengths_agree(void **state) {
    (void)state;
    pm_clip a, b, shorter;
    make_stride(&a, 0);
    make_stride(&b, 5);
    PM_ASSERT_OK(pm_clip_trim(&shorter, &b, 0, 30, NULL));
    shorter.looping = 1;
    for (int k = 0; k < 2; k++) {
        pm_blend_sample_def samples[2] = {pm_default_blend_sample_def(), pm_default_blend_sample_def()};
        samples[0].clip = &a, samples[0].name = "a";
        samples[1].clip = k ? &shorter : &b, samples[1].name = "b", samples[1].params[0] = 1.0f;
        pm_blend_space_def def = pm_default_blend_space_def();
        def.samples = samples, def.sample_count = 2, def.sync = PM_BLEND_SYNC_NONE;
        pm_blend_space *s = NULL;
        PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
        float half = 0.5f;
        pm_clip out;
        PM_ASSERT_OK(pm_blend_space_bake(&out, s, &half, 30.0f, NULL));
        assert_int_equal(out.looping, k ? 0 : 1);
        pm_clip_destroy(&out);
        pm_blend_space_destroy(s);
    }
    pm_clip_destroy(&shorter);
    pm_clip_destroy(&a);
    pm_clip_destroy(&b);
}

/* A looping stride on an arc (the hips turn half a radian per stride) restarted at its touchdown
 * goes on turning smoothly: the moved frames are carried through the cycle's turn, not only its
 * displacement. */
static void test_feet_sync_keeps_a_turning_loop_smooth(void **state) {
    (void)state;
    pm_clip c;
    make_stride(&c, 13);
    const float turn = 0.5f, radius = 1.0f / turn;
    for (int f = 0; f < FRAMES; f++) {
        float a = turn * (float)(f + 13) / FRAMES;
        c.translations[(size_t)f * JOINTS + HIPS] = pm_vec3_make(radius * (1.0f - cosf(a)), 1.0f, radius * sinf(a));
        c.rotations[(size_t)f * JOINTS + HIPS] = pm_quat_from_yaw(a);
    }
    pm_blend_sample_def sample = pm_default_blend_sample_def();
    sample.clip = &c, sample.name = "arc";
    pm_blend_space_def def = pm_default_blend_space_def();
    def.samples = &sample, def.sample_count = 1, def.align = PM_BLEND_ALIGN_NONE;
    pm_blend_space *s = NULL;
    PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
    float p = 0.0f;
    pm_clip out;
    PM_ASSERT_OK(pm_blend_space_bake(&out, s, &p, 30.0f, NULL));
    float prev = 0.0f, worst_turn = 0.0f, worst_move = 0.0f;
    pm_vec3 last = pm_vec3_zero();
    for (int f = 0; f < out.frame_count; f++) {
        pm_quat q = out.rotations[(size_t)f * JOINTS + HIPS];
        float yaw = 2.0f * atan2f(q.y, q.w);
        pm_vec3 t = out.translations[(size_t)f * JOINTS + HIPS];
        if (f > 0) {
            float d = fabsf(yaw - prev);
            worst_turn = fmaxf(worst_turn, fminf(d, 2.0f * PM_PI - d));
            worst_move = fmaxf(worst_move, pm_vec3_length(pm_vec3_sub(t, last)));
        }
        prev = yaw;
        last = t;
    }
    /* A frame's turn is half a radian / 40 (0.7 degrees), its step 2.5 cm. */
    assert_true(worst_turn < 0.02f);
    assert_true(worst_move < 0.03f);
    pm_clip_destroy(&out);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_feet_sync_restarts_cycles),
        cmocka_unit_test(test_sync_none_loops_only_when_lengths_agree),
        cmocka_unit_test(test_feet_sync_keeps_a_turning_loop_smooth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
