/* posematch blend SPACE.json --param X[,Y[,Z]] (-o OUT.bvh | --weights [--json]): evaluate a blend space. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "blend_space_json.h"
#include "cli_common.h"
#include "cli_file.h"
#include "commands.h"

static const char blend_usage[] =
    "usage: posematch blend SPACE.json --param X[,Y[,Z]] [-o OUT.bvh [--fps N]] [--weights [--json]]\n"
    "(at least one of -o and --weights; both together write the file and print the weights)\n"
    "Evaluates a blend space (format: docs/BLEND_SPACE.md) at a parameter point.\n"
    "  --param X[,Y[,Z]] the point (one number per axis); clamped to the axes, projected onto the\n"
    "                    samples' hull when outside it\n"
    "  -o OUT.bvh        writes one time-synchronised cycle of the blended motion (its period of\n"
    "                    several, for samples of several strides; root motion included)\n"
    "                    on the space's skeleton (that of the sample with the smallest\n"
    "                    coordinates: the output does not depend on the order samples are listed);\n"
    "                    a name ending in .pmdb, .json or .f32 is refused\n"
    "  --fps N           frame rate of OUT.bvh, 0.001..10000 (default: the file's \"fps\", else the\n"
    "                    highest rate among the samples blended at the point)\n"
    "  --weights         prints each sample's weight (and gait cycles), the cell used and the\n"
    "                    blend's cycle duration (or its period's cycles)\n"
    "  --json            with --weights: one JSON object {\"weights\": [{\"sample\", \"index\", \"weight\",\n"
    "                    \"cycles\"}], \"cell\": {...}, \"duration\", \"period\", \"cycle_durations\",\n"
    "                    \"baked_cycles\", \"baked_looping\" (what -o and build write), ...}\n"
    "  --unit-scale M    metres per BVH unit when reading the clips (default: the file's\n"
    "                    \"unit_scale\", else detect); outranks the file\n"
    "  --up y|z          the clips' up axis (default: the file's \"up\", else detect); outranks the file\n";

typedef struct blend_args {
    const char *space;
    const char *output;
    float params[PM_BLEND_SPACE_MAX_DIMENSIONS];
    int param_count;
    float fps;
    int weights, json;
    pm_bvh_def bvh;
    int fps_given;
} blend_args;

/* Returns 1, or 0 for a malformed list; a decimal value beyond the float range returns -1 with
 * *bad and *bad_len set to it, so that the message can say what is wrong with it. */
static int parse_params(blend_args *a, const char *text, const char **bad, int *bad_len) {
    const char *p = text;
    a->param_count = 0;
    while (*p) {
        if (a->param_count == PM_BLEND_SPACE_MAX_DIMENSIONS) return 0;
        const char *stop = pm_cli_scan_decimal(p);
        if (!stop) return 0;
        char *end;
        double v = strtod(p, &end);
        if (end != stop) return 0;
        /* Within the float range: converting anything larger is undefined. */
        if (!isfinite(v) || fabs(v) > FLT_MAX) {
            *bad = p;
            *bad_len = (int)(stop - p);
            return -1;
        }
        a->params[a->param_count++] = (float)v;
        p = end;
        if (*p == ',') {
            p++;
            if (!*p) return 0;
        } else if (*p) return 0;
    }
    return a->param_count > 0;
}

static const char *const single_value_options[] = {"--param", "-o", "--fps", NULL};
static const char *const flags[] = {"--weights", "--json", NULL};

