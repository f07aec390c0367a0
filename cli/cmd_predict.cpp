// mmgp predict PROFILE: predicted time of every feasible mapping, the best one, the near-optimal set, and why.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <map>

#include "common.hpp"
#include "options.hpp"

namespace mmgp::cli {

void setup_predict(CLI::App& app, predict_options& o) {
    auto* sub = app.add_subcommand("predict", "Predict every feasible (m, p, nodes) of a scenario and pick the best");
    add_checked(sub, "profile", o.profile, "Scenario file (schema mmgp/1) or a bundled scenario name (pbpi-qs20, raxml-qs20, pbpi-roadrunner)")
        ->required();
    add_checked(sub, "--model", o.model,
                    "eq11: [H] Eq. 11 verbatim (one node); mmgp: the engine's model (task decomposition, host "
                    "oversubscription, cluster term). Default mmgp");
    add_checked(sub, "--policy", o.policy, "Host scheduling policy: edtlp (switch on every off-load) or os; overrides search.policy");
    add_checked(sub, "--m", o.m, "Processes per node to search: N or LO:HI (overrides search.m)");
    add_checked(sub, "--p", o.p, "Accelerators per process to search: N or LO:HI (overrides search.p)");
    add_checked(sub, "--nodes", o.nodes, "Nodes to search: N or LO:HI (overrides search.nodes)");
    add_checked(sub, "--tolerance", o.tolerance, "Near-optimal margin as a fraction of the best time (default 0.05)");
    add_checked(sub, "--top", o.top, "Rows of the ranked table in the human output (default 15)");
    auto* j = sub->add_flag("--json", o.json, "Print one JSON document");
    auto* c = sub->add_flag("--csv", o.csv, "Print every configuration as CSV");
    j->excludes(c);
}

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
    std::vector<std::pair<double, int>> diffs;
    for (int i = 0; i < 7; ++i) diffs.emplace_back(part(other.pred.parts, i) - part(best.pred.parts, i), i);
    std::sort(diffs.begin(), diffs.end(), [](auto a, auto b) { return std::fabs(a.first) > std::fabs(b.first); });
    std::string out = fmt::format("  vs {} {} ({}, {:+.1f} %):", label(other.c), why, human_time(other.pred.time_s),
                                  100.0 * (other.pred.time_s / best.pred.time_s - 1.0));
    int shown = 0;
    for (auto [d, i] : diffs) {
        if (shown == 3 || std::fabs(d) < 1e-3 * best.pred.time_s) break;
        out += fmt::format("{} {} {}{}", shown ? "," : "", part_names[i], d > 0 ? "+" : "-", human_time(std::fabs(d)));
        ++shown;
    }
    if (shown == 0) out += " the same time";
    return out + "\n";
}

