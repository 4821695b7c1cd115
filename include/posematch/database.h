/* posematch - the pose-search database (PS4-PS6, PS11, PS12).
 *
 * Offline: clips (assets) + a schema + settings go through pm_database_build into an immutable
 * database: normalised feature values, 8-byte pose metadata, de-duplication maps, PCA, a PCA
 * KD-tree (UE-compatible approximate search), an exact bound tree and a VP-tree. The build is
 * deterministic: the same inputs and settings give byte-identical .pmdb files for any thread
 * count, and each file records a key (a hash of inputs + settings) for build caches.
 *
 * Runtime: a database is read-only after build or load and may be searched from many threads
 * at once (see search.h). */
#ifndef POSEMATCH_DATABASE_H
#define POSEMATCH_DATABASE_H

#include "features.h"

PM_EXTERN_C_BEGIN

#define PM_MAX_POSE_VALUES (1u << 27) /* feature values (vectors x cardinality), PS4 */
#define PM_MAX_ASSETS (1u << 20)
#define PM_MAX_PCA_COMPONENTS 64
#define PM_MAX_ASSET_NAME 255 /* bytes of an asset's name (no NUL) */
#define PM_MAX_COST_ADDEND 65504.0f /* largest finite half float: how poses store their addend */

typedef struct pm_database pm_database;

#define PM_MAX_ASSET_RANGES 4096 /* ranges of one asset */

/* A span of an asset's clip with rules of its own, as UE's notify states mark them in a
 * sequence (ModifyCost, BlockTransition): a cost addend for the poses in it (a turn-in-place
 * preferred only over its middle, a stumble that should rarely start), and/or no plain search
 * returning them (they can still win as the continuing pose). Times are seconds of the clip's
 * own timeline (frame k at k * frame_time, a rest-pose lead-in included: the time
 * pm_search_result.time + pm_database_clip_lead_in gives); a pose belongs to a range when its
 * time is in [start, end), within a thousandth of a frame. Where those two times of a pose differ
 * (a frame time a hair off the rate, as "0.0333334" or 59.97 fps in a 60 fps database), the later
 * one counts: a range given at either holds the pose, one ending there does not. A mirrored copy
 * has its source's ranges. */
typedef struct pm_asset_range {
    float start;       /* 0 <= start < end < 1e6 */
    float end;
    float cost_addend; /* added to the asset's cost_addend for the poses in the range, overlapping
                          ranges add up; the sum with the asset's, rounded once, is stored as a
                          half float (see cost_addend below) and must stay within -65504..65504 */
    int exclude;       /* 1: a plain search never returns these poses; 0 */
} pm_asset_range;

/* One source of poses. */
typedef struct pm_asset_def {
    const pm_clip *clip;     /* read during the build only */
    const char *name;        /* NULL = the clip's name; at most PM_MAX_ASSET_NAME bytes, a mirrored
                                copy's "<name>.mirror" included */
    int looping;             /* -1 = the clip's flag, 0/1 = override */
    int mirror;              /* -1 = the database default, 0/1 = override: also add a mirrored copy */
    const int32_t *mirror_map; /* the mirrored copy's left/right swap: joint -> its mirror joint, one
                                  entry per joint of the clip, an involution; NULL = found from the
                                  joint names (pm_skeleton_find_mirror_map). Read during the build. */
    float cost_addend;       /* added to the cost of every pose (negative = preferred); stored as a
                                half float: rounded to ~3 significant digits (0.1 comes back as
                                0.0999756), |addend| <= 65504 (PM_MAX_COST_ADDEND); a non-zero
                                addend below ~3e-8 (it would round to 0) is refused */
    float exclude_start;     /* seconds at the start (non-looping clips: a loop has no start) a plain
                                search may not return, < 1e6; < 0 = default */
    float exclude_end;       /* seconds at the end (non-looping clips), < 1e6; < 0 = default */
    int param_count;         /* blend-space assets: the parameters this clip was sampled at, 0..3 */
    float params[3];         /* the first param_count are finite */
    int mirror_negate_params; /* bit d set: the mirrored copy records -params[d] (a parameter the
                                 mirror flips: direction, turn rate, lateral speed); bits below
                                 1 << param_count only; 0 = every parameter kept */
    const pm_asset_range *ranges; /* range_count spans with their own addend or exclusion (above);
                                     read during the build only */
    int range_count;              /* 0..PM_MAX_ASSET_RANGES; 0 */
} pm_asset_def;
PM_API pm_asset_def pm_default_asset_def(const pm_clip *clip);

