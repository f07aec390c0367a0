// Choosing a fit's structure from the runs (mmgp/fit.hpp, select_structure): every structure the caller left
// open — decomposition, host policy, spin limit, T_start, N — is fitted, each scored by what it predicts, the
// best kept. The fits share their coefficient rows (the model evaluated once per configuration and shape) and
// score through the model's linear form; the chosen one is fitted again with residuals from the model itself.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>

#include "fit/terms.hpp"
#include "mmgp/error.hpp"
#include "mmgp/fit.hpp"
#include "mmgp/statistics.hpp"

namespace mmgp {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
/// A training residual above this (percent) under the chosen structure is reported: the model does not
/// describe that configuration.
constexpr double undescribed_pct = 25.0;
/// The least noise the criterion assumes (percent): repetitions a few tenths of a percent apart on a quiet node
/// would otherwise let one configuration's misfit outweigh every parameter's penalty.
constexpr double noise_floor_pct = 0.5;
/// Residuals beyond this many noise deviations count as this many (a robust, trimmed criterion).
constexpr double clip_sigmas = 3.0;

using detail::key_of;
using config_key = detail::run_key;

std::string spin_name(std::int64_t s) {
    return s == application::spin_unbounded ? "unbounded" : std::to_string(s);
}

std::string label_of(const fit_options& o, std::size_t n_user_fixed) {
    std::string held;
    for (std::size_t i = n_user_fixed; i < o.fixed.size(); ++i) held += (held.empty() ? "" : " ") + o.fixed[i].first;
    return std::string(to_string(o.decomp)) + ", " + std::string(to_string(o.pol)) + ", spin " + spin_name(o.spin_limit) +
           ", T_start " + (o.fit_T_start ? "fitted" : "held") + ", N " + (o.fit_N ? "fitted" : "held") +
           (held.empty() ? "" : ", 0: " + held);
}

bool is_fixed(const fit_options& o, const char* name) {
    return std::any_of(o.fixed.begin(), o.fixed.end(), [&](const auto& f) { return f.first == name; });
}

// The parameters a candidate leaves free: T_hpu, T_apu, C_apu, g not held by --fix, and N and T_start when fitted.
int free_parameters(const fit_options& o) {
    int k = o.fit_N + o.fit_T_start;
    for (const char* n : {"T_hpu", "T_apu", "C_apu", "g"}) k += !is_fixed(o, n);
    return k;
}

// With fewer distinct configurations than free parameters, a candidate holds some of g, C_apu and T_hpu at 0
// (not T_apu, the accelerator work every run has): one variant per subset of the size needed, in the order of
// preference g (identified only by three values of p), C_apu, T_hpu. Otherwise the candidate itself.
std::vector<fit_options> within_configurations(const fit_options& o, int configurations) {
    const int excess = free_parameters(o) - std::max(configurations, 1);
    if (excess <= 0) return {o};
    std::vector<const char*> open;
    for (const char* n : {"g", "C_apu", "T_hpu"})
        if (!is_fixed(o, n)) open.push_back(n);
    if (excess > static_cast<int>(open.size())) return {o};  // cannot be helped: the fit says why
    std::vector<fit_options> out;
    const int n = static_cast<int>(open.size());
    for (int mask = 0; mask < (1 << n); ++mask) {
        if (__builtin_popcount(static_cast<unsigned>(mask)) != excess) continue;
        fit_options v = o;
        for (int b = 0; b < n; ++b)
            if (mask & (1 << b)) v.fixed.emplace_back(open[static_cast<std::size_t>(b)], 0.0);
        out.push_back(v);
    }
    // Subsets in the order of preference: those holding the earlier names first.
    std::stable_sort(out.begin(), out.end(), [&](const fit_options& a, const fit_options& b) {
        for (const char* name : open) {
            const bool ha = is_fixed(a, name), hb = is_fixed(b, name);
            if (ha != hb) return ha;
        }
        return false;
    });
    return out;
}

bool any_without_policy(const std::vector<detail::run_row>& runs) {
    return std::any_of(runs.begin(), runs.end(), [](const detail::run_row& r) { return !r.has_policy && !r.censored; });
}

bool two_unit_counts(const std::vector<detail::run_row>& runs) {
    for (const auto& r : runs)
        if (!r.censored && r.units != runs.front().units) return true;
    return false;
}

// The candidates, the caller's own structure first, in the order ties are broken.
std::vector<fit_options> candidate_options(const fit_options& base, const structure_held& h,
                                           const std::vector<detail::run_row>& runs, int configurations) {
    const std::vector<decomposition> decomps =
        h.decomposition ? std::vector{base.decomp} : std::vector{decomposition::task, decomposition::data};
    const std::vector<policy> pols =
        h.policy || !any_without_policy(runs) ? std::vector{base.pol} : std::vector{policy::edtlp, policy::os};
    const std::vector<std::int64_t> spins =
        h.spin_limit ? std::vector{base.spin_limit}
                     : std::vector<std::int64_t>{0, structure_bounded_spin, application::spin_unbounded};
    const std::vector<bool> starts = h.T_start || !two_unit_counts(runs) ? std::vector{base.fit_T_start} : std::vector{false, true};
    const std::vector<bool> Ns = h.N ? std::vector{base.fit_N} : std::vector{false, true};
    std::vector<fit_options> out;
    for (auto d : decomps)
        for (auto pol : pols)
            for (auto spin : spins)
                for (bool start : starts)
                    for (bool fitN : Ns) {
                        fit_options o = base;
                        o.decomp = d;
                        o.pol = pol;
                        o.spin_limit = spin;
                        o.fit_T_start = start;
                        o.fit_N = fitN;
                        for (auto& v : within_configurations(o, configurations)) out.push_back(std::move(v));
                    }
    return out;
}

// The pooled run-to-run noise of log times within the configurations (each one's measurement::log_variance,
// worth its finished runs less one), as a standard deviation, with its degrees of freedom.
std::pair<double, int> repetition_noise(const std::vector<measurement>& measured) {
    double ss = 0;
    int df = 0;
    for (const measurement& m : measured) {
        const int n = static_cast<int>(m.finished_times().size());
        if (n < 2) continue;
        ss += (n - 1) * m.log_variance();
        df += n - 1;
    }
    return {df > 0 ? std::sqrt(ss / df) : 0.0, df};
}

// Each configuration's median run (of an even count, the lower middle one: a run that was measured), censored
// runs as they are.
std::vector<detail::run_row> one_per_configuration(const std::vector<detail::run_row>& runs) {
    std::map<config_key, std::vector<const detail::run_row*>> groups;
    std::vector<detail::run_row> out;
    for (const auto& r : runs) {
        if (r.censored) out.push_back(r);
        else groups[key_of(r)].push_back(&r);
    }
    for (auto& [k, g] : groups) {
        std::sort(g.begin(), g.end(), [](const detail::run_row* a, const detail::run_row* b) { return a->time_s < b->time_s; });
        out.push_back(*g[(g.size() - 1) / 2]);
    }
    return out;
}

// The configurations with a finished run.
int distinct_configurations(const std::vector<measurement>& measured) {
    return static_cast<int>(std::count_if(measured.begin(), measured.end(), [](const measurement& m) { return !m.finished_times().empty(); }));
}

// The |error| (percent) of each configuration's median time predicted by a fit of the other configurations;
// empty when a fold cannot be fitted (why says which and why).
std::vector<double> leave_one_configuration_out(const platform& pl, const std::vector<detail::run_row>& runs,
                                               const std::vector<detail::fit_row>& rows, const fit_options& o,
                                               const std::string& file, std::string& why) {
    std::map<config_key, std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < runs.size(); ++i) groups[key_of(runs[i])].push_back(i);
    std::vector<double> errors;
    for (const auto& [k, members] : groups) {
        std::vector<detail::run_row> train;
        std::vector<detail::fit_row> train_rows;
        std::vector<double> times;
        for (std::size_t i = 0; i < runs.size(); ++i) {
            if (key_of(runs[i]) == k) {
                times.push_back(runs[i].time_s);
            } else {
                train.push_back(runs[i]);
                train_rows.push_back(rows[i]);
            }
        }
        try {
            const fit_result f = detail::fit_rows(pl, train, train_rows, o, file, 0, false);
            const double measured = median(times);
            const double predicted = detail::fit_time(rows[members.front()], f.app);
            errors.push_back(std::fabs(predicted - measured) / measured * 100.0);
        } catch (const input_error& e) {
            const detail::run_row& r = runs[members.front()];
            why = "configuration m=" + std::to_string(r.c.m) + " p=" + std::to_string(r.c.p) +
                  " cannot be predicted from the others: " + e.expected() + " expected, " + e.found();
            return {};
        }
    }
    return errors;
}

