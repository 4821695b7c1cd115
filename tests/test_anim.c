/* Animation foundation: quaternion and Euler math, forward kinematics against hand-computed
 * positions, sampling and resampling, trim, scale, Z-up conversion, root extraction, survey and
 * validation, and the argument checks of each (mirror maps and mirroring: test_anim_mirror.c). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clip_internal.h"
#include "euler.h"
#include "support.h"

static const pm_vec3 AX = {1, 0, 0}, AY = {0, 1, 0}, AZ = {0, 0, 1};
#define DEG (PM_PI / 180.0f)

/* ---- quaternions and Euler angles ---- */

static void test_quaternion_basics(void **state) {
    (void)state;
    pm_quat z90 = pm_quat_from_axis_angle(AZ, 90 * DEG);
    pm_test_assert_vec3_near(pm_quat_rotate(z90, AX), AY, 1e-6f);
    pm_test_assert_vec3_near(pm_quat_inv_rotate(z90, AY), AX, 1e-6f);
    /* q1 * q2 applies q2 first. */
    pm_quat x90 = pm_quat_from_axis_angle(AX, 90 * DEG);
    pm_test_assert_vec3_near(pm_quat_rotate(pm_quat_mul(z90, x90), AY), pm_quat_rotate(z90, pm_quat_rotate(x90, AY)), 1e-6f);
    pm_test_assert_vec3_near(pm_quat_rotate(pm_quat_mul(z90, x90), AY), AZ, 1e-6f);
    /* Slerp midpoint of 0 and 90 degrees is 45; nlerp agrees in direction. */
    pm_quat mid = pm_quat_slerp(pm_quat_identity(), z90, 0.5f);
    assert_true(pm_test_quat_same(mid, pm_quat_from_axis_angle(AZ, 45 * DEG), 1e-6f));
    assert_true(pm_test_quat_same(pm_quat_nlerp(pm_quat_identity(), z90, 0.5f), mid, 1e-6f));
    /* Shortest arc: the negated quaternion interpolates the same way. */
    assert_true(pm_test_quat_same(pm_quat_slerp(pm_quat_identity(), pm_quat_neg(z90), 0.5f), mid, 1e-6f));
    pm_vec3 sa = pm_quat_to_scaled_axis(z90);
    pm_test_assert_vec3_near(sa, pm_vec3_make(0, 0, 90 * DEG), 1e-5f);
    assert_true(pm_test_quat_same(pm_quat_from_scaled_axis(sa), z90, 1e-6f));
    assert_true(pm_test_quat_same(pm_quat_pow(z90, 1.0f / 3.0f), pm_quat_from_axis_angle(AZ, 30 * DEG), 1e-6f));
    pm_test_assert_vec3_near(pm_quat_rotate(pm_quat_from_yaw(90 * DEG), AZ), AX, 1e-6f);
    pm_transform t = {z90, {1, 2, 3}};
    pm_vec3 p = pm_transform_point(t, AX);
    pm_test_assert_vec3_near(p, pm_vec3_make(1, 3, 3), 1e-6f);
    pm_test_assert_vec3_near(pm_transform_inv_point(t, p), AX, 1e-6f);
    pm_transform id = pm_transform_mul(t, pm_transform_inverse(t));
    pm_test_assert_vec3_near(id.translation, pm_vec3_zero(), 1e-6f);
    assert_true(pm_test_quat_same(id.rotation, pm_quat_identity(), 1e-6f));
}

static void test_euler_orders(void **state) {
    (void)state;
    static const char *const names[6] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};
    for (int o = 0; o < PM_EULER_ORDER_COUNT; o++) {
        pm_euler_order order = (pm_euler_order)o, parsed;
        assert_string_equal(pm_euler_order_name(order), names[o]);
        assert_true(pm_euler_order_parse(&parsed, names[o]));
        assert_int_equal(parsed, order);
        assert_int_equal(pm_euler_order_from_axes(pm_euler_axis(order, 0), pm_euler_axis(order, 1), pm_euler_axis(order, 2)),
                         order);
        /* R = R_first R_second R_third, angles indexed by axis. */
        double rad[3] = {0.3, -0.7, 1.1};
        pm_quat expect = pm_quat_identity();
        for (int i = 0; i < 3; i++) {
            int axis = pm_euler_axis(order, i);
            pm_vec3 a = pm_test_unit_axis(axis);
            expect = pm_quat_mul(expect, pm_quat_from_axis_angle(a, (float)rad[axis]));
        }
        assert_true(pm_test_quat_same(pm_euler_to_quat_d(rad, order), expect, 1e-6f));
        double back[3];
        pm_euler_from_quat_d(back, expect, order);
        for (int k = 0; k < 3; k++) assert_true(fabs(back[k] - rad[k]) < 1e-5);
    }
    pm_euler_order o;
    assert_true(pm_euler_order_parse(&o, "zxy"));
    assert_int_equal(o, PM_EULER_ZXY);
    assert_false(pm_euler_order_parse(&o, "ZZY"));
    assert_false(pm_euler_order_parse(&o, "ZX"));
    assert_false(pm_euler_order_parse(&o, "ZXYW"));
    /* ZXY with only Z = 90 degrees turns +X into +Y. */
    pm_test_assert_vec3_near(pm_quat_rotate(pm_euler_to_quat(pm_vec3_make(0, 0, 90 * DEG), PM_EULER_ZXY), AX), AY, 1e-6f);
}

