/* Database builder: counts, de-duplication, round trips, resampled pose counts, clip frames to
 * rows, pose vectors (determinism and build keys: test_database_key.c; argument and field errors:
 * test_database_errors.c; loading, corrupted files and verification: test_database_load.c; ranges,
 * exclusions and the pose at a time: test_database_ranges.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "database_support.h"

static void test_counts_and_round_trip(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 120);
    f.assets[1].cost_addend = -0.25f;
    f.assets[2].exclude_end = 0.5f;
    pm_database *db = build(&f, 1);
    pm_database_info in;
    pm_database_get_info(&in, db);
    int frames = 120 + 127 + 134 + 141;
    assert_int_equal(in.poses, frames);
    assert_int_equal(in.assets, 4);
    assert_int_equal(in.cardinality, DIMS);
    assert_int_equal(in.unique_vectors, frames);
    /* No future samples: only the excluded ends are blocked, 0.3 s (9 poses) by default and
     * 0.5 s (15 poses) for asset 2. */
    assert_int_equal(in.block_transition_poses, 9 * 3 + 15);
    assert_int_equal(in.excluded_poses, 9 * 3 + 15);
    assert_int_equal(in.searchable_poses, frames - 42);
    assert_true(in.unique_pca_vectors <= in.searchable_poses);
    assert_true(in.pca_explained_variance > 0.0f && in.pca_explained_variance <= 1.0f);
    assert_float_equal(pm_database_explained_variance(db, DIMS), 1.0f, 1e-5);
    pm_asset_info a;
    PM_ASSERT_OK(pm_database_asset(&a, db, 1, NULL));
    assert_int_equal(a.first_pose, 120);
    assert_int_equal(a.pose_count, 127);
    assert_float_equal(a.cost_addend, -0.25f, 1e-6);
    pm_pose_info p;
    PM_ASSERT_OK(pm_database_pose(&p, db, 130, NULL));
    assert_int_equal(p.asset, 1);
    assert_int_equal(p.frame, 10);
    assert_float_equal(p.cost_addend, -0.25f, 1e-6);
    assert_int_equal(p.block_transition, 0);
    PM_ASSERT_OK(pm_database_pose(&p, db, 119, NULL));
    assert_int_equal(p.block_transition, 1);
    /* Raw features survive normalisation. */
    float row[DIMS];
    PM_ASSERT_OK(pm_database_pose_features(row, db, 130, NULL));
    const pm_curve *c0 = pm_clip_find_curve(&f.clips[1], "c0");
    assert_float_equal(row[0], c0->values[10], 1e-4 * (1.0f + fabsf(c0->values[10])));
    /* Save, load: the same bytes. */
    const char *path = pm_test_tmp_path("round.pmdb");
    PM_ASSERT_OK(pm_database_save(db, path, NULL));
    pm_database *back = NULL;
    PM_ASSERT_OK(pm_database_load(&back, path, NULL, NULL));
    pm_test_assert_same_database(db, back);
    pm_database_destroy(back);
    pm_database_destroy(db);
    fixture_free(&f);
}

static void test_dedup(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    /* Asset 0 repeats its first 10 frames' curve values in frames 30..39. */
    for (int d = 0; d < DIMS; d++)
        for (int k = 0; k < 10; k++) f.clips[0].curves[d].values[30 + k] = f.clips[0].curves[d].values[k];
    pm_database *db = build(&f, 1);
    pm_database_info in;
    pm_database_get_info(&in, db);
    assert_int_equal(in.unique_vectors, in.poses - 10);
    pm_pose_info p0, p1;
    for (int k = 0; k < 10; k++) {
        PM_ASSERT_OK(pm_database_pose(&p0, db, k, NULL));
        PM_ASSERT_OK(pm_database_pose(&p1, db, 30 + k, NULL));
        assert_int_equal(p0.vector, p1.vector);
    }
    pm_database_destroy(db);
    fixture_free(&f);
}

