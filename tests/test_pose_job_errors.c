/* The pose jobs' argument checks, one message per problem: missing and misaligned poses, joint
 * counts, layer counts and weights, branch filters, the additive jobs, pose conversions and the
 * rest pose (what the jobs compute: test_blend_jobs.c and test_additive.c). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pose_support.h"

#define ALIGN_HINT " is not 16-byte aligned (allocate poses with pm_pose_alloc or as pm_soa_transform arrays)"

/* A pose pointer off the 16-byte alignment the SIMD kernels need. */
static pm_soa_transform *misaligned(pm_soa_transform *pose) { return (pm_soa_transform *)((char *)pose + 4); }

static void expect(pm_result got, pm_result code, const pm_error *e, const char *words) {
    if (got != code)
        fail_msg("expected %s for '%s', got %s (%s)", pm_result_string(code), words, pm_result_string(got), e->message);
    if (!strstr(e->message, words)) fail_msg("'%s' does not say '%s'", e->message, words);
}

/* pm_blend_job_validate checks what pm_blend_job_run checks, without blending. */
static void test_blend_job_validate(void **state) {
    (void)state;
    pm_soa_transform *a = new_pose(), *out = new_pose();
    pm_blend_input in[2] = {{a, 0.25f}, {a, 0.75f}};
    pm_blend_job job = blend_job(in, 2, out);
    const size_t bytes = sizeof(pm_soa_transform) * (size_t)pm_soa_count(J_COUNT);
    memset(out, 0x5A, bytes);
    PM_ASSERT_OK(pm_blend_job_validate(&job, NULL));
    for (size_t b = 0; b < bytes; b++) assert_int_equal(((const unsigned char *)out)[b], 0x5A); /* nothing written */
    pm_error e;
    expect(pm_blend_job_validate(NULL, &e), PM_ERR_INVALID_ARGUMENT, &e, "blend job: NULL job");
    job.output = NULL;
    expect(pm_blend_job_validate(&job, &e), PM_ERR_INVALID_ARGUMENT, &e, "blend job: output is NULL");
    job.output = out;
    in[1].pose = misaligned(a);
    expect(pm_blend_job_validate(&job, &e), PM_ERR_INVALID_ARGUMENT, &e, "blend job: input 1" ALIGN_HINT);
    in[1].pose = a;
    in[0].weight = -0.5f;
    expect(pm_blend_job_validate(&job, &e), PM_ERR_INVALID_ARGUMENT, &e, "blend job: input 0 has a negative weight (-0.5)");
    in[0].weight = 0.25f;
    job.joint_count = PM_MAX_JOINTS + 1;
    expect(pm_blend_job_validate(&job, &e), PM_ERR_LIMIT, &e, "blend job: joint_count 4097 is outside 1..4096");
    FREE_POSES(a, out);
}

