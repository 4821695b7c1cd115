/* 3D blend spaces: weights (properties, shared faces and edges, order independence, location
 * against brute force, hull projection), degenerate inputs, job, grid, bake and JSON. The exact
 * predicates and the tetrahedralisation are tested in test_blend_space_delaunay3.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blend_space_internal.h"
#include "blend_space_json.h"
#include "blend_support.h"

#define JOINTS 4
#define M PM_DT_COORD_MAX

/* A looping clip whose joints carry `id` so that blends can be told apart. */
static void make_clip(pm_clip *clip, const pm_skeleton *sk, int frames, float id) {
    PM_ASSERT_OK(pm_clip_create(clip, sk, frames, 1.0f / 30.0f, NULL, NULL));
    clip->looping = 1;
    for (int f = 0; f < frames; f++) {
        float phase = (float)f / (float)frames;
        for (int j = 0; j < JOINTS; j++) {
            pm_quat q = pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), 0.02f * id * (float)j + 0.5f * sinf(6.2831853f * phase));
            clip->rotations[f * JOINTS + j] = q;
            clip->translations[f * JOINTS + j] = j == 0 ? pm_vec3_make(id, 1.0f, 2.0f * phase) : sk->rest_translations[j];
        }
    }
}

typedef pm_test_blend_fixture fixture;

static void fixture_init(fixture *fx, int count) {
    memset(fx, 0, sizeof *fx);
    pm_test_blend_skeleton(&fx->sk, JOINTS);
    fx->count = count;
    for (int i = 0; i < count; i++) make_clip(&fx->clips[i], &fx->sk, 12 + i, (float)i);
}

/* A 3D space over clips[order[i]] at points[order[i]], axes [lo, hi]; samples named "s<k>". With
 * lo = 0 and hi = 2^24, integer coordinates snap to themselves. */
/* The unit cube's corners, corner i at (i & 1, i >> 1 & 1, i >> 2 & 1). */
static const float cube[8][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}};

static pm_result make_space(pm_blend_space **out, fixture *fx, const float (*points)[3], const int *order, int n, float lo,
                            float hi, pm_blend_coplanar coplanar, pm_error *e) {
    static pm_blend_sample_def samples[PM_BLEND_SPACE_MAX_SAMPLES];
    static char names[PM_BLEND_SPACE_MAX_SAMPLES][16];
    for (int i = 0; i < n; i++) {
        int k = order ? order[i] : i;
        samples[i] = pm_default_blend_sample_def();
        samples[i].clip = &fx->clips[k % fx->count];
        snprintf(names[i], sizeof names[i], "s%d", k);
        samples[i].name = names[i];
        for (int d = 0; d < 3; d++) samples[i].params[d] = points[k][d];
    }
    pm_blend_space_def def = pm_test_blend_def(samples, n, 3);
    def.name = "test";
    def.coplanar = coplanar;
    for (int d = 0; d < 3; d++) {
        def.axis_min[d] = lo;
        def.axis_max[d] = hi;
    }
    return pm_blend_space_create(out, &def, e);
}

static float randf(pm_test_rng *rng, float lo, float hi) { return lo + (hi - lo) * pm_test_rng_float(rng); }

/* ---- weights ---- */

static double seg_distance(const float *a, const float *b, const float *p) {
    double ab[3], ap[3], l2 = 0.0, t = 0.0, d2 = 0.0;
    for (int d = 0; d < 3; d++) {
        ab[d] = (double)b[d] - a[d];
        ap[d] = (double)p[d] - a[d];
        l2 += ab[d] * ab[d];
        t += ab[d] * ap[d];
    }
    t = fmin(fmax(t / l2, 0.0), 1.0);
    for (int d = 0; d < 3; d++) d2 += (ap[d] - t * ab[d]) * (ap[d] - t * ab[d]);
    return sqrt(d2);
}

/* Distance from p to triangle abc: to its plane when the projection falls inside, else to the
 * nearest edge. */
