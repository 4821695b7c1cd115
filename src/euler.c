/* Quaternion <-> Euler angles for the six rotation orders (see euler.h for the convention). */
#include "euler.h"

#include <math.h>

#include "core.h"
#include "posematch/anim.h"

static const int8_t order_axes[PM_EULER_ORDER_COUNT][3] = {
    {0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0},
};
static const char *const order_names[PM_EULER_ORDER_COUNT] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};

static int order_valid(pm_euler_order order) { return (int)order >= 0 && (int)order < PM_EULER_ORDER_COUNT; }

int pm_euler_axis(pm_euler_order order, int i) {
    if (!order_valid(order) || i < 0 || i > 2) return 0;
    return order_axes[order][i];
}

pm_euler_order pm_euler_order_from_axes(int a, int b, int c) {
    for (int o = 0; o < PM_EULER_ORDER_COUNT; o++)
        if (order_axes[o][0] == a && order_axes[o][1] == b && order_axes[o][2] == c) return (pm_euler_order)o;
    return PM_EULER_XYZ;
}

const char *pm_euler_order_name(pm_euler_order order) { return order_valid(order) ? order_names[order] : "?"; }

static int axis_of_letter(char c) {
    if (c == 'x' || c == 'X') return 0;
    if (c == 'y' || c == 'Y') return 1;
    if (c == 'z' || c == 'Z') return 2;
    return -1;
}

int pm_euler_order_parse(pm_euler_order *out, const char *name) {
    if (!out || !name) return 0;
    int a[3];
    for (int i = 0; i < 3; i++)
        if ((a[i] = axis_of_letter(name[i])) < 0) return 0;
    if (name[3] != '\0' || a[0] == a[1] || a[1] == a[2] || a[0] == a[2]) return 0;
    *out = pm_euler_order_from_axes(a[0], a[1], a[2]);
    return 1;
}

/* Quaternions in double: the composition of three axis rotations is where BVH precision is
 * decided, so it is done before rounding to float once. */
typedef struct dquat {
    double x, y, z, w;
} dquat;

static dquat dquat_mul(dquat a, dquat b) {
    dquat r;
    r.x = a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y;
    r.y = a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x;
    r.z = a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w;
    r.w = a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z;
    return r;
}

static dquat dquat_axis(int axis, double angle) {
    dquat q = {0.0, 0.0, 0.0, 0.0};
    double s;
    pm_sincos_d(0.5 * angle, &s, &q.w);
    if (axis == 0) q.x = s;
    else if (axis == 1) q.y = s;
    else q.z = s;
    return q;
}

pm_quat pm_euler_to_quat_d(const double radians[3], pm_euler_order order) {
    if (!order_valid(order)) order = PM_EULER_XYZ;
    const int8_t *ax = order_axes[order];
    dquat q = dquat_mul(dquat_mul(dquat_axis(ax[0], radians[ax[0]]), dquat_axis(ax[1], radians[ax[1]])),
                        dquat_axis(ax[2], radians[ax[2]]));
    /* Keep w >= 0 so that identical angles always give the identical quaternion sign. */
    if (q.w < 0.0) {
        q.x = -q.x;
        q.y = -q.y;
        q.z = -q.z;
        q.w = -q.w;
    }
    return pm_quat_make((float)q.x, (float)q.y, (float)q.z, (float)q.w);
}

void pm_euler_from_quat_d(double out[3], pm_quat qf, pm_euler_order order) {
    if (!order_valid(order)) order = PM_EULER_XYZ;
    double x = qf.x, y = qf.y, z = qf.z, w = qf.w;
    double n2 = x * x + y * y + z * z + w * w;
    double s2 = n2 > 1e-300 ? 2.0 / n2 : 0.0;
    /* Rotation matrix m[row][col] for column vectors. */
    double m[3][3];
    m[0][0] = 1.0 - s2 * (y * y + z * z);
    m[0][1] = s2 * (x * y - z * w);
    m[0][2] = s2 * (x * z + y * w);
    m[1][0] = s2 * (x * y + z * w);
    m[1][1] = 1.0 - s2 * (x * x + z * z);
    m[1][2] = s2 * (y * z - x * w);
    m[2][0] = s2 * (x * z - y * w);
    m[2][1] = s2 * (y * z + x * w);
    m[2][2] = 1.0 - s2 * (x * x + y * y);

    int a = order_axes[order][0], b = order_axes[order][1], c = order_axes[order][2];
    /* For R = Ra(u) Rb(v) Rc(t): m[a][c] = sign * sin(v), where sign is +1 for the cyclic
     * orders (XYZ, YZX, ZXY) and -1 for the others. */
    double sign = (order == PM_EULER_XYZ || order == PM_EULER_YZX || order == PM_EULER_ZXY) ? 1.0 : -1.0;
    double cos_v = sqrt(m[a][a] * m[a][a] + m[a][b] * m[a][b]);
    double v = pm_atan2_d(sign * m[a][c], cos_v);
    double u, t;
    if (cos_v > 1e-9) {
        u = pm_atan2_d(-sign * m[b][c], m[c][c]);
        t = pm_atan2_d(-sign * m[a][b], m[a][a]);
    } else {
        /* Gimbal lock: only u +/- t is defined; put it all in u. With t = 0 the matrix is
         * Ra(u) Rb(v), whose column b holds u in rows c and b. */
        t = 0.0;
        u = pm_atan2_d(sign * m[c][b], m[b][b]);
    }
    out[a] = u;
    out[b] = v;
    out[c] = t;
}

pm_quat pm_euler_to_quat(pm_vec3 radians, pm_euler_order order) {
    double r[3] = {radians.x, radians.y, radians.z};
    return pm_euler_to_quat_d(r, order);
}

pm_vec3 pm_euler_from_quat(pm_quat q, pm_euler_order order) {
    double r[3];
    pm_euler_from_quat_d(r, q, order);
    return pm_vec3_make((float)r[0], (float)r[1], (float)r[2]);
}

int pm_euler_order_of_channels(pm_euler_order *out_order, const uint8_t *channels, int channel_count) {
    int axes[3];
    int n = 0;
    int seen[3] = {0, 0, 0};
    for (int i = 0; i < channel_count; i++) {
        int ch = channels[i];
        if (ch < PM_CHANNEL_XROTATION || ch > PM_CHANNEL_ZROTATION) continue;
        int axis = ch - PM_CHANNEL_XROTATION;
        if (seen[axis]) continue;
        seen[axis] = 1;
        axes[n++] = axis;
    }
    int count = n;
    for (int axis = 0; axis < 3 && n < 3; axis++)
        if (!seen[axis]) axes[n++] = axis;
    if (out_order) *out_order = pm_euler_order_from_axes(axes[0], axes[1], axes[2]);
    return count;
}
