/* 3D blend spaces, geometry: the exact orientation, in-sphere and coplanar in-circle predicates at
 * the extremes of the grid, and the Delaunay tetrahedralisation on random, lattice (co-spherical),
 * planar and near-spherical point sets, and every allocation of a build refused in turn. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "delaunay3.h"
#include "support.h"

#define M PM_DT_COORD_MAX

/* ---- predicates ---- */

static void test_predicates(void **state) {
    (void)state;
    pm_dt3_point o = {0, 0, 0}, x = {M, 0, 0}, y = {0, M, 0}, z = {0, 0, M};
    assert_int_equal(pm_dt3_orient(o, x, y, z), 1);
    assert_int_equal(pm_dt3_orient(o, y, x, z), -1);
    assert_int_equal(pm_dt3_orient(o, x, y, (pm_dt3_point){M, M, 0}), 0);
    /* The corner tetrahedron of the full grid: its sphere is the cube's. */
    assert_int_equal(pm_dt3_insphere(o, x, y, z, (pm_dt3_point){M, M, M}), 0);
    assert_int_equal(pm_dt3_insphere(o, x, y, z, (pm_dt3_point){M, M, M - 1}), 1);
    assert_int_equal(pm_dt3_insphere(o, x, y, z, (pm_dt3_point){M / 3, M / 3, M / 3}), 1);
    pm_dt3_point hx = {M / 2, 0, 0}, hy = {0, M / 2, 0}, hz = {0, 0, M / 2};
    assert_int_equal(pm_dt3_insphere(o, hx, hy, hz, (pm_dt3_point){M, M, M}), -1);
    assert_int_equal(pm_dt3_insphere(o, hx, hy, hz, (pm_dt3_point){M / 2, M / 2, M / 2}), 0);
    assert_int_equal(pm_dt3_insphere(o, hx, hy, hz, (pm_dt3_point){M / 2, M / 2, M / 2 - 1}), 1);
    /* In a tilted plane (x = z; the normal's largest components tie): circumcentre (2, 2, 2),
     * (4, 4, 4) on the circle, either winding. */
    pm_dt3_point a = {0, 0, 0}, b = {4, 0, 4}, c = {0, 4, 0};
    assert_int_equal(pm_dt3_incircle(a, b, c, (pm_dt3_point){2, 2, 2}), 1);
    assert_int_equal(pm_dt3_incircle(a, c, b, (pm_dt3_point){2, 2, 2}), 1);
    assert_int_equal(pm_dt3_incircle(a, b, c, (pm_dt3_point){4, 4, 4}), 0);
    assert_int_equal(pm_dt3_incircle(b, a, c, (pm_dt3_point){5, 5, 5}), -1);
    /* 128-bit helpers at the predicates' bounds. */
    pm_i128 big = pm_i128_mul(-((int64_t)1 << 50), (int64_t)1 << 25);
    assert_true(pm_i128_to_double(pm_i128_mul64(big, (int64_t)1 << 50)) == -ldexp(1.0, 125));
    assert_int_equal(pm_i128_sign(pm_i128_add(big, pm_i128_neg(big))), 0);
}

/* ---- tetrahedralisation ---- */

static int cmp_point(const void *pa, const void *pb) {
    const pm_dt3_point *p = pa, *q = pb;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    if (p->y != q->y) return p->y < q->y ? -1 : 1;
    return (p->z > q->z) - (p->z < q->z);
}

/* A valid Delaunay tetrahedralisation: positive cells, symmetric adjacency across shared faces,
 * no point strictly inside any circumsphere, a convex hull, cells tiling it (exact volumes), every
 * point a vertex and the Euler characteristic of a ball. */
