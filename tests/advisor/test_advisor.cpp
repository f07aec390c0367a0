// mmgp/advisor.hpp and mmgp/advisor.h: advice against hand-computed optima, online re-estimation
// following drifting tasks, the current-state query, concurrency, and the C API's contract.
#include <doctest/doctest.h>

#include <limits>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "mmgp/advisor.h"
#include "mmgp/advisor.hpp"
#include "support.hpp"

namespace {

// A node with A = 16 accelerators, H = 2 host contexts, no contention or switch cost, and an
// application whose off-load on p accelerators costs a/p + p*g: a = 0.01 s, g = 1e-4 s, host gap
// h = 1e-3 s, N = 100 off-loads per task. Per task (docs/MODEL.md §3, edtlp, one unit):
//   T(m, p) = N * (ceil(m/H) * h + a/p + p*g), minimised at p = sqrt(a/g) = 10 when m*p <= 16 allows.
mmgp::platform node() {
    mmgp::platform pl;
    pl.name = "node";
    pl.hpu_contexts = 2;
    pl.apus = 16;
    pl.O_offload = 0.0;
    pl.T_csw = 0.0;
    pl.alpha.kind = mmgp::m_function::form::constant;
    pl.alpha.value = 1.0;
    return pl;
}

mmgp::application app(double a = 0.01, double c = 0.0) {
    mmgp::application ap;
    ap.name = "loops";
    ap.decomp = mmgp::decomposition::task;
    ap.units = 1;
    ap.N = 100;
    ap.T_hpu = 100 * 1e-3;
    ap.T_apu = 100 * a;
    ap.C_apu = 100 * c;
    ap.g = 1e-4;
    return ap;
}

double T(int m, int p, double a = 0.01, double c = 0.0, double h = 1e-3) {
    const int rounds = (m + 1) / 2;
    return 100 * (rounds * h + a / p + c + p * 1e-4);
}

int argmin_p(int m, int max_p) {
    int best = 1;
    for (int p = 2; p <= max_p; ++p)
        if (T(m, p) < T(m, best)) best = p;
    return best;
}

}  // namespace

TEST_CASE("advisor: p of the next off-load is the model's optimum for m active tasks, with its gain") {
    mmgp::advisor_options opt;
    opt.min_gain = 0.0;
    mmgp::advisor adv(node(), app(), opt);
    CHECK(adv.apus() == 16);
    CHECK(adv.max_tasks() == 16);
    // By hand: m = 1 -> p = 10 (sqrt(a/g)); m = 2 -> 8 (16/2 caps it); m = 4 -> 4; m >= 9 -> 1.
    CHECK(adv.recommend(1).p == 10);
    CHECK(adv.recommend(2).p == 8);
    CHECK(adv.recommend(4).p == 4);
    CHECK(adv.recommend(9).p == 1);
    CHECK(adv.recommend(16).action == mmgp::llp_action::throttle);
    for (int m = 1; m <= 16; ++m) {
        auto a = adv.recommend(m);
        CHECK(a.m == m);
        CHECK(a.p == argmin_p(m, 16 / m));
        CHECK(a.action == (a.p > 1 ? mmgp::llp_action::activate : mmgp::llp_action::throttle));
        CHECK(a.time_s == doctest::Approx(T(m, a.p)).epsilon(1e-12));
        CHECK(a.time_p1_s == doctest::Approx(T(m, 1)).epsilon(1e-12));
        CHECK(a.gain == doctest::Approx((T(m, 1) - T(m, a.p)) / T(m, 1)).epsilon(1e-12));
        CHECK(a.version == 1);
    }
    // T(1,1) = 100 * (1e-3 + 0.01 + 1e-4) = 1.11 s; T(1,10) = 100 * (1e-3 + 1e-3 + 1e-3) = 0.3 s.
    CHECK(adv.recommend(1).gain == doctest::Approx(1 - 0.3 / 1.11));
    // A cap on p: the best p <= 5 for m = 1 is 5.
    CHECK(adv.recommend(1, 5).p == 5);
    CHECK(adv.recommend(1, 0).p == 1);
    CHECK(adv.recommend(40).m == 16);  // beyond the table: the largest m
}

