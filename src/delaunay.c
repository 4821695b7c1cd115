/* Delaunay triangulation for blend spaces: a sweep over sorted points, then Lawson flips, with
 * exact integer predicates so that degenerate inputs (collinear runs, co-circular grids) can neither
 * crash the construction nor make it depend on rounding. Blend spaces hold tens to hundreds of
 * samples; the construction is O(n log n) typical and runs once per space. */
#include "delaunay.h"

#include "core.h"
#include "delaunay_exact.h"

int64_t pm_dt_orient(pm_dt_point a, pm_dt_point b, pm_dt_point c) {
    return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}

int pm_dt_incircle(pm_dt_point a, pm_dt_point b, pm_dt_point c, pm_dt_point d) {
    int64_t adx = a.x - d.x, ady = a.y - d.y;
    int64_t bdx = b.x - d.x, bdy = b.y - d.y;
    int64_t cdx = c.x - d.x, cdy = c.y - d.y;
    /* |coordinate differences| <= 2^25: lifts and 2x2 minors < 2^51, products < 2^102. */
    int64_t alift = adx * adx + ady * ady, blift = bdx * bdx + bdy * bdy, clift = cdx * cdx + cdy * cdy;
    pm_i128 det = pm_i128_mul(alift, bdx * cdy - cdx * bdy);
    det = pm_i128_add(det, pm_i128_mul(blift, cdx * ady - adx * cdy));
    det = pm_i128_add(det, pm_i128_mul(clift, adx * bdy - bdx * ady));
    return pm_i128_sign(det);
}

void pm_delaunay_destroy(pm_triangulation *t) {
    if (!t) return;
    pm_free(&t->allocator, t->vertices);
    pm_free(&t->allocator, t->neighbors);
    pm_free(&t->allocator, t->hull);
    memset(t, 0, sizeof *t);
}

typedef struct builder {
    const pm_dt_point *p;
    int32_t *v;  /* 3 per triangle */
    int32_t *nb; /* 3 per triangle */
    int count;
    int32_t *next, *prev, *hull_tri; /* hull as a circular list; hull_tri[a]: triangle on edge a -> next[a] */
    int32_t *stack;
    int stack_size, stack_cap;
    pm_dt_incircle_fn incircle; /* NULL: pm_dt_incircle on p */
    void *incircle_context;
    const pm_allocator *allocator;
} builder;

/* n0..n2: the neighbours across the edges opposite v0..v2 (edge_index's numbering). */
static void set_triangle(builder *b, int t, int v0, int v1, int v2, int n0, int n1, int n2) {
    b->v[3 * t] = v0;
    b->v[3 * t + 1] = v1;
    b->v[3 * t + 2] = v2;
    b->nb[3 * t] = n0;
    b->nb[3 * t + 1] = n1;
    b->nb[3 * t + 2] = n2;
}

static int add_triangle(builder *b, int v0, int v1, int v2) {
    int t = b->count++;
    set_triangle(b, t, v0, v1, v2, -1, -1, -1);
    return t;
}

/* Index i of the directed edge from -> to in triangle t (the edge opposite vertex i), or -1. */
static int edge_index(const builder *b, int t, int from, int to) {
    for (int i = 0; i < 3; i++)
        if (b->v[3 * t + (i + 1) % 3] == from && b->v[3 * t + (i + 2) % 3] == to) return i;
    return -1;
}

static int push(builder *b, int t, int i) {
    if (b->stack_size == b->stack_cap) {
        int cap = b->stack_cap ? 2 * b->stack_cap : 256;
        int32_t *s = (int32_t *)pm_alloc_array(b->allocator, (size_t)cap, 2 * sizeof(int32_t), 0);
        if (!s) return 0;
        if (b->stack_size) memcpy(s, b->stack, (size_t)b->stack_size * 2 * sizeof(int32_t));
        pm_free(b->allocator, b->stack);
        b->stack = s;
        b->stack_cap = cap;
    }
    b->stack[2 * b->stack_size] = t;
    b->stack[2 * b->stack_size + 1] = i;
    b->stack_size++;
    return 1;
}

static void replace_neighbor(builder *b, int t, int old_nb, int new_nb) {
    if (t < 0) return;
    for (int i = 0; i < 3; i++)
        if (b->nb[3 * t + i] == old_nb) {
            b->nb[3 * t + i] = new_nb;
            return;
        }
}

