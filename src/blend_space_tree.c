/* Blend-space cell location: a quadtree (2D) or octree (3D) of cell buckets.
 *
 * A uniform grid sized by the cell count serves well-spread samples, but a bucket crossed by many
 * thin cells - a fan, two long rows, samples on a sphere - made every query scan them all. Here a
 * bucket holding more than a few cells is split in four (eight), and a cell is listed in a bucket
 * only when it really meets it: its bounding box does, and the bucket is not wholly outside one
 * of its edges' (faces') half-planes (half-spaces), tested exactly at the bucket's corner furthest
 * inside. Splitting stops at a depth limit, when it would not shorten any child's list, and when
 * the items listed in all buckets would exceed a budget proportional to the cell count; refining
 * breadth first gives the budget to the coarsest crowded buckets first. Memory stays O(cells).
 *
 * 2D: buckets list their triangles in increasing index order, and every triangle containing a
 * point is listed in the point's bucket, so the first one of the bucket that contains a query is
 * the lowest-index triangle containing it - the cell the uniform grid before this found, whose
 * answer on an edge shared by two triangles is kept. A bucket still crowded after refinement
 * (around a vertex or edge that very many triangles share) lists nothing and sends its queries to
 * the trapezoidal map (blend_space_trapezoids.c). 3D: the lists serve only to build; a leaf keeps
 * one tetrahedron that a walk to the query starts from (blend_space_walk.c). */
#include <math.h>
#include <stdlib.h>

#include "blend_space_internal.h"
#include "core.h"

/* Items per bucket worth splitting for, deepest level, and items allowed per cell over the tree. */
#define TREE_CAP 4
#define TREE_DEPTH2 16
#define TREE_DEPTH3 10
#define TREE_BUDGET 12

typedef struct vec {
    void *data;
    size_t count, capacity, elem;
} vec;

/* Room for `need` elements, growing geometrically with the space's allocator. */
static int vec_reserve(const pm_allocator *a, vec *v, size_t need) {
    if (need <= v->capacity) return 1;
    size_t cap = v->capacity ? v->capacity : 64;
    while (cap < need) cap *= 2;
    void *p = pm_alloc_array(a, cap, v->elem, 0);
    if (!p) return 0;
    if (v->count) memcpy(p, v->data, v->count * v->elem);
    pm_free(a, v->data);
    v->data = p;
    v->capacity = cap;
    return 1;
}

/* A bucket waiting to be split or made a leaf: its node, lowest corner, depth and its cells in
 * the level's list. */
typedef struct pending {
    int32_t node;
    int32_t depth;
    int64_t lo[3];
    size_t first, count;
} pending;

/* ---- cells against buckets (closed integer boxes [lo, hi]) ---- */

static int triangle_meets_box(const pm_blend_space *s, const int32_t *v, const int64_t *lo, const int64_t *hi) {
    const pm_dt_point *p = s->plane_points;
    pm_dt_point a = p[v[0]], b = p[v[1]], c = p[v[2]];
    if (PM_MAX(a.x, PM_MAX(b.x, c.x)) < lo[0] || PM_MIN(a.x, PM_MIN(b.x, c.x)) > hi[0]) return 0;
    if (PM_MAX(a.y, PM_MAX(b.y, c.y)) < lo[1] || PM_MIN(a.y, PM_MIN(b.y, c.y)) > hi[1]) return 0;
    const pm_dt_point *e[3][2] = {{&a, &b}, {&b, &c}, {&c, &a}};
    for (int i = 0; i < 3; i++) {
        pm_dt_point from = *e[i][0], to = *e[i][1], corner;
        /* The counter-clockwise triangle lies left of each edge: the corner furthest left. */
        corner.x = from.y - to.y > 0 ? hi[0] : lo[0];
        corner.y = to.x - from.x > 0 ? hi[1] : lo[1];
        if (pm_dt_orient(from, to, corner) < 0) return 0;
    }
    return 1;
}

/* Per tetrahedron: for each vertex i, the gradient of the volume with vertex i replaced by x (it
 * grows towards vertex i), and a vertex of the opposite face, where that volume is 0. */
typedef struct tet_planes {
    pm_dt3_point g[4];
    int32_t on[4];
} tet_planes;

