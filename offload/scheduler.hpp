// Off-load schedulers for the runtime's pool mode (runtime.hpp, config::apus > 0): A APU threads shared by the
// m HPU threads; when an off-load starts, the scheduler decides how many of the idle APUs it gets.
//
//   edtlp    p = 1 always: task-level parallelism only ([R] §5.2).
//   mgps     [R] §5.4: p = 1 until the first window; every A completed off-loads, U = processes that off-loaded
//            in that window; U <= 4: p = floor(A / U) (loop-level parallelism on), else p = 1.
//   advisor  mmgp::advisor::recommend() (libmmgp, the MMGP model) fed with the runtime's observations: units
//            begun/ended (active tasks), idle APUs, waiting off-loads, off-load durations per p, host gaps.
//
// The runtime clamps the answer to [1, idle APUs]. It calls every hook with its pool lock held, one at a time,
// so an implementation needs no synchronisation of its own; hooks must be quick (microseconds).
#pragma once

#include <memory>
#include <string>

namespace mmgp {
class advisor;
}

namespace mmgp::kernels {

/// The runtime's state when an off-load is about to start.
struct offload_state {
    int process = 0;    ///< HPU thread (process) whose off-load starts, 0..m-1
    int idle_apus = 1;  ///< idle APUs now, >= 1 (the off-load gets at most these)
    int waiting = 0;    ///< other off-loads queued for an APU behind this one
    int active = 1;     ///< processes with a unit (bootstrap) in progress
    int apus = 1;       ///< A, APU threads in the pool
};

class offload_scheduler {
public:
    virtual ~offload_scheduler() = default;
    virtual const char* name() const = 0;
    /// p for the off-load about to start (the runtime uses min(max(p, 1), idle_apus)).
    virtual int choose(const offload_state& s) = 0;
    /// The off-load of `process` started on p APUs.
    virtual void started(int /*process*/, int /*p*/) {}
    /// The off-load of `process` on p APUs is done and its APUs are idle again (a departure, [R] §5.4).
    virtual void released(int /*process*/, int /*p*/) {}
    /// The HPU thread of `process` resumed `seconds` after its off-load on p APUs started (got its APUs):
    /// the off-load's cost to the task, APU work plus signalling, reduction and waking the HPU thread.
    /// Called after released(), possibly after other off-loads have started on those APUs.
    virtual void finished(int /*process*/, int /*p*/, double /*seconds*/) {}
    /// Host time of `process` since its previous off-load (or since its unit began), seconds.
    virtual void host_gap(int /*process*/, double /*seconds*/) {}
    /// `process` began / ended a unit (one bootstrap).
    virtual void unit_begin(int /*process*/) {}
    virtual void unit_end(int /*process*/) {}
};

/// p = 1 for every off-load.
std::shared_ptr<offload_scheduler> make_edtlp_scheduler();
/// [R] §5.4's rule with a window of `window` completed off-loads (0: A, as in [R]) and threshold U <= max_u.
std::shared_ptr<offload_scheduler> make_mgps_scheduler(int window = 0, int max_u = 4);
/// mmgp::advisor::recommend(); the advisor is fed by the hooks (create one per run: it learns).
std::shared_ptr<offload_scheduler> make_advisor_scheduler(std::shared_ptr<mmgp::advisor> adv);
/// "edtlp", "mgps" or "advisor" (the advisor from `scenario`, a scenario file or bundled name, with
/// refresh_every = 32). Throws mmgp::usage_error for another name and mmgp::error for a bad scenario.
std::shared_ptr<offload_scheduler> make_scheduler(const std::string& name, const std::string& scenario = "");

}  // namespace mmgp::kernels
