// mmgp/advisor.hpp — the runtime advisor: how many accelerators the next off-load should use.
//
//   mmgp::advisor adv("raxml-qs20");                 // a scenario file or bundled name
//   adv.task_begin();                                 // a host task (process, bootstrap) became active
//   adv.offload_start(p);  ...  adv.offload_end(p, seconds);   // observations, from any thread
//   adv.host_gap(seconds);                            // host time between two off-loads of a task
//   mmgp::advice a = adv.recommend();                 // lock-free, allocation-free, ~ns
//   if (a.action == mmgp::llp_action::activate) split the next off-load's loops across a.p accelerators;
//
// The advice comes from the MMGP model (mmgp::evaluator, the default model): for the current
// number m of active host tasks it evaluates every feasible loop-level degree p (m*p <= A; on a GPU
// node p counts blocks, m*p <= A·slots, or p <= A·slots time-sliced) and picks the fastest, with the application's parameters re-estimated online from the observations
// (exponentially weighted moving averages of the duration per p and of the host gap, and a
// recency-weighted least-squares split of the accelerator time into a part that scales with p and
// one that does not — or, when the durations grow with p, a cost per extra accelerator; the advice
// follows a program whose tasks drift). With explore_every > 0, recommend() now and then tries the
// alternative p, so that a wrong prior is corrected even when the table never chooses it.
// The answers for every (m, largest allowed p) are precomputed into a small table, republished
// under a sequence lock on every refresh; recommend() only reads atomics.
// C runtimes use the same object through mmgp/advisor.h.
#pragma once

#include "mmgp/export.hpp"

#include <cstdint>
#include <memory>
#include <string>

#include "mmgp/model.hpp"
#include "mmgp/profile.hpp"

MMGP_API_BEGIN
namespace mmgp {

/// Tuning of an advisor; the defaults suit a runtime that off-loads thousands of tasks.
struct advisor_options {
    model_kind model = model_kind::mmgp;  ///< model that ranks p (mmgp: the engine's model, default)
    double smoothing = 0.05;  ///< weight of one new observation in the moving averages, in (0, 1]
    double min_gain = 0.02;   ///< activate loop-level parallelism only for a predicted saving >= this fraction, in [0, 1)
    int refresh_every = 64;   ///< re-estimate and republish after this many completed off-loads (0: only refresh())
    /// Exploration (0: off, the default): recommend() answers with an alternative p — 1 when the table says
    /// p > 1, 2 when it says 1 — once no off-load at that p has completed for this many completed off-loads,
    /// so that the durations of both are known and the fit can tell what an extra accelerator saves or costs.
    /// The interval doubles after each exploration (up to 64 times this) and returns to this value when a
    /// refresh changes the table's answers. Such an answer has advice::probe set. A runtime whose
    /// observations all come from one p cannot learn that its prior was wrong without it.
    int explore_every = 0;
};

/// What to do with loop-level parallelism on the next off-load (fixed values, shared with the C API).
enum class llp_action : int {
    throttle = 0,  ///< p = 1: task-level parallelism only (EDTLP); deactivate loop-level parallelism
    activate = 1,  ///< p > 1: split the off-loaded task's loops across p accelerators
};

/// One recommendation.
struct advice {
    int m = 1;                 ///< active host tasks the advice was computed for (clamped to 1..table size)
    int p = 1;                 ///< accelerators for the next off-load, >= 1
    llp_action action = llp_action::throttle;
    double gain = 0.0;         ///< predicted fraction of time saved against p = 1, (T(m,1) - T(m,p)) / T(m,1), >= 0
    double time_s = 0.0;       ///< predicted time of one task at (m, p), seconds
    double time_p1_s = 0.0;    ///< predicted time of one task at (m, 1), seconds
    std::uint64_t version = 0; ///< how many times the table was published (1 after construction)
    bool probe = false;        ///< an exploration (advisor_options::explore_every), not the model's optimum (gain 0; time_s 0 unless p = 1)
};

/// The application parameters as estimated, per off-load (seconds); apu_s and parallel_fraction
/// as of the last refresh (they come from a fit over all observed p), host_gap_s and counts live.
struct advisor_estimates {
    double host_gap_s = 0.0;        ///< host time between two off-loads of one task (T_hpu / N)
    double apu_s = 0.0;             ///< accelerator time of one off-load on 1 APU, overheads excluded ((T_apu + C_apu) / N)
    double parallel_fraction = 0.0; ///< part of apu_s that splits across p APUs (T_apu / (T_apu + C_apu)), in [0, 1]
    /// Learned cost of each accelerator beyond the first, per off-load, on top of the profile's g: > 0 when
    /// the observed durations grow with p (then parallel_fraction is 0), as of the last refresh.
    double extra_gap_s = 0.0;
    double offloads_per_task = 0.0; ///< N: completed off-loads per completed task (the profile's N until a task ends)
    std::uint64_t offloads = 0;     ///< completed off-loads observed
    std::uint64_t tasks = 0;        ///< completed tasks observed
};

/// The runtime advisor. All member functions are thread-safe.
class advisor {
public:
    /// From a scenario (platform + application; its search space is ignored, but for its sharing mode: the
    /// advisor covers m = 1..A on one node, under the first mode the scenario searches, the one mmgp launch and
    /// mmgp tune run — search.sharing's first, else the platform's). Throws input_error when the model cannot evaluate it (a wavefront application included), usage_error when options are out of range.
    explicit advisor(const scenario& s, const advisor_options& opt = {});
    /// From a scenario file path or a bundled scenario name ("raxml-qs20").
    explicit advisor(const std::string& scenario_path_or_name, const advisor_options& opt = {});
    /// From a platform and an application profile (under the platform's first sharing mode).
    advisor(const platform& pl, const application& app, const advisor_options& opt = {});
    ~advisor();
    advisor(const advisor&) = delete;
    advisor& operator=(const advisor&) = delete;

