/* BVH reader: every quirk real files have, every malformed input we must refuse cleanly, the
 * rotation-order convention checked against independent matrices, units and up-axis
 * detection, and a basic write/read round trip (more in test_bvh_write.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bvh_internal.h"
#include "support.h"

/* ---- helpers ---- */

typedef struct counting_allocator {
    long allocs, frees;
    long fail_after; /* allocations allowed before failing; -1 = never fail */
} counting_allocator;

static void *counting_alloc(size_t size, size_t alignment, void *user) {
    counting_allocator *c = (counting_allocator *)user;
    if (c->fail_after >= 0 && c->allocs >= c->fail_after) return NULL;
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    void *p = NULL;
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
    c->allocs++;
    return p;
}

static void counting_free(void *ptr, void *user) {
    ((counting_allocator *)user)->frees++;
    free(ptr);
}

static pm_bvh_def raw_def(void) {
    /* File units and axes as written: no detection, so values can be checked directly. */
    pm_bvh_def d = pm_default_bvh_def();
    d.unit_scale = 1.0f;
    d.up_axis = PM_UP_Y;
    return d;
}

static pm_result read_text(pm_clip *clip, const char *text, const pm_bvh_def *def, pm_error *err) {
    return pm_bvh_read_memory(clip, text, strlen(text), "t.bvh", def, err);
}

static void load_raw(pm_clip *clip, const char *text) {
    pm_error err = {PM_OK, {0}};
    pm_bvh_def def = raw_def();
    pm_result r = read_text(clip, text, &def, &err);
    if (r != PM_OK) fail_msg("expected success, got %s: %s", pm_result_string(r), err.message);
}

static int is_zeroed(const pm_clip *clip) {
    pm_clip zero;
    memset(&zero, 0, sizeof zero);
    return memcmp(clip, &zero, sizeof zero) == 0;
}

/* Reads `text` expecting `code` with a message containing each needle; checks nothing leaked and
 * the output was left zeroed. */
static void expect_error_n(const char *text, size_t size, pm_result code, const char *n1, const char *n2) {
    counting_allocator counter = {0, 0, -1};
    pm_allocator a = {counting_alloc, counting_free, &counter};
    pm_bvh_def def = pm_default_bvh_def();
    def.allocator = &a;
    pm_clip clip;
    memset(&clip, 0xAB, sizeof clip);
    pm_error err = {PM_OK, {0}};
    pm_result r = pm_bvh_read_memory(&clip, text, size, "t.bvh", &def, &err);
    if (r != code) fail_msg("expected %s, got %s: %s", pm_result_string(code), pm_result_string(r), err.message);
    assert_int_equal(err.code, code);
    if (n1 && !strstr(err.message, n1)) fail_msg("message '%s' lacks '%s'", err.message, n1);
    if (n2 && !strstr(err.message, n2)) fail_msg("message '%s' lacks '%s'", err.message, n2);
    assert_true(is_zeroed(&clip));
    assert_int_equal(counter.allocs, counter.frees);
}

static void expect_error(const char *text, pm_result code, const char *n1, const char *n2) {
    expect_error_n(text, strlen(text), code, n1, n2);
}

/* A growing text buffer for generated files. */
typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void text_add(text *t, const char *format, ...) {
    va_list args;
    for (;;) {
        va_start(args, format);
        int need = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, format, args);
        va_end(args);
        assert_true(need >= 0);
        if (t->s && t->n + (size_t)need < t->cap) {
            t->n += (size_t)need;
            return;
        }
        t->cap = (t->cap + (size_t)need + 1) * 2;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
        if (t->n == 0) t->s[0] = '\0';
    }
}

/* A small biped (hips 0.95 m up, feet 0.06 m up) walking forward, in `unit` metres per file unit,
 * Y-up or Z-up. Z-up files store (x, y, z) as (x, -z, y). */
static char *human_bvh(double unit, int z_up, int frames) {
    text t = {NULL, 0, 0};
    struct {
        const char *name;
        int depth;
        double off[3];
        int end;
    } joints[] = {
        {"Hips", 0, {0, 0.95, 0}, 0},        {"LeftUpLeg", 1, {0.1, -0.05, 0}, 0}, {"LeftLeg", 2, {0, -0.42, 0}, 0},
        {"LeftFoot", 3, {0, -0.42, 0}, 0},   {"LeftToe", 4, {0, -0.04, 0.12}, 1}, {"RightUpLeg", 1, {-0.1, -0.05, 0}, 0},
        {"RightLeg", 2, {0, -0.42, 0}, 0},   {"RightFoot", 3, {0, -0.42, 0}, 0},  {"RightToe", 4, {0, -0.04, 0.12}, 1},
        {"Spine", 1, {0, 0.1, 0}, 0},        {"Head", 2, {0, 0.5, 0}, 1},
    };
    int n = (int)(sizeof joints / sizeof joints[0]);
    text_add(&t, "HIERARCHY\n");
    int open = 0;
    for (int i = 0; i < n; i++) {
        for (; open > joints[i].depth; open--) text_add(&t, "%*s}\n", open - 1, "");
        double x = joints[i].off[0] / unit, y = joints[i].off[1] / unit, z = joints[i].off[2] / unit;
        if (z_up) {
            double ty = y;
            y = -z;
            z = ty;
        }
        const char *kw = i == 0 ? "ROOT" : "JOINT";
        const char *ch = i == 0 ? "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"
                                : "CHANNELS 3 Zrotation Xrotation Yrotation";
        text_add(&t, "%*s%s %s\n%*s{\n%*sOFFSET %.9g %.9g %.9g\n%*s%s\n", joints[i].depth, "", kw, joints[i].name,
                 joints[i].depth, "", joints[i].depth + 1, "", x, y, z, joints[i].depth + 1, "", ch);
        if (joints[i].end)
            text_add(&t, "%*sEnd Site\n%*s{\n%*sOFFSET 0 %.9g 0\n%*s}\n", joints[i].depth + 1, "", joints[i].depth + 1,
                     "", joints[i].depth + 2, "", 0.05 / unit, joints[i].depth + 1, "");
        open = joints[i].depth + 1;
    }
    for (; open > 0; open--) text_add(&t, "%*s}\n", open - 1, "");
    text_add(&t, "MOTION\nFrames: %d\nFrame Time: 0.0333333\n", frames);
    for (int f = 0; f < frames; f++) {
        double fwd = 0.04 * f / unit, h = 0.95 / unit, swing = 25.0 * sin(0.3 * f);
        if (z_up) text_add(&t, "0 %.9g %.9g 0 0 0", -fwd, h);
        else text_add(&t, "0 %.9g %.9g 0 0 0", h, fwd);
        for (int i = 1; i < n; i++) {
            double a = !strcmp(joints[i].name, "LeftUpLeg") ? swing : !strcmp(joints[i].name, "RightUpLeg") ? -swing : 0.0;
            double knee = (!strcmp(joints[i].name, "LeftLeg") || !strcmp(joints[i].name, "RightLeg")) ? 10.0 : 0.0;
            text_add(&t, " 0 %.9g 0", a + knee);
        }
        text_add(&t, "\n");
    }
    return t.s;
}

