// Gap g: the slope, against p, of the time one HPU thread takes to start p off-loads back to back and collect
// them. g is an application parameter (application.g): the measured value goes under the platform's measurements.gap.
#include "harness_common.hpp"
#include "mmgp/error.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace mmgp::calib {

using namespace detail;

measurement run_gap(const harness_options& o) {
    const int reps = reps_or(o, 3, 5);
    const int pmax = std::clamp(static_cast<int>(o.r.apu.size()), 4, 16);
    const int iters = o.quick ? 2000 : 8000;
    pin_guard pin(hpu0(o));
    auto be = make_host_thread_backend(wait_mode::spin, 4096);
    be->start(o.r.apu, pmax);
    const double ovh = clock_overhead();
    std::uint32_t token = 1;
    auto batch = [&](int p) {
        auto t0 = clk::now();
        for (int i = 0; i < p; ++i) be->signal(i, token);
        for (int i = 0; i < p; ++i)
            if (be->wait(i) != token + 1) throw mmgp::failure("gap: wrong answer from an APU");
        auto t1 = clk::now();
        ++token;
        return std::max(0.0, secs(t1 - t0) - ovh);
    };
    auto once = [&] {
        say(o, fmt::format("gap: p = 1..{}, {} repetitions", pmax, reps));
        for (int i = 0; i < 1000; ++i) batch(pmax);  // warm-up
        std::vector<double> slopes, intercepts;
        std::vector<std::vector<double>> tp(static_cast<std::size_t>(pmax));
        for (int r = 0; r < reps; ++r) {
            std::vector<double> x, y;
            for (int p = 1; p <= pmax; ++p) {
                std::vector<double> t(static_cast<std::size_t>(iters));
                for (auto& v : t) v = batch(p);
                x.push_back(p);
                y.push_back(median(t));
                tp[static_cast<std::size_t>(p - 1)].push_back(y.back());
            }
            line_fit f = fit_line(x, y);
            slopes.push_back(f.slope);
            intercepts.push_back(f.intercept);
        }
        measurement m = make("gap", "gap", slopes, slopes);
        nlohmann::json pts = nlohmann::json::array();
        for (int p = 1; p <= pmax; ++p) pts.push_back({p, median(tp[static_cast<std::size_t>(p - 1)])});
        m.extra = {{"backend", be->name()}, {"apu_cpus", o.r.apu}, {"apu_workers", std::min<int>(pmax, static_cast<int>(o.r.apu.size()))},
                   {"time_for_p_offloads", pts}, {"intercept_s", median(intercepts)},
                   {"note", "g = slope of the time to start p off-loads back to back and collect them, against p"}};
        return m;
    };
    return with_retries(o, once);
}

}  // namespace mmgp::calib
