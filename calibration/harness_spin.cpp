// Spin-wait iteration, scheduler time slice and hand-back on oversubscribed cores (harness "spin"). Produces
// platform.spin_pause, sched_slice and T_wake_busy (written by --time-shared from measurements.spin_pause,
// sched_slice and wake_busy).
#include "harness_common.hpp"
#include "spin_wait.hpp"
#include "mmgp/error.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <memory>
#include <sched.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace mmgp::calib {

using namespace detail;

namespace {

/// The spin of wait_change() in kernels/signal.hpp (spin_wait.hpp), bounded by n. Returns the iterations done:
/// n unless the word changed or the flag was raised.
__attribute__((noinline)) long spin_wait_loop(const std::atomic<std::uint32_t>& word, std::uint32_t old, long n,
                                              const std::atomic<bool>& abort_flag) {
    return spin_wait(word, old, n, abort_flag).iterations;
}

const char* pause_instruction() {
#if defined(__x86_64__) || defined(__i386__)
    return "pause";
#elif defined(__aarch64__)
    return "yield";
#else
    return "none (no pause instruction on this architecture)";
#endif
}

struct alignas(64) spin_word {
    std::atomic<std::uint32_t> seq{7};
};
struct alignas(64) spin_flag {
    std::atomic<bool> raised{false};
};

using ns_t = std::int64_t;
ns_t now_ns() { return std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now().time_since_epoch()).count(); }

struct run_span {
    ns_t start, end;  ///< first and last time stamp of an uninterrupted run
};

/// One CPU-bound thread: time stamps in a tight loop until `until`; a gap longer than gap_ns closes a run.
std::vector<run_span> stamp_until(ns_t until, ns_t gap_ns) {
    std::vector<run_span> runs;
    runs.reserve(4096);
    ns_t start = now_ns(), last = start;
    for (;;) {
        ns_t t = now_ns();
        if (t - last > gap_ns) {
            runs.push_back({start, last});
            start = t;
        }
        last = t;
        if (t >= until) break;
    }
    runs.push_back({start, last});
    return runs;
}

struct slice_rep {
    std::vector<double> runs;     ///< complete runs (a gap on both sides), s
    std::vector<double> tenures;  ///< pinned: from taking the CPU from the sibling to handing it back, s
    std::size_t gaps = 0, sibling_gaps = 0;
    double longest_gap = 0;
};

/// `threads` CPU-bound threads for `seconds`, all pinned to `cpu` (pinned) or unpinned.
slice_rep slice_window(int cpu, bool pinned, int threads, double seconds, ns_t gap_ns) {
    std::atomic<int> ready{0};
    std::atomic<bool> pin_failed{false};
    std::atomic<ns_t> until{0};
    std::vector<std::vector<run_span>> runs(static_cast<std::size_t>(threads));
    std::vector<std::thread> ts;
    for (int j = 0; j < threads; ++j)
        ts.emplace_back([&, j] {
            if (pinned && !pin_current_thread(cpu)) pin_failed = true;
            if (ready.fetch_add(1) + 1 == threads) until.store(now_ns() + static_cast<ns_t>(seconds * 1e9));
            ns_t u;
            while ((u = until.load()) == 0) sched_yield();
            runs[static_cast<std::size_t>(j)] = stamp_until(u, gap_ns);
        });
    for (auto& t : ts) t.join();
    if (pin_failed) throw mmgp::failure(fmt::format("scheduler slice: cannot pin to CPU {}", cpu));
    slice_rep rep;
    for (std::size_t j = 0; j < runs.size(); ++j) {
        const auto& r = runs[j];
        for (std::size_t k = 1; k + 1 < r.size(); ++k) rep.runs.push_back(1e-9 * static_cast<double>(r[k].end - r[k].start));
        for (std::size_t k = 0; k + 1 < r.size(); ++k) {
            ++rep.gaps;
            ns_t g0 = r[k].end, g1 = r[k + 1].start;
            rep.longest_gap = std::max(rep.longest_gap, 1e-9 * static_cast<double>(g1 - g0));
            if (!pinned || threads != 2) continue;
            // Did the sibling run during this gap? (its runs are sorted by start)
            const auto& o = runs[1 - j];
            auto it = std::lower_bound(o.begin(), o.end(), g1, [](const run_span& s, ns_t t) { return s.start < t; });
            if (it != o.begin() && std::prev(it)->end > g0) ++rep.sibling_gaps;
        }
    }
    if (pinned && threads == 2) {
        // Tenures: maximal sequences of one thread's runs with no run of the sibling in between.
        std::vector<std::pair<run_span, int>> all;
        for (int j = 0; j < 2; ++j)
            for (const auto& s : runs[static_cast<std::size_t>(j)]) all.push_back({s, j});
        std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first.start < b.first.start; });
        std::vector<std::pair<ns_t, ns_t>> groups;
        int owner = -1;
        for (const auto& [s, j] : all) {
            if (j != owner) {
                groups.push_back({s.start, s.end});
                owner = j;
            } else {
                groups.back().second = std::max(groups.back().second, s.end);
            }
        }
        for (std::size_t k = 1; k + 1 < groups.size(); ++k)
            rep.tenures.push_back(1e-9 * static_cast<double>(groups[k].second - groups[k].first));
    }
    return rep;
}

int allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, CPU_COUNT(&set));
}

}  // namespace

measurement run_spin_pause(const harness_options& o) {
    const int reps = reps_or(o, 7, 21);
    // 10^6 iterations per repetition, timed in blocks of 10^4 (~0.1 ms): a preemption spoils one block, whose
    // median over the repetition ignores it.
    constexpr long block = 10000, blocks = 100;
    const int cpu = hpu0(o);
    harness_options oq = o;
    if (o.quick) oq.retry_budget_s = std::min(o.retry_budget_s, 0.5);
    pin_guard pin(cpu);
    spin_word w;
    spin_flag ab;
    const double ovh = clock_overhead();
    auto timed_block = [&] {
        auto t0 = clk::now();
        long done = spin_wait_loop(w.seq, 7, block, ab.raised);
        auto t1 = clk::now();
        if (done != block) throw mmgp::failure("spin-wait: the loop stopped early");
        return std::max(0.0, secs(t1 - t0) - ovh) / static_cast<double>(block);
    };
    auto once = [&] {
        say(o, fmt::format("spin/pause: {} x {} spin-wait iterations on CPU {}", reps, block * blocks, cpu));
        for (int i = 0; i < 20; ++i) timed_block();  // warm-up
        std::vector<double> all, med;
        for (int r = 0; r < reps; ++r) {
            std::vector<double> one;
            for (long b = 0; b < blocks; ++b) one.push_back(timed_block());
            med.push_back(median(one));
            all.insert(all.end(), one.begin(), one.end());
        }
        measurement m = make("spin/pause", "spin", all, med);
        m.extra = {{"cpu", cpu},
                   {"pinned", pin.ok()},
                   {"pause_instruction", pause_instruction()},
                   {"iterations_per_repetition", block * blocks},
                   {"iterations_per_observation", block},
                   {"clock_overhead_s", ovh},
                   {"loop", "wait_change() spin of the off-load runtime: acquire load of an unchanging atomic 32-bit "
                            "word, pause, loop-counter test, abort-flag test every 1024 iterations"},
                   {"estimator", "seconds per iteration of blocks of 1e4 iterations; median over blocks"}};
        return m;
    };
    return with_retries(oq, once);
}

