/* posematch search: query a database with raw feature rows or with a frame of a clip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_common.h"
#include "cli_file.h"
#include "commands.h"

static const char search_usage[] =
    "usage: posematch search DB.pmdb (--queries Q.f32 | --query-clip C.bvh --frame F) [options]\n"
    "Finds the best pose for each query. Q.f32 holds raw (unnormalised) float32 rows of the\n"
    "database's cardinality; --query-clip takes the features of frame F (a frame of the clip\n"
    "as stored in the file) with the database's schema and settings.\n"
    "  --mode M              exact (default), bruteforce, pcakdtree, vptree (of those the database\n"
    "                        was built for: info lists them)\n"
    "  --continuing P        the pose being played (0..poses-1) competes with its cost +\n"
    "                        --continuing-addend, even a block-transition pose; default none\n"
    "  --continuing-addend A added to the continuing pose's cost (negative = stay), -1e6..1e6; 0\n"
    "  --loop                read the --query-clip as looping (as `build --loop` built it)\n"
    "  --unit-scale M        metres per file unit of the --query-clip, as the database was built\n"
    "                        (default: detected)\n"
    "  --up y|z              up axis of the --query-clip (default: detected)\n"
    "                        (a clip whose hips then stand outside 0.3..3 m above its feet is searched\n"
    "                        with a warning: no person's do)\n"
    "  --weights W.f32       dynamic weights (cardinality float32 values, each 0..1e12) for every\n"
    "                        query; default none (the schema's weights)\n"
    "  --neighbors K         pcakdtree neighbours, 1..1000000; 200\n"
    "  --max-nodes N         exact mode: stop after N tree nodes once something is found, with\n"
    "                        the best so far (\"proven\": false when the walk was cut short),\n"
    "                        1..100000000; default none (always the optimum)\n"
    "  --json                JSON on stdout: {\"results\": [{query, found, pose, asset, time, cost, ...}]};\n"
    "                        without a result found is false, pose -1 and asset, time and cost null\n";

typedef struct search_args {
    const char *db, *queries, *clip, *weights;
    long frame;
    int json, loop;
    pm_search_def def;
    pm_bvh_def bvh;
} search_args;

static int parse_args(search_args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->frame = -1;
    a->def = pm_default_search_def();
    a->bvh = pm_default_bvh_def();
    static const char *const single_value_options[] = {"--queries", "--query-clip", "--weights", "--frame", "--mode",
                                                       "--continuing", "--continuing-addend", "--neighbors", "--max-nodes", NULL};
    static const char *const flags[] = {"--json", "--loop", NULL};
    pm_cli_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int more = pm_cli_has_value(argc, argv, i);
        double v;
        if (!pm_cli_once_listed(&seen, "search", single_value_options, argc, argv, i)) return 2;
        if (!pm_cli_flag_once(&seen, "search", flags, s)) return 2;
        int bvh_option = pm_cli_bvh_option(&a->bvh, &seen, "search", argc, argv, &i);
        if (bvh_option < 0) return 2;
        if (bvh_option) continue;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(search_usage, stdout);
            return 0;
        } else if (!strcmp(s, "--json")) a->json = 1;
        else if (!strcmp(s, "--loop")) a->loop = 1;
        else if (!strcmp(s, "--queries") && more) a->queries = argv[++i];
        else if (!strcmp(s, "--query-clip") && more) a->clip = argv[++i];
        else if (!strcmp(s, "--weights") && more) a->weights = argv[++i];
        else if (!strcmp(s, "--frame") && more) {
            if (!pm_cli_number(&v, "search", s, argv[++i], 0, 1e9, 1)) return 2;
            a->frame = (long)v;
        } else if (!strcmp(s, "--mode") && more) {
            int m = pm_search_mode_from_name(argv[++i]);
            if (m < 0) return pm_cli_fail("search: --mode '%s' is not exact, bruteforce, pcakdtree or vptree", argv[i]) + 1;
            a->def.mode = (pm_search_mode)m;
        } else if (!strcmp(s, "--continuing") && more) {
            if (!pm_cli_int(&a->def.continuing_pose, "search", s, argv[++i], 0, 2147483647.0)) return 2;
        } else if (!strcmp(s, "--continuing-addend") && more) {
            if (!pm_cli_float(&a->def.continuing_cost_addend, "search", s, argv[++i], -1e6, 1e6)) return 2;
        } else if (!strcmp(s, "--neighbors") && more) {
            if (!pm_cli_int(&a->def.kdtree_neighbors, "search", s, argv[++i], 1, 1e6)) return 2;
        } else if (!strcmp(s, "--max-nodes") && more) {
            if (!pm_cli_int(&a->def.max_nodes, "search", s, argv[++i], 1, 1e8)) return 2;
        } else if (s[0] == '-' && s[1])
            return pm_cli_fail("search: unknown or incomplete option '%s' (try posematch search --help)", s) + 1;
        else if (!a->db) a->db = s;
        else return pm_cli_fail("search: one database at a time ('%s' and '%s')", a->db, s) + 1;
    }
    if (!a->db) return pm_cli_fail("search: no database given") + 1;
    if (!!a->queries == !!a->clip) return pm_cli_fail("search: give either --queries Q.f32 or --query-clip C.bvh --frame F") + 1;
    if (a->queries && a->frame >= 0) return pm_cli_fail("search: --frame goes with --query-clip, not with --queries") + 1;
    if (a->clip && a->frame < 0) return pm_cli_fail("search: --query-clip needs --frame F") + 1;
    if (a->loop && !a->clip) return pm_cli_fail("search: --loop reads a --query-clip") + 1;
    /* An option that cannot act is a mistaken command line, not one to run quietly. */
    if (pm_cli_seen_has(&seen, "--continuing-addend") && a->def.continuing_pose < 0)
        return pm_cli_fail("search: --continuing-addend applies to the --continuing pose; none given") + 1;
    if (pm_cli_seen_has(&seen, "--neighbors") && a->def.mode != PM_SEARCH_PCAKDTREE)
        return pm_cli_fail("search: --neighbors applies to --mode pcakdtree, not %s", pm_search_mode_name(a->def.mode)) + 1;
    if (pm_cli_seen_has(&seen, "--max-nodes") && a->def.mode != PM_SEARCH_EXACT)
        return pm_cli_fail("search: --max-nodes applies to --mode exact, not %s", pm_search_mode_name(a->def.mode)) + 1;
    if (pm_cli_bvh_forced(&a->bvh) && !a->clip)
        return pm_cli_fail("search: --unit-scale and --up read a --query-clip") + 1;
    return -1;
}

