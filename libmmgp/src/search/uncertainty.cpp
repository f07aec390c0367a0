// Propagating the profiles' spreads to the ranking (docs/MODEL.md "Uncertainty"): the keys varied are those the
// profiles' key tables (mmgp/profile_keys.hpp) mark log_normal. Calls the evaluator.
#include "mmgp/uncertainty.hpp"
#include "mmgp/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <span>
#include <string>

#include "base/format.hpp"
#include "mmgp/error.hpp"

namespace mmgp {

namespace {

constexpr double max_relative_spread = 10;  // the largest spread propagated, a multiple of the value (sd)

struct varied {
    double* target;
    double value, sigma_rel;
};

// The member a spread of `key` varies: a number its profile's key table marks log_normal; null for another key.
template <class Key, class Profile>
double* varied_member(std::span<const Key> keys, Profile& profile, const std::string& key) {
    for (const Key& k : keys)
        if (k.name == key && k.spread == key_sampling::log_normal)
            if (const auto* member = std::get_if<double Profile::*>(&k.member)) return &(profile.*(*member));
    return nullptr;
}

// on[i] += 1 for each candidate that no other beats in both time and node-hours at times t (one per candidate).
void count_on_front(const std::vector<configuration>& cs, const std::vector<double>& t, std::vector<int>& on) {
    for (std::size_t i = 0; i < cs.size(); ++i) {
        const double ci = t[i] * cs[i].nodes;
        bool beaten = false;
        for (std::size_t j = 0; j < cs.size() && !beaten; ++j) {
            const double cj = t[j] * cs[j].nodes;
            beaten = j != i && t[j] <= t[i] && cj <= ci && (t[j] < t[i] || cj < ci);
        }
        on[i] += !beaten;
    }
}

double percentile(std::vector<double>& xs, double q) {  // nearest rank on a sorted copy
    std::sort(xs.begin(), xs.end());
    const auto i = static_cast<std::size_t>(std::lround(q * static_cast<double>(xs.size() - 1)));
    return xs[std::min(i, xs.size() - 1)];
}

}  // namespace

namespace {

// The parameters of `work` (a copy of s) that carry a spread, each as the member it varies; those without a scalar
// to vary are listed in out.not_varied, those whose value is 0 in out.at_zero, the varied ones described in
// out.parameters. Throws input_error for a spread too large to propagate.
std::vector<varied> varied_parameters(const scenario& s, scenario& work, uncertainty_report& out) {
    std::vector<varied> vs;
    auto collect = [&](const std::vector<parameter_spread>& spreads, const char* section, auto&& scalar) {
        for (const auto& sp : spreads) {
            double* target = scalar(sp.key);
            const std::string name = std::string(section) + "." + sp.key;
            if (!target) {
                out.not_varied.push_back(name);
                continue;
            }
            if (!(*target > 0)) {
                out.at_zero.push_back(name);
                continue;
            }
            const double sd = sp.mad ? mad_to_sd * sp.spread : sp.spread;
            // Beyond ten times the value the parameter is unknown rather than uncertain: its samples would
            // reach e^(10 z) times the value and the intervals infinity.
            if (!(sd <= max_relative_spread * *target))
                throw input_error(s.file, "/" + std::string(section) + "/" + sp.key,
                                  "a spread of at most " + std::to_string(static_cast<int>(max_relative_spread)) +
                                      " times the value to propagate (--uncertainty)",
                                  detail::format_double(sp.spread) + (sp.mad ? " (a MAD: sd " + detail::format_double(sd) + ")" : "") +
                                      " against the value " + detail::format_double(*target));
            vs.push_back({target, *target, sd / *target});
            char text[96];
            std::snprintf(text, sizeof text, ": %.3g %% (%s %.3g)", 100 * sd / *target, sp.mad ? "MAD" : "standard error",
                          sp.spread);
            out.parameters.push_back(name + text);
        }
    };
    collect(s.plat.provenance.spreads, "platform", [&](const std::string& k) { return varied_member(platform_keys(), work.plat, k); });
    collect(s.app.spreads, "application", [&](const std::string& k) { return varied_member(application_keys(), work.app, k); });
    return vs;
}

}  // namespace

void check_spreads(const scenario& s) {
    scenario work = s;
    uncertainty_report ignored;
    (void)varied_parameters(s, work, ignored);
}

uncertainty_report propagate_spreads(const scenario& s, model_kind kind, const std::vector<configuration>& candidates,
                                     const configuration& best, int samples, double confidence, std::uint64_t seed) {
    uncertainty_report out;
    scenario work = s;
    const std::vector<varied> vs = varied_parameters(s, work, out);

    const evaluator nominal(s, kind);
    const double best_nominal = nominal(best).time_s;
    std::vector<std::vector<double>> times(candidates.size());
    std::vector<int> not_slower(candidates.size(), 0), on_front(candidates.size(), 0);
    std::vector<double> nominal_t(candidates.size()), sample_t(candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i) nominal_t[i] = nominal(candidates[i]).time_s;
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> z(0.0, 1.0);
    out.samples = vs.empty() ? 0 : samples;
    for (int k = 0; k < out.samples; ++k) {
        for (const auto& v : vs) *v.target = v.value * std::exp(v.sigma_rel * z(rng));
        const evaluator ev(work, kind);
        const double t_best = ev(best).time_s;
        for (std::size_t i = 0; i < candidates.size(); ++i) {
            const double t = ev(candidates[i]).time_s;
            times[i].push_back(t);
            sample_t[i] = t;
            not_slower[i] += t <= t_best;
        }
        count_on_front(candidates, sample_t, on_front);
    }
    if (out.samples == 0) count_on_front(candidates, nominal_t, on_front);  // on the nominal front or not
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        interval_prediction x;
        x.c = candidates[i];
        x.time_s = nominal_t[i];
        if (out.samples > 0) {
            x.lo = percentile(times[i], 0.05);
            x.hi = percentile(times[i], 0.95);
            x.p_not_slower = static_cast<double>(not_slower[i]) / out.samples;
            x.p_on_front = static_cast<double>(on_front[i]) / out.samples;
        } else {  // nothing to vary: the point, and ties with the best only
            x.lo = x.hi = x.time_s;
            x.p_not_slower = x.time_s <= best_nominal ? 1.0 : 0.0;
            x.p_on_front = on_front[i];
        }
        if (x.c == best || x.p_not_slower >= 1.0 - confidence) out.indistinguishable.push_back(x.c);
        out.configs.push_back(x);
    }
    return out;
}

}  // namespace mmgp
