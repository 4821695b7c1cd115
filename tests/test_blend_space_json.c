/* Blend spaces from bad input (degenerate, mismatched, non-finite) and the JSON format of
 * `posematch blend` / `posematch build SPACE.json` (tools/blend_space_json.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blend_space_json.h"
#include "blend_support.h"

#define JOINTS 4

typedef pm_test_blend_fixture fixture;

static void fixture_init(fixture *fx, int count) { pm_test_blend_fixture_swing(fx, JOINTS, count); }

static void test_bad_spaces(void **state) {
    (void)state;
    fixture fx;
    fixture_init(&fx, 3);
    static const float pts[3][2] = {{0, 0}, {1, 1}, {2, 4}};
    pm_blend_sample_def samples[3];
    pm_test_blend_samples(samples, &fx, pts, 3);
    pm_blend_space_def def = pm_test_blend_def(samples, 0, 2);
    pm_blend_space *s;
    pm_error e;
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "no samples"));
    assert_null(s);
    /* A negative count and a NULL array are named as such, not as an empty space. */
    def.sample_count = -2;
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "sample_count -2 is negative"));
    def.sample_count = 3;
    def.samples = NULL;
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "samples is NULL (sample_count 3)"));
    def.samples = samples;
    def.dimensions = PM_BLEND_SPACE_MAX_DIMENSIONS + 1;
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "dimensions"));
    def.dimensions = 2;
    /* Duplicate coordinates: both samples named. */
    samples[2].params[0] = 1.0f;
    samples[2].params[1] = 1.0f;
    samples[1].name = "walk";
    samples[2].name = "walk_copy";
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "walk"));
    assert_non_null(strstr(e.message, "walk_copy"));
    samples[2].params[0] = 2.0f;
    samples[2].params[1] = 4.0f;
    /* NaN coordinates. */
    samples[0].params[1] = NAN;
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_NUMERIC);
    samples[0].params[1] = 0.0f;
    /* Mismatched skeletons. */
    pm_skeleton other;
    pm_test_blend_skeleton(&other, JOINTS + 1);
    pm_clip odd;
    pm_test_blend_swing_clip(&odd, &other, 10, 0.5f, 9.0f);
    samples[1].clip = &odd;
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_MISMATCH);
    assert_non_null(strstr(e.message, "different skeleton"));
    /* The message names the first joint that differs, from either side of a longer skeleton. */
    assert_non_null(strstr(e.message, "5 joints) has a different skeleton from sample 0"));
    assert_non_null(strstr(e.message, "first difference at joint 4 ('j4' vs '-')"));
    samples[1].clip = &fx.clips[1];
    samples[0].clip = &odd;
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_MISMATCH);
    assert_non_null(strstr(e.message, "first difference at joint 4 ('-' vs 'j4')"));
    samples[0].clip = &fx.clips[0];
    pm_clip renamed;
    pm_test_blend_swing_clip(&renamed, &fx.clips[0].skeleton, 10, 0.5f, 9.0f);
    PM_ASSERT_OK(pm_skeleton_set_name(&renamed.skeleton, 2, "Spine2", NULL));
    samples[2].clip = &renamed;
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_MISMATCH);
    assert_non_null(strstr(e.message, "sample 2"));
    assert_non_null(strstr(e.message, "first difference at joint 2 ('Spine2' vs 'j2')"));
    samples[2].clip = &fx.clips[2];
    pm_clip_destroy(&renamed);
    /* A sample outside the given range. */
    def.axis_min[0] = 0.0f;
    def.axis_max[0] = 1.5f;
    def.axis_min[1] = 0.0f;
    def.axis_max[1] = 5.0f;
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "outside the axis range"));
    def.axis_max[0] = 2.0f;
    def.align = PM_BLEND_ALIGN_POSITION_FACING; /* these skeletons have no legs to take a facing from */
    assert_int_equal(pm_blend_space_create(&s, &def, &e), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(e.message, "position"));
    def.align = PM_BLEND_ALIGN_POSITION;
    PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
    /* Bad queries and jobs. */
    pm_blend_space_weights w;
    float bad[2] = {0.5f, NAN};
    assert_int_equal(pm_blend_space_weights_at(&w, s, bad, &e), PM_ERR_NUMERIC);
    pm_soa_transform *out = pm_pose_alloc(JOINTS, NULL);
    pm_blend_space_job job = pm_default_blend_space_job();
    job.space = s;
    float p[2] = {0.5f, 0.5f};
    job.params = p;
    job.output = out;
    job.output_count = pm_soa_count(JOINTS);
    job.scratch = out;
    job.scratch_count = 1;
    assert_int_equal(pm_blend_space_job_run(&job, &e), PM_ERR_MISMATCH);
    assert_non_null(strstr(e.message, "scratch"));
    pm_pose_free(out, NULL);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&odd);
    pm_skeleton_destroy(&other);
    pm_test_blend_fixture_free(&fx);
}


