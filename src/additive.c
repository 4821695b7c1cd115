/* Additive poses (SPEC BL5): extraction and application, in local space, right-multiplied. */
#include <math.h>
#include <stdio.h>

#include "core.h"
#include "pose_kernels.h"

static pm_result check_joints(int joint_count, const char *job, pm_error *error) {
    if (joint_count < 1 || joint_count > PM_MAX_JOINTS)
        return pm_fail(error, PM_ERR_LIMIT, "%s: joint_count %d is outside 1..%d", job, joint_count, PM_MAX_JOINTS);
    return PM_OK;
}

/* ---- extract ---- */

pm_additive_extract_job pm_default_additive_extract_job(void) {
    pm_additive_extract_job j;
    memset(&j, 0, sizeof j);
    return j;
}

pm_result pm_additive_extract_job_validate(const pm_additive_extract_job *job, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive extract job: NULL job");
    pm_result r = check_joints(job->joint_count, "additive extract job", error);
    if (r != PM_OK) return r;
    if (!job->source || !job->base || !job->output)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive extract job: source, base and output must be set");
    if (!pm_pose_aligned(job->source) || !pm_pose_aligned(job->base) || !pm_pose_aligned(job->output))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive extract job: a pose%s", PM_ALIGN_HINT);
    return PM_OK;
}

pm_result pm_additive_extract_job_run(const pm_additive_extract_job *job, pm_error *error) {
    pm_result r = pm_additive_extract_job_validate(job, error);
    if (r != PM_OK) return r;
    int groups = pm_soa_count(job->joint_count);
    for (int g = 0; g < groups; g++) {
        soa_quat s = soa_load_rotation(job->source + g), b = soa_load_rotation(job->base + g);
        soa_vec3 st = soa_load_translation(job->source + g), bt = soa_load_translation(job->base + g);
        soa_vec3 dt;
        dt.x = f4_sub(st.x, bt.x);
        dt.y = f4_sub(st.y, bt.y);
        dt.z = f4_sub(st.z, bt.z);
        /* base^-1 * source: the offset that base * delta turns back into source. */
        soa_store(job->output + g, soa_quat_mul(soa_quat_conjugate(b), s), dt);
    }
    return PM_OK;
}

/* ---- apply ---- */

pm_additive_apply_job pm_default_additive_apply_job(void) {
    pm_additive_apply_job j;
    memset(&j, 0, sizeof j);
    j.weight = 1.0f;
    return j;
}

pm_result pm_additive_apply_job_validate(const pm_additive_apply_job *job, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: NULL job");
    pm_result r = check_joints(job->joint_count, "additive apply job", error);
    if (r != PM_OK) return r;
    if (!job->target || !job->output)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: target and output must be set");
    if (!isfinite(job->weight)) return pm_fail(error, PM_ERR_NUMERIC, "additive apply job: the weight is not finite");
    if (job->weight < 0.0f || job->weight > 1.0f)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: weight %g is outside [0, 1]", (double)job->weight);
    if (job->scaling != PM_ADDITIVE_POWER && job->scaling != PM_ADDITIVE_NLERP)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: unknown scaling %d", (int)job->scaling);
    if (job->weight > 0.0f && !job->delta)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: weight %g but no delta pose", (double)job->weight);
    if (!pm_pose_aligned(job->target) || !pm_pose_aligned(job->output) || (job->weight > 0.0f && !pm_pose_aligned(job->delta)))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: a pose%s", PM_ALIGN_HINT);
    return PM_OK;
}

#define PM_ADDITIVE_CHUNK 64

/* delta^w by nlerp from identity: (w v, 1 - w + w c), normalised, on the short arc. */
PM_SIMD_INLINE soa_quat nlerp_from_identity(soa_quat q, pm_f4 w) {
    q = soa_quat_xor(q, f4_sign(q.w));
    soa_quat r;
    r.x = f4_mul(q.x, w);
    r.y = f4_mul(q.y, w);
    r.z = f4_mul(q.z, w);
    r.w = f4_madd(f4_sub(q.w, f4_set1(1.0f)), w, f4_set1(1.0f));
    return soa_quat_normalize(r);
}

