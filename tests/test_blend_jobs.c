/* Pose jobs: sampling, N-pose blend, local to model (BL3, BL5; layered blends per bone are in
 * test_blend_layered.c, additive layers in test_additive.c). */
#include <math.h>
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pose_support.h"

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
    pm_soa_transform *pose = new_pose();
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
    /* pm_pose_set_identity: every lane to identity, or an error naming the problem with nothing
     * written. */
    PM_ASSERT_OK(pm_pose_set_identity(pose, J_COUNT, &e));
    for (int j = 0; j < J_COUNT; j++) {
        pm_quat q = pm_pose_rotation(pose, j);
        pm_vec3 t = pm_pose_translation(pose, j);
        assert_true(q.x == 0.0f && q.y == 0.0f && q.z == 0.0f && q.w == 1.0f);
        assert_true(t.x == 0.0f && t.y == 0.0f && t.z == 0.0f);
    }
    assert_int_equal(pm_pose_set_identity(NULL, J_COUNT, &e), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.message, "pm_pose_set_identity: pose is NULL");
    PM_ASSERT_OK(pm_pose_from_aos(pose, J_COUNT, rot, tr, NULL));
    assert_int_equal(pm_pose_set_identity(pose, 0, &e), PM_ERR_LIMIT);
    assert_string_equal(e.message, "pm_pose_set_identity: joint_count 0 is outside 1..4096");
    assert_int_equal(pm_pose_set_identity(pose, PM_MAX_JOINTS + 1, &e), PM_ERR_LIMIT);
    assert_non_null(strstr(e.message, "joint_count 4097 is outside 1..4096"));
    assert_int_equal(pm_pose_set_identity(pose, -5, NULL), PM_ERR_LIMIT);
    pm_soa_transform *misaligned = (pm_soa_transform *)(void *)((char *)pose + 4);
    assert_int_equal(pm_pose_set_identity(misaligned, 1, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "pm_pose_set_identity: pose is not 16-byte aligned"));
    PM_ASSERT_OK(pm_pose_to_aos(rot2, tr2, J_COUNT, pose, NULL)); /* untouched by the failures */
    assert_memory_equal(rot, rot2, sizeof rot);
    assert_memory_equal(tr, tr2, sizeof tr);
    pm_pose_free(pose, NULL);
}

/* A looping clip's end key turns the joint that carries the root motion with the loop, and no
 * other: below it, a joint whose position drifts (a capture's noise on every joint's position
 * channels) keeps its first frame's rotation, where turning it would swing a limb round at the
 * wrap; and a root drifting slower than a centimetre a second carries on without turning. */
