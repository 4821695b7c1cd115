/* Blend spaces: creation (alignment, canonical order, triangulation, location grid) and weights. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "blend_space_internal.h"
#include "core.h"

/* Weights below this fraction are dropped: the sample would cost a sampling job for no visible effect. */
#define PM_BLEND_MIN_WEIGHT 1e-6f
#define PM_BLEND_GRID_MAX 128

pm_blend_sample_def pm_default_blend_sample_def(void) {
    pm_blend_sample_def d;
    memset(&d, 0, sizeof d);
    return d;
}

pm_blend_space_def pm_default_blend_space_def(void) {
    pm_blend_space_def d;
    memset(&d, 0, sizeof d);
    d.dimensions = 1;
    d.sync = PM_BLEND_SYNC_PHASE;
    d.align = PM_BLEND_ALIGN_POSITION_FACING;
    d.collinear = PM_BLEND_COLLINEAR_LINE;
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
    pm_free(&a, s->order);
    pm_free(&a, s->points);
    pm_free(&a, s->line_s);
    pm_free(&a, s->grid_start);
    pm_free(&a, s->grid_items);
    pm_delaunay_destroy(&s->tri);
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
    pm_clip_frame_world(clip, 0, world);
    r0.translation = world[hips].translation;
    /* Heights stay as recorded: only the ground-plane placement and heading are normalised. */
    r0.translation.y = 0.0f;
    pm_transform move = pm_transform_inverse(r0);
    /* flags: 1 static, 2 has children, 4 every ancestor static, 8 carrier (takes the move). */
    for (int j = 0; j < jc; j++) {
        int st = 1;
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

static int compare_rank(const void *pa, const void *pb, const pm_dt_point *pts) {
    int a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    if (pts[a].x != pts[b].x) return pts[a].x < pts[b].x ? -1 : 1;
    if (pts[a].y != pts[b].y) return pts[a].y < pts[b].y ? -1 : 1;
    return (a > b) - (a < b);
}

/* Insertion-free merge sort of sample indices by snapped coordinates (qsort has no context
 * argument in C11, and the order must be total and deterministic). */
static void sort_ranks(int32_t *idx, int32_t *tmp, int n, const pm_dt_point *pts) {
    if (n < 2) return;
    int h = n / 2;
    sort_ranks(idx, tmp, h, pts);
    sort_ranks(idx + h, tmp, n - h, pts);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = compare_rank(&idx[j], &idx[i], pts) < 0 ? idx[j++] : idx[i++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, (size_t)n * sizeof(int32_t));
}

/* Parameter point to the exact integer grid; *clamped is set when it lay outside the axes. */
static pm_dt_point snap_point(const pm_blend_space *s, const float *params, int *clamped) {
    pm_dt_point p = {0, 0};
    int64_t *c[2] = {&p.x, &p.y};
    for (int d = 0; d < s->dimensions; d++) {
        double u = ((double)params[d] - s->axis_min[d]) / (s->axis_max[d] - s->axis_min[d]);
        if (u < 0.0) {
            u = 0.0;
            if (clamped) *clamped = 1;
        } else if (u > 1.0) {
            u = 1.0;
            if (clamped) *clamped = 1;
        }
        *c[d] = (int64_t)floor(u * (double)PM_DT_COORD_MAX + 0.5);
    }
    return p;
}

static int64_t cell_of(int64_t x, int n) {
    int64_t c = (x * n) >> PM_DT_COORD_BITS;
    return c < 0 ? 0 : (c >= n ? n - 1 : c);
}

static pm_result build_grid(pm_blend_space *s, pm_error *error) {
    const pm_triangulation *t = &s->tri;
    int n = (int)ceil(sqrt((double)t->triangle_count));
    n = PM_CLAMP(n, 1, PM_BLEND_GRID_MAX);
    s->grid_n = n;
    size_t cells = (size_t)n * (size_t)n;
    s->grid_start = (int32_t *)pm_alloc_array(&s->allocator, cells + 1, sizeof(int32_t), 0);
    if (!s->grid_start) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its grid");
    /* Two passes: count the triangles whose bounding box covers each cell, then fill. */
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < t->triangle_count; k++) {
            const int32_t *v = t->vertices + 3 * k;
            int64_t x0 = s->points[v[0]].x, x1 = x0, y0 = s->points[v[0]].y, y1 = y0;
            for (int i = 1; i < 3; i++) {
                x0 = PM_MIN(x0, s->points[v[i]].x);
                x1 = PM_MAX(x1, s->points[v[i]].x);
                y0 = PM_MIN(y0, s->points[v[i]].y);
                y1 = PM_MAX(y1, s->points[v[i]].y);
            }
            for (int64_t cy = cell_of(y0, n); cy <= cell_of(y1, n); cy++)
                for (int64_t cx = cell_of(x0, n); cx <= cell_of(x1, n); cx++) {
                    size_t cell = (size_t)cy * n + (size_t)cx;
                    if (pass == 0) s->grid_start[cell + 1]++;
                    else s->grid_items[s->grid_start[cell]++] = k;
                }
        }
        if (pass == 0) {
            for (size_t c = 0; c < cells; c++) s->grid_start[c + 1] += s->grid_start[c];
            s->grid_items = (int32_t *)pm_alloc_array(&s->allocator, (size_t)s->grid_start[cells] + 1, sizeof(int32_t), 0);
            if (!s->grid_items) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its grid");
        } else {
            /* The fill advanced each start to the next cell's; shift back. */
            for (size_t c = cells; c > 0; c--) s->grid_start[c] = s->grid_start[c - 1];
            s->grid_start[0] = 0;
        }
    }
    return PM_OK;
}

