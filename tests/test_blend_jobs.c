/* Pose jobs: sampling, N-pose blend, layered blend per bone, additive, local to model (BL2-BL5). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* A small humanoid-like hierarchy: root/hips, spine chain with head, two legs, two arms. */
enum { J_HIPS, J_SPINE, J_CHEST, J_NECK, J_HEAD, J_LUPLEG, J_LLEG, J_LFOOT, J_RUPLEG, J_RLEG, J_RFOOT, J_LARM, J_LHAND, J_COUNT };
static const char *const joint_names[J_COUNT] = {"Hips", "Spine", "Chest", "Neck", "Head", "LeftUpLeg", "LeftLeg",
                                                 "LeftFoot", "RightUpLeg", "RightLeg", "RightFoot", "LeftArm", "LeftHand"};
static const int joint_parents[J_COUNT] = {-1, 0, 1, 2, 3, 0, 5, 6, 0, 8, 9, 2, 11};

static void make_skeleton(pm_skeleton *sk) {
    PM_ASSERT_OK(pm_skeleton_create(sk, J_COUNT, NULL, NULL));
    for (int j = 0; j < J_COUNT; j++) {
        PM_ASSERT_OK(pm_skeleton_set_name(sk, j, joint_names[j], NULL));
        sk->parents[j] = joint_parents[j];
        sk->rest_translations[j] = pm_vec3_make(0.1f * (float)(j % 3), j ? 0.2f : 0.9f, 0.05f * (float)(j % 2));
    }
}

static pm_quat random_quat(pm_test_rng *rng, float max_angle) {
    pm_vec3 axis = pm_vec3_make(pm_test_rng_normal(rng), pm_test_rng_normal(rng), pm_test_rng_normal(rng));
    return pm_quat_from_axis_angle(axis, max_angle * (2.0f * pm_test_rng_float(rng) - 1.0f));
}

static void random_pose(pm_soa_transform *pose, int joints, pm_test_rng *rng, float max_angle) {
    pm_pose_set_identity(pose, joints);
    for (int j = 0; j < joints; j++)
        pm_pose_set_joint(pose, j, random_quat(rng, max_angle),
                          pm_vec3_make(pm_test_rng_normal(rng), pm_test_rng_normal(rng), pm_test_rng_normal(rng)));
}

/* A smooth clip: every joint swings about its own axis. */
static void make_clip(pm_clip *clip, const pm_skeleton *sk, int frames, float fps, int looping, uint64_t seed) {
    PM_ASSERT_OK(pm_clip_create(clip, sk, frames, 1.0f / fps, NULL, NULL));
    clip->looping = looping;
    pm_test_rng rng = {seed};
    pm_vec3 axes[J_COUNT];
    float phases[J_COUNT];
    for (int j = 0; j < sk->joint_count; j++) {
        axes[j] = pm_vec3_make(pm_test_rng_normal(&rng), pm_test_rng_normal(&rng), pm_test_rng_normal(&rng));
        phases[j] = 6.28f * pm_test_rng_float(&rng);
    }
    for (int f = 0; f < frames; f++)
        for (int j = 0; j < sk->joint_count; j++) {
            float a = 1.2f * sinf(6.2831853f * (float)f / (float)frames + phases[j]);
            clip->rotations[f * sk->joint_count + j] = pm_quat_from_axis_angle(axes[j], a);
            pm_vec3 t = sk->rest_translations[j];
            if (j == 0) t.z += 0.05f * (float)f;
            clip->translations[f * sk->joint_count + j] = t;
        }
}

/* Angle between two rotations, accurate for tiny angles too (acos of the dot is not). */
static float quat_angle(pm_quat a, pm_quat b) {
    pm_quat d = pm_quat_mul(pm_quat_conjugate(pm_quat_normalize(a)), pm_quat_normalize(b));
    double v = sqrt((double)d.x * d.x + (double)d.y * d.y + (double)d.z * d.z);
    return (float)(2.0 * atan2(v, fabs((double)d.w)));
}

static void assert_quat_near(pm_quat a, pm_quat b, float tol) {
    float ang = quat_angle(a, b);
    if (!(ang <= tol)) fail_msg("rotations differ by %g rad (tolerance %g)", (double)ang, (double)tol);
}

