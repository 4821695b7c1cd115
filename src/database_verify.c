/* pm_database_verify: the deep check for databases from sources one does not trust.
 *
 * Loading checks structure and checksum: that is enough against corruption, and no file can
 * make a search read out of bounds. But the tree modes prune with numbers a file states rather
 * than proves - PCA coordinates, residual norms, split values, radii - and a file written with
 * a recomputed checksum could state wrong ones and make exact answers wrong. Here every such
 * number is recomputed from the stored feature values the way the builder computes it and
 * compared: projections bit for bit (the builder projects the stored floats in double with no
 * FMA contraction, so every machine gets the same bits), orthonormality of the basis to float
 * rounding, and every tree's coverage, depth and split or radius invariants. */
#include <math.h>
#include <string.h>

#include "core.h"
#include "database_internal.h"
#include "index_build.h"
#include "pca.h"

#define FAIL(...) pm_fail(error, PM_ERR_CORRUPT, __VA_ARGS__)

/* Deeper than any tree the builder makes (KD- and VP-trees split at medians, about log2 of the
 * vectors; the bound tree keeps its splits in the middle half, at most 59 levels: see
 * src/index_build.c), and what keeps the ancestor checks O(n log n) on a crafted degenerate tree. */
enum { MAX_DEPTH = 64 };

/* The exact bound takes the basis as orthonormal: a basis B whose Gram matrix G = B B^T is off
 * the identity can make projected distances |B e| exceed |e| by a factor up to its largest
 * eigenvalue, which is at most 1 + max_i sum_j |G_ij - I_ij| (Gershgorin). Searches allow costs
 * a relative 1e-5 of rounding; the builder's basis (a double Jacobi solver rounded to float)
 * stays within a few 1e-7 on real databases. */
#define BASIS_TOLERANCE 4e-6

/* Trees are walked depth first with one pending sibling per level. A node popped at depth d
 * finds its path in levels 0..d-1 of the walk's path arrays: level d-1 was written when its
 * parent was popped, and whatever was walked since lies in its sibling's subtree, which only
 * writes levels >= d - 1 of the side array - rewritten by this node - and >= d of the rest. */
typedef struct walk_item {
    uint32_t node;
    uint32_t depth;
    int side; /* 1: the parent's low side (KD-tree) or inside (VP-tree) */
} walk_item;

typedef struct verify_mem {
    walk_item *stack;
    uint32_t *owner; /* per searchable vector or KD point: which place lists it (coverage) */
    double *pc, *y;
} verify_mem;

static pm_result check_basis(const pm_database *db, verify_mem *m, pm_error *error) {
    const int D = db->card;
    double *off = m->pc; /* per component: sum of |G_ij - I_ij| over j */
    for (int i = 0; i < D; i++) off[i] = 0.0;
    for (int i = 0; i < D; i++)
        for (int j = i; j < D; j++) {
            const float *bi = db->pca_basis + (size_t)i * D, *bj = db->pca_basis + (size_t)j * D;
            double dot = 0.0;
            for (int d = 0; d < D; d++) dot += (double)bi[d] * bj[d];
            double e = fabs(dot - (i == j ? 1.0 : 0.0));
            off[i] += e;
            if (j != i) off[j] += e;
        }
    for (int i = 0; i < D; i++)
        if (!(off[i] <= BASIS_TOLERANCE))
            return FAIL("PCA basis is not orthonormal: component %d is off by %.3g (at most %g)", i, off[i], BASIS_TOLERANCE);
    return PM_OK;
}

/* The PCA mean is the mean of the weighted searchable values (to float rounding: the builder
 * sums them in another order), and no value lies absurdly far from it. Projections are
 * recomputed bit for bit from the stored mean; a mean far from the data would make every
 * coordinate large, and float rounding of large coordinates can lift a bound above the cost it
 * bounds by more than the search's margins, which are sized for data around its mean. For the
 * same reason values beyond MAX_DEVIATION scales (normalised units) are refused. */