namespace {

// How a slice measurement is taken: the CPU, whether two threads could be pinned to it, the threads and windows.
struct slice_plan {
    int reps = 0;
    double window = 0;  // seconds per repetition
    static constexpr double gap_s = 20e-6;
    ns_t gap_ns = static_cast<ns_t>(gap_s * 1e9);
    int cpu = 0;
    bool pinned = false;
    std::string pin_note;  // why unpinned, when so
    int ncpu = 1;
    int threads = 2;
    double ovh = 0;  // clock overhead
};

slice_plan plan_slice(const harness_options& o) {
    slice_plan pl;
    pl.reps = reps_or(o, 3, 5);
    pl.window = (o.quick ? 0.5 : 1.0) / pl.reps;
    pl.cpu = hpu0(o);
    {  // can two threads be pinned to this CPU? (a cpuset or a container may forbid it)
        bool ok = false;
        std::thread t([&] { ok = pin_current_thread(pl.cpu); });
        t.join();
        pl.pinned = ok;
        if (!ok) pl.pin_note = fmt::format("cannot pin a thread to CPU {} (sched_setaffinity refused): two unpinned threads "
                                           "per CPU instead",
                                           pl.cpu);
    }
    pl.ncpu = allowed_cpus();
    pl.threads = pl.pinned ? 2 : 2 * pl.ncpu;
    pl.ovh = clock_overhead();
    return pl;
}

// What the windows of one attempt saw, pooled over its repetitions (and their per-repetition medians).
struct slice_sample {
    std::vector<double> all, med, tenures, tmed;
    std::size_t gaps = 0, sibling = 0;
    double longest = 0;
};

slice_sample sample_slices(const harness_options& o, const slice_plan& pl) {
    say(o, pl.pinned ? fmt::format("spin/sched_slice: {} x {:.2f} s, two CPU-bound threads on CPU {}", pl.reps, pl.window, pl.cpu)
                     : fmt::format("spin/sched_slice: {} x {:.2f} s, {} unpinned CPU-bound threads", pl.reps, pl.window,
                                   pl.threads));
    slice_window(pl.cpu, pl.pinned, pl.threads, 0.03, pl.gap_ns);  // warm-up
    slice_sample x;
    for (int r = 0; r < pl.reps; ++r) {
        slice_rep one = slice_window(pl.cpu, pl.pinned, pl.threads, pl.window, pl.gap_ns);
        if (!one.runs.empty()) x.med.push_back(median(one.runs));
        x.all.insert(x.all.end(), one.runs.begin(), one.runs.end());
        x.tenures.insert(x.tenures.end(), one.tenures.begin(), one.tenures.end());
        if (!one.tenures.empty()) x.tmed.push_back(median(one.tenures));
        x.gaps += one.gaps;
        x.sibling += one.sibling_gaps;
        x.longest = std::max(x.longest, one.longest_gap);
    }
    return x;
}

// The record's "extra": how the slices were measured and what the windows saw.
nlohmann::json slice_extra(const slice_plan& pl, const slice_sample& x) {
    nlohmann::json extra = {{"cpu", pl.pinned ? nlohmann::json(pl.cpu) : nlohmann::json(nullptr)},
                            {"pinned", pl.pinned},
                            {"threads", pl.threads},
                            {"cpus", pl.pinned ? 1 : pl.ncpu},
                            {"gap_threshold_s", slice_plan::gap_s},
                            {"window_s", pl.window},
                            {"duration_s", pl.window * pl.reps},
                            {"clock_overhead_s", pl.ovh},
                            {"slices", x.all.size()},
                            {"gaps", x.gaps},
                            {"longest_gap_s", x.longest},
                            {"estimator", pl.pinned && !x.tenures.empty()
                                              ? "each thread time-stamps in a tight loop; a gap > 20 us in its own "
                                                "time stamps is a deschedule; slice = median tenure: from taking the "
                                                "CPU from the sibling to handing it back to it (interrupts and other "
                                                "processes inside a tenure do not shorten it, unlike the runs between "
                                                "gaps, kept as median_run_s)"
                                              : "each thread time-stamps in a tight loop; a gap > 20 us in its own "
                                                "time stamps is a deschedule; slice = median length of the runs "
                                                "between two gaps (first and last run of each thread excluded)"}};
    if (pl.pinned) {
        extra["gaps_while_sibling_ran"] = x.sibling;
        extra["tenure_median_s"] = x.tenures.empty() ? nlohmann::json(nullptr) : nlohmann::json(median(x.tenures));
        extra["tenures"] = x.tenures.size();
        extra["tenure"] = "time from taking the CPU from the sibling to handing it back (gaps in which the sibling "
                          "did not run, e.g. interrupts or other processes, included)";
    }
    if (!pl.pin_note.empty()) extra["note"] = pl.pin_note;
    if (!x.all.empty()) extra["median_run_s"] = median(x.all);
    return extra;
}

// An attempt that measured no slice: why, as the record's warning.
slice_result unmeasurable_slice(const slice_plan& pl, const slice_sample& x, bool disturbed, nlohmann::json extra) {
    slice_result out;
    out.pinned = pl.pinned;
    out.measurable = false;
    out.disturbed = disturbed;
    if (disturbed)
        out.reason = fmt::format("CPU {} is busy with other processes: only {} of {} deschedules (gaps > {:.0f} us) "
                                 "handed the CPU to the waiting thread, so the runs between gaps (median {:.3g} "
                                 "ms) measure that interference, not the time slice",
                                 pl.cpu, x.sibling, x.gaps, 1e6 * slice_plan::gap_s, x.all.empty() ? 0.0 : 1e3 * median(x.all));
    else
        out.reason = fmt::format("only {} complete slice(s) in {:.2f} s of {} CPU-bound threads {}: the scheduler "
                                 "did not deschedule them often enough (slice longer than the window, or no time "
                                 "slicing)",
                                 x.all.size(), pl.window * pl.reps, pl.threads,
                                 pl.pinned ? fmt::format("pinned to CPU {}", pl.cpu) : std::string("unpinned"));
    out.m.name = "spin/sched_slice";
    out.m.harness = "spin";
    out.m.repetitions = pl.reps;
    out.m.observations = x.all.size();
    out.m.flagged = true;
    out.m.warning = "unmeasurable: " + out.reason;
    out.m.extra = std::move(extra);
    return out;
}

// One attempt: the windows, then the slice (the median tenure when pinned, else the median run between gaps).
slice_result measure_slice_once(const harness_options& o, const slice_plan& pl) {
    const slice_sample x = sample_slices(o, pl);
    nlohmann::json extra = slice_extra(pl, x);
    // Pinned, every deschedule should hand the CPU to the waiting sibling; when most do not, other processes
    // on this CPU cut the runs and their median measures that interference, not the slice.
    const bool disturbed = pl.pinned && x.gaps > 0 && 3 * x.sibling < x.gaps;
    if (x.all.size() < 3 || x.med.empty() || disturbed) return unmeasurable_slice(pl, x, disturbed, std::move(extra));
    slice_result out;
    out.pinned = pl.pinned;
    out.measurable = true;
    out.m = pl.pinned && x.tenures.size() >= 3 ? make("spin/sched_slice", "spin", x.tenures, x.tmed)
                                               : make("spin/sched_slice", "spin", x.all, x.med);
    out.m.extra = extra;
    return out;
}

}  // namespace

