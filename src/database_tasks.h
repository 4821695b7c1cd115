/* Private: the builder's parallel tasks after the assets are in (src/database_index.c runs them
 * with pm_parallel_for): the projection of the rows into the exact mode's coordinates, in slices,
 * and the last three structures side by side. Each task writes only its own outputs and
 * allocates nothing, so the bytes never depend on the thread count. */
#ifndef PM_DATABASE_TASKS_H
#define PM_DATABASE_TASKS_H

#include "index_build.h"

/* The projection of the searchable rows in PM_PROJECT_TASKS slices (on the build's threads; every
 * row's coordinates are computed alone, so they do not depend on the slicing): the first KE
 * components and the residual norm for the bound tree, the first K for the KD-tree. */
enum { PM_PROJECT_TASKS = 64 };
typedef struct pm_project_job {
    const float *rows;
    size_t stride;
    const float *wsqrt, *mean, *basis;
    int dims, ke, k;
    float *z, *rho, *zk;
    double *scratch; /* 2 * dims doubles per task */
    uint32_t count;
    int tasks;
} pm_project_job;

/* Task `task` of PM_PROJECT_TASKS (context: a pm_project_job). */
void pm_build_project_task(void *context, int task);

/* The last three structures of a build (pm_build_trees_task): the VP-tree, the KD-tree with its point
 * order, and the bound tree's value boxes with the pose metadata and each vector's poses. */
typedef struct vp_job {
    pmdb_vp_node *nodes;
    uint32_t capacity; /* nodes */
    uint32_t *items;
    float *scratch;
    uint32_t count;
    const pm_vp_rows *rows;
    uint32_t count_out; /* UINT32_MAX: more than capacity */
    int skip;           /* the mode is left out (pm_database_def.search_modes): build nothing */
} vp_job;
typedef struct kd_job {
    pmdb_kd_node *nodes;
    uint32_t capacity; /* nodes */
    uint32_t *perm, *rank;
    const float *unique;
    float *points;
    uint32_t *start, *vecs, *fill;
    const uint32_t *id;
    uint32_t np, vs;
    int k, leaf_size;
    uint32_t count_out; /* UINT32_MAX: more than capacity */
    int skip;           /* as vp_job's */
} kd_job;
typedef struct meta_job {
    float *vboxes;
    const pmdb_bt_node *bt_nodes;
    uint32_t bt_count; /* nodes whose value boxes to compute: 0 when the exact mode is left out */
    const float *values;
    int stride;
    uint64_t *meta;
    uint32_t *vec_start, *vec_poses, *fill;
    const uint32_t *rank, *pose_vec, *pose_asset;
    const uint8_t *pose_blocked;
    const float *pose_addend;
    uint32_t poses, vectors;
} meta_job;
typedef struct pm_trees_job {
    vp_job vp;
    kd_job kd;
    meta_job meta;
} pm_trees_job;

/* Task 0, 1 or 2 (context: a pm_trees_job): the VP-tree, the KD-tree, the metadata. Task 0 is
 * the longest: taken first, so that on two threads the other one does the rest. */
void pm_build_trees_task(void *context, int task);

#endif
