// Validation reports: [R] Table 1 from the paper's micro-parameters, and the ranking summary.
#include <doctest/doctest.h>

#include <cmath>

#include "mmgp/validate.hpp"
#include "support.hpp"

TEST_CASE("[R] Table 1 (EDTLP and Linux, 1-8 workers) from the paper's micro-parameters: mean <= 3 %, max <= 6 %") {
    auto rep = mmgp::run_validation(MMGP_SOURCE_DIR "/validation/paper/edtlp-table1.json", mmgp::model_kind::mmgp);
    REQUIRE(rep.cases.size() == 16);
    // The measured column values, typed in from the paper, in file order.
    const double edtlp[] = {28.46, 29.36, 32.54, 33.12, 37.27, 38.66, 41.87, 43.32};
    const double linux_[] = {28.42, 29.23, 56.95, 57.38, 85.88, 86.43, 114.92, 115.51};
    for (int i = 0; i < 8; ++i) {
        CHECK(rep.cases[i].measured_s == edtlp[i]);
        CHECK(rep.cases[i].c.pol == mmgp::policy::edtlp);
        CHECK(rep.cases[8 + i].measured_s == linux_[i]);
        CHECK(rep.cases[8 + i].c.pol == mmgp::policy::os);
    }
    // One prediction by hand: Linux, 3 workers: rounds {2, 1}, N = 28.46 s / 107 us off-loads per bootstrap.
    double N = 265981.3, T_hpu = 2.846, T_apu = 25.614;
    double hand = (1.28 + 1.0) * T_hpu + 2 * T_apu + 2 * N * 70e-9;
    CHECK(rep.cases[10].predicted_s == mmgp::test::approx(hand).epsilon(1e-12));
    MESSAGE("Table 1: mean |error| " << rep.mean_abs_err_pct << " %, max " << rep.max_abs_err_pct << " %");
    CHECK(rep.mean_abs_err_pct <= 3.0);
    CHECK(rep.max_abs_err_pct <= 6.0);
    double sum = 0;
    for (const auto& c : rep.cases) sum += std::fabs(100 * (c.predicted_s - c.measured_s) / c.measured_s);
    CHECK(rep.mean_abs_err_pct == mmgp::test::approx(sum / 16));
}

TEST_CASE("groups: predicted optimum against measured optimum, and the regret") {
    mmgp::test::temp_dir d;
    // raxml-qs20 predicts m=16 p=1 fastest (20.0 s), then m=8 p=2 (29.8 s), then m=4 p=4 (49.4 s).
    std::string f = d.write("v.json", R"({"schema": "mmgp/1", "kind": "validation", "name": "g", "scenario": "raxml-qs20",
      "cases": [
        {"group": "a", "m": 16, "p": 1, "measured_s": 31.0},
        {"group": "a", "m": 8, "p": 2, "measured_s": 30.0},
        {"group": "a", "m": 4, "p": 4, "measured_s": 50.0},
        {"group": "b", "m": 16, "p": 1, "measured_s": 20.0},
        {"group": "b", "m": 8, "p": 2, "measured_s": 29.0}]})");
    auto rep = mmgp::run_validation(f, mmgp::model_kind::mmgp);
    REQUIRE(rep.groups.size() == 2);
    CHECK(rep.groups[0].group == "a");
    CHECK_FALSE(rep.groups[0].optimal_hit);
    CHECK(rep.groups[0].regret_pct == mmgp::test::approx(100.0 * (31.0 - 30.0) / 30.0));
    CHECK(rep.groups[1].optimal_hit);
    CHECK(rep.groups[1].regret_pct == 0.0);
    CHECK_FALSE(rep.optimal_hit);
    CHECK(rep.regret_pct == mmgp::test::approx(100.0 / 30.0));
}

TEST_CASE("validation files: bad cases are named by JSON path") {
    mmgp::test::temp_dir d;
    auto err = [&](const std::string& text) -> std::string {
        std::string f = d.write("bad.json", text);
        try {
            mmgp::run_validation(f, mmgp::model_kind::mmgp);
        } catch (const mmgp::input_error& e) {
            return std::string(e.what()).substr(f.size());
        }
        return "(no error)";
    };
    CHECK(err(R"({"scenario": "raxml-qs20", "cases": [{"m": 1, "p": 1, "measured_s": -3}]})") ==
          ": /cases/0/measured_s: expected a finite number > 0 (seconds), found the number -3");
    CHECK(err(R"({"scenario": "raxml-qs20", "cases": [{"m": 8, "p": 4, "measured_s": 3}]})") ==
          ": /cases/0: expected a feasible configuration (m*p <= apus = 16, nodes <= 1), found m=8 p=4 nodes=1 edtlp");
    CHECK(err(R"({"cases": [{"m": 1, "p": 1, "measured_s": 3}]})") ==
          ": /cases/0/scenario: expected a scenario (path, bundled name or object), here or at /scenario, found nothing (the key is missing)");
    CHECK(err(R"({"scenario": "raxml-qs20", "cases": []})") == ": /cases: expected a non-empty array of cases, found an array of 0");
}

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
    CHECK(b.host + b.accelerator + b.offload + b.context_switch + b.communication ==
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

TEST_CASE("censored cases and the fitted / held-back split") {
    mmgp::test::temp_dir d;
    // raxml-qs20 predicts m=16 p=1 20.0 s, m=8 p=2 29.8 s, m=4 p=4 49.4 s, m=2 p=8 ~ 89 s.
    std::string f = d.write("v.json", R"({"schema": "mmgp/1", "kind": "validation", "name": "c", "scenario": "raxml-qs20", "group": "g",
      "cases": [
        {"m": 16, "p": 1, "measured_s": 20.0, "role": "fitted", "runs": [19.5, 20.0, 20.5]},
        {"m": 8, "p": 2, "measured_s": 33.0, "role": "held_back"},
        {"m": 4, "p": 4, "measured_s": 45.0, "censored": true, "role": "held_back"},
        {"m": 2, "p": 8, "measured_s": 1000.0, "censored": true, "role": "held_back"}]})");
    auto rep = mmgp::run_validation(f, mmgp::model_kind::mmgp);
    REQUIRE(rep.cases.size() == 4);
    CHECK(rep.cases[0].runs.size() == 3);
    CHECK(rep.censored == 2);
    CHECK(rep.uncensored == 2);
    CHECK(rep.censored_right == 1);                  // 49.4 >= 45 right; ~89 < 1000 wrong
    CHECK(rep.cases[2].err_pct == 0.0);
    CHECK(rep.cases[3].err_pct < -80.0);
    CHECK(rep.censored_ranked_last);                 // both predicted slower than 20.0 and 29.8
    CHECK(rep.fitted.cases == 1);
    CHECK(rep.held_back.cases == 1);                 // censored cases have no |error|
    CHECK(rep.held_back.mean_abs_err_pct == mmgp::test::approx(std::fabs(rep.cases[1].err_pct)));
    CHECK(rep.mean_abs_err_pct == mmgp::test::approx((std::fabs(rep.cases[0].err_pct) + std::fabs(rep.cases[1].err_pct)) / 2));
    REQUIRE(rep.groups.size() == 1);
    CHECK(rep.groups[0].optimal_hit);
    CHECK(rep.groups[0].censored == 2);
    CHECK(rep.groups[0].errors.cases == 2);
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
