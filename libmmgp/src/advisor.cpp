// The runtime advisor (mmgp/advisor.hpp) and its C API (mmgp/advisor.h).
//
// Estimation (per off-load, seconds). The duration of an off-load on p accelerators is
// y = O_offload + p*g + c + a/p (g charged (p-1) times when the profile says so): a splits across
// the p accelerators, c does not. Each observation updates an exponentially weighted moving average
// (EWMA) of y for its p (one small bucket per p). A refresh fits (c, a) by weighted least squares
// over the buckets, a bucket weighing its sample count times exp(-smoothing * off-loads since it was
// last updated), so recent behaviour dominates while older buckets still tell the serial part from
// the parallel one; with a single bucket the split keeps the previous estimate. When the durations
// grow with p (a < 0: nothing splits, and every extra accelerator costs — signalling and waking
// threads on a time-shared machine, say), the fit is y = c + e*(p-1) instead, e >= 0 an extra gap per
// additional accelerator that the evaluation adds to g. Exploration (explore_every) makes sure a
// second p is observed now and then. The host gap h is an EWMA. A refresh turns (h, a, c, N) back
// into an application (T_hpu = N h, T_apu = N a, C_apu = N c), evaluates the model for every
// (m, p) with m*p <= A — a round of m units, one per active task, so that threads sharing cores
// (platform.cores) are all counted — and republishes the table of the best p for every
// (m, largest allowed p) under a sequence lock.
#include "mmgp/advisor.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "mmgp/advisor.h"
#include "mmgp/error.hpp"
#include "mmgp/search.hpp"

namespace mmgp {

namespace {

struct entry {
    std::atomic<int> p{1};
    std::atomic<double> gain{0.0}, time{0.0}, time1{0.0};
};

void ewma(std::atomic<double>& x, double y, double w) noexcept {
    double old = x.load(std::memory_order_relaxed);
    while (!x.compare_exchange_weak(old, old + w * (y - old), std::memory_order_relaxed)) {
    }
}

}  // namespace

struct advisor::impl {
    advisor_options opt;
    scenario base;           // platform + application as given (space rewritten)
    int A = 1, H = 1, M = 1;  // accelerators, host contexts, largest m in the table
    double O = 0.0, g = 0.0;  // per-off-load overheads from the platform and the profile
    double N0 = 1.0;          // the profile's N (1 when it gives 0)

    // Observations.
    std::atomic<int> active{0}, busy{0}, waiting{0};
    std::atomic<double> h{0.0}, T1{0.0}, f{1.0};  // T1 and f: as of the last refresh
    std::atomic<double> e{0.0};                     // extra gap per additional accelerator, as of the last refresh
    gap_charge charge = gap_charge::per_apu;
    mutable std::atomic<std::uint64_t> probe_at{0}; // completed off-loads when the last exploration was handed out
    mutable std::atomic<std::uint64_t> probe_gap{0};// current exploration interval: explore_every, doubled after
                                                    // each exploration while the table keeps its answers
    std::atomic<std::uint64_t> offloads{0}, tasks{0};
    struct bucket {
        std::atomic<double> mean{0.0};
        std::atomic<std::uint64_t> n{0}, last{0};
    };
    std::vector<bucket> buckets;  // index p = 1..A

    // Published table: offset[m] .. offset[m] + A/m - 1 holds the best p for max_p = 1 .. A/m.
    std::vector<int> offset;
    std::vector<entry> table;
    std::atomic<std::uint64_t> seq{0};
    std::atomic<std::uint64_t> version{0};
    std::mutex refresh_mu;

