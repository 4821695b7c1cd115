/* Benchmark diagnostics: rebuild one mode's structure from the stored values and time it. */
#include <math.h>
#include <time.h>

#include "database_internal.h"
#include "index_build.h"
#include "pca.h"
#include "posematch/search.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}


/* PCA as the builder does it: covariance of the weighted rows and the eigen-decomposition. */
static pm_result time_pca(const pm_database *db, pm_error *error) {
    const int D = db->card;
    const pm_allocator *a = &db->allocator;
    double *mean = (double *)pm_alloc_array(a, (size_t)D, sizeof(double), 64);
    double *cov = (double *)pm_alloc_array(a, (size_t)D * D, sizeof(double), 64);
    double *eig = (double *)pm_alloc_array(a, (size_t)D, sizeof(double), 64);
    double *vec = (double *)pm_alloc_array(a, (size_t)D * D, sizeof(double), 64);
    pm_result r = PM_OK;
    if (!mean || !cov || !eig || !vec) r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "stats: out of memory");
    else r = pm_covariance(mean, cov, db->values, db->header->searchable_vectors, D, (size_t)db->stride, db->wsqrt, 1, a, error);
    if (r == PM_OK) pm_symmetric_eigen(cov, D, eig, vec);
    pm_free(a, mean);
    pm_free(a, cov);
    pm_free(a, eig);
    pm_free(a, vec);
    return r;
}

