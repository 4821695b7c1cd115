/* Schema construction, validation, presets and the per-dimension layout. */
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "core.h"
#include "schema_layout.h"

pm_channel_def pm_default_channel_def(pm_feature_kind kind) {
    pm_channel_def c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.weight = kind == PM_FEATURE_PADDING ? 0.0f : 1.0f;
    c.components = PM_COMPONENTS_XYZ;
    c.axis = 2;
    c.size = kind == PM_FEATURE_PADDING ? 1 : 0;
    c.parent = -1;
    for (int i = 0; i < PM_MAX_TRAJECTORY_SAMPLES; i++) c.samples[i].weight = 1.0f;
    return c;
}

void pm_schema_init(pm_schema *s) {
    if (s) memset(s, 0, sizeof *s);
}

static const char *kind_name(pm_feature_kind k) {
    switch (k) {
    case PM_FEATURE_TRAJECTORY: return "Trajectory";
    case PM_FEATURE_POSITION: return "Position";
    case PM_FEATURE_VELOCITY: return "Velocity";
    case PM_FEATURE_HEADING: return "Heading";
    case PM_FEATURE_PHASE: return "Phase";
    case PM_FEATURE_CURVE: return "Curve";
    case PM_FEATURE_PADDING: return "Padding";
    case PM_FEATURE_GROUP: return "Group";
    }
    return "?";
}

int pm_trajectory_flag_size(uint32_t flag) { return flag >= PM_TRAJ_VELOCITY_XY ? 2 : 3; }

int pm_channel_size(const pm_channel_def *c) {
    if (!c) return 0;
    int dims = c->components == PM_COMPONENTS_XY ? 2 : 3;
    switch (c->kind) {
    case PM_FEATURE_TRAJECTORY: {
        int n = 0;
        for (int i = 0; i < c->sample_count && i < PM_MAX_TRAJECTORY_SAMPLES; i++)
            for (uint32_t f = 1; f <= PM_TRAJ_FACING_DIRECTION_XY; f <<= 1)
                if (c->samples[i].flags & f) n += pm_trajectory_flag_size(f);
        return n;
    }
    case PM_FEATURE_POSITION:
    case PM_FEATURE_VELOCITY:
    case PM_FEATURE_HEADING: return dims;
    case PM_FEATURE_PHASE: return 2;
    case PM_FEATURE_CURVE: return 1;
    case PM_FEATURE_PADDING: return c->size;
    case PM_FEATURE_GROUP: return 0;
    }
    return 0;
}

int pm_schema_cardinality(const pm_schema *s) {
    /* -1 for what pm_schema_validate would reject as a channel count: never a read past channels. */
    if (!s || s->channel_count < 0 || s->channel_count > PM_MAX_CHANNELS) return -1;
    /* Nor an int overflow: a padding size is a plain int until pm_schema_validate bounds it. */
    int n = 0;
    for (int i = 0; i < s->channel_count; i++) {
        int size = pm_channel_size(&s->channels[i]);
        if (size < 0 || size > INT_MAX - n) return -1;
        n += size;
    }
    return n;
}

void pm_channel_display_name(char *out, size_t size, const pm_channel_def *c) {
    if (!out || size == 0) return;
    if (!c) {
        out[0] = '\0';
        return;
    }
    /* Bounded by the fields' size: a name that fills its field has no NUL. */
    const int n = PM_NAME_SIZE;
    if (c->name[0]) snprintf(out, size, "%.*s", n, c->name);
    else if (c->kind == PM_FEATURE_CURVE && c->curve[0]) snprintf(out, size, "Curve %.*s", n, c->curve);
    else if (c->bone[0] && c->kind != PM_FEATURE_TRAJECTORY && c->kind != PM_FEATURE_PADDING &&
             c->kind != PM_FEATURE_GROUP)
        snprintf(out, size, "%s %.*s", kind_name(c->kind), n, c->bone);
    else snprintf(out, size, "%s", kind_name(c->kind));
}

static int has_nul(const char *s, size_t n) { return memchr(s, '\0', n) != NULL; }

