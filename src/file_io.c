/* Safe file reading and writing (posematch/file.h): whole files read with non-regular ones
 * refused; writes through a temporary file + rename, non-regular targets refused, symbolic links
 * written through as the kernel's protected_symlinks rule allows. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* O_TMPFILE: a file with no name until it is complete */
#endif
/* For builds without the project's CMake (its PM_POSIX_DEFINITIONS): on 32-bit systems, stat of a
 * file on a file system with 64-bit inode numbers, or past 2 GB, fails with EOVERFLOW without it. */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include "core.h"
#include "posematch/file.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The sticky bit is XSI, hidden by a plain _POSIX_C_SOURCE; POSIX fixes its value. */
#ifndef S_ISVTX
#define S_ISVTX 01000
#endif

/* The kernel's limit on symbolic links followed while resolving one path. */
#define PM_MAX_LINK_HOPS 40

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

/* The buffers pm_file_read returns: aligned for the database image, which is used in place. */
#define PM_FILE_READ_ALIGN 64

/* A buffer for file_read: a database image's (pm_alloc_large) when `image`, else a plain one. */
static char *read_buffer(const pm_allocator *allocator, size_t size, int image) {
    void *p = image ? pm_alloc_large(allocator, size, PM_FILE_READ_ALIGN) : pm_alloc(allocator, size, PM_FILE_READ_ALIGN);
    return (char *)p;
}

static pm_result file_read(void **out, size_t *out_size, const char *path, unsigned flags, const pm_allocator *allocator,
                           int image, pm_error *error) {
    if (out) *out = NULL;
    if (out_size) *out_size = 0;
    if (!out || !out_size) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_file_read: out or out_size is NULL");
    if (!path) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_file_read: path is NULL");
    /* open("") would fail as a missing file whose message names no file (": cannot open"). */
    if (!path[0]) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_file_read: path is empty");
    /* A bit this version does not know (another function's flag passed here) would otherwise be
     * ignored without a word. */
    if (flags & ~(unsigned)PM_FILE_READ_PIPES)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_file_read: unknown flags 0x%x (only PM_FILE_READ_PIPES)",
                       flags & ~(unsigned)PM_FILE_READ_PIPES);
    char why[128];
    /* Without PM_FILE_READ_PIPES a FIFO is refused below rather than waited on: O_NONBLOCK does
     * nothing to regular files. */
    const int pipes = (flags & PM_FILE_READ_PIPES) != 0;
    /* Every descriptor here is O_CLOEXEC: a host program that forks and runs a child process while
     * a file is open must not hand the child the library's descriptors. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | (pipes ? 0 : O_NONBLOCK));
    if (fd < 0) return pm_fail(error, PM_ERR_IO, "%s: cannot open: %s", path, pm_errno_text(why, sizeof why, errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return pm_fail(error, PM_ERR_IO, "%s: cannot open: %s", path, pm_errno_text(why, sizeof why, e));
    }
    const int fifo = S_ISFIFO(st.st_mode);
    const char *problem = fifo && pipes ? NULL : pm_file_kind_problem(st.st_mode);
    if (problem) {
        close(fd);
        return pm_fail(error, PM_ERR_IO, "%s: %s", path, problem);
    }
    /* A regular file's size comes from fstat (one allocation); a pipe's grows as it is read. */
    if (!fifo && (st.st_size < 0 || (uintmax_t)st.st_size >= (uintmax_t)(SIZE_MAX / 2))) {
        close(fd);
        return pm_fail(error, PM_ERR_LIMIT, "%s: file too large", path);
    }
    size_t expect = fifo ? 0 : (size_t)st.st_size, cap = fifo ? (size_t)1 << 16 : expect + 1, size = 0;
    char *buf = read_buffer(allocator, cap, image);
    pm_result r = PM_OK;
    for (;;) {
        if (!buf) {
            r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
            break;
        }
        if (size + 1 == cap) { /* (only a pipe gets here: a regular file's buffer has room) */
            char *bigger = cap <= SIZE_MAX / 4 ? read_buffer(allocator, cap * 2, image) : NULL;
            if (bigger) memcpy(bigger, buf, size);
            pm_free(allocator, buf);
            buf = bigger;
            cap *= 2;
            continue;
        }
        ssize_t k = read(fd, buf + size, cap - 1 - size);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            r = pm_fail(error, PM_ERR_IO, "%s: read error: %s", path, pm_errno_text(why, sizeof why, errno));
            break;
        }
        if (k == 0) break;
        size += (size_t)k;
        if (!fifo && size == expect) break;
    }
    close(fd);
    if (r == PM_OK && !fifo && size != expect)
        r = size < expect ? pm_fail(error, PM_ERR_IO, "%s: read %zu of %zu bytes (the file shrank while being read)", path,
                                    size, expect)
                          : pm_fail(error, PM_ERR_IO,
                                    "%s: read %zu bytes where the file's size said %zu (it grew while being read, or "
                                    "reports no size, as /proc files do)",
                                    path, size, expect);
    if (r != PM_OK) {
        pm_free(allocator, buf);
        return r;
    }
    buf[size] = '\0';
    *out = buf;
    *out_size = size;
    return PM_OK;
}

