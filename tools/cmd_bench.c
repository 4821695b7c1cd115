/* posematch bench: every search mode on two query sets, timed in one run, as ratios to brute
 * force measured in the same run, with exactness against the brute-force optimum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bench_queries.h"
#include "bench_threads.h"
#include "cli_common.h"
#include "cli_file.h"
#include "commands.h"

static const char bench_usage[] =
    "usage: posematch bench DB.pmdb [--queries N] [--far CLIP.bvh|DIR ...] [--passes N] [--threads N]\n"
    "       [--json]\n"
    "Times every search mode (of a database built with --modes, those it answers; the rows after\n"
    "the plain sets' - continuing pose, dynamic weights, --max-nodes - and --threads' first time\n"
    "exact) on database rows with Gaussian noise (sigma in normalised units) and,\n"
    "with --far, on the frames of clips that are not in the database; reports median and p99 us\n"
    "per query, the fraction of queries answered with the brute-force optimum, the mean and worst\n"
    "cost excess, speed as a ratio to brute force in the same run, exact costs (candidates) and\n"
    "tree nodes visited per query, structure build ms and bytes, and a warm re-read of the value\n"
    "matrix; with --threads, the throughput of threads sharing the database.\n"
    "  --queries N     queries per set (the far set: every frame of its clips when they have\n"
    "                  fewer), 1..1000000; 1000\n"
    "  --far PATH...   held-out clips (files or directories, searched as build does) for the far\n"
    "                  query set; takes every argument up to the next option, so give DB.pmdb\n"
    "                  before it\n"
    "  --unit-scale M  metres per file unit of the --far clips, as the database was built\n"
    "                  (default: detected per clip)\n"
    "  --up y|z        up axis of the --far clips (default: detected per clip)\n"
    "  --sigma S       noise of the noisy set in normalised units, 0..100; 0.3\n"
    "  --neighbors K   pcakdtree neighbours, 1..1000000; 200 (UE's default)\n"
    "  --max-nodes N   also time exact with a work budget of N tree nodes on each plain set\n"
    "                  (rows <set>+max-nodes=N: how often the cut walk still returns the optimum,\n"
    "                  and what it costs), 0..100000000; 512; 0 = no such rows\n"
    "  --passes N      time the modes of each group of rows (a set's brute force and its other rows)\n"
    "                  N times in alternating passes; a query's time is the median of its N,\n"
    "                  so that a burst of load lands on every row alike; 1..15; 3\n"
    "  --seed S        query selection seed, 0..2147483647; 1\n"
    "  --save-queries P  also write the query sets as P_noisy.f32 and P_far.f32 (raw rows)\n"
    "  --threads N     then time exact and brute force on the noisy set with N threads searching\n"
    "                  the one database against one thread (queries per second, alternating\n"
    "                  passes) and require the same answers, query by query; 1..256; 1 (none)\n"
    "  --json          JSON on stdout\n";


typedef struct mode_row {
    char mode[32];
    char set[48];
    double median_us, p99_us, mean_us;
    double exact_fraction, mean_excess, max_excess_ratio;
    double proven_fraction; /* results the mode proved optimal (pm_search_result.proven) */
    double speedup;
    double candidates;
    double nodes;
    double build_ms;
    size_t bytes;
} mode_row;

typedef struct bench {
    const pm_database *db;
    int card;
    void *scratch;
    size_t scratch_size;
    int neighbors;
    int passes; /* --passes: each row group's modes are timed this many times, alternated */
    int max_queries;
    mode_row rows[64];
    int row_count;
    double *times;   /* [GROUP_MAX][passes][max_queries] */
    double *medians; /* one row's per-query medians of its passes */
    /* Per-query times of brute force and exact over the plain sets together: the headline ratio
     * is the median over both sets' queries. */
    double *pooled_bf, *pooled_exact;
    int pooled_bf_count, pooled_exact_count;
    pm_search_result *res; /* [GROUP_MAX][max_queries]: each variant's answers on its first pass */
    pm_search_result *check; /* a later pass's answers, compared with the first's */
    double build_ms[4]; /* per pm_search_mode: pm_database_structure_stats */
    size_t bytes[4];
} bench;

/* One row of a group: a mode, and exact's work budget (pm_search_def.max_nodes; 0 = none). */
typedef struct variant {
    pm_search_mode mode;
    int max_nodes;
} variant;

/* Brute force and the three tree modes, and exact with a budget: the most rows a group times. */
enum { GROUP_MAX = 5 };

