/* Blend-space hull: projecting a query outside the samples' hull onto its nearest point.
 *
 * The hull's elements - edges of a 2D triangulation or of coplanar samples' plane, faces of a 3D
 * tetrahedralisation - sit in a bounding-volume hierarchy searched branch and bound, so the
 * nearest one costs about O(log h) for h hull elements instead of a pass over all of them (a circle
 * of 4096 samples has 4096 hull edges). The search returns what a plain scan in each element's
 * tie order would: the smallest distance as computed, ties to the smallest tie key (the hull edge's
 * index in 2D, as the scan this replaced ran; the position in the hierarchy in 3D). In 3D the
 * nodes also carry oriented boxes and the faces a copy in doubles, for bounds far tighter than the
 * exact arithmetic's cost would allow per face. */
#include <math.h>
#include <stdlib.h>

#include "blend_space_internal.h"
#include "core.h"

typedef struct hull_key {
    int64_t key; /* the sum of the element's coordinates along the split axis */
    int32_t item;
} hull_key;

static int compare_hull_key(const void *a, const void *b) {
    const hull_key *x = (const hull_key *)a, *y = (const hull_key *)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->item > y->item) - (x->item < y->item);
}

static int64_t item_coord(const pm_blend_space *s, int item, int i, int axis) {
    return pm_dt3_component(s->points[s->hull_items[s->hull_arity * item + i]], axis);
}

/* Distance from p to segment ab (inv: 1 / |b - a|^2, 0 for a point), in doubles. */
static double segment_distance(const double *a, const double *b, double inv, const double *p) {
    double ab[3], ap[3], t = 0.0, d2 = 0.0;
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k];
        ap[k] = p[k] - a[k];
        t += ab[k] * ap[k];
    }
    t = PM_CLAMP(t * inv, 0.0, 1.0);
    for (int k = 0; k < 3; k++) {
        double d = ap[k] - t * ab[k];
        d2 += d * d;
    }
    return sqrt(d2);
}

/* The capsule round items [first, first + count): a segment between the two corners furthest
 * apart along `axis` (the box's longest), and the largest distance of any corner from it. Every
 * element is the hull of its corners, so it lies in the capsule. Round chains of hull edges and
 * fans of long thin faces fit tightly in one, where boxes leave room. */
static void node_capsule(pm_blend_space *s, pm_blend_hull_node *nd, int axis, int first, int count) {
    int32_t lo = -1, hi = -1;
    for (int k = first; k < first + count; k++)
        for (int i = 0; i < s->hull_arity; i++) {
            int32_t v = s->hull_items[s->hull_arity * k + i];
            int64_t c = pm_dt3_component(s->points[v], axis);
            if (lo < 0 || c < pm_dt3_component(s->points[lo], axis)) lo = v;
            if (hi < 0 || c > pm_dt3_component(s->points[hi], axis)) hi = v;
        }
    pm_dt3_point pa = s->points[lo], pb = s->points[hi];
    nd->a[0] = (double)pa.x, nd->a[1] = (double)pa.y, nd->a[2] = (double)pa.z;
    nd->b[0] = (double)pb.x, nd->b[1] = (double)pb.y, nd->b[2] = (double)pb.z;
    double len2 = 0.0;
    for (int k = 0; k < 3; k++) len2 += (nd->b[k] - nd->a[k]) * (nd->b[k] - nd->a[k]);
    nd->inv = len2 > 0.0 ? 1.0 / len2 : 0.0;
    nd->r = 0.0;
    for (int k = first; k < first + count; k++)
        for (int i = 0; i < s->hull_arity; i++) {
            pm_dt3_point p = s->points[s->hull_items[s->hull_arity * k + i]];
            double c[3] = {(double)p.x, (double)p.y, (double)p.z};
            nd->r = PM_MAX(nd->r, segment_distance(nd->a, nd->b, nd->inv, c));
        }
    /* A grid unit more: far beyond the rounding of these distances and of a query's. */
    nd->r += 1.0;
}