static pm_result check_def(const pm_blend_space_def *def, pm_error *error) {
    const char *name = def->name ? def->name : "blendspace";
    if (def->dimensions < 1 || def->dimensions > PM_BLEND_SPACE_MAX_DIMENSIONS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s': %d dimensions (1 or 2 are supported)", name,
                       def->dimensions);
    if (def->sample_count < 1 || !def->samples)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s' has no samples (an empty space cannot be blended)",
                       name);
    if (def->sample_count > PM_BLEND_SPACE_MAX_SAMPLES)
        return pm_fail(error, PM_ERR_LIMIT, "blend space '%s': %d samples exceeds the limit of %d", name, def->sample_count,
                       PM_BLEND_SPACE_MAX_SAMPLES);
    if ((unsigned)def->sync > PM_BLEND_SYNC_NONE || (unsigned)def->align > PM_BLEND_ALIGN_NONE ||
        (unsigned)def->collinear > PM_BLEND_COLLINEAR_ERROR)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s': unknown sync, align or collinear option", name);
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
                return pm_fail(error, PM_ERR_NUMERIC, "blend space '%s': sample %d has a non-finite coordinate", name, i);
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
                           a->joint_count, j, j < a->joint_count ? a->names[j] : "-", j < b->joint_count ? b->names[j] : "-");
        }
    }
    for (int d = 0; d < def->dimensions; d++) {
        float lo = def->axis_min[d], hi = def->axis_max[d];
        if (!isfinite(lo) || !isfinite(hi))
            return pm_fail(error, PM_ERR_NUMERIC, "blend space '%s': axis %d range is not finite", name, d);
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
    if (!out || !def) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_blend_space_create: NULL argument");
    *out = NULL;
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
    const pm_clip *first = def->samples[0].clip;
    s->joint_count = first->skeleton.joint_count;
    s->soa_count = pm_soa_count(s->joint_count);
    s->unit_scale = first->unit_scale > 0.0f ? first->unit_scale : 1.0f;
    s->source_up = first->source_up;
    s->frame_time = first->frame_time;
    s->name = dup_or(a, def->name, "blendspace");
    s->names = (char **)pm_alloc_array(a, (size_t)n, sizeof(char *), 0);
    s->params = (float *)pm_alloc_array(a, (size_t)n * PM_BLEND_SPACE_MAX_DIMENSIONS, sizeof(float), 0);
    s->animations = (pm_animation *)pm_alloc_array(a, (size_t)n, sizeof(pm_animation), 0);
    s->order = (int32_t *)pm_alloc_array(a, (size_t)n * 2, sizeof(int32_t), 0);
    s->points = (pm_dt_point *)pm_alloc_array(a, (size_t)n, sizeof(pm_dt_point), 0);
    if (!s->name || !s->names || !s->params || !s->animations || !s->order || !s->points) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for %d samples", n);
        goto fail;
    }
    static const char *const default_axes[2] = {"x", "y"};
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
                lo -= 0.5;
                hi += 0.5;
            }
        }
        s->axis_min[d] = lo;
        s->axis_max[d] = hi;
    }
    if ((r = pm_skeleton_copy(&s->skeleton, &first->skeleton, a, error)) != PM_OK) goto fail;

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
                r = pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s': sample '%s' has %s = %g, outside the axis range [%g, %g]",
                            s->name, s->names[i], s->axis_names[d], (double)v, s->axis_min[d], s->axis_max[d]);
                goto fail;
            }
        }
        pm_clip aligned;
        if ((r = pm_clip_copy(&aligned, sd->clip, a, error)) != PM_OK) goto fail;
        r = align_clip(&aligned, (pm_blend_align)def->align, s->names[i], error);
        if (r == PM_OK) r = pm_animation_build(&s->animations[i], &aligned, a, error);
        pm_clip_destroy(&aligned);
        if (r != PM_OK) goto fail;
        s->points[i] = snap_point(s, &s->params[i * PM_BLEND_SPACE_MAX_DIMENSIONS], NULL);
    }

    /* Canonical order, then the points themselves in that order. */
    for (int i = 0; i < n; i++) s->order[i] = i;
    sort_ranks(s->order, s->order + n, n, s->points);
    {
        pm_dt_point *sorted = (pm_dt_point *)pm_alloc_array(a, (size_t)n, sizeof(pm_dt_point), 0);
        if (!sorted) {
            r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
            goto fail;
        }
        for (int k = 0; k < n; k++) sorted[k] = s->points[s->order[k]];
        pm_free(a, s->points);
        s->points = sorted;
    }
    for (int k = 1; k < n; k++)
        if (s->points[k].x == s->points[k - 1].x && s->points[k].y == s->points[k - 1].y) {
            int i = s->order[k - 1], j = s->order[k];
            if (i > j) {
                int t = i;
                i = j;
                j = t;
            }
            const float *pi = &s->params[i * PM_BLEND_SPACE_MAX_DIMENSIONS], *pj = &s->params[j * PM_BLEND_SPACE_MAX_DIMENSIONS];
            r = pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                        "blend space '%s': samples '%s' (%g, %g) and '%s' (%g, %g) are at the same coordinates; remove one or "
                        "move it",
                        s->name, s->names[i], (double)pi[0], dims > 1 ? (double)pi[1] : 0.0, s->names[j], (double)pj[0],
                        dims > 1 ? (double)pj[1] : 0.0);
            goto fail;
        }

    if (n == 1) s->mode = SPACE_POINT;
    else {
        int collinear = 1;
        if (dims == 2)
            for (int k = 2; k < n && collinear; k++)
                if (pm_dt_orient(s->points[0], s->points[1], s->points[k]) != 0) collinear = 0;
        if (dims == 2 && collinear && def->collinear == PM_BLEND_COLLINEAR_ERROR) {
            r = pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                        "blend space '%s': all %d samples lie on one line, so no triangle can hold a point (make it a 1D "
                        "space or add a sample off the line)",
                        s->name, n);
            goto fail;
        }
        if (collinear) {
            s->mode = SPACE_LINE;
            s->collinear = dims == 2;
            s->line_s = (int64_t *)pm_alloc_array(a, (size_t)n, sizeof(int64_t), 0);
            if (!s->line_s) {
                r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
                goto fail;
            }
            pm_dt_point o = s->points[0], e = s->points[n - 1];
            for (int k = 0; k < n; k++)
                s->line_s[k] = (s->points[k].x - o.x) * (e.x - o.x) + (s->points[k].y - o.y) * (e.y - o.y);
        } else {
            s->mode = SPACE_TRIANGLES;
            if ((r = pm_delaunay_build(&s->tri, s->points, n, a, error)) != PM_OK) goto fail;
            if ((r = build_grid(s, error)) != PM_OK) goto fail;
        }
    }
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
const pm_skeleton *pm_blend_space_skeleton(const pm_blend_space *s) { return s ? &s->skeleton : NULL; }

