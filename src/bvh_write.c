/* BVH writer: the clip's channel layout where it can carry the motion, extra channels where it
 * cannot, numbers formatted independently of the C locale, files replaced atomically. */
#include <math.h>
#include <stdio.h>

#include "bvh_internal.h"
#include "core.h"
#include "euler.h"

pm_bvh_write_def pm_default_bvh_write_def(void) {
    pm_bvh_write_def d;
    d.unit_scale = 0.0f;
    d.up_axis = -1;
    d.precision = 0;
    return d;
}


/* ---- output buffer ---- */

typedef struct out_buf {
    char *data;
    size_t size, cap;
    const pm_allocator *allocator;
    int failed;   /* out of memory: later appends are dropped, the caller reports once */
    int overflow; /* a value does not fit a float in the written units */
} out_buf;

static void buf_reserve(out_buf *b, size_t extra) {
    if (b->failed || b->cap - b->size > extra) return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->size <= extra) {
        if (cap > SIZE_MAX / 2) {
            b->failed = 1;
            return;
        }
        cap *= 2;
    }
    char *d = (char *)pm_alloc(b->allocator, cap, 16);
    if (!d) {
        b->failed = 1;
        return;
    }
    if (b->size) memcpy(d, b->data, b->size);
    pm_free(b->allocator, b->data);
    b->data = d;
    b->cap = cap;
}

static void buf_append(out_buf *b, const char *s, size_t n) {
    buf_reserve(b, n + 1);
    if (b->failed) return;
    memcpy(b->data + b->size, s, n);
    b->size += n;
    b->data[b->size] = '\0';
}

static void buf_str(out_buf *b, const char *s) { buf_append(b, s, strlen(s)); }

static void buf_indent(out_buf *b, int depth) {
    for (int i = 0; i < depth; i++) buf_append(b, "\t", 1);
}

/* %.*g, then whatever the current locale put between the digits becomes '.': the library never
 * calls setlocale, but the application may have, and BVH always uses a point. */
static size_t format_g(char *out, size_t cap, double v, int precision) {
    char raw[64];
    snprintf(raw, sizeof raw, "%.*g", precision, v);
    size_t n = 0;
    int in_point = 0;
    for (const char *c = raw; *c && n + 1 < cap; c++) {
        int plain = (*c >= '0' && *c <= '9') || *c == '-' || *c == '+' || *c == 'e' || *c == 'E';
        if (plain) {
            out[n++] = *c;
            in_point = 0;
        } else if (!in_point) {
            out[n++] = '.';
            in_point = 1;
        }
    }
    out[n] = '\0';
    return n;
}

/* At full precision (9 digits, enough for any float) the shortest of 6..9 digits that reads
 * back to the same float: a file read and written again keeps its "20.6881", not "20.6881006".
 * Returns 0 (and "0" in text) when the text would not read back as a finite float. */
static int format_number(char text[64], size_t *n, double v, int precision) {
    if (v == 0.0) v = 0.0; /* no "-0" */
    /* FLT_MAX plus half an ulp: the first double that rounds to inf; converting it to float
     * would be undefined. */
    int ok = fabs(v) < PM_BVH_FLOAT_LIMIT;
    if (!ok) v = 0.0;
    if (precision < 9) {
        *n = format_g(text, 64, v, precision);
        /* Fewer digits can round up past the limit: 3.4028e38 at 4 digits is "3.403e+38". */
        double back;
        if (fabs(v) >= 1e38 && !(pm_bvh_parse_double(&back, text, *n) == 0 && fabs(back) < PM_BVH_FLOAT_LIMIT)) {
            ok = 0;
            *n = format_g(text, 64, 0.0, precision);
        }
    } else {
        float f = (float)v;
        for (int p = 6;; p++) {
            *n = format_g(text, 64, (double)f, p);
            double back;
            if (p == 9 || (pm_bvh_parse_double(&back, text, *n) == 0 && (float)back == f)) break;
        }
    }
    return ok;
}

