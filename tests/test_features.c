/* Feature extraction on clips whose features are known in closed form. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

enum { HIPS, LUP, LFOOT, RUP, RFOOT, JOINTS };

/* Hips at height 1, legs 0.1 m to each side; the root walks at `speed` along its heading,
 * which turns at `yaw_rate` (rad/s). */
static void make_clip(pm_clip *c, int frames, float fps, float speed, float yaw_rate, int looping) {
    pm_skeleton s;
    pm_test_walker(&s, 0);
    PM_ASSERT_OK(pm_clip_create(c, &s, frames, 1.0f / fps, NULL, NULL));
    pm_skeleton_destroy(&s);
    pm_clip_set_name(c, "walk", NULL);
    c->looping = looping;
    pm_vec3 p = pm_vec3_make(0, 1, 0);
    for (int f = 0; f < frames; f++) {
        float yaw = yaw_rate * (float)f / fps;
        c->rotations[(size_t)f * JOINTS + HIPS] = pm_quat_from_yaw(yaw);
        c->translations[(size_t)f * JOINTS + HIPS] = p;
        /* Exact arc: integrate at the midpoint heading of the step. */
        float mid = yaw_rate * ((float)f + 0.5f) / fps;
        p = pm_vec3_add(p, pm_vec3_scale(pm_vec3_make(sinf(mid), 0, cosf(mid)), speed / fps));
    }
}

static pm_root_def exact_root(void) {
    pm_root_def r = pm_default_root_def();
    r.position_smoothing = 0.0f;
    r.facing_smoothing = 0.0f;
    r.ground_mode = PM_GROUND_ZERO;
    return r;
}

/* The left foot's phase (two values a frame) of every frame of c, with the exact root. */
static void extract_left_foot_phase(float *out_rows, const pm_clip *c) {
    pm_schema s;
    pm_schema_init(&s);
    pm_channel_def ph = pm_default_channel_def(PM_FEATURE_PHASE);
    snprintf(ph.bone, sizeof ph.bone, "LeftFoot");
    assert_true(pm_schema_add(&s, &ph, NULL) >= 0);
    pm_root_def root = exact_root();
    PM_ASSERT_OK(pm_features_extract(out_rows, 2, NULL, c, &s, &root, NULL));
}

/* A walk whose left foot is heights[f] above the ground at frame f: from frame `first` on, the
 * foot's phase moves by 2 pi / stride each frame, one turn per stride whatever the height does
 * within it. */
static void expect_phase_per_stride(const float *heights, int frames, int stride, int first) {
    pm_clip c;
    make_clip(&c, frames, 30.0f, 1.0f, 0.0f, 0);
    for (int f = 0; f < frames; f++)
        c.translations[(size_t)f * JOINTS + LFOOT] = pm_vec3_make(0.0f, -0.9f + heights[f], 0.0f);
    float *rows = calloc((size_t)frames * 2, sizeof(float));
    extract_left_foot_phase(rows, &c);
    for (int f = first; f < frames; f++) {
        float step = atan2f(rows[f * 2 + 1], rows[f * 2]) - atan2f(rows[(f - 1) * 2 + 1], rows[(f - 1) * 2]);
        if (step < 0.0f) step += 2.0f * PM_PI;
        if (fabsf(step - 2.0f * PM_PI / (float)stride) > 0.05f)
            fail_msg("frame %d: the phase moved by %g rad (one stride is %d frames: %g)", f, (double)step, stride,
                     (double)(2.0f * PM_PI / (float)stride));
    }
    free(rows);
    pm_clip_destroy(&c);
}

static void test_straight_walk(void **state) {
    (void)state;
    pm_clip c;
    make_clip(&c, 91, 30.0f, 1.5f, 0.0f, 0);
    pm_schema s;
    PM_ASSERT_OK(pm_schema_preset(&s, "ue-locomotion", NULL));
    int card = pm_schema_cardinality(&s);
    float *rows = calloc((size_t)c.frame_count * card, sizeof(float));
    uint8_t *bt = calloc((size_t)c.frame_count, 1);
    pm_root_def root = exact_root();
    PM_ASSERT_OK(pm_features_extract(rows, (size_t)card, bt, &c, &s, &root, NULL));
    const float *r = rows + 30 * card; /* t = 1 s */
    /* -0.4 s PositionXY: 0.6 m behind. */
    assert_float_equal(r[0], 0.0f, 1e-4);
    assert_float_equal(r[1], -0.6f, 1e-4);
    /* 0 s VelocityXY + FacingXY. */
    assert_float_equal(r[2], 0.0f, 1e-4);
    assert_float_equal(r[3], 1.5f, 1e-3);
    assert_float_equal(r[4], 0.0f, 1e-5);
    assert_float_equal(r[5], 1.0f, 1e-5);
    /* 0.35 s PositionXY + FacingXY. */
    assert_float_equal(r[7], 0.525f, 1e-4);
    assert_float_equal(r[9], 1.0f, 1e-5);
    /* 0.7 s VelocityXY, PositionXY, FacingXY. */
    assert_float_equal(r[11], 1.5f, 1e-3);
    assert_float_equal(r[13], 1.05f, 1e-4);
    /* Left foot: 0.1 m to the left (+x), 0.1 m above the ground (y = 1 - 0.9). */
    assert_float_equal(r[16], 0.1f, 1e-5);
    assert_float_equal(r[17], 0.1f, 1e-5);
    assert_float_equal(r[18], 0.0f, 1e-5);
    /* Its velocity in root space: straight ahead. */
    assert_float_equal(r[21], 1.5f, 1e-3);
    /* The first frame's past sample clamps to the start. */
    assert_float_equal(rows[1], 0.0f, 1e-5);
    /* Block transitions: the 0.7 s window leaves the 3 s clip after t = 2.3 s. */
    for (int f = 0; f < c.frame_count; f++) assert_int_equal(bt[f], (float)f / 30.0f + 0.7f > 3.0f + 1e-4f);
    free(rows);
    free(bt);
    pm_clip_destroy(&c);
}

