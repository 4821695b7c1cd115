/* The local-to-model job's kernels against each other: the AVX2 and AVX-512 kernels that
 * pm_local_to_model_job_run picks on CPUs that have them must give the same bits as the baseline
 * SSE2 / NEON kernels (a pose must not depend on the machine that computed it). Accuracy against
 * the double-precision reference is in test_blend_precision.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pose_kernels.h"
#include "support.h"

#define MAX_JOINTS 600

typedef enum shape { SHAPE_RANDOM, SHAPE_CHAIN, SHAPE_FAN, SHAPE_FOREST, SHAPE_DEPTH_FIRST, SHAPE_COUNT } shape;
static const char *const shape_names[SHAPE_COUNT] = {"random", "chain", "fan", "forest", "depth-first"};

static void make_parents(int32_t *parents, int n, shape s, pm_test_rng *rng) {
    for (int j = 0; j < n; j++) {
        uint32_t r = pm_test_rng_u32(rng);
        switch (s) {
        case SHAPE_RANDOM: parents[j] = (int32_t)(r % (uint32_t)(j + 1)) - 1; break;
        case SHAPE_CHAIN: parents[j] = j - 1; break;
        case SHAPE_FAN: parents[j] = j == 0 ? -1 : 0; break;
        case SHAPE_FOREST: parents[j] = r % 5 == 0 ? -1 : (int32_t)(r % (uint32_t)(j + 1)) - 1; break;
        default: /* chains of a few joints hanging from earlier joints, as skeletons are stored */
            parents[j] = j == 0 ? -1 : (r % 4 ? j - 1 : (int32_t)((r >> 8) % (uint32_t)j));
        }
    }
}

/* Rotations of every size and sign (unit ones mostly; the job does not require it and the bits
 * must agree anyway), zeros of both signs and subnormals among the translations. */
static void make_pose(pm_soa_transform *pose, int n, pm_test_rng *rng) {
    for (int j = 0; j < n; j++) {
        pm_quat q = pm_quat_make(pm_test_rng_normal(rng), pm_test_rng_normal(rng), pm_test_rng_normal(rng),
                                 pm_test_rng_normal(rng));
        uint32_t kind = pm_test_rng_u32(rng) % 8;
        if (kind < 6) q = pm_quat_normalize(q);
        else if (kind == 6) q = pm_quat_make(0.0f, -0.0f, 0.0f, 1.0f);
        float scale = kind == 7 ? 1e3f : 0.3f;
        pm_vec3 t = pm_vec3_make(scale * pm_test_rng_normal(rng), scale * pm_test_rng_normal(rng),
                                 scale * pm_test_rng_normal(rng));
        if (pm_test_rng_u32(rng) % 16 == 0) t = pm_vec3_make(-0.0f, 1e-40f, 0.0f);
        pm_pose_set_joint(pose, j, q, t);
    }
}

typedef struct outputs {
    pm_transform *transforms; /* MAX_JOINTS + 1: the last one is a guard */
    float *matrices;          /* 16 * (MAX_JOINTS + 1) */
    pm_soa_transform *matrix_store;
} outputs;

static void outputs_init(outputs *o) {
    o->transforms = (pm_transform *)malloc(sizeof(pm_transform) * (MAX_JOINTS + 1));
    /* 16-byte aligned like the job asks: pose groups (4 joints each) enough for the matrices */
    int groups = (int)(sizeof(float) * 16 * (MAX_JOINTS + 1) / sizeof(pm_soa_transform)) + 1;
    o->matrix_store = pm_pose_alloc(4 * groups, NULL);
    o->matrices = (float *)o->matrix_store;
    assert_non_null(o->transforms);
    assert_non_null(o->matrix_store);
}

static void outputs_free(outputs *o) {
    free(o->transforms);
    pm_pose_free(o->matrix_store, NULL);
}

/* Runs the job with one kernel into `o` (filled with a pattern first, guards included). */
static pm_result run_kernel(outputs *o, const pm_local_to_model_job *base, int transforms, int matrices, int kernel,
                            pm_error *error) {
    memset(o->transforms, 0x5a, sizeof(pm_transform) * (MAX_JOINTS + 1));
    memset(o->matrices, 0x5a, sizeof(float) * 16 * (MAX_JOINTS + 1));
    pm_local_to_model_job job = *base;
    job.output = transforms ? o->transforms : NULL;
    job.output_matrices = matrices ? o->matrices : NULL;
    return pm_local_to_model_job_run_kernel(&job, kernel, error);
}

