// The calibration harnesses: each measures one platform parameter on this machine through an
// apu_backend, with a discarded warm-up, repetitions and robust statistics (stats.hpp).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend.hpp"
#include "machine.hpp"
#include "stats.hpp"

namespace mmgp::calib {

// --- records, options and shared helpers (harness_common.cpp) ---

/// One measured quantity.
struct measurement {
    std::string name;     ///< "offload/spin", "csw/yield", "alpha/m=4", "dma/4096B"
    std::string harness;  ///< "offload", "gap", "csw", "alpha", "dma"
    std::string unit = "s";
    double value = 0;     ///< what the profile records (the median of `obs` unless a harness says otherwise)
    summary obs;          ///< every observation (single round trips, per-size values, ...)
    summary reps;         ///< one value per repetition: its CV decides whether the quantity is noisy
    int repetitions = 0;
    std::size_t observations = 0;
    int attempts = 1;
    bool flagged = false;
    std::string warning;
    nlohmann::json extra = nlohmann::json::object();
};

/// The benchmark record (Google-Benchmark-like, plus median, MAD, CI and CV).
nlohmann::json to_json(const measurement& m);
/// The profile parameter {"value": v, "median", "spread", "mad", "cv", "repetitions", "harness", "min", "ci95", ...}.
nlohmann::json to_param(const measurement& m);

struct harness_options {
    roles r;
    bool quick = false;
    int repetitions = 0;         ///< 0: the harness default (quick or full)
    double cv_threshold = 0.10;  ///< above it a quantity is noisy: repeated, then flagged
    double retry_budget_s = 5;   ///< time a harness may spend repeating a noisy measurement
    std::function<void(const std::string&)> progress;  ///< may be empty
};

/// Median cost of one steady_clock::now() pair (subtracted from single-event timings).
double clock_overhead();

// --- harness "offload" (harness_offload.cpp) ---

/// Off-load round trip: HPU thread -> APU (pinned to another core) -> HPU, 4-byte payload, cache-line mailbox.
measurement run_offload(const harness_options& o, wait_mode mode);
/// Round trips a repetition of the spinning round trip: run_offload's spin mode, and any backend timed like it.
std::size_t spin_round_trips_per_rep(const harness_options& o);
/// The round trips of run_offload through `be`, already started with at least one APU (APU 0 answers), `per_rep`
/// round trips a repetition: the measurement named `name`, its extra naming the backend (not the APU's CPU).
measurement run_offload_with(const harness_options& o, apu_backend& be, const std::string& name, std::size_t per_rep);

// --- harness "gap" (harness_gap.cpp) ---

/// Gap g: one HPU thread starts p off-loads back to back and waits for all; g = slope of time against p.
measurement run_gap(const harness_options& o);

// --- harness "csw" (harness_csw.cpp) ---

/// Context switch: two threads pinned to one HPU context hand off with sched_yield() (yield) or a futex.
enum class csw_mode { yield, futex };
measurement run_csw(const harness_options& o, csw_mode mode);

// --- harness "alpha" (harness_alpha.cpp) ---

/// Host contention alpha(m): matrix multiply (sizes 100..500), m threads on the HPU contexts.
struct alpha_result {
    std::vector<measurement> per_m;   ///< alpha(m) for the measured m (m >= 2)
    int H = 1;
    std::vector<int> sizes;
    bool linear = true;               ///< false: a constant (too few points, or a negative slope)
    line_fit fit;                     ///< alpha(m) = intercept + slope * m / H
    double constant = 1;
    std::vector<double> t1;           ///< median time of one multiply alone, per size
    std::vector<int> fitted_m;        ///< the m whose alpha the fit used (the unflagged ones when >= 2 are)
};
alpha_result run_alpha(const harness_options& o);

// --- harness "dma" (harness_dma.cpp) ---

/// Data transfer (DMA analogue): an APU copies a buffer last written by the HPU core into its own memory.
struct dma_result {
    std::vector<measurement> per_size;
    link_fit fit;
};
dma_result run_dma(const harness_options& o);
/// The copies of run_dma through `be`, already started with at least one APU (APU 0 copies), from 128 B up to
/// min(16 MiB, be.max_transfer()); throws mmgp::failure when that is below 128 B.
dma_result run_dma_with(const harness_options& o, apu_backend& be);

// --- harness "spin": spin-wait iteration, scheduler time slice, hand-back (harness_spin.cpp) ---

/// Spin-wait iteration: the loop of the off-load runtime's wait_change() (kernels/signal.hpp): one acquire load of
/// an atomic 32-bit word that does not change, one pause (`yield` on aarch64), the counter tests. Seconds per
/// iteration, 10^6 iterations per repetition timed in blocks of 10^4, pinned to the first HPU context.
measurement run_spin_pause(const harness_options& o);

/// Scheduler time slice of CPU-bound threads: two threads pinned to the first HPU context time-stamp in a tight
/// loop; a gap > gap_s in a thread's own time stamps is a deschedule, the slice is the median length of the
/// uninterrupted runs between two gaps. Without pinning: two unpinned threads per CPU. Unmeasurable (with a reason)
/// with fewer than 3 complete runs, or, pinned, when fewer than a third of the gaps handed the CPU to the sibling
/// (other processes on that CPU cut the runs).
struct slice_result {
    measurement m;       ///< name "spin/sched_slice"; meaningful only when measurable
    bool measurable = false;
    std::string reason;  ///< why not, when !measurable
    bool disturbed = false;  ///< unmeasurable because most deschedules went to other processes (pinned only)
    bool pinned = false;
};
slice_result run_sched_slice(const harness_options& o);
/// The benchmark record of a slice measurement ("measurable", "reason"; value null when unmeasurable).
nlohmann::json slice_json(const slice_result& s);

/// Hand-back on oversubscribed cores: k = 2 x (allowed CPUs) pairs of unpinned threads; in each, an HPU thread
/// blocks on a futex while its APU thread works `work_s` (20 us), then takes the result and posts the next job,
/// while the APU thread waits for it as the off-load runtime does (offload_spin_limit iterations of the spin-wait
/// loop, then a futex wait; the HPU thread calls futex-wake on every post, the runtime only for a sleeping
/// waiter). With 2k threads on c CPUs the ideal wall time of R rounds is R x work x k / c; the excess,
/// x c / (R x k), is the processor time of one round (post and hand-back) beyond the work when more threads
/// are runnable than cores: the model's per-off-load T_wake_busy (edtlp, p = 1). One observation per repetition.
measurement run_wake_busy(const harness_options& o);

}  // namespace mmgp::calib