/* Splits items [first, first + count) at the median centroid along the box's longest axis; the
 * children of a node are allocated side by side. `scratch` holds an item's ranks, cell and key. */
static void build_node(pm_blend_space *s, hull_key *keys, int32_t *scratch, int node, int first, int count, int *used) {
    pm_blend_hull_node *nd = &s->hull_nodes[node];
    int arity = s->hull_arity;
    for (int a = 0; a < 3; a++) {
        nd->lo[a] = INT64_MAX;
        nd->hi[a] = INT64_MIN;
        for (int k = first; k < first + count; k++)
            for (int i = 0; i < arity; i++) {
                int64_t c = item_coord(s, k, i, a);
                nd->lo[a] = PM_MIN(nd->lo[a], c);
                nd->hi[a] = PM_MAX(nd->hi[a], c);
            }
    }
    int axis = 0;
    for (int a = 1; a < 3; a++)
        if (nd->hi[a] - nd->lo[a] > nd->hi[axis] - nd->lo[axis]) axis = a;
    node_capsule(s, nd, axis, first, count);
    if (count <= PM_BLEND_HULL_LEAF) {
        nd->first = first;
        nd->count = count;
        return;
    }
    for (int k = 0; k < count; k++) {
        keys[k].key = 0;
        for (int i = 0; i < arity; i++) keys[k].key += item_coord(s, first + k, i, axis);
        keys[k].item = first + k;
    }
    qsort(keys, (size_t)count, sizeof *keys, compare_hull_key);
    int w = arity + 2;
    for (int k = 0; k < count; k++) {
        int from = keys[k].item;
        memcpy(scratch + w * k, s->hull_items + arity * from, (size_t)arity * sizeof(int32_t));
        scratch[w * k + arity] = s->hull_cells[from];
        scratch[w * k + arity + 1] = s->hull_ties[from];
    }
    for (int k = 0; k < count; k++) {
        memcpy(s->hull_items + arity * (first + k), scratch + w * k, (size_t)arity * sizeof(int32_t));
        s->hull_cells[first + k] = scratch[w * k + arity];
        s->hull_ties[first + k] = scratch[w * k + arity + 1];
    }
    int child = *used;
    *used += 2;
    nd->first = child;
    nd->count = 0;
    build_node(s, keys, scratch, child, first, count / 2, used);
    build_node(s, keys, scratch, child + 1, first + count / 2, count - count / 2, used);
}

static double unit3(double *v) {
    double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (len > 0.0)
        for (int k = 0; k < 3; k++) v[k] /= len;
    return len;
}

static void face_data(const pm_blend_space *s, int item, pm_blend_hull_face *f) {
    const int32_t *v = s->hull_items + 3 * item;
    pm_dt3_point n = pm_dt3_normal(s->points[v[0]], s->points[v[1]], s->points[v[2]]);
    for (int i = 0; i < 3; i++) {
        pm_dt3_point p = s->points[v[i]];
        f->p[i][0] = (double)p.x, f->p[i][1] = (double)p.y, f->p[i][2] = (double)p.z;
    }
    /* Components below 2^50: exact in doubles. */
    f->n[0] = (double)n.x, f->n[1] = (double)n.y, f->n[2] = (double)n.z;
    unit3(f->n);
    /* Outward, away from the cell's fourth corner (for the nodes' mean normals). */
    const int32_t *tv = s->tet.vertices + 4 * s->hull_cells[item];
    for (int i = 0; i < 4; i++)
        if (tv[i] != v[0] && tv[i] != v[1] && tv[i] != v[2] &&
            pm_i128_sign(pm_dt3_dot_wide(pm_dt3_sub(s->points[tv[i]], s->points[v[0]]), n)) > 0)
            for (int k = 0; k < 3; k++) f->n[k] = -f->n[k];
    for (int i = 0; i < 3; i++) {
        const double *a = f->p[i], *b = f->p[(i + 1) % 3], *c = f->p[(i + 2) % 3];
        double ed[3] = {c[0] - b[0], c[1] - b[1], c[2] - b[2]}, *m = f->e[i];
        m[0] = f->n[1] * ed[2] - f->n[2] * ed[1];
        m[1] = f->n[2] * ed[0] - f->n[0] * ed[2];
        m[2] = f->n[0] * ed[1] - f->n[1] * ed[0];
        double len = unit3(m);
        /* Into the face: towards the opposite corner, a whole height away. */
        if (m[0] * (a[0] - b[0]) + m[1] * (a[1] - b[1]) + m[2] * (a[2] - b[2]) < 0.0)
            for (int k = 0; k < 3; k++) m[k] = -m[k];
        f->inv[i] = len > 0.0 ? 1.0 / (ed[0] * ed[0] + ed[1] * ed[1] + ed[2] * ed[2]) : 0.0;
    }
}

