// mmgp fit's structure chosen from the runs (libmmgp/src/fit/structure.cpp): the decomposition and policy the
// runs were generated with are found, what the caller holds is kept, too few configurations hold parameters,
// the noise comes from repetitions, a configuration no structure describes is named, and the command line prints
// the choice.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "mmgp/fit.hpp"
#include "model_runs.hpp"
#include "support.hpp"

using nlohmann::json;

namespace {

const char* platform_json =
    R"({"name": "test-host", "hpu_contexts": 4, "apus": 16, "O_offload": 1e-6, "T_csw": 3e-6, "alpha": 1.25})";

mmgp::platform test_platform() {
    mmgp::test::temp_dir d;
    return mmgp::load_platform(d.write("plat.json", platform_json));
}

// Runs of (m, p) in `configs` as the model predicts them for `truth` under `pol`, times times (1 + noise).
std::vector<mmgp::measurement> runs_of(const mmgp::platform& pl, const mmgp::application& truth, mmgp::policy pol,
                                        const std::vector<std::pair<int, int>>& configs, double noise, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> eps(0.0, noise);
    std::vector<mmgp::measurement> runs;
    for (auto [m, p] : configs) {
        mmgp::measurement run = mmgp::test::model_run(pl, truth, m, p, truth.units, pol);
        mmgp::test::time_of(run) *= 1.0 + eps(rng);
        run.runs[0].where = "row " + std::to_string(runs.size() + 2);
        runs.push_back(run);
    }
    return runs;
}

std::vector<std::pair<int, int>> grid() {
    std::vector<std::pair<int, int>> out;
    for (int m : {1, 2, 4, 8})
        for (int p : {1, 2, 4})
            if (m * p <= 16) out.emplace_back(m, p);
    return out;
}

mmgp::application data_app() { return mmgp::test::known_app(mmgp::decomposition::data, 2.0, 40.0, 1.0, 1, 0.0); }

mmgp::structure_held nothing_held() {
    mmgp::structure_held h;
    h.decomposition = h.policy = h.spin_limit = h.T_start = h.N = false;
    return h;
}

}  // namespace

TEST_CASE("the structure is chosen from the runs: data decomposition found where the runs split the work over m") {
    const mmgp::platform pl = test_platform();
    const auto runs = runs_of(pl, data_app(), mmgp::policy::edtlp, grid(), 0.01, 3);
    const mmgp::structure_selection s = mmgp::select_structure(pl, runs, {}, nothing_held(), "generated");
    REQUIRE(s.chose);
    CHECK(s.criterion == "leave-one-configuration-out");  // 12 configurations
    CHECK(s.fit.app.decomp == mmgp::decomposition::data);
    CHECK(s.candidates.front().label.rfind("data, ", 0) == 0);
    CHECK(s.fit.rms_err_pct < 3.0);
    CHECK(s.warnings.empty());
    // Task decomposition with one unit leaves extra ranks idle: it cannot follow m, and the selection says so.
    const auto task = std::find_if(s.candidates.begin(), s.candidates.end(), [](const mmgp::structure_candidate& c) {
        return c.fitted && c.label.rfind("task, ", 0) == 0;
    });
    REQUIRE(task != s.candidates.end());
    CHECK(task->score > 5 * s.candidates.front().score);
    // The choice scores by the model's linear form; the chosen fit's residuals come from the model itself: equal.
    CHECK(s.candidates.front().rms_err_pct == doctest::Approx(s.fit.rms_err_pct).epsilon(1e-9));
}

TEST_CASE("a structure the caller holds is kept, and a held policy with it") {
    const mmgp::platform pl = test_platform();
    const auto runs = runs_of(pl, data_app(), mmgp::policy::edtlp, grid(), 0.01, 3);
    mmgp::structure_held held = nothing_held();
    held.decomposition = true;  // --decomposition task
    mmgp::fit_options base;
    base.decomp = mmgp::decomposition::task;
    const auto s = mmgp::select_structure(pl, runs, base, held, "generated");
    CHECK(s.fit.app.decomp == mmgp::decomposition::task);
    for (const auto& c : s.candidates) CHECK(c.opt.decomp == mmgp::decomposition::task);
    // The model does not describe these runs with task decomposition: the configurations it misses are named.
    REQUIRE_FALSE(s.warnings.empty());
    CHECK(s.warnings.front().find("the model does not describe configuration m=") != std::string::npos);
    // Everything held: one candidate, nothing chosen.
    const auto all = mmgp::select_structure(pl, runs, base, mmgp::structure_held{}, "generated");
    CHECK_FALSE(all.chose);
    CHECK(all.candidates.size() == 1);
}

