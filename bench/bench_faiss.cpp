// Peer benchmark: FAISS's HNSW graph (Debian's libfaiss-dev), the approximate nearest-neighbour
// index most often measured against, on the same matrix and the same queries as posematch's own
// modes, timed in the same run.
//
//   bench_faiss DB.pmdb QUERIES.f32 [--name SET] [--json] [--m M] [--ef-construction N] [--ef-search N]
//
// The index holds the searchable rows of the database, normalised and multiplied by the weight
// square roots, so its squared L2 distance is posematch's cost (bench/peer.hpp); defaults M 32,
// efConstruction 40 (FAISS's own) and efSearch 64. It is built and searched on one thread, as
// every other figure of the table is: a graph added to on several threads also depends on their
// timing. The database must have no cost addends (FAISS knows nothing of them).
#include <faiss/IndexHNSW.h>
#include <omp.h>

#include <cstring>
#include <string>

#include "peer.hpp"

int main(int argc, char **argv) {
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: bench_faiss DB.pmdb QUERIES.f32 [--name SET] [--json] [--m M] [--ef-construction N] "
                     "[--ef-search N]\n");
        return 2;
    }
    std::string name = "queries";
    bool json = false;
    int m = 32, ef_construction = 40, ef_search = 64;
    for (int i = 3; i < argc; i++) {
        if (!std::strcmp(argv[i], "--json")) json = true;
        else if (!std::strcmp(argv[i], "--name") && i + 1 < argc) name = argv[++i];
        else if (!std::strcmp(argv[i], "--m") && i + 1 < argc) m = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--ef-construction") && i + 1 < argc) ef_construction = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--ef-search") && i + 1 < argc) ef_search = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "bench_faiss: unknown or incomplete option %s\n", argv[i]);
            return 2;
        }
    }
    if (m < 2 || ef_construction < 1 || ef_search < 1) {
        std::fprintf(stderr, "bench_faiss: --m must be at least 2, --ef-construction and --ef-search at least 1\n");
        return 2;
    }
    peer::Data p;
    if (!peer::load(p, "bench_faiss", argv[1], argv[2])) return 1;
    const int D = p.D;
    omp_set_num_threads(1);
    double t0 = peer::now_us();
    faiss::IndexHNSWFlat index(D, m);
    index.hnsw.efConstruction = ef_construction;
    index.add(p.rows, p.cloud.data());
    double build_ms = (peer::now_us() - t0) / 1000.0;

    faiss::SearchParametersHNSW params;
    params.efSearch = ef_search;
    std::vector<float> wq((size_t)D);
    std::vector<faiss::Index::idx_t> row(p.nq);
    std::vector<float> dist(p.nq);
    peer::Stats sf = peer::time_pass(p.nq, [&](size_t i) {
        p.weigh(&p.queries[i * D], wq.data());
        index.search(1, wq.data(), 1, &dist[i], &row[i], &params);
    });
    peer::Own own;
    peer::Quality q;
    if (!peer::run_own(own, p) || !peer::quality(q, p, own, std::vector<int64_t>(row.begin(), row.end()), dist)) return 1;
    const peer::Stats &se = own.exact, &sb = own.bruteforce;
    if (json) {
        std::printf("{\"query_set\": \"%s\", \"queries\": %zu, \"rows\": %d, \"faiss_m\": %d, \"faiss_ef_construction\": %d,"
                    " \"faiss_ef_search\": %d, \"faiss_build_ms\": %.3f,\n"
                    " \"faiss\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f, \"exact_fraction\": %.6f, \"mean_excess\": %.6g},\n"
                    " \"exact\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f},\n"
                    " \"bruteforce\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f},\n"
                    " \"faiss_speedup_vs_bruteforce\": %.3f, \"exact_speedup_vs_faiss\": %.3f}\n",
                    name.c_str(), p.nq, p.rows, m, ef_construction, ef_search, build_ms, sf.median, sf.p99, sf.mean,
                    q.exact_fraction, q.mean_excess, se.median, se.p99, se.mean, sb.median, sb.p99, sb.mean,
                    sb.median / sf.median, sf.median / se.median);
    } else {
        std::printf("%s: %zu queries over %d rows x %d\n", name.c_str(), p.nq, p.rows, D);
        std::printf("  FAISS HNSW (M %d, efConstruction %d, efSearch %d, built in %.1f ms): median %.1f us, p99 %.1f us, "
                    "optimum on %.1f%%, mean excess %.2f%%\n",
                    m, ef_construction, ef_search, build_ms, sf.median, sf.p99, 100.0 * q.exact_fraction, 100.0 * q.mean_excess);
        std::printf("  posematch exact: median %.1f us, p99 %.1f us (%.1fx FAISS's median)\n", se.median, se.p99,
                    sf.median / se.median);
        std::printf("  posematch bruteforce: median %.1f us, p99 %.1f us\n", sb.median, sb.p99);
    }
    return 0;
}
