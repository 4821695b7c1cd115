/* Blend spaces: creation (validation, sample alignment) and inspection. The cells are built by
 * blend_space_cells.c, weights computed by blend_space_weights.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "blend_space_internal.h"
#include "clip_internal.h"
#include "core.h"

pm_blend_sample_def pm_default_blend_sample_def(void) {
    pm_blend_sample_def d;
    memset(&d, 0, sizeof d);
    return d;
}

pm_blend_space_def pm_default_blend_space_def(void) {
    pm_blend_space_def d;
    memset(&d, 0, sizeof d);
    d.dimensions = 1;
    d.sync = PM_BLEND_SYNC_FEET;
    d.align = PM_BLEND_ALIGN_POSITION_FACING;
    d.collinear = PM_BLEND_COLLINEAR_LINE;
    d.coplanar = PM_BLEND_COPLANAR_PLANE;
    return d;
}

void pm_blend_space_destroy(pm_blend_space *s) {
    if (!s) return;
    pm_allocator a = s->allocator;
    pm_free(&a, s->name);
    for (int d = 0; d < PM_BLEND_SPACE_MAX_DIMENSIONS; d++) pm_free(&a, s->axis_names[d]);
    if (s->names)
        for (int i = 0; i < s->sample_count; i++) pm_free(&a, s->names[i]);
    if (s->animations)
        for (int i = 0; i < s->sample_count; i++) pm_animation_destroy(&s->animations[i]);
    pm_free(&a, s->names);
    pm_free(&a, s->params);
    pm_free(&a, s->animations);
    if (s->cycles)
        for (int i = 0; i < s->sample_count; i++) {
            pm_free(&a, s->cycles[i].starts);
            pm_free(&a, s->cycles[i].slice_start);
            pm_free(&a, s->cycles[i].slice_move);
        }
    pm_free(&a, s->cycles);
    pm_free(&a, s->order);
    pm_free(&a, s->points);
    pm_free(&a, s->line_s);
    pm_free(&a, s->plane_points);
    pm_free(&a, s->tree_nodes);
    pm_free(&a, s->tree_items);
    pm_free(&a, s->tree_top);
    pm_free(&a, s->tz_nodes);
    pm_free(&a, s->tz_edges);
    pm_free(&a, s->tz_traps);
    pm_free(&a, s->vertex_cell);
    pm_delaunay_destroy(&s->tri);
    pm_delaunay3_destroy(&s->tet);
    pm_free(&a, s->hull_items);
    pm_free(&a, s->hull_cells);
    pm_free(&a, s->hull_ties);
    pm_free(&a, s->hull_nodes);
    pm_free(&a, s->hull_faces);
    pm_free(&a, s->hull_obbs);
    pm_skeleton_destroy(&s->skeleton);
    pm_free(&a, s);
}

/* ---- creation ---- */

static int same_transform(const pm_clip *c, int f, int j) {
    size_t jc = (size_t)c->skeleton.joint_count;
    return !memcmp(&c->rotations[f * jc + j], &c->rotations[j], sizeof(pm_quat)) &&
           !memcmp(&c->translations[f * jc + j], &c->translations[j], sizeof(pm_vec3));
}

/* Moves a clip so that frame 0's hips sit above the origin (and its root faces the canonical
 * direction). The move is applied to the topmost joints that move: a static dummy root (Bandai
 * Namco's joint_Root) keeps its transform and the hips below it take the move, so that the hips'
 * locals of different samples live in one frame and blend as world motion. */
