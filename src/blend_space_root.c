/* Blend-space root motion: every sample's root motion is blended as motion on the ground,
 * relative to where the sample's current gait cycle began, and accumulated over the blend's
 * cycles - not as placements in the world. Averaging world placements works for one cycle of
 * samples aligned at its start, but over several cycles samples that turn differently drift apart
 * (a curving walk and a straight one, a few strides on, face different ways and the average of
 * their hips stands still and spins); blended ground motion curves at the mean turn rate instead,
 * as a blend of the two gaits should.
 *
 * A sample's ground frame G is read off the model-space transform of a reference joint (the
 * hips): its heading about the vertical (the direction of one of its axes, for the whole space
 * the one most level in the canonical sample's first frame) and its position on the floor. The
 * skeleton is taken out of that frame at the joint that carries the sample's root motion (G^-1
 * applied there in model space), so what remains - height, tilt, sway - blends like any pose.
 * The samples' ground motions since their cycles' starts blend as a planar motion (mean turn,
 * mean displacement in the start frame), composed onto the blend's ground frame at the start of
 * its cycle c: the samples' starting frames averaged, moved on by the blended motion of every
 * earlier cycle. The result is put back at the samples' carriers. */
#include <math.h>

#include "blend_space_internal.h"
#include "core.h"

static const pm_blend_ground ground_identity = {0.0f, 0.0f, 0.0f};

static pm_transform ground_transform(pm_blend_ground g) {
    pm_transform t = {pm_quat_from_yaw(g.yaw), {g.x, 0.0f, g.z}};
    return t;
}

/* a^-1 b, in a's frame. */
static pm_blend_ground ground_relative(pm_blend_ground a, pm_blend_ground b) {
    pm_vec3 d = pm_quat_rotate(pm_quat_from_yaw(-a.yaw), pm_vec3_make(b.x - a.x, 0.0f, b.z - a.z));
    pm_blend_ground r = {pm_wrap_angle(b.yaw - a.yaw), d.x, d.z};
    return r;
}

/* m += weight * g. */
static void ground_add(pm_blend_ground *m, float weight, pm_blend_ground g) {
    m->yaw += weight * g.yaw, m->x += weight * g.x, m->z += weight * g.z;
}

/* a then r (r in a's frame). Headings add up unwrapped: a share of the placement (below) turns
 * with it continuously through every half turn. */
static pm_blend_ground ground_compose(pm_blend_ground a, pm_blend_ground r) {
    pm_vec3 d = pm_quat_rotate(pm_quat_from_yaw(a.yaw), pm_vec3_make(r.x, 0.0f, r.z));
    pm_blend_ground g = {a.yaw + r.yaw, a.x + d.x, a.z + d.z};
    return g;
}

static pm_vec3 unit_axis(int axis) {
    pm_vec3 v = {axis == 0 ? 1.0f : 0.0f, axis == 1 ? 1.0f : 0.0f, axis == 2 ? 1.0f : 0.0f};
    return v;
}

/* Model-space transform of joint j in a local pose (identity for j = -1). */
static pm_transform model_of(const pm_blend_space *s, const pm_soa_transform *pose, int j) {
    pm_transform m = pm_transform_identity();
    for (; j >= 0; j = s->skeleton.parents[j]) {
        pm_transform local = {pm_pose_rotation(pose, j), pm_pose_translation(pose, j)};
        m = pm_transform_mul(local, m);
    }
    return m;
}

static pm_transform reference_model(const pm_blend_space *s, const pm_soa_transform *pose) {
    return model_of(s, pose, s->root_ref);
}

static int moves(const pm_animation *an, int j) {
    const pm_soa_transform *first = an->keys;
    pm_quat q0 = pm_pose_rotation(first, j);
    pm_vec3 t0 = pm_pose_translation(first, j);
    for (int k = 1; k < an->frame_count; k++) {
        const pm_soa_transform *key = an->keys + (size_t)k * (size_t)an->soa_count;
        pm_quat q = pm_pose_rotation(key, j);
        pm_vec3 t = pm_pose_translation(key, j);
        if (memcmp(&q, &q0, sizeof q) || memcmp(&t, &t0, sizeof t)) return 1;
    }
    return 0;
}

static int depth_of(const pm_blend_space *s, int j) {
    int d = 0;
    for (; j >= 0; j = s->skeleton.parents[j]) d++;
    return d;
}

static pm_blend_ground ground_of_pose(const pm_blend_space *s, const pm_soa_transform *pose) {
    pm_transform m = reference_model(s, pose);
    pm_vec3 v = pm_quat_rotate(m.rotation, unit_axis(s->root_axis));
    pm_blend_ground g = {atan2f(v.x, v.z), m.translation.x, m.translation.z};
    return g;
}

