/* Private: the blend space object, shared by the blend_space*.c files. */
#ifndef PM_BLEND_SPACE_INTERNAL_H
#define PM_BLEND_SPACE_INTERNAL_H

#include <math.h>

#include "delaunay.h"
#include "delaunay3.h"
#include "posematch/blend_space.h"

typedef enum space_mode {
    SPACE_POINT = 0,     /* one sample */
    SPACE_LINE = 1,      /* 1D, or samples on one line */
    SPACE_TRIANGLES = 2, /* 2D Delaunay triangulation, or 3D samples in one plane */
    SPACE_TETRAHEDRA = 3 /* 3D Delaunay tetrahedralisation */
} space_mode;

/* A node of the hull elements' hierarchy (blend_space_hull.c): bounding box of the elements below
 * and a capsule holding them (points within r of segment ab); a leaf holds `count` elements from
 * `first`, an inner node (count 0) has children `first` and `first + 1`. */
typedef struct pm_blend_hull_node {
    int64_t lo[3], hi[3];
    double a[3], b[3], r, inv; /* inv: 1 / |b - a|^2 (0 when a = b) */
    int32_t first, count;
} pm_blend_hull_node;
#define PM_BLEND_HULL_LEAF 4
/* 3D leaves: sibling leaves merged up to this many faces, whose bounds in doubles cost less than
 * another level of nodes. */
#define PM_BLEND_HULL_FACE_LEAF 8
/* A 3D hull face in doubles, for bounding its distance from a query before the exact arithmetic
 * (blend_space_hull.c): corners, outward unit normal, and per edge i (corners i + 1 to i + 2) the unit
 * normal within the face's plane pointing into the face and 1 / the edge's squared length. */
typedef struct pm_blend_hull_face {
    double p[3][3];
    double n[3];
    double e[3][3];
    double inv[3];
} pm_blend_hull_face;
/* A 3D hull node's oriented box (blend_space_hull.c): orthonormal axes, the first along its faces'
 * mean outward normal, and the range of its corners' coordinates along each, padded a unit. A
 * patch of a round hull is thin along its normal, where the axis-aligned box and the capsule are
 * as thick as the patch is wide. */
typedef struct pm_blend_hull_obb {
    double axis[3][3];
    double lo[3], hi[3];
} pm_blend_hull_obb;

/* A bucket of the cell tree: a leaf lists `count` cells from `first` in tree_items (increasing
 * index order); an inner node (count PM_BLEND_TREE_INNER) has its 4 or 8 children from `first`,
 * child c holding the upper half along axis a when bit a of c is set. A crowded leaf
 * (PM_BLEND_TREE_CROWDED) lists nothing: its cells are found through the trapezoidal map, from
 * DAG node `first`. In 3D every leaf is a walk leaf (PM_BLEND_TREE_WALK): `first` is the
 * tetrahedron a walk starts from, -1 when no tetrahedron meets the leaf. */
typedef struct pm_blend_tree_node {
    int32_t first, count;
} pm_blend_tree_node;
#define PM_BLEND_TREE_INNER (-1)
#define PM_BLEND_TREE_CROWDED (-2)
#define PM_BLEND_TREE_WALK (-3)
/* 2D leaves listing more triangles than this after refinement become crowded. */
#define PM_BLEND_TREE_CROWDED_ITEMS 16

/* The trapezoidal map of a 2D triangulation (blend_space_trapezoids.c). A DAG node is a leaf
 * (child[0] < 0; index: its trapezoid), a vertex test (index >= 0: left of the vertex in (x, y)
 * order to child[0], else child[1]) or an edge test (index = -1 - edge: below it to child[0],
 * above to child[1]). Edges run from their lesser end and know the triangles on either side (-1:
 * outside); a trapezoid keeps its bounding edges and vertices (-1: unbounded). */
typedef struct pm_blend_tz_node {
    int32_t index;
    int32_t child[2];
} pm_blend_tz_node;
typedef struct pm_blend_tz_edge {
    int32_t left, right, above, below;
} pm_blend_tz_edge;
typedef struct pm_blend_tz_trap {
    int32_t top, bottom, leftp, rightp;
} pm_blend_tz_trap;

/* A planar frame on the ground: heading about +Y and position (x, z) - or a motion in one. */
typedef struct pm_blend_ground {
    float yaw, x, z;
} pm_blend_ground;

