/* Private: structure-of-arrays quaternion and vector math over four joints at a time, shared by the
 * pose jobs. Everything is inline so that each job's loop keeps its values in registers. */
#ifndef PM_POSE_KERNELS_H
#define PM_POSE_KERNELS_H

#include "core.h"
#include "posematch/blend.h"
#include "simd.h"

typedef struct soa_quat {
    pm_f4 x, y, z, w;
} soa_quat;

typedef struct soa_vec3 {
    pm_f4 x, y, z;
} soa_vec3;

PM_SIMD_INLINE soa_quat soa_load_rotation(const pm_soa_transform *g) {
    soa_quat q;
    q.x = f4_load_a(g->qx);
    q.y = f4_load_a(g->qy);
    q.z = f4_load_a(g->qz);
    q.w = f4_load_a(g->qw);
    return q;
}
PM_SIMD_INLINE soa_vec3 soa_load_translation(const pm_soa_transform *g) {
    soa_vec3 v;
    v.x = f4_load_a(g->tx);
    v.y = f4_load_a(g->ty);
    v.z = f4_load_a(g->tz);
    return v;
}
PM_SIMD_INLINE void soa_store(pm_soa_transform *g, soa_quat q, soa_vec3 t) {
    f4_store_a(g->tx, t.x);
    f4_store_a(g->ty, t.y);
    f4_store_a(g->tz, t.z);
    f4_store_a(g->qx, q.x);
    f4_store_a(g->qy, q.y);
    f4_store_a(g->qz, q.z);
    f4_store_a(g->qw, q.w);
}

/* Whether two byte ranges share memory. Compared as integers: relational operators on pointers
 * into different objects are undefined. */
static inline int pm_bytes_overlap(const void *a, size_t a_size, const void *b, size_t b_size) {
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + b_size && y < x + a_size;
}

/* Whether two poses of `groups` groups share memory (an in-place job). */
static inline int pm_poses_overlap(const pm_soa_transform *a, const pm_soa_transform *b, int groups) {
    size_t size = (size_t)groups * sizeof(pm_soa_transform);
    return pm_bytes_overlap(a, size, b, size);
}

/* Whether an output shares memory with an input without being it: the jobs that may write in
 * place read each group before writing it, so only the very same pose is safe; an output one group
 * off an input overwrites what is still to be read, and validate would otherwise accept it. */
static inline int pm_poses_overlap_apart(const pm_soa_transform *out, const pm_soa_transform *in, int groups) {
    return out != in && pm_poses_overlap(out, in, groups);
}

/* Pose arrays must be 16-byte aligned (pm_soa_transform's own alignment; pm_pose_alloc). */
static inline int pm_pose_aligned(const void *p) { return ((uintptr_t)p & 15u) == 0; }
#define PM_ALIGN_HINT " is not 16-byte aligned (allocate poses with pm_pose_alloc or as pm_soa_transform arrays)"

/* The jobs' joint_count check: "<job>: joint_count N is outside 1..PM_MAX_JOINTS". */
static inline pm_result pm_check_joint_count(int joint_count, const char *job, pm_error *error) {
    if (joint_count < 1 || joint_count > PM_MAX_JOINTS)
        return pm_fail(error, PM_ERR_LIMIT, "%s: joint_count %d is outside 1..%d", job, joint_count, PM_MAX_JOINTS);
    return PM_OK;
}

static inline void pm_soa_identity(pm_soa_transform *g) {
    for (int k = 0; k < 4; k++) {
        g->tx[k] = g->ty[k] = g->tz[k] = 0.0f;
        g->qx[k] = g->qy[k] = g->qz[k] = 0.0f;
        g->qw[k] = 1.0f;
    }
}

