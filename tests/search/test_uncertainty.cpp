// Uncertainty (libmmgp/src/search/uncertainty.cpp): the profiles' spreads sampled into intervals, the probability of
// being at least as fast as the best, and the set that cannot be told apart from it.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support.hpp"
#include "mmgp/error.hpp"
#include "mmgp/search.hpp"
#include "mmgp/uncertainty.hpp"

using nlohmann::json;

TEST_CASE("--uncertainty: the profiles' spreads become intervals and the set that cannot be told apart") {
    // Two close mappings on 2 host contexts: m=2 p=2 (the best) pays N·2·g, m=4 p=1 shares the host (T_csw) and
    // pays N·g: which is faster depends on T_csw and g.
    auto scenario_with = [](double csw_mad, double g_mad) {
        json doc = {{"platform", {{"hpu_contexts", 2}, {"apus", 4}, {"O_offload", 1e-6},
                                  {"T_csw", {{"value", 2e-5}, {"spread", csw_mad}}}, {"alpha", 1.0}}},
                    {"application", {{"N", 1000}, {"T_hpu", 0.1}, {"T_apu", 4.0}, {"C_apu", 0.01},
                                     {"g", {{"value", 1e-4}, {"mad", g_mad}}}}},
                    {"search", {{"m", {1, 4}}, {"p", {1, 4}}}}};
        return mmgp::parse_scenario(doc.dump(), "u.json");
    };
    const auto wide = scenario_with(1e-5, 5e-5);
    const auto all = mmgp::search(wide, mmgp::model_kind::mmgp);
    std::vector<mmgp::configuration> cands;
    for (const auto& x : all.all) cands.push_back(x.c);
    const auto u = mmgp::propagate_spreads(wide, mmgp::model_kind::mmgp, cands, all.best.c);
    CHECK(u.samples == 200);
    REQUIRE(u.parameters.size() == 2);
    CHECK(u.parameters[0].rfind("platform.T_csw: ", 0) == 0);
    CHECK(u.parameters[1].rfind("application.g: ", 0) == 0);
    REQUIRE(u.configs.size() == cands.size());
    std::size_t inside = 0;
    for (std::size_t i = 0; i < u.configs.size(); ++i) {
        const auto& x = u.configs[i];
        CHECK(x.time_s == all.all[i].pred.time_s);
        CHECK(x.lo <= x.hi);
        inside += x.lo <= x.time_s && x.time_s <= x.hi;  // log-normal around the value: the median is the value
        if (x.c.m == all.best.c.m && x.c.p == all.best.c.p) CHECK(x.p_not_slower == 1.0);
    }
    CHECK(inside == u.configs.size());
    // Same seed, same answer.
    const auto again = mmgp::propagate_spreads(wide, mmgp::model_kind::mmgp, cands, all.best.c);
    CHECK(again.configs[3].lo == u.configs[3].lo);
    // An independent count: with wide spreads a runner-up overtakes the best in some samples; with spreads a
    // thousand times narrower none does, and only the best remains.
    std::vector<double> nominal;
    for (const auto& x : all.all) nominal.push_back(x.pred.time_s);
    std::sort(nominal.begin(), nominal.end());
    REQUIRE(nominal[1] < nominal[0] * 1.2);  // the scenario has a close runner-up
    CHECK(u.indistinguishable.size() >= 2);
    const auto narrow = scenario_with(1e-8, 5e-8);
    const auto un = mmgp::propagate_spreads(narrow, mmgp::model_kind::mmgp, cands, all.best.c);
    REQUIRE(un.indistinguishable.size() == 1);
    CHECK(un.indistinguishable[0].m == all.best.c.m);
    CHECK(un.indistinguishable[0].p == all.best.c.p);
    // No spread at all: nothing is sampled, each interval is the point.
    json plain = {{"platform", "qs20"}, {"application", "pbpi"}};
    const auto sp = mmgp::parse_scenario(plain.dump(), "p.json");
    const auto best = mmgp::search(sp, mmgp::model_kind::mmgp, {false}).best;
    const auto none = mmgp::propagate_spreads(sp, mmgp::model_kind::mmgp, {best.c, {1, 1, 1, mmgp::policy::edtlp}}, best.c);
    CHECK(none.samples == 0);
    CHECK(none.configs[1].lo == none.configs[1].time_s);
    CHECK(none.indistinguishable.size() == 1);
}