const char *pm_blend_space_sample_name(const pm_blend_space *s, int i) {
    return s && i >= 0 && i < s->sample_count ? s->names[i] : NULL;
}

void pm_blend_space_sample_params(const pm_blend_space *s, int i, float *out) {
    if (!s || !out || i < 0 || i >= s->sample_count) return;
    for (int d = 0; d < s->dimensions; d++) out[d] = s->params[i * PM_BLEND_SPACE_MAX_DIMENSIONS + d];
}

const pm_animation *pm_blend_space_sample_animation(const pm_blend_space *s, int i) {
    return s && i >= 0 && i < s->sample_count ? &s->animations[i] : NULL;
}

const char *pm_blend_space_axis_name(const pm_blend_space *s, int axis) {
    return s && axis >= 0 && axis < s->dimensions ? s->axis_names[axis] : NULL;
}

void pm_blend_space_axis_range(const pm_blend_space *s, int axis, float *out_min, float *out_max) {
    if (!s || axis < 0 || axis >= s->dimensions) return;
    if (out_min) *out_min = (float)s->axis_min[axis];
    if (out_max) *out_max = (float)s->axis_max[axis];
}

int pm_blend_space_cell_count(const pm_blend_space *s) {
    if (!s) return 0;
    if (s->mode == SPACE_TRIANGLES) return s->tri.triangle_count;
    return s->mode == SPACE_LINE ? s->sample_count - 1 : 0;
}

