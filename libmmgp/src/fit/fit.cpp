// Fitting an application's parameters to measured runs (mmgp/fit.hpp; the runs read by fit/runs.cpp): the
// relative least squares on the model's own coefficients (fit/terms.hpp), and the fitted profile as JSON. Pure.
#include "mmgp/fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <cstdio>
#include <set>
#include <sstream>
#include <tuple>

#include "base/json_reader.hpp"
#include "fit/terms.hpp"
#include "fit/waits.hpp"
#include "base/nnls.hpp"
#include "mmgp/statistics.hpp"

namespace mmgp {

namespace {

using detail::json;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

constexpr int n_params = 6;  // T_hpu, T_apu, C_apu, g (through N*g), N, T_start
constexpr const char* param_names[n_params] = {"T_hpu", "T_apu", "C_apu", "g", "N", "T_start"};

// The index of a parameter fit_options::fixed can hold (N is held through fit_options::N); -1 for another name.
int fixable_index(std::string_view name) noexcept {
    for (int k = 0; k < n_params; ++k)
        if (k != 4 && name == param_names[k]) return k;
    return -1;
}

// Which parameters are held, at which value (g is held through N*g), and which of them by --fix.
struct held_params {
    std::array<bool, n_params> held;
    std::array<double, n_params> value;
    std::array<bool, n_params> fixed{};
};

// The application the options describe, without its fitted parameters.
application shape_of(const fit_options& opt) {
    application shape;
    shape.decomp = opt.decomp;
    shape.scale = opt.scale;
    shape.spin_limit = opt.spin_limit;
    shape.N_start = opt.N_start;
    shape.waits_per_offload = opt.waits_per_offload;
    return shape;
}

std::string fmt_g(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// "T_apu=1000 (--fix), N=1 (--N) and the platform's costs": what a run's known part is made of.
std::string known_parts(const held_params& h) {
    std::string out;
    for (int j = 0; j < n_params; ++j) {
        const auto u = static_cast<std::size_t>(j);
        if (!h.held[u] || (h.value[u] == 0 && !h.fixed[u])) continue;
        out += (out.empty() ? "" : ", ") + std::string(param_names[j]) + "=" + fmt_g(h.value[u]) +
               (h.fixed[u] ? " (--fix)" : j == 4 ? " (--N)" : "");
    }
    return out.empty() ? "the platform's costs" : out + " and the platform's costs";
}

// The held parameters: N unless fitted, T_start unless fitted, and those --fix names.
held_params held_of(const fit_options& opt) {
    held_params h{{false, false, false, false, !opt.fit_N, !opt.fit_T_start}, {0, 0, 0, 0, opt.N, 0}, {}};
    for (const auto& [name, v] : opt.fixed) {
        const int j = fixable_index(name);
        if (j < 0) throw input_error("--fix", name, "one of T_hpu, T_apu, C_apu, g, T_start", "\"" + name + "\"");
        h.held[static_cast<std::size_t>(j)] = h.fixed[static_cast<std::size_t>(j)] = true;
        h.value[static_cast<std::size_t>(j)] = v;
    }
    if (opt.fit_N && h.held[3] && h.value[3] != 0.0)
        throw input_error("--fix", "g", "g not held when N is fitted (N*g is the fitted quantity)", "both");
    if (h.held[4] && h.value[4] == 0 && !h.held[3]) h.held[3] = true;  // no phase to charge a gap to: g is 0
    return h;
}

[[noreturn]] void too_few_runs(const std::string& file, int k, int n) {
    throw input_error(file, "(all rows)",
                      "at least " + std::to_string(k) + " runs to fit " + std::to_string(k) + " parameters",
                      std::to_string(n) + " run" + (n == 1 ? "" : "s"));
}

// Enough runs, and enough distinct configurations, for the free parameters, each feasible on the platform.
// Returns whether p varies among the runs (what would identify a parameter depends on it).
bool check_runs(const platform& pl, const std::vector<detail::run_row>& runs, const held_params& h, const std::string& file) {
    int k_free = 0;
    for (int j = 0; j < n_params; ++j) k_free += !h.held[static_cast<std::size_t>(j)];
    const int n = static_cast<int>(runs.size());
    if (n == 0 || n < k_free) too_few_runs(file, k_free, n);
    // Repetitions of one configuration give the same design row (up to scale): they measure noise,
    // they cannot separate parameters.
    std::set<detail::run_key> distinct;
    std::set<int> ps;
    for (const auto& r : runs) {
        distinct.insert(detail::key_of(r));
        ps.insert(r.c.p);
    }
    if (static_cast<int>(distinct.size()) < k_free)
        throw input_error(file, "(all rows)",
                          "at least " + std::to_string(k_free) + " distinct configurations (m, p, nodes, units, policy) to fit " +
                              std::to_string(k_free) + " parameters (repetitions of a configuration measure noise, they do not "
                              "separate parameters; --fix NAME=VALUE holds one)",
                          std::to_string(distinct.size()) + " distinct in " + std::to_string(n) + " runs");
    for (const auto& r : runs) {
        if (detail::waits_for_busy_time(r.c))
            throw input_error(file, r.where,
                              "a run the fit's linear form prices beside the time-sliced runs of several processes "
                              "(they wait for the accelerator's busy time, the larger of two terms: they are priced "
                              "with what the other runs fit)",
                              "m=" + std::to_string(r.c.m) + " p=" + std::to_string(r.c.p) + " sharing=time_sliced");
        // Beyond the SMs (apu_slots > 1) a run's time is a max of two terms, not the sum the fit's linear form
        // prices: fit takes the runs within them.
        if (static_cast<std::int64_t>(r.c.m) * r.c.p > pl.apus || r.c.nodes > pl.nodes)
            throw input_error(file, r.where,
                              "a configuration feasible on platform " + pl.name + " (m*p <= " + std::to_string(pl.apus) +
                                  (pl.apu_slots > 1 ? ", its accelerators: runs beyond them are predicted, not fitted" : "") +
                                  ", nodes <= " + std::to_string(pl.nodes) + ")",
                              "m=" + std::to_string(r.c.m) + " p=" + std::to_string(r.c.p) + " nodes=" + std::to_string(r.c.nodes));
    }
    return ps.size() >= 2;
}

// The free parameters are >= 0: a run shorter than the part of the model already known (held values and the
// platform's fixed costs, t - rhs) cannot be fitted by any of them. Either a --fix value is inconsistent with
// the runs, or the times are not on the platform's scale (not seconds?).
[[noreturn]] void refuse_below_known(const std::string& file, const detail::run_row& run, const held_params& h,
                                     const std::array<double, n_params + 1>& x, double rhs) {
    double by_fix = 0;
    for (int j : {0, 1, 2, 5})
        if (h.fixed[static_cast<std::size_t>(j)]) by_fix += h.value[static_cast<std::size_t>(j)] * x[static_cast<std::size_t>(j)];
    if (h.fixed[3]) by_fix += h.value[3] * h.value[4] * x[3];
    const bool held_cause = by_fix > 0 && rhs + by_fix >= 0;
    const double t = run.time_s;
    throw input_error(file, run.where,
                      "a measured time at least the model's known part (" + known_parts(h) + ")",
                      "time_s " + fmt_g(t) + " s below the known " + fmt_g(t - rhs) + " s: " +
                          (held_cause ? "a value held by --fix is inconsistent with the runs"
                                      : "the times are out of scale with the platform's costs (seconds expected)"));
}

// The least-squares problem X b = y in relative form: each run's row divided by its measured time.
struct fit_design {
    Eigen::MatrixXd X;
    Eigen::VectorXd y;
};

fit_design relative_design(const std::vector<detail::run_row>& runs, const std::vector<detail::fit_row>& rows,
                           const held_params& h, const std::string& file) {
    const int n = static_cast<int>(runs.size());
    fit_design d{Eigen::MatrixXd(n, n_params), Eigen::VectorXd(n)};
    for (int i = 0; i < n; ++i) {
        const detail::run_row& run = runs[static_cast<std::size_t>(i)];
        const detail::fit_row& x = rows[static_cast<std::size_t>(i)];
        double t = run.time_s;
        double rhs = t - x[n_params];
        // Held N: the N*(O_offload + T_csw + ...) part is known; a held g enters through N*g.
        if (h.held[4]) rhs -= h.value[4] * x[4];
        if (h.held[3]) rhs -= h.value[3] * h.value[4] * x[3];
        for (int j : {0, 1, 2, 5})
            if (h.held[static_cast<std::size_t>(j)]) rhs -= h.value[static_cast<std::size_t>(j)] * x[static_cast<std::size_t>(j)];
        for (int j = 0; j < n_params; ++j) d.X(i, j) = x[static_cast<std::size_t>(j)] / t;
        d.y(i) = rhs / t;
        if (!std::isfinite(d.y(i)) || !d.X.row(i).allFinite())
            throw input_error(file, run.where,
                              "a measured time on the scale of the platform's costs (the design's terms divided by it "
                              "must be finite numbers)",
                              "time_s " + fmt_g(t) + " s, out of scale");
        if (rhs < 0) refuse_below_known(file, run, h, x, rhs);
    }
    return d;
}

// What would identify each parameter, given what these runs already vary.
std::array<const char*, n_params> identifying_runs(bool p_varies) {
    const char* host_load = "vary the host load: runs with m beyond the host contexts (alpha(m) changes) or with different units per process";
    return {"vary the host load: runs with different m (or units per process)",
            p_varies ? host_load : "vary p: runs with at least two different p",
            p_varies ? host_load : "vary p: runs with at least two different p",
            p_varies ? "more values of p: the gap grows with p while T_apu shrinks with 1/p (at least three p)"
                     : "vary p: the gap grows with p",
            "give N (--N) or vary m beyond the host contexts",
            "vary the units per process: runs with at least two different unit counts"};
}

// Each parameter's entry in out.params: a held one at its value; a free one identified unless its column is zero
// or a combination of the columns kept before it (then held at 0, with a warning). Returns the kept columns.
std::vector<int> identified_columns(const Eigen::MatrixXd& X, const held_params& h, bool p_varies, fit_result& out) {
    const std::array<const char*, n_params> hints = identifying_runs(p_varies);
    std::vector<int> kept;
    out.params.resize(n_params);
    for (int j = 0; j < n_params; ++j) {
        auto& fp = out.params[static_cast<std::size_t>(j)];
        fp.name = param_names[j];
        if (h.held[static_cast<std::size_t>(j)]) {
            fp.value = h.value[static_cast<std::size_t>(j)];
            fp.ci95_lo = fp.ci95_hi = fp.value;
            fp.note = h.fixed[static_cast<std::size_t>(j)] ? "held (--fix)"
                      : j == 3                              ? "held at 0: N is 0, no phase to charge a gap to"
                      : j == 4                              ? "held (--N; 1 unless given)"
                                                            : "held (not fitted without --fit-T-start)";
            continue;
        }
        fp.fitted = true;
        Eigen::VectorXd col = X.col(j);
        double norm = col.stableNorm();
        bool identified = norm > 0;
        std::string with;
        if (identified && !kept.empty()) {
            Eigen::MatrixXd K(X.rows(), static_cast<Eigen::Index>(kept.size()));
            for (std::size_t c = 0; c < kept.size(); ++c) K.col(static_cast<Eigen::Index>(c)) = X.col(kept[c]);
            Eigen::VectorXd coef = K.colPivHouseholderQr().solve(col);
            double resid = (K * coef - col).stableNorm() / norm;
            if (resid < 1e-6) {
                identified = false;
                for (int c : kept) with += (with.empty() ? "" : ", ") + std::string(param_names[c]);
            }
        }
        if (!identified) {
            fp.identified = false;
            fp.value = 0;
            fp.note = norm > 0 ? "not identified: these runs cannot separate it from " + with + "; " + hints[static_cast<std::size_t>(j)]
                               : std::string("not identified: it does not change any run's time; ") + hints[static_cast<std::size_t>(j)];
            out.warnings.push_back(std::string(param_names[j]) + " " + fp.note + " (held at 0)");
            continue;
        }
        kept.push_back(j);
    }
    return kept;
}

// Relative least squares, iteratively reweighted: rows were divided by the measured time; dividing by the
// fitted time instead removes the bias of weights that carry the measurement noise. Leaves d reweighted.
Eigen::VectorXd reweighted_nnls(fit_design& d, const std::vector<detail::run_row>& runs, const std::vector<int>& kept,
                                const std::string& file) {
    Eigen::VectorXd b = Eigen::VectorXd::Zero(n_params);
    if (kept.empty()) return b;
    std::vector<bool> usable(n_params, false);
    for (int j : kept) usable[static_cast<std::size_t>(j)] = true;
    const Eigen::MatrixXd X0 = d.X;
    const Eigen::VectorXd y0 = d.y;
    for (int iter = 0; iter < 3; ++iter) {
        if (!detail::nnls_small(d.X, d.y, usable, b))
            throw input_error(file, "(all rows)", "runs that determine the parameters", "a rank-deficient design");
        for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
            // X0 and y0 are already relative to the measured time t: scale row by t / fitted(t).
            double known = runs[static_cast<std::size_t>(i)].time_s * (1.0 - y0(i));  // held parts, seconds
            double fitted = (X0.row(i) * b)(0) * runs[static_cast<std::size_t>(i)].time_s + known;
            double w = fitted > 0 ? runs[static_cast<std::size_t>(i)].time_s / fitted : 1.0;
            d.X.row(i) = X0.row(i) * w;
            d.y(i) = y0(i) * w;
        }
    }
    if (!detail::nnls_small(d.X, d.y, usable, b))
        throw input_error(file, "(all rows)", "runs that determine the parameters", "a rank-deficient design");
    return b;
}

// The kept parameters' estimates b, with standard errors and 95 % intervals from the covariance of the
// unconstrained least squares on the identified columns; out.dof.
void set_estimates(const fit_design& d, const Eigen::VectorXd& b, const std::vector<int>& kept, fit_result& out) {
    const int n = static_cast<int>(d.X.rows()), k = static_cast<int>(kept.size());
    out.dof = n - k;
    double rss = k > 0 ? (d.X * b - d.y).squaredNorm() : d.y.squaredNorm();
    Eigen::MatrixXd cov_n;  // of the parameters times their column norms dn
    Eigen::VectorXd dn;
    if (k > 0 && out.dof > 0) {
        // Columns at unit norm for the inverse (parameters differ by many orders of magnitude), scaled back.
        Eigen::MatrixXd K(n, k);
        dn.resize(k);
        for (int c = 0; c < k; ++c) {
            K.col(c) = d.X.col(kept[static_cast<std::size_t>(c)]);
            dn(c) = K.col(c).stableNorm();
            K.col(c) /= dn(c);
        }
        cov_n = (K.transpose() * K).inverse() * (rss / out.dof);
    }
    const double tq = t_quantile_975(out.dof);
    for (int c = 0; c < k; ++c) {
        int j = kept[static_cast<std::size_t>(c)];
        auto& fp = out.params[static_cast<std::size_t>(j)];
        fp.value = b(j);
        fp.stderr_ = out.dof > 0 ? std::sqrt(std::max(0.0, cov_n(c, c))) / dn(c) : nan;
        fp.ci95_lo = out.dof > 0 ? fp.value - tq * fp.stderr_ : nan;
        fp.ci95_hi = out.dof > 0 ? fp.value + tq * fp.stderr_ : nan;
        if (out.dof == 0) fp.note = "exactly determined: no degrees of freedom left for a confidence interval";
    }
}

// Column 3 is N*g: report g itself (not identified when N is 0).
void express_g_per_phase(fit_result& out) {
    const double N = out.params[4].value;
    auto& g = out.params[3];
    if (!g.fitted || !g.identified) return;
    if (N > 0) {
        g.value /= N;
        g.stderr_ /= N;
        g.ci95_lo /= N;
        g.ci95_hi /= N;
    } else {
        out.warnings.push_back("g: N is 0, so the gap term cannot be expressed per phase (held at 0)");
        g.value = 0;
        g.identified = false;
        g.stderr_ = g.ci95_lo = g.ci95_hi = nan;
        g.note = "not identified: N is 0, so the gap term cannot be expressed per phase";
    }
}

// An interval always holds its own estimate (the estimate is the constrained solution, the interval that of
// the unconstrained one around it), and only values the parameter can take: every parameter is >= 0 (a time, a
// count), so the interval is cut at 0 rather than reaching below it.
void widen_to_estimates(std::vector<fitted_param>& params) {
    for (auto& fp : params)
        if (std::isfinite(fp.ci95_lo) && std::isfinite(fp.ci95_hi)) {
            fp.ci95_lo = std::max(0.0, std::min(fp.ci95_lo, fp.value));
            fp.ci95_hi = std::max(fp.ci95_hi, fp.value);
        }
}

// The fitted application: the options' shape with the estimates, units the largest among the runs.
application fitted_application(const std::vector<fitted_param>& params, const fit_options& opt,
                               const std::vector<detail::run_row>& runs) {
    application a = shape_of(opt);
    a.name = opt.name;
    a.T_hpu = params[0].value;
    a.T_apu = params[1].value;
    a.C_apu = params[2].value;
    a.g = params[3].value;
    a.N = params[4].value;
    a.T_start = params[5].value;
    a.units = 1;
    for (const auto& r : runs) a.units = std::max(a.units, r.units);
    return a;
}

// How messages about the platform's tables name it.
std::string platform_file(const platform& pl) { return pl.name.empty() ? std::string("platform") : "platform " + pl.name; }

// The scenario of one run: the platform, application `a` with the run's units, the space narrowed to c.
scenario run_scenario(const platform& pl, const application& a, const configuration& c, std::int64_t units,
                      std::string file) {
    scenario s;
    s.file = std::move(file);
    s.plat = pl;
    s.app = a;
    s.app.units = units;
    narrow(s, c);
    return s;
}

// The model's time of each distinct configuration of `runs` with application `a` (repetitions: one evaluation).
std::map<detail::run_key, double> model_times(const platform& pl, const std::vector<detail::run_row>& runs,
                                              const application& a, const std::string& file) {
    std::map<detail::run_key, double> out;
    for (const auto& r : runs)
        if (!out.count(detail::key_of(r))) {
            const scenario s = run_scenario(pl, a, r.c, r.units, file);  // the evaluator keeps a reference to it
            out[detail::key_of(r)] = evaluator(s, model_kind::mmgp)(r.c).time_s;
        }
    return out;
}

// The residuals of out.app on the runs, computed by the model itself (rows null) or from the runs' coefficient
// rows (the same model in its linear form, no evaluation), and their rms and largest error.
void add_residuals(const platform& pl, const std::vector<detail::run_row>& runs, const std::vector<detail::fit_row>* rows,
                   const std::string& file, fit_result& out) {
    double ss = 0;
    const std::map<detail::run_key, double> by_model = rows ? std::map<detail::run_key, double>{}
                                                            : model_times(pl, runs, out.app, file);
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const detail::run_row& r = runs[i];
        fit_residual fr;
        fr.c = r.c;
        fr.units = r.units;
        fr.run = r.run();
        fr.predicted_s = rows ? detail::fit_time((*rows)[i], out.app) : by_model.at(detail::key_of(r));
        fr.err_pct = 100.0 * (fr.predicted_s - r.time_s) / r.time_s;
        out.max_abs_err_pct = std::max(out.max_abs_err_pct, std::fabs(fr.err_pct));
        out.residuals.push_back(fr);
    }
    for (const fit_residual& fr : out.residuals) ss += fr.err_pct * fr.err_pct;
    out.rms_err_pct = std::sqrt(ss / static_cast<double>(out.residuals.size()));
}

// A time-sliced run of several processes the model can evaluate: its grid within the accelerators' slots (each
// process's grid alone on the accelerator), nodes and processes within the platform's, and the platform's tables
// covering it (as fit_coefficients checks the other runs).
void check_sliced(const platform& pl, const detail::run_row& r, const std::string& file) {
    if (!platform_holds(pl, r.c))
        throw input_error(file, r.where,
                          "a configuration feasible on platform " + pl.name + " (" + holds_text(pl, true) + ")",
                          "m=" + std::to_string(r.c.m) + " p=" + std::to_string(r.c.p) + " nodes=" + std::to_string(r.c.nodes));
    check_coverage(run_scenario(pl, application{}, r.c, r.units, platform_file(pl)));
}

// The time-sliced runs of several processes, set aside from the linear fit of `out`: with opt.fit_waits, the
// switches an off-load waits for are the count that prices them best (least squares on their log times, the
// other parameters as fitted); then they join the residuals, priced by the model.
void price_sliced(const platform& pl, const std::vector<detail::run_row>& sliced, const fit_options& opt,
                  const std::string& file, fit_result& out) {
    for (const auto& r : sliced) check_sliced(pl, r, file);
    if (opt.fit_waits) {
        auto squared_error = [&](double waits) {
            application a = out.app;
            a.waits_per_offload = waits;
            const std::map<detail::run_key, double> t = model_times(pl, sliced, a, file);
            double ss = 0;
            for (const auto& r : sliced) {
                const double m = t.at(detail::key_of(r));
                if (!(std::isfinite(m) && m > 0)) return std::numeric_limits<double>::infinity();
                ss += std::log(m / r.time_s) * std::log(m / r.time_s);
            }
            return ss;
        };
        const double waits = detail::best_count(squared_error);
        if (waits == detail::count_not_identified)
            out.warnings.push_back("waits_per_offload not identified: the time-sliced runs' times do not depend on it "
                                   "(a switch T_slice_switch of 0, or N = 0); held at " +
                                   fmt_g(out.app.waits_per_offload));
        else if (waits < 0)
            throw input_error(file, sliced.front().where,
                              "a time-sliced run the model prices with some count of waits (a finite time)",
                              "no count that does");
        else {
            out.app.waits_per_offload = waits;
            out.waits_runs = static_cast<int>(sliced.size());
        }
    }
    out.dof += static_cast<int>(sliced.size()) - (out.waits_runs > 0 ? 1 : 0);  // the count, where fitted
    for (const auto& r : sliced) out.app.units = std::max(out.app.units, r.units);  // among the runs it prices
    add_residuals(pl, sliced, nullptr, file, out);
}

}  // namespace

