// Short runs (tune_options::short_work, docs/TUNE.md "Short runs"): the carry-over stage (tune/carryover.cpp) on
// hand-computed cases, and the tuner screening a space with short runs: the chosen configuration always has full
// runs of its own, a screen costs less than full runs for the same choice, and short runs that rank the
// configurations otherwise than full ones are detected and dropped.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "mmgp/tune.hpp"
#include "measured_runs.hpp"
#include "test_scenario.hpp"
#include "tune/stages.hpp"

namespace {

using mmgp::run_outcome;

// The evidence of `runs` summarised as the tuner's noise stage leaves it.
mmgp::detail::run_evidence summarised(const std::vector<test::config_run>& runs, std::size_t n) {
    mmgp::detail::run_evidence e = mmgp::detail::gather_evidence(test::measured(runs), n);
    mmgp::detail::estimate_noise(e, {0.1, 4, true});
    return e;
}

// The evidence of `runs` once the carry-over stage has added its short runs (short runs at a tenth of the work).
struct carried {
    mmgp::detail::run_evidence e;
    mmgp::tune_carryover c;
};
carried carry_over(const std::vector<test::config_run>& runs, std::size_t n) {
    carried out{summarised(runs, n), {}};
    const auto shorts = mmgp::detail::gather_short(test::measured(runs), n);
    out.c = mmgp::detail::fit_carryover(shorts, out.e, 0.1);
    mmgp::detail::add_short_evidence(out.e, shorts, out.c);
    return out;
}

}  // namespace

TEST_CASE("tune carry-over stage: short runs are kept apart from the full runs' evidence") {
    const std::vector<test::config_run> runs = {{0, {1.0, run_outcome::ok, false, 0.1}},  {0, {9.0, run_outcome::ok}},
                                        {1, {2.0, run_outcome::censored, false, 0.1}}, {2, {0.5, run_outcome::ok, false, 0.1}},
                                        {2, {0.4, run_outcome::failed, false, 0.1}}};
    const auto e = mmgp::detail::gather_evidence(test::measured(runs), 3);
    CHECK(e[0].logs.size() == 1);  // the full run only
    CHECK(e[1].censored == 0);     // a short run stopped is the carry-over's to count
    CHECK(e[2].logs.empty());
    CHECK(e.measured == std::vector<std::size_t>{0});
    const auto shorts = mmgp::detail::gather_short(test::measured(runs), 3);
    CHECK(shorts[0].logs == std::vector<double>{0.0});
    CHECK(shorts[1].censored == 1);
    CHECK(shorts[1].censored_at == 2.0);
    CHECK(shorts[2].logs.size() == 1);  // the failed short run tells nothing
}

