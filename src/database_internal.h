/* The database's on-disk format and in-memory view (private).
 *
 * A .pmdb file is a 256-byte header, a section table and 64-byte aligned sections, all little
 * endian. The in-memory database is the same bytes: loading validates them and points into
 * them, and a build serialises first and then opens its own image, so built and loaded
 * databases can never differ. */
#ifndef PM_DATABASE_INTERNAL_H
#define PM_DATABASE_INTERNAL_H

#include "core.h"
#include "posematch/database.h"
#include "posematch/search.h"
#include "schema_layout.h"

#define PMDB_MAGIC "PMDB\x89\r\n\x1a"
#define PMDB_VERSION 3u
/* A file that leaves out a mode's structure (pmdb_settings.omitted_modes) says version 4, so that
 * a reader of version 3 alone refuses it as another version rather than as a damaged file. A
 * database with every structure stays version 3, bytes and key unchanged. */
#define PMDB_VERSION_PARTIAL 4u
/* Bumped whenever the builder's output for the same inputs and settings changes (automatic
 * choices such as the exact components, tree splits), so that --cache never hands back a file
 * an older builder made. Part of the key, not of the format. */
#define PMDB_BUILDER_REVISION 25u /* 4: resampling keeps the last frame of 30 -> 60 fps clips; 5: ...on the grid of the exact ratio; 6: loops smoothed through their cycle, floors from toe tips; 7: mirror corrections from bone offsets, loop wrap continues root motion; 8: periodic joints wrap to their first frame, feet sync; 9: travel told from swing at the seam, turning loops restarted through their turn, phase over two cycles of a loop; 10: toe End Sites out of the floor; 11: blend-space samples of several strides cut into gait cycles, CMU L/R prefixes mirrored; 12: loop end keys turned with the loop (the root carrier, when faster than a centimetre a second), root motion of blends on the ground; 13: bound-tree splits across the largest mean absolute deviation; 14: ...at its mean; 15: exact components for 99.9% of the variance; 16: resampling reads the source at double, not float, times; 17: mirror corrections of Maya-style rigs no longer left to chance (a half turn the hips prefer no twist by, lopsided clips); 18: root smoothing fits a line near a non-looping clip's ends instead of repeating the end frame; 19: mirror maps from names pair HandL/HandR and Lhand/Rhand; 20: ...and weak markers (a glued L/R, an l/r prefix before a capital) are sides only where the counterpart exists, else the next is tried (a "Rig:Head" or "RIG:Head" is the head again); 21: angles (root facing, loop turns, twist corrections, blend-space ground yaw, rest lead-ins) from pm_atan2f/pm_acosf, not libm's atan2f/acosf, whose last bits differ between machines; 22: ...and every sin, cos, exp of the builder and its Euler angles (src/math_functions.c); 23: sin and cos beyond 2^20 quarter turns (Euler angles past about 1.9e8 degrees) reduced with 2/pi to 192 bits instead of pi/2 in three parts (they were off, even infinite); 24: a hips axis or leg line within 1e-5 of vertical (relative) keeps the last facing, so an axis turned upright keeps no rounding noise as a facing; BVH decimals at a float midpoint rounded once, exactly; 25: a held-pose blend-space sample (every joint static) aligned at its hips, not its leaves */
#define PMDB_ENDIAN_TAG 0x01020304u
/* Exclusion ranges in seconds stay below this, so that seconds x fps (<= 1000) fits an int. */
#define PM_MAX_EXCLUDE_SECONDS 1e6f
#define PMDB_ALIGN 64u

