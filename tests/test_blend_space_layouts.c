/* 2D blend spaces over awkward sample layouts (an audit's sweep, kept): over a thousand random
 * samples, a co-circular lattice, points on a circle with and without its centre, a long collinear
 * run with one sample off it, two rows, a nearly flat parabola, a zigzag a millionth high, and
 * axes of 1e30 and 1e-30. On each: every sample reproduces itself, weights are non-negative and
 * sum to 1, lines swept through the space (and beyond its hull) show no jump in any weight, and a
 * shuffled copy of the space gives the same weights bit for bit, at random points and at the
 * midpoints of sample pairs (on cell edges wherever the pair is an edge). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blend_support.h"

#define MAX_SAMPLES 1300

typedef struct layout {
    float (*p)[2];
    int n;
} layout;

static pm_clip g_clip;
static pm_skeleton g_sk;

static pm_blend_space *make(const layout *l, const int *order) {
    pm_blend_space *s;
    pm_error e;
    if (pm_test_blend_points_space(&s, &g_clip, 2, &l->p[0][0], 2, order, l->n, 0.0f, NULL, &e) != PM_OK)
        fail_msg("%d samples: %s", l->n, e.message);
    return s;
}

static void dense_at(float *out, const pm_blend_space *s, int n, const float *p) {
    pm_blend_space_weights w;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, p, NULL));
    pm_test_check_weights(s, &w);
    pm_test_dense_weights(out, n, s, &w);
}

static float largest_change(const float *a, const float *b, int n) {
    float m = 0.0f;
    for (int i = 0; i < n; i++) m = fmaxf(m, fabsf(a[i] - b[i]));
    return m;
}

/* A step of a sweep whose weights change a lot is bisected down to two neighbouring floats; a
 * jump there, well above the change over two grid units (the resolution the weights are computed
 * at) beside it, is a discontinuity. A steep but continuous weight - in a sliver cell - changes as
 * much beside the step as across it. */
static void check_step(const pm_blend_space *s, int n, const float *a, const float *b, double t0, double t1, float *lo,
                       float *hi, float *mid) {
    float q[2], range[2];
    for (int d = 0; d < 2; d++) {
        float lo_d, hi_d;
        PM_ASSERT_OK(pm_blend_space_axis_range(&lo_d, &hi_d, s, d, NULL));
        range[d] = hi_d - lo_d;
    }
    for (int it = 0; it < 60; it++) {
        double t = 0.5 * (t0 + t1);
        for (int d = 0; d < 2; d++) q[d] = (float)(a[d] + t * (b[d] - a[d]));
        dense_at(mid, s, n, q);
        if (largest_change(lo, mid, n) > largest_change(mid, hi, n)) {
            t1 = t;
            memcpy(hi, mid, sizeof(float) * (size_t)n);
        } else {
            t0 = t;
            memcpy(lo, mid, sizeof(float) * (size_t)n);
        }
    }
    float jump = largest_change(lo, hi, n);
    if (jump <= 1e-3f) return;
    /* Two grid units along the sweep, on the axis it crosses fastest. */
    double units = 0.0;
    for (int d = 0; d < 2; d++) units = fmax(units, fabs((double)b[d] - a[d]) / range[d] * 16777216.0);
    double dt = 2.0 / units, beside = 0.0;
    for (int side = 0; side < 2; side++) {
        double ta = side ? t1 : t0 - dt, tb = side ? t1 + dt : t0;
        float qa[2], qb[2];
        for (int d = 0; d < 2; d++) {
            qa[d] = (float)(a[d] + ta * (b[d] - a[d]));
            qb[d] = (float)(a[d] + tb * (b[d] - a[d]));
        }
        dense_at(lo, s, n, qa);
        dense_at(hi, s, n, qb);
        beside = fmax(beside, largest_change(lo, hi, n));
    }
    if (!(jump <= 4.0 * beside + 1e-5))
        fail_msg("weights jump by %g at t = %.17g along (%.9g, %.9g) - (%.9g, %.9g); %g beside", (double)jump, t0,
                 (double)a[0], (double)a[1], (double)b[0], (double)b[1], beside);
}

