// Peer benchmark: nanoflann's exact KD-tree (Debian's libnanoflann-dev) on the same matrix and
// the same queries as posematch's own modes, timed in the same run.
//
//   bench_nanoflann DB.pmdb QUERIES.f32 [--name SET] [--json]
//
// QUERIES.f32 holds raw query rows (what `posematch bench --save-queries` writes). nanoflann
// indexes the searchable rows of the database, normalised and multiplied by the weight square
// roots, so its squared L2 distance is posematch's cost. The database must have no cost
// addends (nanoflann knows nothing of them).
#include <nanoflann.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "posematch/posematch.h"

namespace {

struct Cloud {
    std::vector<float> rows;
    size_t dim = 0;
    size_t kdtree_get_point_count() const { return rows.size() / dim; }
    float kdtree_get_pt(size_t i, size_t d) const { return rows[i * dim + d]; }
    template <class Box> bool kdtree_get_bbox(Box &) const { return false; }
};

using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<float, Cloud>, Cloud, -1, uint32_t>;

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Stats {
    double median = 0, p99 = 0, mean = 0;
};

Stats stats(std::vector<double> t) {
    Stats s;
    std::sort(t.begin(), t.end());
    // As `posematch bench` takes them (tools/bench_threads.c), so that the table compares like
    // with like: the mean of the two middle samples of an even count, the p99 by nearest rank.
    const size_t n = t.size();
    s.median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    s.p99 = t[(n * 99 + 99) / 100 - 1];
    for (double x : t) s.mean += x / (double)t.size();
    return s;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_nanoflann DB.pmdb QUERIES.f32 [--name SET] [--json] [--leaf N]\n");
        return 2;
    }
    std::string name = "queries";
    bool json = false;
    int leaf = 10;
    for (int i = 3; i < argc; i++) {
        if (!std::strcmp(argv[i], "--json")) json = true;
        else if (!std::strcmp(argv[i], "--name") && i + 1 < argc) name = argv[++i];
        else if (!std::strcmp(argv[i], "--leaf") && i + 1 < argc) leaf = std::atoi(argv[++i]);
    }
    pm_error err;
    pm_database *db = nullptr;
    if (pm_database_load(&db, argv[1], nullptr, &err) != PM_OK) {
        std::fprintf(stderr, "bench_nanoflann: %s\n", err.message);
        return 1;
    }
    pm_database_info info;
    pm_database_get_info(&info, db);
    const int D = info.cardinality;
    FILE *f = std::fopen(argv[2], "rb");
    if (!f) {
        std::fprintf(stderr, "bench_nanoflann: cannot open %s\n", argv[2]);
        return 1;
    }
    std::vector<float> queries;
    float buf[4096];
    size_t got;
    while ((got = std::fread(buf, sizeof(float), 4096, f)) > 0) queries.insert(queries.end(), buf, buf + got);
    std::fclose(f);
    if (queries.empty() || queries.size() % (size_t)D) {
        std::fprintf(stderr, "bench_nanoflann: %s is not whole rows of %d floats\n", argv[2], D);
        return 1;
    }
    const size_t nq = queries.size() / (size_t)D;
    for (int p = 0; p < info.poses; p++) {
        pm_pose_info pi;
        if (pm_database_pose(&pi, db, p, &err) != PM_OK) {
            std::fprintf(stderr, "bench_nanoflann: %s\n", err.message);
            return 1;
        }
        if (pi.cost_addend != 0.0f) {
            std::fprintf(stderr, "bench_nanoflann: the database has cost addends; nanoflann cannot take them\n");
            return 1;
        }
    }

    // The searchable rows in the weighted, normalised space.
    int rows = 0, stride = 0;
    const float *values = pm_database_values(db, &rows, &stride);
    const float *offset = pm_database_offsets(db), *scale = pm_database_scales(db), *wsqrt = pm_database_weights_sqrt(db);
    Cloud cloud;
    cloud.dim = (size_t)D;
    cloud.rows.resize((size_t)rows * D);
    for (int r = 0; r < rows; r++)
        for (int d = 0; d < D; d++) cloud.rows[(size_t)r * D + d] = values[(size_t)r * stride + d] * wsqrt[d];
    double t0 = now_us();
    Tree tree(D, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(leaf));
    tree.buildIndex();
    double build_ms = (now_us() - t0) / 1000.0;

