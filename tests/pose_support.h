/* Helpers shared by the pose-job tests (test_blend_jobs.c, test_additive.c,
 * test_pose_job_errors.c): a small humanoid, random poses, job set-ups, a smooth clip and
 * tolerant comparisons. Header-only: each test binary is one file. */
#ifndef PM_TESTS_POSE_SUPPORT_H
#define PM_TESTS_POSE_SUPPORT_H

#include <math.h>
#include <string.h>

#include "support.h"

/* A small humanoid-like hierarchy: root/hips, spine chain with head, two legs, two arms. */
enum { J_HIPS, J_SPINE, J_CHEST, J_NECK, J_HEAD, J_LUPLEG, J_LLEG, J_LFOOT, J_RUPLEG, J_RLEG, J_RFOOT, J_LARM, J_LHAND, J_COUNT };
static const char *const pm_test_humanoid_names[J_COUNT] = {"Hips", "Spine", "Chest", "Neck", "Head", "LeftUpLeg", "LeftLeg",
                                                 "LeftFoot", "RightUpLeg", "RightLeg", "RightFoot", "LeftArm", "LeftHand"};
static const int pm_test_humanoid_parents[J_COUNT] = {-1, 0, 1, 2, 3, 0, 5, 6, 0, 8, 9, 2, 11};

static inline void make_skeleton(pm_skeleton *sk) {
    PM_ASSERT_OK(pm_skeleton_create(sk, J_COUNT, NULL, NULL));
    for (int j = 0; j < J_COUNT; j++) {
        PM_ASSERT_OK(pm_skeleton_set_name(sk, j, pm_test_humanoid_names[j], NULL));
        sk->parents[j] = pm_test_humanoid_parents[j];
        sk->rest_translations[j] = pm_vec3_make(0.1f * (float)(j % 3), j ? 0.2f : 0.9f, 0.05f * (float)(j % 2));
    }
}

static inline pm_quat random_quat(pm_test_rng *rng, float max_angle) {
    pm_vec3 axis = pm_vec3_make(pm_test_rng_normal(rng), pm_test_rng_normal(rng), pm_test_rng_normal(rng));
    return pm_quat_from_axis_angle(axis, max_angle * (2.0f * pm_test_rng_float(rng) - 1.0f));
}

static inline void random_pose(pm_soa_transform *pose, int joints, pm_test_rng *rng, float max_angle) {
    PM_ASSERT_OK(pm_pose_set_identity(pose, joints, NULL));
    for (int j = 0; j < joints; j++)
        pm_pose_set_joint(pose, j, random_quat(rng, max_angle),
                          pm_vec3_make(pm_test_rng_normal(rng), pm_test_rng_normal(rng), pm_test_rng_normal(rng)));
}

/* A fresh humanoid pose, unset. */
static inline pm_soa_transform *new_pose(void) { return pm_pose_alloc(J_COUNT, NULL); }

/* A fresh humanoid pose, set by random_pose. */
static inline pm_soa_transform *new_random_pose(pm_test_rng *rng, float max_angle) {
    pm_soa_transform *pose = new_pose();
    random_pose(pose, J_COUNT, rng, max_angle);
    return pose;
}

/* pm_pose_free on each of `count` poses. */
static inline void free_pose_array(pm_soa_transform *const *poses, size_t count) {
    for (size_t i = 0; i < count; i++) pm_pose_free(poses[i], NULL);
}

/* pm_pose_free on each pose listed. */
#define FREE_POSES(...)                                                                              \
    free_pose_array((pm_soa_transform *const[]){__VA_ARGS__},                                       \
                    sizeof((pm_soa_transform *const[]){__VA_ARGS__}) / sizeof(pm_soa_transform *))

/* A filter of the whole branch from the spine up: spine, chest, neck, head, left arm and hand. */
static inline pm_branch_filter spine_filter(void) {
    pm_branch_filter f = pm_default_branch_filter();
    f.bone = "Spine";
    return f;
}

/* Jobs over the humanoid's joints, with their poses; each test sets the rest it checks. */
static inline pm_blend_job blend_job(const pm_blend_input *inputs, int count, pm_soa_transform *out) {
    pm_blend_job job = pm_default_blend_job();
    job.inputs = inputs, job.input_count = count, job.joint_count = J_COUNT, job.output = out;
    return job;
}

static inline pm_layered_blend_job layered_job(const pm_soa_transform *base, const pm_blend_layer *layers, int count,
                                               pm_soa_transform *out) {
    pm_layered_blend_job job = pm_default_layered_blend_job();
    job.base = base, job.layers = layers, job.layer_count = count, job.joint_count = J_COUNT, job.output = out;
    return job;
}

static inline void run_blend(pm_soa_transform *out, const pm_blend_input *in, int n) {
    pm_blend_job job = blend_job(in, n, out);
    PM_ASSERT_OK(pm_blend_job_run(&job, NULL));
}

static inline void run_layered(pm_soa_transform *out, const pm_soa_transform *base, const pm_blend_layer *layers,
                               int n, int blend_root) {
    pm_layered_blend_job job = layered_job(base, layers, n, out);
    job.blend_root_motion = blend_root;
    PM_ASSERT_OK(pm_layered_blend_job_run(&job, NULL));
}

static inline pm_additive_extract_job extract_job(const pm_soa_transform *source, const pm_soa_transform *base,
                                                  pm_soa_transform *out) {
    pm_additive_extract_job job = pm_default_additive_extract_job();
    job.source = source, job.base = base, job.joint_count = J_COUNT, job.output = out;
    return job;
}

static inline pm_additive_apply_job apply_job(const pm_soa_transform *target, const pm_soa_transform *delta,
                                              pm_soa_transform *out) {
    pm_additive_apply_job job = pm_default_additive_apply_job();
    job.target = target, job.delta = delta, job.joint_count = J_COUNT, job.output = out;
    return job;
}

/* A smooth clip: every joint swings about its own axis. */
static inline void make_clip(pm_clip *clip, const pm_skeleton *sk, int frames, float fps, int looping, uint64_t seed) {
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
static inline float quat_angle(pm_quat a, pm_quat b) {
    pm_quat d = pm_quat_mul(pm_quat_conjugate(pm_quat_normalize(a)), pm_quat_normalize(b));
    double v = sqrt((double)d.x * d.x + (double)d.y * d.y + (double)d.z * d.z);
    return (float)(2.0 * atan2(v, fabs((double)d.w)));
}

static inline void assert_quat_near(pm_quat a, pm_quat b, float tol) {
    float ang = quat_angle(a, b);
    if (!(ang <= tol)) fail_msg("rotations differ by %g rad (tolerance %g)", (double)ang, (double)tol);
}

static inline void assert_vec_near(pm_vec3 a, pm_vec3 b, float tol) {
    float d = pm_vec3_length(pm_vec3_sub(a, b));
    if (!(d <= tol)) fail_msg("vectors differ by %g (tolerance %g)", (double)d, (double)tol);
}

static inline int poses_bitwise_equal(const pm_soa_transform *a, const pm_soa_transform *b, int joints) {
    for (int j = 0; j < joints; j++) {
        pm_quat qa = pm_pose_rotation(a, j), qb = pm_pose_rotation(b, j);
        pm_vec3 ta = pm_pose_translation(a, j), tb = pm_pose_translation(b, j);
        if (memcmp(&qa, &qb, sizeof qa) != 0 || memcmp(&ta, &tb, sizeof ta) != 0) return 0;
    }
    return 1;
}

#endif
