/* Root ("simulation bone") extraction and mirroring. */
#include <math.h>

#include "clip_internal.h"
#include "core.h"
#include "posematch/anim.h"

pm_root_def pm_default_root_def(void) {
    pm_root_def d;
    d.facing_mode = PM_FACING_FROM_LEGS;
    d.hips_axis = pm_vec3_make(0.0f, 0.0f, 1.0f);
    d.ground_mode = PM_GROUND_DETECT;
    /* Pelvis sway and yaw oscillate with every step; a tenth of a second of smoothing keeps the
     * root on the walking line, as Holden's simulation bone does, without lagging turns. */
    d.position_smoothing = 0.1f;
    d.facing_smoothing = 0.1f;
    d.hips = -1;
    d.left_upleg = -1;
    d.right_upleg = -1;
    return d;
}

static int finite3(pm_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

pm_result pm_root_def_validate(const pm_root_def *d, pm_error *error) {
    if (!d) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_root_def_validate: def is NULL");
    /* Enums are compared as ints: a value outside the enum is exactly what is being caught. */
    int facing = (int)d->facing_mode, ground = (int)d->ground_mode;
    if (facing != PM_FACING_FROM_LEGS && facing != PM_FACING_HIPS_AXIS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "root: facing_mode %d is not PM_FACING_FROM_LEGS (0) or PM_FACING_HIPS_AXIS (1)", facing);
    if (ground != PM_GROUND_DETECT && ground != PM_GROUND_ZERO)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "root: ground_mode %d is not PM_GROUND_DETECT (0) or PM_GROUND_ZERO (1)",
                       ground);
    if (!finite3(d->hips_axis))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "root: hips_axis (%g, %g, %g) is not finite", (double)d->hips_axis.x,
                       (double)d->hips_axis.y, (double)d->hips_axis.z);
    /* The facing normalises the axis after rotating it: below this length it has no direction, and
     * above the other bound its squared length overflows (and the facing would fall back to +Z). */
    if (facing == PM_FACING_HIPS_AXIS && !(pm_vec3_length(d->hips_axis) > 1e-6f && pm_vec3_length(d->hips_axis) < 1e6f))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "root: hips_axis (%g, %g, %g) must have a length in 1e-6..1e6 (facing_mode PM_FACING_HIPS_AXIS needs "
                       "a direction)",
                       (double)d->hips_axis.x, (double)d->hips_axis.y, (double)d->hips_axis.z);
    if (!(d->position_smoothing >= 0.0f) || !isfinite(d->position_smoothing))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "root: position_smoothing %g must be finite and >= 0 seconds",
                       (double)d->position_smoothing);
    if (!(d->facing_smoothing >= 0.0f) || !isfinite(d->facing_smoothing))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "root: facing_smoothing %g must be finite and >= 0 seconds",
                       (double)d->facing_smoothing);
    const char *names[3] = {"hips", "left_upleg", "right_upleg"};
    int joints[3] = {d->hips, d->left_upleg, d->right_upleg};
    for (int i = 0; i < 3; i++)
        if (joints[i] < -1 || joints[i] >= PM_MAX_JOINTS)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "root: %s %d is outside -1..%d (-1 = found from the joint names)",
                           names[i], joints[i], PM_MAX_JOINTS - 1);
    if (d->left_upleg >= 0 && d->left_upleg == d->right_upleg)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "root: left_upleg and right_upleg are both joint %d (the facing needs two different legs)",
                       d->left_upleg);
    return PM_OK;
}

void pm_root_track_destroy(pm_root_track *t) {
    if (!t) return;
    pm_free(&t->allocator, t->frames);
    memset(t, 0, sizeof *t);
}

/* The Gaussian-weighted straight line through the samples of v within `radius` of i (those the
 * clip has), read at i. Where the window is whole this is the plain weighted mean (the slope
 * term cancels); near a non-looping clip's ends it replaces repeating the end frame, which for a
 * clip cut mid-stride (most locomotion takes) pulled the root back towards the last sample: the
 * root ran at about half the hips' speed over the first and last 0.2 s and trailed them by up to
 * 16 cm (a Bandai dash), so the trajectory features of those poses described a slower motion. */
/* The Gaussian's weights by distance in frames, w[k] = exp(-k^2 inv) for k = 0..radius: a table
 * for the usual radii (0.1 s at up to 640 fps), else computed as they are needed. */
#define GAUSS_TABLE 193
typedef struct gauss_weights {
    float table[GAUSS_TABLE];
    int tabled; /* entries in table: radius + 1, or 0 */
    float inv;
} gauss_weights;

