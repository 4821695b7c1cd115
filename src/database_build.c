/* Database builder: assets -> features -> normalisation -> de-duplication -> (PCA -> trees, in
 * src/database_index.c) -> one serialised image. Deterministic for any thread count: parallel
 * work writes per-asset or per-block results that are merged in index order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "clip_internal.h"
#include "database_build.h"
#include "parallel.h"

/* ---- per-asset preparation ---- */

typedef struct build_asset {
    const pm_asset_def *src;
    int mirrored;
    int looping;
    char name[PM_MAX_ASSET_NAME + 1];
    float exclude_start, exclude_end, addend;
    double lead_in; /* seconds of the source clip before the asset's first pose */
    double step;    /* seconds of the source clip between poses (1 / fps but for the grid's stretch) */
    int lead_in_frames; /* frames trimmed from the start of the source (its rest-pose lead-in) */
    int32_t *mirror_map; /* mirrored: the map the mirror used (joint_count entries) */
    int mirror_axis;     /* mirrored: the axis it used */
    uint32_t first_pose, pose_count;
    pm_result result;
    pm_error error;
} build_asset;

typedef struct builder {
    const pm_database_def *def;
    build_mem mem;
    build_asset *assets;
    int asset_count;
    int card, stride;
    uint32_t poses;
    int32_t *mirror_maps;   /* every mirrored copy's joint map, in asset order */
    uint64_t mirror_joints; /* their entries */
    float *raw;      /* poses x stride */
    uint8_t *blocked;/* per pose: block transition */
    uint8_t *excluded;
    float *range_addend; /* per pose: the sum of its asset's ranges' addends */
    float *offset, *scale, *wsqrt; /* normalisation, per dimension */
    uint32_t searchable_poses, excluded_poses;
    float min_addend; /* the smallest addend of a searchable pose */
    int any_addend;
    build_vectors vectors;
    build_index index;
} builder;

/* A mirrored copy right after its source: it shares the source's clip and so its lead-in. */
static int copies_previous(const builder *b, int i) {
    return b->assets[i].mirrored && i > 0 && b->assets[i - 1].src == b->assets[i].src;
}

/* Preparation is planned before any clip is made: a clip's rest-pose lead-in (tested once per
 * source: its mirrored copy reads the same frames) gives every asset's pose count, so the
 * features stage can prepare each clip, write its rows and free it at once. All prepared clips
 * alive together held more than the database's own bytes. */
static void plan_task(void *context, int task) {
    builder *b = (builder *)context;
    build_asset *a = &b->assets[task];
    if (copies_previous(b, task)) return; /* its source's (plan_counts) */
    a->result = pm_clip_lead_in_frames(&a->lead_in_frames, a->src->clip, b->def, &a->error);
    if (a->result != PM_OK) pm_error_prefix(&a->error, "asset '%s'", a->name);
}

/* After plan_task, in asset order: each asset's pose count, lead-in and pose step. */
static void plan_counts(builder *b) {
    for (int i = 0; i < b->asset_count; i++) {
        build_asset *a = &b->assets[i];
        if (copies_previous(b, i)) {
            a->result = a[-1].result;
            a->error = a[-1].error;
            a->lead_in_frames = a[-1].lead_in_frames;
        }
        if (a->result != PM_OK) continue;
        const int lead_in = a->lead_in_frames;
        a->lead_in = (double)lead_in * a->src->clip->frame_time;
        /* What the prepared clip will hold (pm_prepare_clip_from: trimming and mirroring keep the
         * rate, resampling plans from it), and where the poses were taken from, as
         * pm_database_clip_frame_row maps frames: the source's frames when it was not resampled
         * (a rate within 1e-3 of the database's), else the resampling grid, which keeps a small
         * ratio of the rates exactly. */
        pm_clip kept = *a->src->clip;
        kept.frame_count -= lead_in;
        kept.looping = a->looping;
        a->step = kept.frame_time;
        int count = kept.frame_count;
        if (pm_clip_needs_resample(&kept, b->def) &&
            (a->result = pm_clip_resample_count(&count, &a->step, &kept, b->def->fps, &a->error)) != PM_OK) {
            pm_error_prefix(&a->error, "asset '%s'", a->name);
            continue;
        }
        a->pose_count = (uint32_t)count;
    }
}