#define MAX_DEVIATION 1e4
static pm_result check_mean(const pm_database *db, verify_mem *m, pm_error *error) {
    const int D = db->card, S = db->stride;
    const uint32_t VS = db->header->searchable_vectors;
    double *sum = m->pc, *sum2 = m->y;
    for (int d = 0; d < D; d++) sum[d] = sum2[d] = 0.0;
    for (uint32_t v = 0; v < VS; v++) {
        const float *row = db->values + (size_t)v * S;
        for (int d = 0; d < D; d++) {
            if (!(fabsf(row[d]) <= MAX_DEVIATION))
                return FAIL("vector %u: value %d (%g) lies beyond %g scales from the mean", v, d, (double)row[d], MAX_DEVIATION);
            double y = (double)(row[d] * db->wsqrt[d]);
            sum[d] += y;
            sum2[d] += y * y;
        }
    }
    for (int d = 0; d < D; d++) {
        double mean = VS ? sum[d] / VS : 0.0, var = VS ? sum2[d] / VS - mean * mean : 0.0;
        double spread = fabs(mean) + sqrt(var > 0.0 ? var : 0.0);
        if (!(fabs((double)db->pca_mean[d] - mean) <= 1e-6 * spread + 1e-30))
            return FAIL("PCA mean: dimension %d is %g, the searchable values' mean is %g", d, (double)db->pca_mean[d], mean);
    }
    return PM_OK;
}

/* The KD-tree's leaves, left before right, must tile its points in order; every point's
 * coordinate must lie on its side of each ancestor's split. Records each KD point's vectors in
 * owner (vector -> KD point) and checks they cover the searchable vectors once. */
static pm_result check_kd_tree(const pm_database *db, verify_mem *m, pm_error *error) {
    const pmdb_header *h = db->header;
    const uint32_t VS = h->searchable_vectors, NP = h->kd_point_count;
    const int k = (int)h->pca_components;
    if (!pm_db_has_mode(db, PM_SEARCH_PCAKDTREE)) return PM_OK;
    for (uint32_t v = 0; v < VS; v++) m->owner[v] = UINT32_MAX;
    for (uint32_t p = 0; p < NP; p++)
        for (uint32_t i = db->kd_point_start[p]; i < db->kd_point_start[p + 1]; i++) {
            uint32_t v = db->kd_point_vecs[i];
            if (m->owner[v] != UINT32_MAX) return FAIL("KD-tree: vector %u belongs to points %u and %u", v, m->owner[v], p);
            m->owner[v] = p;
        }
    if (h->kd_node_count == 0) return NP ? FAIL("KD-tree: %u points but no node", NP) : PM_OK;
    int dims[MAX_DEPTH], low[MAX_DEPTH];
    float splits[MAX_DEPTH];
    uint32_t sp = 0, next_point = 0;
    m->stack[sp++] = (walk_item){0, 0, 0};
    while (sp) {
        walk_item it = m->stack[--sp];
        if (it.depth > 0) low[it.depth - 1] = it.side;
        const pmdb_kd_node *n = &db->kd_nodes[it.node];
        if (n->dim >= 0) {
            if (it.depth + 1 >= MAX_DEPTH) return FAIL("KD-tree: deeper than %d levels", MAX_DEPTH);
            dims[it.depth] = n->dim;
            splits[it.depth] = n->split;
            /* b is pushed first so that a, the low side, is walked first. */
            m->stack[sp++] = (walk_item){n->b, it.depth + 1, 0};
            m->stack[sp++] = (walk_item){n->a, it.depth + 1, 1};
            continue;
        }
        if (n->a != next_point) return FAIL("KD-tree: leaf %u starts at point %u, expected %u", it.node, n->a, next_point);
        next_point = n->a + n->b;
        for (uint32_t p = n->a; p < n->a + n->b; p++)
            for (uint32_t d = 0; d < it.depth; d++) {
                float x = db->kd_points[(size_t)p * k + dims[d]];
                if (low[d] ? x > splits[d] : x < splits[d])
                    return FAIL("KD-tree: point %u lies on the wrong side of an ancestor's split (leaf %u)", p, it.node);
            }
    }
    if (next_point != NP) return FAIL("KD-tree: leaves cover %u of %u points", next_point, NP);
    return PM_OK;
}

