// Stage 1b of the tuner (tuner::assess, tune/tune.cpp), with short runs only (tune_options::short_work): how the
// time of a short run carries over to a full one. A run of a configuration pays a start-up cost and then its
// work, so full = ratio x (short - startup) + startup, with one ratio and one start-up for the space, fitted on
// the configurations run both ways (least squares on relative errors, the ratio pulled towards 1 / short_work).
// A configuration screened by short runs alone is then observed at its projected time, its variance the
// carry-over's error and the fitted line's own uncertainty at its short time; it is never chosen before full runs
// of its own. Reads the noise stage's evidence; the
// later stages see the projections through observe() (tune/discrepancy.cpp).
#include <algorithm>
#include <cmath>

#include "tune/stages.hpp"

namespace mmgp::detail {

namespace {

constexpr double prior_error = 0.15;     // sd of a projection's log error before any pair
constexpr double prior_error_dof = 1;    // what that prior is worth, in pairs
constexpr double ratio_prior_rel = 0.5;  // prior sd of the ratio, relative to 1 / short_work

struct pair_times {
    double short_s, full_s;
};

std::vector<pair_times> pairs_of(const std::vector<short_evidence>& shorts, const run_evidence& evidence) {
    std::vector<pair_times> pairs;
    for (std::size_t c : evidence.measured)
        if (!shorts[c].logs.empty()) pairs.push_back({std::exp(shorts[c].log_mean()), std::exp(evidence[c].center)});
    return pairs;
}

// The pairs' rows of full = alpha + beta x short on the relative scale, x = (1 / full, short / full) against 1:
// their normal matrix (a11 a12; a12 a22) and right-hand side (b1, b2), without the ratio's prior.
struct normal_sums {
    double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
};
normal_sums sums_of(const std::vector<pair_times>& pairs) {
    normal_sums s;
    for (const auto& p : pairs) {
        const double x1 = 1 / p.full_s, x2 = p.short_s / p.full_s;
        s.a11 += x1 * x1, s.a12 += x1 * x2, s.a22 += x2 * x2, s.b1 += x1, s.b2 += x2;
    }
    return s;
}

// full = alpha + beta x short: minimises the pairs' squared relative errors, each in units of the prior error of a
// projection, plus ((beta - beta0) / (0.5 beta0))^2.
// Returns false when the system is singular or the ratio comes out not positive.
bool fit_line(const std::vector<pair_times>& pairs, double beta0, double& alpha, double& beta) {
    auto [a11, a12, a22, b1, b2] = sums_of(pairs);
    const double w = prior_error / (ratio_prior_rel * beta0);  // the prior's row in units of a projection's error
    a22 += w * w, b2 += w * w * beta0;
    const double det = a11 * a22 - a12 * a12;
    if (!(std::abs(det) > 1e-300)) return false;
    alpha = (b1 * a22 - b2 * a12) / det;
    beta = (a11 * b2 - a12 * b1) / det;
    return beta > 0;
}

// The ratio with the start-up held at `startup`: the same least squares in one unknown, at least 1.
double ratio_given_startup(const std::vector<pair_times>& pairs, double beta0, double startup) {
    const double w = prior_error / (ratio_prior_rel * beta0);
    double num = w * w * beta0, den = w * w;
    for (const auto& p : pairs) {
        const double x = (p.short_s - startup) / p.full_s, y = (p.full_s - startup) / p.full_s;
        num += x * y, den += x * x;
    }
    return std::max(1.0, num / den);
}

// A projection is never below the short time itself: a full run does all of a short run's work and more.
double projected(const tune_carryover& carry, double short_s) { return std::max(carry.project(short_s), short_s); }

}  // namespace

std::vector<short_evidence> gather_short(const std::map<std::size_t, measurement>& measured, std::size_t n_configs) {
    std::vector<short_evidence> shorts(n_configs);
    for (const auto& [c, m] : measured)
        for (const measurement::run& r : m.runs) {
            if (!(r.work < 1)) continue;
            auto& s = shorts[c];
            if (r.finished()) s.logs.push_back(std::log(r.time_s));
            else if (r.is_censored()) ++s.censored, s.censored_at = std::max(s.censored_at, r.time_s);
        }
    return shorts;
}

tune_carryover fit_carryover(const std::vector<short_evidence>& shorts, const run_evidence& evidence,
                             double short_work) {
    tune_carryover carry;
    const double beta0 = 1 / short_work;
    carry.ratio = beta0;
    const std::vector<pair_times> pairs = pairs_of(shorts, evidence);
    carry.pairs = static_cast<int>(pairs.size());
    double alpha = 0, beta = beta0;
    if (pairs.size() == 1) alpha = pairs[0].full_s - beta0 * pairs[0].short_s;
    if (pairs.size() >= 2 && !fit_line(pairs, beta0, alpha, beta)) alpha = 0, beta = beta0;
    // alpha = (1 - ratio) x startup; a ratio of 1 leaves the start-up unknown (and without effect).
    double startup = std::abs(1 - beta) > 1e-9 ? alpha / (1 - beta) : 0.0;
    // A full run does a short run's work and more at the same pace (ratio >= 1), after a start-up both pay that
    // no short run is shorter than (0 <= startup <= the shortest short run): outside, the start-up is held at the
    // nearest such value and the ratio fitted again.
    double shortest = pairs.empty() ? 0.0 : pairs[0].short_s;
    for (const auto& p : pairs) shortest = std::min(shortest, p.short_s);
    if (!pairs.empty() && (beta < 1 || startup < 0 || startup > shortest)) {
        startup = std::clamp(startup, 0.0, shortest);
        beta = ratio_given_startup(pairs, beta0, startup);
    }
    carry.ratio = beta;
    carry.startup_s = startup;
    double ss = prior_error_dof * prior_error * prior_error, fit_ss = 0;
    for (const auto& p : pairs) {
        const double r = std::log(p.full_s / projected(carry, p.short_s));
        fit_ss += r * r;
    }
    const double dof = std::max(static_cast<double>(pairs.size()) - 1, 0.0);
    carry.error = std::sqrt((ss + fit_ss) / (prior_error_dof + dof));
    carry.fit_error = dof > 0 ? std::sqrt(fit_ss / dof) : 0.0;
    // The line's covariance: the inverse of the pairs' normal matrix at the fitted error, with the ratio's prior.
    if (!pairs.empty()) {
        const double e2 = carry.error * carry.error, prior_sd = ratio_prior_rel * beta0;
        const normal_sums s = sums_of(pairs);
        const double a11 = s.a11 / e2, a12 = s.a12 / e2, a22 = s.a22 / e2 + 1 / (prior_sd * prior_sd);
        const double det = a11 * a22 - a12 * a12;
        if (det > 0) carry.cov_aa = a22 / det, carry.cov_ab = -a12 / det, carry.cov_bb = a11 / det;
    }
    return carry;
}

namespace {

// The variance of a projection's log: the carry-over's error (how far one configuration strays from the line),
// and the line's own uncertainty at that short time, relative to the projected time (wide far from the pairs,
// or everywhere but at them when the pairs lie close together).
double projection_var(const tune_carryover& carry, double short_s) {
    const double full = projected(carry, short_s);
    return carry.error * carry.error +
           (carry.cov_aa + 2 * short_s * carry.cov_ab + short_s * short_s * carry.cov_bb) / (full * full);
}

}  // namespace

void add_short_evidence(run_evidence& evidence, const std::vector<short_evidence>& shorts, tune_carryover& carry) {
    // The projected log time of every configuration with finished short runs (0: none), and their spread over the
    // configurations neither stopped nor failed in full.
    std::vector<double> projection(shorts.size(), 0.0);
    measured_configuration screened;
    for (std::size_t c = 0; c < shorts.size(); ++c) {
        if (shorts[c].logs.empty()) continue;
        projection[c] = std::log(projected(carry, std::exp(shorts[c].log_mean())));
        if (evidence[c].censored == 0 && evidence[c].failed == 0) screened.logs.push_back(projection[c]);
    }
    double ss = 0;
    screened.add_squared_deviations(screened.log_mean(), ss);
    const std::size_t n = screened.logs.size();
    carry.spread = n >= 2 ? std::sqrt(ss / static_cast<double>(n - 1)) : 0.0;
    carry.ranks = !(carry.pairs >= 2 && carry.fit_error > 0.5 * carry.spread);
    for (std::size_t c = 0; c < shorts.size(); ++c) {
        const short_evidence& s = shorts[c];
        auto& e = evidence.per_config[c];
        if (s.censored > 0 && carry.ranks) {  // dropped with the projections when short runs do not rank
            if (e.censored == 0) e.stopped_short_only = true;
            ++e.censored;
            e.censored_at = std::max(e.censored_at, projected(carry, s.censored_at));
        }
        if (!carry.ranks || s.logs.empty() || !e.logs.empty() || e.excluded()) continue;
        e.projected = true;
        e.projected_log = projection[c];
        e.projected_var = projection_var(carry, std::exp(shorts[c].log_mean()));
    }
}

double short_bound(const tune_carryover& carry, double full_bound) {
    if (full_bound <= 0 || carry.pairs == 0) return full_bound;
    const double at = (full_bound - carry.startup_s) / carry.ratio + carry.startup_s;
    if (!(at > 0)) return full_bound;
    return std::min(full_bound, at * std::exp(z90 * carry.error));
}

}  // namespace mmgp::detail
