/* Blend-space cells: the samples' canonical order, degenerate configurations (one line, one
 * plane), the Delaunay cells and the uniform grid of cell buckets that locates a query. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "blend_space_internal.h"
#include "core.h"

#define GRID2_MAX 128
#define GRID3_MAX 48

pm_dt3_point pm_blend_space_snap(const pm_blend_space *s, const float *params, int *clamped) {
    pm_dt3_point p = {0, 0, 0};
    int64_t *c[3] = {&p.x, &p.y, &p.z};
    for (int d = 0; d < s->dimensions; d++) {
        double u = ((double)params[d] - s->axis_min[d]) / (s->axis_max[d] - s->axis_min[d]);
        if (u < 0.0) {
            u = 0.0;
            if (clamped) *clamped = 1;
        } else if (u > 1.0) {
            u = 1.0;
            if (clamped) *clamped = 1;
        }
        *c[d] = (int64_t)floor(u * (double)PM_DT_COORD_MAX + 0.5);
    }
    return p;
}

int64_t pm_blend_space_bucket(int64_t x, int n) {
    int64_t c = (x * n) >> PM_DT_COORD_BITS;
    return c < 0 ? 0 : (c >= n ? n - 1 : c);
}

static int compare_rank(int a, int b, const pm_dt3_point *pts) {
    if (pts[a].x != pts[b].x) return pts[a].x < pts[b].x ? -1 : 1;
    if (pts[a].y != pts[b].y) return pts[a].y < pts[b].y ? -1 : 1;
    if (pts[a].z != pts[b].z) return pts[a].z < pts[b].z ? -1 : 1;
    return (a > b) - (a < b);
}

/* Merge sort of indices by coordinates (qsort has no context argument in C11, and the order must
 * be total and deterministic). */
static void sort_ranks(int32_t *idx, int32_t *tmp, int n, const pm_dt3_point *pts) {
    if (n < 2) return;
    int h = n / 2;
    sort_ranks(idx, tmp, h, pts);
    sort_ranks(idx + h, tmp, n - h, pts);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = compare_rank(idx[j], idx[i], pts) < 0 ? idx[j++] : idx[i++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, (size_t)n * sizeof(int32_t));
}

/* ---- location grid ---- */

static int64_t grid_coord(const pm_blend_space *s, int dims, int v, int axis) {
    if (dims == 2) return axis == 0 ? s->plane_points[v].x : s->plane_points[v].y;
    return pm_dt3_component(s->points[v], axis);
}

/* Bucket range covered by a cell's bounding box, widened by `pad` grid units. */
static void cell_range(const pm_blend_space *s, int dims, int n, const int32_t *v, int64_t pad, int64_t *lo, int64_t *hi) {
    for (int a = 0; a < dims; a++) {
        int64_t x0 = grid_coord(s, dims, v[0], a), x1 = x0;
        for (int i = 1; i <= dims; i++) {
            x0 = PM_MIN(x0, grid_coord(s, dims, v[i], a));
            x1 = PM_MAX(x1, grid_coord(s, dims, v[i], a));
        }
        lo[a] = pm_blend_space_bucket(x0 - pad, n);
        hi[a] = pm_blend_space_bucket(x1 + pad, n);
    }
    for (int a = dims; a < 3; a++) lo[a] = hi[a] = 0;
}

static int64_t count_items(const pm_blend_space *s, int dims, int n, const int32_t *verts, int cells, int64_t pad) {
    int64_t total = 0, lo[3], hi[3];
    for (int k = 0; k < cells; k++) {
        cell_range(s, dims, n, verts + (size_t)k * (dims + 1), pad, lo, hi);
        total += (hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1);
    }
    return total;
}

/* Buckets over the unit square or cube listing every cell whose bounding box meets them (pad > 0
 * when queries reach the grid through rounded coordinates). */
