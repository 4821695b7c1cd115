/* pm_select_by_key on its own. The trees' splits and therefore the database bytes depend on
 * exactly which element lands at rank k when keys tie (repeated feature values are common:
 * padding, clamped curves, de-duplicated poses), so the contract of select.h - rank under the
 * total order (key, index) - is checked element by element, not just "some k-th key". */
#include <stdlib.h>
#include <string.h>

#include "select.h"
#include "support.h"

static const float *g_key;
static uint32_t g_stride;

static int by_key_then_index(const void *pa, const void *pb) {
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    float ka = g_key[(size_t)a * g_stride], kb = g_key[(size_t)b * g_stride];
    if (ka != kb) return ka < kb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Selects rank k of n (from a shuffled start unless rng is NULL) and checks the whole partition
 * against a full sort. */
static void check_select(const float *key, uint32_t stride, uint32_t n, uint32_t k, pm_test_rng *rng) {
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx), *sorted = malloc((n ? n : 1) * sizeof *sorted);
    uint32_t *rank = malloc((n ? n : 1) * sizeof *rank);
    assert_non_null(idx);
    assert_non_null(sorted);
    assert_non_null(rank);
    for (uint32_t i = 0; i < n; i++) idx[i] = i;
    for (uint32_t i = n; rng && i > 1; i--) {
        uint32_t j = pm_test_rng_u32(rng) % i, t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
    memcpy(sorted, idx, n * sizeof *idx);
    g_key = key;
    g_stride = stride;
    qsort(sorted, n, sizeof *sorted, by_key_then_index);
    for (uint32_t i = 0; i < n; i++) rank[sorted[i]] = i;

    pm_select_by_key(idx, n, k, key, stride);

    /* Still a permutation of 0..n-1. */
    uint8_t *seen = calloc(n ? n : 1, 1);
    assert_non_null(seen);
    for (uint32_t i = 0; i < n; i++) {
        assert_true(idx[i] < n);
        assert_false(seen[idx[i]]);
        seen[idx[i]] = 1;
    }
    free(seen);
    assert_int_equal(idx[k], sorted[k]);
    for (uint32_t i = 0; i < k; i++) assert_true(rank[idx[i]] < k);
    for (uint32_t i = k + 1; i < n; i++) assert_true(rank[idx[i]] > k);
    free(idx);
    free(sorted);
    free(rank);
}

static void test_ties_rank_by_index(void **state) {
    (void)state;
    pm_test_rng rng = {12345};
    /* Keys interleaved with other values (stride 3, as a coordinate of a point), few distinct
     * values so that every rank sits in a run of ties. */
    enum { N = 70, STRIDE = 3 };
    float key[N * STRIDE];
    for (uint32_t i = 0; i < N * STRIDE; i++) key[i] = (float)((i * 7u) % 5u) - 99.0f * (float)(i % STRIDE);
    for (uint32_t n = 1; n <= N; n++)
        for (uint32_t k = 0; k < n; k++) check_select(key, STRIDE, n, k, &rng);
}

static void test_all_equal_and_distinct(void **state) {
    (void)state;
    pm_test_rng rng = {777};
    enum { N = 257 };
    float same[N], distinct[N];
    for (uint32_t i = 0; i < N; i++) {
        same[i] = 1.5f;
        distinct[i] = pm_test_rng_float(&rng) * 10.0f - 5.0f;
    }
    /* All tied: the order is the index order alone. */
    for (uint32_t k = 0; k < N; k += 16) check_select(same, 1, N, k, &rng);
    check_select(same, 1, N, N - 1, &rng);
    for (uint32_t k = 0; k < N; k += 7) check_select(distinct, 1, N, k, &rng);
    check_select(distinct, 1, N, N - 1, &rng);
    /* Already sorted and reversed inputs (the median-of-three's worst shapes). */
    for (uint32_t i = 0; i < N; i++) distinct[i] = (float)i;
    for (uint32_t k = 0; k < N; k += 31) check_select(distinct, 1, N, k, NULL);
    for (uint32_t i = 0; i < N; i++) distinct[i] = (float)(N - i);
    for (uint32_t k = 0; k < N; k += 31) check_select(distinct, 1, N, k, NULL);
    for (uint32_t k = 0; k < N; k += 31) check_select(same, 1, N, k, NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ties_rank_by_index),
        cmocka_unit_test(test_all_equal_and_distinct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
