/* Blend-space checks shared by the 2D and 3D blend-space tests. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "blend_space_internal.h"
#include "blend_support.h"

void pm_test_blend_skeleton(pm_skeleton *sk, int joints) {
    PM_ASSERT_OK(pm_skeleton_create(sk, joints, NULL, NULL));
    for (int j = 0; j < joints; j++) {
        char name[16];
        snprintf(name, sizeof name, "j%d", j);
        PM_ASSERT_OK(pm_skeleton_set_name(sk, j, name, NULL));
        sk->rest_translations[j] = pm_vec3_make(0.0f, j ? 0.3f : 1.0f, 0.0f);
    }
}

/* A looping clip of `frames` frames whose joint 1 swings as sin(2 pi phase) * amplitude about X, the
 * others carry an id so blends can be told apart. */
void pm_test_blend_swing_clip(pm_clip *clip, const pm_skeleton *sk, int frames, float amplitude, float id) {
    PM_ASSERT_OK(pm_clip_create(clip, sk, frames, 1.0f / 30.0f, NULL, NULL));
    clip->looping = 1;
    for (int f = 0; f < frames; f++) {
        float phase = (float)f / (float)frames;
        for (int j = 0; j < sk->joint_count; j++) {
            pm_quat q = pm_quat_identity();
            if (j == 1) q = pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), amplitude * sinf(6.2831853f * phase));
            else if (j > 1) q = pm_quat_from_axis_angle(pm_vec3_make(0, 0, 1), 0.1f * id + 0.05f * (float)j);
            clip->rotations[f * sk->joint_count + j] = q;
            pm_vec3 t = sk->rest_translations[j];
            if (j == 0) t = pm_vec3_make(id, 1.0f, 2.0f * phase);
            clip->translations[f * sk->joint_count + j] = t;
        }
    }
}

void pm_test_blend_fixture_swing(pm_test_blend_fixture *fx, int joints, int count) {
    memset(fx, 0, sizeof *fx);
    pm_test_blend_skeleton(&fx->sk, joints);
    fx->count = count;
    for (int i = 0; i < count; i++)
        pm_test_blend_swing_clip(&fx->clips[i], &fx->sk, 20 + 3 * i, 0.5f + 0.1f * (float)i, (float)i);
}

void pm_test_blend_fixture_free(pm_test_blend_fixture *fx) {
    for (int i = 0; i < fx->count; i++) pm_clip_destroy(&fx->clips[i]);
    pm_skeleton_destroy(&fx->sk);
}

void pm_test_blend_write_clips(const pm_test_blend_fixture *fx, int count) {
    assert_true(count >= 0 && count <= fx->count);
    for (int i = 0; i < count; i++) {
        char name[32];
        snprintf(name, sizeof name, "clip%d.bvh", i);
        PM_ASSERT_OK(pm_bvh_write_file(&fx->clips[i], pm_test_tmp_path(name), NULL, NULL));
    }
}

void pm_test_blend_samples(pm_blend_sample_def *out, pm_test_blend_fixture *fx, const float (*points)[2], int n) {
    for (int i = 0; i < n; i++) {
        out[i] = pm_default_blend_sample_def();
        out[i].clip = &fx->clips[i];
        out[i].params[0] = points[i][0];
        out[i].params[1] = points[i][1];
    }
}

pm_blend_space_def pm_test_blend_def(const pm_blend_sample_def *samples, int n, int dims) {
    pm_blend_space_def def = pm_default_blend_space_def();
    def.dimensions = dims;
    def.samples = samples;
    def.sample_count = n;
    def.align = PM_BLEND_ALIGN_NONE;
    return def;
}

pm_result pm_test_blend_make_space(pm_blend_space **out, pm_test_blend_fixture *fx, int dims, const float (*points)[2],
                                   const int *order, int n, pm_error *e) {
    pm_blend_sample_def samples[64];
    char names[64][16];
    for (int i = 0; i < n; i++) {
        int k = order ? order[i] : i;
        samples[i] = pm_default_blend_sample_def();
        samples[i].clip = &fx->clips[k];
        snprintf(names[i], sizeof names[i], "s%d", k);
        samples[i].name = names[i];
        samples[i].params[0] = points[k][0];
        samples[i].params[1] = points[k][1];
    }
    pm_blend_space_def def = pm_test_blend_def(samples, n, dims);
    def.name = "test";
    for (int d = 0; d < dims; d++) {
        def.axis_min[d] = -1.0f;
        def.axis_max[d] = 2.0f;
    }
    return pm_blend_space_create(out, &def, e);
}

pm_blend_space *pm_test_blend_pair(const pm_clip *a, const pm_clip *b, pm_blend_sync sync, pm_blend_align align) {
    pm_blend_sample_def samples[2] = {pm_default_blend_sample_def(), pm_default_blend_sample_def()};
    samples[0].clip = a, samples[0].name = "a";
    samples[1].clip = b, samples[1].name = "b", samples[1].params[0] = 1.0f;
    pm_blend_space_def def = pm_default_blend_space_def();
    def.samples = samples, def.sample_count = 2, def.sync = sync, def.align = align;
    pm_blend_space *s = NULL;
    PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
    return s;
}