static double triangle_distance(const float *a, const float *b, const float *c, const float *p) {
    double e0[3], e1[3], ap[3], n[3], nn = 0.0, h = 0.0, l[3];
    for (int d = 0; d < 3; d++) {
        e0[d] = (double)b[d] - a[d];
        e1[d] = (double)c[d] - a[d];
        ap[d] = (double)p[d] - a[d];
    }
    for (int d = 0; d < 3; d++) n[d] = e0[(d + 1) % 3] * e1[(d + 2) % 3] - e0[(d + 2) % 3] * e1[(d + 1) % 3];
    for (int d = 0; d < 3; d++) {
        nn += n[d] * n[d];
        h += n[d] * ap[d];
    }
    const float *v[3] = {a, b, c};
    for (int i = 0; i < 3; i++) { /* barycentric of the projection: ((v2 - v1) x (p - v1)) . n / |n|^2 */
        const float *v1 = v[(i + 1) % 3], *v2 = v[(i + 2) % 3];
        double u[3], w[3];
        for (int d = 0; d < 3; d++) {
            u[d] = (double)v2[d] - v1[d];
            w[d] = (double)p[d] - v1[d];
        }
        l[i] = 0.0;
        for (int d = 0; d < 3; d++) l[i] += (u[(d + 1) % 3] * w[(d + 2) % 3] - u[(d + 2) % 3] * w[(d + 1) % 3]) * n[d];
    }
    if (l[0] >= 0.0 && l[1] >= 0.0 && l[2] >= 0.0) return fabs(h) / sqrt(nn);
    return fmin(seg_distance(a, b, p), fmin(seg_distance(b, c, p), seg_distance(c, a, p)));
}

/* Random samples in a cube, then samples near a sphere (hundreds of hull faces, so that the
 * projection's face hierarchy is searched in depth). */
static void test_weights_properties(void **state) {
    (void)state;
    fixture fx;
    fixture_init(&fx, 1);
    pm_test_rng rng = {9};
    static float pts[300][3];
    for (int set = 0; set < 2; set++) {
        int n = set == 0 ? 40 : 300;
        for (int i = 0; i < n; i++) {
            if (set == 0)
                for (int d = 0; d < 3; d++) pts[i][d] = randf(&rng, -0.5f, 1.5f);
            else {
                float th = randf(&rng, 0.0f, 6.2831853f), u = randf(&rng, -1.0f, 1.0f), r = sqrtf(1.0f - u * u);
                pts[i][0] = 0.5f + r * cosf(th);
                pts[i][1] = 0.5f + r * sinf(th);
                pts[i][2] = 0.5f + u;
            }
        }
        pm_blend_space *s;
        PM_ASSERT_OK(make_space(&s, &fx, pts, NULL, n, -1.0f, 2.0f, PM_BLEND_COPLANAR_PLANE, NULL));
        assert_int_equal(pm_blend_space_max_weights(s), 4);
        const pm_tetrahedralization *t = &s->tet;
        for (int q = 0; q < 1000; q++) {
            float p[3], c[3];
            for (int d = 0; d < 3; d++) {
                p[d] = randf(&rng, -1.3f, 2.3f);
                c[d] = fminf(fmaxf(p[d], -1.0f), 2.0f);
            }
            pm_blend_space_weights w;
            PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, p, NULL));
            pm_test_check_weights(s, &w);
            if (!w.outside) {
                assert_int_equal(w.cell_kind, PM_BLEND_CELL_TETRAHEDRON);
                for (int d = 0; d < 3; d++) assert_true(fabsf(w.params[d] - p[d]) < 1e-5f);
                continue;
            }
            /* Outside: the used point is the nearest point of the hull surface (brute force over
             * every hull triangle) and no farther than any sample. */
            assert_int_equal(w.cell_kind, PM_BLEND_CELL_HULL_FACE);
            double du = sqrt(pow(w.params[0] - c[0], 2) + pow(w.params[1] - c[1], 2) + pow(w.params[2] - c[2], 2));
            double best = INFINITY;
            for (int h = 0; h < t->hull_count; h++) {
                int k = t->hull[2 * h], i = t->hull[2 * h + 1];
                const float *v[3];
                for (int m = 0, j = 0; m < 4; m++)
                    if (m != i) v[j++] = pts[atoi(s->names[s->order[t->vertices[4 * k + m]]] + 1)];
                best = fmin(best, triangle_distance(v[0], v[1], v[2], c));
            }
            assert_true(fabs(du - best) < 1e-5);
            for (int i = 0; i < n; i++)
                assert_true(du <= sqrt(pow(pts[i][0] - c[0], 2) + pow(pts[i][1] - c[1], 2) + pow(pts[i][2] - c[2], 2)) + 1e-5);
        }
        if (set == 1) assert_true(t->hull_count > 200);
        pm_blend_space_destroy(s);
    }
    pm_test_blend_fixture_free(&fx);
}

/* Points exactly on a face or edge get the same weights, bit for bit, from every tetrahedron that
 * shares it: on random samples and on a co-spherical lattice, whose tetrahedralisation is one of
 * many equivalent ones. Coordinates are multiples of 6 on the exact grid, so face centroids and
 * edge midpoints are grid points. */
