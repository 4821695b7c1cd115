/* The pose jobs' two kernel builds against each other: the AVX2 build that the run functions pick
 * on CPUs that have AVX2 must give the bits of the baseline build (SSE2 / NEON) for every job and
 * every path through it - a pose must not depend on the machine that computed it. Joint counts
 * cross the 4-joint groups and the kernels' 64-group chunks; inputs include sign-flipped and
 * half-turn rotations, zero, tiny, uneven and (additive) out-of-range weights, and masks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blend_internal.h"
#include "support.h"

static const int joint_counts[] = {1, 3, 4, 5, 13, 65, 130, 257, 263};
enum { COUNTS = (int)(sizeof joint_counts / sizeof joint_counts[0]), MAX_J = 263, POSES = 8 };

/* Unit rotations mostly, some the negation or the half turn of the first pose's (the hemisphere
 * tests), some left unnormalised (the jobs do not require unit inputs, and the bits must agree
 * anyway); translations of every size, zeros of both signs among them. */
static void make_poses(pm_soa_transform **poses, int n, pm_test_rng *rng) {
    for (int p = 0; p < POSES; p++)
        for (int j = 0; j < n; j++) {
            pm_quat q = pm_test_random_quat(rng);
            uint32_t kind = pm_test_rng_u32(rng) % 8;
            if (p > 0 && kind == 0) {
                q = pm_pose_rotation(poses[0], j);
                q = pm_quat_make(-q.x, -q.y, -q.z, -q.w);
            } else if (p > 0 && kind == 1) {
                pm_quat r = pm_pose_rotation(poses[0], j);
                q = pm_quat_mul(r, pm_quat_make(1.0f, 0.0f, 0.0f, 0.0f));
            } else if (kind == 2)
                q = pm_quat_make(2.0f * q.x, 2.0f * q.y, 2.0f * q.z, 2.0f * q.w);
            float scale = kind == 3 ? 1e3f : 0.5f;
            pm_vec3 t = pm_vec3_make(scale * pm_test_rng_normal(rng), scale * pm_test_rng_normal(rng),
                                     scale * pm_test_rng_normal(rng));
            if (kind == 4) t = pm_vec3_make(-0.0f, 0.0f, -0.0f);
            pm_pose_set_joint(poses[p], j, q, t);
        }
}

static void make_mask(float *mask, int n, pm_test_rng *rng) {
    for (int j = 0; j < n; j++) {
        uint32_t kind = pm_test_rng_u32(rng) % 4;
        mask[j] = kind == 0 ? 0.0f : kind == 1 ? 1.0f : pm_test_rng_float(rng);
    }
}

/* Both builds' outputs, filled with a different pattern each first: a lane that both builds
 * leave unwritten differs too, so the comparison also finds a lane a kernel forgets. */
typedef struct pair {
    pm_soa_transform *out[2];
    size_t bytes;
} pair;

static void pair_fill(pair *p) {
    memset(p->out[0], 0x5a, p->bytes);
    memset(p->out[1], 0xa5, p->bytes);
}

static void pair_check(const pair *p, const char *what, int n) {
    if (memcmp(p->out[0], p->out[1], p->bytes) != 0) {
        const float *a = (const float *)p->out[0], *b = (const float *)p->out[1];
        size_t i = 0;
        while (i < p->bytes / sizeof(float) && memcmp(&a[i], &b[i], sizeof(float)) == 0) i++;
        fail_msg("%s, %d joints: the AVX2 kernels give %.9g where the baseline gives %.9g (float %zu)", what, n,
                 (double)b[i], (double)a[i], i);
    }
}

static const int kernels[2] = {PM_KERNEL_BASELINE, PM_KERNEL_AVX2};

