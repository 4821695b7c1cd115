// What the peer benchmarks (bench_nanoflann.cpp, bench_faiss.cpp) share: the database's searchable
// rows in the space where squared L2 distance is posematch's cost, the query rows, posematch's own
// exact and brute-force passes over the same queries, timed in the same process, and how a peer's
// answers compare with the brute-force optimum. Timing and statistics are `posematch bench`'s
// own (tools/bench_threads.c).
#ifndef PM_BENCH_PEER_HPP
#define PM_BENCH_PEER_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "posematch/posematch.h"

extern "C" {
#include "bench_threads.h" /* posematch bench's clock, median and p99 */
}

namespace peer {

struct Stats {
    double median = 0, p99 = 0, mean = 0;
};

// Median and p99 as `posematch bench` takes them (pm_bench_median, pm_bench_p99), so that the
// table compares like with like.
inline Stats stats(std::vector<double> t) {
    Stats s;
    std::qsort(t.data(), t.size(), sizeof(double), pm_bench_cmp_double);
    s.median = pm_bench_median(t.data(), (int)t.size());
    s.p99 = pm_bench_p99(t.data(), (int)t.size());
    for (double x : t) s.mean += x / (double)t.size();
    return s;
}

// A database opened for a peer: its searchable rows normalised and multiplied by the weight square
// roots (row r is value row r, so a peer's index is a posematch vector), and the query rows.
struct Data {
    const char *tool = "";
    pm_database *db = nullptr;
    int D = 0, rows = 0;
    std::vector<float> cloud, queries;
    size_t nq = 0;
    const float *offset = nullptr, *scale = nullptr, *wsqrt = nullptr;
    Data() = default;
    Data(const Data &) = delete;
    Data &operator=(const Data &) = delete;
    ~Data() {
        if (db) pm_database_destroy(db);
    }
    // A raw query row in the peer's space.
    void weigh(const float *q, float *out) const {
        for (int d = 0; d < D; d++) out[d] = (q[d] - offset[d]) / scale[d] * wsqrt[d];
    }
};

// Loads the database and the queries; false after a message on stderr. The database must have no
// cost addends: the peers know nothing of them.
inline bool load(Data &p, const char *tool, const char *db_path, const char *queries_path) {
    p.tool = tool;
    pm_error err;
    if (pm_database_load(&p.db, db_path, nullptr, &err) != PM_OK) {
        std::fprintf(stderr, "%s: %s\n", tool, err.message);
        return false;
    }
    pm_database_info info;
    pm_database_get_info(&info, p.db);
    p.D = info.cardinality;
    FILE *f = std::fopen(queries_path, "rb");
    if (!f) {
        std::fprintf(stderr, "%s: cannot open %s\n", tool, queries_path);
        return false;
    }
    float buf[4096];
    size_t got;
    while ((got = std::fread(buf, sizeof(float), 4096, f)) > 0) p.queries.insert(p.queries.end(), buf, buf + got);
    std::fclose(f);
    if (p.queries.empty() || p.queries.size() % (size_t)p.D) {
        std::fprintf(stderr, "%s: %s is not whole rows of %d floats\n", tool, queries_path, p.D);
        return false;
    }
    p.nq = p.queries.size() / (size_t)p.D;
    for (int i = 0; i < info.poses; i++) {
        pm_pose_info pi;
        if (pm_database_pose(&pi, p.db, i, &err) != PM_OK) {
            std::fprintf(stderr, "%s: %s\n", tool, err.message);
            return false;
        }
        if (pi.cost_addend != 0.0f) {
            std::fprintf(stderr, "%s: the database has cost addends; the peer cannot take them\n", tool);
            return false;
        }
    }
    int stride = 0;
    const float *values = pm_database_values(p.db, &p.rows, &stride);
    p.offset = pm_database_offsets(p.db);
    p.scale = pm_database_scales(p.db);
    p.wsqrt = pm_database_weights_sqrt(p.db);
    p.cloud.resize((size_t)p.rows * p.D);
    for (int r = 0; r < p.rows; r++)
        for (int d = 0; d < p.D; d++) p.cloud[(size_t)r * p.D + d] = values[(size_t)r * stride + d] * p.wsqrt[d];
    return true;
}

// Times `query(i)` over every query in one pass after a short warm-up: each method gets its own
// pass, as `posematch bench` does, since interleaving them would let brute force's full scan evict
// the trees' working sets between queries.
template <class Query> Stats time_pass(size_t nq, Query query) {
    std::vector<double> t(nq);
    const size_t warm = std::min<size_t>(nq, 16);
    for (size_t i = 0; i < warm; i++) query(i);
    for (size_t i = 0; i < nq; i++) {
        double a = pm_bench_now_us();
        query(i);
        t[i] = pm_bench_now_us() - a;
    }
    return stats(t);
}

// posematch's exact and brute-force modes on the same queries; bf receives the optimum of each.
struct Own {
    Stats exact, bruteforce;
    std::vector<pm_search_result> bf;
};

inline bool run_own(Own &own, const Data &p) {
    pm_search_def def = pm_default_search_def();
    const size_t ss = pm_search_scratch_size(p.db, &def);
    void *scratch = std::aligned_alloc(64, (ss + 63) / 64 * 64);
    if (!scratch) {
        std::fprintf(stderr, "%s: out of memory\n", p.tool);
        return false;
    }
    own.bf.resize(p.nq);
    pm_search_result r;
    def.mode = PM_SEARCH_EXACT;
    own.exact = time_pass(p.nq, [&](size_t i) { pm_search(&r, p.db, &p.queries[i * p.D], &def, scratch, ss, nullptr); });
    def.mode = PM_SEARCH_BRUTEFORCE;
    own.bruteforce =
        time_pass(p.nq, [&](size_t i) { pm_search(&own.bf[i], p.db, &p.queries[i * p.D], &def, scratch, ss, nullptr); });
    std::free(scratch);
    return true;
}

// How often a peer's answers (value rows and squared distances) are the brute-force optimum, and
// its mean cost excess over it.
struct Quality {
    double exact_fraction = 0, mean_excess = 0;
};

inline bool quality(Quality &out, const Data &p, const Own &own, const std::vector<int64_t> &row,
                    const std::vector<float> &dist) {
    size_t agree = 0;
    double excess = 0.0;
    for (size_t i = 0; i < p.nq; i++) {
        const pm_search_result &bf = own.bf[i];
        pm_pose_info pi;
        pm_error err;
        if (pm_database_pose(&pi, p.db, bf.pose, &err) != PM_OK) {
            std::fprintf(stderr, "%s: query %zu: %s\n", p.tool, i, err.message);
            return false;
        }
        // Same optimum: the same value row, or a tie within float rounding of the two sums.
        bool same = (int64_t)pi.vector == row[i] || std::fabs(dist[i] - bf.cost) <= 1e-5f * (1.0f + bf.cost);
        agree += same;
        excess += bf.cost > 0 ? std::max(0.0, (double)dist[i] / bf.cost - 1.0) : 0.0;
    }
    out.exact_fraction = (double)agree / (double)p.nq;
    out.mean_excess = excess / (double)p.nq;
    return true;
}

}  // namespace peer

#endif