static pm_result align_clip(pm_clip *clip, pm_blend_align align, const char *sample, pm_error *error) {
    if (align == PM_BLEND_ALIGN_NONE) return PM_OK;
    int jc = clip->skeleton.joint_count;
    const int32_t *parents = clip->skeleton.parents;
    pm_transform r0 = pm_transform_identity();
    if (align == PM_BLEND_ALIGN_POSITION_FACING) {
        /* The facing of the root track (smoothed over the step cycle); its position is smoothed
         * too and leads the hips, so the position comes from the hips themselves below. */
        pm_root_track track;
        pm_result r = pm_root_track_extract(&track, clip, NULL, &clip->allocator, error);
        if (r != PM_OK) {
            pm_error_prefix(error, "blend space sample '%s': align \"position_facing\" needs the facing (use \"position\" or \"none\")",
                            sample);
            return r;
        }
        r0.rotation = track.frames[0].rotation;
        pm_root_track_destroy(&track);
    }
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, &clip->skeleton);
    int hips = roles.hips >= 0 ? roles.hips : 0;
    pm_transform *world = (pm_transform *)pm_alloc_array(&clip->allocator, (size_t)jc, sizeof(pm_transform), 16);
    uint8_t *flags = (uint8_t *)pm_alloc_array(&clip->allocator, (size_t)jc, 1, 0);
    if (!world || !flags) {
        pm_free(&clip->allocator, world);
        pm_free(&clip->allocator, flags);
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
    }
    pm_result r = pm_clip_frame_world(world, clip, 0, error);
    if (r != PM_OK) {
        pm_free(&clip->allocator, world);
        pm_free(&clip->allocator, flags);
        pm_error_prefix(error, "blend space sample '%s'", sample);
        return r;
    }
    r0.translation = world[hips].translation;
    /* Heights stay as recorded: only the ground-plane placement and heading are normalised. */
    r0.translation.y = 0.0f;
    pm_transform move = pm_transform_inverse(r0);
    /* flags: 1 static, 2 has children, 4 every ancestor static, 8 carrier (takes the move). The
     * hips count as moving whatever their frames: the move stops there at the latest. A held
     * pose (one frame, or one frame repeated) has every joint static, and the move went to the
     * leaves - head, hands and toes thrown metres off the body. */
    for (int j = 0; j < jc; j++) {
        int st = j != hips;
        for (int f = 1; f < clip->frame_count && st; f++) st = same_transform(clip, f, j);
        flags[j] |= (uint8_t)st;
        if (parents[j] >= 0) flags[parents[j]] |= 2;
    }
    for (int j = 0; j < jc; j++) {
        int p = parents[j];
        if (p < 0 || ((flags[p] & 4) && (flags[p] & 1))) flags[j] |= 4;
        if ((flags[j] & 4) && (!(flags[j] & 1) || !(flags[j] & 2))) flags[j] |= 8;
    }
    for (int j = 0; j < jc; j++) {
        if (!(flags[j] & 8)) continue;
        /* The carrier's parent frame is constant (static ancestors): conjugate the world move into it. */
        pm_transform above = parents[j] >= 0 ? world[parents[j]] : pm_transform_identity();
        pm_transform local_move = pm_transform_mul(pm_transform_inverse(above), pm_transform_mul(move, above));
        for (int f = 0; f < clip->frame_count; f++) {
            size_t i = (size_t)f * jc + j;
            pm_transform local;
            local.rotation = clip->rotations[i];
            local.translation = clip->translations[i];
            local = pm_transform_mul(local_move, local);
            clip->rotations[i] = pm_quat_normalize(local.rotation);
            clip->translations[i] = local.translation;
        }
    }
    pm_free(&clip->allocator, world);
    pm_free(&clip->allocator, flags);
    return PM_OK;
}

