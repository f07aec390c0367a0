// mmgp-bench: speed of the model and the search (Google Benchmark).
//   build/tests/mmgp-bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
// Targets: eq11_single <= 20 ns (the paper: 0.4 us per evaluation of Eq. 11);
// search_roadrunner (3,060 triblades, m*p <= 32, default model with the communication term) <= 3 ms
// (docs/VALIDATION.md "Speed": 2.58 ms here, 9.48 ms before the model was split into layers);
// search_roadrunner_node_hours and _core_hours (the cheapest within 5 % of the fastest, and the front) <= 2x
// search_roadrunner in the same run.
#include <benchmark/benchmark.h>

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

}  // namespace

BENCHMARK_MAIN();
