// mmgp/validate.hpp — predicted against measured: per-case error and a summary.
//
//   mmgp::validation_report r = mmgp::run_validation("validation/paper/edtlp-table1.json", mmgp::model_kind::mmgp);
//   r.mean_abs_err_pct; r.cases[0].predicted_s;
#pragma once

#include "mmgp/export.hpp"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "mmgp/measurement.hpp"
#include "mmgp/model.hpp"

MMGP_API_BEGIN
namespace mmgp {

/// One measurement and what the model predicts for it.
struct validation_case {
    std::string label;   ///< e.g. "m=3 p=1 nodes=1 os"
    std::string group;   ///< cases of one group are ranked against each other (optimum, regret)
    /// The configuration, its repetitions when given (`runs`: censored ones when the case is), and where the
    /// measurement came from (`source`). Its median_ci90() is how well the runs pin their median down.
    measurement measured;
    /// The measured time the prediction is compared with (the file's measured_s: the median of the runs, when given).
    double measured_s = 0.0;
    /// The run was stopped at a bound: measured_s is a lower bound of its time. Predicted right when
    /// the prediction is at least the bound; otherwise err_pct is the (negative) miss against the bound.
    bool censored = false;
    double predicted_s = 0.0;
    double err_pct = 0.0;  ///< 100 * (predicted - measured) / measured (censored: 0 when predicted >= bound)
    breakdown parts;
    /// "fitted" (the application profile was fitted on this case), "held_back" (predicted only), or "".
    std::string role;
    const configuration& c() const noexcept { return measured.c; }
};

/// |error| statistics of a set of (uncensored) cases.
struct error_stats {
    int cases = 0;
    double mean_abs_err_pct = 0.0, max_abs_err_pct = 0.0, std_abs_err_pct = 0.0;
};

/// Per-group ranking: is the predicted optimum the measured one, and what does trusting the model cost?
struct group_summary {
    std::string group;
    int cases = 0;
    std::string predicted_best, measured_best;  ///< labels
    bool optimal_hit = false;  ///< the predicted best configuration is the measured best one
    double regret_pct = 0.0;   ///< 100 * (measured(predicted best) - measured best) / measured best
    error_stats errors;        ///< |error| over the group's uncensored cases
    int censored = 0;          ///< censored cases in the group
    int censored_right = 0;    ///< of which predicted at least at their bound
    /// Every censored case is predicted slower than every uncensored case of the group (true without censored cases).
    bool censored_ranked_last = true;
};

/// A whole validation run.
struct validation_report {
    std::string name;
    std::string file;
    model_kind model = model_kind::mmgp;
    std::vector<validation_case> cases;
    std::vector<group_summary> groups;
    double mean_abs_err_pct = 0.0;
    double max_abs_err_pct = 0.0;
    double std_abs_err_pct = 0.0;  ///< sample standard deviation of |error| (0 with one case)
    bool optimal_hit = true;       ///< every group's optimum predicted right
    double regret_pct = 0.0;       ///< worst regret over groups
    // The |error| statistics above are over the uncensored cases; `cases.size()` counts all.
    int uncensored = 0;
    int censored = 0;              ///< censored cases (measured_s is a bound)
    int censored_right = 0;        ///< censored cases predicted at least at their bound
    bool censored_ranked_last = true;  ///< in every group, censored cases predicted slower than all others
    error_stats fitted, held_back;     ///< split by role (cases 0 when no case has that role)
    // The measurements' own uncertainty, over the uncensored cases that have a ci90 (5 runs or more):
    int with_ci = 0;                   ///< such cases
    int within_ci = 0;                 ///< of which the prediction lies inside the interval
    double mean_ci_halfwidth_pct = 0;  ///< mean of 100 * (hi - lo) / 2 / measured_s
};

/// Reads a validation file (schema "mmgp/1", kind "validation") and predicts every case.
/// Throws input_error on bad input (naming file and JSON path).
validation_report run_validation(const std::string& path, model_kind kind);
/// run_validation() with what-if edits applied to every case's scenario, after the case's own patches.
validation_report run_validation(const std::string& path, model_kind kind, const scenario_edits& edits);

}  // namespace mmgp
MMGP_API_END