pm_result pm_database_structure_stats(double *out_ms, size_t *out_bytes, const pm_database *db, int mode, pm_error *error) {
    if (!out_ms || !out_bytes || !db) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_structure_stats: NULL argument");
    if (mode < PM_SEARCH_EXACT || mode > PM_SEARCH_VPTREE)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_structure_stats: mode %d is not a pm_search_mode (0..%d)",
                       mode, PM_SEARCH_VPTREE);
    if (!pm_db_has_mode(db, (pm_search_mode)mode))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "pm_database_structure_stats: the database was built without the %s mode's %s (search_modes)",
                       pm_search_mode_name((pm_search_mode)mode), pm_search_mode_structure((pm_search_mode)mode));
    const pmdb_header *h = db->header;
    const pm_allocator *a = &db->allocator;
    uint32_t vs = h->searchable_vectors;
    size_t base = (size_t)vs * db->stride * sizeof(float) + (size_t)h->pose_count * sizeof(uint64_t) +
                  (size_t)(h->vector_count + 1 + h->pose_count) * sizeof(uint32_t);
    *out_ms = 0.0;
    *out_bytes = base;
    if (mode == PM_SEARCH_BRUTEFORCE) return PM_OK;
    pm_result r = PM_OK;
    double t0 = now_ms();
    if (mode == PM_SEARCH_EXACT) {
        int ke = (int)h->exact_components, rows = ke + 1;
        float *coords = (float *)pm_alloc_array(a, (size_t)vs * ke + 1, sizeof(float), 64);
        float *rho = (float *)pm_alloc_array(a, (size_t)vs + 1, sizeof(float), 64);
        uint32_t bt_max = pm_bound_tree_max_nodes(vs, db->settings.exact_leaf_size);
        pmdb_bt_node *nodes = (pmdb_bt_node *)pm_alloc_array(a, (size_t)bt_max + 1, sizeof(pmdb_bt_node), 64);
        float *boxes = (float *)pm_alloc_array(a, ((size_t)bt_max + 1) * pm_bt_box_stride(ke), sizeof(float), 64);
        uint32_t *perm = (uint32_t *)pm_alloc_array(a, (size_t)vs + 1, sizeof(uint32_t), 64);
        if (!coords || !rho || !nodes || !boxes || !perm) r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "stats: out of memory");
        if (r == PM_OK) r = time_pca(db, error);
        if (r == PM_OK) {
            for (uint32_t i = 0; i < vs; i++) {
                for (int c = 0; c < ke; c++) coords[(size_t)i * ke + c] = db->bt_points[pm_bt_at(rows, i, c)];
                rho[i] = db->bt_points[pm_bt_at(rows, i, ke)];
            }
            if (pm_bound_tree_build(nodes, boxes, bt_max, perm, coords, rho, db->vec_min_addend, vs, ke,
                                    db->settings.exact_leaf_size) == UINT32_MAX)
                r = pm_fail(error, PM_ERR_LIMIT, "stats: the bound tree needs more than %u nodes (internal error)", bt_max);
            /* The value boxes of the stored tree (its rows are in leaf order already). */
            float *vboxes = (float *)pm_alloc_array(a, (size_t)h->bt_node_count * 2 * db->stride + 1, sizeof(float), 64);
            if (!vboxes) r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "stats: out of memory");
            else pm_bound_tree_value_boxes(vboxes, db->bt_nodes, h->bt_node_count, db->values, db->stride);
            pm_free(a, vboxes);
        }
        *out_bytes += (size_t)h->bt_node_count * (sizeof(pmdb_bt_node) + (pm_bt_box_stride(ke) + 2 * db->stride) * sizeof(float)) +
                      (size_t)pm_bt_padded(vs) * rows * sizeof(float) + (size_t)vs * sizeof(float) + (size_t)db->card * (db->card + 2) * sizeof(float);
        pm_free(a, coords);
        pm_free(a, rho);
        pm_free(a, nodes);
        pm_free(a, boxes);
        pm_free(a, perm);
    } else if (mode == PM_SEARCH_PCAKDTREE) {
        uint32_t np = h->kd_point_count;
        const uint32_t kd_max = pm_kd_tree_max_nodes(np, db->settings.kdtree_leaf_size);
        pmdb_kd_node *nodes = (pmdb_kd_node *)pm_alloc_array(a, (size_t)kd_max + 1, sizeof(pmdb_kd_node), 64);
        uint32_t *perm = (uint32_t *)pm_alloc_array(a, (size_t)np + 1, sizeof(uint32_t), 64);
        if (!nodes || !perm) r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "stats: out of memory");
        if (r == PM_OK) r = time_pca(db, error);
        if (r == PM_OK && pm_kd_tree_build(nodes, kd_max, perm, db->kd_points, np, (int)h->pca_components,
                                           db->settings.kdtree_leaf_size) == UINT32_MAX)
            r = pm_fail(error, PM_ERR_LIMIT, "stats: the KD-tree needs more than %u nodes (internal error)", kd_max);
        *out_bytes += (size_t)h->kd_node_count * sizeof(pmdb_kd_node) + (size_t)np * h->pca_components * sizeof(float) +
                      (size_t)(np + 1 + vs) * sizeof(uint32_t) + (size_t)db->card * (db->card + 2) * sizeof(float);
        pm_free(a, nodes);
        pm_free(a, perm);
    } else { /* PM_SEARCH_VPTREE */
        const uint32_t vp_max = pm_vp_tree_max_nodes(vs, PM_VP_LEAF_SIZE);
        pmdb_vp_node *nodes = (pmdb_vp_node *)pm_alloc_array(a, (size_t)vp_max + 1, sizeof(pmdb_vp_node), 64);
        uint32_t *items = (uint32_t *)pm_alloc_array(a, (size_t)vs + 1, sizeof(uint32_t), 64);
        float *scratch = (float *)pm_alloc_array(a, (size_t)vs + 1, sizeof(float), 64);
        float *w = (float *)pm_alloc_array(a, (size_t)db->stride, sizeof(float), 64);
        if (!nodes || !items || !scratch || !w) r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "stats: out of memory");
        if (r == PM_OK) {
            memcpy(w, db->wsqrt, (size_t)db->card * sizeof(float));
            pm_vp_rows c = {db->values, w, db->stride};
            if (pm_vp_tree_build(nodes, vp_max, items, scratch, vs, PM_VP_LEAF_SIZE, pm_vp_row_distance, &c) == UINT32_MAX)
                r = pm_fail(error, PM_ERR_LIMIT, "stats: the VP-tree needs more than %u nodes (internal error)", vp_max);
        }
        *out_bytes += (size_t)h->vp_node_count * sizeof(pmdb_vp_node) + (size_t)h->vp_item_count * sizeof(uint32_t);
        pm_free(a, nodes);
        pm_free(a, items);
        pm_free(a, scratch);
        pm_free(a, w);
    }
    *out_ms = now_ms() - t0;
    return r;
}
