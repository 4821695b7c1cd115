/* The builder's second half: the search structures over the normalised, de-duplicated vectors
 * (src/database_build.c makes those). PCA of the weighted searchable vectors; the exact mode's
 * bound tree in its leading components, whose leaf order becomes the order of the stored rows;
 * then the KD-tree (pcakdtree) in its own de-duplicated PCA space, the VP-tree and the pose
 * metadata side by side on the build's threads. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "database_build.h"
#include "database_tasks.h"
#include "index_build.h"
#include "parallel.h"
#include "pca.h"

#define PROGRESS(def, stage, fraction)                                                                                 \
    do {                                                                                                               \
        if (pm_build_progress(def, stage, fraction)) return pm_build_cancelled(error);                                 \
    } while (0)
#define OOM_IF(cond)                                                                                                   \
    do {                                                                                                               \
        if (cond) return pm_build_out_of_memory(error, v->poses);                                                     \
    } while (0)

/* Automatic exact components: the tree splits on these, the rest goes into one residual norm.
 * More components make the bound tighter (fewer exact costs) and each bound dearer. With the
 * AVX2 walk, the value boxes and the spread-based splits, 99.9% of the variance is where the two
 * balance on locomotion data (`posematch build --exact-components K` and `posematch bench`
 * compare choices): 23 components on both presets' bench databases, against 19 at 99.5% a third
 * of the exact costs and a lower noisy median and p99, for 6% more bytes; all 27 or 31
 * components gain little more and lose under dynamic weights. A multiple of 4 minus one keeps a
 * point (coordinates + residual) a whole number of SIMD lanes. */
static int auto_exact_components(const double *eigen, int card) {
    double total = 0.0;
    for (int i = 0; i < card; i++) total += PM_MAX(eigen[i], 0.0);
    int k = 3;
    double part = 0.0;
    for (int i = 0; i < card; i++) {
        part += PM_MAX(eigen[i], 0.0);
        if (total <= 0.0 || part >= 0.999 * total) {
            k = i + 1;
            break;
        }
    }
    k = (k + 3) / 4 * 4 - 1;
    if (k < 7) k = 7;
    if (k > 31) k = 31;
    return PM_MIN(k, card);
}

/* values[i] = values[perm[i]] for the first n rows of `stride` floats, in place: each cycle of
 * the permutation is followed once, through one row of `tmp` (done: n bits, zeroed). */
static void permute_rows(float *values, const uint32_t *perm, uint32_t n, int stride, float *tmp, uint8_t *done) {
    const size_t bytes = (size_t)stride * sizeof(float);
    for (uint32_t i = 0; i < n; i++) {
        if (done[i >> 3] >> (i & 7) & 1) continue;
        memcpy(tmp, values + (size_t)i * stride, bytes);
        uint32_t k = i;
        for (;;) {
            done[k >> 3] |= (uint8_t)(1u << (k & 7));
            uint32_t next = perm[k];
            if (next == i) {
                memcpy(values + (size_t)k * stride, tmp, bytes);
                break;
            }
            memcpy(values + (size_t)k * stride, values + (size_t)next * stride, bytes);
            k = next;
        }
    }
}

/* Between the stages: the projections of the searchable vectors (in first-appearance order) and
 * the bound tree's order of them. */
typedef struct projected {
    float *z, *rho; /* the first exact_components coordinates and the residual norm */
    float *zk;      /* the first pca_components coordinates */
    float *addend;  /* each one's smallest addend */
    uint32_t *bt_perm; /* leaf order -> first-appearance rank */
} projected;

/* The value rows (the searchable ones first in order of appearance - the PCA's input - then the
 * rest; the pose rows are released), the PCA, and every searchable vector's projection. */
