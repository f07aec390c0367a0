// Host contention alpha(m): wall time of m threads each multiplying its own matrices (sizes 100..500) on the
// HPU contexts, against one thread alone. Produces platform.alpha (a linear fit in m/H, or a constant).
#include "harness_common.hpp"
#include "mmgp/error.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

namespace mmgp::calib {

using namespace detail;

namespace {

// The measured work, left out of a sanitizer's instrumentation: under AddressSanitizer or ThreadSanitizer every load
// of this loop was checked (each thread's own matrices, indices bounded by n), which made the sanitized builds'
// `calibrate` 7 to 16 times slower in this step alone and measured the sanitizer's contention, not the host's. The
// callers, the threads and the allocations stay instrumented.
#if defined(__GNUC__) || defined(__clang__)
__attribute__((no_sanitize("address", "thread", "undefined")))
#endif
void matmul(const double* __restrict a, const double* __restrict b, double* __restrict c, int n) {
    const std::size_t nn = static_cast<std::size_t>(n) * n;
    for (std::size_t i = 0; i < nn; ++i) c[i] = 0.0;
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < n; ++k) {
            double aik = a[static_cast<std::size_t>(i) * n + k];
            const double* bk = b + static_cast<std::size_t>(k) * n;
            double* ci = c + static_cast<std::size_t>(i) * n;
            for (int j = 0; j < n; ++j) ci[j] += aik * bk[j];
        }
}

std::atomic<double> g_sink{0};

/// Wall time for `threads` threads, thread j pinned to cpus[j % cpus.size()], each multiplying its own n x n
/// matrices once, from a common start to the last finish.
double matmul_wall(const std::vector<int>& cpus, int threads, int n) {
    clk::time_point t0;
    std::barrier sync(threads, [&]() noexcept { t0 = clk::now(); });
    std::vector<clk::time_point> end(static_cast<std::size_t>(threads));
    std::vector<std::thread> ts;
    for (int j = 0; j < threads; ++j)
        ts.emplace_back([&, j] {
            pin_current_thread(cpus[static_cast<std::size_t>(j) % cpus.size()]);
            std::size_t nn = static_cast<std::size_t>(n) * n;
            std::vector<double> a(nn), b(nn), c(nn);
            for (std::size_t i = 0; i < nn; ++i) {
                a[i] = 1.0 + static_cast<double>(i % 7) * 0.25;
                b[i] = 2.0 - static_cast<double>(i % 5) * 0.125;
            }
            sync.arrive_and_wait();
            matmul(a.data(), b.data(), c.data(), n);
            end[static_cast<std::size_t>(j)] = clk::now();
            g_sink.store(c[nn / 2], std::memory_order_relaxed);
        });
    for (auto& t : ts) t.join();
    return secs(*std::max_element(end.begin(), end.end()) - t0);
}

}  // namespace

static alpha_result alpha_once(const harness_options& o) {
    alpha_result res;
    const std::vector<int>& cpus = o.r.hpu;
    if (cpus.empty()) throw mmgp::failure("no HPU context");
    const int H = static_cast<int>(cpus.size());
    res.H = H;
    res.sizes = o.quick ? std::vector<int>{100, 200, 300} : std::vector<int>{100, 200, 300, 400, 500};
    const int reps = reps_or(o, 3, 3);
    const int kmax = 4;
    std::vector<int> ms;
    if (H > 2) ms.push_back(2);
    if (H >= 6) ms.push_back(H / 2);
    for (int k = 1; k <= kmax; ++k)
        if (k * H >= 2) ms.push_back(k * H);
    say(o, fmt::format("alpha: matrix multiply {}..{}, m = {}..{} threads on {} HPU context(s), {} repetitions",
                       res.sizes.front(), res.sizes.back(), ms.front(), ms.back(), H, reps));
    matmul_wall(cpus, H, res.sizes.front());  // warm-up
    // obs[m][rep][size]
    std::vector<std::vector<double>> all(ms.size()), per_rep(ms.size());
    std::vector<std::vector<double>> t1s(res.sizes.size());
    for (int r = 0; r < reps; ++r) {
        std::vector<std::vector<double>> this_rep(ms.size());
        for (std::size_t s = 0; s < res.sizes.size(); ++s) {
            int n = res.sizes[s];
            // Least-disturbed times (the fastest of a few runs): another process on the machine slows a run
            // down, it never speeds it up.
            double t1 = std::min({matmul_wall({cpus.front()}, 1, n), matmul_wall({cpus.front()}, 1, n),
                                  matmul_wall({cpus.front()}, 1, n)});
            t1s[s].push_back(t1);
            for (std::size_t i = 0; i < ms.size(); ++i) {
                int m = ms[i];
                double w = std::min(matmul_wall(cpus, m, n), matmul_wall(cpus, m, n));
                double k = std::max(1.0, static_cast<double>(m) / H);  // threads per context: time sharing, not contention
                double a = w / (k * t1);
                this_rep[i].push_back(a);
                all[i].push_back(a);
            }
        }
        for (std::size_t i = 0; i < ms.size(); ++i) per_rep[i].push_back(median(this_rep[i]));
        say(o, fmt::format("alpha: repetition {}/{} done", r + 1, reps));
    }
    for (std::size_t s = 0; s < res.sizes.size(); ++s) res.t1.push_back(median(t1s[s]));
    std::vector<double> x, y;
    for (std::size_t i = 0; i < ms.size(); ++i) {
        measurement m = make(fmt::format("alpha/m={}", ms[i]), "alpha", all[i], per_rep[i]);
        m.unit = "factor";
        m.value = m.reps.median;
        m.extra = {{"m", ms[i]}, {"threads_per_context", std::max(1.0, static_cast<double>(ms[i]) / H)}};
        if (m.reps.cv > o.cv_threshold) {
            m.flagged = true;
            m.warning = fmt::format("noisy: CV {:.1f} % above the {:.0f} % threshold", 100 * m.reps.cv,
                                    100 * o.cv_threshold);
        }
        x.push_back(static_cast<double>(ms[i]) / H);
        y.push_back(m.value);
        res.per_m.push_back(std::move(m));
    }
    // Fit on the quiet points when at least two are quiet: one disturbed point would tilt the line.
    std::vector<double> xq, yq;
    for (std::size_t i = 0; i < x.size(); ++i)
        if (!res.per_m[i].flagged) {
            xq.push_back(x[i]);
            yq.push_back(y[i]);
        }
    if (xq.size() >= 2) {
        x = xq;
        y = yq;
    }
    res.fitted_m.clear();
    for (double xi : x) res.fitted_m.push_back(static_cast<int>(std::lround(xi * H)));
    res.constant = median(y);
    res.linear = false;
    if (x.size() >= 2) {
        res.fit = fit_line(x, y);
        res.linear = res.fit.slope >= 0 && res.fit.intercept + res.fit.slope * (2.0 / H) > 0;
    }
    return res;
}

alpha_result run_alpha(const harness_options& o) { return retry_all(o, "alpha", alpha_once, &alpha_result::per_m); }

}  // namespace mmgp::calib
