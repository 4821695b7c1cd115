/* Blend-space JSON files: parse, load the clips (trim, loop, mirror), create the space. */
#include "blend_space_json.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_common.h"
#include "cli_file.h"

typedef struct loader {
    const char *source;
    pm_error *error;
} loader;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static pm_result bad(const loader *l, pm_result code, const char *where, const char *format, ...) {
    if (!l->error) return code;
    char msg[PM_ERROR_MESSAGE_SIZE];
    va_list args;
    va_start(args, format);
    vsnprintf(msg, sizeof msg, format, args);
    va_end(args);
    return pm_cli_set_error(l->error, code, "%s: %s: %s", l->source, where, msg);
}

/* An object (`shape` ends the message when it is not one) of only those keys, each once: cJSON
 * keeps both copies of a repeated key and lookups see the first, so the second would be silently
 * ignored. */
static pm_result check_object(const loader *l, const cJSON *obj, const char *where, const char *shape,
                              const char *const *keys) {
    if (!cJSON_IsObject(obj)) return bad(l, PM_ERR_PARSE, where, "expected an object%s", shape);
    for (const cJSON *k = obj->child; k; k = k->next) {
        for (const cJSON *e = obj->child; e != k; e = e->next)
            if (!strcmp(e->string, k->string)) return bad(l, PM_ERR_PARSE, where, "key \"%s\" appears twice", k->string);
        int ok = 0;
        for (int i = 0; keys[i]; i++) ok |= !strcmp(k->string, keys[i]);
        if (!ok) {
            char allowed[256] = "";
            for (int i = 0; keys[i]; i++) {
                strncat(allowed, i ? ", " : "", sizeof allowed - strlen(allowed) - 1);
                strncat(allowed, keys[i], sizeof allowed - strlen(allowed) - 1);
            }
            return bad(l, PM_ERR_PARSE, where, "unknown key \"%s\" (expected one of: %s)", k->string, allowed);
        }
    }
    return PM_OK;
}

/* Optional number; *present tells whether it was there. */
static pm_result get_number(const loader *l, const cJSON *obj, const char *key, const char *where, double *out,
                            int *present) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (present) *present = v != NULL;
    if (!v) return PM_OK;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return bad(l, PM_ERR_PARSE, where, "\"%s\" must be a finite number", key);
    *out = v->valuedouble;
    return PM_OK;
}

static pm_result get_bool(const loader *l, const cJSON *obj, const char *key, const char *where, int *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return PM_OK;
    if (!cJSON_IsBool(v)) return bad(l, PM_ERR_PARSE, where, "\"%s\" must be true or false", key);
    *out = cJSON_IsTrue(v);
    return PM_OK;
}

/* Optional string: *out stays NULL when absent; any other type is an error. */
static pm_result get_string(const loader *l, const cJSON *obj, const char *key, const char *where, const char **out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!v) return PM_OK;
    if (!cJSON_IsString(v)) return bad(l, PM_ERR_PARSE, where, "\"%s\" must be a string", key);
    long at = pm_cli_control_char(v->valuestring);
    if (at >= 0)
        return bad(l, PM_ERR_PARSE, where, "\"%s\" has a control character (byte 0x%02x at offset %ld)", key,
                   (unsigned)(unsigned char)v->valuestring[at], at);
    *out = v->valuestring;
    return PM_OK;
}

/* A JSON number as a float: converting a double beyond the float range is undefined, and an
 * infinity would only be caught later without the field's name. */
static pm_result to_float(const loader *l, const cJSON *v, const char *where, float *out) {
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return bad(l, PM_ERR_PARSE, where, "expected a finite number");
    if (fabs(v->valuedouble) > FLT_MAX)
        return bad(l, PM_ERR_PARSE, where, "%g is beyond the single-precision range (magnitude at most %g)", v->valuedouble,
                   (double)FLT_MAX);
    *out = (float)v->valuedouble;
    return PM_OK;
}

