/* Pose jobs against double-precision references over whole input ranges: the additive job's
 * quaternion power (a polynomial, see src/additive.c) and local-to-model (transforms and matrices)
 * on hierarchies of every shape and size the jobs accept. The per-feature behaviour is in
 * test_blend_jobs.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* ---- double-precision quaternions ---- */

typedef struct dquat {
    double x, y, z, w;
} dquat;

static dquat dq(pm_quat q) {
    dquat r = {q.x, q.y, q.z, q.w};
    return r;
}

static dquat dquat_mul(dquat a, dquat b) {
    dquat r;
    r.x = a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y;
    r.y = a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x;
    r.z = a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w;
    r.w = a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z;
    return r;
}

/* q^t on the short arc, from the axis-angle form. */
static dquat dquat_pow(dquat q, double t) {
    if (q.w < 0.0) {
        q.x = -q.x;
        q.y = -q.y;
        q.z = -q.z;
        q.w = -q.w;
    }
    double n = sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    q.x /= n;
    q.y /= n;
    q.z /= n;
    q.w /= n;
    double s = sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
    dquat r = {0.0, 0.0, 0.0, 1.0};
    if (s < 1e-300) return r;
    double a = atan2(s, q.w), k = sin(t * a) / s;
    r.x = q.x * k;
    r.y = q.y * k;
    r.z = q.z * k;
    r.w = cos(t * a);
    return r;
}

/* Rotation angle between two rotations, robust for tiny angles. */
static double dquat_angle(dquat a, dquat b) {
    double na = sqrt(a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w);
    double nb = sqrt(b.x * b.x + b.y * b.y + b.z * b.z + b.w * b.w);
    dquat ai = {-a.x / na, -a.y / na, -a.z / na, a.w / na}, bn = {b.x / nb, b.y / nb, b.z / nb, b.w / nb};
    dquat d = dquat_mul(ai, bn);
    return 2.0 * atan2(sqrt(d.x * d.x + d.y * d.y + d.z * d.z), fabs(d.w));
}

/* ---- additive: the quaternion power ---- */

#define POW_JOINTS 64

static void run_apply(pm_soa_transform *out, const pm_soa_transform *target, const pm_soa_transform *delta, float w,
                      const float *mask, pm_additive_scaling scaling) {
    pm_additive_apply_job job = pm_default_additive_apply_job();
    job.target = target;
    job.delta = delta;
    job.weight = w;
    job.joint_weights = mask;
    job.scaling = scaling;
    job.joint_count = POW_JOINTS;
    job.output = out;
    PM_ASSERT_OK(pm_additive_apply_job_run(&job, NULL));
}

/* Every weight from 0 to 1 against every angle from 0 to a full turn (the power takes the short
 * arc, so the far hemisphere is covered by flipped deltas), with the target the identity so that
 * the output is delta^w itself. Documented bound: 1e-5 rad (measured ~2e-6). */