typedef enum pmdb_section_id {
    PMDB_SCHEMA = 1,          /* pmdb_channel x channels */
    PMDB_SETTINGS = 2,        /* pmdb_settings x 1 */
    PMDB_STRINGS = 3,         /* char blob, NUL-separated */
    PMDB_ASSETS = 4,          /* pmdb_asset x assets */
    PMDB_POSE_META = 5,       /* uint64 x poses */
    PMDB_DIM_OFFSET = 6,      /* float x cardinality */
    PMDB_DIM_SCALE = 7,       /* float x cardinality */
    PMDB_DIM_WSQRT = 8,       /* float x cardinality */
    PMDB_VALUES = 9,          /* float x vectors x stride, normalised, unweighted */
    PMDB_VEC_POSE_START = 10, /* uint32 x (vectors + 1) */
    PMDB_VEC_POSES = 11,      /* uint32 x poses */
    PMDB_PCA_MEAN = 12,       /* float x cardinality, weighted space */
    PMDB_PCA_BASIS = 13,      /* float x cardinality x cardinality, row i = component i */
    PMDB_PCA_EIGEN = 14,      /* float x cardinality, descending */
    PMDB_KD_NODES = 15,       /* pmdb_kd_node x kd nodes */
    PMDB_KD_POINTS = 16,      /* float x kd points x pca_components, leaf order */
    PMDB_KD_POINT_START = 17, /* uint32 x (kd points + 1) */
    PMDB_KD_POINT_VECS = 18,  /* uint32 x searchable vectors */
    PMDB_BT_NODES = 19,       /* pmdb_bt_node x bound-tree nodes */
    PMDB_BT_BOXES = 20,       /* float x nodes x pm_bt_box_stride(exact_components) */
    PMDB_BT_POINTS = 21,      /* float x blocks x (exact_components + 1) x PM_BT_BLOCK */
    PMDB_VP_NODES = 22,       /* pmdb_vp_node x vp nodes */
    PMDB_VP_ITEMS = 23,       /* uint32 x leaf items */
    PMDB_VEC_MIN_ADDEND = 24, /* float x searchable vectors: smallest addend of its searchable poses */
    PMDB_BT_VALUE_BOXES = 25, /* float x nodes x 2 x stride: each bound-tree node's box of stored values */
    PMDB_ASSET_SOURCES = 26,  /* pmdb_asset_source x assets */
    PMDB_MIRROR_MAPS = 27,    /* int32 x the joints of every mirrored asset, in asset order */
    PMDB_SECTION_COUNT = 27
} pmdb_section_id;

typedef struct pmdb_header {
    char magic[8];
    uint32_t version;
    uint32_t header_size;
    uint64_t file_size;
    uint64_t checksum; /* pm_hash64 of the whole file with this field zero */
    uint64_t key[2];
    uint32_t endian;
    uint32_t section_count;
    uint32_t pose_count;
    uint32_t asset_count;
    uint32_t cardinality;
    uint32_t stride;
    uint32_t channel_count;
    uint32_t vector_count;
    uint32_t searchable_vectors;
    uint32_t searchable_poses;
    uint32_t block_transition_poses;
    uint32_t excluded_poses;
    uint32_t pca_components;
    uint32_t kd_point_count;
    uint32_t kd_node_count;
    uint32_t exact_components;
    uint32_t bt_block_rows; /* exact_components + 1 */
    uint32_t bt_node_count;
    uint32_t vp_node_count;
    uint32_t vp_item_count;
    uint32_t flags; /* 1: some pose has a non-zero cost addend */
    float min_cost_addend;
    float fps;
    uint32_t reserved[29];
} pmdb_header;
_Static_assert(sizeof(pmdb_header) == 256, "pmdb_header is 256 bytes");

typedef struct pmdb_section {
    uint32_t id;
    uint32_t elem_size;
    uint64_t offset;
    uint64_t count;
} pmdb_section;

typedef struct pmdb_traj_sample {
    float offset;
    uint32_t flags;
    float weight;
} pmdb_traj_sample;

/* A schema channel with fixed-width fields only (no padding, names zero-filled). */
typedef struct pmdb_channel {
    uint32_t kind;
    char name[PM_NAME_SIZE];
    char bone[PM_NAME_SIZE];
    char curve[PM_NAME_SIZE];
    char group[PM_NAME_SIZE];
    float weight;
    float offset;
    uint32_t components;
    uint32_t axis;
    uint32_t size;
    int32_t parent;
    int32_t role;
    uint32_t sample_count;
    pmdb_traj_sample samples[PM_MAX_TRAJECTORY_SAMPLES];
} pmdb_channel;
_Static_assert(sizeof(pmdb_channel) == 4 + 4 * PM_NAME_SIZE + 32 + 12 * PM_MAX_TRAJECTORY_SAMPLES, "no padding");

