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
#include <functional>
#include <memory>
#include <vector>

#include "posematch/posematch.h"

extern "C" {
#include "bench_threads.h" /* posematch bench's clock, median and p99 */
#include "cli_common.h"    /* pm_cli_int: options read and refused as the CLI's are */
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

// A method a peer benchmark times: `before` (may be empty) sets its parameters at the start of
// each of its passes, `query(i)` answers query i.
struct Method {
    std::function<void()> before;
    std::function<void(size_t)> query;
};

// Times every method over every query in `passes` alternating passes (the first method's pass,
// the second's, ..., then the first's again), each after a short warm-up, and gives a query the
// median of its passes: as `posematch bench --passes` does, so that a burst of load on the host
// falls on every method alike. Each method keeps a whole pass to itself, since interleaving them
// per query would let brute force's full scan evict the trees' working sets between queries.
inline std::vector<Stats> time_alternating(size_t nq, int passes, const std::vector<Method> &methods) {
    std::vector<std::vector<double>> t(methods.size(), std::vector<double>((size_t)passes * nq));
    for (int pass = 0; pass < passes; pass++)
        for (size_t m = 0; m < methods.size(); m++) {
            if (methods[m].before) methods[m].before();
            const size_t warm = std::min<size_t>(nq, 16);
            for (size_t i = 0; i < warm; i++) methods[m].query(i);
            for (size_t i = 0; i < nq; i++) {
                double a = pm_bench_now_us();
                methods[m].query(i);
                t[m][(size_t)pass * nq + i] = pm_bench_now_us() - a;
            }
        }
    std::vector<Stats> out;
    std::vector<double> per_query(nq);
    for (size_t m = 0; m < methods.size(); m++) {
        pm_bench_pass_medians(per_query.data(), t[m].data(), passes, (int)nq, nq);
        out.push_back(stats(per_query));
    }
    return out;
}

// posematch's exact and brute-force modes on the same queries, as two methods to time beside a
// peer's; bf receives the optimum of each query.
struct Own {
    std::vector<pm_search_result> bf;
    pm_search_result r{};  // exact's answers, which posematch bench checks; here only timed
    std::unique_ptr<void, decltype(&std::free)> scratch{nullptr, &std::free};
    size_t scratch_size = 0;
};

// Appends posematch's exact and brute-force methods to `methods` (in that order); false after a
// message on stderr.
inline bool own_methods(std::vector<Method> &methods, Own &own, const Data &p) {
    pm_search_def exact = pm_default_search_def(), bf = pm_default_search_def();
    exact.mode = PM_SEARCH_EXACT;
    bf.mode = PM_SEARCH_BRUTEFORCE;
    own.scratch_size = std::max(pm_search_scratch_size(p.db, &exact), pm_search_scratch_size(p.db, &bf));
    own.scratch.reset(std::aligned_alloc(64, (own.scratch_size + 63) / 64 * 64));
    if (!own.scratch) {
        std::fprintf(stderr, "%s: out of memory\n", p.tool);
        return false;
    }
    own.bf.resize(p.nq);
    methods.push_back({nullptr, [&own, &p, exact](size_t i) {
                           pm_search(&own.r, p.db, &p.queries[i * p.D], &exact, own.scratch.get(), own.scratch_size,
                                     nullptr);
                       }});
    methods.push_back({nullptr, [&own, &p, bf](size_t i) {
                           pm_search(&own.bf[i], p.db, &p.queries[i * p.D], &bf, own.scratch.get(), own.scratch_size,
                                     nullptr);
                       }});
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
