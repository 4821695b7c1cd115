#include "cli_file.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"

char *pm_cli_read_text(const char *path, size_t *size, pm_error *error) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        pm_cli_set_error(error, PM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
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
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        pm_cli_set_error(error, bad ? PM_ERR_IO : PM_ERR_OUT_OF_MEMORY, "%s: %s", path, bad ? "read error" : "out of memory");
        return NULL;
    }
    buf[n] = '\0';
    if (size) *size = n;
    return buf;
}

pm_result pm_cli_write_file(const char *path, const void *data, size_t size, pm_error *error) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return pm_cli_set_error(error, PM_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    size_t put = fwrite(data, 1, size, f);
    int closed = fclose(f);
    if (put != size || closed != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        return pm_cli_set_error(error, PM_ERR_IO, "%s: write failed", path);
    }
    return PM_OK;
}

pm_result pm_cli_check_output(const char *path, pm_error *error) {
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    struct stat st;
    const char *why = NULL;
    if (!path[0] || (slash && !slash[1])) why = "not a file name";
    else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) why = "is a directory";
    else if (stat(dir, &st) != 0) why = "its directory does not exist";
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
    qsort(local.items, (size_t)local.count, sizeof(char *), cmp_str);
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
            if (!walk(&l, inputs[i], 0)) {
                pm_cli_free_list(l.items, l.count);
                return pm_cli_set_error(error, PM_ERR_IO, "%s: cannot list the directory", inputs[i]);
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
