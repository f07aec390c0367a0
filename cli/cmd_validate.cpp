// mmgp validate FILE: predicted against measured for every case of a validation file. Calls run_validation()
// (libmmgp) and prints its report as a table or one JSON document; the error gates set the exit status.
#include <cmath>
#include <fmt/format.h>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cmd_validate.hpp"
#include "options.hpp"

namespace mmgp::cli {

void setup_validate(CLI::App& app, validate_options& o) {
    auto* sub = app.add_subcommand("validate", "Compare predictions with measured run times (per case and summary)");
    add_checked(sub, "file", o.file, "Validation file (schema mmgp/1, kind validation) or a bundled one (edtlp-table1)")
        ->required();
    add_checked(sub, "--model", o.model, "eq11 or mmgp (default mmgp)");
    sub->add_flag("--json", o.json, "Print one JSON document");
    add_checked(sub, "--max-mean-err", o.max_mean, "Exit 1 when the mean absolute error (%) exceeds this");
    add_checked(sub, "--max-err", o.max_max, "Exit 1 when the largest absolute error (%) exceeds this");
    add_set_option(sub, o.sets, "platform.KEY, application.KEY or search.policy (every case, after its own edits; "
                                "search.policy: the policy of a case that states none)");
}

namespace {

using ojson = nlohmann::ordered_json;  // the keys in the order the report documents them

ojson stats_json(const error_stats& st) {
    if (st.cases == 0) return nullptr;
    return {{"cases", st.cases}, {"mean_abs_err_pct", json_number(st.mean_abs_err_pct)},
            {"max_abs_err_pct", json_number(st.max_abs_err_pct)}, {"std_abs_err_pct", json_number(st.std_abs_err_pct)}};
}

ojson case_json(const validation_case& c) {
    ojson runs = ojson::array();
    for (const measurement::run& r : c.measured.runs) runs.push_back(json_number(r.time_s));
    const auto [lo, hi] = c.measured.median_ci90();
    ojson j = {{"label", c.label}, {"group", c.group}, {"m", c.c().m}, {"p", c.c().p}, {"nodes", c.c().nodes},
               {"policy", std::string(to_string(c.c().pol))}};
    // A GPU node's case names its sharing mode, as its label does.
    if (c.c().share != accelerator_sharing::dedicated) j["sharing"] = std::string(to_string(c.c().share));
    const ojson rest = {{"measured_s", json_number(c.measured_s)}, {"predicted_s", json_number(c.predicted_s)},
                        {"err_pct", json_number(c.err_pct)}, {"censored", c.censored},
                        {"role", c.role.empty() ? ojson(nullptr) : ojson(c.role)}, {"runs", runs},
                        {"median_ci90", std::isfinite(lo) ? ojson::array({json_number(lo), json_number(hi)}) : ojson(nullptr)},
                        {"source", c.measured.source}, {"breakdown", breakdown_object(c.parts)}};
    for (auto it = rest.begin(); it != rest.end(); ++it) j[it.key()] = it.value();
    return j;
}

ojson group_json(const group_summary& g) {
    return {{"group", g.group}, {"cases", g.cases}, {"predicted_best", g.predicted_best},
            {"measured_best", g.measured_best}, {"optimal_hit", g.optimal_hit}, {"regret_pct", json_number(g.regret_pct)},
            {"errors", stats_json(g.errors)}, {"censored", g.censored}, {"censored_right", g.censored_right},
            {"censored_ranked_last", g.censored_ranked_last}};
}

ojson summary_json(const validation_report& rep) {
    return {{"cases", rep.cases.size()}, {"mean_abs_err_pct", json_number(rep.mean_abs_err_pct)},
            {"max_abs_err_pct", json_number(rep.max_abs_err_pct)}, {"std_abs_err_pct", json_number(rep.std_abs_err_pct)},
            {"optimal_hit", rep.groups.empty() ? ojson(nullptr) : ojson(rep.optimal_hit)},
            {"regret_pct", rep.groups.empty() ? ojson(nullptr) : json_number(rep.regret_pct)},
            {"uncensored", rep.uncensored}, {"censored", rep.censored}, {"censored_right", rep.censored_right},
            {"censored_ranked_last", rep.censored_ranked_last}, {"fitted", stats_json(rep.fitted)},
            {"held_back", stats_json(rep.held_back)}, {"with_ci", rep.with_ci}, {"within_ci", rep.within_ci},
            {"mean_ci_halfwidth_pct", rep.with_ci ? json_number(rep.mean_ci_halfwidth_pct) : ojson(nullptr)}};
}

// The report as one JSON document (schema mmgp/1, kind validation-report) on one line.
std::string report_json(const validation_report& rep, model_kind kind) {
    ojson cases = ojson::array(), groups = ojson::array();
    for (const auto& c : rep.cases) cases.push_back(case_json(c));
    for (const auto& g : rep.groups) groups.push_back(group_json(g));
    const ojson doc = {{"schema", "mmgp/1"}, {"kind", "validation-report"}, {"file", rep.file}, {"name", rep.name},
                      {"model", std::string(to_string(kind))}, {"cases", cases}, {"groups", groups},
                      {"summary", summary_json(rep)}};
    return doc.dump() + "\n";
}

// The table of cases: measured, predicted, error, role and source.
std::string cases_text(const validation_report& rep, model_kind kind) {
    std::string out = fmt::format("{} ({}): model {}, {} cases\n\n", rep.name, rep.file, to_string(kind), rep.cases.size());
    const bool roles = rep.fitted.cases + rep.held_back.cases > 0;
    out += fmt::format("{:<36} {:>12} {:>12} {:>8}  {}{}\n", "case", "measured", "predicted", "error",
                       roles ? "role       " : "", "source");
    for (const auto& c : rep.cases)
        out += fmt::format("{:<36} {:>12} {:>12} {:>+7.2f}%  {}{}{}\n", c.label,
                           (c.censored ? ">" : "") + human_time(c.measured_s), human_time(c.predicted_s), c.err_pct,
                           roles ? fmt::format("{:<11}", c.role.empty() ? "-" : c.role) : "", c.measured.source,
                           c.censored ? (c.predicted_s >= c.measured_s ? " [censored: predicted >= bound]"
                                                                      : " [censored: predicted BELOW the bound]")
                                      : "");
    return out;
}

// |error| over all cases, per role, and the measurements' own uncertainty.
std::string summary_text(const validation_report& rep) {
    std::string out;
    if (rep.censored == 0)
        out += fmt::format("\n|error|: mean {:.2f} %, max {:.2f} %, standard deviation {:.2f} % over {} cases\n",
                           rep.mean_abs_err_pct, rep.max_abs_err_pct, rep.std_abs_err_pct, rep.cases.size());
    else
        out += fmt::format(
            "\n|error|: mean {:.2f} %, max {:.2f} %, standard deviation {:.2f} % over {} uncensored cases; "
            "{} censored cases (measured time > bound), {} predicted at least at the bound, ranked after every "
            "uncensored case of their group: {}\n",
            rep.mean_abs_err_pct, rep.max_abs_err_pct, rep.std_abs_err_pct, rep.uncensored, rep.censored,
            rep.censored_right, rep.censored_ranked_last ? "yes" : "no");
    if (rep.fitted.cases > 0)
        out += fmt::format("  fitted cases:    mean {:.2f} %, max {:.2f} %, sd {:.2f} % over {}\n", rep.fitted.mean_abs_err_pct,
                           rep.fitted.max_abs_err_pct, rep.fitted.std_abs_err_pct, rep.fitted.cases);
    if (rep.held_back.cases > 0)
        out += fmt::format("  held-back cases: mean {:.2f} %, max {:.2f} %, sd {:.2f} % over {}\n",
                           rep.held_back.mean_abs_err_pct, rep.held_back.max_abs_err_pct, rep.held_back.std_abs_err_pct,
                           rep.held_back.cases);
    if (rep.with_ci > 0)
        out += fmt::format("  measurement uncertainty: {} uncensored cases have 5 runs or more; the 90 % interval of their "
                           "median is +-{:.2f} % on average, and the prediction lies inside it for {} of them\n",
                           rep.with_ci, rep.mean_ci_halfwidth_pct, rep.within_ci);
    return out;
}

std::string groups_text(const validation_report& rep) {
    std::string out;
    for (const auto& g : rep.groups)
        out += fmt::format("group {}: {} cases, |error| mean {:.2f} % max {:.2f} %; predicted best {}, measured best {}: {} "
                           "(regret {:.2f} %){}\n",
                           g.group, g.cases, g.errors.mean_abs_err_pct, g.errors.max_abs_err_pct, g.predicted_best,
                           g.measured_best, g.optimal_hit ? "optimum hit" : "optimum missed", g.regret_pct,
                           g.censored ? fmt::format("; {} censored, {} at least at the bound, ranked last: {}", g.censored,
                                                    g.censored_right, g.censored_ranked_last ? "yes" : "no")
                                      : "");
    return out;
}

// Each case is predicted at its own m, p, nodes and sharing mode: of the search's keys only the policy reaches a
// case (one that states none), and an edit of another would change nothing.
void check_search_sets(const std::vector<std::string>& sets) {
    for (const std::string& set : sets)
        if (set.rfind("search.", 0) == 0 && set.rfind("search.policy=", 0) != 0)
            throw usage_error("--set " + set.substr(0, set.find('=')) +
                              ": expected platform.KEY, application.KEY or search.policy with validate (each case is "
                              "predicted at its own m, p, nodes and sharing mode), found a search key that would change "
                              "nothing");
}

}  // namespace

int run_validate(const validate_options& o) {
    check_search_sets(o.sets);
    model_kind kind = parse_model_option(o.model);
    validation_report rep = run_validation(o.file, kind, edits_of(o.sets));
    // A gate over no measured case would pass with nothing checked.
    if ((o.max_mean || o.max_max) && rep.uncensored == 0)
        throw usage_error(fmt::format("{}: expected a validation file with at least one uncensored case to check, "
                                      "found {} case{}, every one censored",
                                      o.max_mean ? "--max-mean-err" : "--max-err", rep.cases.size(),
                                      rep.cases.size() == 1 ? "" : "s"));
    const std::string out = o.json ? report_json(rep, kind) : cases_text(rep, kind) + summary_text(rep) + groups_text(rep);
    std::cout << out << std::flush;
    // A NaN summary never passes a gate: !(x <= bound) is true for NaN.
    if ((o.max_mean && !(rep.mean_abs_err_pct <= *o.max_mean)) || (o.max_max && !(rep.max_abs_err_pct <= *o.max_max))) {
        std::cerr << fmt::format("mmgp: validate: error bound exceeded (mean {:.2f} %, max {:.2f} %)\n",
                                 rep.mean_abs_err_pct, rep.max_abs_err_pct);
        return 1;
    }
    return 0;
}

}  // namespace mmgp::cli
