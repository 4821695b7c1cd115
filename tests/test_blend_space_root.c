/* Blend-space root motion (src/blend_space_root.c) on walks whose answers are known by
 * construction: start headings blended the short way round across the +-180 degree seam, and a
 * one-shot that stands at its end while a looping sample plays its later cycles, a blend of
 * one-shots that stands at its ends outside phases 0 to 1, spins, and root motion shared between
 * the joints that carry it in different samples.
 * (Real turns and curves: test_blend_mocap.c; feet sync: test_blend_sync.c.) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "blend_support.h"

enum { HIPS, LUP, LFOOT, RUP, RFOOT, JOINTS };

/* A walk of `strides` 40-frame strides at 30 fps, 1 m per stride, starting along +Z turned by
 * `yaw` about the vertical (every frame's hips rotated and moved with it), its heading turning by
 * `turn` radians a stride towards +X (on a circle; 0: on a line). */
static void make_curve(pm_clip *c, float yaw, int strides, int looping, float turn) {
    pm_skeleton s;
    pm_test_walker(&s, 0);
    const int n = 40 * strides;
    PM_ASSERT_OK(pm_clip_create(c, &s, n, 1.0f / 30.0f, NULL, NULL));
    pm_skeleton_destroy(&s);
    c->looping = looping;
    for (int f = 0; f < n; f++) {
        float u = fmodf((float)f / 40.0f, 1.0f), t = (float)f / 40.0f, a = turn * t;
        pm_quat heading = pm_quat_from_yaw(yaw + a);
        /* along +Z turning towards +X: the arc of radius 1 / turn, or the line when it is 0 */
        pm_vec3 along = fabsf(turn) > 0.0f ? pm_vec3_make((1.0f - cosf(a)) / turn, 1.0f, sinf(a) / turn)
                                           : pm_vec3_make(0.0f, 1.0f, t);
        c->translations[(size_t)f * JOINTS + LFOOT].y += u < 0.5f ? 0.0f : 0.15f * sinf(2.0f * PM_PI * (u - 0.5f));
        c->translations[(size_t)f * JOINTS + RFOOT].y += u >= 0.5f ? 0.0f : 0.15f * sinf(2.0f * PM_PI * u);
        c->translations[(size_t)f * JOINTS + HIPS] = pm_quat_rotate(pm_quat_from_yaw(yaw), along);
        c->rotations[(size_t)f * JOINTS + HIPS] = heading;
    }
}

static void make_walk_of(pm_clip *c, float yaw, int strides, int looping) { make_curve(c, yaw, strides, looping, 0.0f); }
static void make_walk(pm_clip *c, float yaw) { make_walk_of(c, yaw, 1, 1); }

/* A 1D space of a at 0 and b at 1, headings as made. */
static pm_blend_space *two_sample_space(const pm_clip *a, const pm_clip *b, pm_blend_sync sync) {
    return pm_test_blend_pair(a, b, sync, PM_BLEND_ALIGN_NONE);
}

/* The hips' model-space placement of the space's blend at `param` and `phase`. */
static pm_transform hips_at(const pm_blend_space *s, float param, float phase) {
    pm_test_blend_poses p;
    pm_test_blend_poses_alloc(&p, JOINTS);
    pm_blend_space_job job = pm_test_blend_job(s, &param, phase, &p);
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    pm_transform t = {pm_pose_rotation(p.out, HIPS), pm_pose_translation(p.out, HIPS)};
    pm_test_blend_poses_free(&p);
    return t;
}

/* Samples 20 degrees apart blend their headings the short way round, wherever the +-180 degree
 * seam of the heading the space reads falls (which of the hips' level axes it reads is the
 * space's choice): facing 170 and -170 degrees, halfway between them the blend faces 180 degrees,
 * not 0; and 80 and 100 degrees give 90 whichever axis is read. */
static void test_start_headings_the_short_way(void **state) {
    (void)state;
    const float deg = PM_PI / 180.0f, firsts[2] = {170.0f, 80.0f};
    for (int pair = 0; pair < 2; pair++) {
        pm_clip a, b;
        make_walk(&a, firsts[pair] * deg);
        make_walk(&b, (firsts[pair] + 20.0f) * deg);
        pm_blend_space *s = two_sample_space(&a, &b, PM_BLEND_SYNC_PHASE);
        for (int k = 0; k <= 4; k++) {
            float param = 0.25f * (float)k, yaw = (firsts[pair] + 20.0f * param) * deg;
            pm_transform h = hips_at(s, param, 0.1f);
            pm_vec3 forward = pm_quat_rotate(h.rotation, pm_vec3_make(0, 0, 1));
            if (!(fabsf(forward.x - sinf(yaw)) < 1e-3f && fabsf(forward.z - cosf(yaw)) < 1e-3f))
                fail_msg("at %g the hips face (%g, %g), expected (%g, %g)", (double)param, (double)forward.x,
                         (double)forward.z, (double)sinf(yaw), (double)cosf(yaw));
        }
        pm_blend_space_destroy(s);
        pm_clip_destroy(&a);
        pm_clip_destroy(&b);
    }
}

