// --objective, --within, --max-nodes, --budget and the time-cost front (cli/cost.hpp).
#include "cost.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common.hpp"
#include "options.hpp"
#include "svg.hpp"

namespace mmgp::cli {

void add_objective_options(CLI::App* sub, objective_options_cli& o, budget_option budget) {
    add_checked(sub, "--objective", o.objective,
                "What the choice minimises: time (default), node-hours (nodes x time) or core-hours (m x p x nodes x "
                "time): the cheapest configuration within --within of the fastest time");
    add_checked(sub, "--within", o.within,
                "A cost objective's window, a fraction of the fastest time: 0.05 (the default) takes the cheapest "
                "configuration at most 5 % slower than the fastest");
    add_checked(sub, "--max-nodes", o.max_nodes, "Search at most this many nodes");
    if (budget == budget_option::offered)
        add_checked(sub, "--budget", o.budget,
                    "The production run's node-hours at most: dearer configurations are never chosen");
}

objective objective_of(const objective_options_cli& o) {
    objective goal = objective::time;
    if (!o.objective.empty() && !parse_objective(o.objective, goal))  // the option table checks the words first
        throw usage_error("--objective: expected time, node-hours or core-hours, found \"" + o.objective + "\"");
    return goal;
}

void apply_objective_options(const objective_options_cli& o, scenario& s, search_options& opt) {
    opt.minimise = objective_of(o);
    if (o.within && opt.minimise == objective::time)
        throw usage_error(fmt::format("--within: expected --objective node-hours or core-hours beside it (the time "
                                      "objective takes the fastest), found --within {:g} alone",
                                      *o.within));
    opt.within = o.within.value_or(0.05);
    if (o.max_nodes) {
        if (*o.max_nodes < s.space.nodes.lo)
            throw usage_error(fmt::format("--max-nodes: expected at least the fewest nodes searched ({}), found {}",
                                          s.space.nodes.lo, *o.max_nodes));
        s.space.nodes.hi = std::min<std::int64_t>(s.space.nodes.hi, *o.max_nodes);
    }
    opt.budget_node_hours = o.budget.value_or(0.0);
}

std::string objective_phrase(const search_options& opt) {
    if (opt.minimise == objective::time)
        return opt.budget_node_hours > 0 ? fmt::format("time (the fastest within a budget of {:.4g} node-hours)",
                                                       opt.budget_node_hours)
                                         : "time";
    return fmt::format("{} (the cheapest within {:g} % of the fastest time{})", to_string(opt.minimise),
                       100 * opt.within,
                       opt.budget_node_hours > 0 ? fmt::format(", at most {:.4g} node-hours", opt.budget_node_hours)
                                                 : std::string());
}

namespace {
std::string hours(double h) { return fmt::format("{:.4g}", h); }
}  // namespace

std::string value_phrase(const ranked& x, objective goal, bool cluster) {
    std::string out = human_time(x.pred.time_s);
    if (goal == objective::core_hours)
        out += fmt::format(", {} core-h", hours(core_hours(x.c, x.pred.time_s)));
    else if (goal == objective::node_hours || cluster)
        out += fmt::format(", {} node-h", hours(node_hours(x.c, x.pred.time_s)));
    return out;
}

void refuse_budget(const budget_error& e) {
    // The least budget, rounded up to the 6 digits shown: the value printed is one the search takes (rounded to
    // nearest it could fall below the cheapest and be refused in turn).
    double least = e.cheapest();
    if (least > 0 && std::isfinite(least)) {
        const double unit = std::pow(10.0, std::floor(std::log10(least)) - 5);
        least = std::ceil(least / unit * (1 - 1e-15)) * unit;
        if (std::stod(fmt::format("{:.6g}", least)) < e.cheapest()) least += unit;
    }
    throw usage_error(fmt::format("--budget: expected at least {:.6g} node-hours (the cheapest configuration), found {:g}",
                                  least, e.budget()));
}

bool same_mapping(const configuration& a, const configuration& b) noexcept {
    return a.m == b.m && a.p == b.p && a.nodes == b.nodes;
}

namespace {
double efficiency(const front_point& x, const ranked& base) {
    return node_hours(base.c, base.pred.time_s) / node_hours(x.c, x.time_s);
}

// The index of the chosen point on the front (front.size() when it is not on it).
std::size_t chosen_index(const std::vector<front_point>& front, const ranked& chosen) {
    for (std::size_t i = 0; i < front.size(); ++i)
        if (same_mapping(front[i].c, chosen.c)) return i;
    return front.size();
}
}  // namespace

std::string front_table(const std::vector<front_point>& front, const ranked& chosen, const ranked& base,
                        objective cost) {
    if (front.empty()) return "";
    const std::size_t ci = chosen_index(front, chosen), knee = knee_of(front);
    std::vector<std::size_t> keep;
    if (ci < front.size()) keep.push_back(ci);
    const std::vector<std::size_t> rows = thin_front(front, keep, 20);
    std::string out = fmt::format(
        "Time against {} ({} point{} on the Pareto front{}; efficiency against the fastest at {} node{}):\n",
        cost == objective::core_hours ? "core-hours" : "node-hours", front.size(), front.size() == 1 ? "" : "s",
        rows.size() < front.size() ? fmt::format(", {} shown", rows.size()) : std::string(), base.c.nodes,
        base.c.nodes == 1 ? "" : "s");
    out += fmt::format("  {:>7} {:>9} {:>11} {:>12} {:>12} {:>10}\n", "nodes", "m x p", "time", "node-hours", "core-hours",
                       "efficiency");
    for (std::size_t i : rows) {
        const auto& x = front[i];
        std::string mark;
        if (i == 0) mark += " fastest";
        if (i + 1 == front.size()) mark += " cheapest";
        if (i == knee && front.size() >= 3) mark += " knee";
        if (i == ci) mark += " <- chosen";
        const double e = 100 * efficiency(x, base);
        out += fmt::format("  {:>7} {:>9} {:>11} {:>12.4g} {:>12.4g} {:>9}{}\n", x.c.nodes,
                           fmt::format("{} x {}", x.c.m, x.c.p), human_time(x.time_s), node_hours(x.c, x.time_s),
                           core_hours(x.c, x.time_s), e >= 10 ? fmt::format("{:.0f} %", e) : fmt::format("{:.2g} %", e),
                           mark);
    }
    if (ci == front.size())
        out += fmt::format("  chosen {} is not on this front (a budget or the window left the front's points out)\n",
                           label(chosen.c));
    return out;
}

std::string front_json(const std::vector<front_point>& front, const ranked& chosen, const ranked& base) {
    const std::size_t knee = knee_of(front), ci = chosen_index(front, chosen);
    std::vector<std::size_t> keep{knee};
    if (ci < front.size()) keep.push_back(ci);
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::size_t i : thin_front(front, keep, json_front_max)) {
        const auto& x = front[i];
        list.push_back({{"m", x.c.m}, {"p", x.c.p}, {"nodes", x.c.nodes}, {"time_s", json_number(x.time_s)},
                        {"node_hours", json_number(node_hours(x.c, x.time_s))},
                        {"core_hours", json_number(core_hours(x.c, x.time_s))},
                        {"efficiency", json_number(efficiency(x, base))}, {"knee", i == knee && front.size() >= 3},
                        {"chosen", same_mapping(x.c, chosen.c)}});
    }
    return list.dump();
}

