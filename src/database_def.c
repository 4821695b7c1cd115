/* Database inputs: the defaults of the defs, their validation before any work (shared by the
 * build and pm_database_compute_key, so that both refuse the same inputs) and the default schema. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "database_internal.h"

pm_asset_def pm_default_asset_def(const pm_clip *clip) {
    pm_asset_def a;
    memset(&a, 0, sizeof a);
    a.clip = clip;
    a.looping = -1;
    a.mirror = -1;
    a.exclude_start = -1.0f;
    a.exclude_end = -1.0f;
    return a;
}

pm_database_def pm_default_database_def(void) {
    pm_database_def d;
    memset(&d, 0, sizeof d);
    d.fps = 30.0f;
    d.pca_components = 4;
    d.kdtree_leaf_size = 16;
    d.exact_leaf_size = 128;
    d.search_modes = PM_SEARCH_MODES_ALL;
    d.threads = 1;
    d.trim_rest_first_frame = 1;
    d.exclude_end = 0.3f;
    d.mirror_axis = -1;
    d.root = pm_default_root_def();
    return d;
}

static pm_result validate_def(const pm_database_def *d, pm_error *error) {
    pm_schema_layout layout;
    pm_result r = pm_schema_layout_compute(&layout, d->schema, error);
    if (r != PM_OK) return r;
    for (int i = 0; i < d->schema->channel_count; i++)
        if (d->schema->channels[i].role != 0) {
            char label[96];
            pm_channel_display_name(label, sizeof label, &d->schema->channels[i]);
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "schema channel %d (%s) reads role %d: databases of single-character clips read role 0 only",
                           i, label, d->schema->channels[i].role);
        }
    /* Weights of zero everywhere (trajectory samples left at weight 0, say) would make every
     * pose cost the same: a search could not tell them apart. */
    int weighted = 0;
    for (int k = 0; k < layout.cardinality; k++) weighted |= layout.dim_weight[k] > 0.0f;
    if (!weighted)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "schema '%s': every feature's weight is 0 (channel, trajectory sample and group weights "
                       "multiply): a search could not tell poses apart",
                       d->schema->name);
    int card = pm_schema_cardinality(d->schema);
    if (!(d->fps >= 1.0f && d->fps <= 1000.0f))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "database: fps %s is outside 1..1000", pm_float_text(d->fps).text);
    if (d->pca_components < 1 || d->pca_components > PM_MAX_PCA_COMPONENTS || d->pca_components > card)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "database: %d PCA components (1..%d and at most the cardinality %d)",
                       d->pca_components, PM_MAX_PCA_COMPONENTS, card);
    if (d->exact_components < 0 || d->exact_components > card || d->exact_components > PM_MAX_PCA_COMPONENTS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "database: %d exact components is outside 0..%d (0 = automatic)",
                       d->exact_components, PM_MIN(card, PM_MAX_PCA_COMPONENTS));
    if (d->kdtree_leaf_size < 1 || d->kdtree_leaf_size > 1024)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "database: KD-tree leaf size %d is outside 1..1024", d->kdtree_leaf_size);
    if (d->exact_leaf_size < PM_BT_BLOCK || d->exact_leaf_size > 4096)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "database: exact leaf size %d is outside %d..4096", d->exact_leaf_size,
                       PM_BT_BLOCK);
    /* 0 would mean brute force alone, but is what a def filled without pm_default_database_def()
     * holds: ask for brute force by its bit. */
    if (d->search_modes == 0)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "database: search_modes is 0 (PM_SEARCH_MODES_ALL for every mode, as pm_default_database_def() "
                       "sets; brute force alone is PM_SEARCH_MODE_BIT(PM_SEARCH_BRUTEFORCE))");
    if (d->search_modes & ~PM_SEARCH_MODES_ALL)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "database: search_modes 0x%x has bits past the four modes (PM_SEARCH_MODE_BIT of exact, bruteforce, "
                       "pcakdtree, vptree)",
                       d->search_modes);
    if (d->threads < 1 || d->threads > 64)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "database: threads %d is outside 1..64", d->threads);
    if (!(d->exclude_start >= 0.0f && d->exclude_start < PM_MAX_EXCLUDE_SECONDS))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "database: exclude_start %s is outside [0, %g) seconds",
                       pm_float_text(d->exclude_start).text, PM_MAX_EXCLUDE_SECONDS);
    if (!(d->exclude_end >= 0.0f && d->exclude_end < PM_MAX_EXCLUDE_SECONDS))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "database: exclude_end %s is outside [0, %g) seconds",
                       pm_float_text(d->exclude_end).text, PM_MAX_EXCLUDE_SECONDS);
    if (d->mirror_axis < -1 || d->mirror_axis > 2)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "database: mirror axis %d is not -1, 0, 1 or 2", d->mirror_axis);
    /* The asset expansion makes 1 + mirror copies of each asset. */
    if (d->mirror != 0 && d->mirror != 1)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "database: mirror is %d (must be 0 or 1)", d->mirror);
    if (d->trim_rest_first_frame != 0 && d->trim_rest_first_frame != 1)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "database: trim_rest_first_frame is %d (must be 0 or 1)",
                       d->trim_rest_first_frame);
    /* Here rather than per asset, so that the error names the field before any work (the file
     * check would only say that the settings are not valid). */
    if ((r = pm_root_def_validate(&d->root, error)) != PM_OK) {
        pm_error_prefix(error, "database");
        return r;
    }
    return PM_OK;
}

