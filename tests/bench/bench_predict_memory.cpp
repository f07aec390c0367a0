// mmgp-bench: peak memory of `mmgp predict` as the search space grows, and of `mmgp fit` on 10^6 runs.
//   build/tests/mmgp-bench --benchmark_filter='predict_memory|fit_memory'
// Runs the mmgp binary (MMGP_BIN, default build/cli/mmgp) on a generated scenario of 10^6 or 10^7
// feasible configurations (16 accelerators per node, 50 (m, p) mappings per node, 20,000 or
// 200,000 nodes) with each output: text, --json, --csv (to /dev/null). Counters: peak_MB, the
// child's maximum resident set (getrusage), and configurations. Target: at most 100 MB at 10^7 for
// every output: the search streams, nothing keeps every configuration.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <spawn.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {

std::string scenario_file(long nodes) {
    const std::string path = "/tmp/mmgp-bench-predict-" + std::to_string(getpid()) + "-" + std::to_string(nodes) + ".json";
    if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fprintf(f,
                     "{\"schema\": \"mmgp/1\", \"name\": \"memory\",\n"
                     " \"platform\": {\"hpu_contexts\": 2, \"apus\": 16, \"nodes\": %ld, \"O_offload\": 1e-6,"
                     " \"T_csw\": 1e-6, \"alpha\": 1.2},\n"
                     " \"application\": {\"N\": 1000, \"T_hpu\": 1.0, \"T_apu\": 50.0, \"C_apu\": 0.1, \"g\": 1e-5},\n"
                     " \"search\": {\"m\": [1, 16], \"p\": [1, 16], \"nodes\": [1, %ld]}}\n",
                     nodes, nodes);
        std::fclose(f);
    }
    return path;
}

// Runs `mmgp WORDS...` with stdout on /dev/null; returns the child's peak RSS in KiB.
long run_mmgp(std::vector<std::string> words, int& status) {
    const char* env = std::getenv("MMGP_BIN");
    const std::string bin = env ? env : "build/cli/mmgp";
    words.insert(words.begin(), bin);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    status = posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (status != 0) return -1;
    struct rusage ru {};
    if (wait4(pid, &status, 0, &ru) != pid) return -1;
    return ru.ru_maxrss;
}

void BM_predict_memory(benchmark::State& st, long nodes, const char* flag) {
    const std::string file = scenario_file(nodes);
    long peak_kib = 0;
    for (auto _ : st) {
        int status = 0;
        std::vector<std::string> words = {"predict", file};
        if (flag) words.emplace_back(flag);
        long kib = run_mmgp(words, status);
        if (kib < 0 || status != 0) {
            st.SkipWithError("mmgp predict failed (set MMGP_BIN to the mmgp binary)");
            break;
        }
        peak_kib = std::max(peak_kib, kib);
    }
    std::remove(file.c_str());
    st.counters["peak_MB"] = static_cast<double>(peak_kib) / 1024.0;
    st.counters["configurations"] = static_cast<double>(nodes) * 50.0;
}

BENCHMARK_CAPTURE(BM_predict_memory, text_1e6, 20000L, nullptr)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_predict_memory, json_1e6, 20000L, "--json")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_predict_memory, csv_1e6, 20000L, "--csv")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_predict_memory, text_1e7, 200000L, nullptr)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_predict_memory, json_1e7, 200000L, "--json")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_predict_memory, csv_1e7, 200000L, "--csv")->Unit(benchmark::kMillisecond)->Iterations(1);

// `mmgp fit` on 10^6 runs of 16 configurations (m, p in 1..4; a CSV of 11 MB), its fitted profile (one residual per
// run) written to a file. Target: under 1 GB.
void BM_fit_memory(benchmark::State& st) {
    const std::string runs = "/tmp/mmgp-bench-fit-" + std::to_string(getpid()) + ".csv";
    const std::string out = runs + ".json";
    if (FILE* f = std::fopen(runs.c_str(), "w")) {
        std::fprintf(f, "m,p,time_s\n");
        for (long i = 0; i < 1000000; ++i) {
            const int m = 1 + static_cast<int>(i % 4), p = 1 + static_cast<int>((i / 4) % 4);
            std::fprintf(f, "%d,%d,%.4f\n", m, p, 10.0 / (m * p) + 1 + 0.05 * static_cast<double>(i % 7) / 7);
        }
        std::fclose(f);
    }
    long peak_kib = 0;
    for (auto _ : st) {
        int status = 0;
        const long kib = run_mmgp({"fit", runs, "-o", out}, status);
        if (kib < 0 || status != 0) {
            st.SkipWithError("mmgp fit failed (set MMGP_BIN to the mmgp binary)");
            break;
        }
        peak_kib = std::max(peak_kib, kib);
    }
    std::remove(runs.c_str());
    std::remove(out.c_str());
    st.counters["peak_MB"] = static_cast<double>(peak_kib) / 1024.0;
    st.counters["runs"] = 1e6;
}
BENCHMARK(BM_fit_memory)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