static void check_shared_boundaries(const pm_blend_space *s) {
    const pm_tetrahedralization *t = &s->tet;
    const pm_dt3_point *p = s->points;
    int faces = 0, edges = 0;
    for (int k = 0; k < t->tet_count; k++) {
        const int32_t *v = t->vertices + 4 * k;
        for (int f = 0; f < 4; f++) {
            int u = t->neighbors[4 * k + f];
            pm_dt3_point q = {0, 0, 0};
            for (int i = 0; i < 4; i++)
                if (i != f) q = (pm_dt3_point){q.x + p[v[i]].x, q.y + p[v[i]].y, q.z + p[v[i]].z};
            q = (pm_dt3_point){q.x / 3, q.y / 3, q.z / 3};
            pm_blend_raw_weights a, b;
            assert_true(pm_blend_space_tet_weights(s, k, q, &a));
            if (u >= 0) {
                assert_true(pm_blend_space_tet_weights(s, u, q, &b));
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++)
                        if (a.rank[i] == b.rank[j]) assert_memory_equal(&a.w[i], &b.w[j], sizeof(double));
                faces++;
            }
            for (int i = 0; i < 4; i++)
                if (a.rank[i] == v[f]) assert_true(a.w[i] == 0.0);
        }
        for (int e0 = 0; e0 < 4; e0++)
            for (int e1 = e0 + 1; e1 < 4; e1++) {
                pm_dt3_point q = {(p[v[e0]].x + p[v[e1]].x) / 2, (p[v[e0]].y + p[v[e1]].y) / 2, (p[v[e0]].z + p[v[e1]].z) / 2};
                pm_blend_raw_weights a, b;
                assert_true(pm_blend_space_tet_weights(s, k, q, &a));
                for (int o = 0; o < t->tet_count; o++) {
                    if (o == k || !pm_blend_space_tet_weights(s, o, q, &b)) continue;
                    for (int i = 0; i < 4; i++)
                        for (int j = 0; j < 4; j++)
                            if (a.rank[i] == b.rank[j]) assert_memory_equal(&a.w[i], &b.w[j], sizeof(double));
                    edges++;
                }
                for (int i = 0; i < 4; i++)
                    if (a.rank[i] == v[e0] || a.rank[i] == v[e1]) assert_true(a.w[i] == 0.5);
            }
    }
    assert_true(faces > 0 && edges > 0);
}

