/* Internal: the pieces of the BVH reader and writer shared between their files. */
#ifndef PM_BVH_INTERNAL_H
#define PM_BVH_INTERNAL_H

#include "posematch/bvh.h"

/* Doubles below this round to a finite float (it is FLT_MAX plus half a unit in the last place):
 * "3.40282347e+38", which printf gives for FLT_MAX, must read back, and the writer refuses
 * values at or above it (converting them to float would be undefined). */
#define PM_BVH_FLOAT_LIMIT 0x1.ffffffp+127

/* ---- the reader's limits, which the writer checks too: it never writes what cannot be read ---- */

/* Longest joint name, in bytes. */
#define PM_BVH_MAX_NAME_LENGTH 1024
/* Messages of the reader and the writer quote at most this many bytes of a name. */
#define PM_BVH_NAME_QUOTE 60

/* Whether byte c may be part of a joint name. The reader takes the rest of the ROOT/JOINT line up
 * to a '{', trimmed of blanks, and refuses control characters and '}' in it; the writer also
 * refuses '{' (it would end the name) and outer blanks (they would be trimmed away). */
static inline int pm_bvh_name_byte_ok(char c) {
    return (unsigned char)c >= 0x20 && c != 0x7f && c != '{' && c != '}';
}

/* A clip stores a rotation and a translation per joint and frame however few channels the file
 * has, so joints without channels cost memory but no text: a small file declaring millions of
 * frames of a big skeleton with one channel would take gigabytes. Above PM_BVH_SPARSE_BYTES of
 * motion the reader wants at least one channel per PM_BVH_MAX_JOINTS_PER_CHANNEL joints (real
 * captures have 3 to 6 per joint). A frame line takes at least 2 bytes per channel, so beyond
 * that floor the clip takes at most 28 * 4 / 2 = 56 bytes per byte of the file. */
#define PM_BVH_SPARSE_BYTES (64.0 * 1024.0 * 1024.0)
#define PM_BVH_MAX_JOINTS_PER_CHANNEL 4

/* Bytes reading `frames` frames of `joints` joints and `channels` channels allocates for the
 * motion: the clip's rotations and translations, and one frame line's values. */
double pm_bvh_motion_bytes(long long frames, int joints, int channels);

/* Whether the reader accepts that much motion for that many channels (see PM_BVH_SPARSE_BYTES). */
int pm_bvh_motion_fits(long long frames, int joints, int channels);

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