/* The reference file of the error tests; line numbers matter. */
#define L01 "HIERARCHY\n"
#define L02 "ROOT Hips\n"
#define L03 "{\n"
#define L04 "\tOFFSET 0 90 0\n"
#define L05 "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
#define L06 "\tJOINT Chest\n"
#define L07 "\t{\n"
#define L08 "\t\tOFFSET 0 20 0\n"
#define L09 "\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n"
#define L10 "\t\tEnd Site\n"
#define L11 "\t\t{\n"
#define L12 "\t\t\tOFFSET 0 10 0\n"
#define L13 "\t\t}\n"
#define L14 "\t}\n"
#define L15 "}\n"
#define L16 "MOTION\n"
#define L17 "Frames: 2\n"
#define L18 "Frame Time: 0.0333333\n"
#define L19 "0 90 0 0 0 0 0 0 0\n"
#define L20 "1 90 0 0 10 0 5 0 0\n"
#define HEAD8 L01 L02 L03 L04 L05 L06 L07 L08 /* lines 1 to 8: up to the Chest OFFSET */
#define GOOD L01 L02 L03 L04 L05 L06 L07 L08 L09 L10 L11 L12 L13 L14 L15 L16 L17 L18 L19 L20

/* ---- the good file and its quirks ---- */

static void test_reference_file(void **state) {
    (void)state;
    pm_clip c;
    load_raw(&c, GOOD);
    assert_string_equal(c.name, "t");
    assert_int_equal(c.skeleton.joint_count, 2);
    assert_string_equal(c.skeleton.names[0], "Hips");
    assert_string_equal(c.skeleton.names[1], "Chest");
    assert_int_equal(c.skeleton.parents[0], -1);
    assert_int_equal(c.skeleton.parents[1], 0);
    assert_int_equal(c.frame_count, 2);
    assert_true(fabsf(c.frame_time - 0.0333333f) < 1e-9f);
    assert_int_equal(c.skeleton.channel_counts[0], 6);
    assert_int_equal(c.skeleton.channel_counts[1], 3);
    assert_int_equal(c.skeleton.channels[0], PM_CHANNEL_XPOSITION);
    assert_int_equal(c.skeleton.channels[3], PM_CHANNEL_ZROTATION);
    assert_int_equal(c.skeleton.channels[6 + 1], PM_CHANNEL_XROTATION);
    assert_int_equal(c.skeleton.has_end_site[0], 0);
    assert_int_equal(c.skeleton.has_end_site[1], 1);
    pm_test_assert_vec3_near(c.skeleton.end_sites[1], pm_vec3_make(0, 10, 0), 0);
    pm_test_assert_vec3_near(c.skeleton.rest_translations[1], pm_vec3_make(0, 20, 0), 0);
    pm_test_assert_vec3_near(c.translations[2], pm_vec3_make(1, 90, 0), 0);
    /* Frame 1: Hips Zrot 0, Xrot 10, Yrot 0. */
    assert_true(pm_test_quat_same(c.rotations[2], pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), 10.0f * PM_PI / 180.0f), 1e-6f));
    assert_int_equal(c.source_up, PM_UP_Y);
    assert_true(c.unit_scale == 1.0f);
    PM_ASSERT_OK(pm_clip_validate(&c, NULL));
    pm_clip_destroy(&c);
}

static void test_positions_replace_offset(void **state) {
    (void)state;
    pm_clip c;
    /* Root OFFSET (10, 20, 30) but channels (1, 2, 3): the channels win. The child lists only
     * Yposition: x and z stay at its OFFSET. */
    load_raw(&c, "HIERARCHY\nROOT R\n{\nOFFSET 10 20 30\nCHANNELS 3 Xposition Yposition Zposition\n"
                 "JOINT C\n{\nOFFSET 4 5 6\nCHANNELS 2 Yposition Xrotation\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\n}\n"
                 "MOTION\nFrames: 1\nFrame Time: 0.01\n1 2 3 7 0\n");
    pm_test_assert_vec3_near(c.translations[0], pm_vec3_make(1, 2, 3), 0);
    pm_test_assert_vec3_near(c.translations[1], pm_vec3_make(4, 7, 6), 0);
    pm_test_assert_vec3_near(c.skeleton.rest_translations[0], pm_vec3_make(10, 20, 30), 0);
    pm_clip_destroy(&c);
}

static void test_number_formats(void **state) {
    (void)state;
    pm_clip c;
    load_raw(&c, "HIERARCHY\nROOT R\n{\nOFFSET -2.47945e-15 1E+3 .5\nCHANNELS 6 Xposition Yposition Zposition Xrotation "
                 "Yrotation Zrotation\n}\nMOTION\nFrames: 1\nFrame Time: .0083333\n-.5 +2 3. 1e1 -0.0 0E0\n");
    assert_true(fabsf(c.skeleton.rest_translations[0].x + 2.47945e-15f) < 1e-20f);
    assert_true(c.skeleton.rest_translations[0].y == 1000.0f);
    assert_true(c.skeleton.rest_translations[0].z == 0.5f);
    assert_true(fabsf(c.frame_time - 0.0083333f) < 1e-10f);
    pm_test_assert_vec3_near(c.translations[0], pm_vec3_make(-0.5f, 2, 3), 0);
    assert_true(pm_test_quat_same(c.rotations[0], pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), 10.0f * PM_PI / 180.0f), 1e-6f));
    pm_clip_destroy(&c);

    /* The number parser agrees with the C library (C locale here) on many spellings. */
    static const char *const numbers[] = {"0", "-0", "1", "-1", "3.14159265358979", "1e-7", "-2.6e-05", "6.02214076e23",
                                          "1.17549435e-38", "3.40282347e38", "123456789012345678901234567890",
                                          "0.000000000000000000000000000001", ".0083333", "-.5", "5.", "+7.25E-3"};
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        pm_clip one;
        char buf[512];
        snprintf(buf, sizeof buf, "HIERARCHY\nROOT R\n{\nOFFSET 0 0 0\nCHANNELS 1 Xposition\n}\nMOTION\nFrames: 1\n"
                                  "Frame Time: 1\n%s\n", numbers[i]);
        load_raw(&one, buf);
        float expect = strtof(numbers[i], NULL);
        if (one.translations[0].x != expect) fail_msg("%s: got %.9g, want %.9g", numbers[i], (double)one.translations[0].x, (double)expect);
        pm_clip_destroy(&one);
    }
}