static void test_loop_extrapolates(void **state) {
    (void)state;
    pm_clip c;
    make_clip(&c, 60, 30.0f, 1.0f, 0.0f, 1);
    pm_schema s;
    PM_ASSERT_OK(pm_schema_preset(&s, "holden27", NULL));
    int card = 27;
    float *rows = calloc((size_t)c.frame_count * card, sizeof(float));
    uint8_t *bt = calloc((size_t)c.frame_count, 1);
    pm_root_def root = exact_root();
    PM_ASSERT_OK(pm_features_extract(rows, (size_t)card, bt, &c, &s, &root, NULL));
    /* At the last frame, +1 s lies in the next cycle: still 1 m ahead, nothing blocked. */
    const float *r = rows + 59 * card;
    assert_float_equal(r[15], 0.0f, 1e-4);
    assert_float_equal(r[16], 1.0f / 3.0f, 1e-3);
    assert_float_equal(r[20], 1.0f, 1e-3);
    for (int f = 0; f < c.frame_count; f++) assert_int_equal(bt[f], 0);
    free(rows);
    free(bt);
    pm_clip_destroy(&c);
}

/* With the default root smoothing a loop is smoothed through its cycle: a clip that travels is
 * never averaged with ground a loop length away, so a steady walk or turn gives the same
 * features at its ends as in its middle (one cycle is the whole clip here). */
static void test_loop_smoothing_follows_the_cycle(void **state) {
    (void)state;
    for (int turning = 0; turning < 2; turning++) {
        pm_clip c;
        make_clip(&c, 60, 30.0f, 1.0f, turning ? 0.8f : 0.0f, 1);
        pm_schema s;
        PM_ASSERT_OK(pm_schema_preset(&s, "holden27", NULL));
        const int card = 27;
        float *rows = calloc((size_t)c.frame_count * card, sizeof(float));
        pm_root_def root = pm_default_root_def();
        root.ground_mode = PM_GROUND_ZERO;
        PM_ASSERT_OK(pm_features_extract(rows, (size_t)card, NULL, &c, &s, &root, NULL));
        /* A steady motion: every frame's features equal the middle frame's. */
        const float *mid = rows + 30 * card;
        for (int f = 0; f < c.frame_count; f++)
            for (int d = 0; d < card; d++)
                if (fabsf(rows[(size_t)f * card + d] - mid[d]) > 2e-3f)
                    fail_msg("%s loop: frame %d dim %d is %g, the middle frame's %g", turning ? "turning" : "straight", f, d,
                             (double)rows[(size_t)f * card + d], (double)mid[d]);
        if (!turning) {
            assert_float_equal(mid[20], 1.0f, 1e-3); /* +1 s: 1 m ahead */
            assert_float_equal(mid[14], 1.0f, 1e-3); /* hip velocity */
        }
        free(rows);
        pm_clip_destroy(&c);
    }
}

/* Gait phase: a stance whose foot height dips twice (heel, then toe) is one contact, and the
 * phase runs once per stride: 0 at each touchdown, up by 2 pi / stride frames per frame. */
static void test_phase_counts_a_stance_once(void **state) {
    (void)state;
    enum { stride = 30, frames = 120 };
    float h[frames];
    for (int f = 0; f < frames; f++) {
        int k = f % stride;
        /* Frames 0..14 stance, its height dipping at 2 and at 12 (a third of a second apart, farther
         * than any two steps could be mistaken to be) with a 3 cm bump between; then a swing. */
        h[f] = k < 15 ? 0.01f + 0.03f * sinf(PM_PI * (float)(k - 2) / 10.0f) * (float)(k > 2 && k < 12)
                      : 0.01f + 0.15f * sinf(PM_PI * (float)(k - 14) / 16.0f);
    }
    expect_phase_per_stride(h, frames, stride, stride);
}

