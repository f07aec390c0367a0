// Internal: the tuner's log-scale view of one configuration's runs (its measurement, mmgp/measurement.hpp): the
// logs of its finished runs' times, and the runs stopped at a bound or failed. The tuner's noise stage
// (tune/noise.cpp, config_evidence) and carry-over (tune/carryover.cpp, short_evidence) build one per
// configuration from the tuner's measurements; the median and MAD of the logs are mmgp/statistics.hpp's, the mean
// and the squared deviations here.
#pragma once

#include <cstddef>
#include <vector>

namespace mmgp::detail {

struct measured_configuration {
    std::vector<double> logs;  // log of the finished runs' times, in the order they were measured
    int censored = 0, failed = 0;
    double censored_at = 0;    // the longest bound it was stopped at

    /// The mean of `logs`: their sum in order, divided by their count (0 without runs).
    double log_mean() const noexcept {
        double mean = 0;
        for (double v : logs) mean += v;
        return logs.empty() ? 0.0 : mean / static_cast<double>(logs.size());
    }
    /// Adds each run's squared deviation from `mean` to `ss`, one run at a time (a sum pooled over several
    /// configurations adds them in the same order).
    void add_squared_deviations(double mean, double& ss) const noexcept {
        for (double v : logs) ss += (v - mean) * (v - mean);
    }
};

}  // namespace mmgp::detail