std::string human_report(const scenario& s, model_kind kind, const search_result& r, int top) {
    const auto& pl = s.plat;
    const auto& app = s.app;
    const auto& sp = s.space;
    std::string out;
    out += fmt::format("{} ({}): model {}, policy {}\n", s.name.empty() ? "scenario" : s.name, s.file, to_string(kind),
                       to_string(sp.pol));
    out += fmt::format("platform {}: {} host contexts, {} accelerators per node, {} node{} available\n", pl.name,
                       pl.hpu_contexts, pl.apus, pl.nodes, pl.nodes == 1 ? "" : "s");
    out += fmt::format("application {}: {} decomposition{}, {} scaling, N = {} phases{}\n", app.name,
                       to_string(app.decomp),
                       app.decomp == decomposition::task ? fmt::format(" ({} units)", app.units) : std::string(),
                       to_string(app.scale), num(app.N), app.decomp == decomposition::task ? " per unit" : "");
    out += fmt::format("searched m {}..{}, p {}..{}, nodes {}..{}: {} feasible configurations (m*p <= {})\n\n",
                       sp.m.lo, sp.m.hi, sp.p.lo, sp.p.hi, sp.nodes.lo, sp.nodes.hi, r.feasible, pl.apus);
    const double best_t = r.best.pred.time_s;
    const double limit = best_t * (1.0 + sp.tolerance);
    // Grid of m x p at the best node count, when it fits on a screen.
    std::vector<const ranked*> at_nodes;
    int m_max = 0, p_min = 1 << 30, p_max = 0, m_min = 1 << 30;
    for (const auto& x : r.all)
        if (x.c.nodes == r.best.c.nodes) {
            at_nodes.push_back(&x);
            m_max = std::max(m_max, x.c.m);
            m_min = std::min(m_min, x.c.m);
            p_max = std::max(p_max, x.c.p);
            p_min = std::min(p_min, x.c.p);
        }
    if (p_max - p_min < 16 && m_max - m_min < 40) {
        out += fmt::format("Predicted time (s) at nodes={}; * marks the near-optimal set (within {:g} %):\n",
                           r.best.c.nodes, 100 * sp.tolerance);
        std::map<std::pair<int, int>, double> cell;
        for (auto* x : at_nodes) cell[{x->c.m, x->c.p}] = x->pred.time_s;
        out += "  m\\p";
        for (int p = p_min; p <= p_max; ++p) out += fmt::format("{:>9}", p);
        out += "\n";
        for (int m = m_min; m <= m_max; ++m) {
            out += fmt::format("{:>5}", m);
            for (int p = p_min; p <= p_max; ++p) {
                auto it = cell.find({m, p});
                if (it == cell.end())
                    out += fmt::format("{:>9}", ".");
                else
                    out += fmt::format("{:>8.4g}{}", it->second, it->second <= limit ? "*" : " ");
            }
            out += "\n";
        }
        out += "\n";
    }
    // Best per node count (cluster searches).
    if (sp.nodes.hi > sp.nodes.lo) {
        std::map<int, const ranked*> best_at;
        for (const auto& x : r.all) {
            auto& b = best_at[x.c.nodes];
            if (!b || x.pred.time_s < b->pred.time_s) b = &x;
        }
        out += "Best mapping per node count:\n";
        std::vector<int> shown;
        for (int n = 1; n <= best_at.rbegin()->first; n *= 2) shown.push_back(n);
        shown.push_back(best_at.begin()->first);
        shown.push_back(best_at.rbegin()->first);
        shown.push_back(r.best.c.nodes);
        std::sort(shown.begin(), shown.end());
        shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
        for (int n : shown) {
            auto it = best_at.find(n);
            if (it == best_at.end()) continue;
            out += fmt::format("  nodes={:<6} m={:<3} p={:<3} {:>12}{}\n", n, it->second->c.m, it->second->c.p,
                               human_time(it->second->pred.time_s), it->second->pred.parts.extrapolated ? "  (communication extrapolated)" : "");
        }
        out += "\n";
    }
    // Ranked table.
    std::vector<const ranked*> order;
    order.reserve(r.all.size());
    for (const auto& x : r.all) order.push_back(&x);
    std::size_t n_top = std::min<std::size_t>(order.size(), static_cast<std::size_t>(std::max(top, 1)));
    std::partial_sort(order.begin(), order.begin() + static_cast<long>(n_top), order.end(),
                      // ties in search order (nodes, m, p), as the search picks the best: rank 1 is the Best line
                      [](auto* a, auto* b) { return a->pred.time_s < b->pred.time_s || (a->pred.time_s == b->pred.time_s && a < b); });
    out += fmt::format("Fastest {} of {} (seconds):\n", n_top, r.all.size());
    out += fmt::format("{:>5} {:>5} {:>5} {:>6} {:>11} {:>8} {:>10} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "rank", "m",
                       "p", "nodes", "time", "vs best", "host", "accelerator", "offload", "ctx switch", "comm", "spin",
                       "start-up");
    for (std::size_t i = 0; i < n_top; ++i) {
        const ranked& x = *order[i];
        const breakdown& b = x.pred.parts;
        out += fmt::format(
            "{:>5} {:>5} {:>5} {:>6} {:>11.5g} {:>7.1f}% {:>10.4g} {:>11.4g} {:>10.4g} {:>10.4g} {:>10.4g} {:>10.4g} {:>10.4g}{}\n",
            i + 1, x.c.m, x.c.p, x.c.nodes, x.pred.time_s, 100.0 * (x.pred.time_s / best_t - 1.0), b.host, b.accelerator,
            b.offload, b.context_switch, b.communication, b.spin, b.startup, b.extrapolated ? " ~" : "");
    }
    bool any_extrap = std::any_of(order.begin(), order.begin() + static_cast<long>(n_top),
                                  [](auto* x) { return x->pred.parts.extrapolated; });
    if (any_extrap) out += "  ~ communication cost extrapolated by the fitted latency-bandwidth model (outside the measured tables)\n";
    // Best and why.
    const breakdown& bb = r.best.pred.parts;
    out += fmt::format("\nBest: {}, {}\n", label(r.best.c), human_time(best_t));
    out += fmt::format("  = host {} + accelerator {} + offload {} + context switch {} + communication {}",
                       human_time(bb.host), human_time(bb.accelerator), human_time(bb.offload),
                       human_time(bb.context_switch), human_time(bb.communication));
    if (bb.spin > 0) out += fmt::format(" + spin {}", human_time(bb.spin));
    if (bb.startup > 0) out += fmt::format(" + start-up {}", human_time(bb.startup));
    out += "\n";
    out += "Why it wins (what each alternative loses, largest differences first):\n";
    std::vector<std::pair<const ranked*, const char*>> alts;
    // Runner-up: the fastest configuration with another (m, p) than the best (any node count).
    const ranked* runner = nullptr;
    for (const auto& x : r.all)
        if ((x.c.m != r.best.c.m || x.c.p != r.best.c.p) && (!runner || x.pred.time_s < runner->pred.time_s)) runner = &x;
    if (runner) alts.push_back({runner, "(fastest other m, p)"});
    const ranked* most_m = nullptr;
    const ranked* most_p = nullptr;
    for (auto* x : at_nodes) {
        if (!most_m || x->c.m > most_m->c.m || (x->c.m == most_m->c.m && x->c.p < most_m->c.p)) most_m = x;
        if (!most_p || x->c.p > most_p->c.p || (x->c.p == most_p->c.p && x->c.m < most_p->c.m)) most_p = x;
    }
    if (most_m) alts.push_back({most_m, "(most host parallelism)"});
    if (most_p) alts.push_back({most_p, "(most accelerator parallelism)"});
    std::vector<const ranked*> done;
    for (auto [x, why] : alts) {
        if (x->c.m == r.best.c.m && x->c.p == r.best.c.p && x->c.nodes == r.best.c.nodes) continue;
        if (std::find(done.begin(), done.end(), x) != done.end()) continue;
        done.push_back(x);
        out += contrast(r.best, *x, why);
    }
    out += fmt::format("\nNear-optimal set (within {:g} % of the best, {} configuration{}): ", 100 * sp.tolerance,
                       r.near_optimal.size(), r.near_optimal.size() == 1 ? "" : "s");
    std::size_t shown = 0;
    for (const auto& x : r.near_optimal) {
        if (shown == 12) {
            out += fmt::format(", ... ({} more)", r.near_optimal.size() - shown);
            break;
        }
        out += fmt::format("{}{} ({})", shown ? ", " : "", label(x.c), human_time(x.pred.time_s));
        ++shown;
    }
    out += "\n";
    if (r.near_optimal.size() > 1)
        out += "  Configurations inside this margin cannot be told apart at the model's accuracy ([H] §4.4).\n";
    return out;
}

