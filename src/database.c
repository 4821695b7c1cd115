/* Read-only accessors of a built or loaded database. */
#include <math.h>
#include <stdio.h>

#include "clip_internal.h"
#include "database_internal.h"

void pm_database_get_info(pm_database_info *out, const pm_database *db) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!db) return;
    const pmdb_header *h = db->header;
    out->poses = (int)h->pose_count;
    out->assets = (int)h->asset_count;
    out->cardinality = (int)h->cardinality;
    out->channels = (int)h->channel_count;
    out->unique_vectors = (int)h->vector_count;
    out->search_modes = db->settings.search_modes; /* (brute force's bit always: nothing to leave out) */
    out->unique_pca_vectors =
        out->search_modes & PM_SEARCH_MODE_BIT(PM_SEARCH_PCAKDTREE) ? (int)h->kd_point_count : -1;
    out->searchable_poses = (int)h->searchable_poses;
    out->block_transition_poses = (int)h->block_transition_poses;
    out->excluded_poses = (int)h->excluded_poses;
    out->pca_components = (int)h->pca_components;
    out->pca_explained_variance = pm_database_explained_variance(db, (int)h->pca_components);
    out->exact_components = (int)h->exact_components;
    out->exact_explained_variance = pm_database_explained_variance(db, (int)h->exact_components);
    out->fps = h->fps;
    out->bytes = db->size;
    snprintf(out->key, sizeof out->key, "%016llx%016llx", (unsigned long long)h->key[0], (unsigned long long)h->key[1]);
    memcpy(out->schema_name, db->schema.name, sizeof out->schema_name);
}

float pm_database_explained_variance(const pm_database *db, int k) {
    if (!db || k < 1) return 0.0f;
    double total = 0.0, part = 0.0;
    for (int i = 0; i < db->card; i++) {
        double e = db->pca_eigen[i] > 0.0f ? db->pca_eigen[i] : 0.0;
        total += e;
        if (i < k) part += e;
    }
    return total > 0.0 ? (float)(part / total) : 0.0f;
}

const pm_schema *pm_database_schema(const pm_database *db) { return db ? &db->schema : NULL; }
const pm_database_def *pm_database_settings(const pm_database *db) { return db ? &db->settings : NULL; }

int pm_database_asset_count(const pm_database *db) { return db ? (int)db->header->asset_count : 0; }

pm_result pm_database_asset(pm_asset_info *out, const pm_database *db, int asset, pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_asset: out is NULL");
    if (!db) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_asset: database is NULL");
    if (asset < 0 || (uint32_t)asset >= db->header->asset_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_asset: asset %d is outside 0..%lld", asset,
                       (long long)db->header->asset_count - 1);
    const pmdb_asset *a = &db->assets[asset];
    out->name = db->strings + a->name;
    out->first_pose = (int)a->first_pose;
    out->pose_count = (int)a->pose_count;
    out->looping = (a->flags & PMDB_ASSET_LOOPING) != 0;
    out->mirrored = (a->flags & PMDB_ASSET_MIRRORED) != 0;
    out->source_asset = a->source_asset;
    out->cost_addend = a->cost_addend;
    out->param_count = (int)a->param_count;
    for (int i = 0; i < 3; i++) out->params[i] = a->params[i];
    const pmdb_asset_source *src = &db->sources[asset];
    out->joint_count = (int)src->joint_count;
    out->mirror_map = out->mirrored ? db->mirror_maps + src->mirror_map : NULL;
    out->mirror_axis = out->mirrored ? src->mirror_axis : -1;
    return PM_OK;
}

static pm_result check_clip(const pm_database *db, const char *fn, int asset, const pm_clip *clip, pm_error *error) {
    if (!db || !clip) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    if (asset < 0 || (uint32_t)asset >= db->header->asset_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "%s: asset %d is outside 0..%lld", fn, asset,
                       (long long)db->header->asset_count - 1);
    pm_result r = pm_clip_validate(clip, error);
    if (r != PM_OK) {
        pm_error_prefix(error, "%s", fn);
        return r;
    }
    const char *name = db->strings + db->assets[asset].name, *clip_name = clip->name ? clip->name : "(unnamed)";
    const pmdb_asset_source *s = &db->sources[asset];
    if ((uint32_t)clip->skeleton.joint_count != s->joint_count)
        return pm_fail(error, PM_ERR_MISMATCH, "asset '%s' was made from a clip of %u joints, clip '%s' has %d", name,
                       s->joint_count, clip_name, clip->skeleton.joint_count);
    if ((uint32_t)clip->frame_count != s->frame_count || clip->frame_time != s->frame_time)
        return pm_fail(error, PM_ERR_MISMATCH, "asset '%s' was made from %u frames of %s s, clip '%s' has %d of %s s", name,
                       s->frame_count, pm_float_text(s->frame_time).text, clip_name, clip->frame_count,
                       pm_float_text(clip->frame_time).text);
    uint64_t fp[2];
    pm_clip_fingerprint(fp, clip);
    if (fp[0] != s->skeleton_hash)
        return pm_fail(error, PM_ERR_MISMATCH,
                       "asset '%s' was made from another skeleton of %u joints (clip '%s' differs in names, parents, "
                       "rest pose or End Sites)",
                       name, s->joint_count, clip_name);
    if (fp[1] != s->motion_hash)
        return pm_fail(error, PM_ERR_MISMATCH, "asset '%s' was made from other frames or curves than clip '%s' has", name,
                       clip_name);
    return PM_OK;
}