static void assert_vec_near(pm_vec3 a, pm_vec3 b, float tol) {
    float d = pm_vec3_length(pm_vec3_sub(a, b));
    if (!(d <= tol)) fail_msg("vectors differ by %g (tolerance %g)", (double)d, (double)tol);
}

static int poses_bitwise_equal(const pm_soa_transform *a, const pm_soa_transform *b, int joints) {
    for (int j = 0; j < joints; j++) {
        pm_quat qa = pm_pose_rotation(a, j), qb = pm_pose_rotation(b, j);
        pm_vec3 ta = pm_pose_translation(a, j), tb = pm_pose_translation(b, j);
        if (memcmp(&qa, &qb, sizeof qa) != 0 || memcmp(&ta, &tb, sizeof ta) != 0) return 0;
    }
    return 1;
}

/* ---- poses and animations ---- */

static void test_pose_conversions(void **state) {
    (void)state;
    pm_test_rng rng = {1};
    pm_quat rot[J_COUNT], rot2[J_COUNT];
    pm_vec3 tr[J_COUNT], tr2[J_COUNT];
    for (int j = 0; j < J_COUNT; j++) {
        rot[j] = random_quat(&rng, 3.0f);
        tr[j] = pm_vec3_make((float)j, 2.0f * (float)j, -1.0f);
    }
    pm_soa_transform *pose = pm_pose_alloc(J_COUNT, NULL);
    assert_non_null(pose);
    assert_int_equal(((uintptr_t)pose) % 16, 0);
    PM_ASSERT_OK(pm_pose_from_aos(pose, J_COUNT, rot, tr, NULL));
    PM_ASSERT_OK(pm_pose_to_aos(rot2, tr2, J_COUNT, pose, NULL));
    assert_memory_equal(rot, rot2, sizeof rot);
    assert_memory_equal(tr, tr2, sizeof tr);
    /* Padding lanes are identity. */
    const pm_soa_transform *last = pose + pm_soa_count(J_COUNT) - 1;
    for (int k = J_COUNT % 4; k < 4 && J_COUNT % 4; k++) {
        assert_true(last->qw[k] == 1.0f && last->qx[k] == 0.0f && last->tx[k] == 0.0f);
    }
    pm_error e;
    assert_int_equal(pm_pose_from_aos(pose, 0, rot, tr, &e), PM_ERR_LIMIT);
    pm_pose_free(pose, NULL);
}