static void make_tet_planes(const pm_blend_space *s, const int32_t *v, tet_planes *out) {
    for (int i = 0; i < 4; i++) {
        int32_t u[3];
        for (int k = 0, m = 0; k < 4; k++)
            if (k != i) u[m++] = v[k];
        /* The volume is u0 . (u1 x u2)-like in the remaining vertices, in order; moving x from
         * place i to the end flips its sign 3 - i times. */
        pm_dt3_point g = pm_dt3_normal(s->points[u[0]], s->points[u[1]], s->points[u[2]]);
        if ((3 - i) % 2) {
            g.x = -g.x;
            g.y = -g.y;
            g.z = -g.z;
        }
        out->g[i] = g;
        out->on[i] = u[0];
    }
}

static int tetrahedron_meets_box(const pm_blend_space *s, const int32_t *v, const tet_planes *tp, const int64_t *lo,
                                 const int64_t *hi) {
    for (int a = 0; a < 3; a++) {
        int64_t mn = INT64_MAX, mx = INT64_MIN;
        for (int i = 0; i < 4; i++) {
            int64_t c = pm_dt3_component(s->points[v[i]], a);
            mn = PM_MIN(mn, c);
            mx = PM_MAX(mx, c);
        }
        if (mx < lo[a] || mn > hi[a]) return 0;
    }
    for (int i = 0; i < 4; i++) {
        /* The box corner furthest towards vertex i: outside the face when even it is beyond. */
        pm_dt3_point g = tp->g[i];
        pm_dt3_point x = {g.x > 0 ? hi[0] : lo[0], g.y > 0 ? hi[1] : lo[1], g.z > 0 ? hi[2] : lo[2]};
        if (pm_blend_space_plane_sign(g, pm_dt3_sub(x, s->points[tp->on[i]])) < 0) return 0;
    }
    return 1;
}

/* ---- building ---- */

typedef struct builder {
    pm_blend_space *s;
    const pm_allocator *a;
    int dims, children, pad;
    int cap, max_depth, crowded;
    const int32_t *verts; /* dims + 1 per cell */
    tet_planes *planes;   /* 3D: per tetrahedron */
    vec nodes, items, lists[2], levels[2];
} builder;

/* The closed box of a bucket (the last bucket along an axis also holds the coordinate
 * PM_DT_COORD_MAX), widened by the padding. */
static void bucket_box(const builder *b, const pending *p, int64_t *lo, int64_t *hi) {
    int64_t size = PM_DT_COORD_MAX >> p->depth;
    for (int a = 0; a < 3; a++) {
        if (a >= b->dims) {
            lo[a] = hi[a] = 0;
            continue;
        }
        int64_t end = p->lo[a] + size;
        lo[a] = p->lo[a] - b->pad;
        hi[a] = (end == PM_DT_COORD_MAX ? end : end - 1) + b->pad;
    }
}

static int meets(const builder *b, int cell, const int64_t *lo, const int64_t *hi) {
    const int32_t *v = b->verts + (size_t)cell * (b->dims + 1);
    return b->dims == 2 ? triangle_meets_box(b->s, v, lo, hi) : tetrahedron_meets_box(b->s, v, &b->planes[cell], lo, hi);
}

static int make_leaf(builder *b, const pending *p, const int32_t *list) {
    pm_blend_tree_node *nd = (pm_blend_tree_node *)b->nodes.data + p->node;
    if (b->dims == 3) {
        /* A walk starts best from a tetrahedron holding the leaf's centre. */
        int64_t lo[3], hi[3], centre[3];
        bucket_box(b, p, lo, hi);
        for (int a = 0; a < 3; a++) centre[a] = lo[a] + (hi[a] - lo[a]) / 2;
        nd->count = PM_BLEND_TREE_WALK;
        nd->first = p->count ? list[p->first] : -1;
        for (size_t i = 0; i < p->count; i++)
            if (meets(b, list[p->first + i], centre, centre)) {
                nd->first = list[p->first + i];
                break;
            }
        return 1;
    }
    if (b->crowded > 0 && (int)p->count > b->crowded) {
        nd->first = 0;
        nd->count = PM_BLEND_TREE_CROWDED;
        b->s->tree_crowded++;
        return 1;
    }
    nd->first = (int32_t)b->items.count;
    nd->count = 0;
    if (p->count == 0) return 1;
    if (!vec_reserve(b->a, &b->items, b->items.count + p->count)) return 0;
    memcpy((int32_t *)b->items.data + b->items.count, list + p->first, p->count * sizeof(int32_t));
    nd->count = (int32_t)p->count;
    b->items.count += p->count;
    return 1;
}