static void test_shared_faces_and_edges(void **state) {
    (void)state;
    fixture fx;
    fixture_init(&fx, 64);
    pm_test_rng rng = {55};
    float pts[64][3];
    for (int i = 0; i < 30; i++)
        for (int d = 0; d < 3; d++) pts[i][d] = 6.0f * (float)(pm_test_rng_u32(&rng) % 2000000u);
    pm_blend_space *s;
    pm_error e;
    pm_result r = make_space(&s, &fx, pts, NULL, 30, 0.0f, (float)M, PM_BLEND_COPLANAR_PLANE, &e);
    if (r != PM_OK) fail_msg("%s", e.message);
    check_shared_boundaries(s);
    pm_blend_space_destroy(s);
    for (int i = 0; i < 64; i++) { /* a 4x4x4 lattice: every cube's 8 corners co-spherical */
        pts[i][0] = 600000.0f * (float)(i % 4);
        pts[i][1] = 600000.0f * (float)(i / 4 % 4);
        pts[i][2] = 600000.0f * (float)(i / 16);
    }
    PM_ASSERT_OK(make_space(&s, &fx, pts, NULL, 64, 0.0f, (float)M, PM_BLEND_COPLANAR_PLANE, NULL));
    assert_int_equal(pm_blend_space_cell_count(s) > 0, 1);
    check_shared_boundaries(s);
    /* Continuity across the lattice's faces and at its cube centres, through the public API. */
    for (int q = 0; q < 300; q++) {
        float c[3], a[3], b[3];
        for (int d = 0; d < 3; d++) c[d] = 600000.0f * (float)(pm_test_rng_u32(&rng) % 7) * 0.5f;
        int axis = q % 3;
        memcpy(a, c, sizeof c);
        memcpy(b, c, sizeof c);
        a[axis] -= 1.0f;
        b[axis] += 1.0f;
        pm_test_assert_weights_near(s, 64, c, a, b, 1e-4f);
    }
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

static void test_order_independence(void **state) {
    (void)state;
    fixture fx;
    fixture_init(&fx, 27);
    float lattice[27][3], rnd[14][3];
    for (int i = 0; i < 27; i++) {
        lattice[i][0] = 0.5f * (float)(i % 3);
        lattice[i][1] = 0.5f * (float)(i / 3 % 3);
        lattice[i][2] = 0.5f * (float)(i / 9);
    }
    pm_test_rng rng = {31};
    for (int i = 0; i < 14; i++)
        for (int d = 0; d < 3; d++) rnd[i][d] = pm_test_rng_float(&rng);
    const float(*sets[3])[3] = {cube, lattice, rnd};
    int sizes[3] = {8, 27, 14};
    pm_test_blend_poses poses;
    pm_test_blend_poses_alloc(&poses, JOINTS);
    for (int set = 0; set < 3; set++) {
        int n = sizes[set];
        pm_blend_space *ref;
        PM_ASSERT_OK(make_space(&ref, &fx, sets[set], NULL, n, -1.0f, 2.0f, PM_BLEND_COPLANAR_PLANE, NULL));
        for (int perm = 0; perm < 6; perm++) {
            int shuffled[27];
            for (int i = 0; i < n; i++) shuffled[i] = i;
            for (int i = n - 1; i > 0; i--) {
                int k = (int)(pm_test_rng_u32(&rng) % (uint32_t)(i + 1)), tmp = shuffled[i];
                shuffled[i] = shuffled[k];
                shuffled[k] = tmp;
            }
            pm_blend_space *s;
            PM_ASSERT_OK(make_space(&s, &fx, sets[set], shuffled, n, -1.0f, 2.0f, PM_BLEND_COPLANAR_PLANE, NULL));
            /* Midpoints of sample pairs, centroids of triples (faces, diagonals), random points. */
            for (int q = 0; q < 60; q++) {
                float p[3];
                int a = q % n, b = (q * 7 + 3) % n, c = (q * 5 + 1) % n;
                for (int d = 0; d < 3; d++) {
                    if (q < 20) p[d] = 0.5f * (sets[set][a][d] + sets[set][b][d]);
                    else if (q < 40) p[d] = (sets[set][a][d] + sets[set][b][d] + sets[set][c][d]) / 3.0f;
                    else p[d] = randf(&rng, -0.3f, 1.3f);
                }
                pm_test_same_blend(ref, s, p, n, &poses);
            }
            pm_blend_space_destroy(s);
        }
        pm_blend_space_destroy(ref);
    }
    pm_test_blend_poses_free(&poses);
    pm_test_blend_fixture_free(&fx);
}

static void test_location_brute_force(void **state) {
    (void)state;
    fixture fx;
    fixture_init(&fx, 1);
    enum { N = 300 };
    static float pts[N][3];
    pm_test_rng rng = {4242};
    for (int i = 0; i < N; i++)
        for (int d = 0; d < 3; d++) pts[i][d] = (float)(pm_test_rng_u32(&rng) % 100000u) / 1000.0f;
    pm_blend_space *s;
    PM_ASSERT_OK(make_space(&s, &fx, pts, NULL, N, 0.0f, 100.0f, PM_BLEND_COPLANAR_PLANE, NULL));
    int cells = pm_blend_space_cell_count(s);
    assert_true(cells > N);
    for (int q = 0; q < 600; q++) {
        float p[3];
        for (int d = 0; d < 3; d++) p[d] = randf(&rng, 0.0f, 100.0f);
        pm_blend_space_weights w;
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, p, NULL));
        pm_test_check_weights(s, &w);
        int inside = 0;
        for (int c = 0; c < cells && !inside; c++) {
            int v[4];
            assert_int_equal(pm_blend_space_cell(s, c, v), 4);
            double m[3][3], r[3], l[4];
            for (int d = 0; d < 3; d++) {
                for (int k = 0; k < 3; k++) m[d][k] = (double)pts[v[k + 1]][d] - pts[v[0]][d];
                r[d] = (double)p[d] - pts[v[0]][d];
            }
            double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
            for (int k = 0; k < 3; k++) { /* Cramer's rule */
                double mk[3][3];
                memcpy(mk, m, sizeof m);
                for (int d = 0; d < 3; d++) mk[d][k] = r[d];
                l[k + 1] = (mk[0][0] * (mk[1][1] * mk[2][2] - mk[1][2] * mk[2][1]) -
                            mk[0][1] * (mk[1][0] * mk[2][2] - mk[1][2] * mk[2][0]) +
                            mk[0][2] * (mk[1][0] * mk[2][1] - mk[1][1] * mk[2][0])) / det;
            }
            l[0] = 1.0 - l[1] - l[2] - l[3];
            if (l[0] > 1e-4 && l[1] > 1e-4 && l[2] > 1e-4 && l[3] > 1e-4) {
                inside = 1;
                assert_int_equal(w.cell, c);
                for (int k = 0; k < 4; k++) {
                    float got = 0.0f;
                    for (int i = 0; i < w.count; i++)
                        if (w.samples[i] == v[k]) got = w.weights[i];
                    assert_true(fabs(got - l[k]) < 1e-4);
                }
            }
        }
        if (inside) assert_false(w.outside);
    }
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

