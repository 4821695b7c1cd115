/* Blend-space evaluation: the runtime job, baking to clips (database assets) and parameter grids. */
#include <math.h>
#include <stdio.h>

#include "blend_space_internal.h"
#include "core.h"
#include "pose_kernels.h"

pm_blend_space_job pm_default_blend_space_job(void) {
    pm_blend_space_job j;
    memset(&j, 0, sizeof j);
    j.rotation = PM_ROTATION_NLERP;
    return j;
}

pm_result pm_blend_space_job_validate(const pm_blend_space_job *job, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space job: NULL job");
    const pm_blend_space *s = job->space;
    if (!s) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space job: no space");
    if (!job->params) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space job: params is NULL");
    for (int d = 0; d < s->dimensions; d++)
        if (!isfinite(job->params[d]))
            return pm_fail(error, PM_ERR_NUMERIC, "blend space job: parameter %s is not finite", s->axis_names[d]);
    if (!isfinite(job->phase)) return pm_fail(error, PM_ERR_NUMERIC, "blend space job: phase is not finite");
    if (job->rotation != PM_ROTATION_NLERP && job->rotation != PM_ROTATION_SLERP)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space job: unknown rotation blend %d", (int)job->rotation);
    if (!job->output || job->output_count < s->soa_count)
        return pm_fail(error, PM_ERR_MISMATCH, "blend space job: output holds %d groups, the space's %d joints need %d",
                       job->output ? job->output_count : 0, s->joint_count, s->soa_count);
    /* Scratch for as many poses as one query can blend: a 2D space keeps needing three, whatever
     * PM_BLEND_SPACE_MAX_WEIGHTS has grown to. */
    int needed = pm_blend_space_scratch_count(s);
    if (!job->scratch || job->scratch_count < needed)
        return pm_fail(error, PM_ERR_MISMATCH, "blend space job: scratch holds %d groups, %d are needed",
                       job->scratch ? job->scratch_count : 0, needed);
    if (!pm_pose_aligned(job->output) || !pm_pose_aligned(job->scratch))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space job: output or scratch%s", PM_ALIGN_HINT);
    /* The samples' poses are blended from the scratch into the output: sharing memory, the blend
     * would read poses it had partly overwritten (or refuse, depending on the parameters). */
    if (pm_bytes_overlap(job->output, (size_t)s->soa_count * sizeof(pm_soa_transform), job->scratch,
                         (size_t)needed * sizeof(pm_soa_transform)))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space job: output overlaps the scratch (each needs its own memory)");
    return PM_OK;
}

/* Pose of sample `i` at a blended phase. The end of a looping sample's loop is its end key,
 * frame 0 moved on by the cycle's displacement, not frame 0 itself: a baked blend of looping and
 * one-shot samples runs to phase 1, and there the looping one's root must carry on rather than
 * snap back to where it started. */
static pm_result sample_pose(const pm_blend_space *s, int i, const pm_blend_place *place, pm_rotation_blend rot,
                             pm_soa_transform *out, pm_error *error) {
    const pm_animation *a = &s->animations[i];
    if (place->at_end) {
        memcpy(out, a->keys + (size_t)a->frame_count * (size_t)a->soa_count, (size_t)a->soa_count * sizeof(pm_soa_transform));
    } else {
        pm_sampling_job sj = pm_default_sampling_job();
        sj.animation = a;
        sj.time = place->time;
        sj.rotation = rot;
        sj.output = out;
        sj.output_count = s->soa_count;
        pm_result r = pm_sampling_job_run(&sj, error);
        if (r != PM_OK) return r;
    }
    return PM_OK;
}

