// Context switch: two threads pinned to one HPU context hand off with sched_yield() or a futex. Produces
// platform.T_csw (yield); the futex hand-off goes under measurements.csw_futex.
#include "harness_common.hpp"
#include "mmgp/error.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <sched.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace mmgp::calib {

using namespace detail;

measurement run_csw(const harness_options& o, csw_mode mode) {
    const std::string name = mode == csw_mode::yield ? "csw/yield" : "csw/futex";
    const int reps = reps_or(o, 7, 15);
    const int iters = o.quick ? 10000 : 20000;  // per thread; 2 x iters hand-offs per repetition
    const int cpu = hpu0(o);
    const double ovh = clock_overhead();
    // One repetition: thread 0 time-stamps every time the turn comes back to it; half of each interval is one
    // hand-off (its timer call subtracted). The median of these is robust to the occasional preemption by an
    // unrelated process on the same CPU, which a mean over the whole loop is not.
    auto one_rep = [&] {
        std::atomic<std::uint32_t> turn{0};
        std::atomic<int> ready{0};
        std::vector<double> obs;
        obs.reserve(static_cast<std::size_t>(iters));
        bool pinned = true;
        auto body = [&](std::uint32_t me) {
            bool ok = pin_current_thread(cpu);
            if (!ok) pinned = false;
            ready.fetch_add(1);
            while (ready.load() < 2) sched_yield();
            clk::time_point last = clk::now();
            for (int i = 0; i < iters; ++i) {
                if (mode == csw_mode::yield) {
                    while (turn.load(std::memory_order_acquire) != me) sched_yield();
                } else {
                    for (std::uint32_t t; (t = turn.load(std::memory_order_acquire)) != me;) futex_wait(&turn, t);
                }
                if (me == 0) {
                    clk::time_point now = clk::now();
                    if (i > 0) obs.push_back(std::max(0.0, secs(now - last) - ovh) / 2.0);
                    last = now;
                }
                turn.store(1 - me, std::memory_order_release);
                if (mode == csw_mode::futex) futex_wake(&turn);
            }
        };
        std::thread a(body, 0u), b(body, 1u);
        a.join();
        b.join();
        if (!pinned) throw mmgp::failure("context switch: cannot pin two threads to CPU " + std::to_string(cpu));
        return obs;
    };
    auto once = [&] {
        say(o, fmt::format("{}: {} x {} hand-offs on CPU {}", name, reps, 2 * iters, cpu));
        one_rep();  // warm-up
        std::vector<double> all, med;
        for (int r = 0; r < reps; ++r) {
            std::vector<double> v = one_rep();
            med.push_back(median(v));
            all.insert(all.end(), v.begin(), v.end());
        }
        measurement m = make(name, "csw", all, med);
        m.extra = {{"cpu", cpu}, {"handoffs_per_repetition", 2 * iters}, {"clock_overhead_s", ovh},
                   {"mechanism", mode == csw_mode::yield ? "sched_yield() spin on a shared flag"
                                                         : "futex wait/wake on a shared word"},
                   {"estimator", "median over hand-off pairs timed one by one, halved"}};
        return m;
    };
    return with_retries(o, once);
}

}  // namespace mmgp::calib