static pm_result build(builder *b, int cells, pm_error *error) {
    const pm_allocator *a = b->a;
    b->nodes.elem = sizeof(pm_blend_tree_node);
    b->items.elem = b->lists[0].elem = b->lists[1].elem = sizeof(int32_t);
    b->levels[0].elem = b->levels[1].elem = sizeof(pending);
    size_t budget = (size_t)cells * TREE_BUDGET + 1024, total = (size_t)cells;
    if (!vec_reserve(a, &b->nodes, 1) || !vec_reserve(a, &b->lists[0], (size_t)cells) || !vec_reserve(a, &b->levels[0], 1))
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its cell tree");
    b->nodes.count = 1;
    for (int k = 0; k < cells; k++) ((int32_t *)b->lists[0].data)[k] = k;
    b->lists[0].count = (size_t)cells;
    pending root = {0, 0, {0, 0, 0}, 0, (size_t)cells};
    ((pending *)b->levels[0].data)[0] = root;
    b->levels[0].count = 1;
    for (int cur = 0; b->levels[cur].count > 0; cur ^= 1) {
        vec *next_list = &b->lists[cur ^ 1], *next_level = &b->levels[cur ^ 1];
        next_list->count = next_level->count = 0;
        for (size_t k = 0; k < b->levels[cur].count; k++) {
            pending p = ((pending *)b->levels[cur].data)[k];
            const int32_t *list = (const int32_t *)b->lists[cur].data;
            int split = (int)p.count > b->cap && p.depth < b->max_depth;
            size_t mark = next_list->count, sum = 0;
            pending kids[8];
            for (int c = 0; split && c < b->children; c++) {
                pending *kid = &kids[c];
                kid->depth = p.depth + 1;
                int64_t half = PM_DT_COORD_MAX >> kid->depth;
                for (int ax = 0; ax < 3; ax++) kid->lo[ax] = ax < b->dims ? p.lo[ax] + (((c >> ax) & 1) ? half : 0) : 0;
                int64_t lo[3], hi[3];
                bucket_box(b, kid, lo, hi);
                if (!vec_reserve(a, next_list, next_list->count + p.count))
                    return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its cell tree");
                int32_t *out = (int32_t *)next_list->data;
                kid->first = next_list->count;
                for (size_t i = 0; i < p.count; i++)
                    if (meets(b, list[p.first + i], lo, hi)) out[next_list->count++] = list[p.first + i];
                kid->count = next_list->count - kid->first;
                sum += kid->count;
            }
            /* Splitting must not push the items over budget, and must help: a bucket whose every
             * child still holds all its cells is crowded by cells meeting at a point or edge. */
            if (split && (total + sum - p.count > budget)) split = 0;
            if (split) {
                int useful = 0;
                for (int c = 0; c < b->children; c++) useful |= kids[c].count < p.count;
                split = useful;
            }
            if (!split) {
                next_list->count = mark;
                if (!make_leaf(b, &p, list))
                    return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its cell tree");
                continue;
            }
            total = total + sum - p.count;
            size_t base = b->nodes.count;
            if (!vec_reserve(a, &b->nodes, base + (size_t)b->children) ||
                !vec_reserve(a, next_level, next_level->count + (size_t)b->children))
                return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its cell tree");
            pm_blend_tree_node *nd = (pm_blend_tree_node *)b->nodes.data;
            nd[p.node].first = (int32_t)base;
            nd[p.node].count = PM_BLEND_TREE_INNER;
            b->nodes.count += (size_t)b->children;
            for (int c = 0; c < b->children; c++) {
                kids[c].node = (int32_t)(base + (size_t)c);
                ((pending *)next_level->data)[next_level->count++] = kids[c];
            }
        }
    }
    return PM_OK;
}