static pm_result check_def(const pm_blend_space_def *def, pm_error *error) {
    const char *name = def->name ? def->name : "blendspace";
    /* Names go into messages, baked asset names and BVH files: one line each. */
    pm_result rn = pm_check_name(name, "blend space name", error);
    for (int d = 0; rn == PM_OK && d < PM_BLEND_SPACE_MAX_DIMENSIONS && d < def->dimensions; d++)
        if (def->axis_names[d]) {
            rn = pm_check_name(def->axis_names[d], "axis name", error);
            if (rn != PM_OK) pm_error_prefix(error, "blend space axis %d", d);
        }
    if (rn != PM_OK) return rn;
    if (def->dimensions < 1 || def->dimensions > PM_BLEND_SPACE_MAX_DIMENSIONS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s': %d dimensions (1, 2 or 3 are supported)", name,
                       def->dimensions);
    if (def->sample_count < 0)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s': sample_count %d is negative", name,
                       def->sample_count);
    if (def->sample_count == 0)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s' has no samples (an empty space cannot be blended)",
                       name);
    if (!def->samples)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s': samples is NULL (sample_count %d)", name,
                       def->sample_count);
    /* Before any sample is read: a count over the limit is refused without walking an array that
     * may be shorter than it. */
    if (def->sample_count > PM_BLEND_SPACE_MAX_SAMPLES)
        return pm_fail(error, PM_ERR_LIMIT, "blend space '%s': %d samples exceeds the limit of %d", name, def->sample_count,
                       PM_BLEND_SPACE_MAX_SAMPLES);
    for (int i = 0; i < def->sample_count; i++)
        if (def->samples[i].name && (rn = pm_check_name(def->samples[i].name, "sample name", error)) != PM_OK) {
            pm_error_prefix(error, "blend space sample %d", i);
            return rn;
        }
    const struct {
        const char *field;
        int value, last;
    } options[] = {{"sync", (int)def->sync, PM_BLEND_SYNC_FEET},
                   {"align", (int)def->align, PM_BLEND_ALIGN_NONE},
                   {"collinear", (int)def->collinear, PM_BLEND_COLLINEAR_ERROR},
                   {"coplanar", (int)def->coplanar, PM_BLEND_COPLANAR_ERROR}};
    for (int k = 0; k < 4; k++)
        if (options[k].value < 0 || options[k].value > options[k].last)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s': %s %d is outside 0..%d", name, options[k].field,
                           options[k].value, options[k].last);
    const pm_clip *first = def->samples[0].clip;
    for (int i = 0; i < def->sample_count; i++) {
        const pm_blend_sample_def *sd = &def->samples[i];
        if (!sd->clip) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s': sample %d has no clip", name, i);
        pm_result r = pm_clip_validate(sd->clip, error);
        if (r != PM_OK) {
            pm_error_prefix(error, "blend space '%s' sample %d", name, i);
            return r;
        }
        for (int d = 0; d < def->dimensions; d++)
            if (!isfinite(sd->params[d]))
                return pm_fail(error, PM_ERR_NUMERIC, "blend space '%s': sample %d params[%d] is %g (must be finite)", name, i,
                               d, (double)sd->params[d]);
        if (i > 0 && !pm_skeleton_same_topology(&first->skeleton, &sd->clip->skeleton)) {
            const pm_skeleton *a = &first->skeleton, *b = &sd->clip->skeleton;
            int j = 0;
            while (j < a->joint_count && j < b->joint_count && a->parents[j] == b->parents[j] &&
                   strcmp(a->names[j], b->names[j]) == 0)
                j++;
            return pm_fail(error, PM_ERR_MISMATCH,
                           "blend space '%s': sample %d ('%s', %d joints) has a different skeleton from sample 0 ('%s', %d "
                           "joints); first difference at joint %d ('%s' vs '%s')",
                           name, i, sd->clip->name ? sd->clip->name : "", b->joint_count, first->name ? first->name : "",
                           a->joint_count, j, j < b->joint_count ? b->names[j] : "-", j < a->joint_count ? a->names[j] : "-");
        }
    }
    for (int d = 0; d < def->dimensions; d++) {
        float lo = def->axis_min[d], hi = def->axis_max[d];
        if (!isfinite(lo) || !isfinite(hi))
            return pm_fail(error, PM_ERR_NUMERIC, "blend space '%s': axis %d range [%g, %g] is not finite", name, d,
                           (double)lo, (double)hi);
        if (lo > hi)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s': axis %d range [%g, %g] is reversed", name, d,
                           (double)lo, (double)hi);
    }
    return PM_OK;
}

static char *dup_or(const pm_allocator *a, const char *s, const char *fallback) {
    return pm_strdup(a, s && s[0] ? s : fallback);
}

