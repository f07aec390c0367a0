// The runs of mmgp tune while they are in flight: process groups started, bounded, stopped and reaped together
// (one event loop for one run or K at once), and where runs may go inside a Slurm allocation.
#pragma once

#include <csignal>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <sys/types.h>

namespace mmgp::cli {

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
};

/// Runs in flight. Each run is one process group of its own; SIGINT, SIGTERM and SIGHUP are held while the
/// object lives and end waiting (every run is then stopped). Stopping a run sends SIGTERM to its group, so that
/// a launcher can end its job cleanly (srun cancels its job step), then SIGKILL after a grace period.
class run_flights {
public:
    run_flights();
    ~run_flights();  ///< kills and reaps whatever still runs, restores the signal mask
    run_flights(const run_flights&) = delete;
    run_flights& operator=(const run_flights&) = delete;

    /// Starts a run; `bound_s` > 0 stops it (censored) after that long; `stdout_file` (not empty): the processes'
    /// standard output goes there; `done_file` (not empty): the run has ended once that file exists (what a batch
    /// job writes at its end, before `sbatch --wait` notices), its processes are then killed. Returns its id.
    int start(const std::vector<run_process>& procs, double bound_s, const std::string& stdout_file = {},
              const std::string& done_file = {});
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
    flight* find(int id) const;
};

/// The lines a shell command prints on its standard output (sinfo, scontrol), newlines removed; none when it
/// cannot be started.
std::vector<std::string> command_lines(const std::string& command);

/// The nodes of the Slurm allocation mmgp runs in (SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE)
/// and the CPUs its runs hold on each: a run takes `nodes` nodes with m*p free CPUs each, or, when m*p is as
/// many as a node has (or more), whole nodes; so a configuration that needs the whole node never shares it.
class slurm_allocation {
public:
    /// The allocation of this process's environment; nullopt outside one. Throws usage_error when the
    /// variables cannot be read.
    static std::optional<slurm_allocation> from_environment();
    /// Nodes for a run (their indices), or empty when it does not fit now.
    std::vector<int> place(int nodes, long long cpus_per_node) const;
    void hold(const std::vector<int>& where, long long cpus_per_node, int sign);
    std::string node_list(const std::vector<int>& where) const;
    std::size_t nodes() const { return names_.size(); }
    int cpus(std::size_t node) const { return cpus_[node]; }
    std::string job_id;

    /// "2(x3),1" -> {2, 2, 2, 1}; empty on a malformed text.
    static std::vector<int> parse_cpus_per_node(const std::string& text);

private:
    std::vector<std::string> names_;
    std::vector<int> cpus_, used_;
};

}  // namespace mmgp::cli
