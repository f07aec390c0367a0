// Whether a scenario's profiles cover its search space, in one place: the space is not empty, the tables of
// α(m) and O_col(m) hold every m it reaches, α is positive and O_col not negative (check_coverage, run when a
// scenario is read), and the model can cost every configuration: the nodes eq11 takes, the transfer cost, the
// communication (check_evaluable, run when the evaluator is built). Both name the JSON pointer at fault. Pure;
// calls the communication term and the profile's value types (m_function::covers, to_string: profile/values.cpp).
#include "model/coverage.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/format.hpp"
#include "base/json_reader.hpp"
#include "mmgp/error.hpp"

namespace mmgp {

namespace {

// Where each model_subject lives in a scenario file.
std::string model_location(model_subject subject, std::size_t index) {
    switch (subject) {
        case model_subject::nodes_range: return "/search/nodes";
        case model_subject::transfer_cost: return "/platform/dma";
        case model_subject::search_size: return "/search";
        case model_subject::communication:
            return detail::child(detail::child("/application/communication", index), "primitive");
    }
    return "";
}

}  // namespace

model_error::model_error(std::string file, model_subject subject, std::size_t index, std::string expected, std::string found)
    : input_error(std::move(file), model_location(subject, index), std::move(expected), std::move(found)),
      subject_(subject),
      index_(index) {}

space_bounds bounds(const scenario& s, accelerator_sharing share) noexcept {
    const auto& pl = s.plat;
    const auto& sp = s.space;
    // m and p can never exceed the blocks the accelerators hold, A·slots (m*p <= A·slots; A on a CPU node), nodes
    // never exceed the platform's.
    const std::int64_t cap = pl.capacity();
    space_bounds b{sp.m.lo, std::min<std::int64_t>(sp.m.hi, cap), sp.p.lo, std::min<std::int64_t>(sp.p.hi, cap),
                   sp.nodes.lo, std::min<std::int64_t>({sp.nodes.hi, pl.nodes, max_searched_count}), cap};
    if (pl.max_processes_per_node > 0) b.m_hi = std::min<std::int64_t>(b.m_hi, pl.max_processes_per_node);
    b.sliced = share == accelerator_sharing::time_sliced;
    return b;
}

std::vector<accelerator_sharing> searched_modes(const scenario& s) {
    return s.space.sharing.empty() ? s.plat.sharing_modes() : s.space.sharing;
}

space_bounds widest_bounds(const scenario& s) {
    const auto modes = searched_modes(s);
    const bool sliced = std::find(modes.begin(), modes.end(), accelerator_sharing::time_sliced) != modes.end();
    return bounds(s, sliced ? accelerator_sharing::time_sliced : accelerator_sharing::dedicated);
}

void narrow(scenario& s, const configuration& c) noexcept {
    s.space.m = {c.m, c.m};
    s.space.p = {c.p, c.p};
    s.space.nodes = {c.nodes, c.nodes};
    s.space.pol = c.pol;
    if (!s.plat.sharing.empty() || c.share != accelerator_sharing::dedicated) s.space.sharing = {c.share};
}

namespace {

// Feasible configurations exist iff the smallest m fits the widest bounds of the space's sharing modes (m*p <= apus,
// or p <= apus time-sliced, and m within the processes per node) and the fewest nodes the platform's.
void check_not_empty(const scenario& s, const detail::reader& r) {
    const auto& pl = s.plat;
    const auto& sp = s.space;
    const space_bounds b = widest_bounds(s);
    if (sp.m.lo <= b.m_top() && sp.nodes.lo <= b.n_hi) return;
    std::string why = "m " + std::to_string(sp.m.lo) + ".." + std::to_string(sp.m.hi) + ", p " + std::to_string(sp.p.lo) +
                      ".." + std::to_string(sp.p.hi) + ", nodes " + std::to_string(sp.nodes.lo) + ".." +
                      std::to_string(sp.nodes.hi) + " with apus " + std::to_string(pl.apus) +
                      (pl.apu_slots > 1 ? " x " + std::to_string(pl.apu_slots) + " slots" : std::string()) + " and nodes " +
                      std::to_string(pl.nodes);
    const bool limited = pl.max_processes_per_node > 0;
    if (limited) why += ", at most " + std::to_string(pl.max_processes_per_node) + " processes per node";
    if (static_cast<std::int64_t>(pl.apus) * pl.apu_slots > max_searched_count || pl.nodes > max_searched_count)
        why += "; m, p and nodes are searched up to " + std::to_string(max_searched_count);
    r.fail("/search",
           std::string("a search space with at least one configuration with m*p <= apus") +
               (limited ? ", nodes <= platform nodes and m <= max_processes_per_node" : " and nodes <= platform nodes"),
           "an empty space (" + why + ")");
}

// The first k in the m the model can ask a table for, k in [m_lo, m_top], and for the os policy the round sizes H
// and m - (rounds-1)*H (which take every value in 1..H once m > H); 0 when the table has them all (or is no table).
// Tables are finite, so the walk stops at the first k a table lacks.
std::int64_t first_missing(const m_function& f, std::int64_t m_lo, std::int64_t m_top, int H) {
    if (f.kind != m_function::form::table) return 0;
    auto covered = [&](std::int64_t k) {
        return k == 1 || (k < static_cast<std::int64_t>(f.table.size()) && f.covers(static_cast<int>(k)));
    };
    for (std::int64_t k = m_lo; k <= m_top; ++k)
        if (!covered(k)) return k;
    if (m_top > H)
        for (std::int64_t k = 1; k <= H; ++k)
            if (!covered(k)) return k;
    return 0;
}

void check_table(const m_function& f, const std::string& path, const scenario& s, const detail::reader& r) {
    const std::int64_t m_top = widest_bounds(s).m_top();
    const std::int64_t k = first_missing(f, s.space.m.lo, m_top, s.plat.hpu_contexts);
    if (k == 0) return;
    std::string have;
    for (std::size_t i = 1; i < f.table.size(); ++i)
        if (!std::isnan(f.table[i])) have += (have.empty() ? "" : ", ") + std::to_string(i);
    r.fail(path, "an entry for m = " + std::to_string(k) + " (the search covers m = " + std::to_string(s.space.m.lo) +
                     ".." + std::to_string(m_top) + ")",
           "entries for m = " + have);
}

}  // namespace

void check_coverage(const scenario& s) {
    const detail::reader r{s.file};
    check_not_empty(s, r);
    check_table(s.plat.alpha, "/platform/alpha/table", s, r);
    check_table(s.app.O_col, "/application/O_col/table", s, r);
    const m_function& alpha = s.plat.alpha;
    if (alpha.kind == m_function::form::linear && widest_bounds(s).m_top() >= 2) {
        // slope >= 0, so the smallest α(k) over k >= 2 is α(2).
        double a = alpha.intercept + alpha.slope * 2 / s.plat.hpu_contexts;
        if (!(a > 0))
            r.fail("/platform/alpha/linear", "a linear form positive for every searched m",
                   "alpha(2) = " + detail::format_double(a));
    }
    const m_function& ocol = s.app.O_col;
    const std::int64_t m_top = widest_bounds(s).m_top();
    if (ocol.kind == m_function::form::linear && m_top >= 2) {
        // An overhead, never a saving. O_col(1) is 0 and the slope >= 0, so the smallest O_col(k) the model asks
        // for is at the smallest k >= 2 it asks for: the smallest m searched, or 2 among the round sizes 1..H
        // once m > H (as first_missing walks a table).
        const int H = s.plat.hpu_contexts;
        const std::int64_t k = m_top > H && H >= 2 ? 2 : std::max<std::int64_t>(2, s.space.m.lo);
        const double o = ocol.intercept + ocol.slope * static_cast<double>(k);
        if (!(o >= 0))
            r.fail("/application/O_col/linear", "a linear form not negative for any searched m",
                   "O_col(" + std::to_string(k) + ") = " + detail::format_double(o));
    }
}

namespace detail {

namespace {

// Why no model of `prim` exists: no table of it at all, tables whose times are all 0 (a model is fitted to times
// above 0: each point weighs 1/time), or tables from which none could be fitted.
std::string no_model_found(const platform& pl, primitive prim, const std::string& name) {
    bool tabled = false, timed = false;
    for (const comm_table& t : pl.comm_tables) {
        if (t.prim != prim) continue;
        for (const auto& pt : t.points) {
            tabled = true;
            timed = timed || pt.seconds > 0;
        }
    }
    if (!tabled) return "neither a table nor a model for " + name;
    return "no table of " + name + " covering this, and no model: " +
           (timed ? std::string("none could be fitted to its tables") : "its tables' times are all 0, and a model is fitted to times above 0");
}

// Every (nodes, m) the search visits must be costed by a table or a model with the stages it needs.
void check_communication(const scenario& s, const comm_models& models) {
    const platform& pl = s.plat;
    const space_bounds bd = widest_bounds(s);
    for (std::size_t i = 0; i < s.app.comm.size(); ++i) {
        const comm_pattern& cp = s.app.comm[i];
        const std::optional<comm_model>& model = models[static_cast<std::size_t>(cp.prim)];
        if (model && model->has_intra && model->has_inter) continue;  // a model covers every pair
        for (std::int64_t n = bd.n_lo; n <= bd.n_hi; ++n) {
            for (std::int64_t m = s.space.m.lo; m <= bd.m_top(); ++m) {
                const int ni = static_cast<int>(n), mi = static_cast<int>(m);
                const stages st = stage_counts(cp.prim, ni, mi);
                if (st.intra == 0 && st.inter == 0) continue;
                if (tables_chosen(s) && table_cost(pl.comm_tables, cp.prim, ni, mi, cp.bytes))
                    continue;
                if (model && (st.intra == 0 || model->has_intra) && (st.inter == 0 || model->has_inter)) continue;
                const std::string prim(to_string(cp.prim));
                throw model_error(s.file, model_subject::communication, i,
                                  "a communication table or model in the platform's network section covering " + prim +
                                      " of " + format_double(cp.bytes) + " bytes on nodes=" + std::to_string(ni) +
                                      " with ppn=" + std::to_string(mi),
                                  model ? "a model without the " +
                                              std::string(st.inter > 0 && !model->has_inter ? "inter" : "intra") +
                                              "-node part and no such table"
                                        : no_model_found(pl, cp.prim, prim));
            }
        }
    }
}

}  // namespace

void check_evaluable(const scenario& s, const model_needs& model, const comm_models& models) {
    const space_bounds bd = bounds(s);
    if (!model.single_node.empty() && bd.n_hi > 1)
        throw model_error(s.file, model_subject::nodes_range, 0,
                          "nodes 1..1 with --model " + std::string(model.name) + " (" + std::string(model.single_node) + ")",
                          std::to_string(bd.n_lo) + ".." + std::to_string(bd.n_hi));
    if (s.app.dma_bytes > 0 && !s.plat.has_dma)
        throw model_error(s.file, model_subject::transfer_cost, 0,
                          "a transfer cost {\"latency_s\", \"bandwidth_Bps\"} (the application declares dma_bytes)",
                          "nothing (the key is missing)");
    if (!model.communication || s.app.comm.empty()) return;
    const std::int64_t node_counts = bd.n_hi - bd.n_lo + 1, process_counts = bd.m_hi - s.space.m.lo + 1;
    if (node_counts * std::max<std::int64_t>(process_counts, 1) > 100000000)
        throw model_error(s.file, model_subject::search_size, 0,
                          "at most 100000000 (nodes, m) pairs when the application communicates",
                          std::to_string(node_counts) + " node counts x " + std::to_string(process_counts) +
                              " process counts");
    check_communication(s, models);
}

}  // namespace detail

}  // namespace mmgp
