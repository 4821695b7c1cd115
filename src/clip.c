/* Clip storage, sampling, resampling, unit and axis conversion, forward kinematics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "clip_internal.h"
#include "core.h"
#include "posematch/anim.h"

static pm_result clip_alloc_frames(pm_clip *c, int frame_count, pm_error *error) {
    size_t jc = (size_t)c->skeleton.joint_count;
    /* PM_MAX_FRAMES x PM_MAX_JOINTS passes a 32-bit size_t: wrapped, the count would allocate a
     * sliver that the frames are then written past. Memory no process of such a system can have. */
    if (jc && (size_t)frame_count > SIZE_MAX / jc)
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY,
                       "clip: out of memory for %d frames x %d joints (more than the address space)", frame_count,
                       c->skeleton.joint_count);
    size_t n = (size_t)frame_count * jc;
    c->rotations = (pm_quat *)pm_alloc_array(&c->allocator, n, sizeof(pm_quat), 16);
    c->translations = (pm_vec3 *)pm_alloc_array(&c->allocator, n, sizeof(pm_vec3), 16);
    if (!c->rotations || !c->translations)
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "clip: out of memory for %d frames x %d joints", frame_count,
                       c->skeleton.joint_count);
    c->frame_count = frame_count;
    return PM_OK;
}

/* A clip's name is quoted in messages: it must not break their line. */
static pm_result clip_check_name(const pm_clip *c, const char *op, pm_error *error) {
    char what[128];
    snprintf(what, sizeof what, "%s: the clip's name", op);
    return c->name ? pm_check_name(c->name, what, error) : PM_OK;
}

pm_result pm_clip_check_ready(const pm_clip *c, const char *op, pm_error *error) {
    if (!c->rotations || !c->translations || !c->skeleton.parents || c->frame_count < 1 || c->frame_count > PM_MAX_FRAMES)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: the clip is not initialised (create it with pm_clip_create)", op);
    /* Frames are indexed frame * joint_count: a count out of range would point anywhere. */
    if (c->skeleton.joint_count < 1 || c->skeleton.joint_count > PM_MAX_JOINTS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: the clip's skeleton.joint_count %d is outside 1..%d", op,
                       c->skeleton.joint_count, PM_MAX_JOINTS);
    pm_result r = clip_check_name(c, op, error);
    if (r != PM_OK) return r;
    if (!(c->frame_time > 0.0f) || !isfinite(c->frame_time))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: clip '%s' has frame time %g (must be positive and finite)", op,
                       c->name ? c->name : "(unnamed)", (double)c->frame_time);
    return PM_OK;
}

/* The library's curve arrays end in a zeroed entry (see pm_clip_add_curve), so that a
 * curve_count beyond the array stops at it instead of reading past the allocation. */
static pm_result clip_check_curves(const pm_clip *c, const char *op, pm_error *error) {
    if (c->curve_count < 0 || (c->curve_count > 0 && !c->curves))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: curve_count %d does not match the curves array (%s)", op,
                       c->curve_count, c->curves ? "set" : "NULL");
    for (int i = 0; i < c->curve_count; i++) {
        if (!c->curves[i].name)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: curve_count is %d but the curves array holds %d", op,
                           c->curve_count, i);
        if (!c->curves[i].values)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: curve %d has no values", op, i);
        char what[128];
        snprintf(what, sizeof what, "%s: curve %d's name", op, i);
        pm_result r = pm_check_name(c->curves[i].name, what, error);
        if (r != PM_OK) return r;
    }
    return PM_OK;
}

static pm_result check_curve_values(const char *clip, const char *curve, const float *values, int frames,
                                    pm_error *error) {
    for (int f = 0; f < frames; f++)
        if (!isfinite(values[f]))
            return pm_fail(error, PM_ERR_NUMERIC, "clip '%s': curve '%s' frame %d is not finite", clip, curve, f);
    return PM_OK;
}

void pm_clip_move_into(pm_clip *out, pm_clip *result, int out_is_input) {
    if (out_is_input) pm_clip_destroy(out);
    *out = *result;
}

pm_result pm_clip_fail_into(pm_clip *out, int out_is_input, pm_result r) {
    if (!out_is_input) memset(out, 0, sizeof *out);
    return r;
}

