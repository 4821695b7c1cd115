/* Layered blend per bone (BL2): branch filters expanded to per-joint weights, masks that keep the
 * base where they are 0, per-joint lerps, hemisphere alignment of each layer, errors (the N-pose
 * blend job: test_blend_jobs.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pose_support.h"

static void test_branch_filters(void **state) {
    (void)state;
    pm_skeleton sk;
    make_skeleton(&sk);
    float w[J_COUNT];
    pm_branch_filter f = spine_filter();
    PM_ASSERT_OK(pm_branch_filters_expand(w, &sk, &f, 1, NULL));
    for (int j = 0; j < J_COUNT; j++) {
        int in_spine = j == J_SPINE || j == J_CHEST || j == J_NECK || j == J_HEAD || j == J_LARM || j == J_LHAND;
        assert_true(w[j] == (in_spine ? 1.0f : 0.0f));
    }
    /* Ramp over three levels, limited to two levels below the bone. */
    f.blend_depth = 3;
    f.max_depth = 2;
    PM_ASSERT_OK(pm_branch_filters_expand(w, &sk, &f, 1, NULL));
    assert_true(fabsf(w[J_SPINE] - 1.0f / 3.0f) < 1e-6f);
    assert_true(fabsf(w[J_CHEST] - 2.0f / 3.0f) < 1e-6f);
    assert_true(fabsf(w[J_NECK] - 1.0f) < 1e-6f && fabsf(w[J_LARM] - 1.0f) < 1e-6f);
    assert_true(w[J_HEAD] == 0.0f && w[J_LHAND] == 0.0f && w[J_HIPS] == 0.0f);
    /* Several filters: the largest weight wins. */
    pm_branch_filter two[2] = {pm_default_branch_filter(), pm_default_branch_filter()};
    two[0].bone = "LeftUpLeg";
    two[0].weight = 0.25f;
    two[1].bone = "LeftLeg";
    PM_ASSERT_OK(pm_branch_filters_expand(w, &sk, two, 2, NULL));
    assert_true(w[J_LUPLEG] == 0.25f && w[J_LLEG] == 1.0f && w[J_LFOOT] == 1.0f && w[J_RLEG] == 0.0f);
    /* In either order: a later, lighter filter over the same joints does not lower them. */
    pm_branch_filter swapped[2] = {two[1], two[0]};
    PM_ASSERT_OK(pm_branch_filters_expand(w, &sk, swapped, 2, NULL));
    assert_true(w[J_LUPLEG] == 0.25f && w[J_LLEG] == 1.0f && w[J_LFOOT] == 1.0f && w[J_RLEG] == 0.0f);
    pm_error e;
    f.bone = "Tail";
    assert_int_equal(pm_branch_filters_expand(w, &sk, &f, 1, &e), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(e.message, "Tail"));
    /* A bad filter after a good one: nothing written (the good one's branch was). */
    pm_branch_filter good_bad[2] = {spine_filter(), f};
    for (int j = 0; j < J_COUNT; j++) w[j] = -3.0f;
    assert_int_equal(pm_branch_filters_expand(w, &sk, good_bad, 2, &e), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(e.message, "branch filter 1: the skeleton has no joint named 'Tail'"));
    for (int j = 0; j < J_COUNT; j++) assert_true(w[j] == -3.0f);
    /* Roles name bones as in a schema: "@left_upleg" is LeftUpLeg's branch here. */
    float by_name[J_COUNT];
    pm_branch_filter leg = pm_default_branch_filter();
    leg.bone = "LeftUpLeg";
    PM_ASSERT_OK(pm_branch_filters_expand(by_name, &sk, &leg, 1, NULL));
    leg.bone = "@left_upleg";
    PM_ASSERT_OK(pm_branch_filters_expand(w, &sk, &leg, 1, NULL));
    assert_memory_equal(w, by_name, sizeof w);
    assert_true(w[J_LFOOT] == 1.0f && w[J_HIPS] == 0.0f);
    leg.bone = "@left_knee";
    assert_int_equal(pm_branch_filters_expand(w, &sk, &leg, 1, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "branch filter 0: unknown role '@left_knee' (roles: @hips"));
    leg.bone = "@left_toe";
    assert_int_equal(pm_branch_filters_expand(w, &sk, &leg, 1, &e), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(e.message, "no joint of the skeleton takes the role '@left_toe'"));
    f.bone = "Spine";
    f.weight = NAN;
    assert_int_equal(pm_branch_filters_expand(w, &sk, &f, 1, &e), PM_ERR_INVALID_ARGUMENT);
    pm_skeleton_destroy(&sk);
}

