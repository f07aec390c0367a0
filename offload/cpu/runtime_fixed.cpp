// The runtime's fixed mode (config::apus == 0): m HPU threads, each with its own p APU threads (a master and
// p-1 workers that share every off-load by site ranges), optionally pinned to CPUs (config::pin_team).
#include "runtime_internal.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <pthread.h>
#include <sched.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mmgp/profile.hpp"  // available_cpus()

namespace mmgp::kernels::detail {

namespace {

struct alignas(64) worker_box {
    signal_word go, done;
    reply out;
    double split_s = 0;
};

struct group {  // one HPU thread and its p APUs
    signal_word req, done;
    request rq;
    reply rp;
    std::vector<std::unique_ptr<worker_box>> workers;  // index 1..p-1 used
    std::vector<std::unique_ptr<apu_slice>> slices;     // index 0..p-1
    std::unique_ptr<host_program> host;
    timers t;
    std::vector<std::pair<int, double>> unit_results;
    double finish = 0;
};

class group_offloader final : public offloader {
public:
    group_offloader(group& g, host_policy pol, const abort_state& ab) : g_(g), pol_(pol), ab_(ab) {}
    reply offload(const request& r) override {
        const double t0 = now();
        g_.t.host_s += t0 - last_;
        const std::uint32_t seen = g_.done.seq.load(std::memory_order_acquire);
        g_.rq = r;
        post(g_.req);
        wait_change(g_.done, seen, pol_ == host_policy::os ? wait_kind::spin : wait_kind::block, ab_);
        const double t1 = now();
        g_.t.roundtrip_s += t1 - t0;
        last_ = t1;
        count_offload(g_.t, r);
        return g_.rp;
    }
    void start_clock(double t) { last_ = t; }
    void stop_clock(double t) { g_.t.host_s += t - last_; }

private:
    group& g_;
    host_policy pol_;
    const abort_state& ab_;
    double last_ = 0;
};

// The master APU of group g: runs its slice of each off-load, with the workers' slices in parallel, and sums
// their replies.
void apu_master(group& g, abort_state& ab) {
    const std::size_t p = g.slices.size();
    serve_posts(g.req, ab, "APU", [&] {
        const request& r = g.rq;
        if (r.kind == k_quit) {
            for (std::size_t j = 1; j < p; ++j) post(g.workers[j]->go);
            return false;
        }
        const double t0 = now();
        g.slices[0]->setup(r);
        const double t1 = now();
        std::vector<std::uint32_t> wseen(p, 0);
        for (std::size_t j = 1; j < p; ++j) {
            wseen[j] = g.workers[j]->done.seq.load(std::memory_order_acquire);
            post(g.workers[j]->go);
        }
        const double t2 = now();
        reply out;
        g.slices[0]->compute(r, out);
        const double t3 = now();
        for (std::size_t j = 1; j < p; ++j) {
            wait_change(g.workers[j]->done, wseen[j], wait_kind::spin_then_block, ab);
            out.v[0] += g.workers[j]->out.v[0];
            out.v[1] += g.workers[j]->out.v[1];
        }
        const double t4 = now();
        g.t.apu_serial_s += t1 - t0;
        g.t.apu_fork_s += t2 - t1;
        g.t.apu_split_s += t3 - t2;
        g.t.apu_join_s += t4 - t3;
        g.t.apu_busy_s += t4 - t0;
        g.rp = out;
        post(g.done);
        return true;
    });
}

// Worker APU j of group g: runs its slice of each off-load the master posts.
void apu_worker(group& g, std::size_t j, abort_state& ab) {
    worker_box& w = *g.workers[j];
    serve_posts(w.go, ab, "APU worker", [&] {
        const request& r = g.rq;
        if (r.kind == k_quit) return false;
        g.slices[j]->setup(r);
        reply out;
        const double t0 = now();
        g.slices[j]->compute(r, out);
        w.split_s += now() - t0;
        w.out = out;
        post(w.done);
        return true;
    });
}

// One group per HPU thread, each with its host program and p slices of the accelerator work.
std::vector<std::unique_ptr<group>> make_groups(const config& c, const alignment& aln, const model& mdl,
                                                const tree& start, const abort_state& ab) {
    const std::size_t p = static_cast<std::size_t>(c.p);
    return make_each_process(c, aln, mdl, start, p, &group::slices, ab, [p](group& g, std::size_t) {
        g.workers.resize(p);
        for (std::size_t j = 1; j < p; ++j) g.workers[j] = std::make_unique<worker_box>();
    });
}

// pin_team: the CPUs this process may use, in order (empty without pin_team, or when they cannot be read).
std::vector<int> team_cpus(const config& c) { return c.pin_team ? available_cpus() : std::vector<int>{}; }

// Pins the calling thread to the CPU of group i's slot j (j = 0: HPU thread and master APU), round robin over
// the allowed CPUs; does nothing without pin_team.
struct team_pinning {
    team_pinning(const config& c, std::size_t slots) : allowed(team_cpus(c)), p(slots), failed(c.pin_team && allowed.empty()) {}
    void operator()(std::size_t i, std::size_t j) {
        if (allowed.empty()) return;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(allowed[(i * p + j) % allowed.size()], &one);
        if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) failed.store(true);
    }
    const std::vector<int> allowed;
    const std::size_t p;
    std::atomic<bool> failed;
};

// HPU thread i: runs its units (i, i + m, ...), every off-load to its own group's APUs.
void fixed_hpu(group& g, std::size_t i, const config& c, hpu_sync& hs, abort_state& ab) {
    group_offloader off(g, c.policy, ab);
    hs.run(i, ab, [&](double t0) {
        off.start_clock(t0);
        for (int u = static_cast<int>(i); u < c.units; u += c.m) g.unit_results.emplace_back(u, g.host->run_unit(u, off));
        g.finish = now();
        off.stop_clock(g.finish);
    });
}

// Tells every group's APUs to leave (after an abort they leave on their own, at their next wait).
void stop_groups(const std::vector<std::unique_ptr<group>>& groups) {
    for (auto& gp : groups) {
        gp->rq = request{};
        gp->rq.kind = k_quit;
        post(gp->req);
    }
}

// Group g's timers into t (its workers' split time as worker_split_s).
void add_timers(timers& t, const group& g) {
    t += g.t;
    for (std::size_t j = 1; j < g.workers.size(); ++j) t.worker_split_s += g.workers[j]->split_s;
}

// The groups' timers, units' results and synthetic times into res; returns the last finish time.
double collect_groups(const config& c, const std::vector<std::unique_ptr<group>>& groups, const hpu_sync& hs,
                      result& res) {
    double last = 0;
    res.unit_loglik.assign(static_cast<std::size_t>(c.units), 0.0);
    for (std::size_t i = 0; i < groups.size(); ++i) {
        group& g = *groups[i];
        last = std::max(last, g.finish);
        add_timers(res.t, g);
        res.t.context_switches += hs.csw[i];
        for (auto [u, v] : g.unit_results) res.unit_loglik[static_cast<std::size_t>(u)] = v;
        if (c.synthetic) {
            res.synth_host_s += static_cast<synthetic_host&>(*g.host).host;
            auto& master = static_cast<synthetic_slice&>(*g.slices[0]);
            res.synth_split_s += master.split;
            res.synth_serial_s += master.serial;
        }
    }
    return last;
}

}  // namespace