static void gauss_weights_init(gauss_weights *g, int radius, float inv) {
    g->inv = inv;
    g->tabled = radius < GAUSS_TABLE ? radius + 1 : 0;
    for (int k = 0; k < g->tabled; k++) g->table[k] = pm_expf(-(float)(k * k) * inv);
}

static float gauss_weight(const gauss_weights *g, int k) {
    if (k < 0) k = -k;
    return k < g->tabled ? g->table[k] : pm_expf(-(float)(k * k) * g->inv);
}

static pm_vec3 local_line(const pm_vec3 *v, int n, int i, int radius, const gauss_weights *g) {
    int lo = i - radius < 0 ? -i : -radius, hi = i + radius > n - 1 ? n - 1 - i : radius;
    /* Offsets from v[i], so that positions far from the origin keep their precision. */
    pm_vec3 o = v[i], sx = pm_vec3_zero(), skx = pm_vec3_zero();
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f;
    for (int k = lo; k <= hi; k++) {
        float w = gauss_weight(g, k), kf = (float)k;
        pm_vec3 x = pm_vec3_sub(v[i + k], o);
        s0 += w;
        s1 += w * kf;
        s2 += w * kf * kf;
        sx = pm_vec3_add(sx, pm_vec3_scale(x, w));
        skx = pm_vec3_add(skx, pm_vec3_scale(x, w * kf));
    }
    float det = s0 * s2 - s1 * s1;
    /* Two samples at least (n >= 3, radius >= 1) make det > 0; the guard is for rounding. */
    if (!(det > 1e-6f * s0 * s2)) return pm_vec3_add(o, pm_vec3_scale(sx, 1.0f / s0));
    return pm_vec3_add(o, pm_vec3_scale(pm_vec3_sub(pm_vec3_scale(sx, s2), pm_vec3_scale(skx, s1)), 1.0f / det));
}

/* Gaussian smoothing of n vec3 samples (in place via tmp): near the ends of a non-looping clip a
 * local straight line (local_line), for a loop continued through it: a sample k cycles away is
 * the stored one moved by the cycle transform k times (cycle[k + 2] = C^k, k in -2..2), so a clip
 * that travels is not averaged with ground a loop length away. Directions (is_direction) take the
 * cycle's rotation only. */
static void smooth_vec3(pm_vec3 *v, pm_vec3 *tmp, int n, float sigma_frames, const pm_transform *cycle, int is_direction) {
    if (!(sigma_frames > 0.05f) || n < 3) return;
    /* Clamped as a float: a long sigma at a high rate may not fit an int. */
    float reach = ceilf(3.0f * sigma_frames);
    int radius = reach < (float)n ? (int)reach : n;
    gauss_weights g;
    gauss_weights_init(&g, radius, 1.0f / (2.0f * sigma_frames * sigma_frames));
    for (int i = 0; i < n; i++) {
        if (!cycle && (i < radius || i + radius > n - 1)) {
            tmp[i] = local_line(v, n, i, radius, &g);
            continue;
        }
        pm_vec3 acc = pm_vec3_zero();
        float wsum = 0.0f;
        for (int k = -radius; k <= radius; k++) {
            int idx = i + k;
            pm_vec3 x;
            if (cycle) {
                int c = idx < 0 ? -((n - 1 - idx) / n) : idx / n; /* cycles away: floor(idx / n), in -2..2 */
                idx -= c * n;
                x = v[idx];
                if (c) {
                    const pm_transform *t = &cycle[c + 2];
                    x = is_direction ? pm_quat_rotate(t->rotation, x) : pm_transform_point(*t, x);
                }
            } else {
                x = v[idx]; /* a whole window: local_line took the ends */
            }
            float w = gauss_weight(&g, k);
            acc = pm_vec3_add(acc, pm_vec3_scale(x, w));
            wsum += w;
        }
        tmp[i] = pm_vec3_scale(acc, 1.0f / wsum);
    }
    memcpy(v, tmp, (size_t)n * sizeof(pm_vec3));
}

pm_transform pm_loop_cycle(pm_transform first, pm_transform before_last, pm_transform last) {
    pm_transform step = pm_transform_mul(pm_transform_inverse(before_last), last);
    return pm_transform_mul(pm_transform_mul(last, step), pm_transform_inverse(first));
}

/* The root a loop continues with: where frame 0 lies one cycle on, continuing the last frame's
 * step (as features.c continues the smoothed track), as powers C^-2..C^2 of that transform. */