static void test_whitespace_quirks(void **state) {
    (void)state;
    pm_clip c;
    /* CRLF, tabs, blank lines, trailing spaces, Frames/Frame Time with a tab, no final newline. */
    load_raw(&c, "HIERARCHY\r\n\r\nROOT\tHips  \r\n{\r\n\t OFFSET\t0 90 0 \r\n\tCHANNELS 6 Xposition Yposition Zposition "
                 "Zrotation Xrotation Yrotation \r\n\tJOINT Chest\r\n\t{\r\n\t\tOFFSET 0 20 0\r\n\t\tCHANNELS 3 Zrotation "
                 "Xrotation Yrotation\r\n\t\tEnd site\r\n\t\t{\r\n\t\t\tOFFSET 0 10 0\r\n\t\t}\r\n\t}\r\n}\r\n\r\nMOTION\r\n"
                 "Frames:\t2\r\nFrame Time:\t0.0333333\r\n0 90 0 0 0 0 0 0 0 \r\n\r\n1\t90 0 0 10 0 5 0 0");
    assert_int_equal(c.frame_count, 2);
    assert_string_equal(c.skeleton.names[0], "Hips");
    assert_int_equal(c.skeleton.has_end_site[1], 1);
    assert_true(c.translations[2].x == 1.0f);
    pm_clip_destroy(&c);
    /* Old Mac line ends (lone CR), a UTF-8 byte order mark, END SITE in capitals. */
    load_raw(&c, "\xEF\xBB\xBFHIERARCHY\rROOT Hips\r{\rOFFSET 0 0 0\rCHANNELS 1 Yposition\rEND SITE\r{\rOFFSET 0 1 0\r}\r}\r"
                 "MOTION\rFrames: 2\rFrame Time: 0.5\r1\r2\r");
    assert_int_equal(c.frame_count, 2);
    assert_true(c.translations[1].y == 2.0f);
    pm_clip_destroy(&c);
}

static void test_names_and_structure(void **state) {
    (void)state;
    pm_clip c;
    /* Names with spaces (3ds Max Biped), '{' on the name line, several ROOTs, a joint without
     * CHANNELS, every joint with 6 channels. */
    load_raw(&c, "HIERARCHY\nROOT Bip01 Pelvis {\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation "
                 "Xrotation Yrotation\nJOINT Bip01 L Thigh\n{\nOFFSET 1 0 0\nCHANNELS 6 Xposition Yposition Zposition "
                 "Zrotation Xrotation Yrotation\nJOINT Leaf\n{\nOFFSET 0 1 0\n}\n}\n}\nROOT Prop\n{\nOFFSET 5 0 0\n"
                 "CHANNELS 3 Xposition Yposition Zposition\n}\nMOTION\nFrames: 1\nFrame Time: 0.04\n"
                 "0 0 0 0 0 0 1 0 0 0 0 0 5 6 7\n");
    assert_int_equal(c.skeleton.joint_count, 4);
    assert_string_equal(c.skeleton.names[0], "Bip01 Pelvis");
    assert_string_equal(c.skeleton.names[1], "Bip01 L Thigh");
    assert_int_equal(c.skeleton.parents[2], 1);
    assert_int_equal(c.skeleton.channel_counts[2], 0);
    assert_int_equal(c.skeleton.parents[3], -1);
    pm_test_assert_vec3_near(c.translations[3], pm_vec3_make(5, 6, 7), 0);
    pm_test_assert_vec3_near(c.translations[2], pm_vec3_make(0, 1, 0), 0);
    pm_clip_destroy(&c);
}

static void test_clip_name_from_source(void **state) {
    (void)state;
    pm_clip c;
    pm_bvh_def def = raw_def();
    PM_ASSERT_OK(pm_bvh_read_memory(&c, GOOD, strlen(GOOD), "some/dir/walk.fast.bvh", &def, NULL));
    assert_string_equal(c.name, "walk.fast");
    pm_clip_destroy(&c);
    const char *path = pm_test_tmp_path("run_01.bvh");
    pm_test_write_file(path, GOOD, strlen(GOOD));
    PM_ASSERT_OK(pm_bvh_read_file(&c, path, &def, NULL));
    assert_string_equal(c.name, "run_01");
    pm_clip_destroy(&c);
    /* Control characters are legal in file names but not in clip names: replaced, the file reads. */
    path = pm_test_tmp_path("a\nb.bvh");
    pm_test_write_file(path, GOOD, strlen(GOOD));
    pm_error err = {PM_OK, {0}};
    if (pm_bvh_read_file(&c, path, &def, &err) != PM_OK) fail_msg("a newline in the file name: %s", err.message);
    assert_string_equal(c.name, "a_b");
    pm_clip_destroy(&c);
    PM_ASSERT_OK(pm_bvh_read_memory(&c, GOOD, strlen(GOOD), "dir/we\tird\x7f\x1b.bvh", &def, NULL));
    assert_string_equal(c.name, "we_ird__");
    pm_clip_destroy(&c);
    /* A long UTF-8 name is cut at a character boundary: 150 two-byte characters give 127. */
    char source[400] = "d/";
    for (int i = 0; i < 150; i++) strcat(source, "\xc3\xa9");
    strcat(source, ".bvh");
    PM_ASSERT_OK(pm_bvh_read_memory(&c, GOOD, strlen(GOOD), source, &def, NULL));
    assert_int_equal(strlen(c.name), 254);
    assert_memory_equal(c.name, source + 2, 254);
    pm_clip_destroy(&c);
}

/* ---- rotation orders, checked against matrices built here ---- */

typedef struct mat3 {
    double m[3][3];
} mat3;

static mat3 axis_matrix(int axis, double degrees) {
    double a = degrees * 3.14159265358979323846 / 180.0, c = cos(a), s = sin(a);
    mat3 r = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    int i = (axis + 1) % 3, j = (axis + 2) % 3;
    r.m[i][i] = c;
    r.m[i][j] = -s;
    r.m[j][i] = s;
    r.m[j][j] = c;
    return r;
}

static mat3 mat_mul(mat3 a, mat3 b) {
    mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
    return r;
}