/* Rows equal in every dimension but the last are different rows, however the table's probes
 * meet: asset 0 holds its first DIMS - 1 curves still and moves only the last one. */
static void test_dedup_rows_differing_at_the_end(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 400);
    for (int d = 0; d < DIMS - 1; d++)
        for (int k = 0; k < f.clips[0].frame_count; k++) f.clips[0].curves[d].values[k] = 0.25f * (float)d;
    pm_database *db = build(&f, 1);
    pm_database_info in;
    pm_database_get_info(&in, db);
    assert_int_equal(in.unique_vectors, in.poses);
    pm_database_destroy(db);
    fixture_free(&f);
}

/* PCA space: rows that differ only in a dimension of weight 0 are one point there (UE's second
 * de-duplication map), while the full space keeps them apart. */
static void test_dedup_pca_space(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    f.schema.channels[DIMS - 1].weight = 0.0f;
    for (int k = 0; k < 10; k++) {
        for (int d = 0; d < DIMS - 1; d++) f.clips[0].curves[d].values[30 + k] = f.clips[0].curves[d].values[k];
        f.clips[0].curves[DIMS - 1].values[30 + k] = f.clips[0].curves[DIMS - 1].values[k] + 1.0f;
    }
    pm_database *db = build(&f, 1);
    pm_database_info in;
    pm_database_get_info(&in, db);
    assert_int_equal(in.unique_vectors, in.poses);
    int searchable_pairs = 0;
    for (int k = 0; k < 10; k++) {
        pm_pose_info p0, p1;
        PM_ASSERT_OK(pm_database_pose(&p0, db, k, NULL));
        PM_ASSERT_OK(pm_database_pose(&p1, db, 30 + k, NULL));
        assert_int_not_equal(p0.vector, p1.vector);
        searchable_pairs += !p0.block_transition && !p1.block_transition;
    }
    assert_true(searchable_pairs > 0);
    assert_int_equal(in.unique_pca_vectors, in.searchable_poses - searchable_pairs);
    pm_database_destroy(db);
    fixture_free(&f);
}

/* Clips at 30 fps as files store it ("Frame Time: 0.0333333") built at 60 fps keep their last
 * frame: 2 (n - 1) + 1 poses each. */
static void test_resampled_pose_counts(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 120);
    for (int i = 0; i < 4; i++) f.clips[i].frame_time = 0.0333333f;
    f.def.fps = 60.0f;
    f.def.trim_rest_first_frame = 0;
    pm_database *db = build(&f, 2);
    pm_database_info in;
    pm_database_get_info(&in, db);
    int expect = 0;
    for (int i = 0; i < 4; i++) {
        pm_asset_info a;
        PM_ASSERT_OK(pm_database_asset(&a, db, i, NULL));
        assert_int_equal(a.pose_count, 2 * (f.clips[i].frame_count - 1) + 1);
        expect += a.pose_count;
    }
    assert_int_equal(in.poses, expect);
    pm_database_destroy(db);
    fixture_free(&f);
}

/* A clip frame maps to the query row at the database's rate (30 fps clips, a 60 fps database:
 * frame f is row 2f), and that row holds the features the asset stored for the pose (read back
 * from the normalised values: equal within rounding). */
