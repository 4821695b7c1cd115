/* Layered blend per bone (SPEC BL2) and the branch filters that make its per-joint weights. */
#include <math.h>
#include <stdio.h>

#include "posematch/features.h"
#include "core.h"
#include "schema_layout.h"
#include "blend_internal.h"

pm_branch_filter pm_default_branch_filter(void) {
    pm_branch_filter f;
    f.bone = NULL;
    f.max_depth = -1;
    f.blend_depth = 0;
    f.weight = 1.0f;
    return f;
}

/* Filter f checked, and the joint its branch starts at. */
static pm_result filter_start(int *out_start, const pm_skeleton *skeleton, const pm_branch_filter *bf, int f,
                              pm_error *error) {
    if (!bf->bone || !bf->bone[0]) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "branch filter %d: no bone name", f);
    if (!isfinite(bf->weight) || bf->weight < 0.0f || bf->weight > 1.0f)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "branch filter %d ('%s'): weight %s is outside [0, 1]", f, bf->bone,
                       pm_float_text(bf->weight).text);
    if (bf->max_depth < -1)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "branch filter %d ('%s'): max_depth %d (use -1 for the whole branch)",
                       f, bf->bone, bf->max_depth);
    /* Roles ("@hips", "@left_upleg", as a schema names bones) keep one mask across rigs. */
    int start = pm_features_resolve_bone(skeleton, bf->bone);
    if (start < 0 && bf->bone[0] == '@' && pm_bone_role(bf->bone) < 0)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "branch filter %d: unknown role '%s' (roles:%s)", f, bf->bone,
                       PM_BONE_ROLES);
    if (start < 0 && bf->bone[0] == '@')
        return pm_fail(error, PM_ERR_NOT_FOUND,
                       "branch filter %d: no joint of the skeleton takes the role '%s' (roles are found from joint "
                       "names: name the joint instead)",
                       f, bf->bone);
    if (start < 0)
        return pm_fail(error, PM_ERR_NOT_FOUND, "branch filter %d: the skeleton has no joint named '%s'", f, bf->bone);
    *out_start = start;
    return PM_OK;
}

pm_result pm_branch_filters_expand(float *out_weights, const pm_skeleton *skeleton, const pm_branch_filter *filters,
                                   int filter_count, pm_error *error) {
    if (!out_weights || !skeleton || (!filters && filter_count > 0))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "branch filters: NULL argument");
    if (filter_count < 0)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "branch filters: filter_count %d is negative", filter_count);
    pm_result r = pm_skeleton_validate(skeleton, error);
    if (r != PM_OK) return r;
    /* Every filter checked before a weight is written: an error leaves out_weights as it was. */
    int start;
    for (int f = 0; f < filter_count; f++)
        if ((r = filter_start(&start, skeleton, &filters[f], f, error)) != PM_OK) return r;
    int n = skeleton->joint_count;
    for (int j = 0; j < n; j++) out_weights[j] = 0.0f;
    for (int f = 0; f < filter_count; f++) {
        const pm_branch_filter *bf = &filters[f];
        (void)filter_start(&start, skeleton, bf, f, NULL);
        float ramp = bf->blend_depth > 0 ? 1.0f / (float)bf->blend_depth : 1.0f;
        for (int j = start; j < n; j++) {
            int depth = -1;
            if (j == start) depth = 0;
            else {
                /* Walk up towards the filter bone (parents come first, so any joint of the branch
                 * has an index above it); this runs once per mask, not per frame. */
                int d = 0, a = j;
                while (a > start) {
                    a = skeleton->parents[a];
                    d++;
                }
                if (a == start) depth = d;
            }
            if (depth < 0 || (bf->max_depth >= 0 && depth > bf->max_depth)) continue;
            float w = (float)(depth + 1) * ramp;
            if (w > 1.0f) w = 1.0f;
            w *= bf->weight;
            if (w > out_weights[j]) out_weights[j] = w;
        }
    }
    return PM_OK;
}

pm_layered_blend_job pm_default_layered_blend_job(void) {
    pm_layered_blend_job j;
    memset(&j, 0, sizeof j);
    j.root_joint = 0;
    return j;
}