static void buf_number(out_buf *b, double v, int precision) {
    char text[64];
    size_t n;
    if (!format_number(text, &n, v, precision)) b->overflow = 1; /* reported once by the caller */
    buf_append(b, text, n);
}

/* ---- channel layout ---- */

typedef struct joint_out {
    uint8_t channels[6];
    int count;
    pm_euler_order order;
    int rotations; /* rotation channels written, 0..3 */
} joint_out;

static int has_channel(const joint_out *o, int ch) {
    for (int i = 0; i < o->count; i++)
        if (o->channels[i] == ch) return 1;
    return 0;
}

/* Y-up clip space to the written axes: +90 degrees about X maps +Y to +Z. Only roots change:
 * everything below them is relative to their frame. */
static pm_quat file_rotation(const pm_clip *c, int z_up, int j, pm_quat q) {
    if (!z_up || c->skeleton.parents[j] >= 0) return q;
    pm_quat r = pm_quat_from_axis_angle(pm_vec3_make(1.0f, 0.0f, 0.0f), 0.5f * PM_PI);
    return pm_quat_normalize(pm_quat_mul(r, q));
}

static pm_vec3 file_translation(const pm_clip *c, int z_up, int j, pm_vec3 t) {
    if (!z_up || c->skeleton.parents[j] >= 0) return t;
    return pm_vec3_make(t.x, -t.z, t.y);
}

/* Whether component k of joint j's translation, in the file's axes (written Z-up, a root's
 * height is its Z, whatever channel carried it in the source), leaves its rest value in some
 * frame. Ten microns of slack: edits such as mirroring recompute every translation with
 * rounding noise, which should not add position channels to every joint. */
static float vec3_component(pm_vec3 v, int k) { return k == 0 ? v.x : k == 1 ? v.y : v.z; }

static int translation_moves(const pm_clip *c, int z_up, int j, int k) {
    int jc = c->skeleton.joint_count;
    float rest = vec3_component(file_translation(c, z_up, j, c->skeleton.rest_translations[j]), k);
    for (int f = 0; f < c->frame_count; f++) {
        float t = vec3_component(file_translation(c, z_up, j, c->translations[(size_t)f * jc + j]), k);
        if (fabsf(t - rest) > 1e-5f * PM_MAX(1.0f, fabsf(rest))) return 1;
    }
    return 0;
}

/* Whether the rotation channels of `o` (fewer than 3) can express every frame's rotation:
 * decomposed in the completed order, the unlisted axes must stay at zero. The rotation is
 * the one written, in the file's axes: written Z-up, a root whose clip rotation is the
 * identity turns 90 degrees about X, which a root with only position channels cannot carry. */
static int rotations_fit(const pm_clip *c, int z_up, int j, const joint_out *o) {
    int jc = c->skeleton.joint_count;
    for (int f = 0; f < c->frame_count; f++) {
        pm_quat q = file_rotation(c, z_up, j, c->rotations[(size_t)f * jc + j]);
        if (o->rotations == 0) {
            if (fabsf(q.x) > 1e-6f || fabsf(q.y) > 1e-6f || fabsf(q.z) > 1e-6f) return 0;
            continue;
        }
        double a[3];
        pm_euler_from_quat_d(a, q, o->order);
        for (int i = o->rotations; i < 3; i++)
            if (fabs(a[pm_euler_axis(o->order, i)]) > 1e-5) return 0;
    }
    return 1;
}

