/* .pmdb images: assembly, validation on open, save and load. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "database_internal.h"

static size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

uint64_t pm_database_image_checksum(const uint8_t *image, size_t size) {
    pmdb_header h;
    memcpy(&h, image, sizeof h);
    h.checksum = 0;
    pm_hasher hs;
    pm_hasher_init(&hs, 0x706D6462ull);
    pm_hasher_update(&hs, &h, sizeof h);
    pm_hasher_update(&hs, image + sizeof h, size - sizeof h);
    return pm_hasher_final(&hs);
}

pm_result pm_database_assemble(pm_database **out, pmdb_header *header, const pmdb_blob *blobs, int blob_count,
                               const pm_allocator *allocator, pm_error *error) {
    size_t table = sizeof(pmdb_header) + (size_t)blob_count * sizeof(pmdb_section);
    size_t size = align_up(table, PMDB_ALIGN);
    for (int i = 0; i < blob_count; i++) size = align_up(size + (size_t)blobs[i].count * blobs[i].elem_size, PMDB_ALIGN);
    uint8_t *image = (uint8_t *)pm_alloc_large_array(allocator, size, 1, PMDB_ALIGN);
    if (!image) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory for a %zu-byte image", size);
    memcpy(header->magic, PMDB_MAGIC, 8);
    if (!header->version) header->version = PMDB_VERSION;
    header->header_size = sizeof(pmdb_header);
    header->file_size = size;
    header->endian = PMDB_ENDIAN_TAG;
    header->section_count = (uint32_t)blob_count;
    header->checksum = 0;
    size_t at = align_up(table, PMDB_ALIGN);
    for (int i = 0; i < blob_count; i++) {
        pmdb_section s;
        memset(&s, 0, sizeof s);
        s.id = blobs[i].id;
        s.elem_size = blobs[i].elem_size;
        s.offset = at;
        s.count = blobs[i].count;
        memcpy(image + sizeof(pmdb_header) + (size_t)i * sizeof s, &s, sizeof s);
        size_t bytes = (size_t)blobs[i].count * blobs[i].elem_size;
        if (bytes) memcpy(image + at, blobs[i].data, bytes);
        at = align_up(at + bytes, PMDB_ALIGN);
    }
    memcpy(image, header, sizeof *header);
    header->checksum = pm_database_image_checksum(image, size);
    memcpy(image, header, sizeof *header);
    /* The checksum was just computed from these bytes: validate everything else. */
    return pm_database_open_image(out, image, size, PM_LOAD_SKIP_CHECKSUM, allocator, error);
}

/* ---- validation ---- */

typedef struct view {
    const uint8_t *image;
    size_t size;
    const pmdb_section *sections;
    uint32_t section_count;
} view;

#define CORRUPT(...) pm_fail(error, PM_ERR_CORRUPT, __VA_ARGS__)

static const char *section_name(uint32_t id) {
    static const char *const names[] = {"?", "schema", "settings", "strings", "assets", "pose metadata", "offsets",
                                        "scales", "weights", "values", "vector->pose starts", "vector->pose list",
                                        "PCA mean", "PCA basis", "PCA eigenvalues", "KD-tree nodes", "KD-tree points",
                                        "KD-tree point starts", "KD-tree point vectors", "bound-tree nodes",
                                        "bound-tree boxes", "bound-tree points", "VP-tree nodes", "VP-tree items",
                                        "vector addends", "bound-tree value boxes", "asset sources", "mirror maps"};
    return id <= PMDB_SECTION_COUNT ? names[id] : "?";
}

/* Finds a section, checks its element size and exact element count. */
static pm_result get_section(const void **out, const view *v, uint32_t id, uint32_t elem_size, uint64_t count,
                             pm_error *error) {
    for (uint32_t i = 0; i < v->section_count; i++) {
        pmdb_section s;
        memcpy(&s, &v->sections[i], sizeof s);
        if (s.id != id) continue;
        if (s.elem_size != elem_size)
            return CORRUPT("section %s: element size %u, expected %u", section_name(id), s.elem_size, elem_size);
        if (s.count != count)
            return CORRUPT("section %s: %llu elements, expected %llu", section_name(id), (unsigned long long)s.count,
                           (unsigned long long)count);
        *out = v->image + s.offset;
        return PM_OK;
    }
    return CORRUPT("section %s is missing", section_name(id));
}

