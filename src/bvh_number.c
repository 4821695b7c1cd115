/* The decimal parser shared by the BVH reader and writer (the writer reads back what it prints
 * to find the shortest text that round-trips). Hand-written rather than strtod so that a host
 * program's setlocale(LC_NUMERIC, "de_DE") cannot turn "0.5" into 0. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bvh_internal.h"
#include "core.h"

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

static double pow10_positive(int e) {
    static const double small[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    double r = 1.0;
    while (e > 22) {
        r *= 1e22;
        e -= 22;
        if (isinf(r)) return r;
    }
    return r * small[e];
}

/* "nan", "inf", "infinity", "1.#INF", "-nan(ind)": printf spellings of non-finite values. */
static int looks_non_finite(const char *s, size_t n) {
    size_t i = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    if (n - i >= 3) {
        char a = ascii_lower(s[i]), b = ascii_lower(s[i + 1]), c = ascii_lower(s[i + 2]);
        if ((a == 'n' && b == 'a' && c == 'n') || (a == 'i' && b == 'n' && c == 'f')) return 1;
    }
    for (size_t k = i; k + 1 < n; k++)
        if (s[k] == '.' && s[k + 1] == '#') return 1;
    return 0;
}

/* ---- exact rounding at a float's midpoint ----
 * The value is read to a double (off by a few of its units at worst) and the caller rounds that
 * to float: twice rounded, so a decimal a hair above the midpoint of two floats can land on it
 * and round down to even. Near a midpoint the decimal text itself is compared with the midpoint's
 * exact expansion (at most 113 digits: an odd 26-bit integer times 2^-150..2^103). */

enum { BIG_LIMBS = 16 };
typedef struct {
    uint32_t limb[BIG_LIMBS]; /* least significant first */
    int count;
} big_uint;