pm_result pm_database_asset_check_clip(const pm_database *db, int asset, const pm_clip *clip, pm_error *error) {
    return check_clip(db, "pm_database_asset_check_clip", asset, clip, error);
}

pm_result pm_database_asset_clip(pm_clip *out, const pm_database *db, int asset, const pm_clip *source,
                                 pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_asset_clip: out is NULL");
    pm_result r = check_clip(db, "pm_database_asset_clip", asset, source, error);
    if (r == PM_OK && out == source)
        r = pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_asset_clip: out is the source clip");
    if (r != PM_OK) {
        if (out != source) memset(out, 0, sizeof *out);
        return r;
    }
    const pmdb_asset *a = &db->assets[asset];
    const pmdb_asset_source *s = &db->sources[asset];
    pm_prepare_mirror mirror = {db->mirror_maps + s->mirror_map, s->mirror_axis, NULL, NULL};
    const int mirrored = (a->flags & PMDB_ASSET_MIRRORED) != 0, looping = (a->flags & PMDB_ASSET_LOOPING) != 0;
    r = pm_prepare_clip(out, NULL, source, &db->settings, mirrored ? &mirror : NULL, looping, error);
    if (r != PM_OK) pm_error_prefix(error, "asset '%s'", db->strings + a->name);
    else if ((uint32_t)out->frame_count != a->pose_count) {
        /* The recorded clip and settings made these poses: only a library whose preparation
         * changed since the build could get here (the builder revision keeps caches apart). */
        r = pm_fail(error, PM_ERR_MISMATCH, "asset '%s': %d frames prepared, the database holds %u poses",
                    db->strings + a->name, out->frame_count, a->pose_count);
        pm_clip_destroy(out);
    }
    return r;
}

pm_result pm_database_asset_pose_at(int *out_pose, const pm_database *db, int asset, float time, pm_error *error) {
    if (!out_pose) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_asset_pose_at: out_pose is NULL");
    *out_pose = -1;
    if (!db) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_asset_pose_at: database is NULL");
    if (asset < 0 || (uint32_t)asset >= db->header->asset_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_asset_pose_at: asset %d is outside 0..%lld", asset,
                       (long long)db->header->asset_count - 1);
    if (!isfinite(time))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_asset_pose_at: time %g is not finite", (double)time);
    const pmdb_asset *a = &db->assets[asset];
    const double n = (double)a->pose_count;
    /* In double: a float time of hours still lands on the right frame. */
    double f = floor((double)time * db->header->fps + 0.5);
    if (a->flags & PMDB_ASSET_LOOPING) {
        f = fmod(f, n);
        if (f < 0.0) f += n;
    } else {
        f = f < 0.0 ? 0.0 : (f > n - 1.0 ? n - 1.0 : f);
    }
    *out_pose = (int)a->first_pose + (int)f;
    return PM_OK;
}

int pm_database_find_asset(const pm_database *db, const char *name) {
    if (!db || !name) return -1;
    for (uint32_t i = 0; i < db->header->asset_count; i++)
        if (!strcmp(db->strings + db->assets[i].name, name)) return (int)i;
    return -1;
}

int pm_database_pose_count(const pm_database *db) { return db ? (int)db->header->pose_count : 0; }

pm_result pm_database_pose(pm_pose_info *out, const pm_database *db, int pose, pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_pose: out is NULL");
    if (!db) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_pose: database is NULL");
    if (pose < 0 || (uint32_t)pose >= db->header->pose_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_pose: pose %d is outside 0..%lld", pose,
                       (long long)db->header->pose_count - 1);
    uint64_t m = db->meta[pose];
    out->asset = (int)PM_META_ASSET(m);
    out->frame = pose - (int)db->assets[out->asset].first_pose;
    out->time = (float)out->frame / db->header->fps;
    out->block_transition = (int)PM_META_BLOCKED(m);
    out->cost_addend = pm_half_to_float(PM_META_ADDEND(m));
    out->vector = (int)PM_META_VECTOR(m);
    return PM_OK;
}

const float *pm_database_offsets(const pm_database *db) { return db ? db->offset : NULL; }
const float *pm_database_scales(const pm_database *db) { return db ? db->scale : NULL; }
const float *pm_database_weights_sqrt(const pm_database *db) { return db ? db->wsqrt : NULL; }

