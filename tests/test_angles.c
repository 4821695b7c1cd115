/* pm_sinf, pm_cosf, pm_expf, pm_atan2f and pm_acosf (math_functions.h) and the double sin, cos
 * and atan2 of src/core.h: the library's angles must have the same bits on every machine, which
 * libm's do not (glibc 2.36 on x86-64 and on AArch64 disagree in
 * the last bit for about 0.1% and 0.5% of arguments; the root facing of frame 19 of
 * `posematch synth --seed 11`'s synth_004 was one of them, and every feature of that pose and
 * of its mirrored copy differed between the two machines' databases). Fixed bits for fixed
 * inputs, a digest of a large sweep, accuracy against libm in double, and the special values. */
#include <math.h>
#include <string.h>

#include "core.h"
#include "support.h"

static uint32_t bits_of(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}
static float float_of(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}
/* Distance in representable floats (same sign assumed by callers, or both tiny). */
static int64_t ulps_apart(float a, float b) {
    int64_t ia = (int32_t)bits_of(a), ib = (int32_t)bits_of(b);
    if (ia < 0) ia = INT32_MIN - ia;
    if (ib < 0) ib = INT32_MIN - ib;
    return ia > ib ? ia - ib : ib - ia;
}

/* A sweep's digest must be the reference every machine reproduces. */
static void assert_digest(pm_hasher *h, uint64_t want, const char *what) {
    uint64_t digest = pm_hasher_final(h);
    if (digest != want) fail_msg("digest of the sweep 0x%016llx: %s are not the reference bits", (unsigned long long)digest, what);
}

/* Fixed inputs and the bits every machine must give; the first is the root facing that made
 * x86-64 and AArch64 databases differ (glibc's AArch64 atan2f gives 0xbeb7b880, one ulp off). */
static void test_atan2f_fixed_bits(void **state) {
    (void)state;
    static const uint32_t cases[][3] = {
        {0xbeb3cdabu, 0x3f6fb1eau, 0xbeb7b87fu},
        {0x3f800000u, 0x3f800000u, 0x3f490fdbu}, /* atan2(1, 1) = pi/4 */
        {0x3f800000u, 0x00000000u, 0x3fc90fdbu}, /* pi/2 */
        {0x00000000u, 0xbf800000u, 0x40490fdbu}, /* pi */
        {0xbf800000u, 0xbf800000u, 0xc016cbe4u}, /* -3pi/4 */
        {0x3a83126fu, 0x3f800000u, 0x3a83126cu}, /* atan(0.001f) = 0.00099999971..., 3 ulps below */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float r = pm_atan2f(float_of(cases[i][0]), float_of(cases[i][1]));
        if (bits_of(r) != cases[i][2])
            fail_msg("pm_atan2f(%a, %a) = %a (0x%08x), want 0x%08x", (double)float_of(cases[i][0]),
                     (double)float_of(cases[i][1]), (double)r, (unsigned)bits_of(r), (unsigned)cases[i][2]);
    }
}

/* A digest of many results: one bit different anywhere changes it. Also within 1 ulp of libm's
 * double atan2 and acos rounded to float, and almost always equal to them. */
static void test_sweep_digest_and_accuracy(void **state) {
    (void)state;
    pm_test_rng rng = {20261201u};
    pm_hasher h;
    pm_hasher_init(&h, 0);
    int n = 200000, off_atan = 0, off_acos = 0;
    for (int i = 0; i < n; i++) {
        float y = 8.0f * pm_test_rng_float(&rng) - 4.0f, x = 8.0f * pm_test_rng_float(&rng) - 4.0f;
        if (i % 4 == 1) y *= 1e-4f; /* near the axes */
        if (i % 4 == 2) x *= 1e-4f;
        float c = 2.0f * pm_test_rng_float(&rng) - 1.0f;
        if (i % 8 == 3) c = 1.0f - 1e-6f * pm_test_rng_float(&rng); /* near 1, where acos is steep */
        float a = pm_atan2f(y, x), b = pm_acosf(c);
        uint32_t out[2] = {bits_of(a), bits_of(b)};
        pm_hasher_update(&h, out, sizeof out);
        float ra = (float)atan2((double)y, (double)x), rb = (float)acos((double)c);
        if (ulps_apart(a, ra) > 1) fail_msg("pm_atan2f(%a, %a) = %a, libm %a", (double)y, (double)x, (double)a, (double)ra);
        if (ulps_apart(b, rb) > 1) fail_msg("pm_acosf(%a) = %a, libm %a", (double)c, (double)b, (double)rb);
        off_atan += a != ra;
        off_acos += b != rb;
    }
    assert_true(off_atan < n / 1000);
    assert_true(off_acos < n / 1000);
    assert_digest(&h, 0x419c4c48a726aacfull, "atan2 and acos");
}

