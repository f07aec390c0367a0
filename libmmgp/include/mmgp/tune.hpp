// mmgp/tune.hpp — the best mapping of a program in few runs: the model as a prior, measured runs as evidence.
//
//   mmgp::tuner t(scenario, space, {});                 // space: the configurations to choose from
//   for (;;) {
//       mmgp::tune_assessment a = t.assess();
//       if (a.stop != mmgp::tune_stop::none) break;     // confident, budget spent, or nothing left to run
//       double seconds = run_the_program(space[a.next], a.next_bound_s);  // stopped at the bound (0: none)
//       if (a.next_bound_s > 0 && seconds >= a.next_bound_s)             // at least the bound; stopped early
//           t.add(a.next, {a.next_bound_s, mmgp::run_outcome::censored, a.stops_early(a.next_bound_s)});
//       else
//           t.add(a.next, {seconds, mmgp::run_outcome::ok});
//   }
//
// With runs in flight (several at once, e.g. Slurm job steps), assess(in_flight) names the configurations
// running now: they are not evidence yet, but the next choice treats each as if it had returned what is
// expected of it (the posterior mean: its uncertainty shrinks, its expectation does not move), so that K runs
// in flight spread over the configurations worth running instead of repeating one.
//
// Each assessment (docs/TUNE.md) fits the application's parameters to the runs so far (least squares on
// relative errors, pulled towards the prior profile's values), takes the model's prediction as the mean of
// each configuration's log time, and treats what the model misses as a smooth discrepancy over
// (log m, log p, log nodes, policy): a Gaussian process fitted to the residuals, with the run-to-run noise
// estimated from repetitions. It then chooses the measured configuration with the lowest expected time,
// the probability that another beats it by more than the tolerance, and the next run by expected
// improvement per machine second. Pure: no I/O, no clock; running the program is the caller's business.
#pragma once

#include "mmgp/export.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mmgp/measurement.hpp"
#include "mmgp/model.hpp"
#include "mmgp/objective.hpp"

