/* Blend-space cell location in 3D: a walk through the tetrahedra from a start the cell tree gives.
 *
 * Listing every tetrahedron that meets a bucket costs a lot in 3D: a Delaunay tetrahedralisation
 * has six or seven tetrahedra per sample, long and thin ones among them, and a bucket small
 * enough to meet only a few of them is met by each tetrahedron many times over. So a leaf of the
 * octree keeps one tetrahedron - one holding the leaf's centre, when one does - and a query walks
 * from it: while q lies strictly beyond a face of the current tetrahedron, step to the neighbour
 * across it. The octree is refined where tetrahedra crowd, so the start is a step or two from q.
 * A walk that would step out of the hull has found q outside it (hull faces bound the convex hull).
 *
 * Several tetrahedra contain a point on a face, edge or vertex; the cell reported is the
 * lowest-index one, as the buckets before this gave: across the face, around the edge, or the
 * vertex's first tetrahedron. Orientations are evaluated in doubles and decided exactly when the
 * rounding could matter, so every decision is the exact predicate's. A walk that has not arrived
 * after as many steps as there are tetrahedra (the visibility walk cannot cycle in a Delaunay
 * tetrahedralisation; this is a guard) falls back to testing every tetrahedron in index order. */
#include "blend_space_internal.h"
#include "core.h"

/* Sign of the volume of the tetrahedron with vertices v with vertex i replaced by q (the volume
 * pm_blend_space_tet_weights computes): negative when q lies strictly beyond the face opposite
 * vertex i. */
static int face_side(const pm_blend_space *s, const int32_t *v, int i, pm_dt3_point q) {
    int32_t u[3];
    for (int k = 0, m = 0; k < 4; k++)
        if (k != i) u[m++] = v[k];
    /* The volume is the other three's normal dotted with q's offset from their plane, its sign
     * flipped once for each place q moves to reach the end. */
    pm_dt3_point g = pm_dt3_normal(s->points[u[0]], s->points[u[1]], s->points[u[2]]);
    int sign = pm_blend_space_plane_sign(g, pm_dt3_sub(q, s->points[u[0]]));
    return (3 - i) % 2 ? -sign : sign;
}

/* The lowest-index tetrahedron around edge (a, b) of tetrahedron `tet`. */
static int edge_ring_min(const pm_blend_space *s, int tet, int32_t a, int32_t b) {
    const int32_t *tv = s->tet.vertices, *nb = s->tet.neighbors;
    int best = tet;
    /* Round the edge one way; if the hull stops that, the other way from the start. */
    for (int dir = 0; dir < 2; dir++) {
        int prev = tet, cur = -1;
        /* The faces of `tet` holding the edge are opposite its other two vertices. */
        int other[2], m = 0;
        for (int i = 0; i < 4; i++)
            if (tv[4 * tet + i] != a && tv[4 * tet + i] != b) other[m++] = i;
        cur = nb[4 * tet + other[dir]];
        while (cur >= 0 && cur != tet) {
            if (cur < best) best = cur;
            int next = -1;
            for (int i = 0; i < 4; i++) {
                int32_t w = tv[4 * cur + i];
                if (w != a && w != b && nb[4 * cur + i] != prev) next = nb[4 * cur + i];
            }
            prev = cur;
            cur = next;
        }
        if (cur == tet) break; /* closed ring: all seen */
    }
    return best;
}

/* The lowest-index tetrahedron containing q, given one that does. */
static int lowest_containing(const pm_blend_space *s, int tet, pm_dt3_point q) {
    const int32_t *v = s->tet.vertices + 4 * tet;
    int zero[4], zeros = 0, nonzero[4], nz = 0;
    for (int i = 0; i < 4; i++) {
        pm_dt3_point p[4];
        for (int k = 0; k < 4; k++) p[k] = k == i ? q : s->points[v[k]];
        if (pm_i128_sign(pm_dt3_volume(p[0], p[1], p[2], p[3])) == 0) zero[zeros++] = i;
        else nonzero[nz++] = i;
    }
    if (zeros == 1) {
        int other = s->tet.neighbors[4 * tet + zero[0]];
        return other >= 0 && other < tet ? other : tet;
    }
    if (zeros == 2) return edge_ring_min(s, tet, v[nonzero[0]], v[nonzero[1]]);
    if (zeros == 3) return s->vertex_cell[v[nonzero[0]]];
    return tet;
}

int pm_blend_space_walk(const pm_blend_space *s, int start, pm_dt3_point q) {
    int tet = start;
    for (int steps = 0; steps <= s->tet.tet_count; steps++) {
        const int32_t *v = s->tet.vertices + 4 * tet;
        int next = -2, on_face = 0;
        for (int i = 0; i < 4 && next == -2; i++) {
            int side = face_side(s, v, i, q);
            if (side < 0) next = s->tet.neighbors[4 * tet + i];
            on_face |= side == 0;
        }
        if (next == -1) return -1;
        if (next == -2) return on_face ? lowest_containing(s, tet, q) : tet;
        tet = next;
    }
    /* Not reached for a Delaunay tetrahedralisation; kept so that no input can loop. */
    for (int t = 0; t < s->tet.tet_count; t++) {
        const int32_t *v = s->tet.vertices + 4 * t;
        int inside = 1;
        for (int i = 0; i < 4 && inside; i++) inside = face_side(s, v, i, q) >= 0;
        if (inside) return t;
    }
    return -1;
}
