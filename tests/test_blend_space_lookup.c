/* Cell location in big, awkward blend spaces: the cell tree, trapezoidal map, 3D walk and hull
 * hierarchy (src/blend_space_tree.c, _trapezoids.c, _walk.c, _hull.c) must give what testing every
 * cell in index order and measuring every hull element gives (pm_blend_space_weights_brute) -
 * weights, cell, cell samples and the point used, bit for bit - at random points inside and
 * outside the hull, on every sample, on edges (midpoints of neighbouring samples) and on lattice
 * edges and faces. Also: the structures stay O(samples), queries allocate nothing, every
 * allocation failure while building is reported and leaks nothing, and shuffling the samples
 * changes no weight. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blend_space_internal.h"
#include "blend_support.h"

#define MAX_POINTS 4096

typedef struct layout {
    const char *name;
    int dims, n;
    float p[MAX_POINTS][3];
} layout;

static pm_clip g_clip;
static pm_skeleton g_sk;
static layout g_layout;

static int setup(void **state) {
    (void)state;
    pm_test_blend_skeleton(&g_sk, 2);
    pm_test_blend_swing_clip(&g_clip, &g_sk, 3, 0.3f, 0.0f);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    pm_clip_destroy(&g_clip);
    pm_skeleton_destroy(&g_sk);
    return 0;
}

/* The space over l's samples (listed in `order`, NULL: as they are), named "s<k>", with axes 20%
 * wider than the samples so that queries reach beyond the hull without being clamped. */
static pm_result make_space(pm_blend_space **out, const layout *l, const int *order, const pm_allocator *a) {
    pm_error e;
    pm_result r = pm_test_blend_points_space(out, &g_clip, l->dims, &l->p[0][0], 3, order, l->n, 0.2f, a, &e);
    if (r != PM_OK && r != PM_ERR_OUT_OF_MEMORY) fail_msg("%s: %s", l->name, e.message);
    return r;
}

static void compare_at(const pm_blend_space *s, const layout *l, const float *q) {
    pm_test_assert_lookup_is_brute(s, q, l->name);
}

/* `random` random points of the axis ranges and a little beyond (clamped), every sample up to
 * `samples`, and midpoints of neighbouring and random pairs and centroids of random triples. */
static void compare_layout(const layout *l, int random, int samples, pm_test_rng *rng) {
    pm_blend_space *s = NULL;
    PM_ASSERT_OK(make_space(&s, l, NULL, NULL));
    float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, q[3] = {0, 0, 0};
    for (int d = 0; d < l->dims; d++) PM_ASSERT_OK(pm_blend_space_axis_range(&lo[d], &hi[d], s, d, NULL));
    for (int k = 0; k < random; k++) {
        for (int d = 0; d < l->dims; d++) q[d] = lo[d] - 0.05f * (hi[d] - lo[d]) + 1.1f * pm_test_rng_float(rng) * (hi[d] - lo[d]);
        compare_at(s, l, q);
    }
    for (int i = 0; i < l->n && i < samples; i++) {
        int k = samples >= l->n ? i : (int)(pm_test_rng_u32(rng) % (uint32_t)l->n);
        compare_at(s, l, l->p[k]);
    }
    for (int k = 0; k < samples; k++) {
        int i = (int)(pm_test_rng_u32(rng) % (uint32_t)l->n), j = (int)(pm_test_rng_u32(rng) % (uint32_t)l->n);
        int m = (int)(pm_test_rng_u32(rng) % (uint32_t)l->n), next = (i + 1) % l->n;
        for (int d = 0; d < l->dims; d++) q[d] = 0.5f * (l->p[i][d] + l->p[next][d]);
        compare_at(s, l, q);
        for (int d = 0; d < l->dims; d++) q[d] = 0.5f * (l->p[i][d] + l->p[j][d]);
        compare_at(s, l, q);
        for (int d = 0; d < l->dims; d++) q[d] = (l->p[i][d] + l->p[j][d] + l->p[m][d]) / 3.0f;
        compare_at(s, l, q);
    }
    pm_blend_space_destroy(s);
}

/* ---- layouts ---- */

/* The shared layout, named, of `n` samples in `dims` dimensions (points filled by the caller). */
static layout *layout_of(const char *name, int dims, int n) {
    g_layout.name = name;
    g_layout.dims = dims;
    g_layout.n = n;
    return &g_layout;
}