MMGP_API_BEGIN
namespace mmgp {

struct tune_options {
    double tolerance = 0.03;   ///< a configuration within this fraction of the best is as good
    double confidence = 0.95;  ///< stop when P(some configuration beats the chosen by > tolerance) < 1 - confidence
    /// Use the application profile's T_hpu, T_apu, C_apu, g as the prior of the fit; false: the fit starts from
    /// the runs alone (the model's shape still comes from the platform and the application's structure).
    bool prior = true;
    /// Use the model at all; false: the runs alone, through the discrepancy process with a constant mean.
    bool use_model = true;
    /// No application profile (with prior false): the decomposition and spin limit are chosen from the runs made
    /// so far, and the parameters fitted, as mmgp fit does it (select_structure); false: the scenario's.
    bool choose_structure = false;
    double model_error = 0.20;   ///< prior sd of log(measured / predicted) over configurations (the model's error)
    double noise = 0.10;         ///< prior sd of log(run time) between repetitions of one configuration
    /// What the noise prior is worth, in degrees of freedom of repetitions (a steady program overrules it once
    /// its repetitions add up to several times this). This and the other constants below are kept by
    /// validation/tune/constants.py (leave one group out, constants/report.txt): no other combination it tries
    /// beats them beyond the noise of its replays.
    double noise_dof = 4;
    /// A configuration with fewer than three runs is taken to be as noisy as the noisiest one measured three
    /// times or more (true), or as noisy as its own runs and the pool say (false).
    bool few_runs_noisiest = true;
    double length_scale = 1.0;   ///< how far the discrepancy is correlated, in doublings of m, p and nodes
    /// A run is stopped after this many times the chosen configuration's time (its expected time, never below
    /// what its own finished runs measured).
    double bound_factor = 3.0;
    /// Without an application profile (choose_structure: prior false, the structure chosen from the runs) and
    /// under objective time, a run of a rival of the chosen is stopped sooner once repetitions have measured the
    /// noise: at (1 + tolerance) x the chosen's expected time x exp(max(the largest excess of a measured run
    /// over its configuration's center, bound_noise_z x the sd of the chosen's mean and one run's noise)), never
    /// later than bound_factor allows; a run of the chosen itself keeps bound_factor. Such a run, censored,
    /// rules nothing out (measurement::run::early). 0: off, the default: validation/tune/bound_noise.py (leave one group
    /// out, bound_noise/report.txt) finds no z that beats off beyond the noise of its replays.
    double bound_noise_z = 0;
    /// With progress lines (mmgp tune --progress-total), under objective time, a rival's run is stopped once its
    /// projection is clearly past (1 + tolerance) x the chosen's expected time at progress_chosen_z sd of its mean
    /// (never below what the chosen's own finished runs measured), rather than past its bound; censored there, it is
    /// measurement::run::early, at least the low end of its projection. 0: off, the default: on the recorded
    /// groups it saves machine time and loses P on one of them (docs/TUNE.md, "Progress lines").
    double progress_chosen_z = 0;
    /// With short runs (short_work): exploring in full before the model is fitted ends once this many
    /// configurations have run both ways while the short runs rank (checked from two pairs on); the projections of the others, each with the
    /// carry-over line's own uncertainty at its short time, stand for them until then. 0, the default: explore
    /// until min_fit_configurations have run in full (validation/tune/work_constants.py, leave one group out on
    /// the groups with short runs, finds 2 lower by one standard error only: docs/TUNE.md "The tuner's constants").
    int short_explore_pairs = 0;
    double prior_weight = 0.5;   ///< prior sd of a fitted parameter, relative to the prior's value
    /// Without the prior's values (prior false): the model is fitted, and the next run chosen by it rather than by
    /// how little is known, once this many configurations have finished runs.
    int min_fit_configurations = 5;
    /// The next run: the highest knowledge gradient per machine second (what one more run is expected to gain
    /// on the comparison with the chosen; true) rather than the highest P(beats the chosen) per machine second.
    bool next_by_gradient = false;
    /// While the tune explores (without the prior's values, before min_fit_configurations): the next run by how
    /// little is known of it per machine second that the platform alone expects it to take (the application's
    /// structure with its times unknown: all of one run's work parallel, T_apu = 1 s), rather than by how
    /// little is known alone.
    bool explore_by_platform = false;
    /// explore_by_platform on a GPU node (a platform that lists a sharing mode other than dedicated), the default
    /// there: its platform alone tells a grid of one block from grids over the SMs, times apart by the SMs' count,
    /// where a CPU node's cores are a few times apart (decided on the GPU groups of validation/tune/bench_gpu.py
    /// leave one group out, gpu/report.txt). --constant policy.explore_platform sets both.
    bool explore_by_platform_on_gpu = true;
    /// Without the prior's values: the tune's first run (nothing recorded, nothing in flight; it runs without a
    /// bound and its time bounds the later runs) is the configuration the platform alone expects to be the
    /// fastest, in wall time whatever the objective (as explore_by_platform sees the application), rather than
    /// the least known. With --parallel, the runs started beside it explore as by default.
    bool first_by_platform = false;
    /// Stopped unsure by a budget, when the posterior is trusted over the lowest measured time (tune_assessment::
    /// chosen_by): noise, its leave-one-out RMS within the noise repetitions measured; calibrated, its leave-one-
    /// out residuals no larger than its own predictive spread says (mean of r^2 / var at most 1) with some noise
    /// measured; never (always the measurements); always (never the measurements: no fallback).
    enum class trust { noise, calibrated, never, always } fallback_trust = trust::noise;
    int max_runs = 50;           ///< budget: runs (0: no limit)
    double max_seconds = 0;      ///< budget: machine seconds, wall time x nodes (0: no limit)
    /// The cost cap: no run starts that is expected to take the machine time spent above the estimated
    /// machine time of running every configuration once (the naive way), so the tune never costs more.
    bool cap_at_exhaustive = true;
    double max_cost_s = 0;       ///< the same cap at this many machine seconds (0: none; the lower cap wins)
    /// How many production runs the choice will serve (0: not said). With it, the tune also stops when the
    /// expected saving of one more run over these uses is smaller than that run's expected machine time.
    double uses = 0;
    double max_run_s = 0;        ///< the longest any one run may take, seconds (0: no limit but the bound)
    /// What the choice minimises. Under a cost objective (node-hours, core-hours) the tuner chooses the
    /// cheapest configuration whose expected time is within `within` of the fastest expected time; the
    /// tolerance and P(beaten) are then in that cost, among the configurations of the window.
    objective minimise = objective::time;
    double within = 0.05;
    /// Short runs (docs/TUNE.md, "Short runs"): the work of a short run as a fraction of a full run's (0: off). A
    /// configuration never run is screened by a short run first; a full run's time is projected from short ones
    /// through the carry-over (tune_carryover) fitted on the configurations run both ways, with its error, and only
    /// a configuration with full runs of its own is ever chosen.
    double short_work = 0;
};

/// How short runs carry over to full ones: a full run's time = ratio x (short time - startup) + startup, fitted
/// on the configurations run both ways (pairs), with the error of a projection.
struct tune_carryover {
    int pairs = 0;           ///< configurations with finished short and full runs
    double ratio = 0;        ///< full time / short time beyond the start-up (its prior: 1 / short_work)
    double startup_s = 0;    ///< the start-up cost both kinds of run pay (0 below two pairs)
    double error = 0;        ///< sd of log(full time / its projection): the fit's residuals and a prior
    double fit_error = 0;    ///< the residuals' alone (0 below two pairs)
    double spread = 0;       ///< sd of the projected log times over the screened configurations
    /// The short runs rank the configurations as full runs do: false once two pairs or more leave a projection
    /// error above half the spread the screen sees (a screen cannot tell those configurations apart); the
    /// projections are then dropped and the tune goes on with full runs only.
    bool ranks = true;
    /// The covariance of the line's start-up term alpha = (1 - ratio) x startup and ratio, on the relative scale
    /// of the pairs' residuals (0: below one pair).
    double cov_aa = 0, cov_ab = 0, cov_bb = 0;
    double project(double short_s) const noexcept { return ratio * (short_s - startup_s) + startup_s; }
};

/// What the tuner believes about one configuration.
struct config_belief {
    double model_s = 0;     ///< the model's time with the fitted parameters (0 when the model is not used yet)
    double time_s = 0;      ///< the expected time: the model corrected by the discrepancy and the runs (median)
    double lo_s = 0, hi_s = 0;  ///< 90 % interval of that time
    double p_beats = 0;     ///< probability it beats the chosen configuration by more than the tolerance
    int runs = 0, censored = 0, failed = 0;
    double measured_s = 0;  ///< median of its finished full runs (0 when none)
    int full_runs = 0;      ///< its finished full runs (measured_s is their median)
    bool excluded = false;  ///< censored or failed at least once: never chosen, never run again
    bool pathological = false;  ///< confidently slower than the bound of a run: not run while others remain
    int short_runs = 0;     ///< short runs (measurement::run::work below 1), finished or stopped
    double projected_s = 0; ///< a full run's time projected from its short runs (0: none, or full runs of its own)
};

/// Why the loop stops (or none).
enum class tune_stop { none, confident, budget_runs, budget_seconds, exhausted, budget_cost, not_worth };
std::string_view to_string(tune_stop s) noexcept;

/// What the chosen configuration was chosen by.
enum class choice_basis {
    posterior,     ///< the lowest expected time: the model (when used) corrected by the runs
    measurements,  ///< the lowest measured time: stopped unsure by a budget, the model not trusted on this program
};
std::string_view to_string(choice_basis b) noexcept;

/// One fitted application parameter.
struct tune_param {
    std::string name;
    double prior = 0, value = 0;
    std::string unit = "s";  ///< of prior and value ("": a count)
};

struct tune_assessment {
    std::vector<config_belief> configs;  ///< one per configuration of the space, in its order
    bool has_chosen = false;
    std::size_t chosen = 0;    ///< the measured configuration with the lowest expected time
    double p_beaten = 1;       ///< P(some configuration beats the chosen by more than the tolerance)
    tune_stop stop = tune_stop::none;
    bool has_next = false;
    std::size_t next = 0;      ///< the configuration to run next (when stop == none)
    std::string why_next;      ///< one phrase: why that one
    double next_bound_s = 0;   ///< stop that run after this long (0: no bound)
    double next_work = 1;      ///< the next run's work: 1, a full run; tune_options::short_work, a short run
    tune_carryover carryover;  ///< with short runs: how they carry over (pairs 0 and ratio 0 before any)
    /// The bounds of a run of the chosen and of any other configuration (tune_options::bound_noise_z; equal
    /// without it); next_bound_s is one of them.
    double chosen_bound_s = 0, rival_bound_s = 0;
    /// The bound of a run of configuration c started now (or tightened now, in flight).
    double bound_of(std::size_t c) const noexcept { return has_chosen && c == chosen ? chosen_bound_s : rival_bound_s; }
    /// With progress lines (mmgp tune --progress-total): the bound a rival's projected time is judged against,
    /// rival_bound_s, or with tune_options::progress_chosen_z (objective time), once the chosen has a finished run, (1 + tolerance)
    /// x the chosen's expected time that many sd of its mean above (never below what its own finished runs
    /// measured), never later than rival_bound_s. For a run of the chosen itself: its bound.
    double rival_progress_bound_s = 0;
    /// The bound the progress of a run of configuration c started now is judged against (progress_past_bound).
    double progress_bound_of(std::size_t c) const noexcept {
        return has_chosen && c == chosen ? chosen_bound_s : rival_progress_bound_s;
    }
    /// Whether a run given `bound` is stopped early (sooner than the bound factor's): censored there, it is
    /// measurement::run::early.
    bool stops_early(double bound) const noexcept { return bound > 0 && bound < chosen_bound_s; }
    int runs = 0;              ///< runs recorded (cancelled ones included)
    int in_flight = 0;         ///< runs in flight given to assess
    double machine_s = 0;      ///< machine seconds spent so far (wall x nodes)
    double exhaustive_s = 0;   ///< estimated machine seconds of running every configuration once: each one's
                               ///< median run (stopped: its bound or, with the model, its expected time beyond
                               ///< it; screened by short runs alone: the low end of its projection; not run yet:
                               ///< the expected cost of its run, next_cost_s's statistic) x nodes
    int exhaustive_stopped = 0;      ///< terms of exhaustive_s that are stopped configurations (at least their bound)
    double exhaustive_stopped_s = 0; ///< their sum
    int exhaustive_expected = 0;     ///< terms of exhaustive_s that are expectations (configurations not run yet)
    int exhaustive_projected = 0;    ///< terms of exhaustive_s from short runs alone (the low end of the projection)
    double cap_s = 0;          ///< the machine seconds the tune may spend (0: no cap)
    /// Expected regret of the chosen configuration: the expected excess of its time over its closest rival's
    /// (the largest such expectation over the rivals), a fraction of its time and in seconds of one run.
    double expected_regret = 0, expected_regret_s = 0;
    /// The next run's expected machine seconds, and (with `uses`) its expected saving over those uses: what
    /// one more run might change in the choice, times the uses.
    double next_cost_s = 0, next_saving_s = 0;
    /// Stopped by a budget (the cost cap, --max-runs, --max-seconds, --uses) while unsure (p_beaten at least
    /// 1 - confidence), the choice falls back to the lowest measured time unless the posterior has earned trust
    /// on this program: its leave-one-out error at the measured configurations within the run-to-run noise that
    /// repetitions measured. Otherwise (and when not stopped so) the posterior's.
    choice_basis chosen_by = choice_basis::posterior;
    double loo_error = 0;       ///< that leave-one-out error (RMS of log time; computed only for an unsure stop)
    double measured_noise = 0;  ///< the noise of repetitions alone (log sd; 0: no configuration run twice)
    double noise = 0, model_error = 0;  ///< the current estimates (log sd)
    bool model_used = false;   ///< the model's prediction is the mean (false: runs alone so far)
    std::vector<tune_param> params;  ///< the fitted application parameters (empty without the model)
};

/// How often a live run's output is looked at for its progress (seconds): the lines read at one look are one
/// point, at that look's time (run/tune_local.cpp; run/tune_replay.cpp reads a recorded timeline the same way).
inline constexpr double progress_look_s = 0.2;

/// A run's progress as its own output says it: seconds since it started, and the count it has reached (a step,
/// an iteration) by then.
struct progress_point {
    double t_s = 0, count = 0;
};

/// A run's total time projected from its progress (mmgp tune --progress-regex, docs/TUNE.md "Progress lines").
struct progress_projection {
    bool usable = false;  ///< enough points past the warm-up (three, the last below the total), or else an earliest end
    double total_s = 0;   ///< the projected time at which the count reaches the total
    double sd_s = 0;      ///< the standard error of that projection (the rate's residuals, at least the looks' rounding; 0 for the earliest end)
    int dof = 0;          ///< the degrees of freedom of sd_s: the fitted points less two (0 for the earliest end)
};

/// The points past the warm-up (the first point, and counts below a tenth of `total`) fitted by least squares as
/// time = a + b x count, read at count = total; until three points are past the warm-up, the earliest end: the
/// rest of the count at the fastest rate so far, each rate over at least two looks (progress_look_s) and counted
/// over its interval less one look (from three points, the last below the total; its error 0). Pure.
progress_projection project_progress(const std::vector<progress_point>& points, double total);

/// Whether a run is clearly past its bound: its projection, lowered by 1.645 standard deviations of the run-to-run
/// noise (`noise_sd`, of log times) and by Student's 95 % quantile (its dof) of the projection's own error, the two
/// together in quadrature, is still above `bound_s` (> 0).
bool progress_past_bound(const progress_projection& p, double bound_s, double noise_sd);
/// The low end progress_past_bound compares with the bound: the projected time less the run-to-run noise and the
/// projection's own error (0: no usable projection). A run stopped by its progress takes at least this long.
double progress_low_end(const progress_projection& p, double noise_sd);

/// The closed loop's state: a scenario (platform, application shape and prior), the configurations to
/// choose from, and the runs so far.
class tuner {
public:
    /// Throws input_error when the space is empty or a configuration cannot be evaluated on the scenario.
    tuner(const scenario& s, std::vector<configuration> space, const tune_options& opt);
    /// Records a run of configuration `config` of the space (its `order` is set to its place among the runs).
    /// Throws std::out_of_range for a configuration index outside the space.
    void add(std::size_t config, measurement::run r);
    /// The beliefs, the choice, whether to stop and what to run next. `in_flight`: configurations running now
    /// (repeats allowed), taken into account for the next choice only (the beliefs and the stop come from the
    /// finished runs). has_next is false while the run budget is taken by the runs in flight.
    tune_assessment assess(const std::vector<std::size_t>& in_flight = {}) const;
    const std::vector<configuration>& space() const noexcept { return space_; }
    /// The runs so far: the configurations run, by their index in the space, each a measurement of its runs.
    const std::map<std::size_t, measurement>& measured() const noexcept { return measured_; }
    /// How many runs were recorded.
    std::size_t run_count() const noexcept { return order_.size(); }
    /// Every run in the order it was recorded, with the index of its configuration.
    std::vector<std::pair<std::size_t, const measurement::run*>> runs_in_order() const;
    const tune_options& options() const noexcept { return opt_; }

private:
    scenario s_;
    std::vector<configuration> space_;
    tune_options opt_;
    std::map<std::size_t, measurement> measured_;  // the configurations run (a space may hold millions)
    std::vector<std::size_t> order_;     // the configuration of each run, in the order they were recorded
    mutable std::vector<std::vector<double>> coef_;  // fit coefficients per configuration, computed when first run
    std::vector<double> explore_cost_;  // tune_options::explore_by_platform: the platform's cost of a run, 1 the cheapest
    std::vector<double> first_time_;    // tune_options::first_by_platform: the platform's time of a run, seconds
};

}  // namespace mmgp
MMGP_API_END
