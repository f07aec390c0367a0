// The runtime's pool mode (config::apus > 0, multi-grain scheduling): A APU threads shared by the m HPU threads;
// the scheduler chooses how many idle APUs each off-load gets, and waiting off-loads queue FIFO.
#include "runtime_internal.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace mmgp::kernels::detail {

namespace {

// One HPU thread (process) and its data: A site chunks, each a slice the pool's APUs compute for it.
struct pool_process {
    int index = 0;
    signal_word done;
    request rq;
    reply rp;
    std::vector<std::unique_ptr<apu_slice>> chunks;  // A chunks of sites, in site order
    std::vector<reply> out;                           // per chunk, of the current off-load
    std::unique_ptr<host_program> host;
    // the current off-load (written by the dispatcher under the pool lock, before the APUs are signalled)
    int p = 0;
    std::vector<int> apus;                            // the p APU ids it got
    double t_start = 0;                               // when it got them
    std::atomic<int> remaining{0};                    // APUs still computing
    timers t;                                         // HPU side
    std::vector<std::pair<int, double>> unit_results;
    double finish = 0;
};

struct alignas(64) pool_apu {
    signal_word go;
    pool_process* proc = nullptr;  // assignment: process and block index k of p (written under the pool lock)
    int part = 0;
    bool quit = false;
    bool owned = false;            // given to an off-load and not yet returned (pool lock)
    timers t;                      // this APU's timers (apu_* as master when k == 0, worker_split_s otherwise)
};

struct pool {
    int A = 1;
    std::mutex mu;
    std::vector<int> idle;                  // idle APU ids (a stack)
    std::deque<pool_process*> queue;        // off-loads waiting for an APU, FIFO
    int active = 0;                         // processes inside a unit
    offload_scheduler* sched = nullptr;
    std::vector<std::unique_ptr<pool_apu>> apus;
    std::vector<std::int64_t> p_hist;       // index p
    std::int64_t clamped = 0;

    // Starts the off-load of `pr` on min(chosen p, idle) APUs; the caller posts `go` of the APUs appended to
    // `wake` after releasing the lock. Pool lock held, at least one APU idle.
    void start_locked(pool_process& pr, std::vector<int>& wake) {
        offload_state st;
        st.process = pr.index;
        st.idle_apus = static_cast<int>(idle.size());
        st.waiting = static_cast<int>(queue.size());
        st.active = active;
        st.apus = A;
        const int want = sched->choose(st);
        const int p = std::clamp(want, 1, st.idle_apus);
        if (want > st.idle_apus) ++clamped;
        pr.p = p;
        pr.apus.resize(static_cast<std::size_t>(p));
        pr.remaining.store(p, std::memory_order_relaxed);
        for (int k = 0; k < p; ++k) {
            const int id = idle.back();
            idle.pop_back();
            pool_apu& a = *apus[static_cast<std::size_t>(id)];
            if (a.owned) throw std::logic_error("pool: an APU was given to two off-loads");
            a.owned = true;
            a.proc = &pr;
            a.part = k;
            pr.apus[static_cast<std::size_t>(k)] = id;
            wake.push_back(id);
        }
        ++p_hist[static_cast<std::size_t>(p)];
        pr.t_start = now();
        sched->started(pr.index, p);
    }

    void wake_all(const std::vector<int>& wake) {
        for (int id : wake) post(apus[static_cast<std::size_t>(id)]->go);
    }

