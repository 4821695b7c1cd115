/* Per-dimension view of a schema, shared by feature extraction and the database builder. */
#ifndef PM_SCHEMA_LAYOUT_H
#define PM_SCHEMA_LAYOUT_H

#include "posematch/schema.h"

typedef struct pm_schema_layout {
    int cardinality;
    int group_count;                        /* normalisation groups */
    int channel_offset[PM_MAX_CHANNELS];    /* first dimension of each channel */
    int channel_size[PM_MAX_CHANNELS];
    int16_t dim_channel[PM_MAX_CARDINALITY];/* channel of each dimension */
    int16_t dim_group[PM_MAX_CARDINALITY];  /* normalisation group of each dimension */
    float dim_weight[PM_MAX_CARDINALITY];   /* effective weight (product down the group tree) */
} pm_schema_layout;

/* Validates the schema and fills the layout. */
pm_result pm_schema_layout_compute(pm_schema_layout *out, const pm_schema *schema, pm_error *error);
const char *pm_feature_kind_name(pm_feature_kind kind);
/* The joint roles a bone field may name instead of a joint ("@left_foot"), found from joint names
 * (pm_skeleton_find_roles): index into PM_BONE_ROLES, or -1 for an unknown role. */
#define PM_BONE_ROLES "@hips @pelvis @left_foot @right_foot @left_toe @right_toe @left_upleg @right_upleg @head"
int pm_bone_role(const char *bone);
/* Values one trajectory flag contributes per sample (3, or 2 for XY variants). */
int pm_trajectory_flag_size(uint32_t flag);

#endif
