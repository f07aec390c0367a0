#include "mmgp/search.hpp"

#include <algorithm>
#include <limits>

#include "detail/json_reader.hpp"

namespace mmgp {

namespace {

struct bounds {
    std::int64_t m_lo, m_hi, p_lo, p_hi, n_lo, n_hi, apus;
};

bounds effective(const scenario& s) noexcept {
    const auto& pl = s.plat;
    const auto& sp = s.space;
    bounds b{sp.m.lo, std::min<std::int64_t>(sp.m.hi, pl.apus), sp.p.lo, std::min<std::int64_t>(sp.p.hi, pl.apus),
             sp.nodes.lo, std::min<std::int64_t>(sp.nodes.hi, pl.nodes), pl.apus};
    if (pl.max_processes_per_node > 0) b.m_hi = std::min<std::int64_t>(b.m_hi, pl.max_processes_per_node);
    return b;
}

// Highest feasible p for m (m * p <= apus), or p_lo - 1 when none.
std::int64_t p_top(const bounds& b, std::int64_t m) noexcept { return std::min(b.p_hi, b.apus / m); }

}  // namespace

std::int64_t count_feasible(const scenario& s) noexcept {
    bounds b = effective(s);
    if (b.n_lo > b.n_hi || b.p_lo > b.p_hi) return 0;
    // Sum over m of (min(p_hi, A/m) - p_lo + 1)^+, in blocks of m with the same A/m: O(sqrt A) steps.
    std::int64_t per_node = 0;
    std::int64_t m = b.m_lo;
    const std::int64_t m_end = std::min(b.m_hi, b.apus / b.p_lo);
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

search_result search(const scenario& s, model_kind kind, const search_options& opt) {
    const std::int64_t count = count_feasible(s);
    if (count == 0) {
        check_coverage(s);  // names the empty space
        throw input_error(s.file, "/search", "a non-empty search space", "no feasible configuration");
    }
    constexpr std::int64_t max_configs = 200000000;
    if (count > max_configs || (opt.keep_all && count > 20000000))
        throw input_error(s.file, "/search",
                          "a search space of at most " + std::to_string(opt.keep_all ? 20000000 : max_configs) +
                              " configurations" + (opt.keep_all ? " when every one is listed" : ""),
                          std::to_string(count) + " configurations");
    evaluator ev(s, kind);
    bounds b = effective(s);
    const policy pol = s.space.pol;
    search_result out;
    out.feasible = count;
    std::vector<double> times;
    if (opt.keep_all)
        out.all.reserve(static_cast<std::size_t>(count));
    else
        times.reserve(static_cast<std::size_t>(count));
    double best_t = std::numeric_limits<double>::infinity();
    configuration best_c{};
    prediction best_pred{};
    for (std::int64_t n = b.n_lo; n <= b.n_hi; ++n) {
        for (std::int64_t m = b.m_lo; m <= b.m_hi; ++m) {
            std::int64_t top = p_top(b, m);
            if (top < b.p_lo) break;
            bool extrap = false;
            double comm = kind == model_kind::eq11 ? 0.0 : ev.comm_per_phase(static_cast<int>(m), static_cast<int>(n), extrap);
            for (std::int64_t p = b.p_lo; p <= top; ++p) {
                configuration c{static_cast<int>(m), static_cast<int>(p), static_cast<int>(n), pol};
                prediction pr = ev.evaluate(c, comm, extrap);
                if (pr.time_s < best_t) {
                    best_t = pr.time_s;
                    best_c = c;
                    best_pred = pr;
                }
                if (opt.keep_all)
                    out.all.push_back({c, pr});
                else
                    times.push_back(pr.time_s);
            }
        }
    }
    out.best = {best_c, best_pred};
    const double limit = best_t * (1.0 + s.space.tolerance);
    if (opt.keep_all) {
        for (const auto& r : out.all)
            if (r.pred.time_s <= limit) out.near_optimal.push_back(r);
    } else {
        std::size_t i = 0;
        for (std::int64_t n = b.n_lo; n <= b.n_hi; ++n)
            for (std::int64_t m = b.m_lo; m <= b.m_hi; ++m) {
                std::int64_t top = p_top(b, m);
                if (top < b.p_lo) break;
                for (std::int64_t p = b.p_lo; p <= top; ++p, ++i)
                    if (times[i] <= limit) {
                        configuration c{static_cast<int>(m), static_cast<int>(p), static_cast<int>(n), pol};
                        out.near_optimal.push_back({c, ev(c)});
                    }
            }
    }
    std::stable_sort(out.near_optimal.begin(), out.near_optimal.end(),
                     [](const ranked& a, const ranked& b2) { return a.pred.time_s < b2.pred.time_s; });
    return out;
}

}  // namespace mmgp