/* The first pose at or after source time t: pose f is at lead_in + f * step seconds of the source
 * clip (its frame's own time, k * frame_time) and at lead_in + f / fps (its row's, what
 * pm_search_result.time gives), which drift apart by up to 1e-3 of the time when the frame time
 * is a hair off the rate (0.0333334 s, 59.97 fps kept unresampled): the later of the two counts,
 * with a thousandth of a frame's tolerance, so that a range given at either time holds the pose
 * and one ending there does not. One monotonic map for starts and ends: ranges that meet share
 * no pose and leave none out. */
static int64_t first_pose_from(const build_asset *a, double fps, float t) {
    const double s = (double)t - a->lead_in;
    const double by_frame = ceil(s / a->step - 1e-3), by_row = ceil(s * fps - 1e-3);
    return (int64_t)(by_frame < by_row ? by_frame : by_row);
}

/* An asset's ranges in its poses: those from first_pose_from(start) to before first_pose_from(end). */
static void apply_ranges(builder *b, const build_asset *a) {
    const double fps = b->def->fps;
    const int64_t n = (int64_t)a->pose_count;
    for (int k = 0; k < a->src->range_count; k++) {
        const pm_asset_range *g = &a->src->ranges[k];
        int64_t f0 = first_pose_from(a, fps, g->start);
        int64_t f1 = first_pose_from(a, fps, g->end);
        f0 = f0 < 0 ? 0 : f0;
        f1 = f1 > n ? n : f1;
        for (int64_t f = f0; f < f1; f++) {
            b->range_addend[a->first_pose + f] += g->cost_addend;
            if (g->exclude) b->excluded[a->first_pose + f] = 1;
        }
    }
}

/* Prepares an asset's clip (trimmed, mirrored, resampled), writes its rows and frees it. */
static void features_task(void *context, int task) {
    builder *b = (builder *)context;
    build_asset *a = &b->assets[task];
    float *rows = b->raw + (size_t)a->first_pose * b->stride;
    uint8_t *bt = b->blocked + a->first_pose;
    pm_clip clip;
    pm_prepare_mirror mirror = {a->src->mirror_map, b->def->mirror_axis, a->mirror_map, &a->mirror_axis};
    a->result = pm_prepare_clip_from(&clip, a->src->clip, a->lead_in_frames, b->def, a->mirrored ? &mirror : NULL,
                                     a->looping, &a->error);
    if (a->result == PM_OK && (uint32_t)clip.frame_count != a->pose_count)
        a->result = pm_fail(&a->error, PM_ERR_MISMATCH, "the prepared clip has %d frames where %u were planned (internal error)",
                            clip.frame_count, a->pose_count);
    if (a->result == PM_OK)
        a->result = pm_features_extract(rows, (size_t)b->stride, bt, &clip, b->def->schema, &b->def->root, &a->error);
    pm_clip_destroy(&clip);
    if (a->result != PM_OK) {
        pm_error_prefix(&a->error, "asset '%s'", a->name);
        return;
    }
    /* Exclusion ranges are measured in poses so that they do not depend on rounding. */
    if (!a->looping) {
        int n = (int)a->pose_count;
        int head = (int)floorf(a->exclude_start * b->def->fps + 1e-3f);
        int tail = (int)floorf(a->exclude_end * b->def->fps + 1e-3f);
        for (int f = 0; f < n; f++)
            if (f < head || f >= n - tail) b->excluded[a->first_pose + f] = 1;
    }
    apply_ranges(b, a);
}

/* ---- de-duplication ---- */

/* Rows compare by bits (negative zeros were made positive), so equal values always match. */
pm_result pm_build_dedup_rows(uint32_t *out_id, uint32_t *out_count, const float *rows, uint32_t n, int stride,
                              const pm_allocator *alloc, pm_error *error) {
    uint64_t cap = 16;
    while (cap < 2ull * n) cap <<= 1;
    uint32_t *table = (uint32_t *)pm_alloc_array(alloc, (size_t)cap, sizeof(uint32_t), 64);
    uint32_t *first_row = (uint32_t *)pm_alloc_array(alloc, n ? n : 1, sizeof(uint32_t), 64);
    if (!table || !first_row) {
        pm_free(alloc, table);
        pm_free(alloc, first_row);
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory for de-duplication");
    }
    memset(table, 0xFF, (size_t)cap * sizeof(uint32_t));
    uint32_t count = 0;
    size_t bytes = (size_t)stride * sizeof(float);
    for (uint32_t i = 0; i < n; i++) {
        const float *row = rows + (size_t)i * stride;
        uint64_t slot = pm_hash64(row, bytes, 0) & (cap - 1);
        for (;;) {
            uint32_t v = table[slot];
            if (v == UINT32_MAX) {
                table[slot] = count;
                first_row[count] = i;
                out_id[i] = count++;
                break;
            }
            if (memcmp(rows + (size_t)first_row[v] * stride, row, bytes) == 0) {
                out_id[i] = v;
                break;
            }
            slot = (slot + 1) & (cap - 1);
        }
    }
    *out_count = count;
    pm_free(alloc, table);
    pm_free(alloc, first_row);
    return PM_OK;
}

