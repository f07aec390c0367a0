// Validation reports: [R] Table 1 from the paper's micro-parameters, and the ranking summary.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "mmgp/search.hpp"
#include "mmgp/statistics.hpp"
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
        CHECK(rep.cases[i].c().pol == mmgp::policy::edtlp);
        CHECK(rep.cases[8 + i].measured_s == linux_[i]);
        CHECK(rep.cases[8 + i].c().pol == mmgp::policy::os);
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

TEST_CASE("a case that states no policy is predicted under its scenario's search.policy") {
    mmgp::test::temp_dir d;
    d.write("os.json", R"({"schema": "mmgp/1", "kind": "scenario", "platform": "qs20", "application": "raxml",
      "search": {"policy": "os"}})");
    const std::string f = d.write("v.json", R"({"schema": "mmgp/1", "kind": "validation", "scenario": "os.json", "cases": [
        {"m": 16, "p": 1, "measured_s": 50, "label": "none"},
        {"m": 16, "p": 1, "policy": "os", "measured_s": 50, "label": "os"},
        {"m": 16, "p": 1, "policy": "edtlp", "measured_s": 50, "label": "edtlp"}]})");
    const auto rep = mmgp::run_validation(f, mmgp::model_kind::mmgp);
    REQUIRE(rep.cases.size() == 3);
    // Under os 16 processes share the 2 PPE contexts and are time-shared: slower than edtlp's (once the unstated
    // case was predicted as edtlp, whatever its scenario said).
    REQUIRE(rep.cases[1].predicted_s > 1.5 * rep.cases[2].predicted_s);
    CHECK(rep.cases[0].c().pol == mmgp::policy::os);
    CHECK(rep.cases[0].predicted_s == rep.cases[1].predicted_s);
    // --set search.policy reaches the unstated case, not the stated ones.
    mmgp::scenario_edits edits;
    edits.search = R"({"policy": "edtlp"})";
    const auto back = mmgp::run_validation(f, mmgp::model_kind::mmgp, edits);
    CHECK(back.cases[0].c().pol == mmgp::policy::edtlp);
    CHECK(back.cases[0].predicted_s == rep.cases[2].predicted_s);
    CHECK(back.cases[1].predicted_s == rep.cases[1].predicted_s);
}

TEST_CASE("a validation's scenario need cover only its cases' configurations, not its whole search space") {
    // alpha tabulated to m = 4, no search section (m = 1..16 by default): cases up to m = 4 are predicted (once
    // the default search was checked and the file refused for m = 5); a case at m = 8 is refused, naming the table.
    mmgp::test::temp_dir d;
    d.write("s.json", R"({"schema": "mmgp/1", "platform": {"name": "t", "hpu_contexts": 2, "apus": 16, "O_offload": 1e-7,
      "T_csw": 1e-6, "alpha": {"table": {"1": 1, "2": 1.1, "3": 1.3, "4": 1.5}}}, "application": {"name": "a",
      "decomposition": "data", "N": 10, "T_hpu": 1, "T_apu": 8, "C_apu": 0.5, "g": 1e-4}})");
    const std::string f = d.write("v.json", R"({"schema": "mmgp/1", "kind": "validation", "scenario": "s.json", "cases": [
        {"m": 1, "p": 1, "measured_s": 9.5}, {"m": 4, "p": 4, "measured_s": 1.5}]})");
    const auto rep = mmgp::run_validation(f, mmgp::model_kind::mmgp);
    REQUIRE(rep.cases.size() == 2);
    CHECK(rep.cases[1].predicted_s > 0);
    const std::string beyond = d.write("v8.json", R"({"schema": "mmgp/1", "kind": "validation", "scenario": "s.json",
        "cases": [{"m": 8, "p": 2, "measured_s": 1.5}]})");
    CHECK_THROWS_WITH_AS(mmgp::run_validation(beyond, mmgp::model_kind::mmgp),
                         doctest::Contains("/platform/alpha/table: expected an entry for m = 8"), mmgp::input_error);
}

TEST_CASE("a wavefront's two mappings at one node count are rivals in a group, labelled by mapping") {
    mmgp::test::temp_dir d;
    // Once refused as one configuration given twice ("m=32 p=1 nodes=1 edtlp again"), both labelled edtlp.
    const std::string f = d.write("w.json", R"({"schema": "mmgp/1", "kind": "validation", "scenario": "sweep3d-roadrunner",
      "group": "g", "cases": [{"mapping": "accelerator-driven", "m": 32, "p": 1, "nodes": 1, "measured_s": 0.04},
                              {"mapping": "host-driven", "m": 32, "p": 1, "nodes": 1, "measured_s": 0.08}]})");
    const auto rep = mmgp::run_validation(f, mmgp::model_kind::mmgp);
    REQUIRE(rep.cases.size() == 2);
    CHECK(rep.cases[0].label == "m=32 p=1 nodes=1 accelerator-driven");
    CHECK(rep.cases[1].label == "m=32 p=1 nodes=1 host-driven");
    REQUIRE(rep.groups.size() == 1);
    CHECK(rep.groups[0].measured_best == "m=32 p=1 nodes=1 accelerator-driven");
    // One mapping twice is still one configuration given twice.
    const std::string twice = d.write("w2.json", R"({"schema": "mmgp/1", "kind": "validation", "scenario": "sweep3d-roadrunner",
      "group": "g", "cases": [{"mapping": "host-driven", "m": 32, "p": 1, "nodes": 1, "measured_s": 0.04},
                              {"mapping": "host-driven", "m": 32, "p": 1, "nodes": 1, "measured_s": 0.08}]})");
    CHECK_THROWS_WITH_AS(mmgp::run_validation(twice, mmgp::model_kind::mmgp),
                         doctest::Contains("/cases/1: expected one case per configuration in group \"g\""), mmgp::input_error);
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

