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
 * Each cycle is cut into slices at the same fractions of its length for every sample (so that a
 * one-shot, one cycle from its first frame to its last, is a chain of short moves too). The
 * samples' ground motions since the start of their current slice blend as a planar motion (mean
 * turn, mean displacement in the slice's start frame), composed onto the blend's ground frame at
 * the start of that slice of its cycle c: the samples' starting frames averaged, moved on by the
 * blended motion of every earlier cycle and of the earlier slices of c (a cycle's blended motion
 * being its blended slices' composed). The result is put back at the samples' carriers. */
#include <math.h>

#include "blend_space_internal.h"
#include "core.h"

static const pm_blend_ground ground_identity = {0.0f, 0.0f, 0.0f};

/* Root-motion slices per cycle: enough that none of the space's cycles has slices longer than
 * this (about a step: a turn's arc is followed as closely as by a loop's strides - 0.35 s gave
 * the same speed to the real turns of test_blend_mocap.c - and a step's sway is not worth
 * cutting finer), and at most MAX_SLICES: each costs a blended move per evaluation through the
 * current cycle, and per cycle of the period composed before it. */
#define SLICE_SECONDS 0.5
#define MAX_SLICES 32

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
    pm_blend_ground g = {pm_atan2f(v.x, v.z), m.translation.x, m.translation.z};
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
    /* Slices: every cycle of every sample is cut at the same fractions j / slices of its length,
     * the boundaries all samples of a blend reach at once, and root motion is blended per slice
     * and composed, as it is per cycle. A one-shot is one cycle from its first frame to its last;
     * blended as one displacement from its start, two whose paths part (a turn left and a turn
     * right) cancel sideways and the blend stops while its legs walk on. Slices of at most
     * SLICE_SECONDS make it a chain of short moves instead. The count is the space's, not a
     * sample's or a blend's: a grid that changed with the weights would move the root as a
     * sample's weight came or went. */
    double longest = 0.0;
    for (int i = 0; i < s->sample_count; i++) {
        const pm_blend_cycles *cy = &s->cycles[i];
        double d = s->animations[i].duration;
        for (int k = 0; k < cy->count; k++) {
            double from = cy->count > 1 ? cy->starts[k] : 0.0, to = k + 1 < cy->count ? cy->starts[k + 1] : d;
            longest = to - from > longest ? to - from : longest;
        }
    }
    double want = ceil(longest / SLICE_SECONDS);
    s->slices = want < 1.0 ? 1 : want > MAX_SLICES ? MAX_SLICES : (int)want;
    int S = s->slices;
    pm_soa_transform *pose = (pm_soa_transform *)pm_alloc_array(a, (size_t)s->soa_count, sizeof(pm_soa_transform), 16);
    if (!pose) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
    /* Per sample: the joint its root motion is taken off and put back at - the topmost joint
     * from the skeleton's root down to the reference joint that moves in it (the hips under a
     * still dummy root, or a root that carries the motion itself), so that the large
     * translations of root motion cancel within one joint and never meet a blended rotation of
     * another. Then per cycle and slice: the ground frame where the slice starts and its motion
     * up to where the next one starts. A cycle's ends are keys (its start, the next cycle's
     * start, the end key after the last, a one-shot's last frame); the points between are
     * sampled at the very times the job plays there, interpolating between keys, so that a
     * sample's motion since its slice's start is none at the boundary and the blend runs on
     * through it without a jump. */
    pm_result r = PM_OK;
    for (int i = 0; i < s->sample_count && r == PM_OK; i++) {
        pm_blend_cycles *cy = &s->cycles[i];
        const pm_animation *an = &s->animations[i];
        cy->carrier = s->root_ref;
        for (int j = s->root_ref; j >= 0; j = s->skeleton.parents[j])
            if (moves(an, j)) cy->carrier = j;
        cy->carrier_depth = depth_of(s, cy->carrier);
        size_t n = (size_t)cy->count * (size_t)S;
        cy->slice_start = (pm_blend_ground *)pm_alloc_array(a, n, sizeof(pm_blend_ground), 0);
        cy->slice_move = (pm_blend_ground *)pm_alloc_array(a, n, sizeof(pm_blend_ground), 0);
        if (!cy->slice_start || !cy->slice_move) {
            r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
            break;
        }
        int last = an->looping ? an->frame_count : an->frame_count - 1;
        for (int k = 0; k < cy->count && r == PM_OK; k++) {
            int from = k ? (int)lrintf(cy->starts[k] / an->frame_time) : 0;
            int to = k + 1 < cy->count ? (int)lrintf(cy->starts[k + 1] / an->frame_time) : last;
            double start = cy->count > 1 ? cy->starts[k] : 0.0;
            double length = (k + 1 < cy->count ? (double)cy->starts[k + 1] : (double)an->duration) - start;
            pm_blend_ground g0 = ground_of_pose(s, an->keys + (size_t)from * (size_t)an->soa_count), g1 = g0;
            for (int j = 0; j < S; j++, g0 = g1) {
                if (j + 1 == S) {
                    g1 = ground_of_pose(s, an->keys + (size_t)to * (size_t)an->soa_count);
                } else {
                    /* As pm_blend_space_sample_place times fraction f of the cycle. */
                    double f = (double)(j + 1) / (double)S;
                    pm_sampling_job sj = pm_default_sampling_job();
                    sj.animation = an;
                    sj.time = an->looping ? (float)(start + f * length) : (float)f * an->duration;
                    sj.output = pose;
                    sj.output_count = s->soa_count;
                    if ((r = pm_sampling_job_run(&sj, error)) != PM_OK) break;
                    g1 = ground_of_pose(s, pose);
                }
                cy->slice_start[(size_t)k * S + j] = g0;
                cy->slice_move[(size_t)k * S + j] = ground_relative(g0, g1);
            }
        }
    }
    pm_free(a, pose);
    if (r != PM_OK) return r;
    /* Start headings unwrapped across the space: from the canonical sample outwards through the
     * cells, each sample within half a turn of the one it is reached from, so that the samples of
     * a cell blend their headings the short way round and a sample has one heading in every cell
     * it belongs to (continuous across cell edges). */
    uint8_t *known = (uint8_t *)pm_alloc_array(a, (size_t)s->sample_count, 1, 0);
    if (!known) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
    for (int i = 0; i < s->sample_count; i++) s->cycles[i].start_heading = s->cycles[i].slice_start[0].yaw;
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
                               int slice, pm_soa_transform *pose, pm_blend_ground *rel) {
    const pm_blend_cycles *cy = &s->cycles[i];
    pm_blend_ground g = ground_of_pose(s, pose);
    /* A one-shot past the blend's first cycle stands at its end: no motion within later cycles. */
    pm_blend_ground origin =
        s->animations[i].looping || blend_cycle <= 0.0 ? cy->slice_start[(size_t)place->cycle * s->slices + slice] : g;
    *rel = ground_relative(origin, g);
    move_joint(s, pose, cy->carrier, pm_transform_inverse(ground_transform(g)));
}