/* sin, cos and exp: within 1 ulp of libm's double functions rounded to float and almost always
 * equal, and a digest of the bits. Angles up to a few turns (joint angles, yaws, phases) and far
 * beyond; exponents as the root smoothing's Gaussian weights take them, and the whole range. */
static void test_sin_cos_exp_sweep(void **state) {
    (void)state;
    pm_test_rng rng = {20261202u};
    pm_hasher h;
    pm_hasher_init(&h, 0);
    int n = 200000, off = 0;
    for (int i = 0; i < n; i++) {
        float u = 2.0f * pm_test_rng_float(&rng) - 1.0f;
        float x = i % 4 == 0 ? 20.0f * u : i % 4 == 1 ? 1e-3f * u : i % 4 == 2 ? 1e4f * u : 4.0f * u;
        float e = i % 2 ? -104.0f + 193.0f * pm_test_rng_float(&rng) : -20.0f * pm_test_rng_float(&rng);
        float got[3] = {pm_sinf(x), pm_cosf(x), pm_expf(e)};
        float want[3] = {(float)sin((double)x), (float)cos((double)x), (float)exp((double)e)};
        for (int k = 0; k < 3; k++) {
            if (ulps_apart(got[k], want[k]) > 1 && !(k == 2 && want[k] < 1.2e-38f && fabsf(got[k] - want[k]) <= 1.5e-45f))
                fail_msg("%s(%a) = %a, libm %a", k == 0 ? "pm_sinf" : k == 1 ? "pm_cosf" : "pm_expf",
                         (double)(k == 2 ? e : x), (double)got[k], (double)want[k]);
            off += got[k] != want[k];
        }
        uint32_t out[3] = {bits_of(got[0]), bits_of(got[1]), bits_of(got[2])};
        pm_hasher_update(&h, out, sizeof out);
    }
    assert_true(off < n / 1000);
    assert_digest(&h, 0x9a2685396abc52f3ull, "sin, cos and exp");
}

/* Arguments of any size: beyond 2^20 quarter turns the reduction takes 2/pi to 192 bits (pi/2
 * in three parts was off there by up to millions of ulps, then the wrong sign, then infinite).
 * Fixed inputs with the correctly rounded results (computed to 2,000 bits), and a sweep over
 * every float exponent against libm's double functions. */
