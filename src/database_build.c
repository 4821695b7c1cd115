/* Database builder: assets -> features -> normalisation -> de-duplication -> PCA -> trees ->
 * one serialised image. Deterministic for any thread count: parallel work writes per-asset
 * or per-block results that are merged in index order. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "clip_internal.h"
#include "database_internal.h"
#include "database_tasks.h"
#include "index_build.h"
#include "parallel.h"
#include "pca.h"

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
    build_asset *assets;
    int asset_count;
    int card, stride;
    float *raw;      /* poses x stride */
    uint8_t *blocked;/* per pose: block transition */
    uint8_t *excluded;
    float *range_addend; /* per pose: the sum of its asset's ranges' addends */
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

/* Assigns each row a unique-vector id in order of first appearance. Rows compare by bits
 * (negative zeros were made positive), so equal values always match. */
static pm_result dedup_rows(uint32_t *out_id, uint32_t *out_count, const float *rows, uint32_t n, int stride,
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


/* The def's progress callback; 1 when it asks the build to stop. */
static int progress(const pm_database_def *d, const char *stage, float f) {
    return d->progress && d->progress(d->progress_user, stage, f) != 0;
}

/* Progress through a parallel stage, from the calling thread after each of its assets. */
typedef struct stage_watch {
    const pm_database_def *def;
    const char *stage;
    float from, span;
} stage_watch;

static int watch_assets(void *user, int done, int count) {
    const stage_watch *w = (const stage_watch *)user;
    return progress(w->def, w->stage, w->from + w->span * (float)done / (float)count);
}

#define PROGRESS(stage, fraction)                                                                                      \
    do {                                                                                                               \
        if (progress(def, stage, fraction)) goto cancelled;                                                           \
    } while (0)

/* Every temporary of a build, freed together. */
typedef struct build_mem {
    const pm_allocator *a;
    void *ptrs[96];
    int count;
} build_mem;

static void *bm_alloc(build_mem *m, size_t count, size_t elem) {
    void *p = pm_alloc_array(m->a, count ? count : 1, elem, 64);
    if (p && m->count < (int)(sizeof m->ptrs / sizeof m->ptrs[0])) m->ptrs[m->count++] = p;
    else if (p) {
        pm_free(m->a, p);
        p = NULL;
    }
    return p;
}

/* Frees one temporary before the others: a build's large arrays are done with at different
 * stages, and memory given back early is what later stages' arrays reuse. */
static void bm_release(build_mem *m, void *p) {
    for (int i = 0; p && i < m->count; i++)
        if (m->ptrs[i] == p) {
            pm_free(m->a, p);
            m->ptrs[i] = m->ptrs[--m->count];
            return;
        }
}

/* values[i] = values[perm[i]] for the first n rows of `stride` floats, in place: each cycle of
 * the permutation is followed once, through one row of `tmp` (done: n bits, zeroed). */
static void permute_rows(float *values, const uint32_t *perm, uint32_t n, int stride, float *tmp, uint8_t *done) {
    const size_t bytes = (size_t)stride * sizeof(float);
    for (uint32_t i = 0; i < n; i++) {
        if (done[i >> 3] >> (i & 7) & 1) continue;
        memcpy(tmp, values + (size_t)i * stride, bytes);
        uint32_t k = i;
        for (;;) {
            done[k >> 3] |= (uint8_t)(1u << (k & 7));
            uint32_t next = perm[k];
            if (next == i) {
                memcpy(values + (size_t)k * stride, tmp, bytes);
                break;
            }
            memcpy(values + (size_t)k * stride, values + (size_t)next * stride, bytes);
            k = next;
        }
    }
}

static void bm_free_all(build_mem *m) {
    for (int i = 0; i < m->count; i++) pm_free(m->a, m->ptrs[i]);
    m->count = 0;
}

/* Automatic exact components: the tree splits on these, the rest goes into one residual norm.
 * More components make the bound tighter (fewer exact costs) and each bound dearer. With the
 * AVX2 walk, the value boxes and the spread-based splits, 99.9% of the variance is where the two
 * balance on locomotion data (`posematch build --exact-components K` and `posematch bench`
 * compare choices): 23 components on both presets' bench databases, against 19 at 99.5% a third
 * of the exact costs and a lower noisy median and p99, for 6% more bytes; all 27 or 31
 * components gain little more and lose under dynamic weights. A multiple of 4 minus one keeps a
 * point (coordinates + residual) a whole number of SIMD lanes. */
static int auto_exact_components(const double *eigen, int card) {
    double total = 0.0;
    for (int i = 0; i < card; i++) total += PM_MAX(eigen[i], 0.0);
    int k = 3;
    double part = 0.0;
    for (int i = 0; i < card; i++) {
        part += PM_MAX(eigen[i], 0.0);
        if (total <= 0.0 || part >= 0.999 * total) {
            k = i + 1;
            break;
        }
    }
    k = (k + 3) / 4 * 4 - 1;
    if (k < 7) k = 7;
    if (k > 31) k = 31;
    return PM_MIN(k, card);
}

static pm_result build_resolved(pm_database **out, const pm_database_def *def, const pm_asset_def *assets,
                                int asset_count, pm_error *error) {
    pm_result r = pm_database_check_inputs(def, assets, asset_count, error);
    if (r != PM_OK) return r;
    const pm_allocator *alloc = def->allocator;
    build_mem mem = {alloc, {0}, 0};
    builder b;
    memset(&b, 0, sizeof b);
    b.def = def;
    b.card = pm_schema_cardinality(def->schema);
    b.stride = (b.card + 7) / 8 * 8;
    int threads = def->threads;
    pm_schema_layout layout;
    if ((r = pm_schema_layout_compute(&layout, def->schema, error)) != PM_OK) return r;

    /* Expand assets (mirrored copies follow their source). */
    int total = 0;
    uint64_t mirror_joints = 0;
    for (int i = 0; i < asset_count; i++) total += 1 + ((assets[i].mirror < 0 ? def->mirror : assets[i].mirror) ? 1 : 0);
    b.assets = (build_asset *)bm_alloc(&mem, (size_t)total, sizeof(build_asset));
    if (!b.assets) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory");
    for (int i = 0; i < asset_count; i++) {
        const pm_asset_def *a = &assets[i];
        int mirror = a->mirror < 0 ? def->mirror : a->mirror;
        for (int m = 0; m <= mirror; m++) {
            build_asset *x = &b.assets[b.asset_count++];
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
            if (m) mirror_joints += (uint64_t)a->clip->skeleton.joint_count;
        }
    }
    /* The file records each mirrored copy's map and axis, so that it can be played after a load
     * (entries are indexed by 32 bits). */
    if (mirror_joints > UINT32_MAX) {
        r = pm_fail(error, PM_ERR_LIMIT, "database: the mirrored copies have %llu joints in all (limit %u)",
                    (unsigned long long)mirror_joints, UINT32_MAX);
        goto fail;
    }
    int32_t *mirror_maps = (int32_t *)bm_alloc(&mem, (size_t)mirror_joints, sizeof(int32_t));
    if (!mirror_maps) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory");
        goto fail;
    }
    size_t map_next = 0;
    for (int i = 0; i < b.asset_count; i++)
        if (b.assets[i].mirrored) {
            b.assets[i].mirror_map = mirror_maps + map_next;
            map_next += (size_t)b.assets[i].src->clip->skeleton.joint_count;
        }

    PROGRESS("prepare", 0.0f);
    stage_watch watch = {def, "prepare", 0.0f, 0.1f};
    if (pm_parallel_for_watched(b.asset_count, threads, plan_task, &b, def->progress ? watch_assets : NULL, &watch))
        goto cancelled;
    plan_counts(&b);
    uint64_t poses64 = 0;
    for (int i = 0; i < b.asset_count; i++) {
        if (b.assets[i].result != PM_OK && r == PM_OK) {
            r = b.assets[i].result;
            if (error) *error = b.assets[i].error;
        }
        b.assets[i].first_pose = (uint32_t)poses64;
        poses64 += b.assets[i].pose_count;
    }
    if (r == PM_OK && poses64 * (uint64_t)b.card > PM_MAX_POSE_VALUES)
        r = pm_fail(error, PM_ERR_LIMIT, "database: %llu poses x %d values exceed the %u-value limit",
                    (unsigned long long)poses64, b.card, PM_MAX_POSE_VALUES);
    uint32_t P = (uint32_t)poses64;
    if (r == PM_OK) {
        b.raw = (float *)bm_alloc(&mem, (size_t)P * b.stride, sizeof(float));
        b.blocked = (uint8_t *)bm_alloc(&mem, P, 1);
        b.excluded = (uint8_t *)bm_alloc(&mem, P, 1);
        b.range_addend = (float *)bm_alloc(&mem, P, sizeof(float));
        if (!b.raw || !b.blocked || !b.excluded || !b.range_addend) r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory for %u poses", P);
    }
    if (r == PM_OK) {
        PROGRESS("features", 0.1f);
        watch = (stage_watch){def, "features", 0.1f, 0.3f}; /* preparation and features, asset by asset */
        if (pm_parallel_for_watched(b.asset_count, threads, features_task, &b, def->progress ? watch_assets : NULL,
                                    &watch))
            goto cancelled;
        for (int i = 0; i < b.asset_count && r == PM_OK; i++)
            if (b.assets[i].result != PM_OK) {
                r = b.assets[i].result;
                if (error) *error = b.assets[i].error;
            }
    }
    if (r != PM_OK) goto fail;

    /* Normalisation (PS3): per-dimension mean as offset; each group's scale is the mean of its
     * dimensions' standard deviations. Summed in pose order in double. */
    PROGRESS("normalise", 0.4f);
    int D = b.card, S = b.stride;
    double *mean = (double *)bm_alloc(&mem, (size_t)S, sizeof(double));
    double *var = (double *)bm_alloc(&mem, (size_t)S, sizeof(double));
    float *offset = (float *)bm_alloc(&mem, (size_t)D, sizeof(float));
    float *scale = (float *)bm_alloc(&mem, (size_t)D, sizeof(float));
    float *wsqrt = (float *)bm_alloc(&mem, (size_t)S, sizeof(float));
    double *group_sum = (double *)bm_alloc(&mem, (size_t)layout.group_count, sizeof(double));
    int *group_n = (int *)bm_alloc(&mem, (size_t)layout.group_count, sizeof(int));
    if (!mean || !var || !offset || !scale || !wsqrt || !group_sum || !group_n) goto oom;
    for (uint32_t p = 0; p < P; p++)
        for (int d = 0; d < D; d++) mean[d] += b.raw[(size_t)p * S + d];
    for (int d = 0; d < D; d++) mean[d] /= (double)P;
    for (uint32_t p = 0; p < P; p++)
        for (int d = 0; d < D; d++) {
            double x = b.raw[(size_t)p * S + d] - mean[d];
            var[d] += x * x;
        }
    for (int d = 0; d < D; d++) {
        group_sum[layout.dim_group[d]] += sqrt(var[d] / (double)P);
        group_n[layout.dim_group[d]]++;
    }
    for (int d = 0; d < D; d++) {
        double dev = group_sum[layout.dim_group[d]] / group_n[layout.dim_group[d]];
        offset[d] = (float)mean[d];
        scale[d] = dev > 1e-6 ? (float)dev : 1.0f;
        wsqrt[d] = sqrtf(layout.dim_weight[d]);
    }
    for (uint32_t p = 0; p < P; p++) {
        float *row = b.raw + (size_t)p * S;
        for (int d = 0; d < D; d++) row[d] = (row[d] - offset[d]) / scale[d] + 0.0f; /* + 0 turns -0 into 0 */
    }

    /* De-duplication (PS5) and searchability. */
    PROGRESS("dedup", 0.5f);
    uint32_t *pose_vec = (uint32_t *)bm_alloc(&mem, P, sizeof(uint32_t));
    if (!pose_vec) goto oom;
    uint32_t V = 0;
    if ((r = dedup_rows(pose_vec, &V, b.raw, P, S, alloc, error)) != PM_OK) goto fail;
    uint32_t *vec_first_pose = (uint32_t *)bm_alloc(&mem, V, sizeof(uint32_t));
    uint8_t *vec_searchable = (uint8_t *)bm_alloc(&mem, V, 1);
    float *vec_addend = (float *)bm_alloc(&mem, V, sizeof(float));
    uint8_t *pose_blocked = (uint8_t *)bm_alloc(&mem, P, 1);
    float *pose_addend = (float *)bm_alloc(&mem, P, sizeof(float));
    uint32_t *pose_asset = (uint32_t *)bm_alloc(&mem, P, sizeof(uint32_t));
    if (!vec_first_pose || !vec_searchable || !vec_addend || !pose_blocked || !pose_addend || !pose_asset) goto oom;
    for (uint32_t v = 0; v < V; v++) {
        vec_first_pose[v] = UINT32_MAX;
        vec_addend[v] = INFINITY;
    }
    uint32_t searchable_poses = 0, excluded_poses = 0;
    float min_addend = INFINITY;
    int any_addend = 0;
    for (int i = 0; i < b.asset_count; i++)
        for (uint32_t p = b.assets[i].first_pose; p < b.assets[i].first_pose + b.assets[i].pose_count; p++) {
            pose_asset[p] = (uint32_t)i;
            /* Rounded once to what the pose stores, from the addends as given (an asset's 0.1 and
             * a range's -0.1 make 0, not the -2.4e-5 of 0.1 rounded first); the sum is in the half
             * float's range (validate_ranges). Where no range adds anything the asset's addend is
             * kept as it is (-0 + 0 would turn a -0 into 0): a database without ranges keeps the
             * bytes it had, under its unchanged key. */
            float sum = b.range_addend[p] != 0.0f ? b.assets[i].src->cost_addend + b.range_addend[p] : b.assets[i].addend;
            pose_addend[p] = pm_half_to_float(pm_float_to_half(sum));
            pose_blocked[p] = b.blocked[p] || b.excluded[p];
            if (!b.blocked[p] && b.excluded[p]) excluded_poses++;
            uint32_t v = pose_vec[p];
            if (vec_first_pose[v] == UINT32_MAX) vec_first_pose[v] = p;
            if (!pose_blocked[p]) {
                searchable_poses++;
                vec_searchable[v] = 1;
                vec_addend[v] = PM_MIN(vec_addend[v], pose_addend[p]);
                min_addend = PM_MIN(min_addend, pose_addend[p]);
            }
            if (pose_addend[p] != 0.0f) any_addend = 1;
        }
    if (searchable_poses == 0) {
        /* A database a plain search can never answer from is a mistake in the inputs, not an
         * edge case to serve: say which of the two causes it is. */
        float past = 0.0f, future = 0.0f;
        (void)pm_schema_time_window(&past, &future, def->schema, NULL); /* validated before the build */
        uint32_t blocked = P - excluded_poses;
        r = pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                    "database: no searchable pose: all %u poses are block transitions or in excluded ranges (%u block "
                    "transitions: clips too short for the schema's trajectory window of %g s; %u excluded: "
                    "exclude_start/exclude_end (posematch build --exclude-start/--exclude-end) longer than the "
                    "clips, or excluding ranges (--exclude))",
                    P, blocked, (double)future, excluded_poses);
        goto fail;
    }
    if (!isfinite(min_addend)) min_addend = 0.0f;
    /* Searchable vectors in first-appearance order, then the others. */
    uint32_t VS = 0;
    uint32_t *svec = (uint32_t *)bm_alloc(&mem, V, sizeof(uint32_t)); /* searchable rank -> vector */
    if (!svec) goto oom;
    for (uint32_t v = 0; v < V; v++)
        if (vec_searchable[v]) svec[VS++] = v;

    /* PCA (PS6) over the weighted searchable vectors. */
    PROGRESS("pca", 0.6f);
    double *pmean = (double *)bm_alloc(&mem, (size_t)D, sizeof(double));
    double *cov = (double *)bm_alloc(&mem, (size_t)D * D, sizeof(double));
    double *eig = (double *)bm_alloc(&mem, (size_t)D, sizeof(double));
    double *basis = (double *)bm_alloc(&mem, (size_t)D * D, sizeof(double));
    /* The value rows: the searchable ones first in order of appearance (the PCA's input; the
     * bound tree reorders them below), then the rest. The pose rows are not needed after. */
    float *values = (float *)bm_alloc(&mem, (size_t)V * S, sizeof(float));
    if (!pmean || !cov || !eig || !basis || !values) goto oom;
    for (uint32_t i = 0; i < VS; i++)
        memcpy(values + (size_t)i * S, b.raw + (size_t)vec_first_pose[svec[i]] * S, (size_t)S * sizeof(float));
    for (uint32_t v = 0, at = VS; v < V; v++)
        if (!vec_searchable[v])
            memcpy(values + (size_t)at++ * S, b.raw + (size_t)vec_first_pose[v] * S, (size_t)S * sizeof(float));
    bm_release(&mem, b.raw);
    b.raw = NULL;
    const float *sv_rows = values;
    if ((r = pm_covariance(pmean, cov, sv_rows, VS, D, (size_t)S, wsqrt, threads, alloc, error)) != PM_OK) goto fail;
    pm_symmetric_eigen(cov, D, eig, basis);
    int K = def->pca_components;
    int KE = def->exact_components ? def->exact_components : auto_exact_components(eig, D);
    const int bt_rows = KE + 1, bt_box = pm_bt_box_stride(KE);
    const uint32_t bt_blocks = (VS + PM_BT_BLOCK - 1) / PM_BT_BLOCK;

    /* Project every searchable vector: the first KE components and the residual norm. */
    PROGRESS("trees", 0.7f);
    float *z = (float *)bm_alloc(&mem, (size_t)(VS ? VS : 1) * KE, sizeof(float));
    float *rho = (float *)bm_alloc(&mem, VS, sizeof(float));
    float *zk = (float *)bm_alloc(&mem, (size_t)(VS ? VS : 1) * K, sizeof(float));
    float *sv_addend = (float *)bm_alloc(&mem, VS, sizeof(float));
    double *y = (double *)bm_alloc(&mem, (size_t)PM_PROJECT_TASKS * 2 * D, sizeof(double)); /* per task: y, pc */
    if (!z || !rho || !zk || !sv_addend || !y) goto oom;
    /* Stored as floats: project with the float values the search will use, so that query
     * and data coordinates are computed the same way. */
    float *f_mean = (float *)bm_alloc(&mem, (size_t)D, sizeof(float));
    float *f_basis = (float *)bm_alloc(&mem, (size_t)D * D, sizeof(float));
    float *f_eig = (float *)bm_alloc(&mem, (size_t)D, sizeof(float));
    if (!f_mean || !f_basis || !f_eig) goto oom;
    for (int i = 0; i < D; i++) {
        f_mean[i] = (float)pmean[i];
        f_eig[i] = (float)eig[i];
    }
    for (size_t i = 0; i < (size_t)D * D; i++) f_basis[i] = (float)basis[i];
    pm_project_job pj = {sv_rows, (size_t)S, wsqrt, f_mean, f_basis, D, KE, K, z, rho, zk, y, VS, PM_PROJECT_TASKS};
    pm_parallel_for(PM_PROJECT_TASKS, threads, pm_build_project_task, &pj);
    for (uint32_t i = 0; i < VS; i++) sv_addend[i] = vec_addend[svec[i]];

    /* Exact bound tree; its leaf order becomes the order of the value rows. */
    PROGRESS("trees", 0.75f);
    uint32_t bt_max = pm_bound_tree_max_nodes(VS, def->exact_leaf_size);
    pmdb_bt_node *bt_nodes = (pmdb_bt_node *)bm_alloc(&mem, bt_max, sizeof(pmdb_bt_node));
    float *bt_boxes = (float *)bm_alloc(&mem, (size_t)bt_max * bt_box, sizeof(float));
    uint32_t *bt_perm = (uint32_t *)bm_alloc(&mem, VS, sizeof(uint32_t));
    if (!bt_nodes || !bt_boxes || !bt_perm) goto oom;
    uint32_t bt_count =
        pm_bound_tree_build(bt_nodes, bt_boxes, bt_max, bt_perm, z, rho, sv_addend, VS, KE, def->exact_leaf_size);
    if (bt_count == UINT32_MAX) {
        r = pm_fail(error, PM_ERR_LIMIT, "database: the bound tree needs more than %u nodes (internal error)", bt_max);
        goto fail;
    }

    /* Final vector order: searchable in bound-tree leaf order, then the rest as they appeared. */
    uint32_t *order = (uint32_t *)bm_alloc(&mem, V, sizeof(uint32_t));   /* final -> old vector */
    uint32_t *rank = (uint32_t *)bm_alloc(&mem, V, sizeof(uint32_t));    /* old vector -> final */
    if (!order || !rank) goto oom;
    for (uint32_t i = 0; i < VS; i++) {
        order[i] = svec[bt_perm[i]];
    }
    uint32_t at = VS;
    for (uint32_t v = 0; v < V; v++)
        if (!vec_searchable[v]) order[at++] = v;
    for (uint32_t i = 0; i < V; i++) rank[order[i]] = i;

    float *bt_points = (float *)bm_alloc(&mem, (size_t)(bt_blocks ? bt_blocks : 1) * PM_BT_BLOCK * bt_rows, sizeof(float));
    float *min_add = (float *)bm_alloc(&mem, (size_t)bt_blocks * PM_BT_BLOCK, sizeof(float));
    float *row_tmp = (float *)bm_alloc(&mem, (size_t)S, sizeof(float));
    uint8_t *moved = (uint8_t *)bm_alloc(&mem, (size_t)VS / 8 + 1, 1);
    if (!bt_points || !min_add || !row_tmp || !moved) goto oom;
    permute_rows(values, bt_perm, VS, S, row_tmp, moved); /* searchable rows in leaf order */
    for (uint32_t i = VS; i < bt_blocks * PM_BT_BLOCK; i++) min_add[i] = FLT_MAX; /* padding lanes never pass */
    for (uint32_t i = 0; i < VS; i++) {
        uint32_t sr = bt_perm[i];
        for (int c = 0; c < KE; c++) bt_points[pm_bt_at(bt_rows, i, c)] = z[(size_t)sr * KE + c];
        bt_points[pm_bt_at(bt_rows, i, KE)] = rho[sr];
        min_add[i] = sv_addend[sr];
    }
    bm_release(&mem, z);
    bm_release(&mem, rho);
    uint64_t *meta = (uint64_t *)bm_alloc(&mem, P, sizeof(uint64_t));
    uint32_t *vp_start = (uint32_t *)bm_alloc(&mem, (size_t)V + 1, sizeof(uint32_t));
    uint32_t *vp_list = (uint32_t *)bm_alloc(&mem, P, sizeof(uint32_t));
    if (!meta || !vp_start || !vp_list) goto oom;
    float *bt_vboxes = (float *)bm_alloc(&mem, (size_t)(bt_count ? bt_count : 1) * 2 * S, sizeof(float));
    uint32_t *vp_fill = (uint32_t *)bm_alloc(&mem, V, sizeof(uint32_t));
    if (!bt_vboxes || !vp_fill) goto oom;

    /* UE-compatible KD-tree over the K-component PCA points, de-duplicated in that space (here on
     * the calling thread: the de-duplication allocates). */
    PROGRESS("trees", 0.8f);
    float *zk_final = (float *)bm_alloc(&mem, (size_t)(VS ? VS : 1) * K, sizeof(float));
    uint32_t *kd_id = (uint32_t *)bm_alloc(&mem, VS, sizeof(uint32_t));
    if (!zk_final || !kd_id) goto oom;
    for (uint32_t i = 0; i < VS; i++)
        for (int c = 0; c < K; c++) zk_final[(size_t)i * K + c] = zk[(size_t)bt_perm[i] * K + c] + 0.0f;
    bm_release(&mem, zk);
    uint32_t NP = 0;
    if ((r = dedup_rows(kd_id, &NP, zk_final, VS, K, alloc, error)) != PM_OK) goto fail;
    float *kd_unique = (float *)bm_alloc(&mem, (size_t)(NP ? NP : 1) * K, sizeof(float));
    uint32_t *kd_first = (uint32_t *)bm_alloc(&mem, NP, sizeof(uint32_t));
    uint32_t *kd_perm = (uint32_t *)bm_alloc(&mem, NP, sizeof(uint32_t));
    uint32_t *kd_rank = (uint32_t *)bm_alloc(&mem, NP, sizeof(uint32_t));
    const uint32_t kd_max = pm_kd_tree_max_nodes(NP, def->kdtree_leaf_size);
    pmdb_kd_node *kd_nodes = (pmdb_kd_node *)bm_alloc(&mem, kd_max, sizeof(pmdb_kd_node));
    float *kd_points = (float *)bm_alloc(&mem, (size_t)(NP ? NP : 1) * K, sizeof(float));
    uint32_t *kd_start = (uint32_t *)bm_alloc(&mem, (size_t)NP + 1, sizeof(uint32_t));
    uint32_t *kd_vecs = (uint32_t *)bm_alloc(&mem, VS, sizeof(uint32_t));
    uint32_t *kd_fill = (uint32_t *)bm_alloc(&mem, NP, sizeof(uint32_t));
    if (!kd_unique || !kd_first || !kd_perm || !kd_rank || !kd_nodes || !kd_points || !kd_start || !kd_vecs || !kd_fill)
        goto oom;
    for (uint32_t i = 0; i < NP; i++) kd_first[i] = UINT32_MAX;
    for (uint32_t i = 0; i < VS; i++)
        if (kd_first[kd_id[i]] == UINT32_MAX) {
            kd_first[kd_id[i]] = i;
            memcpy(kd_unique + (size_t)kd_id[i] * K, zk_final + (size_t)i * K, (size_t)K * sizeof(float));
        }

    /* VP-tree over the searchable value rows in the weighted space. */
    const uint32_t vp_max = pm_vp_tree_max_nodes(VS, PM_VP_LEAF_SIZE);
    pmdb_vp_node *vp_nodes = (pmdb_vp_node *)bm_alloc(&mem, vp_max, sizeof(pmdb_vp_node));
    uint32_t *vp_items = (uint32_t *)bm_alloc(&mem, VS, sizeof(uint32_t));
    float *vp_scratch = (float *)bm_alloc(&mem, (size_t)VS, sizeof(float));
    if (!vp_nodes || !vp_items || !vp_scratch) goto oom;
    pm_vp_rows vc = {values, wsqrt, S};

    /* What is left to build is three independent structures, each written by one task only: side
     * by side on the build's threads, the same bytes as one after another. */
    pm_trees_job tc = {
        .vp = {vp_nodes, vp_max, vp_items, vp_scratch, VS, &vc, 0},
        .kd = {kd_nodes, kd_max, kd_perm, kd_rank, kd_unique, kd_points, kd_start, kd_vecs, kd_fill, kd_id, NP, VS, K,
               def->kdtree_leaf_size, 0},
        .meta = {bt_vboxes, bt_nodes, bt_count, values, S, meta, vp_start, vp_list, vp_fill, rank, pose_vec, pose_asset,
                 pose_blocked, pose_addend, P, V},
    };
    pm_parallel_for(3, threads, pm_build_trees_task, &tc);
    uint32_t kd_count = tc.kd.count_out, vp_count = tc.vp.count_out;
    if (kd_count == UINT32_MAX || vp_count == UINT32_MAX) {
        r = pm_fail(error, PM_ERR_LIMIT, "database: the %s needs more than %u nodes (internal error)",
                    kd_count == UINT32_MAX ? "KD-tree" : "VP-tree", kd_count == UINT32_MAX ? kd_max : vp_max);
        goto fail;
    }
    PROGRESS("trees", 0.85f);

    /* Strings and assets. */
    PROGRESS("write", 0.9f);
    size_t str_size = 1;
    for (int i = 0; i < b.asset_count; i++) str_size += strlen(b.assets[i].name) + 1;
    char *strings = (char *)bm_alloc(&mem, str_size, 1);
    pmdb_asset *ass = (pmdb_asset *)bm_alloc(&mem, (size_t)b.asset_count, sizeof(pmdb_asset));
    pmdb_channel *chans = (pmdb_channel *)bm_alloc(&mem, (size_t)def->schema->channel_count, sizeof(pmdb_channel));
    if (!strings || !ass || !chans) goto oom;
    size_t so = 1;
    for (int i = 0; i < b.asset_count; i++) {
        build_asset *x = &b.assets[i];
        pmdb_asset *o = &ass[i];
        o->name = (uint32_t)so;
        size_t len = strlen(x->name) + 1;
        memcpy(strings + so, x->name, len);
        so += len;
        o->first_pose = x->first_pose;
        o->pose_count = x->pose_count;
        o->flags = (x->looping ? PMDB_ASSET_LOOPING : 0u) | (x->mirrored ? PMDB_ASSET_MIRRORED : 0u);
        o->source_asset = x->mirrored ? i - 1 : -1;
        o->cost_addend = x->addend;
        o->param_count = (uint32_t)x->src->param_count;
        for (int k = 0; k < 3; k++) {
            float v = k < x->src->param_count ? x->src->params[k] : 0.0f;
            /* (0 stays +0: a listing should not print "-0") */
            o->params[k] = x->mirrored && (x->src->mirror_negate_params >> k & 1) && v != 0.0f ? -v : v;
        }
    }
    for (int i = 0; i < def->schema->channel_count; i++) pm_pmdb_channel_from_def(&chans[i], &def->schema->channels[i]);
    pmdb_settings settings;
    pm_pmdb_settings_from_def(&settings, def);
    pmdb_header h;
    memset(&h, 0, sizeof h);
    uint64_t *fingerprints = (uint64_t *)bm_alloc(&mem, (size_t)asset_count * 2, sizeof(uint64_t));
    pmdb_asset_source *sources = (pmdb_asset_source *)bm_alloc(&mem, (size_t)b.asset_count, sizeof(pmdb_asset_source));
    if (!fingerprints || !sources) goto oom;
    pm_database_key(h.key, fingerprints, def, assets, asset_count);
    for (int i = 0; i < b.asset_count; i++) {
        const build_asset *x = &b.assets[i];
        const size_t k = (size_t)(x->src - assets);
        pmdb_asset_source *o = &sources[i];
        o->skeleton_hash = fingerprints[2 * k];
        o->motion_hash = fingerprints[2 * k + 1];
        o->joint_count = (uint32_t)x->src->clip->skeleton.joint_count;
        o->frame_count = (uint32_t)x->src->clip->frame_count;
        o->frame_time = x->src->clip->frame_time;
        o->mirror_map = x->mirrored ? (uint32_t)(x->mirror_map - mirror_maps) : UINT32_MAX;
        o->mirror_axis = x->mirrored ? x->mirror_axis : -1;
    }
    h.pose_count = P;
    h.asset_count = (uint32_t)b.asset_count;
    h.cardinality = (uint32_t)D;
    h.stride = (uint32_t)S;
    h.channel_count = (uint32_t)def->schema->channel_count;
    h.vector_count = V;
    h.searchable_vectors = VS;
    h.searchable_poses = searchable_poses;
    h.block_transition_poses = P - searchable_poses;
    h.excluded_poses = excluded_poses;
    h.pca_components = (uint32_t)K;
    h.kd_point_count = NP;
    h.kd_node_count = kd_count;
    h.exact_components = (uint32_t)KE;
    h.bt_block_rows = (uint32_t)bt_rows;
    h.bt_node_count = bt_count;
    h.vp_node_count = vp_count;
    h.vp_item_count = VS;
    h.flags = any_addend ? 1u : 0u;
    h.min_cost_addend = min_addend;
    h.fps = def->fps;
    pmdb_blob blobs[] = {
        {PMDB_SCHEMA, sizeof(pmdb_channel), (uint64_t)def->schema->channel_count, chans},
        {PMDB_SETTINGS, sizeof(pmdb_settings), 1, &settings},
        {PMDB_STRINGS, 1, so, strings},
        {PMDB_ASSETS, sizeof(pmdb_asset), (uint64_t)b.asset_count, ass},
        {PMDB_POSE_META, sizeof(uint64_t), P, meta},
        {PMDB_DIM_OFFSET, sizeof(float), (uint64_t)D, offset},
        {PMDB_DIM_SCALE, sizeof(float), (uint64_t)D, scale},
        {PMDB_DIM_WSQRT, sizeof(float), (uint64_t)D, wsqrt},
        {PMDB_VALUES, sizeof(float), (uint64_t)V * S, values},
        {PMDB_VEC_POSE_START, sizeof(uint32_t), (uint64_t)V + 1, vp_start},
        {PMDB_VEC_POSES, sizeof(uint32_t), P, vp_list},
        {PMDB_VEC_MIN_ADDEND, sizeof(float), (uint64_t)bt_blocks * PM_BT_BLOCK, min_add},
        {PMDB_PCA_MEAN, sizeof(float), (uint64_t)D, f_mean},
        {PMDB_PCA_BASIS, sizeof(float), (uint64_t)D * D, f_basis},
        {PMDB_PCA_EIGEN, sizeof(float), (uint64_t)D, f_eig},
        {PMDB_KD_NODES, sizeof(pmdb_kd_node), kd_count, kd_nodes},
        {PMDB_KD_POINTS, sizeof(float), (uint64_t)NP * K, kd_points},
        {PMDB_KD_POINT_START, sizeof(uint32_t), (uint64_t)NP + 1, kd_start},
        {PMDB_KD_POINT_VECS, sizeof(uint32_t), VS, kd_vecs},
        {PMDB_BT_NODES, sizeof(pmdb_bt_node), bt_count, bt_nodes},
        {PMDB_BT_BOXES, sizeof(float), (uint64_t)bt_count * bt_box, bt_boxes},
        {PMDB_BT_POINTS, sizeof(float), (uint64_t)bt_blocks * PM_BT_BLOCK * bt_rows, bt_points},
        {PMDB_BT_VALUE_BOXES, sizeof(float), (uint64_t)bt_count * 2 * S, bt_vboxes},
        {PMDB_VP_NODES, sizeof(pmdb_vp_node), vp_count, vp_nodes},
        {PMDB_VP_ITEMS, sizeof(uint32_t), VS, vp_items},
        {PMDB_ASSET_SOURCES, sizeof(pmdb_asset_source), (uint64_t)b.asset_count, sources},
        {PMDB_MIRROR_MAPS, sizeof(int32_t), mirror_joints, mirror_maps},
    };
    r = pm_database_assemble(out, &h, blobs, (int)(sizeof blobs / sizeof blobs[0]), alloc, error);
    bm_free_all(&mem);
    if (r == PM_OK) (void)progress(def, "done", 1.0f);
    return r;
oom:
    r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory building %u poses", P);
    goto fail;
cancelled:
    r = pm_fail(error, PM_ERR_CANCELLED, "database: the build was cancelled by its progress callback");
fail:
    bm_free_all(&mem);
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
