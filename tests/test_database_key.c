/* Database builder: byte-identical builds for any thread count, and build keys that follow every
 * input and setting that changes the bytes (what a cache directory relies on). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "database_support.h"

static void test_determinism_and_key(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 200);
    f.def.mirror = 1;
    f.assets[3].cost_addend = 0.5f;
    pm_database *a = build(&f, 1), *b = build(&f, 2), *c = build(&f, 5), *d = build(&f, 1);
    pm_test_assert_same_database(a, b);
    pm_test_assert_same_database(a, c);
    pm_test_assert_same_database(a, d);
    pm_database_info ia;
    pm_database_get_info(&ia, a);
    assert_int_equal(ia.assets, 8); /* mirrored copies */
    char key[33];
    PM_ASSERT_OK(pm_database_compute_key(key, &f.def, f.assets, 4, NULL));
    assert_string_equal(key, ia.key);
    /* Settings and data change the key; threads do not. */
    pm_database_def d2 = f.def;
    d2.threads = 3;
    char k2[33];
    PM_ASSERT_OK(pm_database_compute_key(k2, &d2, f.assets, 4, NULL));
    assert_string_equal(k2, key);
    d2.fps = 60.0f;
    PM_ASSERT_OK(pm_database_compute_key(k2, &d2, f.assets, 4, NULL));
    assert_string_not_equal(k2, key);
    d2 = f.def;
    pm_schema s2 = f.schema;
    s2.channels[2].weight += 0.1f;
    d2.schema = &s2;
    PM_ASSERT_OK(pm_database_compute_key(k2, &d2, f.assets, 4, NULL));
    assert_string_not_equal(k2, key);
    /* A given mirror map is part of the inputs; the one found from names is not hashed twice. */
    int32_t ident[256];
    assert_true(f.clips[0].skeleton.joint_count <= 256);
    for (int j = 0; j < f.clips[0].skeleton.joint_count; j++) ident[j] = j;
    pm_asset_def with_map[4];
    memcpy(with_map, f.assets, sizeof with_map);
    with_map[0].mirror_map = ident;
    PM_ASSERT_OK(pm_database_compute_key(k2, &f.def, with_map, 4, NULL));
    assert_string_not_equal(k2, key);
    f.clips[2].curves[0].values[5] += 1e-3f;
    PM_ASSERT_OK(pm_database_compute_key(k2, &f.def, f.assets, 4, NULL));
    assert_string_not_equal(k2, key);
    /* A NULL schema is the ue-locomotion preset: the key of naming it, and the build reads it (these
     * clips have no feet); a database's settings point at its own copy of its schema. */
    pm_database_def dn = f.def;
    dn.schema = NULL;
    char kn[33], kp[33];
    PM_ASSERT_OK(pm_database_compute_key(kn, &dn, f.assets, 4, NULL));
    pm_schema ue;
    PM_ASSERT_OK(pm_schema_preset(&ue, "ue-locomotion", NULL));
    dn.schema = &ue;
    PM_ASSERT_OK(pm_database_compute_key(kp, &dn, f.assets, 4, NULL));
    assert_string_equal(kn, kp);
    assert_string_not_equal(kn, key);
    dn.schema = NULL;
    pm_database *none = NULL;
    pm_error err;
    assert_int_equal(pm_database_build(&none, &dn, f.assets, 4, &err), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "foot"));
    assert_null(none);
    const pm_database_def *settings = pm_database_settings(a);
    assert_ptr_equal(settings->schema, pm_database_schema(a));
    assert_int_equal(settings->schema->channel_count, f.schema.channel_count);
    assert_int_equal(pm_schema_cardinality(settings->schema), DIMS);
    pm_database_destroy(a);
    pm_database_destroy(b);
    pm_database_destroy(c);
    pm_database_destroy(d);
    fixture_free(&f);
}

/* A key names a cache entry: every input a build reads must change it (or a cache serves the
 * database of other inputs), and what a build ignores must not (or equal builds miss the cache).
 * One change at a time from the same inputs, each undone before the next. */
static void key_of(char out[33], const fixture *f, const pm_asset_def *assets) {
    pm_error err;
    if (pm_database_compute_key(out, &f->def, assets, 4, &err) != PM_OK) fail_msg("key: %s", err.message);
}

