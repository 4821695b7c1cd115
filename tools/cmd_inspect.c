/* posematch inspect CLIP.bvh [--json]: what the BVH reader found in a file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_common.h"
#include "commands.h"

static const char inspect_usage[] =
    "usage: posematch inspect CLIP.bvh [--json] [--unit-scale M] [--up y|z]\n"
    "Prints the joints (parent, channels, rotation order), frame count and rate, the detected\n"
    "units and up axis, the joints found for hips, feet, toes, upper legs and head, the root(s),\n"
    "whether frame 0 is a rest-pose lead-in, and the floor and hip heights (metres, Y up).\n"
    "  --json            one JSON object on stdout instead of text\n"
    "  --unit-scale M    metres per file unit instead of detecting it (0.01 for centimetres)\n"
    "  --up y|z          the file's up axis instead of detecting it\n";

typedef struct inspect_args {
    const char *path;
    int json;
    pm_bvh_def def;
} inspect_args;

/* Returns -1 to go on, else the exit code. */
static int parse_args(inspect_args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->def = pm_default_bvh_def();
    static const char *const flags[] = {"--json", NULL};
    pm_cli_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int bvh_opt;
        if (!pm_cli_flag_once(&seen, "inspect", flags, s)) return 2;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(inspect_usage, stdout);
            return 0;
        } else if (!strcmp(s, "--json")) a->json = 1;
        else if ((bvh_opt = pm_cli_bvh_option(&a->def, &seen, "inspect", argc, argv, &i)) != 0) {
            if (bvh_opt < 0) return 2;
        } else if (s[0] == '-' && s[1]) {
            pm_cli_fail("inspect: unknown or incomplete option '%s' (try posematch inspect --help)", s);
            return 2;
        } else if (!a->path) a->path = s;
        else {
            pm_cli_fail("inspect: one clip at a time ('%s' and '%s')", a->path, s);
            return 2;
        }
    }
    if (!a->path) {
        pm_cli_fail("inspect: no BVH file given (try posematch inspect --help)");
        return 2;
    }
    return -1;
}

/* Rotation channels in the order listed ("ZXY"), empty when there are none. */
static void rotation_order(char out[4], const pm_skeleton *s, int j) {
    int n = 0;
    for (int i = 0; i < s->channel_counts[j]; i++) {
        int ch = s->channels[(size_t)j * 6 + i];
        if (ch >= PM_CHANNEL_XROTATION) out[n++] = (char)('X' + ch - PM_CHANNEL_XROTATION);
    }
    out[n] = '\0';
}

static const char *joint_name(const pm_skeleton *s, int j) { return j >= 0 ? s->names[j] : NULL; }

typedef struct clip_facts {
    const pm_clip *clip;
    pm_clip_survey survey;
    double fps, duration, unit_scale;
    const char *units;
    char up;
} clip_facts;

static pm_result compute_facts(clip_facts *f, const pm_clip *clip, pm_error *error) {
    f->clip = clip;
    pm_result r = pm_clip_survey_compute(&f->survey, clip, error);
    if (r != PM_OK) return r;
    f->fps = pm_cli_round_sig(1.0 / clip->frame_time, 6);
    f->duration = pm_cli_round_sig(pm_clip_duration(clip), 6);
    f->units = pm_bvh_unit_name(clip->unit_scale);
    f->unit_scale = pm_cli_round_sig(clip->unit_scale, 6);
    f->up = clip->source_up == PM_UP_Z ? 'Z' : 'Y';
    return PM_OK;
}

/* ---- JSON ---- */

static cJSON *name_or_null(const pm_skeleton *s, int j) {
    return j >= 0 ? cJSON_CreateString(s->names[j]) : cJSON_CreateNull();
}

static cJSON *vec3_json(pm_vec3 v) {
    double d[3] = {pm_cli_round_sig(v.x, 6), pm_cli_round_sig(v.y, 6), pm_cli_round_sig(v.z, 6)};
    return cJSON_CreateDoubleArray(d, 3);
}

