/* The database scans, AVX-512 build (F and VL, no FMA): the AVX2 build's leaf-block bounds, and an
 * 8-row cost kernel that holds two rows in each 512-bit register - row r in the low eight lanes,
 * row r + 1 in the high eight. Each lane still sums its own dimensions in the same order as
 * cost.h's kernel, and the eight rows are reduced by the same tree, so the costs are the
 * baseline build's bits; the subtractions, products and sums per row are halved, which is what
 * brute force waits on where the matrix sits in cache (13-20% off its scans of the benchmark's
 * databases on an AVX-512 AMD EPYC, docs/BENCHMARKS.md). Picked at run time by src/search.c. */
#include "search_internal.h"

#if defined(PM_HAVE_AVX512_KERNELS)
#include <immintrin.h> /* before the target region: the intrinsics carry their own targets */

PM_AVX512_BEGIN

#include "search_block_keys_x86.h"

/* Rows r and r + 1, lanes i..i+7 of each, in one register. */
PM_ALWAYS_INLINE static inline __m512 two_rows(const float *x, int stride, int i) {
    __m256d lo = _mm256_castps_pd(_mm256_loadu_ps(x + i)), hi = _mm256_castps_pd(_mm256_loadu_ps(x + stride + i));
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(lo), hi, 1));
}

/* The reduction of cost.h's kernel over four registers of two rows each. */
PM_ALWAYS_INLINE static inline void reduce_rows8(float out[8], const __m512 acc[4]) {
    pm_v8f a[8];
    for (int p = 0; p < 4; p++) {
        __m256 lo = _mm512_castps512_ps256(acc[p]);
        __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[p]), 1));
        memcpy(&a[2 * p], &lo, sizeof lo);
        memcpy(&a[2 * p + 1], &hi, sizeof hi);
    }
    pm_v8f h01 = PM_PAIRSUM(a[0], a[1]), h23 = PM_PAIRSUM(a[2], a[3]);
    pm_v8f h45 = PM_PAIRSUM(a[4], a[5]), h67 = PM_PAIRSUM(a[6], a[7]);
    pm_v8f g0 = PM_PAIRSUM(h01, h23), g1 = PM_PAIRSUM(h45, h67);
    pm_v8f sum = PM_SHUF2(g0, g1, 0, 1, 2, 3, 8, 9, 10, 11) + PM_SHUF2(g0, g1, 4, 5, 6, 7, 12, 13, 14, 15);
    memcpy(out, &sum, sizeof sum);
}

PM_ALWAYS_INLINE static inline __m512 broadcast8(const float *p) {
    return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_loadu_ps(p))));
}

/* One step of a pair's sums: lanes i..i+7 of rows r and r + 1 against the query's (qq) with
 * their weights (ww), both in each half. */
PM_ALWAYS_INLINE static inline __m512 pair_step(__m512 a, const float *r, int stride, int i, __m512 qq, __m512 ww) {
    __m512 d = _mm512_mul_ps(_mm512_sub_ps(qq, two_rows(r, stride, i)), ww);
    return _mm512_add_ps(a, _mm512_mul_ps(d, d));
}

/* cost.h's pm_cost_rows8, two rows a register: per lane and row the same operations in the
 * same order, then the halves taken apart for the same reduction tree. */
PM_ALWAYS_INLINE static inline void cost_rows8_avx512(float out[8], const float *q, const float *x, const float *w, int stride) {
    __m512 acc[4];
    for (int p = 0; p < 4; p++) {
        const float *r = x + 2 * (size_t)p * stride;
        __m512 a = _mm512_setzero_ps();
        for (int i = 0; i < stride; i += 8) a = pair_step(a, r, stride, i, broadcast8(q + i), broadcast8(w + i));
        acc[p] = a;
    }
    reduce_rows8(out, acc);
}

#define PM_COST_ROWS8 cost_rows8_avx512
#include "search_kernels.h"

void pm_search_exact_avx512(search_state *s, const float *qz, heap_item *heap) { exact_walk(s, qz, heap); }

/* Brute force with rows of S blocks of 8 (S a constant where it is called): the query and
 * weights stay in registers across the scan. */
PM_ALWAYS_INLINE static inline void scan_fixed(search_state *s, const int S) {
    const pm_database *db = s->db;
    const uint32_t n = db->header->searchable_vectors;
    const int stride = 8 * S;
    __m512 qq[4], ww[4];
    for (int i = 0; i < S; i++) qq[i] = broadcast8(s->qn + 8 * i), ww[i] = broadcast8(s->w + 8 * i);
    uint32_t v = 0;
    for (; v + 8 <= n; v += 8) {
        const float *x = pm_db_row(db, v);
        __m512 acc[4];
        for (int p = 0; p < 4; p++) {
            const float *r = x + 2 * (size_t)p * stride;
            __m512 a = _mm512_setzero_ps();
            for (int i = 0; i < S; i++) a = pair_step(a, r, stride, 8 * i, qq[i], ww[i]);
            acc[p] = a;
        }
        float c[8];
        reduce_rows8(c, acc);
        for (unsigned pass = pm_rows8_mask(c, db->vec_min_addend + v, s->best); pass; pass &= pass - 1) {
            int k = __builtin_ctz(pass);
            consider_vector(s, v + (uint32_t)k, c[k]);
        }
    }
    for (; v < n; v++) consider_vector(s, v, pm_cost_row(s->qn, pm_db_row(db, v), s->w, stride));
    s->candidates += (int)n;
}

/* One function a width, each its own small frame (inlined into one, their stack slots add up). */
#define PM_SCAN_WIDTH(S)                                                                                               \
    __attribute__((noinline)) static void scan_width_##S(search_state *s) { scan_fixed(s, S); }
PM_SCAN_WIDTH(1)
PM_SCAN_WIDTH(2)
PM_SCAN_WIDTH(3)
PM_SCAN_WIDTH(4)

void pm_search_bruteforce_avx512(search_state *s) {
    switch (s->db->stride) {
    case 8: scan_width_1(s); break;
    case 16: scan_width_2(s); break;
    case 24: scan_width_3(s); break;
    case 32: scan_width_4(s); break;
    default: bruteforce_scan(s); break; /* wider rows: the query from memory, each block */
    }
}

PM_AVX512_END

#else
typedef int pm_search_kernels_avx512_unused; /* ISO C: a translation unit must declare something */
#endif