static void loop_cycle(pm_transform cycle[5], const pm_vec3 *pos, const pm_vec3 *fwd, int n) {
    pm_transform raw[3];
    const int at[3] = {0, n - 2, n - 1};
    for (int i = 0; i < 3; i++) {
        raw[i].rotation = pm_quat_from_yaw(pm_atan2f(fwd[at[i]].x, fwd[at[i]].z));
        raw[i].translation = pos[at[i]];
    }
    pm_transform c = pm_loop_cycle(raw[0], raw[1], raw[2]);
    pm_transform ci = pm_transform_inverse(c);
    cycle[2] = pm_transform_identity();
    cycle[3] = c;
    cycle[4] = pm_transform_mul(c, c);
    cycle[1] = ci;
    cycle[0] = pm_transform_mul(ci, ci);
}

pm_result pm_root_track_extract(pm_root_track *out, const pm_clip *clip, const pm_root_def *def_in,
                                const pm_allocator *allocator, pm_error *error) {
    if (!out || !clip) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_root_track_extract: NULL argument");
    memset(out, 0, sizeof *out); /* empty, so that destroying it after a failure is safe */
    pm_root_def def = def_in ? *def_in : pm_default_root_def();
    const char *name = clip->name ? clip->name : "clip";
    pm_result r = pm_root_def_validate(&def, error);
    if (r != PM_OK) return r;
    if (!clip->rotations || !clip->translations || clip->frame_count < 1 || !(clip->frame_time > 0.0f) ||
        !isfinite(clip->frame_time))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "root: clip '%s' is not initialised (frames, frame time)", name);
    /* Forward kinematics below indexes parents: an unordered hierarchy must be an error, not a
     * read out of bounds. */
    if ((r = pm_skeleton_validate(&clip->skeleton, error)) != PM_OK) {
        pm_error_prefix(error, "root: clip '%s'", name);
        return r;
    }
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, &clip->skeleton);
    int jc = clip->skeleton.joint_count;
    const char *fields[3] = {"hips", "left_upleg", "right_upleg"};
    int given[3] = {def.hips, def.left_upleg, def.right_upleg};
    for (int i = 0; i < 3; i++)
        if (given[i] >= jc)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "root: %s %d is outside -1..%d (the joints of clip '%s')",
                           fields[i], given[i], jc - 1, name);
    int hips = def.hips >= 0 ? def.hips : roles.hips;
    int lu = def.left_upleg >= 0 ? def.left_upleg : roles.left_upleg;
    int ru = def.right_upleg >= 0 ? def.right_upleg : roles.right_upleg;
    if (hips < 0) return pm_fail(error, PM_ERR_NOT_FOUND, "%s: no hips joint found (name one)", name);
    pm_facing_mode mode = def.facing_mode;
    if (mode == PM_FACING_FROM_LEGS && (lu < 0 || ru < 0)) {
        return pm_fail(error, PM_ERR_NOT_FOUND,
                       "%s: facing from the legs needs left and right upper legs; none found by name (use the hips axis)",
                       name);
    }
    /* One given, the other found from names: they can still coincide. */
    if (mode == PM_FACING_FROM_LEGS && lu == ru)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "root: %s: left and right upper legs are both joint %d ('%s'); the facing needs two", name, lu,
                       clip->skeleton.names[lu]);
    int n = clip->frame_count;
    out->allocator = pm_allocator_resolve(pm_allocator_or(allocator, &clip->allocator));
    out->frames = (pm_transform *)pm_alloc_array(&out->allocator, (size_t)n, sizeof(pm_transform), 16);
    pm_vec3 *pos = (pm_vec3 *)pm_alloc_array(&out->allocator, (size_t)n * 3, sizeof(pm_vec3), 16);
    pm_transform *world = (pm_transform *)pm_alloc_array(&out->allocator, (size_t)jc, sizeof(pm_transform), 16);
    int *chain = (int *)pm_alloc_array(&out->allocator, (size_t)jc, sizeof(int), 16);
    if (!out->frames || !pos || !world || !chain) {
        pm_free(&out->allocator, pos);
        pm_free(&out->allocator, world);
        pm_free(&out->allocator, chain);
        pm_root_track_destroy(out);
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory for the root track", name);
    }
    pm_vec3 *fwd = pos + n, *tmp = pos + 2 * n;
    float ground = 0.0f;
    if (def.ground_mode == PM_GROUND_DETECT) {
        pm_clip_survey survey;
        if ((r = pm_clip_survey_compute(&survey, clip, error)) != PM_OK) goto fail;
        ground = survey.floor_height;
        if (!isfinite(ground)) {
            r = pm_fail(error, PM_ERR_NUMERIC, "the floor height is not finite (a joint's motion is not)");
            goto fail;
        }
    }
    pm_vec3 up = pm_vec3_make(0.0f, 1.0f, 0.0f);
    pm_vec3 last = pm_vec3_make(0.0f, 0.0f, 1.0f);
    /* The clip checked once; then only the hips' and upper legs' chains, frame by frame. */
    if ((r = pm_clip_frame_world(world, clip, 0, error)) != PM_OK) goto fail;
    const int wanted[3] = {hips, lu, ru};
    const int chain_count =
        pm_joint_ancestry(chain, clip->skeleton.parents, jc, wanted, mode == PM_FACING_FROM_LEGS ? 3 : 1);
    for (int f = 0; f < n; f++) {
        pm_clip_frame_world_listed(world, clip, f, chain, chain_count);
        pm_vec3 h = world[hips].translation;
        pos[f] = pm_vec3_make(h.x, ground, h.z);
        pm_vec3 d;
        float whole; /* the length of what the facing is taken from, before it is flattened */
        if (mode == PM_FACING_FROM_LEGS) {
            pm_vec3 right = pm_vec3_sub(world[ru].translation, world[lu].translation);
            d = pm_vec3_cross(up, right);
            whole = pm_vec3_length(right);
        } else {
            d = pm_quat_rotate(world[hips].rotation, def.hips_axis);
            whole = pm_vec3_length(d);
        }
        d.y = 0.0f;
        /* A NaN would pass the degenerate-facing fallback below and the smoothing would spread it
         * over the whole track: a clip that is not finite is an error here, as in pm_clip_validate. */
        if (!finite3(h) || !finite3(d)) {
            r = pm_fail(error, PM_ERR_NUMERIC, "frame %d: the %s is not finite", f,
                        finite3(h) ? "facing" : "hips position");
            goto fail;
        }
        /* Degenerate frames (legs stacked vertically, axis pointing up) keep the last facing. The
         * bound is relative: a float rotation that turns an axis upright leaves rounding noise of
         * about 1e-7 of its length in the horizontal part, which must not read as a direction. */
        float flat = pm_vec3_length(d);
        d = flat > 1e-5f * whole && flat > 1e-8f ? pm_vec3_scale(d, 1.0f / flat) : last;
        last = d;
        fwd[f] = d;
    }
    float fps = 1.0f / clip->frame_time;
    pm_transform cycle[5];
    const int loop = clip->looping && n >= 3; /* (smoothing needs 3 frames) */
    if (loop) loop_cycle(cycle, pos, fwd, n);
    smooth_vec3(pos, tmp, n, def.position_smoothing * fps, loop ? cycle : NULL, 0);
    smooth_vec3(fwd, tmp, n, def.facing_smoothing * fps, loop ? cycle : NULL, 1);
    for (int f = 0; f < n; f++) {
        pm_vec3 d = pm_vec3_normalize_or(fwd[f], f > 0 ? pm_quat_rotate(out->frames[f - 1].rotation, pm_vec3_make(0, 0, 1))
                                                        : pm_vec3_make(0, 0, 1));
        out->frames[f].rotation = pm_quat_from_yaw(pm_atan2f(d.x, d.z));
        out->frames[f].translation = pos[f];
    }
    out->frame_count = n;
    pm_free(&out->allocator, pos);
    pm_free(&out->allocator, world);
    pm_free(&out->allocator, chain);
    return PM_OK;
