/* Schemas as JSON files (tools only: the library itself has no JSON dependency).
 *
 * { "name": "...", "channels": [ CHANNEL, ... ] }
 * CHANNEL: { "kind": "trajectory|position|velocity|heading|phase|curve|padding|group",
 *            "name": "...", "weight": 1, "group": "normalisation group",
 *            "bone": "LeftFoot" | "@left_foot", "offset": 0.0, "components": "xyz|xy",
 *            "axis": "x|y|z", "curve": "name", "size": 1,
 *            "samples": [ { "offset": 0.35, "weight": 0.7,
 *                           "flags": ["PositionXY", "FacingDirectionXY"] } ],
 *            "channels": [ nested channels of a group ] }
 * See docs/SCHEMA.md. */
#ifndef PM_SCHEMA_JSON_H
#define PM_SCHEMA_JSON_H

#include "posematch/posematch.h"

/* Where a schema's channels came from, for messages about them: the file and each channel's
 * field path (channels[1].channels[0]), or for a preset its name and each channel's index and
 * display name. */
typedef struct pm_schema_origin {
    int from_file;
    char source[256];
    char paths[PM_MAX_CHANNELS][96];
} pm_schema_origin;

/* Parses JSON text; errors name the file and the field path (channels[2].samples[0].flags).
 * origin may be NULL. */
pm_result pm_schema_from_json(pm_schema *out, const char *text, const char *source_name, pm_schema_origin *origin,
                              pm_error *error);
pm_result pm_schema_load_json(pm_schema *out, const char *path, pm_schema_origin *origin, pm_error *error);
/* A preset name, or else a JSON file path; origin may be NULL. */
pm_result pm_schema_resolve(pm_schema *out, const char *name_or_path, pm_schema_origin *origin, pm_error *error);
/* Checks that a clip has everything the schema reads - the joints and roles of bone channels,
 * the curves of curve channels - before a build, so that the message names the schema field and
 * the clip's file: "s.json: channels[1].bone: no joint 'LeftFot' in walk.bvh". */
pm_result pm_schema_check_clip(const pm_schema *schema, const pm_schema_origin *origin, const pm_clip *clip,
                               const char *clip_path, pm_error *error);
/* The JSON spelling of a channel kind ("trajectory", "position", ...). */
const char *pm_schema_json_kind_name(pm_feature_kind kind);
/* The schema as JSON text (malloc'd). */
char *pm_schema_to_json(const pm_schema *schema);

#endif
