/* Blend spaces (BL1, PS12): weights, exactness, order independence, hull projection, 1D and
 * collinear spaces, many samples, resolution and inspection errors (sync, the job, baking and
 * grids: test_blend_space_bake.c; the 2D Delaunay triangulation: test_blend_space_delaunay.c;
 * bad spaces and the JSON format: test_blend_space_json.c). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blend_support.h"

#define JOINTS 4

static float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

typedef pm_test_blend_fixture fixture;

/* ---- weights ---- */

static const float square[5][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0.5f, 0.25f}};

static void test_weights_properties(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 40);
    pm_test_rng rng = {7};
    float pts[40][2];
    for (int i = 0; i < 40; i++) {
        pts[i][0] = pm_test_rng_float(&rng) * 2.0f - 0.5f;
        pts[i][1] = pm_test_rng_float(&rng) * 2.0f - 0.5f;
    }
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, pts, NULL, 40, NULL));
    assert_true(pm_blend_space_cell_count(s) > 0);
    for (int q = 0; q < 3000; q++) {
        float p[2] = {pm_test_rng_float(&rng) * 3.4f - 1.2f, pm_test_rng_float(&rng) * 3.4f - 1.2f};
        pm_blend_space_weights w;
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, p, NULL));
        pm_test_check_weights(s, &w);
        if (!w.outside) {
            /* Barycentric: the weights reproduce the point. */
            assert_int_equal(w.cell_kind, PM_BLEND_CELL_TRIANGLE);
            assert_true(fabsf(w.params[0] - p[0]) < 1e-5f && fabsf(w.params[1] - p[1]) < 1e-5f);
        }
        /* The point used is no farther from the query than any sample (projection onto the hull). */
        float du = hypotf(w.params[0] - clampf(p[0], -1.0f, 2.0f), w.params[1] - clampf(p[1], -1.0f, 2.0f));
        for (int i = 0; i < 40; i++)
            assert_true(du <= hypotf(pts[i][0] - clampf(p[0], -1.0f, 2.0f), pts[i][1] - clampf(p[1], -1.0f, 2.0f)) + 1e-5f);
    }
    /* A refused parameter leaves the output as it was; the previous result's own point may be
     * the next query. */
    pm_blend_space_weights w, before;
    const float p[2] = {0.3f, 0.4f};
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, p, NULL));
    before = w;
    const float bad[2] = {NAN, 0.4f};
    assert_int_equal(pm_blend_space_weights_at(&w, s, bad, NULL), PM_ERR_NUMERIC);
    assert_memory_equal(&w, &before, sizeof w);
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, w.params, NULL));
    assert_true(fabsf(w.params[0] - p[0]) < 1e-5f && fabsf(w.params[1] - p[1]) < 1e-5f);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

static void test_weights_continuity(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 25);
    pm_test_rng rng = {17};
    float pts[25][2];
    for (int i = 0; i < 25; i++) {
        pts[i][0] = pm_test_rng_float(&rng);
        pts[i][1] = pm_test_rng_float(&rng);
    }
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, pts, NULL, 25, NULL));
    int cells = pm_blend_space_cell_count(s);
    for (int c = 0; c < cells; c++) {
        int v[3];
        assert_int_equal(pm_blend_space_cell(s, c, v), 3);
        for (int e = 0; e < 3; e++) {
            float a[2], b[2];
            PM_ASSERT_OK(pm_blend_space_sample_params(a, s, v[e], NULL));
            PM_ASSERT_OK(pm_blend_space_sample_params(b, s, v[(e + 1) % 3], NULL));
            float t = 0.2f + 0.6f * pm_test_rng_float(&rng);
            float m[2] = {a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])};
            float nrm[2] = {-(b[1] - a[1]), b[0] - a[0]};
            float len = hypotf(nrm[0], nrm[1]);
            float eps = 1e-6f;
            float p1[2] = {m[0] + eps * nrm[0] / len, m[1] + eps * nrm[1] / len};
            float p2[2] = {m[0] - eps * nrm[0] / len, m[1] - eps * nrm[1] / len};
            pm_test_assert_weights_near(s, 25, p1, p2, m, 2e-3f);
        }
    }
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