/* ---- the build ---- */

/* Progress through a parallel stage, from the calling thread after each of its assets. */
typedef struct stage_watch {
    const pm_database_def *def;
    const char *stage;
    float from, span;
} stage_watch;

static int watch_assets(void *user, int done, int count) {
    const stage_watch *w = (const stage_watch *)user;
    return pm_build_progress(w->def, w->stage, w->from + w->span * (float)done / (float)count);
}

#define PROGRESS(stage, fraction)                                                                                      \
    do {                                                                                                               \
        if (pm_build_progress(b->def, stage, fraction)) return pm_build_cancelled(error);                              \
    } while (0)
#define OOM_IF(cond)                                                                                                   \
    do {                                                                                                               \
        if (cond) return pm_build_out_of_memory(error, b->poses);                                                     \
    } while (0)

void *pm_build_alloc(build_mem *m, size_t count, size_t elem) {
    void *p = pm_alloc_large_array(m->a, count ? count : 1, elem, 64);
    if (p && m->count < (int)(sizeof m->ptrs / sizeof m->ptrs[0])) m->ptrs[m->count++] = p;
    else if (p) {
        pm_free(m->a, p);
        p = NULL;
    }
    return p;
}

void pm_build_release(build_mem *m, void *p) {
    for (int i = 0; p && i < m->count; i++)
        if (m->ptrs[i] == p) {
            pm_free(m->a, p);
            m->ptrs[i] = m->ptrs[--m->count];
            return;
        }
}

static void build_mem_free_all(build_mem *m) {
    for (int i = 0; i < m->count; i++) pm_free(m->a, m->ptrs[i]);
    m->count = 0;
}

pm_result pm_build_cancelled(pm_error *error) {
    return pm_fail(error, PM_ERR_CANCELLED, "database: the build was cancelled by its progress callback");
}

pm_result pm_build_out_of_memory(pm_error *error, uint32_t poses) {
    return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory building %u poses", poses);
}

/* The first asset error in asset order, the one a build reports whatever its thread count. */
static pm_result first_asset_error(const builder *b, pm_error *error) {
    for (int i = 0; i < b->asset_count; i++)
        if (b->assets[i].result != PM_OK) {
            if (error) *error = b->assets[i].error;
            return b->assets[i].result;
        }
    return PM_OK;
}

/* The assets as built: each def's, then its mirrored copy when it has one, with its settings
 * resolved against the def's, and the room for each mirrored copy's joint map. */