/* Summed as a tree: the dot sits on every job's critical path. */
PM_SIMD_INLINE pm_f4 soa_quat_dot(soa_quat a, soa_quat b) {
    return f4_add(f4_madd(a.x, b.x, f4_mul(a.y, b.y)), f4_madd(a.z, b.z, f4_mul(a.w, b.w)));
}
PM_SIMD_INLINE soa_quat soa_quat_scale(soa_quat q, pm_f4 s) {
    soa_quat r;
    r.x = f4_mul(q.x, s);
    r.y = f4_mul(q.y, s);
    r.z = f4_mul(q.z, s);
    r.w = f4_mul(q.w, s);
    return r;
}
/* acc + q * s */
PM_SIMD_INLINE soa_quat soa_quat_madd(soa_quat acc, soa_quat q, pm_f4 s) {
    acc.x = f4_madd(q.x, s, acc.x);
    acc.y = f4_madd(q.y, s, acc.y);
    acc.z = f4_madd(q.z, s, acc.z);
    acc.w = f4_madd(q.w, s, acc.w);
    return acc;
}
/* Weight w with the sign that puts q on ref's hemisphere: cheaper than flipping q's 4 components. */
PM_SIMD_INLINE pm_f4 soa_signed_weight(pm_f4 w, soa_quat q, soa_quat ref) { return f4_xor(w, f4_sign(soa_quat_dot(q, ref))); }
PM_SIMD_INLINE soa_quat soa_quat_normalize(soa_quat q) { return soa_quat_scale(q, f4_div(f4_set1(1.0f), f4_sqrt(soa_quat_dot(q, q)))); }
PM_SIMD_INLINE soa_quat soa_quat_conjugate(soa_quat q) {
    pm_i4 s = i4_set1(PM_SIGN_BIT);
    q.x = f4_xor(q.x, s);
    q.y = f4_xor(q.y, s);
    q.z = f4_xor(q.z, s);
    return q;
}
/* a * b (b applied first), as pm_quat_mul. */
PM_SIMD_INLINE soa_quat soa_quat_mul(soa_quat a, soa_quat b) {
    soa_quat r;
    r.x = f4_sub(f4_madd(a.w, b.x, f4_madd(a.x, b.w, f4_mul(a.y, b.z))), f4_mul(a.z, b.y));
    r.y = f4_add(f4_sub(f4_mul(a.w, b.y), f4_mul(a.x, b.z)), f4_madd(a.y, b.w, f4_mul(a.z, b.x)));
    r.z = f4_add(f4_sub(f4_madd(a.w, b.z, f4_mul(a.x, b.y)), f4_mul(a.y, b.x)), f4_mul(a.z, b.w));
    r.w = f4_sub(f4_sub(f4_mul(a.w, b.w), f4_mul(a.x, b.x)), f4_add(f4_mul(a.y, b.y), f4_mul(a.z, b.z)));
    return r;
}

/* Slerp weights for unit quaternions whose dot is c >= 0: (sin((1-t)a), sin(t a)) / sin(a),
 * falling back to (1 - t, t) for tiny angles. */
PM_SIMD_INLINE void soa_slerp_weights(pm_f4 c, pm_f4 t, pm_f4 *wa, pm_f4 *wb) {
    c = f4_min_fast(c, f4_set1(1.0f));
    pm_f4 s2 = f4_max_fast(f4_sub(f4_set1(1.0f), f4_mul(c, c)), f4_zero());
    pm_i4 tiny = f4_lt(s2, f4_set1(1e-8f));
    pm_f4 inv_s = f4_div(f4_set1(1.0f), f4_sqrt(f4_max_fast(s2, f4_set1(1e-8f))));
    pm_f4 angle = f4_angle_sc(f4_mul(s2, inv_s), c);
    pm_f4 one_t = f4_sub(f4_set1(1.0f), t);
    *wa = f4_select(tiny, one_t, f4_mul(f4_sin_hp(f4_mul(one_t, angle)), inv_s));
    *wb = f4_select(tiny, t, f4_mul(f4_sin_hp(f4_mul(t, angle)), inv_s));
}

/* Running check of per-joint weights: a NaN shows in the sum, a value outside [0, 1] in the
 * minimum or maximum; three operations per group instead of a separate pass over the mask. */
typedef struct soa_weight_check {
    pm_f4 sum, lo, hi;
} soa_weight_check;
PM_SIMD_INLINE void soa_weight_check_init(soa_weight_check *c) {
    c->sum = c->hi = f4_zero();
    c->lo = f4_set1(1.0f);
}
PM_SIMD_INLINE void soa_weight_check_add(soa_weight_check *c, pm_f4 w) {
    c->sum = f4_add(c->sum, w);
    c->lo = f4_min_fast(c->lo, w);
    c->hi = f4_max_fast(c->hi, w);
}
PM_SIMD_INLINE int soa_weight_check_ok(const soa_weight_check *c) {
    pm_f4 s = c->sum;
    return !i4_any(f4_lt(c->lo, f4_zero())) && !i4_any(f4_lt(f4_set1(1.0f), c->hi)) && i4_all(f4_eq(s, s)) &&
           !i4_any(f4_eq(f4_abs(s), f4_set1(INFINITY)));
}

/* After a failed soa_weight_check: the first joint weight outside [0, 1] (or not a number), as
 * "<what> <joint> is <weight> (must be in [0, 1])"; PM_OK when there is none. */
