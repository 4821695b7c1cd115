/* Private: 4-wide float vectors for the pose jobs.
 *
 * With GCC and Clang the type is a generic vector (__attribute__((vector_size(16)))), which the
 * compiler lowers to SSE2 on x86-64 and NEON on ARM with the default flags; the few operations
 * generic vectors lack or compile poorly (square root, native minimum and maximum, 8-byte loads,
 * integer-domain interleaves) use the platform intrinsic. PM_SIMD_SCALAR defined (or a compiler
 * without generic vectors, though the search kernels need them) gets a struct of four floats with
 * the same interface and the same bits, so the pose kernels are written once
 * (docs/ARCHITECTURE.md#compilers-and-cpus). */
#ifndef PM_SIMD_H
#define PM_SIMD_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(PM_SIMD_SCALAR)
#define PM_SIMD_VECTOR 1
typedef float pm_f4 __attribute__((vector_size(16)));
typedef int32_t pm_i4 __attribute__((vector_size(16)));
#if defined(__SSE2__) || defined(__x86_64__)
#include <emmintrin.h>
#define PM_SIMD_SSE 1
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#define PM_SIMD_NEON 1
#endif
#define PM_SIMD_INLINE static inline __attribute__((always_inline))
#if defined(__clang__) || __GNUC__ >= 12
#define F4_SHUFFLE2(a, b, i, j, k, l) __builtin_shufflevector((a), (b), i, j, k, l)
/* A one-vector shuffle in the integer domain (pshufd on x86): non-destructive, so no register copies. */
#define I4_SHUFFLE(v, i, j, k, l) ((pm_f4)__builtin_shufflevector((pm_i4)(v), (pm_i4)(v), i, j, k, l))
#else
#define F4_SHUFFLE2(a, b, i, j, k, l) __builtin_shuffle((a), (b), (pm_i4){i, j, k, l})
#define I4_SHUFFLE(v, i, j, k, l) ((pm_f4)__builtin_shuffle((pm_i4)(v), (pm_i4){i, j, k, l}))
#endif
#else
typedef struct pm_f4 {
    float v[4];
} pm_f4;
typedef struct pm_i4 {
    int32_t v[4];
} pm_i4;
#define PM_SIMD_INLINE static inline
#endif

#define PM_SIGN_BIT ((int32_t)0x80000000u)

#if defined(PM_SIMD_VECTOR)

PM_SIMD_INLINE pm_f4 f4_load(const float *p) {
    pm_f4 v;
    memcpy(&v, p, sizeof v);
    return v;
}
PM_SIMD_INLINE void f4_store(float *p, pm_f4 v) { memcpy(p, &v, sizeof v); }
/* 16-byte aligned access (pose arrays are): lets the compiler fold loads into arithmetic. The
 * may_alias type makes reading float arrays through it well-defined, as __m128 does. */