static void test_exact_at_samples(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 5);
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, square, NULL, 5, NULL));
    pm_test_blend_poses poses;
    pm_test_blend_poses_alloc(&poses, JOINTS);
    for (int i = 0; i < 5; i++) {
        pm_blend_space_weights w;
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, square[i], NULL));
        assert_int_equal(w.count, 1);
        assert_true(w.weights[0] == 1.0f);
        assert_int_equal(w.samples[0], i);
        for (int k = 0; k < 7; k++) {
            float phase = (float)k / 7.0f;
            pm_blend_space_job job = pm_test_blend_job(s, square[i], phase, &poses);
            PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
            pm_test_assert_plays_sample(s, i, phase, &poses);
        }
    }
    pm_test_blend_poses_free(&poses);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

static void test_order_independence(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 12);
    /* A unit square (both diagonals are Delaunay: the classic ambiguity), a 3x3 lattice, and
     * random points. */
    float sq[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
    float lat[9][2];
    for (int i = 0; i < 9; i++) {
        lat[i][0] = 0.5f * (float)(i % 3);
        lat[i][1] = 0.5f * (float)(i / 3);
    }
    pm_test_rng rng = {77};
    float rnd[12][2];
    for (int i = 0; i < 12; i++) {
        rnd[i][0] = pm_test_rng_float(&rng);
        rnd[i][1] = pm_test_rng_float(&rng);
    }
    const float(*sets[3])[2] = {sq, lat, rnd};
    int sizes[3] = {4, 9, 12};
    pm_test_blend_poses poses;
    pm_test_blend_poses_alloc(&poses, JOINTS);
    for (int set = 0; set < 3; set++) {
        int n = sizes[set];
        int order[12], shuffled[12];
        for (int i = 0; i < n; i++) order[i] = i;
        pm_blend_space *ref;
        PM_ASSERT_OK(pm_test_blend_make_space(&ref, &fx, 2, sets[set], order, n, NULL));
        for (int perm = 0; perm < 8; perm++) {
            for (int i = 0; i < n; i++) shuffled[i] = i;
            for (int i = n - 1; i > 0; i--) {
                int k = (int)(pm_test_rng_u32(&rng) % (uint32_t)(i + 1));
                int t = shuffled[i];
                shuffled[i] = shuffled[k];
                shuffled[k] = t;
            }
            pm_blend_space *s;
            PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, sets[set], shuffled, n, NULL));
            /* Queries on sample-sample midpoints (edges or diagonals), the centre, and random points. */
            for (int q = 0; q < 60; q++) {
                float p[2];
                if (q < 30) {
                    int a = q % n, b = (q * 7 + 3) % n;
                    p[0] = 0.5f * (sets[set][a][0] + sets[set][b][0]);
                    p[1] = 0.5f * (sets[set][a][1] + sets[set][b][1]);
                } else if (q == 30) p[0] = p[1] = 0.5f;
                else {
                    p[0] = pm_test_rng_float(&rng) * 1.6f - 0.3f;
                    p[1] = pm_test_rng_float(&rng) * 1.6f - 0.3f;
                }
                pm_test_same_blend(ref, s, p, n, &poses);
            }
            pm_blend_space_destroy(s);
        }
        pm_blend_space_destroy(ref);
    }
    /* On the square's centre the result uses one diagonal: two samples at 0.5 each. */
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, sq, NULL, 4, NULL));
    pm_blend_space_weights w;
    float centre[2] = {0.5f, 0.5f};
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, centre, NULL));
    assert_int_equal(w.count, 2);
    assert_true(w.weights[0] == 0.5f && w.weights[1] == 0.5f);
    pm_blend_space_destroy(s);
    pm_test_blend_poses_free(&poses);
    pm_test_blend_fixture_free(&fx);
}