std::array<double, detail::fit_term_count + 1> detail::fit_coefficients(const platform& pl, const application& shape,
                                                                      const configuration& c, std::int64_t units) {
    scenario s = run_scenario(pl, shape, c, units, platform_file(pl));
    s.name = "fit";
    check_coverage(s);
    auto eval = [&](double T_hpu, double T_apu, double C_apu, double N, double g, double T_start = 0) {
        s.app.T_hpu = T_hpu;
        s.app.T_apu = T_apu;
        s.app.C_apu = C_apu;
        s.app.N = N;
        s.app.g = g;
        s.app.T_start = T_start;
        return evaluator(s, model_kind::mmgp)(c).time_s;
    };
    const double base = eval(0, 0, 0, 0, 0);
    const double xN = eval(0, 0, 0, 1, 0) - base;
    return {eval(1, 0, 0, 0, 0) - base, eval(0, 1, 0, 0, 0) - base, eval(0, 0, 1, 0, 0) - base,
            eval(0, 0, 0, 1, 1) - base - xN, xN, eval(0, 0, 0, 0, 0, 1) - base, base};
}

bool fixable_parameter(std::string_view name) noexcept { return fixable_index(name) >= 0; }

std::vector<detail::run_row> detail::runs_to_fit(const std::vector<detail::run_row>& runs_in, policy pol, std::size_t& n_censored) {
    std::vector<detail::run_row> runs;
    for (const auto& r : runs_in) {
        if (r.censored) ++n_censored;
        else runs.push_back(r);
    }
    for (auto& r : runs)
        if (!r.has_policy) r.c.pol = pol;
    return runs;
}

