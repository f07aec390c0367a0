// mmgp-bench: speed of the runtime advisor's query path.
//   build/tests/mmgp-bench --benchmark_filter=advisor --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
// Targets: recommend() median <= 50 ns, p99 <= 200 ns. BM_advisor_recommend gives the mean per call;
// BM_advisor_recommend_p99 times batches of 32 calls with the steady clock (per-call time = batch / 32,
// which keeps the clock's own ~20 ns out of the figure) and reports the median and 99th percentile of
// the per-call time over every batch as counters (median_ns, p99_ns). The _under_updates variants run
// an observer thread that feeds off-loads and republishes the table every 64 of them meanwhile.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "mmgp/advisor.h"
#include "mmgp/advisor.hpp"
#include "mmgp/profile.hpp"

namespace {

mmgp::advisor& shared_advisor() {
    static mmgp::advisor adv(std::string("raxml-qs20"));
    return adv;
}

struct observer {
    std::atomic<bool> stop{false};
    std::thread th;
    explicit observer(mmgp::advisor& adv) {
        th = std::thread([this, &adv] {
            int i = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                adv.offload_start(1 + i % 4);
                adv.offload_end(1 + i % 4, 1e-4 * (1 + i % 5));
                adv.host_gap(1e-5);
                ++i;
                if (i % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
            }
        });
    }
    ~observer() {
        stop.store(true);
        th.join();
    }
};

void recommend_loop(benchmark::State& st, mmgp::advisor& adv) {
    int m = 1;
    for (auto _ : st) {
        adv.set_active_tasks(m);
        benchmark::DoNotOptimize(adv.recommend());
        m = m % 16 + 1;
    }
}

void BM_advisor_recommend(benchmark::State& st) { recommend_loop(st, shared_advisor()); }
BENCHMARK(BM_advisor_recommend);

void BM_advisor_recommend_c(benchmark::State& st) {
    mmgp_advisor* adv = nullptr;
    mmgp_advisor_create("raxml-qs20", nullptr, &adv, nullptr, 0);
    mmgp_advice a;
    for (auto _ : st) {
        mmgp_advisor_recommend(adv, &a);
        benchmark::DoNotOptimize(a);
    }
    mmgp_advisor_destroy(adv);
}
BENCHMARK(BM_advisor_recommend_c);

void percentiles(benchmark::State& st, mmgp::advisor& adv) {
    constexpr int batch = 32;
    std::vector<double> per_call;
    per_call.reserve(1 << 20);
    int m = 1;
    for (auto _ : st) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < batch; ++i) {
            adv.set_active_tasks(m);
            benchmark::DoNotOptimize(adv.recommend());
            m = m % 16 + 1;
        }
        auto t1 = std::chrono::steady_clock::now();
        double s = std::chrono::duration<double>(t1 - t0).count();
        st.SetIterationTime(s);
        if (per_call.size() < per_call.capacity()) per_call.push_back(s / batch * 1e9);
    }
    st.SetItemsProcessed(st.iterations() * batch);
    if (per_call.empty()) return;
    std::sort(per_call.begin(), per_call.end());
    auto at = [&](double q) { return per_call[static_cast<std::size_t>(q * static_cast<double>(per_call.size() - 1))]; };
    st.counters["median_ns"] = at(0.5);
    st.counters["p99_ns"] = at(0.99);
    st.counters["max_ns"] = per_call.back();
}

void BM_advisor_recommend_p99(benchmark::State& st) { percentiles(st, shared_advisor()); }
BENCHMARK(BM_advisor_recommend_p99)->UseManualTime();

void BM_advisor_recommend_p99_under_updates(benchmark::State& st) {
    mmgp::advisor adv(std::string("raxml-qs20"));
    observer obs(adv);
    percentiles(st, adv);
}
BENCHMARK(BM_advisor_recommend_p99_under_updates)->UseManualTime();

// The observation path, for reference (an off-load start + end; every 64th end refreshes the table).
void BM_advisor_observe(benchmark::State& st) {
    mmgp::advisor adv(std::string("raxml-qs20"));
    int i = 0;
    for (auto _ : st) {
        adv.offload_start(1);
        adv.offload_end(1, 1e-4 * (1 + i++ % 5));
    }
}
BENCHMARK(BM_advisor_observe);

// A refresh (fit + the table re-evaluated) on a GPU node: 132 SMs of 8 block slots, m up to 132 tasks, p up to
// 1056/m blocks under MPS (Arg 0: 5,717 answers) or up to 1056 time-sliced (Arg 1: 139,392). A runtime calls it
// every refresh_every off-loads from offload_end(), or itself (refresh_every = 0) from a thread of its own.
void BM_advisor_refresh_gpu(benchmark::State& st) {
    const bool sliced = st.range(0) == 1;
    const mmgp::scenario s = mmgp::parse_scenario(std::string(R"({"platform": {"hpu_contexts": 16, "apus": 132,
        "O_offload": 9e-6, "T_csw": 0, "alpha": 1.0, "sharing": )") + (sliced ? R"(["time_sliced"], "T_slice_switch": 5e-5)" : R"(["mps"])") +
        R"(, "apu_slots": 8, "slot_time": [[1, 1], [2, 1.2], [4, 2.32], [8, 4.47]]},
        "application": {"decomposition": "task", "units": 8, "N": 100, "T_hpu": 0.01, "T_apu": 13.2, "C_apu": 0, "g": 0}})",
                                                  "gpu.json");
    mmgp::advisor adv(s);
    for (auto _ : st) adv.refresh();
    st.SetLabel(sliced ? "time_sliced" : "mps");
}
BENCHMARK(BM_advisor_refresh_gpu)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
