/* Blend-space weights: barycentric weights in the cell a query is located in (through the cell
 * tree, the trapezoidal map or a walk: blend_space_tree.c, _trapezoids.c, _walk.c) or at its
 * projection onto the hull (blend_space_hull.c).
 *
 * Weights are ratios of exact integers on the snapped grid. Where several cells share a boundary
 * (an edge in 2D, a face or edge in 3D) the weights of a point on it are computed from that
 * boundary's samples alone, from integers that do not depend on which cell found the point or on
 * the order it lists its vertices; so the shared boundary gets the same weights, bit for bit,
 * whichever cell (or equivalent tetrahedralisation of co-spherical samples) is used. */
#include <math.h>

#include "blend_space_internal.h"
#include "core.h"

/* Weights below this fraction are dropped: the sample would cost a sampling job for no visible effect. */
#define PM_BLEND_MIN_WEIGHT 1e-6f

/* ---- exact weights on an edge, a triangle and a tetrahedron ---- */

/* The nearest point of segment ab to q (its orthogonal projection, clamped to the ends). Each weight
 * is one correctly rounded quotient of exact integers that read the same from either end. */
void pm_blend_space_edge_weights(const pm_blend_space *s, int ra, int rb, pm_dt3_point q, pm_blend_raw_weights *rw) {
    pm_dt3_point a = s->points[ra], b = s->points[rb], ab = pm_dt3_sub(b, a);
    int64_t den = pm_dt3_dot(ab, ab), na = pm_dt3_dot(pm_dt3_sub(b, q), ab), nb = pm_dt3_dot(pm_dt3_sub(q, a), ab);
    rw->count = 2;
    rw->rank[0] = ra;
    rw->rank[1] = rb;
    rw->w[0] = nb <= 0 ? 1.0 : (na <= 0 ? 0.0 : (double)na / (double)den);
    rw->w[1] = nb <= 0 ? 0.0 : (na <= 0 ? 1.0 : (double)nb / (double)den);
}

/* Squared distance from q to the point of an edge that edge_weights chose. */
double pm_blend_space_edge_distance2(const pm_blend_space *s, const pm_blend_raw_weights *rw, pm_dt3_point q) {
    double p[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < 2; i++) {
        pm_dt3_point v = s->points[rw->rank[i]];
        p[0] += rw->w[i] * (double)v.x;
        p[1] += rw->w[i] * (double)v.y;
        p[2] += rw->w[i] * (double)v.z;
    }
    double dx = (double)q.x - p[0], dy = (double)q.y - p[1], dz = (double)q.z - p[2];
    return dx * dx + dy * dy + dz * dz;
}

/* Barycentric weights of q's orthogonal projection onto the plane of triangle abc, when it falls in
 * the closed triangle (else 0). The numerators ((c - b) x (q - b)) . N over N . N, N the normal,
 * are the same integers whatever the order of a, b, c (both factors change sign together). */
int pm_blend_space_face_weights(const pm_blend_space *s, int ra, int rb, int rc, pm_dt3_point q, pm_blend_raw_weights *rw) {
    const int ranks[3] = {ra, rb, rc};
    pm_dt3_point p[3] = {s->points[ra], s->points[rb], s->points[rc]};
    pm_dt3_point nrm = pm_dt3_normal(p[0], p[1], p[2]), o = {0, 0, 0};
    pm_i128 num[3];
    int zeros = 0, zero_at = 0;
    for (int i = 0; i < 3; i++) {
        pm_dt3_point b = p[(i + 1) % 3], c = p[(i + 2) % 3];
        /* Cross products of differences below 2^25: components below 2^51. */
        num[i] = pm_dt3_dot_wide(pm_dt3_normal(o, pm_dt3_sub(c, b), pm_dt3_sub(q, b)), nrm);
        int sg = pm_i128_sign(num[i]);
        if (sg < 0) return 0;
        if (sg == 0) {
            zeros++;
            zero_at = i;
        }
    }
    pm_blend_raw_set(rw, 3, ranks);
    if (zeros == 1) {
        /* On an edge: the edge's own weights, as every cell sharing it computes them. */
        pm_blend_raw_weights e;
        pm_blend_space_edge_weights(s, ranks[(zero_at + 1) % 3], ranks[(zero_at + 2) % 3], q, &e);
        for (int i = 0; i < 2; i++) pm_blend_raw_put(rw, e.rank[i], e.w[i]);
    } else if (zeros == 2) {
        for (int i = 0; i < 3; i++) rw->w[i] = pm_i128_sign(num[i]) > 0 ? 1.0 : 0.0;
    } else {
        double den = pm_i128_to_double(pm_dt3_dot_wide(nrm, nrm));
        for (int i = 0; i < 3; i++) rw->w[i] = pm_i128_to_double(num[i]) / den;
    }
    return 1;
}