pm_result pm_file_read(void **out, size_t *out_size, const char *path, unsigned flags, const pm_allocator *allocator,
                       pm_error *error) {
    return file_read(out, out_size, path, flags, allocator, 0, error);
}

pm_result pm_file_read_image(void **out, size_t *out_size, const char *path, unsigned flags,
                             const pm_allocator *allocator, pm_error *error) {
    return file_read(out, out_size, path, flags, allocator, 1, error);
}

static pm_result out_of_memory(pm_error *error, const char *path) {
    return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
}

/* A path that ends in '/' (or is empty) names a directory, never a file to create. */
static int names_no_file(const char *path) {
    size_t n = strlen(path);
    return n == 0 || path[n - 1] == '/';
}

/* The directory part of `path` as a path of its own ("." without a '/', "/" for "/name"), from
 * pm_alloc; NULL when out of memory. */
static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    size_t n = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    char *dir = (char *)pm_alloc(NULL, n + 1, 1);
    if (!dir) return NULL;
    if (!slash) memcpy(dir, ".", 2);
    else {
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    return dir;
}

/* ---- symbolic links ---- */

/* The target of the symbolic link at `link` (whose lstat size is `hint`) into *out (pm_alloc), as
 * a path usable from here: relative targets are relative to the link's directory. 0 or an errno
 * value (*out NULL), as the other helpers here. */
static int link_target(char **out, const char *link, size_t hint) {
    *out = NULL;
    size_t cap = hint >= 64 ? hint + 1 : 256; /* st_size is 0 on some file systems */
    for (;;) {
        char *buf = (char *)pm_alloc(NULL, cap, 1);
        if (!buf) return ENOMEM;
        ssize_t n = readlink(link, buf, cap);
        if (n < 0) {
            int e = errno;
            pm_free(NULL, buf);
            return e;
        }
        if ((size_t)n < cap) {
            buf[n] = '\0';
            const char *slash = strrchr(link, '/');
            if (buf[0] == '/' || !slash) {
                *out = buf;
                return 0;
            }
            size_t dir = (size_t)(slash - link) + 1, len = (size_t)n + 1;
            char *joined = (char *)pm_alloc(NULL, dir + len, 1);
            if (joined) {
                memcpy(joined, link, dir);
                memcpy(joined + dir, buf, len);
            }
            pm_free(NULL, buf);
            *out = joined;
            return joined ? 0 : ENOMEM;
        }
        pm_free(NULL, buf); /* truncated: the link changed since lstat */
        if (cap > ((size_t)1 << 20)) return ENAMETOOLONG;
        cap *= 2;
    }
}