/* A looping walk of two strides (two gait cycles under feet sync, so the blend's phases wrap at 2)
 * blended half and half with a one-shot walk: in cycle 0 the blend moves by the mean of the loop's
 * first cycle and the one-shot's whole clip; in cycle 1 the one-shot stands at its end, so the
 * blend moves by half the loop's second cycle only; the one-shot alone stays where it ended. */
static void test_one_shot_stands_after_its_cycle(void **state) {
    (void)state;
    pm_clip loop, once;
    make_walk_of(&loop, 0.0f, 2, 1);
    make_walk_of(&once, 0.0f, 2, 0);
    pm_blend_space *s = two_sample_space(&loop, &once, PM_BLEND_SYNC_FEET);
    assert_int_equal(pm_blend_space_sample_cycles(s, 0), 2);
    assert_int_equal(pm_blend_space_sample_cycles(s, 1), 1);
    assert_int_equal(pm_blend_space_phase_wrap(s), 2);
    float loop_z[3], mix_z[3], once_z[3];
    for (int c = 0; c <= 2; c++) {
        loop_z[c] = hips_at(s, 0.0f, (float)c).translation.z;
        mix_z[c] = hips_at(s, 0.5f, (float)c).translation.z;
        once_z[c] = hips_at(s, 1.0f, (float)c).translation.z;
    }
    const float once_move = 79.0f / 40.0f; /* its first frame to its last */
    assert_float_equal(loop_z[1] - loop_z[0], 1.0f, 1e-3);
    assert_float_equal(loop_z[2] - loop_z[1], 1.0f, 1e-3);
    assert_float_equal(once_z[1] - once_z[0], once_move, 1e-3);
    assert_float_equal(once_z[2], once_z[1], 1e-5);
    assert_float_equal(hips_at(s, 1.0f, 1.5f).translation.z, once_z[1], 1e-5);
    assert_float_equal(mix_z[1] - mix_z[0], 0.5f * (1.0f + once_move), 1e-3);
    assert_float_equal(mix_z[2] - mix_z[1], 0.5f, 1e-3);
    assert_float_equal(hips_at(s, 0.5f, 1.5f).translation.z - mix_z[1], 0.25f, 1e-3);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&loop);
    pm_clip_destroy(&once);
}

/* A blend of one-shots alone stands at its start before phase 0 and at its end after phase 1,
 * as each of its samples does, also when they turn at different rates (where the blended turn of
 * the slices before a wrapped phase's slice, undone again, would not cancel). */
static void test_one_shots_clamp_outside_their_cycle(void **state) {
    (void)state;
    pm_clip a, b;
    make_curve(&a, 0.0f, 2, 0, 0.0f);
    make_curve(&b, 0.3f, 1, 0, 1.0f);
    pm_blend_space *s = two_sample_space(&a, &b, PM_BLEND_SYNC_FEET);
    const float phases[4][2] = {{-0.3f, 0.0f}, {-1.7f, 0.0f}, {1.4f, 1.0f}, {2.6f, 1.0f}};
    for (int k = 0; k < 4; k++) {
        pm_transform h = hips_at(s, 0.5f, phases[k][0]), at = hips_at(s, 0.5f, phases[k][1]);
        if (pm_vec3_length(pm_vec3_sub(h.translation, at.translation)) > 1e-5f)
            fail_msg("at phase %g the hips are at (%g, %g), at phase %g at (%g, %g)", (double)phases[k][0],
                     (double)h.translation.x, (double)h.translation.z, (double)phases[k][1],
                     (double)at.translation.x, (double)at.translation.z);
    }
    pm_blend_space_destroy(s);
    pm_clip_destroy(&a);
    pm_clip_destroy(&b);
}

/* Two copies of a walk that spins (9 radians a stride of 1.3 s: three slices of 3 radians each)
 * blend to the walk itself, halfway between them, in both of its cycles: the slices' turns are
 * composed with accurate sines and cosines at any size (a series kept past its range is 1 mm off
 * here). */
static void test_fast_turns_compose(void **state) {
    (void)state;
    pm_clip a, b;
    make_curve(&a, 0.0f, 2, 1, 9.0f);
    make_curve(&b, 0.0f, 2, 1, 9.0f);
    pm_blend_space *s = two_sample_space(&a, &b, PM_BLEND_SYNC_FEET);
    assert_int_equal(pm_blend_space_phase_wrap(s), 2);
    for (int k = 1; k < 16; k++) {
        float phase = 0.125f * (float)k;
        pm_transform h = hips_at(s, 0.5f, phase), clip = hips_at(s, 0.0f, phase);
        if (pm_vec3_length(pm_vec3_sub(h.translation, clip.translation)) > 1e-4f)
            fail_msg("at phase %g the blend's hips are at (%g, %g), the walk's at (%g, %g)", (double)phase,
                     (double)h.translation.x, (double)h.translation.z, (double)clip.translation.x,
                     (double)clip.translation.z);
    }
    pm_blend_space_destroy(s);
    pm_clip_destroy(&a);
    pm_clip_destroy(&b);
}