pm_result pm_blend_space_root_build(pm_blend_space *s, pm_error *error) {
    const pm_allocator *a = &s->allocator;
    s->root_ref = -1;
    if (s->sync == PM_BLEND_SYNC_NONE) return PM_OK;
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, &s->skeleton);
    s->root_ref = roles.hips >= 0 ? roles.hips : 0;
    /* The heading axis: the reference joint's axis lying most level in the canonical sample's
     * first frame (a vertical one would give no heading). */
    pm_transform m = reference_model(s, s->animations[s->order[0]].keys);
    float level = INFINITY;
    for (int axis = 0; axis < 3; axis++) {
        float up = fabsf(pm_quat_rotate(m.rotation, unit_axis(axis)).y);
        if (up < level) level = up, s->root_axis = axis;
    }
    /* Per sample: the joint its root motion is taken off and put back at - the topmost joint
     * from the skeleton's root down to the reference joint that moves in it (the hips under a
     * still dummy root, or a root that carries the motion itself), so that the large
     * translations of root motion cancel within one joint and never meet a blended rotation of
     * another. Then per cycle: the ground frame where it starts and its motion up to where the
     * next one starts (the end key after the last; a one-shot's last frame). */
    for (int i = 0; i < s->sample_count; i++) {
        pm_blend_cycles *cy = &s->cycles[i];
        const pm_animation *an = &s->animations[i];
        cy->carrier = s->root_ref;
        for (int j = s->root_ref; j >= 0; j = s->skeleton.parents[j])
            if (moves(an, j)) cy->carrier = j;
        cy->carrier_depth = depth_of(s, cy->carrier);
        cy->start_ground = (pm_blend_ground *)pm_alloc_array(a, (size_t)cy->count, sizeof(pm_blend_ground), 0);
        cy->cycle_move = (pm_blend_ground *)pm_alloc_array(a, (size_t)cy->count, sizeof(pm_blend_ground), 0);
        if (!cy->start_ground || !cy->cycle_move) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
        int last = an->looping ? an->frame_count : an->frame_count - 1;
        for (int k = 0; k < cy->count; k++) {
            int from = k ? (int)lrintf(cy->starts[k] / an->frame_time) : 0;
            int to = k + 1 < cy->count ? (int)lrintf(cy->starts[k + 1] / an->frame_time) : last;
            pm_blend_ground g0 = ground_of_pose(s, an->keys + (size_t)from * (size_t)an->soa_count);
            pm_blend_ground g1 = ground_of_pose(s, an->keys + (size_t)to * (size_t)an->soa_count);
            cy->start_ground[k] = g0;
            cy->cycle_move[k] = ground_relative(g0, g1);
        }
    }
    /* Start headings unwrapped across the space: from the canonical sample outwards through the
     * cells, each sample within half a turn of the one it is reached from, so that the samples of
     * a cell blend their headings the short way round and a sample has one heading in every cell
     * it belongs to (continuous across cell edges). */
    uint8_t *known = (uint8_t *)pm_alloc_array(a, (size_t)s->sample_count, 1, 0);
    if (!known) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
    for (int i = 0; i < s->sample_count; i++) s->cycles[i].start_heading = s->cycles[i].start_ground[0].yaw;
    known[s->order[0]] = 1;
    int cells = pm_blend_space_cell_count(s);
    for (int changed = 1; changed;) {
        changed = 0;
        for (int c = 0; c < cells; c++) {
            int in[PM_BLEND_SPACE_MAX_WEIGHTS], count = pm_blend_space_cell(s, c, in), from = -1;
            for (int k = 0; k < count && from < 0; k++)
                if (known[in[k]]) from = in[k];
            if (from < 0) continue;
            for (int k = 0; k < count; k++) {
                if (known[in[k]]) continue;
                pm_blend_cycles *cy = &s->cycles[in[k]];
                cy->start_heading = s->cycles[from].start_heading + pm_wrap_angle(cy->start_heading - s->cycles[from].start_heading);
                known[in[k]] = 1;
                changed = 1;
            }
        }
    }
    pm_free(a, known);
    return PM_OK;
}

/* Moves joint j (and so everything below it) by `by` in model space. */
static void move_joint(const pm_blend_space *s, pm_soa_transform *pose, int j, pm_transform by) {
    pm_transform parent = model_of(s, pose, s->skeleton.parents[j]);
    pm_transform local = {pm_pose_rotation(pose, j), pm_pose_translation(pose, j)};
    pm_transform t = pm_transform_mul(pm_transform_inverse(parent), pm_transform_mul(by, pm_transform_mul(parent, local)));
    pm_pose_set_joint(pose, j, pm_quat_normalize(t.rotation), t.translation);
}

