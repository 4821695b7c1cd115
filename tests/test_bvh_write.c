/* BVH writer: round trips of random clips in all six rotation orders (gimbal lock included),
 * channel layouts (kept, extended, defaulted), units and up axis, atomic files, bad input. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bvh_internal.h"
#include "support.h"

/* ---- helpers ---- */

/* Every joint's world position and rotation agree (joints matched by name). */
static void assert_same_poses(const pm_clip *a, const pm_clip *b, float pos_tol) {
    assert_int_equal(a->frame_count, b->frame_count);
    assert_int_equal(a->skeleton.joint_count, b->skeleton.joint_count);
    int jc = a->skeleton.joint_count;
    int *map = malloc(sizeof(int) * (size_t)jc);
    for (int j = 0; j < jc; j++) {
        map[j] = pm_skeleton_find_joint(&b->skeleton, a->skeleton.names[j]);
        assert_true(map[j] >= 0);
    }
    pm_transform *wa = malloc(sizeof(pm_transform) * (size_t)jc * 2), *wb = wa + jc;
    for (int f = 0; f < a->frame_count; f++) {
        PM_ASSERT_OK(pm_clip_frame_world(wa, a, f, NULL));
        PM_ASSERT_OK(pm_clip_frame_world(wb, b, f, NULL));
        for (int j = 0; j < jc; j++) {
            pm_vec3 d = pm_vec3_sub(wa[j].translation, wb[map[j]].translation);
            if (pm_vec3_length(d) > pos_tol)
                fail_msg("frame %d joint %s: positions differ by %g m", f, a->skeleton.names[j], (double)pm_vec3_length(d));
            if (!pm_test_quat_same(wa[j].rotation, wb[map[j]].rotation, 1e-5f))
                fail_msg("frame %d joint %s: rotations differ", f, a->skeleton.names[j]);
        }
    }
    free(wa);
    free(map);
}

/* Writes, reads back with the given units and up axis, compares, returns the text. */
static char *round_trip(const pm_clip *clip, const pm_bvh_write_def *wdef, float read_scale, int read_up) {
    char *text;
    size_t size;
    pm_error err = {PM_OK, {0}};
    if (pm_bvh_write_memory(&text, &size, clip, wdef, &err) != PM_OK) fail_msg("write: %s", err.message);
    pm_bvh_def rdef = pm_default_bvh_def();
    rdef.unit_scale = read_scale;
    rdef.up_axis = read_up;
    pm_clip back;
    if (pm_bvh_read_memory(&back, text, size, "rt.bvh", &rdef, &err) != PM_OK) fail_msg("read back: %s", err.message);
    assert_same_poses(clip, &back, 1e-4f);
    pm_clip_destroy(&back);
    char *copy = strdup(text);
    pm_free_buffer(text, &clip->allocator);
    return copy;
}

static void set_channels(pm_skeleton *s, int j, const char *layout) {
    /* layout: letters, "pX pY pZ" as 'x','y','z' and rotations as 'X','Y','Z'. */
    int n = 0;
    for (const char *c = layout; *c; c++) {
        int ch = *c >= 'x' ? PM_CHANNEL_XPOSITION + (*c - 'x') : PM_CHANNEL_XROTATION + (*c - 'X');
        s->channels[(size_t)j * 6 + n++] = (uint8_t)ch;
    }
    s->channel_counts[j] = (uint8_t)n;
}

/* Root, a 3-joint chain and a 2-joint branch, each with an End Site at the leaves. */
static void make_skeleton(pm_skeleton *s) {
    static const char *const names[] = {"Root", "A1", "A2", "A3", "B1", "B2"};
    static const int parents[] = {-1, 0, 1, 2, 0, 4};
    static const float offsets[][3] = {{0, 1, 0}, {0.2f, 0.1f, 0}, {0, 0.4f, 0.05f}, {0.1f, 0.3f, 0}, {-0.2f, 0, 0.1f}, {0, -0.4f, 0}};
    PM_ASSERT_OK(pm_skeleton_create(s, 6, NULL, NULL));
    for (int j = 0; j < 6; j++) {
        PM_ASSERT_OK(pm_skeleton_set_name(s, j, names[j], NULL));
        s->parents[j] = parents[j];
        s->rest_translations[j] = pm_vec3_make(offsets[j][0], offsets[j][1], offsets[j][2]);
    }
    s->has_end_site[3] = 1;
    s->end_sites[3] = pm_vec3_make(0, 0.1f, 0);
    s->has_end_site[5] = 1;
    s->end_sites[5] = pm_vec3_make(0, -0.05f, 0.1f);
}