static void test_blend_and_layered(void **state) {
    (void)state;
    if (pm_pose_kernels_pick(PM_KERNEL_AVX2) == pm_pose_kernels_pick(PM_KERNEL_BASELINE))
        printf("pose job kernels: no AVX2 build here (CPU or build): the baseline is compared with itself\n");
    pm_test_rng rng = {42};
    pm_soa_transform *poses[POSES];
    for (int p = 0; p < POSES; p++) poses[p] = pm_pose_alloc(MAX_J, NULL);
    pair o = {{pm_pose_alloc(MAX_J, NULL), pm_pose_alloc(MAX_J, NULL)}, 0};
    float masks[3][MAX_J];
    for (int c = 0; c < COUNTS; c++) {
        const int n = joint_counts[c];
        o.bytes = (size_t)pm_soa_count(n) * sizeof(pm_soa_transform);
        for (int round = 0; round < 6; round++) {
            make_poses(poses, n, &rng);
            /* N-pose blends: 2, 3 (their own kernels) and more, the heaviest anywhere, zero and
             * tiny weights among them. */
            for (int inputs = 2; inputs <= POSES; inputs++) {
                pm_blend_input in[POSES];
                for (int i = 0; i < inputs; i++) {
                    uint32_t kind = pm_test_rng_u32(&rng) % 6;
                    float w = kind == 0 ? 0.0f : kind == 1 ? 1e-30f : 0.05f + pm_test_rng_float(&rng);
                    in[i] = (pm_blend_input){poses[i], w};
                }
                in[0].weight = 0.5f;
                pm_blend_job job = pm_default_blend_job();
                job.inputs = in;
                job.input_count = inputs;
                job.joint_count = n;
                pair_fill(&o);
                for (int k = 0; k < 2; k++) {
                    job.output = o.out[k];
                    PM_ASSERT_OK(pm_blend_job_run_kernel(&job, kernels[k], NULL));
                }
                pair_check(&o, "blend job", n);
            }
            /* Layered blends: one layer (its own kernel) and several, masked or not, over-full. */
            for (int m = 0; m < 3; m++) make_mask(masks[m], n, &rng);
            for (int layers = 1; layers <= 3; layers++)
                for (int masked = 0; masked < 2; masked++) {
                    pm_blend_layer l[3];
                    for (int i = 0; i < layers; i++)
                        l[i] = (pm_blend_layer){poses[i + 1], i == 2 ? 1.0f : pm_test_rng_float(&rng),
                                                masked ? masks[i] : NULL};
                    pm_layered_blend_job job = pm_default_layered_blend_job();
                    job.base = poses[0];
                    job.layers = l;
                    job.layer_count = layers;
                    job.joint_count = n;
                    job.blend_root_motion = round & 1;
                    pair_fill(&o);
                    for (int k = 0; k < 2; k++) {
                        job.output = o.out[k];
                        PM_ASSERT_OK(pm_layered_blend_job_run_kernel(&job, kernels[k], NULL));
                    }
                    pair_check(&o, "layered blend job", n);
                }
        }
    }
    for (int p = 0; p < POSES; p++) pm_pose_free(poses[p], NULL);
    pm_pose_free(o.out[0], NULL);
    pm_pose_free(o.out[1], NULL);
}

static void test_additive(void **state) {
    (void)state;
    pm_test_rng rng = {7};
    pm_soa_transform *poses[POSES];
    for (int p = 0; p < POSES; p++) poses[p] = pm_pose_alloc(MAX_J, NULL);
    pair o = {{pm_pose_alloc(MAX_J, NULL), pm_pose_alloc(MAX_J, NULL)}, 0};
    float mask[MAX_J];
    /* 1: the delta as it is; fractions: the uniform and per-lane polynomials; beyond [0, 1]: the
     * whole powers and the conjugate. */
    static const float weights[] = {1.0f, 0.3f, 0.5f, 0.97f, 1.5f, -0.4f, -2.25f, 7.0f};
    for (int c = 0; c < COUNTS; c++) {
        const int n = joint_counts[c];
        o.bytes = (size_t)pm_soa_count(n) * sizeof(pm_soa_transform);
        for (int round = 0; round < 4; round++) {
            make_poses(poses, n, &rng);
            make_mask(mask, n, &rng);
            pm_additive_extract_job ex = pm_default_additive_extract_job();
            ex.source = poses[1];
            ex.base = poses[2];
            ex.joint_count = n;
            pair_fill(&o);
            for (int k = 0; k < 2; k++) {
                ex.output = o.out[k];
                PM_ASSERT_OK(pm_additive_extract_job_run_kernel(&ex, kernels[k], NULL));
            }
            pair_check(&o, "additive extract job", n);
            for (size_t w = 0; w < sizeof weights / sizeof weights[0]; w++)
                for (int scaling = 0; scaling < 2; scaling++)
                    for (int masked = 0; masked < 2; masked++) {
                        pm_additive_apply_job job = pm_default_additive_apply_job();
                        job.target = poses[0];
                        job.delta = poses[3];
                        job.weight = weights[w];
                        job.scaling = scaling ? PM_ADDITIVE_POWER : PM_ADDITIVE_NLERP;
                        job.joint_weights = masked ? mask : NULL;
                        job.joint_count = n;
                        pair_fill(&o);
                        for (int k = 0; k < 2; k++) {
                            job.output = o.out[k];
                            PM_ASSERT_OK(pm_additive_apply_job_run_kernel(&job, kernels[k], NULL));
                        }
                        char what[96];
                        snprintf(what, sizeof what, "additive apply job (w = %g, %s, %s)", (double)weights[w],
                                 scaling ? "power" : "nlerp", masked ? "masked" : "no mask");
                        pair_check(&o, what, n);
                    }
        }
    }
    for (int p = 0; p < POSES; p++) pm_pose_free(poses[p], NULL);
    pm_pose_free(o.out[0], NULL);
    pm_pose_free(o.out[1], NULL);
}

