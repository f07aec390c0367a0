// Internal: the application fit's linear view of the model, shared by mmgp fit and mmgp tune.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "mmgp/fit_values.hpp"
#include "mmgp/profile.hpp"

namespace mmgp::detail {

/// One run of a runs file as the fit reads it: a row of its least squares, with its measurement's configuration,
/// units and work. The readers read rows and group them into measurements (group_rows); the fit takes the
/// measurements' runs back in order (rows_of).
struct run_row {
    configuration c;         ///< m, p, nodes, policy (policy defaults to the fit's)
    std::int64_t units = 1;  ///< task units of this run (U); 1 for data decomposition
    double time_s = 0.0;     ///< measured wall time, seconds > 0
    std::string where;       ///< "row 4" or "/runs/3", for messages
    bool has_policy = false;
    bool has_sharing = false; ///< the row states its sharing mode (CSV column sharing); else the platform's first
    bool censored = false;   ///< stopped at its bound (CSV column censored = 1): the time is at least time_s
    double bound_s = 0;      ///< the bound it ran under (CSV column bound_s; 0: not stated)
    std::int64_t work = 0;   ///< the amount of work it was run with (CSV column work; 0: not stated)
    std::size_t order = 0;   ///< its place among the rows read

    /// The run as its measurement holds it.
    measurement::run run() const;
};

/// Rows grouped into measurements, one per distinct (configuration, units, work, policy stated), in the order each
/// first appears; each run keeps its row's place (order) and where.
std::vector<measurement> group_rows(const std::vector<run_row>& rows);
/// The runs of measurements as rows, in their order.
std::vector<run_row> rows_of(const std::vector<measurement>& ms);

/// Indices of the terms: time = base + x . (T_hpu, T_apu, C_apu, N*g, N, T_start).
enum fit_term : std::size_t { term_T_hpu, term_T_apu, term_C_apu, term_Ng, term_N, term_T_start, term_base };
inline constexpr std::size_t fit_term_count = 6;

/// The model's coefficients of configuration c with `units` task units on platform `pl`, the platform held
/// fixed: the model evaluated on unit applications built from `shape` (its decomposition, scaling, spin limit,
/// N_start, gap charge, O_col, communication and transfers; its six fitted fields are replaced). The last entry
/// (term_base) is what no parameter scales, e.g. the start-up's N_start switches and convoys. Throws
/// input_error (the platform's tables not covering c).
std::array<double, fit_term_count + 1> fit_coefficients(const platform& pl, const application& shape,
                                                        const configuration& c, std::int64_t units);

/// A time-sliced run of several processes waits for the accelerator's busy time: its model time is the larger of
/// two terms, which the fit's linear form does not price (mmgp fit sets such runs aside and prices them with what
/// the others fit, set_aside_sliced; the tune's fit with a profile leaves them out).
inline bool waits_for_busy_time(const configuration& c) {
    return c.share == accelerator_sharing::time_sliced && c.m > 1;
}

/// Moves the time-sliced runs of several processes out of `runs` (their order kept) and returns them, unless no run
/// would be left: then none (the fit refuses them, naming the row).
std::vector<run_row> set_aside_sliced(std::vector<run_row>& runs);

/// One run's coefficients (fit_coefficients).
using fit_row = std::array<double, fit_term_count + 1>;

/// A run's configuration: m, p, nodes, units, policy, sharing mode (repetitions of a configuration share it).
using run_key = std::tuple<int, int, int, std::int64_t, int, int>;
inline run_key key_of(const run_row& r) {
    return {r.c.m, r.c.p, r.c.nodes, r.units, static_cast<int>(r.c.pol), static_cast<int>(r.c.share)};
}

/// The coefficient rows of runs under a fit's shape (its decomposition, scaling, spin limit and N_start), each
/// configuration and shape evaluated once: repetitions, and the structure selection's candidates that share a
/// shape, reuse the rows.
class fit_row_cache {
public:
    explicit fit_row_cache(const platform& pl) : pl_(pl) {}
    /// rows[i] for runs[i]; throws what fit_coefficients throws.
    std::vector<fit_row> rows(const std::vector<run_row>& runs, const fit_options& opt);

private:
    const platform& pl_;
    std::map<std::tuple<int, int, std::int64_t, double, run_key>, fit_row> cache_;
};

/// The model's time of a run with coefficients x for application a: the linear form fit_coefficients gives.
double fit_time(const fit_row& x, const application& a);

/// The runs a fit uses: the uncensored ones (the others counted in n_censored), each with a policy (pol where
/// the run names none).
std::vector<run_row> runs_to_fit(const std::vector<run_row>& runs_in, policy pol, std::size_t& n_censored);
/// Refuses runs of more than one amount of work (CSV column work, as mmgp tune --work records short and full runs):
/// a fit models one program run, and runs of another size are not repetitions of it. input_error naming `file`, the
/// first row whose work differs from the first row's, and both values.
void check_one_work(const std::vector<run_row>& runs, const std::string& file);
/// The rows a fit reads from `measured` (rows_of), of one amount of work (check_one_work), each under a sharing
/// mode of `pl`: the row's own (refused, naming the row, when the platform does not have it), else the platform's
/// first, the mode mmgp launch and mmgp tune run by default.
std::vector<run_row> fit_rows_of(const platform& pl, const std::vector<measurement>& measured, const std::string& file);

/// fit_application on runs already through runs_to_fit, rows[i] the coefficients of runs[i] under opt's shape.
/// The residuals come from the model itself (by_model) or from the rows' linear form (no evaluation: the
/// structure selection's many fits).
fit_result fit_rows(const platform& pl, const std::vector<run_row>& runs, const std::vector<fit_row>& rows,
                    const fit_options& opt, const std::string& file, std::size_t n_censored, bool by_model);

}  // namespace mmgp::detail