fail:
    pm_error_prefix(error, "root: clip '%s'", name);
    pm_free(&out->allocator, pos);
    pm_free(&out->allocator, world);
    pm_free(&out->allocator, chain);
    pm_root_track_destroy(out);
    return r;
}

/* ---- mirroring ---- */

static pm_quat mirror_quat(pm_quat q, int axis) {
    /* Reflection M across the plane normal to `axis`: M R M keeps the axis component of the
     * rotation vector and negates the other two. */
    switch (axis) {
    case 0: return pm_quat_make(q.x, -q.y, -q.z, q.w);
    case 1: return pm_quat_make(-q.x, q.y, -q.z, q.w);
    default: return pm_quat_make(-q.x, -q.y, q.z, q.w);
    }
}

static pm_vec3 mirror_vec(pm_vec3 v, int axis) {
    if (axis == 0) v.x = -v.x;
    else if (axis == 1) v.y = -v.y;
    else v.z = -v.z;
    return v;
}

/* The rotation taking direction a to direction b along the shortest arc; for opposite
 * directions a half turn about `axis`, a direction perpendicular to a. */
static pm_quat quat_between(pm_vec3 a, pm_vec3 b, pm_vec3 axis) {
    a = pm_vec3_normalize_or(a, pm_vec3_make(1, 0, 0));
    b = pm_vec3_normalize_or(b, pm_vec3_make(1, 0, 0));
    float d = pm_vec3_dot(a, b);
    if (d < -0.99999f) return pm_quat_from_axis_angle(axis, PM_PI);
    pm_vec3 c = pm_vec3_cross(a, b);
    return pm_quat_normalize(pm_quat_make(c.x, c.y, c.z, 1.0f + d));
}