static inline pm_result pm_check_joint_weights(const float *weights, int joint_count, const char *what, pm_error *error) {
    for (int j = 0; j < joint_count; j++) {
        float w = weights[j];
        if (!(w >= 0.0f && w <= 1.0f))
            return pm_fail(error, isfinite(w) ? PM_ERR_INVALID_ARGUMENT : PM_ERR_NUMERIC, "%s %d is %s (must be in [0, 1])",
                           what, j, pm_float_text(w).text);
    }
    return PM_OK;
}

/* Per-joint weights of group g from a joint_count array, zero in the padding lanes. */
PM_SIMD_INLINE pm_f4 soa_load_joint_weights(const float *w, int g, int joint_count) {
    int base = g * 4;
    if (base + 4 <= joint_count) return f4_load(w + base);
    float tmp[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k = 0; base + k < joint_count; k++) tmp[k] = w[base + k];
    return f4_load(tmp);
}

/* ---- local-to-model (src/local_to_model.c; AVX2 kernels in src/local_to_model_avx2.c) ---- */

/* Column-major 4x4 of a transform (scalar: used once per call for the root). */
static inline void pm_transform_to_matrix(float *m, pm_transform t) {
    float x = t.rotation.x, y = t.rotation.y, z = t.rotation.z, w = t.rotation.w;
    float x2 = x + x, y2 = y + y, z2 = z + z;
    float xx = x * x2, yy = y * y2, zz = z * z2, xy = x * y2, xz = x * z2, yz = y * z2;
    float wx = w * x2, wy = w * y2, wz = w * z2;
    m[0] = 1.0f - (yy + zz), m[1] = xy + wz, m[2] = xz - wy, m[3] = 0.0f;
    m[4] = xy - wz, m[5] = 1.0f - (xx + zz), m[6] = yz + wx, m[7] = 0.0f;
    m[8] = xz + wy, m[9] = yz - wx, m[10] = 1.0f - (xx + yy), m[11] = 0.0f;
    m[12] = t.translation.x, m[13] = t.translation.y, m[14] = t.translation.z, m[15] = 1.0f;
}

/* The error of a joint whose parent is not before it. */
pm_result pm_l2m_bad_parent(int j, int p, pm_error *error);

/* Nonzero when some parent is outside -1 <= p < j: one unsigned comparison a joint with no early
 * exit, a loop the compiler vectorises. Inline so that each kernel build compiles it for its own
 * vector width (validate runs it on every pose: 9 ns for 65 joints in SSE2, 3.6 in AVX-512). */
PM_SIMD_INLINE uint32_t pm_l2m_parents_bad_inline(const int32_t *parents, int n) {
    uint32_t bad = 0;
    for (int j = 0; j < n; j++) bad |= (uint32_t)parents[j] + 1u > (uint32_t)j;
    return bad;
}

#if defined(PM_SIMD_VECTOR)
/* The rotation matrices of four unit quaternions, element by element across the lanes (SoA):
 * m[0..8] = m00 m10 m20 m01 m11 m21 m02 m12 m22. A macro so that the 8-lane version of the AVX2
 * kernels evaluates the very same expressions: outputs must not depend on the CPU. */
#define PM_DEFINE_SOA_ROTATION_MATRICES(NAME, T, ATTR)                                                                 \
    ATTR void NAME(T x, T y, T z, T w, T *m) {                                                                         \
        T x2 = x + x, y2 = y + y, z2 = z + z;                                                                          \
        T xx = x * x2, yy = y * y2, zz = z * z2, xy = x * y2, xz = x * z2, yz = y * z2;                                \
        T wx = w * x2, wy = w * y2, wz = w * z2;                                                                       \
        m[0] = 1.0f - (yy + zz);                                                                                       \
        m[1] = xy + wz;                                                                                                \
        m[2] = xz - wy;                                                                                                \
        m[3] = xy - wz;                                                                                                \
        m[4] = 1.0f - (xx + zz);                                                                                       \
        m[5] = yz + wx;                                                                                                \
        m[6] = xz + wy;                                                                                                \
        m[7] = yz - wx;                                                                                                \
        m[8] = 1.0f - (xx + yy);                                                                                       \
    }
PM_DEFINE_SOA_ROTATION_MATRICES(soa_rotation_matrices, pm_f4, PM_SIMD_INLINE)

