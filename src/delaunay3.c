/* Delaunay tetrahedralisation for 3D blend spaces: Bowyer-Watson insertion with exact integer
 * predicates.
 *
 * The hull is closed by "ghost" cells that join each hull face to a vertex at infinity, so a point
 * outside the hull is inserted exactly like one inside: its cavity is the set of cells whose open
 * circumsphere contains it, where a ghost's "sphere" is the open half-space beyond its hull face
 * plus the open circumdisc of the face (the limit of spheres through the face as their centre
 * recedes). With exact predicates and strict tests the cavity is star-shaped from the new point
 * even when points are co-spherical (a cube lattice) or coplanar with hull faces, so every cell
 * made by joining the point to the cavity boundary has positive volume: degenerate inputs cannot
 * produce flat cells or depend on rounding. Ties on a sphere keep the cells already there, and
 * the insertion order is a function of the points, so the result depends only on the points.
 *
 * Blend spaces hold at most a few thousand samples; points are inserted in Morton order so the
 * walk to each next point is short, and construction runs once per space. */
#include "delaunay3.h"

#include <stdlib.h>

#include "core.h"

#define INF_VERTEX (-1)
#define CELL_ALIVE 1u
#define CELL_CONFLICT 2u

pm_dt3_point pm_dt3_normal(pm_dt3_point a, pm_dt3_point b, pm_dt3_point c) {
    int64_t ux = b.x - a.x, uy = b.y - a.y, uz = b.z - a.z;
    int64_t vx = c.x - a.x, vy = c.y - a.y, vz = c.z - a.z;
    pm_dt3_point n;
    n.x = uy * vz - uz * vy;
    n.y = uz * vx - ux * vz;
    n.z = ux * vy - uy * vx;
    return n;
}

/* u . (v x w) for vectors with components of at most 2^25: below 2^77. */
static pm_i128 triple(pm_dt3_point u, pm_dt3_point v, pm_dt3_point w) {
    pm_dt3_point o = {0, 0, 0};
    return pm_dt3_dot_wide(u, pm_dt3_normal(o, v, w));
}

pm_i128 pm_dt3_volume(pm_dt3_point a, pm_dt3_point b, pm_dt3_point c, pm_dt3_point d) {
    return triple(pm_dt3_sub(b, a), pm_dt3_sub(c, a), pm_dt3_sub(d, a));
}

int pm_dt3_orient(pm_dt3_point a, pm_dt3_point b, pm_dt3_point c, pm_dt3_point d) {
    return pm_i128_sign(pm_dt3_volume(a, b, c, d));
}

int pm_dt3_insphere(pm_dt3_point a, pm_dt3_point b, pm_dt3_point c, pm_dt3_point d, pm_dt3_point e) {
    /* The 4x4 determinant of rows (p - e, |p - e|^2), expanded along the lift column. Differences
     * are at most 2^24 per component: lifts < 2^50, 3x3 minors < 2^75, each product < 2^125 and
     * the sum of four < 2^127. */
    pm_dt3_point ra = pm_dt3_sub(a, e), rb = pm_dt3_sub(b, e), rc = pm_dt3_sub(c, e), rd = pm_dt3_sub(d, e);
    int64_t la = ra.x * ra.x + ra.y * ra.y + ra.z * ra.z, lb = rb.x * rb.x + rb.y * rb.y + rb.z * rb.z;
    int64_t lc = rc.x * rc.x + rc.y * rc.y + rc.z * rc.z, ld = rd.x * rd.x + rd.y * rd.y + rd.z * rd.z;
    pm_i128 det = pm_i128_mul64(triple(rb, rc, rd), -la);
    det = pm_i128_add(det, pm_i128_mul64(triple(ra, rc, rd), lb));
    det = pm_i128_add(det, pm_i128_mul64(triple(ra, rb, rd), -lc));
    det = pm_i128_add(det, pm_i128_mul64(triple(ra, rb, rc), ld));
    /* With this expansion a point inside a positively oriented tetrahedron's sphere gives a
     * negative determinant (checked by the tests on a known configuration). */
    return -pm_i128_sign(det);
}