/* Sibling leaves merged into their parent, up to PM_BLEND_HULL_FACE_LEAF faces: the items stay
 * where they are, so the faces' tie order is the one the hierarchy has always given. */
static void merge_leaves(pm_blend_space *s, int node) {
    pm_blend_hull_node *nd = &s->hull_nodes[node];
    if (nd->count > 0) return;
    merge_leaves(s, nd->first);
    merge_leaves(s, nd->first + 1);
    const pm_blend_hull_node *l = &s->hull_nodes[nd->first], *r = l + 1;
    if (l->count > 0 && r->count > 0 && l->count + r->count <= PM_BLEND_HULL_FACE_LEAF) {
        nd->first = l->first;
        nd->count = l->count + r->count;
    }
}

/* The oriented box of node `node` (faces built); returns one past its last item, *first its first. */
static int node_obb(pm_blend_space *s, int node, int *first) {
    const pm_blend_hull_node *nd = &s->hull_nodes[node];
    int end;
    if (nd->count > 0) {
        *first = nd->first;
        end = nd->first + nd->count;
    } else {
        int unused;
        node_obb(s, nd->first, first);
        end = node_obb(s, nd->first + 1, &unused);
    }
    pm_blend_hull_obb *o = &s->hull_obbs[node];
    double *nu = o->axis[0], *u = o->axis[1], *w = o->axis[2];
    nu[0] = nu[1] = nu[2] = 0.0;
    for (int k = *first; k < end; k++)
        for (int c = 0; c < 3; c++) nu[c] += s->hull_faces[k].n[c];
    if (unit3(nu) < 1e-3) nu[0] = 1.0, nu[1] = nu[2] = 0.0;
    /* The second axis along the capsule's segment (the node's length) where it is not too close to
     * the normal, else along whichever coordinate axis is furthest from it. */
    double dir[3] = {nd->b[0] - nd->a[0], nd->b[1] - nd->a[1], nd->b[2] - nd->a[2]};
    unit3(dir);
    double along = dir[0] * nu[0] + dir[1] * nu[1] + dir[2] * nu[2];
    if (fabs(along) > 0.9) {
        int c = fabs(nu[0]) <= fabs(nu[1]) ? (fabs(nu[0]) <= fabs(nu[2]) ? 0 : 2) : (fabs(nu[1]) <= fabs(nu[2]) ? 1 : 2);
        dir[0] = dir[1] = dir[2] = 0.0;
        dir[c] = 1.0;
        along = nu[c];
    }
    for (int c = 0; c < 3; c++) u[c] = dir[c] - along * nu[c];
    unit3(u);
    w[0] = nu[1] * u[2] - nu[2] * u[1];
    w[1] = nu[2] * u[0] - nu[0] * u[2];
    w[2] = nu[0] * u[1] - nu[1] * u[0];
    unit3(w);
    for (int a = 0; a < 3; a++) {
        o->lo[a] = INFINITY;
        o->hi[a] = -INFINITY;
        for (int k = *first; k < end; k++)
            for (int i = 0; i < 3; i++) {
                const double *p = s->hull_faces[k].p[i];
                double t = o->axis[a][0] * p[0] + o->axis[a][1] * p[1] + o->axis[a][2] * p[2];
                o->lo[a] = PM_MIN(o->lo[a], t);
                o->hi[a] = PM_MAX(o->hi[a], t);
            }
        /* Far beyond the rounding of these products and of a query's (below 2^-26 units). */
        o->lo[a] -= 1.0;
        o->hi[a] += 1.0;
    }
    return end;
}