static void randomize(pm_clip *c, pm_test_rng *rng) {
    int jc = c->skeleton.joint_count;
    for (int f = 0; f < c->frame_count; f++)
        for (int j = 0; j < jc; j++) {
            size_t i = (size_t)f * jc + j;
            c->rotations[i] = pm_test_random_quat(rng);
            if (c->skeleton.parents[j] < 0)
                c->translations[i] = pm_vec3_make(4 * pm_test_rng_float(rng) - 2, 1 + pm_test_rng_float(rng), 3 * pm_test_rng_float(rng));
        }
}

/* ---- round trips ---- */

static void test_all_orders_random(void **state) {
    (void)state;
    static const char *const orders[6] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};
    pm_test_rng rng = {42};
    for (int o = 0; o < 6; o++) {
        pm_skeleton s;
        make_skeleton(&s);
        char root_layout[8];
        snprintf(root_layout, sizeof root_layout, "xyz%s", orders[o]);
        set_channels(&s, 0, root_layout);
        for (int j = 1; j < 6; j++) set_channels(&s, j, orders[(o + j) % 6]); /* mixed orders in one file */
        pm_clip c;
        PM_ASSERT_OK(pm_clip_create(&c, &s, 40, 1.0f / 60.0f, NULL, NULL));
        randomize(&c, &rng);
        /* Gimbal lock: the middle axis of each joint's order at +-90 degrees. */
        for (int f = 30; f < 40; f++)
            for (int j = 0; j < 6; j++) {
                const char *ord = j == 0 ? orders[o] : orders[(o + j) % 6];
                pm_vec3 axis = pm_test_unit_axis(ord[1] - 'X');
                pm_quat lock = pm_quat_from_axis_angle(axis, (f & 1 ? 0.5f : -0.5f) * PM_PI);
                pm_vec3 first = pm_test_unit_axis(ord[0] - 'X');
                c.rotations[(size_t)f * 6 + j] = pm_quat_mul(pm_quat_from_axis_angle(first, 0.3f * (float)f), lock);
            }
        c.unit_scale = 0.01f; /* written in centimetres */
        char *text = round_trip(&c, NULL, 0.01f, PM_UP_Y);
        char expect[64];
        snprintf(expect, sizeof expect, "CHANNELS 3 %crotation %crotation %crotation", orders[(o + 1) % 6][0],
                 orders[(o + 1) % 6][1], orders[(o + 1) % 6][2]);
        assert_non_null(strstr(text, expect));
        free(text);
        pm_clip_destroy(&c);
        pm_skeleton_destroy(&s);
    }
}