static void test_clip_frame_rows(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 40);
    for (int i = 0; i < 4; i++) f.clips[i].frame_time = 1.0f / 30.0f;
    f.def.fps = 60.0f;
    pm_database *db = build(&f, 1);
    float *rows = NULL, lead = -1.0f, feat[DIMS];
    int n = 0, row = -1;
    pm_error err;
    PM_ASSERT_OK(pm_database_clip_queries(&rows, &n, db, &f.clips[2], NULL));
    PM_ASSERT_OK(pm_database_clip_lead_in(&lead, db, &f.clips[2], NULL));
    assert_true(lead == 0.0f); /* not a rest pose: nothing dropped */
    pm_asset_info a;
    PM_ASSERT_OK(pm_database_asset(&a, db, 2, NULL));
    assert_int_equal(n, a.pose_count);
    for (int fr = 0; fr < f.clips[2].frame_count; fr++) {
        PM_ASSERT_OK(pm_database_clip_frame_row(&row, db, &f.clips[2], fr, NULL));
        assert_int_equal(row, 2 * fr);
        PM_ASSERT_OK(pm_database_pose_features(feat, db, a.first_pose + row, NULL));
        for (int d = 0; d < DIMS; d++) /* stored normalised: read back within rounding */
            assert_true(fabsf(feat[d] - rows[(size_t)row * DIMS + d]) <= 1e-5f * (1.0f + fabsf(feat[d])));
    }
    assert_int_equal(pm_database_clip_frame_row(&row, db, &f.clips[2], f.clips[2].frame_count, &err),
                     PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(row, -1);
    assert_non_null(strstr(err.message, "is outside 0..53"));
    assert_int_equal(pm_database_clip_frame_row(&row, db, &f.clips[2], -1, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_database_clip_frame_row(NULL, db, &f.clips[2], 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_database_clip_lead_in(&lead, NULL, &f.clips[2], &err), PM_ERR_INVALID_ARGUMENT);
    /* A clip the validator refuses: its code, under the function's name, and no lead-in. */
    pm_clip broken = f.clips[2];
    broken.frame_time = 0.0f;
    lead = 7.0f;
    assert_int_equal(pm_database_clip_lead_in(&lead, db, &broken, &err), PM_ERR_INVALID_ARGUMENT);
    assert_true(strncmp(err.message, "pm_database_clip_lead_in: ", 26) == 0);
    assert_true(lead == 0.0f);
    pm_free_buffer(rows, NULL);
    pm_database_destroy(db);
    /* 25 fps clips (no whole ratio), one-shot and looping: the row nearest the frame's time. */
    for (int i = 0; i < 4; i++) f.clips[i].frame_time = 1.0f / 25.0f;
    for (int looping = 0; looping < 2; looping++) {
        f.clips[3].looping = looping;
        db = build(&f, 1);
        PM_ASSERT_OK(pm_database_clip_queries(&rows, &n, db, &f.clips[3], NULL));
        pm_free_buffer(rows, NULL);
        for (int fr = 0; fr < f.clips[3].frame_count; fr++) {
            PM_ASSERT_OK(pm_database_clip_frame_row(&row, db, &f.clips[3], fr, NULL));
            double t = fr / 25.0, nearest = floor(t * 60.0 + 0.5);
            assert_int_equal(row, (int)(nearest < n - 1 ? nearest : n - 1));
        }
        pm_database_destroy(db);
    }
    f.clips[3].looping = 0;
    /* 120 fps clips in a 60 fps database: frame f is row f / 2, rounded half up. */
    for (int i = 0; i < 4; i++) f.clips[i].frame_time = 1.0f / 120.0f;
    db = build(&f, 1);
    for (int fr = 0; fr < f.clips[1].frame_count; fr++) {
        PM_ASSERT_OK(pm_database_clip_frame_row(&row, db, &f.clips[1], fr, NULL));
        assert_int_equal(row, (fr + 1) / 2 < (f.clips[1].frame_count + 1) / 2 ? (fr + 1) / 2 : (f.clips[1].frame_count - 1) / 2);
    }
    pm_database_destroy(db);
    fixture_free(&f);
}

/* Searchable vectors' rows come first; block-transition poses may use rows beyond what
 * pm_database_values reports, and pm_database_pose_features reads any pose. */
static void test_pose_vectors_and_features(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    pm_database *db = build(&f, 1);
    int rows = 0, stride = 0;
    assert_non_null(pm_database_values(db, &rows, &stride));
    pm_database_info in;
    pm_database_get_info(&in, db);
    int beyond = 0;
    float row[DIMS];
    for (int p = 0; p < in.poses; p++) {
        pm_pose_info pi;
        PM_ASSERT_OK(pm_database_pose(&pi, db, p, NULL));
        if (!pi.block_transition) assert_true(pi.vector < rows);
        else if (pi.vector >= rows) beyond++;
        PM_ASSERT_OK(pm_database_pose_features(row, db, p, NULL));
    }
    assert_true(beyond > 0); /* the excluded ends have vectors of their own */
    assert_int_equal(rows + beyond, in.unique_vectors);
    pm_error err;
    assert_int_equal(pm_database_pose_features(NULL, db, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "out is NULL"));
    assert_int_equal(pm_database_pose_features(row, NULL, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "database is NULL"));
    assert_int_equal(pm_database_pose_features(row, db, in.poses, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "outside 0.."));
    pm_database_destroy(db);
    fixture_free(&f);
}

/* A schema with padding and a group builds (PS2): padding dimensions are zeros of weight 0 that
 * cost nothing, whatever a query holds there; a group's weight multiplies its children's and
 * lends them its normalisation group. Every search then agrees with a database of the same
 * channels without padding, weighted and grouped by hand. */
static void test_padding_and_group_schema(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 80);
    static pm_schema padded, plain; /* static: a schema is about 62 KB */
    pm_schema_init(&padded);
    pm_schema_init(&plain);
    pm_channel_def g = pm_default_channel_def(PM_FEATURE_GROUP);
    g.weight = 2.0f;
    strcpy(g.group, "pair");
    assert_int_equal(pm_schema_add(&padded, &g, NULL), 0);
    pm_channel_def pad = pm_default_channel_def(PM_FEATURE_PADDING);
    pad.size = 3;
    for (int d = 0; d < DIMS; d++) {
        pm_channel_def c = pm_default_channel_def(PM_FEATURE_CURVE);
        snprintf(c.curve, sizeof c.curve, "c%d", d);
        c.weight = d < 2 ? 0.5f + (float)d : 1.0f;
        pm_channel_def by_hand = c;
        if (d < 2) {
            c.parent = 0;
            by_hand.weight *= 2.0f;
            strcpy(by_hand.group, "pair");
        }
        assert_true(pm_schema_add(&padded, &c, NULL) >= 0);
        assert_true(pm_schema_add(&plain, &by_hand, NULL) >= 0);
        if (d == 1) assert_int_equal(pm_schema_add(&padded, &pad, NULL), 3);
    }
    pad.size = 1;
    assert_int_equal(pm_schema_add(&padded, &pad, NULL), 8);
    /* Padded dimension d holds plain dimension from[d] (-1: padding). */
    enum { CARD = DIMS + 4 };
    static const int from[CARD] = {0, 1, -1, -1, -1, 2, 3, 4, 5, -1};
    static const int channel[CARD] = {1, 2, 3, 3, 3, 4, 5, 6, 7, 8};
    f.def.schema = &padded;
    pm_database *db = build(&f, 2);
    f.def.schema = &plain;
    pm_database *ref = build(&f, 1);
    pm_database_info in, in_ref;
    pm_database_get_info(&in, db);
    pm_database_get_info(&in_ref, ref);
    assert_int_equal(in.cardinality, CARD);
    assert_int_equal(in.channels, 9);
    assert_int_equal(in.poses, in_ref.poses);
    assert_int_equal(in.unique_vectors, in_ref.unique_vectors);
    const float *w = pm_database_weights_sqrt(db), *sc = pm_database_scales(db), *off = pm_database_offsets(db);
    const float *w_ref = pm_database_weights_sqrt(ref), *sc_ref = pm_database_scales(ref);
    for (int d = 0; d < CARD; d++) {
        assert_int_equal(pm_database_dim_channel(db, d), channel[d]);
        if (from[d] < 0) {
            assert_true(w[d] == 0.0f && sc[d] == 1.0f && off[d] == 0.0f);
        } else {
            assert_true(w[d] == w_ref[from[d]]);
            assert_true(sc[d] == sc_ref[from[d]]); /* c0 and c1 share the group's deviation */
        }
    }
    assert_true(sc[0] == sc[1]);
    assert_float_equal(w[1], sqrtf(3.0f), 1e-6);
    assert_int_equal(pm_database_dim_channel(db, CARD), -1);
    char name[32];
    PM_ASSERT_OK(pm_database_channel_name(name, sizeof name, db, 3, NULL));
    assert_string_equal(name, "Padding");
    float row[CARD], row_ref[DIMS];
    for (int p = 0; p < in.poses; p += 7) {
        PM_ASSERT_OK(pm_database_pose_features(row, db, p, NULL));
        PM_ASSERT_OK(pm_database_pose_features(row_ref, ref, p, NULL));
        for (int d = 0; d < CARD; d++)
            if (row[d] != (from[d] < 0 ? 0.0f : row_ref[from[d]]))
                fail_msg("pose %d value %d is %g, expected %g", p, d, (double)row[d],
                         (double)(from[d] < 0 ? 0.0f : row_ref[from[d]]));
    }
    /* Searches: queries near poses and far from them, with garbage in the padding. */
    pm_search_def sd = pm_default_search_def();
    size_t ss = 0;
    for (int m = 0; m < 4; m++) {
        sd.mode = (pm_search_mode)m;
        size_t a = pm_search_scratch_size(db, &sd), b = pm_search_scratch_size(ref, &sd);
        if (a > ss) ss = a;
        if (b > ss) ss = b;
    }
    void *scratch = aligned_alloc(64, (ss + 63) / 64 * 64);
    pm_test_rng rng = {31};
    for (int i = 0; i < 60; i++) {
        float q[CARD], q_ref[DIMS];
        PM_ASSERT_OK(pm_database_pose_features(q_ref, ref, (int)(pm_test_rng_u32(&rng) % (uint32_t)in.poses), NULL));
        for (int d = 0; d < DIMS; d++) q_ref[d] += (i % 2 ? 3.0f : 0.2f) * pm_test_rng_normal(&rng);
        for (int d = 0; d < CARD; d++) q[d] = from[d] < 0 ? 1000.0f * pm_test_rng_normal(&rng) : q_ref[from[d]];
        pm_search_result bf;
        sd.mode = PM_SEARCH_BRUTEFORCE;
        PM_ASSERT_OK(pm_search(&bf, db, q, &sd, scratch, ss, NULL));
        for (int m = 0; m < 4; m++) {
            sd.mode = (pm_search_mode)m;
            pm_search_result r, r_ref;
            PM_ASSERT_OK(pm_search(&r, db, q, &sd, scratch, ss, NULL));
            PM_ASSERT_OK(pm_search(&r_ref, ref, q_ref, &sd, scratch, ss, NULL));
            assert_true(r.found && r_ref.found);
            /* (Brute force is bf itself; the approximate mode may miss it.) */
            if (sd.mode != PM_SEARCH_PCAKDTREE && sd.mode != PM_SEARCH_BRUTEFORCE && (r.pose != bf.pose || r.cost != bf.cost))
                fail_msg("query %d, %s: pose %d cost %g, brute force pose %d cost %g", i, pm_search_mode_name(sd.mode), r.pose,
                         (double)r.cost, bf.pose, (double)bf.cost);
            if (sd.mode == PM_SEARCH_PCAKDTREE) continue; /* approximate: its PCA differs */
            if (r.pose != r_ref.pose || fabsf(r.cost - r_ref.cost) > 1e-5f * (1.0f + r_ref.cost))
                fail_msg("query %d, %s: pose %d cost %.9g, without padding pose %d cost %.9g", i, pm_search_mode_name(sd.mode),
                         r.pose, (double)r.cost, r_ref.pose, (double)r_ref.cost);
        }
    }
    free(scratch);
    assert_int_equal(pm_database_asset_count(db), 4);
    assert_int_equal(pm_database_asset_count(NULL), 0);
    pm_database_destroy(ref);
    pm_database_destroy(db);
    fixture_free(&f);
}

/* Query rows are the database's or nothing: NULL arguments, and a clip the schema cannot read
 * (a curve it lacks), leave no rows behind. */
static void test_clip_queries_errors(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 40);
    pm_database *db = build(&f, 1);
    float *rows = (float *)&rows;
    int n = -1;
    pm_error err;
    assert_int_equal(pm_database_clip_queries(NULL, &n, db, &f.clips[0], &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_clip_queries: NULL argument");
    assert_int_equal(pm_database_clip_queries(&rows, NULL, db, &f.clips[0], &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_database_clip_queries(&rows, &n, NULL, &f.clips[0], &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_database_clip_queries(&rows, &n, db, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    pm_clip other;
    pm_test_random_clip(&other, 30, DIMS - 1, 77); /* no curve c5 */
    assert_int_equal(pm_database_clip_queries(&rows, &n, db, &other, &err), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "reads curve 'c5', which clip 'random77' does not have"));
    assert_null(rows);
    assert_int_equal(n, 0);
    pm_clip_destroy(&other);
    pm_database_destroy(db);
    fixture_free(&f);
}

/* PS3 on a real walk: a dimension's offset is its mean over every pose, its scale the mean of
 * the standard deviations of its normalisation group's dimensions (left and right foot named
 * "feet" together; each trajectory flag on its own), and its weight square root the root of
 * the group, channel and sample weights multiplied. */
static void test_normalisation_groups_of_a_real_clip(void **state) {
    (void)state;
    if (!pm_test_mocap_dir()) skip(); /* the rest of this binary needs no real clips */
    pm_clip clip;
    PM_ASSERT_OK(pm_bvh_read_file(&clip, pm_test_mocap_path("cmu/01_01.bvh"), NULL, NULL));
    pm_schema s;
    pm_schema_init(&s);
    pm_channel_def t = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
    t.sample_count = 2;
    t.samples[0].offset = -0.3f;
    t.samples[0].flags = PM_TRAJ_POSITION_XY;
    t.samples[0].weight = 0.5f;
    t.samples[1].offset = 0.5f;
    t.samples[1].flags = PM_TRAJ_POSITION_XY | PM_TRAJ_VELOCITY_XY;
    t.samples[1].weight = 2.0f;
    pm_schema_add(&s, &t, NULL);
    pm_channel_def g = pm_default_channel_def(PM_FEATURE_GROUP);
    g.weight = 1.5f;
    strcpy(g.group, "feet");
    const int gi = pm_schema_add(&s, &g, NULL);
    pm_channel_def foot = pm_default_channel_def(PM_FEATURE_POSITION);
    foot.parent = gi;
    strcpy(foot.bone, "@left_foot");
    pm_schema_add(&s, &foot, NULL);
    strcpy(foot.bone, "@right_foot");
    foot.weight = 2.0f;
    pm_schema_add(&s, &foot, NULL);
    pm_database_def def = pm_default_database_def();
    def.schema = &s;
    pm_asset_def asset = pm_default_asset_def(&clip);
    pm_database *db = NULL;
    PM_ASSERT_OK(pm_database_build(&db, &def, &asset, 1, NULL));
    enum { D = 12 };
    assert_int_equal(pm_schema_cardinality(&s), D);
    const int P = pm_database_pose_count(db);
    double sum[D] = {0}, sum2[D] = {0};
    float row[D];
    for (int p = 0; p < P; p++) {
        PM_ASSERT_OK(pm_database_pose_features(row, db, p, NULL));
        for (int d = 0; d < D; d++) sum[d] += row[d];
    }
    double mean[D], sd[D];
    for (int d = 0; d < D; d++) mean[d] = sum[d] / P;
    for (int p = 0; p < P; p++) {
        PM_ASSERT_OK(pm_database_pose_features(row, db, p, NULL));
        for (int d = 0; d < D; d++) sum2[d] += (row[d] - mean[d]) * (row[d] - mean[d]);
    }
    for (int d = 0; d < D; d++) sd[d] = sqrt(sum2[d] / P);
    /* Dimensions: -0.3 s PositionXY (0, 1), +0.5 s VelocityXY (2, 3) then PositionXY (4, 5),
     * left foot (6..8), right foot (9..11). Both PositionXY samples share one deviation. */
    const int groups[3][7] = {{0, 1, 4, 5, -1}, {2, 3, -1}, {6, 7, 8, 9, 10, 11, -1}};
    const float *off = pm_database_offsets(db), *sc = pm_database_scales(db), *w = pm_database_weights_sqrt(db);
    for (int d = 0; d < D; d++) assert_float_equal(off[d], mean[d], 1e-4 * (1.0 + fabs(mean[d])));
    for (int gr = 0; gr < 3; gr++) {
        double want = 0.0;
        int n = 0;
        for (; groups[gr][n] >= 0; n++) want += sd[groups[gr][n]];
        want /= n;
        assert_true(want > 1e-3);
        for (int i = 0; i < n; i++)
            if (fabs(sc[groups[gr][i]] - want) > 1e-4 * want)
                fail_msg("dimension %d: scale %g, want the group's mean deviation %g", groups[gr][i], (double)sc[groups[gr][i]], want);
    }
    const float weights[D] = {0.5f, 0.5f, 2, 2, 2, 2, 1.5f, 1.5f, 1.5f, 3, 3, 3};
    for (int d = 0; d < D; d++) assert_float_equal(w[d] * w[d], weights[d], 1e-5);
    pm_database_destroy(db);
    pm_clip_destroy(&clip);
}

/* Automatic exact components: the fewest holding 99.9% of the variance, rounded up to a
 * multiple of 4 minus one. Ten strong dimensions and ten weak ones (0.5% of the variance
 * each): 99% would stop at the strong ten (11 components), 99.9% needs about eight weak ones
 * too (19). One group, so the normalisation keeps the dimensions' proportions. */
static void test_automatic_exact_components(void **state) {
    (void)state;
    enum { D = 20 };
    pm_clip c;
    pm_test_random_clip(&c, 400, D, 9);
    pm_test_rng rng = {4242};
    for (int d = 0; d < D; d++)
        for (int fr = 0; fr < c.frame_count; fr++)
            c.curves[d].values[fr] = pm_test_rng_normal(&rng) * (d < 10 ? 1.0f : 0.0707f);
    pm_schema schema;
    pm_schema_init(&schema);
    for (int d = 0; d < D; d++) {
        pm_channel_def ch = pm_default_channel_def(PM_FEATURE_CURVE);
        snprintf(ch.curve, sizeof ch.curve, "c%d", d);
        strcpy(ch.group, "all");
        assert_true(pm_schema_add(&schema, &ch, NULL) >= 0);
    }
    pm_database_def def = pm_default_database_def();
    def.schema = &schema;
    assert_int_equal(def.exact_components, 0);
    pm_asset_def asset = pm_default_asset_def(&c);
    pm_database *db = NULL;
    pm_error err;
    if (pm_database_build(&db, &def, &asset, 1, &err) != PM_OK) fail_msg("build: %s", err.message);
    pm_database_info in;
    pm_database_get_info(&in, db);
    assert_int_equal(in.exact_components, 19);
    assert_true(in.exact_explained_variance == pm_database_explained_variance(db, 19));
    assert_true(pm_database_explained_variance(db, 11) < 0.999f);
    pm_database_destroy(db);
    /* Two strong dimensions hold it all, yet the bound keeps at least 7 components. */
    for (int d = 0; d < D; d++)
        for (int fr = 0; fr < c.frame_count; fr++)
            c.curves[d].values[fr] = pm_test_rng_normal(&rng) * (d < 2 ? 1.0f : 1e-4f);
    if (pm_database_build(&db, &def, &asset, 1, &err) != PM_OK) fail_msg("build: %s", err.message);
    pm_database_get_info(&in, db);
    assert_true(pm_database_explained_variance(db, 2) >= 0.999f);
    assert_int_equal(in.exact_components, 7);
    assert_true(in.exact_explained_variance == pm_database_explained_variance(db, 7));
    assert_true(in.exact_explained_variance >= 0.999f && in.exact_explained_variance <= 1.0f);
    pm_database_destroy(db);
    /* Five dimensions that never change: their components hold nothing, so the first 15 already
     * explain everything and the shares only grow with k. */
    for (int d = 0; d < D; d++)
        for (int fr = 0; fr < c.frame_count; fr++)
            c.curves[d].values[fr] = d < 15 ? pm_test_rng_normal(&rng) : 0.5f;
    if (pm_database_build(&db, &def, &asset, 1, &err) != PM_OK) fail_msg("build: %s", err.message);
    float last = 0.0f;
    for (int k = 1; k <= D; k++) {
        float share = pm_database_explained_variance(db, k);
        assert_true(share >= last && share <= 1.0f);
        last = share;
    }
    assert_true(pm_database_explained_variance(db, 14) < 1.0f);
    assert_true(pm_database_explained_variance(db, 15) == 1.0f);
    pm_database_destroy(db);
    pm_clip_destroy(&c);
}

/* De-duplication compares rows by their bits, so a feature of -0 must be stored as 0: frames
 * repeated in pairs, the second reading -0 where the first reads 0, are one vector each. */
static void test_negative_zero_features(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    for (int i = 0; i < 4; i++) {
        pm_clip *c = &f.clips[i];
        for (int d = 0; d < DIMS; d++)
            for (int fr = 1; fr < c->frame_count; fr += 2) c->curves[d].values[fr] = c->curves[d].values[fr - 1];
        for (int fr = 0; fr < c->frame_count; fr++) c->curves[0].values[fr] = 0.0f;
    }
    pm_database *plain = build(&f, 1);
    for (int i = 0; i < 4; i++)
        for (int fr = 1; fr < f.clips[i].frame_count; fr += 2) f.clips[i].curves[0].values[fr] = -0.0f;
    pm_database *signed_zero = build(&f, 1);
    pm_database_info a, b;
    pm_database_get_info(&a, plain);
    pm_database_get_info(&b, signed_zero);
    assert_true(a.unique_vectors < a.poses * 2 / 3);
    assert_int_equal(b.unique_vectors, a.unique_vectors);
    pm_database_destroy(plain);
    pm_database_destroy(signed_zero);
    fixture_free(&f);
}

/* A mirrored copy negates the parameters its def marks, but a 0 stays +0: a listing of the
 * copy's parameters should not print "-0". */
static void test_mirrored_params_keep_positive_zero(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    f.assets[2].mirror = 1;
    f.assets[2].param_count = 3;
    f.assets[2].params[0] = 0.0f;
    f.assets[2].params[1] = 2.0f;
    f.assets[2].params[2] = 0.0f;
    f.assets[2].mirror_negate_params = 3; /* parameters 0 and 1 */
    pm_database *db = build(&f, 1);
    pm_asset_info a;
    PM_ASSERT_OK(pm_database_asset(&a, db, 3, NULL));
    assert_true(a.mirrored);
    assert_int_equal(a.param_count, 3);
    assert_true(a.params[0] == 0.0f && !signbit(a.params[0]));
    assert_true(a.params[1] == -2.0f);
    assert_true(a.params[2] == 0.0f && !signbit(a.params[2]));
    pm_database_destroy(db);
    fixture_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_round_trip),
        cmocka_unit_test(test_automatic_exact_components),
        cmocka_unit_test(test_negative_zero_features),
        cmocka_unit_test(test_mirrored_params_keep_positive_zero),
        cmocka_unit_test(test_dedup),
        cmocka_unit_test(test_dedup_pca_space),
        cmocka_unit_test(test_dedup_rows_differing_at_the_end),
        cmocka_unit_test(test_resampled_pose_counts),
        cmocka_unit_test(test_clip_frame_rows),
        cmocka_unit_test(test_pose_vectors_and_features),
        cmocka_unit_test(test_padding_and_group_schema),
        cmocka_unit_test(test_normalisation_groups_of_a_real_clip),
        cmocka_unit_test(test_clip_queries_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