pm_result pm_clip_create(pm_clip *out, const pm_skeleton *skeleton, int frame_count, float frame_time,
                         const pm_allocator *allocator, pm_error *error) {
    if (!out || !skeleton) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_create: NULL argument");
    /* The skeleton may be out's own: then out is replaced only once the new clip exists. */
    const int aliased = skeleton == &out->skeleton;
    if (frame_count < 1 || frame_count > PM_MAX_FRAMES)
        return pm_clip_fail_into(out, aliased,
                                 pm_fail(error, PM_ERR_LIMIT, "clip: %d frames is outside 1..%d", frame_count, PM_MAX_FRAMES));
    if (!(frame_time > 0.0f) || !isfinite(frame_time))
        return pm_clip_fail_into(out, aliased,
                                 pm_fail(error, PM_ERR_INVALID_ARGUMENT, "clip: frame time %g must be positive and finite",
                                         (double)frame_time));
    pm_result r = pm_skeleton_validate(skeleton, error);
    if (r != PM_OK) {
        pm_error_prefix(error, "pm_clip_create");
        return pm_clip_fail_into(out, aliased, r);
    }
    pm_clip c;
    memset(&c, 0, sizeof c);
    c.allocator = pm_allocator_resolve(allocator);
    if ((r = pm_skeleton_copy_valid(&c.skeleton, skeleton, &c.allocator, error)) == PM_OK)
        r = clip_alloc_frames(&c, frame_count, error);
    if (r != PM_OK) {
        pm_clip_destroy(&c);
        return pm_clip_fail_into(out, aliased, r);
    }
    c.frame_time = frame_time;
    c.unit_scale = 1.0f;
    c.source_up = PM_UP_Y;
    int jc = skeleton->joint_count;
    for (int f = 0; f < frame_count; f++)
        for (int j = 0; j < jc; j++) {
            c.rotations[(size_t)f * jc + j] = skeleton->rest_rotations[j];
            c.translations[(size_t)f * jc + j] = skeleton->rest_translations[j];
        }
    pm_clip_move_into(out, &c, aliased);
    return PM_OK;
}

void pm_clip_destroy(pm_clip *c) {
    if (!c) return;
    const pm_allocator *a = &c->allocator;
    for (int i = 0; c->curves && i < c->curve_count && c->curves[i].name; i++) {
        pm_free(a, c->curves[i].name);
        pm_free(a, c->curves[i].values);
    }
    pm_free(a, c->curves);
    pm_free(a, c->name);
    pm_free(a, c->rotations);
    pm_free(a, c->translations);
    pm_skeleton_destroy(&c->skeleton);
    memset(c, 0, sizeof *c);
}

pm_result pm_clip_set_name(pm_clip *c, const char *name, pm_error *error) {
    if (!c || !name) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_set_name: NULL argument");
    pm_result r = pm_check_name(name, "pm_clip_set_name: name", error);
    if (r != PM_OK) return r;
    char *copy = pm_strdup(&c->allocator, name);
    if (!copy) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "clip: out of memory for its name");
    pm_free(&c->allocator, c->name);
    c->name = copy;
    return PM_OK;
}

pm_result pm_clip_add_curve(pm_clip *c, const char *name, const float *values, pm_error *error) {
    if (!c || !name || !values) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_add_curve: NULL argument");
    if (c->frame_count < 1 || c->frame_count > PM_MAX_FRAMES)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_add_curve: the clip is not initialised (%d frames)",
                       c->frame_count);
    pm_result r = clip_check_curves(c, "pm_clip_add_curve", error);
    if (r == PM_OK) r = clip_check_name(c, "pm_clip_add_curve", error);
    if (r != PM_OK) return r;
    if ((r = pm_check_name(name, "pm_clip_add_curve: the curve name", error)) != PM_OK) return r;
    if ((r = check_curve_values(c->name ? c->name : "", name, values, c->frame_count, error)) != PM_OK) return r;
    float *copy = (float *)pm_alloc_array(&c->allocator, (size_t)c->frame_count, sizeof(float), 0);
    if (!copy) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "clip: out of memory for curve '%s'", name);
    memcpy(copy, values, (size_t)c->frame_count * sizeof(float));
    for (int i = 0; i < c->curve_count; i++)
        if (strcmp(c->curves[i].name, name) == 0) {
            pm_free(&c->allocator, c->curves[i].values);
            c->curves[i].values = copy;
            return PM_OK;
        }
    char *name_copy = pm_strdup(&c->allocator, name);
    /* One zeroed entry past the last curve: see clip_check_curves. */
    pm_curve *curves = (pm_curve *)pm_alloc_array(&c->allocator, (size_t)c->curve_count + 2, sizeof(pm_curve), 0);
    if (!name_copy || !curves) {
        pm_free(&c->allocator, copy);
        pm_free(&c->allocator, name_copy);
        pm_free(&c->allocator, curves);
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "clip: out of memory for curve '%s'", name);
    }
    if (c->curve_count) memcpy(curves, c->curves, (size_t)c->curve_count * sizeof(pm_curve));
    curves[c->curve_count].name = name_copy;
    curves[c->curve_count].values = copy;
    pm_free(&c->allocator, c->curves);
    c->curves = curves;
    c->curve_count++;
    return PM_OK;
}

