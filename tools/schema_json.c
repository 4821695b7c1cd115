#include "schema_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_common.h"
#include "cli_file.h"

static const char *const kind_names[] = {"trajectory", "position", "velocity", "heading",
                                         "phase",      "curve",    "padding",  "group"};
static const char *const flag_names[] = {"Velocity",   "Position",   "VelocityDirection",   "FacingDirection",
                                         "VelocityXY", "PositionXY", "VelocityDirectionXY", "FacingDirectionXY"};

const char *pm_schema_json_kind_name(pm_feature_kind kind) {
    return (unsigned)kind < sizeof kind_names / sizeof kind_names[0] ? kind_names[kind] : "?";
}

typedef struct parser {
    pm_schema *schema;
    const char *source;
    pm_error *error;
    pm_schema_origin *origin;
} parser;

static pm_result bad(parser *p, const char *path, const char *what) {
    return pm_cli_set_error(p->error, PM_ERR_PARSE, "%s: %s: %s", p->source, path, what);
}

static pm_result get_number(parser *p, const cJSON *obj, const char *key, const char *path, float *out, float lo, float hi) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return PM_OK;
    char where[256];
    snprintf(where, sizeof where, "%s.%s", path, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return bad(p, where, "expected a number");
    if (v->valuedouble < lo || v->valuedouble > hi) {
        char msg[96];
        snprintf(msg, sizeof msg, "%g is outside %g..%g", v->valuedouble, (double)lo, (double)hi);
        return bad(p, where, msg);
    }
    *out = (float)v->valuedouble;
    return PM_OK;
}

static pm_result get_string(parser *p, const cJSON *obj, const char *key, const char *path, char *out, size_t size) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return PM_OK;
    char where[256];
    snprintf(where, sizeof where, "%s.%s", path, key);
    if (!cJSON_IsString(v)) return bad(p, where, "expected a string");
    if (strlen(v->valuestring) >= size) return bad(p, where, "too long");
    if (pm_cli_control_char(v->valuestring) >= 0) return bad(p, where, "has a control character");
    snprintf(out, size, "%s", v->valuestring);
    return PM_OK;
}

static const char *const channel_keys[] = {"kind",       "name", "weight", "group", "bone",    "offset",
                                           "components", "axis", "curve",  "size",  "samples", "channels", NULL};
static const char *const sample_keys[] = {"offset", "weight", "flags", NULL};
static const char *const top_keys[] = {"name", "channels", NULL};

/* A misspelt field would otherwise be ignored silently and its default used. */
static pm_result check_keys(parser *p, const cJSON *obj, const char *path, const char *const *keys) {
    for (const cJSON *k = obj->child; k; k = k->next) {
        for (const cJSON *e = obj->child; e != k; e = e->next)
            if (!strcmp(e->string, k->string)) {
                char where[340];
                snprintf(where, sizeof where, "%s.%s", path, k->string);
                return bad(p, where, "appears twice");
            }
        int ok = 0;
        for (int i = 0; keys[i]; i++) ok |= !strcmp(k->string, keys[i]);
        if (!ok) {
            char where[340];
            snprintf(where, sizeof where, "%s.%s", path, k->string);
            return bad(p, where, "unknown field");
        }
    }
    return PM_OK;
}

static pm_result parse_channel(parser *p, const cJSON *c, const char *path, int parent);

static pm_result parse_channels(parser *p, const cJSON *arr, const char *path, int parent) {
    if (!cJSON_IsArray(arr)) return bad(p, path, "expected an array of channels");
    int i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, arr) {
        char where[256];
        snprintf(where, sizeof where, "%s[%d]", path, i++);
        pm_result r = parse_channel(p, c, where, parent);
        if (r != PM_OK) return r;
    }
    return PM_OK;
}

/* Whether a channel of this kind reads the field (kind, name, weight and group: every kind). */
static int key_applies(pm_feature_kind kind, const char *key) {
    const int bone = kind == PM_FEATURE_POSITION || kind == PM_FEATURE_VELOCITY || kind == PM_FEATURE_HEADING ||
                     kind == PM_FEATURE_PHASE;
    if (!strcmp(key, "bone")) return bone;
    if (!strcmp(key, "offset")) return bone || kind == PM_FEATURE_CURVE;
    if (!strcmp(key, "components")) return bone && kind != PM_FEATURE_PHASE;
    if (!strcmp(key, "axis")) return kind == PM_FEATURE_HEADING;
    if (!strcmp(key, "curve")) return kind == PM_FEATURE_CURVE;
    if (!strcmp(key, "size")) return kind == PM_FEATURE_PADDING;
    if (!strcmp(key, "samples")) return kind == PM_FEATURE_TRAJECTORY;
    if (!strcmp(key, "channels")) return kind == PM_FEATURE_GROUP;
    return 1;
}

