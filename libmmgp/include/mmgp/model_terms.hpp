// mmgp/model_terms.hpp — the values the model is made of and answers with: the model's kind, a prediction and
// its breakdown, and the terms of its layers (docs/MODEL.md) — one unit on dedicated hardware
// (dedicated_terms), how processes share the host (host_share), a row's time as a function of p (p_curve).
// Included by mmgp/model.hpp (the evaluator) and by the layers themselves (libmmgp/src/model/*.hpp), which
// need the values without the evaluator.
#pragma once

#include "mmgp/export.hpp"
#include "mmgp/profile.hpp"

#include <cstdint>
#include <string_view>

MMGP_API_BEGIN
namespace mmgp {

/// `eq11`: [H] Eq. 11 verbatim (single node). `mmgp`: the engine's model (docs/MODEL.md §3).
enum class model_kind { eq11, mmgp };
std::string_view to_string(model_kind k) noexcept;
/// Parses "eq11" or "mmgp"; false when unknown.
bool parse_model(std::string_view text, model_kind& out) noexcept;

/// Where the predicted time goes (seconds); the five parts add up to the total.
struct breakdown {
    double host = 0.0;            ///< host computation, with contention and time sharing
    double accelerator = 0.0;     ///< accelerator computation (split part / p + sequential part)
    double offload = 0.0;         ///< off-load round trips, gaps p*g, non-overlapped transfers
    double context_switch = 0.0;  ///< host context switches
    double communication = 0.0;   ///< O_col and the cluster communication term
    double spin = 0.0;            ///< spin-wait convoys on time-shared cores (docs/MODEL.md §4)
    double startup = 0.0;         ///< process start-up (application T_start; on time-shared cores + N_start's switches and convoys)
    bool extrapolated = false;    ///< a communication cost came from the fitted model, not a table
};

/// A predicted time and its breakdown.
struct prediction {
    double time_s = 0.0;
    breakdown parts;
};

/// One process's time for one unit of work on dedicated hardware, as a function of p (the model's first
/// layer, docs/MODEL.md §1–§3): host + accelerator(p) + offload(p) + context_switch + communication.
struct dedicated_terms {
    double host = 0.0;            ///< α(m)·T_hpu
    double apu_work = 0.0;        ///< accelerator work that splits (s) ...
    double apu_split = 1.0;       ///< ... over apu_split·p APUs
    double C_apu = 0.0;           ///< accelerator work that does not split (s)
    double N = 0.0;               ///< off-loads per unit
    double offload_fixed = 0.0;   ///< per off-load, independent of p: O_offload (+ l, − g under per_extra_apu)
    double per_apu = 0.0;         ///< per off-load and APU: the gap g
    double over_p = 0.0;          ///< per off-load, split over p: β·dma_bytes
    double context_switch = 0.0;  ///< N·T_csw
    double communication = 0.0;   ///< N·(O_col(m) + C(nodes, m))

    double accelerator(double p) const noexcept { return apu_work / (apu_split * p) + C_apu; }
    double offload(double p) const noexcept { return N * (offload_fixed + per_apu * p + over_p / p); }
};

/// How the processes of one configuration share the host (the second layer, docs/MODEL.md §3 "Host
/// sharing"): the parts that do not depend on p, and how many times one unit's accelerator and off-load
/// terms are paid.
struct host_share {
    double host = 0.0, context_switch = 0.0, communication = 0.0, startup = 0.0;
    double per_unit = 1.0;  ///< factor of accelerator(p) + offload(p)
};

/// The time of a dedicated-hardware row as a function of p: fixed + per_unit·(accelerator(p) + offload(p))
/// regrouped as a + b/p + c·p (one division per p). row::time and row::at compute it the same way.
struct p_curve {
    double a = 0.0;  ///< fixed + per_unit·(C_apu + N·offload_fixed)
    double b = 0.0;  ///< per_unit·(apu_work / apu_split + N·over_p)
    double c = 0.0;  ///< per_unit·N·per_apu
    p_curve() = default;
    p_curve(const dedicated_terms& u, const host_share& s, double fixed) noexcept
        : a(fixed + s.per_unit * (u.C_apu + u.N * u.offload_fixed)),
          b(s.per_unit * (u.apu_work / u.apu_split + u.N * u.over_p)),
          c(s.per_unit * (u.N * u.per_apu)) {}
    double operator()(int p) const noexcept { return a + b / p + c * p; }
};

/// A GPU's grids beyond one block per accelerator (docs/MODEL.md §7): what the blocks resident on an SM add to a
/// row's time. Inactive (`from` infinite) where an accelerator holds one block (apu_slots = 1).
struct grid_terms {
    double from = 1e308;  ///< the row's time changes for p above this: apus (time-sliced), apus/m (otherwise)
    int apus = 2147483647;  ///< S: the accelerators the blocks spread over (the largest int: inactive)
    /// f(c) for c = ⌈blocks/S⌉ = 0..last_count: the slot curve at the most loaded accelerator's count (the
    /// evaluator's table, to the curve's last point at least); beyond it blocks run in waves at its throughput.
    const double* factor_by_count = nullptr;
    std::int64_t last_count = 0;
    double work = 0.0;    ///< the p-split accelerator work of the row's time (work/p at one block per accelerator)
    bool sliced = false;
    /// Not time-sliced: the accelerators' busy bound, busy_fixed + busy_work·f(m·p/S)/(m·p), the blocks of all m
    /// processes sharing the accelerators' slots. Time-sliced: busy_work is the slice curve's p-split work.
    double busy_fixed = 0.0, busy_work = 0.0;
    int m = 1;
    /// f at `blocks` blocks over the S accelerators, any count of them.
    double factor(std::int64_t blocks) const noexcept {
        const std::int64_t c = (blocks + apus - 1) / apus;
        return c <= last_count ? factor_by_count[c]
                               : factor_by_count[last_count] * static_cast<double>(c) / static_cast<double>(last_count);
    }
    /// The dedicated time's addition at p: work·(f(p/S) − 1)/p.
    double dedicated_extra(int p) const noexcept { return p > apus ? work * (factor(p) - 1.0) / p : 0.0; }
    /// Not time-sliced: the busy bound at p (a lower bound of the time).
    double busy(int p) const noexcept {
        const std::int64_t blocks = std::int64_t{m} * p;
        return busy_fixed + busy_work * factor(blocks) / static_cast<double>(blocks);
    }
    /// Time-sliced: the slice curve's addition at p (one grid at a time, through the same curve).
    double slice_extra(int p) const noexcept { return p > apus ? busy_work * (factor(p) - 1.0) / p : 0.0; }
};

}  // namespace mmgp
MMGP_API_END