pm_result pm_blend_space_build_hull(pm_blend_space *s, pm_error *error) {
    const pm_allocator *a = &s->allocator;
    int faces = s->mode == SPACE_TETRAHEDRA;
    int h = faces ? s->tet.hull_count : s->tri.hull_count;
    int arity = faces ? 3 : 2;
    s->hull_arity = arity;
    s->hull_count = h;
    s->hull_items = (int32_t *)pm_alloc_array(a, (size_t)h * arity, sizeof(int32_t), 0);
    s->hull_cells = (int32_t *)pm_alloc_array(a, (size_t)h, sizeof(int32_t), 0);
    s->hull_ties = (int32_t *)pm_alloc_array(a, (size_t)h, sizeof(int32_t), 0);
    s->hull_nodes = (pm_blend_hull_node *)pm_alloc_array(a, (size_t)h * 2, sizeof(pm_blend_hull_node), 0);
    hull_key *keys = (hull_key *)pm_alloc_array(a, (size_t)h, sizeof(hull_key), 0);
    int32_t *scratch = (int32_t *)pm_alloc_array(a, (size_t)h * (arity + 2), sizeof(int32_t), 0);
    pm_result r = PM_OK;
    if (!s->hull_items || !s->hull_cells || !s->hull_ties || !s->hull_nodes || !keys || !scratch)
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its hull");
    else {
        for (int k = 0; k < h; k++) {
            int32_t *item = s->hull_items + arity * k;
            if (faces) {
                int tet = s->tet.hull[2 * k], opposite = s->tet.hull[2 * k + 1];
                for (int i = 0, m = 0; i < 4; i++)
                    if (i != opposite) item[m++] = s->tet.vertices[4 * tet + i];
                s->hull_cells[k] = tet;
            } else {
                /* The edge from the vertex after the opposite one, counter-clockwise: the order
                 * its weights are computed in. */
                int tri = s->tri.hull[2 * k], opposite = s->tri.hull[2 * k + 1];
                item[0] = s->tri.vertices[3 * tri + (opposite + 1) % 3];
                item[1] = s->tri.vertices[3 * tri + (opposite + 2) % 3];
                s->hull_cells[k] = tri;
            }
            s->hull_ties[k] = k;
        }
        int used = 1;
        build_node(s, keys, scratch, 0, 0, h, &used);
        /* 3D faces tie by their place in the hierarchy, as they always have. */
        if (faces) {
            for (int k = 0; k < h; k++) s->hull_ties[k] = k;
            s->hull_faces = (pm_blend_hull_face *)pm_alloc_array(a, (size_t)h, sizeof(pm_blend_hull_face), 0);
            s->hull_obbs = (pm_blend_hull_obb *)pm_alloc_array(a, (size_t)used, sizeof(pm_blend_hull_obb), 0);
            if (!s->hull_faces || !s->hull_obbs) r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its hull");
            else {
                for (int k = 0; k < h; k++) face_data(s, k, &s->hull_faces[k]);
                merge_leaves(s, 0);
                int first;
                node_obb(s, 0, &first);
            }
        }
    }
    pm_free(a, keys);
    pm_free(a, scratch);
    return r;
}

/* ---- the nearest element ---- */

/* A 2D hull edge: the nearest point as the parameter u from its first end, by one correctly
 * rounded quotient of exact integers. Returns the squared distance. */
