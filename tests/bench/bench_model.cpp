// mmgp-bench: speed of the model and the search (Google Benchmark).
//   build/tests/mmgp-bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
// Targets: eq11_single <= 20 ns (the paper: 0.4 us per evaluation of Eq. 11);
// search_roadrunner (3,060 triblades, m*p <= 32, default model with the communication term) <= 3 ms
// (docs/VALIDATION.md "Speed": 2.58 ms here, 9.48 ms before the model was split into layers);
// search_roadrunner_node_hours and _core_hours (the cheapest within 5 % of the fastest, and the front) <= 2x
// search_roadrunner in the same run; search_gpu_node (both sharing modes of a 132-SM node) per configuration
// within 1.5x of search_dedicated_node (the same node and program without sharing modes) in the same run.
#include <benchmark/benchmark.h>

#include <string>

#include "mmgp/model.hpp"
#include "mmgp/search.hpp"

namespace {

// One model evaluation; (m, p) cycles through the feasible QS20 mappings so nothing is constant-folded.
void evaluate_cycling(benchmark::State& st, const char* scenario_name, mmgp::model_kind kind) {
    mmgp::scenario s = mmgp::load_scenario(scenario_name);
    mmgp::evaluator ev(s, kind);
    int m = 1, p = 1;
    for (auto _ : st) {
        benchmark::DoNotOptimize(ev({m, p, 1, mmgp::policy::edtlp}).time_s);
        if (++p * m > 16) {
            p = 1;
            m = m % 16 + 1;
        }
    }
}

// One Eq. 11 evaluation (PBPI on a QS20).
void BM_eq11_single(benchmark::State& st) { evaluate_cycling(st, "pbpi-qs20", mmgp::model_kind::eq11); }
BENCHMARK(BM_eq11_single);

// One evaluation of the default model, task decomposition with oversubscription (RAxML on a QS20).
void BM_mmgp_single(benchmark::State& st) { evaluate_cycling(st, "raxml-qs20", mmgp::model_kind::mmgp); }
BENCHMARK(BM_mmgp_single);

// The whole search of a Roadrunner-scale space: 364,140 configurations, best + near-optimal set.
void BM_search_roadrunner(benchmark::State& st) {
    mmgp::scenario s = mmgp::load_scenario("pbpi-roadrunner");
    for (auto _ : st) {
        auto r = mmgp::search(s, mmgp::model_kind::mmgp, {false});
        benchmark::DoNotOptimize(r.best.pred.time_s);
    }
    st.counters["configurations"] = static_cast<double>(mmgp::count_feasible(s));
}
BENCHMARK(BM_search_roadrunner)->Unit(benchmark::kMillisecond);

// The same search under a cost objective: the cheapest within 5 % of the fastest time.
void search_by(benchmark::State& st, mmgp::objective goal) {
    mmgp::scenario s = mmgp::load_scenario("pbpi-roadrunner");
    mmgp::search_options o(false);
    o.minimise = goal;
    for (auto _ : st) {
        auto r = mmgp::search(s, mmgp::model_kind::mmgp, o);
        benchmark::DoNotOptimize(r.best.pred.time_s);
    }
    st.counters["configurations"] = static_cast<double>(mmgp::count_feasible(s));
}
void BM_search_roadrunner_node_hours(benchmark::State& st) { search_by(st, mmgp::objective::node_hours); }
BENCHMARK(BM_search_roadrunner_node_hours)->Unit(benchmark::kMillisecond);
void BM_search_roadrunner_core_hours(benchmark::State& st) { search_by(st, mmgp::objective::core_hours); }
BENCHMARK(BM_search_roadrunner_core_hours)->Unit(benchmark::kMillisecond);

// The CLI's search of the QS20 scenario, keeping every configuration.
void BM_search_pbpi_qs20(benchmark::State& st) {
    mmgp::scenario s = mmgp::load_scenario("pbpi-qs20");
    for (auto _ : st) {
        auto r = mmgp::search(s, mmgp::model_kind::mmgp);
        benchmark::DoNotOptimize(r.best.pred.time_s);
    }
}
BENCHMARK(BM_search_pbpi_qs20)->Unit(benchmark::kMicrosecond);

// A GPU node of 132 SMs, 16 host cores, m up to 32, as a benchmark's input (made up, not a measured machine):
// the search over both sharing modes against the same node and program with dedicated accelerators, per
// configuration searched (ns_per_configuration); and the GPU node with 8 blocks per SM (apu_slots, the H200's
// measured slot curve), p up to 1,056 blocks, where the grid terms price every p above S/m.
enum class node { dedicated, gpu, gpu_slots };

std::string node_scenario(node kind) {
    const bool gpu = kind != node::dedicated;
    return std::string(R"({"platform": {"hpu_contexts": 16, "apus": 132, "O_offload": 9e-6, "T_csw": 2e-6, "alpha": 1.1,
                            "dma": {"latency_s": 4e-6, "bandwidth_Bps": 5.5e10})") +
           (gpu ? R"(, "sharing": ["mps", "time_sliced"], "T_slice_switch": 2e-5)" : "") +
           (kind == node::gpu_slots ? R"(, "apu_slots": 8, "slot_time": [[1, 1], [2, 1.20], [3, 1.93], [4, 2.32],
                                                                       [6, 3.39], [8, 4.45], [16, 8.62]])"
                                    : "") +
           R"(}, "application": {"decomposition": "task", "units": 64, "N": 1000, "T_hpu": 0.5, "T_apu": 50, "C_apu": 0.01,
                                 "g": 1e-7, "dma_bytes": 65536},
               "search": {"m": [1, 32], "p": [1, )" +
           (kind == node::gpu_slots ? "1056" : "132") + "]}}";
}

void search_node(benchmark::State& st, node kind) {
    const mmgp::scenario s = mmgp::parse_scenario(node_scenario(kind), "node.json");
    for (auto _ : st) {
        auto r = mmgp::search(s, mmgp::model_kind::mmgp, {false});
        benchmark::DoNotOptimize(r.best.pred.time_s);
    }
    const double n = static_cast<double>(mmgp::count_feasible(s));
    st.counters["configurations"] = n;
    st.counters["ns_per_configuration"] =
        benchmark::Counter(n * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
void BM_search_gpu_node(benchmark::State& st) { search_node(st, node::gpu); }
BENCHMARK(BM_search_gpu_node)->Unit(benchmark::kMicrosecond);
void BM_search_gpu_slots_node(benchmark::State& st) { search_node(st, node::gpu_slots); }
BENCHMARK(BM_search_gpu_slots_node)->Unit(benchmark::kMicrosecond);
void BM_search_dedicated_node(benchmark::State& st) { search_node(st, node::dedicated); }
BENCHMARK(BM_search_dedicated_node)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