static void test_sampling(void **state) {
    (void)state;
    pm_test_rng rng = {3};
    for (int looping = 0; looping < 2; looping++) {
        pm_clip clip;
        pm_test_biped_clip(&clip, 9, 1.0f / 30.0f);
        clip.looping = looping;
        const int n = clip.skeleton.joint_count;
        for (int f = 0; f < clip.frame_count; f++)
            for (int j = 0; j < n; j++) {
                clip.rotations[f * n + j] = pm_test_random_quat(&rng);
                clip.translations[f * n + j] =
                    pm_vec3_make(pm_test_rng_normal(&rng), pm_test_rng_normal(&rng), pm_test_rng_normal(&rng));
            }
        pm_animation anim;
        PM_ASSERT_OK(pm_animation_build(&anim, &clip, NULL, NULL));
        pair o = {{pm_pose_alloc(n, NULL), pm_pose_alloc(n, NULL)}, (size_t)anim.soa_count * sizeof(pm_soa_transform)};
        for (int i = 0; i < 200; i++)
            for (int rot = 0; rot < 2; rot++) {
                pm_sampling_job job = pm_default_sampling_job();
                job.animation = &anim;
                job.time = (pm_test_rng_float(&rng) * 1.4f - 0.2f) * anim.duration;
                job.rotation = rot ? PM_ROTATION_SLERP : PM_ROTATION_NLERP;
                job.output_count = anim.soa_count;
                pair_fill(&o);
                for (int k = 0; k < 2; k++) {
                    job.output = o.out[k];
                    PM_ASSERT_OK(pm_sampling_job_run_kernel(&job, kernels[k], NULL));
                }
                pair_check(&o, rot ? "sampling job (slerp)" : "sampling job (nlerp)", n);
            }
        pm_pose_free(o.out[0], NULL);
        pm_pose_free(o.out[1], NULL);
        pm_animation_destroy(&anim);
        pm_clip_destroy(&clip);
    }
}

/* The public run functions take the AVX2 build where the build and the CPU have it, the baseline
 * elsewhere: what they give is one of the two, which the tests above found equal. */
static void test_public_runs_pick_a_build(void **state) {
    (void)state;
    const pm_pose_kernels *auto_pick = pm_pose_kernels_pick(PM_KERNEL_AUTO);
    assert_true(auto_pick == pm_pose_kernels_pick(PM_KERNEL_AVX2));
    assert_true(pm_pose_kernels_pick(PM_KERNEL_BASELINE) == &pm_pose_kernels_baseline);
#if defined(PM_POSE_KERNELS_HAVE_AVX2)
    assert_true(auto_pick == (pm_cpu_has_avx2() ? &pm_pose_kernels_avx2 : &pm_pose_kernels_baseline));
#else
    assert_true(auto_pick == &pm_pose_kernels_baseline);
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blend_and_layered),
        cmocka_unit_test(test_additive),
        cmocka_unit_test(test_sampling),
        cmocka_unit_test(test_public_runs_pick_a_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