int pm_dt3_incircle(pm_dt3_point a, pm_dt3_point b, pm_dt3_point c, pm_dt3_point p) {
    /* In the plane, the 2D in-circle determinant relative to p is the component along the normal
     * of |u|^2 (v x w) + |v|^2 (w x u) + |w|^2 (u x v); its sign relative to the normal's (the
     * triangle's winding) says inside. Any non-zero normal component carries that sign. */
    pm_dt3_point n = pm_dt3_normal(a, b, c);
    int k = pm_dt3_dominant_axis(n);
    pm_dt3_point u = pm_dt3_sub(a, p), v = pm_dt3_sub(b, p), w = pm_dt3_sub(c, p), o = {0, 0, 0};
    int64_t lu = u.x * u.x + u.y * u.y + u.z * u.z, lv = v.x * v.x + v.y * v.y + v.z * v.z;
    int64_t lw = w.x * w.x + w.y * w.y + w.z * w.z;
    pm_i128 s = pm_i128_mul(lu, pm_dt3_component(pm_dt3_normal(o, v, w), k));
    s = pm_i128_add(s, pm_i128_mul(lv, pm_dt3_component(pm_dt3_normal(o, w, u), k)));
    s = pm_i128_add(s, pm_i128_mul(lw, pm_dt3_component(pm_dt3_normal(o, u, v), k)));
    int nk = pm_dt3_component(n, k) > 0 ? 1 : (pm_dt3_component(n, k) < 0 ? -1 : 0);
    return pm_i128_sign(s) * nk;
}

void pm_delaunay3_destroy(pm_tetrahedralization *t) {
    if (!t) return;
    pm_free(&t->allocator, t->vertices);
    pm_free(&t->allocator, t->neighbors);
    pm_free(&t->allocator, t->hull);
    memset(t, 0, sizeof *t);
}

/* ---- construction ---- */

typedef struct boundary_face {
    int32_t v[4];        /* the new cell: a cavity cell with its vertex `apex` replaced by the new point */
    int32_t apex;
    int32_t outside;     /* the cell beyond the face, kept */
    int32_t outside_face;
    int32_t cell;
} boundary_face;

typedef struct builder3 {
    const pm_dt3_point *p;
    const pm_allocator *allocator;
    /* Cells: 4 vertices (INF_VERTEX for ghosts) and 4 neighbours (across the face opposite each). */
    int32_t *v, *nb, *stamp, *free_cells;
    uint8_t *flags;
    int count, cap, free_count;
    int32_t *cavity;
    int cavity_count, cavity_cap;
    boundary_face *faces;
    int face_count, face_cap;
    /* Open-addressing table pairing the new cells' faces through their edge on the cavity boundary. */
    uint64_t *hkey;
    int32_t *hcell;
    int hcap;
    uint32_t rng;
} builder3;

static void *regrow(const pm_allocator *a, void *old, size_t old_bytes, size_t new_bytes) {
    void *p = pm_alloc(a, new_bytes, 0);
    if (p && old && old_bytes) memcpy(p, old, old_bytes);
    pm_free(a, old);
    return p;
}

/* Room for `need` entries in an array of capacity *cap (doubling); NULL when out of memory, the
 * old array then freed. */
static void *grow(const pm_allocator *a, void *ptr, int *cap, int need, size_t elem) {
    if (need <= *cap) return ptr;
    if (need > (1 << 28)) {
        pm_free(a, ptr);
        return NULL;
    }
    int nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    void *np = regrow(a, ptr, (size_t)*cap * elem, (size_t)nc * elem);
    *cap = np ? nc : 0;
    return np;
}

static int grow_cells(builder3 *b) {
    if (b->cap >= (1 << 27)) return 0;
    size_t old = (size_t)b->cap, cap = b->cap ? 2 * old : 256;
    b->v = (int32_t *)regrow(b->allocator, b->v, old * 4 * sizeof(int32_t), cap * 4 * sizeof(int32_t));
    b->nb = (int32_t *)regrow(b->allocator, b->nb, old * 4 * sizeof(int32_t), cap * 4 * sizeof(int32_t));
    b->stamp = (int32_t *)regrow(b->allocator, b->stamp, old * sizeof(int32_t), cap * sizeof(int32_t));
    b->free_cells = (int32_t *)regrow(b->allocator, b->free_cells, old * sizeof(int32_t), cap * sizeof(int32_t));
    b->flags = (uint8_t *)regrow(b->allocator, b->flags, old, cap);
    if (!b->v || !b->nb || !b->stamp || !b->free_cells || !b->flags) return 0;
    b->cap = (int)cap;
    return 1;
}