/* The evaluation proper, on validated arguments. */
static pm_result evaluate(const pm_blend_space *s, const pm_blend_space_weights *w, float phase, pm_rotation_blend rot,
                          pm_soa_transform *scratch, pm_soa_transform *output, pm_error *error) {
    float duration = pm_blend_space_duration(s, w);
    pm_blend_place places[PM_BLEND_SPACE_MAX_WEIGHTS];
    for (int i = 0; i < w->count; i++) pm_blend_space_sample_place(&places[i], s, w->samples[i], phase, duration);
    /* A single sample (a query on it) within its first loop is its clip, untouched by any
     * blending arithmetic; past it, its root motion is carried on like a blend's. */
    if (w->count == 1 && (places[0].loops == 0 || s->root_ref < 0))
        return sample_pose(s, w->samples[0], &places[0], rot, output, error);
    double cycle = pm_blend_space_blend_cycle(s, phase);
    /* A blend of one-shots alone stands at its start before phase 0 and at its end after phase 1,
     * where its samples are clamped: its slice follows them (the first, the last), not the
     * phase's fraction within the wrap. */
    int one_shots = 1;
    for (int i = 0; i < w->count; i++) one_shots &= !s->animations[w->samples[i]].looping;
    int slice = pm_blend_space_blend_slice(s, one_shots ? (phase < 0.0f ? 0.0f : phase > 1.0f ? 1.0f : phase) : phase);
    pm_blend_input inputs[PM_BLEND_SPACE_MAX_WEIGHTS];
    pm_blend_ground rel[PM_BLEND_SPACE_MAX_WEIGHTS];
    for (int i = 0; i < w->count; i++) {
        pm_soa_transform *pose = scratch + (size_t)i * s->soa_count;
        pm_result r = sample_pose(s, w->samples[i], &places[i], rot, pose, error);
        if (r != PM_OK) return r;
        if (s->root_ref >= 0) pm_blend_space_root_split(s, w->samples[i], &places[i], cycle, slice, pose, &rel[i]);
        inputs[i].pose = pose;
        inputs[i].weight = w->weights[i];
    }
    pm_blend_job bj = pm_default_blend_job();
    bj.inputs = inputs;
    bj.input_count = w->count;
    bj.joint_count = s->joint_count;
    bj.output = output;
    pm_result r = pm_blend_job_run(&bj, error);
    if (r == PM_OK && s->root_ref >= 0) pm_blend_space_root_join(s, w, cycle, slice, rel, output);
    return r;
}

pm_result pm_blend_space_job_run(const pm_blend_space_job *job, pm_error *error) {
    pm_result r = pm_blend_space_job_validate(job, error);
    if (r != PM_OK) return r;
    pm_blend_space_weights w;
    if ((r = pm_blend_space_weights_at(&w, job->space, job->params, error)) != PM_OK) return r;
    if (job->out_weights) *job->out_weights = w;
    return evaluate(job->space, &w, job->phase, job->rotation, job->scratch, job->output, error);
}

/* ---- baking ---- */

int pm_blend_space_bake_cycles(const pm_blend_space *s, const pm_blend_space_weights *w, int *out_looping) {
    if (out_looping) *out_looping = 0;
    if (!pm_blend_space_weights_usable(s, w)) return 0;
    int looping = pm_blend_space_loops(s, w), most = 1; /* a blend that does not close bakes as a one-shot */
    for (int i = 0; i < w->count; i++) most = PM_MAX(most, pm_blend_space_sample_cycles(s, w->samples[i]));
    /* The blend's cycles to bake: one when it does not loop (its one-shot samples play once); for
     * a loop, its period, until every sample is back at its first cycle - when that is at most
     * PM_BLEND_SPACE_MAX_PERIOD cycles, or just the cycles of its sample of most cycles (a sample
     * baked alone, say). Otherwise as many cycles as that sample has, as a one-shot. */
    int cycles = 1;
    if (looping && most > 1) {
        int period = pm_blend_space_period(s, w);
        if (period > 0 && (period <= PM_BLEND_SPACE_MAX_PERIOD || period == most)) {
            cycles = period;
        } else {
            cycles = most;
            looping = 0;
        }
    }
    if (out_looping) *out_looping = looping;
    return cycles;
}