static pm_result build_grid(pm_blend_space *s, int dims, int n, const int32_t *verts, int cells, int64_t pad,
                            pm_error *error) {
    s->grid_n = n;
    size_t buckets = dims == 2 ? (size_t)n * n : (size_t)n * n * n;
    s->grid_start = (int32_t *)pm_alloc_array(&s->allocator, buckets + 1, sizeof(int32_t), 0);
    if (!s->grid_start) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its grid");
    /* Two passes: count the cells over each bucket, then fill. */
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < cells; k++) {
            int64_t lo[3], hi[3];
            cell_range(s, dims, n, verts + (size_t)k * (dims + 1), pad, lo, hi);
            for (int64_t cz = lo[2]; cz <= hi[2]; cz++)
                for (int64_t cy = lo[1]; cy <= hi[1]; cy++)
                    for (int64_t cx = lo[0]; cx <= hi[0]; cx++) {
                        size_t b = ((size_t)cz * n + (size_t)cy) * n + (size_t)cx;
                        if (pass == 0) s->grid_start[b + 1]++;
                        else s->grid_items[s->grid_start[b]++] = k;
                    }
        }
        if (pass == 0) {
            for (size_t b = 0; b < buckets; b++) s->grid_start[b + 1] += s->grid_start[b];
            s->grid_items = (int32_t *)pm_alloc_array(&s->allocator, (size_t)s->grid_start[buckets] + 1, sizeof(int32_t), 0);
            if (!s->grid_items) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for its grid");
        } else {
            /* The fill advanced each start to the next bucket's; shift back. */
            for (size_t b = buckets; b > 0; b--) s->grid_start[b] = s->grid_start[b - 1];
            s->grid_start[0] = 0;
        }
    }
    return PM_OK;
}

static pm_result build_grid2(pm_blend_space *s, int64_t pad, pm_error *error) {
    int n = (int)ceil(sqrt((double)s->tri.triangle_count));
    return build_grid(s, 2, PM_CLAMP(n, 1, GRID2_MAX), s->tri.vertices, s->tri.triangle_count, pad, error);
}

static pm_result build_grid3(pm_blend_space *s, pm_error *error) {
    int cells = s->tet.tet_count;
    int n = (int)ceil(cbrt((double)cells));
    n = PM_CLAMP(n, 1, GRID3_MAX);
    /* Well-spread samples make small tetrahedra and few entries per bucket. Samples on a sphere
     * make long ones that cross many buckets: coarsen the grid rather than let it grow. */
    while (n > 1 && count_items(s, 3, n, s->tet.vertices, cells, 0) > 24 * (int64_t)cells + 4096) n = n * 3 / 4;
    return build_grid(s, 3, n, s->tet.vertices, cells, 0, error);
}

/* ---- degenerate configurations ---- */

static pm_result build_line(pm_blend_space *s, pm_error *error) {
    int n = s->sample_count;
    s->mode = SPACE_LINE;
    s->collinear = s->dimensions >= 2;
    s->line_s = (int64_t *)pm_alloc_array(&s->allocator, (size_t)n, sizeof(int64_t), 0);
    if (!s->line_s) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
    /* Sorted coordinates run monotonically along a line, so the ranks are in line order. */
    pm_dt3_point o = s->points[0], dir = pm_dt3_sub(s->points[n - 1], o);
    for (int k = 0; k < n; k++) s->line_s[k] = pm_dt3_dot(pm_dt3_sub(s->points[k], o), dir);
    return PM_OK;
}

typedef struct plane_metric {
    const pm_dt3_point *points;
    const int32_t *rank; /* triangulation index -> rank */
} plane_metric;

/* In-circle in the plane itself: the projected coordinates the sweep runs on distort circles. */
static int plane_incircle(void *context, int a, int b, int c, int d) {
    const plane_metric *m = (const plane_metric *)context;
    return pm_dt3_incircle(m->points[m->rank[a]], m->points[m->rank[b]], m->points[m->rank[c]], m->points[m->rank[d]]);
}

/* Coplanar 3D samples: a 2D Delaunay triangulation in their plane, seen along the axis closest to
 * its normal; `third` is a rank off the line of ranks 0 and 1. */