int pm_blend_space_tet_weights(const pm_blend_space *s, int tet, pm_dt3_point q, pm_blend_raw_weights *rw) {
    const int32_t *v = s->tet.vertices + 4 * tet;
    pm_i128 vol[4], total = pm_i128_from(0);
    int zeros = 0, nonzero[4], count = 0;
    for (int i = 0; i < 4; i++) {
        pm_dt3_point w[4];
        for (int k = 0; k < 4; k++) w[k] = k == i ? q : s->points[v[k]];
        vol[i] = pm_dt3_volume(w[0], w[1], w[2], w[3]);
        int sg = pm_i128_sign(vol[i]);
        if (sg < 0) return 0;
        if (sg == 0) zeros++;
        else nonzero[count++] = v[i];
        total = pm_i128_add(total, vol[i]);
    }
    int ranks[4] = {v[0], v[1], v[2], v[3]};
    pm_blend_raw_set(rw, 4, ranks);
    pm_blend_raw_weights sub;
    if (zeros == 1) {
        /* On a face: the face's own weights, whichever of its two tetrahedra found the point. */
        pm_blend_space_face_weights(s, nonzero[0], nonzero[1], nonzero[2], q, &sub);
        for (int i = 0; i < 3; i++) pm_blend_raw_put(rw, sub.rank[i], sub.w[i]);
    } else if (zeros == 2) {
        pm_blend_space_edge_weights(s, nonzero[0], nonzero[1], q, &sub);
        for (int i = 0; i < 2; i++) pm_blend_raw_put(rw, sub.rank[i], sub.w[i]);
    } else if (zeros == 3) pm_blend_raw_put(rw, nonzero[0], 1.0);
    else {
        double t = pm_i128_to_double(total);
        for (int i = 0; i < 4; i++) rw->w[i] = pm_i128_to_double(vol[i]) / t;
    }
    return 1;
}

/* ---- location ---- */

static void locate_line(const pm_blend_space *s, pm_dt3_point q, pm_blend_raw_weights *rw, pm_blend_located *at) {
    int n = s->sample_count;
    pm_dt3_point o = s->points[0], dir = pm_dt3_sub(s->points[n - 1], o);
    int64_t sq = pm_dt3_dot(pm_dt3_sub(q, o), dir);
    if (s->collinear) {
        pm_dt3_point off = pm_dt3_normal(o, s->points[n - 1], q);
        if (off.x || off.y || off.z) at->outside = 1;
    }
    at->kind = PM_BLEND_CELL_SEGMENT;
    at->count = 2;
    int lo = 0, hi = n - 1;
    if (sq <= s->line_s[0] || sq >= s->line_s[n - 1]) {
        int k = sq <= s->line_s[0] ? 0 : n - 1;
        if (sq != s->line_s[k]) at->outside = 1;
        at->cell = k == 0 ? 0 : n - 2;
        at->rank[0] = at->cell;
        at->rank[1] = at->cell + 1;
        rw->count = 1;
        rw->rank[0] = k;
        rw->w[0] = 1.0;
        return;
    }
    /* Binary search for line_s[lo] <= sq < line_s[lo + 1]. */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (s->line_s[mid] <= sq) lo = mid;
        else hi = mid;
    }
    at->cell = lo;
    at->rank[0] = lo;
    at->rank[1] = lo + 1;
    double t = (double)(sq - s->line_s[lo]) / (double)(s->line_s[lo + 1] - s->line_s[lo]);
    rw->count = 2;
    rw->rank[0] = lo;
    rw->rank[1] = lo + 1;
    rw->w[0] = 1.0 - t;
    rw->w[1] = t;
}

static void set_triangle(const pm_blend_space *s, int tri, pm_blend_located *at) {
    at->kind = PM_BLEND_CELL_TRIANGLE;
    at->cell = tri;
    at->count = 3;
    for (int i = 0; i < 3; i++) at->rank[i] = s->tri.vertices[3 * tri + i];
}

static void set_tetrahedron(const pm_blend_space *s, int tet, pm_blend_located *at) {
    at->kind = PM_BLEND_CELL_TETRAHEDRON;
    at->cell = tet;
    at->count = 4;
    for (int i = 0; i < 4; i++) at->rank[i] = s->tet.vertices[4 * tet + i];
}