/* A direction perpendicular to v: v crossed with the coordinate axis least aligned with it. */
static pm_vec3 perpendicular(pm_vec3 v) {
    float x = fabsf(v.x), y = fabsf(v.y), z = fabsf(v.z);
    pm_vec3 e = x <= y && x <= z ? pm_vec3_make(1, 0, 0) : y <= z ? pm_vec3_make(0, 1, 0) : pm_vec3_make(0, 0, 1);
    return pm_vec3_normalize_or(pm_vec3_cross(v, e), pm_vec3_make(0, 0, 1));
}

/* What a joint's correction must do: take each of its bone offsets (children, End Site) onto the
 * mirror image of its partner's matching offset. */
typedef struct mirror_constraints {
    pm_vec3 from[8], to[8];
    int count;
    int joints; /* the first `joints` are child joints (bone lengths depend on them); an End Site,
                   last, only shapes the file's end marker */
} mirror_constraints;

static void gather_constraints(mirror_constraints *m, const pm_skeleton *sk, const int32_t *map, int axis, int j) {
    m->count = 0;
    for (int c = j + 1; c < sk->joint_count && m->count < 8; c++) {
        if (sk->parents[c] != j || sk->parents[map[c]] != map[j]) continue;
        /* No direction on either side: nothing to meet. */
        if (pm_vec3_length(sk->rest_translations[c]) < 1e-6f || pm_vec3_length(sk->rest_translations[map[c]]) < 1e-6f) continue;
        m->from[m->count] = sk->rest_translations[c];
        m->to[m->count++] = mirror_vec(sk->rest_translations[map[c]], axis);
    }
    m->joints = m->count;
    if (m->count < 8 && sk->has_end_site && sk->end_sites && sk->has_end_site[j] && sk->has_end_site[map[j]] &&
        pm_vec3_length(sk->end_sites[j]) >= 1e-6f && pm_vec3_length(sk->end_sites[map[j]]) >= 1e-6f) {
        m->from[m->count] = sk->end_sites[j];
        m->to[m->count++] = mirror_vec(sk->end_sites[map[j]], axis);
    }
}

/* Whether q takes every child joint's offset to within `cos_tol` (a cosine) of its target. */
static int satisfies(pm_quat q, const mirror_constraints *m, float cos_tol) {
    for (int k = 0; k < m->joints; k++) {
        pm_vec3 a = pm_vec3_normalize_or(pm_quat_rotate(q, m->from[k]), pm_vec3_zero());
        pm_vec3 b = pm_vec3_normalize_or(m->to[k], pm_vec3_zero());
        if (pm_vec3_dot(a, b) < cos_tol) return 0;
    }
    return 1;
}
/* Left and right bone lengths and angles of real skeletons differ a little: a symmetric rest pose
 * is one whose corrections meet every child offset within 10 degrees. */
#define PM_MIRROR_LOOSE 0.985f

/* Of the rotations R_t(theta) r0 (r0 followed by any turn about t), the one closest to ref. A ref
 * a half turn about an axis across t (a Maya-style hips' correction seen from a leg along the
 * bone) is equally far from all of them: the turn would be whatever float noise makes it (173
 * degrees on one Bandai clip, 149 on the next, the knee then bending about a tilted axis), so
 * there r0 is returned and *half_turn set to r0 turned half about t - the two conventions a rig
 * may use, for the caller to choose between. */
static pm_quat twist_towards(pm_quat r0, pm_vec3 t, pm_quat ref, pm_quat *half_turn, int *ambiguous) {
    pm_vec3 n = pm_vec3_normalize_or(t, pm_vec3_make(1, 0, 0));
    pm_quat d = pm_quat_mul(ref, pm_quat_conjugate(r0));
    float s = d.x * n.x + d.y * n.y + d.z * n.z;
    *ambiguous = s * s + d.w * d.w < 1e-4f;
    if (*ambiguous) {
        *half_turn = pm_quat_normalize(pm_quat_mul(pm_quat_from_axis_angle(n, PM_PI), r0));
        return r0;
    }
    float theta = 2.0f * pm_atan2f(s, d.w);
    return pm_quat_normalize(pm_quat_mul(pm_quat_from_axis_angle(n, theta), r0));
}

/* The correction meeting a joint's constraints. Two offsets that are not parallel fix it: the
 * longest onto its target, then a turn about that target taking the one most apart from it onto
 * its own; *exact is set. One offset leaves a turn about it free: the one closest to ref, and
 * where ref prefers none, *alt set to the other convention (twist_towards) and *has_alt to 1. */