/* The same straight walk (1 m a stride along +Z) on a skeleton with a root joint above the hips,
 * its motion carried by the root (the hips still under it) or by the hips (the root standing at
 * the origin). */
static void make_rooted_walk(pm_clip *c, int root_carries) {
    enum { ROOT, R_HIPS, R_LUP, R_LFOOT, R_RUP, R_RFOOT, R_JOINTS };
    pm_skeleton sk;
    pm_test_walker(&sk, 1);
    const int n = 80;
    PM_ASSERT_OK(pm_clip_create(c, &sk, n, 1.0f / 30.0f, NULL, NULL));
    pm_skeleton_destroy(&sk);
    c->looping = 1;
    for (int f = 0; f < n; f++) {
        float u = fmodf((float)f / 40.0f, 1.0f), t = (float)f / 40.0f;
        pm_vec3 *tr = c->translations + (size_t)f * R_JOINTS;
        tr[R_LFOOT].y += u < 0.5f ? 0.0f : 0.15f * sinf(2.0f * PM_PI * (u - 0.5f));
        tr[R_RFOOT].y += u >= 0.5f ? 0.0f : 0.15f * sinf(2.0f * PM_PI * u);
        if (root_carries)
            tr[ROOT].z = t;
        else
            tr[R_HIPS].z = t;
    }
}

/* Samples whose root motion two different joints carry, blended: the motion is shared between
 * the root and the hips by the samples' weights, and the hips walk as both samples do - 1 m a
 * stride at every weight, the root taking the root-carried samples' share of it. */
static void test_carriers_share_the_motion(void **state) {
    (void)state;
    pm_clip by_root, by_hips;
    make_rooted_walk(&by_root, 1);
    make_rooted_walk(&by_hips, 0);
    pm_blend_space *s = two_sample_space(&by_root, &by_hips, PM_BLEND_SYNC_FEET);
    pm_test_blend_poses p;
    pm_test_blend_poses_alloc(&p, 6);
    for (int k = 0; k <= 4; k++) {
        float param = 0.25f * (float)k, hips_z[2], root_z[2];
        for (int c = 0; c < 2; c++) {
            pm_blend_space_job job = pm_test_blend_job(s, &param, 0.5f + (float)c, &p);
            PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
            root_z[c] = pm_pose_translation(p.out, 0).z;
            hips_z[c] = root_z[c] + pm_pose_translation(p.out, 1).z;
        }
        /* a stride later, the hips are 1 m on, the root by its share of it */
        if (fabsf(hips_z[1] - hips_z[0] - 1.0f) > 1e-3f || fabsf(root_z[1] - root_z[0] - (1.0f - param)) > 1e-3f)
            fail_msg("at %g the hips moved %g and the root %g in a stride, expected 1 and %g", (double)param,
                     (double)(hips_z[1] - hips_z[0]), (double)(root_z[1] - root_z[0]), (double)(1.0f - param));
    }
    pm_blend_space_destroy(s);
    /* Two root-carried samples and a hips-carried one in 2D: the root takes the sum of the first
     * two's weights. */
    pm_blend_sample_def samples[3] = {pm_default_blend_sample_def(), pm_default_blend_sample_def(),
                                      pm_default_blend_sample_def()};
    const char *names[3] = {"root_a", "root_b", "hips"};
    for (int i = 0; i < 3; i++) {
        samples[i].clip = i < 2 ? &by_root : &by_hips;
        samples[i].name = names[i];
        samples[i].params[0] = i == 1 ? 1.0f : 0.0f;
        samples[i].params[1] = i == 2 ? 1.0f : 0.0f;
    }
    pm_blend_space_def def = pm_default_blend_space_def();
    def.samples = samples, def.sample_count = 3, def.dimensions = 2, def.sync = PM_BLEND_SYNC_FEET;
    def.align = PM_BLEND_ALIGN_NONE;
    PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
    const float params[2] = {0.25f, 0.25f}; /* weights 0.5, 0.25 and 0.25 */
    float hips_z[2], root_z[2];
    for (int c = 0; c < 2; c++) {
        pm_blend_space_job job = pm_test_blend_job(s, params, 0.5f + (float)c, &p);
        PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
        root_z[c] = pm_pose_translation(p.out, 0).z;
        hips_z[c] = root_z[c] + pm_pose_translation(p.out, 1).z;
    }
    assert_float_equal(hips_z[1] - hips_z[0], 1.0f, 1e-3);
    assert_float_equal(root_z[1] - root_z[0], 0.75f, 1e-3);
    pm_test_blend_poses_free(&p);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&by_root);
    pm_clip_destroy(&by_hips);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start_headings_the_short_way),
        cmocka_unit_test(test_one_shot_stands_after_its_cycle),
        cmocka_unit_test(test_one_shots_clamp_outside_their_cycle),
        cmocka_unit_test(test_fast_turns_compose),
        cmocka_unit_test(test_carriers_share_the_motion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
