/* The query sets `posematch bench` times (tools/cmd_bench.c): the noisy set (database rows plus
 * Gaussian noise), the far set (frames of clips left out of the database) and the dynamic weights,
 * all drawn from one seeded generator whose numbers are the same bits on every machine. */
#ifndef PM_BENCH_QUERIES_H
#define PM_BENCH_QUERIES_H

#include "posematch/posematch.h"

typedef struct pm_bench_rng {
    uint64_t s;
} pm_bench_rng;
/* The generator for a --seed value. */
pm_bench_rng pm_bench_rng_seed(int seed);

typedef struct pm_bench_query_set {
    const char *name;
    int count;
    float *rows;      /* count x cardinality, raw */
    int *source_pose; /* noisy set: the pose the query came from (continuing pose), else -1 */
} pm_bench_query_set;

/* Fills noisy->count queries (rows and source poses allocated by the caller). 0, or an exit code
 * after printing an error. */
int pm_bench_noisy_set(pm_bench_query_set *noisy, const pm_database *db, const pm_database_info *info, double sigma,
                       pm_bench_rng *r);
/* The far set from the clips at `paths` (files or directories), at most max_queries frames evenly
 * subsampled; rows and source_pose allocated here. 0, or an exit code after printing an error. */
int pm_bench_far_set(pm_bench_query_set *qs, const pm_database *db, char **paths, int path_count, const pm_bvh_def *bvh,
                     int max_queries);
/* dyn: 2 x card weights, per channel then per dimension (see the definition). */
void pm_bench_dynamic_weights(float *dyn, const pm_database *db, int card, pm_bench_rng *r);

#endif