static double edge2_nearest(const pm_blend_space *s, const int32_t *e, pm_dt3_point q3, pm_blend_raw_weights *rw) {
    pm_dt_point a = s->plane_points[e[0]], b = s->plane_points[e[1]];
    int64_t ex = b.x - a.x, ey = b.y - a.y, qx = q3.x - a.x, qy = q3.y - a.y;
    int64_t num = qx * ex + qy * ey, den = ex * ex + ey * ey;
    double u = num <= 0 ? 0.0 : (num >= den ? 1.0 : (double)num / (double)den);
    double dx = (double)qx - u * (double)ex, dy = (double)qy - u * (double)ey;
    rw->count = 2;
    rw->rank[0] = e[0];
    rw->rank[1] = e[1];
    rw->w[0] = 1.0 - u;
    rw->w[1] = u;
    return dx * dx + dy * dy;
}

/* A hull edge of coplanar 3D samples, in the samples' own space. */
static double edge3_nearest(const pm_blend_space *s, const int32_t *e, pm_dt3_point q, pm_blend_raw_weights *rw) {
    pm_blend_space_edge_weights(s, e[0], e[1], q, rw);
    return pm_blend_space_edge_distance2(s, rw, q);
}

/* The nearest point of a triangle's edges to q (the first edge's on a tie), squared distance. */
static double face_edges_nearest(const pm_blend_space *s, const int32_t *f, pm_dt3_point q, pm_blend_raw_weights *rw) {
    double best = INFINITY;
    for (int i = 0; i < 3; i++) {
        pm_blend_raw_weights e;
        pm_blend_space_edge_weights(s, f[(i + 1) % 3], f[(i + 2) % 3], q, &e);
        double d2 = pm_blend_space_edge_distance2(s, &e, q);
        if (d2 < best) {
            best = d2;
            pm_blend_raw_set(rw, 3, f);
            for (int k = 0; k < 2; k++) pm_blend_raw_put(rw, e.rank[k], e.w[k]);
        }
    }
    return best;
}

/* The nearest point of triangle abc to q: its projection when that falls inside, else the nearest
 * point of its edges. Returns the squared distance. */
static double face_nearest(const pm_blend_space *s, const int32_t *f, pm_dt3_point q, pm_blend_raw_weights *rw) {
    if (pm_blend_space_face_weights(s, f[0], f[1], f[2], q, rw)) {
        pm_dt3_point nrm = pm_dt3_normal(s->points[f[0]], s->points[f[1]], s->points[f[2]]);
        double h = pm_i128_to_double(pm_dt3_dot_wide(pm_dt3_sub(q, s->points[f[0]]), nrm));
        return h * h / pm_i128_to_double(pm_dt3_dot_wide(nrm, nrm));
    }
    return face_edges_nearest(s, f, q, rw);
}

/* No element below the node is nearer q than its box (exact integers, rounded once each)... */
static double box_bound2(const pm_blend_hull_node *nd, pm_dt3_point q) {
    int64_t c[3] = {q.x, q.y, q.z};
    double d2 = 0.0;
    for (int a = 0; a < 3; a++) {
        int64_t d = c[a] < nd->lo[a] ? nd->lo[a] - c[a] : (c[a] > nd->hi[a] ? c[a] - nd->hi[a] : 0);
        d2 += (double)d * (double)d;
    }
    return d2;
}

/* ... or than its capsule (the capsule's radius holds a grid unit beyond the rounding). */
static double capsule_bound2(const pm_blend_hull_node *nd, pm_dt3_point q) {
    double p[3] = {(double)q.x, (double)q.y, (double)q.z};
    double d = segment_distance(nd->a, nd->b, nd->inv, p) - nd->r;
    return d > 0.0 ? d * d : 0.0;
}

/* Squared distance from q to the nearest point of a hull element, and that point's weights. */
static double item_nearest(const pm_blend_space *s, const int32_t *item, pm_dt3_point q, pm_blend_raw_weights *rw) {
    if (s->hull_arity == 3) return face_nearest(s, item, q, rw);
    return s->coplanar ? edge3_nearest(s, item, q, rw) : edge2_nearest(s, item, q, rw);
}

