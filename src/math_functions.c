/* sin, cos, exp, atan2 and acos with the same bits on every machine.
 *
 * libm's are not correctly rounded, and their last bits differ between C libraries, between
 * builds of one (glibc 2.36's atan2f and acosf disagree between x86-64 and AArch64 for about
 * 0.1% and 0.5% of arguments) and between the code paths one picks by CPU (glibc's x86-64
 * FMA variants). The angles they give - Euler angles read from BVH, root facing and its
 * smoothing weights, loop turns, slerp, blend-space ground yaw - reach databases and blends, which
 * must be byte-identical wherever they are built. These use only + - * / and sqrt, each
 * correctly rounded by IEEE 754 and never contracted (-ffp-contract=off), and exact conversions
 * to and from integers (floor and fmod for huge arguments): in double, then rounded once to
 * float, so within 1 ulp of the true value and almost always the nearest float. */
#include "core.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* x rounded to an integer, half away from zero, for |x| < 2^62 (callers check). */
static int64_t round_to_int(double x) { return (int64_t)(x + (x >= 0.0 ? 0.5 : -0.5)); }

/* pi/2 in three parts: the first two have 33 significant bits, so k times each is exact for
 * |k| < 2^20 and the reduced argument keeps its accuracy well beyond any joint angle. */
#define HALF_PI_1 0x1.921fb544p+0
#define HALF_PI_2 0x1.0b4611a6p-34
#define HALF_PI_3 0x1.3198a2e037073p-69
#define TWO_OVER_PI 0x1.45f306dc9c883p-1
#define PI_D 0x1.921fb54442d18p+1
#define HALF_PI_D 0x1.921fb54442d18p+0

/* Taylor series on |r| <= pi/4: the first term left out is below 1e-19 of the result. */
static double sin_series(double r) {
    static const double c[8] = {-1.0 / 6.0,          1.0 / 120.0,          -1.0 / 5040.0,           1.0 / 362880.0,
                                -1.0 / 39916800.0,   1.0 / 6227020800.0,   -1.0 / 1307674368000.0,  1.0 / 355687428096000.0};
    if (r == 0.0) return r; /* keeps the sign of zero, as sin(-0) = -0 */
    double r2 = r * r, p = c[7];
    for (int k = 6; k >= 0; k--) p = p * r2 + c[k];
    return r + r * (r2 * p);
}

static double cos_series(double r) {
    static const double c[9] = {-1.0 / 2.0,           1.0 / 24.0,           -1.0 / 720.0,
                                1.0 / 40320.0,        -1.0 / 3628800.0,     1.0 / 479001600.0,
                                -1.0 / 87178291200.0, 1.0 / 20922789888000.0, -1.0 / 6402373705728000.0};
    double r2 = r * r, p = c[8];
    for (int k = 7; k >= 0; k--) p = p * r2 + c[k];
    return 1.0 + r2 * p;
}

/* The binary digits of 2/pi, 32 at a time: 2/pi = sum of two_over_pi_bits[i] 2^(-32 (i + 1)).
 * 1,280 bits: enough for any double. */
static const uint32_t two_over_pi_bits[40] = {
    0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561,
    0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484,
    0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b, 0x1ff897ff, 0xde05980f,
    0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d, 0x7527bac7, 0xebe5f17b,
    0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08, 0x56033046, 0xfc7b6bab, 0xf0cfbc20, 0x9af4361d};

/* reduce_quadrant for |x| >= 2^20 pi/2, where k pi/2 in three parts stops being exact: x 2/pi
 * mod 4 from the 192 bits of 2/pi that decide it. With |x| = m 2^e (m an integer of 53 bits),
 * the digits of 2/pi above 2^(2 - e) only add multiples of 4, and those below the 192 taken add
 * less than 2^-105 of a quarter turn; the product m x those 192 bits is exact in integers (32-bit
 * limbs, portable), and the quarter turns' fraction is rounded to a double once. */