/* One joint of the transform output, model = parent * local, from the parent's rotation p = (u, w)
 * and translation pt (one vector each) and the local's components broadcast across the lanes.
 * Both products are sums, over the local's components, of signed lane permutations of the parent
 * (aos_perms):
 *     p l = lw p + lx (p i) + ly (p j) + lz (p k)
 * (per lane the same products, grouped the same way, as the parent-broadcast form used before),
 * and the translation R(p) v = w r - r.w u - v with r = p (2v, 0) = (2w v + 2u x v, -2u.v), which
 * reuses the permutations. The local's components are what a kernel broadcasts cheaply (AVX loads
 * them, SSE2 shuffles them) off the chain, and the signs go on them rather than on the
 * permutations, which are on it. Every kernel composes with these two functions, so their bits
 * agree; PM_L2M_ADD_K lets a kernel add the z terms its own way. */
typedef struct aos_perms {
    pm_f4 i, j, k; /* p i = (w, z, -y, -x), p j = (-z, w, x, -y), p k = (y, -x, w, -z), unsigned */
} aos_perms;
PM_SIMD_INLINE aos_perms aos_perms_of(pm_f4 p) {
    aos_perms r;
    r.i = I4_SHUFFLE(p, 3, 2, 1, 0);
    r.j = I4_SHUFFLE(p, 2, 3, 0, 1);
    r.k = I4_SHUFFLE(p, 1, 0, 3, 2);
    return r;
}
#ifndef PM_L2M_ADD_K
/* a + x * y where x is the local's z component (rotation, or doubled translation) with signs
 * (+, -, +, -): the baseline's form. The AVX2 kernels pass -z instead and add with addsub, which
 * flips the same signs: the same bits, without a sign flip per joint. */
#define PM_L2M_ADD_K(a, x, y) ((a) + (x) * (y))
#endif
/* The rotation p l: lx, ly, lw the local's components, kz its z in PM_L2M_ADD_K's form. */
PM_SIMD_INLINE pm_f4 aos_compose_rotation(pm_f4 p, aos_perms pp, pm_f4 lx, pm_f4 ly, pm_f4 kz, pm_f4 lw) {
    const pm_i4 si = {0, 0, PM_SIGN_BIT, PM_SIGN_BIT}, sj = {PM_SIGN_BIT, 0, 0, PM_SIGN_BIT};
    return (lw * p + f4_xor(lx, si) * pp.i) + PM_L2M_ADD_K(f4_xor(ly, sj) * pp.j, kz, pp.k);
}
/* The translation pt + R(p) v: pw the parent's w broadcast, vx2, vy2 the local's translation
 * doubled, kv2 its doubled z in PM_L2M_ADD_K's form, v the translation itself (lanes x, y, z). */
PM_SIMD_INLINE pm_f4 aos_compose_translation(pm_f4 p, aos_perms pp, pm_f4 pw, pm_f4 pt, pm_f4 vx2, pm_f4 vy2, pm_f4 kv2,
                                             pm_f4 v) {
    const pm_i4 si = {0, 0, PM_SIGN_BIT, PM_SIGN_BIT}, sj = {PM_SIGN_BIT, 0, 0, PM_SIGN_BIT};
    pm_f4 r = PM_L2M_ADD_K(f4_xor(vx2, si) * pp.i + f4_xor(vy2, sj) * pp.j, kv2, pp.k);
    return pt + ((pw * r - I4_SHUFFLE(r, 3, 3, 3, 3) * p) - v);
}

/* A transform's translation is stored as 16 bytes whose last lane spills over the next joint's
 * rotation (written after it), except for the array's last joint: 8 + 4 bytes there. Parents are
 * read back as 8 + 4 bytes, inside the 16-byte store, so that store-to-load forwarding works (a
 * 16-byte read would straddle two stores on every branching joint and stall). */
PM_SIMD_INLINE void store_translation(pm_transform *out, pm_f4 t, int last) {
    if (last) {
        memcpy(&out->translation.x, &t, 2 * sizeof(float));
        out->translation.z = f4_lane(t, 2);
    } else {
        f4_store(&out->translation.x, t);
    }
}

PM_SIMD_INLINE pm_f4 load_vec3(const pm_vec3 *v) { return f4_unpacklo64(f4_load2(&v->x), f4_load1(&v->z)); }
#endif

/* The parent columns of joint j for the matrix kernels: kept from the previous joint when that
 * is the parent (a chain keeps them in registers), else loaded from the root or the parent's
 * matrix; a parent out of order returns the job's error from the enclosing function. */
#define PM_L2M_MATRIX_PARENT(j, p, root_m, mats, c0, c1, c2, c3, error)                                                \
    do {                                                                                                               \
        if ((p) != (j) - 1) {                                                                                          \
            if (PM_UNLIKELY((unsigned)(p) + 1u > (unsigned)(j))) return pm_l2m_bad_parent((j), (p), (error));          \
            const float *pm_parent_ = (p) < 0 ? (root_m) : (mats) + 16 * (size_t)(p);                                  \
            c0 = f4_load_a(pm_parent_);                                                                                \
            c1 = f4_load_a(pm_parent_ + 4);                                                                            \
            c2 = f4_load_a(pm_parent_ + 8);                                                                            \
            c3 = f4_load_a(pm_parent_ + 12);                                                                           \
        }                                                                                                              \
    } while (0)

