/* Integration on the real clips: databases over several skeletons, every exact mode against
 * brute force on noisy and far queries (with and without dynamic weights), determinism across
 * thread counts, queries built from a clip, and the asset order and mirrored clips a player of
 * results relies on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_internal.h"
#include "support.h"

static const char *const clip_paths[] = {
    "lafan1/walk1_subject1_trim.bvh",
    "bandai-namco/dataset-2/dataset-2_walk-turn-left_normal_001.bvh",
    "bandai-namco/dataset-2/dataset-2_run_normal_003.bvh",
    "bandai-namco/dataset-1/dataset-1_walk-back_normal_001.bvh",
    "cmu/02_01_daz.bvh",
    "reactidle/003_genuine.bvh",
};
#define NCLIPS (sizeof clip_paths / sizeof clip_paths[0])

static pm_clip clips[NCLIPS];
static pm_asset_def assets[NCLIPS];
static int nclips;
static pm_clip far_clip;

static int setup(void **state) {
    (void)state;
    /* Under the sanitizers everything is ~10x slower: fewer clips keep the run short. */
    nclips = getenv("PM_SANITIZED") ? 3 : (int)NCLIPS;
    for (int i = 0; i < nclips; i++) {
        pm_error err;
        if (pm_bvh_read_file(&clips[i], pm_test_mocap_path(clip_paths[i]), NULL, &err) != PM_OK)
            fail_msg("%s", err.message);
        assets[i] = pm_default_asset_def(&clips[i]);
    }
    pm_error err;
    if (pm_bvh_read_file(&far_clip, pm_test_mocap_path("two-person/cmu-18_01-19_01-walk-shake-hands/18_01.bvh"), NULL,
                         &err) != PM_OK)
        fail_msg("%s", err.message);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    for (int i = 0; i < nclips; i++) pm_clip_destroy(&clips[i]);
    pm_clip_destroy(&far_clip);
    return 0;
}

static pm_database *build(const char *schema, int threads, int mirror) {
    pm_database_def def = pm_default_database_def();
    pm_schema schema_storage;
    PM_ASSERT_OK(pm_schema_preset(&schema_storage, schema, NULL));
    def.schema = &schema_storage;
    def.fps = 30.0f;
    def.mirror = mirror;
    def.threads = threads;
    pm_database *db = NULL;
    pm_error err;
    if (pm_database_build(&db, &def, assets, nclips, &err) != PM_OK) fail_msg("build: %s", err.message);
    return db;
}