static void test_layered_job_arguments(void **state) {
    (void)state;
    pm_soa_transform *base = new_pose(), *layer = new_pose(), *out = new_pose();
    pm_pose_set_identity(base, J_COUNT, NULL);
    pm_pose_set_identity(layer, J_COUNT, NULL);
    pm_blend_layer l = {layer, 0.5f, NULL};
    pm_layered_blend_job job = layered_job(base, &l, 1, out);
    PM_ASSERT_OK(pm_layered_blend_job_validate(&job, NULL));
    pm_error e;
    job.joint_count = 0;
    expect(pm_layered_blend_job_run(&job, &e), PM_ERR_LIMIT, &e, "layered blend job: joint_count 0 is outside 1..4096");
    job.joint_count = J_COUNT;
    job.base = NULL;
    expect(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT, &e, "layered blend job: base and output must be set");
    job.base = base;
    job.output = NULL;
    expect(pm_layered_blend_job_validate(&job, &e), PM_ERR_INVALID_ARGUMENT, &e, "base and output must be set");
    job.output = misaligned(out);
    expect(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT, &e, "layered blend job: base or output" ALIGN_HINT);
    job.output = out;
    job.layer_count = -1;
    expect(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT, &e, "layered blend job: -1 layers is outside 0..64");
    job.layer_count = PM_BLEND_MAX_INPUTS + 1;
    expect(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT, &e, "65 layers is outside 0..64");
    job.layer_count = 1;
    l.weight = 1.5f;
    expect(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "layered blend job: layer 0 weight 1.5 is outside [0, 1]");
    l.weight = -0.25f;
    expect(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT, &e, "layer 0 weight -0.25 is outside [0, 1]");
    l.weight = 0.5f;
    l.pose = NULL;
    expect(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "layered blend job: layer 0 has weight 0.5 but no pose");
    l.pose = misaligned(layer);
    expect(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT, &e, "layered blend job: layer 0" ALIGN_HINT);
    /* A layer of weight 0 is never read: no pose, or a misaligned one, is fine. */
    l.weight = 0.0f;
    PM_ASSERT_OK(pm_layered_blend_job_run(&job, &e));
    l.pose = NULL;
    PM_ASSERT_OK(pm_layered_blend_job_run(&job, &e));
    job.layer_count = 0; /* no layer at all: the base */
    memset(out, 0x5A, sizeof(pm_soa_transform) * (size_t)pm_soa_count(J_COUNT));
    PM_ASSERT_OK(pm_layered_blend_job_run(&job, &e));
    assert_true(poses_bitwise_equal(out, base, J_COUNT));
    FREE_POSES(base, layer, out);
}