static void test_rotation_orders(void **state) {
    (void)state;
    static const char *const orders[6] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};
    const double angles[3] = {30.0, -45.0, 60.0}; /* in the listed order */
    for (int o = 0; o < 6; o++) {
        char buf[512];
        snprintf(buf, sizeof buf,
                 "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 3 %crotation %crotation %crotation\nJOINT B\n{\n"
                 "OFFSET 0.3 0.5 0.7\nCHANNELS 0\nEnd Site\n{\nOFFSET 0 0 0\n}\n}\n}\nMOTION\nFrames: 1\nFrame Time: 1\n%g %g %g\n",
                 orders[o][0], orders[o][1], orders[o][2], angles[0], angles[1], angles[2]);
        pm_clip c;
        load_raw(&c, buf);
        /* R = R_first * R_second * R_third acting on column vectors. */
        mat3 r = axis_matrix(orders[o][0] - 'X', angles[0]);
        r = mat_mul(r, axis_matrix(orders[o][1] - 'X', angles[1]));
        r = mat_mul(r, axis_matrix(orders[o][2] - 'X', angles[2]));
        double v[3] = {0.3, 0.5, 0.7};
        pm_vec3 expect = pm_vec3_make((float)(r.m[0][0] * v[0] + r.m[0][1] * v[1] + r.m[0][2] * v[2]),
                                      (float)(r.m[1][0] * v[0] + r.m[1][1] * v[1] + r.m[1][2] * v[2]),
                                      (float)(r.m[2][0] * v[0] + r.m[2][1] * v[1] + r.m[2][2] * v[2]));
        pm_transform w[2];
        PM_ASSERT_OK(pm_clip_frame_world(w, &c, 0, NULL));
        pm_test_assert_vec3_near(w[1].translation, expect, 1e-5f);
        pm_clip_destroy(&c);
    }
}

static void test_mixed_orders(void **state) {
    (void)state;
    pm_clip c;
    /* Daz-style: root ZYX, joint ZXY; partial rotation channels on a third joint. */
    load_raw(&c, "HIERARCHY\nROOT hip\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation "
                 "Xrotation\nJOINT abdomen\n{\nOFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nJOINT tail\n{\n"
                 "OFFSET 0 1 0\nCHANNELS 2 Yrotation Xrotation\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\n}\n}\nMOTION\nFrames: 1\n"
                 "Frame Time: 0.1\n0 0 0 10 20 30 40 50 60 70 80\n");
    const pm_vec3 X = {1, 0, 0}, Y = {0, 1, 0}, Z = {0, 0, 1};
    const float d = PM_PI / 180.0f;
    pm_quat hip = pm_quat_mul(pm_quat_mul(pm_quat_from_axis_angle(Z, 10 * d), pm_quat_from_axis_angle(Y, 20 * d)),
                              pm_quat_from_axis_angle(X, 30 * d));
    pm_quat abd = pm_quat_mul(pm_quat_mul(pm_quat_from_axis_angle(Z, 40 * d), pm_quat_from_axis_angle(X, 50 * d)),
                              pm_quat_from_axis_angle(Y, 60 * d));
    pm_quat tail = pm_quat_mul(pm_quat_from_axis_angle(Y, 70 * d), pm_quat_from_axis_angle(X, 80 * d));
    assert_true(pm_test_quat_same(c.rotations[0], hip, 1e-6f));
    assert_true(pm_test_quat_same(c.rotations[1], abd, 1e-6f));
    assert_true(pm_test_quat_same(c.rotations[2], tail, 1e-6f));
    pm_clip_destroy(&c);
}

/* ---- detection ---- */

static void test_unit_detection(void **state) {
    (void)state;
    const double units[] = {1.0, 0.01, 0.001, 0.0254, 0.0254 / 0.45};
    const char *names[] = {"m", "cm", "mm", "in", "cmu"};
    for (int i = 0; i < 5; i++) {
        char *bvh = human_bvh(units[i], 0, 20);
        pm_clip c;
        PM_ASSERT_OK(pm_bvh_read_memory(&c, bvh, strlen(bvh), "h.bvh", NULL, NULL));
        if (fabs(c.unit_scale - units[i]) > 1e-6 * units[i]) fail_msg("unit %g detected as %g", units[i], (double)c.unit_scale);
        assert_string_equal(pm_bvh_unit_name(c.unit_scale), names[i]);
        pm_clip_survey s;
        PM_ASSERT_OK(pm_clip_survey_compute(&s, &c, NULL));
        assert_true(s.hip_height > 0.85f && s.hip_height < 1.0f);
        pm_clip_destroy(&c);
        free(bvh);
    }
    assert_string_equal(pm_bvh_unit_name(0.5f), "custom");
    /* An explicit scale wins over detection. */
    char *bvh = human_bvh(0.01, 0, 5);
    pm_bvh_def def = pm_default_bvh_def();
    def.unit_scale = 0.02f;
    pm_clip c;
    PM_ASSERT_OK(pm_bvh_read_memory(&c, bvh, strlen(bvh), "h.bvh", &def, NULL));
    assert_true(c.unit_scale == 0.02f);
    assert_true(fabsf(c.skeleton.rest_translations[0].y - 1.9f) < 1e-5f);
    pm_clip_destroy(&c);
    free(bvh);
}

static void test_up_axis_detection(void **state) {
    (void)state;
    char *y = human_bvh(0.01, 0, 20), *z = human_bvh(0.01, 1, 20);
    pm_clip cy, cz;
    PM_ASSERT_OK(pm_bvh_read_memory(&cy, y, strlen(y), "y.bvh", NULL, NULL));
    PM_ASSERT_OK(pm_bvh_read_memory(&cz, z, strlen(z), "z.bvh", NULL, NULL));
    assert_int_equal(cy.source_up, PM_UP_Y);
    assert_int_equal(cz.source_up, PM_UP_Z);
    assert_true(cz.unit_scale == 0.01f);
    /* After conversion both are the same Y-up motion: hips 0.95 m up, walking towards +Z. */
    int jc = cy.skeleton.joint_count;
    pm_transform *wy = malloc(sizeof(pm_transform) * (size_t)jc * 2), *wz = wy + jc;
    for (int f = 0; f < cy.frame_count; f++) {
        PM_ASSERT_OK(pm_clip_frame_world(wy, &cy, f, NULL));
        PM_ASSERT_OK(pm_clip_frame_world(wz, &cz, f, NULL));
        pm_test_assert_vec3_near(wy[0].translation, wz[0].translation, 1e-5f);
        assert_true(fabsf(wz[0].translation.y - 0.95f) < 1e-5f);
    }
    assert_true(wz[0].translation.z > 0.5f);
    free(wy);
    pm_clip_destroy(&cz);
    /* Overridden: read as Y-up, the hips stay at file y = 0 (z holds the height). */
    pm_bvh_def def = pm_default_bvh_def();
    def.up_axis = PM_UP_Y;
    def.unit_scale = 0.01f;
    PM_ASSERT_OK(pm_bvh_read_memory(&cz, z, strlen(z), "z.bvh", &def, NULL));
    assert_int_equal(cz.source_up, PM_UP_Y);
    assert_true(fabsf(cz.translations[0].z - 0.95f) < 1e-5f);
    pm_clip_destroy(&cz);
    pm_clip_destroy(&cy);
    free(y);
    free(z);
}