static void assert_guards(const outputs *o, int n, const char *what) {
    unsigned char pattern[sizeof(float) * 16]; /* larger than a transform */
    memset(pattern, 0x5a, sizeof pattern);
    if (memcmp(o->transforms + n, pattern, sizeof(pm_transform)) != 0)
        fail_msg("%s: written past the last transform (%d joints)", what, n);
    if (memcmp(o->matrices + 16 * n, pattern, sizeof(float) * 16) != 0)
        fail_msg("%s: written past the last matrix (%d joints)", what, n);
}

/* Every output combination, with and without a root, on hierarchies of all shapes and of sizes
 * around the kernels' blocks of 4, 8 and 16 joints: the AVX2 and AVX-512 kernels and the baseline
 * agree bit for bit, and so does the default entry point (the widest kernel the CPU has). */
static void test_kernels_agree(void **state) {
    (void)state;
    static const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 20, 21, 23, 24, 25, 27, 28, 29,
                                31, 32, 33, 48, 49, 64, 65, 66, 67, 100, 255, 256, 257, 600};
    /* Without AVX2 every run takes the baseline kernel: the runs and their guards are still
     * checked, the comparisons (baseline against itself) are skipped. */
    const int have_avx2 = pm_l2m_avx2_supported(), have_avx512 = pm_l2m_avx512_supported();
    if (!have_avx2)
        printf("local-to-model: no AVX2 kernels here (CPU or build): only the baseline kernels run\n");
    else if (!have_avx512)
        printf("local-to-model: no AVX-512 kernel here (CPU or build): its runs take the AVX2 kernels\n");
    int32_t *parents = (int32_t *)malloc(sizeof(int32_t) * MAX_JOINTS);
    pm_soa_transform *pose = pm_pose_alloc(MAX_JOINTS, NULL);
    outputs base, avx2, avx512, dispatched;
    outputs_init(&base);
    outputs_init(&avx2);
    outputs_init(&avx512);
    outputs_init(&dispatched);
    pm_test_rng rng = {4099};
    pm_transform root;
    root.rotation = pm_quat_normalize(pm_quat_make(0.3f, -0.2f, 0.7f, 0.5f));
    root.translation = pm_vec3_make(1.5f, -20.0f, 0.25f);
    long compared = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int n = sizes[si];
        for (int sh = 0; sh < SHAPE_COUNT; sh++) {
            for (int trial = 0; trial < 4; trial++) {
                make_parents(parents, n, (shape)sh, &rng);
                make_pose(pose, n, &rng);
                pm_local_to_model_job job = pm_default_local_to_model_job();
                job.parents = parents;
                job.joint_count = n;
                job.input = pose;
                job.root = trial % 2 ? &root : NULL;
                for (int mode = 0; mode < 3; mode++) {
                    int tr = mode != 1, mt = mode != 0;
                    PM_ASSERT_OK(run_kernel(&base, &job, tr, mt, PM_KERNEL_BASELINE, NULL));
                    PM_ASSERT_OK(run_kernel(&avx2, &job, tr, mt, PM_KERNEL_AVX2, NULL));
                    PM_ASSERT_OK(run_kernel(&avx512, &job, tr, mt, PM_KERNEL_AVX512, NULL));
                    PM_ASSERT_OK(run_kernel(&dispatched, &job, tr, mt, PM_KERNEL_AUTO, NULL));
                    assert_guards(&base, n, "baseline kernel");
                    assert_guards(&avx2, n, "AVX2 kernel");
                    assert_guards(&avx512, n, "AVX-512 kernel");
                    assert_guards(&dispatched, n, "default kernel");
                    if (!have_avx2) continue;
                    static const char *const modes[3] = {"transforms", "matrices", "both outputs"};
                    if (tr && memcmp(base.transforms, avx2.transforms, sizeof(pm_transform) * (size_t)n) != 0)
                        fail_msg("%s hierarchy, %d joints, %s: the AVX2 transforms differ from the baseline's",
                                 shape_names[sh], n, modes[mode]);
                    if (mt && memcmp(base.matrices, avx2.matrices, sizeof(float) * 16 * (size_t)n) != 0)
                        fail_msg("%s hierarchy, %d joints, %s: the AVX2 matrices differ from the baseline's",
                                 shape_names[sh], n, modes[mode]);
                    if (mt && memcmp(base.matrices, avx512.matrices, sizeof(float) * 16 * (size_t)n) != 0)
                        fail_msg("%s hierarchy, %d joints, %s: the AVX-512 matrices differ from the baseline's",
                                 shape_names[sh], n, modes[mode]);
                    if (tr && memcmp(base.transforms, avx512.transforms, sizeof(pm_transform) * (size_t)n) != 0)
                        fail_msg("%s hierarchy, %d joints, %s: the AVX-512 run's transforms differ from the baseline's",
                                 shape_names[sh], n, modes[mode]);
                    if (memcmp(dispatched.transforms, avx512.transforms, sizeof(pm_transform) * (size_t)n) != 0 ||
                        memcmp(dispatched.matrices, avx512.matrices, sizeof(float) * 16 * (size_t)n) != 0)
                        fail_msg("%d joints, %s: pm_local_to_model_job_run differs from the widest kernel", n, modes[mode]);
                    compared++;
                }
            }
        }
    }
    if (have_avx2)
        printf("local-to-model: %ld runs of each kernel (%s) agree bit for bit\n", compared,
               have_avx512 ? "baseline, AVX2, AVX-512" : "baseline, AVX2");
    outputs_free(&base);
    outputs_free(&avx2);
    outputs_free(&avx512);
    outputs_free(&dispatched);
    pm_pose_free(pose, NULL);
    free(parents);
    if (!have_avx2) skip(); /* nothing compared: report the test as skipped, not passed */
    assert_true(compared > 0);
}

