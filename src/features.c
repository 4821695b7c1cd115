/* Feature extraction: per-frame rows of a clip under a schema, in the root space of each frame. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "clip_internal.h"
#include "core.h"
#include "posematch/features.h"
#include "schema_layout.h"

#define ROLE_NAME(name, field) name,
#define ROLE_JOINT(name, field) r.field,

int pm_bone_role(const char *bone) {
    static const char *const roles[] = {PM_BONE_ROLE_TABLE(ROLE_NAME)};
    for (int i = 0; i < (int)(sizeof roles / sizeof roles[0]); i++)
        if (bone && !strcmp(bone, roles[i])) return i;
    return -1;
}

int pm_features_resolve_bone(const pm_skeleton *s, const char *bone) {
    if (!s || !bone || !bone[0]) return -1;
    if (bone[0] != '@') return pm_skeleton_find_joint(s, bone);
    pm_skeleton_roles r;
    pm_skeleton_find_roles(&r, s);
    const int joints[] = {PM_BONE_ROLE_TABLE(ROLE_JOINT)}; /* indexed by role, as pm_bone_role's names */
    int role = pm_bone_role(bone);
    return role < 0 ? -1 : joints[role];
}

/* Per-joint data the schema reads, per frame, in world space. */
typedef struct bone_track {
    int joint;
    pm_vec3 *pos;
    pm_quat *rot;
    pm_vec3 *vel;
    float *phase; /* radians, frame-wise */
    int has_phase;
} bone_track;

typedef struct extractor {
    const pm_clip *clip;
    int n;
    float dt;
    int loop;
    pm_root_track root;
    pm_vec3 *root_vel;
    pm_transform *cycle_pow; /* C^k for k in [-kmax, kmax], at index k + kmax */
    int kmax;
    float past, future; /* the schema's time window (pm_schema_time_window) */
    int bone_count;
    bone_track bones[PM_MAX_CHANNELS];
    int channel_bone[PM_MAX_CHANNELS];
    const float *curve[PM_MAX_CHANNELS]; /* Curve channels: the clip curve's values */
} extractor;

/* Where a time falls: two frames, a blend factor and how many loop cycles each is shifted. */
typedef struct tsample {
    int f0, f1, k0, k1;
    float a;
} tsample;

static tsample time_at(const extractor *x, double t) {
    tsample s;
    double fx = t / x->dt;
    if (!x->loop) {
        double last = (double)(x->n - 1);
        if (!(fx > 0.0)) fx = 0.0;
        if (fx > last) fx = last;
        s.f0 = (int)floor(fx);
        if (s.f0 > x->n - 1) s.f0 = x->n - 1;
        s.f1 = PM_MIN(s.f0 + 1, x->n - 1);
        s.a = (float)(fx - s.f0);
        s.k0 = s.k1 = 0;
        return s;
    }
    double cycles = floor(fx / x->n);
    double local = fx - cycles * x->n;
    int k = (int)cycles;
    s.f0 = (int)floor(local);
    if (s.f0 >= x->n) s.f0 = x->n - 1;
    s.a = (float)(local - s.f0);
    s.f1 = s.f0 + 1;
    s.k0 = s.k1 = k;
    if (s.f1 >= x->n) {
        s.f1 = 0;
        s.k1 = k + 1;
    }
    if (s.k0 < -x->kmax) s.k0 = -x->kmax;
    if (s.k0 > x->kmax) s.k0 = x->kmax;
    if (s.k1 < -x->kmax) s.k1 = -x->kmax;
    if (s.k1 > x->kmax) s.k1 = x->kmax;
    return s;
}

static const pm_transform *cycle(const extractor *x, int k) { return &x->cycle_pow[k + x->kmax]; }

static pm_transform root_at(const extractor *x, double t) {
    tsample s = time_at(x, t);
    pm_transform a = pm_transform_mul(*cycle(x, s.k0), x->root.frames[s.f0]);
    if (s.a == 0.0f) return a;
    pm_transform b = pm_transform_mul(*cycle(x, s.k1), x->root.frames[s.f1]);
    pm_transform r;
    r.translation = pm_vec3_lerp(a.translation, b.translation, s.a);
    r.rotation = pm_quat_slerp(a.rotation, b.rotation, s.a);
    return r;
}