/* A float32 file of whole rows (`what` names it in messages: "query", "weights"): returns the
 * row count, or -1 after printing an error. */
static long read_rows(float **out, const char *path, const char *what, int card) {
    pm_error err;
    size_t size;
    char *data = pm_cli_read_text(path, &size, &err);
    if (!data) return pm_cli_fail_error(&err), -1;
    size_t row = (size_t)card * sizeof(float);
    if (size == 0 || size % row) {
        free(data);
        if (size == 0) pm_cli_fail("%s: the %s file is empty (expected rows of %d float32 values)", path, what, card);
        else pm_cli_fail("%s: %zu bytes is not a whole number of rows of %d float32 values", path, size, card);
        return -1;
    }
    *out = (float *)data; /* malloc'd, suitably aligned for float */
    return (long)(size / row);
}

/* A number of a result, or null when there is no result. */
static void add_measure(cJSON *o, const char *key, int found, float v) {
    if (found) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

/* The --query-clip frame's feature row, prepared as the database prepared its clips (rows: one
 * malloc'd row). 1, or 0 after printing an error. */
static int clip_query(float **rows, const pm_database *db, const search_args *a, int card) {
    pm_error err;
    pm_clip clip;
    if (pm_bvh_read_file(&clip, a->clip, &a->bvh, &err) != PM_OK) return pm_cli_fail_error(&err), 0;
    if (a->loop) clip.looping = 1;
    pm_cli_warn_clip_scale(&clip, "search", a->clip);
    float *all = NULL;
    int n = 0, row = -1;
    float lead_in = 0.0f;
    /* --frame counts the file's frames: the library maps it past a rest-pose lead-in the
     * database drops and onto its own rate; the CLI words the two refusals in its terms. */
    pm_result r = pm_database_clip_lead_in(&lead_in, db, &clip, &err);
    if (r == PM_OK && a->frame >= clip.frame_count)
        pm_cli_fail("%s: --frame %ld is past the clip's last frame %d", a->clip, a->frame, clip.frame_count - 1);
    else if (r == PM_OK && a->frame == 0 && lead_in > 0.0f)
        pm_cli_fail("%s: --frame 0 is a rest-pose lead-in frame the database drops (build --keep-rest-frame keeps "
                    "it); the motion starts at frame 1",
                    a->clip);
    else {
        if (r == PM_OK) r = pm_database_clip_frame_row(&row, db, &clip, (int)a->frame, &err);
        if (r == PM_OK) r = pm_database_clip_queries(&all, &n, db, &clip, &err);
        /* (The library names the clip by its name: the message names the file.) */
        if (r != PM_OK) pm_cli_fail("%s: %s", a->clip, err.message);
    }
    pm_clip_destroy(&clip);
    if (!all) return 0;
    *rows = malloc((size_t)card * sizeof(float));
    if (*rows) memcpy(*rows, all + (size_t)row * card, (size_t)card * sizeof(float));
    pm_free_buffer(all, NULL);
    if (!*rows) return pm_cli_fail("search: out of memory"), 0;
    return 1;
}

/* --weights: one row of dynamic weights, each checked here so that the message names this file,
 * not the query the search fails on. 1, or 0 after printing an error. */
static int read_weights(float **weights, const pm_database *db, const char *path, int card) {
    pm_error err;
    long wn = read_rows(weights, path, "weights", card);
    if (wn < 0) return 0;
    if (wn != 1)
        return pm_cli_fail("%s (--weights): dynamic weights must be one row of %d float32 values", path, card), 0;
    for (int d = 0; d < card; d++)
        if (!((*weights)[d] >= 0.0f && (*weights)[d] <= PM_SEARCH_MAX_DYNAMIC_WEIGHT)) {
            char name[128];
            if (pm_database_channel_name(name, sizeof name, db, pm_database_dim_channel(db, d), &err) != PM_OK)
                return pm_cli_fail_error(&err), 0;
            return pm_cli_fail("%s (--weights): dimension %d (channel %s): weight %g is outside 0..%g", path, d, name,
                               (double)(*weights)[d], (double)PM_SEARCH_MAX_DYNAMIC_WEIGHT),
                   0;
        }
    return 1;
}

/* Every query checked as pm_search checks it before any result is printed: a bad row in the
 * middle of a file fails the command without half of its output. 1, or 0 after printing. */
static int check_queries(const float *rows, long count, const pm_database *db, const search_args *a, int card) {
    const float *offset = pm_database_offsets(db), *scale = pm_database_scales(db);
    for (long q = 0; q < count; q++)
        for (int d = 0; d < card; d++) {
            float v = rows[(size_t)q * card + d], n = (v - offset[d]) / scale[d];
            if (isfinite(v) && fabsf(n) <= PM_SEARCH_MAX_DEVIATION) continue;
            if (a->queries)
                pm_cli_fail("%s: query %ld value %d (%g) is %s", a->queries, q, d, (double)v,
                            isfinite(v) ? "far beyond the database's values (check units and layout)" : "not finite");
            else
                pm_cli_fail("%s: frame %ld: feature %d (%g) is %s", a->clip, a->frame, d, (double)v,
                            isfinite(v) ? "far beyond the database's values (check the clip's units)" : "not finite");
            return 0;
        }
    return 1;
}

/* One query's JSON object. Without a result the pose fields are -1 and the measures null: a cost
 * of 0 would read as a perfect match. */
static cJSON *json_result(long q, const pm_search_result *res, const pm_asset_info *asset, double fps,
                          const pm_schema *schema, const float *breakdown, pm_cli_channel_key *keys) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "query", (double)q);
    cJSON_AddBoolToObject(o, "found", res->found);
    cJSON_AddNumberToObject(o, "pose", res->found ? res->pose : -1);
    if (res->found) cJSON_AddStringToObject(o, "asset", asset->name);
    else cJSON_AddNullToObject(o, "asset");
    cJSON_AddNumberToObject(o, "asset_index", res->found ? res->asset : -1);
    cJSON_AddNumberToObject(o, "frame", res->found ? res->frame : -1);
    /* frame / fps in double, with the rate as info prints it: the float the library keeps
     * (37.200000762939453 for frame 1116 at 30 fps) is off the asset's time by a few 1e-6 s
     * in long assets, where a reader computes frame / fps exactly. */
    if (res->found) cJSON_AddNumberToObject(o, "time", (double)res->frame / fps);
    else cJSON_AddNullToObject(o, "time");
    add_measure(o, "cost", res->found, res->cost);
    add_measure(o, "dissimilarity", res->found, res->dissimilarity);
    add_measure(o, "cost_addend", res->found, res->cost_addend);
    cJSON_AddBoolToObject(o, "continuing", res->continuing);
    cJSON_AddBoolToObject(o, "proven", res->proven);
    if (!res->found) cJSON_AddNullToObject(o, "breakdown");
    else {
        cJSON *bd = cJSON_AddObjectToObject(o, "breakdown");
        for (int c = 0; c < schema->channel_count; c++)
            if (schema->channels[c].kind != PM_FEATURE_GROUP) cJSON_AddNumberToObject(bd, keys[c], breakdown[c]);
    }
    return o;
}