static pm_result fit_pca(build_index *x, projected *pr, build_vectors *v, const pm_database_def *def, build_mem *mem,
                         pm_error *error) {
    const int D = v->dims, S = v->stride;
    const uint32_t V = v->count, VS = v->searchable;
    PROGRESS(def, "pca", 0.6f);
    double *pmean = (double *)pm_build_alloc(mem, (size_t)D, sizeof(double));
    double *cov = (double *)pm_build_alloc(mem, (size_t)D * D, sizeof(double));
    double *eig = (double *)pm_build_alloc(mem, (size_t)D, sizeof(double));
    double *basis = (double *)pm_build_alloc(mem, (size_t)D * D, sizeof(double));
    x->values = (float *)pm_build_alloc(mem, (size_t)V * S, sizeof(float));
    OOM_IF(!pmean || !cov || !eig || !basis || !x->values);
    for (uint32_t i = 0; i < VS; i++)
        memcpy(x->values + (size_t)i * S, v->rows + (size_t)v->first_pose[v->searchable_vec[i]] * S,
               (size_t)S * sizeof(float));
    for (uint32_t k = 0, at = VS; k < V; k++)
        if (!v->is_searchable[k])
            memcpy(x->values + (size_t)at++ * S, v->rows + (size_t)v->first_pose[k] * S, (size_t)S * sizeof(float));
    pm_build_release(mem, v->rows);
    v->rows = NULL;
    pm_result r = pm_covariance(pmean, cov, x->values, VS, D, (size_t)S, v->wsqrt, def->threads, mem->a, error);
    if (r != PM_OK) return r;
    pm_symmetric_eigen(cov, D, eig, basis);
    const int K = def->pca_components;
    const int KE = def->exact_components ? def->exact_components : auto_exact_components(eig, D);
    x->pca_components = K;
    x->exact_components = KE;
    x->bt_rows = KE + 1;
    x->bt_box = pm_bt_box_stride(KE);
    x->bt_blocks = (VS + PM_BT_BLOCK - 1) / PM_BT_BLOCK;

    PROGRESS(def, "trees", 0.7f);
    pr->z = (float *)pm_build_alloc(mem, (size_t)(VS ? VS : 1) * KE, sizeof(float));
    pr->rho = (float *)pm_build_alloc(mem, VS, sizeof(float));
    pr->zk = (float *)pm_build_alloc(mem, (size_t)(VS ? VS : 1) * K, sizeof(float));
    pr->addend = (float *)pm_build_alloc(mem, VS, sizeof(float));
    double *y = (double *)pm_build_alloc(mem, (size_t)PM_PROJECT_TASKS * 2 * D, sizeof(double)); /* per task: y, pc */
    OOM_IF(!pr->z || !pr->rho || !pr->zk || !pr->addend || !y);
    /* Stored as floats: project with the float values the search will use, so that query
     * and data coordinates are computed the same way. */
    x->mean = (float *)pm_build_alloc(mem, (size_t)D, sizeof(float));
    x->basis = (float *)pm_build_alloc(mem, (size_t)D * D, sizeof(float));
    x->eigen = (float *)pm_build_alloc(mem, (size_t)D, sizeof(float));
    OOM_IF(!x->mean || !x->basis || !x->eigen);
    for (int i = 0; i < D; i++) {
        x->mean[i] = (float)pmean[i];
        x->eigen[i] = (float)eig[i];
    }
    for (size_t i = 0; i < (size_t)D * D; i++) x->basis[i] = (float)basis[i];
    pm_project_job pj = {x->values, (size_t)S, v->wsqrt, x->mean, x->basis, D,  KE,
                         K,         pr->z,     pr->rho, pr->zk,  y,        VS, PM_PROJECT_TASKS};
    pm_parallel_for(PM_PROJECT_TASKS, def->threads, pm_build_project_task, &pj);
    for (uint32_t i = 0; i < VS; i++) pr->addend[i] = v->addend[v->searchable_vec[i]];
    return PM_OK;
}

/* Whether the database keeps a mode's structure (pm_database_def.search_modes): one left out is
 * not written (write_database), so what only it reads is not computed either. */
static int keeps_mode(const pm_database_def *def, pm_search_mode mode) {
    return (def->search_modes & PM_SEARCH_MODE_BIT(mode)) != 0;
}

/* The exact bound tree; its leaf order becomes the order of the value rows, and its leaf blocks
 * the points the walk reads (coordinates, residual norm, smallest addend). Without the exact mode
 * the tree still orders the rows, but its points are not made. */
