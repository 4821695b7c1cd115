/* build's asset names: clips of one file name told apart by their folders, names checked for
 * length and uniqueness, and inputs given twice by different paths. */
#include "asset_names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_common.h"
#include "cli_file.h"

/* Start of the last `k` components of `path` (a clip file's), or the path itself when it has
 * fewer. */
static const char *path_tail(const char *path, int k) {
    const char *p = path + strlen(path);
    while (p > path) {
        if (p[-1] == '/' && --k == 0) break;
        p--;
    }
    return p;
}

const char *pm_cli_bvh_file(const char *const *from, int i) {
    return pm_cli_has_suffix(from[i], ".json") ? NULL : from[i];
}

/* Clips from different folders may share a file name (subject1/walk.bvh, subject2/walk.bvh): each
 * such clip is named by as many trailing components of its path (".bvh" dropped) as tell the
 * clips of that name apart, so that asset names stay unique for listings, --addend and
 * pm_database_find_asset. The components are the absolute path's (pm_cli_absolute_path): names
 * are data of the database and its key, and "x/", "./x//" or a working directory inside x must
 * not change them. from[i] is clip i's input file (baked blend-space clips, whose names carry
 * the space's own, are left alone). Returns 0 after printing an error. */
int pm_cli_name_apart(pm_clip *clips, const char *const *from, int n) {
    char **where = calloc((size_t)(n ? n : 1), sizeof *where);
    if (!where) return pm_cli_fail("build: out of memory"), 0;
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        if (!pm_cli_bvh_file(from, i)) continue;
        int clash = 0;
        for (int j = 0; j < n && !clash; j++)
            clash = j != i && pm_cli_bvh_file(from, j) && !strcmp(clips[i].name, clips[j].name);
        if (!clash) continue;
        for (int a = 0; a < n && ok; a++) {
            if (!pm_cli_bvh_file(from, a) || where[a] || strcmp(clips[a].name, clips[i].name)) continue;
            if (!(where[a] = pm_cli_absolute_path(from[a]))) {
                pm_cli_fail("%s: cannot name the clip's folders: %s", from[a], strerror(errno));
                ok = 0;
            }
        }
        if (!ok) break;
        const char *base = clips[i].name;
        char *keep = strdup(base);
        if (!keep) {
            pm_cli_fail("build: out of memory");
            ok = 0;
            break;
        }
        /* The fewest components that tell every clip of this name apart. */
        int k = 2;
        for (;; k++) {
            int apart = 1, longest = 1;
            for (int a = 0; a < n && apart; a++) {
                if (!pm_cli_bvh_file(from, a) || strcmp(clips[a].name, keep)) continue;
                longest &= path_tail(where[a], k) == where[a];
                for (int b = a + 1; b < n && apart; b++)
                    if (pm_cli_bvh_file(from, b) && !strcmp(clips[b].name, keep))
                        apart = strcmp(path_tail(where[a], k), path_tail(where[b], k)) != 0;
            }
            if (apart || longest) break;
        }
        for (int a = 0; a < n && ok; a++) {
            if (!pm_cli_bvh_file(from, a) || strcmp(clips[a].name, keep)) continue;
            const char *tail = path_tail(where[a], k);
            size_t len = strlen(tail);
            if (len > 4 && !strcmp(tail + len - 4, ".bvh")) len -= 4;
            char name[1024];
            snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), tail);
            pm_cli_clean_name(name); /* as the reader names clips after their files */
            pm_error err;
            if (pm_clip_set_name(&clips[a], name, &err) != PM_OK) {
                pm_cli_fail("%s: %s", from[a], err.message);
                ok = 0;
            }
        }
        free(keep);
    }
    for (int i = 0; i < n; i++) free(where[i]);
    free(where);
    return ok;
}

typedef struct named {
    const char *name;
    int index;
} named;

static int cmp_named(const void *a, const void *b) {
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Asset names longer than a database stores (PM_MAX_ASSET_NAME), said with the input that makes
 * them: the library could only name the asset's index. Returns 0 after printing an error. */
int pm_cli_check_name_lengths(const pm_clip *clips, const char *const *from, int n, int mirror) {
    const size_t extra = mirror ? strlen(".mirror") : 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(clips[i].name ? clips[i].name : "") + extra;
        if (len <= PM_MAX_ASSET_NAME) continue;
        int space = pm_cli_has_suffix(from[i], ".json");
        pm_cli_fail("build: %s: asset '%.40s...' would be named with %zu bytes%s, over the %d a database stores "
                    "(give %s)",
                    from[i], clips[i].name, len, extra ? " (with --mirror's \".mirror\")" : "", PM_MAX_ASSET_NAME,
                    space ? "the blend space a shorter \"name\"" : "the file a shorter name");
        return 0;
    }
    return 1;
}

