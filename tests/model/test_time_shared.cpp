// The time-shared model (libmmgp/src/model/time_shared.cpp, docs/MODEL.md §4): processor sharing over rounds of
// units, the edtlp switch's T_wake / T_csw / T_wake_busy, spin convoys, the program's own off-load overhead and
// the processes' start-up.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "mmgp/search.hpp"
#include "mmgp/validate.hpp"
#include "support.hpp"

TEST_CASE("time-shared cores: processor sharing over rounds of units, per policy") {
    // 2 cores shared by every thread; one unit alone takes T1 = T_hpu + T_apu/p + C_apu + N*(O + (p-1)g) (+ N*T_csw edtlp).
    auto scen = [](const std::string& extra) {
        return mmgp::parse_scenario(R"({"platform": {"hpu_contexts": 2, "apus": 8, "cores": 2, "O_offload": 1e-6, "T_csw": 2e-6, "alpha": 1.0},
          "application": {"decomposition": "task", "units": 16, "N": 100, "T_hpu": 0.01, "T_apu": 1.0, "C_apu": 0.05,
                          "g": 1e-4, "g_charge": "per_extra_apu")" + extra + R"(},
          "search": {"m": [1, 8], "p": [1, 8]}})", "ts.json");
    };
    auto s = scen("");
    mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
    auto T1 = [](int p, bool edtlp) { return 0.01 + 1.0 / p + 0.05 + 100 * (1e-6 + (p - 1) * 1e-4) + (edtlp ? 100 * 2e-6 : 0.0); };
    using mmgp::policy;
    CHECK(ev({1, 1, 1, policy::edtlp}).time_s == mmgp::test::approx(16 * T1(1, true)));
    CHECK(ev({2, 1, 1, policy::edtlp}).time_s == mmgp::test::approx(8 * T1(1, true)));        // 2 threads on 2 cores
    CHECK(ev({4, 1, 1, policy::edtlp}).time_s == mmgp::test::approx(4 * 2 * T1(1, true)));    // 4 threads: stretched x2
    CHECK(ev({1, 2, 1, policy::edtlp}).time_s == mmgp::test::approx(16 * T1(2, true)));       // HPU blocks: 2 threads
    CHECK(ev({1, 2, 1, policy::os}).time_s == mmgp::test::approx(16 * 1.5 * T1(2, false)));   // HPU spins: 3 threads
    CHECK(ev({1, 1, 1, policy::os}).time_s == mmgp::test::approx(16 * T1(1, false)));
    CHECK(ev({3, 1, 1, policy::edtlp}).time_s == mmgp::test::approx((5 * 1.5 + 1) * T1(1, true)));  // 16 = 5 rounds of 3 + 1
    auto b = ev({4, 2, 1, policy::edtlp}).parts;
    CHECK(b.host + b.accelerator + b.offload + b.context_switch + b.communication + b.spin + b.startup ==
          mmgp::test::approx(ev({4, 2, 1, policy::edtlp}).time_s));
    // [H] Eq. 11's charge p*g.
    auto s2 = mmgp::parse_scenario(R"({"platform": {"hpu_contexts": 2, "apus": 8, "cores": 2, "O_offload": 1e-6, "T_csw": 2e-6, "alpha": 1.0},
          "application": {"decomposition": "task", "units": 16, "N": 100, "T_hpu": 0.01, "T_apu": 1.0, "C_apu": 0.05, "g": 1e-4},
          "search": {"m": [1, 8], "p": [1, 8]}})", "ts2.json");
    mmgp::evaluator ev2(s2, mmgp::model_kind::mmgp);
    CHECK(ev2({1, 1, 1, policy::edtlp}).time_s == mmgp::test::approx(16 * (T1(1, true) + 100 * 1e-4)));
    // Without `cores` nothing changes: the dedicated-hardware model (Eq. 11 reduction is tested in test_model).
    CHECK_THROWS_AS(mmgp::parse_scenario(R"({"platform": {"hpu_contexts": 2, "apus": 8, "cores": 0, "O_offload": 1e-6, "T_csw": 2e-6, "alpha": 1.0},
          "application": "pbpi"})", "bad.json"), mmgp::input_error);
    CHECK_THROWS_AS(mmgp::parse_scenario(R"({"platform": "qs20", "application": {"N": 1, "T_hpu": 1, "T_apu": 1, "C_apu": 0, "g": 0, "g_charge": "per_byte"}})",
                                         "bad.json"), mmgp::input_error);
}

