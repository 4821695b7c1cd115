/* Cell location where the grid's own boundaries and the samples meet: samples and queries at
 * dyadic parameters (multiples of powers of two over axes [0, 1]), so that they snap exactly to
 * nodes of the coordinate grid and fall on the cell tree's bucket boundaries at every depth, on the
 * hull (a vertical hull edge included), on edges and on vertices, in spaces whose buckets crowd (a
 * fan, two long rows: the trapezoidal map) and in one whose do not (a lattice). Every answer must
 * be what testing every cell and hull element in order gives (pm_blend_space_weights_brute), bit
 * for bit; also: two hull edges tie beyond a hull vertex, and parameters snap to the nearest node
 * of the grid. (Random and structured layouts at ordinary points: test_blend_space_lookup.c.) */
#include <math.h>

#include "blend_space_internal.h"
#include "blend_support.h"

#define MAX_POINTS 2100

static pm_clip g_clip;
static pm_skeleton g_sk;

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

/* A 2D space over the n points (samples "s<i>", phase sync) on axes exactly [0, 1] x [0, 1]: the
 * samples' extent, widened by `widen` of it on either side. */
static pm_blend_space *unit_space(const float (*p)[2], int n, float widen) {
    pm_blend_space *s = NULL;
    pm_error e;
    if (pm_test_blend_points_space(&s, &g_clip, 2, &p[0][0], 2, NULL, n, widen, NULL, &e) != PM_OK)
        fail_msg("%s", e.message);
    for (int d = 0; d < 2; d++) {
        float lo, hi;
        PM_ASSERT_OK(pm_blend_space_axis_range(&lo, &hi, s, d, NULL));
        assert_true(lo == 0.0f && hi == 1.0f);
    }
    return s;
}

static void compare_at(const pm_blend_space *s, const char *name, float x, float y) {
    const float q[2] = {x, y};
    pm_test_assert_lookup_is_brute(s, q, name);
}

/* A random multiple of 2^-depth in [0, 1], depth 0..16 (the cell tree's). */
static float dyadic(pm_test_rng *rng) {
    int depth = (int)(pm_test_rng_u32(rng) % 17u);
    uint32_t steps = 1u << depth;
    return (float)(pm_test_rng_u32(rng) % (steps + 1u)) / (float)steps;
}

static void compare_layout(const char *name, const float (*p)[2], int n, int random, pm_test_rng *rng) {
    pm_blend_space *s = unit_space(p, n, 0.0f);
    for (int i = 0; i < n; i++) {
        compare_at(s, name, p[i][0], p[i][1]);
        int j = (int)(pm_test_rng_u32(rng) % (uint32_t)n);
        compare_at(s, name, 0.5f * (p[i][0] + p[j][0]), 0.5f * (p[i][1] + p[j][1]));
        if (i + 1 < n) compare_at(s, name, 0.5f * (p[i][0] + p[i + 1][0]), 0.5f * (p[i][1] + p[i + 1][1]));
    }
    /* Around every vertex, down to the finest buckets: where a fan's cells crowd. */
    static const float step[] = {0.0f, 1.0f / 65536.0f, 1.0f / 1048576.0f, 1.0f / 16777216.0f};
    for (int i = 0; i < n; i += n > 64 ? 37 : 1)
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                for (int sx = -1; sx <= 1; sx += 2)
                    for (int sy = -1; sy <= 1; sy += 2) compare_at(s, name, p[i][0] + sx * step[a], p[i][1] + sy * step[b]);
    for (int k = 0; k < random; k++) {
        const float *v = p[pm_test_rng_u32(rng) % (uint32_t)n];
        compare_at(s, name, dyadic(rng), dyadic(rng));
        compare_at(s, name, v[0], dyadic(rng)); /* on the vertical through a sample */
        compare_at(s, name, dyadic(rng), v[1]);
        float edge = (float)(pm_test_rng_u32(rng) % 2u);
        compare_at(s, name, edge, dyadic(rng)); /* on the axes' ends */
        compare_at(s, name, dyadic(rng), edge);
    }
    pm_blend_space_destroy(s);
}

static float g_points[MAX_POINTS][2];