    impl(const platform& pl, const application& app, const std::string& file, policy pol, const advisor_options& o)
        : opt(o) {
        if (!(o.smoothing > 0.0 && o.smoothing <= 1.0))
            throw input_error("advisor options", "/smoothing", "a weight in (0, 1]", std::to_string(o.smoothing));
        if (!(o.min_gain >= 0.0 && o.min_gain < 1.0))
            throw input_error("advisor options", "/min_gain", "a fraction in [0, 1)", std::to_string(o.min_gain));
        if (o.refresh_every < 0)
            throw input_error("advisor options", "/refresh_every", "a count >= 0", std::to_string(o.refresh_every));
        if (o.explore_every < 0)
            throw input_error("advisor options", "/explore_every", "a count >= 0", std::to_string(o.explore_every));
        base.name = "advisor";
        base.file = file;
        base.plat = pl;
        base.app = app;
        A = pl.apus;
        H = pl.hpu_contexts;
        base.space.m = {1, A};
        const int m_top = static_cast<int>(bounds(base).m_hi);  // min(A, max_processes_per_node)
        M = 1;
        while (M < m_top && (pl.alpha.kind != m_function::form::table || pl.alpha.covers(M + 1))) ++M;
        // One task = one unit on one node (a refresh evaluates m units for m active tasks: one round);
        // communication does not depend on p and is left out.
        base.app.decomp = decomposition::task;
        base.app.scale = scaling::strong;
        base.app.units = 1;
        base.app.comm.clear();
        base.plat.nodes = 1;
        base.space.m = {1, M};
        base.space.p = {1, A};
        base.space.nodes = {1, 1};
        base.space.pol = pol;
        check_coverage(base);
        evaluator probe(base, opt.model);  // throws input_error when the model cannot evaluate it
        (void)probe;
        O = pl.O_offload;
        g = app.g;
        charge = app.g_charge;
        N0 = app.N > 0 ? app.N : 1.0;
        const double a = app.T_apu / N0, c = app.C_apu / N0;
        h.store(app.T_hpu / N0);
        T1.store(a + c);
        f.store(a + c > 0 ? a / (a + c) : 1.0);
        offset.assign(static_cast<std::size_t>(M) + 2, 0);
        for (int m = 1; m <= M; ++m) offset[static_cast<std::size_t>(m) + 1] = offset[static_cast<std::size_t>(m)] + A / m;
        table = std::vector<entry>(static_cast<std::size_t>(offset[static_cast<std::size_t>(M) + 1]));
        buckets = std::vector<bucket>(static_cast<std::size_t>(A) + 1);
        probe_gap.store(static_cast<std::uint64_t>(o.explore_every));
        publish();
    }

    double offloads_per_task() const noexcept {
        std::uint64_t t = tasks.load(std::memory_order_relaxed);
        if (t == 0) return N0;
        return std::max(1.0, static_cast<double>(offloads.load(std::memory_order_relaxed)) / static_cast<double>(t));
    }

    // Re-estimates and republishes (serialised by refresh_mu).
    void publish() {
        std::lock_guard<std::mutex> lock(refresh_mu);
        publish_locked();
    }