static pm_result parse_channel(parser *p, const cJSON *c, const char *path, int parent) {
    if (!cJSON_IsObject(c)) return bad(p, path, "expected an object");
    pm_result r = check_keys(p, c, path, channel_keys);
    if (r != PM_OK) return r;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(c, "kind");
    char where[300];
    snprintf(where, sizeof where, "%s.kind", path);
    if (!cJSON_IsString(kind)) return bad(p, where, "missing or not a string");
    int k = -1;
    for (int i = 0; i < 8; i++)
        if (!strcmp(kind->valuestring, kind_names[i])) k = i;
    if (k < 0) {
        char what[200];
        snprintf(what, sizeof what, "unknown kind '%.40s' (trajectory, position, velocity, heading, phase, curve, padding, group)",
                 kind->valuestring);
        return bad(p, where, what);
    }
    /* A field the kind does not read is a mistake (a "size" on a position, say), not ignored. */
    const cJSON *field;
    cJSON_ArrayForEach(field, c) {
        if (!key_applies((pm_feature_kind)k, field->string)) {
            char what[160];
            snprintf(where, sizeof where, "%s.%s", path, field->string);
            snprintf(what, sizeof what, "a %s channel has no \"%s\" field", kind_names[k], field->string);
            return bad(p, where, what);
        }
    }
    pm_channel_def ch = pm_default_channel_def((pm_feature_kind)k);
    ch.parent = parent;
    if ((r = get_string(p, c, "name", path, ch.name, sizeof ch.name)) != PM_OK) return r;
    if ((r = get_string(p, c, "group", path, ch.group, sizeof ch.group)) != PM_OK) return r;
    if ((r = get_string(p, c, "bone", path, ch.bone, sizeof ch.bone)) != PM_OK) return r;
    if ((r = get_string(p, c, "curve", path, ch.curve, sizeof ch.curve)) != PM_OK) return r;
    if ((r = get_number(p, c, "weight", path, &ch.weight, 0.0f, 1e6f)) != PM_OK) return r;
    /* Padding values always weigh 0 (the layout ignores the field): any other weight would be
     * silently dropped. 0 stays accepted, as pm_schema_to_json writes it. */
    if (k == PM_FEATURE_PADDING && ch.weight != 0.0f) {
        snprintf(where, sizeof where, "%s.weight", path);
        return bad(p, where, "a padding channel always weighs 0");
    }
    if ((r = get_number(p, c, "offset", path, &ch.offset, -60.0f, 60.0f)) != PM_OK) return r;
    float size = (float)ch.size;
    if ((r = get_number(p, c, "size", path, &size, 1.0f, 64.0f)) != PM_OK) return r;
    if (size != floorf(size)) {
        snprintf(where, sizeof where, "%s.size", path);
        return bad(p, where, "must be a whole number");
    }
    ch.size = (int)size;
    char comp[8] = "";
    if ((r = get_string(p, c, "components", path, comp, sizeof comp)) != PM_OK) return r;
    if (comp[0]) {
        snprintf(where, sizeof where, "%s.components", path);
        if (!strcmp(comp, "xyz")) ch.components = PM_COMPONENTS_XYZ;
        else if (!strcmp(comp, "xy")) ch.components = PM_COMPONENTS_XY;
        else return bad(p, where, "must be \"xyz\" or \"xy\"");
    }
    char axis[8] = "";
    if ((r = get_string(p, c, "axis", path, axis, sizeof axis)) != PM_OK) return r;
    if (axis[0]) {
        snprintf(where, sizeof where, "%s.axis", path);
        if (axis[1] || axis[0] < 'x' || axis[0] > 'z') return bad(p, where, "must be \"x\", \"y\" or \"z\"");
        ch.axis = axis[0] - 'x';
    }
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(c, "samples");
    if (samples) {
        snprintf(where, sizeof where, "%s.samples", path);
        if (k != PM_FEATURE_TRAJECTORY) return bad(p, where, "only trajectory channels have samples");
        if (!cJSON_IsArray(samples)) return bad(p, where, "expected an array");
        const cJSON *s;
        cJSON_ArrayForEach(s, samples) {
            char sw[320];
            snprintf(sw, sizeof sw, "%s[%d]", where, ch.sample_count);
            if (ch.sample_count >= PM_MAX_TRAJECTORY_SAMPLES) return bad(p, sw, "too many samples (16 at most)");
            if (!cJSON_IsObject(s)) return bad(p, sw, "expected an object");
            if ((r = check_keys(p, s, sw, sample_keys)) != PM_OK) return r;
            pm_trajectory_sample *t = &ch.samples[ch.sample_count];
            t->weight = 1.0f;
            t->offset = 0.0f;
            if ((r = get_number(p, s, "offset", sw, &t->offset, -60.0f, 60.0f)) != PM_OK) return r;
            if ((r = get_number(p, s, "weight", sw, &t->weight, 0.0f, 1e6f)) != PM_OK) return r;
            const cJSON *flags = cJSON_GetObjectItemCaseSensitive(s, "flags");
            char fw[340];
            snprintf(fw, sizeof fw, "%s.flags", sw);
            if (!cJSON_IsArray(flags) || cJSON_GetArraySize(flags) == 0) return bad(p, fw, "expected a non-empty array of flag names");
            const cJSON *f;
            cJSON_ArrayForEach(f, flags) {
                int bit = -1;
                if (cJSON_IsString(f))
                    for (int b = 0; b < 8; b++)
                        if (!strcmp(f->valuestring, flag_names[b])) bit = b;
                if (bit < 0) {
                    char what[200];
                    snprintf(what, sizeof what,
                             "unknown flag '%.40s' (Velocity, Position, VelocityDirection, FacingDirection and their XY variants)",
                             cJSON_IsString(f) ? f->valuestring : "(not a string)");
                    return bad(p, fw, what);
                }
                /* Listed twice is most likely a typo for another flag (Position for PositionXY). */
                if (t->flags & (1u << bit)) {
                    char what[120];
                    snprintf(what, sizeof what, "flag '%s' is listed twice", flag_names[bit]);
                    return bad(p, fw, what);
                }
                t->flags |= 1u << bit;
            }
            ch.sample_count++;
        }
    }
    int index = pm_schema_add(p->schema, &ch, p->error);
    if (index < 0) {
        if (p->error) {
            char msg[PM_ERROR_MESSAGE_SIZE];
            snprintf(msg, sizeof msg, "%s", p->error->message);
            pm_cli_set_error(p->error, p->error->code, "%s: %s: %s", p->source, path, msg);
        }
        return p->error ? p->error->code : PM_ERR_INVALID_ARGUMENT;
    }
    if (p->origin) snprintf(p->origin->paths[index], sizeof p->origin->paths[index], "%s", path);
    const cJSON *kids = cJSON_GetObjectItemCaseSensitive(c, "channels");
    if (kids) {
        snprintf(where, sizeof where, "%s.channels", path);
        if (k != PM_FEATURE_GROUP) return bad(p, where, "only group channels have channels");
        return parse_channels(p, kids, where, index);
    }
    return PM_OK;
}