static pm_vec3 vec_at(const extractor *x, const pm_vec3 *v, double t, int is_point) {
    tsample s = time_at(x, t);
    const pm_transform *c0 = cycle(x, s.k0), *c1 = cycle(x, s.k1);
    pm_vec3 a = is_point ? pm_transform_point(*c0, v[s.f0]) : pm_quat_rotate(c0->rotation, v[s.f0]);
    if (s.a == 0.0f) return a;
    pm_vec3 b = is_point ? pm_transform_point(*c1, v[s.f1]) : pm_quat_rotate(c1->rotation, v[s.f1]);
    return pm_vec3_lerp(a, b, s.a);
}

static pm_quat rot_at(const extractor *x, const pm_quat *q, double t) {
    tsample s = time_at(x, t);
    pm_quat a = pm_quat_mul(cycle(x, s.k0)->rotation, q[s.f0]);
    if (s.a == 0.0f) return a;
    pm_quat b = pm_quat_mul(cycle(x, s.k1)->rotation, q[s.f1]);
    return pm_quat_slerp(a, b, s.a);
}

static float scalar_at(const extractor *x, const float *v, double t) {
    tsample s = time_at(x, t);
    /* On a frame its value, as the other readers: (v1 - v0) * 0 is NaN when the difference of two
     * finite values overflows. */
    if (s.a == 0.0f) return v[s.f0];
    return v[s.f0] + (v[s.f1] - v[s.f0]) * s.a;
}

/* Central differences; neighbours past the ends wrap through the loop cycle or clamp. */
static void differentiate(const extractor *x, const pm_vec3 *p, pm_vec3 *out) {
    int n = x->n;
    for (int f = 0; f < n; f++) {
        pm_vec3 prev, next;
        float span = 2.0f * x->dt;
        if (f > 0) prev = p[f - 1];
        else if (x->loop && n > 1) prev = pm_transform_point(*cycle(x, -1), p[n - 1]);
        else {
            prev = p[f];
            span = x->dt;
        }
        if (f < n - 1) next = p[f + 1];
        else if (x->loop && n > 1) next = pm_transform_point(*cycle(x, 1), p[0]);
        else {
            next = p[f];
            span -= x->dt;
        }
        out[f] = span > 0.0f ? pm_vec3_scale(pm_vec3_sub(next, prev), 1.0f / span) : pm_vec3_zero();
    }
}

/* Gait phase from the bone's height: a contact is a touchdown, the frame the (lightly smoothed)
 * height drops below a low threshold after having risen above a higher one since the last
 * touchdown; the phase runs 0 -> 2 pi between touchdowns. The hysteresis counts a stance once
 * even when its height has two dips (heel, then toe), which a search for local minima would take
 * for two steps. Fewer than two touchdowns: no phase. */
static void compute_phase(extractor *x, bone_track *b, float *scratch) {
    int n = x->n;
    /* A loop is read over two cycles: its touchdowns repeat, and one cut at the seam is seen. */
    int len = x->loop ? 2 * n : n;
    float *h = scratch;
    int *events = (int *)(scratch + 2 * len);
    for (int f = 0; f < len; f++) h[f] = b->pos[f % n].y;
    float range = 0.0f;
    float gap = ceilf(0.25f / x->dt); /* (clamped as a float: it may not fit an int) */
    int ne = pm_height_touchdowns(events, h, len, gap < (float)len ? (int)gap : len, scratch + len, &range);
    b->has_phase = ne >= 2 && range > 1e-4f;
    if (!b->has_phase) {
        for (int f = 0; f < n; f++) b->phase[f] = 0.0f;
        return;
    }
    int k = 0;
    for (int f = 0; f < n; f++) {
        while (k + 2 < ne && f >= events[k + 1]) k++;
        float period = (float)(events[k + 1] - events[k]);
        float ph = ((float)(f - events[k])) / period;
        ph -= floorf(ph);
        b->phase[f] = 2.0f * PM_PI * ph;
    }
}

static void extractor_free(extractor *x) {
    const pm_allocator *a = &x->clip->allocator;
    pm_root_track_destroy(&x->root);
    pm_free(a, x->root_vel);
    pm_free(a, x->cycle_pow);
    for (int i = 0; i < x->bone_count; i++) {
        pm_free(a, x->bones[i].pos);
        pm_free(a, x->bones[i].rot);
        pm_free(a, x->bones[i].vel);
        pm_free(a, x->bones[i].phase);
    }
}

static int needs_bone(pm_feature_kind k) {
    return k == PM_FEATURE_POSITION || k == PM_FEATURE_VELOCITY || k == PM_FEATURE_HEADING || k == PM_FEATURE_PHASE;
}