/* One of `names` (index), or an error listing them. */
static pm_result get_enum(const loader *l, const cJSON *obj, const char *key, const char *where,
                          const char *const *names, int *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return PM_OK;
    if (cJSON_IsString(v))
        for (int i = 0; names[i]; i++)
            if (!strcmp(v->valuestring, names[i])) {
                *out = i;
                return PM_OK;
            }
    char allowed[160] = "";
    for (int i = 0; names[i]; i++) {
        strncat(allowed, i ? "\", \"" : "\"", sizeof allowed - strlen(allowed) - 1);
        strncat(allowed, names[i], sizeof allowed - strlen(allowed) - 1);
    }
    return bad(l, PM_ERR_PARSE, where, "\"%s\" must be one of %s\"", key, allowed);
}

static char *join_path(const char *dir, const char *file) {
    size_t n = (dir ? strlen(dir) : 0) + strlen(file) + 2;
    char *p = malloc(n);
    if (!p) return NULL;
    if (file[0] == '/' || !dir || !dir[0]) snprintf(p, n, "%s", file);
    else snprintf(p, n, "%s/%s", dir, file);
    return p;
}

/* Reads, trims, loops and mirrors one sample's clip; *out_path (malloc'd) is the file read. */
static pm_result load_sample_clip(const loader *l, pm_clip *out, char **out_path, const cJSON *s, const char *where,
                                  const char *base_dir, const pm_bvh_def *bvh) {
    const char *file;
    pm_result r = get_string(l, s, "clip", where, &file);
    if (r != PM_OK) return r;
    if (!file || !file[0]) return bad(l, PM_ERR_PARSE, where, "\"clip\" (a BVH path) is required");
    double start = 0.0, end = 0.0;
    int has_start = 0, has_end = 0, loop = 0, mirror = 0;
    if ((r = get_number(l, s, "start", where, &start, &has_start)) != PM_OK) return r;
    if ((r = get_number(l, s, "end", where, &end, &has_end)) != PM_OK) return r;
    if ((r = get_bool(l, s, "loop", where, &loop)) != PM_OK) return r;
    if ((r = get_bool(l, s, "mirror", where, &mirror)) != PM_OK) return r;
    char *path = join_path(base_dir, file);
    if (!path) return bad(l, PM_ERR_OUT_OF_MEMORY, where, "out of memory");
    pm_clip clip;
    r = pm_bvh_read_file(&clip, path, bvh, l->error);
    *out_path = path;
    if (r != PM_OK) {
        char msg[PM_ERROR_MESSAGE_SIZE] = "cannot read the clip";
        if (l->error) snprintf(msg, sizeof msg, "%s", l->error->message);
        return bad(l, r, where, "%s", msg);
    }
    if (has_start || has_end) {
        float duration = pm_clip_duration(&clip);
        if (!has_end) end = duration;
        if (start < 0.0 || end <= start || end > (double)duration + 0.5 * clip.frame_time) {
            pm_clip_destroy(&clip);
            return bad(l, PM_ERR_INVALID_ARGUMENT, where, "start %g / end %g must satisfy 0 <= start < end <= %g (the clip's duration)",
                       start, end, (double)duration);
        }
        int first = (int)floor(start / clip.frame_time + 0.5);
        int last = (int)floor(end / clip.frame_time + 0.5);
        if (last > clip.frame_count - 1) last = clip.frame_count - 1;
        if (last <= first) last = first + 1 < clip.frame_count ? first + 1 : first;
        pm_clip trimmed;
        r = pm_clip_trim(&trimmed, &clip, first, last - first + 1, l->error);
        pm_clip_destroy(&clip);
        if (r != PM_OK) return r;
        clip = trimmed;
    }
    clip.looping = loop;
    if (mirror) {
        pm_clip mirrored;
        r = pm_clip_mirror(&mirrored, &clip, NULL, -1, l->error);
        pm_clip_destroy(&clip);
        if (r != PM_OK) return r;
        mirrored.looping = loop;
        clip = mirrored;
    }
    *out = clip;
    return PM_OK;
}