static pm_result validate_channel(const pm_schema *s, int i, pm_error *error) {
    const pm_channel_def *c = &s->channels[i];
    char name[PM_NAME_SIZE + 32];
    const char *const fields[] = {c->name, c->bone, c->curve, c->group};
    static const char *const field_names[] = {"name", "bone", "curve", "group"};
    for (int f = 0; f < 4; f++)
        if (!has_nul(fields[f], PM_NAME_SIZE))
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "schema channel %d: field '%s' is not NUL-terminated (at most %d bytes)", i, field_names[f],
                           PM_NAME_SIZE - 1);
    /* As the JSON reader and the skeleton refuse them: a newline in a name would break the
     * one-line messages and the text outputs that quote it (a bone with one matches no joint). */
    for (int f = 0; f < 4; f++) {
        char what[64];
        snprintf(what, sizeof what, "schema channel %d: field '%s'", i, field_names[f]);
        pm_result r = pm_check_name(fields[f], what, error);
        if (r != PM_OK) return r;
    }
    pm_channel_display_name(name, sizeof name, c);
    if ((int)c->kind < 0 || c->kind > PM_FEATURE_GROUP)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d: unknown kind %d", i, (int)c->kind);
    if (!isfinite(c->weight) || c->weight < 0.0f)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s): field 'weight' must be finite and >= 0", i,
                       name);
    if (!isfinite(c->offset) || fabsf(c->offset) > 60.0f)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s): field 'offset' must be within +-60 s", i,
                       name);
    if (c->parent < -1 || c->parent >= i)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s): parent %d must be an earlier channel", i,
                       name, c->parent);
    if (c->parent >= 0 && s->channels[c->parent].kind != PM_FEATURE_GROUP)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s): parent %d is not a Group", i, name,
                       c->parent);
    /* A dimension's weight is its channel's times its groups' (times its sample's): bounded so
     * that weighted costs stay far from overflow whatever the data (and dynamic weights of a few
     * times them stay valid). Groups and trajectories are bounded through what they weigh. */
    double w = c->weight;
    for (int p = c->parent, below = i; p >= 0 && p < below; below = p, p = s->channels[p].parent)
        w *= s->channels[p].weight; /* (parents only ever point up: a loop in bad data ends) */
    if (c->kind != PM_FEATURE_GROUP && c->kind != PM_FEATURE_TRAJECTORY && w > PM_MAX_WEIGHT)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "schema channel %d (%s): weight %.9g (times its groups' weights) exceeds %g", i, name, w,
                       (double)PM_MAX_WEIGHT);
    if (c->role < 0 || c->role > 15)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s): role %d is outside 0..15", i, name, c->role);
    switch (c->kind) {
    case PM_FEATURE_TRAJECTORY:
        if (c->sample_count < 1 || c->sample_count > PM_MAX_TRAJECTORY_SAMPLES)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s): %d samples (1..%d)", i, name,
                           c->sample_count, PM_MAX_TRAJECTORY_SAMPLES);
        for (int k = 0; k < c->sample_count; k++) {
            const pm_trajectory_sample *t = &c->samples[k];
            if (!isfinite(t->offset) || fabsf(t->offset) > 60.0f)
                return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s) sample %d: offset must be within +-60 s",
                               i, name, k);
            if (!isfinite(t->weight) || t->weight < 0.0f)
                return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s) sample %d: weight must be finite and >= 0",
                               i, name, k);
            if (w * t->weight > PM_MAX_WEIGHT)
                return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                               "schema channel %d (%s) sample %d: weight %.9g (times the channel's and its groups') exceeds %g",
                               i, name, k, w * t->weight, (double)PM_MAX_WEIGHT);
            if (t->flags == 0 || (t->flags & ~(uint32_t)PM_TRAJ_ALL))
                return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s) sample %d: flags 0x%x are not valid",
                               i, name, k, (unsigned)t->flags);
        }
        break;
    case PM_FEATURE_POSITION:
    case PM_FEATURE_VELOCITY:
    case PM_FEATURE_HEADING:
    case PM_FEATURE_PHASE:
        if (!c->bone[0])
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s): field 'bone' is empty", i, name);
        if (c->bone[0] == '@' && pm_bone_role(c->bone) < 0) /* PM_BONE_ROLES starts with a space */
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s): unknown role '%s' (roles:%s)", i, name,
                           c->bone, PM_BONE_ROLES);
        if (c->components != PM_COMPONENTS_XYZ && c->components != PM_COMPONENTS_XY)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s): components %d is neither xyz (0) nor xy (1)",
                           i, name, (int)c->components);
        if (c->kind == PM_FEATURE_HEADING && (c->axis < 0 || c->axis > 2))
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s): axis %d is not 0, 1 or 2", i, name,
                           c->axis);
        break;
    case PM_FEATURE_CURVE:
        if (!c->curve[0])
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s): field 'curve' is empty", i, name);
        break;
    case PM_FEATURE_PADDING:
        if (c->size < 1 || c->size > 64)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema channel %d (%s): padding size %d is outside 1..64", i,
                           name, c->size);
        break;
    case PM_FEATURE_GROUP: break;
    }
    return PM_OK;
}