/* Inserts point p (beyond every point so far in sweep order): fans it to the visible hull chain. */
static int insert_point(builder *b, int p, int last) {
    pm_dt_point pp = b->p[p];
    /* The previous point is on the hull and p sees one of its edges in all but exotic cases;
     * otherwise walk the hull to find a visible edge. */
    int start = -1;
    if (pm_dt_orient(b->p[last], b->p[b->next[last]], pp) < 0) start = last;
    else if (pm_dt_orient(b->p[b->prev[last]], b->p[last], pp) < 0) start = b->prev[last];
    else {
        int v = b->next[last];
        while (v != last) {
            if (pm_dt_orient(b->p[v], b->p[b->next[v]], pp) < 0) {
                start = v;
                break;
            }
            v = b->next[v];
        }
    }
    /* A point beyond all others in sweep order always sees some edge unless every point is
     * collinear, which the caller excluded. */
    if (start < 0) return 0;
    while (pm_dt_orient(b->p[b->prev[start]], b->p[start], pp) < 0) start = b->prev[start];
    int a = start, prev_new = -1, first_new = -1;
    while (pm_dt_orient(b->p[a], b->p[b->next[a]], pp) < 0) {
        int c = b->next[a];
        int t = add_triangle(b, a, p, c);
        int old = b->hull_tri[a];
        int e = edge_index(b, old, a, c);
        if (e >= 0) b->nb[3 * old + e] = t;
        b->nb[3 * t + 1] = old; /* edge c -> a, opposite p */
        if (prev_new >= 0) {
            b->nb[3 * t + 2] = prev_new; /* edge a -> p */
            b->nb[3 * prev_new + 0] = t; /* edge p -> a of the previous fan triangle */
        } else first_new = t;
        prev_new = t;
        if (a != start) b->next[a] = b->prev[a] = -1; /* a leaves the hull */
        a = c;
    }
    b->next[start] = p;
    b->prev[p] = start;
    b->next[p] = a;
    b->prev[a] = p;
    b->hull_tri[start] = first_new;
    b->hull_tri[p] = prev_new;
    return 1;
}

static int legalize(builder *b) {
    while (b->stack_size > 0) {
        b->stack_size--;
        int t = b->stack[2 * b->stack_size], i = b->stack[2 * b->stack_size + 1];
        int u = b->nb[3 * t + i];
        if (u < 0) continue;
        int j = -1;
        for (int k = 0; k < 3; k++)
            if (b->nb[3 * u + k] == t) j = k;
        if (j < 0) continue;
        int va = b->v[3 * t + i], vb = b->v[3 * t + (i + 1) % 3], vc = b->v[3 * t + (i + 2) % 3];
        int vd = b->v[3 * u + j];
        int inside = b->incircle ? b->incircle(b->incircle_context, va, vb, vc, vd)
                                 : pm_dt_incircle(b->p[va], b->p[vb], b->p[vc], b->p[vd]);
        if (inside <= 0) continue;
        int n_ca = b->nb[3 * t + (i + 1) % 3], n_ab = b->nb[3 * t + (i + 2) % 3];
        int n_bd = b->nb[3 * u + (j + 1) % 3], n_dc = b->nb[3 * u + (j + 2) % 3];
        /* t becomes (a, b, d) and u becomes (a, d, c): the diagonal b-c is replaced by a-d. */
        set_triangle(b, t, va, vb, vd, n_bd, u, n_ab);
        set_triangle(b, u, va, vd, vc, n_dc, n_ca, t);
        replace_neighbor(b, n_bd, u, t);
        replace_neighbor(b, n_ca, t, u);
        if (!push(b, t, 0) || !push(b, t, 2) || !push(b, u, 0) || !push(b, u, 1)) return 0;
    }
    return 1;
}

pm_result pm_delaunay_build(pm_triangulation *out, const pm_dt_point *p, int n, const pm_allocator *allocator,
                            pm_error *error) {
    return pm_delaunay_build_metric(out, p, n, NULL, NULL, allocator, error);
}