/* Build progress: called from the thread that called pm_database_build, one call at a time, with
 * the stage ("prepare", "features", "normalise", "dedup", "pca", "trees", "write", "done") and the
 * fraction done, never decreasing - while planning the clips ("prepare": rest-pose lead-ins and
 * pose counts) and then preparing each one and extracting its features ("features"), after each
 * asset the calling thread finishes. Return 0 to go on; anything else cancels the build: it
 * stops at its next check (within ~one asset's work while preparing and extracting, between the
 * trees after), frees what it made and returns PM_ERR_CANCELLED with *out NULL. The last call,
 * ("done", 1), comes when the database is complete; what it returns is ignored. */
typedef int (*pm_progress_fn)(void *user, const char *stage, float fraction);

/* Search structures a database carries (pm_database_def.search_modes), as UE builds a
 * database's index for its one search mode: a bit per pm_search_mode (search.h: exact 0,
 * bruteforce 1, pcakdtree 2, vptree 3). Exact needs the bound tree, pcakdtree the PCA KD-tree,
 * vptree the VP-tree; brute force needs nothing but the values every database holds, so it always
 * answers, its bit given or not. A mode left out has its structure left out of the database (the
 * KD- and VP-trees are not even built; the bound tree is, since it orders the rows), and its
 * searches and pm_database_structure_stats fail with PM_ERR_INVALID_ARGUMENT. Everything else -
 * the values, the metadata, the other modes' answers bit for bit - is what a database with every
 * mode holds. On the benchmark's holden27 database (229,744 poses): every mode 61.4 MB, exact
 * 54.9 MB, pcakdtree 39.1 MB, brute force alone 33.9 MB (docs/BENCHMARKS.md, "Memory by search
 * mode"). */
#define PM_SEARCH_MODE_BIT(mode) (1u << (unsigned)(mode))
#define PM_SEARCH_MODES_ALL 0xFu

typedef struct pm_database_def {
    const pm_schema *schema;    /* read during pm_database_build and pm_database_compute_key
                                   only; NULL = the "ue-locomotion" preset */
    float fps;                  /* poses per second of every asset (clips are resampled),
                                   1..1000; 30 */
    int mirror;                 /* add a mirrored copy of every asset, 0 or 1; 0 */
    int pca_components;         /* PCA components of the KD-tree (PS6), 1..64 and at most the
                                   cardinality (a schema of fewer than 4 values needs it set); 4 */
    int kdtree_leaf_size;       /* PCA KD-tree points per leaf, 1..1024; 16 */
    int exact_components;       /* components the exact bound tree splits on, 0..64 and at most
                                   the cardinality; 0 = automatic */
    int exact_leaf_size;        /* points per bound-tree leaf, scanned as blocks of 8, 8..4096;
                                   128 */
    unsigned search_modes;      /* the modes the database answers, PM_SEARCH_MODE_BIT of each
                                   (above), not 0; PM_SEARCH_MODES_ALL */
    int threads;                /* builder threads, 1..64 (results never depend on it; above 1
                                   the clips' allocators are called from several threads); 1 */
    int trim_rest_first_frame;  /* drop a rest/T-pose lead-in frame, 0 or 1; 1 */
    float exclude_start;        /* default per-asset exclusion at the start of non-looping clips,
                                   0 <= seconds < 1e6; 0 */
    float exclude_end;          /* default per-asset exclusion at the end of non-looping clips,
                                   0 <= seconds < 1e6; 0.3 */
    int mirror_axis;            /* -1 = from the rest pose (see pm_clip_mirror) */
    pm_root_def root;           /* checked with pm_root_def_validate */
    const pm_allocator *allocator; /* the database and the build's own memory (NULL = the C
                                   library's); the prepared copies of the clips use each clip's
                                   allocator, from the builder threads (see base.h) */
    pm_progress_fn progress;    /* optional: progress and cancellation (above) */
    void *progress_user;
} pm_database_def;
PM_API pm_database_def pm_default_database_def(void);