static void test_edges_and_outside(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 4);
    float tri[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, tri, NULL, 4, NULL));
    /* On a hull edge: linear between its ends, nothing else. */
    pm_blend_space_weights w;
    float on_edge[2] = {0.25f, 0.0f};
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, on_edge, NULL));
    assert_int_equal(w.count, 2);
    assert_false(w.outside);
    float d[4];
    pm_test_dense_weights(d, 4, s, &w);
    assert_true(fabsf(d[0] - 0.75f) < 1e-6f && fabsf(d[1] - 0.25f) < 1e-6f);
    /* Below the bottom edge: projected onto it. */
    float below[2] = {0.25f, -0.5f};
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, below, NULL));
    assert_true(w.outside);
    assert_int_equal(w.cell_kind, PM_BLEND_CELL_HULL_EDGE);
    pm_test_dense_weights(d, 4, s, &w);
    assert_true(fabsf(d[0] - 0.75f) < 1e-6f && fabsf(d[1] - 0.25f) < 1e-6f);
    assert_true(fabsf(w.params[0] - 0.25f) < 1e-6f && fabsf(w.params[1]) < 1e-6f);
    /* Beyond a corner: the corner sample alone. */
    float corner[2] = {1.8f, 1.9f};
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, corner, NULL));
    assert_int_equal(w.count, 1);
    pm_test_dense_weights(d, 4, s, &w);
    assert_true(d[3] == 1.0f);
    /* Beyond the axis range: clamped first. */
    float far[2] = {100.0f, 0.5f};
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, far, NULL));
    assert_true(w.outside);
    pm_test_dense_weights(d, 4, s, &w);
    assert_true(fabsf(d[1] - 0.5f) < 1e-6f && fabsf(d[3] - 0.5f) < 1e-6f);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

static void test_one_dimension_and_collinear(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 4);
    float xs[4][2] = {{2, 0}, {0, 0}, {1, 0}, {1.5f, 0}};
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 1, xs, NULL, 4, NULL));
    assert_int_equal(pm_blend_space_cell_count(s), 3);
    pm_blend_space_weights w;
    float d[4];
    float p = 1.25f;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, &p, NULL));
    assert_int_equal(w.cell_kind, PM_BLEND_CELL_SEGMENT);
    pm_test_dense_weights(d, 4, s, &w);
    assert_true(fabsf(d[2] - 0.5f) < 1e-6f && fabsf(d[3] - 0.5f) < 1e-6f);
    p = -0.5f; /* inside the axis range [-1, 2], below the first sample */
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, &p, NULL));
    pm_test_dense_weights(d, 4, s, &w);
    assert_true(d[1] == 1.0f && w.outside);
    pm_blend_space_destroy(s);

    /* 2D samples on one line: a 1D space along it (or an error when asked). */
    float diag[4][2] = {{0, 0}, {1, 1}, {0.25f, 0.25f}, {-0.5f, -0.5f}};
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, diag, NULL, 4, NULL));
    assert_true(pm_blend_space_is_collinear(s));
    float q[2] = {0.625f, 0.625f};
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, q, NULL));
    assert_false(w.outside);
    pm_test_dense_weights(d, 4, s, &w);
    assert_true(fabsf(d[1] - 0.5f) < 1e-6f && fabsf(d[2] - 0.5f) < 1e-6f);
    float off[2] = {1.0f, 0.25f}; /* projects onto (0.625, 0.625) */
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, off, NULL));
    assert_true(w.outside);
    pm_test_dense_weights(d, 4, s, &w);
    assert_true(fabsf(d[1] - 0.5f) < 1e-5f && fabsf(d[2] - 0.5f) < 1e-5f);
    pm_blend_space_destroy(s);

    pm_blend_sample_def samples[3];
    pm_test_blend_samples(samples, &fx, diag, 3);
    pm_blend_space_def def = pm_test_blend_def(samples, 3, 2);
    def.collinear = PM_BLEND_COLLINEAR_ERROR;
    pm_error e;
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "one line"));
    /* A single sample is a valid space: always that sample. */
    def.sample_count = 1;
    PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
    float any[2] = {5, -5};
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, any, NULL));
    assert_int_equal(w.count, 1);
    assert_int_equal(w.cell_kind, PM_BLEND_CELL_POINT);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