std::vector<detail::fit_row> detail::fit_row_cache::rows(const std::vector<detail::run_row>& runs, const fit_options& opt) {
    const application shape = shape_of(opt);
    std::vector<fit_row> out;
    out.reserve(runs.size());
    for (const auto& r : runs) {
        const auto k = std::tuple{static_cast<int>(opt.decomp), static_cast<int>(opt.scale), opt.spin_limit, opt.N_start,
                                  key_of(r)};
        auto it = cache_.find(k);
        if (it == cache_.end()) it = cache_.emplace(k, fit_coefficients(pl_, shape, r.c, r.units)).first;
        out.push_back(it->second);
    }
    return out;
}

double detail::fit_time(const fit_row& x, const application& a) {
    return x[term_base] + x[term_T_hpu] * a.T_hpu + x[term_T_apu] * a.T_apu + x[term_C_apu] * a.C_apu +
           x[term_Ng] * a.N * a.g + x[term_N] * a.N + x[term_T_start] * a.T_start;
}

namespace {

// The estimates with the parameters of `h` held (before g is expressed per phase: params[3] is N*g).
fit_result estimates(const platform& pl, const std::vector<detail::run_row>& runs,
                     const std::vector<detail::fit_row>& rows, const held_params& h, const std::string& file) {
    const bool p_varies = check_runs(pl, runs, h, file);
    fit_design d = relative_design(runs, rows, h, file);
    fit_result out;
    const std::vector<int> kept = identified_columns(d.X, h, p_varies, out);
    const int n = static_cast<int>(runs.size()), k = static_cast<int>(kept.size());
    if (n < k) too_few_runs(file, k, n);
    const Eigen::VectorXd b = reweighted_nnls(d, runs, kept, file);
    set_estimates(d, b, kept, out);
    return out;
}

}  // namespace