static layout *random_layout(int dims, int n, pm_test_rng *rng) {
    layout *l = layout_of(dims == 2 ? "2D random" : "3D random", dims, n);
    for (int i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) l->p[i][d] = d < dims ? pm_test_rng_float(rng) : 0.0f;
    return l;
}

static layout *circle_layout(int n, int centre) {
    layout *l = layout_of(centre ? "a circle and its centre" : "a circle", 2, n);
    for (int i = 0; i < n - centre; i++) {
        double t = 6.283185307179586 * i / (n - centre);
        l->p[i][0] = (float)cos(t);
        l->p[i][1] = (float)sin(t);
        l->p[i][2] = 0.0f;
    }
    if (centre) l->p[n - 1][0] = l->p[n - 1][1] = l->p[n - 1][2] = 0.0f;
    return l;
}

/* n - 1 samples on a line and one apex: every triangle shares the apex. */
static layout *fan_layout(int n) {
    layout *l = layout_of("a fan", 2, n);
    for (int i = 0; i < n - 1; i++) l->p[i][0] = (float)i, l->p[i][1] = l->p[i][2] = 0.0f;
    l->p[n - 1][0] = (float)(n / 3);
    l->p[n - 1][1] = (float)(n / 2);
    l->p[n - 1][2] = 0.0f;
    return l;
}

static layout *rows_layout(int n) {
    layout *l = layout_of("two long rows", 2, n);
    for (int i = 0; i < n; i++) l->p[i][0] = (float)(i / 2), l->p[i][1] = (float)(i % 2), l->p[i][2] = 0.0f;
    return l;
}

static layout *parabola_layout(int n) {
    layout *l = layout_of("a nearly flat parabola", 2, n);
    for (int i = 0; i < n; i++) {
        float x = (float)i / (float)(n - 1);
        l->p[i][0] = x, l->p[i][1] = 1e-4f * x * x, l->p[i][2] = 0.0f;
    }
    return l;
}

static layout *lattice_layout(int dims, int side) {
    layout *l = layout_of(dims == 2 ? "a square lattice" : "a cube lattice", dims, 0);
    for (int k = 0; k < (dims == 3 ? side : 1); k++)
        for (int j = 0; j < side; j++)
            for (int i = 0; i < side; i++, l->n++) l->p[l->n][0] = (float)i, l->p[l->n][1] = (float)j, l->p[l->n][2] = (float)k;
    return l;
}

static layout *sphere_layout(int n, pm_test_rng *rng) {
    layout *l = layout_of("a sphere", 3, n);
    for (int i = 0; i < n; i++) {
        double z = 2.0 * pm_test_rng_float(rng) - 1.0, t = 6.283185307179586 * pm_test_rng_float(rng), r = sqrt(1.0 - z * z);
        l->p[i][0] = (float)(r * cos(t)), l->p[i][1] = (float)(r * sin(t)), l->p[i][2] = (float)z;
    }
    return l;
}

/* n - 2 samples on a circle and two poles: long thin tetrahedra round the axis between them. */
static layout *fan3_layout(int n) {
    layout *l = layout_of("a 3D fan", 3, n);
    for (int i = 0; i < n - 2; i++) {
        double t = 6.283185307179586 * i / (n - 2);
        l->p[i][0] = (float)cos(t), l->p[i][1] = (float)sin(t), l->p[i][2] = 0.0f;
    }
    l->p[n - 2][0] = 0.1f, l->p[n - 2][1] = 0.0f, l->p[n - 2][2] = 1.0f;
    l->p[n - 1][0] = 0.0f, l->p[n - 1][1] = 0.1f, l->p[n - 1][2] = -1.0f;
    return l;
}

static layout *plane_layout(int n, pm_test_rng *rng) {
    layout *l = layout_of("3D samples in a plane", 3, n);
    for (int i = 0; i < n; i++) {
        float u = pm_test_rng_float(rng), v = pm_test_rng_float(rng);
        l->p[i][0] = u, l->p[i][1] = v, l->p[i][2] = 0.25f * u + 0.5f * v;
    }
    return l;
}

/* `count` random points of the half-integer grid over a lattice of `side` samples per axis
 * (lattice_layout): samples, and points on lattice edges and faces and at cell centres. */
static void compare_half_lattice(const layout *l, int side, int count, pm_test_rng *rng) {
    pm_blend_space *s = NULL;
    PM_ASSERT_OK(make_space(&s, l, NULL, NULL));
    for (int k = 0; k < count; k++) {
        float q[3] = {0, 0, 0};
        for (int d = 0; d < l->dims; d++) q[d] = 0.5f * (float)(pm_test_rng_u32(rng) % (uint32_t)(2 * side));
        compare_at(s, l, q);
    }
    pm_blend_space_destroy(s);
}