/* Runs one variant over a set; fills times and results. */
static int run_mode(bench *b, const pm_bench_query_set *qs, variant v, const float *dyn, int continuing,
                    pm_search_result *out, double *times) {
    pm_search_def def = pm_default_search_def();
    def.mode = v.mode;
    def.kdtree_neighbors = b->neighbors;
    def.dynamic_weights = dyn;
    def.max_nodes = v.max_nodes;
    pm_error err;
    /* Warm-up: a few searches so that caches and branch predictors see the data. */
    for (int i = 0; i < qs->count && i < 16; i++)
        if (pm_search(&out[i], b->db, qs->rows + (size_t)i * b->card, &def, b->scratch, b->scratch_size, &err) != PM_OK)
            return pm_cli_fail_error(&err);
    for (int i = 0; i < qs->count; i++) {
        def.continuing_pose = continuing && qs->source_pose ? qs->source_pose[i] : -1;
        double t0 = pm_bench_now_us();
        pm_result r = pm_search(&out[i], b->db, qs->rows + (size_t)i * b->card, &def, b->scratch, b->scratch_size, &err);
        times[i] = pm_bench_now_us() - t0;
        if (r != PM_OK) return pm_cli_fail_error(&err);
    }
    return 0;
}

static void summarise(bench *b, const pm_bench_query_set *qs, const char *mode, const char *set, const pm_search_result *res,
                      const pm_search_result *ref, double *times, double bf_median, double build_ms, size_t bytes) {
    mode_row *m = &b->rows[b->row_count++];
    memset(m, 0, sizeof *m);
    snprintf(m->mode, sizeof m->mode, "%s", mode);
    snprintf(m->set, sizeof m->set, "%s", set);
    double sum = 0.0, exact = 0.0, excess = 0.0, worst = 1.0, cand = 0.0, nodes = 0.0, proven = 0.0;
    for (int i = 0; i < qs->count; i++) {
        sum += times[i];
        proven += res[i].proven;
        cand += res[i].candidates;
        nodes += res[i].nodes;
        int same = res[i].found == ref[i].found && res[i].pose == ref[i].pose && res[i].cost == ref[i].cost;
        exact += same;
        /* The cost above the optimum's, relative to the optimum's feature distance: a ratio of
         * the costs themselves moves with the cost addends (--addend), a uniform one included,
         * and a negative one made every miss count as no excess at all. Without addends the two
         * are the same. A query equal to a database row (no distance) has no relative excess. */
        if (res[i].found && ref[i].found && ref[i].dissimilarity > 0.0f) {
            double over = ((double)res[i].cost - (double)ref[i].cost) / (double)ref[i].dissimilarity;
            excess += over;
            if (1.0 + over > worst) worst = 1.0 + over;
        }
    }
    qsort(times, (size_t)qs->count, sizeof(double), pm_bench_cmp_double);
    m->median_us = pm_bench_median(times, qs->count);
    m->p99_us = pm_bench_p99(times, qs->count);
    m->mean_us = sum / qs->count;
    m->exact_fraction = exact / qs->count;
    m->proven_fraction = proven / qs->count;
    m->mean_excess = excess / qs->count;
    m->max_excess_ratio = worst;
    m->candidates = cand / qs->count;
    m->nodes = nodes / qs->count;
    m->speedup = bf_median > 0.0 ? bf_median / m->median_us : 1.0;
    m->build_ms = build_ms;
    m->bytes = bytes;
}

/* One plain read of the searchable value rows: the floor brute force is measured against.
 * Built, like brute force, for baseline x86-64 and AVX2 (picked at load time), with eight
 * independent accumulators so that only memory limits it. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static double read_pass_us(const pm_database *db, double *sink) {
    int rows, stride;
    const float *v = pm_database_values(db, &rows, &stride);
    size_t n = (size_t)rows * stride;
    typedef float v8 __attribute__((vector_size(32)));
    typedef float v8u __attribute__((vector_size(32), aligned(4), may_alias));
    double t0 = pm_bench_now_us();
    v8 a0 = {0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        a0 += *(const v8u *)(v + i);
        a1 += *(const v8u *)(v + i + 8);
        a2 += *(const v8u *)(v + i + 16);
        a3 += *(const v8u *)(v + i + 24);
        a4 += *(const v8u *)(v + i + 32);
        a5 += *(const v8u *)(v + i + 40);
        a6 += *(const v8u *)(v + i + 48);
        a7 += *(const v8u *)(v + i + 56);
    }
    v8 a = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
    float tail = 0.0f;
    for (; i < n; i++) tail += v[i];
    double t = pm_bench_now_us() - t0;
    *sink += a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7] + tail;
    return t;
}

/* The re-read and brute force timed in alternation (a pass, then a brute-force search of the
 * next query, 61 times), so that clock and load changes hit both alike: medians of each, and the
 * spread of each ((p90 - p10) / median). Both passes do the same work every time, so a wide spread
 * or a median that moves between the start and the end of the run says the machine was busy,
 * on any CPU, where their ratio depends on the CPU's memory system. */
#define FLOOR_ROUNDS 61
typedef struct floor_stats {
    double read_us, bf_us, read_spread, bf_spread;
} floor_stats;