/* Fills the table entries under node `node` (depth `depth`, lowest corner in table units `at`). */
static void fill_top(pm_blend_space *s, int dims, int32_t node, int depth, const int64_t *at) {
    const pm_blend_tree_node *nd = &s->tree_nodes[node];
    int bits = s->tree_top_bits;
    if (depth < bits && nd->count == PM_BLEND_TREE_INNER) {
        int64_t half = (int64_t)1 << (bits - depth - 1);
        for (int c = 0; c < (1 << dims); c++) {
            int64_t child[3] = {at[0] + ((c & 1) ? half : 0), at[1] + ((c & 2) ? half : 0), dims == 3 ? at[2] + ((c & 4) ? half : 0) : 0};
            fill_top(s, dims, nd->first + c, depth + 1, child);
        }
        return;
    }
    int64_t span = (int64_t)1 << (bits - depth);
    for (int64_t z = 0; z < (dims == 3 ? span : 1); z++)
        for (int64_t y = 0; y < span; y++)
            for (int64_t x = 0; x < span; x++) {
                size_t i = ((size_t)(at[2] + z) << (2 * bits)) | ((size_t)(at[1] + y) << bits) | (size_t)(at[0] + x);
                s->tree_top[i] = node;
            }
}

/* The table: at most one entry per cell. */
static pm_result build_top(pm_blend_space *s, int dims, int cells, pm_error *error) {
    int bits = 0;
    while (bits < 12 && ((int64_t)1 << (dims * (bits + 1))) <= (int64_t)cells) bits++;
    s->tree_top_bits = bits;
    s->tree_top = (int32_t *)pm_alloc_array(&s->allocator, (size_t)1 << (dims * bits), sizeof(int32_t), 0);
    if (!s->tree_top) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its cell tree");
    const int64_t origin[3] = {0, 0, 0};
    fill_top(s, dims, 0, 0, origin);
    return PM_OK;
}

pm_result pm_blend_space_build_tree(pm_blend_space *s, int pad, int crowded, pm_error *error) {
    builder b;
    memset(&b, 0, sizeof b);
    b.s = s;
    b.a = &s->allocator;
    b.dims = s->mode == SPACE_TETRAHEDRA ? 3 : 2;
    b.children = 1 << b.dims;
    b.pad = pad;
    b.cap = TREE_CAP;
    b.max_depth = b.dims == 2 ? TREE_DEPTH2 : TREE_DEPTH3;
    b.crowded = crowded;
    b.verts = b.dims == 2 ? s->tri.vertices : s->tet.vertices;
    int cells = b.dims == 2 ? s->tri.triangle_count : s->tet.tet_count;
    pm_result r = PM_OK;
    s->vertex_cell = (int32_t *)pm_alloc_array(b.a, (size_t)s->sample_count, sizeof(int32_t), 0);
    if (!s->vertex_cell) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its cell tree");
    for (int v = 0; v < s->sample_count; v++) s->vertex_cell[v] = -1;
    for (int k = cells - 1; k >= 0; k--)
        for (int i = 0; i <= b.dims; i++) s->vertex_cell[b.verts[(size_t)k * (b.dims + 1) + i]] = k;
    if (b.dims == 3) {
        b.planes = (tet_planes *)pm_alloc_array(b.a, (size_t)cells, sizeof(tet_planes), 0);
        if (!b.planes) r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its cell tree");
        for (int k = 0; r == PM_OK && k < cells; k++) make_tet_planes(s, b.verts + 4 * k, &b.planes[k]);
    }
    if (r == PM_OK) r = build(&b, cells, error);
    pm_free(b.a, b.planes);
    for (int i = 0; i < 2; i++) {
        pm_free(b.a, b.lists[i].data);
        pm_free(b.a, b.levels[i].data);
    }
    if (r != PM_OK) {
        pm_free(b.a, b.nodes.data);
        pm_free(b.a, b.items.data);
        return r;
    }
    s->tree_nodes = (pm_blend_tree_node *)b.nodes.data;
    s->tree_node_count = (int)b.nodes.count;
    s->tree_items = (int32_t *)b.items.data;
    s->tree_item_count = (int)b.items.count;
    return build_top(s, b.dims, cells, error);
}
