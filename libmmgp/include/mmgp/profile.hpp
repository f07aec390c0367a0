// mmgp/profile.hpp — platform and application profiles and scenarios (schema "mmgp/1").
//
//   mmgp::scenario s = mmgp::load_scenario("profiles/pbpi-qs20.json");   // or a bundled name: "pbpi-qs20"
//   s.plat.apus;        // accelerators per node
//   s.app.T_apu;        // seconds of parallelisable accelerator work
//
// All times are seconds, sizes bytes. Readers validate everything they read and throw
// mmgp::input_error naming file, JSON pointer, expected and found.
#pragma once

#include "mmgp/export.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mmgp/error.hpp"

MMGP_API_BEGIN
namespace mmgp {

/// How an application splits its work ([H] Eq. 11 is `data`; RAxML bootstraps are `task`).
enum class decomposition { data, task };
/// Strong scaling: the whole problem is fixed as nodes grow; weak: the work per node is fixed.
enum class scaling { strong, weak };
/// Host scheduling policy when processes share host contexts: `edtlp` switches on every
/// off-load ([R] §5.2); `os` leaves processes on a context until they finish ([R] Table 1, Linux).
enum class policy { edtlp, os };
/// How the m processes of a node share its accelerators (docs/MODEL.md §7). `dedicated`: each process has its own
/// p of them, m·p <= A (the Cell's SPEs, worker cores). On a GPU node (the APUs are SMs): `mps`, the processes'
/// kernels run at once under the Multi-Process Service, m·p <= A as when dedicated; `time_sliced`, the default
/// without MPS, one process's kernels at a time with a switch between them, p <= A and m·p may exceed A.
enum class accelerator_sharing { dedicated, mps, time_sliced };
/// How the off-load gap g is charged per phase: `per_apu` is [H] Eq. 11 (N*p*g); `per_extra_apu`
/// charges N*(p-1)*g, for a g measured as the slope of the off-load cost per additional APU (mmgp profile).
enum class gap_charge { per_apu, per_extra_apu };
/// A communication primitive of the cluster term ([C] §4.4).
enum class primitive { allreduce, bcast, reduce, barrier, allgather, gather, scatter, alltoall, sendrecv };

/// Name of a decomposition/scaling/policy/primitive as written in profiles ("data", "edtlp", ...).
std::string_view to_string(decomposition d) noexcept;
std::string_view to_string(scaling s) noexcept;
std::string_view to_string(policy p) noexcept;
std::string_view to_string(primitive p) noexcept;
std::string_view to_string(accelerator_sharing a) noexcept;
/// Parses a policy name ("edtlp" or "os"); false when unknown.
bool parse_policy(std::string_view text, policy& out) noexcept;
/// Parses a sharing name ("dedicated", "mps" or "time_sliced"); false when unknown.
bool parse_sharing(std::string_view text, accelerator_sharing& out) noexcept;

/// A quantity that depends on the number m of host processes on a node: α(m) or O_col(m).
struct m_function {
    enum class form { constant, table, linear };
    form kind = form::constant;
    /// constant form: the value (for α it applies to m >= 2; α(1) = 1 always).
    double value = 0.0;
    /// table form: entry [m] is the value for m, NaN where the table has no entry (index 0 unused).
    std::vector<double> table;
    /// linear form, [C] §4.1: value(m) = intercept + slope * m / H (H = host contexts per node),
    /// i.e. linear in the number of threads per hardware context.
    double intercept = 0.0, slope = 0.0;
    /// True when value(m) is defined (a table covers m; other forms cover every m >= 1).
    bool covers(int m) const noexcept;
};

/// How an accelerator's time grows with the blocks resident on it (a GPU's SM, docs/MODEL.md §7): `factor[i]` is
/// the time of a grid with `k[i]` blocks per accelerator over the time with one, every block the same work (k
/// increasing from 1, where the factor is 1). Between points the most loaded accelerator's count, ⌈k⌉, is
/// interpolated; beyond the last point blocks run in waves at its throughput (the factor grows with k).
struct slot_curve {
    /// What a curve may hold (its readers and writers check the same): points, blocks per accelerator, and a
    /// factor at most this many times the blocks (k blocks one after the other take k times one's).
    static constexpr std::size_t max_points = 64;
    static constexpr double max_blocks = 1e6, max_factor_per_block = 10;
    std::vector<double> k, factor;
    bool empty() const noexcept { return k.empty(); }
    /// The factor at k blocks per accelerator (1 for k <= 1).
    double at(double blocks_per_apu) const noexcept;
};

/// A latency + per-byte cost: cost(bytes) = latency_s + s_per_byte * bytes.
struct link_cost {
    double latency_s = 0.0;   ///< seconds, >= 0
    double s_per_byte = 0.0;  ///< seconds per byte (1 / bandwidth), >= 0
};

/// One measured point of a communication table: time of one operation of `bytes` bytes.
struct comm_point {
    double bytes = 0.0;    ///< message size per process, bytes >= 0
    double seconds = 0.0;  ///< time of one operation, seconds >= 0
};

/// A measured table for one primitive and one distribution of processes (mpptest/OSU style).
struct comm_table {
    primitive prim = primitive::allreduce;
    int nodes = 1;                   ///< nodes the processes were spread over
    int ppn = 1;                     ///< processes per node
    std::vector<comm_point> points;  ///< sorted by bytes, distinct sizes
};

/// The fitted latency–bandwidth model of one primitive: a cost per intra-node stage and per
/// inter-node stage; the stage counts depend on the primitive (docs/MODEL.md §2).
struct comm_model {
    link_cost intra;
    link_cost inter;
    bool has_intra = true;  ///< false when fitted from data without intra-node stages
    bool has_inter = true;  ///< false when fitted from single-node data only
};

/// The spread of a profile's parameter as written beside its value ({"value": v, "spread"|"mad"|"std_error": s}):
/// a MAD of observations (mmgp calibrate's "spread", mmgp profile's "mad") or a standard error.
struct parameter_spread {
    std::string key;   ///< the top-level key, e.g. "T_csw"
    double spread = 0; ///< in the parameter's unit
    bool mad = true;   ///< a median absolute deviation (false: a standard error)
};

/// Where a calibrated platform comes from: its "machine" and "calibration" sections, as mmgp calibrate
/// writes them (provenance only: the model never reads them).
struct platform_provenance {
    bool calibrated = false;  ///< the profile has a "calibration" section
    std::string host_hash;    ///< machine.host_hash, or the hash of machine.host_name (host_hash())
    std::string cpu_model, kernel;
    std::string date;         ///< machine.date as written (ISO 8601, e.g. 2026-11-22T10:17:38+0000)
    int cores = 0;            ///< machine.cores (0: not stated)
    int min_repetitions = 0;  ///< fewest repetitions behind a calibrated parameter (0: none stated)
    std::vector<parameter_spread> spreads;    ///< the spreads written beside values (--uncertainty)
    std::vector<std::string> flagged;  ///< "KEY: warning" of each parameter flagged noisy, in key order
};

/// One stretch of a message's path through the machine (docs/MODEL.md §6): a start-up and a rate. Parts marked
/// `host` run on a host core that forwards the message (e.g. DaCS and MPI on the Opteron of a triblade).
struct path_part {
    std::string name;
    double latency_s = 0.0;    ///< start-up of this stretch, >= 0
    double s_per_byte = 0.0;   ///< 1 / bandwidth (0: no rate limit given)
    bool host = false;         ///< done by a forwarding host core
};

/// One level of the communication hierarchy: messages between ranks whose innermost common level is this
/// one cross every part of `path`, one after the other (no overlap between parts).
struct hierarchy_level {
    std::string name;
    int ranks = 0;             ///< accelerator ranks within one unit of this level (0: the level beyond a node)
    int forwarders = 0;        ///< host cores per node that forward the messages crossing this level (0: none)
    std::vector<path_part> path;
};

/// Where the accelerators sit and what a message between two of them costs (the platform's `hierarchy`),
/// innermost level first; the last level with `ranks` is one node (its ranks = apus); a level without
/// `ranks`, if any, is the network between nodes.
struct hierarchy {
    static constexpr std::size_t max_levels = 16;  ///< the readers refuse deeper hierarchies
    std::vector<hierarchy_level> levels;
    bool empty() const noexcept { return levels.empty(); }
};

/// The most processes, accelerators (blocks) or nodes a search counts to, 2^30: the search and its reports count
/// them in int, and one more than the largest never overflows. A larger platform is searched up to it.
inline constexpr std::int64_t max_searched_count = std::int64_t{1} << 30;

/// A host + accelerator node type and how many of them there are.
struct platform {
    std::string name;
    platform_provenance provenance;  ///< calibrated profiles only: machine, date, repetitions, flags
    int hpu_contexts = 1;   ///< H: host hardware contexts per node
    int apus = 1;           ///< A: accelerators per node
    int nodes = 1;          ///< nodes available
    int max_processes_per_node = 0;  ///< process limit per node (0 = no limit beyond A)
    /// Cores that HPU and APU threads time-share (0 = dedicated hardware, the papers' Cell/GPU case).
    /// When > 0, HPUs and APUs are software threads of a CPU-only node: m*p may exceed the cores
    /// (apus only bounds m*p) and every round of units is stretched by the processor-sharing factor
    /// max(1, runnable threads / cores) (docs/MODEL.md §4).
    int cores = 0;
    /// s, time-shared cores only: waking a blocked thread while a core is idle (the idle core has to be
    /// woken: on a VM a halted vCPU). The switch of an edtlp off-load costs T_wake while the runnable
    /// threads leave a core idle and T_csw (a hand-off on a busy core) otherwise. Negative = T_csw.
    double T_wake = -1.0;
    /// s, time-shared cores only: processor time of one hand-back to a blocked thread when more threads are
    /// runnable than there are cores (the spin harness's pairs: wake-up on a busy core, its IPI and migration,
    /// and the waker's spin until the woken thread runs). The switch of an edtlp off-load with p = 1 costs it
    /// instead of T_csw when the processes' threads oversubscribe the cores. Negative = T_csw.
    double T_wake_busy = -1.0;
    /// s, time-shared cores only: one iteration of a spin-wait loop (one load and one `pause`); with the
    /// application's spin_limit it gives the spin budget a waiter burns before it blocks (docs/MODEL.md §4).
    double spin_pause = 0.0;
    /// s, time-shared cores only: how long the OS lets a spinning thread keep its core while a runnable
    /// thread waits for it (the scheduler's time slice); bounds the spin of a waiter that never blocks.
    double sched_slice = 0.0;
    double O_offload = 0.0; ///< s, start an off-load and get its result back (O_s + O_r)
    double T_csw = 0.0;     ///< s, one host context switch
    m_function alpha;       ///< host contention factor α(m), α(1) = 1
    bool has_dma = false;   ///< true when `dma` was given
    link_cost dma;          ///< host<->accelerator transfer cost (the DMA term of [C] Eq. 5)
    std::vector<comm_table> comm_tables;          ///< measured communication tables
    /// Models given in the network section; the evaluator fits one to the tables of each other primitive.
    std::vector<std::pair<primitive, comm_model>> comm_models;
    hierarchy hier;         ///< the accelerators' communication hierarchy (empty when not given)
    /// The ways the processes may share the accelerators, each searched (docs/MODEL.md §7); empty: dedicated
    /// only. A GPU node lists `mps` where the MPS daemon can run and `time_sliced`.
    std::vector<accelerator_sharing> sharing;
    /// s, `time_sliced` only: the accelerator's switch from one process's kernels to another's (a time slice's
    /// context switch), paid per off-load when m > 1.
    double T_slice_switch = 0.0;
    /// Blocks one accelerator holds at once at the reference block size (a GPU's SM: its occupancy, 8 blocks of
    /// 256 threads on an H100 or H200); 1 elsewhere. p (time-sliced) or m·p (otherwise) may reach apus·apu_slots.
    int apu_slots = 1;
    /// The accelerator's time against its resident blocks (required when apu_slots > 1): the reference kernel's.
    slot_curve slot_time;
    /// The most blocks the processes of a node may keep on its accelerators: apus·apu_slots, at most
    /// max_searched_count.
    std::int64_t capacity() const noexcept {
        return std::min<std::int64_t>(static_cast<std::int64_t>(apus) * apu_slots, max_searched_count);
    }
    /// The sharing modes the search covers: `sharing`, or dedicated alone when it is empty.
    std::vector<accelerator_sharing> sharing_modes() const {
        return sharing.empty() ? std::vector<accelerator_sharing>{accelerator_sharing::dedicated} : sharing;
    }
};

/// A wavefront sweep (Sweep3D-like, docs/MODEL.md §6): a 3-D grid of cells split over a 2-D grid of ranks in I
/// and J, swept in K blocks for every octant; each step a rank waits for its two upstream faces, computes a
/// block and sends its two downstream faces.
struct wavefront {
    double cells[3] = {0, 0, 0};  ///< I, J, K cells: per rank (weak scaling) or of the whole problem
    bool per_rank = true;         ///< cells per rank (true) or of the whole problem, split over the grid
    double angles = 1;            ///< angles per octant, all carried by every step
    double k_block = 1;           ///< K planes per block (per step)
    double octants = 8;           ///< sweeps per iteration
    double fills = 8;             ///< pipeline fills and drains per iteration (octants that do not overlap)
    double iterations = 1;
    double t_cell_s = 0;          ///< s, one cell and one angle on one accelerator
    double bytes_per_value = 8;   ///< one flux value in a face message
    /// Host-driven (accelerator-model) port: per cell and angle, the accelerator's transfers between main
    /// memory and its local memory and the host's control (seconds; neither splits over the accelerators).
    double dma_s_per_cell = 0, control_s_per_cell = 0;
    bool has_host_driven = false;
};

/// One communication pattern of an application phase: `count` operations of `bytes` each.
struct comm_pattern {
    primitive prim = primitive::allreduce;
    double bytes = 0.0;
    double count = 1.0;
};

/// What a program does, from a profile of its sequential run ([H] §3.3, §4.1).
struct application {
    std::string name;
    decomposition decomp = decomposition::data;
    scaling scale = scaling::strong;
    double N = 0.0;       ///< off-loading phases: per run (data) or per unit (task)
    double T_hpu = 0.0;   ///< s, host time with 1 HPU (per run, or per unit for task)
    double T_apu = 0.0;   ///< s, parallelisable accelerator time with 1 HPU + 1 APU
    double C_apu = 0.0;   ///< s, accelerator time that cannot be split across APUs
    double g = 0.0;       ///< s, gap between consecutive off-loads, per phase and per APU
    gap_charge g_charge = gap_charge::per_apu;  ///< N*p*g ([H] Eq. 11) or N*(p-1)*g
    /// Spin-wait iterations before a waiting thread of the program blocks (0 = blocks at once, the
    /// default; spin_unbounded = never blocks). Used with time-shared cores only (docs/MODEL.md §4).
    std::int64_t spin_limit = 0;
    static constexpr std::int64_t spin_unbounded = -1;
    /// s, start-up of one process (reading input, set-up), paid once per process, not per unit.
    double T_start = 0.0;
    /// Off-loads (synchronisations) of that start-up, once per process. T_start is their dedicated time; on
    /// time-shared cores each also pays the edtlp switch and the spin convoy of the first round, as a unit's
    /// off-loads do (RAxML's parsimony and model set-up synchronise its threads thousands of times).
    double N_start = 0.0;
    /// s, the per-off-load overhead of the program's own sequential run (m = 1, p = 1, edtlp): HPU round trip
    /// minus APU busy time, i.e. O_offload plus the wake-up of the blocked HPU thread while a core is idle
    /// (measured by mmgp profile); < 0: not given. On time-shared cores it replaces the platform's T_wake by
    /// max(0, T_offload_idle - O_offload): how long that wake-up takes depends on how long the core idled, so
    /// the program's own off-loads measure it better than a synthetic round trip (docs/MODEL.md §4).
    double T_offload_idle = -1.0;
    /// Times one off-load's host waits for the accelerator (the grids it synchronises on, one after another): on a
    /// time-sliced accelerator shared by m > 1 processes, each is a switch to this process's context
    /// (docs/MODEL.md §7). 1 by default: one grid per off-load.
    double waits_per_offload = 1.0;
    m_function O_col;     ///< s per phase, global synchronisation with m processes
    std::int64_t units = 1;  ///< U: independent task units (task decomposition)
    double dma_bytes = 0.0;  ///< bytes per off-load not overlapped with computation
    std::vector<comm_pattern> comm;  ///< communication per phase (cluster term)
    std::vector<parameter_spread> spreads;  ///< the spreads written beside values (mmgp predict --uncertainty)
    /// The program's own kernel's time against the blocks resident per accelerator (measured by mmgp profile on a
    /// GPU); empty: the platform's slot_time.
    slot_curve slot_time;
    bool has_wavefront = false;  ///< `wavefront` given: the program can also be mapped accelerator-driven
    wavefront wave;
};

/// An inclusive integer range.
struct int_range {
    std::int64_t lo = 1, hi = 1;
};

/// The space the search covers and how it ranks.
struct search_space {
    int_range m{1, 1}, p{1, 1}, nodes{1, 1};
    policy pol = policy::edtlp;
    double tolerance = 0.05;  ///< near-optimal set: time <= best * (1 + tolerance)
    /// The sharing modes searched, a subset of the platform's; empty: all of the platform's sharing_modes().
    std::vector<accelerator_sharing> sharing;
};

/// A platform, an application and a search space: what `mmgp predict` reads.
struct scenario {
    std::string name;
    std::string file;  ///< where it was read from ("" when built in memory)
    /// Every file read to make it: the scenario's own and the platform and application files it names (what no
    /// output of a command that reads it may overwrite).
    std::vector<std::string> sources;
    platform plat;
    application app;
    search_space space;
    /// The application model the scenario names (its "model": eq11 or mmgp, as `mmgp models` lists them); empty:
    /// none named, the command's (--model, default mmgp). A command's --model overrides it.
    std::string model;
    /// The communication model it names ("communication"): "table" (empty, the default: a measured or simulated
    /// table where one covers the configuration, the latency-bandwidth model beyond) or "latency-bandwidth" (that
    /// model everywhere, given or fitted to the tables: what the tables would be without them).
    std::string communication;
};

/// One mapping: m processes per node, p accelerators per process, `nodes` nodes.
struct configuration {
    int m = 1;
    int p = 1;
    int nodes = 1;
    policy pol = policy::edtlp;
    accelerator_sharing share = accelerator_sharing::dedicated;  ///< one of the platform's sharing_modes()

