/* posematch - runtime pose jobs in the manner of ozz-animation (SPEC BL2-BL5).
 *
 * The editable pm_clip is turned once into an immutable pm_animation whose keys are stored as
 * structure-of-arrays groups of four joints (pm_soa_transform), the layout the jobs process four
 * joints at a time with SSE2 or NEON. Each job is a plain struct of inputs and outputs with
 * pm_xxx_job_validate and pm_xxx_job_run; run allocates nothing, writes only the caller's buffers
 * and may be called from any number of threads on shared animations.
 *
 * Poses are arrays of pm_soa_count(joint_count) groups, 16-byte aligned (the type's alignment:
 * pm_pose_alloc, aligned_alloc(16, ...) and automatic arrays give it, malloc only where the C
 * library aligns to 16 - 64-bit glibc does, 32-bit ARM's aligns to 8; jobs reject misaligned
 * pointers).
 * Joint j lives in lane j % 4 of group j / 4; the padding lanes of the last group hold identity
 * transforms. Rotations blend with nlerp: hemisphere-corrected against the heaviest input (or the
 * sum so far, for layers) and renormalised; slerp where a job offers it. Weights are normalised and an input whose weight
 * is zero is never read (its pointer may be NULL). An output may be the very pose of an input where
 * a job says so; any other overlap of an output with what the job reads (an output a group off an
 * input, local-to-model outputs over the input) is rejected by validate, as the pose would be read
 * after parts of it were overwritten. Every job's run checks what its validate checks before it
 * writes anything: an error leaves the outputs as they were. Pose contents are not checked per
 * run: rotations are unit quaternions (as clips, sampling and the jobs give them); a zero or NaN
 * one gives NaN where it is read. */
#ifndef POSEMATCH_BLEND_H
#define POSEMATCH_BLEND_H

#include "anim.h"

PM_EXTERN_C_BEGIN

#define PM_SOA_WIDTH 4
#define PM_BLEND_MAX_INPUTS 64 /* inputs of one blend job, layers of one layered job */

#if defined(__cplusplus)
#define PM_ALIGN16 alignas(16)
#else
#define PM_ALIGN16 _Alignas(16)
#endif

/* Local transforms of four joints (no scale: posematch transforms have none). 112 bytes, 16-byte
 * aligned so that the jobs load each array with one aligned vector load. */
typedef struct pm_soa_transform {
    PM_ALIGN16 float tx[4];
    float ty[4], tz[4];
    float qx[4], qy[4], qz[4], qw[4];
} pm_soa_transform;

/* Groups a pose of `joint_count` joints needs; 0 for a count below 1. Rounded up without adding
 * first, so that no int count overflows (a caller may pass one it has not yet checked). */
static inline int pm_soa_count(int joint_count) {
    return joint_count > 0 ? joint_count / 4 + (joint_count % 4 != 0) : 0;
}

/* ---- poses ---- */

/* A 16-byte aligned pose of pm_soa_count(joint_count) groups, every lane set to identity; free it
 * with pm_pose_free and the same allocator. NULL when out of memory or joint_count < 1. */
PM_API pm_soa_transform *pm_pose_alloc(int joint_count, const pm_allocator *allocator);
PM_API void pm_pose_free(pm_soa_transform *pose, const pm_allocator *allocator);
/* Every lane (padding included) of pm_soa_count(joint_count) groups to the identity transform.
 * Errors, nothing written: a NULL or not 16-byte aligned pose (PM_ERR_INVALID_ARGUMENT), a
 * joint_count outside 1..PM_MAX_JOINTS (PM_ERR_LIMIT). */
PM_API pm_result pm_pose_set_identity(pm_soa_transform *pose, int joint_count, pm_error *error);
/* From / to per-joint arrays (joint_count entries each). */
PM_API pm_result pm_pose_from_aos(pm_soa_transform *out, int joint_count, const pm_quat *rotations,
                                  const pm_vec3 *translations, pm_error *error);
