/* Blend-space time synchronisation: where in its clip each sample plays at a blended phase.
 *
 * PM_BLEND_SYNC_FEET restarts a looping sample at its left foot's touchdown and cuts it into gait
 * cycles at that foot's further touchdowns; the blend's phase then counts gait cycles, and in the
 * blend's cycle c a sample of k cycles plays its cycle c mod k, from one touchdown to the next. A
 * walk trimmed to two strides blended with a run trimmed to one touches down with both at every
 * integer phase, where a phase normalised over whole clips would have the walk take two left
 * steps while the run took one. Every cycle of a sample ends where its next one starts (the last
 * where the loop starts again), so each sample plays continuously however long the blend runs. */
#include <math.h>

#include "blend_space_internal.h"
#include "clip_internal.h"
#include "core.h"

/* Cycle boundaries are only trusted when the foot really steps (its lift is at least this part of
 * the leg's length: a shuffling idle's noise is not a gait) and the cycles are alike in length
 * (within these factors of their mean): otherwise the clip stays one cycle, as a blend of it with
 * one-cycle samples always was. */
#define MIN_STEP_LIFT 0.05f
#define MIN_CYCLE_RATIO 0.6
#define MAX_CYCLE_RATIO 1.6

/* Frames (in the clip restarted at events[0]) where its further gait cycles start: the
 * touchdowns of the doubled track that fall inside one loop from the first, away from both ends.
 * Written over events[1..]; returns the cycle count (1 when the boundaries are not trusted). */
static int gait_cycles(int *events, int ne, int n, int min_gap) {
    int first = events[0], k = 1;
    for (int e = 1; e < ne; e++) {
        int b = events[e] - first;
        if (b >= min_gap && b <= n - min_gap) events[k++] = b;
    }
    events[0] = 0;
    if (k < 2) return 1;
    double mean = (double)n / k;
    for (int j = 0; j < k; j++) {
        double len = (double)((j + 1 < k ? events[j + 1] : n) - events[j]);
        if (len < MIN_CYCLE_RATIO * mean || len > MAX_CYCLE_RATIO * mean) return 1;
    }
    return k;
}

/* For PM_BLEND_SYNC_FEET: a looping clip restarted at its left foot's first touchdown (frames
 * rotated; those moved past the end carry on by the cycle's displacement, so root motion stays
 * continuous), and its gait cycles. Touchdowns are found on the foot's height over two cycles of
 * the loop read from its highest frame: from mid-swing, so that a loop trimmed mid-stance has
 * neither a touchdown made up at its first frame nor one missing at its seam. A clip without a
 * left foot, a touchdown or a loop is left as it is, one cycle. */
pm_result pm_blend_space_sync_clip(pm_clip *clip, pm_blend_cycles *cycles, const pm_allocator *a, pm_error *error) {
    cycles->count = 1;
    cycles->starts = NULL;
    int n = clip->frame_count, jc = clip->skeleton.joint_count;
    if (!clip->looping || n < 4) return PM_OK;
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, &clip->skeleton);
    if (roles.left_foot < 0) return PM_OK;
    float *h = (float *)pm_alloc_array(a, (size_t)n * 5, sizeof(float), 16);
    int *events = (int *)pm_alloc_array(a, (size_t)n * 2, sizeof(int), 16);
    pm_transform *w = (pm_transform *)pm_alloc_array(a, (size_t)jc, sizeof(pm_transform), 16);
    pm_result r = PM_OK;
    if (!h || !events || !w) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
        goto done;
    }
    float leg = 0.0f, *raw = h + 4 * (size_t)n;
    int top = 0;
    for (int f = 0; f < n; f++) {
        if ((r = pm_clip_frame_world(w, clip, f, error)) != PM_OK) goto done;
        raw[f] = w[roles.left_foot].translation.y;
        if (raw[f] > raw[top]) top = f;
        if (f == 0 && roles.hips >= 0)
            leg = pm_vec3_length(pm_vec3_sub(w[roles.hips].translation, w[roles.left_foot].translation));
    }
    for (int f = 0; f < 2 * n; f++) h[f] = raw[(top + f) % n];
    float range = 0.0f;
    float gap = ceilf(0.25f / clip->frame_time); /* (clamped as a float: it may not fit an int) */
    int min_gap = gap < (float)n ? (int)gap : n;
    int ne = pm_height_touchdowns(events, h, 2 * n, min_gap, h + 2 * n, &range);
    if (ne < 1 || !(range > 1e-4f)) goto done;
    int shift = (events[0] + top) % n;
    int k = leg > 0.0f && range >= MIN_STEP_LIFT * leg ? gait_cycles(events, ne, n, min_gap) : 1;
    if (k > 1) {
        cycles->starts = (float *)pm_alloc_array(a, (size_t)k, sizeof(float), 0);
        if (!cycles->starts) {
            r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
            goto done;
        }
        for (int j = 0; j < k; j++) cycles->starts[j] = (float)events[j] * clip->frame_time;
        cycles->count = k;
    }
    if (shift == 0) goto done;
    /* Rotated in place through a copy of the first `shift` frames' data. */
    pm_clip head;
    if ((r = pm_clip_trim(&head, clip, 0, shift, error)) != PM_OK) goto done;
    /* A joint that travels carries the moved frames through one cycle of its motion: moved on by
     * the cycle's displacement and, when it carries the root motion, turned by the cycle's turn
     * about the vertical (a loop that curves), as frame 0 becomes frame n. */
    for (int j = 0; j < jc; j++) {
        pm_vec3 p0 = clip->translations[j], end = pm_clip_loop_end_translation(clip, j);
        if (end.x == p0.x && end.y == p0.y && end.z == p0.z) continue; /* swings in place */
        pm_quat turn = pm_clip_loop_carries(clip, j) ? pm_clip_loop_turn(clip, j) : pm_quat_identity();
        for (int f = 0; f < shift; f++) {
            size_t at = (size_t)f * jc + (size_t)j;
            head.translations[at] = pm_vec3_add(end, pm_quat_rotate(turn, pm_vec3_sub(head.translations[at], p0)));
            head.rotations[at] = pm_quat_normalize(pm_quat_mul(turn, head.rotations[at]));
        }
    }
    size_t keep = (size_t)(n - shift) * (size_t)jc, moved = (size_t)shift * (size_t)jc;
    memmove(clip->rotations, clip->rotations + moved, keep * sizeof(pm_quat));
    memmove(clip->translations, clip->translations + moved, keep * sizeof(pm_vec3));
    memcpy(clip->rotations + keep, head.rotations, moved * sizeof(pm_quat));
    memcpy(clip->translations + keep, head.translations, moved * sizeof(pm_vec3));
    for (int i = 0; i < clip->curve_count; i++) {
        float *v = clip->curves[i].values;
        memmove(v, v + shift, (size_t)(n - shift) * sizeof(float));
        memcpy(v + (n - shift), head.curves[i].values, (size_t)shift * sizeof(float));
    }
    pm_clip_destroy(&head);