static void test_loop_end_key_turns_only_the_root_carrier(void **state) {
    (void)state;
    pm_skeleton sk;
    PM_ASSERT_OK(pm_skeleton_create(&sk, 2, NULL, NULL));
    PM_ASSERT_OK(pm_skeleton_set_name(&sk, 0, "Hips", NULL));
    PM_ASSERT_OK(pm_skeleton_set_name(&sk, 1, "Spine", NULL));
    sk.parents[0] = -1, sk.parents[1] = 0;
    sk.rest_translations[1] = pm_vec3_make(0.0f, 0.2f, 0.0f);
    pm_clip clip;
    const int n = 30;
    PM_ASSERT_OK(pm_clip_create(&clip, &sk, n, 1.0f / 30.0f, NULL, NULL));
    clip.looping = 1;
    for (int f = 0; f < n; f++) {
        float u = (float)f / (float)n;
        clip.rotations[(size_t)f * 2] = pm_quat_from_yaw(0.6f * u);        /* turns 0.6 rad a cycle */
        clip.translations[(size_t)f * 2] = pm_vec3_make(0.0f, 1.0f, 1.5f * u);
        clip.rotations[(size_t)f * 2 + 1] = pm_quat_from_yaw(0.3f * sinf(2.0f * PM_PI * u) + 0.2f * u);
        clip.translations[(size_t)f * 2 + 1] = pm_vec3_make(0.05f * u, 0.2f, 0.0f); /* drifts 5 cm */
    }
    pm_animation anim;
    PM_ASSERT_OK(pm_animation_build(&anim, &clip, NULL, NULL));
    const pm_soa_transform *end = anim.keys + (size_t)n * (size_t)anim.soa_count;
    pm_quat hips = pm_pose_rotation(end, 0), spine = pm_pose_rotation(end, 1);
    assert_quat_near(hips, pm_quat_from_yaw(0.6f), 1e-4f);
    assert_quat_near(spine, clip.rotations[1], 1e-6f);
    /* The spine's position still carries on by its drift; the hips' by the cycle's displacement. */
    assert_true(fabsf(pm_pose_translation(end, 1).x - 0.05f) < 1e-3f);
    assert_true(fabsf(pm_pose_translation(end, 0).z - 1.5f) < 1e-3f);
    /* pm_clip_sample heads for the same key across the wrap. */
    pm_quat r[2];
    pm_vec3 t[2];
    PM_ASSERT_OK(pm_clip_sample(r, t, &clip, ((float)n - 0.5f) / 30.0f, NULL));
    assert_quat_near(r[0], pm_quat_from_yaw(0.6f * ((float)n - 0.5f) / (float)n), 1e-3f);
    /* A root drifting slower than a centimetre a second carries on, but does not turn the body. */
    pm_animation slow;
    for (int f = 0; f < n; f++) clip.translations[(size_t)f * 2].z = 0.003f * (float)f / (float)n;
    PM_ASSERT_OK(pm_animation_build(&slow, &clip, NULL, NULL));
    assert_quat_near(pm_pose_rotation(slow.keys + (size_t)n * (size_t)slow.soa_count, 0), clip.rotations[0], 1e-6f);
    assert_true(pm_pose_translation(slow.keys + (size_t)n * (size_t)slow.soa_count, 0).z > 0.0025f);
    pm_animation_destroy(&slow);
    pm_animation_destroy(&anim);
    pm_clip_destroy(&clip);
    pm_skeleton_destroy(&sk);
}

/* A looping animation sampled at exactly its duration (or twice it) reads its end key, whichever
 * way n frame times rounded to a float: it read frame 0 when the duration rounded above n frames
 * (most real clips), so a player taking root motion up to the wrap saw the root jump back. Just
 * below the duration is near the end, just above it near the start; pm_clip_sample agrees. A
 * one-shot's duration is its last key exactly (pm_clip_sample, which builds resample through,
 * keeps its interpolation a hair short of it: databases stay as they were built). */