std::string front_svg(const std::vector<front_point>& front, const ranked& chosen, objective goal,
                      const std::string& title) {
    // The x axis is the front's cost: core-hours where they are the goal, else node-hours (the time goal's too).
    const objective cost = goal == objective::core_hours ? objective::core_hours : objective::node_hours;
    double tlo = chosen.pred.time_s, thi = tlo, clo = objective_value(cost, chosen.c, tlo), chi = clo;
    for (const auto& x : front) {
        tlo = std::min(tlo, x.time_s), thi = std::max(thi, x.time_s);
        clo = std::min(clo, x.cost), chi = std::max(chi, x.cost);
    }
    auto widen = [](double& lo, double& hi) {
        if (!(lo > 0)) lo = hi > 0 ? hi / 10 : 1e-9;
        if (hi <= lo * 1.0001) lo /= 1.5, hi *= 1.5;
        lo /= 1.15, hi *= 1.15;
    };
    widen(tlo, thi), widen(clo, chi);
    const char* unit = cost == objective::core_hours ? "core-hours" : "node-hours";
    const svg_plot plot({clo, chi, true, fmt::format("{} per run ({}, log scale)", unit, unit)},
                        {tlo, thi, true, "time per run (s, log scale)"}, title);
    std::string s = plot.begin();
    std::string path;
    for (const auto& x : front) path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", plot.px(x.cost), plot.py(x.time_s));
    if (!path.empty()) s += "<path d=\"" + path + "\" fill=\"none\" stroke=\"#246\"/>\n";
    const std::size_t knee = knee_of(front);
    for (std::size_t i = 0; i < front.size(); ++i) {
        const auto& x = front[i];
        const bool knee_point = i == knee && front.size() >= 3;
        s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{}: {} s, {:.4g} {}</title></circle>\n",
                         plot.px(x.cost), plot.py(x.time_s), knee_point ? 4 : 2.5, knee_point ? "#e90" : "#246",
                         label(x.c), fmt::format("{:.4g}", x.time_s), x.cost, unit);
    }
    const double cc = objective_value(cost, chosen.c, chosen.pred.time_s);
    s += fmt::format("<circle cx=\"{0:.1f}\" cy=\"{1:.1f}\" r=\"6\" fill=\"none\" stroke=\"#d22\" stroke-width=\"2\"/>"
                     "<text x=\"{2:.1f}\" y=\"{3:.1f}\" fill=\"#d22\">chosen: {4}</text>\n",
                     plot.px(cc), plot.py(chosen.pred.time_s), plot.px(cc) + 9, plot.py(chosen.pred.time_s) - 8,
                     xml_text(label(chosen.c)));
    return s + svg_plot::finish();
}

