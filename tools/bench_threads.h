/* posematch bench --threads: throughput of several threads searching one shared database, each
 * with its own scratch, against one thread in the same run, and a check that sharing changes no
 * answer (the library promises thread-safe search; crowds rely on it). */
#ifndef PM_BENCH_THREADS_H
#define PM_BENCH_THREADS_H

#include "posematch/posematch.h"

/* Timing helpers of `posematch bench` (here and in cmd_bench.c): a monotonic clock in
 * microseconds, and the qsort comparison for the sorted samples medians and p99s come from. */
double pm_bench_now_us(void);
int pm_bench_cmp_double(const void *a, const void *b);
/* Of n >= 1 sorted samples: the median (of an even count the mean of the two middle ones: the
 * upper one alone made the median of two queries their maximum, above their p99), and the p99
 * by nearest rank, the smallest sample that at least 99% of them do not exceed (of 100 the
 * 99th, of fewer the largest: (n - 1) * 0.99 rounded down made it the smallest of two). */
double pm_bench_median(const double *sorted, int n);
double pm_bench_p99(const double *sorted, int n);

/* Timed passes over the same queries (`posematch bench --passes`, the peers' --passes): at most
 * this many, and of `count` queries timed in `passes` passes, times[p * pass_stride + i] being
 * query i's time in pass p, out[i] = the median of query i's passes. */
enum { PM_BENCH_PASSES_MAX = 15 };
void pm_bench_pass_medians(double *out, const double *times, int passes, int count, size_t pass_stride);

typedef struct pm_bench_threads_row {
    pm_search_mode mode;
    int queries;         /* per pass */
    double qps_1, qps_n; /* queries per second of wall time, median over the rounds */
    double scaling;      /* qps_n / qps_1 */
} pm_bench_threads_row;

/* Searches the `count` raw query rows with `mode` (default def otherwise, K = `neighbors`):
 * first once on the calling thread (warm-up and reference), then `rounds` timed passes on one
 * thread alternating with `rounds` on `threads` threads, every pass by threads started for it.
 * Every pass must return the reference's results (every field, cost bits and work counts
 * included) query by query.
 * Returns 0, or prints one error line and returns 1. */
int pm_bench_threads(pm_bench_threads_row *out, const pm_database *db, const float *queries, int count,
                     pm_search_mode mode, int neighbors, int threads, int rounds);

#endif
