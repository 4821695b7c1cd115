/* sin, cos, exp, atan2 and acos with the same bits on every machine.
 *
 * libm's are not correctly rounded, and their last bits differ between C libraries, between
 * builds of one (glibc 2.36's atan2f and acosf disagree between x86-64 and AArch64 for about
 * 0.1% and 0.5% of arguments) and between the code paths one picks by CPU (glibc's x86-64
 * FMA variants). The angles they give - Euler angles read from BVH, root facing and its
 * smoothing weights, loop turns, slerp, blend-space ground yaw - reach databases and blends, which
 * must be byte-identical wherever they are built. These use only + - * / and sqrt, each
 * correctly rounded by IEEE 754 and never contracted (-ffp-contract=off), plus the exact floor,
 * fmod and ldexp: in double, then rounded once to float, so within 1 ulp of the true value and
 * almost always the nearest float. */
#include "core.h"

#include <math.h>

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

/* sin(x) (quadrant_shift 0) or cos(x) (1 = sin(x + pi/2)): x = k pi/2 + r, |r| <= pi/4. */
static double sin_quadrant(double x, int quadrant_shift) {
    if (!isfinite(x)) return x - x; /* NaN, as libm's */
    double k = floor(x * TWO_OVER_PI + 0.5);
    double r = ((x - k * HALF_PI_1) - k * HALF_PI_2) - k * HALF_PI_3;
    double q = fmod(k, 4.0) + quadrant_shift; /* exact: -3..4 */
    if (q < 0.0) q += 4.0;
    switch ((int)q & 3) {
    case 0: return sin_series(r);
    case 1: return cos_series(r);
    case 2: return -sin_series(r);
    default: return -cos_series(r);
    }
}

double pm_sin_d(double x) { return sin_quadrant(x, 0); }
double pm_cos_d(double x) { return sin_quadrant(x, 1); }
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
    double k = floor(d * LOG2_E + 0.5);
    double r = (d - k * LN2_HI) - k * LN2_LO; /* |r| <= 0.35: the series to r^14 is within 3e-18 */
    static const double c[15] = {1.0,           1.0,           1.0 / 2.0,        1.0 / 6.0,         1.0 / 24.0,
                                 1.0 / 120.0,   1.0 / 720.0,   1.0 / 5040.0,     1.0 / 40320.0,     1.0 / 362880.0,
                                 1.0 / 3628800.0, 1.0 / 39916800.0, 1.0 / 479001600.0, 1.0 / 6227020800.0,
                                 1.0 / 87178291200.0};
    double p = c[14];
    for (int i = 13; i >= 0; i--) p = p * r + c[i];
    return (float)ldexp(p, (int)k);
}

/* atan(t) for 0 <= t <= 1: two halvings, atan(t) = 2 atan(t / (1 + sqrt(1 + t^2))), leave
 * u <= tan(pi/16) < 0.2, where the Taylor series to u^21 is within 0.2^23 / 23 < 4e-18 of
 * atan(u). */
static double atan01(double t) {
    static const double c[11] = {1.0,        -1.0 / 3.0,  1.0 / 5.0,  -1.0 / 7.0,  1.0 / 9.0, -1.0 / 11.0,
                                 1.0 / 13.0, -1.0 / 15.0, 1.0 / 17.0, -1.0 / 19.0, 1.0 / 21.0};
    double u = t / (1.0 + sqrt(1.0 + t * t));
    u = u / (1.0 + sqrt(1.0 + u * u));
    double u2 = u * u, p = c[10];
    for (int k = 9; k >= 0; k--) p = p * u2 + c[k];
    return 4.0 * (u * p);
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
