/* libFuzzer target for the .pmdb loader. The checksum is skipped (PM_LOAD_SKIP_CHECKSUM) so
 * that mutations reach the structural checks behind it; whatever loads is verified and searched
 * in every mode, which must then be safe too; what also verifies must answer the exact modes
 * with brute force's optimum (the seeds include databases built for some modes only). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "posematch/posematch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pm_database *db = NULL;
    pm_error err;
    /* With the checksum, any change is refused outright. */
    if (pm_database_load_memory(&db, data, size, 0, NULL, &err) == PM_OK) pm_database_destroy(db);
    db = NULL;
    if (pm_database_load_memory(&db, data, size, PM_LOAD_SKIP_CHECKSUM, NULL, &err) != PM_OK) return 0;
    pm_database_info info;
    pm_database_get_info(&info, db);
    float *q = calloc((size_t)info.cardinality, sizeof(float));
    float *breakdown = calloc(PM_MAX_CHANNELS, sizeof(float));
    pm_search_def def = pm_default_search_def();
    def.kdtree_neighbors = 8;
    def.out_breakdown = breakdown;
    int verified = pm_database_verify(db, &err) == PM_OK;
    size_t ss = pm_search_scratch_size(db, &def);
    void *scratch = aligned_alloc(64, (ss + 63) / 64 * 64);
    for (int k = 0; k < 2 && q && scratch; k++) {
        if (k == 1 && info.poses > 0) pm_database_pose_features(q, db, info.poses / 2, NULL);
        pm_search_result r[4];
        for (int m = 0; m < 4; m++) {
            def.mode = (pm_search_mode)m;
            def.continuing_pose = k ? 0 : -1;
            if (pm_search(&r[m], db, q, &def, scratch, ss, &err) != PM_OK) r[m].found = -1;
        }
        /* (found -1: the search failed - a mode the database was built without, say) */
        if (verified && r[PM_SEARCH_BRUTEFORCE].found >= 0 &&
            ((r[PM_SEARCH_EXACT].found >= 0 && r[PM_SEARCH_EXACT].pose != r[PM_SEARCH_BRUTEFORCE].pose) ||
             (r[PM_SEARCH_VPTREE].found >= 0 && r[PM_SEARCH_VPTREE].pose != r[PM_SEARCH_BRUTEFORCE].pose)))
            abort(); /* a verified database answered an exact mode wrong */
    }
    for (int a = 0; a < info.assets; a++) {
        pm_asset_info ai;
        if (pm_database_asset(&ai, db, a, &err) != PM_OK) abort();
        /* A loaded map is a left/right swap of its joints: a player indexes clips with it. */
        for (int j = 0; ai.mirror_map && j < ai.joint_count; j++)
            if (ai.mirror_map[j] < 0 || ai.mirror_map[j] >= ai.joint_count || ai.mirror_map[ai.mirror_map[j]] != j) abort();
    }
    free(scratch);
    free(q);
    free(breakdown);
    pm_database_destroy(db);
    return 0;
}