typedef struct pmdb_settings {
    char schema_name[PM_NAME_SIZE];
    float fps;
    uint32_t mirror;
    uint32_t pca_components;
    uint32_t kdtree_leaf_size;
    uint32_t exact_components;
    uint32_t trim_rest_first_frame;
    float exclude_start;
    float exclude_end;
    int32_t mirror_axis;
    uint32_t root_facing_mode;
    float root_hips_axis[3];
    uint32_t root_ground_mode;
    float root_position_smoothing;
    float root_facing_smoothing;
    uint32_t exact_leaf_size;
    uint32_t omitted_modes; /* PM_SEARCH_MODE_BIT of each mode whose structure the file leaves out */
    uint32_t reserved[6];
} pmdb_settings;
/* The modes that have a structure of their own to leave out: brute force reads the values. */
#define PMDB_TREE_MODES                                                                                                \
    (PM_SEARCH_MODE_BIT(PM_SEARCH_EXACT) | PM_SEARCH_MODE_BIT(PM_SEARCH_PCAKDTREE) | PM_SEARCH_MODE_BIT(PM_SEARCH_VPTREE))
#define PMDB_OMITS(st, mode) (((st)->omitted_modes & PM_SEARCH_MODE_BIT(mode)) != 0)
/* What a mode searches, for messages about a database built without it. */
static inline const char *pm_search_mode_structure(pm_search_mode m) {
    return m == PM_SEARCH_EXACT ? "bound tree" : m == PM_SEARCH_PCAKDTREE ? "PCA KD-tree" : m == PM_SEARCH_VPTREE ? "VP-tree" : "values";
}

/* pmdb_asset.flags */
#define PMDB_ASSET_LOOPING 1u
#define PMDB_ASSET_MIRRORED 2u

typedef struct pmdb_asset {
    uint32_t name;       /* offset into STRINGS */
    uint32_t first_pose;
    uint32_t pose_count;
    uint32_t flags;      /* PMDB_ASSET_LOOPING | PMDB_ASSET_MIRRORED */
    int32_t source_asset;
    float cost_addend;
    uint32_t param_count;
    float params[3];
} pmdb_asset;

/* What an asset was made from, so that a program holding only the file and its clips can check
 * it plays the right clip and prepare it as the build did (pm_database_asset_clip). */
typedef struct pmdb_asset_source {
    uint64_t skeleton_hash; /* pm_clip_fingerprint of the def's clip (a mirrored copy: its source's) */
    uint64_t motion_hash;
    uint32_t joint_count;
    uint32_t mirror_map;    /* mirrored: first entry in PMDB_MIRROR_MAPS; else UINT32_MAX */
    int32_t mirror_axis;    /* mirrored: the plane's axis the build used, 0..2; else -1 */
    uint32_t frame_count;   /* of that clip (for messages: the hashes decide) */
    float frame_time;
    uint32_t reserved;
} pmdb_asset_source;
_Static_assert(sizeof(pmdb_asset_source) == 40, "no padding");

typedef struct pmdb_kd_node {
    uint32_t a;   /* internal: left child; leaf: first point */
    uint32_t b;   /* internal: right child; leaf: point count */
    int32_t dim;  /* split dimension, -1 for a leaf */
    float split;
} pmdb_kd_node;

typedef struct pmdb_bt_node {
    uint32_t first; /* first vector (leaf order) */
    uint32_t count;
    uint32_t left;  /* 0 for a leaf (the root is never a child) */
    uint32_t right;
} pmdb_bt_node;

/* Bound-tree geometry: points are stored in blocks of PM_BT_BLOCK, coordinate-major within a
 * block (dims + 1 rows of PM_BT_BLOCK floats: the coordinates, then the residual norm), so that
 * one vector operation bounds a whole block. */