pm_result pm_test_blend_points_space(pm_blend_space **out, const pm_clip *clip, int dims, const float *points, int stride,
                                     const int *order, int n, float widen, const pm_allocator *a, pm_error *e) {
    pm_blend_sample_def *defs = calloc((size_t)n, sizeof *defs);
    char (*names)[16] = calloc((size_t)n, sizeof *names);
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < n; i++) {
        int k = order ? order[i] : i;
        defs[i] = pm_default_blend_sample_def();
        defs[i].clip = clip;
        snprintf(names[i], sizeof names[i], "s%d", k);
        defs[i].name = names[i];
        for (int d = 0; d < dims; d++) {
            defs[i].params[d] = points[(size_t)k * (size_t)stride + (size_t)d];
            lo[d] = fminf(lo[d], defs[i].params[d]);
            hi[d] = fmaxf(hi[d], defs[i].params[d]);
        }
    }
    pm_blend_space_def def = pm_test_blend_def(defs, n, dims);
    def.sync = PM_BLEND_SYNC_PHASE;
    def.allocator = a;
    if (widen > 0.0f)
        for (int d = 0; d < dims; d++) {
            float span = hi[d] > lo[d] ? hi[d] - lo[d] : 1.0f;
            def.axis_min[d] = lo[d] - widen * span;
            def.axis_max[d] = hi[d] + widen * span;
        }
    pm_result r = pm_blend_space_create(out, &def, e);
    free(defs);
    free(names);
    return r;
}

const float pm_test_triangle[3][2] = {{0, 0}, {1, 0}, {0, 1}};

pm_blend_space *pm_test_blend_triangle_space(pm_test_blend_fixture *fx, int joints) {
    pm_test_blend_fixture_swing(fx, joints, 3);
    pm_blend_space *s = NULL;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, fx, 2, pm_test_triangle, NULL, 3, NULL));
    return s;
}

void pm_test_blend_poses_alloc(pm_test_blend_poses *p, int joints) {
    p->soa = pm_soa_count(joints);
    /* Whole poses of p->soa groups each (pm_test_blend_job claims that many): joints *
     * PM_BLEND_SPACE_MAX_WEIGHTS would round the product up, short for counts not a multiple of 4. */
    p->scratch = pm_pose_alloc(PM_SOA_WIDTH * p->soa * PM_BLEND_SPACE_MAX_WEIGHTS, NULL);
    p->out = pm_pose_alloc(joints, NULL);
    p->ref = pm_pose_alloc(joints, NULL);
}

void pm_test_blend_poses_free(pm_test_blend_poses *p) {
    pm_pose_free(p->scratch, NULL);
    pm_pose_free(p->out, NULL);
    pm_pose_free(p->ref, NULL);
}

pm_blend_space_job pm_test_blend_job(const pm_blend_space *s, const float *params, float phase,
                                     const pm_test_blend_poses *p) {
    pm_blend_space_job job = pm_default_blend_space_job();
    job.space = s;
    job.params = params;
    job.phase = phase;
    job.scratch = p->scratch;
    job.scratch_count = p->soa * PM_BLEND_SPACE_MAX_WEIGHTS;
    job.output = p->out;
    job.output_count = p->soa;
    return job;
}

void pm_test_assert_plays_sample(const pm_blend_space *s, int i, float phase, const pm_test_blend_poses *p) {
    pm_sampling_job sj = pm_default_sampling_job();
    sj.animation = pm_blend_space_sample_animation(s, i);
    sj.time = phase * sj.animation->duration;
    sj.output = p->ref;
    sj.output_count = p->soa;
    PM_ASSERT_OK(pm_sampling_job_run(&sj, NULL));
    assert_memory_equal(p->out, p->ref, sizeof(pm_soa_transform) * (size_t)p->soa);
}

pm_result pm_test_blend_load_json(pm_blend_space_file *f, const char *json, pm_error *e) {
    return pm_blend_space_from_json(f, json, "space.json", pm_test_tmp_dir(), NULL, e);
}

void pm_test_blend_load_json_ok(pm_blend_space_file *f, const char *json) {
    pm_error e;
    if (pm_test_blend_load_json(f, json, &e) != PM_OK) fail_msg("%s", e.message);
}

void pm_test_blend_expect_bad_json(const pm_test_bad_json *bad, size_t n) {
    for (size_t i = 0; i < n; i++) {
        pm_blend_space_file f;
        pm_error e;
        memset(&e, 0, sizeof e);
        pm_result r = pm_test_blend_load_json(&f, bad[i].json, &e);
        if (r == PM_OK) fail_msg("case %d was accepted", (int)i);
        if (!strstr(e.message, bad[i].expect) || !strstr(e.message, "space.json"))
            fail_msg("case %d: message '%s' lacks '%s'", (int)i, e.message, bad[i].expect);
        assert_null(f.space);
    }
}

