#include "cli_file.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli_common.h"

char *pm_cli_read_text(const char *path, size_t *size, pm_error *error) {
    /* Pipes are fine (a shell's <(...)): text is read to its end, no size up front. */
    void *text = NULL;
    size_t n = 0;
    if (pm_file_read(&text, &n, path, PM_FILE_READ_PIPES, NULL, error) != PM_OK) return NULL;
    if (size) *size = n;
    return (char *)text; /* (the default allocator's: free() releases it) */
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