pm_result pm_schema_validate(const pm_schema *s, pm_error *error) {
    if (!s) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema is NULL");
    if (!has_nul(s->name, sizeof s->name))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema: field 'name' is not NUL-terminated (at most %d bytes)",
                       (int)sizeof s->name - 1);
    pm_result named = pm_check_name(s->name, "schema: field 'name'", error);
    if (named != PM_OK) return named;
    if (s->channel_count < 1 || s->channel_count > PM_MAX_CHANNELS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema: %d channels (1..%d)", s->channel_count, PM_MAX_CHANNELS);
    for (int i = 0; i < s->channel_count; i++) {
        pm_result r = validate_channel(s, i, error);
        if (r != PM_OK) return r;
    }
    int card = pm_schema_cardinality(s);
    if (card < 1) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "schema: no channel contributes a value");
    if (card > PM_MAX_CARDINALITY)
        return pm_fail(error, PM_ERR_LIMIT, "schema: cardinality %d exceeds %d", card, PM_MAX_CARDINALITY);
    return PM_OK;
}

int pm_schema_add(pm_schema *s, const pm_channel_def *c, pm_error *error) {
    if (!s || !c) {
        pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_schema_add: NULL argument");
        return -1;
    }
    /* The count indexes the slot the channel goes to: a garbage one (a schema never given to
     * pm_schema_init) must not become a write outside channels. */
    if (s->channel_count < 0) {
        pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_schema_add: the schema's channel_count is %d (pm_schema_init it first)",
                s->channel_count);
        return -1;
    }
    if (s->channel_count >= PM_MAX_CHANNELS) {
        pm_fail(error, PM_ERR_LIMIT, "schema: more than %d channels", PM_MAX_CHANNELS);
        return -1;
    }
    s->channels[s->channel_count] = *c;
    if (validate_channel(s, s->channel_count, error) != PM_OK) return -1;
    /* Refused here rather than at validation or the build, where the channel to blame is gone. */
    int card = pm_schema_cardinality(s), size = pm_channel_size(c);
    if (card >= 0 && size > 0 && card + size > PM_MAX_CARDINALITY) {
        char name[PM_NAME_SIZE * 2];
        pm_channel_display_name(name, sizeof name, c);
        pm_fail(error, PM_ERR_LIMIT, "schema channel %d (%s): %d more value%s would bring the cardinality to %d, over %d",
                s->channel_count, name, size, size == 1 ? "" : "s", card + size, PM_MAX_CARDINALITY);
        return -1;
    }
    return s->channel_count++;
}

pm_result pm_schema_time_window(float *past, float *future, const pm_schema *s, pm_error *error) {
    if (!past) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_schema_time_window: out_past is NULL");
    if (!future) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_schema_time_window: out_future is NULL");
    if (!s) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_schema_time_window: schema is NULL");
    if (s->channel_count < 0 || s->channel_count > PM_MAX_CHANNELS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_schema_time_window: %d channels is outside 0..%d",
                       s->channel_count, PM_MAX_CHANNELS);
    float p = 0.0f, f = 0.0f;
    for (int i = 0; i < s->channel_count; i++) {
        const pm_channel_def *c = &s->channels[i];
        if (c->kind == PM_FEATURE_TRAJECTORY) {
            if (c->sample_count < 0 || c->sample_count > PM_MAX_TRAJECTORY_SAMPLES)
                return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                               "pm_schema_time_window: schema channel %d: %d trajectory samples is outside 0..%d", i,
                               c->sample_count, PM_MAX_TRAJECTORY_SAMPLES);
            for (int k = 0; k < c->sample_count; k++) {
                if (!isfinite(c->samples[k].offset))
                    return pm_fail(error, PM_ERR_NUMERIC,
                                   "pm_schema_time_window: schema channel %d sample %d: offset %g is not finite", i, k,
                                   (double)c->samples[k].offset);
                p = PM_MAX(p, 0.0f - c->samples[k].offset); /* (0 - 0 is +0; -0 printed as "-0") */
                f = PM_MAX(f, c->samples[k].offset);
            }
        } else if (c->kind != PM_FEATURE_PADDING && c->kind != PM_FEATURE_GROUP) {
            if (!isfinite(c->offset))
                return pm_fail(error, PM_ERR_NUMERIC, "pm_schema_time_window: schema channel %d: offset %g is not finite",
                               i, (double)c->offset);
            p = PM_MAX(p, 0.0f - c->offset);
            f = PM_MAX(f, c->offset);
        }
    }
    *past = p;
    *future = f;
    return PM_OK;
}

