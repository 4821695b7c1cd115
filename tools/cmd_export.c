/* posematch export-features: the raw feature matrix and everything needed to recompute costs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_common.h"
#include "cli_file.h"
#include "commands.h"
#include "schema_json.h"

static const char export_usage[] =
    "usage: posematch export-features DB.pmdb -o PREFIX\n"
    "Writes PREFIX.f32 (poses x cardinality raw float32 features, row = pose) and PREFIX.json:\n"
    "cardinality, per-dimension offset, scale and weight_sqrt (cost = sum(((q - x) / scale *\n"
    "weight_sqrt)^2) + cost_addend), channels (names, as search's breakdown keys; a group\n"
    "channel is listed with size 0 and has no breakdown entry) and channel_info (kind,\n"
    "first_dim, size), dim_channel, pose -> asset and frame,\n"
    "block_transition (1 = a plain search never returns the pose) and cost_addend.\n";

static cJSON *float_array(const float *v, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

int pm_cmd_export_features(int argc, char **argv) {
    const char *path = NULL, *prefix = NULL;
    static const char *const single_value_options[] = {"-o", "--output", NULL};
    pm_cli_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        if (!pm_cli_once_listed(&seen, "export-features", single_value_options, argc, argv, i)) return 2;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(export_usage, stdout);
            return 0;
        } else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && pm_cli_has_value(argc, argv, i)) prefix = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1]) return pm_cli_fail("export-features: unknown or incomplete option '%s'", argv[i]) + 1;
        else if (!path) path = argv[i];
        else
            return pm_cli_fail("export-features: one database at a time ('%s' and '%s'; the output prefix goes after -o)",
                               path, argv[i]) + 1;
    }
    if (!path || !prefix) return pm_cli_fail("export-features: usage: posematch export-features DB.pmdb -o PREFIX") + 1;
    /* PREFIX.f32 of "out/" would be a hidden file in out, not what was meant. */
    const char *base = strrchr(prefix, '/');
    base = base ? base + 1 : prefix;
    if (!base[0] || !strcmp(base, ".") || !strcmp(base, ".."))
        return pm_cli_fail("export-features: -o PREFIX '%s' names no file (it must end with a file name, e.g. out/features)",
                           prefix) + 1;
    char f32_file[4096], json_file[4096];
    if ((size_t)snprintf(f32_file, sizeof f32_file, "%s.f32", prefix) >= sizeof f32_file ||
        (size_t)snprintf(json_file, sizeof json_file, "%s.json", prefix) >= sizeof json_file)
        return pm_cli_fail("export-features: -o PREFIX is too long") + 1;
    pm_error err;
    /* (The database must not be one of them: it would be replaced by its own features.) */
    if (pm_file_check_output(f32_file, &err) != PM_OK || pm_file_check_output(json_file, &err) != PM_OK ||
        pm_cli_check_not_input(f32_file, &path, 1, &err) != PM_OK ||
        pm_cli_check_not_input(json_file, &path, 1, &err) != PM_OK)
        return pm_cli_fail_error(&err);
    pm_database *db = NULL;
    if (pm_database_load(&db, path, NULL, &err) != PM_OK) return pm_cli_fail_error(&err);
    pm_database_info info;
    pm_database_get_info(&info, db);
    const int card = info.cardinality, P = info.poses;
    int rc = 1;
    float *matrix = malloc((size_t)P * card * sizeof(float));
    cJSON *o = cJSON_CreateObject();
    char *text = NULL;
    if (!matrix || !o) {
        pm_cli_fail("export-features: out of memory");
        goto done;
    }
    for (int p = 0; p < P; p++) pm_database_pose_features(matrix + (size_t)p * card, db, p, NULL);
    cJSON_AddNumberToObject(o, "poses", P);
    cJSON_AddNumberToObject(o, "cardinality", card);
    cJSON_AddNumberToObject(o, "fps", pm_cli_round_sig(info.fps, 7)); /* as given: 29.97, not the float's 29.969999313354492 */
    cJSON_AddStringToObject(o, "schema", info.schema_name);
    cJSON_AddStringToObject(o, "key", info.key);
    cJSON_AddItemToObject(o, "offset", float_array(pm_database_offsets(db), card));
    cJSON_AddItemToObject(o, "scale", float_array(pm_database_scales(db), card));
    cJSON_AddItemToObject(o, "weight_sqrt", float_array(pm_database_weights_sqrt(db), card));
    const pm_schema *schema = pm_database_schema(db);
    /* "channels": each channel's key as search's breakdown names it (pm_cli_channel_keys), so a
     * result's breakdown reads against this list; "channel_info" adds kind and dimensions. */
    cJSON *channels = cJSON_AddArrayToObject(o, "channels");
    cJSON *channel_info = cJSON_AddArrayToObject(o, "channel_info");
    pm_cli_channel_key *keys = pm_cli_channel_keys(db, &err);
    if (!keys) {
        pm_cli_fail_error(&err);
        goto done;
    }
    for (int c = 0; c < schema->channel_count; c++) {
        int first = -1, size = 0;
        for (int d = 0; d < card; d++)
            if (pm_database_dim_channel(db, d) == c) {
                if (first < 0) first = d;
                size++;
            }
        cJSON_AddItemToArray(channels, cJSON_CreateString(keys[c]));
        cJSON *ch = cJSON_CreateObject();
        cJSON_AddStringToObject(ch, "name", keys[c]);
        cJSON_AddStringToObject(ch, "kind", pm_schema_json_kind_name(schema->channels[c].kind));
        cJSON_AddNumberToObject(ch, "first_dim", first);
        cJSON_AddNumberToObject(ch, "size", size);
        cJSON_AddItemToArray(channel_info, ch);
    }
    free(keys);
    cJSON *dim_channel = cJSON_AddArrayToObject(o, "dim_channel");
    for (int d = 0; d < card; d++) cJSON_AddItemToArray(dim_channel, cJSON_CreateNumber(pm_database_dim_channel(db, d)));
    cJSON *assets = cJSON_AddArrayToObject(o, "assets");
    for (int i = 0; i < info.assets; i++) {
        pm_asset_info a;
        if (pm_database_asset(&a, db, i, &err) != PM_OK) {
            pm_cli_fail_error(&err);
            goto done;
        }
        cJSON_AddItemToArray(assets, pm_cli_asset_json(&a));
    }
    cJSON *pa = cJSON_AddArrayToObject(o, "pose_asset");
    cJSON *pf = cJSON_AddArrayToObject(o, "pose_frame");
    cJSON *bt = cJSON_AddArrayToObject(o, "block_transition");
    cJSON *ca = cJSON_AddArrayToObject(o, "cost_addend");
    for (int p = 0; p < P; p++) {
        pm_pose_info pi;
        if (pm_database_pose(&pi, db, p, &err) != PM_OK) {
            pm_cli_fail_error(&err);
            goto done;
        }
        cJSON_AddItemToArray(pa, cJSON_CreateNumber(pi.asset));
        cJSON_AddItemToArray(pf, cJSON_CreateNumber(pi.frame));
        cJSON_AddItemToArray(bt, cJSON_CreateNumber(pi.block_transition));
        cJSON_AddItemToArray(ca, cJSON_CreateNumber(pi.cost_addend));
    }
    text = pm_cli_json_print(o, 0);
    if (!text) {
        pm_cli_fail("export-features: out of memory");
        goto done;
    }
    /* Both files or neither: a matrix without its description (or an old one) misleads. */
    const char *files[2] = {f32_file, json_file};
    const void *data[2] = {matrix, text};
    size_t sizes[2] = {(size_t)P * card * sizeof(float), strlen(text)};
    if (pm_file_write_all(2, files, data, sizes, &err) != PM_OK) {
        pm_cli_fail_error(&err);
        goto done;
    }
    rc = 0;
done:
    free(text);
    cJSON_Delete(o);
    free(matrix);
    pm_database_destroy(db);
    return rc;
}