pm_result pm_additive_apply_job_run(const pm_additive_apply_job *job, pm_error *error) {
    pm_result r = pm_additive_apply_job_validate(job, error);
    if (r != PM_OK) return r;
    int groups = pm_soa_count(job->joint_count);
    if (job->weight == 0.0f) {
        /* A zero-weight additive is not read at all. */
        if (job->output != job->target) memmove(job->output, job->target, (size_t)groups * sizeof(pm_soa_transform));
        return PM_OK;
    }
    /* delta^1 is the delta itself: no power (asin, sin, cos) in the common full-weight case. */
    const int full = job->weight == 1.0f && !job->joint_weights;
    soa_weight_check check;
    soa_weight_check_init(&check);
    soa_quat scaled[PM_ADDITIVE_CHUNK];
    pm_f4 weights[PM_ADDITIVE_CHUNK];
    for (int start = 0; start < groups; start += PM_ADDITIVE_CHUNK) {
        int end = PM_MIN(groups, start + PM_ADDITIVE_CHUNK);
        /* The scaled deltas first, in their own pass: their polynomial chains overlap better
         * there than interleaved with the products (a quarter faster). */
        for (int g = start; g < end; g++) {
            pm_f4 w = f4_set1(job->weight);
            if (job->joint_weights) {
                pm_f4 jw = soa_load_joint_weights(job->joint_weights, g, job->joint_count);
                soa_weight_check_add(&check, jw);
                w = f4_mul(w, jw);
            }
            weights[g - start] = w;
            soa_quat d = soa_load_rotation(job->delta + g);
            if (!full) d = job->scaling == PM_ADDITIVE_NLERP ? nlerp_from_identity(d, w) : soa_quat_pow(d, w);
            scaled[g - start] = d;
        }
        for (int g = start; g < end; g++) {
            soa_vec3 tt = soa_load_translation(job->target + g), dt = soa_load_translation(job->delta + g), t;
            pm_f4 w = weights[g - start];
            t.x = f4_madd(dt.x, w, tt.x);
            t.y = f4_madd(dt.y, w, tt.y);
            t.z = f4_madd(dt.z, w, tt.z);
            soa_store(job->output + g, soa_quat_mul(soa_load_rotation(job->target + g), scaled[g - start]), t);
        }
    }
    if (!soa_weight_check_ok(&check)) {
        for (int j = 0; j < job->joint_count; j++) {
            float w = job->joint_weights[j];
            if (!(w >= 0.0f && w <= 1.0f))
                return pm_fail(error, isfinite(w) ? PM_ERR_INVALID_ARGUMENT : PM_ERR_NUMERIC,
                               "additive apply job: the weight of joint %d is %g (must be in [0, 1])", j, (double)w);
        }
    }
    return PM_OK;
}

/* ---- offline: additive clips ---- */

pm_result pm_clip_extract_additive(pm_clip *out, const pm_clip *source, const pm_clip *base, int base_frame,
                                   pm_error *error) {
    if (!out || !source || !base) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_extract_additive: NULL argument");
    memset(out, 0, sizeof *out);
    pm_result r = pm_clip_validate(source, error);
    if (r == PM_OK) r = pm_clip_validate(base, error);
    if (r != PM_OK) return r;
    const char *sname = source->name ? source->name : "source", *bname = base->name ? base->name : "base";
    if (!pm_skeleton_same_topology(&source->skeleton, &base->skeleton))
        return pm_fail(error, PM_ERR_MISMATCH, "additive: '%s' and '%s' have different skeletons", sname, bname);
    if (base_frame >= base->frame_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive: base frame %d is outside '%s' (%d frames)", base_frame,
                       bname, base->frame_count);
    int jc = source->skeleton.joint_count;
    pm_quat *brot = (pm_quat *)pm_alloc_array(&source->allocator, (size_t)jc, sizeof(pm_quat), 16);
    pm_vec3 *btr = (pm_vec3 *)pm_alloc_array(&source->allocator, (size_t)jc, sizeof(pm_vec3), 16);
    if (!brot || !btr) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "additive: out of memory");
        goto done;
    }
    if ((r = pm_clip_copy(out, source, NULL, error)) != PM_OK) goto done;
    char name[256];
    snprintf(name, sizeof name, "%s-additive", sname);
    if ((r = pm_clip_set_name(out, name, error)) != PM_OK) goto done;
    float sdur = pm_clip_duration(source), bdur = pm_clip_duration(base);
    for (int f = 0; f < source->frame_count; f++) {
        if (base_frame >= 0) pm_clip_sample(base, (float)base_frame * base->frame_time, brot, btr);
        else {
            float phase = sdur > 0.0f ? (float)f * source->frame_time / sdur : 0.0f;
            pm_clip_sample(base, phase * bdur, brot, btr);
        }
        size_t at = (size_t)f * jc;
        for (int j = 0; j < jc; j++) {
            out->rotations[at + j] = pm_quat_normalize(pm_quat_mul(pm_quat_conjugate(brot[j]), source->rotations[at + j]));
            out->translations[at + j] = pm_vec3_sub(source->translations[at + j], btr[j]);
        }
    }
done:
    if (r != PM_OK) pm_clip_destroy(out);
    pm_free(&source->allocator, brot);
    pm_free(&source->allocator, btr);
    return r;
}