/* The name an asset is stored under (its mirrored copy's adds ".mirror"). */
const char *pm_asset_def_name(const pm_asset_def *a) {
    return a->name ? a->name : (a->clip->name ? a->clip->name : "clip");
}

/* Poses carry their addend as a half float; beyond its largest finite value it would be Inf... */
static pm_result check_addend(float v, int i, const char *name, const char *field, pm_error *error) {
    if (!(fabsf(v) <= PM_MAX_COST_ADDEND))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "asset %d (%s): %s %s is outside -%g..%g", i, name, field,
                       pm_float_text(v).text, PM_MAX_COST_ADDEND, PM_MAX_COST_ADDEND);
    /* ...and below its smallest subnormal an addend would be lost without a word. */
    if (v != 0.0f && pm_half_to_float(pm_float_to_half(v)) == 0.0f)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "asset %d (%s): %s %g rounds to 0 as a half float (the smallest is %g): give 0 or a larger "
                       "magnitude",
                       i, name, field, (double)v, (double)pm_half_to_float(1));
    return PM_OK;
}

static pm_result validate_ranges(const pm_asset_def *a, int i, const char *name, pm_error *error) {
    if (a->range_count < 0 || a->range_count > PM_MAX_ASSET_RANGES)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "asset %d (%s): range_count %d is outside 0..%d", i, name,
                       a->range_count, PM_MAX_ASSET_RANGES);
    if (a->range_count && !a->ranges)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "asset %d (%s): ranges is NULL with range_count %d", i, name,
                       a->range_count);
    for (int k = 0; k < a->range_count; k++) {
        const pm_asset_range *g = &a->ranges[k];
        char field[48];
        if (!(g->start >= 0.0f && g->end > g->start && g->end < PM_MAX_EXCLUDE_SECONDS))
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "asset %d (%s): ranges[%d] [%s, %s) is not a span of [0, %g) seconds with start < end", i,
                           name, k, pm_float_text(g->start).text, pm_float_text(g->end).text, PM_MAX_EXCLUDE_SECONDS);
        if (g->exclude != 0 && g->exclude != 1)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "asset %d (%s): ranges[%d].exclude is %d (must be 0 or 1)", i,
                           name, k, g->exclude);
        snprintf(field, sizeof field, "ranges[%d].cost_addend", k);
        if (check_addend(g->cost_addend, i, name, field, error) != PM_OK) return PM_ERR_INVALID_ARGUMENT;
    }
    /* A pose's addend is the asset's plus its ranges', summed as the build sums them. The sum
     * only changes where a range starts or ends, so those times are all there is to check
     * (quadratic in the ranges, hence their limit). */
    const float base = a->cost_addend;
    for (int k = 0; k < 2 * a->range_count; k++) {
        const float t = k & 1 ? a->ranges[k / 2].end : a->ranges[k / 2].start;
        float sum = 0.0f;
        for (int j = 0; j < a->range_count; j++)
            if (a->ranges[j].start <= t && t < a->ranges[j].end) sum += a->ranges[j].cost_addend;
        if (!(fabsf(base + sum) <= PM_MAX_COST_ADDEND))
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "asset %d (%s): its cost_addend and the ranges holding %g s add up to %s, outside -%g..%g", i,
                           name, (double)t, pm_float_text(base + sum).text, PM_MAX_COST_ADDEND, PM_MAX_COST_ADDEND);
    }
    return PM_OK;
}

/* The fields of one asset; the clip itself is validated by the caller. `mirrored`: the build
 * also adds its mirrored copy. */