    // Weighted least squares of y = c + a * (1/p) over the buckets; updates T1 = a + c and f = a / T1.
    void fit() noexcept {
        const std::uint64_t now = offloads.load(std::memory_order_relaxed);
        const double w_cap = 1.0 / opt.smoothing;
        double S = 0, Sx = 0, Sxx = 0, Sy = 0, Sxy = 0, Syy = 0, Sz = 0, Szz = 0, Szy = 0;  // x = 1/p, z = p - 1
        int used = 0, latest = 0;
        std::uint64_t latest_at = 0;
        for (int p = 1; p <= A; ++p) {
            const bucket& b = buckets[static_cast<std::size_t>(p)];
            const std::uint64_t n = b.n.load(std::memory_order_relaxed);
            if (n == 0) continue;
            const std::uint64_t last = b.last.load(std::memory_order_relaxed);
            const double age = now > last ? static_cast<double>(now - last) : 0.0;
            const double w = std::max(std::min(static_cast<double>(n), w_cap) * std::exp(-opt.smoothing * age), 1e-9);
            const double x = 1.0 / p, y = b.mean.load(std::memory_order_relaxed);
            const double z = p - 1.0;
            S += w, Sx += w * x, Sxx += w * x * x, Sy += w * y, Sxy += w * x * y, Syy += w * y * y;
            Sz += w * z, Szz += w * z * z, Szy += w * z * y;
            ++used;
            if (latest == 0 || last >= latest_at) latest = p, latest_at = last;
        }
        if (used == 0) return;
        double a, c, ex = e.load(std::memory_order_relaxed);
        const double det = S * Sxx - Sx * Sx;
        if (used >= 2 && det > 1e-12 * S * Sxx) {
            a = (S * Sxy - Sx * Sy) / det;
            c = (Sy - a * Sx) / S;
            ex = 0.0;
            if (a < 0) {
                // Longer with more accelerators: nothing splits; fit y = c + e*(p-1), e >= 0.
                a = 0;
                const double dz = S * Szz - Sz * Sz;
                ex = dz > 0 ? (S * Szy - Sz * Sy) / dz : 0.0;
                c = (Sy - ex * Sz) / S;
                if (ex < 0) ex = 0, c = Sy / S;
                if (c < 0) c = 0, ex = Szz > 0 ? Szy / Szz : 0.0;
            } else if (c < 0) {
                c = 0, a = Sxy / Sxx;
            }
        } else {
            // One p observed: its duration fixes T1; the split keeps the previous estimate.
            const double fr = f.load(std::memory_order_relaxed);
            const double y = buckets[static_cast<std::size_t>(latest)].mean.load(std::memory_order_relaxed);
            const double t1 = y / (fr / latest + (1.0 - fr));
            a = t1 * fr;
            c = t1 - a;
        }
        if (!std::isfinite(a) || !std::isfinite(c) || !std::isfinite(ex)) return;
        e.store(ex, std::memory_order_relaxed);
        T1.store(a + c, std::memory_order_relaxed);
        f.store(a + c > 0 ? a / (a + c) : f.load(std::memory_order_relaxed), std::memory_order_relaxed);
    }

    void publish_locked() {
        fit();
        scenario s = base;
        const double N = offloads_per_task(), t1 = T1.load(), fr = f.load();
        s.app.N = N;
        s.app.T_hpu = N * h.load();
        s.app.T_apu = N * t1 * fr;
        s.app.C_apu = N * t1 * (1.0 - fr);
        const double ex = e.load();
        if (ex > 0) {
            // The extra gap costs only accelerators beyond the first: charge g per extra accelerator and move
            // the first accelerator's g (if the profile charged it) into the part that does not split.
            if (s.app.g_charge == gap_charge::per_apu) s.app.C_apu += N * g;
            s.app.g = g + ex;
            s.app.g_charge = gap_charge::per_extra_apu;
        }
        std::vector<double> t(static_cast<std::size_t>(A) + 1);
        // Compute first, then write the table inside the sequence lock (a short critical section).
        struct row {
            int p;
            double gain, time, time1;
        };
        std::vector<row> rows(table.size());
        for (int m = 1; m <= M; ++m) {
            const int pmax = A / m;
            // One round: each of the m active tasks runs one unit at the same time, so that a node whose
            // host and accelerator threads share cores (platform.cores) is seen with all m*p threads.
            s.app.units = m;
            evaluator ev(s, opt.model);
            for (int p = 1; p <= pmax; ++p) t[static_cast<std::size_t>(p)] = ev({m, p, 1, s.space.pol}).time_s;
            const double t1m = t[1];
            int best = 1;
            for (int q = 1; q <= pmax; ++q) {
                if (t[static_cast<std::size_t>(q)] < t[static_cast<std::size_t>(best)]) best = q;
                double gain = t1m > 0 ? (t1m - t[static_cast<std::size_t>(best)]) / t1m : 0.0;
                int p = best;
                if (!(gain >= opt.min_gain) || !std::isfinite(gain)) p = 1, gain = 0.0;
                rows[static_cast<std::size_t>(offset[static_cast<std::size_t>(m)] + q - 1)] = {
                    p, gain, t[static_cast<std::size_t>(p)], t1m};
            }
        }
        // A changed answer (the estimates moved) makes exploration frequent again.
        bool changed = false;
        for (std::size_t i = 0; i < rows.size(); ++i) changed = changed || table[i].p.load(std::memory_order_relaxed) != rows[i].p;
        if (changed) probe_gap.store(static_cast<std::uint64_t>(opt.explore_every), std::memory_order_relaxed);
        const std::uint64_t s0 = seq.load(std::memory_order_relaxed);
        seq.store(s0 + 1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            table[i].p.store(rows[i].p, std::memory_order_relaxed);
            table[i].gain.store(rows[i].gain, std::memory_order_relaxed);
            table[i].time.store(rows[i].time, std::memory_order_relaxed);
            table[i].time1.store(rows[i].time1, std::memory_order_relaxed);
        }
        version.fetch_add(1, std::memory_order_relaxed);
        seq.store(s0 + 2, std::memory_order_release);
    }