static double spread(const double *sorted, int n) {
    return (sorted[n * 9 / 10] - sorted[n / 10]) / sorted[n / 2];
}

/* Why the run looks busy (NULL when it does not): a spread of either pass past 10%, or a median
 * that moved more than 10% between the start and the end. An idle machine stays within a few
 * percent of both. */
#define FLOOR_BUSY_SPREAD 0.10
#define FLOOR_BUSY_DRIFT 0.10
#define BUSY_STEAL 0.05
static const char *floor_busy(char *why, size_t why_size, const floor_stats f[2], double steal) {
    if (steal > BUSY_STEAL) {
        snprintf(why, why_size, "the hypervisor gave %.0f%% of the CPU time to other guests", 100.0 * steal);
        return why;
    }
    for (int k = 0; k < 2; k++) {
        double worst = f[k].read_spread > f[k].bf_spread ? f[k].read_spread : f[k].bf_spread;
        if (worst > FLOOR_BUSY_SPREAD) {
            snprintf(why, why_size, "the repeated passes at the %s spread over %.0f%% of their median", k ? "end" : "start",
                     100.0 * worst);
            return why;
        }
    }
    double dr = f[1].read_us / f[0].read_us - 1.0, db = f[1].bf_us / f[0].bf_us - 1.0;
    double drift = fabs(dr) > fabs(db) ? dr : db;
    if (fabs(drift) > FLOOR_BUSY_DRIFT) {
        snprintf(why, why_size, "the repeated passes took %.0f%% %s at the end than at the start", 100.0 * fabs(drift),
                 drift > 0 ? "longer" : "less time");
        return why;
    }
    return NULL;
}

/* The CPU time the hypervisor gave to other guests ("steal" in Linux's /proc/stat) and all CPU
 * time, in clock ticks since boot; 0 when the system does not say. */
static int read_steal(double *steal, double *total) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return 0;
    double v[8];
    int n = fscanf(f, "cpu %lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n != 8) return 0;
    *steal = v[7];
    *total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    return 1;
}

static int measure_floor(floor_stats *f, bench *b, const pm_bench_query_set *qs, double *sink) {
    double tr[FLOOR_ROUNDS], tb[FLOOR_ROUNDS];
    pm_search_def def = pm_default_search_def();
    def.mode = PM_SEARCH_BRUTEFORCE;
    def.kdtree_neighbors = b->neighbors; /* the scratch fits --neighbors, which may be fewer than the default */
    pm_error err;
    pm_search_result res;
    for (int k = -2; k < FLOOR_ROUNDS; k++) { /* two rounds of warm-up */
        double r = read_pass_us(b->db, sink);
        double t0 = pm_bench_now_us();
        if (pm_search(&res, b->db, qs->rows + (size_t)((k + 2) % qs->count) * b->card, &def, b->scratch, b->scratch_size,
                      &err) != PM_OK)
            return pm_cli_fail_error(&err);
        double t = pm_bench_now_us() - t0;
        *sink += res.cost;
        if (k >= 0) tr[k] = r, tb[k] = t;
    }
    qsort(tr, FLOOR_ROUNDS, sizeof(double), pm_bench_cmp_double);
    qsort(tb, FLOOR_ROUNDS, sizeof(double), pm_bench_cmp_double);
    f->read_us = tr[FLOOR_ROUNDS / 2];
    f->bf_us = tb[FLOOR_ROUNDS / 2];
    f->read_spread = spread(tr, FLOOR_ROUNDS);
    f->bf_spread = spread(tb, FLOOR_ROUNDS);
    return 0;
}

typedef struct bench_args {
    const char *path, *save;
    int json, queries, seed, neighbors, threads, max_nodes, passes;
    int max_nodes_given; /* --max-nodes on the command line (not the default) */
    double sigma;
    char **far; /* malloc'd */
    int far_count;
    pm_bvh_def bvh;
} bench_args;