static pm_result expand_assets(builder *b, const pm_asset_def *assets, int asset_count, pm_error *error) {
    const pm_database_def *def = b->def;
    int total = 0;
    for (int i = 0; i < asset_count; i++) total += 1 + ((assets[i].mirror < 0 ? def->mirror : assets[i].mirror) ? 1 : 0);
    b->assets = (build_asset *)pm_build_alloc(&b->mem, (size_t)total, sizeof(build_asset));
    if (!b->assets) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory");
    for (int i = 0; i < asset_count; i++) {
        const pm_asset_def *a = &assets[i];
        int mirror = a->mirror < 0 ? def->mirror : a->mirror;
        for (int m = 0; m <= mirror; m++) {
            build_asset *x = &b->assets[b->asset_count++];
            x->src = a;
            x->mirrored = m;
            x->looping = a->looping < 0 ? a->clip->looping : a->looping;
            snprintf(x->name, sizeof x->name, m ? "%s.mirror" : "%s", pm_asset_def_name(a));
            x->exclude_start = a->exclude_start < 0.0f ? def->exclude_start : a->exclude_start;
            x->exclude_end = a->exclude_end < 0.0f ? def->exclude_end : a->exclude_end;
            /* Poses carry their addend at half precision: every bound derived from addends (per
             * vector, per node, the header's smallest) must use the value the search adds, or it
             * could exceed a cost by the rounding (up to 0.25 at 1000) and prune the optimum. */
            x->addend = pm_half_to_float(pm_float_to_half(a->cost_addend));
            if (m) b->mirror_joints += (uint64_t)a->clip->skeleton.joint_count;
        }
    }
    /* The file records each mirrored copy's map and axis, so that it can be played after a load
     * (entries are indexed by 32 bits). */
    if (b->mirror_joints > UINT32_MAX)
        return pm_fail(error, PM_ERR_LIMIT, "database: the mirrored copies have %llu joints in all (limit %u)",
                       (unsigned long long)b->mirror_joints, UINT32_MAX);
    b->mirror_maps = (int32_t *)pm_build_alloc(&b->mem, (size_t)b->mirror_joints, sizeof(int32_t));
    if (!b->mirror_maps) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory");
    size_t map_next = 0;
    for (int i = 0; i < b->asset_count; i++)
        if (b->assets[i].mirrored) {
            b->assets[i].mirror_map = b->mirror_maps + map_next;
            map_next += (size_t)b->assets[i].src->clip->skeleton.joint_count;
        }
    return PM_OK;
}

/* Every asset's pose count (planned on the build's threads), then its rows: each clip prepared,
 * its features written and the clip freed, asset by asset. */
static pm_result extract_features(builder *b, pm_error *error) {
    const pm_database_def *def = b->def;
    PROGRESS("prepare", 0.0f);
    stage_watch watch = {def, "prepare", 0.0f, 0.1f};
    if (pm_parallel_for_watched(b->asset_count, def->threads, plan_task, b, def->progress ? watch_assets : NULL, &watch))
        return pm_build_cancelled(error);
    plan_counts(b);
    pm_result r = first_asset_error(b, error);
    if (r != PM_OK) return r;
    uint64_t poses64 = 0;
    for (int i = 0; i < b->asset_count; i++) {
        b->assets[i].first_pose = (uint32_t)poses64;
        poses64 += b->assets[i].pose_count;
    }
    if (poses64 * (uint64_t)b->card > PM_MAX_POSE_VALUES)
        return pm_fail(error, PM_ERR_LIMIT, "database: %llu poses x %d values exceed the %u-value limit",
                       (unsigned long long)poses64, b->card, PM_MAX_POSE_VALUES);
    const uint32_t P = b->poses = (uint32_t)poses64;
    b->raw = (float *)pm_build_alloc(&b->mem, (size_t)P * b->stride, sizeof(float));
    b->blocked = (uint8_t *)pm_build_alloc(&b->mem, P, 1);
    b->excluded = (uint8_t *)pm_build_alloc(&b->mem, P, 1);
    b->range_addend = (float *)pm_build_alloc(&b->mem, P, sizeof(float));
    if (!b->raw || !b->blocked || !b->excluded || !b->range_addend)
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory for %u poses", P);
    PROGRESS("features", 0.1f);
    watch = (stage_watch){def, "features", 0.1f, 0.3f}; /* preparation and features, asset by asset */
    if (pm_parallel_for_watched(b->asset_count, def->threads, features_task, b, def->progress ? watch_assets : NULL,
                                &watch))
        return pm_build_cancelled(error);
    return first_asset_error(b, error);
}

/* Normalisation (PS3): per-dimension mean as offset; each group's scale is the mean of its
 * dimensions' standard deviations. Summed in pose order in double. */
