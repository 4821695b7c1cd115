/* Per-dimension view of a schema, shared by feature extraction and the database builder. */
#ifndef PM_SCHEMA_LAYOUT_H
#define PM_SCHEMA_LAYOUT_H

#include "posematch/schema.h"

typedef struct pm_schema_layout {
    int cardinality;
    int group_count;                        /* normalisation groups */
    int16_t dim_channel[PM_MAX_CARDINALITY];/* channel of each dimension */
    int16_t dim_group[PM_MAX_CARDINALITY];  /* normalisation group of each dimension */
    float dim_weight[PM_MAX_CARDINALITY];   /* effective weight (product down the group tree) */
} pm_schema_layout;

/* Validates the schema and fills the layout. */
pm_result pm_schema_layout_compute(pm_schema_layout *out, const pm_schema *schema, pm_error *error);
/* The joint roles a bone field may name instead of a joint ("@left_foot"), each with the
 * pm_skeleton_roles field that finds its joint from joint names (pm_skeleton_find_roles);
 * @pelvis is another name for @hips. X(name, field) per role: the one list behind pm_bone_role,
 * pm_features_resolve_bone and PM_BONE_ROLES. */
#define PM_BONE_ROLE_TABLE(X)                                                                                         \
    X("@hips", hips) X("@pelvis", hips) X("@left_foot", left_foot) X("@right_foot", right_foot)                       \
    X("@left_toe", left_toe) X("@right_toe", right_toe) X("@left_upleg", left_upleg) X("@right_upleg", right_upleg) \
    X("@head", head)
/* The role names for messages, each after a space: " @hips @pelvis ... @head". */
#define PM_BONE_ROLE_TEXT_(name, field) " " name
#define PM_BONE_ROLES PM_BONE_ROLE_TABLE(PM_BONE_ROLE_TEXT_)
/* Index of a role in PM_BONE_ROLE_TABLE, or -1 for an unknown role. */
int pm_bone_role(const char *bone);
/* Values one trajectory flag contributes per sample (3, or 2 for XY variants). */
int pm_trajectory_flag_size(uint32_t flag);

#endif