static void check_tets(const pm_dt3_point *p, int n, const pm_tetrahedralization *t) {
    int *used = calloc((size_t)n, sizeof(int));
    pm_i128 volume = pm_i128_from(0), hull_volume = pm_i128_from(0);
    int64_t faces2 = 0;
    for (int k = 0; k < t->tet_count; k++) {
        const int32_t *v = t->vertices + 4 * k;
        assert_int_equal(pm_dt3_orient(p[v[0]], p[v[1]], p[v[2]], p[v[3]]), 1);
        volume = pm_i128_add(volume, pm_dt3_volume(p[v[0]], p[v[1]], p[v[2]], p[v[3]]));
        for (int i = 0; i < 4; i++) used[v[i]] = 1;
        for (int i = 0; i < n; i++) assert_true(pm_dt3_insphere(p[v[0]], p[v[1]], p[v[2]], p[v[3]], p[i]) <= 0);
        for (int f = 0; f < 4; f++) {
            int u = t->neighbors[4 * k + f];
            faces2 += u < 0 ? 2 : 1;
            if (u < 0) continue;
            int back = 0, shared = 0;
            for (int g = 0; g < 4; g++) back += t->neighbors[4 * u + g] == k;
            for (int i = 0; i < 4; i++)
                for (int g = 0; g < 4 && i != f; g++) shared += t->vertices[4 * u + g] == v[i];
            assert_int_equal(back, 1);
            assert_int_equal(shared, 3);
        }
    }
    pm_dt3_point ref = p[0];
    for (int h = 0; h < t->hull_count; h++) {
        int k = t->hull[2 * h], i = t->hull[2 * h + 1];
        pm_dt3_point w[4];
        for (int m = 0; m < 4; m++) w[m] = p[t->vertices[4 * k + m]];
        for (int j = 0; j < n; j++) {
            w[i] = p[j];
            assert_true(pm_dt3_orient(w[0], w[1], w[2], w[3]) >= 0); /* every point on the inner side */
        }
        w[i] = ref;
        hull_volume = pm_i128_add(hull_volume, pm_dt3_volume(w[0], w[1], w[2], w[3]));
    }
    assert_int_equal(pm_i128_sign(pm_i128_sub(volume, hull_volume)), 0);
    for (int i = 0; i < n; i++) assert_true(used[i]);
    /* V - E + F - T = 1, with the distinct edges of the cells counted directly and every face
     * counted once (interior faces are seen from both sides, hull faces from one; faces2 is even
     * since the back == 1 checks pair each interior slot with exactly one of its neighbour's). */
    int64_t faces = faces2 / 2;
    unsigned char *edge_seen = calloc((size_t)n * (size_t)n, 1);
    assert_non_null(edge_seen);
    int64_t edges = 0;
    for (int k = 0; k < t->tet_count; k++) {
        const int32_t *v = t->vertices + 4 * k;
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++) {
                int a = v[i] < v[j] ? v[i] : v[j], b = v[i] < v[j] ? v[j] : v[i];
                assert_true(a != b);
                if (!edge_seen[(size_t)a * (size_t)n + (size_t)b]) {
                    edge_seen[(size_t)a * (size_t)n + (size_t)b] = 1;
                    edges++;
                }
            }
    }
    free(edge_seen);
    assert_true(edges >= n - 1 && edges <= (int64_t)n * (n - 1) / 2);
    if (n - edges + faces - t->tet_count != 1)
        fail_msg("Euler characteristic %lld (V %d, E %lld, F %lld, T %d), expected 1",
                 (long long)(n - edges + faces - t->tet_count), n, (long long)edges, (long long)faces, t->tet_count);
    free(used);
}

static void test_delaunay3(void **state) {
    (void)state;
    pm_test_rng rng = {303};
    static pm_dt3_point pts[400];
    for (int trial = 0; trial < 21; trial++) {
        int n = 0;
        if (trial < 8) {
            /* Random points, half of them on a coarse lattice: co-spherical and coplanar runs. */
            int target = 4 + (int)(pm_test_rng_u32(&rng) % 100);
            int64_t scale = trial % 2 ? M / 4 : 1, range = trial % 2 ? 5 : M;
            for (int i = 0; i < target; i++) {
                pts[n].x = (int64_t)(pm_test_rng_u32(&rng) % (uint32_t)range) * scale;
                pts[n].y = (int64_t)(pm_test_rng_u32(&rng) % (uint32_t)range) * scale;
                pts[n].z = (int64_t)(pm_test_rng_u32(&rng) % (uint32_t)range) * scale;
                n++;
            }
        } else if (trial < 13) {
            int side = trial - 6; /* full cube lattices 2..6: every cell co-spherical */
            for (int i = 0; i < side * side * side; i++)
                pts[n++] = (pm_dt3_point){(i % side) * 1000, (i / side % side) * 1000, (i / side / side) * 1000};
        } else if (trial < 17) {
            /* Points on a few planes and lines. */
            for (int i = 0; i < 60; i++) {
                int64_t u = pm_test_rng_u32(&rng) % 64, v = pm_test_rng_u32(&rng) % 64;
                int plane = (int)(pm_test_rng_u32(&rng) % 3);
                pts[n++] = plane == 0 ? (pm_dt3_point){u * 1000, v * 1000, 0}
                                      : (plane == 1 ? (pm_dt3_point){u * 1000, 0, v * 1000} : (pm_dt3_point){u * 500, u * 500, v * 1000});
            }
        } else {
            /* Near a sphere: many almost co-spherical points on the hull. */
            for (int i = 0; i < 80; i++) {
                double th = 6.2831853 * pm_test_rng_float(&rng), u = 2.0 * pm_test_rng_float(&rng) - 1.0, r = sqrt(1 - u * u);
                pts[n++] = (pm_dt3_point){(int64_t)(5000 + 4000 * r * cos(th)), (int64_t)(5000 + 4000 * r * sin(th)),
                                          (int64_t)(5000 + 4000 * u)};
            }
        }
        qsort(pts, (size_t)n, sizeof pts[0], cmp_point);
        int m = 0;
        for (int i = 0; i < n; i++)
            if (m == 0 || cmp_point(&pts[i], &pts[m - 1]) != 0) pts[m++] = pts[i];
        pm_tetrahedralization t, t2;
        pm_error e;
        pm_result r = pm_delaunay3_build(&t, pts, m, NULL, &e);
        if (r != PM_OK) fail_msg("trial %d (%d points): %s", trial, m, e.message);
        check_tets(pts, m, &t);
        /* Deterministic: the same points give the same cells. */
        PM_ASSERT_OK(pm_delaunay3_build(&t2, pts, m, NULL, NULL));
        assert_int_equal(t.tet_count, t2.tet_count);
        assert_memory_equal(t.vertices, t2.vertices, sizeof(int32_t) * 4 * (size_t)t.tet_count);
        pm_delaunay3_destroy(&t);
        pm_delaunay3_destroy(&t2);
    }
    pm_tetrahedralization t;
    pm_error e;
    pm_dt3_point flat[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {2, 3, 0}};
    assert_int_equal(pm_delaunay3_build(&t, flat, 5, NULL, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "coplanar"));
    assert_int_equal(pm_delaunay3_build(&t, flat, 3, NULL, &e), PM_ERR_INVALID_ARGUMENT);
    /* A point given twice (the blend space refuses duplicates before this; called directly, the
     * second copy lies in no cell's open sphere): an error naming it, nothing left allocated. */
    pm_dt3_point twice[10] = {{0, 0, 0}, {1000, 0, 0}, {0, 1000, 0}, {1000, 1000, 0}, {0, 0, 1000},
                              {1000, 0, 1000}, {0, 1000, 1000}, {1000, 1000, 1000}, {300, 400, 500}, {300, 400, 500}};
    for (int copy = 0; copy < 2; copy++) {
        if (copy) twice[9] = twice[3]; /* a corner of the hull this time */
        pm_test_allocator counter = {0, 0, -1, 0, 0};
        pm_allocator a = pm_test_allocator_hooks(&counter);
        assert_int_equal(pm_delaunay3_build(&t, twice, 10, &a, &e), PM_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(e.message, "lies in no cell (duplicate point?)"));
        assert_int_equal(counter.allocs, counter.frees);
    }
}

