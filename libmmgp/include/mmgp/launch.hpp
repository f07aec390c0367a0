// mmgp/launch.hpp — render a mapping (m, p, nodes) as the command that launches a program that way.
//
//   mmgp::launch_request rq;
//   rq.kind = mmgp::launcher_kind::openmpi;
//   rq.mapping = {4, 2, 1};                     // m processes per node, p threads/APUs each, nodes
//   rq.cores_per_node = 8;                       // 0: unknown, render the mapping as asked
//   mmgp::launch_plan plan = mmgp::render_launch(rq, {"./a.out", "-T", "{p}"});
//   mmgp::shell_command(plan);   // "mpirun -np 4 --map-by ppr:4:node:pe=2 --bind-to core -x OMP_NUM_THREADS=2 ... ./a.out -T 2"
//
// Rendering is pure (no I/O, no environment lookups): a request and a command line in, argument
// vectors and environment assignments out. Starting the processes is the caller's business
// (`mmgp launch --exec` does it in the CLI). Bad requests throw mmgp::error with a one-line
// message "WHAT: expected ..., found ...".
#pragma once

#include "mmgp/export.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mmgp/error.hpp"
#include "mmgp/model.hpp"

MMGP_API_BEGIN
namespace mmgp {

/// Who starts the processes: OpenMPI's mpirun, MPICH's (Hydra) mpiexec, Slurm's srun, or
/// `local`: m processes on this machine, each with its own rank and share of the task units.
enum class launcher_kind { openmpi, mpich, srun, local };
/// Name of a launcher as written on the command line ("openmpi", "mpich", "srun", "local").
std::string_view to_string(launcher_kind k) noexcept;
/// Parses a launcher name; false when unknown.
bool parse_launcher(std::string_view text, launcher_kind& out) noexcept;

/// What to launch and how.
struct launch_request {
    launcher_kind kind = launcher_kind::local;
    configuration mapping;           ///< m processes per node (>= 1), p threads/APUs per process (>= 1), nodes (>= 1)
    std::int64_t units = 1;          ///< U: task units shared among the m*nodes processes ({units}), >= 0
    int cores_per_node = 0;          ///< cores a node offers; 0 = unknown (no fallback, render as asked)
    std::vector<int> cpus;           ///< local: CPU ids processes may be bound to (empty = do not bind)
    bool oversubscribe = false;      ///< allow more processes than cores (mpirun --oversubscribe, srun --overcommit)
    bool allow_run_as_root = false;  ///< OpenMPI only: add --allow-run-as-root
    std::string program;             ///< launcher program; empty = "mpirun", "mpiexec", "srun" (local: none)
    bool bind = true;                ///< bind processes to cores (false: --bind-to none, -bind-to none, --cpu-bind=none)
    /// A GPU mapping (mapping.share mps or time_sliced): p is SMs, each process one host thread. `accelerators`:
    /// the node's SMs (0 = unknown: no MPS percentage); `devices`: CUDA_VISIBLE_DEVICES ("" = not set).
    int accelerators = 0;
    std::string devices;
};

/// One process the local launcher starts.
struct launch_process {
    int rank = 0;                    ///< 0 .. m-1
    std::int64_t units = 0;          ///< this rank's share of the task units
    std::vector<int> cpus;           ///< CPUs it is bound to (empty = not bound)
    std::vector<std::string> argv;   ///< what to execute (placeholders substituted; `taskset -c` first when bound)
    std::vector<std::pair<std::string, std::string>> env;  ///< variables to set in its environment
};

/// The rendered launch.
struct launch_plan {
    launcher_kind kind = launcher_kind::local;
    configuration mapping;
    std::int64_t units = 1;
    /// MPI launchers and srun: the single command to execute (environment passed on its command line).
    std::vector<std::string> argv;
    /// local: one entry per process (argv above is empty).
    std::vector<launch_process> processes;
    /// How the request was adapted (e.g. pe=P dropped because m*p exceeds the cores), one sentence each.
    std::vector<std::string> notes;
};

/// Renders the launch of `command` (the program and its arguments) with the request's mapping.
/// Placeholders substituted in every word of `command`: {m}, {p}, {nodes}, {np} (= m*nodes),
/// {U} (all task units); with the local launcher also {rank} and {units} (this rank's share:
/// U / (m*nodes), the first U mod (m*nodes) ranks get one more). Other braces are left alone.
/// Every process gets OMP_NUM_THREADS=p, OMP_PLACES=cores, OMP_PROC_BIND=close and MMGP_M,
/// MMGP_P, MMGP_NODES, MMGP_NP, MMGP_UNITS_TOTAL (local also MMGP_RANK, MMGP_UNITS).
/// Binding: one core set of p cores per process (OpenMPI --map-by ppr:M:node:pe=P --bind-to core,
/// MPICH -bind-to core:P, srun --cpus-per-task=P --cpu-bind=cores, local taskset -c). When the
/// node's cores are known and m*p exceeds them, binding is dropped (--bind-to none and friends)
/// and a note says so; an unbound process gets OMP_PROC_BIND=false and no OMP_PLACES; when m alone exceeds them and `oversubscribe` is false, a note warns that
/// OpenMPI/srun will refuse to start. Throws mmgp::error for an empty command, a mapping below 1,
/// negative units, nodes > 1 with the local launcher, or {rank}/{units} with another launcher.
/// A GPU mapping (mapping.share mps or time_sliced) renders p as SMs: one host core per process (OMP_NUM_THREADS=1,
/// one core bound), MMGP_SHARING, CUDA_VISIBLE_DEVICES when `devices` is set, and under MPS
/// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = mps_percentage(p, accelerators) and a note that the daemon must run.
launch_plan render_launch(const launch_request& rq, const std::vector<std::string>& command);

/// MPS's active-thread percentage that lets a client use p of `accelerators` SMs: ⌈100·p/accelerators⌉ in
/// [1, 100] (100 when accelerators is 0).
int mps_percentage(int p, int accelerators) noexcept;

/// Task units of one rank: U / procs, plus one for the first U mod procs ranks. procs >= 1.
std::int64_t units_of_rank(std::int64_t units, std::int64_t procs, std::int64_t rank) noexcept;

/// Quotes a word for a POSIX shell: unchanged when it only holds safe characters, else in
/// single quotes (a ' becomes '\'').
std::string shell_quote(std::string_view word);

/// The plan as shell text a person can copy and paste: one line for MPI launchers and srun;
/// for local, one `VAR=value ... COMMAND &` line per process followed by `wait`.
std::string shell_command(const launch_plan& plan);

}  // namespace mmgp
MMGP_API_END