/* Returns -1 to go on, else the exit code. */
static int parse_args(bench_args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->queries = 1000;
    a->seed = 1;
    a->neighbors = 200;
    a->max_nodes = 512;
    a->passes = 3;
    a->threads = 1;
    a->sigma = 0.3;
    a->bvh = pm_default_bvh_def();
    a->far = calloc((size_t)argc, sizeof(char *));
    if (!a->far) return pm_cli_fail("bench: out of memory");
    /* (--far takes a list and is repeatable.) */
    static const char *const single_value_options[] = {"--queries", "--seed", "--neighbors", "--sigma",
                                                       "--save-queries", "--threads", "--max-nodes", "--passes", NULL};
    static const char *const flags[] = {"--json", NULL};
    pm_cli_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int more = pm_cli_has_value(argc, argv, i);
        if (!pm_cli_once_listed(&seen, "bench", single_value_options, argc, argv, i)) return 2;
        if (!pm_cli_flag_once(&seen, "bench", flags, s)) return 2;
        int bvh_option = pm_cli_bvh_option(&a->bvh, &seen, "bench", argc, argv, &i);
        if (bvh_option < 0) return 2;
        if (bvh_option) continue;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(bench_usage, stdout);
            return 0;
        } else if (!strcmp(s, "--json")) a->json = 1;
        else if (!strcmp(s, "--queries") && more) {
            if (!pm_cli_int(&a->queries, "bench", s, argv[++i], 1, 1000000)) return 2;
        } else if (!strcmp(s, "--seed") && more) {
            if (!pm_cli_int(&a->seed, "bench", s, argv[++i], 0, 2147483647.0)) return 2;
        } else if (!strcmp(s, "--neighbors") && more) {
            if (!pm_cli_int(&a->neighbors, "bench", s, argv[++i], 1, 1000000)) return 2;
        } else if (!strcmp(s, "--max-nodes") && more) {
            if (!pm_cli_int(&a->max_nodes, "bench", s, argv[++i], 0, 100000000)) return 2;
            a->max_nodes_given = 1;
        } else if (!strcmp(s, "--passes") && more) {
            if (!pm_cli_int(&a->passes, "bench", s, argv[++i], 1, PM_BENCH_PASSES_MAX)) return 2;
        } else if (!strcmp(s, "--threads") && more) {
            if (!pm_cli_int(&a->threads, "bench", s, argv[++i], 1, 256)) return 2;
        } else if (!strcmp(s, "--sigma") && more) {
            if (!pm_cli_number(&a->sigma, "bench", s, argv[++i], 0, 100, 0)) return 2;
        } else if (!strcmp(s, "--save-queries") && more) a->save = argv[++i];
        else if (!strcmp(s, "--far") && more) {
            a->far[a->far_count++] = argv[++i];
            while (i + 1 < argc && argv[i + 1][0] != '-') a->far[a->far_count++] = argv[++i];
        } else if (s[0] == '-' && s[1])
            return pm_cli_fail("bench: unknown or incomplete option '%s' (try posematch bench --help)", s) + 1;
        else if (!a->path) a->path = s;
        else return pm_cli_fail("bench: one database at a time ('%s' and '%s')", a->path, s) + 1;
    }
    if (!a->path && a->far_count)
        return pm_cli_fail("bench: no database given (--far takes every argument up to the next option: give "
                           "DB.pmdb before --far)") + 1;
    if (!a->path) return pm_cli_fail("bench: no database given (try posematch bench --help)") + 1;
    if (pm_cli_bvh_forced(&a->bvh) && !a->far_count)
        return pm_cli_fail("bench: --unit-scale and --up read --far clips; none given") + 1;
    return -1;
}

/* Brute force on a set (the reference of exactness and the speed baseline), then each variant
 * against it, with the same dynamic weights and continuing pose: one row each. The group's rows
 * are timed in b->passes alternating passes (brute force, exact, ..., brute force, exact, ...) and
 * each query's time is the median of its passes, so that a burst of load on the host in one
 * row's second or two does not land on that row alone: the ratios compare like with like. Every
 * pass must give every query the answer its first gave (the search is deterministic). A plain set
 * (`pool`) also adds its brute-force and exact times to the headline's pooled ones. */
static int compare_group(bench *b, const pm_bench_query_set *qs, const char *set, const float *dyn, int continuing,
                         const variant *vs, int count, int pool) {
    const int n = qs->count, passes = b->passes;
    for (int p = 0; p < passes; p++)
        for (int v = 0; v < count; v++) {
            pm_search_result *out = p ? b->check : b->res + (size_t)v * b->max_queries;
            double *times = b->times + ((size_t)v * passes + p) * b->max_queries;
            int rc = run_mode(b, qs, vs[v], dyn, continuing, out, times);
            if (rc) return rc;
            for (int i = 0; p && i < n; i++) {
                const pm_search_result *first = b->res + (size_t)v * b->max_queries + i;
                if (out[i].found != first->found || out[i].pose != first->pose || out[i].cost != first->cost)
                    return pm_cli_fail("bench: %s on the %s set answered query %d with pose %d (cost %.9g%s) on "
                                       "pass %d, pose %d (cost %.9g%s) on pass 1: the search is not deterministic",
                                       pm_search_mode_name(vs[v].mode), set, i, out[i].pose, (double)out[i].cost,
                                       out[i].found ? "" : ", not found", p + 1, first->pose, (double)first->cost,
                                       first->found ? "" : ", not found");
            }
        }
    double bf = 0.0;
    for (int v = 0; v < count; v++) {
        double *med = b->medians;
        pm_bench_pass_medians(med, b->times + (size_t)v * passes * b->max_queries, passes, n, (size_t)b->max_queries);
        if (pool && v == 0) {
            memcpy(b->pooled_bf + b->pooled_bf_count, med, (size_t)n * sizeof(double));
            b->pooled_bf_count += n;
        } else if (pool && vs[v].mode == PM_SEARCH_EXACT && !vs[v].max_nodes) {
            memcpy(b->pooled_exact + b->pooled_exact_count, med, (size_t)n * sizeof(double));
            b->pooled_exact_count += n;
        }
        char name[48];
        if (vs[v].max_nodes) snprintf(name, sizeof name, "%s+max-nodes=%d", set, vs[v].max_nodes);
        else snprintf(name, sizeof name, "%s", set);
        summarise(b, qs, pm_search_mode_name(vs[v].mode), name, b->res + (size_t)v * b->max_queries, b->res, med, bf,
                  b->build_ms[vs[v].mode], b->bytes[vs[v].mode]);
        if (v == 0) bf = b->rows[b->row_count - 1].median_us;
    }
    return 0;
}