static void test_clip_built_in_code(void **state) {
    (void)state;
    /* No channel layout at all, joints not in depth-first order (B1 is listed before A2's
     * child), several roots, a moving non-root joint. */
    pm_skeleton s;
    PM_ASSERT_OK(pm_skeleton_create(&s, 6, NULL, NULL));
    static const char *const names[] = {"Hips", "A1", "B1", "A2", "Prop", "B2"};
    static const int parents[] = {-1, 0, 0, 1, -1, 2};
    for (int j = 0; j < 6; j++) {
        PM_ASSERT_OK(pm_skeleton_set_name(&s, j, names[j], NULL));
        s.parents[j] = parents[j];
        s.rest_translations[j] = pm_vec3_make(0.1f * (float)j, 0.2f, 0);
    }
    pm_clip c;
    PM_ASSERT_OK(pm_clip_create(&c, &s, 12, 1.0f / 30.0f, NULL, NULL));
    pm_test_rng rng = {7};
    randomize(&c, &rng);
    for (int f = 0; f < 12; f++) c.translations[(size_t)f * 6 + 3].y = 0.2f + 0.01f * (float)f; /* A2 stretches */
    /* B2 slides by half a millimetre a frame (1% of its offset over the clip): motion all the same. */
    for (int f = 0; f < 12; f++) c.translations[(size_t)f * 6 + 5].x = 0.5f + 0.0005f * (float)f;
    char *text = round_trip(&c, NULL, 1.0f, PM_UP_Y);
    assert_non_null(strstr(text, "ROOT Hips\n{\n\tOFFSET 0 0.2 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"));
    assert_non_null(strstr(text, "JOINT A1\n\t{\n\t\tOFFSET 0.1 0.2 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation"));
    assert_non_null(strstr(text, "JOINT A2\n\t\t{\n\t\t\tOFFSET 0.3 0.2 0\n\t\t\tCHANNELS 6 Xposition"));
    assert_non_null(strstr(text, "ROOT Prop"));
    assert_non_null(strstr(text, "JOINT B2\n\t\t{\n\t\t\tOFFSET 0.5 0.2 0\n\t\t\tCHANNELS 6 Xposition"));
    /* Depth-first: A1, A2, then B1, B2. */
    assert_true(strstr(text, "JOINT A2") < strstr(text, "JOINT B1"));
    free(text);
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

static const char *const small_file =
    "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 90 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
    "\tJOINT Knee\n\t{\n\t\tOFFSET 0 -40 0\n\t\tCHANNELS 1 Xrotation\n\t\tJOINT Foot\n\t\t{\n\t\t\tOFFSET 0 -40 0\n"
    "\t\t\tCHANNELS 0\n\t\t\tEnd Site\n\t\t\t{\n\t\t\t\tOFFSET 0 0 10\n\t\t\t}\n\t\t}\n\t}\n}\nMOTION\nFrames: 3\n"
    "Frame Time: 0.0333333\n0 90 0 0 0 0 10\n0 90 1 0 0 0 20\n0 90 2 0 0 0 30\n";

/* The BVH text `text` (named `name` in messages) read in centimetres with the given up axis. */
static void read_cm(pm_clip *c, const char *text, const char *name, int up_axis) {
    pm_bvh_def def = pm_default_bvh_def();
    def.unit_scale = 0.01f;
    def.up_axis = up_axis;
    PM_ASSERT_OK(pm_bvh_read_memory(c, text, strlen(text), name, &def, NULL));
}

static void test_layout_kept_and_extended(void **state) {
    (void)state;
    pm_clip c;
    read_cm(&c, small_file, "small.bvh", PM_UP_Y);
    /* Unchanged: the file's own layout, a single-axis knee included. */
    char *text = round_trip(&c, NULL, 0.01f, PM_UP_Y);
    assert_non_null(strstr(text, "CHANNELS 1 Xrotation\n"));
    assert_non_null(strstr(text, "CHANNELS 0\n"));
    assert_non_null(strstr(text, "End Site"));
    assert_non_null(strstr(text, "0 90 2 0 0 0 30\n"));
    free(text);
    /* The knee slides: its positions go first, its rotation channel after them as it was. */
    c.translations[3 + 1].x = 0.03f;
    text = round_trip(&c, NULL, 0.01f, PM_UP_Y);
    assert_non_null(strstr(text, "CHANNELS 4 Xposition Yposition Zposition Xrotation\n"));
    free(text);
    c.translations[3 + 1].x = 0.0f;
    /* A twist of 0.01 rad about Y is a twist too: the knee gets its other axes. */
    pm_quat bent = c.rotations[3 + 1];
    c.rotations[3 + 1] = pm_quat_mul(bent, pm_quat_from_axis_angle(pm_vec3_make(0, 1, 0), 0.01f));
    text = round_trip(&c, NULL, 0.01f, PM_UP_Y);
    assert_non_null(strstr(text, "CHANNELS 3 Xrotation Yrotation Zrotation\n"));
    free(text);
    c.rotations[3 + 1] = bent;
    /* The knee twists about Y and the foot slides: channels are added where needed. */
    c.rotations[3 + 1] = pm_quat_mul(c.rotations[3 + 1], pm_quat_from_axis_angle(pm_vec3_make(0, 1, 0), 0.4f));
    c.translations[6 + 2].z = 0.05f;
    text = round_trip(&c, NULL, 0.01f, PM_UP_Y);
    assert_non_null(strstr(text, "CHANNELS 3 Xrotation Yrotation Zrotation\n"));
    assert_non_null(strstr(text, "CHANNELS 3 Xposition Yposition Zposition\n"));
    free(text);
    /* A rotation on a joint with no rotation channels gets Zrotation Xrotation Yrotation. */
    c.rotations[6 + 2] = pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), 0.2f);
    text = round_trip(&c, NULL, 0.01f, PM_UP_Y);
    assert_non_null(strstr(text, "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\t\t\tEnd Site"));
    free(text);
    pm_clip_destroy(&c);
}

