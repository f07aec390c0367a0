// The host off-load runtime: m HPU threads each run task units (bootstraps) whose control logic stays on
// the host and whose likelihood calls are off-loaded to p APU worker threads that share each call by site ranges
// (master + workers, reduction on the master; [R] Fig. 4–6). It is the profiler (`mmgp profile`) and a validation
// target (`mmgp-offload-run`): any (m, p, policy, units) runs and reports its measured wall time and timers.
//
//   mmgp::kernels::config c;  c.m = 2; c.p = 2; c.policy = mmgp::kernels::host_policy::edtlp; c.units = 8;
//   c.simulate_taxa = 24; c.simulate_sites = 2000;          // or c.alignment = "/usr/share/doc/examl/testData/49.gz"
//   mmgp::kernels::result r = mmgp::kernels::run(c);        // r.wall_s, r.timers.host_s, ...
//
// Pool mode (multi-grain scheduling, [R] §5.4): A APU threads shared by the m HPU threads, and a scheduler that
// decides, when an off-load starts, how many of the idle APUs it gets (p per off-load instead of one fixed p):
//
//   c.apus = 8;  c.scheduler = mmgp::kernels::make_mgps_scheduler();   // or make_edtlp_scheduler(), make_advisor_scheduler(...)
//   mmgp::kernels::result r = mmgp::kernels::run(c);        // r.p_histogram[p]: off-loads that ran on p APUs
//
// Processes (a GPU node): m host processes, each owning its accelerator's context and running its units' off-loads
// there as grids of p blocks over all the sites (threads would share one context). The accelerator is made in each
// process after it is forked (offload/cuda/cuda_accelerator.hpp; tests use the kernels' host twin):
//
//   mmgp::kernels::result r = mmgp::kernels::run_processes(c, mmgp::offload::cuda_accelerator());
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "machine.hpp"  // calibration/: topology, pinning, futex
#include "kernels.hpp"
#include "scheduler.hpp"

namespace mmgp::kernels {

/// What an HPU thread does while its off-load runs: `edtlp` blocks on a futex (the thread yields its host context
/// to another HPU thread on every off-load, [R] §5.2); `os` spin-waits on the result (the OS decides when to switch).
enum class host_policy { edtlp, os };

/// Iterations an APU thread (and an edtlp master waiting for a request) spins before it blocks on a futex;
/// the os HPU thread spins without limit. `mmgp profile` writes it as application.spin_limit.
inline constexpr long spin_then_block_limit = calib::offload_spin_limit;
const char* to_string(host_policy p);
/// "edtlp" or "os"; false otherwise.
bool parse_host_policy(const std::string& text, host_policy& out);

/// A fake program with known regions, run through the same runtime and timers (tests, and checking the profiler):
/// each unit makes `offloads` off-loads; before each one the host busy-waits `host_s`; each off-load busy-waits
/// `serial_s` on every APU (work that does not split) and `split_s / p` on each of the p APUs.
struct synthetic_program {
    int offloads = 100;
    double host_s = 20e-6;
    double split_s = 100e-6;
    double serial_s = 10e-6;
};

struct config {
    int m = 1;                       ///< HPU threads
    int p = 1;                       ///< APUs per HPU thread (site ranges per off-load)
    host_policy policy = host_policy::edtlp;
    int units = 4;                   ///< task units (bootstraps), distributed round-robin over the m HPU threads
    // workload: the phylogenetic bootstrap search (default) or a synthetic program
    bool synthetic = false;
    synthetic_program synth;
    std::string alignment;           ///< alignment file (PHYLIP/FASTA, gz or not); empty: simulate
    int simulate_taxa = 24, simulate_sites = 2000;
    int taxa = 0, sites = 0;         ///< keep only the first taxa / sites of the alignment (0 = all)
    int rounds = 1;                  ///< branch-length smoothing rounds over all edges per unit
    int newton = 4;                  ///< at most this many Newton steps per branch
    std::uint64_t seed = 1;
    double timeout_s = 120;          ///< watchdog: a run longer than this is aborted with an error
    /// run_processes only: this run is rank `rank` of `ranks` started together by a launcher (mmgp launch's
    /// MMGP_RANK and MMGP_NP), sharing `units`: its process i runs the units rank + i·ranks, then every m·ranks-th.
    int rank = 0, ranks = 1;
    /// Pool mode when > 0: `apus` APU threads shared by the m HPU threads; every process's data is split into
    /// `apus` fixed site chunks, and an off-load that gets p APUs deals its chunks to them in p contiguous blocks
    /// (so per-unit results do not depend on p). `p` is then ignored. 0: the fixed mode (m*p APU threads, p per HPU).
    int apus = 0;
    /// Pool mode: decides p per off-load (null: p = 1 always, EDTLP). Stateful: give each run a new one.
    std::shared_ptr<offload_scheduler> scheduler;
    /// Fixed mode: pin group i's HPU thread and master APU to allowed CPU (i*p) mod n and its worker j to
    /// CPU (i*p + j) mod n (n = CPUs this process may use), so that with m*p <= n every APU has a core of its
    /// own and the woken HPU thread never takes a worker's core. For measuring what the APUs cost
    /// (mmgp profile's g) without the scheduler in the way; a run's threads are otherwise unpinned.
    bool pin_team = false;
};

/// Timers summed over every off-load (seconds) and counts.
struct timers {
    double host_s = 0;        ///< HPU threads: time outside off-loads (control logic), summed over HPU threads
    double roundtrip_s = 0;   ///< HPU side: from posting an off-load to seeing its result
    double apu_busy_s = 0;    ///< master APU: from taking the request to posting the result
    double apu_serial_s = 0;  ///< master APU: per-call work every APU repeats (P matrices; synthetic serial part)
    double apu_split_s = 0;   ///< master APU: its share of the site-range work
    double apu_fork_s = 0;    ///< master APU: signalling the p-1 workers
    double apu_join_s = 0;    ///< master APU: waiting for the workers after its own share, and the reduction
    double worker_split_s = 0;///< workers: their shares (summed over workers)
    double queue_s = 0;       ///< pool mode, HPU side: waiting for an idle APU (part of roundtrip_s)
    std::int64_t offloads = 0;
    std::array<std::int64_t, 6> by_kind{};  ///< off-loads per kind: weights, newview, evaluate, sumtable, derivatives, synthetic
    std::int64_t newview_ops = 0;           ///< partial-likelihood updates (libpll operations)
    std::int64_t context_switches = 0;      ///< voluntary context switches of the HPU threads (getrusage)
    std::int64_t bytes = 0;                 ///< processes on a timed accelerator: bytes copied host <-> device
    double empty_roundtrip_s = 0;           ///< processes on a timed accelerator: one empty off-load's round trip (summed over processes)
    std::int64_t device_waits = 0;          ///< processes on a timed accelerator: times the host waited for its grids

