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

/* Parses JSON text; errors name the file and the field path (channels[2].samples[0].flags). */
pm_result pm_schema_from_json(pm_schema *out, const char *text, const char *source_name, pm_error *error);
pm_result pm_schema_load_json(pm_schema *out, const char *path, pm_error *error);
/* A preset name, or else a JSON file path. */
pm_result pm_schema_resolve(pm_schema *out, const char *name_or_path, pm_error *error);
/* The JSON spelling of a channel kind ("trajectory", "position", ...). */
const char *pm_schema_json_kind_name(pm_feature_kind kind);
/* The schema as JSON text (malloc'd). */
char *pm_schema_to_json(const pm_schema *schema);

#endif