/* Every exact-mode point and residual norm, and every KD point, is what the builder computes
 * from the vector's stored values. */
static pm_result check_projections(const pm_database *db, verify_mem *m, pm_error *error) {
    const pmdb_header *h = db->header;
    const int D = db->card, S = db->stride, ke = (int)h->exact_components, rows = ke + 1, k = (int)h->pca_components;
    const int exact = pm_db_has_mode(db, PM_SEARCH_EXACT), kd = pm_db_has_mode(db, PM_SEARCH_PCAKDTREE);
    for (uint32_t v = 0; v < h->searchable_vectors && (exact || kd); v++) {
        pm_pca_project(m->pc, D, db->values + (size_t)v * S, db->wsqrt, db->pca_mean, db->pca_basis, D, m->y);
        double residual = 0.0;
        for (int c = ke; c < D; c++) residual += m->pc[c] * m->pc[c];
        for (int c = 0; c < ke && exact; c++)
            if (db->bt_points[pm_bt_at(rows, v, c)] != (float)m->pc[c])
                return FAIL("exact-mode point %u: coordinate %d is not the projection of its values", v, c);
        if (exact && db->bt_points[pm_bt_at(rows, v, ke)] != (float)sqrt(residual))
            return FAIL("exact-mode point %u: residual norm is not that of its values", v);
        if (!kd) continue;
        const float *kp = db->kd_points + (size_t)m->owner[v] * k;
        for (int c = 0; c < k; c++)
            if (kp[c] != (float)m->pc[c])
                return FAIL("KD-tree point %u: coordinate %d is not the projection of vector %u", m->owner[v], c, v);
    }
    return PM_OK;
}

/* The bound tree: the root holds every searchable vector and each inner node's children split
 * its range in two, so the leaves tile the vectors once; no deeper than MAX_DEPTH. */
static pm_result check_bound_tree(const pm_database *db, verify_mem *m, pm_error *error) {
    const pmdb_header *h = db->header;
    if (!pm_db_has_mode(db, PM_SEARCH_EXACT)) return PM_OK;
    if (h->bt_node_count == 0) return FAIL("bound tree: no node for %u searchable vectors", h->searchable_vectors);
    if (db->bt_nodes[0].first != 0 || db->bt_nodes[0].count != h->searchable_vectors)
        return FAIL("bound tree: the root holds %u of %u searchable vectors", db->bt_nodes[0].count, h->searchable_vectors);
    uint32_t sp = 0;
    m->stack[sp++] = (walk_item){0, 0, 0};
    while (sp) {
        walk_item it = m->stack[--sp];
        const pmdb_bt_node *n = &db->bt_nodes[it.node];
        if (!n->left) continue;
        const pmdb_bt_node *l = &db->bt_nodes[n->left], *r = &db->bt_nodes[n->right];
        if (l->first != n->first || r->first != l->first + l->count || l->count + r->count != n->count)
            return FAIL("bound tree: node %u's children do not split its range", it.node);
        if (it.depth + 1 >= MAX_DEPTH) return FAIL("bound tree: deeper than %d levels", MAX_DEPTH);
        m->stack[sp++] = (walk_item){n->right, it.depth + 1, 0};
        m->stack[sp++] = (walk_item){n->left, it.depth + 1, 1};
    }
    return PM_OK;
}

/* The VP-tree: every searchable vector once (as a vantage point or a leaf item), and each at
 * the distance from every ancestor's vantage point its side says (inside <= mu <= outside),
 * distances computed as the builder and the search compute them. */
