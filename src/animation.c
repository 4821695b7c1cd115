/* Runtime animation (SoA keys built from a pm_clip), pose buffers and the sampling job. */
#include <math.h>

#include "blend_internal.h"
#include "clip_internal.h"
#include "core.h"
#include "posematch/blend.h"

/* ---- poses ---- */

/* pm_pose_set_identity without the checks, for poses the library allocated or checked. */
static void pose_identity(pm_soa_transform *pose, int joint_count) {
    for (int g = 0; g < pm_soa_count(joint_count); g++) pm_soa_identity(&pose[g]);
}

pm_soa_transform *pm_pose_alloc(int joint_count, const pm_allocator *allocator) {
    if (joint_count < 1 || joint_count > PM_MAX_JOINTS) return NULL;
    pm_soa_transform *p =
        (pm_soa_transform *)pm_alloc_array(allocator, (size_t)pm_soa_count(joint_count), sizeof(pm_soa_transform), 16);
    if (p) pose_identity(p, joint_count);
    return p;
}

void pm_pose_free(pm_soa_transform *pose, const pm_allocator *allocator) { pm_free(allocator, pose); }

pm_result pm_pose_set_identity(pm_soa_transform *pose, int joint_count, pm_error *error) {
    if (!pose) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_pose_set_identity: pose is NULL");
    if (!pm_pose_aligned(pose))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_pose_set_identity: pose%s", PM_ALIGN_HINT);
    pm_result r = pm_check_joint_count(joint_count, "pm_pose_set_identity", error);
    if (r != PM_OK) return r;
    pose_identity(pose, joint_count);
    return PM_OK;
}

pm_result pm_pose_from_aos(pm_soa_transform *out, int joint_count, const pm_quat *rotations,
                           const pm_vec3 *translations, pm_error *error) {
    if (!out || !rotations || !translations) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_pose_from_aos: NULL argument");
    if (!pm_pose_aligned(out)) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_pose_from_aos: out%s", PM_ALIGN_HINT);
    if (joint_count < 1 || joint_count > PM_MAX_JOINTS)
        return pm_fail(error, PM_ERR_LIMIT, "pm_pose_from_aos: %d joints is outside 1..%d", joint_count, PM_MAX_JOINTS);
    pose_identity(out, joint_count);
    for (int j = 0; j < joint_count; j++) pm_pose_set_joint(out, j, rotations[j], translations[j]);
    return PM_OK;
}

pm_result pm_pose_to_aos(pm_quat *out_rotations, pm_vec3 *out_translations, int joint_count,
                         const pm_soa_transform *pose, pm_error *error) {
    if (!pose || (!out_rotations && !out_translations))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_pose_to_aos: NULL argument");
    if (!pm_pose_aligned(pose)) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_pose_to_aos: pose%s", PM_ALIGN_HINT);
    if (joint_count < 1 || joint_count > PM_MAX_JOINTS)
        return pm_fail(error, PM_ERR_LIMIT, "pm_pose_to_aos: %d joints is outside 1..%d", joint_count, PM_MAX_JOINTS);
    for (int j = 0; j < joint_count; j++) {
        if (out_rotations) out_rotations[j] = pm_pose_rotation(pose, j);
        if (out_translations) out_translations[j] = pm_pose_translation(pose, j);
    }
    return PM_OK;
}

pm_result pm_pose_from_rest(pm_soa_transform *out, const pm_skeleton *skeleton, pm_error *error) {
    if (!out || !skeleton) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_pose_from_rest: NULL argument");
    pm_result r = pm_skeleton_validate(skeleton, error);
    if (r != PM_OK) return r;
    return pm_pose_from_aos(out, skeleton->joint_count, skeleton->rest_rotations, skeleton->rest_translations, error);
}

/* ---- runtime animation ---- */

void pm_animation_destroy(pm_animation *a) {
    if (!a) return;
    pm_free(&a->allocator, a->keys);
    memset(a, 0, sizeof *a);
}