static pm_quat solve_correction(const mirror_constraints *m, pm_quat ref, int *exact, pm_quat *alt, int *has_alt) {
    *has_alt = 0;
    int k1 = 0;
    for (int k = 1; k < m->count; k++)
        if (pm_vec3_length(m->from[k]) > pm_vec3_length(m->from[k1])) k1 = k;
    pm_vec3 s1 = m->from[k1], t1 = pm_vec3_normalize_or(m->to[k1], pm_vec3_make(1, 0, 0));
    pm_quat q = quat_between(s1, t1, perpendicular(s1));
    int k2 = -1;
    float best = 0.1f; /* offsets nearly along the first one fix no turn */
    for (int k = 0; k < m->count; k++) {
        if (k == k1) continue;
        pm_vec3 d = pm_vec3_normalize_or(m->from[k], pm_vec3_zero());
        float off = pm_vec3_length(pm_vec3_cross(d, pm_vec3_normalize_or(s1, pm_vec3_zero())));
        if (off > best) best = off, k2 = k;
    }
    *exact = k2 >= 0;
    if (k2 < 0) return twist_towards(q, t1, ref, alt, has_alt);
    pm_vec3 u = pm_quat_rotate(q, m->from[k2]), v = m->to[k2];
    u = pm_vec3_sub(u, pm_vec3_scale(t1, pm_vec3_dot(u, t1)));
    v = pm_vec3_sub(v, pm_vec3_scale(t1, pm_vec3_dot(v, t1)));
    return pm_quat_normalize(pm_quat_mul(quat_between(u, v, t1), q));
}

/* mean_mismatch above this (mean poses more than 60 degrees apart) tells no convention apart. */
#define PM_MIRROR_UNTOLD 0.134f

/* The clip's mean local rotation per joint (hemisphere-aligned sum, normalised). */
static void mean_local_rotations(pm_quat *out, const pm_clip *c) {
    int jc = c->skeleton.joint_count;
    for (int j = 0; j < jc; j++) {
        pm_quat ref = c->rotations[j], acc = pm_quat_make(0, 0, 0, 0);
        for (int f = 0; f < c->frame_count; f++) {
            pm_quat q = c->rotations[(size_t)f * jc + j];
            if (pm_quat_dot(q, ref) < 0.0f) q = pm_quat_neg(q);
            acc = pm_quat_make(acc.x + q.x, acc.y + q.y, acc.z + q.z, acc.w + q.w);
        }
        float n = sqrtf(pm_quat_dot(acc, acc));
        out[j] = n > 1e-6f ? pm_quat_make(acc.x / n, acc.y / n, acc.z / n, acc.w / n) : pm_quat_identity();
    }
}

/* How far the mirrored clip's mean local rotation of joint j, with corrections cp (parent) and
 * cj, lies from the source's: 1 - |cos| of half the angle between them (0 = the same). */
static float mean_mismatch(pm_quat cp, pm_quat cj, pm_quat mirrored_mean, pm_quat mean) {
    pm_quat q = pm_quat_mul(pm_quat_mul(pm_quat_conjugate(cp), mirrored_mean), cj);
    return 1.0f - fabsf(pm_quat_dot(pm_quat_normalize(q), mean));
}

/* Per-joint corrections of the mirrored world rotations, so that the mirrored clip animates the
 * same skeleton in the same joint frames as the source clip: each joint's bone offsets must come
 * out as the skeleton's, else blending a clip with its mirror averages frames turned against each
 * other and collapses the skeleton. Where the rest pose is symmetric (joint frames that are
 * themselves mirror images, any convention) the rest pose gives them. Where it is not - rigs whose
 * zero-rotation pose is no T-pose, Maya-style bones along +X - they are solved from the offsets:
 * two offsets that are not parallel fix a joint's correction; one offset (a chain) leaves a turn
 * about the bone free, and so do joints without offsets. For those, the candidates are the
 * rest-pose correction (where it meets the offsets), the turn of the parent's correction and the
 * turn of the nearest fixed joint below (both turns, half a turn apart, where that correction
 * prefers none), and the one whose mirrored clip has the mean local rotation closest to the
 * source's wins: frame conventions are discrete choices, and a clip's mean pose tells them apart -
 * unless it comes within 60 degrees of none, when the parent's convention is kept. */
