// Internal: the tuner's four stages and what passes between them. tuner::assess (tune/tune.cpp) calls them in this
// order, each reading only what the ones before it returned:
//   1. noise        (tune/noise.cpp)        runs -> evidence per configuration, run-to-run noise of log times
//   2. prior fit    (tune/prior.cpp)        evidence -> the model's log time of every configuration (the mean)
//   3. discrepancy  (tune/discrepancy.cpp)  evidence, noise, mean -> the Gaussian-process posterior, with and
//                                           without the runs in flight ("fantasies")
//   4. policy       (tune/policy.cpp)       posterior -> the chosen configuration, P(beaten), stop, next run
// The policy's choice of the chosen configuration and of the reference comes before the discrepancy's
// covariances with them (believe()), which is why the pipeline goes 3, 4 (choose), 3 (believe), 4 (decide).
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

#include "base/measured.hpp"
#include "mmgp/tune.hpp"

namespace mmgp::detail {

inline constexpr double z90 = 1.6448536269514722;  // 95th percentile of the standard normal
inline constexpr std::size_t n_fit = 4;             // fitted parameters: T_hpu, T_apu, C_apu, N*g

/// The middle value of v; of an even count, the mean of the two middle values.
double median_of(std::vector<double> v);
/// The variance of the median of v from its distribution-free 90 % interval (0 below five values).
double median_variance(const std::vector<double>& v);

// --- 1. noise (tune/noise.cpp) -----------------------------------------------------------------------

/// What the runs of one configuration say.
struct config_evidence : measured_configuration {  // its runs: logs, censored, failed, censored_at
    double center = 0;         // the log time the runs point to
    double weight = 0;         // number of finished runs behind `center` (median: fewer)
    double median_var = 0;     // distribution-free variance of `center` from five runs on (0: fewer)
    double own_var = 0;        // its own run-to-run variance of log times (0: fewer than two runs)
    int early = 0;             // of the censored runs, those stopped early (measurement::run::early)
    bool stopped_short_only = false;  // its only stopped runs are short ones (censored_at: their projection)
    bool projected = false;    // no full run finished: its log time projected from short runs (carry-over)
    double projected_log = 0, projected_var = 0;
    bool excluded() const noexcept { return censored > early || failed > 0; }  // never chosen, never run again
};

/// The evidence of every configuration, and which ones have finished runs (the stages visit those alone
/// where the others have nothing to say: a space may hold hundreds of thousands of configurations).
struct run_evidence {
    std::vector<config_evidence> per_config;  // one per configuration of the space
    std::vector<std::size_t> measured;        // the configurations with finished runs, in the order of the space
    const config_evidence& operator[](std::size_t c) const { return per_config[c]; }
    std::size_t size() const noexcept { return per_config.size(); }
};

/// The runs sorted by configuration: log times of the finished ones, counts of the censored and failed ones
/// (a cancelled run tells nothing). `center`, `weight`, `median_var` and `own_var` are left at 0.
run_evidence gather_evidence(const std::map<std::size_t, measurement>& measured, std::size_t n_configs);
/// Fills `center`, `weight`, `median_var` and `own_var` from `logs`.
void summarise_runs(config_evidence& e);

struct noise_estimate {
    double pooled_var = 0;           // the pooled run-to-run variance of log times
    std::vector<double> config_var;  // per configuration: the variance assumed for one of its runs
};
/// The constants of the noise stage, as tune_options has them (noise, noise_dof, few_runs_noisiest; their
/// defaults live there alone).
struct noise_prior {
    double sd;               // prior sd of a run's log time
    double dof;              // what the prior is worth, in degrees of freedom of repetitions
    bool few_runs_noisiest;  // fewer than three runs: as noisy as the noisiest configuration
};
/// The pooled and per-configuration noise of summarised evidence.
noise_estimate pool_noise(const std::vector<config_evidence>& evidence, const noise_prior& prior);
/// The run-to-run noise of repetitions alone: the pooled variance of log times of the configurations run at
/// least twice, as a standard deviation (0: none).
double measured_noise(const run_evidence& evidence);
/// summarise_runs on every measured configuration, then pool_noise.
noise_estimate estimate_noise(run_evidence& evidence, const noise_prior& prior);

// --- 1b. carry-over (tune/carryover.cpp) ------------------------------------------------------------

/// The short runs (measurement::run::work below 1) of one configuration: logs of the finished ones, the stopped ones and
/// the longest bound they were stopped at (failed ones are not counted: they tell nothing).
struct short_evidence : measured_configuration {
    int runs() const noexcept { return static_cast<int>(logs.size()) + censored; }
};
/// The short runs sorted by configuration (failed and cancelled ones tell nothing).
std::vector<short_evidence> gather_short(const std::map<std::size_t, measurement>& measured, std::size_t n_configs);

/// The carry-over from the configurations run both ways (`evidence` summarised: its centers), pulled towards the
/// prior ratio 1 / short_work without a start-up; its error from the residuals with a prior of 15 % worth one pair.
tune_carryover fit_carryover(const std::vector<short_evidence>& shorts, const run_evidence& evidence,
                             double short_work);
/// The evidence short runs add: a configuration without a finished full run gets its projected log time, its
/// variance the carry-over's error and the line's own uncertainty at its short time (the fit's covariance,
/// tune_carryover::cov_aa ...), and a short run stopped at its bound counts as a run stopped at the full time
/// that bound projects to (at least the bound); both only while the short runs rank (once they do not, every short
/// run is dropped). Sets carry.spread and carry.ranks.
void add_short_evidence(run_evidence& evidence, const std::vector<short_evidence>& shorts, tune_carryover& carry);
/// The bound of a short run whose full run would be bounded at `full_bound` (0: none): the short time projecting
/// to it, widened by 1.645 errors, never above the full bound (below one pair: the full bound).
double short_bound(const tune_carryover& carry, double full_bound);

// --- 2. prior fit (tune/prior.cpp) -------------------------------------------------------------------

/// How many measured configurations the fit without the prior's values waits for (and the policy explores
/// until): tune_options::min_fit_configurations, at least one.
inline std::size_t fit_threshold(const tune_options& opt) {
    return static_cast<std::size_t>(std::max(opt.min_fit_configurations, 1));
}

/// Stage 2 without a model yet: what the platform alone expects one run of each configuration to take, seconds,
/// with the scenario's application structure and its times unknown (all of one run's work parallel: T_apu = 1 s,
/// the other times 0); empty when the model cannot evaluate that (tune_options::first_by_platform).
std::vector<double> platform_only_times(const scenario& s, const std::vector<configuration>& space);
/// The same times as the machine cost of a run (times its nodes), relative to the cheapest (1); empty when the
/// model cannot evaluate them (tune_options::explore_by_platform).
std::vector<double> platform_explore_cost(const scenario& s, const std::vector<configuration>& space);

struct prior_fit {
    bool model_used = false;       // the model's prediction is the mean (false: all zeros below)
    std::vector<double> log_time;  // per configuration: log of the model's time with the fitted parameters
    std::vector<double> model_s;   // per configuration: that time, seconds
    std::vector<tune_param> params;  // the fitted parameters (empty when the fit was not possible)
};
/// The application's parameters fitted to the evidence's centers, pulled towards the profile's values, and
/// the model's time of every configuration of `space` with them. `coefficients`: the per-configuration
/// cache of the fit's coefficients, filled for the configurations measured.
prior_fit fit_prior(const scenario& s, const std::vector<configuration>& space, const tune_options& opt,
                    const run_evidence& evidence, std::vector<std::vector<double>>& coefficients);

// --- 3. discrepancy (tune/discrepancy.cpp) -----------------------------------------------------------

/// The observed points of the process: configurations with finished runs, and those only ever stopped at
/// their bound (their time at least the bound: taken as the bound, a conservative value).
struct observations {
    std::vector<std::size_t> configs;  // in the order of the space
    std::vector<double> log_time;      // per point: its observed log time
    std::vector<double> var;           // per point: the variance of that observation
};
observations observe(const run_evidence& evidence, const noise_estimate& noise);

/// The covariance of the discrepancy between two configurations: a level shared by all of them, a smooth
/// part shared by neighbours in (log2 m, log2 p, log2 nodes, policy) and a part of each one's own (a
/// pathology of one mapping, e.g. co-located ranks in lock-step, says little about the next one).
struct discrepancy_kernel {
    static constexpr double smooth = 0.5;       // the smooth share of the discrepancy's variance
    std::vector<std::array<double, 4>> where;   // per configuration: its place in the features
    double level_var = 0;                       // variance of the level shared by every configuration
    double discrepancy_var = 0;                 // variance of what the mean misses (the model's error squared)
    double two_length2 = 0;                     // 2 l^2, l the length scale in doublings
    double operator()(std::size_t i, std::size_t j) const {
        double d2 = 0;
        for (std::size_t k = 0; k < 4; ++k) d2 += (where[i][k] - where[j][k]) * (where[i][k] - where[j][k]);
        return level_var + discrepancy_var * (smooth * std::exp(-d2 / two_length2) + (i == j ? 1 - smooth : 0.0));
    }
};

/// The process before the runs: its mean over the configurations and its covariance.
struct discrepancy_prior {
    std::vector<double> mean;  // per configuration: the prior mean of its log time
    discrepancy_kernel kernel;
};
/// The kernel over `space`. With the model (`model_used`), `mean` is its log times and the amplitude comes from
/// the residuals; without, the mean becomes a constant at the observed points' average and the amplitude comes
/// from their spread about it (prior 50 %, worth three observations; the level's variance 1).
discrepancy_prior fit_discrepancy(const std::vector<configuration>& space, const tune_options& opt,
                                  const run_evidence& evidence, const observations& obs,
                                  std::vector<double> mean, bool model_used);

/// The posterior of every configuration's mean log time given the observations.
class discrepancy_posterior {
public:
    discrepancy_posterior(discrepancy_prior prior, const observations& obs);
    /// The posterior mean of configuration c.
    double mean(std::size_t c);
    /// Its posterior mean and variance; leaves L^-1 k(observed, c) in whitened() (unless nothing observed).
    void at(std::size_t c, double& mean, double& var);
    const Eigen::VectorXd& whitened() const noexcept { return whitened_; }
    const discrepancy_kernel& kernel() const noexcept { return kernel_; }
    std::size_t observed() const noexcept { return observed_.size(); }
    const std::vector<std::size_t>& observed_configs() const noexcept { return observed_; }
    /// Leave one out, per observed point (in observed_configs' order): `residual`, its observation minus the
    /// posterior mean the other points give it (the closed form alpha_i / [K^-1]_ii; the mean's fitted
    /// parameters are not refitted), and `variance`, that residual's variance if the process were right
    /// (1 / [K^-1]_ii, its observation's noise included).
    struct leave_one_out {
        std::vector<double> residual, variance;
    };
    leave_one_out loo() const;
    std::size_t size() const noexcept { return prior_mean_.size(); }

private:
    discrepancy_kernel kernel_;
    std::vector<double> prior_mean_;
    std::vector<std::size_t> observed_;
    Eigen::VectorXd alpha_;           // K^-1 (observed - prior mean)
    Eigen::MatrixXd chol_;            // L, K = L L^T
    Eigen::VectorXd cross_, whitened_;  // k(observed, c) and L^-1 of it: scratch of the last call
};

/// The variances once the runs in flight have returned what is expected of them (their observations at the
/// posterior mean, each with one run's noise): the mean does not move, the uncertainty near them shrinks.
class fantasy_posterior {
public:
    /// `kernel` must outlive this object.
    fantasy_posterior(const discrepancy_kernel& kernel, const observations& obs, const noise_estimate& noise,
                      const std::vector<std::size_t>& in_flight);
    /// False without runs in flight or when their covariance is not positive definite in floating point.
    bool usable() const noexcept { return usable_; }
    /// The variance of configuration c; leaves L^-1 k(points, c) in whitened(). Only when usable().
    double variance(std::size_t c);
    const Eigen::VectorXd& whitened() const noexcept { return whitened_; }

private:
    const discrepancy_kernel& kernel_;
    std::vector<std::size_t> points_;  // the observed configurations, then the ones in flight
    Eigen::MatrixXd chol_;
    bool usable_ = false;
    Eigen::VectorXd cross_, whitened_;
};

// --- 4. policy (tune/policy.cpp) ---------------------------------------------------------------------

/// The chosen configuration and what it is chosen by.
struct choice {
    bool by_cost = false;             // a cost objective (node-hours, core-hours) rather than time
    std::vector<double> log_weight;   // by cost: per configuration, log of its cost per second (else 0)
    double window = std::numeric_limits<double>::infinity();  // by cost: the fastest expected log time + log(1 + within)
    bool has_chosen = false;
    std::size_t chosen = 0;           // measured, never censored or failed, the lowest expectation
    bool has_reference = false;
    std::size_t reference = 0;        // what the next run is chosen against: the chosen, else the fastest in flight
};
/// The choice from the posterior means (`posterior_mean(c)`).
choice choose(const std::function<double(std::size_t)>& posterior_mean, const run_evidence& evidence,
              const std::vector<configuration>& space, const tune_options& opt, const std::vector<std::size_t>& in_flight);

/// The posterior of every configuration's log time (stage 3, given the choice).
struct log_beliefs {
    std::vector<double> mean, var;
    std::vector<double> cov;          // with the chosen (0 without one)
    bool fantasies = false;           // the variances with the runs in flight returned are known:
    std::vector<double> var_fantasy;  // then, each configuration's variance
    std::vector<double> cov_fantasy;  // and its covariance with the reference (empty without fantasies)
    std::vector<double> run_var;      // the variance of one more run of each configuration (its noise)
    double pooled_run_var = 0;        // the pooled variance of one run (noise_estimate::pooled_var)
    std::vector<double> explore_cost; // what the platform alone expects a run to cost, 1 the cheapest (empty: not used)
    std::vector<double> first_time;   // what the platform alone expects a run to take, for the first run (empty: not used)
    std::vector<char> screened;       // with short runs: per configuration, whether short runs screened it (else empty)
};
/// Stage 3 again: every configuration's posterior and its covariances with the chosen and the reference.
log_beliefs believe(discrepancy_posterior& gp, fantasy_posterior& fantasy, const choice& ch);

/// P(c beats another configuration by more than the tolerance), from their joint posterior.
class beat_probability {
public:
    beat_probability(const std::vector<double>& mean, const choice& ch, const tune_options& opt);
    /// `var`: the variances; `cov`: the covariances with `against`.
    double operator()(std::size_t c, std::size_t against, const std::vector<double>& var,
                      const std::vector<double>& cov) const;

private:
    const std::vector<double>& mean_;
    const choice& ch_;
    double margin_;      // log(1 + tolerance)
    double log_within_;  // log(1 + within)
};

/// The machine seconds a run of c is expected to take (the mean of its posterior time, at most the next run's
/// bound, times its nodes): what the next run is charged against the cap.
double run_cost(const tune_assessment& a, const log_beliefs& b, const std::vector<configuration>& space,
                std::size_t c);

/// The estimate of running every configuration once, by the kind of its terms.
struct exhaustive_estimate {
    double measured_s = 0;  // the measured configurations' medians
    double stopped_s = 0;   // the stopped ones: at their bound or above
    double expected_s = 0;  // those not run yet: run_cost of each
    double projected_s = 0; // those screened by short runs alone: the low end of their projection
    int stopped = 0, expected = 0, projected = 0;
    double total() const noexcept { return measured_s + stopped_s + expected_s + projected_s; }
};
/// Reads configs[].measured_s, censored (of `a`, as decide receives it) and its bounds (bound_of).
exhaustive_estimate exhaustive_seconds(const tune_assessment& a, const log_beliefs& b, const run_evidence& evidence,
                                       const std::vector<configuration>& space);

/// Sets the chosen configuration of `a` to ch's and rates it: p_beats, p_beaten, the expected regret. `b`: the
/// beliefs believe() gave for `ch`.
void rate_choice(tune_assessment& a, const choice& ch, const log_beliefs& b, const tune_options& opt);

/// Whether the assessment stopped on a budget (cost cap, runs, seconds, uses) while not confident.
bool stopped_unsure(const tune_assessment& a, const tune_options& opt);

/// Everything the assessment decides: writes has_chosen, chosen, p_beats, p_beaten, next_bound_s and the
/// chosen's and rivals' bounds, pathological, exhaustive_s, stop, next, has_next and why_next of `a`, whose
/// configs (runs, censored, excluded, measured_s), runs, in_flight, machine_s and model_used are already filled.
/// `flying`: runs in flight per configuration.
void decide(tune_assessment& a, const choice& ch, const log_beliefs& b, const run_evidence& evidence,
            const std::vector<int>& flying, const std::vector<configuration>& space, const tune_options& opt);

}  // namespace mmgp::detail