static pm_result build_plane(pm_blend_space *s, int third, pm_error *error) {
    const pm_allocator *a = &s->allocator;
    int n = s->sample_count;
    s->mode = SPACE_TRIANGLES;
    s->coplanar = 1;
    pm_dt3_point nrm = pm_dt3_normal(s->points[0], s->points[1], s->points[third]);
    s->plane_normal = nrm;
    s->plane_axis = pm_dt3_dominant_axis(nrm);
    s->plane_points = (pm_dt_point *)pm_alloc_array(a, (size_t)n, sizeof(pm_dt_point), 0);
    pm_dt3_point *uv = (pm_dt3_point *)pm_alloc_array(a, (size_t)n, sizeof(pm_dt3_point), 0);
    pm_dt_point *sorted = (pm_dt_point *)pm_alloc_array(a, (size_t)n, sizeof(pm_dt_point), 0);
    int32_t *perm = (int32_t *)pm_alloc_array(a, (size_t)n * 2, sizeof(int32_t), 0);
    pm_result r = PM_OK;
    if (!s->plane_points || !uv || !sorted || !perm) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
        goto done;
    }
    for (int k = 0; k < n; k++) {
        pm_dt3_point p = s->points[k];
        int64_t c[3] = {p.x, p.y, p.z}, uvc[2] = {0, 0};
        for (int d = 0, m = 0; d < 3; d++)
            if (d != s->plane_axis) uvc[m++] = c[d];
        s->plane_points[k].x = uv[k].x = uvc[0];
        s->plane_points[k].y = uv[k].y = uvc[1];
        perm[k] = k;
    }
    /* The sweep wants the points sorted by their 2D coordinates, which the 3D order is not. */
    sort_ranks(perm, perm + n, n, uv);
    for (int k = 0; k < n; k++) sorted[k] = s->plane_points[perm[k]];
    plane_metric metric = {s->points, perm};
    if ((r = pm_delaunay_build_metric(&s->tri, sorted, n, plane_incircle, &metric, a, error)) != PM_OK) goto done;
    for (int i = 0; i < 3 * s->tri.triangle_count; i++) s->tri.vertices[i] = perm[s->tri.vertices[i]];
    if ((r = pm_blend_space_build_hull(s, error)) != PM_OK) goto done;
    /* Queries off the plane reach the grid through a rounded projection: one unit of padding. */
    r = build_grid2(s, 1, error);
done:
    pm_free(a, uv);
    pm_free(a, sorted);
    pm_free(a, perm);
    return r;
}

/* ---- building ---- */

static void format_params(char *buf, size_t size, const pm_blend_space *s, int sample) {
    const float *p = &s->params[sample * PM_BLEND_SPACE_MAX_DIMENSIONS];
    if (s->dimensions == 1) snprintf(buf, size, "%g", (double)p[0]);
    else if (s->dimensions == 2) snprintf(buf, size, "%g, %g", (double)p[0], (double)p[1]);
    else snprintf(buf, size, "%g, %g, %g", (double)p[0], (double)p[1], (double)p[2]);
}