static void set_located(const pm_blend_space *s, int best_item, pm_blend_located *at) {
    at->kind = s->hull_arity == 3 ? PM_BLEND_CELL_HULL_FACE : PM_BLEND_CELL_HULL_EDGE;
    at->cell = s->hull_cells[best_item];
    at->outside = 1;
    at->count = s->hull_arity;
    for (int k = 0; k < s->hull_arity; k++) at->rank[k] = s->hull_items[s->hull_arity * best_item + k];
}

void pm_blend_space_hull_nearest_brute(const pm_blend_space *s, pm_dt3_point q, pm_blend_raw_weights *rw,
                                       pm_blend_located *at) {
    double best = INFINITY;
    int best_item = -1, best_tie = INT32_MAX;
    for (int k = 0; k < s->hull_count; k++) {
        pm_blend_raw_weights cand;
        double d2 = item_nearest(s, s->hull_items + s->hull_arity * k, q, &cand);
        if (d2 < best || (d2 == best && s->hull_ties[k] < best_tie)) {
            best = d2;
            best_item = k;
            best_tie = s->hull_ties[k];
            *rw = cand;
        }
    }
    set_located(s, best_item, at);
}

/* ---- 3D: faces bounded in doubles first ----
 *
 * The exact path (face_nearest: 128-bit barycentric tests, then up to three edges) is what the scan
 * runs, so it decides the answer; but most faces the search meets are set aside by distances in
 * doubles, and the exact path runs on the few left (about two per query, more where faces tie at a
 * shared corner). Every distance here - in doubles, or the exact path's from its rounded weights -
 * errs by less than 2^-23 grid units (a few ulps of coordinates below 2^25), so a squared distance
 * d2 by less than 2^-22 sqrt(d2) < 1 + 2.5e-13 d2. The margins (4 units, 1e-12 of the value) cover
 * two such errors on either side: a face is set aside only when its distance as the exact path
 * computes it is certainly above that of a face kept (or one whose bounds it is). */
static double margin_lo(double d2) {
    return d2 * (1.0 - 1e-12) - 4.0;
}
static double margin_hi(double d2) {
    return d2 * (1.0 + 1e-12) + 4.0;
}

/* No face below a node is nearer q than its oriented box (the axes are orthonormal to within a few
 * ulps, which the callers' relative margin covers). */
static double obb_bound2(const pm_blend_hull_obb *o, const double *q) {
    double d2 = 0.0;
    for (int a = 0; a < 3; a++) {
        double t = o->axis[a][0] * q[0] + o->axis[a][1] * q[1] + o->axis[a][2] * q[2];
        double d = t < o->lo[a] ? o->lo[a] - t : (t > o->hi[a] ? t - o->hi[a] : 0.0);
        d2 += d * d;
    }
    return d2;
}

/* Squared distance from q to edge i of a face, in doubles. */
static double face_edge2(const pm_blend_hull_face *f, int i, const double *q) {
    const double *b = f->p[(i + 1) % 3], *c = f->p[(i + 2) % 3];
    double ed[3], d[3], t = 0.0, d2 = 0.0;
    for (int k = 0; k < 3; k++) {
        ed[k] = c[k] - b[k];
        d[k] = q[k] - b[k];
        t += d[k] * ed[k];
    }
    t = PM_CLAMP(t * f->inv[i], 0.0, 1.0);
    for (int k = 0; k < 3; k++) {
        double r = d[k] - t * ed[k];
        d2 += r * r;
    }
    return d2;
}

/* Bounds on a face's squared distance from q: 0 when a cheap lower bound (height above the plane
 * and the furthest any edge's line is overstepped within the plane, Pythagoras) is already past
 * `limit`; else *lo and *hi around the distance, equal unless q's projection is within rounding of
 * an edge's line (then *lo is the height alone and *hi a distance to the edges). *outside is set
 * when the projection certainly oversteps an edge's line: the exact barycentric test would fail. */