    // The last APU of pr's off-load: reduce (chunk order: the same sum whatever p was), return the APUs,
    // start queued off-loads, then hand the result to the HPU thread.
    void finish(pool_process& pr, std::vector<int>& wake) {
        reply sum;
        for (const reply& r : pr.out) {
            sum.v[0] += r.v[0];
            sum.v[1] += r.v[1];
        }
        pr.rp = sum;
        const int p = pr.p;
        wake.clear();
        {
            std::lock_guard<std::mutex> lk(mu);
            for (int id : pr.apus) {
                apus[static_cast<std::size_t>(id)]->owned = false;
                idle.push_back(id);
            }
            sched->released(pr.index, p);
            while (!idle.empty() && !queue.empty()) {
                pool_process* next = queue.front();
                queue.pop_front();
                start_locked(*next, wake);
            }
        }
        wake_all(wake);
        post(pr.done);
    }
};

class pool_offloader final : public offloader {
public:
    pool_offloader(pool& pl, pool_process& pr, host_policy pol, const abort_state& ab) : pl_(pl), pr_(pr), pol_(pol), ab_(ab) {
        wake_.reserve(static_cast<std::size_t>(pl.A));
    }
    reply offload(const request& r) override {
        const double t0 = now();
        const double gap = t0 - last_;
        pr_.t.host_s += gap;
        const std::uint32_t seen = pr_.done.seq.load(std::memory_order_acquire);
        pr_.rq = r;
        wake_.clear();
        bool queued = false;
        {
            std::lock_guard<std::mutex> lk(pl_.mu);
            pl_.sched->host_gap(pr_.index, gap);
            if (pl_.queue.empty() && !pl_.idle.empty()) pl_.start_locked(pr_, wake_);
            else pl_.queue.push_back(&pr_), queued = true;
        }
        pl_.wake_all(wake_);
        wait_change(pr_.done, seen, pol_ == host_policy::os ? wait_kind::spin : wait_kind::block, ab_);
        const double t1 = now();
        pr_.t.roundtrip_s += t1 - t0;
        // pr_.p and pr_.t_start were written by the dispatcher before the APUs were signalled (ordered before done)
        if (queued) pr_.t.queue_s += std::max(0.0, pr_.t_start - t0);
        {
            std::lock_guard<std::mutex> lk(pl_.mu);
            pl_.sched->finished(pr_.index, pr_.p, t1 - pr_.t_start);
        }
        last_ = t1;
        count_offload(pr_.t, r);
        return pr_.rp;
    }
    void unit_begin() {
        std::lock_guard<std::mutex> lk(pl_.mu);
        ++pl_.active;
        pl_.sched->unit_begin(pr_.index);
    }
    void unit_end() {
        std::lock_guard<std::mutex> lk(pl_.mu);
        --pl_.active;
        pl_.sched->unit_end(pr_.index);
    }
    void start_clock(double t) { last_ = t; }
    void stop_clock(double t) { pr_.t.host_s += t - last_; }

private:
    pool& pl_;
    pool_process& pr_;
    host_policy pol_;
    const abort_state& ab_;
    std::vector<int> wake_;
    double last_ = 0;
};

void pool_apu_thread(pool& pl, int id, abort_state& ab) {
    pool_apu& me = *pl.apus[static_cast<std::size_t>(id)];
    std::vector<int> wake;
    wake.reserve(static_cast<std::size_t>(pl.A));
    serve_posts(me.go, ab, "APU", [&] {
        if (me.quit) return false;
        pool_process& pr = *me.proc;
        const int k = me.part, p = pr.p;
        const std::size_t C = pr.chunks.size();
        const std::size_t c0 = C * static_cast<std::size_t>(k) / static_cast<std::size_t>(p);
        const std::size_t c1 = C * static_cast<std::size_t>(k + 1) / static_cast<std::size_t>(p);
        const request& r = pr.rq;
        const double t0 = now();
        pr.chunks[c0]->setup(r);
        for (std::size_t c = c0 + 1; c < c1; ++c) pr.chunks[c]->setup_copy(*pr.chunks[c0], r);
        const double t1 = now();
        for (std::size_t c = c0; c < c1; ++c) {
            pr.out[c] = reply{};
            pr.chunks[c]->compute(r, pr.out[c]);
        }
        const double t2 = now();
        if (k == 0) {
            me.t.apu_serial_s += t1 - t0;
            me.t.apu_split_s += t2 - t1;
            me.t.apu_busy_s += t2 - t0;
        } else {
            me.t.worker_split_s += t2 - t1;
        }
        if (pr.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) pl.finish(pr, wake);
        return true;
    });
}

// The pool's A APUs, all idle (APU 0 on top of the idle stack), handed out by `sched`.
void init_pool(pool& pl, const config& c, offload_scheduler* sched) {
    const std::size_t A = static_cast<std::size_t>(c.apus);
    pl.A = c.apus;
    pl.sched = sched;
    pl.p_hist.assign(A + 1, 0);
    for (std::size_t j = 0; j < A; ++j) {
        pl.apus.push_back(std::make_unique<pool_apu>());
        pl.idle.push_back(static_cast<int>(A - 1 - j));  // APU 0 on top
    }
}

// The m processes, each with its host program and A chunks of the accelerator work.
std::vector<std::unique_ptr<pool_process>> make_processes(const config& c, const alignment& aln, const model& mdl,
                                                          const tree& start, const abort_state& ab) {
    const std::size_t A = static_cast<std::size_t>(c.apus);
    return make_each_process(c, aln, mdl, start, A, &pool_process::chunks, ab, [A](pool_process& pr, std::size_t i) {
        pr.index = static_cast<int>(i);
        pr.out.resize(A);
        pr.apus.reserve(A);
    });
}

// HPU thread i: runs its units (i, i + m, ...), every off-load through the pool.
void pool_hpu(pool& pl, pool_process& pr, std::size_t i, const config& c, hpu_sync& hs, abort_state& ab) {
    pool_offloader off(pl, pr, c.policy, ab);
    hs.run(i, ab, [&](double t0) {
        off.start_clock(t0);
        for (int u = static_cast<int>(i); u < c.units; u += c.m) {
            off.unit_begin();
            pr.unit_results.emplace_back(u, pr.host->run_unit(u, off));
            off.unit_end();
        }
        pr.finish = now();
        off.stop_clock(pr.finish);
    });
}

// Tells every APU to leave (after an abort they leave on their own, at their next wait).
void stop_pool(pool& pl) {
    std::lock_guard<std::mutex> lk(pl.mu);
    for (auto& a : pl.apus) {
        a->quit = true;
        post(a->go);
    }
}

// The processes' timers, units' results and synthetic times into res; returns the last finish time.
double collect_processes(const config& c, const std::vector<std::unique_ptr<pool_process>>& procs, const hpu_sync& hs,
                         result& res) {
    double last = 0;
    res.unit_loglik.assign(static_cast<std::size_t>(c.units), 0.0);
    timers& t = res.t;
    for (std::size_t i = 0; i < procs.size(); ++i) {
        pool_process& pr = *procs[i];
        last = std::max(last, pr.finish);
        t += pr.t;
        t.context_switches += hs.csw[i];
        for (auto [u, v] : pr.unit_results) res.unit_loglik[static_cast<std::size_t>(u)] = v;
        if (c.synthetic) {
            res.synth_host_s += static_cast<synthetic_host&>(*pr.host).host;
            for (auto& ch : pr.chunks) {
                auto& sl = static_cast<synthetic_slice&>(*ch);
                res.synth_split_s += sl.split;
                res.synth_serial_s += sl.serial;
            }
        }
    }
    return last;
}

// The APUs' timers into t.
void collect_apus(const pool& pl, timers& t) {
    for (auto& a : pl.apus) t += a->t;
}

}  // namespace

