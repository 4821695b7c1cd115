/* Root ("simulation bone") smoothing, facing and loop ends, and resampling, against references
 * computed here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* The root's position smoothing is a Gaussian of sigma = position_smoothing * fps frames, read over
 * +-ceil(3 sigma) frames: on a hips sway of a 6-frame period (whole windows, mid-clip) the root is
 * that weighted mean of the sway, down to a sigma of one frame (below 0.05 frames: none). */
static void test_root_smoothing_is_the_gaussian(void **state) {
    (void)state;
    const float sigmas[] = {1.0f, 1.5f, 2.2f};
    for (int s = 0; s < 3; s++) {
        enum { frames = 60 };
        const float fps = 30.0f;
        pm_clip c;
        pm_test_biped_clip(&c, frames, 1.0f / fps);
        float sway[frames];
        for (int f = 0; f < frames; f++) {
            sway[f] = 0.05f * cosf(2.0f * PM_PI * (float)f / 6.0f);
            c.translations[(size_t)f * 9] = pm_vec3_make(sway[f], 0.95f, 1.2f * (float)f / fps);
        }
        pm_root_def def = pm_default_root_def();
        def.position_smoothing = sigmas[s] / fps;
        def.facing_smoothing = 0.0f;
        pm_root_track track;
        PM_ASSERT_OK(pm_root_track_extract(&track, &c, &def, NULL, NULL));
        const double sigma = (double)(def.position_smoothing * (1.0f / c.frame_time));
        const int r = (int)ceil(3.0 * sigma);
        for (int f = r; f < frames - r; f++) {
            double acc = 0.0, wsum = 0.0;
            for (int k = -r; k <= r; k++) {
                double w = exp(-(double)(k * k) / (2.0 * sigma * sigma));
                acc += w * sway[f + k];
                wsum += w;
            }
            float want = (float)(acc / wsum), got = track.frames[f].translation.x;
            if (fabsf(got - want) > 2e-5f)
                fail_msg("sigma %g frames, frame %d: root x %g, the Gaussian mean of the sway %g (the sway %g)",
                         (double)sigmas[s], f, (double)got, (double)want, (double)sway[f]);
        }
        pm_root_track_destroy(&track);
        pm_clip_destroy(&c);
    }
}

/* A loop continues through its cycle, also when the smoothing reaches a whole loop length either
 * way (sigma = n / 3 frames): a straight loop walking along +X and facing it (a turned frame,
 * where the cycle's step must be taken in the last frame's facing) is smoothed onto itself. */
static void test_root_smoothing_across_a_whole_loop(void **state) {
    (void)state;
    enum { frames = 12 };
    const float fps = 30.0f, speed = 1.2f;
    pm_clip c;
    pm_test_biped_clip(&c, frames, 1.0f / fps);
    c.looping = 1;
    for (int f = 0; f < frames; f++) {
        c.translations[(size_t)f * 9] = pm_vec3_make(speed * (float)f / fps, 0.95f, 0.0f);
        c.rotations[(size_t)f * 9] = pm_quat_from_yaw(0.5f * PM_PI);
    }
    pm_root_def def = pm_default_root_def();
    def.position_smoothing = (float)frames / 3.0f / fps;
    def.facing_smoothing = def.position_smoothing;
    def.ground_mode = PM_GROUND_ZERO;
    pm_root_track track;
    PM_ASSERT_OK(pm_root_track_extract(&track, &c, &def, NULL, NULL));
    for (int f = 0; f < frames; f++) {
        pm_vec3 p = track.frames[f].translation, face = pm_quat_rotate(track.frames[f].rotation, pm_vec3_make(0, 0, 1));
        if (fabsf(p.x - speed * (float)f / fps) > 1e-4f || fabsf(p.y) > 1e-6f || fabsf(p.z) > 1e-4f)
            fail_msg("frame %d: root at (%g, %g, %g), the hips' ground point at (%g, 0, 0)", f, (double)p.x, (double)p.y,
                     (double)p.z, (double)(speed * (float)f / fps));
        pm_test_assert_vec3_near(face, pm_vec3_make(1, 0, 0), 1e-4f);
    }
    pm_root_track_destroy(&track);
    pm_clip_destroy(&c);
}

