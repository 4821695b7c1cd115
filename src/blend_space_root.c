/* Blend-space root motion: the joints that carry a sample's root motion are blended as motion on
 * the ground, relative to where each sample's current gait cycle began, and accumulated over the
 * blend's cycles - not as positions and headings in the world. Averaging world placements works
 * for one cycle of samples aligned at its start, but over several cycles samples that turn
 * differently drift apart (a curving walk and a straight one, after a few strides, face
 * different ways and the average of their hips stands still and spins); blended ground motion
 * curves at the mean turn rate instead, as a blend of the two gaits should.
 *
 * For each carrier (a joint that moves under still ancestors: the hips, or the hips under a
 * static dummy root) and each sample, a pose splits into its ground frame G (the heading about
 * the vertical and the position on the ground) and the rest H = G^-1 T (height, tilt, sway). The
 * samples' H blend like any joint; their ground motions since their cycle's start blend as a
 * planar motion (mean turn, mean displacement in the start frame), composed onto the blend's
 * ground frame at the start of its cycle c: the mean of the samples' starting frames, moved on by
 * the blended motion of every earlier cycle. */
#include <math.h>

#include "blend_space_internal.h"
#include "core.h"

static float wrap_angle(float a) { return a - 2.0f * PM_PI * floorf((a + PM_PI) / (2.0f * PM_PI)); }

static pm_blend_ground ground_of(pm_quat q, pm_vec3 t) {
    pm_blend_ground g = {2.0f * atan2f(q.y, q.w), t.x, t.z};
    return g;
}

static pm_transform ground_transform(pm_blend_ground g) {
    pm_transform t = {pm_quat_from_yaw(g.yaw), {g.x, 0.0f, g.z}};
    return t;
}

/* a^-1 b, in a's frame. */
static pm_blend_ground ground_relative(pm_blend_ground a, pm_blend_ground b) {
    pm_vec3 d = pm_quat_rotate(pm_quat_from_yaw(-a.yaw), pm_vec3_make(b.x - a.x, 0.0f, b.z - a.z));
    pm_blend_ground r = {wrap_angle(b.yaw - a.yaw), d.x, d.z};
    return r;
}

/* a then r (r in a's frame). */
static pm_blend_ground ground_compose(pm_blend_ground a, pm_blend_ground r) {
    pm_vec3 d = pm_quat_rotate(pm_quat_from_yaw(a.yaw), pm_vec3_make(r.x, 0.0f, r.z));
    pm_blend_ground g = {a.yaw + r.yaw, a.x + d.x, a.z + d.z};
    return g;
}

static pm_blend_ground key_ground(const pm_animation *an, int key, int joint) {
    const pm_soa_transform *k = an->keys + (size_t)key * (size_t)an->soa_count;
    return ground_of(pm_pose_rotation(k, joint), pm_pose_translation(k, joint));
}

static int still_joint(const pm_animation *an, int j) {
    const pm_soa_transform *first = an->keys;
    pm_quat q0 = pm_pose_rotation(first, j);
    pm_vec3 t0 = pm_pose_translation(first, j);
    for (int k = 1; k < an->frame_count; k++) {
        const pm_soa_transform *key = an->keys + (size_t)k * (size_t)an->soa_count;
        pm_quat q = pm_pose_rotation(key, j);
        pm_vec3 t = pm_pose_translation(key, j);
        if (memcmp(&q, &q0, sizeof q) || memcmp(&t, &t0, sizeof t)) return 0;
    }
    return 1;
}

pm_result pm_blend_space_root_build(pm_blend_space *s, const pm_skeleton *skeleton, pm_error *error) {
    const pm_allocator *a = &s->allocator;
    s->carrier_count = 0;
    if (s->sync == PM_BLEND_SYNC_NONE) return PM_OK;
    const int jc = s->joint_count;
    /* Carriers: joints that move in some sample while every ancestor is still in every sample, in
     * a frame whose vertical is +Y (still ancestors turned about the vertical at most: a dummy
     * root) - the ground is then the joint's own xz plane. */
    for (int j = 0; j < jc && s->carrier_count < PM_BLEND_SPACE_MAX_CARRIERS; j++) {
        int moves = 0, upright = 1;
        for (int i = 0; i < s->sample_count && !moves; i++) moves = !still_joint(&s->animations[i], j);
        if (!moves) continue;
        for (int p = skeleton->parents[j]; p >= 0 && upright; p = skeleton->parents[p])
            for (int i = 0; i < s->sample_count && upright; i++) {
                const pm_animation *an = &s->animations[i];
                pm_quat q = pm_pose_rotation(an->keys, p);
                upright = still_joint(an, p) && fabsf(q.x) < 1e-6f && fabsf(q.z) < 1e-6f;
            }
        if (upright) s->carriers[s->carrier_count++] = j;
    }
    if (s->carrier_count == 0) return PM_OK;
    /* Per sample, carrier and cycle: the ground frame where the cycle starts and its motion up to
     * where the next one starts (the end key after the last). A one-shot moves in its one cycle. */
    for (int i = 0; i < s->sample_count; i++) {
        pm_blend_cycles *cy = &s->cycles[i];
        const pm_animation *an = &s->animations[i];
        size_t n = (size_t)s->carrier_count * (size_t)cy->count;
        cy->start_ground = (pm_blend_ground *)pm_alloc_array(a, n, sizeof(pm_blend_ground), 0);
        cy->cycle_move = (pm_blend_ground *)pm_alloc_array(a, n, sizeof(pm_blend_ground), 0);
        if (!cy->start_ground || !cy->cycle_move) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
        int last = an->looping ? an->frame_count : an->frame_count - 1; /* the end key, or the last frame */
        for (int c = 0; c < s->carrier_count; c++)
            for (int k = 0; k < cy->count; k++) {
                int from = k ? (int)lrintf(cy->starts[k] / an->frame_time) : 0;
                int to = k + 1 < cy->count ? (int)lrintf(cy->starts[k + 1] / an->frame_time) : last;
                pm_blend_ground g0 = key_ground(an, from, s->carriers[c]), g1 = key_ground(an, to, s->carriers[c]);
                cy->start_ground[(size_t)c * cy->count + k] = g0;
                cy->cycle_move[(size_t)c * cy->count + k] = ground_relative(g0, g1);
            }
    }
    return PM_OK;
}

