/* Private: signed 128-bit integers for the exact geometric predicates of blend spaces.
 *
 * Written out in two 64-bit words rather than relying on __int128 so that every compiler takes
 * the same, tested path. Only what the predicates need is here; callers keep their operands
 * within the bounds stated at each use, so no operation overflows 128 bits. */
#ifndef PM_DELAUNAY_EXACT_H
#define PM_DELAUNAY_EXACT_H

#include <stdint.h>

typedef struct pm_i128 {
    uint64_t hi, lo; /* two's complement */
} pm_i128;

static inline pm_i128 pm_i128_from(int64_t a) {
    pm_i128 r;
    r.lo = (uint64_t)a;
    r.hi = a < 0 ? ~(uint64_t)0 : 0u;
    return r;
}

static inline pm_i128 pm_i128_neg(pm_i128 a) {
    pm_i128 r;
    r.lo = ~a.lo + 1u;
    r.hi = ~a.hi + (r.lo == 0u ? 1u : 0u);
    return r;
}

static inline pm_i128 pm_i128_add(pm_i128 a, pm_i128 b) {
    pm_i128 r;
    r.lo = a.lo + b.lo;
    r.hi = a.hi + b.hi + (r.lo < a.lo ? 1u : 0u);
    return r;
}

static inline pm_i128 pm_i128_sub(pm_i128 a, pm_i128 b) { return pm_i128_add(a, pm_i128_neg(b)); }

static inline int pm_i128_sign(pm_i128 a) {
    if ((int64_t)a.hi < 0) return -1;
    return (a.hi | a.lo) != 0u ? 1 : 0;
}

/* Full 64 x 64 -> 128-bit product of magnitudes. */
static inline pm_i128 pm_u64_mul_wide(uint64_t a, uint64_t b) {
    uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
    pm_i128 r;
    r.lo = (p00 & 0xFFFFFFFFu) | (mid << 32);
    r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return r;
}

static inline uint64_t pm_u64_abs(int64_t a) { return a < 0 ? (uint64_t)0 - (uint64_t)a : (uint64_t)a; }

static inline pm_i128 pm_i128_mul(int64_t a, int64_t b) {
    pm_i128 r = pm_u64_mul_wide(pm_u64_abs(a), pm_u64_abs(b));
    return (a < 0) != (b < 0) ? pm_i128_neg(r) : r;
}

/* a * b for a product known to fit in 127 bits (the callers' bounds: |a| < 2^76, |b| < 2^51). */
static inline pm_i128 pm_i128_mul64(pm_i128 a, int64_t b) {
    int neg = (pm_i128_sign(a) < 0) != (b < 0);
    pm_i128 ua = pm_i128_sign(a) < 0 ? pm_i128_neg(a) : a;
    uint64_t ub = pm_u64_abs(b);
    pm_i128 r = pm_u64_mul_wide(ua.lo, ub);
    r.hi += ua.hi * ub;
    return neg ? pm_i128_neg(r) : r;
}

/* Nearest double to within one rounding of each word: deterministic, and exact below 2^53. */
static inline double pm_i128_to_double(pm_i128 a) {
    int neg = pm_i128_sign(a) < 0;
    pm_i128 m = neg ? pm_i128_neg(a) : a;
    double d = (double)m.hi * 18446744073709551616.0 + (double)m.lo;
    return neg ? -d : d;
}

#endif