static void check_exact(pm_database *db, const float *queries, int count, int card, const char *what) {
    pm_search_def bf = pm_default_search_def(), ex = bf, vp = bf, kd = bf;
    bf.mode = PM_SEARCH_BRUTEFORCE;
    vp.mode = PM_SEARCH_VPTREE;
    kd.mode = PM_SEARCH_PCAKDTREE;
    size_t ss = pm_search_scratch_size(db, &bf);
    void *scratch = aligned_alloc(64, (ss + 63) / 64 * 64);
    float *dyn = malloc((size_t)card * sizeof(float));
    const float *w = pm_database_weights_sqrt(db);
    pm_test_rng rng = {11};
    for (int d = 0; d < card; d++) dyn[d] = w[d] * w[d] * powf(4.0f, 2.0f * pm_test_rng_float(&rng) - 1.0f);
    for (int pass = 0; pass < 2; pass++) {
        bf.dynamic_weights = ex.dynamic_weights = vp.dynamic_weights = pass ? dyn : NULL;
        for (int i = 0; i < count; i++) {
            const float *q = queries + (size_t)i * card;
            pm_search_result rb, re, rv, rk;
            /* The per-channel breakdown (channels of several dimensions: positions, velocities,
             * trajectories) adds up to the dissimilarity, under either weights. */
            float breakdown[PM_MAX_CHANNELS];
            bf.out_breakdown = breakdown;
            PM_ASSERT_OK(pm_search(&rb, db, q, &bf, scratch, ss, NULL));
            bf.out_breakdown = NULL;
            double sum = 0.0;
            for (int c = 0; c < db->channel_count; c++) sum += breakdown[c];
            if (!(fabs(sum - rb.dissimilarity) <= 1e-4 * (1.0 + rb.dissimilarity)))
                fail_msg("%s query %d: breakdown sums to %.9g, dissimilarity %.9g", what, i, sum, (double)rb.dissimilarity);
            PM_ASSERT_OK(pm_search(&re, db, q, &ex, scratch, ss, NULL));
            /* The baseline walk (what CPUs without AVX2 run) does the same work to the bit. */
            pm_search_result r0;
            PM_ASSERT_OK(pm_search_kernel(&r0, db, q, &ex, scratch, ss, PM_SEARCH_KERNEL_BASELINE, NULL));
            if (memcmp(&r0, &re, sizeof r0) != 0)
                fail_msg("%s query %d: baseline walk %d costs, %d nodes vs %d, %d", what, i, r0.candidates, r0.nodes,
                         re.candidates, re.nodes);
            PM_ASSERT_OK(pm_search(&rv, db, q, &vp, scratch, ss, NULL));
            if (re.pose != rb.pose || re.cost != rb.cost)
                fail_msg("%s%s query %d: exact pose %d (%.9g) vs brute force %d (%.9g)", what, pass ? "+dynamic" : "", i,
                         re.pose, (double)re.cost, rb.pose, (double)rb.cost);
            if (rv.pose != rb.pose || rv.cost != rb.cost)
                fail_msg("%s%s query %d: vptree pose %d vs brute force %d", what, pass ? "+dynamic" : "", i, rv.pose, rb.pose);
            if (!pass) {
                PM_ASSERT_OK(pm_search(&rk, db, q, &kd, scratch, ss, NULL));
                assert_true(rk.cost >= rb.cost);
            }
        }
    }
    free(dyn);
    free(scratch);
}

static void run_schema(const char *schema) {
    pm_database *db = build(schema, 2, 1);
    pm_database_info info;
    pm_database_get_info(&info, db);
    assert_int_equal(info.assets, 2 * nclips);
    const int card = info.cardinality;
    /* Noisy rows. */
    const int n = getenv("PM_SANITIZED") ? 60 : 300;
    float *q = malloc((size_t)n * card * sizeof(float));
    const float *scale = pm_database_scales(db);
    pm_test_rng rng = {3};
    for (int i = 0; i < n; i++) {
        int p = (int)(pm_test_rng_u32(&rng) % (uint32_t)info.poses);
        PM_ASSERT_OK(pm_database_pose_features(q + (size_t)i * card, db, p, NULL));
        for (int d = 0; d < card; d++) q[(size_t)i * card + d] += 0.3f * scale[d] * pm_test_rng_normal(&rng);
    }
    check_exact(db, q, n, card, schema);
    /* Far: frames of a clip from another capture, another skeleton. */
    float *far = NULL;
    int nf = 0;
    PM_ASSERT_OK(pm_database_clip_queries(&far, &nf, db, &far_clip, NULL));
    assert_true(nf > 50);
    int stride = getenv("PM_SANITIZED") ? 20 : 3;
    int m = 0;
    for (int f = 0; f < nf; f += stride) memmove(far + (size_t)m++ * card, far + (size_t)f * card, (size_t)card * sizeof(float));
    check_exact(db, far, m, card, "far");
    pm_free_buffer(far, NULL);
    free(q);
    pm_database_destroy(db);
}

static void test_holden27(void **state) {
    (void)state;
    run_schema("holden27");
}

static void test_ue_locomotion(void **state) {
    (void)state;
    run_schema("ue-locomotion");
}

static void test_determinism(void **state) {
    (void)state;
    pm_database *a = build("ue-locomotion", 1, 1), *b = build("ue-locomotion", 2, 1);
    pm_test_assert_same_database(a, b);
    pm_database_destroy(a);
    pm_database_destroy(b);
}