/* sin and cos of an angle: by their series within an eighth of a turn, where the terms kept
 * leave less than float rounding, else by libm. A slice turns little, and the slices of a cycle
 * are composed at every evaluation: a libm call for each was most of the cost of slicing. */
static void slice_sincos(float a, float *sn, float *cs) {
    if (!(fabsf(a) <= 0.8f)) {
        *sn = pm_sinf(a), *cs = pm_cosf(a);
        return;
    }
    float a2 = a * a;
    *sn = a * (1.0f + a2 * (-1.0f / 6 + a2 * (1.0f / 120 + a2 * (-1.0f / 5040 + a2 * (1.0f / 362880)))));
    *cs = 1.0f + a2 * (-0.5f + a2 * (1.0f / 24 + a2 * (-1.0f / 720 + a2 * (1.0f / 40320 + a2 * (-1.0f / 3628800)))));
}

/* The blended motion over slices 0 .. n-1 of the blend's cycle c composed: over a whole cycle
 * (n = slices), where the next starts, so that the blend runs on from the end of one cycle into
 * the next without a jump. As ground_compose, with the heading so far kept as its cosine and
 * sine, turned on by each slice's turn (headings still add up unwrapped). */
static pm_blend_ground blended_slices(const pm_blend_space *s, const pm_blend_space_weights *w, unsigned long long c,
                                      int n) {
    /* Each sample's slice moves over its cycle c mod count (none for a one-shot past the first
     * cycle: it has stopped), found once rather than per slice. */
    const pm_blend_ground *moves_of[PM_BLEND_SPACE_MAX_WEIGHTS];
    float weight[PM_BLEND_SPACE_MAX_WEIGHTS];
    int count = 0;
    for (int i = 0; i < w->count; i++) {
        const pm_blend_cycles *cy = &s->cycles[w->samples[i]];
        if (!s->animations[w->samples[i]].looping && c > 0) continue;
        size_t k = cy->count > 1 ? (size_t)(c % (unsigned long long)cy->count) : 0;
        moves_of[count] = cy->slice_move + k * (size_t)s->slices;
        weight[count++] = w->weights[i];
    }
    pm_blend_ground at = ground_identity;
    float cs = 1.0f, sn = 0.0f;
    for (int j = 0; j < n; j++) {
        pm_blend_ground m = ground_identity;
        for (int i = 0; i < count; i++) ground_add(&m, weight[i], moves_of[i][j]);
        at.x += cs * m.x + sn * m.z;
        at.z += cs * m.z - sn * m.x;
        at.yaw += m.yaw;
        if (j + 1 < n) {
            float ms, mc;
            slice_sincos(m.yaw, &ms, &mc);
            float c2 = cs * mc - sn * ms;
            sn = sn * mc + cs * ms, cs = c2;
        }
    }
    return at;
}

static pm_blend_ground blended_cycle_move(const pm_blend_space *s, const pm_blend_space_weights *w, unsigned long long c) {
    return blended_slices(s, w, c, s->slices);
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

void pm_blend_space_root_join(const pm_blend_space *s, const pm_blend_space_weights *w, double blend_cycle, int slice,
                              const pm_blend_ground *rel, pm_soa_transform *out) {
    /* Where the blend's cycle 0 starts: the samples' starting frames averaged, with their
     * headings unwrapped across the space - linear in the weights, so the start turns steadily
     * as they change, the short way round between the samples of a cell. */
    pm_blend_ground at = ground_identity, m = ground_identity;
    for (int i = 0; i < w->count; i++) {
        const pm_blend_cycles *cy = &s->cycles[w->samples[i]];
        pm_blend_ground start = {cy->start_heading, cy->slice_start[0].x, cy->slice_start[0].z};
        ground_add(&at, w->weights[i], start);
        ground_add(&m, w->weights[i], rel[i]);
    }
    at = ground_compose(at, motion_before(s, w, blend_cycle));
    /* Then the completed slices of the current cycle. */
    if (slice > 0) {
        double c = blend_cycle > 4611686018427387904.0 ? 4611686018427387904.0 : blend_cycle > 0.0 ? blend_cycle : 0.0;
        at = ground_compose(at, blended_slices(s, w, (unsigned long long)c, slice));
    }
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
