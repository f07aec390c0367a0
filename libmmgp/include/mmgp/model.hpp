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

#include "mmgp/model_terms.hpp"
#include "mmgp/profile.hpp"

namespace mmgp {

namespace detail {
struct time_shared_cores;  // the library's own (not exported): docs/MODEL.md §4
}
MMGP_API_BEGIN

class evaluator;

/// The configurations of one (m, nodes, policy) as p varies, with everything that does not depend on p
/// resolved once: the search evaluates a row at a time. A row of a platform with `apu_slots` reads the
/// evaluator's slot curve: it must not outlive the evaluator that made it. On dedicated hardware the time is
/// fixed + per_unit·(accelerator(p) + offload(p)); on time-shared cores (docs/MODEL.md §4) each p is
/// evaluated by that layer.
class row {
public:
    /// Predicted time of p (the same number as at(p).time_s).
    double time(int p) const noexcept {
        if (!closed_form_) return at(p).time_s;
        const double t = curve_(p);
        if (p > grid_.from) return grid_time(t, p);
        return sliced_ ? std::max(t, slice_(p)) : t;
    }
    /// Predicted time of p and its breakdown.
    prediction at(int p) const noexcept;
    /// True when time() is the dedicated-hardware form (no per-p branching).
    bool closed_form() const noexcept { return closed_form_; }

private:
    friend class evaluator;
    // time(p) beyond the SMs (grid_ active): the same number as at(p).time_s.
    double grid_time(double t, int p) const noexcept {
        t += grid_.dedicated_extra(p);
        if (sliced_) return std::max(t, slice_(p) + grid_.slice_extra(p));
        return std::max(t, grid_.busy(p));
    }

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
    grid_terms grid_;  // a GPU's grids beyond one block per SM (inactive elsewhere)
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
    prediction operator()(const configuration& c) const noexcept { return run_.call(*this, c); }

    /// Per-phase communication cost (s) of one process with m processes per node on `nodes`
    /// nodes, excluding O_col; sets `extrapolated` when the fitted model was used. 0 under a model without the
    /// communication term (eq11).
    double comm_per_phase(int m, int nodes, bool& extrapolated) const noexcept {
        return run_.comm(*this, m, nodes, extrapolated);
    }

    /// The row of (m, nodes, pol, share), p varying, with the communication cost already known.
    row row_of(int m, int nodes, policy pol, double comm_phase, bool extrapolated,
               accelerator_sharing share = accelerator_sharing::dedicated) const noexcept {
        return run_.row_of(*this, m, nodes, pol, comm_phase, extrapolated, share);
    }

    /// Predicted time with the communication cost already known: row_of(...).at(c.p).
    prediction evaluate(const configuration& c, double comm_phase, bool extrapolated) const noexcept {
        return run_.evaluate(*this, c, comm_phase, extrapolated);
    }

    model_kind kind() const noexcept { return kind_; }

    /// Where a value the model uses comes from another profile section than its own key (one line each;
    /// e.g. the application's T_offload_idle standing in for the platform's T_wake). Empty when none.
    const std::vector<std::string>& notes() const noexcept { return notes_; }

private:
    // The model's functions (docs/MODEL.md; model/eq11_model.hpp, model/layered_model.hpp), chosen by name when
    // the evaluator is built: each is the evaluation below instantiated for one Model.
    struct dispatch {
        prediction (*call)(const evaluator&, const configuration&) noexcept;
        double (*comm)(const evaluator&, int, int, bool&) noexcept;
        row (*row_of)(const evaluator&, int, int, policy, double, bool, accelerator_sharing) noexcept;
        prediction (*evaluate)(const evaluator&, const configuration&, double, bool) noexcept;
        void (*prepare)(evaluator&);
    };
    static dispatch dispatch_of(model_kind kind);
    template <class Model> static prediction call_as(const evaluator& ev, const configuration& c) noexcept;
    template <class Model> static double comm_as(const evaluator& ev, int m, int nodes, bool& extrapolated) noexcept;
    template <class Model>
    static row row_as(const evaluator& ev, int m, int nodes, policy pol, double comm_phase, bool extrapolated,
                      accelerator_sharing share) noexcept;
    template <class Model>
    static prediction evaluate_as(const evaluator& ev, const configuration& c, double comm_phase, bool extrapolated) noexcept;
    template <class Model> static void prepare(evaluator& ev);
    template <class Model>
    bool layers(int m, int nodes, policy pol, double comm_phase, dedicated_terms& unit, host_share& share) const noexcept;
    template <class Model>
    prediction sliced_prediction(const configuration& c, double comm_phase, bool extrapolated) const noexcept;
    template <class Model>
    prediction evaluate_inline(const configuration& c, double comm_phase, bool extrapolated) const noexcept;
    void prepare_sharing();
    double communication(int m, int nodes, bool& extrapolated) const noexcept;
    p_curve slice_curve(const configuration& c, const dedicated_terms& unit, const host_share& share) const noexcept;
    grid_terms grid_of(const configuration& c, const dedicated_terms& unit, const host_share& share) const noexcept;
    void slice_switch(dedicated_terms& unit) const noexcept;
    double switch_per_offload() const noexcept;
    double alpha_at(int m) const noexcept;
    double ocol_at(int m) const noexcept;
    int rounds_at(int m) const noexcept;
    const scenario* s_;
    model_kind kind_;
    dispatch run_;
    std::vector<double> alpha_;  // index m
    std::vector<double> ocol_;   // index m
    std::vector<int> rounds_;    // index m: processes per host context, ⌈m/H⌉
    std::vector<comm_model> models_;  // index by primitive
    std::vector<char> has_model_, has_table_;  // index by primitive
    bool tables_chosen_ = true;  // the scenario's communication model: tables where they cover (else the model alone)
    double dma_lat_ = 0.0, dma_spb_ = 0.0;
    std::shared_ptr<const detail::time_shared_cores> shared_;  // set when the platform has `cores`
    std::vector<double> slot_factors_;  // apu_slots > 1: f(c), c = 0..slots, of the application's curve or the platform's
    std::vector<std::string> notes_;
};

/// The accelerator's busy time when m > 1 processes share it time-sliced (docs/MODEL.md §7): every process's
/// units, one kernel at a time, each off-load after its switches (`switch_s`: the platform's T_slice_switch times
/// the application's waits_per_offload): startup + n·(accelerator(p) + N·switch_s), as a p_curve (its c is 0).
/// n: the units the node's processes run together (detail::node_units: m·u, at most the units there are).
p_curve time_sliced_curve(const dedicated_terms& unit, double startup, double node_units, double switch_s) noexcept;

/// [H] Eq. 11 computed directly from the profile fields (no precomputation): the reference the
/// tests compare against. Requires α and O_col to cover c.m.
double eq11_time(const platform& pl, const application& app, int m, int p);

}  // namespace mmgp
MMGP_API_END