static void test_up_axis_maya_style_rest(void **state) {
    (void)state;
    /* Bandai-Namco-like: bones along local +X, so the zero-rotation pose lies along X; the
     * animated frames rotate the hips 90 degrees about Z and the figure stands up along Y. */
    const char *bvh = "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
                      "Yrotation\nJOINT Spine\n{\nOFFSET 15 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nJOINT Head\n{\n"
                      "OFFSET 50 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{\nOFFSET 10 0 0\n}\n}\n}\n"
                      "JOINT UpperLeg_L\n{\nOFFSET -5 0 10\nCHANNELS 3 Zrotation Xrotation Yrotation\nJOINT Foot_L\n{\n"
                      "OFFSET -84 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{\nOFFSET -5 0 0\n}\n}\n}\n"
                      "JOINT UpperLeg_R\n{\nOFFSET -5 0 -10\nCHANNELS 3 Zrotation Xrotation Yrotation\nJOINT Foot_R\n{\n"
                      "OFFSET -84 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{\nOFFSET -5 0 0\n}\n}\n}\n}\n"
                      "MOTION\nFrames: 2\nFrame Time: 0.0333333\n"
                      "0 92 0 90 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n0 92 1 90 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
    pm_clip c;
    PM_ASSERT_OK(pm_bvh_read_memory(&c, bvh, strlen(bvh), "maya.bvh", NULL, NULL));
    assert_int_equal(c.source_up, PM_UP_Y);
    assert_true(c.unit_scale == 0.01f);
    pm_clip_destroy(&c);
}

/* ---- malformed input ---- */

static void test_errors_channels(void **state) {
    (void)state;
    expect_error(HEAD8 "\t\tCHANNELS 3 Zrotation Xrotation\n" L10 L11 L12 L13 L14 L15 L16 L17 L18 L19 L20, PM_ERR_PARSE,
                 "t.bvh:9: CHANNELS", "3 channels declared but 2");
    expect_error(HEAD8 "\t\tCHANNELS 3 Zrotation Wrotation Yrotation\n" L10, PM_ERR_PARSE, "t.bvh:9: CHANNELS",
                 "unknown channel 'Wrotation'");
    expect_error(HEAD8 "\t\tCHANNELS 3 Zrotation Xrotation Zrotation\n" L10, PM_ERR_PARSE, "t.bvh:9: CHANNELS",
                 "listed twice");
    expect_error(HEAD8 "\t\tCHANNELS 7 Zrotation Xrotation Yrotation Xposition Yposition Zposition Zrotation\n", PM_ERR_PARSE,
                 "t.bvh:9: CHANNELS", "at most 6");
    expect_error(HEAD8 "\t\tCHANNELS 2 Zrotation Xrotation Yrotation\n" L10, PM_ERR_PARSE, "t.bvh:9: CHANNELS",
                 "more names follow");
    expect_error(HEAD8 "\t\tCHANNELS three Zrotation\n", PM_ERR_PARSE, "t.bvh:9: CHANNELS", "'three'");
    expect_error(HEAD8 "\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\t\tCHANNELS 0\n", PM_ERR_PARSE, "t.bvh:10: CHANNELS",
                 "twice");
}

static void test_errors_numbers(void **state) {
    (void)state;
    expect_error(L01 L02 L03 L04 L05 L06 L07 "\t\tOFFSET 0 nan 0\n", PM_ERR_NUMERIC, "t.bvh:8: OFFSET", "'nan'");
    expect_error(L01 L02 L03 L04 L05 L06 L07 "\t\tOFFSET 0 -inf 0\n", PM_ERR_NUMERIC, "t.bvh:8: OFFSET", "'-inf'");
    expect_error(L01 L02 L03 L04 L05 L06 L07 "\t\tOFFSET 0 1e999 0\n", PM_ERR_NUMERIC, "t.bvh:8: OFFSET", "'1e999'");
    expect_error(L01 L02 L03 L04 L05 L06 L07 "\t\tOFFSET 0 1e39 0\n", PM_ERR_NUMERIC, "t.bvh:8: OFFSET", NULL);
    expect_error(L01 L02 L03 L04 L05 L06 L07 "\t\tOFFSET 0 1,5 0\n", PM_ERR_PARSE, "t.bvh:8: OFFSET", "'1,5'");
    expect_error(L01 L02 L03 L04 L05 L06 L07 "\t\tOFFSET 0 20\n" L09, PM_ERR_PARSE, "t.bvh:9: OFFSET", "'CHANNELS'");
    expect_error(L01 L02 L03 L04 L05 L06 L07 L08 L09 L10 L11 "\t\t\tOFFSET 0 #QNAN 0\n", PM_ERR_PARSE, "t.bvh:12: End Site OFFSET",
                 NULL);
    expect_error(L01 L02 L03 L04 L05 L06 L07 L08 L09 L10 L11 "\t\t\tOFFSET 0 1.#QNAN 0\n", PM_ERR_NUMERIC, "t.bvh:12", NULL);
    expect_error(HEAD8 L09 L10 L11 L12 L13 L14 L15 L16 L17 L18 L19 "1 90 0 0 NaN 0 5 0 0\n", PM_ERR_NUMERIC,
                 "t.bvh:20: frame 1", "value 5");
    expect_error(HEAD8 L09 L10 L11 L12 L13 L14 L15 L16 L17 L18 L19 "1 90 0 0 abc 0 5 0 0\n", PM_ERR_PARSE,
                 "t.bvh:20: frame 1", "'abc'");
}

