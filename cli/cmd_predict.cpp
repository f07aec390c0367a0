// mmgp predict PROFILE: predicted time of every feasible mapping, the best one, the near-optimal set, and why:
// the options, the input checked, the search run with the report's visitor; the reports (predict_report.cpp,
// predict_wavefront.cpp) format its records.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cmd_predict.hpp"
#include "options.hpp"
#include "predict_report.hpp"
#include "mmgp/search.hpp"
#include "mmgp/uncertainty.hpp"

namespace mmgp::cli {

void setup_predict(CLI::App& app, predict_options& o) {
    auto* sub = app.add_subcommand("predict", "Predict every feasible (m, p, nodes) of a scenario and pick the best");
    add_checked(sub, "profile", o.profile, "Scenario file (schema mmgp/1) or a bundled scenario name (pbpi-qs20, raxml-qs20, pbpi-roadrunner, sweep3d-roadrunner, pbpi-ps3-cluster)")
        ->required();
    add_space_options(sub, o.space);
    add_checked(sub, "--tolerance", o.tolerance, "Near-optimal margin as a fraction of the best time (default 0.05)");
    add_checked(sub, "--top", o.top, "Rows of the ranked table in the human output (default 15)");
    add_objective_options(sub, o.goal, budget_option::offered);
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

// The configurations --uncertainty samples: the listed ones (fastest, near-optimal), best first, each once.
std::vector<configuration> uncertainty_candidates(const search_result& r) {
    std::vector<configuration> out{r.best.c};
    auto add = [&](const configuration& c) {
        if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    };
    for (const auto& x : r.fastest) add(x.c);
    for (const auto& x : r.near_optimal) add(x.c);
    for (std::size_t i : thin_front(r.front, {}, 20)) add(r.front[i].c);
    return out;
}


// The search with `opt` (its visitor set by the caller), the what-if notes first among its notes, and, with
// `uncertainty`, the intervals of the listed configurations.
struct prediction_record {
    search_result r;
    std::optional<uncertainty_report> spreads;
};
prediction_record predicted(const scenario& s, model_kind kind, const search_options& opt,
                            const std::vector<std::string>& what_if, bool uncertainty) {
    prediction_record p{search(s, kind, opt), std::nullopt};
    p.r.notes.insert(p.r.notes.begin(), what_if.begin(), what_if.end());
    if (uncertainty) p.spreads = propagate_spreads(s, kind, uncertainty_candidates(p.r), p.r.best.c);
    return p;
}

// The human report: the search with the report's view seeing every configuration, then the report and, with
// `uncertainty`, the intervals of the listed configurations.
search_result human_prediction(predict::out_stream& out, const scenario& s, model_kind kind, search_options& opt,
                               const std::vector<std::string>& what_if, predict::goal_view& g, bool uncertainty) {
    predict::human_view view(s);
    opt.visit = [&](const ranked& x, const ranked& best, bool near) { view.see(x, best, near); };
    prediction_record p = predicted(s, kind, opt, what_if, uncertainty);
    g.opt = opt;
    predict::human_text(out, s, kind, p.r, view, g);
    if (p.spreads) predict::uncertainty_text(out, *p.spreads, g.cluster);
    return std::move(p.r);
}

// --json: the configurations written while the search evaluates them.
search_result json_prediction(predict::out_stream& out, const scenario& s, model_kind kind, search_options& opt,
                              const std::vector<std::string>& what_if, bool uncertainty, const predict::goal_view& g) {
    predict::json_stream json(out, s, kind, opt, count_feasible(s));
    opt.visit = [&](const ranked& x, const ranked&, bool near) { json.row(x, near); };
    prediction_record p = predicted(s, kind, opt, what_if, uncertainty);
    json.finish(p.r, g, p.spreads ? &*p.spreads : nullptr);
    return std::move(p.r);
}

// --csv: every configuration written while the search evaluates it, after a first search of the front; returns
// that first search (its front is what --plot draws).
search_result csv_prediction(predict::out_stream& out, const scenario& s, model_kind kind, search_options& opt) {
    search_options first = opt;
    first.front = true;
    const search_result fr = search(s, kind, first);
    predict::csv_stream csv(out, s, fr);
    opt.visit = [&](const ranked& x, const ranked&, bool near) { csv.row(x, near); };
    search(s, kind, opt);
    return fr;
}

}  // namespace

int run_predict(const predict_options& o) {
    (void)parse_model_option(o.space.model);  // a bad option before any file is read
    scenario s = load_with_options(o.profile, o.space);
    const model_kind kind = model_of(o.space, s);
    if (o.tolerance) s.space.tolerance = *o.tolerance;  // its range is checked by the option table
    // The search streams: no output keeps every configuration in memory (search.hpp).
    search_options opt;
    opt.keep_all = false;
    apply_objective_options(o.goal, s, opt);
    if (!o.plot.empty()) check_output("--plot", o.plot, s.sources);
    if (o.uncertainty) check_spreads(s);  // no report byte before every input is checked
    predict::out_stream out;
    std::vector<std::string> what_if;  // said with the model's notes: the output is not the file's prediction
    for (const auto& set : o.space.sets) what_if.push_back("what-if: --set " + set);
    if (s.app.has_wavefront) {  // a wavefront program: its two mappings over the node counts
        const char* given = o.csv ? "--csv" : o.uncertainty ? "--uncertainty" : !o.plot.empty() ? "--plot"
                            : !o.goal.objective.empty() ? "--objective" : o.goal.budget ? "--budget"
                            : o.goal.within ? "--within" : nullptr;
        if (given)
            throw usage_error(std::string(given) + ": expected a scenario with an off-load profile, found a wavefront "
                              "application (its two mappings are compared by time)");
        // Nor what only the off-load search reads (once taken and ignored: the same report).
        const char* searched = !o.space.m.empty() ? "--m" : !o.space.p.empty() ? "--p" : !o.space.policy.empty() ? "--policy"
                               : o.space.model_named ? "--model" : o.tolerance ? "--tolerance" : o.top ? "--top" : nullptr;
        if (searched)
            throw usage_error(std::string(searched) + ": expected a scenario with an off-load profile, found a wavefront "
                              "application (its two mappings set m and p at each node count; --nodes narrows them)");
        // The same through --set: of the search, a wavefront reads only the nodes (once taken and ignored).
        for (const auto& set : o.space.sets)
            if (set.rfind("search.", 0) == 0 && set.rfind("search.nodes=", 0) != 0)
                throw usage_error("--set: expected search.nodes alone of the search for a wavefront application (its "
                                  "two mappings set m and p at each node count), found \"" + one_line(set) + "\"");
        predict::wavefront_report(out, s, o.json, what_if);
        return 0;
    }
    predict::goal_view g;
    g.cluster = s.space.nodes.hi > s.space.nodes.lo;
    opt.front = g.cluster || !o.plot.empty();
    search_result r;
    try {
        if (g.cluster && !o.csv) g.others = other_objectives(s, kind, opt);
        if (o.json) {
            opt.near_optimal_max = json_near_optimal_max;
            // --uncertainty samples what the text lists, the --top fastest among them (once the text and --json
            // gave intervals of different sets, and different sets that could not be told apart).
            if (o.uncertainty) opt.fastest_max = static_cast<std::size_t>(o.top.value_or(15));
            r = json_prediction(out, s, kind, opt, what_if, o.uncertainty, g);
        } else if (o.csv) {
            opt.near_optimal_max = 1;  // the rows carry the flag; no list is printed
            r = csv_prediction(out, s, kind, opt);
        } else {
            opt.near_optimal_max = 12;
            opt.fastest_max = static_cast<std::size_t>(o.top.value_or(15));
            r = human_prediction(out, s, kind, opt, what_if, g, o.uncertainty);
        }
    } catch (const budget_error& e) {
        refuse_budget(e);
    }
    // The plot before the report leaves the buffer: when it cannot be written (a full disk), its line is the only
    // output (once a whole report on stdout, then "standard output holds an incomplete report").
    if (!o.plot.empty()) {
        try {
            write_file_atomically(o.plot, front_svg(r.front, r.best, opt.minimise, "mmgp predict: " + s.name));
        } catch (...) {
            out.discard_buffered();
            throw;
        }
    }
    return 0;
}

}  // namespace mmgp::cli
