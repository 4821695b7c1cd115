/* Additive layers (BL4): delta = source * base^-1, apply target * delta^w, and why the order matters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pose_support.h"

static void extract(pm_soa_transform *delta, const pm_soa_transform *source, const pm_soa_transform *base) {
    pm_additive_extract_job job = extract_job(source, base, delta);
    PM_ASSERT_OK(pm_additive_extract_job_run(&job, NULL));
}

static void apply(pm_soa_transform *out, const pm_soa_transform *target, const pm_soa_transform *delta, float w,
                  const float *mask) {
    pm_additive_apply_job job = apply_job(target, delta, out);
    job.weight = w;
    job.joint_weights = mask;
    PM_ASSERT_OK(pm_additive_apply_job_run(&job, NULL));
}

/* A random source and base (up to 3 rad per joint) and the delta extracted between them. */
static void random_delta(pm_soa_transform *source, pm_soa_transform *base, pm_soa_transform *delta, pm_test_rng *rng) {
    random_pose(source, J_COUNT, rng, 3.0f);
    random_pose(base, J_COUNT, rng, 3.0f);
    extract(delta, source, base);
}

static void test_additive_round_trip(void **state) {
    (void)state;
    pm_test_rng rng = {31};
    pm_soa_transform *source = new_pose(), *base = new_pose(), *delta = new_pose(), *out = new_pose();
    for (int trial = 0; trial < 20; trial++) {
        random_delta(source, base, delta, &rng);
        apply(out, base, delta, 1.0f, NULL);
        for (int j = 0; j < J_COUNT; j++) {
            assert_quat_near(pm_pose_rotation(out, j), pm_pose_rotation(source, j), 1e-5f);
            assert_vec_near(pm_pose_translation(out, j), pm_pose_translation(source, j), 1e-5f);
        }
        /* Weight 0: the target, and the delta is not read. */
        pm_additive_apply_job job = apply_job(base, NULL, out);
        job.weight = 0.0f;
        PM_ASSERT_OK(pm_additive_apply_job_run(&job, NULL));
        assert_true(poses_bitwise_equal(out, base, J_COUNT));
    }
    FREE_POSES(source, base, delta, out);
}

static void test_additive_order_matters(void **state) {
    (void)state;
    /* Base: identity; source: a 30 degree nod about the joint's own X. Target: the joint turned
     * 90 degrees about Y. Applied on the right (local space) the nod stays about the joint's own X;
     * applied on the left it would be about the parent's X, which after the turn is a roll. */
    pm_soa_transform *base = new_pose(), *source = new_pose(), *target = new_pose(), *delta = new_pose();
    pm_soa_transform *out = new_pose();
    pm_quat nod = pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), 0.5236f);
    pm_quat turn = pm_quat_from_axis_angle(pm_vec3_make(0, 1, 0), 1.5708f);
    pm_quat b0 = pm_quat_from_axis_angle(pm_vec3_make(0, 0, 1), 0.4f);
    for (int j = 0; j < J_COUNT; j++) {
        pm_pose_set_joint(base, j, b0, pm_vec3_zero());
        pm_pose_set_joint(source, j, pm_quat_mul(b0, nod), pm_vec3_make(0, 0.1f, 0));
        pm_pose_set_joint(target, j, turn, pm_vec3_make(1, 2, 3));
    }
    extract(delta, source, base);
    apply(out, target, delta, 1.0f, NULL);
    pm_quat right = pm_quat_mul(turn, nod), left = pm_quat_mul(nod, turn);
    for (int j = 0; j < J_COUNT; j++) {
        assert_quat_near(pm_pose_rotation(delta, j), nod, 1e-5f);
        assert_quat_near(pm_pose_rotation(out, j), right, 1e-5f);
        assert_true(quat_angle(pm_pose_rotation(out, j), left) > 0.5f); /* the other order: a different pose */
        assert_vec_near(pm_pose_translation(out, j), pm_vec3_make(1, 2.1f, 3), 1e-5f);
        /* The joint's own X axis (its "nod" axis) is unmoved by the result relative to the target. */
        pm_vec3 x_target = pm_quat_rotate(turn, pm_vec3_make(1, 0, 0));
        pm_vec3 x_out = pm_quat_rotate(pm_pose_rotation(out, j), pm_vec3_make(1, 0, 0));
        assert_vec_near(x_out, x_target, 1e-5f);
    }
    /* Reading "source * base^-1" literally while applying on the right does not give the source back. */
    pm_quat s = pm_quat_mul(b0, nod);
    pm_quat literal = pm_quat_mul(s, pm_quat_conjugate(b0));
    assert_true(quat_angle(pm_quat_mul(b0, literal), s) > 0.1f);
    assert_true(quat_angle(pm_quat_mul(b0, pm_quat_mul(pm_quat_conjugate(b0), s)), s) < 1e-5f);
    FREE_POSES(base, source, target, delta, out);
}

