#include "core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A message longer than pm_error holds keeps its start and its end around "...": a long path
 * comes first and the problem last, and cutting the end lost the problem (and the file's name). */
static void set_message(pm_error *error, const char *text, size_t length) {
    const size_t cap = sizeof error->message;
    if (length < cap) {
        memcpy(error->message, text, length + 1);
        return;
    }
    size_t head = 160, tail = cap - 1 - head - 3;
    /* Cut at UTF-8 character boundaries: no continuation byte after the cut. */
    while (head > 0 && ((unsigned char)text[head] & 0xC0) == 0x80) head--;
    const char *end = text + length - tail;
    while (((unsigned char)*end & 0xC0) == 0x80) end++, tail--;
    memcpy(error->message, text, head);
    memcpy(error->message + head, "...", 3);
    memcpy(error->message + head + 3, end, tail);
    error->message[head + 3 + tail] = '\0';
}

/* Texts too long for pm_error are formatted whole, up to LONG_MESSAGE bytes (room for a path of
 * PATH_MAX and more), on the stack (no allocation: the caller's hooks may be what failed) and in
 * a frame of their own: only such failures - paths deep in a file system, from the loaders - pay
 * for it, while runtime calls on small job-system stacks fail with short messages. `old`, when
 * given, is a message the text prefixes; without it a text past LONG_MESSAGE keeps only the
 * start already in pm_error. */
#define LONG_MESSAGE (16 * PM_ERROR_MESSAGE_SIZE)
static __attribute__((noinline)) void set_long_message(pm_error *error, const char *old, const char *format,
                                                       va_list args) {
    char full[LONG_MESSAGE + 2 + PM_ERROR_MESSAGE_SIZE];
    int n = vsnprintf(full, LONG_MESSAGE, format, args);
    if (n < 0 || (n >= LONG_MESSAGE && !old)) return;
    if (n >= LONG_MESSAGE) n = LONG_MESSAGE - 1;
    if (old) n += snprintf(full + n, sizeof full - (size_t)n, ": %s", old);
    set_message(error, full, (size_t)n);
}

pm_result pm_fail(pm_error *error, pm_result code, const char *format, ...) {
    if (error) {
        va_list args, again;
        va_start(args, format);
        va_copy(again, args);
        error->code = code;
        int n = vsnprintf(error->message, sizeof error->message, format, args);
        if (n >= (int)sizeof error->message) set_long_message(error, NULL, format, again);
        va_end(again);
        va_end(args);
    }
    return code;
}

pm_float_text_buf pm_float_text(float value) {
    pm_float_text_buf b;
    for (int digits = 6; digits <= 9; digits++) {
        snprintf(b.text, sizeof b.text, "%.*g", digits, (double)value);
        if (!isfinite(value) || strtof(b.text, NULL) == value) break;
    }
    return b;
}

void pm_error_prefix(pm_error *error, const char *format, ...) {
    if (!error) return;
    char old[PM_ERROR_MESSAGE_SIZE];
    memcpy(old, error->message, sizeof old);
    old[sizeof old - 1] = '\0';
    /* The prefix (often a path) whole, then the old message: the cut, if any, falls in between. */
    char both[2 * PM_ERROR_MESSAGE_SIZE + 2];
    va_list args, again;
    va_start(args, format);
    va_copy(again, args);
    int n = vsnprintf(both, PM_ERROR_MESSAGE_SIZE, format, args);
    if (n >= 0 && n < PM_ERROR_MESSAGE_SIZE) {
        n += snprintf(both + n, sizeof both - (size_t)n, ": %s", old);
        set_message(error, both, (size_t)n);
    } else {
        set_long_message(error, old, format, again);
    }
    va_end(again);
    va_end(args);
}

pm_result pm_check_name(const char *name, const char *what, pm_error *error) {
    for (const char *c = name; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s has a control character (byte 0x%02x at offset %ld)", what,
                           (unsigned)(unsigned char)*c, (long)(c - name));
    return PM_OK;
}

const char *pm_result_string(pm_result result) {
    switch (result) {
    case PM_OK: return "ok";
    case PM_ERR_INVALID_ARGUMENT: return "invalid argument";
    case PM_ERR_IO: return "i/o error";
    case PM_ERR_PARSE: return "parse error";
    case PM_ERR_OUT_OF_MEMORY: return "out of memory";
    case PM_ERR_LIMIT: return "limit exceeded";
    case PM_ERR_CORRUPT: return "corrupt data";
    case PM_ERR_VERSION: return "unsupported version";
    case PM_ERR_MISMATCH: return "mismatch";
    case PM_ERR_NOT_FOUND: return "not found";
    case PM_ERR_NUMERIC: return "non-finite or degenerate value";
    case PM_ERR_CANCELLED: return "cancelled";
    }
    return "unknown error";
}

#define PM_STR2(x) #x
#define PM_STR(x) PM_STR2(x)
const char *pm_version_string(void) {
    return PM_STR(PM_VERSION_MAJOR) "." PM_STR(PM_VERSION_MINOR) "." PM_STR(PM_VERSION_PATCH);
}

static void *default_alloc(size_t size, size_t alignment, void *user) {
    (void)user;
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    void *p = NULL;
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
    return p;
}

static void default_free(void *ptr, void *user) {
    (void)user;
    free(ptr);
}

/* base.h: an allocator missing alloc or free counts as NULL, so that what one allocates the other
 * frees. Every use of a caller's allocator decides through here. */
const pm_allocator *pm_allocator_or(const pm_allocator *a, const pm_allocator *fallback) {
    return a && a->alloc && a->free ? a : fallback;
}

pm_allocator pm_allocator_resolve(const pm_allocator *a) {
    if ((a = pm_allocator_or(a, NULL)) != NULL) return *a;
    pm_allocator d;
    d.alloc = default_alloc;
    d.free = default_free;
    d.user = NULL;
    return d;
}

void *pm_alloc(const pm_allocator *allocator, size_t size, size_t alignment) {
    if (alignment == 0) alignment = 16;
    if ((allocator = pm_allocator_or(allocator, NULL)) != NULL) return allocator->alloc(size, alignment, allocator->user);
    return default_alloc(size, alignment, NULL);
}

void pm_free_buffer(void *data, const pm_allocator *allocator) { pm_free(allocator, data); }

void *pm_alloc_zero(const pm_allocator *allocator, size_t size, size_t alignment) {
    void *p = pm_alloc(allocator, size, alignment);
    if (p) memset(p, 0, size);
    return p;
}

void *pm_alloc_array(const pm_allocator *allocator, size_t count, size_t elem_size, size_t alignment) {
    if (elem_size != 0 && count > SIZE_MAX / elem_size) return NULL;
    return pm_alloc_zero(allocator, count * elem_size, alignment);
}

void pm_free(const pm_allocator *allocator, void *ptr) {
    if (!ptr) return;
    if ((allocator = pm_allocator_or(allocator, NULL)) != NULL) allocator->free(ptr, allocator->user);
    else default_free(ptr, NULL);
}

char *pm_strdup(const pm_allocator *allocator, const char *s) {
    size_t n = strlen(s);
    char *d = (char *)pm_alloc(allocator, n + 1, 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

int pm_cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

/* ---- errno text ---- */

/* The XSI strerror_r (_POSIX_C_SOURCE, no _GNU_SOURCE). */
const char *pm_errno_text(char *buf, size_t cap, int e) {
    if (strerror_r(e, buf, cap) != 0) snprintf(buf, cap, "error %d", e);
    return buf;
}

/* ---- hashing ---- */

#define PM_P1 0x9E3779B185EBCA87ull
#define PM_P2 0xC2B2AE3D27D4EB4Full
#define PM_P3 0x165667B19E3779F9ull

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t lane_round(uint64_t acc, uint64_t v) {
    acc += v * PM_P2;
    acc = rotl64(acc, 31);
    return acc * PM_P1;
}
static inline uint64_t read64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

void pm_hasher_init(pm_hasher *h, uint64_t seed) {
    h->lanes[0] = seed + PM_P1 + PM_P2;
    h->lanes[1] = seed + PM_P2;
    h->lanes[2] = seed;
    h->lanes[3] = seed - PM_P1;
    h->tail_len = 0;
    h->total = 0;
}

static void hasher_block(pm_hasher *h, const uint8_t *p) {
    h->lanes[0] = lane_round(h->lanes[0], read64(p));
    h->lanes[1] = lane_round(h->lanes[1], read64(p + 8));
    h->lanes[2] = lane_round(h->lanes[2], read64(p + 16));
    h->lanes[3] = lane_round(h->lanes[3], read64(p + 24));
}

void pm_hasher_update(pm_hasher *h, const void *data, size_t size) {
    const uint8_t *p = (const uint8_t *)data;
    h->total += size;
    if (h->tail_len) {
        size_t take = 32 - h->tail_len;
        if (take > size) take = size;
        memcpy(h->tail + h->tail_len, p, take);
        h->tail_len += take;
        p += take;
        size -= take;
        if (h->tail_len < 32) return;
        hasher_block(h, h->tail);
        h->tail_len = 0;
    }
    while (size >= 32) {
        hasher_block(h, p);
        p += 32;
        size -= 32;
    }
    if (size) {
        memcpy(h->tail, p, size);
        h->tail_len = size;
    }
}

uint64_t pm_hasher_final(const pm_hasher *h) {
    uint64_t acc = rotl64(h->lanes[0], 1) + rotl64(h->lanes[1], 7) + rotl64(h->lanes[2], 12) + rotl64(h->lanes[3], 18);
    for (int i = 0; i < 4; i++) acc = (acc ^ lane_round(0, h->lanes[i])) * PM_P1 + PM_P3;
    acc += h->total;
    size_t i = 0;
    for (; i + 8 <= h->tail_len; i += 8) acc = rotl64(acc ^ lane_round(0, read64(h->tail + i)), 27) * PM_P1 + PM_P3;
    for (; i < h->tail_len; i++) acc = rotl64(acc ^ (h->tail[i] * 0x27D4EB2F165667C5ull), 11) * PM_P1;
    acc ^= acc >> 33;
    acc *= PM_P2;
    acc ^= acc >> 29;
    acc *= PM_P3;
    acc ^= acc >> 32;
    return acc;
}

uint64_t pm_hash64(const void *data, size_t size, uint64_t seed) {
    pm_hasher h;
    pm_hasher_init(&h, seed);
    pm_hasher_update(&h, data, size);
    return pm_hasher_final(&h);
}

/* ---- half floats ---- */

uint16_t pm_float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xFFu;
    uint32_t mant = x & 0x7FFFFFu;
    if (exp == 0xFF) return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u : 0u));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7C00u);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        mant |= 0x800000u;
        int shift = 14 - e;
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) half++;
    return (uint16_t)half;
}

float pm_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;
    uint32_t x;
    if (exp == 0) {
        if (mant == 0) x = sign;
        else {
            int e = -1;
            do {
                e++;
                mant <<= 1;
            } while (!(mant & 0x400u));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3FFu) << 13);
        }
    } else if (exp == 31) x = sign | 0x7F800000u | (mant << 13);
    else x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

int pm_cpu_has_avx2(void) {
#if defined(PM_HAVE_AVX2_KERNELS)
    return __builtin_cpu_supports("avx2") != 0;
#else
    return 0;
#endif
}

int pm_cpu_has_avx512(void) {
#if defined(PM_HAVE_AVX512_KERNELS)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
#else
    return 0;
#endif
}
