// Predicted against measured (mmgp/validate.hpp): reads a validation file, predicts every case with the model
// (or the wavefront or message formulas), and summarizes the errors per role and per group. Called by
// `mmgp validate` and the tests; calls the profile reader, the model and mmgp/statistics.hpp.
#include "mmgp/validate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "fit/measured_range.hpp"
#include "base/format.hpp"
#include "profile/profile_json.hpp"
#include "mmgp/statistics.hpp"
#include "mmgp/wavefront.hpp"

namespace mmgp {

namespace {

using detail::above;
using detail::at_least;
using detail::child;
using detail::json;

// The file itself: an object, of kind "validation" and schema mmgp/1 where it says, with known keys only.
void check_file(const detail::reader& r, const json& doc) {
    r.object(doc, "");
    // A platform or application profile given by mistake is not a validation file: its kind says so first.
    r.document(doc, "", "validation");
    r.known_keys(doc, "", detail::schema::validation);
}

// The non-empty array of cases.
const json& cases_array(const detail::reader& r, const json& doc) {
    if (!doc.contains("cases")) r.fail("/cases", "an array of cases", "nothing (the key is missing)");
    const json& cases = doc["cases"];
    if (!cases.is_array() || cases.empty()) r.fail("/cases", "a non-empty array of cases", cases);
    return cases;
}

// A case's configuration as its default label and its key within a group: "m=2 p=1 nodes=1 edtlp", and the
// sharing mode on a GPU node ("... sharing=mps"); a wavefront case's mapping in place of the policy, which it does
// not have ("m=32 p=1 nodes=1 host-driven": the two mappings of one node count are rivals, not repetitions).
std::string config_label(const configuration& c, const json& case_doc) {
    const bool wave = case_doc.contains("mapping") && case_doc["mapping"].is_string();
    return "m=" + std::to_string(c.m) + " p=" + std::to_string(c.p) + " nodes=" + std::to_string(c.nodes) + " " +
           (wave ? case_doc["mapping"].get<std::string>() : std::string(to_string(c.pol))) +
           (c.share == accelerator_sharing::dedicated ? "" : " sharing=" + std::string(to_string(c.share)));
}

// A case's configuration, measurement, role, runs, source and group (the file's by default); its label once its
// sharing mode is known (validate_case).
validation_case read_case(const detail::reader& r, const json& doc, const json& c, const std::string& cp,
                          const std::string& default_group) {
    validation_case vc;
    // A message case predicts one message at a level of the platform's hierarchy (m and p do not apply).
    const bool message = c.contains("message");
    if (message && c.contains("mapping")) r.fail(child(cp, "message"), "a message case or a mapping case", "both");
    vc.measured.c.m = static_cast<int>(message ? r.integer_or(c, cp, "m", 1, 1, 1000000000) : r.integer_at(c, cp, "m", 1, 1000000000));
    vc.measured.c.p = static_cast<int>(message ? r.integer_or(c, cp, "p", 1, 1, 1000000000) : r.integer_at(c, cp, "p", 1, 1000000000));
    vc.measured.c.nodes = static_cast<int>(r.integer_or(c, cp, "nodes", 1, 1, 1000000000));
    vc.measured.has_policy = c.contains("policy");  // else the scenario's search.policy (validate_case)
    vc.measured.c.pol = static_cast<policy>(r.choice(c, cp, "policy", {"edtlp", "os"}, 0, false));
    vc.measured.has_sharing = c.contains("sharing");  // else the platform's first mode (validate_case)
    if (vc.measured.has_sharing)
        vc.measured.c.share = static_cast<accelerator_sharing>(
            r.choice(c, cp, "sharing", {"dedicated", "mps", "time_sliced"}, 0, true));
    vc.measured_s = r.number_at(c, cp, "measured_s", above(0.0, "seconds"));
    if (!detail::measured_in_range(vc.measured_s)) r.fail(child(cp, "measured_s"), detail::measured_range_text, c["measured_s"]);
    if (c.contains("censored")) {
        const json& cz = c["censored"];
        if (!cz.is_boolean()) r.fail(child(cp, "censored"), "true or false (measured_s is a bound when true)", cz);
        vc.censored = cz.get<bool>();
    }
    if (c.contains("role")) {
        static const char* roles[] = {"fitted", "held_back"};
        vc.role = roles[r.choice(c, cp, "role", {"fitted", "held_back"}, 0, true)];
    }
    if (c.contains("runs")) {
        const json& rs = c["runs"];
        std::string rp = child(cp, "runs");
        if (!rs.is_array() || rs.empty())
            r.fail(rp, "an array of at least one measured time, seconds (no key when no run is known)", rs);
        std::vector<double> times;
        for (std::size_t k = 0; k < rs.size(); ++k) {
            times.push_back(r.number(rs[k], child(rp, k), above(0.0, "seconds")));
            measurement::run run{times.back(), vc.censored ? run_outcome::censored : run_outcome::ok};
            run.order = k;
            run.where = child(rp, k);
            vc.measured.runs.push_back(std::move(run));
        }
        // measured_s summarises the runs (their median): outside their range, one of the two is wrong.
        const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
        const double slack = 1e-9 * *hi;
        if (!vc.censored && (vc.measured_s < *lo - slack || vc.measured_s > *hi + slack))
            r.fail(child(cp, "measured_s"),
                   "a time within the range of the case's runs [" + detail::format_double(*lo) + ", " +
                       detail::format_double(*hi) + "] s (measured_s is their median)",
                   c["measured_s"]);
    }
    vc.measured.source = r.string_or(c, cp, "source", r.string_or(doc, "", "source", ""));
    vc.group = r.string_or(c, cp, "group", default_group);
    return vc;
}

// The case's scenario (its own, else the file's; a path, a bundled name or an object) with the case's own
// patches, then the command line's. Its profiles need not cover its search space, only the case's configuration
// (predict_case checks it): a table of alpha up to the cases' m is enough.
scenario case_scenario(const detail::reader& r, const detail::located_json& lj, const json& scen,
                       const std::string& scen_path, const json& c, const std::string& cp,
                       const detail::section_patches& set_patches) {
    detail::section_patches patches;
    if (c.contains("application")) patches.application.push_back(&r.object(c["application"], child(cp, "application")));
    if (c.contains("platform")) patches.platform.push_back(&r.object(c["platform"], child(cp, "platform")));
    for (const json* p : set_patches.application) patches.application.push_back(p);
    for (const json* p : set_patches.platform) patches.platform.push_back(p);
    for (const json* p : set_patches.search) patches.search.push_back(p);
    if (scen.is_string()) {
        detail::located_json sj = detail::load_ref(scen.get<std::string>(), "scenarios", lj.base_dir, lj.file, scen_path);
        return detail::scenario_from_json(sj.doc, sj.file, sj.base_dir, patches, false);
    }
    r.object(scen, scen_path);
    return detail::scenario_from_json(scen, lj.file + " " + scen_path, lj.base_dir, patches, false);
}

// One message at a level of the platform's hierarchy.
prediction message_prediction(const detail::reader& r, const json& c, const std::string& cp, const scenario& s) {
    const std::string mp = child(cp, "message");
    const json& msg = r.object(c["message"], mp);
    r.known_keys(msg, mp, {"level", "bytes"});
    const std::string level = r.string_at(msg, mp, "level");
    const double bytes = r.number_or(msg, mp, "bytes", 0.0, at_least(0.0, "bytes"));
    const hierarchy_level* lv = nullptr;
    std::string names;
    for (const auto& l : s.plat.hier.levels) {
        names += (names.empty() ? "" : ", ") + l.name;
        if (l.name == level) lv = &l;
    }
    if (!lv) r.fail(child(mp, "level"), "a level of the platform's hierarchy (" + (names.empty() ? "none" : names) + ")", msg["level"]);
    prediction pr;
    pr.time_s = message_time(*lv, bytes);
    pr.parts.communication = pr.time_s;
    return pr;
}

// A wavefront sweep, accelerator- or host-driven.
prediction wavefront_case_prediction(const detail::reader& r, const json& c, const std::string& cp,
                                     const scenario& s, const validation_case& vc) {
    const wave_mapping wm = static_cast<wave_mapping>(r.choice(c, cp, "mapping", {"accelerator-driven", "host-driven"}, 0, true));
    if (!s.app.has_wavefront) r.fail(child(cp, "mapping"), "an application with a \"wavefront\" section", "none");
    const wavefront_prediction w = wavefront_time(s.plat, s.app.wave, wm, vc.c());
    if (!w.valid) r.fail(cp, std::string(w.why), vc.label);
    prediction pr;
    pr.time_s = w.time_s;
    pr.parts.accelerator = w.compute + w.fill;
    pr.parts.offload = w.transfer;
    pr.parts.communication = w.communication;
    return pr;
}

// What the case predicts: a message, a wavefront mapping, or the model at exactly this configuration.
prediction predict_case(const detail::reader& r, const json& c, const std::string& cp, scenario& s,
                        const validation_case& vc, model_kind kind) {
    // time-sliced: p <= apus·slots alone; otherwise m*p <= apus·slots (docs/MODEL.md §7); m within the processes
    // per node where the platform limits them
    const bool sliced = vc.measured.c.share == accelerator_sharing::time_sliced;
    if (!platform_holds(s.plat, vc.c())) r.fail(cp, "a feasible configuration (" + holds_text(s.plat, sliced) + ")", vc.label);
    if (c.contains("message")) return message_prediction(r, c, cp, s);
    if (c.contains("mapping")) return wavefront_case_prediction(r, c, cp, s, vc);
    // Evaluate exactly this configuration: the tables must cover it (checked again for this space).
    narrow(s, vc.c());
    check_coverage(s);
    evaluator ev(s, kind);
    return ev(vc.c());
}

// The prediction against the measurement: the error, and the interval of the runs' median.
void score_case(const detail::reader& r, const std::string& cp, const prediction& pr, validation_case& vc) {
    if (!std::isfinite(pr.time_s))
        r.fail(cp, "parameters whose predicted time is finite", "an overflowing prediction for " + vc.label);
    vc.predicted_s = pr.time_s;
    vc.parts = pr.parts;
    // As a ratio first: finite for any two finite positive times unless they are ~10^308 apart.
    vc.err_pct = 100.0 * (vc.predicted_s / vc.measured_s - 1.0);
    if (!std::isfinite(vc.err_pct))
        r.fail(child(cp, "measured_s"), "a measured time on the scale of the prediction (" +
               std::to_string(vc.predicted_s) + " s)", "one whose relative error overflows");
    if (vc.censored) vc.err_pct = std::min(vc.err_pct, 0.0);  // at least the bound: right
}

// Reads and predicts the case at `cp`.
validation_case validate_case(const detail::reader& r, const detail::located_json& lj, const json& c,
                              const std::string& cp, const std::string& default_group,
                              const detail::section_patches& set_patches, model_kind kind) {
    const json& doc = lj.doc;
    r.known_keys(c, cp, detail::schema::validation_case);
    const json* scen = c.contains("scenario") ? &c["scenario"] : (doc.contains("scenario") ? &doc["scenario"] : nullptr);
    std::string scen_path = c.contains("scenario") ? child(cp, "scenario") : "/scenario";
    if (!scen) r.fail(child(cp, "scenario"), "a scenario (path, bundled name or object), here or at /scenario",
                      "nothing (the key is missing)");
    validation_case vc = read_case(r, doc, c, cp, default_group);
    scenario s = case_scenario(r, lj, *scen, scen_path, c, cp, set_patches);
    // One model for every case of the report: a scenario that names another is not predicted with it silently.
    if (!s.model.empty() && s.model != to_string(kind))
        r.fail(scen_path, "a scenario for the model the validation evaluates (" + std::string(to_string(kind)) +
                              ": --model chooses it)", "one naming model " + s.model);
    // A case stating no policy ran under the scenario's (its search.policy, after the edits).
    if (!vc.measured.has_policy) vc.measured.c.pol = s.space.pol;
    // The sharing rule of fit and a replayed tune: a case stating no mode ran under the platform's first.
    const std::vector<accelerator_sharing> modes = s.plat.sharing_modes();
    if (!assign_sharing_mode(vc.measured, modes))
        r.fail(child(cp, "sharing"), sharing_modes_expected(modes, s.plat.name), std::string(to_string(vc.measured.c.share)));
    vc.label = r.string_or(c, cp, "label", config_label(vc.c(), c));
    score_case(r, cp, predict_case(r, c, cp, s, vc, kind), vc);
    return vc;
}

// |error| over the uncensored cases of cs (a censored case has no measured time to compare): a running mean
// and a standard deviation scaled by the maximum, finite for any finite errors.
error_stats stats_of(const std::vector<const validation_case*>& cs) {
    error_stats st;
    double mean = 0, mx = 0;
    for (const auto* vc : cs) {
        if (vc->censored) continue;
        ++st.cases;
        mean += (std::fabs(vc->err_pct) - mean) / st.cases;
        mx = std::max(mx, std::fabs(vc->err_pct));
    }
    if (st.cases == 0) return st;
    const double n = st.cases;
    st.mean_abs_err_pct = mean;
    st.max_abs_err_pct = mx;
    if (st.cases > 1 && mx > 0) {
        double ss = 0;
        for (const auto* vc : cs)
            if (!vc->censored) ss += std::pow((std::fabs(vc->err_pct) - mean) / mx, 2);
        st.std_abs_err_pct = mx * std::sqrt(ss / (n - 1));
    }
    return st;
}

// The report's totals: |error| over all cases and per role, the censored cases, the measurements' intervals.
void summarize_cases(validation_report& rep) {
    std::vector<const validation_case*> all, fitted, held;
    for (const auto& vc : rep.cases) {
        all.push_back(&vc);
        if (vc.role == "fitted") fitted.push_back(&vc);
        if (vc.role == "held_back") held.push_back(&vc);
        if (vc.censored) {
            ++rep.censored;
            rep.censored_right += vc.predicted_s >= vc.measured_s;
        } else if (const auto [lo, hi] = vc.measured.median_ci90(); std::isfinite(lo)) {
            ++rep.with_ci;
            rep.within_ci += vc.predicted_s >= lo && vc.predicted_s <= hi;
            rep.mean_ci_halfwidth_pct += 50.0 * (hi - lo) / vc.measured_s;
        }
    }
    if (rep.with_ci > 0) rep.mean_ci_halfwidth_pct /= rep.with_ci;
    error_stats st = stats_of(all);
    rep.uncensored = st.cases;
    rep.mean_abs_err_pct = st.mean_abs_err_pct;
    rep.max_abs_err_pct = st.max_abs_err_pct;
    rep.std_abs_err_pct = st.std_abs_err_pct;
    rep.fitted = stats_of(fitted);
    rep.held_back = stats_of(held);
}

// The censored cases of a group: how many, how many predicted at least at their bound, and whether each is
// predicted slower than every uncensored case.
void count_censored(const std::vector<const validation_case*>& members, group_summary& g) {
    double slowest_uncensored = 0;
    for (const auto* vc : members)
        if (!vc->censored) slowest_uncensored = std::max(slowest_uncensored, vc->predicted_s);
    for (const auto* vc : members) {
        if (!vc->censored) continue;
        ++g.censored;
        g.censored_right += vc->predicted_s >= vc->measured_s;
        if (!(vc->predicted_s > slowest_uncensored)) g.censored_ranked_last = false;
    }
}

// Groups: which configuration is best, predicted and measured, and what trusting the prediction costs.
void rank_groups(validation_report& rep) {
    std::map<std::string, std::vector<const validation_case*>> groups;
    for (const auto& vc : rep.cases)
        if (!vc.group.empty()) groups[vc.group].push_back(&vc);
    for (const auto& [name, members] : groups) {
        if (members.size() < 2) continue;
        // The measured optimum is the fastest uncensored case (a censored one only has a bound); the
        // predicted optimum is the fastest prediction over all cases.
        const validation_case* pb = members.front();
        const validation_case* mb = nullptr;
        for (const auto* vc : members) {
            if (vc->predicted_s < pb->predicted_s) pb = vc;
            if (!vc->censored && (!mb || vc->measured_s < mb->measured_s)) mb = vc;
        }
        if (!mb) continue;  // every case censored: nothing to rank
        group_summary g;
        g.errors = stats_of(members);
        count_censored(members, g);
        rep.censored_ranked_last = rep.censored_ranked_last && g.censored_ranked_last;
        g.group = name;
        g.cases = static_cast<int>(members.size());
        g.predicted_best = pb->label;
        g.measured_best = mb->label;
        g.optimal_hit = pb == mb;
        g.regret_pct = 100.0 * (pb->measured_s / mb->measured_s - 1.0);
        rep.optimal_hit = rep.optimal_hit && g.optimal_hit;
        rep.regret_pct = std::max(rep.regret_pct, g.regret_pct);
        rep.groups.push_back(g);
    }
}

}  // namespace

validation_report run_validation(const std::string& path, model_kind kind) {
    return run_validation(path, kind, scenario_edits{});
}

validation_report run_validation(const std::string& path, model_kind kind, const scenario_edits& edits) {
    std::vector<detail::json> owned;
    const detail::section_patches set_patches = detail::edits_patches(edits, owned);
    detail::located_json lj = detail::load_ref(path, "validation", ".", path, "");
    const json& doc = lj.doc;
    detail::reader r{lj.file};
    check_file(r, doc);
    validation_report rep;
    rep.name = r.string_or(doc, "", "name", "");
    rep.file = lj.file;
    rep.model = kind;
    const std::string default_group = r.string_or(doc, "", "group", "");
    const json& cases = cases_array(r, doc);
    std::map<std::string, std::string> first_of;  // group + case label -> the first case's pointer
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const std::string cp = child("/cases", i);
        const json& c = r.object(cases[i], cp);
        rep.cases.push_back(validate_case(r, lj, c, cp, default_group, set_patches, kind));
        // Cases of one group are ranked against each other: one configuration twice would be its own rival.
        const validation_case& vc = rep.cases.back();
        if (vc.group.empty() || c.contains("message")) continue;
        const std::string config = config_label(vc.c(), c);
        // The same configuration of another scenario, or of the case's own application or platform edits, is
        // another program or machine.
        std::string scenario;
        for (const char* key : {"scenario", "application", "platform"})
            if (c.contains(key)) scenario += c[key].dump();
        const auto [at, added] = first_of.emplace(vc.group + '\n' + scenario + '\n' + config, cp);
        if (!added)
            r.fail(cp, "one case per configuration in group \"" + vc.group + "\" (its repetitions as the case's runs)",
                   json(config + " again (first " + at->second + ")"));
    }
    summarize_cases(rep);
    rank_groups(rep);
    return rep;
}

}  // namespace mmgp