static void test_branch_filter_arguments(void **state) {
    (void)state;
    pm_skeleton sk;
    make_skeleton(&sk);
    float w[J_COUNT];
    pm_branch_filter f = spine_filter();
    pm_error e;
    expect(pm_branch_filters_expand(NULL, &sk, &f, 1, &e), PM_ERR_INVALID_ARGUMENT, &e, "branch filters: NULL argument");
    expect(pm_branch_filters_expand(w, NULL, &f, 1, &e), PM_ERR_INVALID_ARGUMENT, &e, "branch filters: NULL argument");
    expect(pm_branch_filters_expand(w, &sk, NULL, 1, &e), PM_ERR_INVALID_ARGUMENT, &e, "branch filters: NULL argument");
    PM_ASSERT_OK(pm_branch_filters_expand(w, &sk, NULL, 0, &e)); /* no filter: every weight 0 */
    expect(pm_branch_filters_expand(w, &sk, &f, INT_MIN, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "branch filters: filter_count -2147483648 is negative");
    for (int j = 0; j < J_COUNT; j++) assert_true(w[j] == 0.0f);
    pm_branch_filter two[2] = {f, pm_default_branch_filter()};
    expect(pm_branch_filters_expand(w, &sk, two, 2, &e), PM_ERR_INVALID_ARGUMENT, &e, "branch filter 1: no bone name");
    two[1].bone = "";
    expect(pm_branch_filters_expand(w, &sk, two, 2, &e), PM_ERR_INVALID_ARGUMENT, &e, "branch filter 1: no bone name");
    f.max_depth = -2;
    expect(pm_branch_filters_expand(w, &sk, &f, 1, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "branch filter 0 ('Spine'): max_depth -2 (use -1 for the whole branch)");
    f.max_depth = -1;
    f.weight = 1.5f;
    expect(pm_branch_filters_expand(w, &sk, &f, 1, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "branch filter 0 ('Spine'): weight 1.5 is outside [0, 1]");
    f.weight = -0.25f;
    expect(pm_branch_filters_expand(w, &sk, &f, 1, &e), PM_ERR_INVALID_ARGUMENT, &e, "weight -0.25 is outside [0, 1]");
    f.weight = NAN;
    expect(pm_branch_filters_expand(w, &sk, &f, 1, &e), PM_ERR_INVALID_ARGUMENT, &e, "weight nan is outside [0, 1]");
    f.weight = 1.0f;
    f.max_depth = 0; /* the bone alone */
    PM_ASSERT_OK(pm_branch_filters_expand(w, &sk, &f, 1, &e));
    for (int j = 0; j < J_COUNT; j++) assert_true(w[j] == (j == J_SPINE ? 1.0f : 0.0f));
    pm_skeleton_destroy(&sk);
}

static void test_additive_job_arguments(void **state) {
    (void)state;
    pm_soa_transform *a = new_pose(), *b = new_pose(), *out = new_pose();
    pm_pose_set_identity(a, J_COUNT, NULL);
    pm_pose_set_identity(b, J_COUNT, NULL);
    pm_error e;
    pm_additive_extract_job x = extract_job(a, b, out);
    PM_ASSERT_OK(pm_additive_extract_job_validate(&x, NULL));
    x.base = NULL;
    expect(pm_additive_extract_job_run(&x, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "additive extract job: source, base and output must be set");
    x.base = b;
    x.output = NULL;
    expect(pm_additive_extract_job_validate(&x, &e), PM_ERR_INVALID_ARGUMENT, &e, "source, base and output must be set");
    x.output = out;
    x.source = misaligned(a);
    expect(pm_additive_extract_job_run(&x, &e), PM_ERR_INVALID_ARGUMENT, &e, "additive extract job: a pose" ALIGN_HINT);
    x.source = a;
    x.joint_count = -3;
    expect(pm_additive_extract_job_run(&x, &e), PM_ERR_LIMIT, &e, "additive extract job: joint_count -3 is outside 1..4096");

    pm_additive_apply_job y = apply_job(a, b, out);
    y.weight = 1.0f;
    PM_ASSERT_OK(pm_additive_apply_job_validate(&y, NULL));
    y.target = NULL;
    expect(pm_additive_apply_job_run(&y, &e), PM_ERR_INVALID_ARGUMENT, &e, "additive apply job: target and output must be set");
    y.target = a;
    y.output = NULL;
    expect(pm_additive_apply_job_validate(&y, &e), PM_ERR_INVALID_ARGUMENT, &e, "target and output must be set");
    y.output = out;
    y.delta = misaligned(b);
    expect(pm_additive_apply_job_run(&y, &e), PM_ERR_INVALID_ARGUMENT, &e, "additive apply job: a pose" ALIGN_HINT);
    /* A zero-weight job never reads the delta. */
    y.weight = 0.0f;
    PM_ASSERT_OK(pm_additive_apply_job_run(&y, &e));
    assert_true(poses_bitwise_equal(out, a, J_COUNT));
    y.weight = 1.0f;
    y.delta = b;
    y.output = misaligned(out);
    expect(pm_additive_apply_job_run(&y, &e), PM_ERR_INVALID_ARGUMENT, &e, "a pose" ALIGN_HINT);
    y.output = out;
    y.joint_count = PM_MAX_JOINTS + 1;
    expect(pm_additive_apply_job_run(&y, &e), PM_ERR_LIMIT, &e, "additive apply job: joint_count 4097 is outside 1..4096");
    FREE_POSES(a, b, out);
}

/* A weight a rounding step past its bound (a mask or fade computed in floats)
 * is printed with the digits that tell it from the bound: "is 1 (must be in [0, 1])" named no
 * problem. */
static void test_weights_past_a_bound(void **state) {
    (void)state;
    pm_soa_transform *a = new_pose(), *b = new_pose(), *out = new_pose();
    pm_pose_set_identity(a, J_COUNT, NULL);
    pm_pose_set_identity(b, J_COUNT, NULL);
    const float over = nextafterf(1.0f, 2.0f);
    float mask[J_COUNT];
    for (int j = 0; j < J_COUNT; j++) mask[j] = 1.0f;
    mask[3] = over;
    pm_error e;
    pm_blend_layer l = {b, 1.0f, mask};
    pm_layered_blend_job job = layered_job(a, &l, 1, out);
    expect(pm_layered_blend_job_validate(&job, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "layered blend job: layer 0's weight for joint 3 is 1.0000001 (must be in [0, 1])");
    expect(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT, &e, "joint 3 is 1.0000001 (must be in [0, 1])");
    mask[3] = 1.0f;
    l.weight = over;
    expect(pm_layered_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "layered blend job: layer 0 weight 1.0000001 is outside [0, 1]");
    pm_additive_apply_job y = apply_job(a, b, out);
    y.weight = nextafterf(PM_ADDITIVE_MAX_WEIGHT, INFINITY);
    expect(pm_additive_apply_job_run(&y, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "additive apply job: weight 64.00001 is outside [-64, 64]");
    y.weight = 1.0f;
    mask[3] = over;
    y.joint_weights = mask;
    expect(pm_additive_apply_job_run(&y, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "additive apply job: the weight of joint 3 is 1.0000001 (must be in [0, 1])");
    /* Plain values keep their short form. */
    mask[3] = 1.5f;
    expect(pm_additive_apply_job_run(&y, &e), PM_ERR_INVALID_ARGUMENT, &e, "joint 3 is 1.5 (must be in [0, 1])");
    FREE_POSES(a, b, out);
}

/* Conversions name their problem; the rest pose is the skeleton's rest rotations and offsets. */
static void test_pose_conversions_and_rest(void **state) {
    (void)state;
    pm_skeleton sk;
    make_skeleton(&sk);
    pm_test_rng rng = {17};
    for (int j = 0; j < J_COUNT; j++) sk.rest_rotations[j] = random_quat(&rng, 1.0f);
    pm_soa_transform *pose = new_pose();
    PM_ASSERT_OK(pm_pose_from_rest(pose, &sk, NULL));
    for (int j = 0; j < J_COUNT; j++) {
        pm_quat q = pm_pose_rotation(pose, j);
        pm_vec3 t = pm_pose_translation(pose, j);
        assert_memory_equal(&q, &sk.rest_rotations[j], sizeof q);
        assert_memory_equal(&t, &sk.rest_translations[j], sizeof t);
    }
    pm_error e;
    expect(pm_pose_from_rest(NULL, &sk, &e), PM_ERR_INVALID_ARGUMENT, &e, "pm_pose_from_rest: NULL argument");
    expect(pm_pose_from_rest(pose, NULL, &e), PM_ERR_INVALID_ARGUMENT, &e, "pm_pose_from_rest: NULL argument");
    sk.parents[3] = 5;
    expect(pm_pose_from_rest(pose, &sk, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "skeleton: joint 3 has parent 5 (parents must come first)");
    sk.parents[3] = 2;

    pm_quat rot[J_COUNT];
    pm_vec3 tr[J_COUNT];
    expect(pm_pose_to_aos(rot, tr, J_COUNT, NULL, &e), PM_ERR_INVALID_ARGUMENT, &e, "pm_pose_to_aos: NULL argument");
    expect(pm_pose_to_aos(NULL, NULL, J_COUNT, pose, &e), PM_ERR_INVALID_ARGUMENT, &e, "pm_pose_to_aos: NULL argument");
    expect(pm_pose_to_aos(rot, tr, 0, pose, &e), PM_ERR_LIMIT, &e, "pm_pose_to_aos: 0 joints is outside 1..4096");
    expect(pm_pose_to_aos(rot, tr, PM_MAX_JOINTS + 1, pose, &e), PM_ERR_LIMIT, &e, "4097 joints is outside 1..4096");
    /* Either output alone is fine. */
    PM_ASSERT_OK(pm_pose_to_aos(NULL, tr, J_COUNT, pose, &e));
    PM_ASSERT_OK(pm_pose_to_aos(rot, NULL, J_COUNT, pose, &e));
    assert_memory_equal(tr, sk.rest_translations, sizeof tr);
    assert_memory_equal(rot, sk.rest_rotations, sizeof rot);

    /* The sampling job's rotation blend and the local-to-model job's input alignment. */
    pm_clip clip;
    make_clip(&clip, &sk, 10, 30.0f, 0, 3);
    pm_animation anim;
    PM_ASSERT_OK(pm_animation_build(&anim, &clip, NULL, NULL));
    pm_sampling_job sj = pm_default_sampling_job();
    sj.animation = &anim;
    sj.output = pose;
    sj.output_count = pm_soa_count(J_COUNT);
    sj.rotation = (pm_rotation_blend)2;
    expect(pm_sampling_job_run(&sj, &e), PM_ERR_INVALID_ARGUMENT, &e, "sampling job: unknown rotation blend 2");
    sj.rotation = PM_ROTATION_SLERP;
    PM_ASSERT_OK(pm_sampling_job_run(&sj, &e));
    /* Output inside the keys (the first, a later one, or straddling two) would overwrite the
     * animation; the keys are left as they were. */
    const size_t key_bytes = (size_t)anim.key_count * (size_t)anim.soa_count * sizeof(pm_soa_transform);
    void *keys_before = malloc(key_bytes);
    assert_non_null(keys_before);
    memcpy(keys_before, anim.keys, key_bytes);
    pm_soa_transform *inside[3] = {anim.keys, anim.keys + 3 * anim.soa_count, anim.keys + anim.soa_count + 1};
    for (int k = 0; k < 3; k++) {
        sj.output = inside[k];
        expect(pm_sampling_job_run(&sj, &e), PM_ERR_INVALID_ARGUMENT, &e,
               "sampling job: output overlaps the animation's keys");
    }
    assert_memory_equal(anim.keys, keys_before, key_bytes);
    free(keys_before);
    sj.output = pose;
    pm_transform model[J_COUNT];
    pm_local_to_model_job lj = pm_default_local_to_model_job();
    lj.parents = sk.parents;
    lj.joint_count = J_COUNT;
    lj.input = misaligned(pose);
    lj.output = model;
    expect(pm_local_to_model_job_run(&lj, &e), PM_ERR_INVALID_ARGUMENT, &e, "local-to-model job: input" ALIGN_HINT);
    lj.input = pose;
    PM_ASSERT_OK(pm_local_to_model_job_run(&lj, &e));
    pm_animation_destroy(&anim);
    pm_clip_destroy(&clip);
    pm_pose_free(pose, NULL);
    pm_skeleton_destroy(&sk);
}

/* An output may be the very pose of an input, not part of one: a group off, the job read groups
 * it had already overwritten and validate said nothing (the blend came out wrong, silently). The
 * same goes for the local-to-model outputs over the input. */
static void test_outputs_overlapping_inputs(void **state) {
    (void)state;
    const int groups = pm_soa_count(J_COUNT);
    pm_soa_transform *arena = pm_pose_alloc(4 * groups * 4, NULL), *b = new_pose(), *ref = new_pose();
    assert_non_null(arena);
    pm_test_rng rng = {77};
    random_pose(arena, J_COUNT, &rng, 3.0f);
    random_pose(b, J_COUNT, &rng, 3.0f);
    pm_soa_transform *a = arena, *shifted = arena + 1;
    pm_error e;

    pm_blend_input in[2] = {{a, 0.25f}, {b, 0.75f}};
    pm_blend_job bj = blend_job(in, 2, shifted);
    expect(pm_blend_job_validate(&bj, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "blend job: output overlaps input 0 without being it");
    expect(pm_blend_job_run(&bj, &e), PM_ERR_INVALID_ARGUMENT, &e, "output overlaps input 0");
    in[0].weight = 0.0f; /* never read, so no overlap with it */
    PM_ASSERT_OK(pm_blend_job_validate(&bj, &e));
    in[0].weight = 0.25f;
    bj.output = ref;
    PM_ASSERT_OK(pm_blend_job_run(&bj, &e));
    bj.output = a; /* in place: allowed, and the same blend */
    PM_ASSERT_OK(pm_blend_job_run(&bj, &e));
    assert_true(poses_bitwise_equal(a, ref, J_COUNT));

    random_pose(arena + groups, J_COUNT, &rng, 3.0f);
    pm_soa_transform *base = arena + groups;
    pm_blend_layer l = {b, 0.5f, NULL};
    pm_layered_blend_job lj = layered_job(base, &l, 1, base - 1);
    expect(pm_layered_blend_job_validate(&lj, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "layered blend job: output overlaps the base without being it");
    l.pose = base + 1;
    lj.output = base;
    expect(pm_layered_blend_job_run(&lj, &e), PM_ERR_INVALID_ARGUMENT, &e, "output overlaps layer 0's pose");
    l.pose = b;
    PM_ASSERT_OK(pm_layered_blend_job_run(&lj, &e));
    /* A mask inside the output: read a chunk at a time while the output is written. */
    l.joint_weights = (const float *)(const void *)(base + groups - 1);
    expect(pm_layered_blend_job_validate(&lj, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "layered blend job: output overlaps layer 0's joint weights");
    l.weight = 0.0f; /* a layer that is not read */
    PM_ASSERT_OK(pm_layered_blend_job_validate(&lj, &e));
    l.weight = 0.5f;
    l.joint_weights = NULL;

    pm_additive_extract_job x = extract_job(a, b, shifted);
    expect(pm_additive_extract_job_validate(&x, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "additive extract job: output overlaps the source without being it");
    x.output = b;
    PM_ASSERT_OK(pm_additive_extract_job_run(&x, &e));

    pm_additive_apply_job y = apply_job(a, b, shifted);
    y.weight = 0.5f;
    expect(pm_additive_apply_job_run(&y, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "additive apply job: output overlaps the target without being it");
    y.target = ref;
    y.delta = a;
    expect(pm_additive_apply_job_validate(&y, &e), PM_ERR_INVALID_ARGUMENT, &e, "output overlaps the delta");
    y.output = a;
    PM_ASSERT_OK(pm_additive_apply_job_run(&y, &e));
    y.delta = b;
    y.joint_weights = (const float *)(const void *)a;
    expect(pm_additive_apply_job_validate(&y, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "additive apply job: output overlaps the joint weights");
    y.weight = 0.0f; /* the mask is not read */
    PM_ASSERT_OK(pm_additive_apply_job_validate(&y, &e));
    y.joint_weights = NULL;

    int32_t parents[J_COUNT];
    for (int j = 0; j < J_COUNT; j++) parents[j] = pm_test_humanoid_parents[j];
    pm_local_to_model_job m = pm_default_local_to_model_job();
    m.parents = parents;
    m.joint_count = J_COUNT;
    m.input = arena;
    m.output = (pm_transform *)(void *)(arena + 1);
    expect(pm_local_to_model_job_validate(&m, &e), PM_ERR_INVALID_ARGUMENT, &e,
           "local-to-model job: output overlaps the input");
    m.output = NULL;
    m.output_matrices = (float *)(void *)(arena + groups - 1);
    expect(pm_local_to_model_job_run(&m, &e), PM_ERR_INVALID_ARGUMENT, &e, "output_matrices overlaps the input");
    m.output_matrices = (float *)(void *)(arena + groups);
    m.output = (pm_transform *)(void *)(arena + groups + 1);
    expect(pm_local_to_model_job_run(&m, &e), PM_ERR_INVALID_ARGUMENT, &e, "output overlaps output_matrices");
    m.output = (pm_transform *)(void *)(arena + 3 * groups);
    PM_ASSERT_OK(pm_local_to_model_job_run(&m, &e));
    pm_transform *root = m.output + J_COUNT - 1;
    *root = pm_transform_identity();
    m.root = root;
    expect(pm_local_to_model_job_validate(&m, &e), PM_ERR_INVALID_ARGUMENT, &e, "output overlaps the root");
    m.root = NULL;
    FREE_POSES(arena, b, ref);
}

/* Overlaps are found over the whole of each buffer, not its first entry or a quarter of it:
 * output_matrices holds 16 floats a joint, so an input placed 4 floats a joint past its start
 * is still inside it; an output laid over the last parent overlaps the parents. */
static void test_l2m_overlaps_anywhere(void **state) {
    (void)state;
    const int groups = pm_soa_count(J_COUNT);
    const size_t soa = sizeof(pm_soa_transform);
    const int skip = (int)((J_COUNT * 4 * sizeof(float) + soa - 1) / soa); /* groups past 4 floats a joint */
    assert_true((size_t)skip * soa < J_COUNT * 16 * sizeof(float));
    pm_soa_transform *arena = pm_pose_alloc(4 * (skip + groups), NULL);
    assert_non_null(arena);
    pm_test_rng rng = {78};
    random_pose(arena + skip, J_COUNT, &rng, 3.0f);
    int32_t parents[J_COUNT];
    for (int j = 0; j < J_COUNT; j++) parents[j] = pm_test_humanoid_parents[j];
    pm_local_to_model_job m = pm_default_local_to_model_job();
    m.parents = parents;
    m.joint_count = J_COUNT;
    m.input = arena + skip;
    m.output_matrices = (float *)(void *)arena;
    pm_error e;
    expect(pm_local_to_model_job_validate(&m, &e), PM_ERR_INVALID_ARGUMENT, &e, "output_matrices overlaps the input");
    m.output_matrices = NULL;
    m.output = (pm_transform *)(void *)(parents + J_COUNT - 1);
    expect(pm_local_to_model_job_validate(&m, &e), PM_ERR_INVALID_ARGUMENT, &e, "output overlaps parents");
    /* The root's rotation is held to the tolerance of every other rotation: 1e-3 in squared
     * length (anim.h): a looser one lets it scale and shear every joint below it. */
    pm_transform out[J_COUNT], root = pm_transform_identity();
    m.output = out;
    m.root = &root;
    root.rotation = pm_quat_make(0, 0, 0, sqrtf(1.0011f));
    expect(pm_local_to_model_job_validate(&m, &e), PM_ERR_NUMERIC, &e, "the root rotation is not a unit quaternion");
    root.rotation = pm_quat_make(0, 0, 0, sqrtf(1.0009f));
    PM_ASSERT_OK(pm_local_to_model_job_validate(&m, &e));
    pm_pose_free(arena, NULL);
}

/* The group count of any int, near INT_MAX included (where adding 3 first overflowed). */
static void test_soa_count_range(void **state) {
    (void)state;
    assert_int_equal(pm_soa_count(INT_MIN), 0);
    assert_int_equal(pm_soa_count(0), 0);
    assert_int_equal(pm_soa_count(1), 1);
    assert_int_equal(pm_soa_count(4), 1);
    assert_int_equal(pm_soa_count(5), 2);
    assert_int_equal(pm_soa_count(INT_MAX - 3), INT_MAX / 4); /* a multiple of 4 */
    assert_int_equal(pm_soa_count(INT_MAX), INT_MAX / 4 + 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blend_job_validate),
        cmocka_unit_test(test_layered_job_arguments),
        cmocka_unit_test(test_branch_filter_arguments),
        cmocka_unit_test(test_additive_job_arguments),
        cmocka_unit_test(test_weights_past_a_bound),
        cmocka_unit_test(test_pose_conversions_and_rest),
        cmocka_unit_test(test_soa_count_range),
        cmocka_unit_test(test_outputs_overlapping_inputs),
        cmocka_unit_test(test_l2m_overlaps_anywhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
