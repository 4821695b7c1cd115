/* The decimal parser shared by the BVH reader and writer (the writer reads back what it prints
 * to find the shortest text that round-trips). Hand-written rather than strtod so that a host
 * program's setlocale(LC_NUMERIC, "de_DE") cannot turn "0.5" into 0. */
#include <math.h>
#include <stdint.h>

#include "bvh_internal.h"

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

int pm_bvh_parse_double(double *out, const char *s, size_t n) {
    size_t i = 0;
    int negative = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    /* Up to 19 significant digits in an integer, the rest only move the decimal exponent:
     * floats need 9, so this is exact enough while staying independent of the C locale. */
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
    *out = negative ? -v : v;
    return 0;
}