static int all_finite(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static pm_result check_header(const pmdb_header *h, size_t size, pm_error *error) {
    if (memcmp(h->magic, PMDB_MAGIC, 8) != 0) return CORRUPT("not a posematch database (bad magic)");
    if (h->endian != PMDB_ENDIAN_TAG) return CORRUPT("byte order tag 0x%08x is wrong", h->endian);
    if (h->version != PMDB_VERSION && h->version != PMDB_VERSION_PARTIAL)
        return pm_fail(error, PM_ERR_VERSION, "format version %u is not supported (this build reads %u and %u)", h->version,
                       PMDB_VERSION, PMDB_VERSION_PARTIAL);
    if (h->header_size != sizeof(pmdb_header)) return CORRUPT("header size %u, expected %zu", h->header_size, sizeof *h);
    if (h->file_size != size)
        return CORRUPT("truncated or padded: the header says %llu bytes, the data has %zu", (unsigned long long)h->file_size,
                       size);
    if (h->section_count < 1 || h->section_count > 64) return CORRUPT("%u sections", h->section_count);
    if (h->cardinality < 1 || h->cardinality > PM_MAX_CARDINALITY) return CORRUPT("cardinality %u", h->cardinality);
    if (h->stride != (h->cardinality + 7u) / 8u * 8u) return CORRUPT("row stride %u for cardinality %u", h->stride, h->cardinality);
    if (h->channel_count < 1 || h->channel_count > PM_MAX_CHANNELS) return CORRUPT("%u channels", h->channel_count);
    if (h->pose_count < 1 || h->asset_count < 1 || h->asset_count > PM_MAX_ASSETS || h->asset_count > h->pose_count)
        return CORRUPT("%u poses in %u assets", h->pose_count, h->asset_count);
    if (h->vector_count < 1 || h->vector_count > h->pose_count ||
        (uint64_t)h->vector_count * h->cardinality > PM_MAX_POSE_VALUES)
        return CORRUPT("%u unique vectors for %u poses", h->vector_count, h->pose_count);
    if (h->searchable_vectors > h->vector_count || h->searchable_poses > h->pose_count ||
        h->block_transition_poses != h->pose_count - h->searchable_poses || h->excluded_poses > h->block_transition_poses ||
        (h->searchable_vectors == 0) != (h->searchable_poses == 0))
        return CORRUPT("pose and vector counts disagree");
    if (h->pca_components < 1 || h->pca_components > PM_MAX_PCA_COMPONENTS || h->pca_components > h->cardinality)
        return CORRUPT("%u PCA components", h->pca_components);
    if (h->exact_components < 1 || h->exact_components > h->cardinality || h->exact_components > PM_MAX_PCA_COMPONENTS)
        return CORRUPT("%u exact components", h->exact_components);
    if (h->bt_block_rows != h->exact_components + 1u) return CORRUPT("bound-tree block rows");
    if (h->kd_point_count > h->searchable_vectors) return CORRUPT("%u KD-tree points", h->kd_point_count);
    uint32_t max_nodes = 2u * h->searchable_vectors + 1u;
    if (h->kd_node_count > max_nodes || h->bt_node_count > max_nodes || h->vp_node_count > max_nodes ||
        h->vp_item_count > h->searchable_vectors)
        return CORRUPT("tree sizes out of range");
    if (!isfinite(h->min_cost_addend) || !(h->fps > 0.0f) || !isfinite(h->fps)) return CORRUPT("header numbers are not finite");
    return PM_OK;
}

static pm_result check_sections(view *v, const pmdb_header *h, pm_error *error) {
    size_t table_end = sizeof(pmdb_header) + (size_t)h->section_count * sizeof(pmdb_section);
    if (table_end > v->size) return CORRUPT("section table runs past the end");
    v->sections = (const pmdb_section *)(v->image + sizeof(pmdb_header));
    v->section_count = h->section_count;
    for (uint32_t i = 0; i < h->section_count; i++) {
        pmdb_section s;
        memcpy(&s, &v->sections[i], sizeof s);
        if (s.id < 1 || s.id > PMDB_SECTION_COUNT) return CORRUPT("section %u has unknown id %u", i, s.id);
        for (uint32_t k = 0; k < i; k++)
            if (v->sections[k].id == s.id) return CORRUPT("section %s appears twice", section_name(s.id));
        if (s.offset % PMDB_ALIGN || s.offset < table_end || s.offset > v->size)
            return CORRUPT("section %s: offset %llu is not valid", section_name(s.id), (unsigned long long)s.offset);
        if (s.elem_size == 0 || s.elem_size > 4096 || s.count > (v->size - s.offset) / s.elem_size)
            return CORRUPT("section %s runs past the end of the file", section_name(s.id));
    }
    return PM_OK;
}

/* Which structures the file holds: every mode's (version 3), or all but those the settings say
 * were left out (version 4, which leaves out at least one). A tree is there exactly when its mode
 * is and something is searchable. */
static pm_result check_structures(const pmdb_header *h, const pmdb_settings *st, pm_error *error) {
    if (st->omitted_modes & ~PMDB_TREE_MODES) return CORRUPT("settings: omitted modes 0x%x", st->omitted_modes);
    if ((h->version == PMDB_VERSION_PARTIAL) != (st->omitted_modes != 0))
        return CORRUPT("format version %u with omitted modes 0x%x", h->version, st->omitted_modes);
    for (int i = 0; i < 6; i++)
        if (st->reserved[i]) return CORRUPT("settings: reserved field %d is not zero", i);
    const int any = h->searchable_vectors > 0;
    if ((!PMDB_OMITS(st, PM_SEARCH_EXACT) && any != (h->bt_node_count > 0)) ||
        (!PMDB_OMITS(st, PM_SEARCH_PCAKDTREE) && any != (h->kd_node_count > 0)) ||
        (!PMDB_OMITS(st, PM_SEARCH_VPTREE) && any != (h->vp_node_count > 0)))
        return CORRUPT("trees do not match the searchable vectors");
    if ((PMDB_OMITS(st, PM_SEARCH_EXACT) && h->bt_node_count) ||
        (PMDB_OMITS(st, PM_SEARCH_PCAKDTREE) && (h->kd_node_count || h->kd_point_count)) ||
        (PMDB_OMITS(st, PM_SEARCH_VPTREE) && (h->vp_node_count || h->vp_item_count)))
        return CORRUPT("a tree the settings leave out has nodes");
    return PM_OK;
}

static pm_result decode_settings(pm_database *db, const pmdb_channel *ch, const pmdb_settings *st, pm_error *error) {
    pm_database_def *d = &db->settings;
    *d = pm_default_database_def();
    pm_schema *schema = &db->schema;
    pm_schema_init(schema);
    d->schema = schema;
    if (!memchr(st->schema_name, '\0', sizeof st->schema_name)) return CORRUPT("settings: schema name is not terminated");
    memcpy(schema->name, st->schema_name, sizeof schema->name);
    for (int i = 0; i < db->channel_count; i++) {
        pm_channel_def *c = &schema->channels[i];
        memset(c, 0, sizeof *c);
        c->kind = (pm_feature_kind)ch[i].kind;
        memcpy(c->name, ch[i].name, PM_NAME_SIZE);
        memcpy(c->bone, ch[i].bone, PM_NAME_SIZE);
        memcpy(c->curve, ch[i].curve, PM_NAME_SIZE);
        memcpy(c->group, ch[i].group, PM_NAME_SIZE);
        c->weight = ch[i].weight;
        c->offset = ch[i].offset;
        c->components = (pm_components)ch[i].components;
        c->axis = (int)ch[i].axis;
        c->size = (int)ch[i].size;
        c->parent = ch[i].parent;
        c->role = ch[i].role;
        if (ch[i].sample_count > PM_MAX_TRAJECTORY_SAMPLES || ch[i].kind > PM_FEATURE_GROUP || ch[i].components > 1)
            return CORRUPT("schema channel %d is not valid", i);
        c->sample_count = (int)ch[i].sample_count;
        for (int k = 0; k < c->sample_count; k++) {
            c->samples[k].offset = ch[i].samples[k].offset;
            c->samples[k].flags = ch[i].samples[k].flags;
            c->samples[k].weight = ch[i].samples[k].weight;
        }
    }
    schema->channel_count = db->channel_count;
    pm_error sub;
    if (pm_schema_layout_compute(&db->layout, schema, &sub) != PM_OK) return CORRUPT("schema: %s", sub.message);
    if (db->layout.cardinality != db->card) return CORRUPT("schema cardinality %d, header %d", db->layout.cardinality, db->card);
    d->fps = st->fps;
    d->mirror = (int)st->mirror;
    d->pca_components = (int)st->pca_components;
    d->kdtree_leaf_size = (int)st->kdtree_leaf_size;
    d->exact_components = (int)st->exact_components;
    d->exact_leaf_size = (int)st->exact_leaf_size;
    d->search_modes = PM_SEARCH_MODES_ALL & ~st->omitted_modes; /* (check_structures vetted the bits) */
    d->trim_rest_first_frame = (int)st->trim_rest_first_frame;
    d->exclude_start = st->exclude_start;
    d->exclude_end = st->exclude_end;
    d->mirror_axis = st->mirror_axis;
    d->root.facing_mode = (pm_facing_mode)st->root_facing_mode;
    d->root.hips_axis = pm_vec3_make(st->root_hips_axis[0], st->root_hips_axis[1], st->root_hips_axis[2]);
    d->root.ground_mode = (pm_ground_mode)st->root_ground_mode;
    d->root.position_smoothing = st->root_position_smoothing;
    d->root.facing_smoothing = st->root_facing_smoothing;
    if (!(d->fps > 0.0f) || !isfinite(d->fps) || st->root_facing_mode > 1 || st->exact_leaf_size < PM_BT_BLOCK ||
        st->exact_leaf_size > 4096 || st->kdtree_leaf_size < 1 || st->kdtree_leaf_size > 1024 || st->root_ground_mode > 1 ||
        !(d->root.position_smoothing >= 0.0f) || !(d->root.facing_smoothing >= 0.0f) ||
        !isfinite(d->root.position_smoothing) || !isfinite(d->root.facing_smoothing) ||
        !all_finite(st->root_hips_axis, 3) || !isfinite(d->exclude_start) || !isfinite(d->exclude_end))
        return CORRUPT("settings are not valid");
    /* The header repeats what the build chose: results' times come from its rate and query clips
     * are prepared at the settings', so the two must agree. */
    const pmdb_header *h = db->header;
    if (d->fps != h->fps) return CORRUPT("settings fps %g, header %g", (double)d->fps, (double)h->fps);
    if (st->pca_components != h->pca_components)
        return CORRUPT("settings PCA components %u, header %u", (unsigned)st->pca_components, (unsigned)h->pca_components);
    if (st->exact_components && st->exact_components != h->exact_components)
        return CORRUPT("settings exact components %u, header %u", (unsigned)st->exact_components,
                       (unsigned)h->exact_components);
    return PM_OK;
}

static pm_result check_assets_and_poses(pm_database *db, const pmdb_header *h, uint8_t *seen, pm_error *error) {
    uint32_t next = 0;
    for (uint32_t a = 0; a < h->asset_count; a++) {
        const pmdb_asset *as = &db->assets[a];
        if (as->name >= db->strings_size) return CORRUPT("asset %u: name offset out of range", a);
        if (as->first_pose != next || as->pose_count < 1 || as->pose_count > h->pose_count - next)
            return CORRUPT("asset %u: poses [%u, +%u) do not follow the previous asset", a, as->first_pose, as->pose_count);
        if (as->flags > 3 || as->param_count > 3 || !isfinite(as->cost_addend) || !all_finite(as->params, 3) ||
            (as->source_asset != -1 && (as->source_asset < 0 || (uint32_t)as->source_asset >= h->asset_count)))
            return CORRUPT("asset %u: fields out of range", a);
        for (uint32_t p = as->first_pose; p < as->first_pose + as->pose_count; p++) {
            uint64_t m = db->meta[p];
            if (PM_META_ASSET(m) != a) return CORRUPT("pose %u: asset %u, expected %u", p, PM_META_ASSET(m), a);
            if (PM_META_VECTOR(m) >= h->vector_count) return CORRUPT("pose %u: value row %u out of range", p, PM_META_VECTOR(m));
            if (!isfinite(pm_half_to_float(PM_META_ADDEND(m)))) return CORRUPT("pose %u: cost addend is not finite", p);
        }
        next += as->pose_count;
    }
    if (next != h->pose_count) return CORRUPT("assets cover %u poses, header says %u", next, h->pose_count);
    if (db->strings_size == 0 || db->strings[db->strings_size - 1] != '\0') return CORRUPT("strings are not terminated");
    /* vector -> poses: a partition of all poses, each listed under its own vector. */
    if (db->vec_pose_start[0] != 0 || db->vec_pose_start[h->vector_count] != h->pose_count)
        return CORRUPT("vector->pose map does not cover the poses");
    uint32_t searchable = 0, blocked = 0;
    float smallest = INFINITY;
    for (uint32_t v = 0; v < h->vector_count; v++) {
        uint32_t b = db->vec_pose_start[v], e = db->vec_pose_start[v + 1];
        if (e <= b || e > h->pose_count) return CORRUPT("vector->pose map: vector %u has an empty or bad range", v);
        int any = 0;
        float min_addend = INFINITY;
        for (uint32_t i = b; i < e; i++) {
            uint32_t p = db->vec_poses[i];
            if (p >= h->pose_count || seen[p] || PM_META_VECTOR(db->meta[p]) != v)
                return CORRUPT("vector->pose map: entry %u (pose %u) is wrong", i, p);
            seen[p] = 1;
            if (!PM_META_BLOCKED(db->meta[p])) {
                any = 1;
                float a = pm_half_to_float(PM_META_ADDEND(db->meta[p]));
                if (a < min_addend) min_addend = a;
            }
        }
        if (any != (v < h->searchable_vectors)) return CORRUPT("vector %u: searchable flag disagrees with its poses", v);
        /* The search skips a row whose cost plus this exceeds the best: it must be exact. */
        if (any && db->vec_min_addend[v] != min_addend)
            return CORRUPT("vector %u: smallest addend disagrees with its poses", v);
        if (min_addend < smallest) smallest = min_addend;
    }
    for (uint32_t p = 0; p < h->pose_count; p++) {
        if (PM_META_BLOCKED(db->meta[p])) blocked++;
        else searchable++;
    }
    if (searchable != h->searchable_poses || blocked != h->block_transition_poses)
        return CORRUPT("pose flags disagree with the header counts");
    if (h->min_cost_addend != (isfinite(smallest) ? smallest : 0.0f))
        return CORRUPT("the header's smallest addend disagrees with the poses");
    return PM_OK;
}

/* Mirrored copies are played from their source's clip with the map and axis recorded here: a map
 * that is no left/right swap would index past a clip's joints. */
static pm_result check_sources(const pm_database *db, const pmdb_header *h, pm_error *error) {
    uint32_t at = 0;
    for (uint32_t a = 0; a < h->asset_count; a++) {
        const pmdb_asset *as = &db->assets[a];
        const pmdb_asset_source *s = &db->sources[a];
        const int mirrored = (as->flags & PMDB_ASSET_MIRRORED) != 0;
        if (s->joint_count < 1 || s->joint_count > PM_MAX_JOINTS || s->frame_count < 1 || s->frame_count > PM_MAX_FRAMES ||
            !(s->frame_time > 0.0f) || !isfinite(s->frame_time) || s->reserved != 0)
            return CORRUPT("asset %u: source clip of %u joints and %u frames of %g s", a, s->joint_count, s->frame_count,
                           (double)s->frame_time);
        if (!mirrored) {
            if (as->source_asset != -1 || s->mirror_map != UINT32_MAX || s->mirror_axis != -1)
                return CORRUPT("asset %u: mirror fields on an asset that is not mirrored", a);
            continue;
        }
        if (as->source_asset < 0 || (db->assets[as->source_asset].flags & PMDB_ASSET_MIRRORED))
            return CORRUPT("asset %u: a mirrored copy whose source asset %d is not an unmirrored asset", a,
                           (int)as->source_asset);
        const pmdb_asset_source *o = &db->sources[as->source_asset];
        if (o->joint_count != s->joint_count || o->frame_count != s->frame_count || o->frame_time != s->frame_time ||
            o->skeleton_hash != s->skeleton_hash || o->motion_hash != s->motion_hash)
            return CORRUPT("asset %u: its source asset %d was made from another clip", a, (int)as->source_asset);
        if (s->mirror_map != at || s->mirror_axis < 0 || s->mirror_axis > 2)
            return CORRUPT("asset %u: mirror map at %u (expected %u) or axis %d out of range", a, s->mirror_map, at,
                           (int)s->mirror_axis);
        const int32_t *map = db->mirror_maps + at;
        for (uint32_t j = 0; j < s->joint_count; j++)
            if (map[j] < 0 || (uint32_t)map[j] >= s->joint_count || map[map[j]] != (int32_t)j)
                return CORRUPT("asset %u: mirror map entry %u (%d) is not a left/right swap", a, j, (int)map[j]);
        at += s->joint_count;
    }
    return PM_OK;
}

/* Children above their parent rule out cycles; one parent per node rules out shared subtrees,
 * which would let a walk push a node twice and run past its node-count-sized heap or stack. */
static int adopt(uint8_t *has_parent, uint32_t child) {
    if (has_parent[child]) return 0;
    has_parent[child] = 1;
    return 1;
}

/* A box that does not hold its points (or a child's box) would bound above their costs and prune
 * the answer away: every bound the exact walk uses is checked against what it bounds. */
static pm_result check_bound_tree_boxes(const pm_database *db, const pmdb_header *h, pm_error *error) {
    const int ke = (int)h->exact_components, rows = ke + 1, P = pm_bt_box_lanes(ke), bs = pm_bt_box_stride(ke);
    const int S = (int)h->stride;
    for (uint32_t i = 0; i < h->bt_node_count; i++) {
        const pmdb_bt_node *n = &db->bt_nodes[i];
        const float *box = db->bt_boxes + (size_t)i * bs;
        const float *vlo = db->bt_value_boxes + (size_t)i * 2 * S, *vhi = vlo + S;
        for (int d = 0; d < P; d++)
            if (!(box[d] <= box[P + d])) return CORRUPT("bound-tree node %u: box is inverted in lane %d", i, d);
        /* Lanes past the coordinates and the residual meet the query's zeros: anything else there
         * would raise every bound. */
        for (int d = rows; d < P; d++)
            if (box[d] != 0.0f || box[P + d] != 0.0f) return CORRUPT("bound-tree node %u: padding lane %d is not zero", i, d);
        for (int d = 0; d < S; d++)
            if (!(vlo[d] <= vhi[d])) return CORRUPT("bound-tree node %u: value box is inverted in dimension %d", i, d);
        if (n->left) {
            for (int c = 0; c < 2; c++) {
                uint32_t k = c ? n->right : n->left;
                const float *cb = db->bt_boxes + (size_t)k * bs, *clo = db->bt_value_boxes + (size_t)k * 2 * S;
                for (int d = 0; d < P; d++)
                    if (cb[d] < box[d] || cb[P + d] > box[P + d]) return CORRUPT("bound-tree node %u: child box outside", i);
                for (int d = 0; d < S; d++)
                    if (clo[d] < vlo[d] || clo[S + d] > vhi[d]) return CORRUPT("bound-tree node %u: child value box outside", i);
                if (cb[2 * P] < box[2 * P]) return CORRUPT("bound-tree node %u: smallest addend above a child's", i);
            }
            continue;
        }
        for (uint32_t v = n->first; v < n->first + n->count; v++) {
            for (int c = 0; c < rows; c++) {
                float x = db->bt_points[pm_bt_at(rows, v, c)];
                if (x < box[c] || x > box[P + c]) return CORRUPT("bound-tree node %u: point %u outside its box", i, v);
            }
            const float *row = db->values + (size_t)v * S;
            for (int d = 0; d < S; d++)
                if (row[d] < vlo[d] || row[d] > vhi[d]) return CORRUPT("bound-tree node %u: row %u outside its value box", i, v);
            if (db->vec_min_addend[v] < box[2 * P]) return CORRUPT("bound-tree node %u: smallest addend above row %u's", i, v);
        }
    }
    return PM_OK;
}

static pm_result check_trees(const pm_database *db, const pmdb_header *h, uint8_t *has_parent, pm_error *error) {
    uint32_t vs = h->searchable_vectors;
    memset(has_parent, 0, h->kd_node_count);
    for (uint32_t i = 0; i < h->kd_node_count; i++) {
        const pmdb_kd_node *n = &db->kd_nodes[i];
        if (n->dim < 0) {
            if (n->dim != -1 || n->a > h->kd_point_count || n->b > h->kd_point_count - n->a)
                return CORRUPT("KD-tree node %u: leaf range out of bounds", i);
        } else if ((uint32_t)n->dim >= h->pca_components || n->a <= i || n->b <= i || n->a >= h->kd_node_count ||
                   n->b >= h->kd_node_count || !isfinite(n->split))
            return CORRUPT("KD-tree node %u: children or split out of range", i);
        else if (!adopt(has_parent, n->a) || !adopt(has_parent, n->b))
            return CORRUPT("KD-tree node %u: a child has two parents", i);
    }
    if (pm_db_has_mode(db, PM_SEARCH_PCAKDTREE)) { /* (left out: no point map either) */
        if (db->kd_point_start[0] != 0 || db->kd_point_start[h->kd_point_count] != vs)
            return CORRUPT("KD-tree point map does not cover the searchable vectors");
        for (uint32_t i = 0; i < h->kd_point_count; i++)
            if (db->kd_point_start[i + 1] <= db->kd_point_start[i]) return CORRUPT("KD-tree point map is not increasing");
        for (uint32_t i = 0; i < vs; i++)
            if (db->kd_point_vecs[i] >= vs) return CORRUPT("KD-tree point vector %u out of range", i);
    }
    memset(has_parent, 0, h->bt_node_count);
    for (uint32_t i = 0; i < h->bt_node_count; i++) {
        const pmdb_bt_node *n = &db->bt_nodes[i];
        if (n->first > vs || n->count > vs - n->first || n->count == 0 || n->first % PM_BT_BLOCK)
            return CORRUPT("bound-tree node %u: range out of bounds", i);
        if ((n->left == 0) != (n->right == 0)) return CORRUPT("bound-tree node %u: one child only", i);
        if (n->left && (n->left <= i || n->right <= i || n->left >= h->bt_node_count || n->right >= h->bt_node_count))
            return CORRUPT("bound-tree node %u: children out of range", i);
        if (n->left && (!adopt(has_parent, n->left) || !adopt(has_parent, n->right)))
            return CORRUPT("bound-tree node %u: a child has two parents", i);
    }
    memset(has_parent, 0, h->vp_node_count);
    for (uint32_t i = 0; i < h->vp_node_count; i++) {
        const pmdb_vp_node *n = &db->vp_nodes[i];
        if (n->inside == 0) {
            if (n->vp > h->vp_item_count || n->outside > h->vp_item_count - n->vp)
                return CORRUPT("VP-tree node %u: leaf range out of bounds", i);
        } else if (n->vp >= vs || n->inside <= i || n->outside <= i || n->inside >= h->vp_node_count ||
                   n->outside >= h->vp_node_count || !(n->mu >= 0.0f) || !isfinite(n->mu))
            return CORRUPT("VP-tree node %u: fields out of range", i);
        else if (!adopt(has_parent, n->inside) || !adopt(has_parent, n->outside))
            return CORRUPT("VP-tree node %u: a child has two parents", i);
    }
    for (uint32_t i = 0; i < h->vp_item_count; i++)
        if (db->vp_items[i] >= vs) return CORRUPT("VP-tree item %u out of range", i);
    return PM_OK;
}

pm_result pm_database_open_image(pm_database **out, uint8_t *image, size_t size, unsigned flags,
                                 const pm_allocator *allocator, pm_error *error) {
    *out = NULL;
    pm_database *db = NULL;
    uint8_t *seen = NULL;
    pm_result r;
    pmdb_header h;
    if (size < sizeof h) {
        r = CORRUPT("truncated: %zu bytes is smaller than the header", size);
        goto fail;
    }
    memcpy(&h, image, sizeof h);
    if ((r = check_header(&h, size, error)) != PM_OK) goto fail;
    if (!(flags & PM_LOAD_SKIP_CHECKSUM) && pm_database_image_checksum(image, size) != h.checksum) {
        r = CORRUPT("checksum mismatch: the file is corrupted");
        goto fail;
    }
    view v = {image, size, NULL, 0};
    if ((r = check_sections(&v, &h, error)) != PM_OK) goto fail;
    db = (pm_database *)pm_alloc_zero(allocator, sizeof *db, 64);
    if (!db) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory");
        goto fail;
    }
    db->allocator = pm_allocator_resolve(allocator);
    db->image = image;
    db->in_place = (flags & PM_LOAD_IN_PLACE) != 0;
    db->size = size;
    db->header = (const pmdb_header *)image;
    db->card = (int)h.cardinality;
    db->stride = (int)h.stride;
    db->channel_count = (int)h.channel_count;
    uint32_t D = h.cardinality, V = h.vector_count, P = h.pose_count, VS = h.searchable_vectors;
    const void *p;
    const pmdb_channel *channels;
    const pmdb_settings *settings;
#define GET(dst, id, type, count)                                                                                       \
    do {                                                                                                               \
        if ((r = get_section(&p, &v, id, (uint32_t)sizeof(type), (uint64_t)(count), error)) != PM_OK) goto fail;        \
        dst = (const type *)p;                                                                                         \
    } while (0)
    GET(channels, PMDB_SCHEMA, pmdb_channel, h.channel_count);
    GET(settings, PMDB_SETTINGS, pmdb_settings, 1);
    if ((r = check_structures(&h, settings, error)) != PM_OK) goto fail;
    const int no_exact = PMDB_OMITS(settings, PM_SEARCH_EXACT), no_kd = PMDB_OMITS(settings, PM_SEARCH_PCAKDTREE);
    for (uint32_t i = 0; i < v.section_count; i++)
        if (v.sections[i].id == PMDB_STRINGS) {
            if (v.sections[i].elem_size != 1) {
                r = CORRUPT("strings: element size");
                goto fail;
            }
            db->strings = (const char *)image + v.sections[i].offset;
            db->strings_size = (size_t)v.sections[i].count;
        }
    if (!db->strings) {
        r = CORRUPT("section strings is missing");
        goto fail;
    }
    GET(db->assets, PMDB_ASSETS, pmdb_asset, h.asset_count);
    GET(db->meta, PMDB_POSE_META, uint64_t, P);
    GET(db->offset, PMDB_DIM_OFFSET, float, D);
    GET(db->scale, PMDB_DIM_SCALE, float, D);
    GET(db->wsqrt, PMDB_DIM_WSQRT, float, D);
    GET(db->values, PMDB_VALUES, float, (uint64_t)V * h.stride);
    GET(db->vec_pose_start, PMDB_VEC_POSE_START, uint32_t, V + 1);
    GET(db->vec_poses, PMDB_VEC_POSES, uint32_t, P);
    GET(db->vec_min_addend, PMDB_VEC_MIN_ADDEND, float, pm_bt_padded(VS));
    GET(db->pca_mean, PMDB_PCA_MEAN, float, D);
    GET(db->pca_basis, PMDB_PCA_BASIS, float, (uint64_t)D * D);
    GET(db->pca_eigen, PMDB_PCA_EIGEN, float, D);
    GET(db->kd_nodes, PMDB_KD_NODES, pmdb_kd_node, h.kd_node_count);
    GET(db->kd_points, PMDB_KD_POINTS, float, (uint64_t)h.kd_point_count * h.pca_components);
    GET(db->kd_point_start, PMDB_KD_POINT_START, uint32_t, no_kd ? 0 : h.kd_point_count + 1);
    GET(db->kd_point_vecs, PMDB_KD_POINT_VECS, uint32_t, no_kd ? 0 : VS);
    GET(db->bt_nodes, PMDB_BT_NODES, pmdb_bt_node, h.bt_node_count);
    uint64_t bt_box_floats = (uint64_t)h.bt_node_count * pm_bt_box_stride((int)h.exact_components);
    uint64_t bt_point_floats = no_exact ? 0 : pm_bt_padded(VS) * h.bt_block_rows;
    GET(db->bt_boxes, PMDB_BT_BOXES, float, bt_box_floats);
    GET(db->bt_points, PMDB_BT_POINTS, float, bt_point_floats);
    uint64_t bt_vbox_floats = (uint64_t)h.bt_node_count * 2 * h.stride;
    GET(db->bt_value_boxes, PMDB_BT_VALUE_BOXES, float, bt_vbox_floats);
    GET(db->vp_nodes, PMDB_VP_NODES, pmdb_vp_node, h.vp_node_count);
    GET(db->vp_items, PMDB_VP_ITEMS, uint32_t, h.vp_item_count);
    GET(db->sources, PMDB_ASSET_SOURCES, pmdb_asset_source, h.asset_count);
    uint64_t map_entries = 0;
    for (uint32_t a = 0; a < h.asset_count; a++)
        if (db->assets[a].flags & PMDB_ASSET_MIRRORED) map_entries += db->sources[a].joint_count;
    GET(db->mirror_maps, PMDB_MIRROR_MAPS, int32_t, map_entries);
#undef GET
    if ((r = decode_settings(db, channels, settings, error)) != PM_OK) goto fail;
    if (!all_finite(db->offset, D) || !all_finite(db->scale, D) || !all_finite(db->wsqrt, D) ||
        !all_finite(db->values, (size_t)V * h.stride) || !all_finite(db->pca_mean, D) ||
        !all_finite(db->pca_basis, (size_t)D * D) || !all_finite(db->pca_eigen, D) ||
        !all_finite(db->kd_points, (size_t)h.kd_point_count * h.pca_components) ||
        !all_finite(db->bt_points, (size_t)bt_point_floats) || !all_finite(db->vec_min_addend, VS)) {
        r = CORRUPT("non-finite numbers in the feature data");
        goto fail;
    }
    if (!all_finite(db->bt_boxes, (size_t)bt_box_floats) || !all_finite(db->bt_value_boxes, (size_t)bt_vbox_floats)) {
        r = CORRUPT("non-finite bound-tree boxes");
        goto fail;
    }
    for (uint32_t i = 0; i < D; i++)
        if (!(db->scale[i] > 0.0f) || db->wsqrt[i] < 0.0f) {
            r = CORRUPT("dimension %u: scale or weight out of range", i);
            goto fail;
        }
    memcpy(db->wsqrt_padded, db->wsqrt, (size_t)D * sizeof(float)); /* the rest stays zero */
    db->wsqrt = db->wsqrt_padded;
    /* Rows are padded to the stride with zeros: the kernels sum whole rows. */
    for (uint32_t row = 0; row < V; row++)
        for (uint32_t d = D; d < h.stride; d++)
            if (db->values[(size_t)row * h.stride + d] != 0.0f) {
                r = CORRUPT("value row %u: padding dimension %u is not zero", row, d);
                goto fail;
            }
    size_t seen_size = PM_MAX(PM_MAX((size_t)P, (size_t)h.kd_node_count), PM_MAX((size_t)h.bt_node_count, (size_t)h.vp_node_count));
    seen = (uint8_t *)pm_alloc_zero(allocator, seen_size + 1, 1);
    if (!seen) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory");
        goto fail;
    }
    if ((r = check_assets_and_poses(db, &h, seen, error)) != PM_OK) goto fail;
    if ((r = check_sources(db, &h, error)) != PM_OK) goto fail;
    if ((r = check_trees(db, &h, seen, error)) != PM_OK) goto fail;
    if ((r = check_bound_tree_boxes(db, &h, error)) != PM_OK) goto fail;
    pm_free(allocator, seen);
    *out = db;
    return PM_OK;