pm_result pm_blend_space_build_cells(pm_blend_space *s, pm_blend_collinear collinear, pm_blend_coplanar coplanar,
                                     pm_error *error) {
    const pm_allocator *a = &s->allocator;
    int n = s->sample_count, dims = s->dimensions;
    s->order = (int32_t *)pm_alloc_array(a, (size_t)n * 2, sizeof(int32_t), 0);
    pm_dt3_point *by_sample = (pm_dt3_point *)pm_alloc_array(a, (size_t)n, sizeof(pm_dt3_point), 0);
    s->points = (pm_dt3_point *)pm_alloc_array(a, (size_t)n, sizeof(pm_dt3_point), 0);
    if (!s->order || !by_sample || !s->points) {
        pm_free(a, by_sample);
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory for %d samples", n);
    }
    for (int i = 0; i < n; i++) {
        by_sample[i] = pm_blend_space_snap(s, &s->params[i * PM_BLEND_SPACE_MAX_DIMENSIONS], NULL);
        s->order[i] = i;
    }
    sort_ranks(s->order, s->order + n, n, by_sample);
    for (int k = 0; k < n; k++) s->points[k] = by_sample[s->order[k]];
    pm_free(a, by_sample);
    for (int k = 1; k < n; k++) {
        pm_dt3_point p = s->points[k], q = s->points[k - 1];
        if (p.x != q.x || p.y != q.y || p.z != q.z) continue;
        int i = PM_MIN(s->order[k - 1], s->order[k]), j = PM_MAX(s->order[k - 1], s->order[k]);
        char pi[96], pj[96];
        format_params(pi, sizeof pi, s, i);
        format_params(pj, sizeof pj, s, j);
        int same = 1;
        for (int d = 0; d < s->dimensions; d++)
            same &= s->params[i * PM_BLEND_SPACE_MAX_DIMENSIONS + d] == s->params[j * PM_BLEND_SPACE_MAX_DIMENSIONS + d];
        if (same)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "blend space '%s': samples '%s' (%s) and '%s' (%s) are at the same coordinates; remove one or move it",
                           s->name, s->names[i], pi, s->names[j], pj);
        /* Distinct, but on the same node of the grid the predicates run on: say so, with its step. */
        char res[160] = "";
        for (int d = 0, at = 0; d < s->dimensions && at < (int)sizeof res; d++)
            at += snprintf(res + at, sizeof res - (size_t)at, "%s%s %g", d ? ", " : "", s->axis_names[d],
                           (s->axis_max[d] - s->axis_min[d]) / (double)PM_DT_COORD_MAX);
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "blend space '%s': samples '%s' (%s) and '%s' (%s) are closer than the space's resolution (the axis "
                       "range / 2^%d: %s); move them apart or narrow the axis ranges",
                       s->name, s->names[i], pi, s->names[j], pj, PM_DT_COORD_BITS, res);
    }
    if (n == 1) {
        s->mode = SPACE_POINT;
        return PM_OK;
    }
    /* A rank off the line of ranks 0 and 1, then (3D) one off their plane. */
    int third = -1, fourth = -1;
    for (int k = 2; k < n && third < 0; k++) {
        pm_dt3_point nrm = pm_dt3_normal(s->points[0], s->points[1], s->points[k]);
        if (nrm.x || nrm.y || nrm.z) third = k;
    }
    if (third >= 0 && dims == 3)
        for (int k = 2; k < n && fourth < 0; k++)
            if (pm_dt3_orient(s->points[0], s->points[1], s->points[third], s->points[k]) != 0) fourth = k;
    if (third < 0) {
        if (dims >= 2 && (collinear == PM_BLEND_COLLINEAR_ERROR || (dims == 3 && coplanar == PM_BLEND_COPLANAR_ERROR)))
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "blend space '%s': all %d samples lie on one line, so no %s can hold a point (make it a 1D "
                           "space or add a sample off the line)",
                           s->name, n, dims == 2 ? "triangle" : "tetrahedron");
        return build_line(s, error);
    }
    if (dims == 3 && fourth < 0) {
        if (coplanar == PM_BLEND_COPLANAR_ERROR)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "blend space '%s': all %d samples lie in one plane, so no tetrahedron can hold a point (make it "
                           "a 2D space or add a sample off the plane)",
                           s->name, n);
        return build_plane(s, third, error);
    }
    pm_result r;
    if (dims == 2) {
        s->mode = SPACE_TRIANGLES;
        s->plane_points = (pm_dt_point *)pm_alloc_array(a, (size_t)n, sizeof(pm_dt_point), 0);
        if (!s->plane_points) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "blend space: out of memory");
        for (int k = 0; k < n; k++) {
            s->plane_points[k].x = s->points[k].x;
            s->plane_points[k].y = s->points[k].y;
        }
        if ((r = pm_delaunay_build(&s->tri, s->plane_points, n, a, error)) != PM_OK) return r;
        if ((r = pm_blend_space_build_hull(s, error)) != PM_OK) return r;
        return build_grid2(s, 0, error);
    }
    s->mode = SPACE_TETRAHEDRA;
    if ((r = pm_delaunay3_build(&s->tet, s->points, n, a, error)) != PM_OK) return r;
    if ((r = pm_blend_space_build_hull(s, error)) != PM_OK) return r;
    return build_grid3(s, error);
}
