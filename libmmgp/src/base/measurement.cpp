// One configuration as measured (mmgp/measurement.hpp): its finished runs and their statistics. Pure; called by
// the fit's structure selection (fit/structure.cpp), the tuner's noise stage (tune/noise.cpp) and validate
// (fit/validate.cpp); and its sharing rule, called by the fit (fit/fit.cpp), validate and a replayed tune
// (run/tune_replay.cpp); calls the statistics of mmgp/statistics.hpp.
#include "mmgp/measurement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/format.hpp"
#include "mmgp/statistics.hpp"

namespace mmgp {

std::string_view to_string(run_outcome o) noexcept {
    static constexpr std::pair<std::string_view, run_outcome> names[] = {
        {"ok", run_outcome::ok}, {"censored", run_outcome::censored}, {"failed", run_outcome::failed}, {"cancelled", run_outcome::cancelled}};
    return detail::name_of(o, names, "?");
}

bool assign_sharing_mode(measurement& m, const std::vector<accelerator_sharing>& modes) {
    if (!m.has_sharing) {
        if (modes.empty()) return false;
        m.c.share = modes.front();
        m.has_sharing = true;
        return true;
    }
    return std::find(modes.begin(), modes.end(), m.c.share) != modes.end();
}

std::string sharing_modes_expected(const std::vector<accelerator_sharing>& modes, std::string_view platform_name) {
    std::string names;
    for (accelerator_sharing a : modes) names += (names.empty() ? "" : ", ") + std::string(to_string(a));
    const std::string whose = platform_name.empty() ? "the platform's" : "platform " + std::string(platform_name) + "'s";
    return "one of " + whose + " sharing modes (" + names + ")";
}

std::vector<double> measurement::finished_times() const {
    std::vector<double> times;
    for (const run& r : runs)
        if (r.finished() && r.work >= 1) times.push_back(r.time_s);
    return times;
}

double measurement::median_s() const {
    std::vector<double> times = finished_times();
    return times.empty() ? std::numeric_limits<double>::quiet_NaN() : median(std::move(times));
}

std::pair<double, double> measurement::median_ci90() const { return mmgp::median_ci90(finished_times()); }

double measurement::log_variance() const {
    std::vector<double> logs;
    for (double t : finished_times()) logs.push_back(std::log(t));
    return repetition_variance(logs);
}

std::vector<std::pair<const measurement*, const measurement::run*>> runs_in_order(const std::vector<measurement>& ms) {
    std::vector<std::pair<const measurement*, const measurement::run*>> out;
    for (const measurement& m : ms)
        for (const measurement::run& r : m.runs) out.emplace_back(&m, &r);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second->order < b.second->order; });
    return out;
}

}  // namespace mmgp
