// run/process.hpp — the one place that starts and stops processes (fork, exec and kill; never popen, system or
// posix_spawn elsewhere): a program with its environment, process group and output; a shell line with its output
// captured, stopped by an interrupt (child_scope, beside mmgp/io.hpp's signal handler); the exit status in the
// project's words. Called by
// `mmgp launch --exec` (cli/cmd_launch.cpp), the tuner's runs and its Slurm queries (tune_runs.cpp,
// tune_slurm_batch.cpp) and calibration's MPI, SimGrid and GPU tools (calibration/mpi_driver.cpp,
// calibration/simulate.cpp, cli/cmd_calibrate_gpu.cpp).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "forked.hpp"  // exit_code, wait_status_of: the blocking wait the GPU programs' children share
#include "mmgp/io.hpp"

namespace mmgp::run {

/// A child started under the interrupt rules: while the scope is alive, SIGINT, SIGTERM and SIGHUP are held
/// (mmgp::interrupt_pending(), through an mmgp::interrupt_hold) instead of ending the process, the process group
/// adopt()ed is killed at once from the signal handler, and orphaned descendants come back to this process (it is
/// their subreaper) so that an interrupt can find and stop them. The scope blocks those signals from its
/// construction until adopt() (no signal between fork() and registering the child); the child restores
/// child_mask(). Not copyable. Used by shell() (child_scope.cpp).
class child_scope {
public:
    child_scope();  // not copyable, as its interrupt_hold is not
    ~child_scope();
    /// The signal mask before the scope blocked the interrupt signals: what the child restores after fork().
    const sigset_t& child_mask() const noexcept { return old_mask_; }
    /// In the parent, after fork(): registers the child's process group (an interrupt kills it) and unblocks the
    /// signals; when an interrupt came before, kills the group at once. `group` <= 0 (fork failed): unblocks only.
    void adopt(int group) noexcept;
    /// True when an interrupt arrived while the scope was alive.
    bool interrupted() const noexcept;
    /// After the child was reaped: when interrupted, kills whatever descendants remain.
    void reap_descendants() noexcept;

private:
    int seen_ = mmgp::interrupts_handled();  // before the hold: an interrupt from here on counts
    mmgp::interrupt_hold hold_;
    sigset_t old_mask_;
    int slot_ = -1;
    bool was_subreaper_ = false, unblocked_ = false;
};

/// One program to start.
struct child {
    std::vector<std::string> argv;                           ///< execvp's: argv[0] found on the PATH
    std::vector<std::pair<std::string, std::string>> env;    ///< set in the child's environment
    /// Its process group: -1 this process's, 0 a new one it leads, > 0 that group (its leader started before).
    pid_t group = -1;
    std::string stdout_file;  ///< non-empty: standard output written there (created or truncated)
    int output_fd = -1;       ///< >= 0 (and no stdout_file): standard output and error both go there
    bool stdout_to_stderr = false;  ///< neither of the above: standard output joins standard error
    /// >= 0: the child sends its process group there (a 4-byte int) before it execs: a tune's group_guard
    /// (run/group_guard.hpp) learns of the run before the program starts.
    int announce_fd = -1;
};

/// Forks and execs `c`; in the child, `mask` is restored as the signal mask first (the caller blocks the signals
/// it waits for before calling). A program that cannot be executed prints "mmgp: PROGRAM: cannot execute:
/// REASON" on standard error and exits 127. Returns the child's pid; throws mmgp::failure when fork fails.
pid_t start(const child& c, const sigset_t& mask);

/// The one mapping of an exception that ends a program to its exit status: bad input (mmgp::error and what
/// derives from it: input_error, usage_error) 2; anything else (mmgp::failure, a
/// library's own error) 1. mmgp, the harness programs and the off-load programs each print their one line, then
/// return this.
int exit_status_of(const std::exception& e) noexcept;

/// Starts every child (this process's group, the environment each names) and waits for all of them, forwarding
/// SIGINT and SIGTERM to each while they run; returns the first non-zero exit code in the children's order (128 +
/// n for one ended by signal n), 0 when all succeeded. If one cannot be started, those started are sent SIGTERM
/// and the error is thrown. What `mmgp launch --exec` runs.
int run_together(const std::vector<child>& children);

/// Runs `/bin/sh -c command` in a process group of its own with its standard output captured into `*out`
/// (when given) and returns its exit status (-1 when it did not exit normally). An interrupt meanwhile
/// (child_scope) kills the whole group; shell() then returns and mmgp::interrupt_pending() is true, so that
/// the caller can undo what it set up (network namespaces, temporary directories) before mmgp::finish_interrupt().
/// With `max_out`, a command whose standard output grows beyond it is stopped (its group killed) and shell()
/// returns output_too_long, `*out` holding the first max_out bytes.
int shell(const std::string& command, std::string* out = nullptr, std::size_t max_out = SIZE_MAX);
inline constexpr int output_too_long = -2;

/// The lines `/bin/sh -c command` prints on standard output (a trailing CR removed), its errors left on
/// standard error; no interrupt handling (a query such as sinfo, run where the caller waits for signals itself).
std::vector<std::string> output_lines(const std::string& command);

/// The program `word` names as execvp finds it: itself with a '/', else the first executable regular file of that
/// name on the PATH; "" when none is.
std::string path_lookup(const std::string& word);

/// The one program finder: a helper program given by a flag (`given`), else by the environment variable `env`,
/// else built beside the running executable (BUILD/calibration/NAME, BUILD/calibration/gpu/NAME, BUILD/offload/NAME,
/// or in its own directory), else NAME on the PATH; "" when none. Used for the MPI bench, the SimGrid tools, the GPU
/// harness and mmgp-offload-run (mmgp profile --accelerator cuda).
std::string find_program(const std::string& given, const char* env, const std::string& name);

/// Runs `/bin/sh -c command` with its output discarded and waits for it (a fire-and-forget command such as
/// scancel); returns its exit code.
int quietly(const std::string& command);

}  // namespace mmgp::run
