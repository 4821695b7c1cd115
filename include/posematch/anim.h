/* posematch - editable animation data: skeletons, clips, forward kinematics, resampling,
 * units and up axis, root ("simulation bone") extraction and mirroring.
 *
 * These are the offline, editable structures (the "raw" side of an ozz-style split): plain
 * structs whose arrays the library allocates with the recorded allocator and frees in
 * pm_skeleton_destroy / pm_clip_destroy. Internally everything is Y-up and in metres; the
 * BVH reader converts on load and records what it found. */
#ifndef POSEMATCH_ANIM_H
#define POSEMATCH_ANIM_H

#include "base.h"
#include "math_functions.h"

PM_EXTERN_C_BEGIN

#define PM_MAX_JOINTS 4096       /* joints per skeleton */
#define PM_MAX_JOINT_DEPTH 512   /* longest root-to-leaf chain */
#define PM_MAX_FRAMES 10000000   /* frames per clip */

/* One BVH channel. The order joints list them in is kept for faithful round trips. */
typedef enum pm_channel {
    PM_CHANNEL_XPOSITION = 0,
    PM_CHANNEL_YPOSITION = 1,
    PM_CHANNEL_ZPOSITION = 2,
    PM_CHANNEL_XROTATION = 3,
    PM_CHANNEL_YROTATION = 4,
    PM_CHANNEL_ZROTATION = 5
} pm_channel;

typedef struct pm_skeleton {
    int joint_count;
    char **names;              /* joint_count NUL-terminated names */
    int32_t *parents;          /* -1 for a root; parents[j] < j always */
    pm_vec3 *rest_translations;/* local offset to the parent (BVH OFFSET), metres */
    pm_quat *rest_rotations;   /* local rest rotation (identity for BVH) */
    uint8_t *channel_counts;   /* source channels per joint, 0..6 */
    uint8_t *channels;         /* joint_count * 6 pm_channel values, first channel_counts[j] used, each once */
    uint8_t *has_end_site;     /* 1 when the joint ends in a BVH End Site */
    pm_vec3 *end_sites;        /* End Site offsets, metres */
    pm_allocator allocator;
} pm_skeleton;

/* A named per-frame scalar (PS1 Curve channel); values has frame_count entries. */
typedef struct pm_curve {
    char *name;
    float *values;
} pm_curve;

typedef enum pm_up_axis { PM_UP_Y = 0, PM_UP_Z = 1 } pm_up_axis;

typedef struct pm_clip {
    char *name;
    pm_skeleton skeleton;
    int frame_count;
    float frame_time;          /* seconds between frames, > 0 */
    int looping;               /* 1: the last frame is followed by the first */
    pm_quat *rotations;        /* frame_count * joint_count local rotations */
    pm_vec3 *translations;     /* frame_count * joint_count local translations, metres */
    int curve_count;
    pm_curve *curves;          /* curve_count curves, then a zeroed one (pm_clip_add_curve's arrays end so,
                                  which lets pm_clip_validate tell a curve_count beyond the array) */
    /* What the loader found and converted; informative. */
    float unit_scale;          /* metres per file unit that was applied */
    pm_up_axis source_up;      /* up axis of the source file */
    pm_allocator allocator;
} pm_clip;

/* ---- skeleton ---- */

/* Allocates a skeleton of `joint_count` joints with identity rest rotations, zero offsets,
 * no channels and empty names; the caller fills names with pm_skeleton_set_name. */
PM_API pm_result pm_skeleton_create(pm_skeleton *out, int joint_count, const pm_allocator *allocator, pm_error *error);
PM_API pm_result pm_skeleton_set_name(pm_skeleton *skeleton, int joint, const char *name, pm_error *error);
/* src must pass pm_skeleton_validate (else its error, prefixed "pm_skeleton_copy"). out may be src:
 * it is replaced only once the copy exists. On failure out, unless it is src, is zeroed.
 * allocator NULL = src's. */
PM_API pm_result pm_skeleton_copy(pm_skeleton *out, const pm_skeleton *src, const pm_allocator *allocator, pm_error *error);
PM_API void pm_skeleton_destroy(pm_skeleton *skeleton);
/* Checks that every array is allocated and joint_count within 1..PM_MAX_JOINTS; names (non-empty,
 * unique, no control characters, so that messages may quote them); parents (ordered, in range);
 * finite offsets and End Sites; unit rest rotations (within 1e-3 in squared length);
 * channel_counts <= 6 with each channel a pm_channel listed once; has_end_site 0 or 1. */
