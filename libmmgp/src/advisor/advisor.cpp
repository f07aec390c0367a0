// The runtime advisor's estimator (mmgp/advisor.hpp): observations come in from the runtime's threads,
// a refresh fits the application's per-off-load times to them and evaluates the model (mmgp::evaluator)
// into a table of the best p for every (m, largest allowed p), which recommend() reads without a lock.
// Calls go down only (to the model and the profile loader); the C API over it is advisor/advisor_c.cpp.
//
// Per off-load on p accelerators the advisor sees O_offload + p*g + c + a/p (g charged p - 1 times when
// the profile says so): a splits across the p accelerators, c does not; when the durations grow with p
// the fit is c + e*(p - 1) instead, e an extra gap per additional accelerator.
#include "mmgp/advisor.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "mmgp/error.hpp"
#include "base/format.hpp"

namespace mmgp {

// The advisor's own types and helpers. A named namespace, not an anonymous one: advisor::impl, a class of the
// public header, holds some of them (gcc's -Wsubobject-linkage, where this file is compiled as part of a unity file).
namespace advisor_detail {

// One published answer: the best p for (m, largest allowed p) and its predicted times.
struct table_entry {
    std::atomic<int> p{1};
    std::atomic<double> gain{0.0}, time_s{0.0}, time_p1_s{0.0};
};

// The same, computed before it is published.
struct table_row {
    int p;
    double gain, time_s, time_p1_s;
};

// The off-loads observed at one p: an EWMA of their duration (overheads removed), how many, and the
// completed-off-load count when the latest of them completed.
struct duration_bucket {
    std::atomic<double> mean_s{0.0};
    std::atomic<std::uint64_t> count{0}, last_at{0};
};

void ewma(std::atomic<double>& x, double y, double w) noexcept {
    double old = x.load(std::memory_order_relaxed);
    while (!x.compare_exchange_weak(old, old + w * (y - old), std::memory_order_relaxed)) {
    }
}

// Options out of range are a usage_error (the C API's MMGP_E_INVALID_ARGUMENT), not a profile's bad input; each
// value as given (format_double: std::to_string wrote 1.0000001 as 1.000000 and -1e-9 as -0.000000).
void check_options(const advisor_options& o) {
    const auto refuse = [](const char* key, const char* expected, const std::string& found) {
        throw usage_error(std::string("advisor options: /") + key + ": expected " + expected + ", found " + found);
    };
    if (!(o.smoothing > 0.0 && o.smoothing <= 1.0)) refuse("smoothing", "a weight in (0, 1]", detail::format_double(o.smoothing));
    if (!(o.min_gain >= 0.0 && o.min_gain < 1.0)) refuse("min_gain", "a fraction in [0, 1)", detail::format_double(o.min_gain));
    if (o.refresh_every < 0) refuse("refresh_every", "a count >= 0", std::to_string(o.refresh_every));
    if (o.explore_every < 0) refuse("explore_every", "a count >= 0", std::to_string(o.explore_every));
}

// The largest m in the table: min(A, max_processes_per_node), and no further than a tabulated alpha(m) goes.
// The table holds sum over m = 1..M of floor(A/m) answers, every one evaluated at each refresh: at most this
// many (4 Mi; a node of 100,000 accelerators needs 1.2 Mi).
constexpr std::int64_t max_table_answers = std::int64_t{1} << 22;

// Refuses a table past max_table_answers before anything is laid out (from the accelerators alone, then with
// the tasks: a count of 2e9 was once taken, took seconds and ended in an internal error).
// The largest p for m tasks: the blocks the accelerators hold (capacity: A, or A·slots on a GPU node) shared by
// the m tasks, or all of them for each task when the processes' grids take turns (time-sliced, held_blocks()).
int largest_p(int capacity, bool sliced, int m) noexcept { return sliced ? capacity : capacity / m; }

void check_table_size(const std::string& file, int capacity, bool slots, bool sliced, int max_tasks) {
    std::int64_t answers = 0;
    for (int m = 1; m <= max_tasks && answers <= max_table_answers; ++m) answers += largest_p(capacity, sliced, m);
    if (answers > max_table_answers)
        throw input_error(file, slots ? "/platform/apu_slots" : "/platform/apus",
                          "at most " + std::to_string(max_table_answers) + " answers in the advisor's table (" +
                              (sliced ? "A" : "A/m") + " of them for each task count m up to " +
                              std::to_string(max_tasks) + ")",
                          std::to_string(capacity) + (slots ? " blocks" : " accelerators") + (sliced ? ", time-sliced" : ""));
}

int largest_task_count(const scenario& s) {
    const int m_top = static_cast<int>(bounds(s).m_hi);
    int m = 1;
    while (m < m_top && (s.plat.alpha.kind != m_function::form::table || s.plat.alpha.covers(m + 1))) ++m;
    return m;
}

// What a refresh evaluates: one node, one unit per task (a refresh sets units = m, one round of the m active
// tasks); communication does not depend on p and is left out.
void restrict_to_one_node(scenario& s, int max_tasks, int capacity, policy pol, accelerator_sharing share) {
    s.app.decomp = decomposition::task;
    s.app.scale = scaling::strong;
    s.app.units = 1;
    s.app.comm.clear();
    s.plat.nodes = 1;
    s.space.m = {1, max_tasks};
    s.space.p = {1, capacity};
    s.space.nodes = {1, 1};
    s.space.pol = pol;
    s.space.sharing = {share};
}

// Weighted sums over the duration buckets for the least-squares fits; x = 1/p, z = p - 1, y = the duration.
struct fit_sums {
    double w = 0, x = 0, xx = 0, y = 0, xy = 0, z = 0, zz = 0, zy = 0;
    int buckets = 0;
    int latest_p = 0;  // the p observed most recently
    std::uint64_t latest_at = 0;