static void test_units_and_up_axis(void **state) {
    (void)state;
    pm_clip c;
    read_cm(&c, small_file, "small.bvh", PM_UP_Y);
    /* Metres, Z up: the root's height is written in its Z channel. */
    pm_bvh_write_def w = pm_default_bvh_write_def();
    w.unit_scale = 1.0f;
    w.up_axis = PM_UP_Z;
    char *text = round_trip(&c, &w, 1.0f, PM_UP_Z);
    assert_non_null(strstr(text, "OFFSET 0 0 0.9\n"));
    assert_non_null(strstr(text, "\n0 -0.02 0.9 ")); /* frame 2: (0, 0.9, 0.02) m Y-up is (0, -0.02, 0.9) Z-up */
    free(text);
    /* Millimetres, Y up, precision 4. */
    w.unit_scale = 0.001f;
    w.up_axis = PM_UP_Y;
    w.precision = 4;
    char *mm;
    size_t size;
    PM_ASSERT_OK(pm_bvh_write_memory(&mm, &size, &c, &w, NULL));
    assert_non_null(strstr(mm, "OFFSET 0 900 0\n"));
    assert_non_null(strstr(mm, "OFFSET 0 -400 0\n"));
    pm_free_buffer(mm, &c.allocator);
    pm_clip_destroy(&c);
}

/* A root with position channels only (a carrier of the capture's path), and one whose height
 * rides a lone Yposition. */
static const char *const positions_root_file =
    "HIERARCHY\nROOT Root\n{\n\tOFFSET 0 90 0\n\tCHANNELS 3 Xposition Yposition Zposition\n\tJOINT Spine\n\t{\n"
    "\t\tOFFSET 0 10 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 50 0\n"
    "\t\t}\n\t}\n}\nMOTION\nFrames: 2\nFrame Time: 0.04\n0 90 0 10 20 30\n1 91 2 11 21 31\n";
static const char *const height_root_file =
    "HIERARCHY\nROOT Root\n{\n\tOFFSET 0 90 0\n\tCHANNELS 4 Yposition Zrotation Xrotation Yrotation\n\tJOINT Spine\n\t{\n"
    "\t\tOFFSET 0 10 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 50 0\n"
    "\t\t}\n\t}\n}\nMOTION\nFrames: 2\nFrame Time: 0.04\n90 0 0 0 10 20 30\n80 5 0 0 11 21 31\n";

static void test_z_up_root_partial_channels(void **state) {
    (void)state;
    pm_clip c;
    read_cm(&c, positions_root_file, "p.bvh", PM_UP_Y);
    /* Written Z-up, the root turns 90 degrees about X: it needs rotation channels, which were
     * left out because the clip's (Y-up) rotation fitted none, and the file read back lying down. */
    pm_bvh_write_def w = pm_default_bvh_write_def();
    w.up_axis = PM_UP_Z;
    char *text = round_trip(&c, &w, 0.01f, PM_UP_Z);
    assert_non_null(strstr(text, "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\tJOINT Spine"));
    free(text);
    pm_clip_destroy(&c);
    /* The same text read as Z-up and written back Z-up keeps its layout (the clip's rotation,
     * -90 degrees about X, is the identity in the file: no channels of zeros are added). */
    read_cm(&c, positions_root_file, "p.bvh", PM_UP_Z);
    text = round_trip(&c, NULL, 0.01f, PM_UP_Z);
    assert_non_null(strstr(text, "CHANNELS 3 Xposition Yposition Zposition\n\tJOINT Spine"));
    assert_non_null(strstr(text, "\n1 91 2 "));
    free(text);
    pm_clip_destroy(&c);
    /* Written Z-up, a Y-up root's height is its Z, which a lone Yposition does not carry: the
     * channel was kept, wrote a constant 0 and the height was lost. */
    read_cm(&c, height_root_file, "h.bvh", PM_UP_Y);
    text = round_trip(&c, &w, 0.01f, PM_UP_Z);
    assert_non_null(strstr(text, "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\tJOINT Spine"));
    assert_non_null(strstr(text, "\n0 0 80 "));
    free(text);
    pm_clip_destroy(&c);
}