static pm_result extractor_init(extractor *x, const pm_clip *clip, const pm_schema *schema, const pm_root_def *root_def,
                                pm_error *error) {
    memset(x, 0, sizeof *x);
    x->clip = clip;
    x->n = clip->frame_count;
    x->dt = clip->frame_time;
    x->loop = clip->looping && clip->frame_count > 1;
    const pm_allocator *a = &clip->allocator;
    const char *cname = clip->name ? clip->name : "clip";
    int jc = clip->skeleton.joint_count;
    pm_result r = pm_root_track_extract(&x->root, clip, root_def, a, error);
    if (r != PM_OK) return r;
    /* Loop cycle: where frame 0 would be after one period, continuing the last frame's step. */
    if ((r = pm_schema_time_window(&x->past, &x->future, schema, error)) != PM_OK) return r;
    double period = (double)x->n * x->dt;
    x->kmax = x->loop ? (int)ceil(PM_MAX(x->past, x->future) / period) + 2 : 1;
    x->cycle_pow = (pm_transform *)pm_alloc_array(a, (size_t)(2 * x->kmax + 1), sizeof(pm_transform), 16);
    x->root_vel = (pm_vec3 *)pm_alloc_array(a, (size_t)x->n, sizeof(pm_vec3), 16);
    if (!x->cycle_pow || !x->root_vel) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", cname);
    pm_transform c = pm_transform_identity();
    if (x->loop) c = pm_loop_cycle(x->root.frames[0], x->root.frames[x->n - 2], x->root.frames[x->n - 1]);
    pm_transform ci = pm_transform_inverse(c);
    x->cycle_pow[x->kmax] = pm_transform_identity();
    for (int k = 1; k <= x->kmax; k++) {
        x->cycle_pow[x->kmax + k] = pm_transform_mul(c, x->cycle_pow[x->kmax + k - 1]);
        x->cycle_pow[x->kmax - k] = pm_transform_mul(ci, x->cycle_pow[x->kmax - k + 1]);
    }
    pm_vec3 *tmp = (pm_vec3 *)pm_alloc_array(a, (size_t)x->n, sizeof(pm_vec3), 16);
    if (!tmp) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", cname);
    for (int f = 0; f < x->n; f++) tmp[f] = x->root.frames[f].translation;
    differentiate(x, tmp, x->root_vel);
    pm_free(a, tmp);

    /* Bones: one track per distinct joint any channel reads. */
    int need_phase = 0;
    for (int i = 0; i < schema->channel_count; i++) {
        const pm_channel_def *ch = &schema->channels[i];
        x->channel_bone[i] = -1;
        char label[96];
        pm_channel_display_name(label, sizeof label, ch);
        if (ch->role != 0)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "schema channel %d (%s) reads role %d; single clips only provide role 0 (multi-character "
                           "assets supply the others)",
                           i, label, ch->role);
        if (ch->kind == PM_FEATURE_CURVE) {
            const pm_curve *curve = pm_clip_find_curve(clip, ch->curve);
            if (!curve)
                return pm_fail(error, PM_ERR_NOT_FOUND,
                               "schema channel %d (%s) reads curve '%s', which clip '%s' does not have", i, label, ch->curve,
                               cname);
            x->curve[i] = curve->values;
        }
        if (!needs_bone(ch->kind)) continue;
        int j = pm_features_resolve_bone(&clip->skeleton, ch->bone);
        if (j < 0)
            return pm_fail(error, PM_ERR_NOT_FOUND, "schema channel %d (%s): no joint '%s' in the skeleton of clip '%s'%s", i,
                           label, ch->bone, cname,
                           ch->bone[0] == '@' ? " (roles are found from joint names: name the joint instead)" : "");
        int slot = -1;
        for (int b = 0; b < x->bone_count; b++)
            if (x->bones[b].joint == j) slot = b;
        if (slot < 0) {
            slot = x->bone_count++;
            x->bones[slot].joint = j;
        }
        x->channel_bone[i] = slot;
        if (ch->kind == PM_FEATURE_PHASE) need_phase = 1;
    }
    if (x->bone_count == 0) return PM_OK;
    pm_transform *world = (pm_transform *)pm_alloc_array(a, (size_t)jc, sizeof(pm_transform), 16);
    float *scratch = need_phase ? (float *)pm_alloc_array(a, (size_t)x->n * 6, sizeof(float), 16) : NULL;
    int *chain = (int *)pm_alloc_array(a, (size_t)jc, sizeof(int), 16);
    if (!world || (need_phase && !scratch) || !chain) goto out_of_memory;
    for (int b = 0; b < x->bone_count; b++) {
        bone_track *t = &x->bones[b];
        t->pos = (pm_vec3 *)pm_alloc_array(a, (size_t)x->n, sizeof(pm_vec3), 16);
        t->rot = (pm_quat *)pm_alloc_array(a, (size_t)x->n, sizeof(pm_quat), 16);
        t->vel = (pm_vec3 *)pm_alloc_array(a, (size_t)x->n, sizeof(pm_vec3), 16);
        t->phase = (float *)pm_alloc_array(a, (size_t)x->n, sizeof(float), 16);
        if (!t->pos || !t->rot || !t->vel || !t->phase) goto out_of_memory;
    }
    /* Checks the clip once; then only the bones' chains are computed, frame by frame. */
    if ((r = pm_clip_frame_world(world, clip, 0, error)) != PM_OK) goto done;
    int wanted[PM_MAX_CHANNELS];
    for (int b = 0; b < x->bone_count; b++) wanted[b] = x->bones[b].joint;
    int chain_count = pm_joint_ancestry(chain, clip->skeleton.parents, jc, wanted, x->bone_count);
    for (int f = 0; f < x->n; f++) {
        pm_clip_frame_world_listed(world, clip, f, chain, chain_count);
        for (int b = 0; b < x->bone_count; b++) {
            x->bones[b].pos[f] = world[x->bones[b].joint].translation;
            x->bones[b].rot[f] = world[x->bones[b].joint].rotation;
        }
    }
    for (int b = 0; b < x->bone_count; b++) {
        differentiate(x, x->bones[b].pos, x->bones[b].vel);
        if (need_phase) compute_phase(x, &x->bones[b], scratch);
    }
    goto done;