/* Builds a database. The def and every asset are validated (fields, clip, skeleton, schema
 * bones) first; any error names the field or asset. *out is set to NULL on entry and stays NULL
 * on failure. At least one pose must be searchable: a build whose poses are all block
 * transitions (clips shorter than the schema's trajectory window) or excluded fails with
 * PM_ERR_INVALID_ARGUMENT.
 * The database's assets are the def's in order, each mirrored copy right after its source: with
 * every asset mirrored, def asset i is database asset 2i and its copy 2i + 1 (source_asset in
 * pm_asset_info links a copy back). Names need not be unique here (pm_database_find_asset
 * returns the first); the CLI refuses repeats.
 * Memory, besides the clips and the database itself: a prepared copy of one clip per thread at a
 * time, and feature rows, value rows and trees of about one and a third times the database's
 * bytes at the peak (measured on the benchmark's database: docs/ROADMAP.md, "build of ~196k"). */
PM_API pm_result pm_database_build(pm_database **out, const pm_database_def *def, const pm_asset_def *assets,
                                   int asset_count, pm_error *error);

/* The key a build with these inputs and settings will record: 32 hex digits + NUL. Inputs are
 * validated as pm_database_build validates them before any work (the def's fields, every asset's
 * fields and clip); what a build only finds while preparing the clips - a joint the schema or the
 * root definition names that a skeleton lacks, a given mirror map that is no left/right swap,
 * legs missing for facing from the legs, no searchable pose - is not checked here, so a key may
 * exist for inputs a build then refuses. out_key is left untouched on failure. */
PM_API pm_result pm_database_compute_key(char out_key[33], const pm_database_def *def, const pm_asset_def *assets,
                                         int asset_count, pm_error *error);

/* .pmdb files: versioned, checksummed; load validates every offset, count and index before
 * use, so a truncated or corrupted file is an error, never a crash. */
/* Writes the database's image with pm_file_write (file.h): all or nothing, through links. */
PM_API pm_result pm_database_save(const pm_database *db, const char *path, pm_error *error);
/* *out is NULL on failure: a NULL argument (PM_ERR_INVALID_ARGUMENT), PM_ERR_IO (the file),
 * PM_ERR_CORRUPT (structure, checksum), PM_ERR_VERSION (a format this library does not read),
 * PM_ERR_OUT_OF_MEMORY; the message names the file. With the C library allocator (allocator
 * NULL) an image of 4 MB or more - this and pm_database_load_memory's copy - starts on a 2 MB
 * boundary and is advised as transparent huge pages on Linux (MADV_HUGEPAGE): searches wander
 * over the whole image and miss the TLB less. Where the kernel must first compact memory for
 * them a load can take longer; an allocator of your own gets no advice. */
PM_API pm_result pm_database_load(pm_database **out, const char *path, const pm_allocator *allocator, pm_error *error);
enum {
    PM_LOAD_SKIP_CHECKSUM = 1, /* for fuzzing the structural checks; never in production */
    PM_LOAD_IN_PLACE = 2       /* use `data` where it is, without a copy (below) */
};
/* Copies `data` (the caller may free it on return); the database owns its copy. With
 * PM_LOAD_IN_PLACE the database uses `data` itself - a file mapped into memory, an asset pack
 * already loaded - and never writes or frees it: it must be 64-byte aligned
 * (PM_ERR_INVALID_ARGUMENT otherwise) and stay alive and unchanged until pm_database_destroy.
 * Validation is the same either way (it reads every byte once). flags: those two bits; any other
 * is PM_ERR_INVALID_ARGUMENT. */
PM_API pm_result pm_database_load_memory(pm_database **out, const void *data, size_t size, unsigned flags,
                                         const pm_allocator *allocator, pm_error *error);
/* The deep check for databases from sources you do not trust. Loading checks structure and
 * checksum - enough against corruption, and no file can make a search read out of bounds - but
 * the trees prune with numbers the file states: a file written with a recomputed checksum could
 * state wrong ones and make `exact` or `vptree` miss the optimum. This recomputes them from the
 * stored feature values as the builder does and compares: the PCA basis is orthonormal and its
 * mean is the values' mean; no value lies beyond 1e4 scales from it (float rounding of such
 * coordinates could exceed the search's margins); every exact-mode coordinate, residual norm and
 * KD-tree point is the projection of its vector's values bit for bit; each tree holds every searchable vector once, is at most 64 levels deep, and keeps
 * its split (KD-tree) and radius (VP-tree) invariants. A database that passes answers `exact`
 * and `vptree` with the brute-force optimum of its values. It reads everything once more and
 * projects every vector (about as long as the load itself); PM_ERR_CORRUPT names the first
 * disagreement. `posematch info --verify` runs it. */