done:
    pm_free(a, h);
    pm_free(a, events);
    pm_free(a, w);
    return r;
}

/* ---- phase to time ---- */

/* Sample i's cycle j (0..count-1): start and length in seconds. */
static void sample_cycle(const pm_blend_space *s, int i, int j, double *start, double *length) {
    const pm_blend_cycles *cy = &s->cycles[i];
    double duration = s->animations[i].duration;
    if (cy->count < 2) {
        *start = 0.0;
        *length = duration;
        return;
    }
    *start = cy->starts[j];
    *length = (j + 1 < cy->count ? (double)cy->starts[j + 1] : duration) - *start;
}

/* The phase within the wrap: a whole wrap is its end, not its start again. */
static double wrapped_phase(const pm_blend_space *s, double p) {
    double wrap = s->phase_wrap;
    if (!(wrap > 0.0)) return p;
    double r = fmod(p, wrap);
    if (r < 0.0) r += wrap;
    return r == 0.0 && p > 0.0 ? wrap : r;
}

/* Phase c + f within the wrap: fraction f of the blend's cycle c; a whole phase c > 0 is the end
 * of cycle c - 1 (f = 1), not the start of cycle c. */
static double split_phase(const pm_blend_space *s, float phase, double *f) {
    double p = wrapped_phase(s, phase), c = floor(p);
    *f = p - c;
    if (*f == 0.0 && p > 0.0) {
        c -= 1.0;
        *f = 1.0;
    }
    return c;
}

double pm_blend_space_blend_cycle(const pm_blend_space *s, float phase) {
    double f;
    return s->sync == PM_BLEND_SYNC_NONE ? 0.0 : split_phase(s, phase, &f);
}

int pm_blend_space_blend_slice(const pm_blend_space *s, float phase) {
    if (s->sync == PM_BLEND_SYNC_NONE || s->slices < 2) return 0;
    double f;
    split_phase(s, phase, &f);
    /* From the blend's fraction, not from each sample's time: every sample of the blend is in the
     * same slice, whose boundaries they all reach at once. */
    int j = (int)floor(f * (double)s->slices);
    return j < 0 ? 0 : j >= s->slices ? s->slices - 1 : j;
}