static void test_power_against_double(void **state) {
    (void)state;
    pm_soa_transform *target = pm_pose_alloc(POW_JOINTS, NULL), *delta = pm_pose_alloc(POW_JOINTS, NULL);
    pm_soa_transform *out = pm_pose_alloc(POW_JOINTS, NULL), *out_masked = pm_pose_alloc(POW_JOINTS, NULL);
    float ones[POW_JOINTS];
    for (int j = 0; j < POW_JOINTS; j++) ones[j] = 1.0f;
    pm_test_rng rng = {97};
    double worst = 0.0, worst_norm = 0.0, worst_w = 0.0, worst_angle = 0.0;
    for (int a_step = 0; a_step <= 60; a_step++) {
        for (int j = 0; j < POW_JOINTS; j++) {
            /* Angles 0..2 pi, tiny ones included, one random axis per joint. */
            double angle = a_step == 0 ? 1e-7 * j : (a_step == 1 ? 1e-3 * j : 2.0 * PM_PI * (a_step - 2 + j / 64.0) / 58.0);
            pm_vec3 axis = pm_vec3_make(pm_test_rng_normal(&rng), pm_test_rng_normal(&rng), pm_test_rng_normal(&rng));
            pm_quat q = pm_quat_from_axis_angle(axis, (float)angle);
            if (j % 3 == 0) q = pm_quat_neg(q);
            pm_pose_set_joint(delta, j, q, pm_vec3_zero());
        }
        for (int w_step = 0; w_step <= 40; w_step++) {
            static const float special[] = {1e-6f, 0.4999f, 0.5001f, 0.9999f, 1.0f - 1e-6f};
            float w = w_step < 36 ? (float)w_step / 35.0f : special[w_step - 36];
            run_apply(out, target, delta, w, NULL, PM_ADDITIVE_POWER);
            run_apply(out_masked, target, delta, w, ones, PM_ADDITIVE_POWER);
            /* A mask of ones gives the same bits as no mask: both paths evaluate alike. */
            if (w > 0.0f && w < 1.0f && memcmp(out, out_masked, sizeof(pm_soa_transform) * pm_soa_count(POW_JOINTS)) != 0)
                fail_msg("masked and unmasked powers differ at w = %g", (double)w);
            for (int j = 0; j < POW_JOINTS; j++) {
                pm_quat r = pm_pose_rotation(out, j);
                dquat ref = dquat_pow(dq(pm_pose_rotation(delta, j)), w);
                double err = dquat_angle(dq(r), ref);
                double norm = fabs(sqrt((double)r.x * r.x + (double)r.y * r.y + (double)r.z * r.z + (double)r.w * r.w) - 1.0);
                if (err > worst) {
                    worst = err;
                    worst_w = w;
                    worst_angle = dquat_angle(dq(pm_pose_rotation(delta, j)), (dquat){0, 0, 0, 1});
                }
                if (norm > worst_norm) worst_norm = norm;
            }
        }
    }
    printf("additive power: worst %.3g rad (w = %.4f, delta angle %.3f rad), worst | |q| - 1 | %.3g\n", worst, worst_w,
           worst_angle, worst_norm);
    if (!(worst <= 1e-5)) fail_msg("quaternion power error %g rad (bound 1e-5)", worst);
    if (!(worst_norm <= 3e-6)) fail_msg("quaternion power norm error %g (bound 3e-6)", worst_norm);
    pm_pose_free(target, NULL);
    pm_pose_free(delta, NULL);
    pm_pose_free(out, NULL);
    pm_pose_free(out_masked, NULL);
}

/* Random targets, per-joint weights, both scalings: the job's output against the double-precision
 * composition target * delta^w (power) or against its own definition (nlerp). */
static void test_power_with_masks(void **state) {
    (void)state;
    pm_soa_transform *target = pm_pose_alloc(POW_JOINTS, NULL), *delta = pm_pose_alloc(POW_JOINTS, NULL);
    pm_soa_transform *out = pm_pose_alloc(POW_JOINTS, NULL);
    float mask[POW_JOINTS];
    pm_test_rng rng = {101};
    double worst = 0.0;
    for (int trial = 0; trial < 200; trial++) {
        for (int j = 0; j < POW_JOINTS; j++) {
            pm_vec3 a0 = pm_vec3_make(pm_test_rng_normal(&rng), pm_test_rng_normal(&rng), pm_test_rng_normal(&rng));
            pm_vec3 a1 = pm_vec3_make(pm_test_rng_normal(&rng), pm_test_rng_normal(&rng), pm_test_rng_normal(&rng));
            pm_pose_set_joint(target, j, pm_quat_from_axis_angle(a0, 6.28f * pm_test_rng_float(&rng)), pm_vec3_make(1, 2, 3));
            pm_pose_set_joint(delta, j, pm_quat_from_axis_angle(a1, 6.28f * pm_test_rng_float(&rng)), pm_vec3_make(0, 1, 0));
            mask[j] = (j % 5 == 0) ? 0.0f : pm_test_rng_float(&rng);
        }
        float w = trial % 10 == 0 ? 1.0f : pm_test_rng_float(&rng);
        run_apply(out, target, delta, w, mask, PM_ADDITIVE_POWER);
        for (int j = 0; j < POW_JOINTS; j++) {
            float wj = w * mask[j];
            dquat ref = dquat_mul(dq(pm_pose_rotation(target, j)), dquat_pow(dq(pm_pose_rotation(delta, j)), wj));
            double err = dquat_angle(dq(pm_pose_rotation(out, j)), ref);
            if (err > worst) worst = err;
            pm_vec3 t = pm_pose_translation(out, j);
            assert_true(fabsf(t.y - (2.0f + wj)) <= 1e-6f && t.x == 1.0f && t.z == 3.0f);
            if (mask[j] == 0.0f) /* weight 0: the target's rotation exactly (times the identity) */
                assert_true(err < 1e-6);
        }
        run_apply(out, target, delta, w, mask, PM_ADDITIVE_NLERP);
        for (int j = 0; j < POW_JOINTS; j++) {
            double wj = (double)w * mask[j];
            dquat d = dq(pm_pose_rotation(delta, j));
            double s = d.w < 0.0 ? -1.0 : 1.0;
            dquat n = {wj * s * d.x, wj * s * d.y, wj * s * d.z, 1.0 - wj + wj * s * d.w};
            assert_true(dquat_angle(dq(pm_pose_rotation(out, j)), dquat_mul(dq(pm_pose_rotation(target, j)), n)) < 2e-6);
        }
    }
    printf("additive power with masks: worst %.3g rad\n", worst);
    if (!(worst <= 1e-5)) fail_msg("quaternion power error %g rad with per-joint weights", worst);
    pm_pose_free(target, NULL);
    pm_pose_free(delta, NULL);
    pm_pose_free(out, NULL);
}