TEST_CASE("advisor: a table past its size is refused at once, naming the accelerators") {
    // Two billion accelerators were taken once: seconds of work, then an internal error (an int overflowed).
    for (int apus : {2000000000, 5000000, 1000000}) {  // the last past the limit only with its task counts
        mmgp::platform pl = node();
        pl.apus = apus;
        CAPTURE(apus);
        CHECK_THROWS_WITH_AS(mmgp::advisor(pl, app()), doctest::Contains("/platform/apus: expected at most 4194304 answers"),
                             mmgp::input_error);
    }
    mmgp::platform pl = node();
    pl.apus = 20000;  // 0.2 Mi answers
    CHECK_NOTHROW(mmgp::advisor(pl, app()));
}

TEST_CASE("advisor: min_gain throttles loop-level parallelism that would not pay enough") {
    mmgp::advisor_options opt;
    opt.min_gain = 0.5;
    mmgp::advisor adv(node(), app(), opt);
    // m = 4: T(4,1) = 1.21, T(4,4) = 0.49, gain 0.595 >= 0.5: activate.
    CHECK(adv.recommend(4).p == 4);
    // m = 8: T(8,1) = 1.41, T(8,2) = 0.92, gain 0.348 < 0.5: throttle.
    auto a = adv.recommend(8);
    CHECK(a.p == 1);
    CHECK(a.gain == 0.0);
    CHECK(a.action == mmgp::llp_action::throttle);
}

TEST_CASE("advisor: recommend() uses the active tasks, the idle accelerators and the waiting tasks") {
    mmgp::advisor_options opt;
    opt.min_gain = 0.0;
    mmgp::advisor adv(node(), app(), opt);
    CHECK(adv.recommend().p == 10);  // no task registered yet: m = 1, all 16 idle
    adv.task_begin();
    adv.task_begin();
    CHECK(adv.recommend().m == 2);
    CHECK(adv.recommend().p == 8);
    adv.offload_start(8);  // the other task holds 8
    CHECK(adv.recommend().p == 8);
    adv.offload_start(2);  // 6 idle
    CHECK(adv.recommend().p == 6);
    adv.set_waiting_tasks(2);  // 6 idle shared by 3: at most 2
    CHECK(adv.recommend().p == 2);
    adv.set_waiting_tasks(0);
    adv.set_idle_apus(0);  // nothing idle: p = 1
    CHECK(adv.recommend().p == 1);
    adv.set_idle_apus(16);
    adv.task_end();
    CHECK(adv.recommend().m == 1);
    adv.set_active_tasks(4);
    CHECK(adv.recommend().p == 4);
}

namespace {

// A GPU node by hand (docs/MODEL.md §7): 16 host cores, 132 SMs of 8 block slots each, the reference kernel's
// curve f(k) (1.2 at 2 blocks per SM, 2.32 at 4, 4.47 at 8); a unit of 13.2 s of one-block work in 100 off-loads
// of 9 µs each, its host phases 0.01 s in all; a time slice's switch 50 µs.
mmgp::scenario gpu_node(const std::string& sharing) {
    return mmgp::parse_scenario(R"({"platform": {"hpu_contexts": 16, "apus": 132, "O_offload": 9e-6, "T_csw": 0,
        "alpha": 1.0, "sharing": )" + sharing +
                                    (sharing.find("time_sliced") != std::string::npos ? R"(, "T_slice_switch": 5e-5)" : "") +
                                    R"(, "apu_slots": 8,
        "slot_time": [[1, 1], [2, 1.2], [4, 2.32], [8, 4.47]]},
        "application": {"decomposition": "task", "units": 8, "N": 100, "T_hpu": 0.01, "T_apu": 13.2, "C_apu": 0, "g": 0}})",
                                "gpu.json");
}

}  // namespace