pm_result pm_blend_space_create(pm_blend_space **out, const pm_blend_space_def *def, pm_error *error) {
    if (out) *out = NULL;
    if (!out || !def) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_blend_space_create: NULL argument");
    pm_result r = check_def(def, error);
    if (r != PM_OK) return r;
    pm_allocator alloc = pm_allocator_resolve(def->allocator);
    pm_blend_space *s = (pm_blend_space *)pm_alloc_zero(&alloc, sizeof *s, 16);
    if (!s) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
    s->allocator = alloc;
    const pm_allocator *a = &s->allocator;
    int n = def->sample_count, dims = def->dimensions;
    s->dimensions = dims;
    s->sync = def->sync;
    s->sample_count = n;
    s->joint_count = def->samples[0].clip->skeleton.joint_count;
    s->soa_count = pm_soa_count(s->joint_count);
    s->name = dup_or(a, def->name, "blendspace");
    s->names = (char **)pm_alloc_array(a, (size_t)n, sizeof(char *), 0);
    s->params = (float *)pm_alloc_array(a, (size_t)n * PM_BLEND_SPACE_MAX_DIMENSIONS, sizeof(float), 0);
    s->animations = (pm_animation *)pm_alloc_array(a, (size_t)n, sizeof(pm_animation), 0);
    s->cycles = (pm_blend_cycles *)pm_alloc_array(a, (size_t)n, sizeof(pm_blend_cycles), 0);
    if (!s->name || !s->names || !s->params || !s->animations || !s->cycles) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for %d samples", n);
        goto fail;
    }
    static const char *const default_axes[PM_BLEND_SPACE_MAX_DIMENSIONS] = {"x", "y", "z"};
    for (int d = 0; d < dims; d++) {
        s->axis_names[d] = dup_or(a, def->axis_names[d], default_axes[d]);
        if (!s->axis_names[d]) {
            r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
            goto fail;
        }
        double lo = def->axis_min[d], hi = def->axis_max[d];
        if (lo == hi) {
            /* No range given: the samples' extent, widened when they all share the coordinate. */
            lo = hi = def->samples[0].params[d];
            for (int i = 1; i < n; i++) {
                lo = PM_MIN(lo, (double)def->samples[i].params[d]);
                hi = PM_MAX(hi, (double)def->samples[i].params[d]);
            }
            if (lo == hi) {
                /* Half a unit either side, or more where half a unit is lost to the coordinate's
                 * rounding (7.7e37 - 0.5 is 7.7e37): an axis of no width divides by zero. */
                double half = PM_MAX(0.5, fabs(lo) * 0x1p-20);
                lo -= half;
                hi += half;
            }
        }
        s->axis_min[d] = lo;
        s->axis_max[d] = hi;
    }

    for (int i = 0; i < n; i++) {
        const pm_blend_sample_def *sd = &def->samples[i];
        char fallback[32];
        snprintf(fallback, sizeof fallback, "sample%d", i);
        s->names[i] = dup_or(a, sd->name ? sd->name : sd->clip->name, fallback);
        if (!s->names[i]) {
            r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
            goto fail;
        }
        for (int d = 0; d < dims; d++) {
            float v = sd->params[d];
            s->params[i * PM_BLEND_SPACE_MAX_DIMENSIONS + d] = v;
            if ((double)v < s->axis_min[d] || (double)v > s->axis_max[d]) {
                r = pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s': sample '%s' has %s = %s, outside the axis range [%g, %g]",
                            s->name, s->names[i], s->axis_names[d], pm_float_text(v).text, s->axis_min[d], s->axis_max[d]);
                goto fail;
            }
        }
        pm_clip aligned;
        if ((r = pm_clip_copy(&aligned, sd->clip, a, error)) != PM_OK) goto fail;
        s->cycles[i].count = 1;
        s->cycles[i].starts = NULL;
        if (def->sync == PM_BLEND_SYNC_FEET) r = pm_blend_space_sync_clip(&aligned, &s->cycles[i], a, error);
        if (r == PM_OK) r = align_clip(&aligned, (pm_blend_align)def->align, s->names[i], error);
        if (r == PM_OK) r = pm_animation_build(&s->animations[i], &aligned, a, error);
        pm_clip_destroy(&aligned);
        if (r != PM_OK) goto fail;
    }
    pm_blend_space_sync_wrap(s);
    if ((r = pm_blend_space_build_cells(s, def->collinear, def->coplanar, error)) != PM_OK) goto fail;
    /* The skeleton (rest offsets) and file metadata of baked clips come from the first sample in
     * the canonical order, not the first listed: reordering the samples changes no output byte. */
    const pm_clip *canonical = def->samples[s->order[0]].clip;
    s->unit_scale = canonical->unit_scale > 0.0f ? canonical->unit_scale : 1.0f;
    s->source_up = canonical->source_up;
    if ((r = pm_skeleton_copy(&s->skeleton, &canonical->skeleton, a, error)) != PM_OK) goto fail;
    if ((r = pm_blend_space_root_build(s, error)) != PM_OK) goto fail;
    *out = s;
    return PM_OK;