static void test_euler_round_trip_random_and_gimbal(void **state) {
    (void)state;
    pm_test_rng rng = {1234};
    for (int o = 0; o < PM_EULER_ORDER_COUNT; o++) {
        pm_euler_order order = (pm_euler_order)o;
        for (int i = 0; i < 500; i++) {
            pm_quat q = pm_test_random_quat(&rng);
            if (i % 10 == 0) {
                /* Gimbal lock: the middle axis at exactly +-90 degrees. */
                double a[3] = {0, 0, 0};
                a[pm_euler_axis(order, 0)] = 2.0 * pm_test_rng_float(&rng) - 1.0;
                a[pm_euler_axis(order, 1)] = (i & 1 ? 0.5 : -0.5) * 3.14159265358979;
                a[pm_euler_axis(order, 2)] = 2.0 * pm_test_rng_float(&rng) - 1.0;
                q = pm_euler_to_quat_d(a, order);
            }
            double e[3];
            pm_euler_from_quat_d(e, q, order);
            pm_quat back = pm_euler_to_quat_d(e, order);
            /* Compare as rotations (what matters), not angles (ambiguous at the lock). */
            if (!pm_test_quat_same(q, back, 1e-6f)) fail_msg("order %s sample %d does not round-trip", pm_euler_order_name(order), i);
            assert_true(fabs(e[pm_euler_axis(order, 1)]) <= 1.5707964);
            pm_vec3 ef = pm_euler_from_quat(q, order);
            assert_true(pm_test_quat_same(pm_euler_to_quat(ef, order), q, 1e-5f));
        }
        /* Near the lock (the middle axis 0.03 degrees short of 90) the angles are still defined
         * and come back, the first and third apart. */
        double a[3] = {0, 0, 0}, e[3];
        a[pm_euler_axis(order, 0)] = 0.3;
        a[pm_euler_axis(order, 1)] = 0.5 * 3.14159265358979 - 5e-4;
        a[pm_euler_axis(order, 2)] = 0.4;
        pm_euler_from_quat_d(e, pm_euler_to_quat_d(a, order), order);
        for (int k = 0; k < 3; k++)
            if (fabs(e[k] - a[k]) > 1e-2)
                fail_msg("order %s near the lock: angle %d is %g, was %g", pm_euler_order_name(order), k, e[k], a[k]);
    }
}

/* The edges of the order helpers' contracts (euler.h): BVH readers and the CLI feed them
 * whatever a file holds, so out-of-range positions and orders, non-permutations and
 * malformed names must give the documented fallbacks rather than a neighbouring table row. */
static void test_euler_contract_edges(void **state) {
    (void)state;
    for (int o = 0; o < PM_EULER_ORDER_COUNT; o++) {
        assert_int_equal(pm_euler_axis((pm_euler_order)o, 3), 0);
        assert_int_equal(pm_euler_axis((pm_euler_order)o, -1), 0);
    }
    const pm_euler_order bad = (pm_euler_order)PM_EULER_ORDER_COUNT;
    assert_string_equal(pm_euler_order_name(bad), "?");
    assert_string_equal(pm_euler_order_name((pm_euler_order)-1), "?");
    assert_int_equal(pm_euler_axis(bad, 0), 0);
    assert_int_equal(pm_euler_axis(bad, 2), 0);
    /* An unknown order converts as XYZ. */
    const double rad[3] = {0.3, -0.7, 1.1};
    pm_quat a = pm_euler_to_quat_d(rad, bad), b = pm_euler_to_quat_d(rad, PM_EULER_XYZ);
    assert_memory_equal(&a, &b, sizeof a);
    /* Not a permutation: XYZ, whichever order shares the first two axes. */
    static const int not_perm[][3] = {{0, 2, 0}, {1, 0, 1}, {2, 1, 2}, {1, 2, 1}, {2, 0, 2}, {0, 0, 0}, {0, 1, 3}};
    for (size_t i = 0; i < sizeof not_perm / sizeof not_perm[0]; i++)
        assert_int_equal(pm_euler_order_from_axes(not_perm[i][0], not_perm[i][1], not_perm[i][2]), PM_EULER_XYZ);
    /* A repeated axis in either place is refused, and *out is left alone. */
    pm_euler_order o = PM_EULER_ZYX;
    assert_false(pm_euler_order_parse(&o, "XYX"));
    assert_false(pm_euler_order_parse(&o, "YYZ"));
    assert_false(pm_euler_order_parse(&o, "XZZ"));
    assert_false(pm_euler_order_parse(&o, "XYZ "));
    assert_int_equal(o, PM_EULER_ZYX);
    assert_true(pm_euler_order_parse(&o, "yZx"));
    assert_int_equal(o, PM_EULER_YZX);
    /* These angles compose to w exactly 0: the sign rule (w >= 0) must leave the quaternion
     * as composed, not flip it into a w of -0 (the stored poses avoid negative zeros). */
    const double pi = 3.14159265358979323846;
    const double at_zero[3] = {-14 * pi / 8, -6 * pi / 8, -4 * pi / 8};
    pm_quat z = pm_euler_to_quat_d(at_zero, PM_EULER_XYZ);
    assert_true(z.w == 0.0f);
    assert_false(signbit(z.w));
}

/* euler.h promises the angles of a quaternion that is not unit: a scaled copy (an unnormalised
 * blend, a BVH writer's input) must give the angles of the rotation it stands for. */
static void test_euler_from_scaled_quaternion(void **state) {
    (void)state;
    pm_test_rng rng = {99};
    for (int o = 0; o < PM_EULER_ORDER_COUNT; o++)
        for (int i = 0; i < 50; i++) {
            pm_quat q = pm_test_random_quat(&rng);
            const float k = i & 1 ? 3.0f : 0.25f;
            double e[3], es[3];
            pm_euler_from_quat_d(e, q, (pm_euler_order)o);
            pm_euler_from_quat_d(es, pm_quat_make(k * q.x, k * q.y, k * q.z, k * q.w), (pm_euler_order)o);
            for (int c = 0; c < 3; c++)
                if (fabs(e[c] - es[c]) > 1e-5) fail_msg("order %d sample %d: angle %d %g against %g", o, i, c, es[c], e[c]);
        }
}

static void test_euler_order_of_channels(void **state) {
    (void)state;
    pm_euler_order o;
    const uint8_t bvh[6] = {PM_CHANNEL_XPOSITION, PM_CHANNEL_YPOSITION, PM_CHANNEL_ZPOSITION, PM_CHANNEL_ZROTATION,
                            PM_CHANNEL_XROTATION, PM_CHANNEL_YROTATION};
    assert_int_equal(pm_euler_order_of_channels(&o, bvh, 6), 3);
    assert_int_equal(o, PM_EULER_ZXY);
    const uint8_t two[2] = {PM_CHANNEL_YROTATION, PM_CHANNEL_XROTATION};
    assert_int_equal(pm_euler_order_of_channels(&o, two, 2), 2);
    assert_int_equal(o, PM_EULER_YXZ); /* listed first, the missing Z after */
    assert_int_equal(pm_euler_order_of_channels(&o, bvh, 3), 0);
}