fit_result detail::fit_rows(const platform& pl, const std::vector<detail::run_row>& runs, const std::vector<fit_row>& rows,
                            const fit_options& opt, const std::string& file, std::size_t n_censored, bool by_model) {
    fit_result out = estimates(pl, runs, rows, held_of(opt), file);
    if (n_censored > 0)
        out.warnings.push_back(std::to_string(n_censored) + " censored run" + (n_censored == 1 ? "" : "s") +
                               " (stopped at the bound: the time is only a lower limit) not fitted");
    express_g_per_phase(out);
    widen_to_estimates(out.params);
    out.app = fitted_application(out.params, opt, runs);
    add_residuals(pl, runs, by_model ? nullptr : &rows, file, out);
    return out;
}

void detail::check_one_work(const std::vector<detail::run_row>& runs, const std::string& file) {
    for (const auto& r : runs)
        if (r.work != runs.front().work)
            throw input_error(file, r.where + ", column work",
                              "one amount of work in every run (" + std::to_string(runs.front().work) + " in " +
                                  runs.front().where + "; runs of another size are not repetitions of the same run: "
                                  "keep the rows of one work value)",
                              std::to_string(r.work));
}

std::vector<detail::run_row> detail::fit_rows_of(const platform& pl, const std::vector<measurement>& measured,
                                                 const std::string& file) {
    std::vector<measurement> stated = measured;
    const std::vector<accelerator_sharing> modes = pl.sharing_modes();
    for (measurement& m : stated)  // a run stating no mode is grouped with the rows that state the platform's first
        if (!assign_sharing_mode(m, modes))
            throw input_error(file, (m.runs.empty() ? std::string("row ?") : m.runs.front().where) + ", column sharing",
                              sharing_modes_expected(modes, pl.name), std::string(to_string(m.c.share)));
    std::vector<run_row> rows = rows_of(stated);
    check_one_work(rows, file);
    // A run the platform cannot hold at all is named by its row before anything evaluates it (the fit's own rules
    // for the rest: within the accelerators, check_runs; time-sliced, check_sliced).
    for (const run_row& r : rows)
        if (!platform_holds(pl, r.c))
            throw input_error(file, r.where,
                              "a configuration feasible on platform " + pl.name + " (" +
                                  holds_text(pl, r.c.share == accelerator_sharing::time_sliced) + ")",
                              "m=" + std::to_string(r.c.m) + " p=" + std::to_string(r.c.p) + " nodes=" + std::to_string(r.c.nodes));
    return rows;
}