/* ---- local to model ---- */

typedef enum shape { SHAPE_RANDOM, SHAPE_CHAIN, SHAPE_FAN, SHAPE_FOREST, SHAPE_CHAINS, SHAPE_COUNT } shape;
static const char *const shape_names[SHAPE_COUNT] = {"random", "chain", "fan", "forest", "chains"};

/* Parents in an order valid for the job (parents[j] < j) but otherwise arbitrary: random trees,
 * one deep chain, one wide fan, several roots, and bundles of chains branching off a few joints
 * (skeleton-like, with parents far from their children). */
static void make_parents(int32_t *parents, int n, shape s, pm_test_rng *rng) {
    for (int j = 0; j < n; j++) {
        switch (s) {
        case SHAPE_RANDOM: parents[j] = j == 0 ? -1 : (int32_t)(pm_test_rng_u32(rng) % (uint32_t)j); break;
        case SHAPE_CHAIN: parents[j] = j - 1; break;
        case SHAPE_FAN: parents[j] = j == 0 ? -1 : 0; break;
        case SHAPE_FOREST:
            parents[j] = (j == 0 || pm_test_rng_u32(rng) % 7 == 0) ? -1 : (int32_t)(pm_test_rng_u32(rng) % (uint32_t)j);
            break;
        case SHAPE_CHAINS:
            /* a new chain every few joints, hanging from any earlier joint */
            parents[j] = j == 0 ? -1 : (pm_test_rng_u32(rng) % 4 ? j - 1 : (int32_t)(pm_test_rng_u32(rng) % (uint32_t)j));
            break;
        default: parents[j] = -1;
        }
    }
}

/* The hierarchy sizes the jobs are checked on: around every SIMD width and block boundary, up to
 * MAX_HIERARCHY joints. */
static const int hierarchy_sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 64, 65, 100, 127, 128, 129, 257, 300};
#define HIERARCHY_SIZES (int)(sizeof hierarchy_sizes / sizeof hierarchy_sizes[0])
#define MAX_HIERARCHY 300

/* A hierarchy's parents and local transforms, both as arrays (for pm_local_to_model, the
 * reference) and as a pose (for the job). */
typedef struct hierarchy {
    int32_t *parents;
    pm_quat *lr;
    pm_vec3 *lt;
    pm_soa_transform *pose;
} hierarchy;

static void hierarchy_alloc(hierarchy *h) {
    h->parents = (int32_t *)malloc(sizeof(int32_t) * MAX_HIERARCHY);
    h->lr = (pm_quat *)malloc(sizeof(pm_quat) * MAX_HIERARCHY);
    h->lt = (pm_vec3 *)malloc(sizeof(pm_vec3) * MAX_HIERARCHY);
    h->pose = pm_pose_alloc(MAX_HIERARCHY, NULL);
}

static void hierarchy_free(hierarchy *h) {
    free(h->parents);
    free(h->lr);
    free(h->lt);
    pm_pose_free(h->pose, NULL);
}

/* `n` joints of shape `s`, each turned up to 3 rad about a random axis and offset by about 0.1. */
static void hierarchy_randomize(hierarchy *h, int n, shape s, pm_test_rng *rng) {
    make_parents(h->parents, n, s, rng);
    for (int j = 0; j < n; j++) {
        pm_vec3 axis = pm_vec3_make(pm_test_rng_normal(rng), pm_test_rng_normal(rng), pm_test_rng_normal(rng));
        h->lr[j] = pm_quat_from_axis_angle(axis, 3.0f * pm_test_rng_float(rng));
        h->lt[j] = pm_vec3_make(0.1f * pm_test_rng_normal(rng), 0.1f * pm_test_rng_normal(rng),
                                0.1f * pm_test_rng_normal(rng));
    }
    PM_ASSERT_OK(pm_pose_from_aos(h->pose, n, h->lr, h->lt, NULL));
}