/* The touchdown thresholds are fractions of the height's 10th-90th percentile range
 * (docs/SCHEMA.md): two one-frame glitches a metre up (a marker swap) would stretch a min-max
 * range until no swing rose above 60% of it, and the foot would have no phase at all. */
static void test_phase_range_ignores_glitches(void **state) {
    (void)state;
    enum { stride = 30, frames = 120 };
    float h[frames];
    for (int f = 0; f < frames; f++) {
        int k = f % stride;
        h[f] = k < 15 ? 0.01f : 0.01f + 0.15f * sinf(PM_PI * (float)(k - 14) / 16.0f);
        if (f == 52 || f == 112) h[f] += 1.0f;
    }
    expect_phase_per_stride(h, frames, stride, 1);
}

static void test_turning(void **state) {
    (void)state;
    pm_clip c;
    const float w = 0.8f; /* rad/s */
    make_clip(&c, 120, 60.0f, 1.0f, w, 0);
    pm_schema s;
    pm_schema_init(&s);
    pm_channel_def t = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
    t.sample_count = 1;
    t.samples[0].offset = 0.5f;
    t.samples[0].flags = PM_TRAJ_FACING_DIRECTION_XY | PM_TRAJ_POSITION_XY;
    t.samples[0].weight = 1.0f;
    pm_schema_add(&s, &t, NULL);
    pm_channel_def h = pm_default_channel_def(PM_FEATURE_HEADING);
    strcpy(h.bone, "Hips");
    h.axis = 2;
    h.offset = 0.5f;
    pm_schema_add(&s, &h, NULL);
    float rows[120 * 7];
    pm_root_def root = exact_root();
    PM_ASSERT_OK(pm_features_extract(rows, 7, NULL, &c, &s, &root, NULL));
    const float *r = rows + 30 * 7;
    /* Half a second later the heading has turned by 0.4 rad towards +x (left). */
    assert_float_equal(r[2], sinf(0.4f), 2e-3);
    assert_float_equal(r[3], cosf(0.4f), 2e-3);
    /* The position on the arc of radius 1/w. */
    assert_float_equal(r[0], (1.0f - cosf(0.4f)) / w, 2e-3);
    assert_float_equal(r[1], sinf(0.4f) / w, 2e-3);
    assert_float_equal(r[4], sinf(0.4f), 2e-3);
    assert_float_equal(r[6], cosf(0.4f), 2e-3);
    pm_clip_destroy(&c);
}

/* A 10-frame clip at 30 fps with a curve "speed" of 0.5 a frame, and a schema of that curve read
 * `offset` seconds after each frame. */
static void speed_curve(pm_clip *c, pm_schema *s, float offset) {
    make_clip(c, 10, 30.0f, 1.0f, 0.0f, 0);
    float values[10];
    for (int f = 0; f < 10; f++) values[f] = (float)f * 0.5f;
    PM_ASSERT_OK(pm_clip_add_curve(c, "speed", values, NULL));
    pm_schema_init(s);
    pm_channel_def cv = pm_default_channel_def(PM_FEATURE_CURVE);
    strcpy(cv.curve, "speed");
    cv.offset = offset;
    assert_int_equal(pm_schema_add(s, &cv, NULL), 0);
}

static void test_curve_and_errors(void **state) {
    (void)state;
    pm_clip c;
    pm_schema s;
    speed_curve(&c, &s, 1.0f / 60.0f); /* halfway to the next frame */
    float rows[10];
    PM_ASSERT_OK(pm_features_extract(rows, 1, NULL, &c, &s, NULL, NULL));
    assert_float_equal(rows[3], 1.75f, 1e-5);
    assert_float_equal(rows[9], 4.5f, 1e-5); /* clamped at the end */
    /* Rows interleaved with the caller's own data (stride 3: a value, then two of the caller's,
     * a NaN among them): written around, never over, and not taken for features. */
    float mixed[30];
    for (int f = 0; f < 10; f++) mixed[3 * f] = -1.0f, mixed[3 * f + 1] = (float)f, mixed[3 * f + 2] = NAN;
    PM_ASSERT_OK(pm_features_extract(mixed, 3, NULL, &c, &s, NULL, NULL));
    for (int f = 0; f < 10; f++) {
        assert_true(mixed[3 * f] == rows[f]);
        assert_true(mixed[3 * f + 1] == (float)f);
        assert_true(isnan(mixed[3 * f + 2]));
    }
    pm_error err;
    strcpy(s.channels[0].curve, "missing");
    assert_int_equal(pm_features_extract(rows, 1, NULL, &c, &s, NULL, &err), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "missing"));
    pm_schema b;
    pm_schema_init(&b);
    pm_channel_def p = pm_default_channel_def(PM_FEATURE_POSITION);
    strcpy(p.bone, "Tail");
    pm_schema_add(&b, &p, NULL);
    float rows3[30];
    assert_int_equal(pm_features_extract(rows3, 3, NULL, &c, &b, NULL, &err), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "Tail"));
    assert_int_equal(pm_features_extract(rows3, 2, NULL, &c, &b, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_features_resolve_bone(&c.skeleton, "@left_foot"), LFOOT);
    assert_int_equal(pm_features_resolve_bone(&c.skeleton, "@hips"), HIPS);
    assert_int_equal(pm_features_resolve_bone(&c.skeleton, "@tail"), -1);
    pm_clip_destroy(&c);
}