static void expect_key_change(const fixture *f, const pm_asset_def *assets, const char *base, int changes,
                              const char *what) {
    char k[33];
    key_of(k, f, assets);
    if ((strcmp(k, base) != 0) != changes) fail_msg("%s: the key %s", what, changes ? "did not change" : "changed");
}

static void test_key_follows_every_input(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 40);
    pm_asset_def a[4];
    memcpy(a, f.assets, sizeof a);
    a[0].param_count = 3;
    a[0].params[0] = 0.5f;
    a[0].params[1] = 0.25f;
    a[0].params[2] = 0.125f;
    const pm_asset_range range = {0.2f, 0.6f, 0.5f, 0};
    a[1].ranges = &range;
    a[1].range_count = 1;
    pm_skeleton *sk = &f.clips[2].skeleton;
    sk->has_end_site[2] = 1;
    sk->end_sites[2] = pm_vec3_make(0.0f, -0.1f, 0.0f);
    char base[33];
    key_of(base, &f, a);
    /* Two independent halves. */
    assert_memory_not_equal(base, base + 16, 16);

    sk->parents[2] = 1;
    expect_key_change(&f, a, base, 1, "a joint's parent");
    sk->parents[2] = 0;
    pm_quat rest = sk->rest_rotations[1];
    sk->rest_rotations[1] = pm_quat_from_axis_angle(pm_vec3_make(0, 1, 0), 0.5f);
    expect_key_change(&f, a, base, 1, "a rest rotation");
    sk->rest_rotations[1] = rest;
    sk->has_end_site[1] = 1; /* its offset left at 0 */
    expect_key_change(&f, a, base, 1, "an End Site at the origin");
    sk->has_end_site[1] = 0;
    sk->end_sites[2].y = -0.2f;
    expect_key_change(&f, a, base, 1, "an End Site's offset");
    sk->end_sites[2].y = -0.1f;
    const float ft = f.clips[2].frame_time;
    f.clips[2].frame_time = 0.0333334f; /* not resampled, but a source time of its own */
    expect_key_change(&f, a, base, 1, "the frame time");
    f.clips[2].frame_time = ft;
    const pm_vec3 t = f.clips[2].translations[4];
    f.clips[2].translations[4].x += 0.01f;
    expect_key_change(&f, a, base, 1, "a translation");
    f.clips[2].translations[4] = t;
    const float v = f.clips[3].curves[1].values[7];
    f.clips[3].curves[1].values[7] += 0.01f;
    expect_key_change(&f, a, base, 1, "a curve value");
    f.clips[3].curves[1].values[7] = v;
    f.clips[2].looping = 1;
    expect_key_change(&f, a, base, 1, "the clip's looping flag");
    f.clips[2].looping = 0;

    pm_channel_def *ch = &f.schema.channels[1];
    ch->offset = 0.1f;
    expect_key_change(&f, a, base, 1, "a channel's offset");
    ch->offset = 0.0f;
    char name[PM_NAME_SIZE];
    memcpy(name, ch->name, sizeof name);
    memset(ch->name, 'n', PM_NAME_SIZE - 1);
    ch->name[PM_NAME_SIZE - 1] = '\0';
    char long_name[33];
    key_of(long_name, &f, a);
    ch->name[PM_NAME_SIZE - 2] = 'm'; /* the last byte a name may have */
    expect_key_change(&f, a, long_name, 1, "a channel name's last byte");
    memcpy(ch->name, name, sizeof name);
    f.def.exclude_end = 0.2f;
    expect_key_change(&f, a, base, 1, "the database's exclude_end");
    f.def.exclude_end = 0.3f;
    const float smoothing = f.def.root.facing_smoothing;
    f.def.root.facing_smoothing = smoothing + 0.05f;
    expect_key_change(&f, a, base, 1, "the root's facing smoothing");
    f.def.root.facing_smoothing = smoothing;
    f.def.root.right_upleg = 2;
    expect_key_change(&f, a, base, 1, "the right upper leg");
    f.def.root.right_upleg = -1;
    f.def.mirror_axis = 0;
    expect_key_change(&f, a, base, 1, "the mirror axis");
    f.def.mirror_axis = -1;

    a[0].params[2] = 0.0f;
    expect_key_change(&f, a, base, 1, "the third parameter");
    a[0].params[2] = 0.125f;
    pm_asset_range other = range;
    other.exclude = 1;
    a[1].ranges = &other;
    expect_key_change(&f, a, base, 1, "a range's exclude flag");
    a[1].ranges = &range;
    expect_key_change(&f, a, base, 0, "the inputs restored");
    /* What only a mirrored copy reads: no change to an asset without one... */
    int32_t ident[256];
    for (int j = 0; j < f.clips[0].skeleton.joint_count; j++) ident[j] = j;
    a[0].mirror_map = ident;
    expect_key_change(&f, a, base, 0, "a mirror map of an asset not mirrored");
    a[0].mirror_map = NULL;
    a[0].mirror_negate_params = 1;
    expect_key_change(&f, a, base, 0, "mirror_negate_params of an asset not mirrored");
    /* ... and a change with one. */
    a[0].mirror = 1;
    char mirrored[33];
    a[0].mirror_negate_params = 0;
    key_of(mirrored, &f, a);
    a[0].mirror_negate_params = 1;
    expect_key_change(&f, a, mirrored, 1, "mirror_negate_params of a mirrored asset");
    /* A trajectory sample's weight (keys only: these clips have no feet to build from). */
    pm_schema ue;
    PM_ASSERT_OK(pm_schema_preset(&ue, "ue-locomotion", NULL));
    f.def.schema = &ue;
    char traj[33];
    key_of(traj, &f, a);
    ue.channels[0].samples[1].weight = 1.5f;
    expect_key_change(&f, a, traj, 1, "a trajectory sample's weight");
    fixture_free(&f);
}