static void test_sampling_at_the_loop_end(void **state) {
    (void)state;
    const float ft = 1.0f / 30.0f;
    int lengths[2] = {0, 0}; /* a duration rounded above n frames, one below */
    for (int n = 2; n < 400 && (!lengths[0] || !lengths[1]); n++) {
        double period = (double)((float)n * ft) / (double)ft;
        if (period > n && !lengths[0]) lengths[0] = n;
        if (period < n && !lengths[1]) lengths[1] = n;
    }
    assert_true(lengths[0] > 0 && lengths[1] > 0);
    pm_skeleton sk;
    PM_ASSERT_OK(pm_skeleton_create(&sk, 2, NULL, NULL));
    PM_ASSERT_OK(pm_skeleton_set_name(&sk, 0, "Hips", NULL));
    PM_ASSERT_OK(pm_skeleton_set_name(&sk, 1, "Spine", NULL));
    sk.parents[0] = -1, sk.parents[1] = 0;
    for (int k = 0; k < 2; k++) {
        const int n = lengths[k];
        pm_clip clip;
        PM_ASSERT_OK(pm_clip_create(&clip, &sk, n, ft, NULL, NULL));
        clip.looping = 1;
        for (int f = 0; f < n; f++) {
            clip.translations[(size_t)f * 2] = pm_vec3_make(0.0f, 1.0f, 1.5f * (float)f / (float)n); /* 1.5 m a loop */
            clip.rotations[(size_t)f * 2 + 1] = pm_quat_from_yaw(0.3f * sinf(2.0f * PM_PI * (float)f / (float)n));
        }
        pm_animation anim;
        PM_ASSERT_OK(pm_animation_build(&anim, &clip, NULL, NULL));
        const pm_soa_transform *end = anim.keys + (size_t)n * (size_t)anim.soa_count;
        pm_soa_transform out[1];
        pm_sampling_job job = pm_default_sampling_job();
        job.animation = &anim;
        job.output = out;
        job.output_count = 1;
        const float at_end[2] = {anim.duration, 2.0f * anim.duration};
        for (int i = 0; i < 2; i++) {
            job.time = at_end[i];
            PM_ASSERT_OK(pm_sampling_job_run(&job, NULL));
            if (memcmp(out, end, sizeof out)) fail_msg("%d frames: time %.9g is not the end key", n, (double)job.time);
        }
        job.time = nextafterf(anim.duration, 0.0f);
        PM_ASSERT_OK(pm_sampling_job_run(&job, NULL));
        assert_true(fabsf(pm_pose_translation(out, 0).z - 1.5f) < 1e-3f);
        job.time = nextafterf(anim.duration, INFINITY);
        PM_ASSERT_OK(pm_sampling_job_run(&job, NULL));
        assert_true(fabsf(pm_pose_translation(out, 0).z) < 1e-3f);
        pm_quat r[2];
        pm_vec3 t[2];
        PM_ASSERT_OK(pm_clip_sample(r, t, &clip, pm_clip_duration(&clip), NULL));
        for (int j = 0; j < 2; j++) {
            pm_test_assert_vec3_near(t[j], pm_pose_translation(end, j), 0.0f);
            assert_quat_near(r[j], pm_pose_rotation(end, j), 1e-6f);
        }
        PM_ASSERT_OK(pm_clip_sample(r, t, &clip, nextafterf(pm_clip_duration(&clip), INFINITY), NULL));
        assert_true(fabsf(t[0].z) < 1e-3f);
        pm_animation_destroy(&anim);
        pm_clip_destroy(&clip);
    }
    /* A one-shot at its duration is its last key bit for bit, whichever way it rounded. */
    for (int n = 2; n < 40; n++) {
        pm_clip clip;
        PM_ASSERT_OK(pm_clip_create(&clip, &sk, n, ft, NULL, NULL));
        for (int f = 0; f < n; f++) clip.translations[(size_t)f * 2] = pm_vec3_make(0.1f * (float)f, 1.0f, 0.3f * (float)f);
        pm_animation anim;
        PM_ASSERT_OK(pm_animation_build(&anim, &clip, NULL, NULL));
        pm_soa_transform out[1];
        pm_sampling_job job = pm_default_sampling_job();
        job.animation = &anim;
        job.time = anim.duration;
        job.output = out;
        job.output_count = 1;
        PM_ASSERT_OK(pm_sampling_job_run(&job, NULL));
        if (memcmp(out, anim.keys + (size_t)(n - 1) * (size_t)anim.soa_count, sizeof out))
            fail_msg("one-shot of %d frames: its duration is not its last key", n);
        pm_animation_destroy(&anim);
        pm_clip_destroy(&clip);
    }
    pm_skeleton_destroy(&sk);
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
        pm_soa_transform *pose = new_pose();
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
            PM_ASSERT_OK(pm_clip_sample(ref_r, ref_t, &clip, t, NULL));
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
        pm_soa_transform *other = new_pose();
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
        FREE_POSES(other, pose);
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
    pm_soa_transform *pose = new_pose();
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
    job.time = 0.1f;
    /* The animation struct is public: fields edited by hand must not send the job past its keys. */
    /* Each edit is the only field wrong, so each check is the one that must refuse it: a joint
     * count past the limit comes with its own group count, a duration wrong one way at a time. */
    enum { EDITS = 10 };
    pm_animation edited[EDITS];
    for (int i = 0; i < EDITS; i++) edited[i] = anim;
    edited[0].soa_count = 1000;
    edited[1].joint_count = -5;
    edited[2].key_count += 10;
    edited[3].frame_time = 0.0f;
    edited[4].duration = NAN;
    edited[5].looping = 7;
    edited[6].joint_count = PM_MAX_JOINTS + 1;
    edited[6].soa_count = pm_soa_count(PM_MAX_JOINTS + 1);
    edited[7].duration = -1.0f;
    edited[8].duration = INFINITY;
    edited[9].frame_time = INFINITY;
    for (int i = 0; i < EDITS; i++) {
        job.animation = &edited[i];
        job.output_count = 2000;
        assert_int_equal(pm_sampling_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(e.message, "disagree"));
    }
    job.animation = &anim;
    job.output_count = pm_soa_count(J_COUNT);
    /* Poses converted from or to arrays must be aligned like any pose. */
    pm_quat qs[J_COUNT];
    pm_vec3 ts[J_COUNT];
    PM_ASSERT_OK(pm_pose_to_aos(qs, ts, J_COUNT, pose, NULL));
    pm_soa_transform *odd = (pm_soa_transform *)(void *)((char *)pose + 4);
    assert_int_equal(pm_pose_from_aos(odd, J_COUNT, qs, ts, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "aligned"));
    assert_int_equal(pm_pose_to_aos(qs, ts, J_COUNT, odd, &e), PM_ERR_INVALID_ARGUMENT);
    /* A clip with a NaN does not become an animation. */
    clip.rotations[3].x = NAN;
    pm_animation bad;
    assert_int_equal(pm_animation_build(&bad, &clip, NULL, &e), PM_ERR_NUMERIC);
    clip.rotations[3].x = clip.rotations[3].y = clip.rotations[3].z = 0.0f;
    clip.rotations[3].w = 1.0f;
    /* Finite keys whose step overflows would sample Inf between them. */
    clip.translations[J_COUNT + 1].x = -3e38f;
    clip.translations[2 * J_COUNT + 1].x = 3e38f;
    PM_ASSERT_OK(pm_clip_validate(&clip, NULL));
    assert_int_equal(pm_animation_build(&bad, &clip, NULL, &e), PM_ERR_NUMERIC);
    assert_non_null(strstr(e.message, "frame 2"));
    assert_non_null(strstr(e.message, "too large to interpolate"));
    /* A loop travelling in even steps whose end key, one step past frame 9, leaves the float
     * range (15 steps of 2^124 is the last that fits). */
    for (int f = 0; f < 10; f++) clip.translations[(size_t)f * J_COUNT + 1].x = (float)(f + 6) * 0x1p124f;
    clip.looping = 1;
    if (pm_clip_validate(&clip, &e) != PM_OK) fail_msg("%s", e.message);
    assert_int_equal(pm_animation_build(&bad, &clip, NULL, &e), PM_ERR_NUMERIC);
    assert_non_null(strstr(e.message, "the loop's end after frame 9"));
    pm_pose_free(pose, NULL);
    pm_animation_destroy(&anim);
    pm_clip_destroy(&clip);
    pm_skeleton_destroy(&sk);
}

