/* posematch - small vector, quaternion and transform math, all inline.
 * Conventions: right-handed, Y up, metres; quaternions are (x, y, z, w) and rotate column
 * vectors, q1 * q2 applies q2 first. Transforms are rotation + translation (no scale): BVH and
 * the motion-matching features never need scale. */
#ifndef POSEMATCH_MATH_FUNCTIONS_H
#define POSEMATCH_MATH_FUNCTIONS_H

#include <math.h>

#include "base.h"

PM_EXTERN_C_BEGIN

typedef struct pm_vec3 {
    float x, y, z;
} pm_vec3;

typedef struct pm_quat {
    float x, y, z, w;
} pm_quat;

typedef struct pm_transform {
    pm_quat rotation;
    pm_vec3 translation;
} pm_transform;

#define PM_PI 3.14159265358979323846f

/* sin, cos, exp, atan2 and acos with the same bits on every machine, which libm's are not
 * (glibc's atan2f and acosf differ in the last bit between x86-64 and AArch64): the library
 * takes every angle that reaches a database or a blend from these, so that builds agree
 * byte for byte wherever they run. Computed in double from + - * / and sqrt, rounded once:
 * within 1 ulp, almost always the nearest float; NaN, infinities and signed zeros as C's.
 * The rotation helpers below use them too. */
PM_API float pm_sinf(float x);
PM_API float pm_cosf(float x);
PM_API float pm_expf(float x);
PM_API float pm_atan2f(float y, float x);
PM_API float pm_acosf(float x);