TEST_CASE("tune carry-over stage: the prior alone, then one pair sets the start-up") {
    // No pair: the ratio is 1 / short_work, no start-up, the prior error (15 %).
    {
        const std::vector<test::config_run> runs = {{0, {1.0, run_outcome::ok, false, 0.1}}};
        const auto e = summarised(runs, 2);
        const mmgp::tune_carryover c = mmgp::detail::fit_carryover(mmgp::detail::gather_short(test::measured(runs), 2), e, 0.1);
        CHECK(c.pairs == 0);
        CHECK(c.ratio == doctest::Approx(10));
        CHECK(c.startup_s == 0);
        CHECK(c.error == doctest::Approx(0.15));
        CHECK(mmgp::detail::short_bound(c, 30.0) == 30.0);  // no pair: a short run gets the full bound
    }
    // One pair, short 1 s and full 9.1 s at a tenth of the work: full = 10 (short - s0) + s0 gives s0 = 0.1 s.
    const std::vector<test::config_run> runs = {{0, {1.0, run_outcome::ok, false, 0.1}}, {0, {9.1, run_outcome::ok}},
                                        {1, {0.5, run_outcome::ok, false, 0.1}}};
    auto e = summarised(runs, 2);
    const auto shorts = mmgp::detail::gather_short(test::measured(runs), 2);
    mmgp::tune_carryover c = mmgp::detail::fit_carryover(shorts, e, 0.1);
    CHECK(c.pairs == 1);
    CHECK(c.ratio == doctest::Approx(10));
    CHECK(c.startup_s == doctest::Approx(0.1));
    CHECK(c.error == doctest::Approx(0.15));  // no residual degree of freedom yet: the prior's
    // Configuration 1, screened only: 10 x (0.5 - 0.1) + 0.1 = 4.1 s. Its variance: the error, and the line's own
    // at 0.5 s: one pair pins alpha + 1 x ratio to 9.1 s within 15 % and leaves the ratio at its prior, 10 +- 5,
    // so the projection's sd is sqrt((0.15 x 9.1)^2 + (5 x (0.5 - 1))^2) s, relative to 4.1 s.
    mmgp::detail::add_short_evidence(e, shorts, c);
    REQUIRE(e[1].projected);
    CHECK(std::exp(e[1].projected_log) == doctest::Approx(4.1));
    const double line_var = (0.15 * 9.1) * (0.15 * 9.1) + 25 * 0.25;
    CHECK(e[1].projected_var == doctest::Approx(0.15 * 0.15 + line_var / (4.1 * 4.1)));
    CHECK_FALSE(e[0].projected);  // it has a full run of its own
    const mmgp::detail::noise_estimate noise{0.01, {0.01, 0.01}};
    const auto obs = mmgp::detail::observe(e, noise);
    REQUIRE(obs.configs.size() == 2);
    CHECK(std::exp(obs.log_time[1]) == doctest::Approx(4.1));
    // A full bound of 20.1 s projects back to (20.1 - 0.1) / 10 + 0.1 = 2.1 s, widened by 1.645 errors.
    CHECK(mmgp::detail::short_bound(c, 20.1) == doctest::Approx(2.1 * std::exp(1.6448536269514722 * 0.15)));
    CHECK(mmgp::detail::short_bound(c, 0) == 0);
}

TEST_CASE("tune carry-over stage: many exact pairs recover the ratio and start-up; the error shrinks") {
    // full = 8 (short - 0.2) + 0.2 at 20 configurations; the prior ratio 10 (a tenth of the work) is outweighed.
    std::vector<test::config_run> runs;
    for (std::size_t c = 0; c < 20; ++c) {
        const double s = 0.4 + 0.1 * static_cast<double>(c);
        runs.push_back({c, {s, run_outcome::ok, false, 0.1}});
        runs.push_back({c, {8 * (s - 0.2) + 0.2, run_outcome::ok}});
    }
    const auto e = summarised(runs, 20);
    const mmgp::tune_carryover c = mmgp::detail::fit_carryover(mmgp::detail::gather_short(test::measured(runs), 20), e, 0.1);
    CHECK(c.pairs == 20);
    CHECK(c.ratio == doctest::Approx(8).epsilon(0.01));
    CHECK(c.startup_s == doctest::Approx(0.2).epsilon(0.05));
    CHECK(c.fit_error < 0.01);
    // (prior 0.15^2 worth one pair + residuals near 0) over 1 + 19 degrees of freedom.
    CHECK(c.error == doctest::Approx(0.15 / std::sqrt(20.0)).epsilon(0.05));
}

TEST_CASE("tune carry-over stage: a projection far from the pairs run both ways is less sure than one among them") {
    // Two pairs on full = 10 (short - 0.1) + 0.1, at short times close together (1.0, 1.05 s) or apart (1.0, 3.0 s);
    // configuration 2 screened at 1.02 s (among the close pairs) and configuration 3 at 5 s (far from both).
    auto with_pairs = [](double second) {
        const std::vector<test::config_run> runs = {
            {0, {1.0, run_outcome::ok, false, 0.1}}, {0, {9.1, run_outcome::ok}},
            {1, {second, run_outcome::ok, false, 0.1}}, {1, {10 * (second - 0.1) + 0.1, run_outcome::ok}},
            {2, {1.02, run_outcome::ok, false, 0.1}}, {3, {5.0, run_outcome::ok, false, 0.1}}};
        return carry_over(runs, 4);
    };
    const auto close = with_pairs(1.05), apart = with_pairs(3.0);
    REQUIRE(close.e[2].projected);
    REQUIRE(close.e[3].projected);
    REQUIRE(apart.e[3].projected);
    const double e2 = close.c.error * close.c.error;
    // Among two pairs: the error, and the line's at their mean, the error over the two pairs (e^2 / 2).
    CHECK(close.e[2].projected_var == doctest::Approx(1.5 * e2).epsilon(0.02));
    CHECK(close.e[3].projected_var > 10 * e2);    // 4 s past two pairs 0.05 s apart: the ratio barely known
    CHECK(apart.e[3].projected_var < 0.25 * close.e[3].projected_var);  // pairs 2 s apart pin the ratio
}

