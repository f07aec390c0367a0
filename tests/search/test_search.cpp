// The search: every feasible configuration exactly once, the best, the near-optimal set.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <set>
#include <tuple>

#include "support.hpp"
#include "mmgp/search.hpp"

using nlohmann::json;

TEST_CASE("the search visits every feasible (m, p, nodes) once and ranks them") {
    json doc = {{"platform", {{"hpu_contexts", 2}, {"apus", 12}, {"nodes", 5}, {"O_offload", 1e-6}, {"T_csw", 1e-6}, {"alpha", 1.2},
                              {"network", {{"models", {{"allreduce", {{"intra", {{"latency_s", 1e-6}, {"s_per_byte", 1e-9}}}, {"inter", {{"latency_s", 5e-5}, {"s_per_byte", 1e-8}}}}}}}}}}},
                {"application", {{"N", 500}, {"T_hpu", 2.0}, {"T_apu", 100.0}, {"C_apu", 1.0}, {"g", 1e-4},
                                 {"communication", {{{"primitive", "allreduce"}, {"bytes", 64}}}}}},
                {"search", {{"m", {2, 9}}, {"p", {2, 12}}, {"nodes", {2, 4}}, {"tolerance", 0.1}}}};
    mmgp::scenario s = mmgp::parse_scenario(doc.dump(), "s.json");
    // Brute force, independently: m in 2..9, p in 2..12, m*p <= 12, nodes 2..4.
    std::set<std::tuple<int, int, int>> expect;
    for (int n = 2; n <= 4; ++n)
        for (int m = 2; m <= 9; ++m)
            for (int p = 2; p <= 12; ++p)
                if (m * p <= 12) expect.insert({m, p, n});
    CHECK(mmgp::count_feasible(s) == static_cast<std::int64_t>(expect.size()));
    auto r = mmgp::search(s, mmgp::model_kind::mmgp);
    std::set<std::tuple<int, int, int>> seen;
    double best = 1e300;
    for (const auto& x : r.all) {
        CHECK(seen.insert({x.c.m, x.c.p, x.c.nodes}).second);
        best = std::min(best, x.pred.time_s);
    }
    CHECK(seen == expect);
    CHECK(r.best.pred.time_s == best);
    // Near-optimal: exactly those within 10 % of the best, fastest first.
    std::size_t within = 0;
    for (const auto& x : r.all) within += x.pred.time_s <= best * 1.1;
    CHECK(r.near_optimal.size() == within);
    for (std::size_t i = 1; i < r.near_optimal.size(); ++i)
        CHECK(r.near_optimal[i - 1].pred.time_s <= r.near_optimal[i].pred.time_s);
    // Without keeping every configuration the answer is the same.
    auto lean = mmgp::search(s, mmgp::model_kind::mmgp, {false});
    CHECK(lean.all.empty());
    CHECK(lean.best.c.m == r.best.c.m);
    CHECK(lean.best.c.p == r.best.c.p);
    CHECK(lean.best.c.nodes == r.best.c.nodes);
    CHECK(lean.near_optimal.size() == r.near_optimal.size());
    CHECK(lean.feasible == r.feasible);
}

TEST_CASE("the streaming search: the visitor sees every configuration once with the best, bounded lists agree with the full one") {
    mmgp::scenario s = mmgp::load_scenario("pbpi-roadrunner");
    s.space.nodes = {1, 40};
    const auto all = mmgp::search(s, mmgp::model_kind::mmgp);  // keeps every configuration
    REQUIRE(all.near_optimal.size() > 20);
    mmgp::search_options opt(false);
    opt.near_optimal_max = 7;
    opt.fastest_max = 25;
    std::size_t seen = 0;
    bool in_order = true, best_known = true;
    opt.visit = [&](const mmgp::ranked& x, const mmgp::ranked& best, bool) {
        const auto& e = all.all.at(seen++);
        in_order = in_order && e.c.m == x.c.m && e.c.p == x.c.p && e.c.nodes == x.c.nodes && e.pred.time_s == x.pred.time_s;
        best_known = best_known && best.pred.time_s == all.best.pred.time_s;
    };
    const auto lean = mmgp::search(s, mmgp::model_kind::mmgp, opt);
    CHECK(seen == all.all.size());
    CHECK(in_order);
    CHECK(best_known);
    CHECK(lean.all.empty());
    CHECK(lean.near_optimal_count == static_cast<std::int64_t>(all.near_optimal.size()));
    REQUIRE(lean.near_optimal.size() == 7);
    for (std::size_t i = 0; i < 7; ++i) {
        CHECK(lean.near_optimal[i].c.m == all.near_optimal[i].c.m);
        CHECK(lean.near_optimal[i].c.p == all.near_optimal[i].c.p);
        CHECK(lean.near_optimal[i].c.nodes == all.near_optimal[i].c.nodes);
    }
    // The 25 fastest, by an independent stable sort of the whole list (ties in search order).
    auto sorted = all.all;
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.pred.time_s < b.pred.time_s; });
    REQUIRE(lean.fastest.size() == 25);
    for (std::size_t i = 0; i < 25; ++i) {
        CHECK(lean.fastest[i].c.m == sorted[i].c.m);
        CHECK(lean.fastest[i].c.p == sorted[i].c.p);
        CHECK(lean.fastest[i].c.nodes == sorted[i].c.nodes);
    }
    CHECK(lean.fastest.front().c.nodes == lean.best.c.nodes);
}

