/* Layered blend per bone (SPEC BL2) and the branch filters that make its per-joint weights. */
#include <math.h>
#include <stdio.h>

#include "posematch/features.h"
#include "core.h"
#include "schema_layout.h"
#include "pose_kernels.h"

pm_branch_filter pm_default_branch_filter(void) {
    pm_branch_filter f;
    f.bone = NULL;
    f.max_depth = -1;
    f.blend_depth = 0;
    f.weight = 1.0f;
    return f;
}

pm_result pm_branch_filters_expand(float *out_weights, const pm_skeleton *skeleton, const pm_branch_filter *filters,
                                   int filter_count, pm_error *error) {
    if (!out_weights || !skeleton || (!filters && filter_count > 0))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "branch filters: NULL argument");
    if (filter_count < 0)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "branch filters: filter_count %d is negative", filter_count);
    pm_result r = pm_skeleton_validate(skeleton, error);
    if (r != PM_OK) return r;
    int n = skeleton->joint_count;
    for (int j = 0; j < n; j++) out_weights[j] = 0.0f;
    for (int f = 0; f < filter_count; f++) {
        const pm_branch_filter *bf = &filters[f];
        if (!bf->bone || !bf->bone[0])
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "branch filter %d: no bone name", f);
        if (!isfinite(bf->weight) || bf->weight < 0.0f || bf->weight > 1.0f)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "branch filter %d ('%s'): weight %s is outside [0, 1]", f,
                           bf->bone, pm_float_text(bf->weight).text);
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

typedef struct active_layer {
    const pm_soa_transform *pose;
    const float *joint_weights;
    float weight;
} active_layer;

PM_SIMD_INLINE pm_f4 layer_weights(const active_layer *l, int g, int joint_count, soa_weight_check *check) {
    pm_f4 w = f4_set1(l->weight);
    if (!l->joint_weights) return w;
    pm_f4 jw = soa_load_joint_weights(l->joint_weights, g, joint_count);
    soa_weight_check_add(check, jw);
    return f4_mul(w, jw);
}

/* Finishes a joint group: lanes no layer touched (total 0) keep the base bit for bit because
 * their normalisation factor is exactly 1 and their sums are base * 1 + layer * 0, which is 0 for
 * a finite layer (the header asks for finite layers rather than pay a select per lane). */
PM_SIMD_INLINE void store_layered(pm_soa_transform *o, soa_quat q, soa_vec3 t, pm_f4 total) {
    pm_f4 len = f4_sqrt(soa_quat_dot(q, q));
    pm_f4 inv = f4_select(f4_eq(total, f4_zero()), f4_set1(1.0f), f4_div(f4_set1(1.0f), len));
    soa_store(o, soa_quat_scale(q, inv), t);
}

#define PM_LAYER_CHUNK 64

/* One layer, the common case: a per-joint lerp between base and layer. Mask weights and
 * hemisphere signs first, in their own pass (fused, the dot -> sign -> multiply chain held back
 * every group), then the blend. Groups the mask leaves alone are blended too (their lanes come out
 * as the base): a branch per group cost more than the arithmetic it would skip. */
static void layered_one(const pm_layered_blend_job *job, const active_layer *layer, soa_weight_check *check) {
    const int groups = pm_soa_count(job->joint_count);
    const pm_f4 one = f4_set1(1.0f);
    pm_f4 weight[PM_LAYER_CHUNK], signed_w[PM_LAYER_CHUNK];
    for (int start = 0; start < groups; start += PM_LAYER_CHUNK) {
        int end = PM_MIN(groups, start + PM_LAYER_CHUNK);
        for (int g = start; g < end; g++) {
            pm_f4 w = layer_weights(layer, g, job->joint_count, check);
            weight[g - start] = w;
            signed_w[g - start] = soa_signed_weight(w, soa_load_rotation(layer->pose + g), soa_load_rotation(job->base + g));
        }
        for (int g = start; g < end; g++) {
            const pm_soa_transform *b = job->base + g;
            pm_f4 w = weight[g - start], wb = f4_sub(one, w);
            soa_quat q = soa_quat_madd(soa_quat_scale(soa_load_rotation(b), wb), soa_load_rotation(layer->pose + g),
                                       signed_w[g - start]);
            soa_vec3 t0 = soa_load_translation(b), t1 = soa_load_translation(layer->pose + g), t;
            t.x = f4_madd(t1.x, w, f4_mul(t0.x, wb));
            t.y = f4_madd(t1.y, w, f4_mul(t0.y, wb));
            t.z = f4_madd(t1.z, w, f4_mul(t0.z, wb));
            store_layered(job->output + g, q, t, w);
        }
    }
}

/* Several layers. The weights come first (they decide the base's share), then the base's weighted
 * rotation starts the sum and each layer is brought to the hemisphere of the sum so far: where the
 * base weighs nothing (over-full layers) or lies half a turn from the layers, a test against the
 * base alone would leave the sign of a near-zero dot to flip one of two layers that hold the same
 * rotation, and the two would cancel into a rotation neither has. */
static void layered_n(const pm_layered_blend_job *job, const active_layer *layers, int n, soa_weight_check *check) {
    const int groups = pm_soa_count(job->joint_count);
    const pm_f4 one = f4_set1(1.0f), zero = f4_zero();
    pm_f4 w[PM_BLEND_MAX_INPUTS];
    for (int g = 0; g < groups; g++) {
        const pm_soa_transform *b = job->base + g;
        pm_f4 total = zero;
        for (int i = 0; i < n; i++) {
            w[i] = layer_weights(&layers[i], g, job->joint_count, check);
            total = f4_add(total, w[i]);
        }
        /* Over-full layers are normalised among themselves and leave the base out. */
        pm_f4 scale = f4_select(f4_lt(one, total), f4_div(one, total), one);
        pm_f4 wb = f4_max(f4_sub(one, total), zero);
        soa_quat acc_q = soa_quat_scale(soa_load_rotation(b), wb);
        soa_vec3 t0 = soa_load_translation(b), acc_t;
        acc_t.x = f4_mul(t0.x, wb);
        acc_t.y = f4_mul(t0.y, wb);
        acc_t.z = f4_mul(t0.z, wb);
        for (int i = 0; i < n; i++) {
            const pm_soa_transform *l = layers[i].pose + g;
            pm_f4 wi = f4_mul(w[i], scale);
            soa_quat q = soa_load_rotation(l);
            acc_q = soa_quat_madd(acc_q, q, soa_signed_weight(wi, q, acc_q));
            soa_vec3 t = soa_load_translation(l);
            acc_t.x = f4_madd(t.x, wi, acc_t.x);
            acc_t.y = f4_madd(t.y, wi, acc_t.y);
            acc_t.z = f4_madd(t.z, wi, acc_t.z);
        }
        store_layered(job->output + g, acc_q, acc_t, total);
    }
}

pm_result pm_layered_blend_job_run(const pm_layered_blend_job *job, pm_error *error) {
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
    } else if (n == 1) layered_one(job, &layers[0], &check);
    else layered_n(job, layers, n, &check);
    if (!soa_weight_check_ok(&check) && (r = check_layer_masks(job, error)) != PM_OK) return r;
    if (job->root_joint >= 0 && !job->blend_root_motion) {
        /* Root motion is the base's alone: two layers' root velocities averaged give a speed
         * neither animation has. */
        pm_pose_set_joint(job->output, job->root_joint, pm_pose_rotation(job->output, job->root_joint), root_translation);
    }
    return PM_OK;
}
