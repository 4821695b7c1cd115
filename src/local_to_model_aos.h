/* Private: the local-to-model job's transform-output kernels for x86 with AVX (no FMA: the baseline
 * kernels' bits), written once and compiled twice - for AVX2 (src/local_to_model_avx2.c) and for
 * AVX-512 with VL (src/local_to_model_avx512.c), where each broadcast of a local component folds
 * into its multiplication. The includer defines L2M_AOS_FN(name) (the build's function names),
 * PM_L2M_ADD_K and the target, and includes pose_kernels.h first. */
#ifndef PM_LOCAL_TO_MODEL_AOS_H
#define PM_LOCAL_TO_MODEL_AOS_H

#include <immintrin.h>

typedef float pm_f8 __attribute__((vector_size(32)));

PM_DEFINE_SOA_ROTATION_MATRICES(soa8_rotation_matrices, pm_f8, PM_SIMD_INLINE)

#define BL(p) ((pm_f4)_mm_broadcast_ss(p))

/* ---- transforms ---- */

/* The same composition as the baseline kernel (aos_compose_rotation / _translation, hence the same
 * bits), with every local component broadcast straight from memory: rotations from the SoA input,
 * the rest from a per-group scratch. And software-pipelined: along a chain (parent = previous
 * joint) the rotations are a dependency chain of about 11 cycles a link, and the scheduler issues
 * the oldest ready operation first, so each joint's rotation is put before the previous joint's
 * translation, which the chain does not wait for: the translation of joint j - 1 is computed in
 * joint j's step (267 -> 261 ns for the humanoid, 337 -> 316 ns for a 65-joint chain). */

/* The pending translation (the previous joint's, lane K of the group, local translation LT) from
 * its parent's rotation tq (permutations tp, w at tw) and translation tt. Stored before the next
 * rotation, over which it spills. */
#define L2M_AVX_TRANSLATION(K, LT, LAST)                                                                               \
    do {                                                                                                               \
        last_t = aos_compose_translation(tq, tp, BL(tw), tt, BL(s.tx2 + (K)), BL(s.ty2 + (K)), BL(s.neg_tz2 + (K)),    \
                                         (LT));                                                                        \
        store_translation(o - 1, last_t, (LAST));                                                                      \
    } while (0)

/* One joint, lane K of the group: its parent from registers (the previous joint), the root or
 * memory; its rotation; then, when K > 0, the previous joint's translation (lane K - 1, local
 * translation LTP); then its own translation's inputs become the pending ones. */
#define L2M_AVX_XJOINT(K, LTP)                                                                                         \
    do {                                                                                                               \
        int p = parents[j];                                                                                            \
        pm_f4 pq = prev_q, pt = last_t;                                                                                \
        const float *pw = prev_w;                                                                                      \
        int chain = 1;                                                                                                 \
        if (PM_UNLIKELY(p != j - 1)) {                                                                                 \
            chain = 0;                                                                                                 \
            if (p < 0) {                                                                                               \
                if (PM_UNLIKELY(p != -1)) return pm_l2m_bad_parent(j, p, error);                                       \
                pq = root_q;                                                                                           \
                pw = &root.rotation.w;                                                                                 \
                pt = root_t;                                                                                           \
            } else {                                                                                                   \
                if (PM_UNLIKELY(p >= j)) return pm_l2m_bad_parent(j, p, error);                                        \
                pq = f4_load(&out[p].rotation.x);                                                                      \
                pw = &out[p].rotation.w;                                                                               \
                pt = load_vec3(&out[p].translation);                                                                   \
            }                                                                                                          \
        }                                                                                                              \
        aos_perms pp = aos_perms_of(pq);                                                                               \
        pm_f4 q = aos_compose_rotation(pq, pp, BL(in->qx + (K)), BL(in->qy + (K)), BL(s.neg_qz + (K)),                 \
                                       BL(in->qw + (K)));                                                              \
        if ((K) > 0) L2M_AVX_TRANSLATION((K) > 0 ? (K) - 1 : 0, (LTP), 0);                                             \
        f4_store(&o->rotation.x, q);                                                                                   \
        prev_q = q;                                                                                                    \
        prev_w = &o->rotation.w;                                                                                       \
        o++;                                                                                                           \
        j++;                                                                                                           \
        tq = pq;                                                                                                       \
        tp = pp;                                                                                                       \
        tw = pw;                                                                                                       \
        tt = chain ? last_t : pt; /* along a chain, the translation just computed */                                   \
    } while (0)