PM_API pm_result pm_pose_to_aos(pm_quat *out_rotations, pm_vec3 *out_translations, int joint_count,
                                const pm_soa_transform *pose, pm_error *error);
/* The skeleton's rest pose. */
PM_API pm_result pm_pose_from_rest(pm_soa_transform *out, const pm_skeleton *skeleton, pm_error *error);

/* One joint of a pose. */
static inline pm_quat pm_pose_rotation(const pm_soa_transform *pose, int joint) {
    const pm_soa_transform *g = pose + joint / 4;
    int k = joint % 4;
    return pm_quat_make(g->qx[k], g->qy[k], g->qz[k], g->qw[k]);
}
static inline pm_vec3 pm_pose_translation(const pm_soa_transform *pose, int joint) {
    const pm_soa_transform *g = pose + joint / 4;
    int k = joint % 4;
    return pm_vec3_make(g->tx[k], g->ty[k], g->tz[k]);
}
static inline void pm_pose_set_joint(pm_soa_transform *pose, int joint, pm_quat rotation, pm_vec3 translation) {
    pm_soa_transform *g = pose + joint / 4;
    int k = joint % 4;
    g->qx[k] = rotation.x;
    g->qy[k] = rotation.y;
    g->qz[k] = rotation.z;
    g->qw[k] = rotation.w;
    g->tx[k] = translation.x;
    g->ty[k] = translation.y;
    g->tz[k] = translation.z;
}

/* ---- runtime animation ---- */

/* Immutable, uniformly sampled keys of one clip in pose layout: its frames, rotations normalised
 * to unit length (so a key may differ from the clip's frame by a float step or two, about 1e-7).
 * Consecutive keys of a joint are stored in the same quaternion hemisphere so that sampling needs
 * no sign test. A looping clip
 * stores one more key after its last frame: the first frame moved on by the cycle's net
 * displacement (translations of joints that travel) and turned by its turn about the vertical
 * (the rotation of the joint that carries the root motion), so that root motion carries on across
 * the wrap (in-place loops get back their first frame), as pm_clip_sample does. Read-only after
 * pm_animation_build. */
typedef struct pm_animation {
    int joint_count;
    int soa_count;               /* pm_soa_count(joint_count) */
    int frame_count;             /* frames of the source clip */
    int key_count;               /* stored keys: frame_count, + 1 when looping */
    float frame_time;            /* seconds between keys */
    float duration;              /* pm_clip_duration of the source */
    int looping;
    pm_soa_transform *keys;      /* key_count * soa_count groups */
    pm_allocator allocator;
} pm_animation;

/* Builds the runtime form of a validated clip (allocator NULL = the clip's). The clip is not
 * referenced afterwards. */
PM_API pm_result pm_animation_build(pm_animation *out, const pm_clip *clip, const pm_allocator *allocator,
                                    pm_error *error);
PM_API void pm_animation_destroy(pm_animation *animation);

/* ---- sampling job ---- */

typedef enum pm_rotation_blend {
    PM_ROTATION_NLERP = 0, /* normalised lerp (default; what ozz and UE do between keys) */
    PM_ROTATION_SLERP = 1  /* constant angular speed, a little slower */
} pm_rotation_blend;

/* Local pose of an animation at a time: the two keys around it interpolated. */
typedef struct pm_sampling_job {
    const pm_animation *animation;
    float time;                  /* seconds; clamped to [0, duration] (the duration: the last
                                  * key), wrapped when looping: a whole positive number of
                                  * durations is the loop's end (its end key), not its start, so
                                  * that root motion can be taken up to the wrap; just past it is
                                  * the start again */
    pm_rotation_blend rotation;
    pm_soa_transform *output;    /* output_count >= animation->soa_count groups, not inside the
                                  * animation's keys */
    int output_count;
} pm_sampling_job;
PM_API pm_sampling_job pm_default_sampling_job(void);
PM_API pm_result pm_sampling_job_validate(const pm_sampling_job *job, pm_error *error);
PM_API pm_result pm_sampling_job_run(const pm_sampling_job *job, pm_error *error);