static int new_cell(builder3 *b) {
    int c;
    if (b->free_count > 0) c = b->free_cells[--b->free_count];
    else {
        if (b->count == b->cap && !grow_cells(b)) return -1;
        c = b->count++;
    }
    b->flags[c] = CELL_ALIVE;
    b->stamp[c] = -1;
    for (int i = 0; i < 4; i++) b->nb[4 * c + i] = -1;
    return c;
}

static int inf_index(const builder3 *b, int c) {
    for (int i = 0; i < 4; i++)
        if (b->v[4 * c + i] == INF_VERTEX) return i;
    return -1;
}

/* Orientation of cell c with its vertex i replaced by q (the other three finite). */
static int orient_replaced(const builder3 *b, int c, int i, pm_dt3_point q) {
    pm_dt3_point w[4];
    for (int k = 0; k < 4; k++) w[k] = k == i ? q : b->p[b->v[4 * c + k]];
    return pm_dt3_orient(w[0], w[1], w[2], w[3]);
}

/* Whether the open circumsphere of cell c contains q (for a ghost: the open half-space beyond its
 * hull face, or the face's open circumdisc when q is in its plane). Finite cells are positively
 * oriented; ghosts are oriented so that replacing the infinite vertex by a point beyond the hull
 * gives a positive volume. */
static int in_conflict(const builder3 *b, int c, pm_dt3_point q) {
    const int32_t *v = b->v + 4 * c;
    int k = inf_index(b, c);
    if (k < 0) return pm_dt3_insphere(b->p[v[0]], b->p[v[1]], b->p[v[2]], b->p[v[3]], q) > 0;
    int o = orient_replaced(b, c, k, q);
    if (o != 0) return o > 0;
    pm_dt3_point f[3];
    for (int i = 0, j = 0; i < 4; i++)
        if (i != k) f[j++] = b->p[v[i]];
    return pm_dt3_incircle(f[0], f[1], f[2], q) > 0;
}

static int scan_for_conflict(const builder3 *b, pm_dt3_point q) {
    for (int c = 0; c < b->count; c++)
        if ((b->flags[c] & CELL_ALIVE) && in_conflict(b, c, q)) return c;
    return -1;
}

/* A cell in conflict with q: a visibility walk from `start` (the face to try first varies
 * pseudo-randomly, deterministically, which keeps the walk from cycling), with an exhaustive scan
 * as the fallback should it run long. */
static int locate(builder3 *b, pm_dt3_point q, int start) {
    int c = start;
    long limit = 4L * b->count + 64;
    for (long step = 0; step < limit; step++) {
        int k = inf_index(b, c);
        if (k >= 0) {
            if (in_conflict(b, c, q)) return c;
            c = b->nb[4 * c + k];
            continue;
        }
        b->rng = b->rng * 1664525u + 1013904223u;
        int first = (int)(b->rng >> 16) & 3, next = -1;
        for (int t = 0; t < 4 && next < 0; t++) {
            int i = (first + t) & 3;
            if (orient_replaced(b, c, i, q) < 0) next = b->nb[4 * c + i];
        }
        /* q is in the closed tetrahedron: strictly inside its sphere, as it is not a vertex. */
        if (next < 0) return in_conflict(b, c, q) ? c : scan_for_conflict(b, q);
        c = next;
    }
    return scan_for_conflict(b, q);
}

static uint64_t edge_key(int32_t a, int32_t c) {
    /* +1 maps the infinite vertex to 0 and keeps key 0 free to mark empty slots. */
    uint64_t lo = (uint64_t)(PM_MIN(a, c) + 1), hi = (uint64_t)(PM_MAX(a, c) + 1);
    return (lo << 32) | hi;
}