/* ---- presets ---- */

static const char *const preset_names[] = {"ue-locomotion", "holden27", NULL};
const char *const *pm_schema_preset_names(void) { return preset_names; }

static void add_bone(pm_schema *s, pm_feature_kind kind, const char *bone, const char *group, float weight) {
    pm_channel_def c = pm_default_channel_def(kind);
    snprintf(c.bone, sizeof c.bone, "%s", bone);
    snprintf(c.group, sizeof c.group, "%s", group);
    c.weight = weight;
    pm_schema_add(s, &c, NULL);
}

static void add_traj_sample(pm_channel_def *c, float offset, uint32_t flags, float weight) {
    pm_trajectory_sample *t = &c->samples[c->sample_count++];
    t->offset = offset;
    t->flags = flags;
    t->weight = weight;
}

pm_result pm_schema_preset(pm_schema *out, const char *name, pm_error *error) {
    if (!out || !name) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_schema_preset: NULL argument");
    pm_schema_init(out);
    snprintf(out->name, sizeof out->name, "%s", name);
    if (strcmp(name, "ue-locomotion") == 0) {
        /* UE 5's default trajectory (PS2) plus the feet and pelvis its locomotion samples use. */
        pm_channel_def t = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
        add_traj_sample(&t, -0.4f, PM_TRAJ_POSITION_XY, 0.4f);
        add_traj_sample(&t, 0.0f, PM_TRAJ_VELOCITY_XY | PM_TRAJ_FACING_DIRECTION_XY, 2.0f);
        add_traj_sample(&t, 0.35f, PM_TRAJ_POSITION_XY | PM_TRAJ_FACING_DIRECTION_XY, 0.7f);
        add_traj_sample(&t, 0.7f, PM_TRAJ_VELOCITY_XY | PM_TRAJ_POSITION_XY | PM_TRAJ_FACING_DIRECTION_XY, 0.5f);
        pm_schema_add(out, &t, NULL);
        add_bone(out, PM_FEATURE_POSITION, "@left_foot", "", 1.0f);
        add_bone(out, PM_FEATURE_VELOCITY, "@left_foot", "", 1.0f);
        add_bone(out, PM_FEATURE_POSITION, "@right_foot", "", 1.0f);
        add_bone(out, PM_FEATURE_VELOCITY, "@right_foot", "", 1.0f);
        add_bone(out, PM_FEATURE_VELOCITY, "@hips", "pelvis", 1.0f);
        return PM_OK;
    }
    if (strcmp(name, "holden27") == 0) {
        /* Holden's Motion-Matching database features. His weights divide the normalisation
         * scale, so they multiply differences linearly: ours multiply squared differences,
         * hence the squares (0.75^2, 1.5^2). */
        add_bone(out, PM_FEATURE_POSITION, "@left_foot", "foot_position", 0.5625f);
        add_bone(out, PM_FEATURE_POSITION, "@right_foot", "foot_position", 0.5625f);
        add_bone(out, PM_FEATURE_VELOCITY, "@left_foot", "foot_velocity", 1.0f);
        add_bone(out, PM_FEATURE_VELOCITY, "@right_foot", "foot_velocity", 1.0f);
        add_bone(out, PM_FEATURE_VELOCITY, "@hips", "hip_velocity", 1.0f);
        pm_channel_def p = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
        snprintf(p.name, sizeof p.name, "Trajectory positions");
        pm_channel_def d = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
        snprintf(d.name, sizeof d.name, "Trajectory directions");
        d.weight = 2.25f;
        for (int k = 1; k <= 3; k++) {
            add_traj_sample(&p, (float)(20 * k) / 60.0f, PM_TRAJ_POSITION_XY, 1.0f);
            add_traj_sample(&d, (float)(20 * k) / 60.0f, PM_TRAJ_FACING_DIRECTION_XY, 1.0f);
        }
        pm_schema_add(out, &p, NULL);
        pm_schema_add(out, &d, NULL);
        return PM_OK;
    }
    return pm_fail(error, PM_ERR_NOT_FOUND, "schema preset '%s' does not exist (ue-locomotion, holden27)", name);
}