void run_fixed(const config& c, const alignment& aln, const model& mdl, const tree& start, result& res, double setup0) {
    const std::size_t m = static_cast<std::size_t>(c.m), p = static_cast<std::size_t>(c.p);
    abort_state ab;
    std::vector<std::unique_ptr<group>> groups = make_groups(c, aln, mdl, start, ab);
    hpu_sync hs(m);
    std::vector<std::thread> apus, hpus;
    team_pinning pin(c, p);
    for (std::size_t i = 0; i < m; ++i) {
        apus.emplace_back([&, i] { pin(i, 0); apu_master(*groups[i], ab); });
        for (std::size_t j = 1; j < p; ++j) apus.emplace_back([&, i, j] { pin(i, j); apu_worker(*groups[i], j, ab); });
    }
    for (std::size_t i = 0; i < m; ++i)
        hpus.emplace_back([&, i] {
            pin(i, 0);
            fixed_hpu(*groups[i], i, c, hs, ab);
        });
    res.setup_s = now() - setup0;
    // watchdog: wait for every HPU thread, at most timeout_s
    hs.start_and_watch(c.m, c.timeout_s, ab,
                       "m=" + std::to_string(c.m) + ", p=" + std::to_string(c.p) + ", policy " + to_string(c.policy));
    for (auto& h : hpus) h.join();
    if (!ab.flag.load()) stop_groups(groups);
    for (auto& a : apus) a.join();
    if (ab.flag.load()) throw mmgp::failure(ab.why);

    const double last = collect_groups(c, groups, hs, res);
    res.wall_s = last - hs.t_start.load();
    res.pinned = c.pin_team && !pin.failed.load();
    if (c.synthetic) res.unit_loglik.clear();
}

}  // namespace mmgp::kernels::detail
