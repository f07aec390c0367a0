// mmgp-bench: mmgp fit with its structure chosen from the runs (select_structure): 100 runs of 40
// configurations (m*p <= 8, two unit counts) on a time-shared platform (validation/gromacs/platform.json: the
// spin, policy and wake-up terms make every candidate distinct), nothing held: 2 decompositions x 2 policies x
// 3 spin limits x T_start held/fitted x N held/fitted, each cross-validated over the 40 configurations.
// Target: under 1 s (docs/COMMANDS.md "How fit chooses the structure").
//   build/tests/mmgp-bench --benchmark_filter=fit_ --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include "mmgp/fit.hpp"

namespace {

std::vector<mmgp::measured_run> hundred_runs(const mmgp::platform& pl) {
    mmgp::application truth;
    truth.decomp = mmgp::decomposition::task;
    truth.T_hpu = 0.05;
    truth.T_apu = 0.8;
    truth.C_apu = 0.02;
    truth.N = 200;
    truth.g = 1e-5;
    std::vector<mmgp::measured_run> runs;
    for (int rep = 0; runs.size() < 100; ++rep)
        for (int units : {4, 8})
            for (int m = 1; m <= 8; ++m)
                for (int p = 1; m * p <= 8; ++p) {
                    if (runs.size() == 100) break;
                    mmgp::scenario s;
                    s.plat = pl;
                    s.app = truth;
                    s.app.units = units;
                    s.space.m = {m, m};
                    s.space.p = {p, p};
                    mmgp::measured_run r;
                    r.c = {m, p, 1, mmgp::policy::edtlp};
                    r.units = units;
                    // a deterministic +-2 % scatter over the repetitions
                    r.time_s = mmgp::evaluator(s, mmgp::model_kind::mmgp)(r.c).time_s * (1.0 + 0.02 * ((rep % 3) - 1));
                    r.where = "row " + std::to_string(runs.size() + 2);
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
