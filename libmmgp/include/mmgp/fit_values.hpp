// mmgp/fit_values.hpp — the records of a fit: what to fit and hold, the fitted parameters and
// residuals, and the structure selection's candidates and choice. Included by mmgp/fit.hpp (the readers and
// the fit) and by the fit's linear view (libmmgp/src/fit/terms.hpp), which needs the records without the fit.
#pragma once

#include "mmgp/export.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mmgp/measurement.hpp"
#include "mmgp/profile.hpp"

MMGP_API_BEGIN
namespace mmgp {

/// What to fit and what to hold.
struct fit_options {
    decomposition decomp = decomposition::task;
    scaling scale = scaling::strong;
    policy pol = policy::edtlp;
    double N = 1.0;        ///< off-loading phases (per unit for task); held unless fit_N
    bool fit_N = false;    ///< also estimate N (needs runs where N*(O_offload + T_csw) is visible)
    bool fit_T_start = false;  ///< also estimate T_start, the start-up per process (needs runs with different units)
    /// The program's spin-wait limit, carried into the model and the fitted profile (application.spin_limit).
    std::int64_t spin_limit = 0;
    /// Off-loads of the start-up per process (application.N_start), carried into the model and the fitted profile.
    double N_start = 0.0;
    /// Times an off-load's host waits for the accelerator (application.waits_per_offload), carried into the fitted
    /// profile: it prices the time-sliced runs of several processes, which the linear fit does not take (their time
    /// is the larger of two terms): they are predicted with it, or give it (fit_waits).
    double waits_per_offload = 1.0;
    /// waits_per_offload is the count that prices the time-sliced runs of several processes best (least squares on
    /// their log times, the other parameters as fitted from the other runs), where there are any.
    bool fit_waits = false;
    /// Parameters held at a value instead of fitted: names T_hpu, T_apu, C_apu, g, T_start.
    std::vector<std::pair<std::string, double>> fixed;
    std::string name = "fitted";
};

/// One parameter of the fit.
struct fitted_param {
    std::string name;        ///< T_hpu, T_apu, C_apu, g, N or T_start
    double value = 0.0;
    double stderr_ = 0.0;    ///< standard error (0 when held or not identified)
    double ci95_lo = 0.0, ci95_hi = 0.0;
    bool fitted = false;      ///< estimated from the data (false: held at a given value)
    bool identified = true;   ///< false when the data cannot separate it from the others
    std::string note;         ///< why it is held or not identified, and which runs would identify it
};

/// Residual of one run under the fitted parameters.
struct fit_residual {
    configuration c;         ///< its measurement's configuration (the policy the fit's where the runs name none)
    std::int64_t units = 1;  ///< its measurement's task units
    measurement::run run;    ///< the run: its time, where it was read
    double predicted_s = 0.0;
    double err_pct = 0.0;  ///< 100 * (predicted - measured) / measured
};

/// The outcome of a fit.
struct fit_result {
    application app;                  ///< the fitted application profile
    std::vector<fitted_param> params;
    std::vector<fit_residual> residuals;
    int dof = 0;                      ///< runs minus fitted parameters
    double rms_err_pct = 0.0, max_abs_err_pct = 0.0;
    std::vector<std::string> warnings;
    int waits_runs = 0;  ///< time-sliced runs of several processes app.waits_per_offload was fitted to (0: held)
};

/// Which parts of a fit's structure the caller holds (given as options); the others are chosen from the runs
/// by select_structure.
struct structure_held {
    bool decomposition = true;  ///< fit_options::decomp (else task or data)
    bool policy = true;         ///< fit_options::pol, for runs without a policy (else edtlp or os)
    bool spin_limit = true;     ///< fit_options::spin_limit (else 0, structure_bounded_spin or unbounded)
    bool T_start = true;        ///< fit_options::fit_T_start (else held at 0 or fitted, with two unit counts)
    bool N = true;              ///< fit_options::N and fit_N (else held at fit_options::N or fitted, when identified)
};

/// The bounded spin candidate: the spin-then-block limit of the project's off-load runtime and of the
/// calibration harnesses that measure spin_pause and T_wake_busy (calibration/machine.hpp,
/// offload_spin_limit) — a program that spins a little before it blocks.
inline constexpr std::int64_t structure_bounded_spin = 4000;

/// What the structure selection assumes and when it cross-validates.
struct selection_options {
    /// Relative run-to-run noise (percent) the information criterion assumes where repetitions of the runs'
    /// configurations do not measure it (fewer than 3 degrees of freedom); chosen leave-one-sweep-out by
    /// validation/fit_structure.py (docs/COMMANDS.md "How fit chooses the structure").
    double noise_pct = 20.0;
    /// From this many distinct configurations on, the criterion is leave-one-configuration-out prediction.
    int cv_min_configurations = 6;
};

/// One candidate structure and how it does on the runs.
struct structure_candidate {
    fit_options opt;               ///< the candidate (the caller's options with the chosen parts set)
    std::string label;             ///< e.g. "data, os, spin 0, N held"
    bool fitted = false;           ///< false: the runs refuse it (why_not)
    std::string why_not;
    int k = 0;                     ///< parameters the fit estimated (identified)
    double rms_err_pct = 0.0, max_abs_err_pct = 0.0;  ///< training residuals
    /// The criterion (lower is better; meaningless when !fitted): under cross-validation the mean |error| in
    /// percent of each configuration predicted from the others, else the BIC.
    double score = 0.0;
    double score_se = 0.0;         ///< its standard error over the configurations (cross-validation only)
};

/// The outcome of select_structure.
struct structure_selection {
    std::vector<structure_candidate> candidates;  ///< fitted ones by score (the chosen first), then refused ones
    std::string criterion;         ///< "leave-one-configuration-out" or "BIC"
    double noise_pct = 0.0;        ///< the noise the BIC assumed
    std::string noise_source;      ///< "repetitions (df 12)" or "assumed (selection_options::noise_pct)"
    int configurations = 0;        ///< distinct configurations among the uncensored runs
    bool chose = false;            ///< false: every part was held (one candidate, nothing to choose)
    fit_result fit;                ///< the chosen candidate's fit, residuals by the model itself
    std::vector<std::string> warnings;  ///< training residuals above 25 % under the chosen structure
};

}  // namespace mmgp
MMGP_API_END
