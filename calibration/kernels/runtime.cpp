// The off-load runtime: HPU threads, APU threads (master + workers per HPU thread), futex/spin mailboxes, timers,
// a watchdog, and the two workloads (the libpll bootstrap search and the synthetic program).
#include "runtime.hpp"
#include "../spin_wait.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <deque>
#include <linux/futex.h>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <nlohmann/json.hpp>
#include <random>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

namespace mmgp::kernels {

const char* to_string(host_policy p) { return p == host_policy::edtlp ? "edtlp" : "os"; }

bool parse_host_policy(const std::string& text, host_policy& out) {
    if (text == "edtlp") out = host_policy::edtlp;
    else if (text == "os") out = host_policy::os;
    else return false;
    return true;
}

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Busy-waits `seconds` of wall time; returns the time it actually took.
double busy_wait(double seconds) {
    const double start = now(), end = start + seconds;
    double t = start;
    while (t < end) {
        calib::cpu_relax();
        t = now();
    }
    return t - start;
}

struct aborted {};  // thrown inside threads when the run is being torn down

struct abort_state {
    std::atomic<bool> flag{false};
    std::mutex mu;
    std::string why;
    void fail(const std::string& msg) {
        std::lock_guard<std::mutex> lk(mu);
        if (why.empty()) why = msg;
        flag.store(true);
    }
};

// A 32-bit sequence number that one thread advances and one other thread waits on (futex word).
struct alignas(64) signal_word {
    std::atomic<std::uint32_t> seq{0};
    std::atomic<std::uint32_t> sleeping{0};
};
static_assert(sizeof(std::atomic<std::uint32_t>) == 4 && std::atomic<std::uint32_t>::is_always_lock_free);

void post(signal_word& w) {
    w.seq.fetch_add(1, std::memory_order_seq_cst);
    if (w.sleeping.load(std::memory_order_seq_cst))
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w.seq), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

enum class wait_kind { spin, block, spin_then_block };

// Waits until w.seq != old. Spinning checks the abort flag every 1024 iterations; blocking uses 50 ms futex
// time-outs so that a torn-down run is noticed.
void wait_change(signal_word& w, std::uint32_t old, wait_kind k, const abort_state& ab) {
    if (k != wait_kind::block) {
        const calib::spin_result r = calib::spin_wait(w.seq, old, k == wait_kind::spin ? -1 : spin_then_block_limit, ab.flag);
        if (r.end == calib::spin_end::changed) return;
        if (r.end == calib::spin_end::aborted) throw aborted{};
    }
    while (w.seq.load(std::memory_order_acquire) == old) {
        if (ab.flag.load(std::memory_order_relaxed)) throw aborted{};
        w.sleeping.store(1, std::memory_order_seq_cst);
        if (w.seq.load(std::memory_order_seq_cst) != old) {
            w.sleeping.store(0, std::memory_order_relaxed);
            break;
        }
        timespec ts{0, 50'000'000};
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w.seq), FUTEX_WAIT_PRIVATE, old, &ts, nullptr, 0);
        w.sleeping.store(0, std::memory_order_relaxed);
    }
}

// One futex wait of at most `seconds` while w.seq == old (spurious returns are fine: the caller loops).
void wait_once(signal_word& w, std::uint32_t old, double seconds) {
    w.sleeping.store(1, std::memory_order_seq_cst);
    if (w.seq.load(std::memory_order_seq_cst) == old) {
        timespec ts{static_cast<time_t>(seconds), static_cast<long>((seconds - std::floor(seconds)) * 1e9)};
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w.seq), FUTEX_WAIT_PRIVATE, old, &ts, nullptr, 0);
    }
    w.sleeping.store(0, std::memory_order_relaxed);
}

// ---- off-load requests ------------------------------------------------------------------------------

enum kind : int { k_weights = 0, k_newview = 1, k_evaluate = 2, k_sumtable = 3, k_derivatives = 4, k_synthetic = 5, k_quit = -1 };

struct request {
    int kind = k_quit;
    const void* data = nullptr;  // host memory the APUs read during the off-load
    int a = 0, b = 0;            // an edge: a inner node, b its neighbour
    unsigned matrix = 0;
    double x = 0;                // a branch length
};
struct reply {
    double v[2] = {0, 0};
};