/* Whether the link at `link` (lstat'd into *st) may be followed under the kernel's
 * fs.protected_symlinks rule: in a sticky world-writable directory only links owned by the
 * caller or by the directory's owner are. Anyone can plant a link there, and nobody but its
 * owner (or the directory's) can remove it, so a link owned by another user may point anywhere
 * its owner likes, such as a file only the caller may write. Links the rule lets through cannot
 * be swapped by other users before the rename, for the same sticky bit. Returns 0 (follow),
 * LINK_REFUSED, or an errno value when the link's directory cannot be examined. */
#define LINK_REFUSED (-1)
static int link_followable(const char *link, const struct stat *st) {
    uid_t me = geteuid();
    if (st->st_uid == me) return 0;
    char *dir = dir_of(link);
    if (!dir) return ENOMEM;
    struct stat dst;
    int e = stat(dir, &dst) == 0 ? 0 : errno;
    pm_free(NULL, dir);
    if (e) return e;
    int shared = (dst.st_mode & S_ISVTX) && (dst.st_mode & S_IWOTH);
    return !shared || st->st_uid == dst.st_uid ? 0 : LINK_REFUSED;
}

/* The file a write to `path` replaces: the file the last of a chain of symbolic links names
 * (dangling or not), because renaming over the link itself would turn it into a plain file and
 * leave the file it names unchanged. *out is from pm_alloc. */
static pm_result write_target(char **out, const char *path, pm_error *error) {
    *out = NULL;
    char *cur = pm_strdup(NULL, path);
    if (!cur) return out_of_memory(error, path);
    for (int hops = 0;; hops++) {
        struct stat st;
        /* A missing name (a dangling link's target) is where the new file goes; other errors
         * surface, with their errno, when the temporary file is created. */
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
            *out = cur;
            return PM_OK;
        }
        int e = hops >= PM_MAX_LINK_HOPS ? ELOOP : link_followable(cur, &st);
        char *next = NULL;
        if (!e) e = link_target(&next, cur, st.st_size > 0 ? (size_t)st.st_size : 0);
        pm_free(NULL, cur);
        if (e == LINK_REFUSED)
            return pm_fail(error, PM_ERR_IO,
                           "%s: not followed: a symbolic link in a shared sticky directory owned by another user", path);
        if (e == ENOMEM) return out_of_memory(error, path);
        if (e) {
            char why[128];
            return pm_fail(error, PM_ERR_IO, "%s: cannot create: %s", path, pm_errno_text(why, sizeof why, e));
        }
        cur = next;
    }
}

/* ---- writing ---- */

/* "<directory of path>/.pm-XXXXXXXX.tmp", the attempt-th candidate: a name unlikely to collide
 * with other writers. Not "<path>.tmp-...": for a name near NAME_MAX that would be too long, and a
 * legal target would fail. Hidden, so that directory scans (build DIR) pass over a temporary file
 * left by a killed writer. */
static void temp_name(char *tmp, size_t cap, const char *path, int attempt) {
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
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
    seed.attempt = attempt;
    /* The target's name goes into the hash: the files of one pm_file_write_all share a directory
     * and, often, everything else in the seed. */
    uint64_t name = pm_hash64(path, strlen(path), 0x6276685F746D70ull);
    uint64_t h = pm_hash64(&seed, sizeof seed, name);
    snprintf(tmp, cap, "%.*s.pm-%08x.tmp", dir_len, path, (unsigned)(h & 0xffffffffu));
}

#define PM_TEMP_ATTEMPTS 16

/* Opens a temporary name beside `path` exclusively (O_EXCL also refuses a link planted under
 * that name). */