/* ---- blend job ---- */

static void test_blend_matches_reference(void **state) {
    (void)state;
    pm_test_rng rng = {11};
    pm_soa_transform *p[5], *out = new_pose();
    for (int i = 0; i < 5; i++) p[i] = new_random_pose(&rng, 1.0f);
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
    free_pose_array(p, 5);
    pm_pose_free(out, NULL);
}

static void test_blend_zero_weight_is_not_read(void **state) {
    (void)state;
    pm_test_rng rng = {5};
    pm_soa_transform *a = new_random_pose(&rng, 2.0f), *b = new_random_pose(&rng, 2.0f);
    pm_soa_transform *poison = new_pose(), *out = new_pose(), *ref = new_pose();
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
    pm_soa_transform *copy = new_pose();
    memcpy(copy, a, sizeof(pm_soa_transform) * (size_t)pm_soa_count(J_COUNT));
    pm_blend_input alias[2] = {{copy, 0.4f}, {b, 0.6f}};
    run_blend(copy, alias, 2);
    assert_true(poses_bitwise_equal(copy, ref, J_COUNT));
    FREE_POSES(copy, a, b, poison, out, ref);
}

/* Weights so small that 1 / sum overflows, or so large that the sum does: only their ratios
 * matter, so the blend is the one of the normalised weights, finite. */