static pm_result validate_asset(const pm_asset_def *a, int i, int mirrored, pm_error *error) {
    const char *name = pm_asset_def_name(a);
    /* Asset names go into one-line messages and `info` listings. */
    if (pm_check_name(name, "its name", error) != PM_OK) {
        pm_error_prefix(error, "asset %d", i);
        return PM_ERR_INVALID_ARGUMENT;
    }
    if (check_addend(a->cost_addend, i, name, "cost_addend", error) != PM_OK) return PM_ERR_INVALID_ARGUMENT;
    if (a->looping < -1 || a->looping > 1)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "asset %d (%s): looping is %d (must be -1 for the clip's flag, 0 or 1)",
                       i, name, a->looping);
    if (a->mirror < -1 || a->mirror > 1)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "asset %d (%s): mirror is %d (must be -1 for the database default, 0 or 1)", i, name, a->mirror);
    if (a->param_count < 0 || a->param_count > 3)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "asset %d (%s): param_count %d is outside 0..3", i, name,
                       a->param_count);
    for (int k = 0; k < a->param_count; k++)
        if (!isfinite(a->params[k]))
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "asset %d (%s): params[%d] is %g (must be finite)", i, name, k,
                           (double)a->params[k]);
    if (a->mirror_negate_params < 0 || a->mirror_negate_params >= (1 << a->param_count))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "asset %d (%s): mirror_negate_params %d is outside 0..%d (a bit per parameter; it has %d)", i,
                       name, a->mirror_negate_params, (1 << a->param_count) - 1, a->param_count);
    /* Negative means the database default; the bound keeps seconds x fps an int. */
    if (!isfinite(a->exclude_start) || a->exclude_start >= PM_MAX_EXCLUDE_SECONDS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "asset %d (%s): exclude_start %s is outside [0, %g) seconds (< 0 = the database default)", i,
                       name, pm_float_text(a->exclude_start).text, PM_MAX_EXCLUDE_SECONDS);
    if (!isfinite(a->exclude_end) || a->exclude_end >= PM_MAX_EXCLUDE_SECONDS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "asset %d (%s): exclude_end %s is outside [0, %g) seconds (< 0 = the database default)", i, name,
                       pm_float_text(a->exclude_end).text, PM_MAX_EXCLUDE_SECONDS);
    if (validate_ranges(a, i, name, error) != PM_OK) return PM_ERR_INVALID_ARGUMENT;
    /* A cut name could repeat another's: refused rather than shortened. */
    size_t len = strlen(name) + (mirrored ? strlen(".mirror") : 0);
    if (len > PM_MAX_ASSET_NAME)
        return pm_fail(error, PM_ERR_LIMIT, "asset %d: its name%s is %zu bytes, over the %d a database stores", i,
                       mirrored ? " with its mirrored copy's \".mirror\"" : "", len, PM_MAX_ASSET_NAME);
    return PM_OK;
}

pm_result pm_database_check_inputs(const pm_database_def *def, const pm_asset_def *assets, int asset_count,
                                   pm_error *error) {
    pm_result r = validate_def(def, error);
    if (r != PM_OK) return r;
    if (asset_count < 1) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "database: no assets (asset_count %d)", asset_count);
    /* Each asset counts at least once: a count over the limit is refused before the walk below
     * reads an array that may be shorter than it. */
    if ((unsigned)asset_count > PM_MAX_ASSETS)
        return pm_fail(error, PM_ERR_LIMIT, "database: asset_count %d exceeds %u", asset_count, PM_MAX_ASSETS);
    uint64_t total = 0;
    for (int i = 0; i < asset_count; i++) {
        const pm_asset_def *a = &assets[i];
        if (!a->clip) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "asset %d has no clip", i);
        if ((r = pm_clip_validate(a->clip, error)) != PM_OK) {
            pm_error_prefix(error, "asset %d", i);
            return r;
        }
        int mirrored = (a->mirror < 0 ? def->mirror : a->mirror) != 0;
        if ((r = validate_asset(a, i, mirrored, error)) != PM_OK) return r;
        total += 1u + (mirrored ? 1u : 0u);
    }
    if (total > PM_MAX_ASSETS)
        return pm_fail(error, PM_ERR_LIMIT, "database: %llu assets (mirrored copies included) exceed %u",
                       (unsigned long long)total, PM_MAX_ASSETS);
    return PM_OK;
}

pm_result pm_database_def_resolve(pm_database_def *out, pm_schema **storage, const pm_database_def *def,
                                  pm_error *error) {
    *out = *def;
    *storage = NULL;
    if (def->schema) return PM_OK;
    pm_schema *s = (pm_schema *)pm_alloc(def->allocator, sizeof *s, 16);
    if (!s) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory for the default schema");
    (void)pm_schema_preset(s, "ue-locomotion", NULL); /* a built-in preset into a schema: cannot fail */
    out->schema = *storage = s;
    return PM_OK;
}