/* ---- tests ---- */

static void test_2d_matches_testing_every_cell(void **state) {
    (void)state;
    pm_test_rng rng = {77};
    compare_layout(random_layout(2, 4096, &rng), 1500, 600, &rng);
    compare_layout(circle_layout(4096, 0), 1500, 600, &rng);
    compare_layout(circle_layout(1001, 1), 800, 400, &rng);
    compare_layout(fan_layout(4096), 1500, 600, &rng);
    compare_layout(rows_layout(2000), 1000, 600, &rng);
    compare_layout(parabola_layout(2000), 1000, 600, &rng);
    /* Co-circular squares: queries on lattice edges and at cell centres, where two triangles meet. */
    layout *l = lattice_layout(2, 40);
    compare_layout(l, 500, 400, &rng);
    compare_half_lattice(l, 40, 1500, &rng);
}

static void test_3d_matches_testing_every_cell(void **state) {
    (void)state;
    pm_test_rng rng = {78};
    compare_layout(random_layout(3, 1000, &rng), 300, 150, &rng);
    compare_layout(sphere_layout(600, &rng), 300, 150, &rng);
    compare_layout(fan3_layout(400), 300, 150, &rng);
    compare_layout(plane_layout(800, &rng), 300, 150, &rng);
    /* Co-spherical cubes: queries on lattice edges, faces and cube centres. */
    layout *l = lattice_layout(3, 8);
    compare_layout(l, 200, 100, &rng);
    compare_half_lattice(l, 8, 600, &rng);
}

/* Fibonacci sphere: every sample on the hull, faces of even size. */
static layout *fibonacci_layout(int n, float flatten) {
    layout *l = layout_of(flatten < 1.0f ? "a flattened Fibonacci sphere" : "a Fibonacci sphere", 3, n);
    for (int i = 0; i < n; i++) {
        double z = 1.0 - (2.0 * i + 1.0) / n, r = sqrt(1.0 - z * z), t = 2.399963229728653 * i;
        l->p[i][0] = (float)(r * cos(t)), l->p[i][1] = (float)(flatten * r * sin(t)), l->p[i][2] = (float)z;
    }
    return l;
}

static layout *points_layout(const char *name, const float (*p)[3], int n) {
    layout *l = layout_of(name, 3, n);
    memcpy(l->p, p, sizeof(float[3]) * (size_t)n);
    return l;
}

/* Queries outside a 3D hull, the axes `widen` times the samples' span beyond them: random points
 * near and far, and points pushed out from the samples' centroid through samples, midpoints of
 * sample pairs and centroids of triples by small and large factors - just outside the hull's
 * vertices, edges and faces, where the nearest element ties between the faces that share them. */
static void compare_outside(const layout *l, float widen, int count, pm_test_rng *rng) {
    pm_blend_space *s = NULL;
    pm_error e;
    if (pm_test_blend_points_space(&s, &g_clip, 3, &l->p[0][0], 3, NULL, l->n, widen, NULL, &e) != PM_OK)
        fail_msg("%s: %s", l->name, e.message);
    float lo[3], hi[3], c[3] = {0, 0, 0}, q[3];
    for (int d = 0; d < 3; d++) PM_ASSERT_OK(pm_blend_space_axis_range(&lo[d], &hi[d], s, d, NULL));
    for (int i = 0; i < l->n; i++)
        for (int d = 0; d < 3; d++) c[d] += l->p[i][d] / (float)l->n;
    static const float push[] = {1.0f, 1.000001f, 1.00001f, 1.001f, 1.05f, 1.5f, 3.0f, 20.0f};
    for (int k = 0; k < count; k++) {
        int kind = k % 4, i = (int)(pm_test_rng_u32(rng) % (uint32_t)l->n), j = (int)(pm_test_rng_u32(rng) % (uint32_t)l->n);
        int m = (int)(pm_test_rng_u32(rng) % (uint32_t)l->n);
        float f = push[pm_test_rng_u32(rng) % (uint32_t)(sizeof push / sizeof push[0])];
        for (int d = 0; d < 3; d++) {
            float p = kind == 1 ? l->p[i][d] : (kind == 2 ? 0.5f * (l->p[i][d] + l->p[j][d]) : (l->p[i][d] + l->p[j][d] + l->p[m][d]) / 3.0f);
            q[d] = kind == 0 ? lo[d] + pm_test_rng_float(rng) * (hi[d] - lo[d]) : c[d] + f * (p - c[d]);
        }
        compare_at(s, l, q);
    }
    pm_blend_space_destroy(s);
}