/* A left/right pair as a list of the names found (missing sides left out). */
static cJSON *pair_json(const pm_skeleton *s, int left, int right) {
    cJSON *a = cJSON_CreateArray();
    if (left >= 0) cJSON_AddItemToArray(a, cJSON_CreateString(s->names[left]));
    if (right >= 0) cJSON_AddItemToArray(a, cJSON_CreateString(s->names[right]));
    return a;
}

static cJSON *joints_json(const pm_skeleton *s) {
    cJSON *joints = cJSON_CreateArray();
    for (int j = 0; j < s->joint_count; j++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", s->names[j]);
        cJSON_AddItemToObject(o, "parent", name_or_null(s, s->parents[j]));
        cJSON *ch = cJSON_CreateArray();
        for (int i = 0; i < s->channel_counts[j]; i++)
            cJSON_AddItemToArray(ch, cJSON_CreateString(pm_bvh_channel_name(s->channels[(size_t)j * 6 + i])));
        cJSON_AddItemToObject(o, "channels", ch);
        char order[4];
        rotation_order(order, s, j);
        cJSON_AddItemToObject(o, "rotation_order", order[0] ? cJSON_CreateString(order) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "offset", vec3_json(s->rest_translations[j]));
        if (s->has_end_site[j]) cJSON_AddItemToObject(o, "end_site", vec3_json(s->end_sites[j]));
        cJSON_AddItemToArray(joints, o);
    }
    return joints;
}

static cJSON *roles_json(const pm_skeleton *s, const pm_skeleton_roles *r) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "hips", name_or_null(s, r->hips));
    cJSON_AddItemToObject(o, "left_upleg", name_or_null(s, r->left_upleg));
    cJSON_AddItemToObject(o, "right_upleg", name_or_null(s, r->right_upleg));
    cJSON_AddItemToObject(o, "left_foot", name_or_null(s, r->left_foot));
    cJSON_AddItemToObject(o, "right_foot", name_or_null(s, r->right_foot));
    cJSON_AddItemToObject(o, "left_toe", name_or_null(s, r->left_toe));
    cJSON_AddItemToObject(o, "right_toe", name_or_null(s, r->right_toe));
    cJSON_AddItemToObject(o, "head", name_or_null(s, r->head));
    return o;
}

static int print_json(const char *path, const clip_facts *f) {
    const pm_clip *c = f->clip;
    const pm_skeleton *s = &c->skeleton;
    const pm_skeleton_roles *r = &f->survey.roles;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", path);
    cJSON_AddStringToObject(o, "name", c->name ? c->name : "");
    cJSON_AddNumberToObject(o, "frames", c->frame_count);
    cJSON_AddNumberToObject(o, "frame_time", pm_cli_round_sig(c->frame_time, 7));
    cJSON_AddNumberToObject(o, "fps", f->fps);
    cJSON_AddNumberToObject(o, "duration", f->duration);
    cJSON_AddStringToObject(o, "units", f->units);
    cJSON_AddNumberToObject(o, "unit_scale", f->unit_scale);
    char up[2] = {f->up, '\0'};
    cJSON_AddStringToObject(o, "up_axis", up);
    cJSON *roots = cJSON_CreateArray();
    int first_root = -1;
    for (int j = 0; j < s->joint_count; j++)
        if (s->parents[j] < 0) {
            if (first_root < 0) first_root = j;
            cJSON_AddItemToArray(roots, cJSON_CreateString(s->names[j]));
        }
    cJSON_AddItemToObject(o, "root", name_or_null(s, first_root));
    cJSON_AddItemToObject(o, "roots", roots);
    cJSON_AddItemToObject(o, "hips", name_or_null(s, r->hips));
    cJSON_AddItemToObject(o, "feet", pair_json(s, r->left_foot, r->right_foot));
    cJSON_AddItemToObject(o, "toes", pair_json(s, r->left_toe, r->right_toe));
    cJSON_AddItemToObject(o, "upper_legs", pair_json(s, r->left_upleg, r->right_upleg));
    cJSON_AddItemToObject(o, "head", name_or_null(s, r->head));
    cJSON_AddItemToObject(o, "roles", roles_json(s, r));
    cJSON_AddBoolToObject(o, "first_frame_is_rest", f->survey.first_frame_is_rest);
    cJSON_AddNumberToObject(o, "floor_height", pm_cli_round_sig(f->survey.floor_height, 5));
    cJSON_AddNumberToObject(o, "hip_height", pm_cli_round_sig(f->survey.hip_height, 5));
    cJSON_AddNumberToObject(o, "joint_count", s->joint_count);
    cJSON_AddItemToObject(o, "joints", joints_json(s));
    int failed = pm_cli_json_puts(o);
    cJSON_Delete(o);
    return failed;
}