typedef float pm_f4_alias __attribute__((vector_size(16), may_alias, aligned(16)));
PM_SIMD_INLINE pm_f4 f4_load_a(const float *p) { return *(const pm_f4_alias *)p; }
PM_SIMD_INLINE void f4_store_a(float *p, pm_f4 v) { *(pm_f4_alias *)p = v; }
PM_SIMD_INLINE pm_f4 f4_set1(float x) { return (pm_f4){x, x, x, x}; }
PM_SIMD_INLINE pm_f4 f4_set(float a, float b, float c, float d) { return (pm_f4){a, b, c, d}; }
PM_SIMD_INLINE pm_f4 f4_zero(void) { return (pm_f4){0.0f, 0.0f, 0.0f, 0.0f}; }
PM_SIMD_INLINE pm_f4 f4_add(pm_f4 a, pm_f4 b) { return a + b; }
PM_SIMD_INLINE pm_f4 f4_sub(pm_f4 a, pm_f4 b) { return a - b; }
PM_SIMD_INLINE pm_f4 f4_mul(pm_f4 a, pm_f4 b) { return a * b; }
PM_SIMD_INLINE pm_f4 f4_div(pm_f4 a, pm_f4 b) { return a / b; }
PM_SIMD_INLINE pm_f4 f4_madd(pm_f4 a, pm_f4 b, pm_f4 c) { return a * b + c; }
PM_SIMD_INLINE float f4_lane(pm_f4 v, int i) { return v[i]; }
PM_SIMD_INLINE pm_i4 f4_bits(pm_f4 v) { return (pm_i4)v; }
PM_SIMD_INLINE pm_f4 f4_from_bits(pm_i4 v) { return (pm_f4)v; }
PM_SIMD_INLINE pm_i4 i4_set1(int32_t x) { return (pm_i4){x, x, x, x}; }
PM_SIMD_INLINE pm_i4 i4_and(pm_i4 a, pm_i4 b) { return a & b; }
PM_SIMD_INLINE pm_i4 i4_or(pm_i4 a, pm_i4 b) { return a | b; }
PM_SIMD_INLINE pm_i4 i4_xor(pm_i4 a, pm_i4 b) { return a ^ b; }
PM_SIMD_INLINE pm_i4 i4_andnot(pm_i4 a, pm_i4 b) { return ~a & b; }
/* Comparison masks: all ones where true. */
PM_SIMD_INLINE pm_i4 f4_lt(pm_f4 a, pm_f4 b) { return (pm_i4)(a < b); }
PM_SIMD_INLINE pm_i4 f4_le(pm_f4 a, pm_f4 b) { return (pm_i4)(a <= b); }
PM_SIMD_INLINE pm_i4 f4_eq(pm_f4 a, pm_f4 b) { return (pm_i4)(a == b); }
PM_SIMD_INLINE int i4_any(pm_i4 m) { return (m[0] | m[1] | m[2] | m[3]) != 0; }
PM_SIMD_INLINE int i4_all(pm_i4 m) { return (m[0] & m[1] & m[2] & m[3]) == -1; }

PM_SIMD_INLINE pm_f4 f4_sqrt(pm_f4 a) {
#if defined(PM_SIMD_SSE)
    return (pm_f4)_mm_sqrt_ps((__m128)a);
#elif defined(PM_SIMD_NEON)
    return (pm_f4)vsqrtq_f32((float32x4_t)a);
#else
    return (pm_f4){sqrtf(a[0]), sqrtf(a[1]), sqrtf(a[2]), sqrtf(a[3])};
#endif
}

/* Native minimum / maximum (which operand a NaN yields is unspecified: callers check NaN apart). */
PM_SIMD_INLINE pm_f4 f4_min_fast(pm_f4 a, pm_f4 b) {
#if defined(PM_SIMD_SSE)
    return (pm_f4)_mm_min_ps((__m128)a, (__m128)b);
#elif defined(PM_SIMD_NEON)
    return (pm_f4)vminq_f32((float32x4_t)a, (float32x4_t)b);
#else
    return (pm_f4){a[0] < b[0] ? a[0] : b[0], a[1] < b[1] ? a[1] : b[1], a[2] < b[2] ? a[2] : b[2], a[3] < b[3] ? a[3] : b[3]};
#endif
}
PM_SIMD_INLINE pm_f4 f4_max_fast(pm_f4 a, pm_f4 b) {
#if defined(PM_SIMD_SSE)
    return (pm_f4)_mm_max_ps((__m128)a, (__m128)b);
#elif defined(PM_SIMD_NEON)
    return (pm_f4)vmaxq_f32((float32x4_t)a, (float32x4_t)b);
#else
    return (pm_f4){a[0] > b[0] ? a[0] : b[0], a[1] > b[1] ? a[1] : b[1], a[2] > b[2] ? a[2] : b[2], a[3] > b[3] ? a[3] : b[3]};
#endif
}

/* (p[0], p[1], 0, 0) and (p[0], 0, 0, 0): one 8- or 4-byte access each, so that a load is forwarded
 * from a store of the same width. */