static void expect_point(const pm_blend_space *s, const float *q, const float *expect, pm_blend_cell_kind kind, int count) {
    pm_blend_space_weights w;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, q, NULL));
    pm_test_check_weights(s, &w);
    assert_int_equal(w.cell_kind, kind);
    assert_int_equal(w.count, count);
    for (int d = 0; d < 3; d++)
        if (fabsf(w.params[d] - expect[d]) > 1e-5f)
            fail_msg("(%g %g %g) used (%g %g %g), expected (%g %g %g)", q[0], q[1], q[2], w.params[0], w.params[1], w.params[2],
                     expect[0], expect[1], expect[2]);
}

static void test_hull_projection(void **state) {
    (void)state;
    fixture fx;
    fixture_init(&fx, 8);
    pm_blend_space *s;
    PM_ASSERT_OK(make_space(&s, &fx, cube, NULL, 8, -1.0f, 2.0f, PM_BLEND_COPLANAR_PLANE, NULL));
    /* Beyond a face, an edge, a corner; beyond the axis range (clamped first). */
    expect_point(s, (float[]){1.5f, 0.25f, 0.6f}, (float[]){1.0f, 0.25f, 0.6f}, PM_BLEND_CELL_HULL_FACE, 3);
    expect_point(s, (float[]){1.5f, 1.5f, 0.25f}, (float[]){1.0f, 1.0f, 0.25f}, PM_BLEND_CELL_HULL_FACE, 2);
    expect_point(s, (float[]){1.6f, 1.7f, -0.8f}, (float[]){1.0f, 1.0f, 0.0f}, PM_BLEND_CELL_HULL_FACE, 1);
    expect_point(s, (float[]){100.0f, 0.5f, 0.5f}, (float[]){1.0f, 0.5f, 0.5f}, PM_BLEND_CELL_HULL_FACE, 2);
    /* On the hull: inside, not outside. */
    pm_blend_space_weights w;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, (float[]){1.0f, 0.25f, 0.25f}, NULL));
    assert_false(w.outside);
    assert_int_equal(w.cell_kind, PM_BLEND_CELL_TETRAHEDRON);
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, (float[]){1.5f, 0.25f, 0.6f}, NULL));
    assert_true(w.outside);
    assert_int_equal(w.cell_sample_count, 3);
    pm_blend_space_destroy(s);
    /* A slanted hull face: x + y + z = 1. */
    float tet[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    PM_ASSERT_OK(make_space(&s, &fx, tet, NULL, 4, -1.0f, 2.0f, PM_BLEND_COPLANAR_PLANE, NULL));
    assert_int_equal(pm_blend_space_cell_count(s), 1);
    float third = 1.0f / 3.0f;
    expect_point(s, (float[]){1, 1, 1}, (float[]){third, third, third}, PM_BLEND_CELL_HULL_FACE, 3);
    expect_point(s, (float[]){-0.5f, 0.2f, 0.3f}, (float[]){0.0f, 0.2f, 0.3f}, PM_BLEND_CELL_HULL_FACE, 3);
    expect_point(s, (float[]){0.25f, 0.25f, 0.25f}, (float[]){0.25f, 0.25f, 0.25f}, PM_BLEND_CELL_TETRAHEDRON, 4);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

/* ---- degenerate inputs ---- */

static void test_degenerate(void **state) {
    (void)state;
    fixture fx;
    fixture_init(&fx, 40);
    pm_blend_space *s;
    pm_error e;
    /* Coplanar samples on the steep plane z = 2x (exact on the grid): a 2D space in the plane,
     * triangulated Delaunay in the plane itself rather than in a projection. */
    float plane[40][3];
    pm_test_rng rng = {66};
    for (int i = 0; i < 40; i++) {
        float x = (float)(128u + pm_test_rng_u32(&rng) % 256u) / 1024.0f, y = (float)(pm_test_rng_u32(&rng) % 1024u) / 1024.0f;
        plane[i][0] = x;
        plane[i][1] = y;
        plane[i][2] = 2.0f * x;
    }
    PM_ASSERT_OK(make_space(&s, &fx, plane, NULL, 40, 0.0f, 1.0f, PM_BLEND_COPLANAR_PLANE, NULL));
    assert_true(pm_blend_space_is_coplanar(s));
    assert_false(pm_blend_space_is_collinear(s));
    assert_int_equal(pm_blend_space_max_weights(s), 3);
    for (int k = 0; k < s->tri.triangle_count; k++) {
        const int32_t *v = s->tri.vertices + 3 * k;
        for (int i = 0; i < 40; i++) assert_true(pm_dt3_incircle(s->points[v[0]], s->points[v[1]], s->points[v[2]], s->points[i]) <= 0);
    }
    pm_blend_space_weights w;
    int cell[4];
    assert_int_equal(pm_blend_space_cell(s, 0, cell), 3);
    /* (a + b + 2c) / 4: exactly on the plane and the grid, strictly inside the triangle. */
    float in[3];
    for (int d = 0; d < 3; d++) in[d] = (plane[cell[0]][d] + plane[cell[1]][d] + 2.0f * plane[cell[2]][d]) / 4.0f;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, in, NULL));
    assert_int_equal(w.cell_kind, PM_BLEND_CELL_TRIANGLE);
    assert_false(w.outside);
    assert_int_equal(w.count, 3);
    /* Off the plane: projected orthogonally onto it (normal (-2, 0, 1)), reported outside. */
    float off[3] = {in[0] - 0.002f, in[1], in[2] + 0.001f};
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, off, NULL));
    assert_true(w.outside);
    for (int d = 0; d < 3; d++) assert_true(fabsf(w.params[d] - in[d]) < 1e-5f);
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, (float[]){0.25f, 1.0f, 0.5f}, NULL)); /* beyond every sample's y */
    assert_true(w.outside && w.cell_kind == PM_BLEND_CELL_HULL_EDGE);
    pm_test_check_weights(s, &w);
    pm_blend_space_destroy(s);
    assert_int_equal(make_space(&s, &fx, plane, NULL, 40, 0.0f, 1.0f, PM_BLEND_COPLANAR_ERROR, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "one plane"));
    assert_null(s);
    /* Three samples make a plane, four non-coplanar ones a tetrahedron. */
    PM_ASSERT_OK(make_space(&s, &fx, plane, NULL, 3, 0.0f, 1.0f, PM_BLEND_COPLANAR_PLANE, NULL));
    assert_true(pm_blend_space_is_coplanar(s) && pm_blend_space_cell_count(s) == 1);
    pm_blend_space_destroy(s);
    float four[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0.2f, 0.2f, 1}};
    PM_ASSERT_OK(make_space(&s, &fx, four, NULL, 4, 0.0f, 1.0f, PM_BLEND_COPLANAR_ERROR, NULL));
    assert_int_equal(pm_blend_space_cell_count(s), 1);
    pm_blend_space_destroy(s);
    /* Collinear samples: a 1D space along the line; an error when either option asks for one. */
    float line[5][3];
    for (int i = 0; i < 5; i++) line[i][0] = line[i][1] = line[i][2] = 0.25f * (float)((i * 3) % 5);
    PM_ASSERT_OK(make_space(&s, &fx, line, NULL, 5, 0.0f, 1.0f, PM_BLEND_COPLANAR_PLANE, NULL));
    assert_true(pm_blend_space_is_collinear(s) && !pm_blend_space_is_coplanar(s));
    assert_int_equal(pm_blend_space_cell_count(s), 4);
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, (float[]){0.375f, 0.375f, 0.375f}, NULL));
    assert_int_equal(w.cell_kind, PM_BLEND_CELL_SEGMENT);
    assert_false(w.outside);
    assert_true(w.count == 2 && fabsf(w.weights[0] - 0.5f) < 1e-6f);
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, (float[]){0.5f, 0.25f, 0.375f}, NULL)); /* projects to 0.375 */
    assert_true(w.outside && fabsf(w.params[0] - 0.375f) < 1e-5f && fabsf(w.params[2] - 0.375f) < 1e-5f);
    pm_blend_space_destroy(s);
    assert_int_equal(make_space(&s, &fx, line, NULL, 5, 0.0f, 1.0f, PM_BLEND_COPLANAR_ERROR, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "one line"));
    /* Two samples are a line, one a point. */
    PM_ASSERT_OK(make_space(&s, &fx, line, NULL, 2, 0.0f, 1.0f, PM_BLEND_COPLANAR_PLANE, NULL));
    assert_int_equal(pm_blend_space_max_weights(s), 2);
    pm_blend_space_destroy(s);
    PM_ASSERT_OK(make_space(&s, &fx, line, NULL, 1, 0.0f, 1.0f, PM_BLEND_COPLANAR_PLANE, NULL));
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, (float[]){0.3f, 0.1f, 0.9f}, NULL));
    assert_true(w.count == 1 && w.cell_kind == PM_BLEND_CELL_POINT);
    pm_blend_space_destroy(s);
    /* Duplicates: both samples named, with their coordinates. */
    float dup[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 0}};
    assert_int_equal(make_space(&s, &fx, dup, NULL, 5, 0.0f, 1.0f, PM_BLEND_COPLANAR_PLANE, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "'s1' (1, 0, 0) and 's4' (1, 0, 0)"));
    assert_non_null(strstr(e.message, "same coordinates"));
    pm_test_blend_fixture_free(&fx);
}

