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