static inline pm_vec3 pm_vec3_make(float x, float y, float z) {
    pm_vec3 v;
    v.x = x;
    v.y = y;
    v.z = z;
    return v;
}
static inline pm_vec3 pm_vec3_zero(void) { return pm_vec3_make(0.0f, 0.0f, 0.0f); }
static inline pm_vec3 pm_vec3_add(pm_vec3 a, pm_vec3 b) { return pm_vec3_make(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline pm_vec3 pm_vec3_sub(pm_vec3 a, pm_vec3 b) { return pm_vec3_make(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline pm_vec3 pm_vec3_scale(pm_vec3 a, float s) { return pm_vec3_make(a.x * s, a.y * s, a.z * s); }
static inline pm_vec3 pm_vec3_neg(pm_vec3 a) { return pm_vec3_make(-a.x, -a.y, -a.z); }
static inline float pm_vec3_dot(pm_vec3 a, pm_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline pm_vec3 pm_vec3_cross(pm_vec3 a, pm_vec3 b) {
    return pm_vec3_make(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline float pm_vec3_length(pm_vec3 a) { return sqrtf(pm_vec3_dot(a, a)); }
static inline pm_vec3 pm_vec3_lerp(pm_vec3 a, pm_vec3 b, float t) {
    return pm_vec3_make(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t);
}
/* Unit vector along a; `fallback` when a is (nearly) zero. */
static inline pm_vec3 pm_vec3_normalize_or(pm_vec3 a, pm_vec3 fallback) {
    float len = pm_vec3_length(a);
    return len > 1e-8f ? pm_vec3_scale(a, 1.0f / len) : fallback;
}

static inline pm_quat pm_quat_make(float x, float y, float z, float w) {
    pm_quat q;
    q.x = x;
    q.y = y;
    q.z = z;
    q.w = w;
    return q;
}
static inline pm_quat pm_quat_identity(void) { return pm_quat_make(0.0f, 0.0f, 0.0f, 1.0f); }
static inline pm_quat pm_quat_mul(pm_quat a, pm_quat b) {
    return pm_quat_make(a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
                        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z);
}
/* Inverse of a unit quaternion. */
static inline pm_quat pm_quat_conjugate(pm_quat q) { return pm_quat_make(-q.x, -q.y, -q.z, q.w); }
static inline pm_quat pm_quat_inverse(pm_quat q) { return pm_quat_conjugate(q); }
static inline float pm_quat_dot(pm_quat a, pm_quat b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
static inline pm_quat pm_quat_neg(pm_quat q) { return pm_quat_make(-q.x, -q.y, -q.z, -q.w); }
static inline pm_quat pm_quat_normalize(pm_quat q) {
    float len2 = pm_quat_dot(q, q);
    if (!(len2 > 1e-20f)) return pm_quat_identity();
    float inv = 1.0f / sqrtf(len2);
    return pm_quat_make(q.x * inv, q.y * inv, q.z * inv, q.w * inv);
}
/* Same rotation, on the hemisphere of `ref` (w >= 0 side when ref is identity). */
static inline pm_quat pm_quat_abs_near(pm_quat q, pm_quat ref) { return pm_quat_dot(q, ref) < 0.0f ? pm_quat_neg(q) : q; }
static inline pm_quat pm_quat_from_axis_angle(pm_vec3 axis, float angle) {
    pm_vec3 n = pm_vec3_normalize_or(axis, pm_vec3_make(1.0f, 0.0f, 0.0f));
    float s = pm_sinf(0.5f * angle);
    return pm_quat_make(n.x * s, n.y * s, n.z * s, pm_cosf(0.5f * angle));
}
static inline pm_vec3 pm_quat_rotate(pm_quat q, pm_vec3 v) {
    /* v + 2w(u x v) + 2 u x (u x v), with u the vector part: fewer multiplies than q v q*. */
    pm_vec3 u = pm_vec3_make(q.x, q.y, q.z);
    pm_vec3 t = pm_vec3_scale(pm_vec3_cross(u, v), 2.0f);
    return pm_vec3_add(pm_vec3_add(v, pm_vec3_scale(t, q.w)), pm_vec3_cross(u, t));
}
static inline pm_vec3 pm_quat_inv_rotate(pm_quat q, pm_vec3 v) { return pm_quat_rotate(pm_quat_conjugate(q), v); }
/* Normalised linear interpolation on the shortest arc. */
static inline pm_quat pm_quat_nlerp(pm_quat a, pm_quat b, float t) {
    pm_quat bb = pm_quat_abs_near(b, a);
    return pm_quat_normalize(pm_quat_make(a.x + (bb.x - a.x) * t, a.y + (bb.y - a.y) * t,
                                          a.z + (bb.z - a.z) * t, a.w + (bb.w - a.w) * t));
}
/* Spherical interpolation on the shortest arc; falls back to nlerp when the arc is tiny. */
static inline pm_quat pm_quat_slerp(pm_quat a, pm_quat b, float t) {
    pm_quat bb = pm_quat_abs_near(b, a);
    float c = pm_quat_dot(a, bb);
    if (c > 0.9995f) return pm_quat_nlerp(a, bb, t);
    if (c < -1.0f) c = -1.0f;
    float theta = pm_acosf(c);
    float s = pm_sinf(theta);
    float wa = pm_sinf((1.0f - t) * theta) / s;
    float wb = pm_sinf(t * theta) / s;
    return pm_quat_normalize(pm_quat_make(wa * a.x + wb * bb.x, wa * a.y + wb * bb.y,
                                          wa * a.z + wb * bb.z, wa * a.w + wb * bb.w));
}
/* Rotation vector (axis * angle) of a unit quaternion, shortest arc. */
static inline pm_vec3 pm_quat_to_scaled_axis(pm_quat q) {
    if (q.w < 0.0f) q = pm_quat_neg(q);
    float s = sqrtf(q.x * q.x + q.y * q.y + q.z * q.z);
    if (s < 1e-8f) return pm_vec3_make(2.0f * q.x, 2.0f * q.y, 2.0f * q.z);
    float angle = 2.0f * pm_atan2f(s, q.w);
    float k = angle / s;
    return pm_vec3_make(q.x * k, q.y * k, q.z * k);
}
static inline pm_quat pm_quat_from_scaled_axis(pm_vec3 v) {
    float angle = pm_vec3_length(v);
    if (angle < 1e-8f) return pm_quat_normalize(pm_quat_make(0.5f * v.x, 0.5f * v.y, 0.5f * v.z, 1.0f));
    float s = pm_sinf(0.5f * angle) / angle;
    return pm_quat_make(v.x * s, v.y * s, v.z * s, pm_cosf(0.5f * angle));
}
/* q^t: the same axis, t times the (shortest-arc) angle. */
static inline pm_quat pm_quat_pow(pm_quat q, float t) { return pm_quat_from_scaled_axis(pm_vec3_scale(pm_quat_to_scaled_axis(q), t)); }
/* Rotation about +Y (up) by `yaw` radians. */
static inline pm_quat pm_quat_from_yaw(float yaw) { return pm_quat_make(0.0f, pm_sinf(0.5f * yaw), 0.0f, pm_cosf(0.5f * yaw)); }

static inline pm_transform pm_transform_identity(void) {
    pm_transform t;
    t.rotation = pm_quat_identity();
    t.translation = pm_vec3_zero();
    return t;
}
/* parent * child: child expressed in parent's space to the space parent lives in. */
static inline pm_transform pm_transform_mul(pm_transform parent, pm_transform child) {
    pm_transform r;
    r.rotation = pm_quat_mul(parent.rotation, child.rotation);
    r.translation = pm_vec3_add(parent.translation, pm_quat_rotate(parent.rotation, child.translation));
    return r;
}
static inline pm_transform pm_transform_inverse(pm_transform t) {
    pm_transform r;
    r.rotation = pm_quat_conjugate(t.rotation);
    r.translation = pm_quat_rotate(r.rotation, pm_vec3_neg(t.translation));
    return r;
}
static inline pm_vec3 pm_transform_point(pm_transform t, pm_vec3 p) { return pm_vec3_add(t.translation, pm_quat_rotate(t.rotation, p)); }
static inline pm_vec3 pm_transform_inv_point(pm_transform t, pm_vec3 p) { return pm_quat_inv_rotate(t.rotation, pm_vec3_sub(p, t.translation)); }

PM_EXTERN_C_END

#endif