/* ---- blend job: N poses, normalised weights (BL3, BL4) ---- */

typedef struct pm_blend_input {
    const pm_soa_transform *pose; /* never read when weight is 0 (may then be NULL) */
    float weight;                 /* finite, >= 0 */
} pm_blend_input;

/* output = normalised weighted sum of the inputs: translations averaged, rotations nlerp'd on the
 * hemisphere of the input with the largest weight (the first of equal ones: a reference of
 * negligible weight half a turn from the others would let rounding pick their signs, and two
 * inputs holding one rotation could cancel). Exactly one non-zero weight copies that
 * input bit for bit. Weights must not all be zero; only their ratios matter, so any positive
 * finite weights (denormals, or values whose sum would overflow, included) give a finite blend of
 * finite poses. */
typedef struct pm_blend_job {
    const pm_blend_input *inputs;
    int input_count;              /* 1..PM_BLEND_MAX_INPUTS */
    int joint_count;
    pm_soa_transform *output;     /* pm_soa_count(joint_count) groups; may be one of the inputs */
} pm_blend_job;
PM_API pm_blend_job pm_default_blend_job(void);
PM_API pm_result pm_blend_job_validate(const pm_blend_job *job, pm_error *error);
PM_API pm_result pm_blend_job_run(const pm_blend_job *job, pm_error *error);

/* ---- layered blend per bone (BL2) ---- */

/* A branch of the hierarchy for a layer mask, as UE's FBranchFilter: `bone` (a joint name, or a
 * role a schema also names bones by: "@hips", "@left_upleg", "@head"...) and its descendants
 * down to `max_depth` levels below it (-1 = the whole branch). With blend_depth > 0 the weight
 * ramps up over the first levels, (depth_below_bone + 1) / blend_depth capped at 1, so that a cut
 * in the middle of the spine does not tear the pose; blend_depth <= 0 gives full weight at once.
 * `weight` scales the whole branch. */
typedef struct pm_branch_filter {
    const char *bone;
    int max_depth;
    int blend_depth;
    float weight;
} pm_branch_filter;
PM_API pm_branch_filter pm_default_branch_filter(void);

/* Expands filters once into per-joint weights (out_weights: joint_count floats). A joint covered
 * by several filters takes the largest weight; joints covered by none get 0.
 * Every filter is checked first: an error leaves out_weights as it was. */
PM_API pm_result pm_branch_filters_expand(float *out_weights, const pm_skeleton *skeleton,
                                          const pm_branch_filter *filters, int filter_count, pm_error *error);

typedef struct pm_blend_layer {
    const pm_soa_transform *pose; /* never read when weight is 0; else read on every joint */
    float weight;                 /* layer weight, [0, 1] */
    const float *joint_weights;   /* joint_count weights in [0, 1] (a mask); NULL = 1 on every joint */
} pm_blend_layer;

/* Per joint i: layer k contributes w_k(i) = weight_k * joint_weights_k[i]; when the sum exceeds 1
 * the layers are normalised to sum 1 and the base gets 0, else the base gets 1 - sum. Rotations are
 * nlerp'd: each layer is brought to the hemisphere of the sum before it (the base's weighted
 * rotation, then the layers before it), so over-full layers blend on their own short arc whatever
 * the base is. With one layer this is lerp(base, layer, w(i)) per joint. The
 * root joint's translation (root motion) is the base's unless blend_root_motion is set.
 *
 * A layer of weight > 0 is read on every joint, those its mask sets to 0 included (a select per
 * joint to skip them would slow every blend), and multiplied by that 0: its pose must be finite on
 * every joint (a NaN or infinity anywhere in it spoils the output there). With finite layers, a
 * joint no layer touches (every w_k(i) = 0) is the base's, bit for bit but for the sign of a zero
 * (a base component of -0 comes out +0: equal values).
 *
 * Errors: validate checks everything, the masks' values included (one pass over each mask). run
 * checks the masks while it blends and reports a bad one afterwards: the inputs are untouched but
 * a separate output buffer may then hold garbage. When the output is the base or a layer's pose,
 * run checks the masks before writing, so a failed run leaves every input as it was. */