static void test_many_samples_location(void **state) {
    (void)state;
    fixture fx;
    memset(&fx, 0, sizeof fx);
    pm_test_blend_skeleton(&fx.sk, 2);
    pm_clip clip;
    pm_test_blend_swing_clip(&clip, &fx.sk, 4, 0.3f, 0.0f);
    enum { N = 600 };
    pm_blend_sample_def *samples = calloc(N, sizeof *samples);
    pm_test_rng rng = {123};
    for (int i = 0; i < N; i++) {
        samples[i] = pm_default_blend_sample_def();
        samples[i].clip = &clip;
        /* Distinct points (a draw that repeats an earlier one is drawn again): the space must
         * build. Duplicates and their message are checked with the other create errors. */
        for (int dup = 1; dup;) {
            samples[i].params[0] = (float)(pm_test_rng_u32(&rng) % 100000) / 1000.0f;
            samples[i].params[1] = (float)(pm_test_rng_u32(&rng) % 100000) / 1000.0f;
            dup = 0;
            for (int k = 0; k < i && !dup; k++)
                dup = samples[k].params[0] == samples[i].params[0] && samples[k].params[1] == samples[i].params[1];
        }
    }
    pm_blend_space_def def = pm_test_blend_def(samples, N, 2);
    def.axis_max[0] = def.axis_max[1] = 100.0f;
    pm_blend_space *s;
    pm_error e;
    if (pm_blend_space_create(&s, &def, &e) != PM_OK) fail_msg("%d distinct samples: %s", N, e.message);
    /* Against a brute-force search over every triangle. */
    int cells = pm_blend_space_cell_count(s);
    for (int q = 0; q < 2000; q++) {
        float p[2] = {pm_test_rng_float(&rng) * 100.0f, pm_test_rng_float(&rng) * 100.0f};
        pm_blend_space_weights w;
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, p, NULL));
        pm_test_check_weights(s, &w);
        int inside = 0;
        for (int c = 0; c < cells && !inside; c++) {
            int v[3];
            pm_blend_space_cell(s, c, v);
            double a[3][2];
            for (int k = 0; k < 3; k++) {
                a[k][0] = samples[v[k]].params[0];
                a[k][1] = samples[v[k]].params[1];
            }
            double l[3];
            double area = (a[1][0] - a[0][0]) * (a[2][1] - a[0][1]) - (a[1][1] - a[0][1]) * (a[2][0] - a[0][0]);
            for (int k = 0; k < 3; k++) {
                const double *b = a[(k + 1) % 3], *cc = a[(k + 2) % 3];
                l[k] = ((cc[0] - b[0]) * (p[1] - b[1]) - (cc[1] - b[1]) * (p[0] - b[0])) / area;
            }
            if (l[0] > 1e-4 && l[1] > 1e-4 && l[2] > 1e-4) {
                inside = 1;
                float d[3];
                for (int k = 0; k < 3; k++) {
                    d[k] = 0.0f;
                    for (int i = 0; i < w.count; i++)
                        if (w.samples[i] == v[k]) d[k] = w.weights[i];
                    assert_true(fabs(d[k] - l[k]) < 1e-4);
                }
            }
        }
        if (inside) assert_false(w.outside);
    }
    pm_blend_space_destroy(s);
    free(samples);
    pm_clip_destroy(&clip);
    pm_skeleton_destroy(&fx.sk);
}