PM_API pm_result pm_skeleton_validate(const pm_skeleton *skeleton, pm_error *error);
/* Joint index by exact name, or -1 (also for NULL arguments and skeletons without names). */
PM_API int pm_skeleton_find_joint(const pm_skeleton *skeleton, const char *name);
/* 1 when both have the same joint names and parents (offsets may differ). */
PM_API int pm_skeleton_same_topology(const pm_skeleton *a, const pm_skeleton *b);

/* Joints a motion-matching setup needs, found from names; -1 where none was found. */
typedef struct pm_skeleton_roles {
    int hips;
    int left_upleg, right_upleg;
    int left_foot, right_foot;
    int left_toe, right_toe;
    int head;
} pm_skeleton_roles;
PM_API void pm_skeleton_find_roles(pm_skeleton_roles *out, const pm_skeleton *skeleton);

/* Left/right counterpart of every joint (itself for centre joints), found from names:
 * Left/Right, _L/_R, .L/.R and L_/R_, any case; then, only where the counterpart exists (else
 * the next is tried), an l/r prefix before a capital (lFoot, LHipJoint) and an upper-case L/R
 * glued to the end or the front of a lower-case word (HandL, Lhand), so that a namespace such as
 * "RIG:" is no side. A name is paired only when its counterpart exists. Returns the number of
 * pairs. pm_skeleton_find_roles reads sides the same way. */
PM_API int pm_skeleton_find_mirror_map(int32_t *out_map, const pm_skeleton *skeleton);

/* ---- clip ---- */

/* Allocates a clip of `frame_count` frames over a copy of `skeleton`, every frame at rest. The
 * skeleton must pass pm_skeleton_validate (else its error, prefixed "pm_clip_create"); it may be
 * out's own (&out->skeleton), out then being replaced only on success. frame_count outside
 * 1..PM_MAX_FRAMES is PM_ERR_LIMIT; frames x joints past the address space (possible within the
 * limits on a 32-bit system) is PM_ERR_OUT_OF_MEMORY, as a failed allocation is.
 *
 * The functions below that build a clip into `out` from input clips (create, copy, resample,
 * trim, mirror, pm_clip_extract_additive) accept out being the same clip as an input: the
 * result is built aside and the old clip released only on success. On failure every input is
 * untouched, and out, when it is not an input, is zeroed (safe to destroy). */
PM_API pm_result pm_clip_create(pm_clip *out, const pm_skeleton *skeleton, int frame_count, float frame_time,
                                const pm_allocator *allocator, pm_error *error);
/* src needs what pm_clip_sample needs, and its curves consistent (see pm_clip_validate). out may
 * be src. allocator NULL = src's. */
PM_API pm_result pm_clip_copy(pm_clip *out, const pm_clip *src, const pm_allocator *allocator, pm_error *error);
PM_API void pm_clip_destroy(pm_clip *clip);
/* Names are quoted in messages: a name with a control character is PM_ERR_INVALID_ARGUMENT. */
PM_API pm_result pm_clip_set_name(pm_clip *clip, const char *name, pm_error *error);
/* Adds (or replaces) a curve; `values` holds frame_count finite floats and is copied; the name
 * has no control characters. */
PM_API pm_result pm_clip_add_curve(pm_clip *clip, const char *name, const float *values, pm_error *error);
PM_API const pm_curve *pm_clip_find_curve(const pm_clip *clip, const char *name);
/* Checks the skeleton (pm_skeleton_validate), the clip's name (no control characters), sizes,
 * looping 0 or 1, source_up PM_UP_Y or PM_UP_Z, unit_scale positive and finite, curve_count
 * >= 0 and consistent with the curves array (each with a name and finite values), finite values
 * and unit quaternions (within 1e-3 in squared length, as the skeleton's rest rotations; the
 * message gives the length). */
PM_API pm_result pm_clip_validate(const pm_clip *clip, pm_error *error);
/* (frame_count - 1) * frame_time, or frame_count * frame_time for looping clips. */
PM_API float pm_clip_duration(const pm_clip *clip);

