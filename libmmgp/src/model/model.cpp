// The evaluator: the model as the sum of its layers (docs/MODEL.md): (a) one process on dedicated
// hardware (model/dedicated.hpp), (b) host sharing (model/host_sharing.hpp) or (c) time-shared
// cores (model/time_shared.cpp). Built once per scenario: it fits the communication models the tables identify
// (model/comm.cpp) and has the scenario's coverage checked (model/coverage.cpp) before it evaluates anything.
#include "mmgp/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "model/comm.hpp"
#include "model/coverage.hpp"
#include "base/format.hpp"
#include "model/dedicated.hpp"
#include "model/eq11_model.hpp"
#include "model/host_sharing.hpp"
#include "model/layered_model.hpp"
#include "model/time_shared.hpp"
#include "mmgp/error.hpp"

namespace mmgp {

std::string_view to_string(model_kind k) noexcept {
    return k == detail::eq11_model::kind ? detail::eq11_model::name : detail::layered_model::name;
}

bool parse_model(std::string_view text, model_kind& out) noexcept {
    static constexpr std::pair<std::string_view, model_kind> names[] = {
        {detail::eq11_model::name, detail::eq11_model::kind}, {detail::layered_model::name, detail::layered_model::kind}};
    return detail::parse_named(text, names, out);
}

namespace detail {

double alpha_of(const platform& pl, int k) noexcept {
    if (k <= 1) return 1.0;
    const m_function& f = pl.alpha;
    switch (f.kind) {
        case m_function::form::constant: return f.value;
        case m_function::form::table: return f.table[static_cast<std::size_t>(k)];
        case m_function::form::linear: return f.intercept + f.slope * k / pl.hpu_contexts;
    }
    return 1.0;
}

double ocol_of(const application& app, int k) noexcept {
    const m_function& f = app.O_col;
    switch (f.kind) {
        case m_function::form::constant: return k <= 1 ? 0.0 : f.value;
        case m_function::form::table: return f.covers(k) ? f.table[static_cast<std::size_t>(k)] : 0.0;
        case m_function::form::linear: return k <= 1 ? 0.0 : f.intercept + f.slope * k;
    }
    return 0.0;
}

}  // namespace detail

double eq11_time(const platform& pl, const application& app, int m, int p) {
    const dedicated_terms t = detail::eq11_terms(pl, app, detail::alpha_of(pl, m), detail::ocol_of(app, m), m);
    return t.host + t.accelerator(p) + t.offload(p) + t.context_switch + t.communication;
}

evaluator::evaluator(const scenario& s, model_kind kind) : s_(&s), kind_(kind), run_(dispatch_of(kind)) { run_.prepare(*this); }

// The evaluator of one Model: the scenario checked against what the model needs, the per-m tables and
// communication models, then, for a model with the sharing layers, the GPU's slot curve and the time-shared cores.
template <class Model>
void evaluator::prepare(evaluator& ev) {
    const scenario& s = *ev.s_;
    const platform& pl = s.plat;
    const application& app = s.app;
    const detail::comm_models models = detail::models_for(pl, app.comm);
    detail::check_evaluable(s, {Model::name, Model::single_node, Model::communication}, models);
    // α and O_col are tabulated for small m (the common case); larger m are computed on the fly.
    const std::int64_t m_hi = bounds(s).m_hi;
    std::size_t table_size = static_cast<std::size_t>(std::min<std::int64_t>(std::max<std::int64_t>(m_hi, pl.hpu_contexts), 4096)) + 1;
    ev.alpha_.assign(table_size, 1.0);
    ev.ocol_.assign(table_size, 0.0);
    ev.rounds_.assign(table_size, 1);
    for (std::size_t k = 1; k < table_size; ++k) {
        int ki = static_cast<int>(k);
        if (pl.alpha.kind != m_function::form::table || pl.alpha.covers(ki) || ki == 1) ev.alpha_[k] = detail::alpha_of(pl, ki);
        ev.ocol_[k] = detail::ocol_of(app, ki);
        ev.rounds_[k] = static_cast<int>((std::int64_t{ki} + pl.hpu_contexts - 1) / pl.hpu_contexts);  // no int overflow
    }
    if (pl.has_dma) {
        ev.dma_lat_ = pl.dma.latency_s;
        ev.dma_spb_ = pl.dma.s_per_byte;
    }
    ev.models_.assign(detail::primitive_count, comm_model{});
    ev.has_model_.assign(detail::primitive_count, 0);
    for (std::size_t k = 0; k < detail::primitive_count; ++k) {
        if (!models[k]) continue;
        ev.models_[k] = *models[k];
        ev.has_model_[k] = 1;
    }
    ev.has_table_.assign(detail::primitive_count, 0);
    ev.tables_chosen_ = detail::tables_chosen(*ev.s_);
    if (ev.tables_chosen_)
        for (const comm_table& t : pl.comm_tables) ev.has_table_[static_cast<int>(t.prim)] = 1;
    if constexpr (Model::sharing_layers) ev.prepare_sharing();
}

// The sharing layers' constants: the slot curve of a GPU holding several blocks per SM, the time-shared cores.
void evaluator::prepare_sharing() {
    const platform& pl = s_->plat;
    if (pl.apu_slots > 1) {  // f at each count of blocks on the most loaded SM: one lookup per p
        const slot_curve& f = s_->app.slot_time.empty() ? pl.slot_time : s_->app.slot_time;
        const double last = std::max<double>(pl.apu_slots, std::ceil(f.k.back()));  // the curve's points all in it
        for (int c = 0; c <= static_cast<int>(last); ++c) slot_factors_.push_back(f.at(c));
    }
    if (pl.cores > 0) {
        shared_ = std::make_shared<const detail::time_shared_cores>(pl, s_->app);
        if (shared_->wake_from == detail::time_shared_cores::wake_source::application)
            notes_.push_back("the idle-core wake-up T_wake is the application's T_offload_idle - O_offload = " +
                             detail::format_double(shared_->wake_idle) + " s" +
                             (pl.T_wake >= 0 ? " (the platform's T_wake " + detail::format_double(pl.T_wake) + " s is not used)"
                                             : ""));
    }
}

double evaluator::alpha_at(int m) const noexcept {
    return static_cast<std::size_t>(m) < alpha_.size() ? alpha_[static_cast<std::size_t>(m)] : detail::alpha_of(s_->plat, m);
}

double evaluator::ocol_at(int m) const noexcept {
    return static_cast<std::size_t>(m) < ocol_.size() ? ocol_[static_cast<std::size_t>(m)] : detail::ocol_of(s_->app, m);
}

int evaluator::rounds_at(int m) const noexcept {
    const int H = s_->plat.hpu_contexts;
    return static_cast<std::size_t>(m) < rounds_.size() ? rounds_[static_cast<std::size_t>(m)]
                                                        : static_cast<int>((std::int64_t{m} + H - 1) / H);
}

// The communication term per phase ([C] §4.4, docs/MODEL.md §2): a measured table where one covers the
// configuration, else the latency-bandwidth model (extrapolated); that model alone where the scenario chose it.
double evaluator::communication(int m, int nodes, bool& extrapolated) const noexcept {
    const application& app = s_->app;
    double total = 0.0;
    for (const comm_pattern& cp : app.comm) {
        if (nodes == 1 && m == 1) continue;
        const auto t = has_table_[static_cast<int>(cp.prim)] ? detail::table_cost(s_->plat.comm_tables, cp.prim, nodes, m, cp.bytes)
                                                               : std::nullopt;
        if (t) {
            total += cp.count * *t;
        } else {
            total += cp.count * detail::model_cost(models_[static_cast<int>(cp.prim)], cp.prim, nodes, m, cp.bytes);
            extrapolated = extrapolated || tables_chosen_;
        }
    }
    return total;
}

namespace {

// The prediction of p from the dedicated layers' terms: its time is the row's p_curve, as in row::time(p), so
// both give the same number; the breakdown splits it into the model's terms.
inline prediction dedicated_prediction(const dedicated_terms& unit, const host_share& share, const p_curve& curve,
                                       int p, bool extrapolated) noexcept {
    prediction out;
    breakdown& b = out.parts;
    const double accelerator = unit.accelerator(p), offload = unit.offload(p);
    b.host = share.host;
    b.accelerator = share.per_unit * accelerator;
    b.offload = share.per_unit * offload;
    b.context_switch = share.context_switch;
    b.communication = share.communication;
    b.startup = share.startup;
    b.extrapolated = extrapolated;
    out.time_s = curve(p);
    return out;
}

// Time-sliced: the processes wait for the accelerator when its busy time exceeds the dedicated time; the wait
// is off-load time (a kernel queued behind other processes' kernels).
inline void wait_for_slices(prediction& out, double busy) noexcept {
    if (!(busy > out.time_s)) return;
    out.parts.offload += busy - out.time_s;
    out.time_s = busy;
}

// The blocks beyond one per SM (docs/MODEL.md §7): the process's own grid through the curve, then, unless
// time-sliced, the busy bound of every process's blocks sharing the SMs; the excess is accelerator time.
inline void with_grid(prediction& out, const grid_terms& g, int p) noexcept {
    if (!(p > g.from)) return;
    const double extra = g.dedicated_extra(p);
    out.parts.accelerator += extra;
    out.time_s += extra;
    if (g.sliced) return;
    const double busy = g.busy(p);
    if (busy > out.time_s) {
        out.parts.accelerator += busy - out.time_s;
        out.time_s = busy;
    }
}

inline double fixed_part(const host_share& share) noexcept {
    return share.host + share.context_switch + share.communication + share.startup;
}

}  // namespace

// (a) one process, one unit of work, on dedicated hardware (the Model's terms); then, under a model with the
// sharing layers, (b) how the processes share the host. False when the platform time-shares its cores: layer (c)
// replaces (b) and `unit` alone is set.
template <class Model>
[[gnu::always_inline]] inline bool evaluator::layers(int m, int nodes, policy pol, double comm_phase, dedicated_terms& unit,
                                                    host_share& share) const noexcept {
    const platform& pl = s_->plat;
    const application& app = s_->app;
    const configuration c{m, 1, nodes, pol};
    unit = Model::unit(pl, app, c, alpha_at(m), ocol_at(m), comm_phase, dma_lat_, dma_spb_);
    if constexpr (Model::sharing_layers) {
        if (shared_) return false;
        share = detail::host_sharing(unit, app, c, pl.hpu_contexts, rounds_at(m), detail::share_of(app, c).units,
                                     [this](int k) { return alpha_at(k); });
    } else {
        share = detail::unshared(unit);
    }
    return true;
}

// A GPU row's grid terms (docs/MODEL.md §7): inactive unless the platform's accelerators hold several blocks.
grid_terms evaluator::grid_of(const configuration& c, const dedicated_terms& unit, const host_share& share) const noexcept {
    grid_terms g;
    if (slot_factors_.empty()) return g;
    const int S = s_->plat.apus;
    g.apus = S;
    g.factor_by_count = slot_factors_.data();
    g.last_count = static_cast<std::int64_t>(slot_factors_.size()) - 1;
    g.m = c.m;
    g.work = share.per_unit * unit.apu_work / unit.apu_split;
    g.sliced = c.share == accelerator_sharing::time_sliced && c.m > 1;
    g.from = c.share == accelerator_sharing::time_sliced ? S : static_cast<double>(S) / c.m;
    g.busy_fixed = g.sliced ? 0.0 : share.startup;  // time-sliced: the slice curve holds the start-up
    g.busy_work = detail::node_units(s_->app, c) * unit.apu_work / unit.apu_split;
    return g;
}

// Time-sliced with m > 1: the processes' kernels alternate, so each off-load waits for the switch to its own
// context on its own path too (not only in the accelerator's busy time): the host phase that follows a kernel
// cannot hide the switch in front of the next one (docs/MODEL.md §7).
void evaluator::slice_switch(dedicated_terms& unit) const noexcept { unit.offload_fixed += switch_per_offload(); }

// One off-load's switches, time-sliced with m > 1: one per wait of its host for the accelerator.
double evaluator::switch_per_offload() const noexcept { return s_->plat.T_slice_switch * s_->app.waits_per_offload; }

p_curve time_sliced_curve(const dedicated_terms& unit, double startup, double node_units, double switch_s) noexcept {
    p_curve k;
    const double busy = node_units;
    k.a = startup + busy * (unit.C_apu + unit.N * switch_s);
    k.b = busy * unit.apu_work / unit.apu_split;
    k.c = 0.0;
    return k;
}

// The time-sliced bound of configuration c (only called for time_sliced with m > 1).
p_curve evaluator::slice_curve(const configuration& c, const dedicated_terms& unit, const host_share& share) const noexcept {
    return time_sliced_curve(unit, share.startup, detail::node_units(s_->app, c), switch_per_offload());
}

// Out of the dedicated path's way (kept out of line: the common evaluation stays as small as before).
template <class Model>
[[gnu::noinline]] prediction evaluator::sliced_prediction(const configuration& c, double comm_phase,
                                                          bool extrapolated) const noexcept {
    dedicated_terms unit;
    host_share share;
    layers<Model>(c.m, c.nodes, c.pol, comm_phase, unit, share);
    if constexpr (Model::sharing_layers) slice_switch(unit);
    prediction out = dedicated_prediction(unit, share, p_curve(unit, share, fixed_part(share)), c.p,
                                          Model::communication && extrapolated);
    const grid_terms g = grid_of(c, unit, share);
    with_grid(out, g, c.p);
    wait_for_slices(out, slice_curve(c, unit, share)(c.p) + g.slice_extra(c.p));
    return out;
}

template <class Model>
row evaluator::row_as(const evaluator& ev, int m, int nodes, policy pol, double comm_phase, bool extrapolated,
                      accelerator_sharing sh) noexcept {
    dedicated_terms unit;
    host_share share;
    if (ev.layers<Model>(m, nodes, pol, comm_phase, unit, share)) {
        const bool ex = Model::communication && extrapolated;
        const configuration c{m, 1, nodes, pol, sh};
        const bool sliced = sh == accelerator_sharing::time_sliced && m > 1;
        if constexpr (Model::sharing_layers)
            if (sliced) ev.slice_switch(unit);
        row r = sliced ? row(unit, share, ev.slice_curve(c, unit, share), ex) : row(unit, share, ex);
        r.grid_ = ev.grid_of(c, unit, share);
        return r;
    }
    return row(*ev.shared_, ev.s_->app, configuration{m, 1, nodes, pol}, unit, extrapolated);
}

template <class Model>
[[gnu::always_inline]] inline prediction evaluator::evaluate_inline(const configuration& c, double comm_phase,
                                                                   bool extrapolated) const noexcept {
    dedicated_terms unit;
    host_share share;
    if (layers<Model>(c.m, c.nodes, c.pol, comm_phase, unit, share)) {
        if (c.share == accelerator_sharing::time_sliced && c.m > 1) [[unlikely]]
            return sliced_prediction<Model>(c, comm_phase, extrapolated);  // by value: unit and share stay in registers here
        prediction out = dedicated_prediction(unit, share, p_curve(unit, share, fixed_part(share)), c.p,
                                              Model::communication && extrapolated);
        if (!slot_factors_.empty()) [[unlikely]]
            with_grid(out, grid_of(c, unit, share), c.p);  // the terms row_of(...).at(c.p) adds, from these layers
        return out;
    }
    return row(*shared_, s_->app, configuration{c.m, 1, c.nodes, c.pol}, unit, extrapolated).at(c.p);
}

template <class Model>
prediction evaluator::evaluate_as(const evaluator& ev, const configuration& c, double comm_phase, bool extrapolated) noexcept {
    return ev.evaluate_inline<Model>(c, comm_phase, extrapolated);
}

template <class Model>
double evaluator::comm_as(const evaluator& ev, int m, int nodes, bool& extrapolated) noexcept {
    if constexpr (Model::communication) return ev.communication(m, nodes, extrapolated);
    return 0.0;
}

template <class Model>
prediction evaluator::call_as(const evaluator& ev, const configuration& c) noexcept {
    bool extrapolated = false;
    const double comm = comm_as<Model>(ev, c.m, c.nodes, extrapolated);
    return ev.evaluate_inline<Model>(c, comm, extrapolated);
}

// The evaluation of each model, instantiated once: the evaluator runs the one its kind names.
evaluator::dispatch evaluator::dispatch_of(model_kind kind) {
    const auto of = []<class Model>(Model) {
        return dispatch{&call_as<Model>, &comm_as<Model>, &row_as<Model>, &evaluate_as<Model>, &prepare<Model>};
    };
    static const std::pair<model_kind, dispatch> models[] = {{detail::eq11_model::kind, of(detail::eq11_model{})},
                                                             {detail::layered_model::kind, of(detail::layered_model{})}};
    for (const auto& [k, d] : models)
        if (k == kind) return d;
    throw error("mmgp::evaluator: unknown model_kind " + std::to_string(static_cast<int>(kind)));
}

row::row(const dedicated_terms& unit, const host_share& share, bool extrapolated) noexcept
    : unit_(unit),
      share_(share),
      extrapolated_(extrapolated),
      curve_(unit, share, fixed_part(share)) {}

row::row(const detail::time_shared_cores& ts, const application& app, const configuration& c, const dedicated_terms& unit,
         bool extrapolated) noexcept
    : unit_(unit), ts_(&ts), app_(&app), c_(c), extrapolated_(extrapolated), closed_form_(false) {}

row::row(const dedicated_terms& unit, const host_share& share, const p_curve& slice, bool extrapolated) noexcept
    : row(unit, share, extrapolated) {
    slice_ = slice;
    sliced_ = true;
}

prediction row::at(int p) const noexcept {
    if (!ts_) {
        prediction out = dedicated_prediction(unit_, share_, curve_, p, extrapolated_);
        with_grid(out, grid_, p);
        if (sliced_) wait_for_slices(out, slice_(p) + grid_.slice_extra(p));
        return out;
    }
    configuration c = c_;
    c.p = p;
    prediction out;
    breakdown& b = out.parts;
    b = ts_->run(*app_, c, unit_, detail::share_of(*app_, c).procs);
    b.extrapolated = extrapolated_;
    out.time_s = b.host + b.accelerator + b.offload + b.context_switch + b.communication + b.spin + b.startup;
    return out;
}

}  // namespace mmgp