/* A sample's gait cycles (blend_space_sync.c) and its root motion per cycle (blend_space_root.c). */
typedef struct pm_blend_cycles {
    int count;                  /* 1, or more for a looping sample cut at its left foot's touchdowns */
    float *starts;              /* count start times in seconds from starts[0] = 0; NULL for one cycle */
    /* count x slices, cycle by cycle (blend_space_root.c): the ground frame where each slice of a
     * cycle starts (slice 0: the cycle's start), and the ground motion over the slice, in that frame. */
    pm_blend_ground *slice_start;
    pm_blend_ground *slice_move;
    int carrier;                /* the joint its root motion is taken off and put back at */
    int carrier_depth;          /* its depth in the skeleton (a root is 1) */
    float start_heading;        /* slice_start[0]'s heading, unwrapped across the space's cells */
} pm_blend_cycles;

/* Where a sample plays at a blended phase (pm_blend_space_sample_place). */
typedef struct pm_blend_place {
    float time;                 /* seconds into its clip */
    int at_end;                 /* the end of its loop: its end key, not its first frame */
    int cycle;                  /* its cycle (0 for a one-shot) */
    long long loops;            /* whole loops played since phase 0 (within the space's phase wrap) */
} pm_blend_place;

struct pm_blend_space {
    pm_allocator allocator;
    char *name;
    int dimensions;
    char *axis_names[PM_BLEND_SPACE_MAX_DIMENSIONS];
    double axis_min[PM_BLEND_SPACE_MAX_DIMENSIONS], axis_max[PM_BLEND_SPACE_MAX_DIMENSIONS];
    pm_blend_sync sync;
    int sample_count;
    int joint_count, soa_count;
    pm_skeleton skeleton;       /* of the first sample in canonical order (order[0]) */
    float unit_scale;           /* that sample's clip metadata, for baked clips */
    pm_up_axis source_up;
    /* Per sample, in the order of the def. */
    char **names;
    float *params;              /* PM_BLEND_SPACE_MAX_DIMENSIONS per sample */
    pm_animation *animations;
    pm_blend_cycles *cycles;
    int phase_wrap;             /* pm_blend_space_phase_wrap */
    int root_ref;               /* the joint whose ground frame is the sample's (the hips); -1: no root blending */
    int root_axis;              /* its local axis (0 x, 1 y, 2 z) whose direction is the heading */
    int slices;                 /* root motion slices per cycle, the same fractions for every sample */
    /* Canonical order: samples sorted by snapped coordinates. */
    int32_t *order;             /* rank -> sample */
    pm_dt3_point *points;       /* by rank; coordinates beyond the dimensions are 0 */
    space_mode mode;
    int collinear, coplanar;
    /* SPACE_LINE: position of each rank along the line through points[0] and points[n-1]. */
    int64_t *line_s;
    /* SPACE_TRIANGLES: vertices are ranks. plane_points are the ranks' 2D coordinates: (x, y) in
     * 2D; for coplanar 3D samples the two coordinates other than plane_axis, the axis closest to
     * the plane's normal (an affine image of the plane, where barycentric weights are unchanged). */
    pm_dt_point *plane_points;
    pm_dt3_point plane_normal;
    int plane_axis;
    pm_triangulation tri;
    /* SPACE_TETRAHEDRA: vertices are ranks. */
    pm_tetrahedralization tet;
    /* The hull's elements - edges (2 ranks) of SPACE_TRIANGLES, faces (3 ranks) of
     * SPACE_TETRAHEDRA - with the cell owning each and its tie key, in the order of a
     * bounding-volume hierarchy that finds the nearest one to a query outside the hull. */
    int hull_arity, hull_count;
    int32_t *hull_items;
    int32_t *hull_cells;
    int32_t *hull_ties;
    pm_blend_hull_node *hull_nodes;
    pm_blend_hull_face *hull_faces; /* SPACE_TETRAHEDRA: per hull face, in hull_items' order */
    pm_blend_hull_obb *hull_obbs;   /* SPACE_TETRAHEDRA: per node of the hierarchy */
    /* A quadtree or octree of cell buckets (triangles over plane_points, or tetrahedra) for point
     * location (blend_space_tree.c). */
    pm_blend_tree_node *tree_nodes;
    int32_t *tree_items;
    /* The tree's nodes at depth tree_top_bits (or the leaves above them) over a uniform grid of
     * 2^tree_top_bits buckets per axis, x fastest: a query skips the top levels' chain of loads. */
    int32_t *tree_top;
    int tree_top_bits;
    int tree_node_count, tree_item_count, tree_crowded;
    /* Each vertex's (rank's) lowest-index cell. */
    int32_t *vertex_cell;
    /* 2D with crowded buckets: the trapezoidal map that serves them. */
    pm_blend_tz_node *tz_nodes;
    pm_blend_tz_edge *tz_edges;
    pm_blend_tz_trap *tz_traps;
    int tz_node_count, tz_edge_count, tz_trap_count, tz_height;
};

/* PM_BLEND_SYNC_FEET: restarts a looping clip at its left foot's touchdown and finds its gait
 * cycles (one when it has no left foot, touchdown or loop). */