/* The root def reaches the extraction through pm_features_extract: a bad one is named there
 * rather than turned into a wrong trajectory (facing_mode 2 used to act as the hips axis). */
static void test_root_def_errors(void **state) {
    (void)state;
    pm_clip c;
    make_clip(&c, 30, 30.0f, 1.0f, 0.0f, 0);
    pm_schema s;
    PM_ASSERT_OK(pm_schema_preset(&s, "ue-locomotion", NULL));
    int card = pm_schema_cardinality(&s);
    float *rows = calloc((size_t)c.frame_count * card, sizeof(float));
    pm_error err;
    pm_root_def root = exact_root();
    root.facing_mode = (pm_facing_mode)2;
    assert_int_equal(pm_features_extract(rows, (size_t)card, NULL, &c, &s, &root, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "facing_mode 2"));
    root = exact_root();
    root.facing_mode = PM_FACING_HIPS_AXIS;
    root.hips_axis = pm_vec3_zero();
    assert_int_equal(pm_features_extract(rows, (size_t)card, NULL, &c, &s, &root, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "hips_axis"));
    root = exact_root();
    root.left_upleg = root.right_upleg = LUP;
    assert_int_equal(pm_features_extract(rows, (size_t)card, NULL, &c, &s, &root, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "left_upleg and right_upleg"));
    root = exact_root();
    root.hips_axis.x = NAN; /* unused when facing from the legs, but still part of the def */
    assert_int_equal(pm_features_extract(rows, (size_t)card, NULL, &c, &s, &root, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "hips_axis"));
    /* Given joints are checked against the clip. */
    root = exact_root();
    root.hips = JOINTS;
    assert_int_equal(pm_features_extract(rows, (size_t)card, NULL, &c, &s, &root, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "hips 5 is outside -1..4"));
    /* Facing from the hips axis with explicit legs that are unused: fine. */
    root = exact_root();
    root.facing_mode = PM_FACING_HIPS_AXIS;
    root.hips_axis = pm_vec3_make(0, 0, 1);
    PM_ASSERT_OK(pm_features_extract(rows, (size_t)card, NULL, &c, &s, &root, NULL));
    free(rows);
    pm_clip_destroy(&c);
}

/* A stride whose rows would not fit (frames x stride overflowing, or beyond the limit) is
 * refused before a row is written. */
static void test_huge_strides_are_refused(void **state) {
    (void)state;
    pm_clip c;
    make_clip(&c, 10, 30.0f, 1.0f, 0.0f, 0);
    float values[10] = {0};
    PM_ASSERT_OK(pm_clip_add_curve(&c, "speed", values, NULL));
    pm_schema s;
    pm_schema_init(&s);
    pm_channel_def cv = pm_default_channel_def(PM_FEATURE_CURVE);
    strcpy(cv.curve, "speed");
    pm_schema_add(&s, &cv, NULL);
    float rows[10];
    rows[0] = 42.0f;
    pm_error err;
    const size_t strides[] = {SIZE_MAX, SIZE_MAX / 4, SIZE_MAX / 10 + 1, (size_t)PM_MAX_FEATURE_STRIDE + 1};
    for (size_t i = 0; i < sizeof strides / sizeof strides[0]; i++) {
        assert_int_equal(pm_features_extract(rows, strides[i], NULL, &c, &s, NULL, &err), PM_ERR_LIMIT);
        assert_non_null(strstr(err.message, "stride"));
        assert_true(rows[0] == 42.0f);
    }
    PM_ASSERT_OK(pm_features_extract(rows, 1, NULL, &c, &s, NULL, &err));
    pm_clip_destroy(&c);
}

/* Padding and group channels (PS2): padding writes zeros where it stands, a group writes nothing
 * and only weighs its children; every other channel's values are those of the same schema
 * without them, shifted past the padding. Values past the cardinality are zeroed too. */
