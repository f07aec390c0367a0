// The search (mmgp/search.hpp): every feasible configuration of a scenario, row by row (nodes, m). Pass 1 finds
// the fastest, the fronts and a floor of each row; the choice follows from them (objective, window, budget); pass 2
// collects the near-optimal set and the ranking and calls the visitor. Pure: no I/O.
#include "mmgp/search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <tuple>
#include <type_traits>


namespace mmgp {

namespace {

// The feasible configurations of one sharing mode on one node.
std::int64_t feasible_per_node(const space_bounds& b) noexcept {
    if (b.n_lo > b.n_hi || b.p_lo > b.p_hi) return 0;
    if (b.sliced) {  // p <= apus for every m
        const std::int64_t ps = std::min(b.p_hi, b.apus) - b.p_lo + 1;
        return b.m_top() >= b.m_lo && ps > 0 ? (b.m_top() - b.m_lo + 1) * ps : 0;
    }
    // Sum over m of (min(p_hi, A/m) - p_lo + 1)^+, in blocks of m with the same A/m: O(sqrt A) steps.
    std::int64_t per_node = 0;
    std::int64_t m = b.m_lo;
    const std::int64_t m_end = b.m_top();
    while (m <= m_end) {
        std::int64_t q = b.apus / m;
        std::int64_t block_end = std::min(m_end, b.apus / q);
        per_node += (block_end - m + 1) * (std::min(b.p_hi, q) - b.p_lo + 1);
        m = block_end + 1;
    }
    return per_node;
}

}  // namespace

std::int64_t count_feasible(const scenario& s) noexcept {
    const space_bounds b = bounds(s);
    if (b.n_lo > b.n_hi || b.p_lo > b.p_hi) return 0;
    std::int64_t per_node = 0;
    for (accelerator_sharing a : searched_modes(s)) per_node += feasible_per_node(bounds(s, a));
    const std::int64_t nodes = b.n_hi - b.n_lo + 1;
    if (per_node > 0 && nodes > std::numeric_limits<std::int64_t>::max() / per_node) return std::numeric_limits<std::int64_t>::max();
    return per_node * nodes;
}

namespace {

// The (nodes, sharing, m) rows of a search space in search order (nodes, then the sharing modes in the
// platform's order, then m): a platform without sharing modes has one, dedicated. p_top(m) is computed once per
// (sharing, m) (integer divisions cost more than a row's evaluation).
class row_space {
public:
    explicit row_space(const scenario& s) {
        for (accelerator_sharing a : searched_modes(s)) {
            mode md{bounds(s, a), a, 0, 0, {}};
            md.m_top = md.b.m_top();
            md.rows = std::max<std::int64_t>(md.m_top - md.b.m_lo + 1, 0);
            per_node_rows_ += md.rows;
            modes_.push_back(std::move(md));
        }
        const space_bounds& b = modes_.front().b;
        n_lo_ = b.n_lo, n_hi_ = b.n_hi, p_lo_ = static_cast<int>(b.p_lo);
        if (per_node_rows_ < (std::int64_t{1} << 20))
            for (mode& md : modes_) {
                md.p_tops.reserve(static_cast<std::size_t>(md.rows));
                for (std::int64_t m = md.b.m_lo; m <= md.m_top; ++m) md.p_tops.push_back(static_cast<int>(md.b.p_top(m)));
            }
    }
    std::int64_t rows() const noexcept { return (n_hi_ - n_lo_ + 1) * per_node_rows_; }
    int p_lo() const noexcept { return p_lo_; }
    /// Calls f(n, m, p_top, share) for every row in search order.
    template <class F>
    void each(F&& f) const {
        for (std::int64_t n = n_lo_; n <= n_hi_; ++n)
            for (const mode& md : modes_)
                for (std::int64_t m = md.b.m_lo; m <= md.m_top; ++m) f(n, m, p_top(md, m), md.share);
    }
    /// Calls f(n, m, p_top, share) for the rows whose index `marked` accepts, in search order (only when usable()).
    /// Configurations keep their relative order, which is all the ranking's ties depend on.
    template <class Marked, class F>
    void each_marked(Marked&& marked, F&& f) const {
        std::size_t index = 0;
        for (std::int64_t n = n_lo_; n <= n_hi_; ++n)
            for (const mode& md : modes_)
                for (std::size_t k = 0; k < md.p_tops.size(); ++k, ++index)
                    if (marked(index, n, md.b.m_lo + static_cast<std::int64_t>(k), md.share))
                        f(n, md.b.m_lo + static_cast<std::int64_t>(k), md.p_tops[k], md.share);
    }
    bool usable() const noexcept {
        return per_node_rows_ == 0 || std::all_of(modes_.begin(), modes_.end(), [](const mode& md) {
                   return !md.p_tops.empty() || md.rows == 0;
               });
    }
    /// The highest p of row m under `share`.
    int p_top(accelerator_sharing share, std::int64_t m) const noexcept {
        for (const mode& md : modes_)
            if (md.share == share) return p_top(md, m);
        return p_lo_ - 1;
    }

private:
    struct mode {
        space_bounds b;
        accelerator_sharing share;
        std::int64_t m_top, rows;
        std::vector<int> p_tops;
    };
    static int p_top(const mode& md, std::int64_t m) noexcept {
        return md.p_tops.empty() ? static_cast<int>(md.b.p_top(m)) : md.p_tops[static_cast<std::size_t>(m - md.b.m_lo)];
    }
    std::vector<mode> modes_;
    std::int64_t n_lo_ = 1, n_hi_ = 0, per_node_rows_ = 0;
    int p_lo_ = 1;
};

// A float never above x (4 bytes a row for pass 2's bound). For x >= 2^-100 the nearest float to x·(1 − 2^-23)
// lies within a relative 2^-24 of it, hence below x; no call to nextafter in the common case.
inline float float_floor(double x) noexcept {
    if (x >= 0x1p-100 && x <= 0x1p100) return static_cast<float>(x * (1.0 - 0x1p-23));
    float lo = static_cast<float>(x);
    if (static_cast<double>(lo) > x) lo = std::nextafter(lo, -std::numeric_limits<float>::infinity());
    return lo;
}

// The row of (n, m): the communication term depends on (m, nodes) only and is computed once per row.
row row_at(const evaluator& ev, std::int64_t n, std::int64_t m, policy pol, accelerator_sharing share) {
    const int mi = static_cast<int>(m), ni = static_cast<int>(n);
    bool extrap = false;
    const double comm = ev.comm_per_phase(mi, ni, extrap);  // 0 under a model without the communication term
    return ev.row_of(mi, ni, pol, comm, extrap, share);
}

std::string label_of(const configuration& c) {
    return "m=" + std::to_string(c.m) + " p=" + std::to_string(c.p) + " nodes=" + std::to_string(c.nodes) +
           (c.share == accelerator_sharing::dedicated ? "" : " sharing=" + std::string(to_string(c.share)));
}

// Keeps the k fastest of a stream, ties in arrival order; memory O(k).
class fastest_k {
public:
    explicit fastest_k(std::size_t k) : k_(k) {}
    /// Offers a configuration whose key (time or cost) is t; make() builds it only when it is kept.
    template <class Make>
    void offer(double t, std::int64_t seq, Make&& make) {
        if (k_ == 0) return;
        if (heap_.size() == k_ && !(t < heap_.front().key || (t == heap_.front().key && seq < heap_.front().seq)))
            return;
        heap_.push_back({make(), t, seq});
        std::push_heap(heap_.begin(), heap_.end(), before);
        if (heap_.size() > k_) {
            std::pop_heap(heap_.begin(), heap_.end(), before);
            heap_.pop_back();
        }
    }
    std::vector<ranked> sorted() && {
        std::sort_heap(heap_.begin(), heap_.end(), before);
        std::vector<ranked> out;
        out.reserve(heap_.size());
        for (auto& e : heap_) out.push_back(e.x);
        return out;
    }

private:
    struct entry {
        ranked x;
        double key;
        std::int64_t seq;
    };
    static bool before(const entry& a, const entry& b) { return a.key < b.key || (a.key == b.key && a.seq < b.seq); }
    std::size_t k_;
    std::vector<entry> heap_;  // max-heap by `before`: the slowest kept on top
};

}  // namespace

void config_span::add(const configuration& c, bool first) noexcept {
    if (first) {
        m_lo = m_hi = c.m, p_lo = p_hi = c.p, nodes_lo = nodes_hi = c.nodes;
        return;
    }
    m_lo = std::min(m_lo, c.m), m_hi = std::max(m_hi, c.m);
    p_lo = std::min(p_lo, c.p), p_hi = std::max(p_hi, c.p);
    nodes_lo = std::min(nodes_lo, c.nodes), nodes_hi = std::max(nodes_hi, c.nodes);
}

namespace {
std::string budget_text(double budget, double cheapest) {
    char text[160];
    std::snprintf(text, sizeof text, "a budget of at least %.6g node-hours (the cheapest configuration), found %.6g",
                  cheapest, budget);
    return text;
}
}  // namespace

budget_error::budget_error(double budget, double cheapest)
    : error(budget_text(budget, cheapest)), budget_(budget), cheapest_(cheapest) {}

namespace {

// What pass 1 leaves for the choice and for pass 2.
struct first_pass {
    configuration fastest_c;  // the first fastest in search order
    double fastest_t = 0.0;
    configuration base_c;     // the first fastest at the fewest nodes
    double base_t = std::numeric_limits<double>::infinity();
    std::optional<pareto_front> node_front, cost_front;  // node-hours; core-hours (that objective only)
    std::vector<float> row_floor;  // a lower bound of each row's fastest time (when rows are skipped)
    std::vector<double> top;       // max-heap of the fastest_max smallest times
};

// The choice and the rules of pass 2.
struct choice {
    configuration best_c, quick_c;
    double window = std::numeric_limits<double>::infinity();  // time limit of a cost objective's window
    double budget = 0;                                        // node-hours (0: none)
    objective goal = objective::time;
    double key(const configuration& c, double t) const noexcept { return objective_value(goal, c, t); }
    bool allowed(const configuration& c, double t) const noexcept {
        return t <= window && (budget <= 0 || node_hours(c, t) <= budget);
    }
};

void keep_top(std::vector<double>& top, std::size_t k, double t) {
    top.push_back(t);
    std::push_heap(top.begin(), top.end());
    if (top.size() > k) {
        std::pop_heap(top.begin(), top.end());
        top.pop_back();
    }
}

// A chunk of a row's times (p from `first.p` on) is finite and >= 0, else the first time that is not is named.
void check_chunk(const std::string& file, const std::vector<double>& times, const configuration& first) {
    double lowest = std::numeric_limits<double>::infinity(), sum = 0.0;
    for (double t : times) lowest = std::min(lowest, t), sum += t;
    const auto at = [&](std::size_t i) {
        configuration k = first;
        k.p += static_cast<int>(i);
        return label_of(k);
    };
    if (!std::isfinite(sum))  // a non-finite time, or finite ones too large to add up: look for the first
        for (std::size_t i = 0; i < times.size(); ++i)
            if (!std::isfinite(times[i]))
                throw input_error(file, "", "parameters whose predicted times are finite", "an overflowing prediction at " + at(i));
    if (lowest < 0)  // parameters out of the model's domain (a negative intercept, a count that overflows)
        for (std::size_t i = 0; i < times.size(); ++i)
            if (times[i] < 0)
                throw input_error(file, "", "parameters whose predicted times are >= 0",
                                  "a negative prediction (" + std::to_string(times[i]) + " s) at " + at(i));
}

// Pass 1: every row once. The fastest (every time must be finite), the fastest at the fewest nodes, the
// fronts, and (when pass 2 may skip rows) each row's floor and the fastest_max fastest times.
first_pass pass_one(const scenario& s, const evaluator& ev, const row_space& space, const search_options& opt,
                    bool skip_rows, search_result& out) {
    first_pass f;
    const policy pol = s.space.pol;
    const int p_lo = space.p_lo();
    const bool cost_goal = opt.minimise != objective::time;
    if (opt.front || cost_goal || opt.budget_node_hours > 0) f.node_front.emplace(objective::node_hours, max_front_points);
    if (opt.minimise == objective::core_hours) f.cost_front.emplace(objective::core_hours, max_front_points);
    if (skip_rows) f.row_floor.resize(static_cast<std::size_t>(space.rows()));
    // Locals, not f's members, in the loop: stores into `times` could otherwise alias them.
    float* row_floor = f.row_floor.data();
    pareto_front* node_front = f.node_front ? &*f.node_front : nullptr;
    pareto_front* cost_front = f.cost_front ? &*f.cost_front : nullptr;
    bool have = false;
    double fastest_t = 0.0;
    configuration fastest_c;
    std::vector<std::pair<configuration, double>> base_rows;  // the rows at the fewest nodes: (its m, fastest time)
    // One row's times a chunk at a time (p = lo, lo + 1, ...): a row of 10^8 p is not held whole.
    constexpr int chunk = 1 << 16;
    std::vector<double> times;
    const std::int64_t n_lo = bounds(s).n_lo;
    space.each([&](std::int64_t n, std::int64_t m, int p_top, accelerator_sharing share) {
        const row r = row_at(ev, n, m, pol, share);
        const configuration c{static_cast<int>(m), 0, static_cast<int>(n), pol, share};
        double row_min = std::numeric_limits<double>::infinity();
        int row_min_p = p_lo;
        for (int lo = p_lo; lo <= p_top; lo = (p_top - lo < chunk) ? p_top + 1 : lo + chunk) {
            const int count = std::min(p_top - lo, chunk - 1) + 1;
            times.resize(static_cast<std::size_t>(count));
            for (int i = 0; i < count; ++i) times[static_cast<std::size_t>(i)] = r.time(lo + i);
            check_chunk(s.file, times, {c.m, lo, c.nodes, pol, share});
            for (int i = 0; i < count; ++i)
                if (times[static_cast<std::size_t>(i)] < row_min) row_min = times[static_cast<std::size_t>(i)], row_min_p = lo + i;
            if (cost_front) {
                configuration k = c;
                for (int i = 0; i < count; ++i) {
                    k.p = lo + i;
                    const double t = times[static_cast<std::size_t>(i)];
                    if (!cost_front->dominated(t, core_hours(k, t))) cost_front->offer(k, t);
                }
            }
            if (skip_rows && opt.fastest_max > 0)
                for (double t : times)
                    if (f.top.size() < opt.fastest_max || t < f.top.front()) keep_top(f.top, opt.fastest_max, t);
        }
        if (!have || row_min < fastest_t) {  // the first fastest in search order
            fastest_t = row_min, fastest_c = c, fastest_c.p = row_min_p, have = true;
            // Rows come in order of nodes: a row slower than the fastest so far has at least its node-hours.
            if (node_front) node_front->offer_fastest(fastest_c, row_min);
        }
        if (n == n_lo) base_rows.push_back({c, row_min});
        if (skip_rows) *row_floor++ = float_floor(row_min);
        if (opt.keep_all) {
            configuration k = c;
            for (int p = p_lo; p <= p_top; ++p) k.p = p, out.all.push_back(ranked{k, r.at(p)});
        }
    });
    f.fastest_t = fastest_t, f.fastest_c = fastest_c;
    for (const auto& [c, t] : base_rows)  // the fastest row at the fewest nodes, then its fastest p
        if (t < f.base_t) f.base_t = t, f.base_c = c;
    const row r = row_at(ev, f.base_c.nodes, f.base_c.m, pol, f.base_c.share);
    for (int p = p_lo; p <= space.p_top(f.base_c.share, f.base_c.m); ++p)
        if (r.time(p) == f.base_t) {
            f.base_c.p = p;
            break;
        }
    return f;
}

// The first by `goal` (time: the first fastest in search order; a cost: the cheapest, then the faster) within
// the window and the budget, by evaluating the rows that can hold it: the choices the fronts do not give
// (core-hours under a budget; a front thinned to bound its memory).
std::pair<configuration, double> first_in_window(const scenario& s, const evaluator& ev, const row_space& space,
                                                 const first_pass& f, const choice& ch, objective goal) {
    configuration best{};
    double best_key = std::numeric_limits<double>::infinity(), best_t = 0;
    std::size_t index = 0;
    space.each([&](std::int64_t n, std::int64_t m, int p_top, accelerator_sharing share) {
        const std::size_t i = index++;
        if (!f.row_floor.empty() && static_cast<double>(f.row_floor[i]) > ch.window) return;
        const row r = row_at(ev, n, m, s.space.pol, share);
        configuration c{static_cast<int>(m), 0, static_cast<int>(n), s.space.pol, share};
        for (int p = space.p_lo(); p <= p_top; ++p) {
            c.p = p;
            const double t = r.time(p);
            if (!ch.allowed(c, t)) continue;
            const double key = objective_value(goal, c, t);
            if (key < best_key || (key == best_key && t < best_t)) best = c, best_key = key, best_t = t;
        }
    });
    return {best, best_t};
}

// The choice: the fastest within the budget; under a cost objective, the cheapest in its window.
choice choose(const scenario& s, const evaluator& ev, const row_space& space, const search_options& opt,
              const first_pass& f) {
    choice ch;
    ch.goal = opt.minimise;
    ch.budget = opt.budget_node_hours;
    ch.best_c = ch.quick_c = f.fastest_c;
    double quick_t = f.fastest_t;
    const bool thinned = (f.node_front && f.node_front->thinned()) || (f.cost_front && f.cost_front->thinned());
    if (ch.budget <= 0 && ch.goal == objective::time) return ch;  // the fastest; the front is only shown
    const std::vector<front_point> nodes_front = f.node_front->points();  // kept under a budget or a cost
    if (ch.budget > 0) {
        // The cheapest configuration is the front's last point, never dropped.
        if (nodes_front.back().cost > ch.budget) throw budget_error(ch.budget, nodes_front.back().cost);
        if (thinned) {
            std::tie(ch.quick_c, quick_t) = first_in_window(s, ev, space, f, ch, objective::time);
        } else {
            auto in = std::find_if(nodes_front.begin(), nodes_front.end(), [&](const front_point& x) { return x.cost <= ch.budget; });
            ch.quick_c = in->c, quick_t = in->time_s;
        }
    }
    ch.best_c = ch.quick_c;
    if (ch.goal == objective::time) return ch;
    ch.window = quick_t * (1.0 + opt.within);
    if (thinned || (ch.goal == objective::core_hours && ch.budget > 0)) {
        ch.best_c = first_in_window(s, ev, space, f, ch, ch.goal).first;
        return ch;
    }
    // The cheapest in the window is on the front (what beats it in time and cost is in the window too).
    const std::vector<front_point> front = ch.goal == objective::core_hours ? f.cost_front->points() : nodes_front;
    for (const auto& x : front)
        if (x.time_s <= ch.window) ch.best_c = x.c;
    return ch;
}

// The rows pass 2 evaluates (when pass 1 kept their floors). A row whose fastest time exceeds what pass 2 keeps
// holds nothing it keeps: by time, the near-optimal limit and the fastest_max-th time (with no budget to leave
// some of those out); by cost, the window, and the near-optimal cost unless the first fastest_max are ranked.
class row_filter {
public:
    row_filter(const search_options& opt, const first_pass& f, const choice& ch, double limit, int p_lo, policy pol)
        : f_(f), goal_(opt.minimise), limit_(limit), p_lo_(p_lo), pol_(pol) {
        const bool any_rank = opt.fastest_max > 0, by_time = opt.minimise == objective::time;
        const double inf = std::numeric_limits<double>::infinity();
        const double kth = !any_rank ? -inf : f.top.size() < opt.fastest_max ? inf : f.top.front();
        time_needed_ = !by_time ? ch.window : any_rank && ch.budget > 0 ? inf : std::max(limit, kth);
        cost_rows_ = !by_time && !any_rank;
    }
    bool operator()(std::size_t index, std::int64_t n, std::int64_t m, accelerator_sharing share) const {
        const double floor_t = static_cast<double>(f_.row_floor[index]);
        if (floor_t > time_needed_) return false;
        if (!cost_rows_) return true;
        const configuration least{static_cast<int>(m), p_lo_, static_cast<int>(n), pol_, share};
        return objective_value(goal_, least, floor_t) <= limit_;
    }

private:
    const first_pass& f_;
    objective goal_;
    double limit_, time_needed_ = 0;
    bool cost_rows_ = false;
    int p_lo_;
    policy pol_;
};

// The number of feasible configurations of s, refused when there is none or more than a search takes (a tenth
// of that when every one is kept).
std::int64_t searchable_count(const scenario& s, const search_options& opt) {
    const std::int64_t count = count_feasible(s);
    if (count == 0) {
        check_coverage(s);  // names the empty space
        throw input_error(s.file, "/search", "a non-empty search space", "no feasible configuration");
    }
    const std::int64_t limit_n = opt.keep_all ? max_search_configurations / 10 : max_search_configurations;
    if (count > limit_n)
        throw input_error(s.file, "/search",
                          "a search space of at most " + std::to_string(limit_n) + " configurations" +
                              (opt.keep_all ? " when every one is kept" : ""),
                          std::to_string(count) + " configurations");
    return count;
}

// The choice in `out`: the best, the fastest, the first fastest at the fewest nodes, and the front when asked.
void record_choice(const evaluator& ev, const search_options& opt, const first_pass& f, const choice& ch,
                   search_result& out) {
    out.best = ranked{ch.best_c, ev(ch.best_c)};
    out.quickest = ranked{ch.quick_c, ev(ch.quick_c)};
    out.base = ranked{f.base_c, ev(f.base_c)};
    if (opt.front) {
        const pareto_front& shown = f.cost_front ? *f.cost_front : *f.node_front;
        out.front = shown.points(), out.front_thinned = shown.thinned();
    }
}

// Pass 2 (over the kept list, or a second evaluation of the rows that can matter): the near-optimal set,
// the first by the objective and the visitor.
void pass_two(const scenario& s, const evaluator& ev, const row_space& space, const search_options& opt,
              const first_pass& f, const choice& ch, bool skip_rows, search_result& out) {
    const policy pol = s.space.pol;
    const int p_lo = space.p_lo();
    const bool by_time = opt.minimise == objective::time;
    const double best_key = ch.key(out.best.c, out.best.pred.time_s);
    const double limit = best_key * (1.0 + s.space.tolerance);
    const std::size_t keep = opt.near_optimal_max == 0 ? static_cast<std::size_t>(out.feasible) : opt.near_optimal_max;
    fastest_k near(keep), fastest(opt.fastest_max);
    std::int64_t seq = 0;
    // `plain` (by time, no budget) is a compile-time argument: the common case keeps today's few comparisons.
    const bool plain = by_time && ch.budget <= 0;
    auto second = [&](auto is_plain, const configuration& c, double t, auto&& make) {
        const bool allowed = is_plain || ch.allowed(c, t);
        const double key = is_plain || by_time ? t : ch.key(c, t);
        const bool is_near = allowed && key <= limit;
        if (is_near) {
            out.near_optimal_span.add(c, out.near_optimal_count == 0);
            ++out.near_optimal_count;
            near.offer(key, seq, make);
        }
        if (allowed) fastest.offer(key, seq, make);
        ++seq;
        if (opt.visit) opt.visit(make(), out.best, is_near);
    };
    if (opt.keep_all) {
        for (const auto& x : out.all) second(false, x.c, x.pred.time_s, [&] { return x; });
    } else {
        auto evaluate_row = [&](std::int64_t n, std::int64_t m, int p_top, accelerator_sharing share) {
            const row r = row_at(ev, n, m, pol, share);
            configuration c{static_cast<int>(m), 0, static_cast<int>(n), pol, share};
            auto each_p = [&](auto is_plain) {
                for (int p = p_lo; p <= p_top; ++p) {
                    c.p = p;
                    second(is_plain, c, r.time(p), [&] { return ranked{c, r.at(p)}; });
                }
            };
            if (plain) each_p(std::true_type{});
            else each_p(std::false_type{});
        };
        if (skip_rows) {
            space.each_marked(row_filter(opt, f, ch, limit, p_lo, pol), evaluate_row);
        } else {
            space.each(evaluate_row);
        }
    }
    out.near_optimal = std::move(near).sorted();
    out.fastest = std::move(fastest).sorted();
}

}  // namespace

search_result search(const scenario& s, model_kind kind, const search_options& opt) {
    const std::int64_t count = searchable_count(s, opt);
    const evaluator ev(s, kind);
    search_result out;
    out.feasible = count;
    out.notes = ev.notes();
    if (opt.keep_all) out.all.reserve(static_cast<std::size_t>(count));
    // Pass 1 keeps a lower bound of each row's fastest time (a float, 4 bytes a row, for spaces of at most
    // max_marked_rows rows), so that pass 2 evaluates only the rows that can hold what it keeps.
    const row_space space(s);
    const bool skip_rows = !opt.keep_all && !opt.visit && space.usable() && space.rows() <= max_marked_rows;
    const first_pass f = pass_one(s, ev, space, opt, skip_rows, out);
    const choice ch = choose(s, ev, space, opt, f);
    record_choice(ev, opt, f, ch, out);
    pass_two(s, ev, space, opt, f, ch, skip_rows, out);
    return out;
}

std::vector<objective_choice> other_objectives(const scenario& s, model_kind kind, const search_options& opt) {
    std::vector<objective_choice> out;
    for (objective g : {objective::time, objective::node_hours, objective::core_hours}) {
        if (g == opt.minimise) continue;
        search_options o(false);
        o.minimise = g;
        o.within = opt.within;
        o.budget_node_hours = opt.budget_node_hours;
        out.push_back({g, search(s, kind, o).best});
    }
    return out;
}

}  // namespace mmgp