static void test_errors_motion_header(void **state) {
    (void)state;
    pm_clip lo;
#define TO_16 L01 L02 L03 L04 L05 L06 L07 L08 L09 L10 L11 L12 L13 L14 L15 L16
    expect_error(TO_16 "Frames: 99999999999\n" L18 L19 L20, PM_ERR_LIMIT, "t.bvh:17: Frames", "99999999999");
    expect_error(TO_16 "Frames: 1000000\n" L18 L19 L20, PM_ERR_PARSE, "t.bvh:17: Frames", "frame lines of 9 values");
    expect_error(TO_16 "Frames: 0\n" L18, PM_ERR_PARSE, "t.bvh:17: Frames", "0 frames");
    expect_error(TO_16 "Frames: -2\n" L18, PM_ERR_PARSE, "t.bvh:17: Frames", "'-2'");
    expect_error(TO_16 "Frames 2\n" L18, PM_ERR_PARSE, "t.bvh:17: Frames", "':'");
    expect_error(TO_16 "Frame: 2\n" L18, PM_ERR_PARSE, "t.bvh:17: Frames", NULL);
    expect_error(TO_16 L17 "Frame Time: 0\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", "positive");
    expect_error(TO_16 L17 "Frame Time: -0.03\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", NULL);
    expect_error(TO_16 L17 "Frame Time: inf\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", NULL);
    expect_error(TO_16 L17 "Frame Time: 1e-60\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", NULL);
    /* Finite and positive, but no capture runs above 100 kHz: a corrupt header. */
    expect_error(TO_16 L17 "Frame Time: 1e-40\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", "below 1e-05 s");
    expect_error(TO_16 L17 "Frame Time: 0.0000099\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", "'0.0000099'");
    load_raw(&lo, TO_16 L17 "Frame Time: 0.00001\n" L19 L20);
    pm_clip_destroy(&lo);
    expect_error(TO_16 L17 "Frame Time: fast\n" L19 L20, PM_ERR_PARSE, "t.bvh:18: Frame Time", "'fast'");
    expect_error(TO_16 L17 "Frame Time: 0.03 extra\n" L19 L20, PM_ERR_PARSE, "t.bvh:18: Frame Time", "'extra'");
    /* Frame-data problems Frames: and the bytes left cannot catch. */
    expect_error(TO_16 L17 L18 L19 "1 90 0 0 10 0 5 0\n", PM_ERR_PARSE, "t.bvh:20: frame 1", "8 values on the line, expected 9");
    expect_error(TO_16 L17 L18 L19 "1 90 0 0 10 0 5 0 0 0\n", PM_ERR_PARSE, "t.bvh:20: frame 1", "10 values");
    expect_error(TO_16 "Frames: 3\n" L18 "0.0000 90.0000 0.0000 0.0000 0.0000 0.0000 0.0000 0.0000 0.0000\n"
                       "1.0000 90.0000 0.0000 0.0000 10.0000 0.0000 5.0000 0.0000 0.0000\n",
                 PM_ERR_PARSE, "MOTION", "ends after 2 frame lines");
    expect_error(GOOD "2 90 0 0 0 0 0 0 0\n", PM_ERR_PARSE, "t.bvh:21: MOTION", "more frame data");
    /* A hierarchy without channels has no motion to read. */
    expect_error("HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\n}\nMOTION\nFrames: 1\nFrame Time: 1\n\n", PM_ERR_PARSE, "CHANNELS", NULL);
#undef TO_16
}

/* An allocator that refuses, and records, requests above `cap` bytes. */
typedef struct capped_allocator {
    size_t cap, largest;
    long allocs, frees;
} capped_allocator;

static void *capped_alloc(size_t size, size_t alignment, void *user) {
    capped_allocator *c = (capped_allocator *)user;
    if (size > c->largest) c->largest = size;
    if (size > c->cap) return NULL;
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    void *p = NULL;
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
    c->allocs++;
    return p;
}

static void capped_free(void *ptr, void *user) {
    ((capped_allocator *)user)->frees++;
    free(ptr);
}

/* `joints` joints in a chain, only the root with a channel, `frames` declared and `lines` frame
 * lines of "0"; *frames_line is the line of Frames:. */
static char *sparse_bvh(int joints, long frames, long lines, size_t *size, int *frames_line) {
    text t = {NULL, 0, 0};
    text_add(&t, "HIERARCHY\nROOT J0\n{\nOFFSET 0 0 0\nCHANNELS 1 Yrotation\n");
    for (int j = 1; j < joints; j++) text_add(&t, "JOINT J%d\n{\nOFFSET 0 1 0\n", j);
    for (int j = 0; j < joints; j++) text_add(&t, "}\n");
    text_add(&t, "MOTION\n");
    *frames_line = 1;
    for (size_t i = 0; i < t.n; i++) *frames_line += t.s[i] == '\n';
    text_add(&t, "Frames: %ld\nFrame Time: 0.01\n", frames);
    size_t head = t.n;
    char *s = malloc(head + (size_t)lines * 2 + 1);
    assert_non_null(s);
    memcpy(s, t.s, head);
    for (long i = 0; i < lines; i++) memcpy(s + head + (size_t)i * 2, "0\n", 2);
    *size = head + (size_t)lines * 2;
    s[*size] = '\0';
    free(t.s);
    return s;
}

static void test_frames_bounded_before_allocating(void **state) {
    (void)state;
    /* 40 joints, one channel, 10 million frames: 20 MB of text the clip would store in 11 GB (28
     * bytes per joint and frame). Refused without any allocation near that size. */
    size_t size;
    int line;
    char *bvh = sparse_bvh(40, 10000000, 10000000, &size, &line);
    capped_allocator cap = {1u << 20, 0, 0, 0};
    pm_allocator a = {capped_alloc, capped_free, &cap};
    pm_bvh_def def = pm_default_bvh_def();
    def.allocator = &a;
    pm_clip c;
    pm_error err = {PM_OK, {0}};
    pm_result r = pm_bvh_read_memory(&c, bvh, size, "t.bvh", &def, &err);
    if (r != PM_ERR_LIMIT) fail_msg("expected a limit error, got %s: %s", pm_result_string(r), err.message);
    char needle[64];
    snprintf(needle, sizeof needle, "t.bvh:%d: Frames: 10000000 frames of 40 joints", line);
    if (!strstr(err.message, needle) || !strstr(err.message, "one channel per 4 joints"))
        fail_msg("message '%s'", err.message);
    assert_true(cap.largest < (1u << 20));
    assert_true(is_zeroed(&c));
    assert_int_equal(cap.allocs, cap.frees);
    free(bvh);
    /* The same sparse skeleton is fine while its motion is small. */
    bvh = sparse_bvh(40, 1000, 1000, &size, &line);
    PM_ASSERT_OK(pm_bvh_read_memory(&c, bvh, size, "t.bvh", NULL, NULL));
    assert_int_equal(c.frame_count, 1000);
    pm_clip_destroy(&c);
    free(bvh);
    /* Frames: beyond what the text after the header can hold, counted in frame lines; the last
     * line needs no line break. */
    bvh = sparse_bvh(2, 1001, 1000, &size, &line);
    snprintf(needle, sizeof needle, "t.bvh:%d: Frames: 1001 frames", line);
    expect_error_n(bvh, size, PM_ERR_PARSE, needle, "hold at most 1000 frame lines of 1 values");
    free(bvh);
    bvh = sparse_bvh(2, 1000, 1000, &size, &line);
    PM_ASSERT_OK(pm_bvh_read_memory(&c, bvh, size - 1, "t.bvh", NULL, NULL));
    assert_int_equal(c.frame_count, 1000);
    pm_clip_destroy(&c);
    free(bvh);
    /* The rule's edges: 64 MiB of motion for any skeleton, beyond it 4 joints per channel. */
    assert_true(pm_bvh_motion_fits(500, 4096, 1));
    assert_false(pm_bvh_motion_fits(600, 4096, 1));
    assert_false(pm_bvh_motion_fits(PM_MAX_FRAMES, 41, 10));
    assert_true(pm_bvh_motion_fits(PM_MAX_FRAMES, 40, 10));
    assert_true(pm_bvh_motion_bytes(1000, 40, 1) > 1000.0 * 40 * 28);
}