static int face_bounds(const pm_blend_hull_face *f, const double *q, double limit, double *lo, double *hi, int *outside) {
    double h = 0.0, s[3], out = 0.0;
    for (int k = 0; k < 3; k++) h += f->n[k] * (q[k] - f->p[0][k]);
    for (int i = 0; i < 3; i++) {
        const double *b = f->p[(i + 1) % 3], *e = f->e[i];
        s[i] = e[0] * (q[0] - b[0]) + e[1] * (q[1] - b[1]) + e[2] * (q[2] - b[2]);
        out = PM_MIN(out, s[i]);
    }
    double plane = h * h;
    if (margin_lo(plane + out * out) > limit) return 0;
    /* In-plane distances from the edges' lines err by far less than 2^-22 units. */
    const double tol = 1.0 / (1 << 22);
    *outside = out < -tol;
    if (s[0] > tol && s[1] > tol && s[2] > tol) {
        *lo = *hi = plane;
        return 1;
    }
    /* Outside the face the nearest point lies on an edge whose line q oversteps. */
    double edge = INFINITY;
    for (int i = 0; i < 3; i++)
        if (s[i] < tol) edge = PM_MIN(edge, face_edge2(f, i, q));
    *hi = edge;
    *lo = *outside ? edge : plane;
    return 1;
}

/* The exact path for a face, kept when it beats the best by the scan's order. */
typedef struct face_best {
    double d2, limit;
    int item, tie;
    pm_blend_raw_weights rw;
} face_best;

static void face_exact(const pm_blend_space *s, int k, int outside, pm_dt3_point q, face_best *b) {
    pm_blend_raw_weights cand;
    const int32_t *f = s->hull_items + 3 * k;
    double d2 = outside ? face_edges_nearest(s, f, q, &cand) : face_nearest(s, f, q, &cand);
    if (d2 < b->d2 || (d2 == b->d2 && s->hull_ties[k] < b->tie)) {
        b->d2 = d2;
        b->item = k;
        b->tie = s->hull_ties[k];
        b->rw = cand;
        b->limit = PM_MIN(b->limit, margin_hi(d2));
    }
}

/* The nearer child first (its bound in dn). */
static void swap_children(int *near, int *far, double *dn, double *df) {
    int t = *near;
    *near = *far;
    *far = t;
    double td = *dn;
    *dn = *df;
    *df = td;
}

/* Faces left in play wait in a small list until the search is done (by then the bound from the
 * nearest one found has set most of them aside); one that finds the list full is measured at once. */
#define PM_BLEND_HULL_PENDING 32