/* Local pose at `time` seconds (clamped, or wrapped for looping clips, where a whole positive
 * number of durations is the loop's end - the pose the runtime animation's end key holds - not
 * its first frame): slerp rotations, lerp translations between the two nearest frames. Between a loop's last frame and its first,
 * the translation of a joint that travels (root motion) heads for the first frame moved on by one
 * cycle (the last frame plus an average step), and the rotation of the joint that carries the root
 * motion (the topmost that travels, faster than a centimetre a second) for the first frame's
 * turned by the cycle's turn about the vertical, so root motion keeps going instead of sliding or
 * swinging back; joints that swing in place, and the rotations of all others, wrap to the first
 * frame.
 * out arrays hold joint_count entries.
 * Errors (the outputs untouched): a NULL argument, a clip that is not initialised (no frames,
 * NULL arrays, a joint count outside 1..PM_MAX_JOINTS, a frame time that is not positive and
 * finite, a name with a control character) - PM_ERR_INVALID_ARGUMENT; a time
 * that is not finite - PM_ERR_NUMERIC. */
PM_API pm_result pm_clip_sample(pm_quat *out_rotations, pm_vec3 *out_translations, const pm_clip *clip, float time,
                                pm_error *error);

/* Resamples to `fps` (0 < fps <= 10000) frames per second. Frame 0 keeps its time. A
 * non-looping clip whose rate is in a small ratio to the new one (30 -> 60, 24 -> 60, 120 -> 30,
 * within 1e-4, so that frame times rounded in files such as "0.0333333" count) is taken at that
 * exact ratio: new frames fall on source frames and fixed fractions of them, and the last source
 * frame is kept whenever the new grid reaches it (the timing stretches by at most 1e-4 for it).
 * At other rates it ends on the last new frame at or before its end. A looping clip keeps its
 * period to the nearest new frame. A result beyond PM_MAX_FRAMES frames is PM_ERR_LIMIT
 * ("resample: clip 'x' (...) at 10000 fps would have 1.9e+35 frames (limit 10000000)"). out may
 * be src. */
PM_API pm_result pm_clip_resample(pm_clip *out, const pm_clip *src, float fps, pm_error *error);
/* Keeps frames [first, first + count), which must lie within the clip; the result does not loop.
 * out may be src. */
PM_API pm_result pm_clip_trim(pm_clip *out, const pm_clip *src, int first, int count, pm_error *error);
/* Multiplies every translation, offset and End Site by `factor` (e.g. 0.01 for centimetres) and
 * the recorded unit_scale with it. `factor` must be positive and finite (mirror with
 * pm_clip_mirror): otherwise, or for a NULL or uninitialised clip, returns
 * PM_ERR_INVALID_ARGUMENT ("pm_clip_scale: factor nan must be finite and > 0") and leaves the
 * clip untouched. Values that overflow become Inf; pm_clip_validate reports them. */
PM_API pm_result pm_clip_scale(pm_clip *clip, float factor, pm_error *error);
/* Rotates a Z-up clip into Y-up (x, y, z) -> (x, z, -y) and records source_up = PM_UP_Z. A NULL
 * or uninitialised clip is PM_ERR_INVALID_ARGUMENT, the clip untouched. */
PM_API pm_result pm_clip_z_up_to_y_up(pm_clip *clip, pm_error *error);

/* Mirrors the motion across the world plane normal to `axis` (0 = X, 1 = Y, 2 = Z; -1 = the
 * axis that best separates left from right in the rest pose) and swaps left/right joints with
 * `mirror_map` (NULL = pm_skeleton_find_mirror_map). The result animates the same skeleton in the
 * same joint frames (so a clip and its mirror blend): joint frames need not be symmetric - each
 * mirrored rotation is corrected, from the rest pose where it is symmetric, else from the bone
 * offsets (every offset comes out as the skeleton's; a turn about a bone the offsets leave free
 * is chosen to match the clip's mean pose, or kept as the parent joint's where no choice comes
 * near it, as in a lopsided clip). src must pass pm_clip_validate. out may be src. */
PM_API pm_result pm_clip_mirror(pm_clip *out, const pm_clip *src, const int32_t *mirror_map, int axis,
                                pm_error *error);

/* ---- kinematics ---- */

/* Model-space (world) transforms from local ones: world[j] = world[parent[j]] * local[j].
 * parents[j] must be -1 (a root) or below j, and joint_count within 1..PM_MAX_JOINTS. Checked
 * before anything is written: a bad parent ("pm_local_to_model: joint 3 has parent 7 ...") or a
 * NULL array returns PM_ERR_INVALID_ARGUMENT, a bad count PM_ERR_LIMIT, with out_model
 * untouched. */
PM_API pm_result pm_local_to_model(pm_transform *out_model, const int32_t *parents, int joint_count,
                                   const pm_quat *local_rotations, const pm_vec3 *local_translations,
                                   pm_error *error);