TEST_CASE("advisor: on a GPU node, p reaches the SMs' slots, under the sharing mode the node runs") {
    mmgp::advisor_options opt;
    opt.min_gain = 0.0;
    using mmgp::accelerator_sharing;
    {
        // MPS (the platform's first mode): p up to 1056/m blocks. One task: the curve's throughput grows to 8
        // blocks per SM, so 1056 blocks: 0.01 + 13.2 x 4.47 / 1056 + 100 x 9 µs.
        const mmgp::scenario s = gpu_node(R"(["mps", "time_sliced"])");
        mmgp::advisor adv(s, opt);
        CHECK(adv.sharing() == accelerator_sharing::mps);
        CHECK(adv.apus() == 132);
        CHECK(adv.capacity() == 1056);
        const mmgp::advice one = adv.recommend(1);
        CHECK(one.p == 1056);
        CHECK(one.time_s == doctest::Approx(0.01 + 13.2 * 4.47 / 1056 + 100 * 9e-6).epsilon(1e-12));
        // Eight tasks: 132 blocks each fill the slots; the SMs' busy time, 8 units at 1056 / 4.47 blocks' rate,
        // decides (0.447 s), where the 16 blocks the SMs alone allow take 0.01 + 13.2 / 16 + 100 x 9 µs.
        const mmgp::advice eight = adv.recommend(8);
        CHECK(eight.p == 132);
        CHECK(eight.time_s == doctest::Approx(8 * 13.2 * 4.47 / 1056).epsilon(1e-12));
        CHECK(eight.time_s < 0.01 + 13.2 / 16 + 100 * 9e-6);
        // Every answer is the evaluator's fastest p under MPS within m·p <= 1056.
        for (int m : {1, 2, 3, 8, 20}) {
            mmgp::scenario one_round = s;
            one_round.app.units = m;
            const mmgp::evaluator ev_m(one_round, mmgp::model_kind::mmgp);
            int best = 1;
            for (int p = 2; p <= 1056 / m; ++p)
                if (ev_m({m, p, 1, mmgp::policy::edtlp, accelerator_sharing::mps}).time_s <
                    ev_m({m, best, 1, mmgp::policy::edtlp, accelerator_sharing::mps}).time_s)
                    best = p;
            CAPTURE(m);
            CHECK(adv.recommend(m).p == best);
        }
        // Blocks in flight cap the next grid: 1000 of 1056 held leave 56.
        adv.offload_start(1000);
        CHECK(adv.recommend().p <= 56);
        CHECK(adv.recommend().p > 1);
    }
    {
        // The scenario's search.sharing chooses the mode, as for mmgp launch and mmgp tune.
        mmgp::scenario s = gpu_node(R"(["mps", "time_sliced"])");
        s.space.sharing = {accelerator_sharing::time_sliced};
        CHECK(mmgp::advisor(s, opt).sharing() == accelerator_sharing::time_sliced);
    }
    {
        // Time-sliced only (no MPS daemon): two tasks' grids take turns, each up to all 1056 blocks, and the
        // accelerator's busy time decides: 2 x (13.2 x 4.47 / 1056 + 100 x 50 µs). (The advisor once priced
        // dedicated accelerators within the SMs here: p = 66 at 0.01 + 13.2 / 66 + 100 x 9 µs, no switch.)
        const mmgp::scenario s = gpu_node(R"(["time_sliced"])");
        mmgp::advisor adv(s, opt);
        CHECK(adv.sharing() == accelerator_sharing::time_sliced);
        const mmgp::advice two = adv.recommend(2);
        CHECK(two.p == 1056);
        CHECK(two.time_s == doctest::Approx(2 * (13.2 * 4.47 / 1056 + 100 * 5e-5)).epsilon(1e-12));
        // Another task's grid in flight does not cap the next one's: they run one at a time.
        adv.set_active_tasks(2);
        adv.offload_start(1056);
        CHECK(adv.recommend().p == 1056);
    }
}

TEST_CASE("advisor: on a GPU node it learns from off-loads whose blocks fit the SMs, and says what the node is") {
    mmgp::advisor_options opt;
    opt.min_gain = 0.0;
    opt.refresh_every = 0;
    mmgp::advisor adv(gpu_node(R"(["mps", "time_sliced"])"), opt);
    const double apu_s = adv.estimates().apu_s;  // the profile's 0.132 s a unit's off-load on one block
    CHECK(apu_s == doctest::Approx(13.2 / 100).epsilon(1e-12));
    // 8 grids of 132 blocks in flight: the SMs' slots slowed each (4.47x), the last to end too, though it ended
    // alone: not learned from.
    for (int i = 0; i < 8; ++i) adv.offload_start(132);
    for (int i = 0; i < 8; ++i) adv.offload_end(132, 4.47 * 0.001 + 9e-6);
    adv.refresh();
    CHECK(adv.estimates().offloads == 8);
    CHECK(adv.estimates().apu_s == doctest::Approx(apu_s).epsilon(1e-12));
    // One grid alone, begun after the crowd (its 2 ms after the last crowded moment), twice as slow as the
    // profile: learned (one p: the split stays, the time doubles).
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    adv.offload_start(132);
    adv.offload_end(132, 2 * 0.001 + 9e-6);
    adv.refresh();
    CHECK(adv.estimates().apu_s == doctest::Approx(2 * apu_s).epsilon(1e-9));

    mmgp_advisor* c = nullptr;
    const std::string path = (std::filesystem::temp_directory_path() / ("mmgp-advisor-gpu-" + std::to_string(::getpid()) + ".json")).string();
    {
        std::ofstream f(path);
        f << R"({"platform": {"hpu_contexts": 16, "apus": 132, "O_offload": 9e-6, "T_csw": 0, "alpha": 1.0,
            "sharing": ["time_sliced"], "T_slice_switch": 5e-5, "apu_slots": 8, "slot_time": [[1, 1], [8, 4.47]]},
            "application": {"decomposition": "task", "units": 8, "N": 100, "T_hpu": 0.01, "T_apu": 13.2, "C_apu": 0, "g": 0}})";
    }
    REQUIRE(mmgp_advisor_create(path.c_str(), nullptr, &c, nullptr, 0) == MMGP_OK);
    std::filesystem::remove(path);
    mmgp_advisor_node node_of;
    REQUIRE(mmgp_advisor_get_node(c, &node_of) == MMGP_OK);
    CHECK(node_of.apus == 132);
    CHECK(node_of.capacity == 1056);
    CHECK(node_of.hpu_contexts == 16);
    CHECK(node_of.max_tasks == 132);
    CHECK(node_of.sharing == MMGP_SHARING_TIME_SLICED);
    mmgp_advisor_destroy(c);
}

