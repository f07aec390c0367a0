// Layer (c): time-shared cores (docs/MODEL.md §4). Each function is one row of §4's table.
#include <algorithm>
#include <cmath>
#include <limits>

#include "model/time_shared.hpp"

namespace mmgp::detail {

namespace {

// T_wake: the program's own idle-core wake-up (its sequential run's per-off-load overhead minus the spinning
// round trip) when its profile has one, else the platform's calibrated T_wake, else T_csw.
time_shared_cores::wake_source wake_source_of(const platform& pl, const application& app) noexcept {
    if (app.T_offload_idle >= 0) return time_shared_cores::wake_source::application;
    if (pl.T_wake >= 0) return time_shared_cores::wake_source::platform;
    return time_shared_cores::wake_source::context_switch;
}

// b: a spinning wait spins spin_limit × spin_pause, or the scheduler's slice if it never blocks (whichever
// ends first), then blocks and is woken by a hand-off (T_csw). 0: no wait spins (spin_limit 0, or nothing
// bounds the spin).
double spin_budget(const platform& pl, const application& app) noexcept {
    if (app.spin_limit == 0) return 0.0;
    const double slice = pl.sched_slice > 0 ? pl.sched_slice : std::numeric_limits<double>::infinity();
    const double spin = app.spin_limit == application::spin_unbounded
                            ? slice
                            : std::min(slice, static_cast<double>(app.spin_limit) * pl.spin_pause);
    return std::isfinite(spin) ? spin + pl.T_csw : 0.0;
}

}  // namespace

time_shared_cores::time_shared_cores(const platform& pl, const application& app) noexcept
    : cores(pl.cores),
      T_csw(pl.T_csw),
      wake_idle(0.0),
      wake_from(wake_source_of(pl, app)),
      wake_busy(pl.T_wake_busy),
      budget(spin_budget(pl, app)),
      never_blocks(app.spin_limit == application::spin_unbounded) {
    switch (wake_from) {
        case wake_source::application: wake_idle = std::max(0.0, app.T_offload_idle - pl.O_offload); break;
        case wake_source::platform: wake_idle = pl.T_wake; break;
        case wake_source::context_switch: wake_idle = pl.T_csw; break;
    }
}

time_shared_cores::team time_shared_cores::team_of(const configuration& c) const noexcept {
    team tm{};
    tm.cores_of = this;
    tm.c = c;
    // Under edtlp the host thread blocks during its off-load; under os it spins.
    tm.t = c.pol == policy::edtlp ? c.p : c.p + 1.0;
    // A team whose waits never block makes progress only while all its threads are on cores (gang
    // co-scheduling, [C] §5).
    tm.gang = never_blocks && tm.t <= cores && (c.p > 1 || c.pol == policy::os);
    // Spinning waits of one off-load: the master APU joining its workers (p > 1), the os host thread
    // waiting for the result.
    tm.waits = (c.p > 1 ? 1.0 : 0.0) + (c.pol == policy::os ? 1.0 : 0.0);
    // Hand-back: under edtlp with workers, a team that fills or oversubscribes the cores keeps the woken host
    // thread waiting for one of its own spinners: a budget per off-load when p > cores, an idle-core wake-up
    // when p = cores (docs/MODEL.md §4).
    tm.hand_back = c.pol == policy::edtlp && c.p > 1 && c.p >= cores && budget > 0 && !never_blocks;
    tm.hand_back_cost = c.p > cores ? budget : wake_idle;
    return tm;
}

double time_shared_cores::team::coscheduled(double n, int k) const noexcept {
    const double cores = cores_of->cores;
    double all_run = 1.0;
    for (int i = 0; i < k && all_run > 0; ++i) all_run *= std::max(0.0, cores - i) / (n - i);
    return all_run;
}

double time_shared_cores::team::stretch(double active) const noexcept {
    const double n = active * t;
    const double share = std::max(1.0, n / cores_of->cores);
    return gang && n > cores_of->cores ? std::max(share, 1.0 / coscheduled(n, static_cast<int>(t))) : share;
}

double time_shared_cores::team::switch_cost(double active) const noexcept {
    if (c.pol != policy::edtlp) return 0.0;
    const double n = active * t, cores = cores_of->cores;
    if (n < cores) return cores_of->wake_idle;
    if (n > cores) return cores_of->wake_busy >= 0 && c.p == 1 ? cores_of->wake_busy : cores_of->T_csw;
    return cores_of->T_csw;
}

double time_shared_cores::team::convoy(double active) const noexcept {
    const double n = active * t, cores = cores_of->cores, budget = cores_of->budget;
    const double handback = hand_back && active == 1.0 ? hand_back_cost : 0.0;
    if (budget <= 0 || n <= cores || waits == 0 || gang) return handback;
    return waits * (1.0 - coscheduled(n, static_cast<int>(t))) * budget * n / cores + handback;
}

breakdown time_shared_cores::run(const application& app, const configuration& c, const dedicated_terms& unit,
                                 std::int64_t procs) const noexcept {
    const team tm = team_of(c);
    const double m = c.m;
    // Sums over the rounds of the stretch, of stretch × switch, and of the convoys.
    double factor, switches, convoys;
    double first = m;  // processes of the first round on the busiest node
    if (app.decomp == decomposition::data) {
        factor = tm.stretch(m);
        switches = factor * tm.switch_cost(m);
        convoys = tm.convoy(m);
    } else {
        // Units dealt round-robin: `full` rounds with every process active, then one with the remainder,
        // whose processes are spread over the nodes (the busiest node has ⌈rest/nodes⌉).
        const double full = static_cast<double>(app.units / procs);
        const std::int64_t rest = app.units % procs;
        const int nodes_sharing = app.scale == scaling::weak ? 1 : c.nodes;
        const double last = static_cast<double>((rest + nodes_sharing - 1) / nodes_sharing);
        const double s_full = tm.stretch(m), s_last = rest > 0 ? tm.stretch(last) : 0.0;
        factor = full * s_full + s_last;
        switches = full * s_full * tm.switch_cost(m) + (rest > 0 ? s_last * tm.switch_cost(last) : 0.0);
        convoys = full * tm.convoy(m) + (rest > 0 ? tm.convoy(last) : 0.0);
        if (full < 1.0) first = last;
    }
    const double p = c.p;
    breakdown b;
    b.host = factor * unit.host;
    b.accelerator = factor * unit.accelerator(p);
    b.offload = factor * unit.offload(p);
    b.communication = factor * unit.communication;
    b.context_switch = switches * app.N;
    b.spin = convoys * app.N;
    // Start-up: one thread per process, all processes of the first round at once; its N_start off-loads pay
    // the first round's switch and convoy on top (their dedicated time is in T_start).
    b.startup = app.T_start * std::max(1.0, first / cores) +
                app.N_start * (tm.stretch(first) * tm.switch_cost(first) + tm.convoy(first));
    return b;
}

}  // namespace mmgp::detail
