/* Private: Delaunay tetrahedralisation of 3D integer points with exact predicates, for blend
 * spaces. Coordinates lie in [0, PM_DT_COORD_MAX] like the 2D points: orientation then needs
 * 75 bits and the in-sphere determinant 127, both exact in pm_i128. */
#ifndef PM_DELAUNAY3_H
#define PM_DELAUNAY3_H

#include "delaunay.h"
#include "delaunay_exact.h"

typedef struct pm_dt3_point {
    int64_t x, y, z;
} pm_dt3_point;

typedef struct pm_tetrahedralization {
    int tet_count;
    int32_t *vertices;  /* 4 per tetrahedron, positively oriented (pm_dt3_volume > 0) */
    int32_t *neighbors; /* 4 per tetrahedron: across the face opposite vertex i, -1 on the hull */
    int hull_count;     /* hull faces */
    int32_t *hull;      /* 2 per hull face: tetrahedron and the index (0..3) of the vertex opposite the face */
    pm_allocator allocator;
} pm_tetrahedralization;

/* Small exact helpers shared by delaunay3.c and the blend space (the predicates and weights depend
 * on their arithmetic order). */
static inline pm_dt3_point pm_dt3_sub(pm_dt3_point a, pm_dt3_point b) {
    pm_dt3_point r = {a.x - b.x, a.y - b.y, a.z - b.z};
    return r;
}
/* Exact for differences of snapped coordinates (below 2^50), hence exactly representable as doubles. */
static inline int64_t pm_dt3_dot(pm_dt3_point a, pm_dt3_point b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
/* Exact when one side has components below 2^26 and the other below 2^51. */
static inline pm_i128 pm_dt3_dot_wide(pm_dt3_point a, pm_dt3_point b) {
    pm_i128 r = pm_i128_mul(a.x, b.x);
    r = pm_i128_add(r, pm_i128_mul(a.y, b.y));
    return pm_i128_add(r, pm_i128_mul(a.z, b.z));
}
/* Axis of the largest normal component (lowest index on ties): projecting along it keeps the
 * plane's geometry non-degenerate, and the choice depends only on the plane. */
static inline int pm_dt3_dominant_axis(pm_dt3_point n) {
    uint64_t ax = pm_u64_abs(n.x), ay = pm_u64_abs(n.y), az = pm_u64_abs(n.z);
    if (ax >= ay && ax >= az) return 0;
    return ay >= az ? 1 : 2;
}
/* Coordinate `axis` (0, 1, 2 = x, y, z) of p. */
static inline int64_t pm_dt3_component(pm_dt3_point p, int axis) { return axis == 0 ? p.x : (axis == 1 ? p.y : p.z); }

/* Six times the signed volume of (a, b, c, d): det[b - a; c - a; d - a]. Positive when d lies on
 * the side of plane abc that (b - a) x (c - a) points to. Exact. */
pm_i128 pm_dt3_volume(pm_dt3_point a, pm_dt3_point b, pm_dt3_point c, pm_dt3_point d);
int pm_dt3_orient(pm_dt3_point a, pm_dt3_point b, pm_dt3_point c, pm_dt3_point d);
/* > 0 when e lies strictly inside the sphere through positively oriented a, b, c, d; exact sign. */
int pm_dt3_insphere(pm_dt3_point a, pm_dt3_point b, pm_dt3_point c, pm_dt3_point d, pm_dt3_point e);
/* For p in the plane of the (non-degenerate) triangle abc: > 0 when p lies strictly inside its
 * circumcircle, whatever the winding of a, b, c. Exact. */
int pm_dt3_incircle(pm_dt3_point a, pm_dt3_point b, pm_dt3_point c, pm_dt3_point p);
/* (b - a) x (c - a): exact, each component below 2^50 in magnitude. */
pm_dt3_point pm_dt3_normal(pm_dt3_point a, pm_dt3_point b, pm_dt3_point c);

/* Tetrahedralises `count` distinct points, not all coplanar. The result depends only on the points
 * and their order (Bowyer-Watson insertion in a fixed order derived from them, with exact tests;
 * co-spherical ties keep the tetrahedra already there). */
pm_result pm_delaunay3_build(pm_tetrahedralization *out, const pm_dt3_point *points, int count,
                             const pm_allocator *allocator, pm_error *error);
void pm_delaunay3_destroy(pm_tetrahedralization *t);

#endif
