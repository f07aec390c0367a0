// Objectives and the time-cost front (mmgp/objective.hpp).
#include "mmgp/objective.hpp"

#include <algorithm>
#include <cmath>

namespace mmgp {

std::string_view to_string(objective o) noexcept {
    switch (o) {
        case objective::node_hours: return "node-hours";
        case objective::core_hours: return "core-hours";
        default: return "time";
    }
}

bool parse_objective(std::string_view text, objective& out) noexcept {
    for (objective o : {objective::time, objective::node_hours, objective::core_hours})
        if (text == to_string(o)) {
            out = o;
            return true;
        }
    return false;
}

namespace {
// The first point (slowest first: time falling) at least as fast as t.
std::size_t first_not_slower(const std::vector<front_point>& pts, double t) {
    return static_cast<std::size_t>(
        std::lower_bound(pts.begin(), pts.end(), t, [](const front_point& p, double x) { return p.time_s > x; }) -
        pts.begin());
}
}  // namespace

bool pareto_front::dominated(double time_s, double cost) const noexcept {
    const std::size_t i = first_not_slower(pts_, time_s);  // the cheapest of those at least as fast
    return i < pts_.size() && pts_[i].cost <= cost;
}

bool pareto_front::offer(const configuration& c, double time_s) {
    const double cost = objective_value(cost_, c, time_s);
    std::size_t i = first_not_slower(pts_, time_s);
    if (i < pts_.size() && pts_[i].cost <= cost) return false;
    // Points it beats: slower ones (before i) at least as costly, and one of equal time (then costlier).
    std::size_t end = i < pts_.size() && pts_[i].time_s == time_s ? i + 1 : i;
    std::size_t j = i;
    while (j > 0 && pts_[j - 1].cost >= cost) --j;
    pts_.erase(pts_.begin() + static_cast<std::ptrdiff_t>(j), pts_.begin() + static_cast<std::ptrdiff_t>(end));
    pts_.insert(pts_.begin() + static_cast<std::ptrdiff_t>(j), front_point{c, time_s, cost});
    bound();
    return true;
}

void pareto_front::bound() {
    if (max_ < 3 || pts_.size() <= max_) return;
    std::size_t kept = 1;  // the first, every other interior point, the last
    for (std::size_t i = 2; i + 1 < pts_.size(); i += 2) pts_[kept++] = pts_[i];
    pts_[kept++] = pts_.back();
    pts_.resize(kept);
    thinned_ = true;
}

void pareto_front::offer_fastest(const configuration& c, double time_s) {
    const double cost = objective_value(cost_, c, time_s);
    while (!pts_.empty() && pts_.back().cost >= cost) pts_.pop_back();
    pts_.push_back(front_point{c, time_s, cost});
    bound();
}

std::vector<front_point> pareto_front::points() const { return {pts_.rbegin(), pts_.rend()}; }

namespace {
double log_cost(const front_point& p) { return std::log10(std::max(p.cost, 1e-300)); }
}  // namespace

std::size_t knee_of(const std::vector<front_point>& f) noexcept {
    if (f.size() < 3) return 0;
    const double x0 = log_cost(f.front()), x1 = log_cost(f.back());
    const double y0 = f.front().time_s, y1 = f.back().time_s;
    const double sx = x0 - x1 != 0 ? x0 - x1 : 1.0, sy = y1 - y0 != 0 ? y1 - y0 : 1.0;
    // Scaled so that both ends are (1, 0) and (0, 1): the line between them is x + y = 1.
    std::size_t knee = 0;
    double far = -1;
    for (std::size_t i = 0; i < f.size(); ++i) {
        const double x = (log_cost(f[i]) - x1) / sx, y = (f[i].time_s - y0) / sy;
        const double d = std::fabs(x + y - 1.0);
        if (d > far) far = d, knee = i;
    }
    return knee;
}

std::vector<std::size_t> thin_front(const std::vector<front_point>& f, const std::vector<std::size_t>& keep,
                                    std::size_t max_rows) {
    if (f.size() <= max_rows) {
        std::vector<std::size_t> all(f.size());
        for (std::size_t i = 0; i < f.size(); ++i) all[i] = i;
        return all;
    }
    std::vector<std::size_t> fixed = {0, f.size() - 1, knee_of(f)};
    for (std::size_t k : keep)
        if (k < f.size()) fixed.push_back(k);
    std::sort(fixed.begin(), fixed.end());
    fixed.erase(std::unique(fixed.begin(), fixed.end()), fixed.end());
    // The rest: the point nearest each of `targets` evenly spaced values of log cost (cost falls along the
    // front); a target whose nearest point is already shown adds nothing, so that neighbours are not shown
    // twice. More targets until the rows are full.
    const double hi = log_cost(f.front()), lo = log_cost(f.back());
    auto nearest = [&](double target) {
        const auto it = std::lower_bound(f.begin(), f.end(), target,
                                         [](const front_point& p, double x) { return log_cost(p) > x; });
        std::size_t i = static_cast<std::size_t>(it - f.begin());
        if (i == f.size()) return f.size() - 1;
        if (i > 0 && std::fabs(log_cost(f[i - 1]) - target) <= std::fabs(log_cost(f[i]) - target)) --i;
        return i;
    };
    for (std::size_t targets = max_rows - std::min(max_rows, fixed.size());; targets += targets / 2 + 1) {
        std::vector<std::size_t> rows = fixed;
        for (std::size_t k = 1; k <= targets && rows.size() < max_rows; ++k) {
            const std::size_t i = nearest(hi + (lo - hi) * static_cast<double>(k) / static_cast<double>(targets + 1));
            const auto at = std::lower_bound(rows.begin(), rows.end(), i);
            if (at == rows.end() || *at != i) rows.insert(at, i);
        }
        if (rows.size() >= max_rows || targets >= f.size()) return rows;
    }
}

}  // namespace mmgp