static void test_layered_spine_mask_keeps_legs(void **state) {
    (void)state;
    pm_skeleton sk;
    make_skeleton(&sk);
    pm_test_rng rng = {21};
    pm_soa_transform *base = new_random_pose(&rng, 2.0f), *layer = new_random_pose(&rng, 2.0f), *out = new_pose();
    float mask[J_COUNT];
    pm_branch_filter f = spine_filter();
    PM_ASSERT_OK(pm_branch_filters_expand(mask, &sk, &f, 1, NULL));
    pm_blend_layer l = {layer, 1.0f, mask};
    run_layered(out, base, &l, 1, 0);
    static const int legs[] = {J_HIPS, J_LUPLEG, J_LLEG, J_LFOOT, J_RUPLEG, J_RLEG, J_RFOOT};
    for (size_t i = 0; i < sizeof legs / sizeof legs[0]; i++) {
        int j = legs[i];
        pm_quat a = pm_pose_rotation(out, j), b = pm_pose_rotation(base, j);
        pm_vec3 ta = pm_pose_translation(out, j), tb = pm_pose_translation(base, j);
        assert_true(a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w);
        assert_true(ta.x == tb.x && ta.y == tb.y && ta.z == tb.z);
    }
    static const int upper[] = {J_SPINE, J_CHEST, J_NECK, J_HEAD, J_LARM, J_LHAND};
    for (size_t i = 0; i < sizeof upper / sizeof upper[0]; i++) {
        assert_quat_near(pm_pose_rotation(out, upper[i]), pm_pose_rotation(layer, upper[i]), 1e-5f);
        assert_vec_near(pm_pose_translation(out, upper[i]), pm_pose_translation(layer, upper[i]), 1e-5f);
    }
    FREE_POSES(base, layer, out);
    pm_skeleton_destroy(&sk);
}

static void test_layered_is_per_joint_lerp(void **state) {
    (void)state;
    pm_test_rng rng = {23};
    pm_soa_transform *base = new_random_pose(&rng, 2.0f), *layer = new_random_pose(&rng, 2.0f), *out = new_pose();
    float mask[J_COUNT];
    for (int j = 0; j < J_COUNT; j++) mask[j] = pm_test_rng_float(&rng);
    pm_blend_layer l = {layer, 0.8f, mask};
    run_layered(out, base, &l, 1, 1);
    for (int j = 0; j < J_COUNT; j++) {
        float w = 0.8f * mask[j];
        assert_quat_near(pm_pose_rotation(out, j), pm_quat_nlerp(pm_pose_rotation(base, j), pm_pose_rotation(layer, j), w),
                         2e-5f);
        assert_vec_near(pm_pose_translation(out, j),
                        pm_vec3_lerp(pm_pose_translation(base, j), pm_pose_translation(layer, j), w), 2e-5f);
    }
    /* Root motion belongs to the base unless asked: only the root joint's translation changes. */
    run_layered(out, base, &l, 1, 0);
    assert_vec_near(pm_pose_translation(out, 0), pm_pose_translation(base, 0), 0.0f);
    assert_quat_near(pm_pose_rotation(out, 0),
                     pm_quat_nlerp(pm_pose_rotation(base, 0), pm_pose_rotation(layer, 0), 0.8f * mask[0]), 2e-5f);
    /* Two full layers on the same joints: normalised among themselves, the base left out - so
     * blended on their own short arc, wherever the base is (aligned each to the base, layers more
     * than half a turn apart went the long way: this test expected that until an audit). */
    pm_soa_transform *layer2 = new_random_pose(&rng, 2.0f);
    pm_blend_layer two[2] = {{layer, 1.0f, NULL}, {layer2, 1.0f, NULL}};
    run_layered(out, base, two, 2, 1);
    for (int j = 0; j < J_COUNT; j++) {
        pm_quat a = pm_pose_rotation(layer, j), b = pm_quat_abs_near(pm_pose_rotation(layer2, j), a);
        pm_quat ref = pm_quat_normalize(pm_quat_make(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w));
        assert_quat_near(pm_pose_rotation(out, j), ref, 2e-5f);
        assert_vec_near(pm_pose_translation(out, j),
                        pm_vec3_lerp(pm_pose_translation(layer, j), pm_pose_translation(layer2, j), 0.5f), 2e-5f);
    }
    /* The case itself: layers turned +100 and -100 degrees about X from the base, 160 degrees apart
     * the short way (through the half turn), 200 the long way (through the base). */
    pm_soa_transform *identity = new_pose(), *plus = new_pose(), *minus = new_pose();
    for (int j = 0; j < J_COUNT; j++) {
        pm_pose_set_joint(identity, j, pm_quat_identity(), pm_vec3_zero());
        pm_pose_set_joint(plus, j, pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), 1.745329f), pm_vec3_zero());
        pm_pose_set_joint(minus, j, pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), -1.745329f), pm_vec3_zero());
    }
    pm_blend_layer apart[2] = {{plus, 1.0f, NULL}, {minus, 1.0f, NULL}};
    run_layered(out, identity, apart, 2, 1);
    for (int j = 0; j < J_COUNT; j++) assert_quat_near(pm_pose_rotation(out, j), pm_quat_make(1, 0, 0, 0), 1e-5f);
    FREE_POSES(identity, plus, minus);
    /* A zero-weight layer is not read. */
    pm_blend_layer ghost[2] = {{NULL, 0.0f, NULL}, {layer, 0.8f, mask}};
    pm_soa_transform *o2 = new_pose();
    run_layered(o2, base, ghost, 2, 1);
    run_layered(out, base, &l, 1, 1);
    assert_true(poses_bitwise_equal(out, o2, J_COUNT));
    FREE_POSES(o2, layer2, base, layer, out);
}