/* Everything but the masks' values: run checks those as it blends (or first, in place). */
static pm_result check_layered(const pm_layered_blend_job *job, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "layered blend job: NULL job");
    pm_result r = pm_check_joint_count(job->joint_count, "layered blend job", error);
    if (r != PM_OK) return r;
    if (!job->base || !job->output)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "layered blend job: base and output must be set");
    if (!pm_pose_aligned(job->base) || !pm_pose_aligned(job->output))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "layered blend job: base or output%s", PM_ALIGN_HINT);
    const int groups = pm_soa_count(job->joint_count);
    if (pm_poses_overlap_apart(job->output, job->base, groups))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "layered blend job: output overlaps the base without being it (the output may be the base, not part of it)");
    if (job->layer_count < 0 || job->layer_count > PM_BLEND_MAX_INPUTS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "layered blend job: %d layers is outside 0..%d", job->layer_count,
                       PM_BLEND_MAX_INPUTS);
    if (job->layer_count > 0 && !job->layers)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "layered blend job: layers is NULL (%d layers)", job->layer_count);
    if (job->blend_root_motion != 0 && job->blend_root_motion != 1)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "layered blend job: blend_root_motion %d is neither 0 nor 1",
                       job->blend_root_motion);
    if (job->root_joint < -1 || job->root_joint >= job->joint_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "layered blend job: root_joint %d is outside -1..%d", job->root_joint,
                       job->joint_count - 1);
    for (int i = 0; i < job->layer_count; i++) {
        float w = job->layers[i].weight;
        if (!isfinite(w)) return pm_fail(error, PM_ERR_NUMERIC, "layered blend job: layer %d has a non-finite weight", i);
        if (w < 0.0f || w > 1.0f)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "layered blend job: layer %d weight %s is outside [0, 1]", i,
                           pm_float_text(w).text);
        if (w > 0.0f && !job->layers[i].pose)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "layered blend job: layer %d has weight %g but no pose", i,
                           (double)w);
        if (w > 0.0f && !pm_pose_aligned(job->layers[i].pose))
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "layered blend job: layer %d%s", i, PM_ALIGN_HINT);
        if (w > 0.0f && pm_poses_overlap_apart(job->output, job->layers[i].pose, groups))
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "layered blend job: output overlaps layer %d's pose without being it (the output may be a layer's "
                           "pose, not part of one)",
                           i);
        /* Masks are read a chunk of joints at a time while the output is written. */
        if (w > 0.0f && job->layers[i].joint_weights &&
            pm_bytes_overlap(job->output, (size_t)groups * sizeof(pm_soa_transform), job->layers[i].joint_weights,
                             (size_t)job->joint_count * sizeof(float)))
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "layered blend job: output overlaps layer %d's joint weights", i);
    }
    return PM_OK;
}

/* The mask of every layer that is read (weight > 0): one pass over each. */
static pm_result check_layer_masks(const pm_layered_blend_job *job, pm_error *error) {
    for (int i = 0; i < job->layer_count; i++) {
        const pm_blend_layer *l = &job->layers[i];
        if (!(l->weight > 0.0f) || !l->joint_weights) continue;
        char what[64];
        snprintf(what, sizeof what, "layered blend job: layer %d's weight for joint", i);
        pm_result r = pm_check_joint_weights(l->joint_weights, job->joint_count, what, error);
        if (r != PM_OK) return r;
    }
    return PM_OK;
}

pm_result pm_layered_blend_job_validate(const pm_layered_blend_job *job, pm_error *error) {
    pm_result r = check_layered(job, error);
    return r == PM_OK ? check_layer_masks(job, error) : r;
}

pm_result pm_layered_blend_job_run(const pm_layered_blend_job *job, pm_error *error) {
    return pm_layered_blend_job_run_kernel(job, PM_KERNEL_AUTO, error);
}

pm_result pm_layered_blend_job_run_kernel(const pm_layered_blend_job *job, int kernel, pm_error *error) {
    pm_result r = check_layered(job, error);
    if (r != PM_OK) return r;
    const int groups = pm_soa_count(job->joint_count);
    active_layer layers[PM_BLEND_MAX_INPUTS];
    int n = 0, in_place = pm_poses_overlap(job->output, job->base, groups), masked = 0;
    for (int i = 0; i < job->layer_count; i++)
        if (job->layers[i].weight > 0.0f) {
            layers[n].pose = job->layers[i].pose;
            layers[n].joint_weights = job->layers[i].joint_weights;
            layers[n].weight = job->layers[i].weight;
            in_place |= pm_poses_overlap(job->output, layers[n].pose, groups);
            masked |= layers[n].joint_weights != NULL;
            n++;
        }
    /* A bad mask is normally caught by the running check after blending, which only spoils the
     * output; writing over an input, it must be caught before anything is written. */
    if (in_place && masked && (r = check_layer_masks(job, error)) != PM_OK) return r;
    /* Read before blending: the output may be the base. */
    pm_vec3 root_translation = job->root_joint >= 0 ? pm_pose_translation(job->base, job->root_joint) : pm_vec3_zero();
    soa_weight_check check;
    soa_weight_check_init(&check);
    if (n == 0) {
        if (job->output != job->base) memmove(job->output, job->base, (size_t)groups * sizeof(pm_soa_transform));
    } else if (n == 1) pm_pose_kernels_pick(kernel)->layered_one(job, &layers[0], &check);
    else pm_pose_kernels_pick(kernel)->layered_n(job, layers, n, &check);
    if (!soa_weight_check_ok(&check) && (r = check_layer_masks(job, error)) != PM_OK) return r;
    if (job->root_joint >= 0 && !job->blend_root_motion) {
        /* Root motion is the base's alone: two layers' root velocities averaged give a speed
         * neither animation has. */
        pm_pose_set_joint(job->output, job->root_joint, pm_pose_rotation(job->output, job->root_joint), root_translation);
    }
    return PM_OK;
}
