// mmgp predict's reports (predict_report.hpp): the human report (the ranked table, the grid, the per-node table,
// why the best wins), --json and --csv streamed while the search evaluates, and --uncertainty's intervals. Called
// by cmd_predict.cpp, which runs the search; formats its records (mmgp/search_result.hpp) and calls the objective's
// phrases (cost.cpp).
#include "predict_report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "mmgp/uncertainty.hpp"

namespace mmgp::cli::predict {

namespace {

const char* part_names[] = {"host", "accelerator", "offload", "context switch", "communication", "spin", "start-up"};

double part(const breakdown& b, int i) {
    switch (i) {
        case 0: return b.host;
        case 1: return b.accelerator;
        case 2: return b.offload;
        case 3: return b.context_switch;
        case 4: return b.communication;
        case 5: return b.spin;
        default: return b.startup;
    }
}

// "vs m=16 p=1 nodes=1 (32.47 s, +9.1 %): host +5.04 s, offload -2.41 s"
std::string contrast(const ranked& best, const ranked& other, const char* why) {
    std::vector<difference> diffs;
    for (int i = 0; i < 7; ++i) diffs.emplace_back(part(other.pred.parts, i) - part(best.pred.parts, i), part_names[i]);
    largest_first(diffs);
    std::string list;
    int shown = 0;
    for (const auto& d : diffs) {
        if (shown == 3 || std::fabs(d.first) < 1e-3 * best.pred.time_s) break;
        add_difference(list, d);
        ++shown;
    }
    return fmt::format("  vs {} {} ({}, {:+.1f} %):", label(other.c), why, human_time(other.pred.time_s),
                       100.0 * (other.pred.time_s / best.pred.time_s - 1.0)) +
           (list.empty() ? " the same time" : list) + "\n";
}

void goal_lines(out_stream& out, const search_result& r, const goal_view& g) {
    if (!g.cluster && g.opt.minimise == objective::time && g.opt.budget_node_hours <= 0) return;
    out.print("Chosen by {}.{}\n", objective_phrase(g.opt), g.others.empty() ? "" : " The other objectives would choose:");
    for (const auto& o : g.others)
        out.print("  {:<11} {:<22} ({})\n", to_string(o.goal), label(o.best.c), value_phrase(o.best, o.goal, g.cluster));
    if (g.opt.minimise != objective::time && !same_mapping(r.quickest.c, r.best.c)) {
        const double cb = objective_value(g.opt.minimise, r.best.c, r.best.pred.time_s);
        const double cq = objective_value(g.opt.minimise, r.quickest.c, r.quickest.pred.time_s);
        out.print("  against the fastest, {} ({}): {:+.1f} % time for {:.3g}x fewer {}\n", label(r.quickest.c),
                  value_phrase(r.quickest, g.opt.minimise, g.cluster), 100.0 * (r.best.pred.time_s / r.quickest.pred.time_s - 1.0),
                  cq / cb, to_string(g.opt.minimise));
    }
}

// The ranked table: the fastest (under a cost objective, the cheapest of the window) with their breakdown.
void ranked_table(out_stream& out, const search_result& r, const goal_view& g) {
    const double best_t = r.best.pred.time_s;
    const objective goal = g.opt.minimise;
    if (goal == objective::time)
        out.print("Fastest {} of {} (seconds):\n", r.fastest.size(), r.feasible);
    else
        // The window's own count is not kept: the configurations evaluated are named as such.
        out.print("Cheapest {} in {} of those within {:g} % of the fastest time, of {} configurations (seconds; vs best "
                  "in {}):\n",
                  r.fastest.size(), to_string(goal), 100 * g.opt.within, r.feasible, to_string(goal));
    // A platform with sharing modes (a GPU node): which one each configuration uses.
    const bool shared = std::any_of(r.fastest.begin(), r.fastest.end(),
                                    [](const ranked& x) { return x.c.share != accelerator_sharing::dedicated; });
    out.print("{:>5} {:>5} {:>5} {:>6}{} {:>11} {:>8} {:>10} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10}{}\n", "rank", "m", "p",
              "nodes", shared ? fmt::format(" {:>11}", "sharing") : "", "time", "vs best", "host", "accelerator", "offload", "ctx switch", "comm", "spin", "start-up",
              g.cluster ? fmt::format(" {:>11}", goal == objective::core_hours ? "core-hours" : "node-hours") : "");
    const double best_key = objective_value(goal, r.best.c, best_t);
    bool any_extrap = false;
    for (std::size_t i = 0; i < r.fastest.size(); ++i) {
        const ranked& x = r.fastest[i];
        const breakdown& b = x.pred.parts;
        any_extrap = any_extrap || b.extrapolated;
        out.print(
            "{:>5} {:>5} {:>5} {:>6}{} {:>11.5g} {:>7.1f}% {:>10.4g} {:>11.4g} {:>10.4g} {:>10.4g} {:>10.4g} {:>10.4g} {:>10.4g}{}{}\n",
            i + 1, x.c.m, x.c.p, x.c.nodes, shared ? fmt::format(" {:>11}", to_string(x.c.share)) : "", x.pred.time_s, 100.0 * (objective_value(goal, x.c, x.pred.time_s) / best_key - 1.0),
            b.host, b.accelerator, b.offload, b.context_switch, b.communication, b.spin, b.startup,
            g.cluster ? fmt::format(" {:>11.4g}", objective_value(goal == objective::core_hours ? goal : objective::node_hours,
                                                                 x.c, x.pred.time_s))
                      : "",
            b.extrapolated ? " ~" : "");
    }
    if (any_extrap) out.print("  ~ communication cost extrapolated by the fitted latency-bandwidth model (outside the measured tables)\n");
}

// What bounds m·p: "m*p <= A"; with sharing modes, each mode's cap.
std::string feasibility_text(const scenario& s) {
    const std::vector<accelerator_sharing> modes = searched_modes(s);
    const std::int64_t cap = s.plat.capacity();
    if (modes.size() == 1 && modes.front() == accelerator_sharing::dedicated) return fmt::format("m*p <= {}", cap);
    std::string text = "sharing ";
    for (std::size_t i = 0; i < modes.size(); ++i)
        text += fmt::format("{}{}: {}", i ? "; " : "", to_string(modes[i]),
                            modes[i] == accelerator_sharing::time_sliced ? fmt::format("p <= {}", cap)
                                                                         : fmt::format("m*p <= {}", cap));
    return text;
}

}  // namespace

namespace {

// The scenario's lines: its model, platform, application and search, and the search's notes.
void scenario_lines(out_stream& out, const scenario& s, model_kind kind, const search_result& r) {
    const auto& pl = s.plat;
    const auto& app = s.app;
    const auto& sp = s.space;
    out.print("{} ({}): model {}{}, policy {}\n", one_line(s.name.empty() ? "scenario" : s.name), one_line(s.file), to_string(kind),
              s.communication.empty() ? "" : ", communication " + s.communication, to_string(sp.pol));
    out.print("platform {}: {} host contexts, {} accelerators per node, {} node{} available\n", pl.name,
              pl.hpu_contexts, pl.apus, pl.nodes, pl.nodes == 1 ? "" : "s");
    out.print("application {}: {} decomposition{}, {} scaling, N = {} phases{}\n", app.name, to_string(app.decomp),
              app.decomp == decomposition::task ? fmt::format(" ({} units)", app.units) : std::string(),
              to_string(app.scale), num(app.N), app.decomp == decomposition::task ? " per unit" : "");
    out.print("searched m {}..{}, p {}..{}, nodes {}..{}: {} feasible configurations ({})\n", sp.m.lo, sp.m.hi, sp.p.lo,
              sp.p.hi, sp.nodes.lo, sp.nodes.hi, r.feasible, feasibility_text(s));
    for (const auto& n : r.notes) out.print("note: {}\n", n);
    out.print("\n");
}

// The grid of m x p at the best node count (human_view::grid_fits: when it fits on a screen).
void mp_grid(out_stream& out, const search_space& sp, const search_result& r, const human_view& v) {
    out.print("Predicted time (s) at nodes={}{}; * marks the near-optimal set (within {:g} %):\n", r.best.c.nodes,
              r.best.c.share == accelerator_sharing::dedicated ? "" : fmt::format(" sharing={}", to_string(r.best.c.share)),
              100 * sp.tolerance);
    // Columns as wide as the widest value (7 at least), a space before it and the mark after: an 8-digit value
    // ran into the m label or its neighbour.
    const auto index = [&](int m, int p) {
        return static_cast<std::size_t>((m - v.m_min) * (v.p_max - v.p_min + 1) + p - v.p_min);
    };
    std::size_t width = 7;
    for (int m = v.m_min; m <= v.m_max; ++m)
        for (int p = v.p_min; p <= v.p_max; ++p)
            if (!std::isnan(v.grid[index(m, p)])) width = std::max(width, fmt::format("{:.4g}", v.grid[index(m, p)]).size());
    out.print("  m\\p");
    for (int p = v.p_min; p <= v.p_max; ++p) out.print("{:>{}}", p, width + 2);
    out.print("\n");
    for (int m = v.m_min; m <= v.m_max; ++m) {
        out.print("{:>5}", m);
        for (int p = v.p_min; p <= v.p_max; ++p) {
            const double t = v.grid[index(m, p)];
            if (std::isnan(t))
                out.print("{:>{}}", ".", width + 2);
            else
                out.print("{:>{}}{}", fmt::format("{:.4g}", t), width + 1, v.grid_near[index(m, p)] ? "*" : " ");
        }
        out.print("\n");
    }
    out.print("\n");
}

// The best mapping at each node count (cluster searches).
void best_per_node_count(out_stream& out, const human_view& v) {
    out.print("Best mapping per node count:\n");
    for (const auto& [n, x] : v.best_at)
        out.print("  nodes={:<6} m={:<3} p={:<3} {:>12}{}\n", n, x.c.m, x.c.p, human_time(x.pred.time_s),
                  x.pred.parts.extrapolated ? "  (communication extrapolated)" : "");
    out.print("\n");
}

// The best configuration, its breakdown, and what each alternative loses against it.
void best_and_why(out_stream& out, const search_result& r, const human_view& v, const goal_view& g) {
    const breakdown& bb = r.best.pred.parts;
    out.print("\nBest: {}, {}\n", label(r.best.c), value_phrase(r.best, g.opt.minimise, g.cluster));
    out.print("  = host {} + accelerator {} + offload {} + context switch {} + communication {}", human_time(bb.host),
              human_time(bb.accelerator), human_time(bb.offload), human_time(bb.context_switch),
              human_time(bb.communication));
    if (bb.spin > 0) out.print(" + spin {}", human_time(bb.spin));
    if (bb.startup > 0) out.print(" + start-up {}", human_time(bb.startup));
    out.print("\n");
    out.print("Why it wins (what each alternative loses, largest differences first):\n");
    std::vector<std::pair<const ranked*, const char*>> alts;
    if (v.runner) alts.push_back({&*v.runner, "(fastest other m, p)"});
    if (v.most_m) alts.push_back({&*v.most_m, "(most host parallelism)"});
    if (v.most_p) alts.push_back({&*v.most_p, "(most accelerator parallelism)"});
    std::vector<configuration> done;
    for (auto [x, why] : alts) {
        if (same_mapping(x->c, r.best.c)) continue;
        if (std::any_of(done.begin(), done.end(), [&](const configuration& d) { return same_mapping(d, x->c); })) continue;
        done.push_back(x->c);
        out.print("{}", contrast(r.best, *x, why));
    }
}

}  // namespace

void human_text(out_stream& out, const scenario& s, model_kind kind, const search_result& r, const human_view& v,
                const goal_view& g) {
    const auto& sp = s.space;
    scenario_lines(out, s, kind, r);
    if (v.grid_fits) mp_grid(out, sp, r, v);
    if (sp.nodes.hi > sp.nodes.lo) best_per_node_count(out, v);
    ranked_table(out, r, g);
    best_and_why(out, r, v, g);
    goal_lines(out, r, g);
    if (g.cluster) out.print("\n{}", front_table(r.front, r.best, r.base, g.opt.minimise));
    out.print("\n{}", near_optimal_summary(r, sp.tolerance, g.opt.minimise));
    if (r.near_optimal_count > 1)
        out.print("  Configurations inside this margin cannot be told apart at the model's accuracy ([H] §4.4).\n");
}

namespace {

// The spreads not varied, by reason: (why, the parameters), those with none left out.
std::vector<std::pair<std::string_view, std::string>> not_varied_by_reason(const uncertainty_report& u) {
    std::vector<std::pair<std::string_view, std::string>> out;
    if (!u.not_varied.empty()) out.emplace_back("no scalar of the model", fmt::format("{}", fmt::join(u.not_varied, ", ")));
    if (!u.at_zero.empty())
        out.emplace_back("a value of 0, which a log-normal draw keeps", fmt::format("{}", fmt::join(u.at_zero, ", ")));
    return out;
}

}  // namespace

void uncertainty_text(out_stream& out, const uncertainty_report& u, bool cluster) {
    out.print("\nUncertainty (--uncertainty): ");
    const auto not_varied = not_varied_by_reason(u);
    if (u.samples == 0) {
        std::vector<std::string> why;
        for (const auto& [reason, names] : not_varied) why.push_back(fmt::format("{}: {}", reason, names));
        out.print("no spread is given for a parameter the model varies{}; every interval is the point.\n",
                  why.empty() ? "" : fmt::format(" (not varied, {})", fmt::join(why, "; ")));
        return;
    }
    out.print("{} samples of the parameters with a spread, independent and log-normal around their values:\n",
              u.samples);
    for (const auto& p : u.parameters) out.print("  {}\n", p);
    for (const auto& [reason, names] : not_varied) out.print("  not varied ({}): {}\n", reason, names);
    // A platform with sharing modes (a GPU node): which one each configuration uses, as in the ranked table.
    const bool shared = std::any_of(u.configs.begin(), u.configs.end(),
                                    [](const auto& x) { return x.c.share != accelerator_sharing::dedicated; });
    out.print("{:>5} {:>5} {:>6}{} {:>11} {:>23} {:>16}{}\n", "m", "p", "nodes", shared ? fmt::format(" {:>11}", "sharing") : "",
              "time", "90 % interval", "P(<= best)",
              cluster ? fmt::format(" {:>23} {:>12}", "node-hours 90 %", "P(on front)") : "");
    for (const auto& x : u.configs)
        out.print("{:>5} {:>5} {:>6}{} {:>11.5g} {:>11.5g} - {:<9.5g} {:>15.1f}%{}\n", x.c.m, x.c.p, x.c.nodes,
                  shared ? fmt::format(" {:>11}", to_string(x.c.share)) : "", x.time_s, x.lo, x.hi, 100 * x.p_not_slower,
                  cluster ? fmt::format(" {:>11.4g} - {:<9.4g} {:>11.1f}%", node_hours(x.c, x.lo), node_hours(x.c, x.hi),
                                        100 * x.p_on_front)
                          : "");
    out.print("Cannot be told apart from the best at these spreads (at least as fast in >= 5 % of the samples, {} "
              "configuration{}): ",
              u.indistinguishable.size(), u.indistinguishable.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < u.indistinguishable.size(); ++i) out.print("{}{}", i ? ", " : "", label(u.indistinguishable[i]));
    out.print("\n");
}

std::string uncertainty_json(const uncertainty_report& u) {
    using json = nlohmann::ordered_json;
    json configs = json::array(), tied = json::array();
    // The configuration's keys as a row of the prediction writes them: "sharing" only when not dedicated.
    auto keys = [](const configuration& c) {
        json j{{"m", c.m}, {"p", c.p}, {"nodes", c.nodes}};
        if (c.share != accelerator_sharing::dedicated) j["sharing"] = std::string(to_string(c.share));
        return j;
    };
    for (const auto& x : u.configs) {
        json j = keys(x.c);
        j.update(json{{"time_s", json_number(x.time_s)}, {"lo_s", json_number(x.lo)}, {"hi_s", json_number(x.hi)},
                      {"p_not_slower", json_number(x.p_not_slower)}, {"p_on_front", json_number(x.p_on_front)}});
        configs.push_back(std::move(j));
    }
    for (const auto& c : u.indistinguishable) tied.push_back(keys(c));
    return json{{"samples", u.samples}, {"parameters", u.parameters}, {"not_varied", u.not_varied},
                {"at_zero", u.at_zero},
                {"configurations", configs}, {"indistinguishable", tied}}.dump();
}

namespace {

// One configuration as a JSON object; `extra` is appended inside it (", \"key\": value").
std::string json_entry(const ranked& x, std::string_view extra = {}) {
    return fmt::format("{{\"m\": {}, \"p\": {}, \"nodes\": {}, {}\"time_s\": {}, \"node_hours\": {}, \"core_hours\": {}, "
                       "\"breakdown\": {}{}}}",
                       x.c.m, x.c.p, x.c.nodes,
                       x.c.share == accelerator_sharing::dedicated ? "" : fmt::format("\"sharing\": \"{}\", ", to_string(x.c.share)),
                       json_num(x.pred.time_s), json_num(node_hours(x.c, x.pred.time_s)),
                       json_num(core_hours(x.c, x.pred.time_s)), breakdown_json(x.pred.parts), extra);
}


}  // namespace

human_view::human_view(const scenario& s)
    : b(widest_bounds(s)), m_min(static_cast<int>(b.m_lo)), m_max(static_cast<int>(b.m_top())),
      p_min(static_cast<int>(b.p_lo)), p_max(static_cast<int>(b.p_top(b.m_lo))),
      grid_fits(p_max - p_min < 16 && m_max - m_min < 40) {
    if (grid_fits)
        grid.assign(static_cast<std::size_t>((m_max - m_min + 1) * (p_max - p_min + 1)), std::nan("")),
            grid_near.assign(grid.size(), 0);
}

void human_view::see(const ranked& x, const ranked& best, bool near) {
    if (shown_nodes.empty()) {  // first call: the best is known
        for (std::int64_t n = 1; n <= b.n_hi; n *= 2) shown_nodes.push_back(static_cast<int>(n));
        shown_nodes.insert(shown_nodes.end(), {static_cast<int>(b.n_lo), static_cast<int>(b.n_hi), best.c.nodes});
        std::sort(shown_nodes.begin(), shown_nodes.end());
        shown_nodes.erase(std::unique(shown_nodes.begin(), shown_nodes.end()), shown_nodes.end());
    }
    if (std::binary_search(shown_nodes.begin(), shown_nodes.end(), x.c.nodes)) {
        auto it = best_at.find(x.c.nodes);
        if (it == best_at.end() || x.pred.time_s < it->second.pred.time_s) best_at.insert_or_assign(x.c.nodes, x);
    }
    if ((x.c.m != best.c.m || x.c.p != best.c.p) && (!runner || x.pred.time_s < runner->pred.time_s)) runner = x;
    if (x.c.nodes != best.c.nodes || x.c.share != best.c.share) return;  // the grid: the best's nodes and sharing
    if (grid_fits) {
        const auto cell = static_cast<std::size_t>((x.c.m - m_min) * (p_max - p_min + 1) + x.c.p - p_min);
        grid[cell] = x.pred.time_s, grid_near[cell] = near;
    }
    if (x.c.m == m_max && x.c.p == p_min) most_m = x;  // most host parallelism, fewest APUs
    if (x.c.m == m_min && x.c.p == b.p_top(m_min)) most_p = x;  // most APUs, fewest processes
}

json_stream::json_stream(out_stream& out, const scenario& s, model_kind kind, const search_options& opt,
                         std::int64_t feasible)
    : out_(out), s_(s), kind_(kind), opt_(opt), feasible_(feasible) {}

// The header before the first configuration: nothing is written when the search fails before it evaluates one.
void json_stream::row(const ranked& x, bool near) {
    if (written_ == 0) {
        out_.print("{{\"schema\": \"mmgp/1\", \"kind\": \"prediction\", \"profile\": {}, \"file\": {}, \"model\": \"{}\", "
                   "\"policy\": \"{}\", \"tolerance\": {}, ",
                   quote(s_.name.empty() ? s_.file : s_.name), quote(s_.file), to_string(kind_), to_string(s_.space.pol),
                   json_num(s_.space.tolerance));
        out_.print("\"objective\": \"{}\", \"within\": {}, \"budget_node_hours\": {}, ", to_string(opt_.minimise),
                   opt_.minimise == objective::time ? "null" : json_num(opt_.within),
                   opt_.budget_node_hours > 0 ? json_num(opt_.budget_node_hours) : "null");
        out_.print("\"search\": {{\"m\": [{}, {}], \"p\": [{}, {}], \"nodes\": [{}, {}]}}, \"feasible\": {},\n",
                   s_.space.m.lo, s_.space.m.hi, s_.space.p.lo, s_.space.p.hi, s_.space.nodes.lo, s_.space.nodes.hi,
                   feasible_);
        out_.print("\"configurations\": [\n");
    }
    out_.print("{}  {}", written_ ? ",\n" : "", json_entry(x, near ? ", \"near_optimal\": true" : ", \"near_optimal\": false"));
    ++written_;
}

void json_stream::finish(const search_result& r, const goal_view& g, const uncertainty_report* u) {
    const auto& sp = r.near_optimal_span;
    out_.print("\n],\n\"best\": {},\n\"fastest\": {},\n\"near_optimal_count\": {},\n", json_entry(r.best), json_entry(r.quickest),
               r.near_optimal_count);
    out_.print("\"near_optimal_span\": {{\"m\": [{}, {}], \"p\": [{}, {}], \"nodes\": [{}, {}]}},\n\"near_optimal\": [\n",
               sp.m_lo, sp.m_hi, sp.p_lo, sp.p_hi, sp.nodes_lo, sp.nodes_hi);
    for (std::size_t i = 0; i < r.near_optimal.size(); ++i)
        out_.print("  {}{}", json_entry(r.near_optimal[i]), i + 1 < r.near_optimal.size() ? ",\n" : "\n");
    out_.print("],\n");
    if (g.cluster) {
        out_.print("\"front_points\": {},\n\"front\": {},\n\"chosen_by\": {{\"{}\": {}", r.front.size(),
                   front_json(r.front, r.best, r.base), to_string(opt_.minimise), json_entry(r.best));
        for (const auto& o : g.others) out_.print(", \"{}\": {}", to_string(o.goal), json_entry(o.best));
        out_.print("}},\n");
    }
    out_.print("\"notes\": [");
    for (std::size_t i = 0; i < r.notes.size(); ++i) out_.print("{}{}", i ? ", " : "", quote(r.notes[i]));
    out_.print("]");
    if (u) out_.print(",\n\"uncertainty\": {}", uncertainty_json(*u));
    out_.print("}}\n");
}

csv_stream::csv_stream(out_stream& out, const scenario& s, const search_result& front_search) : out_(out) {
    for (const auto& x : front_search.front) on_front_.push_back({x.c.nodes, x.c.m, x.c.p, static_cast<int>(x.c.share)});
    std::sort(on_front_.begin(), on_front_.end());
    front_known_ = !front_search.front_thinned;
    const std::vector<accelerator_sharing> modes = searched_modes(s);
    shared_ = modes.size() > 1 || modes.front() != accelerator_sharing::dedicated;  // a last column, sharing
}

void csv_stream::row(const ranked& x, bool near) {
    if (!header_)
        out_.print("m,p,nodes,policy,time_s,host_s,accelerator_s,offload_s,context_switch_s,communication_s,spin_s,"
                   "startup_s,extrapolated,near_optimal,node_hours,core_hours,on_front{}\n", shared_ ? ",sharing" : "");
    header_ = true;
    const breakdown& b = x.pred.parts;
    const bool front = std::binary_search(on_front_.begin(), on_front_.end(),
                                          std::array<int, 4>{x.c.nodes, x.c.m, x.c.p, static_cast<int>(x.c.share)});
    out_.print("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}{}\n", x.c.m, x.c.p, x.c.nodes, to_string(x.c.pol),
               num(x.pred.time_s), num(b.host), num(b.accelerator), num(b.offload), num(b.context_switch),
               num(b.communication), num(b.spin), num(b.startup), b.extrapolated ? 1 : 0, near ? 1 : 0,
               num(node_hours(x.c, x.pred.time_s)), num(core_hours(x.c, x.pred.time_s)),
               !front_known_ ? "" : front ? "1" : "0", shared_ ? "," + std::string(to_string(x.c.share)) : "");
}
}  // namespace mmgp::cli::predict
