// Data transfer (DMA analogue): an APU copies a buffer last written by the HPU core into its own memory, for
// sizes 128 B..16 MiB. Produces platform.dma (latency l and per-byte cost beta of a latency-bandwidth fit). The copies
// themselves (run_dma_with) take any started backend with a data-transfer path, up to its max_transfer(): the GPU
// harness (calibration/gpu/gpu_backend_section.cpp) times its CUDA backend's with them.
#include "harness_common.hpp"
#include "mmgp/error.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace mmgp::calib {

using namespace detail;

namespace {

constexpr std::size_t largest = 16u << 20;

dma_result dma_once(const harness_options& o, apu_backend& be) {
    dma_result res;
    const int reps = reps_or(o, 3, 5);
    const std::size_t maxb = std::min(largest, be.max_transfer());
    if (maxb < 128) throw mmgp::failure("dma: backend " + be.name() + " has no data-transfer path of 128 B or more");
    std::vector<std::size_t> sizes;
    for (std::size_t b = 128; b <= maxb; b *= (o.quick ? 4 : 2)) sizes.push_back(b);
    if (sizes.back() != maxb) sizes.push_back(maxb);
    pin_guard pin(hpu0(o));
    std::unique_ptr<char[]> src(new char[maxb]);
    std::memset(src.get(), 1, maxb);  // owned (first touched) by the HPU core
    const double ovh = clock_overhead();
    say(o, fmt::format("dma: {} sizes 128 B..{}, {} repetitions", sizes.size(),
                       maxb == largest ? std::string("16 MiB") : fmt::format("{} B", maxb), reps));
    int fill = 0;
    auto one = [&](std::size_t bytes) {
        std::memset(src.get(), ++fill & 0xff, bytes);  // the HPU writes the data: its lines are dirty in its cache
        return std::max(1e-10, be.timed_get(0, src.get(), bytes) - ovh);
    };
    for (int i = 0; i < 200; ++i) one(4096);  // warm-up
    std::vector<double> xb, yt;
    for (std::size_t b : sizes) {
        int iters = static_cast<int>(std::clamp<std::size_t>((4u << 20) / b, 5, 200));
        std::vector<double> all, med;
        for (int r = 0; r < reps; ++r) {
            std::vector<double> t(static_cast<std::size_t>(iters));
            for (auto& v : t) v = one(b);
            med.push_back(median(t));
            all.insert(all.end(), t.begin(), t.end());
        }
        measurement m = make(fmt::format("dma/{}B", b), "dma", all, med);
        if (m.reps.cv > o.cv_threshold) {
            m.flagged = true;
            m.warning = fmt::format("noisy: CV {:.1f} % above the {:.0f} % threshold", 100 * m.reps.cv,
                                    100 * o.cv_threshold);
        }
        m.extra = {{"bytes", b}, {"bandwidth_Bps", static_cast<double>(b) / m.value}};
        xb.push_back(static_cast<double>(b));
        yt.push_back(m.value);
        res.per_size.push_back(std::move(m));
    }
    res.fit = fit_latency_bandwidth(xb, yt);
    return res;
}

}  // namespace

dma_result run_dma(const harness_options& o) {
    pin_guard pin(hpu0(o));
    auto be = make_host_thread_backend(wait_mode::spin, largest);
    be->start({apu0(o)}, 1);
    return run_dma_with(o, *be);
}

dma_result run_dma_with(const harness_options& o, apu_backend& be) {
    return retry_all(o, "dma", [&](const harness_options& opt) { return dma_once(opt, be); }, &dma_result::per_size);
}

}  // namespace mmgp::calib