    void add(double weight, int p, double duration, std::uint64_t last_at) noexcept {
        const double xp = 1.0 / p, zp = p - 1.0;
        w += weight, x += weight * xp, xx += weight * xp * xp, y += weight * duration, xy += weight * xp * duration;
        z += weight * zp, zz += weight * zp * zp, zy += weight * zp * duration;
        ++buckets;
        if (latest_p == 0 || last_at >= latest_at) latest_p = p, latest_at = last_at;
    }
};

// Accelerator time of one off-load on p accelerators: parallel_s / p + serial_s + extra_gap_s * (p - 1).
struct apu_time_split {
    double parallel_s, serial_s, extra_gap_s;
};

// Least squares of y = c + a/p over two or more p, with a, c >= 0. When a < 0 (nothing splits and every
// extra accelerator costs: threads signalled and woken on a time-shared machine, say), y = c + e*(p - 1)
// with e, c >= 0 instead. False when the p observed do not determine a and c.
bool fit_over_p(const fit_sums& s, apu_time_split& out) noexcept {
    const double det = s.w * s.xx - s.x * s.x;
    if (!(s.buckets >= 2 && det > 1e-12 * s.w * s.xx)) return false;
    double a = (s.w * s.xy - s.x * s.y) / det;
    double c = (s.y - a * s.x) / s.w;
    double e = 0.0;
    if (a < 0) {
        a = 0;
        const double det_z = s.w * s.zz - s.z * s.z;
        e = det_z > 0 ? (s.w * s.zy - s.z * s.y) / det_z : 0.0;
        c = (s.y - e * s.z) / s.w;
        if (e < 0) e = 0, c = s.y / s.w;
        if (c < 0) c = 0, e = s.zz > 0 ? s.zy / s.zz : 0.0;
    } else if (c < 0) {
        c = 0, a = s.xy / s.xx;
    }
    out = {a, c, e};
    return true;
}

// One p observed: its duration fixes the time on one accelerator; the split (parallel fraction) and the
// extra gap stay as they were.
apu_time_split fit_one_p(double duration, int p, double parallel_fraction, double extra_gap_s) noexcept {
    const double t1 = duration / (parallel_fraction / p + (1.0 - parallel_fraction));
    const double a = t1 * parallel_fraction;
    return {a, t1 - a, extra_gap_s};
}

// The best p <= max_p for each max_p = 1 .. pmax given the predicted times t[1 .. pmax] of one task;
// p = 1 when the saving against p = 1 is below min_gain.
void best_p_rows(const std::vector<double>& t, int pmax, double min_gain, table_row* rows) noexcept {
    const double t1m = t[1];
    int best = 1;
    for (int q = 1; q <= pmax; ++q) {
        if (t[static_cast<std::size_t>(q)] < t[static_cast<std::size_t>(best)]) best = q;
        double gain = t1m > 0 ? (t1m - t[static_cast<std::size_t>(best)]) / t1m : 0.0;
        int p = best;
        if (!(gain >= min_gain) || !std::isfinite(gain)) p = 1, gain = 0.0;
        rows[q - 1] = {p, gain, t[static_cast<std::size_t>(p)], t1m};
    }
}

// The published answers: entry start[m] + q - 1 is the best p for m tasks with p at most q (q = 1 ..
// largest_p(m)).
// Written under a sequence lock (odd while a refresh writes), so that readers take no lock and allocate nothing.
class answer_table {
public:
    void lay_out(int max_tasks, int capacity, bool sliced) {
        start_.assign(static_cast<std::size_t>(max_tasks) + 2, 0);
        for (int m = 1; m <= max_tasks; ++m)
            start_[static_cast<std::size_t>(m) + 1] =
                start_[static_cast<std::size_t>(m)] + largest_p(capacity, sliced, m);
        entries_ = std::vector<table_entry>(static_cast<std::size_t>(start_[static_cast<std::size_t>(max_tasks) + 1]));
    }