/* Out of memory at any allocation of a build big enough to grow its cell arrays several times
 * (300 points, over a thousand cells): refused alone, or with every later one refused too, each
 * is PM_ERR_OUT_OF_MEMORY with nothing left allocated, and the build then succeeds again. */
static void test_delaunay3_out_of_memory(void **state) {
    (void)state;
    pm_test_rng rng = {404};
    static pm_dt3_point pts[300];
    for (int i = 0; i < 300; i++)
        pts[i] = (pm_dt3_point){(int64_t)(pm_test_rng_u32(&rng) % 1000000u), (int64_t)(pm_test_rng_u32(&rng) % 1000000u),
                                (int64_t)(pm_test_rng_u32(&rng) % 1000000u)};
    qsort(pts, 300, sizeof pts[0], cmp_point);
    int n = 0;
    for (int i = 0; i < 300; i++)
        if (n == 0 || cmp_point(&pts[i], &pts[n - 1]) != 0) pts[n++] = pts[i];
    pm_test_refusal count = {0, 0, 0};
    pm_allocator a = pm_test_refusal_hooks(&count);
    pm_tetrahedralization good;
    PM_ASSERT_OK(pm_delaunay3_build(&good, pts, n, &a, NULL));
    assert_true(good.tet_count > 1024);
    assert_true(count.live > 0); /* the result's arrays come from the caller's allocator too */
    const long requests = count.requests;
    assert_true(requests > 10);
    for (long k = 1; k <= requests; k++) {
        pm_test_refusal one = {0, k, 0};
        pm_allocator ao = pm_test_refusal_hooks(&one);
        pm_tetrahedralization t;
        pm_error e;
        assert_int_equal(pm_delaunay3_build(&t, pts, n, &ao, &e), PM_ERR_OUT_OF_MEMORY);
        assert_int_equal(one.live, 0);
        pm_test_allocator counter = {0, 0, k - 1, 0, 0};
        pm_allocator ac = pm_test_allocator_hooks(&counter);
        assert_int_equal(pm_delaunay3_build(&t, pts, n, &ac, &e), PM_ERR_OUT_OF_MEMORY);
        assert_int_equal(counter.allocs, counter.frees);
    }
    pm_tetrahedralization again;
    PM_ASSERT_OK(pm_delaunay3_build(&again, pts, n, &a, NULL));
    assert_int_equal(again.tet_count, good.tet_count);
    assert_memory_equal(again.vertices, good.vertices, sizeof(int32_t) * 4 * (size_t)good.tet_count);
    pm_delaunay3_destroy(&again);
    pm_delaunay3_destroy(&good);
    assert_int_equal(count.live, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predicates),
        cmocka_unit_test(test_delaunay3),
        cmocka_unit_test(test_delaunay3_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