/* Two inputs holding one rotation (a half turn about X, stored with opposite signs and a hair
 * apart) and a third half a turn from both: the two are brought to one hemisphere whatever the
 * third weighs. Taking a negligible first input as the reference left the sign of a zero dot to
 * decide, and the two cancelled into a half turn about Y, or NaN (found by an audit). */
static void test_blend_hemisphere_reference(void **state) {
    (void)state;
    pm_soa_transform *a = new_pose(), *b = new_pose(), *c = new_pose(), *out = new_pose();
    pm_quat half_x = pm_quat_make(1.0f, 0.0f, 0.0f, 0.0f);
    for (int j = 0; j < J_COUNT; j++) {
        pm_pose_set_joint(a, j, pm_quat_identity(), pm_vec3_zero());
        pm_pose_set_joint(b, j, half_x, pm_vec3_zero());
        pm_quat other = j % 2 ? pm_quat_neg(half_x) : pm_quat_normalize(pm_quat_make(-1.0f, 0.001f * (float)j, 0.0f, 0.0f));
        pm_pose_set_joint(c, j, other, pm_vec3_zero());
    }
    static const float first[] = {1e-30f, 1e-6f, 0.01f};
    for (size_t k = 0; k < sizeof first / sizeof first[0]; k++) {
        pm_blend_input in[3] = {{a, first[k]}, {b, 1.0f}, {c, 1.0f}};
        run_blend(out, in, 3);
        for (int j = 0; j < J_COUNT; j++) {
            pm_quat q = pm_pose_rotation(out, j);
            if (!(quat_angle(q, half_x) < 0.03f))
                fail_msg("first weight %g, joint %d: %g %g %g %g", (double)first[k], j, (double)q.x, (double)q.y, (double)q.z,
                         (double)q.w);
        }
    }
    /* The same for layers that together weigh 1 or more, where the base weighs little or nothing. */
    static const float weights[][2] = {{1.0f, 1.0f}, {0.5f, 0.5f}, {0.6f, 0.39f}};
    for (size_t k = 0; k < sizeof weights / sizeof weights[0]; k++) {
        pm_blend_layer layers[2] = {{b, weights[k][0], NULL}, {c, weights[k][1], NULL}};
        run_layered(out, a, layers, 2, 1);
        for (int j = 0; j < J_COUNT; j++) {
            pm_quat q = pm_pose_rotation(out, j);
            if (!(quat_angle(q, half_x) < 0.03f))
                fail_msg("layers %g + %g, joint %d: %g %g %g %g", (double)weights[k][0], (double)weights[k][1], j, (double)q.x,
                         (double)q.y, (double)q.z, (double)q.w);
        }
    }
    FREE_POSES(a, b, c, out);
}