/* Everything a run reports, measured. */
typedef struct bench_summary {
    const bench_args *a;
    const pm_database_info *info;
    const bench *b;
    int far_count;         /* queries of the far set (0: none) */
    const floor_stats *fl; /* [2]: at the start and at the end */
    double steal;          /* fraction of CPU time stolen, -1 = unknown */
    const char *busy;      /* why the run was busy, or NULL */
    double headline, bf_pooled, ex_pooled;
    const pm_bench_threads_row *thread_rows;
    int thread_row_count, thread_rounds;
} bench_summary;

static int report_json(const bench_summary *s) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "database", s->a->path);
    cJSON_AddNumberToObject(o, "poses", s->info->poses);
    cJSON_AddNumberToObject(o, "searchable_poses", s->info->searchable_poses);
    cJSON_AddNumberToObject(o, "cardinality", s->info->cardinality);
    cJSON_AddNumberToObject(o, "queries", s->a->queries);
    if (s->a->far_count) cJSON_AddNumberToObject(o, "far_queries", s->far_count);
    cJSON_AddNumberToObject(o, "sigma", s->a->sigma);
    cJSON_AddNumberToObject(o, "passes", s->a->passes);
    cJSON_AddNumberToObject(o, "warm_read_us", s->fl[0].read_us);
    cJSON_AddNumberToObject(o, "bruteforce_alternating_us", s->fl[0].bf_us);
    cJSON_AddNumberToObject(o, "bruteforce_vs_warm_read", s->fl[0].bf_us / s->fl[0].read_us);
    cJSON *floors = cJSON_AddArrayToObject(o, "floor_passes");
    for (int k = 0; k < 2; k++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "when", k ? "end" : "start");
        cJSON_AddNumberToObject(x, "warm_read_us", s->fl[k].read_us);
        cJSON_AddNumberToObject(x, "bruteforce_us", s->fl[k].bf_us);
        cJSON_AddNumberToObject(x, "warm_read_spread", s->fl[k].read_spread);
        cJSON_AddNumberToObject(x, "bruteforce_spread", s->fl[k].bf_spread);
        cJSON_AddItemToArray(floors, x);
    }
    if (s->steal >= 0) cJSON_AddNumberToObject(o, "steal_fraction", s->steal);
    else cJSON_AddNullToObject(o, "steal_fraction");
    if (s->busy) cJSON_AddStringToObject(o, "busy", s->busy);
    else cJSON_AddNullToObject(o, "busy");
    cJSON_AddNumberToObject(o, "bruteforce_median_us_all_sets", s->bf_pooled);
    if (s->ex_pooled > 0) { /* (a database built without exact has none) */
        cJSON_AddNumberToObject(o, "exact_speedup_vs_bruteforce", s->headline);
        cJSON_AddNumberToObject(o, "exact_median_us_all_sets", s->ex_pooled);
    }
    cJSON_AddNumberToObject(o, "bytes", (double)s->info->bytes);
    cJSON_AddNumberToObject(o, "bytes_per_pose", (double)s->info->bytes / s->info->poses);
    cJSON *modes = cJSON_AddArrayToObject(o, "modes");
    for (int i = 0; i < s->b->row_count; i++) {
        const mode_row *m = &s->b->rows[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "mode", m->mode);
        cJSON_AddStringToObject(x, "query_set", m->set);
        cJSON_AddNumberToObject(x, "median_us", m->median_us);
        cJSON_AddNumberToObject(x, "p99_us", m->p99_us);
        cJSON_AddNumberToObject(x, "mean_us", m->mean_us);
        cJSON_AddNumberToObject(x, "exact_fraction", m->exact_fraction);
        cJSON_AddNumberToObject(x, "proven_fraction", m->proven_fraction);
        cJSON_AddNumberToObject(x, "mean_excess", m->mean_excess);
        cJSON_AddNumberToObject(x, "max_excess_ratio", m->max_excess_ratio);
        cJSON_AddNumberToObject(x, "speedup_vs_bruteforce", m->speedup);
        cJSON_AddNumberToObject(x, "candidates", m->candidates);
        cJSON_AddNumberToObject(x, "nodes", m->nodes);
        cJSON_AddNumberToObject(x, "build_ms", m->build_ms);
        cJSON_AddNumberToObject(x, "bytes", (double)m->bytes);
        cJSON_AddItemToArray(modes, x);
    }
    if (s->thread_row_count) {
        cJSON *t = cJSON_AddObjectToObject(o, "threads");
        cJSON_AddNumberToObject(t, "count", s->a->threads);
        cJSON_AddNumberToObject(t, "rounds", s->thread_rounds);
        cJSON *tm = cJSON_AddArrayToObject(t, "modes");
        for (int k = 0; k < s->thread_row_count; k++) {
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "mode", pm_search_mode_name(s->thread_rows[k].mode));
            cJSON_AddStringToObject(x, "query_set", "noisy");
            cJSON_AddNumberToObject(x, "queries", s->thread_rows[k].queries);
            cJSON_AddNumberToObject(x, "qps_1", s->thread_rows[k].qps_1);
            cJSON_AddNumberToObject(x, "qps_n", s->thread_rows[k].qps_n);
            cJSON_AddNumberToObject(x, "scaling", s->thread_rows[k].scaling);
            cJSON_AddItemToArray(tm, x);
        }
    }
    int rc = pm_cli_json_puts(o);
    cJSON_Delete(o);
    return rc;
}