pm_result pm_delaunay_build_metric(pm_triangulation *out, const pm_dt_point *p, int n, pm_dt_incircle_fn incircle,
                                   void *context, const pm_allocator *allocator, pm_error *error) {
    memset(out, 0, sizeof *out);
    if (n < 3) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "delaunay: %d points cannot be triangulated", n);
    int k = 2;
    while (k < n && pm_dt_orient(p[0], p[1], p[k]) == 0) k++;
    if (k == n) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "delaunay: the points are collinear");
    out->allocator = pm_allocator_resolve(allocator);
    builder b;
    memset(&b, 0, sizeof b);
    b.p = p;
    b.incircle = incircle;
    b.incircle_context = context;
    b.allocator = &out->allocator;
    size_t max_tris = 2 * (size_t)n;
    b.v = (int32_t *)pm_alloc_array(b.allocator, max_tris * 3, sizeof(int32_t), 0);
    b.nb = (int32_t *)pm_alloc_array(b.allocator, max_tris * 3, sizeof(int32_t), 0);
    b.next = (int32_t *)pm_alloc_array(b.allocator, (size_t)n * 3, sizeof(int32_t), 0);
    pm_result r = PM_OK;
    if (!b.v || !b.nb || !b.next) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay: out of memory for %d points", n);
        goto done;
    }
    b.prev = b.next + n;
    b.hull_tri = b.next + 2 * n;
    for (int i = 0; i < n; i++) b.next[i] = b.prev[i] = b.hull_tri[i] = -1;

    /* Points 0..k-1 lie on one line in order; point k is off it: fan k to the segment chain. */
    int left = pm_dt_orient(p[0], p[1], p[k]) > 0;
    for (int i = 0; i + 1 < k; i++) {
        int t = left ? add_triangle(&b, i, i + 1, k) : add_triangle(&b, i + 1, i, k);
        if (i > 0) {
            /* Shared edge with the previous fan triangle: i -> k or k -> i. */
            int e = left ? edge_index(&b, t, k, i) : edge_index(&b, t, i, k);
            int f = left ? edge_index(&b, t - 1, i, k) : edge_index(&b, t - 1, k, i);
            b.nb[3 * t + e] = t - 1;
            b.nb[3 * (t - 1) + f] = t;
        }
    }
    if (left) {
        for (int i = 0; i + 1 < k; i++) {
            b.next[i] = i + 1;
            b.prev[i + 1] = i;
            b.hull_tri[i] = i;
        }
        b.next[k - 1] = k;
        b.prev[k] = k - 1;
        b.hull_tri[k - 1] = k - 2;
        b.next[k] = 0;
        b.prev[0] = k;
        b.hull_tri[k] = 0;
    } else {
        for (int i = 0; i + 1 < k; i++) {
            b.next[i + 1] = i;
            b.prev[i] = i + 1;
            b.hull_tri[i + 1] = i;
        }
        b.next[0] = k;
        b.prev[k] = 0;
        b.hull_tri[0] = 0;
        b.next[k] = k - 1;
        b.prev[k - 1] = k;
        b.hull_tri[k] = k - 2;
    }
    for (int i = k + 1; i < n; i++)
        if (!insert_point(&b, i, i - 1)) {
            r = pm_fail(error, PM_ERR_INVALID_ARGUMENT, "delaunay: point %d sees no hull edge (points not sorted?)", i);
            goto done;
        }

    for (int t = 0; t < b.count; t++)
        for (int i = 0; i < 3; i++)
            if (b.nb[3 * t + i] > t && !push(&b, t, i)) {
                r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay: out of memory");
                goto done;
            }
    if (!legalize(&b)) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay: out of memory");
        goto done;
    }

    int hull = 0;
    for (int t = 0; t < b.count; t++)
        for (int i = 0; i < 3; i++) hull += b.nb[3 * t + i] < 0;
    out->hull = (int32_t *)pm_alloc_array(b.allocator, (size_t)hull * 2, sizeof(int32_t), 0);
    if (!out->hull) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "delaunay: out of memory");
        goto done;
    }
    for (int t = 0; t < b.count; t++)
        for (int i = 0; i < 3; i++)
            if (b.nb[3 * t + i] < 0) {
                out->hull[2 * out->hull_count] = t;
                out->hull[2 * out->hull_count + 1] = i;
                out->hull_count++;
            }
    out->triangle_count = b.count;
    out->vertices = b.v;
    out->neighbors = b.nb;
    b.v = b.nb = NULL;
done:
    pm_free(b.allocator, b.v);
    pm_free(b.allocator, b.nb);
    pm_free(b.allocator, b.next);
    pm_free(b.allocator, b.stack);
    if (r != PM_OK) pm_delaunay_destroy(out);
    return r;
}
