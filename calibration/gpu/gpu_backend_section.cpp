// The GPU harness's section timed by the CPU harnesses (gpu_record.hpp, backend_harnesses): mmgp-gpu-harness
// (gpu_harness.cu) makes its CUDA backends (cuda_backend.cu) and hands them here, so that the off-load round trip
// and the copies are timed by the same loops, warm-ups, repetitions and statistics as the host threads'
// (harness_offload.cpp, harness_dma.cpp) and written as the same records (harness_common.cpp). A host unit of the
// calibration library, tested with the host-thread backends (tests/calibration).
#include <sched.h>

#include <exception>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend.hpp"
#include "gpu/gpu_record.hpp"
#include "harness.hpp"

namespace mmgp::calib::gpu {
namespace {

nlohmann::json dma_record(const dma_result& d) {
    nlohmann::json per = nlohmann::json::array();
    for (const measurement& m : d.per_size) per.push_back(to_json(m));
    return {{"latency_s", d.fit.latency_s}, {"bandwidth_Bps", d.fit.bandwidth_Bps}, {"r2", d.fit.r2}, {"per_size", per}};
}

nlohmann::json measure(apu_backend& be, const harness_options& o) {
    be.start({}, 1);
    nlohmann::json j;
    j["offload"] = to_json(run_offload_with(o, be, "offload/" + be.name(), spin_round_trips_per_rep(o)));
    if (be.max_transfer() >= 128) j["dma"] = dma_record(run_dma_with(o, be));
    try {
        be.stop();
    } catch (const std::exception& e) {  // measured, but it did not stop cleanly: both said
        j["error"] = e.what();
    }
    return j;
}

}  // namespace

std::string backend_harnesses(const std::vector<apu_backend*>& backends, bool quick) {
    harness_options o;
    const int cpu = sched_getcpu();
    o.r.hpu = {cpu >= 0 ? cpu : 0};
    o.quick = quick;
    nlohmann::json out = nlohmann::json::object();
    for (apu_backend* be : backends) {
        try {
            out[be->name()] = measure(*be, o);
        } catch (const std::exception& e) {
            out[be->name()] = {{"error", e.what()}};
            try {
                be->stop();
            } catch (...) {
            }
        }
    }
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mmgp::calib::gpu