/* Links the new cells' faces that contain the new point: each such face is the new point joined to
 * an edge of the cavity boundary, and exactly two new cells share it. */
static int link_new_cells(builder3 *b) {
    int need = 1;
    while (need < 8 * b->face_count) need *= 2;
    if (need > b->hcap) {
        pm_free(b->allocator, b->hkey);
        pm_free(b->allocator, b->hcell);
        b->hkey = (uint64_t *)pm_alloc_array(b->allocator, (size_t)need, sizeof(uint64_t), 0);
        b->hcell = (int32_t *)pm_alloc_array(b->allocator, (size_t)need, sizeof(int32_t), 0);
        b->hcap = b->hkey && b->hcell ? need : 0;
        if (!b->hcap) return 0;
    }
    memset(b->hkey, 0, (size_t)need * sizeof(uint64_t));
    uint64_t mask = (uint64_t)need - 1u;
    for (int f = 0; f < b->face_count; f++) {
        const boundary_face *bf = &b->faces[f];
        for (int j = 0; j < 4; j++) {
            if (j == bf->apex) continue;
            int32_t e[2];
            for (int i = 0, m = 0; i < 4; i++)
                if (i != j && i != bf->apex) e[m++] = bf->v[i];
            uint64_t key = edge_key(e[0], e[1]);
            uint64_t h = (key * 0x9E3779B97F4A7C15u) >> 20 & mask;
            while (b->hkey[h] != 0u && b->hkey[h] != key) h = (h + 1u) & mask;
            if (b->hkey[h] == key) {
                int other = b->hcell[h] >> 2, of = b->hcell[h] & 3;
                b->nb[4 * bf->cell + j] = other;
                b->nb[4 * other + of] = bf->cell;
            } else {
                b->hkey[h] = key;
                b->hcell[h] = (bf->cell << 2) | j;
            }
        }
    }
    return 1;
}

/* Inserts point `pi`; *last is the walk's start and receives a new cell. */
static pm_result insert_point(builder3 *b, int pi, int *last, int id, pm_error *error) {
    pm_dt3_point q = b->p[pi];
    int c0 = locate(b, q, *last);
    if (c0 < 0) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "delaunay3: point %d lies in no cell (duplicate point?)", pi);
    b->cavity_count = 0;
    b->cavity[b->cavity_count++] = c0;
    b->stamp[c0] = id;
    b->flags[c0] |= CELL_CONFLICT;
    for (int k = 0; k < b->cavity_count; k++) {
        int c = b->cavity[k];
        for (int i = 0; i < 4; i++) {
            int u = b->nb[4 * c + i];
            if (b->stamp[u] == id) continue;
            b->stamp[u] = id;
            if (in_conflict(b, u, q)) {
                b->cavity = (int32_t *)grow(b->allocator, b->cavity, &b->cavity_cap, b->cavity_count + 1, sizeof(int32_t));
                if (!b->cavity)
                    return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay3: out of memory");
                b->flags[u] |= CELL_CONFLICT;
                b->cavity[b->cavity_count++] = u;
            } else b->flags[u] &= (uint8_t)~CELL_CONFLICT;
        }
    }
    b->face_count = 0;
    for (int k = 0; k < b->cavity_count; k++) {
        int c = b->cavity[k];
        for (int i = 0; i < 4; i++) {
            int u = b->nb[4 * c + i];
            if (b->flags[u] & CELL_CONFLICT) continue;
            b->faces = (boundary_face *)grow(b->allocator, b->faces, &b->face_cap, b->face_count + 1, sizeof(boundary_face));
            if (!b->faces)
                return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay3: out of memory");
            boundary_face *bf = &b->faces[b->face_count++];
            for (int m = 0; m < 4; m++) bf->v[m] = m == i ? pi : b->v[4 * c + m];
            bf->apex = i;
            bf->outside = u;
            bf->outside_face = -1;
            for (int m = 0; m < 4; m++)
                if (b->nb[4 * u + m] == c) bf->outside_face = m;
        }
    }
    /* The cavity's cells are free for the new ones (their data was copied above). */
    for (int k = 0; k < b->cavity_count; k++) {
        b->flags[b->cavity[k]] = 0;
        b->free_cells[b->free_count++] = b->cavity[k];
    }
    for (int f = 0; f < b->face_count; f++) {
        boundary_face *bf = &b->faces[f];
        int x = new_cell(b);
        if (x < 0) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay3: out of memory");
        memcpy(b->v + 4 * x, bf->v, sizeof bf->v);
        b->nb[4 * x + bf->apex] = bf->outside;
        b->nb[4 * bf->outside + bf->outside_face] = x;
        bf->cell = x;
    }
    if (!link_new_cells(b)) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay3: out of memory");
    *last = b->faces[0].cell;
    return PM_OK;
}