TEST_CASE("advisor: one SM of 8 slots explores p = 1 against nothing past its durations; a table too large names the slots") {
    mmgp::advisor_options opt;
    opt.explore_every = 1;
    opt.refresh_every = 0;
    // A = 1: no p = 2 duration to compare against, so no exploration of it, whatever the slots allow.
    mmgp::scenario s = gpu_node(R"(["mps"])");
    s.plat.apus = 1;
    s.plat.hpu_contexts = 1;
    s.app.T_hpu = 1e5;  // host-bound: the table says p = 1 (p = 8 would save 0.006 %)
    mmgp::advisor adv(s, opt);
    for (int i = 0; i < 4; ++i) {
        adv.offload_start(1);
        adv.offload_end(1, 1e-3);
        const mmgp::advice a = adv.recommend();
        CHECK_FALSE(a.probe);
        CHECK(a.p == 1);
    }
    // 132 SMs of 1024 slots, time-sliced: 132 tasks x 135,168 blocks, past the table's 4 Mi answers.
    mmgp::scenario big = gpu_node(R"(["time_sliced"])");
    big.plat.apu_slots = 1024;
    CHECK_THROWS_WITH_AS(mmgp::advisor(big, opt), doctest::Contains("/platform/apu_slots: expected at most 4194304 answers"),
                         mmgp::input_error);
}

TEST_CASE("advisor: online re-estimation follows tasks whose length and parallel part drift") {
    mmgp::advisor_options opt;
    opt.min_gain = 0.0;
    opt.smoothing = 0.1;
    opt.refresh_every = 10;
    mmgp::advisor adv(node(), app(), opt);
    // Tasks become 4x longer on the accelerator (a = 0.04), observed at p = 1: duration a + g.
    for (int i = 0; i < 200; ++i) adv.offload_end(1, 0.04 + 1e-4);
    auto e = adv.estimates();
    CHECK(e.apu_s == doctest::Approx(0.04).epsilon(1e-6));
    CHECK(e.parallel_fraction == doctest::Approx(1.0));
    CHECK(e.offloads == 200);
    // The advice follows: p = sqrt(0.04 / 1e-4) = 20 is not allowed, so m = 1 takes all 16.
    CHECK(adv.recommend(1).p == 16);
    CHECK(adv.recommend(1).version > 1);
    // Host gaps grow to 5 ms.
    for (int i = 0; i < 200; ++i) adv.host_gap(5e-3);
    CHECK(adv.estimates().host_gap_s == doctest::Approx(5e-3).epsilon(1e-6));
    // Then the loops stop scaling: 4 accelerators take as long as one (0.04 s + 4 g).
    for (int i = 0; i < 400; ++i) adv.offload_end(4, 0.04 + 4e-4);
    e = adv.estimates();
    CHECK(e.parallel_fraction < 0.01);
    CHECK(adv.recommend(1).p == 1);
    CHECK(adv.recommend(1).action == mmgp::llp_action::throttle);
    // Offloads per task: 600 completions over 4 completed tasks.
    for (int i = 0; i < 4; ++i) adv.task_end();
    CHECK(adv.estimates().offloads_per_task == doctest::Approx(150.0));
    // Nonsense observations are ignored.
    adv.offload_end(0, 1.0);
    adv.offload_end(1, std::nan(""));
    adv.host_gap(-1.0);
    CHECK(adv.estimates().offloads == 600);
}

