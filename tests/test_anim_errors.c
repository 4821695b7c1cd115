/* Animation data: every argument and field check of skeletons and clips (validation, the clip
 * functions' errors, uninitialised and edited structs, frame limits, an output that is also an
 * input). The behaviour on valid data is in test_anim.c. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blend_support.h"
#include "support.h"

static const pm_vec3 AY = {0, 1, 0};

static void test_validation(void **state) {
    (void)state;
    pm_skeleton s;
    pm_error err;
    pm_test_biped(&s, pm_test_biped_names);
    PM_ASSERT_OK(pm_skeleton_validate(&s, NULL));
    s.parents[2] = 5;
    assert_int_equal(pm_skeleton_validate(&s, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "parent"));
    s.parents[2] = 1;
    PM_ASSERT_OK(pm_skeleton_set_name(&s, 5, "LeftLeg", NULL));
    assert_int_equal(pm_skeleton_validate(&s, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "LeftLeg"));
    PM_ASSERT_OK(pm_skeleton_set_name(&s, 5, "RightLeg", NULL));
    s.rest_translations[3].y = INFINITY;
    assert_int_equal(pm_skeleton_validate(&s, &err), PM_ERR_NUMERIC);
    s.rest_translations[3].y = -0.42f;
    pm_clip c;
    assert_int_equal(pm_clip_create(&c, &s, 0, 0.1f, NULL, &err), PM_ERR_LIMIT);
    assert_int_equal(pm_clip_create(&c, &s, 3, 0.0f, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    PM_ASSERT_OK(pm_clip_create(&c, &s, 3, 0.1f, NULL, NULL));
    PM_ASSERT_OK(pm_clip_validate(&c, NULL));
    c.rotations[4] = pm_quat_make(0, 0, 0, 2);
    assert_int_equal(pm_clip_validate(&c, &err), PM_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "unit length"));
    /* The tolerance anim.h gives: within 1e-3 in squared length (0.9e-3 passes, 1.1e-3 not). */
    c.rotations[4] = pm_quat_make(0, 0, 0, sqrtf(1.0009f));
    PM_ASSERT_OK(pm_clip_validate(&c, NULL));
    c.rotations[4] = pm_quat_make(0, 0, 0, sqrtf(0.9991f));
    PM_ASSERT_OK(pm_clip_validate(&c, NULL));
    c.rotations[4] = pm_quat_make(0, 0, 0, sqrtf(1.0011f));
    assert_int_equal(pm_clip_validate(&c, &err), PM_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "rotation is not unit length (1.00055)"));
    c.rotations[4] = pm_quat_identity();
    c.translations[7].z = NAN;
    assert_int_equal(pm_clip_validate(&c, &err), PM_ERR_NUMERIC);
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

/* Sampling, forward kinematics of a frame, the survey and the Z-up conversion say what is wrong:
 * NULL arguments by name, an uninitialised clip, a time that is not finite, a frame outside the
 * clip (no longer clamped), a bad parent naming the joint; the outputs are left untouched. */
