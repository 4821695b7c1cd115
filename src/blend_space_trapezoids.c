/* Blend-space cell location where buckets cannot help: a trapezoidal map of the 2D triangulation.
 *
 * Around a vertex or edge shared by very many thin triangles (samples on a line and one apex, two
 * long rows) no bucket is small enough to hold a few of them, so the cell tree marks such buckets
 * crowded and sends their queries here. The map is the classic randomised incremental one: the
 * triangulation's edges are inserted in a shuffled order, each splitting the trapezoids it
 * crosses, and a search DAG records the splits. A query descends the DAG (comparing with a vertex
 * or testing against an edge) in expected O(log n) steps whatever the layout; the shuffle is seeded
 * by a constant, so the structure depends only on the triangulation, and the DAG's height (the
 * longest possible query) is checked, building again with the next seed when it is unusually tall.
 *
 * Degenerate positions are resolved symbolically: points are ordered by (x, y) - a shear that
 * makes vertical edges slanted - and a query point is taken as if moved an infinitesimal step up
 * and a smaller one right, so it always lands in the interior of one trapezoid, whose closure
 * holds the real point. The face of that trapezoid then contains the point, and the cell reported
 * is the lowest-index triangle containing it, as the buckets give (its edge neighbour or a
 * vertex's lowest-index triangle when the point is on an edge or vertex). All tests are exact. */
#include <stdlib.h>

#include "blend_space_internal.h"
#include "core.h"

/* Seeds tried at most, and the height (in DAG levels, per log2 of the edge count) accepted at once. */
#define TZ_TRIES 4
#define TZ_HEIGHT_PER_LOG 4

typedef struct trap {
    int32_t top, bottom;    /* edges; -1 unbounded */
    int32_t leftp, rightp;  /* vertices; -1 at infinity */
    int32_t ul, ll, ur, lr; /* neighbours sharing the top (u) or bottom (l), on the left or right; -1 none */
    int32_t node;           /* its leaf in the DAG */
} trap;

typedef struct tz_build {
    const pm_allocator *a;
    const pm_dt_point *p;
    const pm_blend_tz_edge *edges;
    trap *traps;
    pm_blend_tz_node *nodes;
    size_t trap_count, trap_cap, node_count, node_cap;
    int32_t *crossed, *upper, *lower;
    size_t crossed_cap, upper_cap, lower_cap;
    int failed;
} tz_build;

static int lex_less(const pm_dt_point *p, int32_t a, int32_t b) {
    return p[a].x < p[b].x || (p[a].x == p[b].x && p[a].y < p[b].y);
}

static int grow(const pm_allocator *a, void **data, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 1;
    size_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    void *q = pm_alloc_array(a, c, elem, 0);
    if (!q) return 0;
    if (*cap) memcpy(q, *data, *cap * elem);
    pm_free(a, *data);
    *data = q;
    *cap = c;
    return 1;
}

static int32_t new_node(tz_build *b) {
    if (!grow(b->a, (void **)&b->nodes, &b->node_cap, b->node_count + 1, sizeof(pm_blend_tz_node))) {
        b->failed = 1;
        return 0;
    }
    pm_blend_tz_node *n = &b->nodes[b->node_count];
    n->index = 0;
    n->child[0] = n->child[1] = -1;
    return (int32_t)b->node_count++;
}

static int32_t new_trap(tz_build *b, int32_t top, int32_t bottom, int32_t leftp, int32_t rightp) {
    if (!grow(b->a, (void **)&b->traps, &b->trap_cap, b->trap_count + 1, sizeof(trap))) {
        b->failed = 1;
        return 0;
    }
    int32_t node = new_node(b);
    if (b->failed) return 0;
    trap *t = &b->traps[b->trap_count];
    t->top = top;
    t->bottom = bottom;
    t->leftp = leftp;
    t->rightp = rightp;
    t->ul = t->ll = t->ur = t->lr = -1;
    t->node = node;
    b->nodes[node].index = (int32_t)b->trap_count;
    return (int32_t)b->trap_count++;
}