pm_result L2M_AOS_FN(pm_l2m_transforms)(const pm_local_to_model_job *job, pm_error *error) {
    const int n = job->joint_count;
    const int32_t *parents = job->parents;
    pm_transform *out = job->output;
    pm_transform root = job->root ? *job->root : pm_transform_identity();
    const pm_f4 root_q = f4_set(root.rotation.x, root.rotation.y, root.rotation.z, root.rotation.w);
    const pm_f4 root_t = f4_set(root.translation.x, root.translation.y, root.translation.z, 0.0f);
    const pm_i4 sign = i4_set1(PM_SIGN_BIT);
    /* The previous joint (for joint 0, whose parent -1 is j - 1: the root) and the pending
     * translation's inputs, which each group's first joint sets before anything reads them. */
    pm_f4 prev_q = root_q, last_t = root_t, tq, tt;
    aos_perms tp;
    const float *prev_w = &root.rotation.w, *tw;
    struct {
        PM_ALIGN16 float tx2[4]; /* the translations doubled, -qz and -2 tz (the addsub terms) */
        PM_ALIGN16 float ty2[4];
        PM_ALIGN16 float neg_qz[4];
        PM_ALIGN16 float neg_tz2[4];
    } s;
    pm_transform *o = out;
    for (int g = 0, j = 0; j < n; g++) {
        const pm_soa_transform *in = job->input + g;
        pm_f4 tx = f4_load_a(in->tx), ty = f4_load_a(in->ty), tz = f4_load_a(in->tz), zero = f4_zero();
        f4_store_a(s.tx2, tx + tx);
        f4_store_a(s.ty2, ty + ty);
        f4_store_a(s.neg_qz, f4_xor(f4_load_a(in->qz), sign));
        f4_store_a(s.neg_tz2, f4_xor(tz + tz, sign));
        /* 4x4 transpose: lane k of the SoA translations becomes vector k. */
        pm_f4 b0 = f4_unpacklo32(tx, ty), b1 = f4_unpacklo32(tz, zero);
        pm_f4 b2 = f4_unpackhi32(tx, ty), b3 = f4_unpackhi32(tz, zero);
        pm_f4 v0 = f4_unpacklo64(b0, b1), v1 = f4_unpackhi64(b0, b1), v2 = f4_unpacklo64(b2, b3);
        pm_f4 v3 = f4_unpackhi64(b2, b3);
        if (j + 4 < n) {
            L2M_AVX_XJOINT(0, v0);
            L2M_AVX_XJOINT(1, v0);
            L2M_AVX_XJOINT(2, v1);
            L2M_AVX_XJOINT(3, v2);
            /* The group's last translation, before the scratch is refilled. */
            L2M_AVX_TRANSLATION(3, v3, 0);
        } else {
            /* The last group: its last translation does not spill. */
            int rest = n - j;
            L2M_AVX_XJOINT(0, v0);
            if (rest > 1) L2M_AVX_XJOINT(1, v0);
            if (rest > 2) L2M_AVX_XJOINT(2, v1);
            if (rest > 3) L2M_AVX_XJOINT(3, v2);
            switch (rest) {
            case 1: L2M_AVX_TRANSLATION(0, v0, 1); break;
            case 2: L2M_AVX_TRANSLATION(1, v1, 1); break;
            case 3: L2M_AVX_TRANSLATION(2, v2, 1); break;
            default: L2M_AVX_TRANSLATION(3, v3, 1); break;
            }
        }
    }
    return PM_OK;
}