TEST_CASE("time-shared cores: an edtlp switch costs T_wake while a core is idle, T_csw when none is") {
    auto s = mmgp::parse_scenario(R"({"platform": {"hpu_contexts": 2, "apus": 8, "cores": 2, "O_offload": 0, "T_csw": 1e-6, "T_wake": 3e-5, "alpha": 1.0},
          "application": {"decomposition": "task", "units": 5, "N": 100, "T_hpu": 0, "T_apu": 0.01, "C_apu": 0, "g": 0, "g_charge": "per_extra_apu"},
          "search": {"m": [1, 8], "p": [1, 8]}})", "tw.json");
    mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
    using mmgp::policy;
    // m = 1: one runnable thread, a core idle: 5 units x (T_apu + N T_wake).
    CHECK(ev({1, 1, 1, policy::edtlp}).time_s == mmgp::test::approx(5 * (0.01 + 100 * 3e-5)));
    // m = 2: two rounds with both cores busy (T_csw), the fifth unit alone (T_wake).
    CHECK(ev({2, 1, 1, policy::edtlp}).time_s == mmgp::test::approx(2 * (0.01 + 100 * 1e-6) + (0.01 + 100 * 3e-5)));
    // os never switches on an off-load.
    CHECK(ev({1, 1, 1, policy::os}).time_s == mmgp::test::approx(5 * 0.01));
    CHECK_THROWS_AS(mmgp::parse_scenario(R"({"platform": {"hpu_contexts": 2, "apus": 8, "O_offload": 0, "T_csw": 1e-6, "T_wake": 3e-5, "alpha": 1.0},
          "application": "pbpi"})", "bad.json"), mmgp::input_error);
}