static void test_errors_structure(void **state) {
    (void)state;
    expect_error("", PM_ERR_PARSE, "t.bvh:1: HIERARCHY", "empty");
    expect_error("hello world\n", PM_ERR_PARSE, "t.bvh:1: HIERARCHY", "'hello'");
    expect_error_n("\0\1\2\3\xff\xfe", 6, PM_ERR_PARSE, "t.bvh:1: HIERARCHY", NULL);
    /* Unbalanced braces both ways. */
    expect_error(L01 L02 L03 L04 L05 L06 L07 L08 L09 L10 L11 L12 L13 L14 L16 L17 L18 L19 L20, PM_ERR_PARSE, "t.bvh:15: MOTION",
                 "'}' missing");
    expect_error(L01 L02 L03 L04 L05 L06 L07 L08 L09 L10 L11 L12 L13 L14 L15 "}\n" L16, PM_ERR_PARSE, "t.bvh:16: HIERARCHY",
                 "without a matching");
    expect_error(L01 L02 L03 L04 L05 L06 L07 L08 L09 L10 L11 L12 L13 L14, PM_ERR_PARSE, "HIERARCHY", "ends inside joint 'Hips'");
    expect_error(L01 L02 L03 L04 L05 L06 L07 L08 L09 L10 L11 L12 L13 L14 L15, PM_ERR_PARSE, "MOTION", "no MOTION");
    expect_error(L01 "MOTION\n", PM_ERR_PARSE, "t.bvh:2: HIERARCHY", "no ROOT");
    expect_error(L01 L02 L03 L04 L05 L06 L07 L09 L10 L11 L12 L13 L14 L15, PM_ERR_PARSE, "t.bvh:13: OFFSET", "'Chest'");
    expect_error(L01 "ROOT\n{\n", PM_ERR_PARSE, "t.bvh:2: JOINT", "without a name");
    expect_error(L01 "JOINT A\n{\n", PM_ERR_PARSE, "t.bvh:2: JOINT", "outside any ROOT");
    expect_error(L01 L02 L03 L04 "ROOT B\n{\n", PM_ERR_PARSE, "t.bvh:5: ROOT", "inside joint 'Hips'");
    expect_error(L01 L02 L03 L04 "End Sight\n", PM_ERR_PARSE, "t.bvh:5: End Site", "'Sight'");
    expect_error(L01 L02 L03 L04 L10 L11 L12 L13 L10 L11, PM_ERR_PARSE, "t.bvh:9: End Site", "second End Site");
    expect_error(L01 L02 L03 L04 L10 L11 "CHANNELS 0\n", PM_ERR_PARSE, "t.bvh:7: End Site", "expected OFFSET");
    expect_error(L01 L02 L03 L04 "WIBBLE 3\n", PM_ERR_PARSE, "t.bvh:5: HIERARCHY", "'WIBBLE'");
    expect_error(L01 L02 L04, PM_ERR_PARSE, "t.bvh:3: ROOT", "expected '{'");
    expect_error(L01 "ROOT Bad\x01Name\n{\n", PM_ERR_PARSE, "t.bvh:2: JOINT", "control character");
    /* Duplicate names. */
    expect_error(L01 L02 L03 L04 L05 L06 L07 L08 L09 L14 "\tJOINT Chest\n" L07 L08 L09 L14 L15 L16 L17 L18, PM_ERR_PARSE,
                 "t.bvh:11: JOINT", "duplicate joint name 'Chest' (first on line 6)");
}

static void test_errors_limits(void **state) {
    (void)state;
    /* 10,000 nested joints: a clear limit error, not a stack overflow. */
    text t = {NULL, 0, 0};
    text_add(&t, "HIERARCHY\n");
    for (int i = 0; i < 10000; i++) text_add(&t, "%s J%d\n{\nOFFSET 0 1 0\nCHANNELS 1 Xrotation\n", i ? "JOINT" : "ROOT", i);
    expect_error(t.s, PM_ERR_LIMIT, "JOINT", "deeper than 512");
    free(t.s);
    /* More joints than PM_MAX_JOINTS, side by side. */
    memset(&t, 0, sizeof t);
    text_add(&t, "HIERARCHY\nROOT R\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n");
    for (int i = 0; i < PM_MAX_JOINTS + 1; i++) text_add(&t, "JOINT J%d\n{\nOFFSET 0 1 0\n}\n", i);
    expect_error(t.s, PM_ERR_LIMIT, "JOINT", "more than 4096 joints");
    free(t.s);
    /* Exactly at the depth limit is fine. */
    memset(&t, 0, sizeof t);
    text_add(&t, "HIERARCHY\n");
    for (int i = 0; i < PM_MAX_JOINT_DEPTH; i++) text_add(&t, "%s J%d\n{\nOFFSET 0 1 0\nCHANNELS 1 Xrotation\n", i ? "JOINT" : "ROOT", i);
    for (int i = 0; i < PM_MAX_JOINT_DEPTH; i++) text_add(&t, "}\n");
    text_add(&t, "MOTION\nFrames: 1\nFrame Time: 1\n");
    for (int i = 0; i < PM_MAX_JOINT_DEPTH; i++) text_add(&t, "1 ");
    text_add(&t, "\n");
    pm_clip c;
    load_raw(&c, t.s);
    assert_int_equal(c.skeleton.joint_count, PM_MAX_JOINT_DEPTH);
    pm_clip_destroy(&c);
    free(t.s);
}