static pm_result normalise(builder *b, const pm_schema_layout *layout, pm_error *error) {
    PROGRESS("normalise", 0.4f);
    const uint32_t P = b->poses;
    const int D = b->card, S = b->stride;
    double *mean = (double *)pm_build_alloc(&b->mem, (size_t)S, sizeof(double));
    double *var = (double *)pm_build_alloc(&b->mem, (size_t)S, sizeof(double));
    b->offset = (float *)pm_build_alloc(&b->mem, (size_t)D, sizeof(float));
    b->scale = (float *)pm_build_alloc(&b->mem, (size_t)D, sizeof(float));
    b->wsqrt = (float *)pm_build_alloc(&b->mem, (size_t)S, sizeof(float));
    double *group_sum = (double *)pm_build_alloc(&b->mem, (size_t)layout->group_count, sizeof(double));
    int *group_n = (int *)pm_build_alloc(&b->mem, (size_t)layout->group_count, sizeof(int));
    OOM_IF(!mean || !var || !b->offset || !b->scale || !b->wsqrt || !group_sum || !group_n);
    for (uint32_t p = 0; p < P; p++)
        for (int d = 0; d < D; d++) mean[d] += b->raw[(size_t)p * S + d];
    for (int d = 0; d < D; d++) mean[d] /= (double)P;
    for (uint32_t p = 0; p < P; p++)
        for (int d = 0; d < D; d++) {
            double x = b->raw[(size_t)p * S + d] - mean[d];
            var[d] += x * x;
        }
    for (int d = 0; d < D; d++) {
        group_sum[layout->dim_group[d]] += sqrt(var[d] / (double)P);
        group_n[layout->dim_group[d]]++;
    }
    for (int d = 0; d < D; d++) {
        double dev = group_sum[layout->dim_group[d]] / group_n[layout->dim_group[d]];
        b->offset[d] = (float)mean[d];
        b->scale[d] = dev > 1e-6 ? (float)dev : 1.0f;
        b->wsqrt[d] = sqrtf(layout->dim_weight[d]);
    }
    for (uint32_t p = 0; p < P; p++) {
        float *row = b->raw + (size_t)p * S;
        for (int d = 0; d < D; d++) row[d] = (row[d] - b->offset[d]) / b->scale[d] + 0.0f; /* + 0 turns -0 into 0 */
    }
    return PM_OK;
}

/* De-duplication (PS5) and searchability: each pose's vector, addend and block flag; each
 * vector's first pose and smallest searchable addend; the searchable vectors in first-appearance
 * order. */