/* Whether two cells' faces (opposite i in c, opposite j in d) have the same vertices. */
static int same_face(const builder3 *b, int c, int i, int d, int j) {
    int found = 0;
    for (int m = 0; m < 4; m++) {
        if (m == i) continue;
        for (int k = 0; k < 4; k++)
            if (k != j && b->v[4 * d + k] == b->v[4 * c + m]) found++;
    }
    return found == 3;
}

/* The first tetrahedron and its four ghosts. */
static pm_result make_initial(builder3 *b, const int *idx, pm_error *error) {
    int w[4] = {idx[0], idx[1], idx[2], idx[3]};
    if (pm_dt3_orient(b->p[w[0]], b->p[w[1]], b->p[w[2]], b->p[w[3]]) < 0) {
        int t = w[2];
        w[2] = w[3];
        w[3] = t;
    }
    int cells[5];
    for (int k = 0; k < 5; k++)
        if ((cells[k] = new_cell(b)) < 0) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay3: out of memory");
    memcpy(b->v + 4 * cells[0], w, sizeof w);
    for (int f = 0; f < 4; f++) {
        int g = cells[f + 1];
        int32_t *gv = b->v + 4 * g;
        memcpy(gv, w, sizeof w);
        gv[f] = INF_VERTEX;
        /* Swapping two finite vertices turns the orientation outwards. */
        int a = (f + 1) & 3, c = (f + 2) & 3;
        int32_t t = gv[a];
        gv[a] = gv[c];
        gv[c] = t;
    }
    for (int x = 0; x < 5; x++)
        for (int i = 0; i < 4; i++)
            for (int y = 0; y < 5 && b->nb[4 * cells[x] + i] < 0; y++)
                for (int j = 0; j < 4; j++)
                    if (y != x && same_face(b, cells[x], i, cells[y], j)) {
                        b->nb[4 * cells[x] + i] = cells[y];
                        break;
                    }
    return PM_OK;
}

static uint64_t spread_bits(uint64_t x) {
    x &= 0x3FFu;
    x = (x | x << 16) & 0x30000FFu;
    x = (x | x << 8) & 0x300F00Fu;
    x = (x | x << 4) & 0x30C30C3u;
    return (x | x << 2) & 0x9249249u;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static pm_result export_cells(pm_tetrahedralization *out, builder3 *b, pm_error *error) {
    int32_t *map = (int32_t *)pm_alloc_array(b->allocator, (size_t)b->count, sizeof(int32_t), 0);
    if (!map) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay3: out of memory");
    int tets = 0, hull = 0;
    for (int c = 0; c < b->count; c++) map[c] = (b->flags[c] & CELL_ALIVE) && inf_index(b, c) < 0 ? tets++ : -1;
    out->vertices = (int32_t *)pm_alloc_array(b->allocator, (size_t)tets * 4, sizeof(int32_t), 0);
    out->neighbors = (int32_t *)pm_alloc_array(b->allocator, (size_t)tets * 4, sizeof(int32_t), 0);
    pm_result r = PM_OK;
    if (!out->vertices || !out->neighbors) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay3: out of memory for %d tetrahedra", tets);
        goto done;
    }
    for (int c = 0; c < b->count; c++) {
        int t = map[c];
        if (t < 0) continue;
        for (int i = 0; i < 4; i++) {
            out->vertices[4 * t + i] = b->v[4 * c + i];
            out->neighbors[4 * t + i] = map[b->nb[4 * c + i]];
            hull += out->neighbors[4 * t + i] < 0;
        }
    }
    out->tet_count = tets;
    out->hull = (int32_t *)pm_alloc_array(b->allocator, (size_t)hull * 2 + 2, sizeof(int32_t), 0);
    if (!out->hull) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay3: out of memory");
        goto done;
    }
    for (int t = 0; t < tets; t++)
        for (int i = 0; i < 4; i++)
            if (out->neighbors[4 * t + i] < 0) {
                out->hull[2 * out->hull_count] = t;
                out->hull[2 * out->hull_count + 1] = i;
                out->hull_count++;
            }