    advice lookup(int m, int max_p) const noexcept {
        m = std::clamp(m, 1, M);
        const int pmax = A / m;
        const int q = max_p < 1 ? 1 : std::min(max_p, pmax);
        const entry& e = table[static_cast<std::size_t>(offset[static_cast<std::size_t>(m)] + q - 1)];
        advice a;
        a.m = m;
        for (;;) {
            const std::uint64_t s1 = seq.load(std::memory_order_acquire);
            if (s1 & 1U) continue;
            a.p = e.p.load(std::memory_order_relaxed);
            a.gain = e.gain.load(std::memory_order_relaxed);
            a.time_s = e.time.load(std::memory_order_relaxed);
            a.time_p1_s = e.time1.load(std::memory_order_relaxed);
            a.version = version.load(std::memory_order_relaxed);
            std::atomic_thread_fence(std::memory_order_acquire);
            if (seq.load(std::memory_order_relaxed) == s1) break;
        }
        a.action = a.p > 1 ? llp_action::activate : llp_action::throttle;
        return a;
    }
};

static scenario load_for_advisor(const std::string& name) { return load_scenario(name); }

advisor::advisor(const scenario& s, const advisor_options& opt)
    : d_(std::make_unique<impl>(s.plat, s.app, s.file, s.space.pol, opt)) {}
advisor::advisor(const std::string& scenario_path_or_name, const advisor_options& opt)
    : advisor(load_for_advisor(scenario_path_or_name), opt) {}
advisor::advisor(const platform& pl, const application& app, const advisor_options& opt)
    : d_(std::make_unique<impl>(pl, app, pl.name + "+" + app.name, policy::edtlp, opt)) {}
advisor::~advisor() = default;

void advisor::task_begin() noexcept { d_->active.fetch_add(1, std::memory_order_relaxed); }

void advisor::task_end() noexcept {
    int m = d_->active.load(std::memory_order_relaxed);
    while (m > 0 && !d_->active.compare_exchange_weak(m, m - 1, std::memory_order_relaxed)) {
    }
    d_->tasks.fetch_add(1, std::memory_order_relaxed);
}

void advisor::set_active_tasks(int m) noexcept {
    if (m >= 0) d_->active.store(m, std::memory_order_relaxed);
}

void advisor::offload_start(int p) noexcept {
    if (p >= 1) d_->busy.fetch_add(p, std::memory_order_relaxed);
}

void advisor::offload_end(int p, double seconds) noexcept {
    if (p < 1) return;
    d_->busy.fetch_sub(p, std::memory_order_relaxed);
    if (!(seconds >= 0.0) || !std::isfinite(seconds)) return;
    impl& d = *d_;
    const std::uint64_t n = d.offloads.fetch_add(1, std::memory_order_relaxed) + 1;
    if (p <= d.A) {
        const double gap_apus = d.charge == gap_charge::per_extra_apu ? p - 1.0 : p;
        const double y = std::max(0.0, seconds - d.O - gap_apus * d.g);
        impl::bucket& b = d.buckets[static_cast<std::size_t>(p)];
        if (b.n.fetch_add(1, std::memory_order_relaxed) == 0)
            b.mean.store(y, std::memory_order_relaxed);
        else
            ewma(b.mean, y, d.opt.smoothing);
        b.last.store(n, std::memory_order_relaxed);
    }
    if (d.opt.refresh_every > 0 && n % static_cast<std::uint64_t>(d.opt.refresh_every) == 0) {
        std::unique_lock<std::mutex> lock(d.refresh_mu, std::try_to_lock);
        if (!lock.owns_lock()) return;  // another thread is refreshing
        try {
            d.publish_locked();
        } catch (...) {
            // Allocation failure: keep the previous table.
        }
    }
}

void advisor::host_gap(double seconds) noexcept {
    if (seconds >= 0.0 && std::isfinite(seconds)) ewma(d_->h, seconds, d_->opt.smoothing);
}

void advisor::set_idle_apus(int n) noexcept {
    if (n >= 0) d_->busy.store(d_->A - std::min(n, d_->A), std::memory_order_relaxed);
}

void advisor::set_waiting_tasks(int n) noexcept {
    if (n >= 0) d_->waiting.store(n, std::memory_order_relaxed);
}

advice advisor::recommend() const noexcept {
    const impl& d = *d_;
    const int m = d.active.load(std::memory_order_relaxed);
    const int idle = std::clamp(d.A - d.busy.load(std::memory_order_relaxed), 0, d.A);
    const int share = std::max(idle / (d.waiting.load(std::memory_order_relaxed) + 1), 1);
    advice a = d.lookup(m, share);
    if (d.opt.explore_every > 0) {
        // The alternative: p = 1 against the table's p > 1, or p = 2 against its p = 1 (when 2 is allowed).
        const int alt = a.p > 1 ? 1 : (share >= 2 && d.A / a.m >= 2 ? 2 : 0);
        if (alt > 0) {
            const std::uint64_t now = d.offloads.load(std::memory_order_relaxed);
            std::uint64_t last = d.probe_at.load(std::memory_order_relaxed);
            const std::uint64_t seen = d.buckets[static_cast<std::size_t>(alt)].last.load(std::memory_order_relaxed);
            const std::uint64_t gap = d.probe_gap.load(std::memory_order_relaxed);
            // One thread claims the exploration (compare-exchange); the others get the table's answer. The
            // interval doubles (up to 64 x explore_every) until a refresh changes the table.
            if (now >= std::max(last, seen) + gap &&
                d.probe_at.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
                d.probe_gap.store(std::min(gap * 2, 64 * static_cast<std::uint64_t>(d.opt.explore_every)),
                                  std::memory_order_relaxed);
                a.p = alt;
                a.probe = true;
                a.action = alt > 1 ? llp_action::activate : llp_action::throttle;
                a.gain = 0.0;
                a.time_s = alt == 1 ? a.time_p1_s : 0.0;
            }
        }
    }
    return a;
}

advice advisor::recommend(int m) const noexcept { return d_->lookup(m, d_->A); }
advice advisor::recommend(int m, int max_p) const noexcept { return d_->lookup(m, max_p); }

void advisor::refresh() { d_->publish(); }

advisor_estimates advisor::estimates() const noexcept {
    const impl& d = *d_;
    advisor_estimates e;
    e.host_gap_s = d.h.load();
    e.apu_s = d.T1.load();
    e.parallel_fraction = d.f.load();
    e.extra_gap_s = d.e.load();
    e.offloads_per_task = d.offloads_per_task();
    e.offloads = d.offloads.load();
    e.tasks = d.tasks.load();
    return e;
}

int advisor::apus() const noexcept { return d_->A; }
int advisor::hpu_contexts() const noexcept { return d_->H; }
int advisor::max_tasks() const noexcept { return d_->M; }

}  // namespace mmgp