const pm_curve *pm_clip_find_curve(const pm_clip *c, const char *name) {
    if (!c || !name || !c->curves) return NULL;
    for (int i = 0; i < c->curve_count && c->curves[i].name; i++)
        if (strcmp(c->curves[i].name, name) == 0) return &c->curves[i];
    return NULL;
}

/* A new clip `c` of `frames` frames on src's skeleton, with src's loop flag, units, up axis and
 * name: what copy, trim and resample start from. On failure c is empty (safe to destroy). */
static pm_result clip_create_like(pm_clip *c, const pm_clip *src, int frames, float frame_time, const pm_allocator *allocator,
                                  pm_error *error) {
    pm_result r = pm_clip_create(c, &src->skeleton, frames, frame_time, allocator, error);
    if (r != PM_OK) return r;
    c->looping = src->looping;
    c->unit_scale = src->unit_scale;
    c->source_up = src->source_up;
    if (src->name && (r = pm_clip_set_name(c, src->name, error)) != PM_OK) pm_clip_destroy(c);
    return r;
}

pm_result pm_clip_copy(pm_clip *out, const pm_clip *src, const pm_allocator *allocator, pm_error *error) {
    if (!out || !src) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_copy: NULL argument");
    const int aliased = out == src;
    pm_result r = pm_clip_check_ready(src, "pm_clip_copy", error);
    if (r == PM_OK) r = clip_check_curves(src, "pm_clip_copy", error);
    if (r != PM_OK) return pm_clip_fail_into(out, aliased, r);
    pm_clip c;
    r = clip_create_like(&c, src, src->frame_count, src->frame_time, pm_allocator_or(allocator, &src->allocator), error);
    if (r != PM_OK) return pm_clip_fail_into(out, aliased, r);
    size_t n = (size_t)src->frame_count * (size_t)src->skeleton.joint_count;
    memcpy(c.rotations, src->rotations, n * sizeof(pm_quat));
    memcpy(c.translations, src->translations, n * sizeof(pm_vec3));
    for (int i = 0; i < src->curve_count; i++)
        if ((r = pm_clip_add_curve(&c, src->curves[i].name, src->curves[i].values, error)) != PM_OK) goto fail;
    pm_clip_move_into(out, &c, aliased);
    return PM_OK;
fail:
    pm_clip_destroy(&c);
    return pm_clip_fail_into(out, aliased, r);
}

pm_result pm_clip_validate(const pm_clip *c, pm_error *error) {
    if (!c) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "clip: NULL");
    if (!c->rotations || !c->translations)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "clip: not initialised (create it with pm_clip_create)");
    pm_result r = clip_check_name(c, "clip", error);
    if (r != PM_OK) return r;
    const char *name = c->name ? c->name : "(unnamed)";
    if ((r = pm_skeleton_validate(&c->skeleton, error)) != PM_OK) {
        pm_error_prefix(error, "clip '%s'", name);
        return r;
    }
    if (c->frame_count < 1 || c->frame_count > PM_MAX_FRAMES)
        return pm_fail(error, PM_ERR_LIMIT, "clip '%s': %d frames is outside 1..%d", name, c->frame_count, PM_MAX_FRAMES);
    if (!(c->frame_time > 0.0f) || !isfinite(c->frame_time))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "clip '%s': frame time %g must be positive", name, (double)c->frame_time);
    if (c->looping != 0 && c->looping != 1)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "clip '%s': looping is %d (must be 0 or 1)", name, c->looping);
    if (c->source_up != PM_UP_Y && c->source_up != PM_UP_Z)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "clip '%s': source_up is %d (must be PM_UP_Y or PM_UP_Z)", name,
                       (int)c->source_up);
    if (!(c->unit_scale > 0.0f) || !isfinite(c->unit_scale))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "clip '%s': unit_scale %g must be positive and finite", name,
                       (double)c->unit_scale);
    char what[96];
    snprintf(what, sizeof what, "clip '%s'", name);
    if ((r = clip_check_curves(c, what, error)) != PM_OK) return r;
    for (int i = 0; i < c->curve_count; i++)
        if ((r = check_curve_values(name, c->curves[i].name, c->curves[i].values, c->frame_count, error)) != PM_OK)
            return r;
    int jc = c->skeleton.joint_count;
    for (int f = 0; f < c->frame_count; f++)
        for (int j = 0; j < jc; j++) {
            pm_quat q = c->rotations[(size_t)f * jc + j];
            pm_vec3 t = c->translations[(size_t)f * jc + j];
            float len2 = pm_quat_dot(q, q);
            if (!isfinite(len2) || !isfinite(t.x) || !isfinite(t.y) || !isfinite(t.z))
                return pm_fail(error, PM_ERR_NUMERIC, "clip '%s': frame %d joint '%s' is not finite", name, f,
                               c->skeleton.names[j]);
            if (fabsf(len2 - 1.0f) > 1e-3f)
                return pm_fail(error, PM_ERR_NUMERIC, "clip '%s': frame %d joint '%s' rotation is not unit length (%g)",
                               name, f, c->skeleton.names[j], (double)sqrtf(len2));
        }
    return PM_OK;
}

