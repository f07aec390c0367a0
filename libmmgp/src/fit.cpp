#include "mmgp/fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <cstdio>
#include <set>
#include <sstream>
#include <tuple>

#include "detail/json_reader.hpp"
#include "detail/fit_terms.hpp"
#include "detail/nnls.hpp"
#include "mmgp/statistics.hpp"

namespace mmgp {

namespace {

using detail::json;

constexpr std::int64_t max_count = 1000000000;
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

std::string trim(std::string s) {
    auto sp = [](unsigned char c) { return std::isspace(c) != 0; };
    while (!s.empty() && sp(static_cast<unsigned char>(s.back()))) s.pop_back();
    std::size_t i = 0;
    while (i < s.size() && sp(static_cast<unsigned char>(s[i]))) ++i;
    return s.substr(i);
}

std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : line) {
        if (ch == ',') {
            out.push_back(trim(cur));
            cur.clear();
        } else {
            cur += ch;
        }
    }
    out.push_back(trim(cur));
    return out;
}

std::vector<measured_run> parse_csv(const std::string& text, const std::string& file) {
    std::istringstream in(text);
    std::string line;
    int row = 0;
    std::vector<std::string> header;
    int header_row = 0;
    int col_m = -1, col_p = -1, col_nodes = -1, col_units = -1, col_time = -1, col_policy = -1, col_cens = -1, col_bound = -1;
    std::vector<measured_run> runs;
    auto fail = [&](const std::string& where, const std::string& expected, const std::string& found) {
        throw input_error(file, where, expected, found);
    };
    while (std::getline(in, line)) {
        ++row;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::string t = trim(line);
        if (t.empty() || t[0] == '#') continue;
        std::vector<std::string> f = split_csv(t);
        if (header.empty()) {
            header = f;
            header_row = row;
            for (int i = 0; i < static_cast<int>(f.size()); ++i) {
                const std::string& h = f[static_cast<std::size_t>(i)];
                int* slot = h == "m"                                                              ? &col_m
                            : h == "p"                                                            ? &col_p
                            : h == "nodes"                                                        ? &col_nodes
                            : h == "units"                                                        ? &col_units
                            : (h == "time_s" || h == "time" || h == "wall_s" || h == "seconds") ? &col_time
                            : h == "policy"                                                       ? &col_policy
                            : h == "censored"                                                     ? &col_cens
                            : h == "bound_s"                                                      ? &col_bound
                                                                                                  : nullptr;
                if (slot) {
                    if (*slot >= 0) fail("row " + std::to_string(row) + " (header)", "each column once", "a second column \"" + h + "\"");
                    *slot = i;
                }
            }
            std::string have;
            for (const auto& h : f) have += (have.empty() ? "" : ", ") + h;
            for (auto [col, name] : {std::pair{col_m, "m"}, std::pair{col_p, "p"}, std::pair{col_time, "time_s"}})
                if (col < 0)
                    fail("row " + std::to_string(row) + " (header)", std::string("a column named ") + name,
                         "the columns " + have);
            continue;
        }
        if (f.size() != header.size())
            fail("row " + std::to_string(row),
                 std::to_string(header.size()) + " comma-separated fields as in the header (row " +
                     std::to_string(header_row) + ")",
                 std::to_string(f.size()) + " fields");
        auto where = [&](int col) { return "row " + std::to_string(row) + ", column " + header[static_cast<std::size_t>(col)]; };
        auto integer = [&](int col, std::int64_t dflt) -> std::int64_t {
            if (col < 0) return dflt;
            const std::string& s = f[static_cast<std::size_t>(col)];
            long long v = 0;
            auto r = std::from_chars(s.data(), s.data() + s.size(), v);
            if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 1 || v > max_count)
                fail(where(col), "an integer in [1, " + std::to_string(max_count) + "]", "\"" + s + "\"");
            return v;
        };
        measured_run run;
        run.c.m = static_cast<int>(integer(col_m, 1));
        run.c.p = static_cast<int>(integer(col_p, 1));
        run.c.nodes = static_cast<int>(integer(col_nodes, 1));
        run.units = integer(col_units, 1);
        {
            const std::string& s = f[static_cast<std::size_t>(col_time)];
            double v = 0;
            auto r = std::from_chars(s.data(), s.data() + s.size(), v);
            if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v) || v <= 0)
                fail(where(col_time), "a finite number > 0 (seconds)", "\"" + s + "\"");
            run.time_s = v;
        }
        if (col_policy >= 0) {
            const std::string& s = f[static_cast<std::size_t>(col_policy)];
            if (!parse_policy(s, run.c.pol)) fail(where(col_policy), "edtlp or os", "\"" + s + "\"");
            run.has_policy = true;
        }
        if (col_cens >= 0) {
            const std::string& s = f[static_cast<std::size_t>(col_cens)];
            if (s != "0" && s != "1") fail(where(col_cens), "0 or 1", "\"" + s + "\"");
            run.censored = s == "1";
        }
        if (col_bound >= 0 && !f[static_cast<std::size_t>(col_bound)].empty()) {
            const std::string& s = f[static_cast<std::size_t>(col_bound)];
            double v = 0;
            auto r = std::from_chars(s.data(), s.data() + s.size(), v);
            if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v) || v <= 0)
                fail(where(col_bound), "a finite number > 0 (seconds) or nothing", "\"" + s + "\"");
            run.bound_s = v;
        }
        run.where = "row " + std::to_string(row);
        runs.push_back(run);
    }
    if (header.empty()) fail("row 1 (header)", "a header row naming the columns m, p, nodes, units, time_s", "no rows");
    return runs;
}