typedef struct pm_layered_blend_job {
    const pm_soa_transform *base;
    const pm_blend_layer *layers;
    int layer_count;              /* 0..PM_BLEND_MAX_INPUTS */
    int joint_count;
    int root_joint;               /* joint whose translation is root motion (default 0; the hips on
                                   * skeletons whose root is a static dummy), -1 = none */
    int blend_root_motion;        /* 0 (default): the base owns the root's translation */
    pm_soa_transform *output;     /* may be the base */
} pm_layered_blend_job;
PM_API pm_layered_blend_job pm_default_layered_blend_job(void);
PM_API pm_result pm_layered_blend_job_validate(const pm_layered_blend_job *job, pm_error *error);
PM_API pm_result pm_layered_blend_job_run(const pm_layered_blend_job *job, pm_error *error);

/* ---- additive (BL5) ----
 *
 * Per joint, in local space: delta.rotation = base.rotation^-1 * source.rotation and
 * delta.translation = source.translation - base.translation; applied as
 *     out.rotation    = target.rotation * delta.rotation^w        (quaternion power, right-multiplied)
 *     out.translation = target.translation + w * delta.translation
 * so that applying the delta of (source, base) to base with w = 1 gives source back; w = -1 takes it
 * off again (delta^-1 is its conjugate: applied to source it gives base back) and w = 2 doubles it.
 * Fractional weights outside [0, 1] are powers too: |w| = n + f is delta^n (whole products) times
 * delta^f (the job's scaling), the conjugate's for w < 0, continuous in w. The delta is
 * the seed's "source * base^-1" written for posematch's product order (q1 * q2 applies q2 first):
 * the base is undone on the side the delta is applied from. Right-multiplying keeps the delta in the
 * joint's own frame (a nod stays a nod whatever the target's orientation); left-multiplying would
 * apply it in the parent's frame, a different pose (tests/test_blend_jobs.c shows both). */

typedef struct pm_additive_extract_job {
    const pm_soa_transform *source;
    const pm_soa_transform *base;
    int joint_count;
    pm_soa_transform *output;     /* may be source or base */
} pm_additive_extract_job;
PM_API pm_additive_extract_job pm_default_additive_extract_job(void);
PM_API pm_result pm_additive_extract_job_validate(const pm_additive_extract_job *job, pm_error *error);
PM_API pm_result pm_additive_extract_job_run(const pm_additive_extract_job *job, pm_error *error);

/* Largest |weight| of an additive apply job: exaggerations and subtractions of a few times the delta
 * are what animation needs; beyond that a weight is more likely a bug than a pose. */
#define PM_ADDITIVE_MAX_WEIGHT 64.0f

/* How a fractional weight scales the delta rotation. */
typedef enum pm_additive_scaling {
    PM_ADDITIVE_POWER = 0, /* delta^w, the quaternion power (default): a polynomial within 2e-6 rad of
                            * the exact power for any angle and weight (unit deltas, as extracted) */
    PM_ADDITIVE_NLERP = 1  /* nlerp(identity, delta, w): what ozz and UE do; exact at w = 0, 1/2, 1
                            * and for small deltas, a few degrees off for large ones; ~15 % faster */
} pm_additive_scaling;