PM_SIMD_INLINE pm_f4 f4_load2(const float *p) {
#if defined(PM_SIMD_SSE)
    return (pm_f4)_mm_loadl_epi64((const __m128i *)(const void *)p); /* movq: no alignment needed */
#else
    return (pm_f4){p[0], p[1], 0.0f, 0.0f};
#endif
}
PM_SIMD_INLINE pm_f4 f4_load1(const float *p) {
#if defined(PM_SIMD_SSE)
    return (pm_f4)_mm_load_ss(p);
#else
    return (pm_f4){p[0], 0.0f, 0.0f, 0.0f};
#endif
}

/* Interleaves for transposes: (a0 b0 a1 b1), (a2 b2 a3 b3), (a0 a1 b0 b1), (a2 a3 b2 b3). On x86 in the
 * integer domain: punpck* issue on two ports where unpcklps, movlhps and movhlps (what the compiler
 * picks for float vectors) have one, and local-to-model is bound by its vector ports. */
#if defined(PM_SIMD_SSE)
PM_SIMD_INLINE pm_f4 f4_unpacklo32(pm_f4 a, pm_f4 b) { return (pm_f4)_mm_unpacklo_epi32((__m128i)a, (__m128i)b); }
PM_SIMD_INLINE pm_f4 f4_unpackhi32(pm_f4 a, pm_f4 b) { return (pm_f4)_mm_unpackhi_epi32((__m128i)a, (__m128i)b); }
PM_SIMD_INLINE pm_f4 f4_unpacklo64(pm_f4 a, pm_f4 b) { return (pm_f4)_mm_unpacklo_epi64((__m128i)a, (__m128i)b); }
PM_SIMD_INLINE pm_f4 f4_unpackhi64(pm_f4 a, pm_f4 b) { return (pm_f4)_mm_unpackhi_epi64((__m128i)a, (__m128i)b); }
#else
PM_SIMD_INLINE pm_f4 f4_unpacklo32(pm_f4 a, pm_f4 b) { return F4_SHUFFLE2(a, b, 0, 4, 1, 5); }
PM_SIMD_INLINE pm_f4 f4_unpackhi32(pm_f4 a, pm_f4 b) { return F4_SHUFFLE2(a, b, 2, 6, 3, 7); }
PM_SIMD_INLINE pm_f4 f4_unpacklo64(pm_f4 a, pm_f4 b) { return F4_SHUFFLE2(a, b, 0, 1, 4, 5); }
PM_SIMD_INLINE pm_f4 f4_unpackhi64(pm_f4 a, pm_f4 b) { return F4_SHUFFLE2(a, b, 2, 3, 6, 7); }
#endif

#else /* scalar fallback */

#define PM_F4_MAP(expr)                                                                                               \
    pm_f4 r;                                                                                                          \
    for (int i = 0; i < 4; i++) r.v[i] = (expr);                                                                      \
    return r
#define PM_I4_MAP(expr)                                                                                               \
    pm_i4 r;                                                                                                          \
    for (int i = 0; i < 4; i++) r.v[i] = (expr);                                                                      \
    return r