static void test_truncated_everywhere(void **state) {
    (void)state;
    /* Every prefix of a valid file: success only once the last frame line has begun; never a
     * crash, a leak or a half-filled clip. */
    const char *good = GOOD;
    size_t n = strlen(good), last_line = (size_t)(strstr(good, L20) - good);
    for (size_t len = 0; len <= n; len++) {
        counting_allocator counter = {0, 0, -1};
        pm_allocator a = {counting_alloc, counting_free, &counter};
        pm_bvh_def def = raw_def();
        def.allocator = &a;
        pm_clip c;
        pm_error err = {PM_OK, {0}};
        pm_result r = pm_bvh_read_memory(&c, good, len, "t.bvh", &def, &err);
        if (len <= last_line && r == PM_OK) fail_msg("prefix of %zu bytes was accepted", len);
        if (len == n && r != PM_OK) fail_msg("the whole file (%zu bytes) was rejected: %s", n, err.message);
        if (r != PM_OK) {
            assert_true(is_zeroed(&c));
            assert_non_null(strstr(err.message, "t.bvh:"));
        } else pm_clip_destroy(&c);
        assert_int_equal(counter.allocs, counter.frees);
    }
}

static void test_out_of_memory_everywhere(void **state) {
    (void)state;
    /* Fail each allocation of a successful read in turn: a clean error (or, where only the
     * optional detection lost its memory, a result), never a leak or a crash. */
    char *bvh = human_bvh(0.01, 0, 10);
    counting_allocator full = {0, 0, -1};
    pm_allocator fa = {counting_alloc, counting_free, &full};
    pm_bvh_def def = pm_default_bvh_def();
    def.allocator = &fa;
    pm_clip c;
    PM_ASSERT_OK(pm_bvh_read_memory(&c, bvh, strlen(bvh), "h.bvh", &def, NULL));
    pm_clip_destroy(&c);
    assert_true(full.allocs > 10);
    for (long limit = 0; limit < full.allocs; limit++) {
        counting_allocator counter = {0, 0, limit};
        pm_allocator a = {counting_alloc, counting_free, &counter};
        def.allocator = &a;
        pm_error err = {PM_OK, {0}};
        pm_result r = pm_bvh_read_memory(&c, bvh, strlen(bvh), "h.bvh", &def, &err);
        if (r == PM_OK) pm_clip_destroy(&c);
        else {
            assert_int_equal(r, PM_ERR_OUT_OF_MEMORY);
            assert_true(is_zeroed(&c));
        }
        assert_int_equal(counter.allocs, counter.frees);
    }
    free(bvh);
}

static void test_bad_arguments(void **state) {
    (void)state;
    pm_error err;
    assert_int_equal(pm_bvh_read_memory(NULL, GOOD, strlen(GOOD), "t.bvh", NULL, &err), PM_ERR_INVALID_ARGUMENT);
    pm_clip c;
    assert_int_equal(pm_bvh_read_memory(&c, NULL, 10, "t.bvh", NULL, &err), PM_ERR_INVALID_ARGUMENT);
    pm_bvh_def def = pm_default_bvh_def();
    def.unit_scale = -1.0f;
    assert_int_equal(pm_bvh_read_memory(&c, GOOD, strlen(GOOD), "t.bvh", &def, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "unit_scale"));
    def = pm_default_bvh_def();
    def.up_axis = 7;
    assert_int_equal(pm_bvh_read_memory(&c, GOOD, strlen(GOOD), "t.bvh", &def, &err), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(pm_bvh_read_file(&c, pm_test_tmp_path("does-not-exist.bvh"), NULL, &err), PM_ERR_IO);
    assert_non_null(strstr(err.message, "does-not-exist.bvh"));
    assert_true(is_zeroed(&c));
    assert_int_equal(pm_bvh_read_file(&c, pm_test_tmp_dir(), NULL, &err), PM_ERR_IO);
    assert_string_equal(pm_bvh_channel_name(PM_CHANNEL_YROTATION), "Yrotation");
    assert_string_equal(pm_bvh_channel_name(9), "?");
}

/* ---- round trip ---- */

static void test_round_trip_basic(void **state) {
    (void)state;
    char *bvh = human_bvh(0.01, 0, 30);
    pm_clip a, b;
    PM_ASSERT_OK(pm_bvh_read_memory(&a, bvh, strlen(bvh), "walk.bvh", NULL, NULL));
    char *out;
    size_t size;
    PM_ASSERT_OK(pm_bvh_write_memory(&out, &size, &a, NULL, NULL));
    assert_int_equal(strlen(out), size);
    assert_non_null(strstr(out, "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"));
    assert_non_null(strstr(out, "OFFSET 0 95 0"));
    PM_ASSERT_OK(pm_bvh_read_memory(&b, out, size, "walk.bvh", NULL, NULL));
    assert_true(b.unit_scale == a.unit_scale);
    assert_int_equal(b.frame_count, a.frame_count);
    assert_true(pm_skeleton_same_topology(&a.skeleton, &b.skeleton));
    int jc = a.skeleton.joint_count;
    pm_transform *wa = malloc(sizeof(pm_transform) * (size_t)jc * 2), *wb = wa + jc;
    for (int f = 0; f < a.frame_count; f++) {
        PM_ASSERT_OK(pm_clip_frame_world(wa, &a, f, NULL));
        PM_ASSERT_OK(pm_clip_frame_world(wb, &b, f, NULL));
        for (int j = 0; j < jc; j++) pm_test_assert_vec3_near(wa[j].translation, wb[j].translation, 1e-4f);
    }
    /* Writing what was read gives the same hierarchy text again (angles pass through float
     * quaternions, so motion values may differ in the last digit). */
    char *again;
    size_t again_size;
    PM_ASSERT_OK(pm_bvh_write_memory(&again, &again_size, &b, NULL, NULL));
    size_t hierarchy = (size_t)(strstr(out, "MOTION") - out);
    assert_true(again_size > hierarchy);
    assert_memory_equal(again, out, hierarchy);
    free(wa);
    pm_free_buffer(out, &a.allocator);
    pm_free_buffer(again, &b.allocator);
    pm_clip_destroy(&a);
    pm_clip_destroy(&b);
    free(bvh);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_file),
        cmocka_unit_test(test_positions_replace_offset),
        cmocka_unit_test(test_number_formats),
        cmocka_unit_test(test_whitespace_quirks),
        cmocka_unit_test(test_names_and_structure),
        cmocka_unit_test(test_clip_name_from_source),
        cmocka_unit_test(test_rotation_orders),
        cmocka_unit_test(test_mixed_orders),
        cmocka_unit_test(test_unit_detection),
        cmocka_unit_test(test_up_axis_detection),
        cmocka_unit_test(test_up_axis_maya_style_rest),
        cmocka_unit_test(test_errors_channels),
        cmocka_unit_test(test_errors_numbers),
        cmocka_unit_test(test_errors_motion_header),
        cmocka_unit_test(test_frames_bounded_before_allocating),
        cmocka_unit_test(test_errors_structure),
        cmocka_unit_test(test_errors_limits),
        cmocka_unit_test(test_truncated_everywhere),
        cmocka_unit_test(test_out_of_memory_everywhere),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_round_trip_basic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
