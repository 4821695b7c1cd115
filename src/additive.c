/* Additive poses (SPEC BL5): extraction and application, in local space, right-multiplied. */
#include <math.h>
#include <stdio.h>

#include "clip_internal.h"
#include "core.h"
#include "blend_internal.h"

/* ---- extract ---- */

pm_additive_extract_job pm_default_additive_extract_job(void) {
    pm_additive_extract_job j;
    memset(&j, 0, sizeof j);
    return j;
}

pm_result pm_additive_extract_job_validate(const pm_additive_extract_job *job, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive extract job: NULL job");
    pm_result r = pm_check_joint_count(job->joint_count, "additive extract job", error);
    if (r != PM_OK) return r;
    if (!job->source || !job->base || !job->output)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive extract job: source, base and output must be set");
    if (!pm_pose_aligned(job->source) || !pm_pose_aligned(job->base) || !pm_pose_aligned(job->output))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive extract job: a pose%s", PM_ALIGN_HINT);
    const int groups = pm_soa_count(job->joint_count);
    const char *overlapped = pm_poses_overlap_apart(job->output, job->source, groups) ? "the source"
                             : pm_poses_overlap_apart(job->output, job->base, groups) ? "the base"
                                                                                       : NULL;
    if (overlapped)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "additive extract job: output overlaps %s without being it (the output may be the source or the "
                       "base, not part of one)",
                       overlapped);
    return PM_OK;
}

pm_result pm_additive_extract_job_run(const pm_additive_extract_job *job, pm_error *error) {
    return pm_additive_extract_job_run_kernel(job, PM_KERNEL_AUTO, error);
}

pm_result pm_additive_extract_job_run_kernel(const pm_additive_extract_job *job, int kernel, pm_error *error) {
    pm_result r = pm_additive_extract_job_validate(job, error);
    if (r != PM_OK) return r;
    pm_pose_kernels_pick(kernel)->additive_extract(job, pm_soa_count(job->joint_count));
    return PM_OK;
}

/* ---- apply ---- */

pm_additive_apply_job pm_default_additive_apply_job(void) {
    pm_additive_apply_job j;
    memset(&j, 0, sizeof j);
    j.weight = 1.0f;
    return j;
}

/* Everything but the mask's values: run checks those as it goes (or first, in place). */
static pm_result check_apply(const pm_additive_apply_job *job, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: NULL job");
    pm_result r = pm_check_joint_count(job->joint_count, "additive apply job", error);
    if (r != PM_OK) return r;
    if (!job->target || !job->output)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: target and output must be set");
    if (!isfinite(job->weight)) return pm_fail(error, PM_ERR_NUMERIC, "additive apply job: the weight is not finite");
    if (fabsf(job->weight) > PM_ADDITIVE_MAX_WEIGHT)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: weight %s is outside [-%g, %g]",
                       pm_float_text(job->weight).text, (double)PM_ADDITIVE_MAX_WEIGHT, (double)PM_ADDITIVE_MAX_WEIGHT);
    if (job->scaling != PM_ADDITIVE_POWER && job->scaling != PM_ADDITIVE_NLERP)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: unknown scaling %d", (int)job->scaling);
    if (job->weight != 0.0f && !job->delta)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: weight %g but no delta pose", (double)job->weight);
    if (!pm_pose_aligned(job->target) || !pm_pose_aligned(job->output) || (job->weight != 0.0f && !pm_pose_aligned(job->delta)))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: a pose%s", PM_ALIGN_HINT);
    const int groups = pm_soa_count(job->joint_count);
    const char *overlapped = pm_poses_overlap_apart(job->output, job->target, groups) ? "the target"
                             : job->weight != 0.0f && pm_poses_overlap_apart(job->output, job->delta, groups) ? "the delta"
                                                                                                               : NULL;
    if (overlapped)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "additive apply job: output overlaps %s without being it (the output may be the target or the "
                       "delta, not part of one)",
                       overlapped);
    if (job->weight != 0.0f && job->joint_weights &&
        pm_bytes_overlap(job->output, (size_t)groups * sizeof(pm_soa_transform), job->joint_weights,
                         (size_t)job->joint_count * sizeof(float)))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: output overlaps the joint weights");
    return PM_OK;
}

static pm_result check_apply_mask(const pm_additive_apply_job *job, pm_error *error) {
    return pm_check_joint_weights(job->joint_weights, job->joint_count, "additive apply job: the weight of joint", error);
}

pm_result pm_additive_apply_job_validate(const pm_additive_apply_job *job, pm_error *error) {
    pm_result r = check_apply(job, error);
    /* A zero-weight job reads neither the delta nor the mask. */
    if (r == PM_OK && job->weight != 0.0f && job->joint_weights) r = check_apply_mask(job, error);
    return r;
}