std::vector<detail::run_row> detail::set_aside_sliced(std::vector<detail::run_row>& runs) {
    std::vector<run_row> sliced;
    const bool any_linear = std::any_of(runs.begin(), runs.end(), [](const run_row& r) { return !waits_for_busy_time(r.c); });
    if (!any_linear) return sliced;  // nothing to fit the others from: the fit's own refusal names the row
    auto it = std::stable_partition(runs.begin(), runs.end(), [](const run_row& r) { return !waits_for_busy_time(r.c); });
    sliced.assign(it, runs.end());
    runs.erase(it, runs.end());
    return sliced;
}

fit_result fit_application(const platform& pl, const std::vector<measurement>& measured, const fit_options& opt,
                           const std::string& file) {
    const std::vector<detail::run_row> runs_in = detail::fit_rows_of(pl, measured, file);
    std::size_t n_censored = 0;
    std::vector<detail::run_row> runs = detail::runs_to_fit(runs_in, opt.pol, n_censored);
    const std::vector<detail::run_row> sliced = detail::set_aside_sliced(runs);
    fit_result f = detail::fit_rows(pl, runs, detail::fit_row_cache(pl).rows(runs, opt), opt, file, n_censored, true);
    if (sliced.empty()) return f;
    price_sliced(pl, sliced, opt, file, f);
    std::stable_sort(f.residuals.begin(), f.residuals.end(),
                     [](const fit_residual& a, const fit_residual& b) { return a.run.order < b.run.order; });
    return f;
}

