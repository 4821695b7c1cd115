/* Mirror maps found from joint names and mirrored clips: reflection, involution, and rigs whose
 * joint frames are not symmetric (the rest of the animation foundation: test_anim.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

static const pm_vec3 AX = {1, 0, 0}, AY = {0, 1, 0}, AZ = {0, 0, 1};
#define DEG (PM_PI / 180.0f)

static void check_mirror_pairs(const char *const *names, int count, const int *expect) {
    pm_skeleton s;
    pm_test_named_skeleton(&s, count, names, NULL);
    int32_t map[16];
    int pairs = pm_skeleton_find_mirror_map(map, &s);
    int expect_pairs = 0;
    for (int j = 0; j < count; j++) {
        if (map[j] != expect[j]) fail_msg("%s maps to %s, expected %s", names[j], names[map[j]], names[expect[j]]);
        if (expect[j] > j) expect_pairs++;
    }
    assert_int_equal(pairs, expect_pairs);
    pm_skeleton_destroy(&s);
}

static void test_mirror_maps(void **state) {
    (void)state;
    const int e[] = {0, 2, 1, 3, 5, 4};
    const char *const full[] = {"Hips", "LeftFoot", "RightFoot", "Spine", "LeftHand", "RightHand"};
    const char *const suffix[] = {"Hips", "Foot_L", "Foot_R", "Spine", "Hand_L", "Hand_R"};
    const char *const dot[] = {"pelvis", "foot.L", "foot.R", "spine.001", "hand.L", "hand.R"};
    const char *const prefix[] = {"Root", "L_Foot", "R_Foot", "Neck", "L_Hand", "R_Hand"};
    const char *const lower[] = {"hip", "lFoot", "rFoot", "abdomen", "lThigh", "rThigh"};
    const char *const spaced[] = {"Bip01 Pelvis", "Bip01 L Foot", "Bip01 R Foot", "Bip01 Head", "Bip01 L Thigh", "Bip01 R Thigh"};
    const char *const caps[] = {"HIPS", "LEFT_FOOT", "RIGHT_FOOT", "LOWERBACK", "LEFTLEG", "RIGHTLEG"};
    /* CMU's capital prefixes next to its Left/Right names; "Root" and "LowerBack" stay unpaired. */
    const char *const cmu[] = {"Root", "LHipJoint", "RHipJoint", "LowerBack", "LFingers", "RFingers"};
    check_mirror_pairs(full, 6, e);
    check_mirror_pairs(suffix, 6, e);
    check_mirror_pairs(dot, 6, e);
    check_mirror_pairs(prefix, 6, e);
    check_mirror_pairs(lower, 6, e);
    check_mirror_pairs(spaced, 6, e);
    check_mirror_pairs(caps, 6, e);
    check_mirror_pairs(cmu, 6, e);
    /* Glued capital suffixes and prefixes; "LowerBack" and "Root" still stay unpaired. */
    const char *const glued_end[] = {"Root", "FootL", "FootR", "LowerBack", "UpperArmL", "UpperArmR"};
    const char *const glued_front[] = {"Root", "Lfoot", "Rfoot", "LowerBack", "Lhand", "Rhand"};
    check_mirror_pairs(glued_end, 6, e);
    check_mirror_pairs(glued_front, 6, e);
    /* A side without its counterpart maps to itself. */
    const char *const lonely[] = {"Hips", "LeftFoot", "Spine"};
    const int self[] = {0, 1, 2};
    check_mirror_pairs(lonely, 3, self);
    /* A name that is only a letter is no side: "L" and "R" are joints, not each other's mirror. */
    const char *const letters[] = {"Hips", "L", "R"};
    check_mirror_pairs(letters, 3, self);
    /* A one-way match is dropped: "lEftFoot" finds "rightFoot", whose own counterpart would be
     * "leftFoot" (none), and a map must be its own inverse. The count is of the pairs kept (it
     * counted the dropped one). */
    const char *const one_way[] = {"Hips", "lEftFoot", "rightFoot"};
    check_mirror_pairs(one_way, 3, self);
}