TEST_CASE("[H] §4.4: PBPI's predicted optimum on the QS20 is m = 4, p = 4") {
    auto r = mmgp::search(mmgp::load_scenario("pbpi-qs20"), mmgp::model_kind::mmgp);
    CHECK(r.best.c.m == 4);
    CHECK(r.best.c.p == 4);
    CHECK(r.feasible == 50);  // sum over m = 1..16 of floor(16 / m)
}

TEST_CASE("Roadrunner scale: 3,060 triblades, m*p <= 32") {
    mmgp::scenario s = mmgp::load_scenario("pbpi-roadrunner");
    std::int64_t per_node = 0;
    for (int m = 1; m <= 32; ++m) per_node += 32 / m;
    CHECK(mmgp::count_feasible(s) == per_node * 3060);
    auto r = mmgp::search(s, mmgp::model_kind::mmgp, {false});
    CHECK(r.best.c.nodes > 1);  // strong scaling: more nodes split T_apu until communication dominates
    CHECK(r.best.pred.parts.communication > 0);
    CHECK(r.best.c.m * r.best.c.p <= 32);
}

TEST_CASE("numerical safety: huge ranges are counted exactly or refused, never wrapped") {
    json doc = {{"platform", {{"hpu_contexts", 1}, {"apus", 2000000000}, {"nodes", 1000000000}, {"O_offload", 0}, {"T_csw", 0}, {"alpha", 1.2}}},
                {"application", {{"N", 1}, {"T_hpu", 1.0}, {"T_apu", 100.0}, {"C_apu", 0}, {"g", 0}}},
                {"search", {{"m", {1, 1000000000000LL}}, {"p", {1, 1000000000000LL}}, {"nodes", {1, 1}}}}};
    mmgp::scenario s = mmgp::parse_scenario(doc.dump(), "huge.json");
    // sum over m of floor(2e9 / m), computed independently in blocks below a small bound.
    json small = doc;
    small["platform"]["apus"] = 1000;
    small["search"]["m"] = {1, 1000};
    small["search"]["p"] = {1, 1000};
    std::int64_t brute = 0;
    for (int m = 1; m <= 1000; ++m) brute += 1000 / m;
    CHECK(mmgp::count_feasible(mmgp::parse_scenario(small.dump(), "small.json")) == brute);
    // apus 2e9 is searched up to 2^30 (max_searched_count): 2^30 * H(2^30) ~ 2.29e10, no overflow, no hang.
    CHECK(mmgp::count_feasible(s) > 22000000000LL);
    CHECK(mmgp::count_feasible(s) < 23500000000LL);
    try {
        mmgp::search(s, mmgp::model_kind::mmgp, {false});
        FAIL("no error");
    } catch (const mmgp::input_error& e) {
        CHECK(std::string(e.what()).find("huge.json: /search: expected a search space of at most 200000000 configurations") == 0);
    }
    // A single huge m evaluates without a table of that size.
    doc["search"] = {{"m", 1000000000}, {"p", 1}, {"nodes", 1}};
    mmgp::scenario one = mmgp::parse_scenario(doc.dump(), "one.json");
    auto r = mmgp::search(one, mmgp::model_kind::mmgp);
    CHECK(r.best.pred.time_s == mmgp::test::approx(1e9 * 1.2 * 1.0 + 100.0 / 1e9));  // 1e9 processes on 1 context
}

