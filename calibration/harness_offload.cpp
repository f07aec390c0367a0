// Off-load round trip: an HPU thread signals an APU thread pinned to another core through a cache-line mailbox and
// waits for its answer, spinning or blocking on a futex. Produces platform.O_offload (spin); with --time-shared,
// platform.T_wake = (futex - spin) / 2 from measurements.offload_futex and offload_spin. The round trips themselves
// (run_offload_with) take any started backend: the GPU harness (calibration/gpu/gpu_backend_section.cpp) times its
// CUDA backends' with them.
#include "harness_common.hpp"
#include "mmgp/error.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mmgp::calib {

using namespace detail;

std::size_t spin_round_trips_per_rep(const harness_options& o) { return o.quick ? 20000 : 50000; }

measurement run_offload(const harness_options& o, wait_mode mode) {
    pin_guard pin(hpu0(o));
    auto be = make_host_thread_backend(mode, 4096);
    be->start({apu0(o)}, 1);
    measurement m = run_offload_with(o, *be, mode == wait_mode::spin ? "offload/spin" : "offload/futex",
                                     mode == wait_mode::spin ? spin_round_trips_per_rep(o) : 20000);
    m.extra["apu_cpu"] = apu0(o);
    return m;
}

measurement run_offload_with(const harness_options& o, apu_backend& be, const std::string& name, std::size_t per_rep) {
    const int reps = reps_or(o, 5, 10);
    const double rep_cap_s = o.quick ? 0.4 : 1.5;  // a blocking round trip can be slow: cap the time per repetition
    pin_guard pin(hpu0(o));
    const double ovh = clock_overhead();
    std::uint32_t token = 1;
    auto trip = [&] {
        auto t0 = clk::now();
        be.signal(0, token);
        std::uint32_t a = be.wait(0);
        auto t1 = clk::now();
        if (a != token + 1) throw mmgp::failure("off-load: wrong answer from the APU");
        ++token;
        return std::max(0.0, secs(t1 - t0) - ovh);
    };
    auto once = [&] {
        say(o, fmt::format("{}: {} x {} round trips", name, reps, per_rep));
        for (int i = 0; i < 2000; ++i) trip();  // warm-up, discarded
        std::vector<double> all, med;
        all.reserve(per_rep * static_cast<std::size_t>(reps));
        for (int r = 0; r < reps; ++r) {
            std::vector<double> one;
            one.reserve(per_rep);
            auto start = clk::now();
            for (std::size_t i = 0; i < per_rep; ++i) {
                one.push_back(trip());
                if ((i & 1023) == 1023 && secs(clk::now() - start) > rep_cap_s) break;
            }
            med.push_back(median(one));
            all.insert(all.end(), one.begin(), one.end());
        }
        measurement m = make(name, "offload", all, med);
        m.extra = {{"backend", be.name()}, {"hpu_cpu", hpu0(o)}, {"payload_bytes", 4},
                   {"clock_overhead_s", ovh}, {"pinned", pin.ok()}};
        return m;
    };
    return with_retries(o, once);
}

}  // namespace mmgp::calib