static void test_z_up_detected_on_read_back(void **state) {
    (void)state;
    /* A biped written Z-up in centimetres is detected as such and comes back identical. */
    pm_skeleton s;
    static const char *const names[] = {"Hips", "LeftUpLeg", "LeftFoot", "RightUpLeg", "RightFoot", "Spine", "Head"};
    static const int parents[] = {-1, 0, 1, 0, 3, 0, 5};
    static const float off[][3] = {{0, 0.95f, 0}, {0.1f, -0.05f, 0}, {0, -0.84f, 0}, {-0.1f, -0.05f, 0}, {0, -0.84f, 0}, {0, 0.1f, 0}, {0, 0.55f, 0}};
    PM_ASSERT_OK(pm_skeleton_create(&s, 7, NULL, NULL));
    for (int j = 0; j < 7; j++) {
        PM_ASSERT_OK(pm_skeleton_set_name(&s, j, names[j], NULL));
        s.parents[j] = parents[j];
        s.rest_translations[j] = pm_vec3_make(off[j][0], off[j][1], off[j][2]);
    }
    pm_clip c;
    PM_ASSERT_OK(pm_clip_create(&c, &s, 20, 1.0f / 30.0f, NULL, NULL));
    for (int f = 0; f < 20; f++) {
        c.translations[(size_t)f * 7] = pm_vec3_make(0.1f, 0.95f, 0.05f * (float)f);
        c.rotations[(size_t)f * 7] = pm_quat_from_yaw(0.05f * (float)f);
        c.rotations[(size_t)f * 7 + 1] = pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), 0.3f * sinf(0.4f * (float)f));
    }
    c.unit_scale = 0.01f;
    c.source_up = PM_UP_Z;
    char *text;
    size_t size;
    PM_ASSERT_OK(pm_bvh_write_memory(&text, &size, &c, NULL, NULL));
    assert_non_null(strstr(text, "OFFSET 0 0 95\n"));
    pm_clip back;
    PM_ASSERT_OK(pm_bvh_read_memory(&back, text, size, "z.bvh", NULL, NULL));
    assert_int_equal(back.source_up, PM_UP_Z);
    assert_true(back.unit_scale == 0.01f);
    assert_same_poses(&c, &back, 1e-4f);
    pm_clip_destroy(&back);
    pm_free_buffer(text, &c.allocator);
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

/* ---- files ---- */

static void test_write_file(void **state) {
    (void)state;
    pm_bvh_def def = pm_default_bvh_def();
    pm_clip c, back;
    PM_ASSERT_OK(pm_bvh_read_memory(&c, small_file, strlen(small_file), "small.bvh", &def, NULL));
    const char *path = pm_test_tmp_path("written.bvh");
    PM_ASSERT_OK(pm_bvh_write_file(&c, path, NULL, NULL));
    PM_ASSERT_OK(pm_bvh_write_file(&c, path, NULL, NULL)); /* replacing works too */
    PM_ASSERT_OK(pm_bvh_read_file(&back, path, NULL, NULL));
    assert_string_equal(back.name, "written");
    assert_same_poses(&c, &back, 1e-4f);
    pm_clip_destroy(&back);
    assert_int_equal(pm_test_count_temp_files(pm_test_tmp_dir()), 0);
    /* A directory that does not exist: an error naming the path, and nothing left behind. */
    pm_error err = {PM_OK, {0}};
    const char *bad = pm_test_tmp_path("no-such-dir/out.bvh");
    assert_int_equal(pm_bvh_write_file(&c, bad, NULL, &err), PM_ERR_IO);
    assert_non_null(strstr(err.message, "no-such-dir/out.bvh"));
    /* An invalid clip fails before any file is created. */
    const char *never = pm_test_tmp_path("never.bvh");
    c.translations[0].x = NAN;
    assert_int_equal(pm_bvh_write_file(&c, never, NULL, &err), PM_ERR_NUMERIC);
    FILE *f = fopen(never, "rb");
    assert_null(f);
    assert_int_equal(pm_test_count_temp_files(pm_test_tmp_dir()), 0);
    pm_clip_destroy(&c);
}

/* ---- bad input ---- */

static void test_write_errors(void **state) {
    (void)state;
    pm_clip c;
    PM_ASSERT_OK(pm_bvh_read_memory(&c, small_file, strlen(small_file), "small.bvh", NULL, NULL));
    char *text = (char *)1;
    size_t size = 1;
    pm_error err = {PM_OK, {0}};
    pm_bvh_write_def w = pm_default_bvh_write_def();
    w.precision = 10;
    assert_int_equal(pm_bvh_write_memory(&text, &size, &c, &w, &err), PM_ERR_INVALID_ARGUMENT);
    assert_null(text);
    assert_non_null(strstr(err.message, "precision"));
    w = pm_default_bvh_write_def();
    w.unit_scale = -1.0f;
    assert_int_equal(pm_bvh_write_memory(&text, &size, &c, &w, &err), PM_ERR_INVALID_ARGUMENT);
    w = pm_default_bvh_write_def();
    w.up_axis = 3;
    assert_int_equal(pm_bvh_write_memory(&text, &size, &c, &w, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_bvh_write_memory(NULL, &size, &c, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_bvh_write_memory(&text, &size, NULL, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    /* Names BVH cannot carry. */
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 1, "Knee{", NULL));
    assert_int_equal(pm_bvh_write_memory(&text, &size, &c, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "Knee{"));
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 1, " Knee", NULL));
    assert_int_equal(pm_bvh_write_memory(&text, &size, &c, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 1, "Knee", NULL));
    /* A value that does not fit a float in the written unit. */
    c.translations[0].x = 3e38f;
    w = pm_default_bvh_write_def();
    w.unit_scale = 0.001f;
    assert_int_equal(pm_bvh_write_memory(&text, &size, &c, &w, &err), PM_ERR_NUMERIC);
    pm_clip_destroy(&c);
    /* Deeper than the reader accepts. */
    pm_skeleton s;
    PM_ASSERT_OK(pm_skeleton_create(&s, PM_MAX_JOINT_DEPTH + 1, NULL, NULL));
    for (int j = 0; j <= PM_MAX_JOINT_DEPTH; j++) {
        char name[16];
        snprintf(name, sizeof name, "J%d", j);
        PM_ASSERT_OK(pm_skeleton_set_name(&s, j, name, NULL));
    }
    PM_ASSERT_OK(pm_clip_create(&c, &s, 1, 0.1f, NULL, NULL));
    assert_int_equal(pm_bvh_write_memory(&text, &size, &c, NULL, &err), PM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "deeper"));
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