static void test_sampling_matches_clip(void **state) {
    (void)state;
    pm_skeleton sk;
    make_skeleton(&sk);
    for (int looping = 0; looping < 2; looping++) {
        pm_clip clip;
        make_clip(&clip, &sk, 40, 30.0f, looping, 7 + looping);
        pm_animation anim;
        PM_ASSERT_OK(pm_animation_build(&anim, &clip, NULL, NULL));
        assert_int_equal(anim.key_count, clip.frame_count + looping);
        pm_soa_transform *pose = pm_pose_alloc(J_COUNT, NULL);
        pm_quat ref_r[J_COUNT];
        pm_vec3 ref_t[J_COUNT];
        pm_test_rng rng = {3};
        for (int i = 0; i < 200; i++) {
            float t = (pm_test_rng_float(&rng) * 1.4f - 0.2f) * pm_clip_duration(&clip);
            if (i < 40) t = (float)i * clip.frame_time; /* on keys */
            pm_sampling_job job = pm_default_sampling_job();
            job.animation = &anim;
            job.time = t;
            job.output = pose;
            job.output_count = pm_soa_count(J_COUNT);
            pm_clip_sample(&clip, t, ref_r, ref_t);
            for (int mode = 0; mode < 2; mode++) {
                job.rotation = mode ? PM_ROTATION_SLERP : PM_ROTATION_NLERP;
                PM_ASSERT_OK(pm_sampling_job_run(&job, NULL));
                for (int j = 0; j < J_COUNT; j++) {
                    /* Slerp matches the clip's slerp closely; nlerp deviates by a tiny fraction of
                     * the angle between neighbouring keys. */
                    assert_quat_near(pm_pose_rotation(pose, j), ref_r[j], mode ? 2e-5f : 2e-3f);
                    /* Between a loop's last and first frames root motion carries on (below) where
                     * pm_clip_sample slides back to frame 0. */
                    float local = fmodf(t, pm_clip_duration(&clip));
                    if (local < 0.0f) local += pm_clip_duration(&clip);
                    int wrap = looping && local > (float)(clip.frame_count - 1) * clip.frame_time;
                    if (!wrap) assert_vec_near(pm_pose_translation(pose, j), ref_t[j], 1e-5f);
                    pm_quat q = pm_pose_rotation(pose, j);
                    assert_true(fabsf(pm_quat_dot(q, q) - 1.0f) < 1e-5f);
                }
            }
        }
        /* On a key the stored values come out bit for bit (up to the hemisphere sign). */
        pm_sampling_job job = pm_default_sampling_job();
        job.animation = &anim;
        job.time = 5.0f * clip.frame_time;
        job.output = pose;
        job.output_count = pm_soa_count(J_COUNT);
        PM_ASSERT_OK(pm_sampling_job_run(&job, NULL));
        for (int j = 0; j < J_COUNT; j++) {
            pm_quat q = pm_pose_rotation(pose, j), c = pm_quat_normalize(clip.rotations[5 * J_COUNT + j]);
            assert_true(quat_angle(q, c) < 1e-6f);
        }
        if (looping) {
            /* Half a frame past the last one the root has moved on by half a step (0.05 / frame). */
            job.time = ((float)clip.frame_count - 0.5f) * clip.frame_time;
            PM_ASSERT_OK(pm_sampling_job_run(&job, NULL));
            float last = clip.translations[(size_t)(clip.frame_count - 1) * J_COUNT].z;
            assert_true(fabsf(pm_pose_translation(pose, 0).z - (last + 0.025f)) < 1e-5f);
        }
        /* Looping wraps (0.3 past the end is 0.3), one-shots clamp (0.3 past the end is the end,
         * which is the last frame). */
        pm_soa_transform *other = pm_pose_alloc(J_COUNT, NULL);
        job.time = looping ? 0.3f : pm_clip_duration(&clip);
        PM_ASSERT_OK(pm_sampling_job_run(&job, NULL));
        job.output = other;
        job.time = 0.3f + pm_clip_duration(&clip);
        PM_ASSERT_OK(pm_sampling_job_run(&job, NULL));
        for (int j = 0; j < J_COUNT; j++) assert_quat_near(pm_pose_rotation(pose, j), pm_pose_rotation(other, j), 1e-4f);
        if (!looping) {
            size_t last = (size_t)(clip.frame_count - 1) * J_COUNT;
            for (int j = 0; j < J_COUNT; j++) {
                assert_true(quat_angle(pm_pose_rotation(other, j), pm_quat_normalize(clip.rotations[last + j])) < 1e-6f);
                assert_vec_near(pm_pose_translation(other, j), clip.translations[last + j], 1e-5f);
            }
        }
        pm_pose_free(other, NULL);
        pm_pose_free(pose, NULL);
        pm_animation_destroy(&anim);
        pm_clip_destroy(&clip);
    }
    pm_skeleton_destroy(&sk);
}