/* Whether some value of a valid schema weighs more than 0, as the database's layout weighs it:
 * the channel's weight times its enclosing groups', times a trajectory sample's (padding: 0). */
static int any_weighted(const pm_schema *s) {
    for (int i = 0; i < s->channel_count; i++) {
        const pm_channel_def *c = &s->channels[i];
        if (c->kind == PM_FEATURE_GROUP || c->kind == PM_FEATURE_PADDING || pm_channel_size(c) <= 0) continue;
        float w = c->weight;
        for (int g = c->parent; g >= 0; g = s->channels[g].parent) w *= s->channels[g].weight;
        if (c->kind != PM_FEATURE_TRAJECTORY) {
            if (w > 0.0f) return 1;
            continue;
        }
        for (int k = 0; k < c->sample_count; k++)
            if (c->samples[k].flags && w * c->samples[k].weight > 0.0f) return 1;
    }
    return 0;
}

pm_result pm_schema_from_json(pm_schema *out, const char *text, const char *source, pm_schema_origin *origin,
                              pm_error *error) {
    parser p = {out, source ? source : "schema", error, origin};
    if (origin) {
        memset(origin, 0, sizeof *origin);
        origin->from_file = 1;
        snprintf(origin->source, sizeof origin->source, "%s", p.source);
    }
    pm_schema_init(out);
    pm_cli_json_problem problem;
    cJSON *root = pm_cli_json_parse(text, &problem);
    if (!root) {
        char what[96];
        return pm_cli_set_error(error, PM_ERR_PARSE, "%s:%d: %s", p.source, problem.line,
                                pm_cli_json_problem_text(what, sizeof what, &problem));
    }
    pm_result r = PM_OK;
    if (!cJSON_IsObject(root)) r = bad(&p, "(top)", "expected an object with \"channels\"");
    if (r == PM_OK) r = check_keys(&p, root, "(top)", top_keys);
    if (r == PM_OK) r = get_string(&p, root, "name", "(top)", out->name, sizeof out->name);
    if (r == PM_OK) {
        const cJSON *ch = cJSON_GetObjectItemCaseSensitive(root, "channels");
        if (!ch) r = bad(&p, "channels", "missing");
        else r = parse_channels(&p, ch, "channels", -1);
    }
    if (r == PM_OK && (r = pm_schema_validate(out, error)) != PM_OK && error) {
        char msg[PM_ERROR_MESSAGE_SIZE];
        snprintf(msg, sizeof msg, "%s", error->message);
        pm_cli_set_error(error, error->code, "%s: %s", p.source, msg);
    }
    /* The build refuses a schema whose every value weighs 0, but only once every clip is read
     * and in a message without the file: say it here, naming the file. */
    if (r == PM_OK && !any_weighted(out))
        r = pm_cli_set_error(error, PM_ERR_INVALID_ARGUMENT,
                             "%s: every feature's weight is 0 (channel, trajectory sample and group weights "
                             "multiply): a search could not tell poses apart",
                             p.source);
    cJSON_Delete(root);
    return r;
}