/* One sample: every other point is projected onto it, and says so. */
static void test_single_sample_outside(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 1);
    float pts[1][2] = {{0.5f, 0.5f}};
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, pts, NULL, 1, NULL));
    pm_blend_space_weights w;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, pts[0], NULL));
    assert_int_equal(w.cell_kind, PM_BLEND_CELL_POINT);
    assert_false(w.outside);
    /* It blends one pose at most: scratch for one is enough, and the job plays the sample. */
    assert_int_equal(pm_blend_space_max_weights(s), 1);
    enum { SOA = (JOINTS + 3) / 4 };
    assert_int_equal(pm_blend_space_scratch_count(s), SOA);
    pm_soa_transform scratch[SOA], pose[SOA];
    pm_test_blend_poses one = {SOA, scratch, pose, NULL};
    pm_blend_space_job job = pm_test_blend_job(s, pts[0], 0.25f, &one);
    job.scratch_count = SOA;
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    pm_quat rot[JOINTS];
    pm_vec3 tr[JOINTS];
    PM_ASSERT_OK(pm_clip_sample(rot, tr, &fx.clips[0], 0.25f * pm_clip_duration(&fx.clips[0]), NULL));
    pm_quat got_rot[JOINTS];
    pm_vec3 got_tr[JOINTS];
    PM_ASSERT_OK(pm_pose_to_aos(got_rot, got_tr, JOINTS, pose, NULL));
    for (int j = 1; j < JOINTS; j++) { /* (the root is placed by the alignment and root motion) */
        assert_true(pm_test_quat_same(got_rot[j], rot[j], 1e-5f));
        pm_test_assert_vec3_near(got_tr[j], tr[j], 1e-5f);
    }
    float other[2] = {0.6f, 0.5f};
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, other, NULL));
    assert_true(w.outside);
    assert_true(w.params[0] == 0.5f && w.params[1] == 0.5f);
    /* So of a 5 x 5 grid over the axes [-1, 2] only the point on the sample is inside. */
    pm_blend_grid_def g = pm_default_blend_grid_def();
    int n = 0;
    float out[50];
    PM_ASSERT_OK(pm_blend_space_grid(out, 25, &n, s, &g, NULL));
    assert_int_equal(n, 1);
    assert_true(out[0] == 0.5f && out[1] == 0.5f);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

/* ---- bad inputs ---- */

/* Samples closer than the snapped grid's step (range / 2^24) are told apart from duplicates. */
static void test_resolution_message(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 2);
    static const float pts[2][2] = {{0, 0}, {1, 0}};
    pm_blend_sample_def samples[2];
    pm_test_blend_samples(samples, &fx, pts, 2);
    pm_blend_space_def def = pm_test_blend_def(samples, 2, 2);
    def.axis_min[0] = def.axis_min[1] = 0.0f;
    def.axis_max[0] = def.axis_max[1] = 1e30f;
    pm_blend_space *s;
    pm_error e;
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_INVALID_ARGUMENT);
    if (!strstr(e.message, "closer than the space's resolution") || !strstr(e.message, "5.96046e+22") ||
        strstr(e.message, "same coordinates"))
        fail_msg("%s", e.message);
    samples[1].params[0] = 0.0f;
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "same coordinates"));
    /* Names go into messages, asset names and BVH files: no control characters. */
    samples[1].params[0] = 1.0f;
    def.axis_max[0] = def.axis_max[1] = 1.0f;
    def.name = "x\001";
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "blend space name has a control character (byte 0x01 at offset 1)"));
    def.name = NULL;
    def.axis_names[1] = "tu\nrn";
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "blend space axis 1: axis name has a control character"));
    def.axis_names[1] = NULL;
    samples[0].name = "w\033";
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "blend space sample 0: sample name has a control character"));
    pm_test_blend_fixture_free(&fx);
}

/* The inspection functions say what is wrong: NULL arguments, a sample or axis outside the
 * space's; nothing is written on failure. Those returning a value give NULL or 0 instead. */