static void set_x(tz_build *b, int32_t node, int32_t point, int32_t left, int32_t right) {
    b->nodes[node].index = point;
    b->nodes[node].child[0] = left;
    b->nodes[node].child[1] = right;
}

static void set_y(tz_build *b, int32_t node, int32_t edge, int32_t below, int32_t above) {
    b->nodes[node].index = -1 - edge;
    b->nodes[node].child[0] = below;
    b->nodes[node].child[1] = above;
}

/* The trapezoid holding the start of edge e: a point on e just right of its left end. */
static int32_t locate_start(const tz_build *b, int32_t e) {
    const pm_dt_point *p = b->p;
    int32_t l = b->edges[e].left, r = b->edges[e].right, i = 0;
    while (b->nodes[i].child[0] >= 0) {
        const pm_blend_tz_node *n = &b->nodes[i];
        if (n->index >= 0) {
            i = n->child[n->index == l || lex_less(p, n->index, l)];
        } else {
            const pm_blend_tz_edge *s = &b->edges[-1 - n->index];
            int64_t o = pm_dt_orient(p[s->left], p[s->right], p[l]);
            /* On that edge's line only when both edges leave the same vertex: their slopes decide. */
            if (o == 0) o = pm_dt_orient(p[s->left], p[s->right], p[r]);
            i = n->child[o > 0];
        }
    }
    return b->nodes[i].index;
}

/* A neighbour's link back at trapezoid `old` now leads to `now` (links to others stay). */
static void repoint(int32_t *link, int32_t old, int32_t now) {
    if (*link == old) *link = now;
}

