/* Private helpers shared by the library: errors, allocation, hashing, file kinds. */
#ifndef PM_CORE_H
#define PM_CORE_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "posematch/base.h"
#include "posematch/file.h" /* pm_file_write for the library's savers */
#include "posematch/math_functions.h" /* PM_PI for pm_wrap_angle */

/* The validation tests for NaN and Inf, and exact mode's bounds and tie-breaks, need IEEE
 * arithmetic: with fast math a NaN passes as a number and reordered sums miss the optimum.
 * CMake builds the library with -fno-fast-math; other build systems must do the same. */
#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__) || \
    defined(__ASSOCIATIVE_MATH__) || defined(__RECIPROCAL_MATH__)
#error "posematch must be compiled without fast math (-ffast-math, -Ofast, -ffinite-math-only, -fassociative-math, -freciprocal-math): add -fno-fast-math"
#endif
/* Same bytes on every machine: float expressions evaluated in float. x87 arithmetic (32-bit x86
 * without SSE2) keeps them in 80-bit registers, rounded to float only when stored, so a database
 * would depend on the compiler's register choices. */
#if defined(__FLT_EVAL_METHOD__) && __FLT_EVAL_METHOD__ != 0 && __FLT_EVAL_METHOD__ != -1
#error "posematch needs float arithmetic evaluated in float (FLT_EVAL_METHOD 0): on 32-bit x86 compile with -msse2 -mfpmath=sse"
#endif

#if defined(__GNUC__)
#define PM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define PM_LIKELY(x) __builtin_expect(!!(x), 1)
#define PM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PM_COLD __attribute__((noinline, cold))
#else
#define PM_PRINTF(a, b)
#define PM_LIKELY(x) (x)
#define PM_UNLIKELY(x) (x)
#define PM_COLD
#endif

#define PM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PM_MAX(a, b) ((a) > (b) ? (a) : (b))
#define PM_CLAMP(x, lo, hi) ((x) < (lo) ? (lo) : ((x) > (hi) ? (hi) : (x)))

/* Fills `error` (when not NULL) and returns `code`, so callers can `return pm_fail(...)`. */
pm_result pm_fail(pm_error *error, pm_result code, const char *format, ...) PM_PRINTF(3, 4);
/* A float for a message: the shortest of 6..9 significant digits ("%g" and up) that reads back
 * as the same float, so that a value a rounding step past a bound is not printed as the bound
 * ("weight 1.00000012 is outside [0, 1]", not "weight 1 is outside [0, 1]"). Use the member
 * within the call: pm_fail(error, code, "weight %s ...", pm_float_text(w).text). */
typedef struct pm_float_text_buf {
    char text[32];
} pm_float_text_buf;
pm_float_text_buf pm_float_text(float value);
/* Prepends "prefix: " to an existing message (e.g. the file name to a parser error). */
void pm_error_prefix(pm_error *error, const char *format, ...) PM_PRINTF(2, 3);

/* Allocation through the caller's hooks (NULL = C library). Sizes are checked for overflow by
 * pm_alloc_array, which returns NULL on overflow as on exhaustion. */
void *pm_alloc(const pm_allocator *allocator, size_t size, size_t alignment);
void *pm_alloc_zero(const pm_allocator *allocator, size_t size, size_t alignment);
void *pm_alloc_array(const pm_allocator *allocator, size_t count, size_t elem_size, size_t alignment);
void pm_free(const pm_allocator *allocator, void *ptr);
char *pm_strdup(const pm_allocator *allocator, const char *s);
/* A large block (a database image, searched in place in no particular order, or one of the
 * builder's working arrays): from the C library allocator (allocator NULL or without hooks) a
 * block of two huge pages or more starts on a huge-page boundary and is advised as huge pages
 * before it is touched (src/page_advice.c); a caller's allocator is asked for `alignment` as
 * usual. Freed with pm_free. The _array form checks count * elem_size for overflow and zeroes
 * the block, as pm_alloc_array. */
void *pm_alloc_large(const pm_allocator *allocator, size_t size, size_t alignment);
void *pm_alloc_large_array(const pm_allocator *allocator, size_t count, size_t elem_size, size_t alignment);
/* pm_file_read with the buffer from pm_alloc_large (flags as pm_file_read's). */
pm_result pm_file_read_image(void **out, size_t *out_size, const char *path, unsigned flags,
                             const pm_allocator *allocator, pm_error *error);
/* a, when it has both functions, else the fallback: base.h's rule that an allocator missing one
 * counts as NULL (fallback NULL: "is it the caller's?"; the source's, for the calls where NULL
 * means the source's allocator). */
const pm_allocator *pm_allocator_or(const pm_allocator *a, const pm_allocator *fallback);
/* The allocator to record in an object: a copy of *a, or the C library's. */
pm_allocator pm_allocator_resolve(const pm_allocator *a);

/* 64-bit hash for checksums and cache keys: 4 independent lanes over 8-byte words, so it
 * runs at memory speed; not cryptographic. The streaming form gives the same result as the
 * one-shot form on the concatenated input. */