    /// The same configuration: every field equal, the sharing mode included.
    friend bool operator==(const configuration&, const configuration&) = default;
};

/// The blocks (accelerators) of c the platform must hold at once, against its capacity(): p alone time-sliced (one
/// process's grid at a time), m·p otherwise.
inline std::int64_t held_blocks(const configuration& c) noexcept {
    return c.share == accelerator_sharing::time_sliced ? std::int64_t{c.p} : std::int64_t{c.m} * c.p;
}
/// Whether the platform holds c at all: its blocks within the capacity, its nodes and its processes per node
/// (max_processes_per_node, where set) within the platform's.
inline bool platform_holds(const platform& pl, const configuration& c) noexcept {
    return held_blocks(c) <= pl.capacity() && c.nodes <= pl.nodes &&
           !(pl.max_processes_per_node > 0 && c.m > pl.max_processes_per_node);
}
/// The platform's capacity in words: "apus = A", or "apus x apu_slots = A·slots" on a GPU node with block slots.
inline std::string capacity_text(const platform& pl) {
    return (pl.apu_slots > 1 ? "apus x apu_slots = " : "apus = ") + std::to_string(pl.capacity());
}
/// What platform_holds asks of a configuration, in words for messages: "m*p <= apus = 16, nodes <= 1" ("time-sliced:
/// p <= ..." when `sliced`), then ", m <= K" where the platform limits the processes per node.
inline std::string holds_text(const platform& pl, bool sliced) {
    return std::string(sliced ? "time-sliced: p <= " : "m*p <= ") + capacity_text(pl) + ", nodes <= " + std::to_string(pl.nodes) +
           (pl.max_processes_per_node > 0 ? ", m <= " + std::to_string(pl.max_processes_per_node) : "");
}

/// The feasible part of a scenario's search space under one sharing mode: m in [m_lo, m_hi], p in [p_lo, p_hi],
/// nodes in [n_lo, n_hi], and m*p <= apus (p <= apus alone when `sliced`: time-sliced sharing). A configuration
/// is feasible when it lies in s.space, within those caps, nodes <= platform nodes and m <= max_processes_per_node
/// (if set), its sharing one of the platform's.
struct space_bounds {
    std::int64_t m_lo, m_hi, p_lo, p_hi, n_lo, n_hi, apus;
    bool sliced = false;
    /// Highest feasible p for m (m*p <= apus, or p <= apus when sliced), below p_lo when none.
    std::int64_t p_top(std::int64_t m) const noexcept {
        const std::int64_t cap = sliced ? apus : apus / m;
        return p_hi < cap ? p_hi : cap;
    }
    /// Highest m with at least one feasible p (below m_lo when none).
    std::int64_t m_top() const noexcept {
        if (p_lo > p_hi) return m_lo - 1;
        if (sliced) return m_hi;
        return m_hi < apus / p_lo ? m_hi : apus / p_lo;
    }
};
/// The bounds of the scenario's space under `share` (dedicated and mps: m*p <= apus; time_sliced: p <= apus).
space_bounds bounds(const scenario& s, accelerator_sharing share = accelerator_sharing::dedicated) noexcept;
/// The sharing modes a scenario's search covers: its space's, else the platform's sharing_modes().
std::vector<accelerator_sharing> searched_modes(const scenario& s);
/// The widest bounds over the searched modes (time-sliced when searched): what the coverage checks cover.
space_bounds widest_bounds(const scenario& s);

/// Narrows the scenario's search space to configuration c alone (c's policy included): what
/// fitting and validating evaluate.
void narrow(scenario& s, const configuration& c) noexcept;

/// Reads a scenario from a path, or a bundled scenario by name ("pbpi-qs20").
/// Its `platform` and `application` may be objects, paths relative to the file, or bundled names.
scenario load_scenario(const std::string& path_or_name);

/// What-if edits of a scenario (the command line's --set): JSON merge patches (RFC 7386) of its sections as
/// text, e.g. platform = {"apus": 32}; null removes a key. They are applied to the resolved sections before
/// these are read, so an edited value is checked like a value of the file (errors name the file "(patched)").
struct scenario_edits {
    std::string platform, application, search;  ///< JSON objects; empty: no edit
    bool empty() const noexcept { return platform.empty() && application.empty() && search.empty(); }
};
/// load_scenario() with what-if edits.
scenario load_scenario(const std::string& path_or_name, const scenario_edits& edits);
/// Parses a scenario from JSON text; `file` names it in errors, `base_dir` resolves relative paths.
scenario parse_scenario(std::string_view json_text, const std::string& file, const std::string& base_dir = ".");
/// Reads a platform profile from a path or a bundled name ("qs20", "ps3", "triblade").
platform load_platform(const std::string& path_or_name);
/// load_platform() with a what-if edit: a JSON merge patch of the platform as text (empty: none).
platform load_platform(const std::string& path_or_name, const std::string& edit);
/// Reads an application profile from a path or a bundled name ("pbpi", "raxml").
application load_application(const std::string& path_or_name);

/// Parses a platform profile from JSON text (as `mmgp calibrate` writes it); `file` names it in errors.
platform parse_platform(std::string_view json_text, const std::string& file);
/// Parses an application profile from JSON text (as `mmgp profile` and `mmgp fit` write it).
application parse_application(std::string_view json_text, const std::string& file);

/// The machine a command runs on, as far as a platform's provenance can be compared with it.
struct machine_fingerprint {
    std::string host_hash, cpu_model;
    int cores = 0;
};
/// A short stable hash of a host name (FNV-1a, 16 hex digits): calibrated profiles record it, not the name.
std::string host_hash(const std::string& host_name);
/// This machine's fingerprint: the host name's hash, /proc/cpuinfo's model name, the online cores (I/O).
machine_fingerprint this_machine();
/// The CPUs this process may run on (sched_getaffinity: cgroups, taskset), in increasing order; empty when
/// they cannot be read.
std::vector<int> available_cpus();
/// Now, in UTC, as provenance and journals record it: "2024-05-01T12:00:00Z".
std::string utc_now();

/// When a calibrated platform is not to be trusted without a word (docs/PROFILES.md "Freshness").
struct freshness_policy {
    double max_age_days = 90;  ///< older calibrations are flagged
    int min_repetitions = 3;   ///< fewer repetitions behind a parameter are flagged
};
/// One line per reason to distrust the platform here: calibrated on another machine (host, CPU model or
/// core count differ), older than policy.max_age_days at `now_unix` (seconds since 1970), fewer repetitions
/// than policy.min_repetitions, or a parameter flagged noisy. Empty for a platform that was not calibrated
/// (a bundled description of another machine is not stale). Pure: `here` and `now_unix` come from the caller.
std::vector<std::string> platform_warnings(const platform& pl, const machine_fingerprint& here, std::int64_t now_unix,
                                           const freshness_policy& policy = {});

/// Checks that the scenario's tables cover its search space and that the space is not empty;
/// throws input_error naming the offending JSON path. load_scenario() already calls it.
void check_coverage(const scenario& s);

/// Names of the bundled profiles of a kind: "platforms", "apps" or "scenarios".
std::vector<std::string> bundled_names(std::string_view kind);
/// Text of a bundled profile ("platforms/qs20", "apps/pbpi", "scenarios/pbpi-qs20"), or empty.
std::string_view bundled_text(std::string_view key) noexcept;

}  // namespace mmgp
MMGP_API_END

// The keys of each profile type (after the types: the tables name their members).
#include "mmgp/profile_keys.hpp"