static void test_padding_and_group_channels(void **state) {
    (void)state;
    pm_clip c;
    make_clip(&c, 40, 30.0f, 1.2f, 0.5f, 0);
    float speed[40];
    for (int f = 0; f < 40; f++) speed[f] = 0.1f * (float)f - 1.0f;
    PM_ASSERT_OK(pm_clip_add_curve(&c, "speed", speed, NULL));
    pm_channel_def left = pm_default_channel_def(PM_FEATURE_POSITION);
    strcpy(left.bone, "@left_foot");
    pm_channel_def right = left;
    strcpy(right.bone, "@right_foot");
    pm_channel_def curve = pm_default_channel_def(PM_FEATURE_CURVE);
    strcpy(curve.curve, "speed");
    pm_channel_def pad3 = pm_default_channel_def(PM_FEATURE_PADDING);
    pad3.size = 3;
    pm_channel_def pad1 = pm_default_channel_def(PM_FEATURE_PADDING);
    pm_channel_def group = pm_default_channel_def(PM_FEATURE_GROUP);
    group.weight = 2.0f;
    strcpy(group.group, "feet");

    pm_schema plain, padded;
    pm_schema_init(&plain);
    assert_int_equal(pm_schema_add(&plain, &left, NULL), 0);
    assert_int_equal(pm_schema_add(&plain, &right, NULL), 1);
    assert_int_equal(pm_schema_add(&plain, &curve, NULL), 2);
    pm_schema_init(&padded);
    assert_int_equal(pm_schema_add(&padded, &group, NULL), 0);
    left.parent = right.parent = 0;
    assert_int_equal(pm_schema_add(&padded, &left, NULL), 1);
    assert_int_equal(pm_schema_add(&padded, &pad3, NULL), 2);
    assert_int_equal(pm_schema_add(&padded, &right, NULL), 3);
    assert_int_equal(pm_schema_add(&padded, &curve, NULL), 4);
    assert_int_equal(pm_schema_add(&padded, &pad1, NULL), 5);
    assert_int_equal(pm_schema_cardinality(&plain), 7);
    assert_int_equal(pm_schema_cardinality(&padded), 11);

    enum { STRIDE = 13 };
    /* Where each value of the padded row comes from in the plain one (-1: padding, 0). */
    static const int from[11] = {0, 1, 2, -1, -1, -1, 3, 4, 5, 6, -1};
    float *a = calloc((size_t)c.frame_count * 7, sizeof(float));
    float *b = malloc((size_t)c.frame_count * STRIDE * sizeof(float));
    for (int i = 0; i < c.frame_count * STRIDE; i++) b[i] = NAN; /* every row value must be written */
    pm_root_def root = exact_root();
    PM_ASSERT_OK(pm_features_extract(a, 7, NULL, &c, &plain, &root, NULL));
    PM_ASSERT_OK(pm_features_extract(b, STRIDE, NULL, &c, &padded, &root, NULL));
    for (int f = 0; f < c.frame_count; f++) {
        const float *ra = a + (size_t)f * 7, *rb = b + (size_t)f * STRIDE;
        for (int d = 0; d < 11; d++) {
            float expect = from[d] >= 0 ? ra[from[d]] : 0.0f;
            if (!(rb[d] == expect)) fail_msg("frame %d value %d is %g, expected %g", f, d, (double)rb[d], (double)expect);
        }
        for (int d = 11; d < STRIDE; d++) assert_true(isnan(rb[d])); /* past the row: the caller's, untouched */
    }
    assert_float_equal(b[5 * STRIDE + 9], speed[5], 0.0); /* the curve, at offset 0 */
    free(a);
    free(b);
    pm_clip_destroy(&c);
}

/* A foot that never lifts has no touchdowns: its phase is (0, 0) on every frame, as the schema
 * documents, and not a made-up cycle. */
static void test_phase_without_contacts_is_zero(void **state) {
    (void)state;
    pm_clip c;
    make_clip(&c, 60, 30.0f, 1.0f, 0.0f, 0);
    float rows[60 * 2];
    for (int i = 0; i < 60 * 2; i++) rows[i] = NAN;
    extract_left_foot_phase(rows, &c);
    for (int i = 0; i < 60 * 2; i++)
        if (rows[i] != 0.0f) fail_msg("frame %d: phase value %d is %g, expected 0", i / 2, i % 2, (double)rows[i]);
    pm_clip_destroy(&c);
}

/* Extraction reads a single clip: a channel of another character's role (multi-character
 * assets) is refused by channel, and finite values whose features overflow (a curve jumping
 * between +-3e38, read half a frame ahead) are reported by clip, feature and frame. */
