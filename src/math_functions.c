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

/* x = k pi/2 + r, |r| <= pi/4; returns k mod 4. The quadrant comes from an integer for any |x|
 * below 2^52 pi/2 (far beyond an angle's meaning); above, from fmod - still the same bits
 * everywhere. */
static int reduce_quadrant(double x, double *r) {
    double kd = x * TWO_OVER_PI, k;
    int quadrant;
    if (fabs(kd) < 0x1p52) {
        int64_t ki = round_to_int(kd);
        k = (double)ki;
        quadrant = (int)(ki & 3); /* two's complement: -1 & 3 = 3 */
    } else {
        k = floor(kd + 0.5);
        double q = fmod(k, 4.0); /* exact */
        quadrant = (int)(q < 0.0 ? q + 4.0 : q);
    }
    *r = ((x - k * HALF_PI_1) - k * HALF_PI_2) - k * HALF_PI_3;
    return quadrant;
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
