#include "database_tasks.h"

#include <math.h>
#include <string.h>

#include "pca.h"

void pm_build_project_task(void *context, int task) {
    const pm_project_job *c = (const pm_project_job *)context;
    const int D = c->dims, KE = c->ke, K = c->k;
    double *y = c->scratch + (size_t)task * 2 * D, *pc = y + D;
    uint32_t first = (uint32_t)((uint64_t)c->count * (uint64_t)task / (uint64_t)c->tasks);
    uint32_t end = (uint32_t)((uint64_t)c->count * (uint64_t)(task + 1) / (uint64_t)c->tasks);
    for (uint32_t i = first; i < end; i++) {
        pm_pca_project(pc, D, c->rows + (size_t)i * c->stride, c->wsqrt, c->mean, c->basis, D, y);
        double res = 0.0;
        for (int d = 0; d < D; d++) {
            if (d < KE) c->z[(size_t)i * KE + d] = (float)pc[d];
            else res += pc[d] * pc[d];
            if (d < K) c->zk[(size_t)i * K + d] = (float)pc[d];
        }
        c->rho[i] = (float)sqrt(res);
    }
}

/* Lists of items by bucket, as compressed rows: item i goes to bucket rank[index[i]], and each
 * bucket keeps its items in increasing order. start (buckets + 1) and fill (buckets) come zeroed. */
static void bucket_lists(uint32_t *start, uint32_t *list, uint32_t *fill, const uint32_t *rank, const uint32_t *index,
                         uint32_t items, uint32_t buckets) {
    for (uint32_t i = 0; i < items; i++) start[rank[index[i]] + 1]++;
    for (uint32_t b = 0; b < buckets; b++) start[b + 1] += start[b];
    for (uint32_t i = 0; i < items; i++) {
        uint32_t b = rank[index[i]];
        list[start[b] + fill[b]++] = i;
    }
}

void pm_build_trees_task(void *context, int task) {
    pm_trees_job *c = (pm_trees_job *)context;
    if (task == 0) {
        vp_job *j = &c->vp;
        if (j->skip) return;
        j->count_out = pm_vp_tree_build(j->nodes, j->capacity, j->items, j->scratch, j->count, PM_VP_LEAF_SIZE,
                                        pm_vp_row_distance, j->rows);
    } else if (task == 1) {
        kd_job *j = &c->kd;
        if (j->skip) return;
        const int K = j->k;
        j->count_out = pm_kd_tree_build(j->nodes, j->capacity, j->perm, j->unique, j->np, K, j->leaf_size);
        if (j->count_out == UINT32_MAX) return;
        for (uint32_t i = 0; i < j->np; i++) {
            j->rank[j->perm[i]] = i;
            memcpy(j->points + (size_t)i * K, j->unique + (size_t)j->perm[i] * K, (size_t)K * sizeof(float));
        }
        bucket_lists(j->start, j->vecs, j->fill, j->rank, j->id, j->vs, j->np);
    } else {
        meta_job *j = &c->meta;
        pm_bound_tree_value_boxes(j->vboxes, j->bt_nodes, j->bt_count, j->values, j->stride);
        for (uint32_t p = 0; p < j->poses; p++)
            j->meta[p] = pm_meta_pack(j->rank[j->pose_vec[p]], j->pose_asset[p], j->pose_blocked[p],
                                      pm_float_to_half(j->pose_addend[p]));
        bucket_lists(j->vec_start, j->vec_poses, j->fill, j->rank, j->pose_vec, j->poses, j->vectors);
    }
}