TEST_CASE("advisor: the bundled RAxML scenario activates loop-level parallelism only for few tasks") {
    // raxml-qs20 ([H] §4.6): per bootstrap T_hpu 0.55 s, T_apu 7.375 s (splittable), C_apu 9.8125 s,
    // A = 16, H = 4, alpha 1.28. Splitting T_apu always helps here (g = 0), so p = 16/m.
    mmgp::advisor adv(std::string("raxml-qs20"));
    CHECK(adv.apus() == 16);
    CHECK(adv.hpu_contexts() == 4);
    auto one = adv.recommend(1);
    CHECK(one.p == 16);
    // By hand, N = 1 (the profile's 0 means "one off-load per task"): O = 7e-8, T_csw = 2e-6.
    const double t1 = 0.55 + 7.375 + 9.8125 + 7e-8 + 2e-6, t16 = 0.55 + 7.375 / 16 + 9.8125 + 7e-8 + 2e-6;
    CHECK(one.gain == doctest::Approx((t1 - t16) / t1).epsilon(1e-9));
    CHECK(adv.recommend(16).p == 1);
}

TEST_CASE("advisor: concurrent observers and readers always see a consistent table") {
    mmgp::advisor_options opt;
    opt.min_gain = 0.0;
    opt.refresh_every = 4;
    mmgp::advisor adv(node(), app(), opt);
    std::atomic<bool> stop{false};
    std::atomic<long> bad{0}, reads{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; ++t)
        readers.emplace_back([&, t] {
            int m = 1 + t;
            while (!stop.load()) {
                auto a = adv.recommend(m);
                bool ok = a.p >= 1 && a.p <= 16 / a.m && a.gain >= 0 && a.gain < 1 && a.time_s <= a.time_p1_s &&
                          (a.p > 1 || a.time_s == a.time_p1_s);
                if (!ok) bad.fetch_add(1);
                reads.fetch_add(1);
                m = m % 16 + 1;
            }
        });
    std::vector<std::thread> writers;
    for (int t = 0; t < 3; ++t)
        writers.emplace_back([&, t] {
            for (int i = 0; i < 3000; ++i) {
                adv.offload_start(1 + t);
                adv.offload_end(1 + t, 0.01 * (1 + (i % 7)) / (1 + t) + 1e-4);
                adv.host_gap(1e-3 * (1 + i % 3));
            }
        });
    for (auto& w : writers) w.join();
    stop.store(true);
    for (auto& r : readers) r.join();
    CHECK(bad.load() == 0);
    CHECK(reads.load() > 0);
    CHECK(adv.estimates().offloads == 9000);
}

TEST_CASE("advisor: durations that grow with p are learned as a cost per extra accelerator; exploration finds it") {
    // The prior says the loops split (p = 10 for one task); in truth nothing splits and every extra
    // accelerator costs 2 ms: an off-load on p takes 0.01 + (p - 1) * 2e-3 s (+ the profile's p*g).
    auto run = [](int explore_every, int& probes, int& p1_late, int& probes_late) {
        mmgp::advisor_options opt;
        opt.min_gain = 0.0;
        opt.smoothing = 0.1;
        opt.refresh_every = 10;
        opt.explore_every = explore_every;
        auto adv = std::make_unique<mmgp::advisor>(node(), app(), opt);
        adv->set_active_tasks(1);
        probes = p1_late = probes_late = 0;
        for (int i = 0; i < 400; ++i) {
            adv->set_idle_apus(10);  // a runtime with 10 idle accelerators at every off-load
            mmgp::advice a = adv->recommend();
            probes += a.probe;
            if (i >= 300) p1_late += a.p == 1, probes_late += a.probe;
            adv->offload_start(a.p);
            adv->offload_end(a.p, 0.01 + (a.p - 1) * 2e-3 + a.p * 1e-4);
        }
        return adv;
    };
    int probes = 0, p1_late = 0, probes_late = 0;
    auto adv = run(0, probes, p1_late, probes_late);
    // Without exploration it only ever sees p = 10 and cannot tell: it keeps p = 10.
    CHECK(probes == 0);
    CHECK(p1_late == 0);
    CHECK(adv->recommend(1, 10).p == 10);
    CHECK(adv->estimates().extra_gap_s == 0.0);
    // With exploration it tries p = 1, learns the cost per extra accelerator, and switches to p = 1,
    // then keeps checking p = 2, less and less often while the answer stays (intervals 5, 10, 20, ...).
    adv = run(5, probes, p1_late, probes_late);
    CHECK(probes > 0);
    auto e = adv->estimates();
    CHECK(e.extra_gap_s == doctest::Approx(2e-3).epsilon(1e-6));
    CHECK(e.parallel_fraction == 0.0);
    CHECK(e.apu_s == doctest::Approx(0.01).epsilon(1e-6));
    CHECK(adv->recommend(1).p == 1);
    CHECK(adv->recommend(1).action == mmgp::llp_action::throttle);
    CHECK(p1_late >= 97);
    CHECK(probes_late >= 1);  // the interval is capped at 64 x 5: it still checks
    CHECK(probes_late <= 2);
    CHECK(probes <= 12);
}