static void test_inspection_errors(void **state) {
    (void)state;
    fixture fx;
    pm_blend_space *s = pm_test_blend_triangle_space(&fx, JOINTS);
    pm_error e;
    float params[2] = {-7.0f, -7.0f};
    assert_int_equal(pm_blend_space_sample_params(params, s, 3, &e), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.message, "pm_blend_space_sample_params: sample 3 is outside 0..2 (blend space 'test')");
    assert_int_equal(pm_blend_space_sample_params(params, s, -1, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "sample -1 is outside 0..2"));
    assert_true(params[0] == -7.0f && params[1] == -7.0f);
    assert_int_equal(pm_blend_space_sample_params(NULL, s, 0, &e), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.message, "pm_blend_space_sample_params: out_params is NULL");
    assert_int_equal(pm_blend_space_sample_params(params, NULL, 0, &e), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.message, "pm_blend_space_sample_params: space is NULL");
    assert_int_equal(pm_blend_space_sample_params(params, s, 5, NULL), PM_ERR_INVALID_ARGUMENT);
    PM_ASSERT_OK(pm_blend_space_sample_params(params, s, 1, &e));
    assert_true(params[0] == 1.0f && params[1] == 0.0f);

    float lo = -7.0f, hi = -7.0f;
    assert_int_equal(pm_blend_space_axis_range(&lo, &hi, s, 2, &e), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.message, "pm_blend_space_axis_range: axis 2 is outside 0..1 (blend space 'test')");
    assert_int_equal(pm_blend_space_axis_range(&lo, &hi, s, -1, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "axis -1 is outside 0..1"));
    assert_int_equal(pm_blend_space_axis_range(&lo, &hi, NULL, 0, &e), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.message, "pm_blend_space_axis_range: space is NULL");
    assert_int_equal(pm_blend_space_axis_range(NULL, NULL, s, 0, &e), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.message, "pm_blend_space_axis_range: out_min and out_max are both NULL");
    assert_true(lo == -7.0f && hi == -7.0f);
    /* Either output alone is fine. */
    PM_ASSERT_OK(pm_blend_space_axis_range(&lo, NULL, s, 0, &e));
    assert_true(lo == -1.0f && hi == -7.0f);
    PM_ASSERT_OK(pm_blend_space_axis_range(NULL, &hi, s, 1, &e));
    assert_true(hi == 2.0f);
    /* The value-returning ones: NULL or 0 outside the space, nothing written. */
    assert_null(pm_blend_space_sample_name(s, 3));
    assert_null(pm_blend_space_sample_name(s, -1));
    assert_null(pm_blend_space_sample_animation(s, 3));
    assert_null(pm_blend_space_axis_name(s, 2));
    assert_null(pm_blend_space_axis_name(s, -1));
    assert_null(pm_blend_space_axis_name(s, 1000));
    assert_null(pm_blend_space_axis_name(NULL, 0));
    assert_null(pm_blend_space_name(NULL));
    assert_null(pm_blend_space_skeleton(NULL));
    assert_int_equal(pm_blend_space_sample_count(NULL), 0);
    int cell[4] = {-7, -7, -7, -7};
    assert_int_equal(pm_blend_space_cell(s, pm_blend_space_cell_count(s), cell), 0);
    assert_int_equal(pm_blend_space_cell(s, -1, cell), 0);
    assert_int_equal(cell[0], -7);
    assert_int_equal(pm_blend_space_sample_cycles(s, 3), 0);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

/* Each def field out of its range is named with its value: the sample count, the four option
 * enums, a sample clip that fails validation, the axis ranges. */
static void expect_space_error(const pm_blend_space_def *def, pm_result code, const char *words) {
    pm_blend_space *s = (pm_blend_space *)&s;
    pm_error e;
    memset(&e, 0, sizeof e);
    pm_result r = pm_blend_space_create(&s, def, &e);
    if (r != code) fail_msg("expected %s for '%s', got %s (%s)", pm_result_string(code), words, pm_result_string(r), e.message);
    if (!strstr(e.message, words)) fail_msg("'%s' does not say '%s'", e.message, words);
    assert_null(s);
}

static void test_def_errors(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 3);
    static const float pts[3][2] = {{0, 0}, {1, 0}, {2, 1}};
    pm_blend_sample_def samples[3];
    pm_test_blend_samples(samples, &fx, pts, 3);
    pm_blend_space_def def = pm_test_blend_def(samples, 3, 2);
    def.name = "walk";
    pm_blend_space *s = NULL;
    PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
    pm_blend_space_destroy(s);

    /* More samples than the limit: refused before any is read. */
    pm_blend_space_def d = def;
    pm_blend_sample_def *many = calloc(PM_BLEND_SPACE_MAX_SAMPLES + 1, sizeof *many);
    d.samples = many;
    d.sample_count = PM_BLEND_SPACE_MAX_SAMPLES + 1;
    expect_space_error(&d, PM_ERR_LIMIT, "blend space 'walk': 4097 samples exceeds the limit of 4096");
    free(many);
    /* ... not even their names: a count over the limit is garbage that may overstate the array
     * (the sample names were checked first, reading past a short one). */
    d.samples = samples;
    d.sample_count = INT_MAX;
    expect_space_error(&d, PM_ERR_LIMIT, "blend space 'walk': 2147483647 samples exceeds the limit of 4096");
    d = def;
    d.sync = (pm_blend_sync)3;
    expect_space_error(&d, PM_ERR_INVALID_ARGUMENT, "blend space 'walk': sync 3 is outside 0..2");
    d = def;
    d.align = (pm_blend_align)-1;
    expect_space_error(&d, PM_ERR_INVALID_ARGUMENT, "blend space 'walk': align -1 is outside 0..2");
    d = def;
    d.collinear = (pm_blend_collinear)2;
    expect_space_error(&d, PM_ERR_INVALID_ARGUMENT, "blend space 'walk': collinear 2 is outside 0..1");
    d = def;
    d.coplanar = (pm_blend_coplanar)7;
    expect_space_error(&d, PM_ERR_INVALID_ARGUMENT, "blend space 'walk': coplanar 7 is outside 0..1");
    /* A sample clip that is no valid clip is named by sample, then by what is wrong with it. */
    d = def;
    PM_ASSERT_OK(pm_clip_set_name(&fx.clips[1], "swing1", NULL));
    fx.clips[1].frame_time = 0.0f;
    expect_space_error(&d, PM_ERR_INVALID_ARGUMENT, "blend space 'walk' sample 1: clip 'swing1': frame time 0 must be positive");
    fx.clips[1].frame_time = 1.0f / 30.0f;
    /* Axis ranges: finite, and not reversed (min == max takes the samples' extent). */
    d = def;
    d.axis_min[1] = NAN;
    d.axis_max[1] = 1.0f;
    expect_space_error(&d, PM_ERR_NUMERIC, "blend space 'walk': axis 1 range [nan, 1] is not finite");
    d.axis_min[1] = 0.0f;
    d.axis_max[1] = INFINITY;
    expect_space_error(&d, PM_ERR_NUMERIC, "axis 1 range [0, inf] is not finite");
    d = def;
    d.axis_min[0] = 2.0f;
    d.axis_max[0] = 1.0f;
    expect_space_error(&d, PM_ERR_INVALID_ARGUMENT, "blend space 'walk': axis 0 range [2, 1] is reversed");
    pm_test_blend_fixture_free(&fx);
}