static void test_layered_errors(void **state) {
    (void)state;
    pm_soa_transform *base = new_pose(), *out = new_pose();
    float mask[J_COUNT];
    for (int j = 0; j < J_COUNT; j++) mask[j] = 0.5f;
    mask[7] = NAN;
    pm_blend_layer l = {base, 1.0f, mask};
    pm_layered_blend_job job = layered_job(base, &l, 1, out);
    pm_error e;
    assert_int_equal(pm_layered_blend_job_run(&job, &e), PM_ERR_NUMERIC);
    assert_non_null(strstr(e.message, "joint 7"));
    mask[7] = 1.5f;
    assert_int_equal(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    mask[7] = 0.5f;
    l.weight = NAN;
    assert_int_equal(pm_layered_blend_job_run(&job, &e), PM_ERR_NUMERIC);
    l.weight = 1.0f;
    job.root_joint = J_COUNT;
    assert_int_equal(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    job.root_joint = 0;
    job.blend_root_motion = 7;
    assert_int_equal(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "blend_root_motion"));
    job.blend_root_motion = 0;
    job.layers = NULL;
    assert_int_equal(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "layers is NULL"));
    job.layers = &l;
    PM_ASSERT_OK(pm_layered_blend_job_run(&job, NULL));
    FREE_POSES(base, out);
}

/* A bad mask writing in place: validate reports it, and run reports it before touching the base
 * (or the layer) that is also the output. */
static void test_layered_bad_mask_in_place(void **state) {
    (void)state;
    pm_test_rng rng = {29};
    const size_t bytes = sizeof(pm_soa_transform) * (size_t)pm_soa_count(J_COUNT);
    pm_soa_transform *base = new_random_pose(&rng, 2.0f), *layer = new_random_pose(&rng, 2.0f);
    pm_soa_transform *keep_base = new_pose(), *keep_layer = new_pose();
    memcpy(keep_base, base, bytes);
    memcpy(keep_layer, layer, bytes);
    float mask[J_COUNT], ok_mask[J_COUNT];
    for (int j = 0; j < J_COUNT; j++) mask[j] = ok_mask[j] = 0.5f;
    static const float bad_values[] = {NAN, 1.5f, -0.25f, INFINITY};
    for (size_t v = 0; v < sizeof bad_values / sizeof bad_values[0]; v++) {
        mask[J_COUNT - 1] = bad_values[v];
        for (int layers = 1; layers <= 2; layers++)
            for (int target = 0; target < 2; target++) {
                pm_blend_layer l[2] = {{layer, 0.7f, ok_mask}, {layer, 0.6f, mask}};
                pm_layered_blend_job job = layered_job(base, layers == 1 ? &l[1] : l, layers, target ? layer : base);
                pm_error e;
                pm_result expect = isfinite(bad_values[v]) ? PM_ERR_INVALID_ARGUMENT : PM_ERR_NUMERIC;
                assert_int_equal(pm_layered_blend_job_validate(&job, &e), expect);
                const char *expect_text = layers == 1 ? "layer 0's weight for joint 12" : "layer 1's weight for joint 12";
                assert_non_null(strstr(e.message, expect_text));
                assert_int_equal(pm_layered_blend_job_run(&job, &e), expect);
                assert_memory_equal(base, keep_base, bytes);
                assert_memory_equal(layer, keep_layer, bytes);
            }
    }
    /* A separate output: the running check reports it after the blend; the inputs stay intact. */
    pm_soa_transform *out = new_pose();
    pm_blend_layer l = {layer, 1.0f, mask};
    pm_layered_blend_job job = layered_job(base, &l, 1, out);
    assert_int_equal(pm_layered_blend_job_run(&job, NULL), PM_ERR_NUMERIC);
    assert_memory_equal(base, keep_base, bytes);
    assert_memory_equal(layer, keep_layer, bytes);
    /* A zero-weight layer's mask is not read. */
    l.weight = 0.0f;
    PM_ASSERT_OK(pm_layered_blend_job_validate(&job, NULL));
    job.output = base;
    PM_ASSERT_OK(pm_layered_blend_job_run(&job, NULL));
    assert_memory_equal(base, keep_base, bytes);
    FREE_POSES(out, base, layer, keep_base, keep_layer);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branch_filters),
        cmocka_unit_test(test_layered_spine_mask_keeps_legs),
        cmocka_unit_test(test_layered_is_per_joint_lerp),
        cmocka_unit_test(test_blend_hemisphere_reference),
        cmocka_unit_test(test_layered_errors),
        cmocka_unit_test(test_layered_bad_mask_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
