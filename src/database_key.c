/* Build keys (PS11) and the fixed-width file records of the schema and settings: everything a
 * key hashes is what makes a build differ. */
#include <stdio.h>

#include "database_internal.h"

static void hash_str(pm_hasher *h, const char *s) {
    uint32_t n = s ? (uint32_t)strlen(s) : 0xFFFFFFFFu;
    pm_hasher_update(h, &n, sizeof n);
    if (s) pm_hasher_update(h, s, n);
}

void pm_clip_fingerprint(uint64_t out[2], const pm_clip *c) {
    const pm_skeleton *s = &c->skeleton;
    pm_hasher h;
    pm_hasher_init(&h, 0x736B656Cull);
    uint32_t joints = (uint32_t)s->joint_count;
    pm_hasher_update(&h, &joints, sizeof joints);
    for (int j = 0; j < s->joint_count; j++) {
        hash_str(&h, s->names[j]);
        pm_hasher_update(&h, &s->parents[j], sizeof s->parents[j]);
        pm_hasher_update(&h, &s->rest_translations[j], sizeof(pm_vec3));
        pm_hasher_update(&h, &s->rest_rotations[j], sizeof(pm_quat));
    }
    /* End Sites change the build: a foot without a toe joint stands on its End Site (the floor
     * under every root) and mirror corrections meet them. */
    for (int j = 0; j < s->joint_count && s->has_end_site && s->end_sites; j++) {
        if (!s->has_end_site[j]) continue;
        int32_t joint = j;
        pm_hasher_update(&h, &joint, sizeof joint);
        pm_hasher_update(&h, &s->end_sites[j], sizeof(pm_vec3));
    }
    out[0] = pm_hasher_final(&h);
    pm_hasher_init(&h, 0x6D6F7469ull);
    uint32_t counts[2] = {(uint32_t)c->frame_count, (uint32_t)c->curve_count};
    pm_hasher_update(&h, counts, sizeof counts);
    pm_hasher_update(&h, &c->frame_time, sizeof c->frame_time);
    size_t n = (size_t)c->frame_count * s->joint_count;
    pm_hasher_update(&h, c->rotations, n * sizeof(pm_quat));
    pm_hasher_update(&h, c->translations, n * sizeof(pm_vec3));
    for (int i = 0; i < c->curve_count; i++) {
        hash_str(&h, c->curves[i].name);
        pm_hasher_update(&h, c->curves[i].values, (size_t)c->frame_count * sizeof(float));
    }
    out[1] = pm_hasher_final(&h);
}

/* Fixed-size names, zero-filled past the text so that files are byte-identical. */
static void copy_name(char *dst, const char *src) {
    memset(dst, 0, PM_NAME_SIZE);
    memcpy(dst, src, strnlen(src, PM_NAME_SIZE - 1));
}

void pm_pmdb_channel_from_def(pmdb_channel *o, const pm_channel_def *c) {
    memset(o, 0, sizeof *o);
    o->kind = (uint32_t)c->kind;
    copy_name(o->name, c->name);
    copy_name(o->bone, c->bone);
    copy_name(o->curve, c->curve);
    copy_name(o->group, c->group);
    o->weight = c->weight;
    o->offset = c->offset;
    o->components = (uint32_t)c->components;
    o->axis = (uint32_t)c->axis;
    o->size = (uint32_t)c->size;
    o->parent = c->parent;
    o->role = c->role;
    o->sample_count = (uint32_t)c->sample_count;
    for (int k = 0; k < c->sample_count && k < PM_MAX_TRAJECTORY_SAMPLES; k++) {
        o->samples[k].offset = c->samples[k].offset;
        o->samples[k].flags = c->samples[k].flags;
        o->samples[k].weight = c->samples[k].weight;
    }
}

void pm_pmdb_settings_from_def(pmdb_settings *o, const pm_database_def *d) {
    memset(o, 0, sizeof *o);
    copy_name(o->schema_name, d->schema->name);
    o->fps = d->fps;
    o->mirror = (uint32_t)d->mirror;
    o->pca_components = (uint32_t)d->pca_components;
    o->kdtree_leaf_size = (uint32_t)d->kdtree_leaf_size;
    o->exact_components = (uint32_t)d->exact_components;
    o->exact_leaf_size = (uint32_t)d->exact_leaf_size;
    /* Brute force's bit says nothing (it always answers): with or without it, the same bytes. */
    o->omitted_modes = PMDB_TREE_MODES & ~d->search_modes;
    o->trim_rest_first_frame = (uint32_t)d->trim_rest_first_frame;
    o->exclude_start = d->exclude_start;
    o->exclude_end = d->exclude_end;
    o->mirror_axis = d->mirror_axis;
    o->root_facing_mode = (uint32_t)d->root.facing_mode;
    o->root_hips_axis[0] = d->root.hips_axis.x;
    o->root_hips_axis[1] = d->root.hips_axis.y;
    o->root_hips_axis[2] = d->root.hips_axis.z;
    o->root_ground_mode = (uint32_t)d->root.ground_mode;
    o->root_position_smoothing = d->root.position_smoothing;
    o->root_facing_smoothing = d->root.facing_smoothing;
}