float pm_clip_duration(const pm_clip *c) {
    if (!c || c->frame_count < 1) return 0.0f;
    int n = c->looping ? c->frame_count : c->frame_count - 1;
    return (float)n * c->frame_time;
}

/* Frames around x (a time in frames) and the fraction between them; 1 when a looping clip's time
 * is at its end - a whole number of loops - where the seam's far side (the loop end) is read whole. */
static int clip_frame_pair(const pm_clip *c, double x, int *f0, int *f1, float *t) {
    int n = c->frame_count;
    if (c->looping && n > 1) {
        double w;
        if (pm_loop_wrap(x, n, c->frame_time, &w)) {
            *f0 = n - 1;
            *f1 = 0;
            *t = 1.0f;
            return 1;
        }
        int i = (int)floor(w);
        *f0 = i;
        *f1 = (i + 1) % n;
        *t = (float)(w - i);
        return 0;
    }
    if (!(x > 0.0)) x = 0.0; /* also catches NaN */
    if (x >= (double)(n - 1)) {
        *f0 = *f1 = n - 1;
        *t = 0.0f;
        return 0;
    }
    int i = (int)floor(x);
    *f0 = i;
    *f1 = i + 1;
    *t = (float)(x - i);
    return 0;
}

pm_vec3 pm_clip_loop_end_translation(const pm_clip *c, int j) {
    int n = c->frame_count;
    size_t jc = (size_t)c->skeleton.joint_count;
    pm_vec3 p0 = c->translations[j], p1 = c->translations[jc + (size_t)j];
    pm_vec3 pl = c->translations[(size_t)(n - 1) * jc + (size_t)j], pm = c->translations[(size_t)(n - 2) * jc + (size_t)j];
    pm_vec3 last_step = pm_vec3_sub(pl, pm), first_step = pm_vec3_sub(p1, p0);
    pm_vec3 end = pm_vec3_add(pl, pm_vec3_scale(pm_vec3_add(last_step, first_step), 0.5f));
    /* Two readings of the seam: the joint travels (root motion: frame n is frame 0 moved on by
     * the cycle's displacement end - p0) or swings in place (frame n is frame 0). Extrapolating the
     * seam's steps, a swing misses frame 0 by about half the difference of those steps (a foot
     * landing), while travel misses it by the whole displacement, however slow and whatever
     * sway rides on it: travel only when the miss is well beyond that. */
    float miss = pm_vec3_length(pm_vec3_sub(end, p0));
    float seam = 0.5f * pm_vec3_length(pm_vec3_sub(first_step, last_step));
    return miss > 3.0f * seam + 1e-7f ? end : p0;
}

/* The world's vertical in the frame of joint j's parent at frame 0: a loop turns about it. */
static pm_vec3 parent_vertical(const pm_clip *c, int j) {
    pm_quat up = pm_quat_identity();
    for (int p = c->skeleton.parents[j]; p >= 0; p = c->skeleton.parents[p]) up = pm_quat_mul(c->rotations[p], up);
    return pm_quat_inv_rotate(pm_quat_normalize(up), pm_vec3_make(0.0f, 1.0f, 0.0f));
}

/* The turn about `up` of joint j's rotation, from frame 0 to frame f. */
static float turn_from_first(const pm_clip *c, int j, int f, pm_vec3 up) {
    size_t jc = (size_t)c->skeleton.joint_count;
    pm_quat d = pm_quat_mul(c->rotations[(size_t)f * jc + (size_t)j], pm_quat_conjugate(c->rotations[j]));
    return 2.0f * pm_atan2f(d.x * up.x + d.y * up.y + d.z * up.z, d.w);
}

pm_quat pm_clip_loop_turn(const pm_clip *c, int j) {
    int n = c->frame_count;
    pm_vec3 up = parent_vertical(c, j);
    float last = turn_from_first(c, j, n - 1, up), before = turn_from_first(c, j, n - 2, up), first = turn_from_first(c, j, 1, up);
    return pm_quat_from_axis_angle(up, pm_wrap_angle(last + 0.5f * (pm_wrap_angle(last - before) + pm_wrap_angle(first))));
}

static int loop_travels(const pm_clip *c, int j) {
    pm_vec3 p0 = c->translations[j], end = pm_clip_loop_end_translation(c, j);
    return !(end.x == p0.x && end.y == p0.y && end.z == p0.z);
}