/* ---- job, grid, bake ---- */

static void test_job_grid_bake(void **state) {
    (void)state;
    fixture fx;
    fixture_init(&fx, 8);
    pm_blend_space *s;
    PM_ASSERT_OK(make_space(&s, &fx, cube, NULL, 8, -1.0f, 2.0f, PM_BLEND_COPLANAR_PLANE, NULL));
    pm_test_blend_poses poses;
    pm_test_blend_poses_alloc(&poses, JOINTS);
    /* On a sample: that clip, bit for bit. */
    for (int i = 0; i < 8; i++) {
        pm_blend_space_job job = pm_test_blend_job(s, cube[i], 0.4f, &poses);
        pm_blend_space_weights w;
        job.out_weights = &w;
        PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
        assert_true(w.count == 1 && w.samples[0] == i && w.weights[0] == 1.0f);
        pm_test_assert_plays_sample(s, i, 0.4f, &poses);
        /* A 3D space needs scratch for four poses. */
        pm_error e;
        job.scratch_count = poses.soa * 3;
        assert_int_equal(pm_blend_space_job_run(&job, &e), PM_ERR_MISMATCH);
        assert_non_null(strstr(e.message, "scratch"));
    }
    /* Grid over the axes [-1, 2]: 4 points per axis, 8 inside the cube; axis 0 fastest. */
    pm_blend_grid_def g = pm_default_blend_grid_def();
    assert_int_equal(g.counts[2], 5);
    g.counts[0] = g.counts[1] = g.counts[2] = 4;
    int n = 0;
    float pts[64 * 3];
    PM_ASSERT_OK(pm_blend_space_grid(pts, 64, &n, s, &g, NULL));
    assert_int_equal(n, 8);
    for (int k = 0; k < 8; k++)
        for (int d = 0; d < 3; d++) assert_true(pts[3 * k + d] == (float)(k >> d & 1));
    g.counts[2] = 7;
    PM_ASSERT_OK(pm_blend_space_grid(NULL, 0, &n, s, &g, NULL));
    assert_int_equal(n, 2 * 2 * 3);
    g.include_outside = 1;
    PM_ASSERT_OK(pm_blend_space_grid(NULL, 0, &n, s, &g, NULL));
    assert_int_equal(n, 4 * 4 * 7);
    g.counts[2] = 0;
    assert_int_equal(pm_blend_space_grid(NULL, 0, &n, s, &g, NULL), PM_ERR_INVALID_ARGUMENT);
    /* Bake at the centre: the weight-averaged duration, named with all three coordinates. */
    float centre[3] = {0.5f, 0.5f, 0.5f};
    pm_blend_space_weights w;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, centre, NULL));
    pm_test_check_weights(s, &w);
    pm_clip baked;
    PM_ASSERT_OK(pm_blend_space_bake(&baked, s, centre, 30.0f, NULL));
    assert_string_equal(baked.name, "test@0.5,0.5,0.5");
    assert_true(fabsf(pm_clip_duration(&baked) - pm_blend_space_duration(s, &w)) < 1e-5f);
    PM_ASSERT_OK(pm_clip_validate(&baked, NULL));
    pm_clip_destroy(&baked);
    pm_test_blend_poses_free(&poses);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