class apu_slice {
public:
    virtual ~apu_slice() = default;
    virtual void setup(const request&) = 0;              // every APU repeats it
    virtual void compute(const request&, reply&) = 0;    // this APU's share
    // Pool mode: an APU that computes several chunks sets up the first and copies its setup to the others.
    virtual void setup_copy(const apu_slice& first, const request& r) = 0;
};

class offloader {
public:
    virtual ~offloader() = default;
    virtual reply offload(const request& r) = 0;
};

class host_program {
public:
    virtual ~host_program() = default;
    virtual double run_unit(int unit, offloader& off) = 0;  // returns the unit's result (log-likelihood)
};

// ---- the phylogenetic workload ----------------------------------------------------------------------

class phylo_slice final : public apu_slice {
public:
    phylo_slice(const alignment& a, const model& m, std::size_t lo, std::size_t hi) : s_(a, m, lo, hi) {}
    void setup(const request& r) override {
        if (r.kind == k_newview) {
            const auto* b = static_cast<const newview_batch*>(r.data);
            s_.update_matrices(b->matrices.data(), b->lengths.data(), b->matrices.size());
        } else if (r.kind == k_evaluate) {
            s_.update_matrices(&r.matrix, &r.x, 1);
        }
    }
    void setup_copy(const apu_slice& first, const request& r) override {
        const site_slice& from = static_cast<const phylo_slice&>(first).s_;
        if (r.kind == k_newview) {
            const auto* b = static_cast<const newview_batch*>(r.data);
            s_.copy_matrices(from, b->matrices.data(), b->matrices.size());
        } else if (r.kind == k_evaluate) {
            s_.copy_matrices(from, &r.matrix, 1);
        }
    }
    void compute(const request& r, reply& out) override {
        switch (r.kind) {
            case k_weights: s_.set_weights(static_cast<const unsigned*>(r.data)); break;
            case k_newview: {
                const auto* b = static_cast<const newview_batch*>(r.data);
                s_.update_partials(b->ops.data(), b->ops.size());
                break;
            }
            case k_evaluate: out.v[0] = s_.edge_loglik(r.a, r.b, r.matrix); break;
            case k_sumtable: s_.update_sumtable(r.a, r.b); break;
            case k_derivatives: {
                auto d = s_.derivatives(r.a, r.b, r.x);
                out.v[0] = d[0];
                out.v[1] = d[1];
                break;
            }
            default: throw std::logic_error("phylo_slice: unknown off-load kind");
        }
    }

private:
    site_slice s_;
};

// One bootstrap replicate: resample sites, propose branch lengths, then smooth every branch with Newton steps
// (RAxML's treeEvaluate/smoothTree on a fixed topology). Control logic here, likelihood calls off-loaded.
class bootstrap_search final : public host_program {
public:
    bootstrap_search(const tree& start, std::size_t sites, int rounds, int newton, std::uint64_t seed)
        : start_(start), sites_(sites), rounds_(rounds), newton_(newton), seed_(seed), orient_(start) {
        // depth-first edge order from tip 0, so that consecutive edges are mostly adjacent
        std::vector<std::pair<int, int>> stack{{0, -1}};
        while (!stack.empty()) {
            auto [v, from] = stack.back();
            stack.pop_back();
            for (std::size_t k = 0; k < 3; ++k) {
                int w = start_.nbr[static_cast<std::size_t>(v)][k];
                if (w < 0 || w == from) continue;
                order_.push_back(start_.nedge[static_cast<std::size_t>(v)][k]);
                stack.emplace_back(w, v);
            }
        }
    }