void pm_test_dense_weights(float *out, int n, const pm_blend_space *s, const pm_blend_space_weights *w) {
    for (int i = 0; i < n; i++) out[i] = 0.0f;
    for (int i = 0; i < w->count; i++) {
        int k = atoi(pm_blend_space_sample_name(s, w->samples[i]) + 1);
        assert_true(k >= 0 && k < n);
        out[k] = w->weights[i];
    }
}

void pm_test_assert_weights_near(const pm_blend_space *s, int n, const float *at, const float *a, const float *b,
                                 float tol) {
    pm_blend_space_weights w0, w1, w2;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w0, s, at, NULL));
    PM_ASSERT_OK(pm_blend_space_weights_at(&w1, s, a, NULL));
    PM_ASSERT_OK(pm_blend_space_weights_at(&w2, s, b, NULL));
    float d0[256], d1[256], d2[256];
    assert_true(n <= 256);
    pm_test_dense_weights(d0, n, s, &w0);
    pm_test_dense_weights(d1, n, s, &w1);
    pm_test_dense_weights(d2, n, s, &w2);
    for (int i = 0; i < n; i++) assert_true(fabsf(d0[i] - d1[i]) < tol && fabsf(d0[i] - d2[i]) < tol);
}

void pm_test_check_weights(const pm_blend_space *s, const pm_blend_space_weights *w) {
    assert_true(w->count >= 1 && w->count <= pm_blend_space_max_weights(s));
    float sum = 0.0f;
    for (int i = 0; i < w->count; i++) {
        assert_true(w->weights[i] > 0.0f);
        assert_true(w->samples[i] >= 0 && w->samples[i] < pm_blend_space_sample_count(s));
        for (int k = 0; k < i; k++) assert_true(w->samples[k] != w->samples[i]);
        sum += w->weights[i];
    }
    assert_true(fabsf(sum - 1.0f) < 1e-6f);
}

void pm_test_assert_lookup_is_brute(const pm_blend_space *s, const float *q, const char *what) {
    pm_blend_space_weights a, b;
    PM_ASSERT_OK(pm_blend_space_weights_at(&a, s, q, NULL));
    PM_ASSERT_OK(pm_blend_space_weights_brute(&b, s, q, NULL));
    int same = a.cell_kind == b.cell_kind && a.cell == b.cell && a.outside == b.outside &&
               a.cell_sample_count == b.cell_sample_count && a.count == b.count;
    for (int i = 0; same && i < a.cell_sample_count; i++) same = a.cell_samples[i] == b.cell_samples[i];
    for (int i = 0; same && i < a.count; i++)
        same = a.samples[i] == b.samples[i] && memcmp(&a.weights[i], &b.weights[i], sizeof(float)) == 0;
    same = same && memcmp(a.params, b.params, sizeof a.params) == 0;
    if (same) return;
    char at[96];
    int dims = pm_blend_space_dimensions(s);
    snprintf(at, sizeof at, dims == 1 ? "%.9g" : dims == 2 ? "%.9g, %.9g" : "%.9g, %.9g, %.9g", (double)q[0],
             dims > 1 ? (double)q[1] : 0.0, dims > 2 ? (double)q[2] : 0.0);
    fail_msg("%s at (%s): %s cell %d (%d weights, first %d:%.9g) where testing every cell gives %s cell %d (%d weights, "
             "first %d:%.9g)",
             what, at, a.outside ? "outside," : "inside,", a.cell, a.count, a.samples[0], (double)a.weights[0],
             b.outside ? "outside," : "inside,", b.cell, b.count, b.samples[0], (double)b.weights[0]);
}

void pm_test_same_blend(const pm_blend_space *ref, const pm_blend_space *s, const float *params, int n,
                        const pm_test_blend_poses *p) {
    pm_blend_space_weights wa, wb;
    PM_ASSERT_OK(pm_blend_space_weights_at(&wa, ref, params, NULL));
    PM_ASSERT_OK(pm_blend_space_weights_at(&wb, s, params, NULL));
    float da[256], db[256];
    assert_true(n <= 256);
    pm_test_dense_weights(da, n, ref, &wa);
    pm_test_dense_weights(db, n, s, &wb);
    assert_memory_equal(da, db, sizeof(float) * (size_t)n);
    /* And the blended poses are the same bits. */
    pm_blend_space_job job = pm_test_blend_job(ref, params, 0.3f, p);
    job.output = p->ref;
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    job.space = s;
    job.output = p->out;
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    assert_memory_equal(p->ref, p->out, sizeof(pm_soa_transform) * (size_t)p->soa);
}
