// mmgp-bench: the tune loop's own overhead per step (fit + discrepancy + choice of the next run), measured after
// 20 runs. Targets (docs/TUNE.md "Overhead"): <= 50 ms on a 1,000-configuration space, <= 2 s on the
// 364,140-configuration Roadrunner space; the same in the new user's mode (no application profile).
//   build/tests/mmgp-bench --benchmark_filter=tune --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cmath>

#include "mmgp/search.hpp"
#include "mmgp/tune.hpp"

namespace {

// Every feasible configuration of the scenario, the first `limit` of them (0: all).
std::vector<mmgp::configuration> space_of(const mmgp::scenario& s, std::size_t limit) {
    std::vector<mmgp::configuration> out;
    mmgp::search_options o(false);
    o.visit = [&](const mmgp::ranked& each, const mmgp::ranked&, bool) {
        if (limit == 0 || out.size() < limit) out.push_back(each.c);
    };
    (void)mmgp::search(s, mmgp::model_kind::mmgp, o);
    return out;
}

void tune_step(benchmark::State& st, const char* scenario_name, std::size_t limit, bool new_user = false) {
    const mmgp::scenario s = mmgp::load_scenario(scenario_name);
    const auto space = space_of(s, limit);
    mmgp::tune_options opt;
    // The new user's mode (no application profile): the parameters fitted as mmgp fit fits them.
    opt.prior = !new_user;
    opt.choose_structure = new_user;
    mmgp::tuner t(s, space, opt);
    mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
    // 20 runs where the loop asks for them, times from the model with a deterministic +-5 % wobble.
    for (int k = 0; k < 20; ++k) {
        mmgp::tune_assessment a = t.assess();
        if (!a.has_next) break;
        t.add(a.next, {ev(space[a.next]).time_s * (1 + 0.05 * std::sin(k)), mmgp::run_outcome::ok});
    }
    for (auto _ : st) {
        mmgp::tune_assessment a = t.assess();
        benchmark::DoNotOptimize(a.next);
    }
    st.counters["configurations"] = static_cast<double>(space.size());
}

void BM_tune_step_1000(benchmark::State& st) { tune_step(st, "pbpi-roadrunner", 1000); }
BENCHMARK(BM_tune_step_1000)->Unit(benchmark::kMillisecond);

void BM_tune_step_roadrunner(benchmark::State& st) { tune_step(st, "pbpi-roadrunner", 0); }
BENCHMARK(BM_tune_step_roadrunner)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_tune_step_1000_new_user(benchmark::State& st) { tune_step(st, "pbpi-roadrunner", 1000, true); }
BENCHMARK(BM_tune_step_1000_new_user)->Unit(benchmark::kMillisecond);

void BM_tune_step_roadrunner_new_user(benchmark::State& st) { tune_step(st, "pbpi-roadrunner", 0, true); }
BENCHMARK(BM_tune_step_roadrunner_new_user)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