int pm_clip_loop_carries(const pm_clip *c, int j) {
    if (!loop_travels(c, j)) return 0;
    /* A drift slower than a centimetre a second (a standing take's pelvis creeping 1.5 cm in a
     * minute) carries on across the seam but is no root motion to turn the body with. */
    pm_vec3 d = pm_vec3_sub(pm_clip_loop_end_translation(c, j), c->translations[j]);
    if (!(pm_vec3_length(d) > 0.01f * (float)c->frame_count * c->frame_time)) return 0;
    for (int p = c->skeleton.parents[j]; p >= 0; p = c->skeleton.parents[p])
        if (loop_travels(c, p)) return 0;
    return 1;
}

pm_quat pm_clip_loop_end_rotation(const pm_clip *c, int j) {
    pm_quat q0 = c->rotations[j];
    return pm_clip_loop_carries(c, j) ? pm_quat_normalize(pm_quat_mul(pm_clip_loop_turn(c, j), q0)) : q0;
}

int pm_height_touchdowns(int *events, float *h, int n, int min_gap, float *scratch, float *range) {
    *range = 0.0f;
    if (n < 3) return 0;
    float prev = h[0];
    for (int f = 0; f < n; f++) {
        float a = prev, c = h[f], d = h[f < n - 1 ? f + 1 : f];
        prev = c;
        h[f] = 0.25f * a + 0.5f * c + 0.25f * d;
        scratch[f] = h[f];
    }
    qsort(scratch, (size_t)n, sizeof(float), pm_cmp_float);
    float lo = scratch[n / 10], hi = scratch[(n * 9) / 10];
    *range = hi - lo;
    float cut = lo + 0.35f * (hi - lo), lift = lo + 0.6f * (hi - lo);
    int ne = 0, stance = h[0] < cut;
    /* A track that starts while still falling into a stance has just touched down. */
    if (stance && h[1] < h[0]) events[ne++] = 0;
    for (int f = 1; f < n; f++) {
        if (stance) {
            stance = !(h[f] > lift);
        } else if (h[f] < cut) {
            stance = 1;
            if (ne == 0 || f - events[ne - 1] >= min_gap) events[ne++] = f;
        }
    }
    return ne;
}

static void clip_sample_frames(pm_quat *out_rot, pm_vec3 *out_trans, const pm_clip *c, double x);

pm_result pm_clip_sample(pm_quat *out_rot, pm_vec3 *out_trans, const pm_clip *c, float time, pm_error *error) {
    if (!out_rot) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_sample: out_rotations is NULL");
    if (!out_trans) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_sample: out_translations is NULL");
    if (!c) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_sample: clip is NULL");
    pm_result r = pm_clip_check_ready(c, "pm_clip_sample", error);
    if (r != PM_OK) return r;
    if (!isfinite(time))
        return pm_fail(error, PM_ERR_NUMERIC, "pm_clip_sample: time %g is not finite (clip '%s')", (double)time,
                       c->name ? c->name : "(unnamed)");
    clip_sample_frames(out_rot, out_trans, c, (double)time / (double)c->frame_time);
    return PM_OK;
}

/* The pose at x frames (checked clip, finite x): pm_clip_sample's reading. */
static void clip_sample_frames(pm_quat *out_rot, pm_vec3 *out_trans, const pm_clip *c, double x) {
    int f0, f1;
    float t;
    int at_end = clip_frame_pair(c, x, &f0, &f1, &t);
    int jc = c->skeleton.joint_count;
    if (at_end) {
        /* The loop end, as the runtime animation's end key holds it (up to its hemisphere). */
        for (int j = 0; j < jc; j++) {
            out_rot[j] = pm_clip_loop_end_rotation(c, j);
            out_trans[j] = pm_clip_loop_end_translation(c, j);
        }
        return;
    }
    const pm_quat *r0 = c->rotations + (size_t)f0 * jc, *r1 = c->rotations + (size_t)f1 * jc;
    const pm_vec3 *p0 = c->translations + (size_t)f0 * jc, *p1 = c->translations + (size_t)f1 * jc;
    /* From a loop's last frame on to its first: towards where the first frame lies one cycle on,
     * moved on and turned, so that root motion keeps going instead of sliding or swinging back
     * (as the runtime animation's end key does). */
    const int wrap = c->looping && c->frame_count >= 2 && f0 == c->frame_count - 1 && f1 == 0 && t != 0.0f;
    for (int j = 0; j < jc; j++) {
        out_rot[j] = t == 0.0f ? r0[j] : pm_quat_slerp(r0[j], wrap ? pm_clip_loop_end_rotation(c, j) : r1[j], t);
        out_trans[j] = t == 0.0f ? p0[j] : pm_vec3_lerp(p0[j], wrap ? pm_clip_loop_end_translation(c, j) : p1[j], t);
    }
}