static void layout_joint(joint_out *o, const pm_clip *c, int j, int built_in_code, int z_up) {
    const pm_skeleton *s = &c->skeleton;
    memset(o, 0, sizeof *o);
    if (built_in_code) {
        int moves = s->parents[j] < 0;
        for (int k = 0; k < 3 && !moves; k++) moves = translation_moves(c, z_up, j, k);
        if (moves)
            for (int k = 0; k < 3; k++) o->channels[o->count++] = (uint8_t)(PM_CHANNEL_XPOSITION + k);
        o->channels[o->count++] = PM_CHANNEL_ZROTATION;
        o->channels[o->count++] = PM_CHANNEL_XROTATION;
        o->channels[o->count++] = PM_CHANNEL_YROTATION;
        o->rotations = pm_euler_order_of_channels(&o->order, o->channels, o->count);
        return;
    }
    o->count = s->channel_counts[j];
    memcpy(o->channels, s->channels + (size_t)j * 6, (size_t)o->count);
    int need_positions = 0;
    for (int k = 0; k < 3; k++)
        if (!has_channel(o, PM_CHANNEL_XPOSITION + k) && translation_moves(c, z_up, j, k)) need_positions = 1;
    if (need_positions) {
        /* All three positions first, then the rotation channels in their original order. */
        joint_out n;
        memset(&n, 0, sizeof n);
        for (int k = 0; k < 3; k++) n.channels[n.count++] = (uint8_t)(PM_CHANNEL_XPOSITION + k);
        for (int i = 0; i < o->count; i++)
            if (o->channels[i] >= PM_CHANNEL_XROTATION) n.channels[n.count++] = o->channels[i];
        *o = n;
    }
    o->rotations = pm_euler_order_of_channels(&o->order, o->channels, o->count);
    if (o->rotations < 3 && !rotations_fit(c, z_up, j, o)) {
        if (o->rotations == 0) o->order = PM_EULER_ZXY;
        for (int i = o->rotations; i < 3; i++)
            o->channels[o->count++] = (uint8_t)(PM_CHANNEL_XROTATION + pm_euler_axis(o->order, i));
        o->rotations = 3;
    }
}

/* ---- writing ---- */

typedef struct write_ctx {
    const pm_clip *clip;
    out_buf *buf;
    joint_out *layout;
    int *order;  /* joints in depth-first order: the order BVH nests them and lists values */
    int *depth;
    double scale; /* metres per written unit */
    int z_up;
    int precision;
    /* Where the first value beyond the float range is, for the message. */
    int bad_joint, bad_frame;
    const char *bad_field;
} write_ctx;

static void write_value(write_ctx *w, double v, int j, int frame, const char *field) {
    int before = w->buf->overflow;
    buf_number(w->buf, v, w->precision);
    if (w->buf->overflow && !before) {
        w->bad_joint = j;
        w->bad_frame = frame;
        w->bad_field = field;
    }
}

static void write_offset(write_ctx *w, int j, const char *field, pm_vec3 v) {
    buf_str(w->buf, "OFFSET");
    const float c[3] = {v.x, v.y, v.z};
    for (int k = 0; k < 3; k++) {
        buf_append(w->buf, " ", 1);
        write_value(w, (double)c[k] / w->scale, j, -1, field);
    }
    buf_append(w->buf, "\n", 1);
}

static void write_joint_header(write_ctx *w, int j) {
    const pm_skeleton *s = &w->clip->skeleton;
    int d = w->depth[j];
    buf_indent(w->buf, d);
    buf_str(w->buf, s->parents[j] < 0 ? "ROOT " : "JOINT ");
    buf_str(w->buf, s->names[j]);
    buf_append(w->buf, "\n", 1);
    buf_indent(w->buf, d);
    buf_str(w->buf, "{\n");
    buf_indent(w->buf, d + 1);
    write_offset(w, j, "OFFSET", file_translation(w->clip, w->z_up, j, s->rest_translations[j]));
    buf_indent(w->buf, d + 1);
    char count[16];
    snprintf(count, sizeof count, "CHANNELS %d", w->layout[j].count);
    buf_str(w->buf, count);
    for (int i = 0; i < w->layout[j].count; i++) {
        buf_append(w->buf, " ", 1);
        buf_str(w->buf, pm_bvh_channel_name(w->layout[j].channels[i]));
    }
    buf_append(w->buf, "\n", 1);
    if (s->has_end_site[j]) {
        buf_indent(w->buf, d + 1);
        buf_str(w->buf, "End Site\n");
        buf_indent(w->buf, d + 1);
        buf_str(w->buf, "{\n");
        buf_indent(w->buf, d + 2);
        write_offset(w, j, "End Site OFFSET", s->end_sites[j]);
        buf_indent(w->buf, d + 1);
        buf_str(w->buf, "}\n");
    }
}

