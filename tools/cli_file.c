#include "cli_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"

const char *pm_cli_file_kind_problem(unsigned long mode) {
    mode_t m = (mode_t)mode;
    if (S_ISREG(m)) return NULL;
    if (S_ISDIR(m)) return "is a directory";
    if (S_ISFIFO(m)) return "not a regular file (a FIFO)";
    if (S_ISCHR(m)) return "not a regular file (a character device)";
    if (S_ISBLK(m)) return "not a regular file (a block device)";
    if (S_ISSOCK(m)) return "not a regular file (a socket)";
    return "not a regular file";
}

char *pm_cli_read_text(const char *path, size_t *size, pm_error *error) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        pm_cli_set_error(error, PM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    /* Pipes are fine (the text is read to its end, no size up front); a directory reads as an
     * error and a device may never end. */
    struct stat st;
    const char *problem = NULL;
    if (fstat(fileno(f), &st) != 0) problem = strerror(errno);
    else if (!S_ISFIFO(st.st_mode)) problem = pm_cli_file_kind_problem(st.st_mode);
    if (problem) {
        pm_cli_set_error(error, PM_ERR_IO, "%s: %s", path, problem);
        fclose(f);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        if (n + 1 >= cap) {
            char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f), e = errno;
    fclose(f);
    if (!buf || bad) {
        free(buf);
        if (bad) pm_cli_set_error(error, PM_ERR_IO, "%s: read error: %s", path, strerror(e));
        else pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        return NULL;
    }
    buf[n] = '\0';
    if (size) *size = n;
    return buf;
}

/* The file a write to `path` replaces: the file the last of a chain of symbolic links names
 * (dangling or not), because renaming over the link itself would turn it into a plain file and
 * leave the file it names unchanged. Returns a malloc'd path, or NULL with errno set. */
static char *write_target(const char *path) {
    char *cur = strdup(path);
    for (int hops = 0; cur; hops++) {
        struct stat st;
        /* A missing name (a dangling link's target) is where the new file goes; other errors
         * surface, with their errno, when the temporary file is created. */
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) return cur;
        if (hops >= 40) { /* the kernel's limit */
            free(cur);
            errno = ELOOP;
            return NULL;
        }
        char target[4096];
        ssize_t n = readlink(cur, target, sizeof target);
        if (n < 0 || (size_t)n >= sizeof target) {
            int e = n < 0 ? errno : ENAMETOOLONG;
            free(cur);
            errno = e;
            return NULL;
        }
        target[n] = '\0';
        /* A relative target is relative to the link's directory. */
        const char *slash = strrchr(cur, '/');
        size_t dir = target[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
        char *next = malloc(dir + (size_t)n + 1);
        if (next) {
            memcpy(next, cur, dir);
            memcpy(next + dir, target, (size_t)n + 1);
        } else errno = ENOMEM;
        free(cur);
        cur = next;
    }
    return NULL;
}

/* A file written under a temporary name next to its target, not yet renamed into place. */
typedef struct pending_file {
    const char *path; /* as given, for messages */
    char *target, *tmp;
} pending_file;

static void pending_discard(pending_file *p) {
    if (p->tmp) unlink(p->tmp);
    free(p->tmp);
    free(p->target);
    p->tmp = p->target = NULL;
}

static pm_result pending_write(pending_file *p, const char *path, const void *data, size_t size, pm_error *error) {
    memset(p, 0, sizeof *p);
    p->path = path;
    if (!path[0]) return pm_cli_set_error(error, PM_ERR_INVALID_ARGUMENT, "output path is empty");
    p->target = write_target(path);
    if (!p->target) {
        if (errno == ENOMEM) return pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        return pm_cli_set_error(error, PM_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    }
    /* Checked before writing: rename would replace a FIFO or a device node with a plain file. */
    struct stat st;
    const char *problem = stat(p->target, &st) == 0 ? pm_cli_file_kind_problem(st.st_mode) : NULL;
    if (problem) {
        pending_discard(p);
        return pm_cli_set_error(error, PM_ERR_IO, "%s: %s", path, problem);
    }
    size_t cap = strlen(p->target) + 48;
    p->tmp = malloc(cap);
    if (!p->tmp) {
        pending_discard(p);
        return pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    /* The process id keeps concurrent runs apart, the counter the files of one run. */
    static unsigned serial;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(p->tmp, cap, "%s.tmp-%ld-%u", p->target, (long)getpid(), serial++);
        fd = open(p->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        int e = errno;
        free(p->tmp); /* not ours to unlink */
        p->tmp = NULL;
        pending_discard(p);
        return pm_cli_set_error(error, PM_ERR_IO, "%s: cannot create: %s", path, strerror(e));
    }
    const char *c = data;
    int e = 0;
    while (size > 0 && !e) {
        ssize_t n = write(fd, c, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) e = n < 0 ? errno : EIO;
        else {
            c += n;
            size -= (size_t)n;
        }
    }
    if (close(fd) != 0 && !e) e = errno;
    if (e) {
        pending_discard(p);
        return pm_cli_set_error(error, PM_ERR_IO, "%s: cannot write: %s", path, strerror(e));
    }
    return PM_OK;
}

pm_result pm_cli_write_files(int count, const char *const *paths, const void *const *data, const size_t *sizes,
                             pm_error *error) {
    pending_file *p = calloc((size_t)(count > 0 ? count : 1), sizeof *p);
    if (!p) return pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", count > 0 ? paths[0] : "output");
    pm_result r = PM_OK;
    int written = 0;
    for (; written < count && r == PM_OK; written++) r = pending_write(&p[written], paths[written], data[written], sizes[written], error);
    /* Nothing is renamed until every file is written, so a failure leaves every target as it was. */
    for (int i = 0; i < count && r == PM_OK; i++) {
        if (rename(p[i].tmp, p[i].target) != 0)
            r = pm_cli_set_error(error, PM_ERR_IO, "%s: cannot rename into place: %s", p[i].path, strerror(errno));
        else {
            free(p[i].tmp);
            p[i].tmp = NULL;
        }
    }
    for (int i = 0; i < written; i++) pending_discard(&p[i]);
    free(p);
    return r;
}

pm_result pm_cli_write_file(const char *path, const void *data, size_t size, pm_error *error) {
    return pm_cli_write_files(1, &path, &data, &size, error);
}

pm_result pm_cli_check_output(const char *path, pm_error *error) {
    const char *slash = strrchr(path, '/');
    if (!path[0] || (slash && !slash[1])) return pm_cli_set_error(error, PM_ERR_IO, "%s: cannot create: not a file name", path);
    char *target = write_target(path);
    if (!target) {
        if (errno == ENOMEM) return pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        return pm_cli_set_error(error, PM_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    }
    /* Through a link, the directory that must take the new file is the target's. */
    char dir[4096];
    slash = strrchr(target, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == target) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - target), target);
    struct stat st;
    const char *problem = stat(target, &st) == 0 ? pm_cli_file_kind_problem(st.st_mode) : NULL;
    free(target);
    if (problem) return pm_cli_set_error(error, PM_ERR_IO, "%s: %s", path, problem);
    const char *why = NULL;
    if (stat(dir, &st) != 0) why = "its directory does not exist";
    else if (!S_ISDIR(st.st_mode)) why = "its directory is not a directory";
    else if (access(dir, W_OK) != 0) why = "its directory is not writable";
    if (!why) return PM_OK;
    return pm_cli_set_error(error, PM_ERR_IO, "%s: cannot create: %s", path, why);
}

int pm_cli_has_suffix(const char *path, const char *suffix) {
    size_t n = strlen(path), k = strlen(suffix);
    return n >= k && strcasecmp(path + n - k, suffix) == 0;
}

typedef struct str_list {
    char **items;
    int count, cap;
} str_list;

static int list_add(str_list *l, const char *s) {
    if (l->count == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        char **n = realloc(l->items, (size_t)cap * sizeof(char *));
        if (!n) return 0;
        l->items = n;
        l->cap = cap;
    }
    l->items[l->count] = strdup(s);
    return l->items[l->count++] != NULL;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int walk(str_list *l, const char *dir, int depth) {
    if (depth > 32) return 1;
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    int ok = 1;
    str_list local = {0};
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ok &= list_add(&local, path);
    }
    closedir(d);
    /* qsort with a NULL array is undefined even for no elements. */
    if (local.count > 1) qsort(local.items, (size_t)local.count, sizeof(char *), cmp_str);
    for (int i = 0; i < local.count && ok; i++) {
        struct stat st;
        if (stat(local.items[i], &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) ok &= walk(l, local.items[i], depth + 1);
        else if (pm_cli_has_suffix(local.items[i], ".bvh")) ok &= list_add(l, local.items[i]);
    }
    pm_cli_free_list(local.items, local.count);
    return ok;
}

pm_result pm_cli_expand_inputs(char ***out, int *out_count, char **inputs, int count, pm_error *error) {
    str_list l = {0};
    for (int i = 0; i < count; i++) {
        struct stat st;
        if (stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            int before = l.count;
            if (!walk(&l, inputs[i], 0)) {
                pm_cli_free_list(l.items, l.count);
                return pm_cli_set_error(error, PM_ERR_IO, "%s: cannot list the directory", inputs[i]);
            }
            /* Most likely a wrong path: say so rather than build or measure without it. */
            if (l.count == before) {
                pm_cli_free_list(l.items, l.count);
                return pm_cli_set_error(error, PM_ERR_NOT_FOUND, "%s: no .bvh files found in the directory", inputs[i]);
            }
        } else if (!list_add(&l, inputs[i])) {
            pm_cli_free_list(l.items, l.count);
            return pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    *out = l.items;
    *out_count = l.count;
    return PM_OK;
}

void pm_cli_free_list(char **list, int count) {
    if (!list) return;
    for (int i = 0; i < count; i++) free(list[i]);
    free(list);
}