static void test_mirror_reflects_and_is_an_involution(void **state) {
    (void)state;
    pm_skeleton s;
    pm_clip c = pm_test_random_biped_clip(&s, 12, 99);
    int32_t map[9];
    pm_skeleton_find_mirror_map(map, &s);
    assert_int_equal(map[1], 4);
    assert_int_equal(map[3], 6);
    assert_int_equal(map[8], 8);
    /* Across the plane the rest pose picks (X separates left from right), and across each axis
     * given: the mapped joint's position with that coordinate negated; twice is the clip again. */
    for (int axis = -1; axis <= 2; axis++) {
        pm_clip m, mm;
        PM_ASSERT_OK(pm_clip_mirror(&m, &c, NULL, axis, NULL));
        PM_ASSERT_OK(pm_clip_mirror(&mm, &m, NULL, axis < 0 ? 0 : axis, NULL));
        pm_transform wc[9], wm[9], wmm[9];
        for (int f = 0; f < c.frame_count; f++) {
            PM_ASSERT_OK(pm_clip_frame_world(wc, &c, f, NULL));
            PM_ASSERT_OK(pm_clip_frame_world(wm, &m, f, NULL));
            PM_ASSERT_OK(pm_clip_frame_world(wmm, &mm, f, NULL));
            for (int j = 0; j < 9; j++) {
                pm_vec3 o = wc[map[j]].translation;
                int k = axis < 0 ? 0 : axis;
                pm_vec3 reflected = pm_vec3_make(k == 0 ? -o.x : o.x, k == 1 ? -o.y : o.y, k == 2 ? -o.z : o.z);
                pm_test_assert_vec3_near(wm[j].translation, reflected, 1e-4f);
                pm_test_assert_vec3_near(wmm[j].translation, wc[j].translation, 1e-4f);
                assert_true(pm_test_quat_same(wmm[j].rotation, wc[j].rotation, 1e-5f));
            }
        }
        pm_clip_destroy(&mm);
        pm_clip_destroy(&m);
    }
    int32_t bad[9] = {0, 4, 2, 3, 4, 5, 6, 7, 8}; /* 1 -> 4 but 4 -> 4: not a swap */
    pm_error err;
    pm_clip tmp;
    assert_int_equal(pm_clip_mirror(&tmp, &c, bad, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_clip_mirror(&tmp, &c, NULL, 3, &err), PM_ERR_INVALID_ARGUMENT);
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

/* A Maya-style rig (Bandai's): bones along +X on the left and -X on the right, every frame the
 * same at zero rotation, so the zero pose is no T-pose and the corrections are solved. The hips'
 * is a half turn about Z, across the legs' bones, which prefers no turn about them: the legs'
 * came out of float noise (a Bandai take's 173 degrees, the next one's 149) or none at all, and
 * the mirrored knees bent about a tilted or reversed axis. Both sides bend their knees about +Y,
 * so the mirror's left knee must turn as the source's right knee does, frame by frame; and a
 * lopsided clip (a left knee held twisted, no mean pose to tell conventions by) must not make
 * the lower legs drop the half turn their parents take. */
static void test_mirror_maya_style_legs(void **state) {
    (void)state;
    const char *const names[] = {"Hips",   "Spine",      "UpperLeg_L", "LowerLeg_L",
                                 "Foot_L", "UpperLeg_R", "LowerLeg_R", "Foot_R"};
    const int parents[] = {-1, 0, 0, 2, 3, 0, 5, 6};
    const pm_vec3 offsets[] = {{0, 0.9f, 0}, {0.2f, 0, 0}, {0, -0.1f, 0}, {0.4f, 0, 0}, {0.4f, 0, 0},
                               {0, 0.1f, 0}, {-0.4f, 0, 0}, {-0.4f, 0, 0}};
    pm_skeleton s;
    PM_ASSERT_OK(pm_skeleton_create(&s, 8, NULL, NULL));
    for (int j = 0; j < 8; j++) {
        PM_ASSERT_OK(pm_skeleton_set_name(&s, j, names[j], NULL));
        s.parents[j] = parents[j];
        s.rest_translations[j] = offsets[j];
    }
    const pm_quat half_x = pm_quat_from_axis_angle(AX, PM_PI), half_z = pm_quat_from_axis_angle(AZ, PM_PI);
    for (int lopsided = 0; lopsided <= 1; lopsided++) {
        pm_clip c;
        PM_ASSERT_OK(pm_clip_create(&c, &s, 40, 1.0f / 30.0f, NULL, NULL));
        for (int f = 0; f < 40; f++) {
            pm_quat *q = c.rotations + (size_t)f * 8;
            float t = 0.3f * (float)f;
            c.translations[(size_t)f * 8] = pm_vec3_make(0, 0.9f, 0.05f * (float)f);
            q[0] = pm_quat_from_axis_angle(AZ, 0.5f * PM_PI);
            /* The left leg swings; the right one does what mirroring the left half a cycle on under
             * these conventions gives: U_R = M(half_z U_L half_x^-1), K_R = M(half_x K_L half_x^-1). */
            for (int side = 0; side < 2; side++) {
                float ts = t + (float)side * PM_PI;
                pm_quat upper =
                    pm_quat_mul(pm_quat_from_axis_angle(AY, 0.1f), pm_quat_from_axis_angle(AZ, 2.0f + 0.4f * sinf(ts)));
                pm_quat knee = pm_quat_from_axis_angle(AY, 0.3f + 0.3f * sinf(ts));
                if (side == 0) {
                    q[2] = upper;
                    q[3] = lopsided ? pm_quat_from_axis_angle(pm_vec3_make(-1, 0, 0), 2.1f) : knee;
                } else {
                    pm_quat u = pm_quat_mul(pm_quat_mul(half_z, upper), pm_quat_conjugate(half_x));
                    pm_quat k = pm_quat_mul(pm_quat_mul(half_x, knee), pm_quat_conjugate(half_x));
                    q[5] = pm_quat_make(u.x, -u.y, -u.z, u.w);
                    q[6] = pm_quat_make(k.x, -k.y, -k.z, k.w);
                }
            }
        }
        pm_clip m;
        PM_ASSERT_OK(pm_clip_mirror(&m, &c, NULL, -1, NULL));
        for (int f = 0; f < 40; f++) {
            const pm_quat *q = c.rotations + (size_t)f * 8, *mq = m.rotations + (size_t)f * 8;
            if (!pm_test_quat_same(mq[3], q[6], 1e-5f))
                fail_msg("%s clip, frame %d: mirrored left knee (%g %g %g %g), the source's right knee (%g %g %g %g)",
                         lopsided ? "lopsided" : "walking", f, (double)mq[3].x, (double)mq[3].y, (double)mq[3].z,
                         (double)mq[3].w, (double)q[6].x, (double)q[6].y, (double)q[6].z, (double)q[6].w);
            if (!lopsided) assert_true(pm_test_quat_same(mq[6], q[3], 1e-5f));
        }
        pm_clip_destroy(&m);
        pm_clip_destroy(&c);
    }
    pm_skeleton_destroy(&s);
}

/* The hips-axis root of a mirrored clip, measured from its legs' facing (which is the source's
 * reflected). The mirrored skeleton has the source's joint frames, so a hips axis means the same
 * side of the body on both: the mirror's root with axis a is the source's root with the reflected
 * axis, reflected (the angle from the legs' facing negated). An axis pointing forward gives the
 * source's facing reflected; one pointing to the left faces the mirror's own left (not the
 * reflection of the source's facing, which points to the mirror's right); one in between keeps
 * its side too - what a runtime finding the root of a mirrored pose the same way gets. */
static float signed_yaw(pm_quat from, pm_quat to) {
    pm_vec3 a = pm_quat_rotate(from, AZ), b = pm_quat_rotate(to, AZ);
    return atan2f(a.z * b.x - a.x * b.z, a.x * b.x + a.z * b.z);
}

/* Per frame, the yaw from the clip's legs' facing to its root facing with the hips axis given. */
static void hips_axis_yaws(float *out, const pm_clip *c, pm_vec3 axis) {
    pm_root_def legs = pm_default_root_def();
    legs.facing_smoothing = 0.0f;
    legs.position_smoothing = 0.0f;
    pm_root_def hips = legs;
    hips.facing_mode = PM_FACING_HIPS_AXIS;
    hips.hips_axis = axis;
    pm_root_track tl, th;
    PM_ASSERT_OK(pm_root_track_extract(&tl, c, &legs, NULL, NULL));
    PM_ASSERT_OK(pm_root_track_extract(&th, c, &hips, NULL, NULL));
    for (int f = 0; f < c->frame_count; f++) out[f] = signed_yaw(tl.frames[f].rotation, th.frames[f].rotation);
    pm_root_track_destroy(&tl);
    pm_root_track_destroy(&th);
}

static void test_mirror_hips_axis_facing(void **state) {
    (void)state;
    pm_skeleton s;
    enum { FRAMES = 24 };
    pm_clip c = pm_test_random_biped_clip(&s, FRAMES, 7);
    pm_clip m;
    PM_ASSERT_OK(pm_clip_mirror(&m, &c, NULL, 0, NULL)); /* X separates the biped's left and right */
    const pm_vec3 axes[] = {AZ, AX, {0.6f, 0.0f, 0.8f}};
    const char *const names[] = {"forward", "left", "forward-left"};
    for (int k = 0; k < 3; k++) {
        pm_vec3 reflected = pm_vec3_make(-axes[k].x, axes[k].y, axes[k].z);
        float source[FRAMES], source_reflected[FRAMES], mirrored[FRAMES];
        hips_axis_yaws(source, &c, axes[k]);
        hips_axis_yaws(source_reflected, &c, reflected);
        hips_axis_yaws(mirrored, &m, axes[k]);
        for (int f = 0; f < FRAMES; f++) {
            float diff = remainderf(mirrored[f] + source_reflected[f], 2.0f * PM_PI);
            if (fabsf(diff) > 1e-3f)
                fail_msg("%s axis, frame %d: the mirror's root %g degrees from its legs' facing, expected %g", names[k],
                         f, (double)(mirrored[f] / DEG), (double)(-source_reflected[f] / DEG));
            /* Same side of the body as the source's root (the forward axis: within the twist). */
            if (k > 0) assert_true((sinf(source[f]) > 0.0f) == (sinf(mirrored[f]) > 0.0f));
            if (k == 2) assert_true((cosf(source[f]) > 0.0f) == (cosf(mirrored[f]) > 0.0f));
        }
    }
    pm_clip_destroy(&m);
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mirror_maps),
        cmocka_unit_test(test_mirror_reflects_and_is_an_involution),
        cmocka_unit_test(test_mirror_maya_style_legs),
        cmocka_unit_test(test_mirror_hips_axis_facing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