static void write_hierarchy(write_ctx *w) {
    int jc = w->clip->skeleton.joint_count;
    buf_str(w->buf, "HIERARCHY\n");
    int open = 0; /* joints whose '{' is still open */
    for (int i = 0; i < jc; i++) {
        int j = w->order[i];
        for (; open > w->depth[j]; open--) {
            buf_indent(w->buf, open - 1);
            buf_str(w->buf, "}\n");
        }
        write_joint_header(w, j);
        open = w->depth[j] + 1;
    }
    for (; open > 0; open--) {
        buf_indent(w->buf, open - 1);
        buf_str(w->buf, "}\n");
    }
}

static void write_motion(write_ctx *w) {
    const pm_clip *c = w->clip;
    int jc = c->skeleton.joint_count;
    char line[64];
    snprintf(line, sizeof line, "MOTION\nFrames: %d\nFrame Time: ", c->frame_count);
    buf_str(w->buf, line);
    buf_number(w->buf, c->frame_time, 9);
    buf_append(w->buf, "\n", 1);
    const double deg = 180.0 / 3.14159265358979323846;
    for (int f = 0; f < c->frame_count && !w->buf->failed; f++) {
        int first = 1;
        for (int i = 0; i < jc; i++) {
            int j = w->order[i];
            const joint_out *o = &w->layout[j];
            pm_vec3 t = file_translation(c, w->z_up, j, c->translations[(size_t)f * jc + j]);
            double a[3] = {0.0, 0.0, 0.0};
            if (o->rotations) pm_euler_from_quat_d(a, file_rotation(c, w->z_up, j, c->rotations[(size_t)f * jc + j]), o->order);
            const float tv[3] = {t.x, t.y, t.z};
            for (int k = 0; k < o->count; k++) {
                int ch = o->channels[k];
                if (!first) buf_append(w->buf, " ", 1);
                first = 0;
                double v = ch <= PM_CHANNEL_ZPOSITION ? (double)tv[ch] / w->scale : a[ch - PM_CHANNEL_XROTATION] * deg;
                write_value(w, v, j, f, pm_bvh_channel_name(ch));
            }
        }
        buf_append(w->buf, "\n", 1);
    }
}

/* Depth-first (pre-order) joint sequence with children in index order; iterative, so any
 * depth is fine. Returns 0 when the hierarchy is too deep to read back. */
static int depth_first_order(int *order, int *depth, int *scratch, const pm_skeleton *s) {
    int jc = s->joint_count;
    int *first_child = scratch, *next_sibling = scratch + jc, *stack = scratch + 2 * jc;
    int root_head = -1;
    for (int j = 0; j < jc; j++) first_child[j] = next_sibling[j] = -1;
    for (int j = jc - 1; j >= 0; j--) {
        int p = s->parents[j];
        int *head = p < 0 ? &root_head : &first_child[p];
        next_sibling[j] = *head;
        *head = j;
    }
    for (int j = 0; j < jc; j++) depth[j] = s->parents[j] < 0 ? 0 : depth[s->parents[j]] + 1;
    int n = 0, sp = 0;
    if (root_head >= 0) stack[sp++] = root_head;
    while (sp > 0) {
        int j = stack[--sp];
        order[n++] = j;
        if (next_sibling[j] >= 0) stack[sp++] = next_sibling[j];
        if (first_child[j] >= 0) stack[sp++] = first_child[j];
    }
    for (int j = 0; j < jc; j++)
        if (depth[j] >= PM_MAX_JOINT_DEPTH) return 0;
    return 1;
}

