// The tuner's public face (mmgp/tune.hpp, docs/TUNE.md): the space and the runs so far, and assess(), the
// pipeline of the four stages declared in tune/stages.hpp — noise (tune/noise.cpp), prior fit
// (tune/prior.cpp), discrepancy (tune/discrepancy.cpp) and policy (tune/policy.cpp) — called in that order,
// each on what the ones before it returned. What the assessment reports of each configuration is put
// together here.
#include "mmgp/tune.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "base/format.hpp"
#include "tune/stages.hpp"
#include "mmgp/error.hpp"

namespace mmgp {

std::string_view to_string(tune_stop s) noexcept {
    static constexpr std::pair<std::string_view, tune_stop> names[] = {
        {"none", tune_stop::none},
        {"confident", tune_stop::confident},
        {"budget of runs spent", tune_stop::budget_runs},
        {"budget of machine seconds spent", tune_stop::budget_seconds},
        {"no configuration left to run", tune_stop::exhausted},
        {"cost cap reached (running every configuration once)", tune_stop::budget_cost},
        {"one more run would cost more than it is expected to save", tune_stop::not_worth}};
    return detail::name_of(s, names, "?");
}

std::string_view to_string(choice_basis b) noexcept {
    static constexpr std::pair<std::string_view, choice_basis> names[] = {
        {"posterior", choice_basis::posterior}, {"measurements", choice_basis::measurements}};
    return detail::name_of(b, names, "?");
}

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
        if (!platform_holds(s_.plat, c))
            throw input_error(s.file, "/platform",
                              "a platform on which every configuration of the space is feasible (" +
                                  holds_text(s_.plat, c.share == accelerator_sharing::time_sliced) + ")",
                              "m=" + std::to_string(c.m) + " p=" + std::to_string(c.p) + " nodes=" + std::to_string(c.nodes));
    }
    if (opt_.use_model) check_coverage(s_);
    coef_.resize(space_.size());
    const bool gpu_node = std::any_of(s_.plat.sharing.begin(), s_.plat.sharing.end(),
                                      [](accelerator_sharing m) { return m != accelerator_sharing::dedicated; });
    if ((opt_.explore_by_platform || (opt_.explore_by_platform_on_gpu && gpu_node)) && !opt_.prior)
        explore_cost_ = detail::platform_explore_cost(s_, space_);
    if (opt_.first_by_platform && !opt_.prior) first_time_ = detail::platform_only_times(s_, space_);
}

void tuner::add(std::size_t config, measurement::run r) {
    if (config >= space_.size()) throw std::out_of_range("tuner::add: configuration index out of the space");
    const auto [it, first] = measured_.try_emplace(config);
    if (first) it->second.c = space_[config];
    r.order = order_.size();
    it->second.runs.push_back(std::move(r));
    order_.push_back(config);
}

std::vector<std::pair<std::size_t, const measurement::run*>> tuner::runs_in_order() const {
    std::map<std::size_t, std::size_t> taken;
    std::vector<std::pair<std::size_t, const measurement::run*>> out;
    out.reserve(order_.size());
    for (std::size_t c : order_) out.emplace_back(c, &measured_.at(c).runs[taken[c]++]);
    return out;
}

