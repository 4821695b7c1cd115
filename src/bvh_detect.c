/* BVH loading entry points: read the file, parse it, then find the up axis and units the file
 * does not state, and convert to Y-up metres. */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "bvh_internal.h"
#include "core.h"

pm_bvh_def pm_default_bvh_def(void) {
    pm_bvh_def d;
    d.unit_scale = 0.0f;
    d.up_axis = -1;
    d.allocator = NULL;
    return d;
}

const char *pm_bvh_channel_name(int channel) {
    static const char *const names[6] = {"Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation"};
    return channel >= 0 && channel < 6 ? names[channel] : "?";
}

typedef struct known_unit {
    const char *name;
    float metres;
} known_unit;

/* CMU's ASF/AMC unit is 1/0.45 inch; the cgspeed BVH conversions keep it. */
static const known_unit known_units[] = {
    {"m", 1.0f}, {"cm", 0.01f}, {"mm", 0.001f}, {"in", 0.0254f}, {"cmu", 0.0254f / 0.45f},
};
#define KNOWN_UNIT_COUNT (int)(sizeof known_units / sizeof known_units[0])

const char *pm_bvh_unit_name(float unit_scale) {
    for (int i = 0; i < KNOWN_UNIT_COUNT; i++)
        if (fabsf(unit_scale - known_units[i].metres) <= 1e-4f * known_units[i].metres) return known_units[i].name;
    return "custom";
}

/* ---- detection ---- */

/* Metres per file unit for a Y-up clip still in file units: the known unit that puts the
 * median hip height above the lowest foot closest to 0.9 m (in log terms); 1 when the clip
 * gives no usable height. */
static pm_result detect_unit_scale(float *out, const pm_clip *clip, pm_error *error) {
    pm_clip_survey survey;
    pm_result r = pm_clip_survey_compute(&survey, clip, error);
    if (r != PM_OK) return r;
    *out = 1.0f;
    double hip = survey.hip_height;
    if (!(hip > 0.0) || !isfinite(hip)) return PM_OK;
    const double target = 0.9; /* metres of hips above the feet for an adult */
    int best = 0;
    double best_err = INFINITY;
    for (int i = 0; i < KNOWN_UNIT_COUNT; i++) {
        /* How many times too tall or too short (|log| of the ratio, without libm's log, whose
         * last bits may differ between machines and so tip a near tie). */
        double ratio = hip * known_units[i].metres / target, err = ratio >= 1.0 ? ratio : 1.0 / ratio;
        if (err < best_err) {
            best_err = err;
            best = i;
        }
    }
    *out = known_units[best].metres;
    return PM_OK;
}

/* Up axis of a clip still in file axes: the direction from the feet to the head (or hips) over
 * the animated frames, so rigs whose rest pose is lying down (Maya-style bones) still work. */
static pm_result detect_up_axis(pm_up_axis *out, const pm_clip *clip, pm_error *error) {
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, &clip->skeleton);
    int jc = clip->skeleton.joint_count;
    int feet[4] = {roles.left_foot, roles.right_foot, roles.left_toe, roles.right_toe};
    int top = roles.head >= 0 ? roles.head : roles.hips;
    pm_transform *world = (pm_transform *)pm_alloc_array(&clip->allocator, (size_t)jc, sizeof(pm_transform), 16);
    if (!world) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "bvh: out of memory for %d joints", jc);
    int samples = PM_MIN(clip->frame_count, 64);
    double up[3] = {0.0, 0.0, 0.0};
    double extent[3] = {0.0, 0.0, 0.0};
    for (int s = 0; s < samples; s++) {
        pm_result r = pm_clip_frame_world(world, clip, pm_sample_frame(s, samples, clip->frame_count), error);
        if (r != PM_OK) {
            pm_free(&clip->allocator, world);
            return r;
        }
        pm_vec3 foot = pm_vec3_zero();
        int nfeet = 0;
        for (int i = 0; i < 4; i++)
            if (feet[i] >= 0 && feet[i] != top) {
                foot = pm_vec3_add(foot, world[feet[i]].translation);
                nfeet++;
            }
        if (nfeet && top >= 0) {
            pm_vec3 d = pm_vec3_sub(world[top].translation, pm_vec3_scale(foot, 1.0f / (float)nfeet));
            up[0] += d.x;
            up[1] += d.y;
            up[2] += d.z;
        }
        /* Without named feet: people are taller than they are wide or deep. */
        float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int j = 0; j < jc; j++) {
            float v[3] = {world[j].translation.x, world[j].translation.y, world[j].translation.z};
            for (int k = 0; k < 3; k++) {
                lo[k] = PM_MIN(lo[k], v[k]);
                hi[k] = PM_MAX(hi[k], v[k]);
            }
        }
        for (int k = 0; k < 3; k++) extent[k] += (double)hi[k] - (double)lo[k];
    }
    pm_free(&clip->allocator, world);
    const double *score = (fabs(up[1]) + fabs(up[2]) > 0.0 && isfinite(up[1]) && isfinite(up[2])) ? up : extent;
    *out = fabs(score[2]) > fabs(score[1]) ? PM_UP_Z : PM_UP_Y;
    return PM_OK;
}

