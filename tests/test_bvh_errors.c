/* BVH reader: every malformed input we must refuse cleanly, with the file and line, limits
 * checked before allocating, every truncation and every failing allocation, bad arguments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bvh_internal.h"
#include "bvh_support.h"

/* ---- helpers ---- */

static int is_zeroed(const pm_clip *clip) {
    pm_clip zero;
    memset(&zero, 0, sizeof zero);
    return memcmp(clip, &zero, sizeof zero) == 0;
}

/* Reads `bvh` expecting `code` with a message containing each needle; checks nothing leaked and
 * the output was left zeroed. */
static void expect_error_n(const char *bvh, size_t size, pm_result code, const char *n1, const char *n2) {
    pm_test_allocator counter = {0, 0, -1, 0, 0};
    pm_allocator a = pm_test_allocator_hooks(&counter);
    pm_bvh_def def = pm_default_bvh_def();
    def.allocator = &a;
    pm_clip clip;
    memset(&clip, 0xAB, sizeof clip);
    pm_error err = {PM_OK, {0}};
    pm_result r = pm_bvh_read_memory(&clip, bvh, size, "t.bvh", &def, &err);
    if (r != code) fail_msg("expected %s, got %s: %s", pm_result_string(code), pm_result_string(r), err.message);
    assert_int_equal(err.code, code);
    if (n1 && !strstr(err.message, n1)) fail_msg("message '%s' lacks '%s'", err.message, n1);
    if (n2 && !strstr(err.message, n2)) fail_msg("message '%s' lacks '%s'", err.message, n2);
    assert_true(is_zeroed(&clip));
    assert_int_equal(counter.allocs, counter.frees);
}

static void expect_error(const char *bvh, pm_result code, const char *n1, const char *n2) {
    expect_error_n(bvh, strlen(bvh), code, n1, n2);
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
    /* Finite as text but beyond the float range: named where it is, as in an OFFSET. */
    expect_error(HEAD8 L09 L10 L11 L12 L13 L14 L15 L16 L17 L18 L19 "1 90 0 0 1e39 0 5 0 0\n", PM_ERR_NUMERIC,
                 "t.bvh:20: frame 1", "value 5: '1e39' is beyond the float range");
    expect_error(L01 L02 L03 L04 L05 L06 L07 "\t\tOFFSET 0 -3.5e38 0\n", PM_ERR_NUMERIC, "t.bvh:8: OFFSET",
                 "'-3.5e38' is beyond the float range");
}