static int reduce_huge(double x, double *r) {
    int E;
    double f = frexp(fabs(x), &E);
    uint64_t m = (uint64_t)ldexp(f, 53); /* exact */
    int e = E - 53, i0 = e >= 2 ? (e - 2) / 32 : 0;
    uint32_t w[6], p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < 6; j++) w[j] = two_over_pi_bits[i0 + 5 - j]; /* least significant first */
    const uint32_t ml[2] = {(uint32_t)m, (uint32_t)(m >> 32)};
    for (int a = 0; a < 2; a++) {
        uint64_t carry = 0;
        for (int b = 0; b < 6; b++) {
            uint64_t t = (uint64_t)ml[a] * w[b] + p[a + b] + carry;
            p[a + b] = (uint32_t)t;
            carry = t >> 32;
        }
        for (int k = a + 6; carry && k < 8; k++) {
            uint64_t t = (uint64_t)p[k] + carry;
            p[k] = (uint32_t)t;
            carry = t >> 32;
        }
    }
    /* x 2/pi = p 2^-s (mod 4): bits s and s + 1 of p count quarter turns, those below are the
     * fraction (s is 159..224). */
    const int s = 32 * (i0 + 6) - e;
#define PM_BIT(n) ((p[(n) / 32] >> ((n) % 32)) & 1u)
    int quadrant = (int)(PM_BIT(s) | PM_BIT(s + 1) << 1);
    const int up = (int)PM_BIT(s - 1); /* the fraction is a half or more: the next quarter turn */
    /* g = the fraction's distance to the nearer whole turn, in s-bit two's complement. */
    uint32_t g[8];
    for (int k = 0; k < 8; k++) g[k] = p[k];
    if (up) {
        uint64_t borrow = 1; /* g = 2^s - fraction = ~fraction + 1 within s bits */
        for (int k = 0; k < 8; k++) {
            uint64_t t = (uint64_t)(uint32_t)~g[k] + borrow;
            g[k] = (uint32_t)t;
            borrow = t >> 32;
        }
        quadrant = (quadrant + 1) & 3;
    }
    for (int k = 0; k < 8; k++) { /* keep bits 0..s-1 */
        int lo = 32 * k;
        if (lo >= s) g[k] = 0;
        else if (s - lo < 32) g[k] &= (1u << (s - lo)) - 1u;
    }
#undef PM_BIT
    int top = 7;
    while (top >= 0 && g[top] == 0) top--;
    double frac = 0.0;
    if (top >= 0) {
        /* The 64 bits from the highest set one down (three limbs when they straddle two), to a
         * double: one rounding. */
        int h = 31;
        while (!((g[top] >> h) & 1u)) h--;
        int hb = 32 * top + h; /* the highest set bit */
        uint64_t bits = 0;
        for (int n = hb; n > hb - 64 && n >= 0; n--) bits = bits << 1 | ((g[n / 32] >> (n % 32)) & 1u);
        int taken = hb + 1 < 64 ? hb + 1 : 64;
        frac = ldexp((double)bits, hb + 1 - taken - s);
    }
    double rr = (up ? -frac : frac) * HALF_PI_D;
    if (x < 0.0) {
        rr = -rr;
        quadrant = (4 - quadrant) & 3;
    }
    *r = rr;
    return quadrant;
}

/* x = k pi/2 + r, |r| <= pi/4; returns k mod 4. k pi/2 taken off in three parts, exact for
 * |k| < 2^20 (any joint angle); beyond, reduce_huge. The same bits everywhere. */
static int reduce_quadrant(double x, double *r) {
    double kd = x * TWO_OVER_PI;
    if (!(fabs(kd) < 0x1p20)) return reduce_huge(x, r);
    int64_t ki = round_to_int(kd);
    double k = (double)ki;
    *r = ((x - k * HALF_PI_1) - k * HALF_PI_2) - k * HALF_PI_3;
    return (int)(ki & 3); /* two's complement: -1 & 3 = 3 */
}

/* sin(x) (quadrant_shift 0) or cos(x) (1: sin(x + pi/2)). */
static double sin_quadrant(double x, int quadrant_shift) {
    if (!isfinite(x)) return x - x; /* NaN, as libm's */
    double r;
    switch ((reduce_quadrant(x, &r) + quadrant_shift) & 3) {
    case 0: return sin_series(r);
    case 1: return cos_series(r);
    case 2: return -sin_series(r);
    default: return -cos_series(r);
    }
}