    double run_unit(int unit, offloader& off) override {
        std::mt19937_64 rng(seed_ * 1000003ULL + static_cast<std::uint64_t>(unit) * 7919ULL + 17);
        // bootstrap resampling of the sites
        weights_.assign(sites_, 0);
        std::uniform_int_distribution<std::size_t> site(0, sites_ - 1);
        for (std::size_t s = 0; s < sites_; ++s) ++weights_[site(rng)];
        request rq;
        rq.kind = k_weights;
        rq.data = weights_.data();
        off.offload(rq);
        // proposed branch lengths
        tree t = start_;
        std::exponential_distribution<double> blen(10.0);
        for (double& l : t.length) l = std::clamp(blen(rng), 1e-4, 2.0);
        orient_.invalidate();
        double lnl = 0;
        bool have_lnl = false;
        for (int r = 0; r < rounds_; ++r) {
            for (int e : order_) {
                auto [a, b] = t.ends[static_cast<std::size_t>(e)];
                if (t.is_tip(a)) std::swap(a, b);
                batch_.ops.clear();
                batch_.matrices.clear();
                batch_.lengths.clear();
                orient_.orient(t, a, b, batch_);
                orient_.orient(t, b, a, batch_);
                if (!batch_.ops.empty()) {
                    rq = request{};
                    rq.kind = k_newview;
                    rq.data = &batch_;
                    off.offload(rq);
                }
                if (!have_lnl) {
                    lnl = evaluate(off, a, b, e, t.length[static_cast<std::size_t>(e)]);
                    have_lnl = true;
                }
                rq = request{};
                rq.kind = k_sumtable;
                rq.a = a;
                rq.b = b;
                off.offload(rq);
                double x = t.length[static_cast<std::size_t>(e)];
                for (int k = 0; k < newton_; ++k) {
                    rq.kind = k_derivatives;
                    rq.x = x;
                    reply d = off.offload(rq);
                    double nx;
                    if (d.v[1] < 0) nx = x - d.v[0] / d.v[1];
                    else nx = d.v[0] > 0 ? 2 * x : 0.5 * x;
                    nx = std::clamp(nx, 1e-6, 10.0);
                    bool done = std::fabs(nx - x) < 1e-7;
                    x = nx;
                    if (done) break;
                }
                double nl = evaluate(off, a, b, e, x);
                if (nl >= lnl - 1e-7) {
                    t.length[static_cast<std::size_t>(e)] = x;
                    lnl = nl;
                }
                // else: keep the old length (the CLVs pointing at this edge do not depend on it)
            }
        }
        return lnl;
    }

private:
    double evaluate(offloader& off, int a, int b, int e, double x) {
        request rq;
        rq.kind = k_evaluate;
        rq.a = a;
        rq.b = b;
        rq.matrix = static_cast<unsigned>(e);
        rq.x = x;
        return off.offload(rq).v[0];
    }
    const tree& start_;
    std::size_t sites_;
    int rounds_, newton_;
    std::uint64_t seed_;
    orientation orient_;
    std::vector<int> order_;
    std::vector<unsigned> weights_;
    newview_batch batch_;
};

// ---- the synthetic workload -------------------------------------------------------------------------

class synthetic_slice final : public apu_slice {
public:
    synthetic_slice(const synthetic_program& s, int p) : s_(s), p_(p) {}
    void setup(const request&) override { serial += busy_wait(s_.serial_s); }
    void setup_copy(const apu_slice&, const request&) override {}  // the serial work is per APU, not per chunk
    void compute(const request&, reply& out) override {
        split += busy_wait(s_.split_s / p_);
        out.v[0] = 1.0;
    }
    double serial = 0, split = 0;

private:
    synthetic_program s_;
    int p_;
};

class synthetic_host final : public host_program {
public:
    explicit synthetic_host(const synthetic_program& s) : s_(s) {}
    double run_unit(int, offloader& off) override {
        double sum = 0;
        request rq;
        rq.kind = k_synthetic;
        for (int i = 0; i < s_.offloads; ++i) {
            host += busy_wait(s_.host_s);
            sum += off.offload(rq).v[0];
        }
        return sum;
    }
    double host = 0;

private:
    synthetic_program s_;
};

// ---- threads ----------------------------------------------------------------------------------------

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
        ++g_.t.offloads;
        if (r.kind >= 0 && r.kind < 6) ++g_.t.by_kind[static_cast<std::size_t>(r.kind)];
        if (r.kind == k_newview) g_.t.newview_ops += static_cast<std::int64_t>(static_cast<const newview_batch*>(r.data)->ops.size());
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