static void test_3d_outside_matches_every_hull_face(void **state) {
    (void)state;
    pm_test_rng rng = {81};
    static const float tet[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    static const float needle[5][3] = {{0, 0, 0}, {1000, 1, 0}, {1000, 0, 1}, {1000, -1, -1}, {2000, 0, 0}};
    static const float sliver[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 1e-3f}, {0.5f, 0.5f, -1e-3f}};
    for (int pass = 0; pass < 2; pass++) {
        float widen = pass == 0 ? 0.3f : 20.0f;
        compare_outside(points_layout("one tetrahedron", tet, 4), widen, 400, &rng);
        compare_outside(points_layout("a needle", needle, 5), widen, 400, &rng);
        compare_outside(points_layout("a nearly flat sliver", sliver, 5), widen, 400, &rng);
        compare_outside(fibonacci_layout(16, 1.0f), widen, 600, &rng);
        compare_outside(fibonacci_layout(300, 1.0f), widen, 600, &rng);
        compare_outside(fibonacci_layout(300, 0.01f), widen, 600, &rng);
        compare_outside(sphere_layout(1000, &rng), widen, 600, &rng);
        compare_outside(random_layout(3, 300, &rng), widen, 600, &rng);
        /* Coplanar hull faces meeting at lattice edges and corners: exact ties between faces. */
        compare_outside(lattice_layout(3, 5), widen, 800, &rng);
    }
}

/* Memory proportional to the samples on the layouts that crowd buckets, and the trapezoidal map's
 * depth (the most tests a query can take) logarithmic; a typical space needs no map. */
static void test_structures_stay_linear(void **state) {
    (void)state;
    pm_test_rng rng = {79};
    for (int which = 0; which < 4; which++) {
        const layout *l = which == 0 ? fan_layout(4096)
                                     : (which == 1 ? rows_layout(4096) : (which == 2 ? random_layout(2, 4096, &rng) : fan3_layout(4096)));
        pm_blend_space *s = NULL;
        PM_ASSERT_OK(make_space(&s, l, NULL, NULL));
        int cells = s->mode == SPACE_TETRAHEDRA ? s->tet.tet_count : s->tri.triangle_count;
        assert_true(s->tree_item_count <= 12 * cells + 1024);
        assert_true(s->tree_node_count <= 16 * cells + 1024);
        if (which < 2) {
            /* Fans and long rows crowd buckets: their queries go through the map. */
            assert_true(s->tree_crowded > 0);
            int log2e = 1;
            while ((1 << log2e) < s->tz_edge_count) log2e++;
            if (s->tz_height > 6 * log2e) fail_msg("%s: trapezoidal map %d deep for %d edges", l->name, s->tz_height, s->tz_edge_count);
            assert_true(s->tz_node_count <= 16 * s->tz_edge_count);
        } else if (which == 2) {
            assert_int_equal(s->tree_crowded, 0);
            assert_null(s->tz_nodes);
        }
        pm_blend_space_destroy(s);
    }
}

/* Queries never allocate, and everything the lookup structures take comes from the space's
 * allocator and goes back to it. */
static void test_allocator_only_at_creation(void **state) {
    (void)state;
    pm_test_rng rng = {80};
    for (int which = 0; which < 3; which++) {
        const layout *l = which == 0 ? fan_layout(1000) : (which == 1 ? circle_layout(1000, 0) : random_layout(3, 300, &rng));
        pm_test_allocator counter = {0, 0, -1, 0, 0};
        pm_allocator a = pm_test_allocator_hooks(&counter);
        pm_blend_space *s = NULL;
        PM_ASSERT_OK(make_space(&s, l, NULL, &a));
        long allocs = counter.allocs;
        float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, q[3] = {0, 0, 0};
        for (int d = 0; d < l->dims; d++) PM_ASSERT_OK(pm_blend_space_axis_range(&lo[d], &hi[d], s, d, NULL));
        for (int k = 0; k < 500; k++) {
            for (int d = 0; d < l->dims; d++) q[d] = lo[d] + pm_test_rng_float(&rng) * (hi[d] - lo[d]);
            pm_blend_space_weights w;
            PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, q, NULL));
        }
        assert_int_equal(counter.allocs, allocs);
        pm_blend_space_destroy(s);
        assert_int_equal(counter.frees, counter.allocs);
    }
}