static int open_temp(char *tmp, size_t cap, const char *path) {
    for (int attempt = 0; attempt < PM_TEMP_ATTEMPTS; attempt++) {
        temp_name(tmp, cap, path, attempt);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

/* On Linux the bytes go first into a file without a name in the target's directory (O_TMPFILE),
 * which gets its temporary name only when every file of the set is written: a writer killed
 * outright (SIGKILL, the OOM killer, a CI timeout) while writing leaves nothing behind, where a
 * named temporary file would stay. Linked through /proc/self/fd, as linkat(AT_EMPTY_PATH) needs
 * a capability. -1 where that cannot work (no O_TMPFILE, a file system without it, no /proc, or
 * PM_NO_TMPFILE defined, as `make test-scalar` does to test the other path): the caller falls
 * back to a named temporary file. */
static int open_anonymous(const char *target, char *proc, size_t cap) {
#if defined(__linux__) && defined(O_TMPFILE) && !defined(PM_NO_TMPFILE)
    char *dir = dir_of(target);
    if (!dir) return -1;
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    pm_free(NULL, dir);
    if (fd < 0) return -1;
    snprintf(proc, cap, "/proc/self/fd/%d", fd);
    if (access(proc, F_OK) != 0) {
        close(fd);
        return -1;
    }
    return fd;
#else
    (void)target;
    (void)proc;
    (void)cap;
    return -1;
#endif
}

/* Gives the anonymous file behind `proc` a temporary name beside `path`; 0 or an errno value. */
static int link_anonymous(char *tmp, size_t cap, const char *proc, const char *path) {
    for (int attempt = 0; attempt < PM_TEMP_ATTEMPTS; attempt++) {
        temp_name(tmp, cap, path, attempt);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) return 0;
        if (errno != EEXIST) return errno;
    }
    return EEXIST;
}

/* Writes all `size` bytes; 0 or an errno value. */
static int write_bytes(int fd, const char *data, size_t size) {
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? errno : EIO;
        data += n;
        size -= (size_t)n;
    }
    return 0;
}

/* A file written next to its target, not yet renamed into place: still without a name (fd >= 0,
 * see open_anonymous) or under its temporary name (`named`: tmp is on disk). */
typedef struct pending_file {
    const char *path; /* as given, for messages */
    char *target, *tmp;
    size_t tmp_cap;
    int fd, named;
    int no_descriptor; /* creating it failed for want of a descriptor (see write_files) */
    char proc[40];
    const void *data; /* written again under a name should linking the anonymous file fail */
    size_t size;
} pending_file;

static void pending_discard(pending_file *p) {
    if (p->fd >= 0) close(p->fd); /* an anonymous file vanishes with its last descriptor */
    p->fd = -1;
    if (p->named) unlink(p->tmp);
    p->named = 0;
    pm_free(NULL, p->tmp);
    pm_free(NULL, p->target);
    p->tmp = p->target = NULL;
}

/* Writes the bytes under a temporary name; PM_OK, or an error naming the file. */
static pm_result pending_write_named(pending_file *p, pm_error *error) {
    char why[128];
    int fd = open_temp(p->tmp, p->tmp_cap, p->target);
    if (fd < 0) p->no_descriptor = errno == EMFILE || errno == ENFILE;
    if (fd < 0) return pm_fail(error, PM_ERR_IO, "%s: cannot create: %s", p->path, pm_errno_text(why, sizeof why, errno));
    p->named = 1;
    int e = write_bytes(fd, (const char *)p->data, p->size);
    if (close(fd) != 0 && !e) e = errno;
    if (e) return pm_fail(error, PM_ERR_IO, "%s: cannot write: %s", p->path, pm_errno_text(why, sizeof why, e));
    return PM_OK;
}

/* Files of one set that may wait without a name: each holds a descriptor until the set is named,
 * and a set of thousands must not run out of them (the rest are named from the start). */
#define PM_ANONYMOUS_FILES 64