done:
    pm_free(b->allocator, map);
    return r;
}

pm_result pm_delaunay3_build(pm_tetrahedralization *out, const pm_dt3_point *p, int n, const pm_allocator *allocator,
                             pm_error *error) {
    if (!out || !p) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "delaunay3: NULL argument");
    memset(out, 0, sizeof *out);
    if (n < 4) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "delaunay3: %d points cannot be tetrahedralised", n);
    out->allocator = pm_allocator_resolve(allocator);
    builder3 b;
    memset(&b, 0, sizeof b);
    b.p = p;
    b.allocator = &out->allocator;
    b.rng = 12345u;
    pm_result r = PM_OK;
    /* Insertion order: Morton order of the points (index breaks ties), so that consecutive points
     * are near one another and each walk is short. */
    uint64_t *order = (uint64_t *)pm_alloc_array(b.allocator, (size_t)n, sizeof(uint64_t), 0);
    b.cavity = (int32_t *)grow(b.allocator, NULL, &b.cavity_cap, 64, sizeof(int32_t));
    if (!order || !b.cavity) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay3: out of memory for %d points", n);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        uint64_t x = (uint64_t)PM_MIN(p[i].x >> 14, 1023), y = (uint64_t)PM_MIN(p[i].y >> 14, 1023);
        uint64_t z = (uint64_t)PM_MIN(p[i].z >> 14, 1023);
        order[i] = (spread_bits(x) | spread_bits(y) << 1 | spread_bits(z) << 2) << 32 | (uint64_t)i;
    }
    qsort(order, (size_t)n, sizeof(uint64_t), compare_u64);
    /* The first tetrahedron: the first four affinely independent points in that order. */
    int first[4] = {(int)(order[0] & 0xFFFFFFFFu), (int)(order[1] & 0xFFFFFFFFu), -1, -1};
    for (int k = 2; k < n && first[3] < 0; k++) {
        int i = (int)(order[k] & 0xFFFFFFFFu);
        if (first[2] < 0) {
            pm_dt3_point nrm = pm_dt3_normal(p[first[0]], p[first[1]], p[i]);
            if (nrm.x || nrm.y || nrm.z) first[2] = i;
        } else if (pm_dt3_orient(p[first[0]], p[first[1]], p[first[2]], p[i]) != 0)
            first[3] = i;
    }
    if (first[3] < 0) {
        r = pm_fail(error, PM_ERR_INVALID_ARGUMENT, "delaunay3: the points are coplanar");
        goto done;
    }
    if ((r = make_initial(&b, first, error)) != PM_OK) goto done;
    int last = 0, id = 0;
    for (int k = 0; k < n; k++) {
        int i = (int)(order[k] & 0xFFFFFFFFu);
        if (i == first[0] || i == first[1] || i == first[2] || i == first[3]) continue;
        if ((r = insert_point(&b, i, &last, ++id, error)) != PM_OK) goto done;
    }
    r = export_cells(out, &b, error);
done:
    pm_free(b.allocator, order);
    pm_free(b.allocator, b.v);
    pm_free(b.allocator, b.nb);
    pm_free(b.allocator, b.stamp);
    pm_free(b.allocator, b.free_cells);
    pm_free(b.allocator, b.flags);
    pm_free(b.allocator, b.cavity);
    pm_free(b.allocator, b.faces);
    pm_free(b.allocator, b.hkey);
    pm_free(b.allocator, b.hcell);
    if (r != PM_OK) pm_delaunay3_destroy(out);
    return r;
}
