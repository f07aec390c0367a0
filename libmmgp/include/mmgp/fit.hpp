// mmgp/fit.hpp — application parameters from measured runs of any program (least squares).
//
//   auto runs = mmgp::read_runs("runs.csv");              // m, p, nodes, units, time_s per row: measurements
//   mmgp::fit_result f = mmgp::fit_application(mmgp::load_platform("qs20"), runs, {}, "runs.csv");
//   f.app.T_apu; f.params[1].ci95_lo; f.residuals[0].err_pct;
//
// With the platform held fixed the model's time is linear in (T_hpu, T_apu, C_apu, N, N*g); the
// fitter computes each run's coefficients by evaluating the model itself on unit applications, so
// fitting and predicting share one formula.
#pragma once

#include "mmgp/export.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mmgp/fit_values.hpp"
#include "mmgp/model.hpp"

MMGP_API_BEGIN
namespace mmgp {

/// Reads runs from CSV (a header row naming the columns m, p, nodes, units, time_s; optional policy, censored
/// (0 or 1) and bound_s; other columns ignored, but one a letter from a known name refused; '#' comments) or JSON ({"runs": [{"m":..,"p":..,"nodes":..,"units":..,"time_s":..}]} or a bare
/// array), grouped into measurements: one per distinct configuration, units, work and policy stated (a row without
/// a policy column apart from one with), in the order each first appears, its runs in the file's order (each run's
/// `order` its row's place among the rows, `where` its row or JSON path). Throws input_error naming file, row and
/// column (CSV) or JSON path.
std::vector<measurement> read_runs(const std::string& path);
/// The same, with the CSV header's columns it does not read in `ignored` (a column one edit from a known name
/// of four letters or more — nodse, polcy, unit — is refused as a likely typo instead).
std::vector<measurement> read_runs(const std::string& path, std::vector<std::string>* ignored);
/// The same from text; `file` names it in errors; `json` selects the format.
std::vector<measurement> parse_runs(const std::string& text, const std::string& file, bool json);
std::vector<measurement> parse_runs(const std::string& text, const std::string& file, bool json,
                                     std::vector<std::string>* ignored);

/// Whether fit_options::fixed can hold the parameter `name`: T_hpu, T_apu, C_apu, g or T_start (N is held
/// through fit_options::N).
bool fixable_parameter(std::string_view name) noexcept;

/// Fits the application parameters to every run of `runs` (in their order) on platform `pl` by (non-negative) least squares on
/// relative errors, with 95 % confidence intervals. Throws input_error (naming `file`) when there are
/// fewer runs than parameters or a run is infeasible on the platform.
fit_result fit_application(const platform& pl, const std::vector<measurement>& runs, const fit_options& opt,
                           const std::string& file);

/// Fits every structure the held parts allow (decomposition, policy, spin limit, T_start, N) and keeps the
/// one that predicts best: with at least cv_min_configurations distinct configurations, the lowest mean
/// |error| of each configuration predicted from the others, the fewest parameters within one standard error of
/// it; with fewer, the lowest BIC (squared log residuals over the noise, clipped at 3 noise deviations, plus
/// k ln n). Censored runs are not fitted and do not score. With fewer configurations than free parameters, a
/// candidate holds some of g, C_apu, T_hpu at 0.
/// Ties go to fewer parameters, then to the earlier candidate (task, edtlp, spin 0, held). Throws what
/// fit_application throws when no candidate fits.
structure_selection select_structure(const platform& pl, const std::vector<measurement>& runs, const fit_options& base,
                                     const structure_held& held, const std::string& file,
                                     const selection_options& sel = {});

/// The fitted application as a profile (schema mmgp/1, kind application) with each parameter's
/// confidence interval and the residuals as provenance.
std::string application_json(const fit_result& f, const std::string& data_file);
/// The same with the structure selection's choice and candidates under statistics.structure.
std::string application_json(const structure_selection& s, const std::string& data_file);

}  // namespace mmgp
MMGP_API_END