static pm_result pending_write(pending_file *p, const char *path, const void *data, size_t size, int anonymous,
                               pm_error *error) {
    p->path = path;
    p->data = data;
    p->size = size;
    if (names_no_file(path)) return pm_fail(error, PM_ERR_IO, "%s: cannot create: not a file name", path);
    pm_result r = write_target(&p->target, path, error);
    if (r != PM_OK) return r;
    /* Checked before writing: rename would replace a FIFO or a device node with a plain file. */
    struct stat st;
    const char *problem = stat(p->target, &st) == 0 ? pm_file_kind_problem(st.st_mode) : NULL;
    if (problem) return pm_fail(error, PM_ERR_IO, "%s: %s", path, problem);
    p->tmp_cap = strlen(p->target) + 32;
    p->tmp = (char *)pm_alloc(NULL, p->tmp_cap, 1);
    if (!p->tmp) return out_of_memory(error, path);
    p->fd = anonymous ? open_anonymous(p->target, p->proc, sizeof p->proc) : -1;
    if (p->fd < 0) return pending_write_named(p, error);
    int e = write_bytes(p->fd, (const char *)data, size);
    if (e) {
        char why[128];
        return pm_fail(error, PM_ERR_IO, "%s: cannot write: %s", path, pm_errno_text(why, sizeof why, e));
    }
    return PM_OK;
}

/* Gives a written file its temporary name: the anonymous file is linked (or, should that fail,
 * its bytes written again under a name). */
static pm_result pending_name(pending_file *p, pm_error *error) {
    if (p->fd < 0) return PM_OK;
    int e = link_anonymous(p->tmp, p->tmp_cap, p->proc, p->target);
    if (e == 0) p->named = 1;
    /* The descriptor's close is where some file systems (NFS) report a failed write. */
    int c = close(p->fd) != 0 ? errno : 0;
    p->fd = -1;
    if (c) {
        char why[128];
        return pm_fail(error, PM_ERR_IO, "%s: cannot write: %s", p->path, pm_errno_text(why, sizeof why, c));
    }
    return e == 0 ? PM_OK : pending_write_named(p, error);
}

/* Whether two resolved targets are one file: the same name in the same directory, however the
 * directory is spelled ("a" and "./a", a link to the directory and the directory). */
static int same_target(const char *a, const char *b) {
    if (strcmp(a, b) == 0) return 1;
    const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
    if (strcmp(na ? na + 1 : a, nb ? nb + 1 : b) != 0) return 0;
    char *da = dir_of(a), *db = dir_of(b);
    struct stat sa, sb;
    int same = da && db && stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    pm_free(NULL, da);
    pm_free(NULL, db);
    return same;
}

static pm_result check_distinct_targets(const char *fn, const pending_file *p, int count, pm_error *error) {
    for (int i = 0; i < count; i++)
        for (int k = i + 1; k < count; k++)
            if (same_target(p[i].target, p[k].target))
                return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: paths %d ('%s') and %d ('%s') name the same file", fn, i,
                               p[i].path, k, p[k].path);
    return PM_OK;
}