static void test_clip_functions_report_errors(void **state) {
    (void)state;
    pm_clip c, empty;
    pm_test_ramp_clip(&c, 10, 0.1f);
    PM_ASSERT_OK(pm_clip_set_name(&c, "ramp", NULL));
    memset(&empty, 0, sizeof empty);
    pm_error err;

    /* pm_clip_sample */
    pm_quat rot[9], rot_sentinel[9];
    pm_vec3 pos[9];
    memset(rot_sentinel, 0x5A, sizeof rot_sentinel);
    memcpy(rot, rot_sentinel, sizeof rot);
    assert_int_equal(pm_clip_sample(NULL, pos, &c, 0.0f, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_clip_sample: out_rotations is NULL");
    assert_int_equal(pm_clip_sample(rot, NULL, &c, 0.0f, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_clip_sample: out_translations is NULL");
    assert_int_equal(pm_clip_sample(rot, pos, NULL, 0.0f, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_clip_sample: clip is NULL");
    assert_int_equal(pm_clip_sample(rot, pos, &empty, 0.0f, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "pm_clip_sample: the clip is not initialised"));
    const float bad_times[] = {NAN, INFINITY, -INFINITY};
    for (int looping = 0; looping < 2; looping++) {
        c.looping = looping; /* a looping clip used to wrap infinity into a NaN frame index */
        for (size_t i = 0; i < sizeof bad_times / sizeof bad_times[0]; i++) {
            assert_int_equal(pm_clip_sample(rot, pos, &c, bad_times[i], &err), PM_ERR_NUMERIC);
            assert_non_null(strstr(err.message, "is not finite (clip 'ramp')"));
            assert_memory_equal(rot, rot_sentinel, sizeof rot);
        }
    }
    c.looping = 0;
    assert_int_equal(pm_clip_sample(rot, pos, &c, NAN, NULL), PM_ERR_NUMERIC); /* no pm_error needed */
    PM_ASSERT_OK(pm_clip_sample(rot, pos, &c, -5.0f, &err)); /* finite times still clamp */
    pm_test_assert_vec3_near(pos[0], pm_vec3_make(0, 0.95f, 0), 0);

    /* pm_clip_frame_world: frames are not clamped any more. */
    pm_transform w[9], w_sentinel[9];
    memset(w_sentinel, 0x5A, sizeof w_sentinel);
    memcpy(w, w_sentinel, sizeof w);
    assert_int_equal(pm_clip_frame_world(NULL, &c, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_clip_frame_world: out_world is NULL");
    assert_int_equal(pm_clip_frame_world(w, NULL, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_clip_frame_world: clip is NULL");
    assert_int_equal(pm_clip_frame_world(w, &empty, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "pm_clip_frame_world: the clip is not initialised"));
    const int bad_frames[] = {-1, 10, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof bad_frames / sizeof bad_frames[0]; i++) {
        assert_int_equal(pm_clip_frame_world(w, &c, bad_frames[i], &err), PM_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "is outside 0..9 (clip 'ramp')"));
        assert_memory_equal(w, w_sentinel, sizeof w);
    }
    assert_int_equal(pm_clip_frame_world(w, &c, 10, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_clip_frame_world: frame 10 is outside 0..9 (clip 'ramp')");
    c.skeleton.parents[2] = 7;
    assert_int_equal(pm_clip_frame_world(w, &c, 0, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "clip 'ramp'"));
    assert_non_null(strstr(err.message, "joint 2 has parent 7"));
    assert_memory_equal(w, w_sentinel, sizeof w);

    /* pm_clip_survey_compute: *out is zeroed on failure. */
    pm_clip_survey sv, zero;
    memset(&zero, 0, sizeof zero);
    memset(&sv, 0x5A, sizeof sv);
    assert_int_equal(pm_clip_survey_compute(&sv, &c, &err), PM_ERR_INVALID_ARGUMENT); /* parents[2] is still 7 */
    assert_non_null(strstr(err.message, "joint 2 has parent 7"));
    assert_memory_equal(&sv, &zero, sizeof sv);
    c.skeleton.parents[2] = 1;
    assert_int_equal(pm_clip_survey_compute(NULL, &c, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_clip_survey_compute: out is NULL");
    memset(&sv, 0x5A, sizeof sv);
    assert_int_equal(pm_clip_survey_compute(&sv, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_clip_survey_compute: clip is NULL");
    assert_memory_equal(&sv, &zero, sizeof sv);
    assert_int_equal(pm_clip_survey_compute(&sv, &empty, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "pm_clip_survey_compute: the clip is not initialised"));
    PM_ASSERT_OK(pm_clip_survey_compute(&sv, &c, &err));
    assert_int_equal(sv.roles.hips, 0);
    PM_ASSERT_OK(pm_clip_frame_world(w, &c, 9, &err));
    pm_test_assert_vec3_near(w[0].translation, pm_vec3_make(9, 0.95f, 0), 0);

    /* pm_clip_z_up_to_y_up */
    assert_int_equal(pm_clip_z_up_to_y_up(NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_clip_z_up_to_y_up: clip is NULL");
    assert_int_equal(pm_clip_z_up_to_y_up(&empty, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "pm_clip_z_up_to_y_up: the clip is not initialised"));
    assert_int_equal(empty.source_up, PM_UP_Y);
    c.frame_time = 0.0f;
    assert_int_equal(pm_clip_z_up_to_y_up(&c, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "frame time 0"));
    assert_int_equal(c.source_up, PM_UP_Y);
    c.frame_time = 0.1f;
    PM_ASSERT_OK(pm_clip_z_up_to_y_up(&c, &err));
    assert_int_equal(c.source_up, PM_UP_Z);
    pm_clip_destroy(&c);
}

/* ---- input validation (audit) ---- */

/* Asserts code and a word of the message, and that the message stays on one line. */
static void expect_error(pm_result got, pm_result code, const pm_error *err, const char *word) {
    assert_int_equal(got, code);
    if (!strstr(err->message, word)) fail_msg("expected '%s' in: %s", word, err->message);
    assert_null(strchr(err->message, '\n'));
}

/* Every field a writer or kinematics indexes with is checked: channels within the enum and
 * listed once, unit rest rotations, finite End Sites, 0/1 flags, names without control
 * characters. pm_clip_validate and pm_animation_build inherit the checks. */
static void test_skeleton_validate_checks_every_field(void **state) {
    (void)state;
    pm_skeleton s;
    pm_error err;
    pm_test_biped(&s, pm_test_biped_names);
    s.channel_counts[2] = 3;
    s.channels[2 * 6 + 0] = PM_CHANNEL_ZROTATION;
    s.channels[2 * 6 + 1] = PM_CHANNEL_XROTATION;
    s.channels[2 * 6 + 2] = PM_CHANNEL_YROTATION;
    PM_ASSERT_OK(pm_skeleton_validate(&s, &err));
    const uint8_t bad_channels[] = {6, 9, 17, 255};
    for (size_t i = 0; i < sizeof bad_channels; i++) {
        s.channels[2 * 6 + 1] = bad_channels[i];
        expect_error(pm_skeleton_validate(&s, &err), PM_ERR_INVALID_ARGUMENT, &err, "must be a pm_channel");
    }
    s.channels[2 * 6 + 1] = PM_CHANNEL_ZROTATION;
    expect_error(pm_skeleton_validate(&s, &err), PM_ERR_INVALID_ARGUMENT, &err, "twice");
    s.channels[2 * 6 + 1] = PM_CHANNEL_XROTATION;

    const pm_quat bad_rest[] = {{NAN, 0, 0, 1}, {0, 0, 0, 0}, {0, 0, 0, 2}, {0, 0, 0, INFINITY}};
    for (size_t i = 0; i < sizeof bad_rest / sizeof bad_rest[0]; i++) {
        s.rest_rotations[4] = bad_rest[i];
        expect_error(pm_skeleton_validate(&s, &err), PM_ERR_NUMERIC, &err, "rest_rotation");
        assert_non_null(strstr(err.message, "RightUpLeg"));
    }
    s.rest_rotations[4] = pm_quat_from_axis_angle(AY, 0.5f);
    PM_ASSERT_OK(pm_skeleton_validate(&s, &err));
    /* The clips' tolerance holds for rest rotations too: 1e-3 in squared length, not more. */
    s.rest_rotations[4] = pm_quat_make(0, 0, 0, sqrtf(1.0011f));
    expect_error(pm_skeleton_validate(&s, &err), PM_ERR_NUMERIC, &err, "rest_rotation");
    s.rest_rotations[4] = pm_quat_make(0, 0, 0, sqrtf(1.0009f));
    PM_ASSERT_OK(pm_skeleton_validate(&s, &err));
    s.rest_rotations[4] = pm_quat_from_axis_angle(AY, 0.5f);
    /* A joint that is its own parent: every walk up the hierarchy would never end. */
    s.parents[3] = 3;
    expect_error(pm_skeleton_validate(&s, &err), PM_ERR_INVALID_ARGUMENT, &err, "joint 3 has parent 3");
    s.parents[3] = 2;
    /* Names are unique up to the last joint (lookups by name would find the first). */
    PM_ASSERT_OK(pm_skeleton_set_name(&s, 8, "Spine", NULL));
    expect_error(pm_skeleton_validate(&s, &err), PM_ERR_INVALID_ARGUMENT, &err, "'Spine' is used twice");
    PM_ASSERT_OK(pm_skeleton_set_name(&s, 8, pm_test_biped_names[8], NULL));
    PM_ASSERT_OK(pm_skeleton_validate(&s, &err));

    s.has_end_site[8] = 1;
    s.end_sites[8] = pm_vec3_make(0, INFINITY, 0);
    expect_error(pm_skeleton_validate(&s, &err), PM_ERR_NUMERIC, &err, "End Site");
    s.end_sites[8] = pm_vec3_make(0, 0.1f, 0);
    s.has_end_site[8] = 2;
    expect_error(pm_skeleton_validate(&s, &err), PM_ERR_INVALID_ARGUMENT, &err, "has_end_site");
    s.has_end_site[8] = 1;

    /* A newline in a name would split the one-line message that quotes it: refused, unquoted. */
    PM_ASSERT_OK(pm_skeleton_set_name(&s, 7, "Spi\nne", NULL));
    expect_error(pm_skeleton_validate(&s, &err), PM_ERR_INVALID_ARGUMENT, &err, "control character");
    PM_ASSERT_OK(pm_skeleton_set_name(&s, 7, "Spine", NULL));

    /* Inherited by clips (and so by the BVH writer, which indexed tables with the channel). */
    pm_clip c;
    PM_ASSERT_OK(pm_clip_create(&c, &s, 2, 0.1f, NULL, &err));
    c.skeleton.channels[2 * 6 + 1] = 17;
    expect_error(pm_clip_validate(&c, &err), PM_ERR_INVALID_ARGUMENT, &err, "must be a pm_channel");
    char *text = NULL;
    size_t size = 0;
    expect_error(pm_bvh_write_memory(&text, &size, &c, NULL, &err), PM_ERR_INVALID_ARGUMENT, &err, "channel 1 is 17");
    assert_null(text);
    c.skeleton.channels[2 * 6 + 1] = PM_CHANNEL_XROTATION;
    c.skeleton.rest_rotations[3] = pm_quat_make(0, 0, 0, 0);
    pm_animation anim;
    expect_error(pm_animation_build(&anim, &c, NULL, &err), PM_ERR_NUMERIC, &err, "rest_rotation");
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

/* A struct with a joint count but no arrays (zeroed, then a count set) is refused before
 * anything reads it; pm_clip_create validates the skeleton it is given. */
static void test_uninitialised_skeletons_are_refused(void **state) {
    (void)state;
    pm_error err;
    pm_skeleton zeroed, copy;
    memset(&zeroed, 0, sizeof zeroed);
    zeroed.joint_count = 3;
    expect_error(pm_skeleton_copy(&copy, &zeroed, NULL, &err), PM_ERR_INVALID_ARGUMENT, &err, "not initialised");
    pm_clip c, d;
    expect_error(pm_clip_create(&c, &zeroed, 2, 0.1f, NULL, &err), PM_ERR_INVALID_ARGUMENT, &err, "not initialised");
    assert_int_equal(pm_skeleton_find_joint(&zeroed, "j0"), -1);
    assert_int_equal(pm_skeleton_same_topology(&zeroed, &zeroed), 0);

    pm_clip zero_clip;
    memset(&zero_clip, 0, sizeof zero_clip);
    zero_clip.skeleton.joint_count = 3;
    zero_clip.frame_count = 2;
    zero_clip.frame_time = 0.1f;
    expect_error(pm_clip_copy(&d, &zero_clip, NULL, &err), PM_ERR_INVALID_ARGUMENT, &err, "not initialised");

    pm_skeleton s;
    PM_ASSERT_OK(pm_skeleton_create(&s, 5, NULL, NULL));
    const int32_t parents[] = {-1, 0, 7, 2, 3};
    for (int j = 0; j < 5; j++) {
        char name[8];
        snprintf(name, sizeof name, "j%d", j);
        PM_ASSERT_OK(pm_skeleton_set_name(&s, j, name, NULL));
        s.parents[j] = parents[j];
    }
    expect_error(pm_clip_create(&c, &s, 2, 0.1f, NULL, &err), PM_ERR_INVALID_ARGUMENT, &err, "parent 7");
    pm_skeleton_destroy(&s);
}

/* A joint count below 1 would index frames before the arrays. */
static void test_sample_checks_the_joint_count(void **state) {
    (void)state;
    pm_clip c;
    pm_error err;
    pm_test_ramp_clip(&c, 4, 0.1f);
    pm_quat r[9];
    pm_vec3 t[9];
    const int counts[] = {-1, 0, PM_MAX_JOINTS + 1};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        c.skeleton.joint_count = counts[i];
        expect_error(pm_clip_sample(r, t, &c, 0.15f, &err), PM_ERR_INVALID_ARGUMENT, &err, "joint_count");
    }
    c.skeleton.joint_count = 9;
    PM_ASSERT_OK(pm_clip_sample(r, t, &c, 0.15f, &err));
    pm_clip_destroy(&c);
}

/* A frame time that passes validation (1e30 s) resampled at 10 kHz asks for ~1e35 frames:
 * counted in doubles and refused, not converted to an integer type it overflows. */
static void test_resample_refuses_counts_beyond_the_frame_limit(void **state) {
    (void)state;
    pm_clip c, r;
    pm_error err;
    pm_test_ramp_clip(&c, 20, 1e30f);
    PM_ASSERT_OK(pm_clip_validate(&c, &err));
    expect_error(pm_clip_resample(&r, &c, 10000.0f, &err), PM_ERR_LIMIT, &err, "limit 10000000");
    c.looping = 1;
    expect_error(pm_clip_resample(&r, &c, 10000.0f, &err), PM_ERR_LIMIT, &err, "would have");
    c.looping = 0;
    c.frame_time = 3e38f; /* the duration overflows a float */
    expect_error(pm_clip_resample(&r, &c, 30.0f, &err), PM_ERR_LIMIT, &err, "would have");
    pm_clip_destroy(&c);
}

/* PM_MAX_FRAMES x PM_MAX_JOINTS (4.1e10) passes a 32-bit size_t: a clip of 2^20 frames of 4096
 * joints wrapped its count to nothing, was allocated a sliver and then filled past it. On such a
 * system it is now out of memory, made directly or by resampling; a 64-bit size_t holds every
 * count the limits allow, and the test has nothing to check. */
static void test_clip_past_the_address_space(void **state) {
    (void)state;
    if (SIZE_MAX / PM_MAX_JOINTS >= (size_t)PM_MAX_FRAMES) {
        print_message("(a 64-bit size_t holds every frame count: nothing to check)\n");
        return;
    }
    pm_skeleton s;
    pm_test_blend_skeleton(&s, PM_MAX_JOINTS);
    for (int j = 0; j < PM_MAX_JOINTS; j++) s.parents[j] = j ? 0 : -1; /* a chain would be too deep */
    pm_clip c, r;
    pm_error err;
    const int wraps = (int)(SIZE_MAX / PM_MAX_JOINTS) + 1; /* frames x joints = SIZE_MAX + 1 */
    for (int frames = wraps; frames <= wraps + 2; frames++)
        expect_error(pm_clip_create(&c, &s, frames, 0.1f, NULL, &err), PM_ERR_OUT_OF_MEMORY, &err,
                     "more than the address space");
    PM_ASSERT_OK(pm_clip_create(&c, &s, 2, 1000.0f, NULL, &err));
    expect_error(pm_clip_resample(&r, &c, (float)(wraps - 1) / 1000.0f, &err), PM_ERR_OUT_OF_MEMORY, &err,
                 "out of memory for");
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

/* Looping is 0 or 1; curve_count is >= 0 and matches the curves array (the library's arrays
 * end in a zeroed entry, so a count beyond it is caught); unit_scale and source_up are sane. */
static void test_clip_validate_checks_flags_and_counts(void **state) {
    (void)state;
    pm_clip c;
    pm_error err;
    pm_test_ramp_clip(&c, 4, 0.1f);
    const float v[4] = {1, 2, 3, 4};
    PM_ASSERT_OK(pm_clip_add_curve(&c, "speed", v, NULL));
    PM_ASSERT_OK(pm_clip_validate(&c, &err));
    c.looping = 7;
    expect_error(pm_clip_validate(&c, &err), PM_ERR_INVALID_ARGUMENT, &err, "looping is 7");
    c.looping = 1;
    PM_ASSERT_OK(pm_clip_validate(&c, &err));
    c.curve_count = 5;
    expect_error(pm_clip_validate(&c, &err), PM_ERR_INVALID_ARGUMENT, &err, "curve_count is 5");
    pm_clip copy;
    expect_error(pm_clip_copy(&copy, &c, NULL, &err), PM_ERR_INVALID_ARGUMENT, &err, "curve_count");
    c.curve_count = -1;
    expect_error(pm_clip_validate(&c, &err), PM_ERR_INVALID_ARGUMENT, &err, "curve_count -1");
    c.curve_count = 1;
    c.curves[0].values[2] = NAN;
    expect_error(pm_clip_validate(&c, &err), PM_ERR_NUMERIC, &err, "curve 'speed'");
    c.curves[0].values[2] = 3;
    c.unit_scale = NAN;
    expect_error(pm_clip_validate(&c, &err), PM_ERR_INVALID_ARGUMENT, &err, "unit_scale");
    c.unit_scale = 1.0f;
    c.source_up = (pm_up_axis)9;
    expect_error(pm_clip_validate(&c, &err), PM_ERR_INVALID_ARGUMENT, &err, "source_up");
    c.source_up = PM_UP_Y;
    expect_error(pm_clip_set_name(&c, "a\nb", &err), PM_ERR_INVALID_ARGUMENT, &err, "control character");
    PM_ASSERT_OK(pm_clip_validate(&c, &err));
    pm_clip_destroy(&c);
}

/* A clip operation may write over its input: the result replaces it only on success, nothing
 * leaks (ASan), and a failure leaves the input whole. */
static void test_out_may_be_an_input(void **state) {
    (void)state;
    pm_clip a, b, ref;
    pm_error err;
    pm_test_ramp_clip(&a, 10, 0.1f);
    PM_ASSERT_OK(pm_clip_set_name(&a, "ramp", NULL));

    PM_ASSERT_OK(pm_clip_resample(&ref, &a, 20.0f, &err));
    PM_ASSERT_OK(pm_clip_resample(&a, &a, 20.0f, &err));
    assert_int_equal(a.frame_count, ref.frame_count);
    assert_memory_equal(a.translations, ref.translations, (size_t)ref.frame_count * 9 * sizeof(pm_vec3));
    assert_string_equal(a.name, "ramp");
    pm_clip_destroy(&ref);

    PM_ASSERT_OK(pm_clip_trim(&a, &a, 2, 5, &err));
    assert_int_equal(a.frame_count, 5);
    pm_test_assert_vec3_near(a.translations[0], pm_vec3_make(1.0f, 0.95f, 0), 1e-6f);
    /* Failures leave the input as it was. */
    expect_error(pm_clip_trim(&a, &a, 3, 5, &err), PM_ERR_INVALID_ARGUMENT, &err, "outside");
    expect_error(pm_clip_resample(&a, &a, -1.0f, &err), PM_ERR_INVALID_ARGUMENT, &err, "fps");
    expect_error(pm_clip_mirror(&a, &a, NULL, 5, &err), PM_ERR_INVALID_ARGUMENT, &err, "axis 5");
    assert_int_equal(a.frame_count, 5);
    PM_ASSERT_OK(pm_clip_validate(&a, &err));

    PM_ASSERT_OK(pm_clip_mirror(&ref, &a, NULL, 0, &err));
    PM_ASSERT_OK(pm_clip_mirror(&a, &a, NULL, 0, &err));
    assert_memory_equal(a.rotations, ref.rotations, (size_t)5 * 9 * sizeof(pm_quat));
    pm_clip_destroy(&ref);

    PM_ASSERT_OK(pm_clip_copy(&a, &a, NULL, &err));
    PM_ASSERT_OK(pm_clip_validate(&a, &err));
    PM_ASSERT_OK(pm_clip_create(&a, &a.skeleton, 3, 0.2f, NULL, &err));
    assert_int_equal(a.frame_count, 3);
    assert_string_equal(a.skeleton.names[3], "LeftFoot");

    pm_test_ramp_clip(&b, 6, 0.1f);
    PM_ASSERT_OK(pm_clip_extract_additive(&ref, &a, &b, 0, &err));
    PM_ASSERT_OK(pm_clip_extract_additive(&a, &a, &b, 0, &err));
    assert_memory_equal(a.translations, ref.translations, (size_t)3 * 9 * sizeof(pm_vec3));
    pm_clip_destroy(&ref);
    PM_ASSERT_OK(pm_clip_extract_additive(&b, &a, &b, -1, &err));
    assert_int_equal(b.frame_count, 3);
    expect_error(pm_clip_extract_additive(&b, &b, &a, 99, &err), PM_ERR_INVALID_ARGUMENT, &err, "base frame 99");
    assert_int_equal(b.frame_count, 3);
    pm_clip_destroy(&b);

    pm_skeleton s;
    pm_test_biped(&s, pm_test_biped_names);
    PM_ASSERT_OK(pm_skeleton_copy(&s, &s, NULL, &err));
    PM_ASSERT_OK(pm_skeleton_validate(&s, &err));
    pm_skeleton_destroy(&s);
    pm_clip_destroy(&a);
}

/* The joint count is checked where a skeleton is made and where it is read back, the channel
 * count per joint too; a clip's frame count and frame time where a clip is validated; a curve
 * without values, a curve added to a clip without frames, and a clip without rest arrays
 * converted to Y up are named. */
static void test_counts_and_missing_arrays(void **state) {
    (void)state;
    pm_skeleton s;
    pm_error err;
    expect_error(pm_skeleton_create(&s, 0, NULL, &err), PM_ERR_LIMIT, &err, "skeleton: 0 joints is outside 1..4096");
    expect_error(pm_skeleton_create(&s, PM_MAX_JOINTS + 1, NULL, &err), PM_ERR_LIMIT, &err, "skeleton: 4097 joints");
    pm_test_biped(&s, pm_test_biped_names);
    s.channel_counts[5] = 7;
    expect_error(pm_skeleton_validate(&s, &err), PM_ERR_INVALID_ARGUMENT, &err,
                 "skeleton: joint 'RightLeg' has 7 channels (at most 6)");
    s.channel_counts[5] = 0;
    s.joint_count = 0;
    expect_error(pm_skeleton_validate(&s, &err), PM_ERR_LIMIT, &err, "skeleton: 0 joints is outside 1..4096");
    s.joint_count = 9;
    pm_skeleton_destroy(&s);

    pm_clip c;
    pm_test_ramp_clip(&c, 4, 0.1f);
    PM_ASSERT_OK(pm_clip_set_name(&c, "ramp", NULL));
    c.frame_count = 0;
    expect_error(pm_clip_validate(&c, &err), PM_ERR_LIMIT, &err, "clip 'ramp': 0 frames is outside 1..10000000");
    c.frame_count = 4;
    c.frame_time = -0.1f;
    expect_error(pm_clip_validate(&c, &err), PM_ERR_INVALID_ARGUMENT, &err, "clip 'ramp': frame time -0.1 must be positive");
    c.frame_time = 0.1f;
    const float v[4] = {1, 2, 3, 4};
    PM_ASSERT_OK(pm_clip_add_curve(&c, "speed", v, NULL));
    float *values = c.curves[0].values;
    c.curves[0].values = NULL;
    expect_error(pm_clip_validate(&c, &err), PM_ERR_INVALID_ARGUMENT, &err, "clip 'ramp': curve 0 has no values");
    c.curves[0].values = values;
    pm_vec3 *rest = c.skeleton.rest_translations;
    c.skeleton.rest_translations = NULL;
    expect_error(pm_clip_z_up_to_y_up(&c, &err), PM_ERR_INVALID_ARGUMENT, &err,
                 "pm_clip_z_up_to_y_up: the clip is not initialised (create it with pm_clip_create)");
    c.skeleton.rest_translations = rest;
    PM_ASSERT_OK(pm_clip_validate(&c, &err));
    pm_clip empty;
    memset(&empty, 0, sizeof empty);
    expect_error(pm_clip_add_curve(&empty, "speed", v, &err), PM_ERR_INVALID_ARGUMENT, &err,
                 "pm_clip_add_curve: the clip is not initialised (0 frames)");
    assert_int_equal(empty.curve_count, 0);
    pm_clip_destroy(&c);
}

/* Root extraction checks the clip it reads: no frames or frame time, and a skeleton whose
 * parents do not come first, named with the clip; the track is left empty. */
static void test_root_track_checks_the_clip(void **state) {
    (void)state;
    pm_root_track t;
    pm_error err;
    pm_clip c;
    memset(&c, 0, sizeof c);
    expect_error(pm_root_track_extract(&t, &c, NULL, NULL, &err), PM_ERR_INVALID_ARGUMENT, &err,
                 "root: clip 'clip' is not initialised (frames, frame time)");
    assert_null(t.frames);
    pm_test_ramp_clip(&c, 6, 0.1f);
    PM_ASSERT_OK(pm_clip_set_name(&c, "ramp", NULL));
    c.frame_time = NAN;
    expect_error(pm_root_track_extract(&t, &c, NULL, NULL, &err), PM_ERR_INVALID_ARGUMENT, &err,
                 "root: clip 'ramp' is not initialised");
    c.frame_time = 0.1f;
    c.skeleton.parents[2] = 6;
    expect_error(pm_root_track_extract(&t, &c, NULL, NULL, &err), PM_ERR_INVALID_ARGUMENT, &err,
                 "root: clip 'ramp': skeleton: joint 2 has parent 6 (parents must come first)");
    assert_null(t.frames);
    c.skeleton.parents[2] = 1;
    /* Values that are not finite: smoothing would spread one NaN over the whole track. */
    int jc = c.skeleton.joint_count;
    pm_vec3 keep = c.translations[3 * jc];
    c.translations[3 * jc].x = NAN;
    expect_error(pm_root_track_extract(&t, &c, NULL, NULL, &err), PM_ERR_NUMERIC, &err,
                 "root: clip 'ramp': frame 3: the hips position is not finite");
    assert_null(t.frames);
    c.translations[3 * jc] = keep;
    pm_quat q = c.rotations[4 * jc];
    c.rotations[4 * jc].w = INFINITY;
    pm_root_def facing = pm_default_root_def();
    facing.ground_mode = PM_GROUND_ZERO;
    facing.facing_mode = PM_FACING_HIPS_AXIS;
    expect_error(pm_root_track_extract(&t, &c, &facing, NULL, &err), PM_ERR_NUMERIC, &err,
                 "root: clip 'ramp': frame 4: the facing is not finite");
    c.rotations[4 * jc] = q;
    /* Feet that are nowhere on every frame leave no floor to stand the root on. */
    pm_vec3 feet[6][2];
    for (int f = 0; f < 6; f++) {
        feet[f][0] = c.translations[(size_t)f * jc + 3];
        feet[f][1] = c.translations[(size_t)f * jc + 6];
        c.translations[(size_t)f * jc + 3].y = c.translations[(size_t)f * jc + 6].y = NAN;
    }
    expect_error(pm_root_track_extract(&t, &c, NULL, NULL, &err), PM_ERR_NUMERIC, &err,
                 "root: clip 'ramp': the floor height is not finite");
    assert_null(t.frames);
    for (int f = 0; f < 6; f++) {
        c.translations[(size_t)f * jc + 3] = feet[f][0];
        c.translations[(size_t)f * jc + 6] = feet[f][1];
    }
    PM_ASSERT_OK(pm_root_track_extract(&t, &c, NULL, NULL, &err));
    assert_int_equal(t.frame_count, 6);
    pm_root_track_destroy(&t);
    pm_clip_destroy(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_clip_functions_report_errors),
        cmocka_unit_test(test_skeleton_validate_checks_every_field),
        cmocka_unit_test(test_uninitialised_skeletons_are_refused),
        cmocka_unit_test(test_sample_checks_the_joint_count),
        cmocka_unit_test(test_resample_refuses_counts_beyond_the_frame_limit),
        cmocka_unit_test(test_clip_past_the_address_space),
        cmocka_unit_test(test_clip_validate_checks_flags_and_counts),
        cmocka_unit_test(test_out_may_be_an_input),
        cmocka_unit_test(test_counts_and_missing_arrays),
        cmocka_unit_test(test_root_track_checks_the_clip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
