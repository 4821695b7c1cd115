/* BVH reader: every quirk real files have, the rotation-order convention checked against
 * independent matrices, units and up-axis detection, and a basic write/read round trip (more in
 * test_bvh_write.c; malformed input, limits and failing allocations: test_bvh_errors.c). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bvh_support.h"

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

/* A file of one Xposition channel with a frame per value, each written as given. */
static pm_result read_positions(pm_clip *c, const char *const *values, int count, pm_error *err) {
    text t = {NULL, 0, 0};
    text_add(&t, "HIERARCHY\nROOT R\n{\nOFFSET 0 0 0\nCHANNELS 1 Xposition\n}\nMOTION\nFrames: %d\nFrame Time: 1\n", count);
    for (int i = 0; i < count; i++) text_add(&t, "%s\n", values[i]);
    pm_bvh_def def = raw_def();
    pm_result r = read_text(c, t.s, &def, err);
    free(t.s);
    return r;
}

static void load_positions(pm_clip *c, const char *const *values, int count) {
    pm_error err = {PM_OK, {0}};
    if (read_positions(c, values, count, &err) != PM_OK) fail_msg("expected success: %s", err.message);
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
                                          "0.000000000000000000000000000001", ".0083333", "-.5", "5.", "+7.25E-3",
                                          /* exponents past a double's: divided down in steps, to zero */
                                          "1e-400", "-5e-310", "123456789e-330",
                                          /* just above the midpoint of two floats: the digits past
                                           * the ninth decide the rounding */
                                          "1.0000000596047", "0.50000002980233",
                                          /* leading zeros are not significant digits */
                                          "0000000000000000000000012.5", "-00000000000000000000000.000000000000000000000125"};
    const int count = (int)(sizeof numbers / sizeof numbers[0]);
    pm_clip all;
    load_positions(&all, numbers, count);
    for (int i = 0; i < count; i++) {
        float expect = strtof(numbers[i], NULL);
        if (all.translations[i].x != expect) fail_msg("%s: got %.9g, want %.9g", numbers[i], (double)all.translations[i].x, (double)expect);
    }
    pm_clip_destroy(&all);
}

/* Decimals at and around the exact midpoint of two floats, printed to 20..120 significant digits
 * (glibc prints a double's exact expansion): read as strtof rounds them, where reading to double
 * and then to float rounds twice ("1.00000005960464477539063", a hair above 1 + 2^-24, gave 1).
 * Floats from denormals to 1e38, both signs, in one file of one channel. */
static void test_numbers_at_float_midpoints(void **state) {
    (void)state;
    enum { floats = 600, spellings = 6 };
    static char numbers[floats * spellings][160];
    static const char *listed[floats * spellings];
    pm_test_rng rng = {7};
    int count = 0;
    for (int i = 0; i < floats; i++) {
        uint32_t bits = pm_test_rng_u32(&rng) % 0x7effffffu; /* below FLT_MAX: the next float is finite */
        if (i % 10 == 0) bits %= 0x00800000u;                 /* denormals */
        float f;
        memcpy(&f, &bits, sizeof f);
        double mid = 0.5 * ((double)f + (double)nextafterf(f, INFINITY)); /* exact: 26 bits */
        const char *sign = i % 2 ? "-" : "";
        char exact[160];
        snprintf(exact, sizeof exact, "%.118e", mid);
        char *e = strchr(exact, 'e');
        int last = (int)(e - exact) - 1;
        while (exact[last] == '0') last--; /* the expansion ends here */
        int digits = last; /* significant digits: all but the point */
        int cut = 20 + (int)(pm_test_rng_u32(&rng) % 10);
        if (cut > digits - 1) cut = digits - 1;
        /* the midpoint itself; with zeros after it; cut short (below); cut short and a 1 at its end
         * (above); a 1 right after its last digit (above by one part in 10^digits); positional */
        snprintf(numbers[count++], 160, "%s%.*s%s", sign, last + 1, exact, e);
        snprintf(numbers[count++], 160, "%s%.*s000%s", sign, last + 1, exact, e);
        snprintf(numbers[count++], 160, "%s%.*s%s", sign, cut + 1, exact, e);
        snprintf(numbers[count++], 160, "%s%.*s1%s", sign, cut + 1, exact, e);
        snprintf(numbers[count++], 160, "%s%.*s1%s", sign, last + 1, exact, e);
        snprintf(numbers[count++], 160, "%s%.40f", sign, mid);
    }
    for (int i = 0; i < count; i++) listed[i] = numbers[i];
    pm_clip c;
    load_positions(&c, listed, count);
    int wrong = 0;
    for (int i = 0; i < count; i++) {
        float want = strtof(numbers[i], NULL), got = c.translations[i].x;
        if (memcmp(&got, &want, sizeof got) != 0 && wrong++ < 5)
            print_error("%s: got %.9g, want %.9g\n", numbers[i], (double)got, (double)want);
    }
    pm_clip_destroy(&c);
    assert_int_equal(wrong, 0);
}

/* The largest float's upper midpoint, FLT_MAX + 2^103, rounds to infinity (to even) and is refused
 * like anything above it; a hair below it is FLT_MAX. */
