// mmgp/objective.hpp — what a decision minimises: wall time, or what a cluster charges for it.
//
//   mmgp::search_options o(false);
//   o.objective = mmgp::objective::node_hours;   // the cheapest run ...
//   o.within = 0.05;                             // ... among those within 5 % of the fastest time
//   mmgp::search_result r = mmgp::search(s, mmgp::model_kind::mmgp, o);
//
// Node-hours are what a cluster that allocates whole nodes charges (nodes x wall time); core-hours what one
// that shares nodes and charges per core charges (m x p x nodes x wall time). Minimising either alone picks
// the fewest nodes and cores whatever they cost in time, which is rarely what a user wants: a cost objective
// takes the cheapest configuration among those whose time is within `within` of the fastest. The Pareto
// front of time against cost shows the whole trade-off: no configuration off the front is both faster and
// cheaper than one on it. Pure functions; no I/O.
#pragma once

#include "mmgp/export.hpp"

#include <cstddef>
#include <string_view>
#include <vector>

#include "mmgp/model.hpp"

MMGP_API_BEGIN
namespace mmgp {

enum class objective {
    time,        ///< wall time (seconds)
    node_hours,  ///< nodes x wall time / 3600
    core_hours,  ///< m x p x nodes x wall time / 3600
};
/// "time", "node-hours", "core-hours".
std::string_view to_string(objective o) noexcept;
/// Parses "time", "node-hours" or "core-hours"; false for anything else.
bool parse_objective(std::string_view text, objective& out) noexcept;

/// Node-hours of one run of c that takes time_s seconds.
inline double node_hours(const configuration& c, double time_s) noexcept { return time_s * c.nodes / 3600.0; }
/// Core-hours of one run of c (m x p cores per node) that takes time_s seconds.
inline double core_hours(const configuration& c, double time_s) noexcept {
    return time_s * (static_cast<double>(c.m) * c.p * c.nodes) / 3600.0;
}
/// The objective's value of one run: its time (seconds), node-hours or core-hours.
inline double objective_value(objective o, const configuration& c, double time_s) noexcept {
    return o == objective::node_hours ? node_hours(c, time_s) : o == objective::core_hours ? core_hours(c, time_s) : time_s;
}

/// A point of a time-cost front.
struct front_point {
    configuration c;
    double time_s = 0;
    double cost = 0;  ///< node-hours or core-hours (the front's objective)
};

/// The Pareto front of time against a cost (node-hours or core-hours), built from a stream of
/// configurations: points() keeps those that no other offered configuration beats in both time and cost
/// (of two equal in both, the one offered first). Memory O(size of the front).
///
/// Memory stays bounded: past `max_points` points, every other interior point is dropped (thinned() is then
/// true, and the front is a subset of the true one; what it holds was on the front when offered).
class pareto_front {
public:
    /// `cost`: objective::node_hours or objective::core_hours (objective::time is taken as node_hours).
    explicit pareto_front(objective cost = objective::node_hours, std::size_t max_points = 0) noexcept
        : cost_(cost == objective::time ? objective::node_hours : cost), max_(max_points) {}
    objective cost_objective() const noexcept { return cost_; }
    /// Offers a configuration with its time; true when it is on the front so far.
    bool offer(const configuration& c, double time_s);
    /// Offers a point whose time is below every point offered so far (the search's new fastest): O(1) amortised.
    void offer_fastest(const configuration& c, double time_s);
    /// True when a point of the front is at least as fast and at least as cheap.
    bool dominated(double time_s, double cost) const noexcept;
    /// The front, fastest first (cost falling).
    std::vector<front_point> points() const;
    bool empty() const noexcept { return pts_.empty(); }
    std::size_t size() const noexcept { return pts_.size(); }
    /// True once points were dropped to keep within max_points.
    bool thinned() const noexcept { return thinned_; }

private:
    void bound();
    objective cost_;
    std::size_t max_ = 0;  // 0: no bound
    bool thinned_ = false;
    std::vector<front_point> pts_;  // slowest first (cost rising): the fastest is appended at the back
};

/// The knee of a front (fastest first): the point farthest from the straight line between its two ends,
/// in the plane of log10(cost) against time, both scaled to the front's range. 0 for fronts of < 3 points.
std::size_t knee_of(const std::vector<front_point>& front) noexcept;

/// The indices (ascending) of at most max_rows points of a front (fastest first) to show: both ends, the
/// knee, the `keep` points, and the rest thinned evenly in log cost. max_rows >= 4 + keep.size().
std::vector<std::size_t> thin_front(const std::vector<front_point>& front, const std::vector<std::size_t>& keep,
                                    std::size_t max_rows);

}  // namespace mmgp
MMGP_API_END
