// mmgp/validate.hpp — predicted against measured: per-case error and a summary.
//
//   mmgp::validation_report r = mmgp::run_validation("validation/paper/edtlp-table1.json", mmgp::model_kind::mmgp);
//   r.mean_abs_err_pct; r.cases[0].predicted_s;
#pragma once

#include <string>
#include <vector>

#include "mmgp/model.hpp"

namespace mmgp {

/// One measured run and what the model predicts for it.
struct validation_case {
    std::string label;   ///< e.g. "m=3 p=1 nodes=1 os"
    std::string group;   ///< cases of one group are ranked against each other (optimum, regret)
    std::string source;  ///< where the measurement came from
    configuration c;
    double measured_s = 0.0;
    double predicted_s = 0.0;
    double err_pct = 0.0;  ///< 100 * (predicted - measured) / measured
    breakdown parts;
};

/// Per-group ranking: is the predicted optimum the measured one, and what does trusting the model cost?
struct group_summary {
    std::string group;
    int cases = 0;
    std::string predicted_best, measured_best;  ///< labels
    bool optimal_hit = false;  ///< the predicted best configuration is the measured best one
    double regret_pct = 0.0;   ///< 100 * (measured(predicted best) - measured best) / measured best
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
};

/// Reads a validation file (schema "mmgp/1", kind "validation") and predicts every case.
/// Throws input_error on bad input (naming file and JSON path).
validation_report run_validation(const std::string& path, model_kind kind);

}  // namespace mmgp