namespace {

constexpr const char* residuals_marker = "(mmgp fit: the residuals, one per run)";

json application_doc(const fit_result& f, const std::string& data_file) {
    json doc;
    doc["schema"] = "mmgp/1";
    doc["kind"] = "application";
    doc["name"] = f.app.name;
    doc["decomposition"] = std::string(to_string(f.app.decomp));
    doc["scaling"] = std::string(to_string(f.app.scale));
    if (f.app.decomp == decomposition::task)
        doc["units"] = {{"value", f.app.units}, {"source", "largest units value among the fitted runs"}};
    const std::string src = "mmgp fit of " + data_file + " (" + std::to_string(f.residuals.size()) + " runs)";
    for (const auto& p : f.params) {
        json v = {{"value", p.value}};
        if (p.fitted && p.identified) {
            v["source"] = src;
            if (std::isfinite(p.ci95_lo)) v["ci95"] = {p.ci95_lo, p.ci95_hi};
            // The standard error, which mmgp predict --uncertainty propagates (docs/MODEL.md "Uncertainty").
            if (p.stderr_ > 0 && std::isfinite(p.stderr_)) v["std_error"] = p.stderr_;
        } else {
            v["source"] = src + ": " + p.note;
        }
        doc[p.name] = v;
    }
    if (f.app.spin_limit == application::spin_unbounded)
        doc["spin_limit"] = "unbounded";
    else if (f.app.spin_limit > 0)
        doc["spin_limit"] = f.app.spin_limit;
    if (f.app.N_start > 0) doc["N_start"] = {{"value", f.app.N_start}, {"source", "given to mmgp fit (--N-start)"}};
    if (f.waits_runs > 0)
        doc["waits_per_offload"] = {{"value", f.app.waits_per_offload},
                                    {"source", src + ": the count that prices its " + std::to_string(f.waits_runs) +
                                                   " time-sliced runs of several processes best (least squares on "
                                                   "their log times)"}};
    else if (f.app.waits_per_offload != 1)
        doc["waits_per_offload"] = {{"value", f.app.waits_per_offload}, {"source", "given to mmgp fit (--waits-per-offload)"}};
    // The residuals are written by residuals_text(), in place of this marker: one JSON object per run would take
    // about 1.6 KB of memory each (10^6 runs: over 1.5 GB); the text is what dump(2) writes for them.
    doc["statistics"] = {{"runs", f.residuals.size()}, {"dof", f.dof},       {"rms_err_pct", f.rms_err_pct},
                         {"max_abs_err_pct", f.max_abs_err_pct}, {"residuals", residuals_marker}, {"warnings", f.warnings}};
    return doc;
}

// The residuals array as json::dump(2) writes it at the depth of statistics.residuals (members sorted by key), one
// run at a time, appended to `out`.
void append_residuals(std::string& out, const fit_result& f) {
    if (f.residuals.empty()) {
        out += "[]";
        return;
    }
    auto num = [](auto v) { return json(v).dump(); };
    out += "[";
    for (std::size_t i = 0; i < f.residuals.size(); ++i) {
        const auto& r = f.residuals[i];
        out += i ? ",\n      {\n" : "\n      {\n";
        out += "        \"err_pct\": " + num(r.err_pct) + ",\n";
        out += "        \"m\": " + num(r.c.m) + ",\n";
        out += "        \"measured_s\": " + num(r.run.time_s) + ",\n";
        out += "        \"nodes\": " + num(r.c.nodes) + ",\n";
        out += "        \"p\": " + num(r.c.p) + ",\n";
        out += "        \"policy\": " + json(std::string(to_string(r.c.pol))).dump() + ",\n";
        out += "        \"predicted_s\": " + num(r.predicted_s) + ",\n";
        if (r.c.share != accelerator_sharing::dedicated)
            out += "        \"sharing\": " + json(std::string(to_string(r.c.share))).dump() + ",\n";
        out += "        \"units\": " + num(r.units) + "\n      }";
    }
    out += "\n    ]";
}

// The document's text with the residuals in place of their marker, written into one buffer sized for them.
std::string with_residuals(const json& doc, const fit_result& f) {
    const std::string text = doc.dump(2);
    const std::string marker = "\"residuals\": " + json(residuals_marker).dump();  // the key: no user string holds it
    const std::size_t at = text.find(marker);
    if (at == std::string::npos) return text + "\n";
    std::string out;
    out.reserve(text.size() + 300 * f.residuals.size() + 16);  // a run's object: about 200-260 characters
    out.append(text, 0, at);
    out += "\"residuals\": ";
    append_residuals(out, f);
    out.append(text, at + marker.size());
    out += '\n';
    return out;
}

}  // namespace

