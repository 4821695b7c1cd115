#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

pm_result pm_fail(pm_error *error, pm_result code, const char *format, ...) {
    if (error) {
        va_list args;
        va_start(args, format);
        error->code = code;
        vsnprintf(error->message, sizeof error->message, format, args);
        va_end(args);
    }
    return code;
}

void pm_error_prefix(pm_error *error, const char *format, ...) {
    if (!error) return;
    char prefix[PM_ERROR_MESSAGE_SIZE];
    char old[PM_ERROR_MESSAGE_SIZE];
    va_list args;
    va_start(args, format);
    vsnprintf(prefix, sizeof prefix, format, args);
    va_end(args);
    memcpy(old, error->message, sizeof old);
    old[sizeof old - 1] = '\0';
    snprintf(error->message, sizeof error->message, "%s: %s", prefix, old);
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

pm_allocator pm_allocator_resolve(const pm_allocator *a) {
    if (a && a->alloc && a->free) return *a;
    pm_allocator d;
    d.alloc = default_alloc;
    d.free = default_free;
    d.user = NULL;
    return d;
}

void *pm_alloc(const pm_allocator *allocator, size_t size, size_t alignment) {
    if (alignment == 0) alignment = 16;
    if (allocator && allocator->alloc) return allocator->alloc(size, alignment, allocator->user);
    return default_alloc(size, alignment, NULL);
}

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
    if (allocator && allocator->free) allocator->free(ptr, allocator->user);
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

/* ---- files ---- */

/* The XSI strerror_r (_POSIX_C_SOURCE, no _GNU_SOURCE). */
const char *pm_errno_text(char *buf, size_t cap, int e) {
    if (strerror_r(e, buf, cap) != 0) snprintf(buf, cap, "error %d", e);
    return buf;
}

static pm_result write_all(int fd, const char *data, size_t size, const char *path, pm_error *error) {
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            char why[128];
            return pm_fail(error, PM_ERR_IO, "%s: write failed: %s", path,
                           pm_errno_text(why, sizeof why, n < 0 ? errno : EIO));
        }
        data += n;
        size -= (size_t)n;
    }
    return PM_OK;
}

