// Objectives (libmmgp/src/search/objective.cpp) and the search by cost (search/search.cpp): the streamed front against a
// brute-force front, the knee and the thinning, and every cost choice, near-optimal set and budget against
// an exhaustive pass over the kept configurations.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "mmgp/objective.hpp"
#include "mmgp/search.hpp"
#include "mmgp/tune.hpp"

namespace {

using mmgp::configuration;
using mmgp::objective;

bool same(const configuration& a, const configuration& b) { return a.m == b.m && a.p == b.p && a.nodes == b.nodes; }

// The points that no other beats in time and cost (of exact ties, the first), fastest first.
std::vector<mmgp::front_point> brute_front(const std::vector<mmgp::front_point>& xs) {
    std::vector<mmgp::front_point> out;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        bool beaten = false;
        for (std::size_t j = 0; j < xs.size() && !beaten; ++j) {
            if (i == j) continue;
            const bool no_worse = xs[j].time_s <= xs[i].time_s && xs[j].cost <= xs[i].cost;
            const bool better = xs[j].time_s < xs[i].time_s || xs[j].cost < xs[i].cost;
            beaten = no_worse && (better || j < i);
        }
        if (!beaten) out.push_back(xs[i]);
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.time_s < b.time_s; });
    return out;
}

}  // namespace

TEST_CASE("objective names, units and values") {
    objective o;
    CHECK(mmgp::parse_objective("node-hours", o));
    CHECK(o == objective::node_hours);
    CHECK(mmgp::parse_objective("core-hours", o));
    CHECK(o == objective::core_hours);
    CHECK_FALSE(mmgp::parse_objective("node_hours", o));
    CHECK(mmgp::to_string(objective::time) == "time");
    const configuration c{8, 2, 64, mmgp::policy::edtlp};
    CHECK(mmgp::objective_value(objective::time, c, 36.0) == 36.0);
    CHECK(mmgp::objective_value(objective::node_hours, c, 36.0) == doctest::Approx(0.64));
    CHECK(mmgp::objective_value(objective::core_hours, c, 36.0) == doctest::Approx(0.64 * 16));
}

TEST_CASE("the streamed front equals the brute-force front, in any order of offers") {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<mmgp::front_point> xs;
        const int n = 1 + static_cast<int>(rng() % 60);
        for (int i = 0; i < n; ++i) {
            configuration c{1 + static_cast<int>(rng() % 4), 1 + static_cast<int>(rng() % 4), 1 + static_cast<int>(rng() % 16),
                            mmgp::policy::edtlp};
            const double t = 1 + static_cast<double>(rng() % 20);  // few values: ties in time and in cost
            xs.push_back({c, t, mmgp::core_hours(c, t)});
        }
        mmgp::pareto_front f(objective::core_hours);
        for (const auto& x : xs) f.offer(x.c, x.time_s);
        const auto got = f.points();
        const auto want = brute_front(xs);
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            CHECK(got[i].time_s == want[i].time_s);
            CHECK(got[i].cost == want[i].cost);
        }
        for (std::size_t i = 1; i < got.size(); ++i) CHECK(got[i].cost < got[i - 1].cost);  // cost falls with time
        for (const auto& x : xs) CHECK(f.dominated(x.time_s, x.cost));
    }
}

TEST_CASE("knee and thinning keep the ends, the knee and what is asked, at most max_rows") {
    // An L-shaped front: cost falls steeply at first, then time rises steeply; the knee is the corner.
    std::vector<mmgp::front_point> f;
    for (int i = 0; i < 60; ++i) {
        const double t = i < 30 ? 10.0 + 0.01 * i : 10.3 + (i - 29) * 2.0;
        const double cost = i < 30 ? std::pow(10.0, 3.0 - 0.1 * i) : std::pow(10.0, 0.0 - 0.01 * (i - 29));
        f.push_back({configuration{1, 1, 60 - i, mmgp::policy::edtlp}, t, cost});
    }
    const std::size_t knee = mmgp::knee_of(f);
    CHECK(knee >= 28);
    CHECK(knee <= 31);
    const auto rows = mmgp::thin_front(f, {45}, 20);
    CHECK(rows.size() == 20);
    CHECK(std::is_sorted(rows.begin(), rows.end()));
    CHECK(std::adjacent_find(rows.begin(), rows.end()) == rows.end());
    for (std::size_t must : {std::size_t{0}, f.size() - 1, knee, std::size_t{45}})
        CHECK(std::binary_search(rows.begin(), rows.end(), must));
    CHECK(mmgp::thin_front({f.begin(), f.begin() + 5}, {}, 20).size() == 5);
}