TEST_CASE("numerical safety: m or p at the int's top is refused as outside the searched counts, never wrapped") {
    json doc = {{"platform", {{"hpu_contexts", 1}, {"apus", 2147483647}, {"O_offload", 0}, {"T_csw", 0}, {"alpha", 1.2}}},
                {"application", {{"N", 1}, {"T_hpu", 1.0}, {"T_apu", 100.0}, {"C_apu", 0}, {"g", 0}}},
                {"search", {{"m", 1}, {"p", 2147483647}, {"nodes", 1}}}};
    for (const char* key : {"p", "m"}) {
        json d = doc;
        d["search"]["m"] = 1, d["search"]["p"] = 1;
        d["search"][key] = 2147483647;
        try {
            mmgp::search(mmgp::parse_scenario(d.dump(), "top.json"), mmgp::model_kind::mmgp);
            FAIL("no error");
        } catch (const mmgp::input_error& e) {
            CHECK(std::string(e.what()).find("m, p and nodes are searched up to 1073741824") != std::string::npos);
        }
    }
    // The last searched p: evaluated, the loops end there.
    doc["search"]["p"] = {1073741820, 1073741824};
    doc["application"]["T_hpu"] = 0.0;  // T_apu / p alone: the last p the fastest
    auto r = mmgp::search(mmgp::parse_scenario(doc.dump(), "top.json"), mmgp::model_kind::mmgp);
    CHECK(r.best.c.p == 1073741824);
    CHECK(r.all.size() == 5);
}

TEST_CASE("a row of p longer than the search's chunk: the fastest found wherever it lies") {
    // Accelerator work alone (T_apu / p): every larger p is faster, so the fastest is the row's last, in its
    // fourth chunk of 65,536; a second row (m = 2) ends at 100,000.
    json doc = {{"platform", {{"hpu_contexts", 2}, {"apus", 200000}, {"O_offload", 0}, {"T_csw", 0}, {"alpha", 1.0}}},
                {"application", {{"N", 1}, {"T_hpu", 0.0}, {"T_apu", 1000.0}, {"C_apu", 0}, {"g", 0}}},
                {"search", {{"m", {1, 2}}, {"p", {1, 200000}}, {"nodes", 1}}}};
    auto r = mmgp::search(mmgp::parse_scenario(doc.dump(), "long.json"), mmgp::model_kind::mmgp);
    CHECK(r.best.c.p * r.best.c.m == 200000);
    CHECK(r.best.pred.time_s == mmgp::test::approx(1000.0 / 200000));
}

TEST_CASE("without a visitor, pass 2 evaluates only the rows pass 1 marked, and finds what the full search finds") {
    // Compared with the search that keeps every configuration: the best, the count and order of the near-optimal
    // set, and the fastest_max fastest with ties in search order, on dedicated hardware (closed-form rows),
    // on time-shared cores (layer (c), evaluated per p) and on a flat program whose times tie across p.
    auto check_same = [](const mmgp::scenario& s, std::size_t fastest_max) {
        const auto all = mmgp::search(s, mmgp::model_kind::mmgp);
        mmgp::search_options opt(false);
        opt.fastest_max = fastest_max;
        const auto lean = mmgp::search(s, mmgp::model_kind::mmgp, opt);
        auto same = [](const mmgp::ranked& a, const mmgp::ranked& b) {
            return a.c.m == b.c.m && a.c.p == b.c.p && a.c.nodes == b.c.nodes && a.pred.time_s == b.pred.time_s;
        };
        CHECK(same(lean.best, all.best));
        CHECK(lean.near_optimal_count == static_cast<std::int64_t>(all.near_optimal.size()));
        REQUIRE(lean.near_optimal.size() == all.near_optimal.size());
        bool near_same = true;
        for (std::size_t i = 0; i < all.near_optimal.size(); ++i) near_same = near_same && same(lean.near_optimal[i], all.near_optimal[i]);
        CHECK(near_same);
        auto sorted = all.all;  // an independent stable sort: ties in search order
        std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.pred.time_s < b.pred.time_s; });
        REQUIRE(lean.fastest.size() == std::min(fastest_max, sorted.size()));
        bool fastest_same = true;
        for (std::size_t i = 0; i < lean.fastest.size(); ++i) fastest_same = fastest_same && same(lean.fastest[i], sorted[i]);
        CHECK(fastest_same);
    };
    SUBCASE("Roadrunner, 40 nodes, tolerance 1 % and 30 %") {
        mmgp::scenario s = mmgp::load_scenario("pbpi-roadrunner");
        s.space.nodes = {1, 40};
        check_same(s, 25);
        s.space.tolerance = 0.3;
        check_same(s, 200);
    }
    SUBCASE("time-shared cores") {
        json doc = {{"platform", {{"hpu_contexts", 2}, {"cores", 2}, {"apus", 12}, {"O_offload", 3e-7}, {"T_csw", 1e-6},
                                  {"T_wake", 2e-5}, {"alpha", 1.0}}},
                    {"application", {{"decomposition", "task"}, {"units", 16}, {"N", 500}, {"T_hpu", 0.01}, {"T_apu", 0.5},
                                     {"C_apu", 0.01}, {"g", 1e-6}}},
                    {"search", {{"m", {1, 12}}, {"p", {1, 12}}, {"tolerance", 0.05}}}};
        check_same(mmgp::parse_scenario(doc.dump(), "ts.json"), 10);
    }
    SUBCASE("a program whose time does not depend on p: every row ties") {
        json doc = {{"platform", {{"hpu_contexts", 4}, {"apus", 16}, {"O_offload", 0}, {"T_csw", 0}, {"alpha", 1.0}}},
                    {"application", {{"N", 0}, {"T_hpu", 1.0}, {"T_apu", 0}, {"C_apu", 0.5}, {"g", 0}}},
                    {"search", {{"m", {1, 16}}, {"p", {1, 16}}, {"tolerance", 0}}}};
        check_same(mmgp::parse_scenario(doc.dump(), "flat.json"), 30);
    }
}