/* The grid a non-looping clip is resampled on: *count new frames, `step` source seconds apart.
 * Frame times are floats rounded from text ("0.0333333" is 1/30 minus 1e-6 relative; "0.008333"
 * is 1/120 minus 4e-5), so on the plain grid of the new rate the clip's end lands a hair before
 * the new frame it should reach, and every frame drifts off the source frames by an amount that
 * grows with the clip's length: no tolerance fixes both short and long clips. When the rates are
 * in a small ratio (30 -> 60, 24 -> 60, 120 -> 30, within 1e-4) the clip is taken at that exact
 * ratio instead: the new frames fall on source frames and fixed fractions of them, and the last
 * source frame is kept whenever the grid reaches it. The clip's timing is stretched by at most
 * 1e-4 for it. Other rates: the new rate's own grid, up to the last frame at or before the end. */
static double resample_grid(const pm_clip *src, double new_dt, double *step) {
    double ratio = (double)src->frame_time / new_dt; /* a source frame in new frames */
    for (int q = 1; q <= 16; q++) {
        double p = floor(ratio * q + 0.5);
        if (p < 1.0 || fabs(ratio * q - p) > 1e-4 * ratio * q) continue;
        *step = (double)src->frame_time * q / p;
        /* In doubles first: p can be far beyond any integer type (1e30 s frames at 10 kHz). */
        double whole = (double)(src->frame_count - 1) * p;
        if (whole / q >= PM_MAX_FRAMES) return floor(whole / q) + 1.0; /* refused by the caller */
        return (double)((long long)whole / q) + 1.0; /* below 2^53, so exact, in integers */
    }
    *step = new_dt;
    return floor(pm_clip_duration(src) / new_dt + 1e-3) + 1.0;
}

double pm_clip_resample_plan(const pm_clip *src, float fps, double *step) {
    double new_dt = 1.0 / fps;
    *step = new_dt; /* source seconds between new frames */
    double count_d;
    if (src->looping) {
        /* A looping clip keeps its period: frames cover [0, duration). */
        count_d = floor(pm_clip_duration(src) / new_dt + 0.5);
    } else {
        count_d = resample_grid(src, new_dt, step);
    }
    return count_d < 1.0 ? 1.0 : count_d;
}

pm_result pm_clip_resample_count(int *out, double *step, const pm_clip *src, float fps, pm_error *error) {
    double count_d = pm_clip_resample_plan(src, fps, step);
    *out = 0;
    if (!(count_d <= PM_MAX_FRAMES))
        return pm_fail(error, PM_ERR_LIMIT, "resample: clip '%s' (%d frames of %g s) at %g fps would have %.3g frames (limit %d)",
                       src->name ? src->name : "(unnamed)", src->frame_count, (double)src->frame_time, (double)fps,
                       count_d, PM_MAX_FRAMES);
    *out = (int)count_d;
    return PM_OK;
}

/* Where new frame f of a resampling reads the source, in source frames. In doubles to the end: a
 * time rounded to a float is off by up to 8e-6 s two minutes into a clip, so the frames of an
 * exact ratio (30 -> 60 fps) no longer fell on source frames and their midpoints but a few 1e-4
 * of a frame beside them, and the feet of a long clip moved by some 1e-3 m/s in their
 * velocities. Positions within rounding of a whole frame are that frame: the ratio's grid means
 * to land there, and its product and quotient only miss by a few units in the last place. */
static double resample_position(const pm_clip *src, int f, double step) {
    double x = f * step / (double)src->frame_time;
    if (!src->looping) x = PM_MIN(x, (double)(src->frame_count - 1));
    double whole = floor(x + 0.5);
    return fabs(x - whole) <= 1e-9 * PM_MAX(whole, 1.0) ? whole : x;
}