/* The hierarchies both local-to-model tests run: every size, every shape, three trials of each
 * (step counts them; n, shape and trial say which was drawn last). */
typedef struct sweep {
    int step, n, shape, trial;
} sweep;

/* Draws the sweep's next hierarchy into h; 0 once all have been drawn. */
static int sweep_next(sweep *sw, hierarchy *h, pm_test_rng *rng) {
    if (sw->step == HIERARCHY_SIZES * SHAPE_COUNT * 3) return 0;
    sw->n = hierarchy_sizes[sw->step / (SHAPE_COUNT * 3)];
    sw->shape = sw->step / 3 % SHAPE_COUNT;
    sw->trial = sw->step % 3;
    sw->step++;
    hierarchy_randomize(h, sw->n, (shape)sw->shape, rng);
    return 1;
}

/* Parent 40 of 65 made itself, a later joint and below -1 in turn: validate and run
 * refuse each, naming the joint. */
static void expect_bad_parent_refused(pm_local_to_model_job *job, int32_t *parents) {
    pm_error e;
    for (int bad = 0; bad < 3; bad++) {
        int32_t saved = parents[40];
        parents[40] = bad == 0 ? 40 : (bad == 1 ? 64 : -2);
        assert_int_equal(pm_local_to_model_job_validate(job, &e), PM_ERR_INVALID_ARGUMENT);
        assert_int_equal(pm_local_to_model_job_run(job, &e), PM_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(e.message, "joint 40"));
        parents[40] = saved;
    }
}

static void test_local_to_model_shapes(void **state) {
    (void)state;
    hierarchy h;
    hierarchy_alloc(&h);
    int32_t *parents = h.parents;
    pm_transform *out = (pm_transform *)malloc(sizeof(pm_transform) * MAX_HIERARCHY);
    pm_transform *ref = (pm_transform *)malloc(sizeof(pm_transform) * MAX_HIERARCHY);
    pm_test_rng rng = {211};
    double worst_a = 0.0, worst_t = 0.0;
    for (sweep sw = {0}; sweep_next(&sw, &h, &rng);) {
        const int n = sw.n, sh = sw.shape, trial = sw.trial;
        pm_transform root = pm_transform_identity();
        root.rotation = pm_quat_normalize(pm_quat_make(0.1f, -0.7f, 0.2f, 0.6f));
        root.translation = pm_vec3_make(3.0f, -1.0f, 0.5f);
        pm_local_to_model_job job = pm_default_local_to_model_job();
        job.parents = parents;
        job.joint_count = n;
        job.input = h.pose;
        job.output = out;
        job.root = trial == 1 ? &root : NULL;
        PM_ASSERT_OK(pm_local_to_model_job_validate(&job, NULL));
        memset(out, 0xff, sizeof(pm_transform) * (size_t)n); /* NaN: every joint must be written */
        PM_ASSERT_OK(pm_local_to_model_job_run(&job, NULL));
        PM_ASSERT_OK(pm_local_to_model(ref, parents, n, h.lr, h.lt, NULL));
        /* Rounding grows with depth: the bounds are ~10x the worst error seen (chains of 300). */
        for (int j = 0; j < n; j++) {
            pm_transform r = job.root ? pm_transform_mul(root, ref[j]) : ref[j];
            double ea = dquat_angle(dq(out[j].rotation), dq(r.rotation));
            double et = pm_vec3_length(pm_vec3_sub(out[j].translation, r.translation));
            if (ea > worst_a) worst_a = ea;
            if (et > worst_t) worst_t = et;
            if (!(ea <= 1e-4 && et <= 1e-4))
                fail_msg("%s hierarchy, %d joints: joint %d (parent %d) off by %g rad, %g", shape_names[sh], n, j,
                         (int)parents[j], ea, et);
            if (!(fabs(pm_quat_dot(out[j].rotation, out[j].rotation) - 1.0f) < 1e-3f))
                fail_msg("%s hierarchy: joint %d is not a unit rotation", shape_names[sh], j);
        }
    }
    printf("local-to-model: worst %.3g rad, %.3g in translation\n", worst_a, worst_t);
    /* Parents must come before their children, and -1 is the only negative value. */
    make_parents(parents, 65, SHAPE_RANDOM, &rng);
    pm_local_to_model_job job = pm_default_local_to_model_job();
    job.parents = parents;
    job.joint_count = 65;
    job.input = h.pose;
    job.output = out;
    expect_bad_parent_refused(&job, parents);
    pm_error e;
    job.joint_count = 0;
    assert_int_equal(pm_local_to_model_job_run(&job, &e), PM_ERR_LIMIT);
    free(out);
    free(ref);
    hierarchy_free(&h);
}

