/* Builders of the search structures over rows of floats (private). All deterministic: median
 * splits with index tie-breaks, children after parents (pre-order node numbering). */
#ifndef PM_INDEX_BUILD_H
#define PM_INDEX_BUILD_H

#include "database_internal.h"

/* The most nodes pm_bound_tree_build makes of n points with leaves of leaf_size: the capacity
 * its nodes and boxes need. */
uint32_t pm_bound_tree_max_nodes(uint32_t n, int leaf_size);

/* Bound tree for the exact mode: n points with `dims` coordinates (row stride dims) and a
 * residual norm each; addend[i] = smallest cost addend of point i. Fills nodes (capacity
 * pm_bound_tree_max_nodes), boxes (pm_bt_box_stride floats per node: lo[P], hi[P] over the coordinates then the
 * residual norm, zero-padded to P = pm_bt_box_lanes lanes, then the smallest addend and 3 zeros)
 * and perm (leaf order -> point). Nodes split across the coordinate with the largest mean
 * absolute deviation, at its mean kept within the middle half, on multiples of PM_BT_BLOCK
 * points. Returns the node count, or UINT32_MAX (nothing past `capacity` written) should the tree
 * need more than `capacity` nodes. `dims` <= PM_MAX_PCA_COMPONENTS. */
uint32_t pm_bound_tree_build(pmdb_bt_node *nodes, float *boxes, uint32_t capacity, uint32_t *perm, const float *coords,
                             const float *rho, const float *addend, uint32_t n, int dims, int leaf_size);

/* Each bound-tree node's box in the space of the stored values (normalised, unweighted): lo then
 * hi, `stride` floats each, per node. A node's rows are values rows first .. first + count - 1
 * (the values are stored in leaf order); children follow their parents (pre-order), so one
 * backward pass fills leaves from their rows and inner nodes from their children. */
void pm_bound_tree_value_boxes(float *out, const pmdb_bt_node *nodes, uint32_t count, const float *values, int stride);

/* The most nodes pm_kd_tree_build makes of n points with leaves of leaf_size. */
uint32_t pm_kd_tree_max_nodes(uint32_t n, int leaf_size);

/* UE-style KD-tree over n points of k coordinates: median split on the widest dimension.
 * Fills nodes (capacity pm_kd_tree_max_nodes) and perm (leaf order -> point). Returns the node
 * count, or UINT32_MAX (nothing past `capacity` written) should it need more. */
uint32_t pm_kd_tree_build(pmdb_kd_node *nodes, uint32_t capacity, uint32_t *perm, const float *points, uint32_t n, int k,
                          int leaf_size);

/* Distance between two points of a VP-tree build. */
typedef float (*pm_vp_distance_fn)(const void *context, uint32_t a, uint32_t b);

/* Rows of a value matrix under weights: the distance VP-trees are built with. */
typedef struct pm_vp_rows {
    const float *values, *wsqrt; /* wsqrt has `stride` entries, zero in the padding */
    int stride;
} pm_vp_rows;
float pm_vp_row_distance(const void *rows, uint32_t a, uint32_t b);

/* Points per VP-tree leaf: the builder's and the structure statistics' rebuild. */
#define PM_VP_LEAF_SIZE 16

/* The most nodes pm_vp_tree_build makes of n points with leaves of leaf_size. */
uint32_t pm_vp_tree_max_nodes(uint32_t n, int leaf_size);

/* VP-tree over points 0..n-1: fills nodes (capacity pm_vp_tree_max_nodes) and items (n: leaf
 * items and the slots vantage points left). `scratch` holds n floats. Returns the node count, or
 * UINT32_MAX (nothing past `capacity` written) should it need more. */
uint32_t pm_vp_tree_build(pmdb_vp_node *nodes, uint32_t capacity, uint32_t *items, float *scratch, uint32_t n,
                          int leaf_size, pm_vp_distance_fn distance, const void *context);

#endif