pm_result pm_schema_load_json(pm_schema *out, const char *path, pm_schema_origin *origin, pm_error *error) {
    char *text = pm_cli_read_json_text(path, error);
    if (!text) return error ? error->code : PM_ERR_IO;
    pm_result r = pm_schema_from_json(out, text, path, origin, error);
    if (r == PM_OK && !out->name[0]) {
        /* Named after its file; control characters, legal in file names, would break the lines
         * of `info` and of messages, as for clips named after BVH files. */
        const char *base = strrchr(path, '/');
        snprintf(out->name, sizeof out->name, "%s", base ? base + 1 : path);
        pm_cli_clean_name(out->name);
    }
    free(text);
    return r;
}

pm_result pm_schema_resolve(pm_schema *out, const char *name, pm_schema_origin *origin, pm_error *error) {
    int preset = 0;
    for (const char *const *n = pm_schema_preset_names(); *n; n++) preset |= !strcmp(*n, name);
    /* A bare word that is no preset gets the preset "does not exist" message. */
    if (!preset && (strchr(name, '.') || strchr(name, '/'))) return pm_schema_load_json(out, name, origin, error);
    pm_result r = pm_schema_preset(out, name, error);
    /* A schema file named without '.' or '/' reads as a preset name: say how to give the file. */
    if (r != PM_OK && !preset && error && name[0] && access(name, F_OK) == 0) {
        size_t n = strlen(error->message);
        snprintf(error->message + n, sizeof error->message - n, "; for the file %s give ./%s", name, name);
    }
    if (r == PM_OK && origin) {
        memset(origin, 0, sizeof *origin);
        snprintf(origin->source, sizeof origin->source, "schema '%s'", name);
        for (int i = 0; i < out->channel_count; i++) {
            char label[96];
            pm_channel_display_name(label, sizeof label, &out->channels[i]);
            snprintf(origin->paths[i], sizeof origin->paths[i], "channel %d (%s)", i, label);
        }
    }
    return r;
}

