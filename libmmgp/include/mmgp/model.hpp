// mmgp/model.hpp — predicted run time of one mapping (m, p, nodes), with its breakdown.
//
//   mmgp::scenario s = mmgp::load_scenario("pbpi-qs20");
//   mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
//   mmgp::prediction t = ev({4, 4, 1, mmgp::policy::edtlp});   // t.time_s, t.parts.host, ...
//
// Evaluation is pure, allocation-free and noexcept; all checking happens when the evaluator is built.
#pragma once

#include "mmgp/export.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "mmgp/profile.hpp"

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

MMGP_API_END
namespace detail {
struct time_shared_cores;  // the library's own (not exported): docs/MODEL.md §4
}
MMGP_API_BEGIN

class evaluator;

/// The configurations of one (m, nodes, policy) as p varies, with everything that does not depend on p
/// resolved once: the search evaluates a row at a time. On dedicated hardware the time is
/// fixed + per_unit·(accelerator(p) + offload(p)); on time-shared cores (docs/MODEL.md §4) each p is
/// evaluated by that layer.
class row {
public:
    /// Predicted time of p (the same number as at(p).time_s).
    double time(int p) const noexcept {
        if (!closed_form_) return at(p).time_s;
        const double t = curve_(p);
        return sliced_ ? std::max(t, slice_(p)) : t;
    }
    /// Predicted time of p and its breakdown.
    prediction at(int p) const noexcept;
    /// True when time() is the dedicated-hardware form (no per-p branching).
    bool closed_form() const noexcept { return closed_form_; }

private:
    friend class evaluator;
    row(const dedicated_terms& unit, const host_share& share, bool extrapolated) noexcept;
    row(const dedicated_terms& unit, const host_share& share, const p_curve& slice, bool extrapolated) noexcept;
    row(const detail::time_shared_cores& ts, const application& app, const configuration& c, const dedicated_terms& unit,
        bool extrapolated) noexcept;
    dedicated_terms unit_;
    host_share share_;
    const detail::time_shared_cores* ts_ = nullptr;
    const application* app_ = nullptr;
    configuration c_;
    bool extrapolated_ = false, closed_form_ = true;
    p_curve curve_;  // closed form: the time of p
    p_curve slice_;  // time-sliced accelerators (sliced_): the accelerator's busy time, a lower bound of the time
    bool sliced_ = false;
};

/// Evaluates one model on one platform and application. Build once, call many times.
///
/// The model is a sum of layers (docs/MODEL.md): (a) one process, one unit of work, on dedicated hardware
/// ([H] Eq. 11, [C] Eq. 1–6, the transfer and communication terms); (b) how m processes share H host
/// contexts; (c) on a platform with `cores`, threads time-sharing those cores instead of (b).
class evaluator {
public:
    /// Precomputes α(m), O_col(m), the communication models and the time-shared layer's constants for the
    /// scenario's search range. Throws model_error (an input_error naming the profile key) if the scenario
    /// cannot be evaluated (tables not covering the space, no transfer cost, eq11 asked for several nodes).
    evaluator(const scenario& s, model_kind kind);
    /// The evaluator keeps a reference to the scenario: a temporary would dangle.
    evaluator(const scenario&&, model_kind) = delete;

    /// Predicted time of configuration c (c must lie in the scenario's search space).
    prediction operator()(const configuration& c) const noexcept;

    /// Per-phase communication cost (s) of one process with m processes per node on `nodes`
    /// nodes, excluding O_col; sets `extrapolated` when the fitted model was used.
    double comm_per_phase(int m, int nodes, bool& extrapolated) const noexcept;

    /// The row of (m, nodes, pol, share), p varying, with the communication cost already known.
    row row_of(int m, int nodes, policy pol, double comm_phase, bool extrapolated,
               accelerator_sharing share = accelerator_sharing::dedicated) const noexcept;

    /// Predicted time with the communication cost already known: row_of(...).at(c.p).
    prediction evaluate(const configuration& c, double comm_phase, bool extrapolated) const noexcept;

    model_kind kind() const noexcept { return kind_; }

    /// Where a value the model uses comes from another profile section than its own key (one line each;
    /// e.g. the application's T_offload_idle standing in for the platform's T_wake). Empty when none.
    const std::vector<std::string>& notes() const noexcept { return notes_; }

private:
    bool layers(int m, int nodes, policy pol, double comm_phase, dedicated_terms& unit, host_share& share) const noexcept;
    p_curve slice_curve(const configuration& c, const dedicated_terms& unit, const host_share& share) const noexcept;
    prediction sliced_prediction(const configuration& c, double comm_phase, bool extrapolated) const noexcept;
    prediction evaluate_inline(const configuration& c, double comm_phase, bool extrapolated) const noexcept;
    double alpha_at(int m) const noexcept;
    double ocol_at(int m) const noexcept;
    const scenario* s_;
    model_kind kind_;
    std::vector<double> alpha_;  // index m
    std::vector<double> ocol_;   // index m
    std::vector<int> rounds_;    // index m: processes per host context, ⌈m/H⌉
    std::vector<comm_model> models_;  // index by primitive
    std::vector<char> has_model_, has_table_;  // index by primitive
    double dma_lat_ = 0.0, dma_spb_ = 0.0;
    std::shared_ptr<const detail::time_shared_cores> shared_;  // set when the platform has `cores`
    std::vector<std::string> notes_;
};

/// The accelerator's busy time when m > 1 processes share it time-sliced (docs/MODEL.md §7): every process's
/// units, one kernel at a time, each off-load after a switch T_slice_switch: startup + m·u·(accelerator(p) +
/// N·T_slice_switch), as a p_curve (its c is 0). u: the units one process runs.
p_curve time_sliced_curve(const dedicated_terms& unit, double startup, int m, double units, double T_slice_switch) noexcept;

/// [H] Eq. 11 computed directly from the profile fields (no precomputation): the reference the
/// tests compare against. Requires α and O_col to cover c.m.
double eq11_time(const platform& pl, const application& app, int m, int p);

}  // namespace mmgp
MMGP_API_END