    std::size_t size() const noexcept { return entries_.size(); }

    std::size_t index(int m, int max_p) const noexcept {
        return static_cast<std::size_t>(start_[static_cast<std::size_t>(m)] + max_p - 1);
    }

    bool differs(const std::vector<table_row>& rows) const noexcept {
        bool changed = false;
        for (std::size_t i = 0; i < rows.size(); ++i)
            changed = changed || entries_[i].p.load(std::memory_order_relaxed) != rows[i].p;
        return changed;
    }

    // Computed first, written here inside the sequence lock (a short critical section).
    void publish(const std::vector<table_row>& rows) noexcept {
        const std::uint64_t s0 = seq_.load(std::memory_order_relaxed);
        seq_.store(s0 + 1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            entries_[i].p.store(rows[i].p, std::memory_order_relaxed);
            entries_[i].gain.store(rows[i].gain, std::memory_order_relaxed);
            entries_[i].time_s.store(rows[i].time_s, std::memory_order_relaxed);
            entries_[i].time_p1_s.store(rows[i].time_p1_s, std::memory_order_relaxed);
        }
        publications_.fetch_add(1, std::memory_order_relaxed);
        seq_.store(s0 + 2, std::memory_order_release);
    }

    // Fills a's p, gain, times and version from the entry (m, max_p), retrying while a refresh writes.
    void read(int m, int max_p, advice& a) const noexcept {
        const table_entry& entry = entries_[index(m, max_p)];
        for (;;) {
            const std::uint64_t s1 = seq_.load(std::memory_order_acquire);
            if (s1 & 1U) continue;
            a.p = entry.p.load(std::memory_order_relaxed);
            a.gain = entry.gain.load(std::memory_order_relaxed);
            a.time_s = entry.time_s.load(std::memory_order_relaxed);
            a.time_p1_s = entry.time_p1_s.load(std::memory_order_relaxed);
            a.version = publications_.load(std::memory_order_relaxed);
            std::atomic_thread_fence(std::memory_order_acquire);
            if (seq_.load(std::memory_order_relaxed) == s1) break;
        }
    }

private:
    std::vector<int> start_;
    std::vector<table_entry> entries_;
    std::atomic<std::uint64_t> seq_{0};
    std::atomic<std::uint64_t> publications_{0};
};

}  // namespace advisor_detail
using namespace advisor_detail;

struct advisor::impl {
    advisor_options options;
    scenario one_node;              // platform + application as given, restricted by restrict_to_one_node()
    int apus = 1;                   // A: accelerators of the node (a GPU's SMs)
    int capacity = 1;               // the blocks they hold: A, or A·slots on a GPU node (platform::capacity())
    accelerator_sharing share = accelerator_sharing::dedicated;  // how the tasks' off-loads share them
    bool sliced = false;            // share is time-sliced: one task's grid at a time, each up to the capacity
    bool slotted = false;           // a GPU node: capacity > A, an SM holds several blocks
    int hpu_contexts = 1;           // H
    int max_tasks = 1;              // largest m in the table
    double offload_overhead_s = 0;  // the platform's O_offload, in every observed duration
    double gap_s = 0;               // the profile's g per accelerator, in every observed duration
    gap_charge gap_charged = gap_charge::per_apu;
    double profile_offloads_per_task = 1.0;  // the profile's N (1 when it gives 0)