/* Extracts the facing (from the legs, or from `axis` of the hips) of hips turned by `usual` but at
 * frame 5 by `upright` (which leaves the legs' line or the axis pointing up), unsmoothed, and
 * checks that every frame faces +X. */
static void assert_upright_frame_keeps_facing(pm_facing_mode mode, pm_vec3 axis, pm_quat usual, pm_quat upright) {
    enum { frames = 10 };
    pm_clip c;
    pm_test_biped_clip(&c, frames, 1.0f / 30.0f);
    for (int f = 0; f < frames; f++) {
        c.translations[(size_t)f * 9] = pm_vec3_make(0.0f, 0.95f, 0.0f);
        c.rotations[(size_t)f * 9] = f == 5 ? upright : usual;
    }
    pm_root_def def = pm_default_root_def();
    def.facing_mode = mode;
    def.hips_axis = axis;
    def.position_smoothing = 0.0f;
    def.facing_smoothing = 0.0f;
    pm_root_track track;
    PM_ASSERT_OK(pm_root_track_extract(&track, &c, &def, NULL, NULL));
    for (int f = 0; f < frames; f++)
        pm_test_assert_vec3_near(pm_quat_rotate(track.frames[f].rotation, pm_vec3_make(0, 0, 1)), pm_vec3_make(1, 0, 0), 1e-5f);
    pm_root_track_destroy(&track);
    pm_clip_destroy(&c);
}

/* Facing from the hips axis: the axis is taken on the ground; a frame where it points straight up
 * has no facing of its own and keeps the previous frame's (not the world's +Z). The axis here is
 * +Y, turned onto +X by the hips except at frame 5, where the hips' identity rotation leaves it
 * exactly upright. */
static void test_root_facing_of_an_upright_hips_axis(void **state) {
    (void)state;
    const pm_quat lay = pm_quat_from_axis_angle(pm_vec3_make(0, 0, 1), -0.5f * PM_PI); /* +Y onto +X */
    assert_upright_frame_keeps_facing(PM_FACING_HIPS_AXIS, pm_vec3_make(0, 1, 0), lay, pm_quat_identity());
}

/* The same with an axis turned upright by a float rotation rather than left there: the rotation
 * leaves rounding noise of a few 1e-8 on the ground, here pointing against the facing of the other
 * frames, and that noise is no direction of its own either. The hips face +X by a quarter yaw;
 * at frame 5 they also pitch +Z up. */
static void test_root_facing_ignores_rounding_noise_of_an_upright_axis(void **state) {
    (void)state;
    const pm_quat yaw = pm_quat_from_yaw(0.5f * PM_PI); /* +Z onto +X */
    const pm_quat pitch = pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), -0.5f * PM_PI); /* +Z onto +Y */
    const pm_quat upright = pm_quat_mul(yaw, pitch);
    pm_vec3 noise = pm_quat_rotate(upright, pm_vec3_make(0, 0, 1));
    noise.y = 0.0f;
    assert_true(pm_vec3_length(noise) > 1e-8f); /* what the old absolute bound took for a facing */
    assert_upright_frame_keeps_facing(PM_FACING_HIPS_AXIS, pm_vec3_make(0, 0, 1), yaw, upright);
    /* The same for the legs' line, stood on end by a quarter roll of the hips. */
    const pm_quat roll = pm_quat_from_axis_angle(pm_vec3_make(0, 0, 1), 0.5f * PM_PI);
    assert_upright_frame_keeps_facing(PM_FACING_FROM_LEGS, pm_vec3_make(0, 0, 1), yaw, pm_quat_mul(yaw, roll));
}

/* A hips axis must have a length in 1e-6..1e6 (docs: its squared length must not overflow): one
 * of 1e7 is refused by name, one of 1e5 is only a direction. */