static const char *const top_keys[] = {"name", "axes", "sync", "align", "collinear", "coplanar", "fps", "grid",
                                       "grid_include_outside", "unit_scale", "up", "samples", NULL};
static const char *const axis_keys[] = {"name", "min", "max", "mirror", NULL};
static const char *const axis_mirror_names[] = {"keep", "negate", NULL};
static const char *const sample_keys[] = {"name", "clip", "params", "start", "end", "loop", "mirror", NULL};
static const char *const sync_names[] = {"phase", "none", "feet", NULL}; /* in pm_blend_sync's order */
static const char *const align_names[] = {"position_facing", "position", "none", NULL};
static const char *const collinear_names[] = {"line", "error", NULL};
static const char *const coplanar_names[] = {"plane", "error", NULL};
static const char *const up_names[] = {"y", "z", NULL};

/* Why the text is no JSON document: the line and column where cJSON stopped, and a few
 * characters there (a generated file is often one line long). */
static pm_result malformed(const loader *l, const char *text, const pm_cli_json_problem *problem) {
    int line = problem->line;
    if (problem->why != PM_CLI_JSON_MALFORMED) {
        char what[96];
        return bad(l, PM_ERR_PARSE, "JSON", "%s, line %d", pm_cli_json_problem_text(what, sizeof what, problem), line);
    }
    const char *at = cJSON_GetErrorPtr(), *start = text;
    if (!at || at < text || at > text + strlen(text)) return bad(l, PM_ERR_PARSE, "JSON", "malformed near line %d", line);
    for (const char *c = text; c < at; c++)
        if (*c == '\n') start = c + 1;
    int column = 1, n = 0;
    for (const char *c = start; c < at; c++) column += ((unsigned char)*c & 0xC0) != 0x80; /* characters, not bytes */
    while (n < 16 && (unsigned char)at[n] >= 0x20 && at[n] != 0x7f) n++; /* (no control characters) */
    while (n > 0 && at[n] && ((unsigned char)at[n] & 0xC0) == 0x80) n--; /* (whole UTF-8 characters) */
    if (n == 0 && (!*at || *at == '\n' || *at == '\r'))
        return bad(l, PM_ERR_PARSE, "JSON", "malformed near line %d, column %d (at the end of the %s)", line, column,
                   *at ? "line" : "file");
    if (n == 0)
        return bad(l, PM_ERR_PARSE, "JSON", "malformed near line %d, column %d (at a control character, byte 0x%02x)",
                   line, column, (unsigned)(unsigned char)*at);
    return bad(l, PM_ERR_PARSE, "JSON", "malformed near line %d, column %d (at '%.*s')", line, column, n, at);
}

/* The top level's settings: name, sync, align, degenerate layouts, units (the command line's
 * bvh outranks the file: the file's apply only where the caller left detection on), fps and
 * grid_include_outside. */
