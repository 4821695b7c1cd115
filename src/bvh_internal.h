/* Internal: the pieces of the BVH reader shared between its files. */
#ifndef PM_BVH_INTERNAL_H
#define PM_BVH_INTERNAL_H

#include "posematch/bvh.h"

/* Parses BVH text into a clip in the file's own units and axes (unit_scale 1, source_up Y,
 * no name). Every error names `source`, the line and the field. On failure *out is zeroed. */
pm_result pm_bvh_parse(pm_clip *out, const char *data, size_t size, const char *source,
                       const pm_allocator *allocator, pm_error *error);

/* Up axis of a clip still in file axes: the direction from the feet to the head (or hips) over
 * the animated frames, so rigs whose rest pose is lying down (Maya-style bones) still work. */
pm_up_axis pm_bvh_detect_up_axis(const pm_clip *clip);

/* Metres per file unit for a Y-up clip still in file units: the known unit that puts the
 * median hip height above the lowest foot closest to 0.9 m (in log terms); 1 when the clip
 * gives no usable height. */
float pm_bvh_detect_unit_scale(const pm_clip *clip);

/* Locale-independent decimal parser for one whole token [s, s + n).
 * Returns 0 and *out on success, 1 when the token is not a number, 2 when it is NaN/Inf or
 * overflows a double. Accepts [+-]digits[.digits][(e|E)[+-]digits], ".5", "5.", "-.5". */
int pm_bvh_parse_double(double *out, const char *s, size_t n);

#endif