pm_result pm_clip_resample(pm_clip *out, const pm_clip *src, float fps, pm_error *error) {
    if (!out || !src) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_resample: NULL argument");
    const int aliased = out == src;
    if (!(fps > 0.0f) || !isfinite(fps) || fps > 10000.0f)
        return pm_clip_fail_into(out, aliased,
                                 pm_fail(error, PM_ERR_INVALID_ARGUMENT, "resample: %s fps is outside (0, 10000]",
                                         pm_float_text(fps).text));
    pm_result r = pm_clip_check_ready(src, "resample", error);
    if (r == PM_OK) r = clip_check_curves(src, "resample", error);
    if (r != PM_OK) return pm_clip_fail_into(out, aliased, r);
    double new_dt = 1.0 / fps, step;
    int count;
    if ((r = pm_clip_resample_count(&count, &step, src, fps, error)) != PM_OK) return pm_clip_fail_into(out, aliased, r);
    pm_clip c;
    r = clip_create_like(&c, src, count, (float)new_dt, &src->allocator, error);
    if (r != PM_OK) return pm_clip_fail_into(out, aliased, r);
    int jc = src->skeleton.joint_count;
    for (int f = 0; f < count; f++)
        clip_sample_frames(c.rotations + (size_t)f * jc, c.translations + (size_t)f * jc, src,
                           resample_position(src, f, step));
    for (int i = 0; i < src->curve_count; i++) {
        float *vals = (float *)pm_alloc_array(&src->allocator, (size_t)count, sizeof(float), 0);
        if (!vals) {
            r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "resample: out of memory for curves");
            goto fail;
        }
        for (int f = 0; f < count; f++) {
            int f0, f1;
            float t;
            clip_frame_pair(src, resample_position(src, f, step), &f0, &f1, &t);
            vals[f] = src->curves[i].values[f0] + (src->curves[i].values[f1] - src->curves[i].values[f0]) * t;
        }
        r = pm_clip_add_curve(&c, src->curves[i].name, vals, error);
        pm_free(&src->allocator, vals);
        if (r != PM_OK) goto fail;
    }
    pm_clip_move_into(out, &c, aliased);
    return PM_OK;
fail:
    pm_clip_destroy(&c);
    return pm_clip_fail_into(out, aliased, r);
}

pm_result pm_clip_trim(pm_clip *out, const pm_clip *src, int first, int count, pm_error *error) {
    if (!out || !src) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_trim: NULL argument");
    const int aliased = out == src;
    pm_result r = pm_clip_check_ready(src, "trim", error);
    if (r == PM_OK) r = clip_check_curves(src, "trim", error);
    if (r != PM_OK) return pm_clip_fail_into(out, aliased, r);
    /* In 64 bits: first + count overflows an int for first > 0 and count near INT_MAX. */
    if (first < 0 || count < 1 || (long long)first + count > src->frame_count)
        return pm_clip_fail_into(out, aliased,
                                 pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                                         "trim: frames [%d, %lld) are outside the clip's frames [0, %d)", first,
                                         (long long)first + count, src->frame_count));
    pm_clip c;
    if ((r = clip_create_like(&c, src, count, src->frame_time, &src->allocator, error)) != PM_OK)
        return pm_clip_fail_into(out, aliased, r);
    size_t jc = (size_t)src->skeleton.joint_count;
    memcpy(c.rotations, src->rotations + first * jc, count * jc * sizeof(pm_quat));
    memcpy(c.translations, src->translations + first * jc, count * jc * sizeof(pm_vec3));
    c.looping = 0; /* a part of a loop is not a loop */
    for (int i = 0; i < src->curve_count; i++)
        if ((r = pm_clip_add_curve(&c, src->curves[i].name, src->curves[i].values + first, error)) != PM_OK) goto fail;
    pm_clip_move_into(out, &c, aliased);
    return PM_OK;
fail:
    pm_clip_destroy(&c);
    return pm_clip_fail_into(out, aliased, r);
}

pm_result pm_clip_scale(pm_clip *c, float factor, pm_error *error) {
    /* A zero, negative or non-finite factor would collapse, mirror or poison the clip, so it is
     * refused with the clip untouched. */
    if (!c) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_scale: clip is NULL");
    if (!c->translations || !c->skeleton.rest_translations || !c->skeleton.end_sites || c->frame_count < 0 ||
        c->frame_count > PM_MAX_FRAMES || c->skeleton.joint_count < 1 || c->skeleton.joint_count > PM_MAX_JOINTS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "pm_clip_scale: the clip is not initialised (create it with pm_clip_create)");
    if (!(factor > 0.0f) || !isfinite(factor))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_scale: factor %g must be finite and > 0", (double)factor);
    int jc = c->skeleton.joint_count;
    for (int j = 0; j < jc; j++) {
        c->skeleton.rest_translations[j] = pm_vec3_scale(c->skeleton.rest_translations[j], factor);
        c->skeleton.end_sites[j] = pm_vec3_scale(c->skeleton.end_sites[j], factor);
    }
    size_t n = (size_t)c->frame_count * jc;
    for (size_t i = 0; i < n; i++) c->translations[i] = pm_vec3_scale(c->translations[i], factor);
    c->unit_scale *= factor;
    return PM_OK;
}