PM_API pm_result pm_database_verify(const pm_database *db, pm_error *error);
/* The serialised bytes (what pm_database_save writes). */
PM_API const void *pm_database_bytes(const pm_database *db, size_t *out_size);
PM_API void pm_database_destroy(pm_database *db);

typedef struct pm_database_info {
    int poses;
    int assets;
    int cardinality;
    int channels;
    int unique_vectors;          /* PS5, full space */
    int unique_pca_vectors;      /* PS5, PCA space (searchable poses only); -1 when the database
                                    was built without pcakdtree (its KD-tree holds them) */
    int searchable_poses;
    int block_transition_poses;  /* poses a plain search may not return: block transitions + excluded */
    int excluded_poses;          /* of which excluded ranges (not block transitions) */
    int pca_components;
    float pca_explained_variance;
    int exact_components;
    float exact_explained_variance;
    float fps;
    size_t bytes;
    char key[33];
    char schema_name[PM_NAME_SIZE];
    unsigned search_modes;       /* PM_SEARCH_MODE_BIT of each mode it answers (brute force's always) */
} pm_database_info;
/* Zeros for a NULL db; nothing for a NULL out. */
PM_API void pm_database_get_info(pm_database_info *out, const pm_database *db);
/* Cumulative explained variance of the first k components (1 <= k <= cardinality). */
PM_API float pm_database_explained_variance(const pm_database *db, int k);

/* The schema the database was built with (its own copy; valid while the database lives). */
PM_API const pm_schema *pm_database_schema(const pm_database *db);
/* Settings the database was built with (fps, root extraction, trimming...), so that queries
 * can be built from clips the same way; `schema` points at pm_database_schema(db). What only
 * steered the build is not stored: threads reads 1, allocator, progress and progress_user NULL. */
PM_API const pm_database_def *pm_database_settings(const pm_database *db);

/* Playing a search result: the asset's poses are its clip as the build prepared it, so play that
 * clip from pm_search_result.time + pm_database_clip_lead_in(clip) (its rest-pose lead-in, if the
 * build dropped one), its looping flag set to pm_asset_info.looping (an asset def's looping
 * override is not the clip's own flag). A looping asset loops without its lead-in: a clip that
 * opens on a rest frame, played as it is, passes through that rest pose at every wrap, so play it
 * with that frame trimmed off (pm_clip_trim from frame 1, then looping set again) from
 * pm_search_result.time itself. Keep a looping asset's playback time wrapped at the played clip's
 * duration (pm_clip_duration) rather than letting it grow: the asset's own period, pose_count /
 * fps, can differ from it by up to half a frame of the database's rate (a resampled loop keeps its
 * period to the nearest frame), and the continuing pose taken from an unwrapped time (search.h)
 * would drift from the played clip by that much every loop. A mirrored copy plays its source's
 * clip mirrored with pm_clip_mirror, mirror_map and mirror_axis below (what the build used).
 * pm_database_asset_clip does all of this: it makes the clip whose frame i is the asset's pose
 * first_pose + i, played from pm_search_result.time itself.
 * Two things the caller keeps. The playback clock: pm_search_result.time is the time of the
 * pose's frame, rounded to the database's frames, so start playing from it after a jump but then
 * advance your own time by dt (and take the next continuing_pose from it with
 * pm_database_asset_pose_at); setting time = result.time + dt each frame while the continuing
 * pose wins holds playback back, as the rounding takes back part of every dt.
 * And the placement: poses are where the capture put them; the root the features were measured
 * from is pm_root_track_extract of the played clip with pm_database_settings(db)->root, so move
 * the character by that root's motion from frame to frame and show the pose relative to it. */
typedef struct pm_asset_info {
    const char *name;
    int first_pose;
    int pose_count;
    int looping;
    int mirrored;
    int source_asset;    /* mirrored copies: the asset they mirror; else -1 */
    float cost_addend;
    int param_count;
    float params[3];     /* mirrored copies: the source's, negated where its def's
                            mirror_negate_params says */
    int joint_count;     /* joints of the clip the asset was made from */
    const int32_t *mirror_map; /* mirrored copies: the left/right map the build mirrored with
                                  (joint_count entries: the def's, else the one found from names;
                                  owned by the database); else NULL */
    int mirror_axis;     /* mirrored copies: the axis normal to the mirror plane it used (0 X,
                            1 Y, 2 Z: the def's, else the one found from the rest pose); else -1 */
} pm_asset_info;
PM_API int pm_database_asset_count(const pm_database *db);
/* Errors, with *out untouched: a NULL argument, an asset outside 0..asset_count-1
 * ("pm_database_asset: asset 12 is outside 0..5"), PM_ERR_INVALID_ARGUMENT. */
