/* 2D blend spaces, geometry: the exact in-circle predicate and the Delaunay triangulation on
 * random, duplicate, collinear and co-circular point sets (3D: test_blend_space_delaunay3.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "delaunay.h"
#include "support.h"

static void check_triangulation(const pm_dt_point *p, int n, const pm_triangulation *t) {
    int hull_points = 0;
    for (int k = 0; k < t->triangle_count; k++) {
        const int32_t *v = t->vertices + 3 * k;
        assert_true(pm_dt_orient(p[v[0]], p[v[1]], p[v[2]]) > 0);
        for (int i = 0; i < n; i++) assert_true(pm_dt_incircle(p[v[0]], p[v[1]], p[v[2]], p[i]) <= 0);
        for (int e = 0; e < 3; e++) {
            int u = t->neighbors[3 * k + e];
            if (u < 0) continue;
            int back = 0;
            for (int f = 0; f < 3; f++) back += t->neighbors[3 * u + f] == k;
            assert_int_equal(back, 1);
        }
    }
    /* Points on the hull boundary (collinear ones included): T = 2n - h - 2. */
    for (int i = 0; i < n; i++) {
        int on_hull = 0;
        for (int h = 0; h < t->hull_count && !on_hull; h++) {
            int tri = t->hull[2 * h], e = t->hull[2 * h + 1];
            pm_dt_point a = p[t->vertices[3 * tri + (e + 1) % 3]], b = p[t->vertices[3 * tri + (e + 2) % 3]];
            if (pm_dt_orient(a, b, p[i]) == 0 && p[i].x >= (a.x < b.x ? a.x : b.x) && p[i].x <= (a.x > b.x ? a.x : b.x) &&
                p[i].y >= (a.y < b.y ? a.y : b.y) && p[i].y <= (a.y > b.y ? a.y : b.y))
                on_hull = 1;
        }
        hull_points += on_hull;
    }
    assert_int_equal(t->triangle_count, 2 * n - hull_points - 2);
}

static int cmp_point(const void *a, const void *b) {
    const pm_dt_point *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return (p->y > q->y) - (p->y < q->y);
}

static void test_delaunay(void **state) {
    (void)state;
    pm_test_rng rng = {101};
    pm_dt_point pts[400];
    for (int trial = 0; trial < 40; trial++) {
        int n;
        if (trial < 20) {
            n = 3 + (int)(pm_test_rng_u32(&rng) % 120);
            for (int i = 0; i < n; i++) {
                /* A coarse lattice half of the time: collinear runs and co-circular quads. */
                int64_t scale = trial % 2 ? (PM_DT_COORD_MAX / 8) : 1;
                int64_t range = trial % 2 ? 9 : PM_DT_COORD_MAX;
                pts[i].x = (int64_t)(pm_test_rng_u32(&rng) % (uint32_t)range) * scale;
                pts[i].y = (int64_t)(pm_test_rng_u32(&rng) % (uint32_t)range) * scale;
            }
        } else {
            int side = 2 + trial % 9; /* full grids: everything co-circular */
            n = 0;
            for (int y = 0; y < side; y++)
                for (int x = 0; x < side + 1; x++) pts[n++] = (pm_dt_point){x * 1000, y * 1000};
        }
        qsort(pts, (size_t)n, sizeof pts[0], cmp_point);
        int m = 0;
        for (int i = 0; i < n; i++)
            if (m == 0 || pts[i].x != pts[m - 1].x || pts[i].y != pts[m - 1].y) pts[m++] = pts[i];
        int collinear = 1;
        for (int i = 2; i < m; i++) collinear &= pm_dt_orient(pts[0], pts[1], pts[i]) == 0;
        pm_triangulation t;
        pm_error e;
        pm_result r = pm_delaunay_build(&t, pts, m, NULL, &e);
        if (m < 3 || collinear) {
            assert_int_not_equal(r, PM_OK);
            continue;
        }
        assert_int_equal(r, PM_OK);
        check_triangulation(pts, m, &t);
        pm_delaunay_destroy(&t);
    }
    /* The extreme values of the predicates stay exact. */
    pm_dt_point a = {0, 0}, b = {PM_DT_COORD_MAX, 0}, c = {0, PM_DT_COORD_MAX}, d = {PM_DT_COORD_MAX, PM_DT_COORD_MAX};
    assert_true(pm_dt_orient(a, b, c) > 0);
    assert_int_equal(pm_dt_incircle(a, b, c, d), 0);
    d.x--;
    assert_int_equal(pm_dt_incircle(a, b, c, d), 1);
    d.x += 2;
    assert_int_equal(pm_dt_incircle(a, b, c, d), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delaunay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