static void test_a_pose_finds_itself(void **state) {
    (void)state;
    pm_database *db = build("holden27", 2, 0);
    /* Frame 600 of the LAFAN clip, rebuilt from the clip: the database's own pose wins. */
    float *rows = NULL;
    int n = 0;
    PM_ASSERT_OK(pm_database_clip_queries(&rows, &n, db, &clips[0], NULL));
    pm_search_def def = pm_default_search_def();
    size_t ss = pm_search_scratch_size(db, &def);
    void *scratch = aligned_alloc(64, (ss + 63) / 64 * 64);
    pm_search_result r;
    PM_ASSERT_OK(pm_search(&r, db, rows + (size_t)600 * 27, &def, scratch, ss, NULL));
    assert_int_equal(r.asset, 0);
    assert_int_equal(r.frame, 600);
    assert_true(r.cost < 1e-6f);
    free(scratch);
    pm_free_buffer(rows, NULL);
    pm_database_destroy(db);
}

/* A def without a schema builds the ue-locomotion preset, byte for byte as naming it does, and
 * the preset it resolves is freed with the def's allocator whether the build succeeds or not. */
static void test_null_schema_is_the_preset(void **state) {
    (void)state;
    pm_test_allocator c = {0, 0, -1, 0, 0};
    pm_allocator al = pm_test_allocator_hooks(&c);
    pm_database_def def = pm_default_database_def();
    assert_null(def.schema);
    def.allocator = &al;
    def.threads = 2;
    pm_database *db = NULL, *named = NULL;
    pm_error err;
    if (pm_database_build(&db, &def, assets, 1, &err) != PM_OK) fail_msg("build: %s", err.message);
    const pm_database_def *settings = pm_database_settings(db);
    assert_ptr_equal(settings->schema, pm_database_schema(db));
    assert_string_equal(settings->schema->name, "ue-locomotion");
    pm_schema preset;
    PM_ASSERT_OK(pm_schema_preset(&preset, "ue-locomotion", NULL));
    pm_database_def with = def;
    with.schema = &preset;
    with.allocator = NULL;
    if (pm_database_build(&named, &with, assets, 1, &err) != PM_OK) fail_msg("build: %s", err.message);
    pm_test_assert_same_database(db, named);
    char key[33];
    PM_ASSERT_OK(pm_database_compute_key(key, &def, assets, 1, NULL));
    pm_database_info info;
    pm_database_get_info(&info, db);
    assert_string_equal(key, info.key);
    /* A build from the settings of a database reads that database's own schema. */
    pm_database_def again = *settings;
    pm_database *rebuilt = NULL;
    if (pm_database_build(&rebuilt, &again, assets, 1, &err) != PM_OK) fail_msg("rebuild: %s", err.message);
    pm_test_assert_same_database(db, rebuilt);
    pm_database_destroy(rebuilt);
    pm_database_destroy(named);
    pm_database_destroy(db);
    assert_true(c.allocs > 1);
    assert_int_equal(c.allocs, c.frees);
    /* Refused after the preset was resolved, and out of memory for the preset itself. */
    c = (pm_test_allocator){0, 0, -1, 0, 0};
    def.fps = 0.0f;
    assert_int_equal(pm_database_build(&db, &def, assets, 1, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_database_compute_key(key, &def, assets, 1, NULL), PM_ERR_INVALID_ARGUMENT);
    assert_true(c.allocs == 2 && c.frees == 2);
    def.fps = 30.0f;
    c = (pm_test_allocator){0, 0, 0, 0, 0}; /* the first allocation fails */
    assert_int_equal(pm_database_build(&db, &def, assets, 1, &err), PM_ERR_OUT_OF_MEMORY);
    assert_null(db);
    c = (pm_test_allocator){0, 0, 0, 0, 0}; /* the first allocation fails */
    assert_int_equal(pm_database_compute_key(key, &def, assets, 1, NULL), PM_ERR_OUT_OF_MEMORY);
    assert_int_equal(c.frees, 0);
}

/* CMU 01_01 (it opens on a T-pose) and a holden27 database def at 60 fps over `storage`. */
static pm_database_def read_01_01_holden27(pm_clip *c, pm_schema *storage) {
    pm_error err;
    if (pm_bvh_read_file(c, pm_test_mocap_path("cmu/01_01.bvh"), NULL, &err) != PM_OK) fail_msg("%s", err.message);
    pm_database_def def = pm_default_database_def();
    PM_ASSERT_OK(pm_schema_preset(storage, "holden27", NULL));
    def.schema = storage;
    def.fps = 60.0f;
    return def;
}

/* CMU 01_01 opens on a T-pose the database drops: its frames map to rows past that lead-in,
 * and a result's time plus the lead-in is the clip's own time. */
static void test_lead_in_frames(void **state) {
    (void)state;
    pm_clip c;
    pm_error err;
    pm_schema schema_storage;
    pm_database_def def = read_01_01_holden27(&c, &schema_storage);
    pm_asset_def a = pm_default_asset_def(&c);
    pm_database *db = NULL;
    if (pm_database_build(&db, &def, &a, 1, &err) != PM_OK) fail_msg("build: %s", err.message);
    float lead = 0.0f;
    PM_ASSERT_OK(pm_database_clip_lead_in(&lead, db, &c, NULL));
    assert_true(lead == c.frame_time);
    int row = -1, n = 0;
    assert_int_equal(pm_database_clip_frame_row(&row, db, &c, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "lead-in"));
    PM_ASSERT_OK(pm_database_clip_frame_row(&row, db, &c, 1, NULL));
    assert_int_equal(row, 0);
    float *rows = NULL;
    PM_ASSERT_OK(pm_database_clip_queries(&rows, &n, db, &c, NULL));
    PM_ASSERT_OK(pm_database_clip_frame_row(&row, db, &c, c.frame_count - 1, NULL));
    assert_int_equal(row, n - 1);
    PM_ASSERT_OK(pm_database_clip_frame_row(&row, db, &c, 201, NULL));
    assert_int_equal(row, 100);
    pm_search_def sd = pm_default_search_def();
    size_t ss = pm_search_scratch_size(db, &sd);
    void *scratch = aligned_alloc(64, (ss + 63) / 64 * 64);
    pm_search_result r;
    PM_ASSERT_OK(pm_search(&r, db, rows + (size_t)row * 27, &sd, scratch, ss, NULL));
    assert_true(r.cost < 1e-6f);
    assert_true(fabsf(r.time + lead - 201 * c.frame_time) < 1e-4f);
    free(scratch);
    pm_free_buffer(rows, NULL);
    pm_database_destroy(db);
    /* Kept (trim_rest_first_frame 0): nothing dropped, frame 0 is row 0 at 30 fps too. */
    def.trim_rest_first_frame = 0;
    def.fps = 30.0f;
    if (pm_database_build(&db, &def, &a, 1, &err) != PM_OK) fail_msg("build: %s", err.message);
    PM_ASSERT_OK(pm_database_clip_lead_in(&lead, db, &c, NULL));
    assert_true(lead == 0.0f);
    PM_ASSERT_OK(pm_database_clip_frame_row(&row, db, &c, 0, NULL));
    assert_int_equal(row, 0);
    PM_ASSERT_OK(pm_database_clip_frame_row(&row, db, &c, 201, NULL));
    assert_int_equal(row, 50); /* 201 / 120 s at 30 fps: 50.25 */
    pm_database_destroy(db);
    pm_clip_destroy(&c);
}

/* Ranges are given in the clip's own time: CMU 01_01's T-pose lead-in (1/120 s) is dropped, so
 * at 60 fps [2, 3) s holds the rows at 1/120 + row / 60 s from 2 s on, and a plain search never
 * returns a row of an excluded range, even for a query made from that very row. */
static void test_ranges_in_clip_time(void **state) {
    (void)state;
    pm_clip c;
    pm_error err;
    pm_schema schema_storage;
    pm_database_def def = read_01_01_holden27(&c, &schema_storage);
    const pm_asset_range ranges[] = {{2.0f, 3.0f, 0.5f, 0}, {4.0f, 5.0f, 0.0f, 1}};
    pm_asset_def a = pm_default_asset_def(&c);
    a.ranges = ranges;
    a.range_count = 2;
    pm_database *db = NULL;
    if (pm_database_build(&db, &def, &a, 1, &err) != PM_OK) fail_msg("build: %s", err.message);
    float lead = 0.0f;
    PM_ASSERT_OK(pm_database_clip_lead_in(&lead, db, &c, NULL));
    assert_true(lead == c.frame_time);
    for (int row = 0; row < 320; row++) {
        pm_pose_info p;
        PM_ASSERT_OK(pm_database_pose(&p, db, row, NULL));
        double t = lead + row / 60.0; /* rows 120-179 and 240-299 */
        assert_true(p.cost_addend == (t >= 2.0 && t < 3.0 ? 0.5f : 0.0f));
        assert_int_equal(p.block_transition, t >= 4.0 && t < 5.0);
    }
    float *rows = NULL;
    int n = 0;
    PM_ASSERT_OK(pm_database_clip_queries(&rows, &n, db, &c, NULL));
    pm_search_def sd = pm_default_search_def();
    size_t ss = pm_search_scratch_size(db, &sd);
    void *scratch = aligned_alloc(64, (ss + 63) / 64 * 64);
    for (int row = 100; row < 320; row += 7) {
        pm_search_result r[2];
        for (int m = 0; m < 2; m++) {
            sd.mode = m ? PM_SEARCH_EXACT : PM_SEARCH_BRUTEFORCE;
            PM_ASSERT_OK(pm_search(&r[m], db, rows + (size_t)row * 27, &sd, scratch, ss, NULL));
        }
        assert_int_equal(r[1].pose, r[0].pose);
        assert_true(r[1].cost == r[0].cost);
        double t = lead + r[0].time;
        assert_false(t >= 4.0 - 1e-4 && t < 5.0 - 1e-4);
        pm_pose_info p;
        PM_ASSERT_OK(pm_database_pose(&p, db, r[0].pose, NULL));
        assert_true(r[0].cost_addend == p.cost_addend);
    }
    free(scratch);
    pm_free_buffer(rows, NULL);
    pm_database_destroy(db);
    pm_clip_destroy(&c);
}

/* The n query rows a clip gives (pm_database_clip_queries) are the features the database holds for
 * the asset's poses from first_pose on, within the rounding of normalisation. */
static void assert_rows_are_the_asset(const pm_database *db, const float *rows, int n, int first_pose,
                                      const char *what) {
    const int card = pm_schema_cardinality(pm_database_schema(db));
    const float *scale = pm_database_scales(db);
    float x[64];
    assert_true(card <= 64);
    for (int r = 0; r < n; r++) {
        PM_ASSERT_OK(pm_database_pose_features(x, db, first_pose + r, NULL));
        for (int d = 0; d < card; d++)
            if (!(fabsf(x[d] - rows[(size_t)r * card + d]) <= 1e-4f * scale[d]))
                fail_msg("row %d dimension %d: %s gives %g, the asset holds %g", r, d, what,
                         (double)rows[(size_t)r * card + d], (double)x[d]);
    }
}

/* What database.h says about playing results: assets in def order with each mirrored copy right
 * after its source, and a copy's poses are its source clip mirrored with the database's axis
 * (the lead-in of CMU 01_01 included: the rows skip it); after a load, pm_database_asset_clip
 * makes every asset from its def's clip with what the file records. */
static void test_playing_mirrored_results(void **state) {
    (void)state;
    const char *paths[3] = {"cmu/01_01.bvh", "cmu/02_01_daz.bvh", "bandai-namco/dataset-2/dataset-2_run_normal_003.bvh"};
    pm_clip c[3];
    pm_asset_def a[3];
    pm_error err;
    for (int i = 0; i < 3; i++) {
        if (pm_bvh_read_file(&c[i], pm_test_mocap_path(paths[i]), NULL, &err) != PM_OK) fail_msg("%s", err.message);
        a[i] = pm_default_asset_def(&c[i]);
    }
    a[1].mirror = 0; /* overrides the def's mirroring */
    pm_database_def def = pm_default_database_def();
    def.mirror = 1;
    pm_database *db = NULL;
    if (pm_database_build(&db, &def, a, 3, &err) != PM_OK) fail_msg("build: %s", err.message);
    const char *names[5] = {"01_01", "01_01.mirror", "02_01_daz", "dataset-2_run_normal_003",
                            "dataset-2_run_normal_003.mirror"};
    const int sources[5] = {-1, 0, -1, -1, 3};
    assert_int_equal(pm_database_asset_count(db), 5);
    for (int i = 0; i < 5; i++) {
        pm_asset_info info;
        PM_ASSERT_OK(pm_database_asset(&info, db, i, NULL));
        assert_string_equal(info.name, names[i]);
        assert_int_equal(info.source_asset, sources[i]);
    }
    float lead = 0.0f;
    PM_ASSERT_OK(pm_database_clip_lead_in(&lead, db, &c[0], NULL));
    assert_true(lead > 0.0f);
    pm_clip mirrored;
    PM_ASSERT_OK(pm_clip_mirror(&mirrored, &c[0], NULL, pm_database_settings(db)->mirror_axis, NULL));
    float *rows = NULL;
    int n = 0;
    PM_ASSERT_OK(pm_database_clip_queries(&rows, &n, db, &mirrored, NULL));
    pm_asset_info copy;
    PM_ASSERT_OK(pm_database_asset(&copy, db, 1, NULL));
    assert_int_equal(n, copy.pose_count);
    assert_true(n > 0); /* rows to compare below */
    assert_rows_are_the_asset(db, rows, n, copy.first_pose, "the mirrored clip");
    pm_free_buffer(rows, NULL);
    pm_clip_destroy(&mirrored);
    /* What the file records does the same after a save and load, from the clips alone: each asset
     * made into a clip from its def's clip holds the asset's rows (the copies mirrored with the
     * recorded maps: the Bandai rig's and the CMU rig's found from their names). */
    const char *path = pm_test_tmp_path("mirrored_results.pmdb");
    PM_ASSERT_OK(pm_database_save(db, path, NULL));
    pm_database_destroy(db);
    PM_ASSERT_OK(pm_database_load(&db, path, NULL, NULL));
    const int clip_of[5] = {0, 0, 1, 2, 2};
    for (int i = 0; i < 5; i++) {
        pm_asset_info info;
        PM_ASSERT_OK(pm_database_asset(&info, db, i, NULL));
        assert_int_equal(info.joint_count, c[clip_of[i]].skeleton.joint_count);
        assert_true((info.mirror_map != NULL) == (sources[i] >= 0));
        pm_clip played;
        if (pm_database_asset_clip(&played, db, i, &c[clip_of[i]], &err) != PM_OK) fail_msg("%s", err.message);
        assert_int_equal(played.frame_count, info.pose_count);
        PM_ASSERT_OK(pm_database_clip_queries(&rows, &n, db, &played, NULL));
        assert_int_equal(n, info.pose_count);
        assert_rows_are_the_asset(db, rows, n, info.first_pose, names[i]);
        pm_free_buffer(rows, NULL);
        pm_clip_destroy(&played);
    }
    assert_int_equal(pm_database_asset_check_clip(db, 4, &c[0], &err), PM_ERR_MISMATCH);
    assert_non_null(strstr(err.message, "asset 'dataset-2_run_normal_003.mirror' was made from a clip of"));
    pm_database_destroy(db);
    for (int i = 0; i < 3; i++) pm_clip_destroy(&c[i]);
}

/* database.h on looping assets: an asset built with a looping override from a clip that opens on
 * a T-pose (CMU 02_01_daz) loops without that frame. The clip played as database.h says - the
 * lead-in trimmed off, looping set - holds the asset's poses row for row; the clip played as it
 * is, looping, swings through the T-pose where the asset wraps. */
static void test_playing_looping_results(void **state) {
    (void)state;
    pm_clip c;
    pm_error err;
    if (pm_bvh_read_file(&c, pm_test_mocap_path("cmu/02_01_daz.bvh"), NULL, &err) != PM_OK) fail_msg("%s", err.message);
    assert_int_equal(c.looping, 0);
    pm_database_def def = pm_default_database_def();
    def.fps = 120.0f; /* the clip's rate: rows are its frames */
    pm_asset_def a = pm_default_asset_def(&c);
    a.looping = 1;
    pm_database *db = NULL;
    if (pm_database_build(&db, &def, &a, 1, &err) != PM_OK) fail_msg("build: %s", err.message);
    pm_asset_info info;
    PM_ASSERT_OK(pm_database_asset(&info, db, 0, NULL));
    assert_int_equal(info.looping, 1);
    float lead = 0.0f;
    PM_ASSERT_OK(pm_database_clip_lead_in(&lead, db, &c, NULL));
    assert_true(lead == c.frame_time);
    assert_int_equal(info.pose_count, c.frame_count - 1);
    pm_clip played;
    PM_ASSERT_OK(pm_clip_trim(&played, &c, 1, c.frame_count - 1, NULL));
    played.looping = info.looping;
    float *rows = NULL;
    int n = 0;
    PM_ASSERT_OK(pm_database_clip_queries(&rows, &n, db, &played, NULL));
    assert_int_equal(n, info.pose_count);
    assert_rows_are_the_asset(db, rows, n, info.first_pose, "the played clip");
    pm_free_buffer(rows, NULL);
    /* Just before the asset wraps: the trimmed loop is nearly back at its first frame, the
     * untrimmed clip nearly at the T-pose. */
    const int J = c.skeleton.joint_count;
    pm_quat *q_played = malloc(sizeof(pm_quat) * (size_t)J), *q_raw = malloc(sizeof(pm_quat) * (size_t)J);
    pm_vec3 *t = malloc(sizeof(pm_vec3) * (size_t)J);
    const float time = ((float)info.pose_count - 0.1f) / def.fps;
    pm_clip raw;
    PM_ASSERT_OK(pm_clip_copy(&raw, &c, NULL, NULL));
    raw.looping = 1;
    PM_ASSERT_OK(pm_clip_sample(q_played, t, &played, time, NULL));
    PM_ASSERT_OK(pm_clip_sample(q_raw, t, &raw, time + lead, NULL));
    float worst = 1.0f;
    for (int j = 0; j < J; j++) worst = fminf(worst, fabsf(pm_quat_dot(q_played[j], q_raw[j])));
    if (!(worst < 0.99f)) /* some joint more than 16 degrees off */
        fail_msg("the untrimmed loop is within %g degrees of the asset", (double)(2.0f * acosf(worst) * 57.29578f));
    free(q_played);
    free(q_raw);
    free(t);
    pm_clip_destroy(&raw);
    pm_clip_destroy(&played);
    pm_database_destroy(db);
    pm_clip_destroy(&c);
}

int main(void) {
    pm_test_require_mocap("test_search_mocap");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holden27),
        cmocka_unit_test(test_ue_locomotion),
        cmocka_unit_test(test_lead_in_frames),
        cmocka_unit_test(test_ranges_in_clip_time),
        cmocka_unit_test(test_null_schema_is_the_preset),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_a_pose_finds_itself),
        cmocka_unit_test(test_playing_mirrored_results),
        cmocka_unit_test(test_playing_looping_results),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