/* ---- entry points ---- */

/* File name without directory and extension: the clip's name. Control characters, legal in
 * file names, become '_': a clip name is quoted in messages and must not break their line, and
 * the file's contents are no less readable for its name. A long name is cut at a character
 * boundary so that a UTF-8 name stays UTF-8. */
static void base_name(char *out, size_t cap, const char *path) {
    const char *b = path;
    for (const char *c = path; *c; c++)
        if (*c == '/' || *c == '\\') b = c + 1;
    size_t n = strlen(b);
    const char *dot = strrchr(b, '.');
    if (dot && dot != b) n = (size_t)(dot - b);
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)b[n] & 0xC0) == 0x80) n--;
    }
    if (n == 0) {
        b = "clip";
        n = 4;
    }
    for (size_t i = 0; i < n; i++) out[i] = (unsigned char)b[i] < 0x20 || b[i] == 0x7f ? '_' : b[i];
    out[n] = '\0';
}

pm_result pm_bvh_check_units(float unit_scale, int up_axis, const char *prefix, const char *unit_rule,
                             const char *axis_rule, pm_error *error) {
    if (!(unit_scale >= 0.0f) || !isfinite(unit_scale))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: unit_scale %g must be %s", prefix, (double)unit_scale,
                       unit_rule);
    if (up_axis != -1 && up_axis != PM_UP_Y && up_axis != PM_UP_Z)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: up_axis %d must be %s, PM_UP_Y or PM_UP_Z", prefix, up_axis,
                       axis_rule);
    return PM_OK;
}

/* Converts a freshly parsed clip (file units and axes) to Y-up metres. */
static pm_result finish_clip(pm_clip *clip, const pm_bvh_def *def, const char *source, pm_error *error) {
    const char *where = source ? source : "(memory)";
    pm_result r = PM_OK;
    pm_up_axis up = def->up_axis >= 0 ? (pm_up_axis)def->up_axis : PM_UP_Y;
    if (def->up_axis < 0) r = detect_up_axis(&up, clip, error);
    if (r == PM_OK && up == PM_UP_Z) r = pm_clip_z_up_to_y_up(clip, error);
    float scale = def->unit_scale;
    if (r == PM_OK && !(scale > 0.0f)) r = detect_unit_scale(&scale, clip, error);
    clip->unit_scale = 1.0f;
    if (r == PM_OK) r = pm_clip_scale(clip, scale, error);
    if (r != PM_OK) {
        pm_error_prefix(error, "%s", where);
        return r;
    }
    char name[256];
    base_name(name, sizeof name, source ? source : "clip");
    if ((r = pm_clip_set_name(clip, name, error)) != PM_OK) {
        pm_error_prefix(error, "%s", where);
        return r;
    }
    /* Huge but finite file values can still overflow once scaled. */
    if ((r = pm_clip_validate(clip, error)) != PM_OK) pm_error_prefix(error, "%s", where);
    return r;
}

pm_result pm_bvh_read_memory(pm_clip *out, const char *data, size_t size, const char *source_name,
                             const pm_bvh_def *def_in, pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_bvh_read_memory: out is NULL");
    memset(out, 0, sizeof *out);
    const char *source = source_name && source_name[0] ? source_name : "(memory)";
    if (!data && size) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: data is NULL", source);
    pm_bvh_def def = def_in ? *def_in : pm_default_bvh_def();
    pm_result r = pm_bvh_check_units(def.unit_scale, def.up_axis, source, "0 (detect) or a positive scale", "-1 (detect)",
                                     error);
    if (r != PM_OK) return r;
    if ((r = pm_bvh_parse(out, data ? data : "", size, source, def.allocator, error)) != PM_OK) return r;
    if ((r = finish_clip(out, &def, source_name && source_name[0] ? source : NULL, error)) != PM_OK)
        pm_clip_destroy(out);
    return r;
}

pm_result pm_bvh_read_file(pm_clip *out, const char *path, const pm_bvh_def *def, pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_bvh_read_file: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_bvh_read_file: path is NULL");
    if (!path[0]) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_bvh_read_file: path is empty");
    const pm_allocator *a = def ? def->allocator : NULL;
    void *data;
    size_t size;
    pm_result r = pm_file_read(&data, &size, path, PM_FILE_READ_PIPES, a, error);
    if (r != PM_OK) return r;
    r = pm_bvh_read_memory(out, (const char *)data, size, path, def, error);
    pm_free(a, data);
    return r;
}
