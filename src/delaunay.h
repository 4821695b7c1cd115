/* Private: Delaunay triangulation of 2D integer points with exact predicates, for blend spaces. */
#ifndef PM_DELAUNAY_H
#define PM_DELAUNAY_H

#include <stdint.h>

#include "posematch/base.h"

/* Coordinates must lie in [0, PM_DT_COORD_MAX]: orientation then fits in int64 and the in-circle
 * determinant in 128 bits, so both are exact. */
#define PM_DT_COORD_BITS 24
#define PM_DT_COORD_MAX ((int64_t)1 << PM_DT_COORD_BITS)

typedef struct pm_dt_point {
    int64_t x, y;
} pm_dt_point;

typedef struct pm_triangulation {
    int triangle_count;
    int32_t *vertices;  /* 3 per triangle, counter-clockwise */
    int32_t *neighbors; /* 3 per triangle: across the edge opposite vertex i, -1 on the hull */
    int hull_count;     /* hull edges */
    int32_t *hull;      /* 2 per hull edge: triangle and the index (0..2) of the vertex opposite the edge */
    pm_allocator allocator;
} pm_triangulation;

/* > 0 when c is left of a->b (a, b, c counter-clockwise), < 0 right, 0 collinear. Exact. */
int64_t pm_dt_orient(pm_dt_point a, pm_dt_point b, pm_dt_point c);
/* > 0 when d is strictly inside the circle through counter-clockwise a, b, c; exact sign. */
int pm_dt_incircle(pm_dt_point a, pm_dt_point b, pm_dt_point c, pm_dt_point d);

/* Triangulates `count` distinct points, sorted by (x, y), not all collinear. The result depends
 * only on the points and their order: a sweep triangulation made Delaunay by exact Lawson flips
 * (co-circular ties keep the edge the sweep made). */
pm_result pm_delaunay_build(pm_triangulation *out, const pm_dt_point *points, int count, const pm_allocator *allocator,
                            pm_error *error);
/* The same with the in-circle test replaced: > 0 when point d lies strictly inside the circle
 * through a, b, c (indices into the points; a, b, c counter-clockwise in them). The points are
 * then an affine image of the plane the metric lives in (coplanar 3D samples seen along one
 * axis): orientation and sweep order survive an affine map, circles do not. */
typedef int (*pm_dt_incircle_fn)(void *context, int a, int b, int c, int d);
pm_result pm_delaunay_build_metric(pm_triangulation *out, const pm_dt_point *points, int count, pm_dt_incircle_fn incircle,
                                   void *context, const pm_allocator *allocator, pm_error *error);
void pm_delaunay_destroy(pm_triangulation *t);

#endif