/* ---- local to model: matrices ---- */

/* Column-major 4x4 of a transform, in double precision from its float components. */
static void dmatrix_of(double *m, pm_transform t) {
    double x = t.rotation.x, y = t.rotation.y, z = t.rotation.z, w = t.rotation.w;
    m[0] = 1.0 - 2.0 * (y * y + z * z), m[1] = 2.0 * (x * y + w * z), m[2] = 2.0 * (x * z - w * y), m[3] = 0.0;
    m[4] = 2.0 * (x * y - w * z), m[5] = 1.0 - 2.0 * (x * x + z * z), m[6] = 2.0 * (y * z + w * x), m[7] = 0.0;
    m[8] = 2.0 * (x * z + w * y), m[9] = 2.0 * (y * z - w * x), m[10] = 1.0 - 2.0 * (x * x + y * y), m[11] = 0.0;
    m[12] = t.translation.x, m[13] = t.translation.y, m[14] = t.translation.z, m[15] = 1.0;
}

/* Largest difference between a job's matrix and a double matrix; the bottom row must be exact. */
static double matrix_error(const float *got, const double *want, int joint, const char *what) {
    if (got[3] != 0.0f || got[7] != 0.0f || got[11] != 0.0f || got[15] != 1.0f)
        fail_msg("%s: joint %d has bottom row (%g %g %g %g), not (0 0 0 1)", what, joint, (double)got[3],
                 (double)got[7], (double)got[11], (double)got[15]);
    double worst = 0.0;
    for (int k = 0; k < 16; k++) {
        double d = fabs((double)got[k] - want[k]);
        if (!(d <= worst)) worst = d; /* NaN (an unwritten element) propagates */
    }
    return worst;
}

/* Matrix output against the matrices of pm_local_to_model's transforms (the root applied on top),
 * with and without a root transform, on the same hierarchies as the transform output; then both
 * outputs at once. Bound: 1e-5 absolute per element, rotation and translation alike. */