void apu_master(group& g, abort_state& ab) {
    const std::size_t p = g.slices.size();
    std::uint32_t seen = 0;
    try {
        for (;;) {
            wait_change(g.req, seen, wait_kind::spin_then_block, ab);
            ++seen;
            const request& r = g.rq;
            if (r.kind == k_quit) {
                for (std::size_t j = 1; j < p; ++j) post(g.workers[j]->go);
                return;
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
        }
    } catch (const aborted&) {
    } catch (const std::exception& e) {
        ab.fail(std::string("APU: ") + e.what());
    }
}

void apu_worker(group& g, std::size_t j, abort_state& ab) {
    worker_box& w = *g.workers[j];
    std::uint32_t seen = 0;
    try {
        for (;;) {
            wait_change(w.go, seen, wait_kind::spin_then_block, ab);
            ++seen;
            const request& r = g.rq;
            if (r.kind == k_quit) return;
            g.slices[j]->setup(r);
            reply out;
            const double t0 = now();
            g.slices[j]->compute(r, out);
            w.split_s += now() - t0;
            w.out = out;
            post(w.done);
        }
    } catch (const aborted&) {
    } catch (const std::exception& e) {
        ab.fail(std::string("APU worker: ") + e.what());
    }
}

std::int64_t context_switches() {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_nvcsw + u.ru_nivcsw;
}

// What the HPU threads of a run share with the thread that starts and watches them (both modes).
struct hpu_sync {
    explicit hpu_sync(std::size_t m) : csw(m, 0) {}
    signal_word start_sig, finished;
    std::atomic<int> finished_count{0};
    std::atomic<double> t_start{0};
    std::vector<std::int64_t> csw;  ///< context switches of each HPU thread during its units

    // The body of HPU thread i: waits for the start, runs body(t_start), counts its context switches,
    // records a failure in ab, and reports that it finished.
    template <class Body>
    void run(std::size_t i, abort_state& ab, Body&& body) {
        try {
            wait_change(start_sig, 0, wait_kind::block, ab);
            const std::int64_t cs0 = context_switches();
            body(t_start.load());
            csw[i] = context_switches() - cs0;
        } catch (const aborted&) {
        } catch (const std::exception& e) {
            ab.fail(std::string("HPU: ") + e.what());
        }
        finished_count.fetch_add(1);
        post(finished);
    }

    // Starts the HPU threads and waits for all m of them, at most timeout_s (then fails the run with
    // "watchdog: ... (" + what + ")").
    void start_and_watch(int m, double timeout_s, abort_state& ab, const std::string& what) {
        t_start.store(now());
        post(start_sig);
        const double deadline = t_start.load() + timeout_s;
        for (;;) {
            std::uint32_t seen = finished.seq.load();
            if (finished_count.load() == m || ab.flag.load()) break;
            if (now() > deadline) {
                ab.fail("watchdog: the run did not finish within " + std::to_string(timeout_s) + " s (" + what + ")");
                break;
            }
            wait_once(finished, seen, 0.05);
        }
    }
};

// ---- pool mode: A APU threads shared by the m HPU threads, p chosen per off-load ---------------------

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
        ++pr_.t.offloads;
        if (r.kind >= 0 && r.kind < 6) ++pr_.t.by_kind[static_cast<std::size_t>(r.kind)];
        if (r.kind == k_newview) pr_.t.newview_ops += static_cast<std::int64_t>(static_cast<const newview_batch*>(r.data)->ops.size());
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
    std::uint32_t seen = 0;
    try {
        for (;;) {
            wait_change(me.go, seen, wait_kind::spin_then_block, ab);
            ++seen;
            if (me.quit) return;
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
        }
    } catch (const aborted&) {
    } catch (const std::exception& e) {
        ab.fail(std::string("APU: ") + e.what());
    }
}