static void hull_nearest_faces(const pm_blend_space *s, pm_dt3_point q, pm_blend_raw_weights *rw,
                               pm_blend_located *at) {
    int stack[128], top = 0, pending = 0, wait_item[PM_BLEND_HULL_PENDING];
    double box[128], wait_lo[PM_BLEND_HULL_PENDING], qd[3] = {(double)q.x, (double)q.y, (double)q.z};
    face_best b = {INFINITY, INFINITY, -1, INT32_MAX, {0}};
    stack[top] = 0;
    box[top++] = 0.0;
    while (top > 0) {
        top--;
        const pm_blend_hull_node *nd = &s->hull_nodes[stack[top]];
        if (box[top] > b.limit || obb_bound2(&s->hull_obbs[stack[top]], qd) > b.limit) continue;
        if (nd->count > 0) {
            for (int k = nd->first; k < nd->first + nd->count; k++) {
                double lo, hi;
                int outside;
                if (!face_bounds(&s->hull_faces[k], qd, b.limit, &lo, &hi, &outside) || margin_lo(lo) > b.limit) continue;
                b.limit = PM_MIN(b.limit, margin_hi(hi));
                if (pending == PM_BLEND_HULL_PENDING) {
                    int kept = 0;
                    for (int i = 0; i < pending; i++)
                        if (margin_lo(wait_lo[i]) <= b.limit) {
                            wait_item[kept] = wait_item[i];
                            wait_lo[kept++] = wait_lo[i];
                        }
                    pending = kept;
                }
                if (pending == PM_BLEND_HULL_PENDING) face_exact(s, k, outside, q, &b);
                else {
                    wait_item[pending] = 2 * k + outside;
                    wait_lo[pending++] = lo;
                }
            }
            continue;
        }
        int near = nd->first, far = nd->first + 1;
        double dn = box_bound2(&s->hull_nodes[near], q), df = box_bound2(&s->hull_nodes[far], q);
        if (df < dn || (df == dn && obb_bound2(&s->hull_obbs[far], qd) < obb_bound2(&s->hull_obbs[near], qd))) {
            swap_children(&near, &far, &dn, &df);
        }
        if (df <= b.limit) {
            stack[top] = far;
            box[top++] = df;
        }
        if (dn <= b.limit) {
            stack[top] = near;
            box[top++] = dn;
        }
    }
    /* Nearest first: the first usually settles the rest. */
    for (int i = 1; i < pending; i++)
        for (int j = i; j > 0 && wait_lo[j] < wait_lo[j - 1]; j--) {
            double tl = wait_lo[j];
            wait_lo[j] = wait_lo[j - 1];
            wait_lo[j - 1] = tl;
            int ti = wait_item[j];
            wait_item[j] = wait_item[j - 1];
            wait_item[j - 1] = ti;
        }
    for (int i = 0; i < pending && margin_lo(wait_lo[i]) <= b.limit; i++) face_exact(s, wait_item[i] >> 1, wait_item[i] & 1, q, &b);
    *rw = b.rw;
    set_located(s, b.item, at);
}

void pm_blend_space_hull_nearest(const pm_blend_space *s, pm_dt3_point q, pm_blend_raw_weights *rw,
                                 pm_blend_located *at) {
    if (s->hull_arity == 3) {
        hull_nearest_faces(s, q, rw, at);
        return;
    }
    /* Deep enough for any hierarchy of PM_BLEND_SPACE_MAX_SAMPLES samples' hull (depth ~ log2 h):
     * each level pushes at most one pending sibling. */
    int stack[128], top = 0, best_item = -1, best_tie = INT32_MAX;
    double best = INFINITY, box[128];
    stack[top] = 0;
    box[top++] = 0.0;
    while (top > 0) {
        top--;
        const pm_blend_hull_node *nd = &s->hull_nodes[stack[top]];
        /* No element below is nearer than the node's bounds; the slack keeps elements whose
         * rounded distance could tie the best in play. The box is checked first (computed when
         * the node was pushed), the dearer capsule only when the box leaves the node in play. */
        double limit = best * (1.0 + 1e-12) + 1.0;
        if (box[top] > limit || capsule_bound2(nd, q) > limit) continue;
        if (nd->count > 0) {
            for (int k = nd->first; k < nd->first + nd->count; k++) {
                const int32_t *item = s->hull_items + s->hull_arity * k;
                pm_blend_raw_weights cand;
                double d2 = item_nearest(s, item, q, &cand);
                if (d2 < best || (d2 == best && s->hull_ties[k] < best_tie)) {
                    best = d2;
                    best_item = k;
                    best_tie = s->hull_ties[k];
                    limit = best * (1.0 + 1e-12) + 1.0;
                    *rw = cand;
                }
            }
            continue;
        }
        /* Nearer child on top of the stack: it usually settles the best early. A point can lie in
         * both boxes (outside a round hull, in the corner of a box of half of it): the capsules
         * then tell which is nearer. */
        int near = nd->first, far = nd->first + 1;
        double dn = box_bound2(&s->hull_nodes[near], q), df = box_bound2(&s->hull_nodes[far], q);
        if (df < dn || (df == dn && capsule_bound2(&s->hull_nodes[far], q) < capsule_bound2(&s->hull_nodes[near], q))) {
            swap_children(&near, &far, &dn, &df);
        }
        stack[top] = far;
        box[top++] = df;
        stack[top] = near;
        box[top++] = dn;
    }
    set_located(s, best_item, at);
}