/* ---- skeletons and clips used below ---- */

/* ---- kinematics ---- */

static void test_forward_kinematics_chain(void **state) {
    (void)state;
    /* Root at (1,0,0) turned 90 degrees about Y; joint 1 one up, turned 90 about Z; joint 2
     * one along local +Z. By hand: joint 1 at (1,1,0); Rz(90) keeps +Z, Ry(90) takes +Z to +X,
     * so joint 2 is at (2,1,0). */
    int32_t parents[3] = {-1, 0, 1};
    pm_quat rot[3] = {pm_quat_from_axis_angle(AY, 90 * DEG), pm_quat_from_axis_angle(AZ, 90 * DEG), pm_quat_identity()};
    pm_vec3 pos[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    pm_transform w[3];
    PM_ASSERT_OK(pm_local_to_model(w, parents, 3, rot, pos, NULL));
    pm_test_assert_vec3_near(w[0].translation, pm_vec3_make(1, 0, 0), 1e-6f);
    pm_test_assert_vec3_near(w[1].translation, pm_vec3_make(1, 1, 0), 1e-6f);
    pm_test_assert_vec3_near(w[2].translation, pm_vec3_make(2, 1, 0), 1e-6f);
    /* Joint 2's local +Y: Rz(90) takes it to -X, Ry(90) takes -X to +Z. */
    pm_test_assert_vec3_near(pm_quat_rotate(w[2].rotation, AY), AZ, 1e-6f);
}

/* Features and the root need a few joints' world transforms: FK over those joints' chains only
 * (pm_joint_ancestry + pm_clip_frame_world_listed) must give exactly what full FK gives them. */
static void test_forward_kinematics_of_chains(void **state) {
    (void)state;
    pm_test_rng rng = {11};
    for (int trial = 0; trial < 20; trial++) {
        const int jc = 1 + (int)(pm_test_rng_u32(&rng) % 40);
        pm_skeleton sk;
        PM_ASSERT_OK(pm_skeleton_create(&sk, jc, NULL, NULL));
        for (int j = 0; j < jc; j++) {
            char name[16];
            snprintf(name, sizeof name, "j%d", j);
            PM_ASSERT_OK(pm_skeleton_set_name(&sk, j, name, NULL));
            /* Some roots beside joint 0, the rest anywhere above. */
            sk.parents[j] = j == 0 || pm_test_rng_u32(&rng) % 9 == 0 ? -1 : (int32_t)(pm_test_rng_u32(&rng) % (uint32_t)j);
        }
        pm_clip c;
        PM_ASSERT_OK(pm_clip_create(&c, &sk, 3, 1.0f / 30.0f, NULL, NULL));
        for (int i = 0; i < 3 * jc; i++) {
            c.rotations[i] = pm_test_random_quat(&rng);
            c.translations[i] = pm_vec3_make(pm_test_rng_normal(&rng), pm_test_rng_normal(&rng), pm_test_rng_normal(&rng));
        }
        int wanted[3], chain[40], count = 1 + (int)(pm_test_rng_u32(&rng) % 3);
        for (int i = 0; i < count; i++) wanted[i] = (int)(pm_test_rng_u32(&rng) % (uint32_t)jc);
        int n = pm_joint_ancestry(chain, sk.parents, jc, wanted, count);
        /* Exactly the wanted joints and their ancestors, ascending. */
        for (int j = 0; j < jc; j++) {
            int needed = 0;
            for (int i = 0; i < count; i++)
                for (int a = wanted[i]; a >= 0 && !needed; a = sk.parents[a]) needed = a == j;
            int listed = 0;
            for (int i = 0; i < n; i++) listed |= chain[i] == j;
            assert_int_equal(listed, needed);
        }
        for (int i = 1; i < n; i++) assert_true(chain[i - 1] < chain[i]);
        pm_transform full[40], part[40];
        for (int f = 0; f < 3; f++) {
            PM_ASSERT_OK(pm_clip_frame_world(full, &c, f, NULL));
            pm_clip_frame_world_listed(part, &c, f, chain, n);
            for (int i = 0; i < n; i++) { /* bit for bit (members: a struct's padding is not compared) */
                assert_memory_equal(&full[chain[i]].rotation, &part[chain[i]].rotation, sizeof(pm_quat));
                assert_memory_equal(&full[chain[i]].translation, &part[chain[i]].translation, sizeof(pm_vec3));
            }
        }
        pm_clip_destroy(&c);
        pm_skeleton_destroy(&sk);
    }
}

static void test_sample_and_resample(void **state) {
    (void)state;
    pm_clip c, r;
    pm_test_biped_clip(&c, 4, 1.0f / 30.0f);
    for (int f = 0; f < 4; f++) {
        c.rotations[(size_t)f * 9 + 1] = pm_quat_from_axis_angle(AX, (float)f * 20 * DEG);
        c.translations[(size_t)f * 9] = pm_vec3_make((float)f, 0.95f, 0);
    }
    pm_quat rot[9];
    pm_vec3 pos[9];
    PM_ASSERT_OK(pm_clip_sample(rot, pos, &c, 0.5f / 30.0f, NULL));
    assert_true(pm_test_quat_same(rot[1], pm_quat_from_axis_angle(AX, 10 * DEG), 1e-6f)); /* slerp midpoint */
    pm_test_assert_vec3_near(pos[0], pm_vec3_make(0.5f, 0.95f, 0), 1e-6f);
    PM_ASSERT_OK(pm_clip_sample(rot, pos, &c, 10.0f, NULL)); /* clamped to the last frame */
    pm_test_assert_vec3_near(pos[0], pm_vec3_make(3, 0.95f, 0), 1e-6f);
    c.looping = 1;
    /* From the last frame a loop goes on towards the first one moved on by a cycle: the root
     * keeps walking (x = 3.5) instead of sliding back half way to frame 0 (x = 1.5); the joint's
     * rotation wraps to the first frame's. */
    PM_ASSERT_OK(pm_clip_sample(rot, pos, &c, 3.5f / 30.0f, NULL));
    pm_test_assert_vec3_near(pos[0], pm_vec3_make(3.5f, 0.95f, 0), 1e-5f);
    assert_true(pm_test_quat_same(rot[1], pm_quat_from_axis_angle(AX, 30 * DEG), 1e-5f));
    /* Slow root motion under a large sway still counts as travel (0.1 m per 30-frame cycle,
     * swaying 0.15 m sideways): across the wrap z goes on, it does not slide back to 0. */
    pm_clip slow;
    pm_test_biped_clip(&slow, 30, 1.0f / 30.0f);
    slow.looping = 1;
    for (int f = 0; f < 30; f++)
        slow.translations[(size_t)f * 9] = pm_vec3_make(0.15f * sinf(2.0f * PM_PI * (float)f / 30.0f), 0.95f, 0.1f * (float)f / 30.0f);
    PM_ASSERT_OK(pm_clip_sample(rot, pos, &slow, 29.5f / 30.0f, NULL));
    assert_true(pos[0].z > 0.096f);
    pm_clip_destroy(&slow);
    c.looping = 0;
    /* 30 -> 60 fps keeps every source frame and puts slerp midpoints between. */
    PM_ASSERT_OK(pm_clip_resample(&r, &c, 60.0f, NULL));
    assert_int_equal(r.frame_count, 7);
    assert_true(fabsf(r.frame_time - 1.0f / 60.0f) < 1e-7f);
    for (int f = 0; f < 4; f++) assert_true(pm_test_quat_same(r.rotations[(size_t)(2 * f) * 9 + 1], c.rotations[(size_t)f * 9 + 1], 1e-6f));
    assert_true(pm_test_quat_same(r.rotations[(size_t)3 * 9 + 1], pm_quat_from_axis_angle(AX, 30 * DEG), 1e-6f));
    pm_test_assert_vec3_near(r.translations[(size_t)5 * 9], pm_vec3_make(2.5f, 0.95f, 0), 1e-5f);
    pm_clip_destroy(&r);
    pm_error err;
    assert_int_equal(pm_clip_resample(&r, &c, 0.0f, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_clip_resample(&r, &c, NAN, &err), PM_ERR_INVALID_ARGUMENT);
    pm_clip_destroy(&c);
}

static void test_trim_scale_z_up(void **state) {
    (void)state;
    pm_skeleton s;
    pm_test_biped(&s, pm_test_biped_names);
    s.has_end_site[8] = 1;
    s.end_sites[8] = pm_vec3_make(0, 0.1f, 0);
    pm_clip c, t;
    PM_ASSERT_OK(pm_clip_create(&c, &s, 10, 0.1f, NULL, NULL));
    PM_ASSERT_OK(pm_clip_set_name(&c, "walk", NULL));
    for (int f = 0; f < 10; f++) c.translations[(size_t)f * 9] = pm_vec3_make((float)f, 0.95f, 0);
    PM_ASSERT_OK(pm_clip_trim(&t, &c, 3, 4, NULL));
    assert_int_equal(t.frame_count, 4);
    pm_test_assert_vec3_near(t.translations[0], pm_vec3_make(3, 0.95f, 0), 0);
    assert_string_equal(t.name, "walk");
    pm_clip_destroy(&t);
    pm_error err;
    assert_int_equal(pm_clip_trim(&t, &c, 8, 4, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_clip_trim(&t, &c, -1, 2, &err), PM_ERR_INVALID_ARGUMENT);
    /* Scale: translations, offsets and End Sites; the recorded unit scale multiplies. */
    PM_ASSERT_OK(pm_clip_scale(&c, 100.0f, NULL));
    pm_test_assert_vec3_near(c.translations[9], pm_vec3_make(100, 95, 0), 1e-4f);
    pm_test_assert_vec3_near(c.skeleton.rest_translations[1], pm_vec3_make(10, -5, 0), 1e-4f);
    pm_test_assert_vec3_near(c.skeleton.end_sites[8], pm_vec3_make(0, 10, 0), 1e-4f);
    assert_true(fabsf(c.unit_scale - 100.0f) < 1e-4f);
    PM_ASSERT_OK(pm_clip_scale(&c, 0.01f, NULL));
    /* Z-up to Y-up: (x, y, z) -> (x, z, -y) for the whole pose, so world heights come from z. */
    pm_transform before[9], after[9];
    c.rotations[(size_t)2 * 9 + 1] = pm_quat_from_axis_angle(AX, 0.5f);
    PM_ASSERT_OK(pm_clip_frame_world(before, &c, 2, NULL));
    PM_ASSERT_OK(pm_clip_z_up_to_y_up(&c, NULL));
    assert_int_equal(c.source_up, PM_UP_Z);
    PM_ASSERT_OK(pm_clip_frame_world(after, &c, 2, NULL));
    for (int j = 0; j < 9; j++) {
        pm_vec3 b = before[j].translation;
        pm_test_assert_vec3_near(after[j].translation, pm_vec3_make(b.x, b.z, -b.y), 1e-5f);
    }
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

/* ---- root extraction ---- */

/* The floor is where the feet's lowest points are: the toe tip (a foot's End Site) of a rig
 * without toe joints, not its ankle. */
static void test_floor_from_toe_tips(void **state) {
    (void)state;
    pm_clip c;
    pm_test_biped_clip(&c, 20, 1.0f / 30.0f);
    for (int f = 0; f < 20; f++)
        for (int j = 0; j < 9; j++) c.translations[(size_t)f * 9 + j] = c.skeleton.rest_translations[j];
    pm_clip_survey survey;
    PM_ASSERT_OK(pm_clip_survey_compute(&survey, &c, NULL));
    assert_float_equal(survey.floor_height, 0.06f, 1e-5); /* the ankles: 0.95 - 0.05 - 0.42 - 0.42 */
    for (int j = 3; j <= 6; j += 3) {
        c.skeleton.has_end_site[j] = 1;
        c.skeleton.end_sites[j] = pm_vec3_make(0.0f, -0.05f, 0.12f);
    }
    PM_ASSERT_OK(pm_clip_survey_compute(&survey, &c, NULL));
    assert_float_equal(survey.floor_height, 0.01f, 1e-5);
    pm_clip_destroy(&c);
}

static void test_root_straight_walk(void **state) {
    (void)state;
    pm_clip c;
    pm_test_biped_clip(&c, 60, 1.0f / 30.0f);
    for (int f = 0; f < 60; f++) {
        float t = (float)f / 30.0f;
        /* 1.2 m/s towards +Z with a pelvis sway of 3 cm. */
        c.translations[(size_t)f * 9] = pm_vec3_make(0.03f * sinf(6.0f * t), 0.95f, 1.2f * t);
        c.rotations[(size_t)f * 9 + 1] = pm_quat_from_axis_angle(AX, 0.4f * sinf(6.0f * t));
        c.rotations[(size_t)f * 9 + 4] = pm_quat_from_axis_angle(AX, -0.4f * sinf(6.0f * t));
    }
    pm_root_track track;
    PM_ASSERT_OK(pm_root_track_extract(&track, &c, NULL, NULL, NULL));
    assert_int_equal(track.frame_count, 60);
    pm_clip_survey survey;
    PM_ASSERT_OK(pm_clip_survey_compute(&survey, &c, NULL));
    for (int f = 5; f < 55; f++) {
        pm_transform r = track.frames[f];
        assert_true(fabsf(r.translation.y - survey.floor_height) < 1e-5f);
        assert_true(fabsf(r.translation.z - 1.2f * (float)f / 30.0f) < 0.01f);
        assert_true(fabsf(r.translation.x) < 0.03f); /* smoothing removes most of the sway */
        pm_test_assert_vec3_near(pm_quat_rotate(r.rotation, AZ), AZ, 0.01f);
    }
    pm_root_track_destroy(&track);
    pm_clip_destroy(&c);
}

/* A clip cut mid-stride (most locomotion takes) keeps its pace to its first and last frames: the
 * smoothing reads a straight line through the frames near an end instead of repeating the end
 * frame, which held the root back to about half the hips' speed there (5 cm behind them at
 * 1.2 m/s here, 16 cm in a Bandai dash), and keeps turning at a steady turn's rate. */
static void test_root_keeps_pace_at_the_ends(void **state) {
    (void)state;
    pm_clip c;
    pm_test_biped_clip(&c, 60, 1.0f / 30.0f);
    for (int f = 0; f < 60; f++) {
        float t = (float)f / 30.0f, a = 0.6f * t; /* 1.2 m/s along a turn of 0.6 rad/s */
        c.translations[(size_t)f * 9] = pm_vec3_make(2.0f - 2.0f * cosf(a), 0.95f, 2.0f * sinf(a));
        c.rotations[(size_t)f * 9] = pm_quat_from_yaw(a);
    }
    pm_root_track track;
    PM_ASSERT_OK(pm_root_track_extract(&track, &c, NULL, NULL, NULL));
    for (int f = 0; f < 60; f++) {
        float a = 0.6f * (float)f / 30.0f;
        pm_vec3 p = track.frames[f].translation;
        /* (a Gaussian cuts a curve's corner by a few millimetres, at the ends as in the middle) */
        if (fabsf(p.x - (2.0f - 2.0f * cosf(a))) > 0.01f || fabsf(p.z - 2.0f * sinf(a)) > 0.01f)
            fail_msg("frame %d: root at (%g, %g), the hips at (%g, %g)", f, (double)p.x, (double)p.z,
                     (double)(2.0f - 2.0f * cosf(a)), (double)(2.0f * sinf(a)));
        pm_test_assert_vec3_near(pm_quat_rotate(track.frames[f].rotation, AZ), pm_vec3_make(sinf(a), 0, cosf(a)), 2e-3f);
    }
    for (int end = 0; end < 2; end++) {
        int f = end ? 58 : 0;
        float speed = pm_vec3_length(pm_vec3_sub(track.frames[f + 1].translation, track.frames[f].translation)) * 30.0f;
        assert_float_equal(speed, 1.2f, 0.02);
    }
    pm_root_track_destroy(&track);
    pm_clip_destroy(&c);
}

static void test_root_turning_walk(void **state) {
    (void)state;
    pm_clip c;
    pm_test_biped_clip(&c, 90, 1.0f / 30.0f);
    /* A quarter circle of radius 2 m: heading turns from +Z towards +X. */
    for (int f = 0; f < 90; f++) {
        float a = 0.5f * PM_PI * (float)f / 89.0f;
        c.translations[(size_t)f * 9] = pm_vec3_make(2.0f - 2.0f * cosf(a), 0.95f, 2.0f * sinf(a));
        c.rotations[(size_t)f * 9] = pm_quat_from_yaw(a);
    }
    pm_root_def def = pm_default_root_def();
    def.facing_smoothing = 0.0f;
    pm_root_track track;
    PM_ASSERT_OK(pm_root_track_extract(&track, &c, &def, NULL, NULL));
    float last = -1.0f;
    for (int f = 0; f < 90; f++) {
        float a = 0.5f * PM_PI * (float)f / 89.0f;
        pm_vec3 fwd = pm_quat_rotate(track.frames[f].rotation, AZ);
        pm_test_assert_vec3_near(fwd, pm_vec3_make(sinf(a), 0, cosf(a)), 1e-3f);
        float yaw = atan2f(fwd.x, fwd.z);
        assert_true(yaw >= last - 1e-4f);
        last = yaw;
    }
    pm_root_track_destroy(&track);
    /* Facing from the hips axis gives the same here. */
    def.facing_mode = PM_FACING_HIPS_AXIS;
    PM_ASSERT_OK(pm_root_track_extract(&track, &c, &def, NULL, NULL));
    pm_test_assert_vec3_near(pm_quat_rotate(track.frames[89].rotation, AZ), AX, 1e-3f);
    pm_root_track_destroy(&track);
    pm_clip_destroy(&c);
}


/* Frame times as files store them: the end of a clip whose rate divides the new one must stay
 * the last frame, however long the clip. */
static void check_resample_count(float frame_time, int frames, float fps, int expect) {
    pm_clip c, r;
    pm_test_ramp_clip(&c, frames, frame_time);
    PM_ASSERT_OK(pm_clip_resample(&r, &c, fps, NULL));
    if (r.frame_count != expect)
        fail_msg("%d frames of %.9g s at %g fps: %d frames, expected %d", frames, (double)frame_time, (double)fps,
                 r.frame_count, expect);
    /* Never past the end by half a new frame, never short of it by a whole one. */
    double end = (double)(frames - 1) * frame_time, last = (double)(r.frame_count - 1) / fps;
    assert_true(last < end + 0.5 / fps);
    assert_true(last > end - 1.0 / fps);
    pm_test_assert_vec3_near(r.translations[0], c.translations[0], 0);
    pm_clip_destroy(&r);
    pm_clip_destroy(&c);
}

static void test_resample_keeps_the_last_frame(void **state) {
    (void)state;
    /* 30 -> 60 with "Frame Time: 0.0333333": 194 source steps are 388 new ones. */
    check_resample_count(0.0333333f, 195, 60.0f, 389);
    check_resample_count(0.0333333f, 7001, 60.0f, 14001); /* long: the float error is 0.013 frames */
    check_resample_count(0.033333f, 10001, 60.0f, 20001); /* 6 digits: 0.2 frames short at the end */
    check_resample_count(1.0f / 30.0f, 4, 60.0f, 7);
    check_resample_count(0.041667f, 97, 60.0f, 241);      /* 24 -> 60 (5/2), a little above 1/24 */
    check_resample_count(0.041667f, 98, 60.0f, 243);      /* 97 steps = 242.5 new: the half is dropped */
    check_resample_count(0.0083333f, 121, 30.0f, 31);     /* 120 -> 30 */
    check_resample_count(0.0083333f, 123, 30.0f, 31);     /* 122 steps = 30.5 new */
    check_resample_count(0.008333f, 4001, 30.0f, 1001);   /* 4e-5 short of 1/120 */
    check_resample_count(0.00833333f, 2401, 60.0f, 1201);
    check_resample_count(0.04f, 26, 30.0f, 31);           /* 25 -> 30 (6/5) */
    /* A rate merely close to a simple ratio is not stretched to reach it: 30.3 fps to 60 ends
     * on the last new frame before the end (199 x 60 / 30.3 = 394.06). */
    check_resample_count(1.0f / 30.3f, 200, 60.0f, 395);

    /* The last new frame is the source's last frame, not an interpolation short of it. */
    pm_clip c, r;
    pm_test_ramp_clip(&c, 195, 0.0333333f);
    PM_ASSERT_OK(pm_clip_resample(&r, &c, 60.0f, NULL));
    pm_test_assert_vec3_near(r.translations[(size_t)388 * 9], c.translations[(size_t)194 * 9], 0);
    pm_test_assert_vec3_near(r.translations[(size_t)387 * 9], pm_vec3_make(193.5f, 0.95f, 0), 1e-3f);
    pm_clip_destroy(&r);
    pm_clip_destroy(&c);
    /* On the exact ratio's grid frames do not drift: 3001 frames of "0.03333" (1e-4 short of 1/30)
     * at 30 fps are the source frames themselves, steps of one frame up to the last one (the plain
     * 30 fps grid drifts by 0.3 frames over the clip and would shorten the last step). */
    pm_test_ramp_clip(&c, 3001, 0.03333f);
    PM_ASSERT_OK(pm_clip_resample(&r, &c, 30.0f, NULL));
    assert_int_equal(r.frame_count, 3001);
    for (int f = 0; f < 3001; f += 250)
        pm_test_assert_vec3_near(r.translations[(size_t)f * 9], c.translations[(size_t)f * 9], 1e-3f);
    pm_test_assert_vec3_near(r.translations[(size_t)3000 * 9], c.translations[(size_t)3000 * 9], 1e-3f);
    assert_float_equal(r.translations[(size_t)3000 * 9].x - r.translations[(size_t)2999 * 9].x, 1.0, 1e-3);
    pm_clip_destroy(&r);
    pm_clip_destroy(&c);
    pm_test_ramp_clip(&c, 195, 0.0333333f);
    /* Looping clips keep their period to the nearest frame, as before. */
    c.looping = 1;
    PM_ASSERT_OK(pm_clip_resample(&r, &c, 60.0f, NULL));
    assert_int_equal(r.frame_count, 390);
    assert_int_equal(r.looping, 1);
    pm_clip_destroy(&r);
    pm_clip_destroy(&c);

    /* Minutes into a clip the exact ratio's frames still fall on the source frames and their
     * midpoints, exactly: sampled at float times they drifted by up to 2e-4 of a frame after two
     * minutes (a 2-minute LAFAN1 walk at 60 fps had foot velocities off by 1e-3 m/s). */
    static const struct {
        int frames;
        float frame_time, fps;
        int resampled;
        float step; /* source frames per new frame */
    } ratios[] = {{7001, 0.0333333f, 60.0f, 14001, 0.5f}, {28001, 0.0083333f, 30.0f, 7001, 4.0f}};
    for (int i = 0; i < 2; i++) {
        pm_test_ramp_clip(&c, ratios[i].frames, ratios[i].frame_time);
        PM_ASSERT_OK(pm_clip_resample(&r, &c, ratios[i].fps, NULL));
        assert_int_equal(r.frame_count, ratios[i].resampled);
        for (int f = 0; f < r.frame_count; f++)
            if (r.translations[(size_t)f * 9].x != ratios[i].step * (float)f)
                fail_msg("-> %g fps: new frame %d reads source frame %.9g, not %g", (double)ratios[i].fps, f,
                         (double)r.translations[(size_t)f * 9].x, (double)(ratios[i].step * (float)f));
        pm_clip_destroy(&r);
        pm_clip_destroy(&c);
    }

    /* The real file the fault was found with. */
    if (pm_test_mocap_dir()) {
        const char *path = pm_test_mocap_path("bandai-namco/dataset-1/dataset-1_walk_normal_001.bvh");
        pm_error err;
        if (pm_bvh_read_file(&c, path, NULL, &err) != PM_OK) fail_msg("%s", err.message);
        assert_int_equal(c.frame_count, 195);
        PM_ASSERT_OK(pm_clip_resample(&r, &c, 60.0f, NULL));
        assert_int_equal(r.frame_count, 389);
        assert_float_equal((r.frame_count - 1) * r.frame_time, 6.4667, 1e-3);
        int jc = c.skeleton.joint_count;
        pm_test_assert_vec3_near(r.translations[(size_t)388 * jc], c.translations[(size_t)194 * jc], 0);
        pm_clip_destroy(&r);
        pm_clip_destroy(&c);
    }
}

static void test_clip_argument_checks(void **state) {
    (void)state;
    pm_clip c, t;
    pm_test_ramp_clip(&c, 10, 0.1f);
    pm_error err;
    /* first + count past INT_MAX: an error, not a signed overflow. */
    assert_int_equal(pm_clip_trim(&t, &c, 1, INT_MAX, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "2147483648"));
    assert_int_equal(pm_clip_trim(&t, &c, INT_MAX, INT_MAX, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_clip_trim(&t, &c, 0, 0, &err), PM_ERR_INVALID_ARGUMENT);
    PM_ASSERT_OK(pm_clip_trim(&t, &c, 0, 10, NULL));
    pm_clip_destroy(&t);
    pm_clip empty;
    memset(&empty, 0, sizeof empty);
    assert_int_equal(pm_clip_trim(&t, &empty, 0, 1, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "not initialised"));

    /* Scale factors that would collapse, mirror or poison the clip are refused untouched. */
    pm_vec3 before = c.translations[9], offset = c.skeleton.rest_translations[1];
    const float bad[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, -1.0f};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(pm_clip_scale(&c, bad[i], NULL), PM_ERR_INVALID_ARGUMENT);
        pm_test_assert_vec3_near(c.translations[9], before, 0);
        pm_test_assert_vec3_near(c.skeleton.rest_translations[1], offset, 0);
        assert_true(c.unit_scale == 1.0f);
    }
    assert_int_equal(pm_clip_scale(&c, NAN, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_clip_scale: factor nan must be finite and > 0");
    assert_int_equal(pm_clip_scale(&c, -1.0f, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_clip_scale: factor -1 must be finite and > 0");
    assert_int_equal(pm_clip_scale(NULL, 2.0f, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_clip_scale: clip is NULL");
    assert_int_equal(pm_clip_scale(&empty, 2.0f, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "pm_clip_scale: the clip is not initialised"));
    assert_true(c.unit_scale == 1.0f);
    PM_ASSERT_OK(pm_clip_scale(&c, 2.0f, &err));
    pm_test_assert_vec3_near(c.translations[9], pm_vec3_scale(before, 2.0f), 0);

    /* NULL arguments are named, not reported as a joint out of range. */
    assert_int_equal(pm_skeleton_set_name(&c.skeleton, 0, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "name is NULL"));
    assert_int_equal(pm_skeleton_set_name(NULL, 0, "a", &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "skeleton is NULL"));
    assert_int_equal(pm_skeleton_set_name(&c.skeleton, 9, "a", &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "joint 9 is outside 0..8"));
    pm_clip_destroy(&c);
}

/* The plain forward kinematics checks the hierarchy like the job: a bad parent is an error and
 * nothing is written, where it used to make the joint a root silently. */
static void test_local_to_model_checks_parents(void **state) {
    (void)state;
    pm_quat rot[3] = {pm_quat_identity(), pm_quat_identity(), pm_quat_identity()};
    pm_vec3 pos[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    pm_transform w[3], sentinel[3];
    memset(sentinel, 0x5A, sizeof sentinel);
    const int32_t bad[][3] = {{-1, 0, 2}, {-1, 0, 5}, {-1, -2, 1}, {0, 0, 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memcpy(w, sentinel, sizeof w);
        assert_int_equal(pm_local_to_model(w, bad[i], 3, rot, pos, NULL), PM_ERR_INVALID_ARGUMENT);
        assert_memory_equal(w, sentinel, sizeof w);
    }
    const int32_t good[3] = {-1, 0, -1};
    assert_int_equal(pm_local_to_model(w, good, 0, rot, pos, NULL), PM_ERR_LIMIT);
    assert_int_equal(pm_local_to_model(w, good, PM_MAX_JOINTS + 1, rot, pos, NULL), PM_ERR_LIMIT);
    assert_int_equal(pm_local_to_model(NULL, good, 3, rot, pos, NULL), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_local_to_model(w, good, 3, rot, pos, NULL), PM_OK);
    /* The messages name the joint and its parent, or the argument. */
    pm_error lerr;
    const int32_t late[3] = {-1, 2, 1};
    memcpy(w, sentinel, sizeof w);
    assert_int_equal(pm_local_to_model(w, late, 3, rot, pos, &lerr), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(lerr.message, "pm_local_to_model: joint 1 has parent 2"));
    assert_memory_equal(w, sentinel, sizeof w);
    assert_int_equal(pm_local_to_model(w, bad[2], 3, rot, pos, &lerr), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(lerr.message, "joint 1 has parent -2"));
    assert_int_equal(pm_local_to_model(w, good, 0, rot, pos, &lerr), PM_ERR_LIMIT);
    assert_non_null(strstr(lerr.message, "joint_count 0 is outside 1..4096"));
    assert_int_equal(pm_local_to_model(NULL, good, 3, rot, pos, &lerr), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(lerr.message, "out_model is NULL"));
    assert_int_equal(pm_local_to_model(w, NULL, 3, rot, pos, &lerr), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(lerr.message, "parents is NULL"));
    assert_int_equal(pm_local_to_model(w, good, 3, NULL, pos, &lerr), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(lerr.message, "local_rotations is NULL"));
    assert_int_equal(pm_local_to_model(w, good, 3, rot, NULL, &lerr), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(lerr.message, "local_translations is NULL"));
    assert_int_equal(pm_local_to_model(w, good, 3, rot, pos, NULL), PM_OK);
    pm_test_assert_vec3_near(w[1].translation, pm_vec3_make(1, 1, 0), 0);
    pm_test_assert_vec3_near(w[2].translation, pm_vec3_make(0, 0, 1), 0);

    /* Mirroring a clip whose hierarchy is out of order is an error, not a read out of bounds. */
    pm_skeleton s;
    pm_clip c = pm_test_random_biped_clip(&s, 4, 3), m;
    c.skeleton.parents[2] = 7;
    pm_error err;
    assert_int_equal(pm_clip_mirror(&m, &c, NULL, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "parent"));
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

/* `def_ok`: the def is valid on its own and only fails against this clip. */
static void expect_root_error(const pm_clip *c, const pm_root_def *def, pm_result code, const char *words, int def_ok) {
    pm_root_track track;
    pm_error err;
    memset(&err, 0, sizeof err);
    pm_result r = pm_root_track_extract(&track, c, def, NULL, &err);
    if (r != code) fail_msg("expected %s for '%s', got %s (%s)", pm_result_string(code), words, pm_result_string(r), err.message);
    if (!strstr(err.message, words)) fail_msg("'%s' does not name '%s'", err.message, words);
    assert_null(track.frames);
    pm_root_track_destroy(&track);
    assert_int_equal(pm_root_def_validate(def, NULL) == PM_OK, def_ok);
}

static void test_root_def_checks(void **state) {
    (void)state;
    pm_skeleton s;
    pm_clip c = pm_test_random_biped_clip(&s, 20, 17);
    pm_root_def d = pm_default_root_def();
    d.hips_axis = pm_vec3_zero(); /* unused when facing from the legs */
    PM_ASSERT_OK(pm_root_def_validate(&d, NULL));
    d = pm_default_root_def();
    d.facing_mode = (pm_facing_mode)7;
    expect_root_error(&c, &d, PM_ERR_INVALID_ARGUMENT, "facing_mode 7", 0);
    d = pm_default_root_def();
    d.ground_mode = (pm_ground_mode)-1;
    expect_root_error(&c, &d, PM_ERR_INVALID_ARGUMENT, "ground_mode -1", 0);
    d = pm_default_root_def();
    d.facing_mode = PM_FACING_HIPS_AXIS;
    d.hips_axis = pm_vec3_zero();
    expect_root_error(&c, &d, PM_ERR_INVALID_ARGUMENT, "hips_axis (0, 0, 0) must have a length in 1e-6..1e6", 0);
    d.hips_axis = pm_vec3_make(1e30f, 0.0f, 0.0f); /* its square overflows */
    expect_root_error(&c, &d, PM_ERR_INVALID_ARGUMENT, "must have a length in", 0);
    d.hips_axis = pm_vec3_zero();
    d.hips_axis.y = NAN;
    expect_root_error(&c, &d, PM_ERR_INVALID_ARGUMENT, "hips_axis", 0);
    d = pm_default_root_def();
    d.left_upleg = d.right_upleg = 1;
    expect_root_error(&c, &d, PM_ERR_INVALID_ARGUMENT, "left_upleg and right_upleg are both joint 1", 0);
    d = pm_default_root_def();
    d.position_smoothing = NAN;
    expect_root_error(&c, &d, PM_ERR_INVALID_ARGUMENT, "position_smoothing", 0);
    d = pm_default_root_def();
    d.facing_smoothing = INFINITY;
    expect_root_error(&c, &d, PM_ERR_INVALID_ARGUMENT, "facing_smoothing", 0);
    d = pm_default_root_def();
    d.hips = -3;
    expect_root_error(&c, &d, PM_ERR_INVALID_ARGUMENT, "hips -3 is outside -1..", 0);
    /* Indices are checked against the clip's joints by the extraction. */
    d = pm_default_root_def();
    d.right_upleg = 9;
    expect_root_error(&c, &d, PM_ERR_INVALID_ARGUMENT, "right_upleg 9 is outside -1..8 (the joints of clip", 1);
    /* One leg given, the other found from the names, and the two the same joint. */
    d = pm_default_root_def();
    d.left_upleg = 4; /* RightUpLeg */
    expect_root_error(&c, &d, PM_ERR_INVALID_ARGUMENT, "both joint 4 ('RightUpLeg')", 1);
    /* A smoothing far longer than the clip is a wide average, not an int overflow (UBSan). */
    d = pm_default_root_def();
    d.position_smoothing = 1e30f;
    pm_root_track track;
    PM_ASSERT_OK(pm_root_track_extract(&track, &c, &d, NULL, NULL));
    for (int f = 0; f < track.frame_count; f++) {
        pm_vec3 t = track.frames[f].translation;
        assert_true(isfinite(t.x) && isfinite(t.y) && isfinite(t.z));
    }
    pm_root_track_destroy(&track);
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

/* ---- survey and validation ---- */

static void test_survey(void **state) {
    (void)state;
    pm_skeleton s;
    pm_clip c = pm_test_random_biped_clip(&s, 40, 5);
    pm_clip_survey sv;
    PM_ASSERT_OK(pm_clip_survey_compute(&sv, &c, NULL));
    assert_int_equal(sv.roles.hips, 0);
    assert_int_equal(sv.roles.left_foot, 3);
    assert_int_equal(sv.roles.right_upleg, 4);
    assert_int_equal(sv.roles.head, 8);
    assert_false(sv.first_frame_is_rest);
    for (int j = 1; j < 9; j++) c.rotations[j] = pm_quat_identity(); /* a T-pose lead-in */
    PM_ASSERT_OK(pm_clip_survey_compute(&sv, &c, NULL));
    assert_true(sv.first_frame_is_rest);
    /* The builder's test of the same, without the survey's kinematics. */
    int lead_in = 0;
    PM_ASSERT_OK(pm_clip_rest_lead_in(&lead_in, &c, NULL));
    assert_int_equal(lead_in, 1);
    c.rotations[4] = pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), 1.0f);
    PM_ASSERT_OK(pm_clip_rest_lead_in(&lead_in, &c, NULL));
    PM_ASSERT_OK(pm_clip_survey_compute(&sv, &c, NULL));
    assert_int_equal(lead_in, sv.first_frame_is_rest);
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quaternion_basics),
        cmocka_unit_test(test_euler_orders),
        cmocka_unit_test(test_euler_round_trip_random_and_gimbal),
        cmocka_unit_test(test_euler_order_of_channels),
        cmocka_unit_test(test_euler_contract_edges),
        cmocka_unit_test(test_euler_from_scaled_quaternion),
        cmocka_unit_test(test_forward_kinematics_chain),
        cmocka_unit_test(test_forward_kinematics_of_chains),
        cmocka_unit_test(test_sample_and_resample),
        cmocka_unit_test(test_trim_scale_z_up),
        cmocka_unit_test(test_floor_from_toe_tips),
        cmocka_unit_test(test_root_straight_walk),
        cmocka_unit_test(test_root_turning_walk),
        cmocka_unit_test(test_root_keeps_pace_at_the_ends),
        cmocka_unit_test(test_survey),
        cmocka_unit_test(test_resample_keeps_the_last_frame),
        cmocka_unit_test(test_clip_argument_checks),
        cmocka_unit_test(test_local_to_model_checks_parents),
        cmocka_unit_test(test_root_def_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
