/* libFuzzer target for the tool's JSON readers, where user files enter: feature schemas and
 * blend spaces. Any input either loads or fails with a message naming the source. What loads is
 * used: a schema extracts the features of a procedural walk into a small database; a blend space
 * (its clips are two procedural walks of a few strides, written once at start-up) is weighed,
 * evaluated by the job over its period and baked. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>

#include "blend_space_json.h"
#include "posematch/posematch.h"
#include "schema_json.h"
#include "synth.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char clip_dir[64];
static pm_clip walk;
static int verbose; /* PM_FUZZ_VERBOSE=1: say what each input did (for checking the seeds) */

/* Seeds name the clips "walk.bvh" and "run.bvh" (procedural looping walk and run). */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    verbose = getenv("PM_FUZZ_VERBOSE") != NULL;
    /* In the working directory (ctest runs it in the build tree), rewritten by every run:
     * libFuzzer ends without running exit handlers, so a temporary directory would be left. */
    snprintf(clip_dir, sizeof clip_dir, "fuzz_json_clips");
    if (mkdir(clip_dir, 0755) != 0 && errno != EEXIST) abort();
    static const char *const names[2] = {"walk", "run"};
    for (int i = 0; i < 2; i++) {
        pm_synth_def d = pm_default_synth_def();
        d.fps = 30.0f, d.duration = i ? 1.4f : 3.0f, d.speed = i ? 3.0f : 1.3f, d.looping = 1, d.seed = 7u + (unsigned)i;
        pm_clip c;
        char path[128];
        snprintf(path, sizeof path, "%s/%s.bvh", clip_dir, names[i]);
        if (pm_synth_clip(&c, &d, names[i], NULL) != PM_OK || pm_bvh_write_file(&c, path, NULL, NULL) != PM_OK) abort();
        if (i == 0) walk = c;
        else pm_clip_destroy(&c);
    }
    return 0;
}

static void use_schema(const pm_schema *schema) {
    pm_error err;
    if (pm_schema_check_clip(schema, NULL, &walk, "walk.bvh", &err) != PM_OK) {
        if (!err.message[0]) abort();
        if (verbose) fprintf(stderr, "schema check: %s\n", err.message);
        return;
    }
    pm_database_def def = pm_default_database_def();
    def.schema = schema;
    def.fps = 10.0f;
    pm_asset_def asset = pm_default_asset_def(&walk);
    pm_database *db = NULL;
    if (pm_database_build(&db, &def, &asset, 1, &err) != PM_OK) {
        if (!err.message[0] || db) abort();
        if (verbose) fprintf(stderr, "database: %s\n", err.message);
        return;
    }
    if (verbose) fprintf(stderr, "database: ok\n");
    pm_database_destroy(db);
}

static void use_space(const pm_blend_space *s) {
    pm_error err;
    float params[PM_BLEND_SPACE_MAX_DIMENSIONS];
    for (int d = 0; d < pm_blend_space_dimensions(s); d++) {
        float lo, hi;
        if (pm_blend_space_axis_range(&lo, &hi, s, d, &err) != PM_OK) abort();
        params[d] = 0.5f * lo + 0.5f * hi;
    }
    pm_blend_space_weights w;
    if (pm_blend_space_weights_at(&w, s, params, &err) != PM_OK) abort();
    float total = 0.0f;
    for (int i = 0; i < w.count; i++) total += w.weights[i];
    if (!(total > 0.999f && total < 1.001f)) abort();
    int groups = pm_blend_space_scratch_count(s), joints = pm_blend_space_skeleton(s)->joint_count;
    pm_soa_transform *scratch = pm_pose_alloc(4 * groups, NULL) /* (4 joints per group) */, *out = pm_pose_alloc(joints, NULL);
    if (!scratch || !out) abort();
    pm_blend_space_job job = pm_default_blend_space_job();
    job.space = s, job.params = params, job.scratch = scratch, job.scratch_count = groups;
    job.output = out, job.output_count = pm_soa_count(joints);
    int period = pm_blend_space_period(s, &w);
    for (int k = 0; k <= 8; k++) {
        job.phase = (float)k * 0.25f * (float)(period > 0 && period < 16 ? period : 1) - 0.3f;
        if (pm_blend_space_job_run(&job, &err) != PM_OK) abort();
    }
    pm_pose_free(scratch, NULL);
    pm_pose_free(out, NULL);
    pm_clip baked;
    if (pm_blend_space_bake(&baked, s, params, 30.0f, &err) == PM_OK) pm_clip_destroy(&baked);
    else if (!err.message[0]) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 65536) return 0;
    char *text = (char *)malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    pm_error err;
    pm_schema schema;
    err.message[0] = '\0';
    if (pm_schema_from_json(&schema, text, "fuzz.json", NULL, &err) == PM_OK) use_schema(&schema);
    else if (!err.message[0]) abort();
    if (verbose) fprintf(stderr, "schema: %s\n", err.message[0] ? err.message : "ok");
    pm_blend_space_file file;
    err.message[0] = '\0';
    if (pm_blend_space_from_json(&file, text, "fuzz.json", clip_dir, NULL, &err) == PM_OK) {
        if (verbose) fprintf(stderr, "blend space: ok, %d samples\n", pm_blend_space_sample_count(file.space));
        use_space(file.space);
        pm_blend_space_file_free(&file);
    } else if (!err.message[0]) {
        abort();
    } else if (verbose) {
        fprintf(stderr, "blend space: %s\n", err.message);
    }
    free(text);
    return 0;
}