pm_result pm_database_pose_features(float *out, const pm_database *db, int pose, pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_pose_features: out is NULL");
    if (!db) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_pose_features: database is NULL");
    if (pose < 0 || (uint32_t)pose >= db->header->pose_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_pose_features: pose %d is outside 0..%lld", pose,
                       (long long)db->header->pose_count - 1);
    const float *row = pm_db_row(db, PM_META_VECTOR(db->meta[pose]));
    for (int d = 0; d < db->card; d++) out[d] = row[d] * db->scale[d] + db->offset[d];
    return PM_OK;
}

int pm_database_dim_channel(const pm_database *db, int dim) {
    if (!db || dim < 0 || dim >= db->card) return -1;
    return db->layout.dim_channel[dim];
}

pm_result pm_database_channel_name(char *out, size_t size, const pm_database *db, int channel, pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_channel_name: out is NULL");
    if (size == 0) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_channel_name: size is 0");
    out[0] = '\0';
    if (!db) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_channel_name: database is NULL");
    if (channel < 0 || channel >= db->channel_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_channel_name: channel %d is outside 0..%d", channel,
                       db->channel_count - 1);
    pm_channel_display_name(out, size, &db->schema.channels[channel]);
    return PM_OK;
}

const float *pm_database_values(const pm_database *db, int *rows, int *stride) {
    if (rows) *rows = db ? (int)db->header->searchable_vectors : 0;
    if (stride) *stride = db ? db->stride : 0;
    return db ? db->values : NULL;
}

pm_result pm_database_clip_lead_in(float *out_seconds, const pm_database *db, const pm_clip *clip, pm_error *error) {
    if (!out_seconds || !db || !clip) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_clip_lead_in: NULL argument");
    *out_seconds = 0.0f;
    pm_result r = pm_clip_validate(clip, error);
    if (r != PM_OK) pm_error_prefix(error, "pm_database_clip_lead_in");
    int frames = 0;
    if (r == PM_OK) r = pm_clip_lead_in_frames(&frames, clip, &db->settings, error);
    if (r == PM_OK) *out_seconds = (float)frames * clip->frame_time;
    return r;
}

pm_result pm_database_clip_frame_row(int *out_row, const pm_database *db, const pm_clip *clip, int frame,
                                     pm_error *error) {
    if (!out_row || !db || !clip)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_clip_frame_row: NULL argument");
    *out_row = -1;
    pm_result r = pm_clip_validate(clip, error);
    if (r != PM_OK) {
        pm_error_prefix(error, "pm_database_clip_frame_row");
        return r;
    }
    const char *name = clip->name ? clip->name : "(unnamed)";
    if (frame < 0 || frame >= clip->frame_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "clip '%s': frame %d is outside 0..%d", name, frame,
                       clip->frame_count - 1);
    int lead = 0;
    if ((r = pm_clip_lead_in_frames(&lead, clip, &db->settings, error)) != PM_OK) return r;
    if (frame < lead)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "clip '%s': frame %d is a rest-pose lead-in frame the database drops (its motion starts at "
                       "frame %d)",
                       name, frame, lead);
    /* The clip as pm_prepare_clip sees it after the trim: only its frame count and rate matter. */
    pm_clip kept = *clip;
    kept.frame_count -= lead;
    if (!pm_clip_needs_resample(&kept, &db->settings)) {
        *out_row = frame - lead;
        return PM_OK;
    }
    /* Refused as pm_clip_resample refuses it (a Frame Time of 1e30 s): the row would not fit an int. */
    double step;
    int count;
    if ((r = pm_clip_resample_count(&count, &step, &kept, db->settings.fps, error)) != PM_OK) return r;
    double row = floor((double)(frame - lead) * kept.frame_time / step + 0.5);
    *out_row = (int)PM_MIN(row, (double)count - 1.0);
    return PM_OK;
}

pm_result pm_database_clip_queries(float **out_rows, int *out_count, const pm_database *db, const pm_clip *clip,
                                   pm_error *error) {
    if (!out_rows || !out_count || !db || !clip)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_clip_queries: NULL argument");
    *out_rows = NULL;
    *out_count = 0;
    pm_result r = pm_clip_validate(clip, error);
    if (r != PM_OK) {
        pm_error_prefix(error, "pm_database_clip_queries");
        return r;
    }
    pm_clip prepared;
    if ((r = pm_prepare_clip(&prepared, NULL, clip, &db->settings, NULL, clip->looping, error)) != PM_OK) return r;
    float *rows = (float *)pm_alloc_array(&db->allocator, (size_t)prepared.frame_count, (size_t)db->card * sizeof(float), 64);
    if (!rows) r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "queries: out of memory for %d frames", prepared.frame_count);
    else r = pm_features_extract(rows, (size_t)db->card, NULL, &prepared, &db->schema, &db->settings.root, error);
    if (r == PM_OK) {
        *out_rows = rows;
        *out_count = prepared.frame_count;
    } else pm_free(&db->allocator, rows);
    pm_clip_destroy(&prepared);
    return r;
}