#define PM_BT_BLOCK 8
static inline int pm_bt_box_lanes(int dims) { return (dims + 1 + 3) / 4 * 4; }
static inline int pm_bt_box_stride(int dims) { return 2 * pm_bt_box_lanes(dims) + 4; }
/* Point counts padded to whole blocks. */
static inline uint64_t pm_bt_padded(uint64_t n) { return (n + PM_BT_BLOCK - 1) / PM_BT_BLOCK * PM_BT_BLOCK; }
/* Offset of point i's row c (coordinate c, or the residual norm for c = dims) in the blocks. */
static inline size_t pm_bt_at(int rows, uint32_t i, int c) {
    return (size_t)(i / PM_BT_BLOCK) * PM_BT_BLOCK * rows + (size_t)c * PM_BT_BLOCK + i % PM_BT_BLOCK;
}

typedef struct pmdb_vp_node {
    uint32_t vp;      /* internal: vantage vector; leaf: first item */
    float mu;         /* internal: median distance */
    uint32_t inside;  /* internal: child with distance <= mu; leaf: 0 */
    uint32_t outside; /* internal: the other child; leaf: item count */
} pmdb_vp_node;

/* Pose metadata (PS4): 27 bits value row, 20 bits asset, 1 bit block transition, 16 bits
 * half-float cost addend. */
#define PM_META_VECTOR(m) ((uint32_t)((m) & 0x7FFFFFFu))
#define PM_META_ASSET(m) ((uint32_t)(((m) >> 27) & 0xFFFFFu))
#define PM_META_BLOCKED(m) ((uint32_t)(((m) >> 47) & 1u))
#define PM_META_ADDEND(m) ((uint16_t)((m) >> 48))
static inline uint64_t pm_meta_pack(uint32_t vector, uint32_t asset, int blocked, uint16_t addend) {
    return (uint64_t)vector | ((uint64_t)asset << 27) | ((uint64_t)(blocked ? 1 : 0) << 47) | ((uint64_t)addend << 48);
}

struct pm_database {
    pm_allocator allocator;
    uint8_t *image;       /* owned, unless in_place */
    int in_place;         /* the caller's bytes (PM_LOAD_IN_PLACE): never freed */
    size_t size;
    const pmdb_header *header;
    pm_database_def settings; /* settings decoded from the file; settings.schema = &schema */
    pm_schema schema;
    pm_schema_layout layout;
    int card, stride;
    int channel_count;
    /* sections */
    const char *strings;
    size_t strings_size;
    const pmdb_asset *assets;
    const pmdb_asset_source *sources;
    const int32_t *mirror_maps;
    const uint64_t *meta;
    const float *offset, *scale, *wsqrt; /* wsqrt: stride floats (wsqrt_padded for loaded files) */
    const float *values;
    const uint32_t *vec_pose_start, *vec_poses;
    const float *vec_min_addend;
    const float *pca_mean, *pca_basis, *pca_eigen;
    const pmdb_kd_node *kd_nodes;
    const float *kd_points;
    const uint32_t *kd_point_start, *kd_point_vecs;
    const pmdb_bt_node *bt_nodes;
    const float *bt_boxes, *bt_points;
    const float *bt_value_boxes; /* lo[stride], hi[stride] per node */
    const pmdb_vp_node *vp_nodes;
    const uint32_t *vp_items;
    /* The weights' section holds cardinality floats; the cost kernels read whole rows of stride
     * floats. A copy padded with zeros keeps them inside the database whatever the file's layout. */
    float wsqrt_padded[(PM_MAX_CARDINALITY + 7) / 8 * 8];
};

/* Serialised database pieces a build hands to pm_database_assemble. */
typedef struct pmdb_blob {
    uint32_t id;
    uint32_t elem_size;
    uint64_t count;
    const void *data;
} pmdb_blob;

/* The checksum a file's header holds: of the header with its checksum field zeroed, then the
 * rest of the image (size >= sizeof(pmdb_header)). */