namespace {

// Runs in flight per configuration.
std::vector<int> runs_in_flight(const std::vector<std::size_t>& in_flight, std::size_t n_configs) {
    std::vector<int> flying(n_configs, 0);
    for (std::size_t c : in_flight) {
        if (c >= n_configs) throw std::out_of_range("tuner::assess: configuration in flight out of the space");
        ++flying[c];
    }
    return flying;
}

// Machine seconds spent: wall time x nodes of every run, cancelled ones included.
double machine_seconds(const std::vector<std::pair<std::size_t, const measurement::run*>>& runs,
                       const std::vector<configuration>& space) {
    double total = 0;
    for (const auto& [c, r] : runs) total += r->time_s * space[c].nodes;
    return total;
}

// What the assessment reports of each configuration: the model's time, its runs and its posterior (a 90 %
// interval).
void describe_configs(std::vector<config_belief>& configs, const detail::run_evidence& evidence,
                      const std::vector<double>& model_s, const detail::log_beliefs& b) {
    for (std::size_t c = 0; c < configs.size(); ++c) {
        auto& belief = configs[c];
        const auto& e = evidence[c];
        belief.model_s = model_s[c];
        belief.runs = static_cast<int>(e.logs.size()) + e.censored + e.failed;
        belief.censored = e.censored;
        belief.failed = e.failed;
        belief.measured_s = e.logs.empty() ? 0.0 : std::exp(detail::median_of(e.logs));
        belief.full_runs = static_cast<int>(e.logs.size());
        belief.excluded = e.excluded();
        const double sd = std::sqrt(b.var[c]);
        belief.time_s = std::exp(b.mean[c]);
        belief.lo_s = std::exp(b.mean[c] - detail::z90 * sd);
        belief.hi_s = std::exp(b.mean[c] + detail::z90 * sd);
    }
}

// What short runs say of each configuration: how many, and the full time they project to.
void describe_short_runs(std::vector<config_belief>& configs, const detail::run_evidence& evidence,
                         const std::vector<detail::short_evidence>& shorts) {
    for (std::size_t c = 0; c < configs.size(); ++c) {
        configs[c].short_runs = shorts[c].runs();
        configs[c].runs += static_cast<int>(shorts[c].logs.size());  // a stopped one is among `censored` already
        configs[c].projected_s = evidence[c].projected ? std::exp(evidence[c].projected_log) : 0.0;
    }
}

// With short runs, while they rank the configurations: a configuration with no run of either kind (none in flight)
// is screened by a short run; any other runs in full. The short run is bounded at the short time its full bound
// projects from, and at bound_factor x the fastest short run so far: with a start-up of its own that both kinds of
// run pay (full = ratio x (short - startup) + startup, ratio >= 1, startup >= 0), a short run that many times slower
// than another projects to a full run at least that many times slower than the other's projection.
void plan_work(tune_assessment& a, const std::vector<detail::short_evidence>& shorts, const std::vector<int>& flying,
               const tune_options& opt) {
    const std::size_t c = a.next;
    const config_belief& belief = a.configs[c];
    if (!(opt.short_work > 0) || !a.carryover.ranks || belief.runs > 0 || flying[c] > 0 || shorts[c].runs() > 0)
        return;
    a.next_work = opt.short_work;
    a.next_bound_s = detail::short_bound(a.carryover, a.next_bound_s);
    double fastest = 0;
    for (const auto& s : shorts)
        for (double v : s.logs) fastest = fastest > 0 ? std::min(fastest, std::exp(v)) : std::exp(v);
    if (fastest > 0) {
        const double by_screen = opt.bound_factor * fastest;
        a.next_bound_s = a.next_bound_s > 0 ? std::min(a.next_bound_s, by_screen) : by_screen;
    }
    a.why_next = "screen with a short run: " + a.why_next;
}

// The RMS of the posterior's leave-one-out residuals at the configurations with finished runs, and the mean of
// their squares over the variances the posterior gives them.
struct loo_fit {
    double rms = 0, calibration = 0;
};
loo_fit loo_error(const detail::discrepancy_posterior& gp, const detail::run_evidence& evidence) {
    const detail::discrepancy_posterior::leave_one_out out = gp.loo();
    const std::vector<double>& residuals = out.residual;
    const std::vector<double>& variances = out.variance;
    const auto& observed = gp.observed_configs();
    double sum_squares = 0, sum_z2 = 0;
    int count = 0;
    for (std::size_t i = 0; i < observed.size(); ++i) {
        if (evidence[observed[i]].logs.empty()) continue;  // only ever stopped: its observation is a bound
        sum_squares += residuals[i] * residuals[i];
        sum_z2 += residuals[i] * residuals[i] / variances[i];
        ++count;
    }
    if (count == 0) return {};
    return {std::sqrt(sum_squares / count), sum_z2 / count};
}

// Whether the posterior has earned trust over the lowest measured time (tune_options::fallback_trust).
bool trusted(const tune_options& opt, const loo_fit& loo, double measured_noise) {
    using trust = tune_options::trust;
    switch (opt.fallback_trust) {
        case trust::always: return true;
        case trust::never: return false;
        case trust::noise: return measured_noise > 0 && loo.rms <= measured_noise;
        case trust::calibrated: return measured_noise > 0 && loo.calibration <= 1;
    }
    return false;
}

}  // namespace

