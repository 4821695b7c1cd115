// Peer benchmark: nanoflann's exact KD-tree (Debian's libnanoflann-dev) on the same matrix and
// the same queries as posematch's own modes, timed in the same run.
//
//   bench_nanoflann DB.pmdb QUERIES.f32 [--name SET] [--json] [--leaf N] [--passes N]
//
// QUERIES.f32 holds raw query rows (what `posematch bench --save-queries` writes). nanoflann
// indexes the searchable rows of the database, normalised and multiplied by the weight square
// roots, so its squared L2 distance is posematch's cost (bench/peer.hpp). nanoflann, posematch's
// exact and its brute force are timed in alternating passes (3 unless --passes), each query's
// time the median of its passes. The database must have no cost addends (nanoflann knows
// nothing of them).
#include <nanoflann.hpp>

#include <cstring>
#include <string>

#include "peer.hpp"

namespace {

struct Cloud {
    const std::vector<float> *rows = nullptr;
    size_t dim = 0;
    size_t kdtree_get_point_count() const { return rows->size() / dim; }
    float kdtree_get_pt(size_t i, size_t d) const { return (*rows)[i * dim + d]; }
    template <class Box> bool kdtree_get_bbox(Box &) const { return false; }
};

using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<float, Cloud>, Cloud, -1, uint32_t>;

}  // namespace

int main(int argc, char **argv) {
    const char *usage = "usage: bench_nanoflann DB.pmdb QUERIES.f32 [--name SET] [--json] [--leaf N] [--passes N]\n";
    if (argc < 3) {
        std::fputs(usage, stderr);
        return 2;
    }
    std::string name = "queries";
    bool json = false;
    int leaf = 10, passes = 3;
    for (int i = 3; i < argc; i++) {
        if (!std::strcmp(argv[i], "--json")) json = true;
        else if (!std::strcmp(argv[i], "--name") && i + 1 < argc) name = argv[++i];
        else if (!std::strcmp(argv[i], "--leaf") && i + 1 < argc) {
            if (!pm_cli_int(&leaf, "bench_nanoflann", "--leaf", argv[++i], 1, 1000000)) return 2;
        } else if (!std::strcmp(argv[i], "--passes") && i + 1 < argc) {
            if (!pm_cli_int(&passes, "bench_nanoflann", "--passes", argv[++i], 1, PM_BENCH_PASSES_MAX)) return 2;
        } else {
            std::fprintf(stderr, "bench_nanoflann: unknown or incomplete option %s\n%s", argv[i], usage);
            return 2;
        }
    }
    peer::Data p;
    if (!peer::load(p, "bench_nanoflann", argv[1], argv[2])) return 1;
    const int D = p.D;
    Cloud cloud;
    cloud.rows = &p.cloud;
    cloud.dim = (size_t)D;
    double t0 = pm_bench_now_us();
    Tree tree(D, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(leaf));
    tree.buildIndex();
    double build_ms = (pm_bench_now_us() - t0) / 1000.0;

    std::vector<float> wq((size_t)D);
    std::vector<uint32_t> idx(p.nq);
    std::vector<float> dist(p.nq);
    std::vector<peer::Method> methods;
    methods.push_back({nullptr, [&](size_t i) {
                           p.weigh(&p.queries[i * D], wq.data());
                           nanoflann::KNNResultSet<float, uint32_t> rs(1);
                           rs.init(&idx[i], &dist[i]);
                           tree.findNeighbors(rs, wq.data(), nanoflann::SearchParams(32, 0.0f, true));
                       }});
    peer::Own own;
    if (!peer::own_methods(methods, own, p)) return 1;
    const std::vector<peer::Stats> st = peer::time_alternating(p.nq, passes, methods);
    peer::Quality q;
    if (!peer::quality(q, p, own, std::vector<int64_t>(idx.begin(), idx.end()), dist)) return 1;
    const peer::Stats &sn = st[0], &se = st[1], &sb = st[2];
    if (json) {
        std::printf("{\"query_set\": \"%s\", \"queries\": %zu, \"passes\": %d, \"rows\": %d, \"nanoflann_leaf\": %d, \"nanoflann_build_ms\": %.3f,\n"
                    " \"nanoflann\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f, \"exact_fraction\": %.6f, \"mean_excess\": %.6g},\n"
                    " \"exact\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f},\n"
                    " \"bruteforce\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f},\n"
                    " \"nanoflann_speedup_vs_bruteforce\": %.3f, \"exact_speedup_vs_nanoflann\": %.3f}\n",
                    name.c_str(), p.nq, passes, p.rows, leaf, build_ms, sn.median, sn.p99, sn.mean, q.exact_fraction, q.mean_excess,
                    se.median, se.p99, se.mean, sb.median, sb.p99, sb.mean, sb.median / sn.median, sn.median / se.median);
    } else {
        std::printf("%s: %zu queries over %d rows x %d, each query's time the median of %d alternating passes\n",
                    name.c_str(), p.nq, p.rows, D, passes);
        std::printf("  nanoflann KD-tree (leaf %d, built in %.1f ms): median %.1f us, p99 %.1f us, optimum on %.1f%%\n", leaf,
                    build_ms, sn.median, sn.p99, 100.0 * q.exact_fraction);
        std::printf("  posematch exact: median %.1f us, p99 %.1f us (%.1fx nanoflann's median)\n", se.median, se.p99,
                    sn.median / se.median);
        std::printf("  posematch bruteforce: median %.1f us, p99 %.1f us\n", sb.median, sb.p99);
    }
    return 0;
}
