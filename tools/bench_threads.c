/* posematch bench --threads: see bench_threads.h. */
#include "bench_threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_common.h"

int pm_bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pm_bench_median(const double *sorted, int n) {
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double pm_bench_p99(const double *sorted, int n) { return sorted[((long long)n * 99 + 99) / 100 - 1]; }

void pm_bench_pass_medians(double *out, const double *times, int passes, int count, size_t pass_stride) {
    double sample[PM_BENCH_PASSES_MAX];
    for (int i = 0; i < count; i++) {
        for (int p = 0; p < passes; p++) sample[p] = times[(size_t)p * pass_stride + (size_t)i];
        qsort(sample, (size_t)passes, sizeof(double), pm_bench_cmp_double);
        out[i] = pm_bench_median(sample, passes);
    }
}

double pm_bench_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

typedef struct pass {
    const pm_database *db;
    const float *queries;
    int count, card;
    pm_search_def def;
    pm_search_result *results;
    /* Queries are handed out one at a time: a static split would time whichever thread drew
     * more of the slow queries (exact's p99 is several times its median), not the search. */
    atomic_int next;
    /* Start gate: threads are created, then let go together, so that creating them is not timed
     * and no thread has a head start. */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int ready, go, cancel;
} pass;

typedef struct worker {
    pass *p;
    pthread_t id;
    void *scratch; /* the thread's own, allocated and touched before any timing */
    size_t scratch_size;
    double start_us, end_us;
    int failed;
    pm_error err;
} worker;

static void *worker_main(void *arg) {
    worker *w = arg;
    pass *p = w->p;
    pthread_mutex_lock(&p->lock);
    p->ready++;
    pthread_cond_broadcast(&p->cond);
    while (!p->go) pthread_cond_wait(&p->cond, &p->lock);
    int cancel = p->cancel;
    pthread_mutex_unlock(&p->lock);
    if (cancel) return NULL;
    w->start_us = pm_bench_now_us();
    for (;;) {
        int i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (i >= p->count) break;
        if (pm_search(&p->results[i], p->db, p->queries + (size_t)i * p->card, &p->def, w->scratch, w->scratch_size,
                      &w->err) != PM_OK) {
            w->failed = 1;
            break;
        }
    }
    w->end_us = pm_bench_now_us();
    return NULL;
}

/* One pass over every query on `threads` threads; *wall_us from the first thread's start to the
 * last one's end. 0, or prints an error and returns 1. */
static int run_pass(pass *p, worker *w, int threads, double *wall_us) {
    p->ready = p->go = p->cancel = 0;
    atomic_store(&p->next, 0);
    /* The results array outlives the pass: a query this pass skipped would otherwise still hold
     * the previous pass's answer, which already matched the reference. All-ones bytes are pose -1
     * and NaN costs, which no search returns. */
    memset(p->results, 0xff, (size_t)p->count * sizeof *p->results);
    int started = 0, create_error = 0;
    for (; started < threads; started++) {
        w[started].failed = 0;
        if ((create_error = pthread_create(&w[started].id, NULL, worker_main, &w[started])) != 0) break;
    }
    pthread_mutex_lock(&p->lock);
    while (p->ready < started) pthread_cond_wait(&p->cond, &p->lock);
    p->go = 1;
    p->cancel = create_error != 0;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    for (int t = 0; t < started; t++) pthread_join(w[t].id, NULL);
    if (create_error)
        return pm_cli_fail("bench: cannot start search thread %d of %d: %s", started + 1, threads,
                           strerror(create_error));
    double first = w[0].start_us, last = w[0].end_us;
    for (int t = 0; t < threads; t++) {
        if (w[t].failed) return pm_cli_fail_error(&w[t].err);
        if (w[t].start_us < first) first = w[t].start_us;
        if (w[t].end_us > last) last = w[t].end_us;
    }
    *wall_us = last - first;
    return 0;
}

/* Every field of a result follows from the search's inputs alone (pm_search zeroes the struct
 * before filling it, so its bytes are defined too): two runs of one query must agree on all of
 * them bit for bit, whichever thread ran them and whatever ran beside it. */
static int same_result(const pm_search_result *a, const pm_search_result *b) { return !memcmp(a, b, sizeof *a); }

static int check_pass(const pm_search_result *got, const pm_search_result *ref, int count, pm_search_mode mode,
                      int threads) {
    for (int i = 0; i < count; i++)
        if (!same_result(&got[i], &ref[i]))
            return pm_cli_fail("bench: %s on %d thread%s: query %d gave pose %d, cost %.9g, %d exact costs; alone "
                               "it gave pose %d, cost %.9g, %d exact costs: search on a shared database is not "
                               "thread-safe",
                               pm_search_mode_name(mode), threads, threads == 1 ? "" : "s", i, got[i].pose,
                               (double)got[i].cost, got[i].candidates, ref[i].pose, (double)ref[i].cost,
                               ref[i].candidates);
    return 0;
}

int pm_bench_threads(pm_bench_threads_row *out, const pm_database *db, const float *queries, int count,
                     pm_search_mode mode, int neighbors, int threads, int rounds) {
    memset(out, 0, sizeof *out);
    out->mode = mode;
    out->queries = count;
    pm_database_info info;
    pm_database_get_info(&info, db);
    pass p;
    memset(&p, 0, sizeof p);
    p.db = db;
    p.queries = queries;
    p.count = count;
    p.card = info.cardinality;
    p.def = pm_default_search_def();
    p.def.mode = mode;
    p.def.kdtree_neighbors = neighbors;
    atomic_init(&p.next, 0);
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.cond, NULL);
    worker *w = calloc((size_t)threads, sizeof *w);
    pm_search_result *ref = malloc((size_t)count * sizeof *ref);
    pm_search_result *res = malloc((size_t)count * sizeof *res);
    double *qps[2] = {malloc((size_t)rounds * sizeof(double)), malloc((size_t)rounds * sizeof(double))};
    int rc = 0;
    if (!w || !ref || !res || !qps[0] || !qps[1]) {
        rc = pm_cli_fail("bench: out of memory");
        goto done;
    }
    p.results = res;
    size_t scratch_size = pm_search_scratch_size(db, &p.def);
    for (int t = 0; t < threads; t++) {
        w[t].p = &p;
        w[t].scratch_size = scratch_size;
        w[t].scratch = aligned_alloc(64, (scratch_size / 64 + 1) * 64);
        if (!w[t].scratch) {
            rc = pm_cli_fail("bench: out of memory for %d search scratches of %zu bytes", threads, scratch_size);
            goto done;
        }
        memset(w[t].scratch, 0, scratch_size);
    }
    /* The reference, on this thread alone; it also brings the database into the caches. */
    pm_error err;
    for (int i = 0; i < count; i++)
        if (pm_search(&ref[i], db, queries + (size_t)i * p.card, &p.def, w[0].scratch, scratch_size, &err) != PM_OK) {
            rc = pm_cli_fail_error(&err);
            goto done;
        }
    /* One thread and all threads in turn, so that clock and load changes hit both alike. */
    for (int r = 0; r < rounds && rc == 0; r++)
        for (int k = 0; k < 2 && rc == 0; k++) {
            int n = k ? threads : 1;
            double wall_us = 0.0;
            if ((rc = run_pass(&p, w, n, &wall_us)) || (rc = check_pass(res, ref, count, mode, n))) break;
            qps[k][r] = wall_us > 0.0 ? count / (1e-6 * wall_us) : 0.0;
        }
    if (rc == 0) {
        qsort(qps[0], (size_t)rounds, sizeof(double), pm_bench_cmp_double);
        qsort(qps[1], (size_t)rounds, sizeof(double), pm_bench_cmp_double);
        out->qps_1 = qps[0][rounds / 2];
        out->qps_n = qps[1][rounds / 2];
        out->scaling = out->qps_1 > 0.0 ? out->qps_n / out->qps_1 : 0.0;
    }
done:
    for (int t = 0; w && t < threads; t++) free(w[t].scratch);
    free(w);
    free(ref);
    free(res);
    free(qps[0]);
    free(qps[1]);
    pthread_mutex_destroy(&p.lock);
    pthread_cond_destroy(&p.cond);
    return rc;
}