    /// Every field summed: one thread's timers into the run's (a field a thread never sets adds nothing).
    timers& operator+=(const timers& o) noexcept {
        host_s += o.host_s, roundtrip_s += o.roundtrip_s, apu_busy_s += o.apu_busy_s, apu_serial_s += o.apu_serial_s;
        apu_split_s += o.apu_split_s, apu_fork_s += o.apu_fork_s, apu_join_s += o.apu_join_s;
        worker_split_s += o.worker_split_s, queue_s += o.queue_s, offloads += o.offloads;
        for (std::size_t k = 0; k < by_kind.size(); ++k) by_kind[k] += o.by_kind[k];
        newview_ops += o.newview_ops, context_switches += o.context_switches;
        bytes += o.bytes, empty_roundtrip_s += o.empty_roundtrip_s, device_waits += o.device_waits;
        return *this;
    }
};

struct result {
    config cfg;
    double wall_s = 0;         ///< all units, from the start signal to the last HPU thread finishing
    double setup_s = 0;        ///< reading/simulating data, creating partitions and threads (not in wall_s)
    std::size_t taxa = 0, sites = 0;
    std::string data_source;
    timers t;
    std::vector<double> unit_loglik;  ///< final log-likelihood of each unit's bootstrap replicate (phylo only; NaN: another rank's)
    /// Synthetic program only: the busy-waits as the fake kernel itself timed them (host: every HPU thread;
    /// split and serial: master APUs only), the ground truth the profiler's timers are checked against.
    double synth_host_s = 0, synth_split_s = 0, synth_serial_s = 0;
    /// Pool mode only: p_histogram[p] = off-loads that ran on p APUs (index 0 unused, size apus + 1), and
    /// the scheduler's name.
    std::vector<std::int64_t> p_histogram;
    std::string scheduler;
    /// Pool mode only: off-loads whose scheduler asked for more APUs than were idle (they got the idle ones).
    std::int64_t clamped = 0;
    /// pin_team: whether every thread was pinned (false when asked but the affinity calls failed).
    bool pinned = false;
    /// Where the off-loads ran: "cpu" (APU threads: run()) or the accelerator of run_processes().
    std::string accelerator = "cpu";
    /// Mean APUs per off-load (pool mode; the fixed p otherwise).
    double mean_p() const;
};

/// The most threads a run on CPU threads starts (m HPU threads and their APU threads; all start before the
/// watchdog), and the most processes a run on an accelerator forks.
inline constexpr long long max_threads = 4096;
inline constexpr int max_processes = 1024;

/// The checks of c that need no data, as run() (accelerator empty) or run_processes() on that accelerator make
/// them first: throws mmgp::usage_error.
void check_config(const config& c, const std::string& accelerator = "");
/// The data of a run on an accelerator as run_processes() reads it (the alignment read or simulated, cut to --taxa
/// and --sites, against the host's memory and p), thrown away: bad data is bad input on a machine where no device
/// can run it.
void check_data(const config& c);

/// Runs one configuration. Throws mmgp::input_error for an unreadable alignment, mmgp::usage_error for sizes or
/// options that cannot run, and mmgp::failure for a failure or a watchdog timeout. Requires m >= 1, p >= 1,
/// units >= 1, p <= sites; in pool mode apus <= sites.
result run(const config& c);

namespace detail {
class offloader;
}

/// An accelerator every process of a run owns (a GPU's context): `make` is called in each process after it is
/// forked, and returns the off-loader that runs that process's off-loads over every site of the alignment, p blocks
/// per off-load. It may throw (its message fails the run).
struct process_accelerator {
    std::string name;  ///< "cuda": the result's accelerator and the errors' wording
    std::function<std::unique_ptr<detail::offloader>(const alignment&, const model&, const tree&, int p)> make;
};

/// Runs one configuration as m forked processes, each with its units (i, i + m, ...) and its own accelerator's
/// off-loader (the HPU's time outside off-loads is host_s, inside them roundtrip_s; the APU timers stay 0). The
/// same checks and errors as run(); a synthetic program or pool mode is a usage_error; a process that fails or a
/// run past the watchdog is an mmgp::failure (its processes killed).
result run_processes(const config& c, const process_accelerator& acc);

/// The off-load kinds, index into timers::by_kind.
inline constexpr const char* offload_kind_names[6] = {"weights", "newview", "evaluate", "sumtable", "derivatives", "synthetic"};

/// JSON text of a result (what mmgp-offload-run prints).
std::string to_json(const result& r);

}  // namespace mmgp::kernels
