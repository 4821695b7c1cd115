/* Minimal embedding example: load a database, build a query from a clip frame, search it.
 *   build/examples/search_example DB.pmdb CLIP.bvh FRAME
 * The query would normally come from the character's state; a clip frame stands in here. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "posematch/posematch.h"

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: search_example DB.pmdb CLIP.bvh FRAME\n");
        return 2;
    }
    pm_error err;
    pm_database *db = NULL;
    if (pm_database_load(&db, argv[1], NULL, &err) != PM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    pm_clip clip;
    if (pm_bvh_read_file(&clip, argv[2], NULL, &err) != PM_OK) {
        fprintf(stderr, "%s\n", err.message);
        pm_database_destroy(db);
        return 1;
    }
    /* Feature rows for the whole clip, prepared as the database prepared its own clips. */
    float *rows = NULL;
    int count = 0;
    if (pm_database_clip_queries(&rows, &count, db, &clip, &err) != PM_OK) {
        fprintf(stderr, "%s\n", err.message);
        pm_clip_destroy(&clip);
        pm_database_destroy(db);
        return 1;
    }
    /* FRAME is a frame of the file; the rows are at the database's rate after any rest-pose
     * lead-in it drops, so the library maps one to the other. */
    char *end;
    long frame = strtol(argv[3], &end, 10);
    int row = -1;
    if (*end || end == argv[3] || frame < 0 || frame > INT_MAX)
        fprintf(stderr, "%s: '%s' is not a frame number\n", argv[2], argv[3]);
    else if (pm_database_clip_frame_row(&row, db, &clip, (int)frame, &err) != PM_OK)
        fprintf(stderr, "%s\n", err.message); /* a frame past the clip, or a lead-in it drops */
    if (row < 0) {
        pm_free_buffer(rows, NULL);
        pm_clip_destroy(&clip);
        pm_database_destroy(db);
        return 1;
    }
    const int cardinality = pm_schema_cardinality(pm_database_schema(db));

    /* The search allocates nothing: one scratch buffer per thread, sized once. */
    pm_search_def def = pm_default_search_def();
    size_t size = pm_search_scratch_size(db, &def);
    void *scratch = aligned_alloc(64, (size + 63) / 64 * 64);
    pm_search_result r;
    pm_asset_info asset;
    if (!scratch) fprintf(stderr, "out of memory for %zu bytes of scratch\n", size);
    else if (pm_search(&r, db, rows + (size_t)row * cardinality, &def, scratch, size, &err) != PM_OK ||
             (r.found && pm_database_asset(&asset, db, r.asset, &err) != PM_OK))
        fprintf(stderr, "%s\n", err.message);
    else if (!r.found) fprintf(stderr, "no pose found\n");
    else printf("frame %ld -> %s at %.3f s (pose %d), cost %.4f\n", frame, asset.name, (double)r.time, r.pose, (double)r.cost);
    free(scratch);
    pm_free_buffer(rows, NULL);
    pm_clip_destroy(&clip);
    pm_database_destroy(db);
    return 0;
}