pm_result pm_animation_build(pm_animation *out, const pm_clip *clip, const pm_allocator *allocator, pm_error *error) {
    if (!out || !clip) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_animation_build: NULL argument");
    memset(out, 0, sizeof *out);
    pm_result r = pm_clip_validate(clip, error);
    if (r != PM_OK) return r;
    int jc = clip->skeleton.joint_count;
    int soa = pm_soa_count(jc);
    int looping = clip->looping && clip->frame_count > 1;
    int keys = clip->frame_count + looping;
    out->allocator = pm_allocator_resolve(pm_allocator_or(allocator, &clip->allocator));
    /* keys x groups cannot wrap a size_t: it is about a quarter of the clip's frames x joints,
     * which pm_clip_create checked (pm_alloc_array checks the bytes). */
    out->keys = (pm_soa_transform *)pm_alloc_array(&out->allocator, (size_t)keys * (size_t)soa,
                                                   sizeof(pm_soa_transform), 16);
    if (!out->keys)
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "animation '%s': out of memory for %d keys x %d joints",
                       clip->name ? clip->name : "", keys, jc);
    out->joint_count = jc;
    out->soa_count = soa;
    out->frame_count = clip->frame_count;
    out->key_count = keys;
    out->frame_time = clip->frame_time;
    out->duration = pm_clip_duration(clip);
    out->looping = looping;
    int n = clip->frame_count;
    for (int k = 0; k < keys; k++) {
        int f = k < n ? k : 0;
        pm_soa_transform *dst = out->keys + (size_t)k * soa;
        const pm_quat *rot = clip->rotations + (size_t)f * jc;
        const pm_vec3 *tr = clip->translations + (size_t)f * jc;
        pose_identity(dst, jc);
        for (int j = 0; j < jc; j++) {
            pm_quat q = pm_quat_normalize(rot[j]);
            /* Keep each joint's track on one hemisphere so that interpolation between neighbours
             * never needs a sign test at run time. */
            if (k > 0) q = pm_quat_abs_near(q, pm_pose_rotation(dst - soa, j));
            else if (q.w < 0.0f) q = pm_quat_neg(q);
            pm_vec3 t = tr[j];
            if (k == n) {
                /* The key after a loop's last frame: frame 0 moved on by the cycle's net
                 * displacement (the span from the first to the last frame plus one average step)
                 * and turned by its turn, so that root motion keeps going across the wrap instead
                 * of sliding or swinging back. Joints that swing in place get frame 0 back. */
                t = pm_clip_loop_end_translation(clip, j);
                q = pm_quat_abs_near(pm_quat_normalize(pm_clip_loop_end_rotation(clip, j)), pm_pose_rotation(dst - soa, j));
            }
            /* Sampling takes a + (b - a) * alpha between neighbouring keys: finite keys whose
             * difference overflows (or a loop's end key past the float range) would sample Inf
             * from a clip that validated. */
            if (k > 0) {
                pm_vec3 prev = pm_pose_translation(dst - soa, j);
                pm_vec3 step = pm_vec3_sub(t, prev);
                if (!isfinite(t.x) || !isfinite(t.y) || !isfinite(t.z) || !isfinite(step.x) || !isfinite(step.y) ||
                    !isfinite(step.z)) {
                    pm_animation_destroy(out);
                    return pm_fail(error, PM_ERR_NUMERIC,
                                   "animation '%s': joint '%s' translation at %s %d is too large to interpolate",
                                   clip->name ? clip->name : "", clip->skeleton.names[j],
                                   k < n ? "frame" : "the loop's end after frame", k < n ? k : n - 1);
                }
            }
            pm_pose_set_joint(dst, j, q, t);
        }
    }
    return PM_OK;
}

/* ---- sampling job ---- */

pm_sampling_job pm_default_sampling_job(void) {
    pm_sampling_job j;
    memset(&j, 0, sizeof j);
    j.rotation = PM_ROTATION_NLERP;
    return j;
}