/* One query's lines of text. 1, or 0 after printing an error. */
static int print_result(long q, const pm_search_result *res, const pm_asset_info *asset, const pm_database *db,
                        const float *breakdown, pm_search_mode mode) {
    if (!res->found) {
        printf("query %ld: no pose found (no cost: every pose is excluded from search or costs infinity)\n", q);
        return 1;
    }
    const pm_schema *schema = pm_database_schema(db);
    printf("query %ld: pose %d  %s @ %.3f s (frame %d)  cost %.6g%s%s\n", q, res->pose, asset->name, (double)res->time,
           res->frame, (double)res->cost, res->continuing ? "  (continuing)" : "",
           res->proven || mode == PM_SEARCH_PCAKDTREE ? "" : "  (best after --max-nodes, not proven)");
    printf("   ");
    for (int c = 0; c < schema->channel_count; c++) {
        if (schema->channels[c].kind == PM_FEATURE_GROUP) continue;
        char name[128];
        pm_error err;
        if (pm_database_channel_name(name, sizeof name, db, c, &err) != PM_OK) {
            printf("\n");
            return pm_cli_fail_error(&err), 0;
        }
        printf(" %s=%.4g", name, (double)breakdown[c]);
    }
    if (res->cost_addend != 0.0f) printf(" addend=%.4g", (double)res->cost_addend);
    printf("\n");
    return 1;
}

