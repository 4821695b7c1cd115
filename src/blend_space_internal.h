/* Private: the blend space object, shared by blend_space.c and blend_space_job.c. */
#ifndef PM_BLEND_SPACE_INTERNAL_H
#define PM_BLEND_SPACE_INTERNAL_H

#include "delaunay.h"
#include "posematch/blend_space.h"

typedef enum space_mode {
    SPACE_POINT = 0,    /* one sample */
    SPACE_LINE = 1,     /* 1D, or 2D samples on one line */
    SPACE_TRIANGLES = 2 /* 2D Delaunay triangulation */
} space_mode;

struct pm_blend_space {
    pm_allocator allocator;
    char *name;
    int dimensions;
    char *axis_names[PM_BLEND_SPACE_MAX_DIMENSIONS];
    double axis_min[PM_BLEND_SPACE_MAX_DIMENSIONS], axis_max[PM_BLEND_SPACE_MAX_DIMENSIONS];
    pm_blend_sync sync;
    int sample_count;
    int joint_count, soa_count;
    pm_skeleton skeleton;       /* the first sample's */
    float unit_scale;           /* the first sample's clip metadata, for baked clips */
    pm_up_axis source_up;
    float frame_time;
    /* Per sample, in the order of the def. */
    char **names;
    float *params;              /* PM_BLEND_SPACE_MAX_DIMENSIONS per sample */
    pm_animation *animations;
    /* Canonical order: samples sorted by snapped coordinates. */
    int32_t *order;             /* rank -> sample */
    pm_dt_point *points;        /* by rank */
    space_mode mode;
    int collinear;
    /* SPACE_LINE: position of each rank along the line through points[0] and points[n-1]. */
    int64_t *line_s;
    /* SPACE_TRIANGLES: vertices are ranks; a uniform grid of triangle buckets for point location. */
    pm_triangulation tri;
    int grid_n;
    int32_t *grid_start;        /* grid_n * grid_n + 1 offsets into grid_items */
    int32_t *grid_items;
};

#endif
