// mmgp/model.hpp — predicted run time of one mapping (m, p, nodes), with its breakdown.
//
//   mmgp::scenario s = mmgp::load_scenario("pbpi-qs20");
//   mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
//   mmgp::prediction t = ev({4, 4, 1, mmgp::policy::edtlp});   // t.time_s, t.parts.host, ...
//
// Evaluation is pure, allocation-free and noexcept; all checking happens when the evaluator is built.
#pragma once

#include "mmgp/export.hpp"

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

/// Evaluates one model on one platform and application. Build once, call many times.
class evaluator {
public:
    /// Precomputes α(m), O_col(m) and the communication models for m up to the scenario's
    /// search range. Throws input_error if the scenario cannot be evaluated (tables not
    /// covering the space, no communication data, eq11 asked for several nodes).
    evaluator(const scenario& s, model_kind kind);
    /// The evaluator keeps a reference to the scenario: a temporary would dangle.
    evaluator(const scenario&&, model_kind) = delete;

    /// Predicted time of configuration c (c must lie in the scenario's search space).
    prediction operator()(const configuration& c) const noexcept;

    /// Per-phase communication cost (s) of one process with m processes per node on `nodes`
    /// nodes, excluding O_col; sets `extrapolated` when the fitted model was used.
    double comm_per_phase(int m, int nodes, bool& extrapolated) const noexcept;

    /// Predicted time with the communication cost already known (the search hoists it out of p).
    prediction evaluate(const configuration& c, double comm_phase, bool extrapolated) const noexcept;

    model_kind kind() const noexcept { return kind_; }

private:
    double alpha_at(int m) const noexcept;
    double ocol_at(int m) const noexcept;
    const scenario* s_;
    model_kind kind_;
    std::vector<double> alpha_;  // index m
    std::vector<double> ocol_;   // index m
    std::vector<comm_model> models_;  // index by primitive
    std::vector<char> has_model_;
    double dma_lat_ = 0.0, dma_spb_ = 0.0;
};

/// [H] Eq. 11 computed directly from the profile fields (no precomputation): the reference the
/// tests compare against. Requires α and O_col to cover c.m.
double eq11_time(const platform& pl, const application& app, int m, int p);

}  // namespace mmgp
MMGP_API_END