/* The delta's translations are differences of the two poses' translations, the root's included: a
 * delta taken from clips captured at different places carries that offset onto the target's root
 * (mask the root joint's weight to 0, or extract against a base at the same place, to keep the
 * target's root motion). A delta rotation near half a turn has no unique short arc: fractional
 * weights may flip there.
 *
 * Errors: validate checks everything, the mask's values included (one pass over the mask). run
 * checks the mask while it applies and reports a bad one afterwards: target and delta are untouched
 * but a separate output buffer may then hold garbage. When the output is the target (or the delta),
 * run checks the mask before writing, so a failed run leaves the inputs as they were. */
typedef struct pm_additive_apply_job {
    const pm_soa_transform *target;
    const pm_soa_transform *delta; /* never read when weight is 0 */
    float weight;                  /* [-PM_ADDITIVE_MAX_WEIGHT, PM_ADDITIVE_MAX_WEIGHT]: 1 the delta, 0 none,
                                    * < 0 subtracts it, > 1 exaggerates it */
    pm_additive_scaling scaling;   /* used when a joint's weight is not 1 */
    const float *joint_weights;    /* joint_count weights in [0, 1]; NULL = 1 on every joint; not read
                                    * when weight is 0 */
    int joint_count;
    pm_soa_transform *output;      /* may be the target */
} pm_additive_apply_job;
PM_API pm_additive_apply_job pm_default_additive_apply_job(void);
PM_API pm_result pm_additive_apply_job_validate(const pm_additive_apply_job *job, pm_error *error);
PM_API pm_result pm_additive_apply_job_run(const pm_additive_apply_job *job, pm_error *error);

/* Offline: an additive clip, every frame of `source` relative to `base`: frame `base_frame` of base
 * when base_frame >= 0 (a reference pose, as engines usually do), else base sampled at the same
 * normalised time as each source frame. Skeletons must have the same topology. out may be source
 * or base (see pm_clip_create in anim.h). */
PM_API pm_result pm_clip_extract_additive(pm_clip *out, const pm_clip *source, const pm_clip *base, int base_frame,
                                          pm_error *error);

/* ---- local to model ---- */

/* Model-space transforms: model[j] = model[parent[j]] * local[j], roots placed by `root`.
 * The result of pm_local_to_model within float rounding (it converts four joints' locals at a
 * time and groups the products its own way; its SSE2, AVX2 and AVX-512 kernels agree bit for bit).
 *
 * Two output forms, either or both:
 * - `output`: joint_count pm_transform (rotation + translation);
 * - `output_matrices`: joint_count 4x4 affine matrices of 16 floats each, column-major (the layout
 *   of OpenGL, glTF and ozz's float4x4): matrix j starts at output_matrices + 16 * j and element
 *   (row r, column c) is at [4 * c + r]. Columns 0-2 are the rotated axes (w = 0), column 3 the
 *   translation (w = 1), so m * (p, 1) is the model-space point. Must be 16-byte aligned. Locals
 *   are turned into matrices four at a time and each joint is a 3x4 matrix product: as fast as
 *   the transform output, and no conversion afterwards.
 * With both set, the transforms are composed and then converted: the matrices are exactly those
 * of the output transforms (and the call costs about 1.5 times one output). */
typedef struct pm_local_to_model_job {
    const int32_t *parents;       /* parents[j] < j, -1 for roots */
    int joint_count;
    const pm_soa_transform *input;
    const pm_transform *root;     /* applied to root joints; NULL = identity */
    pm_transform *output;         /* joint_count transforms, or NULL (then output_matrices is set) */
    float *output_matrices;       /* 16 * joint_count floats, 16-byte aligned, or NULL */
} pm_local_to_model_job;
PM_API pm_local_to_model_job pm_default_local_to_model_job(void);
PM_API pm_result pm_local_to_model_job_validate(const pm_local_to_model_job *job, pm_error *error);
PM_API pm_result pm_local_to_model_job_run(const pm_local_to_model_job *job, pm_error *error);

PM_EXTERN_C_END

#endif