static void big_mul_small(big_uint *b, uint32_t m) {
    uint64_t carry = 0;
    for (int i = 0; i < b->count; i++) {
        uint64_t t = (uint64_t)b->limb[i] * m + carry;
        b->limb[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry && b->count < BIG_LIMBS) b->limb[b->count++] = (uint32_t)carry;
}

static uint32_t big_div_small(big_uint *b, uint32_t d) {
    uint64_t rem = 0;
    for (int i = b->count - 1; i >= 0; i--) {
        uint64_t t = rem << 32 | b->limb[i];
        b->limb[i] = (uint32_t)(t / d);
        rem = t % d;
    }
    while (b->count > 0 && b->limb[b->count - 1] == 0) b->count--;
    return (uint32_t)rem;
}

/* odd * 2^k2 as significant digits (no leading zeros) and the decimal exponent of the first:
 * the value is 0.d1d2... * 10^*exp10. Returns the digit count. */
static int midpoint_digits(char *digits, long long *exp10, uint32_t odd, int k2) {
    big_uint b = {{odd}, 1};
    for (int i = 0; i < k2; i++) big_mul_small(&b, 2);
    for (int i = 0; i < -k2; i++) big_mul_small(&b, 5); /* odd * 5^-k2 * 10^k2 */
    char reversed[160];
    int n = 0;
    while (b.count > 0) {
        uint32_t chunk = big_div_small(&b, 1000000000u);
        for (int i = 0; i < 9; i++, chunk /= 10) reversed[n++] = (char)('0' + chunk % 10);
    }
    while (n > 0 && reversed[n - 1] == '0') n--; /* the last chunk's leading zeros */
    *exp10 = (long long)n + (k2 < 0 ? k2 : 0);
    int lead = 0;
    while (lead < n && reversed[lead] == '0') lead++; /* trailing zeros say nothing more */
    for (int i = lead; i < n; i++) digits[i - lead] = reversed[n - 1 - (i - lead)];
    return n - lead;
}

/* Sign of |decimal text| - odd * 2^k2, the text being a number pm_bvh_parse_double accepted. */
static int compare_to_midpoint(const char *s, size_t n, uint32_t odd, int k2) {
    char mid[160];
    long long mid_exp;
    int mid_n = midpoint_digits(mid, &mid_exp, odd, k2);
    size_t i = 0, first = 0, end;
    if (s[i] == '+' || s[i] == '-') i++;
    long long exp10 = 0; /* of the text's first digit, counted as 0.d1... */
    int seen_point = 0, leading = 1;
    for (end = i; end < n && (is_digit(s[end]) || s[end] == '.'); end++) {
        if (s[end] == '.') {
            seen_point = 1;
        } else if (leading && s[end] == '0') {
            if (seen_point) exp10--;
        } else {
            if (leading) first = end;
            leading = 0;
            if (!seen_point) exp10++;
        }
    }
    if (leading) return -1; /* zero */
    if (end < n) { /* an exponent; beyond +-1e15 the value could never be near a float */
        size_t k = end + 1;
        int negative = s[k] == '-';
        if (s[k] == '+' || s[k] == '-') k++;
        long long e = 0;
        for (; k < n; k++)
            if (e < 1000000000000000LL) e = e * 10 + (s[k] - '0');
        exp10 += negative ? -e : e;
    }
    if (exp10 != mid_exp) return exp10 < mid_exp ? -1 : 1;
    int m = 0;
    for (size_t k = first; k < end; k++) {
        if (s[k] == '.') continue;
        char want = m < mid_n ? mid[m] : '0';
        if (s[k] != want) return s[k] < want ? -1 : 1;
        m++;
    }
    return m < mid_n ? -1 : 0; /* the midpoint's expansion goes on past the text's: it is larger */
}

/* Whether v (finite, >= 0) may be off a float midpoint by no more than the parser's error (a few
 * of a double's units; 1024 are allowed). In a float's normal range this is read off the bits: a
 * midpoint's 29 bits below the float's 23 are a 1 and zeros. Zero is not near one; denormals and
 * values past the largest float are left to settle_midpoint. */
static int near_midpoint(double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint32_t biased = (uint32_t)(bits >> 52);
    uint64_t low = bits & ((UINT64_C(1) << 29) - 1);
    if (biased - (1023u - 126u) <= 253u) return low - (UINT64_C(1) << 28) + 1024u <= 2048u;
    return bits != 0;
}

/* v moved to the side of the nearest float midpoint the text is on, within a double's unit of
 * it: the double is as good as before and its float exact. Out of line, because inlined its code
 * slowed the reading of every number by a tenth. */
static PM_COLD double settle_midpoint(double v, const char *s, size_t n) {
    int e2;
    (void)frexp(v, &e2);
    int ulp_exp = e2 - 24 < -149 ? -149 : e2 - 24; /* a float's spacing at v, down to denormals */
    if (ulp_exp > 104) return v;                    /* past 2^128: no float, refused by the caller */
    double q = ldexp(v, -ulp_exp);
    double h = floor(q) + 0.5;
    if (!(fabs(q - h) < 0x1p-14)) return v; /* far from a midpoint: one rounding decides it */
    double mid = ldexp(h, ulp_exp);
    int c = compare_to_midpoint(s, n, (uint32_t)(2.0 * h), ulp_exp - 1);
    return c == 0 ? mid : nextafter(mid, c < 0 ? 0.0 : HUGE_VAL);
}

int pm_bvh_parse_double(double *out, const char *s, size_t n) {
    size_t i = 0;
    int negative = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    /* Up to 19 significant digits in an integer, the rest only move the decimal exponent: the
     * double is off by a few of its units, which only matters to a float near a midpoint, where
     * settle_midpoint reads every digit. */
    uint64_t mantissa = 0;
    int significant = 0, exp10 = 0, digits = 0;
    while (i < n && is_digit(s[i])) {
        if (significant < 19) {
            mantissa = mantissa * 10u + (uint64_t)(s[i] - '0');
            if (mantissa) significant++;
        } else if (exp10 < 1000000) exp10++;
        digits++;
        i++;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit(s[i])) {
            if (significant < 19 && exp10 > -1000000) {
                mantissa = mantissa * 10u + (uint64_t)(s[i] - '0');
                if (mantissa) significant++;
                exp10--;
            }
            digits++;
            i++;
        }
    }
    if (digits == 0) return looks_non_finite(s, n) ? 2 : 1;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int exp_negative = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) exp_negative = s[i++] == '-';
        if (i == n || !is_digit(s[i])) return 1;
        int e = 0;
        while (i < n && is_digit(s[i])) {
            if (e < 100000) e = e * 10 + (s[i] - '0');
            i++;
        }
        exp10 += exp_negative ? -e : e;
    }
    if (i != n) return looks_non_finite(s, n) ? 2 : 1;
    double v = (double)mantissa;
    if (mantissa != 0) {
        if (exp10 > 0) v *= pow10_positive(exp10 > 400 ? 400 : exp10);
        /* Dividing by an exact power of ten rounds better than multiplying by an inexact one. */
        else if (exp10 < 0) {
            int e = -exp10;
            while (e > 300 && v != 0.0) {
                v /= 1e300;
                e -= 300;
            }
            v /= pow10_positive(e > 300 ? 300 : e);
        }
    }
    if (!isfinite(v)) return 2;
    if (PM_UNLIKELY(near_midpoint(v))) v = settle_midpoint(v, s, n);
    *out = negative ? -v : v;
    return 0;
}