TEST_CASE("--uncertainty: a spread that is not a number >= 0 is refused when read; one beyond ten times the value when propagated") {
    auto doc_with = [](json spread_field) {
        json t_csw = {{"value", 2e-5}};
        t_csw.update(spread_field);
        return json{{"platform", {{"hpu_contexts", 2}, {"apus", 4}, {"O_offload", 1e-6}, {"T_csw", t_csw}, {"alpha", 1.0}}},
                    {"application", {{"N", 1000}, {"T_hpu", 0.1}, {"T_apu", 4.0}, {"C_apu", 0.01}, {"g", 1e-4}}},
                    {"search", {{"m", {1, 4}}, {"p", {1, 4}}}}}
            .dump();
    };
    for (const json& bad : {json{{"spread", -3}}, json{{"mad", "x"}}, json{{"std_error", nullptr}}}) {
        CAPTURE(bad.dump());
        CHECK_THROWS_WITH_AS(mmgp::parse_scenario(doc_with(bad), "u.json"),
                             doctest::Contains("a finite number >= 0 (the spread of the value)"), mmgp::input_error);
    }
    // A spread (a MAD) of 5 times the value, sd 7.4 times, is propagated (finite intervals); 1e308 is not.
    const auto ok = mmgp::parse_scenario(doc_with({{"spread", 1e-4}}), "u.json");
    const auto best = mmgp::search(ok, mmgp::model_kind::mmgp, {false}).best;
    const auto u = mmgp::propagate_spreads(ok, mmgp::model_kind::mmgp, {best.c}, best.c);
    CHECK(std::isfinite(u.configs[0].hi));
    const auto huge = mmgp::parse_scenario(doc_with({{"spread", 1e308}}), "u.json");
    CHECK_THROWS_WITH_AS(mmgp::propagate_spreads(huge, mmgp::model_kind::mmgp, {best.c}, best.c),
                         doctest::Contains("/platform/T_csw: expected a spread of at most 10 times the value"),
                         mmgp::input_error);
}

TEST_CASE("--uncertainty: a spread on a value of 0 is named as not varied for that reason, apart from keys with no scalar") {
    // g = 0 with a standard error: value·exp(σz) is 0 for every draw, so g is not varied; T_csw's spread is.
    json doc = {{"platform", {{"hpu_contexts", 2}, {"apus", 4}, {"O_offload", 1e-6},
                              {"T_csw", {{"value", 2e-5}, {"spread", 1e-6}}}, {"alpha", 1.0}}},
                {"application", {{"N", 1000}, {"T_hpu", 0.1}, {"T_apu", 4.0}, {"C_apu", 0.01},
                                 {"g", {{"value", 0}, {"std_error", 1e-4}}}}},
                {"search", {{"m", {1, 4}}, {"p", {1, 4}}}}};
    const auto s = mmgp::parse_scenario(doc.dump(), "z.json");
    const auto best = mmgp::search(s, mmgp::model_kind::mmgp, {false}).best;
    const auto u = mmgp::propagate_spreads(s, mmgp::model_kind::mmgp, {best.c}, best.c);
    CHECK(u.samples == 200);
    REQUIRE(u.parameters.size() == 1);
    CHECK(u.parameters[0].rfind("platform.T_csw: ", 0) == 0);
    CHECK(u.at_zero == std::vector<std::string>{"application.g"});
    CHECK(u.not_varied.empty());
    // Only the zero-valued spread: nothing is sampled, and the reason is that one.
    doc["platform"]["T_csw"] = 2e-5;
    const auto z = mmgp::parse_scenario(doc.dump(), "z.json");
    const auto none = mmgp::propagate_spreads(z, mmgp::model_kind::mmgp, {best.c}, best.c);
    CHECK(none.samples == 0);
    CHECK(none.at_zero == std::vector<std::string>{"application.g"});
    CHECK(none.not_varied.empty());
}