fail:
    pm_free(allocator, seen);
    pm_free(allocator, db);
    if (!(flags & PM_LOAD_IN_PLACE)) pm_free(allocator, image);
    return r;
}

/* ---- files ---- */

pm_result pm_database_load_memory(pm_database **out, const void *data, size_t size, unsigned flags,
                                  const pm_allocator *allocator, pm_error *error) {
    if (out) *out = NULL;
    if (!out || (!data && size)) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_load_memory: NULL argument");
    /* A bit this version does not know (another function's flag, a later version's) would
     * otherwise be ignored without a word. */
    const unsigned known = PM_LOAD_SKIP_CHECKSUM | PM_LOAD_IN_PLACE;
    if (flags & ~known)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "pm_database_load_memory: unknown flags 0x%x (only PM_LOAD_SKIP_CHECKSUM and PM_LOAD_IN_PLACE)",
                       flags & ~known);
    if (flags & PM_LOAD_IN_PLACE) {
        /* The kernels load 64-byte aligned sections with aligned instructions. */
        if ((uintptr_t)data % PMDB_ALIGN)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "pm_database_load_memory: in place, data must be 64-byte aligned (it is %u byte(s) past)",
                           (unsigned)((uintptr_t)data % PMDB_ALIGN));
        return pm_database_open_image(out, (uint8_t *)(uintptr_t)data, size, flags, allocator, error);
    }
    /* The image must be 64-byte aligned for the SIMD kernels: always copy. */
    uint8_t *image = (uint8_t *)pm_alloc_large(allocator, size ? size : 1, PMDB_ALIGN);
    if (!image) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "database: out of memory for %zu bytes", size);
    if (size) memcpy(image, data, size);
    return pm_database_open_image(out, image, size, flags, allocator, error);
}

pm_result pm_database_load(pm_database **out, const char *path, const pm_allocator *allocator, pm_error *error) {
    if (out) *out = NULL;
    if (!out || !path) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_load: NULL argument");
    if (!path[0]) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_load: path is empty");
    void *image = NULL;
    size_t n = 0;
    pm_result r = pm_file_read_image(&image, &n, path, 0, allocator, error);
    if (r != PM_OK) return r;
    /* (pm_file_read's buffers are aligned for the image, which is used in place.) */
    r = pm_database_open_image(out, (uint8_t *)image, n, 0, allocator, error);
    if (r != PM_OK) pm_error_prefix(error, "%s", path);
    return r;
}

pm_result pm_database_save(const pm_database *db, const char *path, pm_error *error) {
    if (!db || !path) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_save: NULL argument");
    if (!path[0]) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_database_save: path is empty");
    return pm_file_write(path, db->image, db->size, error);
}

const void *pm_database_bytes(const pm_database *db, size_t *size) {
    if (size) *size = db ? db->size : 0;
    return db ? db->image : NULL;
}

void pm_database_destroy(pm_database *db) {
    if (!db) return;
    pm_allocator a = db->allocator;
    if (!db->in_place) pm_free(&a, db->image);
    pm_free(&a, db);
}