static void test_locale_independent(void **state) {
    (void)state;
    /* Applications may switch to a locale with a decimal comma; BVH text must not change. */
    static const char *const locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "ru_RU.UTF-8", "nl_NL.UTF-8"};
    const char *found = NULL;
    for (size_t i = 0; i < sizeof locales / sizeof locales[0] && !found; i++)
        if (setlocale(LC_NUMERIC, locales[i])) found = locales[i];
    if (!found && system("command -v localedef >/dev/null 2>&1") == 0) {
        /* None installed (minimal containers): compile one into the scratch directory. */
        const char *dir = pm_test_tmp_path("locales");
        char cmd[2300];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s' && localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1", dir, dir);
        if (system(cmd) == 0 && setenv("LOCPATH", dir, 1) == 0 && setlocale(LC_NUMERIC, "de_DE.UTF-8")) found = "de_DE.UTF-8";
    }
    if (found) {
        char probe[16];
        snprintf(probe, sizeof probe, "%g", 1.5);
        assert_string_equal(probe, "1,5"); /* the locale really has a decimal comma */
    }
    pm_clip c, back;
    PM_ASSERT_OK(pm_bvh_read_memory(&c, small_file, strlen(small_file), "small.bvh", NULL, NULL));
    char *text;
    size_t size;
    PM_ASSERT_OK(pm_bvh_write_memory(&text, &size, &c, NULL, NULL));
    assert_null(strchr(text, ','));
    assert_non_null(strstr(text, "Frame Time: 0.0333333\n"));
    PM_ASSERT_OK(pm_bvh_read_memory(&back, text, size, "small.bvh", NULL, NULL));
    assert_same_poses(&c, &back, 1e-4f);
    setlocale(LC_NUMERIC, "C");
    if (!found) print_message("(no decimal-comma locale installed; checked in the C locale only)\n");
    pm_clip_destroy(&back);
    pm_free_buffer(text, &c.allocator);
    pm_clip_destroy(&c);
}

/* What the writer would have to invent or could not read back is refused: a clip unit_scale
 * that is not a scale (the default def writes in it), names with control characters (quoted
 * unbroken nowhere, so not at all), an empty path. Names with inner spaces, as 3ds Max's
 * "Bip01 L Thigh", are BVH (the reader takes the rest of the line) and round-trip. */
