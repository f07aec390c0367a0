// mmgp predict PROFILE: predicted time of every feasible mapping, the best one, the near-optimal set, and why.
#include <algorithm>
#include <exception>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>

#include "cmd_predict.hpp"
#include "options.hpp"
#include "mmgp/uncertainty.hpp"
#include "mmgp/wavefront.hpp"

namespace mmgp::cli {

void setup_predict(CLI::App& app, predict_options& o) {
    auto* sub = app.add_subcommand("predict", "Predict every feasible (m, p, nodes) of a scenario and pick the best");
    add_checked(sub, "profile", o.profile, "Scenario file (schema mmgp/1) or a bundled scenario name (pbpi-qs20, raxml-qs20, pbpi-roadrunner, sweep3d-roadrunner, pbpi-ps3-cluster)")
        ->required();
    add_space_options(sub, o.space);
    add_checked(sub, "--tolerance", o.tolerance, "Near-optimal margin as a fraction of the best time (default 0.05)");
    add_checked(sub, "--top", o.top, "Rows of the ranked table in the human output (default 15)");
    add_objective_options(sub, o.goal, true);
    add_checked(sub, "--plot", o.plot, "Write the time-cost Pareto front, the chosen point marked, as an SVG file");
    auto* j = sub->add_flag("--json", o.json, "Print one JSON document");
    auto* c = sub->add_flag("--csv", o.csv, "Print every configuration as CSV");
    auto* u = sub->add_flag("--uncertainty", o.uncertainty,
                            "Propagate the profiles' spreads (MAD, standard error) to an interval for each listed "
                            "configuration and the set that cannot be told apart from the best");
    u->excludes(c);
    j->excludes(c);
}

namespace {

// --json lists at most this many near-optimal configurations (the fastest) besides their count;
// every configuration carries its own "near_optimal" flag.
constexpr std::size_t json_near_optimal_max = 1000;

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

// A difference of times (seconds) and the name of what differs.
using difference = std::pair<double, const char*>;

void largest_first(std::vector<difference>& d) {
    std::sort(d.begin(), d.end(), [](const difference& a, const difference& b) { return std::fabs(a.first) > std::fabs(b.first); });
}

// Appends " host +5.04 s" to a list of differences, after a comma unless the list is empty.
void add_difference(std::string& list, const difference& d) {
    list += fmt::format("{} {} {}{}", list.empty() ? "" : ",", d.second, d.first > 0 ? "+" : "-", human_time(std::fabs(d.first)));
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

// Buffered standard output: the streamed reports write through it in constant memory.
class out_stream {
public:
    // Left by an error: what was written stays (a stream cannot be taken back) and the error's line says so.
    ~out_stream() {
        if (std::uncaught_exceptions() > 0 && (written_ || buf_.size() > 0)) mark_report_incomplete();
        flush();
    }
    template <class... A>
    void print(fmt::format_string<A...> f, A&&... a) {
        fmt::format_to(std::back_inserter(buf_), f, std::forward<A>(a)...);
        if (buf_.size() > (1u << 20)) flush();
    }
    void flush() {
        written_ = written_ || buf_.size() > 0;
        std::cout.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        std::cout.flush();
        buf_.clear();
    }

private:
    fmt::memory_buffer buf_;
    bool written_ = false;
};

// What the human report shows besides the search's own result, gathered while the search
// streams every configuration: memory independent of the size of the space.
struct human_view {
    space_bounds b;
    int m_min, m_max, p_min, p_max;  // the grid at the best node count
    bool grid_fits;
    std::vector<double> grid;        // (m - m_min) * width + (p - p_min); NaN: not feasible
    std::vector<char> grid_near;     // the same cells: in the near-optimal set
    std::vector<int> shown_nodes;    // node counts of the per-node table
    std::map<int, ranked> best_at;   // the fastest at each shown node count
    std::optional<ranked> runner, most_m, most_p;

    explicit human_view(const scenario& s)
        : b(bounds(s)), m_min(static_cast<int>(b.m_lo)), m_max(static_cast<int>(b.m_top())),
          p_min(static_cast<int>(b.p_lo)), p_max(static_cast<int>(b.p_top(b.m_lo))),
          grid_fits(p_max - p_min < 16 && m_max - m_min < 40) {
        if (grid_fits)
            grid.assign(static_cast<std::size_t>((m_max - m_min + 1) * (p_max - p_min + 1)), std::nan("")),
                grid_near.assign(grid.size(), 0);
    }

    void see(const ranked& x, const ranked& best, bool near) {
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
};

// What the human report needs of the objective: the search's options, the other objectives' choices.
struct goal_view {
    search_options opt;
    bool cluster = false;  // the search spans more than one node count
    std::vector<objective_choice> others;
};

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
        out.print("Cheapest {} in {} of the {} within {:g} % of the fastest time (seconds; vs best in {}):\n",
                  r.fastest.size(), to_string(goal), r.feasible, 100 * g.opt.within, to_string(goal));
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
    if (modes.size() == 1 && modes.front() == accelerator_sharing::dedicated) return fmt::format("m*p <= {}", s.plat.apus);
    std::string text = "sharing ";
    for (std::size_t i = 0; i < modes.size(); ++i)
        text += fmt::format("{}{}: {}", i ? "; " : "", to_string(modes[i]),
                            modes[i] == accelerator_sharing::time_sliced ? fmt::format("p <= {}", s.plat.apus)
                                                                         : fmt::format("m*p <= {}", s.plat.apus));
    return text;
}

void human_report(out_stream& out, const scenario& s, model_kind kind, const search_result& r, const human_view& v,
                  const goal_view& g) {
    const auto& pl = s.plat;
    const auto& app = s.app;
    const auto& sp = s.space;
    out.print("{} ({}): model {}, policy {}\n", s.name.empty() ? "scenario" : s.name, s.file, to_string(kind),
              to_string(sp.pol));
    out.print("platform {}: {} host contexts, {} accelerators per node, {} node{} available\n", pl.name,
              pl.hpu_contexts, pl.apus, pl.nodes, pl.nodes == 1 ? "" : "s");
    out.print("application {}: {} decomposition{}, {} scaling, N = {} phases{}\n", app.name, to_string(app.decomp),
              app.decomp == decomposition::task ? fmt::format(" ({} units)", app.units) : std::string(),
              to_string(app.scale), num(app.N), app.decomp == decomposition::task ? " per unit" : "");
    out.print("searched m {}..{}, p {}..{}, nodes {}..{}: {} feasible configurations ({})\n", sp.m.lo, sp.m.hi, sp.p.lo,
              sp.p.hi, sp.nodes.lo, sp.nodes.hi, r.feasible, feasibility_text(s));
    for (const auto& n : r.notes) out.print("note: {}\n", n);
    out.print("\n");
    // Grid of m x p at the best node count, when it fits on a screen.
    if (v.grid_fits) {
        out.print("Predicted time (s) at nodes={}{}; * marks the near-optimal set (within {:g} %):\n", r.best.c.nodes,
                  r.best.c.share == accelerator_sharing::dedicated ? "" : fmt::format(" sharing={}", to_string(r.best.c.share)),
                  100 * sp.tolerance);
        out.print("  m\\p");
        for (int p = v.p_min; p <= v.p_max; ++p) out.print("{:>9}", p);
        out.print("\n");
        for (int m = v.m_min; m <= v.m_max; ++m) {
            out.print("{:>5}", m);
            for (int p = v.p_min; p <= v.p_max; ++p) {
                const double t = v.grid[static_cast<std::size_t>((m - v.m_min) * (v.p_max - v.p_min + 1) + p - v.p_min)];
                if (std::isnan(t))
                    out.print("{:>9}", ".");
                else
                    out.print("{:>8.4g}{}", t,
                              v.grid_near[static_cast<std::size_t>((m - v.m_min) * (v.p_max - v.p_min + 1) + p - v.p_min)] ? "*" : " ");
            }
            out.print("\n");
        }
        out.print("\n");
    }
    // Best per node count (cluster searches).
    if (sp.nodes.hi > sp.nodes.lo) {
        out.print("Best mapping per node count:\n");
        for (const auto& [n, x] : v.best_at)
            out.print("  nodes={:<6} m={:<3} p={:<3} {:>12}{}\n", n, x.c.m, x.c.p, human_time(x.pred.time_s),
                      x.pred.parts.extrapolated ? "  (communication extrapolated)" : "");
        out.print("\n");
    }
    ranked_table(out, r, g);
    // Best and why.
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
    goal_lines(out, r, g);
    if (g.cluster) out.print("\n{}", front_table(r.front, r.best, r.base, g.opt.minimise));
    out.print("\n{}", near_optimal_summary(r, sp.tolerance, g.opt.minimise));
    if (r.near_optimal_count > 1)
        out.print("  Configurations inside this margin cannot be told apart at the model's accuracy ([H] §4.4).\n");
}

// The configurations --uncertainty samples: the listed ones (fastest, near-optimal), best first, each once.
std::vector<configuration> uncertainty_candidates(const search_result& r) {
    std::vector<configuration> out{r.best.c};
    auto add = [&](const configuration& c) {
        if (std::none_of(out.begin(), out.end(), [&](const configuration& d) {
                return d.m == c.m && d.p == c.p && d.nodes == c.nodes && d.pol == c.pol;
            }))
            out.push_back(c);
    };
    for (const auto& x : r.fastest) add(x.c);
    for (const auto& x : r.near_optimal) add(x.c);
    for (std::size_t i : thin_front(r.front, {}, 20)) add(r.front[i].c);
    return out;
}

void uncertainty_text(out_stream& out, const uncertainty_report& u, bool cluster) {
    out.print("\nUncertainty (--uncertainty): ");
    if (u.samples == 0) {
        out.print("no spread is given for a parameter the model varies{}; every interval is the point.\n",
                  u.not_varied.empty() ? "" : " (not varied: " + fmt::format("{}", fmt::join(u.not_varied, ", ")) + ")");
        return;
    }
    out.print("{} samples of the parameters with a spread, independent and log-normal around their values:\n",
              u.samples);
    for (const auto& p : u.parameters) out.print("  {}\n", p);
    if (!u.not_varied.empty()) out.print("  not varied (no scalar of the model): {}\n", fmt::join(u.not_varied, ", "));
    out.print("{:>5} {:>5} {:>6} {:>11} {:>23} {:>16}{}\n", "m", "p", "nodes", "time", "90 % interval", "P(<= best)",
              cluster ? fmt::format(" {:>23} {:>12}", "node-hours 90 %", "P(on front)") : "");
    for (const auto& x : u.configs)
        out.print("{:>5} {:>5} {:>6} {:>11.5g} {:>11.5g} - {:<9.5g} {:>15.1f}%{}\n", x.c.m, x.c.p, x.c.nodes, x.time_s, x.lo,
                  x.hi, 100 * x.p_not_slower,
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
    auto strings = [](const std::vector<std::string>& xs) {
        std::string s = "[";
        for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + quote(xs[i]);
        return s + "]";
    };
    std::string s = fmt::format("{{\"samples\": {}, \"parameters\": {}, \"not_varied\": {}, \"configurations\": [",
                                u.samples, strings(u.parameters), strings(u.not_varied));
    for (std::size_t i = 0; i < u.configs.size(); ++i) {
        const auto& x = u.configs[i];
        s += fmt::format("{}{{\"m\": {}, \"p\": {}, \"nodes\": {}, \"time_s\": {}, \"lo_s\": {}, \"hi_s\": {}, "
                         "\"p_not_slower\": {}, \"p_on_front\": {}}}",
                         i ? ", " : "", x.c.m, x.c.p, x.c.nodes, num(x.time_s), num(x.lo), num(x.hi), num(x.p_not_slower),
                         num(x.p_on_front));
    }
    s += "], \"indistinguishable\": [";
    for (std::size_t i = 0; i < u.indistinguishable.size(); ++i)
        s += fmt::format("{}{{\"m\": {}, \"p\": {}, \"nodes\": {}}}", i ? ", " : "", u.indistinguishable[i].m,
                         u.indistinguishable[i].p, u.indistinguishable[i].nodes);
    return s + "]}";
}

// One configuration as a JSON object; `extra` is appended inside it (", \"key\": value").
std::string json_entry(const ranked& x, std::string_view extra = {}) {
    return fmt::format("{{\"m\": {}, \"p\": {}, \"nodes\": {}, {}\"time_s\": {}, \"node_hours\": {}, \"core_hours\": {}, "
                       "\"breakdown\": {}{}}}",
                       x.c.m, x.c.p, x.c.nodes,
                       x.c.share == accelerator_sharing::dedicated ? "" : fmt::format("\"sharing\": \"{}\", ", to_string(x.c.share)),
                       num(x.pred.time_s), num(node_hours(x.c, x.pred.time_s)),
                       num(core_hours(x.c, x.pred.time_s)), breakdown_json(x.pred.parts), extra);
}

// --json: the configurations are written while the search evaluates them.
void json_report(out_stream& out, const scenario& s, model_kind kind, search_options& opt, search_result& r,
                 const std::vector<std::string>& what_if, bool uncertainty, const goal_view& g) {
    std::int64_t written = 0;
    opt.visit = [&](const ranked& x, const ranked&, bool near) {
        if (written == 0) {
            out.print("{{\"schema\": \"mmgp/1\", \"kind\": \"prediction\", \"profile\": {}, \"file\": {}, \"model\": \"{}\", "
                      "\"policy\": \"{}\", \"tolerance\": {}, ",
                      quote(s.name.empty() ? s.file : s.name), quote(s.file), to_string(kind), to_string(s.space.pol),
                      num(s.space.tolerance));
            out.print("\"objective\": \"{}\", \"within\": {}, \"budget_node_hours\": {}, ", to_string(opt.minimise),
                      opt.minimise == objective::time ? "null" : num(opt.within),
                      opt.budget_node_hours > 0 ? num(opt.budget_node_hours) : "null");
            out.print("\"search\": {{\"m\": [{}, {}], \"p\": [{}, {}], \"nodes\": [{}, {}]}}, \"feasible\": {},\n",
                      s.space.m.lo, s.space.m.hi, s.space.p.lo, s.space.p.hi, s.space.nodes.lo, s.space.nodes.hi,
                      count_feasible(s));
            out.print("\"configurations\": [\n");
        }
        out.print("{}  {}", written ? ",\n" : "", json_entry(x, near ? ", \"near_optimal\": true" : ", \"near_optimal\": false"));
        ++written;
    };
    r = search(s, kind, opt);
    r.notes.insert(r.notes.begin(), what_if.begin(), what_if.end());
    const auto& sp = r.near_optimal_span;
    out.print("\n],\n\"best\": {},\n\"fastest\": {},\n\"near_optimal_count\": {},\n", json_entry(r.best), json_entry(r.quickest),
              r.near_optimal_count);
    out.print("\"near_optimal_span\": {{\"m\": [{}, {}], \"p\": [{}, {}], \"nodes\": [{}, {}]}},\n\"near_optimal\": [\n",
              sp.m_lo, sp.m_hi, sp.p_lo, sp.p_hi, sp.nodes_lo, sp.nodes_hi);
    for (std::size_t i = 0; i < r.near_optimal.size(); ++i)
        out.print("  {}{}", json_entry(r.near_optimal[i]), i + 1 < r.near_optimal.size() ? ",\n" : "\n");
    out.print("],\n");
    if (g.cluster) {
        out.print("\"front_points\": {},\n\"front\": {},\n\"chosen_by\": {{\"{}\": {}", r.front.size(),
                  front_json(r.front, r.best, r.base), to_string(opt.minimise), json_entry(r.best));
        for (const auto& o : g.others) out.print(", \"{}\": {}", to_string(o.goal), json_entry(o.best));
        out.print("}},\n");
    }
    out.print("\"notes\": [");
    for (std::size_t i = 0; i < r.notes.size(); ++i) out.print("{}{}", i ? ", " : "", quote(r.notes[i]));
    out.print("]");
    if (uncertainty)
        out.print(",\n\"uncertainty\": {}",
                  uncertainty_json(propagate_spreads(s, kind, uncertainty_candidates(r), r.best.c)));
    out.print("}}\n");
}

// --csv: every configuration, written while the search evaluates it; `on_front` from a first search of the
// front (empty when that front was thinned: membership is then not known exactly).
search_result csv_report(out_stream& out, const scenario& s, model_kind kind, search_options& opt) {
    search_options first = opt;
    first.front = true;
    const search_result fr = search(s, kind, first);
    std::vector<std::array<int, 4>> on_front;
    for (const auto& x : fr.front) on_front.push_back({x.c.nodes, x.c.m, x.c.p, static_cast<int>(x.c.share)});
    std::sort(on_front.begin(), on_front.end());
    const std::vector<accelerator_sharing> modes = searched_modes(s);
    const bool shared = modes.size() > 1 || modes.front() != accelerator_sharing::dedicated;  // a last column, sharing
    bool header = false;
    opt.visit = [&](const ranked& x, const ranked&, bool near) {
        if (!header)
            out.print("m,p,nodes,policy,time_s,host_s,accelerator_s,offload_s,context_switch_s,communication_s,spin_s,"
                      "startup_s,extrapolated,near_optimal,node_hours,core_hours,on_front{}\n", shared ? ",sharing" : "");
        header = true;
        const breakdown& b = x.pred.parts;
        const bool front = std::binary_search(on_front.begin(), on_front.end(),
                                              std::array<int, 4>{x.c.nodes, x.c.m, x.c.p, static_cast<int>(x.c.share)});
        out.print("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}{}\n", x.c.m, x.c.p, x.c.nodes, to_string(x.c.pol),
                  num(x.pred.time_s), num(b.host), num(b.accelerator), num(b.offload), num(b.context_switch),
                  num(b.communication), num(b.spin), num(b.startup), b.extrapolated ? 1 : 0, near ? 1 : 0,
                  num(node_hours(x.c, x.pred.time_s)), num(core_hours(x.c, x.pred.time_s)),
                  fr.front_thinned ? "" : front ? "1" : "0", shared ? "," + std::string(to_string(x.c.share)) : "");
    };
    search(s, kind, opt);
    return fr;
}


// --- A wavefront application: the accelerator-driven and the host-driven mapping over the node counts ---------

struct wave_pair {
    int nodes = 1;
    configuration acc_c, host_c;
    wavefront_prediction acc, host;
};

wave_pair wave_at(const scenario& s, int nodes) {
    wave_pair w;
    w.nodes = nodes;
    w.acc_c = {s.plat.apus, 1, nodes, policy::edtlp};
    w.acc = wavefront_time(s.plat, s.app.wave, wave_mapping::accelerator_driven, w.acc_c);
    if (s.app.wave.has_host_driven)
        for (int m = 1; m <= std::min(s.plat.hpu_contexts, s.plat.apus); ++m) {
            const configuration c{m, s.plat.apus / m, nodes, policy::edtlp};
            const wavefront_prediction t = wavefront_time(s.plat, s.app.wave, wave_mapping::host_driven, c);
            if (t.valid && (!w.host.valid || t.time_s < w.host.time_s)) w.host = t, w.host_c = c;
        }
    return w;
}

std::string level_name(const scenario& s, int lv) {
    return lv < 0 ? std::string("none") : s.plat.hier.levels[static_cast<std::size_t>(lv)].name;
}

// The node counts a wavefront report shows: powers of two times the least, and the most.
std::vector<wave_pair> wave_rows(const scenario& s, int lo, int hi) {
    std::vector<int> counts;
    for (std::int64_t n = lo; n < hi; n *= 2) counts.push_back(static_cast<int>(n));
    counts.push_back(hi);
    std::vector<wave_pair> rows;
    for (int n : counts) rows.push_back(wave_at(s, n));
    return rows;
}

// One mapping of a wavefront row as a JSON object (null when it cannot run).
std::string wave_json(const scenario& s, const wavefront_prediction& t, const configuration& c) {
    if (!t.valid) return "null";
    return fmt::format("{{\"m\": {}, \"p\": {}, \"time_s\": {}, \"compute\": {}, \"fill\": {}, \"transfer\": {}, "
                       "\"communication\": {}, \"grid\": [{}, {}], \"level_i\": {}, \"level_j\": {}, \"step_s\": {}}}",
                       c.m, c.p, num(t.time_s), num(t.compute), num(t.fill), num(t.transfer), num(t.communication), t.px,
                       t.py, quote(level_name(s, t.level_i)), quote(level_name(s, t.level_j)), num(t.step_s));
}

void wavefront_json(out_stream& out, const scenario& s, const std::vector<wave_pair>& rows) {
    out.print("{{\"schema\": \"mmgp/1\", \"kind\": \"wavefront\", \"scenario\": {}, \"rows\": [", quote(s.name));
    for (std::size_t i = 0; i < rows.size(); ++i)
        out.print("{}\n  {{\"nodes\": {}, \"accelerator_driven\": {}, \"host_driven\": {}}}", i ? "," : "", rows[i].nodes,
                  wave_json(s, rows[i].acc, rows[i].acc_c), wave_json(s, rows[i].host, rows[i].host_c));
    out.print("]}}\n");
}

// The table of both mappings at each node count, and which wins where.
void wavefront_table(out_stream& out, const std::vector<wave_pair>& rows) {
    out.print("{:>6} {:>7} {:>11} {:>20} {:>28} {:>24}\n", "nodes", "ranks", "grid", "accelerator-driven",
              "host-driven (best m x p)", "faster");
    int acc_wins = 0, host_wins = 0;
    std::optional<int> crossover;
    bool prev_acc = false;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        std::string host = r.host.valid ? fmt::format("{} (m={} p={})", human_time(r.host.time_s), r.host_c.m, r.host_c.p) : "-";
        std::string faster = "-";
        if (r.acc.valid && r.host.valid) {
            const bool a = r.acc.time_s <= r.host.time_s;
            faster = a ? fmt::format("accelerator-driven {:.2f}x", r.host.time_s / r.acc.time_s)
                       : fmt::format("host-driven {:.2f}x", r.acc.time_s / r.host.time_s);
            (a ? acc_wins : host_wins) += 1;
            if (i > 0 && a != prev_acc && !crossover) crossover = r.nodes;
            prev_acc = a;
        }
        out.print("{:>6} {:>7} {:>11} {:>20} {:>28} {:>24}\n", r.nodes, static_cast<long long>(r.acc_c.m) * r.nodes,
                  fmt::format("{}x{}", r.acc.px, r.acc.py), r.acc.valid ? human_time(r.acc.time_s) : std::string(r.acc.why), host,
                  faster);
    }
    out.print("\n");
    if (acc_wins + host_wins > 0) {
        if (host_wins == 0) out.print("Winner: accelerator-driven at every node count shown.\n");
        else if (acc_wins == 0) out.print("Winner: host-driven at every node count shown.\n");
        else out.print("Winner changes: crossover near {} nodes.\n", crossover.value_or(0));
    }
}

// Why, term by term, at one node count: each mapping's terms, and where the host-driven one differs.
void wavefront_why(out_stream& out, const scenario& s, const wave_pair& r) {
    if (!r.acc.valid) return;
    out.print("\nAt {} node{}: accelerator-driven {} = compute {} + pipeline fill {} + communication {}\n", r.nodes,
              r.nodes > 1 ? "s" : "", human_time(r.acc.time_s), human_time(r.acc.compute), human_time(r.acc.fill),
              human_time(r.acc.communication));
    out.print("  one step {}: faces {} ({}) and {} ({}){}\n", human_time(r.acc.step_s), human_time(r.acc.message_i_s),
              level_name(s, r.acc.level_i), human_time(r.acc.message_j_s), level_name(s, r.acc.level_j),
              r.acc.forward_s > 0 ? fmt::format(", forwarding hosts busy {} per step", human_time(r.acc.forward_s)) : "");
    if (!r.host.valid) return;
    out.print("  host-driven m={} p={} {} = compute {} + fill {} + transfers {} + communication {}\n", r.host_c.m,
              r.host_c.p, human_time(r.host.time_s), human_time(r.host.compute), human_time(r.host.fill),
              human_time(r.host.transfer), human_time(r.host.communication));
    std::vector<difference> terms = {{r.host.compute - r.acc.compute, "compute"}, {r.host.fill - r.acc.fill, "fill"},
                                     {r.host.transfer - r.acc.transfer, "transfers"},
                                     {r.host.communication - r.acc.communication, "communication"}};
    largest_first(terms);
    std::string why;
    for (const auto& t : terms)
        if (std::fabs(t.first) > 1e-3 * r.acc.time_s) add_difference(why, t);
    out.print("  host-driven against accelerator-driven:{}\n", why.empty() ? " the same time" : why);
}

void wavefront_report(out_stream& out, const scenario& s, bool as_json) {
    if (s.plat.hier.empty())
        throw input_error(s.file, "/platform/hierarchy", "a communication hierarchy for the wavefront's mappings", "none");
    const int lo = static_cast<int>(std::max<std::int64_t>(1, s.space.nodes.lo));
    const int hi = static_cast<int>(std::min<std::int64_t>(s.plat.nodes, s.space.nodes.hi));
    const std::vector<wave_pair> rows = wave_rows(s, lo, hi);
    if (as_json) {
        wavefront_json(out, s, rows);
        return;
    }
    const auto& w = s.app.wave;
    out.print("# {}: a wavefront ({} x {} x {} cells {}, {:g} angles, {:g}-plane blocks, {:g} octants) mapped two ways, "
              "nodes {}..{} (docs/MODEL.md §6)\n\n",
              s.name, w.cells[0], w.cells[1], w.cells[2], w.per_rank ? "per accelerator" : "in all", w.angles, w.k_block,
              w.octants, lo, hi);
    wavefront_table(out, rows);
    // Why, term by term, at the smallest and the largest node count.
    for (const auto* r : {&rows.front(), &rows.back()}) wavefront_why(out, s, *r);
}
}  // namespace

int run_predict(const predict_options& o) {
    model_kind kind = parse_model_option(o.space.model);
    scenario s = load_with_options(o.profile, o.space);
    if (o.tolerance) s.space.tolerance = *o.tolerance;  // its range is checked by the option table
    // The search streams: no output keeps every configuration in memory (search.hpp).
    search_options opt;
    opt.keep_all = false;
    apply_objective_options(o.goal, s, opt);
    if (!o.plot.empty()) check_output("--plot", o.plot, s.sources);
    if (o.uncertainty) check_spreads(s);  // no report byte before every input is checked
    out_stream out;
    std::vector<std::string> what_if;  // said with the model's notes: the output is not the file's prediction
    for (const auto& set : o.space.sets) what_if.push_back("what-if: --set " + set);
    if (s.app.has_wavefront) {  // a wavefront program: its two mappings over the node counts
        const char* given = o.csv ? "--csv" : o.uncertainty ? "--uncertainty" : !o.plot.empty() ? "--plot"
                            : !o.goal.objective.empty() ? "--objective" : o.goal.budget ? "--budget"
                            : o.goal.within ? "--within" : nullptr;
        if (given)
            throw usage_error(std::string(given) + ": expected a scenario with an off-load profile, found a wavefront "
                              "application (its two mappings are compared by time)");
        wavefront_report(out, s, o.json);
        return 0;
    }
    goal_view g;
    g.cluster = s.space.nodes.hi > s.space.nodes.lo;
    opt.front = g.cluster || !o.plot.empty();
    search_result r;
    try {
        if (g.cluster && !o.csv) g.others = other_choices(s, kind, opt);
        if (o.json) {
            opt.near_optimal_max = json_near_optimal_max;
            json_report(out, s, kind, opt, r, what_if, o.uncertainty, g);
        } else if (o.csv) {
            opt.near_optimal_max = 1;  // the rows carry the flag; no list is printed
            r = csv_report(out, s, kind, opt);
        } else {
            opt.near_optimal_max = 12;
            opt.fastest_max = static_cast<std::size_t>(o.top);
            human_view view(s);
            opt.visit = [&](const ranked& x, const ranked& best, bool near) { view.see(x, best, near); };
            r = search(s, kind, opt);
            r.notes.insert(r.notes.begin(), what_if.begin(), what_if.end());
            g.opt = opt;
            human_report(out, s, kind, r, view, g);
            if (o.uncertainty) uncertainty_text(out, propagate_spreads(s, kind, uncertainty_candidates(r), r.best.c), g.cluster);
        }
    } catch (const budget_error& e) {
        refuse_budget(e);
    }
    if (!o.plot.empty()) write_file_atomically(o.plot, front_svg(r.front, r.best, opt.minimise, "mmgp predict: " + s.name));
    return 0;
}

}  // namespace mmgp::cli