PM_API pm_result pm_database_asset(pm_asset_info *out, const pm_database *db, int asset, pm_error *error);
/* The pose playing at `time` seconds of an asset (pm_search_result.time's clock, lead-in
 * excluded): the asset's frame nearest time * fps, wrapped at pose_count in a looping asset
 * (negative times too), else clamped to 0..pose_count-1; what pm_search_def.continuing_pose takes.
 * Errors, with *out_pose = -1: a NULL argument, an asset outside 0..asset_count-1, a time that is
 * not finite (PM_ERR_INVALID_ARGUMENT). */
PM_API pm_result pm_database_asset_pose_at(int *out_pose, const pm_database *db, int asset, float time,
                                           pm_error *error);
/* Whether `clip` is the one the asset was made from (for a mirrored copy, its source's clip):
 * the same skeleton (names, parents, rest pose, End Sites) and the same frames, rate and curves,
 * bit for bit, as the clip its asset def gave the build (the clip's name, looping flag, unit
 * scale and source up axis are not compared). That clip is the one read as the build read it:
 * for `posematch build`, the BVH file read with the same --unit-scale and --up (pm_bvh_def),
 * for a blend-space grid point the space's bake at the database's rate; a clip scaled,
 * resampled or trimmed since is another clip. A database records both as 64-bit hashes; checking
 * reads the whole clip. PM_ERR_MISMATCH names the asset and what differs ("asset 'walk.mirror'
 * was made from a clip of 65 joints, clip 'run' has 31", "... from 1200 frames of 0.00833333 s,
 * clip 'walk' has 1199 of 0.00833333 s", "... from another skeleton of 65 joints (clip 'walk'
 * differs in names, parents, rest pose or End Sites)", "... from other frames or curves than
 * clip 'walk' has"); a clip that fails pm_clip_validate gives its error; NULL arguments and an
 * asset out of range are PM_ERR_INVALID_ARGUMENT. */
PM_API pm_result pm_database_asset_check_clip(const pm_database *db, int asset, const pm_clip *clip, pm_error *error);
/* The asset as a clip: `source` (the clip its def gave the build; for a mirrored copy its
 * source's), checked with pm_database_asset_check_clip, then prepared as the build prepared it:
 * its rest-pose lead-in trimmed, mirrored with the recorded map and axis, the asset's looping
 * flag set, resampled to the database's rate. Frame i is the asset's pose first_pose + i, so a
 * search result plays from pm_search_result.time and pm_database_asset_pose_at(asset, t) is the
 * pose at time t of this clip. *out is allocated with source's allocator (pm_clip_destroy it);
 * on failure it is zeroed. Unlike the clip functions of anim.h, out may not be the source
 * (PM_ERR_INVALID_ARGUMENT, the source untouched). */
PM_API pm_result pm_database_asset_clip(pm_clip *out, const pm_database *db, int asset, const pm_clip *source,
                                        pm_error *error);
/* The first asset with this name (mirrored copies are named "<name>.mirror"), or -1 when none
 * has it (or an argument is NULL). A linear scan: look names up once, not per frame. */
PM_API int pm_database_find_asset(const pm_database *db, const char *name);

typedef struct pm_pose_info {
    int asset;
    int frame;              /* within the asset */
    float time;             /* seconds within the asset */
    int block_transition;   /* 1: a plain search never returns it (block transition or excluded) */
    float cost_addend;
    int vector;             /* row of the de-duplicated value matrix. Searchable vectors come first,
                               so for searchable poses it is < the row count pm_database_values
                               reports; block-transition poses' rows may lie beyond it (use
                               pm_database_pose_features to read any pose) */
} pm_pose_info;
PM_API int pm_database_pose_count(const pm_database *db);
/* Errors as pm_database_asset's: a NULL argument, a pose outside 0..pose_count-1. */
PM_API pm_result pm_database_pose(pm_pose_info *out, const pm_database *db, int pose, pm_error *error);

/* Per-dimension normalisation: normalised = (raw - offset) / scale; cost adds
 * ((q - x) / scale * weight_sqrt)^2 per dimension. Arrays of cardinality floats. */