std::vector<measured_run> parse_json_runs(const std::string& text, const std::string& file) {
    json doc = detail::parse_json(text, file);
    detail::reader r{file};
    const json* arr = &doc;
    std::string base;
    if (doc.is_object()) {
        r.known_keys(doc, "", detail::schema::runs_document);
        if (!doc.contains("runs")) r.fail("/runs", "an array of runs", "nothing (the key is missing)");
        arr = &doc["runs"];
        base = "/runs";
    }
    if (!arr->is_array()) r.fail(base, "an array of runs {\"m\", \"p\", \"nodes\", \"units\", \"time_s\"}", *arr);
    std::vector<measured_run> runs;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        std::string ip = detail::child(base, i);
        const json& o = r.object((*arr)[i], ip);
        r.known_keys(o, ip, detail::schema::run);
        measured_run run;
        run.c.m = static_cast<int>(r.integer_at(o, ip, "m", 1, max_count));
        run.c.p = static_cast<int>(r.integer_at(o, ip, "p", 1, max_count));
        run.c.nodes = static_cast<int>(r.integer_or(o, ip, "nodes", 1, 1, max_count));
        run.units = r.integer_or(o, ip, "units", 1, 1, max_count);
        run.time_s = r.number_at(o, ip, "time_s", 0.0, true, "seconds");
        if (o.contains("policy")) {
            run.c.pol = static_cast<policy>(r.choice(o, ip, "policy", {"edtlp", "os"}, 0, true));
            run.has_policy = true;
        }
        run.where = ip;
        runs.push_back(run);
    }
    return runs;
}

constexpr int n_params = 6;  // T_hpu, T_apu, C_apu, g (through N*g), N, T_start
constexpr const char* param_names[n_params] = {"T_hpu", "T_apu", "C_apu", "g", "N", "T_start"};

// Model coefficients of one run (detail::fit_coefficients on the application shape the options describe).
std::array<double, n_params + 1> coefficients(const platform& pl, const measured_run& run, const fit_options& opt) {
    application shape;
    shape.decomp = opt.decomp;
    shape.scale = opt.scale;
    shape.spin_limit = opt.spin_limit;
    shape.N_start = opt.N_start;
    return detail::fit_coefficients(pl, shape, run.c, run.units);
}