static int mirror_corrections(pm_quat *corr, const pm_clip *clip, const int32_t *map, int axis, const pm_transform *rest,
                              const pm_allocator *a) {
    const pm_skeleton *sk = &clip->skeleton;
    int jc = sk->joint_count, symmetric = 1;
    /* Every joint's constraints, gathered once (each gathering scans the joints after it). */
    mirror_constraints *cons = (mirror_constraints *)pm_alloc_array(a, (size_t)jc, sizeof(mirror_constraints), 16);
    if (!cons) return 0;
    for (int j = 0; j < jc; j++) {
        corr[j] = pm_quat_mul(pm_quat_conjugate(mirror_quat(rest[map[j]].rotation, axis)), rest[j].rotation);
        gather_constraints(&cons[j], sk, map, axis, j);
        symmetric &= satisfies(corr[j], &cons[j], PM_MIRROR_LOOSE);
    }
    if (symmetric) {
        pm_free(a, cons);
        return 1;
    }
    pm_quat *rest_corr = (pm_quat *)pm_alloc_array(a, (size_t)jc * 4, sizeof(pm_quat), 16);
    uint8_t *fixed = (uint8_t *)pm_alloc_array(a, (size_t)jc, 1, 0);
    if (!rest_corr || !fixed) {
        pm_free(a, cons);
        pm_free(a, rest_corr);
        pm_free(a, fixed);
        return 0;
    }
    pm_quat *exact_corr = rest_corr + jc, *mean = rest_corr + 2 * jc, *mirrored = rest_corr + 3 * jc;
    memcpy(rest_corr, corr, (size_t)jc * sizeof(pm_quat));
    mean_local_rotations(mean, clip);
    for (int j = 0; j < jc; j++) mirrored[j] = mirror_quat(mean[map[j]], axis);
    for (int j = 0; j < jc; j++) {
        int exact = 0;
        pm_quat alt;
        int has_alt;
        if (cons[j].count) exact_corr[j] = solve_correction(&cons[j], rest_corr[j], &exact, &alt, &has_alt);
        fixed[j] = (uint8_t)exact;
    }
    for (int j = 0; j < jc; j++) {
        if (fixed[j]) {
            corr[j] = exact_corr[j];
            continue;
        }
        const mirror_constraints *m = &cons[j];
        int p = sk->parents[j];
        pm_quat cp = p >= 0 ? corr[p] : pm_quat_identity();
        pm_quat cand[5];
        int n = 0, exact = 0, has_alt = 0;
        if (satisfies(rest_corr[j], m, PM_MIRROR_LOOSE)) cand[n++] = rest_corr[j];
        pm_quat alt;
        cand[n] = m->count ? solve_correction(m, cp, &exact, &alt, &has_alt) : cp;
        int from_parent = has_alt ? -1 : n;
        n++;
        if (has_alt) cand[n++] = alt;
        /* The nearest fixed joint down the first constrained child chain (fixed joints are
         * constrained ones). */
        int below = -1;
        for (int c = j; below < 0 && c >= 0;) {
            int next = -1;
            for (int k = c + 1; k < jc && next < 0; k++)
                if (sk->parents[k] == c && cons[k].count) next = k;
            if (next >= 0 && fixed[next]) below = next;
            c = next;
        }
        if (below >= 0) {
            has_alt = 0;
            cand[n] = m->count ? solve_correction(m, exact_corr[below], &exact, &alt, &has_alt) : exact_corr[below];
            n++;
            if (has_alt) cand[n++] = alt;
        }
        int best = 0;
        float best_cost = INFINITY;
        for (int k = 0; k < n; k++) {
            float cost = mean_mismatch(cp, cand[k], mirrored[j], mean[j]);
            if (cost < best_cost - 1e-6f) best_cost = cost, best = k;
        }
        /* A lopsided clip (one arm gesturing, the other swinging) leaves the mirrored mean pose far
         * from the source's whatever the convention, and the nearest is then chance: on two Bandai
         * walks the forearms alone took no half turn, their parents one, so the elbows twisted half
         * round. Where the mean pose does not say, the joint keeps its parent's convention. */
        if (best_cost > PM_MIRROR_UNTOLD && from_parent >= 0) best = from_parent;
        corr[j] = cand[best];
    }
    pm_free(a, cons);
    pm_free(a, rest_corr);
    pm_free(a, fixed);
    return 1;
}

pm_result pm_clip_mirror(pm_clip *out, const pm_clip *src, const int32_t *map_in, int axis, pm_error *error) {
    return pm_clip_mirror_used(out, NULL, NULL, src, map_in, axis, error);
}