// --- C API --------------------------------------------------------------------------------------

struct mmgp_advisor {
    mmgp::advisor cpp;
    template <class... A>
    explicit mmgp_advisor(A&&... a) : cpp(std::forward<A>(a)...) {}
};

namespace {

void set_err(char* err, size_t size, const char* msg) noexcept {
    if (!err || size == 0) return;
    std::size_t n = std::min(std::strlen(msg), size - 1);
    std::memcpy(err, msg, n);
    err[n] = '\0';
}

int to_options(const mmgp_advisor_options* in, mmgp::advisor_options& out) noexcept {
    if (!in) return MMGP_OK;
    if (in->model != MMGP_MODEL_EQ11 && in->model != MMGP_MODEL_MMGP) return MMGP_E_INVALID_ARGUMENT;
    out.model = in->model == MMGP_MODEL_EQ11 ? mmgp::model_kind::eq11 : mmgp::model_kind::mmgp;
    out.smoothing = in->smoothing;
    out.min_gain = in->min_gain;
    out.refresh_every = in->refresh_every;
    return MMGP_OK;
}

template <class Make>
int create(const mmgp_advisor_options* options, mmgp_advisor** out, char* err, size_t err_size, Make make) noexcept {
    set_err(err, err_size, "");
    if (!out) {
        set_err(err, err_size, "out: expected a pointer to a handle, found NULL");
        return MMGP_E_INVALID_ARGUMENT;
    }
    *out = nullptr;
    mmgp::advisor_options opt;
    if (to_options(options, opt) != MMGP_OK) {
        set_err(err, err_size, "options.model: expected MMGP_MODEL_EQ11 or MMGP_MODEL_MMGP");
        return MMGP_E_INVALID_ARGUMENT;
    }
    try {
        *out = make(opt);
        return MMGP_OK;
    } catch (const mmgp::error& e) {
        set_err(err, err_size, e.what());
        return MMGP_E_INPUT;
    } catch (const std::bad_alloc&) {
        set_err(err, err_size, "out of memory");
        return MMGP_E_NO_MEMORY;
    } catch (const std::exception& e) {
        set_err(err, err_size, e.what());
        return MMGP_E_INTERNAL;
    } catch (...) {
        set_err(err, err_size, "unknown error");
        return MMGP_E_INTERNAL;
    }
}

void to_c(const mmgp::advice& in, mmgp_advice* out) noexcept {
    out->m = in.m;
    out->p = in.p;
    out->action = static_cast<int>(in.action);
    out->gain = in.gain;
    out->time_s = in.time_s;
    out->time_p1_s = in.time_p1_s;
    out->version = in.version;
}

}  // namespace

