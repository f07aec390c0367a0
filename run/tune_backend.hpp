// Where the runs of a tune go, behind one interface the loop (tune_loop.cpp) drives: recorded runs replayed
// (tune_replay.cpp), local or MPI processes (tune_local.cpp), Slurm job steps inside an allocation
// (tune_slurm_steps.cpp) or Slurm batch jobs (tune_slurm_batch.cpp). The caller (mmgp tune: cli/cmd_tune.cpp)
// chooses one; a backend calls nothing of the loop: it starts, bounds, stops and reports runs, and writes their
// command into their journal line.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mmgp/launch.hpp"
#include "mmgp/tune.hpp"

namespace mmgp::run {

/// A run the loop asks for.
struct run_request {
    configuration config;
    int number = 0;             ///< its number in the journal (the draw of a replayed run depends on it)
    double bound_s = 0;         ///< stop it after this long, censored (0: no bound)
    bool short_run = false;     ///< a short run (mmgp tune --work: {work} is the short value)
    double noise_sd = 0;        ///< the run-to-run noise of log times as the tuner estimates it now (progress stops)
    std::size_t in_flight = 0;  ///< runs in flight beside it
    /// What its progress is judged against (tune_assessment::progress_bound_of; 0: bound_s): a run stopped by its
    /// progress judged against less than bound_s is stopped early (the journal line's at_least_s and early_bound:
    /// mark_progress_stop).
    double progress_bound_s = 0;
};

/// Whether `bound` (seconds, 0: none) stops a run sooner than `than` does.
inline bool tighter_bound(double bound, double than) { return bound > 0 && (than <= 0 || bound < than); }

/// The bound a request's progress is judged against.
inline double progress_bound(const run_request& request) {
    return tighter_bound(request.progress_bound_s, request.bound_s) ? request.progress_bound_s : request.bound_s;
}

/// A run stopped by its progress, judged against `progress_bound_s` under the bound `bound_s`: the journal line
/// says so. Judged against its own bound, its time is at least that bound (the journal's bound_s). Judged against
/// less (tune_options::progress_chosen_z), it was stopped early (early_bound: the configuration may run again),
/// its time at least at_least_s: `low_end` (progress_low_end, above the bound it was judged against), never past
/// the run's own bound (run on, it would have been censored there: a run censored at its bound says no more).
inline void mark_progress_stop(nlohmann::json& line, double low_end, double progress_bound_s, double bound_s) {
    line["progress_stop"] = true;
    if (!tighter_bound(progress_bound_s, bound_s)) return;
    line["early_bound"] = true;
    line["at_least_s"] = bound_s > 0 ? std::min(low_end, bound_s) : low_end;
}

/// What became of a request.
enum class start_verdict {
    started,  ///< in flight: wait_any() reports its end
    no_room,  ///< not now, nothing started: a run in flight holds what it needs
    refused,  ///< never: nothing could hold it; the loop records it as failed at once
};

struct run_start {
    start_verdict verdict = start_verdict::started;
    int id = 0;  ///< started: the run's id for the calls below
};

/// How a run ended.
struct run_end {
    int id = 0;
    run_outcome outcome = run_outcome::ok;
    double wall_s = 0;    ///< its time (censored: the bound; cancelled: the machine time it had spent)
    int exit_status = 0;
    nlohmann::json journal_fields = nlohmann::json::object();  ///< more of its journal line (a batch job's state)
};

class tune_backend {
public:
    virtual ~tune_backend() = default;
    /// The journal is open (its path): a backend may keep its files beside it.
    virtual void attach_journal(const std::string& journal_path) { (void)journal_path; }
    /// A run a resumed journal recorded (before begin()): replay draws a configuration's first run as it did.
    virtual void recorded(const configuration& c, bool short_run) { (void)c, (void)short_run; }
    /// The tune's clock starts (running processes: SIGINT, SIGTERM and SIGHUP are held from now on).
    virtual void begin() = 0;
    /// Seconds since begin() (replay: the recorded times laid out --parallel at a time).
    virtual double now() const = 0;
    /// Starts a run; writes its "command" (and what else the backend knows of it) into its journal line.
    virtual run_start start(const run_request& request, nlohmann::json& journal_line) = 0;
    /// The next run to end; nullopt when mmgp was interrupted (every run has then been stopped).
    virtual std::optional<run_end> wait_any() = 0;
    /// The end of run `id` is journaled: what it held (nodes, files) is given back.
    virtual void release(int id) { (void)id; }
    /// A tighter bound for a run in flight; false when its bound cannot change (its journal line keeps the old).
    virtual bool tighten_bound(int id, double bound_s) = 0;
    /// The decision is made: every run in flight is stopped; wait_any() reports each as cancelled, its time the
    /// machine time it had spent.
    virtual void stop_all() = 0;
    /// After wait_any() said interrupted: the signal (what runs outside mmgp, batch jobs, is cancelled).
    virtual int interrupted() { return 0; }
    /// No run is left in flight (or mmgp was interrupted): processes reaped, signals as they were, files removed.
    virtual void close() {}
};

/// mmgp tune --progress-regex REGEX --progress-total N: the number REGEX captures from the program's output lines and
/// the count a full run reaches; a full run whose projected time is clearly past its bound is stopped (empty: off).
struct progress_settings {
    std::string regex;
    double total = 0;
};

/// How a live run is started: its launcher, the launch of a configuration (the command with its placeholders
/// filled, the binding: mmgp launch's, cli/cmd_launch.cpp plan_launch) and what a Slurm batch job may hold.
/// plan's node_cpus: the CPUs of a node as the backend knows them (the batch backend: --cores-per-node or what
/// sinfo offers), for a launch that was given no --cores-per-node (srun's CPUs per task; none: not known).
struct launch_setup {
    launcher_kind kind = launcher_kind::local;
    std::function<launch_plan(const configuration&, bool short_run, std::optional<int> node_cpus)> plan;
    std::optional<int> cores_per_node;  ///< the CPUs a batch job asks of a node (not given: what sinfo offers)
    bool oversubscribe = false;         ///< more processes than a node's CPUs allowed
    progress_settings progress;         ///< the local backend's progress lines (empty regex: none)
};

/// The recorded repetitions of --replay RUNS.csv.
struct recorded_run {
    double time_s = 0;
    bool censored = false;
    std::vector<progress_point> progress;  ///< its progress timeline (the file's progress column; empty: none)
};
struct recorded_runs {
    std::string file;
    std::vector<configuration> space;                       ///< in the file's order of first appearance
    std::map<std::string, std::vector<recorded_run>> reps;  ///< by key_of: the full runs
    std::map<std::string, std::vector<recorded_run>> short_reps;  ///< by key_of: the short runs (work_short's rows)
    std::int64_t work_short = 0, work_full = 0;             ///< the file's work values (0: no column)
    std::int64_t units = 0;                                 ///< the file's units (0: no column)
    std::vector<std::string> ignored_columns;               ///< the file's columns not read (a caller warns)
};
/// What a replay takes from its runs file.
struct replay_request {
    /// --units: the rows of this units value; none: all, when they are of one units value.
    std::optional<std::int64_t> units{};
    /// --work SHORT:FULL: the work column's two values (a work column holds one value, full runs, or two, the
    /// smaller the short runs).
    std::optional<std::pair<std::int64_t, std::int64_t>> work{};
    /// The progress column is read into each run's timeline (else it is one of the ignored columns).
    bool with_progress = false;
    /// The tune's sharing mode: a sharing column's rows of another mode are left out.
    accelerator_sharing sharing = accelerator_sharing::dedicated;
    /// The platform's modes (platform::sharing_modes()): a row of a mode it lacks is refused, and a row that
    /// states none was run under its first (as mmgp launch and mmgp tune run by default).
    std::vector<accelerator_sharing> platform_modes{accelerator_sharing::dedicated};
    std::string platform_name{};  ///< for that refusal
};
/// The rows of `path` that `want` takes (replay_request).
recorded_runs read_recorded_runs(const std::string& path, const replay_request& want);

/// Each run's time drawn (by `seed` and its number) from the recorded repetitions of its configuration.
/// `slowest_first`: each configuration's first run is its slowest recorded one (--replay-first slowest).
/// With `progress` (its total; the regex unused), a full run's recorded timeline stops it as a live run would be.
std::unique_ptr<tune_backend> replay_backend(recorded_runs runs, unsigned long long seed, bool slowest_first,
                                             progress_settings progress = {});
/// Each run the launcher's command (or the local processes), one at a time.
std::unique_ptr<tune_backend> local_backend(launch_setup setup);
/// Each run a job step with CPUs of its own inside the Slurm allocation mmgp runs in; nullptr outside one.
/// Throws mmgp::error when the allocation's variables cannot be read.
std::unique_ptr<tune_backend> slurm_steps_backend(launch_setup setup);
/// Each run its own Slurm batch job (sbatch --wait). Throws mmgp::error when no Slurm cluster answers (sinfo).
std::unique_ptr<tune_backend> slurm_batch_backend(launch_setup setup);

}  // namespace mmgp::run