/* Without a range an axis spans the samples, widened by half a unit when they share the
 * coordinate - or by more where half a unit would vanish in a huge coordinate (the axis had no
 * width, and every snapped query was NaN converted to an integer). */
static void test_shared_huge_coordinate(void **state) {
    (void)state;
    fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 2);
    static const float pts[2][2] = {{0, 7.7e37f}, {1, 7.7e37f}};
    pm_blend_sample_def samples[2];
    pm_test_blend_samples(samples, &fx, pts, 2);
    pm_blend_space_def def = pm_test_blend_def(samples, 2, 2);
    for (int n = 1; n <= 2; n++) {
        def.sample_count = n;
        pm_blend_space *s;
        PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
        float lo, hi;
        PM_ASSERT_OK(pm_blend_space_axis_range(&lo, &hi, s, 1, NULL));
        assert_true(lo < 7.7e37f && hi > 7.7e37f);
        PM_ASSERT_OK(pm_blend_space_axis_range(&lo, &hi, s, 0, NULL));
        assert_true(n == 1 ? lo == -0.5f && hi == 0.5f : lo == 0.0f && hi == 1.0f); /* ordinary ones as before */
        pm_blend_space_weights w;
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, samples[n - 1].params, NULL));
        assert_true(!w.outside && w.count == 1 && w.weights[0] == 1.0f);
        float below[2] = {0.0f, 0.0f}; /* far outside: projected onto the samples */
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, below, NULL));
        assert_true(w.outside && w.params[1] == 7.7e37f);
        pm_test_check_weights(s, &w);
        pm_blend_space_destroy(s);
    }
    pm_test_blend_fixture_free(&fx);
}