/* Asset names identify assets (listings, --addend, pm_database_find_asset): after pm_cli_name_apart
 * only blend spaces can still repeat one (two spaces of one "name", or a grid point named like
 * a clip), and with `mirror` a clip named like another's mirrored copy ("walk.mirror", the
 * name the library gives the copy of "walk"). `from` is each clip's input file. Returns 0 after
 * printing an error. */
int pm_cli_check_unique_names(const pm_clip *clips, const char *const *from, int n, int mirror) {
    named *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v) return pm_cli_fail("build: out of memory"), 0;
    for (int i = 0; i < n; i++) v[i] = (named){clips[i].name ? clips[i].name : "", i};
    qsort(v, (size_t)n, sizeof *v, cmp_named);
    int ok = 1;
    for (int i = 1; i < n && ok; i++)
        if (!strcmp(v[i - 1].name, v[i].name)) {
            const char *a = from[v[i - 1].index], *b = from[v[i].index];
            int spaces = pm_cli_has_suffix(a, ".json") && pm_cli_has_suffix(b, ".json");
            /* Inputs given twice were refused, and a space names its grid points apart (with up to 9
             * digits), so this would be a space whose points are apart yet named alike: a safety net
             * whose advice is the only one that could help. */
            if (spaces && !strcmp(a, b))
                pm_cli_fail("build: %s: two points of its grid make an asset named '%s' (names give the parameters "
                            "to 6 significant digits): asset names must be unique (make \"grid\" coarser)",
                            a, v[i].name);
            else
                pm_cli_fail("build: %s and %s both make an asset named '%s': asset names must be unique (%s)", a, b,
                            v[i].name, spaces ? "give the blend spaces different \"name\"s" : "rename one of them");
            ok = 0;
        }
    /* The names being distinct, a mirrored copy can only clash with a clip named "<other>.mirror". */
    const size_t suffix = strlen(".mirror");
    for (int i = 0; i < n && ok && mirror; i++) {
        const char *name = v[i].name;
        size_t stem = strlen(name) - PM_CLI_MIN(strlen(name), suffix);
        if (!stem || strcmp(name + stem, ".mirror")) continue;
        for (int j = 0; j < n && ok; j++)
            if (strlen(v[j].name) == stem && !strncmp(v[j].name, name, stem)) {
                int lo = PM_CLI_MIN(v[i].index, v[j].index), hi = v[i].index + v[j].index - lo;
                pm_cli_fail("build: %s and %s both make an asset named '%s' (--mirror names the mirrored copy of an "
                            "asset <name>.mirror): asset names must be unique (rename one of them)",
                            from[lo], from[hi], name);
                ok = 0;
            }
    }
    free(v);
    return ok;
}

typedef struct input_id {
    dev_t dev;
    ino_t ino;
    int index;
} input_id;

static int cmp_input_id(const void *a, const void *b) {
    const input_id *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* The same file twice (by any path: a directory and a file in it, a symbolic link) would add
 * its assets twice: double weight in every search and copies that hide the real next-best
 * match. Files are the same when device and inode are. Returns 0 after printing an error;
 * files that cannot be stat'ed are left to the reader's error. */
int pm_cli_check_distinct_inputs(char **files, int count) {
    input_id *ids = calloc((size_t)count, sizeof *ids);
    if (!ids) return pm_cli_fail("build: out of memory"), 0;
    int n = 0, ok = 1;
    for (int i = 0; i < count; i++) {
        struct stat st;
        if (stat(files[i], &st) == 0) ids[n++] = (input_id){st.st_dev, st.st_ino, i};
    }
    if (n > 1) qsort(ids, (size_t)n, sizeof *ids, cmp_input_id);
    for (int i = 1; i < n && ok; i++)
        if (ids[i - 1].dev == ids[i].dev && ids[i - 1].ino == ids[i].ino) {
            const char *a = files[ids[i - 1].index], *b = files[ids[i].index];
            if (!strcmp(a, b)) pm_cli_fail("%s: input given twice", a);
            else pm_cli_fail("%s: input given twice (also as %s)", a, b);
            ok = 0;
        }
    free(ids);
    return ok;
}