PM_SIMD_INLINE pm_f4 f4_load(const float *p) {
    pm_f4 v;
    memcpy(v.v, p, sizeof v.v);
    return v;
}
PM_SIMD_INLINE void f4_store(float *p, pm_f4 v) { memcpy(p, v.v, sizeof v.v); }
PM_SIMD_INLINE pm_f4 f4_load_a(const float *p) { return f4_load(p); }
PM_SIMD_INLINE void f4_store_a(float *p, pm_f4 v) { f4_store(p, v); }
PM_SIMD_INLINE pm_f4 f4_set1(float x) { PM_F4_MAP(x); }
PM_SIMD_INLINE pm_f4 f4_set(float a, float b, float c, float d) {
    pm_f4 r;
    r.v[0] = a;
    r.v[1] = b;
    r.v[2] = c;
    r.v[3] = d;
    return r;
}
PM_SIMD_INLINE pm_f4 f4_zero(void) { PM_F4_MAP(0.0f); }
PM_SIMD_INLINE pm_f4 f4_add(pm_f4 a, pm_f4 b) { PM_F4_MAP(a.v[i] + b.v[i]); }
PM_SIMD_INLINE pm_f4 f4_sub(pm_f4 a, pm_f4 b) { PM_F4_MAP(a.v[i] - b.v[i]); }
PM_SIMD_INLINE pm_f4 f4_mul(pm_f4 a, pm_f4 b) { PM_F4_MAP(a.v[i] * b.v[i]); }
PM_SIMD_INLINE pm_f4 f4_div(pm_f4 a, pm_f4 b) { PM_F4_MAP(a.v[i] / b.v[i]); }
PM_SIMD_INLINE pm_f4 f4_madd(pm_f4 a, pm_f4 b, pm_f4 c) { PM_F4_MAP(a.v[i] * b.v[i] + c.v[i]); }
PM_SIMD_INLINE float f4_lane(pm_f4 v, int i) { return v.v[i]; }
PM_SIMD_INLINE pm_i4 f4_bits(pm_f4 v) {
    pm_i4 r;
    memcpy(r.v, v.v, sizeof r.v);
    return r;
}
PM_SIMD_INLINE pm_f4 f4_from_bits(pm_i4 v) {
    pm_f4 r;
    memcpy(r.v, v.v, sizeof r.v);
    return r;
}
PM_SIMD_INLINE pm_i4 i4_set1(int32_t x) { PM_I4_MAP(x); }
PM_SIMD_INLINE pm_i4 i4_and(pm_i4 a, pm_i4 b) { PM_I4_MAP(a.v[i] & b.v[i]); }
PM_SIMD_INLINE pm_i4 i4_or(pm_i4 a, pm_i4 b) { PM_I4_MAP(a.v[i] | b.v[i]); }
PM_SIMD_INLINE pm_i4 i4_xor(pm_i4 a, pm_i4 b) { PM_I4_MAP(a.v[i] ^ b.v[i]); }
PM_SIMD_INLINE pm_i4 i4_andnot(pm_i4 a, pm_i4 b) { PM_I4_MAP(~a.v[i] & b.v[i]); }
PM_SIMD_INLINE pm_i4 f4_lt(pm_f4 a, pm_f4 b) { PM_I4_MAP(a.v[i] < b.v[i] ? -1 : 0); }
PM_SIMD_INLINE pm_i4 f4_le(pm_f4 a, pm_f4 b) { PM_I4_MAP(a.v[i] <= b.v[i] ? -1 : 0); }
PM_SIMD_INLINE pm_i4 f4_eq(pm_f4 a, pm_f4 b) { PM_I4_MAP(a.v[i] == b.v[i] ? -1 : 0); }
PM_SIMD_INLINE int i4_any(pm_i4 m) { return (m.v[0] | m.v[1] | m.v[2] | m.v[3]) != 0; }
PM_SIMD_INLINE int i4_all(pm_i4 m) { return (m.v[0] & m.v[1] & m.v[2] & m.v[3]) == -1; }
PM_SIMD_INLINE pm_f4 f4_sqrt(pm_f4 a) { PM_F4_MAP(sqrtf(a.v[i])); }
PM_SIMD_INLINE pm_f4 f4_min_fast(pm_f4 a, pm_f4 b) { PM_F4_MAP(a.v[i] < b.v[i] ? a.v[i] : b.v[i]); }
PM_SIMD_INLINE pm_f4 f4_max_fast(pm_f4 a, pm_f4 b) { PM_F4_MAP(a.v[i] > b.v[i] ? a.v[i] : b.v[i]); }
PM_SIMD_INLINE pm_f4 f4_load2(const float *p) { return f4_set(p[0], p[1], 0.0f, 0.0f); }
PM_SIMD_INLINE pm_f4 f4_load1(const float *p) { return f4_set(p[0], 0.0f, 0.0f, 0.0f); }
PM_SIMD_INLINE pm_f4 f4_unpacklo32(pm_f4 a, pm_f4 b) { return f4_set(a.v[0], b.v[0], a.v[1], b.v[1]); }
PM_SIMD_INLINE pm_f4 f4_unpackhi32(pm_f4 a, pm_f4 b) { return f4_set(a.v[2], b.v[2], a.v[3], b.v[3]); }
PM_SIMD_INLINE pm_f4 f4_unpacklo64(pm_f4 a, pm_f4 b) { return f4_set(a.v[0], a.v[1], b.v[0], b.v[1]); }
PM_SIMD_INLINE pm_f4 f4_unpackhi64(pm_f4 a, pm_f4 b) { return f4_set(a.v[2], a.v[3], b.v[2], b.v[3]); }