pm_result pm_blend_space_sync_clip(pm_clip *clip, pm_blend_cycles *cycles, const pm_allocator *a, pm_error *error);
/* Root motion (blend_space_root.c): the reference joint, its heading axis and each sample's ground
 * frames per slice of each cycle (after the skeleton and canonical order are set); a sampled pose
 * taken out of its ground frame, *rel its ground motion since the start of slice `slice` of its
 * current cycle; and the blended pose put back in the blend's ground frame at that slice of
 * `blend_cycle`, moved on by the blended rel (one per sample). */
pm_result pm_blend_space_root_build(pm_blend_space *s, pm_error *error);
void pm_blend_space_root_split(const pm_blend_space *s, int i, const pm_blend_place *place, double blend_cycle,
                               int slice, pm_soa_transform *pose, pm_blend_ground *rel);
void pm_blend_space_root_join(const pm_blend_space *s, const pm_blend_space_weights *w, double blend_cycle, int slice,
                              const pm_blend_ground *rel, pm_soa_transform *out);
/* Weights as pm_blend_space_weights_at gives them: distinct samples in range, weights finite,
 * non-negative and summing to 1 (within 1e-3). What the public functions that take weights
 * from the caller check before reading them. */
int pm_blend_space_weights_usable(const pm_blend_space *s, const pm_blend_space_weights *w);
/* Least common multiple of the contributing looping samples' cycle counts; 0 beyond
 * PM_BLEND_SPACE_PERIOD_LIMIT. */
long long pm_blend_space_looping_period(const pm_blend_space *s, const pm_blend_space_weights *w);
/* The blend's cycle c at a phase (within the phase wrap: the phase is c + f, 0 < f <= 1, or 0). */
double pm_blend_space_blend_cycle(const pm_blend_space *s, float phase);
/* The root-motion slice of that cycle the phase is in: floor(f * slices), the last for f = 1. */
int pm_blend_space_blend_slice(const pm_blend_space *s, float phase);
/* Sets phase_wrap from the samples' cycles. */
void pm_blend_space_sync_wrap(pm_blend_space *s);
/* Where sample i plays at a blended phase (taken modulo the space's phase_wrap).
 * blended_duration (the blend's first cycle) is used by PM_BLEND_SYNC_NONE. */
void pm_blend_space_sample_place(pm_blend_place *out, const pm_blend_space *s, int i, float phase, float blended_duration);
/* Largest period pm_blend_space_period counts to (the job reduces phases by it). */
#define PM_BLEND_SPACE_PERIOD_LIMIT (1 << 30)

/* Snapped integer coordinates of a parameter point; *clamped (when not NULL) is set when it lay
 * outside the axis ranges. */
pm_dt3_point pm_blend_space_snap(const pm_blend_space *s, const float *params, int *clamped);
/* The cell tree over the cells built (pad: grid units the buckets are widened by, for queries that
 * reach them through rounded coordinates; leaves of more than `crowded` cells, when > 0, are made
 * crowded). */
pm_result pm_blend_space_build_tree(pm_blend_space *s, int pad, int crowded, pm_error *error);
/* The trapezoidal map over the 2D triangulation built. */
pm_result pm_blend_space_build_trapezoids(pm_blend_space *s, pm_error *error);
/* The lowest-index triangle containing snapped point q, or -1 outside the hull; `start` is the
 * DAG node a crowded leaf of the cell tree enters at (its `first`). */
int pm_blend_space_trapezoid_cell(const pm_blend_space *s, int32_t start, pm_dt_point q);
/* 3D: the lowest-index tetrahedron containing snapped point q, walking from tetrahedron `start`;
 * -1 when q is outside the hull. */
int pm_blend_space_walk(const pm_blend_space *s, int start, pm_dt3_point q);
/* The leaf of the cell tree holding snapped coordinates c (2 or 3 of them). */
static inline const pm_blend_tree_node *pm_blend_space_tree_leaf(const pm_blend_space *s, int dims, const int64_t *c) {
    int64_t x = c[0] < PM_DT_COORD_MAX ? c[0] : PM_DT_COORD_MAX - 1;
    int64_t y = c[1] < PM_DT_COORD_MAX ? c[1] : PM_DT_COORD_MAX - 1;
    int64_t z = dims == 3 ? (c[2] < PM_DT_COORD_MAX ? c[2] : PM_DT_COORD_MAX - 1) : 0;
    /* The top levels through the table, the rest by halving. */
    int shift = PM_DT_COORD_BITS - s->tree_top_bits;
    size_t top = ((size_t)(z >> shift) << (2 * s->tree_top_bits)) | ((size_t)(y >> shift) << s->tree_top_bits) | (size_t)(x >> shift);
    const pm_blend_tree_node *nd = s->tree_nodes + s->tree_top[top];
    for (int bit = shift - 1; nd->count == PM_BLEND_TREE_INNER; bit--) {
        int child = (int)((x >> bit) & 1) | (int)((y >> bit) & 1) << 1 | (int)((z >> bit) & 1) << 2;
        nd = s->tree_nodes + nd->first + child;
    }
    return nd;
}
/* Canonical order, duplicate check, degenerate cases and the cells with their location grid;
 * params, names and axis ranges must be set. */