static pm_result index_vectors(builder *b, pm_error *error) {
    PROGRESS("dedup", 0.5f);
    const uint32_t P = b->poses;
    build_vectors *v = &b->vectors;
    v->poses = P;
    v->dims = b->card;
    v->stride = b->stride;
    v->rows = b->raw;
    v->wsqrt = b->wsqrt;
    uint32_t *pose_vec = (uint32_t *)pm_build_alloc(&b->mem, P, sizeof(uint32_t));
    OOM_IF(!pose_vec);
    uint32_t V = 0;
    pm_result r = pm_build_dedup_rows(pose_vec, &V, b->raw, P, b->stride, b->mem.a, error);
    if (r != PM_OK) return r;
    uint32_t *vec_first_pose = (uint32_t *)pm_build_alloc(&b->mem, V, sizeof(uint32_t));
    uint8_t *vec_searchable = (uint8_t *)pm_build_alloc(&b->mem, V, 1);
    float *vec_addend = (float *)pm_build_alloc(&b->mem, V, sizeof(float));
    uint8_t *pose_blocked = (uint8_t *)pm_build_alloc(&b->mem, P, 1);
    float *pose_addend = (float *)pm_build_alloc(&b->mem, P, sizeof(float));
    uint32_t *pose_asset = (uint32_t *)pm_build_alloc(&b->mem, P, sizeof(uint32_t));
    OOM_IF(!vec_first_pose || !vec_searchable || !vec_addend || !pose_blocked || !pose_addend || !pose_asset);
    for (uint32_t k = 0; k < V; k++) {
        vec_first_pose[k] = UINT32_MAX;
        vec_addend[k] = INFINITY;
    }
    uint32_t searchable_poses = 0, excluded_poses = 0;
    float min_addend = INFINITY;
    for (int i = 0; i < b->asset_count; i++)
        for (uint32_t p = b->assets[i].first_pose; p < b->assets[i].first_pose + b->assets[i].pose_count; p++) {
            pose_asset[p] = (uint32_t)i;
            /* Rounded once to what the pose stores, from the addends as given (an asset's 0.1 and
             * a range's -0.1 make 0, not the -2.4e-5 of 0.1 rounded first); the sum is in the half
             * float's range (validate_ranges). Where no range adds anything the asset's addend is
             * kept as it is (-0 + 0 would turn a -0 into 0): a database without ranges keeps the
             * bytes it had, under its unchanged key. */
            float sum = b->range_addend[p] != 0.0f ? b->assets[i].src->cost_addend + b->range_addend[p] : b->assets[i].addend;
            pose_addend[p] = pm_half_to_float(pm_float_to_half(sum));
            pose_blocked[p] = b->blocked[p] || b->excluded[p];
            if (!b->blocked[p] && b->excluded[p]) excluded_poses++;
            uint32_t k = pose_vec[p];
            if (vec_first_pose[k] == UINT32_MAX) vec_first_pose[k] = p;
            if (!pose_blocked[p]) {
                searchable_poses++;
                vec_searchable[k] = 1;
                vec_addend[k] = PM_MIN(vec_addend[k], pose_addend[p]);
                min_addend = PM_MIN(min_addend, pose_addend[p]);
            }
            if (pose_addend[p] != 0.0f) b->any_addend = 1;
        }
    b->searchable_poses = searchable_poses;
    b->excluded_poses = excluded_poses;
    if (searchable_poses == 0) {
        /* A database a plain search can never answer from is a mistake in the inputs, not an
         * edge case to serve: say which of the two causes it is. */
        float past = 0.0f, future = 0.0f;
        (void)pm_schema_time_window(&past, &future, b->def->schema, NULL); /* validated before the build */
        uint32_t blocked = P - excluded_poses;
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "database: no searchable pose: all %u poses are block transitions or in excluded ranges (%u "
                       "block transitions: clips too short for the schema's trajectory window of %g s; %u excluded: "
                       "exclude_start/exclude_end (posematch build --exclude-start/--exclude-end) longer than the "
                       "clips, or excluding ranges (--exclude))",
                       P, blocked, (double)future, excluded_poses);
    }
    b->min_addend = isfinite(min_addend) ? min_addend : 0.0f;
    uint32_t VS = 0;
    uint32_t *svec = (uint32_t *)pm_build_alloc(&b->mem, V, sizeof(uint32_t)); /* searchable rank -> vector */
    OOM_IF(!svec);
    for (uint32_t k = 0; k < V; k++)
        if (vec_searchable[k]) svec[VS++] = k;
    v->count = V;
    v->searchable = VS;
    v->pose_vec = pose_vec;
    v->pose_asset = pose_asset;
    v->pose_blocked = pose_blocked;
    v->pose_addend = pose_addend;
    v->first_pose = vec_first_pose;
    v->is_searchable = vec_searchable;
    v->addend = vec_addend;
    v->searchable_vec = svec;
    return PM_OK;
}

/* The file: strings, assets and their sources, the schema and settings, the header, and the
 * sections in their order, assembled into the database's image. */