static void test_number_at_the_float_limit(void **state) {
    (void)state;
    static const char *const refused[] = {"340282356779733661637539395458142568448", "3.40282356779733661637539395458142568448e38",
                                          "340282356779733661637539395458142568448.0000000001"};
    static const char *const accepted[] = {"340282356779733661637539395458142568447.9999999", "3.4028235677973366163753939545814256844e38"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        pm_clip c;
        pm_error err = {PM_OK, {0}};
        assert_int_equal(read_positions(&c, &refused[i], 1, &err), PM_ERR_NUMERIC);
        assert_non_null(strstr(err.message, "beyond the float range"));
    }
    pm_clip c;
    load_positions(&c, accepted, 2);
    for (int i = 0; i < 2; i++) assert_true(c.translations[i].x == FLT_MAX);
    pm_clip_destroy(&c);
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
    /* Labels with the colon apart from the word, as some exporters write them. */
    load_raw(&c, "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Yposition\n}\nMOTION\nFrames : 2\nFrame Time : 0.25\n3\n4\n");
    assert_int_equal(c.frame_count, 2);
    assert_true(c.frame_time == 0.25f && c.translations[1].y == 4.0f);
    pm_clip_destroy(&c);
    /* ...and the value glued to the colon, as scripts print it ("Frames:2" was refused as
     * "expected 'Frames:', found 'Frames:2'"). */
    load_raw(&c, "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Yposition\n}\nMOTION\nFrames:2\nFrame Time:0.25\n3\n4\n");
    assert_int_equal(c.frame_count, 2);
    assert_true(c.frame_time == 0.25f && c.translations[1].y == 4.0f);
    pm_clip_destroy(&c);
    load_raw(&c, "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Yposition\n}\nMOTION\nFrames :2\nFrame Time :.5\n3\n4\n");
    assert_int_equal(c.frame_count, 2);
    assert_true(c.frame_time == 0.5f && c.translations[1].y == 4.0f);
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
    PM_ASSERT_OK(pm_bvh_read_memory(&c, GOOD, strlen(GOOD), "dir/x\x1fy\x20z.bvh", &def, NULL));
    assert_string_equal(c.name, "x_y z"); /* the last control character, and the first that is not */
    pm_clip_destroy(&c);
    /* No source name: "clip" (messages say "(memory)"). */
    PM_ASSERT_OK(pm_bvh_read_memory(&c, GOOD, strlen(GOOD), NULL, &def, NULL));
    assert_string_equal(c.name, "clip");
    pm_clip_destroy(&c);
    PM_ASSERT_OK(pm_bvh_read_memory(&c, GOOD, strlen(GOOD), "", &def, NULL));
    assert_string_equal(c.name, "clip");
    pm_clip_destroy(&c);
    /* A leading dot starts a name, not an extension. */
    PM_ASSERT_OK(pm_bvh_read_memory(&c, GOOD, strlen(GOOD), "dir/.walk", &def, NULL));
    assert_string_equal(c.name, ".walk");
    pm_clip_destroy(&c);
    /* A long UTF-8 name is cut at a character boundary: 150 two-byte characters give 127. */
    char source[400] = "d/";
    for (int i = 0; i < 150; i++) strcat(source, "\xc3\xa9");
    strcat(source, ".bvh");
    PM_ASSERT_OK(pm_bvh_read_memory(&c, GOOD, strlen(GOOD), source, &def, NULL));
    assert_int_equal(strlen(c.name), 254);
    assert_memory_equal(c.name, source + 2, 254);
    pm_clip_destroy(&c);
    /* A source naming a directory has no file name to take: "clip". */
    PM_ASSERT_OK(pm_bvh_read_memory(&c, GOOD, strlen(GOOD), "some/dir/", &def, NULL));
    assert_string_equal(c.name, "clip");
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

/* Angles of any finite size read as the rotation they name: 1e20 degrees was refused as "not unit
 * length" and 1e30 as "not finite" while sin and cos took large arguments apart in three parts
 * of pi/2 (math_functions.c). Compared with libm's double sin and cos of the same half angles. */
static void test_huge_angles(void **state) {
    (void)state;
    const double degrees[4] = {1e20, -1e30, 3.4e38, 395824185999450.0 /* 360 x 2^40 + 90 */};
    for (int i = 0; i < 4; i++) {
        char buf[512];
        snprintf(buf, sizeof buf,
                 "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 1 Zrotation\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\n"
                 "MOTION\nFrames: 1\nFrame Time: 1\n%.17g\n",
                 degrees[i]);
        pm_clip c;
        load_raw(&c, buf);
        double half = 0.5 * (degrees[i] * (3.14159265358979323846 / 180.0));
        pm_quat q = c.rotations[0], want = pm_quat_make(0.0f, 0.0f, (float)sin(half), (float)cos(half));
        if (q.w * want.w + q.z * want.z < 0.0f) want = pm_quat_make(0.0f, 0.0f, -want.z, -want.w); /* q and -q: one rotation */
        if (fabsf(q.z - want.z) > 1e-6f || fabsf(q.w - want.w) > 1e-6f || q.x != 0.0f || q.y != 0.0f)
            fail_msg("%g degrees about Z read as (%g, %g, %g, %g), libm's (0, 0, %g, %g)", degrees[i], (double)q.x,
                     (double)q.y, (double)q.z, (double)q.w, (double)want.z, (double)want.w);
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
    /* Within 1e-4 of a known unit it is that unit; 5% off (a 1.05 cm unit) it is not. */
    assert_string_equal(pm_bvh_unit_name(0.01f * (1.0f + 5e-5f)), "cm");
    assert_string_equal(pm_bvh_unit_name(0.0105f), "custom");
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
        cmocka_unit_test(test_numbers_at_float_midpoints),
        cmocka_unit_test(test_number_at_the_float_limit),
        cmocka_unit_test(test_whitespace_quirks),
        cmocka_unit_test(test_names_and_structure),
        cmocka_unit_test(test_clip_name_from_source),
        cmocka_unit_test(test_rotation_orders),
        cmocka_unit_test(test_huge_angles),
        cmocka_unit_test(test_mixed_orders),
        cmocka_unit_test(test_unit_detection),
        cmocka_unit_test(test_up_axis_detection),
        cmocka_unit_test(test_up_axis_maya_style_rest),
        cmocka_unit_test(test_round_trip_basic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