TEST_CASE("time-shared cores: spin convoys when the team of an off-load cannot all run") {
    // 2 cores, 100 off-loads per unit, T_apu 10 ms, no other costs; spin budget 4000 x 10 ns + T_csw 1 us = 41 us.
    auto make = [](const std::string& spin_limit, const std::string& extra_platform = "") {
        return mmgp::parse_scenario(
            R"({"platform": {"hpu_contexts": 2, "apus": 16, "cores": 2, "O_offload": 0, "T_csw": 1e-6, "spin_pause": 1e-8,
                 "sched_slice": 3e-3, "alpha": 1.0)" + extra_platform + R"(},
              "application": {"decomposition": "task", "units": 4, "N": 100, "T_hpu": 0, "T_apu": 0.01, "C_apu": 0, "g": 0,
                              "g_charge": "per_extra_apu")" + spin_limit + R"(},
              "search": {"m": [1, 8], "p": [1, 8]}})",
            "spin.json");
    };
    using mmgp::policy;
    const double b = 4000 * 1e-8 + 1e-6;
    auto s = make(R"(, "spin_limit": 4000)");
    mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
    // Not oversubscribed: m = 1, p = 2 under edtlp (2 threads on 2 cores) has no convoy; but the lone team
    // exactly fills the cores, so each off-load's hand-back pays an idle-core wake-up (T_wake; T_csw here).
    CHECK(ev({1, 2, 1, policy::edtlp}).parts.spin == mmgp::test::approx(4 * 100 * 1e-6));
    CHECK(ev({2, 2, 1, policy::edtlp}).parts.spin == mmgp::test::approx(2 * 100 * (5.0 / 6.0) * b * 2.0));  // not alone
    // A team of one (p = 1 under edtlp) never waits for a partner, however many processes.
    CHECK(ev({4, 1, 1, policy::edtlp}).parts.spin == 0.0);
    // m = 1, p = 3: n = 3 > 2 cores, a team of 3 never runs at once (P = 0): every off-load of the 4 units
    // costs b stretched by 3/2; and, the process being alone with p > cores, the hand-back to its blocked
    // HPU thread waits for one spinner's budget b, unstretched.
    CHECK(ev({1, 3, 1, policy::edtlp}).parts.spin == mmgp::test::approx(4 * 100 * b * (1.5 + 1.0)));
    // No hand-back when another process is active (m = 2: 2 rounds of 2 units, n = 6, P = 0) ...
    CHECK(ev({2, 3, 1, policy::edtlp}).parts.spin == mmgp::test::approx(2 * 100 * b * 3.0));
    // ... but in a last round with one process left (m = 3 on 4 units: a round of 3, then 1 alone).
    CHECK(ev({3, 3, 1, policy::edtlp}).parts.spin == mmgp::test::approx(100 * b * 4.5 + 100 * b * (1.5 + 1.0)));
    // ... nor under os, whose HPU thread spins instead of blocking (team 4, n = 4 > 2, P = 0, 2 waits).
    CHECK(ev({1, 3, 1, policy::os}).parts.spin == mmgp::test::approx(4 * 100 * 2 * b * 2.0));
    // m = 2, p = 2: n = 4, team 2, P(both on the 2 cores) = (2/4)(1/3) = 1/6; 2 rounds of 2 units.
    CHECK(ev({2, 2, 1, policy::edtlp}).parts.spin == mmgp::test::approx(2 * 100 * (5.0 / 6.0) * b * 2.0));
    // os: the spinning HPU is in the team: m = 1, p = 1 is n = 2 (no convoy), m = 2, p = 1 is n = 4, team 2.
    CHECK(ev({1, 1, 1, policy::os}).parts.spin == 0.0);
    CHECK(ev({2, 1, 1, policy::os}).parts.spin == mmgp::test::approx(2 * 100 * (5.0 / 6.0) * b * 2.0));
    // The convoy is part of the time.
    const auto pr = ev({1, 3, 1, policy::edtlp});
    CHECK(pr.time_s == mmgp::test::approx(pr.parts.host + pr.parts.accelerator + pr.parts.offload + pr.parts.context_switch +
                                          pr.parts.communication + pr.parts.spin + pr.parts.startup));
    // A waiter that never blocks spins until the scheduler's slice ends.
    const auto s_unb = make(R"(, "spin_limit": "unbounded")");  // the evaluator keeps a reference
    mmgp::evaluator unb(s_unb, mmgp::model_kind::mmgp);
    CHECK(unb({1, 3, 1, policy::edtlp}).parts.spin == mmgp::test::approx(4 * 100 * (3e-3 + 1e-6) * 1.5));
    // A never-blocking team that fits in the cores progresses only while co-scheduled: m = 2, p = 2 has
    // n = 4, P(both threads of a process on the 2 cores) = 1/6, so its 2 rounds take 6x, not 2x; no per-sync term.
    const auto g22 = unb({2, 2, 1, policy::edtlp});
    CHECK(g22.parts.spin == 0.0);
    CHECK(g22.parts.accelerator == mmgp::test::approx(2 * 6 * 0.01 / 2));
    CHECK(ev({2, 2, 1, policy::edtlp}).parts.accelerator == mmgp::test::approx(2 * 2 * 0.01 / 2));  // bounded: sharing
    // A spin limit beyond the slice is cut by the slice.
    const auto s_big = make(R"(, "spin_limit": 1000000000)");
    mmgp::evaluator big(s_big, mmgp::model_kind::mmgp);
    CHECK(big({1, 3, 1, policy::edtlp}).parts.spin == mmgp::test::approx(4 * 100 * (3e-3 + 1e-6) * (1.5 + 1.0)));
    // No spin_limit (blocks at once, the default): no convoy term at all.
    const auto s_none = make("");
    mmgp::evaluator none(s_none, mmgp::model_kind::mmgp);
    CHECK(none({2, 4, 1, policy::os}).parts.spin == 0.0);
    // Bad input: a negative or fractional limit, a word other than "unbounded", spin_pause without cores.
    CHECK_THROWS_AS(make(R"(, "spin_limit": -5)"), mmgp::input_error);
    CHECK_THROWS_AS(make(R"(, "spin_limit": 1.5)"), mmgp::input_error);
    CHECK_THROWS_AS(make(R"(, "spin_limit": "forever")"), mmgp::input_error);
    CHECK_THROWS_AS(mmgp::parse_scenario(R"({"platform": {"hpu_contexts": 2, "apus": 8, "O_offload": 0, "T_csw": 1e-6, "spin_pause": 1e-8, "alpha": 1.0},
          "application": "pbpi"})", "bad.json"), mmgp::input_error);
}