    // --- observations: cheap, noexcept; invalid values (negative, NaN, p < 1) are ignored ----------
    /// A host task became active (m += 1).
    void task_begin() noexcept;
    /// A host task finished (m -= 1, and it counts towards offloads_per_task).
    void task_end() noexcept;
    /// Sets the number of active host tasks directly (m >= 0).
    void set_active_tasks(int m) noexcept;
    /// An off-load was issued on p accelerators (they become busy).
    void offload_start(int p) noexcept;
    /// An off-load on p accelerators finished after `seconds` (issue to completion: until the issuing task
    /// can go on); the p become idle.
    /// Every refresh_every completions this call also refreshes the table (which allocates; set
    /// refresh_every = 0 and call refresh() elsewhere to keep it allocation-free). The duration is learned
    /// from when p <= apus() and, on a GPU node, the blocks in flight (this one's included) fit the SMs.
    void offload_end(int p, double seconds) noexcept;
    /// Host time between two consecutive off-loads of one task, seconds.
    void host_gap(double seconds) noexcept;
    /// Sets the number of idle accelerators (blocks, on a GPU node: of capacity()) directly (overrides the count
    /// kept by offload_start/end). Time-sliced (sharing()), neither this nor the waiting tasks cap p: the
    /// tasks' grids take turns on the whole accelerator.
    void set_idle_apus(int n) noexcept;
    /// Sets the number of tasks waiting for an accelerator; idle accelerators are shared among them.
    void set_waiting_tasks(int n) noexcept;

    // --- queries: lock-free, allocation-free -----------------------------------------------------
    /// Advice for the next off-load now: m = active tasks, p at most idle / (waiting + 1) (at least 1; time-sliced,
    /// at most the capacity: the tasks' grids take turns); with explore_every > 0, sometimes an exploration
    /// (advice::probe).
    advice recommend() const noexcept;
    /// Advice for m active tasks with every feasible p allowed (m*p <= capacity(); p <= capacity() time-sliced).
    advice recommend(int m) const noexcept;
    /// Advice for m active tasks with p at most max_p.
    advice recommend(int m, int max_p) const noexcept;

    /// Re-estimates the application and republishes the table now.
    void refresh();
    /// The current estimates.
    advisor_estimates estimates() const noexcept;
    /// Accelerators per node (A) and host contexts (H) of the platform; largest m in the table.
    int apus() const noexcept;
    /// The blocks the accelerators hold, the p the table reaches: A, or A·slots on a GPU node (platform::capacity()).
    int capacity() const noexcept;
    /// The sharing mode the advice is for (dedicated on a platform without `sharing`).
    accelerator_sharing sharing() const noexcept;
    int hpu_contexts() const noexcept;
    int max_tasks() const noexcept;

    struct impl;

private:
    std::unique_ptr<impl> d_;
};

}  // namespace mmgp
MMGP_API_END
