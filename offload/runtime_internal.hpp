// What the parts of the off-load runtime share (internal, not installed): the clock, the off-load request and
// the interfaces between modes and workloads, the two workloads' classes, the HPU threads' start and watchdog,
// and the two modes' entry points.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <sys/resource.h>
#include <utility>
#include <vector>

#include "kernels.hpp"
#include "runtime.hpp"
#include "signal.hpp"

namespace mmgp::kernels::detail {

inline double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
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

/// One off-load counted on an HPU's timers: in all, by kind, and its partial-likelihood updates (the three ways a
/// runtime off-loads: runtime_fixed.cpp, runtime_pool.cpp, processes.cpp).
inline void count_offload(timers& t, const request& r) {
    ++t.offloads;
    if (r.kind >= 0 && r.kind < 6) ++t.by_kind[static_cast<std::size_t>(r.kind)];
    if (r.kind == k_newview) t.newview_ops += static_cast<std::int64_t>(static_cast<const newview_batch*>(r.data)->ops.size());
}

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
    /// What the off-loader timed itself (an accelerator's device time, bytes copied), added to its process's
    /// timers when its units are done; nothing by default.
    virtual void add_times(timers&) const {}
};

class host_program {
public:
    virtual ~host_program() = default;
    virtual double run_unit(int unit, offloader& off) = 0;  // returns the unit's result (log-likelihood)
};

// ---- the phylogenetic workload (workload_bootstrap.cpp) ---------------------------------------------

class phylo_slice final : public apu_slice {
public:
    phylo_slice(const alignment& a, const model& m, std::size_t lo, std::size_t hi) : s_(a, m, lo, hi) {}
    void setup(const request& r) override;
    void setup_copy(const apu_slice& first, const request& r) override;
    void compute(const request& r, reply& out) override;

private:
    site_slice s_;
};

// One bootstrap replicate: resample sites, propose branch lengths, then smooth every branch with Newton steps
// (RAxML's treeEvaluate/smoothTree on a fixed topology). Control logic here, likelihood calls off-loaded.
class bootstrap_search final : public host_program {
public:
    bootstrap_search(const tree& start, std::size_t sites, int rounds, int newton, std::uint64_t seed);
    double run_unit(int unit, offloader& off) override;

private:
    double evaluate(offloader& off, int a, int b, int e, double x);
    const tree& start_;
    std::size_t sites_;
    int rounds_, newton_;
    std::uint64_t seed_;
    orientation orient_;
    std::vector<int> order_;
    std::vector<unsigned> weights_;
    newview_batch batch_;
};

// ---- the synthetic workload (workload_synthetic.cpp) ------------------------------------------------

// Both busy-wait, and a busy-wait ends early (throwing aborted) once `stop` is set: the run's abort flag, or null
// where the run ends by killing the process.
class synthetic_slice final : public apu_slice {
public:
    synthetic_slice(const synthetic_program& s, int p, const std::atomic<bool>* stop) : s_(s), p_(p), stop_(stop) {}
    void setup(const request&) override;
    void setup_copy(const apu_slice&, const request&) override;
    void compute(const request&, reply& out) override;
    double serial = 0, split = 0;

private:
    synthetic_program s_;
    int p_;
    const std::atomic<bool>* stop_;
};

class synthetic_host final : public host_program {
public:
    synthetic_host(const synthetic_program& s, const std::atomic<bool>* stop) : s_(s), stop_(stop) {}
    double run_unit(int, offloader& off) override;
    double host = 0;

private:
    synthetic_program s_;
    const std::atomic<bool>* stop_;
};

// ---- HPU threads: start and watchdog (both modes) ---------------------------------------------------

inline std::int64_t context_switches() {
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

// ---- APU threads (both modes) --------------------------------------------------------------------------

// The loop of an APU thread: waits for each post of `go` (spinning, then blocking) and runs step() on it until
// step() returns false (the thread is told to quit). A torn-down run ends the loop quietly; any other exception
// fails the run with "<who>: <what>".
template <class Step>
void serve_posts(signal_word& go, abort_state& ab, const char* who, Step&& step) {
    std::uint32_t seen = 0;
    try {
        for (;;) {
            wait_change(go, seen, wait_kind::spin_then_block, ab);
            ++seen;
            if (!step()) return;
        }
    } catch (const aborted&) {
    } catch (const std::exception& e) {
        ab.fail(std::string(who) + ": " + e.what());
    }
}

// Slice j of `parts` of one process's accelerator work: a synthetic slice, or the sites
// [j·n/parts, (j+1)·n/parts) of the alignment (both modes).
// A synthetic slice stops when `stop` is set (null: never).
inline std::unique_ptr<apu_slice> make_slice(const config& c, const alignment& aln, const model& mdl, std::size_t j,
                                             std::size_t parts, const std::atomic<bool>* stop) {
    if (c.synthetic) return std::make_unique<synthetic_slice>(c.synth, static_cast<int>(parts), stop);
    const std::size_t lo = aln.sites() * j / parts, hi = aln.sites() * (j + 1) / parts;
    return std::make_unique<phylo_slice>(aln, mdl, lo, hi);
}

// One process's host program: the synthetic host (stopping when `stop` is set; null: never), or a bootstrap
// search from `start` (both modes).
inline std::unique_ptr<host_program> make_host(const config& c, const alignment& aln, const tree& start,
                                               const std::atomic<bool>* stop) {
    if (c.synthetic) return std::make_unique<synthetic_host>(c.synth, stop);
    return std::make_unique<bootstrap_search>(start, aln.sites(), c.rounds, c.newton, c.seed);
}

// The m processes of a run in both modes, each a T with its host program (T::host) and its accelerator work cut
// into `parts` slices (into T::*slices); `prepare(x, i)` sets up the rest of process i first. A synthetic
// program's busy-waits end when the run is aborted (ab).
template <class T, class Prepare>
std::vector<std::unique_ptr<T>> make_each_process(const config& c, const alignment& aln, const model& mdl, const tree& start,
                                                  std::size_t parts, std::vector<std::unique_ptr<apu_slice>> T::*slices,
                                                  const abort_state& ab, Prepare prepare) {
    std::vector<std::unique_ptr<T>> out;
    for (std::size_t i = 0; i < static_cast<std::size_t>(c.m); ++i) {
        auto x = std::make_unique<T>();
        prepare(*x, i);
        for (std::size_t j = 0; j < parts; ++j) ((*x).*slices).push_back(make_slice(c, aln, mdl, j, parts, &ab.flag));
        x->host = make_host(c, aln, start, &ab.flag);
        out.push_back(std::move(x));
    }
    return out;
}

// ---- the two modes: both run c's units on the data run() prepared and fill res (wall_s, setup_s from
// setup0, timers, unit_loglik, ...); they throw mmgp::failure when the run failed or timed out --------

// Fixed mode (config::apus == 0): m HPU threads, each with its own p APU threads (runtime_fixed.cpp).
void run_fixed(const config& c, const alignment& aln, const model& mdl, const tree& start, result& res, double setup0);
// Pool mode (config::apus > 0): A APU threads shared by the m HPU threads, p chosen per off-load (runtime_pool.cpp).
void run_pool(const config& c, const alignment& aln, const model& mdl, const tree& start, result& res, double setup0);
// Processes (run_processes): m forked processes, each with its accelerator's off-loader (processes.cpp).
void run_processes(const config& c, const alignment& aln, const model& mdl, const tree& start,
                   const process_accelerator& acc, result& res, double setup0);

}  // namespace mmgp::kernels::detail
