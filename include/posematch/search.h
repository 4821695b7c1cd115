/* posematch - pose search (PS7-PS9): find the pose whose features best match a query.
 *
 * cost(pose) = sum over dimensions of ((q - x) / scale * weight_sqrt)^2 + the pose's cost
 * addend (+ the continuing-pose addend for the continuing pose, + a caller penalty).
 *
 * Modes:
 *   PM_SEARCH_EXACT       the brute-force optimum at tree speed: a best-first walk of a PCA
 *                         bound tree that stops once the lower bound (the larger of the PCA-
 *                         subspace distance + residual-norm gap, scaled for dynamic weights, and
 *                         the weighted distance to the node's box of stored values; + the
 *                         smallest cost addend) passes the best exact cost. Default.
 *   PM_SEARCH_BRUTEFORCE  every searchable pose, vectorised.
 *   PM_SEARCH_PCAKDTREE   UE-compatible: K nearest neighbours in the k-component PCA space,
 *                         re-scored exactly. Approximate.
 *   PM_SEARCH_VPTREE      exact, vantage-point tree in the weighted feature space.
 *
 * The search allocates nothing: scratch memory is the caller's (pm_search_scratch_size), and
 * any number of threads may search one database at once, each with its own scratch (and its own
 * def when the def asks for a breakdown: out_breakdown is written). */
#ifndef POSEMATCH_SEARCH_H
#define POSEMATCH_SEARCH_H

#include "database.h"

PM_EXTERN_C_BEGIN

typedef enum pm_search_mode {
    PM_SEARCH_EXACT = 0,
    PM_SEARCH_BRUTEFORCE = 1,
    PM_SEARCH_PCAKDTREE = 2,
    PM_SEARCH_VPTREE = 3
} pm_search_mode;
PM_API const char *pm_search_mode_name(pm_search_mode mode);
/* Mode from "exact", "bruteforce", "pcakdtree", "vptree"; -1 when unknown. */
PM_API int pm_search_mode_from_name(const char *name);

/* Per-candidate penalty (environment-aware search, roadmap): called only for candidates whose
 * cost so far (dissimilarity + addends) is below `best_cost`, the cost to stay below: the best so
 * far, or one float step above it when a tie would go to this candidate (ties go to the lower
 * pose index, the continuing pose first). Return the penalty to add (>= 0; a negative one counts
 * as 0, NaN as a rejection), or INFINITY to reject. Return as soon as cost_so_far + penalty (the
 * float sum, as the search adds it) reaches best_cost: the candidate cannot win then, so a
 * penalty cut short is never part of a result. Must be thread-safe for concurrent searches. */
typedef float (*pm_penalty_fn)(void *user, int pose, float cost_so_far, float best_cost);

/* Limits that keep every cost finite: a normalised query value ((q - offset) / scale) beyond
 * PM_SEARCH_MAX_DEVIATION is an error (wrong units or layout), and so is a dynamic weight beyond
 * PM_SEARCH_MAX_DYNAMIC_WEIGHT. */
#define PM_SEARCH_MAX_DEVIATION 1e9f
#define PM_SEARCH_MAX_DYNAMIC_WEIGHT 1e12f
#define PM_SEARCH_MAX_DATABASES 64

typedef struct pm_search_def {
    pm_search_mode mode;
    int query_size;                 /* floats in the query row; when not 0 it must equal the
                                       database's cardinality (catches a query built for another
                                       schema); 0 = trusted to be the cardinality */
    const float *dynamic_weights;   /* PS9: cardinality weights replacing the schema's effective
                                       weights for this query (not square roots: the schema's are
                                       pm_database_weights_sqrt squared), each in
                                       0..PM_SEARCH_MAX_DYNAMIC_WEIGHT; NULL = none */
    int continuing_pose;            /* PS8: the pose being played, -1 = none: the playing asset's
                                       first_pose + its frame nearest the playback time (time *
                                       fps; wrapped in a looping asset, else at most pose_count - 1:
                                       pm_database_asset_pose_at) */
    float continuing_cost_addend;   /* added to the continuing pose's cost (which is scored once,
                                       with it): negative = rather stay, positive = rather move on */
    float max_cost;                 /* only results costing at most this count (a bound from
                                       another database, or a budget); INFINITY = none; not NaN */
    int kdtree_neighbors;           /* pcakdtree: K (UE default 200) */
    pm_penalty_fn penalty;          /* optional, see above */
    void *penalty_user;
    float *out_breakdown;           /* optional: per-channel dissimilarity of the result
                                       (pm_database_info.channels floats; zeros when nothing
                                       was found) */
    int max_nodes;                  /* exact mode: a work budget in tree nodes (the result's
                                       `nodes`) for a bounded worst case. Once the walk has
                                       taken this many, found something (the continuing pose
                                       counts, and in pm_search_databases an earlier
                                       database's answer) and could still find something
                                       cheaper, it stops and returns the best so far with
                                       `proven` 0: the walk goes cheapest bound first, so that
                                       is most often the optimum or close to it
                                       (docs/BENCHMARKS.md). Work, not time: the same query gets
                                       the same answer on every machine. 0 = none (always the
                                       optimum); other modes ignore it */
} pm_search_def;
PM_API pm_search_def pm_default_search_def(void);