    pm_search_def def = pm_default_search_def();
    size_t ss = pm_search_scratch_size(db, &def);
    void *scratch = std::aligned_alloc(64, (ss + 63) / 64 * 64);
    std::vector<double> t_nano(nq), t_exact(nq), t_bf(nq);
    std::vector<float> wq((size_t)D);
    std::vector<uint32_t> nano_idx(nq);
    std::vector<float> nano_dist(nq);
    std::vector<pm_search_result> bf(nq);
    // Each method runs over all queries in its own pass (after a short warm-up), as
    // `posematch bench` does: interleaving them would let brute force's full scan evict the
    // trees' working sets between queries.
    auto nano_query = [&](size_t i) {
        const float *q = &queries[i * D];
        for (int d = 0; d < D; d++) wq[d] = (q[d] - offset[d]) / scale[d] * wsqrt[d];
        nanoflann::KNNResultSet<float, uint32_t> rs(1);
        rs.init(&nano_idx[i], &nano_dist[i]);
        tree.findNeighbors(rs, wq.data(), nanoflann::SearchParams(32, 0.0f, true));
    };
    const size_t warm = std::min<size_t>(nq, 16);
    for (size_t i = 0; i < warm; i++) nano_query(i);
    for (size_t i = 0; i < nq; i++) {
        double a = now_us();
        nano_query(i);
        t_nano[i] = now_us() - a;
    }
    for (int mode = 0; mode < 2; mode++) {
        def.mode = mode == 0 ? PM_SEARCH_EXACT : PM_SEARCH_BRUTEFORCE;
        std::vector<double> &t = mode == 0 ? t_exact : t_bf;
        pm_search_result r;
        for (size_t i = 0; i < warm; i++) pm_search(&r, db, &queries[i * D], &def, scratch, ss, nullptr);
        for (size_t i = 0; i < nq; i++) {
            double a = now_us();
            pm_search(mode == 0 ? &r : &bf[i], db, &queries[i * D], &def, scratch, ss, nullptr);
            t[i] = now_us() - a;
        }
    }
    size_t agree = 0;
    double excess = 0.0;
    for (size_t i = 0; i < nq; i++) {
        // Same optimum: the same value row, or a tie within float rounding of the two sums.
        pm_pose_info pi;
        if (pm_database_pose(&pi, db, bf[i].pose, &err) != PM_OK) {
            std::fprintf(stderr, "bench_nanoflann: query %zu: %s\n", i, err.message);
            return 1;
        }
        bool same = (uint32_t)pi.vector == nano_idx[i] || std::fabs(nano_dist[i] - bf[i].cost) <= 1e-5f * (1.0f + bf[i].cost);
        agree += same;
        excess += bf[i].cost > 0 ? std::max(0.0, (double)nano_dist[i] / bf[i].cost - 1.0) : 0.0;
    }
    Stats sn = stats(t_nano), se = stats(t_exact), sb = stats(t_bf);
    if (json) {
        std::printf("{\"query_set\": \"%s\", \"queries\": %zu, \"rows\": %d, \"nanoflann_leaf\": %d, \"nanoflann_build_ms\": %.3f,\n"
                    " \"nanoflann\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f, \"exact_fraction\": %.6f, \"mean_excess\": %.6g},\n"
                    " \"exact\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f},\n"
                    " \"bruteforce\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f},\n"
                    " \"nanoflann_speedup_vs_bruteforce\": %.3f, \"exact_speedup_vs_nanoflann\": %.3f}\n",
                    name.c_str(), nq, rows, leaf, build_ms, sn.median, sn.p99, sn.mean, (double)agree / (double)nq,
                    excess / (double)nq, se.median, se.p99, se.mean, sb.median, sb.p99, sb.mean, sb.median / sn.median,
                    sn.median / se.median);
    } else {
        std::printf("%s: %zu queries over %d rows x %d\n", name.c_str(), nq, rows, D);
        std::printf("  nanoflann KD-tree (leaf %d, built in %.1f ms): median %.1f us, p99 %.1f us, optimum on %.1f%%\n", leaf,
                    build_ms, sn.median, sn.p99, 100.0 * (double)agree / (double)nq);
        std::printf("  posematch exact: median %.1f us, p99 %.1f us (%.1fx nanoflann's median)\n", se.median, se.p99,
                    sn.median / se.median);
        std::printf("  posematch bruteforce: median %.1f us, p99 %.1f us\n", sb.median, sb.p99);
    }
    std::free(scratch);
    pm_database_destroy(db);
    return 0;
}