/* Weights of q in triangle `tri`; 0 when q is outside it. */
static int triangle_weights(const pm_blend_space *s, int tri, pm_dt_point q, pm_blend_raw_weights *rw, pm_blend_located *at) {
    const int32_t *v = s->tri.vertices + 3 * tri;
    const pm_dt_point *pts = s->plane_points;
    pm_dt_point a = pts[v[0]], b = pts[v[1]], c = pts[v[2]];
    int64_t wa = pm_dt_orient(b, c, q), wb = pm_dt_orient(c, a, q), wc = pm_dt_orient(a, b, q);
    if (wa < 0 || wb < 0 || wc < 0) return 0;
    /* Exact integer areas below 2^53: a point on an edge gets exactly 0 for the opposite
     * vertex, and the two triangles sharing the edge give the same correctly rounded ratios. */
    double area = (double)(wa + wb + wc);
    set_triangle(s, tri, at);
    rw->count = 3;
    for (int i = 0; i < 3; i++) rw->rank[i] = v[i];
    rw->w[0] = (double)wa / area;
    rw->w[1] = (double)wb / area;
    rw->w[2] = (double)wc / area;
    return 1;
}

static void locate_triangles(const pm_blend_space *s, pm_dt3_point q3, pm_blend_raw_weights *rw, pm_blend_located *at) {
    pm_dt_point q = {q3.x, q3.y};
    int64_t coords[2] = {q.x, q.y};
    const pm_blend_tree_node *leaf = pm_blend_space_tree_leaf(s, 2, coords);
    if (leaf->count == PM_BLEND_TREE_CROWDED) {
        int tri = pm_blend_space_trapezoid_cell(s, leaf->first, q);
        if (tri >= 0 && triangle_weights(s, tri, q, rw, at)) return;
    } else {
        for (int32_t k = leaf->first; k < leaf->first + leaf->count; k++)
            if (triangle_weights(s, s->tree_items[k], q, rw, at)) return;
    }
    pm_blend_space_hull_nearest(s, q3, rw, at);
}

/* Coplanar 3D samples: q is projected orthogonally onto their plane (exactly, through the
 * barycentric numerators); off the plane it is reported outside. */
static void locate_plane(const pm_blend_space *s, pm_dt3_point q, pm_blend_raw_weights *rw, pm_blend_located *at) {
    const pm_triangulation *t = &s->tri;
    pm_dt3_point nrm = s->plane_normal;
    pm_i128 height = pm_dt3_dot_wide(pm_dt3_sub(q, s->points[0]), nrm);
    if (pm_i128_sign(height) != 0) at->outside = 1;
    /* The bucket of the rounded projection; buckets are padded by one unit for the rounding. */
    double h = pm_i128_to_double(height) / pm_i128_to_double(pm_dt3_dot_wide(nrm, nrm));
    double p[3] = {(double)q.x - h * (double)nrm.x, (double)q.y - h * (double)nrm.y, (double)q.z - h * (double)nrm.z};
    int64_t uv[2];
    for (int d = 0, m = 0; d < 3; d++)
        if (d != s->plane_axis) uv[m++] = (int64_t)floor(PM_CLAMP(p[d], 0.0, (double)PM_DT_COORD_MAX) + 0.5);
    const pm_blend_tree_node *leaf = pm_blend_space_tree_leaf(s, 2, uv);
    for (int32_t k = leaf->first; k < leaf->first + leaf->count; k++) {
        int tri = s->tree_items[k];
        const int32_t *v = t->vertices + 3 * tri;
        if (!pm_blend_space_face_weights(s, v[0], v[1], v[2], q, rw)) continue;
        set_triangle(s, tri, at);
        return;
    }
    pm_blend_space_hull_nearest(s, q, rw, at);
}

static void locate_tetrahedra(const pm_blend_space *s, pm_dt3_point q, pm_blend_raw_weights *rw, pm_blend_located *at) {
    int64_t coords[3] = {q.x, q.y, q.z};
    const pm_blend_tree_node *leaf = pm_blend_space_tree_leaf(s, 3, coords);
    int tet = leaf->first >= 0 ? pm_blend_space_walk(s, leaf->first, q) : -1;
    if (tet >= 0 && pm_blend_space_tet_weights(s, tet, q, rw)) {
        set_tetrahedron(s, tet, at);
        return;
    }
    pm_blend_space_hull_nearest(s, q, rw, at);
}

/* The reference location: every cell in index order (the first containing q is the lowest-index
 * one), else every hull element. */