TEST_CASE("with fewer configurations than parameters, the selection holds some at 0 and says which") {
    const mmgp::platform pl = test_platform();
    const auto runs = runs_of(pl, data_app(), mmgp::policy::edtlp, {{1, 1}, {2, 1}, {1, 2}}, 0.0, 1);
    mmgp::structure_held held;  // the structure held: only the parameters are in question
    mmgp::fit_options base;
    base.decomp = mmgp::decomposition::data;
    const auto s = mmgp::select_structure(pl, runs, base, held, "generated");
    REQUIRE(s.candidates.front().fitted);
    CHECK(s.candidates.front().label.find(", 0: ") != std::string::npos);
    int free = 0;
    for (const auto& p : s.fit.params) free += p.fitted && p.identified;
    CHECK(free <= 3);
    // The library's own fit still refuses what it cannot fit.
    CHECK_THROWS_AS(mmgp::fit_application(pl, {runs.front()}, base, "one.csv"), mmgp::input_error);
}

TEST_CASE("the noise the criterion assumes comes from repetitions when they say enough") {
    const mmgp::platform pl = test_platform();
    // Four configurations, each three times within about 1 %: 8 degrees of freedom measure the noise.
    std::vector<mmgp::measurement> runs;
    for (unsigned seed : {1u, 2u, 3u}) {
        auto r = runs_of(pl, data_app(), mmgp::policy::edtlp, {{1, 1}, {2, 1}, {1, 2}, {2, 2}}, 0.01, seed);
        runs.insert(runs.end(), r.begin(), r.end());
    }
    const auto measured = mmgp::select_structure(pl, runs, {}, nothing_held(), "generated");
    CHECK(measured.criterion == "BIC");
    CHECK(measured.noise_source.find("repetitions (8 degrees of freedom)") != std::string::npos);
    CHECK(measured.noise_pct < 3.0);
    // One run each: the noise is the assumed one.
    runs.resize(4);
    mmgp::selection_options sel;
    sel.noise_pct = 7.0;
    const auto assumed = mmgp::select_structure(pl, runs, {}, nothing_held(), "generated", sel);
    CHECK(assumed.noise_pct == 7.0);
    CHECK(assumed.noise_source.find("assumed") != std::string::npos);
}

TEST_CASE("mmgp fit prints the candidates and the choice, and writes it into the profile") {
    mmgp::test::temp_dir d;
    const std::string plat = d.write("plat.json", platform_json);
    const auto runs = runs_of(mmgp::load_platform(plat), data_app(), mmgp::policy::edtlp, grid(), 0.01, 5);
    std::string csv = "m,p,time_s\n";
    for (const auto& r : runs)
        csv += std::to_string(r.c.m) + "," + std::to_string(r.c.p) + "," + json(mmgp::test::time_of(r)).dump() + "\n";
    const std::string data = d.write("runs.csv", csv);
    const std::string app = (d.path / "app.json").string();
    auto r = mmgp::test::run_mmgp("fit " + data + " --platform " + plat + " -o " + app);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("data decomposition") != std::string::npos);
    CHECK(r.out.find("structure: chosen from") != std::string::npos);
    CHECK(r.out.find("<- chosen") != std::string::npos);
    const json j = json::parse(mmgp::test::slurp(app));
    CHECK(j["decomposition"] == "data");
    CHECK(j["statistics"]["structure"]["chosen"].get<std::string>().rfind("data, ", 0) == 0);
    CHECK(j["statistics"]["structure"]["candidates"].size() >= 2);
    // Held on the command line: kept, and no choice printed.
    auto held = mmgp::test::run_mmgp("fit " + data + " --platform " + plat +
                                     " --decomposition task --policy edtlp --spin-limit 0 --N 1 --fix T_start=0");
    REQUIRE(held.status == 0);
    CHECK(held.out.find("task decomposition") != std::string::npos);
    CHECK(held.out.find("structure: chosen from") == std::string::npos);
    CHECK(held.out.find("warning: the model does not describe configuration") != std::string::npos);
    // Decomposition, policy and N held: one candidate is left, named in the singular.
    auto one = mmgp::test::run_mmgp("fit " + data + " --platform " + plat +
                                    " --decomposition task --policy edtlp --N 1");
    REQUIRE(one.status == 0);
    INFO(one.out);
    CHECK(one.out.find("structure: chosen from 1 candidate by") != std::string::npos);
    mmgp::test::expect_bad_input("fit " + data + " --noise 0", "--noise");
}
