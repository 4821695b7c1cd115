/* posematch - blend spaces (SPEC BL1, PS12).
 *
 * A blend space places clips ("samples") at coordinates of a 1D, 2D or 3D parameter space (speed,
 * direction, slope, ...). A query point selects the cell that contains it - a segment in 1D, a
 * triangle of the samples' Delaunay triangulation in 2D, a tetrahedron of their Delaunay
 * tetrahedralisation in 3D - and blends the cell's samples with barycentric weights: non-negative,
 * summing to 1, exactly 1 on a sample (which then reproduces its animation's keys bit for bit:
 * the clip's frames with unit rotations, pm_animation) and linear along
 * edges and faces. A point outside the samples' convex hull is projected onto the nearest point of
 * the hull (an edge in 2D, a face in 3D). Clips of different lengths are time-synchronised by
 * normalised phase: each sample plays at phase * its own duration and the blend lasts the
 * weight-averaged duration; by default (PM_BLEND_SYNC_FEET) every looping sample is first
 * restarted at its left foot's touchdown and cut into gait cycles at that foot's further
 * touchdowns, and the phase counts gait cycles: walks and runs trimmed anywhere in the gait, to
 * one stride or to several, keep their feet in step.
 *
 * Determinism: samples are put in a canonical order (by coordinates) before triangulating, so the
 * triangulation, the cell chosen and the weights do not depend on the order samples were given in
 * (Godot's BlendSpace2D famously did). Coordinates are normalised by the axis ranges and snapped to
 * a 2^24 integer grid where the orientation, in-circle and in-sphere predicates are exact.
 * Duplicate samples are rejected; samples that all lie on one line make a 1D space along that line
 * (or an error, PM_BLEND_COLLINEAR_ERROR), 3D samples that all lie in one plane a 2D space in that
 * plane (or an error, PM_BLEND_COPLANAR_ERROR). Weights on a face or edge shared by several cells
 * depend only on that face's or edge's samples, so co-spherical samples (a cube lattice), whose
 * tetrahedralisation is not unique, still blend continuously. Cells are found through a quadtree
 * or octree of cell buckets (a trapezoidal map where thin 2D cells crowd, a short walk in 3D), and
 * the nearest hull element through a hierarchy: lookup stays near constant or logarithmic in the
 * sample count whatever the layout, and allocates nothing.
 *
 * A space is immutable after pm_blend_space_create and may be shared between threads; it owns a
 * runtime pm_animation of each sample, so the clips it was made from can be freed. */
#ifndef POSEMATCH_BLEND_SPACE_H
#define POSEMATCH_BLEND_SPACE_H

#include "blend.h"

PM_EXTERN_C_BEGIN

#define PM_BLEND_SPACE_MAX_DIMENSIONS 3
#define PM_BLEND_SPACE_MAX_SAMPLES 4096
#define PM_BLEND_SPACE_MAX_WEIGHTS 4 /* samples one query can blend: a tetrahedron's vertices */
#define PM_BLEND_SPACE_MAX_PERIOD 16 /* most cycles a looping bake holds when its period is not one sample's own cycle count */

typedef struct pm_blend_space pm_blend_space;

typedef enum pm_blend_sync {
    PM_BLEND_SYNC_PHASE = 0, /* each sample at phase * its duration */
    PM_BLEND_SYNC_NONE = 1,  /* every sample at the same absolute time, phase * blended duration */
    PM_BLEND_SYNC_FEET = 2   /* as PHASE, with every looping sample first restarted at its left
                                foot's touchdown, so that cycles which start at different points of
                                the gait still blend in step, and cut into gait cycles at that foot's
                                further touchdowns: the phase counts gait cycles, and in the blend's
                                cycle c a sample of k cycles plays its cycle c mod k (default;
                                samples without a recognisable left foot or touchdown keep their
                                start and stay one cycle, and so do those whose foot barely lifts -
                                under 5% of the leg's length - or whose cycles differ in length by
                                more than a factor 0.6..1.6 of their mean) */
} pm_blend_sync;

/* How each sample clip is placed before blending: root positions and headings of different takes
 * are unrelated, and averaging them would drag the blend between two places. */