/* ---- layout ---- */

pm_result pm_schema_layout_compute(pm_schema_layout *out, const pm_schema *s, pm_error *error) {
    pm_result r = pm_schema_validate(s, error);
    if (r != PM_OK) return r;
    memset(out, 0, sizeof *out);
    /* Normalisation keys: (kind, sub-feature, unit size, group name) share one deviation.
     * Keys are numbered in order of first appearance, so layouts are deterministic. A key is
     * kept as the channel that introduced it (kind and group follow from it): 6 bytes, so that
     * loading a database stays light on the small stacks of job-system threads. */
    typedef struct key {
        int16_t channel, size;
        uint8_t sub, own;
    } key;
    key keys[PM_MAX_CARDINALITY];
    const char *channel_group[PM_MAX_CHANNELS]; /* the group a channel normalises in, "" = its own */
    int nkeys = 0;
    int d = 0;
    for (int i = 0; i < s->channel_count; i++) {
        const pm_channel_def *c = &s->channels[i];
        float w = c->weight;
        const char *group = c->group;
        for (int p = c->parent; p >= 0; p = s->channels[p].parent) {
            w *= s->channels[p].weight;
            if (!group[0]) group = s->channels[p].group;
        }
        channel_group[i] = group;
        int size = pm_channel_size(c);
        int units = 0;
        int unit_sub[PM_MAX_TRAJECTORY_SAMPLES * 8], unit_size[PM_MAX_TRAJECTORY_SAMPLES * 8];
        float unit_w[PM_MAX_TRAJECTORY_SAMPLES * 8];
        if (c->kind == PM_FEATURE_TRAJECTORY) {
            for (int k = 0; k < c->sample_count; k++)
                for (uint32_t f = 1; f <= PM_TRAJ_FACING_DIRECTION_XY; f <<= 1)
                    if (c->samples[k].flags & f) {
                        unit_sub[units] = (int)f;
                        unit_size[units] = pm_trajectory_flag_size(f);
                        unit_w[units] = w * c->samples[k].weight;
                        units++;
                    }
        } else if (size > 0) {
            unit_sub[0] = 0;
            unit_size[0] = size;
            unit_w[0] = w;
            units = 1;
        }
        for (int u = 0; u < units; u++) {
            /* A named group is shared by every unit of the same kind, sub-feature and size
             * (left and right foot positions together); without a name a channel normalises
             * alone, all its samples of one trajectory flag sharing one deviation. */
            int own = group[0] == '\0';
            int id = -1;
            for (int k = 0; k < nkeys && id < 0; k++)
                if (s->channels[keys[k].channel].kind == c->kind && keys[k].sub == unit_sub[u] &&
                    keys[k].size == unit_size[u] && keys[k].own == own &&
                    (own ? keys[k].channel == i : strcmp(channel_group[keys[k].channel], group) == 0))
                    id = k;
            if (id < 0) {
                id = nkeys++;
                keys[id].channel = (int16_t)i;
                keys[id].size = (int16_t)unit_size[u];
                keys[id].sub = (uint8_t)unit_sub[u];
                keys[id].own = (uint8_t)own;
            }
            for (int e = 0; e < unit_size[u]; e++, d++) {
                out->dim_channel[d] = (int16_t)i;
                out->dim_group[d] = (int16_t)id;
                out->dim_weight[d] = c->kind == PM_FEATURE_PADDING ? 0.0f : unit_w[u];
            }
        }
    }
    out->cardinality = d;
    out->group_count = nkeys;
    return PM_OK;
}
