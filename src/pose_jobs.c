/* The N-pose blend job (local-to-model is in local_to_model.c). */
#include <math.h>

#include "blend_internal.h"
#include "core.h"

/* ---- blend job ---- */

pm_blend_job pm_default_blend_job(void) {
    pm_blend_job j;
    memset(&j, 0, sizeof j);
    return j;
}

/* Checks the job and collects the contributing inputs with normalised weights, in one pass (the
 * job runs every frame; its bookkeeping should cost little next to the blend). */
static pm_result blend_prepare(const pm_blend_job *job, const pm_soa_transform **poses, float *weights, float *total,
                               int *count, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: NULL job");
    pm_result r = pm_check_joint_count(job->joint_count, "blend job", error);
    if (r != PM_OK) return r;
    if (!job->output) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: output is NULL");
    if (!pm_pose_aligned(job->output)) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: output%s", PM_ALIGN_HINT);
    if (!job->inputs) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: inputs is NULL (%d inputs)", job->input_count);
    if (job->input_count < 1 || job->input_count > PM_BLEND_MAX_INPUTS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: %d inputs is outside 1..%d", job->input_count,
                       PM_BLEND_MAX_INPUTS);
    float sum = 0.0f, largest = 0.0f;
    int n = 0;
    for (int i = 0; i < job->input_count; i++) {
        float w = job->inputs[i].weight;
        if (!isfinite(w)) return pm_fail(error, PM_ERR_NUMERIC, "blend job: input %d has a non-finite weight (%g)", i, (double)w);
        if (w < 0.0f) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: input %d has a negative weight (%g)", i, (double)w);
        if (w == 0.0f) continue; /* never read */
        const pm_soa_transform *pose = job->inputs[i].pose;
        if (!pose) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: input %d has weight %g but no pose", i, (double)w);
        if (!pm_pose_aligned(pose)) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: input %d%s", i, PM_ALIGN_HINT);
        if (pm_poses_overlap_apart(job->output, pose, pm_soa_count(job->joint_count)))
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "blend job: output overlaps input %d without being it (the output may be an input, not part of one)", i);
        poses[n] = pose;
        weights[n] = w;
        n++;
        sum += w;
        largest = PM_MAX(largest, w);
    }
    if (n == 0) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: every weight is zero (nothing to blend)");
    /* The heaviest input (the first of equal ones) goes first: its rotation is the hemisphere the
     * others are brought to. A reference of negligible weight half a turn from the rest would let
     * the sign of a near-zero dot decide, and two inputs holding one rotation could cancel out. */
    int heaviest = 0;
    for (int i = 1; i < n; i++)
        if (weights[i] > weights[heaviest]) heaviest = i;
    if (heaviest > 0) {
        const pm_soa_transform *tp = poses[0];
        float tw = weights[0];
        poses[0] = poses[heaviest];
        weights[0] = weights[heaviest];
        poses[heaviest] = tp;
        weights[heaviest] = tw;
    }
    if (!(sum >= 1e-30f && sum <= 1e30f)) {
        /* Weights so small that 1 / sum overflows, or so large that the sum does or that 1 / sum
         * (and 1 / the heaviest, for rotations) is subnormal, which flush-to-zero makes 0 (a blend
         * of 2e38 and 1e38 came out as the identity): only their ratios matter, so they are taken
         * relative to the largest, which makes the sum 1..64. Ordinary weights skip this and keep
         * their bits. */
        sum = 0.0f;
        for (int i = 0; i < n; i++) {
            weights[i] /= largest;
            sum += weights[i];
        }
    }
    /* Weights stay raw here; each kernel scales them (normalised for translations, relative to
     * the first input's for rotations) with two independent divisions. */
    *total = sum;
    *count = n;
    return PM_OK;
}

pm_result pm_blend_job_validate(const pm_blend_job *job, pm_error *error) {
    const pm_soa_transform *poses[PM_BLEND_MAX_INPUTS];
    float weights[PM_BLEND_MAX_INPUTS], total = 0.0f;
    int n = 0;
    return blend_prepare(job, poses, weights, &total, &n, error);
}

pm_result pm_blend_job_run(const pm_blend_job *job, pm_error *error) {
    return pm_blend_job_run_kernel(job, PM_KERNEL_AUTO, error);
}

pm_result pm_blend_job_run_kernel(const pm_blend_job *job, int kernel, pm_error *error) {
    const pm_soa_transform *poses[PM_BLEND_MAX_INPUTS];
    float weights[PM_BLEND_MAX_INPUTS], total = 0.0f;
    int n = 0;
    pm_result r = blend_prepare(job, poses, weights, &total, &n, error);
    if (r != PM_OK) return r;
    int groups = pm_soa_count(job->joint_count);
    if (n == 1) {
        /* One contributor: its pose unchanged, so a blend-space sample reproduces its clip exactly. */
        if (job->output != poses[0]) memmove(job->output, poses[0], (size_t)groups * sizeof(pm_soa_transform));
        return PM_OK;
    }
    /* The first input is the heaviest, so the rotations' weights relative to it are at most 1. */
    const pm_pose_kernels *k = pm_pose_kernels_pick(kernel);
    if (n == 2) k->blend2(job->output, poses[0], poses[1], weights, total, groups);
    else if (n == 3) k->blend3(job->output, poses, weights, total, groups);
    else k->blend_n(job->output, poses, weights, total, n, groups);
    return PM_OK;
}