TEST_CASE("tune carry-over stage: short runs that rank otherwise are dropped, and say so") {
    // Short times in the opposite order of the full ones at four configurations, a fifth screened only.
    const double shorts_s[] = {1, 2, 3, 4}, fulls_s[] = {40, 30, 20, 10};
    std::vector<test::config_run> runs;
    for (std::size_t c = 0; c < 4; ++c) {
        runs.push_back({c, {shorts_s[c], run_outcome::ok, false, 0.1}});
        runs.push_back({c, {fulls_s[c], run_outcome::ok}});
    }
    runs.push_back({4, {0.5, run_outcome::ok, false, 0.1}});
    const auto [e, c] = carry_over(runs, 5);
    CHECK(c.pairs == 4);
    CHECK(c.fit_error > 0.5 * c.spread);
    CHECK_FALSE(c.ranks);
    CHECK_FALSE(e[4].projected);  // its short run no longer stands for a full one
}

TEST_CASE("tune carry-over stage: a short run stopped at its bound stops the configuration at the full time it projects to") {
    const std::vector<test::config_run> runs = {{0, {1.0, run_outcome::ok, false, 0.1}}, {0, {9.1, run_outcome::ok}},
                                        {1, {3.0, run_outcome::censored, false, 0.1}}};
    const auto e = carry_over(runs, 2).e;
    CHECK(e[1].censored == 1);
    CHECK(e[1].excluded());
    CHECK(e[1].censored_at == doctest::Approx(10 * (3.0 - 0.1) + 0.1));
    CHECK_FALSE(e[1].projected);
}

TEST_CASE("tune cost cap: a configuration screened by short runs alone counts at the lower end of its projection") {
    // Configuration 0 run both ways (1 s, 9.1 s), configuration 1 screened only: projected at 4.1 s, its log's
    // variance the error (15 %) and the line's own at 0.5 s (the carry-over test above: one pair, the ratio's prior).
    const double var = 0.15 * 0.15 + ((0.15 * 9.1) * (0.15 * 9.1) + 25 * 0.25) / (4.1 * 4.1);
    const double low = 4.1 * std::exp(-1.6448536269514722 * std::sqrt(var));
    const std::vector<test::config_run> runs = {{0, {1.0, run_outcome::ok, false, 0.1}}, {0, {9.1, run_outcome::ok}},
                                        {1, {0.5, run_outcome::ok, false, 0.1}}};
    const auto e = carry_over(runs, 3).e;
    REQUIRE(e[1].projected);
    const std::vector<mmgp::configuration> space = {{1, 1, 1, mmgp::policy::edtlp}, {1, 2, 1, mmgp::policy::edtlp},
                                                    {2, 1, 2, mmgp::policy::edtlp}};
    mmgp::tune_assessment a;
    a.configs.resize(3);
    a.configs[0].measured_s = 9.1;
    mmgp::detail::log_beliefs b;
    // The posterior of configuration 1 (5 s) is not its projection; configuration 2: not run, 2 nodes, 3 s.
    b.mean = {std::log(9.1), std::log(5.0), std::log(3.0)};
    b.var = {0.0, 0.01, 0.0};
    const mmgp::detail::exhaustive_estimate x = mmgp::detail::exhaustive_seconds(a, b, e, space);
    CHECK(x.measured_s == doctest::Approx(9.1));
    // The projection, 4.1 s, lowered by 1.645 sd; 3 s x 2 nodes at its expected cost.
    CHECK(x.projected_s == doctest::Approx(low));
    CHECK(x.projected == 1);
    CHECK(x.expected_s == doctest::Approx(2 * 3.0));
    CHECK(x.expected == 1);
    CHECK(x.total() == doctest::Approx(9.1 + low + 6.0));
}

