// mmgp-mpi-bench: MPI allreduce, reduce, bcast and send/recv latency for message sizes on a log scale (the
// mpptest-style micro-benchmark of [C] §4). Started by mpirun; rank 0 prints one JSON object:
//   {"nodes": N, "ppn": P, "processes": np, "tables": {"allreduce": [[bytes, s, mad, cv], ...], "reduce": [...],
//    "bcast": [...], "sendrecv": [...]}}
// send/recv is the one-way time of a ping-pong between rank 0 and the last rank (on another node when nodes > 1);
// allreduce, reduce (to rank 0) and bcast (from rank 0) are the largest per-rank mean time of the call
// (MPI_SUM on bytes/8 doubles).
// Usage: mpirun ... mmgp-mpi-bench NODES PPN [quick | full | simulated]
// Built with SimGrid's smpicxx (mmgp-mpi-bench-smpi) it runs under smpirun on a described cluster: "simulated"
// times one repetition of ten calls (a deterministic simulator gives every repetition the same time) and the buffers are
// SMPI's shared allocations (one copy for all ranks, so 1,024 ranks fit in memory).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stats.hpp"

namespace {

using mmgp::calib::summarize;

// Runs `op` iters times between barriers; returns the largest per-rank mean time.
/// A message buffer of `n` elements: SMPI's shared allocation under the simulator, a vector otherwise.
template <class T>
class buffer {
public:
    buffer(std::size_t n, T fill) : n_(n) {
#ifdef SMPI_SHARED_MALLOC
        data_ = static_cast<T*>(SMPI_SHARED_MALLOC(n * sizeof(T)));
#else
        own_.assign(n, fill);
        data_ = own_.data();
#endif
        std::fill(data_, data_ + n_, fill);
    }
    ~buffer() {
#ifdef SMPI_SHARED_MALLOC
        SMPI_SHARED_FREE(data_);
#endif
    }
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;
    T* data() { return data_; }

private:
    std::size_t n_;
    T* data_ = nullptr;
    std::vector<T> own_;
};

template <class F>
double timed(int iters, F op) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) op();
    double mine = (MPI_Wtime() - t0) / iters, worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, np = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int nodes = argc > 1 ? std::atoi(argv[1]) : 1;
    int ppn = argc > 2 ? std::atoi(argv[2]) : np;
    const std::string mode = argc > 3 ? argv[3] : "full";
    const bool quick = mode == "quick", simulated = mode == "simulated";
    const int reps = simulated ? 1 : quick ? 5 : 9;
    const double target = quick ? 0.01 : 0.03;  // seconds per repetition and size
    std::vector<std::size_t> sizes;
    for (std::size_t b = 8; b <= (1u << 20); b *= 4) sizes.push_back(b);
    sizes.push_back(1u << 20);
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    buffer<double> in((1u << 20) / 8 + 1, 1.0), out((1u << 20) / 8 + 1, 0.0);
    buffer<char> buf(1u << 20, 1);
    const int peer = np - 1;

    nlohmann::ordered_json doc = {{"nodes", nodes}, {"ppn", ppn}, {"processes", np}, {"repetitions", reps}};
    nlohmann::ordered_json& tables = doc["tables"] = nlohmann::ordered_json::object();
    const char* names[] = {"allreduce", "reduce", "bcast", "sendrecv"};
    for (int prim = 0; prim < 4; ++prim) {
        if (prim == 3 && np < 2) break;
        nlohmann::ordered_json& table = tables[names[prim]] = nlohmann::ordered_json::array();
        for (std::size_t si = 0; si < sizes.size(); ++si) {
            std::size_t bytes = sizes[si];
            int count = static_cast<int>(bytes / 8);
            auto allreduce = [&] { MPI_Allreduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); };
            auto reduce = [&] { MPI_Reduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); };
            auto bcast = [&] { MPI_Bcast(in.data(), count, MPI_DOUBLE, 0, MPI_COMM_WORLD); };
            auto pingpong = [&] {
                int n = static_cast<int>(bytes);
                if (rank == 0) {
                    MPI_Send(buf.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
                    MPI_Recv(buf.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == peer) {
                    MPI_Recv(buf.data(), n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf.data(), n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
                }
            };
            auto run = [&](int iters) {
                switch (prim) {
                    case 0: return timed(iters, allreduce);
                    case 1: return timed(iters, reduce);
                    case 2: return timed(iters, bcast);
                    default: return timed(iters, pingpong) / 2;
                }
            };
            // Simulated: ten back-to-back calls after one barrier (the barrier's exit skew, which a single call
            // would carry whole, spread over them), the same in every repetition of a deterministic simulator.
            int iters = 10;
            if (!simulated) {
                double trial = run(3);  // warm-up, also sizes the repetitions
                iters = static_cast<int>(std::clamp(target / std::max(trial, 1e-7), 3.0, 20000.0));
            }
            MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
            std::vector<double> v;
            for (int r = 0; r < reps; ++r) v.push_back(run(iters));
            const auto s = summarize(v);
            table.push_back({bytes, s.median, s.mad, s.cv});
        }
    }
    if (rank == 0) std::printf("%s\n", doc.dump().c_str());
    MPI_Finalize();
    return 0;
}