TEST_CASE("advisor: options out of range are usage errors, the value as given; a scenario it cannot advise on is bad input") {
    mmgp::advisor_options opt;
    opt.smoothing = 0.0;
    CHECK_THROWS_AS(mmgp::advisor(node(), app(), opt), mmgp::usage_error);
    opt = {};
    opt.min_gain = 1.0000001;  // once shown as 1.000000
    CHECK_THROWS_WITH_AS(mmgp::advisor(node(), app(), opt),
                         "advisor options: /min_gain: expected a fraction in [0, 1), found 1.0000001", mmgp::usage_error);
    opt = {};
    opt.smoothing = -1e-9;  // once shown as -0.000000
    CHECK_THROWS_WITH_AS(mmgp::advisor(node(), app(), opt), doctest::Contains("found -1e-09"), mmgp::usage_error);
    opt = {};
    opt.explore_every = -1;
    CHECK_THROWS_AS(mmgp::advisor(node(), app(), opt), mmgp::usage_error);
    CHECK_THROWS_AS(mmgp::advisor(std::string("no-such-scenario")), mmgp::error);
    // A wavefront prices no off-load (once advice of p = 1 at 2.1e-6 s for every m).
    CHECK_THROWS_WITH_AS(mmgp::advisor(std::string("sweep3d-roadrunner")), doctest::Contains("/application/wavefront"),
                         mmgp::input_error);
}

TEST_CASE("advisor: calls out of step leave the counts in range and N as the tasks measured it") {
    mmgp::advisor_options opt;
    opt.min_gain = 0.0;
    mmgp::advisor adv(node(), app(), opt);
    const int p0 = adv.recommend().p;
    // An end with no start: the accelerators busy stay at 0 (once -INT_MAX, and 16 - busy overflowed).
    adv.offload_end(std::numeric_limits<int>::max(), 1e-3);
    CHECK(adv.recommend().p == p0);
    adv.offload_start(std::numeric_limits<int>::max());
    adv.offload_start(1);
    CHECK(adv.recommend().p == 1);  // every accelerator busy
    adv.offload_end(std::numeric_limits<int>::max(), 1e-3);
    adv.offload_end(1, 1e-3);
    adv.set_waiting_tasks(std::numeric_limits<int>::max());  // once waiting + 1 overflowed
    CHECK(adv.recommend().p == 1);
    adv.set_waiting_tasks(0);
    // A task end before any off-load says nothing of N (once N = 1, every prediction 20,000x off).
    mmgp::advisor qs(std::string("pbpi-qs20"));
    const double before = qs.recommend(1).time_s;
    qs.task_end();
    qs.refresh();
    CHECK(qs.recommend(1).time_s == doctest::Approx(before));
}