/* ---- JSON ---- */

static void test_json(void **state) {
    (void)state;
    fixture fx;
    fixture_init(&fx, 3);
    pm_test_blend_write_clips(&fx, 3);
    pm_blend_space_file f;
    const char *good =
        "{\"name\": \"terrain\", \"axes\": [{\"name\": \"speed\", \"min\": 0, \"max\": 2}, {\"name\": \"turn\"},"
        " {\"name\": \"slope\", \"min\": -1, \"max\": 1}], \"align\": \"none\", \"coplanar\": \"error\", \"grid\": [3, 3, 3],"
        " \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0, 0]}, {\"clip\": \"clip1.bvh\", \"params\": [2, 0, 0]},"
        "  {\"clip\": \"clip2.bvh\", \"params\": [0, 1, 0]}, {\"name\": \"up\", \"clip\": \"clip0.bvh\", \"params\": [0, 0, 1]}]}";
    pm_test_blend_load_json_ok(&f, good);
    assert_int_equal(pm_blend_space_dimensions(f.space), 3);
    assert_string_equal(pm_blend_space_axis_name(f.space, 2), "slope");
    assert_string_equal(pm_blend_space_sample_name(f.space, 3), "up");
    assert_int_equal(pm_blend_space_cell_count(f.space), 1);
    assert_true(f.grid.counts[0] == 3 && f.grid.counts[2] == 3);
    pm_clip *clips;
    float *params;
    int count;
    PM_ASSERT_OK(pm_blend_space_file_bake_grid(&clips, &count, &params, 0, &f, 0.0f, NULL));
    /* Grid points in the tetrahedron x/2 + y + z <= 1 (y over [0, 1], z over [-1, 1]). */
    assert_int_equal(count, 7);
    assert_true(params[0] == 0.0f && params[1] == 0.0f && params[2] == 0.0f);
    pm_blend_space_free_clips(clips, count);
    free(params);
    pm_blend_space_file_free(&f);

    static const pm_test_bad_json bad[] = {
        {"{\"axes\": [{}, {}, {}, {}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0, 0, 0]}]}", "1 to 3 axes"},
        {"{\"axes\": [{}, {}, {}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0]}]}", "samples[0]"},
        {"{\"coplanar\": \"flat\", \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0, 0]}]}", "\"plane\""},
        {"{\"grid\": [3, 3], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0, 0]}]}", "grid"},
        {"{\"coplanar\": \"error\", \"align\": \"none\", \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0, 0]},"
         " {\"clip\": \"clip1.bvh\", \"params\": [1, 0, 0]}, {\"clip\": \"clip2.bvh\", \"params\": [0, 1, 0]}]}",
         "one plane"},
        {"{\"align\": \"none\", \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 1, 0]},"
         " {\"name\": \"twin\", \"clip\": \"clip1.bvh\", \"params\": [0, 1, 0]}]}",
         "twin"},
    };
    pm_test_blend_expect_bad_json(bad, sizeof bad / sizeof bad[0]);
    pm_test_blend_fixture_free(&fx);
}