TEST_CASE("time-shared cores: the edtlp switch costs T_wake, T_csw or T_wake_busy by how full the cores are") {
    // 2 cores, 12 units of 100 off-loads, T_wake 40 us, T_csw 1 us, T_wake_busy 20 us; no spinning (no spin_limit).
    auto s = mmgp::parse_scenario(
        R"({"platform": {"hpu_contexts": 2, "apus": 16, "cores": 2, "O_offload": 0, "T_csw": 1e-6, "T_wake": 4e-5,
                         "T_wake_busy": 2e-5, "alpha": 1.0},
            "application": {"decomposition": "task", "units": 12, "N": 100, "T_hpu": 0, "T_apu": 0.01, "C_apu": 0,
                            "g": 0, "g_charge": "per_extra_apu"},
            "search": {"m": [1, 8], "p": [1, 8]}})",
        "wake.json");
    mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
    using mmgp::policy;
    // m = 1: one thread, a core idle: T_wake, 12 rounds of stretch 1.
    CHECK(ev({1, 1, 1, policy::edtlp}).parts.context_switch == mmgp::test::approx(12 * 100 * 4e-5));
    // m = 2: the cores exactly full: T_csw, 6 rounds of stretch 1.
    CHECK(ev({2, 1, 1, policy::edtlp}).parts.context_switch == mmgp::test::approx(6 * 100 * 1e-6));
    // m = 4: oversubscribed with p = 1: T_wake_busy, 3 rounds of stretch 2.
    CHECK(ev({4, 1, 1, policy::edtlp}).parts.context_switch == mmgp::test::approx(3 * 2 * 100 * 2e-5));
    // m = 3, p = 2: oversubscribed with p > 1: T_csw (the convoy charges the off-load's scheduling); 4 rounds, stretch 3.
    CHECK(ev({3, 2, 1, policy::edtlp}).parts.context_switch == mmgp::test::approx(4 * 3 * 100 * 1e-6));
    // os never switches on an off-load.
    CHECK(ev({4, 1, 1, policy::os}).parts.context_switch == 0.0);
    // Without T_wake_busy, oversubscribed p = 1 falls back to T_csw.
    auto s2 = mmgp::parse_scenario(
        R"({"platform": {"hpu_contexts": 2, "apus": 16, "cores": 2, "O_offload": 0, "T_csw": 1e-6, "alpha": 1.0},
            "application": {"decomposition": "task", "units": 12, "N": 100, "T_hpu": 0, "T_apu": 0.01, "C_apu": 0, "g": 0},
            "search": {"m": [1, 8], "p": [1, 8]}})",
        "wake2.json");
    mmgp::evaluator ev2(s2, mmgp::model_kind::mmgp);
    CHECK(ev2({4, 1, 1, policy::edtlp}).parts.context_switch == mmgp::test::approx(3 * 2 * 100 * 1e-6));
    // Bad input, one exact line each: negative, not a number, or without cores.
    const std::pair<const char*, const char*> bad[] = {
        {R"("T_wake_busy": -1e-6, "cores": 2)",
         "bad.json: /platform/T_wake_busy: expected a finite number >= 0 (seconds), found the number -1e-06"},
        {R"("T_wake_busy": "fast", "cores": 2)",
         "bad.json: /platform/T_wake_busy: expected a finite number >= 0 (seconds), found the string \"fast\""},
        {R"("T_wake_busy": 1e-6)", "bad.json: /platform/T_wake_busy: expected T_wake_busy only with \"cores\" "
                                   "(time-shared cores), found T_wake_busy without cores"}};
    for (const auto& [text, message] : bad) {
        std::string what = "(no error)";
        try {
            mmgp::parse_scenario(std::string(R"({"platform": {"hpu_contexts": 2, "apus": 8, "O_offload": 0, "T_csw": 1e-6, "alpha": 1.0, )") +
                                     text + R"(}, "application": "pbpi"})",
                                 "bad.json");
        } catch (const mmgp::input_error& e) {
            what = e.what();
        }
        CHECK(what == message);
    }
}

