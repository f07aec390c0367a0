#include "mmgp/search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "detail/json_reader.hpp"

namespace mmgp {

std::int64_t count_feasible(const scenario& s) noexcept {
    const space_bounds b = bounds(s);
    if (b.n_lo > b.n_hi || b.p_lo > b.p_hi) return 0;
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
    const std::int64_t nodes = b.n_hi - b.n_lo + 1;
    if (per_node > 0 && nodes > std::numeric_limits<std::int64_t>::max() / per_node) return std::numeric_limits<std::int64_t>::max();
    return per_node * nodes;
}

namespace {

// The (nodes, m) rows of a search space in search order (nodes, then m): row index = (nodes - n_lo) *
// per_node_rows + (m - m_lo). p_top(m) is computed once per m (integer divisions cost more than a row's
// evaluation).
class row_space {
public:
    explicit row_space(const space_bounds& b) : b_(b), m_top_(b.m_top()), p_lo_(static_cast<int>(b.p_lo)) {
        per_node_rows_ = std::max<std::int64_t>(m_top_ - b.m_lo + 1, 0);
        if (per_node_rows_ < (std::int64_t{1} << 20)) {
            p_tops_.reserve(static_cast<std::size_t>(per_node_rows_));
            for (std::int64_t m = b.m_lo; m <= m_top_; ++m) {
                p_tops_.push_back(static_cast<int>(b.p_top(m)));
            }
        }
    }
    std::int64_t rows() const noexcept { return (b_.n_hi - b_.n_lo + 1) * per_node_rows_; }
    int p_lo() const noexcept { return p_lo_; }
    int p_top(std::int64_t m) const noexcept {
        return p_tops_.empty() ? static_cast<int>(b_.p_top(m)) : p_tops_[static_cast<std::size_t>(m - b_.m_lo)];
    }
    /// Calls f(n, m, p_top) for every row in search order.
    template <class F>
    void each(F&& f) const {
        for (std::int64_t n = b_.n_lo; n <= b_.n_hi; ++n)
            for (std::int64_t m = b_.m_lo; m <= m_top_; ++m) f(n, m, p_top(m));
    }
    /// Calls f(n, m, p_top) for the rows whose index `marked` accepts, in search order (only when usable()).
    /// Configurations keep their relative order, which is all the ranking's ties depend on.
    template <class Marked, class F>
    void each_marked(Marked&& marked, F&& f) const {
        std::size_t index = 0;
        for (std::int64_t n = b_.n_lo; n <= b_.n_hi; ++n)
            for (std::size_t k = 0; k < p_tops_.size(); ++k, ++index)
                if (marked(index)) f(n, b_.m_lo + static_cast<std::int64_t>(k), p_tops_[k]);
    }
    bool usable() const noexcept { return !p_tops_.empty() || per_node_rows_ == 0; }

private:
    space_bounds b_;
    std::int64_t m_top_, per_node_rows_ = 0;
    int p_lo_;
    std::vector<int> p_tops_;
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
row row_at(const evaluator& ev, std::int64_t n, std::int64_t m, policy pol) {
    const int mi = static_cast<int>(m), ni = static_cast<int>(n);
    bool extrap = false;
    const double comm = ev.kind() != model_kind::eq11 ? ev.comm_per_phase(mi, ni, extrap) : 0.0;
    return ev.row_of(mi, ni, pol, comm, extrap);
}

std::string label_of(const configuration& c) {
    return "m=" + std::to_string(c.m) + " p=" + std::to_string(c.p) + " nodes=" + std::to_string(c.nodes);
}

// Keeps the k fastest of a stream, ties in arrival order; memory O(k).
class fastest_k {
public:
    explicit fastest_k(std::size_t k) : k_(k) {}
    /// Offers a configuration of time t; make() builds it only when it is kept.
    template <class Make>
    void offer(double t, std::int64_t seq, Make&& make) {
        if (k_ == 0) return;
        if (heap_.size() == k_ && !(t < heap_.front().first.pred.time_s ||
                                    (t == heap_.front().first.pred.time_s && seq < heap_.front().second)))
            return;
        heap_.push_back({make(), seq});
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
        for (auto& e : heap_) out.push_back(e.first);
        return out;
    }

private:
    using entry = std::pair<ranked, std::int64_t>;
    static bool before(const entry& a, const entry& b) {
        return a.first.pred.time_s < b.first.pred.time_s || (a.first.pred.time_s == b.first.pred.time_s && a.second < b.second);
    }
    std::size_t k_;
    std::vector<entry> heap_;  // max-heap by `before`: the slowest kept on top
};

}  // namespace

search_result search(const scenario& s, model_kind kind, const search_options& opt) {
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
    const evaluator ev(s, kind);
    search_result out;
    out.feasible = count;
    out.notes = ev.notes();
    if (opt.keep_all) out.all.reserve(static_cast<std::size_t>(count));
    // Pass 1: the best (the first fastest in search order); every time must be finite. Without a visitor, it
    // also keeps a lower bound of each row's fastest time (a float, 4 bytes a row, for spaces of at most
    // max_marked_rows rows) and the fastest_max fastest times, so that pass 2 evaluates only the rows that
    // can hold a near-optimal configuration or one of the fastest.
    const row_space space(bounds(s));
    const policy pol = s.space.pol;
    const int p_lo = space.p_lo();
    const bool skip_rows = !opt.keep_all && !opt.visit && space.usable() && space.rows() <= max_marked_rows;
    std::vector<float> row_floor(skip_rows ? static_cast<std::size_t>(space.rows()) : 0);
    std::size_t row_index = 0;
    std::vector<double> top;  // max-heap of the fastest_max smallest times so far
    std::vector<double> times;  // one row's times, p = p_lo, p_lo + 1, ...
    bool have_best = false;
    configuration best_c;
    double best_t = 0.0;
    space.each([&](std::int64_t n, std::int64_t m, int p_top) {
        const row r = row_at(ev, n, m, pol);
        const configuration c{static_cast<int>(m), 0, static_cast<int>(n), pol};
        const int count = p_top - p_lo + 1;
        times.resize(static_cast<std::size_t>(count));
        for (int i = 0; i < count; ++i) times[static_cast<std::size_t>(i)] = r.time(p_lo + i);
        double row_min = std::numeric_limits<double>::infinity(), sum = 0.0;
        for (double t : times) row_min = std::min(row_min, t), sum += t;
        if (!std::isfinite(sum))  // a non-finite time, or finite ones too large to add up: look for the first
            for (int i = 0; i < count; ++i)
                if (!std::isfinite(times[static_cast<std::size_t>(i)]))
                    throw input_error(s.file, "", "parameters whose predicted times are finite",
                                      "an overflowing prediction at " + label_of({c.m, p_lo + i, c.nodes, pol}));
        if (!have_best || row_min < best_t) {  // the first fastest in search order
            const auto first = std::find(times.begin(), times.end(), row_min) - times.begin();
            best_t = row_min, best_c = c, best_c.p = p_lo + static_cast<int>(first), have_best = true;
        }
        if (skip_rows && opt.fastest_max > 0 && (top.size() < opt.fastest_max || row_min < top.front()))
            for (double t : times)
                if (top.size() < opt.fastest_max || t < top.front()) {
                    top.push_back(t);
                    std::push_heap(top.begin(), top.end());
                    if (top.size() > opt.fastest_max) {
                        std::pop_heap(top.begin(), top.end());
                        top.pop_back();
                    }
                }
        if (skip_rows) row_floor[row_index++] = float_floor(row_min);
        if (opt.keep_all) {
            configuration k = c;
            for (int p = p_lo; p <= p_top; ++p) k.p = p, out.all.push_back(ranked{k, r.at(p)});
        }
    });
    out.best = ranked{best_c, ev(best_c)};
    // Pass 2 (over the kept list, or a second evaluation of the rows pass 1 marked): the near-optimal set,
    // the fastest and the visitor.
    const double limit = best_t * (1.0 + s.space.tolerance);
    const std::size_t keep = opt.near_optimal_max == 0 ? static_cast<std::size_t>(count) : opt.near_optimal_max;
    fastest_k near(keep), fastest(opt.fastest_max);
    std::int64_t seq = 0;
    auto second = [&](double t, auto&& make) {
        if (t <= limit) {
            ++out.near_optimal_count;
            near.offer(t, seq, make);
        }
        fastest.offer(t, seq, make);
        ++seq;
        if (opt.visit) opt.visit(make(), out.best);
    };
    if (opt.keep_all) {
        for (const auto& x : out.all) second(x.pred.time_s, [&] { return x; });
    } else {
        // A row whose fastest time exceeds both the near-optimal limit and the fastest_max-th time holds
        // nothing pass 2 keeps.
        const double kth = opt.fastest_max == 0 ? -std::numeric_limits<double>::infinity()
                           : top.size() < opt.fastest_max ? std::numeric_limits<double>::infinity()
                                                          : top.front();
        const double needed = std::max(limit, kth);
        auto evaluate_row = [&](std::int64_t n, std::int64_t m, int p_top) {
            const row r = row_at(ev, n, m, pol);
            configuration c{static_cast<int>(m), 0, static_cast<int>(n), pol};
            for (int p = p_lo; p <= p_top; ++p) {
                c.p = p;
                second(r.time(p), [&] { return ranked{c, r.at(p)}; });
            }
        };
        if (skip_rows) {
            auto marked = [&](std::size_t index) { return static_cast<double>(row_floor[index]) <= needed; };
            space.each_marked(marked, evaluate_row);
        } else {
            space.each(evaluate_row);
        }
    }
    out.near_optimal = std::move(near).sorted();
    out.fastest = std::move(fastest).sorted();
    return out;
}

}  // namespace mmgp