/* ---- JSON ---- */

static void test_json(void **state) {
    (void)state;
    fixture fx;
    fixture_init(&fx, 3);
    pm_test_blend_write_clips(&fx, 3);
    pm_blend_space_file f;
    pm_error e;
    const char *good =
        "{\"name\": \"dir\", \"axes\": [{\"name\": \"x\", \"min\": -1, \"max\": 2}, {\"name\": \"y\"}],"
        " \"sync\": \"none\", \"align\": \"none\", \"grid\": [4, 3], \"fps\": 24,"
        " \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0]},"
        "             {\"name\": \"b\", \"clip\": \"clip1.bvh\", \"params\": [1, 0], \"loop\": true},"
        "             {\"name\": \"c\", \"clip\": \"clip2.bvh\", \"params\": [0, 1], \"start\": 0.1, \"end\": 0.4}]}";
    pm_test_blend_load_json_ok(&f, good);
    assert_int_equal(pm_blend_space_dimensions(f.space), 2);
    assert_string_equal(pm_blend_space_sample_name(f.space, 0), "clip0");
    assert_string_equal(pm_blend_space_axis_name(f.space, 1), "y");
    assert_true(pm_blend_space_sample_animation(f.space, 1)->looping);
    assert_true(fabsf(pm_blend_space_sample_animation(f.space, 2)->duration - 0.3f) < 1e-3f);
    assert_true(f.fps == 24.0f && f.grid.counts[0] == 4 && f.grid.counts[1] == 3);
    float lo, hi;
    PM_ASSERT_OK(pm_blend_space_axis_range(&lo, &hi, f.space, 1, NULL));
    assert_true(lo == 0.0f && hi == 1.0f); /* the samples' extent */
    pm_clip *clips;
    int count;
    PM_ASSERT_OK(pm_blend_space_file_bake_grid(&clips, &count, NULL, 0, &f, 0.0f, NULL));
    assert_int_equal(count, 4); /* (0,0) (1,0) (0,0.5) (0,1) lie in the triangle */
    assert_true(fabsf(1.0f / clips[0].frame_time - 24.0f) < 1.0f);
    pm_blend_space_free_clips(clips, count);
    pm_blend_space_file_free(&f);

    static const pm_test_bad_json bad[] = {
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}], \"colour\": 1}", "unknown key \"colour\""},
        {"{\"samples\": []}", "non-empty"},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 1, 2, 3]}]}", "samples[0].params"},
        {"{\"axes\": [{\"name\": \"x\"}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 1]}]}", "samples[0]"},
        {"{\"samples\": [{\"clip\": \"missing.bvh\", \"params\": [0]}]}", "missing.bvh"},
        {"{\"sync\": \"bars\", \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "\"phase\""},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}, {\"clip\": \"clip1.bvh\", \"params\": [0]}],"
         " \"align\": \"none\"}",
         "same coordinates"},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0], \"start\": 5}]}", "start"},
        {"{\"samples\": [ {\"clip\": ", "malformed"},
        /* Names tell samples apart in the output: one clip used twice needs names of its own. */
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}, {\"clip\": \"clip0.bvh\", \"params\": [1]}]}",
         "samples[1].name: 'clip0' is also samples[0]'s name (a sample without one is named after its clip's file)"},
        {"{\"samples\": [{\"name\": \"w\", \"clip\": \"clip0.bvh\", \"params\": [0]},"
         " {\"name\": \"w\", \"clip\": \"clip1.bvh\", \"params\": [1]}]}",
         "samples[1].name: 'w' is also samples[0]'s name; give each sample"},
        {"{\"axes\": [{\"min\": 3, \"max\": 1}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "below max"},
        /* Conversions checked before they happen (casting 3e10 to int, or 1e39 to float, is undefined). */
        {"{\"grid\": [3e10], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "grid: expected 1 whole"},
        {"{\"grid\": -1e300, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "grid: expected 1 whole"},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}, {\"clip\": \"clip1.bvh\", \"params\": [1]},"
         " {\"clip\": \"clip2.bvh\", \"params\": [1e39]}]}",
         "samples[2].params[0]: 1e+39 is beyond the single-precision range"},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": 1e39}]}", "samples[0].params: 1e+39"},
        {"{\"axes\": [{\"min\": -1e39, \"max\": 1}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "axes[0].min: -1e+39"},
        {"{\"axes\": [{\"min\": 1, \"max\": 1.00000001}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [1]}]}",
         "below max"},
        {"{\"unit_scale\": 1e-300, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "unit_scale: 1e-300"},
        /* unit_scale: the same range as --unit-scale; 1e30 or 1e-30 metres per unit read a walk's
         * strides as nothing (its gait cycles and root motion were lost, silently). */
        {"{\"unit_scale\": 1e30, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "unit_scale: 1e+30 is outside 1e-06..1e+06"},
        {"{\"unit_scale\": 1e-30, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "unit_scale: 1e-30 is outside 1e-06..1e+06"},
        /* fps: the same range as --fps, nothing silently turned into "default". */
        {"{\"fps\": 1e-300, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "fps: 1e-300 is outside 0.001..10000"},
        {"{\"fps\": 20000, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "fps: 20000 is outside"},
        /* One document: anything after it is a mistake, not ignored. */
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}\n xx",
         "text after the top-level JSON value, line 2"},
        /* cJSON would end the name at the escape: "s\u0000x" and "s\u0000y" read as one name. */
        {"{\"samples\": [{\"name\": \"s\\u0000x\", \"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "\\u0000 escape in a JSON string (names and paths cannot hold NUL), line 1"},
        /* cJSON reads both as 1: a typo the file's author should see, not a guess. */
        {"{\"samples\": [{\"clip\": \"clip0.bvh\",\n \"params\": [01]}]}",
         "'01' is not a JSON number (no leading zeros; digits after a '.'), line 2"},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [1.e0]}]}", "'1.e0' is not a JSON number"},
        /* Strict types and keys. */
        {"{\"name\": 5, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "top level: \"name\" must be a string"},
        {"{\"samples\": [{\"name\": [\"w\"], \"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "samples[0]: \"name\" must be a string"},
        {"{\"axes\": [{\"name\": 1}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "axes[0]: \"name\" must be a string"},
        {"{\"samples\": [{\"clip\": 7, \"params\": [0]}]}", "\"clip\" must be a string"},
        {"{\"name\": \"sp\\nace\", \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "top level: \"name\" has a control character (byte 0x0a at offset 2)"},
        {"{\"samples\": [{\"name\": \"s\\u001b[31m\", \"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "samples[0]: \"name\" has a control character (byte 0x1b"},
        {"{\"name\": \"a\", \"name\": \"b\", \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "top level: key \"name\" appears twice"},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0], \"params\": [1]}]}",
         "samples[0]: key \"params\" appears twice"},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": \"1\"}]}", "samples[0].params: expected an array of 1 number(s)"},
        {"{\"axes\": [{}, {}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "samples[0].params: expected an array of 2"},
        {"{\"axes\": [{}, {}], \"samples\": [{\"clip\": \"clip0.bvh\"}]}", "it is missing"},
        /* Where cJSON stopped: line, column (in characters) and what is there, up to 16 bytes. */
        {"{\"samples\": [", "JSON: malformed near line 1, column 14 (at the end of the file)"},
        {"{\"samples\": [ x y z]}", "JSON: malformed near line 1, column 15 (at 'x y z]}')"},
        {"{\"n\u00e4m\u00e9\": 1,\n \"x\": abcdefghijklmnopqrstuvwxyz}", "JSON: malformed near line 2, column 7 (at 'abcdefghijklmnop')"},
        {"{\"n\xc3\xa4m\xc3\xa9\": x}", "JSON: malformed near line 1, column 10 (at 'x}')"},
        {"{\"a\": 1,\n\"b\": \x7f}", "JSON: malformed near line 2, column 6 (at a control character, byte 0x7f)"},
        /* Settings: each a word from its list, a boolean or a number in range. */
        {"{\"sync\": 1, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "\"sync\""},
        {"{\"align\": \"rotation\", \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "\"position_facing\""},
        {"{\"collinear\": \"maybe\", \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "\"line\""},
        {"{\"coplanar\": \"maybe\", \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "\"plane\""},
        {"{\"up\": \"x\", \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "\"up\""},
        {"{\"grid_include_outside\": 1, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "grid_include_outside"},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0], \"loop\": \"yes\"}]}", "samples[0]: \"loop\""},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0], \"mirror\": 1}]}", "samples[0]: \"mirror\""},
        {"{\"unit_scale\": -1, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "unit_scale: -1 must be a positive single-precision number (metres per file unit)"},
        {"{\"fps\": 0.0005, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "fps: 0.0005 is outside 0.001..10000"},
        {"{\"axes\": [], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "axes: expected an array of 1 to 3 axes"},
        {"{\"axes\": [{}, {}, {}, {}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0, 0, 0]}]}",
         "axes: expected an array of 1 to 3 axes"},
        {"{\"axes\": [{\"min\": 0}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "axes[0]: give both \"min\" and \"max\" or neither"},
        {"{\"axes\": [{\"max\": 1}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "axes[0]: give both \"min\" and \"max\" or neither"},
        {"{\"axes\": [{\"min\": 1, \"max\": 1}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [1]}]}",
         "axes[0]: min 1 must be below max 1"},
        {"{\"axes\": [{\"mirror\": \"flip\"}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "\"negate\""},
        {"{\"axes\": [{\"colour\": 1}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "unknown key \"colour\""},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0, 0, 0]}]}", "samples[0].params: expected 1 to 3 numbers"},
        {"{\"grid\": [2, 2], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}",
         "grid: expected 1 whole number(s) of points per axis, each 1..100000"},
        {"{\"grid\": 0, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "grid: expected 1 whole"},
        {"{\"grid\": 100001, \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "grid: expected 1 whole"},
        {"{\"grid\": [2.5], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}]}", "grid: expected 1 whole"},
        {"{\"samples\": {}}", "samples: a blend space needs a non-empty \"samples\" array"},
        {"{\"samples\": [{\"clip\": \"\", \"params\": [0]}]}", "samples[0]: \"clip\" (a BVH path) is required"},
        {"{\"samples\": [{\"params\": [0]}]}", "samples[0]: \"clip\" (a BVH path) is required"},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0], \"start\": 0.2, \"end\": 0.1}]}",
         "samples[0]: start 0.2 / end 0.1 must satisfy 0 <= start < end <="},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0], \"start\": -0.1}]}", "samples[0]: start -0.1 / end"},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0], \"end\": 100}]}", "samples[0]: start 0 / end 100 must satisfy"},
        {"{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0], \"start\": \"0\"}]}", "samples[0]: \"start\""},
        {"{\"samples\": [3]}", "samples[0]"},
    };
    pm_test_blend_expect_bad_json(bad, sizeof bad / sizeof bad[0]);
    /* Every form of number JSON allows still loads; nesting past cJSON's limit is named. */
    pm_blend_space_file ok;
    pm_test_blend_load_json_ok(&ok, "{\"align\": \"none\", \"axes\": [{\"min\": -0.0e+00, \"max\": 1E1}],"
                                    " \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [5e-1]}]}");
    pm_blend_space_file_free(&ok);
    char deep[2600];
    int n = snprintf(deep, sizeof deep, "{\"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]}], \"x\": ");
    memset(deep + n, '[', 1100);
    memset(deep + n + 1100, ']', 1100);
    memcpy(deep + n + 2200, "}", 2);
    const pm_test_bad_json too_deep = {deep, "JSON nested deeper than 1000 levels, line 1"};
    pm_test_blend_expect_bad_json(&too_deep, 1);
    /* Grid assets: one per distinct blend. A single sample is one asset, not 25 copies of it; the
     * points projected onto the hull are baked once per hull point. */
    const char *one = "{\"name\": \"one\", \"align\": \"none\", \"axes\": [{}, {}],"
                      " \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0]}]}";
    pm_test_blend_load_json_ok(&f, one);
    for (int outside = 0; outside < 2; outside++) {
        f.grid.include_outside = outside;
        float *params;
        PM_ASSERT_OK(pm_blend_space_file_bake_grid(&clips, &count, &params, 0, &f, 0.0f, NULL));
        assert_int_equal(count, 1);
        assert_true(params[0] == 0.0f && params[1] == 0.0f);
        pm_blend_space_free_clips(clips, count);
        free(params);
    }
    f.grid.include_outside = 0;
    f.grid.counts[0] = 4; /* no point on the sample */
    assert_int_equal(pm_blend_space_file_bake_grid(&clips, &count, NULL, 0, &f, 0.0f, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "no point of its grid"));
    assert_null(clips);
    pm_blend_space_file_free(&f);
    pm_test_blend_load_json_ok(&f, good);
    f.grid.include_outside = 1;
    float *params;
    /* A bake past the poses a database holds stops there, its clips freed. */
    assert_int_equal(pm_blend_space_file_bake_grid(&clips, &count, &params, 10, &f, 0.0f, &e), PM_ERR_LIMIT);
    assert_non_null(strstr(e.message, "bakes more than the 10 poses"));
    assert_null(clips);
    PM_ASSERT_OK(pm_blend_space_file_bake_grid(&clips, &count, &params, 0, &f, 0.0f, NULL));
    assert_true(count > 4 && count < 12);
    /* A grid of exactly max_poses poses fits: the limit is on more than that. */
    long long total = 0;
    for (int i = 0; i < count; i++) total += clips[i].frame_count;
    {
        pm_clip *fit;
        int fit_count;
        PM_ASSERT_OK(pm_blend_space_file_bake_grid(&fit, &fit_count, NULL, total, &f, 0.0f, NULL));
        assert_int_equal(fit_count, count);
        pm_blend_space_free_clips(fit, fit_count);
        assert_int_equal(pm_blend_space_file_bake_grid(&fit, &fit_count, NULL, total - 1, &f, 0.0f, &e), PM_ERR_LIMIT);
        assert_null(fit);
    }
    for (int i = 0; i < count; i++) {
        pm_blend_space_weights wi, wk;
        PM_ASSERT_OK(pm_blend_space_weights_at(&wi, f.space, params + 2 * i, NULL));
        for (int k = 0; k < i; k++) {
            PM_ASSERT_OK(pm_blend_space_weights_at(&wk, f.space, params + 2 * k, NULL));
            assert_false(wi.count == wk.count && !memcmp(wi.samples, wk.samples, sizeof(int) * (size_t)wi.count) &&
                         !memcmp(wi.weights, wk.weights, sizeof(float) * (size_t)wi.count));
        }
        /* Kept in grid order (axis 0 fastest). */
        if (i > 0) assert_true(params[2 * i + 1] > params[2 * i - 1] || params[2 * i] > params[2 * i - 2]);
    }
    pm_blend_space_free_clips(clips, count);
    free(params);
    pm_blend_space_file_free(&f);

    pm_blend_space_file nf;
    assert_int_not_equal(pm_blend_space_load_json(&nf, pm_test_tmp_path("nope.json"), NULL, &e), PM_OK);
    assert_non_null(strstr(e.message, "nope.json"));
    pm_test_blend_fixture_free(&fx);
}

