// Layer (a) of the model: one process on dedicated hardware, per unit of work (docs/MODEL.md §1–§3).
// [H] Eq. 11 is written once, in eq11_terms(); [C] Eq. 1–6 extend it with the work split over nodes,
// task units, the gap charge and the transfer term in process_terms(). Pure, inline, allocation-free.
#pragma once

#include <algorithm>

#include "mmgp/model_terms.hpp"
#include "mmgp/profile.hpp"

namespace mmgp::detail {

/// α(k) (docs/MODEL.md §1): 1 for k = 1 ([H]: contention needs two threads), else the platform's form.
double alpha_of(const platform& pl, int k) noexcept;
/// O_col(k) (docs/MODEL.md §1): 0 for k = 1 unless a table gives it ([H]: no synchronisation with one process).
double ocol_of(const application& app, int k) noexcept;

/// [H] Eq. 11 term by term (docs/MODEL.md §1):
///   α(m)·T_hpu + T_apu/(m·p) + C_apu + N·(O_offload + T_csw + O_col(m) + p·g).
inline dedicated_terms eq11_terms(const platform& pl, const application& app, double alpha_m, double ocol_m, double m) noexcept {
    dedicated_terms t;
    t.host = alpha_m * app.T_hpu;
    t.apu_work = app.T_apu;
    t.apu_split = m;
    t.C_apu = app.C_apu;
    t.N = app.N;
    t.offload_fixed = pl.O_offload;
    t.per_apu = app.g;
    t.context_switch = app.N * pl.T_csw;
    t.communication = app.N * ocol_m;
    return t;
}

/// Where one process's accelerator work comes from (docs/MODEL.md §3, "Work of one process").
struct unit_share {
    double units = 1.0;       ///< u: units one process runs (1 with data decomposition)
    std::int64_t procs = 1;   ///< processes the units are dealt to (task decomposition)
};

/// u for configuration c: 1 (data); ⌈U/(nodes·m)⌉ (task, strong scaling); ⌈U/m⌉ (task, weak scaling).
inline unit_share share_of(const application& app, const configuration& c) noexcept {
    unit_share u;
    if (app.decomp == decomposition::data) return u;
    // nodes*m < 2^62: no overflow.
    u.procs = app.scale == scaling::weak ? c.m : static_cast<std::int64_t>(c.nodes) * c.m;
    u.units = static_cast<double>((app.units + u.procs - 1) / u.procs);
    return u;
}

/// The units the m processes of one node run together, which keep its accelerator busy: m·u, but never more than
/// the units there are (with m > U some processes have none). Data decomposition: m (each process its share).
inline double node_units(const application& app, const configuration& c) noexcept {
    const double together = static_cast<double>(c.m) * share_of(app, c).units;
    return app.decomp == decomposition::data ? together : std::min(together, static_cast<double>(app.units));
}

/// The per-unit terms of the default model (docs/MODEL.md §3): Eq. 11's terms with the accelerator work
/// split over the nodes (data, strong scaling) or over p only (task), the gap charged to p or p − 1 APUs,
/// the transfer term l + β·bytes/p ([C] Eq. 4–5) and the communication per phase C(nodes, m) ([C] §4.4).
inline dedicated_terms process_terms(const platform& pl, const application& app, const configuration& c, double alpha_m,
                                     double ocol_m, double comm_phase, double dma_latency, double dma_s_per_byte) noexcept {
    dedicated_terms t = eq11_terms(pl, app, alpha_m, ocol_m, c.m);
    t.apu_split = app.decomp == decomposition::task ? 1.0
                  : app.scale == scaling::strong  ? static_cast<double>(c.m) * c.nodes
                                                  : static_cast<double>(c.m);
    // A g measured as the slope per additional APU costs (p − 1)·g.
    if (app.g_charge == gap_charge::per_extra_apu) t.offload_fixed -= app.g;
    t.offload_fixed += dma_latency;
    t.over_p = dma_s_per_byte * app.dma_bytes;
    t.communication += app.N * comm_phase;
    return t;
}

}  // namespace mmgp::detail