void pm_database_key(uint64_t key[2], uint64_t *out_fingerprints, const pm_database_def *def, const pm_asset_def *assets,
                     int n) {
    pm_hasher h[2];
    for (int half = 0; half < 2; half++) pm_hasher_init(&h[half], half ? 0x6B657932ull : 0x6B657931ull);
    /* Every input goes to both halves; a clip is read once, for its fingerprint. */
#define BOTH(data, size)                                                                                               \
    do {                                                                                                               \
        pm_hasher_update(&h[0], data, size);                                                                           \
        pm_hasher_update(&h[1], data, size);                                                                           \
    } while (0)
#define BOTH_STR(str)                                                                                                  \
    do {                                                                                                               \
        hash_str(&h[0], str);                                                                                          \
        hash_str(&h[1], str);                                                                                          \
    } while (0)
    uint32_t version[2] = {PMDB_VERSION, PMDB_BUILDER_REVISION};
    BOTH(version, sizeof version);
    for (int i = 0; i < def->schema->channel_count; i++) {
        pmdb_channel c;
        pm_pmdb_channel_from_def(&c, &def->schema->channels[i]);
        BOTH(&c, sizeof c);
    }
    pmdb_settings st;
    pm_pmdb_settings_from_def(&st, def);
    BOTH(&st, sizeof st);
    int32_t roles[3] = {def->root.hips, def->root.left_upleg, def->root.right_upleg};
    BOTH(roles, sizeof roles);
    BOTH(&n, sizeof n);
    for (int i = 0; i < n; i++) {
        const pm_asset_def *a = &assets[i];
        BOTH_STR(a->name);
        int32_t flags[3] = {a->looping, a->mirror, a->param_count};
        BOTH(flags, sizeof flags);
        float nums[6] = {a->cost_addend, a->exclude_start, a->exclude_end, a->params[0], a->params[1], a->params[2]};
        BOTH(nums, sizeof nums);
        BOTH_STR(a->clip ? a->clip->name : NULL);
        uint64_t fp[2] = {0, 0};
        if (a->clip) {
            pm_clip_fingerprint(fp, a->clip);
            int32_t clip_looping = a->clip->looping;
            BOTH(&clip_looping, sizeof clip_looping);
            BOTH(fp, sizeof fp);
        }
        if (out_fingerprints) memcpy(out_fingerprints + 2 * i, fp, sizeof fp);
        /* Hashed only when given and used, so that keys without one stay what they were. */
        int mirrored = a->mirror < 0 ? def->mirror : a->mirror;
        if (a->mirror_map && a->clip && mirrored) {
            BOTH_STR("mirror_map");
            BOTH(a->mirror_map, (size_t)a->clip->skeleton.joint_count * sizeof(int32_t));
        }
        if (a->range_count > 0) {
            BOTH_STR("ranges");
            int32_t count = a->range_count;
            BOTH(&count, sizeof count);
            for (int k = 0; k < a->range_count; k++) {
                const pm_asset_range *g = &a->ranges[k];
                float span[3] = {g->start, g->end, g->cost_addend};
                int32_t exclude = g->exclude;
                BOTH(span, sizeof span);
                BOTH(&exclude, sizeof exclude);
            }
        }
        if (a->mirror_negate_params && mirrored) {
            BOTH_STR("mirror_negate_params");
            int32_t mask = a->mirror_negate_params;
            BOTH(&mask, sizeof mask);
        }
    }
#undef BOTH
#undef BOTH_STR
    for (int half = 0; half < 2; half++) key[half] = pm_hasher_final(&h[half]);
}

pm_result pm_database_compute_key(char out[33], const pm_database_def *def_in, const pm_asset_def *assets, int n,
                                  pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_compute_key: out_key is NULL");
    if (!def_in) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_compute_key: def is NULL");
    if (!assets && n)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_compute_key: assets is NULL (asset_count %d)", n);
    pm_database_def def;
    pm_schema *storage;
    pm_result r = pm_database_def_resolve(&def, &storage, def_in, error);
    if (r != PM_OK) return r;
    /* A key for inputs no build accepts would name a cache entry that can never exist. */
    if ((r = pm_database_check_inputs(&def, assets, n, error)) == PM_OK) {
        uint64_t key[2];
        pm_database_key(key, NULL, &def, assets, n);
        snprintf(out, 33, "%016llx%016llx", (unsigned long long)key[0], (unsigned long long)key[1]);
    }
    pm_free(def_in->allocator, storage);
    return r;
}

