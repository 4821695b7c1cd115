/* The clip survey: what a clip shows about its rig and recording (roles, hip and floor height, a
 * rest-pose lead-in), read by the BVH reader's unit detection and by database builds. */
#include <math.h>
#include <stdlib.h>

#include "clip_internal.h"
#include "core.h"
#include "posematch/anim.h"

/* Angle in degrees between a unit quaternion and the identity. */
static float angle_from_identity(pm_quat q) {
    float w = fabsf(q.w);
    return w >= 1.0f ? 0.0f : 2.0f * pm_acosf(w) * (180.0f / PM_PI);
}

/* Mean rotation angle away from the zero pose over `joints` at one frame. */
static float mean_pose_angle(const pm_clip *c, int frame, const int *joints, int count) {
    const pm_quat *rot = c->rotations + (size_t)frame * c->skeleton.joint_count;
    float sum = 0.0f;
    for (int i = 0; i < count; i++) sum += angle_from_identity(rot[joints[i]]);
    return count ? sum / (float)count : 0.0f;
}

/* A rest-pose lead-in (converters add a T-pose frame 0, or ramp in from it): over the joints
 * that animate, frame 0 is close to the zero-rotation pose, much closer than the clip usually
 * is, and frame 1 is farther from it. Exact identity is not required: CMU's T-pose has the
 * legs at 17 degrees and the Daz conversion starts a few degrees off. The caller passes
 * samples >= 3, so the clip has at least 3 frames. */
static int detect_rest_lead_in(const pm_clip *c, int *joints, float *scratch, int samples) {
    int jc = c->skeleton.joint_count, n = 0;
    for (int j = 0; j < jc; j++) {
        if (c->skeleton.parents[j] < 0) continue;
        pm_quat q0 = c->rotations[j];
        for (int s = 1; s < samples; s++) {
            pm_quat q = c->rotations[(size_t)pm_sample_frame(s, samples, c->frame_count) * jc + j];
            if (angle_from_identity(pm_quat_mul(pm_quat_conjugate(q0), q)) > 2.0f) {
                joints[n++] = j;
                break;
            }
        }
    }
    if (n == 0) return 0;
    int m = 0;
    for (int s = 1; s < samples; s++)
        scratch[m++] = mean_pose_angle(c, pm_sample_frame(s, samples, c->frame_count), joints, n);
    qsort(scratch, (size_t)m, sizeof(float), pm_cmp_float);
    float typical = scratch[m / 2];
    float m0 = mean_pose_angle(c, 0, joints, n), m1 = mean_pose_angle(c, 1, joints, n);
    return m0 < 5.0f && m0 < 0.35f * typical && m1 > m0;
}

pm_result pm_clip_rest_lead_in(int *out, const pm_clip *c, pm_error *error) {
    *out = 0;
    pm_result r = pm_clip_check_ready(c, "pm_clip_rest_lead_in", error);
    if (r != PM_OK) return r;
    const int samples = PM_MIN(c->frame_count, 256);
    if (samples <= 2) return PM_OK;
    int *joints = (int *)pm_alloc_array(&c->allocator, (size_t)c->skeleton.joint_count, sizeof(int), 16);
    float *scratch = (float *)pm_alloc_array(&c->allocator, (size_t)samples, sizeof(float), 16);
    if (joints && scratch) *out = detect_rest_lead_in(c, joints, scratch, samples);
    else r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "pm_clip_rest_lead_in: out of memory for %d joints", c->skeleton.joint_count);
    pm_free(&c->allocator, joints);
    pm_free(&c->allocator, scratch);
    return r;
}

pm_result pm_clip_survey_compute(pm_clip_survey *out, const pm_clip *c, pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_survey_compute: out is NULL");
    memset(out, 0, sizeof *out);
    if (!c) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_survey_compute: clip is NULL");
    pm_result r = pm_clip_check_ready(c, "pm_clip_survey_compute", error);
    if (r != PM_OK) return r;
    pm_skeleton_find_roles(&out->roles, &c->skeleton);
    int jc = c->skeleton.joint_count;
    pm_transform *w = (pm_transform *)pm_alloc_array(&c->allocator, (size_t)jc, sizeof(pm_transform), 16);
    int samples = PM_MIN(c->frame_count, 256);
    float *lows = (float *)pm_alloc_array(&c->allocator, (size_t)samples, sizeof(float), 16);
    float *hips = (float *)pm_alloc_array(&c->allocator, (size_t)samples, sizeof(float), 16);
    int *joints = samples > 2 ? (int *)pm_alloc_array(&c->allocator, (size_t)jc, sizeof(int), 16) : NULL;
    if (!w || !lows || !hips || (samples > 2 && !joints)) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "pm_clip_survey_compute: out of memory for %d joints", jc);
        goto done;
    }
    int feet[4] = {out->roles.left_foot, out->roles.right_foot, out->roles.left_toe, out->roles.right_toe};
    for (int s = 0; s < samples; s++) {
        if ((r = pm_clip_frame_world(w, c, pm_sample_frame(s, samples, c->frame_count), error)) != PM_OK) {
            pm_error_prefix(error, "pm_clip_survey_compute");
            goto done;
        }
        /* A foot's lowest point: its toe joint, or for a rig without toe joints the foot's End
         * Site (its toe tip; without it such a rig would stand on its ankles). Toe End Sites are
         * left out: rigs give them or not from file to file (0 or 5 cm along the toe in one
         * dataset), which would move the floor between clips of one actor. */
        float low = INFINITY;
        for (int i = 0; i < 4; i++) {
            int j = feet[i];
            if (j < 0) continue;
            low = PM_MIN(low, w[j].translation.y);
            int toe = i == 0 ? out->roles.left_toe : i == 1 ? out->roles.right_toe : 0;
            if (i < 2 && toe < 0 && c->skeleton.has_end_site && c->skeleton.end_sites && c->skeleton.has_end_site[j])
                low = PM_MIN(low, pm_transform_point(w[j], c->skeleton.end_sites[j]).y);
        }
        if (!isfinite(low)) {
            for (int j = 0; j < jc; j++)
                if (w[j].translation.y < low) low = w[j].translation.y;
        }
        lows[s] = low;
        hips[s] = out->roles.hips >= 0 ? w[out->roles.hips].translation.y - low : 0.0f;
    }
    qsort(lows, (size_t)samples, sizeof(float), pm_cmp_float);
    qsort(hips, (size_t)samples, sizeof(float), pm_cmp_float);
    out->floor_height = lows[samples / 20]; /* 5th percentile: ignores a few glitches below the floor */
    out->hip_height = hips[samples / 2];
    if (samples > 2) out->first_frame_is_rest = detect_rest_lead_in(c, joints, lows, samples);
done:
    pm_free(&c->allocator, w);
    pm_free(&c->allocator, lows);
    pm_free(&c->allocator, hips);
    pm_free(&c->allocator, joints);
    if (r != PM_OK) memset(out, 0, sizeof *out);
    return r;
}
