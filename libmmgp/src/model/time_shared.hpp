// Layer (c) of the model: host and accelerator threads of a CPU-only node time-sharing `cores` cores
// (docs/MODEL.md §4). Replaces layer (b) when the platform gives `cores`. What depends on the scenario only
// is resolved once, in the constructor; what depends on the team (p, policy) in team_of(); each term of
// §4's table is one member function.
#pragma once

#include "mmgp/model_terms.hpp"
#include "mmgp/profile.hpp"

namespace mmgp::detail {

struct time_shared_cores {
    /// Where the idle-core wake-up T_wake comes from (docs/MODEL.md §4, "T_wake").
    enum class wake_source { application, platform, context_switch };

    time_shared_cores(const platform& pl, const application& app) noexcept;

    double cores;        ///< cores shared by every thread
    double T_csw;        ///< a hand-off on a busy core
    double wake_idle;    ///< T_wake: waking the blocked host thread while a core is idle
    wake_source wake_from;
    double wake_busy;    ///< T_wake_busy (p = 1, cores oversubscribed); < 0: not calibrated, T_csw
    double budget;       ///< b: one spinning wait before it blocks and is woken; 0 when no wait spins
    bool never_blocks;   ///< spin_limit unbounded

    /// The threads of one process's off-load: what §4's terms depend on besides the active processes.
    struct team {
        const time_shared_cores* cores_of;
        configuration c;
        double t;         ///< runnable threads per active process: p (edtlp) or p + 1 (os)
        bool gang;        ///< never blocks and fits the cores: progresses only when all t run at once
        double waits;     ///< spinning waits per off-load: [p > 1] + [os]
        bool hand_back;   ///< the woken host thread may wait for one of its own spinning APU threads
        double hand_back_cost;

        /// P(n, k): all k threads of a team run at once among n runnable threads, fairly shared.
        double coscheduled(double n, int k) const noexcept;
        /// max(1, n/cores), or 1/P(n, t) for a gang: how much longer a round of `active` processes takes.
        double stretch(double active) const noexcept;
        /// The switch of one edtlp off-load: T_wake (a core idle), T_csw (cores exactly full), T_wake_busy
        /// (oversubscribed, p = 1).
        double switch_cost(double active) const noexcept;
        /// Spin convoys per off-load, plus the hand-back of a process alone in its round.
        double convoy(double active) const noexcept;
    };
    team team_of(const configuration& c) const noexcept;

    /// The whole run of configuration c from one process's per-unit terms: rounds of units dealt to
    /// `procs` processes, each round stretched, switched and convoyed (docs/MODEL.md §4, "Per run").
    breakdown run(const application& app, const configuration& c, const dedicated_terms& unit, std::int64_t procs) const noexcept;
};

}  // namespace mmgp::detail
