/* Private: structure-of-arrays quaternion and vector math over four joints at a time, shared by the
 * pose jobs. Everything is inline so that each job's loop keeps its values in registers. */
#ifndef PM_POSE_KERNELS_H
#define PM_POSE_KERNELS_H

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

/* Pose arrays must be 16-byte aligned (pm_soa_transform's own alignment; pm_pose_alloc). */
static inline int pm_pose_aligned(const void *p) { return ((uintptr_t)p & 15u) == 0; }
#define PM_ALIGN_HINT " is not 16-byte aligned (allocate poses with pm_pose_alloc or as pm_soa_transform arrays)"

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
PM_SIMD_INLINE soa_quat soa_quat_xor(soa_quat q, pm_i4 sign) {
    q.x = f4_xor(q.x, sign);
    q.y = f4_xor(q.y, sign);
    q.z = f4_xor(q.z, sign);
    q.w = f4_xor(q.w, sign);
    return q;
}
/* Weight w with the sign that puts q on ref's hemisphere: cheaper than flipping q's 4 components. */
PM_SIMD_INLINE pm_f4 soa_signed_weight(pm_f4 w, soa_quat q, soa_quat ref) { return f4_xor(w, f4_sign(soa_quat_dot(q, ref))); }
/* q on the hemisphere of ref: flipped where dot(q, ref) < 0. */
PM_SIMD_INLINE soa_quat soa_quat_near(soa_quat q, soa_quat ref) { return soa_quat_xor(q, f4_sign(soa_quat_dot(q, ref))); }
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

/* Per-joint weights of group g from a joint_count array, zero in the padding lanes. */
PM_SIMD_INLINE pm_f4 soa_load_joint_weights(const float *w, int g, int joint_count) {
    int base = g * 4;
    if (base + 4 <= joint_count) return f4_load(w + base);
    float tmp[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k = 0; base + k < joint_count; k++) tmp[k] = w[base + k];
    return f4_load(tmp);
}

#endif