static pm_result write_database(pm_database **out, builder *b, const pm_asset_def *assets, int asset_count,
                                pm_error *error) {
    const pm_database_def *def = b->def;
    const build_index *x = &b->index;
    PROGRESS("write", 0.9f);
    size_t str_size = 1;
    for (int i = 0; i < b->asset_count; i++) str_size += strlen(b->assets[i].name) + 1;
    char *strings = (char *)pm_build_alloc(&b->mem, str_size, 1);
    pmdb_asset *ass = (pmdb_asset *)pm_build_alloc(&b->mem, (size_t)b->asset_count, sizeof(pmdb_asset));
    pmdb_channel *chans = (pmdb_channel *)pm_build_alloc(&b->mem, (size_t)def->schema->channel_count, sizeof(pmdb_channel));
    OOM_IF(!strings || !ass || !chans);
    size_t so = 1;
    for (int i = 0; i < b->asset_count; i++) {
        build_asset *a = &b->assets[i];
        pmdb_asset *o = &ass[i];
        o->name = (uint32_t)so;
        size_t len = strlen(a->name) + 1;
        memcpy(strings + so, a->name, len);
        so += len;
        o->first_pose = a->first_pose;
        o->pose_count = a->pose_count;
        o->flags = (a->looping ? PMDB_ASSET_LOOPING : 0u) | (a->mirrored ? PMDB_ASSET_MIRRORED : 0u);
        o->source_asset = a->mirrored ? i - 1 : -1;
        o->cost_addend = a->addend;
        o->param_count = (uint32_t)a->src->param_count;
        for (int k = 0; k < 3; k++) {
            float v = k < a->src->param_count ? a->src->params[k] : 0.0f;
            /* (0 stays +0: a listing should not print "-0") */
            o->params[k] = a->mirrored && (a->src->mirror_negate_params >> k & 1) && v != 0.0f ? -v : v;
        }
    }
    for (int i = 0; i < def->schema->channel_count; i++) pm_pmdb_channel_from_def(&chans[i], &def->schema->channels[i]);
    pmdb_settings settings;
    pm_pmdb_settings_from_def(&settings, def);
    pmdb_header h;
    memset(&h, 0, sizeof h);
    uint64_t *fingerprints = (uint64_t *)pm_build_alloc(&b->mem, (size_t)asset_count * 2, sizeof(uint64_t));
    pmdb_asset_source *sources =
        (pmdb_asset_source *)pm_build_alloc(&b->mem, (size_t)b->asset_count, sizeof(pmdb_asset_source));
    OOM_IF(!fingerprints || !sources);
    pm_database_key(h.key, fingerprints, def, assets, asset_count);
    for (int i = 0; i < b->asset_count; i++) {
        const build_asset *a = &b->assets[i];
        const size_t k = (size_t)(a->src - assets);
        pmdb_asset_source *o = &sources[i];
        o->skeleton_hash = fingerprints[2 * k];
        o->motion_hash = fingerprints[2 * k + 1];
        o->joint_count = (uint32_t)a->src->clip->skeleton.joint_count;
        o->frame_count = (uint32_t)a->src->clip->frame_count;
        o->frame_time = a->src->clip->frame_time;
        o->mirror_map = a->mirrored ? (uint32_t)(a->mirror_map - b->mirror_maps) : UINT32_MAX;
        o->mirror_axis = a->mirrored ? a->mirror_axis : -1;
    }
    const uint32_t P = b->poses, V = b->vectors.count, VS = b->vectors.searchable, NP = x->kd_point_count;
    const int D = b->card, S = b->stride, K = x->pca_components;
    h.pose_count = P;
    h.asset_count = (uint32_t)b->asset_count;
    h.cardinality = (uint32_t)D;
    h.stride = (uint32_t)S;
    h.channel_count = (uint32_t)def->schema->channel_count;
    h.vector_count = V;
    h.searchable_vectors = VS;
    h.searchable_poses = b->searchable_poses;
    h.block_transition_poses = P - b->searchable_poses;
    h.excluded_poses = b->excluded_poses;
    h.pca_components = (uint32_t)K;
    h.kd_point_count = NP;
    h.kd_node_count = x->kd_count;
    h.exact_components = (uint32_t)x->exact_components;
    h.bt_block_rows = (uint32_t)x->bt_rows;
    h.bt_node_count = x->bt_count;
    h.vp_node_count = x->vp_count;
    h.vp_item_count = VS;
    h.flags = b->any_addend ? 1u : 0u;
    h.min_cost_addend = b->min_addend;
    h.fps = def->fps;
    const uint64_t bt_lanes = (uint64_t)x->bt_blocks * PM_BT_BLOCK;
    /* Modes left out: their structures get no bytes (the rows keep the bound tree's order, so
     * everything else is the full database's). */
    const int no_exact = PMDB_OMITS(&settings, PM_SEARCH_EXACT), no_kd = PMDB_OMITS(&settings, PM_SEARCH_PCAKDTREE);
    const int no_vp = PMDB_OMITS(&settings, PM_SEARCH_VPTREE);
    if (settings.omitted_modes) h.version = PMDB_VERSION_PARTIAL;
    if (no_exact) h.bt_node_count = 0;
    if (no_kd) h.kd_point_count = h.kd_node_count = 0;
    if (no_vp) h.vp_node_count = h.vp_item_count = 0;
    const uint32_t BT = h.bt_node_count;
    pmdb_blob blobs[] = {
        {PMDB_SCHEMA, sizeof(pmdb_channel), (uint64_t)def->schema->channel_count, chans},
        {PMDB_SETTINGS, sizeof(pmdb_settings), 1, &settings},
        {PMDB_STRINGS, 1, so, strings},
        {PMDB_ASSETS, sizeof(pmdb_asset), (uint64_t)b->asset_count, ass},
        {PMDB_POSE_META, sizeof(uint64_t), P, x->meta},
        {PMDB_DIM_OFFSET, sizeof(float), (uint64_t)D, b->offset},
        {PMDB_DIM_SCALE, sizeof(float), (uint64_t)D, b->scale},
        {PMDB_DIM_WSQRT, sizeof(float), (uint64_t)D, b->wsqrt},
        {PMDB_VALUES, sizeof(float), (uint64_t)V * S, x->values},
        {PMDB_VEC_POSE_START, sizeof(uint32_t), (uint64_t)V + 1, x->vec_pose_start},
        {PMDB_VEC_POSES, sizeof(uint32_t), P, x->vec_poses},
        {PMDB_VEC_MIN_ADDEND, sizeof(float), bt_lanes, x->min_addend},
        {PMDB_PCA_MEAN, sizeof(float), (uint64_t)D, x->mean},
        {PMDB_PCA_BASIS, sizeof(float), (uint64_t)D * D, x->basis},
        {PMDB_PCA_EIGEN, sizeof(float), (uint64_t)D, x->eigen},
        {PMDB_KD_NODES, sizeof(pmdb_kd_node), h.kd_node_count, x->kd_nodes},
        {PMDB_KD_POINTS, sizeof(float), (uint64_t)h.kd_point_count * K, x->kd_points},
        {PMDB_KD_POINT_START, sizeof(uint32_t), no_kd ? 0 : (uint64_t)NP + 1, x->kd_point_start},
        {PMDB_KD_POINT_VECS, sizeof(uint32_t), no_kd ? 0 : VS, x->kd_point_vecs},
        {PMDB_BT_NODES, sizeof(pmdb_bt_node), BT, x->bt_nodes},
        {PMDB_BT_BOXES, sizeof(float), (uint64_t)BT * x->bt_box, x->bt_boxes},
        {PMDB_BT_POINTS, sizeof(float), no_exact ? 0 : bt_lanes * x->bt_rows, x->bt_points},
        {PMDB_BT_VALUE_BOXES, sizeof(float), (uint64_t)BT * 2 * S, x->bt_value_boxes},
        {PMDB_VP_NODES, sizeof(pmdb_vp_node), h.vp_node_count, x->vp_nodes},
        {PMDB_VP_ITEMS, sizeof(uint32_t), h.vp_item_count, x->vp_items},
        {PMDB_ASSET_SOURCES, sizeof(pmdb_asset_source), (uint64_t)b->asset_count, sources},
        {PMDB_MIRROR_MAPS, sizeof(int32_t), b->mirror_joints, b->mirror_maps},
    };
    return pm_database_assemble(out, &h, blobs, (int)(sizeof blobs / sizeof blobs[0]), def->allocator, error);
}