pm_result pm_blend_space_bake(pm_clip *out, const pm_blend_space *s, const float *params, float fps, pm_error *error) {
    if (!out || !s || !params) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_blend_space_bake: NULL argument");
    memset(out, 0, sizeof *out);
    if (fps != 0.0f && !(fps >= 0.001f && fps <= 10000.0f))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space '%s': bake rate %s fps is outside 0.001..10000 (0 = default)",
                       s->name, pm_float_text(fps).text);
    pm_blend_space_weights w;
    pm_result r = pm_blend_space_weights_at(&w, s, params, error);
    if (r != PM_OK) return r;
    if (fps == 0.0f) {
        /* The highest rate among the contributing samples: independent of the order samples were
         * listed in, loses no sample's detail, and on a sample its own rate (its frames as they are). */
        float frame_time = s->animations[w.samples[0]].frame_time;
        for (int i = 1; i < w.count; i++) frame_time = PM_MIN(frame_time, s->animations[w.samples[i]].frame_time);
        fps = 1.0f / frame_time;
        if (!(fps >= 0.001f && fps <= 10000.0f))
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "blend space '%s': the samples' highest rate, %g fps, is outside 0.001..10000: give a bake rate",
                           s->name, (double)fps);
    }
    double cycle0 = pm_blend_space_duration(s, &w);
    int looping = 0, cycles = pm_blend_space_bake_cycles(s, &w, &looping);
    double duration = cycle0;
    for (int c = 1; c < cycles; c++) duration += (double)pm_blend_space_cycle_duration(s, &w, c);
    /* A looping blend ends one frame before it starts again; a one-shot includes both ends. */
    double frames_d = looping ? floor(duration * fps + 0.5) : floor(duration * fps + 0.5) + 1.0;
    if (frames_d < 1.0) frames_d = 1.0;
    if (!(frames_d <= PM_MAX_FRAMES)) /* (a NaN duration fails here too) */
        return pm_fail(error, PM_ERR_LIMIT, "blend space '%s': %.0f frames at %g fps exceeds the limit of %d", s->name,
                       frames_d, (double)fps, PM_MAX_FRAMES);
    int frames = (int)frames_d;
    double steps = looping ? frames : frames - 1;
    float frame_time = steps > 0.0 && duration > 0.0 ? (float)(duration / steps) : 1.0f / fps;

    size_t groups = (size_t)s->soa_count;
    pm_soa_transform *poses = (pm_soa_transform *)pm_alloc_array(&s->allocator, groups * (PM_BLEND_SPACE_MAX_WEIGHTS + 1),
                                                                 sizeof(pm_soa_transform), 16);
    if (!poses) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space '%s': out of memory for baking", s->name);
    if ((r = pm_clip_create(out, &s->skeleton, frames, frame_time, &s->allocator, error)) != PM_OK) goto done;
    out->looping = looping && frames > 1;
    out->unit_scale = s->unit_scale;
    out->source_up = s->source_up;
    /* "<space>@<p0>[,<p1>[,<p2>]]", however long the space's name: a name cut short could make
     * two points' clips alike. */
    char where[64];
    if (s->dimensions == 1) snprintf(where, sizeof where, "@%g", (double)params[0]);
    else if (s->dimensions == 2) snprintf(where, sizeof where, "@%g,%g", (double)params[0], (double)params[1]);
    else snprintf(where, sizeof where, "@%g,%g,%g", (double)params[0], (double)params[1], (double)params[2]);
    size_t stem = strlen(s->name), tail = strlen(where);
    char *name = (char *)pm_alloc(&s->allocator, stem + tail + 1, 1);
    if (!name) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space '%s': out of memory for a clip name", s->name);
        goto done;
    }
    memcpy(name, s->name, stem);
    memcpy(name + stem, where, tail + 1);
    r = pm_clip_set_name(out, name, error);
    pm_free(&s->allocator, name);
    if (r != PM_OK) goto done;
    size_t jc = (size_t)s->joint_count;
    /* Frames are evenly spaced in time; cycles of different lengths take phase at different rates. */
    int c = 0;
    double c_start = 0.0, c_length = cycle0;
    for (int f = 0; f < frames; f++) {
        float phase = steps > 0.0 ? (float)((double)f / steps) : 0.0f;
        if (cycles > 1 && steps > 0.0) { /* (one frame of several cycles: the start, phase 0) */
            double t = (double)f * (duration / steps);
            while (c + 1 < cycles && t >= c_start + c_length) {
                c_start += c_length;
                c_length = (double)pm_blend_space_cycle_duration(s, &w, ++c);
            }
            phase = (float)(c + (t - c_start) / c_length);
        }
        if ((r = evaluate(s, &w, phase, PM_ROTATION_NLERP, poses + groups, poses, error)) != PM_OK) goto done;
        if ((r = pm_pose_to_aos(out->rotations + f * jc, out->translations + f * jc, (int)jc, poses, error)) != PM_OK)
            goto done;
    }
