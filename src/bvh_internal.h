/* Internal: the pieces of the BVH reader and writer shared between their files. */
#ifndef PM_BVH_INTERNAL_H
#define PM_BVH_INTERNAL_H

#include "posematch/bvh.h"

/* Doubles below this round to a finite float (it is FLT_MAX plus half a unit in the last place):
 * "3.40282347e+38", which printf gives for FLT_MAX, must read back, and the writer refuses
 * values at or above it (converting them to float would be undefined). */
#define PM_BVH_FLOAT_LIMIT 0x1.ffffffp+127

/* Parses BVH text into a clip in the file's own units and axes (unit_scale 1, source_up Y,
 * no name). Every error names `source`, the line and the field. On failure *out is zeroed. */
pm_result pm_bvh_parse(pm_clip *out, const char *data, size_t size, const char *source,
                       const pm_allocator *allocator, pm_error *error);

/* Checks the unit_scale and up_axis fields of a read or write definition: unit_scale must be
 * 0 or positive and finite, up_axis -1, PM_UP_Y or PM_UP_Z. Messages read
 * "<prefix>: unit_scale <v> must be <unit_rule>" and
 * "<prefix>: up_axis <v> must be <axis_rule>, PM_UP_Y or PM_UP_Z". */
pm_result pm_bvh_check_units(float unit_scale, int up_axis, const char *prefix, const char *unit_rule,
                             const char *axis_rule, pm_error *error);

/* Locale-independent decimal parser for one whole token [s, s + n).
 * Returns 0 and *out on success, 1 when the token is not a number, 2 when it is NaN/Inf or
 * overflows a double. Accepts [+-]digits[.digits][(e|E)[+-]digits], ".5", "5.", "-.5". */
int pm_bvh_parse_double(double *out, const char *s, size_t n);

#endif