static pm_result read_settings(const loader *l, const cJSON *root, pm_blend_space_def *def, pm_bvh_def *bvh,
                               pm_blend_space_file *out) {
    pm_result r;
    if ((r = check_object(l, root, "top level", "", top_keys)) != PM_OK) return r;
    if ((r = get_string(l, root, "name", "top level", &def->name)) != PM_OK) return r;
    int sync = PM_BLEND_SYNC_FEET, align = 0, collinear = 0, coplanar = 0, up = -1;
    if ((r = get_enum(l, root, "sync", "top level", sync_names, &sync)) != PM_OK) return r;
    if ((r = get_enum(l, root, "align", "top level", align_names, &align)) != PM_OK) return r;
    if ((r = get_enum(l, root, "collinear", "top level", collinear_names, &collinear)) != PM_OK) return r;
    if ((r = get_enum(l, root, "coplanar", "top level", coplanar_names, &coplanar)) != PM_OK) return r;
    if ((r = get_enum(l, root, "up", "top level", up_names, &up)) != PM_OK) return r;
    def->sync = (pm_blend_sync)sync;
    def->align = (pm_blend_align)align;
    def->collinear = (pm_blend_collinear)collinear;
    def->coplanar = (pm_blend_coplanar)coplanar;
    if (up >= 0 && bvh->up_axis < 0) bvh->up_axis = up == 0 ? PM_UP_Y : PM_UP_Z;
    double v = 0.0;
    int present = 0;
    if ((r = get_number(l, root, "unit_scale", "top level", &v, &present)) != PM_OK) return r;
    if (present) {
        /* Checked as the float it becomes: 1e-300 would turn into 0, "detect". */
        if (!(v > 0.0) || v > FLT_MAX || !((float)v > 0.0f))
            return bad(l, PM_ERR_PARSE, "unit_scale", "%g must be a positive single-precision number (metres per file unit)",
                       v);
        /* The range of --unit-scale: far beyond it a clip's motion is read as nothing (or as
         * astronomical), and its gait cycles and root motion are lost without a word. */
        if (v < 1e-6 || v > 1e6)
            return bad(l, PM_ERR_PARSE, "unit_scale", "%g is outside 1e-06..1e+06 (metres per file unit, as --unit-scale)", v);
        if (bvh->unit_scale == 0.0f) bvh->unit_scale = (float)v;
    }
    if ((r = get_number(l, root, "fps", "top level", &v, &present)) != PM_OK) return r;
    if (present) {
        if (!(v >= PM_BLEND_FPS_MIN && v <= PM_BLEND_FPS_MAX))
            return bad(l, PM_ERR_PARSE, "fps", "%g is outside %g..%g", v, PM_BLEND_FPS_MIN, PM_BLEND_FPS_MAX);
        out->fps = (float)v;
    }
    return get_bool(l, root, "grid_include_outside", "top level", &out->grid.include_outside);
}

/* The axes (names, ranges, mirroring), or without them the dimensions of the first sample's
 * params; then the grid's points per axis. */
static pm_result read_axes(const loader *l, const cJSON *root, const cJSON *jsamples, pm_blend_space_def *def,
                           pm_blend_space_file *out) {
    pm_result r;
    const cJSON *axes = cJSON_GetObjectItemCaseSensitive(root, "axes");
    if (axes) {
        if (!cJSON_IsArray(axes) || cJSON_GetArraySize(axes) < 1 || cJSON_GetArraySize(axes) > PM_BLEND_SPACE_MAX_DIMENSIONS)
            return bad(l, PM_ERR_PARSE, "axes", "expected an array of 1 to %d axes", PM_BLEND_SPACE_MAX_DIMENSIONS);
        def->dimensions = cJSON_GetArraySize(axes);
        for (int d = 0; d < def->dimensions; d++) {
            const cJSON *a = cJSON_GetArrayItem(axes, d);
            char where[32];
            snprintf(where, sizeof where, "axes[%d]", d);
            if ((r = check_object(l, a, where, " {\"name\", \"min\", \"max\"}", axis_keys)) != PM_OK) return r;
            const char *nm;
            if ((r = get_string(l, a, "name", where, &nm)) != PM_OK) return r;
            /* (The space copies it; the JSON lives until then.) */
            if (nm) def->axis_names[d] = nm;
            int negate = 0;
            if ((r = get_enum(l, a, "mirror", where, axis_mirror_names, &negate)) != PM_OK) return r;
            out->mirror_negate |= negate << d;
            const cJSON *jlo = cJSON_GetObjectItemCaseSensitive(a, "min"), *jhi = cJSON_GetObjectItemCaseSensitive(a, "max");
            if (!jlo != !jhi) return bad(l, PM_ERR_PARSE, where, "give both \"min\" and \"max\" or neither (the samples' extent)");
            if (jlo) {
                char wlo[48], whi[48];
                snprintf(wlo, sizeof wlo, "%s.min", where);
                snprintf(whi, sizeof whi, "%s.max", where);
                float lo = 0.0f, hi = 0.0f;
                if ((r = to_float(l, jlo, wlo, &lo)) != PM_OK || (r = to_float(l, jhi, whi, &hi)) != PM_OK) return r;
                /* Compared as floats: min == max would mean "the samples' extent". */
                if (!(lo < hi))
                    return bad(l, PM_ERR_PARSE, where, "min %.9g must be below max %.9g (in single precision)", (double)lo,
                               (double)hi);
                def->axis_min[d] = lo;
                def->axis_max[d] = hi;
            }
        }
    } else {
        const cJSON *p0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(jsamples, 0), "params");
        def->dimensions = cJSON_IsArray(p0) ? cJSON_GetArraySize(p0) : 1;
        if (def->dimensions < 1 || def->dimensions > PM_BLEND_SPACE_MAX_DIMENSIONS)
            return bad(l, PM_ERR_PARSE, "samples[0].params", "expected 1 to %d numbers (one per axis)",
                       PM_BLEND_SPACE_MAX_DIMENSIONS);
    }
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(root, "grid");
    if (grid) {
        int ok = cJSON_IsNumber(grid) || (cJSON_IsArray(grid) && cJSON_GetArraySize(grid) == def->dimensions);
        for (int d = 0; d < def->dimensions && ok; d++) {
            const cJSON *g = cJSON_IsNumber(grid) ? grid : cJSON_GetArrayItem(grid, d);
            /* The range before the conversion: casting 3e10 (or NaN) to int is undefined. */
            double c = cJSON_IsNumber(g) ? g->valuedouble : 0.0;
            ok = c >= 1.0 && c <= 100000.0 && c == floor(c);
            if (ok) out->grid.counts[d] = (int)c;
        }
        if (!ok)
            return bad(l, PM_ERR_PARSE, "grid", "expected %d whole number(s) of points per axis, each 1..100000",
                       def->dimensions);
    }
    return PM_OK;
}