/* A bad parent is reported the same way by every kernel, wherever it sits in a block, and
 * before any joint is written (the kernels wrote the joints before it). */
static void test_kernels_reject_alike(void **state) {
    (void)state;
    const int n = 37;
    int32_t parents[37];
    pm_soa_transform *pose = pm_pose_alloc(n, NULL);
    pm_test_rng rng = {77};
    make_pose(pose, n, &rng);
    outputs o;
    outputs_init(&o);
    for (int bad = 0; bad < n; bad++) {
        for (int kind = 0; kind < 2; kind++) {
            make_parents(parents, n, SHAPE_DEPTH_FIRST, &rng);
            parents[bad] = kind ? bad : -2; /* itself, or a negative other than -1 */
            pm_local_to_model_job job = pm_default_local_to_model_job();
            job.parents = parents;
            job.joint_count = n;
            job.input = pose;
            for (int mode = 0; mode < 3; mode++)
                for (int kernel = PM_KERNEL_BASELINE; kernel <= PM_KERNEL_AVX512; kernel++) {
                    pm_error e;
                    assert_int_equal(run_kernel(&o, &job, mode != 1, mode != 0, kernel, &e), PM_ERR_INVALID_ARGUMENT);
                    const uint8_t *bytes = (const uint8_t *)o.transforms, *mbytes = (const uint8_t *)o.matrices;
                    for (size_t b = 0; b < sizeof(pm_transform) * (size_t)n; b++) assert_int_equal(bytes[b], 0x5a);
                    for (size_t b = 0; b < sizeof(float) * 16 * (size_t)n; b++) assert_int_equal(mbytes[b], 0x5a);
                    char want[64];
                    snprintf(want, sizeof want, "joint %d has parent %d", bad, (int)parents[bad]);
                    if (!strstr(e.message, want)) fail_msg("kernel %d: '%s' lacks '%s'", kernel, e.message, want);
                }
        }
    }
    outputs_free(&o);
    pm_pose_free(pose, NULL);
}

/* The hierarchy check validate runs on every pose, in each build: valid parents pass, and one bad
 * parent anywhere (a tail past the vector width included) fails - -2, itself, a later joint and
 * the extremes of int32. */
static void test_parents_check_builds(void **state) {
    (void)state;
    static const int kernels[3] = {PM_KERNEL_BASELINE, PM_KERNEL_AVX2, PM_KERNEL_AVX512};
    int32_t parents[130];
    pm_test_rng rng = {515};
    for (int n = 1; n <= 130; n++) {
        make_parents(parents, n, (shape)(n % SHAPE_COUNT), &rng);
        for (int k = 0; k < 3; k++)
            if (pm_l2m_parents_bad(parents, n, kernels[k])) fail_msg("kernel %d: %d valid parents rejected", kernels[k], n);
        for (int at = 0; at < n; at++) {
            const int32_t keep = parents[at];
            const int32_t bad_values[5] = {-2, at, at + 1, INT32_MIN, INT32_MAX};
            for (int b = 0; b < 5; b++) {
                parents[at] = bad_values[b];
                for (int k = 0; k < 3; k++)
                    if (!pm_l2m_parents_bad(parents, n, kernels[k]))
                        fail_msg("kernel %d, %d joints: parent %d of joint %d passed", kernels[k], n, (int)parents[at], at);
            }
            parents[at] = keep;
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_agree),
        cmocka_unit_test(test_kernels_reject_alike),
        cmocka_unit_test(test_parents_check_builds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