fail:
    pm_blend_space_destroy(s);
    return r;
}

/* ---- inspection ---- */

const char *pm_blend_space_name(const pm_blend_space *s) { return s ? s->name : NULL; }
int pm_blend_space_dimensions(const pm_blend_space *s) { return s ? s->dimensions : 0; }
int pm_blend_space_sample_count(const pm_blend_space *s) { return s ? s->sample_count : 0; }
int pm_blend_space_is_collinear(const pm_blend_space *s) { return s ? s->collinear : 0; }
int pm_blend_space_is_coplanar(const pm_blend_space *s) { return s ? s->coplanar : 0; }

int pm_blend_space_max_weights(const pm_blend_space *s) {
    if (!s) return 0;
    switch (s->mode) {
    case SPACE_POINT: return 1;
    case SPACE_LINE: return 2;
    case SPACE_TRIANGLES: return 3;
    case SPACE_TETRAHEDRA: return 4;
    }
    return PM_BLEND_SPACE_MAX_WEIGHTS;
}

int pm_blend_space_scratch_count(const pm_blend_space *s) { return s ? pm_blend_space_max_weights(s) * s->soa_count : 0; }

const pm_skeleton *pm_blend_space_skeleton(const pm_blend_space *s) { return s ? &s->skeleton : NULL; }

const char *pm_blend_space_sample_name(const pm_blend_space *s, int i) {
    return s && i >= 0 && i < s->sample_count ? s->names[i] : NULL;
}

pm_result pm_blend_space_sample_params(float *out, const pm_blend_space *s, int i, pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_blend_space_sample_params: out_params is NULL");
    if (!s) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_blend_space_sample_params: space is NULL");
    if (i < 0 || i >= s->sample_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "pm_blend_space_sample_params: sample %d is outside 0..%d (blend space '%s')", i,
                       s->sample_count - 1, s->name);
    for (int d = 0; d < s->dimensions; d++) out[d] = s->params[i * PM_BLEND_SPACE_MAX_DIMENSIONS + d];
    return PM_OK;
}

const pm_animation *pm_blend_space_sample_animation(const pm_blend_space *s, int i) {
    return s && i >= 0 && i < s->sample_count ? &s->animations[i] : NULL;
}

const char *pm_blend_space_axis_name(const pm_blend_space *s, int axis) {
    return s && axis >= 0 && axis < s->dimensions ? s->axis_names[axis] : NULL;
}

pm_result pm_blend_space_axis_range(float *out_min, float *out_max, const pm_blend_space *s, int axis,
                                    pm_error *error) {
    if (!out_min && !out_max)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_blend_space_axis_range: out_min and out_max are both NULL");
    if (!s) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_blend_space_axis_range: space is NULL");
    if (axis < 0 || axis >= s->dimensions)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "pm_blend_space_axis_range: axis %d is outside 0..%d (blend space '%s')", axis, s->dimensions - 1,
                       s->name);
    if (out_min) *out_min = (float)s->axis_min[axis];
    if (out_max) *out_max = (float)s->axis_max[axis];
    return PM_OK;
}

int pm_blend_space_cell_count(const pm_blend_space *s) {
    if (!s) return 0;
    if (s->mode == SPACE_TETRAHEDRA) return s->tet.tet_count;
    if (s->mode == SPACE_TRIANGLES) return s->tri.triangle_count;
    return s->mode == SPACE_LINE ? s->sample_count - 1 : 0;
}

int pm_blend_space_cell(const pm_blend_space *s, int cell, int *out_samples) {
    if (!s || !out_samples || cell < 0 || cell >= pm_blend_space_cell_count(s)) return 0;
    if (s->mode == SPACE_TETRAHEDRA) {
        for (int i = 0; i < 4; i++) out_samples[i] = s->order[s->tet.vertices[4 * cell + i]];
        return 4;
    }
    if (s->mode == SPACE_TRIANGLES) {
        for (int i = 0; i < 3; i++) out_samples[i] = s->order[s->tri.vertices[3 * cell + i]];
        return 3;
    }
    out_samples[0] = s->order[cell];
    out_samples[1] = s->order[cell + 1];
    return 2;
}