/* ---- text ---- */

static void print_pair(const char *label, const pm_skeleton *s, int left, int right) {
    const char *l = joint_name(s, left), *r = joint_name(s, right);
    printf("  %-11s %s / %s\n", label, l ? l : "-", r ? r : "-");
}

static int print_text(const char *path, const clip_facts *f) {
    const pm_clip *c = f->clip;
    const pm_skeleton *s = &c->skeleton;
    const pm_skeleton_roles *r = &f->survey.roles;
    printf("%s\n", path);
    printf("  frames      %d at %g s (%g fps), %g s\n", c->frame_count, pm_cli_round_sig(c->frame_time, 7), f->fps, f->duration);
    printf("  units       %s (%g m per unit)\n", f->units, f->unit_scale);
    printf("  up axis     %c (converted to Y up, metres)\n", f->up);
    printf("  roots      ");
    for (int j = 0; j < s->joint_count; j++)
        if (s->parents[j] < 0) printf(" %s", s->names[j]);
    printf("\n  hips        %s\n", r->hips >= 0 ? s->names[r->hips] : "-");
    print_pair("upper legs", s, r->left_upleg, r->right_upleg);
    print_pair("feet", s, r->left_foot, r->right_foot);
    print_pair("toes", s, r->left_toe, r->right_toe);
    printf("  head        %s\n", r->head >= 0 ? s->names[r->head] : "-");
    printf("  frame 0     %s\n", f->survey.first_frame_is_rest ? "rest/T-pose lead-in" : "part of the motion");
    printf("  floor       %.3f m\n", f->survey.floor_height);
    printf("  hip height  %.3f m above the lowest foot\n", f->survey.hip_height);
    printf("  joints      %d\n", s->joint_count);
    for (int j = 0; j < s->joint_count; j++) {
        char order[4];
        rotation_order(order, s, j);
        const char *parent = joint_name(s, s->parents[j]);
        printf("    %3d %-24s parent %-20s %-4s", j, s->names[j], parent ? parent : "-", order[0] ? order : "-");
        for (int i = 0; i < s->channel_counts[j]; i++) printf(" %s", pm_bvh_channel_name(s->channels[(size_t)j * 6 + i]));
        printf("%s\n", s->has_end_site[j] ? "  (End Site)" : "");
    }
    return 0;
}

int pm_cmd_inspect(int argc, char **argv) {
    inspect_args a;
    int code = parse_args(&a, argc, argv);
    if (code >= 0) return code;
    pm_clip clip;
    pm_error err = {PM_OK, {0}};
    if (pm_bvh_read_file(&clip, a.path, &a.def, &err) != PM_OK) return pm_cli_fail_error(&err);
    clip_facts facts;
    if (compute_facts(&facts, &clip, &err) != PM_OK) {
        code = pm_cli_fail_error(&err);
        pm_clip_destroy(&clip);
        return code;
    }
    code = a.json ? print_json(a.path, &facts) : print_text(a.path, &facts);
    pm_clip_destroy(&clip);
    return code; /* (main checks that stdout took it all) */
}