namespace {

// Everything a cost search should give, computed from every configuration kept.
struct expected {
    configuration fastest, best;
    std::int64_t near = 0;
};

expected by_hand(const mmgp::search_result& all, objective goal, double within, double tolerance, double budget) {
    expected e;
    auto allowed_budget = [&](const mmgp::ranked& x) { return budget <= 0 || mmgp::node_hours(x.c, x.pred.time_s) <= budget; };
    const mmgp::ranked* fastest = nullptr;
    for (const auto& x : all.all)
        if (allowed_budget(x) && (!fastest || x.pred.time_s < fastest->pred.time_s)) fastest = &x;
    REQUIRE(fastest);
    e.fastest = fastest->c;
    const double window = goal == objective::time ? INFINITY : fastest->pred.time_s * (1 + within);
    const mmgp::ranked* best = nullptr;
    auto key = [&](const mmgp::ranked& x) { return mmgp::objective_value(goal, x.c, x.pred.time_s); };
    for (const auto& x : all.all) {
        if (!allowed_budget(x) || x.pred.time_s > window) continue;
        if (!best || key(x) < key(*best) || (key(x) == key(*best) && x.pred.time_s < best->pred.time_s)) best = &x;
    }
    REQUIRE(best);
    e.best = best->c;
    for (const auto& x : all.all)
        e.near += allowed_budget(x) && x.pred.time_s <= window && key(x) <= key(*best) * (1 + tolerance);
    return e;
}

}  // namespace

TEST_CASE("search by cost: the choice, the window, the budget and the near-optimal set match an exhaustive pass") {
    mmgp::scenario s = mmgp::load_scenario("pbpi-roadrunner");
    s.space.nodes = {1, 160};
    s.space.m = {1, 8};
    const auto all = mmgp::search(s, mmgp::model_kind::mmgp);  // keeps every configuration
    for (objective goal : {objective::time, objective::node_hours, objective::core_hours})
        for (double budget : {0.0, 0.05, 0.2})
            for (double within : {0.05, 0.3}) {
                CAPTURE(mmgp::to_string(goal));
                CAPTURE(budget);
                CAPTURE(within);
                const expected e = by_hand(all, goal, within, s.space.tolerance, budget);
                mmgp::search_options o(false);
                o.minimise = goal;
                o.within = within;
                o.budget_node_hours = budget;
                o.front = true;
                o.near_optimal_max = 5;
                const auto r = mmgp::search(s, mmgp::model_kind::mmgp, o);
                CHECK(same(r.quickest.c, e.fastest));
                CHECK(same(r.best.c, e.best));
                CHECK(r.near_optimal_count == e.near);
                REQUIRE_FALSE(r.near_optimal.empty());
                CHECK(same(r.near_optimal.front().c, r.best.c));
                // The streamed search and the kept one agree.
                mmgp::search_options kept = o;
                kept.keep_all = true;
                const auto rk = mmgp::search(s, mmgp::model_kind::mmgp, kept);
                CHECK(same(rk.best.c, r.best.c));
                CHECK(rk.near_optimal_count == r.near_optimal_count);
                // The front: every configuration is beaten or matched by a point of it.
                std::vector<mmgp::front_point> pts;
                const objective cost = goal == objective::core_hours ? goal : objective::node_hours;
                for (const auto& x : all.all) pts.push_back({x.c, x.pred.time_s, mmgp::objective_value(cost, x.c, x.pred.time_s)});
                const auto want = brute_front(pts);
                REQUIRE(r.front.size() == want.size());
                for (std::size_t i = 0; i < want.size(); ++i) CHECK(same(r.front[i].c, want[i].c));
            }
}

TEST_CASE("search by cost: ranked by cost in the window, a budget below everything refused") {
    mmgp::scenario s = mmgp::load_scenario("pbpi-roadrunner");
    s.space.nodes = {1, 128};
    mmgp::search_options o(false);
    o.minimise = objective::node_hours;
    o.fastest_max = 10;
    const auto r = mmgp::search(s, mmgp::model_kind::mmgp, o);
    REQUIRE(r.fastest.size() == 10);
    CHECK(same(r.fastest.front().c, r.best.c));
    for (std::size_t i = 1; i < r.fastest.size(); ++i) {
        const auto& a = r.fastest[i - 1];
        const auto& b = r.fastest[i];
        CHECK(mmgp::node_hours(a.c, a.pred.time_s) <= mmgp::node_hours(b.c, b.pred.time_s));
        CHECK(b.pred.time_s <= r.quickest.pred.time_s * 1.05);
    }
    // The cheaper choice is slower than the fastest, and cheaper.
    CHECK(r.best.pred.time_s >= r.quickest.pred.time_s);
    CHECK(mmgp::node_hours(r.best.c, r.best.pred.time_s) < mmgp::node_hours(r.quickest.c, r.quickest.pred.time_s));
    o.budget_node_hours = 1e-6;
    try {
        (void)mmgp::search(s, mmgp::model_kind::mmgp, o);
        FAIL("a budget below every configuration was accepted");
    } catch (const mmgp::budget_error& e) {
        CHECK(e.cheapest() > 1e-6);
        CHECK(std::string(e.what()).find("the cheapest configuration") != std::string::npos);
    }
}