/* ---- both outputs: the matrices of the transforms ---- */

/* Four 8-lane rows transposed (within each half) and stored as the same column of eight
 * consecutive matrices. */
PM_SIMD_INLINE void store_column8(float *dst, pm_f8 r0, pm_f8 r1, pm_f8 r2, pm_f8 r3) {
    __m256 a0 = _mm256_unpacklo_ps((__m256)r0, (__m256)r1), a1 = _mm256_unpacklo_ps((__m256)r2, (__m256)r3);
    __m256 a2 = _mm256_unpackhi_ps((__m256)r0, (__m256)r1), a3 = _mm256_unpackhi_ps((__m256)r2, (__m256)r3);
    __m256 c0 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(a0), _mm256_castps_pd(a1)));
    __m256 c1 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(a0), _mm256_castps_pd(a1)));
    __m256 c2 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(a2), _mm256_castps_pd(a3)));
    __m256 c3 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(a2), _mm256_castps_pd(a3)));
    _mm_store_ps(dst, _mm256_castps256_ps128(c0));
    _mm_store_ps(dst + 16, _mm256_castps256_ps128(c1));
    _mm_store_ps(dst + 32, _mm256_castps256_ps128(c2));
    _mm_store_ps(dst + 48, _mm256_castps256_ps128(c3));
    _mm_store_ps(dst + 64, _mm256_extractf128_ps(c0, 1));
    _mm_store_ps(dst + 80, _mm256_extractf128_ps(c1, 1));
    _mm_store_ps(dst + 96, _mm256_extractf128_ps(c2, 1));
    _mm_store_ps(dst + 112, _mm256_extractf128_ps(c3, 1));
}

int L2M_AOS_FN(pm_l2m_matrices_of_transforms)(float *mats, const pm_transform *t, int n) {
    const pm_f8 zero = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    const __m128 one_w = _mm_set_ps(1.0f, 0.0f, 0.0f, 0.0f);
    int j = 0;
    for (; j + 8 <= n; j += 8, t += 8, mats += 128) {
        /* Rotations of joints k and k + 4 in one register, transposed to SoA within each half. */
        __m256 q[4];
        for (int k = 0; k < 4; k++)
            q[k] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(&t[k].rotation.x)),
                                        _mm_loadu_ps(&t[k + 4].rotation.x), 1);
        __m256 a0 = _mm256_unpacklo_ps(q[0], q[1]), a1 = _mm256_unpacklo_ps(q[2], q[3]);
        __m256 a2 = _mm256_unpackhi_ps(q[0], q[1]), a3 = _mm256_unpackhi_ps(q[2], q[3]);
        pm_f8 x = (pm_f8)_mm256_unpacklo_pd(_mm256_castps_pd(a0), _mm256_castps_pd(a1));
        pm_f8 y = (pm_f8)_mm256_unpackhi_pd(_mm256_castps_pd(a0), _mm256_castps_pd(a1));
        pm_f8 z = (pm_f8)_mm256_unpacklo_pd(_mm256_castps_pd(a2), _mm256_castps_pd(a3));
        pm_f8 w = (pm_f8)_mm256_unpackhi_pd(_mm256_castps_pd(a2), _mm256_castps_pd(a3));
        pm_f8 m[9];
        soa8_rotation_matrices(x, y, z, w, m);
        store_column8(mats, m[0], m[1], m[2], zero);
        store_column8(mats + 4, m[3], m[4], m[5], zero);
        store_column8(mats + 8, m[6], m[7], m[8], zero);
        /* The translations need no arithmetic: each is copied with w = 1 (read as 8 + 4 bytes,
         * inside the 16-byte store that wrote it, for store forwarding). */
        for (int k = 0; k < 8; k++)
            _mm_store_ps(mats + 16 * k + 12, _mm_blend_ps((__m128)load_vec3(&t[k].translation), one_w, 8));
    }
    return j;
}

#endif
