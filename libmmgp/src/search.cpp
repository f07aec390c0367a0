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

// Calls f(row, configuration with p unset, p_lo, p_top) for every (nodes, m) in search order for which
// want(row index, configurations in the row) holds; the communication term depends on (m, nodes) only and
// is computed once per row.
template <class Want, class F>
void each_row(const scenario& s, const evaluator& ev, Want&& want, F&& f) {
    const space_bounds b = bounds(s);
    const policy pol = s.space.pol;
    const bool with_comm = ev.kind() != model_kind::eq11;
    const std::int64_t m_top = b.m_top();
    // p_top(m) for each m, computed once (integer divisions cost more than a row's evaluation).
    std::vector<int> p_tops;
    if (m_top >= b.m_lo && m_top - b.m_lo < (std::int64_t{1} << 20))
        for (std::int64_t m = b.m_lo; m <= m_top; ++m) p_tops.push_back(static_cast<int>(b.p_top(m)));
    const int p_lo = static_cast<int>(b.p_lo);
    std::size_t index = 0;
    for (std::int64_t n = b.n_lo; n <= b.n_hi; ++n)
        for (std::int64_t m = b.m_lo; m <= m_top; ++m, ++index) {
            const int mi = static_cast<int>(m), ni = static_cast<int>(n);
            const int p_top = p_tops.empty() ? static_cast<int>(b.p_top(m)) : p_tops[static_cast<std::size_t>(m - b.m_lo)];
            if (!want(index, p_top - p_lo + 1)) continue;
            bool extrap = false;
            const double comm = with_comm ? ev.comm_per_phase(mi, ni, extrap) : 0.0;
            f(ev.row_of(mi, ni, pol, comm, extrap), configuration{mi, 0, ni, pol}, p_lo, p_top);
        }
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
    const space_bounds bd = bounds(s);
    const std::int64_t rows = (bd.n_hi - bd.n_lo + 1) * std::max<std::int64_t>(bd.m_top() - bd.m_lo + 1, 0);
    const bool skip_rows = !opt.keep_all && !opt.visit && rows <= max_marked_rows;
    std::vector<float> row_floor;
    if (skip_rows) row_floor.reserve(static_cast<std::size_t>(rows));
    std::vector<double> top;  // max-heap of the fastest_max smallest times so far
    bool have_best = false;
    configuration best_c;
    double best_t = 0.0;
    auto every = [](std::size_t, int) { return true; };
    each_row(s, ev, every, [&](const row& r, configuration c, int p_lo, int p_top) {
        double row_min = std::numeric_limits<double>::infinity();
        for (int p = p_lo; p <= p_top; ++p) {
            const double t = r.time(p);
            if (!std::isfinite(t)) {
                c.p = p;
                throw input_error(s.file, "", "parameters whose predicted times are finite",
                                  "an overflowing prediction at " + label_of(c));
            }
            if (!have_best || t < best_t) best_t = t, best_c = c, best_c.p = p, have_best = true;
            row_min = std::min(row_min, t);
            if (skip_rows && opt.fastest_max > 0 && (top.size() < opt.fastest_max || t < top.front())) {
                top.push_back(t);
                std::push_heap(top.begin(), top.end());
                if (top.size() > opt.fastest_max) {
                    std::pop_heap(top.begin(), top.end());
                    top.pop_back();
                }
            }
        }
        if (skip_rows) {
            float lo = static_cast<float>(row_min);  // rounded down, so that it never exceeds row_min
            if (static_cast<double>(lo) > row_min) lo = std::nextafter(lo, -std::numeric_limits<float>::infinity());
            row_floor.push_back(lo);
        }
        if (opt.keep_all)
            for (int p = p_lo; p <= p_top; ++p) c.p = p, out.all.push_back(ranked{c, r.at(p)});
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
        auto marked = [&](std::size_t index, int configurations) {
            if (!skip_rows || static_cast<double>(row_floor[index]) <= needed) return true;
            seq += configurations;
            return false;
        };
        each_row(s, ev, marked, [&](const row& r, configuration c, int p_lo, int p_top) {
            for (int p = p_lo; p <= p_top; ++p) {
                c.p = p;
                second(r.time(p), [&] { return ranked{c, r.at(p)}; });
            }
        });
    }
    out.near_optimal = std::move(near).sorted();
    out.fastest = std::move(fastest).sorted();
    return out;
}

}  // namespace mmgp
