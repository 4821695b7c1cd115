/* The N-pose blend job (local-to-model is in local_to_model.c). */
#include <math.h>

#include "core.h"
#include "pose_kernels.h"

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
    if (!(sum >= 1e-30f) || !isfinite(sum)) {
        /* Weights so small that 1 / sum overflows (or so large that the sum does): only their
         * ratios matter, so they are taken relative to the largest, which makes the sum 1..64.
         * Ordinary weights skip this and keep their bits. */
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

/* Rotations: the hemisphere sign goes into the weight (one xor instead of four), and the weights
 * are taken relative to the first input's (the normalisation absorbs the scale), which saves
 * multiplying the first rotation. Translations use the true weights. */
/* Groups per chunk of the sign pre-passes below (1-2 KB of signed weights on the stack). */
#define PM_BLEND_CHUNK 64

static void blend2(pm_soa_transform *out, const pm_soa_transform *a, const pm_soa_transform *b, const float *raw,
                   float total, int groups) {
    float inv = 1.0f / total, inv0 = 1.0f / raw[0];
    const pm_f4 w0 = f4_set1(raw[0] * inv), w1 = f4_set1(raw[1] * inv), r1 = f4_set1(raw[1] * inv0);
    pm_f4 signed_w[PM_BLEND_CHUNK];
    for (int start = 0; start < groups; start += PM_BLEND_CHUNK) {
        int end = PM_MIN(groups, start + PM_BLEND_CHUNK);
        for (int g = start; g < end; g++)
            signed_w[g - start] = soa_signed_weight(r1, soa_load_rotation(b + g), soa_load_rotation(a + g));
        for (int g = start; g < end; g++) {
            soa_quat q = soa_quat_madd(soa_load_rotation(a + g), soa_load_rotation(b + g), signed_w[g - start]);
            soa_vec3 t0 = soa_load_translation(a + g), t1 = soa_load_translation(b + g), t;
            t.x = f4_madd(t1.x, w1, f4_mul(t0.x, w0));
            t.y = f4_madd(t1.y, w1, f4_mul(t0.y, w0));
            t.z = f4_madd(t1.z, w1, f4_mul(t0.z, w0));
            soa_store(out + g, soa_quat_normalize(q), t);
        }
    }
}

static void blend3(pm_soa_transform *out, const pm_soa_transform *const *p, const float *raw, float total, int groups) {
    float inv = 1.0f / total, inv0 = 1.0f / raw[0];
    const pm_f4 w0 = f4_set1(raw[0] * inv), w1 = f4_set1(raw[1] * inv), w2 = f4_set1(raw[2] * inv);
    const pm_f4 r1 = f4_set1(raw[1] * inv0), r2 = f4_set1(raw[2] * inv0);
    pm_f4 signed_w[2][PM_BLEND_CHUNK];
    for (int start = 0; start < groups; start += PM_BLEND_CHUNK) {
        int end = PM_MIN(groups, start + PM_BLEND_CHUNK);
        /* The hemisphere tests first, in their own pass: fused into the blend their dot -> sign ->
         * multiply chain held back every group (a third slower). */
        for (int g = start; g < end; g++) {
            soa_quat q0 = soa_load_rotation(p[0] + g);
            signed_w[0][g - start] = soa_signed_weight(r1, soa_load_rotation(p[1] + g), q0);
            signed_w[1][g - start] = soa_signed_weight(r2, soa_load_rotation(p[2] + g), q0);
        }
        for (int g = start; g < end; g++) {
            soa_quat q = soa_quat_madd(soa_load_rotation(p[0] + g), soa_load_rotation(p[1] + g), signed_w[0][g - start]);
            q = soa_quat_madd(q, soa_load_rotation(p[2] + g), signed_w[1][g - start]);
            soa_vec3 t0 = soa_load_translation(p[0] + g), t1 = soa_load_translation(p[1] + g);
            soa_vec3 t2 = soa_load_translation(p[2] + g), t;
            t.x = f4_madd(t2.x, w2, f4_madd(t1.x, w1, f4_mul(t0.x, w0)));
            t.y = f4_madd(t2.y, w2, f4_madd(t1.y, w1, f4_mul(t0.y, w0)));
            t.z = f4_madd(t2.z, w2, f4_madd(t1.z, w1, f4_mul(t0.z, w0)));
            soa_store(out + g, soa_quat_normalize(q), t);
        }
    }
}

static void blend_n(pm_soa_transform *out, const pm_soa_transform *const *p, const float *raw, float total, int n,
                    int groups) {
    float w[PM_BLEND_MAX_INPUTS], inv = 1.0f / total;
    for (int i = 0; i < n; i++) w[i] = raw[i] * inv;
    for (int g = 0; g < groups; g++) {
        pm_f4 w0 = f4_set1(w[0]);
        soa_quat ref = soa_load_rotation(p[0] + g);
        soa_vec3 t0 = soa_load_translation(p[0] + g);
        soa_quat q = soa_quat_scale(ref, w0);
        soa_vec3 t;
        t.x = f4_mul(t0.x, w0);
        t.y = f4_mul(t0.y, w0);
        t.z = f4_mul(t0.z, w0);
        for (int i = 1; i < n; i++) {
            pm_f4 wi = f4_set1(w[i]);
            soa_quat qi = soa_load_rotation(p[i] + g);
            q = soa_quat_madd(q, qi, soa_signed_weight(wi, qi, ref));
            soa_vec3 ti = soa_load_translation(p[i] + g);
            t.x = f4_madd(ti.x, wi, t.x);
            t.y = f4_madd(ti.y, wi, t.y);
            t.z = f4_madd(ti.z, wi, t.z);
        }
        soa_store(out + g, soa_quat_normalize(q), t);
    }
}

pm_result pm_blend_job_run(const pm_blend_job *job, pm_error *error) {
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
    if (n == 2) blend2(job->output, poses[0], poses[1], weights, total, groups);
    else if (n == 3) blend3(job->output, poses, weights, total, groups);
    else blend_n(job->output, poses, weights, total, n, groups);
    return PM_OK;
}
