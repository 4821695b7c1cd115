/* Private: what clip sampling, root extraction, features and the runtime animation share about
 * clips and loops. */
#ifndef PM_CLIP_INTERNAL_H
#define PM_CLIP_INTERNAL_H

#include "posematch/anim.h"

/* pm_skeleton_copy without its check, for a `src` that passed pm_skeleton_validate; out must not
 * be src. */
pm_result pm_skeleton_copy_valid(pm_skeleton *out, const pm_skeleton *src, const pm_allocator *allocator,
                                 pm_error *error);

/* The frame count pm_clip_resample gives `src` at `fps` (a valid rate), and in *step the source
 * seconds between its frames (1 / fps, or a nearby step that lands on source frames). */
double pm_clip_resample_plan(const pm_clip *src, float fps, double *step);
/* What the frame operations need of a source clip (pm_clip_validate checks the values too):
 * arrays, counts, name and frame time, each a PM_ERR_INVALID_ARGUMENT naming `op`. */
pm_result pm_clip_check_ready(const pm_clip *c, const char *op, pm_error *error);

/* pm_clip_survey's first_frame_is_rest alone (the same test on the same frames), without the
 * survey's forward kinematics: what a database build needs of a clip before preparing it. */
pm_result pm_clip_rest_lead_in(int *out, const pm_clip *clip, pm_error *error);

/* The same as a count of frames, refused past PM_MAX_FRAMES as pm_clip_resample refuses it. */
pm_result pm_clip_resample_count(int *out, double *step, const pm_clip *src, float fps, pm_error *error);

/* The `wanted` joints and all their ancestors, in hierarchy order (ascending), into out (room for
 * joint_count; parents must be valid, each before its child). Returns how many. With
 * pm_clip_frame_world_listed, a feature that needs a few joints' world transforms computes
 * those chains only. */
int pm_joint_ancestry(int *out, const int32_t *parents, int joint_count, const int *wanted, int wanted_count);
/* World transforms of the listed joints (a pm_joint_ancestry list) at `frame` of a clip that
 * pm_clip_frame_world accepted: the same bits pm_clip_frame_world gives those joints; the other
 * entries of world are left as they were. */
void pm_clip_frame_world_listed(pm_transform *world, const pm_clip *c, int frame, const int *joints, int count);

/* pm_clip_mirror, also telling the left/right map (joint_count entries, when out_map is not
 * NULL) and the axis it used: the given ones, or those it found. */
pm_result pm_clip_mirror_used(pm_clip *out, int32_t *out_map, int *out_axis, const pm_clip *src, const int32_t *map_in,
                              int axis, pm_error *error);

/* Hands a result built in a local clip to the caller's *out. When out is one of the inputs its
 * old contents are released only now, on success, so that a failure leaves every input as it
 * was. */
void pm_clip_move_into(pm_clip *out, pm_clip *result, int out_is_input);
/* On failure: *out zeroed (safe to destroy) unless it is one of the inputs, which stay as they
 * were. Returns r. */
pm_result pm_clip_fail_into(pm_clip *out, int out_is_input, pm_result r);

/* Where a looping clip's first frame lies one cycle on, for joint j: for a joint that travels
 * (root motion: extrapolating the seam's steps misses frame 0 by more than three times half
 * their difference) the last frame plus one average step (the mean of the last and the first
 * step), so that root motion continues across the wrap (clip sampling, the runtime animation's
 * end key); for one that swings in place, its first frame's translation. Needs 2 frames. */
pm_vec3 pm_clip_loop_end_translation(const pm_clip *clip, int j);
/* How a looping clip's joint j turns about the vertical over one cycle (to its last frame, plus
 * one average step: the mean of the last and the first step's turn), as a rotation in its
 * parent's frame, whose vertical is the world's at frame 0 taken into it. Needs 2 frames. */
pm_quat pm_clip_loop_turn(const pm_clip *clip, int j);
/* 1 when joint j carries a looping clip's root motion: it travels (pm_clip_loop_end_translation
 * moves it, faster than a centimetre a second) and no joint above it travels. Only such a joint turns with the loop: below a joint
 * that travels, a joint's drift (a capture's noise on every joint's position channels) says
 * nothing of the loop's turn. */
int pm_clip_loop_carries(const pm_clip *clip, int j);
/* Where a looping clip's first frame's rotation lies one cycle on: for a joint that carries the
 * root motion, turned by pm_clip_loop_turn, so that a loop that curves keeps turning across the
 * wrap; for any other, its first frame's. */
pm_quat pm_clip_loop_end_rotation(const pm_clip *clip, int j);

/* Touchdowns in a height track h[0..n) (a foot's): the frames the lightly smoothed height drops
 * into the lowest 35% of its range after having risen above 60% of it since the last one - a
 * stance whose height dips twice (heel, then toe) counts once - at least min_gap frames apart.
 * A track that starts in a stance has a touchdown at frame 0 when its height is still falling
 * there, and none at its start otherwise (it was not seen). Writes up to n
 * frame indices to events, the range (90th - 10th percentile) to *range; h is smoothed in place;
 * scratch holds n floats. Returns the count. */
int pm_height_touchdowns(int *events, float *h, int n, int min_gap, float *scratch, float *range);

/* A loop's cycle transform from three of its root frames: where frame 0 lies one cycle on (the
 * last frame moved on by the last step), relative to frame 0. Root smoothing and feature
 * extraction continue a loop through it. */
pm_transform pm_loop_cycle(pm_transform first, pm_transform before_last, pm_transform last);

#endif