static void test_role_and_overflow_errors(void **state) {
    (void)state;
    pm_clip c;
    make_clip(&c, 10, 30.0f, 1.0f, 0.0f, 0);
    float values[10] = {0, 0, 0, 3e38f, -3e38f, 0, 0, 0, 0, 0};
    PM_ASSERT_OK(pm_clip_add_curve(&c, "wild", values, NULL));
    pm_schema s;
    pm_schema_init(&s);
    pm_channel_def cv = pm_default_channel_def(PM_FEATURE_CURVE);
    strcpy(cv.curve, "wild");
    pm_channel_def v = pm_default_channel_def(PM_FEATURE_VELOCITY);
    strcpy(v.bone, "Hips");
    v.role = 2;
    assert_int_equal(pm_schema_add(&s, &cv, NULL), 0);
    assert_int_equal(pm_schema_add(&s, &v, NULL), 1);
    float rows[10 * 4];
    pm_error err;
    assert_int_equal(pm_features_extract(rows, 4, NULL, &c, &s, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "schema channel 1 (Velocity Hips) reads role 2"));
    s.channel_count = 1;
    s.channels[0].offset = 0.5f / 30.0f;
    assert_int_equal(pm_features_extract(rows, 1, NULL, &c, &s, NULL, &err), PM_ERR_NUMERIC);
    assert_string_equal(err.message, "walk: feature 0 of frame 3 is not finite");
    s.channels[0].offset = 0.0f; /* on the frames themselves: the values as they are */
    PM_ASSERT_OK(pm_features_extract(rows, 1, NULL, &c, &s, NULL, &err));
    assert_true(rows[3] == 3e38f && rows[4] == -3e38f);
    pm_clip_destroy(&c);
}

/* Every trajectory flag of PS2, 3D and XY, at a future and a past offset, on a clip turning at a
 * constant rate: each value is known in closed form (the arc of radius speed / yaw rate). The
 * root walks on a constant floor, so the 3D flags' vertical components are zero. */
static void test_every_trajectory_flag(void **state) {
    (void)state;
    pm_clip c;
    const float w = 0.8f, v = 1.5f; /* rad/s, m/s */
    make_clip(&c, 120, 60.0f, v, w, 0);
    pm_schema s;
    pm_schema_init(&s);
    pm_channel_def t = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
    t.sample_count = 2;
    t.samples[0].offset = 0.5f;
    t.samples[0].flags = PM_TRAJ_ALL;
    t.samples[1].offset = -0.5f;
    t.samples[1].flags = PM_TRAJ_ALL;
    assert_true(pm_schema_add(&s, &t, NULL) == 0);
    const int card = pm_schema_cardinality(&s);
    assert_int_equal(card, 2 * (4 * 3 + 4 * 2));
    float *rows = calloc((size_t)c.frame_count * card, sizeof(float));
    pm_root_def root = exact_root();
    PM_ASSERT_OK(pm_features_extract(rows, (size_t)card, NULL, &c, &s, &root, NULL));
    for (int k = 0; k < 2; k++) {
        const float *r = rows + 60 * card + k * 20; /* t = 1 s: both samples inside the clip */
        const float th = w * t.samples[k].offset;
        const float px = v * (1.0f - cosf(th)) / w, pz = v * sinf(th) / w;
        const float sx = sinf(th), cz = cosf(th);
        /* Velocity, Position, VelocityDirection, FacingDirection: (x, y, z) each. */
        const float want3[12] = {v * sx, 0, v * cz, px, 0, pz, sx, 0, cz, sx, 0, cz};
        /* VelocityXY, PositionXY, VelocityDirectionXY, FacingDirectionXY: (x, z) each. */
        const float want2[8] = {v * sx, v * cz, px, pz, sx, cz, sx, cz};
        for (int i = 0; i < 12; i++)
            if (fabsf(r[i] - want3[i]) > 2e-3f) fail_msg("sample %d value %d: %g, want %g", k, i, (double)r[i], (double)want3[i]);
        for (int i = 0; i < 8; i++)
            if (fabsf(r[12 + i] - want2[i]) > 2e-3f)
                fail_msg("sample %d XY value %d: %g, want %g", k, i, (double)r[12 + i], (double)want2[i]);
    }
    free(rows);
    pm_clip_destroy(&c);
}

/* The same flags on a real walk, against the root track and forward kinematics directly: a
 * trajectory sample 20 frames (1/3 s at 60 Hz) ahead and behind, a foot's velocity (central
 * differences) and a foot's position 20 frames ahead, all in the root space of the pose's frame. */
