// The tuner's statistics (docs/TUNE.md): a fit of the application's parameters pulled towards the prior,
// a Gaussian-process discrepancy over the configurations on the log scale, the choice, the stopping rule and
// the next run by expected improvement per machine second.
#include "mmgp/tune.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "detail/fit_terms.hpp"
#include "detail/nnls.hpp"
#include "mmgp/error.hpp"
#include "mmgp/validate.hpp"

namespace mmgp {

std::string_view to_string(run_outcome o) noexcept {
    switch (o) {
        case run_outcome::ok: return "ok";
        case run_outcome::censored: return "censored";
        case run_outcome::failed: return "failed";
        case run_outcome::cancelled: return "cancelled";
    }
    return "?";
}

std::string_view to_string(tune_stop s) noexcept {
    switch (s) {
        case tune_stop::none: return "none";
        case tune_stop::confident: return "confident";
        case tune_stop::budget_runs: return "budget of runs spent";
        case tune_stop::budget_seconds: return "budget of machine seconds spent";
        case tune_stop::exhausted: return "no configuration left to run";
    }
    return "?";
}

namespace {

constexpr double z90 = 1.6448536269514722;  // 95th percentile of the standard normal
constexpr std::size_t n_fit = 4;             // T_hpu, T_apu, C_apu, N*g

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

std::string fmt_p(const char* what, double p) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s (P = %.2f)", what, p);
    return buf;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Where a configuration lies for the discrepancy: doublings of m, p and nodes, and the policy.
std::array<double, 4> features(const configuration& c) {
    return {std::log2(c.m), std::log2(c.p), std::log2(c.nodes), c.pol == policy::os ? 1.0 : 0.0};
}

// What the runs of one configuration say.
struct evidence {
    std::vector<double> logs;  // log of the finished runs' times
    int censored = 0, failed = 0;
    double censored_at = 0;    // the longest bound it was stopped at
    double center = 0;         // the log time the runs point to
    double weight = 0;         // number of finished runs behind `center` (median: fewer)
    double median_var = 0;     // distribution-free variance of `center` from five runs on (0: fewer)
};

// The variance of a median of log times without assuming their shape: the 90 % interval of the median from
// order statistics (median_ci90, defined from 5 runs on) read as +-1.645 standard deviations. A bimodal sample
// (most runs at one value, some in a slow mode) has a small MAD but a wide interval.
double median_variance(const std::vector<double>& v) {
    const auto [lo, hi] = median_ci90(v);
    if (!std::isfinite(lo) || !std::isfinite(hi)) return 0;
    const double half = (hi - lo) / (2 * z90);
    return half * half;
}

}  // namespace

tuner::tuner(const scenario& s, std::vector<configuration> space, const tune_options& opt)
    : s_(s), space_(std::move(space)), opt_(opt) {
    if (space_.empty()) throw input_error(s.file, "/search", "at least one configuration to tune over", "none");
    // The scenario's search box covers every configuration of the space (the evaluator precomputes over it).
    auto& sp = s_.space;
    sp.m = {space_[0].m, space_[0].m};
    sp.p = {space_[0].p, space_[0].p};
    sp.nodes = {space_[0].nodes, space_[0].nodes};
    for (const auto& c : space_) {
        if (c.m < 1 || c.p < 1 || c.nodes < 1)
            throw input_error(s.file, "/search", "configurations with m, p, nodes >= 1",
                              "m=" + std::to_string(c.m) + " p=" + std::to_string(c.p) + " nodes=" + std::to_string(c.nodes));
        sp.m = {std::min<std::int64_t>(sp.m.lo, c.m), std::max<std::int64_t>(sp.m.hi, c.m)};
        sp.p = {std::min<std::int64_t>(sp.p.lo, c.p), std::max<std::int64_t>(sp.p.hi, c.p)};
        sp.nodes = {std::min<std::int64_t>(sp.nodes.lo, c.nodes), std::max<std::int64_t>(sp.nodes.hi, c.nodes)};
        if (static_cast<std::int64_t>(c.m) * c.p > s_.plat.apus || c.nodes > s_.plat.nodes ||
            (s_.plat.max_processes_per_node > 0 && c.m > s_.plat.max_processes_per_node))
            throw input_error(s.file, "/platform",
                              "a platform on which every configuration of the space is feasible (m*p <= apus = " +
                                  std::to_string(s_.plat.apus) + ", nodes <= " + std::to_string(s_.plat.nodes) + ")",
                              "m=" + std::to_string(c.m) + " p=" + std::to_string(c.p) + " nodes=" + std::to_string(c.nodes));
    }
    if (opt_.use_model) check_coverage(s_);
    coef_.resize(space_.size());
}

void tuner::add(const tune_run& r) {
    if (r.config >= space_.size()) throw std::out_of_range("tuner::add: configuration index out of the space");
    runs_.push_back(r);
}

tune_assessment tuner::assess(const std::vector<std::size_t>& in_flight) const {
    const std::size_t n_cfg = space_.size();
    tune_assessment a;
    a.configs.resize(n_cfg);
    a.runs = static_cast<int>(runs_.size());
    a.in_flight = static_cast<int>(in_flight.size());
    std::vector<int> flying(n_cfg, 0);
    for (std::size_t c : in_flight) {
        if (c >= n_cfg) throw std::out_of_range("tuner::assess: configuration in flight out of the space");
        ++flying[c];
    }

    // The runs, per configuration.
    std::vector<evidence> ev(n_cfg);
    for (const auto& r : runs_) {
        auto& e = ev[r.config];
        a.machine_s += r.time_s * space_[r.config].nodes;
        if (r.outcome == run_outcome::cancelled) continue;  // machine time spent, nothing learnt
        if (r.outcome == run_outcome::ok && r.time_s > 0)
            e.logs.push_back(std::log(r.time_s));
        else if (r.outcome == run_outcome::censored)
            ++e.censored, e.censored_at = std::max(e.censored_at, r.time_s);
        else
            ++e.failed;
    }

    // Run-to-run noise. Each configuration's own scale (1.4826 x the MAD of its log times from three runs on,
    // robust to a run slowed by something else on the machine), shrunk towards the pooled scale, itself shrunk
    // towards the prior with 4 pseudo-degrees of freedom: machines are noisier for some mappings than others.
    std::vector<double> own2(n_cfg, 0.0);
    double ss = 4 * opt_.noise * opt_.noise, dof = 4;
    for (std::size_t c = 0; c < n_cfg; ++c) {
        auto& e = ev[c];
        const std::size_t n = e.logs.size();
        if (n == 0) continue;
        double mean = 0;
        for (double v : e.logs) mean += v;
        mean /= static_cast<double>(n);
        e.center = n >= 3 ? median_of(e.logs) : mean;
        e.median_var = median_variance(e.logs);
        e.weight = n >= 3 ? static_cast<double>(n) / 1.57 : static_cast<double>(n);
        if (n >= 3) {
            std::vector<double> dev;
            for (double v : e.logs) dev.push_back(std::abs(v - e.center));
            const double sd = 1.4826 * median_of(dev);
            own2[c] = sd * sd;
            ss += static_cast<double>(n - 1) * own2[c];
            dof += static_cast<double>(n - 1);
        } else if (n == 2) {
            own2[c] = (e.logs[0] - mean) * (e.logs[0] - mean) + (e.logs[1] - mean) * (e.logs[1] - mean);
            ss += own2[c];
            dof += 1;
        }
    }
    const double noise2 = ss / dof;
    a.noise = std::sqrt(noise2);
    // Fewer than three runs cannot show a heavy tail: such a configuration is taken to be as noisy as the
    // noisiest one measured three times or more, so that one unlucky run does not rule it out.
    double noisiest2 = noise2;
    std::vector<double> cfg_noise2(n_cfg, noise2);
    for (std::size_t c = 0; c < n_cfg; ++c) {
        const double k = ev[c].logs.size() >= 2 ? static_cast<double>(ev[c].logs.size() - 1) : 0.0;
        cfg_noise2[c] = (3 * noise2 + k * own2[c]) / (3 + k);
        if (ev[c].logs.size() >= 3) noisiest2 = std::max(noisiest2, cfg_noise2[c]);
    }
    for (std::size_t c = 0; c < n_cfg; ++c)
        if (ev[c].logs.size() < 3) cfg_noise2[c] = std::max(cfg_noise2[c], noisiest2);

    // The observed points of the discrepancy: configurations with finished runs, and those only ever stopped
    // at their bound (their time at least the bound: taken as the bound, a conservative value).
    std::vector<std::size_t> obs;
    for (std::size_t i = 0; i < n_cfg; ++i)
        if (!ev[i].logs.empty() || (ev[i].censored > 0 && ev[i].censored_at > 0)) obs.push_back(i);
    auto obs_value = [&](std::size_t i) { return ev[i].logs.empty() ? std::log(ev[i].censored_at) : ev[i].center; };
    auto obs_var = [&](std::size_t i) {
        return ev[i].logs.empty() ? noise2 : std::max(cfg_noise2[i] / ev[i].weight, ev[i].median_var);
    };
    std::size_t n_ok = 0;
    for (std::size_t i : obs) n_ok += !ev[i].logs.empty();

    // The mean: the model with the application's parameters fitted to the finished runs, pulled towards the prior.
    std::vector<double> mean(n_cfg, 0.0);
    const application& prior = s_.app;
    const std::array<double, n_fit> theta0{prior.T_hpu, prior.T_apu, prior.C_apu, prior.N * prior.g};
    const bool fit_possible = opt_.use_model && (opt_.prior || n_ok >= n_fit + 1);
    if (fit_possible) {
        std::array<double, n_fit> theta = theta0;
        std::vector<std::size_t> fit_cfg;
        for (std::size_t i : obs)
            if (!ev[i].logs.empty()) fit_cfg.push_back(i);
        if (!fit_cfg.empty()) {
            for (std::size_t i : fit_cfg)
                if (coef_[i].empty()) {
                    auto x = detail::fit_coefficients(s_.plat, prior, space_[i], prior.units);
                    coef_[i].assign(x.begin(), x.end());
                }
            const Eigen::Index nd = static_cast<Eigen::Index>(fit_cfg.size());
            Eigen::MatrixXd X = Eigen::MatrixXd::Zero(nd + static_cast<Eigen::Index>(n_fit), n_fit);
            Eigen::VectorXd y = Eigen::VectorXd::Zero(X.rows());
            std::array<std::vector<double>, n_fit> scale;  // per column: the value that alone explains a run
            for (Eigen::Index r = 0; r < nd; ++r) {
                const auto& x = coef_[fit_cfg[static_cast<std::size_t>(r)]];
                const double t = std::exp(ev[fit_cfg[static_cast<std::size_t>(r)]].center);
                const double known = x[detail::term_base] + prior.N * x[detail::term_N] + prior.T_start * x[detail::term_T_start];
                for (std::size_t k = 0; k < n_fit; ++k) {
                    X(r, static_cast<Eigen::Index>(k)) = x[k] / t;
                    if (std::abs(x[k]) > 0) scale[k].push_back(t / std::abs(x[k]));
                }
                y(r) = (t - known) / t;
            }
            // Prior rows: (theta_k / theta0_k - 1) with sd prior_weight, in units of the model's error; a
            // parameter without a prior value is held near 0 by a faint row, so that an unidentified one stays 0.
            std::vector<bool> usable(n_fit, false);
            for (std::size_t k = 0; k < n_fit; ++k) {
                const Eigen::Index r = nd + static_cast<Eigen::Index>(k);
                const auto kk = static_cast<Eigen::Index>(k);
                if (opt_.prior && theta0[k] > 0) {
                    const double w = opt_.model_error / opt_.prior_weight;
                    X(r, kk) = w / theta0[k];
                    y(r) = w;
                    usable[k] = true;
                } else if (!scale[k].empty()) {
                    X(r, kk) = 1e-3 / median_of(scale[k]);
                    usable[k] = true;
                }
            }
            Eigen::VectorXd b;
            if (X.allFinite() && y.allFinite() && detail::nnls_small(X, y, usable, b))
                for (std::size_t k = 0; k < n_fit; ++k) theta[k] = usable[k] ? b(static_cast<Eigen::Index>(k)) : 0.0;
        }
        scenario s = s_;
        s.app.T_hpu = theta[0];
        s.app.T_apu = theta[1];
        s.app.C_apu = theta[2];
        if (prior.N > 0) s.app.g = theta[3] / prior.N;
        const char* names[n_fit] = {"T_hpu", "T_apu", "C_apu", "g"};
        for (std::size_t k = 0; k < n_fit; ++k) {
            const double div = k == 3 && prior.N > 0 ? prior.N : 1.0;
            a.params.push_back({names[k], opt_.prior ? theta0[k] / div : 0.0, theta[k] / div});
        }
        try {
            evaluator e(s, model_kind::mmgp);
            bool all_finite = true;
            for (std::size_t i = 0; i < n_cfg; ++i) {
                const double t = e(space_[i]).time_s;
                all_finite = all_finite && std::isfinite(t) && t > 0;
                a.configs[i].model_s = t;
                mean[i] = std::log(std::max(t, 1e-300));
            }
            a.model_used = all_finite;
        } catch (const error&) {
            a.model_used = false;
        }
        if (!a.model_used) {
            std::fill(mean.begin(), mean.end(), 0.0);
            for (auto& c : a.configs) c.model_s = 0;
        }
    }

    // The discrepancy's amplitude: the model's error from the residuals (3 pseudo-observations of the prior);
    // without the model, a constant mean at the runs' average and a wide spread.
    double tau2 = 0, tauc2 = 0;
    if (a.model_used) {
        double sr = 3 * opt_.model_error * opt_.model_error, nr = 3;
        for (std::size_t i : obs)
            if (!ev[i].logs.empty()) {
                const double r = ev[i].center - mean[i];
                sr += std::max(0.0, r * r - obs_var(i));
                nr += 1;
            }
        tau2 = sr / nr;
        tauc2 = tau2;
    } else {
        double m0 = 0;
        for (std::size_t i : obs) m0 += obs_value(i);
        if (!obs.empty()) m0 /= static_cast<double>(obs.size());
        std::fill(mean.begin(), mean.end(), m0);
        tau2 = 0.5 * 0.5;
        tauc2 = 1.0;
    }
    a.model_error = std::sqrt(tau2);
    const double l2 = 2 * opt_.length_scale * opt_.length_scale;
    constexpr double smooth = 0.5;
    std::vector<std::array<double, 4>> f(n_cfg);
    for (std::size_t i = 0; i < n_cfg; ++i) f[i] = features(space_[i]);
    auto kern = [&](std::size_t i, std::size_t j) {
        double d2 = 0;
        for (int k = 0; k < 4; ++k) d2 += (f[i][static_cast<std::size_t>(k)] - f[j][static_cast<std::size_t>(k)]) *
                                          (f[i][static_cast<std::size_t>(k)] - f[j][static_cast<std::size_t>(k)]);
        // A smooth part shared by neighbours and a part of each configuration's own (a pathology of one
        // mapping, e.g. co-located ranks in lock-step, says little about the next one).
        return tauc2 + tau2 * (smooth * std::exp(-d2 / l2) + (i == j ? 1 - smooth : 0.0));
    };

    // The posterior of every configuration's mean log time.
    const auto n_obs = static_cast<Eigen::Index>(obs.size());
    Eigen::MatrixXd K(n_obs, n_obs);
    Eigen::VectorXd resid(n_obs);
    for (Eigen::Index i = 0; i < n_obs; ++i) {
        const std::size_t oi = obs[static_cast<std::size_t>(i)];
        for (Eigen::Index j = 0; j < n_obs; ++j) K(i, j) = kern(oi, obs[static_cast<std::size_t>(j)]);
        K(i, i) += obs_var(oi);
        resid(i) = obs_value(oi) - mean[oi];
    }
    Eigen::LLT<Eigen::MatrixXd> llt(K);
    const Eigen::VectorXd alpha = n_obs > 0 ? Eigen::VectorXd(llt.solve(resid)) : Eigen::VectorXd();
    const Eigen::MatrixXd L = n_obs > 0 ? Eigen::MatrixXd(llt.matrixL()) : Eigen::MatrixXd();
    // k(obs, c), the posterior mean and variance of c, and L^-1 k(obs, c).
    Eigen::VectorXd kc(n_obs), wc(n_obs);
    auto posterior = [&](std::size_t c, double& m, double& v) {
        m = mean[c];
        v = tauc2 + tau2;
        if (n_obs == 0) return;
        for (Eigen::Index i = 0; i < n_obs; ++i) kc(i) = kern(obs[static_cast<std::size_t>(i)], c);
        m += kc.dot(alpha);
        wc = L.triangularView<Eigen::Lower>().solve(kc);
        v -= wc.squaredNorm();
    };

    // The variances once the runs in flight have returned what is expected of them (their observations at the
    // posterior mean, each with one run's noise): the mean does not move, the uncertainty near them shrinks.
    // Only the next choice uses them.
    std::vector<std::size_t> obs2 = obs;
    for (std::size_t c : in_flight) obs2.push_back(c);
    const auto n_obs2 = static_cast<Eigen::Index>(obs2.size());
    Eigen::MatrixXd L2;
    if (!in_flight.empty()) {
        Eigen::MatrixXd K2(n_obs2, n_obs2);
        for (Eigen::Index i = 0; i < n_obs2; ++i) {
            const std::size_t oi = obs2[static_cast<std::size_t>(i)];
            for (Eigen::Index j = 0; j < n_obs2; ++j) K2(i, j) = kern(oi, obs2[static_cast<std::size_t>(j)]);
            K2(i, i) += i < n_obs ? obs_var(oi) : cfg_noise2[oi];
        }
        Eigen::LLT<Eigen::MatrixXd> llt2(K2);
        if (llt2.info() == Eigen::Success) L2 = llt2.matrixL();
    }
    // Without a factor (none needed, or K2 not positive definite in floating point): the variances without the
    // runs in flight.
    const bool fantasies = !in_flight.empty() && L2.rows() == n_obs2;
    Eigen::VectorXd kc2(n_obs2), wc2(n_obs2);
    auto variance2 = [&](std::size_t c) {
        for (Eigen::Index i = 0; i < n_obs2; ++i) kc2(i) = kern(obs2[static_cast<std::size_t>(i)], c);
        wc2 = L2.triangularView<Eigen::Lower>().solve(kc2);
        return tauc2 + tau2 - wc2.squaredNorm();
    };

    // Under a cost objective: each configuration's log cost weight (log nodes, log m p nodes), and the window,
    // the configurations expected within `within` of the fastest expected time (log).
    const bool by_cost = opt_.minimise != objective::time;
    std::vector<double> lw(n_cfg, 0.0);
    double window = std::numeric_limits<double>::infinity();
    if (by_cost) {
        double fastest = std::numeric_limits<double>::infinity();
        for (std::size_t c = 0; c < n_cfg; ++c) {
            lw[c] = std::log(objective_value(opt_.minimise, space_[c], 1.0));
            if (ev[c].censored > 0 || ev[c].failed > 0) continue;
            double m, v;
            posterior(c, m, v);
            fastest = std::min(fastest, m);
        }
        window = fastest + std::log1p(opt_.within);
    }
    // The chosen configuration: measured, never censored or failed, lowest expected time (a cost objective:
    // lowest expected cost in the window; the fastest when none measured is in it).
    std::vector<double> mu(n_cfg), var(n_cfg), cov(n_cfg, 0.0);
    auto rank_key = [&](std::size_t c, double m) {
        return !by_cost ? std::pair{0, m} : m <= window ? std::pair{0, m + lw[c]} : std::pair{1, m};
    };
    for (std::size_t c : obs) {
        const auto& e = ev[c];
        if (e.logs.empty() || e.censored > 0 || e.failed > 0) continue;
        double m, v;
        posterior(c, m, v);
        if (!a.has_chosen || rank_key(c, m) < rank_key(a.chosen, mu[a.chosen])) {
            a.has_chosen = true;
            a.chosen = c;
            mu[c] = m;
        }
    }
    Eigen::VectorXd wch = Eigen::VectorXd::Zero(n_obs);
    if (a.has_chosen && n_obs > 0) {
        double m, v;
        posterior(a.chosen, m, v);
        wch = wc;
    }
    // The reference of the next choice: the chosen configuration, or, before anything is chosen, the one in
    // flight expected to be the fastest (what runs beside it is chosen against it).
    bool has_ref = a.has_chosen;
    std::size_t ref = a.chosen;
    if (!has_ref)
        for (std::size_t c : in_flight) {
            if (ev[c].censored > 0 || ev[c].failed > 0) continue;  // never chosen, never repeated
            double m, v, mr = 0, vr;
            posterior(c, m, v);
            if (has_ref) posterior(ref, mr, vr);
            if (!has_ref || m < mr) has_ref = true, ref = c;
        }
    // Every configuration's posterior, its covariance with the chosen one, and with the runs in flight returned,
    // its variance and covariance with the reference (var2, cov2).
    std::vector<double> var2, cov2;
    Eigen::VectorXd wch2;
    if (fantasies) {
        var2.resize(n_cfg);
        cov2.resize(n_cfg, 0.0);
        variance2(ref);
        wch2 = wc2;
    }
    for (std::size_t c = 0; c < n_cfg; ++c) {
        double m, v;
        posterior(c, m, v);
        mu[c] = m;
        var[c] = std::max(v, 1e-12);
        if (a.has_chosen) cov[c] = kern(c, a.chosen) - (n_obs > 0 ? wc.dot(wch) : 0.0);
        if (fantasies) {
            var2[c] = std::max(variance2(c), 1e-12);
            cov2[c] = kern(c, ref) - wc2.dot(wch2);
        }
        auto& b = a.configs[c];
        const auto& e = ev[c];
        b.runs = static_cast<int>(e.logs.size()) + e.censored + e.failed;
        b.censored = e.censored;
        b.failed = e.failed;
        b.measured_s = e.logs.empty() ? 0.0 : std::exp(median_of(e.logs));
        b.excluded = e.censored > 0 || e.failed > 0;
        const double sd = std::sqrt(var[c]);
        b.time_s = std::exp(mu[c]);
        b.lo_s = std::exp(mu[c] - z90 * sd);
        b.hi_s = std::exp(mu[c] + z90 * sd);
    }

    // How likely another configuration beats it by more than the tolerance (independent pairwise events).
    const double margin = std::log1p(opt_.tolerance);
    // Under a cost objective, c beats the chosen when it is cheaper by more than the tolerance and in the
    // window, or when it is faster than the chosen by more than `within` (the chosen is then out of the window).
    auto p_beats = [&](std::size_t c, std::size_t ch, const std::vector<double>& v, const std::vector<double>& cv) {
        const double sd = std::sqrt(std::max(v[c] + v[ch] - 2 * cv[c], 1e-12));
        if (!by_cost) return normal_cdf((mu[ch] - mu[c] - margin) / sd);
        const double cheaper = normal_cdf((mu[ch] + lw[ch] - mu[c] - lw[c] - margin) / sd);
        const double in_window = normal_cdf((window - mu[c]) / std::sqrt(std::max(v[c], 1e-12)));
        const double faster = normal_cdf((mu[ch] - mu[c] - std::log1p(opt_.within)) / sd);
        return 1 - (1 - cheaper * in_window) * (1 - faster);
    };
    if (a.has_chosen) {
        double p_none = 1;
        for (std::size_t c = 0; c < n_cfg; ++c) {
            if (c == a.chosen || a.configs[c].excluded) continue;
            const double p = p_beats(c, a.chosen, var, cov);
            a.configs[c].p_beats = p;
            p_none *= 1 - p;
        }
        a.p_beaten = 1 - p_none;
    }

    // The bound of the next run, and the configurations confidently slower than it.
    // No bound before a run has finished: the model's scale is not yet checked against this machine.
    double bound = 0;
    if (a.has_chosen) bound = opt_.bound_factor * std::exp(mu[a.chosen]);
    if (opt_.max_run_s > 0) bound = bound > 0 ? std::min(bound, opt_.max_run_s) : opt_.max_run_s;
    a.next_bound_s = bound;
    bool any_runnable = false;
    for (std::size_t c = 0; c < n_cfg; ++c) {
        auto& b = a.configs[c];
        if (b.excluded) continue;
        b.pathological = bound > 0 && mu[c] - z90 * std::sqrt(var[c]) > std::log(bound);
        any_runnable = any_runnable || !b.pathological;
    }

    // Machine seconds of running every configuration once: the runs' medians where measured, else the expectation.
    for (std::size_t c = 0; c < n_cfg; ++c) {
        const auto& b = a.configs[c];
        const double t = b.measured_s > 0 ? b.measured_s
                         : b.censored > 0 ? ev[c].censored_at
                                          : std::exp(mu[c] + 0.5 * var[c]);
        a.exhaustive_s += t * space_[c].nodes;
    }

    // Stop?
    const auto& chosen_b = a.has_chosen ? a.configs[a.chosen] : config_belief{};
    if (a.has_chosen && chosen_b.runs >= 3 && a.p_beaten < 1 - opt_.confidence)
        a.stop = tune_stop::confident;
    else if (opt_.max_runs > 0 && a.runs >= opt_.max_runs)
        a.stop = tune_stop::budget_runs;
    else if (opt_.max_seconds > 0 && a.machine_s >= opt_.max_seconds)
        a.stop = tune_stop::budget_seconds;
    bool any_left = false;
    for (const auto& b : a.configs) any_left = any_left || !b.excluded;
    if (a.stop == tune_stop::none && !any_left) a.stop = tune_stop::exhausted;
    if (a.stop != tune_stop::none) return a;
    // The run budget taken by the runs in flight: nothing more to start; their results decide.
    if (opt_.max_runs > 0 && a.runs + a.in_flight >= opt_.max_runs) return a;
    // The runs in flight expected to settle it (confident once they return what is expected of them): start
    // nothing more, a run started now would most likely be cancelled unfinished.
    if (a.has_chosen && fantasies && chosen_b.runs + flying[a.chosen] >= 3) {
        double p_none = 1;
        for (std::size_t c = 0; c < n_cfg; ++c)
            if (c != a.chosen && !a.configs[c].excluded) p_none *= 1 - p_beats(c, a.chosen, var2, cov2);
        if (1 - p_none < 1 - opt_.confidence) return a;
    }

    // The next run. While nothing predicts (no model, too few runs to fit one): the least known configuration.
    // Before anything is chosen: the lowest expected time. Then the configuration most likely to beat the
    // chosen one by more than the tolerance per machine second of its run; when the chosen one's own interval
    // is the wider of the two, the chosen one again (both sides of the comparison that keeps the loop going).
    const std::vector<double>& v_next = fantasies ? var2 : var;
    auto cost = [&](std::size_t c) {
        double t = std::exp(mu[c] + 0.5 * var[c]);
        if (bound > 0) t = std::min(t, bound);
        return t * space_[c].nodes;
    };
    const bool exploring = !a.model_used && (opt_.use_model ? n_ok < n_fit + 1 : !a.has_chosen);
    double best_score = -std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < n_cfg; ++c) {
        const auto& b = a.configs[c];
        if (b.excluded || (b.pathological && any_runnable)) continue;
        if (has_ref && c == ref && !exploring) continue;
        const double score = exploring            ? v_next[c]
                             : !has_ref           ? -mu[c]
                             : !fantasies         ? (a.has_chosen ? b.p_beats : p_beats(c, ref, var, cov)) / cost(c)
                                                  : p_beats(c, ref, var2, cov2) / cost(c);
        if (score > best_score) {
            best_score = score;
            a.next = c;
            a.has_next = true;
        }
    }
    bool repeat_chosen = false;
    // One more run of a configuration with n runs takes about var / (n + 1) off its variance.
    auto gain = [&](std::size_t c) { return v_next[c] / (a.configs[c].runs + flying[c] + 1); };
    if (has_ref && !exploring && (!a.has_next || gain(ref) > gain(a.next))) {
        repeat_chosen = true;
        a.next = ref;
        a.has_next = true;
    }
    if (!a.has_next) {
        a.stop = tune_stop::exhausted;
        return a;
    }
    const auto& nb = a.configs[a.next];
    if (exploring)
        a.why_next = "explore: the least known configuration (too few runs for the model yet)";
    else if (!has_ref)
        a.why_next = "the lowest expected time";
    else if (repeat_chosen)
        a.why_next = a.has_chosen ? "repeat the chosen: one more run of it tells more"
                                  : "another run of the one in flight expected fastest";
    else if (nb.pathological)
        a.why_next = "nothing else left to run";
    else if (!a.has_chosen)
        a.why_next = "may beat the one in flight expected fastest";
    else if (nb.runs > 0)
        a.why_next = fmt_p("repeat: may still beat the chosen", nb.p_beats);
    else
        a.why_next = fmt_p("may beat the chosen", nb.p_beats);
    return a;
}

}  // namespace mmgp