    // Observations.
    std::atomic<int> active_tasks{0}, busy_apus{0}, waiting_tasks{0};
    std::atomic<std::uint64_t> completed_offloads{0}, completed_tasks{0};
    std::vector<duration_bucket> durations;  // index p = 1 .. A
    // Estimates per off-load: host_gap_s live (an EWMA); the others as of the last refresh.
    std::atomic<double> host_gap_s{0.0};
    std::atomic<double> apu_s{0.0};              // accelerator time on one accelerator (a + c)
    std::atomic<double> parallel_fraction{1.0};  // a / (a + c)
    std::atomic<double> extra_gap_s{0.0};        // e
    // Exploration: completed off-loads when the last one was handed out, and the current interval
    // (explore_every, doubled after each exploration while the table keeps its answers).
    mutable std::atomic<std::uint64_t> last_probe_at{0};
    mutable std::atomic<std::uint64_t> probe_interval{0};

    answer_table table;
    std::mutex refresh_mutex;  // one refresh at a time

    impl(const platform& pl, const application& app, const std::string& file, policy pol, accelerator_sharing mode,
         const advisor_options& o)
        : options(o) {
        check_options(o);
        // A wavefront prices no off-load: the advice would be made up from overheads alone (once p=1 at 2.1e-6 s
        // for every m, with MMGP_OK).
        if (app.has_wavefront)
            throw input_error(file, "/application/wavefront",
                              "a scenario with an off-load profile (the advisor chooses p per off-load)",
                              "a wavefront application");
        one_node.name = "advisor";
        one_node.file = file;
        one_node.plat = pl;
        one_node.app = app;
        apus = pl.apus;
        capacity = static_cast<int>(pl.capacity());
        share = mode;
        sliced = mode == accelerator_sharing::time_sliced;
        slotted = capacity > apus;
        hpu_contexts = pl.hpu_contexts;
        one_node.space.m = {1, apus};
        check_table_size(file, capacity, slotted, sliced, 1);
        max_tasks = largest_task_count(one_node);
        check_table_size(file, capacity, slotted, sliced, max_tasks);
        restrict_to_one_node(one_node, max_tasks, capacity, pol, share);
        check_coverage(one_node);
        evaluator model_check(one_node, options.model);  // throws input_error when the model cannot evaluate it
        (void)model_check;
        offload_overhead_s = pl.O_offload;
        gap_s = app.g;
        gap_charged = app.g_charge;
        start_estimates(app);
        table.lay_out(max_tasks, capacity, sliced);
        durations = std::vector<duration_bucket>(static_cast<std::size_t>(apus) + 1);
        probe_interval.store(static_cast<std::uint64_t>(o.explore_every));
        publish();
    }