void run_pool(const config& c, const alignment& aln, const model& mdl, const tree& start, result& res, double setup0) {
    const std::size_t m = static_cast<std::size_t>(c.m), A = static_cast<std::size_t>(c.apus);
    std::shared_ptr<offload_scheduler> sched = c.scheduler ? c.scheduler : make_edtlp_scheduler();
    pool pl;
    pl.A = c.apus;
    pl.sched = sched.get();
    pl.p_hist.assign(A + 1, 0);
    for (std::size_t j = 0; j < A; ++j) {
        pl.apus.push_back(std::make_unique<pool_apu>());
        pl.idle.push_back(static_cast<int>(A - 1 - j));  // APU 0 on top
    }
    std::vector<std::unique_ptr<pool_process>> procs;
    for (std::size_t i = 0; i < m; ++i) {
        auto pr = std::make_unique<pool_process>();
        pr->index = static_cast<int>(i);
        pr->out.resize(A);
        pr->apus.reserve(A);
        for (std::size_t j = 0; j < A; ++j) {
            if (c.synthetic) {
                pr->chunks.push_back(std::make_unique<synthetic_slice>(c.synth, c.apus));
            } else {
                const std::size_t lo = aln.sites() * j / A, hi = aln.sites() * (j + 1) / A;
                pr->chunks.push_back(std::make_unique<phylo_slice>(aln, mdl, lo, hi));
            }
        }
        if (c.synthetic) pr->host = std::make_unique<synthetic_host>(c.synth);
        else pr->host = std::make_unique<bootstrap_search>(start, aln.sites(), c.rounds, c.newton, c.seed);
        procs.push_back(std::move(pr));
    }

    abort_state ab;
    hpu_sync hs(m);
    std::vector<std::thread> apus, hpus;
    for (std::size_t j = 0; j < A; ++j) apus.emplace_back(pool_apu_thread, std::ref(pl), static_cast<int>(j), std::ref(ab));
    for (std::size_t i = 0; i < m; ++i) {
        hpus.emplace_back([&, i] {
            pool_process& pr = *procs[i];
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
        });
    }
    res.setup_s = now() - setup0;
    hs.start_and_watch(c.m, c.timeout_s, ab,
                       "m=" + std::to_string(c.m) + ", apus=" + std::to_string(c.apus) + ", scheduler " + sched->name() +
                           ", policy " + to_string(c.policy));
    for (auto& h : hpus) h.join();
    if (!ab.flag.load()) {
        std::lock_guard<std::mutex> lk(pl.mu);
        for (auto& a : pl.apus) {
            a->quit = true;
            post(a->go);
        }
    }
    for (auto& a : apus) a.join();
    if (ab.flag.load()) throw std::runtime_error(ab.why);

    double last = 0;
    res.unit_loglik.assign(static_cast<std::size_t>(c.units), 0.0);
    timers& t = res.t;
    for (std::size_t i = 0; i < m; ++i) {
        pool_process& pr = *procs[i];
        last = std::max(last, pr.finish);
        t.host_s += pr.t.host_s;
        t.roundtrip_s += pr.t.roundtrip_s;
        t.queue_s += pr.t.queue_s;
        t.offloads += pr.t.offloads;
        t.newview_ops += pr.t.newview_ops;
        for (std::size_t k = 0; k < 6; ++k) t.by_kind[k] += pr.t.by_kind[k];
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
    for (auto& a : pl.apus) {
        t.apu_serial_s += a->t.apu_serial_s;
        t.apu_split_s += a->t.apu_split_s;
        t.apu_busy_s += a->t.apu_busy_s;
        t.worker_split_s += a->t.worker_split_s;
    }
    res.p_histogram = pl.p_hist;
    res.scheduler = sched->name();
    res.clamped = pl.clamped;
    res.wall_s = last - hs.t_start.load();
    if (c.synthetic) res.unit_loglik.clear();
}

}  // namespace

