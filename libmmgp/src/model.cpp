#include "mmgp/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "detail/comm.hpp"
#include "detail/json_reader.hpp"
#include "mmgp/error.hpp"

namespace mmgp {

std::string_view to_string(model_kind k) noexcept { return k == model_kind::eq11 ? "eq11" : "mmgp"; }

bool parse_model(std::string_view text, model_kind& out) noexcept {
    if (text == "eq11") {
        out = model_kind::eq11;
        return true;
    }
    if (text == "mmgp") {
        out = model_kind::mmgp;
        return true;
    }
    return false;
}

namespace {

// α(k): 1 for k = 1 ([H]: contention needs two threads), else the profile's form.
double alpha_of(const platform& pl, int k) noexcept {
    if (k <= 1) return 1.0;
    const m_function& f = pl.alpha;
    switch (f.kind) {
        case m_function::form::constant: return f.value;
        case m_function::form::table: return f.table[static_cast<std::size_t>(k)];
        case m_function::form::linear: return f.intercept + f.slope * k / pl.hpu_contexts;
    }
    return 1.0;
}

// O_col(k): 0 for k = 1 unless a table gives it ([H]: no synchronisation with one process).
double ocol_of(const application& app, int k) noexcept {
    const m_function& f = app.O_col;
    switch (f.kind) {
        case m_function::form::constant: return k <= 1 ? 0.0 : f.value;
        case m_function::form::table: return f.covers(k) ? f.table[static_cast<std::size_t>(k)] : 0.0;
        case m_function::form::linear: return k <= 1 ? 0.0 : f.intercept + f.slope * k;
    }
    return 0.0;
}

constexpr int primitive_count = 9;

}  // namespace

double eq11_time(const platform& pl, const application& app, int m, int p) {
    return alpha_of(pl, m) * app.T_hpu + app.T_apu / (static_cast<double>(m) * p) + app.C_apu +
           app.N * (pl.O_offload + pl.T_csw + ocol_of(app, m) + p * app.g);
}

evaluator::evaluator(const scenario& s, model_kind kind) : s_(&s), kind_(kind) {
    const platform& pl = s.plat;
    const application& app = s.app;
    const search_space& sp = s.space;
    detail::reader r{s.file};
    const space_bounds bd = bounds(s);
    const std::int64_t m_hi = bd.m_hi, n_lo = bd.n_lo, n_hi = bd.n_hi, p_lo = bd.p_lo;
    if (kind == model_kind::eq11 && n_hi > 1)
        r.fail("/search/nodes", "nodes 1..1 with --model eq11 (Eq. 11 is a single-node equation; use --model mmgp)",
               std::to_string(n_lo) + ".." + std::to_string(n_hi));
    // α and O_col are tabulated for small m (the common case); larger m are computed on the fly.
    std::size_t table_size = static_cast<std::size_t>(std::min<std::int64_t>(std::max<std::int64_t>(m_hi, pl.hpu_contexts), 4096)) + 1;
    alpha_.assign(table_size, 1.0);
    ocol_.assign(table_size, 0.0);
    for (std::size_t k = 1; k < table_size; ++k) {
        int ki = static_cast<int>(k);
        if (pl.alpha.kind != m_function::form::table || pl.alpha.covers(ki) || ki == 1) alpha_[k] = alpha_of(pl, ki);
        ocol_[k] = ocol_of(app, ki);
    }
    if (app.dma_bytes > 0 && !pl.has_dma)
        r.fail("/platform/dma", "a transfer cost {\"latency_s\", \"bandwidth_Bps\"} (the application declares dma_bytes)",
               "nothing (the key is missing)");
    if (pl.has_dma) {
        dma_lat_ = pl.dma.latency_s;
        dma_spb_ = pl.dma.s_per_byte;
    }
    models_.assign(primitive_count, comm_model{});
    has_model_.assign(primitive_count, 0);
    for (const auto& [prim, cm] : pl.comm_models) {
        models_[static_cast<int>(prim)] = cm;
        has_model_[static_cast<int>(prim)] = 1;
    }
    if (kind == model_kind::eq11) return;
    if (!app.comm.empty() && (n_hi - n_lo + 1) * std::max<std::int64_t>(m_hi - sp.m.lo + 1, 1) > 100000000)
        r.fail("/search", "at most 100000000 (nodes, m) pairs when the application communicates",
               std::to_string(n_hi - n_lo + 1) + " node counts x " + std::to_string(m_hi - sp.m.lo + 1) + " process counts");
    // Every (nodes, m) the search visits must be costed by a table or a model with the stages it needs.
    for (std::size_t i = 0; i < app.comm.size(); ++i) {
        const comm_pattern& cp = app.comm[i];
        int pi = static_cast<int>(cp.prim);
        for (std::int64_t n = n_lo; n <= n_hi; ++n) {
            for (std::int64_t m = sp.m.lo; m <= m_hi && m * p_lo <= pl.apus; ++m) {
                int ni = static_cast<int>(n), mi = static_cast<int>(m);
                detail::stages st = detail::stage_counts(cp.prim, ni, mi);
                if (st.intra == 0 && st.inter == 0) continue;
                if (detail::table_cost(pl.comm_tables, cp.prim, ni, mi, cp.bytes)) continue;
                bool ok = has_model_[pi] && (st.intra == 0 || models_[pi].has_intra) &&
                          (st.inter == 0 || models_[pi].has_inter);
                if (!ok)
                    r.fail(detail::child(detail::child("/application/communication", i), "primitive"),
                           "a communication table or model in the platform's network section covering " +
                               std::string(to_string(cp.prim)) + " of " + detail::format_double(cp.bytes) +
                               " bytes on nodes=" + std::to_string(ni) + " with ppn=" + std::to_string(mi),
                           has_model_[pi] ? "a model without the " + std::string(st.inter > 0 && !models_[pi].has_inter ? "inter" : "intra") + "-node part and no such table"
                                          : "neither a table nor a model for " + std::string(to_string(cp.prim)));
            }
        }
    }
}

double evaluator::alpha_at(int m) const noexcept {
    return static_cast<std::size_t>(m) < alpha_.size() ? alpha_[static_cast<std::size_t>(m)] : alpha_of(s_->plat, m);
}

double evaluator::ocol_at(int m) const noexcept {
    return static_cast<std::size_t>(m) < ocol_.size() ? ocol_[static_cast<std::size_t>(m)] : ocol_of(s_->app, m);
}

double evaluator::comm_per_phase(int m, int nodes, bool& extrapolated) const noexcept {
    const application& app = s_->app;
    double total = 0.0;
    for (const comm_pattern& cp : app.comm) {
        if (nodes == 1 && m == 1) continue;
        if (auto t = detail::table_cost(s_->plat.comm_tables, cp.prim, nodes, m, cp.bytes)) {
            total += cp.count * *t;
        } else {
            total += cp.count * detail::model_cost(models_[static_cast<int>(cp.prim)], cp.prim, nodes, m, cp.bytes);
            extrapolated = true;
        }
    }
    return total;
}

prediction evaluator::operator()(const configuration& c) const noexcept {
    bool extrapolated = false;
    double comm = kind_ == model_kind::eq11 ? 0.0 : comm_per_phase(c.m, c.nodes, extrapolated);
    return evaluate(c, comm, extrapolated);
}

prediction evaluator::evaluate(const configuration& c, double comm_phase, bool extrapolated) const noexcept {
    const platform& pl = s_->plat;
    const application& app = s_->app;
    const double m = c.m, p = c.p;
    prediction out;
    breakdown& b = out.parts;
    if (kind_ == model_kind::eq11) {
        // [H] Eq. 11, term by term.
        b.host = alpha_at(c.m) * app.T_hpu;
        b.accelerator = app.T_apu / (m * p) + app.C_apu;
        b.offload = app.N * (pl.O_offload + p * app.g);
        b.context_switch = app.N * pl.T_csw;
        b.communication = app.N * ocol_at(c.m);
        out.time_s = b.host + b.accelerator + app.N * (pl.O_offload + pl.T_csw + ocol_at(c.m) + p * app.g);
        return out;
    }
    // docs/MODEL.md §3. Work of one process: `units` times the per-unit work.
    double units = 1.0, apu_par;
    std::int64_t procs = 1;  // processes sharing the units (task decomposition)
    if (app.decomp == decomposition::data) {
        double split = m * p * (app.scale == scaling::strong ? static_cast<double>(c.nodes) : 1.0);
        apu_par = app.T_apu / split;
    } else {
        // Units per process: ceil(U / (nodes*m)) for strong scaling; weak scaling gives each node U
        // units, so ceil(U*nodes / (nodes*m)) = ceil(U / m). nodes*m < 2^62, no overflow.
        procs = app.scale == scaling::weak ? c.m : static_cast<std::int64_t>(c.nodes) * c.m;
        units = static_cast<double>((app.units + procs - 1) / procs);
        apu_par = app.T_apu / p;
    }
    // The gap: [H] Eq. 11 charges p*g; a g measured as the slope per additional APU costs (p-1)*g.
    const double gap_apus = app.g_charge == gap_charge::per_extra_apu ? p - 1.0 : p;
    const double dma = dma_lat_ + dma_spb_ * app.dma_bytes / p;
    const double acc1 = apu_par + app.C_apu;
    const double off1 = app.N * (pl.O_offload + gap_apus * app.g + dma);
    const double comm1 = app.N * (ocol_at(c.m) + comm_phase);
    const double alpha_m = alpha_at(c.m);
    if (pl.cores > 0) {
        // Time-shared cores (docs/MODEL.md §4): HPU and APU threads are software threads
        // on `cores` cores. One unit of one process, alone, takes the dedicated time
        // host + accelerator + off-load (+ switch under edtlp); while `a` processes run a unit each,
        // a*t threads are runnable (t = p under edtlp, whose HPU thread blocks during off-loads;
        // p + 1 under os, whose HPU thread spins), each progressing at cores/(a*t) of a core
        // (processor sharing), so the round takes max(1, a*t/cores) times the dedicated time.
        // Units are dealt round-robin: `full` rounds with all m processes of a node active, then
        // one round with the remainder.
        const double t = c.pol == policy::edtlp ? p : p + 1.0;
        const double cores = pl.cores;
        // P(all k of one process's threads run at once) with n runnable threads fairly sharing the cores:
        // prod_{i<k} (cores-i)/(n-i), 0 when k > cores.
        auto coscheduled = [&](double n, int k) {
            double all_run = 1.0;
            for (int i = 0; i < k && all_run > 0; ++i) all_run *= std::max(0.0, cores - i) / (n - i);
            return all_run;
        };
        // A team whose waits never block (spin_limit unbounded) makes progress only while all its threads
        // are on cores (gang co-scheduling, [C] §5): with k = t <= cores the round takes 1/P(k) times the
        // dedicated time instead of the processor-sharing n/cores.
        const bool gang = app.spin_limit == application::spin_unbounded && t <= cores && (c.p > 1 || c.pol == policy::os);
        auto stretch = [&](double active) {
            const double n = active * t;
            const double share = std::max(1.0, n / cores);
            return gang && n > cores ? std::max(share, 1.0 / coscheduled(n, static_cast<int>(t))) : share;
        };
        // The edtlp switch wakes the blocked HPU thread: T_wake while a core is idle (active*t < cores),
        // T_csw (a hand-off on a busy core) when the threads exactly fill the cores, and T_wake_busy when they
        // oversubscribe them with p = 1 (the calibrated pairs harness; for p > 1 the convoy below charges
        // the scheduling of the off-load).
        // The idle-core wake-up: the program's own measurement (its sequential run's per-off-load overhead minus
        // the spinning round trip) when its profile has one, else the platform's calibrated T_wake.
        const double T_wake = app.T_offload_idle >= 0 ? std::max(0.0, app.T_offload_idle - pl.O_offload)
                              : pl.T_wake >= 0        ? pl.T_wake
                                                      : pl.T_csw;
        const double T_busy = pl.T_wake_busy >= 0 && c.p == 1 ? pl.T_wake_busy : pl.T_csw;
        auto csw = [&](double active) {
            if (c.pol != policy::edtlp) return 0.0;
            const double n = active * t;
            return n < cores ? T_wake : n > cores ? T_busy : pl.T_csw;
        };
        // Spin convoys (docs/MODEL.md §4): an off-load of one process needs its team of k = t threads
        // (the p APU threads that fork and join, plus the spinning HPU thread under os) on cores at once.
        // With n = active*t runnable threads on `cores` cores, fairly shared, all k run together with
        // probability P = prod_{i<k} (cores-i)/(n-i) (0 when k > cores); otherwise each spinning wait of the
        // off-load (the master APU joining its workers when p > 1; the os HPU waiting for the result) spins
        // for its budget (spin_limit iterations of spin_pause, or the scheduler slice if it never blocks,
        // whichever ends first) and is then woken by a hand-off (T_csw). The spinning is processor time
        // like any other, so it is stretched by n/cores. No convoy without oversubscription (n <= cores),
        // without a spinning wait (edtlp, p = 1: the HPU blocks), for a program that blocks at once
        // (spin_limit 0), or for a never-blocking team that fits in the cores (the gang stretch above
        // covers it); a never-blocking team larger than the cores waits a slice at every synchronisation.
        const double budget = [&] {
            if (app.spin_limit == 0) return 0.0;
            const double slice = pl.sched_slice > 0 ? pl.sched_slice : std::numeric_limits<double>::infinity();
            const double spin = app.spin_limit == application::spin_unbounded
                                    ? slice
                                    : std::min(slice, static_cast<double>(app.spin_limit) * pl.spin_pause);
            return std::isfinite(spin) ? spin + pl.T_csw : 0.0;
        }();
        const double waits = (c.p > 1 ? 1.0 : 0.0) + (c.pol == policy::os ? 1.0 : 0.0);
        // Hand-back (docs/MODEL.md §4): under edtlp the HPU thread blocks during its off-load and the
        // master APU wakes it at the end. A process running alone (no other process active) whose team
        // oversubscribes the cores (p > cores) then has every core held by one of its own APU threads,
        // spinning for the next off-load or fork; the woken HPU thread waits until one of them exhausts
        // its spin budget and blocks: one budget per off-load, in real time (the spinner holds its core,
        // so no stretch). When the team exactly fills the cores (p = cores), the HPU's wake-up keeps a
        // worker waiting for its next fork beyond its budget: it blocks, its core idles, and every off-load
        // pays one idle-core wake-up T_wake instead (a self-sustaining mode; runs that avoid it are faster,
        // README). Only for teams with workers (p > 1): a lone HPU-APU pair on one core hands back by
        // wake-up preemption (a few us, measured), which T_csw/T_wake already charge. A team that never
        // blocks (spin_limit unbounded) is covered by the convoy above.
        const bool handback_possible = c.pol == policy::edtlp && c.p > 1 && p >= cores && budget > 0 &&
                                       app.spin_limit != application::spin_unbounded;
        const double handback_cost = p > cores ? budget : T_wake;
        auto convoy = [&](double active) {
            const double n = active * t;
            const double handback = handback_possible && active == 1.0 ? handback_cost : 0.0;
            if (budget <= 0 || n <= cores || waits == 0 || gang) return handback;
            return waits * (1.0 - coscheduled(n, static_cast<int>(t))) * budget * n / cores + handback;
        };
        double factor, csw_sum, spin_sum;  // sums over rounds of the stretch, stretch * switch cost, convoys
        double first = m;                  // processes of the first round on the busiest node
        if (app.decomp == decomposition::data) {
            factor = stretch(m);
            csw_sum = factor * csw(m);
            spin_sum = convoy(m);
        } else {
            const std::int64_t per_round = procs;  // processes over all nodes (strong) or on the node (weak)
            const double full = static_cast<double>(app.units / per_round);
            const std::int64_t rest = app.units % per_round;
            const int nodes_sharing = app.scale == scaling::weak ? 1 : c.nodes;
            // The remainder's processes, spread round-robin over nodes: the busiest node has ceil(rest/nodes).
            const double last = static_cast<double>((rest + nodes_sharing - 1) / nodes_sharing);
            const double s_full = stretch(m), s_last = rest > 0 ? stretch(last) : 0.0;
            factor = full * s_full + s_last;
            csw_sum = full * s_full * csw(m) + (rest > 0 ? s_last * csw(last) : 0.0);
            spin_sum = full * convoy(m) + (rest > 0 ? convoy(last) : 0.0);
            if (full < 1.0) first = last;
        }
        // Start-up: one thread per process, all processes of the first round at once; its N_start off-loads
        // pay the first round's switch and convoy on top (their dedicated time is in T_start).
        b.startup = app.T_start * std::max(1.0, first / cores) + app.N_start * (stretch(first) * csw(first) + convoy(first));
        b.spin = spin_sum * app.N;
        b.host = factor * alpha_m * app.T_hpu;
        b.context_switch = csw_sum * app.N;
        b.accelerator = factor * acc1;
        b.offload = factor * off1;
        b.communication = factor * comm1;
        b.extrapolated = extrapolated;
        out.time_s = b.host + b.accelerator + b.offload + b.context_switch + b.communication + b.spin + b.startup;
        return out;
    }
    const int H = pl.hpu_contexts;
    const int rounds = (c.m + H - 1) / H;  // processes per host context
    if (c.pol == policy::edtlp) {
        // Host work of the processes sharing a context is time-shared (stretched by `rounds`), each
        // process switches context on every off-load; accelerator work overlaps.
        b.host = units * rounds * alpha_m * app.T_hpu;
        b.context_switch = units * rounds * app.N * pl.T_csw;
        b.accelerator = units * acc1;
        b.offload = units * off1;
        b.communication = units * comm1;
    } else if (rounds == 1) {
        // os, no oversubscription: the OS does not switch on off-load.
        b.host = units * alpha_m * app.T_hpu;
        b.accelerator = units * acc1;
        b.offload = units * off1;
        b.communication = units * comm1;
    } else {
        // os, oversubscribed: processes hold their context until done, so they run in `rounds`
        // groups of H, the last one of size m - (rounds-1)*H.
        const int last = c.m - (rounds - 1) * H;
        b.host = units * ((rounds - 1) * alpha_at(H) + alpha_at(last)) * app.T_hpu;
        b.accelerator = units * rounds * acc1;
        b.offload = units * rounds * off1;
        b.communication = units * comm1;
    }
    // Start-up: processes sharing a host context start one after another.
    b.startup = app.T_start * rounds;
    b.extrapolated = extrapolated;
    out.time_s = b.host + b.accelerator + b.offload + b.context_switch + b.communication + b.startup;
    return out;
}

}  // namespace mmgp
