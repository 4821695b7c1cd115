/* PCA: the Jacobi eigen-solver on known matrices, and the blocked covariance. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pca.h"
#include "support.h"

#define assert_close(a, b, eps) \
    do { \
        double a_ = (a), b_ = (b); \
        if (!(fabs(a_ - b_) <= (eps))) fail_msg("%.17g != %.17g (eps %g)", a_, b_, (double)(eps)); \
    } while (0)

static void test_known_2x2(void **state) {
    (void)state;
    double a[4] = {2, 1, 1, 2}, values[2], vectors[4];
    pm_symmetric_eigen(a, 2, values, vectors);
    assert_close(values[0], 3.0, 1e-12);
    assert_close(values[1], 1.0, 1e-12);
    /* Largest-magnitude component positive: (1, 1)/sqrt2 and (1, -1)/sqrt2 up to order. */
    assert_close(vectors[0], 0.70710678118654752440, 1e-12);
    assert_close(vectors[1], 0.70710678118654752440, 1e-12);
    assert_close(fabs(vectors[2]), 0.70710678118654752440, 1e-12);
    assert_close(vectors[2] + vectors[3], 0.0, 1e-12);
}

static void test_diagonal_and_ties(void **state) {
    (void)state;
    double a[9] = {1, 0, 0, 0, 5, 0, 0, 0, 5}, values[3], vectors[9];
    pm_symmetric_eigen(a, 3, values, vectors);
    assert_close(values[0], 5.0, 1e-12);
    assert_close(values[1], 5.0, 1e-12);
    assert_close(values[2], 1.0, 1e-12);
    /* Equal eigenvalues stay in index order: e1 before e2. */
    assert_close(vectors[0 * 3 + 1], 1.0, 1e-12);
    assert_close(vectors[1 * 3 + 2], 1.0, 1e-12);
    assert_close(vectors[2 * 3 + 0], 1.0, 1e-12);
}

static void test_random_symmetric(void **state) {
    (void)state;
    pm_test_rng rng = {42};
    for (int n = 1; n <= 40; n += 7) {
        double *a = malloc((size_t)n * n * sizeof(double)), *orig = malloc((size_t)n * n * sizeof(double));
        double *values = malloc((size_t)n * sizeof(double)), *vectors = malloc((size_t)n * n * sizeof(double));
        for (int i = 0; i < n; i++)
            for (int j = i; j < n; j++) a[i * n + j] = a[j * n + i] = pm_test_rng_normal(&rng);
        memcpy(orig, a, (size_t)n * n * sizeof(double));
        pm_symmetric_eigen(a, n, values, vectors);
        for (int k = 0; k < n; k++) {
            if (k > 0) assert_true(values[k] <= values[k - 1]);
            const double *v = vectors + (size_t)k * n;
            /* The sign convention (pca.h): the largest-magnitude component is positive. */
            int arg = 0;
            for (int i = 1; i < n; i++)
                if (fabs(v[i]) > fabs(v[arg])) arg = i;
            assert_true(v[arg] > 0.0);
            for (int i = 0; i < n; i++) {
                double av = 0.0;
                for (int j = 0; j < n; j++) av += orig[i * n + j] * v[j];
                assert_close(av, values[k] * v[i], 1e-9);
            }
            for (int m = 0; m < n; m++) {
                double dot = 0.0;
                for (int i = 0; i < n; i++) dot += v[i] * vectors[(size_t)m * n + i];
                assert_close(dot, m == k ? 1.0 : 0.0, 1e-9);
            }
        }
        free(a);
        free(orig);
        free(values);
        free(vectors);
    }
}

static void test_covariance(void **state) {
    (void)state;
    /* Points on a line y = 2x with x in {-1, 0, 1}: var x = 2/3, cov = 4/3, var y = 8/3. */
    float rows[3 * 4] = {-1, -2, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0};
    double mean[2], cov[4];
    PM_ASSERT_OK(pm_covariance(mean, cov, rows, 3, 2, 4, NULL, 1, NULL, NULL));
    assert_close(mean[0], 0.0, 1e-12);
    assert_close(cov[0], 2.0 / 3.0, 1e-9);
    assert_close(cov[1], 4.0 / 3.0, 1e-9);
    assert_close(cov[3], 8.0 / 3.0, 1e-9);
    double values[2], vectors[4];
    pm_symmetric_eigen(cov, 2, values, vectors);
    assert_close(values[1], 0.0, 1e-9);
    assert_close(vectors[1] / vectors[0], 2.0, 1e-9);
    /* Many rows: the same bits for 1, 2 and 7 threads. */
    const int n = 50000, d = 9;
    float *big = malloc((size_t)n * d * sizeof(float));
    pm_test_rng rng = {7};
    for (int i = 0; i < n * d; i++) big[i] = pm_test_rng_normal(&rng) * (float)(1 + i % d);
    float scale[9] = {1, 2, 0.5f, 1, 1, 1, 3, 1, 0};
    double m1[9], c1[81], m2[9], c2[81];
    PM_ASSERT_OK(pm_covariance(m1, c1, big, (size_t)n, d, (size_t)d, scale, 1, NULL, NULL));
    for (int threads = 2; threads <= 7; threads += 5) {
        PM_ASSERT_OK(pm_covariance(m2, c2, big, (size_t)n, d, (size_t)d, scale, threads, NULL, NULL));
        assert_memory_equal(m1, m2, sizeof m1);
        assert_memory_equal(c1, c2, sizeof c1);
    }
    assert_close(c1[8 * 9 + 8], 0.0, 1e-12); /* a zero weight removes a dimension */
    pm_error err;
    assert_int_equal(pm_covariance(m1, c1, big, 1, 0, 1, NULL, 1, NULL, &err), PM_ERR_LIMIT);
    free(big);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_2x2),
        cmocka_unit_test(test_diagonal_and_ties),
        cmocka_unit_test(test_random_symmetric),
        cmocka_unit_test(test_covariance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