result run(const config& c) {
    if (c.m < 1) throw input_error("m: expected an integer >= 1, found " + std::to_string(c.m));
    if (c.p < 1) throw input_error("p: expected an integer >= 1, found " + std::to_string(c.p));
    if (c.units < 1) throw input_error("units: expected an integer >= 1, found " + std::to_string(c.units));
    if (c.rounds < 1 || c.newton < 1) throw input_error("rounds and newton steps: expected integers >= 1");
    if (!(c.timeout_s > 0)) throw input_error("timeout: expected a positive number of seconds");
    if (c.apus < 0 || c.apus > 1024) throw input_error("apus: expected an integer in 0..1024, found " + std::to_string(c.apus));
    const double setup0 = now();
    result res;
    res.cfg = c;
    alignment aln;
    model mdl;
    tree start;
    const std::size_t m = static_cast<std::size_t>(c.m), p = static_cast<std::size_t>(c.p);
    if (c.synthetic) {
        const auto& s = c.synth;
        if (s.offloads < 1 || !(s.host_s >= 0) || !(s.split_s >= 0) || !(s.serial_s >= 0))
            throw input_error("synthetic program: expected offloads >= 1 and durations >= 0");
        res.data_source = "synthetic";
    } else {
        if (c.alignment.empty()) {
            if (c.simulate_taxa < 3 || c.simulate_sites < 1)
                throw input_error("--simulate: expected TAXA >= 3 and SITES >= 1, found " + std::to_string(c.simulate_taxa) +
                                  ":" + std::to_string(c.simulate_sites));
            aln = simulate_alignment(static_cast<std::size_t>(c.simulate_taxa), static_cast<std::size_t>(c.simulate_sites), c.seed);
        } else {
            aln = read_alignment(c.alignment);
        }
        if (c.taxa < 0 || c.sites < 0) throw input_error("taxa/sites: expected integers >= 0");
        aln = truncate(aln, static_cast<std::size_t>(c.taxa), static_cast<std::size_t>(c.sites));
        const std::size_t most = c.apus > 0 ? static_cast<std::size_t>(c.apus) : p;
        if (most > aln.sites())
            throw input_error(std::string(c.apus > 0 ? "apus" : "p") + ": expected at most " + std::to_string(aln.sites()) +
                              " APUs (one site each), found " + std::to_string(most));
        mdl = default_model(aln);
        start = random_tree(aln.taxa(), c.seed + 7);
        res.taxa = aln.taxa();
        res.sites = aln.sites();
        res.data_source = aln.source;
    }

    if (c.apus > 0) {
        run_pool(c, aln, mdl, start, res, setup0);
        return res;
    }

    // one group per HPU thread, p slices per group
    std::vector<std::unique_ptr<group>> groups;
    for (std::size_t i = 0; i < m; ++i) {
        auto g = std::make_unique<group>();
        g->workers.resize(p);
        for (std::size_t j = 0; j < p; ++j) {
            if (j) g->workers[j] = std::make_unique<worker_box>();
            if (c.synthetic) {
                g->slices.push_back(std::make_unique<synthetic_slice>(c.synth, c.p));
            } else {
                const std::size_t lo = aln.sites() * j / p, hi = aln.sites() * (j + 1) / p;
                g->slices.push_back(std::make_unique<phylo_slice>(aln, mdl, lo, hi));
            }
        }
        if (c.synthetic) g->host = std::make_unique<synthetic_host>(c.synth);
        else g->host = std::make_unique<bootstrap_search>(start, aln.sites(), c.rounds, c.newton, c.seed);
        groups.push_back(std::move(g));
    }

    abort_state ab;
    hpu_sync hs(m);
    std::vector<std::thread> apus, hpus;
    // pin_team: CPU of group i's slot j (j = 0: HPU thread and master APU), over the CPUs this process may use.
    std::vector<int> allowed;
    if (c.pin_team) {
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof set, &set) == 0)
            for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
                if (CPU_ISSET(cpu, &set)) allowed.push_back(cpu);
    }
    std::atomic<bool> pin_failed{c.pin_team && allowed.empty()};
    auto pin = [&](std::size_t i, std::size_t j) {
        if (allowed.empty()) return;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(allowed[(i * p + j) % allowed.size()], &one);
        if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) pin_failed.store(true);
    };
    for (std::size_t i = 0; i < m; ++i) {
        apus.emplace_back([&, i] { pin(i, 0); apu_master(*groups[i], ab); });
        for (std::size_t j = 1; j < p; ++j) apus.emplace_back([&, i, j] { pin(i, j); apu_worker(*groups[i], j, ab); });
    }
    for (std::size_t i = 0; i < m; ++i) {
        hpus.emplace_back([&, i] {
            pin(i, 0);
            group& g = *groups[i];
            group_offloader off(g, c.policy, ab);
            hs.run(i, ab, [&](double t0) {
                off.start_clock(t0);
                for (int u = static_cast<int>(i); u < c.units; u += c.m) g.unit_results.emplace_back(u, g.host->run_unit(u, off));
                g.finish = now();
                off.stop_clock(g.finish);
            });
        });
    }
    res.setup_s = now() - setup0;
    // watchdog: wait for every HPU thread, at most timeout_s
    hs.start_and_watch(c.m, c.timeout_s, ab,
                       "m=" + std::to_string(c.m) + ", p=" + std::to_string(c.p) + ", policy " + to_string(c.policy));
    for (auto& h : hpus) h.join();
    // stop the APUs (after an abort they leave on their own, at their next wait)
    if (!ab.flag.load())
        for (auto& gp : groups) {
            gp->rq = request{};
            gp->rq.kind = k_quit;
            post(gp->req);
        }
    for (auto& a : apus) a.join();
    if (ab.flag.load()) throw std::runtime_error(ab.why);

    double last = 0;
    res.unit_loglik.assign(static_cast<std::size_t>(c.units), 0.0);
    for (std::size_t i = 0; i < m; ++i) {
        group& g = *groups[i];
        last = std::max(last, g.finish);
        timers& t = res.t;
        t.host_s += g.t.host_s;
        t.roundtrip_s += g.t.roundtrip_s;
        t.apu_busy_s += g.t.apu_busy_s;
        t.apu_serial_s += g.t.apu_serial_s;
        t.apu_split_s += g.t.apu_split_s;
        t.apu_fork_s += g.t.apu_fork_s;
        t.apu_join_s += g.t.apu_join_s;
        t.offloads += g.t.offloads;
        t.newview_ops += g.t.newview_ops;
        for (std::size_t k = 0; k < 6; ++k) t.by_kind[k] += g.t.by_kind[k];
        for (std::size_t j = 1; j < p; ++j) t.worker_split_s += g.workers[j]->split_s;
        t.context_switches += hs.csw[i];
        for (auto [u, v] : g.unit_results) res.unit_loglik[static_cast<std::size_t>(u)] = v;
        if (c.synthetic) {
            res.synth_host_s += static_cast<synthetic_host&>(*g.host).host;
            auto& master = static_cast<synthetic_slice&>(*g.slices[0]);
            res.synth_split_s += master.split;
            res.synth_serial_s += master.serial;
        }
    }
    res.wall_s = last - hs.t_start.load();
    res.pinned = c.pin_team && !pin_failed.load();
    if (c.synthetic) res.unit_loglik.clear();
    return res;
}

