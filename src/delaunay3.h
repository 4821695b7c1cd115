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