std::string application_json(const fit_result& f, const std::string& data_file) {
    return with_residuals(application_doc(f, data_file), f);
}

std::string application_json(const structure_selection& s, const std::string& data_file) {
    json doc = application_doc(s.fit, data_file);
    if (!s.chose) return with_residuals(doc, s.fit);
    json cands = json::array();
    for (const auto& c : s.candidates) {
        json j = {{"structure", c.label}, {"fitted", c.fitted}};
        if (c.fitted) {
            j["parameters"] = c.k;
            j["rms_err_pct"] = c.rms_err_pct;
            j["max_abs_err_pct"] = c.max_abs_err_pct;
            if (s.criterion != "BIC") j["loo_err_pct"] = c.score;
            j["score"] = c.score;
        } else {
            j["why_not"] = c.why_not;
        }
        cands.push_back(j);
    }
    doc["statistics"]["structure"] = {{"chosen", s.candidates.front().label},
                                      {"criterion", s.criterion},
                                      {"noise_pct", s.noise_pct},
                                      {"noise_source", s.noise_source},
                                      {"configurations", s.configurations},
                                      {"candidates", cands}};
    for (const auto& w : s.warnings) doc["statistics"]["warnings"].push_back(w);
    return with_residuals(doc, s.fit);
}

}  // namespace mmgp