static void test_write_refuses_what_cannot_read_back(void **state) {
    (void)state;
    pm_clip c, back;
    PM_ASSERT_OK(pm_bvh_read_memory(&c, small_file, strlen(small_file), "small.bvh", NULL, NULL));
    char *text = NULL;
    size_t size = 0;
    pm_error err = {PM_OK, {0}};
    const float bad_scales[] = {NAN, INFINITY, 0.0f, -1.0f};
    for (size_t i = 0; i < sizeof bad_scales / sizeof bad_scales[0]; i++) {
        c.unit_scale = bad_scales[i];
        assert_int_equal(pm_bvh_write_memory(&text, &size, &c, NULL, &err), PM_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "unit_scale"));
        assert_null(text);
    }
    c.unit_scale = 0.01f;
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 1, "Kn\nee", NULL));
    assert_int_equal(pm_bvh_write_memory(&text, &size, &c, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "control character"));
    assert_null(strchr(err.message, '\n'));
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 1, "", NULL));
    assert_int_equal(pm_bvh_write_memory(&text, &size, &c, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "no name"));
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 1, "Bip01 L  Knee", NULL));
    PM_ASSERT_OK(pm_bvh_write_memory(&text, &size, &c, NULL, &err));
    PM_ASSERT_OK(pm_bvh_read_memory(&back, text, size, "back.bvh", NULL, &err));
    assert_string_equal(back.skeleton.names[1], "Bip01 L  Knee");
    pm_clip_destroy(&back);
    pm_free_buffer(text, &c.allocator);
    assert_int_equal(pm_bvh_write_file(&c, "", NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_bvh_write_file: path is empty");
    assert_int_equal(pm_bvh_write_file(&c, NULL, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_bvh_write_file: path is NULL");
    pm_clip_destroy(&c);
}

/* Expects the write to fail with `code` and both needles, writing no file. */
static void expect_write_error(const pm_clip *c, const pm_bvh_write_def *w, pm_result code, const char *n1, const char *n2) {
    const char *path = pm_test_tmp_path("refused.bvh");
    pm_error err = {PM_OK, {0}};
    pm_result r = pm_bvh_write_file(c, path, w, &err);
    if (r != code) fail_msg("expected %s, got %s: %s", pm_result_string(code), pm_result_string(r), err.message);
    if (!strstr(err.message, n1) || (n2 && !strstr(err.message, n2))) fail_msg("message '%s' lacks '%s'", err.message, n2 ? n2 : n1);
    assert_true(strlen(err.message) < 400);
    FILE *f = fopen(path, "rb");
    assert_null(f);
    assert_int_equal(pm_test_count_temp_files(pm_test_tmp_dir()), 0);
}

/* Writes and reads back, returning the read clip (in the written units, Y up). */
static void write_read(pm_clip *back, const pm_clip *c, const pm_bvh_write_def *w) {
    char *text;
    size_t size;
    pm_error err = {PM_OK, {0}};
    if (pm_bvh_write_memory(&text, &size, c, w, &err) != PM_OK) fail_msg("write: %s", err.message);
    pm_bvh_def def = pm_default_bvh_def();
    def.unit_scale = w && w->unit_scale > 0.0f ? w->unit_scale : c->unit_scale;
    def.up_axis = PM_UP_Y;
    if (pm_bvh_read_memory(back, text, size, "back.bvh", &def, &err) != PM_OK) fail_msg("read back: %s", err.message);
    pm_free_buffer(text, &c->allocator);
}

/* Everything the library accepts in a clip but the reader refuses in a file is refused by the
 * writer, naming the joint or field, with no file written; the values at the reader's edges
 * still round-trip. */
static void test_write_refuses_what_the_reader_refuses(void **state) {
    (void)state;
    pm_clip c, back;
    PM_ASSERT_OK(pm_bvh_read_memory(&c, small_file, strlen(small_file), "small.bvh", NULL, NULL));
    /* Names: the reader takes at most 1024 bytes. */
    char name[3000];
    memset(name, 'k', sizeof name);
    name[2999] = '\0';
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 1, name, NULL));
    expect_write_error(&c, NULL, PM_ERR_LIMIT, "joint 1 name 'kkkk", "2999 bytes (the reader takes at most 1024)");
    name[PM_BVH_MAX_NAME_LENGTH] = '\0';
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 1, name, NULL));
    write_read(&back, &c, NULL);
    assert_string_equal(back.skeleton.names[1], name);
    pm_clip_destroy(&back);
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 1, "Kn}ee", NULL));
    expect_write_error(&c, NULL, PM_ERR_INVALID_ARGUMENT, "joint 1 name 'Kn}ee'", NULL);
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 1, "Knee ", NULL));
    expect_write_error(&c, NULL, PM_ERR_INVALID_ARGUMENT, "joint 1 name", "outer spaces");
    PM_ASSERT_OK(pm_skeleton_set_name(&c.skeleton, 1, "Knee", NULL));
    /* Frame times: the reader refuses below 1e-5 s, judged on the text written. */
    c.frame_time = 1e-6f;
    expect_write_error(&c, NULL, PM_ERR_NUMERIC, "Frame Time 1e-06 s is below 1e-05 s", NULL);
    c.frame_time = 4000.0f;
    expect_write_error(&c, NULL, PM_ERR_NUMERIC, "Frame Time 4000 s is above 3600 s", NULL);
    c.frame_time = 1e-5f; /* 9.99999975e-06 as a float, written "1e-05" */
    write_read(&back, &c, NULL);
    assert_true(back.frame_time == 1e-5f);
    pm_clip_destroy(&back);
    c.frame_time = 0.0333333f;
    /* Values beyond the float range, named; fewer digits must not round a value past it either:
     * 3.4028e38 at 4 digits would be "3.403e+38", which the reader refuses. */
    pm_bvh_write_def w = pm_default_bvh_write_def();
    w.unit_scale = 1.0f;
    c.translations[(size_t)2 * 3].y = 3.4028e38f;
    w.precision = 4;
    expect_write_error(&c, &w, PM_ERR_NUMERIC, "joint 'Hips' frame 2 Yposition", "float range");
    w.precision = 3;
    write_read(&back, &c, &w); /* "3.40e+38" */
    pm_clip_destroy(&back);
    w.precision = 0;
    write_read(&back, &c, &w);
    assert_true(back.translations[(size_t)2 * 3].y == 3.4028e38f);
    pm_clip_destroy(&back);
    c.translations[(size_t)2 * 3].y = 90.0f;
    c.skeleton.rest_translations[2].x = 3e38f;
    w.unit_scale = 0.01f;
    expect_write_error(&c, &w, PM_ERR_NUMERIC, "joint 'Foot' OFFSET", NULL);
    c.skeleton.rest_translations[2].x = 0.0f;
    c.skeleton.end_sites[2].z = 3e38f;
    expect_write_error(&c, &w, PM_ERR_NUMERIC, "joint 'Foot' End Site OFFSET", NULL);
    pm_clip_destroy(&c);
    /* Motion the reader refuses to allocate: above 64 MiB, fewer than one channel per 4 joints
     * (41 joints, only the root's one channel, 60000 frames: 66 MiB). */
    pm_skeleton s;
    PM_ASSERT_OK(pm_skeleton_create(&s, 41, NULL, NULL));
    for (int j = 0; j < 41; j++) {
        snprintf(name, sizeof name, "J%d", j);
        PM_ASSERT_OK(pm_skeleton_set_name(&s, j, name, NULL));
        s.parents[j] = j - 1;
    }
    set_channels(&s, 0, "Y");
    PM_ASSERT_OK(pm_clip_create(&c, &s, 60000, 0.01f, NULL, NULL));
    expect_write_error(&c, NULL, PM_ERR_LIMIT, "Frames: 60000 frames of 41 joints with 1 channel:", "one channel per 4 joints");
    pm_clip_destroy(&c);
    PM_ASSERT_OK(pm_clip_create(&c, &s, 1000, 0.01f, NULL, NULL));
    write_read(&back, &c, NULL);
    assert_int_equal(back.frame_count, 1000);
    pm_clip_destroy(&back);
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