TEST_CASE("advisor C API: handles, status codes, versions, and the same answers as C++") {
    CHECK(mmgp_advisor_version() == MMGP_ADVISOR_VERSION);
    CHECK(MMGP_ADVISOR_VERSION == 300);
    CHECK(std::string(mmgp_advisor_status_string(MMGP_OK)) == "ok");
    CHECK(std::string(mmgp_advisor_status_string(MMGP_E_INVALID_ARGUMENT)) == "invalid argument");
    CHECK(std::string(mmgp_advisor_status_string(12345)) == "unknown status");
    CHECK(MMGP_LLP_THROTTLE == 0);
    CHECK(MMGP_LLP_ACTIVATE == 1);
    mmgp_advisor_destroy(nullptr);

    char err[256] = "x";
    mmgp_advisor* bad = reinterpret_cast<mmgp_advisor*>(0x1);
    CHECK(mmgp_advisor_create("no-such-scenario", nullptr, &bad, err, sizeof err) == MMGP_E_INPUT);
    CHECK(bad == nullptr);
    CHECK(std::string(err).find("no-such-scenario") != std::string::npos);
    char tiny[8];
    CHECK(mmgp_advisor_create("no-such-scenario", nullptr, &bad, tiny, sizeof tiny) == MMGP_E_INPUT);
    CHECK(std::string(tiny).size() == 7);
    CHECK(mmgp_advisor_create(nullptr, nullptr, &bad, err, sizeof err) == MMGP_E_INVALID_ARGUMENT);
    CHECK(mmgp_advisor_create("raxml-qs20", nullptr, nullptr, nullptr, 0) == MMGP_E_INVALID_ARGUMENT);
    mmgp_advisor_options o = mmgp_advisor_options_default();
    o.smoothing = 2.0;  // an option out of range: the header's MMGP_E_INVALID_ARGUMENT (once MMGP_E_INPUT)
    CHECK(mmgp_advisor_create("raxml-qs20", &o, &bad, err, sizeof err) == MMGP_E_INVALID_ARGUMENT);
    CHECK(std::string(err) == "advisor options: /smoothing: expected a weight in (0, 1], found 2");
    o = mmgp_advisor_options_default();
    o.model = 7;
    CHECK(mmgp_advisor_create("raxml-qs20", &o, &bad, err, sizeof err) == MMGP_E_INVALID_ARGUMENT);

    mmgp_advisor* adv = nullptr;
    REQUIRE(mmgp_advisor_create_from("qs20", "raxml", nullptr, &adv, err, sizeof err) == MMGP_OK);
    REQUIRE(adv != nullptr);
    mmgp::advisor cpp(mmgp::load_platform("qs20"), mmgp::load_application("raxml"));
    for (int m = 1; m <= 16; ++m) {
        mmgp_advice a;
        REQUIRE(mmgp_advisor_recommend_for(adv, m, 0, &a) == MMGP_OK);
        auto b = cpp.recommend(m);
        CHECK(a.p == b.p);
        CHECK(a.action == static_cast<int>(b.action));
        CHECK(a.gain == b.gain);
    }
    CHECK(mmgp_advisor_task_begin(adv) == MMGP_OK);
    CHECK(mmgp_advisor_offload_start(adv, 0) == MMGP_E_INVALID_ARGUMENT);
    CHECK(mmgp_advisor_offload_end(adv, 1, -1.0) == MMGP_E_INVALID_ARGUMENT);
    CHECK(mmgp_advisor_offload_end(adv, 1, 17.0) == MMGP_OK);
    CHECK(mmgp_advisor_host_gap(adv, std::nan("")) == MMGP_E_INVALID_ARGUMENT);
    CHECK(mmgp_advisor_set_idle_apus(adv, -1) == MMGP_E_INVALID_ARGUMENT);
    CHECK(mmgp_advisor_recommend(adv, nullptr) == MMGP_E_INVALID_ARGUMENT);
    CHECK(mmgp_advisor_recommend(nullptr, nullptr) == MMGP_E_INVALID_ARGUMENT);
    CHECK(mmgp_advisor_task_end(nullptr) == MMGP_E_INVALID_ARGUMENT);
    mmgp_advice now;
    CHECK(mmgp_advisor_recommend(adv, &now) == MMGP_OK);
    CHECK(now.m == 1);
    CHECK(mmgp_advisor_refresh(adv) == MMGP_OK);
    mmgp_advisor_estimates est;
    CHECK(mmgp_advisor_get_estimates(adv, &est) == MMGP_OK);
    CHECK(est.offloads == 1);
    mmgp_advisor_node node_of;
    CHECK(mmgp_advisor_get_node(adv, nullptr) == MMGP_E_INVALID_ARGUMENT);
    CHECK(mmgp_advisor_get_node(nullptr, &node_of) == MMGP_E_INVALID_ARGUMENT);
    REQUIRE(mmgp_advisor_get_node(adv, &node_of) == MMGP_OK);
    // The bundled QS20: 16 SPEs, dedicated.
    CHECK(node_of.apus == 16);
    CHECK(node_of.capacity == 16);
    CHECK(node_of.sharing == MMGP_SHARING_DEDICATED);
    mmgp_advisor_destroy(adv);
}