std::string fmt_g(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// "T_apu=1000 (--fix), N=1 (--N) and the platform's costs": what a run's known part is made of.
std::string known_parts(const std::array<bool, n_params>& held, const std::array<double, n_params>& value,
                        const std::array<bool, n_params>& fixed) {
    std::string out;
    for (int j = 0; j < n_params; ++j) {
        const auto u = static_cast<std::size_t>(j);
        if (!held[u] || (value[u] == 0 && !fixed[u])) continue;
        out += (out.empty() ? "" : ", ") + std::string(param_names[j]) + "=" + fmt_g(value[u]) +
               (fixed[u] ? " (--fix)" : j == 4 ? " (--N)" : "");
    }
    return out.empty() ? "the platform's costs" : out + " and the platform's costs";
}

}  // namespace

std::array<double, detail::fit_term_count + 1> detail::fit_coefficients(const platform& pl, const application& shape,
                                                                      const configuration& c, std::int64_t units) {
    scenario s;
    s.name = "fit";
    s.file = pl.name.empty() ? std::string("platform") : "platform " + pl.name;
    s.plat = pl;
    s.app = shape;
    s.app.units = units;
    narrow(s, c);
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

std::vector<measured_run> parse_runs(const std::string& text, const std::string& file, bool as_json) {
    return as_json ? parse_json_runs(text, file) : parse_csv(text, file);
}

std::vector<measured_run> read_runs(const std::string& path) {
    std::string text = detail::read_file(path);
    std::size_t i = text.find_first_not_of(" \t\r\n");
    bool as_json = path.ends_with(".json") || (i != std::string::npos && (text[i] == '{' || text[i] == '['));
    return parse_runs(text, path, as_json);
}

fit_result fit_application(const platform& pl, const std::vector<measured_run>& runs_in, const fit_options& opt,
                           const std::string& file) {
    const auto& names = param_names;
    // A run stopped at its bound says the time is at least the bound: not a measurement to fit.
    std::vector<measured_run> runs;
    std::size_t n_censored = 0;
    for (const auto& r : runs_in) {
        if (r.censored) ++n_censored;
        else runs.push_back(r);
    }
    for (auto& r : runs)
        if (!r.has_policy) r.c.pol = opt.pol;
    // Which parameters are held, at which value (g is held through N*g).
    std::array<bool, n_params> held{false, false, false, false, !opt.fit_N, !opt.fit_T_start};
    std::array<double, n_params> held_value{0, 0, 0, 0, opt.N, 0};
    std::array<bool, n_params> fixed{};  // held by --fix
    for (const auto& [name, v] : opt.fixed) {
        int j = -1;
        for (int k = 0; k < n_params; ++k)
            if (k != 4 && name == names[k]) j = k;
        if (j < 0) throw input_error("--fix", name, "one of T_hpu, T_apu, C_apu, g, T_start", "\"" + name + "\"");
        held[static_cast<std::size_t>(j)] = fixed[static_cast<std::size_t>(j)] = true;
        held_value[static_cast<std::size_t>(j)] = v;
    }
    if (opt.fit_N && held[3] && held_value[3] != 0.0)
        throw input_error("--fix", "g", "g not held when N is fitted (N*g is the fitted quantity)", "both");
    int k_free = 0;
    for (int j = 0; j < n_params; ++j) k_free += !held[static_cast<std::size_t>(j)];
    const int n = static_cast<int>(runs.size());
    if (n == 0 || n < k_free)
        throw input_error(file, "(all rows)",
                          "at least " + std::to_string(k_free) + " runs to fit " + std::to_string(k_free) + " parameters",
                          std::to_string(n) + " run" + (n == 1 ? "" : "s"));
    // Repetitions of one configuration give the same design row (up to scale): they measure noise,
    // they cannot separate parameters.
    std::set<std::tuple<int, int, int, std::int64_t, int>> distinct;
    std::set<int> ps;
    for (const auto& r : runs) {
        distinct.insert({r.c.m, r.c.p, r.c.nodes, r.units, static_cast<int>(r.c.pol)});
        ps.insert(r.c.p);
    }
    if (static_cast<int>(distinct.size()) < k_free)
        throw input_error(file, "(all rows)",
                          "at least " + std::to_string(k_free) + " distinct configurations (m, p, nodes, units, policy) to fit " +
                              std::to_string(k_free) + " parameters (repetitions of a configuration measure noise, they do not "
                              "separate parameters; --fix NAME=VALUE holds one)",
                          std::to_string(distinct.size()) + " distinct in " + std::to_string(n) + " runs");
    for (const auto& r : runs)
        if (static_cast<std::int64_t>(r.c.m) * r.c.p > pl.apus || r.c.nodes > pl.nodes)
            throw input_error(file, r.where,
                              "a configuration feasible on platform " + pl.name + " (m*p <= " + std::to_string(pl.apus) +
                                  ", nodes <= " + std::to_string(pl.nodes) + ")",
                              "m=" + std::to_string(r.c.m) + " p=" + std::to_string(r.c.p) + " nodes=" + std::to_string(r.c.nodes));
    // Design matrix in relative form: each row divided by the measured time.
    Eigen::MatrixXd X(n, n_params);
    Eigen::VectorXd y(n);
    for (int i = 0; i < n; ++i) {
        auto x = coefficients(pl, runs[static_cast<std::size_t>(i)], opt);
        double t = runs[static_cast<std::size_t>(i)].time_s;
        double rhs = t - x[n_params];
        // Held N: the N*(O_offload + T_csw + ...) part is known; a held g enters through N*g.
        if (held[4]) rhs -= held_value[4] * x[4];
        if (held[3]) rhs -= held_value[3] * held_value[4] * x[3];
        for (int j : {0, 1, 2, 5})
            if (held[static_cast<std::size_t>(j)]) rhs -= held_value[static_cast<std::size_t>(j)] * x[static_cast<std::size_t>(j)];
        for (int j = 0; j < n_params; ++j) X(i, j) = x[static_cast<std::size_t>(j)] / t;
        y(i) = rhs / t;
        if (!std::isfinite(y(i)) || !X.row(i).allFinite())
            throw input_error(file, runs[static_cast<std::size_t>(i)].where,
                              "a measured time on the scale of the platform's costs (the design's terms divided by it "
                              "must be finite numbers)",
                              "time_s " + fmt_g(t) + " s, out of scale");
        // The free parameters are >= 0: a run shorter than the part of the model already known (held
        // values and the platform's fixed costs) cannot be fitted by any of them. Either a --fix value
        // is inconsistent with the runs, or the times are not on the platform's scale (not seconds?).
        if (rhs < 0) {
            double by_fix = 0;
            for (int j : {0, 1, 2, 5})
                if (fixed[static_cast<std::size_t>(j)]) by_fix += held_value[static_cast<std::size_t>(j)] * x[static_cast<std::size_t>(j)];
            if (fixed[3]) by_fix += held_value[3] * held_value[4] * x[3];
            const bool held_cause = by_fix > 0 && rhs + by_fix >= 0;
            throw input_error(file, runs[static_cast<std::size_t>(i)].where,
                              "a measured time at least the model's known part (" + known_parts(held, held_value, fixed) +
                                  ")",
                              "time_s " + fmt_g(t) + " s below the known " + fmt_g(t - rhs) + " s: " +
                                  (held_cause ? "a value held by --fix is inconsistent with the runs"
                                              : "the times are out of scale with the platform's costs (seconds expected)"));
        }
    }
    fit_result out;
    out.params.resize(n_params);
    std::vector<bool> usable(n_params, false);
    std::vector<int> kept;
    // What would identify each parameter, given what these runs already vary.
    const bool p_varies = ps.size() >= 2;
    const char* host_load = "vary the host load: runs with m beyond the host contexts (alpha(m) changes) or with different units per process";
    const char* hints[n_params] = {"vary the host load: runs with different m (or units per process)",
                                   p_varies ? host_load : "vary p: runs with at least two different p",
                                   p_varies ? host_load : "vary p: runs with at least two different p",
                                   p_varies ? "more values of p: the gap grows with p while T_apu shrinks with 1/p (at least three p)"
                                            : "vary p: the gap grows with p",
                                   "give N (--N) or vary m beyond the host contexts",
                                   "vary the units per process: runs with at least two different unit counts"};
    for (int j = 0; j < n_params; ++j) {
        auto& fp = out.params[static_cast<std::size_t>(j)];
        fp.name = names[j];
        if (held[static_cast<std::size_t>(j)]) {
            fp.value = held_value[static_cast<std::size_t>(j)];
            fp.ci95_lo = fp.ci95_hi = fp.value;
            fp.note = fixed[static_cast<std::size_t>(j)] ? "held (--fix)"
                      : j == 4                           ? "held (--N)"
                                                         : "held (not fitted without --fit-T-start)";
            continue;
        }
        fp.fitted = true;
        Eigen::VectorXd col = X.col(j);
        double norm = col.stableNorm();
        bool identified = norm > 0;
        std::string with;
        if (identified && !kept.empty()) {
            Eigen::MatrixXd K(n, static_cast<Eigen::Index>(kept.size()));
            for (std::size_t c = 0; c < kept.size(); ++c) K.col(static_cast<Eigen::Index>(c)) = X.col(kept[c]);
            Eigen::VectorXd coef = K.colPivHouseholderQr().solve(col);
            double resid = (K * coef - col).stableNorm() / norm;
            if (resid < 1e-6) {
                identified = false;
                for (int c : kept) with += (with.empty() ? "" : ", ") + std::string(names[c]);
            }
        }
        if (!identified) {
            fp.identified = false;
            fp.value = 0;
            fp.note = norm > 0 ? "not identified: these runs cannot separate it from " + with + "; " + hints[j]
                               : std::string("not identified: it does not change any run's time; ") + hints[j];
            out.warnings.push_back(std::string(names[j]) + " " + fp.note + " (held at 0)");
            continue;
        }
        usable[static_cast<std::size_t>(j)] = true;
        kept.push_back(j);
    }
    const int k = static_cast<int>(kept.size());
    if (n < k)
        throw input_error(file, "(all rows)", "at least " + std::to_string(k) + " runs to fit " + std::to_string(k) + " parameters",
                          std::to_string(n) + " runs");
    // Relative least squares, iteratively reweighted: rows were divided by the measured time; dividing
    // by the fitted time instead removes the bias of weights that carry the measurement noise.
    Eigen::VectorXd b = Eigen::VectorXd::Zero(n_params);
    if (k > 0) {
        const Eigen::MatrixXd X0 = X;
        const Eigen::VectorXd y0 = y;
        for (int iter = 0; iter < 3; ++iter) {
            if (!detail::nnls_small(X, y, usable, b))
                throw input_error(file, "(all rows)", "runs that determine the parameters", "a rank-deficient design");
            for (int i = 0; i < n; ++i) {
                // X0 and y0 are already relative to the measured time t: scale row by t / fitted(t).
                double known = runs[static_cast<std::size_t>(i)].time_s * (1.0 - y0(i));  // held parts, seconds
                double fitted = (X0.row(i) * b)(0) * runs[static_cast<std::size_t>(i)].time_s + known;
                double w = fitted > 0 ? runs[static_cast<std::size_t>(i)].time_s / fitted : 1.0;
                X.row(i) = X0.row(i) * w;
                y(i) = y0(i) * w;
            }
        }
        if (!detail::nnls_small(X, y, usable, b))
            throw input_error(file, "(all rows)", "runs that determine the parameters", "a rank-deficient design");
    }
    out.dof = n - k;
    double rss = k > 0 ? (X * b - y).squaredNorm() : y.squaredNorm();
    // Covariance of the unconstrained least squares on the identified columns.
    Eigen::MatrixXd cov_n;  // of the parameters times their column norms d
    Eigen::VectorXd d;
    if (k > 0 && out.dof > 0) {
        // Columns at unit norm for the inverse (parameters differ by many orders of magnitude), scaled back.
        Eigen::MatrixXd K(n, k);
        d.resize(k);
        for (int c = 0; c < k; ++c) {
            K.col(c) = X.col(kept[static_cast<std::size_t>(c)]);
            d(c) = K.col(c).stableNorm();
            K.col(c) /= d(c);
        }
        cov_n = (K.transpose() * K).inverse() * (rss / out.dof);
    }
    const double tq = t_quantile_975(out.dof);
    for (int c = 0; c < k; ++c) {
        int j = kept[static_cast<std::size_t>(c)];
        auto& fp = out.params[static_cast<std::size_t>(j)];
        fp.value = b(j);
        fp.stderr_ = out.dof > 0 ? std::sqrt(std::max(0.0, cov_n(c, c))) / d(c) : nan;
        fp.ci95_lo = out.dof > 0 ? fp.value - tq * fp.stderr_ : nan;
        fp.ci95_hi = out.dof > 0 ? fp.value + tq * fp.stderr_ : nan;
        if (out.dof == 0) fp.note = "exactly determined: no degrees of freedom left for a confidence interval";
    }
    if (n_censored > 0)
        out.warnings.push_back(std::to_string(n_censored) + " censored run" + (n_censored == 1 ? "" : "s") +
                               " (stopped at the bound: the time is only a lower limit) not fitted");
    // Column 3 is N*g: report g itself.
    const double N = out.params[4].value;
    auto& g = out.params[3];
    if (g.fitted && g.identified) {
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
    // An interval always holds its own estimate (the estimate is the constrained solution, the
    // interval that of the unconstrained one around it).
    for (auto& fp : out.params)
        if (std::isfinite(fp.ci95_lo) && std::isfinite(fp.ci95_hi)) {
            fp.ci95_lo = std::min(fp.ci95_lo, fp.value);
            fp.ci95_hi = std::max(fp.ci95_hi, fp.value);
        }
    // The fitted application, and its residuals computed by the model itself.
    application& a = out.app;
    a.name = opt.name;
    a.decomp = opt.decomp;
    a.scale = opt.scale;
    a.T_hpu = out.params[0].value;
    a.T_apu = out.params[1].value;
    a.C_apu = out.params[2].value;
    a.g = out.params[3].value;
    a.N = out.params[4].value;
    a.T_start = out.params[5].value;
    a.spin_limit = opt.spin_limit;
    a.N_start = opt.N_start;
    a.units = 1;
    for (const auto& r : runs) a.units = std::max(a.units, r.units);
    double ss = 0;
    for (const auto& r : runs) {
        scenario s;
        s.file = file;
        s.plat = pl;
        s.app = a;
        s.app.units = r.units;
        narrow(s, r.c);
        fit_residual fr;
        fr.run = r;
        fr.predicted_s = evaluator(s, model_kind::mmgp)(r.c).time_s;
        fr.err_pct = 100.0 * (fr.predicted_s - r.time_s) / r.time_s;
        ss += fr.err_pct * fr.err_pct;
        out.max_abs_err_pct = std::max(out.max_abs_err_pct, std::fabs(fr.err_pct));
        out.residuals.push_back(fr);
    }
    out.rms_err_pct = std::sqrt(ss / n);
    return out;
}

std::string application_json(const fit_result& f, const std::string& data_file) {
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
    json res = json::array();
    for (const auto& r : f.residuals)
        res.push_back({{"m", r.run.c.m}, {"p", r.run.c.p}, {"nodes", r.run.c.nodes}, {"units", r.run.units},
                       {"policy", std::string(to_string(r.run.c.pol))}, {"measured_s", r.run.time_s},
                       {"predicted_s", r.predicted_s}, {"err_pct", r.err_pct}});
    doc["statistics"] = {{"runs", f.residuals.size()}, {"dof", f.dof},       {"rms_err_pct", f.rms_err_pct},
                         {"max_abs_err_pct", f.max_abs_err_pct}, {"residuals", res}, {"warnings", f.warnings}};
    return doc.dump(2) + "\n";
}

}  // namespace mmgp