static pm_result build_resolved(pm_database **out, const pm_database_def *def, const pm_asset_def *assets,
                                int asset_count, pm_error *error) {
    pm_result r = pm_database_check_inputs(def, assets, asset_count, error);
    if (r != PM_OK) return r;
    pm_schema_layout layout;
    if ((r = pm_schema_layout_compute(&layout, def->schema, error)) != PM_OK) return r;
    builder b;
    memset(&b, 0, sizeof b);
    b.def = def;
    b.mem.a = def->allocator;
    b.card = pm_schema_cardinality(def->schema);
    b.stride = (b.card + 7) / 8 * 8;
    r = expand_assets(&b, assets, asset_count, error);
    if (r == PM_OK) r = extract_features(&b, error);
    if (r == PM_OK) r = normalise(&b, &layout, error);
    if (r == PM_OK) r = index_vectors(&b, error);
    if (r == PM_OK) r = pm_build_index(&b.index, &b.vectors, def, &b.mem, error);
    if (r == PM_OK) r = write_database(out, &b, assets, asset_count, error);
    build_mem_free_all(&b.mem);
    if (r == PM_OK) (void)pm_build_progress(def, "done", 1.0f);
    return r;
}

pm_result pm_database_build(pm_database **out, const pm_database_def *def_in, const pm_asset_def *assets, int asset_count,
                            pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_build: out is NULL");
    *out = NULL;
    if (!def_in) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_build: def is NULL");
    if (!assets && asset_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_build: assets is NULL (asset_count %d)", asset_count);
    pm_database_def def;
    pm_schema *storage;
    pm_result r = pm_database_def_resolve(&def, &storage, def_in, error);
    if (r != PM_OK) return r;
    r = build_resolved(out, &def, assets, asset_count, error);
    pm_free(def_in->allocator, storage);
    return r;
}