TEST_CASE("advisor C API: every option reaches the C++ advisor, and explorations are marked as in C++") {
    const mmgp_advisor_options d = mmgp_advisor_options_default();
    const mmgp::advisor_options cpp_defaults;
    CHECK(d.model == MMGP_MODEL_MMGP);
    CHECK(d.smoothing == cpp_defaults.smoothing);
    CHECK(d.min_gain == cpp_defaults.min_gain);
    CHECK(d.refresh_every == cpp_defaults.refresh_every);
    CHECK(d.explore_every == cpp_defaults.explore_every);
    char err[256];
    mmgp_advisor* bad = nullptr;
    mmgp_advisor_options o = d;
    o.explore_every = -1;
    CHECK(mmgp_advisor_create("raxml-qs20", &o, &bad, err, sizeof err) == MMGP_E_INVALID_ARGUMENT);
    CHECK(std::string(err).find("explore_every") != std::string::npos);

    // Every option away from its default. raxml-qs20's best saving (about 0.39, m = 1) is below min_gain 0.5,
    // so the table answers p = 1 and exploration tries p = 2 now and then.
    o = d;
    mmgp::advisor_options co;
    o.model = MMGP_MODEL_EQ11;
    co.model = mmgp::model_kind::eq11;
    o.smoothing = co.smoothing = 0.3;
    o.min_gain = co.min_gain = 0.5;
    o.refresh_every = co.refresh_every = 3;
    o.explore_every = co.explore_every = 4;
    mmgp_advisor* adv = nullptr;
    REQUIRE(mmgp_advisor_create("raxml-qs20", &o, &adv, err, sizeof err) == MMGP_OK);
    mmgp::advisor cpp(std::string("raxml-qs20"), co);
    int probes = 0;
    for (int i = 0; i < 60; ++i) {
        mmgp_advice a;
        REQUIRE(mmgp_advisor_recommend(adv, &a) == MMGP_OK);
        const mmgp::advice b = cpp.recommend();
        CHECK(a.p == b.p);
        CHECK(a.probe == (b.probe ? 1 : 0));
        CHECK(a.gain == b.gain);
        CHECK(a.time_s == b.time_s);
        CHECK(a.time_p1_s == b.time_p1_s);
        CHECK(a.version == b.version);
        probes += a.probe;
        const double seconds = (7.375 / a.p + 9.8125) * (1.0 + 0.1 * (i % 3));
        CHECK(mmgp_advisor_offload_end(adv, a.p, seconds) == MMGP_OK);
        cpp.offload_end(b.p, seconds);
    }
    CHECK(probes >= 1);
    CHECK(cpp.recommend().version > 10);  // refreshed every 3 off-loads
    // The models agree for one task (m = 1 above) and differ for more.
    for (int m = 2; m <= 16; ++m) {
        mmgp_advice a;
        REQUIRE(mmgp_advisor_recommend_for(adv, m, 0, &a) == MMGP_OK);
        CHECK(a.time_s == cpp.recommend(m).time_s);
    }
    mmgp_advisor_estimates e;
    REQUIRE(mmgp_advisor_get_estimates(adv, &e) == MMGP_OK);
    CHECK(e.apu_s == cpp.estimates().apu_s);
    CHECK(e.parallel_fraction == cpp.estimates().parallel_fraction);
    mmgp_advisor_destroy(adv);
}

TEST_CASE("packaging: meson install --destdir, then C and C++ programs build with pkg-config mmgp and run" *
          doctest::skip(mmgp::test::sanitized || !mmgp::test::on_path("make") || !mmgp::test::on_path("cc") ||
                        !mmgp::test::on_path("pkg-config") || std::getenv("MMGP_BIN") == nullptr) *
          doctest::description("needs make, cc, pkg-config, MMGP_BIN (meson test) and a build without sanitizers")) {
    const char* bin = std::getenv("MMGP_BIN");
    REQUIRE(bin != nullptr);
    const std::string build = std::filesystem::path(bin).parent_path().parent_path().string();
    mmgp::test::temp_dir d;
    const std::string out = (d.path / "out").string();
    const std::string cmd = std::string(MMGP_SOURCE_DIR) + "/examples/outside/check.sh " + build + " >" + out + " 2>&1";
    int rc = std::system(cmd.c_str());
    const std::string text = mmgp::test::slurp(out);
    INFO(text);
    REQUIRE(rc == 0);
    // The C program's first line: raxml-qs20 with one task splits across all 16 SPEs ([H] §4.6 numbers:
    // T_apu 7.375 s of 17.74 s per bootstrap splits; 16 APUs save 15/16 of it: gain ~ 0.390).
    CHECK(text.find("m=1 p=16 activate gain=0.390") != std::string::npos);
    CHECK(text.find("best m=4 p=4 nodes=1") != std::string::npos);  // [H] §4.4: PBPI optimum on the QS20
    CHECK(text.find("mpirun -np 4 --map-by ppr:4:node") != std::string::npos);
    CHECK(text.find("check.sh: built and ran") != std::string::npos);
}
