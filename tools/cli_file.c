#include "cli_file.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"

char *pm_cli_read_text(const char *path, size_t *size, pm_error *error) {
    /* Pipes are fine (a shell's <(...)): text is read to its end, no size up front. */
    void *text = NULL;
    size_t n = 0;
    if (pm_file_read(&text, &n, path, PM_FILE_READ_PIPES, NULL, error) != PM_OK) return NULL;
    if (size) *size = n;
    return (char *)text; /* (the default allocator's: free() releases it) */
}

char *pm_cli_read_json_text(const char *path, pm_error *error) {
    size_t size;
    char *text = pm_cli_read_text(path, &size, error);
    if (!text) return NULL;
    const char *nul = memchr(text, 0, size);
    if (nul) {
        pm_cli_set_error(error, PM_ERR_PARSE, "%s:%d: a NUL byte (a JSON file is text)", path, pm_cli_text_line(text, nul));
        free(text);
        return NULL;
    }
    return text;
}

char *pm_cli_absolute_path(const char *path) {
    char *cwd = path[0] == '/' ? NULL : getcwd(NULL, 0);
    if (path[0] != '/' && !cwd) return NULL;
    size_t n = (cwd ? strlen(cwd) + 1 : 0) + strlen(path) + 2;
    char *joined = malloc(n), *out = malloc(n);
    if (joined) snprintf(joined, n, "%s%s%s", cwd ? cwd : "", cwd ? "/" : "", path);
    free(cwd);
    if (!joined || !out) {
        free(joined);
        free(out);
        return NULL;
    }
    size_t len = 0;
    for (const char *p = joined; *p;) {
        while (*p == '/') p++;
        const char *end = strchr(p, '/');
        size_t k = end ? (size_t)(end - p) : strlen(p);
        if (k == 2 && p[0] == '.' && p[1] == '.') {
            while (len > 0 && out[len - 1] != '/') len--;
            if (len > 0) len--;
        } else if (k > 0 && !(k == 1 && p[0] == '.')) {
            out[len++] = '/';
            memcpy(out + len, p, k);
            len += k;
        }
        p += k;
    }
    if (len == 0) out[len++] = '/';
    out[len] = '\0';
    free(joined);
    return out;
}

int pm_cli_has_suffix(const char *path, const char *suffix) {
    size_t n = strlen(path), k = strlen(suffix);
    return n >= k && strcasecmp(path + n - k, suffix) == 0;
}

typedef struct str_list {
    char **items;
    int count, cap;
} str_list;

/* Appends `owned` (malloc'd; freed when it cannot be added); 0 when out of memory. */
static int list_push(str_list *l, char *owned) {
    if (!owned) return 0;
    if (l->count == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        char **n = realloc(l->items, (size_t)cap * sizeof(char *));
        if (!n) {
            free(owned);
            return 0;
        }
        l->items = n;
        l->cap = cap;
    }
    l->items[l->count++] = owned;
    return 1;
}

static int list_add(str_list *l, const char *s) { return list_push(l, strdup(s)); }

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* The directories one scan has entered, by device and inode (an open-addressing hash set):
 * symbolic links can lead back into a directory already scanned (`ln -s . a` makes every
 * directory below contain itself), and each name for it would otherwise be scanned again, twice
 * per level with two such links. */
typedef struct dir_set {
    struct dir_id {
        dev_t dev;
        ino_t ino;
        int used;
    } *slots;
    size_t cap, count;
} dir_set;

static size_t dir_hash(dev_t dev, ino_t ino, size_t cap) {
    uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ull ^ (uint64_t)dev * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* 1 when (dev, ino) was not in the set (and now is), 0 when it was, -1 when out of memory. */
static int dir_set_add(dir_set *s, dev_t dev, ino_t ino) {
    if (2 * (s->count + 1) > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct dir_id *slots = calloc(cap, sizeof *slots);
        if (!slots) return -1;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slots[i].used) continue;
            size_t k = dir_hash(s->slots[i].dev, s->slots[i].ino, cap);
            while (slots[k].used) k = (k + 1) & (cap - 1);
            slots[k] = s->slots[i];
        }
        free(s->slots);
        s->slots = slots;
        s->cap = cap;
    }
    size_t k = dir_hash(dev, ino, s->cap);
    for (; s->slots[k].used; k = (k + 1) & (s->cap - 1))
        if (s->slots[k].dev == dev && s->slots[k].ino == ino) return 0;
    s->slots[k] = (struct dir_id){dev, ino, 1};
    s->count++;
    return 1;
}