void pm_blend_space_root_split(const pm_blend_space *s, int i, const pm_blend_place *place, pm_soa_transform *pose,
                               pm_blend_ground *rel) {
    const pm_blend_cycles *cy = &s->cycles[i];
    for (int c = 0; c < s->carrier_count; c++) {
        int j = s->carriers[c];
        pm_quat q = pm_pose_rotation(pose, j);
        pm_vec3 t = pm_pose_translation(pose, j);
        pm_blend_ground g = ground_of(q, t);
        /* A one-shot past its first cycle stands at its end: no motion within later cycles. */
        const pm_blend_ground *start = &cy->start_ground[(size_t)c * cy->count + place->cycle];
        pm_blend_ground origin = s->animations[i].looping || place->blend_cycle == 0 ? *start : g;
        rel[c] = ground_relative(origin, g);
        pm_transform h = pm_transform_mul(pm_transform_inverse(ground_transform(g)), (pm_transform){q, t});
        pm_pose_set_joint(pose, j, h.rotation, h.translation);
    }
}

/* The samples' cycle motion for the blend's cycle c, blended. */
static pm_blend_ground blended_cycle_move(const pm_blend_space *s, const pm_blend_space_weights *w, int carrier, double c) {
    pm_blend_ground m = {0.0f, 0.0f, 0.0f};
    for (int i = 0; i < w->count; i++) {
        const pm_blend_cycles *cy = &s->cycles[w->samples[i]];
        if (!s->animations[w->samples[i]].looping && c > 0.0) continue; /* a one-shot has stopped */
        int k = (int)fmod(c, (double)cy->count);
        pm_blend_ground d = cy->cycle_move[(size_t)carrier * cy->count + k];
        m.yaw += w->weights[i] * d.yaw, m.x += w->weights[i] * d.x, m.z += w->weights[i] * d.z;
    }
    return m;
}

void pm_blend_space_root_join(const pm_blend_space *s, const pm_blend_space_weights *w, double blend_cycle,
                              const pm_blend_ground (*rel)[PM_BLEND_SPACE_MAX_CARRIERS], pm_soa_transform *out) {
    for (int c = 0; c < s->carrier_count; c++) {
        /* Where the blend's cycle 0 starts: the samples' starting frames averaged (headings taken
         * relative to the first sample's, so that they average across +-180 degrees). */
        const pm_blend_cycles *c0 = &s->cycles[w->samples[0]];
        pm_blend_ground ref = c0->start_ground[(size_t)c * c0->count], at = {0.0f, 0.0f, 0.0f};
        for (int i = 0; i < w->count; i++) {
            const pm_blend_cycles *cy = &s->cycles[w->samples[i]];
            pm_blend_ground g = cy->start_ground[(size_t)c * cy->count];
            at.yaw += w->weights[i] * wrap_angle(g.yaw - ref.yaw), at.x += w->weights[i] * g.x, at.z += w->weights[i] * g.z;
        }
        at.yaw += ref.yaw;
        for (double k = 0.0; k < blend_cycle; k += 1.0) at = ground_compose(at, blended_cycle_move(s, w, c, k));
        pm_blend_ground m = {0.0f, 0.0f, 0.0f};
        for (int i = 0; i < w->count; i++)
            m.yaw += w->weights[i] * rel[i][c].yaw, m.x += w->weights[i] * rel[i][c].x, m.z += w->weights[i] * rel[i][c].z;
        at = ground_compose(at, m);
        int j = s->carriers[c];
        pm_transform h = {pm_pose_rotation(out, j), pm_pose_translation(out, j)};
        pm_transform t = pm_transform_mul(ground_transform(at), h);
        pm_pose_set_joint(out, j, pm_quat_normalize(t.rotation), t.translation);
    }
}
