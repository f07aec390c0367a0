// mmgp-bench: mmgp fit with its structure chosen from the runs (select_structure): 100 runs of 40
// configurations (m*p <= 8, two unit counts) on a time-shared platform (validation/gromacs/platform.json: the
// spin, policy and wake-up terms make every candidate distinct), nothing held: 2 decompositions x 2 policies x
// 3 spin limits x T_start held/fitted x N held/fitted, each cross-validated over the 40 configurations.
// Target: under 1 s (docs/COMMANDS.md "How fit chooses the structure").
//   build/tests/mmgp-bench --benchmark_filter=fit_ --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include "../model_runs.hpp"
#include "mmgp/fit.hpp"

namespace {

std::vector<mmgp::measurement> hundred_runs(const mmgp::platform& pl) {
    const mmgp::application truth = mmgp::test::known_app(mmgp::decomposition::task, 0.05, 0.8, 0.02, 200, 1e-5);
    std::vector<mmgp::measurement> runs;
    for (int rep = 0; runs.size() < 100; ++rep)
        for (int units : {4, 8})
            for (int m = 1; m <= 8; ++m)
                for (int p = 1; m * p <= 8; ++p) {
                    if (runs.size() == 100) break;
                    mmgp::measurement r = mmgp::test::model_run(pl, truth, m, p, units);
                    mmgp::test::time_of(r) *= 1.0 + 0.02 * ((rep % 3) - 1);  // a deterministic +-2 % scatter over the repetitions
                    r.runs[0].where = "row " + std::to_string(runs.size() + 2);
                    runs.push_back(r);
                }
    return runs;
}

void BM_fit_select_100_runs(benchmark::State& st) {
    const mmgp::platform pl = mmgp::load_platform(MMGP_SOURCE_DIR "/validation/gromacs/platform.json");
    const auto runs = hundred_runs(pl);
    mmgp::structure_held nothing;
    nothing.decomposition = nothing.policy = nothing.spin_limit = nothing.T_start = nothing.N = false;
    for (auto _ : st) {
        auto s = mmgp::select_structure(pl, runs, {}, nothing, "bench");
        benchmark::DoNotOptimize(s.fit.app.T_apu);
        st.counters["candidates"] = static_cast<double>(s.candidates.size());
    }
}
BENCHMARK(BM_fit_select_100_runs)->Unit(benchmark::kMillisecond);

}  // namespace