/* A path for messages: whole when short, else its start and its end (the message buffer would
 * otherwise cut off the file name and the problem after it). */
static const char *path_excerpt(char *buf, size_t cap, const char *path) {
    size_t n = strlen(path);
    if (n <= 200) return path;
    snprintf(buf, cap, "%.96s...%s", path, path + n - 96);
    return buf;
}

/* A path longer than the system takes can be neither opened nor examined: an error, since it may
 * hold (or be) a clip that would otherwise be left out without a word. */
static pm_result too_long(const char *path, pm_error *error) {
    char shown[256];
    return pm_cli_set_error(error, PM_ERR_LIMIT, "%s: path of %zu characters is longer than the system allows (%d)",
                            path_excerpt(shown, sizeof shown, path), strlen(path), PATH_MAX - 1);
}

/* Adds the .bvh files under directory `dir` (already in `seen`) to l, sorted by path, each
 * directory once. Depth needs no limit of its own: every level adds at least two characters, and
 * a path past PATH_MAX is an error. */
static pm_result walk(str_list *l, dir_set *seen, const char *dir, pm_error *error) {
    DIR *d = opendir(dir);
    if (!d) return pm_cli_set_error(error, PM_ERR_IO, "%s: cannot list the directory: %s", dir, strerror(errno));
    struct dirent *e;
    str_list local = {0};
    pm_result r = PM_OK;
    size_t dir_len = strlen(dir);
    /* readdir tells the end of the listing from a failure (EOVERFLOW, EIO) only through errno:
     * a listing cut short would leave clips out without a word. */
    for (;;) {
        errno = 0;
        if (!(e = readdir(d))) {
            if (errno) r = pm_cli_set_error(error, PM_ERR_IO, "%s: cannot list the directory: %s", dir, strerror(errno));
            break;
        }
        if (e->d_name[0] == '.') continue;
        size_t n = dir_len + 1 + strlen(e->d_name) + 1;
        char *path = malloc(n);
        if (path) snprintf(path, n, "%s/%s", dir, e->d_name);
        if (!list_push(&local, path)) {
            r = pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", dir);
            break;
        }
    }
    closedir(d);
    /* qsort with a NULL array is undefined even for no elements. */
    if (r == PM_OK && local.count > 1) qsort(local.items, (size_t)local.count, sizeof(char *), cmp_str);
    for (int i = 0; i < local.count && r == PM_OK; i++) {
        const char *path = local.items[i];
        int bvh = pm_cli_has_suffix(path, ".bvh");
        if (strlen(path) >= PATH_MAX) {
            r = too_long(path, error);
            break;
        }
        struct stat st;
        if (stat(path, &st) != 0) {
            int err = errno;
            struct stat lst;
            /* A link to nothing (or into a loop of links) names no directory and no clip; one
             * named like a clip is more likely a mistake than something to leave out. */
            if ((err == ENOENT || err == ELOOP) && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
                if (bvh) r = pm_cli_set_error(error, PM_ERR_IO, "%s: a broken symbolic link", path);
                continue;
            }
            if (err == ENOENT) continue; /* removed since the listing */
            r = pm_cli_set_error(error, PM_ERR_IO, "%s: cannot examine: %s", path, strerror(err));
        } else if (S_ISDIR(st.st_mode)) {
            int fresh = dir_set_add(seen, st.st_dev, st.st_ino);
            if (fresh < 0) r = pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
            else if (fresh) r = walk(l, seen, path, error);
        } else if (bvh && !list_add(l, path))
            r = pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    pm_cli_free_list(local.items, local.count);
    return r;
}

pm_result pm_cli_expand_inputs(char ***out, int *out_count, char **inputs, int count, pm_error *error) {
    str_list l = {0};
    for (int i = 0; i < count; i++) {
        struct stat st;
        if (stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            int before = l.count;
            /* One set per input: a directory given twice (or inside another one given) is still
             * reported as an input given twice, not quietly scanned once. */
            dir_set seen = {0};
            pm_result r = dir_set_add(&seen, st.st_dev, st.st_ino) < 0
                              ? pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", inputs[i])
                              : walk(&l, &seen, inputs[i], error);
            free(seen.slots);
            if (r != PM_OK) {
                pm_cli_free_list(l.items, l.count);
                return r;
            }
            /* Most likely a wrong path: say so rather than build or measure without it. */
            if (l.count == before) {
                pm_cli_free_list(l.items, l.count);
                return pm_cli_set_error(error, PM_ERR_NOT_FOUND,
                                        "%s: no .bvh files found in the directory (names starting with '.' are skipped)",
                                        inputs[i]);
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

pm_result pm_cli_check_not_input(const char *output, const char *const *inputs, int count, pm_error *error) {
    struct stat out;
    /* An output that does not exist yet (or a dangling link's target) is no input. */
    if (stat(output, &out) != 0) return PM_OK;
    for (int i = 0; i < count; i++) {
        struct stat in;
        if (!inputs[i] || stat(inputs[i], &in) != 0 || in.st_dev != out.st_dev || in.st_ino != out.st_ino) continue;
        if (!strcmp(inputs[i], output))
            return pm_cli_set_error(error, PM_ERR_INVALID_ARGUMENT,
                                    "%s: the output is also an input (it would be overwritten)", output);
        return pm_cli_set_error(error, PM_ERR_INVALID_ARGUMENT,
                                "%s: the output is also an input, as %s (it would be overwritten)", output, inputs[i]);
    }
    return PM_OK;
}

pm_result pm_cli_check_output_extension(const char *output, const char *want, const char *what, pm_error *error) {
    static const struct {
        const char *ext, *kind;
    } known[] = {{".bvh", "BVH clips"},
                 {".json", "blend spaces, schemas and feature descriptions"},
                 {".f32", "float32 query and feature rows"},
                 {".pmdb", "databases"}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i].ext, want) != 0 && pm_cli_has_suffix(output, known[i].ext))
            return pm_cli_set_error(error, PM_ERR_INVALID_ARGUMENT,
                                    "%s: -o ends in %s, the extension of %s, but the output is %s (name it %s)", output,
                                    known[i].ext, known[i].kind, what, want);
    return PM_OK;
}

pm_result pm_cli_check_directory_target(const char *dir, const char *option, pm_error *error) {
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return PM_OK;
        return pm_cli_set_error(error, PM_ERR_INVALID_ARGUMENT, "%s: %s: not a directory (%s)", dir, option,
                                S_ISREG(st.st_mode) ? "a regular file" : "another kind of file");
    }
    if (errno != ENOENT)
        return pm_cli_set_error(error, PM_ERR_IO, "%s: %s: cannot examine: %s", dir, option, strerror(errno));
    /* Its parent: everything before the last '/' that ends a name ("a/b/" is the directory a/b). */
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    while (n > 0 && dir[n - 1] != '/') n--;
    char parent[PATH_MAX];
    if (n == 0) snprintf(parent, sizeof parent, ".");
    else snprintf(parent, sizeof parent, "%.*s", (int)PM_CLI_MIN(n, sizeof parent - 1), dir);
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
        return pm_cli_set_error(error, PM_ERR_NOT_FOUND, "%s: %s: its parent directory does not exist", dir, option);
    return PM_OK;
}

void pm_cli_free_list(char **list, int count) {
    if (!list) return;
    for (int i = 0; i < count; i++) free(list[i]);
    free(list);
}