/* Returns -1 to go on, else the exit code. */
static int parse_args(blend_args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->bvh = pm_default_bvh_def();
    int have_param = 0;
    pm_cli_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int more = pm_cli_has_value(argc, argv, i), bvh_opt;
        if (!pm_cli_once_listed(&seen, "blend", single_value_options, argc, argv, i)) return 2;
        if (!pm_cli_flag_once(&seen, "blend", flags, s)) return 2;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(blend_usage, stdout);
            return 0;
        } else if (!strcmp(s, "--param") && more) {
            const char *bad = NULL;
            int bad_len = 0, ok = parse_params(a, argv[++i], &bad, &bad_len);
            if (ok < 0) {
                pm_cli_fail("blend: --param value '%.*s' is beyond the single-precision range (magnitude at most %g)",
                            bad_len, bad, (double)FLT_MAX);
                return 2;
            }
            if (!ok) {
                pm_cli_fail("blend: --param '%s' must be one to three decimal numbers separated by commas", argv[i]);
                return 2;
            }
            have_param = 1;
        } else if (!strcmp(s, "-o") && more) a->output = argv[++i];
        else if (!strcmp(s, "--fps") && more) {
            if (!pm_cli_float(&a->fps, "blend", s, argv[++i], PM_BLEND_FPS_MIN, PM_BLEND_FPS_MAX)) return 2;
            a->fps_given = 1;
        } else if (!strcmp(s, "--weights")) a->weights = 1;
        else if (!strcmp(s, "--json")) a->json = 1;
        else if ((bvh_opt = pm_cli_bvh_option(&a->bvh, &seen, "blend", argc, argv, &i)) != 0) {
            if (bvh_opt < 0) return 2;
        } else if (s[0] == '-' && s[1]) {
            pm_cli_fail("blend: unknown or incomplete option '%s' (try posematch blend --help)", s);
            return 2;
        } else if (!a->space) a->space = s;
        else {
            pm_cli_fail("blend: one blend space at a time ('%s' and '%s')", a->space, s);
            return 2;
        }
    }
    if (!a->space) {
        pm_cli_fail("blend: no SPACE.json given (try posematch blend --help)");
        return 2;
    }
    if (!have_param) {
        pm_cli_fail("blend: --param X[,Y[,Z]] is required");
        return 2;
    }
    if (a->json && !a->weights) {
        pm_cli_fail("blend: --json goes with --weights");
        return 2;
    }
    if (!a->output && !a->weights) {
        pm_cli_fail("blend: nothing to do: give -o OUT.bvh and/or --weights");
        return 2;
    }
    /* Caught here, as build does: the file check would name the library function, not -o. */
    if (a->output && !a->output[0]) {
        pm_cli_fail("blend: -o: the output path is empty");
        return 2;
    }
    if (a->fps_given && !a->output) {
        pm_cli_fail("blend: --fps is the rate of -o OUT.bvh; without -o it has no effect");
        return 2;
    }
    return -1;
}

static const char *cell_kind_name(pm_blend_cell_kind k) {
    switch (k) {
    case PM_BLEND_CELL_POINT: return "point";
    case PM_BLEND_CELL_SEGMENT: return "segment";
    case PM_BLEND_CELL_TRIANGLE: return "triangle";
    case PM_BLEND_CELL_HULL_EDGE: return "hull_edge";
    case PM_BLEND_CELL_TETRAHEDRON: return "tetrahedron";
    case PM_BLEND_CELL_HULL_FACE: return "hull_face";
    }
    return "unknown";
}

static float weight_of(const pm_blend_space_weights *w, int sample) {
    for (int i = 0; i < w->count; i++)
        if (w->samples[i] == sample) return w->weights[i];
    return 0.0f;
}

/* Cycle durations shown: the whole period, up to the cycles a loop is baked over. */
static int listed_cycles(int period) { return period > 0 && period < PM_BLEND_SPACE_MAX_PERIOD ? period : PM_BLEND_SPACE_MAX_PERIOD; }

