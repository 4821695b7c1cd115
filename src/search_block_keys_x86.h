/* Private: the x86 block_keys() for src/search_kernels.h (see there) with AVX2 intrinsics, a leaf
 * block's 8 lanes in one register. Included by the AVX2 and AVX-512 builds of the scans, inside
 * their target regions, so that both compute the baseline build's bits. */
#ifndef PM_SEARCH_BLOCK_KEYS_X86_H
#define PM_SEARCH_BLOCK_KEYS_X86_H

#include "search_internal.h"

/* <immintrin.h> comes first in the including file, outside its target region. */

static inline unsigned block_keys(float keys[PM_BT_BLOCK], const float *block, const float *qz, int rows, float r2,
                                  const float *addend, float lim) {
    /* Pointer-stepped, the query lanes broadcast straight from memory: the loop is short, and its
     * instruction count is what a block costs. */
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, k;
    const __m256 limv = _mm256_set1_ps(lim), r2v = _mm256_set1_ps(r2);
    const float *q = qz, *half = qz + PM_BT_EARLY_ROWS(rows), *pairs = qz + (rows & ~1);
    for (const float *stop = half;; stop = pairs) {
        for (; q < stop; q += 2, block += 2 * PM_BT_BLOCK) {
            __m256 d0 = _mm256_sub_ps(_mm256_broadcast_ss(q), _mm256_loadu_ps(block));
            __m256 d1 = _mm256_sub_ps(_mm256_broadcast_ss(q + 1), _mm256_loadu_ps(block + PM_BT_BLOCK));
            a0 = _mm256_add_ps(a0, _mm256_mul_ps(d0, d0));
            a1 = _mm256_add_ps(a1, _mm256_mul_ps(d1, d1));
        }
        if (stop == pairs) break;
        /* Sums of squares only grow: a block already past the limit halfway stays past it. */
        k = _mm256_add_ps(_mm256_mul_ps(_mm256_add_ps(a0, a1), r2v), _mm256_loadu_ps(addend));
        if (!_mm256_movemask_ps(_mm256_cmp_ps(k, limv, _CMP_LE_OQ))) return 0;
    }
    if (rows & 1) {
        __m256 d0 = _mm256_sub_ps(_mm256_broadcast_ss(q), _mm256_loadu_ps(block));
        a0 = _mm256_add_ps(a0, _mm256_mul_ps(d0, d0));
    }
    k = _mm256_add_ps(_mm256_mul_ps(_mm256_add_ps(a0, a1), r2v), _mm256_loadu_ps(addend));
    _mm256_storeu_ps(keys, k);
    return (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(k, limv, _CMP_LE_OQ));
}

#endif