void pm_blend_space_root_split(const pm_blend_space *s, int i, const pm_blend_place *place, double blend_cycle,
                               pm_soa_transform *pose, pm_blend_ground *rel) {
    const pm_blend_cycles *cy = &s->cycles[i];
    pm_blend_ground g = ground_of_pose(s, pose);
    /* A one-shot past the blend's first cycle stands at its end: no motion within later cycles. */
    pm_blend_ground origin = s->animations[i].looping || blend_cycle <= 0.0 ? cy->start_ground[place->cycle] : g;
    *rel = ground_relative(origin, g);
    move_joint(s, pose, cy->carrier, pm_transform_inverse(ground_transform(g)));
}

/* The samples' motions over the blend's cycle c, blended. */
static pm_blend_ground blended_cycle_move(const pm_blend_space *s, const pm_blend_space_weights *w, unsigned long long c) {
    pm_blend_ground m = ground_identity;
    for (int i = 0; i < w->count; i++) {
        const pm_blend_cycles *cy = &s->cycles[w->samples[i]];
        if (!s->animations[w->samples[i]].looping && c > 0) continue; /* a one-shot has stopped */
        ground_add(&m, w->weights[i], cy->cycle_move[c % (unsigned long long)cy->count]);
    }
    return m;
}

/* The blended motion of cycles 0 .. c-1 composed. From cycle 1 on it repeats with the looping
 * samples' common period P, so it is cycle 0, then the motion of one period raised to the power
 * of the periods passed (by squaring), then what is left of the last one: O(P + log c) moves. */
static pm_blend_ground motion_before(const pm_blend_space *s, const pm_blend_space_weights *w, double c) {
    if (!(c >= 1.0)) return ground_identity;
    pm_blend_ground at = blended_cycle_move(s, w, 0);
    double rest_d = c - 1.0; /* cycles 1 .. c-1 */
    if (rest_d > 4611686018427387904.0) rest_d = 4611686018427387904.0; /* (2^62: a phase far beyond any use) */
    unsigned long long rest = (unsigned long long)rest_d, period = (unsigned long long)pm_blend_space_looping_period(s, w);
    if (period > 0 && period <= (1ull << 20) && rest >= period) {
        pm_blend_ground one = ground_identity, power = ground_identity;
        for (unsigned long long k = 0; k < period; k++) one = ground_compose(one, blended_cycle_move(s, w, 1 + k));
        for (unsigned long long n = rest / period; n; n >>= 1) {
            if (n & 1) power = ground_compose(power, one);
            one = ground_compose(one, one);
        }
        at = ground_compose(at, power);
        rest %= period;
    } else if (rest > (1ull << 20)) {
        rest = 1ull << 20; /* (no period to repeat within reach: a bounded walk rather than an endless one) */
    }
    for (unsigned long long k = 0; k < rest; k++) at = ground_compose(at, blended_cycle_move(s, w, 1 + k));
    return at;
}

/* The planar motion f of the way from none to g: what a joint above the last carrier takes. */
static pm_blend_ground ground_fraction(pm_blend_ground g, float f) {
    pm_blend_ground r = {f * g.yaw, f * g.x, f * g.z};
    return r;
}

void pm_blend_space_root_join(const pm_blend_space *s, const pm_blend_space_weights *w, double blend_cycle,
                              const pm_blend_ground *rel, pm_soa_transform *out) {
    /* Where the blend's cycle 0 starts: the samples' starting frames averaged, with their
     * headings unwrapped across the space - linear in the weights, so the start turns steadily
     * as they change, the short way round between the samples of a cell. */
    pm_blend_ground at = ground_identity, m = ground_identity;
    for (int i = 0; i < w->count; i++) {
        const pm_blend_cycles *cy = &s->cycles[w->samples[i]];
        pm_blend_ground start = {cy->start_heading, cy->start_ground[0].x, cy->start_ground[0].z};
        ground_add(&at, w->weights[i], start);
        ground_add(&m, w->weights[i], rel[i]);
    }
    at = ground_compose(at, motion_before(s, w, blend_cycle));
    pm_blend_ground placed = ground_compose(at, m);
    /* Put back at the samples' carriers, which lie on one chain above the hips: each carrier, top
     * down, takes the share of the placement that the weights of the samples carried at or above
     * it add up to, so the whole of it reaches the hips, and a root joint carries as much root
     * motion as the samples that kept it there weigh - continuous as weights come and go. */
    pm_blend_ground done = ground_identity;
    float share = 0.0f;
    for (int depth = 1, left = w->count; left > 0; depth++) {
        int carrier = -1;
        for (int i = 0; i < w->count; i++) {
            const pm_blend_cycles *cy = &s->cycles[w->samples[i]];
            if (cy->carrier_depth != depth) continue;
            carrier = cy->carrier;
            share += w->weights[i];
            left--;
        }
        if (carrier < 0) continue;
        pm_blend_ground to = left == 0 ? placed : ground_fraction(placed, share);
        pm_transform by = pm_transform_mul(ground_transform(to), pm_transform_inverse(ground_transform(done)));
        move_joint(s, out, carrier, by);
        done = to;
    }
}