    void start_estimates(const application& app) {
        profile_offloads_per_task = app.N > 0 ? app.N : 1.0;
        const double a = app.T_apu / profile_offloads_per_task, c = app.C_apu / profile_offloads_per_task;
        host_gap_s.store(app.T_hpu / profile_offloads_per_task);
        apu_s.store(a + c);
        parallel_fraction.store(a + c > 0 ? a / (a + c) : 1.0);
    }

    // The off-loads per completed task, once both have been observed; the profile's N before. Tasks ended with
    // no off-load observed say nothing of N: one task end before any off-load once set N to 1 (every prediction
    // 20,000x off for pbpi-qs20).
    double offloads_per_task() const noexcept {
        const std::uint64_t t = completed_tasks.load(std::memory_order_relaxed);
        const std::uint64_t n = completed_offloads.load(std::memory_order_relaxed);
        if (t == 0 || n == 0) return profile_offloads_per_task;
        return std::max(1.0, static_cast<double>(n) / static_cast<double>(t));
    }

    // --- observations -------------------------------------------------------------------------

    // An off-load on p <= A lasting `seconds`, the n-th to complete: its duration without the overheads
    // goes into the bucket of p.
    void observe_duration(int p, double seconds, std::uint64_t n) noexcept {
        const double gap_apus = gap_charged == gap_charge::per_extra_apu ? p - 1.0 : p;
        const double y = std::max(0.0, seconds - offload_overhead_s - gap_apus * gap_s);
        duration_bucket& b = durations[static_cast<std::size_t>(p)];
        if (b.count.fetch_add(1, std::memory_order_relaxed) == 0)
            b.mean_s.store(y, std::memory_order_relaxed);
        else
            ewma(b.mean_s, y, options.smoothing);
        b.last_at.store(n, std::memory_order_relaxed);
    }

    // On a GPU node (block slots): the last moment the blocks in flight exceeded the SMs, steady-clock ns.
    std::atomic<std::int64_t> crowded_at_ns{std::numeric_limits<std::int64_t>::min()};