static pm_result bound_tree(build_index *x, projected *pr, const build_vectors *v, const pm_database_def *def,
                            build_mem *mem, pm_error *error) {
    const uint32_t VS = v->searchable;
    const int KE = x->exact_components, rows = x->bt_rows;
    PROGRESS(def, "trees", 0.75f);
    const uint32_t bt_max = pm_bound_tree_max_nodes(VS, def->exact_leaf_size);
    x->bt_nodes = (pmdb_bt_node *)pm_build_alloc(mem, bt_max, sizeof(pmdb_bt_node));
    x->bt_boxes = (float *)pm_build_alloc(mem, (size_t)bt_max * x->bt_box, sizeof(float));
    pr->bt_perm = (uint32_t *)pm_build_alloc(mem, VS, sizeof(uint32_t));
    OOM_IF(!x->bt_nodes || !x->bt_boxes || !pr->bt_perm);
    x->bt_count = pm_bound_tree_build(x->bt_nodes, x->bt_boxes, bt_max, pr->bt_perm, pr->z, pr->rho, pr->addend, VS, KE,
                                      def->exact_leaf_size);
    if (x->bt_count == UINT32_MAX)
        return pm_fail(error, PM_ERR_LIMIT, "database: the bound tree needs more than %u nodes (internal error)", bt_max);

    const int exact = keeps_mode(def, PM_SEARCH_EXACT);
    x->bt_points = (float *)pm_build_alloc(mem, exact ? (size_t)x->bt_blocks * PM_BT_BLOCK * rows : 0, sizeof(float));
    x->min_addend = (float *)pm_build_alloc(mem, (size_t)x->bt_blocks * PM_BT_BLOCK, sizeof(float));
    float *row_tmp = (float *)pm_build_alloc(mem, (size_t)v->stride, sizeof(float));
    uint8_t *moved = (uint8_t *)pm_build_alloc(mem, (size_t)VS / 8 + 1, 1);
    OOM_IF(!x->bt_points || !x->min_addend || !row_tmp || !moved);
    permute_rows(x->values, pr->bt_perm, VS, v->stride, row_tmp, moved); /* searchable rows in leaf order */
    for (uint32_t i = VS; i < x->bt_blocks * PM_BT_BLOCK; i++) x->min_addend[i] = FLT_MAX; /* padding lanes never pass */
    for (uint32_t i = 0; i < VS; i++) {
        uint32_t sr = pr->bt_perm[i];
        x->min_addend[i] = pr->addend[sr];
        if (!exact) continue;
        for (int c = 0; c < KE; c++) x->bt_points[pm_bt_at(rows, i, c)] = pr->z[(size_t)sr * KE + c];
        x->bt_points[pm_bt_at(rows, i, KE)] = pr->rho[sr];
    }
    pm_build_release(mem, pr->z);
    pm_build_release(mem, pr->rho);
    pr->z = pr->rho = NULL;
    return PM_OK;
}

/* The KD-tree over the K-component PCA points, de-duplicated in that space (here on the calling
 * thread: the de-duplication allocates), the VP-tree over the searchable rows in the weighted
 * space, and the bound tree's value boxes with the pose metadata: three independent structures,
 * each written by one task only, side by side on the build's threads. */
