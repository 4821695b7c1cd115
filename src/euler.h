/* Internal: quaternion <-> Euler angles for the six rotation orders BVH files use.
 *
 * An order is named by the order the channels are listed in a BVH file: PM_EULER_ZXY means
 * R = Rz(z) * Rx(x) * Ry(y) as matrices acting on column vectors (Y is applied to a vector
 * first, Z last), which is the standard BVH reading. Angles are indexed by axis (0 = X,
 * 1 = Y, 2 = Z) whatever the order, so callers never permute them. Conversions run in double
 * precision: BVH files are round-tripped through them. */
#ifndef PM_EULER_H
#define PM_EULER_H

#include "posematch/math_functions.h"

typedef enum pm_euler_order {
    PM_EULER_XYZ = 0,
    PM_EULER_XZY = 1,
    PM_EULER_YXZ = 2,
    PM_EULER_YZX = 3,
    PM_EULER_ZXY = 4,
    PM_EULER_ZYX = 5
} pm_euler_order;

#define PM_EULER_ORDER_COUNT 6

/* Axis (0 = X, 1 = Y, 2 = Z) at position i (0 = listed first, outermost matrix) of `order`. */
int pm_euler_axis(pm_euler_order order, int i);
/* The order listing axes a, b, c (a permutation of 0, 1, 2); PM_EULER_XYZ when it is not one. */
pm_euler_order pm_euler_order_from_axes(int a, int b, int c);
/* "XYZ", "ZXY", ... */
const char *pm_euler_order_name(pm_euler_order order);
/* Parses "ZXY" (any case); returns 1 on success, 0 (and leaves *out alone) otherwise. */
int pm_euler_order_parse(pm_euler_order *out, const char *name);

/* Rotation of Euler angles in radians, indexed by axis. */
pm_quat pm_euler_to_quat_d(const double radians[3], pm_euler_order order);
/* Euler angles in radians, indexed by axis, of a (not necessarily unit) quaternion. The middle
 * angle is in [-pi/2, pi/2], the others in (-pi, pi]; at gimbal lock the last listed angle is 0. */
void pm_euler_from_quat_d(double out_radians[3], pm_quat q, pm_euler_order order);

/* Float conveniences over the double forms. */
pm_quat pm_euler_to_quat(pm_vec3 radians, pm_euler_order order);
pm_vec3 pm_euler_from_quat(pm_quat q, pm_euler_order order);

/* Rotation order of a BVH channel list (pm_channel values): the rotation channels in the order
 * listed. Returns how many rotation channels there are (0..3); when 3, *out_order is their
 * order; with 1 or 2 it is the order that lists them first, missing axes appended in X, Y, Z
 * order (so zero angles on the missing axes give the same rotation). */
int pm_euler_order_of_channels(pm_euler_order *out_order, const uint8_t *channels, int channel_count);

#endif