tune_assessment tuner::assess(const std::vector<std::size_t>& in_flight) const {
    const std::size_t n_configs = space_.size();
    const std::vector<int> flying = runs_in_flight(in_flight, n_configs);
    tune_assessment a;
    a.configs.resize(n_configs);
    a.runs = static_cast<int>(order_.size());
    a.in_flight = static_cast<int>(in_flight.size());
    a.machine_s = machine_seconds(runs_in_order(), space_);

    // 1. Noise: what the runs of each configuration say, and how much runs of one configuration differ.
    detail::run_evidence evidence = detail::gather_evidence(measured_, n_configs);
    const detail::noise_estimate noise =
        detail::estimate_noise(evidence, {opt_.noise, opt_.noise_dof, opt_.few_runs_noisiest});
    a.noise = std::sqrt(noise.pooled_var);

    // 1b. Carry-over: short runs' times projected to full ones (with short runs only: without, `shorts` stays
    // empty, nothing is allocated per configuration of a space that may hold millions).
    std::vector<detail::short_evidence> shorts;
    if (opt_.short_work > 0) {
        shorts = detail::gather_short(measured_, n_configs);
        a.carryover = detail::fit_carryover(shorts, evidence, opt_.short_work);
        detail::add_short_evidence(evidence, shorts, a.carryover);
    }

    // 2. Prior fit: the model with the application's parameters fitted to the runs, pulled towards the profile.
    detail::prior_fit prior = detail::fit_prior(s_, space_, opt_, evidence, coef_);
    a.model_used = prior.model_used;
    a.params = std::move(prior.params);

    // 3. Discrepancy: what the model misses, a Gaussian process over the configurations, with and without
    // the runs in flight.
    const detail::observations obs = detail::observe(evidence, noise);
    detail::discrepancy_posterior gp(
        detail::fit_discrepancy(space_, opt_, evidence, obs, std::move(prior.log_time), prior.model_used), obs);
    a.model_error = std::sqrt(gp.kernel().discrepancy_var);
    detail::fantasy_posterior fantasy(gp.kernel(), obs, noise, in_flight);

    // 4. Policy: the chosen configuration from the posterior means; every configuration's posterior against it;
    // then P(beaten), the stop and the next run.
    const detail::choice ch = detail::choose([&gp](std::size_t c) { return gp.mean(c); }, evidence, space_, opt_,
                                             in_flight);
    detail::log_beliefs beliefs = detail::believe(gp, fantasy, ch);
    beliefs.run_var = noise.config_var;
    beliefs.pooled_run_var = noise.pooled_var;
    beliefs.explore_cost = explore_cost_;
    beliefs.first_time = first_time_;
    if (opt_.short_work > 0)
        for (std::size_t c = 0; c < n_configs; ++c) beliefs.screened.push_back(!shorts[c].logs.empty() || shorts[c].censored > 0);
    describe_configs(a.configs, evidence, prior.model_s, beliefs);
    detail::decide(a, ch, beliefs, evidence, flying, space_, opt_);
    if (!shorts.empty()) {
        if (a.has_next) plan_work(a, shorts, flying, opt_);
        describe_short_runs(a.configs, evidence, shorts);
    }

    // Stopped unsure by a budget: the choice is the lowest measured time (exhaustive trial's rule on the same
    // evidence) unless the posterior predicts the measured configurations, each left out, within the noise
    // that repetitions measured.
    if (!detail::stopped_unsure(a, opt_)) return a;
    const loo_fit loo = loo_error(gp, evidence);
    a.loo_error = loo.rms;
    a.measured_noise = detail::measured_noise(evidence);
    if (trusted(opt_, loo, a.measured_noise)) return a;
    a.chosen_by = choice_basis::measurements;
    const detail::choice by_runs = detail::choose(
        [&evidence](std::size_t c) {
            return evidence[c].logs.empty() ? std::numeric_limits<double>::infinity() : evidence[c].center;
        },
        evidence, space_, opt_, {});
    if (by_runs.has_chosen && by_runs.chosen != a.chosen) {
        detail::log_beliefs against = detail::believe(gp, fantasy, by_runs);
        against.run_var = noise.config_var;
        detail::rate_choice(a, by_runs, against, opt_);
    }
    return a;
}

}  // namespace mmgp