int pm_cmd_search(int argc, char **argv) {
    search_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc >= 0) return rc;
    pm_error err;
    pm_database *db = NULL;
    float *rows = NULL, *weights = NULL, *breakdown = NULL;
    pm_cli_channel_key *keys = NULL;
    void *scratch = NULL;
    cJSON *root = NULL;
    long count = 0;
    rc = 1;
    if (pm_database_load(&db, a.db, NULL, &err) != PM_OK) {
        pm_cli_fail_error(&err);
        goto done;
    }
    pm_database_info info;
    pm_database_get_info(&info, db);
    const int card = info.cardinality;
    const double fps = pm_cli_round_sig(info.fps, 7); /* as info and export-features print it */
    /* Checked here so that the message names the option, not the first query it would fail. */
    if (a.def.continuing_pose >= info.poses) {
        pm_cli_fail("search: --continuing %d is not a pose of %s (0..%d)", a.def.continuing_pose, a.db, info.poses - 1);
        goto done;
    }
    if (!(info.search_modes & PM_SEARCH_MODE_BIT(a.def.mode))) {
        pm_cli_fail("search: %s was built without the %s mode (build --modes left its structure out); --mode %s", a.db,
                    pm_search_mode_name(a.def.mode), pm_cli_mode_list(info.search_modes, " or ").text);
        goto done;
    }
    if (a.queries) {
        if ((count = read_rows(&rows, a.queries, "query", card)) < 0) goto done;
    } else {
        if (!clip_query(&rows, db, &a, card)) goto done;
        count = 1;
    }
    if (a.weights) {
        if (!read_weights(&weights, db, a.weights, card)) goto done;
        a.def.dynamic_weights = weights;
    }
    const pm_schema *schema = pm_database_schema(db);
    breakdown = malloc((size_t)schema->channel_count * sizeof(float));
    size_t ss = pm_search_scratch_size(db, &a.def);
    scratch = aligned_alloc(64, (ss + 63) / 64 * 64);
    if (!breakdown || !scratch) {
        pm_cli_fail("search: out of memory");
        goto done;
    }
    a.def.out_breakdown = breakdown;
    /* The breakdown's keys, once for every query. */
    if (a.json && !(keys = pm_cli_channel_keys(db, &err))) {
        pm_cli_fail_error(&err);
        goto done;
    }
    if (!check_queries(rows, count, db, &a, card)) goto done;
    root = a.json ? cJSON_CreateObject() : NULL;
    cJSON *results = root ? cJSON_AddArrayToObject(root, "results") : NULL;
    if (root) cJSON_AddStringToObject(root, "mode", pm_search_mode_name(a.def.mode));
    for (long q = 0; q < count; q++) {
        pm_search_result res;
        if (pm_search(&res, db, rows + (size_t)q * card, &a.def, scratch, ss, &err) != PM_OK) {
            if (a.queries) pm_cli_fail("%s: query %ld: %s", a.queries, q, err.message);
            else pm_cli_fail_error(&err);
            goto done;
        }
        pm_asset_info asset;
        memset(&asset, 0, sizeof asset);
        if (res.found && pm_database_asset(&asset, db, res.asset, &err) != PM_OK) {
            pm_cli_fail_error(&err);
            goto done;
        }
        if (root) cJSON_AddItemToArray(results, json_result(q, &res, &asset, fps, schema, breakdown, keys));
        else if (!print_result(q, &res, &asset, db, breakdown, a.def.mode)) goto done;
    }
    if (root && pm_cli_json_puts(root)) goto done;
    rc = 0;
done:
    cJSON_Delete(root);
    free(rows);
    free(weights);
    free(breakdown);
    free(keys);
    free(scratch);
    pm_database_destroy(db);
    return rc;
}
