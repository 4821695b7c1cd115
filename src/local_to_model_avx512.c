/* The local-to-model job's AVX-512 kernels (no FMA: the baseline kernels' bits), picked at run time
 * by src/local_to_model.c on CPUs with AVX-512 F and VL: the matrices kernel below, and the
 * transform kernels of local_to_model_aos.h built again.
 *
 * Why a matrices kernel of its own: the 128-bit kernels compose a joint's matrix column by column,
 * 12 broadcasts, 12 multiplications and 9 additions a joint, and on AVX-512 hosts with a busy
 * sibling thread that instruction count, not the parent-to-child chain, set their time. In a 512-bit register the whole
 * matrix is one value: 3 multiplications and 3 additions a joint. The parent is kept row-major (row
 * r in 128-bit lane r), so that its element (r, k) reaches every lane of row r by an in-lane
 * shuffle, the cheapest there is, and each row of the local's affine matrix is repeated in the four
 * lanes by a broadcast load, which takes no shuffle at all; the result goes to the output's
 * column-major order by one permutation off the chain. Each lane computes PM_L2M_MATRIX_JOINT's
 * expression for its element, (P[r][0] L[0][i] + P[r][1] L[1][i]) + P[r][2] L[2][i], with
 * P[r][3] added to the last product in the translation column, so the bits are every other
 * kernel's (tests/test_local_to_model.c compares them). */
#include "core.h"
#include "posematch/blend.h"
#include "simd.h"

#if defined(PM_SIMD_SSE) && defined(PM_HAVE_AVX512_KERNELS)
#include <immintrin.h>
/* The z terms of aos_compose_rotation / _translation: addsub on -z (see pose_kernels.h). */
#define PM_L2M_ADD_K(a, x, y) ((pm_f4)_mm_addsub_ps((__m128)(a), (__m128)((x) * (y))))
/* pose_kernels.h's inline kernels and everything below are compiled for AVX-512 here; they only
 * run when pm_l2m_avx512_supported(). */
PM_AVX512_BEGIN
#endif

#include "pose_kernels.h"

#if defined(PM_L2M_HAVE_AVX512)
/* The transform output: the AVX2 kernels' code, whose broadcasts of local components here fold
 * into the multiplications that use them (EVEX embedded broadcasts). */
#define L2M_AOS_FN(name) name##_avx512
#include "local_to_model_aos.h"

/* ---- matrices ---- */

typedef float pm_f16 __attribute__((vector_size(64)));

PM_DEFINE_SOA_ROTATION_MATRICES(soa16_rotation_matrices, pm_f16, PM_SIMD_INLINE)

/* Lane r * 4 + c takes lane c * 4 + r: a 4x4 transposition (its own inverse). */
#define L2M_TRANSPOSE_INDEX _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0)

/* One field of `count` (1-4) consecutive groups, group k in 128-bit lane k, zeros past the last
 * (their joints are never composed). */
PM_SIMD_INLINE __m512 load_field4(const float *field0, int count) {
    const size_t stride = sizeof(pm_soa_transform) / sizeof(float);
    if (PM_UNLIKELY(count < 4)) {
        __m512 r = _mm512_zextps128_ps512(_mm_load_ps(field0));
        if (count > 1) r = _mm512_insertf32x4(r, _mm_load_ps(field0 + stride), 1);
        if (count > 2) r = _mm512_insertf32x4(r, _mm_load_ps(field0 + 2 * stride), 2);
        return r;
    }
    __m512 r = _mm512_castps128_ps512(_mm_load_ps(field0));
    r = _mm512_insertf32x4(r, _mm_load_ps(field0 + stride), 1);
    r = _mm512_insertf32x4(r, _mm_load_ps(field0 + 2 * stride), 2);
    return _mm512_insertf32x4(r, _mm_load_ps(field0 + 3 * stride), 3);
}

/* Four rows of 16 joints (a, b, c, d: one element each) transposed within each 128-bit lane and
 * stored as four vectors: vector t holds, in lane k, joint 4 k + t's (a, b, c, d). */