TEST_CASE("no negative time: host contexts at the top of their range, a negative O_col intercept") {
    // Every m of pbpi-qs20 (m <= 16) has a context of its own from H = 16 on: H = 2^31 - 1 predicts the same.
    mmgp::scenario s16 = mmgp::load_scenario("pbpi-qs20"), sbig = s16;
    s16.plat.hpu_contexts = 16;
    sbig.plat.hpu_contexts = 2147483647;
    const auto a = mmgp::search(s16, mmgp::model_kind::mmgp), b = mmgp::search(sbig, mmgp::model_kind::mmgp);
    REQUIRE(a.all.size() == b.all.size());
    for (std::size_t i = 0; i < a.all.size(); ++i) {
        CHECK(b.all[i].pred.time_s == a.all[i].pred.time_s);
        CHECK(b.all[i].pred.parts.host >= 0);
    }
    // A negative O_col is refused as the scenario is read, naming it; given past the reader, the search refuses
    // the negative time it makes, naming the configuration.
    CHECK_THROWS_WITH_AS(
        mmgp::load_scenario("pbpi-qs20", mmgp::scenario_edits{"", R"({"O_col": {"linear": {"intercept": -5, "slope": 0}}})", ""}),
        doctest::Contains("/application/O_col/linear: expected a linear form not negative for any searched m"),
        mmgp::input_error);
    // Only the m the model asks for count: O_col(2) < 0 is no fault of a search of m = 3..4 (qs20: H = 4);
    // past H the round sizes 1..H are asked for too, 2 among them.
    const char* dip = R"({"O_col": {"linear": {"intercept": -1e-3, "slope": 4.5e-4}}})";
    CHECK_NOTHROW(mmgp::load_scenario("pbpi-qs20", mmgp::scenario_edits{"", dip, R"({"m": [3, 4]})"}));
    CHECK_THROWS_WITH_AS(mmgp::load_scenario("pbpi-qs20", mmgp::scenario_edits{"", dip, R"({"m": [3, 5]})"}),
                         doctest::Contains("found O_col(2) = -0.0001"), mmgp::input_error);
    mmgp::scenario neg = mmgp::load_scenario("pbpi-qs20");
    neg.app.O_col.kind = mmgp::m_function::form::linear;
    neg.app.O_col.intercept = -5;
    neg.app.O_col.slope = 0;
    try {
        (void)mmgp::search(neg, mmgp::model_kind::mmgp, {false});
        FAIL("a negative prediction was accepted");
    } catch (const mmgp::input_error& e) {
        CHECK(e.expected() == "parameters whose predicted times are >= 0");
        CHECK(e.found().find("a negative prediction") == 0);
    }
}