/* Opens "<path>.tmp-XXXXXXXX" exclusively, with a name unlikely to collide with other writers. */
static int open_temp(char *tmp, size_t cap, const char *path) {
    struct {
        long pid;
        long t;
        long c;
        const void *where;
        int attempt;
    } seed;
    memset(&seed, 0, sizeof seed);
    seed.pid = (long)getpid();
    seed.t = (long)time(NULL);
    seed.c = (long)clock();
    seed.where = (const void *)&seed;
    for (int attempt = 0; attempt < 16; attempt++) {
        seed.attempt = attempt;
        uint64_t h = pm_hash64(&seed, sizeof seed, 0x6276685F746D70ull);
        snprintf(tmp, cap, "%s.tmp-%08x", path, (unsigned)(h & 0xffffffffu));
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

const char *pm_file_kind_problem(unsigned long mode) {
    mode_t m = (mode_t)mode;
    if (S_ISREG(m)) return NULL;
    if (S_ISDIR(m)) return "is a directory";
    if (S_ISFIFO(m)) return "not a regular file (a FIFO)";
    if (S_ISCHR(m)) return "not a regular file (a character device)";
    if (S_ISBLK(m)) return "not a regular file (a block device)";
    if (S_ISSOCK(m)) return "not a regular file (a socket)";
    return "not a regular file";
}

/* The target of the symbolic link at `link` (whose lstat size is `hint`) as a path usable from
 * here: relative targets are relative to the link's directory. NULL with errno set. */
static char *link_target(const char *link, size_t hint) {
    size_t cap = hint >= 64 ? hint + 1 : 256; /* st_size is 0 on some file systems */
    for (;;) {
        char *buf = (char *)pm_alloc(NULL, cap, 1);
        if (!buf) {
            errno = ENOMEM;
            return NULL;
        }
        ssize_t n = readlink(link, buf, cap);
        if (n < 0) {
            int e = errno;
            pm_free(NULL, buf);
            errno = e;
            return NULL;
        }
        if ((size_t)n < cap) {
            buf[n] = '\0';
            const char *slash = strrchr(link, '/');
            if (buf[0] == '/' || !slash) return buf;
            size_t dir = (size_t)(slash - link) + 1, len = (size_t)n + 1;
            char *joined = (char *)pm_alloc(NULL, dir + len, 1);
            if (joined) {
                memcpy(joined, link, dir);
                memcpy(joined + dir, buf, len);
            } else errno = ENOMEM;
            pm_free(NULL, buf);
            return joined;
        }
        pm_free(NULL, buf); /* truncated: the link changed since lstat */
        if (cap > ((size_t)1 << 20)) {
            errno = ENAMETOOLONG;
            return NULL;
        }
        cap *= 2;
    }
}

/* The file a write to `path` replaces: the file the last of a chain of symbolic links names,
 * because renaming over the link itself would turn it into a plain file and leave the file it
 * names unchanged. Returns a string from pm_alloc, or NULL with errno set. */
static char *write_target(const char *path) {
    char *cur = pm_strdup(NULL, path);
    if (!cur) errno = ENOMEM;
    for (int hops = 0; cur; hops++) {
        struct stat st;
        /* A missing name (a dangling link's target) is where the new file goes; other errors
         * surface, with their errno, when the temporary file is created. */
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) return cur;
        char *next = NULL;
        if (hops >= 40) errno = ELOOP; /* the kernel's limit */
        else next = link_target(cur, st.st_size > 0 ? (size_t)st.st_size : 0);
        int e = errno;
        pm_free(NULL, cur);
        errno = e;
        cur = next;
    }
    return NULL;
}

pm_result pm_write_file_atomic(const char *path, const void *data, size_t size, pm_error *error) {
    if (!path || !path[0] || (!data && size))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_write_file_atomic: NULL argument");
    char why[128];
    char *target = write_target(path);
    if (!target) {
        int e = errno;
        if (e == ENOMEM) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        return pm_fail(error, PM_ERR_IO, "%s: cannot create: %s", path, pm_errno_text(why, sizeof why, e));
    }
    /* Checked before writing: rename would replace a FIFO or a device node with a plain file. */
    struct stat st;
    const char *problem = stat(target, &st) == 0 ? pm_file_kind_problem(st.st_mode) : NULL;
    if (problem) {
        pm_free(NULL, target);
        return pm_fail(error, PM_ERR_IO, "%s: %s", path, problem);
    }
    /* The temporary name on the stack unless the path is very long. */
    char local[512];
    size_t tmp_cap = strlen(target) + 32;
    char *tmp = tmp_cap <= sizeof local ? local : (char *)pm_alloc(NULL, tmp_cap, 1);
    if (!tmp) {
        pm_free(NULL, target);
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    pm_result r;
    int fd = open_temp(tmp, tmp_cap, target);
    if (fd < 0) r = pm_fail(error, PM_ERR_IO, "%s: cannot create: %s", path, pm_errno_text(why, sizeof why, errno));
    else {
        r = write_all(fd, (const char *)data, size, path, error);
        if (close(fd) != 0 && r == PM_OK)
            r = pm_fail(error, PM_ERR_IO, "%s: write failed: %s", path, pm_errno_text(why, sizeof why, errno));
        if (r == PM_OK && rename(tmp, target) != 0)
            r = pm_fail(error, PM_ERR_IO, "%s: cannot rename into place: %s", path, pm_errno_text(why, sizeof why, errno));
        if (r != PM_OK) unlink(tmp);
    }
    if (tmp != local) pm_free(NULL, tmp);
    pm_free(NULL, target);
    return r;
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
