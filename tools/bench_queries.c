#include "bench_queries.h"

#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_file.h"

static uint32_t rng_u32(pm_bench_rng *r) {
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t x = r->s;
    return (uint32_t)((x ^ (x >> 22)) >> (22 + (x >> 61)));
}
static double rng_unit(pm_bench_rng *r) { return ((double)rng_u32(r) + 0.5) / 4294967296.0; }
/* A standard normal by Kinderman and Monahan's ratio of uniforms: (u, v) uniform in
 * (0, 1] x [-sqrt(2/e), sqrt(2/e)] is kept when u <= exp(-(v/u)^2 / 4), and v/u is normal. It needs
 * only exp, and pm_expf gives the same bits on every machine (libm's log and cos may not), so a
 * seed gives the same query sets everywhere. */
static double rng_normal(pm_bench_rng *r) {
    for (;;) {
        double u = rng_unit(r);
        double x = (2.0 * rng_unit(r) - 1.0) * 0.8577638849607068 / u;
        if ((double)pm_expf((float)(-0.25 * x * x)) >= u) return x;
    }
}
/* base^t for t in [-1, 1], through pm_expf for the same reason. */
static float rng_power(double ln_base, double t) { return pm_expf((float)(ln_base * t)); }

pm_bench_rng pm_bench_rng_seed(int seed) {
    pm_bench_rng r = {(uint64_t)seed * 0x9E3779B97F4A7C15ull + 1};
    return r;
}

/* The noisy set: random searchable poses, raw features + sigma * scale * N(0, 1). */
int pm_bench_noisy_set(pm_bench_query_set *noisy, const pm_database *db, const pm_database_info *info, double sigma,
                       pm_bench_rng *r) {
    const int card = info->cardinality;
    const float *scale = pm_database_scales(db);
    pm_error err;
    for (int i = 0; i < noisy->count; i++) {
        pm_pose_info pi;
        int p;
        do {
            p = (int)(rng_u32(r) % (uint32_t)info->poses);
            if (pm_database_pose(&pi, db, p, &err) != PM_OK) return pm_cli_fail_error(&err);
        } while (pi.block_transition);
        noisy->source_pose[i] = p;
        float *q = noisy->rows + (size_t)i * card;
        pm_database_pose_features(q, db, p, NULL);
        for (int d = 0; d < card; d++) q[d] += (float)(sigma * rng_normal(r)) * scale[d];
    }
    return 0;
}

/* Dynamic weights, two ways (dyn: 2 x card): each channel's weight scaled by a factor in [1/2, 2]
 * (how gameplay re-weights: "feet matter more now"), and - harsher - each dimension's weight by
 * its own factor in [1/4, 4]. Factors are log-uniform. */
void pm_bench_dynamic_weights(float *dyn, const pm_database *db, int card, pm_bench_rng *r) {
    const float *wsqrt = pm_database_weights_sqrt(db);
    float channel_factor[PM_MAX_CHANNELS];
    for (int c = 0; c < PM_MAX_CHANNELS; c++) channel_factor[c] = rng_power(0.6931471805599453, 2.0 * rng_unit(r) - 1.0);
    for (int d = 0; d < card; d++) {
        dyn[d] = wsqrt[d] * wsqrt[d] * channel_factor[pm_database_dim_channel(db, d)];
        dyn[card + d] = wsqrt[d] * wsqrt[d] * rng_power(1.3862943611198906, 2.0 * rng_unit(r) - 1.0);
    }
}

/* Whether the far clip at `path` (named `clip_name` by the reader) is the clip database asset
 * `asset` was built from: the same name, or, for clips that build named apart by their folders
 * ("a/walk" beside "b/walk"), the same name in a folder whose path ends with the asset's. */
static int far_clip_is_asset(const char *asset, const char *path, const char *clip_name) {
    if (!strcmp(asset, clip_name)) return 1;
    const char *slash = strrchr(asset, '/'), *path_slash = strrchr(path, '/');
    if (!slash || !path_slash || strcmp(slash + 1, clip_name)) return 0;
    size_t folders = (size_t)(slash - asset), path_folders = (size_t)(path_slash - path);
    if (path_folders < folders || strncmp(path_slash - folders, asset, folders)) return 0;
    return path_folders == folders || path_slash[-(long)folders - 1] == '/';
}

int pm_bench_far_set(pm_bench_query_set *qs, const pm_database *db, char **paths, int path_count, const pm_bvh_def *bvh,
                     int max_queries) {
    char **files = NULL;
    int nfiles = 0;
    pm_error err;
    if (pm_cli_expand_inputs(&files, &nfiles, paths, path_count, &err) != PM_OK) return pm_cli_fail_error(&err);
    pm_database_info info;
    pm_database_get_info(&info, db);
    const int card = info.cardinality;
    float *all = NULL;
    size_t total = 0;
    int rc = 0;
    for (int i = 0; i < nfiles && rc == 0; i++) {
        pm_clip clip;
        if (pm_bvh_read_file(&clip, files[i], bvh, &err) != PM_OK) {
            rc = pm_cli_fail_error(&err);
            break;
        }
        pm_cli_warn_clip_scale(&clip, "bench", files[i]);
        /* Far queries measure clips the database has not seen: one it holds makes them easy. Its
         * folders are read as build reads them (NULL: the path as given, a warning less at worst). */
        char *where = pm_cli_absolute_path(files[i]);
        for (int a = 0; a < info.assets && clip.name; a++) {
            pm_asset_info ai;
            if (pm_database_asset(&ai, db, a, &err) != PM_OK) {
                rc = pm_cli_fail_error(&err);
                break;
            }
            if (ai.name && far_clip_is_asset(ai.name, where ? where : files[i], clip.name)) {
                pm_cli_warn("bench: warning: far clip %s is in the database (asset %d '%s'): far queries should "
                            "come from clips left out of it",
                            files[i], a, ai.name);
                break;
            }
        }
        free(where);
        if (rc) {
            pm_clip_destroy(&clip);
            break;
        }
        float *rows = NULL;
        int n = 0;
        /* (The library names the clip by its name; the message names the file, as search's.) */
        if (pm_database_clip_queries(&rows, &n, db, &clip, &err) != PM_OK) rc = pm_cli_fail("%s: %s", files[i], err.message);
        else {
            float *grown = realloc(all, (total + (size_t)n) * card * sizeof(float));
            if (!grown) rc = pm_cli_fail("bench: out of memory");
            else {
                all = grown;
                memcpy(all + total * card, rows, (size_t)n * card * sizeof(float));
                total += (size_t)n;
            }
        }
        pm_free_buffer(rows, NULL);
        pm_clip_destroy(&clip);
    }
    pm_cli_free_list(files, nfiles);
    if (rc) {
        free(all);
        return rc;
    }
    if (total == 0) {
        free(all);
        return pm_cli_fail("bench: --far gave no frames");
    }
    /* Evenly spaced frames: every part of every held-out clip is represented. */
    int count = (int)PM_CLI_MIN((size_t)max_queries, total);
    qs->rows = malloc((size_t)count * card * sizeof(float));
    if (!qs->rows) {
        free(all);
        return pm_cli_fail("bench: out of memory");
    }
    for (int i = 0; i < count; i++) {
        size_t f = (size_t)((double)i * (double)total / count);
        memcpy(qs->rows + (size_t)i * card, all + f * card, (size_t)card * sizeof(float));
    }
    qs->count = count;
    qs->name = "far";
    free(all);
    return 0;
}