static void check_layout(const char *what, const layout *l, pm_test_rng *rng) {
    pm_blend_space *s = make(l, NULL);
    int n = l->n;
    float lo[2], hi[2];
    for (int d = 0; d < 2; d++) PM_ASSERT_OK(pm_blend_space_axis_range(&lo[d], &hi[d], s, d, NULL));
    for (int i = 0; i < n; i++) {
        pm_blend_space_weights w;
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, l->p[i], NULL));
        if (w.count != 1 || w.samples[0] != i || w.weights[0] != 1.0f || w.outside)
            fail_msg("%s: sample %d is not reproduced exactly", what, i);
    }
    float *d0 = malloc(sizeof(float) * (size_t)n), *d1 = malloc(sizeof(float) * (size_t)n);
    float *dm = malloc(sizeof(float) * (size_t)n);
    /* Random points of the axis ranges (inside and outside the hull), through the checks of dense_at. */
    for (int k = 0; k < 2000; k++) {
        float q[2] = {lo[0] + pm_test_rng_float(rng) * (hi[0] - lo[0]), lo[1] + pm_test_rng_float(rng) * (hi[1] - lo[1])};
        dense_at(d0, s, n, q);
    }
    /* Sweeps from beyond one side of the ranges to beyond the other. */
    enum { STEPS = 1500 };
    for (int line = 0; line < 8; line++) {
        float a[2], b[2];
        for (int d = 0; d < 2; d++) {
            float w = hi[d] - lo[d];
            a[d] = lo[d] - 0.2f * w + pm_test_rng_float(rng) * 1.4f * w;
            b[d] = lo[d] - 0.2f * w + pm_test_rng_float(rng) * 1.4f * w;
        }
        dense_at(d0, s, n, a);
        for (int k = 1; k <= STEPS; k++) {
            double t = (double)k / STEPS;
            float q[2] = {(float)(a[0] + t * (b[0] - a[0])), (float)(a[1] + t * (b[1] - a[1]))};
            dense_at(d1, s, n, q);
            if (largest_change(d0, d1, n) > 0.05f) {
                float *keep = malloc(sizeof(float) * (size_t)n);
                memcpy(keep, d1, sizeof(float) * (size_t)n);
                check_step(s, n, a, b, (double)(k - 1) / STEPS, t, d0, d1, dm);
                memcpy(d1, keep, sizeof(float) * (size_t)n);
                free(keep);
            }
            float *tmp = d0;
            d0 = d1;
            d1 = tmp;
        }
    }
    /* Listed in another order: the same weights, bit for bit. */
    int *order = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(pm_test_rng_u32(rng) % (uint32_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    pm_blend_space *shuffled = make(l, order);
    for (int k = 0; k < 1500; k++) {
        float q[2];
        if (k < n && k < 1000) {
            int j = (int)(pm_test_rng_u32(rng) % (uint32_t)n);
            q[0] = 0.5f * (l->p[k][0] + l->p[j][0]);
            q[1] = 0.5f * (l->p[k][1] + l->p[j][1]);
        } else {
            q[0] = lo[0] - 0.1f * (hi[0] - lo[0]) + pm_test_rng_float(rng) * 1.2f * (hi[0] - lo[0]);
            q[1] = lo[1] - 0.1f * (hi[1] - lo[1]) + pm_test_rng_float(rng) * 1.2f * (hi[1] - lo[1]);
        }
        dense_at(d0, s, n, q);
        dense_at(d1, shuffled, n, q);
        if (memcmp(d0, d1, sizeof(float) * (size_t)n) != 0)
            fail_msg("%s: the weights at (%.9g, %.9g) depend on the samples' order", what, (double)q[0], (double)q[1]);
    }
    pm_blend_space_destroy(shuffled);
    pm_blend_space_destroy(s);
    free(order);
    free(d0);
    free(d1);
    free(dm);
}

static void test_awkward_layouts(void **state) {
    (void)state;
    pm_test_blend_skeleton(&g_sk, 2);
    pm_test_blend_swing_clip(&g_clip, &g_sk, 3, 0.3f, 0.0f);
    static float p[MAX_SAMPLES][2];
    pm_test_rng rng = {2024};
    layout l = {p, 0};
    const float tau = 6.2831853f;

    for (l.n = 0; l.n < 1200; l.n++) p[l.n][0] = pm_test_rng_float(&rng), p[l.n][1] = pm_test_rng_float(&rng);
    check_layout("1200 random samples", &l, &rng);

    l.n = 0;
    for (int i = 0; i < 30; i++)
        for (int j = 0; j < 30; j++) p[l.n][0] = (float)i, p[l.n][1] = (float)j, l.n++;
    check_layout("a 30 x 30 lattice", &l, &rng);

    for (l.n = 0; l.n < 64; l.n++) p[l.n][0] = cosf(tau * (float)l.n / 64.0f), p[l.n][1] = sinf(tau * (float)l.n / 64.0f);
    check_layout("64 samples on a circle", &l, &rng);
    p[l.n][0] = p[l.n][1] = 0.0f;
    l.n++;
    check_layout("a circle and its centre", &l, &rng);

    for (l.n = 0; l.n < 200; l.n++) p[l.n][0] = (float)l.n, p[l.n][1] = 0.0f;
    p[l.n][0] = 100.0f, p[l.n][1] = 1.0f;
    l.n++;
    check_layout("200 collinear samples and one off the line", &l, &rng);

    for (l.n = 0; l.n < 200; l.n++) p[l.n][0] = (float)(l.n / 2), p[l.n][1] = (float)(l.n % 2);
    check_layout("two rows", &l, &rng);

    for (l.n = 0; l.n < 300; l.n++) {
        float x = (float)l.n / 299.0f;
        p[l.n][0] = x, p[l.n][1] = 1e-4f * x * x;
    }
    check_layout("a nearly flat parabola", &l, &rng);

    for (l.n = 0; l.n < 300; l.n++) p[l.n][0] = (float)l.n / 299.0f, p[l.n][1] = l.n % 2 ? 1e-6f : 0.0f;
    check_layout("a zigzag a millionth high", &l, &rng);

    for (l.n = 0; l.n < 400; l.n++) p[l.n][0] = 1e30f * pm_test_rng_float(&rng), p[l.n][1] = 1e-30f * pm_test_rng_float(&rng);
    check_layout("axes of 1e30 and 1e-30", &l, &rng);

    pm_clip_destroy(&g_clip);
    pm_skeleton_destroy(&g_sk);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_awkward_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