    static std::int64_t now_ns() noexcept {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    void mark_crowded() noexcept { crowded_at_ns.store(now_ns(), std::memory_order_relaxed); }

    // Whether an off-load that lasted `seconds` and is ending now ran with one block per SM at most: the fit's
    // form, a/p + c, is one grid's time so. On a GPU node a duration with more blocks in flight at any moment of
    // its life (`crowded_now`: at its end, its own included) is left out: the SMs' slots slowed it (f(k),
    // docs/MODEL.md §7), which the model adds again. Elsewhere (capacity = A) every duration counts.
    bool uncrowded(bool crowded_now, double seconds) noexcept {
        if (!slotted) return true;
        if (crowded_now) {
            mark_crowded();
            return false;
        }
        const double began_ns = static_cast<double>(now_ns()) - seconds * 1e9;
        return static_cast<double>(crowded_at_ns.load(std::memory_order_relaxed)) < began_ns;
    }

    // Every refresh_every completions; skipped when another thread is refreshing.
    void refresh_after(std::uint64_t n) noexcept {
        if (options.refresh_every <= 0 || n % static_cast<std::uint64_t>(options.refresh_every) != 0) return;
        std::unique_lock<std::mutex> lock(refresh_mutex, std::try_to_lock);
        if (!lock.owns_lock()) return;
        try {
            publish_locked();
        } catch (...) {
            // Allocation failure: keep the previous table.
        }
    }

    // --- refresh: fit, evaluate, publish ------------------------------------------------------

    // Re-estimates and republishes (serialised by refresh_mutex).
    void publish() {
        std::lock_guard<std::mutex> lock(refresh_mutex);
        publish_locked();
    }

    void publish_locked() {
        fit();
        std::vector<table_row> rows = best_p_table(estimated_scenario());
        // A changed answer (the estimates moved) makes exploration frequent again.
        if (table.differs(rows))
            probe_interval.store(static_cast<std::uint64_t>(options.explore_every), std::memory_order_relaxed);
        table.publish(rows);
    }

    // Buckets weigh their count (at most 1 / smoothing) times exp(-smoothing * off-loads since they were last
    // updated): recent behaviour dominates while older buckets still tell the serial part from the parallel one.
    fit_sums weighted_sums() const noexcept {
        const std::uint64_t now = completed_offloads.load(std::memory_order_relaxed);
        const double w_cap = 1.0 / options.smoothing;
        fit_sums s;
        for (int p = 1; p <= apus; ++p) {
            const duration_bucket& b = durations[static_cast<std::size_t>(p)];
            const std::uint64_t n = b.count.load(std::memory_order_relaxed);
            if (n == 0) continue;
            const std::uint64_t last = b.last_at.load(std::memory_order_relaxed);
            const double age = now > last ? static_cast<double>(now - last) : 0.0;
            const double w =
                std::max(std::min(static_cast<double>(n), w_cap) * std::exp(-options.smoothing * age), 1e-9);
            s.add(w, p, b.mean_s.load(std::memory_order_relaxed), last);
        }
        return s;
    }

    // Updates apu_s, parallel_fraction and extra_gap_s from the buckets (unchanged without observations).
    void fit() noexcept {
        const fit_sums s = weighted_sums();
        if (s.buckets == 0) return;
        apu_time_split split;
        if (!fit_over_p(s, split)) {
            const double y = durations[static_cast<std::size_t>(s.latest_p)].mean_s.load(std::memory_order_relaxed);
            split = fit_one_p(y, s.latest_p, parallel_fraction.load(std::memory_order_relaxed),
                              extra_gap_s.load(std::memory_order_relaxed));
        }
        const double a = split.parallel_s, c = split.serial_s;
        if (!std::isfinite(a) || !std::isfinite(c) || !std::isfinite(split.extra_gap_s)) return;
        extra_gap_s.store(split.extra_gap_s, std::memory_order_relaxed);
        apu_s.store(a + c, std::memory_order_relaxed);
        parallel_fraction.store(a + c > 0 ? a / (a + c) : parallel_fraction.load(std::memory_order_relaxed),
                                std::memory_order_relaxed);
    }

    // The application back from the estimates: T_hpu = N h, T_apu = N a, C_apu = N c.
    scenario estimated_scenario() const {
        scenario s = one_node;
        const double N = offloads_per_task(), t1 = apu_s.load(), fr = parallel_fraction.load();
        s.app.N = N;
        s.app.T_hpu = N * host_gap_s.load();
        s.app.T_apu = N * t1 * fr;
        s.app.C_apu = N * t1 * (1.0 - fr);
        const double ex = extra_gap_s.load();
        if (ex > 0) {
            // The extra gap costs only accelerators beyond the first: charge g per extra accelerator and move
            // the first accelerator's g (if the profile charged it) into the part that does not split.
            if (s.app.g_charge == gap_charge::per_apu) s.app.C_apu += N * gap_s;
            s.app.g = gap_s + ex;
            s.app.g_charge = gap_charge::per_extra_apu;
        }
        return s;
    }

    // The model at every (m, p) with p <= largest_p(m) (m*p <= A, or A·slots on a GPU node; p <= A·slots
    // time-sliced), under the advisor's sharing mode; for m tasks it evaluates one round of m units, so that a
    // node whose host and accelerator threads share cores (platform.cores) is seen with all m*p threads.
    std::vector<table_row> best_p_table(scenario s) const {
        std::vector<table_row> rows(table.size());
        std::vector<double> t(static_cast<std::size_t>(capacity) + 1);
        for (int m = 1; m <= max_tasks; ++m) {
            const int pmax = largest_p(capacity, sliced, m);
            s.app.units = m;
            const evaluator ev(s, options.model);
            // One row per m (no communication: restrict_to_one_node dropped it), its closed form in p.
            const row r = ev.row_of(m, 1, s.space.pol, 0.0, false, share);
            for (int p = 1; p <= pmax; ++p) t[static_cast<std::size_t>(p)] = r.time(p);
            best_p_rows(t, pmax, options.min_gain, rows.data() + table.index(m, 1));
        }
        return rows;
    }

    // --- queries ------------------------------------------------------------------------------

    advice lookup(int m, int max_p) const noexcept {
        m = std::clamp(m, 1, max_tasks);
        advice a;
        a.m = m;
        table.read(m, max_p < 1 ? 1 : std::min(max_p, largest_p(capacity, sliced, m)), a);
        a.action = a.p > 1 ? llp_action::activate : llp_action::throttle;
        return a;
    }

    // With explore_every > 0: turns `a` into the alternative p (1 against the table's p > 1, 2 against its
    // p = 1 when 2 is allowed) once no off-load at it has completed for probe_interval completions.
    void explore(advice& a, int allowed) const noexcept {
        // The alternative's durations are kept within the SMs (durations[1 .. A]): 2 needs A >= 2.
        const int alt = a.p > 1 ? 1 : (allowed >= 2 && apus >= 2 && largest_p(capacity, sliced, a.m) >= 2 ? 2 : 0);
        if (alt == 0) return;
        const std::uint64_t now = completed_offloads.load(std::memory_order_relaxed);
        std::uint64_t last = last_probe_at.load(std::memory_order_relaxed);
        const std::uint64_t seen = durations[static_cast<std::size_t>(alt)].last_at.load(std::memory_order_relaxed);
        const std::uint64_t interval = probe_interval.load(std::memory_order_relaxed);
        // One thread claims the exploration (compare-exchange); the others get the table's answer. The
        // interval doubles (up to 64 x explore_every) until a refresh changes the table.
        if (now < std::max(last, seen) + interval ||
            !last_probe_at.compare_exchange_strong(last, now, std::memory_order_relaxed))
            return;
        probe_interval.store(std::min(interval * 2, 64 * static_cast<std::uint64_t>(options.explore_every)),
                             std::memory_order_relaxed);
        a.p = alt;
        a.probe = true;
        a.action = alt > 1 ? llp_action::activate : llp_action::throttle;
        a.gain = 0.0;
        a.time_s = alt == 1 ? a.time_p1_s : 0.0;
    }
};

static scenario load_for_advisor(const std::string& name) { return load_scenario(name); }

// The sharing mode is the first the scenario searches (its search.sharing, else the platform's first), the one
// mmgp launch and mmgp tune run; the platform's first from a platform and an application.
advisor::advisor(const scenario& s, const advisor_options& opt)
    : d_(std::make_unique<impl>(s.plat, s.app, s.file, s.space.pol, searched_modes(s).front(), opt)) {}
advisor::advisor(const std::string& scenario_path_or_name, const advisor_options& opt)
    : advisor(load_for_advisor(scenario_path_or_name), opt) {}
advisor::advisor(const platform& pl, const application& app, const advisor_options& opt)
    : d_(std::make_unique<impl>(pl, app, pl.name + "+" + app.name, policy::edtlp, pl.sharing_modes().front(), opt)) {}
advisor::~advisor() = default;

void advisor::task_begin() noexcept { d_->active_tasks.fetch_add(1, std::memory_order_relaxed); }

void advisor::task_end() noexcept {
    int m = d_->active_tasks.load(std::memory_order_relaxed);
    while (m > 0 && !d_->active_tasks.compare_exchange_weak(m, m - 1, std::memory_order_relaxed)) {
    }
    d_->completed_tasks.fetch_add(1, std::memory_order_relaxed);
}

void advisor::set_active_tasks(int m) noexcept {
    if (m >= 0) d_->active_tasks.store(m, std::memory_order_relaxed);
}

// The accelerators busy stay in [0, 2^28] (A is at most 4 Mi): an end with no start, or starts of INT_MAX, once
// drove the count past the int's range and recommend() into signed overflow.
constexpr int busy_cap = 1 << 28;

void advisor::offload_start(int p) noexcept {
    if (p < 1) return;
    int busy = d_->busy_apus.load(std::memory_order_relaxed);
    int now_busy = 0;
    while (!d_->busy_apus.compare_exchange_weak(busy, now_busy = std::min(busy_cap, busy + std::min(p, busy_cap)),
                                                std::memory_order_relaxed)) {
    }
    if (d_->slotted && now_busy > d_->apus) d_->mark_crowded();
}

void advisor::offload_end(int p, double seconds) noexcept {
    if (p < 1) return;
    int busy = d_->busy_apus.load(std::memory_order_relaxed);
    while (!d_->busy_apus.compare_exchange_weak(busy, std::max(0, busy - p), std::memory_order_relaxed)) {
    }
    if (!(seconds >= 0.0) || !std::isfinite(seconds)) return;
    const std::uint64_t n = d_->completed_offloads.fetch_add(1, std::memory_order_relaxed) + 1;
    if (p <= d_->apus && d_->uncrowded(busy > d_->apus, seconds)) d_->observe_duration(p, seconds, n);
    d_->refresh_after(n);
}

void advisor::host_gap(double seconds) noexcept {
    if (seconds >= 0.0 && std::isfinite(seconds)) ewma(d_->host_gap_s, seconds, d_->options.smoothing);
}

void advisor::set_idle_apus(int n) noexcept {
    if (n >= 0) d_->busy_apus.store(d_->capacity - std::min(n, d_->capacity), std::memory_order_relaxed);
}

void advisor::set_waiting_tasks(int n) noexcept {
    if (n >= 0) d_->waiting_tasks.store(n, std::memory_order_relaxed);
}

advice advisor::recommend() const noexcept {
    const impl& d = *d_;
    const int m = d.active_tasks.load(std::memory_order_relaxed);
    // Time-sliced, the tasks' grids take turns on the whole accelerator: nothing in flight caps the next one.
    const int idle = std::clamp(d.capacity - d.busy_apus.load(std::memory_order_relaxed), 0, d.capacity);
    // In 64 bits: INT_MAX waiting tasks once overflowed waiting + 1.
    const int allowed = d.sliced ? d.capacity : static_cast<int>(std::max<std::int64_t>(
        idle / (std::int64_t{d.waiting_tasks.load(std::memory_order_relaxed)} + 1), 1));
    advice a = d.lookup(m, allowed);
    if (d.options.explore_every > 0) d.explore(a, allowed);
    return a;
}

advice advisor::recommend(int m) const noexcept { return d_->lookup(m, d_->capacity); }
advice advisor::recommend(int m, int max_p) const noexcept { return d_->lookup(m, max_p); }

void advisor::refresh() { d_->publish(); }

advisor_estimates advisor::estimates() const noexcept {
    const impl& d = *d_;
    advisor_estimates e;
    e.host_gap_s = d.host_gap_s.load();
    e.apu_s = d.apu_s.load();
    e.parallel_fraction = d.parallel_fraction.load();
    e.extra_gap_s = d.extra_gap_s.load();
    e.offloads_per_task = d.offloads_per_task();
    e.offloads = d.completed_offloads.load();
    e.tasks = d.completed_tasks.load();
    return e;
}

int advisor::apus() const noexcept { return d_->apus; }
int advisor::capacity() const noexcept { return d_->capacity; }
accelerator_sharing advisor::sharing() const noexcept { return d_->share; }
int advisor::hpu_contexts() const noexcept { return d_->hpu_contexts; }
int advisor::max_tasks() const noexcept { return d_->max_tasks; }

}  // namespace mmgp
