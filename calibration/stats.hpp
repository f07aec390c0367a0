// Statistics and fitting for the calibration harnesses: the summary of a sample and line fits. Pure functions,
// no I/O; the medians, MAD, quantiles and intervals come from mmgp/statistics.hpp.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "mmgp/statistics.hpp"

namespace mmgp::calib {

/// Robust summary of a sample (seconds, or any unit).
struct summary {
    std::size_t n = 0;
    double median = 0, mad = 0;   ///< median and median absolute deviation (unscaled)
    double mean = 0, stddev = 0;  ///< sample mean and standard deviation (n-1)
    double cv = 0;                ///< stddev / mean (0 when mean is 0)
    double min = 0, max = 0;
    double ci95_lo = 0, ci95_hi = 0;  ///< distribution-free 95 % confidence interval of the median
};

/// The calibration's median: the linear-interpolated quantile at 1/2 (even_median::interpolated, the rule its
/// recorded measurements were taken with). Throws std::invalid_argument when v is empty.
inline double median(std::vector<double> v) { return mmgp::median(std::move(v), even_median::interpolated); }
/// Median absolute deviation from the median, both medians as median() takes them (not scaled by mad_to_sd).
inline double mad(const std::vector<double>& v) { return median_abs_deviation(v, even_median::interpolated); }
/// Linear-interpolated quantile, q in [0, 1].
using mmgp::quantile;
summary summarize(const std::vector<double>& v);

/// y = intercept + slope * x, by (optionally weighted) least squares.
struct line_fit {
    double intercept = 0, slope = 0;
    double r2 = 0;                         ///< coefficient of determination (weighted when weights are given)
    double se_intercept = 0, se_slope = 0; ///< standard errors (0 with fewer than 3 points)
};
/// Ordinary least squares; throws std::invalid_argument with fewer than 2 points or all x equal.
line_fit fit_line(const std::vector<double>& x, const std::vector<double>& y);
/// Weighted least squares with weights w (>= 0).
line_fit fit_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w);

/// Latency-bandwidth fit t(bytes) = latency + bytes / bandwidth, weighted by 1/t^2 (relative errors), so that
/// small messages fix the latency and large ones the bandwidth. latency is clamped at 0.
struct link_fit {
    double latency_s = 0, bandwidth_Bps = 0, r2 = 0;
};
link_fit fit_latency_bandwidth(const std::vector<double>& bytes, const std::vector<double>& seconds);

}  // namespace mmgp::calib