TEST_CASE("time-shared cores: the program's own T_offload_idle replaces the platform's T_wake") {
    // The platform: O_offload 0.5 us, T_wake 40 us; the program measured 30.5 us per off-load (round trip minus
    // APU time) in its sequential run, so its idle-core wake-up is 30 us.
    auto make = [](const std::string& extra) {
        return mmgp::parse_scenario(
            R"({"platform": {"hpu_contexts": 2, "apus": 16, "cores": 2, "O_offload": 5e-7, "T_csw": 1e-6, "T_wake": 4e-5,
                             "alpha": 1.0},
                "application": {"decomposition": "task", "units": 12, "N": 100, "T_hpu": 0, "T_apu": 0.01, "C_apu": 0,
                                "g": 0)" + extra + R"(},
                "search": {"m": [1, 8], "p": [1, 8]}})",
            "idle.json");
    };
    using mmgp::policy;
    const auto s_own = make(R"(, "T_offload_idle": 3.05e-5)");
    const auto s_plat = make("");
    mmgp::evaluator own(s_own, mmgp::model_kind::mmgp), plat(s_plat, mmgp::model_kind::mmgp);
    // m = 1, p = 1: a core idle, 12 rounds: the program's wake-up, not the platform's.
    CHECK(own({1, 1, 1, policy::edtlp}).parts.context_switch == mmgp::test::approx(12 * 100 * 3e-5));
    CHECK(plat({1, 1, 1, policy::edtlp}).parts.context_switch == mmgp::test::approx(12 * 100 * 4e-5));
    // Not silently: the evaluator (and predict, through search_result::notes) says which value it used.
    REQUIRE(own.notes().size() == 1);
    CHECK(own.notes()[0] == "the idle-core wake-up T_wake is the application's T_offload_idle - O_offload = 3e-05 s "
                            "(the platform's T_wake 4e-05 s is not used)");
    CHECK(plat.notes().empty());
    CHECK(mmgp::search(s_own, mmgp::model_kind::mmgp, {false}).notes == own.notes());
    // m = 2: the cores exactly full: T_csw either way (the key only replaces the idle-core wake-up).
    CHECK(own({2, 1, 1, policy::edtlp}).parts.context_switch == mmgp::test::approx(6 * 100 * 1e-6));
    // A measurement below O_offload (noise) gives no negative wake-up.
    const auto s_low = make(R"(, "T_offload_idle": 1e-7)");
    mmgp::evaluator low(s_low, mmgp::model_kind::mmgp);
    CHECK(low({1, 1, 1, policy::edtlp}).parts.context_switch == 0.0);
    // Bad input: one exact line.
    std::string what = "(no error)";
    try {
        make(R"(, "T_offload_idle": -3e-5)");
    } catch (const mmgp::input_error& e) {
        what = e.what();
    }
    CHECK(what == "idle.json: /application/T_offload_idle: expected a finite number >= 0 (seconds per off-load), found "
                  "the number -3e-05");
}