static void test_root_hips_axis_length_bounds(void **state) {
    (void)state;
    pm_root_def def = pm_default_root_def();
    def.facing_mode = PM_FACING_HIPS_AXIS;
    def.hips_axis = pm_vec3_make(0, 0, 1e7f);
    pm_error err;
    assert_int_equal(pm_root_def_validate(&def, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "hips_axis"));
    def.hips_axis = pm_vec3_make(0, 0, 1e5f);
    PM_ASSERT_OK(pm_root_def_validate(&def, NULL));
}

/* A loop drifting slowly (5 cm/s, above the 1 cm/s a standing take's pelvis creeps) is root motion:
 * read at its end (one whole period) it has moved on and turned by one cycle, so a turning walk
 * keeps turning across the seam. */
static void test_slow_loop_carries_its_turn(void **state) {
    (void)state;
    enum { frames = 30 };
    const float fps = 30.0f, rate = 0.3f; /* rad/s */
    pm_clip c;
    pm_test_biped_clip(&c, frames, 1.0f / fps);
    c.looping = 1;
    for (int f = 0; f < frames; f++) {
        float t = (float)f / fps;
        c.translations[(size_t)f * 9] = pm_vec3_make(0.0f, 0.95f, 0.05f * t);
        c.rotations[(size_t)f * 9] = pm_quat_from_yaw(rate * t);
    }
    pm_quat rot[9];
    pm_vec3 trans[9];
    PM_ASSERT_OK(pm_clip_sample(rot, trans, &c, (float)frames / fps, NULL));
    assert_true(pm_test_quat_same(rot[0], pm_quat_from_yaw(rate * (float)frames / fps), 1e-4f));
    assert_float_equal(trans[0].z, 0.05f, 1e-5);
    pm_clip_destroy(&c);
}

/* A loop resampled keeps its period: 30 frames at 30 fps are 60 at 60 fps and 24 at 24 fps (a
 * frame more would repeat frame 0 at the seam). Curves are interpolated where the new frames fall:
 * at 90 fps, a third and two thirds of the way between source frames. */
static void test_resample_loop_period_and_curves(void **state) {
    (void)state;
    enum { frames = 30 };
    pm_clip c;
    pm_test_biped_clip(&c, frames, 1.0f / 30.0f);
    c.looping = 1;
    float values[frames];
    for (int f = 0; f < frames; f++) {
        c.translations[(size_t)f * 9] = pm_vec3_make(0.0f, 0.95f, 0.0f);
        values[f] = (float)(f % 7);
    }
    PM_ASSERT_OK(pm_clip_add_curve(&c, "contact", values, NULL));
    const float rates[] = {60.0f, 24.0f, 90.0f};
    const int counts[] = {60, 24, 90};
    for (int i = 0; i < 3; i++) {
        pm_clip r;
        PM_ASSERT_OK(pm_clip_resample(&r, &c, rates[i], NULL));
        assert_int_equal(r.frame_count, counts[i]);
        if (rates[i] == 90.0f) {
            const pm_curve *cv = pm_clip_find_curve(&r, "contact");
            assert_non_null(cv);
            for (int f = 0; f + 3 < 90; f++) {
                int s = f / 3;
                float want = values[s] + (values[s + 1] - values[s]) * (float)(f % 3) / 3.0f;
                if (fabsf(cv->values[f] - want) > 1e-5f)
                    fail_msg("frame %d at 90 fps: curve %g, want %g", f, (double)cv->values[f], (double)want);
            }
        }
        pm_clip_destroy(&r);
    }
    /* Rates above 10 kHz are refused, not resampled into millions of frames. */
    pm_clip r;
    pm_error err;
    assert_int_equal(pm_clip_resample(&r, &c, 10001.0f, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "fps"));
    pm_clip_destroy(&c);
}

/* A two-frame loop (a swing back and forth) still wraps: half a frame after its last frame it is
 * half way back to its first. */