TEST_CASE("tune cost cap: a configuration stopped in short runs only counts at most a full run's bound") {
    // Configuration 1's short run was stopped at 3 s, which projects to 10 x (3 - 0.1) + 0.1 = 29.1 s; a full run
    // of it would have been stopped at the chosen's bound.
    const std::vector<test::config_run> runs = {{0, {1.0, run_outcome::ok, false, 0.1}}, {0, {9.1, run_outcome::ok}},
                                        {1, {3.0, run_outcome::censored, false, 0.1}}};
    const auto e = carry_over(runs, 2).e;
    REQUIRE(e[1].stopped_short_only);
    const std::vector<mmgp::configuration> space = {{1, 1, 1, mmgp::policy::edtlp}, {1, 2, 1, mmgp::policy::edtlp}};
    mmgp::tune_assessment a;
    a.configs.resize(2);
    a.configs[0].measured_s = 9.1;
    a.configs[1].censored = 1;
    mmgp::detail::log_beliefs b;
    b.mean = {std::log(9.1), std::log(29.1)};
    b.var = {0.0, 0.0};
    CHECK(mmgp::detail::exhaustive_seconds(a, b, e, space).stopped_s == doctest::Approx(29.1));  // no bound yet
    a.chosen_bound_s = 3 * 9.1;
    CHECK(mmgp::detail::exhaustive_seconds(a, b, e, space).stopped_s == doctest::Approx(3 * 9.1));
    // Stopped in a full run as well: its own bound stands.
    const std::vector<test::config_run> full_too = {{0, {1.0, run_outcome::ok, false, 0.1}}, {0, {9.1, run_outcome::ok}},
                                            {1, {30.0, run_outcome::censored}}, {1, {3.0, run_outcome::censored, false, 0.1}}};
    const auto e_full = carry_over(full_too, 2).e;
    CHECK_FALSE(e_full[1].stopped_short_only);
    CHECK(mmgp::detail::exhaustive_seconds(a, b, e_full, space).stopped_s == doctest::Approx(30.0));
}

namespace {


struct screened_tune {
    std::size_t chosen = 0;
    int full_runs_of_chosen = 0, short_runs = 0;
    double machine_s = 0;
    bool ranks = true;
    std::set<std::size_t> full_configs = {};  // the configurations run in full
};

// The loop on 12 configurations whose full time is `full(i)` and short time `shortened(i)` (a tenth of the work),
// log-normal noise of 3 %, without the model (runs alone); `short_work` 0: full runs only.
screened_tune tune_screened(const std::function<double(std::size_t)>& full,
                            const std::function<double(std::size_t)>& shortened, double short_work, unsigned seed,
                            const std::function<void(mmgp::tune_options&)>& more = {}) {
    std::vector<mmgp::configuration> space;
    for (int m = 1; m <= 4; ++m)
        for (int p = 1; p <= 3; ++p) space.push_back({m, p, 1, mmgp::policy::edtlp});
    mmgp::tune_options opt;
    opt.use_model = false;
    opt.prior = false;
    opt.short_work = short_work;
    if (more) more(opt);
    mmgp::tuner t(tune_test_scenario(), space, opt);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> z(0.0, 1.0);
    mmgp::tune_assessment a;
    for (int guard = 0; guard < 500; ++guard) {
        a = t.assess();
        if (a.stop != mmgp::tune_stop::none || !a.has_next) break;
        const bool is_short = a.next_work < 1;
        const double time = (is_short ? shortened(a.next) : full(a.next)) * std::exp(0.03 * z(rng));
        if (a.next_bound_s > 0 && time > a.next_bound_s)
            t.add(a.next, {a.next_bound_s, run_outcome::censored, false, a.next_work});
        else
            t.add(a.next, {time, run_outcome::ok, false, a.next_work});
    }
    screened_tune r{a.chosen, 0, 0, a.machine_s, a.carryover.ranks};
    REQUIRE(a.has_chosen);
    for (const auto& [config, run] : test::runs_of(t)) {
        if (run.work < 1) ++r.short_runs;
        else if (config == a.chosen && run.outcome == run_outcome::ok) ++r.full_runs_of_chosen;
        if (run.work >= 1) r.full_configs.insert(config);
    }
    return r;
}

}  // namespace