void pm_sincos_d(double x, double *sin_out, double *cos_out) {
    if (!isfinite(x)) {
        *sin_out = *cos_out = x - x;
        return;
    }
    double r;
    int q = reduce_quadrant(x, &r);
    double s = sin_series(r), c = cos_series(r);
    *sin_out = q == 0 ? s : q == 1 ? c : q == 2 ? -s : -c;
    *cos_out = q == 0 ? c : q == 1 ? -s : q == 2 ? -c : s;
}

float pm_sinf(float x) { return (float)sin_quadrant((double)x, 0); }
float pm_cosf(float x) { return (float)sin_quadrant((double)x, 1); }

/* ln 2 in two parts, the first with 32 significant bits (k times it exact for |k| < 2^21). */
#define LN2_HI 0x1.62e42feep-1
#define LN2_LO 0x1.a39ef35793c76p-33
#define LOG2_E 0x1.71547652b82fep+0

float pm_expf(float x) {
    if (isnan(x)) return x;
    if (x > 89.0f) return INFINITY;
    if (x < -104.0f) return 0.0f;
    double d = (double)x;
    int64_t k = round_to_int(d * LOG2_E); /* -150..129 */
    double kd = (double)k;
    double r = (d - kd * LN2_HI) - kd * LN2_LO; /* |r| <= 0.35: the series to r^14 is within 3e-18 */
    static const double c[15] = {1.0,           1.0,           1.0 / 2.0,        1.0 / 6.0,         1.0 / 24.0,
                                 1.0 / 120.0,   1.0 / 720.0,   1.0 / 5040.0,     1.0 / 40320.0,     1.0 / 362880.0,
                                 1.0 / 3628800.0, 1.0 / 39916800.0, 1.0 / 479001600.0, 1.0 / 6227020800.0,
                                 1.0 / 87178291200.0};
    double p = c[14];
    for (int i = 13; i >= 0; i--) p = p * r + c[i];
    /* 2^k as a double's bits: a normal number for every k here, so the product is exact. */
    uint64_t bits = (uint64_t)(k + 1023) << 52;
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    return (float)(p * scale);
}

/* atan(i / 8), i = 0..8, to the nearest double. */
static const double atan_eighths[9] = {0.0,
                                       0x1.fd5ba9aac2f6ep-4,
                                       0x1.f5b75f92c80ddp-3,
                                       0x1.6f61941e4def1p-2,
                                       0x1.dac670561bb4fp-2,
                                       0x1.1e00babdefeb4p-1,
                                       0x1.4978fa3269ee1p-1,
                                       0x1.700a7c5784634p-1,
                                       0x1.921fb54442d18p-1};

/* atan(t) for 0 <= t <= 1: atan(t) = atan(c) + atan((t - c) / (1 + t c)) with c the nearest
 * eighth leaves |u| <= 1/16, where the Taylor series to u^13 is within 1e-18 of atan(u)
 * relatively (and near 0, c = 0: atan(t) keeps its full relative accuracy). */
static double atan01(double t) {
    static const double c[7] = {1.0, -1.0 / 3.0, 1.0 / 5.0, -1.0 / 7.0, 1.0 / 9.0, -1.0 / 11.0, 1.0 / 13.0};
    int i = (int)(t * 8.0 + 0.5);
    double ci = (double)i * 0.125, u = i ? (t - ci) / (1.0 + t * ci) : t;
    double u2 = u * u, p = c[6];
    for (int k = 5; k >= 0; k--) p = p * u2 + c[k];
    return atan_eighths[i] + u * p;
}

double pm_atan2_d(double y, double x) {
    if (isnan(x) || isnan(y)) return x + y;
    double ax = fabs(x), ay = fabs(y), a;
    if (ax == 0.0 && ay == 0.0) a = 0.0;
    else if (isinf(ax) && isinf(ay)) a = 0.25 * PI_D;
    else if (ay <= ax) a = atan01(ay / ax);
    else a = HALF_PI_D - atan01(ax / ay);
    if (signbit(x)) a = PI_D - a;
    return signbit(y) ? -a : a;
}

float pm_atan2f(float y, float x) { return (float)pm_atan2_d((double)y, (double)x); }

float pm_acosf(float x) {
    if (!(fabsf(x) <= 1.0f)) return isnan(x) ? x : NAN;
    double d = (double)x;
    return (float)pm_atan2_d(sqrt((1.0 - d) * (1.0 + d)), d);
}