static pm_result check_vp_tree(const pm_database *db, verify_mem *m, pm_error *error) {
    const pmdb_header *h = db->header;
    const uint32_t VS = h->searchable_vectors;
    if (!pm_db_has_mode(db, PM_SEARCH_VPTREE)) return PM_OK;
    if (h->vp_node_count == 0) return FAIL("VP-tree: no node for %u searchable vectors", VS);
    pm_vp_rows rows = {db->values, db->wsqrt, db->stride};
    uint32_t vps[MAX_DEPTH];
    int inside[MAX_DEPTH];
    for (uint32_t v = 0; v < VS; v++) m->owner[v] = UINT32_MAX;
    uint32_t sp = 0;
    m->stack[sp++] = (walk_item){0, 0, 0};
    while (sp) {
        walk_item it = m->stack[--sp];
        if (it.depth > 0) inside[it.depth - 1] = it.side;
        const pmdb_vp_node *n = &db->vp_nodes[it.node];
        /* An inner node holds its vantage vector; a leaf holds items [vp, vp + outside). */
        uint32_t count = n->inside ? 1 : n->outside;
        for (uint32_t i = 0; i < count; i++) {
            uint32_t v = n->inside ? n->vp : db->vp_items[n->vp + i];
            if (m->owner[v] != UINT32_MAX)
                return FAIL("VP-tree: vector %u appears twice (nodes %u and %u)", v, m->owner[v], it.node);
            m->owner[v] = it.node;
            for (uint32_t d = 0; d < it.depth; d++) {
                const pmdb_vp_node *an = &db->vp_nodes[vps[d]];
                float dist = pm_vp_row_distance(&rows, an->vp, v);
                if (inside[d] ? !(dist <= an->mu) : !(dist >= an->mu))
                    return FAIL("VP-tree: vector %u lies on the wrong side of node %u's radius", v, vps[d]);
            }
        }
        if (!n->inside) continue;
        if (it.depth + 1 >= MAX_DEPTH) return FAIL("VP-tree: deeper than %d levels", MAX_DEPTH);
        vps[it.depth] = it.node;
        m->stack[sp++] = (walk_item){n->outside, it.depth + 1, 0};
        m->stack[sp++] = (walk_item){n->inside, it.depth + 1, 1};
    }
    for (uint32_t v = 0; v < VS; v++)
        if (m->owner[v] == UINT32_MAX) return FAIL("VP-tree: searchable vector %u is in no node", v);
    return PM_OK;
}

pm_result pm_database_verify(const pm_database *db, pm_error *error) {
    if (!db) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_verify: db is NULL");
    const pmdb_header *h = db->header;
    const pm_allocator *a = &db->allocator;
    /* Walk stacks hold at most one pending sibling per level, plus the current node. */
    verify_mem m = {NULL, NULL, NULL, NULL};
    m.stack = (walk_item *)pm_alloc_array(a, 2 * MAX_DEPTH + 2, sizeof(walk_item), 16);
    m.owner = (uint32_t *)pm_alloc_array(a, (size_t)h->searchable_vectors + 1, sizeof(uint32_t), 16);
    m.pc = (double *)pm_alloc_array(a, (size_t)db->card, sizeof(double), 16);
    m.y = (double *)pm_alloc_array(a, (size_t)db->card, sizeof(double), 16);
    pm_result r = PM_OK;
    if (!m.stack || !m.owner || !m.pc || !m.y) r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "pm_database_verify: out of memory");
    if (r == PM_OK) r = check_basis(db, &m, error);
    if (r == PM_OK) r = check_mean(db, &m, error);
    if (r == PM_OK) r = check_kd_tree(db, &m, error); /* fills owner: vector -> KD point */
    if (r == PM_OK) r = check_projections(db, &m, error);
    if (r == PM_OK) r = check_bound_tree(db, &m, error);
    if (r == PM_OK) r = check_vp_tree(db, &m, error);
    pm_free(a, m.stack);
    pm_free(a, m.owner);
    pm_free(a, m.pc);
    pm_free(a, m.y);
    if (r != PM_OK) pm_error_prefix(error, "database verification");
    return r;
}
