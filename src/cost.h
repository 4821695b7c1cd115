/* The one cost kernel every search mode uses, so that all modes agree to the last bit:
 * cost = sum over dimensions of ((q - x) * w)^2, accumulated in eight lanes (dimension i in
 * lane i % 8) and reduced as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)). Rows are
 * padded to a multiple of 8 with zeros (and zero weights). Every build of the kernel - two
 * SSE halves on baseline x86-64, one AVX register in the AVX2 clone, two rows a register in the
 * AVX-512 scans (src/search_kernels_avx512.c), NEON on ARM - performs the same lane operations,
 * so results are identical on every machine. The batched form computes
 * several rows with exactly the per-row operations, interleaved for instruction-level
 * parallelism. */
#ifndef PM_COST_H
#define PM_COST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define PM_ALWAYS_INLINE __attribute__((always_inline))
#else
#define PM_ALWAYS_INLINE
#endif

#if defined(__GNUC__) || defined(__clang__)
typedef float pm_v8f __attribute__((vector_size(32)));
typedef int32_t pm_v8i __attribute__((vector_size(32)));
typedef float pm_v4f __attribute__((vector_size(16)));
typedef int32_t pm_v4i __attribute__((vector_size(16)));

/* Unaligned, aliasing-safe loads. Macros rather than functions: 32-byte vectors passed by
 * value would change the ABI between the baseline and AVX2 builds of a function. */
typedef float pm_v8f_u __attribute__((vector_size(32), aligned(4), may_alias));
typedef float pm_v4f_u __attribute__((vector_size(16), aligned(4), may_alias));
#define pm_v8_load(p) (*(const pm_v8f_u *)(const void *)(p))
#define pm_v4_load(p) (*(const pm_v4f_u *)(const void *)(p))
/* Bit i set where lane i of a 4-lane comparison result is true (movmskps on x86). */
#if defined(__x86_64__) || defined(__SSE__)
#include <xmmintrin.h>
#define pm_v4_mask(m) ((unsigned)_mm_movemask_ps((__m128)(m)))
#else
#define pm_v4_mask(m) ((unsigned)(((m)[0] & 1) | ((m)[1] & 1) << 1 | ((m)[2] & 1) << 2 | ((m)[3] & 1) << 3))
#endif
#define pm_v8_reduce(a) ((((a)[0] + (a)[1]) + ((a)[2] + (a)[3])) + (((a)[4] + (a)[5]) + ((a)[6] + (a)[7])))

PM_ALWAYS_INLINE static inline float pm_cost_row(const float *q, const float *x, const float *w, int stride) {
    pm_v8f acc = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < stride; i += 8) {
        pm_v8f d = (pm_v8_load(q + i) - pm_v8_load(x + i)) * pm_v8_load(w + i);
        acc += d * d;
    }
    return pm_v8_reduce(acc);
}

/* Eight rows at once, reduced with a pairwise-add tree across the eight accumulators: every
 * row's sum is still ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), computed lane-parallel
 * (the tree is what AVX's horizontal adds do). */
#if defined(__clang__)
#define PM_SHUF2(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define PM_SHUF2(a, b, ...) __builtin_shuffle(a, b, (pm_v8i){__VA_ARGS__})
#endif
#define PM_PAIRSUM(a, b) (PM_SHUF2(a, b, 0, 2, 8, 10, 4, 6, 12, 14) + PM_SHUF2(a, b, 1, 3, 9, 11, 5, 7, 13, 15))

PM_ALWAYS_INLINE static inline void pm_cost_rows8(float out[8], const float *q, const float *x, const float *w, int stride) {
    pm_v8f a[8];
    for (int r = 0; r < 8; r++) a[r] = (pm_v8f){0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < stride; i += 8) {
        pm_v8f qq = pm_v8_load(q + i), ww = pm_v8_load(w + i);
        for (int r = 0; r < 8; r++) {
            pm_v8f d = (qq - pm_v8_load(x + (size_t)r * stride + i)) * ww;
            a[r] += d * d;
        }
    }
    pm_v8f h01 = PM_PAIRSUM(a[0], a[1]), h23 = PM_PAIRSUM(a[2], a[3]);
    pm_v8f h45 = PM_PAIRSUM(a[4], a[5]), h67 = PM_PAIRSUM(a[6], a[7]);
    pm_v8f g0 = PM_PAIRSUM(h01, h23), g1 = PM_PAIRSUM(h45, h67);
    pm_v8f sum = PM_SHUF2(g0, g1, 0, 1, 2, 3, 8, 9, 10, 11) + PM_SHUF2(g0, g1, 4, 5, 6, 7, 12, 13, 14, 15);
    memcpy(out, &sum, sizeof sum);
}

/* Bit r set where c[r] + addend[r] <= lim: eight rows' costs tested against a bound at once. */
PM_ALWAYS_INLINE static inline unsigned pm_rows8_mask(const float c[8], const float *addend, float lim) {
    const pm_v4f l = {lim, lim, lim, lim};
    return pm_v4_mask(pm_v4_load(c) + pm_v4_load(addend) <= l) |
           pm_v4_mask(pm_v4_load(c + 4) + pm_v4_load(addend + 4) <= l) << 4;
}
#else
PM_ALWAYS_INLINE static inline float pm_cost_row(const float *q, const float *x, const float *w, int stride) {
    float l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < stride; i += 8)
        for (int k = 0; k < 8; k++) {
            float d = (q[i + k] - x[i + k]) * w[i + k];
            l[k] += d * d;
        }
    return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}
static inline void pm_cost_rows8(float out[8], const float *q, const float *x, const float *w, int stride) {
    for (int r = 0; r < 8; r++) out[r] = pm_cost_row(q, x + (size_t)r * stride, w, stride);
}
static inline unsigned pm_rows8_mask(const float c[8], const float *addend, float lim) {
    unsigned pass = 0;
    for (int r = 0; r < 8; r++) pass |= (unsigned)(c[r] + addend[r] <= lim) << r;
    return pass;
}
#endif

#endif
