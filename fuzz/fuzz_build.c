/* libFuzzer target for the whole offline path: a BVH that reads becomes a database, with settings
 * drawn from the input's hash (rate, mirroring, schema, leaf sizes, trimming, exclusions, the
 * search modes kept). The build either fails with a message and no database, or gives one that
 * verifies, has the same bytes on one and two threads, loads back to the same bytes, refuses the
 * modes it was built without and answers its own poses' features in the exact modes it keeps
 * with brute force's pose and cost. The clip's size is capped so
 * that each input stays a few milliseconds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "posematch/posematch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t hash_bytes(const uint8_t *data, size_t size) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 0x100000001b3ull;
    return h;
}

/* Past and future root positions and directions: needs no named joint, so every skeleton
 * reaches the later stages. */
static void trajectory_schema(pm_schema *s) {
    pm_schema_init(s);
    pm_channel_def t = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
    t.sample_count = 2;
    t.samples[0].offset = -0.2f;
    t.samples[0].flags = PM_TRAJ_POSITION_XY | PM_TRAJ_FACING_DIRECTION_XY;
    t.samples[1].offset = 0.3f;
    t.samples[1].flags = PM_TRAJ_POSITION_XY | PM_TRAJ_VELOCITY_XY;
    (void)pm_schema_add(s, &t, NULL);
}

static pm_database *build(const pm_database_def *def, const pm_asset_def *asset, int threads) {
    pm_database_def d = *def;
    d.threads = threads;
    pm_database *db = (pm_database *)&d; /* must come back NULL on failure */
    pm_error err;
    memset(&err, 0, sizeof err);
    pm_result r = pm_database_build(&db, &d, asset, 1, &err);
    if (r != PM_OK) {
        if (db != NULL || err.code != r || err.message[0] == '\0') abort();
        return NULL;
    }
    if (!db) abort();
    return db;
}

static void check_search(const pm_database *db) {
    pm_database_info info;
    pm_database_get_info(&info, db);
    pm_search_def def = pm_default_search_def();
    size_t ss = pm_search_scratch_size(db, &def);
    void *scratch = aligned_alloc(64, (ss + 63) / 64 * 64);
    float *q = (float *)calloc((size_t)info.cardinality, sizeof(float));
    if (!scratch || !q) abort();
    const int probes[3] = {0, info.poses / 2, info.poses - 1};
    for (int k = 0; k < 3; k++) {
        if (pm_database_pose_features(q, db, probes[k], NULL) != PM_OK) abort();
        pm_search_result r[4];
        for (int m = 0; m < 4; m++) {
            def.mode = (pm_search_mode)m;
            /* A mode the database was built without is refused; the others answer. */
            const pm_result want = info.search_modes & PM_SEARCH_MODE_BIT(m) ? PM_OK : PM_ERR_INVALID_ARGUMENT;
            if (pm_search(&r[m], db, q, &def, scratch, ss, NULL) != want) abort();
        }
        const pm_search_result *bf = &r[PM_SEARCH_BRUTEFORCE];
        if (!bf->found) abort(); /* a database has a searchable pose */
        static const pm_search_mode exact_modes[] = {PM_SEARCH_EXACT, PM_SEARCH_VPTREE};
        for (int e = 0; e < 2; e++) {
            const pm_search_mode m = exact_modes[e];
            if ((info.search_modes & PM_SEARCH_MODE_BIT(m)) && (r[m].pose != bf->pose || r[m].cost != bf->cost)) abort();
        }
    }
    free(q);
    free(scratch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pm_clip clip;
    if (pm_bvh_read_memory(&clip, (const char *)data, size, "fuzz.bvh", NULL, NULL) != PM_OK) return 0;
    if (clip.frame_count > 400 || clip.skeleton.joint_count > 80 || pm_clip_duration(&clip) > 60.0f) {
        pm_clip_destroy(&clip);
        return 0;
    }
    const uint64_t h = hash_bytes(data, size);
    static const float rates[] = {5.0f, 12.0f, 30.0f, 60.0f, 119.88f};
    static const char *const presets[] = {NULL, "holden27", "ue-locomotion"};
    pm_schema schema;
    const char *preset = presets[(h >> 3) % 3];
    if (preset) {
        if (pm_schema_preset(&schema, preset, NULL) != PM_OK) abort();
    } else {
        trajectory_schema(&schema);
    }
    pm_database_def def = pm_default_database_def();
    def.schema = &schema;
    def.fps = rates[h % 5];
    def.mirror = (int)(h >> 5 & 1);
    def.trim_rest_first_frame = (int)(h >> 6 & 1);
    def.exact_leaf_size = (int)(h >> 7 & 1) ? 8 : 128;
    def.kdtree_leaf_size = (int)(h >> 8 & 1) ? 1 : 16;
    def.exclude_end = (h >> 9 & 1) ? 0.0f : 0.3f;
    def.pca_components = 1 + (int)(h >> 10 & 3);
    /* Some builds leave modes out (two in eight keep every one). */
    const unsigned leave = (unsigned)(h >> 13 & 7);
    if (leave && leave != 7)
        def.search_modes = PM_SEARCH_MODE_BIT(PM_SEARCH_BRUTEFORCE) | (leave & 1 ? PM_SEARCH_MODE_BIT(PM_SEARCH_EXACT) : 0) |
                           (leave & 2 ? PM_SEARCH_MODE_BIT(PM_SEARCH_PCAKDTREE) : 0) |
                           (leave & 4 ? PM_SEARCH_MODE_BIT(PM_SEARCH_VPTREE) : 0);
    pm_asset_def asset = pm_default_asset_def(&clip);
    asset.looping = (int)(h >> 12 & 1);
    pm_database *one = build(&def, &asset, 1);
    pm_database *two = build(&def, &asset, 2);
    if (!one != !two) abort(); /* the thread count never decides success */
    if (one) {
        size_t n1, n2;
        const void *b1 = pm_database_bytes(one, &n1), *b2 = pm_database_bytes(two, &n2);
        if (n1 != n2 || memcmp(b1, b2, n1) != 0) abort();
        if (pm_database_verify(one, NULL) != PM_OK) abort();
        pm_database *back = NULL;
        if (pm_database_load_memory(&back, b1, n1, 0, NULL, NULL) != PM_OK) abort();
        size_t n3;
        const void *b3 = pm_database_bytes(back, &n3);
        if (n3 != n1 || memcmp(b3, b1, n1) != 0) abort();
        check_search(back);
        pm_database_destroy(back);
    }
    pm_database_destroy(one);
    pm_database_destroy(two);
    pm_clip_destroy(&clip);
    return 0;
}
