// The runs of mmgp tune that are processes, while they are in flight: process groups started, bounded, stopped
// and reaped together (one event loop for one run or K at once), and the base of the backends built on them.
// Called by the local and Slurm backends; calls the system (fork, signals, waitpid) only.
#pragma once

#include <chrono>
#include <csignal>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <sys/types.h>

#include "group_guard.hpp"
#include "tune_backend.hpp"

namespace mmgp::run {

/// One process of a run: argv and the variables added to its environment.
struct run_process {
    std::vector<std::string> argv;
    std::vector<std::pair<std::string, std::string>> env;
};

/// How a run ended.
struct run_result {
    double wall_s = 0;     ///< from its start to the end of its last process (censored: its bound, or its age
                           ///< when a bound it had already passed was set)
    int exit_status = 0;   ///< the first non-zero status of its processes (128 + signal when killed)
    bool censored = false; ///< stopped at its bound
    bool stopped = false;  ///< stopped by stop() (not by its bound)
    bool watched_out = false;  ///< stopped because its watch said so (censored at the time it had run)
};

/// Looked at about every 0.2 s while a run is in flight, with its age in seconds: true stops it (censored at that
/// age). mmgp tune's progress lines (tune_local.cpp).
using run_watch = std::function<bool(double age_s)>;

/// Runs in flight. Each run is one process group of its own; SIGINT, SIGTERM and SIGHUP are held while the
/// object lives and end waiting (every run is then stopped). Stopping a run sends SIGTERM to its group, so that
/// a launcher can end its job cleanly (srun cancels its job step), then SIGKILL after a grace period. When this
/// process dies without stopping them (SIGKILL, a crash), its group_guard kills their groups.
class run_flights {
public:
    run_flights();
    ~run_flights();  ///< kills and reaps whatever still runs, restores the signal mask and SIGCHLD's action
    run_flights(const run_flights&) = delete;
    run_flights& operator=(const run_flights&) = delete;

    /// Starts a run; `bound_s` > 0 stops it (censored) after that long; `stdout_file` (not empty): the processes'
    /// standard output goes there; `done_file` (not empty): the run has ended once that file exists (what a batch
    /// job writes at its end, before `sbatch --wait` notices), its processes are then killed; `log_file` (not
    /// empty, without stdout_file): the processes' standard output and error go there, the file created empty
    /// first. Returns its id.
    int start(const std::vector<run_process>& procs, double bound_s, const std::string& stdout_file = {},
              const std::string& done_file = {}, const std::string& log_file = {}, run_watch watch = {});
    /// Waits until a run ends and returns its id and result; nullopt when mmgp was interrupted (interrupted_by()
    /// says by what): every run has then been stopped and reaped.
    std::optional<std::pair<int, run_result>> wait_any();
    /// Stops a run (SIGTERM, SIGKILL after the grace); wait_any() reports it.
    void stop(int id);
    /// A new bound for a run in flight (seconds from its start); one already past is stopped at once (censored,
    /// its time the time it ran).
    void set_bound(int id, double bound_s);
    /// Seconds since the run started.
    double elapsed(int id) const;
    std::size_t size() const { return runs_.size(); }
    int interrupted_by() const { return interrupted_by_; }

private:
    struct flight;
    std::vector<flight*> runs_;
    int next_id_ = 1;
    int interrupted_by_ = 0;
    sigset_t wanted_{}, old_{};
    std::optional<group_guard> guard_;  // forked with the signals held: kills the runs if this process dies first
    struct sigaction old_chld_ {};  // SIGCHLD's action before, restored by the destructor
    flight* find(int id) const;
    void look_at_watched(double t, double& next);
};

/// The lines a shell command prints on its standard output (sinfo, scontrol), newlines removed; none when it
/// cannot be started.
std::vector<std::string> command_lines(const std::string& command);

/// The base of the backends whose runs are processes (tune_local.cpp, tune_slurm_steps.cpp,
/// tune_slurm_batch.cpp): the clock, waiting, bounds, stopping and interrupts, over one run_flights. A backend
/// adds how a run starts (launch()) and, for a batch job, how its end is read and what outside mmgp it cancels.
class process_backend : public tune_backend {
public:
    void begin() override;
    double now() const override;
    std::optional<run_end> wait_any() override;
    bool tighten_bound(int id, double bound_s) override;
    void stop_all() override;
    int interrupted() override;
    void close() override;

protected:
    /// Starts a run's processes (run_flights::start); returns its id.
    int launch(const std::vector<run_process>& procs, double bound_s, const std::string& stdout_file = {},
               const std::string& done_file = {}, const std::string& log_file = {}, run_watch watch = {});
    /// The machine time run `id` has spent so far.
    virtual double spent_s(int id) const;
    /// Cancels what of run `id` lives outside mmgp's processes (a batch job).
    virtual void cancel_outside(int id) { (void)id; }
    /// A run ended by itself: the backend's own account of it may correct `end`.
    virtual void read_end(run_end& end) { (void)end; }

private:
    std::optional<run_flights> runner_;
    std::chrono::steady_clock::time_point begin_;
    std::vector<int> in_flight_;  // started and not yet reported by wait_any(), in the order started
    std::map<int, double> spent_at_stop_;  // after stop_all(): each run's machine time when it was stopped
    bool stopped_ = false;
};

/// The load average of the last minute (/proc/loadavg), -1 when it cannot be read: each live run's journal line
/// keeps it (a busy machine explains a slow run).
double load1();

/// A run's command as its journal line keeps it: whole up to 4 KiB; a longer one cut there, with its length and
/// where the whole is (the header's command, rendered for the run's mapping as `mmgp launch` renders it), so that
/// the journal stays far below what --resume reads (16 MiB) whatever the command's size.
std::string journal_command(const std::string& command);

}  // namespace mmgp::run