double result::mean_p() const {
    if (cfg.apus <= 0) return cfg.p;
    double n = 0, sum = 0;
    for (std::size_t p = 1; p < p_histogram.size(); ++p) {
        n += static_cast<double>(p_histogram[p]);
        sum += static_cast<double>(p * static_cast<std::size_t>(p_histogram[p]));
    }
    return n > 0 ? sum / n : 0.0;
}

std::string to_json(const result& r) {
    using nlohmann::json;
    const auto& c = r.cfg;
    json j;
    j["m"] = c.m;
    j["p"] = c.p;
    j["policy"] = to_string(c.policy);
    if (c.apus > 0) {
        j["p"] = nullptr;  // chosen per off-load
        j["apus"] = c.apus;
        j["scheduler"] = r.scheduler;
        json hist = json::object();
        for (std::size_t p = 1; p < r.p_histogram.size(); ++p)
            if (r.p_histogram[p]) hist[std::to_string(p)] = r.p_histogram[p];
        j["offloads_by_p"] = hist;
        j["mean_p"] = r.mean_p();
        j["clamped"] = r.clamped;
    }
    j["units"] = c.units;
    if (c.pin_team) j["pinned"] = r.pinned;
    j["workload"] = c.synthetic ? "synthetic" : "bootstrap";
    if (c.synthetic) {
        j["synthetic"] = {{"offloads", c.synth.offloads}, {"host_s", c.synth.host_s}, {"split_s", c.synth.split_s},
                          {"serial_s", c.synth.serial_s}};
    } else {
        j["data"] = {{"source", r.data_source}, {"taxa", r.taxa}, {"sites", r.sites}, {"model", "GTR+G4"},
                     {"rounds", c.rounds}, {"newton", c.newton}, {"seed", c.seed}};
    }
    j["wall_s"] = r.wall_s;
    j["setup_s"] = r.setup_s;
    const auto& t = r.t;
    json by;
    for (std::size_t k = 0; k < 6; ++k)
        if (t.by_kind[k]) by[offload_kind_names[k]] = t.by_kind[k];
    j["timers"] = {{"host_s", t.host_s},           {"roundtrip_s", t.roundtrip_s},     {"apu_busy_s", t.apu_busy_s},
                   {"apu_serial_s", t.apu_serial_s}, {"apu_split_s", t.apu_split_s},   {"apu_fork_s", t.apu_fork_s},
                   {"apu_join_s", t.apu_join_s},   {"worker_split_s", t.worker_split_s}};
    if (c.apus > 0) j["timers"]["queue_s"] = t.queue_s;
    j["offloads"] = t.offloads;
    j["offloads_by_kind"] = by;
    j["newview_ops"] = t.newview_ops;
    j["hpu_context_switches"] = t.context_switches;
    if (!r.unit_loglik.empty()) j["unit_loglik"] = r.unit_loglik;
    return j.dump(2);
}

}  // namespace mmgp::kernels