// The mean and its standard error.
std::pair<double, double> mean_and_se(const std::vector<double>& v) {
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    const double n = static_cast<double>(v.size());
    return {mean, v.size() > 1 ? std::sqrt(ss / (n - 1) / n) : 0.0};
}

// One residual's share of the criterion: (log residual / noise)^2, clipped at clip_sigmas^2 so that one
// configuration the model cannot describe (a crash, a pathological mapping) counts as one misfit, not as the
// whole choice.
double clipped_square(double log_ratio, double sigma) {
    const double z = std::fabs(log_ratio) / sigma;
    return std::isfinite(z) ? std::min(z * z, clip_sigmas * clip_sigmas) : clip_sigmas * clip_sigmas;
}

// The BIC of a fit whose residuals are f's: the clipped squared log residuals over the noise, plus k ln n.
double bic(const fit_result& f, int k, double sigma) {
    double chi2 = 0;
    for (const auto& r : f.residuals)
        chi2 += clipped_square(r.predicted_s > 0 ? std::log(r.predicted_s / r.run.time_s) : inf, sigma);
    return chi2 + k * std::log(static_cast<double>(f.residuals.size()));
}

int estimated_parameters(const fit_result& f) {
    int k = 0;
    for (const auto& p : f.params) k += p.fitted && p.identified;
    return k;
}