pm_result pm_clip_mirror_used(pm_clip *out, int32_t *out_map, int *out_axis, const pm_clip *src, const int32_t *map_in,
                              int axis, pm_error *error) {
    if (!out || !src) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_mirror: NULL argument");
    const int aliased = out == src;
    if (axis < -1 || axis > 2)
        return pm_clip_fail_into(out, aliased,
                                 pm_fail(error, PM_ERR_INVALID_ARGUMENT, "mirror: axis %d is not -1, 0, 1 or 2", axis));
    /* The re-parenting below indexes parents directly: an unordered hierarchy would read out of
     * bounds. */
    pm_result r = pm_clip_validate(src, error);
    if (r != PM_OK) {
        pm_error_prefix(error, "mirror");
        return pm_clip_fail_into(out, aliased, r);
    }
    /* Built aside and moved into out at the end, so that out may be src. */
    pm_clip m;
    memset(&m, 0, sizeof m);
    int jc = src->skeleton.joint_count;
    const pm_allocator *a = &src->allocator;
    int32_t *map = (int32_t *)pm_alloc_array(a, (size_t)jc, sizeof(int32_t), 0);
    pm_transform *rest = (pm_transform *)pm_alloc_array(a, (size_t)jc * 3, sizeof(pm_transform), 16);
    pm_quat *corr = (pm_quat *)pm_alloc_array(a, (size_t)jc, sizeof(pm_quat), 16);
    if (!map || !rest || !corr) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "mirror: out of memory");
        goto done;
    }
    if (map_in) {
        for (int j = 0; j < jc; j++) {
            if (map_in[j] < 0 || map_in[j] >= jc) {
                r = pm_fail(error, PM_ERR_INVALID_ARGUMENT, "mirror: map entry %d (%d) is not a joint (0..%d)", j,
                            (int)map_in[j], jc - 1);
                goto done;
            }
            if (map_in[map_in[j]] != j) {
                r = pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                            "mirror: map entry %d (%d) is not a left/right swap: entry %d is %d, not %d", j,
                            (int)map_in[j], (int)map_in[j], (int)map_in[map_in[j]], j);
                goto done;
            }
            map[j] = map_in[j];
        }
    } else pm_skeleton_find_mirror_map(map, &src->skeleton);

    pm_transform *world = rest + jc, *mworld = rest + 2 * jc;
    /* src passed pm_clip_validate (ordered parents), so forward kinematics cannot fail. */
    (void)pm_local_to_model(rest, src->skeleton.parents, jc, src->skeleton.rest_rotations,
                            src->skeleton.rest_translations, NULL);
    if (axis < 0) {
        /* The plane the rest pose is symmetric about separates paired joints the most. */
        float spread[3] = {0, 0, 0};
        for (int j = 0; j < jc; j++) {
            if (map[j] == j) continue;
            pm_vec3 d = pm_vec3_sub(rest[j].translation, rest[map[j]].translation);
            spread[0] += fabsf(d.x);
            spread[1] += fabsf(d.y);
            spread[2] += fabsf(d.z);
        }
        axis = spread[1] > spread[0] ? 1 : 0;
        if (spread[2] > spread[axis]) axis = 2;
    }
    if (!mirror_corrections(corr, src, map, axis, rest, a)) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "mirror: out of memory");
        goto done;
    }

    if ((r = pm_clip_copy(&m, src, NULL, error)) != PM_OK) goto done;
    for (int f = 0; f < src->frame_count; f++) {
        size_t base = (size_t)f * jc;
        (void)pm_local_to_model(world, src->skeleton.parents, jc, src->rotations + base, src->translations + base, NULL);
        for (int j = 0; j < jc; j++) {
            const pm_transform *w = &world[map[j]];
            mworld[j].rotation = pm_quat_normalize(pm_quat_mul(mirror_quat(w->rotation, axis), corr[j]));
            mworld[j].translation = mirror_vec(w->translation, axis);
        }
        for (int j = 0; j < jc; j++) {
            int p = src->skeleton.parents[j];
            if (p < 0) {
                m.rotations[base + j] = mworld[j].rotation;
                m.translations[base + j] = mworld[j].translation;
            } else {
                pm_quat inv = pm_quat_conjugate(mworld[p].rotation);
                m.rotations[base + j] = pm_quat_normalize(pm_quat_mul(inv, mworld[j].rotation));
                m.translations[base + j] = pm_quat_rotate(inv, pm_vec3_sub(mworld[j].translation, mworld[p].translation));
            }
        }
    }
    if (out_map) memcpy(out_map, map, (size_t)jc * sizeof(int32_t));
    if (out_axis) *out_axis = axis;
done:
    pm_free(a, map);
    pm_free(a, rest);
    pm_free(a, corr);
    if (r != PM_OK) {
        pm_clip_destroy(&m);
        return pm_clip_fail_into(out, aliased, r);
    }
    pm_clip_move_into(out, &m, aliased);
    return PM_OK;
}