/* Sample i's name and params. */
static pm_result read_sample(const loader *l, pm_blend_sample_def *sample, const cJSON *s, const char *where, int dims) {
    pm_result r;
    if ((r = check_object(l, s, where, " {\"clip\", \"params\", ...}", sample_keys)) != PM_OK) return r;
    *sample = pm_default_blend_sample_def();
    if ((r = get_string(l, s, "name", where, &sample->name)) != PM_OK) return r;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(s, "params");
    char pwhere[64];
    snprintf(pwhere, sizeof pwhere, "%s.params", where);
    if (cJSON_IsNumber(p) && dims == 1) return to_float(l, p, pwhere, &sample->params[0]);
    if (cJSON_IsArray(p) && cJSON_GetArraySize(p) == dims) {
        for (int d = 0; d < dims; d++) {
            char xwhere[80];
            snprintf(xwhere, sizeof xwhere, "%s[%d]", pwhere, d);
            if ((r = to_float(l, cJSON_GetArrayItem(p, d), xwhere, &sample->params[d])) != PM_OK) return r;
        }
        return PM_OK;
    }
    if (cJSON_IsArray(p))
        return bad(l, PM_ERR_PARSE, pwhere, "expected an array of %d number(s), one per axis; got %d", dims,
                   cJSON_GetArraySize(p));
    return bad(l, PM_ERR_PARSE, pwhere, "expected an array of %d number(s), one per axis%s%s", dims,
               dims == 1 ? " (or one number)" : "", p ? "" : "; it is missing");
}

/* A sample's name is what the text output shows for it: two alike (two clips called walk.bvh
 * in different folders, one clip used twice, or names given alike) could not be told apart. */
static pm_result check_sample_names(const loader *l, const pm_blend_sample_def *samples, const pm_clip *clips, int n) {
    for (int i = 1; i < n; i++) {
        const char *ni = samples[i].name ? samples[i].name : clips[i].name;
        for (int j = 0; j < i; j++) {
            const char *nj = samples[j].name ? samples[j].name : clips[j].name;
            if (ni && nj && !strcmp(ni, nj)) {
                char where[48];
                snprintf(where, sizeof where, "samples[%d].name", i);
                return bad(l, PM_ERR_INVALID_ARGUMENT, where,
                           "'%s' is also samples[%d]'s name%s; give each sample a \"name\" of its own", ni, j,
                           samples[i].name ? "" : " (a sample without one is named after its clip's file)");
            }
        }
    }
    return PM_OK;
}