slice_result run_sched_slice(const harness_options& o) {
    const slice_plan pl = plan_slice(o);
    const double budget = o.quick ? std::min(o.retry_budget_s, 0.5) : o.retry_budget_s;
    auto start = clk::now();
    slice_result best = measure_slice_once(o, pl);
    int attempts = 1;
    // Repeated while noisy, or disturbed by other processes (which may pass), as long as the budget lasts.
    while ((best.measurable && best.m.reps.cv > o.cv_threshold) || best.disturbed) {
        double spent = secs(clk::now() - start);
        if (spent + spent / attempts > budget) break;
        say(o, best.disturbed ? std::string("spin/sched_slice: disturbed by other processes, repeating")
                              : fmt::format("spin/sched_slice: CV {:.1f} % above {:.0f} %, repeating",
                                            100 * best.m.reps.cv, 100 * o.cv_threshold));
        slice_result again = measure_slice_once(o, pl);
        ++attempts;
        if (again.measurable && (!best.measurable || again.m.reps.cv < best.m.reps.cv)) best = std::move(again);
    }
    if (!best.measurable) best.m.warning += fmt::format(" (after {} attempt(s))", attempts);
    best.m.attempts = attempts;
    if (best.measurable && best.m.reps.cv > o.cv_threshold) {
        best.m.flagged = true;
        best.m.warning = fmt::format("noisy: CV {:.1f} % above the {:.0f} % threshold after {} attempt(s)",
                                     100 * best.m.reps.cv, 100 * o.cv_threshold, attempts);
    }
    return best;
}

nlohmann::json slice_json(const slice_result& s) {
    nlohmann::json j;
    if (s.measurable) {
        j = to_json(s.m);
    } else {
        j = {{"name", s.m.name}, {"harness", s.m.harness}, {"run_type", "aggregate"}, {"unit", s.m.unit},
             {"value", nullptr}, {"median", nullptr}, {"repetitions", s.m.repetitions},
             {"observations", s.m.observations}, {"attempts", s.m.attempts}, {"flagged", true},
             {"warning", s.m.warning}, {"details", s.m.extra}};
    }
    j["measurable"] = s.measurable;
    if (!s.measurable) j["reason"] = s.reason;
    j["pinned"] = s.pinned;
    return j;
}

