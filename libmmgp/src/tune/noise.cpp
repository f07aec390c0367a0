// Stage 1 of the tuner (tuner::assess, tune/tune.cpp): the evidence and the run-to-run noise of log times, from the
// recorded runs alone (the tuner's measurements, mmgp/measurement.hpp). Per configuration: the log times of its
// finished runs, its censored and failed runs, the log time they point to (mean below three runs, median from three
// on) and its own noise (repetition_variance: 1.4826 x the MAD from three runs on, as measurement::log_variance);
// then the pooled noise and the noise assumed for one run of each configuration. Calls only the statistics of
// mmgp/statistics.hpp (median, median_ci90, repetition_variance); the later stages read what it returns.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tune/stages.hpp"
#include "mmgp/statistics.hpp"

namespace mmgp::detail {

double median_of(std::vector<double> v) { return mmgp::median(std::move(v)); }

// The variance of a median of log times without assuming their shape: the 90 % interval of the median from
// order statistics (median_ci90, defined from 5 runs on) read as +-1.645 standard deviations. A bimodal sample
// (most runs at one value, some in a slow mode) has a small MAD but a wide interval.
double median_variance(const std::vector<double>& v) {
    const auto [lo, hi] = median_ci90(v);
    if (!std::isfinite(lo) || !std::isfinite(hi)) return 0;
    const double half = (hi - lo) / (2 * z90);
    return half * half;
}

run_evidence gather_evidence(const std::map<std::size_t, measurement>& measured, std::size_t n_configs) {
    run_evidence evidence;
    evidence.per_config.resize(n_configs);
    for (const auto& [c, m] : measured) {
        auto& e = evidence.per_config[c];
        for (const measurement::run& r : m.runs) {
            if (r.outcome == run_outcome::cancelled) continue;  // machine time spent, nothing learnt
            // A short run: evidence through the carry-over (tune/carryover.cpp); a failed one fails the
            // configuration as a full one would (it is not run again, --retry-failed aside).
            if (r.work < 1 && (r.finished() || r.is_censored())) continue;
            if (r.finished()) {
                e.logs.push_back(std::log(r.time_s));
            } else if (r.is_censored()) {
                ++e.censored, e.censored_at = std::max(e.censored_at, std::max(r.time_s, r.past_bound_s));
                if (r.early) ++e.early;
            } else {
                ++e.failed;  // failed, or a run without a positive time
            }
        }
        if (!e.logs.empty()) evidence.measured.push_back(c);
    }
    return evidence;
}

void summarise_runs(config_evidence& e) {
    const std::size_t n = e.logs.size();
    if (n == 0) return;
    const double mean = e.log_mean();
    // From three runs on the median and the MAD: robust to a run slowed by something else on the machine.
    e.center = n >= 3 ? median_of(e.logs) : mean;
    e.median_var = median_variance(e.logs);
    e.weight = n >= 3 ? static_cast<double>(n) / 1.57 : static_cast<double>(n);  // a median is worth n / 1.57 runs
    e.own_var = repetition_variance(e.logs);  // measurement::log_variance of its runs
}

// The pooled noise: the runs' own scales with a prior of `prior_dof` pseudo-degrees of freedom at the prior
// noise (a steady program overrules it as its repetitions add up; fewer pseudo-degrees let a few lucky runs
// look steady: the tune then stops confident and wrong more often than asked). A configuration whose own scale is
// far above the others' (bimodal, or disturbed by something else on the machine) counts at most at
// `outlier_ratio` times their median scale: one pathology does not make every other configuration noisy.
// Each configuration's own scale is then shrunk towards the pooled one with `config_dof` pseudo-degrees of
// freedom (machines are noisier for some mappings than others).
noise_estimate pool_noise(const std::vector<config_evidence>& evidence, const noise_prior& prior) {
    constexpr double config_dof = 3, outlier_ratio = 4;
    const double prior_dof = prior.dof, prior_noise = prior.sd;
    std::vector<double> scales;
    for (const auto& e : evidence)
        if (e.logs.size() >= 2) scales.push_back(e.own_var);
    const double cap = scales.size() >= 3 ? outlier_ratio * median(scales) : std::numeric_limits<double>::infinity();
    double sum_squares = prior_dof * prior_noise * prior_noise, dof = prior_dof;
    for (const auto& e : evidence) {
        if (e.logs.size() < 2) continue;
        const auto e_dof = static_cast<double>(e.logs.size() - 1);
        sum_squares += e_dof * std::min(e.own_var, cap);
        dof += e_dof;
    }
    noise_estimate noise;
    noise.pooled_var = sum_squares / dof;
    noise.config_var.assign(evidence.size(), noise.pooled_var);
    for (std::size_t c = 0; c < evidence.size(); ++c) {
        const auto& e = evidence[c];
        const double e_dof = e.logs.size() >= 2 ? static_cast<double>(e.logs.size() - 1) : 0.0;
        noise.config_var[c] = (config_dof * noise.pooled_var + e_dof * e.own_var) / (config_dof + e_dof);
    }
    // Fewer than three runs cannot show a heavy tail: such a configuration is taken to be as noisy as the
    // noisiest one measured three times or more, that one's scale bounded like the pool's, so that one unlucky
    // run does not rule it out and one pathology does not make it look hopeless. (Without this, runs in flight
    // spread less: 4 at once on an 8-configuration group cost 1.6x the machine time.)
    if (!prior.few_runs_noisiest) return noise;
    double noisiest = noise.pooled_var;
    for (std::size_t c = 0; c < evidence.size(); ++c)
        if (evidence[c].logs.size() >= 3) noisiest = std::max(noisiest, std::min(noise.config_var[c], cap));
    for (std::size_t c = 0; c < evidence.size(); ++c)
        if (evidence[c].logs.size() < 3) noise.config_var[c] = std::max(noise.config_var[c], noisiest);
    return noise;
}

// The pool of pool_noise without its prior and its outlier bound: what repetitions alone say.
double measured_noise(const run_evidence& evidence) {
    double sum_squares = 0, dof = 0;
    for (std::size_t c : evidence.measured) {
        const auto& e = evidence[c];
        if (e.logs.size() < 2) continue;
        const auto e_dof = static_cast<double>(e.logs.size() - 1);
        sum_squares += e_dof * e.own_var;
        dof += e_dof;
    }
    return dof > 0 ? std::sqrt(sum_squares / dof) : 0.0;
}

noise_estimate estimate_noise(run_evidence& evidence, const noise_prior& prior) {
    for (std::size_t c : evidence.measured) summarise_runs(evidence.per_config[c]);
    return pool_noise(evidence.per_config, prior);
}

}  // namespace mmgp::detail
