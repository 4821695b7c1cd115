/* The clip survey on synthetic clips whose answers are known by construction: the rest-pose
 * lead-in test's thresholds (which joints count as animating, how close to the zero pose frame 0
 * must be, in absolute terms and against the clip's typical pose, that frame 1 must be farther),
 * the shortest clips it reads, and the floor's robustness to a glitch below it. (The real clips:
 * test_bvh_mocap.c.) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clip_internal.h"
#include "support.h"

#define JOINTS 9
#define DEG (PM_PI / 180.0f)

/* A pm_test_biped clip in which every joint below the hips is bent about X by `first` degrees
 * at frame 0, `second` at frame 1 and about `typical` later (a degree either way, so that each
 * joint animates). */
static void bent_clip(pm_clip *c, int frames, float first, float second, float typical) {
    pm_test_biped_clip(c, frames, 1.0f / 30.0f);
    for (int f = 0; f < frames; f++) {
        float deg = f == 0 ? first : f == 1 ? second : typical + (f % 3 - 1) * 1.0f;
        for (int j = 1; j < JOINTS; j++)
            c->rotations[(size_t)f * JOINTS + j] = pm_quat_from_axis_angle(pm_test_unit_axis(0), deg * DEG);
        c->translations[(size_t)f * JOINTS] = pm_vec3_make(0.0f, 0.95f, 0.02f * (float)f);
    }
}

/* The survey's answer, which pm_clip_rest_lead_in (what a database build asks) must repeat. */
static int rest_lead_in(const pm_clip *c) {
    pm_clip_survey s;
    PM_ASSERT_OK(pm_clip_survey_compute(&s, c, NULL));
    int lead_in = -1;
    PM_ASSERT_OK(pm_clip_rest_lead_in(&lead_in, c, NULL));
    assert_int_equal(lead_in, s.first_frame_is_rest);
    return s.first_frame_is_rest;
}

static void test_rest_lead_in_thresholds(void **state) {
    (void)state;
    static const struct {
        float first, second, typical;
        int rest;
        const char *why;
    } cases[] = {
        {0.0f, 30.0f, 30.0f, 1, "a zero-pose frame 0"},
        {4.7f, 30.0f, 30.0f, 1, "frame 0 within 5 degrees of the zero pose"},
        {5.3f, 30.0f, 30.0f, 0, "frame 0 more than 5 degrees from the zero pose"},
        {3.0f, 10.0f, 10.0f, 1, "frame 0 within 0.35 of the typical angle"},
        {4.0f, 10.0f, 10.0f, 0, "frame 0 beyond 0.35 of the typical angle"},
        {3.0f, 2.0f, 30.0f, 0, "frame 1 nearer the zero pose than frame 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pm_clip c;
        bent_clip(&c, 40, cases[i].first, cases[i].second, cases[i].typical);
        int rest = rest_lead_in(&c);
        if (rest != cases[i].rest) fail_msg("%s: first_frame_is_rest %d, expected %d", cases[i].why, rest, cases[i].rest);
        pm_clip_destroy(&c);
    }
}

/* A joint that moves only a few degrees still animates: held far from the zero pose, it keeps
 * frame 0 from reading as a rest pose even though every other joint starts at zero. */
static void test_rest_lead_in_counts_small_movements(void **state) {
    (void)state;
    pm_clip c;
    bent_clip(&c, 40, 0.0f, 30.0f, 30.0f);
    assert_int_equal(rest_lead_in(&c), 1);
    for (int f = 0; f < c.frame_count; f++) /* the head: 60 degrees, swaying 5 either way */
        c.rotations[(size_t)f * JOINTS + 8] = pm_quat_from_axis_angle(pm_test_unit_axis(2), (60.0f + (f % 3 - 1) * 5.0f) * DEG);
    c.rotations[8] = pm_quat_from_axis_angle(pm_test_unit_axis(2), 60.0f * DEG);
    assert_int_equal(rest_lead_in(&c), 0);
    pm_clip_destroy(&c);
}

/* Three frames are enough to read a lead-in; two are not. */
static void test_rest_lead_in_short_clips(void **state) {
    (void)state;
    pm_clip c;
    bent_clip(&c, 3, 0.0f, 30.0f, 35.0f);
    assert_int_equal(rest_lead_in(&c), 1);
    pm_clip_destroy(&c);
    bent_clip(&c, 2, 0.0f, 30.0f, 35.0f);
    assert_int_equal(rest_lead_in(&c), 0);
    pm_clip_destroy(&c);
}

/* The floor is the 5th percentile of the lowest foot: one frame sunk half a metre below it (a
 * glitch) does not move it; the hips' height above the feet is the median. */
static void test_floor_ignores_a_glitch(void **state) {
    (void)state;
    pm_clip c;
    pm_test_biped_clip(&c, 40, 1.0f / 30.0f);
    for (int f = 0; f < 40; f++) c.translations[(size_t)f * JOINTS] = pm_vec3_make(0.0f, f == 7 ? 0.45f : 0.95f, 0.02f * (float)f);
    pm_clip_survey s;
    PM_ASSERT_OK(pm_clip_survey_compute(&s, &c, NULL));
    /* The feet hang 0.89 m below the hips (0.05 + 0.42 + 0.42). */
    if (!(fabsf(s.floor_height - 0.06f) < 1e-5f)) fail_msg("floor at %g m, expected 0.06", (double)s.floor_height);
    if (!(fabsf(s.hip_height - 0.89f) < 1e-5f)) fail_msg("hips %g m above the feet, expected 0.89", (double)s.hip_height);
    pm_clip_destroy(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rest_lead_in_thresholds),
        cmocka_unit_test(test_rest_lead_in_counts_small_movements),
        cmocka_unit_test(test_rest_lead_in_short_clips),
        cmocka_unit_test(test_floor_ignores_a_glitch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