typedef enum pm_blend_align {
    PM_BLEND_ALIGN_POSITION_FACING = 0, /* frame 0's root (ground point under the hips, facing) to the origin, facing +Z (default) */
    PM_BLEND_ALIGN_POSITION = 1,        /* frame 0's hips above the origin (x = z = 0), heading kept */
    PM_BLEND_ALIGN_NONE = 2             /* as recorded */
} pm_blend_align;

typedef enum pm_blend_collinear {
    PM_BLEND_COLLINEAR_LINE = 0,  /* 2D or 3D samples on one line: a 1D space along the line (default) */
    PM_BLEND_COLLINEAR_ERROR = 1  /* ... an error */
} pm_blend_collinear;

typedef enum pm_blend_coplanar {
    PM_BLEND_COPLANAR_PLANE = 0,  /* 3D samples in one plane: a 2D space in that plane (default) */
    PM_BLEND_COPLANAR_ERROR = 1   /* ... an error (and so are 3D samples on one line) */
} pm_blend_coplanar;

typedef struct pm_blend_sample_def {
    const pm_clip *clip;        /* copied into the space; same skeleton topology for every sample */
    const char *name;           /* NULL = the clip's name, else "sample<i>" */
    float params[PM_BLEND_SPACE_MAX_DIMENSIONS]; /* coordinates; those beyond the space's dimensions unused */
} pm_blend_sample_def;
PM_API pm_blend_sample_def pm_default_blend_sample_def(void);

typedef struct pm_blend_space_def {
    const char *name;           /* NULL = "blendspace" */
    int dimensions;             /* 1, 2 or 3 */
    const char *axis_names[PM_BLEND_SPACE_MAX_DIMENSIONS]; /* NULL = "x", "y", "z" */
    /* Axis ranges: queries are clamped to them and samples must lie inside. min == max (both 0 by
     * default) takes the samples' extent on that axis. */
    float axis_min[PM_BLEND_SPACE_MAX_DIMENSIONS];
    float axis_max[PM_BLEND_SPACE_MAX_DIMENSIONS];
    const pm_blend_sample_def *samples;
    int sample_count;           /* 1..PM_BLEND_SPACE_MAX_SAMPLES */
    pm_blend_sync sync;
    pm_blend_align align;
    pm_blend_collinear collinear;
    const pm_allocator *allocator;
    pm_blend_coplanar coplanar; /* 3D samples in one plane */
} pm_blend_space_def;
PM_API pm_blend_space_def pm_default_blend_space_def(void);

PM_API pm_result pm_blend_space_create(pm_blend_space **out, const pm_blend_space_def *def, pm_error *error);
PM_API void pm_blend_space_destroy(pm_blend_space *space);

/* ---- inspection ----
 * The functions that return a value rather than a pm_result return NULL or 0 for a NULL space
 * and for a sample, axis or cell outside the space's (names and animations live as long as the
 * space). */
PM_API const char *pm_blend_space_name(const pm_blend_space *space);
PM_API int pm_blend_space_dimensions(const pm_blend_space *space);
PM_API int pm_blend_space_sample_count(const pm_blend_space *space);
PM_API const char *pm_blend_space_sample_name(const pm_blend_space *space, int sample);
/* Writes the sample's coordinates (dimensions floats). Errors (PM_ERR_INVALID_ARGUMENT, nothing
 * written): a NULL argument, a sample outside 0..sample_count-1. */
PM_API pm_result pm_blend_space_sample_params(float *out_params, const pm_blend_space *space, int sample,
                                              pm_error *error);
PM_API const pm_animation *pm_blend_space_sample_animation(const pm_blend_space *space, int sample);
PM_API const char *pm_blend_space_axis_name(const pm_blend_space *space, int axis);
/* The range of an axis (after defaulting to the samples' extent). Either output may be NULL, not
 * both. Errors (PM_ERR_INVALID_ARGUMENT, nothing written): NULL space, both outputs NULL, an axis
 * outside 0..dimensions-1. */
PM_API pm_result pm_blend_space_axis_range(float *out_min, float *out_max, const pm_blend_space *space, int axis,
                                           pm_error *error);
/* Skeleton of the space and of its baked clips: the topology every sample shares, with the rest
 * offsets of the first sample in canonical order (the smallest coordinates, axis 0 first), so that
 * it does not depend on the order samples were listed in. */