/* Coplanar samples in planes square to each axis: the triangulation is Delaunay in the plane
 * (whichever axis the plane is projected along), a point of a triangle is inside, and one
 * beside the plane is projected back onto it. */
static void test_planes_square_to_each_axis(void **state) {
    (void)state;
    fixture fx;
    fixture_init(&fx, 30);
    for (int k = 0; k < 3; k++) {
        float pts[30][3];
        pm_test_rng rng = {90 + (uint64_t)k};
        for (int i = 0; i < 30; i++)
            for (int d = 0; d < 3; d++) pts[i][d] = d == k ? 0.5f : (float)(pm_test_rng_u32(&rng) % 1024u) / 1024.0f;
        pm_blend_space *s;
        PM_ASSERT_OK(make_space(&s, &fx, pts, NULL, 30, 0.0f, 1.0f, PM_BLEND_COPLANAR_PLANE, NULL));
        assert_true(pm_blend_space_is_coplanar(s));
        assert_true(s->tri.triangle_count > 0);
        for (int t = 0; t < s->tri.triangle_count; t++) {
            const int32_t *v = s->tri.vertices + 3 * t;
            for (int i = 0; i < 30; i++)
                if (pm_dt3_incircle(s->points[v[0]], s->points[v[1]], s->points[v[2]], s->points[i]) > 0)
                    fail_msg("plane square to axis %d: sample %d inside triangle %d's circle", k, i, t);
        }
        int cell[4];
        assert_int_equal(pm_blend_space_cell(s, 0, cell), 3);
        float in[3], off[3];
        for (int d = 0; d < 3; d++) in[d] = (pts[cell[0]][d] + pts[cell[1]][d] + 2.0f * pts[cell[2]][d]) / 4.0f;
        pm_blend_space_weights w;
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, in, NULL));
        assert_true(w.cell_kind == PM_BLEND_CELL_TRIANGLE && !w.outside && w.count == 3);
        pm_test_check_weights(s, &w);
        memcpy(off, in, sizeof in);
        off[k] += 0.125f;
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, off, NULL));
        assert_true(w.outside);
        for (int d = 0; d < 3; d++) assert_true(fabsf(w.params[d] - in[d]) < 1e-5f);
        pm_blend_space_destroy(s);
    }
    pm_test_blend_fixture_free(&fx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weights_properties),
        cmocka_unit_test(test_shared_faces_and_edges),
        cmocka_unit_test(test_order_independence),
        cmocka_unit_test(test_location_brute_force),
        cmocka_unit_test(test_hull_projection),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_planes_square_to_each_axis),
        cmocka_unit_test(test_job_grid_bake),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