void run_pool(const config& c, const alignment& aln, const model& mdl, const tree& start, result& res, double setup0) {
    const std::size_t m = static_cast<std::size_t>(c.m), A = static_cast<std::size_t>(c.apus);
    std::shared_ptr<offload_scheduler> sched = c.scheduler ? c.scheduler : make_edtlp_scheduler();
    pool pl;
    init_pool(pl, c, sched.get());
    abort_state ab;
    std::vector<std::unique_ptr<pool_process>> procs = make_processes(c, aln, mdl, start, ab);

    hpu_sync hs(m);
    std::vector<std::thread> apus, hpus;
    for (std::size_t j = 0; j < A; ++j) apus.emplace_back(pool_apu_thread, std::ref(pl), static_cast<int>(j), std::ref(ab));
    for (std::size_t i = 0; i < m; ++i) hpus.emplace_back([&, i] { pool_hpu(pl, *procs[i], i, c, hs, ab); });
    res.setup_s = now() - setup0;
    hs.start_and_watch(c.m, c.timeout_s, ab,
                       "m=" + std::to_string(c.m) + ", apus=" + std::to_string(c.apus) + ", scheduler " + sched->name() +
                           ", policy " + to_string(c.policy));
    for (auto& h : hpus) h.join();
    if (!ab.flag.load()) stop_pool(pl);
    for (auto& a : apus) a.join();
    if (ab.flag.load()) throw mmgp::failure(ab.why);

    const double last = collect_processes(c, procs, hs, res);
    collect_apus(pl, res.t);
    res.p_histogram = pl.p_hist;
    res.scheduler = sched->name();
    res.clamped = pl.clamped;
    res.wall_s = last - hs.t_start.load();
    if (c.synthetic) res.unit_loglik.clear();
}

}  // namespace mmgp::kernels::detail
