/* posematch info: what a database holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_common.h"
#include "commands.h"

static const char info_usage[] =
    "usage: posematch info DB.pmdb [--json] [--assets] [--verify]\n"
    "Poses, assets, cardinality, unique vectors (full space: every pose; PCA space: the searchable\n"
    "poses), PCA components and explained variance, block-transition poses (the count in\n"
    "parentheses is those that only an excluded range blocks: --exclude-end's default 0.3 s usually\n"
    "lies in the trajectory window already), the search modes it answers (build --modes), bytes,\n"
    "memory per pose and the build key. --assets\n"
    "also lists every asset (name, poses, looping, mirrored, cost addend, blend-space parameters);\n"
    "the JSON output always has them as asset_list. --verify first recomputes what the search trees\n"
    "prune with from the stored values and fails on any disagreement (for files from sources you do\n"
    "not trust: loading alone catches corruption, not a crafted file with a valid checksum).\n";

int pm_cmd_info(int argc, char **argv) {
    const char *path = NULL;
    int json = 0, assets = 0, verify = 0;
    static const char *const flags[] = {"--json", "--assets", "--verify", NULL};
    pm_cli_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        if (!pm_cli_flag_once(&seen, "info", flags, argv[i])) return 2;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(info_usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--assets")) assets = 1;
        else if (!strcmp(argv[i], "--verify")) verify = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return pm_cli_fail("info: unknown option '%s'", argv[i]) + 1;
        else if (!path) path = argv[i];
        else return pm_cli_fail("info: one database at a time ('%s' and '%s')", path, argv[i]) + 1;
    }
    if (!path) return pm_cli_fail("info: no database given (try posematch info --help)") + 1;
    pm_error err;
    pm_database *db = NULL;
    if (pm_database_load(&db, path, NULL, &err) != PM_OK) return pm_cli_fail_error(&err);
    if (verify && pm_database_verify(db, &err) != PM_OK) {
        pm_database_destroy(db);
        return pm_cli_fail("%s: %s", path, err.message);
    }
    pm_database_info in;
    pm_database_get_info(&in, db);
    const pm_schema *schema = pm_database_schema(db);
    double per_pose = (double)in.bytes / (double)in.poses;
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "poses", in.poses);
        cJSON_AddNumberToObject(o, "assets", in.assets);
        cJSON_AddNumberToObject(o, "cardinality", in.cardinality);
        cJSON_AddNumberToObject(o, "channels", in.channels);
        cJSON_AddStringToObject(o, "schema", in.schema_name);
        cJSON_AddNumberToObject(o, "fps", pm_cli_round_sig(in.fps, 7)); /* as given, not the float's expansion */
        cJSON_AddNumberToObject(o, "unique_vectors", in.unique_vectors);
        if (in.unique_pca_vectors >= 0) cJSON_AddNumberToObject(o, "unique_pca_vectors", in.unique_pca_vectors);
        else cJSON_AddNullToObject(o, "unique_pca_vectors"); /* counted by the KD-tree, left out */
        cJSON_AddNumberToObject(o, "searchable_poses", in.searchable_poses);
        cJSON_AddNumberToObject(o, "block_transition_poses", in.block_transition_poses);
        cJSON_AddNumberToObject(o, "excluded_poses", in.excluded_poses);
        cJSON_AddNumberToObject(o, "pca_components", in.pca_components);
        cJSON_AddNumberToObject(o, "pca_explained_variance", in.pca_explained_variance);
        cJSON *curve = cJSON_AddArrayToObject(o, "explained_variance_by_components");
        for (int k = 1; k <= in.cardinality; k++)
            cJSON_AddItemToArray(curve, cJSON_CreateNumber(pm_database_explained_variance(db, k)));
        cJSON_AddNumberToObject(o, "exact_components", in.exact_components);
        cJSON_AddNumberToObject(o, "exact_explained_variance", in.exact_explained_variance);
        cJSON *modes = cJSON_AddArrayToObject(o, "modes");
        for (int m = 0; m <= PM_SEARCH_VPTREE; m++)
            if (in.search_modes & PM_SEARCH_MODE_BIT(m))
                cJSON_AddItemToArray(modes, cJSON_CreateString(pm_search_mode_name((pm_search_mode)m)));
        cJSON_AddNumberToObject(o, "bytes", (double)in.bytes);
        cJSON_AddNumberToObject(o, "bytes_per_pose", per_pose);
        cJSON_AddStringToObject(o, "key", in.key);
        if (verify) cJSON_AddBoolToObject(o, "verified", 1);
        cJSON *ch = cJSON_AddArrayToObject(o, "channels_list");
        for (int c = 0; c < schema->channel_count; c++) {
            char name[128];
            if (pm_database_channel_name(name, sizeof name, db, c, &err) != PM_OK) {
                cJSON_Delete(o);
                pm_database_destroy(db);
                return pm_cli_fail_error(&err);
            }
            cJSON_AddItemToArray(ch, cJSON_CreateString(name));
        }
        cJSON *list = cJSON_AddArrayToObject(o, "asset_list");
        for (int a = 0; a < in.assets; a++) {
            pm_asset_info ai;
            if (pm_database_asset(&ai, db, a, &err) != PM_OK) {
                cJSON_Delete(o);
                pm_database_destroy(db);
                return pm_cli_fail_error(&err);
            }
            cJSON *x = pm_cli_asset_json(&ai);
            cJSON_AddNumberToObject(x, "joints", ai.joint_count);
            if (ai.source_asset >= 0) {
                cJSON_AddNumberToObject(x, "mirror_of", ai.source_asset);
                cJSON_AddNumberToObject(x, "mirror_axis", ai.mirror_axis);
            }
            cJSON_AddNumberToObject(x, "cost_addend", ai.cost_addend);
            cJSON *params = cJSON_AddArrayToObject(x, "params");
            for (int k = 0; k < ai.param_count; k++) cJSON_AddItemToArray(params, cJSON_CreateNumber(ai.params[k]));
            cJSON_AddItemToArray(list, x);
        }
        int failed = pm_cli_json_puts(o);
        cJSON_Delete(o);
        if (failed) {
            pm_database_destroy(db);
            return 1;
        }
    } else {
        printf("database        %s\n", path);
        printf("schema          %s (%d channels, cardinality %d)\n", in.schema_name, in.channels, in.cardinality);
        printf("poses           %d in %d asset%s at %g fps\n", in.poses, in.assets, in.assets == 1 ? "" : "s", (double)in.fps);
        printf("searchable      %d poses; %d block-transition poses (%d blocked by excluded ranges alone)\n", in.searchable_poses,
               in.block_transition_poses, in.excluded_poses);
        if (in.unique_pca_vectors >= 0)
            printf("unique vectors  %d (full space, all poses), %d (PCA space, searchable poses)\n", in.unique_vectors,
                   in.unique_pca_vectors);
        else
            printf("unique vectors  %d (full space, all poses); the PCA space's are the KD-tree's, left out\n",
                   in.unique_vectors);
        printf("PCA             %d components explain %.1f%% of the variance\n", in.pca_components,
               100.0 * in.pca_explained_variance);
        if (in.search_modes & PM_SEARCH_MODE_BIT(PM_SEARCH_EXACT))
            printf("exact tree      %d components (%.1f%%) + residual norm\n", in.exact_components,
                   100.0 * in.exact_explained_variance);
        else
            printf("exact tree      left out (it would split on %d components)\n", in.exact_components);
        printf("modes           %s", pm_cli_mode_list(in.search_modes, ", ").text);
        if (in.search_modes == PM_SEARCH_MODES_ALL) printf(" (all)\n");
        else printf(" (%s left out: build --modes)\n", pm_cli_mode_list(PM_SEARCH_MODES_ALL & ~in.search_modes, ", ").text);
        printf("explained       ");
        for (int k = 1; k <= in.cardinality && k <= 12; k++)
            printf("%sk=%d %.0f%%", k > 1 ? "  " : "", k, 100.0 * pm_database_explained_variance(db, k));
        printf("\nbytes           %zu (%.1f per pose)\n", in.bytes, per_pose);
        printf("key             %s\n", in.key);
        if (verify) printf("verified        trees, projections and radii recomputed from the values: all agree\n");
        printf("channels       ");
        for (int c = 0; c < schema->channel_count; c++) {
            char name[128];
            if (pm_database_channel_name(name, sizeof name, db, c, &err) != PM_OK) {
                printf("\n");
                pm_database_destroy(db);
                return pm_cli_fail_error(&err);
            }
            printf(" [%s]", name);
        }
        printf("\n");
        for (int a = 0; assets && a < in.assets; a++) {
            pm_asset_info ai;
            if (pm_database_asset(&ai, db, a, &err) != PM_OK) {
                pm_database_destroy(db);
                return pm_cli_fail_error(&err);
            }
            printf("asset %-5d %s: poses %d..%d%s%s", a, ai.name, ai.first_pose, ai.first_pose + ai.pose_count - 1,
                   ai.looping ? ", looping" : "", ai.mirrored ? ", mirrored" : "");
            if (ai.cost_addend != 0.0f) printf(", cost addend %g", (double)ai.cost_addend);
            for (int k = 0; k < ai.param_count; k++) printf(k ? ",%g" : ", params %g", (double)ai.params[k]);
            printf("\n");
        }
    }
    pm_database_destroy(db);
    return 0;
}