std::string pct(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

// The runs a candidate fits (policy set) and their coefficient rows under its shape.
struct candidate_data {
    std::vector<detail::run_row> runs;
    std::vector<detail::fit_row> rows;
    std::size_t n_censored = 0;
    std::string error;  ///< the platform's tables do not cover a run: why (rows empty)
};

candidate_data data_of(const std::vector<detail::run_row>& runs_in, const fit_options& o, detail::fit_row_cache& cache) {
    candidate_data d;
    d.runs = detail::runs_to_fit(runs_in, o.pol, d.n_censored);
    d.rows = cache.rows(d.runs, o);
    return d;
}

// One candidate fitted and scored; refused candidates say why.
structure_candidate score_candidate(const platform& pl, const candidate_data& data, const fit_options& o, bool cv,
                                    double sigma, const std::string& file, std::size_t n_user_fixed) {
    structure_candidate c;
    c.opt = o;
    c.label = label_of(o, n_user_fixed);
    if (!data.error.empty()) {
        c.why_not = data.error;
        return c;
    }
    try {
        const fit_result f = detail::fit_rows(pl, data.runs, data.rows, o, file, data.n_censored, false);
        if (o.fit_N && !f.params[4].identified) {
            c.why_not = "N is not identified by these runs";
            return c;
        }
        if (o.fit_T_start && !f.params[5].identified) {
            c.why_not = "T_start is not identified by these runs";
            return c;
        }
        if (!(f.app.T_hpu + f.app.T_apu + f.app.C_apu > 0)) {
            c.why_not = "no work left for the program (T_hpu + T_apu + C_apu = 0)";
            return c;
        }
        c.k = estimated_parameters(f);
        c.rms_err_pct = f.rms_err_pct;
        c.max_abs_err_pct = f.max_abs_err_pct;
        if (cv) {
            const std::vector<double> errors = leave_one_configuration_out(pl, data.runs, data.rows, o, file, c.why_not);
            if (errors.empty()) return c;
            std::tie(c.score, c.score_se) = mean_and_se(errors);
        } else {
            c.score = bic(f, c.k, sigma);
        }
        c.fitted = std::isfinite(c.score);
        if (!c.fitted) c.why_not = "a predicted time is not positive";
    } catch (const input_error& e) {
        c.why_not = e.expected() + " expected, " + e.found();
    }
    return c;
}

// The candidates that differ in what they fit: one whose runs have the same coefficient rows and the same free
// parameters as an earlier one (a spin limit on a platform without spin costs, a policy that changes no run)
// is the same model and is left out.
std::vector<std::pair<fit_options, candidate_data>> distinct_candidates(const std::vector<fit_options>& options,
                                                                        const std::vector<detail::run_row>& runs,
                                                                        detail::fit_row_cache& cache) {
    std::vector<std::pair<fit_options, candidate_data>> out;
    for (const auto& o : options) {
        candidate_data d;
        try {
            d = data_of(runs, o, cache);
        } catch (const input_error& e) {
            d.rows.clear();
            d.error = e.expected() + " expected, " + e.found();
        }
        const bool same = std::any_of(out.begin(), out.end(), [&](const auto& e) {
            return e.first.fit_N == o.fit_N && e.first.fit_T_start == o.fit_T_start && e.first.fixed == o.fixed &&
                   e.second.rows == d.rows && !d.rows.empty();
        });
        if (!same) out.emplace_back(o, std::move(d));
    }
    return out;
}

// Fitted candidates first, by score (ties within a part in 10^9: fewer parameters, then the earlier one).
void rank(std::vector<structure_candidate>& cs) {
    std::stable_sort(cs.begin(), cs.end(), [](const structure_candidate& a, const structure_candidate& b) {
        if (a.fitted != b.fitted) return a.fitted;
        if (!a.fitted) return false;
        const double tol = 1e-9 * std::max(std::fabs(a.score), std::fabs(b.score));
        if (std::fabs(a.score - b.score) > tol) return a.score < b.score;
        return a.k < b.k;
    });
}

// Under cross-validation, the one-standard-error rule: among the candidates whose score is within one
// standard error of the best one's, the one with the fewest parameters (then the earliest) is chosen — a
// difference smaller than the folds' own scatter is not evidence for a richer structure.
void simplest_within_one_se(structure_selection& out) {
    const auto& best = out.candidates.front();
    if (!best.fitted) return;
    auto pick = out.candidates.begin();
    for (auto it = out.candidates.begin(); it != out.candidates.end(); ++it)
        if (it->fitted && it->score <= best.score + best.score_se && it->k < pick->k) pick = it;
    std::rotate(out.candidates.begin(), pick, pick + 1);
}

}  // namespace

