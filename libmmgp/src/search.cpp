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

// Calls f(ranked) for every feasible configuration in (nodes, m, p) order; the communication
// term depends on (m, nodes) only and is hoisted out of the p loop.
template <class F>
void each_configuration(const scenario& s, const evaluator& ev, F&& f) {
    const space_bounds b = bounds(s);
    const policy pol = s.space.pol;
    const bool with_comm = ev.kind() != model_kind::eq11;
    for (std::int64_t n = b.n_lo; n <= b.n_hi; ++n)
        for (std::int64_t m = b.m_lo; m <= b.m_top(); ++m) {
            bool extrap = false;
            const double comm = with_comm ? ev.comm_per_phase(static_cast<int>(m), static_cast<int>(n), extrap) : 0.0;
            for (std::int64_t p = b.p_lo, top = b.p_top(m); p <= top; ++p) {
                const configuration c{static_cast<int>(m), static_cast<int>(p), static_cast<int>(n), pol};
                f(ranked{c, ev.evaluate(c, comm, extrap)});
            }
        }
}

std::string label_of(const configuration& c) {
    return "m=" + std::to_string(c.m) + " p=" + std::to_string(c.p) + " nodes=" + std::to_string(c.nodes);
}

// Keeps the k fastest of a stream, ties in arrival order; memory O(k).
class fastest_k {
public:
    explicit fastest_k(std::size_t k) : k_(k) {}
    void offer(const ranked& x, std::int64_t seq) {
        if (k_ == 0) return;
        if (heap_.size() == k_ && !before({x, seq}, heap_.front())) return;
        heap_.push_back({x, seq});
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
    if (opt.keep_all) out.all.reserve(static_cast<std::size_t>(count));
    // Pass 1: the best (the first fastest in search order); every time must be finite.
    bool have_best = false;
    each_configuration(s, ev, [&](const ranked& x) {
        if (!std::isfinite(x.pred.time_s))
            throw input_error(s.file, "", "parameters whose predicted times are finite",
                              "an overflowing prediction at " + label_of(x.c));
        if (!have_best || x.pred.time_s < out.best.pred.time_s) out.best = x, have_best = true;
        if (opt.keep_all) out.all.push_back(x);
    });
    // Pass 2 (over the kept list, or a second evaluation): the near-optimal set and the visitor.
    const double limit = out.best.pred.time_s * (1.0 + s.space.tolerance);
    const std::size_t keep = opt.near_optimal_max == 0 ? static_cast<std::size_t>(count) : opt.near_optimal_max;
    fastest_k near(keep), fastest(opt.fastest_max);
    std::int64_t seq = 0;
    auto second = [&](const ranked& x) {
        if (x.pred.time_s <= limit) {
            ++out.near_optimal_count;
            near.offer(x, seq);
        }
        fastest.offer(x, seq);
        ++seq;
        if (opt.visit) opt.visit(x, out.best);
    };
    if (opt.keep_all)
        for (const auto& x : out.all) second(x);
    else
        each_configuration(s, ev, second);
    out.near_optimal = std::move(near).sorted();
    out.fastest = std::move(fastest).sorted();
    return out;
}

}  // namespace mmgp
