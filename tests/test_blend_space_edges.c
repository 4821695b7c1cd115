/* Blend-space weights at the edges of the rules: a query on an interior sample of a 1D space, and
 * weights too small to keep (test_blend_space.c has the properties in general). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blend_space_internal.h"
#include "blend_support.h"

enum { JOINTS = 5 };

/* Segments are half-open, [s_k, s_k+1): a query exactly on interior sample k is in segment k and
 * plays that sample alone, as the brute-force reference says. */
static void test_line_query_on_a_sample(void **state) {
    (void)state;
    pm_test_blend_fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 4);
    float xs[4][2] = {{0, 0}, {0.5f, 0}, {1, 0}, {1.5f, 0}};
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 1, xs, NULL, 4, NULL));
    for (int k = 1; k < 3; k++) {
        pm_blend_space_weights w, b;
        float p = xs[k][0];
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, &p, NULL));
        PM_ASSERT_OK(pm_blend_space_weights_brute(&b, s, &p, NULL));
        assert_int_equal(w.count, 1);
        assert_true(w.weights[0] == 1.0f);
        assert_false(w.outside);
        assert_int_equal(w.cell_kind, PM_BLEND_CELL_SEGMENT);
        assert_int_equal(w.cell, k);
        assert_int_equal(b.cell, k);
        float d[4];
        pm_test_dense_weights(d, 4, s, &w);
        assert_true(d[k] == 1.0f);
    }
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

/* A sample whose weight would be below 1e-6 is dropped (it would cost a sampling job for no
 * visible effect) and the others renormalised; at 1e-5 it is kept. */
static void test_negligible_weights_are_dropped(void **state) {
    (void)state;
    pm_test_blend_fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 2);
    float xs[2][2] = {{0, 0}, {1, 0}};
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 1, xs, NULL, 2, NULL));
    pm_blend_space_weights w;
    float p = 3e-7f;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, &p, NULL));
    assert_int_equal(w.count, 1);
    assert_true(w.weights[0] == 1.0f);
    p = 1e-5f;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, &p, NULL));
    assert_int_equal(w.count, 2);
    assert_float_equal(w.weights[0] + w.weights[1], 1.0f, 1e-6);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
    /* In the triangle (0, 0), (1, 0), (0, 1), 9e-7 above the bottom edge: the top sample's 9e-7 is
     * dropped and the two left sum to 1 again (not 1 - 9e-7). */
    pm_test_blend_fixture tri;
    s = pm_test_blend_triangle_space(&tri, JOINTS);
    float q[2] = {0.5f, 9e-7f};
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, q, NULL));
    assert_int_equal(w.count, 2);
    if (fabs((double)w.weights[0] + (double)w.weights[1] - 1.0) > 2e-7)
        fail_msg("weights %.9g + %.9g do not sum to 1", (double)w.weights[0], (double)w.weights[1]);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&tri);
}

/* Weights list their samples by coordinates (axis 0 first), whichever order the cell holds its
 * vertices in and the samples were given in. */
static void test_weights_listed_by_coordinates(void **state) {
    (void)state;
    pm_test_blend_fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 7);
    const float pts[7][2] = {{1, 1}, {0, 0}, {0.5f, 0.2f}, {1, 0}, {0, 1}, {0.3f, 0.7f}, {0.8f, 0.5f}};
    const int orders[2][7] = {{0, 1, 2, 3, 4, 5, 6}, {6, 4, 2, 0, 5, 3, 1}};
    for (int o = 0; o < 2; o++) {
        pm_blend_space *s;
        PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 2, pts, orders[o], 7, NULL));
        for (int i = 0; i <= 20; i++)
            for (int j = 0; j <= 20; j++) {
                float q[2] = {(float)i / 20.0f, (float)j / 20.0f};
                pm_blend_space_weights w;
                PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, q, NULL));
                for (int k = 1; k < w.count; k++) {
                    const float *a = pts[orders[o][w.samples[k - 1]]], *b = pts[orders[o][w.samples[k]]];
                    if (!(a[0] < b[0] || (a[0] == b[0] && a[1] < b[1])))
                        fail_msg("order %d, query (%g, %g): sample (%g, %g) listed before (%g, %g)", o, (double)q[0],
                                 (double)q[1], (double)a[0], (double)a[1], (double)b[0], (double)b[1]);
                }
            }
        pm_blend_space_destroy(s);
    }
    pm_test_blend_fixture_free(&fx);
}

/* A query beyond an axis's range is clamped onto it and reported outside, also where the clamped
 * point is a sample (samples at the axis ends -1 and 2). */
static void test_clamped_query_is_outside(void **state) {
    (void)state;
    pm_test_blend_fixture fx;
    pm_test_blend_fixture_swing(&fx, JOINTS, 2);
    float xs[2][2] = {{-1, 0}, {2, 0}};
    pm_blend_space *s;
    PM_ASSERT_OK(pm_test_blend_make_space(&s, &fx, 1, xs, NULL, 2, NULL));
    pm_blend_space_weights w;
    float p = 3.0f;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, &p, NULL));
    assert_true(w.outside);
    assert_int_equal(w.count, 1);
    assert_float_equal(w.params[0], 2.0f, 1e-6);
    p = 2.0f;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, &p, NULL));
    assert_false(w.outside);
    pm_blend_space_destroy(s);
    pm_test_blend_fixture_free(&fx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_query_on_a_sample),
        cmocka_unit_test(test_negligible_weights_are_dropped),
        cmocka_unit_test(test_weights_listed_by_coordinates),
        cmocka_unit_test(test_clamped_query_is_outside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