static pm_result check_names(const pm_skeleton *s, pm_error *error) {
    for (int j = 0; j < s->joint_count; j++) {
        const char *n = s->names[j];
        size_t len = strlen(n);
        int q = (int)PM_MIN(len, (size_t)PM_BVH_NAME_QUOTE);
        const char *more = len > PM_BVH_NAME_QUOTE ? "..." : "";
        if (len > PM_BVH_MAX_NAME_LENGTH)
            return pm_fail(error, PM_ERR_LIMIT, "bvh write: joint %d name '%.*s%s' has %zu bytes (the reader takes at most %d)",
                           j, q, n, more, len, PM_BVH_MAX_NAME_LENGTH);
        int bad = n[0] == ' ' || n[0] == '\t' || n[len - 1] == ' ' || n[len - 1] == '\t';
        for (const char *c = n; *c && !bad; c++) bad = !pm_bvh_name_byte_ok(*c);
        if (bad)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "bvh write: joint %d name '%.*s%s' has a control character, a brace or outer spaces", j, q, n,
                           more);
    }
    return PM_OK;
}

/* The frame time as the reader will see it: the text written, read back. */
static pm_result check_frame_time(const pm_clip *c, pm_error *error) {
    char text[64];
    size_t n;
    double back = 0.0;
    if (!format_number(text, &n, c->frame_time, 9) || pm_bvh_parse_double(&back, text, n) != 0 ||
        back < PM_BVH_MIN_FRAME_TIME)
        return pm_fail(error, PM_ERR_NUMERIC, "bvh write: '%s': Frame Time %s s is below %g s (the reader refuses it)",
                       c->name ? c->name : "clip", text, PM_BVH_MIN_FRAME_TIME);
    if (back > PM_BVH_MAX_FRAME_TIME)
        return pm_fail(error, PM_ERR_NUMERIC, "bvh write: '%s': Frame Time %s s is above %g s (the reader refuses it)",
                       c->name ? c->name : "clip", text, PM_BVH_MAX_FRAME_TIME);
    return PM_OK;
}

static pm_result check_write_def(const pm_bvh_write_def *d, pm_error *error) {
    pm_result r = pm_bvh_check_units(d->unit_scale, d->up_axis, "bvh write", "0 (the clip's) or positive", "-1", error);
    if (r != PM_OK) return r;
    if (d->precision < 0 || d->precision > 9)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "bvh write: precision %d is outside 0..9", d->precision);
    return PM_OK;
}