extern "C" {

unsigned mmgp_advisor_version(void) { return MMGP_ADVISOR_VERSION; }

const char* mmgp_advisor_status_string(int status) {
    switch (status) {
        case MMGP_OK: return "ok";
        case MMGP_E_INVALID_ARGUMENT: return "invalid argument";
        case MMGP_E_INPUT: return "bad input: the profile cannot be read or evaluated";
        case MMGP_E_NO_MEMORY: return "out of memory";
        case MMGP_E_INTERNAL: return "internal error";
        default: return "unknown status";
    }
}

mmgp_advisor_options mmgp_advisor_options_default(void) {
    mmgp::advisor_options d;
    return {MMGP_MODEL_MMGP, d.smoothing, d.min_gain, d.refresh_every};
}

int mmgp_advisor_create(const char* scenario, const mmgp_advisor_options* options, mmgp_advisor** out, char* err,
                        size_t err_size) {
    if (!scenario) {
        if (out) *out = nullptr;
        set_err(err, err_size, "scenario: expected a path or bundled name, found NULL");
        return MMGP_E_INVALID_ARGUMENT;
    }
    return create(options, out, err, err_size,
                  [&](const mmgp::advisor_options& o) { return new mmgp_advisor(std::string(scenario), o); });
}

int mmgp_advisor_create_from(const char* platform, const char* application, const mmgp_advisor_options* options,
                             mmgp_advisor** out, char* err, size_t err_size) {
    if (!platform || !application) {
        if (out) *out = nullptr;
        set_err(err, err_size, "platform, application: expected paths or bundled names, found NULL");
        return MMGP_E_INVALID_ARGUMENT;
    }
    return create(options, out, err, err_size, [&](const mmgp::advisor_options& o) {
        return new mmgp_advisor(mmgp::load_platform(platform), mmgp::load_application(application), o);
    });
}

void mmgp_advisor_destroy(mmgp_advisor* advisor) { delete advisor; }

#define MMGP_CHECK_HANDLE(a) \
    if (!(a)) return MMGP_E_INVALID_ARGUMENT

int mmgp_advisor_task_begin(mmgp_advisor* a) {
    MMGP_CHECK_HANDLE(a);
    a->cpp.task_begin();
    return MMGP_OK;
}
int mmgp_advisor_task_end(mmgp_advisor* a) {
    MMGP_CHECK_HANDLE(a);
    a->cpp.task_end();
    return MMGP_OK;
}
int mmgp_advisor_set_active_tasks(mmgp_advisor* a, int m) {
    MMGP_CHECK_HANDLE(a);
    if (m < 0) return MMGP_E_INVALID_ARGUMENT;
    a->cpp.set_active_tasks(m);
    return MMGP_OK;
}
int mmgp_advisor_offload_start(mmgp_advisor* a, int p) {
    MMGP_CHECK_HANDLE(a);
    if (p < 1) return MMGP_E_INVALID_ARGUMENT;
    a->cpp.offload_start(p);
    return MMGP_OK;
}
int mmgp_advisor_offload_end(mmgp_advisor* a, int p, double seconds) {
    MMGP_CHECK_HANDLE(a);
    if (p < 1 || !(seconds >= 0.0) || !std::isfinite(seconds)) return MMGP_E_INVALID_ARGUMENT;
    a->cpp.offload_end(p, seconds);
    return MMGP_OK;
}
int mmgp_advisor_host_gap(mmgp_advisor* a, double seconds) {
    MMGP_CHECK_HANDLE(a);
    if (!(seconds >= 0.0) || !std::isfinite(seconds)) return MMGP_E_INVALID_ARGUMENT;
    a->cpp.host_gap(seconds);
    return MMGP_OK;
}
int mmgp_advisor_set_idle_apus(mmgp_advisor* a, int n) {
    MMGP_CHECK_HANDLE(a);
    if (n < 0) return MMGP_E_INVALID_ARGUMENT;
    a->cpp.set_idle_apus(n);
    return MMGP_OK;
}
int mmgp_advisor_set_waiting_tasks(mmgp_advisor* a, int n) {
    MMGP_CHECK_HANDLE(a);
    if (n < 0) return MMGP_E_INVALID_ARGUMENT;
    a->cpp.set_waiting_tasks(n);
    return MMGP_OK;
}

int mmgp_advisor_recommend(const mmgp_advisor* a, mmgp_advice* out) {
    if (!a || !out) return MMGP_E_INVALID_ARGUMENT;
    to_c(a->cpp.recommend(), out);
    return MMGP_OK;
}

int mmgp_advisor_recommend_for(const mmgp_advisor* a, int m, int max_p, mmgp_advice* out) {
    if (!a || !out || m < 1) return MMGP_E_INVALID_ARGUMENT;
    to_c(max_p <= 0 ? a->cpp.recommend(m) : a->cpp.recommend(m, max_p), out);
    return MMGP_OK;
}

int mmgp_advisor_refresh(mmgp_advisor* a) {
    MMGP_CHECK_HANDLE(a);
    try {
        a->cpp.refresh();
        return MMGP_OK;
    } catch (const std::bad_alloc&) {
        return MMGP_E_NO_MEMORY;
    } catch (...) {
        return MMGP_E_INTERNAL;
    }
}

int mmgp_advisor_get_estimates(const mmgp_advisor* a, mmgp_advisor_estimates* out) {
    if (!a || !out) return MMGP_E_INVALID_ARGUMENT;
    mmgp::advisor_estimates e = a->cpp.estimates();
    *out = {e.host_gap_s, e.apu_s, e.parallel_fraction, e.offloads_per_task, e.offloads, e.tasks};
    return MMGP_OK;
}

}  // extern "C"