static void test_features_of_a_real_clip(void **state) {
    (void)state;
    if (!pm_test_mocap_dir()) skip(); /* the rest of this binary needs no real clips */
    const char *path = pm_test_mocap_path("lafan1/walk1_subject1_trim.bvh");
    pm_clip src, c;
    PM_ASSERT_OK(pm_bvh_read_file(&src, path, NULL, NULL));
    PM_ASSERT_OK(pm_clip_resample(&c, &src, 60.0f, NULL));
    pm_clip_destroy(&src);
    pm_schema s;
    pm_schema_init(&s);
    pm_channel_def t = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
    t.sample_count = 2;
    t.samples[0].offset = 20.0f / 60.0f;
    t.samples[0].flags = PM_TRAJ_ALL;
    t.samples[1].offset = -20.0f / 60.0f;
    t.samples[1].flags = PM_TRAJ_POSITION_XY;
    pm_schema_add(&s, &t, NULL);
    pm_channel_def fv = pm_default_channel_def(PM_FEATURE_VELOCITY);
    strcpy(fv.bone, "@left_foot");
    pm_schema_add(&s, &fv, NULL);
    pm_channel_def fp = pm_default_channel_def(PM_FEATURE_POSITION);
    strcpy(fp.bone, "@right_foot");
    fp.offset = 20.0f / 60.0f;
    pm_schema_add(&s, &fp, NULL);
    const int card = pm_schema_cardinality(&s);
    assert_int_equal(card, 20 + 2 + 3 + 3);
    float *rows = calloc((size_t)c.frame_count * card, sizeof(float));
    pm_root_def rd = pm_default_root_def();
    PM_ASSERT_OK(pm_features_extract(rows, (size_t)card, NULL, &c, &s, &rd, NULL));
    pm_root_track rt;
    PM_ASSERT_OK(pm_root_track_extract(&rt, &c, &rd, NULL, NULL));
    const int jc = c.skeleton.joint_count;
    pm_transform *before = calloc((size_t)jc, sizeof(pm_transform)), *after = calloc((size_t)jc, sizeof(pm_transform)),
                 *ahead = calloc((size_t)jc, sizeof(pm_transform));
    const int lf = pm_features_resolve_bone(&c.skeleton, "@left_foot"), rf = pm_features_resolve_bone(&c.skeleton, "@right_foot");
    assert_true(lf >= 0 && rf >= 0);
    const float dt = c.frame_time;
    const int frames[] = {100, 200, c.frame_count / 2};
    for (int i = 0; i < 3; i++) {
        const int f = frames[i];
        const float *r = rows + (size_t)f * card;
        const pm_transform inv = pm_transform_inverse(rt.frames[f]);
        const pm_vec3 pos = pm_transform_point(inv, rt.frames[f + 20].translation);
        const pm_vec3 vel = pm_quat_rotate(
            inv.rotation, pm_vec3_scale(pm_vec3_sub(rt.frames[f + 21].translation, rt.frames[f + 19].translation), 0.5f / dt));
        const pm_vec3 face = pm_quat_rotate(inv.rotation, pm_quat_rotate(rt.frames[f + 20].rotation, pm_vec3_make(0, 0, 1)));
        const float speed = pm_vec3_length(vel), ground_speed = sqrtf(vel.x * vel.x + vel.z * vel.z);
        assert_true(speed > 0.01f);
        const float want[20] = {vel.x, vel.y, vel.z, pos.x, pos.y, pos.z, vel.x / speed, vel.y / speed, vel.z / speed,
                                face.x, face.y, face.z, vel.x, vel.z, pos.x, pos.z, vel.x / ground_speed,
                                vel.z / ground_speed, face.x, face.z};
        for (int d = 0; d < 20; d++)
            if (fabsf(r[d] - want[d]) > 1e-3f) fail_msg("frame %d value %d: %g, want %g", f, d, (double)r[d], (double)want[d]);
        const pm_vec3 past = pm_transform_point(inv, rt.frames[f - 20].translation);
        assert_float_equal(r[20], past.x, 1e-4);
        assert_float_equal(r[21], past.z, 1e-4);
        PM_ASSERT_OK(pm_clip_frame_world(before, &c, f - 1, NULL));
        PM_ASSERT_OK(pm_clip_frame_world(after, &c, f + 1, NULL));
        PM_ASSERT_OK(pm_clip_frame_world(ahead, &c, f + 20, NULL));
        const pm_vec3 foot_vel = pm_quat_rotate(
            inv.rotation, pm_vec3_scale(pm_vec3_sub(after[lf].translation, before[lf].translation), 0.5f / dt));
        assert_float_equal(r[22], foot_vel.x, 1e-3);
        assert_float_equal(r[23], foot_vel.y, 1e-3);
        assert_float_equal(r[24], foot_vel.z, 1e-3);
        const pm_vec3 foot_ahead = pm_transform_point(inv, ahead[rf].translation);
        assert_float_equal(r[25], foot_ahead.x, 1e-4);
        assert_float_equal(r[26], foot_ahead.y, 1e-4);
        assert_float_equal(r[27], foot_ahead.z, 1e-4);
    }
    free(before);
    free(after);
    free(ahead);
    free(rows);
    pm_root_track_destroy(&rt);
    pm_clip_destroy(&c);
}

/* A curve read a third of a frame after each frame: two thirds of this frame's value and a third
 * of the next's (half a frame, as above, cannot tell the blend factor from one half). */
static void test_curve_between_frames(void **state) {
    (void)state;
    pm_clip c;
    pm_schema s;
    speed_curve(&c, &s, 1.0f / 90.0f);
    float rows[10];
    PM_ASSERT_OK(pm_features_extract(rows, 1, NULL, &c, &s, NULL, NULL));
    for (int f = 0; f < 9; f++) assert_float_equal(rows[f], 0.5f * (float)f + 0.5f / 3.0f, 1e-5);
    pm_clip_destroy(&c);
}