TEST_CASE("validation files: a case with more processes per node than the platform allows is refused, the limit named") {
    // raxml-qs20 with at most 4 processes per node: m=8 p=2 fits its 16 apus and its node, but not the limit.
    mmgp::test::temp_dir d;
    const std::string f = d.write("bad.json", R"({"scenario": "raxml-qs20", "cases": [{"m": 8, "p": 2, "measured_s": 3}]})");
    const mmgp::scenario_edits limit{R"({"max_processes_per_node": 4})", "", ""};
    try {
        mmgp::run_validation(f, mmgp::model_kind::mmgp, limit);
        FAIL("no error");
    } catch (const mmgp::input_error& e) {
        CHECK(std::string(e.what()).substr(f.size()) ==
              ": /cases/0: expected a feasible configuration (m*p <= apus = 16, nodes <= 1, m <= 4), found m=8 p=2 nodes=1 edtlp");
    }
    // Within the limit it is predicted as before.
    CHECK(mmgp::run_validation(f, mmgp::model_kind::mmgp, mmgp::scenario_edits{R"({"max_processes_per_node": 8})", "", ""})
              .cases.size() == 1);
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
    CHECK(rep.cases[0].measured.runs.size() == 3);
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

TEST_CASE("the 90 % interval of a median: order statistics with binomial ranks") {
    auto ci = mmgp::median_ci90({3, 1, 2, 5, 4});  // n = 5: P(Bin(5, 1/2) = 0) = 1/32 <= 5 %, so [x_(1), x_(5)]
    CHECK(ci.first == 1.0);
    CHECK(ci.second == 5.0);
    CHECK(std::isnan(mmgp::median_ci90({1, 2, 3, 4}).first));  // n = 4: 1/16 > 5 %, no interval
    // n = 9: P(X <= 1) = 10/512 <= 5 % < P(X <= 2) = 46/512, so [x_(2), x_(8)].
    ci = mmgp::median_ci90({9, 8, 7, 6, 5, 4, 3, 2, 1});
    CHECK(ci.first == 2.0);
    CHECK(ci.second == 8.0);
    // n = 15: P(X <= 3) = 576/32768 <= 5 % < P(X <= 4) = 1941/32768, so [x_(4), x_(12)].
    std::vector<double> xs;
    for (int i = 15; i >= 1; --i) xs.push_back(i);
    ci = mmgp::median_ci90(xs);
    CHECK(ci.first == 4.0);
    CHECK(ci.second == 12.0);
}

TEST_CASE("validation report: the prediction against the 90 % interval of each case's median") {
    mmgp::test::temp_dir d;
    // raxml-qs20 predicts m=16 p=1 20.0 s and m=8 p=2 29.8 s (see above).
    std::string f = d.write("v.json", R"({"schema": "mmgp/1", "kind": "validation", "name": "c", "scenario": "raxml-qs20", "group": "g",
      "cases": [
        {"m": 16, "p": 1, "measured_s": 21.0, "runs": [18.0, 21.0, 22.0, 19.0, 23.0]},
        {"m": 8, "p": 2, "measured_s": 33.0, "runs": [32.0, 33.0, 34.0, 31.0, 35.0]},
        {"m": 4, "p": 4, "measured_s": 45.0, "runs": [45.0, 45.0, 45.0]},
        {"m": 2, "p": 8, "measured_s": 40.0, "censored": true, "runs": [40.0, 40.0, 40.0, 40.0, 40.0]}]})");
    auto rep = mmgp::run_validation(f, mmgp::model_kind::mmgp);
    REQUIRE(rep.cases.size() == 4);
    CHECK(rep.cases[0].measured.median_ci90().first == 18.0);
    CHECK(rep.cases[0].measured.median_ci90().second == 23.0);
    CHECK(std::isnan(rep.cases[2].measured.median_ci90().first));  // 3 runs: no interval
    CHECK(std::isnan(rep.cases[3].measured.median_ci90().first));  // censored: the runs are bounds
    CHECK(rep.with_ci == 2);
    CHECK(rep.within_ci == 1);  // 20.0 in [18, 23]; 29.8 below [31, 35]
    CHECK(rep.mean_ci_halfwidth_pct == mmgp::test::approx((50.0 * 5 / 21 + 50.0 * 4 / 33) / 2));
}