static int report_text(const bench_summary *s) {
    /* The far set holds every frame of its clips when they have fewer than --queries. */
    char far_note[64] = "";
    if (s->a->far_count && s->far_count < s->a->queries)
        snprintf(far_note, sizeof far_note, " (far: %d, all its clips' frames)", s->far_count);
    printf("%s: %d poses (%d searchable) x %d, %d queries per set%s, %.1f bytes/pose\n", s->a->path, s->info->poses,
           s->info->searchable_poses, s->info->cardinality, s->a->queries, far_note, (double)s->info->bytes / s->info->poses);
    if (s->a->passes > 1)
        printf("each query's time: the median of %d passes, alternated with the other rows of its set\n", s->a->passes);
    printf("warm re-read of the value matrix: %.1f us; brute force / re-read = %.2f (%.1f us, timed in alternation)\n",
           s->fl[0].read_us, s->fl[0].bf_us / s->fl[0].read_us, s->fl[0].bf_us);
    if (s->busy) printf("a busy run: %s\n", s->busy);
    printf("%-11s %-20s %10s %10s %8s %8s %9s %9s %10s %7s %9s %10s %8s\n", "mode", "query set", "median us", "p99 us",
           "exact", "excess", "worst", "speedup", "candidates", "nodes", "build ms", "bytes", "proven");
    for (int i = 0; i < s->b->row_count; i++) {
        const mode_row *m = &s->b->rows[i];
        printf("%-11s %-20s %10.1f %10.1f %7.1f%% %7.2f%% %8.2fx %8.1fx %10.0f %7.0f %9.1f %10zu %7.1f%%\n", m->mode,
               m->set, m->median_us, m->p99_us, 100.0 * m->exact_fraction, 100.0 * m->mean_excess, m->max_excess_ratio,
               m->speedup, m->candidates, m->nodes, m->build_ms, m->bytes, 100.0 * m->proven_fraction);
    }
    if (s->ex_pooled > 0)
        printf("exact vs brute force, median over %s: %.1fx (%.1f vs %.1f us)\n",
               s->a->far_count ? "both sets' queries" : "the noisy set's queries (no --far set)", s->headline,
               s->bf_pooled, s->ex_pooled);
    if (s->thread_row_count)
        printf("throughput on the noisy set, %d threads sharing the database vs 1 (medians of %d alternating "
               "passes; same answers):\n",
               s->a->threads, s->thread_rounds);
    for (int k = 0; k < s->thread_row_count; k++)
        printf("%-11s %5d queries: %9.0f q/s on 1 thread, %9.0f q/s on %d: %.2fx\n",
               pm_search_mode_name(s->thread_rows[k].mode), s->thread_rows[k].queries, s->thread_rows[k].qps_1,
               s->thread_rows[k].qps_n, s->a->threads, s->thread_rows[k].scaling);
    return 0;
}