static void locate_brute(const pm_blend_space *s, pm_dt3_point q, pm_blend_raw_weights *rw, pm_blend_located *at) {
    if (s->mode == SPACE_TETRAHEDRA) {
        for (int tet = 0; tet < s->tet.tet_count; tet++)
            if (pm_blend_space_tet_weights(s, tet, q, rw)) {
                set_tetrahedron(s, tet, at);
                return;
            }
    } else if (s->coplanar) {
        if (pm_i128_sign(pm_dt3_dot_wide(pm_dt3_sub(q, s->points[0]), s->plane_normal)) != 0) at->outside = 1;
        for (int tri = 0; tri < s->tri.triangle_count; tri++) {
            const int32_t *v = s->tri.vertices + 3 * tri;
            if (pm_blend_space_face_weights(s, v[0], v[1], v[2], q, rw)) {
                set_triangle(s, tri, at);
                return;
            }
        }
    } else {
        pm_dt_point q2 = {q.x, q.y};
        for (int tri = 0; tri < s->tri.triangle_count; tri++)
            if (triangle_weights(s, tri, q2, rw, at)) return;
    }
    pm_blend_space_hull_nearest_brute(s, q, rw, at);
}

static pm_result weights_at(pm_blend_space_weights *out, const pm_blend_space *s, const float *params, int brute,
                            pm_error *error) {
    if (!out || !s || !params) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend space weights: NULL argument");
    for (int d = 0; d < s->dimensions; d++)
        if (!isfinite(params[d]))
            return pm_fail(error, PM_ERR_NUMERIC, "blend space '%s': parameter %s is not finite", s->name, s->axis_names[d]);
    /* Snapped before *out is cleared: params may be the previous result's out->params. */
    int clamped = 0;
    pm_dt3_point q = pm_blend_space_snap(s, params, &clamped);
    memset(out, 0, sizeof *out);
    pm_blend_raw_weights rw;
    pm_blend_located at;
    memset(&rw, 0, sizeof rw);
    memset(&at, 0, sizeof at);
    switch (s->mode) {
    case SPACE_POINT:
        at.kind = PM_BLEND_CELL_POINT;
        at.cell = -1;
        at.count = 1;
        /* The hull is the sample itself: any other point is projected onto it. */
        at.outside = q.x != s->points[0].x || q.y != s->points[0].y || q.z != s->points[0].z;
        rw.count = 1;
        rw.w[0] = 1.0;
        break;
    case SPACE_LINE: locate_line(s, q, &rw, &at); break;
    case SPACE_TRIANGLES:
        if (brute) locate_brute(s, q, &rw, &at);
        else if (s->coplanar) locate_plane(s, q, &rw, &at);
        else locate_triangles(s, q, &rw, &at);
        break;
    case SPACE_TETRAHEDRA:
        if (brute) locate_brute(s, q, &rw, &at);
        else locate_tetrahedra(s, q, &rw, &at);
        break;
    }
    out->cell_kind = at.kind;
    out->cell = at.cell;
    out->outside = at.outside || clamped;
    out->cell_sample_count = at.count;
    for (int i = 0; i < at.count; i++) out->cell_samples[i] = s->order[at.rank[i]];

    /* Drop negligible weights, list the rest by rank (coordinates), renormalise: summing in rank
     * order keeps the total independent of the order the cell lists its vertices in. */
    double total = 0.0;
    int kept = 0;
    int rank[PM_BLEND_SPACE_MAX_WEIGHTS];
    double w[PM_BLEND_SPACE_MAX_WEIGHTS];
    for (int i = 0; i < rw.count; i++)
        if (rw.w[i] >= (double)PM_BLEND_MIN_WEIGHT) {
            rank[kept] = rw.rank[i];
            w[kept] = rw.w[i];
            kept++;
        }
    for (int i = 1; i < kept; i++)
        for (int j = i; j > 0 && rank[j] < rank[j - 1]; j--) {
            int tr = rank[j];
            rank[j] = rank[j - 1];
            rank[j - 1] = tr;
            double tw = w[j];
            w[j] = w[j - 1];
            w[j - 1] = tw;
        }
    for (int i = 0; i < kept; i++) total += w[i];
    out->count = kept;
    for (int i = 0; i < kept; i++) {
        out->samples[i] = s->order[rank[i]];
        out->weights[i] = kept == 1 ? 1.0f : (float)(w[i] / total);
    }
    /* The point used: the weighted sum of the samples' coordinates (the projection when outside). */
    for (int d = 0; d < s->dimensions; d++) {
        double p = 0.0;
        for (int i = 0; i < kept; i++) p += (double)out->weights[i] * s->params[out->samples[i] * PM_BLEND_SPACE_MAX_DIMENSIONS + d];
        out->params[d] = (float)p;
    }
    return PM_OK;
}

pm_result pm_blend_space_weights_at(pm_blend_space_weights *out, const pm_blend_space *s, const float *params,
                                    pm_error *error) {
    return weights_at(out, s, params, 0, error);
}

pm_result pm_blend_space_weights_brute(pm_blend_space_weights *out, const pm_blend_space *s, const float *params,
                                       pm_error *error) {
    return weights_at(out, s, params, 1, error);
}