pm_result pm_clip_z_up_to_y_up(pm_clip *c, pm_error *error) {
    if (!c) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_z_up_to_y_up: clip is NULL");
    pm_result ready = pm_clip_check_ready(c, "pm_clip_z_up_to_y_up", error);
    if (ready != PM_OK) return ready;
    if (!c->skeleton.rest_translations || !c->skeleton.rest_rotations)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "pm_clip_z_up_to_y_up: the clip is not initialised (create it with pm_clip_create)");
    /* A rotation of -90 degrees about X maps +Z to +Y. Only roots change: everything below
     * them is relative to their frame. */
    pm_quat q = pm_quat_from_axis_angle(pm_vec3_make(1.0f, 0.0f, 0.0f), -0.5f * PM_PI);
    int jc = c->skeleton.joint_count;
    for (int j = 0; j < jc; j++) {
        if (c->skeleton.parents[j] >= 0) continue;
        /* Translations by swapping components: exact, where rotating by a float quaternion
         * adds rounding and overflows near FLT_MAX. */
        pm_vec3 r = c->skeleton.rest_translations[j];
        c->skeleton.rest_translations[j] = pm_vec3_make(r.x, r.z, -r.y);
        c->skeleton.rest_rotations[j] = pm_quat_mul(q, c->skeleton.rest_rotations[j]);
        for (int f = 0; f < c->frame_count; f++) {
            size_t i = (size_t)f * jc + j;
            pm_vec3 t = c->translations[i];
            c->rotations[i] = pm_quat_normalize(pm_quat_mul(q, c->rotations[i]));
            c->translations[i] = pm_vec3_make(t.x, t.z, -t.y);
        }
    }
    c->source_up = PM_UP_Z;
    return PM_OK;
}

pm_result pm_local_to_model(pm_transform *out, const int32_t *parents, int joint_count, const pm_quat *lr,
                            const pm_vec3 *lt, pm_error *error) {
    /* The hierarchy is checked before anything is written, as the job does, so that a bad
     * parent is an error with the output untouched rather than a joint silently made a root. */
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_local_to_model: out_model is NULL");
    if (!parents) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_local_to_model: parents is NULL");
    if (!lr) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_local_to_model: local_rotations is NULL");
    if (!lt) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_local_to_model: local_translations is NULL");
    if (joint_count < 1 || joint_count > PM_MAX_JOINTS)
        return pm_fail(error, PM_ERR_LIMIT, "pm_local_to_model: joint_count %d is outside 1..%d", joint_count,
                       PM_MAX_JOINTS);
    for (int j = 0; j < joint_count; j++)
        if (parents[j] < -1 || parents[j] >= j)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "pm_local_to_model: joint %d has parent %d (must be -1 or a joint before it, 0..%d)", j,
                           (int)parents[j], j - 1);
    for (int j = 0; j < joint_count; j++) {
        pm_transform local;
        local.rotation = lr[j];
        local.translation = lt[j];
        int p = parents[j];
        out[j] = p < 0 ? local : pm_transform_mul(out[p], local);
    }
    return PM_OK;
}

int pm_joint_ancestry(int *out, const int32_t *parents, int joint_count, const int *wanted, int wanted_count) {
    for (int j = 0; j < joint_count; j++) out[j] = 0;
    for (int i = 0; i < wanted_count; i++)
        for (int j = wanted[i]; j >= 0 && j < joint_count && !out[j]; j = parents[j]) out[j] = 1;
    int n = 0;
    for (int j = 0; j < joint_count; j++) /* n <= j: each mark is read before its slot is reused */
        if (out[j]) out[n++] = j;
    return n;
}

void pm_clip_frame_world_listed(pm_transform *world, const pm_clip *c, int frame, const int *joints, int count) {
    const size_t base = (size_t)frame * (size_t)c->skeleton.joint_count;
    for (int i = 0; i < count; i++) { /* as pm_local_to_model, operation for operation */
        int j = joints[i];
        pm_transform local;
        local.rotation = c->rotations[base + (size_t)j];
        local.translation = c->translations[base + (size_t)j];
        int p = c->skeleton.parents[j];
        world[j] = p < 0 ? local : pm_transform_mul(world[p], local);
    }
}

pm_result pm_clip_frame_world(pm_transform *out, const pm_clip *c, int frame, pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_frame_world: out_world is NULL");
    if (!c) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_frame_world: clip is NULL");
    pm_result r = pm_clip_check_ready(c, "pm_clip_frame_world", error);
    if (r != PM_OK) return r;
    if (frame < 0 || frame >= c->frame_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_frame_world: frame %d is outside 0..%d (clip '%s')", frame,
                       c->frame_count - 1, c->name ? c->name : "(unnamed)");
    size_t jc = (size_t)c->skeleton.joint_count;
    r = pm_local_to_model(out, c->skeleton.parents, (int)jc, c->rotations + frame * jc, c->translations + frame * jc,
                          error);
    if (r != PM_OK) pm_error_prefix(error, "pm_clip_frame_world: clip '%s'", c->name ? c->name : "(unnamed)");
    return r;
}
