// mmgp/measurement.hpp — one configuration as measured: its runs and what they say (Extra-P's Measurement). The
// record fit, tune and validate read and write: a runs file's rows of one configuration (mmgp/fit.hpp), the
// tuner's runs of one configuration of its space (mmgp/tune.hpp), a validation case's repetitions
// (mmgp/validate.hpp). Its statistics are the ones each of them uses: the median of the finished runs, the 90 %
// interval of that median and the run-to-run noise of their log times (mmgp/statistics.hpp underneath).
//
//   mmgp::measurement m{{2, 1, 1, mmgp::policy::edtlp}};
//   m.runs.push_back({3.1});  m.runs.push_back({2.9});  m.runs.push_back({3.0});
//   m.median_s();           // 3.0
//   m.log_variance();       // (1.4826 x MAD of the log times)^2: the noise of one run
#pragma once

#include "mmgp/export.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mmgp/profile.hpp"

MMGP_API_BEGIN
namespace mmgp {

/// How a run ended.
enum class run_outcome {
    ok,        ///< finished, exit status 0: its wall time is a measurement
    censored,  ///< stopped at its bound: the time is at least the bound
    failed,    ///< non-zero exit status: recorded, never used as a time
    cancelled, ///< stopped because the tune ended (or a job was cancelled) first: machine time spent, no evidence
};
std::string_view to_string(run_outcome o) noexcept;

/// One configuration and its runs.
struct measurement {
    /// One run of the configuration.
    struct run {
        double time_s = 0;  ///< wall time; censored: the bound it was stopped at (the time is at least this)
        run_outcome outcome = run_outcome::ok;
        /// Censored at a rival's bound below the bound factor's (tune_options::bound_noise_z): the time is at
        /// least the bound, and the configuration may run again (a run censored at its own bound rules it out).
        bool early = false;
        /// The run's work as a fraction of a full run's: 1, a full run; below 1, a short run
        /// (tune_options::short_work), evidence of the full time only through the carry-over.
        double work = 1;
        /// Censored sooner than its bound because its progress projected it clearly past the bound (mmgp tune
        /// --progress-regex): that bound, or, judged against a tighter one (tune_options::progress_chosen_z), the low
        /// end of its projection (never past its bound), which its time is at least (time_s: the machine time it
        /// spent). 0: time_s.
        double past_bound_s = 0;
        double bound_s = 0;  ///< the bound it ran under (a runs file's bound_s; 0: not stated)
        /// Its place among the runs it was read or recorded with (a runs file's rows, a tune's runs), from 0.
        std::size_t order = 0;
        std::string where{};  ///< where it is recorded, for messages: "row 4", "/runs/3"

        bool finished() const noexcept { return outcome == run_outcome::ok && time_s > 0; }
        bool is_censored() const noexcept { return outcome == run_outcome::censored; }
    };

    configuration c;         ///< m, p, nodes, policy, sharing mode
    std::int64_t units = 1;  ///< task units of its runs (U); 1 for data decomposition
    /// The amount of work it was run with (a runs file's column work: what mmgp tune --work puts in {work}; 0: not
    /// stated).
    std::int64_t work = 0;
    /// Its policy is stated (a runs file's policy column): false, the fit's policy applies (fit_options::pol).
    bool has_policy = false;
    /// Its sharing mode is stated (a runs file's sharing column): false, the platform's first mode applies (as
    /// mmgp launch and mmgp tune run by default).
    bool has_sharing = false;
    std::string source{};    ///< where the measurement came from (a validation case's source)
    std::vector<run> runs{}; ///< in the order they were measured

    /// The times of its finished full runs (ok, time above 0, work 1), in order.
    std::vector<double> finished_times() const;
    /// The median of finished_times() (midpoint of an even count); NaN when none finished.
    double median_s() const;
    /// The distribution-free 90 % interval of that median (median_ci90): {NaN, NaN} below 5 finished runs.
    std::pair<double, double> median_ci90() const;
    /// The run-to-run noise of one run: the variance of the log times of its finished full runs, as 1.4826 x
    /// their median absolute deviation, squared, from three runs on (robust to a run slowed by something else on
    /// the machine); their sample variance of two; 0 below two. Its degrees of freedom are the runs less one.
    double log_variance() const;
};

/// The sharing rule of measured runs, one for mmgp fit, mmgp tune --replay and mmgp validate: a measurement that
/// states no sharing mode (has_sharing false) ran under the first of `modes` (the platform's sharing_modes(): how
/// mmgp launch and mmgp tune run by default), and is marked as stating it; one that states a mode not among `modes`
/// is refused: false, the caller names where (with sharing_modes_expected's words).
bool assign_sharing_mode(measurement& m, const std::vector<accelerator_sharing>& modes);
/// What that refusal expected: "one of platform gpu's sharing modes (mps, time_sliced)" ("the platform's" when it
/// has no name).
std::string sharing_modes_expected(const std::vector<accelerator_sharing>& modes, std::string_view platform_name);

/// Every run of `ms`, with its measurement, in the runs' `order` (the order they were read or recorded).
std::vector<std::pair<const measurement*, const measurement::run*>> runs_in_order(const std::vector<measurement>& ms);

}  // namespace mmgp
MMGP_API_END