pm_result pm_sampling_job_validate(const pm_sampling_job *job, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "sampling job: NULL job");
    const pm_animation *a = job->animation;
    if (!a || !a->keys || a->key_count < 1 || a->soa_count < 1)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "sampling job: no animation (build one with pm_animation_build)");
    /* The struct is public: fields edited by hand would send the job past the keys. */
    if (a->joint_count < 1 || a->joint_count > PM_MAX_JOINTS || a->soa_count != pm_soa_count(a->joint_count) ||
        (a->looping != 0 && a->looping != 1) || a->frame_count < 1 || a->frame_count > PM_MAX_FRAMES ||
        a->key_count != a->frame_count + a->looping || !(a->frame_time > 0.0f) || !isfinite(a->frame_time) ||
        !(a->duration >= 0.0f) || !isfinite(a->duration))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "sampling job: the animation's fields disagree (%d joints in %d groups, %d frames, %d keys, looping %d, "
                       "frame time %g, duration %g): build it with pm_animation_build",
                       a->joint_count, a->soa_count, a->frame_count, a->key_count, a->looping, (double)a->frame_time,
                       (double)a->duration);
    if (!job->output) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "sampling job: output is NULL");
    if (!pm_pose_aligned(job->output)) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "sampling job: output%s", PM_ALIGN_HINT);
    if (job->output_count < a->soa_count)
        return pm_fail(error, PM_ERR_MISMATCH, "sampling job: output holds %d groups, the animation's %d joints need %d",
                       job->output_count, a->joint_count, a->soa_count);
    /* The job writes soa_count groups while it reads two keys: output inside the keys would
     * overwrite the animation (for every later sample) or the keys being read. */
    if (pm_bytes_overlap(job->output, (size_t)a->soa_count * sizeof(pm_soa_transform), a->keys,
                         (size_t)a->key_count * (size_t)a->soa_count * sizeof(pm_soa_transform)))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "sampling job: output overlaps the animation's keys (it needs a buffer of its own)");
    if (!isfinite(job->time)) return pm_fail(error, PM_ERR_NUMERIC, "sampling job: time is not finite");
    if (job->rotation != PM_ROTATION_NLERP && job->rotation != PM_ROTATION_SLERP)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "sampling job: unknown rotation blend %d", (int)job->rotation);
    return PM_OK;
}

/* Key pair and blend factor at `time`; alpha == 0 means exactly on key k0. */
static void key_pair(const pm_animation *a, float time, int *k0, float *alpha) {
    int n = a->frame_count;
    if (n < 2) {
        *k0 = 0;
        *alpha = 0.0f;
        return;
    }
    double x = (double)time / (double)a->frame_time;
    if (a->looping) {
        if (pm_loop_wrap(x, n, a->frame_time, &x)) {
            *k0 = n; /* the loop's end: the end key */
            *alpha = 0.0f;
            return;
        }
    } else if (!(x > 0.0)) x = 0.0;
    else if (x >= (double)(n - 1) || time >= (float)(n - 1) * a->frame_time) {
        /* At or past the end; the duration itself counts whichever way it rounded as a float. */
        *k0 = n - 1;
        *alpha = 0.0f;
        return;
    }
    int i = (int)x;
    *k0 = i;
    *alpha = (float)(x - i);
}

pm_result pm_sampling_job_run(const pm_sampling_job *job, pm_error *error) {
    return pm_sampling_job_run_kernel(job, PM_KERNEL_AUTO, error);
}

pm_result pm_sampling_job_run_kernel(const pm_sampling_job *job, int kernel, pm_error *error) {
    pm_result r = pm_sampling_job_validate(job, error);
    if (r != PM_OK) return r;
    const pm_animation *a = job->animation;
    int k0;
    float alpha;
    key_pair(a, job->time, &k0, &alpha);
    const pm_soa_transform *g0 = a->keys + (size_t)k0 * a->soa_count;
    if (alpha == 0.0f) {
        /* On a key: the stored values, bit for bit. */
        memcpy(job->output, g0, (size_t)a->soa_count * sizeof(pm_soa_transform));
        return PM_OK;
    }
    const pm_soa_transform *g1 = g0 + a->soa_count;
    const pm_pose_kernels *k = pm_pose_kernels_pick(kernel);
    if (job->rotation == PM_ROTATION_SLERP) k->sample_slerp(job->output, g0, g1, alpha, a->soa_count);
    else k->sample_nlerp(job->output, g0, g1, alpha, a->soa_count);
    return PM_OK;
}