/* The file's settings take effect: a sample's "mirror", the clips' "up" and "unit_scale" (each
 * outranked by the caller's), "collinear", "grid_include_outside" and an axis's "mirror". */
static void bake_json(pm_clip *out, const char *json, const pm_bvh_def *bvh) {
    pm_blend_space_file f;
    pm_error e;
    if (pm_blend_space_from_json(&f, json, "space.json", pm_test_tmp_dir(), bvh, &e) != PM_OK) fail_msg("%s", e.message);
    const float at[1] = {0.0f};
    PM_ASSERT_OK(pm_blend_space_bake(out, f.space, at, 30.0f, NULL));
    pm_blend_space_file_free(&f);
}

static int same_motion(const pm_clip *a, const pm_clip *b) {
    size_t n = (size_t)a->frame_count * (size_t)a->skeleton.joint_count;
    return a->frame_count == b->frame_count && a->skeleton.joint_count == b->skeleton.joint_count &&
           !memcmp(a->rotations, b->rotations, n * sizeof *a->rotations) &&
           !memcmp(a->translations, b->translations, n * sizeof *a->translations);
}

static void test_json_settings(void **state) {
    (void)state;
    fixture fx;
    fixture_init(&fx, 3);
    pm_test_blend_write_clips(&fx, 3);
    char json[1024];
    const char *form = "{%s \"align\": \"none\", \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0]%s},"
                       " {\"clip\": \"clip1.bvh\", \"params\": [1]}]}";
    pm_clip plain, other;
    snprintf(json, sizeof json, form, "", "");
    bake_json(&plain, json, NULL);
    snprintf(json, sizeof json, form, "", ", \"mirror\": false");
    bake_json(&other, json, NULL);
    assert_true(same_motion(&plain, &other));
    pm_clip_destroy(&other);
    snprintf(json, sizeof json, form, "", ", \"mirror\": true");
    bake_json(&other, json, NULL);
    assert_false(same_motion(&plain, &other));
    pm_clip_destroy(&other);
    /* "up" applies when the caller detects the axis, not over the caller's. */
    pm_bvh_def y = pm_default_bvh_def();
    y.up_axis = PM_UP_Y;
    snprintf(json, sizeof json, form, "\"up\": \"z\",", "");
    bake_json(&other, json, NULL);
    assert_false(same_motion(&plain, &other));
    pm_clip_destroy(&other);
    bake_json(&other, json, &y);
    pm_clip with_y;
    snprintf(json, sizeof json, form, "", "");
    bake_json(&with_y, json, &y);
    assert_true(same_motion(&with_y, &other));
    pm_clip_destroy(&with_y);
    pm_clip_destroy(&other);
    /* "unit_scale" likewise. */
    pm_bvh_def one = pm_default_bvh_def();
    one.unit_scale = 1.0f;
    pm_clip half, half_one, one_one;
    snprintf(json, sizeof json, form, "\"unit_scale\": 0.5,", "");
    bake_json(&half, json, NULL);
    bake_json(&half_one, json, &one);
    snprintf(json, sizeof json, form, "\"unit_scale\": 1,", "");
    bake_json(&other, json, NULL);
    bake_json(&one_one, json, &one);
    assert_false(same_motion(&half, &other));
    assert_true(same_motion(&half_one, &one_one));
    assert_true(same_motion(&half_one, &other));
    pm_clip_destroy(&half);
    pm_clip_destroy(&half_one);
    pm_clip_destroy(&one_one);
    pm_clip_destroy(&other);
    pm_clip_destroy(&plain);
    /* Samples on one line of a 2D space: a 1D blend along it by default, refused with "error". */
    pm_blend_space_file f;
    pm_error e;
    const char *line = "{%s \"align\": \"none\", \"axes\": [{}, {}], \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0]},"
                       " {\"clip\": \"clip1.bvh\", \"params\": [1, 1]}, {\"clip\": \"clip2.bvh\", \"params\": [2, 2]}]}";
    snprintf(json, sizeof json, line, "");
    pm_test_blend_load_json_ok(&f, json);
    assert_true(pm_blend_space_is_collinear(f.space));
    pm_blend_space_file_free(&f);
    snprintf(json, sizeof json, line, "\"collinear\": \"line\",");
    pm_test_blend_load_json_ok(&f, json);
    pm_blend_space_file_free(&f);
    snprintf(json, sizeof json, line, "\"collinear\": \"error\",");
    assert_int_not_equal(pm_test_blend_load_json(&f, json, &e), PM_OK);
    assert_null(f.space);
    /* grid_include_outside and the axes' mirroring reach the file's settings. */
    pm_test_blend_load_json_ok(&f, "{\"align\": \"none\", \"grid_include_outside\": true, \"axes\": [{\"mirror\": \"keep\"}, {\"mirror\": \"negate\"}],"
                                   " \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0]}]}");
    assert_int_equal(f.grid.include_outside, 1);
    assert_int_equal(f.mirror_negate, 2);
    pm_blend_space_file_free(&f);
    pm_test_blend_load_json_ok(&f, "{\"align\": \"none\", \"axes\": [{\"mirror\": \"negate\"}, {}],"
                                   " \"samples\": [{\"clip\": \"clip0.bvh\", \"params\": [0, 0]}]}");
    assert_int_equal(f.grid.include_outside, 0);
    assert_int_equal(f.mirror_negate, 1);
    /* The bake refuses a NULL output, either of them. */
    pm_clip *clips = NULL;
    int count = 0;
    assert_int_equal(pm_blend_space_file_bake_grid(NULL, &count, NULL, 0, &f, 0.0f, &e), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "pm_blend_space_file_bake_grid: NULL argument"));
    assert_int_equal(pm_blend_space_file_bake_grid(&clips, NULL, NULL, 0, &f, 0.0f, &e), PM_ERR_INVALID_ARGUMENT);
    assert_null(clips);
    pm_blend_space_file_free(&f);
    assert_int_equal(pm_blend_space_file_bake_grid(&clips, &count, NULL, 0, &f, 0.0f, &e), PM_ERR_INVALID_ARGUMENT);
    pm_test_blend_fixture_free(&fx);
}