/* World transforms of every joint of frame `frame`, which must lie in 0..frame_count-1 (it is
 * not clamped). Errors, with out_world untouched: a NULL argument, an uninitialised clip or a
 * frame outside the clip (PM_ERR_INVALID_ARGUMENT), and the skeleton's parents not ordered (see
 * pm_local_to_model). */
PM_API pm_result pm_clip_frame_world(pm_transform *out_world, const pm_clip *clip, int frame, pm_error *error);

/* Detected source properties, for inspection. */
typedef struct pm_clip_survey {
    pm_skeleton_roles roles;
    float hip_height;          /* median over up to 256 evenly spaced frames of the hips' height above
                                  the lowest foot (lowest joint without named feet), metres; 0
                                  without a hips joint */
    int first_frame_is_rest;   /* frame 0 is a rest-pose lead-in (a T-pose frame converters add):
                                  over the joints that animate, frame 0's mean rotation from the
                                  zero-rotation pose is under 5 degrees and under 0.35 x the clip's
                                  median, and frame 1 is farther from it; 0 below 3 frames */
    float floor_height;        /* robust lowest foot height over the clip (5th percentile of the
                                  lowest of the feet and toes; a foot without a toe joint counts its
                                  End Site, so such a rig stands on its toe tips, not its ankles),
                                  metres */
} pm_clip_survey;
/* Errors: a NULL argument or an uninitialised clip (PM_ERR_INVALID_ARGUMENT), parents that are
 * not ordered (see pm_local_to_model), PM_ERR_OUT_OF_MEMORY. *out (when not NULL) is zeroed
 * first, so it is all zeros on failure. */
PM_API pm_result pm_clip_survey_compute(pm_clip_survey *out, const pm_clip *clip, pm_error *error);

/* ---- root ("simulation bone") ---- */

typedef enum pm_facing_mode {
    PM_FACING_FROM_LEGS = 0, /* perpendicular to the line between the upper legs, on the ground */
    PM_FACING_HIPS_AXIS = 1  /* a local axis of the hips joint, projected to the ground */
} pm_facing_mode;

typedef enum pm_ground_mode {
    PM_GROUND_DETECT = 0,    /* the clip's robust lowest foot height (floors need not be at 0) */
    PM_GROUND_ZERO = 1       /* y = 0 */
} pm_ground_mode;

typedef struct pm_root_def {
    pm_facing_mode facing_mode;
    pm_vec3 hips_axis;          /* PM_FACING_HIPS_AXIS: local axis of the hips that points forward
                                   (finite always; of non-zero length in that mode). A clip mirrored
                                   with pm_clip_mirror keeps the source's joint frames, so the axis
                                   faces its root to the same side of its body as the source's */
    pm_ground_mode ground_mode;
    float position_smoothing;   /* Gaussian sigma in seconds applied to the ground position, 0 = none */
    float facing_smoothing;     /* Gaussian sigma in seconds applied to the facing direction */
    int hips;                   /* joint index, -1: from names */
    int left_upleg, right_upleg;/* joint indices, -1: from names; two different joints */
} pm_root_def;
PM_API pm_root_def pm_default_root_def(void);
/* Checks a def on its own: the enums, finite values and smoothing >= 0, a usable hips_axis,
 * joint indices >= -1 and distinct upper legs. pm_root_track_extract also checks the indices
 * against the clip's joints. */
PM_API pm_result pm_root_def_validate(const pm_root_def *def, pm_error *error);

/* Per-frame root transform: position on the ground under the hips, rotation = yaw only. A frame
 * whose facing has no direction on the ground (the legs' line or the hips axis within 1e-5, as a
 * fraction of its length, of vertical) keeps the previous frame's facing (+Z for the first). */
typedef struct pm_root_track {
    int frame_count;
    pm_transform *frames;
    pm_allocator allocator;
} pm_root_track;
/* `def` NULL = pm_default_root_def(); allocator NULL = the clip's. A hips position, facing or
 * floor that is not finite is PM_ERR_NUMERIC naming the frame. On failure *out is empty (safe to
 * destroy). */
PM_API pm_result pm_root_track_extract(pm_root_track *out, const pm_clip *clip, const pm_root_def *def,
                                       const pm_allocator *allocator, pm_error *error);
PM_API void pm_root_track_destroy(pm_root_track *track);

PM_EXTERN_C_END

#endif