static void insert(tz_build *b, int32_t e) {
    const pm_dt_point *p = b->p;
    int32_t L = b->edges[e].left, R = b->edges[e].right;
    /* The trapezoids e crosses, left to right. */
    size_t k = 0;
    int32_t d = locate_start(b, e);
    for (;;) {
        if (!grow(b->a, (void **)&b->crossed, &b->crossed_cap, k + 1, sizeof(int32_t))) {
            b->failed = 1;
            return;
        }
        b->crossed[k++] = d;
        int32_t rp = b->traps[d].rightp;
        if (rp < 0 || !lex_less(p, rp, R)) break;
        d = pm_dt_orient(p[L], p[R], p[rp]) > 0 ? b->traps[d].lr : b->traps[d].ur;
    }
    if (!grow(b->a, (void **)&b->upper, &b->upper_cap, k, sizeof(int32_t)) ||
        !grow(b->a, (void **)&b->lower, &b->lower_cap, k, sizeof(int32_t))) {
        b->failed = 1;
        return;
    }
    int32_t d0 = b->crossed[0], dk = b->crossed[k - 1];
    int32_t A = -1, B = -1;
    if (b->traps[d0].leftp != L) A = new_trap(b, b->traps[d0].top, b->traps[d0].bottom, b->traps[d0].leftp, L);
    if (b->traps[dk].rightp != R) B = new_trap(b, b->traps[dk].top, b->traps[dk].bottom, R, b->traps[dk].rightp);
    if (b->failed) return;
    /* Upper and lower pieces: a wall through a vertex above e survives above it, so the pieces
     * above e split there and those below merge (and the other way round for a vertex below). */
    int32_t U = -1, D = -1;
    for (size_t j = 0; j < k; j++) {
        int32_t dj = b->crossed[j];
        if (j == 0) {
            U = new_trap(b, b->traps[dj].top, e, L, -1);
            D = new_trap(b, e, b->traps[dj].bottom, L, -1);
            if (b->failed) return;
            /* d0's left neighbours go to A, the piece left of L, or straight to the pieces. */
            trap *t = b->traps;
            int32_t lu = A >= 0 ? A : U, ld = A >= 0 ? A : D;
            t[lu].ul = t[dj].ul;
            t[ld].ll = t[dj].ll;
            if (t[dj].ul >= 0) repoint(&t[t[dj].ul].ur, dj, lu);
            if (t[dj].ll >= 0) repoint(&t[t[dj].ll].lr, dj, ld);
            if (A >= 0) {
                t[U].ul = A;
                t[D].ll = A;
                t[A].ur = U;
                t[A].lr = D;
            }
        } else {
            int32_t prev = b->crossed[j - 1], wall = b->traps[prev].rightp;
            if (pm_dt_orient(p[L], p[R], p[wall]) > 0) {
                int32_t nu = new_trap(b, b->traps[dj].top, e, wall, -1);
                if (b->failed) return;
                trap *t = b->traps;
                t[U].rightp = wall;
                t[U].ur = t[prev].ur;
                if (t[prev].ur >= 0) repoint(&t[t[prev].ur].ul, prev, U);
                t[U].lr = nu;
                t[nu].ll = U;
                t[nu].ul = t[dj].ul;
                if (t[dj].ul >= 0) repoint(&t[t[dj].ul].ur, dj, nu);
                U = nu;
            } else {
                int32_t nd = new_trap(b, e, b->traps[dj].bottom, wall, -1);
                if (b->failed) return;
                trap *t = b->traps;
                t[D].rightp = wall;
                t[D].lr = t[prev].lr;
                if (t[prev].lr >= 0) repoint(&t[t[prev].lr].ll, prev, D);
                t[D].ur = nd;
                t[nd].ul = D;
                t[nd].ll = t[dj].ll;
                if (t[dj].ll >= 0) repoint(&t[t[dj].ll].lr, dj, nd);
                D = nd;
            }
        }
        b->upper[j] = U;
        b->lower[j] = D;
    }
    trap *t = b->traps;
    t[U].rightp = R;
    t[D].rightp = R;
    /* dk's right neighbours go to B, the piece right of R, or straight to the pieces. */
    int32_t ru = B >= 0 ? B : U, rd = B >= 0 ? B : D;
    t[ru].ur = t[dk].ur;
    t[rd].lr = t[dk].lr;
    if (t[dk].ur >= 0) repoint(&t[t[dk].ur].ul, dk, ru);
    if (t[dk].lr >= 0) repoint(&t[t[dk].lr].ll, dk, rd);
    if (B >= 0) {
        t[U].ur = B;
        t[D].lr = B;
        t[B].ul = U;
        t[B].ll = D;
    }
    /* The crossed trapezoids' leaves become the tests that lead to their pieces. */
    for (size_t j = 0; j < k; j++) {
        int32_t nj = b->traps[b->crossed[j]].node;
        int left = j == 0 && A >= 0, right = j == k - 1 && B >= 0;
        int32_t x2 = left && right ? new_node(b) : -1;
        int32_t y = left || right ? new_node(b) : nj;
        if (b->failed) return;
        set_y(b, y, e, b->traps[b->lower[j]].node, b->traps[b->upper[j]].node);
        if (left && right) {
            set_x(b, x2, R, y, b->traps[B].node);
            set_x(b, nj, L, b->traps[A].node, x2);
        } else if (left) {
            set_x(b, nj, L, b->traps[A].node, y);
        } else if (right) {
            set_x(b, nj, R, y, b->traps[B].node);
        }
    }
}

static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Longest path from the root (the most tests a query can take), by a depth-first pass that
 * settles a node once both its children are; `height` (one per node) doubles as the stack. */