void pm_blend_space_sample_place(pm_blend_place *out, const pm_blend_space *s, int i, float phase, float blended_duration) {
    const pm_animation *a = &s->animations[i];
    const pm_blend_cycles *cy = &s->cycles[i];
    out->loops = 0;
    out->cycle = 0;
    float time;
    if (s->sync == PM_BLEND_SYNC_NONE || !a->looping) {
        /* The same absolute time for every sample (NONE), or a one-shot, clamped beyond its end. */
        time = s->sync == PM_BLEND_SYNC_NONE ? phase * blended_duration : phase * a->duration;
        if (!(fabsf(time) <= 1e7f)) {
            /* A phase far beyond any clip (a finite phase can make an infinite time): a one-shot
             * is clamped there anyway and a loop wraps, so a time within one clip length says the
             * same and keeps the sampling finite. */
            double t = (double)phase * (s->sync == PM_BLEND_SYNC_NONE ? (double)blended_duration : (double)a->duration);
            double len = a->duration > 0.0f ? (double)a->duration : 1.0;
            time = (float)(a->looping ? fmod(t, len) : t > 0.0 ? 2.0 * len : -len);
        }
        if (!(phase > 0.0f && phase <= 1.0f)) {
            out->time = time;
            out->at_end = 0;
            return;
        }
    } else {
        /* Phases wrap after the space's phase_wrap cycles, whatever the weights (a wrap that
         * followed the blend's own period would move the root as a weight came and went). In the
         * blend's cycle c the sample plays its cycle c mod k after c div k whole loops. */
        double f, start, length, c = split_phase(s, phase, &f);
        double k = cy->count, j = fmod(c, k);
        if (j < 0.0) j += k;
        sample_cycle(s, i, (int)j, &start, &length);
        out->loops = (long long)((c - j) / k);
        out->cycle = (int)j;
        time = (float)(start + f * length);
    }
    out->time = time;
    /* Within a thousandth of a frame past the end the sampling job would wrap to key 0 (it reads
     * the end key only at the duration itself): the end key. */
    double x = (double)time / (double)a->frame_time, n = (double)a->frame_count;
    out->at_end = a->looping && x >= n && x < n + 1e-3;
}

int pm_blend_space_weights_usable(const pm_blend_space *s, const pm_blend_space_weights *w) {
    if (!s || !w || w->count < 1 || w->count > PM_BLEND_SPACE_MAX_WEIGHTS) return 0;
    double sum = 0.0;
    for (int i = 0; i < w->count; i++) {
        if (w->samples[i] < 0 || w->samples[i] >= s->sample_count) return 0;
        if (!(w->weights[i] >= 0.0f) || !isfinite(w->weights[i])) return 0;
        for (int k = 0; k < i; k++)
            if (w->samples[k] == w->samples[i]) return 0;
        sum += w->weights[i];
    }
    return fabs(sum - 1.0) <= 1e-3;
}

float pm_blend_space_cycle_duration(const pm_blend_space *s, const pm_blend_space_weights *w, int cycle) {
    if (!pm_blend_space_weights_usable(s, w)) return 0.0f;
    double d = 0.0;
    for (int i = 0; i < w->count; i++) {
        int k = s->cycles[w->samples[i]].count, j = cycle % k;
        double start, length;
        sample_cycle(s, w->samples[i], j < 0 ? j + k : j, &start, &length);
        d += (double)w->weights[i] * length;
    }
    return (float)d;
}

float pm_blend_space_duration(const pm_blend_space *s, const pm_blend_space_weights *w) {
    return pm_blend_space_cycle_duration(s, w, 0);
}

int pm_blend_space_sample_cycles(const pm_blend_space *s, int sample) {
    return s && sample >= 0 && sample < s->sample_count ? s->cycles[sample].count : 0;
}

/* Least common multiple, 0 once beyond PM_BLEND_SPACE_PERIOD_LIMIT (or when either is). */
static long long lcm_capped(long long p, long long k) {
    if (p <= 0 || k <= 0) return 0;
    long long x = p, y = k;
    while (y) {
        long long t = x % y;
        x = y;
        y = t;
    }
    p = p / x * k;
    return p > PM_BLEND_SPACE_PERIOD_LIMIT ? 0 : p;
}

void pm_blend_space_sync_wrap(pm_blend_space *s) {
    long long p = 1;
    if (s->sync != PM_BLEND_SYNC_NONE)
        for (int i = 0; i < s->sample_count; i++)
            if (s->animations[i].looping) p = lcm_capped(p, s->cycles[i].count);
    s->phase_wrap = (int)p;
}

int pm_blend_space_phase_wrap(const pm_blend_space *s) { return s ? s->phase_wrap : 0; }

long long pm_blend_space_looping_period(const pm_blend_space *s, const pm_blend_space_weights *w) {
    long long p = 1;
    for (int i = 0; i < w->count; i++)
        if (s->animations[w->samples[i]].looping) p = lcm_capped(p, s->cycles[w->samples[i]].count);
    return p;
}

int pm_blend_space_loops(const pm_blend_space *s, const pm_blend_space_weights *w) {
    if (!pm_blend_space_weights_usable(s, w)) return 0;
    double cycle0 = pm_blend_space_duration(s, w);
    for (int i = 0; i < w->count; i++) {
        const pm_animation *an = &s->animations[w->samples[i]];
        if (!an->looping) return 0;
        /* Without phase sync, samples of other lengths are mid-cycle when the blend's cycle ends:
         * it does not close. */
        if (s->sync == PM_BLEND_SYNC_NONE && fabs((double)an->duration - cycle0) > 1e-3 * cycle0) return 0;
    }
    return 1;
}

int pm_blend_space_period(const pm_blend_space *s, const pm_blend_space_weights *w) {
    if (!pm_blend_space_weights_usable(s, w)) return 0;
    if (s->sync == PM_BLEND_SYNC_NONE) return 1;
    for (int i = 0; i < w->count; i++)
        if (!s->animations[w->samples[i]].looping) return 1; /* runs from phase 0 to 1 once */
    return (int)pm_blend_space_looping_period(s, w);
}