static void test_errors_motion_header(void **state) {
    (void)state;
    pm_clip lo;
#define TO_16 L01 L02 L03 L04 L05 L06 L07 L08 L09 L10 L11 L12 L13 L14 L15 L16
    expect_error(TO_16 "Frames: 99999999999\n" L18 L19 L20, PM_ERR_LIMIT, "t.bvh:17: Frames", "99999999999");
    /* One frame over the limit is over it, before the data is looked at. */
    expect_error(TO_16 "Frames: 10000001\n" L18 L19 L20, PM_ERR_LIMIT, "t.bvh:17: Frames", "10000001 frames (at most 10000000)");
    expect_error(TO_16 "Frames: 1000000\n" L18 L19 L20, PM_ERR_PARSE, "t.bvh:17: Frames", "frame lines of 9 values");
    expect_error(TO_16 "Frames: 0\n" L18, PM_ERR_PARSE, "t.bvh:17: Frames", "0 frames");
    expect_error(TO_16 "Frames: -2\n" L18, PM_ERR_PARSE, "t.bvh:17: Frames", "'-2'");
    expect_error(TO_16 "Frames 2\n" L18, PM_ERR_PARSE, "t.bvh:17: Frames", "':'");
    expect_error(TO_16 "Frame: 2\n" L18, PM_ERR_PARSE, "t.bvh:17: Frames", NULL);
    /* A value missing from a label's line is not taken from the next line: a Frame Time was
     * the first frame's first value and the error blamed the frame line's second one. */
    expect_error(TO_16 L17 "Frame Time:\n" L19 L20, PM_ERR_PARSE, "t.bvh:18: Frame Time", "no value after 'Frame Time:'");
    expect_error(TO_16 "Frames: \t\n2\n" L18, PM_ERR_PARSE, "t.bvh:17: Frames", "no value after 'Frames:' on its line");
    expect_error(TO_16 L17 "Frame Time :", PM_ERR_PARSE, "t.bvh:18: Frame Time", "no value");
    /* A value glued to the colon is read as the value, and checked as one. */
    expect_error(TO_16 "Frames:2x\n" L18, PM_ERR_PARSE, "t.bvh:17: Frames", "'2x'");
    expect_error(TO_16 L17 "Frame Time:fast\n" L19 L20, PM_ERR_PARSE, "t.bvh:18: Frame Time", "'fast'");
    expect_error(TO_16 L17 "Frame Time::0.03\n" L19 L20, PM_ERR_PARSE, "t.bvh:18: Frame Time", "':0.03'");
    expect_error(TO_16 L17 "Frame Time: 0\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", "positive");
    expect_error(TO_16 L17 "Frame Time: -0.03\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", NULL);
    expect_error(TO_16 L17 "Frame Time: inf\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", NULL);
    expect_error(TO_16 L17 "Frame Time: 1e-60\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", NULL);
    /* Finite and positive, but no capture runs above 100 kHz: a corrupt header. */
    expect_error(TO_16 L17 "Frame Time: 1e-40\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", "below 1e-05 s");
    expect_error(TO_16 L17 "Frame Time: 0.0000099\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", "'0.0000099'");
    load_raw(&lo, TO_16 L17 "Frame Time: 0.00001\n" L19 L20);
    pm_clip_destroy(&lo);
    /* ...nor at a frame an hour or slower: the clip's duration would overflow a float. */
    expect_error(TO_16 L17 "Frame Time: 3e38\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", "'3e38' is above 3600 s");
    expect_error(TO_16 L17 "Frame Time: 3600.001\n" L19 L20, PM_ERR_NUMERIC, "t.bvh:18: Frame Time", "above 3600 s");
    load_raw(&lo, TO_16 L17 "Frame Time: 3600\n" L19 L20);
    pm_clip_destroy(&lo);
    expect_error(TO_16 L17 "Frame Time: fast\n" L19 L20, PM_ERR_PARSE, "t.bvh:18: Frame Time", "'fast'");
    expect_error(TO_16 L17 "Frame Time: 0.03 extra\n" L19 L20, PM_ERR_PARSE, "t.bvh:18: Frame Time", "'extra'");
    /* Frame-data problems Frames: and the bytes left cannot catch. */
    expect_error(TO_16 L17 L18 L19 "1 90 0 0 10 0 5 0\n", PM_ERR_PARSE, "t.bvh:20: frame 1", "8 values on the line, expected 9");
    expect_error(TO_16 L17 L18 L19 "1 90 0 0 10 0 5 0 0 0\n", PM_ERR_PARSE, "t.bvh:20: frame 1", "10 values");
    expect_error(TO_16 "Frames: 3\n" L18 "0.0000 90.0000 0.0000 0.0000 0.0000 0.0000 0.0000 0.0000 0.0000\n"
                       "1.0000 90.0000 0.0000 0.0000 10.0000 0.0000 5.0000 0.0000 0.0000\n",
                 PM_ERR_PARSE, "t.bvh:17: Frames", "declares 3 frames but the file ends after 2 frame lines");
    /* ...named at Frames: whatever blank lines follow the last frame (enough of them for the
     * frame lines Frames: declares, so that the count is not refused up front). */
#define TWENTY_BLANK_LINES "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"
    expect_error(TO_16 "Frames: 3\n" L18 "0 90 0 0 0 0 0 0 0\n" TWENTY_BLANK_LINES TWENTY_BLANK_LINES,
                 PM_ERR_PARSE, "t.bvh:17: Frames", "ends after 1 frame line");
#undef TWENTY_BLANK_LINES
    expect_error(GOOD "2 90 0 0 0 0 0 0 0\n", PM_ERR_PARSE, "t.bvh:21: MOTION", "more frame data");
    /* A hierarchy without channels has no motion to read. */
    expect_error("HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\n}\nMOTION\nFrames: 1\nFrame Time: 1\n\n", PM_ERR_PARSE, "CHANNELS", NULL);
#undef TO_16
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
    pm_test_allocator cap = {0, 0, -1, 1u << 20, 0}; /* refuses, and records, requests above 1 MiB */
    pm_allocator a = pm_test_allocator_hooks(&cap);
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
    /* The name is quoted with its control characters replaced, a NUL or an escape included
     * (printed raw they cut the quote short, "the name 'Bad'", or garble the terminal). */
#define NAME_NUL L01 "ROOT Bad\0Na\x1b[31mme\n{\n"
    expect_error_n(NAME_NUL, sizeof NAME_NUL - 1, PM_ERR_PARSE, "t.bvh:2: JOINT", "the name 'Bad?Na?[31mme' contains");
#undef NAME_NUL
    /* Likewise a frame value: a binary file's run of NULs is quoted, not shown as ''. */
#define VALUE_NUL HEAD8 L09 L10 L11 L12 L13 L14 L15 L16 L17 L18 L19 "1 90 0 0 10 0 5 0 \0\0\n"
    expect_error_n(VALUE_NUL, sizeof VALUE_NUL - 1, PM_ERR_PARSE, "t.bvh:20: frame 1", "value 9: expected a number, found '?" "?'");
#undef VALUE_NUL
    expect_error(L01 L02 L03 L04 L04, PM_ERR_PARSE, "t.bvh:5: OFFSET", "joint 'Hips' has OFFSET twice");
    expect_error(L01 "{\n", PM_ERR_PARSE, "t.bvh:2: HIERARCHY", "'{' without a ROOT, JOINT or End Site before it");
    /* A token quoted in a message keeps well-formed UTF-8 and replaces bytes that are not. */
    expect_error(L01 L02 L03 L04 "Kn\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 1\n", PM_ERR_PARSE, "t.bvh:5: HIERARCHY",
                 "'Kn\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80'");
    expect_error(L01 L02 L03 L04 "Kn\xc3\x28\xe2\x82 1\n", PM_ERR_PARSE, "t.bvh:5: HIERARCHY",
                 "'Kn?(?" "?'"); /* (split: "??'" would be a trigraph) */
    /* Bytes F5..FF start no UTF-8 character, whatever follows them. */
    expect_error(L01 L02 L03 L04 "Kn\xf8\x80\x80 1\n", PM_ERR_PARSE, "t.bvh:5: HIERARCHY", "'Kn?" "?" "?'");
    /* UTF-16 text, as Windows editors save "Unicode": little and big endian, with a byte order
     * mark and without one. */
    expect_error_n("\xFF\xFEH\0I\0E\0R\0", 10, PM_ERR_PARSE, "t.bvh:1: HIERARCHY", "UTF-16");
    expect_error_n("\xFE\xFF\0H\0I\0E\0R", 10, PM_ERR_PARSE, "t.bvh:1: HIERARCHY", "save it as UTF-8");
    expect_error_n("H\0I\0E\0R\0A\0", 10, PM_ERR_PARSE, "t.bvh:1: HIERARCHY", "UTF-16");
    expect_error_n("\0H\0I\0E\0R\0A", 10, PM_ERR_PARSE, "t.bvh:1: HIERARCHY", "UTF-16");
    expect_error_n("\xFF\xFE\0\0H\0\0\0I\0\0\0", 12, PM_ERR_PARSE, "t.bvh:1: HIERARCHY", "UTF-32 text");
    expect_error_n("\0\0\xFE\xFF\0\0\0H\0\0\0I", 12, PM_ERR_PARSE, "t.bvh:1: HIERARCHY", "UTF-32 text");
    /* A NUL that is not UTF-16's pattern is still plain garbage. */
    expect_error_n("\0\0\0\0garbage", 11, PM_ERR_PARSE, "t.bvh:1: HIERARCHY", "not a BVH file?");
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
    /* A joint name past PM_BVH_MAX_NAME_LENGTH bytes. */
    memset(&t, 0, sizeof t);
    text_add(&t, "HIERARCHY\nROOT ");
    for (int i = 0; i <= PM_BVH_MAX_NAME_LENGTH; i++) text_add(&t, "n");
    text_add(&t, "\n{\n");
    expect_error(t.s, PM_ERR_LIMIT, "t.bvh:2: JOINT", "a name of 1025 bytes (at most 1024)");
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
        pm_test_allocator counter = {0, 0, -1, 0, 0};
        pm_allocator a = pm_test_allocator_hooks(&counter);
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
    /* A keyword cut by the end says so, rather than reading as a typo. */
    const char *frames = strstr(good, "Frames:");
    assert_non_null(frames);
    expect_error_n(good, (size_t)(frames - good) + 2, PM_ERR_PARSE, "found 'Fr' where the file ends", "Frames");
}