#endif

/* ---- composite helpers (shared by both back ends) ---- */

PM_SIMD_INLINE pm_f4 f4_select(pm_i4 mask, pm_f4 a, pm_f4 b) {
    return f4_from_bits(i4_or(i4_and(mask, f4_bits(a)), i4_andnot(mask, f4_bits(b))));
}
PM_SIMD_INLINE pm_f4 f4_max(pm_f4 a, pm_f4 b) { return f4_select(f4_lt(a, b), b, a); }
/* The sign bits of a, as a mask to xor into other values. */
PM_SIMD_INLINE pm_i4 f4_sign(pm_f4 a) { return i4_and(f4_bits(a), i4_set1(PM_SIGN_BIT)); }
PM_SIMD_INLINE pm_f4 f4_xor(pm_f4 a, pm_i4 bits) { return f4_from_bits(i4_xor(f4_bits(a), bits)); }
PM_SIMD_INLINE pm_f4 f4_abs(pm_f4 a) { return f4_from_bits(i4_andnot(i4_set1(PM_SIGN_BIT), f4_bits(a))); }

/* Polynomial approximations on the ranges the quaternion code needs; coefficients are least-squares
 * fits refined towards minimax (max error: asin 4e-7, sin 9e-7 rad). Evaluated by Estrin's
 * scheme and free of divisions and square roots: their latency, not their operation count, bounded
 * the first version. */

/* asin(x) for x in [0, 1/sqrt(2)] (a little beyond is fine). */
PM_SIMD_INLINE pm_f4 f4_asin_small(pm_f4 x) {
    pm_f4 x2 = f4_mul(x, x), x4 = f4_mul(x2, x2);
    pm_f4 a = f4_madd(x2, f4_set1(0.072171327f), f4_set1(0.16679913f));
    pm_f4 b = f4_madd(x2, f4_set1(-0.033925967f), f4_set1(0.065190797f));
    pm_f4 p = f4_madd(x4, f4_madd(x4, f4_set1(0.10397761f), b), a);
    return f4_madd(f4_mul(p, x2), x, x);
}

/* The angle whose sine is s and cosine is c, for s, c >= 0 with s^2 + c^2 = 1: asin of the smaller
 * one keeps the polynomial away from asin's steep end. */
PM_SIMD_INLINE pm_f4 f4_angle_sc(pm_f4 s, pm_f4 c) {
    pm_i4 use_s = f4_le(s, c);
    pm_f4 a = f4_asin_small(f4_min_fast(s, c));
    return f4_select(use_s, a, f4_sub(f4_set1(1.57079633f), a));
}

/* sin(x) for x in [-pi/2, pi/2]. */
PM_SIMD_INLINE pm_f4 f4_sin_hp(pm_f4 x) {
    pm_f4 x2 = f4_mul(x, x);
    pm_f4 a = f4_madd(x2, f4_set1(8.3123645e-03f), f4_set1(-1.6665681e-01f));
    pm_f4 p = f4_madd(f4_mul(x2, x2), f4_set1(-1.8492138e-04f), a);
    return f4_madd(f4_mul(p, x2), x, x);
}

#endif