/* End Sites are inputs: a foot without a toe joint stands on its End Site, so the floor under
 * every root, and with it the feet's features, follows it. A key that left them out let a cache
 * serve the database of the skeleton before the edit. */
static void test_key_follows_end_sites(void **state) {
    (void)state;
    pm_clip c;
    pm_test_biped_clip(&c, 90, 1.0f / 30.0f);
    const pm_vec3 ax = pm_vec3_make(1, 0, 0);
    for (int f = 0; f < 90; f++) {
        float t = (float)f / 30.0f;
        c.translations[(size_t)f * 9] = pm_vec3_make(0.0f, 0.95f, 1.2f * t);
        c.rotations[(size_t)f * 9 + 1] = pm_quat_from_axis_angle(ax, 0.4f * sinf(6.0f * t));
        c.rotations[(size_t)f * 9 + 4] = pm_quat_from_axis_angle(ax, -0.4f * sinf(6.0f * t));
    }
    pm_schema schema;
    PM_ASSERT_OK(pm_schema_preset(&schema, "holden27", NULL));
    pm_database_def def = pm_default_database_def();
    def.schema = &schema;
    pm_asset_def asset = pm_default_asset_def(&c);
    char before[33], after[33];
    pm_database *a = NULL, *b = NULL;
    PM_ASSERT_OK(pm_database_compute_key(before, &def, &asset, 1, NULL));
    PM_ASSERT_OK(pm_database_build(&a, &def, &asset, 1, NULL));
    for (int j = 3; j <= 6; j += 3) {
        c.skeleton.has_end_site[j] = 1;
        c.skeleton.end_sites[j] = pm_vec3_make(0.0f, -0.05f, 0.12f);
    }
    PM_ASSERT_OK(pm_database_compute_key(after, &def, &asset, 1, NULL));
    PM_ASSERT_OK(pm_database_build(&b, &def, &asset, 1, NULL));
    float ra[27], rb[27];
    PM_ASSERT_OK(pm_database_pose_features(ra, a, 10, NULL));
    PM_ASSERT_OK(pm_database_pose_features(rb, b, 10, NULL));
    assert_true(memcmp(ra, rb, sizeof ra) != 0);
    assert_string_not_equal(before, after);
    pm_database_info info;
    pm_database_get_info(&info, b);
    assert_string_equal(info.key, after);
    pm_database_destroy(a);
    pm_database_destroy(b);
    pm_clip_destroy(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_determinism_and_key),
        cmocka_unit_test(test_key_follows_end_sites),
        cmocka_unit_test(test_key_follows_every_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