/* One joint of the matrix kernels: model = parent * local, composed from the parent's columns
 * c0..c3 (updated in place) and the local's 12 elements - E(A, i) broadcasts element i (0-8 the
 * rotation, column-major; 9-11 the translation) across the lanes, however the kernel does it -
 * then stored at o, and the next joint. Every kernel composes with this one expression, so their
 * bits agree. The bottom row is never computed: columns 0-2 of an affine parent end in 0 and
 * column 3 in 1, so the products keep them. */
#define PM_L2M_MATRIX_JOINT(E, A)                                                                                      \
    do {                                                                                                               \
        int p = parents[j];                                                                                            \
        PM_L2M_MATRIX_PARENT(j, p, root_m, mats, c0, c1, c2, c3, error);                                               \
        pm_f4 n0 = (c0 * E(A, 0) + c1 * E(A, 1)) + c2 * E(A, 2);                                                       \
        pm_f4 n1 = (c0 * E(A, 3) + c1 * E(A, 4)) + c2 * E(A, 5);                                                       \
        pm_f4 n2 = (c0 * E(A, 6) + c1 * E(A, 7)) + c2 * E(A, 8);                                                       \
        c3 = (c0 * E(A, 9) + c1 * E(A, 10)) + (c2 * E(A, 11) + c3);                                                    \
        c0 = n0;                                                                                                       \
        c1 = n1;                                                                                                       \
        c2 = n2;                                                                                                       \
        f4_store_a(o, c0);                                                                                             \
        f4_store_a(o + 4, c1);                                                                                         \
        f4_store_a(o + 8, c2);                                                                                         \
        f4_store_a(o + 12, c3);                                                                                        \
        o += 16;                                                                                                       \
        j++;                                                                                                           \
    } while (0)

/* Which kernels run a pose job: PM_KERNEL_AUTO is what the public run functions do (the widest the
 * CPU has); the others force one so that tests can compare them bit for bit and the bench can
 * time them. A kernel the build or the CPU lacks falls back to the next narrower one. Only the
 * local-to-model job has AVX-512 kernels; the other jobs run AVX2 for PM_KERNEL_AVX512. */
enum { PM_KERNEL_AUTO = 0, PM_KERNEL_BASELINE = 1, PM_KERNEL_AVX2 = 2, PM_KERNEL_AVX512 = 3 };
pm_result pm_local_to_model_job_run_kernel(const pm_local_to_model_job *job, int kernel, pm_error *error);
/* 1 when the AVX2 kernels are built and the CPU runs them. */
int pm_l2m_avx2_supported(void);
/* pm_l2m_parents_bad_inline in the given kernel build (validate uses PM_KERNEL_AUTO). */
uint32_t pm_l2m_parents_bad(const int32_t *parents, int n, int kernel);

#if defined(PM_SIMD_SSE) && defined(PM_HAVE_AVX2_KERNELS)
#define PM_L2M_HAVE_AVX2 1
pm_result pm_l2m_matrices_avx2(const pm_local_to_model_job *job, pm_error *error);
pm_result pm_l2m_transforms_avx2(const pm_local_to_model_job *job, pm_error *error);
/* The matrices of the first joints of t, eight at a time; returns how many it converted. */
int pm_l2m_matrices_of_transforms_avx2(float *mats, const pm_transform *t, int n);
uint32_t pm_l2m_parents_bad_avx2(const int32_t *parents, int n);
#endif

/* The same for AVX-512 (src/local_to_model_avx512.c). PM_KERNEL_AVX512 falls back to AVX2,
 * then to the baseline, where the build or the CPU lacks it. */
#if defined(PM_L2M_HAVE_AVX2) && defined(PM_HAVE_AVX512_KERNELS)
#define PM_L2M_HAVE_AVX512 1
pm_result pm_l2m_matrices_avx512(const pm_local_to_model_job *job, pm_error *error);
pm_result pm_l2m_transforms_avx512(const pm_local_to_model_job *job, pm_error *error);
int pm_l2m_matrices_of_transforms_avx512(float *mats, const pm_transform *t, int n);
uint32_t pm_l2m_parents_bad_avx512(const int32_t *parents, int n);
#endif
/* 1 when the AVX-512 kernel is built and the CPU runs it. */
int pm_l2m_avx512_supported(void);

#endif
