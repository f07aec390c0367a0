// Summaries and line fits for the calibration harnesses (stats.hpp); the order statistics come from
// mmgp/statistics.hpp.
#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

namespace mmgp::calib {

summary summarize(const std::vector<double>& v) {
    if (v.empty()) throw std::invalid_argument("summary of an empty sample");
    summary s;
    s.n = v.size();
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    s.median = median(sorted);
    s.mad = mad(sorted);
    s.min = sorted.front();
    s.max = sorted.back();
    s.mean = mean(v);  // summed in the measurements' order
    s.stddev = sample_stddev(v);
    s.cv = coefficient_of_variation(v);
    std::tie(s.ci95_lo, s.ci95_hi) = median_ci95_approx(sorted);
    return s;
}

line_fit fit_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w) {
    if (x.size() != y.size() || x.size() != w.size()) throw std::invalid_argument("fit_line: sizes differ");
    if (x.size() < 2) throw std::invalid_argument("fit_line: fewer than 2 points");
    double sw = 0, sx = 0, sy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sw += w[i];
        sx += w[i] * x[i];
        sy += w[i] * y[i];
    }
    if (sw <= 0) throw std::invalid_argument("fit_line: weights sum to 0");
    double mx = sx / sw, my = sy / sw, sxx = 0, sxy = 0, syy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxx += w[i] * (x[i] - mx) * (x[i] - mx);
        sxy += w[i] * (x[i] - mx) * (y[i] - my);
        syy += w[i] * (y[i] - my) * (y[i] - my);
    }
    if (sxx <= 0) throw std::invalid_argument("fit_line: all x are equal");
    line_fit f;
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
    double sse = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        double r = y[i] - (f.intercept + f.slope * x[i]);
        sse += w[i] * r * r;
    }
    f.r2 = syy > 0 ? 1.0 - sse / syy : 1.0;
    if (x.size() > 2) {
        double s2 = sse / static_cast<double>(x.size() - 2);
        f.se_slope = std::sqrt(s2 / sxx);
        f.se_intercept = std::sqrt(s2 * (1.0 / sw + mx * mx / sxx));
    }
    return f;
}

line_fit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
    return fit_line(x, y, std::vector<double>(x.size(), 1.0));
}

link_fit fit_latency_bandwidth(const std::vector<double>& bytes, const std::vector<double>& seconds) {
    std::vector<double> w(seconds.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
        if (!(seconds[i] > 0)) throw std::invalid_argument("fit_latency_bandwidth: a time <= 0");
        w[i] = 1.0 / (seconds[i] * seconds[i]);
    }
    line_fit f = fit_line(bytes, seconds, w);
    link_fit out;
    out.r2 = f.r2;
    if (f.slope <= 0) throw std::invalid_argument("fit_latency_bandwidth: time does not grow with size");
    out.latency_s = std::max(0.0, f.intercept);
    if (f.intercept < 0) {  // refit the slope through the origin
        double num = 0, den = 0;
        for (std::size_t i = 0; i < w.size(); ++i) {
            num += w[i] * bytes[i] * seconds[i];
            den += w[i] * bytes[i] * bytes[i];
        }
        f.slope = num / den;
    }
    out.bandwidth_Bps = 1.0 / f.slope;
    return out;
}

}  // namespace mmgp::calib
