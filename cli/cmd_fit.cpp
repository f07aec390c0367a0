// mmgp fit MEASUREMENTS: application parameters from measured runs (least squares), with confidence
// intervals, residuals and what the data cannot identify.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <optional>

#include "cmd_fit.hpp"
#include "options.hpp"
#include "mmgp/fit.hpp"

namespace mmgp::cli {

void setup_fit(CLI::App& app, fit_options_cli& o) {
    auto* sub = app.add_subcommand("fit", "Fit an application profile to measured runs (CSV or JSON) by least squares");
    add_checked(sub, "measurements", o.file, "Runs: CSV with a header (m,p,nodes,units,time_s[,policy]) or JSON")->required();
    add_checked(sub, "--platform", o.platform, "Platform profile (path or bundled name) the runs were measured on");
    add_checked(sub, "-o,--output", o.output, "Write the fitted application profile here (atomically)");
    add_set_option(sub, o.sets, "platform.KEY");
    add_checked(sub, "--max-age", o.max_age_days,
                "Days after which a calibrated --platform is called old (default 90; docs/PROFILES.md \"Freshness\")");
    add_checked(sub, "--decomposition", o.decomposition, "task or data (default: chosen from the runs)");
    add_checked(sub, "--scaling", o.scaling, "strong (default) or weak");
    add_checked(sub, "--policy", o.policy, "Host policy of runs without a policy column: edtlp or os (default: chosen from the runs)");
    add_checked(sub, "--N", o.N, "Off-loading phases (per unit for task), held during the fit (default: 1, or fitted where the runs identify it and predict better)");
    sub->add_flag("--fit-N", o.fit_N, "Estimate N (default: only where the runs identify it and predict better)");
    sub->add_flag("--fit-T-start", o.fit_T_start, "Estimate T_start, the start-up per process (needs two unit counts; default: where they exist and it predicts better)");
    add_checked(sub, "--N-start", o.N_start,
                    "Off-loads of the start-up per process (application.N_start; their switches and spin convoys on "
                    "time-shared cores are added to T_start; default 0)");
    add_checked(sub, "--waits-per-offload", o.waits_per_offload,
                "Times an off-load's host waits for the accelerator (application.waits_per_offload, as mmgp profile "
                "--accelerator cuda measures it; a time-sliced switch each with several processes): held, and carried "
                "into the fitted profile (default: the count that prices the time-sliced runs of several processes "
                "best, where there are any; else 1)");
    add_checked(sub, "--spin-limit", o.spin_limit,
                    "The program's spin-wait iterations before blocking, or 'unbounded' (application.spin_limit; default: 0, 4000 "
                    "or unbounded, chosen from the runs)");
    add_checked(sub, "--noise", o.noise_pct,
                "Run-to-run noise in percent the structure's choice assumes where repetitions do not measure it (default 20)");
    add_checked(sub, "--fix", o.fix, "Hold a parameter: NAME=VALUE with NAME in T_hpu, T_apu, C_apu, g, T_start (repeatable)");
    add_checked(sub, "--name", o.name, "Name of the fitted application (default: fitted)");
    sub->add_flag("--json", o.json, "Print the fitted profile as JSON instead of the report");
}

namespace {

platform neutral_platform(const std::vector<measurement>& runs) {
    platform pl;
    pl.name = "neutral";
    int m = 1, mp = 1, n = 1;
    for (const auto& r : runs) {
        m = std::max(m, r.c.m);
        mp = std::max<int>(mp, r.c.m * r.c.p);
        n = std::max(n, r.c.nodes);
    }
    pl.hpu_contexts = m;
    pl.apus = mp;
    pl.nodes = n;
    pl.alpha.kind = m_function::form::constant;
    pl.alpha.value = 1.0;
    return pl;
}

std::string ci(const fitted_param& p) {
    if (!p.fitted || !p.identified || !std::isfinite(p.ci95_lo)) return "";
    return fmt::format("[{:.5g}, {:.5g}]", p.ci95_lo, p.ci95_hi);
}

// --spin-limit: an integer >= 0 or 'unbounded'.
std::int64_t spin_limit_of(const std::string& text) {
    if (text == "unbounded") return application::spin_unbounded;
    long long v = -1;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v < 0)
        throw usage_error("--spin-limit: expected an integer >= 0 or 'unbounded', found '" + text + "'");
    return v;
}

// One --fix NAME=VALUE added to opt.fixed: a parameter --fix can hold, a finite value >= 0, each held once, and
// not T_start when --fit-T-start fits it.
void add_fix(const std::string& f, bool fit_T_start, fit_options& opt) {
    auto eq = f.find('=');
    std::string name = f.substr(0, eq);
    if (eq == std::string::npos || !fixable_parameter(name))
        throw usage_error("--fix: expected NAME=VALUE with NAME in T_hpu, T_apu, C_apu, g, T_start, found \"" + f + "\"");
    double v = 0;
    try {
        std::size_t used = 0;
        v = std::stod(f.substr(eq + 1), &used);
        if (used != f.size() - eq - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
        throw usage_error("--fix: expected NAME=VALUE with a number, found \"" + f + "\"");
    }
    if (!(v >= 0) || !std::isfinite(v)) throw usage_error("--fix: expected a finite value >= 0, found \"" + f + "\"");
    for (const auto& [held, value] : opt.fixed)
        if (held == name)
            throw usage_error(fmt::format("--fix: expected each parameter held once, found {} held at {:g} and at {:g}",
                                          name, value, v));
    if (name == "T_start" && fit_T_start)
        throw usage_error("--fix: expected either --fix T_start=VALUE (held) or --fit-T-start (fitted), found both");
    opt.fixed.emplace_back(name, v);
}

// The fit's options from the command line's.
fit_options fit_options_of(const fit_options_cli& o) {
    fit_options opt;
    // --decomposition, --scaling, --N and --N-start are checked by the option table (options.cpp).
    opt.decomp = o.decomposition == "data" ? decomposition::data : decomposition::task;  // task when not given
    opt.scale = o.scaling == "weak" ? scaling::weak : scaling::strong;
    if (!o.policy.empty()) opt.pol = parse_policy_option(o.policy);
    // An option that cannot take effect is refused: --N is held, --fit-N fits it; --fix T_start holds what
    // --fit-T-start would fit; a parameter held twice.
    if (o.N && o.fit_N)
        throw usage_error(fmt::format("--N: expected either --N (N held) or --fit-N (N fitted), found both (--N {:g})", *o.N));
    opt.N = o.N.value_or(1.0);
    opt.N_start = o.N_start;
    opt.waits_per_offload = o.waits_per_offload.value_or(1.0);
    opt.fit_waits = !o.waits_per_offload;
    opt.fit_N = o.fit_N;
    opt.fit_T_start = o.fit_T_start;
    if (!o.spin_limit.empty()) opt.spin_limit = spin_limit_of(o.spin_limit);
    opt.name = o.name;
    for (const auto& f : o.fix) add_fix(f, o.fit_T_start, opt);
    // Holds that leave the program no work: no profile with every time term at 0 describes a run that took time.
    int held_zero = 0;
    for (const auto& [name, value] : opt.fixed)
        held_zero += value == 0 && (name == "T_hpu" || name == "T_apu" || name == "C_apu");
    if (held_zero == 3)
        throw usage_error("--fix: expected holds that leave the program some work (one of T_hpu, T_apu, C_apu above 0 "
                          "or fitted), found T_hpu, T_apu and C_apu all held at 0");
    return opt;
}

// The parts of the structure the command line holds; the others are chosen from the runs.
structure_held held_of(const fit_options_cli& o) {
    structure_held h;
    h.decomposition = !o.decomposition.empty();
    h.policy = !o.policy.empty();
    h.spin_limit = !o.spin_limit.empty();
    h.T_start = o.fit_T_start ||
                std::any_of(o.fix.begin(), o.fix.end(), [](const std::string& f) { return f.starts_with("T_start="); });
    h.N = o.N.has_value() || o.fit_N;
    return h;
}

std::string spin_text(std::int64_t s) { return s == application::spin_unbounded ? "unbounded" : std::to_string(s); }

// The structure's choice: the candidates' scores (at most 8 rows, the chosen first) and why it won.
std::string selection_report(const structure_selection& s) {
    if (!s.chose) return "";
    const bool cv = s.criterion != "BIC";
    std::string out = fmt::format(
        "\nstructure: chosen from {} candidate{} by {} over {} configurations\n", s.candidates.size(),
        s.candidates.size() == 1 ? "" : "s",
        cv ? "leave-one-configuration-out prediction (mean |error| of each configuration fitted from the others)"
           : fmt::format("BIC (squared log residuals over a noise of {:.3g} %, {}, + k ln n)", s.noise_pct, s.noise_source),
        s.configurations);
    out += fmt::format("  {:<52} {:>3} {:>9} {:>9} {:>11}\n", "candidate", "k", "rms err", "max err", cv ? "LOO err" : "BIC");
    const std::size_t shown = std::min<std::size_t>(s.candidates.size(), 8);
    for (std::size_t i = 0; i < shown; ++i) {
        const auto& c = s.candidates[i];
        if (!c.fitted) {
            out += fmt::format("  {:<52} refused: {}\n", c.label, c.why_not);
            continue;
        }
        out += fmt::format("  {:<52} {:>3} {:>8.2f}% {:>8.2f}% {:>11}{}\n", c.label, c.k, c.rms_err_pct, c.max_abs_err_pct,
                           cv ? fmt::format("{:.2f}%", c.score) : fmt::format("{:.2f}", c.score),
                           i == 0 ? "  <- chosen" : "");
    }
    if (s.candidates.size() > shown) {
        std::size_t refused = 0;
        for (std::size_t i = shown; i < s.candidates.size(); ++i) refused += !s.candidates[i].fitted;
        out += fmt::format("  ... {} more ({} refused by the runs)\n", s.candidates.size() - shown, refused);
    }
    const auto& best = s.candidates.front();
    const auto lowest = std::min_element(s.candidates.begin(), s.candidates.end(), [](const auto& a, const auto& b) {
        return a.fitted && (!b.fitted || a.score < b.score);
    });
    const auto score = [&](double v) { return cv ? fmt::format("{:.2f} %", v) : fmt::format("{:.2f}", v); };
    if (lowest != s.candidates.begin() && lowest->fitted)
        out += fmt::format("  chosen: {}: the fewest parameters ({}) within one standard error of the lowest LOO error, "
                           "{} +- {} ({})\n",
                           best.label, best.k, score(lowest->score), score(lowest->score_se), lowest->label);
    else if (s.candidates.size() > 1 && s.candidates[1].fitted)
        out += fmt::format("  chosen: {}: {} {} against {} for the next ({})\n", best.label, cv ? "LOO error" : "BIC",
                           score(best.score), score(s.candidates[1].score), s.candidates[1].label);
    out += "  hold a part with its option: --decomposition, --policy, --spin-limit, --N or --fit-N, --fit-T-start or "
           "--fix T_start=0\n";
    return out;
}

// The report of a fit of n_runs runs (censored ones included): the parameters with their errors and
// intervals, the residuals and the warnings.
std::string fit_report(const fit_result& f, std::size_t n_runs, const fit_options& opt, const fit_options_cli& o,
                       const platform& pl) {
    std::string out = fmt::format("mmgp fit: {} runs from {} on platform {}, {} decomposition, policy {}, spin limit {}\n",
                                  n_runs, o.file, pl.name, to_string(opt.decomp), to_string(opt.pol),
                                  spin_text(opt.spin_limit));
    if (o.platform.empty())
        out += "  no --platform: host contention, context switches and off-load costs are taken as zero\n";
    out += fmt::format("\n{:<7} {:>13} {:>13} {:>29}  {}\n", "param", "value", "std. error", "95 % confidence interval", "");
    for (const auto& p : f.params)
        out += fmt::format("{:<7} {:>13.6g} {:>13} {:>29}  {}\n", p.name, p.value,
                           p.fitted && p.identified && std::isfinite(p.stderr_) ? fmt::format("{:.3g}", p.stderr_) : "",
                           ci(p), p.note);
    if (f.waits_runs > 0)
        out += fmt::format("{:<7} {:>13.6g} {:>13} {:>29}  {}\n", "waits", f.app.waits_per_offload, "", "",
                           fmt::format("waits_per_offload: fitted to the {} time-sliced runs of several processes",
                                       f.waits_runs));
    // The policy and the sharing mode of each run where the runs have several (runs of both policies; a GPU
    // node's MPS and time-sliced runs).
    bool policies = false, modes = false;
    for (const auto& r : f.residuals) {
        policies = policies || r.c.pol != f.residuals.front().c.pol;
        modes = modes || r.c.share != f.residuals.front().c.share;
    }
    out += fmt::format("\n{:>5} {:>5} {:>6} {:>7} {:>12} {:>12} {:>8}{}{}\n", "m", "p", "nodes", "units", "measured",
                       "fitted", "error", policies ? "  policy" : "", modes ? "  sharing" : "");
    for (const auto& r : f.residuals)
        out += fmt::format("{:>5} {:>5} {:>6} {:>7} {:>12.5g} {:>12.5g} {:>+7.2f}%{}{}\n", r.c.m, r.c.p, r.c.nodes,
                           r.units, r.run.time_s, r.predicted_s, r.err_pct,
                           !policies ? std::string() : modes ? fmt::format("  {:<6}", to_string(r.c.pol))
                                                             : "  " + std::string(to_string(r.c.pol)),
                           modes ? "  " + std::string(to_string(r.c.share)) : "");
    out += fmt::format("\nresiduals: rms {:.2f} %, max {:.2f} %, {} degrees of freedom\n", f.rms_err_pct,
                       f.max_abs_err_pct, f.dof);
    for (const auto& w : f.warnings) out += "warning: " + w + "\n";
    return out;
}

}  // namespace

int run_fit(const fit_options_cli& o) {
    if (!o.output.empty()) check_output("-o", o.output, {o.file, o.platform});  // before reading anything
    interrupt_guard guard(o.output);
    const fit_options base = fit_options_of(o);
    std::vector<std::string> ignored;
    const std::vector<measurement> runs = read_runs(o.file, &ignored);
    warn_about_columns(o.file, ignored);
    if (!o.sets.empty() && o.platform.empty())
        throw usage_error("--set: edits the platform of --platform; expected --platform FILE, found none");
    platform pl = o.platform.empty() ? neutral_platform(runs) : load_platform(o.platform, edits_of(o.sets).platform);
    warn_about_platform(pl, o.max_age_days);
    selection_options sel;
    sel.noise_pct = o.noise_pct;
    const structure_selection s = select_structure(pl, runs, base, held_of(o), o.file, sel);
    const fit_result& f = s.fit;
    const fit_options& opt = s.candidates.front().fitted ? s.candidates.front().opt : base;
    std::string profile = application_json(s, o.file);
    // Estimates beyond what a profile holds (a gap of hours with N held at 1) are the runs' and options' doing.
    const described_from from{o.file, "(all rows)",
                              std::string("runs whose fitted application a profile can hold") +
                                  (o.N || o.fit_N ? "" : " (N is 1 unless --N or --fit-N says otherwise)"),
                              "runs that fit"};
    // Checked once, before any output: written with -o (write_profile checks it), else checked alone.
    if (!o.output.empty())
        write_profile(o.output, profile, profile_kind::application, "fit", &from);
    else
        check_profile(profile, profile_kind::application, "fit", &from);
    std::string out = profile;
    if (!o.json) {
        // The structure's choice before the parameters it was fitted with; the structure's warnings at the end.
        out = fit_report(f, runs_in_order(runs).size(), opt, o, pl);
        out.insert(out.find("\nparam"), selection_report(s));
        for (const auto& w : s.warnings) out += "warning: " + w + "\n";
    }
    if (!o.output.empty() && !o.json) out += "wrote " + o.output + "\n";
    std::cout << out << std::flush;
    return 0;
}

}  // namespace mmgp::cli