static void test_two_frame_loop_wraps(void **state) {
    (void)state;
    pm_clip c;
    pm_test_biped_clip(&c, 2, 1.0f / 30.0f);
    c.looping = 1;
    c.rotations[9 + 1] = pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), 0.2f);
    pm_quat rot[9];
    pm_vec3 trans[9];
    PM_ASSERT_OK(pm_clip_sample(rot, trans, &c, 1.5f / 30.0f, NULL));
    assert_true(pm_test_quat_same(rot[1], pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), 0.1f), 1e-6f));
    pm_clip_destroy(&c);
}

/* Mirroring a rig whose rest pose is not symmetric: the left leg's bones hang along -Y, the right
 * one's are those turned by `angle` about X (a rig whose zero pose is no T-pose; a quarter turn
 * lays them along -Z), the right hip turning them back down. 45 degrees is beyond the 10 degrees a
 * symmetric rest pose may be off by. The corrections are solved from the offsets, so the mirrored
 * clip keeps the skeleton's bone offsets: every joint's local translation is its rest offset
 * again, and the legs hang where the source's mirrored partners do. */
static void check_mirror_of_an_asymmetric_rest_pose(float angle) {
    static const char *const names[] = {"Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "RightUpLeg", "RightLeg", "RightFoot"};
    static const int parents[] = {-1, 0, 1, 2, 0, 4, 5};
    const pm_quat turn = pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), angle);
    const pm_vec3 leg = {0, -0.42f, 0}, foot = {0, -0.4f, 0.05f};
    const pm_vec3 off[7] = {{0, 0.95f, 0}, {0.1f, -0.05f, 0}, leg, foot, {-0.1f, -0.05f, 0}, pm_quat_rotate(turn, leg),
                            pm_quat_rotate(turn, foot)};
    pm_skeleton s;
    pm_test_named_skeleton(&s, 7, names, parents);
    for (int j = 0; j < 7; j++) s.rest_translations[j] = off[j];
    pm_clip c;
    PM_ASSERT_OK(pm_clip_create(&c, &s, 3, 1.0f / 30.0f, NULL, NULL));
    for (int f = 0; f < 3; f++) {
        for (int j = 0; j < 7; j++) c.translations[(size_t)f * 7 + j] = off[j];
        c.rotations[(size_t)f * 7 + 4] = pm_quat_conjugate(turn);
        c.rotations[(size_t)f * 7 + 1] = pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), 0.1f * (float)f);
    }
    pm_clip m;
    PM_ASSERT_OK(pm_clip_mirror(&m, &c, NULL, 0, NULL));
    pm_transform wc[7], wm[7];
    for (int f = 0; f < 3; f++) {
        for (int j = 1; j < 7; j++) pm_test_assert_vec3_near(m.translations[(size_t)f * 7 + j], off[j], 1e-5f);
        PM_ASSERT_OK(pm_clip_frame_world(wc, &c, f, NULL));
        PM_ASSERT_OK(pm_clip_frame_world(wm, &m, f, NULL));
        for (int j = 0; j < 7; j++) {
            int k = j == 0 ? 0 : j < 4 ? j + 3 : j - 3;
            pm_vec3 o = wc[k].translation;
            pm_test_assert_vec3_near(wm[j].translation, pm_vec3_make(-o.x, o.y, o.z), 1e-5f);
        }
    }
    pm_clip_destroy(&m);
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

static void test_mirror_keeps_offsets_of_an_asymmetric_rest_pose(void **state) {
    (void)state;
    check_mirror_of_an_asymmetric_rest_pose(0.5f * PM_PI);
    check_mirror_of_an_asymmetric_rest_pose(0.25f * PM_PI);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_root_smoothing_is_the_gaussian),
        cmocka_unit_test(test_root_smoothing_across_a_whole_loop),
        cmocka_unit_test(test_root_facing_of_an_upright_hips_axis),
        cmocka_unit_test(test_root_facing_ignores_rounding_noise_of_an_upright_axis),
        cmocka_unit_test(test_root_hips_axis_length_bounds),
        cmocka_unit_test(test_slow_loop_carries_its_turn),
        cmocka_unit_test(test_resample_loop_period_and_curves),
        cmocka_unit_test(test_two_frame_loop_wraps),
        cmocka_unit_test(test_mirror_keeps_offsets_of_an_asymmetric_rest_pose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
