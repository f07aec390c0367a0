#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace mmgp::calib {

double quantile(std::vector<double> v, double q) {
    if (v.empty()) throw std::invalid_argument("quantile of an empty sample");
    std::sort(v.begin(), v.end());
    double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
    auto lo = static_cast<std::size_t>(std::floor(pos));
    std::size_t hi = std::min(lo + 1, v.size() - 1);
    double f = pos - static_cast<double>(lo);
    return v[lo] + f * (v[hi] - v[lo]);
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

double mad(const std::vector<double>& v) {
    double m = median(v);
    std::vector<double> d(v.size());
    std::transform(v.begin(), v.end(), d.begin(), [m](double x) { return std::fabs(x - m); });
    return median(std::move(d));
}

summary summarize(const std::vector<double>& v) {
    if (v.empty()) throw std::invalid_argument("summary of an empty sample");
    summary s;
    s.n = v.size();
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    s.median = quantile(sorted, 0.5);
    s.mad = mad(sorted);
    s.min = sorted.front();
    s.max = sorted.back();
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(s.n);
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stddev = s.n > 1 ? std::sqrt(ss / static_cast<double>(s.n - 1)) : 0.0;
    s.cv = s.mean != 0 ? s.stddev / std::fabs(s.mean) : 0.0;
    // Order-statistic CI of the median: ranks n/2 -+ 1.96 sqrt(n)/2 (normal approximation of the binomial).
    double n = static_cast<double>(s.n);
    double half = 1.96 * std::sqrt(n) / 2.0;
    auto rank = [&](double r) {
        auto i = static_cast<long>(std::llround(r));
        return sorted[static_cast<std::size_t>(std::clamp(i, 0L, static_cast<long>(s.n) - 1))];
    };
    s.ci95_lo = rank(std::floor(n / 2.0 - half));
    s.ci95_hi = rank(std::ceil(n / 2.0 + half) - 1.0);
    if (s.n < 6) {  // too few points for a 95 % interval: report the range
        s.ci95_lo = s.min;
        s.ci95_hi = s.max;
    }
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
