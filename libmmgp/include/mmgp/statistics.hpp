// mmgp/statistics.hpp — the statistics MMGP takes of repeated measurements, in one place: the median, the
// median absolute deviation and its factor to a standard deviation, linear quantiles, the mean, the sample
// standard deviation, order-statistic intervals of the median and Student's t quantiles. Pure functions, no
// I/O; called by the library (validate, fit, tune, uncertainty), the calibration harnesses, the profile kernels
// and the examples; they call nothing of MMGP's.
//
//   double m = mmgp::median({3.1, 2.9, 3.0});                      // 3.0
//   double sd = mmgp::mad_to_sd * mmgp::median_abs_deviation(xs);  // a standard deviation robust to outliers
//   auto [lo, hi] = mmgp::median_ci90(xs);                         // {NaN, NaN} below 5 values
#pragma once

#include "mmgp/export.hpp"

#include <utility>
#include <vector>

MMGP_API_BEGIN
namespace mmgp {

/// How the median of an even count is taken from its two middle values a <= b. The two differ in the last
/// bit for some pairs, so each caller keeps the rule its numbers were produced with.
enum class even_median {
    midpoint,      ///< (a + b) / 2: the library, the profile kernels, the examples
    interpolated,  ///< quantile(v, 0.5), i.e. a + 0.5 * (b - a): the calibration harnesses
};

/// The median of v (sorted, the middle value; an even count by `rule`). Throws std::invalid_argument when
/// v is empty.
double median(std::vector<double> v, even_median rule = even_median::midpoint);

/// The median of |x - median(v)| over v, both medians by `rule`: unscaled (mad_to_sd turns it into a
/// standard deviation). Throws std::invalid_argument when v is empty.
double median_abs_deviation(const std::vector<double>& v, even_median rule = even_median::midpoint);

/// The median absolute deviation of a normal distribution times this is its standard deviation
/// (1 / Phi^-1(3/4) = 1.482602..., as the literature rounds it).
inline constexpr double mad_to_sd = 1.4826;

/// The variance of one value of v, robust from three values on: (mad_to_sd x the median absolute deviation)^2;
/// the sample variance of two values (their squared deviations from their mean, summed in order); 0 below two.
/// The run-to-run noise of repetitions (measurement::log_variance, the tuner's noise stage).
double repetition_variance(const std::vector<double>& v);

/// The q-quantile of v linearly interpolated between order statistics: position q (n - 1) in the sorted
/// values, q clamped to [0, 1] (the default of R and NumPy). Throws std::invalid_argument when v is empty.
double quantile(std::vector<double> v, double q);

/// The arithmetic mean, summed in the order of v. Throws std::invalid_argument when v is empty.
double mean(const std::vector<double>& v);

/// The sample standard deviation (divisor n - 1) about mean(v); 0 with one value. Throws
/// std::invalid_argument when v is empty.
double sample_stddev(const std::vector<double>& v);

/// sample_stddev(v) / |mean(v)|, 0 when the mean is 0. Throws std::invalid_argument when v is empty.
double coefficient_of_variation(const std::vector<double>& v);

/// The 90 % order-statistic interval of the median of xs: {lo, hi}, or {NaN, NaN} with fewer than 5 values
/// (the smallest n whose extreme order statistics cover the median with probability >= 90 %). Exact binomial
/// ranks: [x_(k), x_(n+1-k)] with k the largest rank such that P(Binomial(n, 1/2) < k) <= 5 %.
std::pair<double, double> median_ci90(std::vector<double> xs);

/// An approximate 95 % order-statistic interval of the median of xs: the ranks n/2 -+ 1.96 sqrt(n) / 2 (the
/// normal approximation of the binomial), or {min, max} below 6 values. Throws std::invalid_argument when xs
/// is empty.
std::pair<double, double> median_ci95_approx(std::vector<double> xs);

/// The 97.5 % quantile of Student's t with `dof` degrees of freedom (the half-width factor of a two-sided
/// 95 % interval): standard tables for 1..30, linear between 30, 40, 60 and 120, 1.960 beyond; infinity
/// for dof < 1.
double t_quantile_975(int dof) noexcept;

/// The 95 % quantile of Student's t with `dof` degrees of freedom (the one-sided 95 % factor): standard tables
/// for 1..30, linear between 30, 40, 60 and 120, 1.645 beyond; infinity for dof < 1.
double t_quantile_95(int dof) noexcept;

}  // namespace mmgp
MMGP_API_END