uint64_t pm_database_image_checksum(const uint8_t *image, size_t size);
/* Lays out header + sections into one image (allocated), computes the checksum and opens it. */
pm_result pm_database_assemble(pm_database **out, pmdb_header *header, const pmdb_blob *blobs, int blob_count,
                               const pm_allocator *allocator, pm_error *error);
/* Validates an image (taking ownership of `image` on success and failure, but for
 * PM_LOAD_IN_PLACE) and fills db. */
pm_result pm_database_open_image(pm_database **out, uint8_t *image, size_t size, unsigned flags,
                                 const pm_allocator *allocator, pm_error *error);
/* The def with its schema resolved: *out copies `def`; a NULL schema becomes the default preset
 * in *storage (allocated with the def's allocator, else NULL; free it with pm_free).
 * pm_database_check_inputs, pm_database_key and pm_pmdb_settings_from_def read def->schema:
 * they take a resolved def. */
pm_result pm_database_def_resolve(pm_database_def *out, pm_schema **storage, const pm_database_def *def,
                                  pm_error *error);
/* The name an asset is stored under: its def's, else its clip's (a mirrored copy adds ".mirror"). */
const char *pm_asset_def_name(const pm_asset_def *a);
/* Everything pm_database_build checks before any work (def, every asset's fields and clip), so
 * that pm_database_compute_key refuses exactly the inputs a build would. */
pm_result pm_database_check_inputs(const pm_database_def *def, const pm_asset_def *assets, int asset_count,
                                   pm_error *error);
/* Frames a database with these settings drops at the start of `src` (1: a rest-pose lead-in it
 * trims, else 0), and whether it resamples `src` to its rate. */
pm_result pm_clip_lead_in_frames(int *out, const pm_clip *src, const pm_database_def *def, pm_error *error);
int pm_clip_needs_resample(const pm_clip *clip, const pm_database_def *def);
/* How pm_prepare_clip mirrors: with `map` (NULL: found from names) across `axis` (-1: found from
 * the rest pose); the outs, when not NULL, receive the map (joint_count entries) and axis used. */
typedef struct pm_prepare_mirror {
    const int32_t *map;
    int axis;
    int32_t *out_map;
    int *out_axis;
} pm_prepare_mirror;
/* Asset/query clip preparation shared by the builder, pm_database_clip_queries and
 * pm_database_asset_clip; mirror NULL = not mirrored. */
pm_result pm_prepare_clip(pm_clip *out, int *out_lead_in, const pm_clip *src, const pm_database_def *def,
                          const pm_prepare_mirror *mirror, int looping, pm_error *error);
/* pm_prepare_clip with the lead-in already known (pm_clip_lead_in_frames of src). */
pm_result pm_prepare_clip_from(pm_clip *out, const pm_clip *src, int lead_in, const pm_database_def *def,
                               const pm_prepare_mirror *mirror, int looping, pm_error *error);
/* Two hashes of a clip: its skeleton (names, parents, rest pose, End Sites) and its motion
 * (frame count and time, rotations, translations, curves). Not its name or looping flag, which
 * an asset def may override. */
void pm_clip_fingerprint(uint64_t out[2], const pm_clip *clip);
/* The 128-bit key of a build: format version, schema, settings and every input. The clips'
 * fingerprints go into it; out_fingerprints (2 per asset, may be NULL) receives them. */
void pm_database_key(uint64_t key[2], uint64_t *out_fingerprints, const pm_database_def *def, const pm_asset_def *assets,
                     int asset_count);
/* Settings/schema <-> file records. */
void pm_pmdb_channel_from_def(pmdb_channel *out, const pm_channel_def *c);
void pm_pmdb_settings_from_def(pmdb_settings *out, const pm_database_def *def);

/* Whether the database answers a mode (brute force always: the values are in every file). */
static inline int pm_db_has_mode(const pm_database *db, pm_search_mode m) {
    return (db->settings.search_modes & PM_SEARCH_MODE_BIT(m)) != 0;
}

static inline const float *pm_db_row(const pm_database *db, uint32_t vector) {
    return db->values + (size_t)vector * (size_t)db->stride;
}

#endif