measurement run_wake_busy(const harness_options& o) {
    const int reps = reps_or(o, 3, 7);
    const int cpus = allowed_cpus();
    const int k = 2 * cpus;  // pairs: 2k threads, twice as many runnable as CPUs at every hand-back
    const long rounds = o.quick ? 1000 : 3000;
    constexpr double work_s = 20e-6;
    struct alignas(64) pair_words {
        spin_word job, result;
    };
    spin_flag never;  // the spin-wait loop's abort flag, never raised here
    auto work = [] {
        const auto t0 = clk::now();
        while (secs(clk::now() - t0) < work_s) {
        }
    };
    auto timed = [&] {
        auto words = std::make_unique<pair_words[]>(static_cast<std::size_t>(k));
        std::barrier start(2 * k + 1);
        std::vector<std::thread> threads;
        for (int i = 0; i < k; ++i) {
            pair_words* w = &words[static_cast<std::size_t>(i)];
            threads.emplace_back([&, w] {  // APU: waits like the runtime (spin, then block), works, hands back
                // read before the barrier: after it, the HPU may already have posted the first job
                std::uint32_t seen = w->job.seq.load(std::memory_order_acquire);
                start.arrive_and_wait();
                for (long r = 0; r < rounds; ++r) {
                    spin_wait_loop(w->job.seq, seen, offload_spin_limit, never.raised);
                    while (w->job.seq.load(std::memory_order_acquire) == seen) futex_wait(&w->job.seq, seen);
                    seen = w->job.seq.load(std::memory_order_acquire);
                    work();
                    w->result.seq.store(seen, std::memory_order_release);
                    futex_wake(&w->result.seq);
                }
            });
            threads.emplace_back([&, w] {  // HPU: posts a job, blocks until its result (edtlp)
                const std::uint32_t first = w->job.seq.load(std::memory_order_relaxed);
                start.arrive_and_wait();
                for (long r = 1; r <= rounds; ++r) {
                    const auto job = first + static_cast<std::uint32_t>(r);
                    w->job.seq.store(job, std::memory_order_release);
                    futex_wake(&w->job.seq);
                    for (std::uint32_t v; (v = w->result.seq.load(std::memory_order_acquire)) != job;)
                        futex_wait(&w->result.seq, v);
                }
            });
        }
        start.arrive_and_wait();
        const auto t0 = clk::now();
        for (auto& t : threads) t.join();
        const double wall = secs(clk::now() - t0);
        const double ideal = static_cast<double>(rounds) * work_s * k / cpus;
        return std::max(0.0, wall - ideal) * cpus / (static_cast<double>(rounds) * k);
    };
    auto once = [&] {
        say(o, fmt::format("spin/wake_busy: {} x {} pairs (HPU blocks, APU spins {} iterations then blocks), {} rounds "
                           "of {:.0f} us on {} CPUs",
                           reps, k, offload_spin_limit, rounds, work_s * 1e6, cpus));
        timed();  // warm-up
        std::vector<double> per;
        for (int r = 0; r < reps; ++r) per.push_back(timed());
        measurement m = make("spin/wake_busy", "spin", per, per);
        m.extra = {{"cpus", cpus},
                   {"pairs", k},
                   {"rounds", rounds},
                   {"work_s", work_s},
                   {"spin_limit", offload_spin_limit},
                   {"pinned", false},
                   {"estimator", "(wall - rounds x work x pairs / cpus) x cpus / (rounds x pairs): processor time per "
                                 "hand-back beyond the work, one value per repetition"},
                   {"mechanism", "per pair: the APU thread works, stores the result and futex-wakes the blocked HPU "
                                 "thread, then waits for the next job like the off-load runtime (spin_limit iterations "
                                 "of the spin-wait loop, then a futex wait); the HPU thread posts it and blocks"}};
        return m;
    };
    harness_options oq = o;  // noisy by nature (CV 15-25 % here): a few retries, not the full budget
    oq.retry_budget_s = std::min(o.retry_budget_s, 3.0);
    return with_retries(oq, once);
}

}  // namespace mmgp::calib