static void test_local_to_model_matrices(void **state) {
    (void)state;
    hierarchy h;
    hierarchy_alloc(&h);
    int32_t *parents = h.parents;
    pm_transform *ref = (pm_transform *)malloc(sizeof(pm_transform) * MAX_HIERARCHY);
    pm_transform *out = (pm_transform *)malloc(sizeof(pm_transform) * MAX_HIERARCHY);
    pm_transform *out_alone = (pm_transform *)malloc(sizeof(pm_transform) * MAX_HIERARCHY);
    /* 16-byte aligned: pm_soa_transform's alignment, 16 floats per matrix */
    pm_soa_transform *mat_store = pm_pose_alloc(MAX_HIERARCHY * 16 * 4 / 28 + 4, NULL);
    pm_soa_transform *both_store = pm_pose_alloc(MAX_HIERARCHY * 16 * 4 / 28 + 4, NULL);
    float *mats = (float *)mat_store, *mats_both = (float *)both_store;
    pm_test_rng rng = {307};
    double worst = 0.0, worst_both = 0.0;
    for (sweep sw = {0}; sweep_next(&sw, &h, &rng);) {
        const int n = sw.n, sh = sw.shape, trial = sw.trial;
        pm_transform root = pm_transform_identity();
        root.rotation = pm_quat_normalize(pm_quat_make(-0.3f, 0.5f, 0.1f, 0.8f));
        root.translation = pm_vec3_make(-2.0f, 0.5f, 1.5f);
        PM_ASSERT_OK(pm_local_to_model(ref, parents, n, h.lr, h.lt, NULL));

        pm_local_to_model_job job = pm_default_local_to_model_job();
        assert_null(job.output_matrices);
        job.parents = parents;
        job.joint_count = n;
        job.input = h.pose;
        job.root = trial == 1 ? &root : NULL;
        job.output_matrices = mats;
        PM_ASSERT_OK(pm_local_to_model_job_validate(&job, NULL));
        memset(mats, 0xff, sizeof(float) * 16 * (size_t)n); /* NaN: every element must be written */
        PM_ASSERT_OK(pm_local_to_model_job_run(&job, NULL));

        /* Both outputs: the transforms are those of the transform-only job, bit for bit, and
         * the matrices are theirs. */
        job.output = out_alone;
        job.output_matrices = NULL;
        PM_ASSERT_OK(pm_local_to_model_job_run(&job, NULL));
        job.output = out;
        job.output_matrices = mats_both;
        memset(mats_both, 0xff, sizeof(float) * 16 * (size_t)n);
        PM_ASSERT_OK(pm_local_to_model_job_run(&job, NULL));
        if (memcmp(out, out_alone, sizeof(pm_transform) * (size_t)n) != 0)
            fail_msg("%s hierarchy, %d joints: transforms differ when matrices are also requested",
                     shape_names[sh], n);

        for (int j = 0; j < n; j++) {
            double want[16];
            dmatrix_of(want, job.root ? pm_transform_mul(root, ref[j]) : ref[j]);
            double e = matrix_error(mats + 16 * j, want, j, "matrices");
            if (e > worst) worst = e;
            if (!(e <= 1e-5))
                fail_msg("%s hierarchy, %d joints, root %s: matrix of joint %d (parent %d) off by %g",
                         shape_names[sh], n, job.root ? "set" : "none", j, (int)parents[j], e);
            dmatrix_of(want, out[j]);
            e = matrix_error(mats_both + 16 * j, want, j, "both outputs");
            if (e > worst_both) worst_both = e;
            if (!(e <= 1e-6))
                fail_msg("%s hierarchy, %d joints: with both outputs, matrix %d is not its transform's (%g)",
                         shape_names[sh], n, j, e);
        }
    }
    printf("local-to-model matrices: worst %.3g against the reference transforms, %.3g with both outputs\n", worst,
           worst_both);
    pm_pose_free(mat_store, NULL);
    pm_pose_free(both_store, NULL);
    hierarchy_free(&h);
    free(ref);
    free(out);
    free(out_alone);
}

static void test_local_to_model_matrix_errors(void **state) {
    (void)state;
    enum { N = 65 };
    int32_t parents[N];
    pm_test_rng rng = {331};
    make_parents(parents, N, SHAPE_CHAINS, &rng);
    pm_soa_transform *pose = pm_pose_alloc(N, NULL);
    pm_soa_transform *store = pm_pose_alloc(N * 16 * 4 / 28 + 4, NULL);
    float *mats = (float *)store;
    pm_transform out[N];
    pm_error e;

    /* Written before output_matrices existed: still compiles (without warnings) and means the same. */
    pm_local_to_model_job legacy = {.parents = parents, .joint_count = N, .input = pose, .output = out};
    PM_ASSERT_OK(pm_local_to_model_job_run(&legacy, NULL));

    pm_local_to_model_job job = pm_default_local_to_model_job();
    job.parents = parents;
    job.joint_count = N;
    job.input = pose;
    assert_int_equal(pm_local_to_model_job_validate(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "no output"));
    assert_int_equal(pm_local_to_model_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "output_matrices"));

    job.output_matrices = mats + 1; /* 4 bytes off */
    assert_int_equal(pm_local_to_model_job_validate(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "16-byte aligned"));
    job.output = out; /* still rejected with both outputs */
    assert_int_equal(pm_local_to_model_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "output_matrices"));

    /* The hierarchy is checked on the matrix path too, by validate and by run. */
    job.output = NULL;
    job.output_matrices = mats;
    expect_bad_parent_refused(&job, parents);
    pm_transform bad_root = pm_transform_identity();
    bad_root.translation.y = NAN;
    job.root = &bad_root;
    assert_int_equal(pm_local_to_model_job_validate(&job, &e), PM_ERR_NUMERIC);
    job.root = NULL;
    job.joint_count = 0;
    assert_int_equal(pm_local_to_model_job_run(&job, &e), PM_ERR_LIMIT);
    assert_int_equal(pm_local_to_model_job_run(NULL, &e), PM_ERR_INVALID_ARGUMENT);
    pm_pose_free(pose, NULL);
    pm_pose_free(store, NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_against_double),
        cmocka_unit_test(test_power_with_masks),
        cmocka_unit_test(test_local_to_model_shapes),
        cmocka_unit_test(test_local_to_model_matrices),
        cmocka_unit_test(test_local_to_model_matrix_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
