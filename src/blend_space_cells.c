/* Blend-space cells: the samples' canonical order, degenerate configurations (one line, one
 * plane), the Delaunay cells and the structures that locate a query among them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "blend_space_internal.h"
#include "core.h"

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
    /* Queries off the plane reach the tree through a rounded projection: one unit of padding. */
    r = pm_blend_space_build_tree(s, 1, 0, error);
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
        if ((r = pm_blend_space_build_tree(s, 0, PM_BLEND_TREE_CROWDED_ITEMS, error)) != PM_OK) return r;
        return s->tree_crowded ? pm_blend_space_build_trapezoids(s, error) : PM_OK;
    }
    s->mode = SPACE_TETRAHEDRA;
    if ((r = pm_delaunay3_build(&s->tet, s->points, n, a, error)) != PM_OK) return r;
    if ((r = pm_blend_space_build_hull(s, error)) != PM_OK) return r;
    return pm_blend_space_build_tree(s, 0, 0, error);
}