pm_result pm_bvh_write_memory(char **out_data, size_t *out_size, const pm_clip *clip, const pm_bvh_write_def *def_in,
                              pm_error *error) {
    if (!out_data || !out_size || !clip)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_bvh_write_memory: NULL argument");
    *out_data = NULL;
    *out_size = 0;
    pm_bvh_write_def def = def_in ? *def_in : pm_default_bvh_write_def();
    pm_result r = check_write_def(&def, error);
    if (r == PM_OK && (r = pm_clip_validate(clip, error)) != PM_OK) pm_error_prefix(error, "bvh write");
    if (r == PM_OK) r = check_names(&clip->skeleton, error);
    if (r == PM_OK) r = check_frame_time(clip, error);
    if (r != PM_OK) return r;

    const pm_skeleton *s = &clip->skeleton;
    int jc = s->joint_count;
    const pm_allocator *a = &clip->allocator;
    write_ctx w;
    memset(&w, 0, sizeof w);
    out_buf buf = {NULL, 0, 0, a, 0, 0};
    w.clip = clip;
    w.buf = &buf;
    w.layout = (joint_out *)pm_alloc_array(a, (size_t)jc, sizeof(joint_out), 0);
    int *ints = (int *)pm_alloc_array(a, (size_t)jc * 5 + 1, sizeof(int), 0);
    if (!w.layout || !ints) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "bvh write: out of memory");
        goto done;
    }
    w.order = ints;
    w.depth = ints + jc;
    if (!depth_first_order(w.order, w.depth, ints + 2 * jc, s)) {
        r = pm_fail(error, PM_ERR_LIMIT, "bvh write: '%s': the hierarchy is deeper than %d joints",
                    clip->name ? clip->name : "clip", PM_MAX_JOINT_DEPTH);
        goto done;
    }
    float scale = def.unit_scale > 0.0f ? def.unit_scale : clip->unit_scale;
    w.scale = scale > 0.0f && isfinite(scale) ? scale : 1.0;
    w.z_up = (def.up_axis >= 0 ? def.up_axis : (int)clip->source_up) == PM_UP_Z;
    w.precision = def.precision ? def.precision : 9;
    int built_in_code = 1;
    for (int j = 0; j < jc; j++)
        if (s->channel_counts[j]) built_in_code = 0;
    for (int j = 0; j < jc; j++) layout_joint(&w.layout[j], clip, j, built_in_code, w.z_up);
    int channels = 0;
    for (int j = 0; j < jc; j++) channels += w.layout[j].count;
    if (!pm_bvh_motion_fits(clip->frame_count, jc, channels)) {
        r = pm_fail(error, PM_ERR_LIMIT,
                    "bvh write: '%s': Frames: %d frames of %d joints with %d channel%s: the reader refuses more than "
                    "%.0f MiB of motion with fewer than one channel per %d joints",
                    clip->name ? clip->name : "clip", clip->frame_count, jc, channels, channels == 1 ? "" : "s",
                    PM_BVH_SPARSE_BYTES / 1048576.0, PM_BVH_MAX_JOINTS_PER_CHANNEL);
        goto done;
    }
    /* Guess the size once so the buffer rarely regrows. */
    double values = channels;
    buf_reserve(&buf, (size_t)PM_MIN(4096.0 + jc * 160.0 + values * clip->frame_count * 12.0, 1073741824.0));
    buf.failed = 0; /* the guess may be too big for this allocator; grow on demand instead */
    write_hierarchy(&w);
    write_motion(&w);
    if (buf.failed) r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "bvh write: out of memory for the text");
    else if (buf.overflow) {
        char frame[32] = ""; /* hierarchy values (offsets) have no frame */
        if (w.bad_frame >= 0) snprintf(frame, sizeof frame, " frame %d", w.bad_frame);
        r = pm_fail(error, PM_ERR_NUMERIC, "bvh write: '%s': joint '%.*s'%s %s: a value exceeds the float range in units of %g m",
                    clip->name ? clip->name : "clip", PM_BVH_NAME_QUOTE, s->names[w.bad_joint], frame, w.bad_field,
                    w.scale);
    }
done:
    pm_free(a, w.layout);
    pm_free(a, ints);
    if (r != PM_OK) {
        pm_free(a, buf.data);
        return r;
    }
    *out_data = buf.data;
    *out_size = buf.size;
    return PM_OK;
}

/* ---- files ---- */

pm_result pm_bvh_write_file(const pm_clip *clip, const char *path, const pm_bvh_write_def *def, pm_error *error) {
    if (!clip) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_bvh_write_file: clip is NULL");
    if (!path) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_bvh_write_file: path is NULL");
    if (!path[0]) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_bvh_write_file: path is empty");
    char *data;
    size_t size;
    pm_result r = pm_bvh_write_memory(&data, &size, clip, def, error);
    if (r != PM_OK) {
        pm_error_prefix(error, "%s", path);
        return r;
    }
    r = pm_file_write(path, data, size, error);
    pm_free_buffer(data, &clip->allocator);
    return r;
}