std::string json_report(const scenario& s, model_kind kind, const search_result& r) {
    std::string out;
    out.reserve(r.all.size() * 220 + 1024);
    auto entry = [](const ranked& x) {
        return fmt::format("{{\"m\": {}, \"p\": {}, \"nodes\": {}, \"time_s\": {}, \"breakdown\": {}}}", x.c.m, x.c.p,
                           x.c.nodes, num(x.pred.time_s), breakdown_json(x.pred.parts));
    };
    out += fmt::format("{{\"profile\": {}, \"file\": {}, \"model\": \"{}\", \"policy\": \"{}\", \"tolerance\": {}, ",
                       quote(s.name.empty() ? s.file : s.name), quote(s.file), to_string(kind), to_string(s.space.pol),
                       num(s.space.tolerance));
    out += fmt::format("\"search\": {{\"m\": [{}, {}], \"p\": [{}, {}], \"nodes\": [{}, {}]}}, \"feasible\": {},\n",
                       s.space.m.lo, s.space.m.hi, s.space.p.lo, s.space.p.hi, s.space.nodes.lo, s.space.nodes.hi,
                       r.feasible);
    out += "\"configurations\": [\n";
    for (std::size_t i = 0; i < r.all.size(); ++i) {
        out += "  ";
        out += entry(r.all[i]);
        out += i + 1 < r.all.size() ? ",\n" : "\n";
    }
    out += "],\n\"best\": " + entry(r.best) + ",\n\"near_optimal\": [\n";
    for (std::size_t i = 0; i < r.near_optimal.size(); ++i) {
        out += "  " + entry(r.near_optimal[i]);
        out += i + 1 < r.near_optimal.size() ? ",\n" : "\n";
    }
    out += "]}\n";
    return out;
}

std::string csv_report(const search_result& r, double tolerance) {
    std::string out =
        "m,p,nodes,policy,time_s,host_s,accelerator_s,offload_s,context_switch_s,communication_s,spin_s,startup_s,"
        "extrapolated,near_optimal\n";
    const double limit = r.best.pred.time_s * (1.0 + tolerance);
    for (const auto& x : r.all) {
        const breakdown& b = x.pred.parts;
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", x.c.m, x.c.p, x.c.nodes, to_string(x.c.pol),
                           num(x.pred.time_s), num(b.host), num(b.accelerator), num(b.offload), num(b.context_switch),
                           num(b.communication), num(b.spin), num(b.startup), b.extrapolated ? 1 : 0,
                           x.pred.time_s <= limit ? 1 : 0);
    }
    return out;
}

}  // namespace

int run_predict(const predict_options& o) {
    model_kind kind = parse_model_option(o.model);
    scenario s = load_scenario(o.profile);
    bool changed = false;
    if (!o.policy.empty()) s.space.pol = parse_policy_option(o.policy);
    if (!o.m.empty()) s.space.m = parse_range("--m", o.m), changed = true;
    if (!o.p.empty()) s.space.p = parse_range("--p", o.p), changed = true;
    if (!o.nodes.empty()) s.space.nodes = parse_range("--nodes", o.nodes), changed = true;
    if (o.tolerance) s.space.tolerance = *o.tolerance;  // its range is checked by the option table
    if (changed || !o.policy.empty()) check_coverage(s);
    search_result r = search(s, kind);
    for (const auto& x : r.all)
        if (!std::isfinite(x.pred.time_s))
            throw input_error(s.file, "", "parameters whose predicted times are finite",
                              "an overflowing prediction at " + label(x.c));
    std::string text = o.json ? json_report(s, kind, r) : o.csv ? csv_report(r, s.space.tolerance) : human_report(s, kind, r, o.top);
    std::cout << text << std::flush;
    return 0;
}

}  // namespace mmgp::cli
