/* Blend spaces described in JSON (tools only: the library has no JSON dependency).
 *
 * {
 *   "name": "locomotion",
 *   "axes": [ { "name": "speed", "min": 0, "max": 4 } ],       1 to 3 axes; min/max optional;
 *                                                               "mirror": "keep" | "negate" (default "keep")
 *   "sync": "feet" | "phase" | "none",                          default "feet"
 *   "align": "position_facing" | "position" | "none",           default "position_facing"
 *   "collinear": "line" | "error",                              default "line"
 *   "coplanar": "plane" | "error",                              3D samples in one plane; default "plane"
 *   "fps": 30,                                                  bake rate, 0.001..10000; default: the highest
 *                                                               rate among the samples blended at the point
 *   "grid": [5, 3],                                             database asset grid (one count per axis); default 5 per axis
 *   "grid_include_outside": false,
 *   "unit_scale": 0.01, "up": "y" | "z",                        BVH reading; default: detect
 *   "samples": [
 *     { "name": "walk", "clip": "clips/walk.bvh", "params": [1.2],
 *       "start": 0.5, "end": 1.6, "loop": true, "mirror": false }
 *   ]
 * }
 * Clip paths are relative to the JSON file. Unknown keys, repeated keys and values of the wrong
 * type are errors (a typo should not silently change a space). See docs/BLEND_SPACE.md. */
#ifndef PM_BLEND_SPACE_JSON_H
#define PM_BLEND_SPACE_JSON_H

#include "posematch/posematch.h"

/* Bake rates the tools accept, from "fps" and from --fps alike. */
#define PM_BLEND_FPS_MIN 0.001
#define PM_BLEND_FPS_MAX 10000.0

typedef struct pm_blend_space_file {
    pm_blend_space *space;      /* owned: pm_blend_space_file_free */
    pm_blend_grid_def grid;     /* "grid", "grid_include_outside" */
    float fps;                  /* "fps"; 0 = pm_blend_space_bake's default */
    int mirror_negate;          /* bit d: axes[d].mirror is "negate" (a mirrored copy of a baked
                                 * point sits at -x on that axis: pm_asset_def.mirror_negate_params) */
    char **clip_paths;          /* the samples' clip files as read (resolved against the JSON's
                                 * directory), so that a command writing a file can refuse to
                                 * overwrite one of them */
    int clip_path_count;
} pm_blend_space_file;

/* Reads SPACE.json and every clip it names, and creates the space. `bvh` may be NULL (detect);
 * "unit_scale" / "up" in the file apply where `bvh` leaves them to detection: the command line
 * outranks the file. Errors name the file and the field. */
pm_result pm_blend_space_load_json(pm_blend_space_file *out, const char *path, const pm_bvh_def *bvh, pm_error *error);
/* Same from text; clip paths are resolved against base_dir (NULL = current directory). */
pm_result pm_blend_space_from_json(pm_blend_space_file *out, const char *text, const char *source_name,
                                   const char *base_dir, const pm_bvh_def *bvh, pm_error *error);
void pm_blend_space_file_free(pm_blend_space_file *file);

/* For `posematch build` (PS12): bakes one clip per point of the file's grid (points outside the
 * samples' hull skipped unless grid_include_outside), at `fps` (0 = the file's "fps", else
 * pm_blend_space_bake's default). Points with the same blend (samples and weights: points outside
 * the hull projected onto one hull point, or every point of a one-sample space) are baked once,
 * at the first of them inside the hull, else the first in grid order; identical assets would
 * only add duplicate poses. Clips come in grid order. No point left is an error. *out_clips is
 * malloc'd; free with pm_blend_space_free_clips. When out_params is not NULL it receives the
 * points baked (malloc'd, count x dimensions floats). max_poses (> 0) stops the bake with
 * PM_ERR_LIMIT as soon as the clips hold more frames than that: a grid far beyond what a database
 * can hold fails before it fills the memory. */
pm_result pm_blend_space_file_bake_grid(pm_clip **out_clips, int *out_count, float **out_params, long long max_poses,
                                        const pm_blend_space_file *file, float fps, pm_error *error);
void pm_blend_space_free_clips(pm_clip *clips, int count);

#endif