TEST_CASE("pbpi-roadrunner by node-hours: about a tenth of the fastest's node-hours, within 5 % of its time") {
    const mmgp::scenario s = mmgp::load_scenario("pbpi-roadrunner");
    mmgp::search_options o(false);
    o.minimise = objective::node_hours;
    const auto r = mmgp::search(s, mmgp::model_kind::mmgp, o);
    const double nh = mmgp::node_hours(r.best.c, r.best.pred.time_s);
    const double fastest_nh = mmgp::node_hours(r.quickest.c, r.quickest.pred.time_s);
    MESSAGE("chosen ", r.best.c.m, "x", r.best.c.p, " on ", r.best.c.nodes, " nodes: ", r.best.pred.time_s, " s, ", nh,
            " node-h; the fastest ", r.quickest.c.nodes, " nodes: ", fastest_nh, " node-h");
    CHECK(r.best.pred.time_s <= 1.05 * r.quickest.pred.time_s);
    CHECK(nh < 0.2 * fastest_nh);
    CHECK(r.best.c.nodes < r.quickest.c.nodes);
}

TEST_CASE("tune by node-hours: the cheapest within the window of a noiseless space") {
    // 1..8 nodes x m 1..2 (p = 1): time = 1 + 8 / (m nodes); the fastest is 8 nodes, m = 2 (1.5 s, 12 node-s).
    // Within 30 % of it (1.95 s): m = 2 on 5 nodes (1.8 s, 9 node-s) is the cheapest (4 nodes: 2.0 s, too slow).
    mmgp::scenario s = mmgp::load_scenario("pbpi-qs20");
    s.plat.nodes = 8;
    std::vector<configuration> space;
    for (int n = 1; n <= 8; ++n)
        for (int m = 1; m <= 2; ++m) space.push_back({m, 1, n, mmgp::policy::edtlp});
    mmgp::tune_options to;
    to.use_model = false;
    to.minimise = objective::node_hours;
    to.within = 0.3;
    to.max_runs = 200;
    mmgp::tuner t(s, space, to);
    auto time_of = [](const configuration& c) { return 1.0 + 8.0 / (c.m * c.nodes); };
    std::mt19937 rng(3);
    std::normal_distribution<double> z(0.0, 0.01);
    mmgp::tune_assessment a;
    for (int k = 0; k < 200; ++k) {
        a = t.assess();
        if (a.stop != mmgp::tune_stop::none || !a.has_next) break;
        t.add(a.next, {time_of(space[a.next]) * std::exp(z(rng)), mmgp::run_outcome::ok});
    }
    REQUIRE(a.has_chosen);
    CHECK(space[a.chosen].nodes == 5);
    CHECK(space[a.chosen].m == 2);
}

TEST_CASE("a front past its bound is thinned, its ends kept, and the search's choice stays exact") {
    mmgp::pareto_front small(objective::node_hours, 8);
    for (int n = 1; n <= 100; ++n) small.offer_fastest({1, 1, n, mmgp::policy::edtlp}, 100.0 / n + 1.0);
    CHECK(small.thinned());
    CHECK(small.size() <= 8);
    const auto pts = small.points();
    CHECK(pts.front().c.nodes == 100);  // the fastest
    CHECK(pts.back().c.nodes == 1);     // the cheapest
    // A space whose node-hours front has more points than the bound: every node count is faster and dearer.
    const std::string doc =
        "{\"schema\": \"mmgp/1\", \"platform\": {\"hpu_contexts\": 2, \"apus\": 2, \"nodes\": 40000, \"O_offload\": 1e-6, "
        "\"T_csw\": 1e-6, \"alpha\": 1.2}, \"application\": {\"N\": 100, \"T_hpu\": 0.5, \"T_apu\": 5e4, \"C_apu\": 0.1, "
        "\"g\": 1e-5}, \"search\": {\"m\": [1, 2], \"p\": [1, 2], \"nodes\": [1, 40000]}}";
    const mmgp::scenario s = mmgp::parse_scenario(doc, "wide.json");
    const auto all = mmgp::search(s, mmgp::model_kind::mmgp);
    for (double budget : {0.0, 10.0})  // 10 node-hours: at most about 18,000 nodes
        for (objective goal : {objective::time, objective::node_hours, objective::core_hours}) {
            CAPTURE(budget);
            CAPTURE(mmgp::to_string(goal));
            mmgp::search_options o(false);
            o.minimise = goal;
            o.within = 0.5;
            o.budget_node_hours = budget;
            o.front = true;
            const auto r = mmgp::search(s, mmgp::model_kind::mmgp, o);
            CHECK(r.front.size() <= mmgp::max_front_points);
            const expected e = by_hand(all, goal, 0.5, s.space.tolerance, budget);
            CHECK(same(r.best.c, e.best));
            CHECK(same(r.quickest.c, e.fastest));
            CHECK(r.near_optimal_count == e.near);
        }
}