/* The default bake rate is the samples' highest one: a clip whose frame time is absurdly small
 * gives an error asking for a rate, never a NaN frame count. */
static void test_bake_rate_of_absurd_clips(void **state) {
    (void)state;
    static const float frame_times[2] = {1e-6f, 1e-40f};
    for (int k = 0; k < 2; k++) {
        pm_skeleton sk;
        pm_test_blend_skeleton(&sk, JOINTS);
        pm_clip clip;
        PM_ASSERT_OK(pm_clip_create(&clip, &sk, k ? 1 : 3, frame_times[k], NULL, NULL));
        for (int i = 0; i < clip.frame_count * JOINTS; i++) {
            clip.rotations[i] = pm_quat_identity();
            clip.translations[i] = pm_vec3_make(0.0f, 1.0f, 0.0f);
        }
        pm_blend_sample_def sample = pm_default_blend_sample_def();
        sample.clip = &clip;
        pm_blend_space_def def = pm_test_blend_def(&sample, 1, 1);
        pm_blend_space *s = NULL;
        pm_error e;
        PM_ASSERT_OK(pm_blend_space_create(&s, &def, &e));
        pm_clip out;
        float p = 0.0f;
        assert_int_equal(pm_blend_space_bake(&out, s, &p, 0.0f, &e), PM_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(e.message, "give a bake rate"));
        PM_ASSERT_OK(pm_blend_space_bake(&out, s, &p, 60.0f, &e)); /* an explicit rate works */
        pm_clip_destroy(&out);
        pm_blend_space_destroy(s);
        pm_clip_destroy(&clip);
        pm_skeleton_destroy(&sk);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_spaces),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_settings),
        cmocka_unit_test(test_bake_rate_of_absurd_clips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