static int pose_finite(const pm_soa_transform *p, int joints) {
    for (int j = 0; j < joints; j++) {
        pm_quat q = pm_pose_rotation(p, j);
        pm_vec3 t = pm_pose_translation(p, j);
        if (!isfinite(q.x) || !isfinite(q.y) || !isfinite(q.z) || !isfinite(q.w) || !isfinite(t.x) || !isfinite(t.y) ||
            !isfinite(t.z))
            return 0;
    }
    return 1;
}

static void test_blend_extreme_weights(void **state) {
    (void)state;
    pm_test_rng rng = {13};
    pm_soa_transform *p[4], *out = new_pose(), *ref = new_pose();
    for (int i = 0; i < 4; i++) p[i] = new_random_pose(&rng, 2.0f);
    static const float equal[] = {1e-45f, 1e-40f, 1e-38f, 3e38f};
    for (int n = 2; n <= 4; n++) {
        pm_blend_input in[4];
        for (int i = 0; i < n; i++) in[i] = (pm_blend_input){p[i], 1.0f};
        run_blend(ref, in, n);
        for (size_t k = 0; k < sizeof equal / sizeof equal[0]; k++) {
            for (int i = 0; i < n; i++) in[i].weight = equal[k];
            run_blend(out, in, n);
            if (!poses_bitwise_equal(out, ref, J_COUNT)) fail_msg("%d inputs of weight %g", n, (double)equal[k]);
        }
        /* Unequal tiny weights: finite, and close to the same ratios at ordinary scale. */
        for (int i = 0; i < n; i++) in[i].weight = (float)(i + 1) * 1e-40f;
        run_blend(out, in, n);
        assert_true(pose_finite(out, J_COUNT));
        for (int i = 0; i < n; i++) in[i].weight = (float)(i + 1);
        run_blend(ref, in, n);
        for (int j = 0; j < J_COUNT; j++) {
            assert_quat_near(pm_pose_rotation(out, j), pm_pose_rotation(ref, j), 1e-3f);
            assert_vec_near(pm_pose_translation(out, j), pm_pose_translation(ref, j), 1e-3f);
        }
#if defined(__SSE__) || defined(__x86_64__)
        /* Huge unequal weights whose sum is finite, with flush-to-zero and denormals-are-zero on
         * (as game runtimes run): 1 / sum and 1 / the heaviest are subnormal, which flushed to 0
         * and blended to the identity. Taken relative to the largest, they blend as (i + 1) do. */
        const unsigned csr = _mm_getcsr();
        _mm_setcsr(csr | 0x8040u); /* FTZ | DAZ */
        for (int i = 0; i < n; i++) in[i].weight = (float)(i + 1) * 5e37f;
        run_blend(out, in, n);
        _mm_setcsr(csr);
        for (int j = 0; j < J_COUNT; j++) {
            assert_quat_near(pm_pose_rotation(out, j), pm_pose_rotation(ref, j), 1e-5f);
            assert_vec_near(pm_pose_translation(out, j), pm_pose_translation(ref, j), 1e-5f);
        }
#endif
    }
    free_pose_array(p, 4);
    FREE_POSES(out, ref);
}

static void test_blend_hemisphere(void **state) {
    (void)state;
    pm_test_rng rng = {9};
    pm_soa_transform *a = new_random_pose(&rng, 1.5f), *b = new_random_pose(&rng, 1.5f);
    pm_soa_transform *nb = new_pose(), *o1 = new_pose(), *o2 = new_pose();
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
    FREE_POSES(a, b, nb, o1, o2);
}