pm_result pm_blend_space_from_json(pm_blend_space_file *out, const char *text, const char *source_name,
                                   const char *base_dir, const pm_bvh_def *bvh_in, pm_error *error) {
    loader l = {source_name ? source_name : "blend space", error};
    if (!out || !text) return bad(&l, PM_ERR_INVALID_ARGUMENT, "input", "NULL argument");
    memset(out, 0, sizeof *out);
    out->grid = pm_default_blend_grid_def();
    pm_cli_json_problem problem;
    cJSON *root = pm_cli_json_parse(text, &problem);
    if (!root) return malformed(&l, text, &problem);
    pm_result r = PM_OK;
    pm_clip *clips = NULL;
    pm_blend_sample_def *samples = NULL;
    int clip_count = 0;
    pm_blend_space_def def = pm_default_blend_space_def();
    pm_bvh_def bvh = bvh_in ? *bvh_in : pm_default_bvh_def();
    if ((r = read_settings(&l, root, &def, &bvh, out)) != PM_OK) goto done;
    const cJSON *jsamples = cJSON_GetObjectItemCaseSensitive(root, "samples");
    if (!cJSON_IsArray(jsamples) || cJSON_GetArraySize(jsamples) == 0) {
        r = bad(&l, PM_ERR_INVALID_ARGUMENT, "samples", "a blend space needs a non-empty \"samples\" array");
        goto done;
    }
    if ((r = read_axes(&l, root, jsamples, &def, out)) != PM_OK) goto done;
    int n = cJSON_GetArraySize(jsamples);
    if (n > PM_BLEND_SPACE_MAX_SAMPLES) {
        r = bad(&l, PM_ERR_LIMIT, "samples", "%d samples exceeds the limit of %d", n, PM_BLEND_SPACE_MAX_SAMPLES);
        goto done;
    }
    clips = calloc((size_t)n, sizeof *clips);
    samples = calloc((size_t)n, sizeof *samples);
    out->clip_paths = calloc((size_t)(n ? n : 1), sizeof(char *));
    if (!clips || !samples || !out->clip_paths) {
        r = bad(&l, PM_ERR_OUT_OF_MEMORY, "samples", "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const cJSON *s = cJSON_GetArrayItem(jsamples, i);
        char where[48];
        snprintf(where, sizeof where, "samples[%d]", i);
        if ((r = read_sample(&l, &samples[i], s, where, def.dimensions)) != PM_OK) goto done;
        r = load_sample_clip(&l, &clips[i], &out->clip_paths[i], s, where, base_dir, &bvh);
        if (out->clip_paths[i]) out->clip_path_count = i + 1;
        if (r != PM_OK) goto done;
        clip_count++;
        samples[i].clip = &clips[i];
    }
    if ((r = check_sample_names(&l, samples, clips, n)) != PM_OK) goto done;
    def.samples = samples;
    def.sample_count = n;
    if ((r = pm_blend_space_create(&out->space, &def, error)) != PM_OK) {
        if (error) {
            char msg[PM_ERROR_MESSAGE_SIZE];
            snprintf(msg, sizeof msg, "%s", error->message);
            bad(&l, r, "space", "%s", msg);
        }
        goto done;
    }
done:
    for (int i = 0; i < clip_count; i++) pm_clip_destroy(&clips[i]);
    free(clips);
    free(samples);
    cJSON_Delete(root);
    if (r != PM_OK) pm_blend_space_file_free(out);
    return r;
}

pm_result pm_blend_space_load_json(pm_blend_space_file *out, const char *path, const pm_bvh_def *bvh, pm_error *error) {
    if (out) memset(out, 0, sizeof *out);
    if (!out || !path) return pm_cli_set_error(error, PM_ERR_INVALID_ARGUMENT, "pm_blend_space_load_json: NULL argument");
    char *text = pm_cli_read_json_text(path, error);
    if (!text) return error ? error->code : PM_ERR_IO;
    char *dir = malloc(strlen(path) + 1);
    if (!dir) {
        free(text);
        return pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    strcpy(dir, path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else dir[0] = '\0';
    pm_result r = pm_blend_space_from_json(out, text, path, dir, bvh, error);
    free(dir);
    free(text);
    return r;
}

void pm_blend_space_file_free(pm_blend_space_file *f) {
    if (!f) return;
    pm_blend_space_destroy(f->space);
    for (int i = 0; i < f->clip_path_count; i++) free(f->clip_paths[i]);
    free(f->clip_paths);
    memset(f, 0, sizeof *f);
}

void pm_blend_space_free_clips(pm_clip *clips, int count) {
    if (!clips) return;
    for (int i = 0; i < count; i++) pm_clip_destroy(&clips[i]);
    free(clips);
}

/* What a baked clip depends on: the contributing samples and their weights (unused slots 0). */
typedef struct blend_key {
    int count;
    int samples[PM_BLEND_SPACE_MAX_WEIGHTS];
    float weights[PM_BLEND_SPACE_MAX_WEIGHTS];
} blend_key;

static size_t blend_key_hash(const blend_key *k) {
    const unsigned char *b = (const unsigned char *)k;
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < sizeof *k; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return (size_t)(h ^ (h >> 32));
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* 1 when the clips' names are all different. */
static int names_unique(const pm_clip *clips, int n, const char **scratch) {
    for (int i = 0; i < n; i++) scratch[i] = clips[i].name ? clips[i].name : "";
    qsort(scratch, (size_t)n, sizeof *scratch, cmp_str);
    for (int i = 1; i < n; i++)
        if (!strcmp(scratch[i - 1], scratch[i])) return 0;
    return 1;
}

/* Baked clips are named "<space>@<params>" with 6 significant digits (pm_blend_space_bake's
 * "%g"). Grid points closer than that would share a name, and asset names must be unique: the
 * space's points then all take the fewest digits, up to 9 (which tell any two floats apart),
 * that keep them apart. Names that were apart stay as they were. */
static pm_result name_points_apart(pm_clip *clips, int n, const float *points, int dims, const char *space,
                                   pm_error *error) {
    const char **scratch = malloc(sizeof *scratch * (size_t)(n ? n : 1));
    if (!scratch) return pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "blend space grid: out of memory");
    pm_result r = PM_OK;
    /* (Three parameters of at most 16 characters each, and their separators.) */
    const size_t room = strlen(space) + 64;
    char *name = malloc(room);
    if (!name) {
        free(scratch);
        return pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "blend space grid: out of memory");
    }
    for (int digits = 7; r == PM_OK && !names_unique(clips, n, scratch) && digits <= 9; digits++)
        for (int k = 0; k < n && r == PM_OK; k++) {
            size_t at = (size_t)snprintf(name, room, "%s@", space);
            for (int d = 0; d < dims; d++)
                at += (size_t)snprintf(name + at, room - at, "%s%.*g", d ? "," : "", digits,
                                       (double)points[(size_t)k * dims + d]);
            r = pm_clip_set_name(&clips[k], name, error);
        }
    free(name);
    free(scratch);
    return r;
}

pm_result pm_blend_space_file_bake_grid(pm_clip **out_clips, int *out_count, float **out_params, long long max_poses,
                                        const pm_blend_space_file *f, float fps, pm_error *error) {
    if (!out_clips || !out_count || !f || !f->space)
        return pm_cli_set_error(error, PM_ERR_INVALID_ARGUMENT, "pm_blend_space_file_bake_grid: NULL argument");
    *out_clips = NULL;
    *out_count = 0;
    if (out_params) *out_params = NULL;
    int count = 0;
    pm_result r = pm_blend_space_grid(NULL, 0, &count, f->space, &f->grid, error);
    if (r != PM_OK) return r;
    int dims = pm_blend_space_dimensions(f->space);
    size_t room = (size_t)(count ? count : 1), slots = 2;
    while (slots < 2 * room) slots *= 2;
    float *points = malloc(sizeof(float) * room * (size_t)dims);
    pm_clip *clips = calloc(room, sizeof *clips);
    /* The same samples with the same weights bake the same clip, as every point projected onto one
     * hull point does: distinct blends go in a hash set (open addressing; a slot holds the index + 1
     * of the point that represents the blend, `slot_of` each point's slot). */
    blend_key *keys = malloc(sizeof *keys * room);
    int *table = calloc(slots, sizeof *table), *slot_of = malloc(sizeof *slot_of * room);
    unsigned char *outside = malloc(room);
    int made = 0;
    if (!points || !clips || !keys || !table || !slot_of || !outside) {
        r = pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "blend space grid: out of memory");
        goto done;
    }
    if ((r = pm_blend_space_grid(points, count, &count, f->space, &f->grid, error)) != PM_OK) goto done;
    for (int k = 0; k < count; k++) {
        pm_blend_space_weights w;
        if ((r = pm_blend_space_weights_at(&w, f->space, points + (size_t)k * dims, error)) != PM_OK) goto done;
        blend_key *key = &keys[k];
        memset(key, 0, sizeof *key);
        key->count = w.count;
        memcpy(key->samples, w.samples, sizeof(int) * (size_t)w.count);
        memcpy(key->weights, w.weights, sizeof(float) * (size_t)w.count);
        outside[k] = w.outside != 0;
        size_t at = blend_key_hash(key) & (slots - 1);
        while (table[at] && memcmp(&keys[table[at] - 1], key, sizeof *key)) at = (at + 1) & (slots - 1);
        /* The blend is represented by its first point inside the hull, else its first point: the
         * asset's parameters are then those its motion has, whenever some point has them. */
        if (!table[at] || (outside[table[at] - 1] && !outside[k])) table[at] = k + 1;
        slot_of[k] = (int)at;
    }
    float rate = fps > 0.0f ? fps : f->fps;
    long long poses = 0;
    for (int k = 0; k < count; k++) {
        if (table[slot_of[k]] != k + 1) continue;
        const float *p = points + (size_t)k * dims;
        if ((r = pm_blend_space_bake(&clips[made], f->space, p, rate, error)) != PM_OK) goto done;
        poses += clips[made].frame_count;
        if (max_poses > 0 && poses > max_poses) {
            made++; /* freed below with the others */
            r = pm_cli_set_error(error, PM_ERR_LIMIT,
                                 "blend space '%s': its grid of %d points bakes more than the %lld poses a database of "
                                 "this schema holds (after %d points; make \"grid\" coarser)",
                                 pm_blend_space_name(f->space), count, max_poses, made);
            goto done;
        }
        /* Kept points move down in place: the list stays in grid order. */
        memmove(points + (size_t)made * dims, p, sizeof(float) * (size_t)dims);
        made++;
    }
    if (made > 1) r = name_points_apart(clips, made, points, dims, pm_blend_space_name(f->space), error);
    if (r == PM_OK && made == 0)
        r = pm_cli_set_error(error, PM_ERR_INVALID_ARGUMENT,
                             "blend space '%s': no point of its grid lies inside the samples' hull (change \"grid\" or set "
                             "\"grid_include_outside\")",
                             pm_blend_space_name(f->space));
done:
    free(keys);
    free(table);
    free(slot_of);
    free(outside);
    if (r != PM_OK) {
        pm_blend_space_free_clips(clips, made);
        free(points);
        return r;
    }
    if (out_params) *out_params = points;
    else free(points);
    *out_clips = clips;
    *out_count = made;
    return PM_OK;
}