structure_selection select_structure(const platform& pl, const std::vector<measurement>& measured, const fit_options& base,
                                     const structure_held& held, const std::string& file, const selection_options& sel) {
    std::vector<detail::run_row> runs = detail::fit_rows_of(pl, measured, file);
    // The structure is chosen on the runs the linear fit takes; the time-sliced runs of several processes are
    // priced by the chosen one (fit_application).
    detail::set_aside_sliced(runs);
    structure_selection out;
    // The runs of each configuration as one measurement, however the caller grouped them.
    const std::vector<measurement> groups = detail::group_rows(runs);
    out.configurations = distinct_configurations(groups);
    const auto [rep_sigma, df] = repetition_noise(groups);
    if (df >= 3) {
        out.noise_pct = std::max(100.0 * rep_sigma, noise_floor_pct);
        out.noise_source = "repetitions (" + std::to_string(df) + " degrees of freedom)";
    } else {
        out.noise_pct = sel.noise_pct;
        out.noise_source = "assumed (too few repetitions to measure it)";
    }
    const std::vector<fit_options> options = candidate_options(base, held, runs, out.configurations);
    // The candidates are scored on one run per configuration, its median (repetitions measured the noise
    // above; a structure is judged by configurations, and a million repetitions would make every fold slow).
    const std::vector<detail::run_row> scored = one_per_configuration(runs);
    out.chose = options.size() > 1;
    detail::fit_row_cache cache(pl);
    const auto distinct = distinct_candidates(options, scored, cache);
    bool cv = out.chose && out.configurations >= sel.cv_min_configurations;
    for (int attempt = 0; attempt < 2; ++attempt) {
        out.candidates.clear();
        for (const auto& [o, data] : distinct)
            out.candidates.push_back(score_candidate(pl, data, o, cv, out.noise_pct / 100.0, file, base.fixed.size()));
        const bool any = std::any_of(out.candidates.begin(), out.candidates.end(), [](const auto& c) { return c.fitted; });
        if (any || !cv) break;
        cv = false;  // no candidate survives cross-validation: the BIC on all runs decides
    }
    out.criterion = cv ? "leave-one-configuration-out" : "BIC";
    rank(out.candidates);
    if (cv) simplest_within_one_se(out);
    // The chosen one fitted again, residuals by the model; with no candidate fitted this throws the fit's error.
    const fit_options& chosen = out.candidates.front().fitted ? out.candidates.front().opt : options.front();
    out.fit = fit_application(pl, measured, chosen, file);
    // The parameters the selection held at 0 (too few configurations) say so, not "--fix".
    for (std::size_t i = base.fixed.size(); i < chosen.fixed.size(); ++i)
        for (auto& p : out.fit.params)
            if (p.name == chosen.fixed[i].first)
                p.note = "held at 0: fewer distinct configurations than parameters (the structure's choice; --fix holds "
                         "another)";
    for (const auto& r : out.fit.residuals)
        if (std::fabs(r.err_pct) > undescribed_pct)
            out.warnings.push_back("the model does not describe configuration m=" + std::to_string(r.c.m) +
                                   " p=" + std::to_string(r.c.p) + " nodes=" + std::to_string(r.c.nodes) +
                                   " (" + r.run.where + "): measured " + pct(r.run.time_s) + " s, fitted " +
                                   pct(r.predicted_s) + " s (" + (r.err_pct > 0 ? "+" : "") + pct(r.err_pct) + " %)");
    return out;
}

}  // namespace mmgp