static void test_out_of_memory_everywhere(void **state) {
    (void)state;
    /* Fail each allocation of a successful read in turn: a clean error (or, where only the
     * optional detection lost its memory, a result), never a leak or a crash. */
    char *bvh = human_bvh(0.01, 0, 10);
    pm_test_allocator full = {0, 0, -1, 0, 0};
    pm_allocator fa = pm_test_allocator_hooks(&full);
    pm_bvh_def def = pm_default_bvh_def();
    def.allocator = &fa;
    pm_clip c;
    PM_ASSERT_OK(pm_bvh_read_memory(&c, bvh, strlen(bvh), "h.bvh", &def, NULL));
    pm_clip_destroy(&c);
    assert_true(full.allocs > 10);
    for (long limit = 0; limit < full.allocs; limit++) {
        pm_test_allocator counter = {0, 0, limit, 0, 0};
        pm_allocator a = pm_test_allocator_hooks(&counter);
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
    assert_int_equal(pm_bvh_read_file(&c, "", NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_bvh_read_file: path is empty");
    assert_true(is_zeroed(&c));
    assert_string_equal(pm_bvh_channel_name(PM_CHANNEL_YROTATION), "Yrotation");
    assert_string_equal(pm_bvh_channel_name(9), "?");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors_channels),
        cmocka_unit_test(test_errors_numbers),
        cmocka_unit_test(test_errors_motion_header),
        cmocka_unit_test(test_frames_bounded_before_allocating),
        cmocka_unit_test(test_errors_structure),
        cmocka_unit_test(test_errors_limits),
        cmocka_unit_test(test_truncated_everywhere),
        cmocka_unit_test(test_out_of_memory_everywhere),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