out_of_memory:
    r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", cname);
done:
    pm_free(a, world);
    pm_free(a, scratch);
    pm_free(a, chain);
    return r;
}

static float *put3(float *o, pm_vec3 v, pm_components comp) {
    if (comp == PM_COMPONENTS_XY) {
        o[0] = v.x;
        o[1] = v.z;
        return o + 2;
    }
    o[0] = v.x;
    o[1] = v.y;
    o[2] = v.z;
    return o + 3;
}

static pm_vec3 safe_dir(pm_vec3 v) {
    float len = pm_vec3_length(v);
    return len > 1e-3f ? pm_vec3_scale(v, 1.0f / len) : pm_vec3_zero();
}

static void extract_row(const extractor *x, const pm_schema *schema, int frame, float *row) {
    double t = (double)frame * x->dt;
    pm_transform inv_root = pm_transform_inverse(x->root.frames[frame]);
    float *o = row;
    for (int i = 0; i < schema->channel_count; i++) {
        const pm_channel_def *ch = &schema->channels[i];
        const bone_track *b = x->channel_bone[i] >= 0 ? &x->bones[x->channel_bone[i]] : NULL;
        double ts = t + ch->offset;
        switch (ch->kind) {
        case PM_FEATURE_TRAJECTORY:
            for (int k = 0; k < ch->sample_count; k++) {
                double tk = t + ch->samples[k].offset;
                uint32_t fl = ch->samples[k].flags;
                pm_transform r = root_at(x, tk);
                pm_vec3 vel = pm_quat_rotate(inv_root.rotation, vec_at(x, x->root_vel, tk, 0));
                pm_vec3 pos = pm_transform_point(inv_root, r.translation);
                pm_vec3 face = pm_quat_rotate(inv_root.rotation, pm_quat_rotate(r.rotation, pm_vec3_make(0, 0, 1)));
                if (fl & PM_TRAJ_VELOCITY) o = put3(o, vel, PM_COMPONENTS_XYZ);
                if (fl & PM_TRAJ_POSITION) o = put3(o, pos, PM_COMPONENTS_XYZ);
                if (fl & PM_TRAJ_VELOCITY_DIRECTION) o = put3(o, safe_dir(vel), PM_COMPONENTS_XYZ);
                if (fl & PM_TRAJ_FACING_DIRECTION) o = put3(o, face, PM_COMPONENTS_XYZ);
                if (fl & PM_TRAJ_VELOCITY_XY) o = put3(o, vel, PM_COMPONENTS_XY);
                if (fl & PM_TRAJ_POSITION_XY) o = put3(o, pos, PM_COMPONENTS_XY);
                if (fl & PM_TRAJ_VELOCITY_DIRECTION_XY) o = put3(o, safe_dir(pm_vec3_make(vel.x, 0, vel.z)), PM_COMPONENTS_XY);
                if (fl & PM_TRAJ_FACING_DIRECTION_XY) o = put3(o, safe_dir(pm_vec3_make(face.x, 0, face.z)), PM_COMPONENTS_XY);
            }
            break;
        case PM_FEATURE_POSITION:
            o = put3(o, pm_transform_point(inv_root, vec_at(x, b->pos, ts, 1)), ch->components);
            break;
        case PM_FEATURE_VELOCITY:
            o = put3(o, pm_quat_rotate(inv_root.rotation, vec_at(x, b->vel, ts, 0)), ch->components);
            break;
        case PM_FEATURE_HEADING: {
            pm_vec3 axis = pm_vec3_make(ch->axis == 0, ch->axis == 1, ch->axis == 2);
            pm_vec3 h = pm_quat_rotate(inv_root.rotation, pm_quat_rotate(rot_at(x, b->rot, ts), axis));
            if (ch->components == PM_COMPONENTS_XY) h = safe_dir(pm_vec3_make(h.x, 0, h.z));
            o = put3(o, h, ch->components);
            break;
        }
        case PM_FEATURE_PHASE: {
            /* Interpolate on the circle: frame phases are wrapped angles. */
            tsample s = time_at(x, ts);
            float c0 = pm_cosf(b->phase[s.f0]), s0 = pm_sinf(b->phase[s.f0]);
            float c1 = pm_cosf(b->phase[s.f1]), s1 = pm_sinf(b->phase[s.f1]);
            pm_vec3 v = safe_dir(pm_vec3_make(c0 + (c1 - c0) * s.a, s0 + (s1 - s0) * s.a, 0.0f));
            if (!b->has_phase) v = pm_vec3_zero();
            o[0] = v.x;
            o[1] = v.y;
            o += 2;
            break;
        }
        case PM_FEATURE_CURVE:
            *o++ = scalar_at(x, x->curve[i], ts);
            break;
        case PM_FEATURE_PADDING:
            for (int k = 0; k < ch->size; k++) *o++ = 0.0f;
            break;
        case PM_FEATURE_GROUP: break;
        }
    }
}