typedef struct pm_hasher {
    uint64_t lanes[4];
    uint8_t tail[32];
    size_t tail_len;
    uint64_t total;
} pm_hasher;
void pm_hasher_init(pm_hasher *h, uint64_t seed);
void pm_hasher_update(pm_hasher *h, const void *data, size_t size);
uint64_t pm_hasher_final(const pm_hasher *h);
uint64_t pm_hash64(const void *data, size_t size, uint64_t seed);

/* Kernels built a second time for AVX2 (no FMA, so they give the baseline kernels' bits) and
 * picked at run time: x86-64 with GCC or Clang. Code between PM_AVX2_BEGIN and PM_AVX2_END is
 * compiled for AVX2 and must only run when pm_cpu_has_avx2(). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PM_HAVE_AVX2_KERNELS 1
#if defined(__clang__)
#define PM_AVX2_BEGIN _Pragma("clang attribute push(__attribute__((target(\"avx2\"))), apply_to = function)")
#define PM_AVX2_END _Pragma("clang attribute pop")
#else
#define PM_AVX2_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2\")")
#define PM_AVX2_END _Pragma("GCC pop_options")
#endif
#endif
/* 1 when AVX2 kernels are built and the CPU runs them: a load and a bit test of what the
 * runtime (libgcc, compiler-rt) detected at start-up, cheap enough per call. */
int pm_cpu_has_avx2(void);
/* The same for AVX-512 (F and VL, which every AVX-512 CPU but the Xeon Phi has): the scans of
 * src/search_kernels_avx512.c, which score two rows per register with the same lane operations as
 * every other build, and src/local_to_model_avx512.c. The runtime checks that the system saves
 * the 512-bit registers too. */
#if defined(PM_HAVE_AVX2_KERNELS)
#define PM_HAVE_AVX512_KERNELS 1
#if defined(__clang__)
#define PM_AVX512_BEGIN _Pragma("clang attribute push(__attribute__((target(\"avx512f,avx512vl,avx2\"))), apply_to = function)")
#define PM_AVX512_END _Pragma("clang attribute pop")
#else
#define PM_AVX512_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512vl,avx2\")")
#define PM_AVX512_END _Pragma("GCC pop_options")
#endif
#endif
int pm_cpu_has_avx512(void);

/* Names echoed into one-line error messages and written into line-based files must not break
 * the line: PM_ERR_INVALID_ARGUMENT, "<what> has a control character (byte .. at offset ..)",
 * when `name` holds one (below 0x20, or DEL). */
pm_result pm_check_name(const char *name, const char *what, pm_error *error);

/* qsort comparator for floats, ascending; NaN sorts last (a comparator that is not a total
 * order is undefined behaviour for qsort, and overflowing FK can produce NaN). */
int pm_cmp_float(const void *a, const void *b);
/* Double sin and cos (together: one argument reduction) and atan2 with the same bits on every
 * machine (src/math_functions.c; the float ones are public, math_functions.h, and round these):
 * BVH Euler angles are composed in double. */
void pm_sincos_d(double x, double *sin_out, double *cos_out);
double pm_atan2_d(double y, double x);
/* An angle in radians wrapped to [-pi, pi). */
static inline float pm_wrap_angle(float a) { return a - 2.0f * PM_PI * floorf((a + PM_PI) / (2.0f * PM_PI)); }

/* Where time x (in frames) falls in a loop of n frames, wrapped at the loop's period as float
 * times see it: n frame times rounded to a float (the duration a caller reads), a hair off n.
 * Wrapped at n instead, a time of exactly the duration read the end or the first frame depending
 * on that rounding (the first on most real clips), and a player taking root motion up to the
 * wrap got a jump back. Returns 1 at the loop's end (a whole number of loops, or the sliver past
 * n when the period rounded up), else 0 with *w in [0, n). */
static inline int pm_loop_wrap(double x, int n, float frame_time, double *w) {
    double period = (double)((float)n * frame_time) / (double)frame_time;
    if (!(period > 0.0) || !isfinite(period)) period = n;
    double r = fmod(x, period);
    if (r < 0.0) r += period;
    *w = r;
    return (r == 0.0 && x > 0.0) || r >= (double)n;
}

/* Frame of sample s of `samples` spread evenly over frames 0..frame_count-1, the first and the
 * last included (one sample: frame 0). */
static inline int pm_sample_frame(int s, int samples, int frame_count) {
    return samples > 1 ? (int)((long long)s * (frame_count - 1) / (samples - 1)) : 0;
}

/* The text of errno value e in buf (strerror is not thread-safe and loaders run on worker
 * threads); "error <e>" when the C library has none. Returns buf. */
const char *pm_errno_text(char *buf, size_t cap, int e);

/* Why a file of this st_mode cannot be read or replaced as a regular file ("is a directory",
 * "not a regular file (a FIFO)", ...), or NULL for a regular file. In file_io.c, which writes
 * files (posematch/file.h); loaders use it too. */
const char *pm_file_kind_problem(unsigned long mode);

/* IEEE half precision, round to nearest even. */
uint16_t pm_float_to_half(float f);
float pm_half_to_float(uint16_t h);

#endif