static void test_sampling_errors(void **state) {
    (void)state;
    pm_skeleton sk;
    make_skeleton(&sk);
    pm_clip clip;
    make_clip(&clip, &sk, 10, 30.0f, 0, 1);
    pm_animation anim;
    PM_ASSERT_OK(pm_animation_build(&anim, &clip, NULL, NULL));
    pm_soa_transform *pose = pm_pose_alloc(J_COUNT, NULL);
    pm_error e;
    pm_sampling_job job = pm_default_sampling_job();
    assert_int_equal(pm_sampling_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    job.animation = &anim;
    job.output = pose;
    job.output_count = 1;
    assert_int_equal(pm_sampling_job_run(&job, &e), PM_ERR_MISMATCH);
    assert_non_null(strstr(e.message, "groups"));
    job.output_count = pm_soa_count(J_COUNT);
    job.time = NAN;
    assert_int_equal(pm_sampling_job_run(&job, &e), PM_ERR_NUMERIC);
    /* A clip with a NaN does not become an animation. */
    clip.rotations[3].x = NAN;
    pm_animation bad;
    assert_int_equal(pm_animation_build(&bad, &clip, NULL, &e), PM_ERR_NUMERIC);
    pm_pose_free(pose, NULL);
    pm_animation_destroy(&anim);
    pm_clip_destroy(&clip);
    pm_skeleton_destroy(&sk);
}

/* ---- blend job ---- */

static void run_blend(pm_soa_transform *out, const pm_blend_input *in, int n) {
    pm_blend_job job = pm_default_blend_job();
    job.inputs = in;
    job.input_count = n;
    job.joint_count = J_COUNT;
    job.output = out;
    PM_ASSERT_OK(pm_blend_job_run(&job, NULL));
}

static void test_blend_matches_reference(void **state) {
    (void)state;
    pm_test_rng rng = {11};
    pm_soa_transform *p[5], *out = pm_pose_alloc(J_COUNT, NULL);
    for (int i = 0; i < 5; i++) {
        p[i] = pm_pose_alloc(J_COUNT, NULL);
        random_pose(p[i], J_COUNT, &rng, 1.0f);
    }
    for (int n = 2; n <= 5; n++)
        for (int trial = 0; trial < 20; trial++) {
            pm_blend_input in[5];
            float sum = 0.0f;
            for (int i = 0; i < n; i++) {
                in[i].pose = p[i];
                in[i].weight = 0.05f + 3.0f * pm_test_rng_float(&rng); /* not normalised on purpose */
                sum += in[i].weight;
            }
            run_blend(out, in, n);
            for (int j = 0; j < J_COUNT; j++) {
                pm_quat ref = pm_quat_make(0, 0, 0, 0), q0 = pm_pose_rotation(p[0], j);
                pm_vec3 t = pm_vec3_zero();
                for (int i = 0; i < n; i++) {
                    float w = in[i].weight / sum;
                    pm_quat q = pm_quat_abs_near(pm_pose_rotation(p[i], j), q0);
                    ref = pm_quat_make(ref.x + w * q.x, ref.y + w * q.y, ref.z + w * q.z, ref.w + w * q.w);
                    t = pm_vec3_add(t, pm_vec3_scale(pm_pose_translation(p[i], j), w));
                }
                assert_quat_near(pm_pose_rotation(out, j), pm_quat_normalize(ref), 2e-5f);
                assert_vec_near(pm_pose_translation(out, j), t, 2e-5f);
                pm_quat q = pm_pose_rotation(out, j);
                assert_true(fabsf(pm_quat_dot(q, q) - 1.0f) < 2e-6f);
            }
        }
    /* Two inputs: the classic nlerp. */
    pm_blend_input two[2] = {{p[0], 0.7f}, {p[1], 0.3f}};
    run_blend(out, two, 2);
    for (int j = 0; j < J_COUNT; j++)
        assert_quat_near(pm_pose_rotation(out, j), pm_quat_nlerp(pm_pose_rotation(p[0], j), pm_pose_rotation(p[1], j), 0.3f),
                         2e-5f);
    for (int i = 0; i < 5; i++) pm_pose_free(p[i], NULL);
    pm_pose_free(out, NULL);
}

static void test_blend_zero_weight_is_not_read(void **state) {
    (void)state;
    pm_test_rng rng = {5};
    pm_soa_transform *a = pm_pose_alloc(J_COUNT, NULL), *b = pm_pose_alloc(J_COUNT, NULL);
    pm_soa_transform *poison = pm_pose_alloc(J_COUNT, NULL), *out = pm_pose_alloc(J_COUNT, NULL);
    pm_soa_transform *ref = pm_pose_alloc(J_COUNT, NULL);
    random_pose(a, J_COUNT, &rng, 2.0f);
    random_pose(b, J_COUNT, &rng, 2.0f);
    for (int j = 0; j < J_COUNT; j++) pm_pose_set_joint(poison, j, pm_quat_make(NAN, NAN, NAN, NAN), pm_vec3_make(NAN, NAN, NAN));
    pm_blend_input with_zero[4] = {{NULL, 0.0f}, {a, 0.4f}, {poison, 0.0f}, {b, 0.6f}};
    pm_blend_input plain[2] = {{a, 0.4f}, {b, 0.6f}};
    run_blend(out, with_zero, 4);
    run_blend(ref, plain, 2);
    assert_true(poses_bitwise_equal(out, ref, J_COUNT));
    /* Exactly one contributor: copied bit for bit. */
    pm_blend_input single[3] = {{poison, 0.0f}, {b, 2.5f}, {NULL, 0.0f}};
    run_blend(out, single, 3);
    assert_true(poses_bitwise_equal(out, b, J_COUNT));
    /* The output may be an input. */
    pm_soa_transform *copy = pm_pose_alloc(J_COUNT, NULL);
    memcpy(copy, a, sizeof(pm_soa_transform) * (size_t)pm_soa_count(J_COUNT));
    pm_blend_input alias[2] = {{copy, 0.4f}, {b, 0.6f}};
    run_blend(copy, alias, 2);
    assert_true(poses_bitwise_equal(copy, ref, J_COUNT));
    pm_pose_free(copy, NULL);
    pm_pose_free(a, NULL);
    pm_pose_free(b, NULL);
    pm_pose_free(poison, NULL);
    pm_pose_free(out, NULL);
    pm_pose_free(ref, NULL);
}

static void test_blend_hemisphere(void **state) {
    (void)state;
    pm_test_rng rng = {9};
    pm_soa_transform *a = pm_pose_alloc(J_COUNT, NULL), *b = pm_pose_alloc(J_COUNT, NULL);
    pm_soa_transform *nb = pm_pose_alloc(J_COUNT, NULL), *o1 = pm_pose_alloc(J_COUNT, NULL);
    pm_soa_transform *o2 = pm_pose_alloc(J_COUNT, NULL);
    random_pose(a, J_COUNT, &rng, 1.5f);
    random_pose(b, J_COUNT, &rng, 1.5f);
    for (int j = 0; j < J_COUNT; j++)
        pm_pose_set_joint(nb, j, pm_quat_neg(pm_pose_rotation(b, j)), pm_pose_translation(b, j));
    pm_blend_input i1[2] = {{a, 0.5f}, {b, 0.5f}}, i2[2] = {{a, 0.5f}, {nb, 0.5f}};
    run_blend(o1, i1, 2);
    run_blend(o2, i2, 2);
    for (int j = 0; j < J_COUNT; j++) {
        /* Same rotation either way, and halfway along the short arc. */
        assert_quat_near(pm_pose_rotation(o1, j), pm_pose_rotation(o2, j), 1e-6f);
        float ab = quat_angle(pm_pose_rotation(a, j), pm_pose_rotation(b, j));
        assert_true(fabsf(quat_angle(pm_pose_rotation(a, j), pm_pose_rotation(o1, j)) - 0.5f * ab) < 1e-4f);
    }
    pm_pose_free(a, NULL);
    pm_pose_free(b, NULL);
    pm_pose_free(nb, NULL);
    pm_pose_free(o1, NULL);
    pm_pose_free(o2, NULL);
}

static void test_blend_errors(void **state) {
    (void)state;
    pm_soa_transform *a = pm_pose_alloc(J_COUNT, NULL), *out = pm_pose_alloc(J_COUNT, NULL);
    pm_error e;
    pm_blend_job job = pm_default_blend_job();
    job.joint_count = J_COUNT;
    job.output = out;
    assert_int_equal(pm_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    pm_blend_input in[2] = {{a, NAN}, {a, 1.0f}};
    job.inputs = in;
    job.input_count = 2;
    assert_int_equal(pm_blend_job_run(&job, &e), PM_ERR_NUMERIC);
    assert_non_null(strstr(e.message, "input 0"));
    in[0].weight = -1.0f;
    assert_int_equal(pm_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "negative"));
    in[0].weight = 0.0f;
    in[1].weight = 0.0f;
    assert_int_equal(pm_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "zero"));
    in[1].weight = 1.0f;
    in[1].pose = NULL;
    assert_int_equal(pm_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    in[1].pose = a;
    in[0].weight = INFINITY;
    assert_int_equal(pm_blend_job_run(&job, &e), PM_ERR_NUMERIC);
    in[0].weight = 1.0f;
    job.input_count = PM_BLEND_MAX_INPUTS + 1;
    assert_int_equal(pm_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    job.input_count = 2;
    job.joint_count = 0;
    assert_int_equal(pm_blend_job_run(&job, &e), PM_ERR_LIMIT);
    job.joint_count = J_COUNT;
    job.output = (pm_soa_transform *)((char *)out + 4);
    assert_int_equal(pm_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "aligned"));
    pm_pose_free(a, NULL);
    pm_pose_free(out, NULL);
}

/* ---- layered blend ---- */

static void test_branch_filters(void **state) {
    (void)state;
    pm_skeleton sk;
    make_skeleton(&sk);
    float w[J_COUNT];
    pm_branch_filter f = pm_default_branch_filter();
    f.bone = "Spine";
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
    pm_error e;
    f.bone = "Tail";
    assert_int_equal(pm_branch_filters_expand(w, &sk, &f, 1, &e), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(e.message, "Tail"));
    f.bone = "Spine";
    f.weight = NAN;
    assert_int_equal(pm_branch_filters_expand(w, &sk, &f, 1, &e), PM_ERR_INVALID_ARGUMENT);
    pm_skeleton_destroy(&sk);
}

static void run_layered(pm_soa_transform *out, const pm_soa_transform *base, const pm_blend_layer *layers, int n,
                        int blend_root) {
    pm_layered_blend_job job = pm_default_layered_blend_job();
    job.base = base;
    job.layers = layers;
    job.layer_count = n;
    job.joint_count = J_COUNT;
    job.blend_root_motion = blend_root;
    job.output = out;
    PM_ASSERT_OK(pm_layered_blend_job_run(&job, NULL));
}

static void test_layered_spine_mask_keeps_legs(void **state) {
    (void)state;
    pm_skeleton sk;
    make_skeleton(&sk);
    pm_test_rng rng = {21};
    pm_soa_transform *base = pm_pose_alloc(J_COUNT, NULL), *layer = pm_pose_alloc(J_COUNT, NULL);
    pm_soa_transform *out = pm_pose_alloc(J_COUNT, NULL);
    random_pose(base, J_COUNT, &rng, 2.0f);
    random_pose(layer, J_COUNT, &rng, 2.0f);
    float mask[J_COUNT];
    pm_branch_filter f = pm_default_branch_filter();
    f.bone = "Spine";
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
    pm_pose_free(base, NULL);
    pm_pose_free(layer, NULL);
    pm_pose_free(out, NULL);
    pm_skeleton_destroy(&sk);
}

static void test_layered_is_per_joint_lerp(void **state) {
    (void)state;
    pm_test_rng rng = {23};
    pm_soa_transform *base = pm_pose_alloc(J_COUNT, NULL), *layer = pm_pose_alloc(J_COUNT, NULL);
    pm_soa_transform *out = pm_pose_alloc(J_COUNT, NULL);
    random_pose(base, J_COUNT, &rng, 2.0f);
    random_pose(layer, J_COUNT, &rng, 2.0f);
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
    /* Two full layers on the same joints: normalised among themselves, the base left out. */
    pm_soa_transform *layer2 = pm_pose_alloc(J_COUNT, NULL);
    random_pose(layer2, J_COUNT, &rng, 2.0f);
    pm_blend_layer two[2] = {{layer, 1.0f, NULL}, {layer2, 1.0f, NULL}};
    run_layered(out, base, two, 2, 1);
    for (int j = 0; j < J_COUNT; j++) {
        pm_quat a = pm_pose_rotation(layer, j), b = pm_quat_abs_near(pm_pose_rotation(layer2, j), pm_pose_rotation(base, j));
        a = pm_quat_abs_near(a, pm_pose_rotation(base, j));
        pm_quat ref = pm_quat_normalize(pm_quat_make(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w));
        assert_quat_near(pm_pose_rotation(out, j), ref, 2e-5f);
        assert_vec_near(pm_pose_translation(out, j),
                        pm_vec3_lerp(pm_pose_translation(layer, j), pm_pose_translation(layer2, j), 0.5f), 2e-5f);
    }
    /* A zero-weight layer is not read. */
    pm_blend_layer ghost[2] = {{NULL, 0.0f, NULL}, {layer, 0.8f, mask}};
    pm_soa_transform *o2 = pm_pose_alloc(J_COUNT, NULL);
    run_layered(o2, base, ghost, 2, 1);
    run_layered(out, base, &l, 1, 1);
    assert_true(poses_bitwise_equal(out, o2, J_COUNT));
    pm_pose_free(o2, NULL);
    pm_pose_free(layer2, NULL);
    pm_pose_free(base, NULL);
    pm_pose_free(layer, NULL);
    pm_pose_free(out, NULL);
}

static void test_layered_errors(void **state) {
    (void)state;
    pm_soa_transform *base = pm_pose_alloc(J_COUNT, NULL), *out = pm_pose_alloc(J_COUNT, NULL);
    float mask[J_COUNT];
    for (int j = 0; j < J_COUNT; j++) mask[j] = 0.5f;
    mask[7] = NAN;
    pm_blend_layer l = {base, 1.0f, mask};
    pm_layered_blend_job job = pm_default_layered_blend_job();
    job.base = base;
    job.layers = &l;
    job.layer_count = 1;
    job.joint_count = J_COUNT;
    job.output = out;
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
    PM_ASSERT_OK(pm_layered_blend_job_run(&job, NULL));
    pm_pose_free(base, NULL);
    pm_pose_free(out, NULL);
}

/* ---- additive ---- */

static void extract(pm_soa_transform *delta, const pm_soa_transform *source, const pm_soa_transform *base) {
    pm_additive_extract_job job = pm_default_additive_extract_job();
    job.source = source;
    job.base = base;
    job.joint_count = J_COUNT;
    job.output = delta;
    PM_ASSERT_OK(pm_additive_extract_job_run(&job, NULL));
}

static void apply(pm_soa_transform *out, const pm_soa_transform *target, const pm_soa_transform *delta, float w,
                  const float *mask) {
    pm_additive_apply_job job = pm_default_additive_apply_job();
    job.target = target;
    job.delta = delta;
    job.weight = w;
    job.joint_weights = mask;
    job.joint_count = J_COUNT;
    job.output = out;
    PM_ASSERT_OK(pm_additive_apply_job_run(&job, NULL));
}

static void test_additive_round_trip(void **state) {
    (void)state;
    pm_test_rng rng = {31};
    pm_soa_transform *source = pm_pose_alloc(J_COUNT, NULL), *base = pm_pose_alloc(J_COUNT, NULL);
    pm_soa_transform *delta = pm_pose_alloc(J_COUNT, NULL), *out = pm_pose_alloc(J_COUNT, NULL);
    for (int trial = 0; trial < 20; trial++) {
        random_pose(source, J_COUNT, &rng, 3.0f);
        random_pose(base, J_COUNT, &rng, 3.0f);
        extract(delta, source, base);
        apply(out, base, delta, 1.0f, NULL);
        for (int j = 0; j < J_COUNT; j++) {
            assert_quat_near(pm_pose_rotation(out, j), pm_pose_rotation(source, j), 1e-5f);
            assert_vec_near(pm_pose_translation(out, j), pm_pose_translation(source, j), 1e-5f);
        }
        /* Weight 0: the target, and the delta is not read. */
        pm_additive_apply_job job = pm_default_additive_apply_job();
        job.target = base;
        job.weight = 0.0f;
        job.joint_count = J_COUNT;
        job.output = out;
        PM_ASSERT_OK(pm_additive_apply_job_run(&job, NULL));
        assert_true(poses_bitwise_equal(out, base, J_COUNT));
    }
    pm_pose_free(source, NULL);
    pm_pose_free(base, NULL);
    pm_pose_free(delta, NULL);
    pm_pose_free(out, NULL);
}

static void test_additive_order_matters(void **state) {
    (void)state;
    /* Base: identity; source: a 30 degree nod about the joint's own X. Target: the joint turned
     * 90 degrees about Y. Applied on the right (local space) the nod stays about the joint's own X;
     * applied on the left it would be about the parent's X, which after the turn is a roll. */
    pm_soa_transform *base = pm_pose_alloc(J_COUNT, NULL), *source = pm_pose_alloc(J_COUNT, NULL);
    pm_soa_transform *target = pm_pose_alloc(J_COUNT, NULL), *delta = pm_pose_alloc(J_COUNT, NULL);
    pm_soa_transform *out = pm_pose_alloc(J_COUNT, NULL);
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
    pm_pose_free(base, NULL);
    pm_pose_free(source, NULL);
    pm_pose_free(target, NULL);
    pm_pose_free(delta, NULL);
    pm_pose_free(out, NULL);
}

static void test_additive_power(void **state) {
    (void)state;
    pm_test_rng rng = {41};
    pm_soa_transform *target = pm_pose_alloc(J_COUNT, NULL), *delta = pm_pose_alloc(J_COUNT, NULL);
    pm_soa_transform *out = pm_pose_alloc(J_COUNT, NULL);
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
    pm_additive_apply_job nj = pm_default_additive_apply_job();
    nj.target = target;
    nj.delta = delta;
    nj.joint_count = J_COUNT;
    nj.output = out;
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
    pm_additive_apply_job job = pm_default_additive_apply_job();
    job.target = target;
    job.delta = delta;
    job.joint_count = J_COUNT;
    job.output = out;
    job.weight = NAN;
    assert_int_equal(pm_additive_apply_job_run(&job, &e), PM_ERR_NUMERIC);
    job.weight = 1.5f;
    assert_int_equal(pm_additive_apply_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    job.weight = 1.0f;
    job.delta = NULL;
    assert_int_equal(pm_additive_apply_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    pm_pose_free(target, NULL);
    pm_pose_free(delta, NULL);
    pm_pose_free(out, NULL);
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
            pm_clip_sample(&base, t, br, bt);
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

static void test_local_to_model(void **state) {
    (void)state;
    pm_skeleton sk;
    make_skeleton(&sk);
    pm_test_rng rng = {61};
    pm_soa_transform *pose = pm_pose_alloc(J_COUNT, NULL);
    pm_transform out[J_COUNT], ref[J_COUNT];
    pm_quat lr[J_COUNT];
    pm_vec3 lt[J_COUNT];
    for (int trial = 0; trial < 30; trial++) {
        random_pose(pose, J_COUNT, &rng, 3.0f);
        PM_ASSERT_OK(pm_pose_to_aos(lr, lt, J_COUNT, pose, NULL));
        pm_transform root = pm_transform_identity();
        root.rotation = random_quat(&rng, 3.0f);
        root.translation = pm_vec3_make(5.0f, -2.0f, 1.0f);
        pm_local_to_model_job job = pm_default_local_to_model_job();
        job.parents = sk.parents;
        job.joint_count = J_COUNT;
        job.input = pose;
        job.output = out;
        if (trial % 2) job.root = &root;
        PM_ASSERT_OK(pm_local_to_model_job_validate(&job, NULL));
        PM_ASSERT_OK(pm_local_to_model_job_run(&job, NULL));
        pm_local_to_model(ref, sk.parents, J_COUNT, lr, lt);
        for (int j = 0; j < J_COUNT; j++) {
            pm_transform r = trial % 2 ? pm_transform_mul(root, ref[j]) : ref[j];
            assert_quat_near(out[j].rotation, r.rotation, 1e-5f);
            assert_vec_near(out[j].translation, r.translation, 1e-4f);
        }
    }
    pm_error e;
    int32_t bad[J_COUNT];
    memcpy(bad, sk.parents, sizeof bad);
    bad[5] = 7;
    pm_local_to_model_job job = pm_default_local_to_model_job();
    job.parents = bad;
    job.joint_count = J_COUNT;
    job.input = pose;
    job.output = out;
    assert_int_equal(pm_local_to_model_job_validate(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_local_to_model_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "joint 5"));
    bad[5] = -3;
    assert_int_equal(pm_local_to_model_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    job.parents = NULL;
    assert_int_equal(pm_local_to_model_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    pm_pose_free(pose, NULL);
    pm_skeleton_destroy(&sk);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pose_conversions),
        cmocka_unit_test(test_sampling_matches_clip),
        cmocka_unit_test(test_sampling_errors),
        cmocka_unit_test(test_blend_matches_reference),
        cmocka_unit_test(test_blend_zero_weight_is_not_read),
        cmocka_unit_test(test_blend_hemisphere),
        cmocka_unit_test(test_blend_errors),
        cmocka_unit_test(test_branch_filters),
        cmocka_unit_test(test_layered_spine_mask_keeps_legs),
        cmocka_unit_test(test_layered_is_per_joint_lerp),
        cmocka_unit_test(test_layered_errors),
        cmocka_unit_test(test_additive_round_trip),
        cmocka_unit_test(test_additive_order_matters),
        cmocka_unit_test(test_additive_power),
        cmocka_unit_test(test_additive_clip),
        cmocka_unit_test(test_local_to_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