static void test_blend_errors(void **state) {
    (void)state;
    pm_soa_transform *a = new_pose(), *out = new_pose();
    pm_error e;
    pm_blend_job job = blend_job(NULL, 0, out);
    assert_int_equal(pm_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    job.input_count = 2;
    assert_int_equal(pm_blend_job_run(&job, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "inputs is NULL"));
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
    FREE_POSES(a, out);
}

static void test_local_to_model(void **state) {
    (void)state;
    pm_skeleton sk;
    make_skeleton(&sk);
    pm_test_rng rng = {61};
    pm_soa_transform *pose = new_pose();
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
        PM_ASSERT_OK(pm_local_to_model(ref, sk.parents, J_COUNT, lr, lt, NULL));
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
    /* The root is checked on every run, not only by validate: finite and a unit rotation. */
    job.parents = sk.parents;
    pm_transform root = pm_transform_identity();
    job.root = &root;
    PM_ASSERT_OK(pm_local_to_model_job_run(&job, NULL));
    root.translation.y = NAN;
    assert_int_equal(pm_local_to_model_job_run(&job, &e), PM_ERR_NUMERIC);
    root = pm_transform_identity();
    root.rotation.w = 2.0f;
    assert_int_equal(pm_local_to_model_job_run(&job, &e), PM_ERR_NUMERIC);
    assert_non_null(strstr(e.message, "unit"));
    root.rotation.w = 0.0f;
    assert_int_equal(pm_local_to_model_job_validate(&job, &e), PM_ERR_NUMERIC);
    pm_pose_free(pose, NULL);
    pm_skeleton_destroy(&sk);
}

/* Four or more inputs (the general kernel) are brought to the first one's hemisphere too: inputs
 * given as -q blend as q, to the blend of the same inputs all given as q. */
static void test_blend_many_inputs_hemispheres(void **state) {
    (void)state;
    enum { J = 5, N = 5 };
    pm_soa_transform *p[N], *out = pm_pose_alloc(J, NULL), *ref = pm_pose_alloc(J, NULL);
    pm_blend_input in[N];
    for (int flip = 0; flip < 2; flip++) {
        for (int i = 0; i < N; i++) {
            if (!flip) p[i] = pm_pose_alloc(J, NULL);
            pm_quat q = pm_quat_from_axis_angle(pm_vec3_make(0, 1, 0), 0.5f + 0.2f * (float)i);
            for (int j = 0; j < J; j++) pm_pose_set_joint(p[i], j, flip && i % 2 ? pm_quat_neg(q) : q, pm_vec3_make(0, 0, 0));
            in[i].pose = p[i];
            in[i].weight = i == 0 ? 0.3f : 0.175f;
        }
        pm_blend_job job = pm_default_blend_job();
        job.inputs = in;
        job.input_count = N;
        job.joint_count = J;
        job.output = flip ? out : ref;
        PM_ASSERT_OK(pm_blend_job_run(&job, NULL));
    }
    for (int j = 0; j < J; j++) assert_true(pm_test_quat_same(pm_pose_rotation(out, j), pm_pose_rotation(ref, j), 1e-6f));
    for (int i = 0; i < N; i++) pm_pose_free(p[i], NULL);
    pm_pose_free(out, NULL);
    pm_pose_free(ref, NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blend_many_inputs_hemispheres),
        cmocka_unit_test(test_pose_conversions),
        cmocka_unit_test(test_sampling_matches_clip),
        cmocka_unit_test(test_loop_end_key_turns_only_the_root_carrier),
        cmocka_unit_test(test_sampling_at_the_loop_end),
        cmocka_unit_test(test_sampling_errors),
        cmocka_unit_test(test_blend_matches_reference),
        cmocka_unit_test(test_blend_zero_weight_is_not_read),
        cmocka_unit_test(test_blend_extreme_weights),
        cmocka_unit_test(test_blend_hemisphere),
        cmocka_unit_test(test_blend_errors),
        cmocka_unit_test(test_local_to_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