pm_result pm_additive_apply_job_run(const pm_additive_apply_job *job, pm_error *error) {
    return pm_additive_apply_job_run_kernel(job, PM_KERNEL_AUTO, error);
}

pm_result pm_additive_apply_job_run_kernel(const pm_additive_apply_job *job, int kernel, pm_error *error) {
    pm_result r = check_apply(job, error);
    if (r != PM_OK) return r;
    int groups = pm_soa_count(job->joint_count);
    if (job->weight == 0.0f) {
        /* A zero-weight additive is not read at all. */
        if (job->output != job->target) memmove(job->output, job->target, (size_t)groups * sizeof(pm_soa_transform));
        return PM_OK;
    }
    const pm_pose_kernels *k = pm_pose_kernels_pick(kernel);
    const int extended = job->weight < 0.0f || job->weight > 1.0f;
    if (!job->joint_weights && !extended) {
        if (job->weight == 1.0f) k->apply_full(job, groups);
        else k->apply_uniform(job, groups);
        return PM_OK;
    }
    /* A bad mask is normally caught by the running check after the blend, which only spoils the
     * output; writing over the target or the delta, it must be caught before anything is written. */
    int in_place = pm_poses_overlap(job->output, job->target, groups) || pm_poses_overlap(job->output, job->delta, groups);
    if (job->joint_weights && in_place && (r = check_apply_mask(job, error)) != PM_OK) return r;
    soa_weight_check check;
    soa_weight_check_init(&check);
    if (extended) k->apply_extended(job, groups, &check);
    else k->apply_masked(job, groups, &check);
    if (job->joint_weights && !soa_weight_check_ok(&check)) return check_apply_mask(job, error);
    return PM_OK;
}

/* ---- offline: additive clips ---- */

pm_result pm_clip_extract_additive(pm_clip *out, const pm_clip *source, const pm_clip *base, int base_frame,
                                   pm_error *error) {
    if (!out || !source || !base) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_extract_additive: NULL argument");
    /* out may be source or base: the result is built aside and replaces out only on success. */
    const int aliased = out == source || out == base;
    pm_result r = pm_clip_validate(source, error);
    if (r == PM_OK) r = pm_clip_validate(base, error);
    if (r != PM_OK) return pm_clip_fail_into(out, aliased, r);
    const char *sname = source->name ? source->name : "source", *bname = base->name ? base->name : "base";
    if (!pm_skeleton_same_topology(&source->skeleton, &base->skeleton))
        return pm_clip_fail_into(out, aliased,
                                 pm_fail(error, PM_ERR_MISMATCH, "additive: '%s' and '%s' have different skeletons", sname,
                                         bname));
    if (base_frame >= base->frame_count)
        return pm_clip_fail_into(out, aliased,
                                 pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive: base frame %d is outside '%s' (%d frames)",
                                         base_frame, bname, base->frame_count));
    pm_clip add;
    memset(&add, 0, sizeof add);
    int jc = source->skeleton.joint_count;
    pm_quat *brot = (pm_quat *)pm_alloc_array(&source->allocator, (size_t)jc, sizeof(pm_quat), 16);
    pm_vec3 *btr = (pm_vec3 *)pm_alloc_array(&source->allocator, (size_t)jc, sizeof(pm_vec3), 16);
    if (!brot || !btr) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "additive: out of memory");
        goto done;
    }
    if ((r = pm_clip_copy(&add, source, NULL, error)) != PM_OK) goto done;
    char name[256];
    snprintf(name, sizeof name, "%s-additive", sname);
    if ((r = pm_clip_set_name(&add, name, error)) != PM_OK) goto done;
    float sdur = pm_clip_duration(source), bdur = pm_clip_duration(base);
    /* A fixed base frame is sampled once. */
    if (base_frame >= 0 && (r = pm_clip_sample(brot, btr, base, (float)base_frame * base->frame_time, error)) != PM_OK)
        goto done;
    for (int f = 0; f < source->frame_count; f++) {
        if (base_frame < 0) {
            float phase = sdur > 0.0f ? (float)f * source->frame_time / sdur : 0.0f;
            if ((r = pm_clip_sample(brot, btr, base, phase * bdur, error)) != PM_OK) goto done;
        }
        size_t at = (size_t)f * jc;
        for (int j = 0; j < jc; j++) {
            add.rotations[at + j] = pm_quat_normalize(pm_quat_mul(pm_quat_conjugate(brot[j]), source->rotations[at + j]));
            add.translations[at + j] = pm_vec3_sub(source->translations[at + j], btr[j]);
        }
    }
done:
    pm_free(&source->allocator, brot);
    pm_free(&source->allocator, btr);
    if (r != PM_OK) {
        pm_clip_destroy(&add);
        return pm_clip_fail_into(out, aliased, r);
    }
    pm_clip_move_into(out, &add, aliased);
    return PM_OK;
}
