/* Clip curves through the clip operations that keep them, and joint roles found on rigs that
 * name neither their hips nor their upper legs or glue their sides to the names (the rest of the
 * clip operations: test_anim.c). */
#include <stdio.h>
#include <string.h>

#include "support.h"

/* Adding a curve under a name the clip has replaces its values: one curve of that name, the
 * others untouched. */
static void test_add_curve_replaces_by_name(void **state) {
    (void)state;
    pm_clip c;
    pm_test_ramp_clip(&c, 5, 0.1f);
    const float speed[5] = {1, 2, 3, 4, 5}, lean[5] = {0, -1, -2, -3, -4}, faster[5] = {10, 20, 30, 40, 50};
    PM_ASSERT_OK(pm_clip_add_curve(&c, "speed", speed, NULL));
    PM_ASSERT_OK(pm_clip_add_curve(&c, "lean", lean, NULL));
    PM_ASSERT_OK(pm_clip_add_curve(&c, "speed", faster, NULL));
    assert_int_equal(c.curve_count, 2);
    assert_memory_equal(pm_clip_find_curve(&c, "speed")->values, faster, sizeof faster);
    assert_memory_equal(pm_clip_find_curve(&c, "lean")->values, lean, sizeof lean);
    assert_string_equal(c.curves[0].name, "speed"); /* replaced where it stood */
    PM_ASSERT_OK(pm_clip_validate(&c, NULL));
    pm_clip_destroy(&c); /* (ASan: the replaced values are freed) */
}

/* A trimmed clip keeps its curves, cut to the same frames as its poses. */
static void test_trim_keeps_curves(void **state) {
    (void)state;
    pm_clip c, t;
    pm_test_ramp_clip(&c, 8, 0.1f);
    float speed[8], lean[8];
    for (int f = 0; f < 8; f++) {
        speed[f] = (float)f;
        lean[f] = -0.5f * (float)f;
    }
    PM_ASSERT_OK(pm_clip_add_curve(&c, "speed", speed, NULL));
    PM_ASSERT_OK(pm_clip_add_curve(&c, "lean", lean, NULL));
    PM_ASSERT_OK(pm_clip_trim(&t, &c, 3, 4, NULL));
    assert_int_equal(t.frame_count, 4);
    assert_int_equal(t.curve_count, 2);
    assert_memory_equal(pm_clip_find_curve(&t, "speed")->values, speed + 3, 4 * sizeof(float));
    assert_memory_equal(pm_clip_find_curve(&t, "lean")->values, lean + 3, 4 * sizeof(float));
    assert_true(t.translations[0].x == 3.0f); /* the poses from the same frame */
    PM_ASSERT_OK(pm_clip_validate(&t, NULL));
    /* In place too. */
    PM_ASSERT_OK(pm_clip_trim(&c, &c, 6, 2, NULL));
    assert_memory_equal(pm_clip_find_curve(&c, "lean")->values, lean + 6, 2 * sizeof(float));
    pm_clip_destroy(&t);
    pm_clip_destroy(&c);
}

/* The hips and both legs' roles found in a skeleton. */
static void assert_leg_roles(const pm_skeleton_roles *r, int hips, int left_upleg, int right_upleg, int left_foot,
                             int right_foot) {
    assert_int_equal(r->hips, hips);
    assert_int_equal(r->left_upleg, left_upleg);
    assert_int_equal(r->right_upleg, right_upleg);
    assert_int_equal(r->left_foot, left_foot);
    assert_int_equal(r->right_foot, right_foot);
}

/* A rig whose hips and upper legs carry no role word: the upper legs are the feet's
 * grandparents (foot <- knee <- upper leg) and the hips their common ancestor - not the first
 * root, a still "Origin" above it. Features reading @hips follow. */
static void test_roles_from_the_feet_up(void **state) {
    (void)state;
    enum { ORIGIN, BODY, LLEG, LKNEE, LFOOT, RLEG, RKNEE, RFOOT, CHEST, JOINTS };
    static const char *const names[JOINTS] = {"Origin", "Body", "LeftLegA", "LeftKnee", "LeftFoot", "RightLegA", "RightKnee",
                                              "RightFoot", "Chest"};
    static const int parents[JOINTS] = {-1, ORIGIN, BODY, LLEG, LKNEE, BODY, RLEG, RKNEE, BODY};
    pm_skeleton s;
    pm_test_named_skeleton(&s, JOINTS, names, parents);
    pm_skeleton_roles r;
    pm_skeleton_find_roles(&r, &s);
    assert_leg_roles(&r, BODY, LLEG, RLEG, LFOOT, RFOOT);
    assert_int_equal(pm_features_resolve_bone(&s, "@hips"), BODY);
    assert_int_equal(pm_features_resolve_bone(&s, "@right_upleg"), RLEG);
    /* One leg too short to have an upper leg above its knee: no common ancestor, the first root. */
    s.parents[LLEG] = -1;
    s.parents[LKNEE] = -1;
    s.parents[LFOOT] = LKNEE;
    pm_skeleton_find_roles(&r, &s);
    assert_int_equal(r.left_upleg, -1);
    assert_int_equal(r.right_upleg, RLEG);
    assert_int_equal(r.hips, ORIGIN);
    pm_skeleton_destroy(&s);
}