int pm_blend_space_cell(const pm_blend_space *s, int cell, int *out_samples) {
    if (!s || !out_samples || cell < 0 || cell >= pm_blend_space_cell_count(s)) return 0;
    if (s->mode == SPACE_TRIANGLES) {
        for (int i = 0; i < 3; i++) out_samples[i] = s->order[s->tri.vertices[3 * cell + i]];
        return 3;
    }
    out_samples[0] = s->order[cell];
    out_samples[1] = s->order[cell + 1];
    return 2;
}

/* ---- weights ---- */

/* Ranks and weights of one query, before pruning and ordering. */
typedef struct raw_weights {
    int count;
    int rank[3];
    double w[3];
} raw_weights;

static void locate_line(const pm_blend_space *s, pm_dt_point q, raw_weights *rw, pm_blend_space_weights *out) {
    int n = s->sample_count;
    pm_dt_point o = s->points[0], e = s->points[n - 1];
    int64_t sq = (q.x - o.x) * (e.x - o.x) + (q.y - o.y) * (e.y - o.y);
    if (s->collinear && pm_dt_orient(o, e, q) != 0) out->outside = 1;
    out->cell_kind = PM_BLEND_CELL_SEGMENT;
    int lo = 0, hi = n - 1;
    if (sq <= s->line_s[0] || sq >= s->line_s[n - 1]) {
        int k = sq <= s->line_s[0] ? 0 : n - 1;
        if (sq != s->line_s[k]) out->outside = 1;
        out->cell = k == 0 ? 0 : n - 2;
        rw->count = 1;
        rw->rank[0] = k;
        rw->w[0] = 1.0;
        return;
    }
    /* Binary search for line_s[lo] <= sq < line_s[lo + 1]. */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (s->line_s[mid] <= sq) lo = mid;
        else hi = mid;
    }
    out->cell = lo;
    double t = (double)(sq - s->line_s[lo]) / (double)(s->line_s[lo + 1] - s->line_s[lo]);
    rw->count = 2;
    rw->rank[0] = lo;
    rw->rank[1] = lo + 1;
    rw->w[0] = 1.0 - t;
    rw->w[1] = t;
}

static void locate_triangles(const pm_blend_space *s, pm_dt_point q, raw_weights *rw, pm_blend_space_weights *out) {
    const pm_triangulation *t = &s->tri;
    int n = s->grid_n;
    size_t cell = (size_t)cell_of(q.y, n) * n + (size_t)cell_of(q.x, n);
    for (int32_t k = s->grid_start[cell]; k < s->grid_start[cell + 1]; k++) {
        int tri = s->grid_items[k];
        const int32_t *v = t->vertices + 3 * tri;
        pm_dt_point a = s->points[v[0]], b = s->points[v[1]], c = s->points[v[2]];
        int64_t wa = pm_dt_orient(b, c, q), wb = pm_dt_orient(c, a, q), wc = pm_dt_orient(a, b, q);
        if (wa < 0 || wb < 0 || wc < 0) continue;
        /* Exact integer areas: a point on an edge gets exactly 0 for the opposite vertex, and the
         * two triangles sharing the edge give the same correctly rounded ratios. */
        double area = (double)(wa + wb + wc);
        out->cell_kind = PM_BLEND_CELL_TRIANGLE;
        out->cell = tri;
        rw->count = 3;
        for (int i = 0; i < 3; i++) rw->rank[i] = v[i];
        rw->w[0] = (double)wa / area;
        rw->w[1] = (double)wb / area;
        rw->w[2] = (double)wc / area;
        return;
    }
    /* Outside the hull: the nearest point of the nearest hull edge. */
    double best = INFINITY, best_t = 0.0;
    int best_edge = 0;
    for (int h = 0; h < t->hull_count; h++) {
        int tri = t->hull[2 * h], i = t->hull[2 * h + 1];
        pm_dt_point a = s->points[t->vertices[3 * tri + (i + 1) % 3]], b = s->points[t->vertices[3 * tri + (i + 2) % 3]];
        int64_t ex = b.x - a.x, ey = b.y - a.y, qx = q.x - a.x, qy = q.y - a.y;
        int64_t num = qx * ex + qy * ey, den = ex * ex + ey * ey;
        double u = num <= 0 ? 0.0 : (num >= den ? 1.0 : (double)num / (double)den);
        double dx = (double)qx - u * (double)ex, dy = (double)qy - u * (double)ey;
        double d2 = dx * dx + dy * dy;
        if (d2 < best) {
            best = d2;
            best_t = u;
            best_edge = h;
        }
    }
    int tri = t->hull[2 * best_edge], i = t->hull[2 * best_edge + 1];
    out->cell_kind = PM_BLEND_CELL_HULL_EDGE;
    out->cell = tri;
    out->outside = 1;
    rw->count = 2;
    rw->rank[0] = t->vertices[3 * tri + (i + 1) % 3];
    rw->rank[1] = t->vertices[3 * tri + (i + 2) % 3];
    rw->w[0] = 1.0 - best_t;
    rw->w[1] = best_t;
}