std::string near_optimal_summary(const search_result& r, double tolerance, objective goal) {
    const auto n = r.near_optimal_count;
    const std::string what = goal == objective::time ? "of the best" : fmt::format("of the chosen one's {}", to_string(goal));
    std::string out = fmt::format("Near-optimal set (within {:g} % {}, {} configuration{}): ", 100 * tolerance, what, n,
                                  n == 1 ? "" : "s");
    if (n <= static_cast<std::int64_t>(r.near_optimal.size())) {  // every one listed, as they are
        for (std::size_t i = 0; i < r.near_optimal.size(); ++i)
            out += fmt::format("{}{} ({})", i ? ", " : "", label(r.near_optimal[i].c), human_time(r.near_optimal[i].pred.time_s));
        return out + "\n";
    }
    const auto& sp = r.near_optimal_span;
    auto range = [](int lo, int hi) { return lo == hi ? fmt::format("{}", lo) : fmt::format("{}..{}", lo, hi); };
    out += fmt::format("nodes {}, m {}, p {}\n  best first: ", range(sp.nodes_lo, sp.nodes_hi), range(sp.m_lo, sp.m_hi),
                       range(sp.p_lo, sp.p_hi));
    const std::size_t shown = std::min<std::size_t>(r.near_optimal.size(), 4);
    for (std::size_t i = 0; i < shown; ++i)
        out += fmt::format("{}{} ({})", i ? ", " : "", label(r.near_optimal[i].c), value_phrase(r.near_optimal[i], goal, false));
    return out + fmt::format(", ... ({} more)\n", n - static_cast<std::int64_t>(shown));
}

}  // namespace mmgp::cli