/* The weak side markers - a capital L or R glued to a lower-case letter (HandL, Lfoot) or an l/r
 * prefix before a capital (LHipJoint) - mark a side only where the counterpart exists, for roles
 * as for mirror maps: under a namespace such as "Rig:" or "RIG:" the hips and head are centre
 * joints still, and "Rig:FootL" / "Rig:FootR" are the feet (the namespace's own R is tried first
 * and passed over). */
static void test_roles_of_glued_sides(void **state) {
    (void)state;
    enum { ROOT, HIPS, LLEG, LKNEE, LFOOT, RLEG, RKNEE, RFOOT, SPINE, HEAD, JOINTS };
    static const char *const names[JOINTS] = {"Root", "Hips",   "UpLegL", "KneeL", "FootL",
                                              "UpLegR", "KneeR", "FootR", "Spine", "Head"};
    static const int parents[JOINTS] = {-1, ROOT, HIPS, LLEG, LKNEE, HIPS, RLEG, RKNEE, HIPS, SPINE};
    static const char *const namespaces[] = {"Rig:", "RIG:", "Lola_", ""};
    for (int ns = 0; ns < 4; ns++) {
        char spaced[JOINTS][64];
        const char *spaced_names[JOINTS];
        for (int j = 0; j < JOINTS; j++) {
            snprintf(spaced[j], sizeof spaced[j], "%s%s", namespaces[ns], names[j]);
            spaced_names[j] = spaced[j];
        }
        pm_skeleton s;
        pm_test_named_skeleton(&s, JOINTS, spaced_names, parents);
        pm_skeleton_roles r;
        pm_skeleton_find_roles(&r, &s);
        assert_leg_roles(&r, HIPS, LLEG, RLEG, LFOOT, RFOOT);
        assert_int_equal(r.head, HEAD);
        assert_int_equal(pm_features_resolve_bone(&s, "@head"), HEAD);
        int32_t map[JOINTS];
        assert_int_equal(pm_skeleton_find_mirror_map(map, &s), 3);
        assert_int_equal(map[HEAD], HEAD);
        assert_int_equal(map[ROOT], ROOT);
        assert_int_equal(map[LFOOT], RFOOT);
        assert_int_equal(map[RKNEE], LKNEE);
        pm_skeleton_destroy(&s);
    }
}

/* Several joints may name the same role: the hips are the best-matching word and, among equal
 * words, the shallowest (first) joint - a rig's "Hips" rather than its "HipsTwist" helper -
 * and the head and feet are the first of their names, not "HeadTop_End" or "LeftFoot_End"
 * leaves below them. */
static void test_roles_prefer_the_first_match(void **state) {
    (void)state;
    enum { ROOT, HIPS, TWIST, PELVIS, SPINE, HEAD, HEADTOP, LUP, LKNEE, LFOOT, LEND, RUP, RKNEE, RFOOT, JOINTS };
    static const char *const names[JOINTS] = {"Root",     "Hips",    "HipsTwist",    "Pelvis",     "Spine",
                                              "Head",     "HeadTop_End", "LeftUpLeg", "LeftLeg", "LeftFoot",
                                              "LeftFoot_End", "RightUpLeg", "RightLeg", "RightFoot"};
    static const int parents[JOINTS] = {-1, ROOT, HIPS, HIPS, HIPS, SPINE, HEAD, HIPS, LUP, LKNEE, LFOOT, HIPS, RUP, RKNEE};
    pm_skeleton s;
    pm_test_named_skeleton(&s, JOINTS, names, parents);
    pm_skeleton_roles r;
    pm_skeleton_find_roles(&r, &s);
    assert_int_equal(r.hips, HIPS);
    assert_int_equal(r.head, HEAD);
    assert_int_equal(r.left_foot, LFOOT);
    assert_int_equal(r.right_foot, RFOOT);
    pm_skeleton_destroy(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_curve_replaces_by_name),
        cmocka_unit_test(test_trim_keeps_curves),
        cmocka_unit_test(test_roles_from_the_feet_up),
        cmocka_unit_test(test_roles_of_glued_sides),
        cmocka_unit_test(test_roles_prefer_the_first_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
