// Stage 3 of the tuner (tuner::assess, tune/tune.cpp): the discrepancy, a Gaussian process over the configurations
// on the log scale. From the evidence and noise (stage 1) and the model's log times (stage 2): the observed
// points, the process's amplitude (the model's error from the residuals), the posterior of every
// configuration's mean log time, and its variances once the runs in flight have returned ("fantasies");
// then, given the policy's choice (stage 4), each configuration's covariance with the chosen one and the
// reference. Pure Eigen arithmetic; calls nothing else of the library.
#include <algorithm>
#include <cmath>

#include "tune/stages.hpp"

namespace mmgp::detail {
namespace {

constexpr double runs_alone_error = 0.5;  // the spread assumed about the runs' average before any is measured

// Where a configuration lies for the discrepancy: doublings of m, p and nodes, and the policy.
std::array<double, 4> features(const configuration& c) {
    return {std::log2(c.m), std::log2(c.p), std::log2(c.nodes), c.pol == policy::os ? 1.0 : 0.0};
}

// The model's error from its residuals at the measured configurations (and those projected from short runs),
// with 3 pseudo-observations of the prior error; a residual counts beyond the noise of its observation only.
double residual_variance(const run_evidence& evidence, const observations& obs,
                         const std::vector<double>& mean, double prior_error) {
    double sum_squares = 3 * prior_error * prior_error, count = 3;
    for (std::size_t k = 0; k < obs.configs.size(); ++k) {
        const std::size_t c = obs.configs[k];
        const auto& e = evidence[c];
        if (e.logs.empty() && !e.projected) continue;  // only ever stopped: its observation is a bound
        const double r = (e.logs.empty() ? e.projected_log : e.center) - mean[c];
        sum_squares += std::max(0.0, r * r - obs.var[k]);
        count += 1;
    }
    return sum_squares / count;
}

}  // namespace

observations observe(const run_evidence& evidence, const noise_estimate& noise) {
    observations obs;
    for (std::size_t c = 0; c < evidence.size(); ++c) {
        const auto& e = evidence[c];
        if (e.projected) {  // screened by short runs alone (tune/carryover.cpp)
            obs.configs.push_back(c);
            obs.log_time.push_back(e.projected_log);
            obs.var.push_back(e.projected_var);
            continue;
        }
        if (e.logs.empty() && !(e.censored > 0 && e.censored_at > 0)) continue;
        obs.configs.push_back(c);
        obs.log_time.push_back(e.logs.empty() ? std::log(e.censored_at) : e.center);
        // Stopped early only (measurement::run::early): at least its bound, as noisy as one run of it.
        const double stopped_var = e.censored == e.early ? noise.config_var[c] / e.early : noise.pooled_var;
        obs.var.push_back(e.logs.empty() ? stopped_var : std::max(noise.config_var[c] / e.weight, e.median_var));
    }
    return obs;
}

discrepancy_prior fit_discrepancy(const std::vector<configuration>& space, const tune_options& opt,
                                  const run_evidence& evidence, const observations& obs,
                                  std::vector<double> mean, bool model_used) {
    discrepancy_prior out;
    auto& kernel = out.kernel;
    if (model_used) {
        kernel.discrepancy_var = residual_variance(evidence, obs, mean, opt.model_error);
        kernel.level_var = kernel.discrepancy_var;
    } else {
        // Without the model: a constant mean at the runs' average, and a wide spread around it: the spread of
        // the measured configurations about that average (prior 50 %, worth three observations), so that runs
        // far apart widen what is believed of the configurations not run yet instead of being smoothed over.
        double average = 0;
        for (double v : obs.log_time) average += v;
        if (!obs.configs.empty()) average /= static_cast<double>(obs.configs.size());
        std::fill(mean.begin(), mean.end(), average);
        kernel.discrepancy_var = residual_variance(evidence, obs, mean, runs_alone_error);
        kernel.level_var = 1.0;
    }
    out.mean = std::move(mean);
    kernel.two_length2 = 2 * opt.length_scale * opt.length_scale;
    kernel.where.resize(space.size());
    for (std::size_t i = 0; i < space.size(); ++i) kernel.where[i] = features(space[i]);
    return out;
}

discrepancy_posterior::discrepancy_posterior(discrepancy_prior prior, const observations& obs)
    : kernel_(std::move(prior.kernel)), prior_mean_(std::move(prior.mean)), observed_(obs.configs) {
    const auto n = static_cast<Eigen::Index>(observed_.size());
    Eigen::MatrixXd K(n, n);
    Eigen::VectorXd resid(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const std::size_t ci = observed_[static_cast<std::size_t>(i)];
        for (Eigen::Index j = 0; j < n; ++j) K(i, j) = kernel_(ci, observed_[static_cast<std::size_t>(j)]);
        K(i, i) += obs.var[static_cast<std::size_t>(i)];
        resid(i) = obs.log_time[static_cast<std::size_t>(i)] - prior_mean_[ci];
    }
    Eigen::LLT<Eigen::MatrixXd> llt(K);
    if (n > 0) {
        alpha_ = llt.solve(resid);
        chol_ = llt.matrixL();
    }
    cross_.resize(n);
    whitened_.resize(n);
}

double discrepancy_posterior::mean(std::size_t c) {
    double m = prior_mean_[c];
    if (observed_.empty()) return m;
    for (Eigen::Index i = 0; i < cross_.size(); ++i) cross_(i) = kernel_(observed_[static_cast<std::size_t>(i)], c);
    m += cross_.dot(alpha_);
    return m;
}

void discrepancy_posterior::at(std::size_t c, double& m, double& v) {
    m = prior_mean_[c];
    v = kernel_.level_var + kernel_.discrepancy_var;
    if (observed_.empty()) return;
    for (Eigen::Index i = 0; i < cross_.size(); ++i) cross_(i) = kernel_(observed_[static_cast<std::size_t>(i)], c);
    m += cross_.dot(alpha_);
    whitened_ = chol_.triangularView<Eigen::Lower>().solve(cross_);
    v -= whitened_.squaredNorm();
}

discrepancy_posterior::leave_one_out discrepancy_posterior::loo() const {
    const auto n = static_cast<Eigen::Index>(observed_.size());
    leave_one_out out{std::vector<double>(observed_.size(), 0.0), std::vector<double>(observed_.size(), 0.0)};
    if (n == 0) return out;
    // diag(K^-1) = the squared column norms of L^-1.
    const Eigen::MatrixXd inverse_l =
        chol_.triangularView<Eigen::Lower>().solve(Eigen::MatrixXd::Identity(n, n));
    for (Eigen::Index i = 0; i < n; ++i) {
        const double precision = inverse_l.col(i).squaredNorm();
        out.residual[static_cast<std::size_t>(i)] = alpha_(i) / precision;
        out.variance[static_cast<std::size_t>(i)] = 1 / precision;
    }
    return out;
}

// Each run in flight is an observation at the posterior mean with one run's noise of its configuration.
fantasy_posterior::fantasy_posterior(const discrepancy_kernel& kernel, const observations& obs,
                                     const noise_estimate& noise, const std::vector<std::size_t>& in_flight)
    : kernel_(kernel), points_(obs.configs) {
    points_.insert(points_.end(), in_flight.begin(), in_flight.end());
    const auto n = static_cast<Eigen::Index>(points_.size());
    const auto n_observed = static_cast<Eigen::Index>(obs.configs.size());
    if (!in_flight.empty()) {
        Eigen::MatrixXd K(n, n);
        for (Eigen::Index i = 0; i < n; ++i) {
            const std::size_t ci = points_[static_cast<std::size_t>(i)];
            for (Eigen::Index j = 0; j < n; ++j) K(i, j) = kernel_(ci, points_[static_cast<std::size_t>(j)]);
            K(i, i) += i < n_observed ? obs.var[static_cast<std::size_t>(i)] : noise.config_var[ci];
        }
        Eigen::LLT<Eigen::MatrixXd> llt(K);
        if (llt.info() == Eigen::Success) chol_ = llt.matrixL();
    }
    // Without a factor (none needed, or K not positive definite in floating point): the variances without the
    // runs in flight.
    usable_ = !in_flight.empty() && chol_.rows() == n;
    cross_.resize(n);
    whitened_.resize(n);
}

double fantasy_posterior::variance(std::size_t c) {
    for (Eigen::Index i = 0; i < cross_.size(); ++i) cross_(i) = kernel_(points_[static_cast<std::size_t>(i)], c);
    whitened_ = chol_.triangularView<Eigen::Lower>().solve(cross_);
    return kernel_.level_var + kernel_.discrepancy_var - whitened_.squaredNorm();
}

// The covariances come from the whitened vectors: cov(c, d) = k(c, d) - (L^-1 k_c) . (L^-1 k_d).
log_beliefs believe(discrepancy_posterior& gp, fantasy_posterior& fantasy, const choice& ch) {
    const std::size_t n = gp.size();
    const auto& kernel = gp.kernel();
    log_beliefs b;
    b.mean.resize(n);
    b.var.resize(n);
    b.cov.assign(n, 0.0);
    b.fantasies = fantasy.usable();
    Eigen::VectorXd whitened_chosen = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(gp.observed()));
    if (ch.has_chosen && gp.observed() > 0) {
        double m, v;
        gp.at(ch.chosen, m, v);
        whitened_chosen = gp.whitened();
    }
    Eigen::VectorXd whitened_reference;
    if (b.fantasies) {
        b.var_fantasy.resize(n);
        b.cov_fantasy.resize(n, 0.0);
        fantasy.variance(ch.reference);
        whitened_reference = fantasy.whitened();
    }
    for (std::size_t c = 0; c < n; ++c) {
        double m, v;
        gp.at(c, m, v);
        b.mean[c] = m;
        b.var[c] = std::max(v, 1e-12);
        if (ch.has_chosen) b.cov[c] = kernel(c, ch.chosen) - (gp.observed() > 0 ? gp.whitened().dot(whitened_chosen) : 0.0);
        if (b.fantasies) {
            b.var_fantasy[c] = std::max(fantasy.variance(c), 1e-12);
            b.cov_fantasy[c] = kernel(c, ch.reference) - fantasy.whitened().dot(whitened_reference);
        }
    }
    return b;
}

}  // namespace mmgp::detail