/* A skeleton of the hips alone (the last joint is the one that moves): aligning by position
 * puts frame 0's hips above the origin and keeps their height, whichever way the clip starts. */
static void test_align_a_lone_hips(void **state) {
    (void)state;
    pm_skeleton sk;
    PM_ASSERT_OK(pm_skeleton_create(&sk, 1, NULL, NULL));
    PM_ASSERT_OK(pm_skeleton_set_name(&sk, 0, "Hips", NULL));
    pm_clip c;
    PM_ASSERT_OK(pm_clip_create(&c, &sk, 10, 1.0f / 30.0f, NULL, NULL));
    for (int f = 0; f < 10; f++) c.translations[f] = pm_vec3_make(5.0f, 0.9f, -3.0f + 0.1f * (float)f);
    pm_blend_sample_def sample = pm_default_blend_sample_def();
    sample.clip = &c;
    pm_blend_space_def def = pm_default_blend_space_def();
    def.dimensions = 1;
    def.samples = &sample;
    def.sample_count = 1;
    def.align = PM_BLEND_ALIGN_POSITION;
    pm_blend_space *s = NULL;
    PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
    pm_soa_transform *pose = pm_pose_alloc(1, NULL);
    pm_sampling_job job = pm_default_sampling_job();
    job.animation = pm_blend_space_sample_animation(s, 0);
    job.output = pose;
    job.output_count = 1;
    PM_ASSERT_OK(pm_sampling_job_run(&job, NULL));
    pm_vec3 hips = pm_pose_translation(pose, 0);
    assert_float_equal(hips.x, 0.0f, 1e-6);
    assert_float_equal(hips.y, 0.9f, 1e-6);
    assert_float_equal(hips.z, 0.0f, 1e-6);
    pm_pose_free(pose, NULL);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&sk);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_align_a_lone_hips),
        cmocka_unit_test(test_weights_properties),
        cmocka_unit_test(test_weights_continuity),
        cmocka_unit_test(test_exact_at_samples),
        cmocka_unit_test(test_order_independence),
        cmocka_unit_test(test_edges_and_outside),
        cmocka_unit_test(test_one_dimension_and_collinear),
        cmocka_unit_test(test_many_samples_location),
        cmocka_unit_test(test_single_sample_outside),
        cmocka_unit_test(test_resolution_message),
        cmocka_unit_test(test_inspection_errors),
        cmocka_unit_test(test_def_errors),
        cmocka_unit_test(test_shared_huge_coordinate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
