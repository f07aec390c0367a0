// The statistics of repeated measurements (mmgp/statistics.hpp). Pure; called from the library, the
// calibration harnesses and the profile kernels, calls nothing of MMGP's. Every rule here is the one its
// callers computed before they shared it, to the bit: the order of the sums, (a + b) / 2 against
// a + 0.5 * (b - a), the ranks of the intervals.
#include "mmgp/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace mmgp {

namespace {

void require_values(const std::vector<double>& v, const char* what) {
    if (v.empty()) throw std::invalid_argument(std::string(what) + " of an empty sample");
}

}  // namespace

double repetition_variance(const std::vector<double>& v) {
    const std::size_t n = v.size();
    if (n < 2) return 0;
    if (n == 2) {
        const double mean = (v[0] + v[1]) / 2;
        return (v[0] - mean) * (v[0] - mean) + (v[1] - mean) * (v[1] - mean);
    }
    const double center = median(v);
    std::vector<double> deviations;
    deviations.reserve(n);
    for (double x : v) deviations.push_back(std::abs(x - center));
    const double sd = mad_to_sd * median(std::move(deviations));
    return sd * sd;
}

double quantile(std::vector<double> v, double q) {
    require_values(v, "quantile");
    std::sort(v.begin(), v.end());
    double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
    auto lo = static_cast<std::size_t>(std::floor(pos));
    std::size_t hi = std::min(lo + 1, v.size() - 1);
    double f = pos - static_cast<double>(lo);
    return v[lo] + f * (v[hi] - v[lo]);
}

double median(std::vector<double> v, even_median rule) {
    if (rule == even_median::interpolated) return quantile(std::move(v), 0.5);
    require_values(v, "median");
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    // (a + b) / 2 and 0.5 * (a + b) are one number: both round the exact half of the rounded sum.
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double median_abs_deviation(const std::vector<double>& v, even_median rule) {
    const double m = median(v, rule);
    std::vector<double> d(v.size());
    std::transform(v.begin(), v.end(), d.begin(), [m](double x) { return std::fabs(x - m); });
    return median(std::move(d), rule);
}

double mean(const std::vector<double>& v) {
    require_values(v, "mean");
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double sample_stddev(const std::vector<double>& v) {
    const double m = mean(v);
    double ss = 0;
    for (double x : v) ss += (x - m) * (x - m);
    return v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
}

double coefficient_of_variation(const std::vector<double>& v) {
    const double m = mean(v);
    return m != 0 ? sample_stddev(v) / std::fabs(m) : 0.0;
}

std::pair<double, double> median_ci90(std::vector<double> xs) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::size_t n = xs.size();
    if (n < 5) return {nan, nan};
    std::sort(xs.begin(), xs.end());
    // k: the largest rank with P(Binomial(n, 1/2) < k) <= 5 %; the interval is [x_(k), x_(n+1-k)].
    // The binomial terms are built by the ratio C(n,j+1)/C(n,j) = (n-j)/(j+1) in logs (no overflow).
    double log_term = -static_cast<double>(n) * std::log(2.0), cum = 0.0;
    std::size_t k = 0;
    for (std::size_t j = 0; j < n; ++j) {
        cum += std::exp(log_term);
        if (cum > 0.05) break;
        k = j + 1;
        log_term += std::log(static_cast<double>(n - j)) - std::log(static_cast<double>(j + 1));
    }
    if (k == 0) return {nan, nan};
    return {xs[k - 1], xs[n - k]};
}

std::pair<double, double> median_ci95_approx(std::vector<double> xs) {
    require_values(xs, "interval of the median");
    std::sort(xs.begin(), xs.end());
    const std::size_t count = xs.size();
    if (count < 6) return {xs.front(), xs.back()};  // too few values for a 95 % interval: the range
    const double n = static_cast<double>(count);
    const double half = 1.96 * std::sqrt(n) / 2.0;
    auto at_rank = [&](double r) {
        auto i = static_cast<long>(std::llround(r));
        return xs[static_cast<std::size_t>(std::clamp(i, 0L, static_cast<long>(count) - 1))];
    };
    return {at_rank(std::floor(n / 2.0 - half)), at_rank(std::ceil(n / 2.0 + half) - 1.0)};
}

namespace {

// Student t from a quantile's standard table: `table` for 1..30 degrees of freedom, then its values at 40, 60 and
// 120 with straight lines between, and the normal's quantile beyond; infinity for dof < 1.
double t_from_table(const double (&table)[34], int dof) noexcept {
    if (dof < 1) return std::numeric_limits<double>::infinity();
    if (dof <= 30) return table[dof - 1];
    if (dof <= 40) return table[29] + (table[30] - table[29]) * (dof - 30) / 10.0;
    if (dof <= 60) return table[30] + (table[31] - table[30]) * (dof - 40) / 20.0;
    if (dof <= 120) return table[31] + (table[32] - table[31]) * (dof - 60) / 60.0;
    return table[33];
}

}  // namespace

double t_quantile_975(int dof) noexcept {
    // Student t, 0.975 quantile (standard tables), dof 1..30, then 40, 60, 120, infinity.
    static constexpr double table[34] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                         2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                         2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
                                         2.021,  2.000, 1.980, 1.960};
    return t_from_table(table, dof);
}

double t_quantile_95(int dof) noexcept {
    // Student t, 0.95 quantile (standard tables), dof 1..30, then 40, 60, 120, infinity.
    static constexpr double table[34] = {6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812,
                                         1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725,
                                         1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697,
                                         1.684, 1.671, 1.658, 1.645};
    return t_from_table(table, dof);
}

}  // namespace mmgp