/* At full precision every float reads back bit for bit, also those that need 8 or 9 digits. */
static void test_full_precision_is_exact(void **state) {
    (void)state;
    pm_skeleton s;
    PM_ASSERT_OK(pm_skeleton_create(&s, 1, NULL, NULL));
    PM_ASSERT_OK(pm_skeleton_set_name(&s, 0, "Hips", NULL));
    const float x = nextafterf(0.1f, 1.0f), y = nextafterf(1.0f / 3.0f, 0.0f), z = 123456.789f;
    s.rest_translations[0] = pm_vec3_make(x, y, z);
    pm_clip c;
    PM_ASSERT_OK(pm_clip_create(&c, &s, 2, 1.0f / 30.0f, NULL, NULL));
    c.translations[1] = pm_vec3_make(z, x, y);
    char *text;
    size_t size;
    PM_ASSERT_OK(pm_bvh_write_memory(&text, &size, &c, NULL, NULL));
    pm_bvh_def rdef = pm_default_bvh_def();
    rdef.unit_scale = 1.0f;
    rdef.up_axis = PM_UP_Y;
    pm_clip back;
    PM_ASSERT_OK(pm_bvh_read_memory(&back, text, size, "rt.bvh", &rdef, NULL));
    assert_true(back.skeleton.rest_translations[0].x == x && back.skeleton.rest_translations[0].y == y &&
                back.skeleton.rest_translations[0].z == z);
    assert_true(back.translations[1].x == z && back.translations[1].y == x && back.translations[1].z == y);
    pm_clip_destroy(&back);
    pm_free_buffer(text, &c.allocator);
    pm_clip_destroy(&c);
    pm_skeleton_destroy(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_precision_is_exact),
        cmocka_unit_test(test_all_orders_random),
        cmocka_unit_test(test_clip_built_in_code),
        cmocka_unit_test(test_layout_kept_and_extended),
        cmocka_unit_test(test_units_and_up_axis),
        cmocka_unit_test(test_z_up_root_partial_channels),
        cmocka_unit_test(test_z_up_detected_on_read_back),
        cmocka_unit_test(test_write_file),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_locale_independent),
        cmocka_unit_test(test_write_refuses_what_cannot_read_back),
        cmocka_unit_test(test_write_refuses_what_the_reader_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