PM_API const pm_skeleton *pm_blend_space_skeleton(const pm_blend_space *space);
/* 1 when 2D or 3D samples were all collinear and the space works along their line. */
PM_API int pm_blend_space_is_collinear(const pm_blend_space *space);
/* 1 when 3D samples were all coplanar (not collinear) and the space works in their plane. */
PM_API int pm_blend_space_is_coplanar(const pm_blend_space *space);
/* Most samples one query of this space can blend: 1 (one sample), 2 (segments), 3 (triangles) or
 * 4 (tetrahedra). A job's scratch needs this many poses. */
PM_API int pm_blend_space_max_weights(const pm_blend_space *space);
/* Size of a pm_blend_space_job's scratch, in pm_soa_transform groups: max_weights poses of
 * pm_soa_count(joints) groups each (0 for NULL). Allocate that many groups, e.g. an array of
 * pm_soa_transform from aligned_alloc(16, ...) (malloc gives the 16-byte alignment only where the C
 * library aligns to 16, not on 32-bit ARM) or pm_pose_alloc(4 * count), and pass the same number
 * as scratch_count. pm_pose_alloc(joint_count * max_weights) is NOT enough when joint_count is not
 * a multiple of 4 (it rounds the product up, not each pose); and since the job can only trust
 * scratch_count, a count larger than the buffer lets it write past the end. */
PM_API int pm_blend_space_scratch_count(const pm_blend_space *space);
/* Cells: tetrahedra in 3D, triangles in 2D (or in the plane of coplanar 3D samples), segments in 1D
 * (or along the line of collinear samples), 0 with one sample. pm_blend_space_cell writes the
 * cell's sample indices (4, 3 or 2) and returns how many. */
PM_API int pm_blend_space_cell_count(const pm_blend_space *space);
PM_API int pm_blend_space_cell(const pm_blend_space *space, int cell, int *out_samples); /* 0: nothing written */

/* ---- weights ---- */

typedef enum pm_blend_cell_kind {
    PM_BLEND_CELL_POINT = 0,    /* a space of one sample */
    PM_BLEND_CELL_SEGMENT = 1,  /* a 1D segment (1D spaces, collinear samples) */
    PM_BLEND_CELL_TRIANGLE = 2, /* a triangle that contains the point */
    PM_BLEND_CELL_HULL_EDGE = 3,  /* the point was outside the hull: projected onto this edge of triangle `cell` */
    PM_BLEND_CELL_TETRAHEDRON = 4, /* a tetrahedron that contains the point (3D) */
    PM_BLEND_CELL_HULL_FACE = 5   /* the point was outside the 3D hull: projected onto this face of tetrahedron `cell` */
} pm_blend_cell_kind;

typedef struct pm_blend_space_weights {
    int count;                  /* samples with a non-zero weight, 1..4 */
    int samples[PM_BLEND_SPACE_MAX_WEIGHTS];   /* sample indices (def order), listed by coordinates */
    float weights[PM_BLEND_SPACE_MAX_WEIGHTS]; /* > 0, sum 1 */
    pm_blend_cell_kind cell_kind;
    int cell;                   /* tetrahedron, triangle or segment index; -1 for POINT */
    int cell_sample_count;      /* 4 for a tetrahedron, 3 for a triangle or hull face, 2 for a segment or
                                 * hull edge, 1 for a point */
    int cell_samples[PM_BLEND_SPACE_MAX_WEIGHTS];
    int outside;                /* 1 when the point was clamped to the axes or projected onto the hull (for
                                 * a space of one sample: any point but the sample's own) */
    float params[PM_BLEND_SPACE_MAX_DIMENSIONS]; /* the point actually used */
} pm_blend_space_weights;

/* Weights of the samples at `params` (dimensions floats). Allocation-free; weights below 1e-6 of
 * the total are dropped (a sample that barely contributes is not worth sampling) and the rest
 * renormalised. */
PM_API pm_result pm_blend_space_weights_at(pm_blend_space_weights *out, const pm_blend_space *space,
                                           const float *params, pm_error *error);
/* Duration of the blend's first cycle (phase 0 to 1): the weight-averaged duration of the
 * contributing samples' first cycles (their whole clips when they have one cycle). 0 for NULL
 * or malformed weights: weights as pm_blend_space_weights_at gives them are well formed; a count
 * or sample index out of range, a sample listed twice, a weight negative or not finite, or
 * weights not summing to 1 (within 1e-3) are not. */