PM_API const float *pm_database_offsets(const pm_database *db);
PM_API const float *pm_database_scales(const pm_database *db);
PM_API const float *pm_database_weights_sqrt(const pm_database *db);
/* Raw (unnormalised) feature row of any pose, searchable or not, into out (cardinality floats). */
PM_API pm_result pm_database_pose_features(float *out, const pm_database *db, int pose, pm_error *error);
/* The normalised value rows of the searchable vectors (what brute force reads):
 * out_rows x out_stride floats, 64-byte aligned. Rows of vectors only block-transition or
 * excluded poses use are stored after these and not counted in out_rows. */
PM_API const float *pm_database_values(const pm_database *db, int *out_rows, int *out_stride);

/* Query rows for every frame of `clip`, prepared the way the database prepared its assets
 * (rest-frame trimming, resampling to its fps, its root extraction and schema). The clip's own
 * `looping` flag decides how its ends are read: for the rows of an asset that was built with a
 * looping override (pm_asset_def.looping, `posematch build --loop`), set it alike. *out_rows is
 * allocated with the database's allocator: free it with pm_free_buffer (declared in base.h),
 * passing that allocator (the one given to pm_database_build in its def or to pm_database_load;
 * NULL if none was). The rows are at the database's rate from the clip's first kept frame: row r
 * holds the clip at r / fps seconds after its lead-in (pm_database_clip_lead_in), which is not
 * the clip's frame r unless the rates agree and nothing was trimmed (pm_database_clip_frame_row
 * maps a frame). A clip whose rate is within 0.1% of the database's is not resampled (a frame
 * time printed as 0.0333333 is 30 fps): row r is its frame r, r of its own frame times in, which
 * r / fps (and a pose's time) misses by at most 0.1% of that time. */
PM_API pm_result pm_database_clip_queries(float **out_rows, int *out_count, const pm_database *db, const pm_clip *clip,
                                          pm_error *error);
/* Seconds at the start of `clip` the database drops, as it dropped them from its own assets: one
 * frame time when the clip opens on a rest pose (a T-pose lead-in) and the database was built
 * with trim_rest_first_frame, else 0. An asset built from this clip plays the clip's time
 * t + lead-in at its own time t (pm_search_result.time, pm_pose_info.time). */
PM_API pm_result pm_database_clip_lead_in(float *out_seconds, const pm_database *db, const pm_clip *clip,
                                          pm_error *error);
/* The row of pm_database_clip_queries(db, clip) nearest to the clip's frame `frame` (a frame of
 * the clip as loaded, at its own rate, lead-in included: what `posematch search --frame` takes);
 * frames past the last row's time map to the last row, also in a looping clip (not around to
 * row 0). It validates and surveys the whole clip, as pm_database_clip_lead_in does: for many
 * frames, take the lead-in once and map times with the database's fps.
 * Errors (PM_ERR_INVALID_ARGUMENT): a NULL argument, a frame outside 0..frame_count-1, or a
 * lead-in frame the database drops ("clip 'x': frame 0 is a rest-pose lead-in frame ..."). */
PM_API pm_result pm_database_clip_frame_row(int *out_row, const pm_database *db, const pm_clip *clip, int frame,
                                            pm_error *error);

/* Diagnostics for benchmarks: rebuilds one search mode's structure (a pm_search_mode value)
 * from the stored values, reporting the time it took and the bytes the mode reads. A NULL
 * argument, a mode outside the enum or one the database was built without (search_modes) is
 * PM_ERR_INVALID_ARGUMENT, the outputs untouched. */
PM_API pm_result pm_database_structure_stats(double *out_build_ms, size_t *out_bytes, const pm_database *db, int mode,
                                             pm_error *error);

/* Channel of a dimension (-1 outside 0..cardinality-1). */
PM_API int pm_database_dim_channel(const pm_database *db, int dim);
/* A channel's display name (pm_channel_display_name), cut to fit `size` bytes. Errors
 * (PM_ERR_INVALID_ARGUMENT): a NULL argument, size 0, a channel outside 0..channels-1
 * ("pm_database_channel_name: channel 9 is outside 0..5"); out is then "" when it has room. */
PM_API pm_result pm_database_channel_name(char *out, size_t size, const pm_database *db, int channel, pm_error *error);

PM_EXTERN_C_END

#endif