static void test_additive_power(void **state) {
    (void)state;
    pm_test_rng rng = {41};
    pm_soa_transform *target = new_pose(), *delta = new_pose(), *out = new_pose();
    float worst = 0.0f;
    for (int trial = 0; trial < 60; trial++) {
        random_pose(target, J_COUNT, &rng, 3.0f);
        /* Angles from tiny to nearly 360 degrees (the power takes the short arc). */
        float max_angle = trial < 10 ? 1e-4f : (trial < 20 ? 0.05f : 6.2f);
        random_pose(delta, J_COUNT, &rng, max_angle);
        if (trial % 2) /* some deltas on the far hemisphere */
            for (int j = 0; j < J_COUNT; j += 2)
                pm_pose_set_joint(delta, j, pm_quat_neg(pm_pose_rotation(delta, j)), pm_pose_translation(delta, j));
        float w = pm_test_rng_float(&rng);
        apply(out, target, delta, w, NULL);
        for (int j = 0; j < J_COUNT; j++) {
            pm_quat ref = pm_quat_mul(pm_pose_rotation(target, j), pm_quat_pow(pm_pose_rotation(delta, j), w));
            float err = quat_angle(pm_pose_rotation(out, j), ref);
            if (err > worst) worst = err;
            assert_vec_near(pm_pose_translation(out, j),
                            pm_vec3_add(pm_pose_translation(target, j), pm_vec3_scale(pm_pose_translation(delta, j), w)),
                            1e-5f);
            pm_quat q = pm_pose_rotation(out, j);
            assert_true(fabsf(pm_quat_dot(q, q) - 1.0f) < 1e-5f);
        }
    }
    if (!(worst < 2e-5f)) fail_msg("quaternion power error %g rad", (double)worst);
    /* Per-joint weights: joints with weight 0 keep the target. */
    float mask[J_COUNT];
    for (int j = 0; j < J_COUNT; j++) mask[j] = (j % 3) ? 0.0f : 0.5f;
    apply(out, target, delta, 1.0f, mask);
    for (int j = 0; j < J_COUNT; j++) {
        if (mask[j] == 0.0f) {
            assert_quat_near(pm_pose_rotation(out, j), pm_pose_rotation(target, j), 1e-6f);
            assert_vec_near(pm_pose_translation(out, j), pm_pose_translation(target, j), 0.0f);
        } else {
            pm_quat ref = pm_quat_mul(pm_pose_rotation(target, j), pm_quat_pow(pm_pose_rotation(delta, j), 0.5f));
            assert_quat_near(pm_pose_rotation(out, j), ref, 2e-5f);
        }
    }
    /* The nlerp scaling: exact at w = 1/2 (the half angle), close for small deltas. */
    random_pose(delta, J_COUNT, &rng, 2.5f);
    pm_additive_apply_job nj = apply_job(target, delta, out);
    nj.scaling = PM_ADDITIVE_NLERP;
    nj.weight = 0.5f;
    PM_ASSERT_OK(pm_additive_apply_job_run(&nj, NULL));
    for (int j = 0; j < J_COUNT; j++) {
        pm_quat ref = pm_quat_mul(pm_pose_rotation(target, j), pm_quat_pow(pm_pose_rotation(delta, j), 0.5f));
        assert_quat_near(pm_pose_rotation(out, j), ref, 2e-5f);
    }
    random_pose(delta, J_COUNT, &rng, 0.1f);
    nj.weight = 0.3f;
    PM_ASSERT_OK(pm_additive_apply_job_run(&nj, NULL));
    for (int j = 0; j < J_COUNT; j++) {
        pm_quat ref = pm_quat_mul(pm_pose_rotation(target, j), pm_quat_pow(pm_pose_rotation(delta, j), 0.3f));
        assert_quat_near(pm_pose_rotation(out, j), ref, 1e-4f);
    }
    pm_error e;
    nj.scaling = (pm_additive_scaling)7;
    assert_int_equal(pm_additive_apply_job_run(&nj, &e), PM_ERR_INVALID_ARGUMENT);
    pm_additive_apply_job job = apply_job(target, delta, out);
    job.weight = NAN;
    assert_int_equal(pm_additive_apply_job_run(&job, &e), PM_ERR_NUMERIC);
    job.weight = 65.0f;
    assert_int_equal(pm_additive_apply_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    job.weight = 1.0f;
    job.delta = NULL;
    assert_int_equal(pm_additive_apply_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    FREE_POSES(target, delta, out);
}

/* delta^w in double precision on the short arc, for any w. */
static pm_quat pow_ref(pm_quat q, double w) {
    double x = q.x, y = q.y, z = q.z, c = q.w;
    if (c < 0.0) x = -x, y = -y, z = -z, c = -c;
    double s = sqrt(x * x + y * y + z * z), a = atan2(s, c);
    double k = s < 1e-12 ? w : sin(w * a) / s;
    return pm_quat_make((float)(x * k), (float)(y * k), (float)(z * k), (float)cos(w * a));
}

/* Weights beyond [0, 1]: w = -1 takes a delta off (applied to the source it gives the base back),
 * w = 2 doubles it, fractional weights are the power on either side, continuous across the whole
 * numbers where the power switches from one fraction to the next; a half-turn delta, whose short
 * arc is either way round, still gives the rotations every such arc agrees on. */
static void test_additive_weights_beyond_one(void **state) {
    (void)state;
    pm_test_rng rng = {47};
    pm_soa_transform *source = new_pose(), *base = new_pose(), *delta = new_pose(), *out = new_pose();
    for (int trial = 0; trial < 10; trial++) {
        random_delta(source, base, delta, &rng);
        apply(out, source, delta, -1.0f, NULL);
        for (int j = 0; j < J_COUNT; j++) {
            assert_quat_near(pm_pose_rotation(out, j), pm_pose_rotation(base, j), 1e-5f);
            assert_vec_near(pm_pose_translation(out, j), pm_pose_translation(base, j), 1e-5f);
        }
        apply(out, base, delta, 2.0f, NULL);
        for (int j = 0; j < J_COUNT; j++) {
            pm_quat d = pm_pose_rotation(delta, j);
            assert_quat_near(pm_pose_rotation(out, j), pm_quat_mul(pm_quat_mul(pm_pose_rotation(base, j), d), d), 1e-5f);
            pm_vec3 dt = pm_vec3_sub(pm_pose_translation(source, j), pm_pose_translation(base, j));
            assert_vec_near(pm_pose_translation(out, j), pm_vec3_add(pm_pose_translation(source, j), dt), 1e-4f);
        }
    }
    /* Both scalings, any weight in range, deltas up to nearly a full turn on either hemisphere. */
    static const float weights[] = {-64.0f, -7.3f, -2.5f, -1.0f, -0.75f, -0.2f, 1.25f, 1.999f, 2.0f, 3.6f, 17.5f, 64.0f};
    random_pose(base, J_COUNT, &rng, 3.0f);
    for (int trial = 0; trial < 8; trial++) {
        random_pose(delta, J_COUNT, &rng, trial < 2 ? 0.01f : 6.2f);
        for (int j = 0; j < J_COUNT; j += 3)
            pm_pose_set_joint(delta, j, pm_quat_neg(pm_pose_rotation(delta, j)), pm_pose_translation(delta, j));
        for (size_t k = 0; k < sizeof weights / sizeof weights[0]; k++) {
            float w = weights[k];
            apply(out, base, delta, w, NULL);
            for (int j = 0; j < J_COUNT; j++) {
                pm_quat ref = pm_quat_mul(pm_pose_rotation(base, j), pow_ref(pm_pose_rotation(delta, j), w));
                /* The whole power's products round a little per squaring. */
                assert_quat_near(pm_pose_rotation(out, j), ref, fabsf(w) > 4.0f ? 2e-4f : 2e-5f);
                pm_quat q = pm_pose_rotation(out, j);
                assert_true(fabsf(pm_quat_dot(q, q) - 1.0f) < 1e-5f);
                assert_vec_near(pm_pose_translation(out, j),
                                pm_vec3_add(pm_pose_translation(base, j), pm_vec3_scale(pm_pose_translation(delta, j), w)),
                                1e-4f * fmaxf(1.0f, fabsf(w)));
            }
            /* nlerp scaling: exact at whole weights and halves, on the conjugate for w < 0. */
            if (w == 2.0f || w == -1.0f || w == -2.5f || w == 64.0f) {
                pm_additive_apply_job nj = apply_job(base, delta, out);
                nj.scaling = PM_ADDITIVE_NLERP;
                nj.weight = w;
                PM_ASSERT_OK(pm_additive_apply_job_run(&nj, NULL));
                for (int j = 0; j < J_COUNT; j++)
                    assert_quat_near(pm_pose_rotation(out, j),
                                     pm_quat_mul(pm_pose_rotation(base, j), pow_ref(pm_pose_rotation(delta, j), w)),
                                     fabsf(w) > 4.0f ? 2e-4f : 2e-5f);
            }
        }
        /* A mask scales the weight per joint: 0 keeps the base, 0.5 of w = 2 is the delta itself. */
        float mask[J_COUNT];
        for (int j = 0; j < J_COUNT; j++) mask[j] = (j % 2) ? 0.0f : 0.5f;
        apply(out, base, delta, 2.0f, mask);
        for (int j = 0; j < J_COUNT; j++) {
            pm_quat want = mask[j] == 0.0f ? pm_pose_rotation(base, j) : pm_quat_mul(pm_pose_rotation(base, j), pm_pose_rotation(delta, j));
            assert_quat_near(pm_pose_rotation(out, j), want, 1e-5f);
        }
    }
    /* Continuity in w: a sweep through -3..3 moves each joint by at most its angle per unit weight. */
    random_pose(delta, J_COUNT, &rng, 2.8f);
    pm_soa_transform *prev = new_pose();
    apply(prev, base, delta, -3.0f, NULL);
    for (int k = 1; k <= 600; k++) {
        float w = -3.0f + 0.01f * (float)k;
        apply(out, base, delta, w, NULL);
        for (int j = 0; j < J_COUNT; j++) {
            float turn = quat_angle(pm_pose_rotation(delta, j), pm_quat_identity());
            float step = quat_angle(pm_pose_rotation(out, j), pm_pose_rotation(prev, j));
            if (!(step <= 0.01f * turn + 1e-4f)) fail_msg("joint %d jumps %g rad at w = %g", j, (double)step, (double)w);
        }
        memcpy(prev, out, sizeof(pm_soa_transform) * (size_t)pm_soa_count(J_COUNT));
    }
    /* A half turn: twice is no turn, minus once is the same half turn, 1.5 times a quarter turn. */
    pm_quat half = pm_quat_make(0.0f, 0.6f, 0.8f, 0.0f);
    for (int j = 0; j < J_COUNT; j++) pm_pose_set_joint(delta, j, j % 2 ? pm_quat_neg(half) : half, pm_vec3_zero());
    apply(out, base, delta, 2.0f, NULL);
    for (int j = 0; j < J_COUNT; j++) assert_quat_near(pm_pose_rotation(out, j), pm_pose_rotation(base, j), 1e-5f);
    apply(out, base, delta, -1.0f, NULL);
    for (int j = 0; j < J_COUNT; j++)
        assert_quat_near(pm_pose_rotation(out, j), pm_quat_mul(pm_pose_rotation(base, j), half), 1e-5f);
    apply(out, base, delta, 1.5f, NULL);
    for (int j = 0; j < J_COUNT; j++)
        assert_true(fabsf(quat_angle(pm_pose_rotation(out, j), pm_pose_rotation(base, j)) - 1.5707963f) < 1e-5f);
    /* Beyond the range: an error naming it, nothing written. */
    memcpy(prev, out, sizeof(pm_soa_transform) * (size_t)pm_soa_count(J_COUNT));
    pm_error e;
    pm_additive_apply_job job = apply_job(base, delta, out);
    job.weight = -64.5f;
    assert_int_equal(pm_additive_apply_job_validate(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.message, "additive apply job: weight -64.5 is outside [-64, 64]");
    assert_int_equal(pm_additive_apply_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    job.weight = -1.0f;
    job.delta = NULL;
    assert_int_equal(pm_additive_apply_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_true(poses_bitwise_equal(out, prev, J_COUNT));
    FREE_POSES(source, base, delta, out, prev);
}

/* A bad mask writing in place: validate reports it, and run reports it before touching the
 * target (or the delta) that is also the output. */
static void test_additive_bad_mask_in_place(void **state) {
    (void)state;
    pm_test_rng rng = {43};
    const size_t bytes = sizeof(pm_soa_transform) * (size_t)pm_soa_count(J_COUNT);
    pm_soa_transform *target = new_random_pose(&rng, 2.0f), *delta = new_random_pose(&rng, 1.0f);
    pm_soa_transform *keep_target = new_pose(), *keep_delta = new_pose();
    memcpy(keep_target, target, bytes);
    memcpy(keep_delta, delta, bytes);
    float mask[J_COUNT];
    for (int j = 0; j < J_COUNT; j++) mask[j] = 0.5f;
    static const float bad_values[] = {NAN, 1.5f, -0.25f};
    for (size_t v = 0; v < sizeof bad_values / sizeof bad_values[0]; v++) {
        mask[5] = bad_values[v];
        for (int scaling = 0; scaling < 2; scaling++)
            for (int target_out = 0; target_out < 2; target_out++) {
                pm_additive_apply_job job = apply_job(target, delta, target_out ? target : delta);
                job.weight = 0.8f;
                job.scaling = scaling ? PM_ADDITIVE_NLERP : PM_ADDITIVE_POWER;
                job.joint_weights = mask;
                pm_error e;
                pm_result expect = isfinite(bad_values[v]) ? PM_ERR_INVALID_ARGUMENT : PM_ERR_NUMERIC;
                assert_int_equal(pm_additive_apply_job_validate(&job, &e), expect);
                assert_non_null(strstr(e.message, "joint 5"));
                assert_int_equal(pm_additive_apply_job_run(&job, &e), expect);
                assert_memory_equal(target, keep_target, bytes);
                assert_memory_equal(delta, keep_delta, bytes);
                /* Weight 0 reads neither the delta nor the mask. */
                job.weight = 0.0f;
                PM_ASSERT_OK(pm_additive_apply_job_validate(&job, NULL));
            }
    }
    /* A separate output: reported after the blend, the inputs intact - by the masked kernel
     * (weights in 0..1) and by the extended one (beyond 1, or negative) alike. */
    pm_soa_transform *out = new_pose();
    static const float weights[] = {1.0f, 0.8f, 2.0f, -0.5f};
    for (size_t v = 0; v < sizeof bad_values / sizeof bad_values[0]; v++)
        for (size_t wi = 0; wi < sizeof weights / sizeof weights[0]; wi++) {
            mask[5] = bad_values[v];
            pm_additive_apply_job job = apply_job(target, delta, out);
            job.weight = weights[wi];
            job.joint_weights = mask;
            pm_error e;
            assert_int_equal(pm_additive_apply_job_run(&job, &e), isfinite(bad_values[v]) ? PM_ERR_INVALID_ARGUMENT : PM_ERR_NUMERIC);
            assert_non_null(strstr(e.message, "joint 5"));
            assert_memory_equal(target, keep_target, bytes);
            assert_memory_equal(delta, keep_delta, bytes);
        }
    FREE_POSES(out, target, delta, keep_target, keep_delta);
}

static void test_additive_clip(void **state) {
    (void)state;
    pm_skeleton sk;
    make_skeleton(&sk);
    pm_clip source, base, delta;
    make_clip(&source, &sk, 20, 30.0f, 0, 51);
    make_clip(&base, &sk, 12, 30.0f, 0, 52);
    for (int base_frame = -1; base_frame <= 3; base_frame += 4) {
        PM_ASSERT_OK(pm_clip_extract_additive(&delta, &source, &base, base_frame, NULL));
        PM_ASSERT_OK(pm_clip_validate(&delta, NULL));
        pm_quat br[J_COUNT];
        pm_vec3 bt[J_COUNT];
        for (int f = 0; f < source.frame_count; f++) {
            float t = base_frame >= 0 ? (float)base_frame * base.frame_time
                                      : (float)f / (float)(source.frame_count - 1) * pm_clip_duration(&base);
            PM_ASSERT_OK(pm_clip_sample(br, bt, &base, t, NULL));
            for (int j = 0; j < J_COUNT; j++) {
                size_t i = (size_t)f * J_COUNT + j;
                assert_quat_near(pm_quat_mul(br[j], delta.rotations[i]), source.rotations[i], 1e-5f);
                assert_vec_near(pm_vec3_add(bt[j], delta.translations[i]), source.translations[i], 1e-5f);
            }
        }
        pm_clip_destroy(&delta);
    }
    pm_error e;
    assert_int_equal(pm_clip_extract_additive(&delta, &source, &base, 99, &e), PM_ERR_INVALID_ARGUMENT);
    /* One past the last frame is outside too. */
    assert_int_equal(pm_clip_extract_additive(&delta, &source, &base, base.frame_count, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "outside"));
    pm_skeleton other;
    PM_ASSERT_OK(pm_skeleton_copy(&other, &sk, NULL, NULL));
    other.parents[J_LHAND] = J_SPINE;
    pm_clip mism;
    make_clip(&mism, &other, 10, 30.0f, 0, 3);
    assert_int_equal(pm_clip_extract_additive(&delta, &source, &mism, 0, &e), PM_ERR_MISMATCH);
    pm_clip_destroy(&mism);
    pm_skeleton_destroy(&other);
    pm_clip_destroy(&source);
    pm_clip_destroy(&base);
    pm_skeleton_destroy(&sk);
}

/* ---- local to model ---- */

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_additive_round_trip),
        cmocka_unit_test(test_additive_order_matters),
        cmocka_unit_test(test_additive_power),
        cmocka_unit_test(test_additive_weights_beyond_one),
        cmocka_unit_test(test_additive_bad_mask_in_place),
        cmocka_unit_test(test_additive_clip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