static void test_dyadic_points_match_testing_every_cell(void **state) {
    (void)state;
    pm_test_rng rng = {91};
    /* A fan: 1025 samples on the bottom edge, every triangle sharing the apex (crowded buckets). */
    int n = 0;
    for (int i = 0; i <= 1024; i++, n++) g_points[n][0] = (float)i / 1024.0f, g_points[n][1] = 0.0f;
    g_points[n][0] = 341.0f / 1024.0f, g_points[n++][1] = 1.0f;
    compare_layout("a fan", (const float(*)[2])g_points, n, 3000, &rng);
    /* Fans whose apex is a corner of the axes: a vertical hull edge runs into the crowded buckets. */
    for (int corner = 0; corner < 4; corner++) {
        n = 0;
        for (int i = 0; i <= 1024; i++, n++) g_points[n][0] = (float)i / 1024.0f, g_points[n][1] = corner & 2 ? 1.0f : 0.0f;
        g_points[n][0] = corner & 1 ? 1.0f : 0.0f, g_points[n++][1] = corner & 2 ? 0.0f : 1.0f;
        compare_layout("a fan from a corner", (const float(*)[2])g_points, n, 500, &rng);
    }
    /* Two long rows: thin triangles, vertical hull edges at both ends (crowded buckets). */
    n = 0;
    for (int i = 0; i <= 1024; i++, n += 2) {
        g_points[n][0] = g_points[n + 1][0] = (float)i / 1024.0f;
        g_points[n][1] = 0.0f;
        g_points[n + 1][1] = 1.0f;
    }
    compare_layout("two rows", (const float(*)[2])g_points, n, 3000, &rng);
    /* A lattice of 33 x 33: co-circular squares, no crowding. */
    n = 0;
    for (int j = 0; j <= 32; j++)
        for (int i = 0; i <= 32; i++, n++) g_points[n][0] = (float)i / 32.0f, g_points[n][1] = (float)j / 32.0f;
    compare_layout("a lattice", (const float(*)[2])g_points, n, 3000, &rng);
}

/* Beyond a hull vertex the two hull edges that meet there are equally near (the vertex itself is
 * the nearest point of both): the lookup and the scan of every edge agree on which is reported. */
static void test_hull_vertex_ties(void **state) {
    (void)state;
    static const float tri[3][2] = {{0.25f, 0.25f}, {0.75f, 0.25f}, {0.25f, 0.75f}};
    pm_blend_space *s = unit_space(tri, 3, 0.5f);
    pm_test_rng rng = {92};
    for (int k = 0; k < 300; k++) {
        float a = pm_test_rng_float(&rng) * 0.25f, b = pm_test_rng_float(&rng) * 0.25f;
        compare_at(s, "beyond (0.75, 0.25)", 0.75f + a, 0.25f - b);
        compare_at(s, "beyond (0.25, 0.25)", 0.25f - a, 0.25f - b);
        compare_at(s, "beyond (0.25, 0.75)", 0.25f - a, 0.75f + b);
    }
    pm_blend_space_weights w;
    const float corner[2] = {0.0f, 0.0f};
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, corner, NULL));
    assert_true(w.outside && w.count == 1 && w.cell_sample_count == 2);
    pm_blend_space_destroy(s);
}

/* Parameters snap to the nearest node of the 2^24 grid the predicates run on, not the one below. */
static void test_parameters_snap_to_the_nearest_node(void **state) {
    (void)state;
    pm_blend_space *s = unit_space(pm_test_triangle, 3, 0.0f);
    pm_test_rng rng = {93};
    for (int k = 0; k < 2000; k++) {
        /* Small values: floats finer than the grid, so most fall between its nodes. */
        float q[2] = {0.01f * (float)(pm_test_rng_u32(&rng) % 1000003u) / 1000003.0f, ldexpf(pm_test_rng_float(&rng), -(k % 12))};
        pm_dt3_point p = pm_blend_space_snap(s, q, NULL);
        for (int d = 0; d < 2; d++) {
            double exact = (double)q[d] * (double)PM_DT_COORD_MAX, node = (double)(d ? p.y : p.x);
            if (!(fabs(node - exact) <= 0.5)) fail_msg("%.9g snaps to node %.0f, %.3f away", (double)q[d], node, fabs(node - exact));
        }
    }
    pm_blend_space_destroy(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dyadic_points_match_testing_every_cell),
        cmocka_unit_test(test_hull_vertex_ties),
        cmocka_unit_test(test_parameters_snap_to_the_nearest_node),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
