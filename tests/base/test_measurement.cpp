// One configuration as measured (mmgp/measurement.hpp): which runs its statistics count, its median, the interval
// of that median and the run-to-run noise, against values derived by hand; and the one record fit, tune and
// validate read a configuration's runs into.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "mmgp/fit.hpp"
#include "mmgp/measurement.hpp"
#include "mmgp/statistics.hpp"
#include "support.hpp"

using mmgp::run_outcome;
using mmgp::test::approx;

namespace {

mmgp::measurement of_times(const std::vector<double>& times) {
    mmgp::measurement m{{2, 1, 1, mmgp::policy::edtlp}};
    for (double t : times) m.runs.push_back({t});
    return m;
}

}  // namespace

TEST_CASE("measurement: only finished full runs count; censored, failed, cancelled and short ones do not") {
    mmgp::measurement m = of_times({3.0, 1.0});
    m.runs.push_back({9.0, run_outcome::censored});
    m.runs.push_back({7.0, run_outcome::failed});
    m.runs.push_back({8.0, run_outcome::cancelled});
    m.runs.push_back({0.5, run_outcome::ok, false, 0.1});  // a short run: a tenth of the work
    m.runs.push_back({0.0, run_outcome::ok});              // no positive time: not a measurement
    CHECK(m.finished_times() == std::vector<double>{3.0, 1.0});
    CHECK(m.median_s() == 2.0);  // (1 + 3) / 2
    CHECK(std::isnan(of_times({}).median_s()));
    CHECK(m.runs[2].is_censored());
    CHECK_FALSE(m.runs[3].finished());
}

TEST_CASE("measurement: the noise of one run, robust from three runs on") {
    // Below two runs: nothing to measure it by.
    CHECK(of_times({5.0}).log_variance() == 0);
    // Two runs e and e^3: logs 1 and 3 about their mean 2, (1 - 2)^2 + (3 - 2)^2 = 2 over one degree of freedom.
    CHECK(of_times({std::exp(1.0), std::exp(3.0)}).log_variance() == approx(2.0).epsilon(1e-12));
    // Logs 0, 0.1, 0.2, 1.5: median 0.15, deviations 0.15, 0.05, 0.05, 1.35, their median 0.1; the run at 1.5 does
    // not count for more than its rank: (1.4826 x 0.1)^2.
    const mmgp::measurement m = of_times({1.0, std::exp(0.1), std::exp(0.2), std::exp(1.5)});
    CHECK(m.log_variance() == approx(0.14826 * 0.14826).epsilon(1e-9));
    CHECK(mmgp::repetition_variance({0.0, 0.1, 0.2, 1.5}) == approx(0.14826 * 0.14826).epsilon(1e-9));
}

TEST_CASE("measurement: the 90 % interval of its median from five finished runs on") {
    // Five runs: ranks 1 and 5 (P(Binomial(5, 1/2) < 1) = 1/32 <= 5 %), i.e. the smallest and the largest.
    const mmgp::measurement five = of_times({12.0, 10.0, 14.0, 11.0, 13.0});
    CHECK(five.median_ci90().first == 10.0);
    CHECK(five.median_ci90().second == 14.0);
    mmgp::measurement four = of_times({12.0, 10.0, 14.0, 11.0});
    CHECK(std::isnan(four.median_ci90().first));
    four.runs.push_back({13.0, run_outcome::censored});  // a bound is not a fifth measurement
    CHECK(std::isnan(four.median_ci90().first));
}

TEST_CASE("a runs file is read into measurements: one per configuration, its runs in the file's order") {
    const std::vector<mmgp::measurement> ms = mmgp::parse_runs(
        "m,p,units,time_s,censored\n1,1,8,10,0\n2,1,8,6,0\n1,1,8,11,0\n1,1,16,20,0\n2,1,8,9,1\n", "runs.csv", false);
    REQUIRE(ms.size() == 3);  // (1, 1, U = 8), (2, 1, U = 8), (1, 1, U = 16), in the order each first appears
    CHECK(ms[0].c.m == 1);
    CHECK(ms[0].units == 8);
    REQUIRE(ms[0].runs.size() == 2);
    CHECK(ms[0].runs[1].time_s == 11);
    CHECK(ms[0].runs[1].where == "row 4");
    CHECK(ms[0].runs[1].order == 2);
    CHECK(ms[0].median_s() == 10.5);
    CHECK(ms[1].runs.size() == 2);
    CHECK(ms[1].runs[1].is_censored());
    CHECK(ms[1].median_s() == 6);  // the censored run is a bound, not a time
    CHECK(ms[2].units == 16);
    // Back in the file's order, each run with its measurement.
    const auto in_order = mmgp::runs_in_order(ms);
    REQUIRE(in_order.size() == 5);
    std::vector<std::string> where;
    for (const auto& [m, r] : in_order) where.push_back(r->where);
    CHECK(where == std::vector<std::string>{"row 2", "row 3", "row 4", "row 5", "row 6"});
    CHECK(in_order[3].first->units == 16);
}