/* Every allocation of the build refused in turn, and each alone: a clear error (or a build that
 * could do without it) and nothing left behind. */
static void test_out_of_memory_while_building(void **state) {
    (void)state;
    pm_test_rng rng = {81};
    for (int which = 0; which < 2; which++) {
        const layout *l = which == 0 ? fan_layout(48) : random_layout(3, 24, &rng);
        long needed = -1;
        for (long fail_after = 0;; fail_after++) {
            pm_test_allocator counter = {0, 0, fail_after, 0, 0};
            pm_allocator a = pm_test_allocator_hooks(&counter);
            pm_blend_space *s = NULL;
            pm_result r = make_space(&s, l, NULL, &a);
            if (r == PM_OK) {
                if (which == 0) assert_true(s->tree_crowded > 0); /* the map was built, and failed before */
                pm_blend_space_destroy(s);
                assert_int_equal(counter.frees, counter.allocs);
                needed = fail_after;
                break;
            }
            assert_int_equal(r, PM_ERR_OUT_OF_MEMORY);
            assert_int_equal(counter.frees, counter.allocs);
        }
        assert_true(needed > 0);
        /* Each allocation refused alone, the ones after it served: out of memory or done without,
         * and nothing left either way. */
        pm_test_refusal all = {0, 0, 0};
        pm_allocator aa = pm_test_refusal_hooks(&all);
        pm_blend_space *s = NULL;
        PM_ASSERT_OK(make_space(&s, l, NULL, &aa));
        pm_blend_space_destroy(s);
        assert_int_equal(all.live, 0);
        for (long k = 1; k <= all.requests; k++) {
            pm_test_refusal one = {0, k, 0};
            pm_allocator a = pm_test_refusal_hooks(&one);
            s = NULL;
            pm_result r = make_space(&s, l, NULL, &a);
            if (r == PM_OK) pm_blend_space_destroy(s);
            else assert_int_equal(r, PM_ERR_OUT_OF_MEMORY);
            assert_int_equal(one.live, 0);
        }
    }
}

/* Listed in another order, spaces whose cells are found through the map or the walk give the same
 * weights bit for bit (the order-independence the layouts test checks, on these paths). */
static void test_shuffled_samples_same_weights(void **state) {
    (void)state;
    pm_test_rng rng = {82};
    for (int which = 0; which < 2; which++) {
        const layout *l = which == 0 ? fan_layout(2000) : random_layout(3, 500, &rng);
        int n = l->n;
        int *order = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++) order[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(pm_test_rng_u32(&rng) % (uint32_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        pm_blend_space *s = NULL, *shuffled = NULL;
        PM_ASSERT_OK(make_space(&s, l, NULL, NULL));
        PM_ASSERT_OK(make_space(&shuffled, l, order, NULL));
        float *d0 = malloc(sizeof(float) * (size_t)n), *d1 = malloc(sizeof(float) * (size_t)n);
        for (int k = 0; k < 1500; k++) {
            int i = (int)(pm_test_rng_u32(&rng) % (uint32_t)n), j = k % 2 ? (i + 1) % n : (int)(pm_test_rng_u32(&rng) % (uint32_t)n);
            float q[3] = {0, 0, 0};
            for (int d = 0; d < l->dims; d++) q[d] = 0.5f * (l->p[i][d] + l->p[j][d]);
            pm_blend_space_weights w0, w1;
            PM_ASSERT_OK(pm_blend_space_weights_at(&w0, s, q, NULL));
            PM_ASSERT_OK(pm_blend_space_weights_at(&w1, shuffled, q, NULL));
            pm_test_dense_weights(d0, n, s, &w0);
            pm_test_dense_weights(d1, n, shuffled, &w1);
            if (memcmp(d0, d1, sizeof(float) * (size_t)n) != 0)
                fail_msg("%s: the weights at (%.9g, %.9g, %.9g) depend on the samples' order", l->name, (double)q[0],
                         (double)q[1], (double)q[2]);
        }
        free(d0);
        free(d1);
        free(order);
        pm_blend_space_destroy(s);
        pm_blend_space_destroy(shuffled);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_2d_matches_testing_every_cell),
        cmocka_unit_test(test_3d_matches_testing_every_cell),
        cmocka_unit_test(test_3d_outside_matches_every_hull_face),
        cmocka_unit_test(test_structures_stay_linear),
        cmocka_unit_test(test_allocator_only_at_creation),
        cmocka_unit_test(test_out_of_memory_while_building),
        cmocka_unit_test(test_shuffled_samples_same_weights),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