typedef struct pm_search_result {
    int found;              /* 0 when no pose costs at most max_cost (an infinite cost, from a
                               penalty that rejects or from overflow, never counts) */
    int pose;               /* -1 when not found */
    int asset;              /* -1 when not found; database.h says how to play it (pm_asset_info) */
    int frame;              /* within the asset: pose - its first_pose */
    float time;             /* seconds within the asset (frame / the database's fps) */
    float cost;             /* total: dissimilarity + addends + penalty */
    float dissimilarity;    /* the feature distance alone */
    float cost_addend;      /* pose addend (+ continuing addend when continuing) */
    float penalty;
    int continuing;         /* the continuing pose won */
    int proven;             /* 1 when nothing cheaper exists: bruteforce, vptree, and exact
                               unless max_nodes cut its walk short; 0 for pcakdtree (its answer
                               may be the optimum, unproven) and for a cut walk. With found 0
                               it says whether "nothing costs at most max_cost" is proven */
    int candidates;         /* exact costs evaluated (work measure; exact mode under uneven
                               dynamic weights scores every row of each leaf it reaches) */
    int nodes;              /* tree nodes visited (work measure; 0 for brute force) */
} pm_search_result;

/* Bytes of scratch a search with this def needs on this database (16-byte aligned; def NULL =
 * pm_default_search_def()). It fits every mode; kdtree_neighbors beyond the KD-tree's points is
 * sized as all of them. */
PM_API size_t pm_search_scratch_size(const pm_database *db, const pm_search_def *def);

/* Searches with a raw (unnormalised) query row of cardinality floats; def NULL =
 * pm_default_search_def(). Errors: NULL or
 * misaligned scratch, a def field out of range or a mode the database was built without
 * (pm_database_def.search_modes; PM_ERR_INVALID_ARGUMENT), scratch short of
 * pm_search_scratch_size (PM_ERR_MISMATCH), a NaN or out-of-range query value (PM_ERR_NUMERIC);
 * *out then reads "not found" (found 0, pose and asset -1) and out_breakdown is not written. */
PM_API pm_result pm_search(pm_search_result *out, const pm_database *db, const float *query, const pm_search_def *def,
                           void *scratch, size_t scratch_size, pm_error *error);

/* Searches `count` databases, each with its own query row and its own def (schemas may differ:
 * dynamic weights, breakdown buffers and query sizes are per database; the continuing pose
 * belongs to the database that holds it; a penalty's user data tells it which database it
 * scores), and returns the cheapest result; out_database (may be NULL) receives its index (-1
 * when none).
 * Each search starts from the best cost found so far, so later databases prune harder; ties stay
 * with the earlier database. defs may be NULL (defaults for all). A def's out_breakdown holds
 * its own database's result, or zeros when it found nothing cheaper than the earlier ones.
 * out->candidates and out->nodes sum over the databases; out->proven is 1 only when every
 * database's search was. A later database's max_nodes cuts its walk even when it found nothing
 * cheaper than the earlier answer (which is then the result, unproven). Scratch must fit the largest. On an
 * error (naming the database) *out is "not found" and *out_database -1. */
PM_API pm_result pm_search_databases(pm_search_result *out, int *out_database, const pm_database *const *dbs,
                                     const float *const *queries, const pm_search_def *defs, int count, void *scratch,
                                     size_t scratch_size, pm_error *error);

/* PS8 search throttle: how often a character searches at all. The continuing pose keeps a search
 * from jumping needlessly, but some motions (a jump, a vault) should play a while without any
 * search; UE's SearchThrottleTime does this, defaulting to 0 so that locomotion searches every
 * update. The state is plain data the caller keeps per character; nothing allocates. */
typedef struct pm_search_throttle {
    float interval; /* least seconds between two searches; 0 (or below, or NaN) = every update */
    double elapsed; /* seconds since the last search (double: thousands of small steps add up) */
    int searched;   /* 0 until the first search: the first update always searches */
} pm_search_throttle;
PM_API pm_search_throttle pm_search_throttle_make(float interval);
/* Advances by dt seconds (a negative or non-finite dt counts as 0) and returns 1 when the caller
 * should search this update: on the first update, when `force` is non-zero (the played asset
 * ended, or the game asks for a new pose: nothing is left to continue) or once `interval`
 * seconds have passed since the last search (within a microsecond, so that steps of 1/60 s
 * reach 0.2 s on the 12th); a search restarts the count. Returns 1 for a NULL throttle. */
PM_API int pm_search_throttle_update(pm_search_throttle *throttle, float dt, int force);

PM_EXTERN_C_END

#endif
