// A run's total time from its progress lines (mmgp tune --progress-regex, docs/TUNE.md "Progress lines"): the rate
// after a warm-up, read at the total count (before the warm-up's end, the end at the fastest rate so far), and
// whether that is clearly past the run's bound. Pure arithmetic, called by the tune's backends (run/tune_local.cpp
// for live runs, run/tune_replay.cpp for recorded timelines) before they stop a run; the tuner sees only the
// stopped run (censored at its bound, its machine time the time it had run: measurement::run::past_bound_s).
#include <algorithm>
#include <cmath>

#include "mmgp/statistics.hpp"
#include "mmgp/tune.hpp"

namespace mmgp {

namespace {
constexpr double warm_up_fraction = 0.1;  // counts below this fraction of the total are the warm-up
constexpr double z90 = 1.6448536269514722;

// The earliest the run can end: from its last point, the rest of the count at the fastest rate so far (0: fewer
// than three points, or none to take a rate from). A point is the time of the look that read its lines, which may
// have been written up to one look earlier, so a rate is taken over at least two looks, from each point back to
// the latest one that far before it, and over that interval less one look: lines that came in a burst read as a
// fast stretch, never a slow one.
double earliest_end(const std::vector<progress_point>& points, double total) {
    if (points.size() < 3 || !(points.back().count < total)) return 0;
    double fastest = 0;
    std::size_t from = 0;
    for (std::size_t i = 1; i < points.size(); ++i) {
        while (from + 1 < i && points[i].t_s - points[from + 1].t_s >= 2 * progress_look_s) ++from;
        const double dt = points[i].t_s - points[from].t_s, dc = points[i].count - points[from].count;
        if (dt >= 2 * progress_look_s && dc > 0) fastest = std::max(fastest, dc / (dt - progress_look_s));
    }
    return fastest > 0 ? points.back().t_s + (total - points.back().count) / fastest : 0.0;
}

// The line through the points past the warm-up, read at the total.
progress_projection fit_rate(const std::vector<progress_point>& points, double total) {
    progress_projection out;
    if (points.size() < 4) return out;
    std::vector<progress_point> used;
    for (std::size_t i = 1; i < points.size(); ++i)  // the first point is the warm-up's, always
        if (points[i].count >= warm_up_fraction * total && points[i].count < total) used.push_back(points[i]);
    const auto n = static_cast<double>(used.size());
    if (used.size() < 3) return out;
    double mc = 0, mt = 0;
    for (const auto& p : used) mc += p.count, mt += p.t_s;
    mc /= n, mt /= n;
    double sxx = 0, sxy = 0;
    for (const auto& p : used) sxx += (p.count - mc) * (p.count - mc), sxy += (p.count - mc) * (p.t_s - mt);
    if (!(sxx > 0)) return out;
    const double b = sxy / sxx, a = mt - b * mc;
    double ss = 0;
    for (const auto& p : used) {
        const double r = p.t_s - (a + b * p.count);
        ss += r * r;
    }
    // A point's time is its look's, up to one look after its line was written: a lag spread evenly over one look
    // (variance look^2 / 12), which the residuals of a few points that happen to fall on a line do not show.
    const double s2 = std::max(ss / (n - 2), progress_look_s * progress_look_s / 12);
    out.total_s = a + b * total;
    out.sd_s = std::sqrt(s2 * (1 / n + (total - mc) * (total - mc) / sxx));
    out.dof = static_cast<int>(used.size()) - 2;
    out.usable = b > 0 && out.total_s > 0;
    return out;
}

}  // namespace

progress_projection project_progress(const std::vector<progress_point>& points, double total) {
    if (!(total > 0)) return {};
    const progress_projection fit = fit_rate(points, total);
    if (fit.usable) return fit;
    // Not yet past the warm-up: its earliest end, so that a run too slow to leave the warm-up before its bound is
    // projected still.
    const double floor_s = earliest_end(points, total);
    return floor_s > 0 ? progress_projection{true, floor_s, 0.0} : fit;
}

double progress_low_end(const progress_projection& p, double noise_sd) {
    if (!p.usable) return 0;
    // The projection's error from a few points is itself uncertain: its quantile is Student's, not the normal's.
    const double rel = p.sd_s > 0 ? t_quantile_95(p.dof) * p.sd_s / p.total_s : 0.0, noise = z90 * noise_sd;
    return p.total_s * std::exp(-std::sqrt(noise * noise + rel * rel));
}

bool progress_past_bound(const progress_projection& p, double bound_s, double noise_sd) {
    return p.usable && bound_s > 0 && progress_low_end(p, noise_sd) > bound_s;
}

}  // namespace mmgp
