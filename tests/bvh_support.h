/* Helpers shared by the BVH reader tests (test_bvh.c, test_bvh_errors.c): reads in file units,
 * generated files and the reference file of the error tests. Header-only: each test binary is one
 * file. */
#ifndef PM_TESTS_BVH_SUPPORT_H
#define PM_TESTS_BVH_SUPPORT_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

static inline pm_bvh_def raw_def(void) {
    /* File units and axes as written: no detection, so values can be checked directly. */
    pm_bvh_def d = pm_default_bvh_def();
    d.unit_scale = 1.0f;
    d.up_axis = PM_UP_Y;
    return d;
}

static inline pm_result read_text(pm_clip *clip, const char *text, const pm_bvh_def *def, pm_error *err) {
    return pm_bvh_read_memory(clip, text, strlen(text), "t.bvh", def, err);
}

static inline void load_raw(pm_clip *clip, const char *text) {
    pm_error err = {PM_OK, {0}};
    pm_bvh_def def = raw_def();
    pm_result r = read_text(clip, text, &def, &err);
    if (r != PM_OK) fail_msg("expected success, got %s: %s", pm_result_string(r), err.message);
}

/* A growing text buffer for generated files. */
typedef struct text {
    char *s;
    size_t n, cap;
} text;

static inline void text_add(text *t, const char *format, ...) {
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
static inline char *human_bvh(double unit, int z_up, int frames) {
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

#endif