pm_result pm_blend_space_build_cells(pm_blend_space *s, pm_blend_collinear collinear, pm_blend_coplanar coplanar,
                                     pm_error *error);

/* Weights of a query in one cell, before pruning: ranks and weights (zeros included). */
typedef struct pm_blend_raw_weights {
    int count;
    int rank[PM_BLEND_SPACE_MAX_WEIGHTS];
    double w[PM_BLEND_SPACE_MAX_WEIGHTS];
} pm_blend_raw_weights;
/* `count` ranks, all weights 0; then the weight of one of them. */
static inline void pm_blend_raw_set(pm_blend_raw_weights *rw, int count, const int *ranks) {
    rw->count = count;
    for (int i = 0; i < count; i++) {
        rw->rank[i] = ranks[i];
        rw->w[i] = 0.0;
    }
}
static inline void pm_blend_raw_put(pm_blend_raw_weights *rw, int rank, double w) {
    for (int i = 0; i < rw->count; i++)
        if (rw->rank[i] == rank) rw->w[i] = w;
}
/* The kind of cell a query was found in, with its ranks. */
typedef struct pm_blend_located {
    pm_blend_cell_kind kind;
    int cell;
    int count;
    int rank[PM_BLEND_SPACE_MAX_WEIGHTS];
    int outside;
} pm_blend_located;

/* The nearest point of segment ab (ranks) to snapped q, as two weights that read the same from
 * either end; and the squared distance from q to the point such weights give. */
void pm_blend_space_edge_weights(const pm_blend_space *s, int ra, int rb, pm_dt3_point q, pm_blend_raw_weights *rw);
double pm_blend_space_edge_distance2(const pm_blend_space *s, const pm_blend_raw_weights *rw, pm_dt3_point q);
/* Barycentric weights of q's orthogonal projection onto the plane of triangle abc (ranks) when it
 * falls in the closed triangle; 0 (nothing written) otherwise. */
int pm_blend_space_face_weights(const pm_blend_space *s, int ra, int rb, int rc, pm_dt3_point q, pm_blend_raw_weights *rw);
/* The hull's elements and their hierarchy (SPACE_TRIANGLES and SPACE_TETRAHEDRA, cells built). */
pm_result pm_blend_space_build_hull(pm_blend_space *s, pm_error *error);
/* A query outside the hull: the nearest point of the nearest hull element. */
void pm_blend_space_hull_nearest(const pm_blend_space *s, pm_dt3_point q, pm_blend_raw_weights *rw,
                                 pm_blend_located *at);
/* The same by a pass over every hull element (the reference for tests and benchmarks). */
void pm_blend_space_hull_nearest_brute(const pm_blend_space *s, pm_dt3_point q, pm_blend_raw_weights *rw,
                                       pm_blend_located *at);
/* pm_blend_space_weights_at with every cell tested in index order and every hull element measured:
 * what the location structures must reproduce bit for bit (tests, bench/bench_blend.c). */
pm_result pm_blend_space_weights_brute(pm_blend_space_weights *out, const pm_blend_space *s, const float *params,
                                       pm_error *error);

/* The sign of g . d for |g| < 2^51 and |d| < 2^26 per component: in doubles when the rounding
 * (at most 3 ulps of the sum of magnitudes) cannot change it, else exactly. */
static inline int pm_blend_space_plane_sign(pm_dt3_point g, pm_dt3_point d) {
    double px = (double)g.x * (double)d.x, py = (double)g.y * (double)d.y, pz = (double)g.z * (double)d.z;
    double v = px + py + pz, bound = (fabs(px) + fabs(py) + fabs(pz)) * 4.5e-16;
    if (v > bound) return 1;
    if (v < -bound) return -1;
    return pm_i128_sign(pm_dt3_dot_wide(d, g));
}
/* Barycentric weights of snapped point q in tetrahedron `tet`; 0 when q is outside it. A point on
 * a face or edge gets weights computed from that face's or edge's samples alone (tested: the
 * cells sharing it agree bit for bit). */
int pm_blend_space_tet_weights(const pm_blend_space *s, int tet, pm_dt3_point q, pm_blend_raw_weights *out);

#endif