/* 1 after printing an error (out of memory). */
static int print_weights_json(const pm_blend_space *s, const blend_args *a, const pm_blend_space_weights *w) {
    int dims = pm_blend_space_dimensions(s);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "space", pm_blend_space_name(s));
    cJSON *axes = cJSON_CreateArray();
    for (int d = 0; d < dims; d++) cJSON_AddItemToArray(axes, cJSON_CreateString(pm_blend_space_axis_name(s, d)));
    cJSON_AddItemToObject(o, "axes", axes);
    double p[PM_BLEND_SPACE_MAX_DIMENSIONS], u[PM_BLEND_SPACE_MAX_DIMENSIONS];
    for (int d = 0; d < dims; d++) {
        p[d] = pm_cli_round_sig(a->params[d], 7);
        u[d] = pm_cli_round_sig(w->params[d], 7);
    }
    cJSON_AddItemToObject(o, "params", cJSON_CreateDoubleArray(p, dims));
    cJSON_AddItemToObject(o, "used_params", cJSON_CreateDoubleArray(u, dims));
    cJSON_AddBoolToObject(o, "outside", w->outside != 0);
    cJSON *cell = cJSON_CreateObject();
    cJSON_AddStringToObject(cell, "kind", cell_kind_name(w->cell_kind));
    cJSON_AddNumberToObject(cell, "index", w->cell);
    cJSON *cs = cJSON_CreateArray();
    for (int i = 0; i < w->cell_sample_count; i++)
        cJSON_AddItemToArray(cs, cJSON_CreateString(pm_blend_space_sample_name(s, w->cell_samples[i])));
    cJSON_AddItemToObject(cell, "samples", cs);
    cJSON_AddItemToObject(o, "cell", cell);
    cJSON *ws = cJSON_CreateArray();
    for (int i = 0; i < pm_blend_space_sample_count(s); i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "sample", pm_blend_space_sample_name(s, i));
        cJSON_AddNumberToObject(e, "index", i);
        cJSON_AddNumberToObject(e, "weight", pm_cli_round_sig(weight_of(w, i), 7));
        cJSON_AddNumberToObject(e, "cycles", pm_blend_space_sample_cycles(s, i));
        cJSON_AddItemToArray(ws, e);
    }
    cJSON_AddItemToObject(o, "weights", ws);
    cJSON_AddNumberToObject(o, "duration", pm_cli_round_sig(pm_blend_space_duration(s, w), 7));
    cJSON_AddBoolToObject(o, "looping", pm_blend_space_loops(s, w));
    /* Cycles before the blend repeats (0: too many to count) and the durations of the first ones. */
    int period = pm_blend_space_period(s, w);
    cJSON_AddNumberToObject(o, "period", period);
    cJSON *ds = cJSON_CreateArray();
    for (int c = 0; c < listed_cycles(period); c++)
        cJSON_AddItemToArray(ds, cJSON_CreateNumber(pm_cli_round_sig(pm_blend_space_cycle_duration(s, w, c), 7)));
    cJSON_AddItemToObject(o, "cycle_durations", ds);
    /* What -o and build write, which is not the whole loop when its period is too long to bake:
     * without these a blend reported "looping" became a one-shot asset in the database. */
    int baked_looping = 0, baked_cycles = pm_blend_space_bake_cycles(s, w, &baked_looping);
    cJSON_AddNumberToObject(o, "baked_cycles", baked_cycles);
    cJSON_AddBoolToObject(o, "baked_looping", baked_looping);
    int failed = pm_cli_json_puts(o);
    cJSON_Delete(o);
    return failed;
}