int pm_cmd_bench(int argc, char **argv) {
    bench_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc >= 0) {
        free(a.far);
        return rc;
    }
    const int nq = a.queries;
    pm_error err;
    /* The query files (one per set; far only with --far) are checked before any work. */
    char save_path[2][4096];
    const char *set_names[2] = {"noisy", "far"};
    for (int s = 0; a.save && s < (a.far_count ? 2 : 1); s++) {
        /* A cut path could still name a file, another one than asked for. */
        if ((size_t)snprintf(save_path[s], sizeof save_path[s], "%s_%s.f32", a.save, set_names[s]) >= sizeof save_path[s]) {
            free(a.far);
            return pm_cli_fail("bench: --save-queries P is too long (P_%s.f32 would have more than %zu characters)",
                               set_names[s], sizeof save_path[s] - 1);
        }
        if (pm_file_check_output(save_path[s], &err) != PM_OK ||
            pm_cli_check_not_input(save_path[s], &a.path, 1, &err) != PM_OK) {
            free(a.far);
            return pm_cli_fail_error(&err);
        }
    }
    pm_database *db = NULL;
    if (pm_database_load(&db, a.path, NULL, &err) != PM_OK) {
        free(a.far);
        return pm_cli_fail_error(&err);
    }
    pm_database_info info;
    pm_database_get_info(&info, db);
    if (a.max_nodes_given && a.max_nodes && !(info.search_modes & PM_SEARCH_MODE_BIT(PM_SEARCH_EXACT))) {
        pm_database_destroy(db);
        free(a.far);
        return pm_cli_fail("bench: --max-nodes times exact, which %s was built without (build --modes)", a.path);
    }
    const int card = info.cardinality;
    bench b;
    memset(&b, 0, sizeof b);
    b.db = db;
    b.card = card;
    b.neighbors = a.neighbors;
    pm_search_def sdef = pm_default_search_def();
    sdef.kdtree_neighbors = a.neighbors;
    b.scratch_size = pm_search_scratch_size(db, &sdef);
    b.scratch = aligned_alloc(64, (b.scratch_size + 63) / 64 * 64);
    pm_bench_query_set sets[2];
    memset(sets, 0, sizeof sets);
    int set_count = 0;
    pm_bench_rng r = pm_bench_rng_seed(a.seed);
    pm_bench_query_set *noisy = &sets[set_count++];
    noisy->name = "noisy";
    noisy->count = nq;
    noisy->rows = malloc((size_t)nq * card * sizeof(float));
    noisy->source_pose = malloc((size_t)nq * sizeof(int));
    if (info.searchable_poses < 1) {
        rc = pm_cli_fail("%s: no searchable pose to draw queries from (all %d poses are block-transition or excluded)",
                         a.path, info.poses);
        goto done;
    }
    if (!b.scratch || !noisy->rows || !noisy->source_pose) {
        rc = pm_cli_fail("bench: out of memory");
        goto done;
    }
    if ((rc = pm_bench_noisy_set(noisy, db, &info, a.sigma, &r)) != 0) goto done;
    if (a.far_count) {
        if ((rc = pm_bench_far_set(&sets[set_count], db, a.far, a.far_count, &a.bvh, nq)) != 0) goto done;
        set_count++;
    }
    if (a.save) {
        /* Both sets or neither: a half pair would pass for a whole one. */
        const char *paths[2];
        const void *data[2];
        size_t sizes[2];
        for (int s = 0; s < set_count; s++) {
            paths[s] = save_path[s];
            data[s] = sets[s].rows;
            sizes[s] = (size_t)sets[s].count * card * sizeof(float);
        }
        if (pm_file_write_all(set_count, paths, data, sizes, &err) != PM_OK) {
            rc = pm_cli_fail_error(&err);
            goto done;
        }
    }
    /* Buffers for one set: no set has more than nq queries (load_far caps the far set). */
    b.passes = a.passes;
    b.max_queries = nq;
    b.times = malloc((size_t)GROUP_MAX * a.passes * nq * sizeof(double));
    b.medians = malloc((size_t)nq * sizeof(double));
    b.res = malloc((size_t)GROUP_MAX * nq * sizeof(pm_search_result));
    b.check = malloc((size_t)nq * sizeof(pm_search_result));
    b.pooled_bf = malloc((size_t)nq * 2 * sizeof(double));
    b.pooled_exact = malloc((size_t)nq * 2 * sizeof(double));
    float *dyn = malloc((size_t)card * 2 * sizeof(float));
    if (!b.times || !b.medians || !b.res || !b.check || !b.pooled_bf || !b.pooled_exact || !dyn) {
        free(dyn);
        rc = pm_cli_fail("bench: out of memory");
        goto done;
    }
    pm_bench_dynamic_weights(dyn, db, card, &r);

    /* A database built without some modes (build --modes) is timed in the ones it answers. */
    const int has_exact = (info.search_modes & PM_SEARCH_MODE_BIT(PM_SEARCH_EXACT)) != 0;
    for (int m = 0; m < 4; m++)
        if ((info.search_modes & PM_SEARCH_MODE_BIT(m)) &&
            pm_database_structure_stats(&b.build_ms[m], &b.bytes[m], db, m, &err) != PM_OK) {
            rc = pm_cli_fail_error(&err);
            free(dyn);
            goto done;
        }
    double sink = 0.0;
    floor_stats fl[2]; /* at the start of the timed work and at its end */
    double steal0 = 0, total0 = 0, steal1 = 0, total1 = 0;
    const int has_steal = read_steal(&steal0, &total0);
    if ((rc = measure_floor(&fl[0], &b, &sets[0], &sink)) != 0) {
        free(dyn);
        goto done;
    }
    static const pm_search_mode tree_modes[] = {PM_SEARCH_EXACT, PM_SEARCH_PCAKDTREE, PM_SEARCH_VPTREE};
    variant plain[GROUP_MAX] = {{PM_SEARCH_BRUTEFORCE, 0}};
    int plain_count = 1;
    for (int m = 0; m < 3; m++)
        if (info.search_modes & PM_SEARCH_MODE_BIT(tree_modes[m])) plain[plain_count++] = (variant){tree_modes[m], 0};
    if (has_exact && a.max_nodes) plain[plain_count++] = (variant){PM_SEARCH_EXACT, a.max_nodes};
    const variant exact_pair[2] = {{PM_SEARCH_BRUTEFORCE, 0}, {PM_SEARCH_EXACT, 0}};
    for (int s = 0; s < set_count && rc == 0; s++) {
        pm_bench_query_set *qs = &sets[s];
        if ((rc = compare_group(&b, qs, qs->name, NULL, 0, plain, plain_count, 1))) break;
        if (!has_exact) continue; /* the rows below time exact */
        /* The continuing pose gives the exact search a starting bound. */
        if (qs->source_pose && (rc = compare_group(&b, qs, "noisy+continuing", NULL, 1, exact_pair, 2, 0))) break;
        /* Dynamic weights: exact must stay exact. */
        for (int k = 0; k < 2 && rc == 0; k++) {
            char set_name[48];
            snprintf(set_name, sizeof set_name, "%s+dynamic%s", qs->name, k ? "-dims" : "");
            rc = compare_group(&b, qs, set_name, dyn + (size_t)k * card, 0, exact_pair, 2, 0);
        }
    }
    free(dyn);
    if (rc || (rc = measure_floor(&fl[1], &b, &sets[0], &sink)) != 0) goto done;
    /* Steal over the single-threaded part: the throughput passes below load every CPU. */
    const double steal = has_steal && read_steal(&steal1, &total1) && total1 > total0
                             ? (steal1 - steal0) / (total1 - total0)
                             : -1.0;
    char busy_why[160];
    const char *busy = floor_busy(busy_why, sizeof busy_why, fl, steal);
    /* The headline: median brute-force time over both sets' queries by exact's. */
    qsort(b.pooled_bf, (size_t)b.pooled_bf_count, sizeof(double), pm_bench_cmp_double);
    qsort(b.pooled_exact, (size_t)b.pooled_exact_count, sizeof(double), pm_bench_cmp_double);
    double bf_pooled = pm_bench_median(b.pooled_bf, b.pooled_bf_count);
    double ex_pooled = b.pooled_exact_count ? pm_bench_median(b.pooled_exact, b.pooled_exact_count) : 0.0;
    double headline = ex_pooled > 0 ? bf_pooled / ex_pooled : 0.0;
    /* Throughput of threads sharing the database: exact, and brute force for contrast (it reads
     * the whole matrix per query, so threads share memory bandwidth). Brute force costs the same
     * on every query, so a few hundred of them time it as well as all, in a fraction of the time. */
    enum { THREAD_ROUNDS = 11, THREAD_BF_QUERIES = 200 };
    pm_bench_threads_row thread_rows[2];
    int thread_row_count = 0;
    for (int k = has_exact ? 0 : 1; k < 2 && a.threads > 1 && rc == 0; k++)
        rc = pm_bench_threads(&thread_rows[thread_row_count++], db, noisy->rows,
                              k ? PM_CLI_MIN(nq, THREAD_BF_QUERIES) : nq, k ? PM_SEARCH_BRUTEFORCE : PM_SEARCH_EXACT,
                              a.neighbors, a.threads, THREAD_ROUNDS);
    if (rc) goto done;
    const bench_summary sum = {&a, &info, &b, set_count > 1 ? sets[1].count : 0, fl, steal, busy,
                               headline, bf_pooled, ex_pooled, thread_rows, thread_row_count, THREAD_ROUNDS};
    rc = a.json ? report_json(&sum) : report_text(&sum);
    if (sink == 12345.678) puts("");
done:
    for (int s = 0; s < set_count; s++) {
        free(sets[s].rows);
        free(sets[s].source_pose);
    }
    free(b.times);
    free(b.pooled_bf);
    free(b.pooled_exact);
    free(b.medians);
    free(b.check);
    free(b.res);
    free(b.scratch);
    free(a.far);
    pm_database_destroy(db);
    return rc;
}