/* A bone's velocity on the first and last frames of a clip: one-sided differences over one frame
 * at the ends of a take, through the loop cycle in a loop - also for a schema with no time window
 * at all (only the current frame's velocity), whose loop still reads one cycle either way. */
static void test_velocity_at_the_ends(void **state) {
    (void)state;
    for (int looping = 0; looping < 2; looping++) {
        pm_clip c;
        make_clip(&c, 40, 30.0f, 1.5f, 0.0f, looping);
        pm_schema s;
        pm_schema_init(&s);
        pm_channel_def v = pm_default_channel_def(PM_FEATURE_VELOCITY);
        strcpy(v.bone, "LeftFoot");
        assert_true(pm_schema_add(&s, &v, NULL) >= 0);
        float rows[40 * 3];
        pm_root_def root = exact_root();
        PM_ASSERT_OK(pm_features_extract(rows, 3, NULL, &c, &s, &root, NULL));
        for (int f = 0; f < 40; f++) {
            if (fabsf(rows[f * 3]) > 1e-3f || fabsf(rows[f * 3 + 1]) > 1e-3f || fabsf(rows[f * 3 + 2] - 1.5f) > 1e-3f)
                fail_msg("%s: frame %d: foot velocity (%g, %g, %g), want (0, 0, 1.5)", looping ? "loop" : "take", f,
                         (double)rows[f * 3], (double)rows[f * 3 + 1], (double)rows[f * 3 + 2]);
        }
        pm_clip_destroy(&c);
    }
}

/* Foot heights of strides `stride` frames long: `stance` frames on the ground at 1 cm, then a
 * half sine lifting the foot by `lift` metres. */
static void step_heights(float *h, int frames, int stride, int stance, float lift) {
    for (int f = 0; f < frames; f++) {
        int k = f % stride;
        h[f] = k < stance ? 0.01f : 0.01f + lift * sinf(PM_PI * (float)(k - stance + 1) / (float)(stride - stance + 1));
    }
}

/* Steps 0.4 s apart (quick steps, a run) are steps: only touchdowns nearer than a quarter of a
 * second are taken for one. */
static void test_phase_of_quick_steps(void **state) {
    (void)state;
    enum { stride = 12, frames = 120 };
    float h[frames];
    step_heights(h, frames, stride, 6, 0.15f);
    expect_phase_per_stride(h, frames, stride, 1);
}

/* A shuffle lifting the foot 4 cm still has a gait phase (only a range under 0.1 mm has none),
 * and the frames after the last touchdown go on at the last stride's rate. */
static void test_phase_of_low_steps(void **state) {
    (void)state;
    enum { stride = 30, frames = 110 };
    float h[frames];
    step_heights(h, frames, stride, 15, 0.04f);
    expect_phase_per_stride(h, frames, stride, 1);
}

/* One touchdown (a jump landing) makes no stride: no phase. */
static void test_phase_of_one_touchdown_is_zero(void **state) {
    (void)state;
    enum { frames = 60 };
    pm_clip c;
    make_clip(&c, frames, 30.0f, 1.0f, 0.0f, 0);
    for (int f = 0; f < frames; f++)
        c.translations[(size_t)f * JOINTS + LFOOT] = pm_vec3_make(0.0f, -0.9f + (f < 30 ? 0.3f : 0.01f), 0.0f);
    float rows[frames * 2];
    for (int i = 0; i < frames * 2; i++) rows[i] = NAN;
    extract_left_foot_phase(rows, &c);
    for (int i = 0; i < frames * 2; i++)
        if (rows[i] != 0.0f) fail_msg("frame %d: phase value %d is %g, expected 0", i / 2, i % 2, (double)rows[i]);
    pm_clip_destroy(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_straight_walk),
        cmocka_unit_test(test_loop_extrapolates),
        cmocka_unit_test(test_loop_smoothing_follows_the_cycle),
        cmocka_unit_test(test_phase_counts_a_stance_once),
        cmocka_unit_test(test_phase_range_ignores_glitches),
        cmocka_unit_test(test_turning),
        cmocka_unit_test(test_every_trajectory_flag),
        cmocka_unit_test(test_features_of_a_real_clip),
        cmocka_unit_test(test_curve_and_errors),
        cmocka_unit_test(test_root_def_errors),
        cmocka_unit_test(test_huge_strides_are_refused),
        cmocka_unit_test(test_padding_and_group_channels),
        cmocka_unit_test(test_phase_without_contacts_is_zero),
        cmocka_unit_test(test_role_and_overflow_errors),
        cmocka_unit_test(test_curve_between_frames),
        cmocka_unit_test(test_velocity_at_the_ends),
        cmocka_unit_test(test_phase_of_quick_steps),
        cmocka_unit_test(test_phase_of_low_steps),
        cmocka_unit_test(test_phase_of_one_touchdown_is_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