static void print_weights_text(const pm_blend_space *s, const blend_args *a, const pm_blend_space_weights *w) {
    int dims = pm_blend_space_dimensions(s);
    int n = pm_blend_space_sample_count(s);
    printf("space '%s' (%dD, %d sample%s) at", pm_blend_space_name(s), dims, n, n == 1 ? "" : "s");
    for (int d = 0; d < dims; d++) printf(" %s=%g", pm_blend_space_axis_name(s, d), (double)a->params[d]);
    if (w->outside) {
        printf(" (outside; used");
        for (int d = 0; d < dims; d++) printf(" %g", pm_cli_round_sig(w->params[d], 7));
        printf(")");
    }
    printf("\ncell: %s %d (", cell_kind_name(w->cell_kind), w->cell);
    for (int i = 0; i < w->cell_sample_count; i++)
        printf("%s%s", i ? ", " : "", pm_blend_space_sample_name(s, w->cell_samples[i]));
    printf(")\n");
    for (int i = 0; i < pm_blend_space_sample_count(s); i++) {
        int k = pm_blend_space_sample_cycles(s, i);
        printf("  %-24s %.6f", pm_blend_space_sample_name(s, i), (double)weight_of(w, i));
        if (k > 1) printf("  (%d gait cycles)", k);
        printf("\n");
    }
    int period = pm_blend_space_period(s, w);
    if (period == 1) {
        /* A blend that does not close (a one-shot sample, or unsynced samples of other lengths)
         * runs from phase 0 to 1 once: a duration, not a cycle's. */
        printf("%s: %.4f s\n", pm_blend_space_loops(s, w) ? "cycle duration" : "duration (once, phase 0 to 1)",
               (double)pm_blend_space_duration(s, w));
    } else {
        if (period > 0) printf("repeats after %d cycles:", period);
        else printf("repeats after too many cycles to count:");
        for (int c = 0; c < listed_cycles(period); c++) printf(" %.4f", (double)pm_blend_space_cycle_duration(s, w, c));
        printf("%s s\n", listed_cycles(period) < period || period == 0 ? " ..." : "");
        int baked_looping = 0, baked_cycles = pm_blend_space_bake_cycles(s, w, &baked_looping);
        if (pm_blend_space_loops(s, w) && !baked_looping)
            printf("baked (-o, build) as %d cycles once, phase 0 to %d: the period is too long to bake\n", baked_cycles,
                   baked_cycles);
    }
}

int pm_cmd_blend(int argc, char **argv) {
    blend_args a;
    int code = parse_args(&a, argc, argv);
    if (code >= 0) return code;
    pm_error e;
    memset(&e, 0, sizeof e);
    /* Before the work, as build does: a missing directory found after the bake wastes it. */
    if (a.output &&
        (pm_file_check_output(a.output, &e) != PM_OK || pm_cli_check_not_input(a.output, &a.space, 1, &e) != PM_OK ||
         pm_cli_check_output_extension(a.output, ".bvh", "a BVH clip", &e) != PM_OK))
        return pm_cli_fail_error(&e);
    pm_blend_space_file file;
    if (pm_blend_space_load_json(&file, a.space, &a.bvh, &e) != PM_OK) return pm_cli_fail_error(&e);
    if (a.output &&
        pm_cli_check_not_input(a.output, (const char *const *)file.clip_paths, file.clip_path_count, &e) != PM_OK) {
        pm_blend_space_file_free(&file);
        return pm_cli_fail_error(&e);
    }
    const pm_blend_space *s = file.space;
    int dims = pm_blend_space_dimensions(s);
    if (a.param_count != dims) {
        pm_blend_space_file_free(&file);
        pm_cli_fail("blend: --param has %d value(s) but '%s' has %d axis/axes", a.param_count, a.space, dims);
        return 2; /* a usage error, as every other --param error, found once the space is read */
    }
    pm_blend_space_weights w;
    if (pm_blend_space_weights_at(&w, s, a.params, &e) != PM_OK) {
        pm_blend_space_file_free(&file);
        return pm_cli_fail_error(&e);
    }
    if (a.output) {
        pm_clip clip;
        float fps = a.fps > 0.0f ? a.fps : file.fps;
        if (pm_blend_space_bake(&clip, s, a.params, fps, &e) != PM_OK ||
            pm_bvh_write_file(&clip, a.output, NULL, &e) != PM_OK) {
            pm_clip_destroy(&clip);
            pm_blend_space_file_free(&file);
            return pm_cli_fail_error(&e);
        }
        if (!a.json)
            /* A loop's duration counts the step from its last frame back to its first, which a BVH
             * file cannot say: `inspect` of the file reports one frame less. */
            printf("wrote %s: %d frames at %.6g fps, %s %.4g s\n", a.output, clip.frame_count, 1.0 / clip.frame_time,
                   clip.looping ? "a loop of" : "lasting", (double)pm_clip_duration(&clip));
        pm_clip_destroy(&clip);
    }
    int rc = 0;
    if (a.weights) {
        if (a.json) rc = print_weights_json(s, &a, &w);
        else print_weights_text(s, &a, &w);
    }
    pm_blend_space_file_free(&file);
    return rc;
}
