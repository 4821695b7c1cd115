// Peer benchmark: FAISS's HNSW graph (Debian's libfaiss-dev), the approximate nearest-neighbour
// index most often measured against, on the same matrix and the same queries as posematch's own
// modes, timed in the same run.
//
//   bench_faiss DB.pmdb QUERIES.f32 [--name SET] [--json] [--m M] [--ef-construction N]
//               [--ef-search N[,N...]] [--passes N]
//
// The index holds the searchable rows of the database, normalised and multiplied by the weight
// square roots, so its squared L2 distance is posematch's cost (bench/peer.hpp); defaults M 32,
// efConstruction 40 (FAISS's own), and efSearch 16 (FAISS's default) and 64 (the setting of the
// reference figure in the engine issue), each timed over every query on the one graph, in
// alternating passes with posematch's exact and brute force (3 unless --passes; each query's
// time the median of its passes). It is
// built and searched on one thread, as every other figure of the table is: a graph added to on
// several threads also depends on their timing. The database must have no cost addends (FAISS
// knows nothing of them).
#include <faiss/IndexHNSW.h>
#include <omp.h>

#include <cstring>
#include <string>

#include "peer.hpp"

namespace {

struct Run {
    int ef_search = 0;
    peer::Stats time;
    peer::Quality quality;
};

// "16,64" into its values; false when malformed. Each item is read as the CLI reads a number
// (pm_cli_int, with its message), so an empty item ("16," or "16,,64") is an error, not skipped.
// A list's message quotes the whole list before the item, as build's --modes does.
bool parse_list(std::vector<int> &out, const char *text) {
    out.clear();
    const std::string label =
        std::strchr(text, ',') ? std::string("--ef-search '") + text + "':" : std::string("--ef-search");
    for (const char *s = text;;) {
        const char *comma = std::strchr(s, ',');
        std::string item = comma ? std::string(s, (size_t)(comma - s)) : std::string(s);
        int v;
        if (!pm_cli_int(&v, "bench_faiss", label.c_str(), item.c_str(), 1, 1000000)) return false;
        out.push_back(v);
        if (!comma) return true;
        s = comma + 1;
    }
}

}  // namespace

