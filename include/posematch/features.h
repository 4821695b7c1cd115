/* posematch - feature extraction: the raw (unnormalised) feature rows of a clip under a schema. */
#ifndef POSEMATCH_FEATURES_H
#define POSEMATCH_FEATURES_H

#include "schema.h"

PM_EXTERN_C_BEGIN

/* Longest row pm_features_extract accepts, in floats: room for rows interleaved with other data,
 * and far from overflowing frame count x stride. */
#define PM_MAX_FEATURE_STRIDE (1 << 20)

/* Extracts one row of pm_schema_cardinality(schema) floats per frame of `clip` into
 * out_values (row f starts at out_values + f * stride; cardinality <= stride <=
 * PM_MAX_FEATURE_STRIDE, else PM_ERR_INVALID_ARGUMENT or PM_ERR_LIMIT before anything is
 * written). The floats from cardinality to stride of each row are neither written nor read.
 * Samples that fall outside the clip wrap around with the clip's root motion for looping
 * clips and clamp to the first/last frame otherwise; out_block_transition (optional, one byte
 * per frame) is set to 1 for frames whose future window leaves a non-looping clip.
 * Bone names may be roles (@hips, @left_foot, ...) resolved from the clip's joint names.
 * The clip should already be at the database's frame rate. Allocates temporary memory with
 * the clip's allocator. */
PM_API pm_result pm_features_extract(float *out_values, size_t stride, uint8_t *out_block_transition,
                                     const pm_clip *clip, const pm_schema *schema, const pm_root_def *root_def,
                                     pm_error *error);

/* Joint index for a channel's bone field (a name or a role) in this skeleton, or -1. */
PM_API int pm_features_resolve_bone(const pm_skeleton *skeleton, const char *bone);

PM_EXTERN_C_END

#endif