PM_SIMD_INLINE void store_rows(float *dst, __m512 a, __m512 b, __m512 c, __m512 d) {
    __m512d t0 = _mm512_castps_pd(_mm512_unpacklo_ps(a, b)), t1 = _mm512_castps_pd(_mm512_unpacklo_ps(c, d));
    __m512d t2 = _mm512_castps_pd(_mm512_unpackhi_ps(a, b)), t3 = _mm512_castps_pd(_mm512_unpackhi_ps(c, d));
    _mm512_store_ps(dst, _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t1)));
    _mm512_store_ps(dst + 16, _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t1)));
    _mm512_store_ps(dst + 32, _mm512_castpd_ps(_mm512_unpacklo_pd(t2, t3)));
    _mm512_store_ps(dst + 48, _mm512_castpd_ps(_mm512_unpackhi_pd(t2, t3)));
}

pm_result pm_l2m_matrices_avx512(const pm_local_to_model_job *job, pm_error *error) {
    const int n = job->joint_count, groups = pm_soa_count(n);
    const int32_t *parents = job->parents;
    float *mats = job->output_matrices;
    const __m512i transpose = L2M_TRANSPOSE_INDEX;
    PM_ALIGN16 float root_m[16];
    pm_transform_to_matrix(root_m, job->root ? *job->root : pm_transform_identity());
    const __m512 root_rows = _mm512_permutexvar_ps(transpose, _mm512_loadu_ps(root_m));
    /* The previous joint's matrix, row-major; for joint 0 (parent -1 = j - 1) the root's. */
    __m512 prev = root_rows;
    /* Rows k = 0..2 of the locals' affine matrices (L[k][0..2] the rotation's row, L[k][3] the
     * translation's component) of a block of 16 joints: joint b's at rows[k] + 16 (b % 4) + 4 (b / 4). */
    _Alignas(64) float rows[3][64];
    for (int g = 0, j = 0; g < groups; g += 4) {
        const pm_soa_transform *in = job->input + g;
        const int count = groups - g < 4 ? groups - g : 4;
        pm_f16 m[9];
        soa16_rotation_matrices((pm_f16)load_field4(in->qx, count), (pm_f16)load_field4(in->qy, count),
                                (pm_f16)load_field4(in->qz, count), (pm_f16)load_field4(in->qw, count), m);
        store_rows(rows[0], (__m512)m[0], (__m512)m[3], (__m512)m[6], load_field4(in->tx, count));
        store_rows(rows[1], (__m512)m[1], (__m512)m[4], (__m512)m[7], load_field4(in->ty, count));
        store_rows(rows[2], (__m512)m[2], (__m512)m[5], (__m512)m[8], load_field4(in->tz, count));
        const int end = n - j < 16 ? n : j + 16;
        for (int b = 0; j < end; j++, b++) {
            const int p = parents[j];
            if (p != j - 1) {
                if (PM_UNLIKELY((unsigned)p + 1u > (unsigned)j)) return pm_l2m_bad_parent(j, p, error);
                prev = p < 0 ? root_rows : _mm512_permutexvar_ps(transpose, _mm512_loadu_ps(mats + 16 * (size_t)p));
            }
            const int at = 16 * (b & 3) + 4 * (b >> 2);
            __m512 c0 = _mm512_mul_ps(_mm512_permute_ps(prev, 0x00), _mm512_broadcast_f32x4(_mm_load_ps(rows[0] + at)));
            __m512 c1 = _mm512_mul_ps(_mm512_permute_ps(prev, 0x55), _mm512_broadcast_f32x4(_mm_load_ps(rows[1] + at)));
            __m512 c2 = _mm512_mul_ps(_mm512_permute_ps(prev, 0xAA), _mm512_broadcast_f32x4(_mm_load_ps(rows[2] + at)));
            /* The translation column (lane 3 of each row): P[r][2] t.z + P[r][3]. */
            c2 = _mm512_mask_add_ps(c2, 0x8888, c2, prev);
            prev = _mm512_add_ps(_mm512_add_ps(c0, c1), c2);
            _mm512_storeu_ps(mats + 16 * (size_t)j, _mm512_permutexvar_ps(transpose, prev));
        }
    }
    return PM_OK;
}

uint32_t pm_l2m_parents_bad_avx512(const int32_t *parents, int n) { return pm_l2m_parents_bad_inline(parents, n); }

/* Pops the target pushed above (PM_L2M_HAVE_AVX512 is defined under the same condition). */
PM_AVX512_END
#endif