/* pm_file_write_all, with `fn` naming the public function in argument errors. */
static pm_result write_files(const char *fn, int count, const char *const *paths, const void *const *data,
                             const size_t *sizes, pm_error *error) {
    if (count < 1) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: count %d is less than 1", fn, count);
    if (!paths || !data || !sizes) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    for (int i = 0; i < count; i++) {
        if (!paths[i]) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: path %d is NULL", fn, i);
        if (!paths[i][0]) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: path %d is empty", fn, i);
        if (!data[i] && sizes[i])
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: %s: data is NULL for %zu bytes", fn, paths[i], sizes[i]);
    }
    /* Two writes to one file cannot both be what the set holds: the later rename would silently
     * win. Same strings here; the same file under other names once the targets are resolved. */
    for (int i = 0; i < count; i++)
        for (int k = i + 1; k < count; k++)
            if (strcmp(paths[i], paths[k]) == 0)
                return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: paths %d and %d are both '%s' (one file written twice)",
                               fn, i, k, paths[i]);
    pending_file *p = (pending_file *)pm_alloc_array(NULL, (size_t)count, sizeof *p, 0);
    if (!p) return out_of_memory(error, paths[0]);
    for (int i = 0; i < count; i++) p[i].fd = -1;
    pm_result r = PM_OK;
    int started = 0;
    int waiting = 0, anonymous = 1; /* waiting: files without a name so far, each holding a descriptor */
    for (; started < count && r == PM_OK; started++) {
        pending_file *q = &p[started];
        r = pending_write(q, paths[started], data[started], sizes[started], anonymous && started < PM_ANONYMOUS_FILES,
                          error);
        if (r != PM_OK && q->no_descriptor && waiting > 0) {
            /* Out of descriptors (a low RLIMIT_NOFILE, a host holding many): the waiting files
             * get their temporary names now, which closes them, and this file and the rest are
             * named from the start, as without O_TMPFILE. */
            pending_discard(q);
            q->no_descriptor = 0;
            r = PM_OK;
            for (int i = 0; i < started && r == PM_OK; i++) r = pending_name(&p[i], error);
            waiting = anonymous = 0;
            if (r == PM_OK) r = pending_write(q, paths[started], data[started], sizes[started], 0, error);
        } else if (q->fd >= 0)
            waiting++;
    }
    if (r == PM_OK) r = check_distinct_targets(fn, p, count, error);
    for (int i = 0; i < count && r == PM_OK; i++) r = pending_name(&p[i], error);
    /* Nothing is renamed until every file is written, so a failure leaves every target as it was. */
    for (int i = 0; i < count && r == PM_OK; i++) {
        if (rename(p[i].tmp, p[i].target) != 0) {
            char why[128];
            r = pm_fail(error, PM_ERR_IO, "%s: cannot rename into place: %s", p[i].path, pm_errno_text(why, sizeof why, errno));
        } else p[i].named = 0;
    }
    for (int i = 0; i < started; i++) pending_discard(&p[i]);
    pm_free(NULL, p);
    return r;
}

pm_result pm_file_write_all(int count, const char *const *paths, const void *const *data, const size_t *sizes,
                            pm_error *error) {
    return write_files("pm_file_write_all", count, paths, data, sizes, error);
}

pm_result pm_file_write(const char *path, const void *data, size_t size, pm_error *error) {
    if (!path) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_file_write: path is NULL");
    if (!path[0]) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_file_write: path is empty");
    return write_files("pm_file_write", 1, &path, &data, &size, error);
}

pm_result pm_file_check_output(const char *path, pm_error *error) {
    if (!path) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_file_check_output: path is NULL");
    if (!path[0]) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_file_check_output: path is empty");
    if (names_no_file(path)) return pm_fail(error, PM_ERR_IO, "%s: cannot create: not a file name", path);
    char *target;
    pm_result r = write_target(&target, path, error);
    if (r != PM_OK) return r;
    struct stat st;
    const int found = stat(target, &st) == 0, missing_errno = found ? 0 : errno;
    const char *problem = found ? pm_file_kind_problem(st.st_mode) : NULL;
    /* Through a link, the directory that must take the new file is the target's. */
    char *dir = problem ? NULL : dir_of(target);
    pm_free(NULL, target);
    if (problem) return pm_fail(error, PM_ERR_IO, "%s: %s", path, problem);
    /* A name longer than the file system takes is refused now, not by the rename after the work. */
    if (missing_errno == ENAMETOOLONG) {
        char why[128];
        pm_free(NULL, dir);
        return pm_fail(error, PM_ERR_IO, "%s: cannot create: %s", path, pm_errno_text(why, sizeof why, ENAMETOOLONG));
    }
    if (!dir) return out_of_memory(error, path);
    if (stat(dir, &st) != 0) r = pm_fail(error, PM_ERR_IO, "%s: cannot create: its directory does not exist", path);
    else if (!S_ISDIR(st.st_mode)) /* e.g. `synth walk.bvh`: name what stands where the directory should be */
        r = pm_fail(error, PM_ERR_IO, "%s: cannot create: %s is not a directory", path, dir);
    else if (access(dir, W_OK) != 0)
        r = pm_fail(error, PM_ERR_IO, "%s: cannot create: its directory is not writable", path);
    pm_free(NULL, dir);
    return r;
}