static void test_huge_arguments(void **state) {
    (void)state;
    static const struct {
        float x;
        uint32_t sin_bits, cos_bits;
    } fixed[] = {
        {0x1.93e5940000000p+99f, 0xbf4a89b0u, 0xbf1c9222u},
        {-0x1.93e5940000000p+99f, 0x3f4a89b0u, 0xbf1c9222u},
        {0x1.75b22c0000000p+23f, 0x3f800000u, 0x38069522u},
        {0x1.9d013c0000000p+41f, 0x3f800000u, 0x387ab85fu},
        {0x1.ff933c0000000p+127f, 0xbe79f163u, 0x3f7841cau},
        {-0x1.ff933c0000000p+127f, 0x3e79f163u, 0x3f7841cau},
        {0x1.5af1d80000000p+66f, 0x3f281569u, 0x3f411723u},
        {0x1.0000000000000p+24f, 0xbf47917cu, 0x3f2056b4u},
        {0x1.0000000000000p+100f, 0xbf5f476du, 0x3efa75a0u},
        {0x1.921fc00000000p+20f, 0x3f1f23cdu, 0x3f48868cu},
        {0x1.fff9720000000p+127f, 0x3f4e33e5u, 0x3f17b632u},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (bits_of(pm_sinf(fixed[i].x)) != fixed[i].sin_bits || bits_of(pm_cosf(fixed[i].x)) != fixed[i].cos_bits)
            fail_msg("pm_sinf/pm_cosf(%a) = %a, %a; correctly rounded %a, %a", (double)fixed[i].x, (double)pm_sinf(fixed[i].x),
                     (double)pm_cosf(fixed[i].x), (double)float_of(fixed[i].sin_bits), (double)float_of(fixed[i].cos_bits));
    pm_test_rng rng = {20261203u};
    for (int i = 0; i < 100000; i++) {
        uint32_t exponent = 127u + 20u + (uint32_t)(pm_test_rng_float(&rng) * 107.99f); /* 2^20 .. 2^127 */
        uint32_t b = exponent << 23 | ((uint32_t)(pm_test_rng_float(&rng) * 8388608.0f) & 0x7fffffu);
        float x = float_of(b | (i & 1 ? 0x80000000u : 0u));
        float s = pm_sinf(x), c = pm_cosf(x);
        float ws = (float)sin((double)x), wc = (float)cos((double)x);
        if (ulps_apart(s, ws) > 1 || ulps_apart(c, wc) > 1)
            fail_msg("pm_sinf/pm_cosf(%a) = %a, %a; libm %a, %a", (double)x, (double)s, (double)c, (double)ws, (double)wc);
        double sd, cd;
        pm_sincos_d((double)x, &sd, &cd);
        if (bits_of((float)sd) != bits_of(s) || bits_of((float)cd) != bits_of(c))
            fail_msg("pm_sincos_d(%a) rounds to other floats than pm_sinf's and pm_cosf's", (double)x);
    }
}

/* The double sin and cos (together: sincos) and atan2 BVH Euler angles go through: within a few
 * double ulps of libm's over joint angles (radians of up to a few turns); the float functions
 * are the same values rounded. */
static void test_double_functions(void **state) {
    (void)state;
    pm_test_rng rng = {7u};
    for (int i = 0; i < 100000; i++) {
        double x = 40.0 * ((double)pm_test_rng_float(&rng) - 0.5) + 1e-7 * (double)pm_test_rng_float(&rng);
        double y = 2.0 * (double)pm_test_rng_float(&rng) - 1.0;
        double got[3] = {0.0, 0.0, pm_atan2_d(y, x)}, want[3] = {sin(x), cos(x), atan2(y, x)};
        pm_sincos_d(x, &got[0], &got[1]);
        float xf = (float)x;
        double sf, cf;
        pm_sincos_d((double)xf, &sf, &cf);
        if (bits_of((float)sf) != bits_of(pm_sinf(xf)) || bits_of((float)cf) != bits_of(pm_cosf(xf)))
            fail_msg("pm_sincos_d(%a) = (%a, %a) rounds to other floats than pm_sinf's and pm_cosf's (%a, %a)",
                     (double)xf, sf, cf, (double)pm_sinf(xf), (double)pm_cosf(xf));
        for (int k = 0; k < 3; k++)
            if (fabs(got[k] - want[k]) > 1e-15 * fmax(fabs(want[k]), 1e-3))
                fail_msg("double %d of (%a, %a): %a, libm %a", k, y, x, got[k], want[k]);
    }
}

/* Near a multiple of pi/2 the result is the reduced argument itself, so the reduction must keep
 * all three parts of pi/2: integers whose sine is tiny (355 = 113 pi + 3e-5, 710, 103993), to
 * within 2 ulps of their true sines (computed to 40 digits). */
static void test_sincos_near_multiples_of_half_pi(void **state) {
    (void)state;
    static const struct {
        double x, sin_x;
    } cases[] = {
        {355.0, -3.014435335948844921e-05},
        {710.0, 6.028870669158526593e-05},
        {103993.0, -1.912933577842375022e-05},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double s, c;
        pm_sincos_d(cases[i].x, &s, &c);
        if (fabs(s - cases[i].sin_x) > 4.5e-16 * fabs(cases[i].sin_x))
            fail_msg("sin(%g) = %.17g, true %.17g", cases[i].x, s, cases[i].sin_x);
    }
}

static void test_special_values(void **state) {
    (void)state;
    const float pi = 3.14159265358979323846f, inf = INFINITY;
    assert_true(bits_of(pm_atan2f(0.0f, 0.0f)) == bits_of(0.0f));
    assert_true(bits_of(pm_atan2f(-0.0f, 0.0f)) == bits_of(-0.0f));
    assert_true(pm_atan2f(0.0f, -0.0f) == pi && pm_atan2f(-0.0f, -0.0f) == -pi);
    assert_true(pm_atan2f(0.0f, -1.0f) == pi && pm_atan2f(-0.0f, -1.0f) == -pi);
    assert_true(pm_atan2f(1.0f, inf) == 0.0f && pm_atan2f(1.0f, -inf) == pi);
    assert_true(pm_atan2f(inf, 1.0f) == 0.5f * pi && pm_atan2f(-inf, -1.0f) == -0.5f * pi);
    assert_true(pm_atan2f(inf, inf) == 0.25f * pi && pm_atan2f(-inf, -inf) == (float)(-0.75 * 3.14159265358979323846));
    assert_true(isnan(pm_atan2f(NAN, 1.0f)) && isnan(pm_atan2f(1.0f, NAN)));
    assert_true(pm_acosf(1.0f) == 0.0f && pm_acosf(-1.0f) == pi && pm_acosf(0.0f) == 0.5f * pi);
    assert_true(isnan(pm_acosf(1.0000001f)) && isnan(pm_acosf(-2.0f)) && isnan(pm_acosf(NAN)) && isnan(pm_acosf(inf)));
    assert_true(bits_of(pm_sinf(0.0f)) == bits_of(0.0f) && bits_of(pm_sinf(-0.0f)) == bits_of(-0.0f));
    assert_true(pm_cosf(0.0f) == 1.0f && pm_cosf(-0.0f) == 1.0f && pm_sinf(0.5f * pi) == 1.0f && pm_cosf(pi) == -1.0f);
    assert_true(pm_sinf(pi) == (float)sin((double)pi)); /* pi as a float is not pi: -8.74e-8 */
    assert_true(isnan(pm_sinf(inf)) && isnan(pm_cosf(-inf)) && isnan(pm_sinf(NAN)) && isnan(pm_cosf(NAN)));
    assert_true(pm_expf(0.0f) == 1.0f && pm_expf(-0.0f) == 1.0f && pm_expf(1.0f) == (float)exp(1.0));
    assert_true(pm_expf(-inf) == 0.0f && pm_expf(inf) == inf && pm_expf(89.0f) == inf && isnan(pm_expf(NAN)));
    assert_true(pm_expf(-103.0f) > 0.0f && pm_expf(-104.5f) == 0.0f);
    double sn, cs;
    pm_sincos_d(-INFINITY, &sn, &cs);
    assert_true(isnan(sn) && isnan(cs));
    pm_sincos_d(-0.0, &sn, &cs);
    assert_true(signbit(sn) && sn == 0.0 && cs == 1.0);
    pm_sincos_d(0.0, &sn, &cs);
    assert_true(bits_of((float)sn) == bits_of(0.0f) && cs == 1.0);
    pm_sincos_d(INFINITY, &sn, &cs);
    assert_true(isnan(sn) && isnan(cs) && pm_atan2_d(1.0, 0.0) == 0x1.921fb54442d18p+0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atan2f_fixed_bits),
        cmocka_unit_test(test_sweep_digest_and_accuracy),
        cmocka_unit_test(test_sin_cos_exp_sweep),
        cmocka_unit_test(test_double_functions),
        cmocka_unit_test(test_sincos_near_multiples_of_half_pi),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_huge_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