pm_result pm_blend_space_weights_at(pm_blend_space_weights *out, const pm_blend_space *s, const float *params,
                                    pm_error *error) {
    if (!out || !s || !params) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space weights: NULL argument");
    memset(out, 0, sizeof *out);
    for (int d = 0; d < s->dimensions; d++)
        if (!isfinite(params[d]))
            return pm_fail(error, PM_ERR_NUMERIC, "blend space '%s': parameter %s is not finite", s->name, s->axis_names[d]);
    int clamped = 0;
    pm_dt_point q = snap_point(s, params, &clamped);
    raw_weights rw;
    memset(&rw, 0, sizeof rw);
    if (s->mode == SPACE_POINT) {
        out->cell_kind = PM_BLEND_CELL_POINT;
        out->cell = -1;
        rw.count = 1;
        rw.w[0] = 1.0;
    } else if (s->mode == SPACE_LINE) locate_line(s, q, &rw, out);
    else locate_triangles(s, q, &rw, out);
    if (clamped) out->outside = 1;

    out->cell_sample_count = out->cell_kind == PM_BLEND_CELL_TRIANGLE ? 3 : (out->cell_kind == PM_BLEND_CELL_POINT ? 1 : 2);
    if (out->cell_kind == PM_BLEND_CELL_SEGMENT) {
        out->cell_samples[0] = s->order[out->cell];
        out->cell_samples[1] = s->order[out->cell + 1];
    } else if (out->cell_kind == PM_BLEND_CELL_POINT) out->cell_samples[0] = 0;
    else if (out->cell_kind == PM_BLEND_CELL_TRIANGLE)
        for (int i = 0; i < 3; i++) out->cell_samples[i] = s->order[s->tri.vertices[3 * out->cell + i]];
    else
        for (int i = 0; i < 2; i++) out->cell_samples[i] = s->order[rw.rank[i]];

    /* Drop negligible weights, list the rest by rank (coordinates), renormalise. */
    double total = 0.0;
    int kept = 0;
    int rank[3];
    double w[3];
    for (int i = 0; i < rw.count; i++)
        if (rw.w[i] >= (double)PM_BLEND_MIN_WEIGHT) {
            rank[kept] = rw.rank[i];
            w[kept] = rw.w[i];
            total += rw.w[i];
            kept++;
        }
    for (int i = 1; i < kept; i++)
        for (int j = i; j > 0 && rank[j] < rank[j - 1]; j--) {
            int tr = rank[j];
            rank[j] = rank[j - 1];
            rank[j - 1] = tr;
            double tw = w[j];
            w[j] = w[j - 1];
            w[j - 1] = tw;
        }
    out->count = kept;
    for (int i = 0; i < kept; i++) {
        out->samples[i] = s->order[rank[i]];
        out->weights[i] = kept == 1 ? 1.0f : (float)(w[i] / total);
    }
    /* The point used: the weighted sum of the samples' coordinates (the projection when outside). */
    for (int d = 0; d < s->dimensions; d++) {
        double p = 0.0;
        for (int i = 0; i < kept; i++) p += (double)out->weights[i] * s->params[out->samples[i] * PM_BLEND_SPACE_MAX_DIMENSIONS + d];
        out->params[d] = (float)p;
    }
    return PM_OK;
}

float pm_blend_space_duration(const pm_blend_space *s, const pm_blend_space_weights *w) {
    if (!s || !w) return 0.0f;
    double d = 0.0;
    for (int i = 0; i < w->count; i++) d += (double)w->weights[i] * s->animations[w->samples[i]].duration;
    return (float)d;
}