static int dag_height(const pm_blend_tz_node *nodes, size_t count, int32_t *height, int32_t *stack) {
    for (size_t i = 0; i < count; i++) height[i] = -1;
    size_t top = 0;
    stack[top++] = 0;
    while (top > 0) {
        int32_t i = stack[top - 1];
        const pm_blend_tz_node *n = &nodes[i];
        if (n->child[0] < 0) {
            height[i] = 0;
            top--;
            continue;
        }
        int32_t a = n->child[0], b = n->child[1];
        if (height[a] >= 0 && height[b] >= 0) {
            height[i] = 1 + PM_MAX(height[a], height[b]);
            top--;
            continue;
        }
        /* Entries above a node are its children, pushed once each while it waits: the stack holds
         * a path and the siblings pending along it, fewer than twice the node count. */
        if (height[a] < 0) stack[top++] = a;
        if (height[b] < 0) stack[top++] = b;
    }
    return height[0];
}

static void release(tz_build *b) {
    pm_free(b->a, b->traps);
    pm_free(b->a, b->nodes);
    pm_free(b->a, b->crossed);
    pm_free(b->a, b->upper);
    pm_free(b->a, b->lower);
    b->traps = NULL;
    b->nodes = NULL;
    b->crossed = b->upper = b->lower = NULL;
    b->trap_count = b->trap_cap = b->node_count = b->node_cap = 0;
    b->crossed_cap = b->upper_cap = b->lower_cap = 0;
}

/* Keeps what queries read: the DAG, with leaves pointing at the live trapezoids' bounds. */
static int keep(pm_blend_space *s, tz_build *b) {
    const pm_allocator *a = b->a;
    int32_t *live = (int32_t *)pm_alloc_array(a, b->trap_count, sizeof(int32_t), 0);
    if (!live) return 0;
    for (size_t i = 0; i < b->trap_count; i++) live[i] = -1;
    size_t kept = 0;
    for (size_t i = 0; i < b->node_count; i++)
        if (b->nodes[i].child[0] < 0 && live[b->nodes[i].index] < 0) live[b->nodes[i].index] = (int32_t)kept++;
    pm_blend_tz_trap *traps = (pm_blend_tz_trap *)pm_alloc_array(a, kept, sizeof(pm_blend_tz_trap), 0);
    pm_blend_tz_node *nodes = (pm_blend_tz_node *)pm_alloc_array(a, b->node_count, sizeof(pm_blend_tz_node), 0);
    if (!traps || !nodes) {
        pm_free(a, live);
        pm_free(a, traps);
        pm_free(a, nodes);
        return 0;
    }
    for (size_t i = 0; i < b->trap_count; i++) {
        if (live[i] < 0) continue;
        const trap *t = &b->traps[i];
        pm_blend_tz_trap *o = &traps[live[i]];
        o->top = t->top;
        o->bottom = t->bottom;
        o->leftp = t->leftp;
        o->rightp = t->rightp;
    }
    for (size_t i = 0; i < b->node_count; i++) {
        nodes[i] = b->nodes[i];
        if (nodes[i].child[0] < 0) nodes[i].index = live[nodes[i].index];
    }
    pm_free(a, live);
    s->tz_nodes = nodes;
    s->tz_node_count = (int)b->node_count;
    s->tz_traps = traps;
    s->tz_trap_count = (int)kept;
    return 1;
}

/* ---- where crowded buckets enter the DAG ---- */

/* The side of a DAG node's test that every point of the closed box [lo, hi] takes: 0 or 1, or -1
 * when they differ (or might: the vertex's column or the edge's line meets the box). */
static int box_side(const pm_blend_space *s, const pm_blend_tz_node *n, const int64_t *lo, const int64_t *hi) {
    const pm_dt_point *p = s->plane_points;
    if (n->index >= 0) {
        pm_dt_point v = p[n->index];
        if (hi[0] < v.x) return 0;
        if (lo[0] > v.x) return 1;
        return -1;
    }
    const pm_blend_tz_edge *ed = &s->tz_edges[-1 - n->index];
    pm_dt_point l = p[ed->left], r = p[ed->right];
    int above = 0, below = 0;
    for (int c = 0; c < 4; c++) {
        pm_dt_point corner = {c & 1 ? hi[0] : lo[0], c & 2 ? hi[1] : lo[1]};
        int64_t o = pm_dt_orient(l, r, corner);
        above += o > 0;
        below += o < 0;
    }
    return above == 4 ? 1 : (below == 4 ? 0 : -1);
}