TEST_CASE("tune with short runs: screened first, the choice backed by full runs, for a third of trying everything") {
    // Full times 2..13 s in a scrambled order, the best (2 s) at configuration 7; a run's start-up is 0.3 s.
    const double full_s[] = {9, 5, 12, 3, 11, 7, 13, 2, 8, 4, 10, 6};
    auto full = [&](std::size_t i) { return full_s[i]; };
    auto shortened = [&](std::size_t i) { return 0.1 * (full_s[i] - 0.3) + 0.3; };
    for (unsigned seed : {1u, 2u, 3u}) {
        const screened_tune with = tune_screened(full, shortened, 0.1, seed);
        const screened_tune without = tune_screened(full, shortened, 0, seed);
        CHECK(with.chosen == 7);
        CHECK(with.full_runs_of_chosen >= 1);
        CHECK(with.short_runs >= 12);  // every configuration screened
        CHECK(without.short_runs == 0);
        CHECK(with.machine_s < without.machine_s);
        CHECK(with.machine_s < 0.35 * 90);  // a third of running every configuration once (90 s), the target
    }
}

TEST_CASE("tune with short runs: exploring in full ends after short.explore_pairs configurations run both ways") {
    // A new user's tune (the model fitted from the runs once five configurations are measured in full): with
    // explore_pairs 0 it explores five configurations in full, the screen's first; with 2 it stops exploring
    // after two, and the configurations the screen puts 2x behind the best (4 s and slower against 2 s, the
    // noise 3 %) are judged by their projections, not run in full.
    const double full_s[] = {9, 5, 12, 3, 11, 7, 13, 2, 8, 4, 10, 6};
    auto full = [&](std::size_t i) { return full_s[i]; };
    auto shortened = [&](std::size_t i) { return 0.1 * (full_s[i] - 0.3) + 0.3; };
    auto slow_in_full = [&](const screened_tune& r) {
        return std::count_if(r.full_configs.begin(), r.full_configs.end(), [&](std::size_t c) { return full_s[c] >= 4; });
    };
    for (unsigned seed : {1u, 2u, 3u}) {
        auto new_user = [](int pairs) {
            return [pairs](mmgp::tune_options& o) {
                o.use_model = true;
                o.short_explore_pairs = pairs;
            };
        };
        const screened_tune explore5 = tune_screened(full, shortened, 0.1, seed, new_user(0));
        const screened_tune explore2 = tune_screened(full, shortened, 0.1, seed, new_user(2));
        CHECK(explore5.chosen == 7);
        CHECK(explore2.chosen == 7);
        CHECK(explore2.full_runs_of_chosen >= 1);
        CHECK(slow_in_full(explore5) >= 3);  // five explored in full: 2, 3 s and three of the slower ones
        CHECK(slow_in_full(explore2) == 0);
        CHECK(explore2.machine_s < explore5.machine_s);
    }
}

TEST_CASE("tune with short runs: a program whose short runs rank otherwise is tuned by full runs, and said so") {
    // The short runs' order is the reverse of the full runs': the fastest full run is the slowest short one.
    const double full_s[] = {9, 5, 12, 3, 11, 7, 13, 2, 8, 4, 10, 6};
    auto full = [&](std::size_t i) { return full_s[i]; };
    auto shortened = [&](std::size_t i) { return 0.1 * (15 - full_s[i]); };
    for (unsigned seed : {1u, 2u}) {
        const screened_tune with = tune_screened(full, shortened, 0.1, seed);
        CHECK_FALSE(with.ranks);
        CHECK(with.chosen == 7);
        CHECK(with.full_runs_of_chosen >= 1);
    }
}