int main(int argc, char **argv) {
    const char *usage = "usage: bench_faiss DB.pmdb QUERIES.f32 [--name SET] [--json] [--m M] [--ef-construction N] "
                        "[--ef-search N[,N...]] [--passes N]\n";
    if (argc < 3) {
        std::fputs(usage, stderr);
        return 2;
    }
    std::string name = "queries";
    bool json = false;
    int m = 32, ef_construction = 40, passes = 3;
    std::vector<int> ef_search = {16, 64};
    for (int i = 3; i < argc; i++) {
        if (!std::strcmp(argv[i], "--json")) json = true;
        else if (!std::strcmp(argv[i], "--name") && i + 1 < argc) name = argv[++i];
        else if (!std::strcmp(argv[i], "--m") && i + 1 < argc) {
            if (!pm_cli_int(&m, "bench_faiss", "--m", argv[++i], 2, 1024)) return 2;
        } else if (!std::strcmp(argv[i], "--ef-construction") && i + 1 < argc) {
            if (!pm_cli_int(&ef_construction, "bench_faiss", "--ef-construction", argv[++i], 1, 1000000)) return 2;
        } else if (!std::strcmp(argv[i], "--passes") && i + 1 < argc) {
            if (!pm_cli_int(&passes, "bench_faiss", "--passes", argv[++i], 1, PM_BENCH_PASSES_MAX)) return 2;
        } else if (!std::strcmp(argv[i], "--ef-search") && i + 1 < argc) {
            if (!parse_list(ef_search, argv[++i])) return 2;
        } else {
            std::fprintf(stderr, "bench_faiss: unknown or incomplete option %s\n%s", argv[i], usage);
            return 2;
        }
    }
    peer::Data p;
    if (!peer::load(p, "bench_faiss", argv[1], argv[2])) return 1;
    const int D = p.D;
    omp_set_num_threads(1);
    double t0 = pm_bench_now_us();
    faiss::IndexHNSWFlat index(D, m);
    index.hnsw.efConstruction = ef_construction;
    index.add(p.rows, p.cloud.data());
    double build_ms = (pm_bench_now_us() - t0) / 1000.0;

    const size_t settings = ef_search.size();
    std::vector<float> wq((size_t)D);
    std::vector<std::vector<faiss::Index::idx_t>> row(settings, std::vector<faiss::Index::idx_t>(p.nq));
    std::vector<std::vector<float>> dist(settings, std::vector<float>(p.nq));
    std::vector<peer::Method> methods;
    for (size_t k = 0; k < settings; k++)
        methods.push_back({// Set on the index itself: FAISS 1.7.3's IndexHNSW::search does not pass per-call
                           // SearchParametersHNSW on to the graph (efSearch stayed at its default that way).
                           [&, k] { index.hnsw.efSearch = ef_search[k]; },
                           [&, k](size_t i) {
                               p.weigh(&p.queries[i * D], wq.data());
                               index.search(1, wq.data(), 1, &dist[k][i], &row[k][i]);
                           }});
    peer::Own own;
    if (!peer::own_methods(methods, own, p)) return 1;
    const std::vector<peer::Stats> st = peer::time_alternating(p.nq, passes, methods);
    std::vector<Run> runs;
    for (size_t k = 0; k < settings; k++) {
        Run r;
        r.ef_search = ef_search[k];
        r.time = st[k];
        if (!peer::quality(r.quality, p, own, std::vector<int64_t>(row[k].begin(), row[k].end()), dist[k])) return 1;
        runs.push_back(r);
    }
    const peer::Stats &se = st[settings], &sb = st[settings + 1];
    if (json) {
        std::printf("{\"query_set\": \"%s\", \"queries\": %zu, \"passes\": %d, \"rows\": %d, \"faiss_m\": %d, \"faiss_ef_construction\": %d,"
                    " \"faiss_build_ms\": %.3f,\n \"exact\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f},\n"
                    " \"bruteforce\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f},\n \"runs\": [",
                    name.c_str(), p.nq, passes, p.rows, m, ef_construction, build_ms, se.median, se.p99, se.mean, sb.median, sb.p99,
                    sb.mean);
        for (size_t k = 0; k < runs.size(); k++) {
            const Run &r = runs[k];
            std::printf("%s\n  {\"faiss_ef_search\": %d, \"faiss\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f,"
                        " \"exact_fraction\": %.6f, \"mean_excess\": %.6g}, \"faiss_speedup_vs_bruteforce\": %.3f,"
                        " \"exact_speedup_vs_faiss\": %.3f}",
                        k ? "," : "", r.ef_search, r.time.median, r.time.p99, r.time.mean, r.quality.exact_fraction,
                        r.quality.mean_excess, sb.median / r.time.median, r.time.median / se.median);
        }
        std::printf("]}\n");
    } else {
        std::printf("%s: %zu queries over %d rows x %d; FAISS HNSW M %d, efConstruction %d, built in %.1f ms; each query's "
                    "time the median of %d alternating passes\n",
                    name.c_str(), p.nq, p.rows, D, m, ef_construction, build_ms, passes);
        for (const Run &r : runs)
            std::printf("  efSearch %d: median %.1f us, p99 %.1f us, optimum on %.1f%%, mean excess %.2f%% (%.2fx posematch "
                        "exact's median)\n",
                        r.ef_search, r.time.median, r.time.p99, 100.0 * r.quality.exact_fraction,
                        100.0 * r.quality.mean_excess, r.time.median / se.median);
        std::printf("  posematch exact: median %.1f us, p99 %.1f us\n", se.median, se.p99);
        std::printf("  posematch bruteforce: median %.1f us, p99 %.1f us\n", sb.median, sb.p99);
    }
    return 0;
}