PM_API float pm_blend_space_duration(const pm_blend_space *space, const pm_blend_space_weights *weights);
/* Duration of the blend's cycle `cycle` (phase cycle to cycle + 1): each contributing sample
 * plays its cycle `cycle` modulo its cycle count. The same for every cycle when every sample has
 * one. A runtime player advances the phase by dt / this duration. */
PM_API float pm_blend_space_cycle_duration(const pm_blend_space *space, const pm_blend_space_weights *weights,
                                           int cycle);
/* Gait cycles of a sample (PM_BLEND_SYNC_FEET; 1 with other syncs, or when none were found); 0
 * for a NULL space or a sample out of range. */
PM_API int pm_blend_space_sample_cycles(const pm_blend_space *space, int sample);
/* Cycles after which the blend repeats, every contributing sample back at its first cycle: the
 * least common multiple of their cycle counts (1 when each has one cycle). 1 also when a
 * contributing sample does not loop (the blend then runs from phase 0 to 1 once) and with
 * PM_BLEND_SYNC_NONE; 0 beyond 2^30 cycles, or for NULL or malformed weights (as for
 * pm_blend_space_duration). */
PM_API int pm_blend_space_period(const pm_blend_space *space, const pm_blend_space_weights *weights);
/* 1 when the blend closes into a loop: every contributing sample loops and, with
 * PM_BLEND_SYNC_NONE (absolute time), lasts the blend's cycle (within 0.1%): samples of other
 * lengths would be mid-cycle where it ends. Else 0 - the blend runs from phase 0 to 1 once, as
 * pm_blend_space_bake writes it - and 0 for NULL or malformed weights (as for
 * pm_blend_space_duration). */
PM_API int pm_blend_space_loops(const pm_blend_space *space, const pm_blend_space_weights *weights);
/* Cycles after which the job's phases wrap, whatever the weights: the least common multiple of
 * every looping sample's cycle count (1 when each has one; 0 beyond 2^30: no wrap). A multiple of
 * every blend's period. Not the blend's own period, so that the root does not move as a weight
 * comes or goes. 0 for NULL.
 * 1 with PM_BLEND_SYNC_NONE, which plays absolute time and does not wrap phases: each sample
 * wraps at its own duration, so phase 1 + f is not phase f when samples of other lengths
 * contribute, and a player that wraps the phase at 1 restarts them all at time 0 there - seamless
 * only where pm_blend_space_loops says the blend loops. */
PM_API int pm_blend_space_phase_wrap(const pm_blend_space *space);

/* ---- runtime job ---- */

/* Local pose of the space at `params` and `phase`, which counts the blend's cycles: 0 is the start
 * of the first, 1 its end; one-shot samples are clamped to their start below 0 and their end
 * beyond 1. Looping samples take the phase modulo pm_blend_space_phase_wrap (1 unless samples have
 * several gait cycles), negative phases too (-0.25 is 0.25 before the wrap's end), where a whole
 * wrap is its end, not its start again. Within it, phase c + f is fraction f of the
 * blend's cycle c, in which a looping sample of k cycles plays its cycle c mod k. Root motion is
 * blended as motion on the ground: each sample's ground frame (the heading and floor position of
 * its hips in model space) is taken off at the joint that carries its root motion (the topmost
 * joint above the hips that moves: the hips, or a root that carries the motion itself), the
 * rest (height, tilt, sway) blends like any pose, and the samples' ground motions since the
 * start of their current cycles blend as a planar motion composed onto the blend's ground frame
 * at the start of cycle c (the samples' starting frames averaged, moved on by the blended motion
 * of every earlier cycle), put back at the samples' carriers, each taking the share of it that the
 * weights of the samples carried at or above it add up to. So
 * root motion runs on where one sample wraps while others play on, and samples that turn
 * differently curve at their mean turn rate instead of drifting apart. A query on a sample, within
 * its own loop, is its clip exactly. A whole phase c > 0 is the end of cycle c - 1: a sample
 * whose loop ends there reads its end key (its first frame moved on and turned by the loop's
 * move), not its first frame. At the wrap the root returns to its phase-0 placement, as a
 * single loop's does at its end (a one-shot sample, which does not wrap, stays where it ended):
 * to accumulate root motion, take its change from one evaluation to the next at the same
 * parameters, and across a wrap the change to the wrap's end (phase = wrap) plus the change from
 * phase 0 on. A player advances the phase by dt over pm_blend_space_cycle_duration of the current
 * cycle and may keep it below the wrap (float phases lose precision as they grow). With
 * PM_BLEND_SYNC_NONE every sample plays at the absolute time phase * the blend's duration instead,
 * the phase taken as it is (see pm_blend_space_phase_wrap).
 * Runs the sampling jobs of the contributing samples into `scratch` and blends them;
 * allocation-free. */