pm_result pm_features_extract(float *out, size_t stride, uint8_t *out_bt, const pm_clip *clip, const pm_schema *schema,
                              const pm_root_def *root_def, pm_error *error) {
    if (!out || !clip || !schema) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_features_extract: NULL argument");
    pm_result r = pm_schema_validate(schema, error);
    if (r != PM_OK) return r;
    int card = pm_schema_cardinality(schema);
    if (stride < (size_t)card)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_features_extract: stride %zu < cardinality %d", stride, card);
    if (stride > PM_MAX_FEATURE_STRIDE)
        return pm_fail(error, PM_ERR_LIMIT, "pm_features_extract: stride %zu is above %d floats a row", stride,
                       PM_MAX_FEATURE_STRIDE);
    if ((r = pm_clip_validate(clip, error)) != PM_OK) return r;
    /* Rows are addressed as frame * stride: that product, in bytes, must fit. */
    if (stride && (size_t)clip->frame_count > SIZE_MAX / sizeof(float) / stride)
        return pm_fail(error, PM_ERR_LIMIT, "pm_features_extract: %d frames x stride %zu floats exceeds the address space",
                       clip->frame_count, stride);
    extractor *x = (extractor *)pm_alloc_zero(&clip->allocator, sizeof(extractor), 16);
    if (!x) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "features: out of memory");
    r = extractor_init(x, clip, schema, root_def, error);
    if (r == PM_OK) {
        double duration = (double)(x->n - 1) * x->dt;
        for (int f = 0; f < x->n; f++) {
            float *row = out + (size_t)f * stride;
            extract_row(x, schema, f, row);
            if (out_bt) out_bt[f] = !x->loop && (double)f * x->dt + x->future > duration + 1e-4;
        }
        /* Only the rows' own values: what lies between rows (stride > cardinality) is the caller's. */
        for (int f = 0; f < x->n && r == PM_OK; f++)
            for (int d = 0; d < card && r == PM_OK; d++)
                if (!isfinite(out[(size_t)f * stride + (size_t)d]))
                    r = pm_fail(error, PM_ERR_NUMERIC, "%s: feature %d of frame %d is not finite",
                                clip->name ? clip->name : "clip", d, f);
    }
    extractor_free(x);
    pm_free(&clip->allocator, x);
    return r;
}