done:
    if (r != PM_OK) pm_clip_destroy(out);
    pm_free(&s->allocator, poses);
    return r;
}

/* ---- grids ---- */

pm_blend_grid_def pm_default_blend_grid_def(void) {
    pm_blend_grid_def d;
    for (int i = 0; i < PM_BLEND_SPACE_MAX_DIMENSIONS; i++) d.counts[i] = 5;
    d.include_outside = 0;
    return d;
}

pm_result pm_blend_space_grid(float *out_params, int capacity, int *out_count, const pm_blend_space *s,
                              const pm_blend_grid_def *def, pm_error *error) {
    if (!out_count || !s || !def) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_blend_space_grid: NULL argument");
    *out_count = 0;
    /* Two different mistakes: one message each, naming the argument. */
    if (capacity < 0) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space grid: capacity %d is negative", capacity);
    if (capacity > 0 && !out_params)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "blend space grid: out_params is NULL with capacity %d (NULL only with capacity 0, to count)",
                       capacity);
    long long total = 1;
    for (int d = 0; d < s->dimensions; d++) {
        if (def->counts[d] < 1 || def->counts[d] > 100000)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space grid: %d points on axis %s is outside 1..100000",
                           def->counts[d], s->axis_names[d]);
        total *= def->counts[d];
    }
    if (def->include_outside != 0 && def->include_outside != 1)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space grid: include_outside %d is neither 0 nor 1",
                       def->include_outside);
    if (total > 10000000LL)
        return pm_fail(error, PM_ERR_LIMIT, "blend space grid: %lld points is too many", total);
    int n = 0;
    /* Axis 0 varies fastest: point k has index k % counts[0] on axis 0, and so on. */
    for (long long k = 0; k < total; k++) {
        float p[PM_BLEND_SPACE_MAX_DIMENSIONS];
        long long rest = k;
        for (int d = 0; d < s->dimensions; d++) {
            int c = def->counts[d];
            int idx = (int)(rest % c);
            rest /= c;
            double u = c > 1 ? (double)idx / (double)(c - 1) : 0.5;
            p[d] = (float)(s->axis_min[d] + u * (s->axis_max[d] - s->axis_min[d]));
        }
        if (!def->include_outside) {
            pm_blend_space_weights w;
            pm_result r = pm_blend_space_weights_at(&w, s, p, error);
            if (r != PM_OK) return r;
            if (w.outside) continue;
        }
        if (n < capacity)
            for (int d = 0; d < s->dimensions; d++) out_params[(size_t)n * s->dimensions + d] = p[d];
        n++;
    }
    *out_count = n;
    if (n > capacity && out_params)
        return pm_fail(error, PM_ERR_LIMIT, "blend space grid: %d points do not fit in room for %d", n, capacity);
    return PM_OK;
}
