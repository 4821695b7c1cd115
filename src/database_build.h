/* Private: what the builder's two halves share. src/database_build.c turns assets into
 * normalised, de-duplicated vectors (build_vectors) and writes the file; src/database_index.c
 * builds the search structures over those vectors (build_index). Every array of a build comes
 * from one build_mem and is freed with it, whichever stage fails. */
#ifndef PM_DATABASE_BUILD_H
#define PM_DATABASE_BUILD_H

#include "database_internal.h"

/* Every temporary of a build, freed together. */
typedef struct build_mem {
    const pm_allocator *a;
    void *ptrs[96];
    int count;
} build_mem;

/* count x elem bytes, 64-byte aligned (one element when count is 0); NULL when out of memory. */
void *pm_build_alloc(build_mem *m, size_t count, size_t elem);
/* Frees one temporary before the others: a build's large arrays are done with at different
 * stages, and memory given back early is what later stages' arrays reuse. */
void pm_build_release(build_mem *m, void *p);

/* The def's progress callback; 1 when it asks the build to stop. */
static inline int pm_build_progress(const pm_database_def *d, const char *stage, float f) {
    return d->progress && d->progress(d->progress_user, stage, f) != 0;
}
pm_result pm_build_cancelled(pm_error *error);
pm_result pm_build_out_of_memory(pm_error *error, uint32_t poses);

/* Assigns each of n rows of `stride` floats a unique-vector id in order of first appearance
 * (out_id, n entries) and their count; rows compare by bits. */
pm_result pm_build_dedup_rows(uint32_t *out_id, uint32_t *out_count, const float *rows, uint32_t n, int stride,
                              const pm_allocator *alloc, pm_error *error);

/* The vectors the index is built over: every pose's normalised row, de-duplicated by bits. */
typedef struct build_vectors {
    uint32_t poses, count, searchable; /* poses, unique vectors, searchable vectors */
    int dims, stride;
    float *rows; /* poses x stride; released by pm_build_index once it has the vectors' values */
    const float *wsqrt;
    const uint32_t *pose_vec, *pose_asset;
    const uint8_t *pose_blocked; /* block transition or excluded */
    const float *pose_addend;
    const uint32_t *first_pose; /* per vector: its first pose */
    const uint8_t *is_searchable;
    const float *addend;        /* per vector: the smallest addend of its searchable poses */
    const uint32_t *searchable_vec; /* searchable rank (first-appearance order) -> vector */
} build_vectors;

/* The search structures, in the order and layout the file stores them. */
typedef struct build_index {
    float *values; /* vectors x stride: the searchable ones in bound-tree leaf order, then the rest */
    int pca_components, exact_components, bt_rows, bt_box;
    uint32_t bt_blocks;
    float *mean, *basis, *eigen; /* PCA of the weighted searchable vectors, as floats */
    pmdb_bt_node *bt_nodes;
    float *bt_boxes, *bt_points, *bt_value_boxes, *min_addend;
    uint32_t bt_count;
    pmdb_kd_node *kd_nodes;
    float *kd_points;
    uint32_t *kd_point_start, *kd_point_vecs;
    uint32_t kd_point_count, kd_count;
    pmdb_vp_node *vp_nodes;
    uint32_t *vp_items;
    uint32_t vp_count;
    uint64_t *meta;
    uint32_t *vec_pose_start, *vec_poses;
} build_index;

/* PCA, the exact mode's bound tree, the KD-tree in its own de-duplicated PCA space, the VP-tree
 * and the pose metadata, on def->threads threads (the same bytes for any count). */
pm_result pm_build_index(build_index *out, build_vectors *v, const pm_database_def *def, build_mem *mem,
                         pm_error *error);

#endif