typedef struct pm_blend_space_job {
    const pm_blend_space *space;
    const float *params;        /* dimensions floats */
    float phase;
    pm_rotation_blend rotation; /* interpolation between keys */
    pm_soa_transform *scratch;  /* pm_blend_space_scratch_count(space) groups (PM_BLEND_SPACE_MAX_WEIGHTS *
                                 * pm_soa_count(joints) fits every space) */
    int scratch_count;          /* groups the scratch really holds: trusted, and checked against the need */
    pm_soa_transform *output;   /* output_count >= pm_soa_count(joints) */
    int output_count;
    pm_blend_space_weights *out_weights; /* optional: the weights used */
} pm_blend_space_job;
PM_API pm_blend_space_job pm_default_blend_space_job(void);
PM_API pm_result pm_blend_space_job_validate(const pm_blend_space_job *job, pm_error *error);
PM_API pm_result pm_blend_space_job_run(const pm_blend_space_job *job, pm_error *error);

/* ---- database assets (PS12) ---- */

/* An ordinary clip of the blend at `params`: one time-synchronised cycle (phase 0..1 over the
 * weight-averaged duration; several when samples have several gait cycles, below) at about `fps`
 * frames per second (the frame time is the cycles' duration divided into whole frames), root
 * motion included, on the space's skeleton (pm_blend_space_skeleton).
 * fps is in 0.001..10000, or 0 for the highest frame rate among the contributing samples (on a
 * sample: its own rate). Looping when every contributing sample loops; otherwise the last frame is
 * phase 1, where looping samples are at their cycle's end (see the job). When looping samples
 * have several gait cycles the clip holds the blend's period (phase 0 to the period, each cycle at
 * its own duration) when that is at most PM_BLEND_SPACE_MAX_PERIOD cycles or the cycle count of
 * one of its samples (a sample baked alone keeps all its strides); otherwise it is a one-shot of
 * as many cycles as its sample of most cycles has. Named
 * "<space>@<p0>[,<p1>[,<p2>]]". Nothing depends on the order samples were listed in. Free it with
 * pm_clip_destroy. */
PM_API pm_result pm_blend_space_bake(pm_clip *out, const pm_blend_space *space, const float *params, float fps,
                                     pm_error *error);

/* Gait cycles pm_blend_space_bake writes at these weights, and in *out_looping (may be NULL)
 * whether it writes them as a loop. This can differ from pm_blend_space_loops and
 * pm_blend_space_period: a loop whose period is longer than PM_BLEND_SPACE_MAX_PERIOD (and than
 * each sample's cycle count) is baked as a one-shot of its sample of most cycles, so a tool that
 * reports a blend can say what a database asset of it will be. 0 (and not looping) for NULL
 * arguments or malformed weights (as for pm_blend_space_duration). */
PM_API int pm_blend_space_bake_cycles(const pm_blend_space *space, const pm_blend_space_weights *weights,
                                      int *out_looping);

typedef struct pm_blend_grid_def {
    int counts[PM_BLEND_SPACE_MAX_DIMENSIONS]; /* points per axis, >= 1 (1 = the axis midpoint) */
    int include_outside;        /* 0 (default): skip points outside the samples' hull (they would
                                 * only repeat hull motion); 1: keep every point (outside points are
                                 * projected, so several may give the same blend) */
} pm_blend_grid_def;
PM_API pm_blend_grid_def pm_default_blend_grid_def(void);

/* Parameter points of a grid over the axis ranges, axis 0 varying fastest, written as
 * `dimensions` floats per point into out_params (room for `capacity` points; NULL with capacity 0
 * just counts). *out_count receives the number of points the grid has; PM_ERR_LIMIT when that
 * exceeds capacity (nothing beyond capacity is written). */
PM_API pm_result pm_blend_space_grid(float *out_params, int capacity, int *out_count, const pm_blend_space *space,
                                     const pm_blend_grid_def *def, pm_error *error);

PM_EXTERN_C_END

#endif