/* Each crowded leaf of the cell tree keeps the deepest DAG node that all its points reach: its
 * queries skip the tests that the bucket has already decided. */
static void set_entries(pm_blend_space *s, int32_t node, const int64_t *lo, int depth) {
    pm_blend_tree_node *nd = &s->tree_nodes[node];
    int64_t size = PM_DT_COORD_MAX >> depth;
    if (nd->count == PM_BLEND_TREE_INNER) {
        for (int c = 0; c < 4; c++) {
            int64_t child[2] = {lo[0] + ((c & 1) ? size / 2 : 0), lo[1] + ((c & 2) ? size / 2 : 0)};
            set_entries(s, nd->first + c, child, depth + 1);
        }
        return;
    }
    if (nd->count != PM_BLEND_TREE_CROWDED) return;
    int64_t hi[2];
    for (int a = 0; a < 2; a++) hi[a] = lo[a] + size == PM_DT_COORD_MAX ? PM_DT_COORD_MAX : lo[a] + size - 1;
    int32_t i = 0;
    for (;;) {
        const pm_blend_tz_node *n = &s->tz_nodes[i];
        if (n->child[0] < 0) break;
        int side = box_side(s, n, lo, hi);
        if (side < 0) break;
        i = n->child[side];
    }
    nd->first = i;
}

pm_result pm_blend_space_build_trapezoids(pm_blend_space *s, pm_error *error) {
    const pm_allocator *a = &s->allocator;
    const pm_triangulation *tri = &s->tri;
    const pm_dt_point *p = s->plane_points;
    int cells = tri->triangle_count;
    int m = (3 * cells + tri->hull_count) / 2;
    s->tz_edges = (pm_blend_tz_edge *)pm_alloc_array(a, (size_t)m, sizeof(pm_blend_tz_edge), 0);
    int32_t *order = (int32_t *)pm_alloc_array(a, (size_t)m, sizeof(int32_t), 0);
    if (!s->tz_edges || !order) {
        pm_free(a, order);
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its trapezoidal map");
    }
    /* Each edge once, from its lesser end (by x, then y), with the triangle on either side. */
    int e = 0;
    for (int t = 0; t < cells; t++)
        for (int i = 0; i < 3; i++) {
            int32_t nb = tri->neighbors[3 * t + i];
            if (nb >= 0 && nb < t) continue;
            int32_t from = tri->vertices[3 * t + (i + 1) % 3], to = tri->vertices[3 * t + (i + 2) % 3];
            pm_blend_tz_edge *ed = &s->tz_edges[e++];
            /* The counter-clockwise triangle is left of from -> to: above the edge when that runs
             * to the right. */
            int forward = lex_less(p, from, to);
            ed->left = forward ? from : to;
            ed->right = forward ? to : from;
            ed->above = forward ? t : nb;
            ed->below = forward ? nb : t;
        }
    s->tz_edge_count = e;
    tz_build best, b;
    memset(&best, 0, sizeof best);
    int best_height = -1, log2m = 1;
    while ((1 << log2m) < e) log2m++;
    pm_result r = PM_OK;
    for (int attempt = 0; attempt < TZ_TRIES; attempt++) {
        memset(&b, 0, sizeof b);
        b.a = a;
        b.p = p;
        b.edges = s->tz_edges;
        uint64_t state = 0x5EEDu + (uint64_t)attempt;
        for (int i = 0; i < e; i++) order[i] = i;
        for (int i = e - 1; i > 0; i--) {
            int j = (int)(next_random(&state) % (uint64_t)(i + 1));
            int32_t tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
        }
        new_trap(&b, -1, -1, -1, -1);
        for (int i = 0; i < e && !b.failed; i++) insert(&b, order[i]);
        int32_t *height = b.failed ? NULL : (int32_t *)pm_alloc_array(a, b.node_count * 3 + 1, sizeof(int32_t), 0);
        if (!height) {
            release(&b);
            r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its trapezoidal map");
            break;
        }
        int h = dag_height(b.nodes, b.node_count, height, height + b.node_count);
        pm_free(a, height);
        if (best_height < 0 || h < best_height) {
            release(&best);
            best = b;
            best_height = h;
        } else {
            release(&b);
        }
        if (best_height <= TZ_HEIGHT_PER_LOG * log2m) break;
    }
    if (r == PM_OK && !keep(s, &best))
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its trapezoidal map");
    if (r == PM_OK) {
        const int64_t origin[2] = {0, 0};
        set_entries(s, 0, origin, 0);
    }
    s->tz_height = best_height;
    release(&best);
    pm_free(a, order);
    return r;
}