static pm_result clip_lacks(pm_error *error, const pm_schema_origin *o, int i, const char *field, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static pm_result clip_lacks(pm_error *error, const pm_schema_origin *o, int i, const char *field, const char *format, ...) {
    if (!error) return PM_ERR_NOT_FOUND;
    char what[PM_ERROR_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, format);
    vsnprintf(what, sizeof what, format, ap);
    va_end(ap);
    if (!o) return pm_cli_set_error(error, PM_ERR_NOT_FOUND, "schema channel %d: %s", i, what);
    if (o->from_file) return pm_cli_set_error(error, PM_ERR_NOT_FOUND, "%s: %s.%s: %s", o->source, o->paths[i], field, what);
    return pm_cli_set_error(error, PM_ERR_NOT_FOUND, "%s %s: %s", o->source, o->paths[i], what);
}

pm_result pm_schema_check_clip(const pm_schema *s, const pm_schema_origin *o, const pm_clip *clip, const char *clip_path,
                               pm_error *error) {
    const char *file = clip_path ? clip_path : clip->name ? clip->name : "clip";
    for (int i = 0; i < s->channel_count; i++) {
        const pm_channel_def *c = &s->channels[i];
        if (c->kind == PM_FEATURE_CURVE && !pm_clip_find_curve(clip, c->curve))
            return clip_lacks(error, o, i, "curve", "%s has no curve '%s'", file, c->curve);
        int bone = c->kind == PM_FEATURE_POSITION || c->kind == PM_FEATURE_VELOCITY || c->kind == PM_FEATURE_HEADING ||
                   c->kind == PM_FEATURE_PHASE;
        if (!bone || pm_features_resolve_bone(&clip->skeleton, c->bone) >= 0) continue;
        if (c->bone[0] == '@')
            return clip_lacks(error, o, i, "bone",
                              "%s has no joint recognisable as %s (roles are found from joint names such as LeftFoot, "
                              "l_foot, foot.L; name the joint instead)",
                              file, c->bone);
        return clip_lacks(error, o, i, "bone", "no joint '%s' in %s", c->bone, file);
    }
    return PM_OK;
}

char *pm_schema_to_json(const pm_schema *s) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", s->name);
    cJSON *channels = cJSON_AddArrayToObject(root, "channels");
    cJSON *objs[PM_MAX_CHANNELS];
    for (int i = 0; i < s->channel_count; i++) {
        const pm_channel_def *c = &s->channels[i];
        cJSON *o = cJSON_CreateObject();
        objs[i] = o;
        cJSON_AddStringToObject(o, "kind", kind_names[c->kind]);
        if (c->name[0]) cJSON_AddStringToObject(o, "name", c->name);
        cJSON_AddNumberToObject(o, "weight", c->weight);
        if (c->group[0]) cJSON_AddStringToObject(o, "group", c->group);
        if (c->bone[0]) cJSON_AddStringToObject(o, "bone", c->bone);
        if (c->curve[0]) cJSON_AddStringToObject(o, "curve", c->curve);
        if (c->offset != 0.0f) cJSON_AddNumberToObject(o, "offset", c->offset);
        if (c->kind == PM_FEATURE_POSITION || c->kind == PM_FEATURE_VELOCITY || c->kind == PM_FEATURE_HEADING)
            cJSON_AddStringToObject(o, "components", c->components == PM_COMPONENTS_XY ? "xy" : "xyz");
        if (c->kind == PM_FEATURE_HEADING) cJSON_AddStringToObject(o, "axis", c->axis == 0 ? "x" : c->axis == 1 ? "y" : "z");
        if (c->kind == PM_FEATURE_PADDING) cJSON_AddNumberToObject(o, "size", c->size);
        if (c->kind == PM_FEATURE_TRAJECTORY) {
            cJSON *samples = cJSON_AddArrayToObject(o, "samples");
            for (int k = 0; k < c->sample_count; k++) {
                cJSON *t = cJSON_CreateObject();
                cJSON_AddNumberToObject(t, "offset", c->samples[k].offset);
                cJSON_AddNumberToObject(t, "weight", c->samples[k].weight);
                cJSON *flags = cJSON_AddArrayToObject(t, "flags");
                for (int b = 0; b < 8; b++)
                    if (c->samples[k].flags & (1u << b)) cJSON_AddItemToArray(flags, cJSON_CreateString(flag_names[b]));
                cJSON_AddItemToArray(samples, t);
            }
        }
        cJSON *parent = c->parent >= 0 ? cJSON_GetObjectItemCaseSensitive(objs[c->parent], "channels") : channels;
        if (!parent) parent = cJSON_AddArrayToObject(objs[c->parent], "channels");
        cJSON_AddItemToArray(parent, o);
    }
    char *text = pm_cli_json_print(root, 1);
    cJSON_Delete(root);
    return text;
}