TEST_CASE("process start-up T_start is paid once per process, not per unit") {
    auto s = mmgp::parse_scenario(R"({"platform": {"hpu_contexts": 2, "apus": 8, "cores": 2, "O_offload": 0, "T_csw": 0, "alpha": 1.0},
          "application": {"decomposition": "task", "units": 6, "N": 1, "T_hpu": 0, "T_apu": 0.01, "C_apu": 0, "g": 0, "T_start": 0.1},
          "search": {"m": [1, 8], "p": [1, 8]}})", "ts.json");
    mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
    using mmgp::policy;
    CHECK(ev({1, 1, 1, policy::edtlp}).time_s == mmgp::test::approx(0.1 + 6 * 0.01));
    // 4 processes start at once on 2 cores: start-up stretched by 2.
    CHECK(ev({4, 1, 1, policy::edtlp}).parts.startup == mmgp::test::approx(0.2));
    // Dedicated hardware (no cores): processes sharing a host context start one after another.
    auto d = mmgp::parse_scenario(R"({"platform": {"hpu_contexts": 2, "apus": 8, "O_offload": 0, "T_csw": 0, "alpha": 1.0},
          "application": {"decomposition": "task", "units": 6, "N": 1, "T_hpu": 0, "T_apu": 0.01, "C_apu": 0, "g": 0, "T_start": 0.1},
          "search": {"m": [1, 8], "p": [1, 1]}})", "ts2.json");
    mmgp::evaluator ed(d, mmgp::model_kind::mmgp);
    CHECK(ed({3, 1, 1, policy::edtlp}).parts.startup == mmgp::test::approx(0.2));
    CHECK_THROWS_AS(mmgp::parse_scenario(R"({"platform": "qs20", "application": {"N": 1, "T_hpu": 1, "T_apu": 1, "C_apu": 0, "g": 0, "T_start": -1}})", "neg.json"),
                    mmgp::input_error);
}

TEST_CASE("time-shared cores: the start-up's off-loads (N_start) pay the first round's switch and convoy") {
    // 2 cores, threads that never block (RAxML): a team larger than the cores waits a slice (3 ms) + T_csw at
    // every synchronisation, stretched by n / cores.
    auto s = mmgp::parse_scenario(
        R"({"platform": {"hpu_contexts": 2, "apus": 16, "cores": 2, "O_offload": 0, "T_csw": 1e-6, "spin_pause": 1e-8,
             "sched_slice": 3e-3, "alpha": 1.0},
          "application": {"decomposition": "task", "units": 4, "N": 100, "T_hpu": 0, "T_apu": 0.01, "C_apu": 0, "g": 0,
                          "spin_limit": "unbounded", "T_start": 0.1, "N_start": 50},
          "search": {"m": [1, 8], "p": [1, 8]}})",
        "nstart.json");
    mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
    using mmgp::policy;
    // m = 1, p = 3: n = 3 on 2 cores (stretch 1.5), each of the 50 pays a hand-off T_csw (stretched) and a convoy
    // (one slice + T_csw, stretched).
    CHECK(ev({1, 3, 1, policy::edtlp}).parts.startup == mmgp::test::approx(0.1 + 50 * (1.5 * 1e-6 + 1.5 * (3e-3 + 1e-6))));
    // m = 1, p = 2 fits the cores: the 50 hand-offs only.
    CHECK(ev({1, 2, 1, policy::edtlp}).parts.startup == mmgp::test::approx(0.1 + 50 * 1e-6));
    // Dedicated hardware (no time-sharing): their time is in T_start, nothing added, also with processes
    // sharing a host context (m = 3 on 2 contexts: two start-ups one after the other) and switches that cost.
    auto d = mmgp::parse_scenario(R"({"platform": {"hpu_contexts": 2, "apus": 8, "O_offload": 0, "T_csw": 1e-3, "alpha": 1.0},
          "application": {"decomposition": "task", "units": 6, "N": 1, "T_hpu": 0, "T_apu": 0.01, "C_apu": 0, "g": 0,
                          "T_start": 0.1, "N_start": 50},
          "search": {"m": [1, 8], "p": [1, 1]}})", "nstart2.json");
    mmgp::evaluator ed(d, mmgp::model_kind::mmgp);
    CHECK(ed({3, 1, 1, policy::edtlp}).parts.startup == mmgp::test::approx(0.2));
    try {
        mmgp::parse_scenario(R"({"platform": "qs20", "application": {"N": 1, "T_hpu": 1, "T_apu": 1, "C_apu": 0, "g": 0, "N_start": -1}})",
                             "neg.json");
        FAIL("a negative N_start was accepted");
    } catch (const mmgp::input_error& e) {
        CHECK(std::string(e.what()) ==
              "neg.json: /application/N_start: expected a finite number >= 0 (off-loads of the start-up, per process), found the number -1");
    }
}