/* ---- queries ---- */

int pm_blend_space_trapezoid_cell(const pm_blend_space *s, int32_t start, pm_dt_point q) {
    const pm_dt_point *p = s->plane_points;
    const pm_blend_tz_node *nodes = s->tz_nodes;
    const pm_blend_tz_edge *edges = s->tz_edges;
    int32_t i = start;
    while (nodes[i].child[0] >= 0) {
        const pm_blend_tz_node *n = &nodes[i];
        if (n->index >= 0) {
            /* q moved up and right by infinitesimals: on the vertex itself it is right of it. */
            pm_dt_point v = p[n->index];
            i = n->child[!(q.x < v.x || (q.x == v.x && q.y < v.y))];
        } else {
            const pm_blend_tz_edge *ed = &edges[-1 - n->index];
            pm_dt_point l = p[ed->left], r = p[ed->right];
            int64_t o = pm_dt_orient(l, r, q);
            /* On the edge's line the step up decides, or for a vertical edge the step right. */
            i = n->child[o > 0 || (o == 0 && l.x < r.x)];
        }
    }
    const pm_blend_tz_trap *t = &s->tz_traps[nodes[i].index];
    int cell = -1;
    if (t->top >= 0 && t->bottom >= 0) cell = edges[t->top].below;
    if (cell < 0) {
        /* Outside the hull - unless q itself lies on its boundary, which bounds this trapezoid. */
        if (t->top >= 0 && pm_dt_orient(p[edges[t->top].left], p[edges[t->top].right], q) == 0)
            cell = edges[t->top].above;
        else if (t->bottom >= 0 && pm_dt_orient(p[edges[t->bottom].left], p[edges[t->bottom].right], q) == 0)
            cell = edges[t->bottom].below;
        else if (t->leftp >= 0 && p[t->leftp].x == q.x && p[t->leftp].y == q.y)
            cell = s->vertex_cell[t->leftp];
        else if (t->rightp >= 0 && p[t->rightp].x == q.x && p[t->rightp].y == q.y)
            cell = s->vertex_cell[t->rightp];
        if (cell < 0) return -1;
    }
    /* The lowest-index triangle holding q: on an edge, the one across it may come first; on a
     * vertex, the vertex's first triangle. */
    const int32_t *v = s->tri.vertices + 3 * cell;
    int64_t w[3] = {pm_dt_orient(p[v[1]], p[v[2]], q), pm_dt_orient(p[v[2]], p[v[0]], q), pm_dt_orient(p[v[0]], p[v[1]], q)};
    int zeros = (w[0] == 0) + (w[1] == 0) + (w[2] == 0);
    if (zeros == 1) {
        int i0 = w[0] == 0 ? 0 : (w[1] == 0 ? 1 : 2);
        int32_t nb = s->tri.neighbors[3 * cell + i0];
        if (nb >= 0 && nb < cell) cell = nb;
    } else if (zeros == 2) {
        cell = s->vertex_cell[v[w[0] != 0 ? 0 : (w[1] != 0 ? 1 : 2)]];
    }
    return cell;
}
