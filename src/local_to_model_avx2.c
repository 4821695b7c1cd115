/* The local-to-model job's AVX2 kernels (no FMA: their outputs are the baseline kernels' bit for
 * bit), picked at run time by src/local_to_model.c: the matrices kernel below and the transform
 * kernels of local_to_model_aos.h. */
#include "core.h"
#include "posematch/blend.h"
#include "simd.h"

#if defined(PM_SIMD_SSE) && defined(PM_HAVE_AVX2_KERNELS)
#include <immintrin.h>
/* The z terms of aos_compose_rotation / _translation: addsub on -z (see pose_kernels.h). */
#define PM_L2M_ADD_K(a, x, y) ((pm_f4)_mm_addsub_ps((__m128)(a), (__m128)((x) * (y))))
/* The shared inline kernels of pose_kernels.h and everything below are compiled for AVX2 here;
 * they only run when pm_l2m_avx2_supported(). */
PM_AVX2_BEGIN
#endif

#include "pose_kernels.h"

#if defined(PM_L2M_HAVE_AVX2)
#define L2M_AOS_FN(name) name##_avx2
#include "local_to_model_aos.h"

/* ---- matrices ---- */

/* Lanes 0-3 from a, 4-7 from b (both 16-byte aligned). */
PM_SIMD_INLINE pm_f8 f8_load_pair(const float *a, const float *b) {
    return (pm_f8)_mm256_insertf128_ps(_mm256_castps128_ps256(_mm_load_ps(a)), _mm_load_ps(b), 1);
}

/* One joint (PM_L2M_MATRIX_JOINT): its local's rotation element i at E[8 i] (lane k of the
 * 8-joint block), its translation at T[0], T[4], T[8] (its SoA group), each loaded broadcast. */
#define L2M_AVX_ELEMENT(unused, i) ((i) < 9 ? BL(el_ + 8 * (i)) : BL(tl_ + 4 * ((i) - 9)))
#define L2M_AVX_MAT_JOINT(E, T)                                                                                        \
    do {                                                                                                               \
        const float *el_ = (E), *tl_ = (T);                                                                            \
        PM_L2M_MATRIX_JOINT(L2M_AVX_ELEMENT, 0);                                                                       \
    } while (0)

/* The baseline's PM_L2M_MATRIX_JOINT (one expression, hence the same bits), but every broadcast
 * of a local element is a vbroadcastss load instead of a shuffle, which leaves the vector ports
 * to the multiplications and additions (336 -> 261 ns for the humanoid): the local rotations of
 * eight joints are converted at once in 256-bit registers and stored, the translations are read
 * from the SoA input. */
pm_result pm_l2m_matrices_avx2(const pm_local_to_model_job *job, pm_error *error) {
    const int n = job->joint_count;
    const int32_t *parents = job->parents;
    float *mats = job->output_matrices;
    PM_ALIGN16 float root_m[16];
    pm_transform_to_matrix(root_m, job->root ? *job->root : pm_transform_identity());
    pm_f4 c0 = f4_load_a(root_m), c1 = f4_load_a(root_m + 4), c2 = f4_load_a(root_m + 8), c3 = f4_load_a(root_m + 12);
    float *o = mats;
    _Alignas(32) float lm[9][8];
    const pm_soa_transform *in = job->input;
    int j = 0;
    for (; j + 8 <= n; in += 2) {
        pm_f8 m[9];
        soa8_rotation_matrices(f8_load_pair(in[0].qx, in[1].qx), f8_load_pair(in[0].qy, in[1].qy),
                               f8_load_pair(in[0].qz, in[1].qz), f8_load_pair(in[0].qw, in[1].qw), m);
        for (int i = 0; i < 9; i++) *(pm_f8 *)(void *)lm[i] = m[i];
        L2M_AVX_MAT_JOINT(&lm[0][0], in[0].tx);
        L2M_AVX_MAT_JOINT(&lm[0][1], in[0].tx + 1);
        L2M_AVX_MAT_JOINT(&lm[0][2], in[0].tx + 2);
        L2M_AVX_MAT_JOINT(&lm[0][3], in[0].tx + 3);
        L2M_AVX_MAT_JOINT(&lm[0][4], in[1].tx);
        L2M_AVX_MAT_JOINT(&lm[0][5], in[1].tx + 1);
        L2M_AVX_MAT_JOINT(&lm[0][6], in[1].tx + 2);
        L2M_AVX_MAT_JOINT(&lm[0][7], in[1].tx + 3);
    }
    for (; j < n; in++) {
        pm_f4 m[9];
        soa_rotation_matrices(f4_load_a(in->qx), f4_load_a(in->qy), f4_load_a(in->qz), f4_load_a(in->qw), m);
        for (int i = 0; i < 9; i++) f4_store_a(lm[i], m[i]);
        for (int k = 0; k < 4 && j < n; k++) L2M_AVX_MAT_JOINT(&lm[0][k], in->tx + k);
    }
    return PM_OK;
}

uint32_t pm_l2m_parents_bad_avx2(const int32_t *parents, int n) { return pm_l2m_parents_bad_inline(parents, n); }

/* Pops the target pushed above (PM_L2M_HAVE_AVX2 is defined under the same condition). */
PM_AVX2_END
#endif