static pm_result search_structures(build_index *x, projected *pr, const build_vectors *v, const pm_database_def *def,
                                   build_mem *mem, pm_error *error) {
    const uint32_t P = v->poses, V = v->count, VS = v->searchable;
    const int K = x->pca_components;
    /* Final vector order: searchable in bound-tree leaf order, then the rest as they appeared. */
    uint32_t *order = (uint32_t *)pm_build_alloc(mem, V, sizeof(uint32_t)); /* final -> old vector */
    uint32_t *rank = (uint32_t *)pm_build_alloc(mem, V, sizeof(uint32_t));  /* old vector -> final */
    OOM_IF(!order || !rank);
    for (uint32_t i = 0; i < VS; i++) order[i] = v->searchable_vec[pr->bt_perm[i]];
    for (uint32_t k = 0, at = VS; k < V; k++)
        if (!v->is_searchable[k]) order[at++] = k;
    for (uint32_t i = 0; i < V; i++) rank[order[i]] = i;

    x->meta = (uint64_t *)pm_build_alloc(mem, P, sizeof(uint64_t));
    x->vec_pose_start = (uint32_t *)pm_build_alloc(mem, (size_t)V + 1, sizeof(uint32_t));
    x->vec_poses = (uint32_t *)pm_build_alloc(mem, P, sizeof(uint32_t));
    OOM_IF(!x->meta || !x->vec_pose_start || !x->vec_poses);
    /* Modes left out (search_modes) get no structure: the exact walk's value boxes, the KD-tree with
     * the PCA points it is built from, the VP-tree. */
    const int no_exact = !keeps_mode(def, PM_SEARCH_EXACT), no_kd = !keeps_mode(def, PM_SEARCH_PCAKDTREE);
    const int no_vp = !keeps_mode(def, PM_SEARCH_VPTREE);
    const uint32_t box_nodes = no_exact ? 0 : x->bt_count, kd_vs = no_kd ? 0 : VS, vp_vs = no_vp ? 0 : VS;
    x->bt_value_boxes = (float *)pm_build_alloc(mem, (size_t)box_nodes * 2 * v->stride, sizeof(float));
    uint32_t *vp_fill = (uint32_t *)pm_build_alloc(mem, V, sizeof(uint32_t));
    OOM_IF(!x->bt_value_boxes || !vp_fill);

    PROGRESS(def, "trees", 0.8f);
    float *zk_final = (float *)pm_build_alloc(mem, (size_t)kd_vs * K, sizeof(float));
    uint32_t *kd_id = (uint32_t *)pm_build_alloc(mem, kd_vs, sizeof(uint32_t));
    OOM_IF(!zk_final || !kd_id);
    for (uint32_t i = 0; i < kd_vs; i++)
        for (int c = 0; c < K; c++) zk_final[(size_t)i * K + c] = pr->zk[(size_t)pr->bt_perm[i] * K + c] + 0.0f;
    pm_build_release(mem, pr->zk);
    pr->zk = NULL;
    uint32_t NP = 0;
    pm_result r = no_kd ? PM_OK : pm_build_dedup_rows(kd_id, &NP, zk_final, VS, K, mem->a, error);
    if (r != PM_OK) return r;
    x->kd_point_count = NP;
    float *kd_unique = (float *)pm_build_alloc(mem, (size_t)(NP ? NP : 1) * K, sizeof(float));
    uint32_t *kd_first = (uint32_t *)pm_build_alloc(mem, NP, sizeof(uint32_t));
    uint32_t *kd_perm = (uint32_t *)pm_build_alloc(mem, NP, sizeof(uint32_t));
    uint32_t *kd_rank = (uint32_t *)pm_build_alloc(mem, NP, sizeof(uint32_t));
    const uint32_t kd_max = pm_kd_tree_max_nodes(NP, def->kdtree_leaf_size);
    x->kd_nodes = (pmdb_kd_node *)pm_build_alloc(mem, kd_max, sizeof(pmdb_kd_node));
    x->kd_points = (float *)pm_build_alloc(mem, (size_t)(NP ? NP : 1) * K, sizeof(float));
    x->kd_point_start = (uint32_t *)pm_build_alloc(mem, (size_t)NP + 1, sizeof(uint32_t));
    x->kd_point_vecs = (uint32_t *)pm_build_alloc(mem, kd_vs, sizeof(uint32_t));
    uint32_t *kd_fill = (uint32_t *)pm_build_alloc(mem, NP, sizeof(uint32_t));
    OOM_IF(!kd_unique || !kd_first || !kd_perm || !kd_rank || !x->kd_nodes || !x->kd_points || !x->kd_point_start ||
           !x->kd_point_vecs || !kd_fill);
    for (uint32_t i = 0; i < NP; i++) kd_first[i] = UINT32_MAX;
    for (uint32_t i = 0; i < kd_vs; i++)
        if (kd_first[kd_id[i]] == UINT32_MAX) {
            kd_first[kd_id[i]] = i;
            memcpy(kd_unique + (size_t)kd_id[i] * K, zk_final + (size_t)i * K, (size_t)K * sizeof(float));
        }

    const uint32_t vp_max = no_vp ? 0 : pm_vp_tree_max_nodes(VS, PM_VP_LEAF_SIZE);
    x->vp_nodes = (pmdb_vp_node *)pm_build_alloc(mem, vp_max, sizeof(pmdb_vp_node));
    x->vp_items = (uint32_t *)pm_build_alloc(mem, vp_vs, sizeof(uint32_t));
    float *vp_scratch = (float *)pm_build_alloc(mem, vp_vs, sizeof(float));
    OOM_IF(!x->vp_nodes || !x->vp_items || !vp_scratch);
    pm_vp_rows vc = {x->values, v->wsqrt, v->stride};

    pm_trees_job tc = {
        .vp = {x->vp_nodes, vp_max, x->vp_items, vp_scratch, VS, &vc, 0, no_vp},
        .kd = {x->kd_nodes, kd_max, kd_perm, kd_rank, kd_unique, x->kd_points, x->kd_point_start, x->kd_point_vecs,
               kd_fill, kd_id, NP, VS, K, def->kdtree_leaf_size, 0, no_kd},
        .meta = {x->bt_value_boxes, x->bt_nodes, box_nodes, x->values, v->stride, x->meta, x->vec_pose_start,
                 x->vec_poses, vp_fill, rank, v->pose_vec, v->pose_asset, v->pose_blocked, v->pose_addend, P, V},
    };
    pm_parallel_for(3, def->threads, pm_build_trees_task, &tc);
    x->kd_count = tc.kd.count_out;
    x->vp_count = tc.vp.count_out;
    if (x->kd_count == UINT32_MAX || x->vp_count == UINT32_MAX)
        return pm_fail(error, PM_ERR_LIMIT, "database: the %s needs more than %u nodes (internal error)",
                       x->kd_count == UINT32_MAX ? "KD-tree" : "VP-tree", x->kd_count == UINT32_MAX ? kd_max : vp_max);
    PROGRESS(def, "trees", 0.85f);
    return PM_OK;
}

pm_result pm_build_index(build_index *out, build_vectors *v, const pm_database_def *def, build_mem *mem,
                         pm_error *error) {
    memset(out, 0, sizeof *out);
    projected pr;
    memset(&pr, 0, sizeof pr);
    pm_result r = fit_pca(out, &pr, v, def, mem, error);
    if (r == PM_OK) r = bound_tree(out, &pr, v, def, mem, error);
    if (r == PM_OK) r = search_structures(out, &pr, v, def, mem, error);
    return r;
}
